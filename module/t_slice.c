/*
 * module/t_slice.c - SLICE.*: one slice of a filter sliced over a Redis Cluster (paper
 * 000, section 3; the producers are cluster/'s client, docs/CLUSTER.md).
 *
 * Design
 *   A key holds one slice (ONCE_SLICE, once_sliced.h "Slices kept apart"): bits, or
 *   timers with a window, with dynamic size if asked.  The producers place every
 *   event's positions themselves and send one SLICE.RUN a slice per batch, its
 *   requests packed in one binary argument (slice/wire.c), so a message carries many
 *   events (a message costs the server more than an item).  The requests run in order,
 *   atomically, as one command: test, set, or test-and-set, each at its producer's
 *   timestamp, and the reply is one bit a request.
 *
 *   A slice is made explicitly (SLICE.CREATE) and never by a write: a missing slice
 *   answers NOSLICE, an error of its own, so that a node restarted empty, or a slot
 *   moved without its keys, reads as a failed slice to the producer rather than as a
 *   slice holding nothing, which would answer every event new.  SLICE.CREATE of a slice
 *   that exists with the same geometry answers OK (every producer may create the
 *   slices it needs at start), and with another geometry an error naming both.
 *
 *   A whole slice (once_sliced.h, "Whole slices") is a horizontal slice that is a
 *   filter of its own, of any structure but a count window's (whose clock is the
 *   producers'): a tagged window, a blocked or scalable filter.  SLICE.RESERVE makes it (OK again for one alike, as
 *   SLICE.CREATE), and SLICE.TADD test-and-adds a batch of the producers' digests, each
 *   at its own time, atomically, in the memory one node's filter of those keys takes.
 *   The producers pick the slice; the seed only records whose digests they are.  A
 *   count window's slices are tagged windows whose time is the producers' shared count:
 *   SLICE.STAMP adds the lines a test-and-add found new at their places in it, a key
 *   held keeping the later (docs/CLUSTER.md, "Count windows").
 *
 *   Saving, loading, the AOF, DUMP / RESTORE and the SCANDUMP / LOADCHUNK pair are
 *   value.c's, as for every type: a slice is a filter of the library.
 *
 * Replication: every write verbatim (a run depends only on the slice and its
 * arguments: the times are the producers'); a run of tests only is not replicated.  A
 * whole slice's creation is replicated with the memory cap it took here.
 *
 * Invariants
 *   - a malformed or out-of-range request batch is refused whole, the slice unchanged;
 *   - a slice is never created by SLICE.RUN.
 */
#include "command.h"
#include "settings.h"
#include "memory.h"
#include "t_slice.h"
#include "value.h"

#include "once_sliced.h"

#include <stdio.h>
#include <string.h>

#define ERR_NO_SLICE                                                                          \
    "NOSLICE no such slice (slices are made by SLICE.CREATE; a node restarted empty "        \
    "has lost its slices)"
#define ERR_BAD_REQUESTS "ERR malformed slice requests"
#define ERR_OUT_OF_SLICE "ERR slice requests out of range: a position past the slice, or a time"
#define ERR_BAD_EVENTS "ERR malformed slice events"
#define ERR_NOT_WHOLE "ERR the key holds a slice of positions: SLICE.RUN runs it"
#define ERR_NOT_POSITIONS "ERR the key holds a whole slice: SLICE.TADD runs it"

/* The structures a whole slice may be: a filter for its own keys, all time or a time
 * window (a count window's last N are the stream's, not a slice's). */
static bool whole_structure(once_type type)
{
    const once_structure *s = once_structure_of(type);
    return s != NULL && (s->kind == ONCE_KIND_STATIC || s->kind == ONCE_KIND_GROWING ||
                         s->kind == ONCE_KIND_TIME_WINDOW);
}

static bool slice_holds(once_type type)
{
    return type == ONCE_SLICE || whole_structure(type);
}

