/*
 * api/format.c - the one on-disk format of every structure.
 *
 *   offset  size  field
 *   0       4     magic "ONCE"
 *   4       2     format version: ONCE_FORMAT_VERSION (2), or 1 (below)
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
 *
 * Versions 1 and 2 share this layout; they differ in where keys sit.  Version 2 mixes
 * each probe before its reduction (core/hash.h); version 1, written before that, did
 * not.  The loader reads both and gives the filter the probe of its file
 * (once_filter.format), and the writer writes the filter's own version back, so a
 * format-1 filter stays format 1 through every save, load, chunked dump and copy, and
 * answers exactly as it did.
 *
 * Chunks (once_save_chunk, once_load_chunk: once_advanced.h, "Chunks").  A dump is the stream
 * above cut into chunks, each a whole number of 64-bit words of it, the first one
 * holding at least the prefix (header, parameters, metadata section, payload length),
 * so that the loader checks the header and learns the stream's length from it.  Each
 * body follows a header of its own:
 *
 *   offset  size  field
 *   0       4     magic "ONCK"
 *   4       2     chunk format version (CHUNK_VERSION)
 *   6       2     reserved, 0
 *   8       4     body length B (a multiple of 8, at least 8)
 *   12      4     dump tag: the low 16 bits of the stream's XXH3-64 checksum
 *   16      8     offset of the body in the stream (a multiple of 8)
 *   24      8     stream length S (once_saved_size)
 *   32      8     XXH3-64 (seed 0) of bytes [0, 32) followed by the body
 *   40      B     body: stream bytes [offset, offset + B)
 *
 * So a chunk is checked where it arrives: its own checksum first (as once_load checks
 * the file's before its fields: a wrong field in an intact chunk is the writer's, not
 * the wire's), then that it is the next one of the dump the first chunk began (offset,
 * length and tag).  The bodies are exactly once_save's stream: the stream's own
 * checksum, hashed by the loader as the bodies come, still guards the whole, and a
 * dump's bodies load with once_load too.
 *
 * The saver keeps no state: the cursor (below 2^53, a Redis iterator that a JavaScript
 * client, whose numbers are doubles, reads exactly) is the tag above the next offset in
 * words.  The price is that every call walks the save from the
 * start to its chunk's end, writing only its window; the array structures save their
 * payload in a few large writes, so a walk costs about its chunk (the timer filter
 * builds its canonical words as it writes: a walk costs up to its whole size).  The
 * first call hashes the whole stream to learn the tag; the last hashes it again to
 * write the checksum, and refuses (ONCE_ERR_SEQUENCE) when the tag differs: the filter
 * changed during the dump.  A change the tag misses, or one undone by the end, leaves
 * bodies that fail the stream's checksum at the loader.  A saver object holding a
 * running checksum would hash the stream once, but could not serve a caller that
 * keeps only an integer between calls, as BF.SCANDUMP does.
 *
 * The loader checks the first chunk's prefix with the functions once_load uses
 * (prefix_parse, prefix_check_fields), keeps a copy of it, appends payload bytes to a
 * buffer that grows with what arrived, and after the last chunk checks the stream's
 * checksum and builds the filter with build_filter, as once_load does.  The
 * structure's parameters, and the header fields a structure checks against them, are
 * thus checked by the structure's own loader with the payload, after the last chunk:
 * the structure loaders take parameters and payload together, and checking the
 * parameters earlier would need a second copy of every structure's rules.  Until then
 * the declared payload length is unchecked, so it sizes nothing: the buffer grows with
 * the bytes received (at most twice them), never ahead of them.  As the loaders take
 * the payload whole, the filter is built from that buffer: about twice the filter's
 * size at that moment.
 */
#include "api/api.h"

#include <math.h>

#define ONCE_HEADER_SIZE 48
#define ONCE_MAX_PARAMS 4096
#define ONCE_FLAG_METADATA 1u

