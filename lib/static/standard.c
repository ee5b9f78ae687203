/*
 * static/standard.c - the standard Bloom filter: one array of m bits, k probes.
 *
 * Design
 *   A key sets or tests the k bits named by the shared probe sequence
 *   (once_probe_next over [0, m)).  The false-positive rate at n keys is paper 000's
 *   Eq. 1, (1 - (1 - 1/m)^(kn))^k; sizing.c picks m and k so that it is at most the
 *   target at the design capacity.
 *
 * Invariants
 *   - bits are only ever set (clear() aside), so a key once added always tests present;
 *   - storage, combine and serialization are the shared array filter's.
 */
#include "static/array_filter.h"
#include "core/limits.h"


once_status once_standard_new(once_filter **out, uint64_t bits, uint32_t hashes)
{
    return once_array_new(out, &once_standard_ops, bits, 1, hashes);
}

static void standard_plan(const once_array_filter *a, const once_hash *h, uint64_t *cells)
{
    once_probe p = once_probe_start(h, once_filter_probe(&a->base));
    for (uint32_t i = 0; i < a->hashes; i++) {
        cells[i] = once_probe_next(&p, a->cells);
        once_prefetch_write(&a->array[cells[i] >> 6]);
    }
}

ONCE_ARRAY_CELL_CALLS(standard, standard_plan, once_bits_query, once_bits_add,
                      once_bits_test_and_add)

/* The k bits a digest names: the shared probe sequence over [0, m), the very positions
 * standard_query tests and standard_test_and_add set. */
static void probe_positions(uint64_t bits, uint32_t hashes, const once_hash *h,
                            uint64_t multiplier, uint64_t *out)
{
    once_probe p = once_probe_start(h, multiplier);
    for (uint32_t i = 0; i < hashes; i++)
        out[i] = once_probe_next(&p, bits);
}

/* Those of paper 000's Eq. 1 filter a new filter would build: the mixed probe. */
once_status once_standard_positions(uint64_t bits, uint32_t hashes, const once_digest *digest,
                                    uint64_t *out)
{
    if (bits == 0 || bits > ONCE_MAX_CELLS || hashes == 0 || hashes > ONCE_MAX_HASHES ||
        digest == NULL || out == NULL)
        return ONCE_ERR_INVALID;
    probe_positions(bits, hashes, digest, ONCE_PROBE_MIX_MULTIPLIER, out);
    return ONCE_OK;
}

static uint32_t standard_positions(const once_filter *f, const once_hash *h, uint64_t *out)
{
    const once_array_filter *a = CARRAY(f);
    probe_positions(a->cells, a->hashes, h, once_filter_probe(&a->base), out);
    return a->hashes;
}

static once_status standard_load(once_filter **out, const uint8_t *params, size_t params_len,
                                 const uint8_t *payload, size_t payload_len)
{
    return once_array_load(out, params, params_len, payload, payload_len, 1, once_standard_new);
}

const once_filter_ops once_standard_ops = {
    .type = ONCE_STANDARD,
    .can_take = once_never_full,
    .new_geometry = once_standard_new,
    .query = standard_query,
    .add = standard_add,
    .test_and_add = standard_test_and_add,
    .prefetch = NULL,
    .batch = standard_batch,
    .remove = NULL,
    .positions = standard_positions,
    .combine = once_array_combine_bits,
    .stats = once_array_stats,
    .load = standard_load,
    ONCE_ARRAY_SHARED_OPS,
};
