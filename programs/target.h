/*
 * target.h - what `once` filters its lines with: one interface, one file a kind.
 *
 * A run answers batches of keys, judges event times by a clock, shows its memory,
 * reports, and saves; what does it differs by the options: the library's filter
 * (target_filter.c: once_filter, sharded or not, loaded from and saved to --state),
 * a sliced filter in this process (target_sliced.c: once_sliced.h, --slicing), or a
 * sliced filter or Bloom tree over a Redis Cluster (target_cluster.c: once_cluster.h,
 * --cluster).  The run (once.c) and the summary (report.c) call the target and never
 * ask which kind it is, so a new kind is one more file and one more line in
 * target_open, in the style of the library's own ops tables (lib/core/structure.h).
 *
 * Invariants:
 *   - every op is set (no NULL checks at the callers); an op a kind has nothing to do
 *     for does nothing (save without a saved form, the executor of an unsharded
 *     filter);
 *   - answer() answers keys in array order, exactly as one-key calls would, and says
 *     in *done how many took effect (a kind without a saved state says none on a
 *     failure, since nothing of it outlives the run);
 *   - the clock is the target's: clock() reads where the stream's event times stand
 *     (before the batch), clock_step() is the library's rule for one more time from
 *     there; after answer() the target's clock has taken the batch's times, so the
 *     next clock() starts past them.  No copy of the rule lives in programs/.
 */
#ifndef ONCE_PROGRAMS_TARGET_H
#define ONCE_PROGRAMS_TARGET_H

#include "options.h"
#include "report.h"

#include "once.h"
#include "once_sliced.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct target target;

typedef struct target_ops {
    /* Test and add keys[0 .. n-1] (digests[i] and times[i] instead when digests is not
     * NULL: hashed on the pipeline's threads); seen[i] 1 for a repeat. */
    once_status (*answer)(target *t, const once_key *keys, const once_digest *digests,
                          const uint64_t *times, size_t n, uint8_t *seen, size_t *done);
    /* The clock before the next batch, and the rule for one more event time. */
    void (*clock)(const target *t, uint64_t *clock_ms, bool *started);
    bool (*clock_step)(const target *t, uint64_t *clock_ms, bool *started, uint64_t when);
    /* The memory the filter holds here (0 for nodes that are the cluster's). */
    uint64_t (*bytes)(const target *t);
    /* Warn, once, that it holds more keys than it was made for (true: warned, after
     * clearing the progress line when `progress`). */
    bool (*warn_overfull)(target *t, uint64_t distinct, bool progress);
    /* ONCE_ERR_FULL refused line `line` of `input`: say what it needs. */
    void (*report_full)(const target *t, const char *input, uint64_t line);
    /* The --stats summary (report_stats calls it, mode not STATS_NONE): the JSON line,
     * or the run's counts (report_counts) and then the filter's lines.  Nothing when
     * the filter cannot say its stats. */
    void (*report)(const target *t, stats_mode mode, const run_summary *summary);
    /* `once card` over a stream: print the estimate.  Returns 0 or an exit code. */
    int (*card)(const target *t, const char *name);
    /* Save the state to `path` (0, or -1 after saying why). */
    int (*save)(const target *t, const char *path);
    /* Answer batches on the pipeline's threads (NULL: on the calling one). */
    void (*set_executor)(target *t, const once_executor *executor);
    void (*close)(target *t);
} target_ops;

struct target {
    const target_ops *ops;
    const cli_options *options;
    void *impl;
    /* Set by the open: */
    uint32_t threads; /* the threads the lines' stages may take (1: the calling one) */
    uint64_t seed;    /* for the keys hashed on those threads */
    bool timed;       /* a time window: every key needs an event time */
};

/* Open the target the options name, from the state file when there is one.  Returns 0
 * or an exit code after printing why; either way target_close frees what it holds. */
int target_open(target *t, cli_options *o);
void target_close(target *t);

/* For the kinds' opens: `ops`, and a zeroed impl of impl_size bytes (NULL after
 * saying so when there is no memory).  target_close frees it after ops->close, which
 * frees what the impl holds. */
void *target_start(target *t, const target_ops *ops, size_t impl_size);

/* The kinds, for target_open. */
int target_filter_open(target *t, cli_options *o);
int target_sliced_open(target *t, const cli_options *o);
int target_cluster_open(target *t, const cli_options *o);

/* The warning of a filter of fixed size past its `capacity` keys (every kind's). */
void target_warn_capacity(uint64_t capacity);

/* Shared by the kinds of sites, in process and over a cluster (target_sliced.c).  A
 * target whose impl begins with a sliced_target may use the ops below. */
typedef struct sliced_target {
    once_sliced *filter; /* NULL: a tree over a cluster */
    bool fixed_size;     /* no window: passing --capacity keys raises the error rate */
    /* The sites' bytes as their geometry gives them, for sites that describe none (a
     * cluster's timed slices: their timers are the server's); 0: none known. */
    uint64_t geometry_bytes;
} sliced_target;

/* A target of sites opened: no lines on threads, a time window with --span. */
void target_sites_opened(target *t, sliced_target *st);
bool target_time_step(const target *t, uint64_t *clock_ms, bool *started, uint64_t when);
bool target_sliced_warn_overfull(target *t, uint64_t distinct, bool progress);
void target_sliced_report_full(const target *t, const char *input, uint64_t line);
int target_no_card(const target *t, const char *name);
int target_no_save(const target *t, const char *path);
void target_no_executor(target *t, const once_executor *executor);
/* A sliced filter's memory (as its sites describe it, else st->geometry_bytes; 0 for
 * a tree) and stats (its part of a cluster's). */
uint64_t target_sliced_bytes(const sliced_target *st);
void target_sliced_report(const sliced_target *st, stats_mode mode, const run_summary *sum);

#endif
