/*
 * module/module.c - once.so: the library as a Redis module.
 *
 * Loading: the API calls are looked up by name (redis_api.c), the module names itself
 * "once" (so its configs read once.<name>), takes over handling of bad RDB input
 * (RM_OPTIONS_HANDLE_IO_ERRORS: a corrupt payload is refused, not a crash), and routes
 * every allocation of the library through the server's allocator, so that INFO memory
 * and MEMORY USAGE count the filters.  Then the settings (config.c) and each data type
 * with its commands: BF.* (t_bloom.c), ONCE.* (t_window.c), DBF.* (t_dbf.c).
 */
#include "config.h"
#include "redis_api.h"
#include "t_bloom.h"
#include "t_dbf.h"
#include "t_window.h"

#include "once.h"

#include <stdint.h>
#include <string.h>

#define MODULE_NAME "once"
#define MODULE_VERSION 1

/* The library expects NULL when memory runs out (ONCE_ERR_NOMEM): the server's
 * TryAlloc gives that, where its Alloc, Calloc and Realloc would abort the server.  So
 * calloc and realloc are made of TryAlloc too (7.0 has no TryCalloc or TryRealloc). */
static void *server_malloc(size_t size)
{
    return RM_TryAlloc != NULL ? RM_TryAlloc(size) : RM_Alloc(size);
}

static void *server_calloc(size_t count, size_t size)
{
    if (RM_TryAlloc == NULL)
        return RM_Calloc(count, size);
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    void *block = RM_TryAlloc(count * size);
    if (block != NULL)
        memset(block, 0, count * size);
    return block;
}

static void *server_realloc(void *block, size_t size)
{
    if (RM_TryAlloc == NULL || block == NULL)
        return block == NULL ? server_malloc(size) : RM_Realloc(block, size);
    void *moved = RM_TryAlloc(size);
    if (moved == NULL)
        return NULL; /* the block stays as it was, as realloc leaves it */
    size_t old = RM_MallocSize(block);
    memcpy(moved, block, old < size ? old : size);
    RM_Free(block);
    return moved;
}

static void server_free(void *block)
{
    RM_Free(block);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx,
                                                              RedisModuleString **argv,
                                                              int argc)
{
    const char *missing = NULL;
    int resolved = redis_api_resolve(ctx, &missing);
    /* Nothing else may be called before the module has its name. */
    if (RM_SetModuleAttribs == NULL)
        return RM_ERR;
    if (RM_IsModuleNameBusy != NULL && RM_IsModuleNameBusy(MODULE_NAME))
        return RM_ERR;
    RM_SetModuleAttribs(ctx, MODULE_NAME, MODULE_VERSION, RM_APIVER_1);
    if (resolved != RM_OK) {
        if (RM_Log != NULL)
            RM_Log(ctx, "warning", "this server lacks %s (Redis 7.0 or later is needed)",
                   missing);
        return RM_ERR;
    }
    RM_SetModuleOptions(ctx, RM_OPTIONS_HANDLE_IO_ERRORS);
    once_allocator server = {server_malloc, server_calloc, server_realloc, server_free};
    if (once_set_allocator(&server) != ONCE_OK) {
        RM_Log(ctx, "warning", "the library's allocator is already in use");
        return RM_ERR;
    }
    if (config_register(ctx, argv, argc) != RM_OK || bloom_register(ctx) != RM_OK ||
        window_register(ctx) != RM_OK || dbf_register(ctx) != RM_OK)
        return RM_ERR;
    RM_Log(ctx, "notice", "once %s loaded (SIMD path %s)", once_version(), once_simd_path());
    return RM_OK;
}
