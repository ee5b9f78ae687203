/*
 * math/sizing.c - the false-positive formulas and the sizing of the static layouts.
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
 *   blocked      exact for our block layout; derived in math/blocked_rate.c
 *
 * Planning picks, for a target (n, p), the geometry with the fewest bits whose formula
 * rate at n keys is at most p: for each candidate k around the analytic optimum it
 * bisects the smallest m, then keeps the smallest m (fewer probes on ties).
 *
 * The windows' formulas are in math/age.c, the block-partitioned and dynamic
 * filters' in math/bpbf_plan.c and math/dbf_plan.c.
 */
#include "math/sizing.h"
#include "math/blocked_rate.h"
#include "core/limits.h"

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

/* The structures whose config gives their geometry by bits or hashes (timer, DBF). */
bool once_bits_or_hashes_given(const once_config *c)
{
    return c->bits != 0 || c->hashes != 0;
}
