/*
 * once.c - the `once` command: print each line whose key was not seen before.
 *
 * Flow: parse options; load the state file or build the filter; stream every input
 * through the reader in batches, extract each line's key, ask the filter with one
 * batched test-and-add, and write the lines it calls new (or, with -D, the others) in
 * input order; then save the state and print the summary.
 *
 * Failure rules, so that a line is delivered once:
 *   - a run that fails (unreadable input, failed output, an unreadable event time, a
 *     memory cap reached) exits 2, but first writes every line answered before the
 *     failure and saves the state as of the last of them: the lines written are the
 *     lines the state holds as delivered, and a rerun on the rest of the input
 *     delivers none twice.  The one gap is a failed write: the lines answered but not
 *     yet out (at most the output buffer's, and the rest of their batch) are held as
 *     delivered and may not have arrived; the run says how many at most.  A state that
 *     cannot be loaded is refused before any input is read and left as it is;
 *   - an input that cannot be opened or read (missing, a directory) is reported and
 *     the run goes on with the other inputs, as cat does, then fails as above: their
 *     lines are written and the state saved, but no summary or estimate is printed;
 *   - SIGINT/SIGTERM/SIGHUP stop reading, finish the complete lines already read, flush
 *     the output, save the state, and exit 128+signal (a closed terminal or a service
 *     manager's hangup is a request to stop, not a reason to lose the run's keys);
 *     with a live stream (a pipe) the output is flushed whenever the input would
 *     block, so consumers see lines promptly.
 */
#include "card.h"
#include "keys.h"
#include "lines.h"
#include "options.h"
#include "pipeline.h"
#include "profile.h"
#include "report.h"
#include "state.h"
#include "timefmt.h"

#include "once_cluster.h"
#include "once_sliced.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCH_LINES 4096
#define OUTPUT_BUFFER_BYTES ((size_t)1 << 20)

static volatile sig_atomic_t stop_signal;
static sigset_t stop_signals; /* SIGINT, SIGTERM, SIGHUP: the reader waits for them too */

static void on_stop_signal(int sig)
{
    stop_signal = sig;
}

static void install_signals(bool have_state)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a blocked read must return so we can stop */
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* With a state file, a closed output is an error we must see (and not save past),
     * rather than a silent death by SIGPIPE. */
    if (have_state)
        signal(SIGPIPE, SIG_IGN);
}

typedef enum line_action { LINE_FILTER = 0, LINE_SKIP, LINE_KEEP } line_action;

/* Does the file begin as a saved filter does: the format's magic, "ONCE", and a format
 * version this build reads (text that starts with the word has no such bytes)? */
static bool is_saved_filter(const char *path)
{
    if (strcmp(path, "-") == 0)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false; /* the run reports it */
    unsigned char head[6];
    bool saved = read(fd, head, sizeof head) == (ssize_t)sizeof head &&
                 memcmp(head, "ONCE", 4) == 0 &&
                 head[4] + 256u * head[5] >= 1 && head[4] + 256u * head[5] <= ONCE_FORMAT_VERSION;
    close(fd);
    return saved;
}

static uint64_t wall_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Record in the filter the options it is used with, so its state file keeps them. */
static int set_profile(const cli_options *o, once_filter *filter)
{
    run_profile profile;
    char text[PROFILE_TEXT_MAX];
    profile_of_options(&profile, o, once_get_type(filter));
    size_t len = profile_encode(&profile, text);
    once_status st = once_set_metadata(filter, text, len);
    if (st == ONCE_ERR_FULL) { /* the memory cap counts these bytes too */
        fprintf(stderr,
                "once: the %s filter and the %zu bytes that record its options need more "
                "than its memory cap (--max-memory)\n",
                once_type_name(once_get_type(filter)), len);
        return EXIT_USAGE;
    }
    if (st != ONCE_OK) {
        fprintf(stderr, "once: out of memory\n");
        return EXIT_IO;
    }
    return 0;
}

/* A loaded state's profile against the options: the options not given are taken from
 * it; one that contradicts it is a usage error.  A state without a profile (made by the
 * library, or by an older `once`) is taken with the options as given. */
static int check_profile(cli_options *o, const once_filter *filter)
{
    const void *data = NULL;
    size_t len = 0;
    once_get_metadata(filter, &data, &len);
    if (len == 0)
        return 0;
    run_profile profile;
    if (profile_decode(&profile, data, len) != 0) {
        fprintf(stderr,
                "once: state file '%s' records options this version cannot read (made by a "
                "newer once, or damaged)\n",
                o->state_path);
        return EXIT_IO;
    }
    char made_with[PROFILE_TEXT_MAX];
    const char *conflict = profile_apply(&profile, o, made_with);
    if (conflict != NULL) {
        fprintf(stderr,
                "once: %s conflicts with state file '%s', made with %s; drop the option or "
                "use another file\n",
                conflict, o->state_path, made_with);
        return EXIT_USAGE;
    }
    return 0;
}

/*
 * The shards of a new filter: --shards, else TIME_WINDOW_SHARDS for a time window and
 * one for the others, whatever --threads: the geometry decides the answers, so it must
 * not depend on T (a state saved by one run resumes in any other).  A time window's
 * answer costs more than the rest of a line (a tagged one's, 100 ns a key), so one
 * answering thread is the run's pace, and its shards' answers on two threads took
 * --span 1h 1.6x faster.  A filter's answer is a line or a few (10 ns for the blocked
 * one): on two cores the run is already balanced with its answers on one thread
 * (1.8x), and gathering and forking made it slower (0.70 to 1.20 s, 20M lines);
 * --shards gives more cores their share (options.c refuses it for a count window,
 * whose last N keys are the stream's).
 */
#define TIME_WINDOW_SHARDS 16u

/* Fewer shards for a small --capacity: a shard of a few keys grows from too small a start
 * (--filter timer --capacity 100 in 16 shards passed 12x its rate) and gains nothing. */
#define MIN_SHARD_CAPACITY 1024u

static uint32_t shards_for(const cli_options *o)
{
    if (o->shards_given)
        return o->shards;
    if (once_structure_of(o->type)->kind != ONCE_KIND_TIME_WINDOW)
        return 1;
    uint64_t most = o->capacity / MIN_SHARD_CAPACITY;
    return most >= TIME_WINDOW_SHARDS ? TIME_WINDOW_SHARDS : most > 1 ? (uint32_t)most : 1;
}

