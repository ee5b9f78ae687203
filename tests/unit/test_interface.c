/*
 * test_interface.c - what every structure answers alike through the shared calls.
 *
 *   - a key's digest is XXH3-128 of the key under the seed, whatever the structure;
 *   - keys and digests are one path: twin filters of every structure, one fed keys and
 *     the other the keys' digests (swapped at random, one-key calls and batches, with
 *     times), give the same statuses, answers, counts and saved bytes;
 *   - once_positions names exactly the cells an insertion sets and a query reads, and
 *     once_standard_positions is the standard filter's, from the geometry alone;
 *   - a union or intersection that fails leaves its destination as it was.
 */
#include "every_structure.h"
#include "testing.h"
#include "once_math.h"

#include <stddef.h>

static uint64_t rng_next(uint64_t *state)
{
    *state = testing_mix(*state);
    return *state;
}

/* ---------------------------------------------------------------- digests */

/* The digest is the documented hash, and only the seed matters. */
static void digest_is_the_seeded_hash(void)
{
    named_config configs[32];
    size_t n = every_structure(configs, 32);
    const uint64_t seed = 0x0123456789abcdef;
    for (uint64_t i = 0; i < 200; i++) {
        testing_key k = testing_key_make(7, i);
        size_t len = (size_t)(i % (sizeof k + 1)); /* lengths 0 .. 16 */
        XXH128_hash_t want = XXH3_128bits_withSeed(&k, len, seed);
        once_digest d;
        CHECK_OK(once_digest_with_seed(seed, &k, len, &d));
        CHECK(d.lo == want.low64 && d.hi == want.high64);
        for (size_t c = 0; c < n; c++) {
            once_config config = configs[c].config;
            config.seed = seed;
            once_filter *f = testing_create(&config);
            REQUIRE(f != NULL);
            once_digest e;
            CHECK_OK(once_digest_key(f, &k, len, &e));
            CHECK(e.lo == d.lo && e.hi == d.hi);
            once_free(f);
        }
        once_digest other;
        CHECK_OK(once_digest_with_seed(seed + 1, &k, len, &other));
        CHECK(other.lo != d.lo || other.hi != d.hi);
    }
    /* The empty key may be given as NULL. */
    once_digest a, b;
    CHECK_OK(once_digest_with_seed(seed, NULL, 0, &a));
    CHECK_OK(once_digest_with_seed(seed, "", 0, &b));
    CHECK(a.lo == b.lo && a.hi == b.hi);
}

