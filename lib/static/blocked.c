/*
 * static/blocked.c - the blocked Bloom filter: one 512-bit cache line per key.
 *
 * Design
 *   The array is B blocks of 512 bits, each seen as 16 lanes of 32 bits (the split
 *   block idea: one bit per lane).  A key's hash names
 *     - its block:       reduce(h.lo, B);
 *     - its k lanes:     the k consecutive lanes (mod 16) starting at rotation
 *                        r = h.hi & 15, so every lane is used and k may be 1..16;
 *     - one bit per lane: bit (x * salt[j]) >> 27 of lane j, x = h.hi >> 32,
 *                        with sixteen fixed odd multipliers salt[j].
 *   Add ORs the k one-bit lane masks into the block; query checks them.  All of it is
 *   one cache line: one miss per operation whatever k is, and the whole block test is
 *   a handful of SIMD instructions.  The AVX-512 path does it in one 512-bit register,
 *   the AVX2 path in two halves; the scalar path loops over the k lanes.  All three
 *   compute the same masks, so they read and write identical bits and a filter saved
 *   on one machine answers the same on another.  The path is chosen at run time from
 *   the CPU (no -march flag needed) and recorded per filter at construction.
 *
 * False-positive rate: math/blocked_rate.c (exact for this layout, given ideal
 *   hashing, by inclusion-exclusion over the query's lanes).
 *
 * Invariants
 *   - 1 <= k <= 16 and cells is a multiple of 512;
 *   - bits are only ever set: no false negatives.
 */
#include "static/array_filter.h"
#include "core/limits.h"
#include "core/simd.h"
#include "math/blocked_rate.h"

#include <string.h>

#ifdef ONCE_X86
#include <immintrin.h>
#endif

static const uint32_t lane_salt[LANES] __attribute__((aligned(64))) = {
    0x1c0cba89u, 0xb1842d3bu, 0x93156cebu, 0x8be173cdu, 0x7f8a0291u, 0x4bc84ad5u,
    0x6e795a67u, 0x5e1aa3b5u, 0x28071c93u, 0x968dca83u, 0x6c4c9bd7u, 0x92cec69du,
    0xa5cd63fbu, 0x6fc6c7a5u, 0x89d3f71fu, 0x2c93405bu,
};

/* --------------------------------------------------------------- probing */

/*
 * One probe function per SIMD path, always inlined into the one-key operations and
 * into that path's batch loop, so a path has a single definition of what a probe is.
 * A probe takes the key's block, the in-lane bit source x (the high 32 bits of h.hi)
 * and the key's lane mask (the k-lane arc at rotation h.hi & 15), and returns "all k
 * bits were set"; for ADD and TEST_AND_ADD it also sets them.
 */
#define PROBE_INLINE static inline __attribute__((always_inline))

/* Which of lane j's 32 bits the in-lane bit source x names. */
PROBE_INLINE unsigned lane_bit_index(uint32_t x, unsigned j)
{
    return (x * lane_salt[j]) >> 27;
}

/* Lane j's one bit, placed in the 64-bit word that holds lanes 2i and 2i+1 (lane 2i
 * in the low half, which is also its place in memory on the little-endian hosts that
 * run the SIMD paths). */
PROBE_INLINE uint64_t lane_bit64(uint32_t x, unsigned j)
{
    return (uint64_t)(1u << lane_bit_index(x, j)) << ((j & 1) * 32);
}

PROBE_INLINE bool scalar_probe(uint64_t *block, uint32_t x, uint32_t lanes, once_batch_op op)
{
    bool all = true;
    while (lanes) {
        unsigned j = (unsigned)__builtin_ctz(lanes);
        lanes &= lanes - 1;
        uint64_t bit = lane_bit64(x, j);
        all &= (block[j >> 1] & bit) != 0;
        if (op == ONCE_OP_QUERY && !all)
            return false;
        if (op != ONCE_OP_QUERY)
            block[j >> 1] |= bit;
    }
    return all;
}

#ifdef ONCE_X86

