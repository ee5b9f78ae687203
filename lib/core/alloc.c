/*
 * core/alloc.c - the one door every allocation of the library goes through.
 *
 * A host that keeps its own account of memory (a database server that reports and caps
 * what each of its objects holds) installs its allocator with once_set_allocator before
 * it creates filters; until then, and after once_set_allocator(NULL), the C library's is
 * used.  Every block the library allocates comes from here: a filter's struct and
 * arrays, the buffers it hands back (once_save_to_buffer, once_dbf_export_delta), the
 * scratch space of a call, zstd's contexts (dbf.c passes these functions to zstd).  The
 * rest of lib/ never calls malloc, calloc, realloc or free itself.
 *
 * Blocks alive are counted, so that a change of allocator while blocks of the current
 * one are alive is refused: freeing a block through another allocator than the one that
 * made it is undefined.
 *
 * Cache-line arrays.  An allocator need only align as malloc does (16 bytes on x86-64),
 * while the blocked layout's SIMD loads need 64.  An aligned block is therefore
 * over-allocated by ONCE_ALIGNED_PAD, and the pointer the allocator returned is kept in
 * the word just before the aligned start, where once_aligned_free finds it.  The pad is
 * the same whatever the allocator, so once_bytes (which counts requested sizes) does not
 * depend on which allocator is set.
 */
#include "core/alloc.h"

#include "once_advanced.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>
#include <sys/mman.h>

static const once_allocator c_library = {malloc, calloc, realloc, free};

/* Set before any filter exists and never while another thread is inside the library
 * (once.h), so plain reads are enough. */
static once_allocator current = {malloc, calloc, realloc, free};

/* Blocks allocated here and not yet freed, whatever the allocator. */
static atomic_size_t live_blocks;

static bool same_allocator(const once_allocator *a, const once_allocator *b)
{
    return a->malloc == b->malloc && a->calloc == b->calloc && a->realloc == b->realloc &&
           a->free == b->free;
}

once_status once_set_allocator(const once_allocator *allocator)
{
    const once_allocator *next = allocator != NULL ? allocator : &c_library;
    if (next->malloc == NULL || next->calloc == NULL || next->realloc == NULL ||
        next->free == NULL)
        return ONCE_ERR_INVALID;
    if (same_allocator(next, &current))
        return ONCE_OK;
    if (atomic_load_explicit(&live_blocks, memory_order_relaxed) != 0)
        return ONCE_ERR_INVALID;
    current = *next;
    return ONCE_OK;
}

static void *counted(void *block)
{
    if (block != NULL)
        atomic_fetch_add_explicit(&live_blocks, 1, memory_order_relaxed);
    return block;
}

void *once_malloc(size_t size)
{
    return counted(current.malloc(size ? size : 1));
}

void *once_calloc(size_t count, size_t size)
{
    /* Checked here: a host's calloc may multiply without checking. */
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    if (count == 0 || size == 0)
        count = size = 1;
    return counted(current.calloc(count, size));
}

void *once_realloc(void *block, size_t size)
{
    if (block == NULL)
        return once_malloc(size);
    /* On failure the block stays as it was, and still counted. */
    return current.realloc(block, size ? size : 1);
}

void once_free_memory(void *block)
{
    if (block == NULL)
        return;
    atomic_fetch_sub_explicit(&live_blocks, 1, memory_order_relaxed);
    current.free(block);
}

void once_free_buffer(void *buffer)
{
    once_free_memory(buffer);
}

/* Arrays from this size on get the transparent-huge-page hint (see below). */
#define HUGE_PAGE_THRESHOLD ((size_t)4 << 20)
#define PAGE_BYTES ((uintptr_t)4096)

void *once_aligned_alloc(size_t bytes)
{
    if (bytes > SIZE_MAX - ONCE_ALIGNED_PAD)
        return NULL;
    /* calloc: a fresh mapping is zero already, so large arrays cost no writes. */
    uint8_t *raw = once_calloc(1, bytes + ONCE_ALIGNED_PAD);
    if (raw == NULL)
        return NULL;
    uintptr_t start = ((uintptr_t)raw + sizeof(void *) + ONCE_CACHE_LINE - 1) &
                      ~(uintptr_t)(ONCE_CACHE_LINE - 1);
    uint8_t *aligned = raw + (start - (uintptr_t)raw);
    memcpy(aligned - sizeof(void *), &raw, sizeof raw);
#ifdef MADV_HUGEPAGE
    /* Every probe of a large filter lands on a random page: with 4 KiB pages nearly
     * each one is also a TLB miss, a second dependent memory access.  Ask for
     * transparent huge pages over the array's pages (where the kernel offers them on
     * request).  Only under the C library's allocator: a host's allocator owns its
     * pages' policy (a server that forks for snapshots may keep huge pages off, as
     * copy-on-write then copies 2 MiB per write), and it reuses the pages for its own
     * objects once the array is freed, where the hint would outlive the array. */
    if (same_allocator(&current, &c_library) && bytes >= HUGE_PAGE_THRESHOLD) {
        uintptr_t first = start & ~(PAGE_BYTES - 1);
        (void)madvise((void *)first, start + bytes - first, MADV_HUGEPAGE); /* a hint */
    }
#endif
    return aligned;
}

void once_aligned_free(void *block)
{
    if (block == NULL)
        return;
    void *raw;
    memcpy(&raw, (uint8_t *)block - sizeof(void *), sizeof raw);
    once_free_memory(raw);
}

uint32_t once_table_room(uint32_t room, uint32_t want, uint32_t first, uint32_t limit)
{
    if (want <= room)
        return room;
    uint32_t grown = room ? room : first;
    while (grown < want)
        grown = grown > limit / 2 ? limit : grown * 2;
    return grown;
}

bool once_table_reserve(void **table, uint32_t *room, uint32_t want, size_t entry, uint32_t first,
                        uint32_t limit)
{
    if (want <= *room)
        return true;
    uint32_t grown = once_table_room(*room, want, first, limit);
    uint8_t *bigger = once_realloc(*table, (size_t)grown * entry);
    if (bigger == NULL)
        return false;
    memset(bigger + (size_t)*room * entry, 0, (size_t)(grown - *room) * entry);
    *table = bigger;
    *room = grown;
    return true;
}

void once_table_fit(void **table, uint32_t *room, uint32_t used, size_t entry)
{
    if (*room <= used)
        return;
    void *fitted = once_realloc(*table, (size_t)used * entry);
    if (fitted != NULL) {
        *table = fitted;
        *room = used;
    }
}
