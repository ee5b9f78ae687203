/*
 * static/array_filter.c - what the flat-array layouts (standard, partitioned, blocked,
 * counting) have in common: one array of cells, 64-byte aligned and a whole number
 * of cache lines, plus k.
 *
 * Invariants
 *   - cells past `cells` (the padding up to the last cache line) are always zero: the
 *     probes never reach them and the loader rejects a file where they are set, so a
 *     popcount over the whole array counts only real cells;
 *   - saved parameters are exactly (cells, k) and the payload exactly the words, so one
 *     validation serves every layout.
 */
#include "static/array_filter.h"
#include "core/limits.h"

#include <string.h>

#include <math.h>

once_status once_array_new(once_filter **out, const once_filter_ops *ops, uint64_t cells,
                           uint32_t cell_bits, uint32_t hashes)
{
    if (cells == 0 || hashes == 0 || hashes > ONCE_MAX_HASHES)
        return ONCE_ERR_INVALID;
    if (cells > ONCE_MAX_CELLS)
        return ONCE_ERR_TOO_LARGE;
    once_array_filter *f = once_calloc(1, sizeof *f);
    if (f == NULL)
        return ONCE_ERR_NOMEM;
    once_filter_init(&f->base, ops);
    f->cells = cells;
    f->cell_bits = cell_bits;
    f->hashes = hashes;
    f->words = once_words_for_bits(cells * cell_bits);
    f->array = once_words_alloc(f->words);
    if (f->array == NULL) {
        once_free_memory(f);
        return ONCE_ERR_NOMEM;
    }
    *out = &f->base;
    return ONCE_OK;
}

void once_array_destroy(once_filter *f)
{
    once_words_free(ARRAY(f)->array);
    once_free_memory(f);
}

void once_array_clear(once_filter *f)
{
    memset(ARRAY(f)->array, 0, (size_t)(ARRAY(f)->words * 8));
}

bool once_array_same_geometry(const once_filter *a, const once_filter *b)
{
    return CARRAY(a)->cells == CARRAY(b)->cells && CARRAY(a)->hashes == CARRAY(b)->hashes &&
           CARRAY(a)->cell_bits == CARRAY(b)->cell_bits;
}

once_status once_array_combine_bits(once_filter *dst, const once_filter *src, once_combine_op op)
{
    once_words_combine(ARRAY(dst)->array, CARRAY(src)->array, ARRAY(dst)->words, op);
    return ONCE_OK;
}

uint64_t once_array_memory_for(uint64_t words)
{
    return sizeof(once_array_filter) + once_words_memory(words);
}

uint64_t once_array_memory(const once_filter *f)
{
    return once_array_memory_for(CARRAY(f)->words);
}

uint64_t once_array_params_size(const once_filter *f)
{
    (void)f;
    return 16;
}

uint64_t once_array_payload_size(const once_filter *f)
{
    return CARRAY(f)->words * 8;
}

void once_array_save_params(const once_filter *f, once_writer *w)
{
    once_writer_u64(w, CARRAY(f)->cells);
    once_writer_u64(w, CARRAY(f)->hashes);
}

void once_array_save_payload(const once_filter *f, once_writer *w)
{
    once_writer_words(w, CARRAY(f)->array, CARRAY(f)->words);
}

/* One bit per non-zero cell of a word: the word itself for bit arrays, the non-zero
 * nibbles for counters. */
static inline uint64_t cells_nonzero(uint64_t w, uint32_t cell_bits)
{
    return cell_bits == 1 ? w : once_nibbles_nonzero(w);
}

uint64_t once_array_cells_set(const once_filter *f)
{
    const once_array_filter *a = CARRAY(f);
    if (a->cell_bits == 1)
        return once_words_popcount(a->array, a->words);
    uint64_t total = 0;
    for (uint64_t i = 0; i < a->words; i++)
        total += (uint64_t)__builtin_popcountll(cells_nonzero(a->array[i], a->cell_bits));
    return total;
}

/* The occupancy model of each flat layout (math/cardinality.c): the chance that one key
 * leaves a given cell clear. */