/* Bytes the metadata section takes in the file: its length word and the padded bytes. */
static uint64_t metadata_section_size(size_t len)
{
    return len == 0 ? 0 : 8 + (((uint64_t)len + 7) & ~(uint64_t)7);
}

/* A sharded filter's loader (api/sharded.c): its type is no registered structure. */
extern const once_filter_ops once_sharded_ops;

static const uint8_t once_magic[4] = {'O', 'N', 'C', 'E'};

static void writer_u16(once_writer *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    once_writer_bytes(w, b, 2);
}


/* Bytes before the payload: header, parameters, metadata section, payload length. */
static uint64_t prefix_size(const once_filter *f)
{
    return ONCE_HEADER_SIZE + f->ops->saved_params_size(f) +
           metadata_section_size(f->metadata_len) + 8;
}

uint64_t once_saved_size(const once_filter *f)
{
    if (f == NULL)
        return 0;
    return prefix_size(f) + f->ops->saved_payload_size(f) + 8;
}

/* Write the whole stream to `write`.  With a checksum `state` (reset by the caller)
 * the stream ends with its checksum, also returned in *sum; without one it stops
 * before the checksum and hashes nothing (the chunk writer's walks to a chunk). */
static once_status save_stream(const once_filter *f, once_write_fn write, once_skip_fn skip,
                               void *context, XXH3_state_t *state, uint64_t *sum)
{
    once_writer w = {write, context, state, 0, skip};

    uint64_t params = f->ops->saved_params_size(f);
    once_writer_bytes(&w, once_magic, 4);
    writer_u16(&w, f->format);
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

    if (state != NULL) {
        *sum = XXH3_64bits_digest(state);
        uint8_t b[8];
        for (int i = 0; i < 8; i++)
            b[i] = (uint8_t)(*sum >> (8 * i));
        if (!w.failed && write(context, b, 8) != 0)
            w.failed = 1;
    }
    return w.failed ? ONCE_ERR_IO : ONCE_OK;
}

