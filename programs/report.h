/*
 * report.h - what `once` tells the user on stderr: the progress line while it runs and
 * the --stats summary at the end.
 */
#ifndef ONCE_PROGRAMS_REPORT_H
#define ONCE_PROGRAMS_REPORT_H

#include "once.h"
#include "options.h"

#include <stdint.h>

typedef struct run_counters {
    uint64_t lines;
    uint64_t distinct;
    uint64_t duplicates;
    uint64_t input_bytes;
    uint64_t bad_time; /* lines whose event time did not parse */
    double seconds;
} run_counters;

double monotonic_seconds(void);

void report_progress(const run_counters *c, const once_filter *filter, double elapsed);
void report_progress_done(void);
void report_stats(stats_mode mode, const run_counters *c, const once_filter *filter);

#endif
