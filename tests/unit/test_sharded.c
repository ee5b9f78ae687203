/*
 * test_sharded.c - what a filter in shards (api/sharded.c, once_create_sharded)
 * promises:
 *
 *   - its batches answer exactly as its one-key calls in order, for every structure
 *     that can be sharded, with event times late, repeated and jumping, through growth
 *     and up to a memory cap that refuses a key: the refusal comes at the same key,
 *     with the same keys before it taken and the same saved bytes;
 *   - with an executor, whatever threads run the shards and in whatever order, the
 *     answers and the saved bytes are those without one;
 *   - time windows keep one clock: a late event in a shard whose own keys are older is
 *     late all the same, and the jump bound is the stream's;
 *   - no false negatives inside a span, and fresh keys reported seen at most at the
 *     target rate (a statistical bound);
 *   - distinct keys are the sum of the shards' estimates, within its interval;
 *   - it reports its structure, P and its memory, holds the cap given to all shards,
 *     saves and loads mid-stream to go on exactly as before, refuses damaged files,
 *     and refuses what cannot be sharded.
 */
#include "every_structure.h"
#include "once_advanced.h"
#include "time_window.h"

#include <pthread.h>

static once_filter *make_sharded(const once_config *c, uint32_t shards)
{
    once_filter *f = NULL;
    once_status st = once_create_sharded(&f, c, shards);
    if (st != ONCE_OK)
        fprintf(stderr, "sharded %s: %s\n", once_type_name(c->type), once_strerror(st));
    return f;
}

/* A tagged time window of `capacity` keys a minute under a cap, in `shards` shards. */
static once_filter *tagged_sharded(uint64_t capacity, uint64_t max_bytes, uint32_t shards,
                                   uint64_t seed)
{
    once_config c = testing_config_any_kind(ONCE_TAGGED, capacity, 0, MINUTE, seed);
    c.max_bytes = max_bytes;
    return make_sharded(&c, shards);
}

/* At most the target rate: `hits` of `trials` within 4 binomial deviations above p. */
static bool at_most_rate(uint64_t hits, uint64_t trials, double p)
{
    return (double)hits <= p * (double)trials + 4.0 * sqrt(p * (1.0 - p) * (double)trials);
}

/* A sharded filter of `c`, or NULL where the config's cap leaves a shard too little for
 * its structure's fixed part (a TLBF's slice table). */
static once_filter *make_if_it_fits(const once_config *c, uint32_t shards)
{
    once_filter *f = NULL;
    once_status st = once_create_sharded(&f, c, shards);
    CHECK(st == ONCE_OK || (c->max_bytes != 0 && (st == ONCE_ERR_TOO_LARGE || st == ONCE_ERR_FULL)));
    return f;
}

static bool shardable(const once_config *c)
{
    once_kind kind = once_structure_of(c->type)->kind;
    return kind != ONCE_KIND_COUNT_WINDOW && kind != ONCE_KIND_SLICE && c->bits == 0;
}

/* Events with times that go forward, repeat, come late and jump: keys from a small
 * domain, so that repeats meet in every shard. */
static once_key *events(size_t count, testing_key *storage, uint64_t domain, uint64_t span)
{
    once_key *keys = malloc(count * sizeof *keys);
    uint64_t t = 1000;
    for (size_t i = 0; i < count; i++) {
        storage[i] = testing_key_make(domain, testing_mix(i) % (count / 3 + 1));
        if (i % 97 == 0)
            t += span / 3; /* a jump within the span */
        else if (i % 13 == 0)
            t += 1;
        uint64_t late = i % 11 == 0 && t > span ? span / 2 : 0;
        keys[i] = (once_key){&storage[i], sizeof storage[i], t - late};
    }
    return keys;
}

/* An executor on threads of its own: each call starts `threads` threads that take the
 * tasks from the last to the first, so that the shards run out of order. */
typedef struct pool_call {
    once_task_fn task;
    void *task_context;
    size_t next; /* tasks left to take: taken from count - 1 down to 0 */
    pthread_mutex_t mutex;
} pool_call;

static void *pool_worker(void *argument)
{
    pool_call *call = argument;
    for (;;) {
        pthread_mutex_lock(&call->mutex);
        size_t left = call->next;
        if (left > 0)
            call->next--;
        pthread_mutex_unlock(&call->mutex);
        if (left == 0)
            return NULL;
        call->task(call->task_context, left - 1);
    }
}

