/*
 * module/t_window.c - ONCE.*: windowed dedup, the last n keys or the last T
 * milliseconds, over the library's windowed filters.
 *
 * Design
 *   A key holds one windowed filter: a count window (APBF, the default, or APBBF:
 *   paper 001's age-partitioned filters, WINDOW n) or a time window (SPAN ms: the
 *   tagged window, the default, or paper 004's TLBF, the default with LEVEL, or the
 *   timer filter of paper 000 section 4).  ONCE.ADD is the
 *   library's test-and-add under its policy: 1 the first time a key is seen inside the
 *   window (deliver it), 0 for a duplicate.  Inside the window a delivered key is
 *   always answered 0 again (no false negatives); past the window plus the structure's
 *   slack a new key is answered 0 only at the target false-positive rate.
 *
 *   Time is an argument: AT ms is the producer's event time, and without it the
 *   server's clock (RM_Milliseconds) is read once per command.  The window's own clock
 *   rules apply (lib/include/once.h, "Event time"): a late event counts at the clock
 *   (within LAG ms of it, for a tagged window created with LAG, at its own time), an
 *   event more than MAXJUMP ahead of it is refused and changes nothing.
 *
 *   ONCE.ADD on a missing key creates a time window of once.default-span milliseconds
 *   with the default error and capacity when that setting is not 0, and is refused
 *   ("ERR not found") when it is: a count or time window is a decision about the
 *   stream that a default should not make silently, so the module makes it only when
 *   the operator has.
 *
 * Replication and determinism
 *   A write that read the server's clock is replicated with AT and the time it read,
 *   and a creation as ONCE.RESERVE with every option and the seed it drew, so that a
 *   replica (or the AOF) applies the same events at the same times to the same
 *   filter and holds the same bytes.  Count windows ignore time; their writes are
 *   replicated verbatim.  A timer window's creation always says SCALING or NONSCALING:
 *   one that says neither was replicated by a version whose timer windows were all
 *   fixed, and is replayed as one (a command from a client without either word grows).
 *
 * Invariants
 *   - queries (EXISTS, MEXISTS, INFO, CARD) never change a window, its clock included;
 *   - a refused command changes nothing: an item MADD cannot take for the memory limit
 *     undoes the command (value_add_items), its error the reply.
 */
#include "command.h"
#include "settings.h"
#include "t_window.h"
#include "value.h"

#include <stdio.h>
#include <string.h>

#define WINDOW_DEFAULT_LEVEL 2 /* as the CLI: few slices, little slack */
#define WINDOW_MAX_LEVEL 8
#define WINDOW_MAX_COUNT (UINT64_C(1) << 40)
#define ERR_NO_WINDOW "ERR not found: create the window with ONCE.RESERVE (or set "          \
                      "once.default-span)"

static bool window_holds(once_type type)
{
    const once_structure *s = once_structure_of(type);
    return s != NULL && (s->kind == ONCE_KIND_COUNT_WINDOW || s->kind == ONCE_KIND_TIME_WINDOW);
}

static value_type window_type = {.name = "oncewindw", .family = "once", .noun = "window",
                                 .loadchunk = "ONCE.LOADCHUNK",
                                 .holds = window_holds};

static bool time_window(const once_filter *f)
{
    return once_structure_of(once_get_type(f))->kind == ONCE_KIND_TIME_WINDOW;
}

/* ------------------------------------------------------------- clocks */

/*
 * One clock per window.  A time window runs either on event times (every write gives
 * AT) or on the server's clock (none does): mixing them would carry its clock decades
 * ahead (event times near 1e6 ms against the server's 1.8e12) and expire every key at
 * once.  The choice is fixed by ONCE.RESERVE's CLOCK, or else by the window's first
 * write (and by ONCE.CLOCK), and kept in the filter's metadata ("clock=event",
 * "clock=server", or "clock=first" until the first write), so it is saved, dumped and
 * replicated with the value.  A command that uses the other clock is refused, saying
 * which the window runs on.  Replayed commands are not checked (a write on the
 * server's clock is replicated with AT); the master replicates ONCE.CLOCK when a write
 * fixes the clock, before the write, and every creation with its CLOCK.  A window
 * saved before clocks existed (no metadata, or a creation replayed without CLOCK)
 * takes both clocks as it did, and keeps its bytes, until ONCE.CLOCK fixes one.
 */
