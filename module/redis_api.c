/*
 * module/redis_api.c - the module API's calls, looked up by name at load.
 *
 * The context the server passes to RedisModule_OnLoad begins with its lookup function,
 * int (*)(const char *name, void *where): given "RedisModule_" + NAME it stores the
 * call's address at `where` and answers RM_OK, or answers RM_ERR and leaves `where`
 * alone (so the pointers start NULL and a missing call stays NULL).
 */
#include "redis_api.h"

#define RM_DEFINE(required, ret, name, params) ret(*RM_##name) params = NULL;
RM_CALLS(RM_DEFINE)
#undef RM_DEFINE

typedef int (*lookup_fn)(const char *name, void *where);

int redis_api_resolve(RedisModuleCtx *ctx, const char **missing)
{
    lookup_fn lookup = *(lookup_fn *)(void *)ctx;
    *missing = NULL;
#define RM_RESOLVE(required, ret, name, params)                                               \
    if (lookup("RedisModule_" #name, (void *)&RM_##name) != RM_OK && (required) &&             \
        *missing == NULL)                                                                      \
        *missing = "RedisModule_" #name;
    RM_CALLS(RM_RESOLVE)
#undef RM_RESOLVE
    return *missing == NULL ? RM_OK : RM_ERR;
}