/*
 * A new filter of `c` in `shards` shards (1: one piece).  A --max-memory too small for
 * every shard's fixed part (a TLBF's slice table) is too small for shards, not for the
 * filter: unless --shards asked for them, such a window is one piece, which depends on
 * the options alone, as the geometry must.
 */
static once_status create_in_shards(once_filter **out, const once_config *c, uint32_t shards,
                                    bool shards_given)
{
    if (shards <= 1)
        return once_create(out, c);
    once_status st = once_create_sharded(out, c, shards);
    return st == ONCE_ERR_TOO_LARGE && !shards_given ? once_create(out, c) : st;
}

/*
 * The default filter's first guess, from its input.  Without --capacity the scalable
 * filter starts with a sub-filter for 10^6 keys and doubles: at 20M distinct lines it
 * holds five, and a new key is looked up in every one, 1.7x the time of one filter
 * sized for them.  A run over regular files knows about how many lines it will read:
 * their bytes over the mean line of the first file's first SAMPLE_BYTES, and a
 * margin.  Its distinct keys are at most its lines, so a first sub-filter for that
 * many seldom grows.  The memory then follows the input's lines rather than its
 * distinct keys (about 1.8 bytes a line at the default error), so the guess is kept
 * under GUESS_MAX_KEYS and, with --max-memory, to half the cap (open_filter); never
 * below the default.  Standard input counts when it is a regular file, from where it
 * stands (read with pread, which leaves it there).  0: no guess (a pipe, a terminal, a
 * file that cannot be read).
 */
#define SAMPLE_BYTES ((size_t)1 << 16)
#define GUESS_MAX_KEYS (UINT64_C(1) << 28)

/* The bytes left in the regular file open at `fd` (false: not one). */
static bool regular_bytes_left(int fd, uint64_t *bytes, off_t *at)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    *at = lseek(fd, 0, SEEK_CUR);
    if (*at < 0 || *at > st.st_size)
        return false;
    *bytes = (uint64_t)(st.st_size - *at);
    return true;
}

static uint64_t lines_guess(const cli_options *o)
{
    static char sample[SAMPLE_BYTES];
    ssize_t got = 0; /* of the first input, sampled */
    uint64_t bytes = 0;
    size_t inputs = o->input_count ? o->input_count : 1;
    for (size_t i = 0; i < inputs; i++) {
        bool standard = o->input_count == 0 || strcmp(o->inputs[i], "-") == 0;
        int fd = standard ? STDIN_FILENO : open(o->inputs[i], O_RDONLY | O_CLOEXEC);
        uint64_t left = 0;
        off_t from = 0;
        bool regular = fd >= 0 && regular_bytes_left(fd, &left, &from);
        if (regular && i == 0)
            got = pread(fd, sample, sizeof sample, from);
        if (fd >= 0 && !standard)
            close(fd);
        if (!regular)
            return 0;
        bytes += left;
    }
    uint64_t lines = 0;
    for (ssize_t i = 0; i < got; i++)
        lines += sample[i] == o->terminator;
    if (got <= 0 || lines == 0)
        return 0;
    uint64_t guess = bytes / ((uint64_t)got / lines) + 1;
    guess += guess / 8;
    return guess < GUESS_MAX_KEYS ? guess : GUESS_MAX_KEYS;
}

/* Build the filter from the state file or the options.  Returns 0 or an exit code. */
static int open_filter(cli_options *o, once_filter **out)
{
    if (o->state_path) {
        state_result r = state_load(o->state_path, out);
        if (r == STATE_FAILED)
            return EXIT_IO;
        if (r == STATE_LOADED) {
            const once_filter *f = *out;
            once_stats s;
            once_get_stats(f, &s);
            const char *conflict = NULL;
            if (o->type_given && o->type != s.type)
                conflict = "--filter";
            else if (o->capacity_given && o->capacity != s.capacity)
                conflict = "--capacity";
            else if (o->window_given && (o->window != s.capacity || s.window == 0 || s.span_ms))
                conflict = "--window";
            else if (o->span_given && o->span_ms != s.span_ms)
                conflict = "--span";
            else if (!o->window_given && !o->span_given && s.window != 0 && o->type_given)
                conflict = "--filter";
            else if (o->error_given && o->error != s.error)
                conflict = "--error";
            else if (o->seed_given && o->seed != s.seed)
                conflict = "--seed";
            else if (o->shards_given && o->shards != once_shard_count(f))
                conflict = "--shards";
            if (conflict) {
                fprintf(stderr,
                        "once: %s conflicts with state file '%s' (%s filter, capacity %llu, "
                        "error %g); its parameters win: drop the flag or use another file\n",
                        conflict, o->state_path, s.structure, (unsigned long long)s.capacity,
                        s.error);
                once_free(*out);
                *out = NULL;
                return EXIT_USAGE;
            }
            int code = check_profile(o, f);
            /* A cap given now applies: the state keeps the one it was saved with only
             * until a run says otherwise (and then saves the new one). */
            if (code == 0 && o->max_memory) {
                once_status st = once_set_max_bytes(*out, o->max_memory);
                if (st == ONCE_ERR_FULL) {
                    fprintf(stderr,
                            "once: state file '%s' holds %llu bytes, more than --max-memory "
                            "%llu: give a larger cap, or none to keep its own (%llu)\n",
                            o->state_path, (unsigned long long)once_bytes(*out),
                            (unsigned long long)o->max_memory,
                            (unsigned long long)once_max_bytes(*out));
                    code = EXIT_USAGE;
                } else if (st != ONCE_OK) {
                    fprintf(stderr,
                            "once: --max-memory caps a filter that grows; state file '%s' "
                            "holds a %s filter, which does not\n",
                            o->state_path, s.structure);
                    code = EXIT_USAGE;
                }
            }
            if (code == 0)
                code = set_profile(o, *out);
            if (code != 0) {
                once_free(*out);
                *out = NULL;
            }
            return code;
        }
    }
    once_config c;
    once_config_init(&c, o->type);
    c.capacity = o->capacity;
    c.error = o->error;
    c.seed = o->seed;
    c.seed_is_set = o->seed_given;
    c.window = o->window;
    c.level = o->level;
    c.policy = o->refresh ? ONCE_POLICY_REFRESH : ONCE_POLICY_FIRST;
    c.span_ms = o->span_ms;
    c.max_bytes = o->max_memory;
    uint32_t shards = shards_for(o);
    uint64_t guess = !o->capacity_given && o->type == ONCE_SCALABLE ? lines_guess(o) : 0;
    once_status st = ONCE_ERR_FULL;
    if (guess > c.capacity) {
        once_config guessed = c;
        guessed.capacity = guess;
        st = create_in_shards(out, &guessed, shards, o->shards_given);
        if (st == ONCE_OK && o->max_memory != 0 && once_bytes(*out) > o->max_memory / 2) {
            once_free(*out); /* past half the cap: the default first guess */
            *out = NULL;
            st = ONCE_ERR_FULL;
        }
    }
    if (st != ONCE_OK)
        st = create_in_shards(out, &c, shards, o->shards_given);
    if (st != ONCE_OK) {
        if (st != ONCE_ERR_NOMEM && c.max_bytes != 0 && report_cap_at_creation(&c))
            return EXIT_USAGE;
        fprintf(stderr, "once: cannot build a %s filter for %s %llu at error %g: %s\n",
                once_type_name(o->type), o->window_given ? "window" : "capacity",
                (unsigned long long)(o->window_given ? o->window : o->capacity), o->error,
                once_strerror(st));
        return st == ONCE_ERR_NOMEM ? EXIT_IO : EXIT_USAGE;
    }
    int code = set_profile(o, *out);
    if (code != 0) {
        once_free(*out);
        *out = NULL;
    }
    return code;
}