static value_type slice_type = {.name = "onceslice", .family = "slice", .noun = "slice",
                                .loadchunk = "SLICE.LOADCHUNK", .holds = slice_holds};

typedef struct slice_options {
    once_memory_site_config site;
    uint64_t max_time_jump;
} slice_options;

static once_status slice_make(const void *options, once_filter **out)
{
    const slice_options *o = options;
    once_status st = once_slice_create(out, &o->site);
    if (st == ONCE_OK && (st = once_set_max_time_jump(*out, o->max_time_jump)) != ONCE_OK) {
        once_free(*out);
        *out = NULL;
    }
    return st;
}

/* SLICE.CREATE key BITS m [WINDOW ms] [GROWTH DENSITY|CARDINALITY MAXDENSITY d]
 * [MAXJUMP ms] */
static const char *parse_create(RedisModuleString **argv, int argc, slice_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_time_jump = ONCE_DEFAULT_MAX_TIME_JUMP_MS;
    bool bits_given = false, density_given = false;
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc)
            return "ERR syntax error: a keyword without its value";
        RedisModuleString *v = argv[i + 1];
        if (arg_is(argv[i], "BITS")) {
            if (!arg_unsigned(v, ONCE_SLICE_MAX_BITS, &o->site.bits) || o->site.bits == 0 ||
                o->site.bits % 64 != 0)
                return "ERR bad BITS: a multiple of 64, up to 2^32";
            bits_given = true;
        } else if (arg_is(argv[i], "WINDOW")) {
            if (!arg_unsigned(v, ONCE_MAX_TIME_MS / 2, &o->site.window_ms))
                return "ERR bad WINDOW: milliseconds";
        } else if (arg_is(argv[i], "GROWTH")) {
            if (arg_is(v, "DENSITY"))
                o->site.growth = ONCE_GROWTH_DENSITY;
            else if (arg_is(v, "CARDINALITY"))
                o->site.growth = ONCE_GROWTH_CARDINALITY;
            else if (arg_is(v, "NONE"))
                o->site.growth = ONCE_GROWTH_NONE;
            else
                return "ERR bad GROWTH: NONE, DENSITY or CARDINALITY";
        } else if (arg_is(argv[i], "MAXDENSITY")) {
            if (!arg_double(v, &o->site.max_density) ||
                !(o->site.max_density > 0.0 && o->site.max_density < 1.0))
                return "ERR bad MAXDENSITY: in (0, 1)";
            density_given = true;
        } else if (arg_is(argv[i], "MAXJUMP")) {
            if (!arg_unsigned(v, ONCE_MAX_TIME_MS, &o->max_time_jump))
                return "ERR bad MAXJUMP: milliseconds (0: any)";
        } else {
            return ERR_UNKNOWN_ARGUMENT;
        }
    }
    if (!bits_given)
        return "ERR BITS is required";
    if ((o->site.growth != ONCE_GROWTH_NONE) != density_given)
        return "ERR GROWTH and MAXDENSITY go together";
    return NULL;
}

static bool same_slice(const once_filter *f, const slice_options *o)
{
    once_memory_site_config c;
    return once_slice_config(f, &c) == ONCE_OK && c.bits == o->site.bits &&
           c.window_ms == o->site.window_ms && c.growth == o->site.growth &&
           (c.growth == ONCE_GROWTH_NONE || c.max_density == o->site.max_density) &&
           once_max_time_jump(f) == o->max_time_jump;
}

