/*
 * once_math.h - the papers' formulas behind the library's sizing, public beside
 * once.h for capacity planning, tests and tools: the rate of a geometry, the geometry
 * for a rate, and the configuration rules of papers 001, 002 and 003.  once_create
 * sizes every filter with these same functions, so a filter is always built to the
 * formula its measured rate is checked against.  All are pure: no filter, no state,
 * safe from any thread.  Not a stable tier: like once_advanced.h, it compiles only with
 * ONCE_USE_UNSTABLE_API defined (once.h, "The headers").
 */
#ifndef ONCE_MATH_H
#define ONCE_MATH_H

#ifndef ONCE_USE_UNSTABLE_API
#error "once_math.h has no stable ABI: define ONCE_USE_UNSTABLE_API to use it, and \
link libonce statically or rebuild against each version (once.h alone is stable)"
#endif

#include "once_sliced.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------- the static layouts */

/*
 * The rate of the static layouts (lib/math/sizing.c, lib/math/blocked_rate.c).
 *   standard  : Pfp(m,k,n) = (1 - (1 - 1/m)^(kn))^k          [paper 000, Eq. 1]
 *               Pfp(m,k,n) ~ (1 - e^(-kn/m))^k               [paper 000, Eq. 2]
 *   partitioned (slices of s = m/k bits):
 *               p = r^k, r = 1 - (1 - 1/s)^n                 [paper 001, section 4.1]
 *   blocked   : exact rate for our block layout (see lib/math/blocked_rate.c)
 */
ONCE_API double once_fpr_standard(uint64_t bits, uint32_t hashes, uint64_t items);
ONCE_API double once_fpr_standard_approx(uint64_t bits, uint32_t hashes, uint64_t items);
ONCE_API double once_fpr_partitioned(uint64_t bits, uint32_t hashes, uint64_t items);
ONCE_API double once_fpr_blocked(uint64_t bits, uint32_t hashes, uint64_t items);
ONCE_API double once_fpr_for(once_type type, uint64_t bits, uint32_t hashes, uint64_t items);
/* Age-partitioned filters (paper 001, section 5): the false-positive recurrence F at
 * the peak fills the paper assumes (a linear ramp over the k insertion slices, then
 * 1/2), the expected slice accesses of a query answering false (recurrence A), and the
 * peak normalized probability-weighted slack. */
ONCE_API double once_apbf_fpr(uint32_t k, uint32_t l);
ONCE_API double once_apbf_accesses_absent(uint32_t k, uint32_t l);
ONCE_API double once_apbf_npws(uint32_t k, uint32_t l);
/* m = -n ln p / (ln 2)^2 and k = round(m/n ln 2): the optimum of Eq. 2. */
ONCE_API uint64_t once_optimal_bits(uint64_t capacity, double error);
ONCE_API uint32_t once_optimal_hashes(uint64_t bits, uint64_t capacity);
/* The geometry `once_create` would choose for (type, capacity, error). */
ONCE_API once_status once_plan(once_type type, uint64_t capacity, double error, uint64_t *bits,
                               uint32_t *hashes);

/* ------------------------------------------------ block-partitioned filters */

/* Paper 002; the geometry is once_bpbf_geometry (once.h). */
/* Eq. 1: the rate of one batch of `blocks` blocks holding `items` keys. */
ONCE_API double once_bpbf_fpr(uint64_t block_length, uint32_t block_hashes, uint32_t blocks,
                              uint64_t items);
/* Eq. 2 (exact form): a D-BBF of this geometry after `items` keys. */
ONCE_API double once_bpbf_dynamic_fpr(const once_bpbf_geometry *geometry, uint64_t items);
/* The most keys a batch takes with its Eq. 1 rate at most `error` (0 if none). */
ONCE_API uint64_t once_bpbf_threshold(uint64_t block_length, uint32_t block_hashes,
                                      uint32_t blocks, double error);
/* Section 4's configuration search: over mu = 1, 2, ... with m_b = floor(batch_bits / mu),
 * the mu whose n_thres (above) is largest; hill climbing, n_thres being concave in mu. */