typedef struct run {
    const cli_options *options;
    once_filter *filter;
    once_sliced *sliced; /* --slicing: the filter instead of `filter` */
    once_cluster *cluster; /* --cluster: the filter; `sliced` is its sliced filter */
    once_filter *local;    /* --local-filter: this run's own keys */
    line_writer out;
    run_counters counters;
    uint64_t seed;    /* the filter's, for the keys hashed on the pipeline's threads */
    bool progress;
    bool warned_capacity;
    bool fixed_size; /* a static filter: passing its capacity raises the error rate */
    bool rows_add_up; /* dbf, dbpbf: each row (batch) keeps --error, and their rates add */
    bool timer;       /* the timer filter: a fixed one (saved so) may pass its capacity */
    uint64_t next_overfull_check; /* the timer's items at which to look again */
    bool timed;    /* a time window: every key needs an event time */
    uint64_t sliced_clock; /* --slicing --span: the latest event time taken */
    bool sliced_clock_started;
    bool input_failed; /* an input could not be opened or read: the run fails at the end */
    uint64_t unwritten; /* after a write error: answered lines that may not have been written */
    double started, last_progress;
} run;

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
        .batch_events = BATCH_LINES,
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

/* Is the filter one of sites (sliced in process, or over a cluster: a sliced filter or
 * a Bloom tree) rather than `filter`? */
static bool of_sites(const run *r)
{
    return r->sliced != NULL || r->cluster != NULL;
}

/* The sliced filter, in process or over the cluster (which owns its own). */
static void close_sliced(run *r)
{
    if (r->cluster != NULL)
        once_cluster_close(r->cluster);
    else
        once_sliced_free(r->sliced);
    once_free(r->local);
    r->cluster = NULL;
    r->sliced = NULL;
    r->local = NULL;
}

/* --cluster: the sliced filter of the options over the cluster's keys, this run one of
 * its producers. */
static int open_cluster(const cli_options *o, run *r)
{
    enum { MAX_SEEDS = 16 };
    static char text[1024];
    const char *seeds[MAX_SEEDS];
    size_t count = 0;
    snprintf(text, sizeof text, "%s", o->cluster);
    for (char *save = NULL, *p = strtok_r(text, ",", &save); p && count < MAX_SEEDS;
         p = strtok_r(NULL, ",", &save))
        seeds[count++] = p;
    once_cluster_config c;
    once_cluster_config_init(&c, seeds, count, o->cluster_key, o->slices);
    once_tree_config tree = {.mode = ONCE_TREE_DENSE,
                             .levels = o->tree_levels,
                             .fanout = o->tree_fanout,
                             .capacity = o->capacity,
                             .error = o->error,
                             .seed = o->seed,
                             .seed_is_set = o->seed_given,
                             .window_ms = o->span_ms};
    if (o->tree_levels != 0) {
        c.tree = &tree;
        c.leaf = o->leaf;
        c.sliced.slicing = ONCE_SLICING_HORIZONTAL; /* the tree's nodes are the slices */
    }
    c.sliced.slicing = o->slicing;
    c.sliced.parts = o->parts;
    c.sliced.capacity = o->window_given ? o->window : o->capacity; /* N keys at most */
    c.sliced.error = o->error;
    c.sliced.seed = o->seed;
    c.sliced.seed_is_set = o->seed_given;
    c.sliced.window_ms = o->span_ms;
    c.sliced.window_events = o->window_given ? o->window : 0;
    c.wait_replicas = o->wait ? 1 : 0;
    /* The policy for a slice that cannot answer: every position counts as set
     * (duplicate), none may fail (distinct), or at least X reached (threshold:X). */
    uint64_t bits = 0, slice_bits = 0;
    uint32_t k = 0;
    if (o->tree_levels != 0) {
        uint64_t nodes = 0, leaves = 0;
        if (once_tree_geometry(&tree, &bits, &k, &nodes, &leaves) != ONCE_OK) {
            fprintf(stderr, "once: --tree: the tree's options are refused\n");
            return EXIT_USAGE;
        }
    } else if (once_sliced_geometry(&c.sliced, &bits, &k, &slice_bits) != ONCE_OK) {
        fprintf(stderr, "once: --cluster: the sliced filter's options are refused\n");
        return EXIT_USAGE;
    }
    c.sliced.on_failure = ONCE_FAILURE_THRESHOLD;
    c.sliced.threshold = o->on_failed_slice == FAILED_SLICE_DUPLICATE   ? 0
                         : o->on_failed_slice == FAILED_SLICE_DISTINCT ? k
                                                                        : o->failed_slice_threshold;
    if (c.sliced.threshold > k) {
        fprintf(stderr, "once: --on-failed-slice threshold:%u: at most k = %u positions\n",
                c.sliced.threshold, k);
        return EXIT_USAGE;
    }
    if (o->local_filter) {
        once_config lc;
        once_config_init(&lc, o->span_given ? cli_time_window_type(o) : ONCE_BLOCKED);
        lc.capacity = o->capacity;
        lc.error = o->error;
        lc.span_ms = o->span_ms;
        lc.max_time_jump_ms = 0;
        once_status st = once_create(&r->local, &lc);
        if (st != ONCE_OK) {
            fprintf(stderr, "once: --local-filter: %s\n", once_strerror(st));
            return st == ONCE_ERR_NOMEM ? EXIT_IO : EXIT_USAGE;
        }
        c.local = r->local;
    }
    char why[512];
    once_status st = once_cluster_open(&r->cluster, &c, why, sizeof why);
    if (st != ONCE_OK) {
        fprintf(stderr, "once: --cluster %s --key %s: %s\n", o->cluster, o->cluster_key, why);
        once_free(r->local);
        r->local = NULL;
        return st == ONCE_ERR_MISMATCH || st == ONCE_ERR_INVALID || st == ONCE_ERR_TOO_LARGE
                   ? EXIT_USAGE
                   : EXIT_IO;
    }
    r->sliced = once_cluster_sliced(r->cluster);
    return 0;
}