typedef enum window_clock { CLOCK_LEGACY, CLOCK_FIRST, CLOCK_SERVER, CLOCK_EVENT } window_clock;

#define CLOCK_META "clock="
#define ERR_CLOCK_EVENT                                                                       \
    "ERR the window runs on event time: give AT ms (ONCE.ADD key item AT ms, ONCE.MADD key " \
    "AT ms item ...)"
#define ERR_CLOCK_SERVER "ERR the window runs on the server's clock: drop AT"

static const char *clock_name(window_clock c)
{
    return c == CLOCK_EVENT ? "event" : c == CLOCK_SERVER ? "server" : "first";
}

/* event, server, or (with `first_too`) first. */
static bool clock_parse(RedisModuleString *arg, bool first_too, window_clock *out)
{
    if (arg_is(arg, "event"))
        *out = CLOCK_EVENT;
    else if (arg_is(arg, "server"))
        *out = CLOCK_SERVER;
    else if (first_too && arg_is(arg, "first"))
        *out = CLOCK_FIRST;
    else
        return false;
    return true;
}

static window_clock clock_of(const once_filter *f)
{
    const void *data = NULL;
    size_t len = 0;
    if (once_get_metadata(f, &data, &len) != ONCE_OK || data == NULL)
        return CLOCK_LEGACY;
    for (window_clock c = CLOCK_FIRST; c <= CLOCK_EVENT; c++) {
        const char *name = clock_name(c);
        if (len == sizeof CLOCK_META - 1 + strlen(name) &&
            memcmp(data, CLOCK_META, sizeof CLOCK_META - 1) == 0 &&
            memcmp((const char *)data + sizeof CLOCK_META - 1, name, strlen(name)) == 0)
            return c;
    }
    return CLOCK_LEGACY;
}

static once_status clock_set(once_filter *f, window_clock c)
{
    char text[32];
    int len = snprintf(text, sizeof text, CLOCK_META "%s", clock_name(c));
    return once_set_metadata(f, text, (size_t)len);
}

/* NULL if a command on `want`'s clock may use the window, else the error to reply. */
static const char *clock_refusal(const once_filter *f, window_clock want)
{
    window_clock c = clock_of(f);
    if (c == CLOCK_LEGACY || c == CLOCK_FIRST || c == want)
        return NULL;
    return c == CLOCK_EVENT ? ERR_CLOCK_EVENT : ERR_CLOCK_SERVER;
}

/* ------------------------------------------------------------ creation */

typedef struct window_options {
    uint64_t window, span_ms, capacity, max_jump_ms, seed, level;
    uint64_t lag_ms;    /* LAG: the tagged window's lag allowance (0: none) */
    uint64_t max_bytes; /* the object's memory limit */
    double error;
    once_type type;
    bool type_given, level_given, capacity_given, max_jump_given, seed_given, refresh;
    bool fixed;       /* NONSCALING: a timer filter that keeps its first size */
    int clock;        /* CLOCK: a window_clock (time windows); CLOCK_LEGACY if none */
    bool growth_given; /* SCALING or NONSCALING was given */
} window_options;

static once_status window_make(const void *options, once_filter **out)
{
    const window_options *o = options;
    once_config c;
    once_config_init(&c, o->type);
    c.error = o->error;
    c.seed = o->seed;
    c.seed_is_set = true;
    c.policy = o->refresh ? ONCE_POLICY_REFRESH : ONCE_POLICY_FIRST;
    if (once_structure_of(o->type)->levels)
        c.level = (uint32_t)o->level;
    if (o->window != 0) {
        c.window = o->window;
    } else {
        c.span_ms = o->span_ms;
        c.lag_ms = o->lag_ms;
        c.capacity = o->capacity;
        if (o->max_jump_given)
            c.max_time_jump_ms = o->max_jump_ms;
    }
    if (once_structure_of(o->type)->memory_cap)
        c.max_bytes = o->max_bytes;
    c.dynamic = !o->fixed;
    once_status st = once_create(out, &c);
    if (st == ONCE_OK && o->clock != CLOCK_LEGACY && (st = clock_set(*out, o->clock)) != ONCE_OK) {
        once_free(*out);
        *out = NULL;
    }
    return st;
}

