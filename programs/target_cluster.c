/*
 * target_cluster.c - a filter over a Redis Cluster as the run's target (target.h):
 * --cluster, a sliced filter whose slices are keys of the cluster (--slicing), or a
 * Bloom tree whose internal nodes are (--tree), this run one producer of many
 * (once_cluster.h), with --local-filter its own filter in front.
 *
 * The filter lives in the cluster under --key: nothing to save, no card.  Its clock
 * is this producer's: the slices and nodes keep theirs, the local filter answers
 * repeats that never reach the sliced filter, and a tree has none here, so no filter
 * in this process sees every event time.  The target keeps the latest time it offered
 * (as once_sliced_clock does for a sliced filter in process) and steps it by the
 * library's rule (once_time_step).  The sliced part's memory, fullness and stats are
 * the in-process sliced filter's (target_sliced.c); a tree has none here.
 *
 * Fault lines: a person watching a producer must see a failover as it happens, not
 * only in --stats at the end.  Each slice (a tree's node in the cluster) is answering,
 * held (its master failed and has a replica: its lines wait, up to --failover-hold) or
 * decided (its lines go by --on-failed-slice); a change of state prints a line on
 * stderr naming the slice, its node and what the run does.  The library calls back
 * when a node fails or answers or a hold starts or ends (once_cluster_config.on_change:
 * a batch may be blocked in a hold), and every batch's end looks again.  A node that
 * flaps could print a line a batch, so each kind of line (failed, answers again) is
 * printed at most once a second, the others counted and said with the next.
 */
#include "recipe.h"
#include "report.h"
#include "target.h"

#include "once_cluster.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A slice as the fault lines last told it. */
typedef enum slice_state { SLICE_ANSWERS = 0, SLICE_HELD, SLICE_DECIDED } slice_state;

/* The kinds of fault lines, each printed at most once a FAULT_LINE_GAP. */
enum { FAULT_FAILED, FAULT_ANSWERS, FAULT_KINDS };
#define FAULT_LINE_GAP 1.0

typedef struct fault_kind {
    double last;          /* when one was last printed (monotonic s), < 0: never */
    uint64_t suppressed;  /* not printed since */
} fault_kind;

typedef struct cluster_target {
    sliced_target sliced; /* first: the sliced ops read it; its filter is the cluster's */
    once_cluster *cluster;
    once_filter *local; /* --local-filter: this run's own keys */
    uint64_t clock;     /* the latest event time offered */
    bool clock_started;
    /* The fault lines' (above). */
    uint32_t slices;      /* the slices (or tree nodes) in the cluster */
    uint8_t *state;       /* each one's slice_state */
    double *since;        /* when each last stopped answering */
    fault_kind kinds[FAULT_KINDS];
    uint32_t hold_ms;     /* --failover-hold, 0: none */
    char policy[96];      /* what --on-failed-slice does, in words */
    bool looking;         /* a look is under way (a callback from within one is dropped) */
} cluster_target;

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Print a fault line of `kind`, or count it when one was printed less than a
 * FAULT_LINE_GAP ago. */
