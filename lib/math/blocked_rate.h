/*
 * math/blocked_rate.h - the shape of the blocked layout, which its probes
 * (static/blocked.c) and its rate formula (math/blocked_rate.c) both follow, and the
 * planning of its geometry.
 *
 * The array is B blocks of 512 bits, each seen as 16 lanes of 32 bits; a key sets one
 * bit in each of k consecutive lanes (mod 16) from a rotation its hash picks.
 */
#ifndef ONCE_MATH_BLOCKED_RATE_H
#define ONCE_MATH_BLOCKED_RATE_H

#include "once_math.h"

#include <stdint.h>

#define BLOCK_BITS 512
#define LANES 16
#define LANE_BITS 32
#define MAX_BLOCKED_HASHES 16

/* The k-lane arc at rotation r, as a 16-bit lane mask: a 16-bit rotate, which the
 * compiler emits as one instruction (this is on every one-key call's path). */
static inline __attribute__((always_inline)) uint32_t lane_mask(uint32_t hashes,
                                                                uint32_t rotation)
{
    uint16_t arc = (uint16_t)((1u << hashes) - 1u); /* hashes <= 16 */
    return (uint16_t)((arc << rotation) | (arc >> ((LANES - rotation) & (LANES - 1))));
}

/* The fewest bits of the blocked layout that meet `error` at `capacity`, and its k
 * (once_fpr_blocked, once.h, is its rate), for an error in [ONCE_MIN_PLANNED_ERROR, 1):
 * below ONCE_MIN_ERROR only at k = 16, for the parts of a structure that shares its
 * target among them. */
#define ONCE_MIN_PLANNED_ERROR 1e-15
once_status once_blocked_plan(uint64_t capacity, double error, uint64_t *bits, uint32_t *hashes);

#endif /* ONCE_MATH_BLOCKED_RATE_H */
