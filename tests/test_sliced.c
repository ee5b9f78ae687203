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
 *   - diced slicing (section 3.3) has no false negatives and the rates of its formulas:
 *     h-v horizontal's over S slices, v-h horizontal's over S S' parts; with failed
 *     sites both follow the vertical failure formulas over S S' sites (Eq. 7);
 *   - no split of k into k1 slices of k2 bits does better than another (Proposition 2:
 *     (1,4), (2,2) and (4,1) measure within each other's intervals and the common rate);
 *   - a batch answers, and leaves the sites, exactly as one-key calls in array order
 *     (repeats inside a batch included), for every slicing, primitive and lookup, on
 *     memory sites and on thread sites; with a site down it reports the events it
 *     cannot decide and decides the others, or, under the threshold rule, decides as
 *     the one-key calls do;
 *   - invalid configurations are refused, and sites given to a creation that fails
 *     stay the caller's.
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

static once_sliced *sliced_make(const once_sliced_config *c)
{
    once_sliced *f = NULL;
    CHECK_OK(once_sliced_create(&f, c, NULL));
    return f;
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
                /* The standard filter of the same geometry and seed. */
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

/* Sized from capacity and error, a vertical filter is the standard filter that
 * once_create builds for them (what `once --slicing vertical` relies on). */
static void vertical_from_capacity_is_the_standard_filter(void)
{
    const uint32_t slice_counts[] = {3, 7, 64};
    for (size_t s = 0; s < 3; s++) {
        once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, slice_counts[s], 0, 0,
                                         ONCE_FTTS, ONCE_LOOKUP_PARALLEL);
        c.capacity = 3000;
        c.error = 0.01;
        once_sliced *v = sliced_make(&c);
        once_config sc;
        once_config_init(&sc, ONCE_STANDARD);
        sc.capacity = 3000;
        sc.error = 0.01;
        sc.seed = 77;
        sc.seed_is_set = true;
        once_filter *f = testing_create(&sc);
        REQUIRE(v != NULL && f != NULL);
        once_sliced_stats vs;
        CHECK_OK(once_sliced_get_stats(v, &vs));
        once_stats fs = testing_stats(f);
        CHECK(vs.bits == fs.bits && vs.hashes == fs.hashes);
        uint64_t differ = 0;
        for (uint64_t i = 0; i < 6000; i++) { /* past capacity: false positives differ too */
            testing_key k = testing_key_make(30, testing_mix(i) % 4000);
            bool a = false, b = false;
            CHECK_OK(once_sliced_test_and_add(v, &k, sizeof k, &a));
            CHECK_OK(once_test_and_add(f, &k, sizeof k, 0, &b));
            differ += a != b;
        }
        CHECK(differ == 0);
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
        sites[i] = (once_site){.context = &store[i], .run = flaky_run, .destroy = flaky_destroy};
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
            sites[i] = (once_site){.context = &store[x - 1][i], .run = flaky_run, .destroy = flaky_destroy};
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
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, K, SLICES, 1, n,
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
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, slices, 1, n, phi, 0, &fp,
                                           &fn));
        CHECK(fabs(fp - pow(phi + (1 - phi) * q, k)) < 1e-12 && fn == 0.0);
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, slices, 1, n, phi, k, &fp,
                                           &fn));
        CHECK(fabs(fp - pow((1 - phi) * q, k)) < 1e-12);
        CHECK(fabs(fn - (1.0 - pow(1 - phi, k))) < 1e-12);
        double ph = once_sliced_fpr(ONCE_SLICING_HORIZONTAL, m, k, slices, 1, n);
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_HORIZONTAL, m, k, slices, 1, n, phi, 0,
                                           &fp, &fn));
        CHECK(fabs(fp - (phi + (1 - phi) * ph)) < 1e-12 && fn == 0.0);
        /* Fig. 1(a): vertical at or below horizontal at every failed fraction. */
        double vfp = 0, vfn = 0;
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, slices, 1, n, phi, 0, &vfp,
                                           &vfn));
        CHECK(vfp <= fp);
    }
    /* Eq. 3 is the unsliced rate; Eq. 4 is above it and tends to it as m/S grows. */
    CHECK(once_sliced_fpr(ONCE_SLICING_VERTICAL, m, k, slices, 1, n) ==
          once_fpr_standard(m, k, n));
    CHECK(once_sliced_fpr(ONCE_SLICING_HORIZONTAL, m, k, slices, 1, n) >
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
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, v, 1, n,
                                           (double)failures / v, 0, &fp, &fn));
        CHECK(fp <= 0.05);
        CHECK_OK(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, v - 1, 1, n,
                                           (double)failures / (v - 1), 0, &fp, &fn));
        CHECK(v - 1 == failures || fp > 0.05);
        prev = v;
    }
    double fp = 0, fn = 0;
    CHECK_STATUS(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, slices, 1, n, 1.5, 0, &fp,
                                           &fn), ONCE_ERR_INVALID);
    CHECK_STATUS(once_sliced_failure_rates(ONCE_SLICING_VERTICAL, m, k, slices, 1, n, 0.1, k + 1,
                                           &fp, &fn), ONCE_ERR_INVALID);
}

