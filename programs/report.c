/*
 * report.c - the progress line and the end-of-run summary.
 *
 * JSON is written by hand: the fields are numbers and a fixed structure name, and a
 * non-finite number (which JSON cannot carry) is written as 0.  The seed is a string:
 * a 64-bit integer above 2^53 does not survive readers that hold numbers as doubles.
 */
#include "report.h"
#include "target.h"

#include "once_math.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

double report_finite(double x)
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
void report_json_number(char *buf, size_t size, bool known, double x)
{
    if (known && isfinite(x))
        snprintf(buf, size, "%.0f", x);
    else
        snprintf(buf, size, "null");
}

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
                          phase_key[i], report_finite(c->phase_seconds[i]));
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

/* The human summary's first lines: what the run read and answered, and where the time
 * went. */
void report_counts(const run_summary *sum)
{
    const run_counters *c = sum->c;
    double rate = sum->rate;
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

/* The --stats summary, whatever the target: the run's figures, then the target's. */
void report_stats(stats_mode mode, const run_counters *c, const struct target *t)
{
    if (mode == STATS_NONE)
        return;
    run_summary sum = {.c = c, .rate = c->seconds > 0 ? (double)c->lines / c->seconds : 0.0};
    json_phases(c, sum.phases, sizeof sum.phases);
    t->ops->report(t, mode, &sum);
}

/* A JSON array's numbers, comma separated, on stderr. */
void report_json_counts(const uint64_t *values, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        fprintf(stderr, "%s%llu", i ? "," : "", (unsigned long long)values[i]);
}

/* ------------------------------------------------------- memory caps */

#define KIB 1024.0
#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * 1024.0 * 1024.0)

void report_size(char *buf, size_t size, uint64_t bytes)
{
    double x = (double)bytes;
    if (bytes < 1024)
        snprintf(buf, size, "%llu B", (unsigned long long)bytes);
    else if (x < MIB)
        snprintf(buf, size, "%.1f KiB", x / KIB);
    else if (x < GIB)
        snprintf(buf, size, "%.2f MiB", x / MIB);
    else
        snprintf(buf, size, "%.2f GiB", x / GIB);
}

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

bool report_cap_at_creation(const once_config *config, char *why, size_t why_len)
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
        snprintf(why, why_len,
                 "the scalable filter's first sub-filter alone needs %s, more than "
                 "--max-memory %s (for --capacity %llu at --error %g)",
                 need, cap, (unsigned long long)config->capacity, config->error);
    else
        snprintf(why, why_len,
                 "the %s filter needs %s to start, more than --max-memory %s (for "
                 "--capacity %llu at --error %g)",
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

void report_state_after_write_error(const char *path, bool saved, bool reread, uint64_t written,
                                    uint64_t after)
{
    if (saved) {
        fprintf(stderr,
                "once: state saved to '%s' after the %llu input %s before the first line not "
                "written (read again): a rerun delivers none of them again, and the %llu "
                "answered after as if never seen\n",
                path, (unsigned long long)written, written == 1 ? "line" : "lines",
                (unsigned long long)after);
        return;
    }
    fprintf(stderr,
            "once: state not saved: '%s' is as it was before this run (%s); the lines written "
            "in this run will be delivered again, none that was not written is recorded\n",
            path,
            reread ? "reading the input again to record the lines written failed"
                   : "the input cannot be read again to record only the lines written: a "
                     "pipe");
}

void report_state_kept(const char *path, bool saved, uint64_t lines)
{
    if (!saved) {
        fprintf(stderr, "once: state not saved: '%s' is as it was before this run\n", path);
        return;
    }
    fprintf(stderr,
            "once: state saved to '%s' after %llu %s: a rerun on the rest of the input "
            "delivers none of them again\n",
            path, (unsigned long long)lines, lines == 1 ? "line" : "lines");
}
