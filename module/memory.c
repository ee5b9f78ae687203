/*
 * module/memory.c - the allocator the library uses inside the server.
 *
 * Every block comes from the server's allocator, so INFO memory and MEMORY USAGE count
 * the filters.  The library expects NULL when memory runs out (ONCE_ERR_NOMEM): the
 * server's TryAlloc gives that, where its Alloc, Calloc and Realloc would abort the
 * server, so calloc and realloc are made of TryAlloc too (7.0 has no TryCalloc).
 *
 * Large blocks (a filter's arrays) are checked before they are taken: a block that
 * would bring the server's used memory past its `maxmemory` (when set), or past the
 * machine's physical memory, is refused, and the refusal says which (memory_refusal).
 * An allocation of more than the machine holds may well succeed (the kernel promises
 * pages it does not have) and then kill the server when the pages are touched; and a
 * server past maxmemory only evicts other keys for a filter it should have refused.
 * Once checked, a large zeroed block comes from the server's calloc, which maps fresh
 * zero pages without touching them: a filter's pages are committed as keys reach
 * them, not all at creation.
 */
#include "memory.h"

#include "once_advanced.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Blocks from this size on are checked against the server's and the machine's memory
 * (smaller ones cannot pass either by much, and the check reads the server's INFO). */
#define CHECKED_BLOCK (UINT64_C(1) << 20)

static char refusal[200];

static uint64_t machine_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

/* May the server take `size` more bytes?  False, with the reason kept, if not. */
static bool room_for(uint64_t size)
{
    if (size < CHECKED_BLOCK || RM_GetServerInfo == NULL)
        return true;
    RedisModuleServerInfoData *info = RM_GetServerInfo(NULL, "memory");
    if (info == NULL)
        return true;
    int err = 0;
    uint64_t used = RM_ServerInfoGetFieldUnsigned(info, "used_memory", &err);
    uint64_t limit = err ? 0 : RM_ServerInfoGetFieldUnsigned(info, "maxmemory", &err);
    RM_FreeServerInfo(NULL, info);
    if (err)
        return true;
    uint64_t machine = machine_bytes();
    const char *past = NULL;
    uint64_t bound = 0;
    if (limit != 0 && used + size > limit) {
        past = "the server's maxmemory";
        bound = limit;
    } else if (machine != 0 && used + size > machine) {
        past = "the machine's memory";
        bound = machine;
    }
    if (past == NULL)
        return true;
    snprintf(refusal, sizeof refusal,
             "ERR the filter needs %llu bytes more, past %s (%llu bytes, %llu used by the "
             "server)",
             (unsigned long long)size, past, (unsigned long long)bound,
             (unsigned long long)used);
    return false;
}

void *memory_try_alloc(size_t size)
{
    return RM_TryAlloc != NULL ? RM_TryAlloc(size) : RM_Alloc(size);
}

static void *server_malloc(size_t size)
{
    if (!room_for(size))
        return NULL;
    return memory_try_alloc(size);
}

static void *server_calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    size_t bytes = count * size;
    if (!room_for(bytes))
        return NULL;
    /* Checked, a large block is taken untouched (see above); a small one through
     * TryAlloc, which cannot abort the server. */
    if (RM_TryAlloc == NULL || bytes >= CHECKED_BLOCK)
        return RM_Calloc(count, size);
    void *block = RM_TryAlloc(bytes);
    if (block != NULL)
        memset(block, 0, bytes);
    return block;
}

static void *server_realloc(void *block, size_t size)
{
    if (!room_for(size))
        return NULL;
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

int memory_install(RedisModuleCtx *ctx)
{
    once_allocator server = {server_malloc, server_calloc, server_realloc, server_free};
    if (once_set_allocator(&server) != ONCE_OK) {
        RM_Log(ctx, "warning", "the library's allocator is already in use");
        return RM_ERR;
    }
    return RM_OK;
}

const char *memory_refusal(void)
{
    static char last[sizeof refusal];
    if (refusal[0] == '\0')
        return "ERR out of memory";
    memcpy(last, refusal, sizeof last);
    refusal[0] = '\0';
    return last;
}
