/*
 * api/filter.c - the one filter interface: argument checks, hashing and item counting,
 * dispatched to the structure through its ops table (the batch calls: api/batch.c).
 *
 * Invariants kept here for every structure:
 *   - a key is hashed exactly once per call, under the filter's seed, into its digest
 *     (once_digest_with_seed), and the key call is then the digest call: structures
 *     see digests only, so both answer alike;
 *   - `items` counts successful insertions of keys the filter did not report present
 *     (test-and-add) or every add (plain add), minus successful deletes; a structure
 *     whose add must not count a key it already holds (add_tests_first, the scalable
 *     filter's BF.ADD semantics) has every add, one-key or batch, made as a
 *     test-and-add;
 *   - a batch gives exactly the answers of the one-key calls in array order: it only
 *     prefetches the cache lines of a few keys ahead, it never reorders.
 */
#include "api/api.h"
#include "core/config.h"
#include "core/limits.h"
#include "math/cardinality.h"
#include "once_math.h"

#include <errno.h>
#include <math.h>
#include <sys/random.h>

static const char *const status_text[ONCE_STATUS_COUNT] = {
    [ONCE_OK] = "success",
    [ONCE_ERR_INVALID] = "invalid argument",
    [ONCE_ERR_NOMEM] = "out of memory",
    [ONCE_ERR_TOO_LARGE] = "requested size exceeds the library's limits",
    [ONCE_ERR_UNSUPPORTED] = "operation not supported by this structure",
    [ONCE_ERR_MISMATCH] = "filters differ in structure, geometry or seed",
    [ONCE_ERR_NOT_PRESENT] = "key is not present in the filter",
    [ONCE_ERR_FULL] = "filter is full",
    [ONCE_ERR_TRUNCATED] = "serialized filter is truncated",
    [ONCE_ERR_BAD_MAGIC] = "not a once filter (bad magic)",
    [ONCE_ERR_VERSION] = "unsupported serialization format version",
    [ONCE_ERR_CORRUPT] = "serialized filter is corrupt",
    [ONCE_ERR_CHECKSUM] = "serialized filter fails its checksum",
    [ONCE_ERR_IO] = "write failed",
    [ONCE_ERR_TIME] = "event time refused: out of range, or too far ahead of the window's clock",
    [ONCE_ERR_SEQUENCE] = "chunk or cursor out of sequence: not the next of this dump, or the filter changed during it",
    [ONCE_ERR_UNAVAILABLE] = "a site (of a sliced filter or a Bloom tree) cannot be reached",
    [ONCE_ERR_RATE] = "target false-positive rate outside [1e-9, 1)",
    [ONCE_ERR_NO_WINDOW] = "a window filter needs its window: once_create with once_config.window (a count of keys) or span_ms (a time)",
    [ONCE_ERR_PROBE_MISMATCH] = "the filters place keys differently: one was saved in format 1 "
                                "(before probes were mixed), so their cells do not line up; "
                                "rebuild it from its keys to combine the two",
};

const char *once_strerror(once_status status)
{
    if ((unsigned)status >= ONCE_STATUS_COUNT || status_text[status] == NULL)
        return "unknown error";
    return status_text[status];
}

const char *once_version(void)
{
    return ONCE_VERSION_STRING;
}

once_status once_random_seed(uint64_t *seed)
{
    if (seed == NULL)
        return ONCE_ERR_INVALID;
    uint8_t *p = (uint8_t *)seed;
    size_t got = 0;
    while (got < sizeof *seed) {
        ssize_t r = getrandom(p + got, sizeof *seed - got, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return ONCE_ERR_IO;
        }
        got += (size_t)r;
    }
    return ONCE_OK;
}

static once_status seed_from(const once_config *config, uint64_t *seed)
{
    *seed = config->seed;
    return config->seed_is_set ? ONCE_OK : once_random_seed(seed);
}

/* The design capacity and error every filter records, in the range the format holds.
 * once_create checks what it is about to record with this same function, so a filter it
 * builds always saves into a file once_load accepts.  The error is a rate: an explicit
 * geometry too small for its capacity records its design rate, which may round to 1. */