ONCE_TARGET_AVX2 PROBE_INLINE __m256i avx2_masks(uint32_t x, const uint32_t *salt, uint32_t lanes8)
{
    __m256i product = _mm256_mullo_epi32(_mm256_set1_epi32((int)x),
                                         _mm256_load_si256((const __m256i *)salt));
    __m256i bits = _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32(product, 27));
    const __m256i select = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    __m256i active =
        _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)lanes8), select), select);
    return _mm256_and_si256(bits, active);
}

ONCE_TARGET_AVX2 PROBE_INLINE bool avx2_probe(uint64_t *block, uint32_t x, uint32_t lanes,
                                         once_batch_op op)
{
    __m256i lo = avx2_masks(x, lane_salt, lanes & 0xFF);
    __m256i up = avx2_masks(x, lane_salt + 8, lanes >> 8);
    __m256i b0 = _mm256_load_si256((const __m256i *)block);
    __m256i b1 = _mm256_load_si256((const __m256i *)(block + 4));
    bool all = _mm256_testc_si256(b0, lo) & _mm256_testc_si256(b1, up);
    if (op != ONCE_OP_QUERY) { /* unconditional: a branch here mispredicts on mixed streams */
        _mm256_store_si256((__m256i *)block, _mm256_or_si256(b0, lo));
        _mm256_store_si256((__m256i *)(block + 4), _mm256_or_si256(b1, up));
    }
    return all;
}

ONCE_TARGET_AVX512 PROBE_INLINE bool avx512_probe(uint64_t *block, uint32_t x, uint32_t lane_bits,
                                             once_batch_op op)
{
    __mmask16 lanes = (__mmask16)lane_bits;
    __m512i product = _mm512_mullo_epi32(_mm512_set1_epi32((int)x),
                                         _mm512_load_si512((const void *)lane_salt));
    __m512i bits = _mm512_sllv_epi32(_mm512_set1_epi32(1), _mm512_srli_epi32(product, 27));
    __m512i b = _mm512_load_si512((const void *)block);
    /* "No key lane lacks its bit": one mask test against zero (kortest), where comparing
     * the lanes found with the lanes asked needs the mask moved out and compared. */
    bool all = _mm512_mask_testn_epi32_mask(lanes, b, bits) == 0;
    if (op != ONCE_OP_QUERY) /* unconditional: a branch here mispredicts on mixed streams */
        _mm512_store_si512((void *)block, _mm512_mask_or_epi32(b, lanes, b, bits));
    return all;
}
#endif

static inline uint64_t *block_of(const once_array_filter *a, uint64_t lo)
{
    return a->array + once_reduce(lo, a->cells / BLOCK_BITS) * (BLOCK_BITS / 64);
}

/*
 * The fused batch loop of one path: hash key i + AHEAD and prefetch its block while
 * probing key i.  Keys are probed strictly in order, so a key repeated inside the batch
 * sees its earlier copy (the store is forwarded to the later load).  The filter's
 * fields are copied to locals first: the byte-sized result stores could alias them and
 * would otherwise force a reload of each one per key.
 */
PROBE_INLINE void prefetch_for(once_batch_op op, const void *line)
{
    if (op == ONCE_OP_QUERY)
        once_prefetch_read(line);
    else
        once_prefetch_write(line);
}

#define BLOCKED_AHEAD 16 /* enough lines in flight to cover DRAM latency at a few ns a key */

