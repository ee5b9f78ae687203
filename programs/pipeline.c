/*
 * pipeline.c - one stream's batches of lines through T threads, in input order
 * (pipeline.h).
 *
 * Design
 *   One mutex and one condition over a ring of slots, each FREE, READ, KEYING, KEYED,
 *   ANSWERING, ANSWERED or WRITING.  Sequence numbers count the batches: read_seq read
 *   (published), key_seq taken for their keys, answer_seq answered, write_seq written;
 *   batch s lives in slot s % slots, and
 *   write_seq <= answer_seq <= key_seq <= read_seq <= write_seq + slots.  A thread
 *   looking for work takes, in this order: the next batch to answer, if it is keyed and
 *   no thread answers (the answering token: answers run one at a time, in order); the
 *   next batch to write, if it is answered and no thread writes (the writing token,
 *   likewise); the next batch to key; and, on the calling thread only, the next read,
 *   if its slot is free.  Answers come first: they are the one stage that cannot run
 *   beside itself, so the run goes at their pace when the others keep up.  A batch's
 *   stage runs outside the mutex; only the hand-over is under it.
 *
 *   A stage may fork (pipeline_fork): its tasks go under the same mutex, and a thread
 *   looking for work takes one before anything else, so that the answers, which the
 *   run waits for, get every thread; the forking thread takes them too, then waits for
 *   the last to finish.
 *
 *   The threads other than the caller block the asynchronous signals (all but SIGPIPE
 *   and the faults), so that a stop signal reaches the reading thread, which waits for
 *   it with its reads (lines.h).  SIGPIPE stays: a write to a closed pipe ends the run
 *   on any thread as it does on one.
 *
 * Invariants
 *   - answers run one at a time, in sequence order, each after its batch's keys; so do
 *     writes, each after its batch's answer;
 *   - reads run on the calling thread, in sequence order, into free slots only;
 *   - after a nonzero answer or write, no batch is read, keyed or answered any more,
 *     and every batch answered still goes to the write stage (which, after a failed
 *     write, counts what it could not write).
 */
#include "pipeline.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum slot_state {
    SLOT_FREE,
    SLOT_READ,
    SLOT_KEYING,
    SLOT_KEYED,
    SLOT_ANSWERING,
    SLOT_ANSWERED,
    SLOT_WRITING
} slot_state;

struct pipeline {
    pipeline_stages stages;
    void **batch;
    slot_state *state;
    size_t slots;
    unsigned threads;
    pthread_mutex_t mutex;
    pthread_cond_t changed;
    uint64_t read_seq, key_seq, answer_seq, write_seq;
    bool input_done;   /* the last batch is read */
    bool answering;    /* a thread holds the answering token */
    bool writing;      /* a thread holds the writing token */
    bool flush_wanted; /* flush once every batch read is written */
    int answer_code;   /* the first nonzero answer: no later batch is answered */
    int code;          /* the first nonzero write; -1: a thread could not start */
    double *phases;    /* threads x phase_count, each thread's own row */
    /* A fork (pipeline_fork): tasks [fork_next, fork_count) not yet taken, fork_left
     * not yet finished. */
    void (*fork_task)(void *context, size_t index);
    void *fork_context;
    size_t fork_next, fork_count, fork_left;
    pthread_t *helpers;
};

typedef struct helper_start {
    pipeline *p;
    unsigned index;
} helper_start;

pipeline *pipeline_new(const pipeline_stages *stages, void **batch, size_t slots,
                       unsigned threads)
{
    if (threads < 2 || threads > PIPELINE_MAX_THREADS || slots == 0)
        return NULL;
    pipeline *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->stages = *stages;
    p->batch = batch;
    p->slots = slots;
    p->threads = threads;
    p->state = calloc(slots, sizeof *p->state);
    p->phases = calloc((size_t)threads * (stages->phase_count ? stages->phase_count : 1),
                       sizeof *p->phases);
    p->helpers = calloc(threads, sizeof *p->helpers);
    if (p->state == NULL || p->phases == NULL || p->helpers == NULL) {
        pipeline_free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mutex, NULL);
    pthread_cond_init(&p->changed, NULL);
    return p;
}