static int slice_create(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    slice_options o;
    const char *err = parse_create(argv, argc, &o);
    if (err != NULL)
        return RM_ReplyWithError(ctx, err);
    opened_key k = value_open(ctx, argv[1], RM_READ | RM_WRITE, &slice_type);
    once_filter *f = NULL;
    if (k.state == KEY_FOUND) {
        f = value_filter_or_reply(ctx, &k, NULL);
        bool same = f != NULL && same_slice(f, &o);
        value_close(&k);
        if (f == NULL)
            return RM_OK;
        if (!same)
            return RM_ReplyWithError(ctx, "ERR the slice exists with another geometry "
                                          "(SLICE.INFO shows it)");
        return RM_ReplyWithSimpleString(ctx, "OK");
    }
    if (k.state == KEY_WRONGTYPE) {
        value_close(&k);
        return RM_ReplyWithError(ctx, ERR_WRONGTYPE);
    }
    f = value_create(ctx, &k, &slice_type, slice_make, &o, (uint64_t)config.max_memory);
    value_close(&k);
    if (f == NULL)
        return RM_OK;
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* The slice at argv[1] for a run of its kind (a slice of positions, or a whole one),
 * open in k; NULL (k closed, the error replied) when it is missing or of the other. */
static once_filter *open_slice_to_run(RedisModuleCtx *ctx, RedisModuleString *key,
                                      bool whole, opened_key *k)
{
    *k = value_open(ctx, key, RM_READ | RM_WRITE, &slice_type);
    once_filter *f = value_filter_or_reply(ctx, k, ERR_NO_SLICE);
    if (f == NULL) {
        value_close(k);
        return NULL;
    }
    if ((once_get_type(f) != ONCE_SLICE) != whole) {
        value_close(k);
        RM_ReplyWithError(ctx, whole ? ERR_NOT_WHOLE : ERR_NOT_POSITIONS);
        return NULL;
    }
    return f;
}

/* SLICE.RUN key requests: the answers, as bytes (slice/wire.c). */
static int slice_run(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argc;
    opened_key k;
    once_filter *f = open_slice_to_run(ctx, argv[1], false, &k);
    if (f == NULL)
        return RM_OK;
    size_t len = 0, count = 0, total = 0;
    const uint8_t *wire = (const uint8_t *)RM_StringPtrLen(argv[2], &len);
    if (once_slice_requests_count(wire, len, &count, &total) != ONCE_OK) {
        value_close(&k);
        return RM_ReplyWithError(ctx, ERR_BAD_REQUESTS);
    }
    once_site_request *requests = memory_try_alloc((count + 1) * sizeof *requests);
    uint64_t *positions = memory_try_alloc((total + 1) * sizeof *positions);
    uint8_t *answers = NULL;
    once_status st = requests != NULL && positions != NULL
                         ? once_slice_requests_decode(wire, len, requests, positions)
                         : ONCE_ERR_NOMEM;
    if (st == ONCE_OK)
        st = once_slice_run(f, requests, count);
    bool writes = false;
    for (size_t r = 0; st == ONCE_OK && r < count; r++)
        writes |= requests[r].op != ONCE_SITE_TEST;
    size_t answer_len = st == ONCE_OK ? once_slice_answers_size(requests, count) : 0;
    if (st == ONCE_OK && (answers = memory_try_alloc(answer_len)) == NULL)
        st = ONCE_ERR_NOMEM;
    once_site_info held;
    if (st == ONCE_OK)
        st = once_slice_describe(f, &held);
    if (st == ONCE_OK)
        st = once_slice_answers_encode(requests, count, &held, answers, answer_len, &answer_len);
    value_close(&k);
    if (st == ONCE_OK) {
        if (writes)
            RM_ReplicateVerbatim(ctx);
        RM_ReplyWithStringBuffer(ctx, (const char *)answers, answer_len);
    } else if (st == ONCE_ERR_INVALID) {
        RM_ReplyWithError(ctx, ERR_OUT_OF_SLICE);
    } else {
        reply_status(ctx, st);
    }
    if (requests != NULL)
        RM_Free(requests);
    if (positions != NULL)
        RM_Free(positions);
    if (answers != NULL)
        RM_Free(answers);
    return RM_OK;
}

/* ------------------------------------------------------------ whole slices */

typedef struct whole_options {
    once_type type;
    uint64_t capacity, span_ms, lag_ms, seed, max_bytes;
    double error;
} whole_options;

static once_status whole_make(const void *options, once_filter **out)
{
    const whole_options *o = options;
    once_config c;
    once_config_init(&c, o->type);
    c.capacity = o->capacity;
    c.error = o->error;
    c.seed = o->seed;
    c.seed_is_set = true;
    c.span_ms = o->span_ms;
    c.lag_ms = o->lag_ms;
    c.max_time_jump_ms = 0; /* the producers bound their own clocks' jumps */
    if (once_structure_of(o->type)->memory_cap)
        c.max_bytes = o->max_bytes;
    return once_create(out, &c);
}

/* SLICE.RESERVE key FILTER name CAPACITY n ERROR p SEED s [SPAN ms [LAG ms]]
 *               [MAXMEMORY bytes] */
static const char *parse_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                                 whole_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_bytes = (uint64_t)config.max_memory;
    bool type_given = false, capacity_given = false, error_given = false, seed_given = false;
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc)
            return "ERR syntax error: a keyword without its value";
        RedisModuleString *v = argv[i + 1];
        if (arg_is(argv[i], "FILTER")) {
            size_t len = 0;
            const char *name = RM_StringPtrLen(v, &len);
            char text[32];
            if (len >= sizeof text)
                return "ERR bad FILTER: an all-time or time-window structure";
            memcpy(text, name, len);
            text[len] = 0;
            if (once_type_from_name(text, &o->type) != ONCE_OK || !whole_structure(o->type))
                return "ERR bad FILTER: an all-time or time-window structure";
            type_given = true;
        } else if (arg_is(argv[i], "CAPACITY")) {
            if (!arg_unsigned(v, UINT64_C(1) << 40, &o->capacity) || o->capacity == 0)
                return "ERR bad CAPACITY: an integer from 1 to 2^40";
            capacity_given = true;
        } else if (arg_is(argv[i], "ERROR")) {
            const char *err = parse_error_rate(v, &o->error);
            if (err != NULL)
                return err;
            error_given = true;
        } else if (arg_is(argv[i], "SEED")) {
            const char *err = parse_seed(v, &o->seed);
            if (err != NULL)
                return err;
            seed_given = true;
        } else if (arg_is(argv[i], "SPAN")) {
            if (!arg_unsigned(v, ONCE_MAX_TIME_MS / 2, &o->span_ms) || o->span_ms == 0)
                return "ERR bad SPAN: milliseconds, above 0";
        } else if (arg_is(argv[i], "LAG")) {
            if (!arg_unsigned(v, ONCE_MAX_TIME_MS, &o->lag_ms))
                return "ERR bad LAG: milliseconds, at most twice the span";
        } else if (arg_is(argv[i], "MAXMEMORY")) {
            const char *err = parse_max_memory(ctx, v, &o->max_bytes);
            if (err != NULL)
                return err;
        } else {
            return ERR_UNKNOWN_ARGUMENT;
        }
    }
    if (!type_given || !capacity_given || !error_given || !seed_given)
        return "ERR FILTER, CAPACITY, ERROR and SEED are required";
    bool windowed = once_structure_of(o->type)->kind == ONCE_KIND_TIME_WINDOW;
    if (windowed != (o->span_ms != 0))
        return "ERR SPAN goes with a time-window FILTER, and only with one";
    if (o->lag_ms != 0 && o->type != ONCE_TAGGED)
        return "ERR LAG goes with FILTER tagged: the others judge a late event at their clock";
    if (o->lag_ms > o->span_ms && o->lag_ms - o->span_ms > o->span_ms) /* > 2 spans */
        return "ERR bad LAG: milliseconds, at most twice the span";
    return NULL;
}

