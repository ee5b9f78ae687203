/*
 * test_chunks.c - what chunked save and load promise (once_advanced.h, "Chunks").
 *
 *   - every structure, empty and with keys, with and without metadata, dumped in
 *     chunks of any allowed size (the least the filter takes, odd sizes, 16 MiB)
 *     loads back into a filter that saves to the same bytes and answers alike; the
 *     chunks' bodies are exactly once_save's bytes, and each chunk fits its bound;
 *   - the loader refuses, at the chunk where it happens and with a precise status, a
 *     chunk out of order, repeated, missing, cut short, lengthened, damaged in any
 *     byte, from another dump, or past the end; an error is final, and a load
 *     abandoned at any point leaves nothing behind (AddressSanitizer checks leaks);
 *   - a hostile first chunk cannot make the loader allocate for a payload it has not
 *     received;
 *   - the saver refuses a bound too small for the first chunk, cursors it never gave,
 *     and a filter that changed during its dump.
 *
 * Chunks handed to the loader are heap copies of exactly their length, so that
 * AddressSanitizer sees any read past the end.
 */
#include "testing.h"

#include "chunk_layout.h"

#include <stdbool.h>

#define SIXTEEN_MIB ((size_t)16 << 20)

/* ----------------------------------------------------------------- helpers */

/* One structure to dump: a config, and the keys to add and when. */
typedef struct chunk_case {
    const char *name;
    once_config config;
    uint64_t keys;
    bool metadata;
} chunk_case;

/* Every structure with keys and empty; the ones with keys carry metadata.  Sizes stay
 * small but give dumps of tens of chunks at the smallest bounds; the scalable filter
 * grows a chain of sub-filters, the DBF several rows, the D-BBF several batches. */
static size_t chunk_cases(chunk_case *out, size_t room)
{
    /* Every registered structure, so a new one is chunk-tested without a list here. */
    once_type types[64];
    size_t count = once_structure_count();
    CHECK(count <= sizeof types / sizeof types[0]);
    if (count > sizeof types / sizeof types[0])
        count = sizeof types / sizeof types[0];
    for (size_t t = 0; t < count; t++)
        types[t] = once_structure_at(t)->type;
    size_t n = 0;
    for (size_t t = 0; t < count; t++) {
        for (int with_keys = 0; with_keys < 2 && n < room; with_keys++) {
            chunk_case *c = &out[n++];
            c->name = once_type_name(types[t]);
            c->config = testing_config_any_kind(types[t], 2000, 1000, 10000, 0xc4u + t);
            if (types[t] == ONCE_SCALABLE)
                c->config.capacity = 200; /* 1500 keys: a chain of four */
            if (types[t] == ONCE_DBF)
                c->config.capacity = 500; /* rows of 500 keys: three rows */
            if (types[t] == ONCE_DBPBF)
                c->config.batch_threshold = 600;
            if (types[t] == ONCE_SLICE) { /* cells given; a window of 10 s, in span_ms */
                c->config.bits = 8192;
                c->config.window = 0;
            }
            c->keys = with_keys ? 1500 : 0;
            c->metadata = with_keys;
        }
    }
    return n;
}

/* The time of key i: keys spread over a few spans of the time windows. */
static uint64_t key_time(uint64_t i)
{
    return i * 20;
}

/* A slice takes positions: key i of `domain` stands for three positions. */
static once_site_request slice_request(const once_filter *f, uint64_t domain, uint64_t i,
                                       once_site_op op, uint64_t *positions)
{
    once_memory_site_config config;
    CHECK_OK(once_slice_config(f, &config));
    for (int j = 0; j < 3; j++)
        positions[j] = testing_mix(domain * 1000003 + i * 3 + (uint64_t)j) % config.bits;
    return (once_site_request){.op = op, .positions = positions, .count = 3,
                               .time_ms = key_time(i)};
}

static once_filter *build_case(const chunk_case *c, uint64_t domain)
{
    once_filter *f = testing_create(&c->config);
    if (f == NULL)
        return NULL;
    for (uint64_t i = 0; i < c->keys && once_get_type(f) == ONCE_SLICE; i++) {
        uint64_t positions[3];
        once_site_request q = slice_request(f, domain, i, ONCE_SITE_SET, positions);
        CHECK_OK(once_slice_run(f, &q, 1));
    }
    for (uint64_t i = 0; i < c->keys && once_get_type(f) != ONCE_SLICE; i++) {
        testing_key k = testing_key_make(domain, i);
        CHECK_OK(once_add(f, &k, sizeof k, key_time(i)));
    }
    if (c->metadata)
        CHECK_OK(once_set_metadata(f, "key 1\tci 0\x00\xff", 12));
    return f;
}

/* Do two filters answer alike: the keys added (domain), and absent ones? */
static bool answer_alike(const once_filter *a, const once_filter *b, uint64_t domain,
                         uint64_t keys, uint64_t now)
{
    if (once_get_type(a) == ONCE_SLICE) {
        for (uint64_t i = 0; i < keys + 2000; i++) {
            uint64_t positions[3];
            once_site_request qa = slice_request(a, i < keys ? domain : 99, i, ONCE_SITE_TEST,
                                                 positions);
            once_site_request qb = qa;
            qa.time_ms = qb.time_ms = now;
            if (once_slice_run((once_filter *)a, &qa, 1) != ONCE_OK ||
                once_slice_run((once_filter *)b, &qb, 1) != ONCE_OK || qa.all_set != qb.all_set)
                return false;
        }
        return true;
    }
    for (uint64_t i = 0; i < keys + 2000; i++) {
        testing_key k = i < keys ? testing_key_make(domain, i) : testing_key_make(99, i);
        bool pa = false, pb = false;
        if (once_query(a, &k, sizeof k, now, &pa) != ONCE_OK ||
            once_query(b, &k, sizeof k, now, &pb) != ONCE_OK || pa != pb)
            return false;
    }
    return true;
}

