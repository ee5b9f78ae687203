/*
 * grow/dbf.c - the Dynamic Bloom Filter (paper 003): a list of counting Bloom filters of one
 * geometry that grows with the set and shrinks as keys are deleted.
 *
 * Design
 *   A DBF holds s >= 1 rows.  Every row is a counting Bloom filter of static/counting.c
 *   (m 4-bit counters, k probes of the shared probe sequence, its add/remove/union
 *   used as they are), plus the number of keys it holds, nr, and the version of its
 *   last change.  All rows share m, k and the hash of a key, so a key has the same k
 *   positions in every row (paper 003 section 2.3: "the Bloom filter address of items in
 *   each SBF is the same").  Row capacity c is the design capacity of the filter; the
 *   configured error is one row's rate at c, and (m, k) come from once_plan for
 *   (c, error) unless given.
 *
 *   Insert (Algorithm 1): into the active row, the first with nr < c; when every row is
 *   full a new row is appended.  With query_before_insert (section 3.5.1) a key that
 *   already tests present is not inserted at all, so duplicates and false positives
 *   never open rows; once_dbf_query_first_ratio is the paper's rule for when that pays.
 *   As the paper says of its optimizations (section 3.5), this is for DBFs without
 *   deletion: a key skipped as a false positive has no counters of its own, and a later
 *   delete of the keys that covered it would turn it into a false negative.  Such a
 *   DBF refuses deletes with ONCE_ERR_UNSUPPORTED.
 *   Query (Algorithm 2): present iff some row has all k counters non-zero.  Its rate is
 *   Eq. 3: 1 - (1 - f(c))^floor(n/c) (1 - f(n mod c)) with f the row rate of Eq. 1
 *   (once_dbf_fpr); the stats evaluate the same product over the rows' actual nr.
 *
 *   Delete (Algorithm 3): only when exactly one row holds the key's address.  If
 *   several do (the multiple-address problem, section 3.4) any of them may be the
 *   wrong one, and decrementing it could zero a counter another key needs: a false
 *   negative.  So the delete is refused with ONCE_ERR_UNSUPPORTED and the key stays (a
 *   false positive from then on); no row at all: ONCE_ERR_NOT_PRESENT.  After a delete
 *   the row that shrank is merged with another row when their nr sum to at most c
 *   (Merge(); counters add, so the merged row is the row both key sets would have
 *   built), and a row left with nr = 0 is dropped while other rows remain.  The paper's
 *   text says "not greater than c", its listing "< c"; the text is followed: a merged
 *   row of exactly c keys is a full row, as good as any other.  Before a delete no two
 *   rows fit together (inserts only fill rows), so only the shrunken row needs a
 *   partner: one scan, as the paper notes ("at most one pair").
 *
 *   Union (Definition 3): the rows of the other DBF are appended, then rows are merged
 *   wherever counts allow.  A union that would pass the memory cap (or the row limit)
 *   is refused with ONCE_ERR_FULL, and one whose allocation fails with
 *   ONCE_ERR_NOMEM; everything is allocated before any row changes, so dst is left as
 *   it was.  Intersection is not in the paper; here dst keeps its rows and clears the
 *   counters that no row of src sets, which keeps every key both hold.
 *
 *   Bit-slice storage (section 3.5.3): rows are also kept transposed, as one 64-bit
 *   word per counter position and group of 64 rows whose bit r says "row r's counter is
 *   non-zero".  A query then ANDs k words per 64 rows instead of reading k counters in
 *   each row.  The counters stay in their rows (deletes need them; the paper's bit
 *   slices are for rows of bits), and the index is kept in step by every operation that
 *   moves a counter between zero and non-zero, so both storages answer identically.
 *   Rows are removed by moving the last row into the hole, so the index never shifts.
 *   The index costs 64 bits per counter position per group of 64 rows: as much as the
 *   counters at 16 rows, a quarter of them at 64, so it is for DBFs of many rows.
 *
 *   Incremental updates (sections 4.4 and 3.5.2): every change advances `version` and
 *   stamps the rows it touches; the delta format is grow/dbf_delta.c.
 *
 * Invariants
 *   - 1 <= rows <= 2^20; every row has m counters and k probes; nr counts the keys
 *     inserted into the row minus those deleted from it (merges add them), exact
 *     when callers delete only keys they added;
 *   - the active row is a function of the rows alone (no cursor), so a loaded filter
 *     and a replica insert exactly where the original would;
 *   - bit-slice: index bit (r, j) == (counter j of row r != 0), and the bits of rows
 *     at or past `rows` are zero;
 *   - a row's `changed` <= version <= DBF_MAX_VERSION; rows unchanged since the base
 *     version equal the base copy;
 *   - once_bytes (the rows, the row table, the index, the base copy, the metadata)
 *     stays within max_bytes (default 1 GiB): an insertion that needs a new row past
 *     it fails with ONCE_ERR_FULL and changes nothing.
 */
#include "grow/dbf.h"
#include "core/batch_loop.h"
#include "core/limits.h"
#include "math/cardinality.h"
#include "math/sizing.h"