static void digest_arguments_checked(void)
{
    once_filter *f = testing_make(ONCE_COUNTING, 100, 0.01, 3);
    once_filter *w = NULL;
    once_config c = testing_config(ONCE_TLBF, 3);
    c.capacity = 100;
    c.span_ms = 1000;
    w = testing_create(&c);
    REQUIRE(f != NULL && w != NULL);
    once_digest d;
    bool yes = false;
    uint8_t out[2];
    CHECK_STATUS(once_digest_with_seed(1, NULL, 1, &d), ONCE_ERR_INVALID);
    CHECK_STATUS(once_digest_with_seed(1, "x", 1, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_digest_key(NULL, "x", 1, &d), ONCE_ERR_INVALID);
    CHECK_OK(once_digest_key(f, "x", 1, &d));
    CHECK_STATUS(once_add_digest(NULL, &d, 0), ONCE_ERR_INVALID);
    CHECK_STATUS(once_add_digest(f, NULL, 0), ONCE_ERR_INVALID);
    CHECK_STATUS(once_query_digest(f, &d, 0, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_query_digest(f, NULL, 0, &yes), ONCE_ERR_INVALID);
    CHECK_STATUS(once_test_and_add_digest(f, &d, 0, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_remove_digest(f, NULL, 0), ONCE_ERR_INVALID);
    CHECK_STATUS(once_remove_digest(f, &d, 0), ONCE_ERR_NOT_PRESENT);
    CHECK_STATUS(once_add_digest_batch(f, NULL, NULL, 1), ONCE_ERR_INVALID);
    CHECK_STATUS(once_query_digest_batch(f, &d, NULL, 1, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_test_and_add_digest_batch(NULL, &d, NULL, 1, out), ONCE_ERR_INVALID);
    size_t took = 7;
    CHECK_STATUS(once_test_and_add_digest_batch_partial(f, NULL, NULL, 1, out, &took),
                 ONCE_ERR_INVALID);
    CHECK(took == 0);
    CHECK_OK(once_add_digest_batch(f, NULL, NULL, 0));
    CHECK_OK(once_query_digest_batch(f, NULL, NULL, 0, NULL));
    CHECK(once_items(f) == 0);
    CHECK_OK(once_test_and_add_digest(f, &d, 0, &yes));
    CHECK(!yes && once_items(f) == 1);
    CHECK_OK(once_query_digest(f, &d, 0, &yes));
    CHECK(yes);
    CHECK_OK(once_remove_digest(f, &d, 0));
    CHECK_OK(once_query_digest(f, &d, 0, &yes));
    CHECK(!yes && once_items(f) == 0);
    /* Without times a batch is at time 0: a window whose clock is far ahead takes it
     * as late, and a query batch refuses a time past the clock's bound before it
     * answers anything. */
    once_digest two[2];
    CHECK_OK(once_digest_key(w, "a", 1, &two[0]));
    CHECK_OK(once_digest_key(w, "b", 1, &two[1]));
    CHECK_OK(once_add_digest(w, &two[0], 5000));
    out[0] = out[1] = 7;
    CHECK_OK(once_query_digest_batch(w, two, NULL, 2, out));
    CHECK(out[0] == 1 && out[1] == 0);
    uint64_t far[2] = {5000, 5000 + ONCE_DEFAULT_MAX_TIME_JUMP_MS + 1};
    out[0] = out[1] = 7;
    CHECK_STATUS(once_query_digest_batch(w, two, far, 2, out), ONCE_ERR_TIME);
    CHECK(out[0] == 7 && out[1] == 7);
    CHECK_STATUS(once_remove_digest(w, &two[0], 5000), ONCE_ERR_UNSUPPORTED);
    once_free(f);
    once_free(w);
}

/* One step of the twin drive: the same operation through keys on one filter and
 * through digests on the other. */
typedef struct twin_step {
    const char *label;
    uint64_t seed;
    int step;
} twin_step;

static void twin_fail(const twin_step *t, const char *what)
{
    fprintf(stderr, "%s: seed %" PRIu64 ", step %d: %s\n", t->label, t->seed, t->step, what);
    testing_failures++;
}

#define TWIN_BATCH 24

/*
 * Drive twins of `config` through seeded random operations.  At each step a coin
 * decides which of the two takes keys and which their digests (computed now from the
 * filter, now from the seed alone), so both forms reach both filters in turn.
 */
static void drive_twins(const once_config *config, const char *label, uint64_t seed)
{
    once_filter *twin[2] = {testing_create(config), testing_create(config)};
    if (twin[0] == NULL || twin[1] == NULL) {
        testing_failures++;
        once_free(twin[0]);
        once_free(twin[1]);
        return;
    }
    twin_step t = {label, seed, 0};
    uint64_t rng = seed, now = 0, span = config->span_ms ? config->span_ms : 1000;
    const uint64_t universe = 150 + seed % 200;
    for (t.step = 0; t.step < 1500; t.step++) {
        uint64_t r = rng_next(&rng);
        int keyed = (int)(r >> 63); /* twin[keyed] takes keys, the other digests */
        once_filter *kf = twin[keyed], *df = twin[!keyed];
        testing_key key = testing_key_make(seed, rng_next(&rng) % universe);
        once_digest d;
        if (r & 2)
            CHECK_OK(once_digest_key(df, &key, sizeof key, &d));
        else
            CHECK_OK(once_digest_with_seed(config->seed, &key, sizeof key, &d));
        once_status sk = ONCE_OK, sd = ONCE_OK;
        bool yk = false, yd = false;
        uint64_t pick = (r >> 8) % 100;
        if (pick < 30) {
            sk = once_test_and_add(kf, &key, sizeof key, now, &yk);
            sd = once_test_and_add_digest(df, &d, now, &yd);
        } else if (pick < 45) {
            sk = once_add(kf, &key, sizeof key, now);
            sd = once_add_digest(df, &d, now);
        } else if (pick < 60) {
            sk = once_query(kf, &key, sizeof key, now, &yk);
            sd = once_query_digest(df, &d, now, &yd);
        } else if (pick < 68) {
            sk = once_remove(kf, &key, sizeof key, now);
            sd = once_remove_digest(df, &d, now);
        } else if (pick < 88) {
            testing_key keys[TWIN_BATCH];
            once_key batch[TWIN_BATCH];
            once_digest digests[TWIN_BATCH];
            uint64_t times[TWIN_BATCH];
            size_t n = 1 + rng_next(&rng) % TWIN_BATCH;
            bool untimed = rng_next(&rng) % 4 == 0; /* times NULL: all at 0 */
            for (size_t i = 0; i < n; i++) {
                keys[i] = testing_key_make(seed, rng_next(&rng) % universe);
                times[i] = untimed ? 0 : now + i * (span / 40);
                batch[i] = (once_key){&keys[i], sizeof keys[i], times[i]};
                CHECK_OK(once_digest_with_seed(config->seed, &keys[i], sizeof keys[i],
                                               &digests[i]));
            }
            const uint64_t *digest_times = untimed ? NULL : times;
            uint8_t ok[TWIN_BATCH], od[TWIN_BATCH];
            memset(ok, 9, sizeof ok);
            memset(od, 9, sizeof od);
            uint64_t which = rng_next(&rng) % 3;
            if (which == 0 && n % 2 == 1) { /* the forms that say how many took effect */
                size_t dk = SIZE_MAX, dd = SIZE_MAX - 1;
                sk = once_test_and_add_batch_partial(kf, batch, n, ok, &dk);
                sd = once_test_and_add_digest_batch_partial(df, digests, digest_times, n, od,
                                                            &dd);
                if (dk != dd || (sk == ONCE_OK && dk != n))
                    twin_fail(&t, "partial batches took effect for different counts");
            } else if (which == 0) {
                sk = once_test_and_add_batch(kf, batch, n, ok);
                sd = once_test_and_add_digest_batch(df, digests, digest_times, n, od);
            } else if (which == 1) {
                sk = once_query_batch(kf, batch, n, ok);
                sd = once_query_digest_batch(df, digests, digest_times, n, od);
            } else {
                sk = once_add_batch(kf, batch, n);
                sd = once_add_digest_batch(df, digests, digest_times, n);
            }
            if (memcmp(ok, od, sizeof ok) != 0)
                twin_fail(&t, "batch answers differ");
            if (!untimed)
                now += (n - 1) * (span / 40);
        } else {
            now += rng_next(&rng) % (span / 3 + 1); /* time moves on */
        }
        if (sk != sd)
            twin_fail(&t, "statuses differ");
        if (yk != yd)
            twin_fail(&t, "answers differ");
        if (once_items(kf) != once_items(df))
            twin_fail(&t, "items differ");
        if ((t.step % 100 == 0 || t.step == 1499) && !testing_same_save(kf, df))
            twin_fail(&t, "saved bytes differ");
        if (testing_failures > 20)
            break;
    }
    once_free(twin[0]);
    once_free(twin[1]);
}

static void keys_and_digests_answer_alike(void)
{
    named_config configs[32];
    size_t n = every_structure(configs, 32);
    for (size_t i = 0; i < n; i++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            drive_twins(&configs[i].config, configs[i].name, 100 * i + seed);
}

/*
 * The key calls hash short keys in line and long ones out of line (core/hash.h): at
 * every length across XXH3's paths (0-16, 17-128, 129-240, longer) and that boundary,
 * twins of every structure, one fed keys and the other their digests, answer alike.
 * Each length is a few keys; a key is seen a second time, so "present" answers occur.
 */
static void keys_of_every_length_answer_as_digests(void)
{
    named_config configs[32];
    size_t n = every_structure(configs, 32);
    uint8_t bytes[300];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t)testing_mix(i);
    for (size_t c = 0; c < n; c++) {
        const once_config *config = &configs[c].config;
        once_filter *kf = testing_create(config), *df = testing_create(config);
        REQUIRE(kf != NULL && df != NULL);
        uint64_t now = 0;
        int differ = 0;
        for (size_t len = 0; len <= sizeof bytes - 8; len++) {
            for (uint64_t v = 0; v < 4; v++) {
                uint8_t *key = bytes + v % 2; /* keys v and v + 2 are the same */
                once_digest d;
                CHECK_OK(once_digest_key(df, key, len, &d));
                bool yk = false, yd = false;
                once_status sk, sd;
                if (v < 2) {
                    sk = once_test_and_add(kf, key, len, now, &yk);
                    sd = once_test_and_add_digest(df, &d, now, &yd);
                } else {
                    sk = once_query(kf, key, len, now, &yk);
                    sd = once_query_digest(df, &d, now, &yd);
                    differ += once_remove(kf, key, len, now) != once_remove_digest(df, &d, now);
                    differ += once_add(kf, key, len, now) != once_add_digest(df, &d, now);
                }
                differ += sk != sd || yk != yd || once_items(kf) != once_items(df);
            }
            now += 3;
        }
        if (differ != 0 || !testing_same_save(kf, df)) {
            fprintf(stderr, "  %s: key and digest calls differ (%d steps)\n", configs[c].name,
                    differ);
            testing_failures++;
        }
        once_free(kf);
        once_free(df);
    }
}

/* -------------------------------------------------------------- positions */

/* The payload words of a saved array filter (no metadata): header, parameters and the
 * payload length come first (lib/api/format.c). */
static uint64_t *saved_words(const once_filter *f, uint64_t *count)
{
    size_t len = 0;
    uint8_t *b = testing_save(f, &len);
    if (b == NULL)
        return NULL;
    uint64_t params = testing_get_le(b + OFF_PARAMS_LEN, 4);
    uint64_t bytes = testing_get_le(b + HEADER + params, 8);
    const uint8_t *payload = b + HEADER + params + 8;
    *count = bytes / 8;
    uint64_t *w = malloc(bytes ? bytes : 8);
    for (uint64_t i = 0; w != NULL && i < *count; i++)
        w[i] = testing_get_le(payload + 8 * i, 8);
    once_free_buffer(b);
    return w;
}

/* Cell i is set: a bit, or a non-zero 4-bit counter. */
static bool cell_set(const uint64_t *w, uint64_t i, bool counters)
{
    if (counters)
        return (w[i / 16] >> (4 * (i % 16)) & 15) != 0;
    return (w[i / 64] >> (i % 64)) & 1;
}

/*
 * Insert keys through their digests, then compare the array cell by cell with the
 * union of their positions: exactly those cells are set.  Then, for keys never added,
 * once_query answers "all its positions are set".
 */
static void check_positions(once_type type, uint64_t bits, uint32_t hashes, uint64_t keys)
{
    once_config c = testing_config(type, bits * 31 + hashes);
    c.capacity = 0;
    c.bits = bits;
    c.hashes = hashes;
    once_filter *f = testing_create(&c);
    REQUIRE(f != NULL);
    once_stats s = testing_stats(f);
    const uint64_t m = s.bits;
    const bool counters = type == ONCE_COUNTING;
    uint8_t *expect = calloc(m, 1);
    REQUIRE(expect != NULL);
    uint64_t pos[64];
    for (uint64_t i = 0; i < keys; i++) {
        testing_key k = testing_key_make(1, i);
        once_digest d;
        CHECK_OK(once_digest_key(f, &k, sizeof k, &d));
        uint32_t count = 64;
        CHECK_OK(once_positions(f, &d, pos, &count));
        CHECK(count == hashes);
        if (type == ONCE_STANDARD) {
            uint64_t pure[64];
            CHECK_OK(once_standard_positions(bits, hashes, &d, pure));
            CHECK(memcmp(pure, pos, count * sizeof pos[0]) == 0);
        }
        for (uint32_t j = 0; j < count; j++) {
            CHECK(pos[j] < m);
            if (pos[j] < m)
                expect[pos[j]] = 1;
            if (type == ONCE_PARTITIONED)
                CHECK(pos[j] / (m / hashes) == j); /* probe j in slice j */
            if (type == ONCE_BLOCKED)
                CHECK(pos[j] / 512 == pos[0] / 512); /* one block */
        }
        CHECK_OK(once_add_digest(f, &d, 0));
    }
    uint64_t nwords = 0;
    uint64_t *w = saved_words(f, &nwords);
    REQUIRE(w != NULL && nwords * 64 >= m * (counters ? 4 : 1));
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < m; i++)
        wrong += cell_set(w, i, counters) != (expect[i] != 0);
    CHECK(wrong == 0);
    for (uint64_t i = 0; i < 2000; i++) {
        testing_key k = testing_key_make(2, i);
        once_digest d;
        CHECK_OK(once_digest_key(f, &k, sizeof k, &d));
        uint32_t count = 64;
        CHECK_OK(once_positions(f, &d, pos, &count));
        bool all = true;
        for (uint32_t j = 0; j < count; j++)
            all = all && pos[j] < m && cell_set(w, pos[j], counters);
        bool present = !all;
        CHECK_OK(once_query(f, &k, sizeof k, 0, &present));
        CHECK(present == all);
    }
    free(w);
    free(expect);
    once_free(f);
}

static void positions_are_the_cells_a_key_sets(void)
{
    check_positions(ONCE_STANDARD, 1000, 7, 100);
    check_positions(ONCE_STANDARD, 1, 64, 3);
    check_positions(ONCE_STANDARD, 64, 1, 20);
    check_positions(ONCE_STANDARD, 100003, 11, 5000);
    check_positions(ONCE_PARTITIONED, 99, 3, 20);
    check_positions(ONCE_PARTITIONED, 7000, 7, 500);
    check_positions(ONCE_BLOCKED, 512, 16, 10);
    check_positions(ONCE_BLOCKED, 512 * 40, 7, 1000);
    check_positions(ONCE_COUNTING, 16, 2, 10);
    check_positions(ONCE_COUNTING, 3000, 5, 300);

    /* Room, arguments, and the structures without one array of cells. */
    once_filter *f = testing_make(ONCE_STANDARD, 100, 0.01, 5);
    REQUIRE(f != NULL);
    uint32_t k = testing_stats(f).hashes;
    once_digest d;
    CHECK_OK(once_digest_key(f, "key", 3, &d));
    uint64_t pos[64] = {0};
    uint32_t count = k - 1;
    CHECK_STATUS(once_positions(f, &d, pos, &count), ONCE_ERR_INVALID);
    CHECK(count == k && pos[0] == 0);
    count = 0;
    CHECK_STATUS(once_positions(f, &d, NULL, &count), ONCE_ERR_INVALID);
    CHECK(count == k);
    CHECK_STATUS(once_positions(f, &d, pos, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_positions(f, NULL, pos, &count), ONCE_ERR_INVALID);
    CHECK_STATUS(once_positions(NULL, &d, pos, &count), ONCE_ERR_INVALID);
    CHECK_STATUS(once_standard_positions(0, 3, &d, pos), ONCE_ERR_INVALID);
    CHECK_STATUS(once_standard_positions(100, 0, &d, pos), ONCE_ERR_INVALID);
    CHECK_STATUS(once_standard_positions(100, 65, &d, pos), ONCE_ERR_INVALID);
    CHECK_STATUS(once_standard_positions((UINT64_C(1) << 40) + 1, 3, &d, pos),
                 ONCE_ERR_INVALID);
    CHECK_STATUS(once_standard_positions(100, 3, NULL, pos), ONCE_ERR_INVALID);
    CHECK_STATUS(once_standard_positions(100, 3, &d, NULL), ONCE_ERR_INVALID);
    once_free(f);
    named_config configs[32];
    size_t n = every_structure(configs, 32);
    for (size_t i = 0; i < n; i++) {
        once_type type = configs[i].config.type;
        if (type <= ONCE_COUNTING)
            continue;
        once_filter *g = testing_create(&configs[i].config);
        REQUIRE(g != NULL);
        count = 64;
        CHECK_STATUS(once_positions(g, &d, pos, &count), ONCE_ERR_UNSUPPORTED);
        once_free(g);
    }
}

/* -------------------------------------------------------------- combining */

/* Fill a filter with `n` keys of `domain` (an insertion past a cap is fine). */
static void fill(once_filter *f, uint64_t domain, uint64_t n, uint64_t now)
{
    for (uint64_t i = 0; i < n; i++) {
        testing_key k = testing_key_make(domain, i);
        bool seen;
        (void)once_test_and_add(f, &k, sizeof k, now, &seen);
    }
}

static void add_keys(once_filter *f, uint64_t domain, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        testing_key k = testing_key_make(domain, i);
        CHECK_OK(once_add(f, &k, sizeof k, 0));
    }
}

/* `op` on dst must fail with `want` and leave dst saving the same bytes, with the
 * same items and memory. */
static void refused_unchanged(once_filter *dst, const once_filter *src, bool intersect,
                              once_status want, const char *what)
{
    size_t before_len = 0, after_len = 0;
    uint8_t *before = testing_save(dst, &before_len);
    uint64_t items = once_items(dst), bytes = once_bytes(dst);
    once_status st = intersect ? once_intersect(dst, src) : once_union(dst, src);
    uint8_t *after = testing_save(dst, &after_len);
    if (st != want) {
        fprintf(stderr, "%s: %s, expected %s\n", what, once_strerror(st), once_strerror(want));
        testing_failures++;
    }
    if (before == NULL || after == NULL || before_len != after_len ||
        memcmp(before, after, before_len) != 0 || once_items(dst) != items ||
        once_bytes(dst) != bytes) {
        fprintf(stderr, "%s: the refused combination changed dst\n", what);
        testing_failures++;
    }
    once_free_buffer(before);
    once_free_buffer(after);
}

static void failed_combination_leaves_dst_unchanged(void)
{
    named_config configs[32];
    size_t n = every_structure(configs, 32);
    for (size_t i = 0; i < n; i++) {
        const once_config *c = &configs[i].config;
        once_filter *dst = testing_create(c), *twin = testing_create(c);
        once_config other = *c;
        other.seed ^= 1;
        once_filter *foreign = testing_create(&other);
        REQUIRE(dst != NULL && twin != NULL && foreign != NULL);
        fill(dst, 1, 30, 100);
        fill(twin, 1, 30, 100); /* the same state: only the operation can be refused */
        fill(foreign, 1, 30, 100);
        char what[160];
        for (int intersect = 0; intersect < 2; intersect++) {
            snprintf(what, sizeof what, "%s %s another seed", configs[i].name,
                     intersect ? "intersect" : "union");
            refused_unchanged(dst, foreign, intersect, ONCE_ERR_MISMATCH, what);
        }
        /* What each structure refuses of a twin of its own geometry. */
        once_type t = c->type;
        snprintf(what, sizeof what, "%s intersect", configs[i].name);
        if (t == ONCE_APBF || t == ONCE_APBBF || t == ONCE_TLBF || t == ONCE_SCALABLE)
            refused_unchanged(dst, twin, true, ONCE_ERR_UNSUPPORTED, what);
        snprintf(what, sizeof what, "%s union", configs[i].name);
        if (t == ONCE_TLBF)
            refused_unchanged(dst, twin, false, ONCE_ERR_UNSUPPORTED, what);
        if (t == ONCE_TIMER && c->dynamic) { /* a growing timer filter combines with none */
            refused_unchanged(dst, twin, false, ONCE_ERR_MISMATCH, what);
            refused_unchanged(dst, twin, true, ONCE_ERR_MISMATCH, what);
        }
        once_free(dst);
        once_free(twin);
        once_free(foreign);
    }

    /* A union that needs memory past dst's cap: a DBF, and a D-BBF grown to the source's batches (once_bpbf_union). */
    for (int slices = 0; slices < 2; slices++) {
        once_config c = testing_config(ONCE_DBF, 44);
        c.capacity = 10;
        c.bits = 100;
        c.hashes = 3;
        c.bit_slice = slices;
        once_filter *probe = testing_create(&c);
        REQUIRE(probe != NULL);
        uint64_t one_row = once_bytes(probe);
        add_keys(probe, 1, 11);
        uint64_t per_row = once_bytes(probe) - one_row;
        once_free(probe);
        c.max_bytes = one_row + 2 * per_row; /* three rows */
        once_filter *dst = testing_create(&c), *src = testing_create(&c);
        REQUIRE(dst != NULL && src != NULL);
        add_keys(dst, 1, 25); /* three rows, the last not full */
        add_keys(src, 2, 25);
        CHECK(testing_stats(dst).filters == 3 && testing_stats(src).filters == 3);
        refused_unchanged(dst, src, false, ONCE_ERR_FULL, "dbf union past the cap");
        size_t before_len = 0, after_len = 0;
        uint8_t *before = testing_save(dst, &before_len);
        CHECK_STATUS(once_union(dst, src), ONCE_ERR_FULL);
        uint8_t *after = testing_save(dst, &after_len);
        CHECK(before && after && before_len == after_len &&
              memcmp(before, after, before_len) == 0);
        once_free_buffer(before);
        once_free_buffer(after);
        for (uint64_t i = 0; i < 25; i++) {
            testing_key k = testing_key_make(1, i);
            bool present = false;
            CHECK_OK(once_query(dst, &k, sizeof k, 0, &present));
            CHECK(present);
        }
        once_free(dst);
        once_free(src);
    }
    once_config b = testing_config(ONCE_DBPBF, 45);
    b.block_length = 100;
    b.blocks = 3;
    b.hashes = 2;
    b.batch_threshold = 10;
    b.max_bytes = 4096;
    once_filter *small = testing_create(&b);
    b.max_bytes = 1 << 20;
    once_filter *large = testing_create(&b);
    REQUIRE(small != NULL && large != NULL);
    fill(small, 1, 10, 0);
    add_keys(large, 3, 1000); /* 100 batches of at least a 64-byte line: past 4096 */
    once_bpbf_state state;
    CHECK_OK(once_bpbf_get_state(large, &state));
    CHECK(state.batches >= 100);
    size_t before_len = 0, after_len = 0;
    uint8_t *before = testing_save(small, &before_len);
    CHECK_STATUS(once_bpbf_union(small, large), ONCE_ERR_FULL);
    uint8_t *after = testing_save(small, &after_len);
    CHECK(before && after && before_len == after_len && memcmp(before, after, before_len) == 0);
    once_free_buffer(before);
    once_free_buffer(after);
    once_free(small);
    once_free(large);
}


/* A structure that grows takes a new memory cap on a filter that exists: refused,
 * unchanged, below what it holds; kept, and saved, otherwise.  The others have none. */
static void memory_cap_changes_on_a_live_filter(void)
{
    named_config configs[32];
    size_t n = every_structure(configs, 32);
    for (size_t i = 0; i < n; i++) {
        once_filter *f = testing_create(&configs[i].config);
        REQUIRE(f != NULL);
        fill(f, 1, 30, 100);
        if (!once_structure_of(configs[i].config.type)->memory_cap) {
            CHECK_STATUS(once_set_max_bytes(f, 1 << 20), ONCE_ERR_UNSUPPORTED);
            once_free(f);
            continue;
        }
        uint64_t before = once_max_bytes(f), held = once_bytes(f);
        CHECK_STATUS(once_set_max_bytes(f, held - 1), ONCE_ERR_FULL);
        CHECK(once_max_bytes(f) == before);
        CHECK_OK(once_set_max_bytes(f, held + 12345));
        CHECK(once_max_bytes(f) == held + 12345);
        size_t len = 0;
        uint8_t *file = testing_save(f, &len);
        once_filter *g = NULL;
        CHECK_OK(once_load(&g, file, len));
        if (g != NULL)
            CHECK(once_max_bytes(g) == held + 12345);
        once_free(g);
        once_free_buffer(file);
        once_free(f);
    }
}

/*
 * once_config and once_stats carry the size of the caller's struct (once.h), so that a
 * program built against another version of the headers keeps working: a struct with
 * fields this build does not know works while they are zero and is refused
 * (ONCE_ERR_UNSUPPORTED) when one is set; one shorter than the first version's, or
 * never filled by once_config_init, is refused and nothing is written past it.
 */
static void structs_carry_their_size(void)
{
    struct newer_config {
        once_config config;
        uint64_t later_field;
    } newer;
    memset(&newer, 0xAB, sizeof newer);
    once_config_init_sized(&newer.config, sizeof newer, ONCE_BLOCKED);
    CHECK(newer.config.size == sizeof newer && newer.later_field == 0);
    newer.config.capacity = 1000;
    newer.config.seed = 7;
    newer.config.seed_is_set = true;
    once_filter *f = NULL;
    CHECK_OK(once_create(&f, &newer.config));
    once_config plain;
    once_config_init(&plain, ONCE_BLOCKED);
    CHECK(plain.size == sizeof plain);
    plain.capacity = 1000;
    plain.seed = 7;
    plain.seed_is_set = true;
    once_filter *g = NULL;
    CHECK_OK(once_create(&g, &plain));
    REQUIRE(f != NULL && g != NULL);
    size_t f_len = 0, g_len = 0;
    uint8_t *f_saved = testing_save(f, &f_len), *g_saved = testing_save(g, &g_len);
    CHECK(f_saved && g_saved && f_len == g_len && memcmp(f_saved, g_saved, f_len) == 0);
    once_free_buffer(f_saved);
    once_free_buffer(g_saved);

    once_filter *refused = NULL;
    newer.later_field = 1;
    CHECK_STATUS(once_create(&refused, &newer.config), ONCE_ERR_UNSUPPORTED);
    once_bpbf_geometry geometry;
    newer.config.type = ONCE_BPBF;
    CHECK_STATUS(once_bpbf_plan(&newer.config, &geometry), ONCE_ERR_UNSUPPORTED);
    /* below the first version's size (lag_ms came after it) */
    plain.size = offsetof(once_config, lag_ms) - 1;
    CHECK_STATUS(once_create(&refused, &plain), ONCE_ERR_INVALID);
    memset(&plain, 0, sizeof plain);
    plain.type = ONCE_BLOCKED;
    CHECK_STATUS(once_create(&refused, &plain), ONCE_ERR_INVALID);
    CHECK(refused == NULL);
    once_config untouched;
    memset(&untouched, 0xCD, sizeof untouched);
    once_config_init_sized(&untouched, offsetof(once_config, lag_ms) - 1, ONCE_BLOCKED);
    const uint8_t *bytes = (const uint8_t *)&untouched;
    for (size_t i = 0; i < sizeof untouched; i++)
        CHECK(bytes[i] == 0xCD);

    struct newer_stats {
        once_stats stats;
        uint64_t later_field;
    } newer_stats;
    memset(&newer_stats, 0xEF, sizeof newer_stats);
    CHECK_OK(once_get_stats_sized(f, &newer_stats.stats, sizeof newer_stats));
    CHECK(newer_stats.later_field == 0);
    once_stats stats;
    CHECK_OK(once_get_stats(f, &stats));
    CHECK(memcmp(&stats, &newer_stats.stats, sizeof stats) == 0);
    memset(&stats, 0xEF, sizeof stats);
    CHECK_STATUS(once_get_stats_sized(f, &stats, offsetof(once_stats, lag_ms) - 1),
                 ONCE_ERR_INVALID);
    bytes = (const uint8_t *)&stats;
    for (size_t i = 0; i < sizeof stats; i++)
        CHECK(bytes[i] == 0xEF);
    once_free(f);
    once_free(g);
}

static const testing_case cases[] = {
    {"structs_carry_their_size", structs_carry_their_size},
    {"digest_is_the_seeded_hash", digest_is_the_seeded_hash},
    {"digest_arguments_checked", digest_arguments_checked},
    {"keys_and_digests_answer_alike", keys_and_digests_answer_alike},
    {"keys_of_every_length_answer_as_digests", keys_of_every_length_answer_as_digests},
    {"positions_are_the_cells_a_key_sets", positions_are_the_cells_a_key_sets},
    {"failed_combination_leaves_dst_unchanged", failed_combination_leaves_dst_unchanged},
    {"memory_cap_changes_on_a_live_filter", memory_cap_changes_on_a_live_filter},
};

TESTING_MAIN(cases)
