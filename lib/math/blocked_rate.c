/*
 * math/blocked_rate.c - the false-positive rate of the blocked layout, and the
 * smallest geometry that meets a rate.
 *
 * False-positive rate (exact for this layout, given ideal hashing)
 *   Let S be the query key's k lanes, q = 31/32 the chance that a key touching a lane
 *   misses a given bit of it, and a_T = E_r[q^|T ∩ arc_r|] the chance that one key
 *   placed in the block (at a uniform rotation r) sets none of the query's bits in
 *   the lanes T ⊆ S.  A key lands in the query's block with probability 1/B, so all of
 *   T's bits stay clear after n keys with probability (1 - (1 - a_T)/B)^n, and by
 *   inclusion-exclusion
 *       Pfp(B, k, n) = sum over T ⊆ S of (-1)^|T| (1 - (1 - a_T)/B)^n.
 *   This accounts for the uneven number of keys per block (the reason blocked filters
 *   need more bits than standard ones for the same rate).  Sets T with the same
 *   overlap pattern share a_T, so the 2^k terms collapse to far fewer groups.
 */
#include "math/blocked_rate.h"
#include "core/limits.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

typedef struct fpr_term {
    double miss;  /* a_T */
    double coeff; /* sum of (-1)^|T| over the sets T with this a_T */
} fpr_term;

/* The most groups of equal a_T any k <= 16 has: 215, at k = 11 (k = 1..16 give 2, 3,
 * 5, 8, 13, 21, 34, 55, 88, 162, 215, 208, 134, 57, 16, 17). */
#define MAX_TERM_GROUPS 256

/* The grouped inclusion-exclusion terms for k lanes, in increasing a_T, into `t` (room
 * for MAX_TERM_GROUPS); returns their number, 0 if they do not fit (no k <= 16).  Each
 * set's term joins the group of its a_T, found by binary search, so no table of the
 * 2^k sets (nor a sort that might allocate one) is needed. */
static size_t blocked_terms(uint32_t hashes, fpr_term *t)
{
    size_t sets = (size_t)1 << hashes;
    double q_power[LANES + 1];
    for (int c = 0; c <= LANES; c++)
        q_power[c] = pow(1.0 - 1.0 / LANE_BITS, c);
    uint32_t arcs[LANES];
    for (uint32_t r = 0; r < LANES; r++)
        arcs[r] = lane_mask(hashes, r);
    size_t groups = 0;
    for (size_t s = 0; s < sets; s++) {
        /* Sum through a histogram of overlaps so that sets with the same pattern give
         * bit-identical a_T and share a group. */
        unsigned histogram[LANES + 1] = {0};
        for (uint32_t r = 0; r < LANES; r++)
            histogram[__builtin_popcount((uint32_t)s & arcs[r])]++;
        double miss = 0.0;
        for (int c = 0; c <= LANES; c++)
            miss += histogram[c] * q_power[c];
        miss /= LANES;
        double coeff = (__builtin_popcountll((unsigned long long)s) & 1) ? -1.0 : 1.0;
        size_t lo = 0, hi = groups;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (t[mid].miss < miss)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < groups && t[lo].miss == miss) {
            t[lo].coeff += coeff;
            continue;
        }
        if (groups == MAX_TERM_GROUPS)
            return 0;
        memmove(&t[lo + 1], &t[lo], (groups - lo) * sizeof *t);
        t[lo].miss = miss;
        t[lo].coeff = coeff;
        groups++;
    }
    return groups;
}

/*
 * The terms depend on k alone, cost up to a few milliseconds to build for k = 16, and
 * every plan and check of a blocked geometry needs them (a growing scalable filter
 * plans each new sub-filter, a loader checks each saved one): build them once per k
 * for the process, in static tables (they outlive every filter, so they belong to no
 * allocator).  Lock-free: the first caller for a k builds them in place; a caller that
 * finds them being built builds its own copy in `scratch` rather than wait.
 */
enum { TERMS_EMPTY, TERMS_BUILDING, TERMS_READY };

