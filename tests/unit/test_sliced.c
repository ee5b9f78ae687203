/*
 * One filter sliced over sites (paper 000, section 3; once_sliced.h, "Sliced filters").
 *
 * Specification:
 *   - vertical slicing decides every event exactly as the unsliced standard filter of
 *     the same m, k and seed (Proposition 1 via Eq. 3), for FTTS and TAS, parallel and
 *     pipelined lookups, any number of slices;
 *   - vertical slices hold floor(m/S) or ceil(m/S) of the filter's bits each;
 *   - horizontal slicing's rate is above the unsliced one and tends to it as m/S grows
 *     (Proposition 1); it has no false negatives, and its measured false-positive rate
 *     is within a binomial bound of Eq. 4;
 *   - a pipelined lookup sends no more messages than a parallel one, event by event,
 *     and fewer over a stream of distinct events;
 *   - loads, fairness and max load are counted as the paper defines them;
 *   - a site that cannot be reached is reported (ONCE_ERR_UNAVAILABLE), never taken
 *     for an answer, unless the threshold rule decides without it: then the measured
 *     FP and FN follow the exact formulas (Fig. 5(d)), FP non-increasing and FN
 *     non-decreasing in x;
 *   - the filter reports the sites found down and its live FP and FN estimates, which
 *     the measured rates match; a site that comes back with its old state loses
 *     nothing, one that comes back empty loses the keys with a position there;
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
 *   - windows (section 4): a site sets an event's timers to expire at its producer
 *     timestamp t_u + w whatever its own clock (a late request included) and keeps
 *     the later expiry; its timers are packed, the narrowest whose tick is a ms for
 *     the window, and read right however often their ticks wrap; an event up to a
 *     window behind the site's clock is judged at its own time, an older one a window
 *     behind the clock; a windowed sliced filter, any slicing, never answers distinct
 *     for an event delivered less than w before, forgets what is w old, and has the
 *     rate of the keys alive in the window; its batch answers as its one-key calls;
 *     a count window keeps exactly the last N events delivered, whatever the calls'
 *     times, and has the rate of N keys; with refresh a duplicate restarts its
 *     window, on either;
 *   - equal timers (Fig. 9): with k' the false positives fall below those without,
 *     at the price of false negatives, more of them as k' grows;
 *   - dynamic size (section 5, Figs. 10-11): during a burst the sites that take it
 *     open sub-filters, and the others do not; the rate stays near the target where a
 *     filter without growth passes it; by density a site is back to one sub-filter
 *     within w of its last opening, two windows after the burst at the latest; a
 *     memory cap stops a site's growth there (its events fail with ONCE_ERR_FULL)
 *     until its old sub-filters drop; bounded growth, in generations across the sites,
 *     keeps a vertical filter's rate under its target through a 5x burst where the
 *     density rule passes it many times over, misses no repeat, and grows as the
 *     scalable filter does without a window;
 *   - racing producers (section 6), each its own filter over the same sites, deliver
 *     every event at most once between them with claims, in one-key calls and in
 *     batches, with and without a window, and each event at least once (but for the
 *     filter's false positives);
 *   - invalid configurations are refused, and sites given to a creation that fails
 *     stay the caller's.
 */
#include "flaky_site.h"
#include "racing.h"
#include "testing.h"

#include "once_math.h"

#include <inttypes.h>
#include <pthread.h>

static once_sliced_config config_of(once_slicing slicing, uint32_t slices, uint64_t bits,
                                    uint32_t hashes, once_primitive primitive,
                                    once_lookup lookup)
{
    return (once_sliced_config){.slicing = slicing, .slices = slices, .bits = bits,
                                .hashes = hashes, .seed = 77, .seed_is_set = true,
                                .primitive = primitive, .lookup = lookup};
}

static once_sliced *sliced_make(const once_sliced_config *c)
{
    once_sliced *f = NULL;
    CHECK_OK(once_sliced_create(&f, c, NULL));
    return f;
}

/* How many of keys 0 .. count-1 of `domain` the filter holds at time_ms: false
 * positives for keys never offered, false negatives short of count for keys offered. */
static uint64_t count_present(once_sliced *f, uint64_t domain, uint64_t count, uint64_t time_ms)
{
    uint64_t present_count = 0;
    for (uint64_t i = 0; i < count; i++) {
        testing_key key = testing_key_make(domain, i);
        bool present = false;
        CHECK_OK(once_sliced_query(f, &key, sizeof key, time_ms, &present));
        present_count += present;
    }
    return present_count;
}

static void vertical_decides_as_the_unsliced_filter(void)
{
    const uint32_t slice_counts[] = {1, 2, 3, 8, 40};
    for (size_t s = 0; s < sizeof slice_counts / sizeof slice_counts[0]; s++)
        for (int primitive = 0; primitive < 2; primitive++)
            for (int lookup = 0; lookup < 2; lookup++) {
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
                    CHECK_OK(once_sliced_test_and_add(v, &k, sizeof k, 0, &a));
                    CHECK_OK(once_test_and_add(f, &k, sizeof k, 0, &b));
                    differ += a != b;
                    dups += a;
                }
                CHECK(differ == 0);
                CHECK(dups > 0 && dups < 12000);
                for (uint64_t i = 0; i < 3000; i++) { /* queries too, of unseen keys */
                    testing_key k = testing_key_make(4, i);
                    bool a = false, b = false;
                    CHECK_OK(once_sliced_query(v, &k, sizeof k, 0, &a));
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
            CHECK_OK(once_sliced_test_and_add(v, &k, sizeof k, 0, &a));
            CHECK_OK(once_test_and_add(f, &k, sizeof k, 0, &b));
            differ += a != b;
        }
        CHECK(differ == 0);
        once_sliced_free(v);
        once_free(f);
    }
}

/* Definition 2 with m not a multiple of the slices' words: every vertical slice holds
 * floor(m/S) or ceil(m/S) of the filter's bits, none fewer (a filled filter sets all
 * of them). */
static void vertical_slices_are_even(void)
{
    const uint32_t slices = 32;
    const uint64_t m = 31 * 128 + 10; /* whole-word slices of 128 would leave 10 bits */
    for (uint32_t parts = 1; parts <= 2; parts++) {
        once_sliced_config c = config_of(parts == 1 ? ONCE_SLICING_VERTICAL
                                                    : ONCE_SLICING_DICED_VH,
                                         slices, m, 3, ONCE_FTTS, ONCE_LOOKUP_PARALLEL);
        c.parts = parts == 1 ? 0 : parts;
        once_sliced *f = sliced_make(&c);
        REQUIRE(f != NULL);
        testing_sliced_fill(f, 31, 40000); /* fills every bit */
        uint64_t total = 0;
        for (uint32_t s = 0; s < slices; s++) {
            uint64_t set = 0;
            for (uint32_t p = 0; p < parts; p++) {
                once_site_info info;
                CHECK_OK(once_sliced_site_info(f, s * parts + p, &info));
                set += info.cells_set;
            }
            /* v-h folds a slice's bits onto each part: up to S' times the slice's. */
            CHECK(set >= m / slices && set <= parts * ((m + slices - 1) / slices));
            total += set;
        }
        CHECK(parts > 1 || total == m);
        once_sliced_free(f);
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
            CHECK_OK(once_sliced_test_and_add(h, &key, sizeof key, 0, &seen));
        }
        CHECK(count_present(h, 5, n, 0) == n); /* no false negatives */
        uint64_t trials = 200000, fp = count_present(h, 6, trials, 0);
        /* Eq. 4, with the keys a slice holds binomial around n/S (the rate is convex
         * in them, so Eq. 4 at the mean is slightly low: 5 sigmas absorb it). */
        double p = pow(1.0 - pow(1.0 - (double)slices / (double)m, (double)k * n / slices), k);
        CHECK(testing_within_sigmas(fp, trials, p, 5.0));
        once_sliced_stats live;
        CHECK_OK(once_sliced_get_stats(h, &live));
        /* The live estimate from the cells the sites hold set (averaged over slices,
         * so a little below the rate of unequal slices). */
        CHECK(live.failed_fraction == 0.0 && live.fn_estimate == 0.0);
        CHECK(testing_within_sigmas(fp, trials, live.fp_estimate, 5.0));
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
        CHECK_OK(once_sliced_test_and_add(a, &k, sizeof k, 0, &x));
        CHECK_OK(once_sliced_test_and_add(b, &k, sizeof k, 0, &y));
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

    /* Pipelined TAS (section 3.1): every site still sets its bits, so it sends as many
     * requests as parallel TAS, decides as it does and leaves the sites the same. */
    par.primitive = pip.primitive = ONCE_TAS;
    CHECK_OK(once_sliced_create(&a, &par, NULL));
    CHECK_OK(once_sliced_create(&b, &pip, NULL));
    REQUIRE(a != NULL && b != NULL);
    uint64_t differ = 0;
    for (uint64_t i = 0; i < 5000; i++) {
        testing_key k = testing_key_make(7, i % 4000);
        bool x = false, y = false;
        CHECK_OK(once_sliced_test_and_add(a, &k, sizeof k, 0, &x));
        CHECK_OK(once_sliced_test_and_add(b, &k, sizeof k, 0, &y));
        differ += x != y;
    }
    once_sliced_stats ta, tb;
    CHECK_OK(once_sliced_get_stats(a, &ta));
    CHECK_OK(once_sliced_get_stats(b, &tb));
    CHECK(differ == 0 && ta.messages == tb.messages);
    for (uint64_t i = 0; i < 20000; i++) { /* the sites hold the same bits */
        testing_key k = testing_key_make(8, i);
        bool x = false, y = false;
        CHECK_OK(once_sliced_query(a, &k, sizeof k, 0, &x));
        CHECK_OK(once_sliced_query(b, &k, sizeof k, 0, &y));
        differ += x != y;
    }
    CHECK(differ == 0);
    once_sliced_free(a);
    once_sliced_free(b);
}


/* Query `trials` keys of domain `added` (each was offered) and as many of domain
 * `absent` (none was): *fp absent keys found, *fn added keys missed. */
static void count_wrong_answers(once_sliced *f, uint64_t added, uint64_t absent,
                                uint64_t trials, uint64_t *fp, uint64_t *fn)
{
    *fp += count_present(f, absent, trials, 0);
    *fn += trials - count_present(f, added, trials, 0);
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
    flaky_sites(store, sites, 4, &destroyed);
    once_sliced *f = NULL;
    CHECK_OK(once_sliced_create(&f, &c, sites));
    REQUIRE(f != NULL);
    testing_key k1 = testing_key_make(8, 1);
    bool seen = true;
    CHECK_OK(once_sliced_test_and_add(f, &k1, sizeof k1, 0, &seen));
    CHECK(!seen);
    CHECK_OK(once_sliced_test_and_add(f, &k1, sizeof k1, 0, &seen));
    CHECK(seen);
    for (int i = 0; i < 4; i++)
        store[i].down = true;
    CHECK_STATUS(once_sliced_test_and_add(f, &k1, sizeof k1, 0, &seen), ONCE_ERR_UNAVAILABLE);
    CHECK_STATUS(once_sliced_query(f, &k1, sizeof k1, 0, &seen), ONCE_ERR_UNAVAILABLE);
    once_sliced_free(f);
    CHECK(destroyed == 4);
}

/* Section 3.2: a site that comes back after a failure.  One unreachable for a while
 * comes back with its old state: every key stored before it went down is found again.
 * One replaced by an empty site loses its positions: a vertical key stored before is
 * missed when any of its k positions was there, 1 - (1 - 1/S)^k of them. */