/* The creation replicated, with every option that decides the filter's bytes. */
static void describe_creation(creation *c, const window_options *o)
{
    creation_start(c, "ONCE.RESERVE");
    creation_option(c, o->window != 0 ? "WINDOW" : "SPAN",
                    o->window != 0 ? o->window : o->span_ms);
    creation_word(c, "ERROR");
    creation_rate(c, o->error);
    creation_word(c, "FILTER");
    creation_word(c, once_type_name(o->type));
    if (once_structure_of(o->type)->levels) {
        creation_option(c, "LEVEL", o->level);
    }
    if (o->window == 0) {
        creation_option(c, "CAPACITY", o->capacity);
        creation_option(c, "MAXJUMP", o->max_jump_ms);
    }
    if (o->lag_ms != 0) /* said only when given: a creation without it replays as before */
        creation_option(c, "LAG", o->lag_ms);
    creation_option(c, "SEED", o->seed);
    creation_option(c, "MAXMEMORY", o->max_bytes);
    if (o->refresh)
        creation_word(c, "REFRESH");
    if (o->type == ONCE_TIMER) /* always said: see the design note, "Replication" */
        creation_word(c, o->fixed ? "NONSCALING" : "SCALING");
    if (o->clock != CLOCK_LEGACY) {
        creation_word(c, "CLOCK");
        creation_word(c, clock_name(o->clock));
    }
}

/* What the settings decide of a new window, before ONCE.RESERVE's words (or a creation
 * by ONCE.ADD) decide the rest. */
static window_options default_options(void)
{
    window_options o = {.error = config.error_rate,
                        .capacity = (uint64_t)config.initial_capacity,
                        .max_jump_ms = ONCE_DEFAULT_MAX_TIME_JUMP_MS,
                        .max_bytes = (uint64_t)config.max_memory};
    return o;
}

