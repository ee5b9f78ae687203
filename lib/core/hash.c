/*
 * core/hash.c - the out-of-line half of a one-key call's hash (core/hash.h).
 *
 * Keys longer than ONCE_INLINE_KEY_BYTES are hashed here, in a function of their own,
 * so that the one-key calls that inline the short-key path keep no frame for XXH3's
 * long-key paths.
 */
#include "core/hash.h"

__attribute__((noinline)) once_hash once_hash_long_key(const void *key, size_t len,
                                                      uint64_t seed)
{
    return once_hash_key(key, len, seed);
}
