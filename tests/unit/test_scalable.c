/*
 * test_scalable.c - what the scalable Bloom filter (ONCE_SCALABLE, RedisBloom's BF.*
 * semantics over a chain of blocked filters) promises.
 *
 *   - however far it grows (here to 100 times its initial capacity, under three
 *     expansion/tightening pairs), the measured false-positive rate of fresh keys stays
 *     within 4 binomial sigmas of the compound design bound 1 - prod(1 - p_i) of the
 *     sub-filters it has, which itself stays below the requested error;
 *   - no false negatives, before and after a save and load;
 *   - a key already present is neither inserted nor counted (BF.ADD): items counts the
 *     keys taken as new, so it equals the distinct keys minus those that were false
 *     positives on their first add, and repeats never make the filter grow;
 *   - non-scaling (expansion 0) refuses a new key when full with ONCE_ERR_FULL and
 *     leaves the state byte for byte unchanged, while a present key is still "seen";
 *   - sub-filter n_i = n_0 e^i and p_i = error (1 - r) r^i exactly, each planned by the
 *     blocked planner for (n_i, p_i); a non-scaling filter's one sub-filter at error;
 *   - max_bytes, the sub-filter limit and the planner's floor refuse growth with
 *     ONCE_ERR_FULL and change nothing;
 *   - batches give exactly the one-key answers (repeats inside a batch, growth in the
 *     middle of a batch, a refusal in the middle of a batch);
 *   - saved mid-growth and loaded, it continues exactly as the original; every
 *     truncation, every changed byte, and a list of hostile parameters are refused;
 *   - invalid configurations are refused; intersection is unsupported;
 *   - the union of two chains of one series (any lengths) holds every key of both, keeps
 *     the chain's invariants (it saves and loads), and past max_bytes changes nothing.
 */
#include "once_advanced.h"
#include "once_math.h"
#include "testing.h"

#include <stdbool.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* ------------------------------------------------------------------ helpers */

typedef struct scalable_opts {
    uint64_t capacity;
    double error;
    uint32_t expansion; /* 0 = non-scaling */
    double tightening;  /* 0 = default 0.5 */
    uint64_t max_bytes;
    uint64_t seed;
} scalable_opts;

static once_status try_make(const scalable_opts *o, once_filter **f)
{
    once_config c = testing_config(ONCE_SCALABLE, o->seed);
    c.capacity = o->capacity;
    c.error = o->error;
    c.expansion = o->expansion;
    c.tightening = o->tightening;
    c.max_bytes = o->max_bytes;
    *f = NULL;
    return once_create(f, &c);
}

static once_filter *make(const scalable_opts *o)
{
    once_filter *f = NULL;
    once_status st = try_make(o, &f);
    if (st != ONCE_OK)
        fprintf(stderr, "create scalable n=%" PRIu64 " p=%g e=%u r=%g: %s\n", o->capacity,
                o->error, o->expansion, o->tightening, once_strerror(st));
    return f;
}

static bool tand(once_filter *f, uint64_t domain, uint64_t id)
{
    testing_key k = testing_key_make(domain, id);
    bool seen = false;
    CHECK_OK(once_test_and_add(f, &k, sizeof k, 0, &seen));
    return seen;
}

static bool present(const once_filter *f, uint64_t domain, uint64_t id)
{
    testing_key k = testing_key_make(domain, id);
    bool p = false;
    CHECK_OK(once_query(f, &k, sizeof k, 0, &p));
    return p;
}

/* Fresh keys of domain 7 that test present, out of `probes`. */
static uint64_t probe_absent(const once_filter *f, uint64_t *next, uint64_t probes)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < probes; i++)
        hits += present(f, 7, (*next)++);
    return hits;
}

static uint64_t double_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double bits_double(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static size_t sub_field(uint32_t sub, int field)
{
    return SCALABLE_OFF_SUBS + (size_t)sub * SCALABLE_SUB_WORDS * 8 + (size_t)field * 8;
}

static size_t payload_offset(const uint8_t *file)
{
    return HEADER + testing_get_le(file + OFF_PARAMS_LEN, 4) + 8;
}

/* The file with the 8-byte word at `offset` set to `value`, resealed, loaded. */
static once_status with_word(const uint8_t *file, size_t len, size_t offset, uint64_t value)
{
    uint8_t *b = testing_copy_exact(file, len);
    testing_put_le(b + offset, value, 8);
    testing_reseal(b, len);
    once_status st = testing_load_and_vet(b, len);
    free(b);
    return st;
}

/* Insert distinct keys of `domain` from *next until the filter has `filters`
 * sub-filters and the newest holds some keys, or `limit` keys were offered. */
static void grow_to(once_filter *f, uint64_t domain, uint64_t *next, uint32_t filters,
                    uint64_t limit)
{
    uint32_t have = testing_stats(f).filters; /* then counted from the capacity (cheap) */
    uint64_t capacity = once_capacity(f);
    while (*next < limit && have < filters) {
        tand(f, domain, (*next)++);
        if (once_capacity(f) != capacity) {
            capacity = once_capacity(f);
            have++;
        }
    }
    for (int i = 0; i < 5 && *next < limit; i++)
        tand(f, domain, (*next)++);
}

/* ------------------------------------------------------------------- cases */

static void compound_rate_within_bound_to_100x(void)
{
    static const struct {
        uint32_t expansion;
        double tightening;
        uint64_t capacity, grow_to;
    } configs[] = {
        {2, 0.5, 10000, 1000000}, /* RedisBloom's defaults */
        {4, 0.8, 10000, 1000000}, /* a slower tightening, a faster growth */
        {1, 0.9, 10000, 600000},  /* equal sub-filters: 60 of them, near the 64 limit */
    };
    /* The design bound is the expected rate of a sub-filter at its capacity; a small
     * one (a few dozen blocks) realizes a rate up to ~15% off it, fixed for its life, so
     * the sub-filters start at 10^4 keys (hundreds of blocks) where that spread is well
     * inside the probes' 4 sigmas. */
    const double error = 0.01;
    const uint64_t probes = 100000;
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        scalable_opts o = {configs[c].capacity, error, configs[c].expansion,
                           configs[c].tightening, 0, 11 + c};
        once_filter *f = make(&o);
        REQUIRE(f != NULL);
        uint64_t next_absent = 0, taken = 0, checkpoints = 0;
        uint32_t measured = 0; /* sub-filters at the last measurement */
        double worst_ratio = 0.0;
        for (uint64_t i = 0; i < configs[c].grow_to; i++) {
            taken += !tand(f, 1, i);
            /* Measure when every sub-filter is full (the peak of the compound rate for
             * this chain, just before it grows; every tenth for equal sub-filters), and
             * at the end. */
            bool last = i + 1 == configs[c].grow_to;
            if (!last && once_items(f) != once_capacity(f))
                continue;
            once_stats s = testing_stats(f);
            if (!last && (s.filters == measured ||
                          (configs[c].expansion == 1 && s.filters % 10 != 0)))
                continue;
            measured = s.filters;
            checkpoints++;
            double bound = s.design_fpr;
            CHECK(bound > 0.0 && bound < error);
            uint64_t hits = probe_absent(f, &next_absent, probes);
            double rate = (double)hits / (double)probes;
            double limit = bound + 4.0 * sqrt(bound * (1.0 - bound) / (double)probes);
            if (rate > limit) {
                fprintf(stderr, "e=%u r=%g: %u filters, %" PRIu64 " items: rate %.5f above %.5f\n",
                        configs[c].expansion, configs[c].tightening, s.filters, s.items, rate,
                        limit);
                CHECK(0);
            }
            if (rate / bound > worst_ratio)
                worst_ratio = rate / bound;
            if (getenv("SCALABLE_VERBOSE"))
                fprintf(stderr, "  %u filters %" PRIu64 " items: rate %.5f design %.5f estimate %.5f (%.2f sigma)\n",
                        s.filters, s.items, rate, bound, s.fpr_estimate,
                        (rate - bound) / sqrt(bound * (1.0 - bound) / (double)probes));
        }
        once_stats s = testing_stats(f);
        CHECK(s.items == taken && s.items <= s.capacity);
        CHECK(s.capacity >= configs[c].grow_to - configs[c].grow_to / 100);
        CHECK(s.error == error && s.expansion == configs[c].expansion);
        fprintf(stderr,
                "e=%u r=%g: %u sub-filters, capacity %" PRIu64 ", %" PRIu64
                " checkpoints, worst measured/design %.3f, final design bound %.5f\n",
                configs[c].expansion, configs[c].tightening, s.filters, s.capacity, checkpoints,
                worst_ratio, s.design_fpr);
        CHECK(checkpoints >= 5);
        once_free(f);
    }
}

