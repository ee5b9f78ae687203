/*
 * static/bpbf.c - block-partitioned Bloom filters (BPBF, paper 002 section 3): filters
 * whose length shrinks after the keys are in, without the keys; and the layout the
 * dynamic ones (D-BBF, section 4, grow/dbpbf.c) build on: a list of batches, its
 * reduction, combining, estimates and saved form, which serve both (static/bpbf.h).
 *
 * Why blocks
 *   Folding a standard filter (bit i -> i mod m') keeps its k hash functions, so the
 *   reduced filter is far denser than 1/2 and its rate explodes (section 3.1: with
 *   ratio r = m'/m it is (1 - e^(-kn/(mr)))^k against the optimal Pfp^r).  A BPBF is mu
 *   independent blocks of m_b bits, each with its own k_b hash functions; a key is set
 *   in every block and present when every block holds it.  Dropping blocks drops their
 *   hash functions with them, so each remaining block keeps its density and the rate
 *   of the first m' blocks is Eq. 1 with mu = m':
 *       Pfp = (1 - (1 - 1/m_b)^(k_b n))^(k_b mu)                       (section 3.2)
 *   With k_b = 1 and m_b = ceil(n / ln2) every block sits at density 1/2 at n keys,
 *   the information-theoretic optimum, and Pfp = 2^-mu: each dropped block doubles it.
 *
 * Hash functions per block
 *   Block j's k_b functions are probes j*k_b .. j*k_b + k_b - 1 of the key's enhanced
 *   double-hashing sequence (once_probe_next), each reduced onto [0, m_b).  They depend
 *   on the seed and j only, never on how many blocks the filter has now: a reduced
 *   filter, and any two filters of the same seed, m_b and k_b, agree on every block
 *   they both have.  That is what makes reduction free and lets filters of different
 *   resolutions combine (the result has the lower one, section 3.2).
 *
 * D-BBF (section 4; its growth and queries in grow/dbpbf.c)
 *   A list of batches, each a BPBF of the same geometry; a key is present when some
 *   batch holds it (Eq. 2).  Reduction keeps the first m' blocks of every batch.
 *   n_thres stays: it bounds each block's density, which reduction does not change; a
 *   reduced batch's rate is then that density to the power m'.
 *   Configuration (section 4): for a batch of m bits and a per-batch rate p, try
 *   mu = 1, 2, ... with m_b = floor(m / mu) and keep the mu whose n_thres - the most
 *   keys with Eq. 1 at most p - is largest.  n_thres is concave in mu, so the search
 *   stops at the first decrease (hill climbing).  The paper takes only mu dividing m;
 *   we take m_b = floor(m/mu) so any m works (at most mu - 1 bits of m go unused).
 *
 *   (Whole-bit block lengths make n_thres wiggle by a key far past the top, where m/mu
 *   is small; the climb stops long before, and the tests check it against brute force.)
 *
 * Combining (section 3.2)
 *   once_union / once_intersect take equal geometry (and, for the D-BBF, equal batch
 *   counts, as filter.c checks through same_geometry for every structure) and never
 *   allocate.  once_bpbf_union / once_bpbf_intersect also take a source of another
 *   resolution sharing seed, m_b and k_b: dst first keeps only the blocks both have
 *   (the lower resolution), and a D-BBF union grows dst to the source's batch count,
 *   allocating everything before changing anything (reshape), so a failure leaves dst
 *   as it was.  Union is batch-wise OR.  A D-BBF
 *   intersection cannot be batch-wise AND: a key both hold may sit in batch 1 of one
 *   and batch 3 of the other.  So dst's batch i keeps its bits that are set in any
 *   batch of src, which keeps every common key and only clears bits.
 *
 * Distinct keys (section 5.3): see "cardinality" below.
 *
 * Layout
 *   Each block is padded to whole 64-bit words (`stride`), so a block's bits and
 *   popcount never straddle another block; a batch is one 64-byte aligned array of
 *   blocks * stride words.  Padding bits are always zero (the loader checks).
 *
 * Invariants
 *   - 1 <= batches; the BPBF has exactly one and n_thres = 0;
 *   - every D-BBF batch but the last holds at least n_thres keys (counts are upper
 *     bounds after a union or intersection);
 *   - reduction, union and intersection never clear a bit a held key needs in the
 *     blocks that remain, so there are no false negatives;
 *   - a refused operation (ONCE_ERR_FULL, ONCE_ERR_NOMEM) changes nothing;
 *   - queries never change state.
 */
