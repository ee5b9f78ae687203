/*
 * static/bpbf.h - the block-partitioned layout (static/bpbf.c) for the filters built on
 * it: the static BPBF there and the dynamic one that grows by batches
 * (grow/dbpbf.c).  Both are a list of batches of mu blocks; the BPBF keeps one batch
 * and never another.  Its probe loop, the calls both filters' tables share, and the
 * batch list's growth within the cap are here; what each does with a key is in its
 * own file.  static/bpbf.c explains the design and its invariants.
 */
#ifndef ONCE_STATIC_BPBF_H
#define ONCE_STATIC_BPBF_H

#include "core/structure.h"
#include "core/limits.h"

#define BPBF_MAX_BATCHES (1u << 20)

typedef struct bpbf_batch {
    uint64_t items;  /* keys hashed into this batch (x of Eq. 2) */
    uint64_t *words; /* blocks * stride words */
} bpbf_batch;

typedef struct bpbf {
    once_filter base;
    uint64_t block_length; /* m_b */
    uint64_t stride;       /* words per block */
    uint32_t blocks;       /* mu, now */
    uint32_t block_hashes; /* k_b */
    uint64_t threshold;    /* n_thres; 0 = static BPBF */
    uint64_t max_bytes;    /* cap on once_bytes; 0 = none (BPBF) */
    uint32_t count;        /* batches in use */
    uint32_t room;         /* batches allocated */
    bpbf_batch *batches;
} bpbf;

#define BP(f) ((bpbf *)(f))
#define CBP(f) ((const bpbf *)(f))

static inline uint64_t stride_for(uint64_t block_length)
{
    return (block_length + 63) / 64;
}

static inline uint64_t batch_words(const bpbf *b)
{
    return (uint64_t)b->blocks * b->stride;
}

/* What one batch's array costs the allocator. */
static inline uint64_t batch_bytes(const bpbf *b)
{
    return once_words_memory(batch_words(b));
}

/* ------------------------------------------------------- the probe loop */

typedef enum probe_mode {
    PROBE_TEST,
    PROBE_SET,
    PROBE_REQUEST,
    PROBE_TEST_AND_SET,
    PROBE_PLAN
} probe_mode;

/*
 * The one loop over a batch's blocks: block j, hash i uses probe j*k_b + i of the key's
 * sequence.  PROBE_TEST stops at the first clear bit (an absent key usually leaves
 * after a block or two); PROBE_SET sets every bit; PROBE_REQUEST requests the line of
 * every bit PROBE_SET would set; PROBE_TEST_AND_SET sets every bit and answers whether
 * all were set before, with no early exit; PROBE_PLAN writes every cell's offset in the
 * batch to `cells` and requests its line, for the insertions below that plan a key
 * before they touch it.  Always inlined, so each caller gets the branch-free version of
 * its mode.
 */
static inline __attribute__((always_inline)) bool
probe_blocks(const bpbf *b, uint64_t *words, const once_hash *h, probe_mode mode,
             uint64_t *cells)
{
    once_probe p = once_probe_start(h, once_filter_probe(&b->base));
    uint64_t *block = words;
    bool all = true;
    for (uint32_t j = 0; j < b->blocks; j++, block += b->stride) {
        for (uint32_t i = 0; i < b->block_hashes; i++) {
            uint64_t pos = once_probe_next(&p, b->block_length);
            if (mode == PROBE_TEST_AND_SET)
                all &= once_bit_get(block, pos);
            if (mode == PROBE_SET || mode == PROBE_TEST_AND_SET) {
                once_bit_set(block, pos);
            } else if (mode == PROBE_REQUEST) {
                once_prefetch_write(&block[pos >> 6]);
            } else if (mode == PROBE_PLAN) {
                *cells++ = (uint64_t)j * b->stride * 64 + pos;
                once_prefetch_write(&block[pos >> 6]);
            } else if (!once_bit_get(block, pos)) {
                return false;
            }
        }
    }
    return all;
}

/*
 * Insertions plan a key first when its cells fit a plan (mu k_b <= 64, every target a
 * user asks for): its cells written down and every line requested before any is read
 * or set, so that its misses overlap, and the cells set (or tested and set) from the
 * plan without computing them again.
 */
#define PLAN_CELLS ONCE_MAX_HASHES

static inline bool plannable(const bpbf *b)
{
    return (uint64_t)b->blocks * b->block_hashes <= PLAN_CELLS;
}

static inline __attribute__((always_inline)) bool
set_planned(const bpbf *b, uint64_t *words, const uint64_t *cells, bool test)
{
    bool all = true;
    uint32_t n = b->blocks * b->block_hashes;
    for (uint32_t q = 0; q < n; q++) {
        if (test)
            all &= once_bit_get(words, cells[q]);
        once_bit_set(words, cells[q]);
    }
    return all;
}