static fpr_term terms_table[MAX_BLOCKED_HASHES + 1][MAX_TERM_GROUPS];
static size_t terms_groups[MAX_BLOCKED_HASHES + 1];
static atomic_int terms_state[MAX_BLOCKED_HASHES + 1];

/* The terms for k = hashes (cached, or built in `scratch`, room for MAX_TERM_GROUPS),
 * their number in *groups; NULL if they do not fit. */
static const fpr_term *blocked_terms_cached(uint32_t hashes, fpr_term *scratch, size_t *groups)
{
    int state = atomic_load_explicit(&terms_state[hashes], memory_order_acquire);
    if (state == TERMS_EMPTY &&
        atomic_compare_exchange_strong_explicit(&terms_state[hashes], &state, TERMS_BUILDING,
                                                memory_order_acquire, memory_order_acquire)) {
        size_t built = blocked_terms(hashes, terms_table[hashes]);
        terms_groups[hashes] = built;
        atomic_store_explicit(&terms_state[hashes], built ? TERMS_READY : TERMS_EMPTY,
                              memory_order_release);
        *groups = built;
        return built ? terms_table[hashes] : NULL;
    }
    if (state == TERMS_READY) {
        *groups = terms_groups[hashes];
        return terms_table[hashes];
    }
    *groups = blocked_terms(hashes, scratch);
    return *groups ? scratch : NULL;
}

static double blocked_rate(const fpr_term *terms, size_t groups, uint64_t blocks, uint64_t items)
{
    double sum = 0.0;
    for (size_t g = 0; g < groups; g++) {
        if (terms[g].coeff == 0.0)
            continue;
        double clear = exp((double)items * log1p(-(1.0 - terms[g].miss) / (double)blocks));
        sum += terms[g].coeff * clear;
    }
    return sum < 0.0 ? 0.0 : sum;
}

/* Below this the alternating sum loses its precision in double arithmetic. */
#define BLOCKED_MIN_ERROR 1e-9

static double blocked_rate_all_lanes(uint64_t blocks, uint64_t items);

double once_fpr_blocked(uint64_t bits, uint32_t hashes, uint64_t items)
{
    uint64_t blocks = bits / BLOCK_BITS;
    if (hashes == 0 || hashes > MAX_BLOCKED_HASHES || blocks == 0)
        return 1.0;
    fpr_term scratch[MAX_TERM_GROUPS];
    size_t groups = 0;
    const fpr_term *terms = blocked_terms_cached(hashes, scratch, &groups);
    double rate = terms != NULL ? blocked_rate(terms, groups, blocks, items) : 1.0;
    if (hashes == MAX_BLOCKED_HASHES && rate < BLOCKED_MIN_ERROR)
        return blocked_rate_all_lanes(blocks, items); /* the same rate, still precise */
    return rate;
}

/*
 * The rate at k = 16, as a sum of positive terms.  With 16 lanes a key's arc covers
 * every lane, so a block with L keys has one bit of each key in each lane, all
 * independent: each of the query's 16 bits is set with probability 1 - (31/32)^L, and
 *     Pfp = sum over L of P(L keys in the block) (1 - (31/32)^L)^16,
 * L binomial (items, 1/B).  No term cancels another, so it holds its precision at any
 * rate; plans below BLOCKED_MIN_ERROR (a scalable filter's later sub-filters) use it.
 */
static double blocked_rate_all_lanes(uint64_t blocks, uint64_t items)
{
    double log_miss = log1p(-1.0 / LANE_BITS);
    if (blocks == 1) /* every key in the one block */
        return pow(-expm1((double)items * log_miss), LANES);
    double p = 1.0 / (double)blocks, n = (double)items;
    double mean = n * p;
    /* Only loads within 40 standard deviations (and 60) of the mean weigh: a term
     * past them has a probability under 1e-300.  So the sum costs O(sqrt(mean)) terms,
     * not one a key of a block's mean load. */
    double spread = 40.0 * sqrt(mean) + 60.0;
    double last = mean + spread, first = mean - spread;
    uint64_t top = last < n ? (uint64_t)last : items;
    uint64_t bottom = first > 1.0 ? (uint64_t)first : 1;
    double log_keep = log1p(-p);
    double sum = 0.0;
    for (uint64_t l = bottom; l <= top; l++) {
        double log_pmf = lgamma(n + 1) - lgamma((double)l + 1) - lgamma(n - (double)l + 1) +
                         (double)l * log(p) + (n - (double)l) * log_keep;
        double set = -expm1((double)l * log_miss);
        sum += exp(log_pmf + LANES * log(set));
    }
    return sum == sum ? sum : 1.0; /* NaN: no rate to plan by */
}