static unsigned pool_calls;

static void pool_run(void *context, once_task_fn task, void *task_context, size_t count)
{
    unsigned threads = *(const unsigned *)context;
    pool_call call = {task, task_context, count, PTHREAD_MUTEX_INITIALIZER};
    pthread_t ids[8];
    for (unsigned i = 0; i < threads; i++)
        pthread_create(&ids[i], NULL, pool_worker, &call);
    for (unsigned i = 0; i < threads; i++)
        pthread_join(ids[i], NULL);
    pool_calls++;
}

/* Batches of every size against one-key calls, for every structure in 3 and 16
 * shards, with and without threads: the same answers, refusals and saved bytes. */
static void batch_matches_one_key_calls(void)
{
    named_config configs[32];
    size_t n = every_structure(configs, 32);
    static const size_t sizes[] = {1, 7, 64, 1000, 5000, 3};
    enum { EVENTS = 12000 };
    testing_key *storage = malloc(EVENTS * sizeof *storage);
    unsigned three = 3;
    once_executor pool = {pool_run, &three};
    size_t sharded = 0, refused = 0;
    for (size_t i = 0; i < n; i++) {
        once_config *c = &configs[i].config;
        if (!shardable(c))
            continue;
        sharded++;
        once_key *keys = events(EVENTS, storage, i, c->span_ms ? c->span_ms : 1000);
        for (uint32_t shards = 3; shards <= 16; shards += 13) {
            for (int threaded = 0; threaded < 2; threaded++) {
                once_filter *batched = make_if_it_fits(c, shards);
                once_filter *single = make_if_it_fits(c, shards);
                if (batched == NULL || single == NULL) {
                    once_free(batched);
                    once_free(single);
                    continue;
                }
                if (threaded)
                    CHECK_OK(once_set_executor(batched, &pool));
                once_status stopped = ONCE_OK;
                uint64_t differ =
                    testing_batch_replay(batched, single, keys, EVENTS, sizes, 6, &stopped);
                if (differ != 0 || !testing_same_save(batched, single))
                    fprintf(stderr, "%s, %u shards%s: %llu answers differ\n", configs[i].name,
                            shards, threaded ? ", threads" : "", (unsigned long long)differ);
                CHECK(differ == 0);
                CHECK(testing_same_save(batched, single));
                CHECK(stopped == ONCE_OK || stopped == ONCE_ERR_FULL);
                refused += stopped == ONCE_ERR_FULL;
                once_free(batched);
                once_free(single);
            }
        }
        free(keys);
    }
    CHECK(sharded >= 15);
    CHECK(refused >= 4); /* the capped ones reach their caps */
    CHECK(pool_calls > 0);
    free(storage);
}

/* The shards' batches on threads, in any order, a write batch of thousands of keys at
 * a time: the answers and the state are those of the calling thread alone. */
static void threads_answer_as_one(void)
{
    enum { EVENTS = 200000, BATCH = 4096 };
    testing_key *storage = malloc(EVENTS * sizeof *storage);
    once_key *keys = events(EVENTS, storage, 77, 60000);
    uint8_t *a = malloc(BATCH), *b = malloc(BATCH);
    static const once_type types[] = {ONCE_TAGGED, ONCE_BLOCKED, ONCE_SCALABLE, ONCE_TLBF};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        once_config c = testing_config_any_kind(types[ti], 30000, 0, 60000, 5);
        for (unsigned threads = 1; threads <= 4; threads++) {
            once_filter *alone = make_sharded(&c, 16), *pooled = make_sharded(&c, 16);
            REQUIRE(alone != NULL && pooled != NULL);
            once_executor pool = {pool_run, &threads};
            CHECK_OK(once_set_executor(pooled, &pool));
            uint64_t differ = 0;
            for (size_t at = 0; at < EVENTS; at += BATCH) {
                size_t m = EVENTS - at < BATCH ? EVENTS - at : BATCH;
                CHECK_OK(once_test_and_add_batch(alone, keys + at, m, a));
                CHECK_OK(once_test_and_add_batch(pooled, keys + at, m, b));
                differ += memcmp(a, b, m) != 0;
            }
            CHECK(differ == 0);
            CHECK(testing_same_save(alone, pooled));
            CHECK(once_items(alone) == once_items(pooled) && once_items(alone) > 0);
            CHECK_OK(once_set_executor(pooled, NULL));
            once_free(alone);
            once_free(pooled);
        }
    }
    free(a);
    free(b);
    free(keys);
    free(storage);
}

