/*
 * module/value.h - what the module's data types share.
 *
 * A key of one of our types holds a value: either a filter of the library, or a load
 * in progress (the chunks of a dump received so far by LOADCHUNK, until the last one
 * arrives and the filter is built).  Saving, loading, rewriting the AOF, copying,
 * digesting and sizing a value, and the SCANDUMP / LOADCHUNK commands, are the same
 * for every type; a type says only which structures it holds and what its commands are
 * called (value_type), and value_type_register makes its SCANDUMP and LOADCHUNK with the
 * commands of its own table.
 */
#ifndef ONCE_MODULE_VALUE_H
#define ONCE_MODULE_VALUE_H

#include "command.h"
#include "redis_api.h"

#include "once_advanced.h"

#include <stdbool.h>

typedef struct pending_load pending_load;

typedef struct value {
    once_filter *filter;   /* the key's filter; NULL while a load is pending */
    pending_load *pending; /* the chunks received so far; NULL once built */
    /* Not saved: whether the log said the filter is overfull, and at what items it is
     * looked at again (value_warn_if_overfull). */
    bool warned_overfull;
    uint64_t next_overfull_check;
} value;

/* A data type of the module: one per command family (BF.*, ONCE.*, DBF.*). */
typedef struct value_type {
    const char *name;      /* the server's type name: 9 characters, unique */
    const char *family;    /* its commands' prefix, lower case: "bf" */
    const char *noun;      /* what a key holds, as the dump commands' summaries say it */
    const char *loadchunk; /* the command the AOF rewrite emits: "BF.LOADCHUNK" */
    bool (*holds)(once_type type); /* the structures it may hold */
    RedisModuleType *handle;       /* set by value_type_register */
} value_type;

/* The RDB encoding of every type's value. */
#define VALUE_ENCODING 1

/* A type's own wrappers (VALUE_TYPE_REGISTER) of the shared callbacks and commands:
 * the server passes them no type. */
typedef struct value_handlers {
    void *(*rdb_load)(RedisModuleIO *rdb, int encver);
    void (*aof_rewrite)(RedisModuleIO *aof, RedisModuleString *key, void *value);
    rm_command_fn scandump, loadchunk;
} value_handlers;

/* Register `t` with the server, then its commands: those of `commands`, in order, and
 * last its SCANDUMP and LOADCHUNK (family.scandump, family.loadchunk).  RM_OK, or
 * RM_ERR after logging what the server refused. */
int value_type_register(RedisModuleCtx *ctx, value_type *t, const value_handlers *h,
                        const command_spec *commands, size_t count);

void *value_rdb_load(RedisModuleIO *rdb, int encver, const value_type *t);
void value_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *v,
                       const value_type *t);

/* A key opened for a command. */
typedef enum key_state { KEY_MISSING, KEY_FOUND, KEY_WRONGTYPE } key_state;

typedef struct opened_key {
    RedisModuleKey *key; /* NULL for a missing key opened to read */
    key_state state;
    value *value;        /* KEY_FOUND only */
} opened_key;

opened_key value_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                      const value_type *t);
void value_close(opened_key *k);
/* Store a new filter under a key opened to write (missing); false (and `f` freed) when
 * memory runs out. */
bool value_store(opened_key *k, const value_type *t, once_filter *f);
/* The filter of an opened key, or NULL after replying the error that stops the
 * command: WRONGTYPE, a load in progress, or (when `missing_error` is not NULL) a
 * missing key.  A missing key with `missing_error` NULL gives NULL and no reply. */
once_filter *value_filter_or_reply(RedisModuleCtx *ctx, const opened_key *k,
                                   const char *missing_error);
/* Open `name` (value_open) for a command that needs its filter: the filter, or NULL
 * after replying the error that stops the command (value_filter_or_reply, "ERR not
 * found" for a missing key) and closing the key. */
once_filter *value_open_filter(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                               const value_type *t, opened_key *k);

/* After a write to `k`: log once (per value, while the server runs) that its filter
 * holds more keys than it was made for and its rate rises past its error
 * (once_overfull: a fixed timer window past its capacity).  The look scans the cells
 * of such a filter, so it is taken once every `capacity` new keys. */
