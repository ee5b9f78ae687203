/*
 * golden/generate.c - writes the saved files of one format version (golden.h says what
 * each holds) with the library it is built against, and the digest vectors.  From the
 * repository root, with the library built (the files of tests/golden/v1 were made at
 * 57e552f, the last commit that wrote format 1, by this schedule):
 *
 *   cc -O2 -DONCE_USE_UNSTABLE_API -Ilib/include -Itests/unit -Itests -o generate \
 *       tests/golden/generate.c build/lib/libonce.a -lxxhash -lzstd -lm
 *   ./generate tests/golden/vN
 *
 * The files of a format are made once and committed: a later library must read them
 * and answer as the one that wrote them.
 */
#include "every_structure.h"
#include "golden/golden.h"
#include "once_advanced.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, const char *name, once_status st)
{
    fprintf(stderr, "generate: %s: %s: %s\n", name, what, once_strerror(st));
    exit(1);
}

static void write_file(const char *dir, const char *name, const char *suffix, const void *data,
                       size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, suffix);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* golden.h's schedule on `f` (taken over): NAME.once, its answers, NAME.more.once. */
static void generate_one(const char *dir, FILE *answers, const char *name, once_filter *f)
{
    once_status st;
    uint8_t key[GOLDEN_MAX_KEY];
    bool seen;
    for (uint32_t i = 0; i < GOLDEN_STORED; i++) {
        size_t len = golden_key('s', i, key);
        st = golden_test_and_add(f, key, len, (uint64_t)i * GOLDEN_STEP_MS, &seen);
        if (st != ONCE_OK && st != ONCE_ERR_FULL) /* a capped filter stops growing */
            fail("test_and_add", name, st);
    }
    if (once_structure_of(once_get_type(f))->deletes)
        for (uint32_t i = 0; i < GOLDEN_STORED; i += 7) {
            size_t len = golden_key('s', i, key);
            st = once_remove(f, key, len, (uint64_t)GOLDEN_STORED * GOLDEN_STEP_MS);
            if (st != ONCE_OK && st != ONCE_ERR_NOT_PRESENT && st != ONCE_ERR_UNSUPPORTED)
                fail("remove", name, st);
        }
    void *buffer = NULL;
    size_t size = 0;
    if ((st = once_save_to_buffer(f, &buffer, &size)) != ONCE_OK)
        fail("save", name, st);
    write_file(dir, name, ".once", buffer, size);

    fprintf(answers, "%s query ", name);
    uint64_t at = (uint64_t)GOLDEN_STORED * GOLDEN_STEP_MS;
    for (int set = 0; set < 2; set++)
        for (uint32_t i = 0; i < (set ? GOLDEN_ABSENT : GOLDEN_STORED); i++) {
            size_t len = golden_key(set ? 'a' : 's', i, key);
            bool present;
            if ((st = golden_query_key(f, key, len, at, &present)) != ONCE_OK)
                fail("query", name, st);
            fputc(present ? '1' : '0', answers);
        }
    fputc('\n', answers);
    once_free(f);

    if ((st = once_load(&f, buffer, size)) != ONCE_OK)
        fail("load", name, st);
    once_free_buffer(buffer);
    fprintf(answers, "%s more ", name);
    for (uint32_t i = 0; i < GOLDEN_MORE; i++) {
        size_t len = golden_key('c', i, key);
        st = golden_test_and_add(f, key, len, (uint64_t)(GOLDEN_STORED + i) * GOLDEN_STEP_MS,
                                 &seen);
        if (st != ONCE_OK && st != ONCE_ERR_FULL)
            fail("test_and_add", name, st);
        fputc(st == ONCE_ERR_FULL ? 'F' : seen ? '1' : '0', answers);
    }
    fputc('\n', answers);
    if ((st = once_save_to_buffer(f, &buffer, &size)) != ONCE_OK)
        fail("save", name, st);
    write_file(dir, name, ".more.once", buffer, size);
    once_free_buffer(buffer);
    once_free(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: generate OUTPUT_DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    named_config configs[64];
    size_t count = every_structure(configs, 64);
    char path[512];
    snprintf(path, sizeof path, "%s/answers.txt", dir);
    FILE *answers = fopen(path, "w");
    if (answers == NULL) {
        perror(path);
        return 1;
    }
    for (size_t c = 0; c < count; c++) {
        char name[64];
        snprintf(name, sizeof name, "%s", configs[c].name);
        for (char *p = name; *p; p++)
            if (*p == ' ' || *p == ',')
                *p = '-';
        once_filter *f = NULL;
        once_status st = once_create(&f, &configs[c].config);
        if (st != ONCE_OK)
            fail("create", name, st);
        generate_one(dir, answers, name, f);
    }
    for (size_t c = 0; c < GOLDEN_SLICES; c++) {
        once_filter *f = NULL;
        once_status st = once_slice_create(&f, &golden_slices[c].config);
        if (st != ONCE_OK)
            fail("create", golden_slices[c].name, st);
        generate_one(dir, answers, golden_slices[c].name, f);
    }
    for (size_t g = 0; g < GOLDEN_SHARDEDS; g++) {
        once_filter *f = NULL;
        once_status st = ONCE_ERR_INVALID;
        for (size_t c = 0; c < count; c++)
            if (strcmp(configs[c].name, golden_shardeds[g].of) == 0)
                st = once_create_sharded(&f, &configs[c].config, golden_shardeds[g].shards);
        if (st != ONCE_OK)
            fail("create", golden_shardeds[g].name, st);
        generate_one(dir, answers, golden_shardeds[g].name, f);
    }
    if (fclose(answers) != 0)
        return 1;

    snprintf(path, sizeof path, "%s/digests.txt", dir);
    FILE *digests = fopen(path, "w");
    if (digests == NULL) {
        perror(path);
        return 1;
    }
    for (uint32_t s = 0; s < GOLDEN_DIGEST_SEEDS; s++)
        for (uint32_t i = 0; i < GOLDEN_DIGEST_KEYS; i++) {
            uint8_t key[GOLDEN_DIGEST_MAX_KEY];
            size_t len = golden_digest_key(i, key);
            once_digest d;
            once_status st = once_digest_with_seed(golden_digest_seed(s), key, len, &d);
            if (st != ONCE_OK)
                fail("digest", "digests", st);
            fprintf(digests, "%016llx %zu %016llx %016llx\n",
                    (unsigned long long)golden_digest_seed(s), len, (unsigned long long)d.lo,
                    (unsigned long long)d.hi);
        }
    return fclose(digests) == 0 ? 0 : 1;
}