static void no_false_negatives(void)
{
    scalable_opts o = {500, 0.001, 2, 0.5, 0, 21};
    once_filter *f = make(&o);
    REQUIRE(f != NULL);
    const uint64_t n = 50000; /* 100x */
    for (uint64_t i = 0; i < n; i++) {
        testing_key k = testing_key_make(2, i);
        CHECK_OK(once_add(f, &k, sizeof k, 0));
    }
    once_stats s = testing_stats(f);
    CHECK(s.filters == 7); /* 500 * (2^7 - 1) = 63500 >= 50000 > 31500 */
    uint64_t missing = 0;
    for (uint64_t i = 0; i < n; i++)
        missing += !present(f, 2, i);
    CHECK(missing == 0);
    once_filter *g = testing_reload(f);
    REQUIRE(g != NULL);
    missing = 0;
    for (uint64_t i = 0; i < n; i++)
        missing += !present(g, 2, i) + !tand(g, 2, i);
    CHECK(missing == 0);
    CHECK(once_items(g) == once_items(f)); /* the test-and-adds found every key */
    once_free(g);
    once_free(f);
}

static void duplicates_are_not_counted(void)
{
    scalable_opts o = {200, 0.01, 2, 0.5, 0, 31};
    once_filter *f = make(&o);
    REQUIRE(f != NULL);
    /* Repeats of one key never count and never make the filter grow. */
    for (int i = 0; i < 1000; i++) {
        testing_key k = testing_key_make(3, 0);
        CHECK_OK(once_add(f, &k, sizeof k, 0));
    }
    once_stats s = testing_stats(f);
    CHECK(s.items == 1 && s.filters == 1 && s.capacity == 200);

    /* Each key offered three times, through add, test-and-add and a batch. */
    const uint64_t n = 20000;
    uint64_t first_seen = 0; /* false positives on a key's first offer */
    for (uint64_t i = 1; i < n; i++)
        first_seen += tand(f, 3, i);
    uint64_t items = once_items(f);
    CHECK(items == n - first_seen);
    for (uint64_t i = 0; i < n; i++) {
        testing_key k = testing_key_make(3, i);
        CHECK_OK(once_add(f, &k, sizeof k, 0));
        CHECK(tand(f, 3, i));
    }
    once_key batch[100];
    testing_key keys[100];
    for (uint64_t at = 0; at < n; at += 100) {
        for (int j = 0; j < 100; j++) {
            keys[j] = testing_key_make(3, at + (uint64_t)j);
            batch[j] = (once_key){&keys[j], sizeof keys[j], 0};
        }
        CHECK_OK(once_add_batch(f, batch, 100));
    }
    CHECK(once_items(f) == items);
    /* A false positive suppresses an add, as in RedisBloom: few of them, at most the
     * compound bound's share (4 sigmas). */
    s = testing_stats(f);
    double bound = s.design_fpr;
    CHECK(first_seen <= (uint64_t)(n * bound + 4.0 * sqrt(n * bound) + 1));
    fprintf(stderr, "%" PRIu64 " distinct keys, %" PRIu64 " counted, %" PRIu64
                    " suppressed by false positives (design bound %.4f)\n",
            n, items, first_seen, bound);
    once_free(f);
}

/* Keys until the filter holds exactly `items`; returns the next unused id. */
static uint64_t fill_to(once_filter *f, uint64_t domain, uint64_t items)
{
    uint64_t id = 0;
    while (once_items(f) < items) {
        testing_key k = testing_key_make(domain, id++);
        CHECK_OK(once_add(f, &k, sizeof k, 0));
    }
    return id;
}

/* Sub-filter i of a saved chain: its record words. */
static uint64_t sub_word(const uint8_t *file, uint32_t i, int field)
{
    return testing_get_le(file + sub_field(i, field), 8);
}

