/*
 * apbf.c - count windows: the Age-Partitioned Bloom Filter (APBF) and its blocked
 * variant (APBBF), paper 001 sections 5 and 6.
 *
 * Design
 *   The filter is k + l segments in a circular buffer of physical segments
 *   b_0 .. b_{k+l-1}.  Logical segment s_i lives at physical (base + i) mod (k + l).
 *   Insertions go to s_0 .. s_{k-1}; every g insertions (one generation) the segments
 *   age by one: base steps back, and the physical segment that held s_{k+l-1} is
 *   cleared and becomes the new s_0.  A key matches a segment through that physical
 *   segment's own hash (probe j of the shared sequence for physical j), so a key keeps
 *   its positions as its segments age.  A query reports present when k consecutive
 *   logical segments match, searched by the paper's skip-back Algorithm 1: start at
 *   s_l, walk forward while matching, and on a miss jump back k segments keeping the
 *   matches already found.
 *
 *   APBF   a segment is one slice of m bits, one bit per key: the partitioned filter
 *          spread over ages.  g = floor(m ln2 / k) keeps a slice at fill 1/2 after its k
 *          insertion generations (section 5.2).
 *   APBBF  a segment is a blocked filter: B-bit blocks (64 or 512), b bits per key in
 *          one block, the block partitioned into b parts of B/b bits, one bit per part
 *          (section 6).  A key costs k block accesses to insert and a few to query.
 *          g is set so that a full segment's blocks hold, on average, the load at
 *          which each part-bit is set with probability 1/2 (the APBF's fill target);
 *          with Poisson block loads a full segment then matches an absent key with
 *          probability E[(1 - (1 - b/B)^T)^b], which the recurrence F uses in place
 *          of the slice fill.  This reproduces Table 3's APBBF column exactly.
 *
 * Window and slack (section 5.2)
 *   A key inserted into s_0..s_{k-1} reaches s_l..s_{k+l-1} after l shifts and loses
 *   its first slice at shift l + 1: it is reported present for at least the next l*g
 *   insertions, and may be reported for up to k more generations with probability
 *   halving per lost slice.  The window reported is the N asked for (kept as the
 *   filter's capacity), which the layout makes at most l*g; the slack is then
 *   (l + k) g - N, the insertions after which a key inserted first in its generation
 *   has lost its last segment (k*g when l*g = N).  Explicit segment bits fix g, and a
 *   window beyond their l*g is refused.
 *
 * Layout for a window of N (small_window_layout)
 *   From the planned (k, l): g = ceil(N / l), then l = ceil(N / g), so l*g - N < g
 *   (the paper's w = l g, rounded to the fewest keys a generation).  Windows of
 *   l (l - 1) keys or more keep the planned l.  Smaller ones have fewer age slices, and
 *   k drops in proportion, floor(k l' / l) (at least 1), so the slack relative to the
 *   window, about k / l, stays what the level promises; the segments are then sparser
 *   (a fraction `load` of the design load, at least MIN_LOAD) until F at those fills is
 *   back at the target; k grows back only when even MIN_LOAD cannot reach p.  Every
 *   planned slice layout also keeps the double-hashing floor (slice_floor_rate) under
 *   p / 4 and F plus the floor at most p, which only small windows need more bits for.
 *   The saved format is unchanged: g and the segment size are saved, and the stats
 *   derive the load from them (segment_load).
 *
 * Combining (age_combine)
 *   Union only, of filters with the same geometry, seed and head; intersection is
 *   refused.  See age_combine.
 *
 * Batches (once_add_batch, once_query_batch, once_test_and_add_batch)
 *   A key's spot in a segment (its word and bit, or its block and in-block bits)
 *   depends only on the key and the physical segment, never on the head; which
 *   segments an operation visits depends on the head.  The batch loop hashes each key
 *   some keys ahead, computes its spots in the segments its operation visits first
 *   (s_0 .. s_{k-1} to insert; the search chain's heads s_l, s_{l-k}, ..., with the
 *   segment after each for the APBF, whose slices match an absent key half the time)
 *   under the head of that moment, and requests their lines.  When the key's turn
 *   comes the spots are used if the head is still that one, computed afresh otherwise.
 *   A query whose search goes on to a segment not requested is parked until its line
 *   arrives, while the keys behind it go on.  A batch answers exactly as one-key calls
 *   in array order, duplicates and shifts included (see "Batch" below).

 * Choosing (k, l) from a target rate p (the "level" knob)
 *   k = ceil(log2(1/p)) + level for the APBF (ceil(log2(1/p) / b) + level for the APBBF),
 *   then the largest l whose false-positive rate F(k, l) at the *actual* peak fills
 *   (1 - 2^-(i+1)/k for the insertion slices, not the paper's linear ramp) stays at or
 *   below p.  Larger l means less slack and fewer bits per window key but more
 *   accesses for a negative query; level 0 is the fewest slices.  This rule is stricter
 *   than Table 2, whose lowest rows exceed their aimed rate by up to 21%.
 *
 * Invariants
 *   - 0 <= filled <= g; a shift happens at the start of an insertion when filled = g;
 *   - only clear() and the shift clear bits, and a shift clears only the segment that
 *     leaves the window, so a key inserted within the last l*g insertions always has
 *     its k segments intact: no false negatives inside the window;
 *   - queries never change state.
 */
#include "once_internal.h"

#include <math.h>

#define MIN_BLOCK_PART 8 /* bits per in-block part; b = B / part */

typedef struct age_filter {
    once_filter base;
    uint32_t k, l, segments;
    uint32_t block_bits;   /* 0 for APBF slices; 64 or 512 for APBBF */
    uint32_t block_hashes; /* b (APBBF) */
    uint64_t segment_bits; /* m: bits per segment */
    uint64_t segment_words;
    uint64_t generation; /* g */
    uint64_t filled;     /* insertions into the current generation */
    uint64_t shifts;     /* generations completed since creation or clear */
    uint32_t head;       /* physical index of logical segment 0 */
    uint32_t policy;
    uint64_t *array; /* segments * segment_words words */
    /* Derived from the geometry once, so probes do not divide. */
    uint64_t blocks;      /* APBBF: blocks per segment */
    uint32_t block_words; /* APBBF: 64-bit words per block */
    uint32_t part_bits;   /* APBBF: bits per in-block part, B / b */
    uint32_t part_shift;  /* log2(part_bits) */
    once_simd simd;       /* APBBF: the path its batch tests and sets 512-bit blocks with */
} age_filter;

