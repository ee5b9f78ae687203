/*
 * module/value.c - a key's value through RDB, AOF rewrite, DEBUG DIGEST-VALUE, COPY and
 * MEMORY USAGE, and the SCANDUMP / LOADCHUNK commands (value.h).
 *
 * Design
 *   Every way a value leaves or enters the server is the library's chunked dump
 *   (once_save_chunk, the once_loader): the RDB payload, the AOF rewrite (one LOADCHUNK
 *   command a chunk), a digest, SCANDUMP's replies.  A filter of gigabytes is never
 *   copied whole into one buffer, and a loader checks each chunk (its place in its
 *   dump, its checksum) as it arrives and the whole dump at the end, exactly as
 *   once_load checks a file.  So a corrupt RESTORE payload or chunk is refused, never
 *   trusted, and the server keeps running.
 *
 *   LOADCHUNK into a missing key begins a load; the key then holds the chunks received
 *   so far (and the loader fed with them) until the last one, when the filter is built
 *   and the chunks dropped.  The chunks are kept so that a load in progress survives
 *   what a key must survive (RDB save, AOF rewrite, a replica's full sync, COPY): each
 *   path writes them out as received and reads them back through a new loader.  A load
 *   therefore holds about twice the dump's size until it completes.
 *
 * Invariants
 *   - exactly one of value.filter and value.pending is set;
 *   - a pending load's loader has accepted every chunk it holds, in order, and not yet
 *     the last one; a chunk the loader refuses ends the load and removes the key;
 *   - a value built by LOADCHUNK or RESTORE holds a structure of its type and at most
 *     once.max-memory bytes (a startup load keeps what it finds, with a warning).
 *
 * RDB layout (VALUE_ENCODING 1): an unsigned, 0 for a filter or 1 for a pending load,
 * then the chunks as string buffers, then an empty string buffer.
 */
#include "value.h"
#include "command.h"
#include "memory.h"
#include "settings.h"

#include <stdio.h>
#include <string.h>

#define VALUE_RDB_CHUNK ((size_t)1 << 20)
/* RedisBloom's limit on one SCANDUMP reply. */
#define VALUE_SCANDUMP_CHUNK ((size_t)16 << 20)
#define VALUE_KIND_FILTER 0
#define VALUE_KIND_PENDING 1

typedef struct received_chunk {
    char *data;
    size_t len;
} received_chunk;

struct pending_load {
    once_loader *loader;
    received_chunk *chunks;
    size_t count, room;
    uint64_t bytes; /* the chunks' lengths summed */
};

/* ------------------------------------------------------------ pending loads */

static void pending_free(pending_load *p)
{
    if (p == NULL)
        return;
    if (p->loader != NULL)
        once_load_abort(p->loader);
    for (size_t i = 0; i < p->count; i++)
        RM_Free(p->chunks[i].data);
    if (p->chunks != NULL)
        RM_Free(p->chunks);
    RM_Free(p);
}

static pending_load *pending_new(void)
{
    pending_load *p = memory_try_alloc(sizeof *p);
    if (p == NULL)
        return NULL;
    memset(p, 0, sizeof *p);
    if (once_load_begin(&p->loader) != ONCE_OK) {
        RM_Free(p);
        return NULL;
    }
    return p;
}

/* Feed one chunk: kept and given to the loader.  When it is the last one, *built gets
 * the filter and the load is over (the caller frees `p`).  An error of the loader ends
 * the load (p->loader is then NULL; the caller frees `p`); ONCE_ERR_NOMEM with
 * p->loader still set is our own allocation failing before the loader saw the chunk:
 * the load is as it was. */
