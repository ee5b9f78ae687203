/*
 * module/command.c - command tables, argument parsing and replies shared by the data
 * types (command.h).
 */
#include "command.h"
#include "memory.h"
#include "settings.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int command_register(RedisModuleCtx *ctx, const command_spec *table, size_t count)
{
    static const rm_command_info_version version = {1, sizeof(rm_command_history_entry),
                                                    sizeof(rm_command_key_spec),
                                                    sizeof(rm_command_arg)};
    for (size_t i = 0; i < count; i++) {
        const command_spec *c = &table[i];
        int last = c->keys == KEYS_FIRST ? 1 : -1;
        if (RM_CreateCommand(ctx, c->name, c->handler, c->flags, 1, last, 1) != RM_OK) {
            RM_Log(ctx, "warning", "the server refused the command %s", c->name);
            return RM_ERR;
        }
        /* Key spec 0: the first argument.  Key spec 1 (BF.MERGE's sources): every
         * argument after it.  A zeroed row ends the list. */
        rm_command_key_spec specs[3];
        memset(specs, 0, sizeof specs);
        specs[0].flags = c->key_flags;
        specs[0].begin_search_type = RM_KSPEC_BS_INDEX;
        specs[0].bs.index.pos = 1;
        specs[0].find_keys_type = RM_KSPEC_FK_RANGE;
        specs[0].fk.range.lastkey = 0;
        specs[0].fk.range.keystep = 1;
        if (c->keys == KEYS_FIRST_AND_REST) {
            specs[1].flags = RM_KEY_RO | RM_KEY_ACCESS;
            specs[1].begin_search_type = RM_KSPEC_BS_INDEX;
            specs[1].bs.index.pos = 2;
            specs[1].find_keys_type = RM_KSPEC_FK_RANGE;
            specs[1].fk.range.lastkey = -1;
            specs[1].fk.range.keystep = 1;
        }
        rm_command_info info;
        memset(&info, 0, sizeof info);
        info.version = &version;
        info.summary = c->summary;
        info.since = "0.1.0";
        info.arity = c->arity;
        info.key_specs = specs;
        RedisModuleCommand *command = RM_GetCommand(ctx, c->name);
        if (command == NULL || RM_SetCommandInfo(command, &info) != RM_OK) {
            RM_Log(ctx, "warning", "the server refused the description of %s", c->name);
            return RM_ERR;
        }
    }
    return RM_OK;
}

void creation_start(creation *c, const char *command)
{
    c->command = command;
    c->count = 0;
}

void creation_word(creation *c, const char *word)
{
    if (c->count < CREATION_MAX_WORDS)
        snprintf(c->word[c->count], sizeof c->word[0], "%s", word);
    c->count++;
}

void creation_u64(creation *c, uint64_t value)
{
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)value);
    creation_word(c, text);
}

void creation_option(creation *c, const char *name, uint64_t value)
{
    creation_word(c, name);
    creation_u64(c, value);
}

void creation_rate(creation *c, double rate)
{
    char text[40];
    snprintf(text, sizeof text, "%.17g", rate);
    creation_word(c, text);
}

void creation_replicate(RedisModuleCtx *ctx, RedisModuleString *key, const creation *c)
{
    if (c->count > CREATION_MAX_WORDS)
        return;
    RedisModuleString *args[CREATION_MAX_WORDS + 1];
    args[0] = key;
    for (int i = 0; i < c->count; i++)
        args[i + 1] = RM_CreateString(ctx, c->word[i], strlen(c->word[i]));
    RM_Replicate(ctx, c->command, "v", args, (size_t)c->count + 1);
    for (int i = 0; i < c->count; i++)
        RM_FreeString(ctx, args[i + 1]);
}

