/*
 * sliced_bench.c - one filter sliced over sites (paper 000) against the same filter
 * unsliced, in one run: events per second and ns per event for
 *   - the standard filter of the geometry (once_test_and_add_batch), the baseline;
 *   - each slicing (horizontal, vertical, diced h-v and v-h) in batches, with the
 *     sites run by the calling thread, by 1 worker thread and by 2;
 *   - one concurrent filter (vertical, locks) fed by 1 and by 2 producer threads with
 *     one-key calls, each producer a half of the stream;
 *   - the same filter with a window of timers (vertical, one-key calls in a batch);
 *   - Bloom trees of 2 levels and 2 leaves (section 6), dense and sparse, each key
 *     produced at its home leaf (a hash of the key, so its repeats are caught there),
 *     by 1 producer, then by 2 producers on one concurrent tree, one at each leaf; and
 *     the same stream offered a second time (timed alone), every event a duplicate
 *     caught at its leaf, where producers at different leaves need no common lock.
 * The stream: N events, half of them repeats of an earlier key (so that both answers
 * are common), 16-byte keys, built before any clock starts.  Ratios are to the
 * baseline's time (above 1: slower).  Not a test; numbers depend on the machine.
 *
 * Usage: once-sliced-bench [--n N] [--slices S] [--reps R]
 */
#include <once_sliced.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct key16 {
    uint64_t a, b;
} key16;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    return x ^ (x >> 33);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t events;
static key16 *stream;
static once_key *batch;
static uint8_t *answers;

static void build_stream(void)
{
    stream = malloc(events * sizeof *stream);
    batch = malloc(events * sizeof *batch);
    answers = malloc(events);
    if (stream == NULL || batch == NULL || answers == NULL) {
        fputs("out of memory\n", stderr);
        exit(2);
    }
    uint64_t fresh = 0;
    for (size_t i = 0; i < events; i++) {
        uint64_t r = mix(i + 1);
        uint64_t id = (i > 0 && (r & 1)) ? mix(r) % fresh : fresh++;
        stream[i] = (key16){mix(id * 2 + 1), mix(id * 2 + 2)};
        batch[i] = (once_key){&stream[i], sizeof stream[i], 1000 + i / 8};
    }
}

#define CHUNK 4096

static once_sliced_config sliced_config(once_slicing slicing, uint32_t slices, uint32_t parts,
                                        uint32_t threads)
{
    return (once_sliced_config){.slicing = slicing, .slices = slices, .parts = parts,
                                .capacity = events, .error = 0.001, .seed = 1,
                                .seed_is_set = true, .threads = threads};
}

/* The stream through `answer` in batches of CHUNK: seconds, and *dups. */
typedef once_status (*batch_call)(void *filter, const once_key *keys, size_t n, uint8_t *seen);

static double time_batches(batch_call answer, void *filter, uint64_t *dups)
{
    double start = now_seconds();
    for (size_t done = 0; done < events; done += CHUNK) {
        size_t n = events - done < CHUNK ? events - done : CHUNK;
        if (answer(filter, batch + done, n, answers + done) != ONCE_OK) {
            fputs("batch failed\n", stderr);
            exit(2);
        }
    }
    double seconds = now_seconds() - start;
    *dups = 0;
    for (size_t i = 0; i < events; i++)
        *dups += answers[i];
    return seconds;
}

static once_status sliced_batch(void *filter, const once_key *keys, size_t n, uint8_t *seen)
{
    return once_sliced_test_and_add_batch(filter, keys, n, seen);
}

static once_status standard_batch(void *filter, const once_key *keys, size_t n, uint8_t *seen)
{
    return once_test_and_add_batch(filter, keys, n, seen);
}

static double run_sliced_batches(const once_sliced_config *c, uint64_t *dups)
{
    once_sliced *f = NULL;
    if (once_sliced_create(&f, c, NULL) != ONCE_OK) {
        fputs("cannot create a sliced filter\n", stderr);
        exit(2);
    }
    double seconds = time_batches(sliced_batch, f, dups);
    once_sliced_free(f);
    return seconds;
}

