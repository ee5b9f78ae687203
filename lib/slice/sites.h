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

#endif /* ONCE_SLICE_SITES_H */