/* Section 3.3: S x S' sites; h-v has the rate of horizontal slicing over S slices, v-h
 * that of horizontal slicing over S S' parts; both behave as vertical over S S' sites
 * when sites fail (Eq. 7, with the exact rule of lib/math/slicing.c). */
static void diced_rates_follow_section_3_3(void)
{
    const uint64_t n = 6000, trials = 100000;
    const uint32_t k = 4;
    const once_slicing dicings[] = {ONCE_SLICING_DICED_HV, ONCE_SLICING_DICED_VH};
    const uint32_t shapes[][2] = {{4, 2}, {2, 8}};
    for (size_t d = 0; d < 2; d++)
        for (size_t sh = 0; sh < 2; sh++) {
            uint32_t slices = shapes[sh][0], parts = shapes[sh][1];
            once_sliced_config c = config_of(dicings[d], slices, 64000, k, ONCE_FTTS,
                                             ONCE_LOOKUP_PARALLEL);
            c.parts = parts;
            once_sliced *f = sliced_make(&c);
            REQUIRE(f != NULL);
            once_sliced_stats st;
            CHECK_OK(once_sliced_get_stats(f, &st));
            CHECK(st.sites == slices * parts && st.bits == 64000 &&
                  st.slice_bits * slices * parts >= st.bits && st.slice_bits % 64 == 0);
            for (uint64_t i = 0; i < n; i++) {
                testing_key key = testing_key_make(20, i);
                bool seen = true;
                CHECK_OK(once_sliced_test_and_add(f, &key, sizeof key, &seen));
            }
            uint64_t fn = 0, fp = 0;
            for (uint64_t i = 0; i < n; i++) {
                testing_key key = testing_key_make(20, i);
                bool present = false;
                CHECK_OK(once_sliced_query(f, &key, sizeof key, &present));
                fn += !present;
            }
            CHECK(fn == 0);
            for (uint64_t i = 0; i < trials; i++) {
                testing_key key = testing_key_make(21, i);
                bool present = false;
                CHECK_OK(once_sliced_query(f, &key, sizeof key, &present));
                fp += present;
            }
            double want = once_sliced_fpr(dicings[d], st.bits, k, slices, parts, n);
            CHECK(testing_within_sigmas(fp, trials, want, 5.0));
            /* h-v sends an event to the S' parts of one slice, v-h to at most k sites. */
            uint64_t loads[16], touched = 0;
            CHECK_OK(once_sliced_loads(f, loads, 16));
            for (uint32_t i = 0; i < slices * parts; i++)
                touched += loads[i];
            CHECK(touched >= n && touched <= (uint64_t)k * n);
            CHECK(st.fairness > 0.0);
            once_sliced_free(f);
        }
    /* The two formulas differ where they should: v-h is horizontal over S S'. */
    CHECK(once_sliced_fpr(ONCE_SLICING_DICED_HV, 64000, k, 4, 2, n) ==
          once_sliced_fpr(ONCE_SLICING_HORIZONTAL, 64000, k, 4, 1, n));
    CHECK(once_sliced_fpr(ONCE_SLICING_DICED_VH, 64000, k, 4, 2, n) ==
          once_sliced_fpr(ONCE_SLICING_HORIZONTAL, 64000, k, 8, 1, n));
}

/* One flaky-site array per filter of the failure cases below. */
static void flaky_sites(flaky_site *store, once_site *sites, int count, int *destroyed)
{
    for (int i = 0; i < count; i++) {
        memset(&store[i], 0, sizeof store[i]);
        store[i].destroyed = destroyed;
        sites[i] = (once_site){.context = &store[i], .run = flaky_run, .destroy = flaky_destroy};
    }
}