once_status once_header_check(uint64_t capacity, double error)
{
    if (capacity > ONCE_MAX_CELLS)
        return ONCE_ERR_TOO_LARGE;
    if (!isfinite(error) || error < 0.0 || error > 1.0)
        return ONCE_ERR_INVALID;
    return ONCE_OK;
}

/* A rate as recorded: a formula that rounds past 1 (or fails) records 1. */
static double recorded_rate(double rate)
{
    return rate >= 0.0 && rate <= 1.0 ? rate : 1.0;
}

/* Windowed and growing structures take their geometry from the whole config. */
static once_status create_from_config(once_filter **out, const once_filter_ops *ops,
                                      const once_config *config)
{
    /* The time windows share one clock rule; its bound is set here for all of them. */
    bool clocked = ops->clock != NULL;
    if (clocked && config->max_time_jump_ms > ONCE_MAX_TIME_MS)
        return ONCE_ERR_INVALID;
    uint64_t seed;
    once_status st = seed_from(config, &seed);
    if (st != ONCE_OK)
        return st;
    once_filter *f = NULL;
    st = ops->create(&f, config);
    if (st != ONCE_OK)
        return st;
    f->seed = seed;
    if (clocked)
        f->max_time_jump = config->max_time_jump_ms;
    /* The stats only where the geometry chose what the config left open: they scan the
     * whole structure (a 2 MiB scalable filter's first sub-filter: some 20 ms), which a
     * new one need not pay. */
    bool count_window = once_structure_of(config->type)->kind == ONCE_KIND_COUNT_WINDOW;
    bool explicit_geometry = ops->explicit_geometry && ops->explicit_geometry(config);
    once_stats s;
    memset(&s, 0, sizeof s);
    if ((count_window && !config->window) || explicit_geometry)
        f->ops->stats(f, &s);
    if (count_window)
        f->capacity = config->window ? config->window : s.window; /* as requested */
    else
        f->capacity = config->capacity;
    f->error = explicit_geometry && s.design_fpr > 0 ? recorded_rate(s.design_fpr) : config->error;
    *out = f;
    return ONCE_OK;
}

static once_status create_static(once_filter **out, const once_filter_ops *ops,
                                 const once_config *config);

bool once_error_in_range(double error)
{
    return error >= ONCE_MIN_ERROR && error < 1.0; /* false for NaN */
}

/* Does the config's error plan the geometry (rather than only being recorded beside an
 * explicit one)? */
static bool error_plans(const once_filter_ops *ops, const once_config *c)
{
    if (c->bits != 0 || c->hashes != 0)
        return false;
    return ops->explicit_geometry == NULL || !ops->explicit_geometry(c);
}

once_status once_create(once_filter **out, const once_config *given)
{
    if (out == NULL)
        return ONCE_ERR_INVALID;
    *out = NULL;
    once_config read;
    once_status read_st = once_config_read(given, &read);
    if (read_st != ONCE_OK)
        return read_st;
    const once_config *config = &read;
    const once_filter_ops *ops = once_ops_for_type(config->type);
    if (ops == NULL)
        return ONCE_ERR_INVALID;
    /* Only the tagged window judges an event at a time other than its clock's (once.h,
     * "Event time"): a lag given to another structure would be a promise it breaks. */
    if (config->lag_ms != 0 && config->type != ONCE_TAGGED)
        return ONCE_ERR_INVALID;
    once_kind kind = once_structure_of(config->type)->kind;
    if ((kind == ONCE_KIND_COUNT_WINDOW && config->window == 0 && config->bits == 0) ||
        (kind == ONCE_KIND_TIME_WINDOW && config->span_ms == 0))
        return ONCE_ERR_NO_WINDOW;
    if (error_plans(ops, config) && !once_error_in_range(config->error))
        return ONCE_ERR_RATE;
    /* Every structure but the count windows (which record their window) records the
     * capacity as given: refuse one past the limit before sizing anything for it. */
    bool records_capacity = once_structure_of(config->type)->kind != ONCE_KIND_COUNT_WINDOW;
    if (records_capacity && once_header_check(config->capacity, 0.0) != ONCE_OK)
        return ONCE_ERR_TOO_LARGE;
    once_status st = ops->create ? create_from_config(out, ops, config)
                                 : create_static(out, ops, config);
    /* Refuse what the loader would refuse: a filter that saves must load again. */
    if (st == ONCE_OK && (st = once_header_check((*out)->capacity, (*out)->error)) != ONCE_OK) {
        once_free(*out);
        *out = NULL;
    }
    return st;
}