/* A whole dump, each chunk in its own buffer. */
typedef struct dump {
    uint8_t **chunk;
    size_t *len;
    size_t count;
} dump;

static void dump_free(dump *d)
{
    for (size_t i = 0; i < d->count; i++)
        free(d->chunk[i]);
    free(d->chunk);
    free(d->len);
    memset(d, 0, sizeof *d);
}

/* Dump `f` in chunks of at most max_chunk bytes (the empty end call not kept). */
static bool dump_make(const once_filter *f, size_t max_chunk, dump *d)
{
    memset(d, 0, sizeof *d);
    uint8_t *buf = malloc(max_chunk);
    if (buf == NULL)
        return false;
    uint64_t cursor = 0;
    bool ok = true;
    do {
        size_t n = 0;
        once_status st = once_save_chunk(f, &cursor, max_chunk, buf, &n);
        if (st != ONCE_OK) {
            fprintf(stderr, "once_save_chunk: %s\n", once_strerror(st));
            ok = false;
            break;
        }
        CHECK(n <= max_chunk);
        CHECK(cursor < UINT64_C(1) << 63);
        if (n == 0)
            break;
        uint8_t **chunks = realloc(d->chunk, (d->count + 1) * sizeof *chunks);
        size_t *lens = realloc(d->len, (d->count + 1) * sizeof *lens);
        if (chunks)
            d->chunk = chunks;
        if (lens)
            d->len = lens;
        if (!chunks || !lens || (d->chunk[d->count] = testing_copy_exact(buf, n)) == NULL) {
            ok = false;
            break;
        }
        d->len[d->count++] = n;
    } while (cursor != 0);
    free(buf);
    if (!ok)
        dump_free(d);
    return ok;
}

/* Feed chunks (exact copies) until one is refused; that chunk's index in *at, its
 * status returned (ONCE_OK when all were taken).  The loader is not ended. */
static once_status feed(once_loader *l, uint8_t *const *chunks, const size_t *lens, size_t count,
                        size_t *at, bool *complete)
{
    *complete = false;
    for (size_t i = 0; i < count; i++) {
        uint8_t *copy = testing_copy_exact(chunks[i], lens[i]);
        once_status st = once_load_chunk(l, copy, lens[i], complete);
        free(copy);
        if (st != ONCE_OK) {
            *at = i;
            CHECK(!*complete);
            return st;
        }
    }
    *at = count;
    return ONCE_OK;
}

/* Load a sequence of chunks from begin to finish; the first refusal's status (the
 * loader's answer to every call after it), with the refused chunk in *at. */
static once_status load_sequence(uint8_t *const *chunks, const size_t *lens, size_t count,
                                 size_t *at, once_filter **out)
{
    *out = NULL;
    once_loader *l = NULL;
    once_status st = once_load_begin(&l);
    if (st != ONCE_OK)
        return st;
    bool complete = false;
    st = feed(l, chunks, lens, count, at, &complete);
    if (st != ONCE_OK) {
        /* An error is final: the next chunk and the finish get the same status. */
        if (count > 0) {
            uint8_t *copy = testing_copy_exact(chunks[0], lens[0]);
            CHECK(once_load_chunk(l, copy, lens[0], &complete) == st && !complete);
            free(copy);
        }
        static int sentinel;
        once_filter *g = (once_filter *)&sentinel;
        CHECK(once_load_finish(l, &g) == st);
        CHECK(g == NULL);
        return st;
    }
    st = once_load_finish(l, out);
    CHECK((st == ONCE_OK) == complete);
    CHECK((st == ONCE_OK) == (*out != NULL));
    return st;
}

/* A small filter with keys whose dump at `max_chunk` has several chunks. */
static once_filter *small_keyed(once_type type, uint64_t seed, uint64_t domain)
{
    once_config c = testing_config_any_kind(type, 300, 200, 10000, seed);
    if (type == ONCE_SLICE) {
        c.bits = 8192;
        c.window = 0;
    }
    once_filter *f = testing_create(&c);
    if (f == NULL)
        return NULL;
    for (uint64_t i = 0; i < 200 && type == ONCE_SLICE; i++) {
        uint64_t positions[3];
        once_site_request q = slice_request(f, domain, i, ONCE_SITE_SET, positions);
        CHECK_OK(once_slice_run(f, &q, 1));
    }
    for (uint64_t i = 0; i < 200 && type != ONCE_SLICE; i++) {
        testing_key k = testing_key_make(domain, i);
        CHECK_OK(once_add(f, &k, sizeof k, key_time(i)));
    }
    return f;
}

/* ------------------------------------------------------------- round trip */

/* Every structure, at the least bound the filter takes, odd bounds, a middling one and
 * 16 MiB: the bodies are the saved bytes, and the reload is the same filter. */
