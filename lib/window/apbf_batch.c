/*
 * window/apbf_batch.c - the batch engine of the age-partitioned count windows (APBF,
 * APBBF): keys hashed some keys ahead, their first segments' lines requested, queries
 * whose search outruns the requested lines parked and resumed.
 */
#include "window/apbf_batch.h"
#include "core/limits.h"

/*
 * The batch loop of both layouts.  A slot per key in flight keeps the spots of the
 * segments its operation visits first: the insertion segments s_0 .. s_{k-1} and the
 * heads of the search chain s_l, s_{l-k}, ... (with the segment after each head for
 * the APBF; for blocks the segments after a head are visited only when the head
 * matches, rarely).  The spots are computed once, when the key is hashed `distance`
 * keys ahead, under the head of that moment, and used when the key is probed if the
 * head is still that one (a spot depends on the physical segment only); otherwise,
 * and for segments not kept, the probe computes them as the one-key calls do.  So a
 * batch answers exactly as one-key calls in array order, shifts and duplicates
 * included.  Asking the one-key search for every spot again would double the work of
 * the blocked layout, where a spot costs more than the bits it tests.
 *
 * Per batch, the kept logical segments are chosen once; per head, their physical
 * segments' constants (the cubic term of the probe sequence, the segment's address)
 * are tabled, so a spot costs a multiply-add, the probe's mix, a reduction and, for
 * blocks, a remix.
 * A 512-bit block is tested and set with one mask of the key's b bits built in SIMD
 * registers where the CPU has AVX-512 or AVX2 (lane w of the mask is word w of the
 * block), bit by bit otherwise: all paths touch the same bits.  Each layout and block
 * shape gets its own loops, with the shape a constant.
 */
#define KEPT_SPOTS 16
/* Chain heads a query keeps: an absent key's search usually stops at the first or
 * second head, and every spot kept costs its probe's mix whether read or not (a later
 * head is computed when the search reaches it).  Keeping the chain's first 8 heads, as
 * a test-and-add does, measured 2% slower at 10^7 (bench/ab.c). */
#define KEPT_QUERY_HEADS 2

typedef struct kept_plan {
    uint32_t count;                                 /* logical segments kept */
    uint32_t logical[KEPT_SPOTS];
    int8_t where[2 * ONCE_MAX_AGE_SLICES];         /* logical -> kept index, or -1 */
    uint32_t head;                                  /* the head of the tables below */
    uint64_t physical[KEPT_SPOTS];
    uint64_t cubic[KEPT_SPOTS]; /* once_probe_cubic of physical j */
    uint64_t *segment[KEPT_SPOTS];
} kept_plan;

typedef struct kept_slot {
    once_hash h;
    uint32_t head; /* the head the spots were computed under */
    uint64_t *block[KEPT_SPOTS];
    uint64_t bits[KEPT_SPOTS]; /* B = 512: the in-block bit source; B = 64: the mask */
} kept_slot;

static void kept_plan_keep(kept_plan *plan, uint32_t logical)
{
    if (plan->count < KEPT_SPOTS && plan->where[logical] < 0) {
        plan->where[logical] = (int8_t)plan->count;
        plan->logical[plan->count++] = logical;
    }
}

static void kept_plan_at_head(kept_plan *plan, const age_filter *a)
{
    plan->head = a->head;
    for (uint32_t p = 0; p < plan->count; p++) {
        uint64_t j = physical_of(a, plan->logical[p]);
        plan->physical[p] = j;
        plan->cubic[p] = once_probe_cubic(j);
        plan->segment[p] = segment_at(a, (uint32_t)j);
    }
}

/* Insertion segments first (a test-and-add's chain heads inside them are the same
 * spots), then the chain heads the search starts from. */
static void kept_plan_init(kept_plan *plan, const age_filter *a, once_batch_op op)
{
    plan->count = 0;
    memset(plan->where, -1, sizeof plan->where);
    if (op != ONCE_OP_QUERY)
        for (uint32_t i = 0; i < a->k; i++)
            kept_plan_keep(plan, i);
    if (op != ONCE_OP_ADD) {
        uint32_t follow = age_reach(a, block_shape_of(a)).follow;
        int most = op == ONCE_OP_QUERY ? KEPT_QUERY_HEADS : ONCE_AGE_SEARCH_LINES;
        for (int j = (int)a->l, heads = 0; j >= 0 && heads < most; j -= (int)a->k, heads++)
            for (uint32_t i = (uint32_t)j; i <= (uint32_t)j + follow && i < a->segments; i++)
                kept_plan_keep(plan, i);
    }
    kept_plan_at_head(plan, a);
}