/* The static layouts: the geometry from (capacity, error) or given as (bits, hashes). */
static once_status create_static(once_filter **out, const once_filter_ops *ops,
                                 const once_config *config)
{
    uint64_t bits = config->bits;
    uint32_t hashes = config->hashes;
    double error = config->error;
    if (bits == 0) {
        if (hashes != 0)
            return ONCE_ERR_INVALID; /* a probe count alone says nothing of the size */
        once_status st = once_plan(config->type, config->capacity, config->error, &bits, &hashes);
        if (st != ONCE_OK)
            return st;
    } else {
        if (hashes == 0) {
            if (config->capacity == 0)
                return ONCE_ERR_INVALID;
            hashes = once_optimal_hashes(bits, config->capacity);
        }
        error = config->capacity
                    ? recorded_rate(once_fpr_for(config->type, bits, hashes, config->capacity))
                    : 0;
    }

    uint64_t seed;
    once_status st0 = seed_from(config, &seed);
    if (st0 != ONCE_OK)
        return st0;

    once_filter *f = NULL;
    once_status st = ops->new_geometry(&f, bits, hashes);
    if (st != ONCE_OK)
        return st;
    f->seed = seed;
    f->capacity = config->capacity;
    f->error = error;
    *out = f;
    return ONCE_OK;
}

once_status once_create_for_capacity(once_filter **out, once_type type, uint64_t capacity,
                                     double error)
{
    once_config c;
    once_config_init(&c, type);
    c.capacity = capacity;
    c.error = error;
    return once_create(out, &c);
}

once_status once_create_with_geometry(once_filter **out, once_type type, uint64_t bits,
                                      uint32_t hashes)
{
    if (bits == 0 || hashes == 0)
        return ONCE_ERR_INVALID;
    once_config c;
    once_config_init(&c, type);
    c.capacity = 0;
    c.bits = bits;
    c.hashes = hashes;
    return once_create(out, &c);
}

void once_free(once_filter *f)
{
    if (f != NULL) {
        once_free_memory(f->metadata);
        f->ops->destroy(f);
    }
}

once_status once_set_metadata(once_filter *f, const void *data, size_t len)
{
    if (f == NULL || (data == NULL && len != 0))
        return ONCE_ERR_INVALID;
    if (len > ONCE_MAX_METADATA)
        return ONCE_ERR_TOO_LARGE;
    /* The bytes count in once_bytes, which a structure's cap bounds. */
    uint64_t cap = f->ops->memory_cap != NULL ? f->ops->memory_cap(f) : 0;
    if (cap != 0 && once_bytes(f) - f->metadata_len + len > cap)
        return ONCE_ERR_FULL;
    uint8_t *copy = NULL;
    if (len > 0) {
        copy = once_malloc(len);
        if (copy == NULL)
            return ONCE_ERR_NOMEM;
        memcpy(copy, data, len);
    }
    once_free_memory(f->metadata);
    f->metadata = copy;
    f->metadata_len = (uint32_t)len; /* at most ONCE_MAX_METADATA, checked above */
    return ONCE_OK;
}

once_status once_set_max_bytes(once_filter *f, uint64_t max_bytes)
{
    if (f == NULL)
        return ONCE_ERR_INVALID;
    if (f->ops->set_memory_cap == NULL)
        return ONCE_ERR_UNSUPPORTED;
    uint64_t before = f->ops->memory_cap(f);
    f->ops->set_memory_cap(f, max_bytes);
    uint64_t cap = f->ops->memory_cap(f);
    if (cap != 0 && once_bytes(f) > cap) {
        f->ops->set_memory_cap(f, before);
        return ONCE_ERR_FULL;
    }
    return ONCE_OK;
}

uint64_t once_max_bytes(const once_filter *f)
{
    return f != NULL && f->ops->memory_cap != NULL ? f->ops->memory_cap(f) : 0;
}

