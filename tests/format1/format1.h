/*
 * format1/format1.h - the keys and times of the saved-format-1 files in this folder.
 *
 * generate.c, built against the last library that wrote format 1, made the files;
 * test_serialize.c (format1_files_answer_as_saved) replays the same schedule on them
 * with the library under test.  Both read the schedule from here, so it is written once.
 *
 * For each configuration NAME of tests/every_structure.h (as it was when the files were
 * made; a space in NAME is a '-' in the file name):
 *   1. a filter takes FORMAT1_STORED keys 's' i at time i * FORMAT1_STEP_MS by
 *      test-and-add; a structure that deletes then removes every seventh of them;
 *   2. it is saved as NAME.once;
 *   3. the FORMAT1_STORED keys 's' and the FORMAT1_ABSENT keys 'a' are queried at time
 *      FORMAT1_STORED * FORMAT1_STEP_MS: the answers are NAME's "query" line of answers.txt;
 *   4. NAME.once is loaded, takes the FORMAT1_MORE keys 'c' i by test-and-add at time
 *      (FORMAT1_STORED + i) * FORMAT1_STEP_MS (their answers: the "more" line), and is
 *      saved as NAME.more.once.
 * Keys are binary (a NUL second byte) and 6 to 29 bytes long, so both of the hash's
 * paths (keys of up to 16 bytes in line, longer ones) are taken.
 */
#ifndef ONCE_TESTS_FORMAT1_H
#define ONCE_TESTS_FORMAT1_H

#include <stddef.h>
#include <stdint.h>

#define FORMAT1_STORED 150u
#define FORMAT1_ABSENT 2000u
#define FORMAT1_MORE 100u
#define FORMAT1_STEP_MS 10u
#define FORMAT1_MAX_KEY 32u

static inline size_t format1_key(char set, uint32_t i, uint8_t out[FORMAT1_MAX_KEY])
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

#endif /* ONCE_TESTS_FORMAT1_H */
