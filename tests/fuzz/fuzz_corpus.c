/*
 * fuzz_corpus.c - seed inputs for fuzz_load: small saved filters of every structure,
 * empty and with keys, in a few geometries (with and without padding past the last
 * cell, the largest k each layout allows; scalable chains of one to four sub-filters;
 * DBFs of one and several rows; filters in shards; those with keys carry metadata),
 * each also as a chunked dump.  Small seeds keep the fuzzer's mutations dense in the header and
 * parameters, where the validation is.
 *
 *   fuzz_corpus DIR    writes DIR/<structure>-<bits>-<k>-<keys>.once and .chunks
 */
#include "once_advanced.h"
#include "testing.h"

#include <stdio.h>
#include <stdlib.h>

static int write_config(const char *dir, const once_config *config, uint64_t keys,
                        const char *label);
static int write_scalable(const char *dir, int variant, uint64_t keys);
static int write_dbf(const char *dir, int variant, uint64_t keys);

static int write_seed(const char *dir, once_type type, uint64_t bits, uint32_t hashes,
                      uint64_t keys)
{
    once_config c = testing_config(type, 0x5eed0000u + bits + hashes);
    c.bits = bits;
    c.hashes = hashes;
    c.capacity = keys ? keys : 10;
    char label[64];
    snprintf(label, sizeof label, "%llu-%u", (unsigned long long)bits, hashes);
    return write_config(dir, &c, keys, label);
}

/* Windowed seeds: small windows, keys spread over a few spans of virtual time. */
static int write_window(const char *dir, once_type type, int variant, uint64_t keys)
{
    once_config c = testing_config_any_kind(type, 50, 40, 1000, 0x5eed1000u + (uint64_t)variant);
    c.policy = variant & 1 ? ONCE_POLICY_REFRESH : ONCE_POLICY_FIRST;
    if (type == ONCE_APBBF && variant >= 2) {
        c.block_bits = 64;
        c.block_hashes = 4;
    }
    if (type == ONCE_TIMER) { /* fixed, then growing */
        c.dynamic = variant >= 2;
        if (variant >= 2)
            c.timer_bits = 8;
    }
    if (type == ONCE_TAGGED && variant >= 2) /* a first table for 5 keys: 60 grow it */
        c.capacity = 5;
    char label[64];
    snprintf(label, sizeof label, "window-%d", variant);
    return write_config(dir, &c, keys, label);
}

/* Scalable seeds: small sub-filters, so 60 keys make a chain of three or four, or fill a
 * non-scaling or memory-capped one and have the rest refused. */
static int write_scalable(const char *dir, int variant, uint64_t keys)
{
    static const struct {
        uint32_t expansion;
        double tightening;
        uint64_t max_bytes;
    } variants[] = {{2, 0.5, 0}, {0, 0.5, 0}, {3, 0.7, 0}, {1, 0.9, 1024}};
    once_config c = testing_config(ONCE_SCALABLE, 0x5eed2000u + (uint64_t)variant);
    c.error = 0.05;
    c.capacity = 10;
    c.expansion = variants[variant].expansion;
    c.tightening = variants[variant].tightening;
    c.max_bytes = variants[variant].max_bytes;
    char label[64];
    snprintf(label, sizeof label, "chain-%d", variant);
    return write_config(dir, &c, keys, label);
}

/* DBF seeds: rows of 100 counters (k = 3, c = 10), so 35 keys make four rows; the
 * variants add bit-slice storage and query-before-insert. */
static int write_dbf(const char *dir, int variant, uint64_t keys)
{
    once_config c = testing_config(ONCE_DBF, 0x5eed2000u + (uint64_t)variant);
    c.capacity = 10;
    c.bits = variant >= 2 ? 64 : 100;
    c.hashes = 3;
    c.bit_slice = (variant & 1) != 0;
    c.query_before_insert = variant == 2;
    char label[64];
    snprintf(label, sizeof label, "rows-%d", variant);
    return write_config(dir, &c, keys, label);
}

