/*
 * math/age.c - the formulas of the age-partitioned windows (paper 001): the
 * false-positive recurrence F and the expected accesses of a query over explicit
 * segment match rates, the segments' rates at their peak fills, and the planning of
 * (k, l) and of a window's layout from a target rate.  window/apbf.c and
 * window/tlbf.c build their layouts from these; the tests check the paper's tables
 * against them.
 */
#include "math/age.h"
#include "core/alloc.h"
#include "core/limits.h"

#include <math.h>
#include <string.h>

/* The (k, l) the recurrences below are defined for: slices of both kinds, no more of
 * either than their tables hold. */
static bool age_shape_valid(uint32_t k, uint32_t l)
{
    return k != 0 && l != 0 && k <= ONCE_MAX_AGE_SLICES && l <= ONCE_MAX_AGE_SLICES;
}

/*
 * The false-positive recurrence of paper 001, section 5.3.  With slice (segment) i
 * matching a random absent key with probability r_i, F(a, i) is the chance of
 * completing k consecutive matches from slice i with a matches already behind it:
 *     F(a, i) = 1                                    if a = k
 *             = 0                                    if i > l + a
 *             = r_i F(a+1, i+1) + (1 - r_i) F(0, i+1) otherwise
 * and the filter's rate is F(0, 0).  Computed bottom-up over i (F at i depends only on
 * i + 1), so the cost is O(k (k + l)) with two rows of storage.
 */
double once_age_fpr(uint32_t k, uint32_t l, const double *fill)
{
    if (!age_shape_valid(k, l))
        return 1.0;
    uint32_t slices = k + l;
    double next[ONCE_MAX_AGE_SLICES + 1], row[ONCE_MAX_AGE_SLICES + 1];
    /* Row i = slices: past the last slice only a = k succeeds. */
    for (uint32_t a = 0; a <= k; a++)
        next[a] = a == k ? 1.0 : 0.0;
    for (uint32_t i = slices; i-- > 0;) {
        for (uint32_t a = 0; a <= k; a++) {
            if (a == k)
                row[a] = 1.0;
            else if (i > l + a)
                row[a] = 0.0;
            else
                row[a] = fill[i] * next[a + 1] + (1.0 - fill[i]) * next[0];
        }
        memcpy(next, row, sizeof(double) * (k + 1));
    }
    return next[0];
}

/* The peak (just before a shift) fills the paper assumes: a linear ramp 1/(2k) ..
 * k/(2k) over the k insertion slices, then 1/2 (paper 001, section 5.3).  Nothing is
 * written for a (k, l) the recurrences reject: they return before reading the fills. */
static const double *paper_fills(uint32_t k, uint32_t l, double *fill)
{
    if (age_shape_valid(k, l))
        for (uint32_t i = 0; i < k + l; i++)
            fill[i] = i < k ? (double)(i + 1) / (2.0 * k) : 0.5;
    return fill;
}

double once_apbf_fpr(uint32_t k, uint32_t l)
{
    double fill[2 * ONCE_MAX_AGE_SLICES];
    return once_age_fpr(k, l, paper_fills(k, l, fill));
}

/*
 * Expected accesses of a query that answers false, by the paper's recurrence A for
 * Algorithm 1 (start at slice l; on a miss jump back k slices keeping the matches
 * found as p).  E[accesses; false] and P(false) are computed together by memoized
 * recursion over the state (p, c, i); the answer is their ratio.
 */
typedef struct access_state {
    uint32_t k, l;
    const double *fill;
    double *p_false, *accesses;
    unsigned char *known;
} access_state;

static size_t access_index(const access_state *s, uint32_t p, uint32_t c, int i)
{
    size_t span = (size_t)(s->k + s->l) + s->k + 1;
    return ((size_t)p * (s->k + 1) + c) * span + (size_t)(i + (int)s->k);
}

