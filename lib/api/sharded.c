/*
 * api/sharded.c - one filter in P shards: P filters of one structure, each key in one
 * of them, so that the shards' answers can run on P threads side by side.
 *
 * Why
 *   A filter answers its keys one after another: each test-and-add reads what the
 *   earlier ones wrote.  The answers of a stream therefore run on one thread, however
 *   many the machine has, and for a structure whose answer is a hundred nanoseconds a
 *   key (the tagged window: two cache lines a table, a cuckoo walk for a new key) that
 *   thread is the run's pace.  Keys of different shards share no cell, so a batch's
 *   keys, gathered by shard, are answered by P independent loops, each in the order its
 *   keys came: every key meets all the earlier occurrences of itself in its shard, in
 *   order, and the first is the one delivered, exactly as in one filter.  The answers
 *   are the same whichever threads run the shards, and in whatever order they finish.
 *
 * Layout
 *   A key goes to shard reduce(mix(lo ^ hi), P) of its digest (lo, hi).  The shards
 *   use lo and hi as any filter does, so the choice must not repeat their reductions
 *   of lo or of hi alone: mixed, the shard is independent of the cells a key takes in
 *   it.  Each shard is the structure built for capacity / P keys (rounded up) at the
 *   target rate and for its share of the memory cap; a key asks one shard, so the
 *   filter's false-positive rate is a shard's, the target.  P is fixed when the filter
 *   is built and saved with it: the answers do not depend on how many threads run.
 *
 * Time
 *   Time windows keep one clock for the stream, here, not the shards': a shard that
 *   gets no key for a while would otherwise lag, and a late event in one shard is not
 *   late in another.  A write at t is admitted against this clock L and the bound
 *   (once.h, "Event time") and is written at max(L, t), which is what one window does
 *   with a late event (it tags it at its clock), so a shard never sees a time before
 *   its own clock and never a jump the stream did not make; reads ask at max(L, now).
 *   A shard's own bound is none: the jumps are checked here.
 *   With a lag H (the tagged window's, once_config.lag_ms; the shards have the same) a
 *   write at t is passed at max(L - H, t) instead, and a read within the lag at t: what
 *   one window judges a late event at.  A shard's clock L' is at most L, so that time
 *   is at least L' - H, within the shard's own lag (or past L', moving its clock), and
 *   the shard judges the key at the same time, by the same entries of that key (all in
 *   it), as one window would: the answers are one window's, false positives aside.
 *
 * Batches
 *   A batch is taken in rounds of SHARD_ROUND keys: each key's digest, shard and time
 *   (the clock as of that key) first, in order, stopping at a time the clock refuses;
 *   then the keys gathered by shard (a counting sort, stable); then each shard's keys
 *   through its own batch loop, as tasks of the filter's executor (once_advanced.h,
 *   once_set_executor), or on the calling thread without one; then the answers put back
 *   in the batch's order.  A write batch forks only when no shard can refuse one of its
 *   keys for memory (once_filter_ops.can_take): a shard that refused a key would have
 *   written keys after it in the others, which the batch then reports not done.
 *   Otherwise, and for a structure that cannot say (can_take NULL), the round runs key
 *   by key in the batch's order, which is exactly the one-key calls.  The write batches
 *   keep their round's buffer in the filter (round_for says why), counted in its bytes.  An allocation
 *   failure inside a forked round is the one refusal no shard can foresee: the batch
 *   then reports done up to the first key refused, and the other shards may hold later
 *   keys of that round.
 *
 * Saved form (type ONCE_SAVED_SHARDED in the header)
 *   Params: the structure's type, P, the memory cap, the clock (started, L) and the
 *   jump bound, eight bytes each.  Payload: each shard in turn, as its items, design
 *   capacity and error, its params' length and bytes, its payload's length and bytes,
 *   loaded by the structure's own loader.  The shards share the header's seed and
 *   format.
 *
 * Invariants
 *   - every shard is of the same structure, built with the same seed and format; none
 *     is itself sharded, a count window (its last N keys are the stream's, not a
 *     shard's) or a slice;
 *   - time windows: no shard's clock is past L, and each shard's bound is none;
 *   - the filter's items are the API's count (api/filter.c); each shard counts its own;
 *   - its bytes are its own, its shards' and its kept buffer's, within the cap: each
 *     shard holds a P-th of what the cap leaves past the filter's own struct.
 */
#include "api/api.h"
#include "core/alloc.h"
#include "core/config.h"
#include "math/cardinality.h"

#include <string.h>

extern const once_filter_ops once_sharded_ops, once_sharded_growing_ops,
    once_sharded_testing_ops, once_sharded_timed_ops;

#define SHARD_ROUND 4096u /* keys gathered at a time */
#define SHARD_MIX UINT64_C(0xbf58476d1ce4e5b9)

