/*
 * window/apbf.c - count windows: the Age-Partitioned Bloom Filter (APBF) and its blocked
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
 * Layout for a window of N (once_age_small_window_layout)
 *   From the planned (k, l): g = ceil(N / l), then l = ceil(N / g), so l*g - N < g
 *   (the paper's w = l g, rounded to the fewest keys a generation).  Windows of
 *   l (l - 1) keys or more keep the planned l.  Smaller ones have fewer age slices, and
 *   k drops in proportion, floor(k l' / l) (at least 1), so the slack relative to the
 *   window, about k / l, stays what the level promises; the segments are then sparser
 *   (a fraction `load` of the design load, at least MIN_LOAD) until F at those fills is
 *   back at the target; k grows back only when even MIN_LOAD cannot reach p.  (Filters
 *   of saved format 1, whose linear probe had a false-positive floor, were planned with
 *   slices widened to keep it under p / 4: their files keep those slices, and their
 *   stats add the floor, once_age_slice_floor_rate.)  The saved form records g and the
 *   segment size, and the stats derive the load from them (segment_load).
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
 *   in array order, duplicates and shifts included (window/apbf_batch.c).
 *
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
#include "window/apbf_batch.h"
#include "core/limits.h"
#include "math/age.h"
#include "math/cardinality.h"

#include <math.h>
#include <string.h>

/* The tables at the end of this file, which the code above refers to. */
extern const once_filter_ops once_apbf_ops, once_apbbf_ops;

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

/* The segment's units: bits of a slice, blocks of a blocked segment. */
static double segment_units(const age_filter *a)
{
    return (double)(a->block_bits ? a->blocks : a->segment_bits);
}

static double segment_load(const age_filter *a)
{
    return once_age_geometry_load(a->k, a->generation, a->block_bits, a->block_hashes,
                                  segment_units(a));
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
    once_age_peak_fills(a->k, a->l, a->block_bits, a->block_hashes, segment_load(a), fill);
    st->design_fpr = once_age_design_rate(a->k, a->l, a->block_bits, a->block_hashes,
                                          a->generation, segment_units(a));
    /* Format 1's linear probe adds its floor to a slice layout's rates (math/age.c). */
    double floor_rate =
        a->block_bits == 0 && a->base.format == ONCE_FORMAT_LINEAR
            ? once_age_slice_floor_rate(a->k, a->l, a->generation, segment_units(a))
            : 0.0;
    st->design_fpr = fmin(1.0, st->design_fpr + floor_rate);
    st->accesses_absent = once_age_accesses_absent(a->k, a->l, fill);
    /* Now: the recurrence over the segments' measured match rates. */
    for (uint32_t i = 0; i < a->segments; i++)
        fill[i] = segment_rate(a, physical_of(a, i));
    st->fpr_estimate = once_age_fpr(a->k, a->l, fill) + floor_rate;
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

static once_status once_age_create(once_filter **out, const once_config *c)
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
        once_status planned =
            once_age_plan_layout(c->error, c->level, block_bits, block_hashes, &k, &l);
        if (planned != ONCE_OK)
            return planned;
    }

    /* Geometry: explicit segment bits (then g follows from them), or a window. */
    uint64_t generation, segment_bits;
    double full = once_age_design_full_load(block_bits, block_hashes);
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
            once_age_small_window_layout(c->window, block_bits, block_hashes, c->error, &k, &l,
                                         &generation, &load);
        else
            generation = (c->window + l - 1) / l; /* explicit (k, l): kept as given */
        /* Slices: m = g k / ln2 (section 5.2).  Blocks: as many as hold k generations
         * at the full load.  A small window's sparser segments: as many more units. */
        double units = ceil((double)generation * k / (full * load));
        if (plan_layout && !blocked) {
            /* F at the load must reach p: widen the slices until it does (the rounding
             * of g and of the load can leave it a hair above). */
            for (int i = 0;
                 i < 1000 && once_age_design_rate(k, l, 0, 0, generation, units) > c->error; i++)
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
        .batch = once_age_batch,                                                                     \
        .can_take = once_never_full, /* a fixed size: it never refuses a key */              \
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
