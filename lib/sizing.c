/*
 * sizing.c - every false-positive formula and every sizing decision, in one place.
 *
 * The constructors, the tests and the benchmark all ask these functions, so a filter
 * is always built to the same formula that its measured rate is later checked against.
 *
 * Formulas (m bits, k probes, n keys):
 *   standard     Pfp = (1 - (1 - 1/m)^(kn))^k           paper 000, Eq. 1
 *                Pfp ~ (1 - e^(-kn/m))^k                 paper 000, Eq. 2
 *   partitioned  k slices of s = floor(m/k) bits; fill r = 1 - (1 - 1/s)^n and
 *                Pfp = r^k                               paper 001, section 4.1
 *   counting     as standard (a counter is "set" when non-zero; 4-bit counters
 *                saturate rather than overflow, so no set counter ever returns to 0)
 *   blocked      exact for our block layout; derived in bloom_blocked.c
 *
 * Planning picks, for a target (n, p), the geometry with the fewest bits whose formula
 * rate at n keys is at most p: for each candidate k around the analytic optimum it
 * bisects the smallest m, then keeps the smallest m (fewer probes on ties).
 */
#include "once_internal.h"

#include <math.h>

double once_fpr_standard(uint64_t bits, uint32_t hashes, uint64_t items)
{
    if (bits == 0 || hashes == 0)
        return 1.0;
    /* (1 - 1/m)^(kn) computed as exp(kn log1p(-1/m)) to keep precision for large m. */
    double unset = exp((double)hashes * (double)items * log1p(-1.0 / (double)bits));
    return pow(1.0 - unset, (double)hashes);
}

double once_fpr_standard_approx(uint64_t bits, uint32_t hashes, uint64_t items)
{
    if (bits == 0 || hashes == 0)
        return 1.0;
    return pow(1.0 - exp(-(double)hashes * (double)items / (double)bits), (double)hashes);
}

double once_fpr_partitioned(uint64_t bits, uint32_t hashes, uint64_t items)
{
    if (hashes == 0 || bits / hashes == 0)
        return 1.0;
    double slice = (double)(bits / hashes);
    double fill = 1.0 - exp((double)items * log1p(-1.0 / slice));
    return pow(fill, (double)hashes);
}

double once_fpr_for(once_type type, uint64_t bits, uint32_t hashes, uint64_t items)
{
    switch (type) {
    case ONCE_STANDARD:
    case ONCE_COUNTING:
        return once_fpr_standard(bits, hashes, items);
    case ONCE_PARTITIONED:
        return once_fpr_partitioned(bits, hashes, items);
    case ONCE_BLOCKED:
        return once_fpr_blocked(bits, hashes, items);
    default:
        break; /* windows and growing filters have no single-array formula */
    }
    return 1.0;
}

uint64_t once_optimal_bits(uint64_t capacity, double error)
{
    if (capacity == 0 || !(error > 0.0 && error < 1.0))
        return 0;
    double ln2 = log(2.0);
    double m = ceil(-(double)capacity * log(error) / (ln2 * ln2));
    if (m > (double)ONCE_MAX_CELLS)
        return ONCE_MAX_CELLS;
    return m < 1.0 ? 1 : (uint64_t)m;
}

uint32_t once_optimal_hashes(uint64_t bits, uint64_t capacity)
{
    if (capacity == 0)
        return 1;
    double k = round((double)bits / (double)capacity * log(2.0));
    if (k < 1.0)
        return 1;
    if (k > ONCE_MAX_HASHES)
        return ONCE_MAX_HASHES;
    return (uint32_t)k;
}

/* Smallest m (a multiple of `granule`) with fpr(m, k, n) <= p, or 0 if none within
 * the library's limit.  The rate falls monotonically in m for fixed k and n. */
static uint64_t smallest_bits(once_type type, uint32_t k, uint64_t n, double p, uint64_t granule)
{
    uint64_t hi = granule;
    while (once_fpr_for(type, hi, k, n) > p) {
        if (hi >= ONCE_MAX_CELLS / 2)
            return 0;
        hi *= 2;
    }
    uint64_t lo = hi / 2; /* fpr(lo) > p, or lo is below one granule */
    while (hi - lo > granule) {
        uint64_t mid = lo + (hi - lo) / 2;
        mid -= mid % granule;
        if (mid <= lo)
            break;
        if (once_fpr_for(type, mid, k, n) <= p)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

once_status once_plan(once_type type, uint64_t capacity, double error, uint64_t *bits,
                      uint32_t *hashes)
{
    if (capacity == 0 || !(error >= 1e-15 && error < 1.0))
        return ONCE_ERR_INVALID;
    if (type == ONCE_BLOCKED)
        return once_blocked_plan(capacity, error, bits, hashes);
    if (type != ONCE_STANDARD && type != ONCE_PARTITIONED && type != ONCE_COUNTING)
        return ONCE_ERR_INVALID;

    /* Eq. 2's optimum needs k = log2(1/p) probes; search a few either side because the
     * exact formulas and integer rounding move the true optimum by one or two. */
    int k0 = (int)ceil(-log2(error));
    uint64_t best_bits = 0;
    uint32_t best_k = 0;
    for (int k = k0 - 3; k <= k0 + 3; k++) {
        if (k < 1 || k > (int)ONCE_MAX_HASHES)
            continue;
        /* Partitioned filters need m to be a multiple of k for equal slices. */
        uint64_t granule = type == ONCE_PARTITIONED ? (uint64_t)k : 1;
        uint64_t m = smallest_bits(type, (uint32_t)k, capacity, error, granule);
        if (m != 0 && (best_bits == 0 || m < best_bits)) {
            best_bits = m;
            best_k = (uint32_t)k;
        }
    }
    if (best_bits == 0)
        return ONCE_ERR_TOO_LARGE;
    *bits = best_bits;
    *hashes = best_k;
    return ONCE_OK;
}

/* ------------------------------------------------- age-partitioned windows */

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
    if (k == 0 || l == 0 || k > ONCE_MAX_AGE_SLICES || l > ONCE_MAX_AGE_SLICES)
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
 * k/(2k) over the k insertion slices, then 1/2 (paper 001, section 5.3). */
static void paper_fills(uint32_t k, uint32_t l, double *fill)
{
    for (uint32_t i = 0; i < k + l; i++)
        fill[i] = i < k ? (double)(i + 1) / (2.0 * k) : 0.5;
}

double once_apbf_fpr(uint32_t k, uint32_t l)
{
    double fill[2 * ONCE_MAX_AGE_SLICES];
    if (k == 0 || l == 0 || k > ONCE_MAX_AGE_SLICES || l > ONCE_MAX_AGE_SLICES)
        return 1.0;
    paper_fills(k, l, fill);
    return once_age_fpr(k, l, fill);
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
    if (k == 0 || l == 0 || k > ONCE_MAX_AGE_SLICES || l > ONCE_MAX_AGE_SLICES)
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
    if (k == 0 || l == 0 || k > ONCE_MAX_AGE_SLICES || l > ONCE_MAX_AGE_SLICES)
        return 0.0;
    paper_fills(k, l, fill);
    return once_age_accesses_absent(k, l, fill);
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
