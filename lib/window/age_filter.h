/*
 * window/age_filter.h - the state of the age-partitioned count windows (APBF, APBBF) and
 * the probes of a segment, shared by the one-key operations (window/apbf.c) and the
 * batch engine (window/apbf_batch.c): both reach a key's bits through spot_of, so a
 * batch answers exactly as the one-key calls.
 */
#ifndef ONCE_WINDOW_AGE_FILTER_H
#define ONCE_WINDOW_AGE_FILTER_H

#include "window/skip_back.h"
#include "core/simd.h"

#include <string.h>

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
 * them.  Both layouts start from x_j, probe j of the shared sequence
 * (once_probe_value_at), mixed as every probe is (once_probe_mix, core/hash.h).  APBF:
 * bit reduce(mix(x_j), m) of the slice.  APBBF: the block reduce(mix(x_j), blocks)
 * (multiply-shift on the high bits) and the b in-block bits from a remix of x_j,
 * log2(B/b) bits per part; part t's bit is t * (B/b) + those bits.  A
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


static inline uint64_t block_bit_source(uint64_t x)
{
    uint64_t y = (x ^ (x >> 31)) * UINT64_C(0x9FB21C651E98DF25);
    return y ^ (y >> 29);
}

static inline __attribute__((always_inline)) segment_spot
spot_of(const age_filter *a, block_shape shape, const once_hash *h, uint32_t j)
{
    uint64_t x = once_probe_value_at(h, j);
    uint64_t mixed = once_probe_mix(x, once_filter_probe(&a->base));
    segment_spot spot;
    if (shape.bits == 0) {
        uint64_t pos = once_reduce(mixed, a->segment_bits);
        spot.words = segment_at(a, j) + (pos >> 6);
        spot.bits = pos & 63;
    } else {
        spot.words = segment_at(a, j) + once_reduce(mixed, a->blocks) * shape.words;
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

/* The head after one shift: the segments age by one place. */
static inline uint32_t shifted_head(const age_filter *a)
{
    return a->head == 0 ? a->segments - 1 : a->head - 1;
}

/* Age the segments by one: s_{k+l-1} is cleared and becomes s_0.  Out of line: it is
 * rare, and the loops that call it stay small. */
static __attribute__((noinline, unused)) void age_shift(age_filter *a)
{
    a->head = shifted_head(a);
    memset(segment_at(a, a->head), 0, (size_t)(a->segment_words * 8));
    a->filled = 0;
    a->shifts++;
}

#endif /* ONCE_WINDOW_AGE_FILTER_H */
