/*
 * test_probe.c - where keys sit, and the false-positive rates that follow.
 *
 * Every layout but the blocked one places a key's bits with the shared probe
 * (lib/core/hash.h).  These cases are its specification:
 *   - a key's k probes fall on distinct cells as often as k independent uniform draws
 *     would, at every range, including the small ones where format 1's linear probe
 *     collapsed a few keys in ten thousand onto a handful of cells; that probe, kept for
 *     filters loaded from format-1 files, is measured too, and shows its collapse;
 *   - for the standard, counting, partitioned and block-partitioned filters, the
 *     count (APBF) and time (TLBF) windows and the sliced filters (horizontal and
 *     vertical), at targets 1e-5 and 1e-7 with n (or the window) 100, 1,000 and 10^4,
 *     the false positives among absent keys stay within a statistical bound of the rate
 *     the filter's cells give (its stats' estimate: the fill to the k-th power, or the
 *     age recurrence over the slices' fills), and that rate within the target's reach.
 *
 * The bound: X absent keys found present of Q queried is Binomial(Q, r) with r the
 * rate the cells give, so X <= Q r + 5 sqrt(Q r) + 3 fails by chance about once in a
 * million runs, while format 1's floor (4x to 300x the target at these sizes) passes
 * it in none.  Q is 10^8 at 1e-7 (about 10 expected) and 10^7 at 1e-5 in the release
 * build, a hundredth of that under the sanitizers (ONCE_TESTS_SANITIZED), where these
 * cases then check the machinery rather than the rates' tails.
 */
#include "testing.h"
#include "once_math.h"

#include <inttypes.h>

#ifdef ONCE_TESTS_SANITIZED
#define QUERY_SCALE 100
#else
#define QUERY_SCALE 1
#endif

static const double targets[] = {1e-5, 1e-7};
static const uint64_t sizes[] = {100, 1000, 10000};
#define TARGETS (sizeof targets / sizeof targets[0])
#define SIZES (sizeof sizes / sizeof sizes[0])
#define SEED 0x70726f6265ull /* "probe" */

/* Absent keys queried at `target`: about ten expected false positives at 1e-7. */
static uint64_t queries_for(double target)
{
    return (target < 1e-6 ? UINT64_C(100000000) : UINT64_C(10000000)) / QUERY_SCALE;
}

/* Random digests, as XXH3-128 gives keys: domain `domain`, item i. */
static once_digest digest_of(uint64_t domain, uint64_t i)
{
    once_digest d = {testing_mix(i ^ (domain << 56)), testing_mix(~i ^ (domain << 48))};
    return d;
}

/* Does X of Q sit within the bound of rate r (the header's)?  Also that r itself is
 * within reach of the target: at most 3 times it (a filter's rate at its capacity
 * spreads around the target with its fill; 3x is far past that spread at these
 * sizes and far below the floors). */
static void check_rate(const char *what, double target, uint64_t n, uint64_t fp, uint64_t q,
                       double rate)
{
    double expected = rate * (double)q;
    double upper = expected + 5.0 * sqrt(expected) + 3.0;
    double lower = expected / 2.0 - 5.0 * sqrt(expected);
    fprintf(stderr, "%-22s p %.0e n %6" PRIu64 ": %4" PRIu64 " of %" PRIu64
                    " (%.2e; cells give %.2e, %.2fx the target)\n",
            what, target, n, fp, q, (double)fp / (double)q, rate, rate / target);
    if ((double)fp > upper || (double)fp < lower)
        fprintf(stderr, "  outside [%.1f, %.1f]\n", lower, upper);
    CHECK((double)fp <= upper);
    CHECK((double)fp >= lower);
    CHECK(rate <= 3.0 * target);
}

/* Absent digests found present by a filter at time `now`, q of them, in batches. */
static uint64_t false_positives(const once_filter *f, uint64_t q, uint64_t now)
{
    enum { BATCH = 4096 };
    static once_digest d[BATCH];
    static uint64_t times[BATCH];
    static uint8_t out[BATCH];
    uint64_t found = 0;
    for (size_t i = 0; i < BATCH; i++)
        times[i] = now;
    for (uint64_t at = 0; at < q; at += BATCH) {
        size_t count = q - at < BATCH ? (size_t)(q - at) : BATCH;
        for (size_t i = 0; i < count; i++)
            d[i] = digest_of(2, at + i);
        if (once_query_digest_batch(f, d, times, count, out) != ONCE_OK)
            return UINT64_MAX;
        for (size_t i = 0; i < count; i++)
            found += out[i];
    }
    return found;
}

/* ------------------------------------------------------------ distinct cells */

/* Of `keys` digests, how many put their k probes on at most k/2 distinct cells, and
 * the mean number of distinct cells.  once_positions gives the probes. */