/* Would the window take an event at `when` (not too far past the latest time)?  The
 * library's rule for its windows; a sliced filter's sites keep their own clocks, so
 * the run keeps the stream's here, by the same rule. */
static bool clock_step(run *r, uint64_t *clock, bool *started, uint64_t when)
{
    if (!of_sites(r))
        return once_clock_step(r->filter, clock, started, when);
    return once_time_step(r->options->max_time_jump_ms, clock, started, when);
}

/* The memory the filter holds. */
static uint64_t run_bytes(const run *r)
{
    if (!of_sites(r))
        return once_bytes(r->filter);
    once_sliced_stats s;
    if (r->sliced == NULL || once_sliced_get_stats(r->sliced, &s) != ONCE_OK)
        return 0; /* a tree over a cluster: its nodes are the cluster's */
    return s.bytes;
}

/* How many of the batch's lines come before its key number `keys` (the lines whose
 * keys were answered, and the kept or skipped lines among them). */
static size_t lines_before_key(const line_action *action, size_t n, size_t keys)
{
    size_t i = 0;
    for (size_t j = 0; i < n; i++) {
        if (action[i] == LINE_FILTER && j == keys)
            break;
        j += action[i] == LINE_FILTER;
    }
    return i;
}

/*
 * Warn once when the filter holds more keys than it was made for and its rate rises
 * past --error: a static filter past its capacity (or a sliced one, by the keys it
 * delivered), a dbf or dbpbf opening its second row, or a timer filter of fixed size
 * (saved by a version whose timer filters did not grow) with more keys alive in its
 * span than its capacity.  That last check scans the filter's cells, so it runs once
 * every `capacity` new keys.
 */
static void warn_if_overfull(run *r)
{
    const cli_options *o = r->options;
    uint64_t capacity = of_sites(r) ? o->capacity : once_capacity(r->filter);
    if (capacity == 0)
        return;
    bool over;
    if (of_sites(r))
        over = r->fixed_size && r->counters.distinct > capacity;
    else if (r->fixed_size)
        over = once_overfull(r->filter);
    else if (r->rows_add_up)
        over = once_items(r->filter) > capacity;
    else if (r->timer && once_items(r->filter) >= r->next_overfull_check) {
        r->next_overfull_check = once_items(r->filter) + capacity;
        over = once_overfull(r->filter);
    } else
        return;
    if (!over)
        return;
    r->warned_capacity = true;
    if (r->progress)
        report_progress_done();
    if (r->fixed_size)
        fprintf(stderr,
                "once: warning: more than %llu distinct keys, the filter's capacity; "
                "false positives will rise above the target (use a larger --capacity)\n",
                (unsigned long long)capacity);
    else if (r->timer)
        fprintf(stderr,
                "once: warning: more than %llu distinct keys in a span, the capacity of "
                "this timer filter, which keeps its size (it was saved by a version whose "
                "timer filters did not grow); false positives will rise above the target "
                "(start a new state to have one that grows)\n",
                (unsigned long long)capacity);
    else /* the second row opens: the rate is now the sum of the rows' */
        fprintf(stderr,
                "once: warning: more than %llu distinct keys, one %s of the %s filter; it "
                "grows, but each %s keeps --error and their rates add up, so false "
                "positives will rise above the target (use a larger --capacity, or the "
                "scalable filter, which keeps --error at any size)\n",
                (unsigned long long)capacity,
                once_get_type(r->filter) == ONCE_DBF ? "row" : "batch",
                once_type_name(once_get_type(r->filter)),
                once_get_type(r->filter) == ONCE_DBF ? "row" : "batch");
}

/*
 * A batch of lines on its way through a run: read, then its keys and event times found
 * (and, with threads, its keys hashed), then answered and written in input order.  On
 * one thread the lines point into the reader's buffer; with threads, into the batch's
 * own copy, since the reader goes on reading while the batch waits its turn.
 */
typedef struct line_batch {
    line_span lines[BATCH_LINES];
    size_t n;
    char *copy; /* with threads: the lines' bytes */
    size_t copy_capacity;
    once_key keys[BATCH_LINES]; /* keys[i], line i's key (at time 0 until answered), i < keyed */
    size_t keyed;               /* n, or the line whose key found no memory */
    uint64_t bytes;             /* the lines' bytes, terminators included */
    int time_status[BATCH_LINES]; /* parse_event_time's answer for line i (timed by a field) */
    uint64_t when[BATCH_LINES];   /* line i's event time when its status is 0 */
    once_digest digests[BATCH_LINES]; /* with threads: keys[i] hashed */
    key_arena arena; /* keys that are not slices of their line */
    /* The answer, for the write: lines [0, answered) answered, each judged (action) and,
     * if filtered, a duplicate or not; code, the answer's (0, or why the run stops). */
    size_t answered;
    line_action action[BATCH_LINES];
    uint8_t duplicate[BATCH_LINES];
    int code;
} line_batch;