#include <math.h>
#include <string.h>

/* The table at the end of this file, which the code above refers to. */
extern const once_filter_ops once_dbf_ops;

uint32_t once_dbf_groups_for(uint32_t rows)
{
    return (rows + 63) / 64;
}

/* Entries of the row table once it has room for `rows` (rows_reserve). */
static uint32_t rows_room_for(const dbf_filter *d, uint32_t rows)
{
    return once_table_room(d->rows_room, rows, 4, DBF_MAX_ROWS);
}

/* The structure's memory (once_bytes without the metadata) with a row table of `room`
 * entries, `rows` rows (<= room) and `base_rows` exported rows. */
uint64_t once_dbf_memory_for(const dbf_filter *d, uint64_t room, uint64_t rows, uint64_t base_rows)
{
    uint64_t row_bytes = once_array_memory_for(d->row_words);
    uint64_t bytes =
        once_table_memory(sizeof(dbf_filter), room, sizeof(dbf_row), rows * row_bytes);
    bytes += base_rows * (sizeof(uint64_t *) + once_words_memory(d->row_words));
    if (d->bit_slice) {
        uint64_t groups = once_dbf_groups_for((uint32_t)rows);
        if (groups < d->slice_groups)
            groups = d->slice_groups;
        bytes += once_words_memory(groups * d->cells);
    }
    return bytes;
}

/* Would once_bytes stay within the cap with `rows` rows (the row table grown to hold
 * them) and `base_rows` exported rows? */
bool once_dbf_within_cap(const dbf_filter *d, uint64_t rows, uint64_t base_rows)
{
    uint64_t room = rows_room_for(d, (uint32_t)rows);
    return once_fits_cap(once_dbf_memory_for(d, room, rows, base_rows), d->base.metadata_len,
                         d->max_bytes);
}

static uint64_t dbf_memory(const once_filter *f)
{
    const dbf_filter *d = CDBF(f);
    return once_dbf_memory_for(d, d->rows_room, d->rows, d->has_base ? d->base_rows : 0);
}

static uint64_t dbf_memory_cap(const once_filter *f)
{
    return CDBF(f)->max_bytes;
}

static void dbf_set_memory_cap(once_filter *f, uint64_t cap)
{
    DBF(f)->max_bytes = once_cap_or_default(cap);
}

/* A change advances the version and stamps the row.  The version stops at
 * DBF_MAX_VERSION instead of wrapping: a wrapped version would stamp rows below older
 * stamps, a state the loader rightly refuses (a row cannot change after the filter's
 * last change).  Counting one change a nanosecond takes 146 years to get there, so only
 * a file written with a version near it saturates; such a filter keeps working, and
 * only incremental exports from a saturated version are refused (see export). */
static void touch(dbf_filter *d, uint32_t r)
{
    if (d->version < DBF_MAX_VERSION)
        d->version++;
    d->row[r].changed = d->version;
    if (r < d->open_from)
        d->open_from = r;
}

/* Row counts add up in unions and merges; they stop where the loader's range does. */
static uint64_t count_sum(uint64_t a, uint64_t b)
{
    return a + b > ONCE_MAX_CELLS || a + b < a ? ONCE_MAX_CELLS : a + b;
}

static void positions(const dbf_filter *d, const once_hash *h, uint64_t *pos)
{
    once_probe p = once_probe_start(h, once_filter_probe(&d->base));
    for (uint32_t i = 0; i < d->hashes; i++)
        pos[i] = once_probe_next(&p, d->cells);
}

/* ------------------------------------------------------------ bit slices */

static inline uint64_t *slice_word(const dbf_filter *d, uint32_t r, uint64_t cell)
{
    return &d->slices[(uint64_t)(r >> 6) * d->cells + cell];
}

/* The index grown to hold `rows` rows, a copy not yet in place (*grown NULL when it
 * need not grow); false on allocation failure.  Growing in two steps lets a caller
 * allocate everything before it changes anything. */
static bool slices_prepare(const dbf_filter *d, uint32_t rows, uint64_t **grown)
{
    *grown = NULL;
    uint32_t groups = once_dbf_groups_for(rows);
    if (!d->bit_slice || groups <= d->slice_groups)
        return true;
    *grown = once_words_alloc((uint64_t)groups * d->cells);
    if (*grown == NULL)
        return false;
    if (d->slices != NULL)
        memcpy(*grown, d->slices, (size_t)((uint64_t)d->slice_groups * d->cells * 8));
    return true;
}

static void slices_commit(dbf_filter *d, uint64_t *grown, uint32_t rows)
{
    if (grown == NULL)
        return;
    once_words_free(d->slices);
    d->slices = grown;
    d->slice_groups = once_dbf_groups_for(rows);
}

static void slice_clear_row(dbf_filter *d, uint32_t r)
{
    uint64_t bit = UINT64_C(1) << (r & 63);
    for (uint64_t j = 0; j < d->cells; j++)
        *slice_word(d, r, j) &= ~bit;
}