static void sites_come_back_old_or_empty(void)
{
    enum { SLICES = 8, K = 4 };
    const uint64_t slice_bits = 64 * 512, m = SLICES * slice_bits, n = 20000;
    static flaky_site store[SLICES];
    int destroyed = 0;
    once_site sites[SLICES];
    flaky_sites(store, sites, SLICES, &destroyed);
    once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, SLICES, m, K, ONCE_FTTS,
                                     ONCE_LOOKUP_PARALLEL);
    c.on_failure = ONCE_FAILURE_THRESHOLD;
    c.threshold = K;
    once_sliced *f = NULL;
    CHECK_OK(once_sliced_create(&f, &c, sites));
    REQUIRE(f != NULL);
    testing_sliced_fill(f, 60, n);
    store[3].down = true;
    uint64_t missed_while_down = n - count_present(f, 60, n, 0);
    once_sliced_stats st;
    CHECK_OK(once_sliced_get_stats(f, &st));
    CHECK(st.failed_fraction == 1.0 / SLICES);
    /* Threshold k: every key with a position on the failed site was decided by the
     * policy (and missed), and only those. */
    CHECK(st.failed_events == missed_while_down);
    double lost = 1.0 - pow(1.0 - 1.0 / SLICES, K);
    CHECK(testing_within_sigmas(missed_while_down, n, lost, 5.0));
    store[3].down = false; /* back with its old state */
    CHECK(count_present(f, 60, n, 0) == n);
    CHECK_OK(once_sliced_get_stats(f, &st));
    CHECK(st.failed_fraction == 0.0);
    CHECK(st.failed_events == missed_while_down);
    memset(store[3].words, 0, sizeof store[3].words); /* replaced by an empty site */
    CHECK(testing_within_sigmas(n - count_present(f, 60, n, 0), n, lost, 5.0));
    once_sliced_free(f);
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
        flaky_sites(store[x - 1], sites, SLICES, &destroyed);
        once_sliced *f = NULL;
        CHECK_OK(once_sliced_create(&f, &c, sites));
        REQUIRE(f != NULL);
        testing_sliced_fill(f, 9, n);
        static const int down[FAILED] = {2, 9, 13, 17, 24, 30, 33, 39};
        for (int i = 0; i < FAILED; i++)
            store[x - 1][down[i]].down = true;
        uint64_t fp = 0, fn = 0;
        count_wrong_answers(f, 9, 10, trials, &fp, &fn);
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
        /* The live estimates: the sites found down, and the rates they give at the
         * fill of the keys inserted (flaky sites describe nothing). */
        CHECK(fabs(st.failed_fraction - (double)FAILED / SLICES) < 1e-12);
        CHECK(st.inserted > n - n / 20 && st.inserted <= n);
        CHECK(testing_within_sigmas(fp, trials, st.fp_estimate, 5.0));
        CHECK(testing_within_sigmas(fn, trials, st.fn_estimate, 5.0));
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
    /* Proposition 1: at the same load per bit, horizontal's excess over the unsliced
     * rate shrinks as the slices grow (m/S from 10^3 to 10^7 bits). */
    double last_excess = INFINITY;
    for (uint64_t per_slice = 1000; per_slice <= 10000000; per_slice *= 10) {
        uint64_t bits = per_slice * slices, items = bits / 10;
        double excess = once_sliced_fpr(ONCE_SLICING_HORIZONTAL, bits, k, slices, 1, items) /
                            once_fpr_standard(bits, k, items) -
                        1.0;
        CHECK(excess > 0.0 && excess < last_excess);
        last_excess = excess;
    }
    CHECK(last_excess < 1e-4);
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

/* Definition 3's other bound: the fewest slices that keep FN at most Pmax_fn with f
 * sites down.  Threshold k: the closed forms of section 3.2 (horizontal FN = f/S,
 * vertical FN = 1 - (1 - f/S)^k), one slice fewer is over the bound, and vertical
 * needs more slices than horizontal.  The hybrid loses fewer events, so needs no more. */
static void sites_for_false_negatives(void)
{
    const uint32_t k = 4;
    const double pmax[] = {0.05, 0.10, 0.20};
    for (size_t p = 0; p < sizeof pmax / sizeof pmax[0]; p++)
        for (uint32_t failures = 1; failures <= 8; failures++) {
            uint32_t h = 0, v = 0, hybrid = 0;
            CHECK_OK(once_sliced_sites_for_false_negatives(ONCE_SLICING_HORIZONTAL, k, k,
                                                           failures, pmax[p], &h));
            CHECK_OK(once_sliced_sites_for_false_negatives(ONCE_SLICING_VERTICAL, k, k, failures,
                                                           pmax[p], &v));
            CHECK_OK(once_sliced_sites_for_false_negatives(ONCE_SLICING_VERTICAL, k, 2, failures,
                                                           pmax[p], &hybrid));
            CHECK(h == (uint32_t)ceil(failures / pmax[p] - 1e-9));
            CHECK(v == (uint32_t)ceil(failures / (1.0 - pow(1.0 - pmax[p], 1.0 / k)) - 1e-9));
            CHECK(v > h && hybrid <= v);
            double fp = 0, fn = 0;
            CHECK_OK(once_sliced_failure_rates_at_fill(ONCE_SLICING_VERTICAL, k, v, 0.3,
                                                       (double)failures / v, k, &fp, &fn));
            CHECK(fn <= pmax[p]);
            CHECK_OK(once_sliced_failure_rates_at_fill(ONCE_SLICING_VERTICAL, k, v - 1, 0.3,
                                                       (double)failures / (v - 1), k, &fp, &fn));
            CHECK(fn > pmax[p]);
        }
    /* Threshold 0 never loses an event; no failures need one slice. */
    uint32_t s = 0;
    CHECK_OK(once_sliced_sites_for_false_negatives(ONCE_SLICING_VERTICAL, k, 0, 3, 0.0, &s));
    CHECK(s == 4);
    CHECK_OK(once_sliced_sites_for_false_negatives(ONCE_SLICING_VERTICAL, k, k, 0, 0.0, &s));
    CHECK(s == 1);
    /* Bad input is refused; an unreachable bound says so. */
    CHECK_STATUS(once_sliced_sites_for_false_negatives(ONCE_SLICING_VERTICAL, k, k, 1, 0.1, NULL),
                 ONCE_ERR_INVALID);
    CHECK_STATUS(once_sliced_sites_for_false_negatives((once_slicing)99, k, k, 1, 0.1, &s),
                 ONCE_ERR_INVALID);
    CHECK_STATUS(once_sliced_sites_for_false_negatives(ONCE_SLICING_VERTICAL, 0, 0, 1, 0.1, &s),
                 ONCE_ERR_INVALID);
    CHECK_STATUS(once_sliced_sites_for_false_negatives(ONCE_SLICING_VERTICAL, k, k + 1, 1, 0.1,
                                                       &s), ONCE_ERR_INVALID);
    CHECK_STATUS(once_sliced_sites_for_false_negatives(ONCE_SLICING_VERTICAL, k, k, 1, 1.0, &s),
                 ONCE_ERR_INVALID);
    CHECK_STATUS(once_sliced_sites_for_false_negatives(ONCE_SLICING_VERTICAL, k, k, 1, NAN, &s),
                 ONCE_ERR_INVALID);
    CHECK_STATUS(once_sliced_sites_for_false_negatives(ONCE_SLICING_VERTICAL, k, k, 1, 0.0, &s),
                 ONCE_ERR_TOO_LARGE);
    CHECK(s == 0);
    CHECK_STATUS(once_sliced_sites_for_false_negatives(ONCE_SLICING_HORIZONTAL, k, k, 100, 1e-3,
                                                       &s), ONCE_ERR_TOO_LARGE);
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
            testing_sliced_fill(f, 20, n);
            CHECK(count_present(f, 20, n, 0) == n); /* no false negatives */
            uint64_t fp = count_present(f, 21, trials, 0);
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
    /* The two formulas differ where they should: h-v is horizontal over S, its loads
     * included; v-h is Eq. 4 over S S' parts at their mean load (an event's positions
     * in different slices meet different parts, whose loads average out), below
     * horizontal's over S S' with its loads. */
    CHECK(once_sliced_fpr(ONCE_SLICING_DICED_HV, 64000, k, 4, 2, n) ==
          once_sliced_fpr(ONCE_SLICING_HORIZONTAL, 64000, k, 4, 1, n));
    double parts_mean = pow(1.0 - pow(1.0 - 8.0 / 64000, (double)k * n / 8.0), k);
    CHECK(fabs(once_sliced_fpr(ONCE_SLICING_DICED_VH, 64000, k, 4, 2, n) - parts_mean) <=
          1e-9 * parts_mean);
    CHECK(once_sliced_fpr(ONCE_SLICING_HORIZONTAL, 64000, k, 8, 1, n) > parts_mean);
}

/* Horizontal-first slicing keeps m bits exactly (issue: slices rounded up to whole
 * words gave it more): slice s holds floor(m/S) or ceil(m/S) bits, an h-v part the
 * same share of its slice's, and an event's positions reach every one of them and
 * none past them. */
typedef struct reach_site {
    uint64_t reached; /* one past the largest position asked */
    uint64_t seen[8192 / 64];
} reach_site;

static void reach_run(void *context, once_site_request *requests, size_t count)
{
    reach_site *r = context;
    for (size_t i = 0; i < count; i++) {
        for (uint32_t j = 0; j < requests[i].count; j++) {
            uint64_t p = requests[i].positions[j];
            if (p + 1 > r->reached)
                r->reached = p + 1;
            if (p < 8192)
                r->seen[p / 64] |= UINT64_C(1) << (p % 64);
        }
        requests[i].all_set = false;
        requests[i].status = ONCE_OK;
    }
}