/* The options of ONCE.RESERVE, checked before any key is touched: NULL or the error. */
static const char *parse_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                                 window_options *o)
{
    *o = default_options();
    bool window_given = false, span_given = false;
    for (int i = 2; i < argc; i++) {
        if (arg_is(argv[i], "REFRESH")) {
            o->refresh = true;
            continue;
        }
        if (arg_is(argv[i], "SCALING") || arg_is(argv[i], "NONSCALING")) {
            o->fixed = arg_is(argv[i], "NONSCALING");
            o->growth_given = true;
            continue;
        }
        if (i + 1 >= argc)
            return arg_is(argv[i], "WINDOW") || arg_is(argv[i], "SPAN") ||
                           arg_is(argv[i], "ERROR") || arg_is(argv[i], "LEVEL") ||
                           arg_is(argv[i], "FILTER") || arg_is(argv[i], "CAPACITY") ||
                           arg_is(argv[i], "MAXJUMP") || arg_is(argv[i], "SEED") ||
                           arg_is(argv[i], "MAXMEMORY") || arg_is(argv[i], "CLOCK") ||
                           arg_is(argv[i], "LAG")
                       ? "ERR an option lacks its value"
                       : ERR_UNKNOWN_ARGUMENT;
        RedisModuleString *v = argv[++i];
        if (arg_is(argv[i - 1], "WINDOW")) {
            if (!arg_unsigned(v, WINDOW_MAX_COUNT, &o->window) || o->window == 0)
                return "ERR bad window: a count of keys in [1, 2^40]";
            window_given = true;
        } else if (arg_is(argv[i - 1], "SPAN")) {
            if (!arg_unsigned(v, ONCE_MAX_TIME_MS, &o->span_ms) || o->span_ms == 0)
                return "ERR bad span: a positive number of milliseconds";
            span_given = true;
        } else if (arg_is(argv[i - 1], "ERROR")) {
            const char *err = parse_error_rate(v, &o->error);
            if (err != NULL)
                return err;
        } else if (arg_is(argv[i - 1], "LEVEL")) {
            if (!arg_unsigned(v, WINDOW_MAX_LEVEL, &o->level))
                return "ERR bad level: an integer in [0, 8]";
            o->level_given = true;
        } else if (arg_is(argv[i - 1], "FILTER")) {
            size_t len = 0;
            const char *name = RM_StringPtrLen(v, &len);
            char buf[32];
            if (len >= sizeof buf)
                return "ERR bad filter: apbf, apbbf, tagged, tlbf or timer";
            memcpy(buf, name, len);
            buf[len] = '\0';
            if (once_type_from_name(buf, &o->type) != ONCE_OK || !window_holds(o->type))
                return "ERR bad filter: apbf, apbbf, tagged, tlbf or timer";
            o->type_given = true;
        } else if (arg_is(argv[i - 1], "CAPACITY")) {
            if (!arg_unsigned(v, WINDOW_MAX_COUNT, &o->capacity) || o->capacity == 0)
                return "ERR bad capacity: expected keys per span, in [1, 2^40]";
            o->capacity_given = true;
        } else if (arg_is(argv[i - 1], "LAG")) {
            if (!arg_unsigned(v, ONCE_MAX_TIME_MS, &o->lag_ms))
                return "ERR bad lag: milliseconds, at most twice the span";
        } else if (arg_is(argv[i - 1], "MAXJUMP")) {
            if (!arg_unsigned(v, ONCE_MAX_TIME_MS, &o->max_jump_ms))
                return "ERR bad max jump: milliseconds, 0 for no bound";
            o->max_jump_given = true;
        } else if (arg_is(argv[i - 1], "MAXMEMORY")) {
            const char *err = parse_max_memory(ctx, v, &o->max_bytes);
            if (err != NULL)
                return err;
        } else if (arg_is(argv[i - 1], "CLOCK")) {
            window_clock clock;
            if (!clock_parse(v, true, &clock))
                return "ERR bad clock: event (every write gives AT), server (none does) or "
                       "first (the first write's)";
            o->clock = clock;
        } else if (arg_is(argv[i - 1], "SEED")) {
            const char *err = parse_seed(v, &o->seed);
            if (err != NULL)
                return err;
            o->seed_given = true;
        } else {
            return ERR_UNKNOWN_ARGUMENT;
        }
    }
    if (window_given == span_given)
        return "ERR give WINDOW n (the last n keys) or SPAN ms (the last ms milliseconds)";
    /* A time window is tagged unless LEVEL asks for the TLBF's layout, or the creation
     * is replayed without FILTER: replicated by a version whose default was the TLBF,
     * it is built as it was. */
    if (!o->type_given)
        o->type = window_given ? ONCE_APBF
                  : o->level_given || command_replayed(ctx) ? ONCE_TLBF
                                                            : ONCE_TAGGED;
    once_kind kind = once_structure_of(o->type)->kind;
    if (window_given && kind != ONCE_KIND_COUNT_WINDOW)
        return "ERR the filter keeps a time window: give SPAN, or FILTER apbf or apbbf";
    if (span_given && kind != ONCE_KIND_TIME_WINDOW)
        return "ERR the filter keeps a count window: give WINDOW, or FILTER tagged, tlbf or "
               "timer";
    if (window_given && (o->capacity_given || o->max_jump_given || o->clock != CLOCK_LEGACY))
        return "ERR CAPACITY, MAXJUMP and CLOCK apply to time windows (SPAN)";
    if (o->lag_ms != 0 && o->type != ONCE_TAGGED)
        return "ERR LAG applies to the tagged time window (SPAN, FILTER tagged): the others "
               "judge a late event at their clock";
    if (o->lag_ms > o->span_ms && o->lag_ms - o->span_ms > o->span_ms) /* > 2 spans */
        return "ERR bad lag: milliseconds, at most twice the span";
    if (o->level_given && !once_structure_of(o->type)->levels)
        return "ERR LEVEL does not apply to this filter";
    if (o->growth_given && o->type != ONCE_TIMER)
        return "ERR SCALING and NONSCALING apply to FILTER timer (the other windows always "
               "adapt to their rate)";
    /* A time window's clock: the one given, else the first write's.  A creation
     * replayed without CLOCK was replicated before clocks were fixed: built as then. */
    if (span_given && o->clock == CLOCK_LEGACY && !command_replayed(ctx))
        o->clock = CLOCK_FIRST;
    /* A timer window created before SCALING existed was fixed, and its replayed
     * creation (AOF, master) says neither word: it is built as it was. */
    if (o->type == ONCE_TIMER && !o->growth_given && command_replayed(ctx))
        o->fixed = true;
    if (!o->level_given)
        o->level = o->type == ONCE_APBBF ? 0 : WINDOW_DEFAULT_LEVEL;
    if (!o->seed_given)
        o->seed = command_new_seed();
    return NULL;
}