/* The one batch of a run on one thread (large: not on the stack). */
static line_batch serial_batch;

/* One input's reading: the reader and its line count. */
typedef struct input_run {
    run *r;
    const char *name;
    line_reader reader;
    uint64_t line_number;
    pipeline *pipe; /* with threads (see threaded) */
    bool too_long;    /* the read stopped at a line past LINE_MAX_BYTES */
    bool read_failed; /* the read stopped at an error, read_errno */
    int read_errno;
} input_run;

/* On a pipeline's threads: each batch keeps its own copy of its lines (the reader reuses
 * its buffer), and its keys are hashed with the keys, not by the filter's call. */
static bool threaded(const input_run *in)
{
    return in->pipe != NULL;
}

/* The time since *mark goes to `phase`, and the mark moves to now. */
static void phase_done(double *phases, run_phase phase, double *mark)
{
    double now = monotonic_seconds();
    phases[phase] += now - *mark;
    *mark = now;
}

static void flush_before_block(void *context)
{
    input_run *in = context;
    if (in->pipe != NULL)
        pipeline_flush(in->pipe); /* the answers write: flush in their turn */
    else
        writer_flush(&in->r->out);
}

static void flush_output(void *context)
{
    input_run *in = context;
    writer_flush(&in->r->out);
}

/* Keep the batch's lines in its own buffer (threads): the reader reuses its own. */
static bool copy_lines(line_batch *b)
{
    size_t bytes = 0;
    for (size_t i = 0; i < b->n; i++)
        bytes += b->lines[i].len;
    if (bytes > b->copy_capacity) {
        size_t capacity = b->copy_capacity ? b->copy_capacity : (size_t)1 << 16;
        while (capacity < bytes)
            capacity *= 2;
        char *grown = realloc(b->copy, capacity);
        if (grown == NULL)
            return false;
        b->copy = grown;
        b->copy_capacity = capacity;
    }
    char *at = b->copy;
    for (size_t i = 0; i < b->n; i++) {
        if (b->lines[i].len != 0)
            memcpy(at, b->lines[i].data, b->lines[i].len);
        b->lines[i].data = at;
        at += b->lines[i].len;
    }
    return true;
}

/* The read stage: the next batch of lines, or the input's end (or the error that ended
 * it, kept in `in`: said once the batches before it are answered, and only if none of
 * them stopped the run, as one thread, which reads no further, would). */
static pipeline_read read_batch(void *context, void *batch, double *phases)
{
    input_run *in = context;
    line_batch *b = batch;
    if (stop_signal)
        in->reader.stopping = true;
    double mark = monotonic_seconds();
    b->n = 0;
    reader_status rs = reader_next(&in->reader, b->lines, BATCH_LINES, &b->n);
    if (rs == READER_LINES && threaded(in) && !copy_lines(b)) {
        rs = READER_ERROR;
        errno = ENOMEM;
    }
    phase_done(phases, PHASE_READ, &mark);
    if (rs == READER_INTERRUPTED)
        return PIPELINE_AGAIN; /* the next call sees the signal, if that was one */
    if (rs == READER_LINES)
        return PIPELINE_BATCH;
    in->too_long = rs == READER_TOO_LONG;
    in->read_failed = rs == READER_ERROR; /* a directory fails here, with EISDIR */
    in->read_errno = errno;
    return PIPELINE_END;
}

/* The keys stage: each line's event time (from its field) and key, and with threads
 * the keys' digests.  Nothing here depends on the lines before: batches run side by
 * side.  A time that does not parse, or a clock that refuses it, is the answer
 * stage's to judge (in order); a key that finds no memory ends `keyed` there. */
static void find_keys(void *context, void *batch, double *phases)
{
    input_run *in = context;
    const run *r = in->r;
    const cli_options *o = r->options;
    line_batch *b = batch;
    double mark = monotonic_seconds();
    key_arena_reset(&b->arena);
    bool by_field = r->timed && o->time_field;
    b->keyed = b->n;
    b->bytes = 0;
    for (size_t i = 0; i < b->n; i++) {
        b->bytes += b->lines[i].len + 1;
        if (by_field) {
            const char *field;
            size_t field_len;
            key_field(&o->key, o->time_field, b->lines[i].data, b->lines[i].len, &field,
                      &field_len);
            b->time_status[i] = parse_event_time(field, field_len, o->time_format, &b->when[i]);
        }
        if (key_of_line(&o->key, b->lines[i].data, b->lines[i].len, &b->arena, &b->keys[i]) !=
            0) {
            b->keyed = i;
            break;
        }
        b->keys[i].time_ms = 0;
    }
    phase_done(phases, PHASE_KEYS, &mark);
    if (threaded(in)) {
        for (size_t i = 0; i < b->keyed; i++)
            (void)once_digest_with_seed(r->seed, b->keys[i].data, b->keys[i].len,
                                        &b->digests[i]);
        phase_done(phases, PHASE_HASH, &mark);
    }
}

/* The filter's answers for the batch's good keys, gathered in `keys` (or, hashed, in
 * `digests` and `times`), n of them; *done: the keys answered, all n unless a key was
 * refused (a sliced filter, which has no saved state, reports none then). */
static once_status answer_keys(run *r, const once_key *keys, const once_digest *digests,
                               const uint64_t *times, size_t n, uint8_t *seen, size_t *done)
{
    if (of_sites(r)) {
        once_status st = r->cluster != NULL
                             ? once_cluster_test_and_add_batch(r->cluster, keys, n, seen)
                             : once_sliced_test_and_add_batch(r->sliced, keys, n, seen);
        *done = st == ONCE_OK ? n : 0;
        return st;
    }
    if (digests != NULL)
        return once_test_and_add_digest_batch_partial(r->filter, digests, times, n, seen, done);
    return once_test_and_add_batch_partial(r->filter, keys, n, seen, done);
}

/* The answer stage: the batch's event times against the clock, in order, as the
 * --on-bad-time policy says; the filter's answers; the lines counted.  Returns 0, or an
 * exit code after printing why (the lines answered before are still written). */
