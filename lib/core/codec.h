/*
 * core/codec.h - little-endian writing and reading of what a filter saves (codec.c):
 * the writer checksums as it goes; the reader refuses to run past its bytes.
 */
#ifndef ONCE_CORE_CODEC_H
#define ONCE_CORE_CODEC_H

#include "once_advanced.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stdbool.h>

/* Advance past `len` bytes the sink does not want (a chunk's, before its window) without
 * being given them: 1 if it did, 0 if it wants them. */
typedef int (*once_skip_fn)(void *context, uint64_t len);

typedef struct once_writer {
    once_write_fn write;
    void *context;
    XXH3_state_t *checksum;
    int failed;
    once_skip_fn skip; /* NULL: every byte is wanted */
} once_writer;

/* May a structure leave out the next `len` bytes it would write, for a sink that does
 * not want them (or after a failed write, which ends the walk)?  Then they are counted
 * as written.  Never while a checksum runs: it needs every byte.  For structures whose
 * payload costs work a byte (the timer filter's canonical timers), so that a chunk of
 * a dump costs its own bytes, not every byte before it. */
bool once_writer_skip(once_writer *w, uint64_t len);

void once_writer_bytes(once_writer *w, const void *data, size_t len);
void once_writer_u32(once_writer *w, uint32_t v);
void once_writer_u64(once_writer *w, uint64_t v);
void once_writer_f64(once_writer *w, double v);
void once_writer_words(once_writer *w, const uint64_t *words, uint64_t n);

static inline uint64_t once_le64_read(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint32_t once_le32_read(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint16_t once_le16_read(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
/* Write the low `bytes` bytes of v, little-endian. */
static inline void once_le_write(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
/* Copy `n` little-endian words from a byte buffer. */
void once_words_from_le(uint64_t *dst, const uint8_t *src, uint64_t n);

/* A cursor over the parameter bytes of a saved filter. */
typedef struct once_reader {
    const uint8_t *p;
    size_t left;
    int failed;
} once_reader;

static inline uint64_t once_reader_u64(once_reader *r)
{
    if (r->left < 8) {
        r->failed = 1;
        return 0;
    }
    uint64_t v = once_le64_read(r->p);
    r->p += 8;
    r->left -= 8;
    return v;
}

/* Read exactly `count` parameter words; false if there are more or fewer. */
static inline bool once_read_params(const uint8_t *params, size_t len, uint64_t *v, size_t count)
{
    once_reader r = {params, len, 0};
    for (size_t i = 0; i < count; i++)
        v[i] = once_reader_u64(&r);
    return !r.failed && r.left == 0;
}

#endif /* ONCE_CORE_CODEC_H */
