/*
 * static/partitioned.c - the partitioned Bloom filter (Mullin): k slices of s bits,
 * probe i lands in slice i.
 *
 * Design
 *   The shared probe sequence is reduced over [0, s) and offset by i*s, so each key
 *   sets exactly one bit per slice and never two bits in one slice.  Each slice then
 *   fills like a one-hash filter of s bits: r = 1 - (1 - 1/s)^n and the
 *   false-positive rate is r^k (paper 001, section 4.1).  This is the layout the
 *   Age-Partitioned filter builds on.
 *
 * Invariants
 *   - cells = k * s exactly (a requested size is rounded up to a multiple of k);
 *   - bits are only ever set, so there are no false negatives.
 */
#include "static/array_filter.h"
#include "core/limits.h"

once_status once_partitioned_new(once_filter **out, uint64_t bits, uint32_t hashes)
{
    if (hashes == 0 || hashes > ONCE_MAX_HASHES || bits == 0)
        return ONCE_ERR_INVALID;
    uint64_t slice = (bits + hashes - 1) / hashes;
    if (slice > ONCE_MAX_CELLS / hashes)
        return ONCE_ERR_TOO_LARGE;
    return once_array_new(out, &once_partitioned_ops, slice * hashes, 1, hashes);
}

static inline uint64_t slice_bits(const once_array_filter *a)
{
    return a->cells / a->hashes;
}

static void partitioned_plan(const once_array_filter *a, const once_hash *h, uint64_t *cells)
{
    uint64_t s = slice_bits(a);
    once_probe p = once_probe_start(h, once_filter_probe(&a->base));
    for (uint32_t i = 0; i < a->hashes; i++) {
        cells[i] = i * s + once_probe_next(&p, s);
        once_prefetch_write(&a->array[cells[i] >> 6]);
    }
}

ONCE_ARRAY_CELL_CALLS(partitioned, partitioned_plan, once_bits_query, once_bits_add,
                      once_bits_test_and_add)

/* Probe i in slice i: the positions partitioned_query tests. */
static uint32_t partitioned_positions(const once_filter *f, const once_hash *h, uint64_t *out)
{
    const once_array_filter *a = CARRAY(f);
    uint64_t s = slice_bits(a);
    once_probe p = once_probe_start(h, once_filter_probe(&a->base));
    for (uint32_t i = 0; i < a->hashes; i++)
        out[i] = i * s + once_probe_next(&p, s);
    return a->hashes;
}

static once_status partitioned_load(once_filter **out, const uint8_t *params, size_t params_len,
                                    const uint8_t *payload, size_t payload_len)
{
    return once_array_load(out, params, params_len, payload, payload_len, 1,
                           once_partitioned_new);
}

const once_filter_ops once_partitioned_ops = {
    .type = ONCE_PARTITIONED,
    .can_take = once_never_full,
    .new_geometry = once_partitioned_new,
    .query = partitioned_query,
    .add = partitioned_add,
    .test_and_add = partitioned_test_and_add,
    .prefetch = NULL,
    .batch = partitioned_batch,
    .remove = NULL,
    .positions = partitioned_positions,
    .combine = once_array_combine_bits,
    .stats = once_array_stats,
    .load = partitioned_load,
    ONCE_ARRAY_SHARED_OPS,
};