static uint64_t collapsed_keys(const once_filter *f, uint64_t keys, double *mean)
{
    uint64_t collapsed = 0, total = 0;
    uint64_t pos[64];
    for (uint64_t i = 0; i < keys; i++) {
        once_digest d = digest_of(3, i);
        uint32_t k = 64;
        if (once_positions(f, &d, pos, &k) != ONCE_OK)
            return UINT64_MAX;
        uint32_t distinct = 0;
        for (uint32_t a = 0; a < k; a++) {
            bool seen = false;
            for (uint32_t b = 0; b < a && !seen; b++)
                seen = pos[b] == pos[a];
            distinct += !seen;
        }
        total += distinct;
        collapsed += distinct <= k / 2;
    }
    *mean = (double)total / (double)keys;
    return collapsed;
}

static void probes_fall_on_distinct_cells(void)
{
    const uint64_t keys = 1000000 / QUERY_SCALE;
    /* Standard filters at 1e-7 for n = 100 .. 10^4 (k = 23): m from 3,355 bits up.
     * k uniform draws over m cells give m (1 - (1 - 1/m)^k) distinct ones on average,
     * and k/2 or fewer with a probability below 1e-20 at these m. */
    for (size_t s = 0; s < SIZES; s++) {
        once_filter *f = testing_make(ONCE_STANDARD, sizes[s], 1e-7, SEED);
        REQUIRE(f != NULL);
        once_stats st = testing_stats(f);
        double mean = 0;
        uint64_t collapsed = collapsed_keys(f, keys, &mean);
        double m = (double)st.bits, k = st.hashes;
        double expected = m * (1.0 - pow(1.0 - 1.0 / m, k));
        /* The number of distinct cells has variance below its expected collisions. */
        double sd = sqrt((k - expected + 1e-9) / (double)keys);
        fprintf(stderr, "m %7" PRIu64 " k %2u: %" PRIu64 " of %" PRIu64
                        " keys on <= k/2 cells; %.5f distinct (uniform draws: %.5f)\n",
                st.bits, st.hashes, collapsed, keys, mean, expected);
        CHECK(collapsed == 0);
        CHECK(fabs(mean - expected) <= 6.0 * sd);
        CHECK(strcmp(st.probe, "mixed") == 0 && st.format == ONCE_FORMAT_VERSION);
        once_free(f);
    }

    /* The same count on a filter of format 1 (tests/golden/v1/standard.once: m = 959,
     * k = 7), whose linear probe this library keeps for it: a few keys in ten thousand
     * collapse there (steps near 0 or 1/2 of the range put 7 probes on 1 to 4 cells),
     * where uniform draws would collapse about one in five million. */
    FILE *in = fopen(ONCE_GOLDEN_DIR "/v1/standard.once", "rb");
    REQUIRE(in != NULL);
    static uint8_t file[1 << 16];
    size_t len = fread(file, 1, sizeof file, in);
    fclose(in);
    once_filter *old = NULL;
    CHECK_OK(once_load(&old, file, len));
    REQUIRE(old != NULL);
    once_stats st = testing_stats(old);
    CHECK(strcmp(st.probe, "linear") == 0 && st.format == 1);
    double mean = 0;
    uint64_t collapsed = collapsed_keys(old, keys, &mean);
    fprintf(stderr, "format 1, m %" PRIu64 " k %u: %" PRIu64 " of %" PRIu64
                    " keys on <= k/2 cells\n",
            st.bits, st.hashes, collapsed, keys);
    CHECK(collapsed * 20000 >= keys); /* at least 1 in 20,000 */
    once_free(old);
}

/* ------------------------------------------------------------- filters' rates */

/* A static filter of n keys at each target: its rate, from its stats (fill^k, or the
 * product over blocks), against the false positives measured. */
static void static_rates(once_type type, const char *name)
{
    for (size_t t = 0; t < TARGETS; t++)
        for (size_t s = 0; s < SIZES; s++) {
            uint64_t n = sizes[s];
            once_filter *f = testing_make(type, n, targets[t], SEED + s);
            REQUIRE(f != NULL);
            for (uint64_t i = 0; i < n; i++) {
                once_digest d = digest_of(1, i);
                CHECK_OK(once_add_digest(f, &d, 0));
            }
            once_stats st = testing_stats(f);
            uint64_t q = queries_for(targets[t]);
            check_rate(name, targets[t], n, false_positives(f, q, 0), q, st.fpr_estimate);
            once_free(f);
        }
}

static void standard_rates(void)
{
    static_rates(ONCE_STANDARD, "standard");
}

static void counting_rates(void)
{
    static_rates(ONCE_COUNTING, "counting");
}

static void partitioned_rates(void)
{
    static_rates(ONCE_PARTITIONED, "partitioned");
}

