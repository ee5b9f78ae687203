/*
 * report.h - what `once` tells the user on stderr: the progress line while it runs and
 * the --stats summary at the end (the run's figures here, each target's own part
 * through its ops), and why a filter refused to grow.
 */
#ifndef ONCE_PROGRAMS_REPORT_H
#define ONCE_PROGRAMS_REPORT_H

#include "once_sliced.h"
#include "options.h"
#include "pipeline.h"

#include <stdint.h>

/* Where a run's time goes, in the order a batch of lines goes through them: reading and
 * splitting the input, cutting keys and reading event times, hashing the keys,
 * deciding (the filter's calls), writing the lines kept. */
typedef enum run_phase {
    PHASE_READ,
    PHASE_KEYS,
    PHASE_HASH,
    PHASE_DECIDE,
    PHASE_WRITE,
    PHASES
} run_phase;

typedef struct run_counters {
    uint64_t lines;
    uint64_t distinct;
    uint64_t duplicates;
    uint64_t input_bytes;
    uint64_t bad_time; /* lines whose event time is unreadable, before 1970 or too far
                          ahead (of the latest event time or of the wall clock) */
    uint64_t late;     /* lines older than the latest event time minus the span */
    double seconds;
    uint32_t threads;  /* threads that worked on the lines */
    /* Seconds in each phase, summed over the batches of every thread; negative for a
     * phase not timed apart (keys hashed by the filter's call: in PHASE_DECIDE). */
    double phase_seconds[PHASES];
} run_counters;

/* `bytes`: the memory the filter holds. */
void report_progress(const run_counters *c, uint64_t bytes, double elapsed);
void report_progress_done(void);
/* What every target's summary shows of the run: its counters, its lines a second, and
 * its threads and phases as JSON fields (",\"threads\":T,\"phases\":{...}"). */
typedef struct run_summary {
    const run_counters *c;
    double rate;
    char phases[256];
} run_summary;

struct target;
/* The --stats summary: the run's, then the target's (target.h), in `mode`. */
void report_stats(stats_mode mode, const run_counters *c, const struct target *t);
/* Pieces of it for the targets' parts: the human summary's first lines (the counts and
 * the phases), a number JSON can carry (0 for a non-finite one), a number or null into
 * buf, and a JSON array's numbers on stderr. */
void report_counts(const run_summary *sum);
double report_finite(double x);
void report_json_number(char *buf, size_t size, bool known, double x);
void report_json_counts(const uint64_t *values, uint32_t n);
/* A size in the unit its magnitude calls for: "512 B", "585.0 KiB", "3.43 MiB",
 * "1.80 GiB". */
void report_size(char *buf, size_t size, uint64_t bytes);

/* A run that failed or was stopped, with --state (not by its output): whether the state
 * was saved to `path`, and as of which line. */
void report_state_kept(const char *path, bool saved, uint64_t lines);
/* After a write failed: the state saved as of the `written` input lines before the first
 * line not written (read again; `after` answered since are not recorded), or not saved
 * (`reread`: the inputs could be read again, but that failed; else they cannot be). */
void report_state_after_write_error(const char *path, bool saved, bool reread, uint64_t written,
                                    uint64_t after);

/* The filter refused a key with ONCE_ERR_FULL while reading `input`, before line `line`
 * was answered: say what it needs and what stopped it.  `max_memory`: the --max-memory
 * given (0: none); `has_state_file`: a loaded filter keeps the cap it was saved with. */
void report_full(const char *input, uint64_t line, const once_filter *filter,
                 uint64_t max_memory, bool has_state_file);
/* once_create refused `config`, which has a memory cap.  If the cap is why, put how much
 * the filter needs in `why` (a sentence without the program's name) and return true;
 * false leaves the message to the caller. */
bool report_cap_at_creation(const once_config *config, char *why, size_t why_len);
/* The same two for a sliced filter whose sites grow under config->max_bytes. */
void report_sliced_full(const char *input, uint64_t line, const once_sliced *filter,
                        uint64_t max_bytes);
bool report_sliced_cap_at_creation(const once_sliced_config *config);

#endif