static once_status pending_feed(pending_load *p, const char *data, size_t len,
                                once_filter **built)
{
    *built = NULL;
    if (p->count == p->room) {
        size_t room = p->room ? p->room * 2 : 8;
        received_chunk *grown = memory_try_alloc(room * sizeof *grown);
        if (grown == NULL)
            return ONCE_ERR_NOMEM;
        if (p->count != 0)
            memcpy(grown, p->chunks, p->count * sizeof *grown);
        if (p->chunks != NULL)
            RM_Free(p->chunks);
        p->chunks = grown;
        p->room = room;
    }
    char *copy = memory_try_alloc(len);
    if (copy == NULL)
        return ONCE_ERR_NOMEM;
    memcpy(copy, data, len);
    bool complete = false;
    once_status st = once_load_chunk(p->loader, data, len, &complete);
    if (st != ONCE_OK) {
        RM_Free(copy);
        once_load_abort(p->loader);
        p->loader = NULL;
        return st;
    }
    p->chunks[p->count].data = copy;
    p->chunks[p->count].len = len;
    p->count++;
    p->bytes += len;
    if (complete) {
        once_loader *loader = p->loader;
        p->loader = NULL;
        return once_load_finish(loader, built);
    }
    return ONCE_OK;
}

/* ------------------------------------------------------------------ values */

static value *value_new(once_filter *f, pending_load *p)
{
    value *v = memory_try_alloc(sizeof *v);
    if (v != NULL) {
        memset(v, 0, sizeof *v);
        v->filter = f;
        v->pending = p;
    }
    return v;
}

static void value_free(void *v)
{
    value *val = v;
    if (val == NULL)
        return;
    once_free(val->filter);
    pending_free(val->pending);
    RM_Free(val);
}

static size_t value_mem_usage(const void *v)
{
    const value *val = v;
    size_t bytes = sizeof *val;
    if (val->filter != NULL)
        bytes += (size_t)once_bytes(val->filter);
    if (val->pending != NULL)
        bytes += sizeof *val->pending + val->pending->room * sizeof(received_chunk) +
                 2 * (size_t)val->pending->bytes; /* the chunks and the loader's copy */
    return bytes;
}

/* Give `f`'s dump to `emit` chunk by chunk, each with the cursor that follows it;
 * false if the library refused (it does not for a filter that does not change
 * during the dump). */
typedef void (*chunk_fn)(void *ctx, uint64_t cursor, const char *chunk, size_t len);

static bool for_each_chunk(const once_filter *f, size_t max_chunk, chunk_fn emit, void *ctx)
{
    size_t cap = max_chunk;
    if (cap < once_save_chunk_min(f))
        cap = once_save_chunk_min(f);
    /* Without memory for a large buffer, chunks of the smallest size any dump takes:
     * more of them, but a save never writes a value it cannot read back. */
    static char fallback[ONCE_CHUNK_MIN];
    char *buf = memory_try_alloc(cap);
    if (buf == NULL) {
        buf = fallback;
        cap = sizeof fallback;
    }
    uint64_t cursor = 0;
    bool ok = true;
    do {
        size_t n = 0;
        if (once_save_chunk(f, &cursor, cap, buf, &n) != ONCE_OK) {
            ok = false;
            break;
        }
        if (n != 0)
            emit(ctx, cursor, buf, n);
    } while (cursor != 0);
    if (buf != fallback)
        RM_Free(buf);
    return ok;
}

/* The chunks of a value: the filter's dump, or the chunks a pending load holds (each
 * with its position as its cursor: a loader reads a chunk's place from the chunk). */
static bool value_chunks(const value *v, size_t max_chunk, chunk_fn emit, void *ctx)
{
    if (v->filter != NULL)
        return for_each_chunk(v->filter, max_chunk, emit, ctx);
    for (size_t i = 0; i < v->pending->count; i++)
        emit(ctx, i + 1, v->pending->chunks[i].data, v->pending->chunks[i].len);
    return true;
}

static void emit_rdb(void *ctx, uint64_t cursor, const char *chunk, size_t len)
{
    (void)cursor;
    RM_SaveStringBuffer(ctx, chunk, len);
}

static void value_rdb_save(RedisModuleIO *rdb, void *v)
{
    const value *val = v;
    RM_SaveUnsigned(rdb, val->filter != NULL ? VALUE_KIND_FILTER : VALUE_KIND_PENDING);
    if (!value_chunks(val, VALUE_RDB_CHUNK, emit_rdb, rdb))
        RM_LogIOError(rdb, "warning", "once: a filter changed while it was saved");
    RM_SaveStringBuffer(rdb, "", 0);
}

/* Is the server loading a file (at startup, DEBUG RELOAD, a replica's full sync),
 * rather than running RESTORE? */