typedef struct sharded_filter {
    once_filter base;
    once_type inner;       /* the shards' structure */
    uint32_t count;        /* P */
    once_filter **shards;
    uint64_t max_bytes;    /* the cap of all shards together (0: none) */
    uint64_t default_cap;  /* the structure's default cap, for a cap set to 0 (not saved) */
    bool started;          /* time windows: the clock */
    uint64_t latest;
    once_executor executor; /* not saved: run = NULL runs tasks on the calling thread */
    struct shard_round *round; /* the write batches' buffer, kept (NULL: none yet) */
    size_t round_room;         /* the keys it holds */
} sharded_filter;

#define SHARDED(f) ((sharded_filter *)(f))
#define CSHARDED(f) ((const sharded_filter *)(f))

static inline uint32_t shard_among(const once_hash *h, uint32_t count)
{
    uint64_t x = (h->lo ^ h->hi) * SHARD_MIX;
    x ^= x >> 31;
    return (uint32_t)once_reduce(x, count);
}

static inline uint32_t shard_of(const sharded_filter *s, const once_hash *h)
{
    return shard_among(h, s->count);
}

uint32_t once_shard_of(const once_digest *digest, uint32_t shards)
{
    return digest != NULL && shards > 1 ? shard_among(digest, shards) : 0;
}

static bool is_sharded(const once_filter *f)
{
    return f->ops == &once_sharded_ops || f->ops == &once_sharded_growing_ops ||
           f->ops == &once_sharded_testing_ops || f->ops == &once_sharded_timed_ops;
}

static bool timed(const sharded_filter *s)
{
    return s->base.ops == &once_sharded_timed_ops;
}

/* The shards' lag allowance H (0: none), read from a shard, only for a late event:
 * the filter's struct keeps the size its saved caps were shared with. */
static uint64_t lag_of(const sharded_filter *s)
{
    const once_filter *first = s->shards[0];
    return first->ops->lag != NULL ? first->ops->lag(first) : 0;
}

/* The time the shards are asked at for an event at t: the clock's, for a late one (a
 * read at max(L, now), a late write made at the clock), but t within a lag H. */
static inline uint64_t at_clock(const sharded_filter *s, uint64_t t)
{
    if (!timed(s) || !s->started || t >= s->latest)
        return t;
    return s->latest - t <= lag_of(s) ? t : s->latest;
}

/* The time a write at t is passed to its shard at, the clock being `latest` after it:
 * max(L - H, t) (the clock's without a lag). */
static inline uint64_t write_at(const sharded_filter *s, uint64_t latest, uint64_t t)
{
    if (t >= latest)
        return t;
    uint64_t lag = lag_of(s);
    return latest - t <= lag ? t : latest - lag;
}

/* ----------------------------------------------------------------- one key */

static once_status sharded_write(once_filter *f, const once_hash *h, uint64_t now_ms,
                                 once_batch_op op, bool *seen)
{
    sharded_filter *s = SHARDED(f);
    uint64_t at = s->latest; /* the clock after the write (time windows) */
    bool started = s->started;
    if (!timed(s))
        at = now_ms;
    else if (!once_time_step(f->max_time_jump, &at, &started, now_ms))
        return ONCE_ERR_TIME;
    once_filter *shard = s->shards[shard_of(s, h)];
    uint64_t when = timed(s) ? write_at(s, at, now_ms) : at;
    once_batch_items items = {NULL, h, &when, 0};
    uint8_t answer = 0;
    size_t done = 0;
    once_status st = once_run_batch(shard, &items, 1, op, &answer, &done);
    if (st != ONCE_OK)
        return st;
    if (seen != NULL)
        *seen = answer != 0;
    if (timed(s)) {
        s->latest = at;
        s->started = true;
    }
    return ONCE_OK;
}

static once_status sharded_add(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    return sharded_write(f, h, now_ms, ONCE_OP_ADD, NULL);
}

static once_status sharded_test_and_add(once_filter *f, const once_hash *h, uint64_t now_ms,
                                        bool *seen)
{
    return sharded_write(f, h, now_ms, ONCE_OP_TEST_AND_ADD, seen);
}

static bool sharded_query(const once_filter *f, const once_hash *h, uint64_t now_ms)
{
    const sharded_filter *s = CSHARDED(f);
    const once_filter *shard = s->shards[shard_of(s, h)];
    return shard->ops->query(shard, h, at_clock(s, now_ms));
}

static once_status sharded_remove(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    sharded_filter *s = SHARDED(f);
    once_filter *shard = s->shards[shard_of(s, h)];
    if (shard->ops->remove == NULL)
        return ONCE_ERR_UNSUPPORTED;
    once_status st = shard->ops->remove(shard, h, now_ms);
    if (st == ONCE_OK && shard->items > 0)
        shard->items--;
    return st;
}

/* ------------------------------------------------------------------ batches */

