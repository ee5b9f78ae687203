/*
 * module/t_bloom.c - BF.*: RedisBloom's Bloom filter commands over the library's
 * scalable filter (ONCE_SCALABLE).
 *
 * Design
 *   A key holds one scalable filter: a chain of blocked filters, each `expansion` times
 *   larger than the last and at half its rate, so that the chain's compound rate stays
 *   below the error asked for however far it grows (lib/grow/scalable.c).  BF.ADD is
 *   the library's test-and-add: a key already reported present is neither inserted
 *   nor counted, exactly as RedisBloom answers and counts it.  MADD and INSERT take it
 *   in batches (command.c, add_items), which answer as the one-key calls in order.  A
 *   non-scaling filter (NONSCALING) is one blocked filter at the whole rate that
 *   refuses new keys once it holds its capacity.
 *
 *   Clients of RedisBloom 2.4/2.6 see the replies they parse: integers under RESP2 and
 *   booleans under RESP3 (RM_ReplyWithBool gives both), BF.INFO's five labelled pairs
 *   as a flat array under RESP2 and a map under RESP3, a single field as a one-element
 *   array (RESP2) or a one-pair map (RESP3).  Errors clients match on are RedisBloom's
 *   text; where RedisBloom is merely quirky (EXISTS on another type answers 0, unknown
 *   RESERVE words ignored, INSERT options matched by their first letter) we answer as
 *   valkey-bloom does; docs/REDIS.md lists every difference.
 *
 * Replication and determinism
 *   A filter's hashes depend on its seed, drawn when it is created (once.random-seeds).
 *   A command that creates a filter is replicated as BF.RESERVE ... SEED s, the seed it
 *   drew, followed by the command itself, so a replica's filter is byte-identical to
 *   the master's; every other write is replicated verbatim (its effect depends only on
 *   the filter and the arguments).
 *
 * Invariants
 *   - a refused command changes nothing: creation options are checked before the key
 *     is touched, a filter that cannot be built within once.max-memory is not stored,
 *     and a key the library refuses to add leaves the filter as it was;
 *   - MADD and INSERT answer the items in order and stop at the first that does not
 *     fit, whose place in the array holds the error;
 *   - queries never change state.
 */
#include "command.h"
#include "memory.h"
#include "settings.h"
#include "t_bloom.h"
#include "value.h"

#include <string.h>

#define ERR_NONSCALING_FULL "ERR non scaling filter is full"
#define BLOOM_MAX_EXPANSION 32768

static bool bloom_holds(once_type type)
{
    return type == ONCE_SCALABLE;
}

static value_type bloom_type = {.name = "oncebloom", .family = "bf", .noun = "filter",
                                .loadchunk = "BF.LOADCHUNK", .holds = bloom_holds};

/* ------------------------------------------------------------ creation */

typedef struct bloom_options {
    double error;
    long long capacity;
    long long expansion; /* 0 with nonscaling */
    bool nonscaling;
    bool expansion_given;
    seed_and_limit sl;
} bloom_options;

static bloom_options default_options(void)
{
    bloom_options o = {config.error_rate, config.initial_capacity, config.expansion,
                       false, false, {0, false, (uint64_t)config.max_memory}};
    return o;
}

/* Answers NULL, or the error a client of RedisBloom matches on (as command.h's checks
 * of the options every type shares). */
static const char *parse_expansion(RedisModuleString *arg, long long *out)
{
    if (!arg_long(arg, out))
        return "ERR bad expansion";
    if (*out < 1)
        return "ERR expansion should be greater or equal to 1";
    if (*out > BLOOM_MAX_EXPANSION)
        return "ERR expansion should be at most 32768";
    return NULL;
}

/* The options RESERVE and INSERT share: EXPANSION n, NONSCALING, SEED s, MAXMEMORY
 * bytes.  *used is how many arguments the option at argv[i] took (0: not one of
 * them). */