static void diced_failures_follow_eq7(void)
{
    enum { SLICES = 8, PARTS = 4, SITES = SLICES * PARTS, K = 6 };
    const uint64_t slice_bits = 8192, m = SITES * slice_bits, n = 40000, trials = 20000;
    static flaky_site store[SITES];
    int destroyed = 0;
    const once_slicing dicings[] = {ONCE_SLICING_DICED_HV, ONCE_SLICING_DICED_VH};
    for (size_t d = 0; d < 2; d++)
        for (uint32_t x = 0; x <= K; x += 3) {
            once_sliced_config c = config_of(dicings[d], SLICES, m, K, ONCE_FTTS,
                                             ONCE_LOOKUP_PARALLEL);
            c.parts = PARTS;
            c.on_failure = ONCE_FAILURE_THRESHOLD;
            c.threshold = x;
            once_site sites[SITES];
            flaky_sites(store, sites, SITES, &destroyed);
            once_sliced *f = NULL;
            CHECK_OK(once_sliced_create(&f, &c, sites));
            REQUIRE(f != NULL);
            for (uint64_t i = 0; i < n; i++) {
                testing_key key = testing_key_make(22, i);
                bool seen = false;
                CHECK_OK(once_sliced_test_and_add(f, &key, sizeof key, &seen));
            }
            for (int i = 0; i < SITES; i += 4) /* 8 of 32 sites down */
                store[i + (i / 4) % 4].down = true;
            uint64_t fp = 0, fn = 0;
            for (uint64_t i = 0; i < trials; i++) {
                testing_key absent = testing_key_make(23, i), added = testing_key_make(22, i);
                bool p = false, q = false;
                CHECK_OK(once_sliced_query(f, &absent, sizeof absent, &p));
                CHECK_OK(once_sliced_query(f, &added, sizeof added, &q));
                fp += p;
                fn += !q;
            }
            double want_fp = 0, want_fn = 0;
            CHECK_OK(once_sliced_failure_rates(dicings[d], m, K, SLICES, PARTS, n, 0.25, x,
                                               &want_fp, &want_fn));
            CHECK(testing_within_sigmas(fp, trials, want_fp, 5.0));
            CHECK(testing_within_sigmas(fn, trials, want_fn, 5.0));
            once_sliced_free(f);
        }
    CHECK(destroyed == 2 * 3 * SITES);
}

/*
 * Proposition 2 (section 3.1): a filter of m bits whose k = k1 k2 hashes pick k1 of S
 * slices and k2 bits in each has the rate (1 - e^(-k n/m))^k however k splits.  The
 * three splits of k = 4 over S = 8 slices of one bit array, measured: each within 5
 * sigma of the common rate, and each pair within the sum of their 5-sigma intervals.
 */
static void no_split_of_k_does_better(void)
{
    enum { S = 8, K = 4 };
    const uint64_t m = 80000, slice = m / S, n = 8000, trials = 200000;
    const uint32_t splits[3][2] = {{1, 4}, {2, 2}, {4, 1}};
    uint64_t fp[3];
    static uint64_t words[80000 / 64];
    for (int sp = 0; sp < 3; sp++) {
        uint32_t k1 = splits[sp][0], k2 = splits[sp][1];
        memset(words, 0, sizeof words);
        for (int pass = 0; pass < 2; pass++) {
            fp[sp] = 0;
            for (uint64_t i = 0; i < (pass == 0 ? n : trials); i++) {
                testing_key key = testing_key_make(pass == 0 ? 24 : 25, i);
                uint64_t h = testing_mix(key.w[0] ^ testing_mix(key.w[1]) ^ (uint64_t)sp << 56);
                uint64_t g = testing_mix(h + 1);
                bool all = true;
                for (uint32_t a = 0; a < k1; a++) {
                    /* k1 distinct slices: a walk from a hashed start by an odd step (S is a
                     * power of two, so the k1 <= S slices are distinct). */
                    uint64_t s = (h + a * (2 * (g >> 40) + 1)) % S;
                    for (uint32_t b = 0; b < k2; b++) {
                        uint64_t bit = s * slice +
                                       testing_mix(g ^ (a * 64 + b + 1) * 0x9e3779b97f4a7c15) %
                                           slice;
                        all = all && (words[bit / 64] >> (bit % 64) & 1);
                        if (pass == 0)
                            words[bit / 64] |= UINT64_C(1) << (bit % 64);
                    }
                }
                fp[sp] += pass == 1 && all;
            }
        }
    }
    double rate = pow(1.0 - exp(-(double)K * n / m), K);
    for (int a = 0; a < 3; a++) {
        CHECK(testing_within_sigmas(fp[a], trials, rate, 5.0));
        for (int b = 0; b < 3; b++) {
            double pa = (double)fp[a] / trials, pb = (double)fp[b] / trials;
            double width = 5.0 * (sqrt(pa * (1 - pa) / trials) + sqrt(pb * (1 - pb) / trials));
            CHECK(fabs(pa - pb) <= width);
        }
    }
}

