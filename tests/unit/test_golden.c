/*
 * test_golden.c - what users saved loads and answers as it did: the committed files of
 * every saved format (tests/golden/vN, golden.h), made once by the library that wrote
 * that format, against the library under test; and the digest every position comes
 * from, against the vectors of the XXH3 it was made with.
 *
 * A build whose XXH3 (libxxhash) gives other digests fails here by name
 * (digests_are_the_xxh3_of_the_files), before the files' answers differ.
 */
#include "testing.h"
#include "golden/golden.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A whole file of tests/golden/vN (NULL if missing); its length in *len. */
static uint8_t *golden_file(int version, const char *name, const char *suffix, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/v%d/%s%s", ONCE_GOLDEN_DIR, version, name, suffix);
    FILE *in = fopen(path, "rb");
    if (in == NULL) {
        fprintf(stderr, "%s: cannot open\n", path);
        return NULL;
    }
    static uint8_t buf[1 << 20];
    *len = fread(buf, 1, sizeof buf, in);
    fclose(in);
    return testing_copy_exact(buf, *len);
}

/* The answers of `f` to golden.h's queries, as '0' and '1'; a query batch of the same
 * keys gives the same answers (batches probe through their own loops). */
static void golden_query(const once_filter *f, char *out)
{
    static uint8_t keys[GOLDEN_STORED + GOLDEN_ABSENT][GOLDEN_MAX_KEY];
    static once_key batch[GOLDEN_STORED + GOLDEN_ABSENT];
    static uint8_t batch_present[GOLDEN_STORED + GOLDEN_ABSENT];
    uint64_t at = (uint64_t)GOLDEN_STORED * GOLDEN_STEP_MS;
    size_t n = 0;
    for (int set = 0; set < 2; set++)
        for (uint32_t i = 0; i < (set ? GOLDEN_ABSENT : GOLDEN_STORED); i++) {
            size_t len = golden_key(set ? 'a' : 's', i, keys[n]);
            bool present = false;
            CHECK_OK(golden_query_key(f, keys[n], len, at, &present));
            batch[n] = (once_key){keys[n], len, at};
            out[n++] = present ? '1' : '0';
        }
    out[n] = 0;
    if (once_get_type(f) == ONCE_SLICE)
        return; /* no keys: no batches of them */
    CHECK_OK(once_query_batch(f, batch, n, batch_present));
    for (size_t i = 0; i < n; i++)
        CHECK(batch_present[i] == (out[i] == '1'));
}

/* The probe a file of `version` says it places keys with (once_stats.probe). */
static const char *probe_of(int version, once_type type)
{
    if (type == ONCE_BLOCKED || type == ONCE_SCALABLE)
        return "blocked";
    return version == 1 ? "linear" : "mixed";
}

/*
 * Every file of format `version` loads, whole and in chunks, answers golden.h's
 * queries exactly as the library that saved it did (false positives included: they
 * are where the probe shows), says which format and probe it has, saves to its own
 * bytes, and takes more keys as that library did: the same answers, and the very file
 * that library saved after them.  The types of the files loaded go to *types, their
 * count to *files.
 */
static unsigned sharded_files; /* of the files loaded, those sharded */

static void files_answer_as_saved(int version, uint32_t *types, int *files)
{
    char path[512];
    snprintf(path, sizeof path, "%s/v%d/answers.txt", ONCE_GOLDEN_DIR, version);
    FILE *answers = fopen(path, "r");
    REQUIRE(answers != NULL);
    /* A line of answers is at most 2200 characters (fscanf's width below). */
    _Static_assert(GOLDEN_STORED + GOLDEN_ABSENT <= 2200, "answers fit the line");
    static char name[128], kind[16], want[2201], got[2201];
    *files = 0;
    while (fscanf(answers, "%127s %15s %2200s", name, kind, want) == 3) {
        if (strcmp(kind, "query") == 0) {
            size_t len = 0;
            uint8_t *file = golden_file(version, name, ".once", &len);
            REQUIRE(file != NULL);
            once_filter *f = NULL;
            CHECK_OK(once_load(&f, file, len));
            REQUIRE(f != NULL);
            (*files)++;
            once_stats st = testing_stats(f);
            *types |= 1u << st.type;
            sharded_files += st.shards != 0;
            CHECK(st.format == (uint32_t)version);
            CHECK(strcmp(st.probe, probe_of(version, st.type)) == 0);
            golden_query(f, got);
            if (strcmp(got, want) != 0)
                fprintf(stderr, "v%d/%s: answers differ from the saving library's\n", version,
                        name);
            CHECK(strcmp(got, want) == 0);
            size_t again_len = 0;
            uint8_t *again = testing_save(f, &again_len);
            CHECK(again != NULL && again_len == len && memcmp(again, file, len) == 0);
            once_free_buffer(again);
            once_filter *chunked = testing_chunk_reload(f, once_save_chunk_min(f) + 64);
            REQUIRE(chunked != NULL);
            golden_query(chunked, got);
            CHECK(strcmp(got, want) == 0);
            CHECK(testing_same_save(f, chunked));
            once_free(chunked);
            once_free(f);
            free(file);
            continue;
        }
        REQUIRE(strcmp(kind, "more") == 0);
        size_t len = 0, more_len = 0;
        uint8_t *file = golden_file(version, name, ".once", &len);
        uint8_t *more = golden_file(version, name, ".more.once", &more_len);
        REQUIRE(file != NULL && more != NULL);
        once_filter *f = NULL;
        CHECK_OK(once_load(&f, file, len));
        REQUIRE(f != NULL);
        uint8_t key[GOLDEN_MAX_KEY];
        for (uint32_t i = 0; i < GOLDEN_MORE; i++) {
            size_t key_len = golden_key('c', i, key);
            bool seen = false;
            once_status st = golden_test_and_add(
                f, key, key_len, (uint64_t)(GOLDEN_STORED + i) * GOLDEN_STEP_MS, &seen);
            got[i] = st == ONCE_ERR_FULL ? 'F' : st != ONCE_OK ? '?' : seen ? '1' : '0';
        }
        got[GOLDEN_MORE] = 0;
        if (strcmp(got, want) != 0)
            fprintf(stderr, "v%d/%s: test-and-add answers differ from the saving library's\n",
                    version, name);
        CHECK(strcmp(got, want) == 0);
        size_t after_len = 0;
        uint8_t *after = testing_save(f, &after_len);
        bool same = after != NULL && after_len == more_len && memcmp(after, more, more_len) == 0;
        if (!same)
            fprintf(stderr, "v%d/%s: saves other bytes than the saving library after the same "
                            "keys\n", version, name);
        CHECK(same);
        once_free_buffer(after);
        once_free(f);
        free(file);
        free(more);
    }
    fclose(answers);
    fprintf(stderr, "%d files of format %d\n", *files, version);
}