/* ONCE.RESERVE key WINDOW n | SPAN ms [ERROR p] [LEVEL l] [FILTER name] [REFRESH]
 *              [CAPACITY c] [MAXJUMP ms] [LAG ms] [SEED s] [MAXMEMORY bytes] */
static int window_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    window_options o;
    const char *err = parse_reserve(ctx, argv, argc, &o);
    if (err != NULL)
        return RM_ReplyWithError(ctx, err);
    creation c;
    describe_creation(&c, &o);
    return value_reserve(ctx, argv[1], &window_type, window_make, &o, o.max_bytes, &c);
}

/* ----------------------------------------------------------------- time */

typedef struct event_time {
    uint64_t ms;
    bool given; /* AT ms; otherwise the server's clock */
} event_time;

static const char *parse_at(RedisModuleString *arg, event_time *t)
{
    if (!arg_unsigned(arg, ONCE_MAX_TIME_MS, &t->ms))
        return "ERR bad time: AT takes milliseconds in [0, 2^63)";
    t->given = true;
    return NULL;
}

static event_time server_time(void)
{
    long long now = RM_Milliseconds();
    event_time t = {now > 0 ? (uint64_t)now : 0, false};
    return t;
}

/* The items and time of ONCE.ADD key item [AT ms] (single) or ONCE.MADD / ONCE.MEXISTS
 * key [AT ms] item [item ...]: argv[first .. first + count - 1] at t. */
typedef struct item_args {
    event_time t;
    int first, count;
} item_args;

/* Parse them into *a: false after replying the error (a missing word, a bad AT). */
static bool parse_items(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool single,
                        item_args *a)
{
    a->t = server_time();
    a->first = 2;
    a->count = argc - 2;
    bool wrong_arity = false;
    const char *err = NULL;
    if (single) {
        a->count = 1;
        if (argc != 3 && argc != 5)
            wrong_arity = true;
        else if (argc == 5)
            err = arg_is(argv[3], "AT") ? parse_at(argv[4], &a->t) : ERR_UNKNOWN_ARGUMENT;
    } else if (arg_is(argv[2], "AT")) {
        a->first = 4;
        a->count = argc - 4;
        if (argc < 5)
            wrong_arity = true;
        else
            err = parse_at(argv[3], &a->t);
    }
    if (wrong_arity)
        RM_WrongArity(ctx);
    else if (err != NULL)
        RM_ReplyWithError(ctx, err);
    return !wrong_arity && err == NULL;
}

/*
 * MAXJUMP guards a window against a producer's outlier event time (AT), not against
 * the server's own clock: a window left idle for longer than MAXJUMP must take the
 * next event on the server's clock rather than refuse every one from then on.  And a
 * replayed command (from the master, or the AOF) takes what was taken where it first
 * ran.  So for those the bound is lifted for the command and set back after it (it is
 * saved with the filter).
 */
static uint64_t lift_jump_bound(RedisModuleCtx *ctx, once_filter *f, const event_time *t)
{
    uint64_t bound = once_max_time_jump(f);
    if (bound != 0 && (!t->given || command_replayed(ctx)))
        once_set_max_time_jump(f, 0);
    return bound;
}

/*
 * MAXJUMP also bounds AT against the server's clock, so that the first event of a
 * window, which no earlier time bounds, cannot carry its clock years ahead either: a
 * producer's time is never far ahead of the real one.  Not for replayed commands,
 * which were checked where they first ran, against that server's clock.
 */
#define ERR_AHEAD_OF_SERVER                                                                    \
    "ERR event time refused: AT is more than MAXJUMP ahead of the server's clock"

static bool ahead_of_server(RedisModuleCtx *ctx, const event_time *t, uint64_t bound)
{
    if (!t->given || bound == 0 || command_replayed(ctx))
        return false;
    uint64_t now = server_time().ms;
    return t->ms > now && t->ms - now > bound;
}

static void restore_jump_bound(once_filter *f, uint64_t bound)
{
    if (bound != 0)
        once_set_max_time_jump(f, bound);
}

/* ---------------------------------------------------------------- writes */