static void every_structure_round_trips(void)
{
    chunk_case cases_[32];
    size_t n = chunk_cases(cases_, 32);
    for (size_t i = 0; i < n; i++) {
        const chunk_case *c = &cases_[i];
        once_filter *f = build_case(c, 1);
        REQUIRE(f != NULL);
        size_t min = once_save_chunk_min(f);
        CHECK(min > ONCE_CHUNK_HEADER_SIZE + 48 && min <= ONCE_CHUNK_MIN);
        const size_t bounds[] = {min, min + 1, min + 13, min + 61, 4099, ONCE_CHUNK_MIN,
                                 SIXTEEN_MIB};
        size_t saved_len = 0;
        uint8_t *saved = testing_save(f, &saved_len);
        REQUIRE(saved != NULL);
        for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
            size_t bound = bounds[b] < min ? min : bounds[b];
            dump d;
            REQUIRE(dump_make(f, bound, &d));
            /* The bodies, in order, are the saved bytes; each chunk states its place. */
            size_t at = 0;
            bool framed = d.count > 0;
            for (size_t k = 0; k < d.count && framed; k++) {
                const uint8_t *ch = d.chunk[k];
                size_t body = d.len[k] - ONCE_CHUNK_HEADER_SIZE;
                framed = d.len[k] <= bound && body % 8 == 0 && body > 0 &&
                         memcmp(ch, "ONCK", 4) == 0 &&
                         testing_get_le(ch + CH_BODY_LEN, 4) == body &&
                         testing_get_le(ch + CH_OFFSET, 8) == at &&
                         testing_get_le(ch + CH_STREAM, 8) == saved_len &&
                         testing_get_le(ch + CH_TAG, 4) ==
                             (XXH3_64bits(saved, saved_len - 8) & 0xffff) &&
                         at + body <= saved_len &&
                         memcmp(ch + ONCE_CHUNK_HEADER_SIZE, saved + at, body) == 0;
                /* Chunks are as full as the bound allows, but for the last. */
                if (k + 1 < d.count)
                    framed = framed && d.len[k] + 8 > bound;
                at += body;
            }
            if (!framed || at != saved_len)
                fprintf(stderr, "%s (%" PRIu64 " keys) bound %zu: chunks are not the saved "
                                "bytes\n", c->name, c->keys, bound);
            CHECK(framed && at == saved_len);
            /* The first chunk holds the whole prefix. */
            CHECK(d.count > 0 && d.len[0] >= min);

            size_t refused = 0;
            once_filter *g = NULL;
            once_status st = load_sequence(d.chunk, d.len, d.count, &refused, &g);
            if (st != ONCE_OK)
                fprintf(stderr, "%s bound %zu: chunk %zu of %zu: %s\n", c->name, bound,
                        refused, d.count, once_strerror(st));
            CHECK_OK(st);
            if (g != NULL) {
                CHECK(testing_same_save(f, g));
                CHECK(answer_alike(f, g, 1, c->keys, key_time(c->keys)));
                once_free(g);
            }
            dump_free(&d);
        }
        once_free_buffer(saved);
        once_free(f);
    }
}

/* A filter of a few MiB in chunks of 64 KiB and 16 MiB, and the reloaded filter goes
 * on exactly like the original. */
static void large_filter_round_trips(void)
{
    once_filter *f = testing_make(ONCE_BLOCKED, 3000000, 0.001, 0xb16);
    REQUIRE(f != NULL);
    for (uint64_t i = 0; i < 100000; i++) {
        testing_key k = testing_key_make(1, i);
        CHECK_OK(once_add(f, &k, sizeof k, 0));
    }
    const size_t bounds[] = {(size_t)64 << 10, SIXTEEN_MIB};
    for (size_t b = 0; b < 2; b++) {
        dump d;
        REQUIRE(dump_make(f, bounds[b], &d));
        /* Every chunk full but the last: as few as the bound allows. */
        uint64_t body = (bounds[b] - ONCE_CHUNK_HEADER_SIZE) & ~(size_t)7;
        CHECK(d.count == (once_saved_size(f) + body - 1) / body);
        CHECK(b == 0 ? d.count > 30 : d.count == 1);
        size_t at = 0;
        once_filter *g = NULL;
        CHECK_OK(load_sequence(d.chunk, d.len, d.count, &at, &g));
        dump_free(&d);
        REQUIRE(g != NULL);
        CHECK(testing_same_save(f, g));
        for (uint64_t i = 0; i < 20000; i++) {
            testing_key k = testing_key_make(2, i);
            bool sf = false, sg = false;
            CHECK_OK(once_test_and_add(f, &k, sizeof k, 0, &sf));
            CHECK_OK(once_test_and_add(g, &k, sizeof k, 0, &sg));
            CHECK(sf == sg);
        }
        CHECK(testing_same_save(f, g));
        once_free(g);
    }
    once_free(f);
}

/* ---------------------------------------------------------------- refusals */

/* Out of order, repeated, missing, from another dump, past the end: each refused at
 * the chunk where it happens, with ONCE_ERR_SEQUENCE; a dump missing its end is
 * ONCE_ERR_TRUNCATED at the finish. */