typedef bool (*line_test_fn)(const uint64_t *block, block_shape shape, uint64_t y);
typedef void (*line_set_fn)(uint64_t *block, block_shape shape, uint64_t y);

static inline __attribute__((always_inline)) bool scalar_line_test(const uint64_t *block,
                                                                   block_shape shape, uint64_t y)
{
    return spot_matches(shape, (segment_spot){(uint64_t *)block, y});
}

static inline __attribute__((always_inline)) void scalar_line_set(uint64_t *block,
                                                                  block_shape shape, uint64_t y)
{
    spot_set(shape, (segment_spot){block, y});
}

#ifdef ONCE_X86
#include <immintrin.h>

/* Word w of a 512-bit block lies in part t = w * 64 / part (parts of 64 bits or more),
 * at bit offset (w * 64) mod part of it; the part's bit is (y >> t * log2(part)) mod
 * part.  Shifting 1 left by (that bit - offset) gives the word's mask: 0 when the bit
 * is in the part's other word (a negative or >= 64 count shifts everything out). */
#define LANE_SHIFT(shape, w) ((uint64_t)((w) * 64 / (shape).part_bits * (shape).part_shift))
#define LANE_OFFSET(shape, w) ((uint64_t)((w) * 64 % (shape).part_bits))

ONCE_TARGET_AVX512 static inline __attribute__((always_inline)) __m512i
avx512_line_mask(block_shape shape, uint64_t y)
{
    const __m512i shift = _mm512_setr_epi64(
        (long long)LANE_SHIFT(shape, 0), (long long)LANE_SHIFT(shape, 1),
        (long long)LANE_SHIFT(shape, 2), (long long)LANE_SHIFT(shape, 3),
        (long long)LANE_SHIFT(shape, 4), (long long)LANE_SHIFT(shape, 5),
        (long long)LANE_SHIFT(shape, 6), (long long)LANE_SHIFT(shape, 7));
    const __m512i offset = _mm512_setr_epi64(
        (long long)LANE_OFFSET(shape, 0), (long long)LANE_OFFSET(shape, 1),
        (long long)LANE_OFFSET(shape, 2), (long long)LANE_OFFSET(shape, 3),
        (long long)LANE_OFFSET(shape, 4), (long long)LANE_OFFSET(shape, 5),
        (long long)LANE_OFFSET(shape, 6), (long long)LANE_OFFSET(shape, 7));
    __m512i bit = _mm512_and_si512(_mm512_srlv_epi64(_mm512_set1_epi64((long long)y), shift),
                                   _mm512_set1_epi64((long long)shape.part_bits - 1));
    return _mm512_sllv_epi64(_mm512_set1_epi64(1), _mm512_sub_epi64(bit, offset));
}

ONCE_TARGET_AVX512 static inline __attribute__((always_inline)) bool
avx512_line_test(const uint64_t *block, block_shape shape, uint64_t y)
{
    __m512i missing = _mm512_andnot_si512(_mm512_loadu_si512((const void *)block),
                                          avx512_line_mask(shape, y));
    return _mm512_test_epi64_mask(missing, missing) == 0;
}

ONCE_TARGET_AVX512 static inline __attribute__((always_inline)) void
avx512_line_set(uint64_t *block, block_shape shape, uint64_t y)
{
    __m512i line = _mm512_loadu_si512((const void *)block);
    _mm512_storeu_si512((void *)block, _mm512_or_si512(line, avx512_line_mask(shape, y)));
}

ONCE_TARGET_AVX2 static inline __attribute__((always_inline)) __m256i
avx2_half_mask(block_shape shape, uint64_t y, unsigned half)
{
    const unsigned w = 4 * half;
    const __m256i shift = _mm256_setr_epi64x(
        (long long)LANE_SHIFT(shape, w), (long long)LANE_SHIFT(shape, w + 1),
        (long long)LANE_SHIFT(shape, w + 2), (long long)LANE_SHIFT(shape, w + 3));
    const __m256i offset = _mm256_setr_epi64x(
        (long long)LANE_OFFSET(shape, w), (long long)LANE_OFFSET(shape, w + 1),
        (long long)LANE_OFFSET(shape, w + 2), (long long)LANE_OFFSET(shape, w + 3));
    __m256i bit = _mm256_and_si256(_mm256_srlv_epi64(_mm256_set1_epi64x((long long)y), shift),
                                   _mm256_set1_epi64x((long long)shape.part_bits - 1));
    return _mm256_sllv_epi64(_mm256_set1_epi64x(1), _mm256_sub_epi64(bit, offset));
}

