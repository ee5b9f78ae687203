/*
 * module/module.c - once.so: the library as a Redis module.
 *
 * Loading: the API calls are looked up by name (redis_api.c), the module names itself
 * "once" (so its configs read once.<name>), takes over handling of bad RDB input
 * (RM_OPTIONS_HANDLE_IO_ERRORS: a corrupt payload is refused, not a crash), and routes
 * every allocation of the library through the server's allocator, so that INFO memory
 * and MEMORY USAGE count the filters.  Then the settings (settings.c) and each data type
 * with its commands: BF.* (t_bloom.c), ONCE.* (t_window.c), DBF.* (t_dbf.c), and
 * SLICE.* (t_slice.c), the slices of a filter sliced over a cluster.
 */
#include "settings.h"
#include "memory.h"
#include "redis_api.h"
#include "t_bloom.h"
#include "t_dbf.h"
#include "t_slice.h"
#include "t_window.h"

#include "once_advanced.h"

#include <stdint.h>
#include <string.h>

#define MODULE_NAME "once"
#define MODULE_VERSION 1

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
    if (memory_install(ctx) != RM_OK)
        return RM_ERR;
    if (config_register(ctx, argv, argc) != RM_OK || bloom_register(ctx) != RM_OK ||
        window_register(ctx) != RM_OK || dbf_register(ctx) != RM_OK ||
        slice_register(ctx) != RM_OK)
        return RM_ERR;
    RM_Log(ctx, "notice", "once %s loaded (SIMD path %s)", once_version(), once_simd_path());
    return RM_OK;
}
