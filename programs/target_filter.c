/*
 * target_filter.c - the library's filter as the run's target (target.h): one
 * once_filter, or one in shards (once_create_sharded) answered on the pipeline's
 * threads, built from the options or loaded from --state and saved back to it.
 *
 * The filter keeps its own clock, so the clock ops read it (once_clock) and step a copy
 * through a batch by its rule (once_clock_step); the batch's keys then move the
 * filter's.  A loaded state wins over the options that contradict it (a usage error),
 * and the options it was made with (its profile, profile.c) fill in the ones not given;
 * the profile is written back into the filter so that the saved state keeps it.
 * Invariant: whatever the outcome of open, the filter is either the target's (open
 * returned 0) or freed.
 */
#include "card.h"
#include "profile.h"
#include "recipe.h"
#include "report.h"
#include "state.h"
#include "target.h"

#include "once_math.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The loaded state's first parameter the options contradict (NULL: none). */
static const char *state_conflict(const cli_options *o, const once_filter *f,
                                  const once_stats *s)
{
    if (o->type_given && o->type != s->type)
        return "--filter";
    if (o->capacity_given && o->capacity != s->capacity)
        return "--capacity";
    if (o->window_given && (o->window != s->capacity || s->window == 0 || s->span_ms))
        return "--window";
    if (o->span_given && o->span_ms != s->span_ms)
        return "--span";
    if (o->lag_given && o->lag_ms != s->lag_ms)
        return "--lag";
    if (!o->window_given && !o->span_given && s->window != 0 && o->type_given)
        return "--filter";
    if (o->error_given && o->error != s->error)
        return "--error";
    if (o->seed_given && o->seed != s->seed)
        return "--seed";
    if (o->shards_given && o->shards != once_shard_count(f))
        return "--shards";
    return NULL;
}

/* A cap given now applies: the state keeps the one it was saved with only until a run
 * says otherwise (and then saves the new one). */
static int apply_cap(const cli_options *o, once_filter *f, const once_stats *s)
{
    if (!o->max_memory)
        return 0;
    once_status st = once_set_max_bytes(f, o->max_memory);
    if (st == ONCE_ERR_FULL) {
        fprintf(stderr,
                "once: state file '%s' holds %llu bytes, more than --max-memory "
                "%llu: give a larger cap, or none to keep its own (%llu)\n",
                o->state_path, (unsigned long long)once_bytes(f),
                (unsigned long long)o->max_memory, (unsigned long long)once_max_bytes(f));
        return EXIT_USAGE;
    }
    if (st != ONCE_OK) {
        fprintf(stderr,
                "once: --max-memory caps a filter that grows; state file '%s' "
                "holds a %s filter, which does not\n",
                o->state_path, s->structure);
        return EXIT_USAGE;
    }
    return 0;
}

/* The loaded state against the options.  Returns 0 or an exit code. */
static int adopt_state(cli_options *o, once_filter *f)
{
    once_stats s;
    once_get_stats(f, &s);
    const char *conflict = state_conflict(o, f, &s);
    if (conflict) {
        fprintf(stderr,
                "once: %s conflicts with state file '%s' (%s filter, capacity %llu, "
                "error %g); its parameters win: drop the flag or use another file\n",
                conflict, o->state_path, s.structure, (unsigned long long)s.capacity, s.error);
        return EXIT_USAGE;
    }
    int code = check_profile(o, f);
    if (code == 0)
        code = apply_cap(o, f, &s);
    return code;
}

/* A new filter of the options.  Returns 0 or an exit code. */
static int create_filter(const cli_options *o, once_filter **out)
{
    uint64_t guess = !o->capacity_given && o->type == ONCE_SCALABLE ? lines_guess(o) : 0;
    char why[RECIPE_WHY_MAX];
    int code = recipe_create(o, guess, out, why, sizeof why);
    if (code != 0)
        fprintf(stderr, "once: %s\n", why);
    return code;
}

/* Build the filter from the state file or the options.  Returns 0 or an exit code. */
static int open_filter(cli_options *o, once_filter **out)
{
    state_result r = o->state_path ? state_load(o->state_path, out, NULL) : STATE_ABSENT;
    if (r == STATE_FAILED)
        return EXIT_IO;
    int code = r == STATE_LOADED ? adopt_state(o, *out) : create_filter(o, out);
    if (code == 0)
        code = set_profile(o, *out);
    if (code != 0) {
        once_free(*out);
        *out = NULL;
    }
    return code;
}

