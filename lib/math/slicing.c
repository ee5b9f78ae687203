/*
 * math/slicing.c - the rates of one Bloom filter sliced over S sites (paper 000,
 * sections 3.1-3.2; once_math.h, "Sliced filters").
 *
 * With n keys in a filter of m bits and k hashes:
 *   vertical   (Eq. 3): the unsliced rate, (1 - (1 - 1/m)^(kn))^k; a bit is set with
 *              q = 1 - (1 - 1/m)^(kn);
 *   horizontal (Eq. 4): each slice of m/S bits holds about n/S keys,
 *              P_h = (1 - (1 - S/m)^(kn/S))^k, averaged over the slices' binomial
 *              loads in once_sliced_fpr (horizontal_rate below).
 * With a fraction phi = f/S of the sites failed, and the rule "an event is a duplicate
 * when every position that can be reached is set and at least x positions can be
 * reached" (x = 0: a failed position counts as set, Eqs. 5 and 6; x = k: any failed
 * position makes the event distinct):
 *   vertical, each of the k positions independently failed with probability phi:
 *     FP = sum_{j=x..k} C(k,j) ((1-phi) q)^j phi^(k-j)   (j positions reached, all set)
 *     FN = sum_{i=k-x+1..k} C(k,i) phi^i (1-phi)^(k-i)   (fewer than x reached)
 *   (x = 0 gives Eq. 6, (phi + (1-phi) q)^k; the paper prints ((1-phi) q)^x for the
 *   hybrid's FP, which is exact only at x = k);
 *   horizontal, the one slice failed with probability phi:
 *     x = 0: FP = phi + (1-phi) P_h (Eq. 5), FN = 0;
 *     x > 0: FP = (1-phi) P_h, FN = phi.
 * Diced (section 3.3): h-v has horizontal's rate over S slices, v-h horizontal's over
 * S S' parts.  With failures, h-v is vertical over S S' sites (Eq. 7: each position
 * on a failed site with probability phi, exact when the failed sites are spread evenly
 * over the slices).  Eq. 7 treats v-h the same way, but v-h sends all the positions an
 * event has in one vertical slice to one part, so they are lost together: the exact
 * rates mix the vertical ones over the number of failed slices (slices failed for the
 * event independently with probability phi).
 * S_f (Definition 3) is the fewest slices for which f failures keep FP at most Pmax.
 * Its counterpart (section 3.2, "a symmetric approach": failed positions make events
 * distinct) is the fewest slices for which f failures keep FN at most Pmax_fn; FN does
 * not depend on the fill, so neither m nor n enter it.  Under threshold k its closed
 * forms are S >= f / Pmax_fn horizontal and S >= f / (1 - (1 - Pmax_fn)^(1/k))
 * vertical: vertical needs more slices here, since any of its k sites can lose an
 * event, where horizontal needs fewer for the false positives.
 */
#include "once_math.h"

#include <math.h>

#define SLICING_MAX_SLICES 4096u

static double choose(uint32_t n, uint32_t r)
{
    double c = 1.0;
    for (uint32_t i = 1; i <= r; i++)
        c = c * (double)(n - r + i) / (double)i;
    return c;
}

/* C(n, j) p^j (1-p)^(n-j), in logarithms for the large n of many slices. */
static double binomial(uint64_t n, uint64_t j, double p)
{
    if (p <= 0.0)
        return j == 0 ? 1.0 : 0.0;
    if (p >= 1.0)
        return j == n ? 1.0 : 0.0;
    return exp(lgamma((double)n + 1.0) - lgamma((double)j + 1.0) - lgamma((double)(n - j) + 1.0) +
               (double)j * log(p) + (double)(n - j) * log1p(-p));
}

/* The threshold rule's FP and FN when each of the k positions is lost with probability
 * phi on its own, and a reached position is set with probability q:
 *   FP = sum_{j=x..k} C(k,j) ((1-phi) q)^j phi^(k-j)   (j positions reached, all set)
 *   FN = sum_{i=k-x+1..k} C(k,i) phi^i (1-phi)^(k-i)   (fewer than x reached) */