#define AGE(f) ((age_filter *)(f))
#define CAGE(f) ((const age_filter *)(f))

static inline uint64_t *segment_at(const age_filter *a, uint32_t physical)
{
    return a->array + (uint64_t)physical * a->segment_words;
}

static inline uint32_t physical_of(const age_filter *a, uint32_t logical)
{
    uint32_t p = a->head + logical;
    return p >= a->segments ? p - a->segments : p;
}

/* ---------------------------------------------------------- segment probes */

/*
 * Where a key lives in physical segment j: a spot, the words it uses and the bits in
 * them.  Both layouts start from x_j, probe j of the shared sequence (once_probe_at's
 * closed form).  APBF: bit reduce(x_j, m) of the slice.  APBBF: the block
 * reduce(x_j, blocks) (multiply-shift on the high bits) and the b in-block bits from a
 * remix of x_j, log2(B/b) bits per part; part t's bit is t * (B/b) + those bits.  A
 * spot depends on the key and the physical segment only, never on the head: a shift
 * changes which segments a key's operation visits, not where it lives in each.
 */
typedef struct segment_spot {
    uint64_t *words; /* APBF: the word holding the bit; APBBF: the block */
    uint64_t bits;   /* APBF: the bit in that word; APBBF: the in-block bit source */
} segment_spot;

/* The block geometry, as a value: the one-key calls read it from the filter, the batch
 * passes the supported shapes as constants so their bit loops unroll (block_shape_of). */
typedef struct block_shape {
    uint32_t bits;   /* B: 0 for APBF slices, else 64 or 512 */
    uint32_t hashes; /* b */
    uint32_t part_bits, part_shift, words;
} block_shape;

#define BLOCK_SHAPE(B, b) ((block_shape){(B), (b), (B) / (b), (uint32_t)__builtin_ctz((B) / (b)), (B) / 64})

static inline block_shape block_shape_of(const age_filter *a)
{
    block_shape shape = {a->block_bits, a->block_hashes, a->part_bits, a->part_shift,
                         a->block_words};
    return shape;
}

static inline uint64_t segment_hash(const once_hash *h, uint32_t j)
{
    return h->lo + (uint64_t)j * (h->hi | 1) + (uint64_t)j * (j - 1) * (j - 2) / 6;
}

static inline uint64_t block_bit_source(uint64_t x)
{
    uint64_t y = (x ^ (x >> 31)) * UINT64_C(0x9FB21C651E98DF25);
    return y ^ (y >> 29);
}

static inline __attribute__((always_inline)) segment_spot
spot_of(const age_filter *a, block_shape shape, const once_hash *h, uint32_t j)
{
    uint64_t x = segment_hash(h, j);
    segment_spot spot;
    if (shape.bits == 0) {
        uint64_t pos = once_reduce(x, a->segment_bits);
        spot.words = segment_at(a, j) + (pos >> 6);
        spot.bits = pos & 63;
    } else {
        spot.words = segment_at(a, j) + once_reduce(x, a->blocks) * shape.words;
        spot.bits = block_bit_source(x);
    }
    return spot;
}

static inline uint32_t block_bit(block_shape shape, uint64_t y, uint32_t t)
{
    return t * shape.part_bits + (uint32_t)((y >> (t * shape.part_shift)) & (shape.part_bits - 1));
}

/* A 64-bit block's b bits as one mask. */
static inline __attribute__((always_inline)) uint64_t word_mask(block_shape shape, uint64_t y)
{
    uint64_t mask = 0;
    for (uint32_t t = 0; t < shape.hashes; t++)
        mask |= UINT64_C(1) << block_bit(shape, y, t);
    return mask;
}

static inline __attribute__((always_inline)) bool spot_matches(block_shape shape,
                                                               segment_spot spot)
{
    if (shape.bits == 0)
        return (*spot.words >> spot.bits) & 1;
    if (shape.bits == 64) {
        uint64_t mask = word_mask(shape, spot.bits);
        return (*spot.words & mask) == mask;
    }
    /* All b bits, without a branch per bit: at the fill where each part-bit is set
     * with probability 1/2, stopping at the first clear bit would mispredict about
     * once a block, which costs more than reading the other bits of a line at hand. */
    uint64_t all = 1;
    for (uint32_t t = 0; t < shape.hashes; t++) {
        uint32_t bit = block_bit(shape, spot.bits, t);
        all &= spot.words[bit >> 6] >> (bit & 63);
    }
    return all & 1;
}

static inline __attribute__((always_inline)) void spot_set(block_shape shape, segment_spot spot)
{
    if (shape.bits == 0) {
        *spot.words |= UINT64_C(1) << spot.bits;
        return;
    }
    if (shape.bits == 64) {
        *spot.words |= word_mask(shape, spot.bits);
        return;
    }
    for (uint32_t t = 0; t < shape.hashes; t++)
        once_bit_set(spot.words, block_bit(shape, spot.bits, t));
}

typedef struct age_probe {
    const age_filter *a;
    block_shape shape;
    const once_hash *h;
} age_probe;

/* ---------------------------------------------------------------- ops */

static inline __attribute__((always_inline)) bool age_segment_matches(const void *ctx,
                                                                      uint32_t logical)
{
    const age_probe *p = ctx;
    return spot_matches(p->shape, spot_of(p->a, p->shape, p->h, physical_of(p->a, logical)));
}

/* The skip-back search alone: the lines are expected to be on their way already. */
static inline __attribute__((always_inline)) bool age_find(const age_probe *p, uint32_t *reads)
{
    return once_skip_back_search(p->a->k, p->a->l, age_segment_matches, p, reads);
}

static inline __attribute__((always_inline)) void age_prefetch_segment(const void *ctx,
                                                                       uint32_t logical,
                                                                       bool write)
{
    const age_probe *p = ctx;
    const uint64_t *line = spot_of(p->a, p->shape, p->h, physical_of(p->a, logical)).words;
    if (write)
        once_prefetch_write(line);
    else
        once_prefetch_read(line);
}

