/*
 * testing.h - the smallest harness that reads as a specification.
 *
 * A test binary lists its cases in a table; `binary NAME` runs one case (CTest
 * registers each case as its own test), `binary` alone runs them all.  CHECK records
 * a failure and goes on, so one run reports every broken expectation.
 */
#ifndef ONCE_TESTING_H
#define ONCE_TESTING_H

#include "once_advanced.h"
#include "once_sliced.h"
#include "saved_layout.h"
#include "zipf.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int testing_failures;

#define CHECK(cond)                                                                             \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);            \
            testing_failures++;                                                                 \
        }                                                                                       \
    } while (0)

#define CHECK_STATUS(expr, want)                                                                \
    do {                                                                                        \
        once_status got_ = (expr);                                                              \
        if (got_ != (want)) {                                                                   \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %s\n", __FILE__, __LINE__,    \
                    #expr, (int)got_, once_strerror(got_), #want);                              \
            testing_failures++;                                                                 \
        }                                                                                       \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, ONCE_OK)

/* Fatal: stop this case (used when later checks would only cascade). */
#define REQUIRE(cond)                                                                           \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond);          \
            testing_failures++;                                                                 \
            return;                                                                             \
        }                                                                                       \
    } while (0)

typedef struct testing_case {
    const char *name;
    void (*run)(void);
} testing_case;

static inline int testing_main(int argc, char **argv, const testing_case *cases, size_t count)
{
    int ran = 0;
    for (size_t i = 0; i < count; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
            continue;
        int before = testing_failures;
        cases[i].run();
        fprintf(stderr, "%s %s\n", testing_failures == before ? "PASS" : "FAIL", cases[i].name);
        ran++;
    }
    if (ran == 0) {
        fprintf(stderr, "no test named %s\n", argc > 1 ? argv[1] : "(none)");
        return 2;
    }
    return testing_failures ? 1 : 0;
}

#define TESTING_MAIN(cases)                                                                     \
    int main(int argc, char **argv)                                                             \
    {                                                                                           \
        return testing_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));              \
    }

/* Deterministic 16-byte keys: key (domain, i) is distinct for distinct pairs. */
static inline uint64_t testing_mix(uint64_t x)
{
    x += UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

typedef struct testing_key {
    uint64_t w[2];
} testing_key;

static inline testing_key testing_key_make(uint64_t domain, uint64_t i)
{
    testing_key k;
    k.w[0] = i;                               /* distinct for distinct i */
    k.w[1] = testing_mix(domain) ^ testing_mix(i + (domain << 48));
    k.w[0] ^= testing_mix(domain * 31 + 7) & UINT64_C(0xFFFF000000000000);
    return k;
}

/* Test-and-add key i of `domain` at time t (ms; ignored by filters without a clock):
 * was it reported seen? */
static inline bool testing_seen(once_filter *f, uint64_t domain, uint64_t i, uint64_t t)
{
    testing_key k = testing_key_make(domain, i);
    bool seen = false;
    CHECK_OK(once_test_and_add(f, &k, sizeof k, t, &seen));
    return seen;
}

/* Is key i of `domain` present at time t? */
static inline bool testing_present(const once_filter *f, uint64_t domain, uint64_t i,
                                   uint64_t t)
{
    testing_key k = testing_key_make(domain, i);
    bool present = false;
    CHECK_OK(once_query(f, &k, sizeof k, t, &present));
    return present;
}

/* Test-and-add keys 0 .. n-1 of `domain` to a sliced filter (time 0). */
static inline void testing_sliced_fill(once_sliced *f, uint64_t domain, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        testing_key k = testing_key_make(domain, i);
        bool seen = false;
        CHECK_OK(once_sliced_test_and_add(f, &k, sizeof k, 0, &seen));
    }
}

/* |observed - expected| within `sigmas` binomial standard deviations of `trials`. */
static inline int testing_within_sigmas(uint64_t hits, uint64_t trials, double p, double sigmas)
{
    double observed = (double)hits / (double)trials;
    double sd = sqrt(p * (1.0 - p) / (double)trials);
    return fabs(observed - p) <= sigmas * sd;
}

