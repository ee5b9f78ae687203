/*
 * report.c - the progress line and the end-of-run summary.
 *
 * JSON is written by hand: the fields are numbers and a fixed structure name, and a
 * non-finite number (which JSON cannot carry) is written as 0.  The seed is a string:
 * a 64-bit integer above 2^53 does not survive readers that hold numbers as doubles.
 */
#include "report.h"

#include "once_math.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double finite_or_zero(double x)
{
    return isfinite(x) ? x : 0.0;
}

/* On a terminal the progress line is rewritten in place; anywhere else (a file, a
 * pipe to a log) each update is a plain line, with no terminal escapes in it. */
static int progress_terminal = -1;

static bool progress_in_place(void)
{
    if (progress_terminal < 0)
        progress_terminal = isatty(STDERR_FILENO);
    return progress_terminal == 1;
}

void report_progress(const run_counters *c, uint64_t bytes, double elapsed)
{
    double rate = elapsed > 0 ? (double)c->lines / elapsed : 0.0;
    bool in_place = progress_in_place();
    fprintf(stderr, "%sonce: %llu lines, %.2f M lines/s, %llu distinct, %.1f MiB%s",
            in_place ? "\r\033[K" : "", (unsigned long long)c->lines, rate / 1e6,
            (unsigned long long)c->distinct, (double)bytes / (1024.0 * 1024.0),
            in_place ? "" : "\n");
    fflush(stderr);
}