/* ------------------------------------------------------------- the ops */

/* The filter and what the run's checks of it need. */
typedef struct filter_target {
    once_filter *filter;
    bool fixed_size;  /* a static filter: passing its capacity raises the error rate */
    bool rows_add_up; /* dbf, dbpbf: each row (batch) keeps --error, and their rates add */
    bool timer;       /* the timer filter: a fixed one (saved so) may pass its capacity */
    uint64_t next_overfull_check; /* the timer's items at which to look again */
} filter_target;

static once_filter *filter_of(const target *t)
{
    return ((const filter_target *)t->impl)->filter;
}

static once_status filter_answer(target *t, const once_key *keys, const once_digest *digests,
                                 const uint64_t *times, size_t n, uint8_t *seen, size_t *done)
{
    if (digests != NULL)
        return once_test_and_add_digest_batch_partial(filter_of(t), digests, times, n, seen,
                                                      done);
    return once_test_and_add_batch_partial(filter_of(t), keys, n, seen, done);
}

static void filter_clock(const target *t, uint64_t *clock_ms, bool *started)
{
    (void)once_clock(filter_of(t), clock_ms, started); /* none: left 0, not started */
}

static bool filter_clock_step(const target *t, uint64_t *clock_ms, bool *started, uint64_t when)
{
    return once_clock_step(filter_of(t), clock_ms, started, when);
}

static uint64_t filter_bytes(const target *t)
{
    return once_bytes(filter_of(t));
}

/*
 * Warn once when the filter holds more keys than it was made for and its rate rises
 * past --error: a static filter past its capacity, a dbf or dbpbf opening its second
 * row, or a timer filter of fixed size (saved by a version whose timer filters did not
 * grow) with more keys alive in its span than its capacity.  That last check scans the
 * filter's cells, so it runs once every `capacity` new keys.
 */
static bool filter_warn_overfull(target *t, uint64_t distinct, bool progress)
{
    (void)distinct; /* the filter's own count decides */
    filter_target *ft = t->impl;
    const once_filter *f = ft->filter;
    uint64_t capacity = once_capacity(f);
    if (capacity == 0)
        return false;
    bool over;
    if (ft->fixed_size)
        over = once_overfull(f);
    else if (ft->rows_add_up)
        over = once_items(f) > capacity;
    else if (ft->timer && once_items(f) >= ft->next_overfull_check) {
        ft->next_overfull_check = once_items(f) + capacity;
        over = once_overfull(f);
    } else
        return false;
    if (!over)
        return false;
    if (progress)
        report_progress_done();
    if (ft->fixed_size)
        target_warn_capacity(capacity);
    else if (ft->timer)
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
                (unsigned long long)capacity, once_get_type(f) == ONCE_DBF ? "row" : "batch",
                once_type_name(once_get_type(f)), once_get_type(f) == ONCE_DBF ? "row" : "batch");
    return true;
}

/* What the stats say of the filter beyond its own stats: the distinct keys in it, from
 * its cells, with a 90% interval (time 0: a window counts as of the latest event it
 * saw, see card.c), and its bits per key. */
typedef struct filter_figures {
    once_stats s;
    once_cardinality card;
    bool card_known;
    char card_estimate[32], card_low[32], card_high[32], window_keys[32];
    double bits_per_key;
} filter_figures;

static bool filter_figures_of(const once_filter *filter, filter_figures *x)
{
    if (once_get_stats(filter, &x->s) != ONCE_OK)
        return false;
    const once_stats *s = &x->s;
    x->card_known = once_estimate_cardinality(filter, 0, 0.9, &x->card) == ONCE_OK;
    report_json_number(x->card_estimate, sizeof x->card_estimate, x->card_known,
                       x->card.estimate);
    report_json_number(x->card_low, sizeof x->card_low, x->card_known, x->card.low);
    report_json_number(x->card_high, sizeof x->card_high, x->card_known, x->card.high);
    /* A window holds the keys of its window, not every key it was given: its keys are
     * the estimate in the window.  Bits per key are over the keys held or the design
     * count, whichever is larger, so that a near-empty filter reports what it spends
     * a key at its design size rather than its whole memory over a few keys (a time
     * window's capacity is only a first guess: its keys held are its measure). */
    bool windowed = s->window != 0;
    double held = windowed ? (x->card_known ? x->card.estimate : 0.0) : (double)s->items;
    double design = s->span_ms ? 0.0 : windowed ? (double)s->window : (double)s->capacity;
    double per = held > design ? held : design;
    x->bits_per_key = per > 0 ? (double)s->bytes * 8.0 / per : 0.0;
    report_json_number(x->window_keys, sizeof x->window_keys, windowed && x->card_known,
                       x->card.estimate);
    return true;
}