static bool server_loading(void)
{
    return (RM_GetContextFlags(NULL) & RM_CTX_FLAGS_LOADING) != 0;
}

/* What a built filter must satisfy to be stored under type `t`: NULL, or why not. */
static const char *refusal(const once_filter *f, const value_type *t, bool enforce_limit)
{
    if (!t->holds(once_get_type(f)))
        return "the dump holds a filter of another type";
    if (enforce_limit && once_bytes(f) > (uint64_t)config.max_memory)
        return "the filter is larger than once.max-memory";
    return NULL;
}

/*
 * The memory limit a loaded value takes.  The limit is a field of the dump, which any
 * client can edit (its checksums are recomputable): a value a client loads takes at
 * most once.max-memory, and a saved 0 ("none") means once.max-memory there.  Replays
 * keep what they are given: the startup RDB and AOF the saved limit, and a client's
 * load reaches replicas and the AOF followed by ONCE.MAXMEMORY with the limit it took.
 * Structures without a limit (the fixed-size ones) are bounded by their size, checked
 * as it is.  False when the filter holds more than the limit.
 */
static bool limit_loaded(once_filter *f, bool clamp, uint64_t *applied)
{
    *applied = 0;
    uint64_t want = 0;
    if (clamp) {
        uint64_t cap = once_max_bytes(f), server = (uint64_t)config.max_memory;
        if (cap == 0 || cap > server)
            want = server;
    }
    if (want == 0)
        return true;
    once_status st = once_set_max_bytes(f, want);
    if (st == ONCE_ERR_UNSUPPORTED)
        return true;
    if (st != ONCE_OK)
        return false;
    *applied = want;
    return true;
}

void *value_rdb_load(RedisModuleIO *rdb, int encver, const value_type *t)
{
    if (encver != VALUE_ENCODING) {
        RM_LogIOError(rdb, "warning", "once: unknown encoding %d of a %s value", encver,
                      t->name);
        return NULL;
    }
    uint64_t kind = RM_LoadUnsigned(rdb);
    if (RM_IsIOError(rdb) || (kind != VALUE_KIND_FILTER && kind != VALUE_KIND_PENDING)) {
        RM_LogIOError(rdb, "warning", "once: a %s value of an unknown kind", t->name);
        return NULL;
    }
    pending_load *p = pending_new();
    if (p == NULL)
        return NULL;
    once_filter *built = NULL;
    once_status st = ONCE_OK;
    for (;;) {
        size_t len = 0;
        char *chunk = RM_LoadStringBuffer(rdb, &len);
        if (RM_IsIOError(rdb)) {
            if (chunk != NULL)
                RM_Free(chunk);
            pending_free(p);
            once_free(built);
            return NULL;
        }
        if (len == 0) {
            RM_Free(chunk);
            break;
        }
        if (built != NULL || p->loader == NULL) /* a chunk after the dump's last */
            st = ONCE_ERR_SEQUENCE;
        else
            st = pending_feed(p, chunk, len, &built);
        RM_Free(chunk);
        if (st != ONCE_OK)
            break;
    }
    if (st == ONCE_OK && kind == VALUE_KIND_FILTER && built == NULL)
        st = ONCE_ERR_TRUNCATED;
    if (st == ONCE_OK && kind == VALUE_KIND_PENDING && (built != NULL || p->count == 0))
        st = ONCE_ERR_CORRUPT;
    if (st != ONCE_OK) {
        RM_LogIOError(rdb, "warning", "once: a saved %s value is refused: %s", t->name,
                      once_strerror(st));
        pending_free(p);
        once_free(built);
        return NULL;
    }
    if (built == NULL && !server_loading() &&
        p->bytes > (uint64_t)config.max_memory + ONCE_CHUNK_MIN) {
        RM_LogIOError(rdb, "warning", "once: a %s load in progress larger than "
                      "once.max-memory is refused", t->name);
        pending_free(p);
        return NULL;
    }
    if (built != NULL) {
        pending_free(p);
        bool loading = server_loading();
        const char *why = refusal(built, t, !loading);
        uint64_t applied = 0; /* RESTORE: a client's load, whose limit is clamped */
        if (why == NULL && !loading && !limit_loaded(built, true, &applied))
            why = "the filter is larger than once.max-memory";
        if (why == NULL && loading && once_bytes(built) > (uint64_t)config.max_memory)
            RM_LogIOError(rdb, "warning",
                          "once: a %s filter of %llu bytes, above once.max-memory, kept",
                          t->name, (unsigned long long)once_bytes(built));
        if (why != NULL) {
            RM_LogIOError(rdb, "warning", "once: a saved %s value is refused: %s", t->name,
                          why);
            once_free(built);
            return NULL;
        }
    }
    value *v = built != NULL ? value_new(built, NULL) : value_new(NULL, p);
    if (v == NULL) {
        once_free(built);
        if (built == NULL)
            pending_free(p);
    }
    return v;
}