/* Index bits of row r from its counters. */
void once_dbf_slice_rebuild_row(dbf_filter *d, uint32_t r)
{
    const uint64_t *a = row_array(&d->row[r]);
    uint64_t bit = UINT64_C(1) << (r & 63);
    slice_clear_row(d, r);
    for (uint64_t w = 0; w < d->row_words; w++) {
        uint64_t x = once_nibbles_nonzero(a[w]);
        while (x) {
            uint64_t j = w * 16 + (uint64_t)__builtin_ctzll(x) / 4;
            *slice_word(d, r, j) |= bit;
            x &= x - 1;
        }
    }
}

/* Row `from`'s index bits move to row `to`; `from`'s become zero. */
static void slice_move_row(dbf_filter *d, uint32_t from, uint32_t to)
{
    uint64_t fbit = UINT64_C(1) << (from & 63), tbit = UINT64_C(1) << (to & 63);
    for (uint64_t j = 0; j < d->cells; j++) {
        uint64_t *fw = slice_word(d, from, j), *tw = slice_word(d, to, j);
        bool set = (*fw & fbit) != 0;
        *fw &= ~fbit;
        *tw = set ? *tw | tbit : *tw & ~tbit;
    }
}

/* ------------------------------------------------------------------ rows */

/* `cells`: the key's cells (positions) if the caller has them, else NULL. */
static uint32_t matching_rows(const dbf_filter *d, const once_hash *h, const uint64_t *cells,
                              uint32_t limit, uint32_t *first)
{
    uint32_t found = 0;
    if (d->bit_slice) {
        uint64_t computed[ONCE_MAX_HASHES];
        const uint64_t *pos = cells;
        if (pos == NULL) {
            positions(d, h, computed);
            pos = computed;
        }
        for (uint32_t g = 0; g < once_dbf_groups_for(d->rows); g++) {
            const uint64_t *s = d->slices + (uint64_t)g * d->cells;
            uint64_t acc = ~UINT64_C(0);
            for (uint32_t i = 0; i < d->hashes && acc; i++)
                acc &= s[pos[i]];
            while (acc) {
                if (found++ == 0)
                    *first = g * 64 + (uint32_t)__builtin_ctzll(acc);
                if (found >= limit)
                    return found;
                acc &= acc - 1;
            }
        }
        return found;
    }
    for (uint32_t r = 0; r < d->rows; r++) {
        if (cells != NULL ? once_counting_holds_cells(d->row[r].counters, cells)
                          : once_counting_ops.query(d->row[r].counters, h, 0)) {
            if (found++ == 0)
                *first = r;
            if (found >= limit)
                return found;
        }
    }
    return found;
}

static bool dbf_query(const once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)now_ms;
    uint32_t first = 0;
    return matching_rows(CDBF(f), h, NULL, 1, &first) != 0;
}

/* A row places keys with its DBF's probe (dbf_set_format gives the rows of a loaded
 * DBF the probe of its file). */
once_status once_dbf_row_make(const dbf_filter *d, once_filter **out)
{
    once_status st = once_counting_new(out, d->cells, d->hashes);
    if (st == ONCE_OK)
        (*out)->format = d->base.format;
    return st;
}

static void dbf_set_format(once_filter *f)
{
    dbf_filter *d = DBF(f);
    for (uint32_t r = 0; r < d->rows; r++)
        d->row[r].counters->format = f->format;
}

static bool rows_reserve(dbf_filter *d, uint32_t rows)
{
    return once_table_reserve((void **)&d->row, &d->rows_room, rows, sizeof *d->row, 4,
                              DBF_MAX_ROWS);
}

/* Append an empty row, within the cap (ONCE_ERR_FULL) and limits; nothing changes on
 * failure. */
static once_status append_row(dbf_filter *d)
{
    if (d->rows >= DBF_MAX_ROWS || (uint64_t)(d->rows + 1) * d->cells > ONCE_MAX_CELLS ||
        !once_dbf_within_cap(d, d->rows + 1, d->has_base ? d->base_rows : 0))
        return ONCE_ERR_FULL;
    /* Everything allocated before anything changes: the table's growth last, as it is
     * the one allocation that cannot be taken back. */
    once_filter *counters = NULL;
    once_status st = once_dbf_row_make(d, &counters);
    if (st != ONCE_OK)
        return st;
    uint64_t *slices = NULL;
    if (!slices_prepare(d, d->rows + 1, &slices) || !rows_reserve(d, d->rows + 1)) {
        once_words_free(slices);
        once_counting_ops.destroy(counters);
        return ONCE_ERR_NOMEM;
    }
    slices_commit(d, slices, d->rows + 1);
    d->row[d->rows].counters = counters;
    d->row[d->rows].count = 0;
    d->rows++;
    touch(d, d->rows - 1);
    return ONCE_OK;
}

/* Remove row r: the last row moves into its place. */
static void drop_row(dbf_filter *d, uint32_t r)
{
    uint32_t last = d->rows - 1;
    once_counting_ops.destroy(d->row[r].counters);
    if (r != last) {
        d->row[r] = d->row[last];
        if (d->bit_slice)
            slice_move_row(d, last, r);
        touch(d, r);
    } else if (d->bit_slice) {
        slice_clear_row(d, last);
    }
    d->rows--;
}