once_status once_save(const once_filter *f, once_write_fn write, void *context)
{
    if (f == NULL || write == NULL)
        return ONCE_ERR_INVALID;
    XXH3_state_t state; /* on the stack: nothing allocated outside alloc.c */
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    uint64_t sum = 0;
    return save_stream(f, write, NULL, context, &state, &sum);
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

/* ------------------------------------------------------------------ loading */

/* The part of a saved stream before its payload, as the loader reads it.  Both loaders
 * (once_load, and the chunk loader below) read it with the same three functions:
 * prefix_parse (lengths), prefix_check_fields (fields), build_filter (the structure). */
typedef struct saved_prefix {
    const uint8_t *bytes; /* the prefix itself */
    size_t size;          /* its length, up to the payload */
    size_t room;          /* bytes after it that the caller holds, less `tail` */
    const uint8_t *params;
    size_t params_len;
    const uint8_t *metadata;
    size_t metadata_len;
    uint64_t payload_len;
    uint32_t flags;
    uint16_t version;
    const once_filter_ops *ops; /* set by prefix_check_fields, with the fields below */
    uint64_t seed, items, capacity;
    double error;
} saved_prefix;

/* The lengths of the prefix in `len` bytes, of which the last `tail` are not the
 * prefix's (once_load: the checksum).  ONCE_ERR_TRUNCATED when they do not fit. */
static once_status prefix_parse(const uint8_t *b, size_t len, size_t tail, saved_prefix *p)
{
    if (len < 4)
        return ONCE_ERR_TRUNCATED;
    if (memcmp(b, once_magic, 4) != 0)
        return ONCE_ERR_BAD_MAGIC;
    if (len < ONCE_HEADER_SIZE + 8 + tail)
        return ONCE_ERR_TRUNCATED;
    uint16_t version = once_le16_read(b + 4);
    if (!once_format_known(version))
        return ONCE_ERR_VERSION;

    uint32_t params_len = once_le32_read(b + 40);
    if (params_len > ONCE_MAX_PARAMS || params_len % 8 != 0)
        return ONCE_ERR_CORRUPT;
    if (len - ONCE_HEADER_SIZE - 8 - tail < params_len)
        return ONCE_ERR_TRUNCATED;
    /* Bytes left for the metadata section and the payload, besides the payload's
     * length word and the tail. */
    size_t room = len - ONCE_HEADER_SIZE - 8 - tail - params_len;
    size_t at = ONCE_HEADER_SIZE + params_len;
    uint32_t flags = once_le32_read(b + 44);
    uint64_t metadata_len = 0;
    if (flags & ONCE_FLAG_METADATA) {
        metadata_len = once_le64_read(b + at); /* in bounds: 8 + tail bytes follow `at` */
        if (metadata_len == 0 || metadata_len > ONCE_MAX_METADATA)
            return ONCE_ERR_CORRUPT;
        uint64_t section = metadata_section_size((size_t)metadata_len);
        if (section > room)
            return ONCE_ERR_TRUNCATED;
        room -= (size_t)section;
        at += (size_t)section;
    }
    p->bytes = b;
    p->size = at + 8;
    p->room = room;
    p->params = b + ONCE_HEADER_SIZE;
    p->params_len = params_len;
    p->metadata = b + ONCE_HEADER_SIZE + params_len + 8;
    p->metadata_len = (size_t)metadata_len;
    p->payload_len = once_le64_read(b + at);
    p->flags = flags;
    p->version = version;
    return ONCE_OK;
}

/* Each field of a parsed prefix against its range (the structure's parameters are its
 * own loader's to check, in build_filter). */
static once_status prefix_check_fields(saved_prefix *p)
{
    const uint8_t *b = p->bytes;
    uint16_t type = once_le16_read(b + 6);
    p->ops = type == ONCE_SAVED_SHARDED ? &once_sharded_ops : once_ops_for_type((once_type)type);
    if (p->ops == NULL)
        return ONCE_ERR_CORRUPT;
    p->seed = once_le64_read(b + 8);
    p->items = once_le64_read(b + 16);
    p->capacity = once_le64_read(b + 24);
    uint64_t error_bits = once_le64_read(b + 32);
    memcpy(&p->error, &error_bits, sizeof p->error);
    if (p->flags & ~ONCE_FLAG_METADATA)
        return ONCE_ERR_VERSION; /* an intact file with a feature this build lacks */
    if (once_header_check(p->capacity, p->error) != ONCE_OK)
        return ONCE_ERR_CORRUPT;
    if (p->metadata_len != 0) /* padding is zero, so a filter has one spelling */
        for (uint64_t i = p->metadata_len; i < metadata_section_size(p->metadata_len) - 8; i++)
            if (p->metadata[i] != 0)
                return ONCE_ERR_CORRUPT;
    return ONCE_OK;
}

/* The filter of a checked prefix and its payload (payload_len bytes). */
static once_status build_filter(const saved_prefix *p, const uint8_t *payload, once_filter **out)
{
    const once_filter_ops *ops = p->ops;
    once_filter *f = NULL;
    once_status st = ops->load(&f, p->params, p->params_len, payload, (size_t)p->payload_len);
    if (st != ONCE_OK)
        return st;
    if (p->metadata_len != 0 &&
        (st = once_set_metadata(f, p->metadata, p->metadata_len)) != ONCE_OK) {
        ops->destroy(f);
        return st == ONCE_ERR_FULL ? ONCE_ERR_CORRUPT : st; /* past the cap: not our file */
    }
    f->seed = p->seed;
    f->items = p->items;
    f->capacity = p->capacity;
    f->error = p->error;
    f->format = p->version;
    if (ops->set_format != NULL)
        ops->set_format(f);
    if (ops->check_header != NULL && !ops->check_header(f)) {
        once_free(f);
        return ONCE_ERR_CORRUPT;
    }
    *out = f;
    return ONCE_OK;
}

once_status once_load(once_filter **out, const void *buffer, size_t len)
{
    if (out == NULL || (buffer == NULL && len != 0))
        return ONCE_ERR_INVALID;
    *out = NULL;
    const uint8_t *b = buffer;
    saved_prefix p;
    once_status st = prefix_parse(b, len, 8, &p);
    if (st != ONCE_OK)
        return st;
    if (p.payload_len > p.room)
        return ONCE_ERR_TRUNCATED;
    if (p.payload_len < p.room)
        return ONCE_ERR_CORRUPT; /* trailing bytes after the checksum */

    size_t body = len - 8;
    if (XXH3_64bits(b, body) != once_le64_read(b + body))
        return ONCE_ERR_CHECKSUM;
    st = prefix_check_fields(&p);
    if (st != ONCE_OK)
        return st;
    return build_filter(&p, b + p.size, out);
}

/* ------------------------------------------------------------------- chunks */

#define CHUNK_MAGIC "ONCK"
#define CHUNK_VERSION 1
/* The cursor: the dump's tag above the offset of the next chunk in 8-byte words, in
 * 53 bits: a Redis iterator is a signed 64-bit integer, and a client in JavaScript
 * (node-redis) reads integers as doubles, exact only below 2^53.  37 bits of words
 * bound a stream to 1 TiB; the 16-bit tag catches all but 1 in 65536 filters changed
 * during a dump at its last chunk, and the stream's checksum the rest at the loader. */
#define CHUNK_OFFSET_BITS 37
#define CHUNK_TAG_BITS 16
#define CHUNK_TAG_MASK ((UINT64_C(1) << CHUNK_TAG_BITS) - 1)
#define CHUNK_MAX_STREAM (UINT64_C(8) << CHUNK_OFFSET_BITS) /* streams are shorter */
#define CHUNK_MAX_BODY (UINT32_MAX & ~UINT32_C(7))

_Static_assert(CHUNK_OFFSET_BITS + CHUNK_TAG_BITS == 53, "a cursor is an exact double");
_Static_assert(ONCE_CHUNK_MIN == ONCE_CHUNK_HEADER_SIZE + ONCE_HEADER_SIZE + ONCE_MAX_PARAMS +
                                     8 + ONCE_MAX_METADATA + 8,
               "ONCE_CHUNK_MIN holds the largest prefix the loader accepts");

/* XXH3-64 of a chunk's first 32 header bytes followed by its body. */
static uint64_t chunk_checksum(const uint8_t *chunk, size_t body_len)
{
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, chunk, 32);
    XXH3_64bits_update(&state, chunk + ONCE_CHUNK_HEADER_SIZE, body_len);
    return XXH3_64bits_digest(&state);
}

