/*
 * core/codec.c - the writer every structure saves through: little-endian integers and
 * word arrays, checksummed as they go, stopping at the first failed write.
 */
#include "core/codec.h"

#include <string.h>

bool once_writer_skip(once_writer *w, uint64_t len)
{
    if (w->failed)
        return true;
    return w->checksum == NULL && w->skip != NULL && w->skip(w->context, len);
}

void once_writer_bytes(once_writer *w, const void *data, size_t len)
{
    if (w->failed || len == 0)
        return;
    if (w->write(w->context, data, len) != 0) {
        w->failed = 1;
        return;
    }
    if (w->checksum != NULL)
        XXH3_64bits_update(w->checksum, data, len);
}

void once_writer_u32(once_writer *w, uint32_t v)
{
    uint8_t b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    once_writer_bytes(w, b, 4);
}

void once_writer_u64(once_writer *w, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    once_writer_bytes(w, b, 8);
}

void once_writer_f64(once_writer *w, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    once_writer_u64(w, bits);
}

void once_writer_words(once_writer *w, const uint64_t *words, uint64_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Write in bounded chunks: a write callback may take size_t and we may be 32-bit. */
    const uint64_t chunk = UINT64_C(1) << 24;
    for (uint64_t i = 0; i < n; i += chunk) {
        uint64_t count = n - i < chunk ? n - i : chunk;
        once_writer_bytes(w, words + i, (size_t)(count * 8));
    }
#else
    for (uint64_t i = 0; i < n; i++)
        once_writer_u64(w, words[i]);
#endif
}

void once_words_from_le(uint64_t *dst, const uint8_t *src, uint64_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(dst, src, (size_t)(n * 8));
#else
    for (uint64_t i = 0; i < n; i++)
        dst[i] = once_le64_read(src + i * 8);
#endif
}
