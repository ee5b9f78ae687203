/*
 * One filter sliced over sites (paper 000, section 3; once.h, "Sliced filters").
 *
 * Specification:
 *   - vertical slicing decides every event exactly as the unsliced standard filter of
 *     the same m, k and seed (Proposition 1 via Eq. 3), for FTTS and TAS, parallel and
 *     pipelined lookups, any number of slices;
 *   - horizontal slicing has no false negatives, and its measured false-positive rate
 *     is within a binomial bound of Eq. 4;
 *   - a pipelined lookup sends no more messages than a parallel one, event by event,
 *     and fewer over a stream of distinct events;
 *   - loads, fairness and max load are counted as the paper defines them;
 *   - a site that cannot be reached is reported (ONCE_ERR_UNAVAILABLE), never taken
 *     for an answer, unless the threshold rule decides without it: then the measured
 *     FP and FN follow the exact formulas (Fig. 5(d)), FP non-increasing and FN
 *     non-decreasing in x;
 *   - the failure formulas reduce to Eqs. 5 and 6 at x = 0, vertical is never above
 *     horizontal, and S_f is the fewest slices that hold the bound;
 *   - invalid configurations are refused.
 */
#include "testing.h"

#include "once_math.h"

static once_sliced_config config_of(once_slicing slicing, uint32_t slices, uint64_t bits,
                                    uint32_t hashes, once_primitive primitive,
                                    once_lookup lookup)
{
    once_sliced_config c;
    memset(&c, 0, sizeof c);
    c.slicing = slicing;
    c.slices = slices;
    c.bits = bits;
    c.hashes = hashes;
    c.seed = 77;
    c.seed_is_set = true;
    c.primitive = primitive;
    c.lookup = lookup;
    return c;
}

static void vertical_decides_as_the_unsliced_filter(void)
{
    const uint32_t slice_counts[] = {1, 2, 3, 8, 40};
    for (size_t s = 0; s < sizeof slice_counts / sizeof slice_counts[0]; s++)
        for (int primitive = 0; primitive < 2; primitive++)
            for (int lookup = 0; lookup < 2; lookup++) {
                if (primitive == ONCE_TAS && lookup == ONCE_LOOKUP_PIPELINED)
                    continue;
                once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, slice_counts[s],
                                                 40000, 4, (once_primitive)primitive,
                                                 (once_lookup)lookup);
                once_sliced *v = NULL;
                CHECK_OK(once_sliced_create(&v, &c, NULL));
                once_sliced_stats st;
                CHECK_OK(once_sliced_get_stats(v, &st));
                /* The standard filter of the rounded geometry and the same seed. */
                once_config sc;
                once_config_init(&sc, ONCE_STANDARD);
                sc.bits = st.bits;
                sc.hashes = st.hashes;
                sc.seed = 77;
                sc.seed_is_set = true;
                once_filter *f = testing_create(&sc);
                REQUIRE(v != NULL && f != NULL);
                uint64_t differ = 0, dups = 0;
                for (uint64_t i = 0; i < 12000; i++) {
                    /* Repeats near and far, and enough distinct keys to fill. */
                    testing_key k = testing_key_make(3, testing_mix(i) % 6000);
                    bool a = false, b = false;
                    CHECK_OK(once_sliced_test_and_add(v, &k, sizeof k, &a));
                    CHECK_OK(once_test_and_add(f, &k, sizeof k, 0, &b));
                    differ += a != b;
                    dups += a;
                }
                CHECK(differ == 0);
                CHECK(dups > 0 && dups < 12000);
                for (uint64_t i = 0; i < 3000; i++) { /* queries too, of unseen keys */
                    testing_key k = testing_key_make(4, i);
                    bool a = false, b = false;
                    CHECK_OK(once_sliced_query(v, &k, sizeof k, &a));
                    CHECK_OK(once_query(f, &k, sizeof k, 0, &b));
                    CHECK(a == b);
                }
                once_sliced_free(v);
                once_free(f);
            }
}