/* once_create, saying why on stderr when it refuses; NULL then. */
static inline once_filter *testing_create(const once_config *config)
{
    once_filter *f = NULL;
    once_status st = once_create(&f, config);
    if (st != ONCE_OK)
        fprintf(stderr, "create %s: %s\n", once_type_name(config->type), once_strerror(st));
    return f;
}

/* once_config_init's defaults for `type` under a fixed seed, so that a run repeats:
 * the start of every configuration a test builds. */
static inline once_config testing_config(once_type type, uint64_t seed)
{
    once_config c;
    once_config_init(&c, type);
    c.seed = seed;
    c.seed_is_set = true;
    return c;
}

/* A configuration that every kind of structure takes, at error 0.01: `capacity` keys
 * (for a time window, its first guess of the keys a span), a count window of `window`
 * keys, a time window of `span_ms`; each structure reads the fields of its kind. */
static inline once_config testing_config_any_kind(once_type type, uint64_t capacity,
                                                  uint64_t window, uint64_t span_ms,
                                                  uint64_t seed)
{
    once_config c = testing_config(type, seed);
    c.capacity = capacity;
    c.error = 0.01;
    c.window = window;
    c.span_ms = span_ms;
    return c;
}

/* A filter for (capacity, error) under a fixed seed. */
static inline once_filter *testing_make(once_type type, uint64_t capacity, double error,
                                        uint64_t seed)
{
    once_config c = testing_config(type, seed);
    c.capacity = capacity;
    c.error = error;
    return testing_create(&c);
}

/* The saved form in a new buffer (once_free_buffer() it), or NULL after saying why. */
static inline uint8_t *testing_save(const once_filter *f, size_t *len)
{
    void *buf = NULL;
    *len = 0;
    once_status st = once_save_to_buffer(f, &buf, len);
    if (st != ONCE_OK) {
        fprintf(stderr, "save: %s\n", once_strerror(st));
        return NULL;
    }
    return (uint8_t *)buf;
}

/* A filter's statistics, zeroed first (a failed call leaves zeros). */
static inline once_stats testing_stats(const once_filter *f)
{
    once_stats s;
    memset(&s, 0, sizeof s);
    once_get_stats(f, &s);
    return s;
}

/* Zipf(s) over [0, n) (zipf.h), drawn from a splitmix64 state. */
typedef zipf_table testing_zipf;

static inline testing_zipf testing_zipf_make(uint64_t n, double s)
{
    return zipf_table_make(n, s);
}

/* A draw; *state is a splitmix64 state advanced by one step. */
static inline uint64_t testing_zipf_draw(const testing_zipf *z, uint64_t *state)
{
    *state = testing_mix(*state);
    return zipf_rank(z, (double)(*state >> 11) * 0x1.0p-53);
}

/* ------------------------------------------------------ saved-file surgery */

/* Little-endian fields of a saved filter, for tests that edit files as an attacker
 * would. */
static inline void testing_put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t testing_get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* Recompute the trailing XXH3-64 checksum, as a writer who means harm would. */
static inline void testing_reseal(uint8_t *buf, size_t len)
{
    if (len >= 8)
        testing_put_le(buf + len - 8, XXH3_64bits(buf, len - 8), 8);
}

/* `f` saved and loaded again, or NULL after a failed check (the save, or the load of
 * what the library saved itself). */
static inline once_filter *testing_reload(const once_filter *f)
{
    size_t len = 0;
    uint8_t *saved = testing_save(f, &len);
    CHECK(saved != NULL);
    once_filter *g = NULL;
    if (saved != NULL)
        CHECK_OK(once_load(&g, saved, len));
    once_free_buffer(saved);
    return g;
}

/* Do two filters save to the same bytes? */
static inline bool testing_same_save(const once_filter *a, const once_filter *b)
{
    size_t la = 0, lb = 0;
    uint8_t *ba = testing_save(a, &la), *bb = testing_save(b, &lb);
    bool same = ba && bb && la == lb && memcmp(ba, bb, la) == 0;
    once_free_buffer(ba);
    once_free_buffer(bb);
    return same;
}

/* Do two filters that differ in their memory cap alone save to the same bytes (the cap is
 * in the file)?  b takes a's cap for the save, and its own back. */