static void independent_failures(uint32_t k, double q, double phi, uint32_t x, double *fp,
                                 double *fn)
{
    double reach = (1.0 - phi) * q;
    *fp = 0.0;
    for (uint32_t j = x; j <= k; j++)
        *fp += choose(k, j) * pow(reach, j) * pow(phi, k - j);
    *fn = 0.0;
    for (uint32_t i = k - x + 1; i <= k && x > 0; i++)
        *fn += choose(k, i) * pow(phi, i) * pow(1.0 - phi, k - i);
}

/* The chance that one probed position is set, with n keys: an event's positions fall
 * in a filter of m bits holding n keys (vertical), or in a slice of m/S bits holding
 * about n/S of them (horizontal; h-v, whose vertical parts do not change the rate), or
 * in a part of m/(S S') bits holding about n/(S S') (v-h: each slice sends an event's
 * positions to one of its S' parts). */
static double position_set(once_slicing slicing, uint64_t bits, uint32_t hashes,
                           uint32_t slices, uint32_t parts, uint64_t items)
{
    double ways = 1.0;
    if (slicing == ONCE_SLICING_HORIZONTAL || slicing == ONCE_SLICING_DICED_HV)
        ways = slices;
    else if (slicing == ONCE_SLICING_DICED_VH)
        ways = (double)slices * parts;
    double slice_bits = (double)bits / ways;
    return 1.0 - exp((double)hashes * ((double)items / ways) * log1p(-1.0 / slice_bits));
}

/*
 * Split slicing's rate over the slices' loads (Proposition 2; horizontal slicing is
 * k1 = 1, Eq. 4): each of the n keys picks k1 distinct slices of the S, so a slice
 * holds j keys with the binomial chance B(n, k1/S; j), each setting k2 of its m/S
 * bits; an absent key, sent to k1 slices as a key is, finds its k2 bits set in each
 * with chance
 *     F = sum_j B(n, k1/S; j) (1 - (1 - S/m)^(k2 j))^k2,
 * and all k1 k2 with F^k1 (the loads of distinct slices are nearly independent).  The
 * rate is convex in the load, so the loaded slices cost more than the light ones save,
 * more so as S grows: Eq. 4, the rate at j = n/S, underestimates it (the paper's
 * finding that horizontal slicing's rate grows with S).  When the loads' spread is
 * negligible, sqrt((S - k1) / (k1 n)) under 10^-3 (a relative error under about
 * 10^-6), F at the mean load itself; otherwise the sum over j within 12 standard
 * deviations of the mean.
 */
static double split_rate(uint64_t bits, uint32_t slice_hashes, uint32_t per_slice,
                         uint32_t slices, uint64_t items)
{
    double p = (double)slice_hashes / slices, mean = (double)items * p;
    double spread = sqrt((double)items * p * (1.0 - p));
    double set_by_one = (double)per_slice * log1p(-(double)slices / (double)bits);
    double in_slice;
    if ((double)(slices - slice_hashes) < 1e-6 * (double)items * slice_hashes) {
        in_slice = pow(-expm1(mean * set_by_one), per_slice);
    } else {
        double low = mean - 12.0 * spread - 1.0, high = mean + 12.0 * spread + 1.0;
        uint64_t from = low > 0.0 ? (uint64_t)low : 0;
        uint64_t to = high < (double)items ? (uint64_t)high : items;
        in_slice = 0.0;
        for (uint64_t j = from; j <= to; j++)
            in_slice += binomial(items, j, p) * pow(-expm1((double)j * set_by_one), per_slice);
    }
    return pow(in_slice, slice_hashes);
}

static double horizontal_rate(uint64_t bits, uint32_t hashes, uint32_t slices, uint64_t items)
{
    return split_rate(bits, 1, hashes, slices, items);
}