static const char *parse_shared_option(RedisModuleCtx *ctx, RedisModuleString **argv,
                                       int argc, int i, bloom_options *o, int *used)
{
    *used = 0;
    if (arg_is(argv[i], "NONSCALING")) {
        o->nonscaling = true;
        *used = 1;
        return NULL;
    }
    if (!arg_is(argv[i], "EXPANSION"))
        return parse_seed_or_limit(ctx, argv, argc, i, &o->sl, used);
    if (i + 1 >= argc)
        return "ERR no expansion";
    *used = 2;
    o->expansion_given = true;
    return parse_expansion(argv[i + 1], &o->expansion);
}

static const char *finish_options(bloom_options *o)
{
    if (o->nonscaling && o->expansion_given)
        return "Nonscaling filters cannot expand";
    if (o->nonscaling)
        o->expansion = 0;
    if (!o->sl.seed_given)
        o->sl.seed = command_new_seed();
    return NULL;
}

static once_status bloom_make(const void *options, once_filter **out)
{
    const bloom_options *o = options;
    once_config c;
    once_config_init(&c, ONCE_SCALABLE);
    c.capacity = (uint64_t)o->capacity;
    c.error = o->error;
    c.expansion = (uint32_t)o->expansion;
    c.seed = o->sl.seed;
    c.seed_is_set = true;
    c.max_bytes = o->sl.max_bytes;
    return once_create(out, &c);
}

/* The creation replicated as BF.RESERVE with everything that decides the filter's
 * bytes and growth (its seed and memory limit included), whatever the replica's
 * settings. */
static void describe_creation(creation *c, const bloom_options *o)
{
    creation_start(c, "BF.RESERVE");
    creation_rate(c, o->error);
    creation_u64(c, (uint64_t)o->capacity);
    if (o->expansion == 0) {
        creation_word(c, "NONSCALING");
    } else {
        creation_option(c, "EXPANSION", (uint64_t)o->expansion);
    }
    creation_option(c, "SEED", o->sl.seed);
    creation_option(c, "MAXMEMORY", o->sl.max_bytes);
}

/* ---------------------------------------------------------------- writes */

/* The reply to an item the filter refused. */
static const char *add_refusal(const once_filter *f, once_status st)
{
    if (st == ONCE_ERR_NOMEM)
        return memory_refusal();
    uint32_t filters = 0, expansion = 1;
    if (st == ONCE_ERR_FULL && once_scalable_shape(f, &filters, &expansion) == ONCE_OK) {
        if (expansion == 0)
            return ERR_NONSCALING_FULL;
        if (filters >= ONCE_SCALABLE_MAX_FILTERS)
            return ERR_SUBFILTER_LIMIT;
    }
    return ERR_GROWTH_LIMIT;
}

/* The object's memory limit (or the server's memory) undoes a command of many items,
 * as Redis's own OOM refusal does; a non-scaling filter's fullness and the 64th
 * sub-filter stay in their items' places, as RedisBloom answers them. */
static bool refused_at_the_limit(const once_filter *f, once_status st)
{
    if (st == ONCE_ERR_NOMEM)
        return true;
    const char *why = add_refusal(f, st);
    return strcmp(why, ERR_NONSCALING_FULL) != 0 && strcmp(why, ERR_SUBFILTER_LIMIT) != 0;
}

/* BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [SEED s]
 *            [MAXMEMORY bytes] */
static int bf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RM_WrongArity(ctx);
    bloom_options o = default_options();
    const char *err = parse_error_rate(argv[2], &o.error);
    if (err == NULL)
        err = parse_capacity(argv[3], &o.capacity);
    for (int i = 4; err == NULL && i < argc;) {
        int used = 0;
        err = parse_shared_option(ctx, argv, argc, i, &o, &used);
        if (err == NULL && used == 0)
            err = ERR_UNKNOWN_ARGUMENT;
        i += used;
    }
    if (err == NULL)
        err = finish_options(&o);
    if (err != NULL)
        return RM_ReplyWithError(ctx, err);
    creation c;
    describe_creation(&c, &o);
    return value_reserve(ctx, argv[1], &bloom_type, bloom_make, &o, o.sl.max_bytes, &c);
}

