/*
 * test_threads.c - what may run at once (once.h, "Threads"), run at once.
 *
 *   - read-only calls on one filter from several threads, with no writer: every
 *     structure, filled first, then queried (keys, digests, batches of both), asked
 *     for its stats, positions, clock and estimate, and saved whole and in chunks, by
 *     THREADS threads at once: no key added is missed and every answer is the one a
 *     single thread got;
 *   - threads that each own their filters: every structure driven by each thread from
 *     the same seeds, while another thread forces SIMD paths back and forth, gives no
 *     false negative and the same saved bytes as the same work on one thread.
 *
 * The suite also builds this binary with ThreadSanitizer (make test-tsan), which fails
 * the run on any data race it sees in these calls.  Threads report mismatches in their
 * own counters; the checks run on the main thread after the join.
 */
#include "every_structure.h"
#include "testing.h"
#include "once_advanced.h"
#include "once_sliced.h"

#include <pthread.h>
#include <stdatomic.h>

#define THREADS 4
#define MAX_CONFIGS 32

/* --------------------------------------------------- shared, read-only */

#define SHARED_KEYS 40 /* fewer than every window of every_structure() holds */
#define ABSENT_KEYS 200
#define ROUNDS 3
#define READ_TIME 100 /* every key is added and read at this time */

typedef struct shared_filter {
    const char *name;
    once_filter *f;
    bool added[SHARED_KEYS];      /* its insertion succeeded: it must test present */
    testing_key keys[SHARED_KEYS + ABSENT_KEYS];
    once_digest digests[SHARED_KEYS + ABSENT_KEYS];
    uint8_t answers[SHARED_KEYS + ABSENT_KEYS]; /* as one thread answered */
    uint8_t *saved;
    size_t saved_len;
    uint8_t *dump; /* the chunked save (once_save_chunk), chunks end to end */
    size_t dump_len;
    once_stats stats;
    once_status card_status;
    once_cardinality card;
    once_status reads_status;
} shared_filter;

/* A chunked save, chunks of at most ONCE_CHUNK_MIN bytes end to end, in a new buffer
 * (free() it); NULL if a call fails. */
static uint8_t *chunked_save(const once_filter *f, size_t *len)
{
    uint8_t *dump = NULL;
    uint64_t cursor = 0;
    *len = 0;
    do {
        uint8_t *grown = realloc(dump, *len + ONCE_CHUNK_MIN);
        size_t n = 0;
        if (grown == NULL || once_save_chunk(f, &cursor, ONCE_CHUNK_MIN, grown + *len, &n) !=
                                 ONCE_OK) {
            free(grown != NULL ? grown : dump);
            return NULL;
        }
        dump = grown;
        *len += n;
    } while (cursor != 0);
    return dump;
}

typedef struct reader {
    shared_filter *filters;
    size_t count;
    uint64_t missed;     /* an added key answered absent */
    uint64_t mismatches; /* anything else unlike the single-threaded answer */
} reader;

