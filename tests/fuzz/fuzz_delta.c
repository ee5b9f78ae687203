/*
 * fuzz_delta.c - libFuzzer target for once_dbf_apply_delta, where a DBF replica takes
 * bytes from other nodes (paper 003 sections 4.4 and 3.5.2).
 *
 * Input: one byte that picks the replica's storage (bit 0: bit-sliced rows), then the
 * delta.  The replica is a new DBF of the geometry and seed fuzz_delta_corpus's sources
 * have, so that their first deltas apply.  The delta is applied as it is, and again with
 * its last 8 bytes the right XXH3-64 of the rest: the raw bytes mostly meet the
 * checksum, the resealed ones reach the header checks, the zstd frame and the rows (a
 * hostile node computes checksums too).
 *
 * A refused delta leaves the replica as it was, to the byte.  An applied one leaves a
 * replica that saves and loads back to the same bytes and takes queries, insertions
 * and deletes.  Anything else is a bug and aborts, so the fuzzer keeps the input.
 */
#include "once_advanced.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz_delta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_delta: %s\n", why);
    abort();
}

static void check_usable(once_filter *f)
{
    void *saved = NULL, *again = NULL;
    size_t saved_len = 0, again_len = 0;
    once_filter *g = NULL;
    if (once_save_to_buffer(f, &saved, &saved_len) != ONCE_OK)
        fail("an applied delta leaves a replica that does not save");
    if (once_load(&g, saved, saved_len) != ONCE_OK ||
        once_save_to_buffer(g, &again, &again_len) != ONCE_OK || again_len != saved_len ||
        memcmp(again, saved, saved_len) != 0)
        fail("an applied delta leaves a replica that does not load back as itself");
    once_free_buffer(saved);
    once_free_buffer(again);
    once_free(g);
    static const char *const keys[] = {"", "a", "a longer key, past 16 bytes"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        size_t len = strlen(keys[i]);
        bool present = false, seen = false;
        if (once_query(f, keys[i], len, 0, &present) != ONCE_OK)
            fail("a query refused");
        once_status st = once_test_and_add(f, keys[i], len, 0, &seen);
        if (st != ONCE_OK && st != ONCE_ERR_FULL)
            fail("an insertion failed otherwise than at the cap");
        if (st == ONCE_OK && (once_query(f, keys[i], len, 0, &present) != ONCE_OK || !present))
            fail("a key just inserted is absent");
        st = once_remove(f, keys[i], len, 0);
        if (st != ONCE_OK && st != ONCE_ERR_NOT_PRESENT && st != ONCE_ERR_UNSUPPORTED)
            fail("a delete failed otherwise");
    }
}

static void apply(bool bit_slice, const uint8_t *delta, size_t len)
{
    once_filter *replica = fuzz_delta_replica(bit_slice);
    if (replica == NULL)
        fail("out of memory");
    void *before = NULL, *after = NULL;
    size_t before_len = 0, after_len = 0;
    if (once_save_to_buffer(replica, &before, &before_len) != ONCE_OK)
        fail("a new replica does not save");
    once_status st = once_dbf_apply_delta(replica, delta, len);
    if (st == ONCE_OK) {
        check_usable(replica);
    } else {
        if (st >= ONCE_STATUS_COUNT)
            fail("a refusal with an unknown status");
        if (once_save_to_buffer(replica, &after, &after_len) != ONCE_OK ||
            after_len != before_len || memcmp(after, before, before_len) != 0)
            fail("a refused delta changed the replica");
    }
    once_free_buffer(before);
    once_free_buffer(after);
    once_free(replica);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    bool bit_slice = data[0] & 1;
    size_t len = size - 1;
    /* An exact-size heap copy, so that a read past the end is caught. */
    uint8_t *delta = malloc(len ? len : 1);
    if (delta == NULL)
        return 0;
    if (len != 0)
        memcpy(delta, data + 1, len);
    apply(bit_slice, delta, len);
    if (len >= 8) {
        uint64_t sum = XXH3_64bits(delta, len - 8);
        for (int i = 0; i < 8; i++)
            delta[len - 8 + (size_t)i] = (uint8_t)(sum >> (8 * i));
        apply(bit_slice, delta, len);
    }
    free(delta);
    return 0;
}