void replicate_write(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const char *name,
                     const creation *first)
{
    if (first == NULL) {
        RM_ReplicateVerbatim(ctx);
        return;
    }
    char spelled[32];
    if (name == NULL) {
        size_t len = 0;
        const char *text = RM_StringPtrLen(argv[0], &len);
        snprintf(spelled, sizeof spelled, "%.*s", (int)(len < 31 ? len : 31), text);
        name = spelled;
    }
    creation_replicate(ctx, argv[1], first);
    RM_Replicate(ctx, name, "v", argv + 1, (size_t)(argc - 1));
}

/* Items a batch call takes at once: several times the library's look-ahead (it hashes
 * and requests a key's lines 8 keys before it probes them), so that little of each
 * batch runs without it, and small enough for the stack. */
#define ADD_BATCH 64

/* The library's keys for n items of a command, each at now_ms (views of the items). */
static void keys_of(RedisModuleString **items, size_t n, uint64_t now_ms, once_key *keys)
{
    for (size_t i = 0; i < n; i++) {
        keys[i].data = RM_StringPtrLen(items[i], &keys[i].len);
        keys[i].time_ms = now_ms;
    }
}

/* DBF.ADD's insertion of keys[0 .. count-1], each answered whether present before:
 * the one-key calls in order (add_request.insert_present). */
static once_status add_each(once_filter *f, const once_key *keys, size_t count, uint8_t *seen,
                            size_t *done)
{
    for (size_t i = 0; i < count; i++) {
        bool present = false;
        once_query(f, keys[i].data, keys[i].len, keys[i].time_ms, &present);
        once_status st = once_add(f, keys[i].data, keys[i].len, keys[i].time_ms);
        if (st != ONCE_OK) {
            *done = i;
            return st;
        }
        seen[i] = present;
    }
    *done = count;
    return ONCE_OK;
}

once_status add_items_quietly(once_filter *f, const add_request *a, uint8_t *seen,
                              size_t *done)
{
    size_t count = a->count > 0 ? (size_t)a->count : 0;
    once_status st = ONCE_OK;
    *done = 0;
    while (*done < count && st == ONCE_OK) {
        once_key keys[ADD_BATCH];
        size_t n = count - *done < ADD_BATCH ? count - *done : ADD_BATCH, took = 0;
        keys_of(a->items + *done, n, a->now_ms, keys);
        st = a->insert_present ? add_each(f, keys, n, seen + *done, &took)
                               : once_test_and_add_batch_partial(f, keys, n, seen + *done, &took);
        *done += took;
    }
    return st;
}

void reply_refusal(RedisModuleCtx *ctx, const once_filter *f, const add_request *a,
                   once_status st)
{
    if (a->refusal != NULL)
        RM_ReplyWithError(ctx, a->refusal(f, st));
    else
        reply_status(ctx, st);
}

void reply_added(RedisModuleCtx *ctx, const once_filter *f, const add_request *a,
                 const uint8_t *seen, size_t done, once_status st)
{
    if (!a->single)
        RM_ReplyWithArray(ctx, (long)(done + (st != ONCE_OK)));
    for (size_t i = 0; i < done; i++)
        RM_ReplyWithBool(ctx, !seen[i]);
    if (st != ONCE_OK)
        reply_refusal(ctx, f, a, st);
}

bool refused_for_memory(const once_filter *f, once_status st)
{
    (void)f;
    return st == ONCE_ERR_FULL || st == ONCE_ERR_TOO_LARGE || st == ONCE_ERR_NOMEM;
}

size_t add_items(RedisModuleCtx *ctx, once_filter *f, const add_request *a)
{
    if (!a->single)
        RM_ReplyWithArray(ctx, RM_POSTPONED_LEN);
    size_t count = a->count > 0 ? (size_t)a->count : 0, done = 0;
    once_status st = ONCE_OK;
    while (done < count && st == ONCE_OK) {
        once_key keys[ADD_BATCH];
        uint8_t seen[ADD_BATCH];
        size_t n = count - done < ADD_BATCH ? count - done : ADD_BATCH, took = 0;
        keys_of(a->items + done, n, a->now_ms, keys);
        st = a->insert_present ? add_each(f, keys, n, seen, &took)
                               : once_test_and_add_batch_partial(f, keys, n, seen, &took);
        for (size_t i = 0; i < took; i++)
            RM_ReplyWithBool(ctx, !seen[i]);
        done += took;
    }
    if (st != ONCE_OK)
        reply_refusal(ctx, f, a, st);
    if (!a->single)
        RM_ReplySetArrayLength(ctx, (long)(done + (st != ONCE_OK)));
    return done;
}