static void sequence_errors_refused(void)
{
    const once_type types[] = {ONCE_STANDARD, ONCE_COUNTING, ONCE_APBF, ONCE_TLBF,
                               ONCE_TIMER,    ONCE_SCALABLE, ONCE_DBF,  ONCE_DBPBF};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        once_filter *f = small_keyed(types[t], 7, 1);
        /* Another filter of the same geometry and seed, other keys: same stream length. */
        once_filter *other = small_keyed(types[t], 7, 2);
        REQUIRE(f != NULL && other != NULL);
        size_t bound = once_save_chunk_min(f) + 64;
        dump d, e;
        REQUIRE(dump_make(f, bound, &d));
        REQUIRE(dump_make(other, bound, &e));
        const char *name = once_type_name(types[t]);
        if (d.count < 3 || e.count != d.count) {
            fprintf(stderr, "%s: %zu and %zu chunks\n", name, d.count, e.count);
            testing_failures++;
            dump_free(&d);
            dump_free(&e);
            once_free(f);
            once_free(other);
            continue;
        }
        size_t count = d.count;
        uint8_t **seq = malloc((count + 1) * sizeof *seq);
        size_t *lens = malloc((count + 1) * sizeof *lens);
        REQUIRE(seq && lens);
        size_t at = 0;
        once_filter *g = NULL;
#define EXPECT(N, WANT, AT, WHAT)                                                               \
    do {                                                                                        \
        once_status got_ = load_sequence(seq, lens, N, &at, &g);                                \
        if (got_ != (WANT) || (got_ != ONCE_OK && at != (AT)))                                  \
            fprintf(stderr, "%s, %s: %s at chunk %zu\n", name, WHAT, once_strerror(got_), at);  \
        CHECK(got_ == (WANT) && (got_ == ONCE_OK || at == (AT)));                               \
        once_free(g);                                                                           \
    } while (0)
#define RESET()                                                                                 \
    do {                                                                                        \
        memcpy(seq, d.chunk, count * sizeof *seq);                                              \
        memcpy(lens, d.len, count * sizeof *lens);                                              \
    } while (0)

        RESET();
        EXPECT(count, ONCE_OK, count, "in order");
        /* Two chunks swapped: the first out of place is refused. */
        for (size_t i = 0; i + 1 < count; i++) {
            RESET();
            seq[i] = d.chunk[i + 1], lens[i] = d.len[i + 1];
            seq[i + 1] = d.chunk[i], lens[i + 1] = d.len[i];
            EXPECT(count, ONCE_ERR_SEQUENCE, i, "swapped");
        }
        /* A chunk repeated: the repeat is refused. */
        for (size_t i = 0; i < count; i++) {
            RESET();
            memmove(seq + i + 1, seq + i, (count - i) * sizeof *seq);
            memmove(lens + i + 1, lens + i, (count - i) * sizeof *lens);
            EXPECT(count + 1, ONCE_ERR_SEQUENCE, i + 1, "repeated");
        }
        /* A chunk missing: the one after the gap is refused; the last missing leaves
         * the dump short at the finish. */
        for (size_t i = 0; i < count; i++) {
            RESET();
            memmove(seq + i, seq + i + 1, (count - i - 1) * sizeof *seq);
            memmove(lens + i, lens + i + 1, (count - i - 1) * sizeof *lens);
            if (i + 1 < count)
                EXPECT(count - 1, ONCE_ERR_SEQUENCE, i, "missing");
            else
                EXPECT(count - 1, ONCE_ERR_TRUNCATED, count - 1, "last missing");
        }
        /* A chunk of another filter's dump, at its own place: refused there (its first
         * chunk starts another dump, which the next chunk then does not continue). */
        for (size_t i = 0; i < count; i++) {
            RESET();
            seq[i] = e.chunk[i], lens[i] = e.len[i];
            EXPECT(count, ONCE_ERR_SEQUENCE, i == 0 ? 1 : i, "from another dump");
        }
        /* Past the end: a repeat of the last, or the first of a new dump. */
        RESET();
        seq[count] = d.chunk[count - 1], lens[count] = d.len[count - 1];
        EXPECT(count + 1, ONCE_ERR_SEQUENCE, count, "past the end");
        seq[count] = e.chunk[0], lens[count] = e.len[0];
        EXPECT(count + 1, ONCE_ERR_SEQUENCE, count, "a new dump past the end");
        /* Nothing at all. */
        EXPECT(0, ONCE_ERR_TRUNCATED, 0, "no chunks");
#undef EXPECT
#undef RESET
        free(seq);
        free(lens);
        dump_free(&d);
        dump_free(&e);
        once_free(f);
        once_free(other);
    }
}

/* Cut short or lengthened, damaged in any byte (as it is, and with the chunk's own
 * checksum made right again): always refused, most at that chunk, with the status of
 * what was damaged. */
