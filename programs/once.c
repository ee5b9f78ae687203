/*
 * once.c - the `once` command: print each line whose key was not seen before.
 *
 * Flow: parse options; open the target (target.h: the filter, loaded from the state
 * file or built, a sliced filter, or one over a cluster); stream every input through
 * the reader in batches, extract each line's key, ask the target with one batched
 * test-and-add, and write the lines it calls new (or, with -D, the others) in input
 * order; then save the state and print the summary.  Nothing here depends on which
 * kind of target answers.
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
#include "report.h"
#include "state.h"
#include "target.h"
#include "timefmt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

typedef struct run {
    const cli_options *options;
    target target; /* what answers the keys (target.h) */
    line_writer out;
    run_counters counters;
    bool progress;
    bool warned_capacity;
    bool input_failed; /* an input could not be opened or read: the run fails at the end */
    /* Where the output stopped, for a state that records only the lines written: the
     * input line (counted over the inputs from 0) of the first line in the writer's
     * buffer, and of the first printed line not written once a write failed. */
    uint64_t first_pending;
    uint64_t first_unwritten;
    bool unwritten_known;
    /* A replay (replay_prefix): the lines still to answer, none printed. */
    bool replaying;
    uint64_t replay_left;
    double started, last_progress;
} run;

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
    uint64_t first_line; /* the input line of lines[0], counted over the inputs from 0 */
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
    run *r = in->r;
    if (r->replaying && r->replay_left == 0)
        return PIPELINE_END;
    size_t most = r->replaying && r->replay_left < BATCH_LINES ? (size_t)r->replay_left
                                                                : BATCH_LINES;
    reader_status rs = reader_next(&in->reader, b->lines, most, &b->n);
    if (r->replaying && rs == READER_LINES)
        r->replay_left -= b->n;
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
    bool by_field = r->target.timed && o->time_field;
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
            (void)once_digest_with_seed(r->target.seed, b->keys[i].data, b->keys[i].len,
                                        &b->digests[i]);
        phase_done(phases, PHASE_HASH, &mark);
    }
}

/* The clock a batch's event times are judged by: the target's as the batch starts,
 * stepped through it line by line as the target will step it, and the wall clock's
 * bound (--max-time-jump ahead of it; UINT64_MAX: none). */
typedef struct batch_clock {
    uint64_t clock;
    bool started;
    uint64_t ahead_limit;
} batch_clock;

/* Why line i's time is bad, for --on-bad-time fail (`future`: ahead of the wall clock). */
static void report_bad_time(const input_run *in, const line_batch *b, size_t i,
                            const batch_clock *c, bool future)
{
    const cli_options *o = in->r->options;
    const char *name = in->name;
    unsigned long long line = (unsigned long long)in->line_number;
    uint64_t when = b->when[i];
    char t1[EVENT_TIME_TEXT], t2[EVENT_TIME_TEXT];
    if (b->time_status[i] == TIME_BEFORE_1970)
        fprintf(stderr,
                "once: %s:%llu: the time in field %u is before 1970, which the windows' clock "
                "cannot hold (--on-bad-time skip or keep to go on)\n",
                name, line, o->time_field);
    else if (b->time_status[i] != 0)
        fprintf(stderr,
                "once: %s:%llu: cannot read a time from field %u (--on-bad-time skip or keep "
                "to go on)\n",
                name, line, o->time_field);
    else /* too far ahead of the wall clock, or of the latest time */
        fprintf(stderr,
                "once: %s:%llu: time %s is more than --max-time-jump ahead of %s, %s%s "
                "(%s--on-bad-time skip or keep to go on)\n",
                name, line, format_event_time(when, o->time_format, t1),
                future ? "the wall clock" : "the latest event time",
                format_event_time(future ? c->ahead_limit - o->max_time_jump_ms : c->clock,
                                  o->time_format, t2),
                future && o->time_format == TIME_EPOCH && when / 1000 <= c->ahead_limit
                    ? "; if the field holds milliseconds, use --time-format epoch_ms"
                    : "",
                future ? "" : "--max-time-jump to allow it; ");
}

