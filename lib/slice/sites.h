/*
 * slice/sites.h - the sites a sliced filter or a Bloom tree keeps in this process
 * (slice/sites.c): plain bit arrays run by the caller's thread, or owned by worker
 * threads that run their requests for them.
 */
#ifndef ONCE_SLICE_SITES_H
#define ONCE_SLICE_SITES_H

#include "once.h"

/* One site of `bits` bits (a multiple of 64) in memory, run by the caller. */
once_status once_memory_site_new(uint64_t bits, once_site *out);

#endif /* ONCE_SLICE_SITES_H */