once_status once_get_metadata(const once_filter *f, const void **data, size_t *len)
{
    if (f == NULL || data == NULL || len == NULL)
        return ONCE_ERR_INVALID;
    *data = f->metadata;
    *len = f->metadata_len;
    return ONCE_OK;
}

/* ------------------------------------------------------------- digests */

once_status once_digest_with_seed(uint64_t seed, const void *key, size_t len, once_digest *out)
{
    if ((key == NULL && len != 0) || out == NULL)
        return ONCE_ERR_INVALID;
    *out = once_hash_key(key, len, seed);
    return ONCE_OK;
}

once_status once_digest_key(const once_filter *f, const void *key, size_t len, once_digest *out)
{
    if (f == NULL)
        return ONCE_ERR_INVALID;
    return once_digest_with_seed(f->seed, key, len, out);
}

once_status once_positions(const once_filter *f, const once_digest *d, uint64_t *positions,
                           uint32_t *count)
{
    if (f == NULL || d == NULL || count == NULL)
        return ONCE_ERR_INVALID;
    if (f->ops->positions == NULL)
        return ONCE_ERR_UNSUPPORTED;
    uint64_t cells[ONCE_MAX_HASHES];
    uint32_t k = f->ops->positions(f, d, cells);
    uint32_t room = *count;
    *count = k;
    if (positions == NULL || room < k)
        return ONCE_ERR_INVALID;
    memcpy(positions, cells, k * sizeof cells[0]);
    return ONCE_OK;
}

/* ------------------------------------------------------------- one key */

/*
 * Every key call is the digest call after hashing the key under the filter's seed:
 * the structures have one probe path, reached the same way from either.  Both public
 * forms run the same inlined operation (query_hashed, once_add_hashed, ...) rather than
 * the key call calling the digest call: a call to an exported function is not inlined
 * (another library could interpose it), so every key would pay a second call, its
 * register saves and its argument checks again.  A structure may also take short keys
 * itself (the key operations, once_filter_ops): the key call then checks its arguments
 * and jumps there, and the structure hashes and probes in one function.  Everything
 * else (long keys, the other structures) goes through the *_by_digest functions, out
 * of line so that the key calls keep (almost) no frame of their own.
 *
 * Why the one-key path is kept short: on a filter larger than the caches a one-key
 * call waits for a miss, and what hides that wait is the processor running ahead into
 * the calls after it, whose misses then overlap.  How far it runs ahead is bounded by
 * its reorder window, so the instructions of one call are what set how many misses
 * are in flight: fewer instructions a call, more calls a second (docs/BENCHMARKS.md,
 * "One-key calls").
 */
#define CHECK_KEY(f, key, len)                                                                  \
    do {                                                                                        \
        if ((f) == NULL || ((key) == NULL && (len) != 0))                                       \
            return ONCE_ERR_INVALID;                                                            \
    } while (0)

/* A read at `now_ms` is refused where a write at that time would be (once.h, "Event
 * time"); writes are checked by the time windows themselves, key by key, because a
 * batch moves the clock as it goes.  Inlined: for the structures without a clock it
 * is one test. */
static inline __attribute__((always_inline)) once_status check_time(const once_filter *f,
                                                                    uint64_t now_ms)
{
    if (f->ops->clock == NULL)
        return ONCE_OK;
    uint64_t latest = 0;
    bool started = f->ops->clock(f, &latest);
    return once_time_admissible(f, latest, started, now_ms) ? ONCE_OK : ONCE_ERR_TIME;
}

static inline __attribute__((always_inline)) once_status
query_hashed(const once_filter *f, const once_hash *h, uint64_t now_ms, bool *present)
{
    if (present == NULL)
        return ONCE_ERR_INVALID;
    if (__builtin_expect(f->ops->positions_only, 0))
        return ONCE_ERR_UNSUPPORTED;
    once_status st = check_time(f, now_ms);
    if (st != ONCE_OK)
        return st;
    *present = f->ops->query(f, h, now_ms);
    return ONCE_OK;
}

/* A successful test-and-add of a key not seen counts one item.  Under a branch, not
 * added as 0 or 1: the answer waits for the key's line, and as data it would chain
 * every call's count to its miss (through `items`), measurably slower for a stream of
 * new keys; a predicted branch lets the count go ahead. */
