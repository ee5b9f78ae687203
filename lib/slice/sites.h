/*
 * slice/sites.h - what the filters of slice/ share about their sites (slice/sites.c);
 * the sites themselves are public (once_sliced.h, "Sliced filters").
 */
#ifndef ONCE_SLICE_SITES_H
#define ONCE_SLICE_SITES_H

#include "once_sliced.h"

#include "core/timers.h"

/* Destroy sites[0 .. count-1] (those with a destroy call), as a filter that owns them
 * does when it is freed. */
void slice_sites_destroy(once_site *sites, uint64_t count);

/* The m and k of a filter of slice/ from its config: bits and hashes as given, else
 * the standard filter's for capacity and error; k alone derived from m and the
 * capacity (7 without one). */
once_status slice_plan_geometry(uint64_t bits, uint32_t hashes, uint64_t capacity, double error,
                                uint64_t *m, uint32_t *k);

/* The width of a memory site's timers for a window of `window` ms (or events): the
 * narrowest of 8, 16 and 32 bits whose tick is 1 (a window up to 2^30), else 32
 * (slice/sites.c). */
static inline uint32_t slice_timer_width(uint64_t window)
{
    for (uint32_t width = 8; width < 32; width *= 2)
        if (once_timers_tick_for(window, width) == 1)
            return width;
    return 32;
}

/* The bytes of one sub-filter of a memory site of `bits` cells (a multiple of 64):
 * with a window (`window` not 0), a timer and the sweep's mark a cell; a bit
 * otherwise (the memory cap counts them so). */
static inline uint64_t slice_sub_filter_bytes(uint64_t bits, uint64_t window)
{
    return window != 0 ? bits * slice_timer_width(window) / 8 + bits / 8 : bits / 8;
}

#endif /* ONCE_SLICE_SITES_H */
