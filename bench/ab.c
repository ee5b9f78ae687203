/*
 * once-ab: two builds of libonce timed against each other in one process, in turns of
 * a few milliseconds, so that what else a shared machine runs falls on both alike.
 *
 *   once-ab [--steady] LIB_A LIB_B N ROUNDS STRUCTURE...
 *
 * LIB_A and LIB_B are libonce.so files (say, a checkout of an older commit's build and
 * this one's), each loaded with its own symbols (RTLD_LOCAL | RTLD_DEEPBIND), driven
 * through the public calls, whose signatures both builds must share.  A build from
 * before once_config carried its size (no once_config_init_sized) takes the same
 * struct without that leading field.
 * For each structure, each build gets its own filter of the same geometry and seed,
 * and the two go through the same operations on the same keys: N one-key inserts, N
 * one-key queries of absent keys, N test-and-adds of absent keys, then on fresh filters
 * the batch forms (calls of 256 keys).  A makes its filters first in even rounds, B
 * in odd ones.  Each operation's N keys are cut into turns of TURN keys; the builds
 * take turns, A then B, then B then A, and each turn is timed alone (CLOCK_MONOTONIC).
 * Timings at 10^7 keys on a machine shared with other jobs spread by 20% from one run
 * to the next, seconds apart; two turns milliseconds apart see the same machine.
 * ROUNDS repeats the whole with new filters.
 *
 * Prints, per structure and operation, each build's ns/op (total time over all
 * rounds) and B/A: the ratio of the totals, and the quartiles of the per-pair ratios.
 * Keys are 16 bytes, the filter is sized for N keys at 1% (a window of N, or N keys
 * a span), as once-ops and once-bench size theirs; a timer filter keeps its size, so
 * that both builds probe the same one.
 *
 * A time window spans 2^40 ms by default, so that nothing in it expires.  --steady
 * gives it a span of N ms instead, and feeds it as once-bench does: N keys one a
 * millisecond fill it first (untimed), then the timed keys go on a key a millisecond,
 * so that the keys of the fill expire while they are inserted: the steady state of a
 * window that takes its capacity, expiry and its costs included.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEEPBIND */
#endif
#include "once.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 256
#define TURN 16384

typedef struct build {
    const char *path;
    void (*config_init_sized)(once_config *, size_t, once_type); /* NULL: older */
    void (*config_init)(void *, once_type);                      /* the older one */
    once_status (*create)(once_filter **, const once_config *);
    void (*free_filter)(once_filter *);
    once_status (*add)(once_filter *, const void *, size_t, uint64_t);
    once_status (*query)(const once_filter *, const void *, size_t, uint64_t, bool *);
    once_status (*test_and_add)(once_filter *, const void *, size_t, uint64_t, bool *);
    once_status (*add_batch)(once_filter *, const once_key *, size_t);
    once_status (*query_batch)(const once_filter *, const once_key *, size_t, uint8_t *);
    once_status (*test_and_add_batch)(once_filter *, const once_key *, size_t, uint8_t *);
    once_status (*type_from_name)(const char *, once_type *);
} build;

static void *symbol(void *lib, const char *path, const char *name)
{
    void *p = dlsym(lib, name);
    if (p == NULL) {
        fprintf(stderr, "once-ab: %s lacks %s\n", path, name);
        exit(1);
    }
    return p;
}

static void build_open(build *b, const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (lib == NULL) {
        fprintf(stderr, "once-ab: %s\n", dlerror());
        exit(1);
    }
    b->path = path;
    *(void **)&b->config_init_sized = dlsym(lib, "once_config_init_sized");
    if (b->config_init_sized == NULL)
        *(void **)&b->config_init = symbol(lib, path, "once_config_init");
    *(void **)&b->create = symbol(lib, path, "once_create");
    *(void **)&b->free_filter = symbol(lib, path, "once_free");
    *(void **)&b->add = symbol(lib, path, "once_add");
    *(void **)&b->query = symbol(lib, path, "once_query");
    *(void **)&b->test_and_add = symbol(lib, path, "once_test_and_add");
    *(void **)&b->add_batch = symbol(lib, path, "once_add_batch");
    *(void **)&b->query_batch = symbol(lib, path, "once_query_batch");
    *(void **)&b->test_and_add_batch = symbol(lib, path, "once_test_and_add_batch");
    *(void **)&b->type_from_name = symbol(lib, path, "once_type_from_name");
}