/* ONCE.ADD key item [AT ms] (single) / ONCE.MADD key [AT ms] item [item ...]. */
static int window_add_items(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                          bool single)
{
    item_args args;
    if (!parse_items(ctx, argv, argc, single, &args))
        return RM_OK;
    const event_time t = args.t;
    opened_key k = value_open(ctx, argv[1], RM_READ | RM_WRITE, &window_type);
    once_filter *f = value_filter_or_reply(ctx, &k, NULL);
    window_options created;
    bool creating = f == NULL && k.state == KEY_MISSING;
    if (creating) {
        if (config.default_span_ms == 0) {
            value_close(&k);
            return RM_ReplyWithError(ctx, ERR_NO_WINDOW);
        }
        created = default_options();
        created.type = ONCE_TAGGED;
        created.span_ms = (uint64_t)config.default_span_ms;
        created.level = WINDOW_DEFAULT_LEVEL;
        created.seed = command_new_seed();
        if (!command_replayed(ctx)) /* the first write fixes the clock */
            created.clock = t.given ? CLOCK_EVENT : CLOCK_SERVER;
        f = value_create(ctx, &k, &window_type, window_make, &created, created.max_bytes);
    }
    if (f == NULL) {
        value_close(&k);
        return RM_OK;
    }
    bool timed = time_window(f);
    window_clock want = t.given ? CLOCK_EVENT : CLOCK_SERVER;
    bool from_client = !command_replayed(ctx);
    const char *err = NULL;
    if (timed && from_client && (err = clock_refusal(f, want)) != NULL) {
        value_close(&k);
        return RM_ReplyWithError(ctx, err);
    }
    /* Every item has the same time: a time the clock refuses is one error for all. */
    uint64_t clock = 0, bound = lift_jump_bound(ctx, f, &t);
    bool started = false;
    if (timed && (once_clock(f, &clock, &started) != ONCE_OK ||
                  !once_clock_step(f, &clock, &started, t.ms))) {
        restore_jump_bound(f, bound);
        value_close(&k);
        return RM_ReplyWithError(ctx, ERR_TIME);
    }
    if (timed && ahead_of_server(ctx, &t, bound)) {
        restore_jump_bound(f, bound);
        value_close(&k);
        return RM_ReplyWithError(ctx, ERR_AHEAD_OF_SERVER);
    }
    /* A window without a clock yet takes this write's; replicas take it first. */
    bool fixing = timed && from_client && clock_of(f) == CLOCK_FIRST &&
                  clock_set(f, want) == ONCE_OK;
    add_request a = {.items = argv + args.first, .count = args.count, .now_ms = t.ms,
                     .single = single, .undoes_all = refused_for_memory};
    bool changed = value_add_items(ctx, &k, f, &a) > 0 || creating || fixing;
    f = k.value->filter; /* the copy kept, when the command was undone */
    restore_jump_bound(f, bound);
    if (changed)
        value_warn_if_overfull(ctx, argv[1], &k);
    value_close(&k);
    if (!changed)
        return RM_OK;
    /* Sent ahead of the write: the window's creation, or the clock it fixed. */
    creation ahead;
    if (creating) {
        describe_creation(&ahead, &created);
    } else if (fixing) {
        creation_start(&ahead, "ONCE.CLOCK");
        creation_word(&ahead, clock_name(want));
    }
    const creation *first_sent = creating || fixing ? &ahead : NULL;
    if (!timed || t.given) {
        replicate_write(ctx, argv, argc, single ? "ONCE.ADD" : "ONCE.MADD", first_sent);
        return RM_OK;
    }
    if (first_sent != NULL)
        creation_replicate(ctx, argv[1], first_sent);
    if (single) {
        RM_Replicate(ctx, "ONCE.ADD", "sscl", argv[1], argv[2], "AT", (long long)t.ms);
    } else {
        RM_Replicate(ctx, "ONCE.MADD", "sclv", argv[1], "AT", (long long)t.ms,
                     argv + args.first, (size_t)args.count);
    }
    return RM_OK;
}

static int window_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return window_add_items(ctx, argv, argc, true);
}

static int window_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return window_add_items(ctx, argv, argc, false);
}

/* ---------------------------------------------------------------- reads */

/* A read of a window at a time (ONCE.EXISTS, MEXISTS, CARD), which changes nothing:
 * its jump bound is lifted for the read and set back after it (lift_jump_bound). */