ONCE_TARGET_AVX2 static inline __attribute__((always_inline)) bool
avx2_line_test(const uint64_t *block, block_shape shape, uint64_t y)
{
    __m256i lo = _mm256_loadu_si256((const __m256i *)block);
    __m256i hi = _mm256_loadu_si256((const __m256i *)(block + 4));
    return _mm256_testc_si256(lo, avx2_half_mask(shape, y, 0)) &
           _mm256_testc_si256(hi, avx2_half_mask(shape, y, 1));
}

ONCE_TARGET_AVX2 static inline __attribute__((always_inline)) void
avx2_line_set(uint64_t *block, block_shape shape, uint64_t y)
{
    __m256i lo = _mm256_loadu_si256((const __m256i *)block);
    __m256i hi = _mm256_loadu_si256((const __m256i *)(block + 4));
    _mm256_storeu_si256((__m256i *)block, _mm256_or_si256(lo, avx2_half_mask(shape, y, 0)));
    _mm256_storeu_si256((__m256i *)(block + 4),
                        _mm256_or_si256(hi, avx2_half_mask(shape, y, 1)));
}
#endif

/* A kept spot's test and set: the slice's bit, the word mask for B = 64, the path's
 * line mask for B = 512. */
static inline __attribute__((always_inline)) bool kept_test(block_shape shape, line_test_fn test,
                                                            const uint64_t *block, uint64_t bits)
{
    if (shape.bits == 0)
        return (*block >> bits) & 1;
    if (shape.bits == 64)
        return (*block & bits) == bits;
    return test(block, shape, bits);
}

static inline __attribute__((always_inline)) void kept_set(block_shape shape, line_set_fn set,
                                                           uint64_t *block, uint64_t bits)
{
    if (shape.bits == 0)
        *block |= UINT64_C(1) << bits;
    else if (shape.bits == 64)
        *block |= bits;
    else
        set(block, shape, bits);
}

/* A spot computed on demand, in the kept form (for B = 64 the mask, not its source). */
static inline __attribute__((always_inline)) segment_spot
kept_spot_of(const age_filter *a, block_shape shape, const once_hash *h, uint32_t logical)
{
    segment_spot spot = spot_of(a, shape, h, physical_of(a, logical));
    if (shape.bits == 64)
        spot.bits = word_mask(shape, spot.bits);
    return spot;
}

typedef struct kept_probe {
    const age_filter *a;
    const kept_plan *plan;
    const kept_slot *slot;
    block_shape shape;
    line_test_fn test;
    bool current; /* the slot's spots were computed under the present head */
} kept_probe;

static inline __attribute__((always_inline)) bool kept_segment_matches(const void *ctx,
                                                                       uint32_t logical)
{
    const kept_probe *p = ctx;
    int at = p->plan->where[logical];
    if (p->current && at >= 0)
        return kept_test(p->shape, p->test, p->slot->block[at], p->slot->bits[at]);
    segment_spot spot = kept_spot_of(p->a, p->shape, &p->slot->h, logical);
    return kept_test(p->shape, p->test, spot.words, spot.bits);
}

static inline __attribute__((always_inline)) void
kept_prepare(const age_filter *a, const kept_plan *plan, block_shape shape, kept_slot *slot,
             const once_batch_items *items, size_t i, once_batch_op op)
{
    slot->h = once_item_hash(items, i);
    slot->head = plan->head;
    const uint64_t mix = once_filter_probe(&a->base);
    const uint64_t range = shape.bits == 0 ? a->segment_bits : a->blocks;
    for (uint32_t p = 0; p < plan->count; p++) {
        uint64_t x = once_probe_value_from(&slot->h, plan->physical[p], plan->cubic[p]);
        uint64_t at = once_reduce(once_probe_mix(x, mix), range);
        uint64_t *block;
        if (shape.bits == 0) { /* the slice's word and bit */
            block = plan->segment[p] + (at >> 6);
            slot->bits[p] = at & 63;
        } else {
            block = plan->segment[p] + at * shape.words;
            uint64_t y = block_bit_source(x);
            slot->bits[p] = shape.bits == 64 ? word_mask(shape, y) : y;
        }
        slot->block[p] = block;
        if (op != ONCE_OP_QUERY && plan->logical[p] < a->k)
            once_prefetch_write(block);
        else
            once_prefetch_read(block);
    }
}

