/*
 * serialize.c - the one on-disk format of every structure.
 *
 *   offset  size  field
 *   0       4     magic "ONCE"
 *   4       2     format version (ONCE_FORMAT_VERSION)
 *   6       2     structure type (once_type)
 *   8       8     hash seed
 *   16      8     items
 *   24      8     design capacity
 *   32      8     design error (IEEE-754 binary64)
 *   40      4     parameter length P (a multiple of 8, at most ONCE_MAX_PARAMS)
 *   44      4     flags: bit 0 = metadata follows the parameters; other bits 0
 *   48      P     structure parameters (64-bit words)
 *   [48+P   8     metadata length M, 1 to ONCE_MAX_METADATA: only with flag bit 0
 *    56+P   M'    metadata, zero-padded to M' = M rounded up to a multiple of 8]
 *   48+P'   8     payload length L  (P' = P, or P + 8 + M' with metadata)
 *   56+P'   L     payload (the structure's arrays, 64-bit words)
 *   56+P'+L 8     XXH3-64 (seed 0) of bytes [0, 56+P'+L)
 *
 * Every integer is little-endian, whatever the host, so a file moves between machines.
 * The writer streams (no second copy of a large filter in memory) and checksums as it
 * goes.  The loader trusts nothing: each length is checked against the buffer before it
 * is used, the checksum is checked, then each field against its range, and finally the
 * structure's own loader checks its parameters and that the payload has exactly the
 * size those parameters imply; a structure that keeps its own copy of a header field
 * (the scalable filter's counts) then checks the header against it (check_header).
 * A hostile file therefore cannot make the loader allocate more than about its own
 * size.
 */
#include "once_internal.h"

#include <math.h>

#define ONCE_FORMAT_VERSION 1
#define ONCE_HEADER_SIZE 48
#define ONCE_MAX_PARAMS 4096
#define ONCE_FLAG_METADATA 1u

/* Bytes the metadata section takes in the file: its length word and the padded bytes. */
static uint64_t metadata_section_size(size_t len)
{
    return len == 0 ? 0 : 8 + (((uint64_t)len + 7) & ~(uint64_t)7);
}

static const uint8_t once_magic[4] = {'O', 'N', 'C', 'E'};

void once_writer_bytes(once_writer *w, const void *data, size_t len)
{
    if (w->failed || len == 0)
        return;
    if (w->write(w->context, data, len) != 0) {
        w->failed = 1;
        return;
    }
    XXH3_64bits_update(w->checksum, data, len);
}