/* A filter of `config` holding keys 0 .. keys-1, or NULL after saying why. */
static once_filter *build(const once_config *config, uint64_t keys)
{
    once_filter *f = NULL;
    once_status st = once_create(&f, config);
    if (st != ONCE_OK) {
        fprintf(stderr, "fuzz_corpus: create %s: %s\n", once_type_name(config->type),
                once_strerror(st));
        return NULL;
    }
    for (uint64_t i = 0; i < keys; i++)
        once_add(f, &i, sizeof i, i * 97); /* about ten keys a 1000 ms span */
    return f;
}

/* `f` as a chunked dump in fuzz_load's form: [u16 length][chunk] ..., chunks of a few
 * words past the least the first one takes, so a small filter makes several. */
static once_status dump_chunks(const once_filter *f, uint8_t **out, size_t *out_len)
{
    size_t bound = once_save_chunk_min(f) + 64;
    size_t room = (size_t)once_saved_size(f) * 2 + 4096, len = 0;
    uint8_t *buf = malloc(room);
    if (buf == NULL)
        return ONCE_ERR_NOMEM;
    uint64_t cursor = 0;
    do {
        size_t n = 0;
        if (room - len < 2 + bound) {
            free(buf);
            return ONCE_ERR_TOO_LARGE;
        }
        once_status st = once_save_chunk(f, &cursor, bound, buf + len + 2, &n);
        if (st != ONCE_OK || n > 0xffff) {
            free(buf);
            return st != ONCE_OK ? st : ONCE_ERR_TOO_LARGE;
        }
        if (n != 0) {
            buf[len] = (uint8_t)n;
            buf[len + 1] = (uint8_t)(n >> 8);
            len += 2 + n;
        }
    } while (cursor != 0);
    *out = buf;
    *out_len = len;
    return ONCE_OK;
}

static int write_file(const char *path, const void *buf, size_t len)
{
    FILE *out = fopen(path, "wb");
    int ok = out != NULL && fwrite(buf, 1, len, out) == len;
    if (out != NULL && fclose(out) != 0)
        ok = 0;
    if (!ok) {
        perror(path);
        return -1;
    }
    return 0;
}

/* Save `f` (and free it) as DIR/<structure>-<label>-<keys>.once, and its chunked dump
 * as DIR/<structure>-<label>-<keys>.chunks. */
static int write_filter(const char *dir, once_filter *f, uint64_t keys, const char *label)
{
    once_type type = once_get_type(f);
    void *buf = NULL;
    uint8_t *chunks = NULL;
    size_t len = 0, chunks_len = 0;
    /* Seeds with keys carry application metadata, so the fuzzer mutates that section
     * too; empty seeds keep the plain layout. */
    once_status st = keys ? once_set_metadata(f, "key 2\tci 0", 11) : ONCE_OK;
    if (st == ONCE_OK)
        st = once_save_to_buffer(f, &buf, &len);
    if (st == ONCE_OK)
        st = dump_chunks(f, &chunks, &chunks_len);
    once_free(f);
    if (st != ONCE_OK) {
        fprintf(stderr, "fuzz_corpus: save: %s\n", once_strerror(st));
        once_free_buffer(buf);
        free(chunks);
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%s-%llu.once", dir, once_type_name(type), label,
             (unsigned long long)keys);
    int rc = write_file(path, buf, len);
    snprintf(path, sizeof path, "%s/%s-%s-%llu.chunks", dir, once_type_name(type), label,
             (unsigned long long)keys);
    if (rc == 0)
        rc = write_file(path, chunks, chunks_len);
    once_free_buffer(buf);
    free(chunks);
    return rc;
}

/* Sharded seeds: a blocked filter, a scalable chain and two time windows in a few
 * shards, the windows with late and repeated times. */
static int write_sharded(const char *dir, int variant, uint64_t keys)
{
    static const once_type types[] = {ONCE_BLOCKED, ONCE_SCALABLE, ONCE_TAGGED, ONCE_TIMER};
    once_config c = testing_config_any_kind(types[variant], 20, 0, 1000,
                                            0x5eed2000u + (uint64_t)variant);
    once_filter *f = NULL;
    once_status st = once_create_sharded(&f, &c, 2 + (uint32_t)variant);
    if (st != ONCE_OK) {
        fprintf(stderr, "fuzz_corpus: create sharded: %s\n", once_strerror(st));
        return -1;
    }
    for (uint64_t i = 0; i < keys; i++) {
        bool seen;
        (void)once_test_and_add(f, &i, sizeof i, i * 97 - (i % 5 == 0 ? i * 40 : 0), &seen);
    }
    char label[64];
    snprintf(label, sizeof label, "sharded-%d", variant);
    return write_filter(dir, f, keys, label);
}