typedef struct window_read {
    opened_key k;
    once_filter *f; /* NULL: a missing key, which holds nothing */
    uint64_t bound;
} window_read;

/* Open `name` to read at t: false after replying the error that stops the command
 * (another type, a load in progress, a time on the clock the window does not run on). */
static bool begin_read(RedisModuleCtx *ctx, RedisModuleString *name, const event_time *t,
                       window_read *r)
{
    r->k = value_open(ctx, name, RM_READ, &window_type);
    r->f = value_filter_or_reply(ctx, &r->k, NULL);
    const char *refusal = r->f != NULL && time_window(r->f)
                              ? clock_refusal(r->f, t->given ? CLOCK_EVENT : CLOCK_SERVER)
                              : NULL;
    if (refusal != NULL)
        RM_ReplyWithError(ctx, refusal);
    if (refusal != NULL || (r->f == NULL && r->k.state != KEY_MISSING)) {
        value_close(&r->k);
        return false;
    }
    r->bound = r->f != NULL ? lift_jump_bound(ctx, r->f, t) : 0;
    return true;
}

static void end_read(window_read *r)
{
    if (r->f != NULL)
        restore_jump_bound(r->f, r->bound);
    value_close(&r->k);
}

/* ONCE.EXISTS key item [AT ms] / ONCE.MEXISTS key [AT ms] item [item ...]: read-only. */
static int window_exists_items(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                             bool single)
{
    item_args args;
    window_read r;
    if (!parse_items(ctx, argv, argc, single, &args) ||
        !begin_read(ctx, argv[1], &args.t, &r))
        return RM_OK;
    /* Every answer first, so that a refused time is one error, not a partial array. */
    int count = args.count;
    uint8_t answers[64];
    uint8_t *present = count <= 64 ? answers : RM_Alloc((size_t)count);
    once_status st = ONCE_OK;
    if (r.f != NULL)
        st = query_items(r.f, argv + args.first, (size_t)count, args.t.ms, present);
    else
        memset(present, 0, (size_t)count);
    end_read(&r);
    if (st != ONCE_OK) {
        reply_status(ctx, st);
    } else {
        if (!single)
            RM_ReplyWithArray(ctx, count);
        for (int i = 0; i < count; i++)
            RM_ReplyWithBool(ctx, present[i]);
    }
    if (present != answers)
        RM_Free(present);
    return RM_OK;
}

static int window_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return window_exists_items(ctx, argv, argc, true);
}

static int window_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return window_exists_items(ctx, argv, argc, false);
}

/* ONCE.INFO key: the window's description and state, a map (flat pairs under RESP2). */
static int window_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RM_WrongArity(ctx);
    opened_key k;
    once_filter *f = value_open_filter(ctx, argv[1], RM_READ, &window_type, &k);
    if (f == NULL)
        return RM_OK;
    once_stats s;
    once_get_stats(f, &s);
    uint64_t clock = 0;
    bool started = false;
    bool timed = time_window(f);
    if (timed)
        once_clock(f, &clock, &started);
    value_close(&k);
    window_clock source = clock_of(f);
    RM_ReplyWithMap(ctx, 11 + timed + INFO_FORMAT_PAIRS);
    RM_ReplyWithSimpleString(ctx, "Filter");
    RM_ReplyWithSimpleString(ctx, s.structure);
    reply_info_count(ctx, timed ? "Span" : "Window", timed ? s.span_ms : s.window);
    reply_info_rate(ctx, "Error rate", s.error);
    reply_info_count(ctx, "Capacity", s.capacity);
    reply_info_count(ctx, "Size", s.bytes);
    reply_info_count(ctx, "Number of items inserted", s.items);
    reply_info_count(ctx, "Slack", s.slack);
    if (timed) /* a time window's lag allowance (0: late events count at the clock) */
        reply_info_count(ctx, "Lag", s.lag_ms);
    reply_info_count(ctx, "Slices", s.slices);
    reply_info_rate(ctx, "Estimated error rate", s.fpr_estimate);
    RM_ReplyWithSimpleString(ctx, "Clock");
    if (started)
        RM_ReplyWithLongLong(ctx, (long long)clock);
    else
        RM_ReplyWithNull(ctx);
    RM_ReplyWithSimpleString(ctx, "Clock source");
    if (timed && source != CLOCK_LEGACY)
        RM_ReplyWithSimpleString(ctx, clock_name(source));
    else
        RM_ReplyWithNull(ctx);
    reply_format(ctx, &s);
    return RM_OK;
}

