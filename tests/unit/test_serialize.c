/*
 * test_serialize.c - what the saved format promises.
 *
 *   - a filter saved and loaded again is the same filter: same structure, seed,
 *     counters, design values and statistics, the same answer for every key, the same
 *     bytes when saved again, and it goes on evolving exactly like the original;
 *   - the loader never crashes and never accepts damage: every single-byte change and
 *     every truncation of a saved filter is refused, and with the checksum made valid
 *     again a changed file is either refused or loads into a filter that works and
 *     saves back to exactly the bytes it came from;
 *   - each invalid header or parameter field is refused with its own precise status,
 *     even when the checksum is right (a hostile writer computes checksums too);
 *   - the layout is little-endian, byte for byte, whatever the host;
 *   - bad arguments and failing writers are reported, not crashed on.
 *
 * Buffers handed to the loader are always heap copies of exactly the length given, so
 * that AddressSanitizer sees any read past the end.
 */
#include "once_advanced.h"
#include "testing.h"
#include "every_structure.h"

#include <stdbool.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static const once_type all_types[] = {ONCE_STANDARD, ONCE_PARTITIONED, ONCE_BLOCKED,
                                      ONCE_COUNTING};
#define NTYPES (sizeof all_types / sizeof all_types[0])

/* ----------------------------------------------------------------- helpers */

static uint64_t double_bits(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits;
}

static once_filter *make_geometry(once_type type, uint64_t bits, uint32_t hashes, uint64_t seed,
                                  uint64_t capacity)
{
    once_config c = testing_config(type, seed);
    c.bits = bits;
    c.hashes = hashes;
    c.capacity = capacity;
    return testing_create(&c);
}

static void add_keys(once_filter *f, uint64_t domain, uint64_t first, uint64_t n)
{
    for (uint64_t i = first; i < first + n; i++) {
        testing_key k = testing_key_make(domain, i);
        CHECK_OK(once_add(f, &k, sizeof k, 0));
    }
}

/* The small filters of the exhaustive cases.  The standard and counting sizes are not a
 * whole number of words, so the files carry padding that must stay zero; the blocked
 * layout needs whole 512-bit blocks; the partitioned one rounds 1000 up to 3 x 334. */
static once_filter *small_filter(once_type type, uint64_t keys)
{
    uint64_t bits = type == ONCE_BLOCKED ? 1024 : 1000;
    once_filter *f = make_geometry(type, bits, 3, 0x5eed, 50);
    if (f != NULL)
        add_keys(f, 1, 0, keys);
    return f;
}

/* A growing sink for once_save: records how many writes it saw and can be told to fail
 * the n-th one. */
typedef struct sink {
    uint8_t *data;
    size_t len, capacity;
    int calls;
    int fail_at; /* 1-based call to refuse; 0 = never */
} sink;

static int sink_write(void *context, const void *data, size_t len)
{
    sink *s = context;
    s->calls++;
    if (s->fail_at != 0 && s->calls == s->fail_at)
        return -1;
    if (len > s->capacity - s->len) {
        size_t want = s->capacity ? s->capacity : 64;
        while (want - s->len < len)
            want *= 2;
        uint8_t *p = realloc(s->data, want);
        if (p == NULL)
            return -1;
        s->data = p;
        s->capacity = want;
    }
    memcpy(s->data + s->len, data, len);
    s->len += len;
    return 0;
}

static int same_stats(const once_stats *a, const once_stats *b)
{
    return a->type == b->type && strcmp(a->structure, b->structure) == 0 &&
           a->bytes == b->bytes && a->bits == b->bits && a->bits_set == b->bits_set &&
           a->fill_ratio == b->fill_ratio && a->items == b->items &&
           a->capacity == b->capacity && double_bits(a->error) == double_bits(b->error) &&
           a->hashes == b->hashes && a->fpr_estimate == b->fpr_estimate && a->seed == b->seed;
}

static int valid_error_status(once_status st)
{
    return st > ONCE_OK && st < ONCE_STATUS_COUNT;
}

/*
 * What must hold for any file the loader accepts, however it was made: it is
 * canonical (saving the loaded filter gives back exactly the file), and the filter
 * answers, inserts, reports and saves without fault, and what it saves loads again.
 * Returns 0 and says why on the first broken promise.
 */
static int accepted_file_is_sound(once_filter *f, const uint8_t *file, size_t len)
{
    size_t saved_len = 0;
    uint8_t *saved = testing_save(f, &saved_len);
    if (saved == NULL)
        return 0;
    int ok = saved_len == len && memcmp(saved, file, len) == 0;
    once_free_buffer(saved);
    if (!ok) {
        fprintf(stderr, "accepted file does not save back to itself\n");
        return 0;
    }
    for (uint64_t i = 0; i < 8; i++) {
        testing_key k = testing_key_make(77, i);
        bool present = false, seen = false;
        if (once_query(f, &k, sizeof k, 0, &present) != ONCE_OK ||
            once_test_and_add(f, &k, sizeof k, 0, &seen) != ONCE_OK ||
            once_query(f, &k, sizeof k, 0, &present) != ONCE_OK || !present) {
            fprintf(stderr, "accepted filter fails a key operation\n");
            return 0;
        }
    }
    once_stats st;
    if (once_get_stats(f, &st) != ONCE_OK || st.bits_set > st.bits || !(st.fill_ratio >= 0.0) ||
        !(st.fill_ratio <= 1.0)) {
        fprintf(stderr, "accepted filter reports impossible statistics\n");
        return 0;
    }
    saved = testing_save(f, &saved_len);
    if (saved == NULL)
        return 0;
    once_filter *again = NULL;
    once_status ls = once_load(&again, saved, saved_len);
    ok = ls == ONCE_OK && again != NULL && once_saved_size(again) == saved_len;
    if (!ok)
        fprintf(stderr, "re-saved filter does not load: %s\n", once_strerror(ls));
    once_free(again);
    once_free_buffer(saved);
    return ok;
}

/* Load exactly `len` bytes; check that a refusal leaves *out NULL and an acceptance is
 * sound.  Returns the status. */
static once_status load_and_vet(const uint8_t *file, size_t len)
{
    uint8_t *copy = testing_copy_exact(file, len);
    static int sentinel;
    once_filter *f = (once_filter *)&sentinel; /* the loader must overwrite it */
    once_status st = once_load(&f, copy, len);
    if (st == ONCE_OK) {
        CHECK(f != NULL);
        if (f != NULL)
            CHECK(accepted_file_is_sound(f, copy, len));
        once_free(f);
    } else {
        CHECK(valid_error_status(st));
        CHECK(f == NULL);
    }
    free(copy);
    return st;
}

/* ------------------------------------------------------------- round trip */

