/*
 * report.c - the progress line and the end-of-run summary.
 *
 * JSON is written by hand: the fields are numbers and a fixed structure name, and a
 * non-finite number (which JSON cannot carry) is written as 0.  The seed is a string:
 * a 64-bit integer above 2^53 does not survive readers that hold numbers as doubles.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double finite_or_zero(double x)
{
    return isfinite(x) ? x : 0.0;
}

void report_progress(const run_counters *c, const once_filter *filter, double elapsed)
{
    double rate = elapsed > 0 ? (double)c->lines / elapsed : 0.0;
    fprintf(stderr, "\r\033[Konce: %llu lines, %.2f M lines/s, %llu distinct, %.1f MiB",
            (unsigned long long)c->lines, rate / 1e6, (unsigned long long)c->distinct,
            (double)once_bytes(filter) / (1024.0 * 1024.0));
    fflush(stderr);
}

void report_progress_done(void)
{
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
    double bits_per_key = s.items ? (double)s.bytes * 8.0 / (double)s.items : 0.0;
    if (mode == STATS_JSON) {
        fprintf(stderr,
                "{\"lines\":%llu,\"distinct\":%llu,\"duplicates\":%llu,\"bytes\":%llu,"
                "\"bits_per_key\":%.4f,\"fpr_estimate\":%.6g,\"seconds\":%.6f,"
                "\"lines_per_second\":%.1f,\"input_bytes\":%llu,\"structure\":\"%s\","
                "\"items\":%llu,\"capacity\":%llu,\"error\":%.6g,\"hashes\":%u,"
                "\"fill_ratio\":%.6f,\"seed\":\"%llu\",\"window\":%llu,\"slack\":%llu,"
                "\"k\":%u,\"l\":%u,\"slices\":%u,\"window_unit\":\"%s\",\"bad_time\":%llu,"
                "\"filters\":%u,\"cardinality_estimate\":%s,\"cardinality_low\":%s,"
                "\"cardinality_high\":%s}\n",
                (unsigned long long)c->lines, (unsigned long long)c->distinct,
                (unsigned long long)c->duplicates, (unsigned long long)s.bytes,
                finite_or_zero(bits_per_key), finite_or_zero(s.fpr_estimate),
                finite_or_zero(c->seconds), finite_or_zero(rate),
                (unsigned long long)c->input_bytes, s.structure, (unsigned long long)s.items,
                (unsigned long long)s.capacity, finite_or_zero(s.error), s.hashes,
                finite_or_zero(s.fill_ratio), (unsigned long long)s.seed,
                (unsigned long long)s.window, (unsigned long long)s.slack, s.hashes, s.age_slices,
                s.slices, s.span_ms ? "ms" : s.window ? "events" : "none",
                (unsigned long long)c->bad_time, s.filters, card_estimate, card_low, card_high);
        return;
    }
    fprintf(stderr, "once: %llu lines, %llu distinct, %llu duplicates in %.3f s (%.2f M lines/s)\n",
            (unsigned long long)c->lines, (unsigned long long)c->distinct,
            (unsigned long long)c->duplicates, c->seconds, rate / 1e6);
    fprintf(stderr,
            "once: %s filter, %.2f MiB, %llu keys held (capacity %llu at error %g), "
            "%.2f bits/key, k=%u, fill %.3f, estimated false-positive rate %.3g\n",
            s.structure, (double)s.bytes / (1024.0 * 1024.0), (unsigned long long)s.items,
            (unsigned long long)s.capacity, s.error, bits_per_key, s.hashes, s.fill_ratio,
            s.fpr_estimate);
    if (s.span_ms)
        fprintf(stderr,
                "once: span %.3f s (slack %.3f s more), k=%u l=%u, %u slices now, peak "
                "false-positive rate %.3g\n",
                (double)s.span_ms / 1000.0, (double)s.slack / 1000.0, s.hashes, s.age_slices,
                s.slices, s.design_fpr);
    if (c->bad_time)
        fprintf(stderr, "once: %llu lines had no readable time\n", (unsigned long long)c->bad_time);
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