once_status query_items(const once_filter *f, RedisModuleString **items, size_t count,
                        uint64_t now_ms, uint8_t *present)
{
    for (size_t done = 0; done < count;) {
        once_key keys[ADD_BATCH];
        size_t n = count - done < ADD_BATCH ? count - done : ADD_BATCH;
        keys_of(items + done, n, now_ms, keys);
        once_status st = once_query_batch(f, keys, n, present + done);
        if (st != ONCE_OK)
            return st;
        done += n;
    }
    return ONCE_OK;
}

bool command_replayed(RedisModuleCtx *ctx)
{
    return (RM_GetContextFlags(ctx) & (RM_CTX_FLAGS_REPLICATED | RM_CTX_FLAGS_LOADING)) != 0;
}

const char *check_error_rate(double rate)
{
    if (!(rate > 0.0 && rate < 1.0))
        return ERR_RATE_RANGE;
    return once_error_in_range(rate) ? NULL : ERR_RATE_BELOW;
}

const char *parse_error_rate(RedisModuleString *arg, double *out)
{
    if (!arg_double(arg, out))
        return "ERR bad error rate";
    return check_error_rate(*out);
}

const char *parse_capacity(RedisModuleString *arg, long long *out)
{
    if (!arg_long(arg, out))
        return "ERR bad capacity";
    if (*out <= 0)
        return "ERR (capacity should be larger than 0)";
    return NULL;
}

const char *parse_seed(RedisModuleString *arg, uint64_t *out)
{
    return arg_u64(arg, out) ? NULL : "ERR bad seed: an unsigned 64-bit integer";
}

const char *parse_seed_or_limit(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int i,
                                seed_and_limit *o, int *used)
{
    *used = 0;
    bool seed = arg_is(argv[i], "SEED");
    if (!seed && !arg_is(argv[i], "MAXMEMORY"))
        return NULL;
    if (i + 1 >= argc)
        return seed ? "ERR no seed" : "ERR no MAXMEMORY";
    *used = 2;
    if (!seed)
        return parse_max_memory(ctx, argv[i + 1], &o->max_bytes);
    const char *err = parse_seed(argv[i + 1], &o->seed);
    o->seed_given = err == NULL;
    return err;
}

const char *parse_max_memory(RedisModuleCtx *ctx, RedisModuleString *arg, uint64_t *out)
{
    if (!arg_unsigned(arg, UINT64_C(1) << 42, out) || *out < MIN_MAX_MEMORY)
        return "ERR bad MAXMEMORY: bytes, at least 4096";
    if (*out > (uint64_t)config.max_memory && !command_replayed(ctx))
        return "ERR MAXMEMORY is above once.max-memory";
    return NULL;
}

bool client_resp3(RedisModuleCtx *ctx)
{
    return (RM_GetContextFlags(ctx) & RM_CTX_FLAGS_RESP3) != 0;
}

bool arg_is(RedisModuleString *arg, const char *word)
{
    size_t len = 0;
    const char *s = RM_StringPtrLen(arg, &len);
    return len == strlen(word) && strncasecmp(s, word, len) == 0;
}

bool arg_double(RedisModuleString *arg, double *out)
{
    double v = 0;
    if (RM_StringToDouble(arg, &v) != RM_OK || v != v)
        return false;
    *out = v;
    return true;
}