size_t once_save_chunk_min(const once_filter *f)
{
    return f == NULL ? 0 : (size_t)(ONCE_CHUNK_HEADER_SIZE + prefix_size(f));
}

/* A write sink that keeps stream bytes [start, end) and counts the rest; with `stop`
 * it refuses the write that reaches `end`, so the walk skips what follows. */
typedef struct window_sink {
    uint8_t *out;
    uint64_t at, start, end;
    bool stop;
} window_sink;

static int window_write(void *context, const void *data, size_t len)
{
    window_sink *s = context;
    uint64_t from = s->at, to = s->at + len;
    s->at = to;
    uint64_t lo = from > s->start ? from : s->start, hi = to < s->end ? to : s->end;
    if (lo < hi)
        memcpy(s->out + (lo - s->start), (const uint8_t *)data + (lo - from), (size_t)(hi - lo));
    return s->stop && to >= s->end ? -1 : 0;
}

/* Bytes wholly before the window are only counted. */
static int window_skip(void *context, uint64_t len)
{
    window_sink *s = context;
    if (s->at + len > s->start)
        return 0;
    s->at += len;
    return 1;
}

once_status once_save_chunk(const once_filter *f, uint64_t *cursor, size_t max_chunk, void *out,
                            size_t *out_len)
{
    if (out_len != NULL)
        *out_len = 0;
    if (f == NULL || cursor == NULL || out == NULL || out_len == NULL)
        return ONCE_ERR_INVALID;
    if (*cursor >> (CHUNK_OFFSET_BITS + CHUNK_TAG_BITS))
        return ONCE_ERR_INVALID;
    uint64_t stream = once_saved_size(f);
    if (stream >= CHUNK_MAX_STREAM)
        return ONCE_ERR_TOO_LARGE;
    uint64_t offset = (*cursor & ((UINT64_C(1) << CHUNK_OFFSET_BITS) - 1)) * 8;
    uint64_t tag = *cursor >> CHUNK_OFFSET_BITS;
    if (*cursor != 0 && offset == 0)
        return ONCE_ERR_INVALID; /* no cursor names the start but 0 */
    if (offset > stream)
        return ONCE_ERR_SEQUENCE; /* the filter shrank since the dump began */
    if (*cursor != 0 && offset == stream) {
        *cursor = 0; /* past the last chunk: the empty one that ends the dump */
        return ONCE_OK;
    }

    uint64_t room = max_chunk < ONCE_CHUNK_HEADER_SIZE ? 0 : max_chunk - ONCE_CHUNK_HEADER_SIZE;
    room &= ~UINT64_C(7); /* whole words */
    if (room > CHUNK_MAX_BODY)
        room = CHUNK_MAX_BODY;
    if (room < (offset == 0 ? prefix_size(f) : 8))
        return ONCE_ERR_INVALID;
    uint64_t end = stream - offset <= room ? stream : offset + room;
    bool first = offset == 0, last = end == stream;

    /* The first chunk learns the stream's checksum, whose low bits tag the dump; the
     * last one writes it and checks the tag, so a filter that changed in between is
     * refused there.  Chunks between hash nothing and stop at their end. */
    uint8_t *chunk = out;
    window_sink sink = {chunk + ONCE_CHUNK_HEADER_SIZE, 0, offset, end, !(first || last)};
    XXH3_state_t storage, *state = NULL;
    if (!sink.stop) {
        XXH3_INITSTATE(&storage);
        state = &storage;
        XXH3_64bits_reset(state);
    }
    uint64_t sum = 0;
    once_status st = save_stream(f, window_write, window_skip, &sink, state, &sum);
    if (sink.stop ? sink.at < end : st != ONCE_OK || sink.at != stream)
        return ONCE_ERR_IO; /* the walk wrote other than once_saved_size promised */
    if (first)
        tag = sum & CHUNK_TAG_MASK;
    else if (last && (sum & CHUNK_TAG_MASK) != tag)
        return ONCE_ERR_SEQUENCE;

    uint64_t body = end - offset;
    memcpy(chunk, CHUNK_MAGIC, 4);
    once_le_write(chunk + 4, CHUNK_VERSION, 2);
    once_le_write(chunk + 6, 0, 2);
    once_le_write(chunk + 8, body, 4);
    once_le_write(chunk + 12, tag, 4);
    once_le_write(chunk + 16, offset, 8);
    once_le_write(chunk + 24, stream, 8);
    once_le_write(chunk + 32, chunk_checksum(chunk, (size_t)body), 8);
    *out_len = (size_t)(ONCE_CHUNK_HEADER_SIZE + body);
    *cursor = tag << CHUNK_OFFSET_BITS | end / 8;
    return ONCE_OK;
}

