/*
 * slice/sites.h - what the filters of slice/ share about their sites (slice/sites.c);
 * the sites themselves are public (once_sliced.h, "Sliced filters").
 */
#ifndef ONCE_SLICE_SITES_H
#define ONCE_SLICE_SITES_H

#include "once_sliced.h"

#include "site/memory_site.h"

/* Destroy sites[0 .. count-1] (those with a destroy call), as a filter that owns them
 * does when it is freed. */
void slice_sites_destroy(once_site *sites, uint64_t count);

/* The m and k of a filter of slice/ from its config: bits and hashes as given, else
 * the standard filter's for capacity and error; k alone derived from m and the
 * capacity (7 without one). */
once_status slice_plan_geometry(uint64_t bits, uint32_t hashes, uint64_t capacity, double error,
                                uint64_t *m, uint32_t *k);

/* x / d and x % d by a product and one correction, without a division instruction
 * (tens of cycles, and an event needs k of them): with r = floor((2^64 - 1) / d), the
 * high word of x r is floor(x / d) or one less for any 64-bit x (its error,
 * x (2^64 - r d) / (d 2^64), is below 1). */
typedef struct slice_divisor {
    uint64_t d, reciprocal;
} slice_divisor;

static inline slice_divisor slice_divisor_of(uint64_t d)
{
    return (slice_divisor){d, UINT64_MAX / d};
}

static inline uint64_t slice_divide(uint64_t x, const slice_divisor *by, uint64_t *remainder)
{
    uint64_t q = (uint64_t)(((unsigned __int128)x * by->reciprocal) >> 64);
    uint64_t r = x - q * by->d;
    if (r >= by->d) {
        q++;
        r -= by->d;
    }
    *remainder = r;
    return q;
}

/* Vertical slicing of m positions over S slices (paper 000, Definition 2): slice i
 * holds the positions p with floor(p S / m) = i, that is [ceil(i m / S),
 * ceil((i + 1) m / S)), floor(m/S) or ceil(m/S) of them, as even as m allows.  The
 * slice of `position` (< m), and its offset there; by_bits divides by m, by_slices by
 * S (m at most 2^40 and S at most 2^12, so the products fit). */
static inline uint32_t slice_vertical_of(uint64_t position, uint32_t slices,
                                         const slice_divisor *by_bits,
                                         const slice_divisor *by_slices, uint64_t *offset)
{
    uint64_t ignored = 0;
    uint64_t slice = slice_divide(position * slices, by_bits, &ignored);
    *offset = position - slice_divide(slice * by_bits->d + slices - 1, by_slices, &ignored);
    return (uint32_t)slice;
}

#endif /* ONCE_SLICE_SITES_H */