#define DEFINE_BLOCKED_BATCH(NAME, TARGET, PROBE)                                               \
    TARGET static inline __attribute__((always_inline, flatten)) void NAME##_loop(             \
        once_filter *f, const once_batch_items *items, size_t count, const once_batch_op op,   \
        uint8_t *out)                                                                           \
    {                                                                                           \
        const once_array_filter *a = CARRAY(f);                                                 \
        const once_batch_items in = *items;                                                     \
        const uint64_t blocks = a->cells / BLOCK_BITS;                                          \
        uint64_t *const array = a->array;                                                       \
        uint32_t lanes_of[LANES];                                                               \
        for (uint32_t r = 0; r < LANES; r++)                                                    \
            lanes_of[r] = lane_mask(a->hashes, r);                                              \
        uint64_t *block[BLOCKED_AHEAD];                                                         \
        uint64_t high[BLOCKED_AHEAD];                                                           \
        size_t ahead = count < BLOCKED_AHEAD ? count : BLOCKED_AHEAD;                           \
        for (size_t i = 0; i < ahead; i++) {                                                    \
            once_hash h = once_item_hash(&in, i);                                             \
            block[i] = array + once_reduce(h.lo, blocks) * (BLOCK_BITS / 64);                   \
            high[i] = h.hi;                                                                     \
            prefetch_for(op, block[i]);                                                         \
        }                                                                                       \
        for (size_t i = 0; i < count; i++) {                                                    \
            size_t slot = i % BLOCKED_AHEAD;                                                    \
            uint64_t hi = high[slot];                                                           \
            bool hit = PROBE(block[slot], (uint32_t)(hi >> 32), lanes_of[hi & 15], op);        \
            if (op != ONCE_OP_ADD)                                                              \
                out[i] = hit;                                                                   \
            size_t next = i + BLOCKED_AHEAD;                                                    \
            if (next < count) {                                                                 \
                once_hash h = once_item_hash(&in, next);                                      \
                block[slot] = array + once_reduce(h.lo, blocks) * (BLOCK_BITS / 64);            \
                high[slot] = h.hi;                                                              \
                prefetch_for(op, block[slot]);                                                  \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    /* One loop per operation, so each is compiled without the others' branches. */          \
    TARGET static void NAME(once_filter *f, const once_batch_items *items, size_t count,       \
                            once_batch_op op, uint8_t *out)                                     \
    {                                                                                           \
        switch (op) {                                                                           \
        case ONCE_OP_QUERY:                                                                     \
            NAME##_loop(f, items, count, ONCE_OP_QUERY, out);                                  \
            break;                                                                              \
        case ONCE_OP_ADD:                                                                       \
            NAME##_loop(f, items, count, ONCE_OP_ADD, out);                                    \
            break;                                                                              \
        case ONCE_OP_TEST_AND_ADD:                                                              \
            NAME##_loop(f, items, count, ONCE_OP_TEST_AND_ADD, out);                           \
            break;                                                                              \
        }                                                                                       \
    }

/*
 * The fused loop over a chain of blocked filters (once_blocked_chain_batch), with the
 * same probe, in three steps a key: its newest filter's block requested CHAIN_AHEAD keys
 * before its answer; the newest asked CHAIN_OLDER_AHEAD keys before, and only if it
 * lacks the key, the older filters' blocks requested; then the answer.  A key the
 * newest holds (a repeat of a recent key, the common case in a stream) so costs one
 * line, not one a filter.  The newest is written last, only for a key no filter holds:
 * the older filters are only read.  The distances (40 and 20 keys, where the blocked
 * loop's one step looks 16 ahead) are the fastest measured at 10^7 keys in five
 * filters, by once_test_and_add_digest_batch against 16/8 and 24/12 (0.95x of the
 * latter) and no slower than 96/48.
 */
typedef struct chain_member {
    uint64_t *array;
    uint64_t blocks;
    uint32_t lanes[LANES]; /* the key's lanes by its rotation: lane_mask(k, rotation) */
} chain_member;

PROBE_INLINE uint64_t *chain_block(const chain_member *m, uint64_t lo)
{
    return m->array + once_reduce(lo, m->blocks) * (BLOCK_BITS / 64);
}

#define CHAIN_RING 64
#define CHAIN_AHEAD 40       /* the newest's block requested this many keys ahead, */
#define CHAIN_OLDER_AHEAD 20 /* then asked, and the older blocks requested if needed */

#define DEFINE_CHAIN_BATCH(NAME, TARGET, PROBE)                                                 \
    /* The middle step: the newest asked early; the older filters' blocks requested only \
     * for a key it lacks. */                                                               \
    TARGET PROBE_INLINE bool NAME##_newest_then_older(const chain_member *member,              \
                                                      uint32_t count, const once_hash *h)      \
    {                                                                                           \
        const chain_member *newest = &member[count - 1];                                        \
        if (PROBE(chain_block(newest, h->lo), (uint32_t)(h->hi >> 32), newest->lanes[h->hi & 15], \
                  ONCE_OP_QUERY))                                                               \
            return true;                                                                        \
        for (uint32_t j = 0; j + 1 < count; j++)                                                \
            once_prefetch_read(chain_block(&member[j], h->lo));                                 \
        return false;                                                                           \
    }                                                                                           \
    TARGET static inline __attribute__((always_inline, flatten)) size_t NAME##_loop(           \
        const chain_member *member, uint32_t count, const once_batch_items *items, size_t n,   \
        const once_batch_op op, uint8_t *out, uint64_t room, uint64_t *taken)                 \
    {                                                                                           \
        const once_batch_items in = *items;                                                     \
        const chain_member newest = member[count - 1];                                          \
        once_hash ring[CHAIN_RING];                                                             \
        bool early[CHAIN_RING];                                                                 \
        uint64_t took = 0;                                                                      \
        for (size_t i = 0; i < n && i < CHAIN_AHEAD; i++) {                                     \
            ring[i] = once_item_hash(&in, i);                                                   \
            prefetch_for(op, chain_block(&newest, ring[i].lo));                                 \
        }                                                                                       \
        for (size_t i = 0; i < n && i < CHAIN_OLDER_AHEAD; i++)                                 \
            early[i] = NAME##_newest_then_older(member, count, &ring[i]);                       \
        for (size_t i = 0; i < n; i++) {                                                        \
            size_t slot = i % CHAIN_RING;                                                       \
            const uint64_t lo = ring[slot].lo, hi = ring[slot].hi;                              \
            const uint32_t x = (uint32_t)(hi >> 32), rotation = (uint32_t)(hi & 15);            \
            uint64_t *own = chain_block(&newest, lo);                                           \
            bool hit = early[slot];                                                             \
            /* A key the newest held early still holds (bits are never cleared); one it   \
             * lacked then is looked up in the older filters, then in the newest again     \
             * (it may have come in since, from a key between), which takes it if none     \
             * holds it: a test-and-add of the newest is its query when all its bits are   \
             * set, and writes nothing new. */                                               \
            for (uint32_t j = count - 1; !hit && j-- > 0;)                                      \
                hit = PROBE(chain_block(&member[j], lo), x, member[j].lanes[rotation],          \
                            ONCE_OP_QUERY);                                                     \
            if (!hit && op == ONCE_OP_QUERY) {                                                  \
                hit = PROBE(own, x, newest.lanes[rotation], ONCE_OP_QUERY);                     \
            } else if (!hit) {                                                                  \
                if (took == room && !PROBE(own, x, newest.lanes[rotation], ONCE_OP_QUERY)) {    \
                    *taken = took; /* a new key, and the newest is full */                      \
                    return i;                                                                   \
                }                                                                               \
                hit = PROBE(own, x, newest.lanes[rotation], ONCE_OP_TEST_AND_ADD);              \
                took += !hit;                                                                   \
            }                                                                                   \
            out[i] = hit;                                                                       \
            size_t older = i + CHAIN_OLDER_AHEAD;                                               \
            if (older < n)                                                                      \
                early[older % CHAIN_RING] =                                                     \
                    NAME##_newest_then_older(member, count, &ring[older % CHAIN_RING]);         \
            size_t next = i + CHAIN_AHEAD;                                                      \
            if (next < n) {                                                                     \
                ring[next % CHAIN_RING] = once_item_hash(&in, next);                            \
                prefetch_for(op, chain_block(&newest, ring[next % CHAIN_RING].lo));            \
            }                                                                                   \
        }                                                                                       \
        *taken = took;                                                                          \
        return n;                                                                               \
    }                                                                                           \
    TARGET static size_t NAME(const chain_member *member, uint32_t count,                      \
                              const once_batch_items *items, size_t n, once_batch_op op,       \
                              uint8_t *out, uint64_t room, uint64_t *taken)                     \
    {                                                                                           \
        if (op == ONCE_OP_QUERY)                                                                \
            return NAME##_loop(member, count, items, n, ONCE_OP_QUERY, out, room, taken);      \
        return NAME##_loop(member, count, items, n, ONCE_OP_TEST_AND_ADD, out, room, taken);   \
    }

/* The one-key operations of one path, one function per operation (indexed by
 * once_batch_op), so that each is compiled for its operation: a one-key call runs no
 * test of the operation and a query carries no store. */
#define DEFINE_BLOCKED_ONE(NAME, TARGET, PROBE)                                                 \
    TARGET static inline __attribute__((always_inline)) bool NAME##_op(                        \
        const once_filter *f, const once_hash *h, const once_batch_op op)                      \
    {                                                                                           \
        const once_array_filter *a = CARRAY(f);                                                 \
        return PROBE(block_of(a, h->lo), (uint32_t)(h->hi >> 32),                               \
                     lane_mask(a->hashes, (uint32_t)(h->hi & 15)), op);                         \
    }                                                                                           \
    TARGET static bool NAME##_query(const once_filter *f, const once_hash *h)                  \
    {                                                                                           \
        return NAME##_op(f, h, ONCE_OP_QUERY);                                                  \
    }                                                                                           \
    TARGET static bool NAME##_add(const once_filter *f, const once_hash *h)                    \
    {                                                                                           \
        return NAME##_op(f, h, ONCE_OP_ADD);                                                    \
    }                                                                                           \
    TARGET static bool NAME##_test_and_add(const once_filter *f, const once_hash *h)           \
    {                                                                                           \
        return NAME##_op(f, h, ONCE_OP_TEST_AND_ADD);                                           \
    }                                                                                           \
    /* The key operations (once_filter_ops, query_key): hashing and probe in one         \
     * function, for keys of at most ONCE_INLINE_KEY_BYTES bytes (api/filter.c's promise). */ \
    TARGET static inline __attribute__((always_inline)) bool NAME##_key(                    \
        const once_filter *f, const void *key, size_t len, const once_batch_op op)             \
    {                                                                                           \
        once_hash h = once_hash_short_key(key, len, f->seed);                                   \
        return NAME##_op(f, &h, op);                                                            \
    }                                                                                           \
    TARGET static once_status NAME##_query_key(                       \
        const once_filter *f, const void *key, size_t len, uint64_t now_ms, bool *present)     \
    {                                                                                           \
        (void)now_ms;                                                                           \
        *present = NAME##_key(f, key, len, ONCE_OP_QUERY);                                      \
        return ONCE_OK;                                                                         \
    }                                                                                           \
    TARGET static once_status NAME##_add_key(                         \
        once_filter *f, const void *key, size_t len, uint64_t now_ms)                          \
    {                                                                                           \
        (void)now_ms;                                                                           \
        NAME##_key(f, key, len, ONCE_OP_ADD);                                                   \
        return ONCE_OK;                                                                         \
    }                                                                                           \
    TARGET static once_status NAME##_test_and_add_key(                \
        once_filter *f, const void *key, size_t len, uint64_t now_ms, bool *seen)              \
    {                                                                                           \
        (void)now_ms;                                                                           \
        *seen = NAME##_key(f, key, len, ONCE_OP_TEST_AND_ADD);                                  \
        return ONCE_OK;                                                                         \
    }