static void round_trip_one(once_filter *f, uint64_t added)
{
    size_t len = 0;
    uint8_t *buf = testing_save(f, &len);
    REQUIRE(buf != NULL);
    CHECK(len == once_saved_size(f));

    /* The streaming writer produces the same bytes as the buffer writer. */
    sink s = {0};
    CHECK_OK(once_save(f, sink_write, &s));
    CHECK(s.len == len && memcmp(s.data, buf, len) == 0);
    free(s.data);

    once_filter *g = NULL;
    uint8_t *exact = testing_copy_exact(buf, len);
    CHECK_OK(once_load(&g, exact, len));
    free(exact);
    REQUIRE(g != NULL);
    CHECK(once_get_type(g) == once_get_type(f));
    CHECK(once_seed(g) == once_seed(f));
    CHECK(once_items(g) == once_items(f));
    CHECK(once_capacity(g) == once_capacity(f));
    CHECK(once_bytes(g) == once_bytes(f));
    once_stats sf, sg;
    CHECK_OK(once_get_stats(f, &sf));
    CHECK_OK(once_get_stats(g, &sg));
    CHECK(double_bits(sg.error) == double_bits(sf.error));
    CHECK(same_stats(&sf, &sg));

    /* No key was lost, and absent keys get the original's answers, false positives
     * included: the arrays are the same bits under the same seed. */
    uint64_t lost = 0;
    for (uint64_t i = 0; i < added; i++) {
        testing_key k = testing_key_make(1, i);
        bool present = false;
        CHECK_OK(once_query(g, &k, sizeof k, 0, &present));
        lost += !present;
    }
    CHECK(lost == 0);
    uint64_t differ = 0, positives = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        testing_key k = testing_key_make(2, i);
        bool pf = false, pg = false;
        CHECK_OK(once_query(f, &k, sizeof k, 0, &pf));
        CHECK_OK(once_query(g, &k, sizeof k, 0, &pg));
        differ += pf != pg;
        positives += pg;
    }
    CHECK(differ == 0);
    if (added == 0)
        CHECK(positives == 0);

    size_t len2 = 0;
    uint8_t *buf2 = testing_save(g, &len2);
    CHECK(buf2 != NULL && len2 == len && memcmp(buf2, buf, len) == 0);
    once_free_buffer(buf2);

    /* Both go on identically: same seen answers, same bytes. */
    for (uint64_t i = 0; i < 2000; i++) {
        testing_key k = testing_key_make(3, i % 1500); /* repeats: seen must agree */
        bool seen_f = false, seen_g = false;
        CHECK_OK(once_test_and_add(f, &k, sizeof k, 0, &seen_f));
        CHECK_OK(once_test_and_add(g, &k, sizeof k, 0, &seen_g));
        CHECK(seen_f == seen_g);
    }
    add_keys(f, 4, 0, 500);
    add_keys(g, 4, 0, 500);
    if (once_get_type(f) == ONCE_COUNTING) {
        for (uint64_t i = 0; i < 250; i++) {
            testing_key k = testing_key_make(4, i);
            CHECK_OK(once_remove(f, &k, sizeof k, 0));
            CHECK_OK(once_remove(g, &k, sizeof k, 0));
        }
    }
    size_t lf = 0, lg = 0;
    uint8_t *bf = testing_save(f, &lf), *bg = testing_save(g, &lg);
    CHECK(bf != NULL && bg != NULL && lf == lg && memcmp(bf, bg, lf) == 0);
    once_free_buffer(bf);
    once_free_buffer(bg);

    once_free(g);
    once_free_buffer(buf);
}

static void round_trip(void)
{
    for (size_t t = 0; t < NTYPES; t++) {
        /* Sized for capacity and half filled; counting also after deletes. */
        once_filter *f = testing_make(all_types[t], 20000, 0.01, 0xfeedface);
        REQUIRE(f != NULL);
        add_keys(f, 1, 0, 10000);
        if (all_types[t] == ONCE_COUNTING) {
            for (uint64_t i = 10000; i < 10500; i++) {
                testing_key k = testing_key_make(1, i);
                CHECK_OK(once_add(f, &k, sizeof k, 0));
                CHECK_OK(once_remove(f, &k, sizeof k, 0));
            }
        }
        round_trip_one(f, 10000);
        once_free(f);

        /* Empty, explicit geometry: capacity 0 and error 0 travel too. */
        f = make_geometry(all_types[t], 4096, 5, UINT64_MAX, 0);
        REQUIRE(f != NULL);
        round_trip_one(f, 0);
        once_free(f);

        /* Overfilled far past capacity: a dense array is still just bits. */
        f = testing_make(all_types[t], 100, 0.01, 0);
        REQUIRE(f != NULL);
        add_keys(f, 1, 0, 3000);
        round_trip_one(f, 3000);
        once_free(f);
    }
}

/* ------------------------------------------------------------- corruption */

static void every_byte_corruption(void)
{
    for (size_t t = 0; t < NTYPES; t++) {
        once_filter *f = small_filter(all_types[t], 50);
        REQUIRE(f != NULL);
        size_t len = 0;
        uint8_t *orig = testing_save(f, &len);
        once_free(f);
        REQUIRE(orig != NULL);
        uint8_t *buf = malloc(len);
        REQUIRE(buf != NULL);

        /* As damaged: the checksum covers every byte before it and itself is checked,
         * so every change is refused. */
        uint64_t trials = 0, refused = 0;
        for (size_t off = 0; off < len; off++) {
            for (unsigned v = 0; v < 256; v++) {
                if (v == orig[off])
                    continue;
                memcpy(buf, orig, len);
                buf[off] = (uint8_t)v;
                trials++;
                refused += load_and_vet(buf, len) != ONCE_OK;
            }
        }
        fprintf(stderr, "%-11s %zu bytes: %" PRIu64 " of %" PRIu64 " changes refused\n",
                once_type_name(all_types[t]), len, refused, trials);
        CHECK(refused == trials);

        /* Damaged and resealed: now only the field checks stand between the file and
         * the filter.  A change to the structure type, seed, counters, design values,
         * geometry or the payload's real cells may well describe another valid filter,
         * and so may the version's one other value, 1 (the same layout with format 1's
         * probe); a change to the magic, version, lengths or flags otherwise never
         * does.  Both outcomes are vetted by load_and_vet. */
        uint64_t accepted = 0, refused_fields = 0;
        trials = 0;
        for (size_t off = 0; off + 8 < len; off++) {
            for (unsigned v = 0; v < 256; v++) {
                if (v == orig[off])
                    continue;
                memcpy(buf, orig, len);
                buf[off] = (uint8_t)v;
                testing_reseal(buf, len);
                trials++;
                once_status st = load_and_vet(buf, len);
                int framing = (off < OFF_TYPE && !(off == OFF_VERSION && v == 1)) ||
                              (off >= OFF_PARAMS_LEN && off < HEADER) ||
                              (off >= ARRAY_OFF_PAYLOAD_LEN && off < ARRAY_OFF_PAYLOAD);
                if (st == ONCE_OK) {
                    accepted++;
                    if (framing)
                        fprintf(stderr, "accepted change at offset %zu to 0x%02x\n", off, v);
                    CHECK(!framing);
                } else {
                    refused_fields++;
                    if (off < OFF_VERSION)
                        CHECK(st == ONCE_ERR_BAD_MAGIC);
                    else if (off < OFF_TYPE)
                        CHECK(st == ONCE_ERR_VERSION);
                    else if (off >= OFF_FLAGS && off < HEADER) /* metadata, or newer */
                        CHECK(st == ONCE_ERR_CORRUPT || st == ONCE_ERR_TRUNCATED ||
                              st == ONCE_ERR_VERSION);
                }
            }
        }
        fprintf(stderr, "%-11s resealed: %" PRIu64 " accepted, %" PRIu64 " refused\n",
                once_type_name(all_types[t]), accepted, refused_fields);
        CHECK(accepted + refused_fields == trials);
        CHECK(accepted > 0 && refused_fields > 0);
        free(buf);
        once_free_buffer(orig);
    }
}