/* One round of a batch, gathered by shard: the per-key arrays hold `room` keys. */
typedef struct shard_round {
    sharded_filter *s;
    once_batch_op op;
    size_t n;
    uint32_t start[ONCE_MAX_SHARDS + 1]; /* shard j's keys: [start[j], start[j + 1]) */
    uint32_t busy[ONCE_MAX_SHARDS];      /* the shards with keys, for the tasks */
    size_t done[ONCE_MAX_SHARDS];        /* by shard: its keys that took effect */
    once_status status[ONCE_MAX_SHARDS]; /* by shard */
    once_hash *placed;                   /* by place in the round */
    uint64_t *clock;                     /* by place: the time each key is made at */
    uint8_t *shard;                      /* by place (P <= 256) */
    once_hash *hashes;                   /* gathered */
    uint64_t *times;                     /* gathered */
    uint32_t *order;                     /* gathered position -> the key's place */
    uint8_t *answers;                    /* gathered */
} shard_round;

/* The bytes of a key in a round's arrays. */
#define ROUND_KEY_BYTES (2 * sizeof(once_hash) + 2 * sizeof(uint64_t) + sizeof(uint32_t) + 2)

static uint64_t round_bytes(size_t room)
{
    return sizeof(shard_round) + (uint64_t)room * ROUND_KEY_BYTES;
}

/* A round for up to `room` keys, its arrays after it in one block (NULL: no memory). */
static shard_round *round_new(size_t room)
{
    shard_round *r = once_malloc(sizeof *r + room * ROUND_KEY_BYTES);
    if (r == NULL)
        return NULL;
    uint8_t *p = (uint8_t *)(r + 1); /* the wider arrays first: each stays aligned */
    r->placed = (once_hash *)p;
    r->hashes = r->placed + room;
    r->clock = (uint64_t *)(r->hashes + room);
    r->times = r->clock + room;
    r->order = (uint32_t *)(r->times + room);
    r->shard = (uint8_t *)(r->order + room);
    r->answers = r->shard + room;
    return r;
}

static void shard_task(void *context, size_t index)
{
    shard_round *r = context;
    uint32_t j = r->busy[index];
    uint32_t from = r->start[j];
    once_batch_items items = {NULL, r->hashes + from, r->times + from, 0};
    r->status[j] = once_run_batch(r->s->shards[j], &items, r->start[j + 1] - from, r->op,
                                  r->answers + from, &r->done[j]);
}

/* Can every shard take its keys of the round without refusing one for memory, the
 * clock being `until` after the round? */
static bool round_fits(const shard_round *r, uint64_t until)
{
    const sharded_filter *s = r->s;
    if (r->op == ONCE_OP_QUERY)
        return true;
    for (uint32_t j = 0; j < s->count; j++) {
        uint64_t keys = r->start[j + 1] - r->start[j];
        const once_filter *shard = s->shards[j];
        if (keys != 0 && (shard->ops->can_take == NULL || !shard->ops->can_take(shard, keys, until)))
            return false;
    }
    return true;
}

/* The round's keys one by one, in order: the one-key calls. */
static once_status round_in_order(shard_round *r, uint8_t *out, size_t *done)
{
    for (size_t i = 0; i < r->n; i++) {
        once_batch_items one = {NULL, &r->placed[i], &r->clock[i], 0};
        uint8_t answer = 0;
        size_t took = 0;
        once_status st = once_run_batch(r->s->shards[r->shard[i]], &one, 1, r->op, &answer, &took);
        if (st != ONCE_OK) {
            *done = i;
            return st;
        }
        if (out != NULL)
            out[i] = answer;
    }
    *done = r->n;
    return ONCE_OK;
}

static once_status round_forked(shard_round *r, uint8_t *out, size_t *done)
{
    sharded_filter *s = r->s;
    size_t tasks = 0;
    for (uint32_t j = 0; j < s->count; j++) {
        r->status[j] = ONCE_OK;
        r->done[j] = r->start[j + 1] - r->start[j];
        if (r->start[j + 1] > r->start[j])
            r->busy[tasks++] = j;
    }
    /* Queries stay on the calling thread: they are read-only calls, which threads may
     * make at once (once.h, "Threads"), and an executor need not take two batches. */
    if (s->executor.run != NULL && tasks > 1 && r->op != ONCE_OP_QUERY)
        s->executor.run(s->executor.context, shard_task, r, tasks);
    else
        for (size_t t = 0; t < tasks; t++)
            shard_task(r, t);
    /* The first key refused, in the batch's order; the keys before it took effect. */
    size_t first = r->n;
    once_status st = ONCE_OK;
    for (uint32_t j = 0; j < s->count; j++) {
        if (r->status[j] == ONCE_OK)
            continue;
        size_t place = r->order[r->start[j] + r->done[j]];
        if (place < first) {
            first = place;
            st = r->status[j];
        }
    }
    if (out != NULL)
        for (size_t g = 0; g < r->n; g++)
            out[r->order[g]] = r->answers[g];
    *done = first;
    return st;
}