static void horizontal_rate_follows_eq4(void)
{
    const uint64_t m = 48000, n = 5000;
    const uint32_t k = 4, slices = 8;
    for (int primitive = 0; primitive < 2; primitive++) {
        once_sliced_config c = config_of(ONCE_SLICING_HORIZONTAL, slices, m, k,
                                         (once_primitive)primitive, ONCE_LOOKUP_PARALLEL);
        once_sliced *h = NULL;
        CHECK_OK(once_sliced_create(&h, &c, NULL));
        REQUIRE(h != NULL);
        for (uint64_t i = 0; i < n; i++) {
            testing_key key = testing_key_make(5, i);
            bool seen = false;
            CHECK_OK(once_sliced_test_and_add(h, &key, sizeof key, &seen));
        }
        for (uint64_t i = 0; i < n; i++) { /* no false negatives */
            testing_key key = testing_key_make(5, i);
            bool present = false;
            CHECK_OK(once_sliced_query(h, &key, sizeof key, &present));
            CHECK(present);
        }
        uint64_t fp = 0, trials = 200000;
        for (uint64_t i = 0; i < trials; i++) {
            testing_key key = testing_key_make(6, i);
            bool present = false;
            CHECK_OK(once_sliced_query(h, &key, sizeof key, &present));
            fp += present;
        }
        /* Eq. 4, with the keys a slice holds binomial around n/S (the rate is convex
         * in them, so Eq. 4 at the mean is slightly low: 5 sigmas absorb it). */
        double p = pow(1.0 - pow(1.0 - (double)slices / (double)m, (double)k * n / slices), k);
        CHECK(testing_within_sigmas(fp, trials, p, 5.0));
        /* One event, one slice: one message (FTTS adds one to set a distinct event's
         * bits). */
        once_sliced_stats st;
        CHECK_OK(once_sliced_get_stats(h, &st));
        CHECK(st.events == n && st.slices == slices);
        CHECK(st.fairness > 0.95 && st.fairness <= 1.0);
        uint64_t loads[8], sum = 0;
        CHECK_OK(once_sliced_loads(h, loads, 8));
        for (int i = 0; i < 8; i++)
            sum += loads[i];
        CHECK(sum == n);
        once_sliced_free(h);
    }
}

static void pipelined_sends_no_more_messages(void)
{
    once_sliced_config par = config_of(ONCE_SLICING_VERTICAL, 8, 80000, 4, ONCE_FTTS,
                                       ONCE_LOOKUP_PARALLEL);
    once_sliced_config pip = par;
    pip.lookup = ONCE_LOOKUP_PIPELINED;
    once_sliced *a = NULL, *b = NULL;
    CHECK_OK(once_sliced_create(&a, &par, NULL));
    CHECK_OK(once_sliced_create(&b, &pip, NULL));
    REQUIRE(a != NULL && b != NULL);
    uint64_t before_a = 0, before_b = 0;
    for (uint64_t i = 0; i < 5000; i++) {
        testing_key k = testing_key_make(7, i % 4000); /* 80% distinct */
        bool x = false, y = false;
        CHECK_OK(once_sliced_test_and_add(a, &k, sizeof k, &x));
        CHECK_OK(once_sliced_test_and_add(b, &k, sizeof k, &y));
        CHECK(x == y);
        once_sliced_stats sa, sb;
        CHECK_OK(once_sliced_get_stats(a, &sa));
        CHECK_OK(once_sliced_get_stats(b, &sb));
        CHECK(sb.messages - before_b <= sa.messages - before_a);
        before_a = sa.messages;
        before_b = sb.messages;
    }
    CHECK(before_b < before_a);
    /* A vertical event touches at most k slices: at most 2k messages with FTTS. */
    once_sliced_stats sa;
    CHECK_OK(once_sliced_get_stats(a, &sa));
    CHECK(sa.messages_per_event > 1.0 && sa.messages_per_event <= 8.0);
    CHECK(sa.max_load <= sa.events);
    once_sliced_free(a);
    once_sliced_free(b);
}

/* A site that answers, or says it cannot be reached. */
typedef struct flaky_site {
    uint64_t words[1024];
    bool down;
    int *destroyed;
} flaky_site;

static void flaky_run(void *context, once_site_request *requests, size_t count)
{
    flaky_site *s = context;
    for (size_t r = 0; r < count; r++) {
        once_site_request *q = &requests[r];
        q->status = s->down ? ONCE_ERR_UNAVAILABLE : ONCE_OK;
        if (s->down)
            continue;
        q->all_set = true;
        for (uint32_t i = 0; i < q->count; i++) {
            uint64_t p = q->positions[i];
            q->all_set = q->all_set && (s->words[p / 64] >> (p % 64) & 1);
            if (q->op != ONCE_SITE_TEST)
                s->words[p / 64] |= UINT64_C(1) << (p % 64);
        }
    }
}

static void flaky_destroy(void *context)
{
    flaky_site *s = context;
    (*s->destroyed)++;
}

