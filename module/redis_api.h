/*
 * module/redis_api.h - the part of the Redis module API this module calls.
 *
 * Debian ships no header for the module API, so the calls, types and constants we use
 * are declared here, from the ABI of Redis 7.0 (the server Debian 12 ships).  The
 * server hands the module a lookup function (the first field of the context passed to
 * RedisModule_OnLoad); redis_api_resolve() looks every call below up by its name,
 * "RedisModule_" + NAME, once at load.  A call the server does not offer stays NULL:
 * the calls marked REQUIRED fail the load when missing, the others are checked where
 * they are used.
 *
 * Layouts and values here are facts of the ABI (field order, sizes and constant values
 * the server reads); the names are ours.
 */
#ifndef ONCE_MODULE_REDIS_API_H
#define ONCE_MODULE_REDIS_API_H

#include <stddef.h>
#include <stdint.h>

#define RM_OK 0
#define RM_ERR 1
#define RM_APIVER_1 1

#define RM_READ (1 << 0)
#define RM_WRITE (1 << 1)

#define RM_KEYTYPE_EMPTY 0
#define RM_KEYTYPE_MODULE 6

#define RM_POSTPONED_LEN (-1L)
#define RM_CTX_FLAGS_REPLICATED (1 << 12)
#define RM_CTX_FLAGS_LOADING (1 << 13)
#define RM_CTX_FLAGS_RESP3 (1 << 22)
#define RM_OPTIONS_HANDLE_IO_ERRORS (1 << 0)
#define RM_TYPE_METHOD_VERSION 4
#define RM_CONFIG_DEFAULT 0u
#define RM_CONFIG_IMMUTABLE (1u << 0)
#define RM_CONFIG_MEMORY (1u << 7)

/* Key-spec flags (bit numbers of a uint64_t) and search kinds. */
#define RM_KEY_RO (UINT64_C(1) << 0)
#define RM_KEY_RW (UINT64_C(1) << 1)
#define RM_KEY_OW (UINT64_C(1) << 2)
#define RM_KEY_ACCESS (UINT64_C(1) << 4)
#define RM_KEY_UPDATE (UINT64_C(1) << 5)
#define RM_KEY_INSERT (UINT64_C(1) << 6)
#define RM_KSPEC_BS_INDEX 2
#define RM_KSPEC_FK_RANGE 2

typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleCommand RedisModuleCommand;
typedef struct RedisModuleKeyOptCtx RedisModuleKeyOptCtx;
typedef struct RedisModuleDefragCtx RedisModuleDefragCtx;
typedef struct RedisModuleServerInfoData RedisModuleServerInfoData;