/* How many keys ahead a key is prepared (enough lines in flight to cover the memory's
 * latency, see once_batch_loop), with the first keys prepared. */
static inline __attribute__((always_inline)) size_t
kept_start(const age_filter *a, const kept_plan *plan, block_shape shape, kept_slot *ring,
           const once_batch_items *items, size_t count, once_batch_op op)
{
    size_t distance = once_age_batch_distance(age_reach(a, shape), op);
    if (distance >= ONCE_BATCH_LOOP_RING)
        distance = ONCE_BATCH_LOOP_RING - 1;
    if (distance == 0)
        distance = 1;
    for (size_t i = 0; i < count && i < distance; i++)
        kept_prepare(a, plan, shape, &ring[i], items, i, op);
    return distance;
}

/* An insertion or a test-and-add (queries run kept_query_loop, below). */
static inline __attribute__((always_inline)) bool
kept_step(age_filter *a, kept_plan *plan, block_shape shape, line_test_fn test,
          line_set_fn set, const kept_slot *slot, once_batch_op op)
{
    kept_probe probe = {a, plan, slot, shape, test, slot->head == a->head};
    uint32_t reads;
    bool seen = op == ONCE_OP_TEST_AND_ADD &&
                once_skip_back_search(a->k, a->l, kept_segment_matches, &probe, &reads);
    if (seen && a->policy != ONCE_POLICY_REFRESH)
        return seen;
    if (a->filled == a->generation) {
        age_shift(a);
        kept_plan_at_head(plan, a); /* for the keys prepared from now on */
    }
    bool current = slot->head == a->head;
    for (uint32_t i = 0; i < a->k; i++) {
        int at = plan->where[i];
        if (current && at >= 0) {
            kept_set(shape, set, slot->block[at], slot->bits[at]);
        } else {
            segment_spot spot = kept_spot_of(a, shape, &slot->h, i);
            kept_set(shape, set, spot.words, spot.bits);
        }
    }
    a->filled++;
    return seen;
}

static inline __attribute__((always_inline)) void
kept_loop(age_filter *a, block_shape shape, line_test_fn test, line_set_fn set,
          const once_batch_items *items, size_t count, const once_batch_op op, uint8_t *out)
{
    kept_plan plan;
    kept_plan_init(&plan, a, op);
    const once_batch_items in = *items; /* a local: the answer stores cannot alias it */
    kept_slot ring[ONCE_BATCH_LOOP_RING];
    size_t distance = kept_start(a, &plan, shape, ring, &in, count, op);
    for (size_t i = 0; i < count; i++) {
        size_t next = i + distance;
        if (next < count)
            kept_prepare(a, &plan, shape, &ring[next % ONCE_BATCH_LOOP_RING], &in, next, op);
        bool seen = kept_step(a, &plan, shape, test, set, &ring[i % ONCE_BATCH_LOOP_RING], op);
        if (op == ONCE_OP_TEST_AND_ADD)
            out[i] = seen;
    }
}

/*
 * Queries change nothing, so a batch of them need not finish in order.  A query whose
 * search goes on to a segment not kept (after a chain head matched: for a full block
 * segment about one key in 15; for the APBF after a head and the slice after it both
 * matched, one in four) would wait for a line nobody requested, and with it the keys
 * behind it.  Instead the search is parked: the line is requested, and the search
 * resumes `distance` keys later, when the line should be there.  A test-and-add cannot
 * be parked so simply (a later key may insert what it would read, or read what it
 * would insert), and keeping the order by checking parked keys' blocks cost more than
 * the waits it saved here: it waits.
 */
typedef struct parked_query {
    size_t index; /* in the batch */
    size_t due;   /* resume once the batch has reached this key */
    once_hash h;
    once_skip_back search;
    segment_spot spot; /* of segment search.next (kept form), requested */
} parked_query;

#define PARKED_QUERIES 32

typedef struct parking {
    parked_query q[PARKED_QUERIES];
    size_t first, count;
} parking;

