/*
 * window/apbf_batch.h - the batch engine of the age-partitioned count windows
 * (window/apbf_batch.c).
 */
#ifndef ONCE_WINDOW_APBF_BATCH_H
#define ONCE_WINDOW_APBF_BATCH_H

#include "window/age_filter.h"

/* The batch loop of both layouts: the ops table's `batch`. */
once_status once_age_batch(once_filter *f, const once_batch_items *items, size_t count,
                           once_batch_op op, uint8_t *out, size_t *done);

#endif /* ONCE_WINDOW_APBF_BATCH_H */
