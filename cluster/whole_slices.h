/*
 * cluster/whole_slices.h - a horizontal filter whose slices are whole filters, each a
 * key of the cluster (whole_slices.c; once_sliced.h, "Whole slices").
 */
#ifndef ONCE_CLUSTER_WHOLE_SLICES_H
#define ONCE_CLUSTER_WHOLE_SLICES_H

#include "routing.h"

#include "once_sliced.h"

typedef struct whole_slices whole_slices;

/* How one slice is doing, for stats and the fault lines. */
typedef struct whole_slice_info {
    uint64_t events;   /* events sent to it: paper 000's messages, a request each */
    uint64_t failed_events; /* of which its command answered nothing usable */
    uint64_t messages; /* SLICE.TADD and SLICE.STAMP commands sent */
    uint64_t failures; /* of which answered nothing usable */
    uint64_t missing;  /* of which NOSLICE */
    uint64_t falls;    /* times it failed after an answer (or at its first command) */
    uint64_t owed;     /* events the policy printed while it failed, to send it (backfill) */
    uint64_t backfilled; /* of those, sent and answered */
    uint64_t given_up; /* of those, past the bound: never sent */
    once_slice_held held; /* as its last answer said */
    bool failed;       /* its last command failed */
    int node;          /* the node that last answered or failed (-1: none yet) */
} whole_slice_info;

/* Over `client` (kept by the caller), slices keys[0 .. slices-1] (copied), digests under
 * `seed`, times sent when `timed`; NULL when memory runs out. */
whole_slices *whole_slices_new(cluster_client *client, const char *const *keys,
                               uint32_t slices, uint64_t seed, bool timed);
void whole_slices_free(whole_slices *w);

/* SLICE.RESERVE every slice: FILTER, CAPACITY, ERROR, SEED, SPAN and LAG (the last two
 * when not 0); ONCE_OK, or why not in `error`. */
once_status whole_slices_reserve(whole_slices *w, once_type filter, uint64_t capacity,
                                 double error_rate, uint64_t span_ms, uint64_t lag_ms,
                                 char *error, size_t room);

/* Test-and-add keys[0 .. count-1]: each to its slice (once_shard_of its digest), every
 * slice's events as one SLICE.TADD, all sent together.  decided[i] false for an event
 * its slice did not answer (unreachable, an error), with *status the worst: ONCE_OK,
 * ONCE_ERR_UNAVAILABLE, or a slice's refusal (ONCE_ERR_FULL, ONCE_ERR_TIME). */
once_status whole_slices_batch(whole_slices *w, const once_key *keys, size_t count, uint8_t *seen,
                               bool *decided);

/* The status of a batch from its rounds': a slice unreachable stays the batch's (its
 * events go to the failure policy), else the last refusal (full, a time). */
once_status whole_slices_worse(once_status now, once_status next);

/* Stamp keys[0 .. count-1] at their times (SLICE.STAMP, once_slice_events_stamp): a
 * count window's new lines at their places in the count.  decided[i] false for a line
 * its slice did not answer (owed to it with backfill on); scratch: count bytes. */
once_status whole_slices_stamp(whole_slices *w, const once_key *keys, size_t count,
                               uint8_t *scratch, bool *decided);

/* With `on` (a count window), what a slice is owed goes as stamps, and a line whose
 * test-and-add failed is owed only by its stamp. */
void whole_slices_set_stamping(whole_slices *w, bool on);

/* With `on`, the events of a slice that did not answer are sent to it again, ahead of
 * later rounds' (whole_slices.c, "Backfill"): for a failure policy that prints them. */
void whole_slices_set_backfill(whole_slices *w, bool on);

/* Send what failed slices are owed now, once (those that still cannot answer keep it). */
void whole_slices_flush(whole_slices *w);

uint32_t whole_slices_count(const whole_slices *w);
void whole_slices_info(const whole_slices *w, uint32_t slice, whole_slice_info *info);

#endif /* ONCE_CLUSTER_WHOLE_SLICES_H */