bool arg_long(RedisModuleString *arg, long long *out)
{
    return RM_StringToLongLong(arg, out) == RM_OK;
}

bool arg_unsigned(RedisModuleString *arg, uint64_t max, uint64_t *out)
{
    long long v = 0;
    if (!arg_long(arg, &v) || v < 0 || (uint64_t)v > max)
        return false;
    *out = (uint64_t)v;
    return true;
}

bool arg_u64(RedisModuleString *arg, uint64_t *out)
{
    size_t len = 0;
    const char *s = RM_StringPtrLen(arg, &len);
    if (len == 0 || len > 20)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        uint64_t digit = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return false;
        v = v * 10 + digit;
    }
    *out = v;
    return true;
}

uint64_t command_new_seed(void)
{
    if (!config.random_seeds)
        return COMMAND_FIXED_SEED;
    uint64_t seed = 0;
    RM_GetRandomBytes((unsigned char *)&seed, sizeof seed);
    return seed;
}

int reply_status(RedisModuleCtx *ctx, once_status status)
{
    switch (status) {
    case ONCE_OK:
        return RM_ReplyWithSimpleString(ctx, "OK");
    case ONCE_ERR_FULL:
    case ONCE_ERR_TOO_LARGE:
        return RM_ReplyWithError(ctx, ERR_MEMORY_LIMIT);
    case ONCE_ERR_NOMEM:
        return RM_ReplyWithError(ctx, memory_refusal());
    case ONCE_ERR_TIME:
        return RM_ReplyWithError(ctx, ERR_TIME);
    default: {
        char text[160];
        snprintf(text, sizeof text, "ERR %s", once_strerror(status));
        return RM_ReplyWithError(ctx, text);
    }
    }
}

const char *parse_card_estimate(RedisModuleString **argv, int argc, bool *estimate,
                                double *confidence, bool *wrong_arity)
{
    *estimate = argc >= 3;
    *confidence = CARD_DEFAULT_CONFIDENCE;
    *wrong_arity = false;
    if (argc < 3)
        return NULL;
    if (!arg_is(argv[2], "ESTIMATE"))
        return ERR_UNKNOWN_ARGUMENT;
    if (argc == 3)
        return NULL;
    if (!arg_is(argv[3], "CONFIDENCE"))
        return ERR_UNKNOWN_ARGUMENT;
    if (argc != 5) {
        *wrong_arity = true;
        return "";
    }
    if (!arg_double(argv[4], confidence) || !(*confidence > 0.0 && *confidence < 1.0))
        return "ERR confidence must be a number in (0, 1)";
    return NULL;
}

int reply_cardinality(RedisModuleCtx *ctx, const once_filter *f, uint64_t now_ms,
                      double confidence)
{
    once_cardinality c = {0, 0, 0, confidence};
    once_status st = f != NULL ? once_estimate_cardinality(f, now_ms, confidence, &c) : ONCE_OK;
    if (st != ONCE_OK)
        return reply_status(ctx, st);
    RM_ReplyWithArray(ctx, 3);
    RM_ReplyWithDouble(ctx, c.estimate);
    RM_ReplyWithDouble(ctx, c.low);
    RM_ReplyWithDouble(ctx, c.high);
    return RM_OK;
}

void reply_info_count(RedisModuleCtx *ctx, const char *label, uint64_t count)
{
    RM_ReplyWithSimpleString(ctx, label);
    RM_ReplyWithLongLong(ctx, (long long)count);
}

void reply_info_rate(RedisModuleCtx *ctx, const char *label, double rate)
{
    RM_ReplyWithSimpleString(ctx, label);
    RM_ReplyWithDouble(ctx, rate);
}

void reply_format(RedisModuleCtx *ctx, const once_stats *s)
{
    reply_info_count(ctx, "Format", s->format);
    RM_ReplyWithSimpleString(ctx, "Probe");
    RM_ReplyWithSimpleString(ctx, s->probe);
}
