/*
 * grow/scalable.c - the scalable Bloom filter: a chain of blocked filters, each larger and
 * stricter than the last, that grows with the stream instead of being sized for it
 * (Almeida, Baquero, Preguica, Hutchison, "Scalable Bloom Filters", Information
 * Processing Letters 101(6), 2007), with the semantics of RedisBloom's BF.* commands.
 *
 * Design
 *   The filter holds sub-filters F_0 .. F_{c-1}, oldest first.  F_i is planned for n_i
 *   keys at rate p_i:
 *       n_0 = capacity,            n_i = n_{i-1} * e    (e = expansion)
 *       p_0 = error * (1 - r),     p_i = p_{i-1} * r    (r = tightening, 0 < r < 1)
 *   (a non-scaling filter, e = 0, has only F_0, at p_0 = error).
 *   A key is present when any sub-filter holds it.  An insertion first tests every
 *   sub-filter (newest first, where most keys live) and inserts a key found in none
 *   into the newest only.  The newest is full when it holds n_i keys; the next
 *   insertion of a new key then adds F_{c} and goes there.  This is BF.ADD: a key
 *   already reported present is neither inserted nor counted, so `items` counts the
 *   keys the filter took as new.  A false positive therefore also suppresses an add,
 *   exactly as in RedisBloom: the new key is answered "already present", is not
 *   inserted (it needs no bits: it already tests present, and keeps doing so since
 *   bits are never cleared) and is not counted.  So `items` is the number of distinct
 *   keys added minus those that were false positives on their first add, an expected
 *   fraction of at most `error` of them; the sub-filters fill by keys actually taken.
 *
 * Error budget (Almeida et al., the compounded error probability of the series; the
 * paper is not in the project's paper set, so no section number is quoted)
 *   An absent key is a false positive when any sub-filter reports it, so with every
 *   F_i at its design load the rate is
 *       P = 1 - prod_i (1 - p_i)  <=  sum_i p_i  =  p_0 (1 + r + r^2 + ...)
 *         <  p_0 / (1 - r)  =  error
 *   for ANY number of sub-filters, hence p_0 = error * (1 - r): however far the filter
 *   grows, its compound rate stays below the requested one, but for the sub-filters
 *   held at the planner's floor (see Limits), which add at most 1e-15 each: at most
 *   64e-15, under a millionth of the smallest target a caller may ask for (1e-9).  The bound uses only the
 *   union bound, so it holds whatever the correlation between sub-filters (they all
 *   probe with the same 128-bit key hash).  p_i is the expected rate of F_i at n_i
 *   keys (the planner's exact formula for the blocked layout); one particular small
 *   sub-filter (tens of blocks) can realize a rate some percent above it, fixed for its
 *   life, so the bound is on the expected rate.  With RedisBloom's fixed r = 1/2 this is
 *   its documented choice of error/2 for the first sub-filter, halved again for each
 *   new one.  e = 1 keeps every sub-filter the size of the first (least memory when
 *   the final count is near the initial one); e = 2, the default, keeps the number of
 *   sub-filters logarithmic in the growth.
 *
 * Sub-filters
 *   Each F_i is an ordinary blocked filter (static/blocked.c: one cache line per key),
 *   geometry from the shared planner (once_plan(ONCE_BLOCKED, n_i, p_i)), used
 *   through its ops table with the key hash filter.c computed once, and, for batches,
 *   through the blocked layout's fused loop over the whole chain
 *   (once_blocked_chain_batch), which answers as the one-key calls do; its own
 *   once_filter fields record n_i (capacity), p_i (error) and the keys it took
 *   (items).  Saving writes, per sub-filter, (n_i, p_i, items, its params and payload
 *   lengths) followed by the blocked layout's own params, and the payloads one after
 *   another; loading goes back through the blocked loader for each.
 *
 * Limits (an insertion that would pass one fails with ONCE_ERR_FULL, nothing changed)
 *   - expansion 0 (non-scaling, RedisBloom's NONSCALING): never grows;
 *   - at most SCALABLE_MAX_FILTERS sub-filters; total capacity at most ONCE_MAX_CELLS;
 *   - p_i stops at the planner's floor, ONCE_MIN_PLANNED_ERROR (1e-15, where the blocked
 *     layout plans at k = 16 by a sum of positive terms): past it every sub-filter is
 *     planned at the floor and adds at most 1e-15 to the compounded rate, so that a
 *     filter grows until the memory cap or the count of sub-filters stops it, not its
 *     rate (with r = 1/2 and error 1e-3 the floor comes at the 40th sub-filter);
 *   - max_bytes (0 = none beyond the library's cell limit) caps once_bytes().
 *
 * Union (BF.MERGE)
 *   Two chains of the same series (expansion, tightening, and first sub-filter; the
 *   planner then makes every later F_i alike) and seed combine sub-filter by
 *   sub-filter: F_i := F_i OR F'_i, dst first growing to src's length.  Each key of
 *   either chain lives in the same F_i in both (an add places it by the chain's state,
 *   and both chains test every sub-filter first), so the union answers present for
 *   every key of either: no false negatives.  Its rate is that of the combined fills:
 *   a sub-filter holding two sets' keys is past its n_i, so the compound bound holds
 *   only for keys added after the union, which go to a sub-filter with room.  The
 *   counts keep the invariants: every sub-filter but the newest counts as full, and the
 *   newest holds the estimate of its distinct keys from its cells (paper 002, Theorem
 *   1), at least either side's count and at most n_i.  Growth past max_bytes refuses
 *   the union with dst unchanged.  Intersection is refused (ONCE_ERR_UNSUPPORTED): a
 *   key may sit in F_i of one chain and F_j of the other.  same_geometry means "of
 *   one series" (chains of any lengths); no pair estimate uses it.
 *
 * Invariants
 *   - 1 <= count <= SCALABLE_MAX_FILTERS, and count == 1 when non-scaling;
 *   - n_i and p_i follow the two progressions above exactly (p_i as computed here, so
 *     a loaded chain compares bit for bit);
 *   - every sub-filter but the newest is exactly full (items == n_i); the newest holds
 *     at most n_i, and at least one key unless it is the first;
 *   - base.items == sum of the sub-filters' items; base.capacity == sum of n_i;
 *   - each sub-filter's geometry reaches p_i at n_i (once_fpr_blocked <= p_i);
 *   - queries never change state; a failed insertion changes nothing.
 */