static void damaged_chunks_refused(void)
{
    const once_type types[] = {ONCE_STANDARD, ONCE_BLOCKED, ONCE_APBBF, ONCE_TIMER,
                               ONCE_SCALABLE, ONCE_BPBF};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        once_filter *f = small_keyed(types[t], 11, 1);
        REQUIRE(f != NULL);
        const char *name = once_type_name(types[t]);
        dump d;
        REQUIRE(dump_make(f, once_save_chunk_min(f) + 128, &d));
        REQUIRE(d.count >= 3);
        size_t count = d.count;
        uint8_t **seq = malloc(count * sizeof *seq);
        size_t *lens = malloc(count * sizeof *lens);
        REQUIRE(seq && lens);
        memcpy(seq, d.chunk, count * sizeof *seq);
        memcpy(lens, d.len, count * sizeof *lens);
        size_t at = 0;
        once_filter *g = NULL;
        uint64_t trials = 0, wrong = 0;
        /* Each of the first, a middle and the last chunk. */
        const size_t victims[] = {0, count / 2, count - 1};
        for (size_t v = 0; v < 3; v++) {
            size_t i = victims[v];
            size_t len = d.len[i];
            uint8_t *bad = malloc(len + 8);
            REQUIRE(bad != NULL);
            seq[i] = bad;

            /* Cut short anywhere, or lengthened by a word. */
            for (size_t cut = 0; cut < len; cut += cut < 64 ? 1 : 29) {
                memcpy(bad, d.chunk[i], len);
                lens[i] = cut;
                once_status st = load_sequence(seq, lens, count, &at, &g);
                trials++;
                wrong += st != ONCE_ERR_TRUNCATED || at != i;
            }
            memcpy(bad, d.chunk[i], len);
            memset(bad + len, 0, 8);
            lens[i] = len + 8;
            trials++;
            wrong += load_sequence(seq, lens, count, &at, &g) != ONCE_ERR_CORRUPT || at != i;
            lens[i] = len;

            /* One byte changed, in every position of the header and a sample of the
             * body; as it is, then resealed. */
            for (size_t off = 0; off < len; off += off < 128 ? 1 : 37) {
                for (int reseal = 0; reseal < 2; reseal++) {
                    memcpy(bad, d.chunk[i], len);
                    bad[off] ^= (uint8_t)(1u << (off % 8));
                    if (reseal)
                        chunk_reseal(bad, len);
                    once_status st = load_sequence(seq, lens, count, &at, &g);
                    trials++;
                    once_free(g);
                    g = NULL;
                    bool ok;
                    if (off < CH_VERSION)
                        ok = st == ONCE_ERR_BAD_MAGIC && at == i;
                    else if (off < CH_RESERVED)
                        ok = st == ONCE_ERR_VERSION && at == i;
                    else if (off >= CH_BODY_LEN && off < CH_TAG)
                        ok = (st == ONCE_ERR_TRUNCATED || st == ONCE_ERR_CORRUPT) && at == i;
                    else if (!reseal)
                        ok = st == ONCE_ERR_CHECKSUM && at == i;
                    else if (off < CH_BODY_LEN) /* reserved */
                        ok = st == ONCE_ERR_VERSION && at == i;
                    else if (off < CH_OFFSET) /* the tag: another dump's, or out of range */
                        ok = (st == ONCE_ERR_SEQUENCE && at == (i == 0 ? 1 : i)) ||
                             (st == ONCE_ERR_CORRUPT && at == i);
                    else if (off < CH_CHECKSUM) /* offset, stream length */
                        ok = (st == ONCE_ERR_CORRUPT || st == ONCE_ERR_SEQUENCE) && at == i;
                    else if (off < ONCE_CHUNK_HEADER_SIZE) /* the reseal repairs it */
                        ok = st == ONCE_OK;
                    else /* the body: a prefix field at the first chunk, else the
                          * stream's checksum at the last */
                        ok = (st == ONCE_ERR_CHECKSUM && at == count - 1) ||
                             (i == 0 && at == 0 && st != ONCE_OK);
                    if (!ok)
                        fprintf(stderr, "%s chunk %zu byte %zu%s: %s at chunk %zu\n", name, i,
                                off, reseal ? " resealed" : "", once_strerror(st), at);
                    wrong += !ok;
                }
            }
            /* A body byte resealed reaches the stream's checksum at the last chunk. */
            size_t off = len - 9;
            memcpy(bad, d.chunk[i], len);
            bad[off] ^= 0x40;
            chunk_reseal(bad, len);
            once_status st = load_sequence(seq, lens, count, &at, &g);
            trials++;
            wrong += st != ONCE_ERR_CHECKSUM || at != count - 1;
            free(bad);
            seq[i] = d.chunk[i];
        }
        fprintf(stderr, "%-11s %zu chunks: %" PRIu64 " damaged sequences, %" PRIu64 " wrong\n",
                name, count, trials, wrong);
        CHECK(wrong == 0);
        free(seq);
        free(lens);
        dump_free(&d);
        once_free(f);
    }
}

/* `file` (a changed stream of the dump's length) cut as the dump `d` was, each chunk
 * with the tag of its checksum and resealed: a writer who means harm. */
static void rechunk(const dump *d, const uint8_t *file, size_t len, uint8_t **chunks)
{
    uint64_t tag = XXH3_64bits(file, len - 8) & 0xffff;
    for (size_t k = 0; k < d->count; k++) {
        memcpy(chunks[k], d->chunk[k], ONCE_CHUNK_HEADER_SIZE);
        size_t offset = (size_t)testing_get_le(d->chunk[k] + CH_OFFSET, 8);
        memcpy(chunks[k] + ONCE_CHUNK_HEADER_SIZE, file + offset,
               d->len[k] - ONCE_CHUNK_HEADER_SIZE);
        testing_put_le(chunks[k] + CH_TAG, tag, 4);
        chunk_reseal(chunks[k], d->len[k]);
    }
}

/* The loader's verdict on a dump is once_load's on the same bytes: every byte of a
 * saved stream before its payload, set to a few values and the stream resealed, then
 * cut as the dump was and the chunks resealed.  The same status, but that a length
 * once_load finds past the end (ONCE_ERR_TRUNCATED) is, between chunks that state the
 * stream's length, ONCE_ERR_CORRUPT; and the same filter when accepted.  A header or
 * metadata field out of its range is refused at the first chunk; the structure's
 * parameters, and header fields at odds with them, by the structure's own loader with
 * the payload, at the last. */
