/*
 * slice/sites.h - what the filters of slice/ share about their sites (slice/sites.c);
 * the sites themselves are public (once.h, "Sliced filters").
 */
#ifndef ONCE_SLICE_SITES_H
#define ONCE_SLICE_SITES_H

#include "once.h"

/* Destroy sites[0 .. count-1] (those with a destroy call), as a filter that owns them
 * does when it is freed. */
void slice_sites_destroy(once_site *sites, uint64_t count);

/* The m and k of a filter of slice/ from its config: bits and hashes as given, else
 * the standard filter's for capacity and error; k alone derived from m and the
 * capacity (7 without one). */
once_status slice_plan_geometry(uint64_t bits, uint32_t hashes, uint64_t capacity, double error,
                                uint64_t *m, uint32_t *k);

#endif /* ONCE_SLICE_SITES_H */
