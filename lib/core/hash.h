/*
 * core/hash.h - the key hash and the probe sequences derived from it.
 *
 * Each key is hashed once with XXH3-128 under the filter's seed, into the
 * public once_digest (once.h), and the structures see only that digest: every probe
 * entry takes a hash, so the key calls and the digest calls reach one probe path.  (The
 * optional key operations, query_key and the like, hash a short key themselves and then
 * run that same probe, in one function.)  The two 64-bit halves drive every probe:
 * enhanced double hashing (Dillinger & Manolios), each probe mixed, gives the k
 * positions of the standard, partitioned and counting layouts and the windows' slices,
 * and the blocked layout takes its block from one half and its in-block bits from the
 * other.  A 64-bit value is mapped onto [0, n) by
 * multiply-shift ((x * n) >> 64), which is uniform up to n / 2^64 and needs no
 * division in the hot path.
 *
 * Which XXH3: XXH3_128bits_withSeed of xxHash 0.8.0 and later (Debian 12 ships 0.8.1),
 * whose output the xxHash project froze at 0.8.0; earlier releases marked XXH3
 * experimental and gave other values.  Every saved position derives from it, so a
 * libxxhash that hashes otherwise would place keys on other cells than the files
 * users saved: test_golden's digests_are_the_xxh3_of_the_files fails by name on such a
 * build, before its saved files' answers do.  The version is checked where the header
 * is read (below).
 */
#ifndef ONCE_CORE_HASH_H
#define ONCE_CORE_HASH_H

#include "once_advanced.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#if XXH_VERSION_NUMBER < 800
#error "libxxhash 0.8.0 or later is needed: earlier XXH3 gives other digests (core/hash.h)"
#endif

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
 * The probe sequence shared by every layout but the blocked one (standard, partitioned,
 * counting, block-partitioned, the count and time windows' slices, the timer filter,
 * the DBF's rows).  Probe i starts from x_i = lo + i*y + i(i-1)(i-2)/6 (enhanced double
 * hashing, Dillinger & Manolios; y = hi | 1, so the sequence never stalls) and is
 * mixed before its reduction onto [0, range): position i is reduce(mix(x_i), range).
 *
 * Why the mix.  reduce keeps the high bits of x_i * range, and the cubic term moves x_i
 * by far less than a cell, so without a mix the positions are an arithmetic
 * progression with step y*range / 2^64 (mod range).  Keys whose step lies near a
 * fraction with a small denominator put their k probes on a few cells, and an absent
 * key whose start and step lie near a stored key's follows it through every slice of a
 * one-probe-per-slice layout: a false-positive rate with a floor, measured at 30-300x
 * the target of 1e-7 on filters of 100 to 1000 keys.  Reducing modulo the range
 * instead keeps the cubic term, but leaves a pair of keys that meet in two probes
 * meeting in all of them (1 / range^2, ruinous for narrow slices).  The mix breaks the
 * arithmetic in both cases:
 *     mix(x) = lo64(x * M) xor hi64(x * M)
 * the 128-bit product folded (one multiply; M odd, the golden ratio's 64 bits), which
 * is not linear in x over the integers, nor over GF(2).  Measured: rates within their
 * statistical bounds of the formulas from 100 keys to 10^4 at 1e-5 and 1e-7
 * (tests/unit/test_probe.c: every layout's rate, and the distinct cells of a key's probes,
 * which show the floor within a second).
 *
 * Saved format 1 placed keys without the mix.  Folding the product by M = 1 gives x
 * back (its high word is 0), so that probe is this same loop with multiplier 1: a
 * filter loaded from a format-1 file keeps it (once_filter.format, set by the
 * loader) and goes on placing keys where its file has them.
 */
#define ONCE_PROBE_MIX_MULTIPLIER UINT64_C(0x9E3779B97F4A7C15) /* format 2 */
#define ONCE_PROBE_LINEAR_MULTIPLIER UINT64_C(1)               /* format 1: no mix */

/* The product's two halves are taken by two multiplies (the CPU runs them side by side)
 * rather than from one 128-bit product: GCC 12 keeps such a product of a loop in a
 * stack slot, and the store and reload of the low half put about five cycles on every
 * probe's path to its cell (seen in the block-partitioned loops; measured with
 * bench/ab.c, the D-BBF's one-key query went from 1.11x format 1 to 1.09-1.10x). */
static inline uint64_t once_probe_mix(uint64_t x, uint64_t multiplier)
{
    uint64_t hi = (uint64_t)(((unsigned __int128)x * multiplier) >> 64);
    return (x * multiplier) ^ hi;
}

typedef struct once_probe {
    uint64_t x, y, multiplier;
    uint32_t i;
} once_probe;

static inline once_probe once_probe_start(const once_hash *h, uint64_t multiplier)
{
    once_probe p = {h->lo, h->hi | 1, multiplier, 0};
    return p;
}

static inline uint64_t once_probe_next(once_probe *p, uint64_t range)
{
    uint64_t pos = once_reduce(once_probe_mix(p->x, p->multiplier), range);
    p->x += p->y;
    p->y += p->i;
    p->i++;
    return pos;
}

/* x_i of the same sequence in closed form, before its mix, for layouts that need probe
 * i without the ones before it (a slice of a window); once_probe_at is its position.
 * Its cubic term depends on i alone, so a layout whose i is fixed per segment (a TLBF
 * slice, an APBF batch's planned segments) keeps it and passes it to
 * once_probe_value_from, sparing three multiplies a key. */
static inline uint64_t once_probe_cubic(uint64_t i)
{
    return i * (i - 1) * (i - 2) / 6;
}

static inline uint64_t once_probe_value_from(const once_hash *h, uint64_t i, uint64_t cubic)
{
    return h->lo + i * (h->hi | 1) + cubic;
}

static inline uint64_t once_probe_value_at(const once_hash *h, uint64_t i)
{
    return once_probe_value_from(h, i, once_probe_cubic(i));
}

static inline uint64_t once_probe_at(const once_hash *h, uint64_t i, uint64_t range,
                                     uint64_t multiplier)
{
    return once_reduce(once_probe_mix(once_probe_value_at(h, i), multiplier), range);
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
