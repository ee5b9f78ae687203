/*
 * math/bpbf_plan.h - what the block-partitioned filters' layout (static/bpbf.c) and
 * their planning (math/bpbf_plan.c) share.
 */
#ifndef ONCE_MATH_BPBF_PLAN_H
#define ONCE_MATH_BPBF_PLAN_H

#include "once_math.h"

#include <stdbool.h>

#define BPBF_MAX_BLOCKS 65536u

/* Is (m_b, mu, k_b) a geometry the library builds (within its limits)? */
bool once_bpbf_geometry_valid(uint64_t block_length, uint64_t blocks, uint64_t block_hashes);

#endif /* ONCE_MATH_BPBF_PLAN_H */