ONCE_API once_status once_bpbf_search(uint64_t batch_bits, double batch_error,
                                      uint32_t block_hashes, once_bpbf_geometry *out);
/* The geometry once_create builds for a ONCE_BPBF / ONCE_DBPBF config. */
ONCE_API once_status once_bpbf_plan(const once_config *config, once_bpbf_geometry *out);

/* ---------------------------------------------------- Dynamic Bloom Filters */

/* Paper 003 Eq. 3: the false-positive rate of a DBF of rows (bits, hashes) with row
 * capacity c holding n keys: floor(n/c) full rows and one row of n mod c keys. */
ONCE_API double once_dbf_fpr(uint64_t bits, uint32_t hashes, uint64_t row_capacity,
                             uint64_t items);
/* Paper 003 Eq. 10: f2(n) = 1 - (1 - f(c))^(s-1), s = ceil(n/c), the bound on the share
 * of n keys that have more than one row address (and may survive their delete). */
ONCE_API double once_dbf_multiple_address_bound(uint64_t bits, uint32_t hashes,
                                                uint64_t row_capacity, uint64_t items);
/* Paper 003 section 3.5.1: ratio = n f2(n) / c = s (1 - (1 - f)^(s-1)) for s full rows
 * at row rate f.  Query-before-insert pays off when it is at least 1 (plain inserts then
 * waste at least one row). */
ONCE_API double once_dbf_query_first_ratio(uint32_t rows, double row_error);

/* Sizing for a set of at most N keys whose size has probability pmf[n] (n = 0..N, any
 * non-negative weights, normalized here), under a bound `error` on the DBF's rate
 * (paper 003 section 4.2).  With s rows each row gets c = ceil(N/s), rate
 * 1 - (1 - error)^(1/s) and m = ceil(c ln(rate) / ln(0.6185)) bits; row i is used with
 * probability r_i = P(n > c(i-1)) (r_1 = 1) and the expected size is m * sum r_i. */
typedef struct once_dbf_plan {
    uint32_t rows;         /* s minimizing the expected size */
    uint64_t row_capacity; /* c */
    uint64_t row_bits;     /* m */
    uint32_t hashes;       /* k = ceil(m/c ln 2) */
    double row_error;      /* 1 - (1 - error)^(1/s) */
    double expected_bits;  /* m * sum r_i at this s */
    double sbf_bits;       /* one standard filter for N keys: ceil(N ln(error) / ln 0.6185) */
} once_dbf_plan;

/* The plan for a given number of rows s (1 <= s <= N). */
ONCE_API once_status once_dbf_plan_for_rows(const double *pmf, uint64_t max_items, double error,
                                            uint32_t rows, once_dbf_plan *out);
/* The plan with the least expected size over s = 1..max_rows (at most N). */
ONCE_API once_status once_dbf_plan_rows(const double *pmf, uint64_t max_items, double error,
                                        uint32_t max_rows, once_dbf_plan *out);

/*
 * Unbounded sets (paper 003 section 4.3): filters are designed for n0 keys at the left
 * bound alpha and must never pass the right bound beta > alpha.  A standard filter for
 * n0 at alpha passes beta after floor(n0 ln(alpha) / ln(beta)) keys; a DBF with rows of
 * c = n0 at alpha only after floor(ln(1 - beta) / ln(1 - alpha)) full rows.  (The paper
 * prints the ceiling; the floor is what keeps the rate at or below beta.)  At that point
 * both are rebuilt for a larger n0; the policy here is the smallest n0 the paper allows,
 * limit + 1, so each rebuild multiplies n0 by the same factor and the number of rebuilds
 * to reach n keys is logarithmic in n with that factor as base.
 */
typedef struct once_dbf_bounds {
    uint64_t sbf_limit;  /* keys a standard filter for n0 at alpha holds within beta */
    uint64_t dbf_limit;  /* keys a DBF of rows c = n0 at alpha holds within beta */
    uint32_t dbf_rows;   /* its full rows at that point */
    uint64_t next_sbf_n0; /* n0 after a rebuild of the standard filter */
    uint64_t next_dbf_n0; /* row capacity after a rebuild of the DBF */
} once_dbf_bounds;