/* Stream of keys with repeats near (inside one batch) and far. */
static testing_key batch_stream_key(uint64_t i)
{
    return testing_key_make(26, i % 7 == 3 ? i - 1 : testing_mix(i) % 3000);
}

static void batch_matches_one_key_calls(void)
{
    enum { EVENTS = 5000 };
    static testing_key keys[EVENTS];
    static once_key batch[EVENTS];
    static uint8_t answers[EVENTS];
    for (uint64_t i = 0; i < EVENTS; i++) {
        keys[i] = batch_stream_key(i);
        batch[i] = (once_key){&keys[i], sizeof keys[i], 0};
    }
    const once_slicing slicings[] = {ONCE_SLICING_HORIZONTAL, ONCE_SLICING_VERTICAL,
                                     ONCE_SLICING_DICED_HV, ONCE_SLICING_DICED_VH};
    for (size_t sl = 0; sl < 4; sl++)
        for (int mode = 0; mode < 3; mode++)
            for (uint32_t threads = 0; threads <= 3; threads += 3) {
                once_primitive primitive = mode == 1 ? ONCE_TAS : ONCE_FTTS;
                once_lookup lookup = mode == 2 ? ONCE_LOOKUP_PIPELINED : ONCE_LOOKUP_PARALLEL;
                once_sliced_config c = config_of(slicings[sl], 4, 30000, 5, primitive, lookup);
                c.parts = slicings[sl] >= ONCE_SLICING_DICED_HV ? 3 : 0;
                once_sliced *one = sliced_make(&c);
                c.threads = threads;
                once_sliced *many = sliced_make(&c);
                REQUIRE(one != NULL && many != NULL);
                uint64_t differ = 0, dups = 0;
                size_t sizes[] = {1, 7, 256, 300, 1000};
                for (size_t done = 0, b = 0; done < EVENTS; b++) {
                    size_t size = sizes[b % 5] < EVENTS - done ? sizes[b % 5] : EVENTS - done;
                    CHECK_OK(once_sliced_test_and_add_batch(many, batch + done, size,
                                                            answers + done));
                    done += size;
                }
                for (uint64_t i = 0; i < EVENTS; i++) {
                    bool seen = false;
                    CHECK_OK(once_sliced_test_and_add(one, &keys[i], sizeof keys[i], &seen));
                    differ += answers[i] != (uint8_t)seen;
                    dups += seen;
                }
                CHECK(differ == 0);
                CHECK(dups > EVENTS / 4 && dups < EVENTS);
                for (uint64_t i = 0; i < 4000; i++) { /* the same bits: the same answers */
                    testing_key key = testing_key_make(27, i);
                    bool a = false, b = false;
                    CHECK_OK(once_sliced_query(one, &key, sizeof key, &a));
                    CHECK_OK(once_sliced_query(many, &key, sizeof key, &b));
                    differ += a != b;
                }
                CHECK(differ == 0);
                once_sliced_stats st;
                CHECK_OK(once_sliced_get_stats(many, &st));
                CHECK(st.events == EVENTS && st.messages >= EVENTS);
                once_sliced_free(one);
                once_sliced_free(many);
            }
}