static inline __attribute__((always_inline)) void count_test_and_add(once_filter *f,
                                                                     once_status st,
                                                                     const bool *seen)
{
    if (st == ONCE_OK && !*seen)
        f->items++;
}

static inline __attribute__((always_inline)) once_status
test_and_add_hashed(once_filter *f, const once_hash *h, uint64_t now_ms, bool *seen)
{
    if (seen == NULL)
        return ONCE_ERR_INVALID;
    once_status st = f->ops->test_and_add(f, h, now_ms, seen);
    count_test_and_add(f, st, seen);
    return st;
}

static inline __attribute__((always_inline)) once_status
remove_hashed(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    if (f->ops->remove == NULL)
        return ONCE_ERR_UNSUPPORTED;
    once_status st = f->ops->remove(f, h, now_ms);
    if (st == ONCE_OK && f->items > 0)
        f->items--;
    return st;
}

bool once_can_take(const once_filter *f, uint64_t keys, uint64_t until_ms)
{
    return f != NULL && f->ops->can_take != NULL && f->ops->can_take(f, keys, until_ms);
}

once_status once_add_digest(once_filter *f, const once_digest *d, uint64_t now_ms)
{
    if (f == NULL || d == NULL)
        return ONCE_ERR_INVALID;
    return once_add_hashed(f, d, now_ms);
}

/* The key calls through the digest (see above). */
static __attribute__((noinline)) once_status
add_by_digest(once_filter *f, const void *key, size_t len, uint64_t now_ms)
{
    once_hash h = once_one_key_hash(key, len, f->seed);
    return once_add_hashed(f, &h, now_ms);
}

once_status once_add(once_filter *f, const void *key, size_t len, uint64_t now_ms)
{
    CHECK_KEY(f, key, len);
    if (len <= ONCE_INLINE_KEY_BYTES && f->ops->add_key != NULL) {
        once_status st = f->ops->add_key(f, key, len, now_ms);
        if (st == ONCE_OK)
            f->items++;
        return st;
    }
    return add_by_digest(f, key, len, now_ms);
}

once_status once_query_digest(const once_filter *f, const once_digest *d, uint64_t now_ms,
                              bool *present)
{
    if (f == NULL || d == NULL)
        return ONCE_ERR_INVALID;
    return query_hashed(f, d, now_ms, present);
}

static __attribute__((noinline)) once_status
query_by_digest(const once_filter *f, const void *key, size_t len, uint64_t now_ms,
                bool *present)
{
    once_hash h = once_one_key_hash(key, len, f->seed);
    return query_hashed(f, &h, now_ms, present);
}

/* Either way a tail call, so that this function keeps no frame. */
once_status once_query(const once_filter *f, const void *key, size_t len, uint64_t now_ms,
                       bool *present)
{
    CHECK_KEY(f, key, len);
    if (present == NULL)
        return ONCE_ERR_INVALID;
    if (len <= ONCE_INLINE_KEY_BYTES && f->ops->query_key != NULL)
        return f->ops->query_key(f, key, len, now_ms, present);
    return query_by_digest(f, key, len, now_ms, present);
}

static once_status query_reads_hashed(const once_filter *f, const once_hash *h, uint64_t now_ms,
                                      bool *present, uint32_t *reads)
{
    if (present == NULL || reads == NULL)
        return ONCE_ERR_INVALID;
    if (f->ops->query_reads == NULL)
        return ONCE_ERR_UNSUPPORTED;
    once_status st = check_time(f, now_ms);
    if (st != ONCE_OK)
        return st;
    *present = f->ops->query_reads(f, h, now_ms, reads);
    return ONCE_OK;
}

once_status once_query_reads(const once_filter *f, const void *key, size_t len, uint64_t now_ms,
                             bool *present, uint32_t *reads)
{
    CHECK_KEY(f, key, len);
    once_hash h = once_hash_key(key, len, f->seed);
    return query_reads_hashed(f, &h, now_ms, present, reads);
}

once_status once_test_and_add_digest(once_filter *f, const once_digest *d, uint64_t now_ms,
                                     bool *seen)
{
    if (f == NULL || d == NULL)
        return ONCE_ERR_INVALID;
    return test_and_add_hashed(f, d, now_ms, seen);
}

