/*
 * golden/golden.h - the keys and times of the saved files in tests/golden/vN.
 *
 * For each saved format N, vN/ holds a filter of every configuration of
 * tests/every_structure.h (as it was when the files were made; a space in its NAME is a
 * '-' in the file name) saved by the library that wrote format N, with the answers that
 * library gave (generate.c made them; v1 at 57e552f, the last commit that wrote format
 * 1).  A structure added later gets its files in the format of its day when it is added
 * (the tagged time window's in v2), made by the same schedule: generate.c rewrites the
 * older files of that format byte for byte, which is checked before the new ones are
 * committed.  test_golden.c replays the same schedule on them with the library under test.
 * One exception, a fix: the library that made v2's tagged files did not move the clock
 * to the time of a new key written within the clock's tick, so their files hold an
 * older clock than the keys they took (the same answers).  Their NAME.once are kept as
 * made; their NAME.more.once were remade when that was fixed, by loading NAME.once and
 * taking the GOLDEN_MORE keys (they differ from the first in the clock alone), and
 * generate.c now writes the latest time in both.
 * Both read the schedule from here, so it is written once:
 *   1. a filter takes GOLDEN_STORED keys 's' i at time i * GOLDEN_STEP_MS by
 *      test-and-add; a structure that deletes then removes every seventh of them;
 *   2. it is saved as NAME.once;
 *   3. the GOLDEN_STORED keys 's' and the GOLDEN_ABSENT keys 'a' are queried at time
 *      GOLDEN_STORED * GOLDEN_STEP_MS: the answers are NAME's "query" line of
 *      answers.txt;
 *   4. NAME.once is loaded, takes the GOLDEN_MORE keys 'c' i by test-and-add at time
 *      (GOLDEN_STORED + i) * GOLDEN_STEP_MS (their answers: the "more" line; 'F' for a
 *      key a capped filter refused), and is saved as NAME.more.once.
 * Keys are binary (a NUL second byte) and 6 to 29 bytes long, so both of the hash's
 * paths (keys of up to 16 bytes in line, longer ones) are taken.
 *
 * The tagged window's lag (version 2 of its params, 6-bit tags) came within format 2:
 * its files, tagged-lag.once and .more.once, were made by generate.c when it came, and
 * every older file of v2 was made again, byte for byte the same, before they were added.
 *
 * Sharded filters (golden_shardeds below: a configuration in P shards) came with
 * format 2 and have their files there, made by the same schedule.
 *
 * Slices (ONCE_SLICE, golden_slices below) take positions, not keys: key i stands for
 * GOLDEN_SLICE_PROBES positions made from its bytes here (golden_slice_positions), so
 * their files depend on no hash of the library; a test-and-add is a TEST_AND_SET and a
 * query a TEST, at the same times.
 *
 * digests.txt: the digest (once_digest_with_seed: XXH3-128) of GOLDEN_DIGEST_KEYS keys
 * 'd' i, 0 to 255 bytes long, under the seeds of golden_digest_seed, as
 * "SEED LENGTH LO HI" in hex.
 */
#ifndef ONCE_TESTS_GOLDEN_H
#define ONCE_TESTS_GOLDEN_H

#include "once_sliced.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GOLDEN_STORED 150u
#define GOLDEN_ABSENT 2000u
#define GOLDEN_MORE 100u
#define GOLDEN_STEP_MS 10u
#define GOLDEN_MAX_KEY 32u

static inline size_t golden_key(char set, uint32_t i, uint8_t out[GOLDEN_MAX_KEY])
{
    size_t len = 6 + i % 24;
    out[0] = (uint8_t)set;
    out[1] = 0;
    for (int b = 0; b < 4; b++)
        out[2 + b] = (uint8_t)(i >> (8 * b));
    for (size_t j = 6; j < len; j++)
        out[j] = (uint8_t)(i * 31 + j);
    return len;
}

/* Digest vectors: every length from 0 to 255 (XXH3 takes other paths at 16, 128 and
 * 240 bytes), under three seeds. */
#define GOLDEN_DIGEST_KEYS 256u
#define GOLDEN_DIGEST_SEEDS 3u
#define GOLDEN_DIGEST_MAX_KEY 256u