static void every_truncation(void)
{
    for (size_t t = 0; t < NTYPES; t++) {
        for (uint64_t keys = 0; keys <= 50; keys += 50) {
            once_filter *f = small_filter(all_types[t], keys);
            REQUIRE(f != NULL);
            size_t len = 0;
            uint8_t *orig = testing_save(f, &len);
            once_free(f);
            REQUIRE(orig != NULL);
            CHECK(load_and_vet(orig, len) == ONCE_OK);

            /* Every proper prefix is short of the lengths its header promises. */
            for (size_t n = 0; n < len; n++) {
                once_status st = load_and_vet(orig, n);
                if (st != ONCE_ERR_TRUNCATED)
                    fprintf(stderr, "%s prefix %zu: %s\n", once_type_name(all_types[t]), n,
                            once_strerror(st));
                CHECK(st == ONCE_ERR_TRUNCATED);
                /* ... even with a checksum that fits the shortened bytes. */
                uint8_t *sealed = testing_copy_exact(orig, n);
                testing_reseal(sealed, n);
                CHECK(load_and_vet(sealed, n) != ONCE_OK);
                free(sealed);
            }

            /* Bytes after the checksum are refused: a file is exactly one filter. */
            const size_t extra[] = {1, 8, 64};
            for (size_t e = 0; e < sizeof extra / sizeof extra[0]; e++) {
                uint8_t *longer = calloc(1, len + extra[e]);
                REQUIRE(longer != NULL);
                memcpy(longer, orig, len);
                CHECK(load_and_vet(longer, len + extra[e]) == ONCE_ERR_CORRUPT);
                /* The checksum repeated as the trailer, then a trailer resealed. */
                size_t tail = extra[e] < 8 ? extra[e] : 8;
                memcpy(longer + len + extra[e] - tail, orig + len - tail, tail);
                CHECK(load_and_vet(longer, len + extra[e]) == ONCE_ERR_CORRUPT);
                testing_reseal(longer, len + extra[e]);
                CHECK(load_and_vet(longer, len + extra[e]) == ONCE_ERR_CORRUPT);
                free(longer);
            }
            once_free_buffer(orig);
        }
    }
}

/* --------------------------------------------------------- hostile headers */

/*
 * A file assembled from parts with a valid checksum: the first 48 bytes of `header`
 * (its parameter length field replaced by `params_len`), `nparams` parameter words,
 * the payload length field, then `payload_bytes` bytes of payload.
 */
static uint8_t *compose(const uint8_t *header, uint32_t params_len, const uint64_t *params,
                        size_t nparams, uint64_t payload_len, const uint8_t *payload,
                        size_t payload_bytes, size_t *len)
{
    *len = HEADER + nparams * 8 + 8 + payload_bytes + 8;
    uint8_t *buf = calloc(1, *len);
    if (buf == NULL)
        return NULL;
    memcpy(buf, header, HEADER);
    testing_put_le(buf + OFF_PARAMS_LEN, params_len, 4);
    for (size_t i = 0; i < nparams; i++)
        testing_put_le(buf + HEADER + i * 8, params[i], 8);
    testing_put_le(buf + HEADER + nparams * 8, payload_len, 8);
    if (payload_bytes != 0 && payload != NULL)
        memcpy(buf + HEADER + nparams * 8 + 8, payload, payload_bytes);
    testing_reseal(buf, *len);
    return buf;
}

typedef struct base_file {
    once_type type;
    uint8_t *bytes;
    size_t len;
    uint64_t cells, hashes, payload_len;
    uint32_t cell_bits;
} base_file;

/* Load `buf` (taken over and freed) and check the precise status. */
static void expect_status(uint8_t *buf, size_t len, once_status want, const base_file *b,
                          const char *what)
{
    if (buf == NULL) {
        CHECK(buf != NULL);
        return;
    }
    once_status got = load_and_vet(buf, len);
    if (got != want) {
        fprintf(stderr, "%s, %s: got %s, expected %s\n", once_type_name(b->type), what,
                once_strerror(got), once_strerror(want));
        testing_failures++;
    }
    free(buf);
}

/* A copy of the base file with `bytes` bytes at `off` set to `v`, resealed. */
static void expect_field(const base_file *b, size_t off, int bytes, uint64_t v, once_status want,
                         const char *what)
{
    uint8_t *buf = testing_copy_exact(b->bytes, b->len);
    if (buf != NULL) {
        testing_put_le(buf + off, v, bytes);
        testing_reseal(buf, b->len);
    }
    expect_status(buf, b->len, want, b, what);
}

/* The base file's header with other parameters and an all-zero payload of
 * `payload_bytes` (zero, so that no cell of the new geometry reads as padding). */
static void expect_params(const base_file *b, uint64_t cells, uint64_t hashes,
                          size_t payload_bytes, once_status want, const char *what)
{
    uint8_t *payload = calloc(1, payload_bytes ? payload_bytes : 1);
    if (payload == NULL) {
        CHECK(payload != NULL);
        return;
    }
    uint64_t params[2] = {cells, hashes};
    size_t len = 0;
    uint8_t *buf = compose(b->bytes, 16, params, 2, payload_bytes, payload, payload_bytes, &len);
    free(payload);
    expect_status(buf, len, want, b, what);
}

