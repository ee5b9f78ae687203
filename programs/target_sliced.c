/*
 * target_sliced.c - a sliced filter in this process as the run's target (target.h):
 * --slicing, the standard filter of --capacity and --error sliced over sites
 * (once_sliced.h), run by the reading thread or by --threads worker threads that own
 * the sites.
 *
 * It has no saved form (options.c refuses --state and `once card` with it), so save
 * and card have nothing to do.  Its clock is the filter's (once_sliced_clock: the
 * latest event time offered), stepped by the library's rule (once_time_step) with
 * --max-time-jump; the sites keep their own clocks for their timers.  The lines' stages
 * stay on the reading thread: the filter's threads are its sites'.
 */
#include "report.h"
#include "target.h"

#include "once_sliced.h"

#include <stdio.h>
#include <stdlib.h>

/* The batch of lines (once.c) is one round of the filter's threads. */
#define SLICED_BATCH_EVENTS 4096u

/* A sliced filter's sites grow with a time window: capped as every time window is. */
static uint64_t sliced_memory_cap(const cli_options *o)
{
    if (!o->span_given)
        return 0;
    return o->max_memory ? o->max_memory : ONCE_DEFAULT_TIME_WINDOW_MAX_BYTES;
}

/* --slicing: the standard filter of the options, sliced over sites. */
static int open_sliced(const cli_options *o, once_sliced **out)
{
    once_sliced_config c = {
        .slicing = o->slicing,
        .slices = o->slices,
        .parts = o->parts,
        .error = o->error,
        .seed = o->seed,
        .seed_is_set = o->seed_given,
        .threads = o->threads,
        /* A time window: the paper's timers, each site growing alone past --capacity
         * keys a span (section 5), as a time window here grows with its rate.  A count
         * window holds N keys at most: sized for them, it never grows. */
        .window_ms = o->span_ms,
        .growth = !o->span_given    ? ONCE_GROWTH_NONE
                  : o->bounded_growth ? ONCE_GROWTH_BOUNDED
                                      : ONCE_GROWTH_DENSITY,
        .window_events = o->window_given ? o->window : 0,
        .capacity = o->window_given ? o->window : o->capacity,
        .refresh = o->refresh,
        .max_bytes = sliced_memory_cap(o),
        /* A batch of lines is one round: with --threads, each round hands every site's
         * requests to its thread and waits for them. */
        .batch_events = SLICED_BATCH_EVENTS,
    };
    once_status st = once_sliced_create(out, &c, NULL);
    if (st == ONCE_ERR_FULL && report_sliced_cap_at_creation(&c))
        return EXIT_USAGE;
    if (st != ONCE_OK) {
        fprintf(stderr, "once: cannot build a sliced filter for capacity %llu at error %g over "
                        "%u sites: %s\n",
                (unsigned long long)c.capacity, o->error,
                o->slices * (o->parts ? o->parts : 1), once_strerror(st));
        return st == ONCE_ERR_NOMEM ? EXIT_IO : EXIT_USAGE;
    }
    return 0;
}


void target_sliced_report(const sliced_target *st, stats_mode mode, const run_summary *sum)
{
    const once_sliced *filter = st->filter;
    const run_counters *c = sum->c;
    once_sliced_stats s;
    if (once_sliced_get_stats(filter, &s) != ONCE_OK)
        return;
    uint64_t *loads = calloc(s.sites, sizeof *loads);
    if (loads == NULL || once_sliced_loads(filter, loads, s.sites) != ONCE_OK) {
        free(loads);
        return;
    }
    /* The filter's live estimate, from the cells its sites hold set (section 3.2). */
    double fpr = s.fp_estimate;
    uint64_t bytes = target_sliced_bytes(st);
    if (mode == STATS_JSON) {
        fprintf(stderr,
                "{\"lines\":%llu,\"distinct\":%llu,\"duplicates\":%llu,\"bytes\":%llu,"
                "\"seconds\":%.6f%s,\"lines_per_second\":%.1f,\"input_bytes\":%llu,"
                "\"structure\":\"sliced\",\"slicing\":\"%s\",\"slices\":%u,\"parts\":%u,"
                "\"sites\":%u,\"bits\":%llu,\"site_bits\":%llu,\"hashes\":%u,"
                "\"fpr_estimate\":%.6g,\"messages\":%llu,\"messages_per_event\":%.4f,"
                "\"fairness\":%.6f,\"max_load\":%llu,\"filters\":%u,\"fill\":%.6f,"
                "\"window\":%llu,\"window_unit\":\"%s\",\"bad_time\":%llu,\"late\":%llu,"
                "\"loads\":[",
                (unsigned long long)c->lines, (unsigned long long)c->distinct,
                (unsigned long long)c->duplicates, (unsigned long long)bytes,
                report_finite(c->seconds), sum->phases, report_finite(sum->rate),
                (unsigned long long)c->input_bytes, once_slicing_name(s.slicing),
                s.slices, s.parts, s.sites, (unsigned long long)s.bits,
                (unsigned long long)s.slice_bits, s.hashes, report_finite(fpr),
                (unsigned long long)s.messages, report_finite(s.messages_per_event),
                report_finite(s.fairness), (unsigned long long)s.max_load, s.filters,
                report_finite(s.fill),
                (unsigned long long)(s.window_ms ? s.window_ms : s.window_events),
                s.window_ms ? "ms" : s.window_events ? "events" : "none",
                (unsigned long long)c->bad_time, (unsigned long long)c->late);
        report_json_counts(loads, s.sites);
        fputs("]}\n", stderr);
        free(loads);
        return;
    }
    report_counts(sum);
    char size[32] = "size unknown";
    if (bytes != 0)
        report_size(size, sizeof size, bytes);
    fprintf(stderr,
            "once: standard filter of %llu bits, k=%u, sliced %s over %u sites of %llu bits "
            "(%s%s), estimated false-positive rate %.3g\n",
            (unsigned long long)s.bits, s.hashes, once_slicing_name(s.slicing),
            s.sites, (unsigned long long)s.slice_bits, size, bytes != 0 ? " in all" : "", fpr);
    fprintf(stderr,
            "once: %.3f messages per lookup, fairness %.4f, max load %llu events on one site\n",
            s.messages_per_event, s.fairness, (unsigned long long)s.max_load);
    if (s.window_events && s.clock_failures)
        fprintf(stderr, "once: window %llu keys: timers on the count of keys delivered, %llu "
                        "now; %llu reads of the count failed\n",
                (unsigned long long)s.window_events, (unsigned long long)s.count,
                (unsigned long long)s.clock_failures);
    else if (s.window_events)
        fprintf(stderr, "once: window %llu keys: timers on the count of keys delivered, %llu "
                        "now\n",
                (unsigned long long)s.window_events, (unsigned long long)s.count);
    else if (s.window_ms)
        fprintf(stderr, "once: span %.3f s: timers on every site, %u sub-filters now\n",
                (double)s.window_ms / 1000.0, s.filters);
    fputs("once: events per site:", stderr);
    for (uint32_t i = 0; i < s.sites; i++)
        fprintf(stderr, " %llu", (unsigned long long)loads[i]);
    fputc('\n', stderr);
    free(loads);
}


