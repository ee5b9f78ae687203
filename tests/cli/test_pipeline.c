/*
 * test_pipeline.c - the CLI's pipeline of threads (programs/pipeline.c), on its own.
 *
 * Batches are numbers here: the read stage hands out 0, 1, 2, ...; the keys stage does
 * an amount of work that varies from batch to batch, so that batches finish their keys
 * out of order on several threads; the answer stage checks that it sees them in order,
 * keyed, one at a time, and the write stage that it sees them in order, answered, one
 * at a time.  These run in every build, the ThreadSanitizer one included,
 * where a race in the hand-over fails them.
 */
#include "pipeline.h"
#include "testing.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define TEST_PHASES 4 /* read, keys, answer, write: a second each call, to count the calls */

typedef struct number_batch {
    uint64_t seq;
    uint64_t value; /* set by the keys stage */
    bool keyed;
    bool answered;
    int code; /* its answer's */
} number_batch;

typedef struct numbers {
    pipeline *pipe;
    uint64_t total;       /* batches to read */
    uint64_t read;        /* read so far (the reading thread's) */
    uint64_t again_every; /* every that many reads, PIPELINE_AGAIN first (0: never) */
    bool again_pending;
    uint64_t flush_every; /* ask for a flush before every that many reads (0: never) */
    uint64_t fail_at;     /* the answer of this batch returns 7 (UINT64_MAX: none) */
    uint64_t write_fail_at; /* the write of this batch returns 9 (UINT64_MAX: none) */
    atomic_uint_fast64_t answered;
    atomic_uint_fast64_t written;
    atomic_int answering; /* answers running now */
    atomic_int writing;   /* writes and flushes running now */
    atomic_uint_fast64_t flushes;
    /* Batches read when the oldest flush not yet begun was asked (UINT64_MAX: none). */
    atomic_uint_fast64_t flush_asked_at;
    atomic_uint_fast64_t wrong; /* stages out of order, overlaps, bad flushes */
    atomic_uint_fast64_t answered_after_failure;
    size_t fork_tasks; /* each answer forks this many tasks (0: none) */
    atomic_uint_fast64_t task_runs[64]; /* by task index, over the run */
    atomic_uint_fast64_t task_sink;
    atomic_uint_fast64_t forks_short; /* forks that returned before all their tasks ran */
} numbers;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= UINT64_C(0x9e3779b97f4a7c15);
    return x ^ (x >> 29);
}

static pipeline_read read_number(void *context, void *batch, double *phases)
{
    numbers *n = context;
    number_batch *b = batch;
    phases[0] += 1;
    if (n->read == n->total)
        return PIPELINE_END;
    if (n->again_every && n->read % n->again_every == 0 && !n->again_pending) {
        n->again_pending = true;
        return PIPELINE_AGAIN;
    }
    n->again_pending = false;
    if (n->flush_every && n->read % n->flush_every == 0) {
        /* A flush asked while one is pending is served with it, by a flush that begins
         * once the batches read before both are written. */
        uint_fast64_t none = UINT64_MAX;
        atomic_compare_exchange_strong(&n->flush_asked_at, &none, n->read);
        pipeline_flush(n->pipe);
    }
    b->seq = n->read++;
    b->keyed = false;
    b->answered = false;
    return PIPELINE_BATCH;
}

static void key_number(void *context, void *batch, double *phases)
{
    (void)context;
    number_batch *b = batch;
    phases[1] += 1;
    /* From nothing to some thousands of steps: later batches often finish first. */
    uint64_t steps = mix(b->seq) % 4096, v = b->seq;
    for (uint64_t i = 0; i < steps; i++)
        v = mix(v);
    b->value = v;
    b->keyed = true;
}

/* A fork's task: some work, then its count. */
typedef struct number_fork {
    numbers *n;
    uint64_t seq;
    atomic_uint_fast64_t done;
} number_fork;

static void fork_task(void *context, size_t index)
{
    number_fork *fork = context;
    uint64_t v = fork->seq + index;
    for (uint64_t i = 0, steps = mix(v) % 2048; i < steps; i++)
        v = mix(v);
    atomic_fetch_add(&fork->n->task_sink, v); /* the work is kept */
    atomic_fetch_add(&fork->n->task_runs[index], 1);
    atomic_fetch_add(&fork->done, 1);
}

static int answer_number(void *context, void *batch, double *phases)
{
    numbers *n = context;
    number_batch *b = batch;
    phases[2] += 1;
    if (n->fork_tasks != 0) {
        number_fork fork = {n, b->seq, 0};
        pipeline_fork(n->pipe, fork_task, &fork, n->fork_tasks);
        if (atomic_load(&fork.done) != n->fork_tasks)
            atomic_fetch_add(&n->forks_short, 1);
    }
    if (atomic_fetch_add(&n->answering, 1) != 0)
        atomic_fetch_add(&n->wrong, 1);
    uint64_t expected = atomic_load(&n->answered);
    if (b->seq != expected || !b->keyed)
        atomic_fetch_add(&n->wrong, 1);
    if (expected > n->fail_at)
        atomic_fetch_add(&n->answered_after_failure, 1);
    b->answered = true;
    b->code = b->seq == n->fail_at ? 7 : 0;
    atomic_fetch_add(&n->answered, 1);
    atomic_fetch_sub(&n->answering, 1);
    return b->code;
}