/* A round of at most SHARD_ROUND items from the batch's start. */
static once_status sharded_round(sharded_filter *s, shard_round *r, const once_batch_items *items,
                                 size_t count, once_batch_op op, uint8_t *out, size_t *done)
{
    bool clocked = timed(s) && op != ONCE_OP_QUERY;
    uint64_t latest = s->latest;
    bool started = s->started;
    size_t n = 0;
    once_status cut = ONCE_OK;
    memset(r->start, 0, sizeof r->start[0] * (s->count + 1));
    for (; n < count; n++) {
        uint64_t t = once_item_time(items, n);
        if (clocked) {
            if (!once_time_step(s->base.max_time_jump, &latest, &started, t)) {
                cut = ONCE_ERR_TIME;
                break;
            }
            t = write_at(s, latest, t);
        } else {
            t = at_clock(s, t);
        }
        once_hash h = once_item_hash(items, n);
        uint32_t j = shard_of(s, &h);
        r->placed[n] = h;
        r->shard[n] = (uint8_t)j;
        r->clock[n] = t;
        r->start[j + 1]++;
    }
    r->s = s;
    r->op = op;
    r->n = n;
    for (uint32_t j = 0; j < s->count; j++)
        r->start[j + 1] += r->start[j];
    once_status st;
    if (round_fits(r, latest)) {
        uint32_t next[ONCE_MAX_SHARDS];
        memcpy(next, r->start, sizeof next[0] * s->count);
        for (size_t i = 0; i < n; i++) {
            uint32_t g = next[r->shard[i]]++;
            r->order[g] = (uint32_t)i;
            r->hashes[g] = r->placed[i];
            r->times[g] = r->clock[i];
        }
        st = round_forked(r, out, done);
    } else {
        st = round_in_order(r, out, done);
    }
    if (clocked && *done > 0) {
        /* The clock as of the last key done: the latest time a key of the round took,
         * since a key at or past the clock is passed at its own time, a late one before. */
        uint64_t clock = s->started ? s->latest : r->clock[0];
        for (size_t i = 0; i < *done; i++)
            clock = r->clock[i] > clock ? r->clock[i] : clock;
        s->latest = clock;
        s->started = true;
    }
    return st != ONCE_OK ? st : cut;
}

static uint64_t sharded_memory(const once_filter *f);
static bool keeps_round(uint64_t cap, uint32_t count);

/*
 * The buffer of a batch of `room` keys.  Writes keep theirs in the filter, counted in
 * its bytes, while the cap leaves room for it: a buffer of a round's size is larger
 * than the C library hands out from its heap, and one allocated and freed each batch
 * is mapped and unmapped each time, whose unmapping interrupts every thread of the
 * process (measured: 6% of a run's cycles on two threads).  Queries, which threads may
 * make at once, and writes near the cap take one of their own (*kept false).
 */
static shard_round *round_for(sharded_filter *s, size_t room, once_batch_op op, bool *kept)
{
    *kept = false;
    if (op == ONCE_OP_QUERY)
        return round_new(room);
    if (s->round != NULL && s->round_room >= room) {
        *kept = true;
        return s->round;
    }
    /* The shards' shares leave room for the largest buffer where the cap keeps one; the
     * metadata is the application's, and may have taken some of it. */
    uint64_t without = sharded_memory(&s->base) - (s->round ? round_bytes(s->round_room) : 0);
    if (!keeps_round(s->max_bytes, s->count) ||
        !once_fits_cap(without + round_bytes(room), s->base.metadata_len, s->max_bytes))
        return round_new(room);
    shard_round *r = round_new(room);
    if (r == NULL)
        return NULL;
    once_free_memory(s->round);
    s->round = r;
    s->round_room = room;
    *kept = true;
    return r;
}

static once_status sharded_batch(once_filter *f, const once_batch_items *items, size_t count,
                                 once_batch_op op, uint8_t *out, size_t *done)
{
    sharded_filter *s = SHARDED(f);
    *done = 0;
    if (count == 0)
        return ONCE_OK;
    bool kept;
    shard_round *r = round_for(s, count < SHARD_ROUND ? count : SHARD_ROUND, op, &kept);
    if (r == NULL)
        return ONCE_ERR_NOMEM;
    once_status st = ONCE_OK;
    while (*done < count && st == ONCE_OK) {
        once_batch_items rest = once_items_from(items, *done);
        size_t n = count - *done < SHARD_ROUND ? count - *done : SHARD_ROUND, took = 0;
        st = sharded_round(s, r, &rest, n, op, out != NULL ? out + *done : NULL, &took);
        *done += took;
    }
    if (!kept)
        once_free_memory(r);
    return st;
}

/* ------------------------------------------------------------ whole filter */

static void sharded_destroy(once_filter *f)
{
    sharded_filter *s = SHARDED(f);
    if (s->shards != NULL)
        for (uint32_t j = 0; j < s->count; j++)
            if (s->shards[j] != NULL)
                s->shards[j]->ops->destroy(s->shards[j]);
    once_free_memory(s->shards);
    once_free_memory(s->round);
    once_free_memory(s);
}