static void nonscaling_refuses_when_full(void)
{
    scalable_opts o = {300, 0.01, 0, 0, 0, 41};
    once_filter *f = make(&o);
    REQUIRE(f != NULL);
    uint64_t next = fill_to(f, 4, 300);
    size_t len = 0;
    uint8_t *before = testing_save(f, &len);
    REQUIRE(before != NULL);
    once_stats s0 = testing_stats(f);
    CHECK(s0.filters == 1 && s0.expansion == 0 && s0.capacity == 300 && s0.items == 300);
    uint32_t filters = 9, expansion = 9;
    CHECK_OK(once_scalable_shape(f, &filters, &expansion));
    CHECK(filters == 1 && expansion == 0);
    /* One sub-filter and no series after it: it takes the whole rate. */
    CHECK(bits_double(sub_word(before, 0, SCALABLE_S_ERROR)) == 0.01);

    uint64_t refused = 0;
    for (uint64_t i = next; i < next + 200; i++) {
        testing_key k = testing_key_make(4, i);
        bool was = false, seen = false;
        CHECK_OK(once_query(f, &k, sizeof k, 0, &was));
        once_status add = once_add(f, &k, sizeof k, 0);
        once_status tst = once_test_and_add(f, &k, sizeof k, 0, &seen);
        if (was) { /* a false positive: "exists", as BF.ADD answers 0 */
            CHECK(add == ONCE_OK && tst == ONCE_OK && seen);
        } else {
            CHECK(add == ONCE_ERR_FULL && tst == ONCE_ERR_FULL);
            refused++;
        }
    }
    CHECK(refused > 150);
    /* Keys it holds are still answered. */
    for (uint64_t i = 0; i < next; i++)
        CHECK(tand(f, 4, i));
    /* A batch stops at the first refusal; the keys before it were processed. */
    testing_key keys[3] = {testing_key_make(4, 0), testing_key_make(4, 1),
                           testing_key_make(4, next + 1000)};
    bool last_present = present(f, 4, next + 1000);
    once_key batch[3];
    for (int j = 0; j < 3; j++)
        batch[j] = (once_key){&keys[j], sizeof keys[j], 0};
    uint8_t seen[3] = {9, 9, 9};
    CHECK_STATUS(once_test_and_add_batch(f, batch, 3, seen),
                 last_present ? ONCE_OK : ONCE_ERR_FULL);
    CHECK(seen[0] == 1 && seen[1] == 1);
    CHECK_STATUS(once_add_batch(f, batch, 3), last_present ? ONCE_OK : ONCE_ERR_FULL);

    size_t after_len = 0;
    uint8_t *after = testing_save(f, &after_len);
    CHECK(after != NULL && after_len == len && memcmp(before, after, len) == 0);
    once_stats s1 = testing_stats(f);
    CHECK(s1.items == s0.items && s1.bytes == s0.bytes && s1.bits_set == s0.bits_set);
    once_free_buffer(before);
    once_free_buffer(after);
    once_free(f);
}

static void expansion_and_tightening_progression(void)
{
    static const struct {
        uint32_t expansion;
        double tightening;
        double error;
    } configs[] = {{2, 0, 0.01}, {3, 0.5, 0.001}, {1, 0.75, 0.05}, {5, 0.2, 0.02}};
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        const uint64_t n0 = 100;
        scalable_opts o = {n0, configs[c].error, configs[c].expansion, configs[c].tightening, 0,
                           51 + c};
        once_filter *f = make(&o);
        REQUIRE(f != NULL);
        double r = configs[c].tightening == 0 ? 0.5 : configs[c].tightening;
        uint64_t next = 0;
        grow_to(f, 5, &next, 5, 10000000);
        once_stats s = testing_stats(f);
        REQUIRE(s.filters == 5);
        size_t len = 0;
        uint8_t *file = testing_save(f, &len);
        REQUIRE(file != NULL);
        CHECK(testing_get_le(file + SCALABLE_OFF_FILTERS, 8) == 5);
        CHECK(testing_get_le(file + SCALABLE_OFF_EXPANSION, 8) == configs[c].expansion);
        CHECK(bits_double(testing_get_le(file + SCALABLE_OFF_TIGHTENING, 8)) == r);
        uint64_t n = n0, total = 0, items = 0;
        double p = configs[c].error * (1.0 - r), clear = 1.0, saved_errors = 0.0;
        for (uint32_t i = 0; i < 5; i++) {
            CHECK(sub_word(file, i, SCALABLE_S_CAPACITY) == n);
            CHECK(bits_double(sub_word(file, i, SCALABLE_S_ERROR)) == p);
            uint64_t bits = 0;
            uint32_t k = 0;
            CHECK_OK(once_plan(ONCE_BLOCKED, n, p, &bits, &k));
            CHECK(sub_word(file, i, SCALABLE_S_CELLS) == bits && sub_word(file, i, SCALABLE_S_HASHES) == k);
            if (i < 4)
                CHECK(sub_word(file, i, SCALABLE_S_ITEMS) == n); /* older sub-filters are full */
            items += sub_word(file, i, SCALABLE_S_ITEMS);
            saved_errors += bits_double(sub_word(file, i, SCALABLE_S_ERROR));
            total += n;
            clear *= 1.0 - p;
            n *= configs[c].expansion;
            p *= r;
        }
        CHECK(s.capacity == total && s.items == items);
        CHECK(fabs(s.design_fpr - (1.0 - clear)) < 1e-15);
        CHECK(s.design_fpr < configs[c].error);
        /* The series never passes the requested error: the saved errors so far sum to
         * less, and the whole series, p_0 / (1 - r), to exactly it. */
        double first = bits_double(sub_word(file, 0, SCALABLE_S_ERROR));
        CHECK(saved_errors < configs[c].error);
        CHECK(fabs(first / (1.0 - r) - configs[c].error) <= configs[c].error * 1e-12);
        once_free_buffer(file);
        once_free(f);
    }
}