#include "static/array_filter.h"
#include "core/limits.h"
#include "math/blocked_rate.h"
#include "once_math.h"

#include <math.h>

/* The table at the end of this file, which the code above refers to. */
extern const once_filter_ops once_scalable_ops;

#define SCALABLE_MAX_FILTERS ONCE_SCALABLE_MAX_FILTERS
#define SCALABLE_MAX_EXPANSION 32768u /* as RedisBloom bounds its cuckoo expansion */
#define SCALABLE_DEFAULT_TIGHTENING 0.5

typedef struct scalable_filter {
    once_filter base;
    uint32_t expansion; /* e; 0 = non-scaling */
    double tightening;  /* r */
    uint64_t max_bytes; /* cap on once_bytes(); 0 = none */
    uint32_t count;
    once_filter *subs[SCALABLE_MAX_FILTERS]; /* oldest first */
} scalable_filter;

#define SCALABLE(f) ((scalable_filter *)(f))
#define CSCALABLE(f) ((const scalable_filter *)(f))

/* The first sub-filter's rate: what is left for the whole series to sum to `error`;
 * a non-scaling filter has no series after its one sub-filter, which takes all of
 * `error` (as RedisBloom's NONSCALING does).  One function, so that the loader
 * recomputes exactly what the constructor did. */
static double first_error(double error, double tightening, uint32_t expansion)
{
    return expansion == 0 ? error : error * (1.0 - tightening);
}