#include "static/bpbf.h"
#include "core/limits.h"
#include "math/bpbf_plan.h"
#include "math/cardinality.h"

#include <math.h>

/* The table at the end of this file, which the code above refers to. */
extern const once_filter_ops once_bpbf_ops;

#define PREFETCH_BATCHES 4 /* newest batches whose first blocks a prefetch touches */
#define PREFETCH_BLOCKS 8  /* blocks an insertion prefetches (static filter's batch) */

/*
 * A query plans the key as an insertion does, every line requested before any is
 * read: an absent key reads a block or two, but its misses then overlap, which pays
 * for the lines it does not read (as the standard filter's one-key query,
 * static/array_filter.h).  A geometry too large to plan walks its cells.
 */
static bool bpbf_query(const once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)now_ms;
    const bpbf *b = CBP(f);
    if (!plannable(b))
        return batch_holds(b, &b->batches[0], h);
    uint64_t cells[PLAN_CELLS];
    probe_blocks(b, b->batches[0].words, h, PROBE_PLAN, cells);
    return holds_planned(b, b->batches[0].words, cells);
}

/* ------------------------------------------------------------ batches */

/* The structure's memory (once_bytes without the metadata) with `batches` batches of
 * the current block count (<= BPBF_MAX_BATCHES), the table grown to hold them. */
static uint64_t memory_for(const bpbf *b, uint64_t batches)
{
    uint32_t room = once_table_room(b->room, (uint32_t)batches, 1, BPBF_MAX_BATCHES);
    return once_table_memory(sizeof(bpbf), room, sizeof(bpbf_batch), batches * batch_bytes(b));
}

/* Would `batches` batches keep once_bytes within the cap? */
static bool within_cap(const bpbf *b, uint64_t batches)
{
    return batches <= BPBF_MAX_BATCHES &&
           once_fits_cap(memory_for(b, batches), b->base.metadata_len, b->max_bytes);
}

static once_status ensure_room(bpbf *b, uint32_t want)
{
    return once_table_reserve((void **)&b->batches, &b->room, want, sizeof *b->batches, 1,
                              BPBF_MAX_BATCHES)
               ? ONCE_OK
               : ONCE_ERR_NOMEM;
}

once_status once_bpbf_open_batch(bpbf *b)
{
    if (!within_cap(b, (uint64_t)b->count + 1))
        return ONCE_ERR_FULL;
    /* The table's growth last: it is the one allocation that cannot be taken back. */
    uint64_t *words = once_words_alloc(batch_words(b));
    if (words == NULL)
        return ONCE_ERR_NOMEM;
    once_status st = ensure_room(b, b->count + 1);
    if (st != ONCE_OK) {
        once_words_free(words);
        return st;
    }
    b->batches[b->count].words = words;
    b->batches[b->count].items = 0;
    b->count++;
    return ONCE_OK;
}

static once_status bpbf_add(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)now_ms;
    bpbf *b = BP(f);
    uint64_t planned[PLAN_CELLS];
    once_bpbf_set(b, &b->batches[0], h, once_bpbf_plan_newest(b, h, planned));
    b->batches[0].items++;
    return ONCE_OK;
}

/*
 * A test-and-add tests and sets the key's bits in one pass, as the standard filter
 * does: setting bits that are all set already changes nothing, so it is the query and
 * then the insertion of a key not found, with all its lines read at once.
 */
static once_status bpbf_test_and_add(once_filter *f, const once_hash *h, uint64_t now_ms,
                                     bool *seen)
{
    (void)now_ms;
    bpbf *b = BP(f);
    bpbf_batch *batch = &b->batches[0];
    uint64_t planned[PLAN_CELLS];
    const uint64_t *cells = once_bpbf_plan_newest(b, h, planned);
    *seen = cells != NULL ? set_planned(b, batch->words, cells, true)
                          : probe_blocks(b, batch->words, h, PROBE_TEST_AND_SET, NULL);
    batch->items += !*seen;
    return ONCE_OK;
}