static inline __attribute__((always_inline)) void
park(const age_filter *a, block_shape shape, parking *lot, size_t index, size_t due,
     const once_hash *h, once_skip_back search)
{
    parked_query *q = &lot->q[(lot->first + lot->count++) % PARKED_QUERIES];
    q->index = index;
    q->due = due;
    q->h = *h;
    q->search = search;
    q->spot = kept_spot_of(a, shape, h, (uint32_t)search.next);
    once_prefetch_read(q->spot.words);
    /* For blocks, also the segment the search reads next if this one misses (13 times
     * in 14 for a full segment), so that the resumed search can go on there without
     * parking again; a slice misses only half the time, not worth a line. */
    if (shape.bits != 0 && search.next >= (int)a->k)
        once_prefetch_read(kept_spot_of(a, shape, h, (uint32_t)search.next - a->k).words);
}

/* Resume the oldest parked search: test the segment it waited for (and for blocks the
 * one after a miss, requested with it); if the search goes on elsewhere, it parks
 * again. */
static inline __attribute__((always_inline)) void
resume_oldest(const age_filter *a, block_shape shape, line_test_fn test, parking *lot,
              size_t due, uint8_t *out)
{
    parked_query q = lot->q[lot->first];
    lot->first = (lot->first + 1) % PARKED_QUERIES;
    lot->count--;
    bool found;
    int waited = q.search.next;
    if (once_skip_back_step(&q.search, a->k, kept_test(shape, test, q.spot.words, q.spot.bits),
                            &found)) {
        out[q.index] = found;
        return;
    }
    if (shape.bits != 0 && q.search.next == waited - (int)a->k) {
        segment_spot spot = kept_spot_of(a, shape, &q.h, (uint32_t)q.search.next);
        if (once_skip_back_step(&q.search, a->k, kept_test(shape, test, spot.words, spot.bits),
                                &found)) {
            out[q.index] = found;
            return;
        }
    }
    park(a, shape, lot, q.index, due, &q.h, q.search);
}

/*
 * While every chain head misses, the skip-back search only steps from head to head, so
 * a key that matches none of them is absent.  For blocks that is nearly every absent
 * key; testing the heads without a branch between them, with the common chain lengths
 * unrolled, spares the search's bookkeeping.
 */
static inline __attribute__((always_inline)) bool
chain_matches(block_shape shape, line_test_fn test, const kept_slot *slot, uint32_t heads)
{
#define HEAD(p) ((unsigned)kept_test(shape, test, slot->block[p], slot->bits[p]))
    switch (heads) {
    case 1:
        return HEAD(0);
    case 2:
        return (HEAD(0) | HEAD(1)) != 0;
    case 3:
        return (HEAD(0) | HEAD(1) | HEAD(2)) != 0;
    default: {
        unsigned any = 0;
        for (uint32_t p = 0; p < heads; p++)
            any |= HEAD(p);
        return any != 0;
    }
    }
#undef HEAD
}

static inline __attribute__((always_inline)) void
kept_query_loop(const age_filter *a, block_shape shape, line_test_fn test,
                const once_batch_items *items, size_t count, uint8_t *out)
{
    kept_plan plan;
    kept_plan_init(&plan, a, ONCE_OP_QUERY);
    /* Blocks keep the chain's heads alone, in search order: all of them? */
    const uint32_t heads = plan.count;
    const bool whole_chain = shape.bits != 0 && heads == a->l / a->k + 1;
    const once_batch_items in = *items; /* a local: the answer stores cannot alias it */
    kept_slot ring[ONCE_BATCH_LOOP_RING];
    parking lot;
    lot.first = lot.count = 0;
    size_t distance = kept_start(a, &plan, shape, ring, &in, count, ONCE_OP_QUERY);
    for (size_t i = 0; i < count; i++) {
        size_t next = i + distance;
        if (next < count)
            kept_prepare(a, &plan, shape, &ring[next % ONCE_BATCH_LOOP_RING], &in, next,
                         ONCE_OP_QUERY);
        const kept_slot *slot = &ring[i % ONCE_BATCH_LOOP_RING];
        if (whole_chain && !chain_matches(shape, test, slot, heads)) {
            out[i] = 0; /* no head matched: the search would only have stepped across them */
            goto resume_due;
        }
        once_skip_back search = once_skip_back_start(a->l);
        bool found = false, over = false;
        int at;
        while (!over && (at = plan.where[search.next]) >= 0)
            over = once_skip_back_step(
                &search, a->k, kept_test(shape, test, slot->block[at], slot->bits[at]), &found);
        if (over) {
            out[i] = found;
        } else {
            while (lot.count == PARKED_QUERIES) /* each resumption moves a search on */
                resume_oldest(a, shape, test, &lot, i + distance, out);
            park(a, shape, &lot, i, i + distance, &slot->h, search);
        }
    resume_due:
        while (lot.count > 0 && lot.q[lot.first].due <= i)
            resume_oldest(a, shape, test, &lot, i + distance, out);
    }
    while (lot.count > 0)
        resume_oldest(a, shape, test, &lot, count, out);
}

