/*
 * static/array_filter.h - the array layouts: standard, partitioned, blocked and
 * counting filters (static/array_filter.c and one file each).
 */
#ifndef ONCE_STATIC_ARRAY_FILTER_H
#define ONCE_STATIC_ARRAY_FILTER_H

#include "core/structure.h"
#include "core/limits.h"
#include "math/cardinality.h"

/*
 * The four static layouts share one shape: a flat array of `cells` cells of
 * `cell_bits` bits each (1 for bit arrays, 4 for counters) and k probes.  What they
 * share - allocation, clear, geometry checks, bitwise combine, memory, the saved
 * parameters (cells, k) and payload (the words), and the loader's validation - lives
 * once in static/array_filter.c; each structure file supplies only its probing, stats
 * and any extra geometry rule.
 */
typedef struct once_array_filter {
    once_filter base;
    uint64_t cells;     /* m: bits, or counters */
    uint32_t cell_bits; /* 1 or 4 */
    uint32_t hashes;    /* k */
    uint64_t words;     /* allocated 64-bit words, a whole number of 64-byte lines */
    uint64_t *array;
    const void *impl;   /* per-layout extra (the blocked layout's SIMD path) */
} once_array_filter;

#define ARRAY(f) ((once_array_filter *)(f))
#define CARRAY(f) ((const once_array_filter *)(f))

once_status once_array_new(once_filter **out, const once_filter_ops *ops, uint64_t cells,
                           uint32_t cell_bits, uint32_t hashes);
void once_array_destroy(once_filter *f);
void once_array_clear(once_filter *f);
bool once_array_same_geometry(const once_filter *a, const once_filter *b);
once_status once_array_combine_bits(once_filter *dst, const once_filter *src, once_combine_op op);
uint64_t once_array_memory(const once_filter *f);
/* What once_array_memory reports for an array of `words` words, before it exists (the
 * growing structures count a sub-filter or row against their cap before making it). */
uint64_t once_array_memory_for(uint64_t words);
uint64_t once_array_params_size(const once_filter *f);
uint64_t once_array_payload_size(const once_filter *f);
void once_array_save_params(const once_filter *f, once_writer *w);
void once_array_save_payload(const once_filter *f, once_writer *w);
/* Parse (cells, k), build through `make` (which checks the layout's own geometry
 * rules), copy the payload and check that no cell past `cells` is set. */
once_status once_array_load(once_filter **out, const uint8_t *params, size_t params_len,
                            const uint8_t *payload, size_t payload_len, uint32_t cell_bits,
                            once_status (*make)(once_filter **, uint64_t, uint32_t));
/* Set cells in the whole array (popcount for bits; non-zero nibbles for counters). */
uint64_t once_array_cells_set(const once_filter *f);
void once_array_stats(const once_filter *f, once_stats *st);
/* An array filter's set cells and its layout's occupancy model (math/cardinality.c), for
 * structures built of array filters that sum their parts (once_card_sum). */
once_status once_array_cells(const once_filter *f, uint64_t *set, once_occupancy *o);
/* Distinct keys of one array filter, or of the union / intersection of two of the
 * same geometry, under the layout's occupancy model (paper 002, section 5). */
once_status once_array_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                   once_cardinality *out);
once_status once_array_cardinality_pair(const once_filter *a, const once_filter *b,
                                        once_combine_op op, double confidence,
                                        once_cardinality *out);

/* The four array layouts (standard.c, partitioned.c, blocked.c, counting.c), which
 * other structures build on: their tables and their constructors by geometry. */
extern const once_filter_ops once_standard_ops;
extern const once_filter_ops once_partitioned_ops;
extern const once_filter_ops once_blocked_ops;
extern const once_filter_ops once_counting_ops;
once_status once_standard_new(once_filter **out, uint64_t bits, uint32_t hashes);
once_status once_partitioned_new(once_filter **out, uint64_t bits, uint32_t hashes);
once_status once_blocked_new(once_filter **out, uint64_t bits, uint32_t hashes);
once_status once_counting_new(once_filter **out, uint64_t counters, uint32_t hashes);
/* A chain of blocked filters, oldest first, that holds a key when any of them does
 * (grow/scalable.c), answered by the blocked layout's one fused loop: for each item in
 * order, QUERY answers whether any holds it; TEST_AND_ADD answers the same and puts a
 * key none holds into the newest, chain[count - 1], while `room` (new keys it may still
 * take) lasts.  Returns the items done: all, or the first new key found with no room
 * left (not inserted, its answer not written); *taken: the keys inserted. */
