/*
 * module/t_dbf.c - DBF.*: the Dynamic Bloom Filter of paper 003, a set that grows and
 * deletes.
 *
 * Design
 *   A key holds one DBF: rows of counting Bloom filters of one geometry, each taking
 *   `capacity` items at `error` (its own rate when full); a new row opens when the
 *   active one is full (paper 003, section 3).  DBF.ADD always inserts: the answer says
 *   whether the item was already reported present, but a counting set must count every
 *   insertion it will later be asked to delete, so a present item is inserted again
 *   (skipping it, as a dedup filter does, would let a later delete of it erase the
 *   counters of the items it collided with).  So DBF.MADD inserts item by item, as
 *   DBF.ADD would: the library's batches are test-and-add, which skips a present item.
 *
 *   DBF.DEL deletes from the one row that holds the item's cells.  When several rows
 *   hold them (the multiple-address problem, paper 003 section 3.1) no row can be
 *   chosen safely: deleting from the wrong one would create false negatives for other
 *   items, so the delete is refused with an error that says so and nothing changes.
 *   An item no row holds is answered 0, as SREM answers for an absent member.
 *
 * Replication: a creation is replicated as DBF.RESERVE with the seed it drew; every
 * other write verbatim (its effect depends only on the filter and its arguments).
 *
 * Invariants
 *   - a refused command changes nothing (the library leaves a DBF as it was on any
 *     failed insert or delete; a row past once.max-memory is refused);
 *   - queries never change state.
 */
#include "command.h"
#include "settings.h"
#include "t_dbf.h"
#include "value.h"

#define ERR_MULTIPLE_ROWS                                                                     \
    "ERR cannot delete: several rows hold the item's cells (the multiple-address "           \
    "problem); deleting from one could erase other items"

static bool dbf_holds(once_type type)
{
    return type == ONCE_DBF;
}

static value_type dbf_type = {.name = "oncedynbf", .family = "dbf", .noun = "filter",
                              .loadchunk = "DBF.LOADCHUNK", .holds = dbf_holds};

typedef struct dbf_options {
    double error;
    long long capacity;
    seed_and_limit sl;
} dbf_options;

static once_status dbf_make(const void *options, once_filter **out)
{
    const dbf_options *o = options;
    once_config c;
    once_config_init(&c, ONCE_DBF);
    c.capacity = (uint64_t)o->capacity;
    c.error = o->error;
    c.seed = o->sl.seed;
    c.seed_is_set = true;
    c.max_bytes = o->sl.max_bytes;
    return once_create(out, &c);
}

static void describe_creation(creation *c, const dbf_options *o)
{
    creation_start(c, "DBF.RESERVE");
    creation_rate(c, o->error);
    creation_u64(c, (uint64_t)o->capacity);
    creation_option(c, "SEED", o->sl.seed);
    creation_option(c, "MAXMEMORY", o->sl.max_bytes);
}

/* DBF.RESERVE key error_rate capacity [SEED s] [MAXMEMORY bytes]: capacity is each
 * row's. */
static int dbf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    dbf_options o = {0, 0, {0, false, (uint64_t)config.max_memory}};
    const char *err = parse_error_rate(argv[2], &o.error);
    if (err == NULL)
        err = parse_capacity(argv[3], &o.capacity);
    for (int i = 4; err == NULL && i < argc;) {
        int used = 0;
        err = parse_seed_or_limit(ctx, argv, argc, i, &o.sl, &used);
        if (err == NULL && used == 0)
            err = ERR_UNKNOWN_ARGUMENT;
        i += used;
    }
    if (err != NULL)
        return RM_ReplyWithError(ctx, err);
    if (!o.sl.seed_given)
        o.sl.seed = command_new_seed();
    creation c;
    describe_creation(&c, &o);
    return value_reserve(ctx, argv[1], &dbf_type, dbf_make, &o, o.sl.max_bytes, &c);
}

/* DBF.ADD key item / DBF.MADD key item [item ...]: 1 for an item not present before,
 * 0 for one that was (inserted again all the same: see the design above, and item by
 * item, as add_request.insert_present says why). */
static int dbf_add_items(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool single)
{
    opened_key k = value_open(ctx, argv[1], RM_READ | RM_WRITE, &dbf_type);
    once_filter *f = value_filter_or_reply(ctx, &k, NULL);
    dbf_options o = {config.error_rate, config.initial_capacity,
                     {0, false, (uint64_t)config.max_memory}};
    bool created = false;
    if (f == NULL && k.state == KEY_MISSING) {
        o.sl.seed = command_new_seed();
        f = value_create(ctx, &k, &dbf_type, dbf_make, &o, o.sl.max_bytes);
        created = f != NULL;
    }
    if (f == NULL) {
        value_close(&k);
        return RM_OK;
    }
    add_request a = {.items = argv + 2, .count = argc - 2, .single = single,
                     .insert_present = true, .undoes_all = refused_for_memory};
    value_add_items(ctx, &k, f, &a);
    value_close(&k);
    creation c;
    if (created)
        describe_creation(&c, &o);
    replicate_write(ctx, argv, argc, single ? "DBF.ADD" : "DBF.MADD", created ? &c : NULL);
    return RM_OK;
}