static int write_number(void *context, void *batch, double *phases)
{
    numbers *n = context;
    number_batch *b = batch;
    phases[3] += 1;
    if (atomic_fetch_add(&n->writing, 1) != 0)
        atomic_fetch_add(&n->wrong, 1);
    uint64_t expected = atomic_load(&n->written);
    if (b->seq != expected || !b->answered)
        atomic_fetch_add(&n->wrong, 1);
    atomic_fetch_add(&n->written, 1);
    atomic_fetch_sub(&n->writing, 1);
    /* After a failed write every later one fails too, as the CLI's writer does. */
    return b->seq >= n->write_fail_at ? 9 : b->code;
}

/* A flush runs alone, once every batch read before it was asked is written. */
static void flush_numbers(void *context)
{
    numbers *n = context;
    if (atomic_fetch_add(&n->writing, 1) != 0)
        atomic_fetch_add(&n->wrong, 1);
    /* The ask this flush serves; a later one, made while it runs, waits for the next. */
    uint_fast64_t asked = atomic_exchange(&n->flush_asked_at, UINT64_MAX);
    if (asked != UINT64_MAX && atomic_load(&n->written) < asked)
        atomic_fetch_add(&n->wrong, 1);
    atomic_fetch_add(&n->flushes, 1);
    atomic_fetch_sub(&n->writing, 1);
}

/* Run `total` batches over `threads` threads and `slots` slots; returns the code. */
static int run_numbers(numbers *n, unsigned threads, size_t slots, double *phases)
{
    number_batch *batches = calloc(slots, sizeof *batches);
    void **batch = calloc(slots, sizeof *batch);
    if (batches == NULL || batch == NULL) {
        free(batches);
        free(batch);
        return -2; /* no memory: the checks that follow fail */
    }
    for (size_t i = 0; i < slots; i++)
        batch[i] = &batches[i];
    pipeline_stages stages = {n,            read_number,   key_number, answer_number,
                              write_number, flush_numbers, TEST_PHASES, TEST_PHASES};
    n->pipe = pipeline_new(&stages, batch, slots, threads);
    int code = n->pipe != NULL ? pipeline_run(n->pipe, phases) : -3;
    pipeline_free(n->pipe);
    free(batches);
    free(batch);
    return code;
}

static void numbers_init(numbers *n, uint64_t total)
{
    memset(n, 0, sizeof *n);
    n->total = total;
    n->fail_at = UINT64_MAX;
    n->write_fail_at = UINT64_MAX;
    atomic_store(&n->flush_asked_at, UINT64_MAX);
}

/* Every batch is keyed, then answered in input order, one answer at a time, then
 * written likewise, whatever the threads and the slots; each thread's stage calls add
 * up in the phases. */
static void answers_in_input_order(void)
{
    static const unsigned threads[] = {2, 3, 8, 64};
    static const size_t slots[] = {1, 2, 5, 32};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++)
        for (size_t s = 0; s < sizeof slots / sizeof slots[0]; s++) {
            numbers n;
            numbers_init(&n, 3000);
            double phases[TEST_PHASES] = {0.5, 0, 0};
            CHECK(run_numbers(&n, threads[t], slots[s], phases) == 0);
            CHECK(atomic_load(&n.answered) == 3000 && atomic_load(&n.written) == 3000);
            CHECK(atomic_load(&n.wrong) == 0);
            CHECK(phases[0] == 0.5 + 3001); /* 3000 batches and the end */
            CHECK(phases[1] == 3000 && phases[2] == 3000 && phases[3] == 3000);
        }
}

/* A run of 100000 numbers on `threads` threads and 4 slots a thread, whose answer
 * (answer_fail_at) or write (write_fail_at) of that batch fails (UINT64_MAX: none):
 * the run's code, with what the stages did in *n and the slots in *slots. */
static int run_failing(numbers *n, unsigned threads, uint64_t answer_fail_at,
                       uint64_t write_fail_at, size_t *slots)
{
    numbers_init(n, 100000);
    n->fail_at = answer_fail_at;
    n->write_fail_at = write_fail_at;
    double phases[TEST_PHASES] = {0};
    *slots = 4 * (size_t)threads;
    return run_numbers(n, threads, *slots, phases);
}

/* The first nonzero answer is the run's code: no batch after it is answered, the
 * batches answered are all written, itself included, and the reading stops within a
 * ring of it. */