static __attribute__((noinline)) once_status
test_and_add_by_digest(once_filter *f, const void *key, size_t len, uint64_t now_ms, bool *seen)
{
    once_hash h = once_one_key_hash(key, len, f->seed);
    return test_and_add_hashed(f, &h, now_ms, seen);
}

once_status once_test_and_add(once_filter *f, const void *key, size_t len, uint64_t now_ms,
                              bool *seen)
{
    CHECK_KEY(f, key, len);
    if (seen == NULL)
        return ONCE_ERR_INVALID;
    if (len <= ONCE_INLINE_KEY_BYTES && f->ops->test_and_add_key != NULL) {
        once_status st = f->ops->test_and_add_key(f, key, len, now_ms, seen);
        count_test_and_add(f, st, seen);
        return st;
    }
    return test_and_add_by_digest(f, key, len, now_ms, seen);
}

once_status once_remove_digest(once_filter *f, const once_digest *d, uint64_t now_ms)
{
    if (f == NULL || d == NULL)
        return ONCE_ERR_INVALID;
    return remove_hashed(f, d, now_ms);
}

once_status once_remove(once_filter *f, const void *key, size_t len, uint64_t now_ms)
{
    CHECK_KEY(f, key, len);
    once_hash h = once_one_key_hash(key, len, f->seed);
    return remove_hashed(f, &h, now_ms);
}

once_status once_clear(once_filter *f)
{
    if (f == NULL)
        return ONCE_ERR_INVALID;
    f->ops->clear(f);
    f->items = 0;
    return ONCE_OK;
}

static once_status combine(once_filter *dst, const once_filter *src, once_combine_op op)
{
    if (dst == NULL || src == NULL)
        return ONCE_ERR_INVALID;
    if (dst->ops != src->ops || dst->seed != src->seed || !dst->ops->same_geometry(dst, src))
        return ONCE_ERR_MISMATCH;
    if (!once_same_probe(dst, src))
        return ONCE_ERR_PROBE_MISMATCH;
    if (dst->ops->combine == NULL)
        return ONCE_ERR_UNSUPPORTED;
    once_status st = dst->ops->combine(dst, src, op);
    if (st != ONCE_OK)
        return st; /* the structure left dst as it was */
    /* Items of a combination is not known exactly; keep an upper bound. */
    if (!dst->ops->combine_sets_items)
        dst->items = once_card_combined_items(dst->items, src->items, op);
    return ONCE_OK;
}

once_status once_union(once_filter *dst, const once_filter *src)
{
    return combine(dst, src, ONCE_COMBINE_UNION);
}

once_status once_intersect(once_filter *dst, const once_filter *src)
{
    return combine(dst, src, ONCE_COMBINE_INTERSECT);
}

/* ----------------------------------------------------------------- stats */

static once_status get_stats(const once_filter *f, once_stats *s)
{
    memset(s, 0, sizeof *s);
    s->type = once_get_type(f);
    s->structure = once_type_name(s->type);
    s->items = f->items;
    s->capacity = f->capacity;
    s->error = f->error;
    s->seed = f->seed;
    s->bytes = once_bytes(f);
    s->format = f->format;
    s->probe = f->ops->blocked_probe                ? "blocked"
               : f->format == ONCE_FORMAT_LINEAR ? "linear"
                                                 : "mixed";
    f->ops->stats(f, s);
    s->fill_ratio = s->bits ? (double)s->bits_set / (double)s->bits : 0.0;
    return ONCE_OK;
}

once_status once_get_stats_sized(const once_filter *f, once_stats *out, size_t size)
{
    if (f == NULL || out == NULL || size < ONCE_STATS_FIRST_SIZE)
        return ONCE_ERR_INVALID;
    once_stats s;
    get_stats(f, &s);
    /* A newer caller's fields past ours: zero, as for a structure without them. */
    memset(out, 0, size);
    memcpy(out, &s, size < sizeof s ? size : sizeof s);
    return ONCE_OK;
}

once_status once_clock(const once_filter *f, uint64_t *clock_ms, bool *started)
{
    if (f == NULL || clock_ms == NULL || started == NULL)
        return ONCE_ERR_INVALID;
    if (f->ops->clock == NULL)
        return ONCE_ERR_UNSUPPORTED;
    *clock_ms = 0;
    *started = f->ops->clock(f, clock_ms);
    return ONCE_OK;
}