typedef struct aof_target {
    RedisModuleIO *aof;
    RedisModuleString *key;
    const char *command;
} aof_target;

static void emit_aof(void *ctx, uint64_t cursor, const char *chunk, size_t len)
{
    const aof_target *a = ctx;
    RM_EmitAOF(a->aof, a->command, "slb", a->key, (long long)cursor, chunk, len);
}

void value_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *v, const value_type *t)
{
    aof_target target = {aof, key, t->loadchunk};
    if (!value_chunks(v, VALUE_RDB_CHUNK, emit_aof, &target))
        RM_LogIOError(aof, "warning", "once: a filter changed while it was rewritten");
}

static void emit_digest(void *ctx, uint64_t cursor, const char *chunk, size_t len)
{
    (void)cursor;
    RM_DigestAddStringBuffer(ctx, chunk, len);
}

static void value_digest(RedisModuleDigest *md, void *v)
{
    value_chunks(v, VALUE_RDB_CHUNK, emit_digest, md);
    RM_DigestEndSequence(md);
}

once_status value_copy_filter(const once_filter *f, once_filter **out)
{
    void *buf = NULL;
    size_t len = 0;
    *out = NULL;
    once_status st = once_save_to_buffer(f, &buf, &len);
    if (st != ONCE_OK)
        return st;
    st = once_load(out, buf, len);
    once_free_buffer(buf);
    return st;
}

static void *value_copy(RedisModuleString *from, RedisModuleString *to, const void *v)
{
    (void)from;
    (void)to;
    const value *val = v;
    if (val->filter != NULL) {
        once_filter *copy = NULL;
        if (value_copy_filter(val->filter, &copy) != ONCE_OK)
            return NULL;
        value *out = value_new(copy, NULL);
        if (out == NULL)
            once_free(copy);
        return out;
    }
    pending_load *p = pending_new();
    if (p == NULL)
        return NULL;
    once_filter *built = NULL;
    for (size_t i = 0; i < val->pending->count; i++)
        if (pending_feed(p, val->pending->chunks[i].data, val->pending->chunks[i].len,
                         &built) != ONCE_OK || built != NULL) {
            once_free(built);
            pending_free(p);
            return NULL;
        }
    value *out = value_new(NULL, p);
    if (out == NULL)
        pending_free(p);
    return out;
}

/* The types registered, for the commands that take a key of any of them. */
static const value_type *registered[4];
static int registered_count;

/* A type's SCANDUMP and LOADCHUNK, the same for every type but for their names. */
static int register_dump_commands(RedisModuleCtx *ctx, const value_type *t,
                                  const value_handlers *h)
{
    char scandump[32], loadchunk[32], dumped[64], restored[64];
    snprintf(scandump, sizeof scandump, "%s.scandump", t->family);
    snprintf(loadchunk, sizeof loadchunk, "%s.loadchunk", t->family);
    snprintf(dumped, sizeof dumped, "The next chunk of a %s's dump", t->noun);
    snprintf(restored, sizeof restored, "Restore a %s from the chunks of its dump", t->noun);
    const command_spec dump_commands[] = {
        {scandump, h->scandump, "readonly", 3, KEYS_FIRST, KEY_READS, dumped},
        {loadchunk, h->loadchunk, "write deny-oom", 4, KEYS_FIRST, KEY_CREATES, restored},
    };
    return command_register(ctx, dump_commands,
                            sizeof dump_commands / sizeof dump_commands[0]);
}