/* Payload bytes for `cells` cells of the base's kind, as the writer rounds them. */
static size_t payload_for(const base_file *b, uint64_t cells)
{
    uint64_t words = (cells * b->cell_bits + 63) / 64;
    return (size_t)(((words + 7) & ~UINT64_C(7)) * 8);
}

static void hostile_common(const base_file *b)
{
    const uint64_t max_cells = UINT64_C(1) << 40;

    expect_field(b, OFF_SEED, 8, testing_get_le(b->bytes + OFF_SEED, 8), ONCE_OK, "unchanged, resealed");
    /* The checksum itself: wrong, or written big-endian. */
    {
        uint8_t *buf = testing_copy_exact(b->bytes, b->len);
        if (buf != NULL)
            buf[b->len - 1] ^= 0x40;
        expect_status(buf, b->len, ONCE_ERR_CHECKSUM, b, "checksum changed");
        buf = testing_copy_exact(b->bytes, b->len);
        if (buf != NULL) {
            uint64_t sum = testing_get_le(buf + b->len - 8, 8);
            for (int i = 0; i < 8; i++)
                buf[b->len - 8 + (size_t)i] = (uint8_t)(sum >> (56 - 8 * i));
        }
        expect_status(buf, b->len, ONCE_ERR_CHECKSUM, b, "checksum big-endian");
    }

    /* Magic and version are checked first: they say what the file is. */
    static const struct {
        size_t off;
        int bytes;
        uint64_t value;
        once_status want;
        const char *what;
    } what_the_file_is[] = {
        {OFF_MAGIC, 4, 0x45434e4f ^ 0x01000000u, ONCE_ERR_BAD_MAGIC, "magic ONCD"},
        {OFF_MAGIC, 4, 0x65636e6f, ONCE_ERR_BAD_MAGIC, "magic once"},
        {OFF_MAGIC, 4, 0, ONCE_ERR_BAD_MAGIC, "magic zero"},
        {OFF_VERSION, 2, 3, ONCE_ERR_VERSION, "version 3"},
        {OFF_VERSION, 2, 0, ONCE_ERR_VERSION, "version 0"},
        {OFF_VERSION, 2, 0x0100, ONCE_ERR_VERSION, "version 1 big-endian"},
        {OFF_VERSION, 2, 0x0200, ONCE_ERR_VERSION, "version 2 big-endian"},
        {OFF_VERSION, 2, 0xFFFF, ONCE_ERR_VERSION, "version 65535"},
    };
    for (size_t i = 0; i < sizeof what_the_file_is / sizeof what_the_file_is[0]; i++)
        expect_field(b, what_the_file_is[i].off, what_the_file_is[i].bytes,
                     what_the_file_is[i].value, what_the_file_is[i].want, what_the_file_is[i].what);

    expect_field(b, OFF_TYPE, 2, 0, ONCE_ERR_CORRUPT, "type 0");
    expect_field(b, OFF_TYPE, 2, 5, ONCE_ERR_CORRUPT, "type 5");
    expect_field(b, OFF_TYPE, 2, (uint64_t)b->type << 8, ONCE_ERR_CORRUPT, "type big-endian");
    expect_field(b, OFF_TYPE, 2, 0xFFFF, ONCE_ERR_CORRUPT, "type 65535");

    /* Flag bit 0 announces metadata the file lacks: its payload length is read as the
     * metadata length, which a small filter's payload is too long for (a payload of at
     * most 4096 bytes would then be short of its section). */
    expect_field(b, OFF_FLAGS, 4, 1,
                 b->payload_len >
                         ONCE_MAX_METADATA
                     ? ONCE_ERR_CORRUPT
                     : ONCE_ERR_TRUNCATED,
                 "flags 1");
    expect_field(b, OFF_FLAGS, 4, 0x80000000u, ONCE_ERR_VERSION, "flags high bit");

    /* The design error is a rate in [0, 1]: 1 is the design rate of an explicit
     * geometry too small for its capacity, which once_create records. */
    expect_field(b, OFF_ERROR, 8, UINT64_C(0x7FF8000000000000), ONCE_ERR_CORRUPT, "error NaN");
    expect_field(b, OFF_ERROR, 8, UINT64_C(0xFFF8000000000000), ONCE_ERR_CORRUPT, "error -NaN");
    expect_field(b, OFF_ERROR, 8, UINT64_C(0x7FF0000000000001), ONCE_ERR_CORRUPT,
                 "error signalling NaN");
    expect_field(b, OFF_ERROR, 8, double_bits(INFINITY), ONCE_ERR_CORRUPT, "error +inf");
    expect_field(b, OFF_ERROR, 8, double_bits(-INFINITY), ONCE_ERR_CORRUPT, "error -inf");
    expect_field(b, OFF_ERROR, 8, double_bits(-0.001), ONCE_ERR_CORRUPT, "error negative");
    expect_field(b, OFF_ERROR, 8, double_bits(1.0), ONCE_OK, "error 1");
    expect_field(b, OFF_ERROR, 8, double_bits(nextafter(1.0, 2.0)), ONCE_ERR_CORRUPT,
                 "error just above 1");
    expect_field(b, OFF_ERROR, 8, double_bits(2.5), ONCE_ERR_CORRUPT, "error 2.5");
    expect_field(b, OFF_ERROR, 8, double_bits(0.0), ONCE_OK, "error 0");
    expect_field(b, OFF_ERROR, 8, double_bits(nextafter(1.0, 0.0)), ONCE_OK, "error just below 1");

    expect_field(b, OFF_CAPACITY, 8, max_cells, ONCE_OK, "capacity 2^40");
    expect_field(b, OFF_CAPACITY, 8, max_cells + 1, ONCE_ERR_CORRUPT, "capacity 2^40+1");
    expect_field(b, OFF_CAPACITY, 8, UINT64_MAX, ONCE_ERR_CORRUPT, "capacity 2^64-1");
    /* Items is a counter, not a bound: any value is a valid (if overfilled) filter. */
    expect_field(b, OFF_ITEMS, 8, UINT64_MAX, ONCE_OK, "items 2^64-1");

    /* Parameter length: whole words, within the format's limit, within the file. */
    expect_field(b, OFF_PARAMS_LEN, 4, 12, ONCE_ERR_CORRUPT, "params_len 12");
    expect_field(b, OFF_PARAMS_LEN, 4, 17, ONCE_ERR_CORRUPT, "params_len 17");
    expect_field(b, OFF_PARAMS_LEN, 4, 4104, ONCE_ERR_CORRUPT, "params_len past the limit");
    expect_field(b, OFF_PARAMS_LEN, 4, 0xFFFFFFF8u, ONCE_ERR_CORRUPT, "params_len 2^32-8");
    expect_field(b, OFF_PARAMS_LEN, 4, 4096, ONCE_ERR_TRUNCATED, "params_len past the file");
    /* Consistent lengths but the wrong parameter count for an array layout. */
    {
        const uint8_t *payload = b->bytes + ARRAY_OFF_PAYLOAD;
        uint64_t params[3] = {b->cells, b->hashes, 0};
        size_t len = 0;
        uint8_t *buf = compose(b->bytes, 0, params, 0, b->payload_len, payload,
                               (size_t)b->payload_len, &len);
        expect_status(buf, len, ONCE_ERR_CORRUPT, b, "no parameters");
        buf = compose(b->bytes, 8, params, 1, b->payload_len, payload, (size_t)b->payload_len,
                      &len);
        expect_status(buf, len, ONCE_ERR_CORRUPT, b, "cells only");
        buf = compose(b->bytes, 24, params, 3, b->payload_len, payload, (size_t)b->payload_len,
                      &len);
        expect_status(buf, len, ONCE_ERR_CORRUPT, b, "an extra parameter");
    }

    /* Cells and k ranges (checked before the payload size, so no huge arithmetic). */
    expect_field(b, ARRAY_OFF_CELLS, 8, 0, ONCE_ERR_CORRUPT, "cells 0");
    expect_field(b, ARRAY_OFF_CELLS, 8, max_cells + 1, ONCE_ERR_CORRUPT, "cells 2^40+1");
    expect_field(b, ARRAY_OFF_CELLS, 8, UINT64_MAX, ONCE_ERR_CORRUPT, "cells 2^64-1");
    expect_field(b, ARRAY_OFF_CELLS, 8, max_cells, ONCE_ERR_CORRUPT, "cells 2^40, small payload");
    expect_field(b, ARRAY_OFF_HASHES, 8, 0, ONCE_ERR_CORRUPT, "hashes 0");
    expect_field(b, ARRAY_OFF_HASHES, 8, 65, ONCE_ERR_CORRUPT, "hashes 65");
    expect_field(b, ARRAY_OFF_HASHES, 8, (UINT64_C(1) << 32) + b->hashes, ONCE_ERR_CORRUPT,
                 "hashes 2^32+k (k after truncation to 32 bits)");
    expect_field(b, ARRAY_OFF_HASHES, 8, UINT64_MAX, ONCE_ERR_CORRUPT, "hashes 2^64-1");

    /* The payload must be exactly the size the geometry implies. */
    expect_field(b, ARRAY_OFF_CELLS, 8, b->cells * 4, ONCE_ERR_CORRUPT, "cells x4, payload unchanged");
    expect_params(b, b->cells, b->hashes, (size_t)b->payload_len - 64, ONCE_ERR_CORRUPT,
                  "payload one line short");
    expect_params(b, b->cells, b->hashes, (size_t)b->payload_len + 64, ONCE_ERR_CORRUPT,
                  "payload one line long");
    expect_params(b, b->cells, b->hashes, 0, ONCE_ERR_CORRUPT, "payload empty");
    /* The payload length field disagreeing with the bytes present. */
    expect_field(b, ARRAY_OFF_PAYLOAD_LEN, 8, b->payload_len + 1, ONCE_ERR_TRUNCATED,
                 "payload_len past the file");
    expect_field(b, ARRAY_OFF_PAYLOAD_LEN, 8, UINT64_MAX, ONCE_ERR_TRUNCATED, "payload_len 2^64-1");
    expect_field(b, ARRAY_OFF_PAYLOAD_LEN, 8, b->payload_len - 8, ONCE_ERR_CORRUPT,
                 "payload_len short of the file");
    expect_field(b, ARRAY_OFF_PAYLOAD_LEN, 8, 0, ONCE_ERR_CORRUPT, "payload_len 0");

    /* Padding past the last cell must be zero. */
    uint64_t used = b->cells * b->cell_bits, total = b->payload_len * 8;
    if (used < total) {
        const uint64_t bits[] = {used, used + 1, total - 1};
        for (size_t i = 0; i < 3; i++) {
            uint8_t *buf = testing_copy_exact(b->bytes, b->len);
            if (buf != NULL) {
                buf[ARRAY_OFF_PAYLOAD + bits[i] / 8] |= (uint8_t)(1u << (bits[i] % 8));
                testing_reseal(buf, b->len);
            }
            expect_status(buf, b->len, ONCE_ERR_CORRUPT, b, "padding bit set");
        }
        /* The last real cell is not padding. */
        uint8_t *buf = testing_copy_exact(b->bytes, b->len);
        if (buf != NULL) {
            buf[ARRAY_OFF_PAYLOAD + (used - 1) / 8] |= (uint8_t)(1u << ((used - 1) % 8));
            testing_reseal(buf, b->len);
        }
        expect_status(buf, b->len, ONCE_OK, b, "last cell set");
    } else {
        /* Only the blocked layout has no padding: whole blocks are whole lines. */
        CHECK(b->type == ONCE_BLOCKED);
    }

    /* Relabelled as another structure: valid only if the geometry fits that layout. */
    for (size_t t = 0; t < NTYPES; t++) {
        once_type other = all_types[t];
        if (other == b->type)
            continue;
        uint32_t other_cell_bits = other == ONCE_COUNTING ? 4 : 1;
        int fits = other_cell_bits == b->cell_bits &&
                   (other != ONCE_BLOCKED || (b->cells % 512 == 0 && b->hashes <= 16)) &&
                   (other != ONCE_PARTITIONED || b->cells % b->hashes == 0);
        expect_field(b, OFF_TYPE, 2, other, fits ? ONCE_OK : ONCE_ERR_CORRUPT, "relabelled");
    }
}