/* A time window's one clock: a key first seen late in a shard that had only older
 * keys is taken at the stream's clock, and the jump bound counts from it. */
static void one_clock_for_all_shards(void)
{
    once_config c = testing_config_any_kind(ONCE_TAGGED, 1000, 0, 60000, 9);
    once_filter *f = make_sharded(&c, 16);
    REQUIRE(f != NULL);
    CHECK_OK(once_set_max_time_jump(f, 10 * MINUTE));
    bool seen = true, started = false;
    uint64_t clock = 0;
    CHECK_STATUS(once_clock(f, &clock, &started), ONCE_OK);
    CHECK(!started);
    for (uint64_t i = 0; i < 100; i++) /* the clock goes to 100 minutes */
        CHECK_OK(once_test_and_add(f, &i, sizeof i, (i + 1) * MINUTE, &seen));
    CHECK_OK(once_clock(f, &clock, &started));
    CHECK(started && clock == 100 * MINUTE);
    /* A late key, 50 minutes old: written at the clock, so it lives a span from now. */
    uint64_t late = 1000;
    CHECK_OK(once_test_and_add(f, &late, sizeof late, 50 * MINUTE, &seen));
    CHECK(!seen);
    CHECK_OK(once_clock(f, &clock, &started));
    CHECK(clock == 100 * MINUTE);
    bool present = false;
    CHECK_OK(once_query(f, &late, sizeof late, 100 * MINUTE + 59 * 1000, &present));
    CHECK(present);
    CHECK_OK(once_query(f, &late, sizeof late, 100 * MINUTE + 2 * MINUTE, &present));
    CHECK(!present);
    /* The bound counts from the stream's clock, not from a shard's older one. */
    uint64_t far = 2000;
    CHECK_STATUS(once_test_and_add(f, &far, sizeof far, 111 * MINUTE, &seen), ONCE_ERR_TIME);
    CHECK_OK(once_test_and_add(f, &far, sizeof far, 110 * MINUTE, &seen));
    /* A batch stops at the first time the clock refuses, the keys before it written. */
    uint64_t ids[3] = {3000, 3001, 3002};
    once_key batch[3] = {{&ids[0], 8, 110 * MINUTE}, {&ids[1], 8, 200 * MINUTE},
                         {&ids[2], 8, 110 * MINUTE}};
    uint8_t out[3];
    size_t done = 9;
    CHECK_STATUS(once_test_and_add_batch_partial(f, batch, 3, out, &done), ONCE_ERR_TIME);
    CHECK(done == 1);
    CHECK_OK(once_query(f, &ids[0], 8, 110 * MINUTE, &present));
    CHECK(present);
    CHECK_OK(once_query(f, &ids[2], 8, 110 * MINUTE, &present));
    CHECK(!present);
    once_free(f);
}

/* No key delivered within the span is forgotten, late ones included; fresh keys are
 * reported seen at the target rate at most. */