/* Row j's keys join row i (counters add, saturating) and row j goes. */
static void absorb_row(dbf_filter *d, uint32_t i, uint32_t j)
{
    once_counting_ops.combine(d->row[i].counters, d->row[j].counters, ONCE_COMBINE_UNION);
    d->row[i].count = count_sum(d->row[i].count, d->row[j].count);
    if (d->bit_slice)
        once_dbf_slice_rebuild_row(d, i);
    touch(d, i);
    drop_row(d, j);
}

/* Merge() for one row that just shrank: drop it if empty, else join it with the first
 * row it fits with. */
static void merge_after_delete(dbf_filter *d, uint32_t r)
{
    if (d->rows < 2 || d->row[r].count > d->row_capacity)
        return;
    if (d->row[r].count == 0) {
        drop_row(d, r);
        return;
    }
    for (uint32_t o = 0; o < d->rows; o++) {
        if (o != r && d->row[o].count <= d->row_capacity - d->row[r].count) {
            absorb_row(d, o < r ? o : r, o < r ? r : o);
            return;
        }
    }
}

/* Merge() over every pair, for states that may hold several fitting pairs. */
static void merge_all(dbf_filter *d)
{
    bool merged = true;
    while (merged && d->rows > 1) {
        merged = false;
        for (uint32_t i = 0; i < d->rows && !merged; i++) {
            if (d->row[i].count == 0) {
                drop_row(d, i);
                merged = true;
                break;
            }
            for (uint32_t j = i + 1; j < d->rows; j++) {
                if (d->row[i].count <= d->row_capacity &&
                    d->row[j].count <= d->row_capacity - d->row[i].count) {
                    absorb_row(d, i, j);
                    merged = true;
                    break;
                }
            }
        }
    }
}

/* GetActiveStandardBF(): the first row with nr < c, or rows if none.  A function of
 * the rows alone, so a loaded filter or a replica picks the same row; the scan starts
 * at open_from, below which every row is full (with all rows full but the last, a scan
 * from row 0 cost an insertion more than its counters did at a hundred rows). */
static uint32_t active_row(const dbf_filter *d)
{
    for (uint32_t r = d->open_from; r < d->rows; r++)
        if (d->row[r].count < d->row_capacity)
            return r;
    return d->rows;
}

/* Insert the key whose cells are `pos` into row r, the active row (active_row; a new
 * row when r = rows). */
static once_status insert_at(dbf_filter *d, const uint64_t *pos, uint32_t r)
{
    if (r == d->rows) {
        once_status st = append_row(d);
        if (st != ONCE_OK)
            return st;
    }
    d->open_from = r; /* the rows below r were full: r was the first that was not */
    dbf_row *row = &d->row[r];
    once_counting_add_cells(row->counters, pos);
    if (d->bit_slice) {
        uint64_t *group = slice_word(d, r, 0); /* once: the stores could alias d's fields */
        for (uint32_t i = 0; i < d->hashes; i++)
            group[pos[i]] |= UINT64_C(1) << (r & 63);
    }
    row->count++;
    touch(d, r);
    return ONCE_OK;
}

static once_status insert(dbf_filter *d, const once_hash *h)
{
    uint64_t pos[ONCE_MAX_HASHES];
    positions(d, h, pos);
    return insert_at(d, pos, active_row(d));
}

static once_status dbf_add(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    dbf_filter *d = DBF(f);
    if (d->query_first && dbf_query(f, h, now_ms))
        return ONCE_OK;
    return insert(d, h);
}

/*
 * The key's cells and the active row are found once, for the query, the requests and
 * the insertion.  The lines the insertion would write (the active row's counters and,
 * with bit slices, its slice words; none when it would open a row) are requested
 * before the query reads any: a new key then waits for one round of misses, not the
 * query's and then the insertion's.
 */
static once_status dbf_test_and_add(once_filter *f, const once_hash *h, uint64_t now_ms,
                                    bool *seen)
{
    (void)now_ms;
    dbf_filter *d = DBF(f);
    uint64_t pos[ONCE_MAX_HASHES];
    positions(d, h, pos);
    uint32_t r = active_row(d);
    if (r < d->rows) {
        const uint64_t *counters = row_array(&d->row[r]);
        for (uint32_t i = 0; i < d->hashes; i++) {
            once_prefetch_write(&counters[pos[i] >> 4]);
            if (d->bit_slice)
                once_prefetch_write(slice_word(d, r, pos[i]));
        }
    }
    uint32_t first = 0;
    *seen = matching_rows(d, h, pos, 1, &first) != 0;
    return *seen ? ONCE_OK : insert_at(d, pos, r);
}