int value_type_register(RedisModuleCtx *ctx, value_type *t, const value_handlers *h,
                        const command_spec *commands, size_t count)
{
    rm_type_methods methods = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = h->rdb_load,
        .rdb_save = value_rdb_save,
        .aof_rewrite = h->aof_rewrite,
        .mem_usage = value_mem_usage,
        .digest = value_digest,
        .free = value_free,
        .copy = value_copy,
    };
    t->handle = RM_CreateDataType(ctx, t->name, VALUE_ENCODING, &methods);
    if (t->handle == NULL) {
        RM_Log(ctx, "warning", "the server refused the data type %s", t->name);
        return RM_ERR;
    }
    if (registered_count < (int)(sizeof registered / sizeof registered[0]))
        registered[registered_count++] = t;
    if (command_register(ctx, commands, count) != RM_OK)
        return RM_ERR;
    return register_dump_commands(ctx, t, h);
}

/* ------------------------------------------------------------------- keys */

opened_key value_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                      const value_type *t)
{
    opened_key k = {RM_OpenKey(ctx, name, mode), KEY_MISSING, NULL};
    if (k.key == NULL || RM_KeyType(k.key) == RM_KEYTYPE_EMPTY)
        return k;
    if (RM_KeyType(k.key) != RM_KEYTYPE_MODULE || RM_ModuleTypeGetType(k.key) != t->handle) {
        k.state = KEY_WRONGTYPE;
        return k;
    }
    k.state = KEY_FOUND;
    k.value = RM_ModuleTypeGetValue(k.key);
    return k;
}

void value_close(opened_key *k)
{
    if (k->key != NULL)
        RM_CloseKey(k->key);
    k->key = NULL;
}

bool value_store(opened_key *k, const value_type *t, once_filter *f)
{
    value *v = value_new(f, NULL);
    if (v == NULL) {
        once_free(f);
        return false;
    }
    RM_ModuleTypeSetValue(k->key, t->handle, v);
    k->state = KEY_FOUND;
    k->value = v;
    return true;
}

void value_warn_if_overfull(RedisModuleCtx *ctx, RedisModuleString *name, opened_key *k)
{
    if (k->state != KEY_FOUND || k->value->filter == NULL || k->value->warned_overfull)
        return;
    value *v = k->value;
    uint64_t items = once_items(v->filter), capacity = once_capacity(v->filter);
    if (items < v->next_overfull_check)
        return;
    v->next_overfull_check = items + (capacity ? capacity : 1);
    if (!once_overfull(v->filter))
        return;
    v->warned_overfull = true;
    once_stats s;
    once_get_stats(v->filter, &s);
    size_t len = 0;
    const char *key = RM_StringPtrLen(name, &len);
    RM_Log(ctx, "warning",
           "once: key '%.*s' (%s, fixed size) holds more than its capacity of %llu keys; "
           "its false-positive rate (estimated %g) rises past its error rate %g: "
           "recreate it larger, or growing (ONCE.RESERVE ... SCALING)",
           (int)(len > 200 ? 200 : len), key, s.structure, (unsigned long long)capacity,
           s.fpr_estimate, s.error);
}

once_filter *value_create(RedisModuleCtx *ctx, opened_key *k, const value_type *t,
                          value_make_fn make, const void *options, uint64_t limit)
{
    once_filter *f = NULL;
    once_status st = make(options, &f);
    if (st == ONCE_OK && once_bytes(f) > limit && !command_replayed(ctx)) {
        once_free(f);
        st = ONCE_ERR_FULL;
    }
    if (st == ONCE_OK && !value_store(k, t, f))
        st = ONCE_ERR_NOMEM;
    if (st != ONCE_OK) {
        reply_status(ctx, st);
        return NULL;
    }
    return f;
}

int value_reserve(RedisModuleCtx *ctx, RedisModuleString *name, const value_type *t,
                  value_make_fn make, const void *options, uint64_t limit, const creation *c)
{
    opened_key k = value_open(ctx, name, RM_READ | RM_WRITE, t);
    once_filter *f = NULL;
    if (k.state != KEY_MISSING)
        RM_ReplyWithError(ctx, k.state == KEY_WRONGTYPE ? ERR_WRONGTYPE : ERR_EXISTS);
    else
        f = value_create(ctx, &k, t, make, options, limit);
    value_close(&k);
    if (f == NULL)
        return RM_OK;
    creation_replicate(ctx, name, c);
    return RM_ReplyWithSimpleString(ctx, "OK");
}

