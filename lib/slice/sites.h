/*
 * slice/sites.h - what the filters of slice/ share about their sites (slice/sites.c);
 * the sites themselves are public (once_sliced.h, "Sliced filters").
 */
#ifndef ONCE_SLICE_SITES_H
#define ONCE_SLICE_SITES_H

#include "once_sliced.h"

/* Destroy sites[0 .. count-1] (those with a destroy call), as a filter that owns them
 * does when it is freed. */
void slice_sites_destroy(once_site *sites, uint64_t count);

/* The m and k of a filter of slice/ from its config: bits and hashes as given, else
 * the standard filter's for capacity and error; k alone derived from m and the
 * capacity (7 without one). */
once_status slice_plan_geometry(uint64_t bits, uint32_t hashes, uint64_t capacity, double error,
                                uint64_t *m, uint32_t *k);

/* The bytes of one sub-filter of a memory site of `bits` cells: a 64-bit timer a cell
 * with a window, a bit otherwise (the memory cap counts them so). */
static inline uint64_t slice_sub_filter_bytes(uint64_t bits, bool windowed)
{
    return windowed ? bits * 8 : bits / 8;
}

#endif /* ONCE_SLICE_SITES_H */
