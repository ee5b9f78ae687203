/*
 * test_alloc.c - every allocation goes through the host's allocator, and once_bytes is
 * exactly what a filter holds.
 *
 * A counting allocator is installed (once_set_allocator).  It keeps a header with the
 * requested size before each block, tracks its live blocks in a hash set, and returns
 * blocks 16 bytes past a 64-byte boundary: aligned as malloc promises, never as the
 * blocked layout's SIMD loads need.  It can fail its Nth call.  The binary is linked
 * with --wrap for malloc, calloc, realloc, free, posix_memalign and aligned_alloc, so
 * any call the library makes to the C library's allocator is counted too.  Then:
 *
 *   - for every structure (all twelve types, the dynamic timer, the bit-slice DBF): a
 *     scenario of create, metadata, keys enough to grow the growing ones, queries,
 *     stats, save to a buffer, load, union and intersection where offered, the
 *     structure's own calls (delete, reduce, deltas, clear), free.  After every step the
 *     bytes live in the allocator are exactly the sum of once_bytes over the filters
 *     alive plus the buffers held; at the end nothing is live; the C library's
 *     allocator was never called; every block freed was one the allocator made;
 *   - the same scenarios with the allocator failing its Nth call, for every N up to the
 *     calls of the whole scenario: each call returns ONCE_OK or ONCE_ERR_NOMEM, a
 *     one-key call or a construction that fails holds nothing more than before, the
 *     accounting holds after every step, nothing is left at the end, nothing crashes;
 *   - once_aligned_alloc's blocks are 64-byte aligned and zeroed for many sizes, and
 *     cost once_aligned_footprint; the flat arrays of the static layouts are aligned,
 *     and the blocked layout's SIMD paths (aligned loads and stores) run on them;
 *   - once_set_allocator refuses a change while blocks are alive, and the C library's
 *     allocator is what runs without one;
 *   - the public calls for code built on the library (once_malloc and its kin, which
 *     the cluster client uses) go through the installed allocator, and their blocks
 *     count as alive;
 *   - each memory cap bounds once_bytes, metadata included.
 */
#include "core/alloc.h"
#include "static/array_filter.h"
#include "testing.h"

#include <stdbool.h>

/* ------------------------------------------------------ the C library, wrapped */

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *block, size_t size);
void __real_free(void *block);
int __real_posix_memalign(void **out, size_t alignment, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *block, size_t size);
void __wrap_free(void *block);
int __wrap_posix_memalign(void **out, size_t alignment, size_t size);
void *__wrap_aligned_alloc(size_t alignment, size_t size);

/* Calls made to the C library's allocator from this binary's objects and the library
 * linked into it (not from inside the C library itself).  This file's own code calls
 * the __real_ functions. */
static uint64_t c_library_calls;

void *__wrap_malloc(size_t size)
{
    c_library_calls++;
    return __real_malloc(size);
}
void *__wrap_calloc(size_t count, size_t size)
{
    c_library_calls++;
    return __real_calloc(count, size);
}
void *__wrap_realloc(void *block, size_t size)
{
    c_library_calls++;
    return __real_realloc(block, size);
}
void __wrap_free(void *block)
{
    if (block != NULL)
        c_library_calls++;
    __real_free(block);
}
int __wrap_posix_memalign(void **out, size_t alignment, size_t size)
{
    c_library_calls++;
    return __real_posix_memalign(out, alignment, size);
}
void *__wrap_aligned_alloc(size_t alignment, size_t size)
{
    c_library_calls++;
    return __real_aligned_alloc(alignment, size);
}

/* ---------------------------------------------------- the counting allocator */

#define BLOCK_HEADER 16 /* requested size, then a mark */
#define BLOCK_MARK UINT64_C(0x6f6e63652d6d656d)

typedef struct counting {
    uint64_t live_bytes, live_blocks;
    uint64_t calls;      /* malloc, calloc and realloc calls */
    uint64_t fail_at;    /* the call that returns NULL (0: none) */
    uint64_t bad_frees;  /* frees of blocks this allocator did not make (or twice) */
    uint64_t misaligned; /* blocks whose address is a multiple of 64 (never) */
    void **set;          /* live blocks: open addressing, NULL empty, TOMBSTONE freed */
    size_t set_size, set_used;
} counting;

static counting heap;
static char tombstone;
#define TOMBSTONE ((void *)&tombstone)

static size_t slot_of(const void *p, size_t size)
{
    return (size_t)(testing_mix((uint64_t)(uintptr_t)p) & (size - 1));
}