/* A block's mean load where the search for blocks starts: with 1,024 keys a block
 * each of a query's bits is set but with chance (31/32)^1024 < 1e-14, so the rate is
 * about 1, above any error planned here (under BLOCKED_MIN_ERROR), and the sum there
 * takes a few thousand terms. */
#define ALL_LANES_FIRST_LOAD 1024u

/* The fewest blocks at k = 16 that meet `error` at `capacity` (0 if none within the
 * library's limits).  The search doubles from capacity / ALL_LANES_FIRST_LOAD blocks,
 * not from one, where a block's mean load is the whole capacity. */
static uint64_t blocks_all_lanes(uint64_t capacity, double error)
{
    const uint64_t max_blocks = ONCE_MAX_CELLS / BLOCK_BITS;
    uint64_t hi = capacity / ALL_LANES_FIRST_LOAD, lo = 0; /* rate(lo) > error, or 0 */
    hi = hi < 1 ? 1 : hi > max_blocks ? max_blocks : hi;
    while (hi < max_blocks && blocked_rate_all_lanes(hi, capacity) > error) {
        lo = hi;
        hi = hi * 2 < max_blocks ? hi * 2 : max_blocks;
    }
    if (blocked_rate_all_lanes(hi, capacity) > error)
        return 0;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (blocked_rate_all_lanes(mid, capacity) <= error)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

once_status once_blocked_plan(uint64_t capacity, double error, uint64_t *bits, uint32_t *hashes)
{
    if (capacity == 0 || !(error >= ONCE_MIN_PLANNED_ERROR && error < 1.0))
        return ONCE_ERR_INVALID;
    if (error < BLOCKED_MIN_ERROR) {
        uint64_t blocks = blocks_all_lanes(capacity, error);
        if (blocks == 0)
            return ONCE_ERR_TOO_LARGE;
        *bits = blocks * BLOCK_BITS;
        *hashes = MAX_BLOCKED_HASHES;
        return ONCE_OK;
    }
    const uint64_t max_blocks = ONCE_MAX_CELLS / BLOCK_BITS;
    int k_limit = (int)ceil(-log2(error)) + 3;
    if (k_limit > MAX_BLOCKED_HASHES)
        k_limit = MAX_BLOCKED_HASHES;
    uint64_t best = 0;
    uint32_t best_k = 0;
    fpr_term scratch[MAX_TERM_GROUPS];
    for (int k = 1; k <= k_limit; k++) {
        size_t groups = 0;
        const fpr_term *terms = blocked_terms_cached((uint32_t)k, scratch, &groups);
        if (terms == NULL)
            return ONCE_ERR_INVALID; /* cannot happen for k <= 16 (MAX_TERM_GROUPS) */
        uint64_t hi = 1;
        while (hi < max_blocks && blocked_rate(terms, groups, hi, capacity) > error)
            hi = hi * 2 < max_blocks ? hi * 2 : max_blocks;
        if (blocked_rate(terms, groups, hi, capacity) <= error) {
            uint64_t lo = hi / 2; /* rate(lo) > error, or lo == 0 */
            while (hi - lo > 1) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (blocked_rate(terms, groups, mid, capacity) <= error)
                    hi = mid;
                else
                    lo = mid;
            }
            if (best == 0 || hi < best) {
                best = hi;
                best_k = (uint32_t)k;
            }
        }
    }
    if (best == 0)
        return ONCE_ERR_TOO_LARGE;
    *bits = best * BLOCK_BITS;
    *hashes = best_k;
    return ONCE_OK;
}