static void bpbf_rates(void)
{
    static_rates(ONCE_BPBF, "bpbf");
}

/* Windows of n keys: a count window (APBF) of n, or a time window (TLBF) of one second
 * at n keys a second, evenly spaced; 3n keys by test-and-add (three windows: the
 * filter has shifted through every slice), then the absent keys at the last one's
 * time.  The rate is the age recurrence at the live slices' fills. */
static void window_rates(once_type type, const char *name)
{
    const uint64_t span = 1000, windows = 3;
    for (size_t t = 0; t < TARGETS; t++)
        for (size_t s = 0; s < SIZES; s++) {
            uint64_t n = sizes[s];
            once_config c = testing_config(type, SEED + s);
            c.window = n;   /* the APBF's */
            c.capacity = n; /* the TLBF's keys a span */
            c.span_ms = span;
            c.error = targets[t];
            once_filter *f = testing_create(&c);
            REQUIRE(f != NULL);
            uint64_t now = 0;
            for (uint64_t i = 0; i < windows * n; i++) {
                once_digest d = digest_of(1, i);
                bool seen;
                now = i * span / n;
                CHECK_OK(once_test_and_add_digest(f, &d, now, &seen));
            }
            once_stats st = testing_stats(f);
            uint64_t q = queries_for(targets[t]);
            check_rate(name, targets[t], n, false_positives(f, q, now), q, st.fpr_estimate);
            once_free(f);
        }
}

static void apbf_rates(void)
{
    window_rates(ONCE_APBF, "apbf");
}

static void tlbf_rates(void)
{
    window_rates(ONCE_TLBF, "tlbf");
}

/* A sliced filter of n keys over S memory sites: the rate its sites' cells give, the
 * mean over the slices of fill^k for horizontal slicing (a key's k positions are in
 * the one slice its hash picks, over all of its cells), the whole filter's fill^k for
 * vertical (positions over its m bits; the sites' cells past m, rounding each up to
 * whole words, are never set).  A sliced query is slow (a request per site it
 * touches, as a message would be): a twentieth of the queries, which still tell
 * format 1's floor (50 expected at 1e-7 where 0.5 are) from the rate. */
static void sliced_rates(once_slicing slicing, const char *name)
{
    for (size_t t = 0; t < TARGETS; t++)
        for (size_t s = 0; s < SIZES; s++) {
            uint64_t n = sizes[s];
            once_sliced_config c;
            memset(&c, 0, sizeof c);
            c.slicing = slicing;
            c.slices = slicing == ONCE_SLICING_HORIZONTAL ? (n >= 10000 ? 32 : 4) : 8;
            c.capacity = n;
            c.error = targets[t];
            c.seed = SEED + s;
            c.seed_is_set = true;
            once_sliced *f = NULL;
            CHECK_OK(once_sliced_create(&f, &c, NULL));
            REQUIRE(f != NULL);
            testing_sliced_fill(f, 1, n);
            once_sliced_stats st;
            CHECK_OK(once_sliced_get_stats(f, &st));
            double rate = 0, set = 0;
            for (uint32_t site = 0; site < st.sites; site++) {
                once_site_info info;
                CHECK_OK(once_sliced_site_info(f, site, &info));
                rate += pow((double)info.cells_set / (double)info.cells, st.hashes) / st.sites;
                set += (double)info.cells_set;
            }
            if (slicing == ONCE_SLICING_VERTICAL)
                rate = pow(set / (double)st.bits, st.hashes);
            uint64_t q = queries_for(targets[t]) / 20;
            uint64_t found = 0;
            for (uint64_t i = 0; i < q; i++) {
                testing_key key = testing_key_make(2, i);
                bool present = false;
                CHECK_OK(once_sliced_query(f, &key, sizeof key, 0, &present));
                found += present;
            }
            check_rate(name, targets[t], n, found, q, rate);
            once_sliced_free(f);
        }
}

static void sliced_horizontal_rates(void)
{
    sliced_rates(ONCE_SLICING_HORIZONTAL, "sliced horizontal");
}

static void sliced_vertical_rates(void)
{
    sliced_rates(ONCE_SLICING_VERTICAL, "sliced vertical");
}

static const testing_case cases[] = {
    {"probes_fall_on_distinct_cells", probes_fall_on_distinct_cells},
    {"standard_rates", standard_rates},
    {"counting_rates", counting_rates},
    {"partitioned_rates", partitioned_rates},
    {"bpbf_rates", bpbf_rates},
    {"apbf_rates", apbf_rates},
    {"tlbf_rates", tlbf_rates},
    {"sliced_horizontal_rates", sliced_horizontal_rates},
    {"sliced_vertical_rates", sliced_vertical_rates},
};

TESTING_MAIN(cases)