size_t value_add_items(RedisModuleCtx *ctx, opened_key *k, once_filter *f, const add_request *a)
{
    size_t count = a->count > 0 ? (size_t)a->count : 0;
    if (a->single || a->undoes_all == NULL || once_can_take(f, count, a->now_ms))
        return add_items(ctx, f, a);
    /* Near the limit: a copy to go back to, should an item pass it. */
    once_filter *before = NULL;
    uint8_t *seen = memory_try_alloc(count + 1);
    if (seen == NULL || value_copy_filter(f, &before) != ONCE_OK) {
        if (seen != NULL)
            RM_Free(seen);
        RM_ReplyWithError(ctx, memory_refusal());
        return 0;
    }
    size_t done = 0;
    once_status st = add_items_quietly(f, a, seen, &done);
    if (st != ONCE_OK && a->undoes_all(f, st)) {
        /* Its error is the refused item's, said of the command, which changed nothing. */
        reply_refusal(ctx, f, a, st);
        value_replace(k, before);
        done = 0;
    } else {
        reply_added(ctx, f, a, seen, done, st);
        once_free(before);
    }
    RM_Free(seen);
    return done;
}

void value_replace(opened_key *k, once_filter *f)
{
    once_free(k->value->filter);
    k->value->filter = f;
}

once_filter *value_filter_or_reply(RedisModuleCtx *ctx, const opened_key *k,
                                   const char *missing_error)
{
    switch (k->state) {
    case KEY_WRONGTYPE:
        RM_ReplyWithError(ctx, ERR_WRONGTYPE);
        return NULL;
    case KEY_MISSING:
        if (missing_error != NULL)
            RM_ReplyWithError(ctx, missing_error);
        return NULL;
    case KEY_FOUND:
        break;
    }
    if (k->value->filter == NULL) {
        RM_ReplyWithError(ctx, ERR_INCOMPLETE);
        return NULL;
    }
    return k->value->filter;
}

once_filter *value_open_filter(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                               const value_type *t, opened_key *k)
{
    *k = value_open(ctx, name, mode, t);
    once_filter *f = value_filter_or_reply(ctx, k, ERR_NOT_FOUND);
    if (f == NULL)
        value_close(k);
    return f;
}

/* -------------------------------------------------------------- commands */

int value_scandump_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                           const value_type *t)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    opened_key k;
    once_filter *f = value_open_filter(ctx, argv[1], RM_READ, t, &k);
    if (f == NULL)
        return RM_OK;
    long long iter = 0;
    if (!arg_long(argv[2], &iter)) {
        value_close(&k);
        return RM_ReplyWithError(ctx, "ERR Second argument must be numeric");
    }
    /* A reply holds at most 16 MiB, and needs no room past the whole dump. */
    size_t cap = VALUE_SCANDUMP_CHUNK;
    uint64_t whole = once_saved_size(f) + 2 * ONCE_CHUNK_HEADER_SIZE;
    if (whole < cap)
        cap = (size_t)whole;
    if (cap < once_save_chunk_min(f))
        cap = once_save_chunk_min(f);
    char *buf = memory_try_alloc(cap);
    if (buf == NULL) {
        value_close(&k);
        return RM_ReplyWithError(ctx, memory_refusal());
    }
    uint64_t cursor = (uint64_t)iter;
    size_t n = 0;
    once_status st = iter < 0 ? ONCE_ERR_INVALID : once_save_chunk(f, &cursor, cap, buf, &n);
    if (st != ONCE_OK)
        RM_ReplyWithError(ctx, "ERR invalid iterator: start at 0 and pass back the "
                               "iterator of each reply");
    else {
        RM_ReplyWithArray(ctx, 2);
        RM_ReplyWithLongLong(ctx, (long long)cursor);
        RM_ReplyWithStringBuffer(ctx, buf, n);
    }
    RM_Free(buf);
    value_close(&k);
    return RM_OK;
}