/* Open `key` to add to it, creating it with `o` when missing and `create` allows; NULL
 * after replying the error that stops the command.  *created tells whether it did. */
static once_filter *open_for_add(RedisModuleCtx *ctx, opened_key *k, RedisModuleString *key,
                                 bloom_options *o, bool create, bool *created)
{
    *created = false;
    *k = value_open(ctx, key, RM_READ | RM_WRITE, &bloom_type);
    if (k->state != KEY_MISSING)
        return value_filter_or_reply(ctx, k, NULL);
    if (!create) {
        RM_ReplyWithError(ctx, ERR_NOT_FOUND);
        return NULL;
    }
    finish_options(o);
    once_filter *f = value_create(ctx, k, &bloom_type, bloom_make, o, o->sl.max_bytes);
    *created = f != NULL;
    return f;
}

/* Add argv[first ..] to the filter opened (or created, `created`, with `o`) and
 * replicate: the items one boolean each, in order, stopping at the first the filter
 * refuses (its error in its place); `single` answers BF.ADD's bare value.  A filter
 * this command created is replicated as its creation, then the command (under the
 * name the client gave it). */
static void add_and_replicate(RedisModuleCtx *ctx, opened_key *k, once_filter *f,
                              RedisModuleString **argv, int argc, int first, bool single,
                              const bloom_options *o, bool created)
{
    add_request a = {.items = argv + first, .count = argc - first, .single = single,
                     .refusal = add_refusal, .undoes_all = refused_at_the_limit};
    value_add_items(ctx, k, f, &a);
    creation c;
    if (created)
        describe_creation(&c, o);
    replicate_write(ctx, argv, argc, NULL, created ? &c : NULL);
}

/* BF.ADD key item / BF.MADD key item [item ...] */
static int bf_add_items(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool single)
{
    bloom_options o = default_options();
    opened_key k;
    bool created = false;
    once_filter *f = open_for_add(ctx, &k, argv[1], &o, true, &created);
    if (f != NULL)
        add_and_replicate(ctx, &k, f, argv, argc, 2, single, &o, created);
    value_close(&k);
    return RM_OK;
}

static int bf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    return bf_add_items(ctx, argv, argc, true);
}

static int bf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RM_WrongArity(ctx);
    return bf_add_items(ctx, argv, argc, false);
}

/* BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] [SEED s]
 *           [MAXMEMORY bytes] ITEMS item [item ...] */
static int bf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    bloom_options o = default_options();
    bool nocreate = false;
    int items = 0;
    const char *err = NULL;
    for (int i = 2; err == NULL && i < argc && items == 0;) {
        int used = 0;
        err = parse_shared_option(ctx, argv, argc, i, &o, &used);
        if (err != NULL || used != 0) {
            i += used;
            continue;
        }
        if (arg_is(argv[i], "ITEMS")) {
            items = i + 1;
        } else if (arg_is(argv[i], "NOCREATE")) {
            nocreate = true;
            i++;
        } else if (arg_is(argv[i], "CAPACITY") || arg_is(argv[i], "ERROR")) {
            if (i + 1 >= argc)
                return RM_WrongArity(ctx);
            err = arg_is(argv[i], "ERROR") ? parse_error_rate(argv[i + 1], &o.error)
                                           : parse_capacity(argv[i + 1], &o.capacity);
            i += 2;
        } else {
            err = ERR_UNKNOWN_ARGUMENT;
        }
    }
    if (err == NULL && (items == 0 || items >= argc))
        return RM_WrongArity(ctx);
    if (err == NULL && o.nonscaling && o.expansion_given)
        err = "Nonscaling filters cannot expand";
    if (err != NULL)
        return RM_ReplyWithError(ctx, err);
    opened_key k;
    bool created = false;
    once_filter *f = open_for_add(ctx, &k, argv[1], &o, !nocreate, &created);
    if (f != NULL)
        add_and_replicate(ctx, &k, f, argv, argc, items, false, &o, created);
    value_close(&k);
    return RM_OK;
}

