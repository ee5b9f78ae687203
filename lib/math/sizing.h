/*
 * math/sizing.h - the sizing the library uses besides the public formulas of
 * once_math.h (math/sizing.c).
 */
#ifndef ONCE_MATH_SIZING_H
#define ONCE_MATH_SIZING_H

#include "once_math.h"

#include <stdbool.h>

/* The structures whose config gives their geometry by bits or hashes (timer, DBF). */
bool once_bits_or_hashes_given(const once_config *config);

#endif /* ONCE_MATH_SIZING_H */