static void filter_report_json(const filter_figures *x, const run_summary *sum)
{
    const once_stats *s = &x->s;
    const run_counters *c = sum->c;
    fprintf(stderr,
            "{\"lines\":%llu,\"distinct\":%llu,\"duplicates\":%llu,\"bytes\":%llu,"
            "\"bits_per_key\":%.4f,\"fpr_estimate\":%.6g,\"seconds\":%.6f%s,"
            "\"lines_per_second\":%.1f,\"input_bytes\":%llu,\"structure\":\"%s\","
            "\"items\":%llu,\"capacity\":%llu,\"error\":%.6g,\"hashes\":%u,"
            "\"fill_ratio\":%.6f,\"seed\":\"%llu\",\"window\":%llu,\"slack\":%llu,"
            "\"k\":%u,\"l\":%u,\"slices\":%u,\"window_unit\":\"%s\",\"bad_time\":%llu,"
            "\"late\":%llu,\"filters\":%u,\"cardinality_estimate\":%s,\"cardinality_low\":%s,"
            "\"cardinality_high\":%s,\"window_keys\":%s,\"format\":%u,\"probe\":\"%s\","
            "\"shards\":%u,\"lag_ms\":%llu}\n",
            (unsigned long long)c->lines, (unsigned long long)c->distinct,
            (unsigned long long)c->duplicates, (unsigned long long)s->bytes,
            report_finite(x->bits_per_key), report_finite(s->fpr_estimate),
            report_finite(c->seconds), sum->phases, report_finite(sum->rate),
            (unsigned long long)c->input_bytes, s->structure, (unsigned long long)s->items,
            (unsigned long long)s->capacity, report_finite(s->error), s->hashes,
            report_finite(s->fill_ratio), (unsigned long long)s->seed,
            (unsigned long long)s->window, (unsigned long long)s->slack, s->hashes, s->age_slices,
            s->slices, s->span_ms ? "ms" : s->window ? "events" : "none",
            (unsigned long long)c->bad_time, (unsigned long long)c->late, s->filters,
            x->card_estimate, x->card_low, x->card_high, x->window_keys, s->format, s->probe,
            s->shards ? s->shards : 1, (unsigned long long)s->lag_ms);
}

/* A time window's line: its span and what it is made of now. */
static void filter_report_span(const once_stats *s)
{
    char layout[64];
    if (s->type == ONCE_TLBF)
        snprintf(layout, sizeof layout, "k=%u l=%u, %u slices now", s->hashes, s->age_slices,
                 s->slices);
    else
        snprintf(layout, sizeof layout, "%u %s now", s->filters,
                 s->type == ONCE_TAGGED ? (s->filters == 1 ? "table" : "tables")
                                        : (s->filters == 1 ? "sub-filter" : "sub-filters"));
    char lag[48] = "";
    if (s->lag_ms != 0)
        snprintf(lag, sizeof lag, ", lag %.3f s", (double)s->lag_ms / 1000.0);
    fprintf(stderr,
            "once: span %.3f s (slack %.3f s more%s), %s, peak false-positive rate %.3g\n",
            (double)s->span_ms / 1000.0, (double)s->slack / 1000.0, lag, layout, s->design_fpr);
}