static void verdicts_match_once_load(void)
{
    const once_type types[] = {ONCE_COUNTING, ONCE_SCALABLE, ONCE_TLBF, ONCE_DBPBF};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        once_filter *f = small_keyed(types[t], 3, 1);
        REQUIRE(f != NULL);
        CHECK_OK(once_set_metadata(f, "abc", 3));
        dump d;
        REQUIRE(dump_make(f, once_save_chunk_min(f) + 256, &d));
        REQUIRE(d.count >= 2);
        size_t saved_len = 0;
        uint8_t *saved = testing_save(f, &saved_len);
        REQUIRE(saved != NULL);
        size_t prefix = once_save_chunk_min(f) - ONCE_CHUNK_HEADER_SIZE;
        size_t params_end = HEADER + (size_t)testing_get_le(saved + OFF_PARAMS_LEN, 4);
        uint8_t *file = malloc(saved_len);
        uint8_t **chunks = malloc(d.count * sizeof *chunks);
        REQUIRE(file && chunks);
        for (size_t k = 0; k < d.count; k++)
            REQUIRE((chunks[k] = malloc(d.len[k])) != NULL);
        uint64_t trials = 0, differ = 0, accepted = 0;
        const uint8_t values[] = {0x00, 0x01, 0x07, 0x80, 0xff};
        for (size_t off = 0; off < prefix; off++) {
            for (size_t v = 0; v < sizeof values; v++) {
                if (saved[off] == values[v])
                    continue;
                memcpy(file, saved, saved_len);
                file[off] = values[v];
                testing_reseal(file, saved_len);
                once_status whole = testing_load_and_vet(file, saved_len);
                rechunk(&d, file, saved_len, chunks);
                size_t at = 0;
                once_filter *g = NULL;
                once_status chunked = load_sequence(chunks, d.len, d.count, &at, &g);
                bool same = chunked == (whole == ONCE_ERR_TRUNCATED ? ONCE_ERR_CORRUPT : whole);
                if (whole == ONCE_OK) {
                    accepted++;
                    uint8_t *again = NULL;
                    size_t again_len = 0;
                    if (g != NULL)
                        again = testing_save(g, &again_len);
                    same = same && again && again_len == saved_len &&
                           memcmp(again, file, saved_len) == 0;
                    once_free_buffer(again);
                } else if (off >= HEADER && off < params_end) {
                    same = same && at == d.count - 1;
                } else { /* out of range at once, or at odds with the parameters */
                    same = same && (at == 0 || at == d.count - 1);
                }
                if (!same)
                    fprintf(stderr, "%s prefix byte %zu = 0x%02x: once_load %s, chunks %s at "
                                    "%zu\n", once_type_name(types[t]), off, values[v],
                            once_strerror(whole), once_strerror(chunked), at);
                trials++;
                differ += !same;
                once_free(g);
            }
        }
        fprintf(stderr, "%-11s %" PRIu64 " changed prefixes (%" PRIu64 " accepted), %" PRIu64
                        " differ\n", once_type_name(types[t]), trials, accepted, differ);
        CHECK(differ == 0 && accepted > 0 && accepted < trials);
        for (size_t k = 0; k < d.count; k++)
            free(chunks[k]);
        free(chunks);
        free(file);
        once_free_buffer(saved);
        dump_free(&d);
        once_free(f);
    }
}

/* A first chunk that declares a payload far larger than anything sent: the loader
 * takes it and the chunks after it without allocating for it (under AddressSanitizer
 * an allocation of 2^41 bytes would abort the run), and a declared length the stream
 * length does not match, or a first chunk short of the prefix, is refused. */
static void hostile_first_chunk_allocates_nothing(void)
{
    once_filter *f = small_keyed(ONCE_STANDARD, 5, 1);
    REQUIRE(f != NULL);
    size_t min = once_save_chunk_min(f);
    size_t prefix = min - ONCE_CHUNK_HEADER_SIZE;
    dump d;
    REQUIRE(dump_make(f, min, &d));
    REQUIRE(d.count >= 3 && d.len[0] == min);
    const uint64_t huge = UINT64_C(1) << 39;
    uint64_t stream = prefix + huge + 8;

    uint8_t *first = testing_copy_exact(d.chunk[0], d.len[0]);
    uint8_t *second = testing_copy_exact(d.chunk[1], d.len[1]);
    REQUIRE(first && second);
    testing_put_le(first + ONCE_CHUNK_HEADER_SIZE + prefix - 8, huge, 8);
    testing_put_le(first + CH_STREAM, stream, 8);
    chunk_reseal(first, d.len[0]);
    testing_put_le(second + CH_STREAM, stream, 8);
    chunk_reseal(second, d.len[1]);
    once_loader *l = NULL;
    CHECK_OK(once_load_begin(&l));
    bool complete = true;
    CHECK_OK(once_load_chunk(l, first, d.len[0], &complete));
    CHECK(!complete);
    for (int i = 0; i < 1000; i++) { /* the same bytes at each next offset */
        testing_put_le(second + CH_OFFSET, prefix + (uint64_t)i * (d.len[1] - 40), 8);
        chunk_reseal(second, d.len[1]);
        CHECK_OK(once_load_chunk(l, second, d.len[1], &complete));
    }
    CHECK_STATUS(once_load_finish(l, NULL), ONCE_ERR_INVALID); /* and frees it */

    /* The stream length disagrees with the prefix's payload length. */
    memcpy(first, d.chunk[0], d.len[0]);
    testing_put_le(first + CH_STREAM, testing_get_le(first + CH_STREAM, 8) + 8, 8);
    chunk_reseal(first, d.len[0]);
    CHECK_OK(once_load_begin(&l));
    CHECK_STATUS(once_load_chunk(l, first, d.len[0], NULL), ONCE_ERR_CORRUPT);
    once_load_abort(l);

    /* A first chunk one word short of the prefix. */
    size_t short_len = d.len[0] - 8;
    memcpy(first, d.chunk[0], short_len);
    testing_put_le(first + CH_BODY_LEN, short_len - ONCE_CHUNK_HEADER_SIZE, 4);
    chunk_reseal(first, short_len);
    uint8_t *exact = testing_copy_exact(first, short_len);
    CHECK_OK(once_load_begin(&l));
    CHECK_STATUS(once_load_chunk(l, exact, short_len, NULL), ONCE_ERR_CORRUPT);
    once_load_abort(l);
    free(exact);

    /* A stream of 1 TiB or more is no dump's. */
    memcpy(first, d.chunk[0], d.len[0]);
    testing_put_le(first + CH_STREAM, UINT64_C(1) << 40, 8);
    chunk_reseal(first, d.len[0]);
    CHECK_OK(once_load_begin(&l));
    CHECK_STATUS(once_load_chunk(l, first, d.len[0], NULL), ONCE_ERR_CORRUPT);
    once_load_abort(l);

    free(first);
    free(second);
    dump_free(&d);
    once_free(f);
}