static void unreachable_sites_are_reported(void)
{
    once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, 4, 4 * 65536, 6, ONCE_FTTS,
                                     ONCE_LOOKUP_PARALLEL);
    uint64_t m = 0, slice_bits = 0;
    uint32_t k = 0;
    CHECK_OK(once_sliced_geometry(&c, &m, &k, &slice_bits));
    CHECK(m == 4 * 65536 && k == 6 && slice_bits == 65536);
    static flaky_site store[4];
    int destroyed = 0;
    once_site sites[4];
    for (int i = 0; i < 4; i++) {
        memset(&store[i], 0, sizeof store[i]);
        store[i].destroyed = &destroyed;
        sites[i] = (once_site){&store[i], flaky_run, flaky_destroy};
    }
    once_sliced *f = NULL;
    CHECK_OK(once_sliced_create(&f, &c, sites));
    REQUIRE(f != NULL);
    testing_key k1 = testing_key_make(8, 1);
    bool seen = true;
    CHECK_OK(once_sliced_test_and_add(f, &k1, sizeof k1, &seen));
    CHECK(!seen);
    CHECK_OK(once_sliced_test_and_add(f, &k1, sizeof k1, &seen));
    CHECK(seen);
    for (int i = 0; i < 4; i++)
        store[i].down = true;
    CHECK_STATUS(once_sliced_test_and_add(f, &k1, sizeof k1, &seen), ONCE_ERR_UNAVAILABLE);
    CHECK_STATUS(once_sliced_query(f, &k1, sizeof k1, &seen), ONCE_ERR_UNAVAILABLE);
    once_sliced_free(f);
    CHECK(destroyed == 4);
}

/* Fig. 5(d) of paper 000: k = 8, S = 40, 8 sites failed, the threshold rule for x =
 * 1..7: measured FP and FN each within a binomial bound of the exact formulas
 * (lib/math/slicing.c), FP non-increasing and FN non-decreasing in x.  The formulas
 * take a key's k positions as independent, which the keyed bit placement of vertical
 * slicing makes true of the slices they land in (lib/slice/sliced.c, bit_place). */
static void failed_sites_follow_the_threshold_formulas(void)
{
    enum { SLICES = 40, K = 8, FAILED = 8 };
    const uint64_t slice_bits = 6400, m = SLICES * slice_bits, n = 22000, trials = 20000;
    static flaky_site store[7][SLICES];
    int destroyed = 0;
    uint64_t last_fp = UINT64_MAX, last_fn = 0;
    for (uint32_t x = 1; x <= 7; x++) {
        once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, SLICES, m, K, ONCE_FTTS,
                                         ONCE_LOOKUP_PARALLEL);
        c.on_failure = ONCE_FAILURE_THRESHOLD;
        c.threshold = x;
        once_site sites[SLICES];
        for (int i = 0; i < SLICES; i++) {
            memset(&store[x - 1][i], 0, sizeof store[x - 1][i]);
            store[x - 1][i].destroyed = &destroyed;
            sites[i] = (once_site){&store[x - 1][i], flaky_run, flaky_destroy};
        }
        once_sliced *f = NULL;
        CHECK_OK(once_sliced_create(&f, &c, sites));
        REQUIRE(f != NULL);
        for (uint64_t i = 0; i < n; i++) {
            testing_key k = testing_key_make(9, i);
            bool seen = false;
            CHECK_OK(once_sliced_test_and_add(f, &k, sizeof k, &seen));
        }
        static const int down[FAILED] = {2, 9, 13, 17, 24, 30, 33, 39};
        for (int i = 0; i < FAILED; i++)
            store[x - 1][down[i]].down = true;
        uint64_t fp = 0, fn = 0;
        for (uint64_t i = 0; i < trials; i++) {
            testing_key absent = testing_key_make(10, i), added = testing_key_make(9, i);
            bool p = false, q = false;
            CHECK_OK(once_sliced_query(f, &absent, sizeof absent, &p));
            CHECK_OK(once_sliced_query(f, &added, sizeof added, &q));
            fp += p;
            fn += !q;
        }
        double want_fp = 0, want_fn = 0;
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, K, SLICES, n,
                                           (double)FAILED / SLICES, x, &want_fp, &want_fn));
        CHECK(testing_within_sigmas(fp, trials, want_fp, 5.0));
        CHECK(testing_within_sigmas(fn, trials, want_fn, 5.0));
        CHECK(fp <= last_fp && fn >= last_fn);
        last_fp = fp;
        last_fn = fn;
        once_sliced_stats st;
        CHECK_OK(once_sliced_get_stats(f, &st));
        CHECK(st.failed_messages > 0 && st.failed_messages < st.messages);
        once_sliced_free(f);
    }
    CHECK(destroyed == 7 * SLICES);
}

/* The formulas at their ends: x = 0 is Eq. 6 (a failed position counts as set), x = k
 * counts only reachable set positions; horizontal Eq. 5; S_f of Definition 3. */
