/*
 * fuzz_load.c - libFuzzer target for once_load and the chunk loader.
 *
 * Each input is loaded twice: as it is, and with its last 8 bytes replaced by the
 * right XXH3-64 of the rest.  The raw load mostly exercises the length and checksum
 * checks; the resealed one lets mutations through to the field validation and the
 * structure loaders, which a checksum would otherwise hide from the fuzzer (a hostile
 * writer computes checksums too).
 *
 * Both are also cut into chunks as once_save_chunk cuts a stream (the first chunk the
 * prefix the header claims, the rest of a size drawn from the input), each chunk with
 * a right header and checksum, and fed to the chunk loader: it must accept exactly
 * what once_load accepts, as the same filter.  And the input is read as a dump of its
 * own, [u16 length][chunk] after [u16 length][chunk], fed to the chunk loader as it is
 * and with each chunk's own checksum made right; the seeds of fuzz_corpus include such
 * dumps.  A refusal must leave no filter and end the load: the next call repeats it.
 *
 * For every input the loader accepts, the filter must be usable and canonical:
 * saving it straight away gives back exactly the input, a chunked dump of it loads
 * back to the same bytes, it answers and inserts keys, reports statistics, and what it
 * saves after that loads again to the same size.  Anything else is a loader bug and
 * aborts, so the fuzzer keeps the input.
 */
#include "once_advanced.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "chunk_layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_load: %s\n", why);
    abort();
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A refused load: a known status, no filter, and the next call answers the same. */
static void check_refused(once_loader *l, once_status st)
{
    if (st <= ONCE_OK || st >= ONCE_STATUS_COUNT)
        fail("chunk refusal with an unknown status");
    bool complete = true;
    if (once_load_chunk(l, NULL, 0, &complete) != st || complete)
        fail("a refused load goes on");
    static int sentinel;
    once_filter *f = (once_filter *)&sentinel;
    if (once_load_finish(l, &f) != st || f != NULL)
        fail("a refused load finishes otherwise");
}

/* Dump `f` in chunks of at most `bound` bytes and load them back: the same bytes. */
static void check_chunk_round_trip(const once_filter *f, size_t bound, const void *saved,
                                   size_t saved_len)
{
    if (bound < once_save_chunk_min(f))
        bound = once_save_chunk_min(f);
    uint8_t *chunk = malloc(bound);
    once_loader *l = NULL;
    if (chunk == NULL || once_load_begin(&l) != ONCE_OK)
        fail("out of memory");
    uint64_t cursor = 0;
    bool complete = false;
    do {
        size_t n = 0;
        if (once_save_chunk(f, &cursor, bound, chunk, &n) != ONCE_OK || n > bound)
            fail("accepted filter does not dump in chunks");
        if (n != 0 && once_load_chunk(l, chunk, n, &complete) != ONCE_OK)
            fail("chunked dump does not load");
    } while (cursor != 0);
    free(chunk);
    once_filter *g = NULL;
    void *again = NULL;
    size_t again_len = 0;
    if (!complete || once_load_finish(l, &g) != ONCE_OK ||
        once_save_to_buffer(g, &again, &again_len) != ONCE_OK || again_len != saved_len ||
        memcmp(again, saved, saved_len) != 0)
        fail("chunked dump loads into another filter");
    once_free_buffer(again);
    once_free(g);
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
    check_chunk_round_trip(f, 48 + 8 * (size % 29), saved, saved_len);
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
    uint64_t now =
        once_structure_of(type)->kind == ONCE_KIND_TIME_WINDOW ? UINT64_C(1) << 62 : 0;
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

static once_status load_one(const uint8_t *data, size_t size)
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
    return st;
}

/* The bytes before the payload as the header claims them, within [8, size]. */
static size_t claimed_prefix(const uint8_t *data, size_t size)
{
    uint64_t prefix = 56;
    if (size >= 48) {
        uint64_t params = get_le(data + 40, 4);
        prefix += params;
        if ((get_le(data + 44, 4) & 1) && size >= 56 && params <= size - 56)
            prefix += 8 + ((get_le(data + 48 + params, 8) + 7) & ~(uint64_t)7);
    }
    return prefix > size ? size : (size_t)prefix;
}

