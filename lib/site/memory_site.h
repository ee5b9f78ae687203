/*
 * site/memory_site.h - what the filters that hold memory sites (slice/, site/slice.c)
 * share about them (site/memory_site.c); the sites themselves are public
 * (once_sliced.h, "Sliced filters").
 */
#ifndef ONCE_SITE_MEMORY_SITE_H
#define ONCE_SITE_MEMORY_SITE_H

#include "once_sliced.h"

#include "core/codec.h"
#include "core/timers.h"

/* The width of a memory site's timers for a window of `window` ms (or events): the
 * narrowest of 8, 16 and 32 bits whose tick is 1 (a window up to 2^30), else 32
 * (site/memory_site.c). */
static inline uint32_t memory_site_timer_width(uint64_t window)
{
    for (uint32_t width = 8; width < 32; width *= 2)
        if (once_timers_tick_for(window, width) == 1)
            return width;
    return 32;
}

/* The bytes of one sub-filter of a memory site of `bits` cells (a multiple of 64):
 * with a window (`window` not 0), a timer and the sweep's mark a cell; a bit
 * otherwise (the memory cap counts them so). */
static inline uint64_t memory_site_sub_filter_bytes(uint64_t bits, uint64_t window)
{
    return window != 0 ? bits * memory_site_timer_width(window) / 8 + bits / 8 : bits / 8;
}

/* A memory site inside a saved slice (site/slice.c; docs/FORMAT.md, type 13): its
 * clock and sweep, saved with the slice's parameters, and per sub-filter, oldest
 * first, the positions written, its generation and its cells as they are in memory
 * (bits, or timers then marks).  The counts of set cells and the latest expiry are
 * rebuilt from the cells on load, so a file cannot contradict them. */
typedef struct memory_site_state {
    uint64_t clock, sweep_cursor, sweep_credit, opened;
    uint32_t filters;
    bool clock_started;
} memory_site_state;

void memory_site_get_state(const once_site *site, memory_site_state *out);
uint64_t memory_site_payload_bytes(const once_site *site);
void memory_site_save(const once_site *site, once_writer *w);
/* A site of `config` (no budget, not shared) holding the saved state and payload;
 * ONCE_ERR_CORRUPT when they disagree with the config or with themselves. */
once_status memory_site_load(const once_memory_site_config *config,
                             const memory_site_state *state, const uint8_t *payload, size_t len,
                             once_site *out);
/* Back to a new site's state: one empty sub-filter, no clock. */
void memory_site_clear(once_site *site);

#endif /* ONCE_SITE_MEMORY_SITE_H */