static void no_false_negatives_and_the_target_rate(void)
{
    static const once_type types[] = {ONCE_TAGGED, ONCE_TLBF, ONCE_TIMER};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        once_config c = testing_config_any_kind(types[ti], 20000, 0, 10 * MINUTE, 21);
        c.error = 0.001;
        once_filter *f = make_sharded(&c, 16);
        REQUIRE(f != NULL);
        uint64_t misses = 0, fresh_hits = 0, fresh = 0;
        static bool delivered[60000];
        for (uint64_t i = 0; i < 60000; i++) {
            uint64_t t = 1000 + i * 50; /* 20 keys a second: 12000 a span */
            bool seen = false;
            uint64_t late = i % 7 == 0 ? 4 * MINUTE : 0;
            /* each key again 2000 keys later (100 s: inside the span) */
            CHECK_OK(once_test_and_add(f, &i, sizeof i, t - (t > late ? late : 0), &seen));
            fresh_hits += seen;
            fresh++;
            delivered[i] = !seen; /* a false positive was not delivered: it may be forgotten */
            if (i >= 2000) {
                uint64_t again = i - 2000;
                CHECK_OK(once_test_and_add(f, &again, sizeof again, t, &seen));
                misses += delivered[again] && !seen;
            }
        }
        CHECK(misses == 0);
        CHECK(at_most_rate(fresh_hits, fresh, c.error));
        once_stats s = testing_stats(f);
        CHECK(s.type == types[ti] && s.shards == 16 && s.span_ms == 10 * MINUTE);
        once_free(f);
    }
    /* All time: a blocked filter at its capacity. */
    once_config c = testing_config(ONCE_BLOCKED, 33);
    c.capacity = 100000;
    c.error = 0.01;
    once_filter *f = make_sharded(&c, 16);
    REQUIRE(f != NULL);
    uint64_t hits = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        bool seen = false;
        CHECK_OK(once_test_and_add(f, &i, sizeof i, 0, &seen));
        hits += seen;
    }
    for (uint64_t i = 0; i < 100000; i++) {
        bool present = false;
        CHECK_OK(once_query(f, &i, sizeof i, 0, &present));
        CHECK(present);
    }
    CHECK(at_most_rate(hits, 100000, c.error));
    once_free(f);
}

/* What it reports, its cap and its shards' shares of it. */
static void reports_its_structure_and_holds_its_cap(void)
{
    once_filter *f = tagged_sharded(5000, 1 << 20, 8, 3);
    REQUIRE(f != NULL);
    CHECK(once_get_type(f) == ONCE_TAGGED);
    CHECK(once_shard_count(f) == 8);
    CHECK(once_capacity(f) == 5000);
    CHECK(once_max_bytes(f) == 1 << 20);
    once_stats s = testing_stats(f);
    CHECK(strcmp(s.structure, "tagged") == 0 && s.shards == 8 && s.filters == 8);
    CHECK(s.bytes == once_bytes(f) && s.bytes <= (1u << 20));
    /* Keys until the cap refuses one: within the cap all along, the refusal changes
     * nothing. */
    once_status st = ONCE_OK;
    uint64_t i = 0;
    for (; st == ONCE_OK && i < 10000000; i++) {
        bool seen;
        st = once_test_and_add(f, &i, sizeof i, 1000 + i / 1000, &seen);
        CHECK(once_bytes(f) <= (1u << 20));
    }
    CHECK_STATUS(st, ONCE_ERR_FULL);
    i--; /* the key refused */
    size_t before_len = 0;
    uint8_t *before = testing_save(f, &before_len);
    bool seen;
    CHECK_STATUS(once_test_and_add(f, &i, sizeof i, 1000 + i / 1000, &seen), ONCE_ERR_FULL);
    size_t after_len = 0;
    uint8_t *after = testing_save(f, &after_len);
    CHECK(before && after && before_len == after_len && memcmp(before, after, after_len) == 0);
    once_free_buffer(before);
    once_free_buffer(after);
    /* A larger cap takes more; one below what it holds is refused. */
    CHECK_STATUS(once_set_max_bytes(f, 1 << 16), ONCE_ERR_FULL);
    CHECK(once_max_bytes(f) == 1 << 20);
    CHECK_OK(once_set_max_bytes(f, 4 << 20));
    CHECK_OK(once_test_and_add(f, &i, sizeof i, 1000 + i / 1000, &seen));
    once_free(f);
    /* Insertions count as the structure counts them: a scalable filter a new key only,
     * the others every insertion (a counting filter's key twice is two). */
    static const once_type counted[] = {ONCE_BLOCKED, ONCE_SCALABLE, ONCE_COUNTING, ONCE_TAGGED};
    for (size_t ti = 0; ti < sizeof counted / sizeof counted[0]; ti++) {
        once_config cc = testing_config_any_kind(counted[ti], 1000, 0, MINUTE, 8);
        once_filter *one = testing_create(&cc), *sharded = make_sharded(&cc, 4);
        REQUIRE(one != NULL && sharded != NULL);
        uint64_t k = 42;
        once_key twice[2] = {{&k, sizeof k, 5}, {&k, sizeof k, 6}};
        for (int r = 0; r < 2; r++) {
            CHECK_OK(once_add(one, &k, sizeof k, 5));
            CHECK_OK(once_add(sharded, &k, sizeof k, 5));
        }
        CHECK_OK(once_add_batch(one, twice, 2));
        CHECK_OK(once_add_batch(sharded, twice, 2));
        CHECK(once_items(one) == once_items(sharded));
        once_free(one);
        once_free(sharded);
    }
    /* A plain filter is one shard and takes no executor. */
    once_filter *plain = testing_make(ONCE_BLOCKED, 100, 0.01, 1);
    once_executor none = {pool_run, NULL};
    CHECK(once_shard_count(plain) == 1);
    CHECK(once_shard_count(NULL) == 0);
    CHECK_STATUS(once_set_executor(plain, &none), ONCE_ERR_UNSUPPORTED);
    CHECK(testing_stats(plain).shards == 0);
    once_free(plain);
}

