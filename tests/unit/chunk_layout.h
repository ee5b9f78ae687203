/*
 * chunk_layout.h - the header of a saved chunk (lib/api/format.c), as the tests and the
 * fuzzer forge and damage chunks: its field offsets, and its checksum recomputed as a
 * writer who means harm would.  Include after <xxhash.h> (XXH_INLINE_ALL).
 */
#ifndef ONCE_CHUNK_LAYOUT_H
#define ONCE_CHUNK_LAYOUT_H

#include "once_advanced.h"

#include <stddef.h>
#include <stdint.h>

enum {
    CH_MAGIC = 0,
    CH_VERSION = 4,
    CH_RESERVED = 6,
    CH_BODY_LEN = 8,
    CH_TAG = 12,
    CH_OFFSET = 16,
    CH_STREAM = 24,
    CH_CHECKSUM = 32,
};

/* A chunk's own checksum: XXH3-64 of its header before the checksum, then its body. */
static inline void chunk_reseal(uint8_t *chunk, size_t len)
{
    if (len < ONCE_CHUNK_HEADER_SIZE)
        return;
    XXH3_state_t s;
    XXH3_INITSTATE(&s);
    XXH3_64bits_reset(&s);
    XXH3_64bits_update(&s, chunk, CH_CHECKSUM);
    XXH3_64bits_update(&s, chunk + ONCE_CHUNK_HEADER_SIZE, len - ONCE_CHUNK_HEADER_SIZE);
    uint64_t sum = XXH3_64bits_digest(&s);
    for (int i = 0; i < 8; i++)
        chunk[CH_CHECKSUM + i] = (uint8_t)(sum >> (8 * i));
}

#endif