static void slices_hold_exactly_m_bits(void)
{
    enum { MAX_SITES = 64 };
    const uint64_t m = 30091;
    const struct {
        once_slicing slicing;
        uint32_t slices, parts;
    } shapes[] = {{ONCE_SLICING_HORIZONTAL, 32, 0}, {ONCE_SLICING_HORIZONTAL, 7, 0},
                  {ONCE_SLICING_DICED_HV, 16, 2}, {ONCE_SLICING_DICED_HV, 5, 3},
                  {ONCE_SLICING_VERTICAL, 32, 0}};
    static reach_site store[MAX_SITES];
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        once_sliced_config c = config_of(shapes[sh].slicing, shapes[sh].slices, m, 4,
                                         ONCE_TAS, ONCE_LOOKUP_PARALLEL);
        c.parts = shapes[sh].parts;
        uint32_t parts = c.parts == 0 ? 1 : c.parts, sites = c.slices * parts;
        once_site site[MAX_SITES];
        memset(store, 0, sizeof store);
        for (uint32_t i = 0; i < sites; i++)
            site[i] = (once_site){.context = &store[i], .run = reach_run};
        once_sliced *f = NULL;
        CHECK_OK(once_sliced_create(&f, &c, site));
        testing_sliced_fill(f, 60, 200000);
        /* Slice s holds [ceil(s m/S), ceil((s+1) m/S)), part p of it the same share. */
        uint64_t total = 0;
        for (uint32_t s = 0; s < c.slices; s++) {
            uint64_t len = ((s + 1) * m + c.slices - 1) / c.slices - (s * m + c.slices - 1) / c.slices;
            for (uint32_t p = 0; p < parts; p++) {
                uint64_t part = ((p + 1) * len + parts - 1) / parts - (p * len + parts - 1) / parts;
                const reach_site *r = &store[s * parts + p];
                uint64_t hit = 0;
                for (uint64_t b = 0; b < part; b++)
                    hit += r->seen[b / 64] >> (b % 64) & 1;
                CHECK(r->reached == part && hit == part);
                total += r->reached;
            }
        }
        CHECK(total == m);
        once_sliced_free(f);
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
            testing_sliced_fill(f, 22, n);
            for (int i = 0; i < SITES; i += 4) /* 8 of 32 sites down */
                store[i + (i / 4) % 4].down = true;
            uint64_t fp = 0, fn = 0;
            count_wrong_answers(f, 22, 23, trials, &fp, &fn);
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
    const uint64_t m = 80000, n = 8000, trials = 200000;
    const uint32_t splits[3] = {1, 2, 4}; /* k1; k2 = K / k1 */
    uint64_t fp[3];
    for (int sp = 0; sp < 3; sp++) {
        once_sliced_config c = config_of(ONCE_SLICING_SPLIT, S, m, K, ONCE_TAS,
                                         ONCE_LOOKUP_PARALLEL);
        c.slice_hashes = splits[sp];
        once_sliced *f = sliced_make(&c);
        once_sliced_stats st;
        CHECK_OK(once_sliced_get_stats(f, &st));
        CHECK(st.slice_hashes == splits[sp] && st.sites == S && st.bits == m);
        testing_sliced_fill(f, 24, n);
        CHECK(count_present(f, 24, n, 0) == n); /* no false negatives */
        fp[sp] = count_present(f, 25, trials, 0);
        /* A key reaches k1 distinct slices: one request each. */
        CHECK_OK(once_sliced_get_stats(f, &st));
        CHECK(st.messages == (2 * n + trials) * splits[sp]);
        CHECK(testing_within_sigmas(fp[sp], trials, once_split_fpr(m, splits[sp], K, S, n), 5.0));
        once_sliced_free(f);
    }
    /* Proposition 2: every split has the unsliced filter's rate, within each other's
     * intervals. */
    double rate = pow(1.0 - exp(-(double)K * n / m), K);
    for (int a = 0; a < 3; a++) {
        CHECK(testing_within_sigmas(fp[a], trials, rate, 5.0));
        CHECK(fabs(once_split_fpr(m, splits[a], K, S, n) - rate) < 0.02 * rate);
        for (int b = 0; b < 3; b++) {
            double pa = (double)fp[a] / trials, pb = (double)fp[b] / trials;
            double width = 5.0 * (sqrt(pa * (1 - pa) / trials) + sqrt(pb * (1 - pb) / trials));
            CHECK(fabs(pa - pb) <= width);
        }
    }
    /* k1 = 1 is horizontal slicing, event for event and in its formulas. */
    once_sliced_config hc = config_of(ONCE_SLICING_HORIZONTAL, S, 30091, K, ONCE_FTTS,
                                      ONCE_LOOKUP_PARALLEL);
    once_sliced_config sc = hc;
    sc.slicing = ONCE_SLICING_SPLIT;
    sc.slice_hashes = 1;
    once_sliced *h = sliced_make(&hc), *one = sliced_make(&sc);
    uint64_t differ = 0;
    for (uint64_t i = 0; i < 20000; i++) {
        testing_key key = testing_key_make(26, testing_mix(i) % 9000);
        bool x = false, y = false;
        CHECK_OK(once_sliced_test_and_add(h, &key, sizeof key, 0, &x));
        CHECK_OK(once_sliced_test_and_add(one, &key, sizeof key, 0, &y));
        differ += x != y;
    }
    CHECK(differ == 0);
    once_sliced_free(h);
    once_sliced_free(one);
    CHECK(once_split_fpr(30091, 1, K, S, 5000) ==
          once_sliced_fpr(ONCE_SLICING_HORIZONTAL, 30091, K, S, 0, 5000));
    double fp1 = 0, fn1 = 0, fp2 = 0, fn2 = 0;
    for (uint32_t x = 0; x <= K; x++) {
        CHECK_OK(once_split_failure_rates_at_fill(1, K, 0.4, 0.1, x, &fp1, &fn1));
        CHECK_OK(once_sliced_failure_rates_at_fill(ONCE_SLICING_HORIZONTAL, K, S, 0.4, 0.1, x,
                                                   &fp2, &fn2));
        CHECK(fabs(fp1 - fp2) < 1e-12 && fabs(fn1 - fn2) < 1e-12);
        CHECK_OK(once_split_failure_rates_at_fill(K, K, 0.4, 0.1, x, &fp1, &fn1));
        CHECK_OK(once_sliced_failure_rates_at_fill(ONCE_SLICING_VERTICAL, K, S, 0.4, 0.1, x,
                                                   &fp2, &fn2));
        CHECK(fabs(fp1 - fp2) < 1e-12 && fabs(fn1 - fn2) < 1e-12);
    }
    CHECK_STATUS(once_split_failure_rates_at_fill(3, K, 0.4, 0.1, 0, &fp1, &fn1),
                 ONCE_ERR_INVALID); /* 3 does not divide 4 */
    CHECK(once_split_fpr(m, 3, K, S, n) == 1.0 && once_split_fpr(m, 16, 16, S, n) == 1.0);
    /* Split slicing needs its k1, and only it takes one. */
    once_sliced *bad = NULL;
    once_sliced_config b = config_of(ONCE_SLICING_SPLIT, S, m, K, ONCE_FTTS, ONCE_LOOKUP_PARALLEL);
    CHECK_STATUS(once_sliced_create(&bad, &b, NULL), ONCE_ERR_INVALID); /* k1 = 0 */
    b.slice_hashes = 3;
    CHECK_STATUS(once_sliced_create(&bad, &b, NULL), ONCE_ERR_INVALID); /* not a divisor */
    b.slices = 2;
    b.slice_hashes = 4;
    CHECK_STATUS(once_sliced_create(&bad, &b, NULL), ONCE_ERR_INVALID); /* past S */
    b = config_of(ONCE_SLICING_HORIZONTAL, S, m, K, ONCE_FTTS, ONCE_LOOKUP_PARALLEL);
    b.slice_hashes = 1;
    CHECK_STATUS(once_sliced_create(&bad, &b, NULL), ONCE_ERR_INVALID);
    CHECK(bad == NULL);
}

/* Two-level filtering (section 6): each producer's local filter answers the repeats
 * of its own events with no message, and sends the rest on, so that, with no local
 * false positive, the filter decides every event as the shared filter alone does, and
 * saves exactly the messages those repeats would have cost; its local hits are the
 * producers' own repeats. */
static void local_filters_answer_own_repeats(void)
{
    enum { PRODUCERS = 4, EVENTS = 20000, OWN_KEYS = 1500, SHARED_KEYS = 3000 };
    once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, 8, 120000, 4, ONCE_FTTS,
                                     ONCE_LOOKUP_PARALLEL);
    once_sliced *alone = sliced_make(&c), *two = sliced_make(&c);
    once_filter *local[PRODUCERS];
    for (int p = 0; p < PRODUCERS; p++) {
        local[p] = testing_make(ONCE_STANDARD, 10000, 1e-7, 90 + (uint64_t)p);
        REQUIRE(local[p] != NULL);
    }
    static bool sent[PRODUCERS][OWN_KEYS + SHARED_KEYS];
    memset(sent, 0, sizeof sent);
    uint64_t differ = 0, own_repeats = 0, saved = 0, dups = 0;
    for (uint64_t i = 0; i < EVENTS; i++) {
        int p = (int)(i % PRODUCERS);
        uint64_t r = testing_mix(i * 7 + 3);
        bool own = r % 10 < 4;
        uint64_t id = own ? (r >> 8) % OWN_KEYS : OWN_KEYS + (r >> 8) % SHARED_KEYS;
        testing_key key = testing_key_make(own ? 70 + (uint64_t)p : 80, id);
        own_repeats += sent[p][id];
        sent[p][id] = true;
        once_sliced_stats a0, a1, b0, b1;
        CHECK_OK(once_sliced_get_stats(alone, &a0));
        CHECK_OK(once_sliced_get_stats(two, &b0));
        bool a = false, b = false;
        CHECK_OK(once_sliced_test_and_add(alone, &key, sizeof key, 0, &a));
        CHECK_OK(once_sliced_test_and_add_local(two, local[p], &key, sizeof key, 0, &b));
        CHECK_OK(once_sliced_get_stats(alone, &a1));
        CHECK_OK(once_sliced_get_stats(two, &b1));
        if (b1.local_hits > b0.local_hits) /* what the shared filter alone spent on it */
            saved += a1.messages - a0.messages;
        differ += a != b;
        dups += a;
    }
    once_sliced_stats sa, sb;
    CHECK_OK(once_sliced_get_stats(alone, &sa));
    CHECK_OK(once_sliced_get_stats(two, &sb));
    CHECK(differ == 0 && dups >= own_repeats);
    CHECK(sb.local_hits == own_repeats && own_repeats > 4000);
    CHECK(sb.events == sa.events && sa.local_hits == 0 && sb.inserted == sa.inserted);
    CHECK(saved > own_repeats && sb.messages == sa.messages - saved);
    for (int p = 0; p < PRODUCERS; p++)
        once_free(local[p]);
    once_sliced_free(alone);
    once_sliced_free(two);
}

/* Stream of keys with repeats near (inside one batch) and far. */
static testing_key batch_stream_key(uint64_t i)
{
    return testing_key_make(26, i % 7 == 3 ? i - 1 : testing_mix(i) % 3000);
}

/* The first n keys of that stream, and a batch of them. */
static void batch_stream(testing_key *keys, once_key *batch, size_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        keys[i] = batch_stream_key(i);
        batch[i] = (once_key){&keys[i], sizeof keys[i], 0};
    }
}

/* The batch form of two-level filtering answers as the one-key calls in array order,
 * with the local filter answering the repeats it holds: batches of one key, of a few
 * (kept on the stack) and of many, with repeats inside a batch and across batches. */
static void local_batches_answer_as_one_key_calls(void)
{
    enum { EVENTS = 6000 };
    once_sliced_config c = config_of(ONCE_SLICING_HORIZONTAL, 4, 60000, 4, ONCE_TAS,
                                     ONCE_LOOKUP_PARALLEL);
    once_sliced *one = sliced_make(&c), *batched = sliced_make(&c);
    once_filter *local[2];
    for (int p = 0; p < 2; p++) {
        local[p] = testing_make(ONCE_STANDARD, 10000, 1e-7, 41);
        REQUIRE(local[p] != NULL);
    }
    static testing_key keys[EVENTS];
    static once_key batch[EVENTS];
    static uint8_t seen[EVENTS];
    batch_stream(keys, batch, EVENTS);
    uint64_t differ = 0, dups = 0;
    static const size_t sizes[] = {1, 5, 16, 17, 300};
    for (size_t at = 0, b = 0; at < EVENTS; b++) {
        size_t n = sizes[b % 5] < EVENTS - at ? sizes[b % 5] : EVENTS - at;
        CHECK_OK(once_sliced_test_and_add_local_batch(batched, local[1], batch + at, n, seen));
        for (size_t i = 0; i < n; i++) {
            bool dup = false;
            CHECK_OK(once_sliced_test_and_add_local(one, local[0], &keys[at + i],
                                                    sizeof keys[at + i], 0, &dup));
            differ += dup != (seen[i] == 1);
            dups += dup;
        }
        at += n;
    }
    once_sliced_stats a, b;
    CHECK_OK(once_sliced_get_stats(one, &a));
    CHECK_OK(once_sliced_get_stats(batched, &b));
    CHECK(differ == 0 && dups > EVENTS / 2);
    CHECK(a.events == EVENTS && b.events == EVENTS && b.inserted == a.inserted);
    CHECK(b.local_hits > 0 && b.local_hits <= a.local_hits);
    CHECK(once_sliced_test_and_add_local_batch(batched, NULL, batch, 1, seen) ==
          ONCE_ERR_INVALID);
    CHECK_OK(once_sliced_test_and_add_local_batch(batched, local[1], batch, 0, NULL));
    for (int p = 0; p < 2; p++)
        once_free(local[p]);
    once_sliced_free(one);
    once_sliced_free(batched);
}

static void batch_matches_one_key_calls(void)
{
    enum { EVENTS = 5000 };
    static testing_key keys[EVENTS];
    static once_key batch[EVENTS];
    static uint8_t answers[EVENTS];
    batch_stream(keys, batch, EVENTS);
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
                    CHECK_OK(once_sliced_test_and_add(one, &keys[i], sizeof keys[i], 0, &seen));
                    differ += answers[i] != (uint8_t)seen;
                    dups += seen;
                }
                CHECK(differ == 0);
                CHECK(dups > EVENTS / 4 && dups < EVENTS);
                for (uint64_t i = 0; i < 4000; i++) { /* the same bits: the same answers */
                    testing_key key = testing_key_make(27, i);
                    bool a = false, b = false;
                    CHECK_OK(once_sliced_query(one, &key, sizeof key, 0, &a));
                    CHECK_OK(once_sliced_query(many, &key, sizeof key, 0, &b));
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
    batch_stream(keys, batch, EVENTS);
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
            once_status st = once_sliced_test_and_add(single, &keys[i], sizeof keys[i], 0, &seen);
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
        /* Both count the events the policy had to answer: those with a position on
         * the site down (under REPORT, the undecided ones). */
        once_sliced_stats sb, ss;
        CHECK_OK(once_sliced_get_stats(batched, &sb));
        CHECK_OK(once_sliced_get_stats(single, &ss));
        CHECK(sb.failed_events == ss.failed_events && sb.failed_events > 0 &&
              sb.failed_events < EVENTS);
        CHECK(rule != 0 || sb.failed_events == undecided);
        once_sliced_free(batched);
        once_sliced_free(single);
    }
    CHECK(destroyed == 4 * SLICES);
}