/* Saved mid-stream and loaded, it goes on as the original: the same answers and bytes. */
static void save_mid_stream_then_continue(void)
{
    named_config configs[32];
    size_t n = every_structure(configs, 32);
    enum { EVENTS = 6000 };
    testing_key *storage = malloc(EVENTS * sizeof *storage);
    for (size_t i = 0; i < n; i++) {
        once_config *c = &configs[i].config;
        if (!shardable(c))
            continue;
        once_key *keys = events(EVENTS, storage, 40 + i, c->span_ms ? c->span_ms : 1000);
        once_filter *a = make_if_it_fits(c, 5);
        if (a == NULL) {
            free(keys);
            continue;
        }
        uint8_t *out_a = malloc(EVENTS), *out_b = malloc(EVENTS);
        size_t done = 0;
        once_status st = once_test_and_add_batch_partial(a, keys, EVENTS / 2, out_a, &done);
        CHECK(st == ONCE_OK || st == ONCE_ERR_FULL);
        once_filter *b = time_window_saved_copy(a);
        REQUIRE(b != NULL);
        CHECK(once_get_type(b) == c->type && once_shard_count(b) == 5);
        CHECK(once_items(a) == once_items(b));
        size_t done_a = 0, done_b = 0;
        once_status sa = once_test_and_add_batch_partial(a, keys + done, EVENTS - done, out_a,
                                                         &done_a);
        once_status sb = once_test_and_add_batch_partial(b, keys + done, EVENTS - done, out_b,
                                                         &done_b);
        CHECK(sa == sb && done_a == done_b && memcmp(out_a, out_b, done_a) == 0);
        CHECK(testing_same_save(a, b));
        free(out_a);
        free(out_b);
        free(keys);
        once_free(a);
        once_free(b);
    }
    free(storage);
}

/* A small sharded file with every byte changed in turn loads (and then works) or is
 * refused; every parameter out of range is refused. */
static void damaged_files_refused(void)
{
    once_filter *f = tagged_sharded(8, 1 << 16, 2, 4);
    REQUIRE(f != NULL);
    for (uint64_t i = 0; i < 20; i++) {
        bool seen;
        CHECK_OK(once_test_and_add(f, &i, sizeof i, 5000 + i, &seen));
    }
    size_t len = 0;
    uint8_t *file = testing_save(f, &len);
    REQUIRE(file != NULL);
    for (size_t cut = 0; cut < len; cut++) {
        once_filter *g = NULL;
        uint8_t *copy = testing_copy_exact(file, cut);
        CHECK(once_load(&g, copy, cut) != ONCE_OK && g == NULL);
        free(copy);
    }
    for (size_t at = 0; at + 8 < len; at++) {
        uint8_t *b = testing_copy_exact(file, len);
        b[at] ^= 0x41;
        testing_reseal(b, len);
        (void)testing_load_and_vet(b, len);
        free(b);
    }
    /* params: inner type, shards, cap, started, clock, jump bound */
    const struct {
        int word;
        uint64_t value;
    } bad[] = {
        {0, ONCE_APBF}, {0, ONCE_SLICE}, {0, 15}, {0, 0}, {0, 99}, {1, 0}, {1, 3},
        {1, ONCE_MAX_SHARDS + 1}, {2, 0}, {3, 2}, {3, 0}, {4, 0}, {5, ONCE_MAX_TIME_MS + 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        once_status st = testing_with_param(file, len, bad[i].word, bad[i].value);
        if (st == ONCE_OK)
            fprintf(stderr, "param %d = %llu loaded\n", bad[i].word,
                    (unsigned long long)bad[i].value);
        CHECK(st != ONCE_OK);
    }
    once_free_buffer(file);
    once_free(f);
}

/* Distinct keys: the sum of the shards' estimates, its interval around the count. */
static void cardinality_is_the_shards_sum(void)
{
    static const once_type types[] = {ONCE_BLOCKED, ONCE_SCALABLE, ONCE_TAGGED};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        once_config c = testing_config_any_kind(types[ti], 40000, 0, HOUR, 17);
        once_filter *f = make_sharded(&c, 16);
        REQUIRE(f != NULL);
        for (uint64_t i = 0; i < 30000; i++) {
            bool seen;
            CHECK_OK(once_test_and_add(f, &i, sizeof i, 1000 + i / 100, &seen));
        }
        once_cardinality card;
        CHECK_OK(once_estimate_cardinality(f, 1000 + 300, 0.99, &card));
        if (!(card.low <= 30000 && 30000 <= card.high))
            fprintf(stderr, "%s: %g [%g, %g]\n", once_type_name(types[ti]), card.estimate,
                    card.low, card.high);
        CHECK(card.low <= 30000 && 30000 <= card.high && card.confidence == 0.99);
        CHECK(fabs(card.estimate - 30000) < 0.05 * 30000);
        once_free(f);
    }
}

