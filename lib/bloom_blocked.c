/*
 * bloom_blocked.c - the blocked Bloom filter: one 512-bit cache line per key.
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
 * False-positive rate (exact for this layout, given ideal hashing)
 *   Let S be the query key's k lanes, q = 31/32 the chance that a key touching a lane
 *   misses a given bit of it, and a_T = E_r[q^|T ∩ arc_r|] the chance that one key
 *   placed in the block (at a uniform rotation r) sets none of the query's bits in
 *   the lanes T ⊆ S.  A key lands in the query's block with probability 1/B, so all of
 *   T's bits stay clear after n keys with probability (1 - (1 - a_T)/B)^n, and by
 *   inclusion-exclusion
 *       Pfp(B, k, n) = sum over T ⊆ S of (-1)^|T| (1 - (1 - a_T)/B)^n.
 *   This accounts for the uneven number of keys per block (the reason blocked filters
 *   need more bits than standard ones for the same rate).  Sets T with the same
 *   overlap pattern share a_T, so the 2^k terms collapse to far fewer groups.
 *
 * Invariants
 *   - 1 <= k <= 16 and cells is a multiple of 512;
 *   - bits are only ever set: no false negatives.
 */
#include "once_internal.h"

#include <stdatomic.h>

#include <math.h>

#ifdef ONCE_X86
#include <immintrin.h>
#endif

#define BLOCK_BITS 512
#define LANES 16
#define LANE_BITS 32
#define MAX_BLOCKED_HASHES 16

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

/* The k-lane arc at rotation r, as a 16-bit lane mask: a 16-bit rotate, which the
 * compiler emits as one instruction (this is on every one-key call's path). */