/* The next sub-filter's rate: the series', p_i = p_{i-1} r, until it reaches the
 * floor the planner can reach (ONCE_MIN_PLANNED_ERROR), then the floor: every
 * sub-filter past it adds at most 1e-15 to the compounded rate, so that growth stops at
 * a memory or count limit, not at a rate.  One function, for the loader too. */
static double next_error(double error, double tightening)
{
    double next = error * tightening;
    return next > ONCE_MIN_PLANNED_ERROR ? next : ONCE_MIN_PLANNED_ERROR;
}

static bool tightening_valid(double r)
{
    return isfinite(r) && r > 0.0 && r < 1.0;
}

static bool error_valid(double p)
{
    return isfinite(p) && p > 0.0 && p < 1.0;
}

static uint64_t scalable_memory(const once_filter *f)
{
    const scalable_filter *s = CSCALABLE(f);
    uint64_t total = sizeof *s;
    for (uint32_t i = 0; i < s->count; i++)
        total += s->subs[i]->ops->memory(s->subs[i]);
    return total;
}

static uint64_t scalable_memory_cap(const once_filter *f)
{
    return CSCALABLE(f)->max_bytes;
}

static void scalable_set_memory_cap(once_filter *f, uint64_t cap)
{
    SCALABLE(f)->max_bytes = cap; /* 0: none */
}

/* A blocked sub-filter planned for (capacity, error), with its design recorded. */
static once_status sub_new(once_filter **out, uint64_t capacity, double error, uint64_t max_bytes,
                           uint64_t memory_before)
{
    uint64_t bits;
    uint32_t hashes;
    once_status st = once_plan(ONCE_BLOCKED, capacity, error, &bits, &hashes);
    if (st != ONCE_OK)
        return st;
    /* memory_before is once_bytes before the sub-filter: its metadata is in it. */
    uint64_t sub_bytes = once_array_memory_for(once_words_for_bits(bits));
    if (!once_fits_cap(memory_before + sub_bytes, 0, max_bytes))
        return ONCE_ERR_TOO_LARGE;
    once_filter *sub = NULL;
    st = once_blocked_new(&sub, bits, hashes);
    if (st != ONCE_OK)
        return st;
    sub->capacity = capacity;
    sub->error = error;
    *out = sub;
    return ONCE_OK;
}

static void scalable_destroy(once_filter *f)
{
    scalable_filter *s = SCALABLE(f);
    for (uint32_t i = 0; i < s->count; i++)
        s->subs[i]->ops->destroy(s->subs[i]);
    once_free_memory(s);
}

static scalable_filter *scalable_alloc(uint32_t expansion, double tightening, uint64_t max_bytes)
{
    scalable_filter *s = once_calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    once_filter_init(&s->base, &once_scalable_ops);
    s->expansion = expansion;
    s->tightening = tightening;
    s->max_bytes = max_bytes;
    return s;
}

static once_status once_scalable_create(once_filter **out, const once_config *c)
{
    double tightening = c->tightening == 0.0 ? SCALABLE_DEFAULT_TIGHTENING : c->tightening;
    /* The geometry is planned per sub-filter: an explicit one has no meaning here. */
    if (c->bits != 0 || c->hashes != 0 || c->capacity == 0 || !error_valid(c->error) ||
        !tightening_valid(tightening) || c->expansion > SCALABLE_MAX_EXPANSION)
        return ONCE_ERR_INVALID;
    if (c->capacity > ONCE_MAX_CELLS)
        return ONCE_ERR_TOO_LARGE;
    scalable_filter *s = scalable_alloc(c->expansion, tightening, c->max_bytes);
    if (s == NULL)
        return ONCE_ERR_NOMEM;
    once_status st = sub_new(&s->subs[0], c->capacity,
                             first_error(c->error, tightening, c->expansion),
                             c->max_bytes, sizeof *s);
    if (st != ONCE_OK) {
        once_free_memory(s);
        return st;
    }
    s->count = 1;
    s->base.capacity = c->capacity;
    s->base.error = c->error;
    *out = &s->base;
    return ONCE_OK;
}