void value_warn_if_overfull(RedisModuleCtx *ctx, RedisModuleString *name, opened_key *k);

/* Making a new key's filter: `make` builds it from a type's options. */
typedef once_status (*value_make_fn)(const void *options, once_filter **out);
/* Make a filter and store it under `k`, opened to write and missing: the filter, or
 * NULL after replying why not (a filter above `limit` bytes is refused, but when the
 * command is replayed: it was taken where it first ran). */
once_filter *value_create(RedisModuleCtx *ctx, opened_key *k, const value_type *t,
                          value_make_fn make, const void *options, uint64_t limit);
/* TYPE.RESERVE: value_create under `name`, which must be missing (else WRONGTYPE or
 * "ERR item exists" is replied), then replicate `c`, that creation, and reply OK.
 * RM_OK. */
int value_reserve(RedisModuleCtx *ctx, RedisModuleString *name, const value_type *t,
                  value_make_fn make, const void *options, uint64_t limit, const creation *c);

/* An independent copy of a filter (through its saved form). */
once_status value_copy_filter(const once_filter *f, once_filter **out);
/* add_items on the opened key's filter `f`, but a command of several items that one
 * refuses for what a->undoes_all says (the memory limit) changes nothing: its error
 * alone is the reply, the filter as it was (a copy kept while once_can_take is unsure).
 * How many items took effect. */
size_t value_add_items(RedisModuleCtx *ctx, opened_key *k, once_filter *f, const add_request *a);
/* Put `f` in place of an opened key's filter, freeing the old one. */
void value_replace(opened_key *k, once_filter *f);

/* TYPE.SCANDUMP key iterator / TYPE.LOADCHUNK key iterator data, for any type. */
int value_scandump_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                           const value_type *t);
/* ONCE.MAXMEMORY key bytes, for a key of any registered type. */
int value_maxmemory_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int value_loadchunk_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                            const value_type *t);
/* For the types without a clock (BF.*, DBF.*): TYPE.EXISTS key item (single) and
 * TYPE.MEXISTS key item [item ...], a missing key holding nothing; TYPE.CARD key
 * [ESTIMATE [CONFIDENCE c]], the items held (0 for a missing key) or the distinct
 * items estimated with an interval. */
int value_exists_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                         const value_type *t, bool single);
int value_card_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                       const value_type *t);

/* The server passes its type callbacks and command handlers no type: these wrappers,
 * one set a type, hand theirs (`type`, a value_type) to the shared code above, and
 * prefix##_register(ctx), the type's registration (module.c), gives them and the
 * type's table of commands, prefix##_commands, to value_type_register.  Written once,
 * after the table, at the end of the type's file. */
#define VALUE_TYPE_REGISTER(prefix, type)                                                     \
    static void *prefix##_rdb_load(RedisModuleIO *rdb, int encver)                           \
    {                                                                                         \
        return value_rdb_load(rdb, encver, &(type));                                          \
    }                                                                                         \
    static void prefix##_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *v)    \
    {                                                                                         \
        value_aof_rewrite(aof, key, v, &(type));                                              \
    }                                                                                         \
    static int prefix##_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)    \
    {                                                                                         \
        return value_scandump_command(ctx, argv, argc, &(type));                              \
    }                                                                                         \
    static int prefix##_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)   \
    {                                                                                         \
        return value_loadchunk_command(ctx, argv, argc, &(type));                             \
    }                                                                                         \
    static const value_handlers prefix##_handlers = {                                         \
        prefix##_rdb_load, prefix##_aof_rewrite, prefix##_scandump, prefix##_loadchunk};      \
    int prefix##_register(RedisModuleCtx *ctx)                                                \
    {                                                                                         \
        return value_type_register(ctx, &(type), &prefix##_handlers, prefix##_commands,       \
                                   sizeof prefix##_commands / sizeof prefix##_commands[0]);   \
    }

#endif /* ONCE_MODULE_VALUE_H */