/* What a search reads ahead (once_age_prefetch_search): the segment after each chain
 * head too for the APBF, whose slices match an absent key about half the time, not for
 * the APBBF, whose blocks match one rarely (2^-b per full part set at 1/2). */
static inline __attribute__((always_inline)) once_age_reach age_reach(const age_filter *a,
                                                                      block_shape shape)
{
    once_age_reach reach = {a->k, a->l, shape.bits == 0 ? 1 : 0};
    return reach;
}

static bool age_search(const age_filter *a, const once_hash *h, uint32_t *reads)
{
    age_probe probe = {a, block_shape_of(a), h};
    once_age_prefetch(age_reach(a, probe.shape), ONCE_OP_QUERY, age_prefetch_segment, &probe);
    return age_find(&probe, reads);
}

static bool age_query(const once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)now_ms;
    uint32_t reads;
    return age_search(CAGE(f), h, &reads);
}

static bool age_query_reads(const once_filter *f, const once_hash *h, uint64_t now_ms,
                            uint32_t *reads)
{
    (void)now_ms;
    return age_search(CAGE(f), h, reads);
}

/* The head after one shift: the segments age by one place. */
static inline uint32_t shifted_head(const age_filter *a)
{
    return a->head == 0 ? a->segments - 1 : a->head - 1;
}

static __attribute__((noinline)) void age_shift(age_filter *a)
{
    a->head = shifted_head(a);
    memset(segment_at(a, a->head), 0, (size_t)(a->segment_words * 8));
    a->filled = 0;
    a->shifts++;
}

/* The head an insertion made now writes under: after the shift that is due, if any. */
static inline uint32_t insertion_head(const age_filter *a)
{
    return a->filled == a->generation ? shifted_head(a) : a->head;
}

/* Set the key in s_0 .. s_{k-1}, after the shift that is due, if any.  `spots`: the
 * key's spots in those segments computed ahead under insertion_head, or NULL. */
static inline __attribute__((always_inline)) void age_insert(age_filter *a, block_shape shape,
                                                             const once_hash *h,
                                                             const segment_spot *spots)
{
    if (a->filled == a->generation)
        age_shift(a);
    for (uint32_t i = 0; i < a->k; i++)
        spot_set(shape, spots != NULL ? spots[i] : spot_of(a, shape, h, physical_of(a, i)));
    a->filled++;
}

static once_status age_add(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)now_ms;
    age_insert(AGE(f), block_shape_of(AGE(f)), h, NULL);
    return ONCE_OK;
}

/* The insertion's lines are requested with the search's (the chain above s_{k-1}): a
 * new key (the common case of a dedup stream) then waits for one round of misses, not
 * two.  The insertion's spots are computed once, for the requests, under the head the
 * insertion will have, and the insertion uses them. */
static once_status age_test_and_add(once_filter *f, const once_hash *h, uint64_t now_ms,
                                    bool *seen)
{
    (void)now_ms;
    age_filter *a = AGE(f);
    age_probe probe = {a, block_shape_of(a), h};
    segment_spot spots[ONCE_MAX_AGE_SLICES];
    uint32_t head = insertion_head(a);
    for (uint32_t i = 0; i < a->k; i++) {
        uint32_t physical = head + i < a->segments ? head + i : head + i - a->segments;
        spots[i] = spot_of(a, probe.shape, h, physical);
        once_prefetch_write(spots[i].words);
    }
    once_age_prefetch_search(age_reach(a, probe.shape), true, age_prefetch_segment, &probe);
    uint32_t reads;
    *seen = age_find(&probe, &reads);
    if (!*seen || a->policy == ONCE_POLICY_REFRESH)
        age_insert(a, probe.shape, h, spots);
    return ONCE_OK;
}

/* ---------------------------------------------------------------- batch */

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
 * are tabled, so a spot costs a multiply-add, a reduction and, for blocks, a remix.
 * A 512-bit block is tested and set with one mask of the key's b bits built in SIMD
 * registers where the CPU has AVX-512 or AVX2 (lane w of the mask is word w of the
 * block), bit by bit otherwise: all paths touch the same bits.  Each layout and block
 * shape gets its own loops, with the shape a constant.
 */
#define KEPT_SPOTS 16