static once_status dbf_remove(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)now_ms;
    dbf_filter *d = DBF(f);
    if (d->query_first)
        return ONCE_ERR_UNSUPPORTED; /* see query_before_insert above */
    uint32_t r = 0;
    uint32_t found = matching_rows(d, h, NULL, 2, &r);
    if (found == 0)
        return ONCE_ERR_NOT_PRESENT;
    if (found > 1)
        return ONCE_ERR_UNSUPPORTED; /* the multiple-address rule */
    dbf_row *row = &d->row[r];
    once_status st = once_counting_ops.remove(row->counters, h, 0);
    if (st != ONCE_OK)
        return st;
    if (d->bit_slice) {
        uint64_t pos[ONCE_MAX_HASHES];
        positions(d, h, pos);
        for (uint32_t i = 0; i < d->hashes; i++)
            if (once_counting_counter(row->counters, pos[i]) == 0)
                *slice_word(d, r, pos[i]) &= ~(UINT64_C(1) << (r & 63));
    }
    if (row->count > 0)
        row->count--;
    touch(d, r);
    merge_after_delete(d, r);
    return ONCE_OK;
}

/* ------------------------------------------------------------------ batch */

/*
 * Batches run once_batch_loop (core/batch_loop.h): a key's cells are computed when
 * its lines are requested and kept for its turn.  They are every row's, so a row
 * opened in between leaves them right (only the request was for the wrong row).  A
 * query requests what it reads first (the first group's index words, or the newest
 * row's counters); an insertion the lines it writes, as the one-key test-and-add does.
 */
typedef struct dbf_record {
    once_hash h;
    uint64_t pos[ONCE_MAX_HASHES];
} dbf_record;

static inline __attribute__((always_inline)) void
dbf_batch_prepare(const void *ctx, void *record, const once_hash *h, once_batch_op op)
{
    const dbf_filter *d = ctx;
    dbf_record *r = record;
    r->h = *h;
    positions(d, h, r->pos);
    uint32_t active = op == ONCE_OP_QUERY ? d->rows : active_row(d);
    for (uint32_t i = 0; i < d->hashes; i++) {
        if (active < d->rows) {
            once_prefetch_write(&row_array(&d->row[active])[r->pos[i] >> 4]);
            if (d->bit_slice)
                once_prefetch_write(slice_word(d, active, r->pos[i]));
        } else if (d->bit_slice) {
            once_prefetch_read(slice_word(d, 0, r->pos[i]));
        } else {
            once_prefetch_read(&row_array(&d->row[d->rows - 1])[r->pos[i] >> 4]);
        }
    }
}

/* The one-key operations (dbf_query, dbf_add, dbf_test_and_add) from the key's cells. */
static inline __attribute__((always_inline)) once_status
dbf_batch_step(const void *ctx, void *record, uint64_t now_ms, once_batch_op op, bool *answer)
{
    (void)now_ms;
    dbf_filter *d = (dbf_filter *)ctx; /* the batch's own, writable filter */
    const dbf_record *r = record;
    uint32_t first = 0;
    if (op == ONCE_OP_ADD && !d->query_first)
        return insert_at(d, r->pos, active_row(d));
    bool seen = matching_rows(d, &r->h, r->pos, 1, &first) != 0;
    if (op != ONCE_OP_ADD)
        *answer = seen;
    return seen || op == ONCE_OP_QUERY ? ONCE_OK : insert_at(d, r->pos, active_row(d));
}

ONCE_BATCH_LOOP_ENTRY(dbf_batch, dbf_record, ONCE_LINES_IN_FLIGHT / CDBF(f)->hashes,
                      dbf_batch_prepare, dbf_batch_step)

void once_dbf_free_base(dbf_filter *d)
{
    if (d->base_words != NULL)
        for (uint32_t r = 0; r < d->base_rows; r++)
            once_words_free(d->base_words[r]);
    once_free_memory(d->base_words);
    d->base_words = NULL;
    d->base_rows = 0;
    d->has_base = false;
}

static void dbf_destroy(once_filter *f)
{
    dbf_filter *d = DBF(f);
    for (uint32_t r = 0; r < d->rows; r++)
        once_counting_ops.destroy(d->row[r].counters);
    once_free_memory(d->row);
    once_words_free(d->slices);
    once_dbf_free_base(d);
    once_free_memory(d);
}

static void dbf_clear(once_filter *f)
{
    dbf_filter *d = DBF(f);
    while (d->rows > 1)
        drop_row(d, d->rows - 1);
    once_counting_ops.clear(d->row[0].counters);
    d->row[0].count = 0;
    if (d->bit_slice)
        memset(d->slices, 0, (size_t)((uint64_t)d->slice_groups * d->cells * 8));
    touch(d, 0);
}

static bool dbf_same_geometry(const once_filter *a, const once_filter *b)
{
    return CDBF(a)->cells == CDBF(b)->cells && CDBF(a)->hashes == CDBF(b)->hashes &&
           CDBF(a)->row_capacity == CDBF(b)->row_capacity;
}

/* ---------------------------------------------------------- union, meet */