double once_split_fpr(uint64_t bits, uint32_t slice_hashes, uint32_t hashes, uint32_t slices,
                      uint64_t items)
{
    if (bits == 0 || hashes == 0 || slices == 0 || slice_hashes == 0 ||
        slice_hashes > slices || hashes % slice_hashes != 0 || slices > bits)
        return 1.0;
    return split_rate(bits, slice_hashes, hashes / slice_hashes, slices, items);
}

/* Split slicing's threshold rule: the k1 groups of k2 positions are lost a group at a
 * time, each with probability phi; with g groups reached, k2 g positions are, and the
 * event is a duplicate when they are all set and k2 g >= x. */
once_status once_split_failure_rates_at_fill(uint32_t slice_hashes, uint32_t hashes, double fill,
                                             double failed, uint32_t threshold, double *fp,
                                             double *fn)
{
    if (fp == NULL || fn == NULL || slice_hashes == 0 || hashes == 0 ||
        hashes % slice_hashes != 0 || hashes > 64 || !(fill >= 0.0 && fill <= 1.0) ||
        !(failed >= 0.0 && failed <= 1.0) || threshold > hashes)
        return ONCE_ERR_INVALID;
    uint32_t per_slice = hashes / slice_hashes;
    double group_set = pow(fill, per_slice);
    *fp = 0.0;
    *fn = 0.0;
    for (uint32_t g = 0; g <= slice_hashes; g++) {
        double weight = binomial(slice_hashes, g, 1.0 - failed);
        if ((uint64_t)per_slice * g >= threshold)
            *fp += weight * pow(group_set, g);
        else
            *fn += weight;
    }
    return ONCE_OK;
}

static bool valid_shape(once_slicing slicing, uint64_t bits, uint32_t hashes, uint32_t slices,
                        uint32_t parts)
{
    if (slicing < ONCE_SLICING_HORIZONTAL || slicing > ONCE_SLICING_DICED_VH)
        return false;
    uint64_t sites = (uint64_t)slices * (parts == 0 ? 1 : parts);
    return bits != 0 && hashes != 0 && slices != 0 && sites <= bits &&
           (parts <= 1 || slicing >= ONCE_SLICING_DICED_HV);
}

double once_sliced_fpr(once_slicing slicing, uint64_t bits, uint32_t hashes, uint32_t slices,
                       uint32_t parts, uint64_t items)
{
    if (!valid_shape(slicing, bits, hashes, slices, parts))
        return 1.0;
    if (slicing == ONCE_SLICING_VERTICAL)
        return once_fpr_standard(bits, hashes, items);
    if (slicing == ONCE_SLICING_DICED_VH || slices == 1)
        /* Section 3.3's v-h rate, with the keys a part holds on average: the exponent
         * is real. */
        return pow(position_set(slicing, bits, hashes, slices, parts, items), hashes);
    return horizontal_rate(bits, hashes, slices, items);
}

/* Horizontal slicing's rule: an event's one slice is failed with probability phi;
 * with x = 0 it counts as set (Eq. 5), otherwise the event is distinct.  p is the
 * rate of a reached slice. */
static void horizontal_failures(double p, double failed, uint32_t threshold, double *fp,
                                double *fn)
{
    *fp = (threshold == 0 ? failed : 0.0) + (1.0 - failed) * p;
    *fn = threshold == 0 ? 0.0 : failed;
}