static void batch_with_a_site_down(void)
{
    enum { EVENTS = 2000, SLICES = 8 };
    static testing_key keys[EVENTS];
    static once_key batch[EVENTS];
    static uint8_t answers[EVENTS];
    static flaky_site store[2][SLICES];
    for (uint64_t i = 0; i < EVENTS; i++) {
        keys[i] = batch_stream_key(i);
        batch[i] = (once_key){&keys[i], sizeof keys[i], 0};
    }
    int destroyed = 0;
    for (int rule = 0; rule < 2; rule++) {
        once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, SLICES, SLICES * 8192, 4,
                                         ONCE_FTTS, ONCE_LOOKUP_PARALLEL);
        c.on_failure = rule == 0 ? ONCE_FAILURE_REPORT : ONCE_FAILURE_THRESHOLD;
        c.threshold = 2;
        once_site a[SLICES], b[SLICES];
        flaky_sites(store[0], a, SLICES, &destroyed);
        flaky_sites(store[1], b, SLICES, &destroyed);
        store[0][5].down = store[1][5].down = true;
        once_sliced *batched = NULL, *single = NULL;
        CHECK_OK(once_sliced_create(&batched, &c, a));
        CHECK_OK(once_sliced_create(&single, &c, b));
        REQUIRE(batched != NULL && single != NULL);
        CHECK_STATUS(once_sliced_test_and_add_batch(batched, batch, EVENTS, answers),
                     rule == 0 ? ONCE_ERR_UNAVAILABLE : ONCE_OK);
        uint64_t undecided = 0, differ = 0;
        for (uint64_t i = 0; i < EVENTS; i++) {
            bool seen = false;
            once_status st = once_sliced_test_and_add(single, &keys[i], sizeof keys[i], &seen);
            if (st == ONCE_ERR_UNAVAILABLE) {
                undecided++;
                differ += answers[i] != ONCE_SLICED_UNDECIDED;
                continue;
            }
            CHECK_OK(st);
            differ += answers[i] != (uint8_t)seen;
        }
        CHECK(differ == 0);
        CHECK(rule == 0 ? undecided > 0 && undecided < EVENTS : undecided == 0);
        once_sliced_free(batched);
        once_sliced_free(single);
    }
    CHECK(destroyed == 4 * SLICES);
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
    CHECK(m == plain && k == plain_k);
    CHECK(slice_bits % 64 == 0 && slice_bits * 4 >= m && (slice_bits - 64) * 4 < m);
    /* Parts are for diced slicing, and S S' sites at most 4096. */
    bad = c;
    bad.parts = 2;
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad.slicing = ONCE_SLICING_DICED_VH;
    bad.slices = 64;
    bad.parts = 65;
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.threads = ONCE_MAX_SITE_THREADS + 1;
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    /* Sites given to a creation that fails stay the caller's: none is destroyed. */
    static flaky_site store[4];
    once_site sites[4];
    int destroyed = 0;
    flaky_sites(store, sites, 4, &destroyed);
    sites[2].start = NULL;
    sites[2].wait = flaky_destroy; /* wait without start */
    CHECK_STATUS(once_sliced_create(&f, &c, sites), ONCE_ERR_INVALID);
    bad = c;
    bad.threshold = 9;
    bad.on_failure = ONCE_FAILURE_THRESHOLD;
    flaky_sites(store, sites, 4, &destroyed);
    CHECK_STATUS(once_sliced_create(&f, &bad, sites), ONCE_ERR_INVALID);
    CHECK(destroyed == 0 && f == NULL);
    once_site threaded[4];
    CHECK_STATUS(once_thread_sites_create(0, 4, 64, threaded), ONCE_ERR_INVALID);
    CHECK_STATUS(once_thread_sites_create(2, 4, 100, threaded), ONCE_ERR_INVALID);
    CHECK_STATUS(once_thread_sites_create(2, 0, 64, threaded), ONCE_ERR_INVALID);
}

static const testing_case cases[] = {
    {"vertical_decides_as_the_unsliced_filter", vertical_decides_as_the_unsliced_filter},
    {"vertical_from_capacity_is_the_standard_filter",
     vertical_from_capacity_is_the_standard_filter},
    {"horizontal_rate_follows_eq4", horizontal_rate_follows_eq4},
    {"pipelined_sends_no_more_messages", pipelined_sends_no_more_messages},
    {"unreachable_sites_are_reported", unreachable_sites_are_reported},
    {"failed_sites_follow_the_threshold_formulas", failed_sites_follow_the_threshold_formulas},
    {"failure_formulas_and_sites_needed", failure_formulas_and_sites_needed},
    {"diced_rates_follow_section_3_3", diced_rates_follow_section_3_3},
    {"diced_failures_follow_eq7", diced_failures_follow_eq7},
    {"no_split_of_k_does_better", no_split_of_k_does_better},
    {"batch_matches_one_key_calls", batch_matches_one_key_calls},
    {"batch_with_a_site_down", batch_with_a_site_down},
    {"invalid_configs_refused", invalid_configs_refused},
};

TESTING_MAIN(cases)