/* Append copies of src's rows (Definition 3), all or nothing, then merge. */
static once_status append_rows(dbf_filter *d, const dbf_filter *s)
{
    uint32_t n = s->rows, before = d->rows;
    if ((uint64_t)before + n > DBF_MAX_ROWS ||
        ((uint64_t)before + n) * d->cells > ONCE_MAX_CELLS ||
        !once_dbf_within_cap(d, (uint64_t)before + n, d->has_base ? d->base_rows : 0))
        return ONCE_ERR_FULL;
    once_filter **copies = once_calloc(n, sizeof *copies);
    if (copies == NULL)
        return ONCE_ERR_NOMEM;
    once_status st = ONCE_OK;
    for (uint32_t i = 0; i < n && st == ONCE_OK; i++) {
        st = once_dbf_row_make(d, &copies[i]);
        if (st == ONCE_OK)
            memcpy(ARRAY(copies[i])->array, row_array(&s->row[i]), (size_t)(d->row_words * 8));
    }
    uint64_t *slices = NULL;
    if (st == ONCE_OK && (!slices_prepare(d, before + n, &slices) || !rows_reserve(d, before + n)))
        st = ONCE_ERR_NOMEM;
    if (st != ONCE_OK) {
        once_words_free(slices);
        for (uint32_t i = 0; i < n; i++)
            if (copies[i] != NULL)
                once_counting_ops.destroy(copies[i]);
        once_free_memory(copies);
        return st;
    }
    slices_commit(d, slices, before + n);
    for (uint32_t i = 0; i < n; i++) {
        d->row[before + i].counters = copies[i];
        d->row[before + i].count = s->row[i].count;
        d->rows++;
        if (d->bit_slice)
            once_dbf_slice_rebuild_row(d, before + i);
        touch(d, before + i);
    }
    once_free_memory(copies);
    merge_all(d);
    return ONCE_OK;
}

/* dst keeps its rows but only the counters some row of src also sets: a key of both
 * sets has all its counters set in one row of each, so it stays present. */
static void intersect_rows(dbf_filter *d, const dbf_filter *s)
{
    for (uint64_t w = 0; w < d->row_words; w++) {
        uint64_t occupied = 0;
        for (uint32_t i = 0; i < s->rows; i++) {
            occupied |= once_nibbles_nonzero(row_array(&s->row[i])[w]);
        }
        uint64_t keep = occupied * 15; /* each 1 nibble becomes 0xF, without carries */
        for (uint32_t r = 0; r < d->rows; r++)
            row_array(&d->row[r])[w] &= keep;
    }
    for (uint32_t r = 0; r < d->rows; r++) {
        if (d->bit_slice)
            once_dbf_slice_rebuild_row(d, r);
        touch(d, r);
    }
}

static once_status dbf_combine(once_filter *dst, const once_filter *src, once_combine_op op)
{
    dbf_filter *d = DBF(dst);
    const dbf_filter *s = CDBF(src);
    if (op == ONCE_COMBINE_INTERSECT) {
        intersect_rows(d, s);
        return ONCE_OK;
    }
    return append_rows(d, s);
}

/* ------------------------------------------------------------- stats */

static void dbf_stats(const once_filter *f, once_stats *st)
{
    const dbf_filter *d = CDBF(f);
    double absent = 1.0;
    uint64_t set = 0, items = 0;
    for (uint32_t r = 0; r < d->rows; r++) {
        set += once_array_cells_set(d->row[r].counters);
        items += d->row[r].count;
        absent *= 1.0 - once_fpr_standard(d->cells, d->hashes, d->row[r].count);
    }
    st->bits = d->cells * d->rows;
    st->bits_set = set;
    st->items = items;
    st->hashes = d->hashes;
    st->filters = d->rows;
    st->fpr_estimate = 1.0 - absent;
    st->design_fpr = once_fpr_standard(d->cells, d->hashes, d->row_capacity);
}

/*
 * Distinct keys (paper 002, Theorem 1 over each row's non-zero counters): a key lives
 * in the one row it was inserted into, so the count is the sum over rows (intervals by
 * the union bound, once_card_sum).  A key added again after its row filled goes
 * into another row and counts there too, unless query_before_insert keeps it out.
 */
static once_status dbf_row_cells(const void *ctx, uint32_t r, uint64_t *set, once_occupancy *o)
{
    return once_array_cells(((const dbf_filter *)ctx)->row[r].counters, set, o);
}

static once_status dbf_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                   once_cardinality *out)
{
    (void)now_ms;
    const dbf_filter *d = CDBF(f);
    return once_card_sum(d->rows, dbf_row_cells, d, confidence, out);
}

/* ------------------------------------------------------- construction */

typedef struct dbf_geometry {
    uint64_t cells, row_capacity, max_bytes;
    uint32_t hashes;
    bool query_first, bit_slice;
} dbf_geometry;