size_t once_blocked_chain_batch(once_filter *const *chain, uint32_t count,
                                const once_batch_items *items, size_t n, once_batch_op op,
                                uint8_t *out, uint64_t room, uint64_t *taken);
/* The value of one counter of a counting filter (the DBF's rows keep their bit-slice
 * index in step with it). */
unsigned once_counting_counter(const once_filter *f, uint64_t cell);
/* The counting filter's query and insertion of a key whose k cells (once_positions'
 * order) the caller has already: the DBF computes them once for all its rows. */
bool once_counting_holds_cells(const once_filter *f, const uint64_t *cells);
void once_counting_add_cells(once_filter *f, const uint64_t *cells);

/*
 * The batch loop of the probed array layouts (standard, partitioned, counting).  A
 * key's k cells are computed once, as the key enters the prefetch window: stored in
 * the ring as its lines are requested, and probed from there ONCE_BATCH_AHEAD keys
 * later.  Going through the one-key operations would compute them twice, once to
 * request the lines and once to probe them: with the mixed probe (core/hash.h) that
 * second pass is most of a batch's arithmetic.  A layout supplies its four cell
 * operations as a static const table; the loop is inlined into the layout's `batch`,
 * so the table's calls become direct (and are inlined in turn).
 */
typedef struct once_cell_ops {
    /* Write the key's cells to cells[0 .. k-1] and request their lines. */
    void (*plan)(const once_array_filter *a, const once_hash *h, uint64_t *cells);
    bool (*query)(const once_array_filter *a, const uint64_t *cells);
    void (*add)(once_array_filter *a, const uint64_t *cells);
    bool (*test_and_add)(once_array_filter *a, const uint64_t *cells); /* returns seen */
} once_cell_ops;

static inline __attribute__((always_inline)) void
once_array_plan(const once_array_filter *a, const once_cell_ops *ops,
                const once_batch_items *items, size_t count, uint64_t *ring, size_t next)
{
    if (next < count) {
        once_hash key = once_item_hash(items, next);
        ops->plan(a, &key, &ring[(next & (ONCE_BATCH_LOOP_RING - 1)) * a->hashes]);
    }
}

static inline __attribute__((always_inline)) void
once_array_cell_batch(once_filter *f, const once_batch_items *items, size_t count,
                      once_batch_op op, uint8_t *out, const once_cell_ops *ops)
{
    once_array_filter *a = ARRAY(f);
    const once_batch_items in = *items; /* a local: the answer stores cannot alias it */
    uint64_t ring[ONCE_BATCH_LOOP_RING * ONCE_MAX_HASHES];
    for (size_t i = 0; i < ONCE_BATCH_AHEAD; i++)
        once_array_plan(a, ops, &in, count, ring, i);
    for (size_t i = 0; i < count; i++) {
        once_array_plan(a, ops, &in, count, ring, i + ONCE_BATCH_AHEAD);
        const uint64_t *cells = &ring[(i & (ONCE_BATCH_LOOP_RING - 1)) * a->hashes];
        if (op == ONCE_OP_QUERY)
            out[i] = ops->query(a, cells);
        else if (op == ONCE_OP_ADD)
            ops->add(a, cells);
        else
            out[i] = ops->test_and_add(a, cells);
    }
}

/*
 * One key through the same cell operations: its k cells computed and all their lines
 * requested (plan) before any is read, so that its k misses overlap instead of waiting
 * on each other.  A one-key query of an absent key then requests lines it will not
 * read (it stops at the first clear cell), and is still faster: measured in turns
 * against the probe loop that reads as it goes (bench/ab.c, docs/BENCHMARKS.md).
 * Returns the answer of a query or test-and-add (false for ADD).
 */
static inline __attribute__((always_inline)) bool
once_array_cell_one(once_filter *f, const once_hash *h, once_batch_op op, const once_cell_ops *ops)
{
    once_array_filter *a = ARRAY(f);
    uint64_t cells[ONCE_MAX_HASHES];
    ops->plan(a, h, cells);
    if (op == ONCE_OP_QUERY)
        return ops->query(a, cells);
    if (op == ONCE_OP_ADD) {
        ops->add(a, cells);
        return false;
    }
    return ops->test_and_add(a, cells);
}