static void set_insert(void *p);

static void set_grow(void)
{
    void **old = heap.set;
    size_t old_size = heap.set_size;
    heap.set_size = old_size ? old_size * 2 : 1024;
    heap.set = __real_calloc(heap.set_size, sizeof *heap.set);
    if (heap.set == NULL)
        abort(); /* the test's own bookkeeping; never the library's */
    heap.set_used = 0;
    for (size_t i = 0; i < old_size; i++)
        if (old[i] != NULL && old[i] != TOMBSTONE)
            set_insert(old[i]);
    __real_free(old);
}

static void set_insert(void *p)
{
    if (2 * (heap.set_used + 1) > heap.set_size)
        set_grow();
    size_t i = slot_of(p, heap.set_size);
    while (heap.set[i] != NULL && heap.set[i] != TOMBSTONE)
        i = (i + 1) & (heap.set_size - 1);
    heap.set[i] = p;
    heap.set_used++;
}

/* Remove p; false if it is not a live block of ours. */
static bool set_remove(const void *p)
{
    if (heap.set_size == 0)
        return false;
    for (size_t i = slot_of(p, heap.set_size); heap.set[i] != NULL; i = (i + 1) & (heap.set_size - 1))
        if (heap.set[i] == p) {
            heap.set[i] = TOMBSTONE; /* still counted in set_used: grows rebuild */
            return true;
        }
    return false;
}

static bool set_contains(const void *p)
{
    if (heap.set_size == 0)
        return false;
    for (size_t i = slot_of(p, heap.set_size); heap.set[i] != NULL; i = (i + 1) & (heap.set_size - 1))
        if (heap.set[i] == p)
            return true;
    return false;
}

/* The size a live block was requested with. */
static uint64_t block_size(const void *p)
{
    uint64_t size;
    memcpy(&size, (const uint8_t *)p - BLOCK_HEADER, sizeof size);
    return size;
}

/* A block of exactly `size` bytes (AddressSanitizer sees a byte past it) at 16 past a
 * 64-byte boundary. */
static void *block_new(size_t size, bool zero)
{
    heap.calls++;
    if (heap.fail_at != 0 && heap.calls == heap.fail_at)
        return NULL;
    void *raw = NULL;
    if (__real_posix_memalign(&raw, 64, BLOCK_HEADER + size) != 0)
        return NULL;
    uint64_t header[2] = {size, BLOCK_MARK};
    memcpy(raw, header, sizeof header);
    uint8_t *p = (uint8_t *)raw + BLOCK_HEADER;
    if (zero)
        memset(p, 0, size);
    else
        memset(p, 0xA5, size); /* malloc promises nothing: neither may the library assume */
    heap.misaligned += (uintptr_t)p % 64 == 0;
    heap.live_bytes += size;
    heap.live_blocks++;
    set_insert(p);
    return p;
}

static void counting_free(void *p)
{
    if (p == NULL)
        return;
    if (!set_remove(p)) {
        heap.bad_frees++;
        return; /* not ours: leave it alone rather than corrupt the C library's heap */
    }
    heap.live_bytes -= block_size(p);
    heap.live_blocks--;
    __real_free((uint8_t *)p - BLOCK_HEADER);
}

static void *counting_malloc(size_t size)
{
    return block_new(size, false);
}

static void *counting_calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    return block_new(count * size, true);
}

/* Always moves the block, so a pointer kept across a realloc is caught. */
static void *counting_realloc(void *p, size_t size)
{
    if (p == NULL)
        return counting_malloc(size);
    if (!set_contains(p)) {
        heap.bad_frees++;
        return NULL;
    }
    void *q = block_new(size, false);
    if (q == NULL)
        return NULL;
    uint64_t old = block_size(p);
    memcpy(q, p, (size_t)(old < size ? old : size));
    counting_free(p);
    return q;
}

static const once_allocator counting_allocator = {counting_malloc, counting_calloc,
                                                  counting_realloc, counting_free};

/* Install the counting allocator with no failure planned; false if refused. */
static bool counting_install(void)
{
    heap.fail_at = 0;
    return once_set_allocator(&counting_allocator) == ONCE_OK;
}

/* ------------------------------------------------------------- scenarios */

typedef struct structure {
    const char *name;
    once_type type;
    void (*configure)(once_config *c);
    uint64_t keys;    /* keys added: enough for the growing ones to grow */
    uint64_t step_ms; /* event time between keys */
} structure;