static void hostile_specific(const base_file *b)
{
    switch (b->type) {
    case ONCE_STANDARD:
        expect_field(b, ARRAY_OFF_HASHES, 8, 64, ONCE_OK, "hashes 64");
        expect_field(b, ARRAY_OFF_HASHES, 8, 1, ONCE_OK, "hashes 1");
        /* Any cell count is a standard geometry if the payload fits it. */
        expect_params(b, 1, 3, 64, ONCE_OK, "one cell");
        expect_params(b, 512 + 1, 3, payload_for(b, 513), ONCE_OK, "513 cells");
        break;
    case ONCE_PARTITIONED:
        /* cells = 1002 = 3 x 334; other k must divide it. */
        expect_field(b, ARRAY_OFF_HASHES, 8, 6, ONCE_OK, "k 6 divides 1002");
        expect_field(b, ARRAY_OFF_HASHES, 8, 4, ONCE_ERR_CORRUPT, "k 4 does not divide 1002");
        expect_field(b, ARRAY_OFF_CELLS, 8, 1001, ONCE_ERR_CORRUPT, "cells 1001, k 3");
        expect_field(b, ARRAY_OFF_CELLS, 8, 1000, ONCE_ERR_CORRUPT, "cells 1000, k 3");
        expect_params(b, 999, 3, payload_for(b, 999), ONCE_OK, "cells 999, k 3");
        expect_params(b, 2, 3, 64, ONCE_ERR_CORRUPT, "fewer cells than slices");
        expect_params(b, 1024, 64, payload_for(b, 1024), ONCE_OK, "k 64, slices of 16");
        expect_params(b, 1024, 65, payload_for(b, 1024), ONCE_ERR_CORRUPT, "k 65");
        break;
    default:
        break; /* windowed and growing layouts have their own cases in their test files */
    case ONCE_BLOCKED:
        /* One bit per lane of 16: k is at most 16; cells are whole 512-bit blocks. */
        expect_field(b, ARRAY_OFF_HASHES, 8, 16, ONCE_OK, "k 16");
        expect_field(b, ARRAY_OFF_HASHES, 8, 17, ONCE_ERR_CORRUPT, "k 17");
        expect_field(b, ARRAY_OFF_HASHES, 8, 64, ONCE_ERR_CORRUPT, "k 64");
        expect_field(b, ARRAY_OFF_CELLS, 8, 1000, ONCE_ERR_CORRUPT, "cells 1000");
        expect_field(b, ARRAY_OFF_CELLS, 8, 1023, ONCE_ERR_CORRUPT, "cells 1023");
        expect_field(b, ARRAY_OFF_CELLS, 8, 960, ONCE_ERR_CORRUPT, "cells 960");
        expect_params(b, 1536, 3, payload_for(b, 1536), ONCE_OK, "three blocks");
        expect_params(b, 1536 - 64, 3, payload_for(b, 1536 - 64), ONCE_ERR_CORRUPT,
                      "two and seven-eighths blocks");
        expect_params(b, 512, 3, 64, ONCE_OK, "one block");
        expect_params(b, 256, 3, 64, ONCE_ERR_CORRUPT, "half a block");
        break;
    case ONCE_COUNTING:
        expect_field(b, ARRAY_OFF_HASHES, 8, 64, ONCE_OK, "hashes 64");
        /* 1000 counters need 4000 bits: the payload of 1000 bits is too short. */
        expect_params(b, 1000, 3, payload_for(b, 250), ONCE_ERR_CORRUPT,
                      "payload sized for bits, not counters");
        expect_params(b, 16, 3, 64, ONCE_OK, "sixteen counters");
        break;
    }
}

