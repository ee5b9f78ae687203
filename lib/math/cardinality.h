/*
 * math/cardinality.h - distinct keys from a filter's set cells (math/cardinality.c,
 * paper 002 section 5).
 */
#ifndef ONCE_MATH_CARDINALITY_H
#define ONCE_MATH_CARDINALITY_H

#include "once_advanced.h"
#include "core/words.h"

/*
 * The occupancy model behind every distinct-key estimate (math/cardinality.c, paper 002
 * section 5): `cells` cells, each left clear by one key with probability
 * q = exp(log_clear).
 */
typedef struct once_occupancy {
    double cells;
    double log_clear; /* ln q < 0 */
} once_occupancy;

/* From q directly (the blocked layout: q = 1 - k/m). */
once_status once_occupancy_make(once_occupancy *o, double cells, double clear_per_key);
/* `cells` cells in ranges of `cell_range`, each key setting `hashes` random cells of
 * each range: q = (1 - 1/range)^hashes.  Standard: (m, k, m); partitioned (m, 1, m/k);
 * block-partitioned (lambda m_b, k_b, m_b). */
once_status once_occupancy_for(once_occupancy *o, uint64_t cells, uint32_t hashes,
                               uint64_t cell_range);
/* S(n), the expected set cells after n keys (Lemma 1, Lemma 4), and its inverse. */
double once_card_expected_set(const once_occupancy *o, double keys);
double once_card_inverse(const once_occupancy *o, double set);
/* Theorem 1 / 3: estimate and equal-tailed interval from `set` set cells. */
once_status once_card_estimate(const once_occupancy *o, uint64_t set, double confidence,
                               once_cardinality *out);
/* Theorem 2: |A intersect B| from the set cells of A, of B and of A AND B (Eq. 6). */
once_status once_card_estimate_intersection(const once_occupancy *o, uint64_t set1,
                                            uint64_t set2, uint64_t set_and, double confidence,
                                            once_cardinality *out);

/* The sum over `parts` parts holding disjoint keys; `estimate` gives part i's estimate
 * at the confidence it is asked (intervals combined by the union bound, see
 * math/cardinality.c). */
once_status once_card_sum_estimates(uint32_t parts,
                                    once_status (*estimate)(const void *ctx, uint32_t i,
                                                            double confidence,
                                                            once_cardinality *out),
                                    const void *ctx, double confidence, once_cardinality *out);
/* The same, where `part` gives part i's set cells and occupancy. */
once_status once_card_sum(uint32_t parts,
                          once_status (*part)(const void *ctx, uint32_t i, uint64_t *set,
                                              once_occupancy *o),
                          const void *ctx, double confidence, once_cardinality *out);
/* Distinct keys inside the window of an age-partitioned layout: generations
 * 0 .. last_generation, from the disjoint segment groups that hold them (see
 * math/cardinality.c).  `segment` gives logical segment i's set cells and occupancy. */
once_status once_card_age_window(uint32_t k, uint32_t last_generation,
                                 once_status (*segment)(const void *ctx, uint32_t logical,
                                                        uint64_t *set, once_occupancy *o),
                                 const void *ctx, double confidence, once_cardinality *out);
/* Distinct keys among the last insertions of a count window that span generations
 * 0 .. whole-1 and the newest `share` (in [0, 1)) of generation `whole`: the same
 * share of the way from the count of generations 0 .. whole-1 to that of 0 .. whole
 * (see math/cardinality.c).  whole = 0 counts only the share of generation 0. */
once_status once_card_age_span(uint32_t k, uint32_t whole, double share,
                               once_status (*segment)(const void *ctx, uint32_t logical,
                                                      uint64_t *set, once_occupancy *o),
                               const void *ctx, double confidence, once_cardinality *out);

/* The items (keys added) of the union or intersection of two filters that counted a
 * and b: their sum, saturating, or the smaller.  An upper bound on what the combined
 * filter holds, since the keys the two share are not known. */
uint64_t once_card_combined_items(uint64_t a, uint64_t b, once_combine_op op);

#endif /* ONCE_MATH_CARDINALITY_H */
