/*
 * grow/dbf_delta.c - the Dynamic Bloom Filter's incremental updates: export the rows
 * changed since a version, apply them to a replica (paper 003 sections 4.4 and 3.5.2).
 *
 * Every change advances `version` and stamps the rows it touches.  An export sends, for
 * each row stamped after the base version, the xor of its counters with the row as last
 * exported (the exporter keeps that copy; a new row is xor-ed with zeros), zstd-
 * compressed, and makes the current rows the new base.  The replica, at the base
 * version with the same rows, xors the rows in and takes the source's counts, version
 * and row count, so it ends up with the same rows in the same order and answers exactly
 * like the source.  A delta is checked like a saved filter (sizes before allocations, a
 * checksum, every field); its decompressed size follows from the header and must fit
 * the replica's cap, so a small hostile frame cannot make it allocate more than its cap
 * allows.
 */
#include "grow/dbf.h"
#include "core/limits.h"
#include "core/codec.h"

#include <string.h>

/* For ZSTD_customMem and the contexts built on it, which route zstd's working memory
 * through the library's allocator (core/alloc.c).  Exported by the shared libzstd too, and
 * unchanged since zstd 1.0. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

/* Delta format (all integers little-endian):
 *   0 magic "ODLT", 4 u32 format (the source's saved format: 2, or 1 for a DBF loaded
 *   from a format-1 file, whose rows place keys with the linear probe), 8 seed, 16 m,
 *   24 k, 32 c, 40 base version,
 *   48 new version, 56 rows at base, 64 rows now, 72 rows sent, 80 items,
 *   88 compressed length L, 96 zstd frame of L bytes, 96+L XXH3-64 of [0, 96+L).
 * The frame holds, for each row sent in increasing row order: row index, nr, the
 * version of the row's last change, and the row's counter words xor the base row. */
#define DELTA_ROW_HEADER 24
#define DELTA_HEADER 96
#define DELTA_ZSTD_LEVEL 3
static const uint8_t delta_magic[4] = {'O', 'D', 'L', 'T'};

static void *zstd_alloc(void *opaque, size_t size)
{
    (void)opaque;
    return once_malloc(size);
}

static void zstd_free(void *opaque, void *block)
{
    (void)opaque;
    once_free_memory(block);
}

static const ZSTD_customMem zstd_memory = {zstd_alloc, zstd_free, NULL};

once_status once_dbf_export_delta(once_filter *f, uint64_t since, void **delta, size_t *len)
{
    if (f == NULL || delta == NULL || len == NULL)
        return ONCE_ERR_INVALID;
    if (!once_dbf_is_dbf(f))
        return ONCE_ERR_UNSUPPORTED;
    dbf_filter *d = DBF(f);
    /* The base: a new DBF (one empty row) or the last export. */
    bool from_new = since == 0;
    if (!from_new && !(d->has_base && d->base_version == since))
        return ONCE_ERR_MISMATCH;
    /* Past a base at the saturated version, changes carry that same version and could
     * not be told from the base's rows: only a full save describes them. */
    if (!from_new && since == DBF_MAX_VERSION)
        return ONCE_ERR_MISMATCH;
    uint32_t base_rows = from_new ? 1 : d->base_rows;
    if (!once_dbf_within_cap(d, d->rows, d->rows))
        return ONCE_ERR_FULL;

    uint64_t row_bytes = d->row_words * 8;
    uint32_t sent = 0;
    for (uint32_t r = 0; r < d->rows; r++)
        sent += r >= base_rows || d->row[r].changed > since;
    uint64_t body_len = (uint64_t)sent * (DELTA_ROW_HEADER + row_bytes);
    uint8_t *body = once_malloc(body_len ? (size_t)body_len : 1);
    uint64_t **next_base = once_calloc(d->rows, sizeof *next_base);
    size_t bound = ZSTD_compressBound((size_t)body_len);
    uint8_t *out = once_malloc(DELTA_HEADER + bound + 8);
    ZSTD_CCtx *zstd = ZSTD_createCCtx_advanced(zstd_memory);
    bool ok = body != NULL && next_base != NULL && out != NULL && zstd != NULL;
    for (uint32_t r = 0; r < d->rows && ok; r++) {
        next_base[r] = once_words_alloc(d->row_words);
        ok = next_base[r] != NULL;
    }
    if (!ok) {
        if (next_base != NULL)
            for (uint32_t r = 0; r < d->rows; r++)
                once_words_free(next_base[r]);
        once_free_memory(next_base);
        once_free_memory(body);
        once_free_memory(out);
        ZSTD_freeCCtx(zstd);
        return ONCE_ERR_NOMEM;
    }

    uint8_t *p = body;
    for (uint32_t r = 0; r < d->rows; r++) {
        const uint64_t *now = row_array(&d->row[r]);
        memcpy(next_base[r], now, (size_t)row_bytes);
        if (!(r >= base_rows || d->row[r].changed > since))
            continue;
        const uint64_t *was = !from_new && r < base_rows ? d->base_words[r] : NULL;
        once_le_write(p, r, 8);
        once_le_write(p + 8, d->row[r].count, 8);
        once_le_write(p + 16, d->row[r].changed, 8);
        p += DELTA_ROW_HEADER;
        for (uint64_t w = 0; w < d->row_words; w++, p += 8)
            once_le_write(p, now[w] ^ (was ? was[w] : 0), 8);
    }
    size_t packed = ZSTD_compressCCtx(zstd, out + DELTA_HEADER, bound, body, (size_t)body_len,
                                      DELTA_ZSTD_LEVEL);
    once_free_memory(body);
    ZSTD_freeCCtx(zstd);
    if (ZSTD_isError(packed)) { /* into a buffer of the bound, only its memory can fail */
        for (uint32_t r = 0; r < d->rows; r++)
            once_words_free(next_base[r]);
        once_free_memory(next_base);
        once_free_memory(out);
        return ONCE_ERR_NOMEM;
    }
    memcpy(out, delta_magic, 4);
    once_le_write(out + 4, f->format, 4);
    uint64_t header[11] = {f->seed,   d->cells, d->hashes, d->row_capacity, since, d->version,
                           base_rows, d->rows,  sent,      f->items,        packed};
    for (int i = 0; i < 11; i++)
        once_le_write(out + 8 + 8 * i, header[i], 8);
    once_le_write(out + DELTA_HEADER + packed, XXH3_64bits(out, DELTA_HEADER + packed), 8);

    once_dbf_free_base(d);
    d->base_words = next_base;
    d->base_rows = d->rows;
    d->base_version = d->version;
    d->has_base = true;
    *delta = out;
    *len = DELTA_HEADER + packed + 8;
    return ONCE_OK;
}