static void hostile_headers(void)
{
    for (size_t t = 0; t < NTYPES; t++) {
        once_filter *f = small_filter(all_types[t], 50);
        REQUIRE(f != NULL);
        once_stats st;
        CHECK_OK(once_get_stats(f, &st));
        base_file b = {all_types[t], NULL, 0, st.bits, st.hashes, 0,
                       all_types[t] == ONCE_COUNTING ? 4 : 1};
        b.bytes = testing_save(f, &b.len);
        once_free(f);
        REQUIRE(b.bytes != NULL);
        b.payload_len = testing_get_le(b.bytes + ARRAY_OFF_PAYLOAD_LEN, 8);
        REQUIRE(testing_get_le(b.bytes + ARRAY_OFF_CELLS, 8) == b.cells);
        REQUIRE(b.len == ARRAY_OFF_PAYLOAD + b.payload_len + 8);
        REQUIRE(b.payload_len == payload_for(&b, b.cells));
        hostile_common(&b);
        hostile_specific(&b);
        once_free_buffer(b.bytes);
    }
}

/* ------------------------------------------------------------- endianness */

static void endianness(void)
{
    const uint64_t seed = UINT64_C(0x0102030405060708);
    for (size_t t = 0; t < NTYPES; t++) {
        once_type type = all_types[t];
        once_filter *f = make_geometry(type, 512, 2, seed, 100);
        REQUIRE(f != NULL);
        add_keys(f, 1, 0, 5);
        once_stats st;
        CHECK_OK(once_get_stats(f, &st));
        size_t len = 0;
        uint8_t *b = testing_save(f, &len);
        once_free(f);
        REQUIRE(b != NULL);
        uint64_t payload = type == ONCE_COUNTING ? 256 : 64;
        REQUIRE(len == 48 + 16 + 8 + payload + 8);

        CHECK(memcmp(b, "ONCE", 4) == 0);
        CHECK(b[4] == ONCE_FORMAT_VERSION && b[5] == 0);
        CHECK(b[6] == (uint8_t)type && b[7] == 0);
        const uint8_t seed_le[8] = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
        CHECK(memcmp(b + 8, seed_le, 8) == 0);
        const uint8_t five[8] = {5, 0, 0, 0, 0, 0, 0, 0};
        CHECK(memcmp(b + 16, five, 8) == 0);
        const uint8_t hundred[8] = {100, 0, 0, 0, 0, 0, 0, 0};
        CHECK(memcmp(b + 24, hundred, 8) == 0);
        uint64_t eb = double_bits(st.error);
        CHECK(st.error > 0.0 && st.error < 1.0);
        for (int i = 0; i < 8; i++)
            CHECK(b[32 + i] == (uint8_t)(eb >> (8 * i)));
        const uint8_t params_len[4] = {16, 0, 0, 0}, zero4[4] = {0, 0, 0, 0};
        CHECK(memcmp(b + 40, params_len, 4) == 0);
        CHECK(memcmp(b + 44, zero4, 4) == 0);
        const uint8_t cells[8] = {0x00, 0x02, 0, 0, 0, 0, 0, 0}; /* 512 */
        CHECK(memcmp(b + 48, cells, 8) == 0);
        const uint8_t hashes[8] = {2, 0, 0, 0, 0, 0, 0, 0};
        CHECK(memcmp(b + 56, hashes, 8) == 0);
        CHECK(b[64] == (uint8_t)payload && b[65] == (uint8_t)(payload >> 8));
        for (int i = 66; i < 72; i++)
            CHECK(b[i] == 0);
        uint64_t sum = XXH3_64bits(b, len - 8);
        for (int i = 0; i < 8; i++)
            CHECK(b[len - 8 + (size_t)i] == (uint8_t)(sum >> (8 * i)));
        once_free_buffer(b);
    }

    /* The payload is the array as little-endian words: cell p of a bit array is bit
     * p % 8 of payload byte p / 8.  With one cell probe per key (k = 1) over 64 cells,
     * the probe is reduce(mix(XXH3-128(key, seed).low64), 64), the top six bits of the
     * mix, the 128-bit product by the golden ratio's 64 bits folded by xor (format 2,
     * lib/core/hash.h), so the one bit a key sets can be predicted here. */
    for (uint64_t i = 0; i < 64; i++) {
        once_filter *f = make_geometry(ONCE_STANDARD, 64, 1, seed, 1);
        REQUIRE(f != NULL);
        testing_key k = testing_key_make(9, i);
        CHECK_OK(once_add(f, &k, sizeof k, 0));
        size_t len = 0;
        uint8_t *b = testing_save(f, &len);
        once_free(f);
        REQUIRE(b != NULL);
        REQUIRE(len == ARRAY_OFF_PAYLOAD + 64 + 8);
        uint64_t low64 = XXH3_128bits_withSeed(&k, sizeof k, seed).low64;
        unsigned __int128 product = (unsigned __int128)low64 * UINT64_C(0x9E3779B97F4A7C15);
        uint64_t mixed = (uint64_t)product ^ (uint64_t)(product >> 64);
        unsigned pos = (unsigned)(mixed >> 58);
        for (unsigned byte = 0; byte < 64; byte++) {
            uint8_t want = byte == pos / 8 ? (uint8_t)(1u << (pos % 8)) : 0;
            CHECK(b[ARRAY_OFF_PAYLOAD + byte] == want);
        }
        once_free_buffer(b);
    }
}