/* Abandoned after any number of chunks, or complete but not finished: abort frees
 * everything (the leak check of AddressSanitizer is the assertion); finish before the
 * end is ONCE_ERR_TRUNCATED and frees too. */
static void abort_at_any_point(void)
{
    const once_type types[] = {ONCE_STANDARD, ONCE_TLBF, ONCE_SCALABLE, ONCE_DBF};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        once_filter *f = small_keyed(types[t], 13, 1);
        REQUIRE(f != NULL);
        CHECK_OK(once_set_metadata(f, "m", 1));
        dump d;
        REQUIRE(dump_make(f, once_save_chunk_min(f) + 200, &d));
        REQUIRE(d.count >= 2);
        for (size_t stop = 0; stop <= d.count; stop++) {
            for (int finish = 0; finish < 2; finish++) {
                once_loader *l = NULL;
                CHECK_OK(once_load_begin(&l));
                size_t at = 0;
                bool complete = false;
                CHECK_OK(feed(l, d.chunk, d.len, stop, &at, &complete));
                CHECK(complete == (stop == d.count));
                if (finish) {
                    once_filter *g = NULL;
                    CHECK_STATUS(once_load_finish(l, &g),
                                 stop == d.count ? ONCE_OK : ONCE_ERR_TRUNCATED);
                    CHECK((g != NULL) == (stop == d.count));
                    once_free(g);
                } else {
                    once_load_abort(l);
                }
            }
        }
        /* After an error, too. */
        once_loader *l = NULL;
        CHECK_OK(once_load_begin(&l));
        CHECK_OK(once_load_chunk(l, d.chunk[0], d.len[0], NULL));
        CHECK_STATUS(once_load_chunk(l, d.chunk[0], d.len[0], NULL), ONCE_ERR_SEQUENCE);
        once_load_abort(l);
        dump_free(&d);
        once_free(f);
    }
    once_load_abort(NULL);
}

/* ------------------------------------------------------------------ saving */

