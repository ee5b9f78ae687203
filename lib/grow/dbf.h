/*
 * grow/dbf.h - the Dynamic Bloom Filter's state, shared by its operations
 * (grow/dbf.c) and its delta format (grow/dbf_delta.c).
 */
#ifndef ONCE_GROW_DBF_H
#define ONCE_GROW_DBF_H

#include "static/array_filter.h"

#define DBF_MAX_VERSION (UINT64_C(1) << 62) /* see touch() */
#define DBF_FLAG_QUERY_FIRST 1u
#define DBF_FLAG_BIT_SLICE 2u

typedef struct dbf_row {
    once_filter *counters; /* a counting Bloom filter (static/counting.c) */
    uint64_t count;        /* nr: keys inserted into this row, minus deletes */
    uint64_t changed;      /* version of the row's last change */
} dbf_row;

typedef struct dbf_filter {
    once_filter base;
    uint64_t cells;        /* m counters per row */
    uint32_t hashes;       /* k */
    uint64_t row_capacity; /* c */
    uint64_t row_words;    /* 64-bit words of one row's counters */
    uint64_t max_bytes;
    bool query_first, bit_slice;
    uint32_t rows, rows_room;
    dbf_row *row;
    uint64_t *slices;       /* bit-slice index: slices[g * m + j], bit r = row 64g + r */
    uint32_t slice_groups;  /* groups of 64 rows the index has room for */
    /* Every row below it is full (nr >= c), so active_row's scan starts there: an
     * insertion raises it to the row it filled, touch() lowers it to any row changed,
     * and a replica's delta, which replaces rows without touch(), resets it. */
    uint32_t open_from;
    uint64_t version;
    /* The rows as last exported (incremental updates). */
    bool has_base;
    uint64_t base_version;
    uint32_t base_rows;
    uint64_t **base_words;
} dbf_filter;

#define DBF(f) ((dbf_filter *)(f))
#define CDBF(f) ((const dbf_filter *)(f))

static inline uint64_t *row_array(const dbf_row *r)
{
    return ARRAY(r->counters)->array;
}

/* Room for `rows` rows in groups of 64 (the bit-slice index's unit). */
uint32_t once_dbf_groups_for(uint32_t rows);
/* The structure's memory (once_bytes without the metadata) with a row table of `room`
 * entries, `rows` rows (<= room) and `base_rows` exported rows. */
uint64_t once_dbf_memory_for(const dbf_filter *d, uint64_t room, uint64_t rows,
                             uint64_t base_rows);
/* Would once_bytes stay within the cap with `rows` rows and `base_rows` exported rows? */
bool once_dbf_within_cap(const dbf_filter *d, uint64_t rows, uint64_t base_rows);
/* A new empty row of d's geometry. */
once_status once_dbf_row_make(const dbf_filter *d, once_filter **out);
/* Index bits of row r from its counters. */
void once_dbf_slice_rebuild_row(dbf_filter *d, uint32_t r);
/* Drop the copy of the rows as last exported. */
void once_dbf_free_base(dbf_filter *d);
bool once_dbf_is_dbf(const once_filter *f);

#endif /* ONCE_GROW_DBF_H */