/* --------------------------------------------------------------- windows */

static once_site memory_site(uint64_t bits, uint64_t window_ms)
{
    once_memory_site_config mc = {.bits = bits, .window_ms = window_ms};
    once_site site = {0};
    CHECK_OK(once_memory_site_create(&mc, &site));
    return site;
}

/* A windowed memory site's cell, in bits: the narrowest timer of 8, 16 or 32 bits whose
 * tick is one ms (a window up to 2^(W-2) ms; 32 bits past that), and the sweep's mark. */
static uint64_t timer_cell_bits(uint64_t window_ms)
{
    uint32_t width = window_ms <= 64 ? 8 : window_ms <= 16384 ? 16 : 32;
    return width + 1;
}

/* One request to a site that must answer: all_set. */
static bool site_ask(once_site *site, once_site_op op, const uint64_t *positions,
                     uint32_t count, uint64_t time_ms, uint64_t *expiries)
{
    once_status status = ONCE_ERR_INVALID;
    bool all_set = site_request(site, op, positions, count, time_ms, expiries, &status);
    CHECK_OK(status);
    return all_set;
}

/* Section 4: timers expire at t_u + w at every site, whatever each site's clock. */
static void timers_expire_at_the_producer_time(void)
{
    const uint64_t w = 10000;
    once_site site = memory_site(1024, w);
    uint64_t other[] = {5}, mine[] = {100, 200, 300}, expiries[3];
    site_ask(&site, ONCE_SITE_SET, other, 1, 5000, NULL); /* the site's clock: 5000 */
    /* A request that arrives late, for an event of time 1000: expires at 11000, not at
     * 15000 (the site's clock plus w). */
    CHECK(!site_ask(&site, ONCE_SITE_TEST, mine, 3, 1000, NULL));
    site_ask(&site, ONCE_SITE_SET, mine, 3, 1000, NULL);
    CHECK(site_ask(&site, ONCE_SITE_TEST, mine, 3, 10999, expiries));
    CHECK(expiries[0] == 11000 && expiries[1] == 11000 && expiries[2] == 11000);
    CHECK(!site_ask(&site, ONCE_SITE_TEST, mine, 3, 11000, expiries));
    CHECK(expiries[0] == 0);
    /* The later expiry is kept: a late event does not shorten a timer. */
    uint64_t one[] = {400};
    site_ask(&site, ONCE_SITE_SET, one, 1, 9000, NULL); /* expires 19000 */
    site_ask(&site, ONCE_SITE_SET, one, 1, 7000, NULL); /* late: 17000, shorter */
    CHECK(site_ask(&site, ONCE_SITE_TEST, one, 1, 18999, expiries) && expiries[0] == 19000);
    /* An event already out of the window when it arrives sets nothing. */
    uint64_t stale[] = {500};
    site_ask(&site, ONCE_SITE_SET, stale, 1, 20000, NULL);  /* clock 20000 */
    site_ask(&site, ONCE_SITE_SET, stale + 0, 0, 20000, NULL);
    uint64_t gone[] = {600};
    site_ask(&site, ONCE_SITE_SET, gone, 1, 9000, NULL); /* 9000 + w <= 20000 */
    CHECK(!site_ask(&site, ONCE_SITE_TEST, gone, 1, 20000, NULL));
    /* At the far end of time an expiry stops short of the largest time, and the
     * positions set there are alive for it. */
    uint64_t last[] = {700};
    site_ask(&site, ONCE_SITE_SET, last, 1, ONCE_MAX_TIME_MS - 10, NULL);
    CHECK(site_ask(&site, ONCE_SITE_TEST, last, 1, ONCE_MAX_TIME_MS - 10, expiries));
    CHECK(expiries[0] == ONCE_MAX_TIME_MS);
    CHECK(!site_ask(&site, ONCE_SITE_TEST, last, 1, ONCE_MAX_TIME_MS, NULL));
    /* A position past the site is never set. */
    uint64_t past[] = {1024};
    site_ask(&site, ONCE_SITE_SET, past, 1, 20000, NULL);
    CHECK(!site_ask(&site, ONCE_SITE_TEST, past, 1, 20000, NULL));
    once_site_info info = {0};
    site.describe(site.context, &info);
    CHECK(info.cells == 1024 && info.filters == 1 && info.cells_set >= 1);
    site.destroy(site.context);
    once_memory_site_config bad = {.bits = 1000, .window_ms = w}; /* not whole words */
    CHECK_STATUS(once_memory_site_create(&bad, &site), ONCE_ERR_INVALID);
    bad = (once_memory_site_config){.bits = 1024, .window_ms = w, .growth = ONCE_GROWTH_DENSITY, .max_density = 1.5};
    CHECK_STATUS(once_memory_site_create(&bad, &site), ONCE_ERR_INVALID);
    /* Shared sites are bits: no timers, no growth. */
    bad = (once_memory_site_config){.bits = 1024, .window_ms = w, .shared = true};
    CHECK_STATUS(once_memory_site_create(&bad, &site), ONCE_ERR_INVALID);
}

/* Section 4 on packed timers: a site's timers take the narrowest width whose tick is a
 * millisecond for its window; an event up to a window behind the site's clock is
 * judged at its own time, timers that expired at the clock included, and one older is
 * judged a window behind the clock and sets nothing; a timer never comes back alive
 * when the clock wraps its ticks, in small steps or in jumps; past 2^30 ms the tick
 * grows and an event stays up to a tick longer, never shorter. */
static void site_timers_are_packed(void)
{
    const uint64_t windows[] = {1, 64, 65, 16384, 16385, UINT64_C(1) << 30,
                                (UINT64_C(1) << 30) + 1};
    for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++) {
        once_site site = memory_site(1024, windows[i]);
        once_site_info info = {0};
        site.describe(site.context, &info);
        CHECK(info.bytes > 1024 * timer_cell_bits(windows[i]) / 8 &&
              info.bytes < 1024 * timer_cell_bits(windows[i]) / 8 + 4096);
        site.destroy(site.context);
    }

    const uint64_t w = 1000;
    once_site site = memory_site(1024, w);
    uint64_t a[] = {10, 20, 30}, other[] = {40}, expiries[3];
    site_ask(&site, ONCE_SITE_SET, a, 3, 0, NULL);        /* expires at 1000 */
    site_ask(&site, ONCE_SITE_SET, other, 1, 1500, NULL); /* clock 1500: a expired */
    once_site_info info = {0};
    site.describe(site.context, &info);
    CHECK(info.cells_set == 1); /* a's timers no longer count as set */
    CHECK(site_ask(&site, ONCE_SITE_TEST, a, 3, 999, expiries) && expiries[0] == 1000);
    CHECK(site_ask(&site, ONCE_SITE_TEST, a, 3, 500, NULL)); /* exactly a window late */
    CHECK(!site_ask(&site, ONCE_SITE_TEST, a, 3, 1000, NULL));
    site_ask(&site, ONCE_SITE_SET, other, 1, 2100, NULL); /* clock 2100 */
    /* 999 is more than a window behind 2100: judged at 1100, where a is gone. */
    CHECK(!site_ask(&site, ONCE_SITE_TEST, a, 3, 999, NULL));
    uint64_t late[] = {50};
    site_ask(&site, ONCE_SITE_SET, late, 1, 1099, NULL); /* sets nothing */
    CHECK(!site_ask(&site, ONCE_SITE_TEST, late, 1, 1099, NULL));
    CHECK(!site_ask(&site, ONCE_SITE_TEST, late, 1, 1100, NULL));
    site_ask(&site, ONCE_SITE_SET, late, 1, 1100, NULL); /* a window late: set */
    CHECK(site_ask(&site, ONCE_SITE_TEST, late, 1, 2099, expiries) && expiries[0] == 2100);

    /* 16-bit ticks of 1 ms wrap every 65,535 ms: a position set once stays dead over
     * many wraps, whether the clock moves in small steps or in jumps of a wrap. */
    uint64_t once_set[] = {60}, step_pos[] = {70};
    site_ask(&site, ONCE_SITE_SET, once_set, 1, 3000, NULL);
    bool came_back = false;
    for (uint64_t t = 3100; t < 3000 + 5 * 65535; t += 100) {
        site_ask(&site, ONCE_SITE_SET, step_pos, 1, t, NULL);
        came_back |= t >= 4000 && site_ask(&site, ONCE_SITE_TEST, once_set, 1, t, NULL);
    }
    CHECK(!came_back);
    uint64_t now = 3000 + 5 * 65535;
    site_ask(&site, ONCE_SITE_SET, once_set, 1, now, NULL);
    for (int jump = 0; jump < 4; jump++) {
        now += 65535; /* one whole wrap */
        site_ask(&site, ONCE_SITE_SET, step_pos, 1, now, NULL);
        came_back |= site_ask(&site, ONCE_SITE_TEST, once_set, 1, now, NULL);
        came_back |= site_ask(&site, ONCE_SITE_TEST, once_set, 1, now + 500, NULL);
    }
    CHECK(!came_back);
    site.destroy(site.context);

    /* A window of 2^31 ms ticks at 2 ms: an event at 1 expires at tick
     * ceil((1 + 2^31) / 2), 2^31 + 2 ms, a millisecond late. */
    const uint64_t long_w = UINT64_C(1) << 31;
    site = memory_site(1024, long_w);
    site_ask(&site, ONCE_SITE_SET, a, 3, 1, NULL);
    CHECK(site_ask(&site, ONCE_SITE_TEST, a, 3, long_w + 1, expiries));
    CHECK(expiries[0] == long_w + 2 && expiries[1] == long_w + 2);
    CHECK(!site_ask(&site, ONCE_SITE_TEST, a, 3, long_w + 2, NULL));
    site.destroy(site.context);
}

/* Keys, each delivered at a time that advances by `step` ms, repeated from `back`
 * events before with probability 1/2. */
static testing_key window_key(uint64_t i, uint64_t back)
{
    uint64_t r = testing_mix(i * 31 + 7);
    if (i >= back && r % 2 == 0)
        return testing_key_make(50, i - 1 - (r >> 8) % back);
    return testing_key_make(50, i);
}

/* Definition 4 on every slicing: an event delivered less than w before is a duplicate
 * (no false negatives), one delivered w or more before is forgotten unless a false
 * positive keeps it, and absent keys are present at the rate of the keys alive. */
static void windows_keep_definition_4(void)
{
    enum { EVENTS = 40000, STEP = 10 };
    const uint64_t w = 20000; /* 2000 events a window */
    const once_slicing slicings[] = {ONCE_SLICING_HORIZONTAL, ONCE_SLICING_VERTICAL,
                                     ONCE_SLICING_DICED_HV, ONCE_SLICING_DICED_VH};
    static uint64_t delivered[EVENTS]; /* key index -> last delivery time + 1 */
    for (size_t sl = 0; sl < 4; sl++)
        for (int lookup = 0; lookup < 2; lookup++) {
            once_sliced_config c = config_of(slicings[sl], 4, 24000, 4, ONCE_FTTS,
                                             (once_lookup)lookup);
            c.parts = slicings[sl] >= ONCE_SLICING_DICED_HV ? 2 : 0;
            c.window_ms = w;
            once_sliced *f = sliced_make(&c);
            REQUIRE(f != NULL);
            memset(delivered, 0, sizeof delivered);
            uint64_t false_negatives = 0, forgotten = 0, old_repeats = 0;
            for (uint64_t i = 0; i < EVENTS; i++) {
                uint64_t back = i % 3 == 0 ? 6000 : 1500; /* beyond and inside the window */
                testing_key k = window_key(i, back);
                uint64_t id = k.w[0] & 0xffffffffu, t = 100000 + i * STEP;
                REQUIRE(id < EVENTS);
                bool seen = false;
                CHECK_OK(once_sliced_test_and_add(f, &k, sizeof k, t, &seen));
                bool inside = delivered[id] != 0 && t - (delivered[id] - 1) < w;
                false_negatives += inside && !seen;
                old_repeats += delivered[id] != 0 && !inside;
                forgotten += delivered[id] != 0 && !inside && !seen;
                if (!seen)
                    delivered[id] = t + 1;
            }
            CHECK(false_negatives == 0);
            CHECK(old_repeats > 1000 && forgotten > old_repeats * 9 / 10);
            /* Absent keys at the end: the rate of the keys alive (delivered in the last
             * w), Eq. 3 or 4 or section 3.3. */
            uint64_t now = 100000 + EVENTS * STEP, alive = 0;
            for (uint64_t id = 0; id < EVENTS; id++)
                alive += delivered[id] != 0 && now - (delivered[id] - 1) < w;
            uint64_t trials = 40000, fp = count_present(f, 51, trials, now);
            once_sliced_stats st;
            CHECK_OK(once_sliced_get_stats(f, &st));
            double want = once_sliced_fpr(slicings[sl], st.bits, 4, 4, c.parts, alive);
            CHECK(testing_within_sigmas(fp, trials, want, 5.0));
            CHECK(st.filters == st.sites &&
                  st.bytes >= st.sites * st.slice_bits * timer_cell_bits(w) / 8);
            once_sliced_free(f);
        }
}