static void sharded_clear(once_filter *f)
{
    sharded_filter *s = SHARDED(f);
    for (uint32_t j = 0; j < s->count; j++) {
        s->shards[j]->ops->clear(s->shards[j]);
        s->shards[j]->items = 0;
    }
    s->started = false;
    s->latest = 0;
}

static bool sharded_clock(const once_filter *f, uint64_t *latest)
{
    *latest = CSHARDED(f)->latest;
    return CSHARDED(f)->started;
}

static bool sharded_same_geometry(const once_filter *a, const once_filter *b)
{
    const sharded_filter *x = CSHARDED(a), *y = CSHARDED(b);
    if (x->inner != y->inner || x->count != y->count)
        return false;
    for (uint32_t j = 0; j < x->count; j++)
        if (!x->shards[j]->ops->same_geometry(x->shards[j], y->shards[j]))
            return false;
    return true;
}

/* The header's fields are the filter's (api/filter.c sets them; no structure's stats
 * touch them), the structure's are shard 0's (what the shards share: probes, span,
 * window, slack) with the counts summed over every shard. */
static void sharded_stats(const once_filter *f, once_stats *st)
{
    const sharded_filter *s = CSHARDED(f);
    s->shards[0]->ops->stats(s->shards[0], st);
    for (uint32_t j = 1; j < s->count; j++) {
        once_stats one;
        memset(&one, 0, sizeof one);
        s->shards[j]->ops->stats(s->shards[j], &one);
        st->bits += one.bits;
        st->bits_set += one.bits_set;
        st->fpr_estimate += one.fpr_estimate;
        st->filters += one.filters;
        st->newest_bits += one.newest_bits;
        st->generation += one.generation;
        st->sweep_owed += one.sweep_owed;
    }
    /* A key asks one shard, each with the same chance: the mean of their rates. */
    st->fpr_estimate /= s->count;
    st->type = s->inner;
    st->structure = once_type_name(s->inner);
    st->shards = s->count;
    if (s->shards[0]->ops->blocked_probe)
        st->probe = "blocked";
}

/* The shards hold disjoint keys: the sum of their estimates (math/cardinality.c), each
 * at the stream's clock. */
typedef struct shard_estimates {
    const sharded_filter *s;
    uint64_t now_ms;
} shard_estimates;

static once_status shard_estimate(const void *ctx, uint32_t j, double confidence,
                                  once_cardinality *out)
{
    const shard_estimates *e = ctx;
    const once_filter *shard = e->s->shards[j];
    if (shard->ops->cardinality == NULL)
        return ONCE_ERR_UNSUPPORTED;
    return shard->ops->cardinality(shard, at_clock(e->s, e->now_ms), confidence, out);
}

static once_status sharded_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                       once_cardinality *out)
{
    shard_estimates e = {CSHARDED(f), now_ms};
    return once_card_sum_estimates(CSHARDED(f)->count, shard_estimate, &e, confidence, out);
}

static uint64_t own_memory(uint32_t count)
{
    return sizeof(sharded_filter) + (uint64_t)count * sizeof(once_filter *);
}

static uint64_t sharded_memory(const once_filter *f)
{
    const sharded_filter *s = CSHARDED(f);
    uint64_t bytes = own_memory(s->count) + (s->round != NULL ? round_bytes(s->round_room) : 0);
    for (uint32_t j = 0; j < s->count; j++)
        bytes += s->shards[j]->ops->memory(s->shards[j]);
    return bytes;
}

static uint64_t sharded_memory_cap(const once_filter *f)
{
    return CSHARDED(f)->max_bytes;
}

/* Does a cap on the whole (0: none) leave room for the write batches' buffer?  It keeps
 * one only where that takes at most half of what the shards would have (round_for). */
static bool keeps_round(uint64_t cap, uint32_t count)
{
    uint64_t own = own_memory(count);
    return cap == 0 || (cap > own && cap - own >= 2 * round_bytes(SHARD_ROUND));
}

/* Each shard's share of a cap on the whole (0: none): what the cap leaves past the
 * filter's own struct and, where it keeps one, its largest buffer. */
static uint64_t share_of(uint64_t cap, uint32_t count)
{
    if (cap == 0)
        return 0;
    uint64_t own = own_memory(count) + (keeps_round(cap, count) ? round_bytes(SHARD_ROUND) : 0);
    uint64_t share = cap > own ? (cap - own) / count : 0;
    return share != 0 ? share : 1;
}

/* Give every shard its share of the cap, `cap` or (0) the structure's default. */
static void sharded_set_memory_cap(once_filter *f, uint64_t cap)
{
    sharded_filter *s = SHARDED(f);
    once_free_memory(s->round); /* made again by a batch, if the new cap has room */
    s->round = NULL;
    s->round_room = 0;
    s->max_bytes = cap != 0 ? cap : s->default_cap;
    for (uint32_t j = 0; j < s->count; j++)
        s->shards[j]->ops->set_memory_cap(s->shards[j], share_of(s->max_bytes, s->count));
}