void pipeline_free(pipeline *p)
{
    if (p == NULL)
        return;
    if (p->state != NULL && p->phases != NULL && p->helpers != NULL) {
        pthread_mutex_destroy(&p->mutex);
        pthread_cond_destroy(&p->changed);
    }
    free(p->state);
    free(p->phases);
    free(p->helpers);
    free(p);
}

static slot_state *state_of(pipeline *p, uint64_t seq)
{
    return &p->state[seq % p->slots];
}

/* An answer or a write stopped the run: nothing more is read, keyed or answered. */
static bool stopped(const pipeline *p)
{
    return p->code != 0 || p->answer_code != 0;
}

/* Run one stage of batch `seq`, its slot `during` meanwhile, outside the mutex (held
 * on entry and on return); `keys` has no code (0). */
static int run_stage(pipeline *p, uint64_t seq, slot_state during, double *phases)
{
    void *batch = p->batch[seq % p->slots];
    *state_of(p, seq) = during;
    pthread_mutex_unlock(&p->mutex);
    int code = 0;
    if (during == SLOT_ANSWERING)
        code = p->stages.answer(p->stages.context, batch, phases);
    else if (during == SLOT_WRITING)
        code = p->stages.write(p->stages.context, batch, phases);
    else
        p->stages.keys(p->stages.context, batch, phases);
    pthread_mutex_lock(&p->mutex);
    return code;
}

double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Run one task of the fork, if one is left, its seconds added to phases[fork_phase]
 * (phases NULL: the forking thread, whose stage counts them); the mutex is held on
 * entry and on return.  false: none. */
static bool fork_one(pipeline *p, double *phases)
{
    if (p->fork_next >= p->fork_count)
        return false;
    size_t index = p->fork_next++;
    pthread_mutex_unlock(&p->mutex);
    double start = phases != NULL ? monotonic_seconds() : 0;
    p->fork_task(p->fork_context, index);
    if (phases != NULL && p->stages.fork_phase < p->stages.phase_count)
        phases[p->stages.fork_phase] += monotonic_seconds() - start;
    pthread_mutex_lock(&p->mutex);
    if (--p->fork_left == 0)
        pthread_cond_broadcast(&p->changed);
    return true;
}

void pipeline_fork(pipeline *p, void (*task)(void *context, size_t index), void *context,
                   size_t count)
{
    pthread_mutex_lock(&p->mutex);
    p->fork_task = task;
    p->fork_context = context;
    p->fork_next = 0;
    p->fork_count = count;
    p->fork_left = count;
    pthread_cond_broadcast(&p->changed);
    while (fork_one(p, NULL))
        ;
    while (p->fork_left > 0)
        pthread_cond_wait(&p->changed, &p->mutex);
    p->fork_count = 0;
    pthread_mutex_unlock(&p->mutex);
}

/* Run a fork's task, or answer, write or key one batch, if one is waiting; the mutex is
 * held on entry and on return.  false: nothing to do now. */
static bool work_one(pipeline *p, double *phases)
{
    if (fork_one(p, phases))
        return true;
    if (!stopped(p) && !p->answering && p->answer_seq < p->key_seq &&
        *state_of(p, p->answer_seq) == SLOT_KEYED) {
        uint64_t seq = p->answer_seq;
        p->answering = true;
        int code = run_stage(p, seq, SLOT_ANSWERING, phases);
        *state_of(p, seq) = SLOT_ANSWERED;
        p->answer_seq++;
        if (code != 0 && p->answer_code == 0)
            p->answer_code = code;
        p->answering = false;
        pthread_cond_broadcast(&p->changed);
        return true;
    }
    if (!p->writing && p->write_seq < p->answer_seq) {
        uint64_t seq = p->write_seq;
        p->writing = true;
        int code = run_stage(p, seq, SLOT_WRITING, phases);
        *state_of(p, seq) = SLOT_FREE;
        p->write_seq++;
        if (code != 0 && p->code == 0)
            p->code = code;
        bool flush = p->flush_wanted && p->write_seq == p->read_seq && p->code == 0;
        if (flush) {
            p->flush_wanted = false;
            pthread_mutex_unlock(&p->mutex); /* the token is still held */
            p->stages.flush(p->stages.context);
            pthread_mutex_lock(&p->mutex);
        }
        p->writing = false;
        pthread_cond_broadcast(&p->changed);
        return true;
    }
    if (!stopped(p) && p->key_seq < p->read_seq) {
        uint64_t seq = p->key_seq++;
        (void)run_stage(p, seq, SLOT_KEYING, phases);
        *state_of(p, seq) = SLOT_KEYED;
        pthread_cond_broadcast(&p->changed);
        return true;
    }
    return false;
}

