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
 *   Saving, loading, the AOF, DUMP / RESTORE and the SCANDUMP / LOADCHUNK pair are
 *   value.c's, as for every type: a slice is a filter of the library.
 *
 * Replication: every write verbatim (a run depends only on the slice and its
 * arguments: the times are the producers'); a run of tests only is not replicated.
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

static bool slice_holds(once_type type)
{
    return type == ONCE_SLICE;
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

/* SLICE.RUN key requests: the answers, as bytes (slice/wire.c). */
static int slice_run(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argc;
    opened_key k = value_open(ctx, argv[1], RM_READ | RM_WRITE, &slice_type);
    once_filter *f = value_filter_or_reply(ctx, &k, ERR_NO_SLICE);
    if (f == NULL) {
        value_close(&k);
        return RM_OK;
    }
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
    once_memory_site_config c;
    once_slice_config(f, &c);
    uint64_t clock = 0;
    bool started = false;
    once_clock(f, &clock, &started);
    uint64_t jump = once_max_time_jump(f);
    value_close(&k);
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
    {"slice.info", slice_info, "readonly", 2, KEYS_FIRST, KEY_READS,
     "Bits, window, growth, cells set and size of a slice"},
};

VALUE_TYPE_REGISTER(slice, slice_type)