/* One empty row of a checked geometry; ONCE_ERR_TOO_LARGE past limits or the cap. */
static once_status dbf_new(once_filter **out, const dbf_geometry *g)
{
    if (g->cells == 0 || g->hashes == 0 || g->hashes > ONCE_MAX_HASHES ||
        g->row_capacity == 0 || g->max_bytes == 0)
        return ONCE_ERR_INVALID;
    if (g->cells > ONCE_MAX_CELLS || g->row_capacity > ONCE_MAX_CELLS)
        return ONCE_ERR_TOO_LARGE;
    dbf_filter *d = once_calloc(1, sizeof *d);
    if (d == NULL)
        return ONCE_ERR_NOMEM;
    once_filter_init(&d->base, &once_dbf_ops);
    d->cells = g->cells;
    d->hashes = g->hashes;
    d->row_capacity = g->row_capacity;
    d->row_words = once_words_for_bits(g->cells * 4);
    d->max_bytes = g->max_bytes;
    d->query_first = g->query_first;
    d->bit_slice = g->bit_slice;
    if (!once_dbf_within_cap(d, 1, 0)) {
        once_free_memory(d);
        return ONCE_ERR_TOO_LARGE;
    }
    once_status st = append_row(d);
    if (st != ONCE_OK) {
        dbf_destroy(&d->base);
        return st == ONCE_ERR_FULL ? ONCE_ERR_TOO_LARGE : st;
    }
    d->version = 0; /* a new DBF is the base every replica starts from */
    d->row[0].changed = 0;
    *out = &d->base;
    return ONCE_OK;
}

static once_status once_dbf_create(once_filter **out, const once_config *c)
{
    dbf_geometry g;
    memset(&g, 0, sizeof g);
    g.row_capacity = c->capacity;
    g.max_bytes = once_cap_or_default(c->max_bytes);
    g.query_first = c->query_before_insert;
    g.bit_slice = c->bit_slice;
    g.cells = c->bits;
    g.hashes = c->hashes;
    if (c->capacity == 0)
        return ONCE_ERR_INVALID;
    if (g.cells == 0) {
        if (g.hashes != 0)
            return ONCE_ERR_INVALID; /* a probe count alone says nothing of the size */
        once_status st = once_plan(ONCE_COUNTING, c->capacity, c->error, &g.cells, &g.hashes);
        if (st != ONCE_OK)
            return st;
    } else if (g.hashes == 0) {
        g.hashes = once_optimal_hashes(g.cells, c->capacity);
    }
    return dbf_new(out, &g);
}

/* ------------------------------------------------------- serialization */

enum {
    P_CELLS,
    P_HASHES,
    P_ROW_CAPACITY,
    P_FLAGS,
    P_MAX_BYTES,
    P_ROWS,
    P_VERSION,
    P_COUNT
};

static uint64_t dbf_params_size(const once_filter *f)
{
    (void)f;
    return P_COUNT * 8;
}

static uint64_t dbf_payload_size(const once_filter *f)
{
    return (uint64_t)CDBF(f)->rows * (2 + CDBF(f)->row_words) * 8;
}

static void dbf_save_params(const once_filter *f, once_writer *w)
{
    const dbf_filter *d = CDBF(f);
    uint64_t v[P_COUNT] = {
        [P_CELLS] = d->cells,
        [P_HASHES] = d->hashes,
        [P_ROW_CAPACITY] = d->row_capacity,
        [P_FLAGS] = (d->query_first ? DBF_FLAG_QUERY_FIRST : 0) |
                    (d->bit_slice ? DBF_FLAG_BIT_SLICE : 0),
        [P_MAX_BYTES] = d->max_bytes,
        [P_ROWS] = d->rows,
        [P_VERSION] = d->version,
    };
    for (int i = 0; i < P_COUNT; i++)
        once_writer_u64(w, v[i]);
}

/* Each row: nr, the version of its last change, its counter words. */
static void dbf_save_payload(const once_filter *f, once_writer *w)
{
    const dbf_filter *d = CDBF(f);
    for (uint32_t r = 0; r < d->rows; r++) {
        once_writer_u64(w, d->row[r].count);
        once_writer_u64(w, d->row[r].changed);
        once_writer_words(w, row_array(&d->row[r]), d->row_words);
    }
}