struct once_loader {
    once_status failed; /* the first error, answered from then on */
    uint64_t stream;    /* the stream's length, from the first chunk (0 before it) */
    uint64_t received;  /* stream bytes taken so far */
    uint64_t tag;
    uint8_t *head;      /* a copy of the prefix, which `prefix` points into */
    saved_prefix prefix;
    uint8_t *payload;   /* grows with the chunks, up to prefix.payload_len */
    size_t payload_used, payload_capacity;
    uint8_t checksum[8]; /* the stream's last 8 bytes */
    XXH3_state_t sum;   /* of every stream byte before them (the loader is cache-line
                         * aligned, as XXH3's state must be) */
    once_filter *filter; /* built when the last chunk is in */
};

once_status once_load_begin(once_loader **out)
{
    if (out == NULL)
        return ONCE_ERR_INVALID;
    *out = NULL;
    once_loader *l = once_aligned_alloc(sizeof *l); /* zeroed */
    if (l == NULL)
        return ONCE_ERR_NOMEM;
    XXH3_INITSTATE(&l->sum);
    XXH3_64bits_reset(&l->sum);
    *out = l;
    return ONCE_OK;
}

/* Give back everything the loader holds but itself. */
static void loader_release(once_loader *l)
{
    once_free_memory(l->head);
    l->head = NULL;
    once_free_memory(l->payload);
    l->payload = NULL;
    l->payload_used = l->payload_capacity = 0;
    once_free(l->filter);
    l->filter = NULL;
}