/* A count window (the last N delivered) on every slicing: a key delivered with fewer
 * than N others after it is a duplicate (no false negatives), one with N or more is
 * forgotten but for false positives, whatever times the calls carry; at the edge the
 * window holds exactly N. */
static void count_windows_keep_the_last_n(void)
{
    enum { EVENTS = 40000, WINDOW = 2000 };
    const once_slicing slicings[] = {ONCE_SLICING_HORIZONTAL, ONCE_SLICING_VERTICAL,
                                     ONCE_SLICING_DICED_HV, ONCE_SLICING_DICED_VH};
    static uint64_t position[EVENTS]; /* key index -> place among the delivered + 1 */
    for (size_t sl = 0; sl < 4; sl++) {
        once_sliced_config c = config_of(slicings[sl], 4, 24000, 4, ONCE_FTTS,
                                         (once_lookup)(sl % 2));
        c.parts = slicings[sl] >= ONCE_SLICING_DICED_HV ? 2 : 0;
        c.window_events = WINDOW;
        once_sliced *f = sliced_make(&c);
        REQUIRE(f != NULL);
        memset(position, 0, sizeof position);
        uint64_t delivered = 0, false_negatives = 0, forgotten = 0, old_repeats = 0;
        for (uint64_t i = 0; i < EVENTS; i++) {
            /* Repeats from within 1500 events (about 1000 delivered) and from 6000. */
            testing_key k = window_key(i, i % 3 == 0 ? 6000 : 1500);
            uint64_t id = k.w[0] & 0xffffffffu;
            REQUIRE(id < EVENTS);
            bool seen = false;
            /* Times that mean nothing to a count window, the largest included. */
            uint64_t t = i % 7 == 0 ? UINT64_MAX : testing_mix(i);
            CHECK_OK(once_sliced_test_and_add(f, &k, sizeof k, t, &seen));
            bool inside = position[id] != 0 && delivered - (position[id] - 1) <= WINDOW;
            false_negatives += inside && !seen;
            old_repeats += position[id] != 0 && !inside;
            forgotten += position[id] != 0 && !inside && !seen;
            if (!seen)
                position[id] = ++delivered;
        }
        CHECK(false_negatives == 0);
        CHECK(old_repeats > 1000 && forgotten > old_repeats * 9 / 10);
        /* Absent keys: the rate of the N keys in the window. */
        uint64_t trials = 40000, fp = count_present(f, 51, trials, 0);
        once_sliced_stats st;
        CHECK_OK(once_sliced_get_stats(f, &st));
        CHECK(st.inserted == delivered);
        double want = once_sliced_fpr(slicings[sl], st.bits, 4, 4, c.parts, WINDOW);
        CHECK(testing_within_sigmas(fp, trials, want, 5.0));
        once_sliced_free(f);
    }
    /* The edge, on a filter too large for false positives among a few keys: with N = 3,
     * a key is kept while at most 2 others follow it, and lost at the third. */
    once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, 4, 1 << 20, 4, ONCE_FTTS,
                                     ONCE_LOOKUP_PARALLEL);
    c.window_events = 3;
    once_sliced *f = sliced_make(&c);
    REQUIRE(f != NULL);
    const char *stream = "abcadaeab";
    const char *want = "DDDdDDDdD"; /* D distinct, d duplicate */
    for (size_t i = 0; stream[i] != '\0'; i++) {
        bool seen = false;
        CHECK_OK(once_sliced_test_and_add(f, &stream[i], 1, 0, &seen));
        CHECK(seen == (want[i] == 'd'));
    }
    once_sliced_free(f);
}

/* Refresh: a duplicate restarts its window, on a time and on a count window.  A key
 * is a duplicate while its last occurrence, delivered or not, is inside the window; a
 * key that recurs more often than the window is delivered once. */
static void refresh_restarts_the_window(void)
{
    enum { EVENTS = 30000, STEP = 10, WINDOW = 2000 };
    static uint64_t last[EVENTS]; /* key index -> clock at its last occurrence + 1 */
    const testing_key hot = testing_key_make(57, 0);
    for (int sl = 0; sl < 2; sl++)
        for (int counted = 0; counted < 2; counted++)
            for (int refresh = 0; refresh < 2; refresh++) {
                once_sliced_config c = config_of(sl ? ONCE_SLICING_VERTICAL
                                                    : ONCE_SLICING_HORIZONTAL,
                                                 4, 24000, 4, ONCE_FTTS, ONCE_LOOKUP_PARALLEL);
                c.window_ms = counted ? 0 : WINDOW * STEP;
                c.window_events = counted ? WINDOW : 0;
                c.refresh = refresh;
                once_sliced *f = sliced_make(&c);
                REQUIRE(f != NULL);
                memset(last, 0, sizeof last);
                uint64_t delivered = 0, false_negatives = 0, forgotten = 0, old_repeats = 0;
                uint64_t hot_deliveries = 0;
                for (uint64_t i = 0; i < EVENTS; i++) {
                    uint64_t t = i * STEP;
                    bool seen = false;
                    if (i % 1500 == 0) { /* every 3/4 window of events, or fewer keys */
                        CHECK_OK(once_sliced_test_and_add(f, &hot, sizeof hot, t, &seen));
                        hot_deliveries += !seen;
                        delivered += !seen;
                    }
                    testing_key k = window_key(i, i % 3 == 0 ? 6000 : 1500);
                    uint64_t id = k.w[0] & 0xffffffffu;
                    REQUIRE(id < EVENTS);
                    CHECK_OK(once_sliced_test_and_add(f, &k, sizeof k, t, &seen));
                    uint64_t clock = counted ? delivered : t;
                    bool inside = last[id] != 0 && (counted ? clock - (last[id] - 1) <= WINDOW
                                                            : clock - (last[id] - 1) < WINDOW * STEP);
                    false_negatives += inside && !seen;
                    old_repeats += last[id] != 0 && !inside;
                    forgotten += last[id] != 0 && !inside && !seen;
                    if (!seen || refresh)
                        last[id] = clock + 1;
                    delivered += !seen;
                }
                CHECK(false_negatives == 0);
                CHECK(old_repeats > 1000 && forgotten > old_repeats * 9 / 10);
                /* Without refresh the hot key comes back each window (20 of them over the
                 * time window; about 15 over the count, fewer keys delivered a unit). */
                CHECK(refresh ? hot_deliveries == 1 : hot_deliveries > 5);
                once_sliced_free(f);
            }
}

static void windowed_batch_matches_one_key_calls(void)
{
    enum { EVENTS = 6000 };
    static testing_key keys[EVENTS];
    static once_key batch[EVENTS];
    static uint8_t answers[EVENTS];
    for (uint64_t i = 0; i < EVENTS; i++) {
        keys[i] = window_key(i, 900);
        batch[i] = (once_key){&keys[i], sizeof keys[i], 5000 + i * 3 - (i % 5) * 7};
    }
    once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, 6, 30000, 5, ONCE_FTTS,
                                     ONCE_LOOKUP_PIPELINED);
    c.window_ms = 2000;
    c.equal_timers = 3;
    once_sliced *one = sliced_make(&c);
    c.threads = 2;
    once_sliced *many = sliced_make(&c);
    REQUIRE(one != NULL && many != NULL);
    CHECK_OK(once_sliced_test_and_add_batch(many, batch, EVENTS, answers));
    uint64_t differ = 0, dups = 0;
    for (uint64_t i = 0; i < EVENTS; i++) {
        bool seen = false;
        CHECK_OK(once_sliced_test_and_add(one, &keys[i], sizeof keys[i], batch[i].time_ms,
                                          &seen));
        differ += answers[i] != (uint8_t)seen;
        dups += seen;
    }
    CHECK(differ == 0 && dups > 500);
    bool present = false;
    CHECK_STATUS(once_sliced_query(one, &keys[0], sizeof keys[0], ONCE_MAX_TIME_MS + 1, &present),
                 ONCE_ERR_TIME);
    once_sliced_free(one);
    once_sliced_free(many);
}

/* A time window's clock is the latest time offered, by one-key calls and batches alike;
 * a query or a count window has none to move. */
static void clock_is_the_latest_time_offered(void)
{
    once_sliced_config c = config_of(ONCE_SLICING_HORIZONTAL, 4, 10000, 4, ONCE_FTTS,
                                     ONCE_LOOKUP_PARALLEL);
    c.window_ms = 1000;
    once_sliced *f = sliced_make(&c);
    REQUIRE(f != NULL);
    uint64_t clock = 7;
    bool started = true;
    CHECK_OK(once_sliced_clock(f, &clock, &started));
    CHECK(!started && clock == 0);
    bool seen = false, present = false;
    CHECK_OK(once_sliced_test_and_add(f, "a", 1, 0, &seen));
    CHECK_OK(once_sliced_clock(f, &clock, &started));
    CHECK(started && clock == 0); /* time 0 is a time */
    once_key batch[3] = {{"b", 1, 500}, {"c", 1, 300}, {"d", 1, 200}};
    uint8_t answers[3];
    CHECK_OK(once_sliced_test_and_add_batch(f, batch, 3, answers));
    CHECK_OK(once_sliced_clock(f, &clock, &started));
    CHECK(started && clock == 500); /* the latest, not the last */
    CHECK_OK(once_sliced_query(f, "e", 1, 9000, &present));
    CHECK_OK(once_sliced_clock(f, &clock, &started));
    CHECK(clock == 500);
    /* The caller steps it by the library's rule: a jump past the bound is refused. */
    CHECK(!once_time_step(100, &clock, &started, 601) && clock == 500);
    CHECK(once_time_step(100, &clock, &started, 600) && clock == 600);
    once_sliced_free(f);
    c.window_ms = 0;
    c.window_events = 100;
    f = sliced_make(&c);
    REQUIRE(f != NULL);
    CHECK_STATUS(once_sliced_clock(f, &clock, &started), ONCE_ERR_UNSUPPORTED);
    CHECK_STATUS(once_sliced_clock(NULL, &clock, &started), ONCE_ERR_INVALID);
    once_sliced_free(f);
}

/* Fig. 9 of paper 000: k = 8, horizontal and vertical; the equal-timers heuristic with
 * k' = 2 .. 8: fewer false positives than without, more false negatives as k' grows. */
static void equal_timers_trade_fp_for_fn(void)
{
    enum { EVENTS = 30000, STEP = 10 };
    const uint64_t w = 100000; /* 10000 events a window */
    const once_slicing slicings[] = {ONCE_SLICING_HORIZONTAL, ONCE_SLICING_VERTICAL};
    for (size_t sl = 0; sl < 2; sl++) {
        uint64_t fp_without = 0, last_fn = 0;
        const uint32_t ks[] = {0, 2, 4, 8};
        for (size_t e = 0; e < 4; e++) {
            once_sliced_config c = config_of(slicings[sl], 8, 80000, 8, ONCE_FTTS,
                                             ONCE_LOOKUP_PARALLEL);
            c.window_ms = w;
            c.equal_timers = ks[e];
            once_sliced *f = sliced_make(&c);
            REQUIRE(f != NULL);
            uint64_t fn = 0, fp = 0;
            static bool delivered[EVENTS];
            for (uint64_t i = 0; i < EVENTS; i++) {
                uint64_t t = 1000 + i * STEP;
                testing_key k = testing_key_make(52, i);
                bool seen = false;
                CHECK_OK(once_sliced_test_and_add(f, &k, sizeof k, t, &seen));
                fp += seen; /* every key is new */
                delivered[i] = !seen;
                uint64_t back = i - 1 - testing_mix(i) % 2000;
                if (i >= 2000 && i % 4 == 0 && delivered[back]) { /* delivered in the window */
                    testing_key r = testing_key_make(52, back);
                    bool present = false;
                    CHECK_OK(once_sliced_query(f, &r, sizeof r, t, &present));
                    fn += !present;
                }
            }
            if (ks[e] == 0) {
                CHECK(fn == 0);
                fp_without = fp;
                CHECK(fp > 50);
            } else {
                CHECK(fp < fp_without);
                CHECK(fn >= last_fn);
            }
            last_fn = fn;
            once_sliced_free(f);
        }
        CHECK(last_fn > 0); /* k' = k: a key whose timers were raised since is missed */
    }
}

