/*
 * cluster/memory.h - the client's memory.
 *
 * Every block the client allocates comes from the library's allocator (once_malloc and
 * its kin, once_advanced.h), so that an allocator a host installs with
 * once_set_allocator covers the cluster client as it covers the filters: the client
 * never calls malloc, calloc, realloc, strdup or free itself.  What hiredis allocates
 * (its connections, its replies) is hiredis's, through its own allocator.
 */
#ifndef ONCE_CLUSTER_MEMORY_H
#define ONCE_CLUSTER_MEMORY_H

#include "once_advanced.h"

#include <string.h>

/* strdup through the library's allocator (NULL when out of memory). */
static inline char *cluster_strdup(const char *text)
{
    size_t len = strlen(text) + 1;
    char *copy = once_malloc(len);
    if (copy != NULL)
        memcpy(copy, text, len);
    return copy;
}

#endif /* ONCE_CLUSTER_MEMORY_H */