static void filter_report_human(const filter_figures *x)
{
    const once_stats *s = &x->s;
    bool windowed = s->window != 0;
    char held_text[96];
    if (windowed)
        snprintf(held_text, sizeof held_text, "%llu keys added, about %s in the window",
                 (unsigned long long)s->items, x->window_keys);
    else
        snprintf(held_text, sizeof held_text, "%llu %s held", (unsigned long long)s->items,
                 s->items == 1 ? "key" : "keys");
    char in_shards[32] = "";
    if (s->shards > 1)
        snprintf(in_shards, sizeof in_shards, " in %u shards", s->shards);
    char size[32];
    report_size(size, sizeof size, s->bytes);
    fprintf(stderr,
            "once: %s filter%s, %s, %s (capacity %llu%s at error %g), "
            "%.2f bits/key, k=%u, fill %.3f, estimated false-positive rate %.3g\n",
            s->structure, in_shards, size, held_text,
            (unsigned long long)(s->span_ms || !windowed ? s->capacity : s->window),
            s->span_ms ? " a span" : "", s->error, x->bits_per_key, s->hashes, s->fill_ratio,
            s->fpr_estimate);
    if (s->format != ONCE_FORMAT_VERSION)
        fprintf(stderr,
                "once: the state was saved in format %u: its keys are placed by the %s probe of "
                "that format, which it keeps (new filters write format %u)\n",
                s->format, s->probe, ONCE_FORMAT_VERSION);
    if (s->span_ms)
        filter_report_span(s);
    if (x->card_known)
        fprintf(stderr, "once: about %s distinct keys in the filter (90%%: %s-%s)\n",
                x->card_estimate, x->card_low,
                isfinite(x->card.high) ? x->card_high : "unbounded");
    if (s->filters > 1 && s->type == ONCE_SCALABLE)
        fprintf(stderr, "once: %u sub-filters, each %ux the keys of the one before\n", s->filters,
                s->expansion);
    if (s->window && !s->span_ms)
        fprintf(stderr,
                "once: window %llu keys (slack %llu more), k=%u l=%u (%u slices of %llu keys a "
                "generation), peak false-positive rate %.3g\n",
                (unsigned long long)s->window, (unsigned long long)s->slack, s->hashes,
                s->age_slices, s->slices, (unsigned long long)s->generation, s->design_fpr);
}

static void filter_report(const target *t, stats_mode mode, const run_summary *sum)
{
    filter_figures x;
    if (!filter_figures_of(filter_of(t), &x))
        return;
    if (mode == STATS_JSON) {
        filter_report_json(&x, sum);
        return;
    }
    report_counts(sum);
    filter_report_human(&x);
}

static void filter_report_full(const target *t, const char *input, uint64_t line)
{
    const cli_options *o = t->options;
    report_full(input, line, filter_of(t), o->max_memory, o->state_path != NULL);
}

static int filter_card(const target *t, const char *name)
{
    return card_print(t->options, name, filter_of(t));
}

static int filter_save(const target *t, const char *path)
{
    return state_save(path, filter_of(t), NULL);
}

static void filter_set_executor(target *t, const once_executor *executor)
{
    (void)once_set_executor(filter_of(t), executor); /* not sharded: nothing to do */
}

static void filter_close(target *t)
{
    once_free(filter_of(t));
}

static const target_ops filter_ops = {
    filter_answer, filter_clock,       filter_clock_step, filter_bytes,
    filter_warn_overfull, filter_report_full, filter_report, filter_card,
    filter_save,   filter_set_executor, filter_close,
};

int target_filter_open(target *t, cli_options *o)
{
    filter_target *ft = target_start(t, &filter_ops, sizeof *ft);
    if (ft == NULL)
        return EXIT_IO;
    int code = open_filter(o, &ft->filter);
    if (code != 0)
        return code;
    /* Event times go by the stream's own clock, with the jump bound of the options
     * (restated each run: it is how the run reads time, not what the state holds); the
     * clock at reading is taken as it is.  The option is in range (options.c); filters
     * without a clock answer ONCE_ERR_UNSUPPORTED, which leaves nothing to do. */
    (void)once_set_max_time_jump(ft->filter, o->time_field ? o->max_time_jump_ms : 0);
    once_type type = once_get_type(ft->filter);
    once_kind kind = once_structure_of(type)->kind;
    ft->fixed_size = kind == ONCE_KIND_STATIC;
    ft->rows_add_up = type == ONCE_DBF || type == ONCE_DBPBF;
    ft->timer = type == ONCE_TIMER;
    /* --threads: the lines' stages on a pipeline of that many threads, the filter's
     * answers in input order. */
    t->threads = o->threads > 1 ? o->threads : 1;
    t->seed = once_seed(ft->filter);
    t->timed = kind == ONCE_KIND_TIME_WINDOW;
    return 0;
}