/* The keys of `count` that horizontal slicing with this config sends to slice 0. */
static size_t keys_of_slice_zero(const once_sliced_config *c, uint64_t domain, testing_key *out,
                                 size_t count)
{
    once_sliced_config probe = *c;
    probe.window_ms = 0;
    probe.growth = ONCE_GROWTH_NONE;
    once_sliced *f = sliced_make(&probe);
    size_t n = 0;
    uint64_t loads[16] = {0}, before = 0;
    for (uint64_t i = 0; n < count; i++) {
        testing_key k = testing_key_make(domain, i);
        bool seen = false;
        CHECK_OK(once_sliced_test_and_add(f, &k, sizeof k, 0, &seen));
        CHECK_OK(once_sliced_loads(f, loads, 16));
        if (loads[0] != before)
            out[n++] = k;
        before = loads[0];
    }
    once_sliced_free(f);
    return n;
}

/* Bounded growth: through a 5x burst, vertical slicing with per-site growth passes
 * its target many times over (a site answers "present" when any of its sub-filters
 * holds its positions), and bounded growth, in generations across the sites, keeps the
 * rate under it; no repeat inside the window is missed either way; two windows after
 * the burst its generations are back to the ones the even stream needs.  Without a
 * window it grows as the scalable filter does: ten times its capacity, and the rate is
 * still under the target. */
static void bounded_growth_keeps_the_rate(void)
{
    enum { UNITS = 6000, BURST_FROM = 2000, BURST_TO = 4000, EXTRA = 16 };
    const uint64_t w = 1000;
    double burst_rate[2];
    for (int bounded = 0; bounded < 2; bounded++) {
        once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, 8, 0, 0, ONCE_FTTS,
                                         ONCE_LOOKUP_PARALLEL);
        c.capacity = 4000; /* the even stream: 4 keys a unit, 4000 a window */
        c.error = 0.01;
        c.window_ms = w;
        c.growth = bounded ? ONCE_GROWTH_BOUNDED : ONCE_GROWTH_DENSITY;
        once_sliced *f = sliced_make(&c);
        uint64_t missed = 0, repeats = 0, fp = 0, probes = 0, next = 0;
        static bool delivered[BURST_FROM];
        uint32_t most = 0;
        for (uint64_t u = 0; u < UNITS; u++) {
            bool bursting = u >= BURST_FROM && u < BURST_TO;
            for (int j = 0; j < 4 + (bursting ? EXTRA : 0); j++) {
                testing_key k = testing_key_make(90, u < BURST_FROM ? u * 4 + (uint64_t)j
                                                                     : UINT64_C(1) << 40 | next);
                next++;
                bool seen = false;
                CHECK_OK(once_sliced_test_and_add(f, &k, sizeof k, u, &seen));
                if (j == 0 && u < BURST_FROM)
                    delivered[u] = !seen; /* a false positive is not delivered */
            }
            if (u >= 500 && u - 500 < BURST_FROM && delivered[u - 500]) {
                /* A repeat of the key delivered first in the unit 500 before. */
                testing_key k = testing_key_make(90, (u - 500) * 4);
                bool seen = false;
                CHECK_OK(once_sliced_test_and_add(f, &k, sizeof k, u, &seen));
                missed += !seen;
                repeats++;
            }
            once_sliced_stats st;
            CHECK_OK(once_sliced_get_stats(f, &st));
            if (st.filters > most)
                most = st.filters;
            if (bursting && u >= BURST_FROM + w && u % 10 == 0)
                for (int j = 0; j < 20; j++) {
                    testing_key k = testing_key_make(91, u * 20 + j);
                    bool present = false;
                    CHECK_OK(once_sliced_query(f, &k, sizeof k, u, &present));
                    fp += present;
                    probes++;
                }
        }
        CHECK(missed == 0 && repeats > 1000);
        burst_rate[bounded] = (double)fp / (double)probes;
        once_sliced_stats st;
        CHECK_OK(once_sliced_get_stats(f, &st));
        if (bounded) {
            /* Generations at every site: more during the burst; after it, the even
             * stream's: the first takes events to 0.61 P only, the second to 0.15 P,
             * and one lives a window past its last event. */
            CHECK(most >= 3 * 8 && st.filters <= 3 * 8);
            CHECK(burst_rate[1] <= 0.01 + 4.0 * sqrt(0.01 * 0.99 / (double)probes));
        }
        once_sliced_free(f);
    }
    CHECK(burst_rate[0] > 0.05); /* per-site growth, vertical: far past the target */

    /* All time: ten times the capacity, the rate still under the target. */
    once_sliced_config c = config_of(ONCE_SLICING_HORIZONTAL, 4, 0, 0, ONCE_TAS,
                                     ONCE_LOOKUP_PARALLEL);
    c.capacity = 2000;
    c.error = 0.01;
    c.growth = ONCE_GROWTH_BOUNDED;
    once_sliced *f = sliced_make(&c);
    testing_sliced_fill(f, 92, 20000);
    CHECK(count_present(f, 92, 20000, 0) == 20000);
    uint64_t trials = 40000, hits = count_present(f, 93, trials, 0);
    CHECK(hits <= 0.01 * trials + 4.0 * sqrt(0.01 * 0.99 * trials));
    once_sliced_stats st;
    CHECK_OK(once_sliced_get_stats(f, &st));
    CHECK(st.filters > 4 * 4);
    once_sliced_free(f);
    /* Under a memory cap a generation that finds no room fails its events with
     * ONCE_ERR_FULL, setting nothing anywhere else; once old ones expire, it opens. */
    once_sliced_config capped = config_of(ONCE_SLICING_VERTICAL, 4, 0, 0, ONCE_FTTS,
                                          ONCE_LOOKUP_PARALLEL);
    capped.capacity = 1000;
    capped.error = 0.01;
    capped.window_ms = 1000;
    capped.growth = ONCE_GROWTH_BOUNDED;
    uint64_t first = 0;
    CHECK_OK(once_sliced_first_bytes(&capped, &first));
    capped.max_bytes = 3 * first;
    f = sliced_make(&capped);
    uint64_t full = 0, other = 0, full_late = 0;
    for (uint64_t u = 0, key = 0; u < 5000; u++)
        for (int j = 0; j < (u >= 1000 && u < 2000 ? 10 : 1); j++) {
            testing_key k = testing_key_make(94, key++);
            bool seen = false;
            once_status status = once_sliced_test_and_add(f, &k, sizeof k, u, &seen);
            full += status == ONCE_ERR_FULL;
            full_late += status == ONCE_ERR_FULL && u >= 4000;
            other += status != ONCE_OK && status != ONCE_ERR_FULL;
        }
    CHECK(full > 1000 && full_late == 0 && other == 0);
    once_sliced_free(f);
    /* Not with concurrent callers or thread sites: generations change between events. */
    c.concurrent = true;
    CHECK_STATUS(once_sliced_create(&f, &c, NULL), ONCE_ERR_INVALID);
    c.concurrent = false;
    c.threads = 2;
    CHECK_STATUS(once_sliced_create(&f, &c, NULL), ONCE_ERR_INVALID);
}

/* Section 5, Figs. 10-11: windows of 1000 time units, a 5x burst on slice 0 in the
 * middle third, on top of an even stream at half the capacity. */
static void slices_grow_alone_during_a_burst(void)
{
    enum { SLICES = 4, UNITS = 6000, BURST_FROM = 2000, BURST_TO = 4000, EXTRA = 4 };
    const uint64_t w = 1000;
    static testing_key burst[(BURST_TO - BURST_FROM) * EXTRA];
    for (int growth = 0; growth <= 2; growth++) {
        once_sliced_config c = config_of(ONCE_SLICING_HORIZONTAL, SLICES, 0, 0, ONCE_FTTS,
                                         ONCE_LOOKUP_PARALLEL);
        c.capacity = 8000; /* the even stream: 4 keys a unit, 4000 a window */
        c.error = 0.01;
        c.window_ms = w;
        c.growth = (once_growth)growth;
        REQUIRE(keys_of_slice_zero(&c, 53, burst, (BURST_TO - BURST_FROM) * EXTRA) ==
                (BURST_TO - BURST_FROM) * EXTRA);
        once_sliced *f = sliced_make(&c);
        REQUIRE(f != NULL);
        uint32_t most[SLICES] = {0}, after[SLICES] = {0};
        uint64_t opened[SLICES] = {0}, last_opening[SLICES] = {0}, grown_until[SLICES] = {0};
        uint64_t fp_burst = 0, probes_burst = 0;
        for (uint64_t u = 0; u < UNITS; u++) {
            for (int j = 0; j < 4; j++) {
                testing_key k = testing_key_make(54, u * 4 + j);
                bool seen = false;
                CHECK_OK(once_sliced_test_and_add(f, &k, sizeof k, u, &seen));
            }
            bool bursting = u >= BURST_FROM && u < BURST_TO;
            for (int j = 0; bursting && j < EXTRA; j++) { /* slice 0: 1 + 4 keys a unit */
                bool seen = false;
                const testing_key *k = &burst[(u - BURST_FROM) * EXTRA + j];
                CHECK_OK(once_sliced_test_and_add(f, k, sizeof *k, u, &seen));
            }
            for (uint32_t i = 0; i < SLICES; i++) {
                once_site_info info;
                CHECK_OK(once_sliced_site_info(f, i, &info));
                if (info.filters > most[i])
                    most[i] = info.filters;
                after[i] = info.filters;
                if (info.opened > opened[i])
                    last_opening[i] = u;
                opened[i] = info.opened;
                if (info.filters > 1)
                    grown_until[i] = u + 1;
            }
            if (bursting && u >= BURST_FROM + w && u % 10 == 0) /* slice 0 at 5x */
                for (int j = 0; j < 20; j++) {
                    testing_key k = testing_key_make(55, u * 20 + j);
                    bool present = false;
                    CHECK_OK(once_sliced_query(f, &k, sizeof k, u, &present));
                    fp_burst += present;
                    probes_burst++;
                }
        }
        double burst_rate = (double)fp_burst / (double)probes_burst;
        if (growth == ONCE_GROWTH_NONE) {
            for (uint32_t i = 0; i < SLICES; i++)
                CHECK(most[i] == 1 && opened[i] == 1);
            CHECK(burst_rate > 0.02); /* slice 0 at 2.5x its capacity */
            once_sliced_free(f);
            continue;
        }
        /* Slice 0 grew to hold its 5000 keys a window; the others, at half their
         * capacity, did not (by density), or went between one and two sub-filters
         * (by cardinality: the count of a full filter never falls, section 5). */
        CHECK(most[0] >= 3);
        for (uint32_t i = 1; i < SLICES; i++)
            CHECK(most[i] <= (growth == ONCE_GROWTH_DENSITY ? 1u : 2u));
        CHECK(burst_rate < 0.02);
        /* Two windows after the burst the sub-filters it opened have emptied. */
        for (uint32_t i = 0; i < SLICES; i++)
            CHECK(after[i] <= (growth == ONCE_GROWTH_DENSITY ? 1u : 2u));
        if (growth == ONCE_GROWTH_DENSITY) {
            /* The older sub-filters take nothing after the last opening, so slice 0 is
             * back to one within w of it (and of its next write, one a unit here); the
             * last comes before the burst's cells leave the density, w after the burst
             * and a quarter-window sweep.  The other slices never opened one. */
            CHECK(opened[0] >= 3 && last_opening[0] >= BURST_FROM);
            CHECK(last_opening[0] <= BURST_TO + w + w / 4);
            CHECK(grown_until[0] <= last_opening[0] + w + 10);
            for (uint32_t i = 1; i < SLICES; i++)
                CHECK(opened[i] == 1);
        }
        once_sliced_free(f);
    }
}