/* Append the next sub-filter of the series, or say why not (nothing changed then). */
static once_status scalable_grow(scalable_filter *s)
{
    const once_filter *last = s->subs[s->count - 1];
    if (s->expansion == 0 || s->count == SCALABLE_MAX_FILTERS ||
        last->capacity > ONCE_MAX_CELLS / s->expansion)
        return ONCE_ERR_FULL;
    uint64_t capacity = last->capacity * s->expansion;
    if (capacity > ONCE_MAX_CELLS - s->base.capacity)
        return ONCE_ERR_FULL;
    once_filter *sub = NULL;
    once_status st = sub_new(&sub, capacity, next_error(last->error, s->tightening),
                             s->max_bytes, once_filter_bytes(&s->base));
    if (st != ONCE_OK) /* past the planner's reach, the library's limits or the cap */
        return st == ONCE_ERR_NOMEM ? st : ONCE_ERR_FULL;
    s->subs[s->count++] = sub;
    s->base.capacity += capacity;
    return ONCE_OK;
}

/* The next `keys` new keys fit the newest sub-filter's capacity, or that and the next
 * one's, which the limits and the cap leave room for (scalable_grow's checks). */
static bool scalable_can_take(const once_filter *f, uint64_t keys, uint64_t until_ms)
{
    (void)until_ms;
    const scalable_filter *s = CSCALABLE(f);
    const once_filter *last = s->subs[s->count - 1];
    uint64_t room = last->items < last->capacity ? last->capacity - last->items : 0;
    if (keys <= room)
        return true;
    if (s->expansion == 0 || s->count == SCALABLE_MAX_FILTERS ||
        last->capacity > ONCE_MAX_CELLS / s->expansion)
        return false;
    uint64_t capacity = last->capacity * s->expansion;
    if (capacity > ONCE_MAX_CELLS - s->base.capacity || keys - room > capacity)
        return false;
    uint64_t bits;
    uint32_t hashes;
    if (once_plan(ONCE_BLOCKED, capacity, next_error(last->error, s->tightening), &bits,
                  &hashes) != ONCE_OK)
        return false;
    uint64_t sub_bytes = once_array_memory_for(once_words_for_bits(bits));
    return once_fits_cap(once_filter_bytes(&s->base) + sub_bytes, 0, s->max_bytes);
}

/* ------------------------------------------------------------- operations */

static bool scalable_query(const once_filter *f, const once_hash *h, uint64_t now_ms)
{
    const scalable_filter *s = CSCALABLE(f);
    for (uint32_t i = s->count; i-- > 0;)
        if (s->subs[i]->ops->query(s->subs[i], h, now_ms))
            return true;
    return false;
}

static once_status scalable_test_and_add(once_filter *f, const once_hash *h, uint64_t now_ms,
                                         bool *seen)
{
    scalable_filter *s = SCALABLE(f);
    if (scalable_query(f, h, now_ms)) {
        *seen = true;
        return ONCE_OK;
    }
    once_filter *newest = s->subs[s->count - 1];
    if (newest->items >= newest->capacity) {
        once_status st = scalable_grow(s);
        if (st != ONCE_OK)
            return st;
        newest = s->subs[s->count - 1];
    }
    once_status st = newest->ops->add(newest, h, now_ms);
    if (st != ONCE_OK)
        return st;
    newest->items++;
    *seen = false;
    return ONCE_OK;
}

/*
 * The fused batch (static/blocked.c's chain loop): queries, and test-and-adds until the
 * newest sub-filter is full; then the chain grows, as scalable_test_and_add would at
 * that key, and the loop goes on from it.  ADD is not asked here: an insertion tests
 * first (add_tests_first), which api/batch.c runs as TEST_AND_ADD.
 */
