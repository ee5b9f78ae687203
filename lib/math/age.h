/*
 * math/age.h - the formulas of the age-partitioned windows (math/age.c, paper 001).
 *
 * A layout is k insertion and l age segments; a segment is a slice (block_bits = 0,
 * the APBF and TLBF) or a blocked filter of block_bits-bit blocks with `hashes` bits a
 * key (the APBBF).  A generation is g keys; `units` are a segment's bits (slices) or
 * blocks.
 */
#ifndef ONCE_MATH_AGE_H
#define ONCE_MATH_AGE_H

#include "once_math.h"

/* The recurrence F(0, 0) of section 5.3 and the expected segments a query of an absent
 * key reads, over explicit per-segment match rates fill[0 .. k+l-1]. */
double once_age_fpr(uint32_t k, uint32_t l, const double *fill);
double once_age_accesses_absent(uint32_t k, uint32_t l, const double *fill);

/* Keys a full segment holds per unit at the design load: ln 2 per bit for slices
 * (fill 1/2, section 5.2); for blocks, the load that sets each part-bit with
 * probability 1/2 (section 6). */
double once_age_design_full_load(uint32_t block_bits, uint32_t hashes);
/* The segments' peak match rates (just before a shift) when a full segment carries
 * `load` times the design load, into fill[0 .. k+l-1]. */
void once_age_peak_fills(uint32_t k, uint32_t l, uint32_t block_bits, uint32_t hashes, double load,
                         double *fill);
/* The load a geometry's full segments carry, as a share of the design load. */
double once_age_geometry_load(uint32_t k, uint64_t generation, uint32_t block_bits,
                              uint32_t hashes, double units);
/* The double-hashing floor of a slice layout placed by format 1's linear probe, added
 * to F in such a filter's rates (see math/age.c). */
double once_age_slice_floor_rate(uint32_t k, uint32_t l, uint64_t generation, double bits);
/* The peak rate of a geometry: F at the segments' fills. */
double once_age_design_rate(uint32_t k, uint32_t l, uint32_t block_bits, uint32_t hashes,
                            uint64_t generation, double units);

/* The (k, l) a layout needs for rate `error` at `level` (the extra insertion segments
 * that buy a shorter slack); once_age_plan for slices. */
once_status once_age_plan_layout(double error, uint32_t level, uint32_t block_bits,
                                 uint32_t block_hashes, uint32_t *k, uint32_t *l);
once_status once_age_plan(double error, uint32_t level, uint32_t *k, uint32_t *l);
/* The layout of a window of `window` keys from the planned (k, l): the generation,
 * and k, l and the load cut down for small windows (see math/age.c). */
void once_age_small_window_layout(uint64_t window, uint32_t block_bits, uint32_t hashes,
                                  double p, uint32_t *k, uint32_t *l, uint64_t *generation,
                                  double *load);

#endif /* ONCE_MATH_AGE_H */