static int write_config(const char *dir, const once_config *config, uint64_t keys,
                        const char *label)
{
    once_filter *f = build(config, keys);
    return f ? write_filter(dir, f, keys, label) : -1;
}

/* Block-partitioned seeds: static and dynamic, blocks not a multiple of 64 bits
 * (padding), several hashes a block, a D-BBF past its first batches, reduced ones. */
static int write_block_partitioned(const char *dir, int variant, uint64_t keys)
{
    static const struct {
        once_type type;
        uint64_t block_length;
        uint32_t blocks, hashes;
        uint64_t threshold;
        uint32_t reduce_to;
    } variants[] = {
        {ONCE_BPBF, 64, 4, 1, 0, 0},   {ONCE_BPBF, 100, 3, 2, 0, 0},
        {ONCE_BPBF, 700, 6, 1, 0, 2},  {ONCE_DBPBF, 100, 3, 2, 15, 0},
        {ONCE_DBPBF, 128, 5, 1, 25, 3},
    };
    once_config c = testing_config(variants[variant].type, 0x5eed3000u + (uint64_t)variant);
    c.capacity = 40;
    c.block_length = variants[variant].block_length;
    c.blocks = variants[variant].blocks;
    c.hashes = variants[variant].hashes;
    c.batch_threshold = variants[variant].threshold;
    c.max_bytes = variants[variant].threshold ? 4096 : 0;
    once_filter *f = build(&c, keys);
    if (f == NULL)
        return -1;
    uint32_t reduce_to = variants[variant].reduce_to;
    if (reduce_to != 0 && once_bpbf_reduce(f, reduce_to) != ONCE_OK) {
        fprintf(stderr, "fuzz_corpus: reduce %s\n", once_type_name(c.type));
        once_free(f);
        return -1;
    }
    char label[64];
    snprintf(label, sizeof label, "blocks-%d", variant);
    return write_filter(dir, f, keys, label);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    static const struct {
        once_type type;
        uint64_t bits;
        uint32_t hashes;
    } shapes[] = {
        {ONCE_STANDARD, 64, 1},     {ONCE_STANDARD, 100, 3},    {ONCE_STANDARD, 1000, 64},
        {ONCE_PARTITIONED, 64, 4},  {ONCE_PARTITIONED, 99, 3},  {ONCE_PARTITIONED, 1024, 64},
        {ONCE_BLOCKED, 512, 1},     {ONCE_BLOCKED, 512, 8},     {ONCE_BLOCKED, 1024, 16},
        {ONCE_COUNTING, 16, 2},     {ONCE_COUNTING, 100, 3},    {ONCE_COUNTING, 250, 64},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        failed |= write_seed(argv[1], shapes[i].type, shapes[i].bits, shapes[i].hashes, 0);
        failed |= write_seed(argv[1], shapes[i].type, shapes[i].bits, shapes[i].hashes, 20);
    }
    static const once_type windows[] = {ONCE_APBF, ONCE_APBBF, ONCE_TLBF, ONCE_TIMER,
                                        ONCE_TAGGED};
    for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++)
        for (int variant = 0; variant < 4; variant++)
            for (uint64_t keys = 0; keys <= 60; keys += 60)
                failed |= write_window(argv[1], windows[i], variant, keys);
    for (int variant = 0; variant < 4; variant++)
        for (uint64_t keys = 0; keys <= 60; keys += 60)
            failed |= write_scalable(argv[1], variant, keys);
    for (int variant = 0; variant < 4; variant++)
        for (uint64_t keys = 0; keys <= 35; keys += 35)
            failed |= write_dbf(argv[1], variant, keys);
    for (int variant = 0; variant < 5; variant++)
        for (uint64_t keys = 0; keys <= 60; keys += 60)
            failed |= write_block_partitioned(argv[1], variant, keys);
    for (int variant = 0; variant < 4; variant++)
        for (uint64_t keys = 0; keys <= 40; keys += 40)
            failed |= write_sharded(argv[1], variant, keys);
    return failed ? 1 : 0;
}
