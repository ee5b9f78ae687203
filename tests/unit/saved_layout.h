/*
 * saved_layout.h - the saved format's layout as docs/FORMAT.md specifies it, for the
 * tests that read or edit saved files as another implementation (or an attacker)
 * would.  The tests describe the layout here once, from the specification, never by
 * reading the library's own enums: a library that writes otherwise fails them.
 */
#ifndef ONCE_TESTS_SAVED_LAYOUT_H
#define ONCE_TESTS_SAVED_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* The stream's header (FORMAT.md section 2): field offsets, and where a structure's
 * parameters begin. */
enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 4,
    OFF_TYPE = 6,
    OFF_SEED = 8,
    OFF_ITEMS = 16,
    OFF_CAPACITY = 24,
    OFF_ERROR = 32,
    OFF_PARAMS_LEN = 40,
    OFF_FLAGS = 44,
    HEADER = 48,
};

/* The byte offset of a file's payload length, after its parameters (no metadata);
 * the payload follows it. */
static inline size_t saved_payload_len_offset(const uint8_t *file)
{
    uint32_t params = (uint32_t)file[OFF_PARAMS_LEN] | (uint32_t)file[OFF_PARAMS_LEN + 1] << 8 |
                      (uint32_t)file[OFF_PARAMS_LEN + 2] << 16 |
                      (uint32_t)file[OFF_PARAMS_LEN + 3] << 24;
    return HEADER + (size_t)params;
}

/* The array layouts: standard, partitioned, blocked, counting (section 6.1). */
enum {
    ARRAY_OFF_CELLS = HEADER, /* m */
    ARRAY_OFF_HASHES = HEADER + 8,
    ARRAY_OFF_PAYLOAD_LEN = HEADER + 16,
    ARRAY_OFF_PAYLOAD = HEADER + 24,
};

/* The timer filter's parameter words (section 6.4). */
enum {
    TIMER_P_WIDTH = 0,
    TIMER_P_HASHES,
    TIMER_P_CELLS,
    TIMER_P_SPAN,
    TIMER_P_TICK,
    TIMER_P_EQUAL,
    TIMER_P_POLICY,
    TIMER_P_DYNAMIC,
    TIMER_P_PLAN_CAPACITY,
    TIMER_P_SUB_ERROR,
    TIMER_P_THRESHOLD,
    TIMER_P_MAX_BYTES,
    TIMER_P_LATEST,
    TIMER_P_CURSOR,
    TIMER_P_CREDIT,
    TIMER_P_FILTERS,
    TIMER_P_STARTED,
    TIMER_P_MAX_TIME_JUMP,
    TIMER_P_OPENED, /* budget growth only */
    TIMER_P_COUNT,
};

/* The scalable filter (section 6.5): a 4-word head, then per sub-filter a record and
 * the sub-filter's own (blocked) parameters. */
enum {
    SCALABLE_OFF_EXPANSION = HEADER,
    SCALABLE_OFF_TIGHTENING = HEADER + 8,
    SCALABLE_OFF_MAX_BYTES = HEADER + 16,
    SCALABLE_OFF_FILTERS = HEADER + 24,
    SCALABLE_OFF_SUBS = HEADER + 32,
    SCALABLE_SUB_WORDS = 7, /* the record's 5 words, then the blocked layout's cells, k */
    SCALABLE_S_CAPACITY = 0,
    SCALABLE_S_ERROR = 1,
    SCALABLE_S_ITEMS = 2,
    SCALABLE_S_PARAMS_BYTES = 3,
    SCALABLE_S_PAYLOAD_BYTES = 4,
    SCALABLE_S_CELLS = 5,
    SCALABLE_S_HASHES = 6,
};

/* The block-partitioned filters, BPBF and D-BBF (section 6.7): parameter words, and
 * the payload's start (the batches' counts, then their words). */
enum {
    BPBF_P_BLOCK_LENGTH = 0,
    BPBF_P_BLOCKS,
    BPBF_P_BLOCK_HASHES,
    BPBF_P_THRESHOLD,
    BPBF_P_MAX_BYTES,
    BPBF_P_BATCHES,
    BPBF_P_COUNT,
    BPBF_OFF_PAYLOAD = HEADER + 8 * BPBF_P_COUNT + 8,
};

/* The tagged time window's parameter words (section 6.9): the filter's, then each
 * table's. */
enum {
    TAGGED_P_SPAN = 0,
    TAGGED_P_TICK,
    TAGGED_P_POLICY,
    TAGGED_P_ERROR,
    TAGGED_P_PLAN_BUCKETS,
    TAGGED_P_MAX_BYTES,
    TAGGED_P_LATEST,
    TAGGED_P_STARTED,
    TAGGED_P_MAX_TIME_JUMP,
    TAGGED_P_TABLES,
    TAGGED_P_COUNT
};
enum { TAGGED_T_BUCKETS = 0, TAGGED_T_FP_BITS, TAGGED_T_CURSOR, TAGGED_T_OPENED, TAGGED_T_COUNT };
/* With a lag (version 2 of the params): two words after TAGGED_P_COUNT, then the tables. */
enum { TAGGED_L_LAG = TAGGED_P_COUNT, TAGGED_L_TAG_BITS, TAGGED_L_END };

#endif /* ONCE_TESTS_SAVED_LAYOUT_H */