static void read_one(reader *r, const shared_filter *s)
{
    const size_t n = SHARED_KEYS + ABSENT_KEYS;
    once_key batch[SHARED_KEYS + ABSENT_KEYS];
    uint64_t times[SHARED_KEYS + ABSENT_KEYS];
    uint8_t out[SHARED_KEYS + ABSENT_KEYS];
    for (size_t i = 0; i < n; i++) {
        bool by_key = false, by_digest = false;
        if (once_query(s->f, &s->keys[i], sizeof s->keys[i], READ_TIME, &by_key) != ONCE_OK ||
            once_query_digest(s->f, &s->digests[i], READ_TIME, &by_digest) != ONCE_OK)
            r->mismatches++;
        if (i < SHARED_KEYS && s->added[i] && (!by_key || !by_digest))
            r->missed++;
        if (by_key != s->answers[i] || by_digest != s->answers[i])
            r->mismatches++;
        bool reads_present = false;
        uint32_t reads = 0;
        if (once_query_reads(s->f, &s->keys[i], sizeof s->keys[i], READ_TIME, &reads_present,
                             &reads) != s->reads_status ||
            (s->reads_status == ONCE_OK && reads_present != s->answers[i]))
            r->mismatches++;
        uint64_t positions[64];
        uint32_t count = 64;
        once_status st = once_positions(s->f, &s->digests[i], positions, &count);
        if (st != ONCE_OK && st != ONCE_ERR_UNSUPPORTED)
            r->mismatches++;
        batch[i] = (once_key){&s->keys[i], sizeof s->keys[i], READ_TIME};
        times[i] = READ_TIME;
    }
    memset(out, 7, sizeof out);
    if (once_query_batch(s->f, batch, n, out) != ONCE_OK || memcmp(out, s->answers, n) != 0)
        r->mismatches++;
    memset(out, 7, sizeof out);
    if (once_query_digest_batch(s->f, s->digests, times, n, out) != ONCE_OK ||
        memcmp(out, s->answers, n) != 0)
        r->mismatches++;
    for (size_t i = 0; i < SHARED_KEYS; i++)
        if (s->added[i] && !out[i])
            r->missed++;

    once_stats st;
    if (once_get_stats(s->f, &st) != ONCE_OK || st.items != s->stats.items ||
        st.bits_set != s->stats.bits_set || st.bytes != s->stats.bytes ||
        st.fpr_estimate != s->stats.fpr_estimate || st.filters != s->stats.filters)
        r->mismatches++;
    once_cardinality card;
    if (once_estimate_cardinality(s->f, READ_TIME, 0.9, &card) != s->card_status ||
        (s->card_status == ONCE_OK &&
         (card.estimate != s->card.estimate || card.low != s->card.low)))
        r->mismatches++;
    uint64_t clock_ms = 0;
    bool started = false;
    (void)once_clock(s->f, &clock_ms, &started);
    void *buf = NULL;
    size_t len = 0;
    if (once_saved_size(s->f) != s->saved_len || once_save_to_buffer(s->f, &buf, &len) != ONCE_OK ||
        len != s->saved_len || memcmp(buf, s->saved, len) != 0)
        r->mismatches++;
    once_free_buffer(buf);
    uint8_t *dump = chunked_save(s->f, &len);
    if (dump == NULL || len != s->dump_len || memcmp(dump, s->dump, len) != 0)
        r->mismatches++;
    free(dump);
}

static void *read_all(void *arg)
{
    reader *r = arg;
    for (int round = 0; round < ROUNDS; round++)
        for (size_t i = 0; i < r->count; i++)
            read_one(r, &r->filters[(i + (size_t)round) % r->count]);
    return NULL;
}

