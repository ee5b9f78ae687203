/*
 * pipeline.h - one stream's batches of lines through T threads, in input order.
 *
 * A run reads its input in batches, finds each batch's keys, answers the batches one
 * after another, and writes them one after another.  With threads the four stages
 * overlap: the calling thread reads, in input order; any thread finds a read batch's
 * keys, several batches side by side; any thread, one at a time, answers the batches in
 * input order, while another may write the batch answered before.  The filter sees the
 * same calls in the same order as on one thread, so it answers, and the run writes,
 * exactly what one thread would.
 *
 * The batches are a ring of slots: a slot is read, keyed, answered, written, then free
 * for the next read.  An answer that fails stops the run once the batches answered,
 * itself included, are written: the batches read past it are dropped unanswered, as one
 * thread would not have read them.  A write that fails stops the run likewise.
 */
#ifndef ONCE_PROGRAMS_PIPELINE_H
#define ONCE_PROGRAMS_PIPELINE_H

#include <stddef.h>

#define PIPELINE_MAX_THREADS 256u

typedef enum pipeline_read {
    PIPELINE_BATCH, /* a batch was read into the slot */
    PIPELINE_AGAIN, /* nothing read (a signal came): call again */
    PIPELINE_END    /* no more batches: the input ended, or reading failed (the stage says) */
} pipeline_read;

typedef struct pipeline_stages {
    void *context;
    /* Read the next batch into `batch`: on the calling thread only, in input order. */
    pipeline_read (*read)(void *context, void *batch, double *phases);
    /* Find the batch's keys: on any thread, several batches at once. */
    void (*keys)(void *context, void *batch, double *phases);
    /* Answer the batch: on any thread, one batch at a time, in input order.  Nonzero
     * answers no later batch (it is the run's exit code unless a write fails). */
    int (*answer)(void *context, void *batch, double *phases);
    /* Write the answered batch: on any thread, one batch at a time, in input order.
     * Nonzero answers no later batch (it is the run's exit code); the batches already
     * answered still come here. */
    int (*write)(void *context, void *batch, double *phases);
    /* Write out what the answers wrote so far (see pipeline_flush). */
    void (*flush)(void *context);
    size_t phase_count; /* doubles in each thread's `phases` */
    /* The phase a fork's tasks count in (pipeline_fork), on the threads that take them
     * other than the forking one, whose stage counts its own time. */
    size_t fork_phase;
} pipeline_stages;

typedef struct pipeline pipeline;

/* A pipeline over `slots` batches (batch[0 .. slots)) for `threads` threads in all, the
 * caller and threads - 1 more (2 to PIPELINE_MAX_THREADS); NULL without memory. */
pipeline *pipeline_new(const pipeline_stages *stages, void **batch, size_t slots,
                       unsigned threads);
void pipeline_free(pipeline *p);

/* Run the stages to the end of the input.  Each thread adds the seconds of its stages to
 * its own phases; on return `phases` (phase_count doubles) has their sums added.
 * Returns the first nonzero code of `write`, else of `answer`, 0 if none, or -1 if a
 * thread could not be started (then nothing was read). */
int pipeline_run(pipeline *p, double *phases);

/* From within a stage: run task(context, i) for every i in [0, count) on the pipeline's
 * threads, the calling one among them, and return when all have returned.  Threads
 * looking for work take these tasks before any stage's work, so that the stage that
 * forks (the answers, through a sharded filter's executor) goes at the pace of all the
 * threads.  One fork at a time: only the answering stage forks. */
void pipeline_fork(pipeline *p, void (*task)(void *context, size_t index), void *context,
                   size_t count);

/* For the reader's before-block hook (the read stage, before a read that may block):
 * stages->flush runs, under the writing token, as soon as every batch read so far is
 * written (now, if they are), so that a live stream's lines go out while it waits. */
void pipeline_flush(pipeline *p);

/* Seconds on the monotonic clock, for the stages' phase times and the run's (one
 * clock for both, so that the phases add up to the run). */
double monotonic_seconds(void);

#endif