static once_status dbf_load(once_filter **out, const uint8_t *params, size_t params_len,
                            const uint8_t *payload, size_t payload_len)
{
    uint64_t v[P_COUNT];
    if (!once_read_params(params, params_len, v, P_COUNT))
        return ONCE_ERR_CORRUPT;
    if (v[P_CELLS] == 0 || v[P_CELLS] > ONCE_MAX_CELLS || v[P_HASHES] == 0 ||
        v[P_HASHES] > ONCE_MAX_HASHES || v[P_ROW_CAPACITY] == 0 ||
        v[P_ROW_CAPACITY] > ONCE_MAX_CELLS ||
        v[P_FLAGS] > (DBF_FLAG_QUERY_FIRST | DBF_FLAG_BIT_SLICE) || v[P_MAX_BYTES] == 0 ||
        v[P_ROWS] == 0 || v[P_ROWS] > DBF_MAX_ROWS || v[P_ROWS] * v[P_CELLS] > ONCE_MAX_CELLS ||
        v[P_VERSION] > DBF_MAX_VERSION)
        return ONCE_ERR_CORRUPT;
    uint64_t row_words = once_words_for_bits(v[P_CELLS] * 4);
    if (payload_len != v[P_ROWS] * (2 + row_words) * 8)
        return ONCE_ERR_CORRUPT;
    dbf_geometry g = {
        .cells = v[P_CELLS],
        .row_capacity = v[P_ROW_CAPACITY],
        .max_bytes = v[P_MAX_BYTES],
        .hashes = (uint32_t)v[P_HASHES],
        .query_first = (v[P_FLAGS] & DBF_FLAG_QUERY_FIRST) != 0,
        .bit_slice = (v[P_FLAGS] & DBF_FLAG_BIT_SLICE) != 0,
    };
    once_filter *f = NULL;
    once_status st = dbf_new(&f, &g);
    if (st != ONCE_OK)
        return st == ONCE_ERR_INVALID || st == ONCE_ERR_TOO_LARGE ? ONCE_ERR_CORRUPT : st;
    dbf_filter *d = DBF(f);
    if (!once_dbf_within_cap(d, v[P_ROWS], 0)) { /* a file we would not write */
        dbf_destroy(f);
        return ONCE_ERR_CORRUPT;
    }
    d->version = v[P_VERSION];
    for (uint32_t r = 0; r < v[P_ROWS]; r++) {
        if (r > 0 && (st = append_row(d)) != ONCE_OK) {
            dbf_destroy(f);
            return st == ONCE_ERR_FULL ? ONCE_ERR_CORRUPT : st;
        }
        const uint8_t *p = payload + (size_t)r * (2 + row_words) * 8;
        dbf_row *row = &d->row[r];
        row->count = once_le64_read(p);
        row->changed = once_le64_read(p + 8);
        once_words_from_le(row_array(row), p + 16, row_words);
        if (row->count > ONCE_MAX_CELLS || row->changed > v[P_VERSION] ||
            !once_words_tail_clear(row_array(row), row_words, d->cells * 4)) {
            dbf_destroy(f);
            return ONCE_ERR_CORRUPT;
        }
        if (d->bit_slice)
            once_dbf_slice_rebuild_row(d, r);
    }
    d->version = v[P_VERSION];
    *out = f;
    return ONCE_OK;
}

/* Room for `keys` insertions: in the rows not full, or in as many new rows as the cap
 * (and the rows' limit) allows. */
static bool dbf_can_take(const once_filter *f, uint64_t keys, uint64_t until_ms)
{
    (void)until_ms;
    const dbf_filter *d = CDBF(f);
    uint64_t room = 0;
    for (uint32_t r = d->open_from; r < d->rows && room < keys; r++)
        room += d->row[r].count < d->row_capacity ? d->row_capacity - d->row[r].count : 0;
    if (room >= keys)
        return true;
    uint64_t more = (keys - room + d->row_capacity - 1) / d->row_capacity;
    return more <= DBF_MAX_ROWS - d->rows && (d->rows + more) * d->cells <= ONCE_MAX_CELLS &&
           once_dbf_within_cap(d, d->rows + more, d->has_base ? d->base_rows : 0);
}

const once_filter_ops once_dbf_ops = {
    .type = ONCE_DBF,
    .set_format = dbf_set_format,
    .create = once_dbf_create,
    .explicit_geometry = once_bits_or_hashes_given,
    .destroy = dbf_destroy,
    .query = dbf_query,
    .add = dbf_add,
    .can_take = dbf_can_take,
    .test_and_add = dbf_test_and_add,
    .prefetch = NULL,
    .batch = dbf_batch,
    .remove = dbf_remove,
    .clear = dbf_clear,
    .same_geometry = dbf_same_geometry,
    .combine = dbf_combine,
    .stats = dbf_stats,
    .cardinality = dbf_cardinality,
    .memory = dbf_memory,
    .memory_cap = dbf_memory_cap,
    .set_memory_cap = dbf_set_memory_cap,
    .saved_params_size = dbf_params_size,
    .saved_payload_size = dbf_payload_size,
    .save_params = dbf_save_params,
    .save_payload = dbf_save_payload,
    .load = dbf_load,
};

/* ------------------------------------------------------- public helpers */

bool once_dbf_is_dbf(const once_filter *f)
{
    return f != NULL && f->ops == &once_dbf_ops;
}

once_status once_dbf_matching_rows(const once_filter *f, const void *key, size_t len,
                                   uint32_t *rows)
{
    if (f == NULL || rows == NULL || (key == NULL && len != 0))
        return ONCE_ERR_INVALID;
    if (!once_dbf_is_dbf(f))
        return ONCE_ERR_UNSUPPORTED;
    once_hash h = once_hash_key(key, len, f->seed);
    uint32_t first = 0;
    *rows = matching_rows(CDBF(f), &h, NULL, UINT32_MAX, &first);
    return ONCE_OK;
}

once_status once_dbf_merge(once_filter *f)
{
    if (f == NULL)
        return ONCE_ERR_INVALID;
    if (!once_dbf_is_dbf(f))
        return ONCE_ERR_UNSUPPORTED;
    merge_all(DBF(f));
    return ONCE_OK;
}

uint64_t once_dbf_version(const once_filter *f)
{
    return once_dbf_is_dbf(f) ? CDBF(f)->version : 0;
}
