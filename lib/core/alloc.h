/*
 * core/alloc.h - the library's one door to memory (core/alloc.c).
 */
#ifndef ONCE_CORE_ALLOC_H
#define ONCE_CORE_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "once_advanced.h"

/*
 * Every allocation of the library goes through once_malloc, once_calloc, once_realloc and
 * once_free_memory (once_advanced.h, public so that code built on the library allocates
 * as it does; core/alloc.c), so through the host's allocator when once_set_allocator
 * installed one; no other file calls malloc, calloc, realloc or free.
 */

/* A zeroed block of `bytes` aligned to a cache line, freed with once_aligned_free.  It
 * costs the allocator once_aligned_footprint(bytes): the block is over-allocated by
 * ONCE_ALIGNED_PAD, room to align any address and keep the allocator's pointer before
 * the aligned start (core/alloc.c). */
#define ONCE_CACHE_LINE 64
#define ONCE_ALIGNED_PAD (ONCE_CACHE_LINE + sizeof(void *))
void *once_aligned_alloc(size_t bytes);
void once_aligned_free(void *block);

static inline uint64_t once_aligned_footprint(uint64_t bytes)
{
    return bytes + ONCE_ALIGNED_PAD;
}

/*
 * A table of entries that grows by doubling (the batches of a D-BBF, the rows of a
 * DBF): once_table_room is how many entries it has once it holds `want`, its room
 * doubled from `room` (from `first` when empty) and held to `limit` (want <= limit),
 * so that a structure can count the table's bytes against its cap before it grows it;
 * once_table_reserve grows *table (of `entry` bytes each, *room of them) to that room,
 * the new entries zeroed, or answers false and leaves the table as it was.
 */
uint32_t once_table_room(uint32_t room, uint32_t want, uint32_t first, uint32_t limit);
bool once_table_reserve(void **table, uint32_t *room, uint32_t want, size_t entry, uint32_t first,
                        uint32_t limit);
/* A table that follows its entries in use exactly (the tagged window's tables, the
 * timer filter's sub-filters) grows with once_table_reserve(..., want, entry, 1, want)
 * and gives back its room past `used` entries with once_table_fit (a failure keeps
 * them, still counted in *room). */
void once_table_fit(void **table, uint32_t *room, uint32_t used, size_t entry);

#endif /* ONCE_CORE_ALLOC_H */