/* One loop per (shape, operation): the shape a constant, so the masks unroll. */
static inline __attribute__((always_inline)) void
kept_loops(age_filter *a, block_shape shape, line_test_fn test, line_set_fn set,
           const once_batch_items *items, size_t count, once_batch_op op, uint8_t *out)
{
    switch (op) {
    case ONCE_OP_QUERY:
        kept_query_loop(a, shape, test, items, count, out);
        break;
    case ONCE_OP_ADD:
        kept_loop(a, shape, test, set, items, count, ONCE_OP_ADD, out);
        break;
    case ONCE_OP_TEST_AND_ADD:
        kept_loop(a, shape, test, set, items, count, ONCE_OP_TEST_AND_ADD, out);
        break;
    }
}

#define DEFINE_LINE_BATCH(NAME, TARGET, TEST, SET)                                              \
    TARGET static __attribute__((noinline, flatten)) void NAME(                                 \
        age_filter *a, const once_batch_items *items, size_t count, once_batch_op op,          \
        uint8_t *out)                                                                           \
    {                                                                                           \
        if (a->block_hashes == 4)                                                               \
            kept_loops(a, BLOCK_SHAPE(512, 4), TEST, SET, items, count, op, out);               \
        else                                                                                    \
            kept_loops(a, BLOCK_SHAPE(512, 8), TEST, SET, items, count, op, out);               \
    }

DEFINE_LINE_BATCH(scalar_line_batch, , scalar_line_test, scalar_line_set)
#ifdef ONCE_X86
DEFINE_LINE_BATCH(avx2_line_batch, ONCE_TARGET_AVX2, avx2_line_test, avx2_line_set)
DEFINE_LINE_BATCH(avx512_line_batch, ONCE_TARGET_AVX512, avx512_line_test, avx512_line_set)
#endif

static __attribute__((noinline, flatten)) void
word_batch(age_filter *a, const once_batch_items *items, size_t count, once_batch_op op,
           uint8_t *out)
{
    if (a->block_hashes == 4)
        kept_loops(a, BLOCK_SHAPE(64, 4), scalar_line_test, scalar_line_set, items, count, op,
                   out);
    else
        kept_loops(a, BLOCK_SHAPE(64, 8), scalar_line_test, scalar_line_set, items, count, op,
                   out);
}

static __attribute__((noinline, flatten)) void
slice_batch(age_filter *a, const once_batch_items *items, size_t count, once_batch_op op,
            uint8_t *out)
{
    kept_loops(a, (block_shape){0, 0, 0, 0, 0}, scalar_line_test, scalar_line_set, items, count,
               op, out);
}

static void kept_batch(age_filter *a, const once_batch_items *items, size_t count,
                       once_batch_op op, uint8_t *out)
{
    if (a->block_bits == 0) {
        slice_batch(a, items, count, op, out);
        return;
    }
    if (a->block_bits == 64) {
        word_batch(a, items, count, op, out);
        return;
    }
#ifdef ONCE_X86
    if (a->simd == ONCE_SIMD_AVX512) {
        avx512_line_batch(a, items, count, op, out);
        return;
    }
    if (a->simd == ONCE_SIMD_AVX2) {
        avx2_line_batch(a, items, count, op, out);
        return;
    }
#endif
    scalar_line_batch(a, items, count, op, out);
}

once_status once_age_batch(once_filter *f, const once_batch_items *items, size_t count,
                      once_batch_op op, uint8_t *out, size_t *done)
{
    kept_batch(AGE(f), items, count, op, out); /* an age-partitioned probe cannot fail */
    *done = count;
    return ONCE_OK;
}