static int answer_batch(void *context, void *batch, double *phases)
{
    input_run *in = context;
    run *r = in->r;
    const cli_options *o = r->options;
    line_batch *b = batch;
    const char *name = in->name;
    double mark = monotonic_seconds();
    /* One batch answers at a time: its gathered keys and answers can be the run's. */
    static once_key keys[BATCH_LINES];
    static once_digest digests[BATCH_LINES];
    static uint64_t times[BATCH_LINES];
    static uint8_t seen[BATCH_LINES];
    line_action *action = b->action;
    size_t n = b->n;
    int code = 0;
    uint64_t wall = r->timed && !o->time_field ? wall_clock_ms() : 0;
    uint64_t clock = 0;
    bool clock_started = false;
    if (r->timed && o->time_field && !of_sites(r))
        once_clock(r->filter, &clock, &clock_started);
    else if (r->timed && o->time_field) {
        clock = r->sliced_clock;
        clock_started = r->sliced_clock_started;
    }
    /* A time more than --max-time-jump ahead of the wall clock is a bad time even on the
     * first line, which no earlier time bounds: a replay of old logs is never ahead of
     * the wall clock, and one outlier must not carry the clock decades ahead and keep
     * every later key "seen" until then. */
    uint64_t jump = o->max_time_jump_ms;
    uint64_t ahead_limit = UINT64_MAX;
    if (r->timed && o->time_field && jump != 0)
        ahead_limit = wall_clock_ms() + jump;
    size_t good = 0;
    const once_key *answer_keys_of = keys;
    const once_digest *answer_digests = threaded(in) ? digests : NULL;
    const uint64_t *answer_times = times;
    size_t judged = n; /* the lines the loop below judges and gathers */
    if (!(r->timed && o->time_field) && b->keyed == n) {
        /* Every line's key goes to the filter as it is, at the wall clock's time (0
         * without a time window): no line to judge and nothing to gather.  (LINE_FILTER
         * is 0.) */
        r->counters.input_bytes += b->bytes;
        in->line_number += n;
        memset(action, 0, n * sizeof *action);
        answer_keys_of = b->keys;
        answer_digests = threaded(in) ? b->digests : NULL;
        answer_times = NULL;
        if (wall != 0) {
            for (size_t i = 0; i < n; i++)
                b->keys[i].time_ms = times[i] = wall;
            answer_times = times;
        }
        good = n;
        judged = 0;
    }
    for (size_t i = 0; i < judged; i++) {
        r->counters.input_bytes += b->lines[i].len + 1;
        in->line_number++;
        action[i] = LINE_FILTER;
        uint64_t when = wall;
        if (r->timed && o->time_field) {
            int time_status = b->time_status[i];
            when = b->when[i];
            bool parsed = time_status == 0;
            bool future = parsed && when > ahead_limit;
            uint64_t before = clock;
            /* A time the window's clock would refuse (too far ahead) is a bad time too;
             * the step tracks the clock through the batch as the filter will. */
            if (!parsed || future || !clock_step(r, &clock, &clock_started, when)) {
                r->counters.bad_time++;
                if (o->on_bad_time == BAD_TIME_FAIL) {
                    char t1[EVENT_TIME_TEXT], t2[EVENT_TIME_TEXT];
                    if (time_status == TIME_BEFORE_1970)
                        fprintf(stderr,
                                "once: %s:%llu: the time in field %u is before 1970, "
                                "which the windows' clock cannot hold (--on-bad-time skip "
                                "or keep to go on)\n",
                                name, (unsigned long long)in->line_number, o->time_field);
                    else if (!parsed)
                        fprintf(stderr,
                                "once: %s:%llu: cannot read a time from field %u "
                                "(--on-bad-time skip or keep to go on)\n",
                                name, (unsigned long long)in->line_number, o->time_field);
                    else /* too far ahead of the wall clock, or of the latest time */
                        fprintf(stderr,
                                "once: %s:%llu: time %s is more than --max-time-jump ahead "
                                "of %s, %s%s (%s--on-bad-time skip or keep to go on)\n",
                                name, (unsigned long long)in->line_number,
                                format_event_time(when, o->time_format, t1),
                                future ? "the wall clock" : "the latest event time",
                                format_event_time(future ? ahead_limit - jump : clock,
                                                  o->time_format, t2),
                                future && o->time_format == TIME_EPOCH &&
                                        when / 1000 <= ahead_limit
                                    ? "; if the field holds milliseconds, use --time-format "
                                      "epoch_ms"
                                    : "",
                                future ? "" : "--max-time-jump to allow it; ");
                    code = EXIT_IO;
                    n = i; /* lines before it are still answered and written */
                    break;
                }
                action[i] = o->on_bad_time == BAD_TIME_SKIP ? LINE_SKIP : LINE_KEEP;
                continue;
            }
            /* Late: older than the clock (as it was before this line) minus the span. */
            r->counters.late += when < before && before - when > o->span_ms;
        }
        if (i >= b->keyed) {
            fprintf(stderr, "once: out of memory\n");
            code = EXIT_IO;
            n = i;
            break;
        }
        keys[good] = b->keys[i];
        keys[good].time_ms = when;
        if (threaded(in)) {
            digests[good] = b->digests[i];
            times[good] = when;
        }
        good++;
    }
    size_t done = 0;
    once_status st =
        answer_keys(r, answer_keys_of, answer_digests, answer_times, good, seen, &done);
    if (of_sites(r) && r->timed && o->time_field) {
        r->sliced_clock = clock;
        r->sliced_clock_started = clock_started;
    }
    if (st != ONCE_OK) {
        /* The keys before the refused one took effect: their lines are answered and
         * written as any, so that what a saved state holds is what was written. */
        size_t answered = lines_before_key(action, n, done);
        uint64_t refused_line = in->line_number - n + 1 + answered;
        if (st == ONCE_ERR_FULL && r->sliced != NULL)
            report_sliced_full(name, refused_line, r->sliced, sliced_memory_cap(o));
        else if (st == ONCE_ERR_FULL && r->filter != NULL)
            report_full(name, refused_line, r->filter, o->max_memory, o->state_path != NULL);
        else
            fprintf(stderr, "once: %s:%llu: filter error: %s\n", name,
                    (unsigned long long)refused_line, once_strerror(st));
        code = EXIT_IO;
        n = answered;
    }
    /* The filter's answers, one a key, to the lines: a filtered line is a duplicate if
     * its key was seen; a kept or skipped line is none. */
    uint64_t duplicates = 0;
    for (size_t i = 0, j = 0; i < n; i++) {
        b->duplicate[i] = action[i] == LINE_FILTER ? seen[j++] : 0;
        duplicates += b->duplicate[i];
    }
    b->answered = n;
    b->code = code;
    r->counters.duplicates += duplicates;
    r->counters.lines += n; /* answered, if a write then fails */
    r->counters.distinct = r->counters.lines - r->counters.duplicates - r->counters.bad_time;
    if (code == 0) {
        if (!r->warned_capacity)
            warn_if_overfull(r);
        if (r->progress && (r->counters.lines & 0xFFFF) < n) {
            double now = monotonic_seconds();
            if (now - r->last_progress >= 0.5) {
                r->last_progress = now;
                report_progress(&r->counters, run_bytes(r), now - r->started);
            }
        }
    }
    phase_done(phases, PHASE_DECIDE, &mark);
    return code;
}

