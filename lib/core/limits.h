/*
 * core/limits.h - the library's size limits, which every size computation relies on.
 */
#ifndef ONCE_CORE_LIMITS_H
#define ONCE_CORE_LIMITS_H

#include <stdint.h>

/* Library limits.  2^40 cells is 128 GiB of bits: far beyond one host's filter, small
 * enough that every size computation below fits in 64 bits without overflow. */
#define ONCE_MAX_CELLS (UINT64_C(1) << 40)
#define ONCE_MAX_HASHES 64u
/* Age-partitioned windows: at most this many insertion (k) or age (l) segments. */
#define ONCE_MAX_AGE_SLICES 128u
/* Dynamic Bloom Filters: at most this many rows. */
#define DBF_MAX_ROWS (UINT32_C(1) << 20)

#endif /* ONCE_CORE_LIMITS_H */