static bool same_whole(const once_filter *f, const whole_options *o)
{
    once_stats s;
    return once_get_stats(f, &s) == ONCE_OK && s.type == o->type &&
           s.capacity == o->capacity && s.seed == o->seed && s.span_ms == o->span_ms &&
           s.lag_ms == o->lag_ms;
}

static int slice_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    whole_options o;
    const char *err = parse_reserve(ctx, argv, argc, &o);
    if (err != NULL)
        return RM_ReplyWithError(ctx, err);
    opened_key k = value_open(ctx, argv[1], RM_READ | RM_WRITE, &slice_type);
    if (k.state == KEY_FOUND) {
        once_filter *f = value_filter_or_reply(ctx, &k, NULL);
        bool same = f != NULL && same_whole(f, &o);
        value_close(&k);
        if (f == NULL)
            return RM_OK;
        return same ? RM_ReplyWithSimpleString(ctx, "OK")
                    : RM_ReplyWithError(ctx, "ERR the slice exists with another structure, "
                                             "capacity, span, lag or seed (SLICE.INFO shows "
                                             "it)");
    }
    if (k.state == KEY_WRONGTYPE) {
        value_close(&k);
        return RM_ReplyWithError(ctx, ERR_WRONGTYPE);
    }
    once_filter *f =
        value_create(ctx, &k, &slice_type, whole_make, &o, (uint64_t)config.max_memory);
    value_close(&k);
    if (f == NULL)
        return RM_OK;
    creation c;
    creation_start(&c, "SLICE.RESERVE");
    creation_word(&c, "FILTER");
    creation_word(&c, once_type_name(o.type));
    creation_option(&c, "CAPACITY", o.capacity);
    creation_word(&c, "ERROR");
    creation_rate(&c, o.error);
    creation_option(&c, "SEED", o.seed);
    if (o.span_ms != 0)
        creation_option(&c, "SPAN", o.span_ms);
    if (o.lag_ms != 0)
        creation_option(&c, "LAG", o.lag_ms);
    creation_option(&c, "MAXMEMORY", o.max_bytes);
    creation_replicate(ctx, argv[1], &c);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* SLICE.TADD key events: the verdicts, as bytes (slice/wire.c); with `stamp`
 * (SLICE.STAMP) the events are added instead, a key held keeping the later time
 * (once_slice_events_stamp), and the verdicts say only which were refused. */