static void set_static(once_config *c)
{
    c->capacity = 600;
    c->error = 0.01;
}
static void set_window(once_config *c)
{
    c->window = 150;
    c->error = 0.01;
}
static void set_tlbf(once_config *c)
{
    c->capacity = 60;
    c->error = 0.01;
    c->span_ms = 400;
}
static void set_timer(once_config *c)
{
    c->capacity = 300;
    c->error = 0.01;
    c->span_ms = 1000;
    c->dynamic = false;
}
static void set_timer_dynamic(once_config *c)
{
    c->capacity = 120;
    c->error = 0.01;
    c->span_ms = 100000;
    c->dynamic = true;
}
/* Growth from a first table for 30 keys a span, and settling: 500 keys in 1.5 spans. */
static void set_tagged(once_config *c)
{
    c->capacity = 30;
    c->error = 0.01;
    c->span_ms = 1000;
}
static void set_scalable(once_config *c)
{
    c->capacity = 60;
    c->error = 0.01;
}
static void set_dbf(once_config *c)
{
    c->capacity = 40;
    c->error = 0.01;
}
static void set_dbf_sliced(once_config *c)
{
    set_dbf(c);
    c->bit_slice = true;
}
static void set_dbpbf(once_config *c)
{
    c->capacity = 100;
    c->error = 0.01;
}

static const structure structures[] = {
    {"standard", ONCE_STANDARD, set_static, 400, 0},
    {"partitioned", ONCE_PARTITIONED, set_static, 400, 0},
    {"blocked", ONCE_BLOCKED, set_static, 400, 0},
    {"counting", ONCE_COUNTING, set_static, 400, 0},
    {"apbf", ONCE_APBF, set_window, 500, 0},
    {"apbbf", ONCE_APBBF, set_window, 500, 0},
    {"tlbf", ONCE_TLBF, set_tlbf, 700, 3},
    {"timer", ONCE_TIMER, set_timer, 500, 5},
    {"timer dynamic", ONCE_TIMER, set_timer_dynamic, 500, 1},
    {"scalable", ONCE_SCALABLE, set_scalable, 500, 0},
    {"dbf", ONCE_DBF, set_dbf, 220, 0},
    {"dbf bit slices", ONCE_DBF, set_dbf_sliced, 220, 0},
    {"bpbf", ONCE_BPBF, set_static, 400, 0},
    {"dbpbf", ONCE_DBPBF, set_dbpbf, 450, 0},
    {"tagged", ONCE_TAGGED, set_tagged, 500, 3},
};
#define STRUCTURES (sizeof structures / sizeof structures[0])

/* What a scenario holds: the filters alive and the buffers the library handed over. */
#define HELD_FILTERS 4
#define HELD_BUFFERS 2
typedef struct held {
    once_filter *filter[HELD_FILTERS];
    void *buffer[HELD_BUFFERS];
} held;

static uint64_t held_bytes(const held *h)
{
    uint64_t total = 0;
    for (int i = 0; i < HELD_FILTERS; i++)
        total += once_bytes(h->filter[i]); /* 0 for NULL */
    for (int i = 0; i < HELD_BUFFERS; i++)
        total += h->buffer[i] != NULL ? block_size(h->buffer[i]) : 0;
    return total;
}

static void held_release(held *h)
{
    for (int i = 0; i < HELD_FILTERS; i++) {
        once_free(h->filter[i]);
        h->filter[i] = NULL;
    }
    for (int i = 0; i < HELD_BUFFERS; i++) {
        once_free_buffer(h->buffer[i]);
        h->buffer[i] = NULL;
    }
}

/* A run's record: checks failed, and whether an allocation failure ended it early. */
typedef struct run {
    const structure *s;
    uint64_t fail_at;
    bool stopped;  /* a call returned ONCE_ERR_NOMEM */
    int mismatch;  /* steps after which the allocator and once_bytes disagreed */
    int bad_status;
    int leaked;    /* failed calls that kept memory */
} run;

static void account(run *r, const held *h, const char *step)
{
    if (heap.live_bytes != held_bytes(h)) {
        if (r->mismatch++ == 0)
            fprintf(stderr, "%s (fail at %" PRIu64 "), after %s: %" PRIu64
                            " bytes live, once_bytes and buffers say %" PRIu64 "\n",
                    r->s->name, r->fail_at, step, heap.live_bytes, held_bytes(h));
    }
}

/* Statuses besides ONCE_OK a step may return. */
#define ALLOW(status) (1u << (status))
#define ONLY_OK 0u