/* A memory cap over growing sites: a burst on slice 0 opens sub-filters there until
 * the cap, then its events fail with ONCE_ERR_FULL (setting nothing) while the other
 * slices answer; once the burst's sub-filters expire and drop, their room comes back. */
static void memory_cap_bounds_growth(void)
{
    enum { SLICES = 4, UNITS = 5000, BURST_FROM = 1000, BURST_TO = 2000, EXTRA = 8 };
    const uint64_t w = 500;
    static testing_key burst[(BURST_TO - BURST_FROM) * EXTRA];
    once_sliced_config c = config_of(ONCE_SLICING_HORIZONTAL, SLICES, 0, 0, ONCE_FTTS,
                                     ONCE_LOOKUP_PARALLEL);
    c.capacity = 4000; /* 4 keys a unit, 2000 a window */
    c.error = 0.01;
    c.window_ms = w;
    c.growth = ONCE_GROWTH_DENSITY;
    uint64_t m = 0, slice_bits = 0;
    uint32_t k = 0;
    CHECK_OK(once_sliced_geometry(&c, &m, &k, &slice_bits));
    const uint64_t sub_filter_bytes = slice_bits * timer_cell_bits(w) / 8;
    uint64_t first_bytes = 0;
    CHECK_OK(once_sliced_first_bytes(&c, &first_bytes));
    CHECK(first_bytes == SLICES * sub_filter_bytes);
    /* Too small for the first sub-filters. */
    c.max_bytes = SLICES * sub_filter_bytes - 1;
    once_sliced *f = NULL;
    CHECK_STATUS(once_sliced_create(&f, &c, NULL), ONCE_ERR_FULL);
    CHECK(f == NULL);
    c.max_bytes = (SLICES + 2) * sub_filter_bytes; /* two more in all */
    REQUIRE(keys_of_slice_zero(&c, 56, burst, (BURST_TO - BURST_FROM) * EXTRA) ==
            (BURST_TO - BURST_FROM) * EXTRA);
    f = sliced_make(&c);
    REQUIRE(f != NULL);
    uint64_t full = 0, full_after = 0, other_errors = 0;
    uint32_t most = 0;
    for (uint64_t u = 0; u < UNITS; u++) {
        for (int j = 0; j < 4; j++) { /* every slice, one key a unit each */
            testing_key key = testing_key_make(58, u * 4 + j);
            bool seen = false;
            once_status st = once_sliced_test_and_add(f, &key, sizeof key, u, &seen);
            full += st == ONCE_ERR_FULL;
            full_after += st == ONCE_ERR_FULL && u >= BURST_TO + w + w / 4 + 10;
            other_errors += st != ONCE_OK && st != ONCE_ERR_FULL;
        }
        for (int j = 0; u >= BURST_FROM && u < BURST_TO && j < EXTRA; j++) {
            const testing_key *key = &burst[(u - BURST_FROM) * EXTRA + j];
            bool seen = false;
            once_status st = once_sliced_test_and_add(f, key, sizeof *key, u, &seen);
            full += st == ONCE_ERR_FULL;
            other_errors += st != ONCE_OK && st != ONCE_ERR_FULL;
        }
        once_sliced_stats st;
        CHECK_OK(once_sliced_get_stats(f, &st));
        if (st.filters > most)
            most = st.filters;
        for (uint32_t i = 1; i < SLICES; i++) {
            once_site_info info;
            CHECK_OK(once_sliced_site_info(f, i, &info));
            CHECK(info.filters == 1); /* the others never needed more */
        }
    }
    CHECK(other_errors == 0);
    CHECK(most == SLICES + 2); /* slice 0 took the two, and no more */
    CHECK(full > 1000);        /* at 9x its share, it then refused */
    CHECK(full_after == 0);    /* the room came back after the burst */
    once_sliced_free(f);
    /* A count window takes no cap: it holds N events at most. */
    c.window_ms = 0;
    c.growth = ONCE_GROWTH_NONE;
    c.window_events = 100;
    CHECK_STATUS(once_sliced_create(&f, &c, NULL), ONCE_ERR_INVALID);
}

static void invalid_configs_refused(void)
{
    once_sliced *f = NULL;
    once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, 4, 1000, 4, ONCE_FTTS,
                                     ONCE_LOOKUP_PARALLEL);
    /* `c` with one field changed is refused with `status`, and builds nothing. */
#define REFUSED_WITH(field, value, status)                                                   \
    do {                                                                                     \
        once_sliced_config bad = c;                                                          \
        bad.field = value;                                                                   \
        CHECK_STATUS(once_sliced_create(&f, &bad, NULL), status);                            \
        CHECK(f == NULL);                                                                    \
    } while (0)
    REFUSED_WITH(slices, 0, ONCE_ERR_INVALID);
    REFUSED_WITH(slices, 5000, ONCE_ERR_INVALID);
    REFUSED_WITH(slicing, (once_slicing)9, ONCE_ERR_INVALID);
    REFUSED_WITH(hashes, 65, ONCE_ERR_INVALID);
    REFUSED_WITH(bits, UINT64_C(1) << 41, ONCE_ERR_TOO_LARGE);
