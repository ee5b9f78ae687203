/*
 * grow/dbpbf.c - the dynamic block-partitioned Bloom filter (D-BBF, paper 002 section
 * 4): block-partitioned batches (static/bpbf.h) that grow by a batch when the newest
 * is full.
 *
 * Design
 *   A list of batches, each a BPBF of the same geometry (static/bpbf.c explains the
 *   layout, its reduction, combining, estimates and saved form, which serve both
 *   filters).  Keys go to the newest batch; once it holds n_thres keys the next
 *   insertion opens a new empty batch, within max_bytes (ONCE_DEFAULT_MAX_BYTES when
 *   0): past it the insertion fails with ONCE_ERR_FULL and changes nothing.  A key is
 *   present when some batch holds it.  With lambda batches and x keys in the newest,
 *       Pfp = 1 - (1 - Pfp_batch(x)) * prod_{i<lambda} (1 - Pfp_batch(n_thres))  (Eq. 2)
 *
 * Queries
 *   A block's hash functions depend on the seed and the block, never on the batch, so
 *   every batch tests the same cells: a query computes each cell when the first batch
 *   needs it and keeps it for the older ones, newest first (in a dedup stream a
 *   repeated key is most often a recent one); a cell just computed is tested from
 *   its register, not read back from the list.  It walks each batch's cells as it tests
 *   them, without requesting lines ahead: planning them (all, once for every batch, or
 *   the first two blocks') measured 1.4 times the walk's time at 10^7 keys
 *   (bench/ab.c), testing the batches cell by cell 1.65 times, and testing cells in
 *   pairs (two lines read before one branch) 1.2-1.3 times.  Batches keep a
 *   key's cells from the request of its lines to its turn (below).
 *
 * Invariants
 *   - every batch but the newest holds at least n_thres keys (counts are upper bounds
 *     after a union or intersection); no empty batch is kept but the first;
 *   - a refused insertion (ONCE_ERR_FULL, ONCE_ERR_NOMEM) changes nothing;
 *   - queries never change state.
 */
#include "static/bpbf.h"
#include "core/batch_loop.h"

/* The table at the end of this file, which the code above refers to. */
extern const once_filter_ops once_dbpbf_ops;

/* A query's walk: its cells as the batches need them, computed once (see above).
 * cells[0 .. known) are computed, and the probe state is the one after them. */
typedef struct cell_walk {
    once_probe p;
    uint32_t known, in_block;
    uint64_t block_offset;
} cell_walk;

static inline cell_walk walk_start(const bpbf *b, const once_hash *h)
{
    cell_walk w = {once_probe_start(h, once_filter_probe(&b->base)), 0, 0, 0};
    return w;
}

static inline __attribute__((always_inline)) uint64_t walk_next(const bpbf *b, cell_walk *w,
                                                                uint64_t *cells)
{
    uint64_t cell = w->block_offset + once_probe_next(&w->p, b->block_length);
    cells[w->known++] = cell;
    if (++w->in_block == b->block_hashes) {
        w->in_block = 0;
        w->block_offset += b->stride * 64;
    }
    return cell;
}

/* Does some batch hold the key, newest first?  A cell just computed is tested from its
 * register, not read back from the list. */
static inline __attribute__((always_inline)) bool walk_batches(const bpbf *b, cell_walk *w,
                                                               uint64_t *cells)
{
    uint32_t n = b->blocks * b->block_hashes;
    for (uint32_t i = b->count; i-- > 0;) {
        const uint64_t *words = b->batches[i].words;
        uint32_t q = 0;
        for (; q < n; q++) {
            uint64_t cell = q < w->known ? cells[q] : walk_next(b, w, cells);
            if (!once_bit_get(words, cell))
                break;
        }
        if (q == n)
            return true;
    }
    return false;
}

static bool dbpbf_query(const once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)now_ms;
    const bpbf *b = CBP(f);
    if (!plannable(b)) {
        for (uint32_t i = b->count; i-- > 0;)
            if (batch_holds(b, &b->batches[i], h))
                return true;
        return false;
    }
    uint64_t cells[PLAN_CELLS];
    cell_walk w = walk_start(b, h);
    return walk_batches(b, &w, cells);
}