static inline bool testing_same_save_but_cap(const once_filter *a, once_filter *b)
{
    uint64_t cap = once_max_bytes(b);
    bool same = once_set_max_bytes(b, once_max_bytes(a)) == ONCE_OK && testing_same_save(a, b);
    return once_set_max_bytes(b, cap) == ONCE_OK && same;
}

/* An exact-size heap copy, so AddressSanitizer sees any read past the end. */
static inline uint8_t *testing_copy_exact(const void *src, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    if (p != NULL && len != 0)
        memcpy(p, src, len);
    return p;
}

/*
 * Save `f` as a dump of chunks of at most `max_chunk` bytes and load it back with the
 * chunk loader, each chunk an exact heap copy; NULL after saying why.  On the way it
 * checks what every dump must be: chunks within max_chunk, the empty last call, the
 * loader complete exactly at the last chunk, and the bodies (past each chunk's header)
 * exactly once_save's bytes.
 */
static inline once_filter *testing_chunk_reload(const once_filter *f, size_t max_chunk)
{
    size_t saved_len = 0;
    uint8_t *saved = testing_save(f, &saved_len);
    uint8_t *chunk = malloc(max_chunk);
    once_loader *loader = NULL;
    once_status st = saved && chunk ? once_load_begin(&loader) : ONCE_ERR_NOMEM;
    uint64_t cursor = 0;
    size_t at = 0;
    bool complete = false, ok = st == ONCE_OK;
    while (ok) {
        size_t n = 0;
        st = once_save_chunk(f, &cursor, max_chunk, chunk, &n);
        if (st != ONCE_OK || n > max_chunk || (n == 0) != (cursor == 0) || complete != (n == 0)) {
            fprintf(stderr, "chunk save at %zu: %s (%zu bytes)\n", at, once_strerror(st), n);
            ok = false;
            break;
        }
        if (n == 0)
            break;
        size_t body = n - ONCE_CHUNK_HEADER_SIZE;
        if (n < ONCE_CHUNK_HEADER_SIZE || body > saved_len - at ||
            memcmp(chunk + ONCE_CHUNK_HEADER_SIZE, saved + at, body) != 0) {
            fprintf(stderr, "chunk at %zu: the body is not the saved bytes\n", at);
            ok = false;
            break;
        }
        at += body;
        uint8_t *copy = testing_copy_exact(chunk, n);
        st = once_load_chunk(loader, copy, n, &complete);
        free(copy);
        if (st != ONCE_OK || complete != (at == saved_len)) {
            fprintf(stderr, "chunk load at %zu: %s\n", at, once_strerror(st));
            ok = false;
        }
    }
    once_filter *g = NULL;
    if (ok && at == saved_len) {
        st = once_load_finish(loader, &g);
        if (st != ONCE_OK)
            fprintf(stderr, "chunk load finish: %s\n", once_strerror(st));
    } else {
        once_load_abort(loader);
    }
    free(chunk);
    once_free_buffer(saved);
    return g;
}

/*
 * Load an exact heap copy of a saved filter, as the fuzz target does.  A refusal must
 * leave no filter; a filter that loads must save back to the same bytes (the format is
 * canonical) and work: 50 test-and-adds (at times 0, 37, 74, ... ms) that succeed or
 * refuse with ONCE_ERR_FULL, each key then present (but in a time window, whose saved
 * clock may be past these times: a late event inserts nothing).  Returns the load's
 * status.
 */
