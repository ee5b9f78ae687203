/*
 * core/hash.h - the key hash and the probe sequences derived from it.
 *
 * Each key is hashed once with XXH3-128 under the filter's seed, into the
 * public once_digest (once.h), and the structures see only that digest: every probe
 * entry takes a hash, so the key calls and the digest calls reach one probe path.  (The
 * optional key operations, query_key and the like, hash a short key themselves and then
 * run that same probe, in one function.)  The two 64-bit halves drive every probe: enhanced double hashing
 * (Dillinger & Manolios) gives the k positions of the standard, partitioned and
 * counting layouts, and the blocked layout takes its block from one half and its
 * in-block bits from the other.  A 64-bit value is mapped onto [0, n) by
 * multiply-shift ((x * n) >> 64), which is uniform up to n / 2^64 and needs no
 * division in the hot path.
 */
#ifndef ONCE_CORE_HASH_H
#define ONCE_CORE_HASH_H

#include "once.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* The key's hash as the structures see it: the public digest itself, so that an array
 * of digests a caller passes is an array of hashes with no copy. */
typedef once_digest once_hash;

static inline once_hash once_hash_key(const void *key, size_t len, uint64_t seed)
{
    XXH128_hash_t h = XXH3_128bits_withSeed(key, len, seed);
    once_hash r = {h.low64, h.high64};
    return r;
}

/*
 * A one-key call's hash of its key: the digest once_hash_key gives.  Keys of up to
 * ONCE_INLINE_KEY_BYTES bytes are hashed in line by XXH3-128's short-key path, called
 * directly (it is what XXH3_128bits_withSeed runs for them; test_interface checks the
 * two agree at every length): XXH3's entry point is not forced inline, and its long-key
 * paths, compiled into a function, give it a frame (their aligned stack buffers) and
 * register saves that every key would pay.  Longer keys go through once_hash_long_key
 * (core/hash.c), never inlined.
 */
#define ONCE_INLINE_KEY_BYTES 16

static inline __attribute__((always_inline)) once_hash once_hash_short_key(const void *key,
                                                                           size_t len,
                                                                           uint64_t seed)
{
    XXH128_hash_t h = XXH3_len_0to16_128b((const xxh_u8 *)key, len, XXH3_kSecret, seed);
    once_hash r = {h.low64, h.high64};
    return r;
}

once_hash once_hash_long_key(const void *key, size_t len, uint64_t seed);

static inline __attribute__((always_inline)) once_hash once_one_key_hash(const void *key,
                                                                         size_t len,
                                                                         uint64_t seed)
{
    if (len <= ONCE_INLINE_KEY_BYTES)
        return once_hash_short_key(key, len, seed);
    return once_hash_long_key(key, len, seed);
}

/* Map a uniform 64-bit value onto [0, n). */
static inline uint64_t once_reduce(uint64_t x, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

/*
 * The probe sequence shared by the standard, partitioned and counting layouts:
 * position i is reduce(x_i, range) with x_0 = lo, x_{i+1} = x_i + y_i, y_{i+1} = y_i + i
 * (enhanced double hashing).  `hi` is forced odd so the sequence never stalls.
 */
typedef struct once_probe {
    uint64_t x, y;
    uint32_t i;
} once_probe;

static inline once_probe once_probe_start(const once_hash *h)
{
    once_probe p = {h->lo, h->hi | 1, 0};
    return p;
}

static inline uint64_t once_probe_next(once_probe *p, uint64_t range)
{
    uint64_t pos = once_reduce(p->x, range);
    p->x += p->y;
    p->y += p->i;
    p->i++;
    return pos;
}

/* Position i of the same sequence in closed form, for layouts that need probe i
 * without the ones before it (x_i = lo + i*y + i(i-1)(i-2)/6, y = hi | 1). */
static inline uint64_t once_probe_at(const once_hash *h, uint64_t i, uint64_t range)
{
    uint64_t x = h->lo + i * (h->hi | 1) + i * (i - 1) * (i - 2) / 6;
    return once_reduce(x, range);
}

static inline void once_prefetch_read(const void *addr)
{
    __builtin_prefetch(addr, 0, 3);
}
static inline void once_prefetch_write(const void *addr)
{
    __builtin_prefetch(addr, 1, 3);
}

#endif /* ONCE_CORE_HASH_H */
