/*
 * static/counting.c - the counting Bloom filter: m 4-bit counters, k probes, delete.
 *
 * Design
 *   The layout of the standard filter with a 4-bit counter in place of each bit
 *   (16 counters per 64-bit word).  Add increments the k counters the shared probe
 *   sequence names (twice if it names one twice); delete decrements them.  A key
 *   tests present when all its counters are non-zero, so the false-positive rate is
 *   the standard filter's Eq. 1.  Four bits overflow with probability about
 *   1.37e-15 * m at the optimal load (Fan et al.), so saturation is rare but handled.
 *
 * Invariants
 *   - a counter saturates at 15 and a saturated counter is never decremented: its true
 *     count is unknown, and decrementing it could take it to zero under a key still
 *     present (a false negative).  The price is a cell that stays set;
 *   - delete first checks that every counter can give up what the key added (a
 *     counter named twice must be at least 2); if one cannot, the key was certainly
 *     never added, the delete is refused with ONCE_ERR_NOT_PRESENT and nothing changes.
 */
#include "static/array_filter.h"
#include "core/limits.h"


#define COUNTER_MAX 15u

once_status once_counting_new(once_filter **out, uint64_t counters, uint32_t hashes)
{
    return once_array_new(out, &once_counting_ops, counters, 4, hashes);
}

static inline unsigned counter_get(const uint64_t *array, uint64_t i)
{
    return (unsigned)(array[i >> 4] >> ((i & 15) * 4)) & 15u;
}

static inline void counter_put(uint64_t *array, uint64_t i, unsigned v)
{
    unsigned shift = (unsigned)(i & 15) * 4;
    array[i >> 4] = (array[i >> 4] & ~(UINT64_C(15) << shift)) | (uint64_t)v << shift;
}

unsigned once_counting_counter(const once_filter *f, uint64_t cell)
{
    return counter_get(CARRAY(f)->array, cell);
}

/* The k counter positions of a key. */
static void counting_positions(const once_array_filter *a, const once_hash *h, uint64_t *pos)
{
    once_probe p = once_probe_start(h, once_filter_probe(&a->base));
    for (uint32_t i = 0; i < a->hashes; i++)
        pos[i] = once_probe_next(&p, a->cells);
}

static uint32_t counting_key_cells(const once_filter *f, const once_hash *h, uint64_t *out)
{
    counting_positions(CARRAY(f), h, out);
    return CARRAY(f)->hashes;
}

/* Are the key's k counters (its cells, in probe order) all non-zero?  Stops at the
 * first zero, which for an absent key reads about two lines. */
static inline __attribute__((always_inline)) bool counting_holds(const once_array_filter *a,
                                                                 const uint64_t *cells)
{
    for (uint32_t i = 0; i < a->hashes; i++)
        if (counter_get(a->array, cells[i]) == 0)
            return false;
    return true;
}

/* One increment of counter `pos`, saturating: 1 added at the counter's place in its
 * word when it is below 15, which cannot carry into the next counter.  In probe order,
 * a counter named twice goes up twice. */
static inline __attribute__((always_inline)) void add_at(once_array_filter *a, uint64_t pos)
{
    uint64_t *word = &a->array[pos >> 4];
    unsigned shift = (unsigned)(pos & 15) * 4;
    *word += (uint64_t)(((*word >> shift) & 15u) < COUNTER_MAX) << shift;
}

static inline __attribute__((always_inline)) void add_cells(once_array_filter *a,
                                                            const uint64_t *cells)
{
    for (uint32_t i = 0; i < a->hashes; i++)
        add_at(a, cells[i]);
}

bool once_counting_holds_cells(const once_filter *f, const uint64_t *cells)
{
    return counting_holds(CARRAY(f), cells);
}

void once_counting_add_cells(once_filter *f, const uint64_t *cells)
{
    add_cells(ARRAY(f), cells);
}

static once_status counting_remove(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)now_ms;
    once_array_filter *a = ARRAY(f);
    uint64_t pos[ONCE_MAX_HASHES];
    counting_positions(a, h, pos);
    for (uint32_t i = 0; i < a->hashes; i++) {
        unsigned c = counter_get(a->array, pos[i]);
        if (c == COUNTER_MAX)
            continue;
        unsigned needed = 1;
        for (uint32_t j = 0; j < i; j++)
            needed += pos[j] == pos[i];
        if (c < needed)
            return ONCE_ERR_NOT_PRESENT;
    }
    for (uint32_t i = 0; i < a->hashes; i++) {
        unsigned c = counter_get(a->array, pos[i]);
        if (c != COUNTER_MAX)
            counter_put(a->array, pos[i], c - 1);
    }
    return ONCE_OK;
}

/* The batch loop's cell operations (static/array_filter.h): a test-and-add there has
 * every line requested already. */
static void counting_plan(const once_array_filter *a, const once_hash *h, uint64_t *cells)
{
    once_probe p = once_probe_start(h, once_filter_probe(&a->base));
    for (uint32_t i = 0; i < a->hashes; i++) {
        cells[i] = once_probe_next(&p, a->cells);
        once_prefetch_write(&a->array[cells[i] >> 4]);
    }
}

static bool counting_cells_query(const once_array_filter *a, const uint64_t *cells)
{
    return counting_holds(a, cells);
}

static bool counting_cells_test_and_add(once_array_filter *a, const uint64_t *cells)
{
    bool seen = counting_holds(a, cells);
    if (!seen)
        add_cells(a, cells);
    return seen;
}

/* The one-key calls go through the same operations (once_array_cell_one): a key's
 * cells computed once and all their lines requested before any is read, one round of
 * misses where a test followed by an insertion waited for the test's and then the
 * insertion's.  The test keeps its early exit: reading every counter first costs more,
 * as long as most keys are new. */
ONCE_ARRAY_CELL_CALLS(counting, counting_plan, counting_cells_query, add_cells,
                      counting_cells_test_and_add)

/* Union adds counts (saturating), intersection keeps the smaller: the counter-wise
 * analogues of OR and AND, which keep "non-zero" meaning "some key may be here". */
static once_status counting_combine(once_filter *dst, const once_filter *src, once_combine_op op)
{
    once_array_filter *d = ARRAY(dst);
    const once_array_filter *s = CARRAY(src);
    for (uint64_t i = 0; i < d->cells; i++) {
        unsigned x = counter_get(d->array, i), y = counter_get(s->array, i);
        unsigned v;
        if (op == ONCE_COMBINE_UNION)
            v = x + y > COUNTER_MAX ? COUNTER_MAX : x + y;
        else
            v = x < y ? x : y;
        counter_put(d->array, i, v);
    }
    return ONCE_OK;
}

static once_status counting_load(once_filter **out, const uint8_t *params, size_t params_len,
                                 const uint8_t *payload, size_t payload_len)
{
    return once_array_load(out, params, params_len, payload, payload_len, 4, once_counting_new);
}

const once_filter_ops once_counting_ops = {
    .type = ONCE_COUNTING,
    .can_take = once_never_full,
    .new_geometry = once_counting_new,
    .query = counting_query,
    .add = counting_add,
    .test_and_add = counting_test_and_add,
    .prefetch = NULL,
    .batch = counting_batch,
    .remove = counting_remove,
    .positions = counting_key_cells,
    .combine = counting_combine,
    .stats = once_array_stats,
    .load = counting_load,
    ONCE_ARRAY_SHARED_OPS,
};