static int reply_bad_chunk(RedisModuleCtx *ctx, const char *why)
{
    char text[200];
    snprintf(text, sizeof text, "ERR received bad data: %s", why);
    return RM_ReplyWithError(ctx, text);
}

int value_loadchunk_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                            const value_type *t)
{
    if (argc != 4)
        return RM_WrongArity(ctx);
    long long iter = 0;
    if (!arg_long(argv[2], &iter))
        return RM_ReplyWithError(ctx, "ERR Second argument must be numeric");
    size_t len = 0;
    const char *data = RM_StringPtrLen(argv[3], &len);
    opened_key k = value_open(ctx, argv[1], RM_READ | RM_WRITE, t);
    if (k.state == KEY_WRONGTYPE) {
        value_close(&k);
        return RM_ReplyWithError(ctx, ERR_WRONGTYPE);
    }
    if (k.state == KEY_FOUND && k.value->filter != NULL) {
        value_close(&k);
        return RM_ReplyWithError(ctx, "ERR item exists: delete the key before loading a "
                                      "dump into it");
    }
    if (len == 0) {
        value_close(&k);
        return reply_bad_chunk(ctx, "an empty chunk");
    }
    pending_load *p = k.state == KEY_FOUND ? k.value->pending : NULL;
    /* The chunks and the loader's copy of them are counted against the limit; the
     * first chunk's headers (at most ONCE_CHUNK_MIN bytes) are not. */
    uint64_t received = (p != NULL ? p->bytes : 0) + len;
    if (received > (uint64_t)config.max_memory + ONCE_CHUNK_MIN && !command_replayed(ctx)) {
        value_close(&k);
        return RM_ReplyWithError(ctx, ERR_MEMORY_LIMIT);
    }
    bool fresh = p == NULL;
    if (fresh && (p = pending_new()) == NULL) {
        value_close(&k);
        return RM_ReplyWithError(ctx, memory_refusal());
    }
    once_filter *built = NULL;
    once_status st = pending_feed(p, data, len, &built);
    if (st == ONCE_ERR_NOMEM && p->loader != NULL) { /* nothing changed */
        if (fresh)
            pending_free(p);
        value_close(&k);
        return RM_ReplyWithError(ctx, memory_refusal());
    }
    const char *why = st != ONCE_OK ? once_strerror(st) : NULL;
    bool replayed = command_replayed(ctx);
    if (st == ONCE_OK && built != NULL)
        why = refusal(built, t, !replayed);
    uint64_t applied = 0;
    if (why == NULL && st == ONCE_OK && built != NULL &&
        !limit_loaded(built, !replayed, &applied))
        why = "the filter is larger than once.max-memory";
    if (why != NULL) {
        /* The load is over: nothing half-built stays behind. */
        bool over_limit = st == ONCE_OK && t->holds(once_get_type(built));
        once_free(built);
        if (fresh) {
            pending_free(p);
        } else {
            RM_DeleteKey(k.key); /* frees the value and its pending load */
            RM_Replicate(ctx, "DEL", "s", argv[1]);
        }
        value_close(&k);
        if (st == ONCE_ERR_NOMEM)
            return RM_ReplyWithError(ctx, memory_refusal());
        if (over_limit)
            return RM_ReplyWithError(ctx, ERR_MEMORY_LIMIT);
        return reply_bad_chunk(ctx, why);
    }
    if (fresh) {
        value *v = value_new(built, built != NULL ? NULL : p);
        if (v == NULL) {
            once_free(built);
            pending_free(p);
            value_close(&k);
            return RM_ReplyWithError(ctx, memory_refusal());
        }
        if (built != NULL)
            pending_free(p);
        RM_ModuleTypeSetValue(k.key, t->handle, v);
    } else if (built != NULL) {
        k.value->filter = built;
        k.value->pending = NULL;
        pending_free(p);
    }
    value_close(&k);
    if (applied != 0) { /* the limit it took goes with it, after the chunk */
        char limit[24];
        snprintf(limit, sizeof limit, "%llu", (unsigned long long)applied);
        size_t name_len = 0;
        const char *name = RM_StringPtrLen(argv[0], &name_len);
        char command[32];
        snprintf(command, sizeof command, "%.*s", (int)name_len, name);
        RM_Replicate(ctx, command, "v", argv + 1, (size_t)3);
        RM_Replicate(ctx, "ONCE.MAXMEMORY", "sc", argv[1], limit);
    } else {
        RM_ReplicateVerbatim(ctx);
    }
    return RM_ReplyWithSimpleString(ctx, "OK");
}

