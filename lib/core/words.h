/*
 * core/words.h - arrays of 64-bit words: the bits and counters every layout stores
 * (words.c).
 */
#ifndef ONCE_CORE_WORDS_H
#define ONCE_CORE_WORDS_H

#include "core/alloc.h"

#include <stdbool.h>
#include <stdint.h>

/* How two filters' cells combine: OR or AND, word by word. */
typedef enum once_combine_op { ONCE_COMBINE_UNION, ONCE_COMBINE_INTERSECT } once_combine_op;

/* A zeroed, 64-byte aligned array of `words` 64-bit words, rounded up to whole 64-byte
 * lines (NULL on failure); once_words_memory(words) is what it costs the allocator, the
 * figure every structure's once_bytes adds up. */
uint64_t *once_words_alloc(uint64_t words);
void once_words_free(uint64_t *words);

static inline uint64_t once_words_memory(uint64_t words)
{
    return once_aligned_footprint(((words + 7) & ~UINT64_C(7)) * sizeof(uint64_t));
}

uint64_t once_words_popcount(const uint64_t *words, uint64_t n);
/* Sort n words in place, ascending: a shell sort, no allocation (for the short lists of
 * positions the windows log, a few thousand at most). */
void once_words_sort(uint64_t *words, uint64_t n);
void once_words_combine(uint64_t *dst, const uint64_t *src, uint64_t n, once_combine_op op);

static inline bool once_bit_get(const uint64_t *words, uint64_t pos)
{
    return (words[pos >> 6] >> (pos & 63)) & 1;
}
static inline void once_bit_set(uint64_t *words, uint64_t pos)
{
    words[pos >> 6] |= UINT64_C(1) << (pos & 63);
}
static inline void once_bit_clear(uint64_t *words, uint64_t pos)
{
    words[pos >> 6] &= ~(UINT64_C(1) << (pos & 63));
}

/* True when no bit at or past bit `used` of the `words` words is set (loaders check
 * the padding past the last cell). */
bool once_words_tail_clear(const uint64_t *array, uint64_t words, uint64_t used);

/* Bit 4i of the result is set iff 4-bit counter i of w is non-zero. */
static inline uint64_t once_nibbles_nonzero(uint64_t w)
{
    return (w | w >> 1 | w >> 2 | w >> 3) & UINT64_C(0x1111111111111111);
}

/* Words for `bits` bits, rounded up to whole 64-byte lines. */
static inline uint64_t once_words_for_bits(uint64_t bits)
{
    uint64_t words = (bits + 63) / 64;
    return (words + 7) & ~UINT64_C(7);
}

#endif /* ONCE_CORE_WORDS_H */