/* The structure's default cap, read from a shard (its cap set to 0, then back). */
static uint64_t default_cap_of(once_filter *shard)
{
    uint64_t cap = shard->ops->memory_cap(shard);
    shard->ops->set_memory_cap(shard, 0);
    uint64_t fallback = shard->ops->memory_cap(shard);
    shard->ops->set_memory_cap(shard, cap);
    return fallback;
}

static bool sharded_overfull(const once_filter *f)
{
    const sharded_filter *s = CSHARDED(f);
    for (uint32_t j = 0; j < s->count; j++) {
        const once_filter *shard = s->shards[j];
        bool over = shard->ops->overfull != NULL
                        ? shard->ops->overfull(shard)
                        : once_structure_of(s->inner)->kind == ONCE_KIND_STATIC &&
                              shard->items > shard->capacity;
        if (over)
            return true;
    }
    return false;
}

static once_type sharded_reported_type(const once_filter *f)
{
    return CSHARDED(f)->inner;
}

/* ---------------------------------------------------------------- building */

static bool shardable(once_type type)
{
    const once_structure *info = once_structure_of(type);
    return info != NULL && (info->kind == ONCE_KIND_STATIC || info->kind == ONCE_KIND_TIME_WINDOW ||
                            info->kind == ONCE_KIND_GROWING);
}

static sharded_filter *sharded_alloc(once_type inner, uint32_t count)
{
    sharded_filter *s = once_calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->shards = once_calloc(count, sizeof *s->shards);
    if (s->shards == NULL) {
        once_free_memory(s);
        return NULL;
    }
    const once_structure *info = once_structure_of(inner);
    const once_filter_ops *ops = once_ops_for_type(inner);
    once_filter_init(&s->base, info->kind == ONCE_KIND_TIME_WINDOW ? &once_sharded_timed_ops
                               : ops->add_tests_first              ? &once_sharded_testing_ops
                               : info->memory_cap                  ? &once_sharded_growing_ops
                                                                   : &once_sharded_ops);
    s->inner = inner;
    s->count = count;
    return s;
}

once_status once_create_sharded(once_filter **out, const once_config *config, uint32_t shards)
{
    if (out == NULL || config == NULL)
        return ONCE_ERR_INVALID;
    *out = NULL;
    if (shards == 0 || shards > ONCE_MAX_SHARDS)
        return ONCE_ERR_INVALID;
    if (once_structure_of(config->type) == NULL)
        return ONCE_ERR_INVALID;
    if (!shardable(config->type) || config->bits != 0)
        return ONCE_ERR_UNSUPPORTED;
    once_config c;
    once_status read_st = once_config_read(config, &c); /* a caller's struct of any size */
    if (read_st != ONCE_OK)
        return read_st;
    if (!c.seed_is_set) {
        once_status st = once_random_seed(&c.seed);
        if (st != ONCE_OK)
            return st;
        c.seed_is_set = true;
    }
    c.capacity = config->capacity / shards + (config->capacity % shards != 0);
    c.max_bytes = share_of(config->max_bytes, shards);
    sharded_filter *s = sharded_alloc(config->type, shards);
    if (s == NULL)
        return ONCE_ERR_NOMEM;
    for (uint32_t j = 0; j < shards; j++) {
        once_status st = once_create(&s->shards[j], &c);
        if (st != ONCE_OK) {
            sharded_destroy(&s->base);
            return st;
        }
        s->shards[j]->max_time_jump = 0;
    }
    if (s->shards[0]->ops->set_memory_cap != NULL) {
        s->default_cap = default_cap_of(s->shards[0]);
        sharded_set_memory_cap(&s->base, config->max_bytes);
    }
    const once_filter *first = s->shards[0];
    s->base.seed = c.seed;
    s->base.capacity = config->capacity;
    s->base.error = first->error;
    if (s->max_bytes != 0 && once_filter_bytes(&s->base) > s->max_bytes) {
        sharded_destroy(&s->base);
        return ONCE_ERR_FULL;
    }
    *out = &s->base;
    return ONCE_OK;
}

uint32_t once_shard_count(const once_filter *f)
{
    if (f == NULL)
        return 0;
    return is_sharded(f) ? CSHARDED(f)->count : 1;
}

once_status once_set_executor(once_filter *f, const once_executor *executor)
{
    if (f == NULL)
        return ONCE_ERR_INVALID;
    if (!is_sharded(f))
        return ONCE_ERR_UNSUPPORTED;
    sharded_filter *s = SHARDED(f);
    if (executor == NULL)
        memset(&s->executor, 0, sizeof s->executor);
    else
        s->executor = *executor;
    return ONCE_OK;
}

/* ------------------------------------------------------------------ saving */

enum { P_INNER, P_SHARDS, P_MAX_BYTES, P_STARTED, P_LATEST, P_MAX_TIME_JUMP, P_COUNT };

static uint64_t sharded_params_size(const once_filter *f)
{
    (void)f;
    return P_COUNT * 8;
}