/* ---------------------------------------------------------------- reads */

/* BF.EXISTS key item / BF.MEXISTS key item [item ...]: a missing key holds nothing. */
static int bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return value_exists_command(ctx, argv, argc, &bloom_type, true);
}

static int bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return value_exists_command(ctx, argv, argc, &bloom_type, false);
}

/* BF.INFO's fields, in the order clients of RedisBloom read them. */
enum { INFO_CAPACITY, INFO_SIZE, INFO_FILTERS, INFO_ITEMS, INFO_EXPANSION, INFO_FIELDS };
static const struct {
    const char *word, *label;
} info_fields[INFO_FIELDS] = {
    {"CAPACITY", "Capacity"},
    {"SIZE", "Size"},
    {"FILTERS", "Number of filters"},
    {"ITEMS", "Number of items inserted"},
    {"EXPANSION", "Expansion rate"},
};

/* What BF.INFO reports, every field read in constant time (the command is "fast"). */
typedef struct bloom_info {
    uint64_t capacity, bytes, items;
    uint32_t filters, expansion;
} bloom_info;

static void reply_info_value(RedisModuleCtx *ctx, const bloom_info *s, int field)
{
    switch (field) {
    case INFO_CAPACITY:
        RM_ReplyWithLongLong(ctx, (long long)s->capacity);
        break;
    case INFO_SIZE:
        RM_ReplyWithLongLong(ctx, (long long)s->bytes);
        break;
    case INFO_FILTERS:
        RM_ReplyWithLongLong(ctx, (long long)s->filters);
        break;
    case INFO_ITEMS:
        RM_ReplyWithLongLong(ctx, (long long)s->items);
        break;
    default:
        if (s->expansion == 0)
            RM_ReplyWithNull(ctx);
        else
            RM_ReplyWithLongLong(ctx, (long long)s->expansion);
    }
}

/* BF.INFO key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION] */
static int bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc > 3)
        return RM_WrongArity(ctx);
    opened_key k;
    once_filter *f = value_open_filter(ctx, argv[1], RM_READ, &bloom_type, &k);
    if (f == NULL)
        return RM_OK;
    int field = INFO_FIELDS; /* all */
    if (argc == 3) {
        for (field = 0; field < INFO_FIELDS; field++)
            if (arg_is(argv[2], info_fields[field].word))
                break;
        if (field == INFO_FIELDS) {
            value_close(&k);
            return RM_ReplyWithError(ctx, "ERR invalid information value");
        }
    }
    bloom_info s = {once_capacity(f), once_bytes(f), once_items(f), 0, 0};
    once_scalable_shape(f, &s.filters, &s.expansion);
    value_close(&k);
    if (field != INFO_FIELDS) {
        /* RESP2: [value]; RESP3: {label: value}. */
        if (client_resp3(ctx)) {
            RM_ReplyWithMap(ctx, 1);
            RM_ReplyWithSimpleString(ctx, info_fields[field].label);
        } else {
            RM_ReplyWithArray(ctx, 1);
        }
        reply_info_value(ctx, &s, field);
        return RM_OK;
    }
    RM_ReplyWithMap(ctx, INFO_FIELDS); /* a flat array of pairs under RESP2 */
    for (int i = 0; i < INFO_FIELDS; i++) {
        RM_ReplyWithSimpleString(ctx, info_fields[i].label);
        reply_info_value(ctx, &s, i);
    }
    return RM_OK;
}