/* Bit offsets (within a batch) of the first probe of blocks 0 .. n-1. */
static uint32_t first_probes(const bpbf *b, const once_hash *h, uint64_t *first, uint32_t n)
{
    once_probe p = once_probe_start(h, once_filter_probe(&b->base));
    uint32_t blocks = b->blocks < n ? b->blocks : n;
    for (uint32_t j = 0; j < blocks; j++) {
        first[j] = once_probe_next(&p, b->block_length) + j * b->stride * 64;
        for (uint32_t i = 1; i < b->block_hashes; i++)
            once_probe_next(&p, b->block_length);
    }
    return blocks;
}

/* For the D-BBF's batches: a query of an absent key usually leaves a batch after its
 * first block or two, in every batch; an insertion starts on the same two lines of the
 * last batch.  So the first two blocks of the newest batches. */
void once_bpbf_request_cells(const bpbf *b, const uint64_t *first, uint32_t blocks)
{
    uint32_t older = b->count > PREFETCH_BATCHES ? b->count - PREFETCH_BATCHES : 0;
    for (uint32_t i = older; i < b->count; i++)
        for (uint32_t j = 0; j < blocks; j++)
            once_prefetch_read(b->batches[i].words + (first[j] >> 6));
}

void once_bpbf_prefetch(const once_filter *f, const once_hash *h)
{
    const bpbf *b = CBP(f);
    uint64_t first[2];
    once_bpbf_request_cells(b, first, first_probes(b, h, first, 2));
}

void once_bpbf_request_first_blocks(const bpbf *b, const uint64_t *cells)
{
    uint64_t first[2] = {cells[0], b->blocks > 1 ? cells[b->block_hashes] : 0};
    once_bpbf_request_cells(b, first, b->blocks > 1 ? 2 : 1);
}

/*
 * The static filter's fused batch (it never grows, so no insertion can fail): each key
 * taken ONCE_BATCH_AHEAD keys ahead.  An insertion or a dedup test-and-add (a mostly new
 * stream) plans it there, its cells kept in a ring and every line requested, and sets
 * them from the ring at its turn; a query too, and tests them from the ring.  A
 * geometry too large to plan requests its first blocks (two for a query,
 * PREFETCH_BLOCKS otherwise) and walks.
 */
static once_status bpbf_fused_batch(once_filter *f, const once_batch_items *items, size_t count,
                                    once_batch_op op, uint8_t *out, size_t *done)
{
    bpbf *b = BP(f);
    bpbf_batch *batch = &b->batches[0];
    bool plan = plannable(b);
    uint32_t want = op == ONCE_OP_QUERY ? 2 : PREFETCH_BLOCKS;
    const once_batch_items in = *items;
    once_hash ring[ONCE_BATCH_LOOP_RING];
    uint64_t cell_ring[ONCE_BATCH_LOOP_RING][PLAN_CELLS];
    for (size_t i = 0; i < count + ONCE_BATCH_AHEAD; i++) {
        if (i < count) {
            once_hash *h = &ring[i % ONCE_BATCH_LOOP_RING];
            *h = once_item_hash(&in, i);
            if (plan) {
                probe_blocks(b, batch->words, h, PROBE_PLAN, cell_ring[i % ONCE_BATCH_LOOP_RING]);
            } else {
                uint64_t first[PREFETCH_BLOCKS];
                uint32_t blocks = first_probes(b, h, first, want);
                for (uint32_t j = 0; j < blocks; j++) {
                    if (op == ONCE_OP_QUERY)
                        once_prefetch_read(batch->words + (first[j] >> 6));
                    else
                        once_prefetch_write(batch->words + (first[j] >> 6));
                }
            }
        }
        if (i < ONCE_BATCH_AHEAD)
            continue;
        size_t k = i - ONCE_BATCH_AHEAD;
        const once_hash *h = &ring[k % ONCE_BATCH_LOOP_RING];
        const uint64_t *cells = cell_ring[k % ONCE_BATCH_LOOP_RING];
        if (op == ONCE_OP_ADD) {
            if (plan)
                set_planned(b, batch->words, cells, false);
            else
                probe_blocks(b, batch->words, h, PROBE_SET, NULL);
            batch->items++;
            continue;
        }
        if (op == ONCE_OP_QUERY) {
            out[k] = plan ? holds_planned(b, batch->words, cells)
                          : probe_blocks(b, batch->words, h, PROBE_TEST, NULL);
            continue;
        }
        /* One pass that tests and sets: the lines were requested for an insertion, and
         * setting the bits of a key found present changes none of them. */
        bool present = plan ? set_planned(b, batch->words, cells, true)
                            : probe_blocks(b, batch->words, h, PROBE_TEST_AND_SET, NULL);
        out[k] = present;
        batch->items += !present;
    }
    *done = count;
    return ONCE_OK;
}