once_status once_sliced_failure_rates_at_fill(once_slicing slicing, uint32_t hashes,
                                              uint32_t slices, double fill, double failed,
                                              uint32_t threshold, double *fp, double *fn)
{
    if (fp == NULL || fn == NULL || slicing < ONCE_SLICING_HORIZONTAL ||
        slicing > ONCE_SLICING_DICED_VH || hashes == 0 || slices == 0 ||
        !(fill >= 0.0 && fill <= 1.0) || !(failed >= 0.0 && failed <= 1.0) ||
        threshold > hashes)
        return ONCE_ERR_INVALID;
    if (slicing == ONCE_SLICING_HORIZONTAL) {
        horizontal_failures(pow(fill, hashes), failed, threshold, fp, fn);
        return ONCE_OK;
    }
    if (slicing != ONCE_SLICING_DICED_VH) {
        /* Vertical, h-v (Eq. 7): each position on a site of its own, failed with
         * probability phi. */
        independent_failures(hashes, fill, failed, threshold, fp, fn);
        return ONCE_OK;
    }
    /* v-h: the positions an event sends to one vertical slice go to one part, so they
     * fail together; a slice is failed for an event with probability phi, so with j of
     * the S slices failed (binomial) each position is lost with probability j/S. */
    *fp = 0.0;
    *fn = 0.0;
    for (uint32_t j = 0; j <= slices; j++) {
        double weight = binomial(slices, j, failed);
        if (weight < 1e-300)
            continue;
        double part_fp = 0, part_fn = 0;
        independent_failures(hashes, fill, (double)j / slices, threshold, &part_fp, &part_fn);
        *fp += weight * part_fp;
        *fn += weight * part_fn;
    }
    return ONCE_OK;
}

once_status once_sliced_failure_rates(once_slicing slicing, uint64_t bits, uint32_t hashes,
                                      uint32_t slices, uint32_t parts, uint64_t items,
                                      double failed, uint32_t threshold, double *fp, double *fn)
{
    if (!valid_shape(slicing, bits, hashes, slices, parts))
        return ONCE_ERR_INVALID;
    if (slicing == ONCE_SLICING_HORIZONTAL && fp != NULL && fn != NULL &&
        failed >= 0.0 && failed <= 1.0 && threshold <= hashes) {
        /* Eq. 5 with the rate over the slices' loads (horizontal_rate). */
        horizontal_failures(horizontal_rate(bits, hashes, slices, items), failed, threshold, fp,
                            fn);
        return ONCE_OK;
    }
    return once_sliced_failure_rates_at_fill(slicing, hashes, slices,
                                             position_set(slicing, bits, hashes, slices, parts,
                                                          items),
                                             failed, threshold, fp, fn);
}

uint32_t once_sliced_sites_for_failures(once_slicing slicing, uint64_t bits, uint32_t hashes,
                                        uint64_t items, uint32_t failures, double max_fpr)
{
    for (uint32_t s = failures + 1; s <= SLICING_MAX_SLICES; s++) {
        double fp = 1.0, fn = 0.0;
        if (once_sliced_failure_rates(slicing, bits, hashes, s, 1, items,
                                      (double)failures / s, 0, &fp, &fn) == ONCE_OK &&
            fp <= max_fpr)
            return s;
    }
    return 0;
}

once_status once_sliced_sites_for_false_negatives(once_slicing slicing, uint32_t hashes,
                                                  uint32_t threshold, uint32_t failures,
                                                  double max_fnr, uint32_t *slices)
{
    if (slices == NULL || slicing < ONCE_SLICING_HORIZONTAL || slicing > ONCE_SLICING_DICED_VH ||
        hashes == 0 || threshold > hashes || !(max_fnr >= 0.0 && max_fnr < 1.0))
        return ONCE_ERR_INVALID;
    *slices = 0;
    for (uint32_t s = failures + 1; s <= SLICING_MAX_SLICES; s++) {
        /* The fill only moves FP: any value gives the same FN. */
        double fp = 0.0, fn = 1.0;
        if (once_sliced_failure_rates_at_fill(slicing, hashes, s, 0.5, (double)failures / s,
                                              threshold, &fp, &fn) == ONCE_OK &&
            fn <= max_fnr) {
            *slices = s;
            return ONCE_OK;
        }
    }
    return ONCE_ERR_TOO_LARGE;
}