/* ONCE.CARD key [AT ms] [CONFIDENCE c]: the distinct keys in the window, estimated
 * from its cells (paper 002 section 5; docs/CARDINALITY.md), with an interval holding
 * the true count with probability c: [estimate, low, high]. */
static int window_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    event_time t = server_time();
    double confidence = CARD_DEFAULT_CONFIDENCE;
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc)
            return RM_WrongArity(ctx);
        if (arg_is(argv[i], "AT")) {
            const char *err = parse_at(argv[i + 1], &t);
            if (err != NULL)
                return RM_ReplyWithError(ctx, err);
        } else if (arg_is(argv[i], "CONFIDENCE")) {
            if (!arg_double(argv[i + 1], &confidence) ||
                !(confidence > 0.0 && confidence < 1.0))
                return RM_ReplyWithError(ctx, "ERR confidence must be a number in (0, 1)");
        } else {
            return RM_ReplyWithError(ctx, ERR_UNKNOWN_ARGUMENT);
        }
    }
    window_read r;
    if (!begin_read(ctx, argv[1], &t, &r))
        return RM_OK;
    reply_cardinality(ctx, r.f, t.ms, confidence);
    end_read(&r);
    return RM_OK;
}

/* ONCE.CLOCK key event|server: fix the clock of a time window that has none yet (the
 * master replicates it when a write fixes one); the same clock again is a no-op. */
static int window_set_clock(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    window_clock want;
    if (!clock_parse(argv[2], false, &want))
        return RM_ReplyWithError(ctx, "ERR bad clock: event (every write gives AT) or server "
                                      "(none does)");
    opened_key k;
    once_filter *f = value_open_filter(ctx, argv[1], RM_READ | RM_WRITE, &window_type, &k);
    if (f == NULL)
        return RM_OK;
    if (!time_window(f)) {
        value_close(&k);
        return RM_ReplyWithError(ctx, "ERR a count window has no clock");
    }
    window_clock now = clock_of(f);
    bool open = now == CLOCK_LEGACY || now == CLOCK_FIRST;
    const char *err = open ? NULL : clock_refusal(f, want);
    once_status st = open ? clock_set(f, want) : ONCE_OK;
    value_close(&k);
    if (err != NULL)
        return RM_ReplyWithError(ctx, err);
    if (st != ONCE_OK)
        return reply_status(ctx, st);
    if (open)
        RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* ------------------------------------------------------------- the type */

static const command_spec window_commands[] = {
    {"once.reserve", window_reserve, "write deny-oom", -4, KEYS_FIRST, KEY_CREATES,
     "Create a window: the last n keys (WINDOW) or the last ms milliseconds (SPAN)"},
    {"once.add", window_add, "write deny-oom", -3, KEYS_FIRST, KEY_WRITES,
     "1 the first time the item is seen in the window, 0 for a duplicate"},
    {"once.madd", window_madd, "write deny-oom", -3, KEYS_FIRST, KEY_WRITES,
     "ONCE.ADD for each item, in order"},
    {"once.exists", window_exists, "readonly fast", -3, KEYS_FIRST, KEY_READS,
     "Is the item in the window?  Changes nothing"},
    {"once.mexists", window_mexists, "readonly fast", -3, KEYS_FIRST, KEY_READS,
     "Are the items in the window?  Changes nothing"},
    {"once.maxmemory", value_maxmemory_command, "write deny-oom", 3, KEYS_FIRST, KEY_WRITES,
     "Change a key's memory limit (BF, DBF or ONCE): at most once.max-memory"},
    {"once.clock", window_set_clock, "write deny-oom", 3, KEYS_FIRST, KEY_WRITES,
     "Fix a time window's clock: event (writes give AT) or server (they do not)"},
    {"once.info", window_info, "readonly", 2, KEYS_FIRST, KEY_READS,
     "The window's filter, size, error rate, slack and clock"},
    {"once.card", window_card, "readonly", -2, KEYS_FIRST, KEY_READS,
     "Distinct items in the window: estimate, low, high"},
};

VALUE_TYPE_REGISTER(window, window_type)