/*
 * The one-key calls and the fused batch of a layout whose keys go through the cell
 * operations PLAN, QUERY, ADD and TEST_AND_ADD (once_cell_ops): PREFIX_query,
 * PREFIX_add, PREFIX_test_and_add and PREFIX_batch, for its ops table.  Each is the
 * shared loop specialized, at compile time, to that layout's cells (their table,
 * PREFIX_cells, is a static const the compiler sees through).
 */
#define ONCE_ARRAY_CELL_CALLS(PREFIX, PLAN, QUERY, ADD, TEST_AND_ADD)                         \
    static const once_cell_ops PREFIX##_cells = {                                              \
        .plan = PLAN,                                                                          \
        .query = QUERY,                                                                        \
        .add = ADD,                                                                            \
        .test_and_add = TEST_AND_ADD,                                                          \
    };                                                                                         \
    static bool PREFIX##_query(const once_filter *f, const once_hash *h, uint64_t now_ms)     \
    {                                                                                          \
        (void)now_ms;                                                                          \
        return once_array_cell_one((once_filter *)f, h, ONCE_OP_QUERY, &PREFIX##_cells);      \
    }                                                                                          \
    static once_status PREFIX##_add(once_filter *f, const once_hash *h, uint64_t now_ms)      \
    {                                                                                          \
        (void)now_ms;                                                                          \
        once_array_cell_one(f, h, ONCE_OP_ADD, &PREFIX##_cells);                               \
        return ONCE_OK;                                                                        \
    }                                                                                          \
    static once_status PREFIX##_test_and_add(once_filter *f, const once_hash *h,              \
                                             uint64_t now_ms, bool *seen)                      \
    {                                                                                          \
        (void)now_ms;                                                                          \
        *seen = once_array_cell_one(f, h, ONCE_OP_TEST_AND_ADD, &PREFIX##_cells);              \
        return ONCE_OK;                                                                        \
    }                                                                                          \
    static once_status PREFIX##_batch(once_filter *f, const once_batch_items *items,          \
                                      size_t count, once_batch_op op, uint8_t *out,            \
                                      size_t *done)                                            \
    {                                                                                          \
        once_array_cell_batch(f, items, count, op, out, &PREFIX##_cells);                      \
        *done = count;                                                                         \
        return ONCE_OK;                                                                        \
    }

/*
 * The entries of an ops table that every array layout takes as they are from
 * static/array_filter.c: storage, geometry check, cardinality, memory and the saved
 * form.  A layout's table lists its own entries (type, geometry, probing, stats,
 * combine, load) and then this.
 */
#define ONCE_ARRAY_SHARED_OPS                                                                  \
    .destroy = once_array_destroy, .clear = once_array_clear,                                  \
    .same_geometry = once_array_same_geometry, .cardinality = once_array_cardinality,          \
    .cardinality_pair = once_array_cardinality_pair, .memory = once_array_memory,              \
    .saved_params_size = once_array_params_size,                                               \
    .saved_payload_size = once_array_payload_size, .save_params = once_array_save_params,      \
    .save_payload = once_array_save_payload

/* The cell operations of a bit array whose cells are bit indexes of the whole array
 * (standard, partitioned): what their own query and test_and_add do to the bits. */
static inline __attribute__((always_inline)) bool once_bits_query(const once_array_filter *a,
                                                                  const uint64_t *cells)
{
    for (uint32_t i = 0; i < a->hashes; i++)
        if (!once_bit_get(a->array, cells[i]))
            return false;
    return true;
}

static inline __attribute__((always_inline)) bool
once_bits_test_and_add(once_array_filter *a, const uint64_t *cells)
{
    bool all = true;
    for (uint32_t i = 0; i < a->hashes; i++) {
        uint64_t *word = &a->array[cells[i] >> 6];
        uint64_t bit = UINT64_C(1) << (cells[i] & 63);
        all &= (*word & bit) != 0;
        *word |= bit;
    }
    return all;
}

static inline __attribute__((always_inline)) void once_bits_add(once_array_filter *a,
                                                                const uint64_t *cells)
{
    (void)once_bits_test_and_add(a, cells);
}

#endif /* ONCE_STATIC_ARRAY_FILTER_H */