static void writer_u16(once_writer *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    once_writer_bytes(w, b, 2);
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

/* The design capacity and error every filter records, in the range the format holds.
 * once_create checks what it is about to record with this same function, so a filter it
 * builds always saves into a file once_load accepts.  The error is a rate: an explicit
 * geometry too small for its capacity records its design rate, which may round to 1. */
once_status once_header_check(uint64_t capacity, double error)
{
    if (capacity > ONCE_MAX_CELLS)
        return ONCE_ERR_TOO_LARGE;
    if (!isfinite(error) || error < 0.0 || error > 1.0)
        return ONCE_ERR_INVALID;
    return ONCE_OK;
}

uint64_t once_saved_size(const once_filter *f)
{
    if (f == NULL)
        return 0;
    return ONCE_HEADER_SIZE + f->ops->saved_params_size(f) + metadata_section_size(f->metadata_len) +
           8 + f->ops->saved_payload_size(f) + 8;
}

once_status once_save(const once_filter *f, once_write_fn write, void *context)
{
    if (f == NULL || write == NULL)
        return ONCE_ERR_INVALID;
    XXH3_state_t state; /* on the stack: nothing allocated outside alloc.c */
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    once_writer w = {write, context, &state, 0};

    uint64_t params = f->ops->saved_params_size(f);
    once_writer_bytes(&w, once_magic, 4);
    writer_u16(&w, ONCE_FORMAT_VERSION);
    writer_u16(&w, (uint16_t)f->ops->type);
    once_writer_u64(&w, f->seed);
    once_writer_u64(&w, f->items);
    once_writer_u64(&w, f->capacity);
    once_writer_f64(&w, f->error);
    once_writer_u32(&w, (uint32_t)params);
    once_writer_u32(&w, f->metadata_len ? ONCE_FLAG_METADATA : 0);
    f->ops->save_params(f, &w);
    if (f->metadata_len) {
        static const uint8_t zeros[8];
        once_writer_u64(&w, f->metadata_len);
        once_writer_bytes(&w, f->metadata, f->metadata_len);
        once_writer_bytes(&w, zeros, (size_t)(metadata_section_size(f->metadata_len) - 8) -
                                         f->metadata_len);
    }
    once_writer_u64(&w, f->ops->saved_payload_size(f));
    f->ops->save_payload(f, &w);

    uint64_t sum = XXH3_64bits_digest(&state);
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(sum >> (8 * i));
    if (!w.failed && write(context, b, 8) != 0)
        w.failed = 1;
    return w.failed ? ONCE_ERR_IO : ONCE_OK;
}

typedef struct buffer_sink {
    uint8_t *data;
    size_t used, capacity;
} buffer_sink;

static int buffer_write(void *context, const void *data, size_t len)
{
    buffer_sink *sink = context;
    if (len > sink->capacity - sink->used)
        return -1;
    memcpy(sink->data + sink->used, data, len);
    sink->used += len;
    return 0;
}

once_status once_save_to_buffer(const once_filter *f, void **buffer, size_t *len)
{
    if (f == NULL || buffer == NULL || len == NULL)
        return ONCE_ERR_INVALID;
    uint64_t size = once_saved_size(f);
    if (size > SIZE_MAX)
        return ONCE_ERR_TOO_LARGE;
    buffer_sink sink = {once_malloc((size_t)size), 0, (size_t)size};
    if (sink.data == NULL)
        return ONCE_ERR_NOMEM;
    once_status st = once_save(f, buffer_write, &sink);
    if (st != ONCE_OK || sink.used != size) {
        once_free_memory(sink.data);
        return st != ONCE_OK ? st : ONCE_ERR_IO;
    }
    *buffer = sink.data;
    *len = sink.used;
    return ONCE_OK;
}

once_status once_load(once_filter **out, const void *buffer, size_t len)
{
    if (out == NULL || (buffer == NULL && len != 0))
        return ONCE_ERR_INVALID;
    *out = NULL;
    const uint8_t *b = buffer;
    if (len < 4)
        return ONCE_ERR_TRUNCATED;
    if (memcmp(b, once_magic, 4) != 0)
        return ONCE_ERR_BAD_MAGIC;
    if (len < ONCE_HEADER_SIZE + 16)
        return ONCE_ERR_TRUNCATED;
    uint16_t version = (uint16_t)(b[4] | b[5] << 8);
    if (version != ONCE_FORMAT_VERSION)
        return ONCE_ERR_VERSION;

    uint32_t params_len = once_le32_read(b + 40);
    if (params_len > ONCE_MAX_PARAMS || params_len % 8 != 0)
        return ONCE_ERR_CORRUPT;
    if (len - ONCE_HEADER_SIZE - 16 < params_len)
        return ONCE_ERR_TRUNCATED;
    /* Bytes left for the metadata section and the payload, besides the payload's
     * length word and the checksum. */
    size_t room = len - ONCE_HEADER_SIZE - 16 - params_len;
    size_t at = ONCE_HEADER_SIZE + params_len;
    uint32_t flags = once_le32_read(b + 44);
    uint64_t metadata_len = 0;
    if (flags & ONCE_FLAG_METADATA) {
        metadata_len = once_le64_read(b + at); /* in bounds: 16 bytes follow `at` */
        if (metadata_len == 0 || metadata_len > ONCE_MAX_METADATA)
            return ONCE_ERR_CORRUPT;
        uint64_t section = metadata_section_size((size_t)metadata_len);
        if (section > room)
            return ONCE_ERR_TRUNCATED;
        room -= (size_t)section;
        at += (size_t)section;
    }
    uint64_t payload_len = once_le64_read(b + at);
    size_t payload_room = room;
    if (payload_len > payload_room)
        return ONCE_ERR_TRUNCATED;
    if (payload_len < payload_room)
        return ONCE_ERR_CORRUPT; /* trailing bytes after the checksum */

    size_t body = len - 8;
    if (XXH3_64bits(b, body) != once_le64_read(b + body))
        return ONCE_ERR_CHECKSUM;

    uint16_t type = (uint16_t)(b[6] | b[7] << 8);
    const once_filter_ops *ops = once_ops_for_type((once_type)type);
    if (ops == NULL)
        return ONCE_ERR_CORRUPT;
    uint64_t seed = once_le64_read(b + 8);
    uint64_t items = once_le64_read(b + 16);
    uint64_t capacity = once_le64_read(b + 24);
    uint64_t error_bits = once_le64_read(b + 32);
    double error;
    memcpy(&error, &error_bits, sizeof error);
    if (flags & ~ONCE_FLAG_METADATA)
        return ONCE_ERR_VERSION; /* an intact file with a feature this build lacks */
    if (once_header_check(capacity, error) != ONCE_OK)
        return ONCE_ERR_CORRUPT;
    const uint8_t *metadata = b + ONCE_HEADER_SIZE + params_len + 8;
    if (metadata_len != 0) /* padding is zero, so a filter has one spelling */
        for (uint64_t i = metadata_len; i < metadata_section_size((size_t)metadata_len) - 8; i++)
            if (metadata[i] != 0)
                return ONCE_ERR_CORRUPT;

    once_filter *f = NULL;
    once_status st = ops->load(&f, b + ONCE_HEADER_SIZE, params_len, b + at + 8,
                               (size_t)payload_len);
    if (st != ONCE_OK)
        return st;
    if (metadata_len != 0 &&
        (st = once_set_metadata(f, metadata, (size_t)metadata_len)) != ONCE_OK) {
        ops->destroy(f);
        return st == ONCE_ERR_FULL ? ONCE_ERR_CORRUPT : st; /* past the cap: not our file */
    }
    f->seed = seed;
    f->items = items;
    f->capacity = capacity;
    f->error = error;
    if (ops->check_header != NULL && !ops->check_header(f)) {
        once_free(f);
        return ONCE_ERR_CORRUPT;
    }
    *out = f;
    return ONCE_OK;
}