/* --------------------------------------------------------- reduction */

/* Replace every batch's array by one of `blocks` blocks (<= current) and extend to
 * `count` batches (>= current; new ones empty), allocating everything first so that
 * a failure changes nothing. */
static once_status reshape(bpbf *b, uint32_t blocks, uint32_t count)
{
    uint32_t old_blocks = b->blocks;
    b->blocks = blocks;
    bool fits = within_cap(b, count);
    uint64_t words = batch_words(b);
    b->blocks = old_blocks;
    if (!fits)
        return ONCE_ERR_FULL;
    uint64_t **fresh = once_calloc(count, sizeof *fresh);
    if (fresh == NULL)
        return ONCE_ERR_NOMEM;
    bool shrink = blocks != old_blocks;
    once_status st = ONCE_OK;
    for (uint32_t i = 0; i < count && st == ONCE_OK; i++) {
        if (i < b->count && !shrink)
            continue; /* kept as it is */
        fresh[i] = once_words_alloc(words);
        if (fresh[i] == NULL)
            st = ONCE_ERR_NOMEM;
    }
    if (st == ONCE_OK)
        st = ensure_room(b, count); /* last: the one growth that cannot be taken back */
    if (st != ONCE_OK) {
        for (uint32_t i = 0; i < count; i++)
            once_words_free(fresh[i]);
        once_free_memory(fresh);
        return st;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (fresh[i] == NULL)
            continue;
        if (i < b->count) {
            /* The first blocks keep their bits and, by construction, their functions. */
            memcpy(fresh[i], b->batches[i].words, (size_t)(words * 8));
            once_words_free(b->batches[i].words);
        } else {
            b->batches[i].items = 0;
        }
        b->batches[i].words = fresh[i];
    }
    once_free_memory(fresh);
    b->blocks = blocks;
    b->count = count;
    return ONCE_OK;
}

static bpbf *as_bpbf(const once_filter *f)
{
    if (f == NULL || (f->ops->type != ONCE_BPBF && f->ops->type != ONCE_DBPBF))
        return NULL;
    return (bpbf *)f;
}

once_status once_bpbf_reduce(once_filter *f, uint32_t blocks)
{
    bpbf *b = as_bpbf(f);
    if (b == NULL || blocks == 0 || blocks > b->blocks)
        return ONCE_ERR_INVALID;
    if (blocks == b->blocks)
        return ONCE_OK;
    return reshape(b, blocks, b->count);
}

once_status once_bpbf_reduce_to_length(once_filter *f, uint64_t bits)
{
    bpbf *b = as_bpbf(f);
    if (b == NULL || bits == 0 || bits > (uint64_t)b->blocks * b->block_length)
        return ONCE_ERR_INVALID;
    uint64_t blocks = (bits + b->block_length / 2) / b->block_length; /* nearest */
    return once_bpbf_reduce(f, blocks == 0 ? 1 : (uint32_t)blocks);
}

/* Fill of block j of a batch: set bits / m_b. */
static double block_fill(const bpbf *b, const bpbf_batch *batch, uint32_t j)
{
    return (double)once_words_popcount(batch->words + (uint64_t)j * b->stride, b->stride) /
           (double)b->block_length;
}

/* The rate from the fills: a batch matches an absent key with prod_j fill_j^k_b, and
 * the filter when any batch does (section 2: (t/m)^k per independent filter). */
static double fill_fpr(const bpbf *b, uint32_t blocks)
{
    double keep = 1.0;
    for (uint32_t i = 0; i < b->count; i++) {
        double batch = 1.0;
        for (uint32_t j = 0; j < blocks && batch > 0.0; j++)
            batch *= pow(block_fill(b, &b->batches[i], j), (double)b->block_hashes);
        keep *= 1.0 - batch;
    }
    return 1.0 - keep;
}

once_status once_bpbf_fpr_at(const once_filter *f, uint32_t blocks, double *fpr)
{
    const bpbf *b = as_bpbf(f);
    if (b == NULL || fpr == NULL || blocks == 0 || blocks > b->blocks)
        return ONCE_ERR_INVALID;
    *fpr = fill_fpr(b, blocks);
    return ONCE_OK;
}