static int run_events(RedisModuleCtx *ctx, RedisModuleString **argv, bool stamp)
{
    opened_key k;
    once_filter *f = open_slice_to_run(ctx, argv[1], true, &k);
    if (f == NULL)
        return RM_OK;
    size_t len = 0, count = 0;
    const uint8_t *wire = (const uint8_t *)RM_StringPtrLen(argv[2], &len);
    if (once_slice_events_count(wire, len, &count) != ONCE_OK) {
        value_close(&k);
        return RM_ReplyWithError(ctx, ERR_BAD_EVENTS);
    }
    once_slice_event *events = memory_try_alloc((count + 1) * sizeof *events);
    uint8_t *verdicts = NULL;
    once_slice_held held;
    once_status st = events != NULL ? once_slice_events_decode(wire, len, events) : ONCE_ERR_NOMEM;
    if (st == ONCE_OK)
        st = stamp ? once_slice_events_stamp(f, events, count, &held)
                   : once_slice_events_run(f, events, count, &held);
    size_t verdict_len = st == ONCE_OK ? once_slice_verdicts_size(events, count) : 0;
    if (st == ONCE_OK && (verdicts = memory_try_alloc(verdict_len)) == NULL)
        st = ONCE_ERR_NOMEM;
    if (st == ONCE_OK)
        st = once_slice_verdicts_encode(events, count, &held, verdicts, verdict_len,
                                        &verdict_len);
    if (st == ONCE_OK && count != 0)
        value_warn_if_overfull(ctx, argv[1], &k);
    value_close(&k);
    if (st == ONCE_OK) {
        if (count != 0)
            RM_ReplicateVerbatim(ctx);
        RM_ReplyWithStringBuffer(ctx, (const char *)verdicts, verdict_len);
    } else if (st == ONCE_ERR_INVALID) {
        RM_ReplyWithError(ctx, ERR_OUT_OF_SLICE);
    } else {
        reply_status(ctx, st);
    }
    if (events != NULL)
        RM_Free(events);
    if (verdicts != NULL)
        RM_Free(verdicts);
    return RM_OK;
}