static uint64_t shard_saved_size(const once_filter *shard)
{
    return 5 * 8 + shard->ops->saved_params_size(shard) + shard->ops->saved_payload_size(shard);
}

static uint64_t sharded_payload_size(const once_filter *f)
{
    const sharded_filter *s = CSHARDED(f);
    uint64_t bytes = 0;
    for (uint32_t j = 0; j < s->count; j++)
        bytes += shard_saved_size(s->shards[j]);
    return bytes;
}

static void sharded_save_params(const once_filter *f, once_writer *w)
{
    const sharded_filter *s = CSHARDED(f);
    uint64_t v[P_COUNT] = {
        [P_INNER] = (uint64_t)s->inner,     [P_SHARDS] = s->count,
        [P_MAX_BYTES] = s->max_bytes,       [P_STARTED] = s->started,
        [P_LATEST] = s->latest,             [P_MAX_TIME_JUMP] = f->max_time_jump,
    };
    for (int i = 0; i < P_COUNT; i++)
        once_writer_u64(w, v[i]);
}

static void sharded_save_payload(const once_filter *f, once_writer *w)
{
    const sharded_filter *s = CSHARDED(f);
    for (uint32_t j = 0; j < s->count; j++) {
        const once_filter *shard = s->shards[j];
        once_writer_u64(w, shard->items);
        once_writer_u64(w, shard->capacity);
        once_writer_f64(w, shard->error);
        once_writer_u64(w, shard->ops->saved_params_size(shard));
        shard->ops->save_params(shard, w);
        once_writer_u64(w, shard->ops->saved_payload_size(shard));
        shard->ops->save_payload(shard, w);
    }
}

/* The next `len` bytes of the payload, or NULL past its end. */
static const uint8_t *take(const uint8_t **p, size_t *left, uint64_t len)
{
    if (len > *left)
        return NULL;
    const uint8_t *at = *p;
    *p += len;
    *left -= (size_t)len;
    return at;
}

static bool take_u64(const uint8_t **p, size_t *left, uint64_t *v)
{
    const uint8_t *at = take(p, left, 8);
    if (at != NULL)
        *v = once_le64_read(at);
    return at != NULL;
}

static once_status load_shard(const once_filter_ops *ops, const uint8_t **p, size_t *left,
                              once_filter **out)
{
    uint64_t items, capacity, error_bits, params_len, payload_len;
    if (!take_u64(p, left, &items) || !take_u64(p, left, &capacity) ||
        !take_u64(p, left, &error_bits) || !take_u64(p, left, &params_len))
        return ONCE_ERR_CORRUPT;
    const uint8_t *params = take(p, left, params_len);
    if (params == NULL || !take_u64(p, left, &payload_len))
        return ONCE_ERR_CORRUPT;
    const uint8_t *payload = take(p, left, payload_len);
    if (payload == NULL)
        return ONCE_ERR_CORRUPT;
    double error;
    memcpy(&error, &error_bits, sizeof error);
    if (once_header_check(capacity, error) != ONCE_OK)
        return ONCE_ERR_CORRUPT;
    once_filter *shard = NULL;
    once_status st = ops->load(&shard, params, (size_t)params_len, payload, (size_t)payload_len);
    if (st != ONCE_OK)
        return st == ONCE_ERR_NOMEM ? st : ONCE_ERR_CORRUPT;
    shard->items = items;
    shard->capacity = capacity;
    shard->error = error;
    *out = shard;
    return ONCE_OK;
}

static bool same_window(const once_filter *a, const once_filter *b)
{
    once_stats x, y;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    a->ops->stats(a, &x);
    b->ops->stats(b, &y);
    return x.span_ms == y.span_ms && x.window == y.window && x.lag_ms == y.lag_ms &&
           a->error == b->error;
}