static inline uint64_t golden_digest_seed(uint32_t s)
{
    static const uint64_t seeds[GOLDEN_DIGEST_SEEDS] = {0, 1, UINT64_C(0x9E3779B97F4A7C15)};
    return seeds[s];
}

static inline size_t golden_digest_key(uint32_t i, uint8_t out[GOLDEN_DIGEST_MAX_KEY])
{
    for (uint32_t j = 0; j < i; j++)
        out[j] = (uint8_t)(j * 131 + i * 7 + 1);
    return i;
}

/* ------------------------------------------------------------ sharded */

/* Sharded filters (once_create_sharded): a configuration of every_structure, by its
 * name, in `shards` shards; files NAME.once, added with format 2. */
typedef struct golden_sharded {
    const char *name;
    const char *of;
    uint32_t shards;
} golden_sharded;

static const golden_sharded golden_shardeds[] = {
    {"sharded-blocked", "blocked", 4},
    {"sharded-scalable", "scalable", 3},
    {"sharded-tagged", "tagged", 4},
    {"sharded-tagged-refresh", "tagged refresh", 2},
    {"sharded-timer", "timer", 2},
};
#define GOLDEN_SHARDEDS (sizeof golden_shardeds / sizeof golden_shardeds[0])

/* ------------------------------------------------------------ slices */

#define GOLDEN_SLICE_PROBES 4u

typedef struct golden_slice {
    const char *name;
    once_memory_site_config config;
} golden_slice;

/* A slice of bits, and one with a window and growth (a few sub-filters, some dropped,
 * over the schedule's 2.5 s). */
static const golden_slice golden_slices[] = {
    {"slice", {.bits = 4096}},
    {"slice-window-growth",
     {.bits = 256, .window_ms = 600, .growth = ONCE_GROWTH_DENSITY, .max_density = 0.3}},
};
#define GOLDEN_SLICES (sizeof golden_slices / sizeof golden_slices[0])

/* FNV-1a over the key, then a splitmix64 step a position. */
static inline void golden_slice_positions(const uint8_t *key, size_t len, uint64_t bits,
                                          uint64_t out[GOLDEN_SLICE_PROBES])
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++)
        h = (h ^ key[i]) * UINT64_C(0x100000001b3);
    for (uint32_t j = 0; j < GOLDEN_SLICE_PROBES; j++) {
        uint64_t z = (h += UINT64_C(0x9E3779B97F4A7C15));
        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        out[j] = (z ^ (z >> 31)) % bits;
    }
}

static inline once_status golden_slice_run(once_filter *f, const uint8_t *key, size_t len,
                                           uint64_t at, once_site_op op, bool *all_set)
{
    once_memory_site_config config;
    once_status st = once_slice_config(f, &config);
    if (st != ONCE_OK)
        return st;
    uint64_t positions[GOLDEN_SLICE_PROBES];
    golden_slice_positions(key, len, config.bits, positions);
    once_site_request q = {.op = op, .positions = positions, .count = GOLDEN_SLICE_PROBES,
                           .time_ms = at};
    st = once_slice_run(f, &q, 1);
    *all_set = q.all_set;
    return st != ONCE_OK ? st : q.status;
}

/* The schedule's two calls, on a filter of keys or a slice. */
static inline once_status golden_test_and_add(once_filter *f, const uint8_t *key, size_t len,
                                              uint64_t at, bool *seen)
{
    if (once_get_type(f) == ONCE_SLICE)
        return golden_slice_run(f, key, len, at, ONCE_SITE_TEST_AND_SET, seen);
    return once_test_and_add(f, key, len, at, seen);
}

static inline once_status golden_query_key(const once_filter *f, const uint8_t *key, size_t len,
                                           uint64_t at, bool *present)
{
    if (once_get_type(f) == ONCE_SLICE) /* a TEST changes nothing */
        return golden_slice_run((once_filter *)f, key, len, at, ONCE_SITE_TEST, present);
    return once_query(f, key, len, at, present);
}

#endif /* ONCE_TESTS_GOLDEN_H */