static uint64_t mix(uint64_t x)
{
    x += UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

enum { OP_INSERT, OP_QUERY, OP_TEST_AND_ADD, OP_INSERT_BATCH, OP_QUERY_BATCH,
       OP_TEST_AND_ADD_BATCH, OPS };
static const char *const op_names[OPS] = {"insert", "query", "test_and_add",
                                          "insert_batch", "query_batch",
                                          "test_and_add_batch"};

typedef struct timing {
    double total[2];
    double *ratios; /* B/A of each pair of turns */
    size_t pairs;
} timing;

/* One turn: keys [from, to) of `keys` through operation `op` of build b on f. */
static void turn(const build *b, once_filter *f, int op, const once_key *keys, size_t from,
                 size_t to, uint8_t *out)
{
    once_status st = ONCE_OK;
    bool seen = false;
    for (size_t i = from; i < to && st == ONCE_OK; i += (op >= OP_INSERT_BATCH ? BATCH : 1)) {
        size_t count = to - i < BATCH ? to - i : BATCH;
        switch (op) {
        case OP_INSERT: st = b->add(f, keys[i].data, 16, keys[i].time_ms); break;
        case OP_QUERY: st = b->query(f, keys[i].data, 16, keys[i].time_ms, &seen); break;
        case OP_TEST_AND_ADD:
            st = b->test_and_add(f, keys[i].data, 16, keys[i].time_ms, &seen);
            break;
        case OP_INSERT_BATCH: st = b->add_batch(f, keys + i, count); break;
        case OP_QUERY_BATCH: st = b->query_batch(f, keys + i, count, out); break;
        default: st = b->test_and_add_batch(f, keys + i, count, out); break;
        }
        out[0] ^= (uint8_t)seen;
    }
    if (st != ONCE_OK) {
        fprintf(stderr, "once-ab: %s: %s failed\n", b->path, op_names[op]);
        exit(1);
    }
}

/* Operation `op` over all n keys, the builds taking turns. */
static void run_op(const build builds[2], once_filter *f[2], int op, const once_key *keys,
                   size_t n, uint8_t *out, timing *t, size_t pair_base)
{
    size_t pair = 0;
    for (size_t from = 0; from < n; from += TURN, pair++) {
        size_t to = n - from < TURN ? n : from + TURN;
        double took[2];
        for (int j = 0; j < 2; j++) {
            int w = (pair & 1) ? 1 - j : j;
            double start = now_ns();
            turn(&builds[w], f[w], op, keys, from, to, out);
            took[w] = now_ns() - start;
        }
        t->total[0] += took[0];
        t->total[1] += took[1];
        if (took[0] > 0)
            t->ratios[pair_base + pair] = took[1] / took[0];
    }
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *sorted, size_t n, double q)
{
    return sorted[(size_t)((double)(n - 1) * q + 0.5)];
}

int main(int argc, char **argv)
{
    bool steady = argc > 1 && strcmp(argv[1], "--steady") == 0;
    if (steady) {
        argc--;
        argv++;
    }
    if (argc < 6) {
        fprintf(stderr, "usage: once-ab [--steady] LIB_A LIB_B N ROUNDS STRUCTURE...\n");
        return 2;
    }
    build builds[2];
    build_open(&builds[0], argv[1]);
    build_open(&builds[1], argv[2]);
    size_t n = (size_t)strtod(argv[3], NULL);
    int rounds = atoi(argv[4]);
    if (n == 0 || rounds <= 0) {
        fprintf(stderr, "once-ab: N and ROUNDS must be positive\n");
        return 2;
    }
    uint64_t(*key)[2] = malloc(3 * n * sizeof *key);
    once_key *present = malloc(n * sizeof *present), *absent = malloc(n * sizeof *absent);
    once_key *filler = malloc(n * sizeof *filler);
    uint8_t *out = malloc(BATCH);
    size_t turns = (n + TURN - 1) / TURN;
    if (key == NULL || present == NULL || absent == NULL || filler == NULL || out == NULL) {
        fprintf(stderr, "once-ab: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        key[i][0] = mix(i);
        key[i][1] = mix(i + n);
        key[n + i][0] = mix(i) ^ (UINT64_C(1) << 63); /* a disjoint domain */
        key[n + i][1] = mix(i + n);
        key[2 * n + i][0] = mix(i) ^ (UINT64_C(1) << 62);
        key[2 * n + i][1] = mix(i + 2 * n);
        present[i] = (once_key){key[i], 16, steady ? n + i : i};
        absent[i] = (once_key){key[n + i], 16, steady ? 2 * n + i : n + i};
        filler[i] = (once_key){key[2 * n + i], 16, i};
    }
    printf("# once-ab: A = %s, B = %s; n = %zu, %d rounds, turns of %d keys%s\n", argv[1],
           argv[2], n, rounds, TURN,
           steady ? "; time windows of n ms, filled first, a key a ms" : "");
    printf("| structure | op | A ns/op | B ns/op | B/A (totals) | B/A pairs, quartiles |\n");
    printf("|---|---|---:|---:|---:|---|\n");
    for (int s = 5; s < argc; s++) {
        once_type type, type_b;
        if (builds[0].type_from_name(argv[s], &type) != ONCE_OK ||
            builds[1].type_from_name(argv[s], &type_b) != ONCE_OK || type != type_b) {
            fprintf(stderr, "once-ab: unknown structure %s\n", argv[s]);
            return 2;
        }
        timing t[OPS];
        for (int op = 0; op < OPS; op++) {
            t[op].total[0] = t[op].total[1] = 0;
            t[op].ratios = malloc((size_t)rounds * turns * sizeof(double));
            t[op].pairs = (size_t)rounds * turns;
        }
        for (int r = 0; r < rounds; r++) {
            once_filter *f[2];
            for (int phase = 0; phase < 2; phase++) {
                /* Each round the other build's filter is made (and takes its memory)
                 * first: where a filter's pages come from moves its timings. */
                for (int made = 0; made < 2; made++) {
                    int j = (r & 1) ? 1 - made : made;
                    once_config c;
                    memset(&c, 0, sizeof c);
                    if (builds[j].config_init_sized != NULL)
                        builds[j].config_init_sized(&c, sizeof c, type);
                    else
                        builds[j].config_init((char *)&c + offsetof(once_config, type), type);
                    c.capacity = n;
                    c.window = n;
                    c.span_ms = steady ? n : UINT64_C(1) << 40; /* default: never shifts */
                    c.error = 0.01;
                    c.dynamic = false; /* a timer filter of one size: the probe compared */
                    c.seed = 1;
                    c.seed_is_set = true;
                    const once_config *given =
                        builds[j].config_init_sized != NULL
                            ? &c
                            : (const once_config *)((const char *)&c +
                                                    offsetof(once_config, type));
                    if (builds[j].create(&f[j], given) != ONCE_OK) {
                        fprintf(stderr, "once-ab: %s cannot make %s\n", builds[j].path,
                                argv[s]);
                        return 1;
                    }
                }
                int base = phase == 0 ? OP_INSERT : OP_INSERT_BATCH;
                size_t at = (size_t)r * turns;
                for (int j = 0; steady && j < 2; j++) /* untimed: the insert of the form */
                    turn(&builds[j], f[j], base, filler, 0, n, out);
                run_op(builds, f, base, present, n, out, &t[base], at);
                run_op(builds, f, base + 1, absent, n, out, &t[base + 1], at);
                run_op(builds, f, base + 2, absent, n, out, &t[base + 2], at);
                for (int j = 0; j < 2; j++)
                    builds[j].free_filter(f[j]);
            }
        }
        for (int op = 0; op < OPS; op++) {
            qsort(t[op].ratios, t[op].pairs, sizeof(double), compare_double);
            double ops = (double)n * rounds;
            printf("| %s | %s | %.1f | %.1f | %.3fx | %.2f-%.2f |\n", argv[s], op_names[op],
                   t[op].total[0] / ops, t[op].total[1] / ops, t[op].total[1] / t[op].total[0],
                   quantile(t[op].ratios, t[op].pairs, 0.25),
                   quantile(t[op].ratios, t[op].pairs, 0.75));
            free(t[op].ratios);
        }
        fflush(stdout);
    }
    free(key);
    free(present);
    free(absent);
    free(filler);
    free(out);
    return 0;
}