once_status once_bpbf_reduce_to_error(once_filter *f, double error, uint32_t *blocks)
{
    bpbf *b = as_bpbf(f);
    if (b == NULL || !(error > 0.0 && error < 1.0))
        return ONCE_ERR_INVALID;
    /* The rate falls as blocks are added: the first count that meets `error` is the
     * shortest filter that does. */
    uint32_t keep = b->blocks;
    for (uint32_t m = 1; m < b->blocks; m++) {
        if (fill_fpr(b, m) <= error) {
            keep = m;
            break;
        }
    }
    once_status st = once_bpbf_reduce(f, keep);
    if (st == ONCE_OK && blocks != NULL)
        *blocks = keep;
    return st;
}

/* ------------------------------------------------------------ combine */

/*
 * dst op= src over dst's blocks (src has at least as many; both share m_b, k_b, seed).
 * Union: batch-wise OR over src's batches (dst has at least as many).  Intersection:
 * dst's batch i keeps the bits set in any src batch, so a key held by both - in any
 * batches - keeps all its bits in the dst batch that held it.
 */
static void combine_blocks(bpbf *dst, const bpbf *src, once_combine_op op)
{
    uint64_t words = batch_words(dst);
    if (op == ONCE_COMBINE_UNION) {
        for (uint32_t i = 0; i < src->count; i++) {
            once_words_combine(dst->batches[i].words, src->batches[i].words, words, op);
            dst->batches[i].items =
                once_card_combined_items(dst->batches[i].items, src->batches[i].items, op);
        }
        return;
    }
    /* Counts stay: dst's are upper bounds of what its batches now hold. */
    for (uint64_t w = 0; w < words; w++) {
        uint64_t any = 0;
        for (uint32_t j = 0; j < src->count; j++)
            any |= src->batches[j].words[w];
        for (uint32_t i = 0; i < dst->count; i++)
            dst->batches[i].words[w] &= any;
    }
}

bool once_bpbf_same_geometry(const once_filter *a, const once_filter *b)
{
    const bpbf *x = CBP(a), *y = CBP(b);
    return x->block_length == y->block_length && x->blocks == y->blocks &&
           x->block_hashes == y->block_hashes && x->threshold == y->threshold &&
           x->count == y->count;
}

once_status once_bpbf_combine(once_filter *dst, const once_filter *src, once_combine_op op)
{
    combine_blocks(BP(dst), CBP(src), op);
    return ONCE_OK;
}

static once_status combine_resolutions(once_filter *dst_f, const once_filter *src_f,
                                       once_combine_op op)
{
    bpbf *dst = as_bpbf(dst_f);
    const bpbf *src = as_bpbf(src_f);
    if (dst == NULL || src == NULL)
        return ONCE_ERR_INVALID;
    if (dst_f->ops != src_f->ops || dst_f->seed != src_f->seed ||
        dst->block_length != src->block_length || dst->block_hashes != src->block_hashes ||
        dst->threshold != src->threshold)
        return ONCE_ERR_MISMATCH;
    if (!once_same_probe(dst_f, src_f))
        return ONCE_ERR_PROBE_MISMATCH;
    uint32_t blocks = src->blocks < dst->blocks ? src->blocks : dst->blocks;
    uint32_t count = dst->count;
    if (op == ONCE_COMBINE_UNION && src->count > count)
        count = src->count;
    if (blocks != dst->blocks || count != dst->count) {
        once_status st = reshape(dst, blocks, count);
        if (st != ONCE_OK)
            return st;
    }
    dst_f->items = once_card_combined_items(dst_f->items, src_f->items, op);
    combine_blocks(dst, src, op);
    return ONCE_OK;
}

once_status once_bpbf_union(once_filter *dst, const once_filter *src)
{
    return combine_resolutions(dst, src, ONCE_COMBINE_UNION);
}

once_status once_bpbf_intersect(once_filter *dst, const once_filter *src)
{
    return combine_resolutions(dst, src, ONCE_COMBINE_INTERSECT);
}

/* -------------------------------------------------------------- stats */

static double formula_fpr(const bpbf *b)
{
    double keep = 1.0;
    for (uint32_t i = 0; i < b->count; i++)
        keep *= 1.0 - once_bpbf_fpr(b->block_length, b->block_hashes, b->blocks,
                                    b->batches[i].items);
    return 1.0 - keep;
}