static once_status scalable_batch(once_filter *f, const once_batch_items *items, size_t count,
                                  once_batch_op op, uint8_t *out, size_t *done)
{
    scalable_filter *s = SCALABLE(f);
    uint64_t taken = 0;
    if (op == ONCE_OP_QUERY) { /* reads only: several threads may query at once */
        (void)once_blocked_chain_batch(s->subs, s->count, items, count, op, out, 0, &taken);
        *done = count;
        return ONCE_OK;
    }
    once_batch_items rest = *items;
    size_t at = 0;
    for (;;) {
        once_filter *newest = s->subs[s->count - 1];
        uint64_t room = newest->items < newest->capacity ? newest->capacity - newest->items : 0;
        size_t n = once_blocked_chain_batch(s->subs, s->count, &rest, count - at, op, out + at,
                                            room, &taken);
        newest->items += taken;
        at += n;
        if (at == count)
            break;
        once_status st = scalable_grow(s); /* the key at `at` is new, and the newest full */
        if (st != ONCE_OK) {
            *done = at;
            return st;
        }
        rest = once_items_from(items, at);
    }
    *done = count;
    return ONCE_OK;
}

/* Back to the first sub-filter, empty: the state once_create built. */
static void scalable_clear(once_filter *f)
{
    scalable_filter *s = SCALABLE(f);
    while (s->count > 1) {
        once_filter *sub = s->subs[--s->count];
        sub->ops->destroy(sub);
        s->subs[s->count] = NULL;
    }
    s->subs[0]->ops->clear(s->subs[0]);
    s->subs[0]->items = 0;
    s->base.capacity = s->subs[0]->capacity;
}

/* Chains of one series: every sub-filter both have is alike (and then so would every
 * later one be: the planner is deterministic). */
static bool scalable_same_geometry(const once_filter *x, const once_filter *y)
{
    const scalable_filter *a = CSCALABLE(x), *b = CSCALABLE(y);
    if (a->expansion != b->expansion || a->tightening != b->tightening)
        return false;
    for (uint32_t i = 0; i < a->count && i < b->count; i++) {
        const once_filter *p = a->subs[i], *q = b->subs[i];
        if (p->capacity != q->capacity || p->error != q->error || !p->ops->same_geometry(p, q))
            return false;
    }
    return true;
}

/* dst |= src for chains of one series (see "Union" above). */
static once_status scalable_combine(once_filter *dst, const once_filter *src, once_combine_op op)
{
    if (op != ONCE_COMBINE_UNION)
        return ONCE_ERR_UNSUPPORTED;
    scalable_filter *d = SCALABLE(dst);
    const scalable_filter *s = CSCALABLE(src);
    uint32_t before = d->count;
    uint64_t newest_items_before = d->subs[before - 1]->items;
    while (d->count < s->count) {
        once_status st = scalable_grow(d);
        if (st != ONCE_OK) {
            while (d->count > before) {
                once_filter *sub = d->subs[--d->count];
                d->base.capacity -= sub->capacity;
                sub->ops->destroy(sub);
                d->subs[d->count] = NULL;
            }
            return st;
        }
    }
    for (uint32_t i = 0; i < s->count; i++) {
        once_status st = d->subs[i]->ops->combine(d->subs[i], s->subs[i], ONCE_COMBINE_UNION);
        if (st != ONCE_OK) /* the blocked layout's OR does not fail */
            return st;
    }
    uint32_t newest = d->count - 1;
    uint64_t items = 0;
    for (uint32_t i = 0; i < newest; i++) {
        d->subs[i]->items = d->subs[i]->capacity;
        items += d->subs[i]->items;
    }
    once_filter *last = d->subs[newest];
    uint64_t low = newest + 1 == before ? newest_items_before : 0;
    if (newest < s->count && s->subs[newest]->items > low)
        low = s->subs[newest]->items;
    once_cardinality c;
    if (last->ops->cardinality(last, 0, 0.5, &c) == ONCE_OK && c.estimate > (double)low)
        low = c.estimate >= (double)last->capacity ? last->capacity : (uint64_t)(c.estimate + 0.5);
    /* A newest sub-filter after the first holds at least one key (the loader's rule). */
    last->items = low > last->capacity ? last->capacity : low == 0 && newest > 0 ? 1 : low;
    d->base.items = items + last->items;
    return ONCE_OK;
}