static double run_standard(uint64_t *dups)
{
    once_config c;
    once_config_init(&c, ONCE_STANDARD);
    c.capacity = events;
    c.error = 0.001;
    c.seed = 1;
    c.seed_is_set = true;
    once_filter *f = NULL;
    if (once_create(&f, &c) != ONCE_OK) {
        fputs("cannot create the standard filter\n", stderr);
        exit(2);
    }
    double seconds = time_batches(standard_batch, f, dups);
    once_free(f);
    return seconds;
}

typedef struct producer {
    once_sliced *f;
    size_t from, to;
    uint64_t dups;
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    for (size_t i = p->from; i < p->to; i++) {
        bool seen = false;
        if (once_sliced_test_and_add(p->f, &stream[i], sizeof stream[i], batch[i].time_ms,
                                     &seen) != ONCE_OK) {
            fputs("sliced call failed\n", stderr);
            exit(2);
        }
        p->dups += seen;
    }
    return NULL;
}

/* `producers` threads share the stream (interleaved halves) on one concurrent filter. */
static double run_producers(once_sliced_config c, int producers, uint64_t *dups)
{
    c.concurrent = producers > 1;
    once_sliced *f = NULL;
    if (once_sliced_create(&f, &c, NULL) != ONCE_OK) {
        fputs("cannot create a sliced filter\n", stderr);
        exit(2);
    }
    producer ps[2];
    pthread_t tids[2];
    double start = now_seconds();
    for (int p = 0; p < producers; p++) {
        ps[p] = (producer){f, events * p / producers, events * (p + 1) / producers, 0};
        if (pthread_create(&tids[p], NULL, produce, &ps[p]) != 0)
            exit(2);
    }
    *dups = 0;
    for (int p = 0; p < producers; p++) {
        pthread_join(tids[p], NULL);
        *dups += ps[p].dups;
    }
    double seconds = now_seconds() - start;
    once_sliced_free(f);
    return seconds;
}

typedef struct tree_producer {
    once_tree *t;
    uint64_t leaf;      /* the leaf this producer feeds */
    bool every_leaf;    /* the only producer: every event, at its home leaf */
    uint64_t dups;
} tree_producer;

static uint64_t home_leaf(size_t i)
{
    return mix(stream[i].a) & 1;
}

static void *produce_at_leaf(void *arg)
{
    tree_producer *p = arg;
    for (size_t i = 0; i < events; i++) {
        uint64_t leaf = home_leaf(i);
        if (!p->every_leaf && leaf != p->leaf)
            continue;
        bool seen = false;
        if (once_tree_test_and_add(p->t, leaf, &stream[i], sizeof stream[i], &seen) != ONCE_OK) {
            fputs("tree call failed\n", stderr);
            exit(2);
        }
        p->dups += seen;
    }
    return NULL;
}

/* The stream through a tree by 1 producer or 2 (one a leaf): seconds, and *dups. */
static double feed_tree(once_tree *t, int producers, uint64_t *dups)
{
    tree_producer ps[2];
    pthread_t tids[2];
    double start = now_seconds();
    for (int p = 0; p < producers; p++) {
        ps[p] = (tree_producer){t, (uint64_t)p, producers == 1, 0};
        if (pthread_create(&tids[p], NULL, produce_at_leaf, &ps[p]) != 0)
            exit(2);
    }
    *dups = 0;
    for (int p = 0; p < producers; p++) {
        pthread_join(tids[p], NULL);
        *dups += ps[p].dups;
    }
    return now_seconds() - start;
}

/* A tree of 2 levels and 2 leaves, fed by 1 producer or by 2 (one a leaf, `concurrent`);
 * with `second_pass` the stream is offered once untimed, and the time is the second's. */