static void access_eval(access_state *s, uint32_t p, uint32_t c, int i, double *pf, double *acc)
{
    if (i < 0) {
        *pf = 1.0;
        *acc = 0.0;
        return;
    }
    if (p + c >= s->k) {
        *pf = 0.0;
        *acc = 0.0;
        return;
    }
    size_t at = access_index(s, p, c, i);
    if (s->known[at]) {
        *pf = s->p_false[at];
        *acc = s->accesses[at];
        return;
    }
    double r = s->fill[i];
    double pf_hit, acc_hit, pf_miss, acc_miss;
    access_eval(s, p, c + 1, i + 1, &pf_hit, &acc_hit);
    access_eval(s, c, 0, i - (int)s->k, &pf_miss, &acc_miss);
    /* Each access made here counts once on every false path through it. */
    *pf = r * pf_hit + (1.0 - r) * pf_miss;
    *acc = r * (pf_hit + acc_hit) + (1.0 - r) * (pf_miss + acc_miss);
    s->known[at] = 1;
    s->p_false[at] = *pf;
    s->accesses[at] = *acc;
}

double once_age_accesses_absent(uint32_t k, uint32_t l, const double *fill)
{
    if (!age_shape_valid(k, l))
        return 0.0;
    access_state s = {k, l, fill, NULL, NULL, NULL};
    size_t cells = (size_t)(k + 1) * (k + 1) * ((size_t)(k + l) + k + 1);
    s.p_false = once_calloc(cells, sizeof(double));
    s.accesses = once_calloc(cells, sizeof(double));
    s.known = once_calloc(cells, 1);
    double result = 0.0;
    if (s.p_false && s.accesses && s.known) {
        double pf, acc;
        access_eval(&s, 0, 0, (int)l, &pf, &acc);
        result = pf > 0 ? acc / pf : 0.0;
    }
    once_free_memory(s.p_false);
    once_free_memory(s.accesses);
    once_free_memory(s.known);
    return result;
}

double once_apbf_accesses_absent(uint32_t k, uint32_t l)
{
    double fill[2 * ONCE_MAX_AGE_SLICES];
    return once_age_accesses_absent(k, l, paper_fills(k, l, fill));
}

/* Peak NPWS (paper 001, section 5.2): sum_{i<k} 2^-i / l. */
double once_apbf_npws(uint32_t k, uint32_t l)
{
    if (l == 0)
        return 0.0;
    double sum = 0.0;
    for (uint32_t i = 0; i < k; i++)
        sum += ldexp(1.0, -(int)i);
    return sum / l;
}

/* -------------------------------------------------------- peak fills */

/* Expected match rate of a full APBBF segment at a mean block load lambda: the block
 * load is Poisson(lambda), and a block with t keys has each part-bit set with
 * probability 1 - (1 - 1/part)^t, so a key matches with that to the power b. */
static double blocked_segment_rate(uint32_t block_bits, uint32_t hashes, double lambda)
{
    double part = (double)block_bits / hashes;
    double keep = 1.0 - 1.0 / part;
    double term = exp(-lambda); /* P(T = 0) */
    double sum = 0.0;
    uint32_t limit = (uint32_t)(lambda + 12.0 * sqrt(lambda + 1.0) + 30.0);
    for (uint32_t t = 0; t <= limit; t++) {
        if (t > 0)
            term *= lambda / t;
        sum += term * pow(1.0 - pow(keep, t), hashes);
    }
    return sum;
}

/* The mean block load of a full APBBF segment: the load at which each part-bit is
 * set with probability exactly 1/2, 1 - (1 - 1/part)^n = 1/2 (the fill target of the
 * basic APBF, counted on the discrete part; Table 3's "cap." column is this load over
 * part * ln 2, i.e. about 1 - 1/(2 part)). */
static double blocked_full_load(uint32_t block_bits, uint32_t hashes)
{
    double part = (double)block_bits / hashes;
    return -log(2.0) / log1p(-1.0 / part);
}

/* Keys a full segment holds per unit (a slice's bit, a block) at the design load: ln 2
 * per bit for slices (fill 1/2, section 5.2), blocked_full_load for blocks. */
double once_age_design_full_load(uint32_t block_bits, uint32_t hashes)
{
    return block_bits ? blocked_full_load(block_bits, hashes) : log(2.0);
}

/* Peak (just before a shift) match rates of the k + l segments when a full segment
 * carries `load` times the design load (1 for every layout but small windows'). */
void once_age_peak_fills(uint32_t k, uint32_t l, uint32_t block_bits, uint32_t hashes, double load,
                         double *fill)
{
    double full = block_bits ? blocked_full_load(block_bits, hashes) : 0.0;
    for (uint32_t i = 0; i < k + l; i++) {
        double share = i < k ? (double)(i + 1) / k : 1.0; /* of a full segment's load */
        if (block_bits == 0)
            fill[i] = 1.0 - exp2(-share * load); /* g = load m ln2 / k: 1 - 2^-load when full */
        else
            fill[i] = blocked_segment_rate(block_bits, hashes, full * load * share);
    }
}

