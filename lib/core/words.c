/*
 * core/words.c - arrays of 64-bit words, allocated 64-byte aligned in whole cache
 * lines so that a probe never straddles two lines and the padding is always there to
 * check (once_words_tail_clear).
 */
#include "core/words.h"
#include "core/limits.h"

uint64_t *once_words_alloc(uint64_t words)
{
    if (words == 0 || words > ONCE_MAX_CELLS / 16 + 8)
        return NULL;
    size_t bytes = (size_t)(((words + 7) & ~UINT64_C(7)) * sizeof(uint64_t));
    return (uint64_t *)once_aligned_alloc(bytes);
}

void once_words_free(uint64_t *words)
{
    once_aligned_free(words);
}

uint64_t once_words_popcount(const uint64_t *words, uint64_t n)
{
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i++)
        total += (uint64_t)__builtin_popcountll(words[i]);
    return total;
}

void once_words_sort(uint64_t *words, uint64_t n)
{
    static const uint64_t gaps[] = {1750, 701, 301, 132, 57, 23, 10, 4, 1}; /* Ciura's */
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++)
        for (uint64_t i = gaps[g]; i < n; i++) {
            uint64_t x = words[i], j = i;
            for (; j >= gaps[g] && words[j - gaps[g]] > x; j -= gaps[g])
                words[j] = words[j - gaps[g]];
            words[j] = x;
        }
}

void once_words_combine(uint64_t *dst, const uint64_t *src, uint64_t n, once_combine_op op)
{
    if (op == ONCE_COMBINE_UNION) {
        for (uint64_t i = 0; i < n; i++)
            dst[i] |= src[i];
    } else {
        for (uint64_t i = 0; i < n; i++)
            dst[i] &= src[i];
    }
}

bool once_words_tail_clear(const uint64_t *array, uint64_t words, uint64_t used)
{
    uint64_t first = used / 64;
    if (used % 64 != 0) {
        if (array[first] >> (used % 64))
            return false;
        first++;
    }
    for (uint64_t i = first; i < words; i++)
        if (array[i] != 0)
            return false;
    return true;
}