static void shared_filters_read_concurrently(void)
{
    named_config configs[MAX_CONFIGS];
    size_t n = every_structure(configs, MAX_CONFIGS);
    shared_filter *shared = calloc(n, sizeof *shared);
    REQUIRE(shared != NULL);
    for (size_t c = 0; c < n; c++) {
        shared_filter *s = &shared[c];
        s->name = configs[c].name;
        s->f = testing_create(&configs[c].config);
        REQUIRE(s->f != NULL);
        for (size_t i = 0; i < SHARED_KEYS + ABSENT_KEYS; i++) {
            s->keys[i] = testing_key_make(c, i);
            CHECK_OK(once_digest_key(s->f, &s->keys[i], sizeof s->keys[i], &s->digests[i]));
        }
        for (size_t i = 0; i < SHARED_KEYS; i++) {
            bool seen = false;
            s->added[i] = once_test_and_add(s->f, &s->keys[i], sizeof s->keys[i], READ_TIME,
                                            &seen) == ONCE_OK;
        }
        for (size_t i = 0; i < SHARED_KEYS + ABSENT_KEYS; i++) {
            bool present = false;
            CHECK_OK(once_query(s->f, &s->keys[i], sizeof s->keys[i], READ_TIME, &present));
            s->answers[i] = present;
            CHECK(i >= SHARED_KEYS || !s->added[i] || present);
        }
        uint32_t reads = 0;
        bool present = false;
        s->reads_status =
            once_query_reads(s->f, &s->keys[0], sizeof s->keys[0], READ_TIME, &present, &reads);
        s->saved = testing_save(s->f, &s->saved_len);
        s->dump = chunked_save(s->f, &s->dump_len);
        REQUIRE(s->saved != NULL && s->dump != NULL);
        s->stats = testing_stats(s->f);
        s->card_status = once_estimate_cardinality(s->f, READ_TIME, 0.9, &s->card);
    }
    pthread_t threads[THREADS];
    reader readers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        readers[t] = (reader){shared, n, 0, 0};
        REQUIRE(pthread_create(&threads[t], NULL, read_all, &readers[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        CHECK(readers[t].missed == 0);
        CHECK(readers[t].mismatches == 0);
    }
    for (size_t c = 0; c < n; c++) {
        size_t len = 0;
        uint8_t *after = testing_save(shared[c].f, &len);
        CHECK(after != NULL && len == shared[c].saved_len &&
              memcmp(after, shared[c].saved, len) == 0); /* the reads changed nothing */
        free(after);
        free(shared[c].saved);
        free(shared[c].dump);
        once_free(shared[c].f);
    }
    free(shared);
}

/* ------------------------------------------------------ one owner each */

#define OWNED_KEYS 400

typedef struct owned_result {
    uint64_t missed; /* a key inserted and at once answered absent */
    uint64_t refused; /* creation failed */
    uint8_t *saved[MAX_CONFIGS];
    size_t saved_len[MAX_CONFIGS];
} owned_result;

typedef struct owner {
    const named_config *configs;
    size_t count;
    owned_result result;
} owner;

/* The same work from the same seeds, whichever thread runs it: test-and-add over a
 * stream with repeats and a moving clock, each key then queried. */
static void drive_owned(const named_config *configs, size_t count, owned_result *r)
{
    for (size_t c = 0; c < count; c++) {
        once_filter *f = NULL;
        if (once_create(&f, &configs[c].config) != ONCE_OK) {
            r->refused++;
            continue;
        }
        uint64_t now = 0, state = 1000 + c;
        for (uint64_t i = 0; i < OWNED_KEYS; i++) {
            state = testing_mix(state);
            testing_key k = testing_key_make(c, state % (OWNED_KEYS / 2));
            now += state % 20;
            bool seen = false, present = false;
            if (once_test_and_add(f, &k, sizeof k, now, &seen) != ONCE_OK)
                continue; /* a capped filter may refuse */
            if (once_query(f, &k, sizeof k, now, &present) != ONCE_OK || !present)
                r->missed++;
        }
        void *buf = NULL;
        size_t len = 0;
        if (once_save_to_buffer(f, &buf, &len) == ONCE_OK) {
            r->saved[c] = buf;
            r->saved_len[c] = len;
        }
        once_free(f);
    }
}

static void *own_all(void *arg)
{
    owner *o = arg;
    drive_owned(o->configs, o->count, &o->result);
    return NULL;
}

/* Forces each path in turn while the owners build filters (a path the CPU lacks is
 * refused), and ends on the best one. */
typedef struct simd_toggler {
    int rounds;
    uint64_t unexpected;
} simd_toggler;

static void *toggle_simd(void *arg)
{
    simd_toggler *t = arg;
    const char *paths[] = {"scalar", "avx2", "avx512", NULL};
    for (int i = 0; i < t->rounds; i++) {
        once_status st = once_force_simd_path(paths[i % 4]);
        if (st != ONCE_OK && st != ONCE_ERR_UNSUPPORTED)
            t->unexpected++;
        if (once_simd_path() == NULL)
            t->unexpected++;
    }
    if (once_force_simd_path(NULL) != ONCE_OK)
        t->unexpected++;
    return NULL;
}

static void own_filters_on_each_thread(void)
{
    named_config configs[MAX_CONFIGS];
    size_t n = every_structure(configs, MAX_CONFIGS);
    /* The owners start first, in a fresh process: the first use of the SIMD dispatch
     * happens on several threads at once. */
    pthread_t threads[THREADS + 1];
    owner *owners = calloc(THREADS, sizeof *owners);
    REQUIRE(owners != NULL);
    for (int t = 0; t < THREADS; t++) {
        owners[t].configs = configs;
        owners[t].count = n;
        REQUIRE(pthread_create(&threads[t], NULL, own_all, &owners[t]) == 0);
    }
    simd_toggler toggler = {2000, 0};
    REQUIRE(pthread_create(&threads[THREADS], NULL, toggle_simd, &toggler) == 0);
    for (int t = 0; t <= THREADS; t++)
        pthread_join(threads[t], NULL);
    CHECK(toggler.unexpected == 0);

    owned_result *alone = calloc(1, sizeof *alone);
    REQUIRE(alone != NULL);
    drive_owned(configs, n, alone);
    CHECK(alone->missed == 0 && alone->refused == 0);
    for (int t = 0; t < THREADS; t++) {
        owned_result *r = &owners[t].result;
        CHECK(r->missed == 0 && r->refused == 0);
        for (size_t c = 0; c < n; c++) {
            bool same = r->saved[c] != NULL && alone->saved[c] != NULL &&
                        r->saved_len[c] == alone->saved_len[c] &&
                        memcmp(r->saved[c], alone->saved[c], r->saved_len[c]) == 0;
            if (!same)
                fprintf(stderr, "thread %d, %s: saved bytes differ from one thread's\n", t,
                        configs[c].name);
            CHECK(same);
            free(r->saved[c]);
        }
    }
    for (size_t c = 0; c < n; c++)
        free(alone->saved[c]);
    free(alone);
    free(owners);
}

/* ---------------------------------------- one sliced filter, many producers */

#define PRODUCED_KEYS 3000
#define PRODUCER_ROUNDS 2

/* A producer offers every key PRODUCER_ROUNDS times, from its own start with its own
 * odd step, and counts in `distinct` the answers "distinct" each key got. */
typedef struct producer {
    once_sliced *filter; /* or */
    once_tree *tree;
    int index;
    atomic_uint *distinct; /* shared by the producers */
    uint64_t errors;
} producer;

static uint32_t produced_id(const producer *p, uint64_t round)
{
    return (uint32_t)((round * (2 * p->index + 1) + (uint64_t)p->index * 997) % PRODUCED_KEYS);
}

/* Even producers offer one key at a time, odd ones batches of 64. */
static void *produce(void *arg)
{
    producer *p = arg;
    once_key batch[64];
    testing_key keys[64];
    size_t in_batch = 0;
    uint8_t seen[64];
    uint32_t ids[64];
    for (uint64_t r = 0; r < PRODUCER_ROUNDS * PRODUCED_KEYS; r++) {
        uint32_t id = produced_id(p, r);
        testing_key k = testing_key_make(40, id);
        if (p->index % 2 == 0) {
            bool dup = true;
            if (once_sliced_test_and_add(p->filter, &k, sizeof k, 0, &dup) != ONCE_OK)
                p->errors++;
            else if (!dup)
                atomic_fetch_add(&p->distinct[id], 1);
            continue;
        }
        keys[in_batch] = k;
        ids[in_batch] = id;
        batch[in_batch] = (once_key){&keys[in_batch], sizeof keys[in_batch], 0};
        if (++in_batch < 64 && r + 1 < PRODUCER_ROUNDS * PRODUCED_KEYS)
            continue;
        if (once_sliced_test_and_add_batch(p->filter, batch, in_batch, seen) != ONCE_OK)
            p->errors++;
        for (size_t i = 0; i < in_batch; i++)
            if (seen[i] == 0)
                atomic_fetch_add(&p->distinct[ids[i]], 1);
        in_batch = 0;
    }
    return NULL;
}

/* Producer i offers its keys at leaf i of the tree. */
static void *produce_at_a_leaf(void *arg)
{
    producer *p = arg;
    for (uint64_t r = 0; r < PRODUCER_ROUNDS * PRODUCED_KEYS; r++) {
        uint32_t id = produced_id(p, r);
        testing_key k = testing_key_make(41, id);
        bool dup = true;
        /* The round is the event's time: it matters to windowed trees alone. */
        if (once_tree_test_and_add_at(p->tree, (uint64_t)p->index, &k, sizeof k, r, &dup) !=
            ONCE_OK)
            p->errors++;
        else if (!dup)
            atomic_fetch_add(&p->distinct[id], 1);
    }
    return NULL;
}

static atomic_uint distinct_answers[PRODUCED_KEYS];

/* THREADS producers and their threads. */
typedef struct producers {
    producer ps[THREADS];
    pthread_t tids[THREADS];
} producers;

/* THREADS producers running `body` on the filter or the tree. */
static void start_producers(producers *run, void *(*body)(void *), once_sliced *filter,
                            once_tree *tree)
{
    for (int i = 0; i < PRODUCED_KEYS; i++)
        atomic_init(&distinct_answers[i], 0);
    for (int t = 0; t < THREADS; t++) {
        run->ps[t] = (producer){filter, tree, t, distinct_answers, 0};
        REQUIRE(pthread_create(&run->tids[t], NULL, body, &run->ps[t]) == 0);
    }
}

/* Join them: no key answered distinct twice, and every key once but for a false
 * positive (at about 0.1%). */
static void join_producers(producers *run)
{
    for (int t = 0; t < THREADS; t++) {
        pthread_join(run->tids[t], NULL);
        CHECK(run->ps[t].errors == 0);
    }
    uint64_t twice = 0, once = 0;
    for (int i = 0; i < PRODUCED_KEYS; i++) {
        unsigned d = atomic_load(&distinct_answers[i]);
        twice += d > 1;
        once += d == 1;
    }
    CHECK(twice == 0);
    CHECK(once >= PRODUCED_KEYS - PRODUCED_KEYS / 100);
}

static void sliced_distinct_at_most_once(void)
{
    const once_slicing slicings[] = {ONCE_SLICING_VERTICAL, ONCE_SLICING_HORIZONTAL,
                                     ONCE_SLICING_DICED_VH};
    /* Memory sites in the callers' threads, on 2 worker threads, and with a count
     * window as long as the stream's keys (each of them stays in it). */
    enum { IN_CALLERS, ON_WORKERS, COUNT_WINDOW };
    for (size_t sl = 0; sl < 3; sl++)
        for (int variant = IN_CALLERS; variant <= COUNT_WINDOW; variant++) {
            const once_sliced_config c = {
                .slicing = slicings[sl], .slices = 8,
                .parts = slicings[sl] == ONCE_SLICING_DICED_VH ? 2 : 0,
                .capacity = PRODUCED_KEYS, .error = 0.001, .seed = 5, .seed_is_set = true,
                .threads = variant == ON_WORKERS ? 2 : 0,
                .window_events = variant == COUNT_WINDOW ? PRODUCED_KEYS : 0, .concurrent = true};
            once_sliced *f = NULL;
            CHECK_OK(once_sliced_create(&f, &c, NULL));
            REQUIRE(f != NULL);
            producers run;
            start_producers(&run, produce, f, NULL);
            join_producers(&run);
            once_sliced_stats st;
            CHECK_OK(once_sliced_get_stats(f, &st));
            CHECK(st.events == (uint64_t)THREADS * PRODUCER_ROUNDS * PRODUCED_KEYS);
            once_sliced_free(f);
        }
}

/* Per-node locks (dense: a node at a time; sparse and windowed: the path held), on
 * trees whose producers meet at the root (2 levels) and below it (3 levels, fanout 2:
 * leaves 0 and 1 share a parent), with a root sliced over 3 sites, with a window that
 * keeps every key, and with top-down testing (one lock for the tree). */
static void tree_distinct_at_most_once(void)
{
    enum { PLAIN, DEEP, SLICED_ROOT, WINDOW, TOP_DOWN, VARIANTS };
    for (int mode = 0; mode < 2; mode++)
        for (int variant = 0; variant < VARIANTS; variant++) {
            bool deep = variant == DEEP || variant == WINDOW || variant == TOP_DOWN;
            const once_tree_config c = {.mode = (once_tree_mode)mode, .levels = deep ? 3 : 2,
                                        .fanout = deep ? 2 : THREADS, .capacity = PRODUCED_KEYS,
                                        .error = 0.001, .seed = 6, .seed_is_set = true,
                                        .concurrent = true,
                                        .root_slices = variant == SLICED_ROOT ? 3 : 0,
                                        .window_ms = variant == WINDOW ? 1000000000 : 0,
                                        .top_down_level = variant == TOP_DOWN ? 2 : 0};
            once_tree *t = NULL;
            CHECK_OK(once_tree_create(&t, &c, NULL));
            REQUIRE(t != NULL);
            producers run;
            start_producers(&run, produce_at_a_leaf, NULL, t);
            once_tree_stats st;
            CHECK_OK(once_tree_get_stats(t, &st)); /* while they run */
            join_producers(&run);
            CHECK_OK(once_tree_get_stats(t, &st));
            CHECK(st.events == (uint64_t)THREADS * PRODUCER_ROUNDS * PRODUCED_KEYS);
            once_tree_free(t);
        }
}

/* ------------------------------------------------- a sharded filter's shards */

/* An executor of THREADS threads a call, which take the tasks in turn. */
typedef struct shard_call {
    once_task_fn task;
    void *task_context;
    atomic_size_t next;
    size_t count;
} shard_call;

static void *shard_worker(void *argument)
{
    shard_call *call = argument;
    for (size_t i; (i = atomic_fetch_add(&call->next, 1)) < call->count;)
        call->task(call->task_context, i);
    return NULL;
}

static void shard_run(void *context, once_task_fn task, void *task_context, size_t count)
{
    (void)context;
    shard_call call = {task, task_context, 0, count};
    pthread_t ids[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&ids[i], NULL, shard_worker, &call);
    for (int i = 0; i < THREADS; i++)
        pthread_join(ids[i], NULL);
}

static void sharded_batches_on_threads(void)
{
    named_config configs[MAX_CONFIGS];
    size_t n = every_structure(configs, MAX_CONFIGS);
    enum { KEYS = 6000, BATCH = 1500 };
    testing_key *storage = malloc(KEYS * sizeof *storage);
    once_key *keys = malloc(KEYS * sizeof *keys);
    uint8_t a[BATCH], b[BATCH];
    once_executor executor = {shard_run, NULL};
    size_t ran = 0;
    for (size_t c = 0; c < n; c++) {
        once_kind kind = once_structure_of(configs[c].config.type)->kind;
        if (kind == ONCE_KIND_COUNT_WINDOW || configs[c].config.bits != 0)
            continue;
        once_filter *alone = NULL, *pooled = NULL;
        if (once_create_sharded(&alone, &configs[c].config, 8) != ONCE_OK ||
            once_create_sharded(&pooled, &configs[c].config, 8) != ONCE_OK) {
            once_free(alone); /* a cap too small for 8 shards of the structure */
            continue;
        }
        CHECK_OK(once_set_executor(pooled, &executor));
        for (size_t i = 0; i < KEYS; i++) {
            storage[i] = testing_key_make(c, testing_mix(i) % 2500);
            keys[i] = (once_key){&storage[i], sizeof storage[i], 1000 + i / 4};
        }
        for (size_t at = 0; at < KEYS; at += BATCH) {
            size_t da = 0, db = 0;
            once_status sa = once_test_and_add_batch_partial(alone, keys + at, BATCH, a, &da);
            once_status sb = once_test_and_add_batch_partial(pooled, keys + at, BATCH, b, &db);
            CHECK(sa == sb && da == db && memcmp(a, b, da) == 0);
            if (sa != ONCE_OK)
                break;
        }
        CHECK(testing_same_save(alone, pooled));
        once_free(alone);
        once_free(pooled);
        ran++;
    }
    CHECK(ran >= 10);
    free(keys);
    free(storage);
}

static const testing_case cases[] = {
    {"shared_filters_read_concurrently", shared_filters_read_concurrently},
    {"own_filters_on_each_thread", own_filters_on_each_thread},
    {"sliced_distinct_at_most_once", sliced_distinct_at_most_once},
    {"tree_distinct_at_most_once", tree_distinct_at_most_once},
    {"sharded_batches_on_threads", sharded_batches_on_threads},
};

TESTING_MAIN(cases)