void once_load_abort(once_loader *l)
{
    if (l == NULL)
        return;
    loader_release(l);
    once_aligned_free(l);
}

/* The first chunk's body: the prefix, checked by the functions once_load uses. */
static once_status loader_begin_stream(once_loader *l, const uint8_t *body, size_t len,
                                       uint64_t stream)
{
    saved_prefix p;
    once_status st = prefix_parse(body, len, 0, &p);
    if (st == ONCE_ERR_TRUNCATED)
        return ONCE_ERR_CORRUPT; /* the first chunk holds the whole prefix */
    if (st != ONCE_OK)
        return st;
    if (p.payload_len > stream || stream - p.payload_len != (uint64_t)p.size + 8)
        return ONCE_ERR_CORRUPT; /* the chunks' stream length is not the prefix's */
    if (p.payload_len > SIZE_MAX)
        return ONCE_ERR_TOO_LARGE;
    st = prefix_check_fields(&p);
    if (st != ONCE_OK)
        return st;
    l->head = once_malloc(p.size);
    if (l->head == NULL)
        return ONCE_ERR_NOMEM;
    memcpy(l->head, body, p.size);
    p.params = l->head + (p.params - body);
    p.metadata = l->head + (p.metadata - body);
    p.bytes = l->head;
    l->prefix = p;
    return ONCE_OK;
}

/* Append payload bytes, growing the buffer at most to twice what came in (never to the
 * declared length ahead of the bytes: a hostile first chunk may declare anything). */
static once_status loader_append(once_loader *l, const uint8_t *data, size_t len)
{
    size_t want = l->payload_used + len; /* <= payload_len, checked by the caller */
    if (want > l->payload_capacity) {
        size_t grow = l->payload_capacity * 2;
        if (grow < want)
            grow = want;
        if (grow > l->prefix.payload_len)
            grow = (size_t)l->prefix.payload_len;
        uint8_t *p = once_realloc(l->payload, grow);
        if (p == NULL)
            return ONCE_ERR_NOMEM;
        l->payload = p;
        l->payload_capacity = grow;
    }
    memcpy(l->payload + l->payload_used, data, len);
    l->payload_used = want;
    return ONCE_OK;
}