/* The query from a key's plan: every batch tests the planned cells, newest first. */
static bool holds_planned_any(const bpbf *b, const uint64_t *cells)
{
    for (uint32_t i = b->count; i-- > 0;)
        if (holds_planned(b, b->batches[i].words, cells))
            return true;
    return false;
}

/* Insert the key into the newest batch, opening one when it is full: from its plan
 * (`cells`, when not NULL; a plan against the batch that was newest, which a new batch
 * shares) or walking its cells. */
static once_status insert(bpbf *b, const once_hash *h, const uint64_t *cells)
{
    if (b->batches[b->count - 1].items >= b->threshold) {
        once_status st = once_bpbf_open_batch(b);
        if (st != ONCE_OK)
            return st;
    }
    bpbf_batch *newest = &b->batches[b->count - 1];
    once_bpbf_set(b, newest, h, cells);
    newest->items++;
    return ONCE_OK;
}

static once_status dbpbf_add(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)now_ms;
    uint64_t planned[PLAN_CELLS];
    return insert(BP(f), h, once_bpbf_plan_newest(BP(f), h, planned));
}

/* The insertion's lines (the newest batch's) are requested before the query reads any:
 * a new key then waits for one round of misses, not the query's and then the
 * insertion's.  (When the insertion opens a batch, the request was for nothing.)  The
 * plan's cells are every batch's, so the query tests them rather than computing them
 * again. */
static once_status dbpbf_test_and_add(once_filter *f, const once_hash *h, uint64_t now_ms,
                                      bool *seen)
{
    bpbf *b = BP(f);
    uint64_t planned[PLAN_CELLS];
    const uint64_t *cells = once_bpbf_plan_newest(b, h, planned);
    if (cells == NULL)
        probe_blocks(b, b->batches[b->count - 1].words, h, PROBE_REQUEST, NULL);
    *seen = cells != NULL ? holds_planned_any(b, cells) : dbpbf_query(f, h, now_ms);
    return *seen ? ONCE_OK : insert(b, h, cells);
}

/*
 * Batches run once_batch_loop (core/batch_loop.h).  An insertion or a test-and-add
 * plans its key when its lines are requested (the cells, and every line of the newest
 * batch it sets) and its cells are kept for its turn; they are every batch's, so a
 * batch opened in between leaves them right.  A test-and-add also requests the first
 * two blocks' lines of the newest batches, what its query reads first.  A query
 * computes its first QUERY_FIRST_CELLS cells when it requests their lines in the
 * newest batches, and walks on from them at its turn.  Measured at 10^7 keys
 * (bench/ab.c, four rounds) against format 1, whose generic loop computed the first
 * cells for the request and again for the walk: insertions 0.63x, test-and-adds
 * 1.03x, queries 1.06x (1.16x with the generic loop).  Rejected: planning queries
 * (all their cells computed ahead, tested from the record), 1.4x; the query walk
 * flattened into the loop, 1.10x.  A geometry too large to plan takes the one-key
 * operations, with the first lines requested.
 */
typedef struct dbpbf_record {
    once_hash h;
    uint64_t cells[PLAN_CELLS]; /* when the geometry is plannable */
} dbpbf_record;

static inline __attribute__((always_inline)) void
dbpbf_batch_prepare(const void *ctx, void *record, const once_hash *h, once_batch_op op)
{
    const bpbf *b = ctx;
    dbpbf_record *r = record;
    r->h = *h;
    if (!plannable(b)) {
        once_bpbf_prefetch(&b->base, h);
        return;
    }
    probe_blocks(b, b->batches[b->count - 1].words, h, PROBE_PLAN, r->cells);
    if (op == ONCE_OP_TEST_AND_ADD)
        once_bpbf_request_first_blocks(b, r->cells);
}

static inline __attribute__((always_inline)) once_status
dbpbf_batch_step(const void *ctx, void *record, uint64_t now_ms, once_batch_op op, bool *answer)
{
    bpbf *b = (bpbf *)ctx; /* the batch's own, writable filter */
    const dbpbf_record *r = record;
    if (!plannable(b))
        return op == ONCE_OP_ADD ? dbpbf_add(&b->base, &r->h, now_ms)
                                 : dbpbf_test_and_add(&b->base, &r->h, now_ms, answer);
    if (op == ONCE_OP_ADD)
        return insert(b, &r->h, r->cells);
    *answer = holds_planned_any(b, r->cells);
    return *answer ? ONCE_OK : insert(b, &r->h, r->cells);
}