static void scalable_stats(const once_filter *f, once_stats *st)
{
    const scalable_filter *s = CSCALABLE(f);
    double all_clear = 1.0, design_clear = 1.0;
    st->bits = 0;
    st->bits_set = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        once_stats sub;
        memset(&sub, 0, sizeof sub);
        s->subs[i]->ops->stats(s->subs[i], &sub);
        st->bits += sub.bits;
        st->bits_set += sub.bits_set;
        all_clear *= 1.0 - sub.fpr_estimate;
        design_clear *= 1.0 - s->subs[i]->error;
        st->hashes = sub.hashes; /* an insertion probes the newest sub-filter's k */
    }
    st->fpr_estimate = 1.0 - all_clear;
    /* The compound rate once every current sub-filter is full: below `error`. */
    st->design_fpr = 1.0 - design_clear;
    st->filters = s->count;
    st->expansion = s->expansion;
}

/*
 * Distinct keys (paper 002, Theorem 1, per sub-filter): an add tests every sub-filter
 * first, so each key lives in exactly one and the count is the sum of the
 * sub-filters' estimates.  The interval is the sum of the sub-filters' intervals at
 * 1 - (1 - c)/count each, so that all hold together with probability c (union bound).
 */
static once_status scalable_sub_cells(const void *ctx, uint32_t i, uint64_t *set,
                                      once_occupancy *o)
{
    return once_array_cells(((const scalable_filter *)ctx)->subs[i], set, o);
}

static once_status scalable_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                        once_cardinality *out)
{
    (void)now_ms;
    const scalable_filter *s = CSCALABLE(f);
    return once_card_sum(s->count, scalable_sub_cells, s, confidence, out);
}

/* ---------------------------------------------------------- serialization */

/*
 * Parameters: SCALABLE_HEAD words, then per sub-filter SUB_RECORD words followed by
 * that sub-filter's own (blocked layout) parameters.  Payload: the sub-filters'
 * payloads, oldest first.
 */
enum { P_EXPANSION, P_TIGHTENING, P_MAX_BYTES, P_FILTERS, SCALABLE_HEAD };
enum { S_CAPACITY, S_ERROR, S_ITEMS, S_PARAMS_BYTES, S_PAYLOAD_BYTES, SUB_RECORD };
/* The whole chain's parameters fit the format's bound (api/format.c, 4096 bytes) with
 * the blocked layout's two words per sub-filter. */
_Static_assert((SCALABLE_HEAD + SCALABLE_MAX_FILTERS * (SUB_RECORD + 2)) * 8 <= 4096,
               "scalable parameters fit the format");