static void refuses_what_cannot_be_sharded(void)
{
    once_filter *f = NULL;
    once_config apbf = testing_config_any_kind(ONCE_APBF, 100, 100, 0, 1);
    CHECK_STATUS(once_create_sharded(&f, &apbf, 4), ONCE_ERR_UNSUPPORTED);
    once_config geometry = testing_config(ONCE_STANDARD, 1);
    geometry.bits = 1000;
    geometry.hashes = 3;
    CHECK_STATUS(once_create_sharded(&f, &geometry, 4), ONCE_ERR_UNSUPPORTED);
    once_config blocked = testing_config(ONCE_BLOCKED, 1);
    blocked.capacity = 1000;
    CHECK_STATUS(once_create_sharded(&f, &blocked, 0), ONCE_ERR_INVALID);
    CHECK_STATUS(once_create_sharded(&f, &blocked, ONCE_MAX_SHARDS + 1), ONCE_ERR_INVALID);
    CHECK_STATUS(once_create_sharded(NULL, &blocked, 4), ONCE_ERR_INVALID);
    CHECK(f == NULL);
    CHECK_OK(once_create_sharded(&f, &blocked, ONCE_MAX_SHARDS));
    CHECK(once_shard_count(f) == ONCE_MAX_SHARDS);
    /* Union and intersection are not offered: their sizes and caps would split. */
    once_filter *g = make_sharded(&blocked, ONCE_MAX_SHARDS);
    CHECK_STATUS(once_union(f, g), ONCE_ERR_UNSUPPORTED);
    once_free(g);
    once_free(f);
}


/*
 * With a lag (the tagged window's), a write is passed to its shard at max(L - H, t) and
 * a query within the lag at t, so the shards answer as one window with the lag: one
 * stream of producers lagging each other, events past the lag among them, through one
 * window (one-key calls) and through 4 and 16 shards in batches on 1 to 4 threads.  At
 * the least rate the library takes (1e-9), so that no false positive of either tells
 * them apart; the answers of the shards are also the same for every thread count.
 */
