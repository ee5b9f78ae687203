/*
 * once-ops: N operations of one kind on one structure, and nothing else worth
 * counting, for counting instructions per operation (bench/instructions.sh runs it
 * under callgrind at two sizes and takes the difference, which cancels the set-up).
 * Instruction counts do not depend on what else the machine runs, so they compare two
 * builds where timings on a shared machine spread by more than the change measured.
 *
 *   once-ops STRUCTURE OP N
 *
 * OP: insert, query (absent keys, after N inserts), test_and_add, and the batch forms
 * insert_batch, query_batch, test_and_add_batch (calls of 256 keys).  Keys are 16
 * bytes; the filter is sized for N keys at 1% (a window of N, or N keys a span).
 */
#include "once.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 256

static uint64_t mix(uint64_t x)
{
    x += UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

int main(int argc, char **argv)
{
    once_type type;
    if (argc != 4 || once_type_from_name(argv[1], &type) != ONCE_OK) {
        fprintf(stderr, "usage: once-ops STRUCTURE OP N\n");
        return 2;
    }
    const char *op = argv[2];
    uint64_t n = strtoull(argv[3], NULL, 10);
    once_config c;
    once_config_init(&c, type);
    c.capacity = n;
    c.window = n;
    c.span_ms = UINT64_C(1) << 40; /* a time window that never shifts by time */
    c.error = 0.01;
    c.seed = 1;
    c.seed_is_set = true;
    once_filter *f = NULL;
    uint64_t(*key)[2] = malloc(n * sizeof *key);
    once_key *keys = malloc(n * sizeof *keys);
    uint8_t *out = malloc(n);
    if (n == 0 || key == NULL || keys == NULL || out == NULL || once_create(&f, &c) != ONCE_OK) {
        fprintf(stderr, "once-ops: cannot set up %s for %s keys\n", argv[1], argv[3]);
        return 1;
    }
    for (uint64_t i = 0; i < n; i++) {
        key[i][0] = mix(i);
        key[i][1] = mix(i + n);
        keys[i] = (once_key){key[i], 16, i};
    }
    bool query = strcmp(op, "query") == 0 || strcmp(op, "query_batch") == 0;
    if (query) { /* a full filter, then keys it never took */
        for (uint64_t i = 0; i < n; i++)
            once_add(f, key[i], 16, i);
        for (uint64_t i = 0; i < n; i++) {
            key[i][0] ^= UINT64_C(1) << 63;
            keys[i].time_ms = n;
        }
    }
    uint64_t hits = 0;
    bool seen = false;
    once_status st = ONCE_OK;
    for (uint64_t i = 0; i < n && st == ONCE_OK; i += BATCH) {
        size_t count = n - i < BATCH ? (size_t)(n - i) : BATCH;
        if (strcmp(op, "insert_batch") == 0)
            st = once_add_batch(f, keys + i, count);
        else if (strcmp(op, "query_batch") == 0)
            st = once_query_batch(f, keys + i, count, out + i);
        else if (strcmp(op, "test_and_add_batch") == 0)
            st = once_test_and_add_batch(f, keys + i, count, out + i);
        else
            for (size_t j = i; j < i + count && st == ONCE_OK; j++) {
                if (strcmp(op, "insert") == 0)
                    st = once_add(f, key[j], 16, j);
                else if (query)
                    st = once_query(f, key[j], 16, n, &seen);
                else if (strcmp(op, "test_and_add") == 0)
                    st = once_test_and_add(f, key[j], 16, j, &seen);
                else
                    st = ONCE_ERR_INVALID;
                hits += seen;
            }
    }
    if (st != ONCE_OK) {
        fprintf(stderr, "once-ops: %s %s: %s\n", argv[1], op, once_strerror(st));
        return 1;
    }
    printf("%llu\n", (unsigned long long)hits);
    once_free(f);
    free(key);
    free(keys);
    free(out);
    return 0;
}