#define BLOCKED_ONE(NAME)                                                                       \
    {NAME##_query, NAME##_add, NAME##_test_and_add}, NAME##_query_key, NAME##_add_key,         \
        NAME##_test_and_add_key

/* This layout's code for one SIMD path (core/simd.c chooses the path). */
typedef struct blocked_impl {
    bool (*one[3])(const once_filter *f, const once_hash *h); /* by once_batch_op */
    once_status (*query_key)(const once_filter *f, const void *key, size_t len, uint64_t now_ms,
                             bool *present);
    once_status (*add_key)(once_filter *f, const void *key, size_t len, uint64_t now_ms);
    once_status (*test_and_add_key)(once_filter *f, const void *key, size_t len,
                                    uint64_t now_ms, bool *seen);
    void (*batch)(once_filter *f, const once_batch_items *items, size_t count, once_batch_op op,
                  uint8_t *out);
    size_t (*chain)(const chain_member *member, uint32_t count, const once_batch_items *items,
                    size_t n, once_batch_op op, uint8_t *out, uint64_t room, uint64_t *taken);
} blocked_impl;

DEFINE_BLOCKED_ONE(scalar_one, , scalar_probe)
DEFINE_BLOCKED_BATCH(scalar_batch, , scalar_probe)
DEFINE_CHAIN_BATCH(scalar_chain, , scalar_probe)
static const blocked_impl scalar_impl = {BLOCKED_ONE(scalar_one), scalar_batch, scalar_chain};

#ifdef ONCE_X86
DEFINE_BLOCKED_ONE(avx2_one, ONCE_TARGET_AVX2, avx2_probe)
DEFINE_BLOCKED_BATCH(avx2_batch, ONCE_TARGET_AVX2, avx2_probe)
DEFINE_CHAIN_BATCH(avx2_chain, ONCE_TARGET_AVX2, avx2_probe)
static const blocked_impl avx2_impl = {BLOCKED_ONE(avx2_one), avx2_batch, avx2_chain};

DEFINE_BLOCKED_ONE(avx512_one, ONCE_TARGET_AVX512, avx512_probe)
DEFINE_BLOCKED_BATCH(avx512_batch, ONCE_TARGET_AVX512, avx512_probe)
DEFINE_CHAIN_BATCH(avx512_chain, ONCE_TARGET_AVX512, avx512_probe)
static const blocked_impl avx512_impl = {BLOCKED_ONE(avx512_one), avx512_batch, avx512_chain};
#endif

/* ------------------------------------------------------ run-time dispatch */

/* This layout's code for the SIMD path in use (core/simd.c). */
static const blocked_impl *current_impl(void)
{
    switch (once_simd_current()) {
#ifdef ONCE_X86
    case ONCE_SIMD_AVX512:
        return &avx512_impl;
    case ONCE_SIMD_AVX2:
        return &avx2_impl;
#endif
    default:
        return &scalar_impl;
    }
}

/* ------------------------------------------------------------ operations */

once_status once_blocked_new(once_filter **out, uint64_t bits, uint32_t hashes)
{
    if (bits == 0 || hashes == 0 || hashes > MAX_BLOCKED_HASHES)
        return ONCE_ERR_INVALID;
    if (bits > ONCE_MAX_CELLS)
        return ONCE_ERR_TOO_LARGE;
    uint64_t blocks = (bits + BLOCK_BITS - 1) / BLOCK_BITS;
    once_status st = once_array_new(out, &once_blocked_ops, blocks * BLOCK_BITS, 1, hashes);
    if (st == ONCE_OK)
        ARRAY(*out)->impl = current_impl();
    return st;
}

static inline const blocked_impl *impl_of(const once_filter *f)
{
    return CARRAY(f)->impl;
}

static bool blocked_query(const once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)now_ms;
    return impl_of(f)->one[ONCE_OP_QUERY](f, h);
}

