/*
 * golden/golden.h - the keys and times of the saved files in tests/golden/vN.
 *
 * For each saved format N, vN/ holds a filter of every configuration of
 * tests/every_structure.h (as it was when the files were made; a space in its NAME is a
 * '-' in the file name) saved by the library that wrote format N, with the answers that
 * library gave (generate.c made them; v1 at 57e552f, the last commit that wrote format
 * 1).  test_golden.c replays the same schedule on them with the library under test.
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
 * digests.txt: the digest (once_digest_with_seed: XXH3-128) of GOLDEN_DIGEST_KEYS keys
 * 'd' i, 0 to 255 bytes long, under the seeds of golden_digest_seed, as
 * "SEED LENGTH LO HI" in hex.
 */
#ifndef ONCE_TESTS_GOLDEN_H
#define ONCE_TESTS_GOLDEN_H

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

#endif /* ONCE_TESTS_GOLDEN_H */