void report_progress_done(void)
{
    if (!progress_in_place())
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* A JSON number, or null where there is none (JSON has no infinity). */
static void json_number_or_null(char *buf, size_t size, bool known, double x)
{
    if (known && isfinite(x))
        snprintf(buf, size, "%.0f", x);
    else
        snprintf(buf, size, "null");
}

/* The human summary's first line: what the run read and answered. */
/* The phases' names in --stats=json, and in words. */
static const char *const phase_key[PHASES] = {"read", "keys", "hash", "decide", "write"};
static const char *const phase_words[PHASES] = {"reading", "keys and times", "hashing",
                                                "deciding", "writing"};

/* ,"threads":T,"phases":{"read":s,...} for the JSON summaries (null: not timed apart). */
static void json_phases(const run_counters *c, char *out, size_t size)
{
    int n = snprintf(out, size, ",\"threads\":%u,\"phases\":{", c->threads);
    for (int i = 0; i < PHASES && n > 0 && (size_t)n < size; i++) {
        if (c->phase_seconds[i] < 0)
            n += snprintf(out + n, size - (size_t)n, "%s\"%s\":null", i ? "," : "",
                          phase_key[i]);
        else
            n += snprintf(out + n, size - (size_t)n, "%s\"%s\":%.6f", i ? "," : "",
                          phase_key[i], finite_or_zero(c->phase_seconds[i]));
    }
    if (n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, "}");
}

/* Where the time went, phase by phase, so that a user can see what bounds the run. */
static void report_phases(const run_counters *c)
{
    fprintf(stderr, "once: %u %s; time ", c->threads, c->threads == 1 ? "thread" : "threads");
    for (int i = 0, shown = 0; i < PHASES; i++) {
        if (c->phase_seconds[i] < 0)
            continue;
        bool hashing_within = i == PHASE_DECIDE && c->phase_seconds[PHASE_HASH] < 0;
        fprintf(stderr, "%s%s%s %.3f s", shown++ ? ", " : "", phase_words[i],
                hashing_within ? " (with hashing)" : "", c->phase_seconds[i]);
    }
    fprintf(stderr, "\n");
}

static void report_counts(const run_counters *c, double rate)
{
    fprintf(stderr, "once: %llu %s, %llu distinct, %llu %s in %.3f s (%.2f M lines/s)\n",
            (unsigned long long)c->lines, c->lines == 1 ? "line" : "lines",
            (unsigned long long)c->distinct, (unsigned long long)c->duplicates,
            c->duplicates == 1 ? "duplicate" : "duplicates", c->seconds, rate / 1e6);
    if (c->bad_time)
        fprintf(stderr, "once: %llu %s a bad time (unreadable, before 1970, or too far ahead)\n",
                (unsigned long long)c->bad_time, c->bad_time == 1 ? "line had" : "lines had");
    if (c->late)
        fprintf(stderr,
                "once: %llu %s late (older than the latest event time minus the span)\n",
                (unsigned long long)c->late, c->late == 1 ? "line was" : "lines were");
    report_phases(c);
}

void report_stats(stats_mode mode, const run_counters *c, const once_filter *filter)
{
    once_stats s;
    if (mode == STATS_NONE || once_get_stats(filter, &s) != ONCE_OK)
        return;
    /* Distinct keys in the filter, from its cells, with a 90% interval. */
    once_cardinality card;
    /* Time 0: a window counts as of the latest event it saw (see card.c). */
    bool card_known = once_estimate_cardinality(filter, 0, 0.9, &card) == ONCE_OK;
    char card_estimate[32], card_low[32], card_high[32];
    json_number_or_null(card_estimate, sizeof card_estimate, card_known, card.estimate);
    json_number_or_null(card_low, sizeof card_low, card_known, card.low);
    json_number_or_null(card_high, sizeof card_high, card_known, card.high);
    double rate = c->seconds > 0 ? (double)c->lines / c->seconds : 0.0;
    /* A window holds the keys of its window, not every key it was given: its keys are
     * the estimate in the window.  Bits per key are over the keys held or the design
     * count, whichever is larger, so that a near-empty filter reports what it spends
     * a key at its design size rather than its whole memory over a few keys (a time
     * window's capacity is only a first guess: its keys held are its measure). */
    bool windowed = s.window != 0;
    double held = windowed ? (card_known ? card.estimate : 0.0) : (double)s.items;
    double design = s.span_ms ? 0.0 : windowed ? (double)s.window : (double)s.capacity;
    double per = held > design ? held : design;
    double bits_per_key = per > 0 ? (double)s.bytes * 8.0 / per : 0.0;
    char window_keys[32];
    json_number_or_null(window_keys, sizeof window_keys, windowed && card_known, card.estimate);
    if (mode == STATS_JSON) {
        char phases[256];
        json_phases(c, phases, sizeof phases);
        fprintf(stderr,
                "{\"lines\":%llu,\"distinct\":%llu,\"duplicates\":%llu,\"bytes\":%llu,"
                "\"bits_per_key\":%.4f,\"fpr_estimate\":%.6g,\"seconds\":%.6f%s,"
                "\"lines_per_second\":%.1f,\"input_bytes\":%llu,\"structure\":\"%s\","
                "\"items\":%llu,\"capacity\":%llu,\"error\":%.6g,\"hashes\":%u,"
                "\"fill_ratio\":%.6f,\"seed\":\"%llu\",\"window\":%llu,\"slack\":%llu,"
                "\"k\":%u,\"l\":%u,\"slices\":%u,\"window_unit\":\"%s\",\"bad_time\":%llu,"
                "\"late\":%llu,\"filters\":%u,\"cardinality_estimate\":%s,\"cardinality_low\":%s,"
                "\"cardinality_high\":%s,\"window_keys\":%s,\"format\":%u,\"probe\":\"%s\","
                "\"shards\":%u}\n",
                (unsigned long long)c->lines, (unsigned long long)c->distinct,
                (unsigned long long)c->duplicates, (unsigned long long)s.bytes,
                finite_or_zero(bits_per_key), finite_or_zero(s.fpr_estimate),
                finite_or_zero(c->seconds), phases, finite_or_zero(rate),
                (unsigned long long)c->input_bytes, s.structure, (unsigned long long)s.items,
                (unsigned long long)s.capacity, finite_or_zero(s.error), s.hashes,
                finite_or_zero(s.fill_ratio), (unsigned long long)s.seed,
                (unsigned long long)s.window, (unsigned long long)s.slack, s.hashes, s.age_slices,
                s.slices, s.span_ms ? "ms" : s.window ? "events" : "none",
                (unsigned long long)c->bad_time, (unsigned long long)c->late, s.filters,
                card_estimate, card_low, card_high, window_keys, s.format, s.probe,
                s.shards ? s.shards : 1);
        return;
    }
    report_counts(c, rate);
    char held_text[96];
    if (windowed)
        snprintf(held_text, sizeof held_text, "%llu keys added, about %s in the window",
                 (unsigned long long)s.items, window_keys);
    else
        snprintf(held_text, sizeof held_text, "%llu %s held", (unsigned long long)s.items,
                 s.items == 1 ? "key" : "keys");
    char in_shards[32] = "";
    if (s.shards > 1)
        snprintf(in_shards, sizeof in_shards, " in %u shards", s.shards);
    fprintf(stderr,
            "once: %s filter%s, %.2f MiB, %s (capacity %llu%s at error %g), "
            "%.2f bits/key, k=%u, fill %.3f, estimated false-positive rate %.3g\n",
            s.structure, in_shards, (double)s.bytes / (1024.0 * 1024.0), held_text,
            (unsigned long long)(s.span_ms || !windowed ? s.capacity : s.window),
            s.span_ms ? " a span" : "", s.error, bits_per_key, s.hashes, s.fill_ratio,
            s.fpr_estimate);
    if (s.format != ONCE_FORMAT_VERSION)
        fprintf(stderr,
                "once: the state was saved in format %u: its keys are placed by the %s probe of "
                "that format, which it keeps (new filters write format %u)\n",
                s.format, s.probe, ONCE_FORMAT_VERSION);
    if (s.span_ms) {
        char layout[64]; /* what the structure is made of now */
        if (s.type == ONCE_TLBF)
            snprintf(layout, sizeof layout, "k=%u l=%u, %u slices now", s.hashes, s.age_slices,
                     s.slices);
        else
            snprintf(layout, sizeof layout, "%u %s now", s.filters,
                     s.type == ONCE_TAGGED ? (s.filters == 1 ? "table" : "tables")
                                           : (s.filters == 1 ? "sub-filter" : "sub-filters"));
        fprintf(stderr,
                "once: span %.3f s (slack %.3f s more), %s, peak false-positive rate %.3g\n",
                (double)s.span_ms / 1000.0, (double)s.slack / 1000.0, layout, s.design_fpr);
    }
    if (card_known)
        fprintf(stderr, "once: about %s distinct keys in the filter (90%%: %s-%s)\n", card_estimate,
                card_low, isfinite(card.high) ? card_high : "unbounded");
    if (s.filters > 1 && s.type == ONCE_SCALABLE)
        fprintf(stderr, "once: %u sub-filters, each %ux the keys of the one before\n", s.filters,
                s.expansion);
    if (s.window && !s.span_ms)
        fprintf(stderr,
                "once: window %llu keys (slack %llu more), k=%u l=%u (%u slices of %llu keys a "
                "generation), peak false-positive rate %.3g\n",
                (unsigned long long)s.window, (unsigned long long)s.slack, s.hashes, s.age_slices,
                s.slices, (unsigned long long)s.generation, s.design_fpr);
}

/* A JSON array's numbers, comma separated, on stderr. */
static void json_counts(const uint64_t *values, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        fprintf(stderr, "%s%llu", i ? "," : "", (unsigned long long)values[i]);
}

void report_sliced_stats(stats_mode mode, const run_counters *c, const once_sliced *filter)
{
    once_sliced_stats s;
    if (mode == STATS_NONE || once_sliced_get_stats(filter, &s) != ONCE_OK)
        return;
    uint64_t *loads = calloc(s.sites, sizeof *loads);
    if (loads == NULL || once_sliced_loads(filter, loads, s.sites) != ONCE_OK) {
        free(loads);
        return;
    }
    double rate = c->seconds > 0 ? (double)c->lines / c->seconds : 0.0;
    /* The filter's live estimate, from the cells its sites hold set (section 3.2). */
    double fpr = s.fp_estimate;
    uint64_t bytes = s.bytes;
    if (mode == STATS_JSON) {
        char phases[256];
        json_phases(c, phases, sizeof phases);
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
                finite_or_zero(c->seconds), phases, finite_or_zero(rate),
                (unsigned long long)c->input_bytes, once_slicing_name(s.slicing),
                s.slices, s.parts, s.sites, (unsigned long long)s.bits,
                (unsigned long long)s.slice_bits, s.hashes, finite_or_zero(fpr),
                (unsigned long long)s.messages, finite_or_zero(s.messages_per_event),
                finite_or_zero(s.fairness), (unsigned long long)s.max_load, s.filters,
                finite_or_zero(s.fill),
                (unsigned long long)(s.window_ms ? s.window_ms : s.window_events),
                s.window_ms ? "ms" : s.window_events ? "events" : "none",
                (unsigned long long)c->bad_time, (unsigned long long)c->late);
        json_counts(loads, s.sites);
        fputs("]}\n", stderr);
        free(loads);
        return;
    }
    report_counts(c, rate);
    fprintf(stderr,
            "once: standard filter of %llu bits, k=%u, sliced %s over %u sites of %llu bits "
            "(%.2f MiB), estimated false-positive rate %.3g\n",
            (unsigned long long)s.bits, s.hashes, once_slicing_name(s.slicing),
            s.sites, (unsigned long long)s.slice_bits, (double)bytes / (1024.0 * 1024.0), fpr);
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

void report_cluster_stats(stats_mode mode, const run_counters *c, const once_cluster *cluster)
{
    once_cluster_stats s;
    if (mode == STATS_NONE || once_cluster_get_stats(cluster, &s) != ONCE_OK)
        return;
    const once_sliced_stats *f = &s.sliced;
    double rate = c->seconds > 0 ? (double)c->lines / c->seconds : 0.0;
    char phases[256];
    json_phases(c, phases, sizeof phases);
    if (mode == STATS_JSON) /* what the run read and answered, then the filter's */
        fprintf(stderr,
                "{\"lines\":%llu,\"distinct\":%llu,\"duplicates\":%llu,\"seconds\":%.6f%s,"
                "\"lines_per_second\":%.1f,",
                (unsigned long long)c->lines, (unsigned long long)c->distinct,
                (unsigned long long)c->duplicates, finite_or_zero(c->seconds), phases,
                finite_or_zero(rate));
    if (mode == STATS_JSON && s.is_tree) {
        const once_tree_stats *t = &s.tree;
        fprintf(stderr,
                "\"structure\":\"cluster tree\",\"layout\":\"%s\","
                "\"levels\":%u,\"fanout\":%u,\"bits\":%llu,\"hashes\":%u,\"events\":%llu,"
                "\"failures\":%llu,\"commands\":%llu,\"moved\":%llu,\"ask\":%llu,"
                "\"unreachable\":%llu,\"failed_slices\":%u,\"accesses\":[",
                s.layout_id, t->levels, t->fanout,
                (unsigned long long)t->bits, t->hashes, (unsigned long long)t->events,
                (unsigned long long)t->failures, (unsigned long long)s.commands,
                (unsigned long long)s.moved, (unsigned long long)s.ask,
                (unsigned long long)s.unreachable, s.failed_slices);
        json_counts(t->accesses, t->levels);
        fputs("],\"hits\":[", stderr);
        json_counts(t->hits, t->levels);
        fputs("]}\n", stderr);
        return;
    }
    if (mode == STATS_JSON) {
        fprintf(stderr,
                "\"input_bytes\":%llu,\"structure\":\"cluster\","
                "\"layout\":\"%s\",\"slicing\":\"%s\",\"slices\":%u,\"parts\":%u,"
                "\"sites\":%u,\"bits\":%llu,\"site_bits\":%llu,\"hashes\":%u,"
                "\"messages\":%llu,\"messages_per_event\":%.4f,\"failed_messages\":%llu,"
                "\"fill\":%.6f,\"failed_fraction\":%.6f,\"fp_estimate\":%.6g,"
                "\"fn_estimate\":%.6g,\"claims\":%s,\"local_hits\":%llu,\"nodes\":%u,"
                "\"failed_slices\":%u,\"missing_answers\":%llu,\"commands\":%llu,"
                "\"moved\":%llu,\"ask\":%llu,\"retries\":%llu,\"unreachable\":%llu,"
                "\"reconnects\":%llu,\"waits\":%llu,\"waits_short\":%llu,\"window\":%llu,"
                "\"window_unit\":\"%s\",\"count\":%llu,\"clock_failures\":%llu,\"node_loads\":[",
                (unsigned long long)c->input_bytes, s.layout_id,
                once_slicing_name(f->slicing), f->slices, f->parts, f->sites,
                (unsigned long long)f->bits, (unsigned long long)f->slice_bits, f->hashes,
                (unsigned long long)f->messages, finite_or_zero(f->messages_per_event),
                (unsigned long long)f->failed_messages, finite_or_zero(f->fill),
                finite_or_zero(f->failed_fraction), finite_or_zero(f->fp_estimate),
                finite_or_zero(f->fn_estimate), s.claims ? "true" : "false",
                (unsigned long long)s.local_hits, s.nodes, s.failed_slices,
                (unsigned long long)s.missing_answers, (unsigned long long)s.commands,
                (unsigned long long)s.moved, (unsigned long long)s.ask,
                (unsigned long long)s.retries, (unsigned long long)s.unreachable,
                (unsigned long long)s.reconnects, (unsigned long long)s.waits,
                (unsigned long long)s.waits_short,
                (unsigned long long)(f->window_ms ? f->window_ms : f->window_events),
                f->window_ms ? "ms" : f->window_events ? "events" : "none",
                (unsigned long long)f->count, (unsigned long long)f->clock_failures);
        for (uint32_t i = 0; i < s.nodes; i++) {
            once_cluster_node n;
            if (once_cluster_node_at(cluster, i, &n) == ONCE_OK)
                fprintf(stderr,
                        "%s{\"node\":\"%s\",\"up\":%s,\"slices\":%u,\"messages\":%llu}",
                        i ? "," : "", n.address, n.up ? "true" : "false", n.slices,
                        (unsigned long long)n.messages);
        }
        fputs("]}\n", stderr);
        return;
    }
    uint64_t events = f->events;
    if (s.is_tree) {
        const once_tree_stats *t = &s.tree;
        events = t->events;
        report_counts(c, rate);
        fprintf(stderr,
                "once: Bloom tree of %u levels, fanout %u, nodes of %llu bits, k=%u: its "
                "internal nodes in the cluster, this run's leaf here\n",
                t->levels, t->fanout, (unsigned long long)t->bits, t->hashes);
        fputs("once: requests per level, root first (hits):", stderr);
        for (uint32_t l = 0; l < t->levels; l++)
            fprintf(stderr, " %llu (%llu)", (unsigned long long)t->accesses[l],
                    (unsigned long long)t->hits[l]);
        fputc('\n', stderr);
    } else {
        report_sliced_stats(mode, c, once_cluster_sliced(cluster));
    }
    fprintf(stderr,
            "once: cluster layout %s, %u masters; %llu commands, %.4f an event (%llu MOVED, "
            "%llu ASK, %llu retried, %llu unreachable, %llu reconnects)%s\n",
            s.layout_id, s.nodes, (unsigned long long)s.commands,
            events ? (double)s.commands / (double)events : 0.0, (unsigned long long)s.moved,
            (unsigned long long)s.ask, (unsigned long long)s.retries,
            (unsigned long long)s.unreachable, (unsigned long long)s.reconnects,
            s.claims ? "; events claimed at their home slices" : "");
    if (s.local_hits)
        fprintf(stderr, "once: %llu repeats answered by the local filter, with no message\n",
                (unsigned long long)s.local_hits);
    if (s.waits)
        fprintf(stderr, "once: %llu WAITs, %llu of them with fewer replicas than asked\n",
                (unsigned long long)s.waits, (unsigned long long)s.waits_short);
    fprintf(stderr,
            "once: %u failed slices (%llu answers of a node without its slice); failed "
            "fraction %.3f: false-positive rate %.3g, false-negative rate %.3g now\n",
            s.failed_slices, (unsigned long long)s.missing_answers, f->failed_fraction,
            f->fp_estimate, f->fn_estimate);
    for (uint32_t i = 0; i < s.nodes; i++) {
        once_cluster_node n;
        if (once_cluster_node_at(cluster, i, &n) == ONCE_OK)
            fprintf(stderr, "once: node %s: %s, %u slices, %llu messages\n", n.address,
                    n.up ? "up" : "down", n.slices, (unsigned long long)n.messages);
    }
}

/* ------------------------------------------------------- memory caps */

#define KIB 1024.0
#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * 1024.0 * 1024.0)

/* A size the user gave (--max-memory takes K, M and G), exactly: "3 MiB", "1500 bytes". */
static void format_cap(char *buf, size_t size, uint64_t bytes)
{
    static const struct {
        uint64_t unit;
        const char *name;
    } units[] = {{1u << 30, "GiB"}, {1u << 20, "MiB"}, {1u << 10, "KiB"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (bytes % units[i].unit == 0) {
            snprintf(buf, size, "%llu %s", (unsigned long long)(bytes / units[i].unit),
                     units[i].name);
            return;
        }
    snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
}

/* A size a structure needs, to a tenth of its unit and rounded up, so that a need past
 * a cap never reads as the cap itself. */
static void format_need(char *buf, size_t size, uint64_t bytes)
{
    double x = (double)bytes;
    const char *unit = x >= GIB ? "GiB" : x >= MIB ? "MiB" : "KiB";
    double scaled = x / (x >= GIB ? GIB : x >= MIB ? MIB : KIB);
    snprintf(buf, size, "%.1f %s", ceil(scaled * 10.0) / 10.0, unit);
}

/* The scalable filter's next sub-filter, planned as the library plans it: the chain's
 * capacities grow by `expansion` from the first, n0, and the errors shrink by the
 * tightening from error (1 - r), r being the library's default (the CLI never sets
 * another; see once_config.tightening).  Returns false where the library's planner
 * refuses it, which is then what stops the growth. */
#define SCALABLE_TIGHTENING 0.5
static bool scalable_next(const once_stats *s, uint64_t *capacity, double *error, uint64_t *bytes)
{
    if (s->expansion < 1 || s->filters == 0)
        return false;
    /* capacity = n0 (1 + e + ... + e^(filters-1)) */
    uint64_t terms = 0, power = 1;
    for (uint32_t i = 0; i < s->filters; i++) {
        terms += power;
        if (terms > s->capacity)
            return false;
        power *= s->expansion;
    }
    uint64_t first = s->capacity / terms;
    if (first == 0 || first > UINT64_MAX / power)
        return false;
    *capacity = first * power;
    *error = s->error * (1.0 - SCALABLE_TIGHTENING) * pow(SCALABLE_TIGHTENING, s->filters);
    uint64_t bits;
    uint32_t hashes;
    if (once_plan(ONCE_BLOCKED, *capacity, *error, &bits, &hashes) != ONCE_OK)
        return false;
    /* What such a filter holds, exactly as the cap counts it (its bits if it cannot be
     * built here). */
    once_filter *probe = NULL;
    if (once_create_with_geometry(&probe, ONCE_BLOCKED, bits, hashes) == ONCE_OK) {
        *bytes = once_bytes(probe);
        once_free(probe);
    } else {
        *bytes = bits / 8;
    }
    return true;
}

void report_full(const char *input, uint64_t line, const once_filter *filter,
                 uint64_t max_memory, bool has_state_file)
{
    once_stats s;
    if (once_get_stats(filter, &s) != ONCE_OK) {
        fprintf(stderr, "once: %s: the filter is full; stopping before line %llu is answered\n",
                input, (unsigned long long)line);
        return;
    }
    char held[32], cap[32], need[32], more[32];
    format_need(held, sizeof held, s.bytes);
    format_cap(cap, sizeof cap, max_memory);
    fprintf(stderr, "once: %s: ", input);
    if (s.type == ONCE_SCALABLE) {
        uint64_t next_capacity = 0, next_bytes = 0;
        double next_error = 0.0;
        bool planned = scalable_next(&s, &next_capacity, &next_error, &next_bytes);
        if (planned && max_memory != 0 && s.bytes + next_bytes > max_memory) {
            format_need(need, sizeof need, s.bytes + next_bytes);
            format_need(more, sizeof more, next_bytes);
            fprintf(stderr,
                    "the scalable filter needs %s to grow past %llu keys (%s held, %s more "
                    "for its next sub-filter, of %llu keys), more than the --max-memory cap "
                    "of %s",
                    need, (unsigned long long)s.capacity, held, more,
                    (unsigned long long)next_capacity, cap);
        } else if (planned) {
            format_need(more, sizeof more, next_bytes);
            fprintf(stderr,
                    "the scalable filter cannot grow past %llu keys in %u sub-filters: its "
                    "next, of %llu keys at error %.3g (%s more), is past the library's limits%s "
                    "(a larger --capacity grows less)",
                    (unsigned long long)s.capacity, s.filters, (unsigned long long)next_capacity,
                    next_error, more,
                    has_state_file ? " or the memory cap saved in the state file" : "");
        } else {
            fprintf(stderr,
                    "the scalable filter cannot grow past %llu keys in %u sub-filters: its "
                    "next is past the library's limits (a larger --capacity grows less)",
                    (unsigned long long)s.capacity, s.filters);
        }
    } else if (s.span_ms) {
        if (max_memory != 0)
            fprintf(stderr,
                    "the %s time window holds %s and needs more for the keys of its span, "
                    "past the --max-memory cap of %s",
                    s.structure, held, cap);
        else
            fprintf(stderr,
                    "the %s time window holds %s and needs more for the keys of its span, "
                    "past its memory cap (--max-memory; 1G by default)",
                    s.structure, held);
    } else {
        fprintf(stderr, "the %s filter holds %s and cannot take more keys within its limits",
                s.structure, held);
    }
    fprintf(stderr, "; stopping before line %llu is answered\n", (unsigned long long)line);
}

bool report_cap_at_creation(const once_config *config)
{
    once_config uncapped = *config;
    uncapped.max_bytes = 0; /* the structure's default, none for the scalable filter */
    once_filter *probe = NULL;
    if (config->max_bytes == 0 || once_create(&probe, &uncapped) != ONCE_OK)
        return false;
    uint64_t needs = once_bytes(probe);
    once_free(probe);
    if (needs <= config->max_bytes)
        return false;
    char need[32], cap[32];
    format_need(need, sizeof need, needs);
    format_cap(cap, sizeof cap, config->max_bytes);
    if (config->type == ONCE_SCALABLE)
        fprintf(stderr,
                "once: the scalable filter's first sub-filter alone needs %s, more than "
                "--max-memory %s (for --capacity %llu at --error %g)\n",
                need, cap, (unsigned long long)config->capacity, config->error);
    else
        fprintf(stderr,
                "once: the %s filter needs %s to start, more than --max-memory %s (for "
                "--capacity %llu at --error %g)\n",
                once_type_name(config->type), need, cap, (unsigned long long)config->capacity,
                config->error);
    return true;
}

void report_sliced_full(const char *input, uint64_t line, const once_sliced *filter,
                        uint64_t max_bytes)
{
    once_sliced_stats s;
    char held[32], cap[32];
    if (once_sliced_get_stats(filter, &s) != ONCE_OK) {
        fprintf(stderr, "once: %s: the filter is full; stopping before line %llu is answered\n",
                input, (unsigned long long)line);
        return;
    }
    format_cap(cap, sizeof cap, max_bytes);
    format_need(held, sizeof held, s.bytes);
    uint32_t most = 0; /* the most sub-filters a site holds */
    for (uint32_t i = 0; i < s.sites; i++) {
        once_site_info info;
        if (once_sliced_site_info(filter, i, &info) == ONCE_OK && info.filters > most)
            most = info.filters;
    }
    fprintf(stderr, "once: %s: the sliced filter holds %s in %u sub-filters over %u sites, and "
                    "a site needs another for the keys of its span, ",
            input, held, s.filters, s.sites);
    if (most >= ONCE_MEMORY_SITE_MAX_FILTERS)
        fprintf(stderr, "past the %u a site holds (a larger --capacity grows less)",
                ONCE_MEMORY_SITE_MAX_FILTERS);
    else
        fprintf(stderr, "past the memory cap of %s (--max-memory; 1 GiB by default)", cap);
    fprintf(stderr, "; stopping before line %llu is answered\n", (unsigned long long)line);
}

bool report_sliced_cap_at_creation(const once_sliced_config *config)
{
    uint64_t bits = 0, slice_bits = 0, needs = 0;
    uint32_t hashes = 0;
    if (config->max_bytes == 0 ||
        once_sliced_geometry(config, &bits, &hashes, &slice_bits) != ONCE_OK ||
        once_sliced_first_bytes(config, &needs) != ONCE_OK)
        return false;
    uint64_t sites = (uint64_t)config->slices * (config->parts ? config->parts : 1);
    if (needs <= config->max_bytes)
        return false;
    char need[32], cap[32];
    format_need(need, sizeof need, needs);
    format_cap(cap, sizeof cap, config->max_bytes);
    fprintf(stderr,
            "once: the sliced filter's first sub-filters alone need %s (%llu sites of %llu "
            "timers), more than the memory cap of %s (--max-memory; 1 GiB by default) for "
            "--capacity %llu at --error %g\n",
            need, (unsigned long long)sites, (unsigned long long)slice_bits, cap,
            (unsigned long long)config->capacity, config->error);
    return true;
}

void report_state_kept(const char *path, bool saved, uint64_t lines, uint64_t unwritten)
{
    if (!saved) {
        fprintf(stderr, "once: state not saved: '%s' is as it was before this run\n", path);
        return;
    }
    fprintf(stderr,
            "once: state saved to '%s' after %llu %s: a rerun on the rest of the input "
            "delivers none of them again\n",
            path, (unsigned long long)lines, lines == 1 ? "line" : "lines");
    if (unwritten)
        fprintf(stderr,
                "once: up to %llu %s answered last may not have reached the output (the "
                "write failed), and the state holds %s as delivered\n",
                (unsigned long long)unwritten, unwritten == 1 ? "line" : "lines",
                unwritten == 1 ? "it" : "them");
}