/* Line i's event time against the clock, which it moves: true if its key goes to the
 * target.  A time that does not parse, is too far ahead of the wall clock, or that the
 * window's clock would refuse (too far ahead of the latest) is a bad time, counted and
 * judged as --on-bad-time says; *fail: the run stops at it (said). */
static bool judge_time(input_run *in, line_batch *b, size_t i, batch_clock *c, bool *fail)
{
    run *r = in->r;
    const cli_options *o = r->options;
    const target *t = &r->target;
    uint64_t when = b->when[i];
    bool parsed = b->time_status[i] == 0;
    bool future = parsed && when > c->ahead_limit;
    uint64_t before = c->clock;
    if (parsed && !future && t->ops->clock_step(t, &c->clock, &c->started, when)) {
        /* Late: older than the clock (as it was before this line) minus the span. */
        r->counters.late += when < before && before - when > o->span_ms;
        return true;
    }
    r->counters.bad_time++;
    if (o->on_bad_time == BAD_TIME_FAIL) {
        report_bad_time(in, b, i, c, future);
        *fail = true;
    }
    b->action[i] = o->on_bad_time == BAD_TIME_SKIP ? LINE_SKIP : LINE_KEEP;
    return false;
}

/* The keys a batch gives the target: its own (every line filtered as it is) or those of
 * its good lines gathered; with threads their digests and times instead. */
typedef struct batch_keys {
    const once_key *keys;
    const once_digest *digests;
    const uint64_t *times;
    size_t count;
} batch_keys;

/* One batch answers at a time: its gathered keys and answers can be the run's. */
static once_key gathered_keys[BATCH_LINES];
static once_digest gathered_digests[BATCH_LINES];
static uint64_t gathered_times[BATCH_LINES];
static uint8_t answers[BATCH_LINES];

/* Judge the batch's lines in order and gather the keys of those the target answers.
 * Returns 0, or an exit code after printing why, with *n cut to the lines before the
 * one that stopped the batch (they are still answered and written). */
static int gather_keys(input_run *in, line_batch *b, uint64_t wall, batch_keys *k, size_t *n)
{
    run *r = in->r;
    bool by_field = r->target.timed && r->options->time_field;
    batch_clock c = {0, false, UINT64_MAX};
    if (by_field)
        r->target.ops->clock(&r->target, &c.clock, &c.started);
    /* A time more than --max-time-jump ahead of the wall clock is a bad time even on the
     * first line, which no earlier time bounds: a replay of old logs is never ahead of
     * the wall clock, and one outlier must not carry the clock decades ahead and keep
     * every later key "seen" until then. */
    if (by_field && r->options->max_time_jump_ms != 0)
        c.ahead_limit = wall_clock_ms() + r->options->max_time_jump_ms;
    *k = (batch_keys){gathered_keys, threaded(in) ? gathered_digests : NULL, gathered_times, 0};
    for (size_t i = 0; i < *n; i++) {
        r->counters.input_bytes += b->lines[i].len + 1;
        in->line_number++;
        b->action[i] = LINE_FILTER;
        uint64_t when = by_field ? b->when[i] : wall;
        bool fail = false;
        if (by_field && !judge_time(in, b, i, &c, &fail)) {
            if (!fail)
                continue;
            *n = i;
            return EXIT_IO;
        }
        if (i >= b->keyed) {
            fprintf(stderr, "once: out of memory\n");
            *n = i;
            return EXIT_IO;
        }
        gathered_keys[k->count] = b->keys[i];
        gathered_keys[k->count].time_ms = when;
        if (threaded(in)) {
            gathered_digests[k->count] = b->digests[i];
            gathered_times[k->count] = when;
        }
        k->count++;
    }
    return 0;
}

/* Every line's key goes to the target as it is, at the wall clock's time (0 without a
 * time window): no line to judge and nothing to gather.  (LINE_FILTER is 0.) */