static int dbf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return dbf_add_items(ctx, argv, argc, true);
}

static int dbf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return dbf_add_items(ctx, argv, argc, false);
}

/* DBF.DEL key item: 1 deleted, 0 held by no row (or a missing key); an error, and no
 * change, when several rows hold it. */
static int dbf_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argc;
    opened_key k = value_open(ctx, argv[1], RM_READ | RM_WRITE, &dbf_type);
    once_filter *f = value_filter_or_reply(ctx, &k, NULL);
    if (f == NULL) {
        if (k.state == KEY_MISSING)
            RM_ReplyWithLongLong(ctx, 0);
        value_close(&k);
        return RM_OK;
    }
    size_t len = 0;
    const char *item = RM_StringPtrLen(argv[2], &len);
    once_status st = once_remove(f, item, len, 0);
    value_close(&k);
    switch (st) {
    case ONCE_OK:
        RM_ReplicateVerbatim(ctx);
        return RM_ReplyWithLongLong(ctx, 1);
    case ONCE_ERR_NOT_PRESENT:
        return RM_ReplyWithLongLong(ctx, 0);
    case ONCE_ERR_UNSUPPORTED:
        return RM_ReplyWithError(ctx, ERR_MULTIPLE_ROWS);
    default:
        return reply_status(ctx, st);
    }
}

/* DBF.EXISTS key item / DBF.MEXISTS key item [item ...]: a missing key holds nothing. */
static int dbf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return value_exists_command(ctx, argv, argc, &dbf_type, true);
}

static int dbf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return value_exists_command(ctx, argv, argc, &dbf_type, false);
}

/* DBF.INFO key: a map (flat pairs under RESP2). */
static int dbf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argc;
    opened_key k;
    once_filter *f = value_open_filter(ctx, argv[1], RM_READ, &dbf_type, &k);
    if (f == NULL)
        return RM_OK;
    once_stats s;
    once_get_stats(f, &s);
    value_close(&k);
    RM_ReplyWithMap(ctx, 6 + INFO_FORMAT_PAIRS);
    reply_info_count(ctx, "Capacity per row", s.capacity);
    reply_info_count(ctx, "Rows", s.filters);
    reply_info_count(ctx, "Number of items inserted", s.items);
    reply_info_count(ctx, "Size", s.bytes);
    reply_info_rate(ctx, "Error rate", s.error);
    reply_info_rate(ctx, "Estimated error rate", s.fpr_estimate);
    reply_format(ctx, &s);
    return RM_OK;
}

/* DBF.CARD key [ESTIMATE [CONFIDENCE c]]: the items held (insertions minus deletes;
 * 0 for a missing key), or the distinct items estimated with an interval. */
static int dbf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return value_card_command(ctx, argv, argc, &dbf_type);
}

static const command_spec dbf_commands[] = {
    {"dbf.reserve", dbf_reserve, "write deny-oom", -4, KEYS_FIRST, KEY_CREATES,
     "Create a Dynamic Bloom Filter: rows of `capacity` items at an error rate"},
    {"dbf.add", dbf_add, "write deny-oom", 3, KEYS_FIRST, KEY_WRITES,
     "Insert an item; 1 if it was not present before"},
    {"dbf.madd", dbf_madd, "write deny-oom", -3, KEYS_FIRST, KEY_WRITES, "Insert items"},
    {"dbf.del", dbf_del, "write", 3, KEYS_FIRST, KEY_WRITES,
     "Delete an item; refused when several rows hold it"},
    {"dbf.exists", dbf_exists, "readonly fast", 3, KEYS_FIRST, KEY_READS,
     "Is the item (probably) present?"},
    {"dbf.mexists", dbf_mexists, "readonly fast", -3, KEYS_FIRST, KEY_READS,
     "Are the items (probably) present?"},
    {"dbf.info", dbf_info, "readonly", 2, KEYS_FIRST, KEY_READS,
     "Rows, items, size and error rates of a filter"},
    {"dbf.card", dbf_card, "readonly", -2, KEYS_FIRST, KEY_READS,
     "Items held, or the distinct items estimated with an interval"},
};

VALUE_TYPE_REGISTER(dbf, dbf_type)
