/*
 * module/memory.h - the allocator the library uses inside the server, and what it says
 * when it refuses a block.
 */
#ifndef ONCE_MODULE_MEMORY_H
#define ONCE_MODULE_MEMORY_H

#include "redis_api.h"

/* Install the server's allocator as the library's (once_set_allocator): RM_OK or
 * RM_ERR. */
int memory_install(RedisModuleCtx *ctx);
/* The error to reply for ONCE_ERR_NOMEM: why the last large block was refused (the
 * server's maxmemory, the machine's memory), or a plain "out of memory".  Reading it
 * clears it. */
const char *memory_refusal(void);
/* A block of the server's for the module's own use (not counted against the library's
 * limits): TryAlloc where the server has it, which refuses rather than aborts.  Freed
 * with RM_Free. */
void *memory_try_alloc(size_t size);

#endif