int value_exists_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                         const value_type *t, bool single)
{
    if (single ? argc != 3 : argc < 3)
        return RM_WrongArity(ctx);
    opened_key k = value_open(ctx, argv[1], RM_READ, t);
    once_filter *f = value_filter_or_reply(ctx, &k, NULL);
    if (f == NULL && k.state != KEY_MISSING) {
        value_close(&k);
        return RM_OK;
    }
    size_t count = (size_t)argc - 2;
    uint8_t answers[64];
    uint8_t *present = count <= 64 ? answers : RM_Alloc(count);
    /* A filter without a clock answers every query (time 0); a missing key holds none. */
    if (f == NULL || query_items(f, argv + 2, count, 0, present) != ONCE_OK)
        memset(present, 0, count);
    value_close(&k);
    if (!single)
        RM_ReplyWithArray(ctx, (long)count);
    for (size_t i = 0; i < count; i++)
        RM_ReplyWithBool(ctx, present[i]);
    if (present != answers)
        RM_Free(present);
    return RM_OK;
}

int value_card_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                       const value_type *t)
{
    bool estimate = false, wrong_arity = false;
    double confidence = 0;
    const char *err = parse_card_estimate(argv, argc, &estimate, &confidence, &wrong_arity);
    if (err != NULL)
        return wrong_arity ? RM_WrongArity(ctx) : RM_ReplyWithError(ctx, err);
    opened_key k = value_open(ctx, argv[1], RM_READ, t);
    once_filter *f = value_filter_or_reply(ctx, &k, NULL);
    if (f != NULL || k.state == KEY_MISSING) {
        if (estimate)
            reply_cardinality(ctx, f, 0, confidence);
        else
            RM_ReplyWithLongLong(ctx, f != NULL ? (long long)once_items(f) : 0);
    }
    value_close(&k);
    return RM_OK;
}

/* ONCE.MAXMEMORY key bytes: the memory limit of a key of any of the module's types, set
 * on a value that exists (at most once.max-memory, unless replayed) as once_set_max_bytes
 * does: refused, unchanged, below what it holds.  A client's load replicates it too. */
int value_maxmemory_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RM_WrongArity(ctx);
    uint64_t limit = 0;
    const char *err = parse_max_memory(ctx, argv[2], &limit);
    if (err != NULL)
        return RM_ReplyWithError(ctx, err);
    opened_key k = {NULL, KEY_MISSING, NULL};
    for (int i = 0; i < registered_count; i++) {
        k = value_open(ctx, argv[1], RM_READ | RM_WRITE, registered[i]);
        if (k.state != KEY_WRONGTYPE)
            break;
        value_close(&k);
    }
    if (k.state != KEY_FOUND || k.value->filter == NULL) {
        bool wrong = k.state == KEY_WRONGTYPE, pending = k.state == KEY_FOUND;
        value_close(&k);
        return RM_ReplyWithError(ctx, wrong     ? ERR_WRONGTYPE
                                      : pending ? "ERR the key holds a load in progress"
                                                : ERR_NOT_FOUND);
    }
    once_filter *f = k.value->filter;
    once_status st = once_set_max_bytes(f, limit);
    uint64_t held = once_bytes(f);
    value_close(&k);
    if (st == ONCE_ERR_UNSUPPORTED)
        return RM_ReplyWithError(ctx, "ERR this filter has a fixed size: it has no memory "
                                      "limit to change");
    if (st == ONCE_ERR_FULL) {
        char text[160];
        snprintf(text, sizeof text, "ERR the filter holds %llu bytes, more than that limit",
                 (unsigned long long)held);
        return RM_ReplyWithError(ctx, text);
    }
    if (st != ONCE_OK)
        return reply_status(ctx, st);
    RM_ReplicateVerbatim(ctx);
    return RM_ReplyWithSimpleString(ctx, "OK");
}