static void save_arguments_and_cursors(void)
{
    once_filter *f = small_keyed(ONCE_PARTITIONED, 17, 1);
    REQUIRE(f != NULL);
    size_t min = once_save_chunk_min(f);
    uint8_t *buf = malloc(SIXTEEN_MIB);
    REQUIRE(buf != NULL);
    uint64_t cursor = 0;
    size_t n = 99;
    CHECK(once_save_chunk_min(NULL) == 0);
    CHECK_STATUS(once_save_chunk(NULL, &cursor, min, buf, &n), ONCE_ERR_INVALID);
    CHECK(n == 0);
    CHECK_STATUS(once_save_chunk(f, NULL, min, buf, &n), ONCE_ERR_INVALID);
    CHECK_STATUS(once_save_chunk(f, &cursor, min, NULL, &n), ONCE_ERR_INVALID);
    CHECK_STATUS(once_save_chunk(f, &cursor, min, buf, NULL), ONCE_ERR_INVALID);

    /* The first chunk needs the whole prefix: min is the least bound, the header
     * and one word the least after it. */
    const size_t too_small[] = {0, 1, ONCE_CHUNK_HEADER_SIZE, min - 8, min - 1};
    for (size_t i = 0; i < sizeof too_small / sizeof too_small[0]; i++) {
        n = 99;
        CHECK_STATUS(once_save_chunk(f, &cursor, too_small[i], buf, &n), ONCE_ERR_INVALID);
        CHECK(cursor == 0 && n == 0);
    }
    CHECK_OK(once_save_chunk(f, &cursor, min, buf, &n));
    CHECK(n == min && cursor != 0);
    uint64_t second = cursor;
    CHECK_STATUS(once_save_chunk(f, &cursor, ONCE_CHUNK_HEADER_SIZE + 7, buf, &n),
                 ONCE_ERR_INVALID);
    CHECK(cursor == second);
    CHECK_OK(once_save_chunk(f, &cursor, ONCE_CHUNK_HEADER_SIZE + 15, buf, &n));
    CHECK(n == ONCE_CHUNK_HEADER_SIZE + 8);

    /* Cursors it never gave: past 2^53 (what a JavaScript client reads exactly), a tag
     * without an offset, an offset past the stream. */
    CHECK(second < UINT64_C(1) << 53);
    const uint64_t offset_mask = (UINT64_C(1) << 37) - 1;
    uint64_t bogus = UINT64_C(1) << 63;
    CHECK_STATUS(once_save_chunk(f, &bogus, min, buf, &n), ONCE_ERR_INVALID);
    bogus = second | UINT64_C(1) << 53;
    CHECK_STATUS(once_save_chunk(f, &bogus, min, buf, &n), ONCE_ERR_INVALID);
    bogus = second & ~offset_mask;
    CHECK_STATUS(once_save_chunk(f, &bogus, min, buf, &n), ONCE_ERR_INVALID);
    bogus = (second & ~offset_mask) | (once_saved_size(f) / 8 + 1);
    CHECK_STATUS(once_save_chunk(f, &bogus, min, buf, &n), ONCE_ERR_SEQUENCE);
    /* The end cursor gives the empty chunk and 0. */
    uint64_t end = (second & ~offset_mask) | (once_saved_size(f) / 8);
    CHECK_OK(once_save_chunk(f, &end, min, buf, &n));
    CHECK(end == 0 && n == 0);
    /* A tag other than the dump's: the last chunk refuses it. */
    bogus = second ^ (UINT64_C(1) << 37);
    n = 99;
    CHECK_STATUS(once_save_chunk(f, &bogus, SIXTEEN_MIB, buf, &n), ONCE_ERR_SEQUENCE);
    CHECK(n == 0);

    /* The filter changed during the dump: the last chunk says so. */
    cursor = 0;
    CHECK_OK(once_save_chunk(f, &cursor, min, buf, &n));
    testing_key k = testing_key_make(5, 1);
    CHECK_OK(once_add(f, &k, sizeof k, 0));
    CHECK_STATUS(once_save_chunk(f, &cursor, SIXTEEN_MIB, buf, &n), ONCE_ERR_SEQUENCE);
    /* And from the start again it dumps. */
    once_filter *g = testing_chunk_reload(f, min);
    CHECK(g != NULL && testing_same_save(f, g));
    once_free(g);

    /* A time window whose chain grows during a dump: the cursor outruns nothing, but
     * a filter that shrank is refused at once. */
    once_filter *s = testing_make(ONCE_SCALABLE, 10, 0.05, 3);
    REQUIRE(s != NULL);
    for (uint64_t i = 0; i < 200; i++) {
        testing_key key = testing_key_make(6, i);
        CHECK_OK(once_add(s, &key, sizeof key, 0));
    }
    size_t smin = once_save_chunk_min(s);
    cursor = 0;
    CHECK_OK(once_save_chunk(s, &cursor, smin, buf, &n));
    CHECK_OK(once_save_chunk(s, &cursor, SIXTEEN_MIB, buf, &n)); /* the last */
    CHECK(cursor != 0);
    CHECK_OK(once_clear(s)); /* back to one sub-filter: shorter */
    CHECK_STATUS(once_save_chunk(s, &cursor, SIXTEEN_MIB, buf, &n), ONCE_ERR_SEQUENCE);
    once_free(s);

    /* The loader's arguments. */
    CHECK_STATUS(once_load_begin(NULL), ONCE_ERR_INVALID);
    bool complete = true;
    CHECK_STATUS(once_load_chunk(NULL, buf, 10, &complete), ONCE_ERR_INVALID);
    CHECK(!complete);
    once_filter *out = (once_filter *)f;
    CHECK_STATUS(once_load_finish(NULL, &out), ONCE_ERR_INVALID);
    CHECK(out == NULL);
    once_loader *l = NULL;
    CHECK_OK(once_load_begin(&l));
    CHECK_STATUS(once_load_chunk(l, NULL, 10, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_load_chunk(l, buf, 0, NULL), ONCE_ERR_INVALID); /* final */
    once_load_abort(l);
    CHECK_OK(once_load_begin(&l));
    CHECK_STATUS(once_load_chunk(l, NULL, 0, NULL), ONCE_ERR_TRUNCATED);
    once_load_abort(l);

    free(buf);
    once_free(f);
}

/* The dump's bodies are once_save's bytes, so they load with once_load as well, and a
 * dump loads whatever bounds its chunks had (the bound may change from call to call). */
static void bodies_load_with_once_load(void)
{
    once_filter *f = small_keyed(ONCE_APBF, 19, 1);
    REQUIRE(f != NULL);
    size_t min = once_save_chunk_min(f);
    uint8_t *buf = malloc(min + 4096);
    size_t saved_len = 0;
    uint8_t *saved = testing_save(f, &saved_len);
    uint8_t *bodies = malloc(saved_len);
    REQUIRE(buf && saved && bodies);
    once_loader *l = NULL;
    CHECK_OK(once_load_begin(&l));
    uint64_t cursor = 0;
    size_t at = 0, n = 0, calls = 0;
    do {
        size_t bound = calls == 0 ? min : ONCE_CHUNK_HEADER_SIZE + 8 + (calls * 37) % 4096;
        CHECK_OK(once_save_chunk(f, &cursor, bound, buf, &n));
        if (n > 0) {
            memcpy(bodies + at, buf + ONCE_CHUNK_HEADER_SIZE, n - ONCE_CHUNK_HEADER_SIZE);
            at += n - ONCE_CHUNK_HEADER_SIZE;
            CHECK_OK(once_load_chunk(l, buf, n, NULL));
        }
        calls++;
    } while (cursor != 0 && calls < 100000);
    CHECK(at == saved_len && memcmp(bodies, saved, saved_len) == 0);
    once_filter *g = NULL, *h = NULL;
    CHECK_OK(once_load_finish(l, &g));
    CHECK_OK(once_load(&h, bodies, at));
    CHECK(g && h && testing_same_save(f, g) && testing_same_save(f, h));
    once_free(g);
    once_free(h);
    free(bodies);
    once_free_buffer(saved);
    free(buf);
    once_free(f);
}

static const testing_case cases[] = {
    {"every_structure_round_trips", every_structure_round_trips},
    {"large_filter_round_trips", large_filter_round_trips},
    {"sequence_errors_refused", sequence_errors_refused},
    {"damaged_chunks_refused", damaged_chunks_refused},
    {"verdicts_match_once_load", verdicts_match_once_load},
    {"hostile_first_chunk_allocates_nothing", hostile_first_chunk_allocates_nothing},
    {"abort_at_any_point", abort_at_any_point},
    {"save_arguments_and_cursors", save_arguments_and_cursors},
    {"bodies_load_with_once_load", bodies_load_with_once_load},
};

TESTING_MAIN(cases)