/* The load a filter's segments carry when full: k g keys over the segment's units, as a
 * share of the design load.  One within SNAP_LOAD below the design load (the rounding
 * up of m, or of the blocks, to ceil(g k / full)) is reported at the design load, an
 * upper bound that keeps the paper's figures (Table 3 to the printed decimals); any
 * other load, sparser (small windows) or denser (explicit segments), at its own. */
#define SNAP_LOAD 0.99

double once_age_geometry_load(uint32_t k, uint64_t generation, uint32_t block_bits,
                              uint32_t hashes, double units)
{
    double full = once_age_design_full_load(block_bits, hashes);
    double load = (double)generation * k / (units * full);
    if (load > 64.0)
        load = 64.0; /* a loaded file's g may claim more: every segment is full by then */
    return load > SNAP_LOAD && load <= 1.0 ? 1.0 : load;
}

/*
 * The double-hashing floor of a slice layout placed by the linear probe of saved
 * format 1 (core/hash.h; format 2 mixes each probe and has none).  A key's positions
 * in consecutive slices came from one double-hashing sequence whose top bits - the
 * ones once_reduce keeps - advance by a per-key step: an arithmetic progression modulo
 * m.  An absent key whose start u and step v lie close enough to a stored key's
 * follows it into the same bit of all k of its slices, with probability
 *     I(k) / m^2,  I(k) = integral of prod_{j<k} (1 - |U + j V|)+ dU dV <= 4 / k^2
 * (numerically 1 for k = 2, 0.38 for 3, 0.035 for 8, 0.0046 for 17) per stored key,
 * whatever the fills.  A key that follows a stored one through k - 1 slices and
 * meets a set bit by chance in the last adds about as much again at the fills of a
 * small window (measured: 3.3e-4 for k = 17, l = 125, g = 8, m = 251, where the full
 * term gives 0.8e-4 and F 0.2e-4), so over the (l + k) g keys a filter holds we count
 *     8 (l + k) g / (k^2 m^2)
 * on top of F for a format-1 filter's rates (its stats): nothing to speak of for the
 * slices of thousands of bits of ordinary windows, but the rate itself for the slices
 * of a few dozen bits a small window has (measured 2e-3 where F gives 3e-5, k = 8,
 * l = 64, m = 43).  One slice a key (k = 1) has no such floor; blocked segments remix
 * their in-block bits and have none.
 */
double once_age_slice_floor_rate(uint32_t k, uint32_t l, uint64_t generation, double bits)
{
    if (k < 2)
        return 0.0;
    return 8.0 * (double)(l + k) * (double)generation / ((double)k * k * bits * bits);
}

/* The peak rate of a geometry: F at the segments' fills. */
double once_age_design_rate(uint32_t k, uint32_t l, uint32_t block_bits, uint32_t hashes,
                            uint64_t generation, double units)
{
    double fill[2 * ONCE_MAX_AGE_SLICES];
    double load = once_age_geometry_load(k, generation, block_bits, hashes, units);
    once_age_peak_fills(k, l, block_bits, hashes, load, fill);
    double rate = once_age_fpr(k, l, fill);
    return rate < 1.0 ? rate : 1.0;
}

/* The largest l <= limit with F(k, l) <= p at the actual peak fills; 0 if none. */
static uint32_t largest_age_slices(uint32_t k, double p, uint32_t block_bits, uint32_t hashes,
                                   uint32_t limit)
{
    double fill[2 * ONCE_MAX_AGE_SLICES];
    uint32_t best = 0;
    for (uint32_t l = 1; l <= limit; l++) {
        once_age_peak_fills(k, l, block_bits, hashes, 1.0, fill);
        if (once_age_fpr(k, l, fill) <= p)
            best = l;
        else
            break; /* F grows with l */
    }
    return best;
}