/* ------------------------------------------------------------ arguments */

static void invalid_arguments(void)
{
    once_filter *f = small_filter(ONCE_COUNTING, 10);
    REQUIRE(f != NULL);
    size_t len = 0;
    uint8_t *buf = testing_save(f, &len);
    REQUIRE(buf != NULL);

    once_filter *g = NULL;
    CHECK_STATUS(once_load(NULL, buf, len), ONCE_ERR_INVALID);
    CHECK_STATUS(once_load(&g, NULL, len), ONCE_ERR_INVALID);
    CHECK(g == NULL);
    CHECK_STATUS(once_load(&g, NULL, 1), ONCE_ERR_INVALID);
    /* No bytes at all is a valid, if empty, buffer: it is short of a filter. */
    CHECK_STATUS(once_load(&g, NULL, 0), ONCE_ERR_TRUNCATED);
    CHECK(g == NULL);

    sink s = {0};
    CHECK_STATUS(once_save(NULL, sink_write, &s), ONCE_ERR_INVALID);
    CHECK_STATUS(once_save(f, NULL, &s), ONCE_ERR_INVALID);
    CHECK(s.calls == 0);
    void *out = NULL;
    size_t out_len = 0;
    CHECK_STATUS(once_save_to_buffer(NULL, &out, &out_len), ONCE_ERR_INVALID);
    CHECK_STATUS(once_save_to_buffer(f, NULL, &out_len), ONCE_ERR_INVALID);
    CHECK_STATUS(once_save_to_buffer(f, &out, NULL), ONCE_ERR_INVALID);
    CHECK(out == NULL);
    CHECK(once_saved_size(NULL) == 0);

    /* A writer that fails at any one of its calls fails the save with ONCE_ERR_IO, and
     * is not called again after the failure. */
    CHECK_OK(once_save(f, sink_write, &s));
    int calls = s.calls;
    CHECK(s.len == len && memcmp(s.data, buf, len) == 0);
    free(s.data);
    CHECK(calls > 1);
    for (int fail = 1; fail <= calls; fail++) {
        sink failing = {0};
        failing.fail_at = fail;
        CHECK_STATUS(once_save(f, sink_write, &failing), ONCE_ERR_IO);
        CHECK(failing.calls == fail);
        free(failing.data);
    }
    /* The filter is untouched by failed saves. */
    size_t len2 = 0;
    uint8_t *buf2 = testing_save(f, &len2);
    CHECK(buf2 != NULL && len2 == len && memcmp(buf2, buf, len) == 0);
    once_free_buffer(buf2);
    once_free_buffer(buf);
    once_free(f);
}

/* The application's metadata: saved and loaded byte for byte at every length, counted
 * in the sizes, held to the same checks as the rest of the file, and gone when cleared. */
static void metadata_round_trip(void)
{
    uint8_t bytes[ONCE_MAX_METADATA + 1];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t)(i * 7 + 1); /* binary: includes NUL and high bytes */
    const size_t lengths[] = {1, 7, 8, 9, 100, ONCE_MAX_METADATA};
    for (size_t t = 0; t < NTYPES; t++) {
        for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
            size_t n = lengths[li];
            once_filter *f = small_filter(all_types[t], 20);
            REQUIRE(f != NULL);
            uint64_t plain_size = once_saved_size(f), plain_bytes = once_bytes(f);
            CHECK_OK(once_set_metadata(f, bytes, n));
            CHECK(once_bytes(f) == plain_bytes + n);
            CHECK(once_saved_size(f) == plain_size + 8 + ((n + 7) / 8) * 8);
            size_t len = 0;
            uint8_t *buf = testing_save(f, &len);
            REQUIRE(buf != NULL);
            CHECK(len == once_saved_size(f));
            once_filter *g = NULL;
            CHECK(load_and_vet(buf, len) == ONCE_OK);
            CHECK_OK(once_load(&g, buf, len));
            REQUIRE(g != NULL);
            const void *got = NULL;
            size_t got_len = 0;
            CHECK_OK(once_get_metadata(g, &got, &got_len));
            CHECK(got_len == n && got != NULL && memcmp(got, bytes, n) == 0);
            CHECK(testing_same_save(f, g));

            if (n % 8 != 0) { /* non-zero padding is refused, even resealed */
                uint8_t *bad = testing_copy_exact(buf, len);
                size_t params = (size_t)testing_get_le(bad + OFF_PARAMS_LEN, 4);
                bad[HEADER + params + 8 + n] = 1;
                testing_reseal(bad, len);
                CHECK(load_and_vet(bad, len) == ONCE_ERR_CORRUPT);
                free(bad);
            }
            if (li == 0) {
                /* A length past the limit, or zero with the flag set, is refused. */
                uint8_t *bad = testing_copy_exact(buf, len);
                size_t params = (size_t)testing_get_le(bad + OFF_PARAMS_LEN, 4);
                testing_put_le(bad + HEADER + params, ONCE_MAX_METADATA + 1, 8);
                testing_reseal(bad, len);
                CHECK(load_and_vet(bad, len) != ONCE_OK);
                testing_put_le(bad + HEADER + params, 0, 8);
                testing_reseal(bad, len);
                CHECK(load_and_vet(bad, len) == ONCE_ERR_CORRUPT);
                /* A flag this format does not define: a file from a newer version. */
                memcpy(bad, buf, len);
                testing_put_le(bad + OFF_FLAGS, 3, 4);
                testing_reseal(bad, len);
                CHECK(load_and_vet(bad, len) == ONCE_ERR_VERSION);
                free(bad);
                /* Every proper prefix is truncated. */
                for (size_t cut = 0; cut < len; cut++)
                    CHECK(load_and_vet(buf, cut) == ONCE_ERR_TRUNCATED);
            }
            once_free_buffer(buf);

            /* Clearing removes the section: the file is the plain one again. */
            CHECK_OK(once_set_metadata(g, NULL, 0));
            CHECK_OK(once_get_metadata(g, &got, &got_len));
            CHECK(got == NULL && got_len == 0);
            CHECK(once_saved_size(g) == plain_size && once_bytes(g) == plain_bytes);
            once_free(g);
            once_free(f);
        }
    }
    once_filter *f = small_filter(ONCE_STANDARD, 0);
    REQUIRE(f != NULL);
    const void *got = NULL;
    size_t got_len = 1;
    CHECK_OK(once_get_metadata(f, &got, &got_len));
    CHECK(got == NULL && got_len == 0);
    CHECK_STATUS(once_set_metadata(f, bytes, ONCE_MAX_METADATA + 1), ONCE_ERR_TOO_LARGE);
    CHECK_STATUS(once_set_metadata(f, NULL, 3), ONCE_ERR_INVALID);
    CHECK_STATUS(once_set_metadata(NULL, bytes, 3), ONCE_ERR_INVALID);
    CHECK_STATUS(once_get_metadata(f, NULL, &got_len), ONCE_ERR_INVALID);
    once_free(f);
}