static inline bool batch_holds(const bpbf *b, const bpbf_batch *batch, const once_hash *h)
{
    return probe_blocks(b, batch->words, h, PROBE_TEST, NULL);
}

/* Do the planned cells all hold in `words`?  Stops at the first clear bit. */
static inline __attribute__((always_inline)) bool
holds_planned(const bpbf *b, const uint64_t *words, const uint64_t *cells)
{
    uint32_t n = b->blocks * b->block_hashes;
    for (uint32_t q = 0; q < n; q++)
        if (!once_bit_get(words, cells[q]))
            return false;
    return true;
}

/* Plan the key against the newest batch: its cells into `cells` with their lines
 * requested, or NULL (nothing planned) for a geometry too large to plan. */
static inline const uint64_t *once_bpbf_plan_newest(const bpbf *b, const once_hash *h,
                                                    uint64_t *cells)
{
    if (!plannable(b))
        return NULL;
    probe_blocks(b, b->batches[b->count - 1].words, h, PROBE_PLAN, cells);
    return cells;
}

/* Set the key in `batch`: from its plan (`cells`, when not NULL) or walking its cells. */
static inline void once_bpbf_set(const bpbf *b, bpbf_batch *batch, const once_hash *h,
                                 const uint64_t *cells)
{
    if (cells != NULL)
        set_planned(b, batch->words, cells, false);
    else
        probe_blocks(b, batch->words, h, PROBE_SET, NULL);
}

/* ------------------------------------------------- what both filters share */

/* A filter of `ops` with its first (empty) batch, within max_bytes (0: no cap). */
once_status once_bpbf_new(bpbf **out, const once_filter_ops *ops, const once_bpbf_geometry *g,
                          uint64_t max_bytes);
/* once_create for either filter: the geometry of once_bpbf_plan, the cap `max_bytes`. */
once_status once_bpbf_create_as(const once_filter_ops *ops, once_filter **out,
                                const once_config *c, uint64_t max_bytes);
/* once_load for either filter (`ops` says which it must be). */
once_status once_bpbf_load_as(const once_filter_ops *ops, once_filter **out,
                              const uint8_t *params, size_t params_len, const uint8_t *payload,
                              size_t payload_len);
/* Open a new empty batch; ONCE_ERR_FULL past the cap, nothing changed on failure. */
once_status once_bpbf_open_batch(bpbf *b);
/* For the D-BBF's batches: the first two blocks of the newest batches. */
void once_bpbf_prefetch(const once_filter *f, const once_hash *h);
/* The lines of cells[0 .. count) in the newest batches. */
void once_bpbf_request_cells(const bpbf *b, const uint64_t *cells, uint32_t count);
/* The same lines as once_bpbf_prefetch from a key's planned cells (PROBE_PLAN). */
void once_bpbf_request_first_blocks(const bpbf *b, const uint64_t *cells);
/* The geometry is given: any of the sizes the search would otherwise choose. */
bool once_bpbf_explicit_geometry(const once_config *c);

/* The entries of both filters' tables. */
void once_bpbf_destroy(once_filter *f);
void once_bpbf_clear(once_filter *f);
bool once_bpbf_same_geometry(const once_filter *a, const once_filter *b);
once_status once_bpbf_combine(once_filter *dst, const once_filter *src, once_combine_op op);
void once_bpbf_stats(const once_filter *f, once_stats *s);
once_status once_bpbf_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                  once_cardinality *out);
uint64_t once_bpbf_memory(const once_filter *f);
uint64_t once_bpbf_memory_cap(const once_filter *f);
uint64_t once_bpbf_params_size(const once_filter *f);
uint64_t once_bpbf_payload_size(const once_filter *f);
void once_bpbf_save_params(const once_filter *f, once_writer *w);
void once_bpbf_save_payload(const once_filter *f, once_writer *w);

#define BPBF_SHARED_OPS                                                                        \
    .destroy = once_bpbf_destroy, .query_reads = NULL, .prefetch = NULL, .remove = NULL,      \
    .clear = once_bpbf_clear, .same_geometry = once_bpbf_same_geometry,                       \
    .combine = once_bpbf_combine, .stats = once_bpbf_stats,                                   \
    .cardinality = once_bpbf_cardinality, .memory = once_bpbf_memory,                         \
    .memory_cap = once_bpbf_memory_cap, .saved_params_size = once_bpbf_params_size,           \
    .saved_payload_size = once_bpbf_payload_size, .save_params = once_bpbf_save_params,       \
    .save_payload = once_bpbf_save_payload

#endif /* ONCE_STATIC_BPBF_H */