/* Every batch read is written, and no more will be read; or an answer or a write
 * stopped the run, and every batch answered has gone to the write stage. */
static bool finished(const pipeline *p)
{
    return (stopped(p) && !p->answering && p->write_seq == p->answer_seq) ||
           (p->input_done && p->write_seq == p->read_seq);
}

static void *helper_main(void *argument)
{
    helper_start *start = argument;
    pipeline *p = start->p;
    double *phases = p->phases + (size_t)start->index * p->stages.phase_count;
    free(start);
    pthread_mutex_lock(&p->mutex);
    for (;;) {
        if (work_one(p, phases))
            continue;
        if (finished(p))
            break;
        pthread_cond_wait(&p->changed, &p->mutex);
    }
    pthread_mutex_unlock(&p->mutex);
    return NULL;
}

/* The helpers' signal mask: every asynchronous signal blocked. */
static void helper_mask(sigset_t *mask)
{
    sigfillset(mask);
    static const int kept[] = {SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        sigdelset(mask, kept[i]);
}

static unsigned start_helpers(pipeline *p)
{
    sigset_t mask, old;
    helper_mask(&mask);
    pthread_sigmask(SIG_BLOCK, &mask, &old);
    unsigned started = 0;
    for (unsigned i = 1; i < p->threads; i++, started++) {
        helper_start *start = malloc(sizeof *start);
        if (start == NULL)
            break;
        start->p = p;
        start->index = i;
        if (pthread_create(&p->helpers[i], NULL, helper_main, start) != 0) {
            free(start);
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return started;
}

int pipeline_run(pipeline *p, double *phases)
{
    double *own = p->phases; /* row 0: the calling thread's */
    unsigned started = start_helpers(p);
    pthread_mutex_lock(&p->mutex);
    if (started + 1 < p->threads) {
        p->code = -1; /* the helpers that started leave at once */
        pthread_cond_broadcast(&p->changed);
    }
    while (!stopped(p) && !p->input_done) {
        if (*state_of(p, p->read_seq) == SLOT_FREE) {
            uint64_t seq = p->read_seq;
            pthread_mutex_unlock(&p->mutex);
            pipeline_read r = p->stages.read(p->stages.context, p->batch[seq % p->slots], own);
            pthread_mutex_lock(&p->mutex);
            if (r == PIPELINE_BATCH) {
                *state_of(p, seq) = SLOT_READ;
                p->read_seq++;
            } else if (r == PIPELINE_END) {
                p->input_done = true;
            }
            pthread_cond_broadcast(&p->changed);
            continue;
        }
        if (!work_one(p, own))
            pthread_cond_wait(&p->changed, &p->mutex);
    }
    while (!finished(p)) {
        if (!work_one(p, own))
            pthread_cond_wait(&p->changed, &p->mutex);
    }
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->mutex);
    for (unsigned i = 1; i <= started; i++)
        pthread_join(p->helpers[i], NULL);
    for (unsigned t = 0; t < p->threads; t++)
        for (size_t i = 0; i < p->stages.phase_count; i++)
            phases[i] += p->phases[(size_t)t * p->stages.phase_count + i];
    return p->code != 0 ? p->code : p->answer_code;
}

void pipeline_flush(pipeline *p)
{
    pthread_mutex_lock(&p->mutex);
    if (!p->writing && p->write_seq == p->read_seq && p->code == 0) {
        p->writing = true;
        pthread_mutex_unlock(&p->mutex);
        p->stages.flush(p->stages.context);
        pthread_mutex_lock(&p->mutex);
        p->writing = false;
        pthread_cond_broadcast(&p->changed);
    } else {
        p->flush_wanted = true;
    }
    pthread_mutex_unlock(&p->mutex);
}