/* A query's record: its walk after the first cells, computed when their lines were
 * requested. */
#define QUERY_FIRST_CELLS 2

typedef struct dbpbf_query_record {
    once_hash h;
    cell_walk w; /* when the geometry is plannable */
    uint64_t first[QUERY_FIRST_CELLS];
} dbpbf_query_record;

static inline __attribute__((always_inline)) void
dbpbf_query_prepare(const void *ctx, void *record, const once_hash *h, once_batch_op op)
{
    (void)op;
    const bpbf *b = ctx;
    dbpbf_query_record *r = record;
    r->h = *h;
    if (!plannable(b)) {
        once_bpbf_prefetch(&b->base, h);
        return;
    }
    r->w = walk_start(b, h);
    uint32_t n = b->blocks * b->block_hashes, first = n < QUERY_FIRST_CELLS ? n : QUERY_FIRST_CELLS;
    for (uint32_t q = 0; q < first; q++)
        walk_next(b, &r->w, r->first);
    once_bpbf_request_cells(b, r->first, first);
}

static once_status dbpbf_query_step(const void *ctx, void *record, uint64_t now_ms,
                                    once_batch_op op, bool *answer)
{
    (void)op;
    const bpbf *b = ctx;
    dbpbf_query_record *r = record;
    if (!plannable(b)) {
        *answer = dbpbf_query(&b->base, &r->h, now_ms);
        return ONCE_OK;
    }
    uint64_t cells[PLAN_CELLS];
    for (uint32_t q = 0; q < r->w.known; q++)
        cells[q] = r->first[q];
    *answer = walk_batches(b, &r->w, cells);
    return ONCE_OK;
}

static once_status dbpbf_batch(once_filter *f, const once_batch_items *items, size_t count,
                               once_batch_op op, uint8_t *out, size_t *done)
{
    if (op == ONCE_OP_QUERY) {
        dbpbf_query_record queries[ONCE_BATCH_LOOP_RING];
        return once_batch_loop(items, count, ONCE_OP_QUERY, out, done, ONCE_BATCH_AHEAD,
                                   queries, sizeof queries[0], f, dbpbf_query_prepare,
                                   dbpbf_query_step);
    }
    dbpbf_record ring[ONCE_BATCH_LOOP_RING];
    return once_batch_loop_any(items, count, op, out, done, ONCE_BATCH_AHEAD, ring,
                                   sizeof ring[0], f, dbpbf_batch_prepare, dbpbf_batch_step);
}

static void dbpbf_set_memory_cap(once_filter *f, uint64_t cap)
{
    BP(f)->max_bytes = once_cap_or_default(cap);
}

static once_status dbpbf_create(once_filter **out, const once_config *c)
{
    return once_bpbf_create_as(&once_dbpbf_ops, out, c,
                               once_cap_or_default(c->max_bytes));
}

static once_status dbpbf_load(once_filter **out, const uint8_t *params, size_t params_len,
                              const uint8_t *payload, size_t payload_len)
{
    return once_bpbf_load_as(&once_dbpbf_ops, out, params, params_len, payload, payload_len);
}

static bool dbpbf_explicit_geometry(const once_config *c)
{
    return once_bpbf_explicit_geometry(c) || c->batch_threshold != 0;
}

/* No pair estimate: the batches of two filters do not line up. */
const once_filter_ops once_dbpbf_ops = {
    .type = ONCE_DBPBF,
    .create = dbpbf_create,
    .explicit_geometry = dbpbf_explicit_geometry,
    .query = dbpbf_query,
    .add = dbpbf_add,
    .test_and_add = dbpbf_test_and_add,
    .batch = dbpbf_batch,
    .cardinality_pair = NULL,
    .set_memory_cap = dbpbf_set_memory_cap,
    .load = dbpbf_load,
    BPBF_SHARED_OPS,
};
