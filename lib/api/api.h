/*
 * api/api.h - what the files of the public interface share: the registry's lookup
 * (api/registry.c), the header's rule (api/filter.c) and the counted insertion.
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

/* One insertion of a hashed key, counted as api/filter.c's invariants say.  Inlined
 * into the one-key calls and the generic batch loop alike (a one-key call's length is
 * its speed: api/filter.c). */
static inline __attribute__((always_inline)) once_status
once_add_hashed(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    once_status st;
    if (f->ops->add_tests_first) {
        bool seen = false;
        st = f->ops->test_and_add(f, h, now_ms, &seen);
        if (st == ONCE_OK && !seen)
            f->items++;
        return st;
    }
    st = f->ops->add(f, h, now_ms);
    if (st == ONCE_OK)
        f->items++;
    return st;
}

/* The batch path of api/batch.c on arguments already checked: a structure's fused loop
 * or the generic one; `out` gets the answers (unused for ONCE_OP_ADD), *done the items
 * that took effect, and the filter's items are counted.  A sharded filter runs its
 * shards' batches through it (api/sharded.c). */
once_status once_run_batch(once_filter *f, const once_batch_items *items, size_t count,
                           once_batch_op op, uint8_t *out, size_t *done);

#endif /* ONCE_API_API_H */