static void an_answer_that_fails_stops_the_run(void)
{
    for (unsigned threads = 2; threads <= 9; threads += 7) {
        numbers n;
        size_t slots;
        CHECK(run_failing(&n, threads, 500, UINT64_MAX, &slots) == 7);
        CHECK(atomic_load(&n.answered) == 501 && atomic_load(&n.written) == 501);
        CHECK(atomic_load(&n.answered_after_failure) == 0);
        CHECK(atomic_load(&n.wrong) == 0);
        CHECK(n.read <= 501 + slots);
    }
}

/* A failed write stops the run with its code: no batch is answered once it is known,
 * yet every batch answered goes to the write stage, so that the CLI can count what it
 * could not write. */
static void a_write_that_fails_stops_the_run(void)
{
    for (unsigned threads = 2; threads <= 9; threads += 7) {
        numbers n;
        size_t slots;
        CHECK(run_failing(&n, threads, UINT64_MAX, 300, &slots) == 9);
        CHECK(atomic_load(&n.written) == atomic_load(&n.answered));
        CHECK(atomic_load(&n.answered) >= 301 && atomic_load(&n.answered) <= 301 + slots);
        CHECK(atomic_load(&n.wrong) == 0);
        CHECK(n.read <= 301 + slots);
    }
}

/* Reads interrupted (a signal) are tried again; the batches are the same. */
static void interrupted_reads_are_tried_again(void)
{
    numbers n;
    numbers_init(&n, 2000);
    n.again_every = 7;
    double phases[TEST_PHASES] = {0};
    CHECK(run_numbers(&n, 4, 16, phases) == 0);
    CHECK(atomic_load(&n.answered) == 2000 && atomic_load(&n.wrong) == 0);
    CHECK(phases[0] > 2001); /* the interrupted reads too */
}

/* A flush asked before a read runs alone, once every batch read before it is
 * written: at once if they are, else after the write that catches up. */
static void flushes_wait_for_the_writes(void)
{
    for (unsigned threads = 2; threads <= 8; threads *= 2) {
        numbers n;
        numbers_init(&n, 5000);
        n.flush_every = 10;
        double phases[TEST_PHASES] = {0};
        CHECK(run_numbers(&n, threads, 4 * (size_t)threads, phases) == 0);
        CHECK(atomic_load(&n.written) == 5000);
        CHECK(atomic_load(&n.wrong) == 0);
        CHECK(atomic_load(&n.flushes) >= 1);
        CHECK(atomic_load(&n.flushes) <= 500);
    }
}

/* No input: nothing to key or answer, code 0. */
static void an_empty_input(void)
{
    numbers n;
    numbers_init(&n, 0);
    double phases[TEST_PHASES] = {0};
    CHECK(run_numbers(&n, 3, 12, phases) == 0);
    CHECK(atomic_load(&n.answered) == 0 && phases[0] == 1 && phases[1] == 0);
}

/* Out of range: no pipeline. */
/* An answer that forks: every task of every fork runs once, on whichever threads, and
 * the fork returns when all have; the batches still go in order. */
static void forks_run_every_task_once(void)
{
    static const unsigned threads[] = {2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        numbers n;
        numbers_init(&n, 500);
        n.fork_tasks = 16;
        double phases[TEST_PHASES] = {0};
        CHECK(run_numbers(&n, threads[t], 4, phases) == 0);
        CHECK(atomic_load(&n.answered) == 500 && atomic_load(&n.written) == 500);
        CHECK(atomic_load(&n.wrong) == 0 && atomic_load(&n.forks_short) == 0);
        for (size_t i = 0; i < 64; i++)
            CHECK(atomic_load(&n.task_runs[i]) == (i < 16 ? 500u : 0u));
    }
}

static void thread_counts_out_of_range(void)
{
    pipeline_stages stages = {NULL,         read_number,   key_number, answer_number,
                              write_number, flush_numbers, 1, 1};
    void *batch[1] = {NULL};
    CHECK(pipeline_new(&stages, batch, 1, 1) == NULL);
    CHECK(pipeline_new(&stages, batch, 1, PIPELINE_MAX_THREADS + 1) == NULL);
    CHECK(pipeline_new(&stages, batch, 0, 2) == NULL);
}

static const testing_case cases[] = {
    {"answers_in_input_order", answers_in_input_order},
    {"an_answer_that_fails_stops_the_run", an_answer_that_fails_stops_the_run},
    {"a_write_that_fails_stops_the_run", a_write_that_fails_stops_the_run},
    {"interrupted_reads_are_tried_again", interrupted_reads_are_tried_again},
    {"flushes_wait_for_the_writes", flushes_wait_for_the_writes},
    {"an_empty_input", an_empty_input},
    {"forks_run_every_task_once", forks_run_every_task_once},
    {"thread_counts_out_of_range", thread_counts_out_of_range},
};

TESTING_MAIN(cases)
