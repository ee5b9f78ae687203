/*
 * save_walk - builds a filled filter and saves it once, whole or as a dump of small
 * chunks, for tests/unit/save_linear.sh, which counts the instructions of each under
 * callgrind (deterministic, whatever else the machine runs).
 *
 *   save_walk STRUCTURE none|whole|chunked|small-chunks
 *
 * chunked: chunks of 256 KiB; small-chunks: of 64 KiB, four times as many.
 * STRUCTURE: timer, timer-dynamic or blocked, each of about 4 MiB saved.
 */
#include "once_advanced.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (256u << 10)
#define SMALL_CHUNK (64u << 10)

static int discard(void *context, const void *data, size_t len)
{
    (void)context;
    (void)data;
    (void)len;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    once_config c;
    bool timer = strncmp(argv[1], "timer", 5) == 0;
    once_config_init(&c, timer ? ONCE_TIMER : ONCE_BLOCKED);
    c.capacity = timer ? 200000 : 3000000;
    c.error = 0.01;
    c.span_ms = 3600000;
    c.dynamic = strcmp(argv[1], "timer-dynamic") == 0;
    c.seed = 7;
    c.seed_is_set = true;
    once_filter *f = NULL;
    if (once_create(&f, &c) != ONCE_OK)
        return 1;
    uint64_t keys = c.capacity, key[2] = {0, 0};
    for (uint64_t i = 0; i < keys; i++) {
        key[0] = i;
        bool seen;
        if (once_test_and_add(f, key, sizeof key, 1000 + i, &seen) != ONCE_OK)
            return 1;
    }
    if (strcmp(argv[2], "whole") == 0) {
        if (once_save(f, discard, NULL) != ONCE_OK)
            return 1;
    } else if (strcmp(argv[2], "chunked") == 0 || strcmp(argv[2], "small-chunks") == 0) {
        size_t size = strcmp(argv[2], "chunked") == 0 ? CHUNK : SMALL_CHUNK;
        uint8_t *buffer = malloc(size);
        uint64_t cursor = 0;
        size_t len = 0, chunks = 0;
        do {
            if (buffer == NULL || once_save_chunk(f, &cursor, size, buffer, &len) != ONCE_OK)
                return 1;
            chunks++;
        } while (cursor != 0);
        fprintf(stderr, "%zu chunks of a %llu-byte save\n", chunks,
                (unsigned long long)once_saved_size(f));
        free(buffer);
    } else if (strcmp(argv[2], "none") != 0) {
        return 2;
    }
    once_free(f);
    return 0;
}