/* The outcome of one call.  `atomic`: a call that either does all or changes nothing
 * (one key, a construction, a save), so a failure must leave the live bytes where they
 * were.  Returns false when the scenario must stop (out of memory). */
static bool outcome(run *r, const held *h, once_status st, uint64_t live_before, bool atomic,
                    const char *step, unsigned allowed)
{
    if (st == ONCE_ERR_NOMEM) {
        r->stopped = true;
        if (atomic && heap.live_bytes != live_before) {
            r->leaked++;
            fprintf(stderr, "%s (fail at %" PRIu64 "): failed %s kept %" PRId64 " bytes\n",
                    r->s->name, r->fail_at, step,
                    (int64_t)(heap.live_bytes - live_before));
        }
        account(r, h, step);
        return false;
    }
    if (st != ONCE_OK && !(allowed & ALLOW(st))) {
        r->bad_status++;
        fprintf(stderr, "%s (fail at %" PRIu64 "): %s returned %s\n", r->s->name, r->fail_at,
                step, once_strerror(st));
    }
    account(r, h, step);
    return true;
}

#define STEP(expr, atomic, allowed)                                                             \
    do {                                                                                        \
        uint64_t live_before_ = heap.live_bytes;                                                \
        once_status st_ = (expr);                                                               \
        if (!outcome(r, h, st_, live_before_, atomic, #expr, allowed))                          \
            return;                                                                             \
    } while (0)

static void key_at(once_key *k, testing_key *storage, uint64_t domain, uint64_t i, uint64_t t)
{
    *storage = testing_key_make(domain, i);
    k->data = storage;
    k->len = sizeof *storage;
    k->time_ms = t;
}

/* The scenario body; returns at the first allocation failure with everything still in
 * `h` (the caller frees it). */
static void scenario_body(run *r, held *h)
{
    const structure *s = r->s;
    once_config c = testing_config(s->type, 0xa110c);
    s->configure(&c);

    STEP(once_create(&h->filter[0], &c), true, ONLY_OK);
    once_filter *f = h->filter[0];
    static const char metadata[] = "fields=2;delimiter=tab;allocation test";
    STEP(once_set_metadata(f, metadata, sizeof metadata), true, ONLY_OK);

    /* Half the keys one by one, half in batches. */
    uint64_t t = 1000, half = s->keys / 2;
    for (uint64_t i = 0; i < half; i++, t += s->step_ms) {
        testing_key k = testing_key_make(1, i);
        bool seen = false;
        STEP(once_test_and_add(f, &k, sizeof k, t, &seen), true, ONLY_OK);
    }
    enum { BATCH = 64 };
    once_key keys[BATCH];
    testing_key storage[BATCH];
    uint8_t answers[BATCH];
    for (uint64_t i = half; i < s->keys;) {
        size_t n = 0;
        for (; n < BATCH && i < s->keys; n++, i++, t += s->step_ms)
            key_at(&keys[n], &storage[n], 1, i, t);
        STEP(once_test_and_add_batch(f, keys, n, answers), false, ONLY_OK);
    }
    t -= s->step_ms;
    for (size_t n = 0; n < BATCH; n++)
        key_at(&keys[n], &storage[n], 1, s->keys - 1 - n, t);
    STEP(once_query_batch(f, keys, BATCH, answers), true, ONLY_OK);
    for (size_t n = 0; n < BATCH; n++)
        CHECK(answers[n] == 1 || s->type == ONCE_APBF || s->type == ONCE_APBBF ||
              s->type == ONCE_TLBF || s->type == ONCE_TIMER);
    once_stats stats;
    STEP(once_get_stats(f, &stats), true, ONLY_OK);
    CHECK(stats.bytes == once_bytes(f));
    once_cardinality card;
    STEP(once_estimate_cardinality(f, t, 0.9, &card), true, ALLOW(ONCE_ERR_UNSUPPORTED));

    /* Save, load, combine with the copy. */
    size_t len = 0;
    STEP(once_save_to_buffer(f, &h->buffer[0], &len), true, ONLY_OK);
    CHECK(block_size(h->buffer[0]) == len);
    STEP(once_load(&h->filter[1], h->buffer[0], len), true, ONLY_OK);
    once_filter *g = h->filter[1];
    CHECK(once_bytes(g) <= once_bytes(f));
    STEP(once_union(f, g), false, ALLOW(ONCE_ERR_UNSUPPORTED) | ALLOW(ONCE_ERR_MISMATCH));
    STEP(once_intersect(f, g), false, ALLOW(ONCE_ERR_UNSUPPORTED) | ALLOW(ONCE_ERR_MISMATCH));

    /* The structure's own calls. */
    switch (s->type) {
    case ONCE_COUNTING:
    case ONCE_DBF:
        for (uint64_t i = 0; i < 20; i++) {
            testing_key k = testing_key_make(1, i);
            STEP(once_remove(f, &k, sizeof k, t), false,
                 ALLOW(ONCE_ERR_UNSUPPORTED) | ALLOW(ONCE_ERR_NOT_PRESENT));
        }
        break;
    case ONCE_BPBF:
    case ONCE_DBPBF: {
        once_bpbf_state state;
        STEP(once_bpbf_get_state(g, &state), true, ONLY_OK);
        STEP(once_bpbf_reduce(g, (state.geometry.blocks + 1) / 2), true, ONLY_OK);
        STEP(once_bpbf_union(f, g), true, ONLY_OK);
        STEP(once_bpbf_intersect(f, g), true, ONLY_OK);
        break;
    }
    default:
        break;
    }
    if (s->type == ONCE_DBF) {
        /* A delta from the source to a new replica, then one more. */
        STEP(once_create(&h->filter[2], &c), true, ONLY_OK);
        size_t delta_len = 0;
        uint64_t since = 0;
        STEP(once_dbf_export_delta(g, since, &h->buffer[1], &delta_len), true, ONLY_OK);
        STEP(once_dbf_apply_delta(h->filter[2], h->buffer[1], delta_len), true, ONLY_OK);
        once_free_buffer(h->buffer[1]);
        h->buffer[1] = NULL;
        since = once_dbf_version(g);
        for (uint64_t i = 0; i < 60; i++) {
            testing_key k = testing_key_make(2, i);
            STEP(once_add(g, &k, sizeof k, t), true, ONLY_OK);
        }
        STEP(once_dbf_export_delta(g, since, &h->buffer[1], &delta_len), true, ONLY_OK);
        STEP(once_dbf_apply_delta(h->filter[2], h->buffer[1], delta_len), true, ONLY_OK);
        STEP(once_dbf_merge(h->filter[2]), true, ONLY_OK);
    }
    /* A second metadata, larger, then none. */
    static const char longer[200] = "metadata replaced by a longer one";
    STEP(once_set_metadata(g, longer, sizeof longer), true, ONLY_OK);
    STEP(once_set_metadata(f, NULL, 0), true, ONLY_OK);
    STEP(once_clear(f), true, ONLY_OK);
    once_free_buffer(h->buffer[1]);
    h->buffer[1] = NULL;
    STEP(once_save_to_buffer(g, &h->buffer[1], &len), true, ONLY_OK);
    /* Keys into the copy after a clear of the original, then free one by one. */
    for (uint64_t i = 0; i < 50; i++, t += s->step_ms) {
        testing_key k = testing_key_make(3, i);
        bool seen = false;
        STEP(once_test_and_add(g, &k, sizeof k, t, &seen), true, ONLY_OK);
    }
    once_free(h->filter[0]);
    h->filter[0] = NULL;
    account(r, h, "once_free");
    once_free_buffer(h->buffer[0]);
    h->buffer[0] = NULL;
    account(r, h, "once_free_buffer");
}

/* One run of a scenario with the allocator failing call `fail_at` (0: none).  Returns
 * the allocator calls it made. */
static uint64_t scenario(const structure *s, uint64_t fail_at, run *r)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    r->fail_at = fail_at;
    heap.calls = 0;
    heap.fail_at = fail_at;
    held h;
    memset(&h, 0, sizeof h);
    uint64_t live = heap.live_bytes, blocks = heap.live_blocks;
    scenario_body(r, &h);
    held_release(&h);
    heap.fail_at = 0;
    if (heap.live_bytes != live || heap.live_blocks != blocks) {
        r->leaked++;
        fprintf(stderr, "%s (fail at %" PRIu64 "): %" PRIu64 " bytes in %" PRIu64
                        " blocks left after freeing everything\n",
                s->name, fail_at, heap.live_bytes - live, heap.live_blocks - blocks);
    }
    return heap.calls;
}

/* ------------------------------------------------------------------ cases */

/* Every structure through its scenario: exact accounting after every step, nothing left,
 * nothing from the C library's allocator, nothing freed that the allocator did not make. */
static void every_byte_through_the_hook(void)
{
    REQUIRE(counting_install());
    uint64_t c_before = c_library_calls, bad_before = heap.bad_frees;
    for (size_t i = 0; i < STRUCTURES; i++) {
        run r;
        uint64_t calls = scenario(&structures[i], 0, &r);
        fprintf(stderr, "%-15s %4" PRIu64 " allocator calls\n", structures[i].name, calls);
        CHECK(!r.stopped && r.mismatch == 0 && r.bad_status == 0 && r.leaked == 0);
        CHECK(calls > 5);
    }
    CHECK(c_library_calls == c_before);
    CHECK(heap.bad_frees == bad_before);
    CHECK(heap.misaligned == 0);
    CHECK(heap.live_bytes == 0 && heap.live_blocks == 0);
    CHECK_OK(once_set_allocator(NULL));
}

/* Every scenario with its Nth allocation failing, for every N up to its calls. */
static void every_failure_returns_nomem_and_leaks_nothing(void)
{
    REQUIRE(counting_install());
    uint64_t c_before = c_library_calls, bad_before = heap.bad_frees;
    for (size_t i = 0; i < STRUCTURES; i++) {
        run r;
        uint64_t calls = scenario(&structures[i], 0, &r);
        uint64_t stopped = 0, failures = 0;
        for (uint64_t n = 1; n <= calls; n++) {
            scenario(&structures[i], n, &r);
            stopped += r.stopped;
            failures += r.mismatch + r.bad_status + r.leaked;
        }
        fprintf(stderr, "%-15s failed each of %4" PRIu64 " calls: %4" PRIu64
                        " runs stopped on ONCE_ERR_NOMEM, %" PRIu64 " problems\n",
                structures[i].name, calls, stopped, failures);
        CHECK(failures == 0);
        CHECK(stopped > calls / 2); /* most failures reach the caller; a few are absorbed */
    }
    CHECK(c_library_calls == c_before);
    CHECK(heap.bad_frees == bad_before);
    CHECK(heap.live_bytes == 0 && heap.live_blocks == 0);
    CHECK_OK(once_set_allocator(NULL));
}

/* Cache-line blocks from an allocator that aligns to 16 only: aligned, zeroed, of
 * exactly once_aligned_footprint, and the flat arrays and the SIMD paths on them. */
static void cache_line_alignment_survives_the_host(void)
{
    REQUIRE(counting_install());
    for (size_t size = 1; size <= 4200; size += size < 300 ? 1 : 37) {
        uint64_t live = heap.live_bytes;
        uint8_t *p = once_aligned_alloc(size);
        REQUIRE(p != NULL);
        CHECK((uintptr_t)p % ONCE_CACHE_LINE == 0);
        CHECK(heap.live_bytes - live == once_aligned_footprint(size));
        bool zero = true;
        for (size_t i = 0; i < size; i++)
            zero &= p[i] == 0;
        CHECK(zero);
        memset(p, 0xFF, size); /* AddressSanitizer: every byte is the block's */
        once_aligned_free(p);
        CHECK(heap.live_bytes == live);
    }
    /* A large one: no huge-page hint under a host's allocator, still aligned and zero. */
    size_t large = ((size_t)5 << 20) + 8;
    uint8_t *p = once_aligned_alloc(large);
    REQUIRE(p != NULL);
    CHECK((uintptr_t)p % ONCE_CACHE_LINE == 0);
    CHECK(p[0] == 0 && p[large / 2] == 0 && p[large - 1] == 0);
    once_aligned_free(p);
    CHECK(once_aligned_alloc(SIZE_MAX - 8) == NULL);

    /* The static layouts' arrays, and the blocked layout's three paths on them. */
    const once_type flat[] = {ONCE_STANDARD, ONCE_PARTITIONED, ONCE_BLOCKED, ONCE_COUNTING};
    const char *paths[] = {"scalar", "avx2", "avx512"};
    for (size_t i = 0; i < 4; i++) {
        for (size_t path = 0; path < 3; path++) {
            if (flat[i] != ONCE_BLOCKED && path > 0)
                break;
            if (once_force_simd_path(paths[path]) != ONCE_OK)
                continue; /* not on this CPU */
            once_filter *f = NULL;
            CHECK_OK(once_create_for_capacity(&f, flat[i], 3000, 0.01));
            REQUIRE(f != NULL);
            CHECK((uintptr_t)ARRAY(f)->array % ONCE_CACHE_LINE == 0);
            uint64_t missing = 0;
            for (uint64_t k = 0; k < 3000; k++) {
                testing_key key = testing_key_make(7, k);
                CHECK_OK(once_add(f, &key, sizeof key, 0));
            }
            for (uint64_t k = 0; k < 3000; k++) {
                testing_key key = testing_key_make(7, k);
                bool present = false;
                CHECK_OK(once_query(f, &key, sizeof key, 0, &present));
                missing += !present;
            }
            CHECK(missing == 0);
            once_free(f);
        }
    }
    CHECK_OK(once_force_simd_path(NULL));
    CHECK(heap.live_bytes == 0);
    CHECK_OK(once_set_allocator(NULL));
}

/* once_set_allocator: a change waits until nothing is alive; the same allocator is
 * always accepted; without one the C library's runs. */
static void allocator_changes_only_when_nothing_is_alive(void)
{
    once_allocator partial = counting_allocator;
    partial.realloc = NULL;
    CHECK_STATUS(once_set_allocator(&partial), ONCE_ERR_INVALID);

    /* The C library's allocator by default: the wrapped calls count the library's. */
    CHECK_OK(once_set_allocator(NULL));
    uint64_t c_before = c_library_calls;
    once_filter *f = NULL;
    CHECK_OK(once_create_for_capacity(&f, ONCE_BLOCKED, 1000, 0.01));
    CHECK(c_library_calls > c_before);
    CHECK_STATUS(once_set_allocator(&counting_allocator), ONCE_ERR_INVALID);
    CHECK_OK(once_set_allocator(NULL)); /* the one in use */
    once_free(f);

    CHECK_OK(once_set_allocator(&counting_allocator));
    c_before = c_library_calls;
    CHECK_OK(once_create_for_capacity(&f, ONCE_BLOCKED, 1000, 0.01));
    CHECK(heap.live_bytes == once_bytes(f));
    CHECK_STATUS(once_set_allocator(NULL), ONCE_ERR_INVALID);
    CHECK_OK(once_set_allocator(&counting_allocator));
    void *buffer = NULL;
    size_t len = 0;
    CHECK_OK(once_save_to_buffer(f, &buffer, &len));
    once_free(f);
    /* A buffer the library handed over is alive too. */
    CHECK_STATUS(once_set_allocator(NULL), ONCE_ERR_INVALID);
    once_filter *g = NULL;
    CHECK_OK(once_load(&g, buffer, len));
    once_free_buffer(buffer);
    once_free(g);
    once_free_buffer(NULL);
    CHECK(heap.live_bytes == 0);
    CHECK(c_library_calls == c_before);
    CHECK_OK(once_set_allocator(NULL));
    CHECK_OK(once_set_allocator(NULL));
}

/* once_malloc, once_calloc, once_realloc and once_free_memory are the installed
 * allocator's, as the C library's calls behave, and hold it in place while alive. */
static void public_calls_allocate_through_the_installed_allocator(void)
{
    REQUIRE(counting_install());
    uint64_t c_before = c_library_calls;
    uint8_t *p = once_malloc(100);
    REQUIRE(p != NULL);
    CHECK(heap.live_bytes == 100 && heap.live_blocks == 1);
    CHECK_STATUS(once_set_allocator(NULL), ONCE_ERR_INVALID);
    uint64_t *q = once_calloc(10, sizeof *q);
    REQUIRE(q != NULL);
    bool zero = true;
    for (int i = 0; i < 10; i++)
        zero &= q[i] == 0;
    CHECK(zero && heap.live_bytes == 180);
    CHECK(once_calloc(SIZE_MAX, 2) == NULL);
    memset(p, 7, 100);
    p = once_realloc(p, 300);
    REQUIRE(p != NULL);
    CHECK(p[99] == 7 && heap.live_bytes == 380 && heap.live_blocks == 2);
    heap.fail_at = heap.calls + 1; /* a failed realloc keeps the block */
    CHECK(once_realloc(p, 600) == NULL);
    CHECK(heap.live_bytes == 380);
    heap.fail_at = 0;
    void *empty = once_malloc(0); /* one byte, as the library's own */
    CHECK(empty != NULL && heap.live_bytes == 381);
    once_free_memory(empty);
    once_free_memory(p);
    once_free_memory(q);
    once_free_memory(NULL);
    CHECK(heap.live_bytes == 0 && heap.live_blocks == 0 && heap.bad_frees == 0);
    CHECK(c_library_calls == c_before);
    CHECK_OK(once_set_allocator(NULL));
}

/* Each cap bounds once_bytes, metadata included: growth stops at the cap with
 * ONCE_ERR_FULL, and metadata that would pass it is refused the same way. */
static void caps_bound_once_bytes(void)
{
    REQUIRE(counting_install());
    struct {
        const structure *s;
        uint64_t cap;
    } capped[] = {
        {&structures[6], 48 << 10},  /* tlbf: its slice table, then slices */
        {&structures[8], 24 << 10},  /* dynamic timer */
        {&structures[9], 16 << 10},  /* scalable */
        {&structures[10], 6 << 10},  /* dbf */
        {&structures[11], 8 << 10},  /* dbf, bit slices */
        {&structures[13], 4 << 10},  /* dbpbf */
        {&structures[14], 4 << 10},  /* tagged */
    };
    for (size_t i = 0; i < sizeof capped / sizeof capped[0]; i++) {
        const structure *s = capped[i].s;
        once_config c = testing_config(s->type, 0xca9);
        s->configure(&c);
        c.max_bytes = capped[i].cap;
        once_filter *f = NULL;
        CHECK_OK(once_create(&f, &c));
        REQUIRE(f != NULL);
        static const char metadata[64] = "a little metadata";
        CHECK_OK(once_set_metadata(f, metadata, sizeof metadata));
        once_status st = ONCE_OK;
        uint64_t t = 1000, i_key = 0; /* one instant: nothing expires, the windows grow */
        for (; i_key < 1000000 && st == ONCE_OK; i_key++) {
            testing_key k = testing_key_make(9, i_key);
            bool seen = false;
            st = once_test_and_add(f, &k, sizeof k, t, &seen);
            CHECK(once_bytes(f) <= c.max_bytes && heap.live_bytes == once_bytes(f));
        }
        fprintf(stderr, "%-15s cap %6" PRIu64 ": %s after %" PRIu64 " keys, %" PRIu64
                        " bytes held\n",
                s->name, c.max_bytes, once_strerror(st), i_key, once_bytes(f));
        CHECK_STATUS(st, ONCE_ERR_FULL);
        /* Metadata up to the cap is taken, one byte more is not. */
        uint64_t room = c.max_bytes - (once_bytes(f) - sizeof metadata);
        if (room <= ONCE_MAX_METADATA) {
            static const uint8_t big[ONCE_MAX_METADATA];
            CHECK_STATUS(once_set_metadata(f, big, (size_t)room + 1), ONCE_ERR_FULL);
            CHECK_OK(once_set_metadata(f, big, (size_t)room));
            CHECK(once_bytes(f) == c.max_bytes);
        }
        /* A saved filter at its cap loads again. */
        void *buffer = NULL;
        size_t len = 0;
        CHECK_OK(once_save_to_buffer(f, &buffer, &len));
        once_filter *g = NULL;
        CHECK_OK(once_load(&g, buffer, len));
        CHECK(g != NULL && once_bytes(g) <= c.max_bytes);
        once_free(g);
        once_free_buffer(buffer);
        once_free(f);
    }
    CHECK(heap.live_bytes == 0);
    CHECK_OK(once_set_allocator(NULL));
}

/* The scenarios above cover every registered structure: a structure added to the
 * registry without one here fails, rather than going untested under failing
 * allocations. */
static void every_registered_structure_has_a_scenario(void)
{
    for (size_t r = 0; r < once_structure_count(); r++) {
        once_type type = once_structure_at(r)->type;
        if (once_structure_at(r)->kind == ONCE_KIND_SLICE)
            continue; /* no keys to run a scenario with: test_slice.c fails its allocations */
        bool found = false;
        for (size_t i = 0; i < STRUCTURES; i++)
            found |= structures[i].type == type;
        if (!found)
            fprintf(stderr, "no allocation scenario for %s\n", once_type_name(type));
        CHECK(found);
    }
}

static const testing_case cases[] = {
    {"every_registered_structure_has_a_scenario", every_registered_structure_has_a_scenario},
    {"every_byte_through_the_hook", every_byte_through_the_hook},
    {"every_failure_returns_nomem_and_leaks_nothing", every_failure_returns_nomem_and_leaks_nothing},
    {"cache_line_alignment_survives_the_host", cache_line_alignment_survives_the_host},
    {"allocator_changes_only_when_nothing_is_alive", allocator_changes_only_when_nothing_is_alive},
    {"caps_bound_once_bytes", caps_bound_once_bytes},
    {"public_calls_allocate_through_the_installed_allocator",
     public_calls_allocate_through_the_installed_allocator},
};

TESTING_MAIN(cases)