static void fault_line(cluster_target *ct, int kind, double now, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static void fault_line(cluster_target *ct, int kind, double now, const char *format, ...)
{
    fault_kind *k = &ct->kinds[kind];
    if (k->last >= 0 && now - k->last < FAULT_LINE_GAP) {
        k->suppressed++;
        return;
    }
    va_list args;
    va_start(args, format);
    fputs("once: ", stderr);
    vfprintf(stderr, format, args);
    va_end(args);
    if (k->suppressed)
        fprintf(stderr, " (%llu more such %s not shown: at most one a second)",
                (unsigned long long)k->suppressed, k->suppressed == 1 ? "line" : "lines");
    fputc('\n', stderr);
    fflush(stderr);
    k->last = now;
    k->suppressed = 0;
}

/* What the slice is now: answering, held for a failover, or failed with its lines
 * decided by the policy; *node_out its node's info (when *known). */
static slice_state slice_now(const cluster_target *ct, const once_cluster_slice *s,
                             once_cluster_node *node, bool *known)
{
    *known = s->node >= 0 && once_cluster_node_at(ct->cluster, (uint32_t)s->node, node) == ONCE_OK;
    if (!*known)
        return SLICE_DECIDED;
    if (node->holding)
        return SLICE_HELD;
    if (node->up && !s->failed)
        return SLICE_ANSWERS;
    /* Down, its hold not started yet (the library holds on the round after it failed). */
    if (!node->up && !s->failed && ct->hold_ms != 0 && node->replicas > 0 && !node->hold_expired)
        return SLICE_HELD;
    return SLICE_DECIDED;
}

/* Look at every slice and print a line for each that changed state. */
static void look_at_slices(cluster_target *ct)
{
    if (ct->cluster == NULL || ct->state == NULL || ct->looking)
        return;
    ct->looking = true;
    double now = now_seconds();
    for (uint32_t i = 0; i < ct->slices; i++) {
        once_cluster_slice s;
        once_cluster_node node;
        bool known = false;
        if (once_cluster_slice_at(ct->cluster, i, &s) != ONCE_OK)
            continue;
        slice_state was = (slice_state)ct->state[i], is = slice_now(ct, &s, &node, &known);
        if (is == was)
            continue;
        ct->state[i] = (uint8_t)is;
        const char *address = known ? node.address : "no node";
        const char *why = !known                  ? "no node serves its slot"
                          : !node.up && node.why[0] ? node.why
                          : s.failed                ? "its command failed"
                          : node.why[0]             ? node.why
                                                    : "unreachable";
        if (is == SLICE_ANSWERS) {
            fault_line(ct, FAULT_ANSWERS, now, "slice %s answers again, on %s, after %.1f s %s",
                       s.key, address, now - ct->since[i],
                       was == SLICE_HELD ? "held" : "of lines decided by the policy");
            continue;
        }
        if (was == SLICE_ANSWERS)
            ct->since[i] = now;
        if (is == SLICE_HELD)
            fault_line(ct, FAULT_FAILED, now,
                       "slice %s on %s failed (%s): holding its lines up to %.0f s for a "
                       "replica to take over",
                       s.key, address, why, ct->hold_ms / 1000.0);
        else if (was == SLICE_HELD)
            fault_line(ct, FAULT_FAILED, now,
                       "slice %s on %s: no replica took over within %.0f s: %s", s.key,
                       address, ct->hold_ms / 1000.0, ct->policy);
        else
            fault_line(ct, FAULT_FAILED, now, "slice %s on %s failed (%s%s): %s", s.key, address,
                       why,
                       known && node.replicas == 0 ? "; no replica to take over"
                       : ct->hold_ms == 0          ? "; no failover hold"
                                                   : "",
                       ct->policy);
    }
    ct->looking = false;
}

/* once_cluster_config.on_change: a batch may be blocked in a hold; tell now. */
static void cluster_changed(void *context)
{
    look_at_slices(context);
}

/* The fault lines' state, once the filter is open. */
static int faults_open(const cli_options *o, cluster_target *r)
{
    once_cluster_slice s;
    while (once_cluster_slice_at(r->cluster, r->slices, &s) == ONCE_OK)
        r->slices++;
    r->state = calloc(r->slices ? r->slices : 1, sizeof *r->state);
    r->since = calloc(r->slices ? r->slices : 1, sizeof *r->since);
    if (r->state == NULL || r->since == NULL) {
        fprintf(stderr, "once: out of memory\n");
        return EXIT_IO;
    }
    for (int k = 0; k < FAULT_KINDS; k++)
        r->kinds[k].last = -1;
    if (o->on_failed_slice == FAILED_SLICE_DISTINCT)
        snprintf(r->policy, sizeof r->policy,
                 "printing its lines (--on-failed-slice distinct: repeats may pass)");
    else if (o->on_failed_slice == FAILED_SLICE_DUPLICATE)
        snprintf(r->policy, sizeof r->policy,
                 "dropping its lines (--on-failed-slice duplicate: new lines may be lost)");
    else
        snprintf(r->policy, sizeof r->policy,
                 "deciding its lines by --on-failed-slice threshold:%u", o->failed_slice_threshold);
    return 0;
}

/* --cluster: the sliced filter of the options over the cluster's keys, this run one of
 * its producers (recipe_cluster_open), and the fault lines' state. */
static int open_cluster(const cli_options *o, cluster_target *r)
{
    char why[RECIPE_WHY_MAX];
    uint64_t bytes = 0;
    int code = recipe_cluster_open(o, cluster_changed, r, &r->cluster, &r->local, &r->hold_ms,
                                   &bytes, why, sizeof why);
    if (code != 0) {
        fprintf(stderr, "once: %s\n", why);
        return code;
    }
    r->sliced.filter = once_cluster_sliced(r->cluster);
    r->sliced.geometry_bytes = bytes; /* a timed slice's bytes are the server's */
    return faults_open(o, r);
}

static void cluster_report_tree_json(const once_cluster_stats *s)
{
    const once_tree_stats *t = &s->tree;
    fprintf(stderr,
            "\"structure\":\"cluster tree\",\"layout\":\"%s\","
            "\"levels\":%u,\"fanout\":%u,\"bits\":%llu,\"hashes\":%u,\"events\":%llu,"
            "\"failures\":%llu,\"commands\":%llu,\"moved\":%llu,\"ask\":%llu,"
            "\"unreachable\":%llu,\"failed_slices\":%u,\"slice_failures\":%llu,"
            "\"held\":%llu,\"held_answered\":%llu,\"held_expired\":%llu,\"hold_ms\":%llu,"
            "\"accesses\":[",
            s->layout_id, t->levels, t->fanout,
            (unsigned long long)t->bits, t->hashes, (unsigned long long)t->events,
            (unsigned long long)t->failures, (unsigned long long)s->commands,
            (unsigned long long)s->moved, (unsigned long long)s->ask,
            (unsigned long long)s->unreachable, s->failed_slices,
            (unsigned long long)s->slice_failures, (unsigned long long)s->held,
            (unsigned long long)s->held_answered, (unsigned long long)s->held_expired,
            (unsigned long long)s->hold_ms);
    report_json_counts(t->accesses, t->levels);
    fputs("],\"hits\":[", stderr);
    report_json_counts(t->hits, t->levels);
    fputs("]}\n", stderr);
}

static void cluster_report_sliced_json(const once_cluster *cluster, const once_cluster_stats *s,
                                       const run_counters *c, uint64_t bytes)
{
    const once_sliced_stats *f = &s->sliced;
    char bytes_text[24] = "null"; /* unknown */
    if (bytes != 0)
        snprintf(bytes_text, sizeof bytes_text, "%llu", (unsigned long long)bytes);
    fprintf(stderr,
            "\"input_bytes\":%llu,\"bytes\":%s,\"structure\":\"cluster\","
            "\"layout\":\"%s\",\"slicing\":\"%s\",\"slices\":%u,\"parts\":%u,"
            "\"sites\":%u,\"bits\":%llu,\"site_bits\":%llu,\"hashes\":%u,"
            "\"messages\":%llu,\"messages_per_event\":%.4f,\"failed_messages\":%llu,"
            "\"fill\":%.6f,\"failed_fraction\":%.6f,\"fp_estimate\":%.6g,"
            "\"fn_estimate\":%.6g,\"claims\":%s,\"local_hits\":%llu,\"nodes\":%u,"
            "\"failed_slices\":%u,\"slice_failures\":%llu,\"failed_events\":%llu,"
            "\"held\":%llu,\"held_answered\":%llu,\"held_expired\":%llu,\"hold_ms\":%llu,"
            "\"missing_answers\":%llu,\"commands\":%llu,"
            "\"moved\":%llu,\"ask\":%llu,\"retries\":%llu,\"unreachable\":%llu,"
            "\"reconnects\":%llu,\"waits\":%llu,\"waits_short\":%llu,\"window\":%llu,"
            "\"window_unit\":\"%s\",\"count\":%llu,\"clock_failures\":%llu,"
            "\"slice_filter\":\"%s\",\"slice_items\":%llu,\"lag_ms\":%llu,\"owed\":%llu,"
            "\"backfilled\":%llu,\"given_up\":%llu,\"node_loads\":[",
            (unsigned long long)c->input_bytes, bytes_text, s->layout_id,
            once_slicing_name(f->slicing), f->slices, f->parts, f->sites,
            (unsigned long long)f->bits, (unsigned long long)f->slice_bits, f->hashes,
            (unsigned long long)f->messages, report_finite(f->messages_per_event),
            (unsigned long long)f->failed_messages, report_finite(f->fill),
            report_finite(f->failed_fraction), report_finite(f->fp_estimate),
            report_finite(f->fn_estimate), s->claims ? "true" : "false",
            (unsigned long long)s->local_hits, s->nodes, s->failed_slices,
            (unsigned long long)s->slice_failures, (unsigned long long)s->failed_events,
            (unsigned long long)s->held, (unsigned long long)s->held_answered,
            (unsigned long long)s->held_expired, (unsigned long long)s->hold_ms,
            (unsigned long long)s->missing_answers, (unsigned long long)s->commands,
            (unsigned long long)s->moved, (unsigned long long)s->ask,
            (unsigned long long)s->retries, (unsigned long long)s->unreachable,
            (unsigned long long)s->reconnects, (unsigned long long)s->waits,
            (unsigned long long)s->waits_short,
            (unsigned long long)(f->window_ms ? f->window_ms : f->window_events),
            f->window_ms ? "ms" : f->window_events ? "events" : "none",
            (unsigned long long)f->count, (unsigned long long)f->clock_failures,
            s->slice_filter != 0 ? once_type_name(s->slice_filter) : "cells",
            (unsigned long long)s->slice_items, (unsigned long long)s->lag_ms,
            (unsigned long long)s->owed, (unsigned long long)s->backfilled,
            (unsigned long long)s->given_up);
    for (uint32_t i = 0; i < s->nodes; i++) {
        once_cluster_node n;
        if (once_cluster_node_at(cluster, i, &n) == ONCE_OK)
            fprintf(stderr,
                    "%s{\"node\":\"%s\",\"up\":%s,\"slices\":%u,\"messages\":%llu}",
                    i ? "," : "", n.address, n.up ? "true" : "false", n.slices,
                    (unsigned long long)n.messages);
    }
    fputs("]}\n", stderr);
}

static void cluster_report_human(const cluster_target *ct, const once_cluster_stats *s,
                                 const run_summary *sum)
{
    const once_cluster *cluster = ct->cluster;
    const once_sliced_stats *f = &s->sliced;
    uint64_t events = f->events;
    if (s->is_tree) {
        const once_tree_stats *t = &s->tree;
        events = t->events;
        report_counts(sum);
        fprintf(stderr,
                "once: Bloom tree of %u levels, fanout %u, nodes of %llu bits, k=%u: its "
                "internal nodes in the cluster, this run's leaf here\n",
                t->levels, t->fanout, (unsigned long long)t->bits, t->hashes);
        fputs("once: requests per level, root first (hits):", stderr);
        for (uint32_t l = 0; l < t->levels; l++)
            fprintf(stderr, " %llu (%llu)", (unsigned long long)t->accesses[l],
                    (unsigned long long)t->hits[l]);
        fputc('\n', stderr);
    } else if (s->slice_filter != 0) {
        report_counts(sum);
        char size[32], lag[48] = "";
        report_size(size, sizeof size, f->bytes);
        if (s->lag_ms != 0)
            snprintf(lag, sizeof lag, " (lag %.3f s)", (double)s->lag_ms / 1000.0);
        fprintf(stderr,
                "once: %u whole slices, each a %s filter%s; %llu keys held in %s (as the "
                "slices last answered); %.3f messages per event, max load %llu events on one "
                "slice\n",
                f->slices, once_type_name(s->slice_filter), lag,
                (unsigned long long)s->slice_items, size, f->messages_per_event,
                (unsigned long long)f->max_load);
    } else {
        target_sliced_report(&ct->sliced, STATS_HUMAN, sum);
    }
    fprintf(stderr,
            "once: cluster layout %s, %u masters; %llu commands, %.4f an event (%llu MOVED, "
            "%llu ASK, %llu retried, %llu unreachable, %llu reconnects)%s\n",
            s->layout_id, s->nodes, (unsigned long long)s->commands,
            events ? (double)s->commands / (double)events : 0.0, (unsigned long long)s->moved,
            (unsigned long long)s->ask, (unsigned long long)s->retries,
            (unsigned long long)s->unreachable, (unsigned long long)s->reconnects,
            s->claims ? "; events claimed at their home slices" : "");
    if (s->local_hits)
        fprintf(stderr, "once: %llu repeats answered by the local filter, with no message\n",
                (unsigned long long)s->local_hits);
    if (s->waits)
        fprintf(stderr, "once: %llu WAITs, %llu of them with fewer replicas than asked\n",
                (unsigned long long)s->waits, (unsigned long long)s->waits_short);
    /* A failover shows after the fact: the holds, and what the policy decided. */
    if (s->held)
        fprintf(stderr,
                "once: failover hold: %llu commands held for %.3f s in all, %llu answered "
                "after their hold, %llu given up when it ran out\n",
                (unsigned long long)s->held, (double)s->hold_ms / 1000.0,
                (unsigned long long)s->held_answered, (unsigned long long)s->held_expired);
    fprintf(stderr,
            "once: %llu slice %s over the run, %u failed now (%llu answers of a node without "
            "its slice); %llu %s decided by the failure policy\n",
            (unsigned long long)s->slice_failures, s->slice_failures == 1 ? "failure" : "failures",
            s->failed_slices, (unsigned long long)s->missing_answers,
            (unsigned long long)s->failed_events, s->failed_events == 1 ? "event" : "events");
    if (s->owed + s->backfilled + s->given_up != 0)
        fprintf(stderr,
                "once: of the lines printed for failed slices, %llu reached their slice once it "
                "answered again, %llu still owed to it, %llu given up: past what a producer "
                "keeps, or refused by their slice (their repeats may be printed again; slices "
                "of cells count a line once a slice it missed)\n",
                (unsigned long long)s->backfilled, (unsigned long long)s->owed,
                (unsigned long long)s->given_up);
    if (!s->is_tree && s->slice_filter == 0) /* whole slices have no positions to fail */
        fprintf(stderr,
                "once: failed fraction %.3f now: false-positive rate %.3g, false-negative "
                "rate %.3g\n",
                f->failed_fraction, f->fp_estimate, f->fn_estimate);
    for (uint32_t i = 0; i < s->nodes; i++) {
        once_cluster_node n;
        if (once_cluster_node_at(cluster, i, &n) == ONCE_OK)
            fprintf(stderr, "once: node %s: %s%s%s, %u slices, %llu messages\n", n.address,
                    n.up ? "up" : "down", !n.up && n.why[0] ? ", " : "",
                    !n.up ? n.why : "", n.slices, (unsigned long long)n.messages);
    }
}

/* The fault lines the rate limit kept back, counted once: before the stats (whose JSON
 * is the last line of stderr) or at the end. */
static void say_faults_not_shown(cluster_target *ct)
{
    uint64_t suppressed = ct->kinds[FAULT_FAILED].suppressed + ct->kinds[FAULT_ANSWERS].suppressed;
    if (suppressed)
        fprintf(stderr, "once: %llu more slice fault %s not shown (at most one a second)\n",
                (unsigned long long)suppressed, suppressed == 1 ? "line" : "lines");
    ct->kinds[FAULT_FAILED].suppressed = ct->kinds[FAULT_ANSWERS].suppressed = 0;
}

static uint64_t cluster_bytes(const target *t)
{
    const cluster_target *ct = t->impl;
    once_cluster_stats s;
    if (ct->sliced.filter == NULL && once_cluster_get_stats(ct->cluster, &s) == ONCE_OK)
        return s.sliced.bytes; /* whole slices, as they last answered (a tree: 0) */
    return target_sliced_bytes(&ct->sliced);
}

static void cluster_report(const target *t, stats_mode mode, const run_summary *sum)
{
    cluster_target *ct = t->impl; /* the target is the run's; its fault counts are ours */
    say_faults_not_shown(ct);
    once_cluster_flush(ct->cluster); /* what is owed counts as sent, or as still owed */
    const once_cluster *cluster = ct->cluster;
    once_cluster_stats s;
    if (once_cluster_get_stats(cluster, &s) != ONCE_OK)
        return;
    const run_counters *c = sum->c;
    if (mode != STATS_JSON) {
        cluster_report_human(ct, &s, sum);
        return;
    }
    /* What the run read and answered, then the filter's. */
    fprintf(stderr,
            "{\"lines\":%llu,\"distinct\":%llu,\"duplicates\":%llu,\"seconds\":%.6f%s,"
            "\"lines_per_second\":%.1f,",
            (unsigned long long)c->lines, (unsigned long long)c->distinct,
            (unsigned long long)c->duplicates, report_finite(c->seconds), sum->phases,
            report_finite(sum->rate));
    if (s.is_tree)
        cluster_report_tree_json(&s);
    else
        cluster_report_sliced_json(cluster, &s, c, cluster_bytes(t));
}

/* The cluster answers every key of the batch or, on a refusal, none that the run keeps
 * (nothing of it is saved here); the clock takes the batch's times either way, as the
 * lines before the refused one were judged by it. */
static once_status cluster_answer(target *t, const once_key *keys, const once_digest *digests,
                                  const uint64_t *times, size_t n, uint8_t *seen, size_t *done)
{
    (void)digests;
    (void)times;
    cluster_target *ct = t->impl;
    once_status st = once_cluster_test_and_add_batch(ct->cluster, keys, n, seen);
    look_at_slices(ct);
    *done = st == ONCE_OK ? n : 0;
    for (size_t i = 0; i < n; i++)
        if (!ct->clock_started || keys[i].time_ms > ct->clock) {
            ct->clock = keys[i].time_ms;
            ct->clock_started = true;
        }
    return st;
}

static void cluster_clock(const target *t, uint64_t *clock_ms, bool *started)
{
    const cluster_target *ct = t->impl;
    *clock_ms = ct->clock;
    *started = ct->clock_started;
}

static void cluster_close(target *t)
{
    cluster_target *ct = t->impl;
    say_faults_not_shown(ct);
    once_cluster_close(ct->cluster); /* and its sliced filter */
    ct->cluster = NULL;
    once_free(ct->local);
    free(ct->state);
    free(ct->since);
}

static const target_ops cluster_ops = {
    cluster_answer,  cluster_clock,  target_time_step,
    cluster_bytes,   target_sliced_warn_overfull, target_sliced_report_full,
    cluster_report,  target_no_card, target_no_save,
    target_no_executor, cluster_close,
};

int target_cluster_open(target *t, const cli_options *o)
{
    cluster_target *ct = target_start(t, &cluster_ops, sizeof *ct);
    if (ct == NULL)
        return EXIT_IO;
    int code = open_cluster(o, ct);
    if (code == 0)
        target_sites_opened(t, &ct->sliced);
    /* Whole slices that grow warn of nothing: a fixed one passes its rate past
     * capacity as one filter does. */
    if (code == 0 && o->whole)
        ct->sliced.fixed_size = once_structure_of(o->type)->kind == ONCE_KIND_STATIC;
    return code;
}