void once_bpbf_stats(const once_filter *f, once_stats *s)
{
    const bpbf *b = CBP(f);
    s->bits = (uint64_t)b->count * b->blocks * b->block_length;
    s->bits_set = 0;
    for (uint32_t i = 0; i < b->count; i++)
        s->bits_set += once_words_popcount(b->batches[i].words, batch_words(b));
    s->hashes = b->blocks * b->block_hashes;
    s->filters = b->count;
    s->fpr_estimate = fill_fpr(b, b->blocks);
    /* The design rate: Eq. 1 at capacity (BPBF), or one full batch (D-BBF). */
    if (b->threshold)
        s->design_fpr = once_bpbf_fpr(b->block_length, b->block_hashes, b->blocks, b->threshold);
    else
        s->design_fpr = f->capacity ? once_bpbf_fpr(b->block_length, b->block_hashes, b->blocks,
                                                    f->capacity)
                                    : 0.0;
}

once_status once_bpbf_get_state(const once_filter *f, once_bpbf_state *out)
{
    const bpbf *b = as_bpbf(f);
    if (b == NULL || out == NULL)
        return ONCE_ERR_INVALID;
    memset(out, 0, sizeof *out);
    out->geometry.block_length = b->block_length;
    out->geometry.blocks = b->blocks;
    out->geometry.block_hashes = b->block_hashes;
    out->geometry.batch_threshold = b->threshold;
    out->batches = b->count;
    out->last_batch_items = b->batches[b->count - 1].items;
    out->bits = (uint64_t)b->count * b->blocks * b->block_length;
    out->fpr_formula = formula_fpr(b);
    out->fpr_fill = fill_fpr(b, b->blocks);
    return ONCE_OK;
}

/* ------------------------------------------------------- cardinality */

/*
 * Distinct keys (paper 002, section 5.3).  A batch is a BPBF: mu blocks of m_b cells,
 * each key leaving a cell clear with probability (1 - 1/m_b)^k_b, so Theorem 3 is
 * cardinality.c's occupancy estimate with cells = mu m_b and range m_b (Lemma 4).
 * The batches of a D-BBF hold disjoint keys (a key goes to one batch; under
 * test-and-add a key already present is not inserted again), so the D-BBF's count is
 * the sum over batches, and its interval the sum of the batches' intervals at
 * 1 - (1 - c)/lambda each (Bonferroni; cardinality.c's sum over parts).  Keys added
 * with once_add again after their batch closed are counted once per batch: the
 * estimate is then an upper bound.
 */
static once_status batch_occupancy(const bpbf *b, once_occupancy *o)
{
    return once_occupancy_for(o, (uint64_t)b->blocks * b->block_length, b->block_hashes,
                              b->block_length);
}

static once_status bpbf_batch_cells(const void *ctx, uint32_t i, uint64_t *set, once_occupancy *o)
{
    const bpbf *b = ctx;
    *set = once_words_popcount(b->batches[i].words, batch_words(b));
    return batch_occupancy(b, o);
}

once_status once_bpbf_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                    once_cardinality *out)
{
    (void)now_ms;
    const bpbf *b = CBP(f);
    return once_card_sum(b->count, bpbf_batch_cells, b, confidence, out);
}

/*
 * |A union B| and |A intersect B| of two static filters of the same geometry (section
 * 5.2): the OR of the two is the filter of the union (Theorem 1 / 3 on its set cells),
 * the AND goes through Eq. 6 and Theorem 2 with the cells of both and of the AND.
 * Counted word by word, without building the combined filter.  D-BBFs batch their keys
 * in arrival order, so two D-BBFs' batches do not line up and no pair estimate is
 * offered for them.
 */