static inline once_status testing_load_and_vet(const uint8_t *file, size_t len)
{
    uint8_t *copy = testing_copy_exact(file, len);
    once_filter *f = NULL;
    once_status st = once_load(&f, copy, len);
    free(copy);
    if (st != ONCE_OK) {
        CHECK(f == NULL);
        return st;
    }
    size_t again_len = 0;
    uint8_t *again = testing_save(f, &again_len);
    CHECK(again && again_len == len && memcmp(again, file, len) == 0);
    once_free_buffer(again);
    once_stats s = testing_stats(f);
    CHECK(s.bits_set <= s.bits);
    if (s.type == ONCE_SLICE) { /* positions, not keys: sets, each then all set */
        once_memory_site_config config;
        CHECK_OK(once_slice_config(f, &config));
        for (uint64_t i = 0; i < 50; i++) {
            uint64_t p[2] = {testing_mix(i) % config.bits, testing_mix(i + 99) % config.bits};
            uint64_t at = ONCE_MAX_TIME_MS - s.span_ms; /* never late: the clock is at most the end */
            once_site_request q[2] = {
                {.op = ONCE_SITE_TEST_AND_SET, .positions = p, .count = 2, .time_ms = at},
                {.op = ONCE_SITE_TEST, .positions = p, .count = 2, .time_ms = at}};
            CHECK_OK(once_set_max_time_jump(f, 0));
            CHECK_OK(once_slice_run(f, q, 2));
            CHECK(q[0].status == ONCE_OK || q[0].status == ONCE_ERR_FULL);
            CHECK(q[0].status != ONCE_OK || q[1].all_set);
        }
        once_free(f);
        return ONCE_OK;
    }
    bool timed = s.span_ms != 0;
    for (uint64_t i = 0; i < 50; i++) {
        testing_key k = testing_key_make(11, i);
        bool seen = false, present = false;
        once_status w = once_test_and_add(f, &k, sizeof k, i * 37, &seen);
        CHECK(w == ONCE_OK || w == ONCE_ERR_FULL);
        CHECK_OK(once_query(f, &k, sizeof k, i * 37, &present));
        CHECK(w != ONCE_OK || present || timed);
    }
    once_free(f);
    return ONCE_OK;
}

/* Parameter word `param` of a saved file (no metadata), and the file with that word set
 * to `value`, resealed, through testing_load_and_vet: the load's status. */
static inline uint64_t testing_param_of(const uint8_t *file, int param)
{
    return testing_get_le(file + HEADER + 8 * param, 8);
}

static inline once_status testing_with_param(const uint8_t *file, size_t len, int param,
                                             uint64_t value)
{
    uint8_t *b = testing_copy_exact(file, len);
    testing_put_le(b + HEADER + 8 * param, value, 8);
    testing_reseal(b, len);
    once_status st = testing_load_and_vet(b, len);
    free(b);
    return st;
}

/*
 * Batch calls must answer exactly as the one-key calls in array order.  Replays `count`
 * events through `batched` in batches (sizes cycled from `sizes`; per batch the
 * operation cycles test-and-add, test-and-add, add, query) and through `single` with
 * one-key calls, and returns the number of disagreements: answers, statuses, items.
 * A failing status must come from the same key in both, with the keys before it
 * applied; the replay stops there and *stopped gets that status (ONCE_OK otherwise).
 */
static inline uint64_t testing_batch_replay(once_filter *batched, once_filter *single,
                                            const once_key *keys, size_t count,
                                            const size_t *sizes, size_t size_count,
                                            once_status *stopped)
{
    uint64_t differ = 0;
    uint8_t *out = malloc(count ? count : 1);
    *stopped = ONCE_OK;
    size_t at = 0;
    for (size_t chunk = 0; at < count; chunk++) {
        size_t n = sizes[chunk % size_count];
        if (n > count - at)
            n = count - at;
        int op = (int)(chunk % 4); /* 0, 1: test-and-add; 2: add; 3: query */
        const once_key *batch = keys + at;
        memset(out, 0xAA, n);
        once_status sb = op <= 1  ? once_test_and_add_batch(batched, batch, n, out)
                         : op == 2 ? once_add_batch(batched, batch, n)
                                   : once_query_batch(batched, batch, n, out);
        once_status ss = ONCE_OK;
        size_t j = 0;
        for (; j < n && ss == ONCE_OK; j++) {
            bool answer = false;
            ss = op <= 1  ? once_test_and_add(single, batch[j].data, batch[j].len,
                                              batch[j].time_ms, &answer)
                 : op == 2 ? once_add(single, batch[j].data, batch[j].len, batch[j].time_ms)
                           : once_query(single, batch[j].data, batch[j].len, batch[j].time_ms,
                                        &answer);
            if (ss == ONCE_OK && op != 2)
                differ += out[j] != (uint8_t)answer;
        }
        differ += sb != ss;
        differ += once_items(batched) != once_items(single);
        if (ss != ONCE_OK) {
            *stopped = ss;
            break;
        }
        at += n;
    }
    free(out);
    return differ;
}

#endif