static once_status blocked_query_key(const once_filter *f, const void *key, size_t len,
                                     uint64_t now_ms, bool *present)
{
    return impl_of(f)->query_key(f, key, len, now_ms, present);
}

static once_status blocked_add_key(once_filter *f, const void *key, size_t len, uint64_t now_ms)
{
    return impl_of(f)->add_key(f, key, len, now_ms);
}

static once_status blocked_test_and_add_key(once_filter *f, const void *key, size_t len,
                                            uint64_t now_ms, bool *seen)
{
    return impl_of(f)->test_and_add_key(f, key, len, now_ms, seen);
}

static once_status blocked_test_and_add(once_filter *f, const once_hash *h, uint64_t now_ms,
                                        bool *seen)
{
    (void)now_ms;
    *seen = impl_of(f)->one[ONCE_OP_TEST_AND_ADD](f, h);
    return ONCE_OK;
}

static once_status blocked_add(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)now_ms;
    impl_of(f)->one[ONCE_OP_ADD](f, h);
    return ONCE_OK;
}

/* The k bits of the key's block in the array's bit numbering: lane j holds bits
 * 32j .. 32j + 31 of the block (lane j sits in word j/2, half j%2; see lane_bit64). */
static uint32_t blocked_positions(const once_filter *f, const once_hash *h, uint64_t *out)
{
    const once_array_filter *a = CARRAY(f);
    uint64_t first = (uint64_t)(block_of(a, h->lo) - a->array) * 64;
    uint32_t x = (uint32_t)(h->hi >> 32), lanes = lane_mask(a->hashes, (uint32_t)(h->hi & 15));
    uint32_t n = 0;
    while (lanes) {
        unsigned j = (unsigned)__builtin_ctz(lanes);
        lanes &= lanes - 1;
        out[n++] = first + (uint64_t)j * LANE_BITS + lane_bit_index(x, j);
    }
    return n;
}