static void take_keys(input_run *in, line_batch *b, uint64_t wall, batch_keys *k)
{
    size_t n = b->n;
    in->r->counters.input_bytes += b->bytes;
    in->line_number += n;
    memset(b->action, 0, n * sizeof *b->action);
    *k = (batch_keys){b->keys, threaded(in) ? b->digests : NULL, NULL, n};
    if (wall != 0) {
        for (size_t i = 0; i < n; i++)
            b->keys[i].time_ms = gathered_times[i] = wall;
        k->times = gathered_times;
    }
}

/* The target's answers for the keys.  Returns 0, or EXIT_IO after printing why, with *n
 * cut to the lines before the refused key: the keys before it took effect, so their
 * lines are answered and written as any, and what a saved state holds is what was
 * written. */
static int answer_keys(input_run *in, const line_batch *b, const batch_keys *k, size_t *n)
{
    target *t = &in->r->target;
    size_t done = 0;
    once_status st = t->ops->answer(t, k->keys, k->digests, k->times, k->count, answers, &done);
    if (st == ONCE_OK)
        return 0;
    size_t answered = lines_before_key(b->action, *n, done);
    uint64_t refused_line = in->line_number - *n + 1 + answered;
    if (st == ONCE_ERR_FULL)
        t->ops->report_full(t, in->name, refused_line);
    else
        fprintf(stderr, "once: %s:%llu: filter error: %s\n", in->name,
                (unsigned long long)refused_line, once_strerror(st));
    *n = answered;
    return EXIT_IO;
}

/* The answers, one a key, to the batch's first n lines (a filtered line is a duplicate
 * if its key was seen; a kept or skipped line is none), counted; then the run's
 * warning and progress. */
static void take_answers(input_run *in, line_batch *b, size_t n, int code)
{
    run *r = in->r;
    uint64_t duplicates = 0;
    for (size_t i = 0, j = 0; i < n; i++) {
        b->duplicate[i] = b->action[i] == LINE_FILTER ? answers[j++] : 0;
        duplicates += b->duplicate[i];
    }
    b->answered = n;
    b->code = code;
    b->first_line = r->counters.lines;
    r->counters.duplicates += duplicates;
    r->counters.lines += n; /* answered, if a write then fails */
    r->counters.distinct = r->counters.lines - r->counters.duplicates - r->counters.bad_time;
    if (code != 0)
        return;
    if (!r->warned_capacity)
        r->warned_capacity =
            r->target.ops->warn_overfull(&r->target, r->counters.distinct, r->progress);
    if (r->progress && (r->counters.lines & 0xFFFF) < n) {
        double now = monotonic_seconds();
        if (now - r->last_progress >= 0.5) {
            r->last_progress = now;
            report_progress(&r->counters, r->target.ops->bytes(&r->target), now - r->started);
        }
    }
}

/* The answer stage: the batch's event times against the clock, in order, as the
 * --on-bad-time policy says; the target's answers; the lines counted.  Returns 0, or an
 * exit code after printing why (the lines answered before are still written). */
static int answer_batch(void *context, void *batch, double *phases)
{
    input_run *in = context;
    run *r = in->r;
    line_batch *b = batch;
    double mark = monotonic_seconds();
    bool by_field = r->target.timed && r->options->time_field;
    uint64_t wall = r->target.timed && !by_field ? wall_clock_ms() : 0;
    size_t n = b->n;
    batch_keys k;
    int code = 0;
    if (!by_field && b->keyed == n)
        take_keys(in, b, wall, &k);
    else
        code = gather_keys(in, b, wall, &k, &n);
    int answered = answer_keys(in, b, &k, &n);
    take_answers(in, b, n, answered != 0 ? answered : code);
    phase_done(phases, PHASE_DECIDE, &mark);
    return b->code;
}

