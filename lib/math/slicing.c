/*
 * math/slicing.c - the rates of one Bloom filter sliced over S sites (paper 000,
 * sections 3.1-3.2; once_math.h, "Sliced filters").
 *
 * With n keys in a filter of m bits and k hashes:
 *   vertical   (Eq. 3): the unsliced rate, (1 - (1 - 1/m)^(kn))^k; a bit is set with
 *              q = 1 - (1 - 1/m)^(kn);
 *   horizontal (Eq. 4): each slice of m/S bits holds about n/S keys,
 *              P_h = (1 - (1 - S/m)^(kn/S))^k.
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
 * S_f (Definition 3) is the fewest slices for which f failures keep FP at most Pmax.
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

double once_sliced_fpr(once_slicing slicing, uint64_t bits, uint32_t hashes, uint32_t slices,
                       uint64_t items)
{
    if (bits == 0 || hashes == 0 || slices == 0 || (uint64_t)slices > bits)
        return 1.0;
    if (slicing == ONCE_SLICING_VERTICAL)
        return once_fpr_standard(bits, hashes, items);
    /* Eq. 4, with n/S keys a slice: the exponent is real. */
    double slice_bits = (double)bits / slices;
    double set = 1.0 - exp((double)hashes * ((double)items / slices) * log1p(-1.0 / slice_bits));
    return pow(set, hashes);
}

once_status once_sliced_failure_rates(once_slicing slicing, uint64_t bits, uint32_t hashes,
                                      uint32_t slices, uint64_t items, double failed,
                                      uint32_t threshold, double *fp, double *fn)
{
    if (fp == NULL || fn == NULL || bits == 0 || hashes == 0 || slices == 0 ||
        !(failed >= 0.0 && failed <= 1.0) || threshold > hashes ||
        (slicing != ONCE_SLICING_VERTICAL && slicing != ONCE_SLICING_HORIZONTAL))
        return ONCE_ERR_INVALID;
    if (slicing == ONCE_SLICING_HORIZONTAL) {
        double p = once_sliced_fpr(slicing, bits, hashes, slices, items);
        *fp = (threshold == 0 ? failed : 0.0) + (1.0 - failed) * p;
        *fn = threshold == 0 ? 0.0 : failed;
        return ONCE_OK;
    }
    double q = 1.0 - exp((double)hashes * (double)items * log1p(-1.0 / (double)bits));
    double reach = (1.0 - failed) * q;
    *fp = 0.0;
    for (uint32_t j = threshold; j <= hashes; j++)
        *fp += choose(hashes, j) * pow(reach, j) * pow(failed, hashes - j);
    *fn = 0.0;
    for (uint32_t i = hashes - threshold + 1; i <= hashes && threshold > 0; i++)
        *fn += choose(hashes, i) * pow(failed, i) * pow(1.0 - failed, hashes - i);
    return ONCE_OK;
}

uint32_t once_sliced_sites_for_failures(once_slicing slicing, uint64_t bits, uint32_t hashes,
                                        uint64_t items, uint32_t failures, double max_fpr)
{
    for (uint32_t s = failures + 1; s <= SLICING_MAX_SLICES; s++) {
        double fp = 1.0, fn = 0.0;
        if (once_sliced_failure_rates(slicing, bits, hashes, s, items,
                                      (double)failures / s, 0, &fp, &fn) == ONCE_OK &&
            fp <= max_fpr)
            return s;
    }
    return 0;
}