static double run_tree_producers(once_tree_mode mode, int producers, bool second_pass,
                                 uint64_t *dups)
{
    once_tree_config c = {.mode = mode, .levels = 2, .fanout = 2, .capacity = events,
                          .error = 0.001, .seed = 1, .seed_is_set = true,
                          .concurrent = producers > 1};
    once_tree *t = NULL;
    if (once_tree_create(&t, &c, NULL) != ONCE_OK) {
        fputs("cannot create a tree\n", stderr);
        exit(2);
    }
    double seconds = feed_tree(t, producers, dups);
    if (second_pass)
        seconds = feed_tree(t, producers, dups);
    once_tree_free(t);
    return seconds;
}

static void row(const char *name, double seconds, double baseline, uint64_t dups)
{
    printf("| %s | %.1f | %.2f | %.2fx | %llu |\n", name, seconds * 1e9 / (double)events,
           (double)events / seconds / 1e6, seconds / baseline, (unsigned long long)dups);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    events = 1000000;
    uint32_t slices = 8;
    int reps = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            events = (size_t)strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--slices") == 0 && i + 1 < argc)
            slices = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--n N] [--slices S] [--reps R]\n", argv[0]);
            return 2;
        }
    }
    if (events < 2 || slices < 2 || slices % 2 != 0 || reps < 1) {
        fputs("need N >= 2, an even S >= 2, R >= 1\n", stderr);
        return 2;
    }
    build_stream();
    for (int rep = 0; rep < reps; rep++) {
        printf("\n### %zu events, half repeats, S = %u (run %d)\n\n", events, slices, rep + 1);
        printf("| filter | ns/event | M events/s | time vs standard | duplicates |\n");
        printf("| --- | ---: | ---: | ---: | ---: |\n");
        uint64_t dups = 0;
        double base = run_standard(&dups);
        row("standard, unsliced (batch)", base, base, dups);
        const struct {
            once_slicing slicing;
            uint32_t slices, parts;
        } modes[] = {
            {ONCE_SLICING_HORIZONTAL, slices, 0},
            {ONCE_SLICING_VERTICAL, slices, 0},
            {ONCE_SLICING_DICED_HV, slices / 2, 2},
            {ONCE_SLICING_DICED_VH, slices / 2, 2},
        };
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
            for (uint32_t threads = 0; threads <= 2; threads++) {
                char name[96];
                snprintf(name, sizeof name, "%s, batch, %s", once_slicing_name(modes[m].slicing),
                         threads == 0 ? "sites in the caller's thread"
                                      : threads == 1 ? "1 site thread" : "2 site threads");
                once_sliced_config c =
                    sliced_config(modes[m].slicing, modes[m].slices, modes[m].parts, threads);
                double s = run_sliced_batches(&c, &dups);
                row(name, s, base, dups);
            }
        once_sliced_config v = sliced_config(ONCE_SLICING_VERTICAL, slices, 0, 0);
        for (int producers = 1; producers <= 2; producers++) {
            char name[96];
            snprintf(name, sizeof name, "vertical, one-key calls, %d producer%s%s", producers,
                     producers > 1 ? "s" : "", producers > 1 ? " (locks)" : "");
            double s = run_producers(v, producers, &dups);
            row(name, s, base, dups);
        }
        once_sliced_config w = v;
        w.window_ms = 3600 * 1000;
        for (int producers = 1; producers <= 2; producers++) {
            char name[96];
            snprintf(name, sizeof name, "vertical, 1 h window of timers, %d producer%s",
                     producers, producers > 1 ? "s (locks)" : "");
            double s = run_producers(w, producers, &dups);
            row(name, s, base, dups);
        }
        for (int pass = 0; pass < 2; pass++)
            for (int mode = 0; mode < 2; mode++)
                for (int producers = 1; producers <= 2; producers++) {
                    char name[128];
                    snprintf(name, sizeof name, "tree %s, 2 leaves, %s%s",
                             mode == ONCE_TREE_DENSE ? "dense" : "sparse",
                             producers > 1 ? "2 producers, one a leaf (locks)" : "1 producer",
                             pass ? ", second pass" : "");
                    double s =
                        run_tree_producers((once_tree_mode)mode, producers, pass == 1, &dups);
                    row(name, s, base, dups);
                }
    }
    free(stream);
    free(batch);
    free(answers);
    return 0;
}