once_status once_dbf_apply_delta(once_filter *f, const void *delta, size_t len)
{
    if (f == NULL || (delta == NULL && len != 0))
        return ONCE_ERR_INVALID;
    if (!once_dbf_is_dbf(f))
        return ONCE_ERR_UNSUPPORTED;
    dbf_filter *d = DBF(f);
    const uint8_t *b = delta;
    if (len < 4)
        return ONCE_ERR_TRUNCATED;
    if (memcmp(b, delta_magic, 4) != 0)
        return ONCE_ERR_BAD_MAGIC;
    if (len < DELTA_HEADER + 8)
        return ONCE_ERR_TRUNCATED;
    uint32_t format = once_le32_read(b + 4);
    if (!once_format_known(format))
        return ONCE_ERR_VERSION;
    uint64_t h[11];
    for (int i = 0; i < 11; i++)
        h[i] = once_le64_read(b + 8 + 8 * i);
    enum { SEED, CELLS, HASHES, CAPACITY, FROM, TO, OLD_ROWS, NEW_ROWS, SENT, ITEMS, PACKED };
    if (h[PACKED] > len - DELTA_HEADER - 8)
        return ONCE_ERR_TRUNCATED;
    if (h[PACKED] < len - DELTA_HEADER - 8)
        return ONCE_ERR_CORRUPT; /* bytes after the checksum */
    if (XXH3_64bits(b, len - 8) != once_le64_read(b + len - 8))
        return ONCE_ERR_CHECKSUM;
    if (h[SEED] != f->seed || h[CELLS] != d->cells || h[HASHES] != d->hashes ||
        h[CAPACITY] != d->row_capacity)
        return ONCE_ERR_MISMATCH;
    if (format != f->format) /* rows whose keys sit on other cells */
        return ONCE_ERR_PROBE_MISMATCH;
    if (h[TO] < h[FROM] || h[TO] > DBF_MAX_VERSION || h[NEW_ROWS] == 0 || h[NEW_ROWS] > DBF_MAX_ROWS ||
        h[NEW_ROWS] * d->cells > ONCE_MAX_CELLS || h[SENT] > h[NEW_ROWS] || h[OLD_ROWS] == 0)
        return ONCE_ERR_CORRUPT;
    if (h[FROM] != d->version || h[OLD_ROWS] != d->rows)
        return ONCE_ERR_MISMATCH;
    /* After: exactly NEW_ROWS rows in a table of as many, and no base copy. */
    if (once_dbf_memory_for(d, h[NEW_ROWS], h[NEW_ROWS], 0) + f->metadata_len > d->max_bytes)
        return ONCE_ERR_FULL;

    uint64_t row_bytes = d->row_words * 8;
    uint64_t body_len = h[SENT] * (DELTA_ROW_HEADER + row_bytes);
    const uint8_t *frame = b + DELTA_HEADER;
    size_t packed = (size_t)h[PACKED];
    if (ZSTD_getFrameContentSize(frame, packed) != body_len ||
        ZSTD_findFrameCompressedSize(frame, packed) != packed)
        return ONCE_ERR_CORRUPT;
    uint8_t *body = once_malloc(body_len ? (size_t)body_len : 1);
    ZSTD_DCtx *zstd = ZSTD_createDCtx_advanced(zstd_memory);
    if (body == NULL || zstd == NULL) {
        once_free_memory(body);
        ZSTD_freeDCtx(zstd);
        return ONCE_ERR_NOMEM;
    }
    size_t got = ZSTD_decompressDCtx(zstd, body, (size_t)body_len, frame, packed);
    ZSTD_freeDCtx(zstd);
    if (ZSTD_isError(got) || got != body_len) {
        once_free_memory(body);
        return ZSTD_isError(got) && ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation
                   ? ONCE_ERR_NOMEM
                   : ONCE_ERR_CORRUPT;
    }

    /* Build the new rows aside; the replica changes only once all are valid. */
    uint32_t new_rows = (uint32_t)h[NEW_ROWS];
    dbf_row *rows = once_calloc(new_rows, sizeof *rows);
    bool *fresh = once_calloc(new_rows, sizeof *fresh);
    once_status st = rows != NULL && fresh != NULL ? ONCE_OK : ONCE_ERR_NOMEM;
    const uint8_t *p = body;
    uint64_t next_index = 0;
    for (uint64_t i = 0; i < h[SENT] && st == ONCE_OK; i++, p += DELTA_ROW_HEADER + row_bytes) {
        uint64_t r = once_le64_read(p), count = once_le64_read(p + 8);
        uint64_t changed = once_le64_read(p + 16);
        if (r < next_index || r >= new_rows || count > ONCE_MAX_CELLS || changed > h[TO]) {
            st = ONCE_ERR_CORRUPT;
            break;
        }
        next_index = r + 1;
        if ((st = once_dbf_row_make(d, &rows[r].counters)) != ONCE_OK)
            break;
        fresh[r] = true;
        uint64_t *a = row_array(&rows[r]);
        if (r < d->rows)
            memcpy(a, row_array(&d->row[r]), (size_t)row_bytes);
        for (uint64_t w = 0; w < d->row_words; w++)
            a[w] ^= once_le64_read(p + DELTA_ROW_HEADER + 8 * w);
        rows[r].count = count;
        rows[r].changed = changed;
        if (!once_words_tail_clear(a, d->row_words, d->cells * 4))
            st = ONCE_ERR_CORRUPT;
    }
    for (uint32_t r = 0; r < new_rows && st == ONCE_OK; r++) {
        if (fresh[r])
            continue;
        if (r < d->rows) {
            rows[r] = d->row[r]; /* unchanged: taken over below */
        } else if ((st = once_dbf_row_make(d, &rows[r].counters)) == ONCE_OK) {
            fresh[r] = true; /* a new row the source left empty */
            rows[r].changed = h[TO];
        }
    }
    once_free_memory(body);
    uint64_t *slices = NULL;
    if (st == ONCE_OK && d->bit_slice) {
        uint32_t groups = once_dbf_groups_for(new_rows);
        if (groups < d->slice_groups)
            groups = d->slice_groups;
        slices = once_words_alloc((uint64_t)groups * d->cells);
        if (slices == NULL)
            st = ONCE_ERR_NOMEM;
    }
    if (st != ONCE_OK) {
        if (rows != NULL && fresh != NULL)
            for (uint32_t r = 0; r < new_rows; r++)
                if (fresh[r])
                    once_counting_ops.destroy(rows[r].counters);
        once_free_memory(rows);
        once_free_memory(fresh);
        return st;
    }

    /* Commit: rows the delta replaced or dropped go. */
    for (uint32_t r = 0; r < d->rows; r++)
        if (r >= new_rows || fresh[r])
            once_counting_ops.destroy(d->row[r].counters);
    once_free_memory(d->row);
    once_free_memory(fresh);
    d->row = rows;
    d->rows = d->rows_room = new_rows;
    d->open_from = 0; /* rows replaced without touch() */
    if (d->bit_slice) {
        uint32_t groups = once_dbf_groups_for(new_rows);
        d->slice_groups = groups > d->slice_groups ? groups : d->slice_groups;
        once_words_free(d->slices);
        d->slices = slices;
        for (uint32_t r = 0; r < new_rows; r++)
            once_dbf_slice_rebuild_row(d, r);
    }
    d->version = h[TO];
    once_dbf_free_base(d); /* the replica's own exports start again from a new DBF */
    f->items = h[ITEMS];
    return ONCE_OK;
}