static once_status sharded_load(once_filter **out, const uint8_t *params, size_t params_len,
                                const uint8_t *payload, size_t payload_len)
{
    uint64_t v[P_COUNT];
    if (!once_read_params(params, params_len, v, P_COUNT))
        return ONCE_ERR_CORRUPT;
    if (v[P_INNER] > 0xffff || !shardable((once_type)v[P_INNER]) || v[P_SHARDS] == 0 ||
        v[P_SHARDS] > ONCE_MAX_SHARDS || v[P_STARTED] > 1 || v[P_LATEST] > ONCE_MAX_TIME_MS ||
        v[P_MAX_TIME_JUMP] > ONCE_MAX_TIME_MS)
        return ONCE_ERR_CORRUPT;
    once_type inner = (once_type)v[P_INNER];
    const once_filter_ops *ops = once_ops_for_type(inner);
    sharded_filter *s = sharded_alloc(inner, (uint32_t)v[P_SHARDS]);
    if (s == NULL)
        return ONCE_ERR_NOMEM;
    s->started = v[P_STARTED] != 0;
    s->latest = v[P_LATEST];
    s->base.max_time_jump = v[P_MAX_TIME_JUMP];
    bool clocked = timed(s);
    once_status st = ONCE_OK;
    if (!clocked && (s->started || s->latest != 0 || s->base.max_time_jump != 0))
        st = ONCE_ERR_CORRUPT;
    bool capped = s->base.ops->set_memory_cap != NULL; /* the kinds that grow */
    if (!capped && v[P_MAX_BYTES] != 0)
        st = ONCE_ERR_CORRUPT;
    if (!s->started && s->latest != 0)
        st = ONCE_ERR_CORRUPT;
    const uint8_t *p = payload;
    size_t left = payload_len;
    for (uint32_t j = 0; j < s->count && st == ONCE_OK; j++) {
        st = load_shard(ops, &p, &left, &s->shards[j]);
        if (st != ONCE_OK)
            break;
        once_filter *shard = s->shards[j];
        if (shard->ops->clock != NULL) {
            uint64_t latest = 0;
            bool started = shard->ops->clock(shard, &latest);
            if (shard->max_time_jump != 0 || (started && !s->started) ||
                (started && latest > s->latest))
                st = ONCE_ERR_CORRUPT;
        }
        /* Each shard keeps the cap it was saved with, at most a P-th of the whole's:
         * the writer's share (share_of) counts the library's own struct, which a later
         * library may size otherwise, so the loader asks no more than this. */
        if (st == ONCE_OK && capped &&
            (ops->memory_cap(shard) == 0) != (v[P_MAX_BYTES] == 0))
            st = ONCE_ERR_CORRUPT;
        if (st == ONCE_OK && capped && ops->memory_cap(shard) > v[P_MAX_BYTES] / s->count)
            st = ONCE_ERR_CORRUPT;
        /* the shards keep one window (a growing structure's shards grow apart) */
        if (st == ONCE_OK && j > 0 && !same_window(s->shards[0], shard))
            st = ONCE_ERR_CORRUPT;
    }
    if (st == ONCE_OK && left != 0)
        st = ONCE_ERR_CORRUPT;
    if (st == ONCE_OK && capped) {
        s->max_bytes = v[P_MAX_BYTES]; /* the whole's: check_header holds the bytes to it */
        s->default_cap = default_cap_of(s->shards[0]);
    }
    if (st != ONCE_OK) {
        sharded_destroy(&s->base);
        return st;
    }
    *out = &s->base;
    return ONCE_OK;
}

/* After the header's fields are set: the shards take its seed and format. */
static void sharded_set_format(once_filter *f)
{
    sharded_filter *s = SHARDED(f);
    for (uint32_t j = 0; j < s->count; j++) {
        once_filter *shard = s->shards[j];
        shard->seed = f->seed;
        shard->format = f->format;
        if (shard->ops->set_format != NULL)
            shard->ops->set_format(shard);
    }
}

static bool sharded_check_header(const once_filter *f)
{
    const sharded_filter *s = CSHARDED(f);
    for (uint32_t j = 0; j < s->count; j++) {
        const once_filter *shard = s->shards[j];
        if (shard->ops->check_header != NULL && !shard->ops->check_header(shard))
            return false;
    }
    uint64_t cap = sharded_memory_cap(f);
    return cap == 0 || once_filter_bytes(f) <= cap;
}

#define SHARDED_OPS                                                                          \
    .type = ONCE_SAVED_SHARDED, .destroy = sharded_destroy,                                  \
    .query = sharded_query, .add = sharded_add, .test_and_add = sharded_test_and_add,        \
    .batch = sharded_batch, .remove = sharded_remove, .clear = sharded_clear,                \
    .same_geometry = sharded_same_geometry, .stats = sharded_stats,                          \
    .cardinality = sharded_cardinality, .memory = sharded_memory,                            \
    .overfull = sharded_overfull, .saved_params_size = sharded_params_size,                  \
    .saved_payload_size = sharded_payload_size, .save_params = sharded_save_params,          \
    .save_payload = sharded_save_payload, .load = sharded_load,                              \
    .check_header = sharded_check_header, .set_format = sharded_set_format,                  \
    .reported_type = sharded_reported_type
#define SHARDED_CAP_OPS .memory_cap = sharded_memory_cap, .set_memory_cap = sharded_set_memory_cap

/* Four tables, by the shards' kind: static (no cap), growing (a cap), growing with
 * insertions that test first (the scalable filter: an insertion counts only a new key,
 * as its shards count), time windows (a cap and the clock).  The loader is found as the
 * first; it builds the filter with its shards' table. */
const once_filter_ops once_sharded_ops = {SHARDED_OPS};
const once_filter_ops once_sharded_growing_ops = {SHARDED_OPS, SHARDED_CAP_OPS};
const once_filter_ops once_sharded_testing_ops = {SHARDED_OPS, SHARDED_CAP_OPS,
                                                  .add_tests_first = true};
const once_filter_ops once_sharded_timed_ops = {SHARDED_OPS, SHARDED_CAP_OPS,
                                                .clock = sharded_clock};
