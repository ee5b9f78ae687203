/*
 * once_bench.c - throughput of libonce's filters against libbloom and the memory floor.
 *
 * Usage: once-bench [--quick] [--n N[,N...]] [--structures a,b,...] [--reps R]
 *
 * For each key count N and each structure the benchmark builds a filter for N keys at
 * a 1% false-positive rate and times, with CLOCK_MONOTONIC:
 *   insert        N one-key inserts (once_add / bloom_add) into a fresh filter;
 *   query         N one-key queries (once_query / bloom_check) of keys never inserted;
 *   insert_batch  the same N inserts through once_add_batch, CHUNK keys a call, into
 *                 another fresh filter;
 *   query_batch   the same N absent keys through once_query_batch.
 * Querying absent keys measures the false-positive rate at the same time (the fraction
 * reported present), and it is the common case of a dedup stream of mostly new keys.
 * The layouts that stop at the first clear bit (standard, partitioned, counting,
 * libbloom) touch about two lines for an absent key but all k for a present one, so
 * their query times here are the favourable case; the blocked layout touches one line
 * either way.
 *
 * Beside the filters it measures the host's floor for one random cache line in an
 * array the size of the blocked filter at that N:
 *   load            N independent line loads at hashed addresses, prefetched
 *                   PREFETCH_AHEAD ahead as the library's batch loop does: the best a
 *                   batched blocked query could do, which also touches one line a key;
 *   hash_load       as load, but each line is chosen by the XXH3-128 hash of a real
 *                   key: hashing plus one line, the floor of any one-line-a-key filter
 *                   that hashes its keys as this library must;
 *   load_dependent  a pointer chase over a random cyclic permutation of the lines: the
 *                   cost of one miss at a time, i.e. of a one-key call on a cold line.
 *
 * The DBF (paper 003) is measured apart, as query cost against its number of rows
 * with row and bit-slice storage (see bench_dbf).
 *
 * Output: '#' lines (host, parameters, geometry), then one line per measurement,
 *     structure op n ns_per_op fpr bits_per_key
 * with '-' for the fields that do not apply, then a '#' summary.  Every time is the
 * median over the repetitions.
 *
 * Method notes
 *   - Keys are 16 bytes, generated before timing into two arrays (inserted and absent,
 *     disjoint by construction: the second word carries the index with the top bit
 *     clear for inserted keys and set for absent ones).  Reading them is a sequential
 *     stream the hardware prefetcher hides, as a real input buffer would be.
 *   - Filters are created (and their memory touched) outside the timed region.  Both
 *     libraries calloc their arrays, whose fresh pages would fault inside the first
 *     insert loop, so each is cleared once before timing (once_clear, bloom_reset).
 *     Both then start on resident memory.  The growing structures (scalable, DBF)
 *     allocate as they grow, and those faults are part of their inserts.
 *   - Every structure uses a fixed seed, so repetitions build identical filters, and
 *     the batch query must report exactly the one-key query's positives; a mismatch is
 *     a library bug and stops the run.
 *   - Batch descriptors (once_key) are filled per chunk inside the timed loop, because
 *     a caller must do that too; it costs well under a nanosecond a key.
 */
#include <once_advanced.h>
#include <once_math.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <bloom.h>

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define KEY_LEN 16
#define TARGET_FPR 0.01
#define BENCH_SEED UINT64_C(0x6f6e63652d62656e) /* "once-ben": fixed for repeatable runs */
#define CHUNK 256          /* keys per batch call: a typical read buffer's worth */
#define PREFETCH_AHEAD 16  /* the blocked layout's batch distance (BLOCKED_AHEAD) */
#define PREFETCH_RING 32   /* a power of two above PREFETCH_AHEAD */
#define MAX_REPS 101
#define MAX_NS 16
/* The pointer chase runs min(N, this) steps: latency per step is flat once the chase
 * has left the caches, and at N = 10^8 a full-length chase would add seconds a rep. */
#define DEPENDENT_MAX_STEPS UINT64_C(10000000)

typedef struct key16 {
    uint64_t w[2];
} key16;

_Static_assert(sizeof(key16) == KEY_LEN, "keys are 16 bytes");

enum {
    S_STANDARD,
    S_PARTITIONED,
    S_BLOCKED,
    S_COUNTING,
    S_LIBBLOOM,
    S_MEMORY_FLOOR,
    S_APBF,
    S_APBBF,
    S_TLBF,
    S_TIMER,
    S_TAGGED,
    S_SCALABLE,
    S_DBF,
    S_BLOCKED_WINDOW,
    S_BPBF,
    S_DBPBF,
    S_CARDINALITY,
    S_COUNT
};

static const char *const structure_name[S_COUNT] = {
    "standard", "partitioned", "blocked", "counting", "libbloom", "memory_floor",
    "apbf", "apbbf", "tlbf", "timer", "tagged", "scalable", "dbf", "blocked_window", "bpbf",
    "dbpbf", "cardinality",
};
static const once_type structure_type[S_COUNT] = {
    ONCE_STANDARD, ONCE_PARTITIONED, ONCE_BLOCKED, ONCE_COUNTING, 0, 0,
    ONCE_APBF, ONCE_APBBF, ONCE_TLBF, ONCE_TIMER, ONCE_TAGGED, ONCE_SCALABLE, ONCE_DBF,
    ONCE_BLOCKED,
    ONCE_BPBF, ONCE_DBPBF, ONCE_BLOCKED,
};
#define WINDOW_STRUCTURES                                                                      \
    ((1u << S_APBF) | (1u << S_APBBF) | (1u << S_TLBF) | (1u << S_TIMER) | (1u << S_TAGGED) |  \
     (1u << S_BLOCKED_WINDOW))

#define ALL_STRUCTURES ((1u << S_COUNT) - 1)
/* Block-partitioned filters (paper 002); bench_block_partitioned. */
#define BLOCK_PARTITIONED_STRUCTURES ((1u << S_BPBF) | (1u << S_DBPBF))
/* Structures the full plan runs at 10^6 and 10^7 keys only (the block-partitioned
 * ones touch one line per block, 7 at 1%, to insert). */
#define NOT_AT_1E8                                                                             \
    (WINDOW_STRUCTURES | (1u << S_SCALABLE) | (1u << S_DBF) | BLOCK_PARTITIONED_STRUCTURES |  \
     (1u << S_CARDINALITY))
/* The scalable filter starts at N / SCALABLE_GROWTH keys and grows to N. */
#define SCALABLE_GROWTH 100

/* One N of the plan: which structures run there and how many repetitions. */
typedef struct bench_case {
    uint64_t n;
    unsigned structures; /* bit s = structure s */
    int reps;
} bench_case;

/* A measurement kept for the summary; negative fpr / bits_per_key print as '-'. */
typedef struct result {
    int structure;
    const char *op;
    uint64_t n;
    double ns;
    double fpr;
    double bits_per_key;
} result;

static uint64_t max_keys; /* length of the key arrays */
static volatile uint64_t runtime_seed = BENCH_SEED;
static result *results;
static size_t result_count, result_cap;