static void growth_limits_refuse_and_keep_state(void)
{
    /* (a) max_bytes: room for three sub-filters but not four. */
    {
        scalable_opts probe = {1000, 0.01, 2, 0.5, 0, 61};
        once_filter *f = make(&probe);
        REQUIRE(f != NULL);
        uint64_t next = 0;
        grow_to(f, 6, &next, 3, 1000000);
        uint64_t three = once_bytes(f);
        once_free(f);

        scalable_opts o = {1000, 0.01, 2, 0.5, three + 100, 61};
        f = make(&o);
        REQUIRE(f != NULL);
        once_status st = ONCE_OK;
        uint64_t id = 0;
        while (st == ONCE_OK && id < 100000) {
            testing_key k = testing_key_make(6, id++);
            st = once_add(f, &k, sizeof k, 0);
        }
        CHECK(st == ONCE_ERR_FULL);
        once_stats s = testing_stats(f);
        CHECK(s.filters == 3 && s.items == s.capacity && s.capacity == 7000);
        CHECK(s.bytes <= three + 100);
        size_t len = 0, len2 = 0;
        uint8_t *before = testing_save(f, &len);
        testing_key k = testing_key_make(6, id + 5000);
        bool p = present(f, 6, id + 5000), seen = false;
        CHECK_STATUS(once_test_and_add(f, &k, sizeof k, 0, &seen), p ? ONCE_OK : ONCE_ERR_FULL);
        uint8_t *after = testing_save(f, &len2);
        CHECK(before != NULL && after != NULL && len == len2 && memcmp(before, after, len) == 0);
        once_free_buffer(before);
        once_free_buffer(after);
        /* A cap below the first sub-filter is refused at creation. */
        scalable_opts tiny = {1000, 0.01, 2, 0.5, 1000, 61};
        once_filter *g = NULL;
        CHECK_STATUS(try_make(&tiny, &g), ONCE_ERR_TOO_LARGE);
        CHECK(g == NULL);
        once_free(f);
    }
    /* (b) no rate stops growth: p_i = 9e-7 * 0.1^i passes the planner's floor, 1e-15,
     * at i = 9, and every sub-filter after it is planned at the floor (k = 16, the
     * blocked layout's rate as a sum of positive terms), up to the 64 sub-filters.  The
     * compound design rate stays within the target plus 1e-15 a floored sub-filter,
     * and every key added is present. */
    {
        scalable_opts o = {50, 1e-6, 1, 0.1, 0, 62};
        once_filter *f = make(&o);
        REQUIRE(f != NULL);
        once_status st = ONCE_OK;
        uint64_t id = 0;
        while (st == ONCE_OK && id < 100000) {
            testing_key k = testing_key_make(7, id++);
            st = once_add(f, &k, sizeof k, 0);
        }
        CHECK(st == ONCE_ERR_FULL);
        once_stats s = testing_stats(f);
        CHECK(s.filters == ONCE_SCALABLE_MAX_FILTERS && s.items == 3200 && s.capacity == 3200);
        CHECK(s.design_fpr <= 1e-6 + 64 * 1e-15);
        for (uint64_t i = 0; i < 3200; i++)
            CHECK(present(f, 7, i));
        /* What grew past the old floor saves and loads as itself. */
        size_t len = 0;
        uint8_t *file = testing_save(f, &len);
        REQUIRE(file != NULL);
        CHECK_OK(testing_load_and_vet(file, len));
        once_free_buffer(file);
        once_free(f);
    }
    /* (c) the 64 sub-filter limit, with equal sub-filters and a slow tightening. */
    {
        scalable_opts o = {5, 0.1, 1, 0.9, 0, 63};
        once_filter *f = make(&o);
        REQUIRE(f != NULL);
        once_status st = ONCE_OK;
        uint64_t id = 0;
        while (st == ONCE_OK && id < 100000) {
            testing_key k = testing_key_make(8, id++);
            st = once_add(f, &k, sizeof k, 0);
        }
        CHECK(st == ONCE_ERR_FULL);
        once_stats s = testing_stats(f);
        CHECK(s.filters == 64 && s.items == 320 && s.capacity == 320);
        CHECK(s.design_fpr < 0.1);
        once_free(f);
    }
}

static void batch_matches_single(void)
{
    /* A stream with repeats (some within one batch), growing through four sub-filters. */
    const uint64_t n = 6000;
    uint64_t *ids = malloc(n * sizeof *ids);
    testing_key *keys = malloc(n * sizeof *keys);
    once_key *batch = malloc(n * sizeof *batch);
    uint8_t *seen_batch = malloc(n);
    uint8_t *present_batch = malloc(n);
    REQUIRE(ids != NULL && keys != NULL && batch != NULL && seen_batch != NULL &&
            present_batch != NULL);
    uint64_t state = 71;
    for (uint64_t i = 0; i < n; i++) {
        state = testing_mix(state);
        ids[i] = i % 7 == 3 ? ids[i - 1] : state % 2500; /* adjacent repeats too */
        keys[i] = testing_key_make(9, ids[i]);
        batch[i] = (once_key){&keys[i], sizeof keys[i], 0};
    }
    for (int nonscaling = 0; nonscaling < 2; nonscaling++) {
        scalable_opts o = {150, 0.01, nonscaling ? 0 : 2, 0.5, 0, 72};
        once_filter *one = make(&o), *tb = make(&o), *ab = make(&o), *add1 = make(&o);
        REQUIRE(one != NULL && tb != NULL && ab != NULL && add1 != NULL);
        /* One key at a time, stopping at the first refusal. */
        uint64_t stop = n;
        bool seen_one[6000];
        for (uint64_t i = 0; i < n; i++) {
            once_status st = once_test_and_add(one, &keys[i], sizeof keys[i], 0, &seen_one[i]);
            if (st != ONCE_OK) {
                CHECK(nonscaling && st == ONCE_ERR_FULL);
                stop = i;
                break;
            }
        }
        for (uint64_t i = 0; i < n; i++)
            if (once_add(add1, &keys[i], sizeof keys[i], 0) != ONCE_OK)
                break;
        /* The same in batches of 97 (not aligned with growth). */
        once_status last = ONCE_OK;
        for (uint64_t at = 0; at < n && last == ONCE_OK; at += 97) {
            size_t c = n - at < 97 ? (size_t)(n - at) : 97;
            last = once_test_and_add_batch(tb, batch + at, c, seen_batch + at);
            once_status st2 = once_add_batch(ab, batch + at, c);
            CHECK(st2 == last);
        }
        CHECK(last == (nonscaling ? ONCE_ERR_FULL : ONCE_OK));
        uint64_t mismatches = 0;
        for (uint64_t i = 0; i < stop; i++)
            mismatches += seen_batch[i] != seen_one[i];
        CHECK(mismatches == 0);
        CHECK(once_items(one) == once_items(tb) && once_items(one) == once_items(ab) &&
              once_items(one) == once_items(add1));
        if (!nonscaling)
            CHECK(testing_stats(one).filters >= 4);
        size_t l1 = 0, l2 = 0, l3 = 0, l4 = 0;
        uint8_t *s1 = testing_save(one, &l1), *s2 = testing_save(tb, &l2);
        uint8_t *s3 = testing_save(ab, &l3), *s4 = testing_save(add1, &l4);
        CHECK(s1 && s2 && s3 && s4 && l1 == l2 && l1 == l3 && l1 == l4 &&
              memcmp(s1, s2, l1) == 0 && memcmp(s1, s3, l1) == 0 && memcmp(s1, s4, l1) == 0);
        once_free_buffer(s1);
        once_free_buffer(s2);
        once_free_buffer(s3);
        once_free_buffer(s4);
        /* Queries: batch equals one-key, over present and absent keys. */
        CHECK_OK(once_query_batch(one, batch, n, present_batch));
        mismatches = 0;
        for (uint64_t i = 0; i < n; i++) {
            bool p = false;
            CHECK_OK(once_query(one, &keys[i], sizeof keys[i], 0, &p));
            mismatches += p != present_batch[i];
        }
        CHECK(mismatches == 0);
        once_free(one);
        once_free(tb);
        once_free(ab);
        once_free(add1);
    }
    free(ids);
    free(keys);
    free(batch);
    free(seen_batch);
    free(present_batch);
}