static once_sliced *sliced_of(const target *t)
{
    return ((const sliced_target *)t->impl)->filter;
}

/* A sliced filter has no saved state: on a refusal none of the batch counts. */
static once_status sliced_answer(target *t, const once_key *keys, const once_digest *digests,
                                 const uint64_t *times, size_t n, uint8_t *seen, size_t *done)
{
    (void)digests;
    (void)times;
    once_status st = once_sliced_test_and_add_batch(sliced_of(t), keys, n, seen);
    *done = st == ONCE_OK ? n : 0;
    return st;
}

static void sliced_clock(const target *t, uint64_t *clock_ms, bool *started)
{
    if (once_sliced_clock(sliced_of(t), clock_ms, started) != ONCE_OK) {
        *clock_ms = 0; /* no time window: no clock */
        *started = false;
    }
}

bool target_time_step(const target *t, uint64_t *clock_ms, bool *started, uint64_t when)
{
    return once_time_step(t->options->max_time_jump_ms, clock_ms, started, when);
}

uint64_t target_sliced_bytes(const sliced_target *st)
{
    once_sliced_stats s;
    if (st->filter == NULL || once_sliced_get_stats(st->filter, &s) != ONCE_OK)
        return 0; /* a tree over a cluster: its nodes are the cluster's */
    return s.bytes != 0 ? s.bytes : st->geometry_bytes;
}

static uint64_t sliced_bytes(const target *t)
{
    return target_sliced_bytes(t->impl);
}

bool target_sliced_warn_overfull(target *t, uint64_t distinct, bool progress)
{
    const sliced_target *st = t->impl;
    uint64_t capacity = t->options->capacity;
    if (capacity == 0 || !st->fixed_size || distinct <= capacity)
        return false;
    if (progress)
        report_progress_done();
    target_warn_capacity(capacity);
    return true;
}

void target_sliced_report_full(const target *t, const char *input, uint64_t line)
{
    const sliced_target *st = t->impl;
    if (st->filter != NULL)
        report_sliced_full(input, line, st->filter, sliced_memory_cap(t->options));
    else
        fprintf(stderr, "once: %s:%llu: filter error: %s\n", input, (unsigned long long)line,
                once_strerror(ONCE_ERR_FULL));
}

static void sliced_report(const target *t, stats_mode mode, const run_summary *sum)
{
    target_sliced_report(t->impl, mode, sum);
}

int target_no_card(const target *t, const char *name)
{
    (void)t;
    (void)name;
    return EXIT_USAGE; /* options.c refuses `once card` without a filter of cells */
}

int target_no_save(const target *t, const char *path)
{
    (void)t;
    (void)path;
    return 0; /* options.c refuses --state without a saved form */
}

void target_no_executor(target *t, const once_executor *executor)
{
    (void)t;
    (void)executor;
}

static void sliced_close(target *t)
{
    once_sliced_free(sliced_of(t));
}

void target_sites_opened(target *t, sliced_target *st)
{
    const cli_options *o = t->options;
    st->fixed_size = !o->span_given && !o->window_given;
    t->threads = 1; /* a sliced filter's threads are its sites' */
    t->timed = o->span_given;
}

static const target_ops sliced_ops = {
    sliced_answer,  sliced_clock,       target_time_step,
    sliced_bytes,   target_sliced_warn_overfull, target_sliced_report_full,
    sliced_report,  target_no_card,     target_no_save,
    target_no_executor, sliced_close,
};

int target_sliced_open(target *t, const cli_options *o)
{
    sliced_target *st = target_start(t, &sliced_ops, sizeof *st);
    if (st == NULL)
        return EXIT_IO;
    int code = open_sliced(o, &st->filter);
    if (code == 0)
        target_sites_opened(t, st);
    return code;
}
