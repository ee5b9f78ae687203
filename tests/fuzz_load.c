/*
 * fuzz_load.c - libFuzzer target for once_load.
 *
 * Each input is loaded twice: as it is, and with its last 8 bytes replaced by the
 * right XXH3-64 of the rest.  The raw load mostly exercises the length and checksum
 * checks; the resealed one lets mutations through to the field validation and the
 * structure loaders, which a checksum would otherwise hide from the fuzzer (a hostile
 * writer computes checksums too).
 *
 * For every input the loader accepts, the filter must be usable and canonical:
 * saving it straight away gives back exactly the input, it answers and inserts keys,
 * reports statistics, and what it saves after that loads again to the same size.
 * Anything else is a loader bug and aborts, so the fuzzer keeps the input.
 */
#include "once.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_load: %s\n", why);
    abort();
}

static void check_loaded(once_filter *f, const uint8_t *data, size_t size)
{
    void *saved = NULL;
    size_t saved_len = 0;
    if (once_save_to_buffer(f, &saved, &saved_len) != ONCE_OK)
        fail("accepted filter does not save");
    if (saved_len != size || memcmp(saved, data, size) != 0) {
        /* A state of an older layout (time windows without the clock's bound) is
         * rewritten in the current one, which must then save back to itself. */
        once_filter *again = NULL;
        void *resaved = NULL;
        size_t resaved_len = 0;
        if (once_load(&again, saved, saved_len) != ONCE_OK ||
            once_save_to_buffer(again, &resaved, &resaved_len) != ONCE_OK ||
            resaved_len != saved_len || memcmp(resaved, saved, saved_len) != 0)
            fail("accepted file does not save back to itself");
        once_free(again);
        once_free_buffer(resaved);
    }
    once_free_buffer(saved);

    /* The empty key, a key with NULs, and keys either side of XXH3's short-input path. */
    static const struct {
        const char *data;
        size_t len;
    } keys[] = {
        {"", 0}, {"a", 1}, {"\0\xff\0", 3}, {"once", 4}, {"a longer key, past 16 bytes", 27},
    };
    /* Time windows get a time past anything a file can hold, so a key is inserted
     * "now" (the timer filter takes event times below 2^63 ms). */
    once_type type = once_get_type(f);
    once_set_max_time_jump(f, 0); /* any time up to ONCE_MAX_TIME_MS */
    uint64_t now = type == ONCE_TLBF || type == ONCE_TIMER ? UINT64_C(1) << 62 : 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *key = keys[i].data;
        size_t len = keys[i].len;
        bool present = false, seen = false;
        if (once_query(f, key, len, now, &present) != ONCE_OK)
            fail("query failed");
        once_status st = once_test_and_add(f, key, len, now, &seen);
        if (st == ONCE_ERR_FULL)
            continue; /* a window at its memory cap refuses, and changes nothing */
        if (st != ONCE_OK || seen != present)
            fail("test_and_add disagrees with query");
        /* The timer filter's equal-timers heuristic may call a fresh key absent (its
         * documented trade-off); every other structure must find it. */
        if (once_query(f, key, len, now, &present) != ONCE_OK || (!present && type != ONCE_TIMER))
            fail("key absent right after test_and_add");
    }
    once_stats st;
    if (once_get_stats(f, &st) != ONCE_OK || st.bits_set > st.bits)
        fail("impossible statistics");

    if (once_save_to_buffer(f, &saved, &saved_len) != ONCE_OK)
        fail("filter does not save after use");
    if (saved_len != once_saved_size(f))
        fail("saved size differs from once_saved_size");
    once_filter *g = NULL;
    if (once_load(&g, saved, saved_len) != ONCE_OK || g == NULL)
        fail("saved filter does not load again");
    if (once_saved_size(g) != saved_len)
        fail("reloaded filter has another saved size");
    once_free(g);
    once_free_buffer(saved);
}

static void load_one(const uint8_t *data, size_t size)
{
    once_filter *f = NULL;
    once_status st = once_load(&f, data, size);
    if (st == ONCE_OK) {
        if (f == NULL)
            fail("ONCE_OK without a filter");
        check_loaded(f, data, size);
        once_free(f);
    } else if (f != NULL || st <= ONCE_OK || st >= ONCE_STATUS_COUNT) {
        fail("refusal with a filter or an unknown status");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Exact-size heap copies, so that a read past the end is caught. */
    uint8_t *copy = malloc(size ? size : 1);
    if (copy == NULL)
        return 0;
    if (size != 0)
        memcpy(copy, data, size);
    load_one(copy, size);
    if (size >= 8) {
        uint64_t sum = XXH3_64bits(copy, size - 8);
        for (int i = 0; i < 8; i++)
            copy[size - 8 + (size_t)i] = (uint8_t)(sum >> (8 * i));
        load_one(copy, size);
    }
    free(copy);
    return 0;
}