static double bits_f64(uint64_t bits)
{
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static uint64_t scalable_params_size(const once_filter *f)
{
    const scalable_filter *s = CSCALABLE(f);
    uint64_t total = SCALABLE_HEAD * 8;
    for (uint32_t i = 0; i < s->count; i++)
        total += SUB_RECORD * 8 + s->subs[i]->ops->saved_params_size(s->subs[i]);
    return total;
}

static uint64_t scalable_payload_size(const once_filter *f)
{
    const scalable_filter *s = CSCALABLE(f);
    uint64_t total = 0;
    for (uint32_t i = 0; i < s->count; i++)
        total += s->subs[i]->ops->saved_payload_size(s->subs[i]);
    return total;
}

static void scalable_save_params(const once_filter *f, once_writer *w)
{
    const scalable_filter *s = CSCALABLE(f);
    once_writer_u64(w, s->expansion);
    once_writer_f64(w, s->tightening);
    once_writer_u64(w, s->max_bytes);
    once_writer_u64(w, s->count);
    for (uint32_t i = 0; i < s->count; i++) {
        const once_filter *sub = s->subs[i];
        once_writer_u64(w, sub->capacity);
        once_writer_f64(w, sub->error);
        once_writer_u64(w, sub->items);
        once_writer_u64(w, sub->ops->saved_params_size(sub));
        once_writer_u64(w, sub->ops->saved_payload_size(sub));
        sub->ops->save_params(sub, w);
    }
}

static void scalable_save_payload(const once_filter *f, once_writer *w)
{
    const scalable_filter *s = CSCALABLE(f);
    for (uint32_t i = 0; i < s->count; i++)
        s->subs[i]->ops->save_payload(s->subs[i], w);
}

/* One sub-filter's record, located and checked against the chain before anything is
 * allocated. */
typedef struct sub_record {
    uint64_t v[SUB_RECORD];
    const uint8_t *params;
    const uint8_t *payload;
} sub_record;

/* The record of sub-filter i checked against its predecessor (NULL for the first) and
 * the chain's progressions; the first one's rate is checked against the header's error
 * in scalable_check_header, which is the first place that error is known. */
static bool record_valid(const uint64_t *v, const uint64_t *prev, bool newest, uint64_t expansion,
                         double tightening)
{
    double error = bits_f64(v[S_ERROR]);
    if (v[S_CAPACITY] == 0 || v[S_CAPACITY] > ONCE_MAX_CELLS || !error_valid(error) ||
        v[S_ITEMS] > v[S_CAPACITY] || (!newest && v[S_ITEMS] != v[S_CAPACITY]) ||
        (newest && prev != NULL && v[S_ITEMS] == 0))
        return false;
    if (prev == NULL)
        return true;
    return expansion != 0 && prev[S_CAPACITY] <= ONCE_MAX_CELLS / expansion &&
           v[S_CAPACITY] == prev[S_CAPACITY] * expansion &&
           error == next_error(bits_f64(prev[S_ERROR]), tightening);
}

static once_status scalable_load(once_filter **out, const uint8_t *params, size_t params_len,
                                 const uint8_t *payload, size_t payload_len)
{
    once_reader r = {params, params_len, 0};
    uint64_t head[SCALABLE_HEAD];
    for (int i = 0; i < SCALABLE_HEAD; i++)
        head[i] = once_reader_u64(&r);
    double tightening = bits_f64(head[P_TIGHTENING]);
    if (r.failed || head[P_EXPANSION] > SCALABLE_MAX_EXPANSION || !tightening_valid(tightening) ||
        head[P_FILTERS] == 0 || head[P_FILTERS] > SCALABLE_MAX_FILTERS ||
        (head[P_EXPANSION] == 0 && head[P_FILTERS] != 1))
        return ONCE_ERR_CORRUPT;
    uint32_t count = (uint32_t)head[P_FILTERS];

    /* First pass: every record, the partition of params and payload, the totals and
     * the memory cap, all before a single allocation. */
    sub_record rec[SCALABLE_MAX_FILTERS];
    uint64_t capacity = 0, payload_used = 0, memory = sizeof(scalable_filter);
    for (uint32_t i = 0; i < count; i++) {
        for (int j = 0; j < SUB_RECORD; j++)
            rec[i].v[j] = once_reader_u64(&r);
        const uint64_t *v = rec[i].v;
        if (r.failed || !record_valid(v, i ? rec[i - 1].v : NULL, i + 1 == count,
                                      head[P_EXPANSION], tightening))
            return ONCE_ERR_CORRUPT;
        capacity += v[S_CAPACITY];
        if (capacity > ONCE_MAX_CELLS || v[S_PARAMS_BYTES] % 8 != 0 ||
            v[S_PARAMS_BYTES] > r.left || v[S_PAYLOAD_BYTES] > payload_len - payload_used)
            return ONCE_ERR_CORRUPT;
        rec[i].params = r.p;
        rec[i].payload = payload + payload_used;
        r.p += v[S_PARAMS_BYTES];
        r.left -= (size_t)v[S_PARAMS_BYTES];
        payload_used += v[S_PAYLOAD_BYTES];
        memory += sizeof(once_array_filter) + once_aligned_footprint(v[S_PAYLOAD_BYTES]);
    }
    if (r.left != 0 || payload_used != payload_len ||
        (head[P_MAX_BYTES] != 0 && memory > head[P_MAX_BYTES]))
        return ONCE_ERR_CORRUPT;

    /* Second pass: each sub-filter through the blocked loader, which checks its own
     * parameters and that its payload has exactly the size they imply. */
    scalable_filter *s = scalable_alloc((uint32_t)head[P_EXPANSION], tightening, head[P_MAX_BYTES]);
    if (s == NULL)
        return ONCE_ERR_NOMEM;
    for (uint32_t i = 0; i < count; i++) {
        const uint64_t *v = rec[i].v;
        once_filter *sub = NULL;
        once_status st = once_blocked_ops.load(&sub, rec[i].params, (size_t)v[S_PARAMS_BYTES],
                                               rec[i].payload, (size_t)v[S_PAYLOAD_BYTES]);
        if (st != ONCE_OK) {
            scalable_destroy(&s->base);
            return st;
        }
        s->subs[s->count++] = sub;
        sub->capacity = v[S_CAPACITY];
        sub->error = bits_f64(v[S_ERROR]);
        sub->items = v[S_ITEMS];
        /* The geometry must reach the sub-filter's rate at its capacity, as planned; this
         * also ties the next growth's size to what this file really holds. */
        if (once_fpr_blocked(CARRAY(sub)->cells, CARRAY(sub)->hashes, sub->capacity) >
            sub->error) {
            scalable_destroy(&s->base);
            return ONCE_ERR_CORRUPT;
        }
    }
    s->base.capacity = capacity;
    *out = &s->base;
    return ONCE_OK;
}

/* The header's items, capacity and error (set by api/format.c after the load) against
 * the chain: the counts and capacities sum, and the first rate is first_error's. */
static bool scalable_check_header(const once_filter *f)
{
    const scalable_filter *s = CSCALABLE(f);
    uint64_t items = 0, capacity = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        items += s->subs[i]->items;
        capacity += s->subs[i]->capacity;
    }
    return f->items == items && f->capacity == capacity && error_valid(f->error) &&
           s->subs[0]->error == first_error(f->error, s->tightening, s->expansion);
}