static once_status array_occupancy(const once_filter *f, once_occupancy *o)
{
    const once_array_filter *a = CARRAY(f);
    switch (f->ops->type) {
    case ONCE_PARTITIONED: /* one probe in each of k slices of m/k cells */
        return once_occupancy_for(o, a->cells, 1, a->cells / a->hashes);
    case ONCE_BLOCKED: /* k distinct lanes of one of m/512 blocks: k/m per cell */
        return once_occupancy_make(o, (double)a->cells,
                                   1.0 - (double)a->hashes / (double)a->cells);
    default: /* standard and counting: k probes over all m cells */
        return once_occupancy_for(o, a->cells, a->hashes, a->cells);
    }
}

once_status once_array_cells(const once_filter *f, uint64_t *set, once_occupancy *o)
{
    *set = once_array_cells_set(f);
    return array_occupancy(f, o);
}

once_status once_array_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                   once_cardinality *out)
{
    (void)now_ms;
    uint64_t set;
    once_occupancy o;
    once_status st = once_array_cells(f, &set, &o);
    return st != ONCE_OK ? st : once_card_estimate(&o, set, confidence, out);
}

/* Set cells of a, of b, and of their AND, in one pass and without building either
 * combined filter (paper 002, section 5.2). */
once_status once_array_cardinality_pair(const once_filter *fa, const once_filter *fb,
                                        once_combine_op op, double confidence,
                                        once_cardinality *out)
{
    once_occupancy occupancy, *o = &occupancy;
    once_status st = array_occupancy(fa, o);
    if (st != ONCE_OK)
        return st;
    const once_array_filter *a = CARRAY(fa), *b = CARRAY(fb);
    uint64_t set_a = 0, set_b = 0, set_and = 0;
    for (uint64_t i = 0; i < a->words; i++) {
        uint64_t x = cells_nonzero(a->array[i], a->cell_bits);
        uint64_t y = cells_nonzero(b->array[i], b->cell_bits);
        set_a += (uint64_t)__builtin_popcountll(x);
        set_b += (uint64_t)__builtin_popcountll(y);
        set_and += (uint64_t)__builtin_popcountll(x & y);
    }
    if (op == ONCE_COMBINE_UNION) /* the OR is the filter of the union: Theorem 1 */
        return once_card_estimate(o, set_a + set_b - set_and, confidence, out);
    return once_card_estimate_intersection(o, set_a, set_b, set_and, confidence, out);
}

/* The standard, counting and partitioned filters' statistics: the rate estimated from
 * the fill is the chance that all k probes find a set cell.  A standard or counting
 * key's k probes land anywhere in the array; a partitioned key sets exactly one bit
 * per slice, so slice fills agree to within sampling noise and the overall fill
 * stands for each. */
void once_array_stats(const once_filter *f, once_stats *st)
{
    const once_array_filter *a = CARRAY(f);
    st->bits = a->cells;
    st->bits_set = once_array_cells_set(f);
    st->hashes = a->hashes;
    st->fpr_estimate = pow((double)st->bits_set / (double)a->cells, a->hashes);
}

once_status once_array_load(once_filter **out, const uint8_t *params, size_t params_len,
                            const uint8_t *payload, size_t payload_len, uint32_t cell_bits,
                            once_status (*make)(once_filter **, uint64_t, uint32_t))
{
    once_reader r = {params, params_len, 0};
    uint64_t cells = once_reader_u64(&r);
    uint64_t hashes = once_reader_u64(&r);
    if (r.failed || r.left != 0 || cells == 0 || cells > ONCE_MAX_CELLS || hashes == 0 ||
        hashes > ONCE_MAX_HASHES)
        return ONCE_ERR_CORRUPT;
    if (payload_len != once_words_for_bits(cells * cell_bits) * 8)
        return ONCE_ERR_CORRUPT;
    once_filter *f = NULL;
    once_status st = make(&f, cells, (uint32_t)hashes);
    if (st == ONCE_ERR_INVALID)
        return ONCE_ERR_CORRUPT;
    if (st != ONCE_OK)
        return st;
    once_array_filter *a = ARRAY(f);
    /* The layout may round the geometry (the blocked filter to whole blocks); a file
     * that needs rounding was not written by us. */
    if (a->cells != cells || a->hashes != hashes || a->words * 8 != payload_len) {
        f->ops->destroy(f);
        return ONCE_ERR_CORRUPT;
    }
    once_words_from_le(a->array, payload, a->words);
    if (!once_words_tail_clear(a->array, a->words, cells * cell_bits)) {
        f->ops->destroy(f);
        return ONCE_ERR_CORRUPT;
    }
    *out = f;
    return ONCE_OK;
}