static void a_lag_answers_as_one_window(void)
{
    enum { EVENTS = 120000, BATCH = 2048 };
    const uint64_t lag = MINUTE / 2;
    testing_key *storage = malloc(EVENTS * sizeof *storage);
    once_key *keys = malloc(EVENTS * sizeof *keys);
    uint8_t *one = malloc(EVENTS), *got = malloc(EVENTS), *first = malloc(EVENTS);
    uint8_t *present = malloc(EVENTS), *present_one = malloc(EVENTS);
    uint64_t state = 17, r = 10 * MINUTE;
    for (size_t i = 0; i < EVENTS; i++) {
        state = testing_mix(state);
        r += state % 9;
        uint64_t j = state % 4, late = j * lag / 4 + testing_mix(state) % (lag / 8);
        if (state % 50 == 0)
            late = lag + testing_mix(state + 2) % MINUTE; /* past the lag */
        storage[i] = testing_key_make(23, testing_mix(state + 1) % 20000);
        keys[i] = (once_key){&storage[i], sizeof storage[i], r - late};
    }
    once_config c = testing_config_any_kind(ONCE_TAGGED, 20000, 0, MINUTE, 19);
    c.error = 1e-9;
    c.lag_ms = lag;
    once_filter *alone = testing_create(&c);
    REQUIRE(alone != NULL);
    for (size_t i = 0; i < EVENTS; i++) {
        bool seen = false, in = false;
        CHECK_OK(once_test_and_add(alone, keys[i].data, keys[i].len, keys[i].time_ms, &seen));
        one[i] = seen;
        /* a query of the next key at its time, before it is written */
        if (i + 1 < EVENTS)
            CHECK_OK(once_query(alone, keys[i + 1].data, keys[i + 1].len, keys[i + 1].time_ms, &in));
        present_one[i] = in;
    }
    uint64_t seen_one = 0;
    for (size_t i = 0; i < EVENTS; i++)
        seen_one += one[i];
    CHECK(seen_one > EVENTS / 10 && seen_one < EVENTS * 9 / 10);
    const uint32_t counts[] = {4, 16};
    for (size_t ci = 0; ci < 2; ci++)
        for (unsigned threads = 1; threads <= 4; threads++) {
            once_filter *f = make_sharded(&c, counts[ci]);
            REQUIRE(f != NULL);
            CHECK(testing_stats(f).lag_ms == lag);
            once_executor pool = {pool_run, &threads};
            CHECK_OK(once_set_executor(f, &pool));
            for (size_t at = 0; at < EVENTS; at += BATCH) {
                size_t m = EVENTS - at < BATCH ? EVENTS - at : BATCH;
                CHECK_OK(once_test_and_add_batch(f, keys + at, m, got + at));
            }
            uint64_t differ = 0;
            for (size_t i = 0; i < EVENTS; i++)
                differ += got[i] != one[i];
            if (differ)
                fprintf(stderr, "%u shards, %u threads: %llu answers differ from one window's\n",
                        counts[ci], threads, (unsigned long long)differ);
            CHECK(differ == 0);
            if (threads == 1)
                memcpy(first, got, EVENTS);
            CHECK(memcmp(first, got, EVENTS) == 0);
            once_free(f);
        }
    /* One-key calls and queries within the lag, through 8 shards. */
    once_filter *f = make_sharded(&c, 8);
    REQUIRE(f != NULL);
    uint64_t differ = 0;
    for (size_t i = 0; i < EVENTS; i++) {
        bool seen = false, in = false;
        CHECK_OK(once_test_and_add(f, keys[i].data, keys[i].len, keys[i].time_ms, &seen));
        differ += seen != one[i];
        if (i + 1 < EVENTS)
            CHECK_OK(once_query(f, keys[i + 1].data, keys[i + 1].len, keys[i + 1].time_ms, &in));
        present[i] = in;
        differ += present[i] != present_one[i];
    }
    CHECK(differ == 0);
    /* saved and loaded, the shards keep their lag */
    once_filter *g = testing_reload(f);
    REQUIRE(g != NULL);
    CHECK(testing_stats(g).lag_ms == lag);
    CHECK(testing_same_save(f, g));
    once_free(g);
    once_free(f);
    once_free(alone);
    free(present);
    free(present_one);
    free(first);
    free(got);
    free(one);
    free(keys);
    free(storage);
}

static const testing_case cases[] = {
    {"batch_matches_one_key_calls", batch_matches_one_key_calls},
    {"threads_answer_as_one", threads_answer_as_one},
    {"one_clock_for_all_shards", one_clock_for_all_shards},
    {"no_false_negatives_and_the_target_rate", no_false_negatives_and_the_target_rate},
    {"reports_its_structure_and_holds_its_cap", reports_its_structure_and_holds_its_cap},
    {"save_mid_stream_then_continue", save_mid_stream_then_continue},
    {"damaged_files_refused", damaged_files_refused},
    {"cardinality_is_the_shards_sum", cardinality_is_the_shards_sum},
    {"refuses_what_cannot_be_sharded", refuses_what_cannot_be_sharded},
    {"a_lag_answers_as_one_window", a_lag_answers_as_one_window},
};

TESTING_MAIN(cases)