const once_filter_ops once_scalable_ops = {
    .type = ONCE_SCALABLE,
    .blocked_probe = true,
    .can_take = scalable_can_take,
    .create = once_scalable_create,
    .add_tests_first = true,
    .destroy = scalable_destroy,
    .query = scalable_query,
    .add = NULL, /* add_tests_first: filter.c inserts through test_and_add */
    .test_and_add = scalable_test_and_add,
    .prefetch = NULL, /* with `batch` */
    .batch = scalable_batch,
    .remove = NULL,
    .clear = scalable_clear,
    .same_geometry = scalable_same_geometry,
    .combine = scalable_combine,
    .combine_sets_items = true,
    .stats = scalable_stats,
    .cardinality = scalable_cardinality,
    .cardinality_pair = NULL,
    .memory = scalable_memory,
    .memory_cap = scalable_memory_cap,
    .set_memory_cap = scalable_set_memory_cap,
    .saved_params_size = scalable_params_size,
    .saved_payload_size = scalable_payload_size,
    .save_params = scalable_save_params,
    .save_payload = scalable_save_payload,
    .load = scalable_load,
    .check_header = scalable_check_header,
};

once_status once_scalable_shape(const once_filter *f, uint32_t *filters, uint32_t *expansion)
{
    if (f == NULL || filters == NULL || expansion == NULL)
        return ONCE_ERR_INVALID;
    if (f->ops != &once_scalable_ops)
        return ONCE_ERR_UNSUPPORTED;
    *filters = CSCALABLE(f)->count;
    *expansion = CSCALABLE(f)->expansion;
    return ONCE_OK;
}