/* BF.CARD key [ESTIMATE [CONFIDENCE c]]: the items inserted (0 for a missing key), or
 * the distinct keys estimated from the filter's bits with an interval holding the true
 * count with probability c (paper 002, section 5): [estimate, low, high]. */
static int bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return value_card_command(ctx, argv, argc, &bloom_type);
}

/* BF.MERGE dest src [src ...]: dest := dest OR every src (a missing dest starts as a
 * copy of the first).  The filters must be of one series and seed (the same
 * expansion, first capacity and error rate, and SEED); their lengths may differ
 * (lib/grow/scalable.c, "Union").  All or nothing: the union is built on a copy and
 * replaces dest only when every source went in. */
static int bf_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    opened_key dest = value_open(ctx, argv[1], RM_READ | RM_WRITE, &bloom_type);
    once_filter *current = value_filter_or_reply(ctx, &dest, NULL);
    if (current == NULL && dest.state != KEY_MISSING) {
        value_close(&dest);
        return RM_OK;
    }
    once_filter *merged = NULL;
    once_status st = ONCE_OK;
    for (int i = 2; i < argc && st == ONCE_OK; i++) {
        opened_key src;
        once_filter *f = value_open_filter(ctx, argv[i], RM_READ, &bloom_type, &src);
        if (f == NULL) {
            once_free(merged);
            value_close(&dest);
            return RM_OK;
        }
        if (merged == NULL)
            st = value_copy_filter(current != NULL ? current : f, &merged);
        if (st == ONCE_OK && (current != NULL || i > 2))
            st = once_union(merged, f);
        value_close(&src);
    }
    if (st == ONCE_OK && once_bytes(merged) > (uint64_t)config.max_memory &&
        !command_replayed(ctx))
        st = ONCE_ERR_FULL;
    if (st != ONCE_OK) {
        once_free(merged);
        value_close(&dest);
        return st == ONCE_ERR_MISMATCH
                   ? RM_ReplyWithError(ctx, "ERR cannot merge: the filters differ in expansion, "
                                            "capacity, error rate or seed")
                   : reply_status(ctx, st);
    }
    if (current != NULL)
        value_replace(&dest, merged);
    else if (!value_store(&dest, &bloom_type, merged)) {
        value_close(&dest);
        return RM_ReplyWithError(ctx, memory_refusal());
    }
    value_close(&dest);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

/* ------------------------------------------------------------- the type */

static const command_spec bloom_commands[] = {
    {"bf.reserve", bf_reserve, "write deny-oom", -4, KEYS_FIRST, KEY_CREATES,
     "Create a Bloom filter for a capacity and an error rate"},
    {"bf.add", bf_add, "write deny-oom", 3, KEYS_FIRST, KEY_WRITES,
     "Add an item; 1 if it was new, 0 if it was (probably) present"},
    {"bf.madd", bf_madd, "write deny-oom", -3, KEYS_FIRST, KEY_WRITES, "Add items"},
    {"bf.insert", bf_insert, "write deny-oom", -4, KEYS_FIRST, KEY_WRITES,
     "Add items, creating the filter with the given options"},
    {"bf.exists", bf_exists, "readonly fast", 3, KEYS_FIRST, KEY_READS,
     "Is the item (probably) present?"},
    {"bf.mexists", bf_mexists, "readonly fast", -3, KEYS_FIRST, KEY_READS,
     "Are the items (probably) present?"},
    {"bf.info", bf_info, "readonly fast", -2, KEYS_FIRST, KEY_READS,
     "Capacity, size, filters, items and expansion of a filter"},
    {"bf.card", bf_card, "readonly fast", -2, KEYS_FIRST, KEY_READS,
     "Items inserted, or the distinct items estimated with an interval"},
    {"bf.merge", bf_merge, "write deny-oom", -3, KEYS_FIRST_AND_REST, KEY_CREATES,
     "Unite filters of one series and seed into the first key"},
};

VALUE_TYPE_REGISTER(bloom, bloom_type)