static void failure_formulas_and_sites_needed(void)
{
    const uint64_t m = 100000, n = 10000;
    const uint32_t k = 5, slices = 10;
    double q = 1.0 - pow(1.0 - 1.0 / m, (double)k * n);
    for (int f = 0; f <= 5; f++) {
        double phi = f / 10.0, fp = 0, fn = 0;
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, slices, n, phi, 0, &fp,
                                           &fn));
        CHECK(fabs(fp - pow(phi + (1 - phi) * q, k)) < 1e-12 && fn == 0.0);
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, slices, n, phi, k, &fp,
                                           &fn));
        CHECK(fabs(fp - pow((1 - phi) * q, k)) < 1e-12);
        CHECK(fabs(fn - (1.0 - pow(1 - phi, k))) < 1e-12);
        double ph = once_sliced_fpr(ONCE_SLICING_HORIZONTAL, m, k, slices, n);
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_HORIZONTAL, m, k, slices, n, phi, 0,
                                           &fp, &fn));
        CHECK(fabs(fp - (phi + (1 - phi) * ph)) < 1e-12 && fn == 0.0);
        /* Fig. 1(a): vertical at or below horizontal at every failed fraction. */
        double vfp = 0, vfn = 0;
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, slices, n, phi, 0, &vfp,
                                           &vfn));
        CHECK(vfp <= fp);
    }
    /* Eq. 3 is the unsliced rate; Eq. 4 is above it and tends to it as m/S grows. */
    CHECK(once_sliced_fpr(ONCE_SLICING_VERTICAL, m, k, slices, n) ==
          once_fpr_standard(m, k, n));
    CHECK(once_sliced_fpr(ONCE_SLICING_HORIZONTAL, m, k, slices, n) >
          once_fpr_standard(m, k, n));
    /* S_f: enough slices that f failures keep the rate under Pmax; more failures need
     * more slices; vertical needs no more than horizontal. */
    uint32_t prev = 0;
    for (uint32_t failures = 1; failures <= 4; failures++) {
        uint32_t v = once_sliced_sites_for_failures(ONCE_SLICING_VERTICAL, m, k, n, failures,
                                                    0.05);
        uint32_t h = once_sliced_sites_for_failures(ONCE_SLICING_HORIZONTAL, m, k, n, failures,
                                                    0.05);
        CHECK(v > failures && v >= prev && (h == 0 || v <= h));
        double fp = 0, fn = 0;
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, v, n,
                                           (double)failures / v, 0, &fp, &fn));
        CHECK(fp <= 0.05);
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, v - 1, n,
                                           (double)failures / (v - 1), 0, &fp, &fn));
        CHECK(v - 1 == failures || fp > 0.05);
        prev = v;
    }
    double fp = 0, fn = 0;
    CHECK_STATUS(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, slices, n, 1.5, 0, &fp,
                                           &fn), ONCE_ERR_INVALID);
    CHECK_STATUS(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, slices, n, 0.1, k + 1,
                                           &fp, &fn), ONCE_ERR_INVALID);
}

static void invalid_configs_refused(void)
{
    once_sliced *f = NULL;
    once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, 4, 1000, 4, ONCE_FTTS,
                                     ONCE_LOOKUP_PARALLEL);
    once_sliced_config bad = c;
    bad.slices = 0;
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.slices = 5000;
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.slicing = (once_slicing)9;
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.primitive = ONCE_TAS;
    bad.lookup = ONCE_LOOKUP_PIPELINED; /* a TAS sets every bit: nothing to stop early */
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.on_failure = ONCE_FAILURE_THRESHOLD;
    bad.threshold = 5; /* more than k */
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.hashes = 65;
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.bits = UINT64_C(1) << 41;
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_TOO_LARGE);
    CHECK(f == NULL);
    /* Derived from capacity and error: the standard filter's geometry, rounded. */
    once_sliced_config derived = c;
    derived.bits = 0;
    derived.hashes = 0;
    derived.capacity = 10000;
    derived.error = 0.01;
    uint64_t m = 0, slice_bits = 0, plain = 0;
    uint32_t k = 0, plain_k = 0;
    CHECK_OK(once_sliced_geometry(&derived, &m, &k, &slice_bits));
    CHECK_OK(once_plan(ONCE_STANDARD, 10000, 0.01, &plain, &plain_k));
    CHECK(m >= plain && m < plain + 64 * 4 && m % 256 == 0 && k == plain_k);
    CHECK(slice_bits * 4 == m);
}

static const testing_case cases[] = {
    {"vertical_decides_as_the_unsliced_filter", vertical_decides_as_the_unsliced_filter},
    {"horizontal_rate_follows_eq4", horizontal_rate_follows_eq4},
    {"pipelined_sends_no_more_messages", pipelined_sends_no_more_messages},
    {"unreachable_sites_are_reported", unreachable_sites_are_reported},
    {"failed_sites_follow_the_threshold_formulas", failed_sites_follow_the_threshold_formulas},
    {"failure_formulas_and_sites_needed", failure_formulas_and_sites_needed},
    {"invalid_configs_refused", invalid_configs_refused},
};

TESTING_MAIN(cases)
