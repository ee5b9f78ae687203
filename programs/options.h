/*
 * options.h - the command line of `once`, parsed into one struct.
 */
#ifndef ONCE_PROGRAMS_OPTIONS_H
#define ONCE_PROGRAMS_OPTIONS_H

#include "keys.h"
#include "once_sliced.h"
#include "timefmt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { EXIT_USAGE = 1, EXIT_IO = 2 };

typedef enum stats_mode { STATS_NONE, STATS_HUMAN, STATS_JSON } stats_mode;
typedef enum bad_time_policy { BAD_TIME_FAIL, BAD_TIME_SKIP, BAD_TIME_KEEP } bad_time_policy;
typedef enum progress_mode { PROGRESS_AUTO, PROGRESS_ON, PROGRESS_OFF } progress_mode;
/* --on-failed-slice: an event with a position in a slice that cannot answer is new
 * (distinct), a repeat (duplicate), or decided by the reachable positions when at least
 * X of them were reached (threshold:X). */
typedef enum failed_slice_policy {
    FAILED_SLICE_DISTINCT,
    FAILED_SLICE_DUPLICATE,
    FAILED_SLICE_THRESHOLD
} failed_slice_policy;

typedef struct cli_options {
    /* Filter geometry; the *_given flags record what the user set explicitly, which
     * must then agree with a loaded state file. */
    once_type type;
    bool type_given;
    uint64_t capacity;
    bool capacity_given;
    double error;
    bool error_given;
    uint64_t seed;
    bool seed_given;

    /* Count window (--window): keep the last `window` delivered keys. */
    uint64_t window;
    bool window_given;
    uint32_t level;
    bool level_given;
    bool refresh;

    /* Time window (--span): forget keys delivered more than span_ms ago. */
    uint64_t span_ms;
    bool span_given;
    unsigned time_field; /* 0: the wall clock at reading time */
    time_format time_format;
    bool time_format_given;
    bad_time_policy on_bad_time;
    uint64_t max_time_jump_ms; /* event times: how far ahead of the clock (0: any) */
    uint64_t lag_ms; /* --lag: a late line within it is judged at its own time (tagged) */
    bool lag_given;
    uint64_t max_memory; /* 0: the structure's default cap */

    /* Sliced filter (paper 000, section 3): a standard filter of --capacity and
     * --error sliced over `slices` (x `parts` for diced slicing) sites, run by
     * `threads` worker threads that own them (0: the reading thread). */
    bool sliced;
    once_slicing slicing;
    uint32_t slices, parts;
    uint32_t threads;
    /* The filter in `shards` shards (once_create_sharded), answered side by side with
     * --threads; 0: the default (options.c), 1: one filter. */
    uint32_t shards;
    bool shards_given;
    bool bounded_growth; /* --slice-growth bounded: in generations across the sites */

    /* Over a Redis Cluster (--cluster): the sliced filter NAME (--key) whose slices
     * are keys of the cluster (cluster/, once_cluster.h), shared by every `once` on it.
     * Without --slicing (and --window, --tree) its slices are whole filters of `type`
     * (`whole`: horizontal, `slices` of them, 16 unless given). */
    bool whole;
    const char *cluster; /* "host:port[,host:port...]", NULL without --cluster */
    const char *cluster_key;
    failed_slice_policy on_failed_slice;
    uint32_t failed_slice_threshold; /* threshold:X */
    bool local_filter; /* --local-filter: this producer's own filter first */
    bool wait;         /* --wait: WAIT for a replica after each batch */
    /* --failover-hold: how long a batch holds a failed master's commands for its
     * replica's promotion (ms; 0 none); the library's default unless given. */
    uint64_t failover_hold_ms;
    bool failover_hold_given;
    uint32_t tree_levels, tree_fanout; /* --tree LxF: a Bloom tree over the cluster */
    uint64_t leaf;                     /* --leaf I: this run's leaf */

    /* Key selection: the whole line, or some of its fields (keys.h).  What was given
     * explicitly (fields, -i, or split_given) must agree with a state file's profile;
     * the rest is taken from it. */
    key_spec key;
    bool split_given;

    bool print_duplicates; /* -D: print the lines seen before instead */
    char terminator;       /* ends each line, on input and output: '\n', or NUL with -z */
    /* `once card`: print the distinct-key estimate (of the stream, or of each saved
     * filter named by --state) instead of lines. */
    bool card;
    double confidence; /* of the estimate's interval (default 0.9) */
    bool json;         /* card output as JSON lines */
    stats_mode stats;
    progress_mode progress;
    /* --state: `once` keeps its filter in one state file; `once card` estimates each
     * saved filter named (the option repeats) and reads no input. */
    const char *state_path;   /* the first --state, NULL without one */
    const char **state_paths; /* every --state, in order */
    size_t state_count;

    char **inputs; /* files; none means standard input */
    size_t input_count;
} cli_options;

/* Parse argv.  Returns 0 to run, -1 after printing --help or --version (exit 0), or
 * EXIT_USAGE with the reason in options_error(). */
int options_parse(cli_options *options, int argc, char **argv);
/* Why options_parse refused its arguments (a sentence without the program's name),
 * after it returned EXIT_USAGE; "" otherwise. */
const char *options_error(void);
/* --max-time-jump's value, for a front end whose times are always event times: 0, or
 * EXIT_USAGE with the reason in options_error(). */
int options_time_jump(const char *arg, uint64_t *ms);
/* The structure of a time window (--span) without --filter: the tagged window, or the
 * TLBF when --level asks for its layout (command lines from before the tagged window
 * was the default keep their filter). */
once_type cli_time_window_type(const cli_options *options);

#endif
