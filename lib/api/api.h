/*
 * api/api.h - what the files of the public interface share: the registry's lookup
 * (api/registry.c), the header's rule and the counted insertion (api/filter.c).
 */
#ifndef ONCE_API_API_H
#define ONCE_API_API_H

#include "core/structure.h"

/* The ops table of a registered type; NULL for any other value. */
const once_filter_ops *once_ops_for_type(once_type type);

/* The one rule for the common header's design capacity and error: ONCE_ERR_TOO_LARGE
 * for a capacity past ONCE_MAX_CELLS, ONCE_ERR_INVALID for an error outside [0, 1].
 * once_create applies it to what it records, once_load to what it reads. */
once_status once_header_check(uint64_t capacity, double error);

/* One insertion of a hashed key, counted as api/filter.c's invariants say. */
once_status once_add_hashed(once_filter *f, const once_hash *h, uint64_t now_ms);

#endif /* ONCE_API_API_H */
