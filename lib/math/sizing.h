/*
 * math/sizing.h - the sizing the library uses besides the public formulas of
 * once_math.h (math/sizing.c, math/blocked_rate.c).
 */
#ifndef ONCE_MATH_SIZING_H
#define ONCE_MATH_SIZING_H

#include "once.h"

#include <stdbool.h>

/* The fewest bits of the blocked layout that meet `error` at `capacity`, and its k. */
once_status once_blocked_plan(uint64_t capacity, double error, uint64_t *bits, uint32_t *hashes);

/* The structures whose config gives their geometry by bits or hashes (timer, DBF). */
bool once_bits_or_hashes_given(const once_config *config);

#endif /* ONCE_MATH_SIZING_H */
