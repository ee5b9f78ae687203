/*
 * every_structure.h - small configurations of every structure, for the tests that
 * check a promise of the shared interface on each of them (test_interface.c,
 * test_threads.c).
 */
#ifndef ONCE_EVERY_STRUCTURE_H
#define ONCE_EVERY_STRUCTURE_H

#include "testing.h"

#include <stddef.h>

typedef struct named_config {
    const char *name;
    once_config config;
} named_config;

/* Small configurations of every structure, so that windows shift, rows and batches
 * open and caps refuse within a few hundred keys. */
static inline size_t every_structure(named_config *out, size_t room)
{
    size_t n = 0;
#define ADD_CONFIG(NAME, TYPE, ...)                                                             \
    do {                                                                                        \
        if (n < room) {                                                                         \
            named_config *nc = &out[n++];                                                       \
            *nc = (named_config){NAME, testing_config_any_kind(TYPE, 100, 60, 1000, 0xd1 + n)}; \
            once_config *c = &nc->config;                                                       \
            __VA_ARGS__;                                                                        \
        }                                                                                       \
    } while (0)
    ADD_CONFIG("standard", ONCE_STANDARD, (void)c);
    ADD_CONFIG("partitioned", ONCE_PARTITIONED, (void)c);
    ADD_CONFIG("blocked", ONCE_BLOCKED, (void)c);
    ADD_CONFIG("counting", ONCE_COUNTING, (void)c);
    ADD_CONFIG("apbf", ONCE_APBF, (void)c);
    ADD_CONFIG("apbf refresh", ONCE_APBF, c->policy = ONCE_POLICY_REFRESH);
    ADD_CONFIG("apbbf", ONCE_APBBF, (void)c);
    ADD_CONFIG("apbbf 64-bit blocks", ONCE_APBBF, c->block_bits = 64; c->block_hashes = 4);
    ADD_CONFIG("tlbf", ONCE_TLBF, (void)c);
    ADD_CONFIG("tlbf capped", ONCE_TLBF, c->max_bytes = 40 << 10); /* its slice table is ~33 KiB */
    ADD_CONFIG("timer", ONCE_TIMER, c->dynamic = false);
    ADD_CONFIG("timer dynamic", ONCE_TIMER, c->dynamic = true; c->max_bytes = 16384);
    ADD_CONFIG("scalable", ONCE_SCALABLE, c->capacity = 20; c->error = 0.05);
    ADD_CONFIG("scalable capped", ONCE_SCALABLE, c->capacity = 10; c->max_bytes = 1500);
    ADD_CONFIG("dbf", ONCE_DBF, c->capacity = 20; c->bits = 200; c->hashes = 3);
    ADD_CONFIG("dbf bit slices, capped", ONCE_DBF,
               c->capacity = 10; c->bits = 100; c->hashes = 3; c->bit_slice = true;
               c->max_bytes = 4000);
    ADD_CONFIG("dbf query first", ONCE_DBF,
               c->capacity = 10; c->bits = 100; c->hashes = 3; c->query_before_insert = true);
    ADD_CONFIG("bpbf", ONCE_BPBF, c->block_length = 200; c->blocks = 4; c->hashes = 2);
    ADD_CONFIG("dbpbf", ONCE_DBPBF,
               c->block_length = 100; c->blocks = 3; c->hashes = 2; c->batch_threshold = 20;
               c->max_bytes = 8192);
    /* Structures added after the golden files of a format: at the end, so that the
     * configurations before keep the seeds their files were made with. */
    ADD_CONFIG("tagged", ONCE_TAGGED, (void)c);
    ADD_CONFIG("tagged growing", ONCE_TAGGED, c->capacity = 8; c->max_bytes = 4096);
    ADD_CONFIG("tagged refresh", ONCE_TAGGED, c->capacity = 8; c->policy = ONCE_POLICY_REFRESH);
    /* The tagged window's lag (its 6-bit tags and version 2 of its params) came later. */
    ADD_CONFIG("tagged lag", ONCE_TAGGED, c->capacity = 8; c->lag_ms = 700);
#undef ADD_CONFIG
    return n;
}

#endif /* ONCE_EVERY_STRUCTURE_H */