static once_status bpbf_cardinality_pair(const once_filter *fa, const once_filter *fb,
                                         once_combine_op op, double confidence,
                                         once_cardinality *out)
{
    const bpbf *a = CBP(fa), *b = CBP(fb);
    const uint64_t *x = a->batches[0].words, *y = b->batches[0].words;
    uint64_t words = batch_words(a), set_a = 0, set_b = 0, set_op = 0;
    for (uint64_t w = 0; w < words; w++) {
        set_a += (uint64_t)__builtin_popcountll(x[w]);
        set_b += (uint64_t)__builtin_popcountll(y[w]);
        set_op += (uint64_t)__builtin_popcountll(op == ONCE_COMBINE_UNION ? x[w] | y[w]
                                                                          : x[w] & y[w]);
    }
    once_occupancy o;
    once_status st = batch_occupancy(a, &o);
    if (st != ONCE_OK)
        return st;
    if (op == ONCE_COMBINE_UNION)
        return once_card_estimate(&o, set_op, confidence, out);
    return once_card_estimate_intersection(&o, set_a, set_b, set_op, confidence, out);
}

uint64_t once_bpbf_memory(const once_filter *f)
{
    const bpbf *b = CBP(f);
    return memory_for(b, b->count);
}

uint64_t once_bpbf_memory_cap(const once_filter *f)
{
    return CBP(f)->max_bytes;
}

/* -------------------------------------------------------- lifecycle */

void once_bpbf_destroy(once_filter *f)
{
    bpbf *b = BP(f);
    for (uint32_t i = 0; i < b->count; i++)
        once_words_free(b->batches[i].words);
    once_free_memory(b->batches);
    once_free_memory(b);
}

void once_bpbf_clear(once_filter *f)
{
    bpbf *b = BP(f);
    /* Back to one empty batch: a D-BBF gives its grown memory back. */
    for (uint32_t i = 1; i < b->count; i++)
        once_words_free(b->batches[i].words);
    b->count = 1;
    memset(b->batches[0].words, 0, (size_t)(batch_words(b) * 8));
    b->batches[0].items = 0;
}

once_status once_bpbf_new(bpbf **out, const once_filter_ops *ops, const once_bpbf_geometry *g,
                            uint64_t max_bytes)
{
    bpbf *b = once_calloc(1, sizeof *b);
    if (b == NULL)
        return ONCE_ERR_NOMEM;
    once_filter_init(&b->base, ops);
    b->block_length = g->block_length;
    b->stride = stride_for(g->block_length);
    b->blocks = g->blocks;
    b->block_hashes = g->block_hashes;
    b->threshold = g->batch_threshold;
    b->max_bytes = max_bytes;
    once_status st = within_cap(b, 1) ? once_bpbf_open_batch(b) : ONCE_ERR_TOO_LARGE;
    if (st != ONCE_OK) {
        once_bpbf_destroy(&b->base);
        return st;
    }
    *out = b;
    return ONCE_OK;
}

once_status once_bpbf_create_as(const once_filter_ops *ops, once_filter **out,
                                const once_config *c, uint64_t max_bytes)
{
    once_bpbf_geometry g;
    once_status st = once_bpbf_plan(c, &g);
    if (st != ONCE_OK)
        return st;
    bpbf *b = NULL;
    st = once_bpbf_new(&b, ops, &g, max_bytes);
    if (st != ONCE_OK)
        return st;
    b->base.capacity = c->capacity; /* the design rate (stats) is Eq. 1 at capacity */
    *out = &b->base;
    return ONCE_OK;
}

static once_status bpbf_create(once_filter **out, const once_config *c)
{
    return once_bpbf_create_as(&once_bpbf_ops, out, c, c->max_bytes);
}

/* ------------------------------------------------------- serialization */

enum { P_BLOCK_LENGTH, P_BLOCKS, P_BLOCK_HASHES, P_THRESHOLD, P_MAX_BYTES, P_BATCHES, P_FIELDS };

uint64_t once_bpbf_params_size(const once_filter *f)
{
    (void)f;
    return P_FIELDS * 8;
}

/* Per batch: its count, then all batches' words (blocks * stride each). */
uint64_t once_bpbf_payload_size(const once_filter *f)
{
    const bpbf *b = CBP(f);
    return (uint64_t)b->count * 8 + (uint64_t)b->count * batch_words(b) * 8;
}

void once_bpbf_save_params(const once_filter *f, once_writer *w)
{
    const bpbf *b = CBP(f);
    uint64_t v[P_FIELDS] = {b->block_length, b->blocks,    b->block_hashes,
                            b->threshold,    b->max_bytes, b->count};
    for (int i = 0; i < P_FIELDS; i++)
        once_writer_u64(w, v[i]);
}