/* The stream cut into chunks as the saver would, and loaded: as once_load said. */
static void load_stream_in_chunks(const uint8_t *data, size_t size, once_status whole)
{
    if (size % 8 != 0 || size < 16) {
        if (whole == ONCE_OK)
            fail("accepted a stream that is not whole words");
        return; /* no dump carries it */
    }
    size_t first = claimed_prefix(data, size) & ~(size_t)7;
    if (first < 8)
        first = 8;
    size_t step = 8 * (1 + (size_t)(XXH3_64bits(data, size) % 24));
    uint64_t tag = get_le(data + size - 8, 8) & 0xffff;
    uint8_t *chunk = malloc(ONCE_CHUNK_HEADER_SIZE + (first > step ? first : step));
    once_loader *l = NULL;
    if (chunk == NULL || once_load_begin(&l) != ONCE_OK)
        fail("out of memory");
    once_status st = ONCE_OK;
    bool complete = false;
    for (size_t at = 0; at < size && st == ONCE_OK;) {
        size_t body = at == 0 ? first : size - at < step ? size - at : step;
        memcpy(chunk, "ONCK\1\0\0\0", 8);
        put_le(chunk + CH_BODY_LEN, body, 4);
        put_le(chunk + CH_TAG, tag, 4);
        put_le(chunk + CH_OFFSET, at, 8);
        put_le(chunk + CH_STREAM, size, 8);
        memcpy(chunk + ONCE_CHUNK_HEADER_SIZE, data + at, body);
        chunk_reseal(chunk, ONCE_CHUNK_HEADER_SIZE + body);
        st = once_load_chunk(l, chunk, ONCE_CHUNK_HEADER_SIZE + body, &complete);
        at += body;
        if (st == ONCE_OK && complete != (at == size))
            fail("chunk loader complete at the wrong chunk");
    }
    free(chunk);
    if (st != ONCE_OK) {
        if (whole == ONCE_OK)
            fail("chunk loader refuses what once_load accepts");
        check_refused(l, st);
        return;
    }
    once_filter *f = NULL;
    if (once_load_finish(l, &f) != ONCE_OK || f == NULL)
        fail("complete chunk load does not finish");
    if (whole != ONCE_OK)
        fail("chunk loader accepts what once_load refuses");
    void *saved = NULL;
    size_t saved_len = 0;
    once_filter *g = NULL;
    void *expected = NULL;
    size_t expected_len = 0;
    if (once_save_to_buffer(f, &saved, &saved_len) != ONCE_OK ||
        once_load(&g, data, size) != ONCE_OK ||
        once_save_to_buffer(g, &expected, &expected_len) != ONCE_OK ||
        saved_len != expected_len || memcmp(saved, expected, saved_len) != 0)
        fail("chunk loader and once_load build other filters");
    once_free_buffer(saved);
    once_free_buffer(expected);
    once_free(g);
    once_free(f);
}

/* The input read as a dump: [u16 length][chunk] ..., every chunk an exact copy. */
static void load_chunk_sequence(const uint8_t *data, size_t size, bool reseal)
{
    once_loader *l = NULL;
    uint8_t *bodies = malloc(size ? size : 1);
    if (bodies == NULL || once_load_begin(&l) != ONCE_OK)
        fail("out of memory");
    size_t bodies_len = 0;
    once_status st = ONCE_OK;
    bool complete = false;
    for (size_t at = 0; at + 2 <= size && st == ONCE_OK;) {
        size_t n = (size_t)get_le(data + at, 2);
        at += 2;
        if (n > size - at)
            n = size - at;
        uint8_t *chunk = malloc(n ? n : 1);
        if (chunk == NULL)
            fail("out of memory");
        memcpy(chunk, data + at, n);
        if (reseal)
            chunk_reseal(chunk, n);
        st = once_load_chunk(l, chunk, n, &complete);
        if (st == ONCE_OK) {
            memcpy(bodies + bodies_len, chunk + ONCE_CHUNK_HEADER_SIZE,
                   n - ONCE_CHUNK_HEADER_SIZE);
            bodies_len += n - ONCE_CHUNK_HEADER_SIZE;
        } else if (complete) {
            fail("complete on a refused chunk");
        }
        free(chunk);
        at += n;
    }
    if (st != ONCE_OK) {
        check_refused(l, st);
    } else {
        once_filter *f = NULL;
        st = once_load_finish(l, &f);
        if (st == ONCE_OK) {
            if (!complete || f == NULL)
                fail("chunk load finishes without its last chunk");
            /* The bodies are the stream: once_load takes it too. */
            once_filter *g = NULL;
            if (once_load(&g, bodies, bodies_len) != ONCE_OK)
                fail("accepted chunks' bodies are refused by once_load");
            once_free(g);
            check_loaded(f, bodies, bodies_len);
            once_free(f);
        } else if (f != NULL || st <= ONCE_OK || st >= ONCE_STATUS_COUNT || complete) {
            fail("chunk load refused at the finish with a filter or an unknown status");
        }
    }
    free(bodies);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Exact-size heap copies, so that a read past the end is caught. */
    uint8_t *copy = malloc(size ? size : 1);
    if (copy == NULL)
        return 0;
    if (size != 0)
        memcpy(copy, data, size);
    load_stream_in_chunks(copy, size, load_one(copy, size));
    load_chunk_sequence(copy, size, false);
    load_chunk_sequence(copy, size, true);
    if (size >= 8) {
        uint64_t sum = XXH3_64bits(copy, size - 8);
        for (int i = 0; i < 8; i++)
            copy[size - 8 + (size_t)i] = (uint8_t)(sum >> (8 * i));
        load_stream_in_chunks(copy, size, load_one(copy, size));
    }
    free(copy);
    return 0;
}