/* Every structure of the registry has files of each format that has it. */
static void check_every_type(uint32_t types, int version)
{
    for (size_t i = 0; i < once_structure_count(); i++) {
        once_type type = once_structure_at(i)->type;
        if ((type == ONCE_SLICE || type == ONCE_TAGGED) && version == 1)
            continue; /* slices and tagged windows came after format 1 */
        if (!(types & (1u << type)))
            fprintf(stderr, "v%d: no file of %s\n", version, once_type_name(type));
        CHECK(types & (1u << type));
    }
}

static void format1_files_answer_as_saved(void)
{
    uint32_t types = 0;
    int files = 0;
    files_answer_as_saved(1, &types, &files);
    CHECK(files >= 19);
    check_every_type(types, 1);
}

static void format2_files_answer_as_saved(void)
{
    uint32_t types = 0;
    int files = 0;
    sharded_files = 0;
    files_answer_as_saved(2, &types, &files);
    CHECK(files >= 19);
    check_every_type(types, 2);
    CHECK(sharded_files == GOLDEN_SHARDEDS); /* sharded filters came with format 2 */
}

/*
 * The digests every saved position comes from: XXH3-128 of the key under the seed
 * (lib/core/hash.h), as the library that wrote format 2 computed them (v2/digests.txt),
 * over every key length to 255 bytes, which takes each of XXH3's paths.  The first
 * vector, the empty key under seed 0, is also xxHash's own published value for
 * XXH3_128bits of no input, 99aa06d3014798d8 6001c324468d497f.
 */
static void digests_are_the_xxh3_of_the_files(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/v2/digests.txt", ONCE_GOLDEN_DIR);
    FILE *in = fopen(path, "r");
    REQUIRE(in != NULL);
    unsigned long long seed, lo, hi;
    size_t len;
    uint32_t n = 0, differ = 0;
    while (fscanf(in, "%llx %zu %llx %llx", &seed, &len, &lo, &hi) == 4) {
        uint32_t s = n / GOLDEN_DIGEST_KEYS, i = n % GOLDEN_DIGEST_KEYS;
        REQUIRE(s < GOLDEN_DIGEST_SEEDS);
        CHECK(seed == golden_digest_seed(s) && len == i);
        if (n == 0)
            CHECK(lo == 0x6001c324468d497fULL && hi == 0x99aa06d3014798d8ULL);
        uint8_t key[GOLDEN_DIGEST_MAX_KEY];
        once_digest d;
        CHECK_OK(once_digest_with_seed(seed, key, golden_digest_key(i, key), &d));
        if (d.lo != lo || d.hi != hi) {
            if (differ++ == 0)
                fprintf(stderr, "seed %llx, %zu bytes: digest %016llx %016llx, the files' "
                                "%016llx %016llx: another XXH3?\n", seed, len,
                        (unsigned long long)d.hi, (unsigned long long)d.lo, hi, lo);
        }
        n++;
    }
    fclose(in);
    CHECK(n == GOLDEN_DIGEST_KEYS * GOLDEN_DIGEST_SEEDS);
    CHECK(differ == 0);
}

static const testing_case cases[] = {
    {"digests_are_the_xxh3_of_the_files", digests_are_the_xxh3_of_the_files},
    {"format1_files_answer_as_saved", format1_files_answer_as_saved},
    {"format2_files_answer_as_saved", format2_files_answer_as_saved},
};

TESTING_MAIN(cases)