void once_bpbf_save_payload(const once_filter *f, once_writer *w)
{
    const bpbf *b = CBP(f);
    for (uint32_t i = 0; i < b->count; i++)
        once_writer_u64(w, b->batches[i].items);
    for (uint32_t i = 0; i < b->count; i++)
        once_writer_words(w, b->batches[i].words, batch_words(b));
}

/* No bit past m_b in any block (the padding up to the block's last word). */
static bool padding_clear(const bpbf *b, const uint64_t *words)
{
    if (b->block_length % 64 == 0)
        return true;
    for (uint32_t j = 0; j < b->blocks; j++)
        if (words[(uint64_t)j * b->stride + b->stride - 1] >> (b->block_length % 64))
            return false;
    return true;
}

once_status once_bpbf_load_as(const once_filter_ops *ops, once_filter **out,
                              const uint8_t *params, size_t params_len, const uint8_t *payload,
                              size_t payload_len)
{
    uint64_t v[P_FIELDS];
    if (!once_read_params(params, params_len, v, P_FIELDS))
        return ONCE_ERR_CORRUPT;
    bool dynamic = ops->type == ONCE_DBPBF;
    uint64_t count = v[P_BATCHES];
    if (!once_bpbf_geometry_valid(v[P_BLOCK_LENGTH], v[P_BLOCKS], v[P_BLOCK_HASHES]) || count == 0 ||
        count > BPBF_MAX_BATCHES || (dynamic ? v[P_THRESHOLD] == 0 || v[P_MAX_BYTES] == 0
                                             : v[P_THRESHOLD] != 0 || count != 1))
        return ONCE_ERR_CORRUPT;
    once_bpbf_geometry g = {v[P_BLOCK_LENGTH], (uint32_t)v[P_BLOCKS], (uint32_t)v[P_BLOCK_HASHES],
                            v[P_THRESHOLD]};
    /* Sizes before any allocation: the payload must be exactly what the params say. */
    uint64_t words = v[P_BLOCKS] * stride_for(v[P_BLOCK_LENGTH]);
    if (payload_len / 8 < count || (payload_len - count * 8) / 8 / words != count ||
        (payload_len - count * 8) % (words * 8) != 0)
        return ONCE_ERR_CORRUPT;
    bpbf *b = NULL;
    once_status st = once_bpbf_new(&b, ops, &g, v[P_MAX_BYTES]);
    if (st == ONCE_ERR_TOO_LARGE || st == ONCE_ERR_FULL)
        return ONCE_ERR_CORRUPT;
    if (st != ONCE_OK)
        return st;
    if (!within_cap(b, count)) {
        once_bpbf_destroy(&b->base);
        return ONCE_ERR_CORRUPT;
    }
    const uint8_t *bits = payload + count * 8;
    for (uint64_t i = 0; i < count && st == ONCE_OK; i++) {
        if (i > 0)
            st = once_bpbf_open_batch(b);
        if (st != ONCE_OK)
            break;
        bpbf_batch *batch = &b->batches[i];
        batch->items = once_le64_read(payload + i * 8);
        once_words_from_le(batch->words, bits + i * words * 8, words);
        if (!padding_clear(b, batch->words) || (i + 1 < count && batch->items < b->threshold))
            st = ONCE_ERR_CORRUPT;
    }
    if (st != ONCE_OK) {
        once_bpbf_destroy(&b->base);
        return st;
    }
    *out = &b->base;
    return ONCE_OK;
}

static once_status bpbf_load(once_filter **out, const uint8_t *params, size_t params_len,
                             const uint8_t *payload, size_t payload_len)
{
    return once_bpbf_load_as(&once_bpbf_ops, out, params, params_len, payload, payload_len);
}

bool once_bpbf_explicit_geometry(const once_config *c)
{
    return c->bits != 0 || c->hashes != 0 || c->block_length != 0 || c->blocks != 0;
}

const once_filter_ops once_bpbf_ops = {
    .type = ONCE_BPBF,
    .can_take = once_never_full,
    .create = bpbf_create,
    .explicit_geometry = once_bpbf_explicit_geometry,
    .query = bpbf_query,
    .add = bpbf_add,
    .test_and_add = bpbf_test_and_add,
    .batch = bpbf_fused_batch,
    .cardinality_pair = bpbf_cardinality_pair,
    .set_memory_cap = NULL, /* never grows: no cap to change */
    .load = bpbf_load,
    BPBF_SHARED_OPS,
};