/* Keeps the memory-floor sums observable so the loads cannot be optimised away. */
static volatile uint64_t sink;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("once-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: once-bench [--quick] [--n N[,N...]] [--structures a,b,...] [--reps R]\n"
            "  --quick        N = 10^6 for every structure, 10^7 for blocked, libbloom and\n"
            "                 memory_floor (under a minute)\n"
            "  --n            key counts (integers or forms like 1e7); default 1e6,1e7,1e8\n"
            "  --structures   any of standard,partitioned,blocked,counting,libbloom,\n"
            "                 memory_floor,apbf,apbbf,tlbf,timer,tagged,scalable,dbf,\n"
            "                 blocked_window,bpbf,dbpbf,cardinality; default all\n"
            "  --reps         repetitions per measurement, median reported; default 3\n");
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t splitmix64(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static inline uint64_t reduce(uint64_t x, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

#define ABSENT_DOMAIN (UINT64_C(1) << 63)

/* Key i of a domain: a pseudo-random word, then the index tagged with the domain. */
static void make_keys(key16 *keys, uint64_t n, uint64_t domain)
{
    for (uint64_t i = 0; i < n; i++) {
        keys[i].w[0] = splitmix64(i | domain);
        keys[i].w[1] = i | domain;
    }
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int count)
{
    qsort(v, (size_t)count, sizeof *v, compare_double);
    return count % 2 ? v[count / 2] : (v[count / 2 - 1] + v[count / 2]) / 2.0;
}

static void emit(int structure, const char *op, uint64_t n, double ns, double fpr,
                 double bits_per_key)
{
    if (result_count == result_cap) {
        result_cap = result_cap ? 2 * result_cap : 64;
        results = realloc(results, result_cap * sizeof *results);
        if (results == NULL)
            die("out of memory");
    }
    results[result_count++] = (result){structure, op, n, ns, fpr, bits_per_key};

    printf("%s %s %" PRIu64 " %.2f", structure_name[structure], op, n, ns);
    if (fpr >= 0)
        printf(" %.6f", fpr);
    else
        printf(" -");
    if (bits_per_key >= 0)
        printf(" %.3f\n", bits_per_key);
    else
        printf(" -\n");
    fflush(stdout); /* a full run takes minutes: show each line as it is measured */
}

static const result *find_result(int structure, const char *op, uint64_t n)
{
    for (size_t i = 0; i < result_count; i++)
        if (results[i].structure == structure && results[i].n == n &&
            strcmp(results[i].op, op) == 0)
            return &results[i];
    return NULL;
}

/* ------------------------------------------------------------ libonce */

/* Fault a new filter's calloc'd pages in before timing (see "Method notes"). */
static once_filter *resident(once_filter *f)
{
    if (once_clear(f) != ONCE_OK)
        die("once_clear failed");
    return f;
}

/* once_config_init's config for `type` at TARGET_FPR, but with a fixed seed instead of a
 * random one, so that every repetition builds the same filter. */
static once_config bench_config(once_type type)
{
    once_config config;
    once_config_init(&config, type);
    config.error = TARGET_FPR;
    config.seed = BENCH_SEED;
    config.seed_is_set = true;
    return config;
}

/* What once_create_for_capacity(type, n, TARGET_FPR) builds, with bench_config's seed. */
static once_filter *new_filter(once_type type, uint64_t n)
{
    once_config config = bench_config(type);
    config.capacity = n;
    once_filter *f = NULL;
    once_status st = once_create(&f, &config);
    if (st != ONCE_OK)
        die("creating a %s filter for %" PRIu64 " keys: %s", once_type_name(type), n,
            once_strerror(st));
    return resident(f);
}

static size_t fill_chunk(once_key *chunk, const key16 *keys, uint64_t from, uint64_t n)
{
    size_t count = n - from < CHUNK ? (size_t)(n - from) : CHUNK;
    for (size_t j = 0; j < count; j++) {
        chunk[j].data = &keys[from + j];
        chunk[j].len = KEY_LEN;
        chunk[j].time_ms = 0;
    }
    return count;
}

/* The calls timed on keys at time 0: one key a call, then CHUNK keys a call (the order
 * of six_timings' rows). */
typedef enum timed_call {
    CALL_ADD,
    CALL_QUERY,
    CALL_TEST_AND_ADD,
    CALL_ADD_BATCH,
    CALL_QUERY_BATCH,
    CALL_TEST_AND_ADD_BATCH
} timed_call;

static const char *const timed_call_name[] = {
    "once_add",       "once_query",       "once_test_and_add",
    "once_add_batch", "once_query_batch", "once_test_and_add_batch",
};

/*
 * N calls of one kind over keys[0..n): ns a key, and in *answered (unless NULL) the keys
 * a query reported present or a test-and-add reported seen.  The test-and-adds take new
 * keys, so each is inserted: a dedup stream's common case.  Always inlined and called
 * with a constant `call`, so that each timed loop compiles to its one library call, as
 * if written out apart.
 */
static inline __attribute__((always_inline)) double
time_calls(once_filter *f, timed_call call, const key16 *keys, uint64_t n, uint64_t *answered)
{
    uint64_t count = 0;
    double t0 = now_ns();
    if (call >= CALL_ADD_BATCH) {
        once_key chunk[CHUNK];
        uint8_t answers[CHUNK];
        for (uint64_t i = 0; i < n; i += CHUNK) {
            size_t c = fill_chunk(chunk, keys, i, n);
            once_status st = call == CALL_ADD_BATCH ? once_add_batch(f, chunk, c)
                             : call == CALL_QUERY_BATCH
                                 ? once_query_batch(f, chunk, c, answers)
                                 : once_test_and_add_batch(f, chunk, c, answers);
            if (st != ONCE_OK)
                die("%s failed", timed_call_name[call]);
            if (call != CALL_ADD_BATCH)
                for (size_t j = 0; j < c; j++)
                    count += answers[j];
        }
    } else {
        for (uint64_t i = 0; i < n; i++) {
            bool answer;
            once_status st = call == CALL_ADD ? once_add(f, &keys[i], KEY_LEN, 0)
                             : call == CALL_QUERY
                                 ? once_query(f, &keys[i], KEY_LEN, 0, &answer)
                                 : once_test_and_add(f, &keys[i], KEY_LEN, 0, &answer);
            if (st != ONCE_OK)
                die("%s failed", timed_call_name[call]);
            if (call != CALL_ADD)
                count += answer;
        }
    }
    double ns = (now_ns() - t0) / (double)n;
    if (answered != NULL)
        *answered = count;
    return ns;
}

/*
 * The six timings of a structure that takes keys one at a time and in batches: for each
 * repetition, fresh filters from make(s, n) take N one-key inserts and answer N one-key
 * queries of absent keys, take N one-key test-and-adds, then N keys and N queries in
 * batches, then N test-and-adds in batches; the batch forms must find what the one-key
 * calls found.  `first`, when not NULL, gets the first filter of the last repetition
 * after its queries (for its stats).
 */
typedef once_filter *(*filter_maker)(int s, uint64_t n);

typedef struct six_timings {
    double ns[6][MAX_REPS]; /* by timed_call: insert, query, test_and_add, then batches */
    uint64_t positives;     /* absent keys the queries reported present */
    uint64_t seen;          /* new keys the test-and-adds reported seen */
} six_timings;

static void time_six(six_timings *t, int s, uint64_t n, int reps, filter_maker make,
                     const key16 *in, const key16 *out,
                     void (*first)(const once_filter *, void *), void *context)
{
    uint64_t batch_positives = 0, batch_seen = 0;
    t->positives = t->seen = 0;
    for (int r = 0; r < reps; r++) {
        once_filter *f = make(s, n);
        t->ns[CALL_ADD][r] = time_calls(f, CALL_ADD, in, n, NULL);
        t->ns[CALL_QUERY][r] = time_calls(f, CALL_QUERY, out, n, &t->positives);
        if (first != NULL && r == reps - 1)
            first(f, context);
        once_free(f);

        f = make(s, n);
        t->ns[CALL_TEST_AND_ADD][r] = time_calls(f, CALL_TEST_AND_ADD, in, n, &t->seen);
        once_free(f);

        f = make(s, n);
        t->ns[CALL_ADD_BATCH][r] = time_calls(f, CALL_ADD_BATCH, in, n, NULL);
        t->ns[CALL_QUERY_BATCH][r] = time_calls(f, CALL_QUERY_BATCH, out, n, &batch_positives);
        once_free(f);
        if (batch_positives != t->positives)
            die("%s at n=%" PRIu64 ": batch query found %" PRIu64
                " positives, one-key query %" PRIu64,
                structure_name[s], n, batch_positives, t->positives);

        f = make(s, n);
        t->ns[CALL_TEST_AND_ADD_BATCH][r] =
            time_calls(f, CALL_TEST_AND_ADD_BATCH, in, n, &batch_seen);
        once_free(f);
        if (batch_seen != t->seen)
            die("%s at n=%" PRIu64 ": batch test-and-add saw %" PRIu64 " keys, one-key %" PRIu64,
                structure_name[s], n, batch_seen, t->seen);
    }
}

/* The six rows of time_six's timings. */
static void emit_six(int s, uint64_t n, int reps, six_timings *t, double bits_per_key)
{
    static const char *const op[6] = {"insert",       "query",       "test_and_add",
                                      "insert_batch", "query_batch", "test_and_add_batch"};
    double fpr = (double)t->positives / (double)n, seen = (double)t->seen / (double)n;
    for (int i = 0; i < 6; i++)
        emit(s, op[i], n, median(t->ns[i], reps), i % 3 == 0 ? -1 : i % 3 == 1 ? fpr : seen,
             bits_per_key);
}

static once_filter *new_static(int s, uint64_t n)
{
    return new_filter(structure_type[s], n);
}

static void bench_once(int s, uint64_t n, int reps, const key16 *in, const key16 *out)
{
    once_type type = structure_type[s];
    uint64_t cells;
    uint32_t hashes;
    if (once_plan(type, n, TARGET_FPR, &cells, &hashes) != ONCE_OK)
        die("no %s geometry for %" PRIu64 " keys", structure_name[s], n);
    double bits_per_key = (double)cells * (type == ONCE_COUNTING ? 4.0 : 1.0) / (double)n;

    six_timings t;
    time_six(&t, s, n, reps, new_static, in, out, NULL, NULL);
    emit_six(s, n, reps, &t, bits_per_key);
}

/* ------------------------------------------------------------- windows */

/*
 * A window of N keys: a count window of N (APBF, APBBF) or a time window of N ms fed
 * one key a millisecond (TLBF, timer filter), all at 1% and the CLI's level 2 (0 for
 * the APBBF).  The first N keys fill the window (not timed); then N one-key inserts of
 * new keys, N queries of absent keys, N test-and-adds of those absent keys (new keys,
 * so each is inserted: the dedup stream's common case), and the same through the batch
 * calls on a second filter.  bits_per_key is the filter's memory (all of it, in bits)
 * per key in the window.  A '#' line gives the lines a key touches: k to insert, and
 * the model's expected count for a query answering false.
 *
 * blocked_window is the baseline of the windows' targets: the blocked filter built for
 * N keys at 1% (what a window of N at 1% would be without aging), timed on the same key
 * streams with the same calls.  It skips the fill, so that it holds N keys when queried
 * and its fpr column is at design capacity like the windows'; its probe costs the same
 * whatever the filter holds.  A final '#' line per N gives each window's time over it.
 */
static once_filter *new_window(int s, uint64_t n)
{
    if (s == S_BLOCKED_WINDOW)
        return new_filter(ONCE_BLOCKED, n);
    once_config c = bench_config(structure_type[s]);
    c.level = s == S_APBBF ? 0 : 2;
    if (s == S_APBF || s == S_APBBF) {
        c.window = n;
    } else {
        c.span_ms = n;
        c.capacity = n;
    }
    once_filter *f = NULL;
    once_status st = once_create(&f, &c);
    if (st != ONCE_OK)
        die("cannot build %s for a window of %" PRIu64 ": %s", structure_name[s], n,
            once_strerror(st));
    return resident(f);
}

typedef enum window_op { W_INSERT, W_QUERY, W_TEST_AND_ADD } window_op;

/* N calls of one operation over keys[0..n), key i at time t0 + i (t0 for queries);
 * one-key calls or batches of CHUNK.  Returns ns a key; *positives counts the keys
 * reported present (seen). */
static double time_window_op(once_filter *f, window_op op, const key16 *keys, uint64_t n,
                             uint64_t t0, int batch, uint64_t *positives)
{
    once_key chunk[CHUNK];
    uint8_t answer[CHUNK];
    uint64_t count_present = 0;
    double t = now_ns();
    for (uint64_t i = 0; i < n; i += CHUNK) {
        size_t count = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        if (batch) {
            for (size_t j = 0; j < count; j++)
                chunk[j] = (once_key){&keys[i + j], KEY_LEN, op == W_QUERY ? t0 : t0 + i + j};
            once_status st = op == W_INSERT  ? once_add_batch(f, chunk, count)
                             : op == W_QUERY ? once_query_batch(f, chunk, count, answer)
                                             : once_test_and_add_batch(f, chunk, count, answer);
            if (st != ONCE_OK)
                die("batch call failed: %s", once_strerror(st));
            if (op != W_INSERT)
                for (size_t j = 0; j < count; j++)
                    count_present += answer[j];
        } else {
            for (size_t j = 0; j < count; j++) {
                const void *key = &keys[i + j];
                bool p = false;
                once_status st = op == W_INSERT ? once_add(f, key, KEY_LEN, t0 + i + j)
                                 : op == W_QUERY
                                     ? once_query(f, key, KEY_LEN, t0, &p)
                                     : once_test_and_add(f, key, KEY_LEN, t0 + i + j, &p);
                if (st != ONCE_OK)
                    die("one-key call failed: %s", once_strerror(st));
                count_present += p;
            }
        }
    }
    *positives = count_present;
    return (now_ns() - t) / (double)n;
}

/* Mean lines read by a query answering false, over up to 200,000 absent keys. */
static double measured_reads(const once_filter *f, const key16 *out, uint64_t n, uint64_t now)
{
    uint64_t sum = 0, count = 0;
    for (uint64_t i = 0; i < n && i < 200000; i++) {
        bool p = false;
        uint32_t reads = 0;
        if (once_query_reads(f, &out[i], KEY_LEN, now, &p, &reads) != ONCE_OK)
            return -1;
        if (!p) {
            sum += reads;
            count++;
        }
    }
    return count ? (double)sum / (double)count : -1;
}

static void bench_window(int s, uint64_t n, int reps, const key16 *in, const key16 *out)
{
    if (2 * n > max_keys)
        die("windows need 2N keys; N = %" PRIu64 " is too large here", n);
    enum { OPS = 6 }; /* insert, query, test_and_add; one-key then batch */
    static const char *const op_name[OPS] = {"insert",       "query",       "test_and_add",
                                             "insert_batch", "query_batch", "test_and_add_batch"};
    double ns[OPS][MAX_REPS];
    uint64_t positives[OPS] = {0};
    double reads = -1;
    once_stats st;
    memset(&st, 0, sizeof st);
    for (int r = 0; r < reps; r++) {
        for (int batch = 0; batch < 2; batch++) {
            once_filter *f = new_window(s, n);
            uint64_t unused;
            if (s != S_BLOCKED_WINDOW) /* fill the window */
                time_window_op(f, W_INSERT, in, n, 1, batch, &unused);
            double *row[3] = {ns[3 * batch], ns[3 * batch + 1], ns[3 * batch + 2]};
            uint64_t *pos = &positives[3 * batch];
            row[W_INSERT][r] = time_window_op(f, W_INSERT, in + n, n, 1 + n, batch, &unused);
            row[W_QUERY][r] = time_window_op(f, W_QUERY, out, n, 2 * n, batch, &pos[W_QUERY]);
            if (r == 0 && batch == 0)
                reads = measured_reads(f, out, n, 2 * n);
            row[W_TEST_AND_ADD][r] =
                time_window_op(f, W_TEST_AND_ADD, out, n, 2 * n + 1, batch, &pos[W_TEST_AND_ADD]);
            once_get_stats(f, &st);
            once_free(f);
        }
        for (int op = W_QUERY; op <= W_TEST_AND_ADD; op++)
            if (positives[3 + op] != positives[op])
                die("%s: %s batch found %" PRIu64 " positives, one-key calls %" PRIu64,
                    structure_name[s], op_name[op], positives[3 + op], positives[op]);
    }
    /* Memory per key in the window: bytes, since a timer cell is 8-32 bits. */
    double bits_per_key = (double)st.bytes * 8.0 / (double)n;
    if (s != S_BLOCKED_WINDOW) {
        char measured[32] = "n/a";
        if (reads >= 0)
            snprintf(measured, sizeof measured, "%.2f", reads);
        printf("# %s n=%" PRIu64 ": k=%u l=%u slices=%u; lines touched: insert %u, query "
               "answering false %s measured, %.2f model\n",
               structure_name[s], n, st.hashes, st.age_slices, st.slices, st.hashes, measured,
               st.accesses_absent > 0 ? st.accesses_absent : 1.0 / (1.0 - st.fill_ratio));
    }
    for (int op = 0; op < OPS; op++) {
        bool answers = op % 3 != W_INSERT;
        emit(s, op_name[op], n, median(ns[op], reps),
             answers ? (double)positives[op] / (double)n : -1, bits_per_key);
    }
}

/* ------------------------------------------------------------ scalable */

/*
 * A scalable filter (BF.* semantics: expansion 2, tightening 1/2, compound rate 1%)
 * created for N / 100 keys and grown to N by the timed inserts, so the insert times
 * include its seven growths (each a plan and a zeroed allocation) and the queries
 * test every sub-filter.  Beside it, a blocked filter sized for N at 1% from the
 * start: what knowing the final count would buy.  Ops: insert (once_add, which is a
 * test-and-add here: BF.ADD), test_and_add (once_test_and_add of new keys, into
 * another fresh filter), query (absent keys), and their batch forms; bits_per_key is
 * the filter's whole memory over N.
 */
static once_filter *new_scalable(int s, uint64_t n)
{
    (void)s;
    once_config c = bench_config(ONCE_SCALABLE);
    c.capacity = n / SCALABLE_GROWTH ? n / SCALABLE_GROWTH : 1;
    c.expansion = 2;
    c.tightening = 0.5;
    once_filter *f = NULL;
    once_status st = once_create(&f, &c);
    if (st != ONCE_OK)
        die("creating a scalable filter for %" PRIu64 " keys: %s", c.capacity, once_strerror(st));
    return f;
}

static void read_stats(const once_filter *f, void *stats)
{
    once_get_stats(f, (once_stats *)stats);
}

static void bench_scalable(uint64_t n, int reps, const key16 *in, const key16 *out)
{
    double blocked_tand[MAX_REPS];
    /* The blocked filter's one-key test_and_add, for the comparison below, unless the
     * blocked filter's own run measured it already. */
    bool time_blocked = find_result(S_BLOCKED, "test_and_add", n) == NULL;
    once_stats st;
    memset(&st, 0, sizeof st);
    six_timings t;
    time_six(&t, S_SCALABLE, n, reps, new_scalable, in, out, read_stats, &st);
    for (int r = 0; time_blocked && r < reps; r++) {
        once_filter *f = new_filter(ONCE_BLOCKED, n);
        blocked_tand[r] = time_calls(f, CALL_TEST_AND_ADD, in, n, NULL);
        once_free(f);
    }
    double bits_per_key = (double)st.bytes * 8.0 / (double)n;
    uint64_t cells;
    uint32_t k;
    double blocked_bits = once_plan(ONCE_BLOCKED, n, TARGET_FPR, &cells, &k) == ONCE_OK
                              ? (double)cells / (double)n
                              : -1;
    printf("# scalable n=%" PRIu64 ": from %" PRIu64 " keys, %u sub-filters, capacity %" PRIu64
           ", items %" PRIu64 ", design bound %.5f; blocked sized for n: %.2f bits/key\n",
           n, n / SCALABLE_GROWTH, st.filters, st.capacity, st.items, st.design_fpr,
           blocked_bits);
    emit_six(S_SCALABLE, n, reps, &t, bits_per_key);
    if (time_blocked)
        emit(S_BLOCKED, "test_and_add", n, median(blocked_tand, reps), -1, blocked_bits);
}

/* ----------------------------------------------------------------- DBF */

/*
 * Dynamic Bloom filter (paper 003): query cost against the number of rows, with rows
 * stored as rows and as bit slices (section 3.5.3).  Rows hold c = N/128 keys at 1%
 * each (at least 1000); for s = 1, 2, 4, ..., 128 rows a DBF gets s c keys, then
 * answers min(N, 200000) queries of absent keys (every row is asked) and as many of
 * present keys.  Its test-and-add is timed on the same filter, before the queries:
 * the inserts stop c/2 keys short of s c, and c/2 new keys (absent keys not among
 * those queried) are test-and-added, which fills the last row without opening another,
 * so that it runs over the s rows the queries see.  The batch test-and-add does the
 * same on a second filter and must see exactly the keys the one-key calls saw.  Lines:
 * "dbf query_absent/rows|slices s_ROWS ..." with n = the keys held; bits_per_key is
 * the memory (all of it) per key held.
 */
enum { DBF_OPS = 5 };
static const char *const dbf_op[2][DBF_OPS] = {
    {"insert/rows", "query_absent/rows", "query_present/rows", "test_and_add/rows",
     "test_and_add_batch/rows"},
    {"insert/slices", "query_absent/slices", "query_present/slices", "test_and_add/slices",
     "test_and_add_batch/slices"},
};

static uint64_t dbf_row_keys(uint64_t n)
{
    return n / 128 > 1000 ? n / 128 : 1000;
}

static once_filter *new_dbf(uint64_t c, int slice)
{
    once_config config = bench_config(ONCE_DBF);
    config.capacity = c;
    config.bit_slice = slice;
    once_filter *f = NULL;
    if (once_create(&f, &config) != ONCE_OK)
        die("creating a DBF of rows of %" PRIu64 " keys", c);
    return f;
}

static void bench_dbf(uint64_t n, int reps, const key16 *in, const key16 *out)
{
    uint64_t c = dbf_row_keys(n);
    uint64_t probes = n < 200000 ? n : 200000;
    uint64_t half = c / 2;
    if (probes + half > max_keys)
        die("dbf: %" PRIu64 " absent keys needed, %" PRIu64 " made", probes + half, max_keys);
    printf("# dbf: rows of c=%" PRIu64 " keys at %g; columns as above, n = keys held = rows x c\n",
           c, TARGET_FPR);
    for (uint64_t rows = 1; rows <= 128 && rows * c <= max_keys; rows *= 2) {
        uint64_t held = rows * c;
        for (int slice = 0; slice < 2; slice++) {
            double add[MAX_REPS], absent[MAX_REPS], present[MAX_REPS], tand[MAX_REPS];
            double tand_batch[MAX_REPS];
            uint64_t positives = 0, found = 0, seen = 0, batch_seen = 0;
            once_stats st;
            memset(&st, 0, sizeof st);
            for (int r = 0; r < reps; r++) {
                once_filter *f = new_dbf(c, slice);
                add[r] = time_calls(f, CALL_ADD, in, held - half, NULL);
                tand[r] = time_calls(f, CALL_TEST_AND_ADD, out + probes, half, &seen);
                absent[r] = time_calls(f, CALL_QUERY, out, probes, &positives);
                present[r] = time_calls(f, CALL_QUERY, in,
                                        probes < held - half ? probes : held - half, &found);
                once_get_stats(f, &st);
                once_free(f);

                f = new_dbf(c, slice);
                time_calls(f, CALL_ADD_BATCH, in, held - half, NULL);
                tand_batch[r] = time_calls(f, CALL_TEST_AND_ADD_BATCH, out + probes, half,
                                           &batch_seen);
                once_free(f);
                if (batch_seen != seen)
                    die("dbf: batch test-and-add saw %" PRIu64 " keys, one-key %" PRIu64,
                        batch_seen, seen);
            }
            uint64_t present_keys = probes < held - half ? probes : held - half;
            if (st.filters != rows || found != present_keys)
                die("dbf: %u rows (wanted %" PRIu64 "), %" PRIu64 " present keys found",
                    st.filters, rows, found);
            double bits_per_key = (double)st.bytes * 8.0 / (double)held;
            printf("# dbf rows=%" PRIu64 " %s\n", rows, slice ? "bit slices" : "row storage");
            emit(S_DBF, dbf_op[slice][0], held, median(add, reps), -1, bits_per_key);
            emit(S_DBF, dbf_op[slice][1], held, median(absent, reps),
                 (double)positives / (double)probes, bits_per_key);
            emit(S_DBF, dbf_op[slice][2], held, median(present, reps), -1, bits_per_key);
            emit(S_DBF, dbf_op[slice][3], held, median(tand, reps),
                 (double)seen / (double)half, bits_per_key);
            emit(S_DBF, dbf_op[slice][4], held, median(tand_batch, reps),
                 (double)seen / (double)half, bits_per_key);
        }
    }
}

/* -------------------------------------------------- block-partitioned */

/*
 * Block-partitioned filters (paper 002) at 1% for N keys, beside the blocked filter:
 *   bpbf   the static filter for N keys: m_b = N / ln2 bits a block, one hash function
 *          a block, 7 blocks (2^-7 < 1%), so 7 random lines to insert and about two
 *          (the blocks an absent key gets through) to query;
 *   dbpbf  the dynamic filter started for N/4 keys at 0.25% a batch, so that N keys
 *          open four batches and the rate after them is about 1%: a query reads every
 *          batch, the cost of growing without knowing N.
 * Same timing as the other static filters (fresh filter per timed insert pass; absent
 * keys queried; batch answers must equal one-key answers).
 */
static once_filter *new_block_partitioned(int s, uint64_t n)
{
    once_config c = bench_config(structure_type[s]);
    c.capacity = s == S_DBPBF ? (n + 3) / 4 : n;
    c.error = s == S_DBPBF ? TARGET_FPR / 4 : TARGET_FPR;
    once_filter *f = NULL;
    once_status st = once_create(&f, &c);
    if (st != ONCE_OK)
        die("cannot build %s for %" PRIu64 " keys: %s", structure_name[s], n, once_strerror(st));
    return resident(f);
}

static void read_bpbf_state(const once_filter *f, void *state)
{
    once_bpbf_get_state(f, (once_bpbf_state *)state);
}

static void bench_block_partitioned(int s, uint64_t n, int reps, const key16 *in,
                                    const key16 *out)
{
    once_bpbf_state state;
    memset(&state, 0, sizeof state);
    six_timings t;
    time_six(&t, s, n, reps, new_block_partitioned, in, out, read_bpbf_state, &state);
    double bits_per_key = (double)state.bits / (double)n;
    printf("# %s n=%" PRIu64 ": %u blocks of %" PRIu64 " bits, %u hash a block, %u batches "
           "(n_thres %" PRIu64 "); formula rate %.4f\n",
           structure_name[s], n, state.geometry.blocks, state.geometry.block_length,
           state.geometry.block_hashes, state.batches, state.geometry.batch_threshold,
           state.fpr_formula);
    emit_six(s, n, reps, &t, bits_per_key);
}

/* -------------------------------------------------------- cardinality */

/*
 * Distinct-key estimates (paper 002, section 5): a blocked filter for N keys at 1%
 * holding N keys, and a second of the same geometry holding the other half of a 2N
 * key set.  Ops: estimate (once_estimate_cardinality: one popcount pass over the
 * array plus the interval's bisection), union and intersection (once_estimate_union /
 * _intersection: one pass over both arrays).  ns is per call; the fpr column carries
 * the estimate's relative error, bits_per_key the filter's.
 */
static void bench_cardinality(uint64_t n, int reps, const key16 *in)
{
    uint64_t cells;
    uint32_t hashes;
    if (once_plan(ONCE_BLOCKED, n, TARGET_FPR, &cells, &hashes) != ONCE_OK)
        die("no blocked geometry for %" PRIu64 " keys", n);
    once_filter *a = NULL, *b = NULL;
    if (once_create_with_geometry(&a, ONCE_BLOCKED, cells, hashes) != ONCE_OK ||
        once_create_with_geometry(&b, ONCE_BLOCKED, cells, hashes) != ONCE_OK)
        die("creating blocked filters of %" PRIu64 " bits", cells);
    /* Same seed for both, so they combine: b takes the second half of a's keys and as
     * many of its own (the keys past N in `in`, which has 2N for the windows). */
    once_free(b);
    once_config c;
    once_config_init(&c, ONCE_BLOCKED);
    c.bits = cells;
    c.hashes = hashes;
    c.seed = once_seed(a);
    c.seed_is_set = true;
    if (once_create(&b, &c) != ONCE_OK)
        die("creating a blocked filter of %" PRIu64 " bits", cells);
    time_calls(a, CALL_ADD_BATCH, in, n, NULL);
    time_calls(b, CALL_ADD_BATCH, in + n / 2, n, NULL);
    double single[MAX_REPS], unions[MAX_REPS], inter[MAX_REPS];
    once_cardinality est = {0, 0, 0, 0}, u = {0, 0, 0, 0}, x = {0, 0, 0, 0};
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        once_estimate_cardinality(a, 0, 0.9, &est);
        double t1 = now_ns();
        once_estimate_union(a, b, 0.9, &u);
        double t2 = now_ns();
        once_estimate_intersection(a, b, 0.9, &x);
        double t3 = now_ns();
        single[r] = t1 - t0;
        unions[r] = t2 - t1;
        inter[r] = t3 - t2;
    }
    double bits_per_key = (double)cells / (double)n;
    printf("# cardinality: blocked filters of %" PRIu64 " bits; estimates %.0f (true %" PRIu64
           "), union %.0f (true %" PRIu64 "), intersection %.0f (true %" PRIu64 ")\n",
           cells, est.estimate, n, u.estimate, n + n / 2, x.estimate, n / 2);
    emit(S_CARDINALITY, "estimate", n, median(single, reps), fabs(est.estimate - (double)n) / (double)n,
         bits_per_key);
    emit(S_CARDINALITY, "union", n, median(unions, reps),
         fabs(u.estimate - (double)(n + n / 2)) / (double)(n + n / 2), bits_per_key);
    emit(S_CARDINALITY, "intersection", n, median(inter, reps),
         fabs(x.estimate - (double)(n / 2)) / (double)(n / 2), bits_per_key);
    once_free(a);
    once_free(b);
}

/* ----------------------------------------------------------- libbloom */

static void bench_libbloom(uint64_t n, int reps, const key16 *in, const key16 *out)
{
    /* libbloom counts entries and bits in int: refuse what it would overflow. */
    if (n < 1000 || (double)n * -log(TARGET_FPR) / (log(2) * log(2)) >= (double)INT_MAX) {
        printf("# libbloom skipped at n=%" PRIu64 ": outside its int range (1000 .. ~2.2e8)\n",
               n);
        return;
    }
    double add[MAX_REPS], query[MAX_REPS];
    uint64_t positives = 0;
    double bits_per_key = 0;
    for (int r = 0; r < reps; r++) {
        struct bloom b;
        if (bloom_init(&b, (int)n, TARGET_FPR) != 0)
            die("bloom_init failed for %" PRIu64 " keys", n);
        bloom_reset(&b); /* fault the calloc'd pages in now, not in the insert loop */
        bits_per_key = (double)b.bits / (double)n;

        double t0 = now_ns();
        for (uint64_t i = 0; i < n; i++)
            if (bloom_add(&b, &in[i], KEY_LEN) < 0)
                die("bloom_add failed");
        add[r] = (now_ns() - t0) / (double)n;

        uint64_t count = 0;
        t0 = now_ns();
        for (uint64_t i = 0; i < n; i++)
            count += bloom_check(&b, &out[i], KEY_LEN) == 1;
        query[r] = (now_ns() - t0) / (double)n;
        positives = count;
        bloom_free(&b);
    }
    emit(S_LIBBLOOM, "insert", n, median(add, reps), -1, bits_per_key);
    emit(S_LIBBLOOM, "query", n, median(query, reps), (double)positives / (double)n,
         bits_per_key);
}

/* -------------------------------------------------------- memory floor */

/* The line for step i: a multiplicative hash of the index, cheap enough (a multiply,
 * a shift, a multiply-high) that the loop is bound by the loads alone. */
static inline uint64_t floor_line(uint64_t i, uint64_t lines)
{
    uint64_t x = (i + 1) * UINT64_C(0x9e3779b97f4a7c15);
    x ^= x >> 29;
    return reduce(x * UINT64_C(0xbf58476d1ce4e5b9), lines);
}

static double time_floor_load(const uint64_t *array, uint64_t lines, uint64_t n)
{
    uint64_t ring[PREFETCH_RING];
    uint64_t sum = 0;
    double t0 = now_ns();
    uint64_t ahead = n < PREFETCH_AHEAD ? n : PREFETCH_AHEAD;
    for (uint64_t i = 0; i < ahead; i++) {
        ring[i] = floor_line(i, lines) * 8;
        __builtin_prefetch(&array[ring[i]], 0, 3);
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t next = i + PREFETCH_AHEAD;
        if (next < n) {
            uint64_t *slot = &ring[next & (PREFETCH_RING - 1)];
            *slot = floor_line(next, lines) * 8;
            __builtin_prefetch(&array[*slot], 0, 3);
        }
        sum += array[ring[i & (PREFETCH_RING - 1)]];
    }
    double ns = (now_ns() - t0) / (double)n;
    sink += sum;
    return ns;
}

/* Link every line's first word to the next line of one random cycle through all lines
 * (Sattolo's shuffle), so a chase visits each line once per lap in random order. */
static void build_cycle(uint64_t *array, uint64_t lines)
{
    for (uint64_t i = 0; i < lines; i++)
        array[i * 8] = i;
    for (uint64_t i = lines - 1; i > 0; i--) {
        uint64_t j = reduce(splitmix64(BENCH_SEED + i), i); /* j < i */
        uint64_t t = array[i * 8];
        array[i * 8] = array[j * 8];
        array[j * 8] = t;
    }
}

static double time_floor_dependent(const uint64_t *array, uint64_t steps)
{
    uint64_t line = 0;
    double t0 = now_ns();
    for (uint64_t s = 0; s < steps; s++)
        line = array[line * 8];
    double ns = (now_ns() - t0) / (double)steps;
    sink += line;
    return ns;
}

/* The floor of any filter that touches one line a key: hash the key (XXH3-128, as the
 * library does), map it to a line, prefetch ahead, load.  No probe logic at all. */
static double time_floor_hash_load(const uint64_t *array, uint64_t lines, const key16 *keys,
                                   uint64_t n)
{
    /* The seed comes from memory, as the library's does: a compile-time seed would let
     * the compiler fold it into XXH3's secret and make the floor cheaper than any
     * seeded filter can be. */
    const uint64_t seed = runtime_seed;
    uint64_t ring[PREFETCH_RING];
    uint64_t sum = 0;
    double t0 = now_ns();
    uint64_t ahead = n < PREFETCH_AHEAD ? n : PREFETCH_AHEAD;
    for (uint64_t i = 0; i < ahead; i++) {
        XXH128_hash_t h = XXH3_128bits_withSeed(&keys[i], KEY_LEN, seed);
        ring[i] = reduce(h.low64, lines) * 8 + (h.high64 & 7);
        __builtin_prefetch(&array[ring[i]], 0, 3);
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t next = i + PREFETCH_AHEAD;
        if (next < n) {
            XXH128_hash_t h = XXH3_128bits_withSeed(&keys[next], KEY_LEN, seed);
            uint64_t *slot = &ring[next & (PREFETCH_RING - 1)];
            *slot = reduce(h.low64, lines) * 8 + (h.high64 & 7);
            __builtin_prefetch(&array[*slot], 0, 3);
        }
        sum += array[ring[i & (PREFETCH_RING - 1)]];
    }
    double ns = (now_ns() - t0) / (double)n;
    sink += sum;
    return ns;
}

/*
 * The floor of a k-probe layout's one-key calls, with no hashing and no library: an
 * array of FLOOR_PROBE_BITS bits a key (the counting filter's size at N), half its bits
 * set, and per key FLOOR_PROBES bit positions from floor_line's mix.  probe_query reads
 * them in order and stops at the first clear bit, as a query of an absent key does;
 * probe_test_and_add reads all of them, then sets them all unless all were set, as a
 * test-and-add of a new key must.  Their ratio is what this host charges for k lines
 * at once against a short chain that stops early, whatever a library does.
 */
#define FLOOR_PROBES 7
#define FLOOR_PROBE_BITS 38

static double time_floor_probes(uint64_t *array, uint64_t bits, uint64_t first, uint64_t n,
                                bool test_and_add)
{
    uint64_t found = 0;
    double t0 = now_ns();
    for (uint64_t i = first; i < first + n; i++) {
        uint64_t pos[FLOOR_PROBES];
        bool all = true;
        for (int j = 0; j < FLOOR_PROBES; j++) {
            pos[j] = floor_line(i * FLOOR_PROBES + (uint64_t)j, bits);
            if (test_and_add) {
                all &= (array[pos[j] >> 6] >> (pos[j] & 63)) & 1;
            } else if (!((array[pos[j] >> 6] >> (pos[j] & 63)) & 1)) {
                all = false;
                break;
            }
        }
        if (test_and_add && !all)
            for (int j = 0; j < FLOOR_PROBES; j++)
                array[pos[j] >> 6] |= UINT64_C(1) << (pos[j] & 63);
        found += all;
    }
    double ns = (now_ns() - t0) / (double)n;
    sink += found;
    return ns;
}

static void bench_probe_floor(uint64_t n, int reps)
{
    uint64_t bits = n * FLOOR_PROBE_BITS;
    uint64_t words = (bits + 63) / 64;
    size_t bytes = (size_t)(words * 8);
    void *p = NULL;
    if (posix_memalign(&p, (size_t)2 << 20, bytes) != 0)
        die("out of memory for a %" PRIu64 "-bit array", bits);
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    uint64_t *array = p;
    double query[MAX_REPS], tand[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        for (uint64_t w = 0; w < words; w++) /* half the bits set, afresh each time */
            array[w] = splitmix64(w + (uint64_t)r * words);
        query[r] = time_floor_probes(array, bits, 0, n, false);
        tand[r] = time_floor_probes(array, bits, n, n, true);
    }
    free(array);
    emit(S_MEMORY_FLOOR, "probe_query", n, median(query, reps), -1, FLOOR_PROBE_BITS);
    emit(S_MEMORY_FLOOR, "probe_test_and_add", n, median(tand, reps), -1, FLOOR_PROBE_BITS);
}

static void bench_memory_floor(uint64_t n, int reps, const key16 *keys)
{
    uint64_t bits;
    uint32_t hashes;
    if (once_plan(ONCE_BLOCKED, n, TARGET_FPR, &bits, &hashes) != ONCE_OK)
        die("no blocked geometry for %" PRIu64 " keys", n);
    uint64_t lines = (bits + 511) / 512;
    /* Allocated and zeroed as the library allocates its arrays, so it gets the same
     * kind of pages (transparent huge pages or not) as the filter it stands for. */
    size_t bytes = (size_t)(lines * 64);
    size_t align = bytes >= ((size_t)4 << 20) ? ((size_t)2 << 20) : 64;
    void *p = NULL;
    if (posix_memalign(&p, align, bytes) != 0)
        die("out of memory for a %" PRIu64 "-line array", lines);
#ifdef MADV_HUGEPAGE
    if (align > 64)
        (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    uint64_t *array = p;
    memset(array, 0, (size_t)(lines * 64));
    build_cycle(array, lines);

    uint64_t steps = n < DEPENDENT_MAX_STEPS ? n : DEPENDENT_MAX_STEPS;
    double load[MAX_REPS], hash_load[MAX_REPS], dependent[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        load[r] = time_floor_load(array, lines, n);
        hash_load[r] = time_floor_hash_load(array, lines, keys, n);
        dependent[r] = time_floor_dependent(array, steps);
    }
    free(array);
    emit(S_MEMORY_FLOOR, "load", n, median(load, reps), -1, -1);
    emit(S_MEMORY_FLOOR, "hash_load", n, median(hash_load, reps), -1, -1);
    emit(S_MEMORY_FLOOR, "load_dependent", n, median(dependent, reps), -1, -1);
    bench_probe_floor(n, reps);
}

/* --------------------------------------------------------------- report */

static void print_header(const bench_case *cases, int case_count)
{
    printf("# once-bench: libonce %s against libbloom %s\n", once_version(), bloom_version());

    char model[256] = "unknown";
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    if (cpuinfo != NULL) {
        char line[512];
        while (fgets(line, sizeof line, cpuinfo) != NULL) {
            char *colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
                snprintf(model, sizeof model, "%s", colon + 2);
                model[strcspn(model, "\n")] = '\0';
                break;
            }
        }
        fclose(cpuinfo);
    }
    struct utsname u;
    if (uname(&u) == 0)
        printf("# host: %s %s %s\n", u.sysname, u.release, u.machine);
    printf("# cpu: %s, %ld online cpus\n", model, sysconf(_SC_NPROCESSORS_ONLN));
    printf("# simd path (blocked filter): %s\n", once_simd_path());
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (thp != NULL) {
        char line[128];
        if (fgets(line, sizeof line, thp) != NULL) {
            line[strcspn(line, "\n")] = '\0';
            printf("# transparent huge pages: %s\n", line);
        }
        fclose(thp);
    }
#ifdef __VERSION__
    printf("# compiler: %s\n", __VERSION__);
#endif
    printf("# keys: %d bytes; absent keys from a disjoint domain; target fpr %g; seed 0x%016" PRIx64
           "\n",
           KEY_LEN, TARGET_FPR, BENCH_SEED);
    printf("# batch: %d keys a call; memory_floor prefetch distance %d, load_dependent "
           "steps min(n, %" PRIu64 ")\n",
           CHUNK, PREFETCH_AHEAD, DEPENDENT_MAX_STEPS);
    for (int c = 0; c < case_count; c++) {
        printf("# n=%" PRIu64 " reps=%d (median):", cases[c].n, cases[c].reps);
        for (int s = 0; s < S_COUNT; s++) {
            if (!(cases[c].structures & (1u << s)))
                continue;
            printf(" %s", structure_name[s]);
            uint64_t cells;
            uint32_t k;
            if (structure_type[s] != 0 &&
                once_plan(structure_type[s], cases[c].n, TARGET_FPR, &cells, &k) == ONCE_OK)
                printf("(%s=%" PRIu64 ",k=%" PRIu32 ")",
                       structure_type[s] == ONCE_COUNTING ? "counters" : "bits", cells, k);
        }
        printf("\n");
    }
    printf("# columns: structure op n ns_per_op fpr bits_per_key\n");
    fflush(stdout);
}

/* "2.43x", or "n/a" when either side was not measured. */
static const char *ratio(char *buf, size_t size, const result *num, const result *den)
{
    if (num == NULL || den == NULL || !(num->ns > 0) || !(den->ns > 0))
        snprintf(buf, size, "n/a");
    else
        snprintf(buf, size, "%.2fx", num->ns / den->ns);
    return buf;
}

/*
 * A test-and-add should cost about an insertion, not a query and then an insertion:
 * per N, every structure's test_and_add time over its query time, one-key and batch
 * (both on absent keys; the DBF's at each row count, over its absent-key query).
 */
static void print_test_and_add_summary(const bench_case *cases, int case_count)
{
    for (int c = 0; c < case_count; c++) {
        uint64_t n = cases[c].n;
        for (int batch = 0; batch < 2; batch++) {
            const char *tand_op = batch ? "test_and_add_batch" : "test_and_add";
            const char *query_op = batch ? "query_batch" : "query";
            bool any = false;
            for (int s = 0; s < S_COUNT; s++) {
                const result *t = find_result(s, tand_op, n);
                const result *q = find_result(s, query_op, n);
                if (s == S_MEMORY_FLOOR && !batch) { /* the host's floor, see bench_probe_floor */
                    t = find_result(s, "probe_test_and_add", n);
                    q = find_result(s, "probe_query", n);
                }
                if (t == NULL)
                    continue;
                if (!any)
                    printf("# n=%" PRIu64 ": %s time over %s time (absent keys):", n, tand_op,
                           query_op);
                any = true;
                char buf[32];
                printf(" %s %s", structure_name[s], ratio(buf, sizeof buf, t, q));
            }
            if (any)
                printf("\n");
        }
        if (!(cases[c].structures & (1u << S_DBF)))
            continue;
        uint64_t rows_keys = dbf_row_keys(n);
        printf("# n=%" PRIu64 ": dbf test_and_add time over query_absent time, by keys held:", n);
        for (int slice = 0; slice < 2; slice++)
            for (uint64_t rows = 1; rows <= 128; rows *= 2) {
                const result *t = find_result(S_DBF, dbf_op[slice][3], rows * rows_keys);
                if (t == NULL)
                    continue;
                char buf[32];
                printf(" %s@%" PRIu64 " %s", slice ? "slices" : "rows", rows * rows_keys,
                       ratio(buf, sizeof buf, t,
                             find_result(S_DBF, dbf_op[slice][1], rows * rows_keys)));
            }
        printf("\n");
    }
}

static void print_summary(const bench_case *cases, int case_count)
{
    printf("# summary per n: blocked batch speedup over libbloom's one-key calls (libbloom "
           "time / blocked time), and blocked batch time over the memory floors (below 1.00x: "
           "faster than one random cache-line load)\n");
    for (int c = 0; c < case_count; c++) {
        uint64_t n = cases[c].n;
        const result *ib = find_result(S_BLOCKED, "insert_batch", n);
        const result *qb = find_result(S_BLOCKED, "query_batch", n);
        const result *li = find_result(S_LIBBLOOM, "insert", n);
        const result *lq = find_result(S_LIBBLOOM, "query", n);
        const result *fl = find_result(S_MEMORY_FLOOR, "load", n);
        const result *fh = find_result(S_MEMORY_FLOOR, "hash_load", n);
        const result *fd = find_result(S_MEMORY_FLOOR, "load_dependent", n);
        char a[32], b[32], d[32], e[32], g[32], h[32], x[32], y[32];
        printf("# n=%" PRIu64 ": speedup insert_batch %s, query_batch %s; "
               "over one random line load (load_dependent) insert_batch %s, query_batch %s; "
               "over floor load insert_batch %s, query_batch %s; "
               "over floor hash_load insert_batch %s, query_batch %s\n",
               n, ratio(a, sizeof a, li, ib), ratio(b, sizeof b, lq, qb),
               ratio(x, sizeof x, ib, fd), ratio(y, sizeof y, qb, fd),
               ratio(d, sizeof d, ib, fl), ratio(e, sizeof e, qb, fl),
               ratio(g, sizeof g, ib, fh), ratio(h, sizeof h, qb, fh));
    }
    for (int c = 0; c < case_count; c++) {
        uint64_t n = cases[c].n;
        const result *bi = find_result(S_BLOCKED, "insert", n);
        const result *bq = find_result(S_BLOCKED, "query", n);
        const result *li = find_result(S_LIBBLOOM, "insert", n);
        const result *lq = find_result(S_LIBBLOOM, "query", n);
        if (bi == NULL || li == NULL)
            continue;
        char a[32], b[32];
        printf("# n=%" PRIu64 ": blocked one-key time over libbloom's one-key time: insert %s, "
               "query %s\n",
               n, ratio(a, sizeof a, bi, li), ratio(b, sizeof b, bq, lq));
    }
    print_test_and_add_summary(cases, case_count);
    for (int c = 0; c < case_count; c++) {
        uint64_t n = cases[c].n;
        const result *si = find_result(S_SCALABLE, "insert", n);
        if (si == NULL)
            continue;
        const result *st = find_result(S_SCALABLE, "test_and_add", n);
        const result *sq = find_result(S_SCALABLE, "query", n);
        const result *bi = find_result(S_BLOCKED, "insert", n);
        const result *bt = find_result(S_BLOCKED, "test_and_add", n);
        const result *bq = find_result(S_BLOCKED, "query", n);
        const result *li = find_result(S_LIBBLOOM, "insert", n);
        const result *lq = find_result(S_LIBBLOOM, "query", n);
        char a[32], b[32], d[32], e[32], g[32];
        printf("# n=%" PRIu64 ": scalable grown from n/%d over blocked sized for n (one-key "
               "calls): insert %s, test_and_add %s, query %s; over libbloom: insert %s, "
               "query %s; memory %.1f vs %.1f bits/key\n",
               n, SCALABLE_GROWTH, ratio(a, sizeof a, si, bi), ratio(b, sizeof b, st, bt),
               ratio(d, sizeof d, sq, bq), ratio(e, sizeof e, si, li), ratio(g, sizeof g, sq, lq),
               si->bits_per_key, bt ? bt->bits_per_key : -1.0);
    }
}

static void print_window_summary(const bench_case *cases, int case_count)
{
    static const char *const ops[] = {"insert",       "query",       "test_and_add",
                                      "insert_batch", "query_batch", "test_and_add_batch"};
    for (int c = 0; c < case_count; c++) {
        uint64_t n = cases[c].n;
        if (find_result(S_BLOCKED_WINDOW, "insert", n) == NULL)
            continue;
        for (int s = S_APBF; s <= S_TAGGED; s++) {
            if (find_result(s, "insert", n) == NULL)
                continue;
            printf("# n=%" PRIu64 ": %s time over blocked_window:", n, structure_name[s]);
            for (size_t op = 0; op < sizeof ops / sizeof ops[0]; op++) {
                char buf[32];
                printf(" %s %s", ops[op],
                       ratio(buf, sizeof buf, find_result(s, ops[op], n),
                             find_result(S_BLOCKED_WINDOW, ops[op], n)));
            }
            printf("\n");
        }
        for (int s = S_APBF; s <= S_TAGGED; s++) {
            if (find_result(s, "insert", n) == NULL)
                continue;
            printf("# n=%" PRIu64 ": %s batch time over one-key time:", n, structure_name[s]);
            for (size_t op = 0; op < 3; op++) {
                char buf[32];
                printf(" %s %s", ops[op],
                       ratio(buf, sizeof buf, find_result(s, ops[op + 3], n),
                             find_result(s, ops[op], n)));
            }
            printf("\n");
        }
    }
}

/* ------------------------------------------------------------ arguments */

static int parse_ns(const char *arg, uint64_t *ns)
{
    int count = 0;
    const char *p = arg;
    for (;;) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v >= 1 && v <= 1e12) || v != floor(v) || count == MAX_NS)
            die("bad --n value '%s' (want N[,N...], integers >= 1)", arg);
        ns[count++] = (uint64_t)v;
        if (*end == '\0')
            break;
        if (*end != ',')
            die("bad --n value '%s' (want N[,N...], integers >= 1)", arg);
        p = end + 1;
    }
    return count;
}