PROBE_INLINE uint32_t lane_mask(uint32_t hashes, uint32_t rotation)
{
    uint16_t arc = (uint16_t)((1u << hashes) - 1u); /* hashes <= 16 */
    return (uint16_t)((arc << rotation) | (arc >> ((LANES - rotation) & (LANES - 1))));
}

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
     * function, for keys of at most ONCE_INLINE_KEY_BYTES bytes (filter.c's promise). */ \
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

typedef struct blocked_impl {
    const char *name;
    once_simd simd;
    bool (*one[3])(const once_filter *f, const once_hash *h); /* by once_batch_op */
    once_status (*query_key)(const once_filter *f, const void *key, size_t len, uint64_t now_ms,
                             bool *present);
    once_status (*add_key)(once_filter *f, const void *key, size_t len, uint64_t now_ms);
    once_status (*test_and_add_key)(once_filter *f, const void *key, size_t len,
                                    uint64_t now_ms, bool *seen);
    void (*batch)(once_filter *f, const once_batch_items *items, size_t count, once_batch_op op,
                  uint8_t *out);
} blocked_impl;

DEFINE_BLOCKED_ONE(scalar_one, , scalar_probe)
DEFINE_BLOCKED_BATCH(scalar_batch, , scalar_probe)
static const blocked_impl scalar_impl = {"scalar", ONCE_SIMD_SCALAR, BLOCKED_ONE(scalar_one),
                                          scalar_batch};

#ifdef ONCE_X86
DEFINE_BLOCKED_ONE(avx2_one, ONCE_TARGET_AVX2, avx2_probe)
DEFINE_BLOCKED_BATCH(avx2_batch, ONCE_TARGET_AVX2, avx2_probe)
static const blocked_impl avx2_impl = {"avx2", ONCE_SIMD_AVX2, BLOCKED_ONE(avx2_one), avx2_batch};

DEFINE_BLOCKED_ONE(avx512_one, ONCE_TARGET_AVX512, avx512_probe)
DEFINE_BLOCKED_BATCH(avx512_batch, ONCE_TARGET_AVX512, avx512_probe)
static const blocked_impl avx512_impl = {"avx512", ONCE_SIMD_AVX512, BLOCKED_ONE(avx512_one),
                                          avx512_batch};
#endif

/* ------------------------------------------------------ run-time dispatch */

/* The best path this CPU has.  The compiler's runtime reads the CPU model once, at
 * load time; __builtin_cpu_init is then a check that changes nothing, so any number of
 * threads may call this at once. */
static const blocked_impl *best_impl(void)
{
#ifdef ONCE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return &avx512_impl;
    if (__builtin_cpu_supports("avx2"))
        return &avx2_impl;
#endif
    return &scalar_impl;
}

/*
 * The path in use: NULL until the first use, then the best one or the one forced.
 * Any thread may ask or force at any time (once.h, "Threads").  The first use only
 * installs the best path if nothing is there yet (compare-and-swap), so a path forced
 * meanwhile by another thread is not overwritten; threads racing on the first use all
 * compute the same best path.  The paths are constant tables, so publishing the
 * pointer is all there is to synchronize.
 */
static _Atomic(const blocked_impl *) chosen_impl;

static const blocked_impl *current_impl(void)
{
    const blocked_impl *impl = atomic_load_explicit(&chosen_impl, memory_order_acquire);
    if (impl == NULL) {
        const blocked_impl *best = best_impl();
        if (atomic_compare_exchange_strong_explicit(&chosen_impl, &impl, best,
                                                    memory_order_acq_rel,
                                                    memory_order_acquire))
            impl = best;
    }
    return impl;
}

const char *once_simd_path(void)
{
    return current_impl()->name;
}

once_simd once_simd_current(void)
{
    return current_impl()->simd;
}

once_status once_force_simd_path(const char *name)
{
    const blocked_impl *impl = NULL;
    if (name == NULL) {
        impl = best_impl();
    } else if (strcmp(name, "scalar") == 0) {
        impl = &scalar_impl;
    }
#ifdef ONCE_X86
    else if (strcmp(name, "avx2") == 0) {
        __builtin_cpu_init();
        if (!__builtin_cpu_supports("avx2"))
            return ONCE_ERR_UNSUPPORTED;
        impl = &avx2_impl;
    } else if (strcmp(name, "avx512") == 0) {
        __builtin_cpu_init();
        if (!__builtin_cpu_supports("avx512f"))
            return ONCE_ERR_UNSUPPORTED;
        impl = &avx512_impl;
    }
#endif
    if (impl == NULL)
        return ONCE_ERR_UNSUPPORTED;
    atomic_store_explicit(&chosen_impl, impl, memory_order_release);
    return ONCE_OK;
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

static void blocked_prefetch(const once_filter *f, const once_hash *h)
{
    once_prefetch_write(block_of(CARRAY(f), h->lo));
}

static once_status blocked_batch(once_filter *f, const once_batch_items *items, size_t count,
                                 once_batch_op op, uint8_t *out, size_t *done)
{
    impl_of(f)->batch(f, items, count, op, out); /* a blocked probe cannot fail */
    *done = count;
    return ONCE_OK;
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
    .new_geometry = once_blocked_new,
    .destroy = once_array_destroy,
    .query = blocked_query,
    .query_key = blocked_query_key,
    .add = blocked_add,
    .add_key = blocked_add_key,
    .test_and_add_key = blocked_test_and_add_key,
    .test_and_add = blocked_test_and_add,
    .prefetch = blocked_prefetch,
    .batch = blocked_batch,
    .remove = NULL,
    .positions = blocked_positions,
    .clear = once_array_clear,
    .same_geometry = once_array_same_geometry,
    .combine = once_array_combine_bits,
    .stats = blocked_stats,
    .cardinality = once_array_cardinality,
    .cardinality_pair = once_array_cardinality_pair,
    .memory = once_array_memory,
    .saved_params_size = once_array_params_size,
    .saved_payload_size = once_array_payload_size,
    .save_params = once_array_save_params,
    .save_payload = once_array_save_payload,
    .load = blocked_load,
};

/* ------------------------------------------------------------- formula */

typedef struct fpr_term {
    double miss;  /* a_T */
    double coeff; /* sum of (-1)^|T| over the sets T with this a_T */
} fpr_term;

/* The most groups of equal a_T any k <= 16 has: 215, at k = 11 (k = 1..16 give 2, 3,
 * 5, 8, 13, 21, 34, 55, 88, 162, 215, 208, 134, 57, 16, 17). */
#define MAX_TERM_GROUPS 256

/* The grouped inclusion-exclusion terms for k lanes, in increasing a_T, into `t` (room
 * for MAX_TERM_GROUPS); returns their number, 0 if they do not fit (no k <= 16).  Each
 * set's term joins the group of its a_T, found by binary search, so no table of the
 * 2^k sets (nor a sort that might allocate one) is needed. */
static size_t blocked_terms(uint32_t hashes, fpr_term *t)
{
    size_t sets = (size_t)1 << hashes;
    double q_power[LANES + 1];
    for (int c = 0; c <= LANES; c++)
        q_power[c] = pow(1.0 - 1.0 / LANE_BITS, c);
    uint32_t arcs[LANES];
    for (uint32_t r = 0; r < LANES; r++)
        arcs[r] = lane_mask(hashes, r);
    size_t groups = 0;
    for (size_t s = 0; s < sets; s++) {
        /* Sum through a histogram of overlaps so that sets with the same pattern give
         * bit-identical a_T and share a group. */
        unsigned histogram[LANES + 1] = {0};
        for (uint32_t r = 0; r < LANES; r++)
            histogram[__builtin_popcount((uint32_t)s & arcs[r])]++;
        double miss = 0.0;
        for (int c = 0; c <= LANES; c++)
            miss += histogram[c] * q_power[c];
        miss /= LANES;
        double coeff = (__builtin_popcountll((unsigned long long)s) & 1) ? -1.0 : 1.0;
        size_t lo = 0, hi = groups;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (t[mid].miss < miss)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < groups && t[lo].miss == miss) {
            t[lo].coeff += coeff;
            continue;
        }
        if (groups == MAX_TERM_GROUPS)
            return 0;
        memmove(&t[lo + 1], &t[lo], (groups - lo) * sizeof *t);
        t[lo].miss = miss;
        t[lo].coeff = coeff;
        groups++;
    }
    return groups;
}

/*
 * The terms depend on k alone, cost up to a few milliseconds to build for k = 16, and
 * every plan and check of a blocked geometry needs them (a growing scalable filter
 * plans each new sub-filter, a loader checks each saved one): build them once per k
 * for the process, in static tables (they outlive every filter, so they belong to no
 * allocator).  Lock-free: the first caller for a k builds them in place; a caller that
 * finds them being built builds its own copy in `scratch` rather than wait.
 */
enum { TERMS_EMPTY, TERMS_BUILDING, TERMS_READY };

static fpr_term terms_table[MAX_BLOCKED_HASHES + 1][MAX_TERM_GROUPS];
static size_t terms_groups[MAX_BLOCKED_HASHES + 1];
static atomic_int terms_state[MAX_BLOCKED_HASHES + 1];

/* The terms for k = hashes (cached, or built in `scratch`, room for MAX_TERM_GROUPS),
 * their number in *groups; NULL if they do not fit. */
static const fpr_term *blocked_terms_cached(uint32_t hashes, fpr_term *scratch, size_t *groups)
{
    int state = atomic_load_explicit(&terms_state[hashes], memory_order_acquire);
    if (state == TERMS_EMPTY &&
        atomic_compare_exchange_strong_explicit(&terms_state[hashes], &state, TERMS_BUILDING,
                                                memory_order_acquire, memory_order_acquire)) {
        size_t built = blocked_terms(hashes, terms_table[hashes]);
        terms_groups[hashes] = built;
        atomic_store_explicit(&terms_state[hashes], built ? TERMS_READY : TERMS_EMPTY,
                              memory_order_release);
        *groups = built;
        return built ? terms_table[hashes] : NULL;
    }
    if (state == TERMS_READY) {
        *groups = terms_groups[hashes];
        return terms_table[hashes];
    }
    *groups = blocked_terms(hashes, scratch);
    return *groups ? scratch : NULL;
}

static double blocked_rate(const fpr_term *terms, size_t groups, uint64_t blocks, uint64_t items)
{
    double sum = 0.0;
    for (size_t g = 0; g < groups; g++) {
        if (terms[g].coeff == 0.0)
            continue;
        double clear = exp((double)items * log1p(-(1.0 - terms[g].miss) / (double)blocks));
        sum += terms[g].coeff * clear;
    }
    return sum < 0.0 ? 0.0 : sum;
}

double once_fpr_blocked(uint64_t bits, uint32_t hashes, uint64_t items)
{
    uint64_t blocks = bits / BLOCK_BITS;
    if (hashes == 0 || hashes > MAX_BLOCKED_HASHES || blocks == 0)
        return 1.0;
    fpr_term scratch[MAX_TERM_GROUPS];
    size_t groups = 0;
    const fpr_term *terms = blocked_terms_cached(hashes, scratch, &groups);
    return terms != NULL ? blocked_rate(terms, groups, blocks, items) : 1.0;
}

/* Below this the alternating sum loses its precision in double arithmetic. */
#define BLOCKED_MIN_ERROR 1e-9

once_status once_blocked_plan(uint64_t capacity, double error, uint64_t *bits, uint32_t *hashes)
{
    if (capacity == 0 || !(error >= BLOCKED_MIN_ERROR && error < 1.0))
        return ONCE_ERR_INVALID;
    const uint64_t max_blocks = ONCE_MAX_CELLS / BLOCK_BITS;
    int k_limit = (int)ceil(-log2(error)) + 3;
    if (k_limit > MAX_BLOCKED_HASHES)
        k_limit = MAX_BLOCKED_HASHES;
    uint64_t best = 0;
    uint32_t best_k = 0;
    fpr_term scratch[MAX_TERM_GROUPS];
    for (int k = 1; k <= k_limit; k++) {
        size_t groups = 0;
        const fpr_term *terms = blocked_terms_cached((uint32_t)k, scratch, &groups);
        if (terms == NULL)
            return ONCE_ERR_INVALID; /* cannot happen for k <= 16 (MAX_TERM_GROUPS) */
        uint64_t hi = 1;
        while (hi < max_blocks && blocked_rate(terms, groups, hi, capacity) > error)
            hi = hi * 2 < max_blocks ? hi * 2 : max_blocks;
        if (blocked_rate(terms, groups, hi, capacity) <= error) {
            uint64_t lo = hi / 2; /* rate(lo) > error, or lo == 0 */
            while (hi - lo > 1) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (blocked_rate(terms, groups, mid, capacity) <= error)
                    hi = mid;
                else
                    lo = mid;
            }
            if (best == 0 || hi < best) {
                best = hi;
                best_k = (uint32_t)k;
            }
        }
    }
    if (best == 0)
        return ONCE_ERR_TOO_LARGE;
    *bits = best * BLOCK_BITS;
    *hashes = best_k;
    return ONCE_OK;
}