static void save_mid_growth_then_continue(void)
{
    scalable_opts o = {300, 0.005, 3, 0.6, 0, 81};
    once_filter *f = make(&o);
    REQUIRE(f != NULL);
    uint64_t state = 82;
    for (int i = 0; i < 2000; i++) { /* into the third sub-filter: past 300 + 900 keys */
        state = testing_mix(state);
        tand(f, 10, state % 20000);
    }
    once_stats s = testing_stats(f);
    CHECK(s.filters == 3);
    once_filter *g = testing_reload(f);
    REQUIRE(g != NULL);
    once_stats t = testing_stats(g);
    CHECK(t.filters == s.filters && t.items == s.items && t.capacity == s.capacity &&
          t.bytes == s.bytes && t.error == s.error && t.expansion == s.expansion &&
          t.design_fpr == s.design_fpr && t.seed == s.seed && t.bits_set == s.bits_set);
    uint64_t differ = 0;
    for (int i = 0; i < 30000; i++) { /* on through two more growths */
        state = testing_mix(state);
        differ += tand(f, 10, state % 200000) != tand(g, 10, state % 200000);
    }
    CHECK(differ == 0);
    CHECK(testing_stats(f).filters >= 5 && testing_stats(g).filters == testing_stats(f).filters);
    size_t l1 = 0, l2 = 0;
    uint8_t *a = testing_save(f, &l1), *b = testing_save(g, &l2);
    CHECK(a && b && l1 == l2 && memcmp(a, b, l1) == 0);
    once_free_buffer(a);
    once_free_buffer(b);
    once_free(g);
    once_free(f);
}

static void clear_returns_to_initial_state(void)
{
    scalable_opts o = {100, 0.01, 2, 0.5, 0, 91};
    once_filter *f = make(&o), *fresh = make(&o);
    REQUIRE(f != NULL && fresh != NULL);
    uint64_t next = 0;
    grow_to(f, 11, &next, 4, 100000);
    CHECK(testing_stats(f).filters == 4);
    CHECK_OK(once_clear(f));
    once_stats s = testing_stats(f);
    CHECK(s.filters == 1 && s.items == 0 && s.capacity == 100 && s.bits_set == 0);
    size_t l1 = 0, l2 = 0;
    uint8_t *a = testing_save(f, &l1), *b = testing_save(fresh, &l2);
    CHECK(a && b && l1 == l2 && memcmp(a, b, l1) == 0);
    once_free_buffer(a);
    once_free_buffer(b);
    /* And it grows again the same way. */
    next = 0;
    grow_to(f, 11, &next, 4, 100000);
    CHECK(testing_stats(f).filters == 4);
    once_free(fresh);
    once_free(f);
}

/* A saved chain of three sub-filters, small enough to change every byte. */
static uint8_t *small_chain(size_t *len, uint64_t capacity, uint32_t filters)
{
    scalable_opts o = {capacity, 0.05, 2, 0.5, 0, 101};
    once_filter *f = make(&o);
    if (f == NULL)
        return NULL;
    uint64_t next = 0;
    grow_to(f, 12, &next, filters, 100000);
    uint8_t *buf = testing_stats(f).filters == filters ? testing_save(f, len) : NULL;
    once_free(f);
    return buf;
}

static void every_truncation_and_byte(void)
{
    size_t len = 0;
    uint8_t *file = small_chain(&len, 20, 3);
    REQUIRE(file != NULL);
    CHECK_OK(testing_load_and_vet(file, len));
    for (size_t cut = 0; cut < len; cut++) {
        CHECK(testing_load_and_vet(file, cut) != ONCE_OK);
        if (cut >= 8) { /* truncated, then resealed as a hostile writer would */
            uint8_t *b = testing_copy_exact(file, cut);
            testing_reseal(b, cut);
            CHECK(testing_load_and_vet(b, cut) != ONCE_OK);
            free(b);
        }
    }
    /* Every byte changed: refused by the checksum as it is, and once resealed refused
     * too except where any value is valid (the seed, a larger memory cap, the bits of
     * the payload, which then load and save back as themselves). */
    size_t payload = payload_offset(file);
    uint64_t accepted = 0, refused = 0;
    for (size_t at = 0; at + 8 < len; at++) {
        for (int flip = 0; flip < 2; flip++) {
            uint8_t *b = testing_copy_exact(file, len);
            b[at] ^= flip ? 0x80 : 0x01;
            CHECK(testing_load_and_vet(b, len) != ONCE_OK);
            testing_reseal(b, len);
            once_status st = testing_load_and_vet(b, len);
            bool free_field = (at >= 8 && at < 16) || (at >= SCALABLE_OFF_MAX_BYTES && at < SCALABLE_OFF_MAX_BYTES + 8) ||
                              at >= payload;
            for (uint32_t i = 0; i < 3; i++) /* another k that also reaches p_i at n_i */
                if (at == sub_field(i, SCALABLE_S_HASHES))
                    free_field = once_fpr_blocked(sub_word(b, i, SCALABLE_S_CELLS),
                                                  (uint32_t)sub_word(b, i, SCALABLE_S_HASHES),
                                                  sub_word(b, i, SCALABLE_S_CAPACITY)) <=
                                 bits_double(sub_word(b, i, SCALABLE_S_ERROR));
            if (!free_field && st == ONCE_OK) {
                fprintf(stderr, "byte %zu ^ %#x accepted\n", at, flip ? 0x80 : 0x01);
                CHECK(0);
            }
            if (st == ONCE_OK)
                accepted++;
            else
                refused++;
            free(b);
        }
    }
    fprintf(stderr, "%zu bytes: resealed changes %" PRIu64 " accepted, %" PRIu64 " refused\n",
            len, accepted, refused);
    once_free_buffer(file);
}