static unsigned parse_structures(const char *arg)
{
    unsigned mask = 0;
    char *copy = strdup(arg);
    if (copy == NULL)
        die("out of memory");
    char *save = NULL;
    for (char *name = strtok_r(copy, ",", &save); name != NULL;
         name = strtok_r(NULL, ",", &save)) {
        int s = 0;
        while (s < S_COUNT && strcmp(structure_name[s], name) != 0)
            s++;
        if (s == S_COUNT)
            die("unknown structure '%s' (known: standard, partitioned, blocked, counting, "
                "libbloom, memory_floor, apbf, apbbf, tlbf, timer, tagged, scalable, dbf, "
                "blocked_window, bpbf, dbpbf, cardinality)",
                name);
        mask |= 1u << s;
    }
    free(copy);
    if (mask == 0)
        die("--structures names no structure");
    return mask;
}

/* Accept "--opt value" and "--opt=value". */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t len = strlen(name);
    if (strncmp(argv[*i], name, len) != 0)
        return NULL;
    if (argv[*i][len] == '=')
        return argv[*i] + len + 1;
    if (argv[*i][len] != '\0')
        return NULL;
    if (*i + 1 >= argc)
        die("%s needs a value", name);
    return argv[++*i];
}

int main(int argc, char **argv)
{
    bool quick = false;
    uint64_t ns[MAX_NS];
    int n_count = 0;
    unsigned structures = ALL_STRUCTURES;
    int reps = 0;

    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if ((v = option_value(argc, argv, &i, "--n")) != NULL) {
            n_count = parse_ns(v, ns);
        } else if ((v = option_value(argc, argv, &i, "--structures")) != NULL) {
            structures = parse_structures(v);
        } else if ((v = option_value(argc, argv, &i, "--reps")) != NULL) {
            char *end;
            long r = strtol(v, &end, 10);
            if (*end != '\0' || r < 1 || r > MAX_REPS)
                die("bad --reps value '%s' (1 .. %d)", v, MAX_REPS);
            reps = (int)r;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }

    /* The plan.  --quick keeps the whole run under a minute on a small machine:
     * every structure at 10^6 (filters of about 1 MB, mostly cache-resident), and at
     * 10^7 (12 MB, past the private caches) only the structures the summary compares:
     * blocked, libbloom and the floor.  An explicit --n runs every selected structure
     * at every N. */
    bench_case cases[MAX_NS];
    int case_count = 0;
    if (reps == 0)
        reps = 3;
    if (n_count > 0) {
        for (int i = 0; i < n_count; i++)
            cases[case_count++] = (bench_case){ns[i], structures, reps};
    } else if (quick) {
        unsigned big = (1u << S_BLOCKED) | (1u << S_LIBBLOOM) | (1u << S_MEMORY_FLOOR);
        cases[case_count++] = (bench_case){1000000, structures, reps};
        if (structures & big)
            cases[case_count++] = (bench_case){10000000, structures & big, reps};
    } else {
        /* Windows and the scalable filter at 10^6 and 10^7 keys only (a window of 10^8 is
         * a different product; the scalable filter runs six timed passes). */
        cases[case_count++] = (bench_case){1000000, structures, reps};
        cases[case_count++] = (bench_case){10000000, structures, reps};
        if (structures & ~NOT_AT_1E8)
            cases[case_count++] = (bench_case){100000000, structures & ~NOT_AT_1E8, reps};
    }

    uint64_t max_n = 0;
    for (int c = 0; c < case_count; c++)
        if (cases[c].n > max_n)
            max_n = cases[c].n;

    print_header(cases, case_count);

    /* Key arrays for the largest N (windows use 2N inserted keys); smaller N use their
     * prefixes. */
    for (int c = 0; c < case_count; c++)
        if ((cases[c].structures & (WINDOW_STRUCTURES | (1u << S_CARDINALITY))) &&
            2 * cases[c].n > max_n)
            max_n = 2 * cases[c].n;
    max_keys = max_n;
    key16 *in = malloc((size_t)max_n * sizeof *in);
    key16 *out = malloc((size_t)max_n * sizeof *out);
    if (in == NULL || out == NULL)
        die("out of memory for 2 x %" PRIu64 " keys (%.1f GB); try a smaller --n", max_n,
            2.0 * (double)max_n * KEY_LEN / 1e9);
    make_keys(in, max_n, 0);
    make_keys(out, max_n, ABSENT_DOMAIN);

    for (int c = 0; c < case_count; c++) {
        const bench_case *bc = &cases[c];
        for (int s = 0; s < S_COUNT; s++) {
            if (!(bc->structures & (1u << s)))
                continue;
            if (s == S_LIBBLOOM)
                bench_libbloom(bc->n, bc->reps, in, out);
            else if (s == S_MEMORY_FLOOR)
                bench_memory_floor(bc->n, bc->reps, out);
            else if ((1u << s) & WINDOW_STRUCTURES)
                bench_window(s, bc->n, bc->reps, in, out);
            else if (s == S_SCALABLE)
                bench_scalable(bc->n, bc->reps, in, out);
            else if (s == S_DBF)
                bench_dbf(bc->n, bc->reps, in, out);
            else if ((1u << s) & BLOCK_PARTITIONED_STRUCTURES)
                bench_block_partitioned(s, bc->n, bc->reps, in, out);
            else if (s == S_CARDINALITY)
                bench_cardinality(bc->n, bc->reps, in);
            else
                bench_once(s, bc->n, bc->reps, in, out);
        }
    }
    free(in);
    free(out);

    print_summary(cases, case_count);
    print_window_summary(cases, case_count);
    free(results);
    return 0;
}