static once_status blocked_batch(once_filter *f, const once_batch_items *items, size_t count,
                                 once_batch_op op, uint8_t *out, size_t *done)
{
    impl_of(f)->batch(f, items, count, op, out); /* a blocked probe cannot fail */
    *done = count;
    return ONCE_OK;
}

size_t once_blocked_chain_batch(once_filter *const *chain, uint32_t count,
                                const once_batch_items *items, size_t n, once_batch_op op,
                                uint8_t *out, uint64_t room, uint64_t *taken)
{
    chain_member member[ONCE_SCALABLE_MAX_FILTERS];
    for (uint32_t j = 0; j < count; j++) {
        const once_array_filter *a = CARRAY(chain[j]);
        member[j].array = a->array;
        member[j].blocks = a->cells / BLOCK_BITS;
        for (uint32_t r = 0; r < LANES; r++)
            member[j].lanes[r] = lane_mask(a->hashes, r);
    }
    /* The newest's path: every path reads and writes the same bits. */
    return impl_of(chain[count - 1])->chain(member, count, items, n, op, out, room, taken);
}

static void blocked_stats(const once_filter *f, once_stats *st)
{
    const once_array_filter *a = CARRAY(f);
    uint64_t blocks = a->cells / BLOCK_BITS;
    st->bits = a->cells;
    st->bits_set = 0;
    st->hashes = a->hashes;
    /* The rate for a random absent key given the current bits, exactly: a key picks a
     * block and a rotation uniformly and needs its bit set in each of its k lanes, which
     * happens with probability (lane fill) per lane.  So average, over blocks and the
     * 16 rotations, the product of the k lane fills. */
    double sum = 0.0;
    for (uint64_t b = 0; b < blocks; b++) {
        const uint64_t *block = a->array + b * (BLOCK_BITS / 64);
        double fill[LANES];
        for (unsigned j = 0; j < LANES; j++) {
            uint32_t lane = (uint32_t)(block[j >> 1] >> ((j & 1) * 32));
            unsigned c = (unsigned)__builtin_popcount(lane);
            st->bits_set += c;
            fill[j] = (double)c / LANE_BITS;
        }
        for (unsigned r = 0; r < LANES; r++) {
            double product = 1.0;
            for (unsigned t = 0; t < a->hashes; t++)
                product *= fill[(r + t) & (LANES - 1)];
            sum += product;
        }
    }
    st->fpr_estimate = blocks ? sum / ((double)blocks * LANES) : 1.0;
}

static once_status blocked_load(once_filter **out, const uint8_t *params, size_t params_len,
                                const uint8_t *payload, size_t payload_len)
{
    return once_array_load(out, params, params_len, payload, payload_len, 1, once_blocked_new);
}

const once_filter_ops once_blocked_ops = {
    .type = ONCE_BLOCKED,
    .can_take = once_never_full,
    .blocked_probe = true,
    .new_geometry = once_blocked_new,
    .query = blocked_query,
    .query_key = blocked_query_key,
    .add = blocked_add,
    .add_key = blocked_add_key,
    .test_and_add_key = blocked_test_and_add_key,
    .test_and_add = blocked_test_and_add,
    .prefetch = NULL, /* with `batch` */
    .batch = blocked_batch,
    .remove = NULL,
    .positions = blocked_positions,
    .combine = once_array_combine_bits,
    .stats = blocked_stats,
    .load = blocked_load,
    ONCE_ARRAY_SHARED_OPS,
};