static void hostile_params_refused(void)
{
    size_t len = 0;
    uint8_t *file = small_chain(&len, 200, 3);
    REQUIRE(file != NULL);
    REQUIRE(testing_get_le(file + 6, 2) == ONCE_SCALABLE && testing_get_le(file + SCALABLE_OFF_FILTERS, 8) == 3);
    CHECK_OK(with_word(file, len, SCALABLE_OFF_EXPANSION, 2)); /* resealed, unchanged: accepted */
    uint64_t n0 = sub_word(file, 0, SCALABLE_S_CAPACITY), n2 = sub_word(file, 2, SCALABLE_S_CAPACITY);
    uint64_t items2 = sub_word(file, 2, SCALABLE_S_ITEMS), p1 = sub_word(file, 1, SCALABLE_S_ERROR);
    uint64_t items = testing_get_le(file + OFF_ITEMS, 8), cells0 = sub_word(file, 0, SCALABLE_S_CELLS);
    struct {
        size_t offset;
        uint64_t value;
        const char *what;
    } bad[] = {
        {OFF_ITEMS, items + 1, "header items above the sub-filters' sum"},
        {OFF_ITEMS, items - 1, "header items below the sub-filters' sum"},
        {OFF_CAPACITY, n0, "header capacity of the first sub-filter only"},
        {OFF_ERROR, double_bits(0.1), "header error not 2 p_0"},
        {OFF_ERROR, double_bits(0.0), "header error 0"},
        {SCALABLE_OFF_EXPANSION, 0, "non-scaling with three sub-filters"},
        {SCALABLE_OFF_EXPANSION, 3, "expansion against the capacities"},
        {SCALABLE_OFF_EXPANSION, 32769, "expansion past the limit"},
        {SCALABLE_OFF_TIGHTENING, double_bits(0.25), "tightening against the errors"},
        {SCALABLE_OFF_TIGHTENING, double_bits(1.0), "tightening 1"},
        {SCALABLE_OFF_TIGHTENING, double_bits(0.0), "tightening 0"},
        {SCALABLE_OFF_TIGHTENING, double_bits(NAN), "tightening NaN"},
        {SCALABLE_OFF_MAX_BYTES, 1000, "memory cap below the filter"},
        {SCALABLE_OFF_FILTERS, 0, "no sub-filters"},
        {SCALABLE_OFF_FILTERS, 2, "fewer sub-filters than records"},
        {SCALABLE_OFF_FILTERS, 4, "more sub-filters than records"},
        {SCALABLE_OFF_FILTERS, 65, "past the sub-filter limit"},
        {SCALABLE_OFF_FILTERS, UINT64_MAX, "2^64 - 1 sub-filters"},
        {sub_field(0, SCALABLE_S_CAPACITY), n0 + 1, "capacity off the progression"},
        {sub_field(0, SCALABLE_S_CAPACITY), 0, "capacity 0"},
        {sub_field(2, SCALABLE_S_CAPACITY), n2 * 2, "last capacity off the progression"},
        {sub_field(0, SCALABLE_S_CAPACITY), UINT64_MAX / 2, "capacity past the limit"},
        {sub_field(1, SCALABLE_S_ERROR), p1 + 1, "error one ulp off the progression"},
        {sub_field(0, SCALABLE_S_ERROR), double_bits(1.0), "error 1"},
        {sub_field(0, SCALABLE_S_ERROR), double_bits(-0.025), "error negative"},
        {sub_field(0, SCALABLE_S_ERROR), double_bits(INFINITY), "error infinite"},
        {sub_field(0, SCALABLE_S_ITEMS), n0 - 1, "an older sub-filter not full"},
        {sub_field(1, SCALABLE_S_ITEMS), 2 * n0 + 1, "an older sub-filter over full"},
        {sub_field(2, SCALABLE_S_ITEMS), n2 + 1, "the newest over its capacity"},
        {sub_field(2, SCALABLE_S_ITEMS), 0, "a grown newest without keys"},
        {sub_field(2, SCALABLE_S_ITEMS), items2 + 1, "items not matching the header"},
        {sub_field(0, SCALABLE_S_PARAMS_BYTES), 8, "short sub-filter params"},
        {sub_field(0, SCALABLE_S_PARAMS_BYTES), 17, "params not whole words"},
        {sub_field(0, SCALABLE_S_PARAMS_BYTES), 4096, "params past the end"},
        {sub_field(0, SCALABLE_S_PAYLOAD_BYTES), sub_word(file, 0, SCALABLE_S_PAYLOAD_BYTES) + 64,
         "payload partition off by a line"},
        {sub_field(2, SCALABLE_S_PAYLOAD_BYTES), UINT64_MAX, "payload 2^64 - 1"},
        {sub_field(0, SCALABLE_S_CELLS), cells0 + 512, "cells of a longer payload"},
        {sub_field(0, SCALABLE_S_CELLS), 0, "no cells"},
        {sub_field(0, SCALABLE_S_HASHES), 17, "k past the blocked layout"},
        {sub_field(0, SCALABLE_S_HASHES), 0, "k 0"},
        {sub_field(0, SCALABLE_S_HASHES), 1, "a geometry that misses p_0 at n_0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        once_status st = with_word(file, len, bad[i].offset, bad[i].value);
        if (st == ONCE_OK) {
            fprintf(stderr, "%s accepted\n", bad[i].what);
            CHECK(0);
        }
    }
    /* A first sub-filter too small for its capacity, the payload shortened to match. */
    {
        size_t cut = (size_t)(sub_word(file, 0, SCALABLE_S_PAYLOAD_BYTES) / 2 / 64 * 64);
        REQUIRE(cut >= 64);
        uint8_t *b = testing_copy_exact(file, len);
        size_t payload = payload_offset(file);
        testing_put_le(b + sub_field(0, SCALABLE_S_CELLS), cut * 8, 8);
        testing_put_le(b + sub_field(0, SCALABLE_S_PAYLOAD_BYTES), cut, 8);
        testing_put_le(b + payload - 8, testing_get_le(file + payload - 8, 8) - cut, 8);
        memmove(b + payload + cut, b + payload + 2 * cut, len - payload - 2 * cut);
        size_t shorter = len - cut;
        testing_reseal(b, shorter);
        CHECK_STATUS(testing_load_and_vet(b, shorter), ONCE_ERR_CORRUPT);
        free(b);
    }
    once_free_buffer(file);
}

static void invalid_configs(void)
{
    scalable_opts ok = {1000, 0.01, 2, 0.5, 0, 111};
    once_filter *f = NULL;
    CHECK_OK(try_make(&ok, &f));
    once_free(f);
    struct {
        scalable_opts o;
        once_status want;
        const char *what;
    } cases[] = {
        {{0, 0.01, 2, 0.5, 0, 1}, ONCE_ERR_INVALID, "capacity 0"},
        {{(UINT64_C(1) << 40) + 1, 0.01, 2, 0.5, 0, 1}, ONCE_ERR_TOO_LARGE, "capacity past limit"},
        {{1000, 0.0, 2, 0.5, 0, 1}, ONCE_ERR_RATE, "error 0"},
        {{1000, 1.0, 2, 0.5, 0, 1}, ONCE_ERR_RATE, "error 1"},
        {{1000, -0.1, 2, 0.5, 0, 1}, ONCE_ERR_RATE, "error negative"},
        {{1000, NAN, 2, 0.5, 0, 1}, ONCE_ERR_RATE, "error NaN"},
        {{1000, 9e-10, 2, 0.5, 0, 1}, ONCE_ERR_RATE, "error below ONCE_MIN_ERROR"},
        {{1000, 0.01, 2, 1.0, 0, 1}, ONCE_ERR_INVALID, "tightening 1"},
        {{1000, 0.01, 2, 1.5, 0, 1}, ONCE_ERR_INVALID, "tightening 1.5"},
        {{1000, 0.01, 2, -0.5, 0, 1}, ONCE_ERR_INVALID, "tightening negative"},
        {{1000, 0.01, 2, NAN, 0, 1}, ONCE_ERR_INVALID, "tightening NaN"},
        {{1000, 0.01, 32769, 0.5, 0, 1}, ONCE_ERR_INVALID, "expansion past the limit"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        f = NULL;
        once_status st = try_make(&cases[i].o, &f);
        if (st != cases[i].want) {
            fprintf(stderr, "%s: %s\n", cases[i].what, once_strerror(st));
            CHECK(0);
        }
        CHECK(f == NULL);
    }
    /* An explicit geometry has no meaning for a chain of planned sub-filters. */
    once_config c;
    once_config_init(&c, ONCE_SCALABLE);
    c.bits = 10000;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
    once_config_init(&c, ONCE_SCALABLE);
    c.hashes = 3;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
    /* Defaults: expansion 2 (once_config_init), tightening 0 means 1/2; expansion 1 and
     * 32768 are valid (RedisBloom requires expansion >= 1). */
    once_config_init(&c, ONCE_SCALABLE);
    c.capacity = 1000;
    c.error = 0.01;
    c.tightening = 0;
    c.seed_is_set = true;
    CHECK_OK(once_create(&f, &c));
    once_stats s = testing_stats(f);
    CHECK(s.expansion == 2 && s.filters == 1 && s.capacity == 1000 &&
          fabs(s.design_fpr - 0.005) < 1e-15);
    CHECK(strcmp(s.structure, "scalable") == 0 && s.type == ONCE_SCALABLE);
    once_free(f);
    scalable_opts one = {1000, 0.01, 1, 0.5, 0, 1}, wide = {1000, 0.01, 32768, 0.5, 0, 1};
    CHECK_OK(try_make(&one, &f));
    once_free(f);
    CHECK_OK(try_make(&wide, &f));
    once_free(f);
    once_type t;
    CHECK_OK(once_type_from_name("scalable", &t));
    CHECK(t == ONCE_SCALABLE && strcmp(once_type_name(ONCE_SCALABLE), "scalable") == 0);
}

/* Saves, loads back, and the loaded chain answers alike for `n` keys of `domain`. */
static void reloads_alike(const once_filter *f, uint64_t domain, uint64_t n)
{
    once_filter *g = testing_reload(f);
    if (g == NULL)
        return;
    CHECK(once_items(g) == once_items(f) && once_capacity(g) == once_capacity(f));
    for (uint64_t i = 0; i < n; i++)
        CHECK(present(g, domain, i) == present(f, domain, i));
    once_free(g);
}

static void union_of_chains_keeps_every_key(void)
{
    scalable_opts o = {100, 0.01, 2, 0.5, 0, 7};
    once_filter *a = make(&o), *b = make(&o);
    REQUIRE(a != NULL && b != NULL);
    fill_to(a, 1, 250);  /* 100 + 200 */
    fill_to(b, 2, 1400); /* 100 + 200 + 400 + 800 */
    CHECK(testing_stats(a).filters == 2 && testing_stats(b).filters == 4);
    uint64_t b_items = once_items(b), b_capacity = once_capacity(b);

    /* The shorter chain grows to the longer one's length. */
    CHECK_OK(once_union(a, b));
    once_stats s = testing_stats(a);
    CHECK(s.filters == 4 && s.capacity == b_capacity);
    uint32_t filters = 0, expansion = 0;
    CHECK_OK(once_scalable_shape(a, &filters, &expansion));
    CHECK(filters == s.filters && expansion == 2);
    once_filter *blocked = NULL;
    CHECK_OK(once_create_for_capacity(&blocked, ONCE_BLOCKED, 100, 0.01));
    CHECK_STATUS(once_scalable_shape(blocked, &filters, &expansion), ONCE_ERR_UNSUPPORTED);
    CHECK_STATUS(once_scalable_shape(NULL, &filters, &expansion), ONCE_ERR_INVALID);
    once_free(blocked);
    for (uint64_t i = 0; i < 250; i++)
        CHECK(present(a, 1, i));
    for (uint64_t i = 0; i < 1400; i++)
        CHECK(present(a, 2, i));
    /* Older sub-filters count as full; the newest holds at least src's keys there. */
    CHECK(s.items >= b_items && s.items <= s.capacity);
    reloads_alike(a, 1, 250);
    reloads_alike(a, 2, 1500);
    /* src is untouched, and a union into the longer chain holds both too. */
    CHECK(once_items(b) == b_items);
    once_filter *c = make(&o);
    REQUIRE(c != NULL);
    fill_to(c, 1, 250);
    CHECK_OK(once_union(b, c));
    CHECK(testing_stats(b).filters == 4);
    for (uint64_t i = 0; i < 250; i++)
        CHECK(present(b, 1, i));
    reloads_alike(b, 1, 250);

    /* Adds go on after a union: new keys find room and the chain grows as before. */
    for (uint64_t i = 0; i < 3000; i++)
        (void)tand(a, 3, i);
    for (uint64_t i = 0; i < 3000; i++)
        CHECK(present(a, 3, i));
    CHECK(testing_stats(a).filters > 4);
    reloads_alike(a, 3, 3000);

    /* Another series or seed: refused. */
    scalable_opts x2 = {100, 0.01, 4, 0.5, 0, 7}, seed = {100, 0.01, 2, 0.5, 0, 8},
                  first = {200, 0.01, 2, 0.5, 0, 7};
    const scalable_opts *others[] = {&x2, &seed, &first};
    for (size_t i = 0; i < 3; i++) {
        once_filter *other = make(others[i]);
        REQUIRE(other != NULL);
        CHECK_STATUS(once_union(c, other), ONCE_ERR_MISMATCH);
        once_free(other);
    }

    /* Growth past dst's max_bytes: refused, dst unchanged byte for byte. */
    once_filter *probe = make(&o);
    REQUIRE(probe != NULL);
    fill_to(probe, 4, 150);
    scalable_opts capped = o;
    capped.max_bytes = once_bytes(probe) + 64; /* two sub-filters, not three */
    once_free(probe);
    once_filter *small = make(&capped);
    REQUIRE(small != NULL);
    fill_to(small, 4, 150);
    size_t before_len = 0, after_len = 0;
    uint8_t *before = testing_save(small, &before_len);
    uint64_t bytes = once_bytes(small), items = once_items(small);
    CHECK_STATUS(once_union(small, b), ONCE_ERR_FULL);
    uint8_t *after = testing_save(small, &after_len);
    CHECK(before != NULL && after != NULL && before_len == after_len &&
          memcmp(before, after, before_len) == 0);
    CHECK(once_bytes(small) == bytes && once_items(small) == items);
    once_free_buffer(before);
    once_free_buffer(after);
    once_free(small);
    once_free(a);
    once_free(b);
    once_free(c);
}

static void unsupported_operations(void)
{
    scalable_opts o = {1000, 0.01, 2, 0.5, 0, 121};
    once_filter *a = make(&o), *b = make(&o);
    scalable_opts other = {2000, 0.01, 2, 0.5, 0, 121};
    once_filter *c = make(&other);
    REQUIRE(a != NULL && b != NULL && c != NULL);
    CHECK(tand(a, 13, 1) == false);
    CHECK_STATUS(once_intersect(a, b), ONCE_ERR_UNSUPPORTED);
    CHECK_STATUS(once_union(a, c), ONCE_ERR_MISMATCH);
    testing_key k = testing_key_make(13, 1);
    CHECK_STATUS(once_remove(a, &k, sizeof k, 0), ONCE_ERR_UNSUPPORTED);
    bool p = false;
    uint32_t reads = 0;
    CHECK_STATUS(once_query_reads(a, &k, sizeof k, 0, &p, &reads), ONCE_ERR_UNSUPPORTED);
    CHECK(once_items(a) == 1 && present(a, 13, 1));
    once_free(a);
    once_free(b);
    once_free(c);
}

/* Distinct keys from the cells of every sub-filter: the interval holds the keys the
 * filter took (items: every add of a key not yet present), with repeats in the
 * stream and across five growths. */
static void distinct_keys_across_sub_filters(void)
{
    scalable_opts o = {2000, 0.01, 2, 0.5, 0, 131};
    once_filter *f = make(&o);
    REQUIRE(f != NULL);
    uint64_t state = 9;
    for (uint64_t i = 0; i < 150000; i++) {
        state = testing_mix(state);
        tand(f, 17, state % 90000); /* about 70000 distinct of 90000 */
        if (i % 30000 != 29999)
            continue;
        once_cardinality c;
        CHECK_OK(once_estimate_cardinality(f, 0, 0.9, &c));
        double truth = (double)once_items(f);
        CHECK(c.low <= truth && truth <= c.high);
        CHECK(fabs(c.estimate - truth) < 0.03 * truth);
    }
    CHECK(testing_stats(f).filters >= 5);
    once_free(f);
}

static const testing_case cases[] = {
    {"compound_rate_within_bound_to_100x", compound_rate_within_bound_to_100x},
    {"no_false_negatives", no_false_negatives},
    {"duplicates_are_not_counted", duplicates_are_not_counted},
    {"nonscaling_refuses_when_full", nonscaling_refuses_when_full},
    {"union_of_chains_keeps_every_key", union_of_chains_keeps_every_key},
    {"expansion_and_tightening_progression", expansion_and_tightening_progression},
    {"growth_limits_refuse_and_keep_state", growth_limits_refuse_and_keep_state},
    {"batch_matches_single", batch_matches_single},
    {"save_mid_growth_then_continue", save_mid_growth_then_continue},
    {"clear_returns_to_initial_state", clear_returns_to_initial_state},
    {"every_truncation_and_byte", every_truncation_and_byte},
    {"hostile_params_refused", hostile_params_refused},
    {"invalid_configs", invalid_configs},
    {"unsupported_operations", unsupported_operations},
    {"distinct_keys_across_sub_filters", distinct_keys_across_sub_filters},
};

TESTING_MAIN(cases)