/* Is the answered line i printed (-D prints the duplicates, --card none)? */
static bool printed(const cli_options *o, const line_batch *b, size_t i)
{
    return b->action[i] != LINE_SKIP && !o->card && b->duplicate[i] == o->print_duplicates;
}

/* The write stage: the answered lines that are printed, written in order.  Returns the
 * answer's code, or EXIT_IO once a write failed (said once), after which every printed
 * line answered, this batch's and the later ones', counts as unwritten. */
static int write_batch(void *context, void *batch, double *phases)
{
    input_run *in = context;
    run *r = in->r;
    const cli_options *o = r->options;
    const line_batch *b = batch;
    double mark = monotonic_seconds();
    bool failed_before = r->out.error != 0;
    size_t i = 0;
    if (!failed_before)
        for (; i < b->answered; i++)
            if (printed(o, b, i) && writer_line(&r->out, b->lines[i].data, b->lines[i].len) != 0) {
                r->unwritten = r->out.pending; /* and this line and the printed ones after */
                break;
            }
    if (r->out.error) {
        for (; i < b->answered; i++)
            r->unwritten += printed(o, b, i);
        if (!failed_before)
            fprintf(stderr, "once: write error: %s\n", strerror(r->out.error));
        phase_done(phases, PHASE_WRITE, &mark);
        return EXIT_IO;
    }
    phase_done(phases, PHASE_WRITE, &mark);
    return b->code;
}

/* Batches a pipeline keeps in flight for each thread: enough that a thread finding the
 * keys of one never waits for a slot while another batch is answered. */
#define BATCHES_PER_THREAD 4

/* The executor of a sharded filter on a pipeline: its shards' tasks on the threads. */
static void fork_shards(void *context, once_task_fn task, void *task_context, size_t count)
{
    pipeline_fork(context, task, task_context, count);
}

/* Stream one input on threads (--threads): the stages above on a pipeline.  Returns
 * its code, or -1 if the threads could not be had (nothing was read then). */
static int run_threaded(input_run *in)
{
    run *r = in->r;
    size_t slots = (size_t)r->counters.threads * BATCHES_PER_THREAD;
    line_batch *batches = calloc(slots, sizeof *batches);
    void **batch = calloc(slots, sizeof *batch);
    int code = -1;
    if (batches != NULL && batch != NULL) {
        for (size_t i = 0; i < slots; i++)
            batch[i] = &batches[i];
        pipeline_stages stages = {in,          read_batch,   find_keys, answer_batch,
                                  write_batch, flush_output, PHASES, PHASE_DECIDE};
        in->pipe = pipeline_new(&stages, batch, slots, r->counters.threads);
        if (in->pipe != NULL) {
            /* A sharded filter answers a batch's shards on all the threads. */
            once_executor executor = {fork_shards, in->pipe};
            if (r->filter != NULL)
                (void)once_set_executor(r->filter, &executor); /* not sharded: nothing */
            code = pipeline_run(in->pipe, r->counters.phase_seconds);
            if (r->filter != NULL)
                (void)once_set_executor(r->filter, NULL);
        }
        pipeline_free(in->pipe);
        in->pipe = NULL;
    }
    for (size_t i = 0; batches != NULL && i < slots; i++) {
        free(batches[i].copy);
        key_arena_free(&batches[i].arena);
    }
    free(batches);
    free(batch);
    return code;
}

/* Stream one input.  Returns 0, or an exit code after printing why. */
static int run_input(run *r, const char *path)
{
    const cli_options *o = r->options;
    input_run in = {.r = r, .name = path ? path : "-"};
    if (reader_open(&in.reader, path, o->terminator) != 0) {
        fprintf(stderr, "once: %s: %s\n", in.name, strerror(errno));
        r->input_failed = true;
        return 0;
    }
    in.reader.before_block = flush_before_block;
    in.reader.context = &in;
    in.reader.stop_signals = &stop_signals;
    in.reader.stop_flag = &stop_signal;
    int code = -1;
    if (r->counters.threads > 1) {
        code = run_threaded(&in);
        if (code == -1) { /* nothing was read */
            fprintf(stderr, "once: cannot start %u threads; going on with one\n",
                    r->counters.threads);
            r->counters.threads = 1;
            r->counters.phase_seconds[PHASE_HASH] = -1;
        }
    }
    if (code == -1) {
        line_batch *b = &serial_batch;
        code = 0;
        for (;;) {
            pipeline_read rd = read_batch(&in, b, r->counters.phase_seconds);
            if (rd == PIPELINE_AGAIN)
                continue;
            if (rd == PIPELINE_END)
                break;
            find_keys(&in, b, r->counters.phase_seconds);
            (void)answer_batch(&in, b, r->counters.phase_seconds); /* its code, b->code */
            code = write_batch(&in, b, r->counters.phase_seconds);
            if (code != 0)
                break;
        }
    }
    reader_close(&in.reader);
    if (code != 0)
        return code;
    if (in.too_long) {
        fprintf(stderr, "once: %s: a line is longer than %zu bytes\n", in.name, LINE_MAX_BYTES);
        return EXIT_IO;
    }
    if (in.read_failed) { /* the run goes on with the other inputs, and fails at the end */
        fprintf(stderr, "once: %s: %s\n", in.name, strerror(in.read_errno));
        r->input_failed = true;
    }
    return 0;
}