typedef int (*rm_command_fn)(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* The data type's callbacks, in the order the server reads them (version 4, 7.0). */
typedef struct rm_type_methods {
    uint64_t version;
    void *(*rdb_load)(RedisModuleIO *rdb, int encver);
    void (*rdb_save)(RedisModuleIO *rdb, void *value);
    void (*aof_rewrite)(RedisModuleIO *aof, RedisModuleString *key, void *value);
    size_t (*mem_usage)(const void *value);
    void (*digest)(RedisModuleDigest *digest, void *value);
    void (*free)(void *value);
    int (*aux_load)(RedisModuleIO *rdb, int encver, int when);
    void (*aux_save)(RedisModuleIO *rdb, int when);
    int aux_save_triggers;
    size_t (*free_effort)(RedisModuleString *key, const void *value);
    void (*unlink)(RedisModuleString *key, const void *value);
    void *(*copy)(RedisModuleString *fromkey, RedisModuleString *tokey, const void *value);
    int (*defrag)(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **value);
    size_t (*mem_usage2)(RedisModuleKeyOptCtx *ctx, const void *value, size_t sample_size);
    size_t (*free_effort2)(RedisModuleKeyOptCtx *ctx, const void *value);
    void (*unlink2)(RedisModuleKeyOptCtx *ctx, const void *value);
    void *(*copy2)(RedisModuleKeyOptCtx *ctx, const void *value);
} rm_type_methods;

/* Command documentation and key specs (SetCommandInfo, 7.0). */
typedef struct rm_command_key_spec {
    const char *notes;
    uint64_t flags;
    int begin_search_type;
    union {
        struct {
            int pos;
        } index;
        struct {
            const char *keyword;
            int startfrom;
        } keyword;
    } bs;
    int find_keys_type;
    union {
        struct {
            int lastkey, keystep, limit;
        } range;
        struct {
            int keynumidx, firstkey, keystep;
        } keynum;
    } fk;
} rm_command_key_spec;

typedef struct rm_command_history_entry {
    const char *since, *changes;
} rm_command_history_entry;

typedef struct rm_command_arg {
    const char *name;
    int type;
    int key_spec_index;
    const char *token, *summary, *since;
    int flags;
    const char *deprecated_since;
    struct rm_command_arg *subargs;
} rm_command_arg;

typedef struct rm_command_info_version {
    int version;
    size_t sizeof_historyentry, sizeof_keyspec, sizeof_arg;
} rm_command_info_version;

typedef struct rm_command_info {
    const rm_command_info_version *version;
    const char *summary, *complexity, *since;
    rm_command_history_entry *history;
    const char *tips;
    int arity; /* >0 exact argc with the name, -N at least N */
    rm_command_key_spec *key_specs;
    rm_command_arg *args;
} rm_command_info;

typedef long long (*rm_get_numeric_fn)(const char *name, void *privdata);
typedef int (*rm_set_numeric_fn)(const char *name, long long val, void *privdata,
                                 RedisModuleString **err);
typedef RedisModuleString *(*rm_get_string_fn)(const char *name, void *privdata);
typedef int (*rm_set_string_fn)(const char *name, RedisModuleString *val, void *privdata,
                                RedisModuleString **err);
typedef int (*rm_get_bool_fn)(const char *name, void *privdata);
typedef int (*rm_set_bool_fn)(const char *name, int val, void *privdata,
                              RedisModuleString **err);
typedef int (*rm_apply_fn)(RedisModuleCtx *ctx, void *privdata, RedisModuleString **err);

/*
 * The calls: X(REQUIRED, RETURN, NAME, PARAMETERS).  One list, from which both the
 * pointers and their lookup are made, so a call cannot be declared and not resolved.
 */
#define RM_CALLS(X)                                                                           \
    X(1, void, SetModuleAttribs, (RedisModuleCtx *, const char *, int, int))                 \
    X(0, int, IsModuleNameBusy, (const char *))                                               \
    X(1, void, SetModuleOptions, (RedisModuleCtx *, int))                                     \
    X(1, int, CreateCommand,                                                                  \
      (RedisModuleCtx *, const char *, rm_command_fn, const char *, int, int, int))           \
    X(1, RedisModuleCommand *, GetCommand, (RedisModuleCtx *, const char *))                  \
    X(1, int, SetCommandInfo, (RedisModuleCommand *, const rm_command_info *))                \
    X(1, int, WrongArity, (RedisModuleCtx *))                                                 \
    X(1, int, GetContextFlags, (RedisModuleCtx *))                                            \
    X(1, void, Log, (RedisModuleCtx *, const char *, const char *, ...))                      \
    X(1, void, LogIOError, (RedisModuleIO *, const char *, const char *, ...))                \
    X(1, long long, Milliseconds, (void))                                                     \
    X(1, void, GetRandomBytes, (unsigned char *, size_t))                                     \
    X(1, RedisModuleKey *, OpenKey, (RedisModuleCtx *, RedisModuleString *, int))             \
    X(1, void, CloseKey, (RedisModuleKey *))                                                  \
    X(1, int, KeyType, (RedisModuleKey *))                                                    \
    X(1, int, DeleteKey, (RedisModuleKey *))                                                  \
    X(1, RedisModuleType *, CreateDataType,                                                   \
      (RedisModuleCtx *, const char *, int, rm_type_methods *))                               \
    X(1, int, ModuleTypeSetValue, (RedisModuleKey *, RedisModuleType *, void *))              \
    X(1, RedisModuleType *, ModuleTypeGetType, (RedisModuleKey *))                            \
    X(1, void *, ModuleTypeGetValue, (RedisModuleKey *))                                      \
    X(1, void, SaveUnsigned, (RedisModuleIO *, uint64_t))                                     \
    X(1, uint64_t, LoadUnsigned, (RedisModuleIO *))                                           \
    X(1, void, SaveStringBuffer, (RedisModuleIO *, const char *, size_t))                     \
    X(1, char *, LoadStringBuffer, (RedisModuleIO *, size_t *))                               \
    X(1, int, IsIOError, (RedisModuleIO *))                                                   \
    X(1, void, EmitAOF, (RedisModuleIO *, const char *, const char *, ...))                   \
    X(1, void, DigestAddStringBuffer, (RedisModuleDigest *, const char *, size_t))            \
    X(1, void, DigestEndSequence, (RedisModuleDigest *))                                      \
    X(1, int, ReplyWithLongLong, (RedisModuleCtx *, long long))                               \
    X(1, int, ReplyWithError, (RedisModuleCtx *, const char *))                               \
    X(1, int, ReplyWithSimpleString, (RedisModuleCtx *, const char *))                        \
    X(1, int, ReplyWithArray, (RedisModuleCtx *, long))                                       \
    X(1, int, ReplyWithMap, (RedisModuleCtx *, long))                                         \
    X(1, void, ReplySetArrayLength, (RedisModuleCtx *, long))                                 \
    X(1, int, ReplyWithBool, (RedisModuleCtx *, int))                                         \
    X(1, int, ReplyWithNull, (RedisModuleCtx *))                                              \
    X(1, int, ReplyWithDouble, (RedisModuleCtx *, double))                                    \
    X(1, int, ReplyWithStringBuffer, (RedisModuleCtx *, const char *, size_t))                \
    X(1, int, ReplyWithCString, (RedisModuleCtx *, const char *))                             \
    X(1, const char *, StringPtrLen, (const RedisModuleString *, size_t *))                   \
    X(1, int, StringToLongLong, (const RedisModuleString *, long long *))                     \
    X(0, int, StringToULongLong, (const RedisModuleString *, unsigned long long *))           \
    X(1, int, StringToDouble, (const RedisModuleString *, double *))                          \
    X(1, RedisModuleString *, CreateString, (RedisModuleCtx *, const char *, size_t))         \
    X(1, void, FreeString, (RedisModuleCtx *, RedisModuleString *))                           \
    X(1, void *, Alloc, (size_t))                                                             \
    X(1, void *, Calloc, (size_t, size_t))                                                    \
    X(1, void *, Realloc, (void *, size_t))                                                   \
    X(1, void, Free, (void *))                                                                \
    X(0, void *, TryAlloc, (size_t))                                                          \
    X(0, RedisModuleServerInfoData *, GetServerInfo, (RedisModuleCtx *, const char *))        \
    X(0, unsigned long long, ServerInfoGetFieldUnsigned,                                      \
      (RedisModuleServerInfoData *, const char *, int *))                                     \
    X(0, void, FreeServerInfo, (RedisModuleCtx *, RedisModuleServerInfoData *))              \
    X(1, size_t, MallocSize, (void *))                                                        \
    X(1, int, Replicate, (RedisModuleCtx *, const char *, const char *, ...))                 \
    X(1, int, ReplicateVerbatim, (RedisModuleCtx *))                                          \
    X(1, int, RegisterNumericConfig,                                                          \
      (RedisModuleCtx *, const char *, long long, unsigned int, long long, long long,         \
       rm_get_numeric_fn, rm_set_numeric_fn, rm_apply_fn, void *))                            \
    X(1, int, RegisterStringConfig,                                                           \
      (RedisModuleCtx *, const char *, const char *, unsigned int, rm_get_string_fn,          \
       rm_set_string_fn, rm_apply_fn, void *))                                                \
    X(1, int, RegisterBoolConfig,                                                             \
      (RedisModuleCtx *, const char *, int, unsigned int, rm_get_bool_fn, rm_set_bool_fn,     \
       rm_apply_fn, void *))                                                                  \
    X(1, int, LoadConfigs, (RedisModuleCtx *))

#define RM_DECLARE(required, ret, name, params) extern ret(*RM_##name) params;
RM_CALLS(RM_DECLARE)
#undef RM_DECLARE

/* Look every call up through the context's lookup function.  RM_OK, or RM_ERR with
 * the name of the first required call missing in *missing. */
int redis_api_resolve(RedisModuleCtx *ctx, const char **missing);

#endif /* ONCE_MODULE_REDIS_API_H */