ONCE_API once_status once_dbf_two_bounds(uint64_t n0, double alpha, double beta,
                                         once_dbf_bounds *out);
/* Rebuilds needed while a set grows from 0 to n keys, starting at n0 (same policy). */
ONCE_API once_status once_dbf_rebuilds(uint64_t n0, double alpha, double beta, uint64_t items,
                                       uint64_t *sbf_rebuilds, uint64_t *dbf_rebuilds);

/* ------------------------------------------------------- sliced filters */

/*
 * One filter of m bits and k hashes sliced over S sites, with n keys (paper 000,
 * section 3; lib/math/slicing.c): the rate (Eq. 3 vertical, Eq. 4 horizontal, section
 * 3.3 diced with S' parts a slice; parts is 0 or 1 otherwise); the
 * false-positive and false-negative rates with a fraction `failed` of the sites down
 * under the threshold rule (an event is a duplicate when every reachable position is
 * set and at least `threshold` positions are reachable: 0 counts a failed position as
 * set, Eqs. 5 and 6; k makes any failure distinct; between, the hybrid); and S_f
 * (Definition 3), the fewest slices, up to 4096, that keep the rate with `failures`
 * sites down at most max_fpr under threshold 0 (0 when none does).
 */
ONCE_API double once_sliced_fpr(once_slicing slicing, uint64_t bits, uint32_t hashes,
                                uint32_t slices, uint32_t parts, uint64_t items);
ONCE_API once_status once_sliced_failure_rates(once_slicing slicing, uint64_t bits,
                                               uint32_t hashes, uint32_t slices, uint32_t parts,
                                               uint64_t items, double failed,
                                               uint32_t threshold, double *fp, double *fn);
/* The same from the fill (the fraction of set cells where the event's positions fall:
 * what a filter measures of itself) rather than from n: a filter's live estimates. */
ONCE_API once_status once_sliced_failure_rates_at_fill(once_slicing slicing, uint32_t hashes,
                                                       uint32_t slices, double fill,
                                                       double failed, uint32_t threshold,
                                                       double *fp, double *fn);
/* Split slicing (ONCE_SLICING_SPLIT, Proposition 2): k1 = slice_hashes distinct slices
 * of the S a key, hashes / k1 bits in each.  Its rate averages each slice's over its
 * binomial load (a slice holds a key with chance k1/S):
 *   (sum_j B(n, k1/S; j) (1 - (1 - S/m)^(k2 j))^k2)^k1,  k2 = hashes / k1,
 * 1.0 for an invalid shape; and its failure rates at a fill, a failed site losing the
 * k2 positions a key has there together (ONCE_ERR_INVALID for an invalid shape). */
ONCE_API double once_split_fpr(uint64_t bits, uint32_t slice_hashes, uint32_t hashes,
                               uint32_t slices, uint64_t items);
ONCE_API once_status once_split_failure_rates_at_fill(uint32_t slice_hashes, uint32_t hashes,
                                                      double fill, double failed,
                                                      uint32_t threshold, double *fp,
                                                      double *fn);
ONCE_API uint32_t once_sliced_sites_for_failures(once_slicing slicing, uint64_t bits,
                                                 uint32_t hashes, uint64_t items,
                                                 uint32_t failures, double max_fpr);
/* Definition 3's other bound (section 3.2): the fewest slices S, up to 4096, for which
 * `failures` sites down keep the false-negative rate at most max_fnr under the
 * threshold rule (threshold k: any failed position makes an event distinct; between 1
 * and k, the hybrid; 0 never loses an event, so S = failures + 1).  The rate does not
 * depend on m or n.  ONCE_ERR_INVALID: no `slices`, a slicing out of range, hashes 0,
 * threshold above hashes, or max_fnr outside [0, 1); ONCE_ERR_TOO_LARGE: no S up to
 * 4096 does (*slices is then 0). */
ONCE_API once_status once_sliced_sites_for_false_negatives(once_slicing slicing, uint32_t hashes,
                                                           uint32_t threshold, uint32_t failures,
                                                           double max_fnr, uint32_t *slices);

#ifdef __cplusplus
}
#endif
#endif /* ONCE_MATH_H */