int main(int argc, char **argv)
{
    cli_options o;
    int code = options_parse(&o, argc, argv);
    if (code != 0)
        return code < 0 ? 0 : code;

    /* once card --state: estimate each saved filter, change nothing, read no input. */
    if (o.card && o.state_count > 0)
        return card_states(&o);
    /* once card FILE counts FILE's lines: a saved filter given so would be counted as
     * text, a bogus estimate; say what was meant instead. */
    for (size_t i = 0; o.card && i < o.input_count; i++)
        if (is_saved_filter(o.inputs[i])) {
            fprintf(stderr,
                    "once: %s is a saved filter, not a stream of lines: once card --state %s "
                    "estimates it\n",
                    o.inputs[i], o.inputs[i]);
            return EXIT_USAGE;
        }

    install_signals(o.state_path != NULL);
    /* The state is this run's from before the load to after the save, and a path that
     * cannot be saved is refused now, before any input is read. */
    state_lock lock = {.fd = -1, .path = NULL};
    if (o.state_path && state_lock_acquire(o.state_path, &lock) != 0)
        return EXIT_IO;
    run r;
    memset(&r, 0, sizeof r);
    r.options = &o;
    code = o.cluster ? open_cluster(&o, &r)
           : o.sliced ? open_sliced(&o, &r.sliced)
                      : open_filter(&o, &r.filter);
    if (code != 0) {
        state_lock_release(&lock);
        return code;
    }
    /* --threads without --slicing: the lines' stages on a pipeline of that many threads,
     * the filter's answers in input order (the sliced filter's threads are its sites). */
    r.counters.threads = r.filter != NULL && o.threads > 1 ? o.threads : 1;
    r.seed = r.filter != NULL ? once_seed(r.filter) : 0;
    /* On one thread the filter's calls hash the keys, within deciding. */
    r.counters.phase_seconds[PHASE_HASH] = r.counters.threads > 1 ? 0 : -1;
    if (writer_init(&r.out, STDOUT_FILENO, OUTPUT_BUFFER_BYTES, o.terminator) != 0) {
        fprintf(stderr, "once: out of memory\n");
        once_free(r.filter);
        close_sliced(&r);
        state_lock_release(&lock);
        return EXIT_IO;
    }
    /* Event times go by the stream's own clock, with the jump bound of the options
     * (restated each run: it is how the run reads time, not what the state holds); the
     * clock at reading is taken as it is.  The option is in range (options.c); filters
     * without a clock answer ONCE_ERR_UNSUPPORTED, which leaves nothing to do. */
    if (r.filter != NULL)
        (void)once_set_max_time_jump(r.filter, o.time_field ? o.max_time_jump_ms : 0);
    once_type type = r.filter != NULL ? once_get_type(r.filter) : ONCE_STANDARD;
    once_kind kind = once_structure_of(type)->kind;
    if (of_sites(&r) && (o.span_given || o.window_given))
        kind = o.span_given ? ONCE_KIND_TIME_WINDOW : ONCE_KIND_COUNT_WINDOW;
    r.fixed_size = kind == ONCE_KIND_STATIC;
    r.rows_add_up = r.filter != NULL && (type == ONCE_DBF || type == ONCE_DBPBF);
    r.timer = r.filter != NULL && type == ONCE_TIMER;
    r.timed = kind == ONCE_KIND_TIME_WINDOW;
    r.progress = o.progress == PROGRESS_ON || (o.progress == PROGRESS_AUTO && isatty(STDERR_FILENO));
    r.started = r.last_progress = monotonic_seconds();

    if (o.input_count == 0) {
        code = run_input(&r, NULL);
    } else {
        for (size_t i = 0; i < o.input_count && code == 0 && !stop_signal; i++)
            code = run_input(&r, o.inputs[i]);
    }
    /* Lines already answered are written even when the run then fails. */
    if ((r.out.error || writer_flush(&r.out) != 0) && code == 0) {
        fprintf(stderr, "once: write error: %s\n", strerror(r.out.error));
        r.unwritten = r.out.pending;
        code = EXIT_IO;
    }
    if (code == 0 && r.input_failed)
        code = EXIT_IO; /* each was reported */
    r.counters.seconds = monotonic_seconds() - r.started;
    if (r.progress)
        report_progress_done();
    /* Many late lines mean the input is out of order, or the time field is not the
     * event time: each was answered as of the latest time, not its own. */
    if (r.counters.late * 100 > r.counters.lines)
        fprintf(stderr,
                "once: warning: %llu of %llu lines (%.1f%%) were late, older than the latest "
                "event time minus the span; each was taken at the latest time (is the input "
                "in time order, and --time-field its event time?)\n",
                (unsigned long long)r.counters.late, (unsigned long long)r.counters.lines,
                100.0 * (double)r.counters.late / (double)r.counters.lines);

    /* Whatever ended the run, the state is saved as of the last line answered, so that
     * a rerun on the rest of the input delivers no line twice; a run that stopped early
     * says so, and how many lines a failed write may have lost. */
    if (o.state_path) {
        bool saved = state_save(o.state_path, r.filter) == 0;
        if (!saved && code == 0)
            code = EXIT_IO;
        if (code != 0 || stop_signal)
            report_state_kept(o.state_path, saved, r.counters.lines, r.unwritten);
    }
    state_lock_release(&lock);
    if (code == 0 && r.cluster != NULL)
        report_cluster_stats(o.stats, &r.counters, r.cluster);
    else if (code == 0 && r.sliced != NULL)
        report_sliced_stats(o.stats, &r.counters, r.sliced);
    else if (code == 0)
        report_stats(o.stats, &r.counters, r.filter);
    if (code == 0 && o.card) {
        code = card_print(&o, o.input_count == 1 ? o.inputs[0] : o.input_count ? "(inputs)" : "-",
                          r.filter);
        if (fflush(stdout) != 0 && code == 0)
            code = EXIT_IO;
    }
    if (code == 0 && stop_signal)
        code = 128 + stop_signal;

    writer_free(&r.out);
    key_arena_free(&serial_batch.arena);
    once_free(r.filter);
    close_sliced(&r);
    return code;
}