#undef REFUSED_WITH
    once_sliced_config bad = c;
    bad.on_failure = ONCE_FAILURE_THRESHOLD;
    bad.threshold = 5; /* more than k */
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
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
    bad.window_ms = 1000;
    bad.primitive = ONCE_TAS; /* timers: a duplicate must not refresh them */
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.equal_timers = 3; /* without a window */
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad.window_ms = 1000;
    bad.equal_timers = 5; /* more than k */
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.window_ms = 1000;
    bad.window_events = 100; /* a time and a count window at once */
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad.window_ms = 0;
    bad.window_events = 0;
    bad.refresh = true; /* without a window */
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad.refresh = false;
    bad.window_events = 100;
    bad.primitive = ONCE_TAS; /* count windows are timers too */
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad.primitive = ONCE_FTTS;
    bad.window_events = ONCE_MAX_TIME_MS / 2;
    CHECK_STATUS(once_sliced_create(&f, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.growth = ONCE_GROWTH_DENSITY; /* no error nor capacity to grow at */
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
    CHECK_STATUS(once_thread_sites_create(0, 4, threaded), ONCE_ERR_INVALID);
    CHECK_STATUS(once_thread_sites_create(2, 4, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_thread_sites_create(2, 0, threaded), ONCE_ERR_INVALID);
}

static void slicings_have_names(void)
{
    CHECK(strcmp(once_slicing_name(ONCE_SLICING_HORIZONTAL), "horizontal") == 0);
    CHECK(strcmp(once_slicing_name(ONCE_SLICING_VERTICAL), "vertical") == 0);
    CHECK(strcmp(once_slicing_name(ONCE_SLICING_DICED_HV), "diced h-v") == 0);
    CHECK(strcmp(once_slicing_name(ONCE_SLICING_DICED_VH), "diced v-h") == 0);
    CHECK(strcmp(once_slicing_name(ONCE_SLICING_SPLIT), "split") == 0);
    CHECK(strcmp(once_slicing_name((once_slicing)99), "unknown") == 0);
}

/* ------------------------------------------------------------- racing producers */

/* A site shared by producers that each hold their own filter: it forwards to a memory
 * site under that site's lock (a site runs one batch at a time, as a server does), and
 * destroys nothing (the test owns the shared sites). */
/* A count window's clock shared by producers in this process, which can be made to
 * fail. */
typedef struct test_clock {
    pthread_mutex_t lock;
    uint64_t count;
    bool down;
} test_clock;

static once_status test_clock_read(void *context, uint64_t *count)
{
    test_clock *c = context;
    pthread_mutex_lock(&c->lock);
    *count = c->count;
    bool down = c->down;
    pthread_mutex_unlock(&c->lock);
    return down ? ONCE_ERR_UNAVAILABLE : ONCE_OK;
}

static once_status test_clock_reserve(void *context, uint64_t n, uint64_t *first)
{
    test_clock *c = context;
    pthread_mutex_lock(&c->lock);
    *first = c->count;
    bool down = c->down;
    if (!down)
        c->count += n;
    pthread_mutex_unlock(&c->lock);
    return down ? ONCE_ERR_UNAVAILABLE : ONCE_OK;
}

typedef struct racer {
    racing_lane lane; /* first: what racing_run reads */
    shared_site *sites;
    once_sliced_config config;
    uint64_t keys, batch, time_step;
} racer;

static void *race(void *argument)
{
    racer *r = argument;
    once_site proxies[8];
    for (uint32_t i = 0; i < r->config.slices; i++)
        proxies[i] = (once_site){.context = &r->sites[i], .run = shared_run};
    once_sliced *f = NULL;
    r->lane.status = once_sliced_create(&f, &r->config, proxies);
    if (r->lane.status != ONCE_OK)
        return NULL;
    testing_key storage[64];
    once_key keys[64];
    uint8_t seen[64];
    for (uint64_t i = 0; i < r->keys && r->lane.status == ONCE_OK;) {
        size_t n = 0;
        for (; n < r->batch && i < r->keys; n++, i++) {
            storage[n] = testing_key_make(7, i);
            keys[n] = (once_key){&storage[n], sizeof storage[n], 1000 + i * r->time_step};
        }
        if (r->batch == 1) {
            bool dup = false;
            r->lane.status = once_sliced_test_and_add(f, keys[0].data, keys[0].len, keys[0].time_ms,
                                                 &dup);
            seen[0] = dup;
        } else {
            r->lane.status = once_sliced_test_and_add_batch(f, keys, n, seen);
        }
        for (size_t j = 0; j < n; j++)
            r->lane.delivered[i - n + j] += seen[j] == 0;
    }
    if (r->lane.status == ONCE_OK)
        r->lane.status = once_sliced_flush(f);
    once_sliced_free(f);
    return NULL;
}

/* Four producers decide the same stream at once over four shared vertical slices:
 * with claims each key is delivered once between them (a false positive aside, which
 * delivers it never), whichever producer it falls to. */
static void racing_producers_deliver_once_with_claims(void)
{
    enum { PRODUCERS = 4, SLICES = 4, KEYS = 3000 };
    static const struct {
        uint64_t batch, window_ms, window_events;
    } modes[] = {{1, 0, 0},       {64, 0, 0},     {64, 3600000, 0},
                 {1, 3600000, 0}, {64, 0, 10000}, {1, 0, 10000}};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        test_clock clock = {.count = 0};
        pthread_mutex_init(&clock.lock, NULL);
        once_count_clock shared = {&clock, test_clock_read, test_clock_reserve};
        once_sliced_config c = {.slicing = ONCE_SLICING_VERTICAL, .slices = SLICES,
                                .capacity = KEYS, .error = 0.001, .seed = 5,
                                .seed_is_set = true, .claims = true,
                                .window_ms = modes[m].window_ms,
                                .window_events = modes[m].window_events,
                                .count_clock = modes[m].window_events ? &shared : NULL};
        uint64_t bits = 0, slice_bits = 0;
        uint32_t hashes = 0;
        CHECK_OK(once_sliced_geometry(&c, &bits, &hashes, &slice_bits));
        shared_site sites[SLICES];
        for (uint32_t i = 0; i < SLICES; i++) {
            once_memory_site_config mc = {.bits = slice_bits,
                                          .window_ms = c.window_events ? c.window_events + 1
                                                                       : c.window_ms};
            CHECK_OK(once_memory_site_create(&mc, &sites[i].inner));
            pthread_mutex_init(&sites[i].lock, NULL);
        }
        racer racers[PRODUCERS];
        for (int p = 0; p < PRODUCERS; p++)
            racers[p] = (racer){{NULL, ONCE_OK}, sites, c, KEYS, modes[m].batch, 1};
        /* At most the filter's false positives never delivered: about 0.001 KEYS / 2. */
        uint64_t never = racing_expect(racers, sizeof racers[0], PRODUCERS, KEYS, race, 10, m);
        if (c.window_events != 0) /* every delivery took one stamp of the shared count */
            CHECK(clock.count == KEYS - never);
        pthread_mutex_destroy(&clock.lock);
        for (uint32_t i = 0; i < SLICES; i++) {
            sites[i].inner.destroy(sites[i].inner.context);
            pthread_mutex_destroy(&sites[i].lock);
        }
    }
}

/* Claims over a count window (once_count_clock): batches test at the count read before
 * them and stamp their distinct events after, so a key is never forgotten while fewer
 * than N others were delivered after it, and is forgotten once N plus a batch's
 * (at most N/16) were.  One-key calls answer alike. */
static void claimed_count_windows_keep_the_last_n(void)
{
    enum { EVENTS = 40000, WINDOW = 2000 };
    static uint64_t position[EVENTS]; /* key index -> place among the delivered + 1 */
    const once_slicing slicings[] = {ONCE_SLICING_HORIZONTAL, ONCE_SLICING_VERTICAL,
                                     ONCE_SLICING_DICED_HV};
    const size_t batches[] = {1, 500}; /* one-key calls; batch calls (rounds of 125) */
    for (size_t sl = 0; sl < 3; sl++)
        for (size_t bi = 0; bi < 2; bi++) {
            once_sliced_config c = config_of(slicings[sl], 4, 24000, 4, ONCE_FTTS,
                                             ONCE_LOOKUP_PARALLEL);
            c.parts = slicings[sl] == ONCE_SLICING_DICED_HV ? 2 : 0;
            c.window_events = WINDOW;
            c.claims = true;
            once_sliced *f = sliced_make(&c);
            REQUIRE(f != NULL);
            memset(position, 0, sizeof position);
            uint64_t delivered = 0, false_negatives = 0, old_repeats = 0, forgotten = 0;
            testing_key storage[500];
            once_key keys[500];
            uint8_t seen[500];
            for (uint64_t i = 0; i < EVENTS; i += batches[bi]) {
                for (size_t j = 0; j < batches[bi]; j++) {
                    storage[j] = window_key(i + j, (i + j) % 3 == 0 ? 6000 : 1500);
                    keys[j] = (once_key){&storage[j], sizeof storage[j], UINT64_MAX};
                }
                if (batches[bi] == 1) {
                    bool dup = false;
                    CHECK_OK(once_sliced_test_and_add(f, keys[0].data, keys[0].len, 0, &dup));
                    seen[0] = dup;
                } else {
                    CHECK_OK(once_sliced_test_and_add_batch(f, keys, batches[bi], seen));
                }
                for (size_t j = 0; j < batches[bi]; j++) {
                    uint64_t id = storage[j].w[0] & 0xffffffffu;
                    REQUIRE(id < EVENTS);
                    bool inside = position[id] != 0 && delivered - (position[id] - 1) <= WINDOW;
                    bool long_gone = position[id] != 0 &&
                                     delivered - (position[id] - 1) > WINDOW + WINDOW / 16;
                    false_negatives += inside && !seen[j];
                    old_repeats += long_gone;
                    forgotten += long_gone && !seen[j];
                    if (!seen[j])
                        position[id] = ++delivered;
                }
            }
            once_sliced_stats st;
            CHECK_OK(once_sliced_get_stats(f, &st));
            if (false_negatives != 0 || forgotten <= old_repeats * 9 / 10)
                fprintf(stderr, "%s, batch %zu: %" PRIu64 " false negatives, %" PRIu64
                                " of %" PRIu64 " old repeats forgotten\n",
                        once_slicing_name(slicings[sl]), batches[bi], false_negatives,
                        forgotten, old_repeats);
            CHECK(false_negatives == 0);
            CHECK(old_repeats > 1000 && forgotten > old_repeats * 9 / 10);
            CHECK(st.inserted == delivered && st.count == delivered);
            CHECK(st.window_events == WINDOW && st.clock_failures == 0);
            CHECK_OK(once_sliced_flush(f));
            once_sliced_free(f);
        }
}

/* A count window's clock that fails decides as sites that cannot be reached would,
 * and a distinct event it could not stamp is set nowhere. */
static void count_clock_failures_follow_the_policy(void)
{
    test_clock clock = {.count = 100};
    pthread_mutex_init(&clock.lock, NULL);
    once_count_clock shared = {&clock, test_clock_read, test_clock_reserve};
    const struct {
        once_failure policy;
        uint32_t threshold;
        uint8_t answer; /* for a fresh key while the clock is down */
    } cases[] = {{ONCE_FAILURE_REPORT, 0, ONCE_SLICED_UNDECIDED},
                 {ONCE_FAILURE_THRESHOLD, 0, 1},
                 {ONCE_FAILURE_THRESHOLD, 4, 0}};
    for (size_t k = 0; k < 3; k++) {
        once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, 4, 1 << 16, 4, ONCE_FTTS,
                                         ONCE_LOOKUP_PARALLEL);
        c.window_events = 1000;
        c.claims = true;
        c.count_clock = &shared;
        c.on_failure = cases[k].policy;
        c.threshold = cases[k].threshold;
        once_sliced *f = sliced_make(&c);
        REQUIRE(f != NULL);
        testing_key keys_made[3] = {testing_key_make(60 + k, 0), testing_key_make(60 + k, 1),
                                    testing_key_make(60 + k, 2)};
        once_key keys[3];
        for (int i = 0; i < 3; i++)
            keys[i] = (once_key){&keys_made[i], sizeof keys_made[i], 0};
        uint8_t seen[3];
        CHECK_OK(once_sliced_test_and_add_batch(f, keys, 1, seen)); /* key 0 stored */
        CHECK(seen[0] == 0);
        clock.down = true;
        once_status st = once_sliced_test_and_add_batch(f, keys + 1, 2, seen);
        CHECK(st == (cases[k].answer == ONCE_SLICED_UNDECIDED ? ONCE_ERR_UNAVAILABLE : ONCE_OK));
        CHECK(seen[0] == cases[k].answer && seen[1] == cases[k].answer);
        bool dup = false;
        st = once_sliced_test_and_add(f, &keys_made[1], sizeof keys_made[1], 0, &dup);
        if (cases[k].answer == ONCE_SLICED_UNDECIDED)
            CHECK(st == ONCE_ERR_UNAVAILABLE);
        else
            CHECK(st == ONCE_OK && dup == cases[k].answer);
        clock.down = false;
        bool present = true;
        CHECK_OK(once_sliced_query(f, &keys_made[1], sizeof keys_made[1], 0, &present));
        CHECK(!present); /* delivered or not, never stamped: set nowhere */
        CHECK_OK(once_sliced_query(f, &keys_made[0], sizeof keys_made[0], 0, &present));
        CHECK(present);
        once_sliced_stats stats;
        CHECK_OK(once_sliced_get_stats(f, &stats));
        CHECK(stats.clock_failures == 2);
        CHECK_OK(once_sliced_flush(f));
        once_sliced_free(f);
    }
    /* A clock given without claims or a count window is refused. */
    once_sliced_config c = config_of(ONCE_SLICING_VERTICAL, 4, 1 << 16, 4, ONCE_FTTS,
                                     ONCE_LOOKUP_PARALLEL);
    c.count_clock = &shared;
    c.window_events = 1000;
    once_sliced *f = NULL;
    CHECK(once_sliced_create(&f, &c, NULL) == ONCE_ERR_INVALID);
    c.claims = true;
    c.window_events = 0;
    CHECK(once_sliced_create(&f, &c, NULL) == ONCE_ERR_INVALID);
    pthread_mutex_destroy(&clock.lock);
}

/* Claims over a time window: an event of a batch that repeats an earlier event of the
 * same batch is judged as the one-key calls in turn would judge it, at its own time:
 * a repeat inside the window is a duplicate, one past it is new (the claim the earlier
 * event took must not make it a duplicate), and another producer's claim still decides
 * both. */
static void claimed_time_windows_judge_a_batchs_repeats_at_their_time(void)
{
    for (int slicing = 0; slicing < 2; slicing++) {
        once_sliced_config c = config_of(slicing ? ONCE_SLICING_HORIZONTAL : ONCE_SLICING_VERTICAL,
                                         3, 3 * (1 << 14), 4, ONCE_FTTS, ONCE_LOOKUP_PARALLEL);
        c.window_ms = 10000;
        c.claims = true;
        once_sliced *f = sliced_make(&c);
        REQUIRE(f != NULL);
        testing_key k = testing_key_make(90, 1), other = testing_key_make(90, 2);
        const uint64_t t0 = 1000000;
        once_key keys[5] = {{&k, sizeof k, t0},           /* new */
                            {&k, sizeof k, t0 + 3000},    /* inside the window: a repeat */
                            {&other, sizeof other, t0 + 3000},
                            {&k, sizeof k, t0 + 30000},   /* past it: new again */
                            {&k, sizeof k, t0 + 31000}};  /* inside the new one */
        uint8_t seen[5];
        CHECK_OK(once_sliced_test_and_add_batch(f, keys, 5, seen));
        CHECK(seen[0] == 0 && seen[1] == 1 && seen[2] == 0 && seen[3] == 0 && seen[4] == 1);
        if (!(seen[3] == 0))
            fprintf(stderr, "slicing %d: answers %u %u %u %u %u\n", slicing, seen[0], seen[1],
                    seen[2], seen[3], seen[4]);
        CHECK_OK(once_sliced_flush(f));
        once_sliced_free(f);
    }
}

static const testing_case cases[] = {
    {"racing_producers_deliver_once_with_claims", racing_producers_deliver_once_with_claims},
    {"claimed_count_windows_keep_the_last_n", claimed_count_windows_keep_the_last_n},
    {"count_clock_failures_follow_the_policy", count_clock_failures_follow_the_policy},
    {"claimed_time_windows_judge_a_batchs_repeats_at_their_time",
     claimed_time_windows_judge_a_batchs_repeats_at_their_time},
    {"vertical_decides_as_the_unsliced_filter", vertical_decides_as_the_unsliced_filter},
    {"vertical_from_capacity_is_the_standard_filter",
     vertical_from_capacity_is_the_standard_filter},
    {"vertical_slices_are_even", vertical_slices_are_even},
    {"horizontal_rate_follows_eq4", horizontal_rate_follows_eq4},
    {"pipelined_sends_no_more_messages", pipelined_sends_no_more_messages},
    {"unreachable_sites_are_reported", unreachable_sites_are_reported},
    {"failed_sites_follow_the_threshold_formulas", failed_sites_follow_the_threshold_formulas},
    {"sites_come_back_old_or_empty", sites_come_back_old_or_empty},
    {"failure_formulas_and_sites_needed", failure_formulas_and_sites_needed},
    {"sites_for_false_negatives", sites_for_false_negatives},
    {"diced_rates_follow_section_3_3", diced_rates_follow_section_3_3},
    {"diced_failures_follow_eq7", diced_failures_follow_eq7},
    {"no_split_of_k_does_better", no_split_of_k_does_better},
    {"slices_hold_exactly_m_bits", slices_hold_exactly_m_bits},
    {"local_filters_answer_own_repeats", local_filters_answer_own_repeats},
    {"local_batches_answer_as_one_key_calls", local_batches_answer_as_one_key_calls},
    {"batch_matches_one_key_calls", batch_matches_one_key_calls},
    {"batch_with_a_site_down", batch_with_a_site_down},
    {"timers_expire_at_the_producer_time", timers_expire_at_the_producer_time},
    {"site_timers_are_packed", site_timers_are_packed},
    {"windows_keep_definition_4", windows_keep_definition_4},
    {"count_windows_keep_the_last_n", count_windows_keep_the_last_n},
    {"refresh_restarts_the_window", refresh_restarts_the_window},
    {"windowed_batch_matches_one_key_calls", windowed_batch_matches_one_key_calls},
    {"clock_is_the_latest_time_offered", clock_is_the_latest_time_offered},
    {"equal_timers_trade_fp_for_fn", equal_timers_trade_fp_for_fn},
    {"slices_grow_alone_during_a_burst", slices_grow_alone_during_a_burst},
    {"bounded_growth_keeps_the_rate", bounded_growth_keeps_the_rate},
    {"memory_cap_bounds_growth", memory_cap_bounds_growth},
    {"invalid_configs_refused", invalid_configs_refused},
    {"slicings_have_names", slicings_have_names},
};

TESTING_MAIN(cases)