/* ------------------------------------------------------------- format 1 */

/* Another loaded copy of a format-1 file of tests/golden/v1 (test_golden.c), or NULL. */
static once_filter *format1_load(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/v1/%s.once", ONCE_GOLDEN_DIR, name);
    FILE *in = fopen(path, "rb");
    if (in == NULL)
        return NULL;
    static uint8_t buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf, in);
    fclose(in);
    uint8_t *file = testing_copy_exact(buf, len);
    once_filter *f = NULL;
    if (file != NULL && once_load(&f, file, len) != ONCE_OK)
        f = NULL;
    free(file);
    return f;
}

/* A filter of format 2 with the geometry and seed of the format-1 file `name`: the
 * configuration of tests/unit/every_structure.h it was made from (golden.h), under its
 * seed.  Should that configuration change, the two no longer match (ONCE_ERR_MISMATCH
 * below, not ONCE_ERR_PROBE_MISMATCH). */
static once_filter *format2_twin(const char *name, const once_filter *old)
{
    named_config configs[64];
    size_t count = every_structure(configs, 64);
    for (size_t i = 0; i < count; i++)
        if (strcmp(configs[i].name, name) == 0) {
            once_config c = configs[i].config;
            c.seed = once_seed(old);
            return testing_create(&c);
        }
    return NULL;
}

/* The format-1 golden file `name` loaded, and its format-2 twin (both or the test stops). */
static void format1_and_twin(const char *name, once_filter **old, once_filter **young)
{
    *old = format1_load(name);
    REQUIRE(*old != NULL);
    *young = format2_twin(name, *old);
    REQUIRE(*young != NULL);
}

/* Filters of format 1 and 2 place keys differently, so their cells do not combine:
 * union, intersection, the pair estimates and a DBF delta are refused with
 * ONCE_ERR_PROBE_MISMATCH (whose message names format 1), and change nothing; two of
 * format 1 combine as they always did. */
static void format1_and_format2_do_not_combine(void)
{
    once_filter *old = NULL, *young = NULL, *old2 = format1_load("standard");
    REQUIRE(old2 != NULL);
    format1_and_twin("standard", &old, &young);
    CHECK(testing_stats(young).format == ONCE_FORMAT_VERSION);
    CHECK(strcmp(testing_stats(young).probe, "mixed") == 0);
    CHECK_OK(once_add(young, "k", 1, 0));
    size_t before_len = 0;
    uint8_t *before = testing_save(young, &before_len);
    once_cardinality card;
    CHECK_STATUS(once_union(young, old), ONCE_ERR_PROBE_MISMATCH);
    CHECK_STATUS(once_union(old, young), ONCE_ERR_PROBE_MISMATCH);
    CHECK_STATUS(once_intersect(young, old), ONCE_ERR_PROBE_MISMATCH);
    CHECK_STATUS(once_estimate_union(old, young, 0.9, &card), ONCE_ERR_PROBE_MISMATCH);
    CHECK_STATUS(once_estimate_intersection(young, old, 0.9, &card), ONCE_ERR_PROBE_MISMATCH);
    size_t after_len = 0;
    uint8_t *after = testing_save(young, &after_len);
    CHECK(before && after && before_len == after_len && memcmp(before, after, after_len) == 0);
    once_free_buffer(before);
    once_free_buffer(after);
    CHECK(strstr(once_strerror(ONCE_ERR_PROBE_MISMATCH), "format 1") != NULL);
    CHECK_OK(once_union(old, old2));
    once_free(young);
    once_free(old);
    once_free(old2);

    /* The block-partitioned union of two resolutions checks the same. */
    format1_and_twin("bpbf", &old, &young);
    CHECK_STATUS(once_bpbf_union(young, old), ONCE_ERR_PROBE_MISMATCH);
    once_free(young);
    once_free(old);

    /* A DBF delta carries its source's format: one from a format-1 DBF is refused by
     * a format-2 replica, and the other way. */
    format1_and_twin("dbf", &old, &young);
    void *delta = NULL;
    size_t delta_len = 0;
    CHECK_OK(once_dbf_export_delta(old, 0, &delta, &delta_len));
    CHECK(delta_len > 8 && ((uint8_t *)delta)[4] == 1);
    CHECK_STATUS(once_dbf_apply_delta(young, delta, delta_len), ONCE_ERR_PROBE_MISMATCH);
    once_free_buffer(delta);
    CHECK_OK(once_dbf_export_delta(young, 0, &delta, &delta_len));
    CHECK(delta_len > 8 && ((uint8_t *)delta)[4] == ONCE_FORMAT_VERSION);
    CHECK_STATUS(once_dbf_apply_delta(old, delta, delta_len), ONCE_ERR_PROBE_MISMATCH);
    once_free_buffer(delta);
    once_free(young);
    once_free(old);
}

static const testing_case cases[] = {
    {"metadata_round_trip", metadata_round_trip},
    {"round_trip", round_trip},
    {"every_byte_corruption", every_byte_corruption},
    {"every_truncation", every_truncation},
    {"hostile_headers", hostile_headers},
    {"endianness", endianness},
    {"invalid_arguments", invalid_arguments},
    {"format1_and_format2_do_not_combine", format1_and_format2_do_not_combine},
};

TESTING_MAIN(cases)