once_status once_age_plan_layout(double error, uint32_t level, uint32_t block_bits,
                                 uint32_t block_hashes, uint32_t *k_out, uint32_t *l_out)
{
    if (!(error >= 1e-12 && error < 1.0) || level > 32)
        return ONCE_ERR_INVALID;
    double bits_needed = -log2(error);
    uint32_t k = (uint32_t)ceil(bits_needed / (block_bits ? block_hashes : 1)), l = 0;
    if (block_bits && k < 2)
        k = 2; /* one segment a key would make the window jump a whole generation */
    if (k == 0)
        k = 1;
    k += level;
    /* The blocked variant's negative queries cost grows with l; the paper's
     * configurations keep l within a few k. */
    uint32_t limit = block_bits ? 4 * k : ONCE_MAX_AGE_SLICES;
    if (limit > ONCE_MAX_AGE_SLICES)
        limit = ONCE_MAX_AGE_SLICES;
    while (k <= ONCE_MAX_AGE_SLICES &&
           (l = largest_age_slices(k, error, block_bits, block_hashes, limit)) == 0)
        k++;
    if (l == 0)
        return ONCE_ERR_TOO_LARGE;
    *k_out = k;
    *l_out = l;
    return ONCE_OK;
}

once_status once_age_plan(double error, uint32_t level, uint32_t *k, uint32_t *l)
{
    return once_age_plan_layout(error, level, 0, 0, k, l);
}

/* The sparsest segment a small window may use: 1/256 of the design load (about 370
 * bits a key in a slice), which bounds what a window of a few keys costs in memory. */
#define MIN_LOAD (1.0 / 256)

/* The largest load in [MIN_LOAD, 1] at which (k, l) keeps F at or below p; 0 if none.
 * F grows with the fills, and so with the load: bisection.  Below the design load it
 * stays at most SNAP_LOAD, so that the stats report it at its own load. */
static double largest_load(uint32_t k, uint32_t l, uint32_t block_bits, uint32_t hashes,
                           double p)
{
    double fill[2 * ONCE_MAX_AGE_SLICES];
    once_age_peak_fills(k, l, block_bits, hashes, 1.0, fill);
    if (once_age_fpr(k, l, fill) <= p)
        return 1.0;
    once_age_peak_fills(k, l, block_bits, hashes, MIN_LOAD, fill);
    if (once_age_fpr(k, l, fill) > p)
        return 0.0;
    double lo = MIN_LOAD, hi = 1.0;
    for (int i = 0; i < 40; i++) {
        double mid = 0.5 * (lo + hi);
        once_age_peak_fills(k, l, block_bits, hashes, mid, fill);
        if (once_age_fpr(k, l, fill) <= p)
            lo = mid;
        else
            hi = mid;
    }
    return lo < SNAP_LOAD ? lo : SNAP_LOAD;
}

/*
 * The layout of a window of N keys from the planned (k, l).  The guaranteed window is
 * l g (section 5.2), so g = ceil(N / l) would report up to l - 1 keys more than asked,
 * and for N < l a whole l g = l > N.  Instead g = ceil(N / l) and then l = ceil(N / g):
 * the fewest keys a generation (so the least slack, (l + k) g - N) that covers N with
 * at most l age slices; l g - N < g.  From N >= l (l - 1) on, l stays the planned one.
 * When l has to drop, k drops with it in proportion, k = max(1, floor(k l' / l)), so
 * the slack relative to the window, about k / l (section 5.2), stays what the level
 * promises; the segments are then made sparser (a lower load) until F is back at or
 * below p.  If even MIN_LOAD does not reach p with that k, k grows back one at a time;
 * with the planned k any l' <= l reaches p at the design load, F growing with l.
 */
void once_age_small_window_layout(uint64_t window, uint32_t block_bits, uint32_t hashes,
                                  double p, uint32_t *k, uint32_t *l, uint64_t *generation,
                                  double *load)
{
    uint64_t g = (window + *l - 1) / *l;
    uint32_t fit = (uint32_t)((window + g - 1) / g);
    *generation = g;
    *load = 1.0;
    if (fit >= *l)
        return;
    uint32_t k_fit = (uint32_t)((uint64_t)*k * fit / *l);
    if (k_fit == 0)
        k_fit = 1;
    for (; k_fit < *k; k_fit++) {
        double found = largest_load(k_fit, fit, block_bits, hashes, p);
        if (found > 0) {
            *load = found;
            break;
        }
    }
    *k = k_fit;
    *l = fit;
}