once_status once_set_max_time_jump(once_filter *f, uint64_t max_time_jump_ms)
{
    if (f == NULL)
        return ONCE_ERR_INVALID;
    if (f->ops->clock == NULL)
        return ONCE_ERR_UNSUPPORTED;
    if (max_time_jump_ms > ONCE_MAX_TIME_MS)
        return ONCE_ERR_INVALID;
    f->max_time_jump = max_time_jump_ms;
    return ONCE_OK;
}

uint64_t once_max_time_jump(const once_filter *f)
{
    return f != NULL && f->ops->clock != NULL ? f->max_time_jump : 0;
}

bool once_time_step(uint64_t max_time_jump_ms, uint64_t *clock_ms, bool *started,
                    uint64_t time_ms)
{
    if (clock_ms == NULL || started == NULL ||
        !once_time_within(max_time_jump_ms, *clock_ms, *started, time_ms))
        return false;
    if (!*started || time_ms > *clock_ms)
        *clock_ms = time_ms;
    *started = true;
    return true;
}

bool once_clock_step(const once_filter *f, uint64_t *clock_ms, bool *started, uint64_t time_ms)
{
    if (f == NULL || f->ops->clock == NULL)
        return false;
    return once_time_step(f->max_time_jump, clock_ms, started, time_ms);
}

/* ----------------------------------------------------------- cardinality */

static bool confidence_ok(double confidence)
{
    return confidence > 0.0 && confidence < 1.0;
}

once_status once_estimate_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                      once_cardinality *out)
{
    if (f == NULL || out == NULL || !confidence_ok(confidence))
        return ONCE_ERR_INVALID;
    if (f->ops->cardinality == NULL)
        return ONCE_ERR_UNSUPPORTED;
    once_status st = check_time(f, now_ms);
    if (st != ONCE_OK)
        return st;
    memset(out, 0, sizeof *out);
    out->confidence = confidence;
    return f->ops->cardinality(f, now_ms, confidence, out);
}

static once_status estimate_pair(const once_filter *a, const once_filter *b, once_combine_op op,
                                 double confidence, once_cardinality *out)
{
    if (a == NULL || b == NULL || out == NULL || !confidence_ok(confidence))
        return ONCE_ERR_INVALID;
    if (a->ops != b->ops || a->seed != b->seed || !a->ops->same_geometry(a, b))
        return ONCE_ERR_MISMATCH;
    if (!once_same_probe(a, b))
        return ONCE_ERR_PROBE_MISMATCH;
    if (a->ops->cardinality_pair == NULL)
        return ONCE_ERR_UNSUPPORTED;
    memset(out, 0, sizeof *out);
    out->confidence = confidence;
    return a->ops->cardinality_pair(a, b, op, confidence, out);
}

once_status once_estimate_union(const once_filter *a, const once_filter *b, double confidence,
                                once_cardinality *out)
{
    return estimate_pair(a, b, ONCE_COMBINE_UNION, confidence, out);
}

once_status once_estimate_intersection(const once_filter *a, const once_filter *b,
                                       double confidence, once_cardinality *out)
{
    return estimate_pair(a, b, ONCE_COMBINE_INTERSECT, confidence, out);
}

uint64_t once_items(const once_filter *f)
{
    return f ? f->items : 0;
}
uint64_t once_capacity(const once_filter *f)
{
    return f ? f->capacity : 0;
}
bool once_overfull(const once_filter *f)
{
    if (f == NULL)
        return false;
    if (f->ops->overfull != NULL)
        return f->ops->overfull(f);
    return once_structure_of(f->ops->type)->kind == ONCE_KIND_STATIC && f->items > f->capacity;
}
uint64_t once_bytes(const once_filter *f)
{
    return f ? once_filter_bytes(f) : 0;
}
once_type once_get_type(const once_filter *f)
{
    if (f == NULL)
        return (once_type)0;
    return f->ops->reported_type != NULL ? f->ops->reported_type(f) : f->ops->type;
}
uint64_t once_seed(const once_filter *f)
{
    return f ? f->seed : 0;
}