/* Is the answered line i printed (-D prints the duplicates, --card none)? */
static bool printed(const cli_options *o, const line_batch *b, size_t i)
{
    return b->action[i] != LINE_SKIP && !o->card && b->duplicate[i] == o->print_duplicates;
}

/* The write stage: the answered lines that are printed, written in order.  Returns the
 * answer's code, or EXIT_IO once a write failed (said once), noting the first input
 * line not written (a state then records the lines before it alone). */
static int write_batch(void *context, void *batch, double *phases)
{
    input_run *in = context;
    run *r = in->r;
    const cli_options *o = r->options;
    const line_batch *b = batch;
    double mark = monotonic_seconds();
    bool failed_before = r->out.error != 0;
    size_t i = 0;
    if (!failed_before && !r->replaying)
        for (; i < b->answered; i++) {
            if (!printed(o, b, i))
                continue;
            uint64_t pending = r->out.pending, line = b->first_line + i;
            if (writer_line(&r->out, b->lines[i].data, b->lines[i].len) != 0) {
                r->first_unwritten = pending > 0 ? r->first_pending : line;
                r->unwritten_known = true;
                break;
            }
            if (r->out.pending == 1) /* the buffer's first line */
                r->first_pending = line;
        }
    if (r->out.error) {
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
            r->target.ops->set_executor(&r->target, &executor);
            code = pipeline_run(in->pipe, r->counters.phase_seconds);
            r->target.ops->set_executor(&r->target, NULL);
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

/* Can the inputs be read again from where the run began?  Regular files only, stdin
 * (no inputs, or "-") from its offset at the start. */
static bool inputs_rereadable(const cli_options *o, off_t stdin_start)
{
    struct stat st;
    if (o->input_count == 0)
        return stdin_start >= 0 && fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode);
    for (size_t i = 0; i < o->input_count; i++) {
        bool is_stdin = strcmp(o->inputs[i], "-") == 0;
        if (is_stdin ? stdin_start < 0 || fstat(STDIN_FILENO, &st) != 0
                     : stat(o->inputs[i], &st) != 0)
            return false;
        if (!S_ISREG(st.st_mode))
            return false;
    }
    return true;
}

/*
 * After the output failed: a state that records only the lines written.  The state on
 * disk is as before the run (the lock is held), so a target of its own loads it and
 * answers the inputs read again, from their start up to the first line not written,
 * printing nothing; that target's filter is saved.  The run's own filter holds the
 * lines answered after, which no reader got.  Returns 0 with the state saved, or an
 * exit code after printing why.
 */
static int replay_written(cli_options *o, uint64_t lines, off_t stdin_start)
{
    if (stdin_start >= 0 && lseek(STDIN_FILENO, stdin_start, SEEK_SET) != stdin_start)
        return EXIT_IO;
    run r;
    memset(&r, 0, sizeof r);
    r.options = o;
    r.replaying = true;
    r.replay_left = lines;
    r.warned_capacity = true; /* said once, by the run */
    int code = target_open(&r.target, o);
    int sink = code == 0 ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
    if (code == 0 && (sink < 0 || writer_init(&r.out, sink, 4096, o->terminator) != 0))
        code = EXIT_IO;
    r.counters.threads = 1;
    r.counters.phase_seconds[PHASE_HASH] = -1;
    r.started = r.last_progress = monotonic_seconds();
    if (o->input_count == 0 && code == 0)
        code = run_input(&r, NULL);
    for (size_t i = 0; i < o->input_count && code == 0 && r.replay_left > 0; i++)
        code = run_input(&r, o->inputs[i]);
    if (code == 0 && (r.input_failed || r.replay_left != 0))
        code = EXIT_IO; /* the inputs changed since */
    if (code == 0 && r.target.ops->save(&r.target, o->state_path) != 0)
        code = EXIT_IO;
    if (sink >= 0) {
        writer_free(&r.out);
        close(sink);
    }
    target_close(&r.target);
    return code;
}

int main(int argc, char **argv)
{
    cli_options o;
    int code = options_parse(&o, argc, argv);
    if (code > 0 && options_error()[0] != '\0')
        fprintf(stderr, "once: %s\nTry 'once --help' for more information.\n", options_error());
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
    char *state_path = NULL; /* a link's target: the file locked, loaded and replaced */
    if (o.state_path && (state_path = state_resolve(o.state_path, NULL)) == NULL)
        return EXIT_IO;
    if (state_path != NULL)
        o.state_path = o.state_paths[0] = state_path;
    if (o.state_path && state_lock_acquire(o.state_path, &lock, NULL) != 0) {
        free(state_path);
        return EXIT_IO;
    }
    if (o.state_path)
        state_remove_stale_temporaries(o.state_path);
    run r;
    memset(&r, 0, sizeof r);
    r.options = &o;
    code = target_open(&r.target, &o);
    if (code != 0) {
        target_close(&r.target);
        state_lock_release(&lock);
        free(state_path);
        return code;
    }
    /* The lines' stages on a pipeline of the target's threads, its answers in input
     * order; on one thread the target's calls hash the keys, within deciding. */
    r.counters.threads = r.target.threads;
    r.counters.phase_seconds[PHASE_HASH] = r.counters.threads > 1 ? 0 : -1;
    if (writer_init(&r.out, STDOUT_FILENO, OUTPUT_BUFFER_BYTES, o.terminator) != 0) {
        fprintf(stderr, "once: out of memory\n");
        target_close(&r.target);
        state_lock_release(&lock);
        free(state_path);
        return EXIT_IO;
    }
    r.progress = o.progress == PROGRESS_ON || (o.progress == PROGRESS_AUTO && isatty(STDERR_FILENO));
    r.started = r.last_progress = monotonic_seconds();
    off_t stdin_start = lseek(STDIN_FILENO, 0, SEEK_CUR); /* -1: not a file to read again */

    if (o.input_count == 0) {
        code = run_input(&r, NULL);
    } else {
        for (size_t i = 0; i < o.input_count && code == 0 && !stop_signal; i++)
            code = run_input(&r, o.inputs[i]);
    }
    /* Lines already answered are written even when the run then fails. */
    if ((r.out.error || writer_flush(&r.out) != 0) && code == 0) {
        fprintf(stderr, "once: write error: %s\n", strerror(r.out.error));
        code = EXIT_IO;
    }
    if (r.out.error && !r.unwritten_known) { /* a flush failed: its buffer went nowhere */
        r.first_unwritten = r.out.pending > 0 ? r.first_pending : r.counters.lines;
        r.unwritten_known = true;
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
     * says so.  After a failed write, as of the last line written instead: from the
     * inputs read again when they can be, else not at all (the lines written will be
     * delivered again, none is recorded that was not). */
    if (o.state_path && r.out.error) {
        bool again = inputs_rereadable(&o, stdin_start);
        int replayed = again ? replay_written(&o, r.first_unwritten, stdin_start) : EXIT_IO;
        report_state_after_write_error(o.state_path, replayed == 0, again, r.first_unwritten,
                                       r.counters.lines - r.first_unwritten);
    } else if (o.state_path) {
        bool saved = r.target.ops->save(&r.target, o.state_path) == 0;
        if (!saved && code == 0)
            code = EXIT_IO;
        if (code != 0 || stop_signal)
            report_state_kept(o.state_path, saved, r.counters.lines);
    }
    state_lock_release(&lock);
    if (code == 0)
        report_stats(o.stats, &r.counters, &r.target);
    if (code == 0 && o.card) {
        code = r.target.ops->card(&r.target, o.input_count == 1 ? o.inputs[0]
                                             : o.input_count   ? "(inputs)"
                                                               : "-");
        if (fflush(stdout) != 0 && code == 0)
            code = EXIT_IO;
    }
    if (code == 0 && stop_signal)
        code = 128 + stop_signal;

    writer_free(&r.out);
    key_arena_free(&serial_batch.arena);
    target_close(&r.target);
    free(state_path);
    return code;
}