typedef struct kept_plan {
    uint32_t count;                                 /* logical segments kept */
    uint32_t logical[KEPT_SPOTS];
    int8_t where[2 * ONCE_MAX_AGE_SLICES];         /* logical -> kept index, or -1 */
    uint32_t head;                                  /* the head of the tables below */
    uint64_t physical[KEPT_SPOTS];
    uint64_t cubic[KEPT_SPOTS]; /* j (j - 1) (j - 2) / 6 of physical j (segment_hash) */
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
        plan->cubic[p] = j * (j - 1) * (j - 2) / 6;
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
        for (int j = (int)a->l, heads = 0; j >= 0 && heads < ONCE_AGE_SEARCH_LINES;
             j -= (int)a->k, heads++)
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
    const uint64_t step = slot->h.hi | 1;
    const uint64_t range = shape.bits == 0 ? a->segment_bits : a->blocks;
    for (uint32_t p = 0; p < plan->count; p++) {
        uint64_t x = slot->h.lo + plan->physical[p] * step + plan->cubic[p];
        uint64_t at = once_reduce(x, range);
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
 * latency, see once_batch_pipeline), with the first keys prepared. */
static inline __attribute__((always_inline)) size_t
kept_start(const age_filter *a, const kept_plan *plan, block_shape shape, kept_slot *ring,
           const once_batch_items *items, size_t count, once_batch_op op)
{
    size_t distance = once_age_batch_distance(age_reach(a, shape), op);
    if (distance >= ONCE_PIPELINE_RING)
        distance = ONCE_PIPELINE_RING - 1;
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
    kept_slot ring[ONCE_PIPELINE_RING];
    size_t distance = kept_start(a, &plan, shape, ring, &in, count, op);
    for (size_t i = 0; i < count; i++) {
        size_t next = i + distance;
        if (next < count)
            kept_prepare(a, &plan, shape, &ring[next % ONCE_PIPELINE_RING], &in, next, op);
        bool seen = kept_step(a, &plan, shape, test, set, &ring[i % ONCE_PIPELINE_RING], op);
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
    kept_slot ring[ONCE_PIPELINE_RING];
    parking lot;
    lot.first = lot.count = 0;
    size_t distance = kept_start(a, &plan, shape, ring, &in, count, ONCE_OP_QUERY);
    for (size_t i = 0; i < count; i++) {
        size_t next = i + distance;
        if (next < count)
            kept_prepare(a, &plan, shape, &ring[next % ONCE_PIPELINE_RING], &in, next,
                         ONCE_OP_QUERY);
        const kept_slot *slot = &ring[i % ONCE_PIPELINE_RING];
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

static once_status age_batch(once_filter *f, const once_batch_items *items, size_t count,
                             once_batch_op op, uint8_t *out, size_t *done)
{
    kept_batch(AGE(f), items, count, op, out); /* an age-partitioned probe cannot fail */
    *done = count;
    return ONCE_OK;
}

static void age_clear(once_filter *f)
{
    age_filter *a = AGE(f);
    memset(a->array, 0, (size_t)(a->segment_words * a->segments * 8));
    a->filled = 0;
    a->shifts = 0;
    a->head = 0;
}

static void age_destroy(once_filter *f)
{
    once_words_free(AGE(f)->array);
    once_free_memory(f);
}

static bool age_same_geometry(const once_filter *x, const once_filter *y)
{
    const age_filter *a = CAGE(x), *b = CAGE(y);
    return a->k == b->k && a->l == b->l && a->segment_bits == b->segment_bits &&
           a->block_bits == b->block_bits && a->block_hashes == b->block_hashes &&
           a->generation == b->generation && a->head == b->head;
}

/*
 * Union only (intersection is refused, ONCE_ERR_UNSUPPORTED with dst unchanged: a key
 * both windows hold sits at a different age in each, its bits in different physical
 * segments, so no segment-wise AND can keep it).  The two must have the same geometry
 * and head (same_geometry): logical segment i is then the same physical segment in
 * both, and OR-ing them segment by segment leaves every key of either at the age it
 * had there.  The result takes the earlier of
 * the two positions in the current generation, so it shifts no sooner than either
 * would have: a key keeps at least the rest of the window it had in its own filter,
 * counting the insertions into the result.  (Taking the later one would shift the
 * other filter's keys out up to a generation early.)  Its segments hold both
 * windows' keys, so its false-positive rate is above the target.
 */
static once_status age_combine(once_filter *dst, const once_filter *src, once_combine_op op)
{
    if (op != ONCE_COMBINE_UNION)
        return ONCE_ERR_UNSUPPORTED;
    age_filter *a = AGE(dst);
    const age_filter *b = CAGE(src);
    once_words_combine(a->array, b->array, a->segment_words * a->segments, op);
    if (b->filled < a->filled)
        a->filled = b->filled;
    if (b->shifts > a->shifts)
        a->shifts = b->shifts;
    return ONCE_OK;
}

/* The rate at which one segment matches a random absent key, from its bits. */
static double segment_rate(const age_filter *a, uint32_t j)
{
    const uint64_t *seg = segment_at(a, j);
    if (a->block_bits == 0)
        return (double)once_words_popcount(seg, a->segment_words) / (double)a->segment_bits;
    /* A key needs all its b bits, one per part: average over blocks of the product of
     * the part fills. */
    uint64_t blocks = a->segment_bits / a->block_bits;
    uint32_t part = a->block_bits / a->block_hashes;
    double sum = 0.0;
    for (uint64_t b = 0; b < blocks; b++) {
        const uint64_t *block = seg + b * (a->block_bits / 64);
        double product = 1.0;
        for (uint32_t t = 0; t < a->block_hashes && product > 0.0; t++) {
            uint32_t set = 0;
            for (uint32_t bit = t * part; bit < (t + 1) * part; bit += 64 < part ? 64 : part) {
                uint32_t width = part < 64 ? part : 64;
                uint64_t word = block[bit >> 6] >> (bit & 63);
                if (width < 64)
                    word &= (UINT64_C(1) << width) - 1;
                set += (uint32_t)__builtin_popcountll(word);
            }
            product *= (double)set / part;
        }
        sum += product;
    }
    return sum / (double)blocks;
}

/* Expected match rate of a full APBBF segment at a mean block load lambda: the block
 * load is Poisson(lambda), and a block with t keys has each part-bit set with
 * probability 1 - (1 - 1/part)^t, so a key matches with that to the power b. */
static double blocked_segment_rate(uint32_t block_bits, uint32_t hashes, double lambda)
{
    double part = (double)block_bits / hashes;
    double keep = 1.0 - 1.0 / part;
    double term = exp(-lambda); /* P(T = 0) */
    double sum = 0.0;
    uint32_t limit = (uint32_t)(lambda + 12.0 * sqrt(lambda + 1.0) + 30.0);
    for (uint32_t t = 0; t <= limit; t++) {
        if (t > 0)
            term *= lambda / t;
        sum += term * pow(1.0 - pow(keep, t), hashes);
    }
    return sum;
}

/* The mean block load of a full APBBF segment: the load at which each part-bit is
 * set with probability exactly 1/2, 1 - (1 - 1/part)^n = 1/2 (the fill target of the
 * basic APBF, counted on the discrete part; Table 3's "cap." column is this load over
 * part * ln 2, i.e. about 1 - 1/(2 part)). */
static double blocked_full_load(uint32_t block_bits, uint32_t hashes)
{
    double part = (double)block_bits / hashes;
    return -log(2.0) / log1p(-1.0 / part);
}

/* Keys a full segment holds per unit (a slice's bit, a block) at the design load: ln 2
 * per bit for slices (fill 1/2, section 5.2), blocked_full_load for blocks. */
static double design_full_load(uint32_t block_bits, uint32_t hashes)
{
    return block_bits ? blocked_full_load(block_bits, hashes) : log(2.0);
}

/* Peak (just before a shift) match rates of the k + l segments when a full segment
 * carries `load` times the design load (1 for every layout but small windows'). */
static void peak_fills(uint32_t k, uint32_t l, uint32_t block_bits, uint32_t hashes, double load,
                       double *fill)
{
    double full = block_bits ? blocked_full_load(block_bits, hashes) : 0.0;
    for (uint32_t i = 0; i < k + l; i++) {
        double share = i < k ? (double)(i + 1) / k : 1.0; /* of a full segment's load */
        if (block_bits == 0)
            fill[i] = 1.0 - exp2(-share * load); /* g = load m ln2 / k: 1 - 2^-load when full */
        else
            fill[i] = blocked_segment_rate(block_bits, hashes, full * load * share);
    }
}

/* The load a filter's segments carry when full: k g keys over the segment's units, as a
 * share of the design load.  One within SNAP_LOAD below the design load (the rounding
 * up of m, or of the blocks, to ceil(g k / full)) is reported at the design load, an
 * upper bound that keeps the paper's figures (Table 3 to the printed decimals); any
 * other load, sparser (small windows) or denser (explicit segments), at its own. */
#define SNAP_LOAD 0.99

static double geometry_load(uint32_t k, uint64_t generation, uint32_t block_bits,
                            uint32_t hashes, double units)
{
    double full = design_full_load(block_bits, hashes);
    double load = (double)generation * k / (units * full);
    if (load > 64.0)
        load = 64.0; /* a loaded file's g may claim more: every segment is full by then */
    return load > SNAP_LOAD && load <= 1.0 ? 1.0 : load;
}

/* The segment's units: bits of a slice, blocks of a blocked segment. */
static double segment_units(const age_filter *a)
{
    return (double)(a->block_bits ? a->blocks : a->segment_bits);
}

/*
 * The double-hashing floor of a slice layout.  A key's positions in consecutive slices
 * come from one double-hashing sequence (segment_hash), whose top bits - the ones
 * once_reduce keeps - advance by a per-key step: an arithmetic progression modulo m.
 * An absent key whose start u and step v lie close enough to a stored key's follows it
 * into the same bit of all k of its slices, with probability
 *     I(k) / m^2,  I(k) = integral of prod_{j<k} (1 - |U + j V|)+ dU dV <= 4 / k^2
 * (numerically 1 for k = 2, 0.38 for 3, 0.035 for 8, 0.0046 for 17) per stored key,
 * whatever the fills.  A key that follows a stored one through k - 1 slices and
 * meets a set bit by chance in the last adds about as much again at the fills of a
 * small window (measured: 3.3e-4 for k = 17, l = 125, g = 8, m = 251, where the full
 * term gives 0.8e-4 and F 0.2e-4), so over the (l + k) g keys a filter holds we count
 *     8 (l + k) g / (k^2 m^2)
 * on top of F: nothing to speak of for the slices of thousands of bits of ordinary
 * windows, but the rate itself for the slices of a few dozen bits a small window would
 * have (measured 2e-3 where F gives 3e-5, k = 8, l = 64, m = 43).  One slice a key
 * (k = 1) has no such floor; blocked segments remix their in-block bits and have none.
 */
static double slice_floor_rate(uint32_t k, uint32_t l, uint64_t generation, double bits)
{
    if (k < 2)
        return 0.0;
    return 8.0 * (double)(l + k) * (double)generation / ((double)k * k * bits * bits);
}

/* The peak rate of a geometry: F at the segments' fills, plus the slices' floor. */
static double design_rate(uint32_t k, uint32_t l, uint32_t block_bits, uint32_t hashes,
                          uint64_t generation, double units)
{
    double fill[2 * ONCE_MAX_AGE_SLICES];
    peak_fills(k, l, block_bits, hashes, geometry_load(k, generation, block_bits, hashes, units),
               fill);
    double rate = once_age_fpr(k, l, fill);
    if (block_bits == 0)
        rate += slice_floor_rate(k, l, generation, units);
    return rate < 1.0 ? rate : 1.0;
}

static double segment_load(const age_filter *a)
{
    return geometry_load(a->k, a->generation, a->block_bits, a->block_hashes, segment_units(a));
}

/* The window: the count asked for at creation (kept as the filter's capacity, saved in
 * the header), which the layout guarantees (it is at most l g); l g when none was
 * asked for, or the saved one cannot be this geometry's. */
static uint64_t age_window(const age_filter *a)
{
    uint64_t most = (uint64_t)a->l * a->generation;
    uint64_t asked = a->base.capacity;
    return asked >= 1 && asked <= most ? asked : most;
}

static void age_stats(const once_filter *f, once_stats *st)
{
    const age_filter *a = CAGE(f);
    st->bits = a->segment_bits * a->segments;
    st->bits_set = once_words_popcount(a->array, a->segment_words * a->segments);
    st->hashes = a->k;
    /* A key inserted first in its generation keeps its last segment until the shift
     * l + k generations later, (l + k) g insertions after it (section 5.2): past the
     * window N it may be reported for (l + k) g - N more, k g when N = l g. */
    st->window = age_window(a);
    st->slack = (uint64_t)(a->l + a->k) * a->generation - st->window;
    st->slices = a->segments;
    st->age_slices = a->l;
    st->generation = a->generation;
    st->npws = once_apbf_npws(a->k, a->l);
    double fill[2 * ONCE_MAX_AGE_SLICES];
    peak_fills(a->k, a->l, a->block_bits, a->block_hashes, segment_load(a), fill);
    st->design_fpr = design_rate(a->k, a->l, a->block_bits, a->block_hashes, a->generation,
                                 segment_units(a));
    st->accesses_absent = once_age_accesses_absent(a->k, a->l, fill);
    /* Now: the recurrence over the segments' measured match rates. */
    for (uint32_t i = 0; i < a->segments; i++)
        fill[i] = segment_rate(a, physical_of(a, i));
    st->fpr_estimate = once_age_fpr(a->k, a->l, fill);
    if (a->block_bits == 0)
        st->fpr_estimate += slice_floor_rate(a->k, a->l, a->generation, segment_units(a));
    if (st->fpr_estimate > 1.0)
        st->fpr_estimate = 1.0;
}

/*
 * Distinct keys in the window (docs/CARDINALITY.md, cardinality.c): logical segment i
 * holds generations max(0, i-k+1) .. i.  The window is the last N insertions: the
 * current generation's `filled`, then whole older generations, then part of one
 * (once_card_age_span); all that was inserted while the filter has seen fewer.  A key
 * sets one bit of an APBF slice of m bits, or one bit in each of the b parts of one
 * block of an APBBF segment: either way a given bit with probability b/m (b = 1 for
 * slices).
 */
static once_status age_segment_cells(const void *ctx, uint32_t logical, uint64_t *set,
                                     once_occupancy *o)
{
    const age_filter *a = ctx;
    *set = once_words_popcount(segment_at(a, physical_of(a, logical)), a->segment_words);
    double bits_per_key = a->block_bits ? (double)a->block_hashes : 1.0;
    return once_occupancy_make(o, (double)a->segment_bits,
                               1.0 - bits_per_key / (double)a->segment_bits);
}

static once_status age_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                   once_cardinality *out)
{
    (void)now_ms; /* a count window ages by insertions, not by time */
    const age_filter *a = CAGE(f);
    uint64_t window = age_window(a), g = a->generation, filled = a->filled;
    uint32_t older = a->shifts < a->l ? (uint32_t)a->shifts : a->l; /* full, still held */
    uint32_t whole;
    double share = 0;
    if (filled > window) { /* only with a generation longer than the window */
        whole = 0;
        share = (double)window / (double)filled;
    } else if ((window - filled) / g >= older) {
        whole = older + 1; /* the filter holds no more than the window */
    } else {
        whole = (uint32_t)((window - filled) / g) + 1;
        share = (double)((window - filled) % g) / (double)g;
    }
    return once_card_age_span(a->k, whole, share, age_segment_cells, a, confidence, out);
}

static uint64_t age_memory(const once_filter *f)
{
    return sizeof(age_filter) + once_words_memory(CAGE(f)->segment_words * CAGE(f)->segments);
}

/* Saved parameters, in order. */
enum { P_K, P_L, P_SEGMENT_BITS, P_BLOCK_BITS, P_BLOCK_HASHES, P_GENERATION, P_FILLED, P_SHIFTS,
       P_HEAD, P_POLICY, P_COUNT };

static uint64_t age_params_size(const once_filter *f)
{
    (void)f;
    return P_COUNT * 8;
}

static uint64_t age_payload_size(const once_filter *f)
{
    return CAGE(f)->segment_words * CAGE(f)->segments * 8;
}

static void age_save_params(const once_filter *f, once_writer *w)
{
    const age_filter *a = CAGE(f);
    uint64_t v[P_COUNT] = {a->k,          a->l,      a->segment_bits, a->block_bits,
                           a->block_hashes, a->generation, a->filled, a->shifts,
                           a->head,       a->policy};
    for (int i = 0; i < P_COUNT; i++)
        once_writer_u64(w, v[i]);
}

static void age_save_payload(const once_filter *f, once_writer *w)
{
    once_writer_words(w, CAGE(f)->array, CAGE(f)->segment_words * CAGE(f)->segments);
}

static bool valid_blocks(uint32_t block_bits, uint32_t hashes)
{
    return (block_bits == 64 || block_bits == 512) && (hashes == 4 || hashes == 8);
}

/* Build the structure for validated geometry. */
static once_status age_new(once_filter **out, const once_filter_ops *ops, uint32_t k, uint32_t l,
                           uint64_t segment_bits, uint32_t block_bits, uint32_t block_hashes,
                           uint64_t generation)
{
    if (k == 0 || l == 0 || k > ONCE_MAX_AGE_SLICES || l > ONCE_MAX_AGE_SLICES ||
        segment_bits == 0 || generation == 0)
        return ONCE_ERR_INVALID;
    if (block_bits && (!valid_blocks(block_bits, block_hashes) || segment_bits % block_bits))
        return ONCE_ERR_INVALID;
    if (segment_bits > ONCE_MAX_CELLS / (k + l))
        return ONCE_ERR_TOO_LARGE;
    age_filter *a = once_calloc(1, sizeof *a);
    if (a == NULL)
        return ONCE_ERR_NOMEM;
    once_filter_init(&a->base, ops);
    a->k = k;
    a->l = l;
    a->segments = k + l;
    a->block_bits = block_bits;
    a->block_hashes = block_bits ? block_hashes : 0;
    a->segment_bits = segment_bits;
    a->segment_words = once_words_for_bits(segment_bits);
    a->generation = generation;
    if (block_bits) {
        a->blocks = segment_bits / block_bits;
        a->block_words = block_bits / 64;
        a->part_bits = block_bits / block_hashes;
        a->part_shift = (uint32_t)__builtin_ctz(a->part_bits);
        a->simd = once_simd_current();
    }
    a->array = once_words_alloc(a->segment_words * a->segments);
    if (a->array == NULL) {
        once_free_memory(a);
        return ONCE_ERR_NOMEM;
    }
    *out = &a->base;
    return ONCE_OK;
}

static bool segments_tail_clear(const age_filter *a)
{
    for (uint32_t j = 0; j < a->segments; j++)
        if (!once_words_tail_clear(segment_at(a, j), a->segment_words, a->segment_bits))
            return false;
    return true;
}

static once_status age_load(const once_filter_ops *ops, once_filter **out, const uint8_t *params,
                            size_t params_len, const uint8_t *payload, size_t payload_len)
{
    uint64_t v[P_COUNT];
    if (!once_read_params(params, params_len, v, P_COUNT))
        return ONCE_ERR_CORRUPT;
    bool blocked = ops == &once_apbbf_ops;
    if (v[P_K] == 0 || v[P_K] > ONCE_MAX_AGE_SLICES || v[P_L] == 0 ||
        v[P_L] > ONCE_MAX_AGE_SLICES || v[P_SEGMENT_BITS] == 0 ||
        v[P_SEGMENT_BITS] > ONCE_MAX_CELLS || v[P_GENERATION] == 0 ||
        v[P_GENERATION] > v[P_SEGMENT_BITS] * 8 || v[P_FILLED] > v[P_GENERATION] ||
        v[P_HEAD] >= v[P_K] + v[P_L] || v[P_POLICY] > ONCE_POLICY_REFRESH ||
        (blocked ? !valid_blocks((uint32_t)v[P_BLOCK_BITS], (uint32_t)v[P_BLOCK_HASHES]) ||
                       v[P_BLOCK_BITS] > 512 || v[P_BLOCK_HASHES] > 8
                 : v[P_BLOCK_BITS] != 0 || v[P_BLOCK_HASHES] != 0))
        return ONCE_ERR_CORRUPT;
    /* The payload must match the geometry before anything is allocated: a small
     * hostile file must not make us allocate what it claims. */
    if (payload_len != once_words_for_bits(v[P_SEGMENT_BITS]) * (v[P_K] + v[P_L]) * 8)
        return ONCE_ERR_CORRUPT;
    once_filter *f = NULL;
    once_status st = age_new(&f, ops, (uint32_t)v[P_K], (uint32_t)v[P_L], v[P_SEGMENT_BITS],
                             (uint32_t)v[P_BLOCK_BITS], (uint32_t)v[P_BLOCK_HASHES],
                             v[P_GENERATION]);
    if (st != ONCE_OK)
        return st == ONCE_ERR_INVALID ? ONCE_ERR_CORRUPT : st;
    age_filter *a = AGE(f);
    if (payload_len != a->segment_words * a->segments * 8) {
        age_destroy(f);
        return ONCE_ERR_CORRUPT;
    }
    once_words_from_le(a->array, payload, a->segment_words * a->segments);
    a->filled = v[P_FILLED];
    a->shifts = v[P_SHIFTS];
    a->head = (uint32_t)v[P_HEAD];
    a->policy = (uint32_t)v[P_POLICY];
    if (!segments_tail_clear(a)) {
        age_destroy(f);
        return ONCE_ERR_CORRUPT;
    }
    *out = f;
    return ONCE_OK;
}

static once_status apbf_load(once_filter **out, const uint8_t *params, size_t params_len,
                             const uint8_t *payload, size_t payload_len)
{
    return age_load(&once_apbf_ops, out, params, params_len, payload, payload_len);
}

static once_status apbbf_load(once_filter **out, const uint8_t *params, size_t params_len,
                              const uint8_t *payload, size_t payload_len)
{
    return age_load(&once_apbbf_ops, out, params, params_len, payload, payload_len);
}

/* ------------------------------------------------------------ planning */

/* The largest l <= limit with F(k, l) <= p at the actual peak fills; 0 if none. */
static uint32_t largest_age_slices(uint32_t k, double p, uint32_t block_bits, uint32_t hashes,
                                   uint32_t limit)
{
    double fill[2 * ONCE_MAX_AGE_SLICES];
    uint32_t best = 0;
    for (uint32_t l = 1; l <= limit; l++) {
        peak_fills(k, l, block_bits, hashes, 1.0, fill);
        if (once_age_fpr(k, l, fill) <= p)
            best = l;
        else
            break; /* F grows with l */
    }
    return best;
}

static once_status plan_age(double error, uint32_t level, uint32_t block_bits,
                            uint32_t block_hashes, uint32_t *k_out, uint32_t *l_out)
{
    if (!(error >= 1e-12 && error < 1.0) || level > 32)
        return ONCE_ERR_INVALID;
    double bits_needed = -log2(error);
    uint32_t k = (uint32_t)ceil(bits_needed / (block_bits ? block_hashes : 1)), l = 0;
    if (block_bits && k < 2)
        k = 2; /* one segment a key would make the window jump a whole generation */
    if (k == 0)
        k = 1;
    k += level;
    /* The blocked variant's negative queries cost grows with l; the paper's
     * configurations keep l within a few k. */
    uint32_t limit = block_bits ? 4 * k : ONCE_MAX_AGE_SLICES;
    if (limit > ONCE_MAX_AGE_SLICES)
        limit = ONCE_MAX_AGE_SLICES;
    while (k <= ONCE_MAX_AGE_SLICES &&
           (l = largest_age_slices(k, error, block_bits, block_hashes, limit)) == 0)
        k++;
    if (l == 0)
        return ONCE_ERR_TOO_LARGE;
    *k_out = k;
    *l_out = l;
    return ONCE_OK;
}

once_status once_age_plan(double error, uint32_t level, uint32_t *k, uint32_t *l)
{
    return plan_age(error, level, 0, 0, k, l);
}

/* The sparsest segment a small window may use: 1/256 of the design load (about 370
 * bits a key in a slice), which bounds what a window of a few keys costs in memory. */
#define MIN_LOAD (1.0 / 256)

/* The largest load in [MIN_LOAD, 1] at which (k, l) keeps F at or below p; 0 if none.
 * F grows with the fills, and so with the load: bisection.  Below the design load it
 * stays at most SNAP_LOAD, so that the stats report it at its own load. */
static double largest_load(uint32_t k, uint32_t l, uint32_t block_bits, uint32_t hashes,
                           double p)
{
    double fill[2 * ONCE_MAX_AGE_SLICES];
    peak_fills(k, l, block_bits, hashes, 1.0, fill);
    if (once_age_fpr(k, l, fill) <= p)
        return 1.0;
    peak_fills(k, l, block_bits, hashes, MIN_LOAD, fill);
    if (once_age_fpr(k, l, fill) > p)
        return 0.0;
    double lo = MIN_LOAD, hi = 1.0;
    for (int i = 0; i < 40; i++) {
        double mid = 0.5 * (lo + hi);
        peak_fills(k, l, block_bits, hashes, mid, fill);
        if (once_age_fpr(k, l, fill) <= p)
            lo = mid;
        else
            hi = mid;
    }
    return lo < SNAP_LOAD ? lo : SNAP_LOAD;
}

/*
 * The layout of a window of N keys from the planned (k, l).  The guaranteed window is
 * l g (section 5.2), so g = ceil(N / l) would report up to l - 1 keys more than asked,
 * and for N < l a whole l g = l > N.  Instead g = ceil(N / l) and then l = ceil(N / g):
 * the fewest keys a generation (so the least slack, (l + k) g - N) that covers N with
 * at most l age slices; l g - N < g.  From N >= l (l - 1) on, l stays the planned one.
 * When l has to drop, k drops with it in proportion, k = max(1, floor(k l' / l)), so
 * the slack relative to the window, about k / l (section 5.2), stays what the level
 * promises; the segments are then made sparser (a lower load) until F is back at or
 * below p.  If even MIN_LOAD does not reach p with that k, k grows back one at a time;
 * with the planned k any l' <= l reaches p at the design load, F growing with l.
 */
static void small_window_layout(uint64_t window, uint32_t block_bits, uint32_t hashes,
                                double p, uint32_t *k, uint32_t *l, uint64_t *generation,
                                double *load)
{
    uint64_t g = (window + *l - 1) / *l;
    uint32_t fit = (uint32_t)((window + g - 1) / g);
    *generation = g;
    *load = 1.0;
    if (fit >= *l)
        return;
    uint32_t k_fit = (uint32_t)((uint64_t)*k * fit / *l);
    if (k_fit == 0)
        k_fit = 1;
    for (; k_fit < *k; k_fit++) {
        double found = largest_load(k_fit, fit, block_bits, hashes, p);
        if (found > 0) {
            *load = found;
            break;
        }
    }
    *k = k_fit;
    *l = fit;
}

/* The fewest bits a slice needs to keep the double-hashing floor (slice_floor_rate)
 * at or below p / 4: m >= (4 sqrt 2 / k) sqrt((l + k) g / p).  Windows of a few
 * thousand keys or more meet it by far at the design load; for small ones it, not F,
 * sets the slice. */
static double slice_floor_bits(uint32_t k, uint32_t l, uint64_t generation, double p)
{
    if (k < 2)
        return 1.0;
    return ceil(4.0 * sqrt(2.0) / k * sqrt((double)(l + k) * (double)generation / p));
}

once_status once_age_create(once_filter **out, const once_config *c)
{
    bool blocked = c->type == ONCE_APBBF;
    const once_filter_ops *ops = blocked ? &once_apbbf_ops : &once_apbf_ops;
    /* Default blocks: 512 bits (one cache line); b = 4 bits a key down to p = 1e-3, where
     * a segment's rate near 2^-4 lets k = 2..3 segments reach the target, and 8 below. */
    uint32_t block_bits = blocked ? (c->block_bits ? c->block_bits : 512) : 0;
    uint32_t block_hashes = blocked ? (c->block_hashes ? c->block_hashes
                                                       : (c->error >= 1e-3 ? 4 : 8))
                                    : 0;
    if (blocked && !valid_blocks(block_bits, block_hashes))
        return ONCE_ERR_INVALID;
    if (c->policy != ONCE_POLICY_FIRST && c->policy != ONCE_POLICY_REFRESH)
        return ONCE_ERR_INVALID;

    uint32_t k = c->hashes, l = c->age_slices;
    bool plan_layout = k == 0;
    if ((k == 0) != (l == 0) || k > ONCE_MAX_AGE_SLICES || l > ONCE_MAX_AGE_SLICES)
        return ONCE_ERR_INVALID;
    if (k == 0) {
        once_status planned = plan_age(c->error, c->level, block_bits, block_hashes, &k, &l);
        if (planned != ONCE_OK)
            return planned;
    }

    /* Geometry: explicit segment bits (then g follows from them), or a window. */
    uint64_t generation, segment_bits;
    double full = design_full_load(block_bits, block_hashes);
    if (c->bits != 0) {
        segment_bits = c->bits;
        if (blocked)
            segment_bits = (segment_bits + block_bits - 1) / block_bits * block_bits;
        double per_segment = blocked ? (double)(segment_bits / block_bits) : (double)segment_bits;
        generation = (uint64_t)floor(per_segment * full / k);
        /* The segments fix g, and with it the window l g they can guarantee: a window
         * asked for beyond it is refused, not silently shortened. */
        if (c->window > (uint64_t)l * generation)
            return ONCE_ERR_INVALID;
    } else {
        if (c->window == 0 || c->window > ONCE_MAX_CELLS)
            return ONCE_ERR_INVALID;
        double load = 1.0;
        if (plan_layout)
            small_window_layout(c->window, block_bits, block_hashes, c->error, &k, &l,
                                &generation, &load);
        else
            generation = (c->window + l - 1) / l; /* explicit (k, l): kept as given */
        /* Slices: m = g k / ln2 (section 5.2).  Blocks: as many as hold k generations
         * at the full load.  A small window's sparser segments: as many more units. */
        double units = ceil((double)generation * k / (full * load));
        if (plan_layout && !blocked) {
            /* F at the load plus the floor must reach p: widen the slices until they do
             * (a few percent at most, and only where the floor is not negligible). */
            units = fmax(units, slice_floor_bits(k, l, generation, c->error));
            for (int i = 0; i < 1000 && design_rate(k, l, 0, 0, generation, units) > c->error; i++)
                units += fmax(1.0, floor(units / 128));
        }
        if (units > (double)ONCE_MAX_CELLS)
            return ONCE_ERR_TOO_LARGE;
        segment_bits = (uint64_t)units * (blocked ? block_bits : 1);
    }
    if (generation == 0)
        return ONCE_ERR_INVALID;
    once_status st =
        age_new(out, ops, k, l, segment_bits, block_bits, block_hashes, generation);
    if (st != ONCE_OK)
        return st;
    AGE(*out)->policy = c->policy;
    AGE(*out)->base.capacity = c->window; /* the window reported (age_window) */
    return ONCE_OK;
}

/* The geometry is given: k (with l in age_slices) or the segment bits. */
static bool age_explicit_geometry(const once_config *c)
{
    return c->hashes != 0 || c->bits != 0;
}

#define AGE_OPS(NAME, TYPE, LOAD)                                                        \
    const once_filter_ops NAME = {                                                              \
        .type = TYPE,                                                                           \
        .create = once_age_create,                                                              \
        .explicit_geometry = age_explicit_geometry,                                             \
        .destroy = age_destroy,                                                                 \
        .query = age_query,                                                                     \
        .query_reads = age_query_reads,                                                         \
        .add = age_add,                                                                         \
        .test_and_add = age_test_and_add,                                                       \
        .prefetch = NULL,                                                                       \
        .batch = age_batch,                                                                     \
        .remove = NULL,                                                                         \
        .clear = age_clear,                                                                     \
        .same_geometry = age_same_geometry,                                                     \
        .combine = age_combine,                                                                 \
        .stats = age_stats,                                                                     \
        .cardinality = age_cardinality,                                                         \
        .memory = age_memory,                                                                   \
        .saved_params_size = age_params_size,                                                   \
        .saved_payload_size = age_payload_size,                                                 \
        .save_params = age_save_params,                                                         \
        .save_payload = age_save_payload,                                                       \
        .load = LOAD,                                                                           \
    };

AGE_OPS(once_apbf_ops, ONCE_APBF, apbf_load)
AGE_OPS(once_apbbf_ops, ONCE_APBBF, apbbf_load)