static int slice_tadd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argc;
    return run_events(ctx, argv, false);
}

/* SLICE.STAMP key events: a count window's new lines at their places in the count. */
static int slice_stamp(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argc;
    return run_events(ctx, argv, true);
}

/* SLICE.INFO key: a map (flat pairs under RESP2). */
static int slice_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argc;
    opened_key k = value_open(ctx, argv[1], RM_READ, &slice_type);
    once_filter *f = value_filter_or_reply(ctx, &k, ERR_NO_SLICE);
    if (f == NULL) {
        value_close(&k);
        return RM_OK;
    }
    once_stats s;
    once_get_stats(f, &s);
    once_memory_site_config c = {0};
    bool whole = once_slice_config(f, &c) != ONCE_OK;
    uint64_t clock = 0;
    bool started = false;
    once_clock(f, &clock, &started);
    uint64_t jump = once_max_time_jump(f);
    value_close(&k);
    if (whole) {
        RM_ReplyWithMap(ctx, 10);
        RM_ReplyWithSimpleString(ctx, "Filter");
        RM_ReplyWithSimpleString(ctx, s.structure);
        reply_info_count(ctx, "Capacity", s.capacity);
        reply_info_rate(ctx, "Error rate", s.error);
        reply_info_count(ctx, "Span", s.span_ms);
        reply_info_count(ctx, "Lag", s.lag_ms);
        reply_info_count(ctx, "Sub-filters", s.filters);
        reply_info_count(ctx, "Number of items inserted", s.items);
        reply_info_count(ctx, "Size", s.bytes);
        reply_info_count(ctx, "Clock", started ? clock : 0);
        reply_info_count(ctx, "Seed", s.seed);
        return RM_OK;
    }
    static const char *const growth[] = {"none", "density", "cardinality", "bounded"};
    RM_ReplyWithMap(ctx, 10);
    reply_info_count(ctx, "Bits", c.bits);
    reply_info_count(ctx, "Window", c.window_ms);
    RM_ReplyWithSimpleString(ctx, "Growth");
    RM_ReplyWithSimpleString(ctx, growth[c.growth & 3]);
    reply_info_rate(ctx, "Max density", c.max_density);
    reply_info_count(ctx, "Sub-filters", s.filters);
    reply_info_count(ctx, "Cells set", s.bits_set);
    reply_info_count(ctx, "Number of items inserted", s.items);
    reply_info_count(ctx, "Size", s.bytes);
    reply_info_count(ctx, "Clock", started ? clock : 0);
    reply_info_count(ctx, "Max time jump", jump);
    return RM_OK;
}

static const command_spec slice_commands[] = {
    {"slice.create", slice_create, "write deny-oom", -4, KEYS_FIRST, KEY_CREATES,
     "Create one slice of a sliced filter: BITS, WINDOW, GROWTH (OK if it exists alike)"},
    {"slice.run", slice_run, "write deny-oom", 3, KEYS_FIRST, KEY_WRITES,
     "Run a batch of packed slice requests; the answers, a bit each"},
    {"slice.reserve", slice_reserve, "write deny-oom", -10, KEYS_FIRST, KEY_CREATES,
     "Create a whole slice: FILTER, CAPACITY, ERROR, SEED, SPAN, LAG (OK if it exists alike)"},
    {"slice.tadd", slice_tadd, "write deny-oom", 3, KEYS_FIRST, KEY_WRITES,
     "Test-and-add a batch of packed digests at a whole slice; a bit each"},
    {"slice.stamp", slice_stamp, "write deny-oom", 3, KEYS_FIRST, KEY_WRITES,
     "Add a batch of packed digests at their times (a count window's stamps); a bit each"},
    {"slice.info", slice_info, "readonly", 2, KEYS_FIRST, KEY_READS,
     "Bits, window, growth, cells set and size of a slice"},
};

VALUE_TYPE_REGISTER(slice, slice_type)