/* Take one chunk; any error is final (once_load_chunk releases everything). */
static once_status loader_take(once_loader *l, const uint8_t *c, size_t len)
{
    if (len < ONCE_CHUNK_HEADER_SIZE)
        return ONCE_ERR_TRUNCATED;
    if (memcmp(c, CHUNK_MAGIC, 4) != 0)
        return ONCE_ERR_BAD_MAGIC;
    if (once_le16_read(c + 4) != CHUNK_VERSION)
        return ONCE_ERR_VERSION;
    uint32_t body_len = once_le32_read(c + 8);
    if (len - ONCE_CHUNK_HEADER_SIZE < body_len)
        return ONCE_ERR_TRUNCATED;
    if (len - ONCE_CHUNK_HEADER_SIZE > body_len)
        return ONCE_ERR_CORRUPT; /* bytes past the body */
    if (chunk_checksum(c, body_len) != once_le64_read(c + 32))
        return ONCE_ERR_CHECKSUM;
    if ((c[6] | c[7]) != 0)
        return ONCE_ERR_VERSION; /* an intact chunk with a feature this build lacks */
    uint64_t tag = once_le32_read(c + 12), offset = once_le64_read(c + 16),
             stream = once_le64_read(c + 24);
    if (body_len == 0 || body_len % 8 != 0 || offset % 8 != 0 || stream % 8 != 0 ||
        stream >= CHUNK_MAX_STREAM || tag > CHUNK_TAG_MASK || offset > stream ||
        body_len > stream - offset)
        return ONCE_ERR_CORRUPT;

    /* Its place: the next of the dump begun by the first chunk. */
    if (l->stream != 0 && l->received == l->stream)
        return ONCE_ERR_SEQUENCE; /* past the end */
    if (l->stream == 0 ? offset != 0
                       : stream != l->stream || tag != l->tag || offset != l->received)
        return ONCE_ERR_SEQUENCE;
    const uint8_t *body = c + ONCE_CHUNK_HEADER_SIZE;
    if (l->stream == 0) {
        once_status st = loader_begin_stream(l, body, body_len, stream);
        if (st != ONCE_OK)
            return st;
        l->stream = stream;
        l->tag = tag;
    }

    /* Stream bytes [offset, offset + body_len): the prefix (first chunk), payload,
     * checksum; every byte before the checksum is hashed. */
    uint64_t payload_start = l->prefix.size, checksum_start = l->stream - 8;
    uint64_t end = offset + body_len;
    uint64_t hashed_end = end < checksum_start ? end : checksum_start;
    if (hashed_end > offset)
        XXH3_64bits_update(&l->sum, body, (size_t)(hashed_end - offset));
    uint64_t from = offset > payload_start ? offset : payload_start;
    if (from < hashed_end) {
        once_status st = loader_append(l, body + (from - offset), (size_t)(hashed_end - from));
        if (st != ONCE_OK)
            return st;
    }
    for (uint64_t at = offset > checksum_start ? offset : checksum_start; at < end; at++)
        l->checksum[at - checksum_start] = body[at - offset];
    l->received = end;
    if (l->received != l->stream)
        return ONCE_OK;

    /* The last chunk: the stream's checksum, the tag it gave the dump, the filter. */
    uint64_t sum = XXH3_64bits_digest(&l->sum);
    if (sum != once_le64_read(l->checksum))
        return ONCE_ERR_CHECKSUM;
    if ((sum & CHUNK_TAG_MASK) != l->tag)
        return ONCE_ERR_CORRUPT;
    static const uint8_t none[1];
    once_status st = build_filter(&l->prefix, l->payload ? l->payload : none, &l->filter);
    once_free_memory(l->payload);
    l->payload = NULL;
    l->payload_used = l->payload_capacity = 0;
    return st;
}

once_status once_load_chunk(once_loader *l, const void *chunk, size_t len, bool *complete)
{
    if (complete != NULL)
        *complete = false;
    if (l == NULL)
        return ONCE_ERR_INVALID;
    if (l->failed != ONCE_OK)
        return l->failed;
    once_status st = chunk == NULL && len != 0 ? ONCE_ERR_INVALID : loader_take(l, chunk, len);
    if (st != ONCE_OK) {
        loader_release(l);
        l->failed = st;
        return st;
    }
    if (complete != NULL)
        *complete = l->filter != NULL;
    return ONCE_OK;
}

once_status once_load_finish(once_loader *l, once_filter **out)
{
    once_status st = l == NULL || out == NULL ? ONCE_ERR_INVALID
                     : l->failed != ONCE_OK   ? l->failed
                     : l->filter == NULL      ? ONCE_ERR_TRUNCATED
                                              : ONCE_OK;
    if (out != NULL)
        *out = NULL;
    if (st == ONCE_OK) {
        *out = l->filter;
        l->filter = NULL;
    }
    once_load_abort(l);
    return st;
}
