/*
 * test_timer.c - what the timer filter (time windows, paper 000 sections 4 and 5)
 * promises.  Every clock here is virtual: event times are arguments, nothing sleeps.
 *
 *   - a key delivered within the last span (by event time, against the largest time
 *     seen) is always reported seen: random and Zipf streams with duplicates, bursts
 *     at five times the rate, idle gaps longer than the span, late events up to a
 *     quarter span, fixed and dynamic size, both policies;
 *   - a key is new again once its span and one tick have passed, and a late event
 *     already past its span inserts nothing (it is answered as a query at the latest
 *     time would be);
 *   - at the design capacity the false-positive rate is the standard filter's
 *     formula at the number of keys alive;
 *   - the equal-timers heuristic trades false positives for false negatives as k'
 *     grows (paper 000, Fig. 9), with none at k' <= 1;
 *   - through thousands of wrap periods of the timers, with sparse writes and long
 *     read-only stretches, no expired key ever looks alive;
 *   - the dynamic filter grows under a burst, keeps its rate near the target while
 *     it does, shrinks back once the burst has expired, and refuses (ONCE_ERR_FULL,
 *     unchanged) what its memory cap cannot hold;
 *   - a fixed filter is overfull (once_overfull) exactly while more keys than its
 *     capacity are alive; a dynamic one never is;
 *   - saved mid-stream and loaded, it continues exactly as the original; every
 *     truncation and every hostile parameter is refused;
 *   - a pause's sweep is carried over the writes after it and changes no answer.
 */
#include "once.h"
#include "once_math.h"
#include "testing.h"
#include "time_window.h"

#include <stdbool.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* ------------------------------------------------------------------ helpers */

typedef struct timer_opts {
    uint32_t width;
    uint64_t span;
    uint64_t capacity;
    double error;
    bool dynamic;
    once_policy policy;
    uint32_t equal;
    uint64_t max_bytes;
    uint64_t bits;
    uint32_t hashes;
    uint64_t seed;
} timer_opts;

static once_status try_make(const timer_opts *o, once_filter **f)
{
    once_config c = testing_config(ONCE_TIMER, o->seed);
    c.timer_bits = o->width;
    c.span_ms = o->span;
    if (o->capacity)
        c.capacity = o->capacity;
    if (o->error > 0)
        c.error = o->error;
    c.dynamic = o->dynamic;
    c.policy = o->policy;
    c.equal_timers = o->equal;
    c.max_bytes = o->max_bytes;
    c.bits = o->bits;
    c.hashes = o->hashes;
    *f = NULL;
    return once_create(f, &c);
}

static once_filter *make_timer(const timer_opts *o)
{
    once_filter *f = NULL;
    once_status st = try_make(o, &f);
    if (st != ONCE_OK)
        fprintf(stderr, "create timer W=%u span=%" PRIu64 ": %s\n", o->width, o->span,
                once_strerror(st));
    return f;
}

static uint64_t rng(uint64_t *state)
{
    *state = testing_mix(*state);
    return *state;
}

static double uniform01(uint64_t *state)
{
    return (double)(rng(state) >> 11) * 0x1.0p-53;
}

/* A key whose latest expiry (t_u + T, ms) is x is certainly expired at reference time
 * r once r reaches x rounded up to a tick; before x it is certainly alive. */
static bool surely_dead(uint64_t x, uint64_t r, uint64_t tick)
{
    return x == 0 || r >= (x + tick - 1) / tick * tick;
}


/* Rate at which `probes` fresh absent keys (domain 3) test present at time t. */
static uint64_t probe_absent(const once_filter *f, uint64_t *next, uint64_t probes, uint64_t t)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < probes; i++)
        hits += testing_present(f, 3, (*next)++, t);
    return hits;
}

/* ------------------------------------------------------ no false negatives */

typedef struct stream_opts {
    const char *label;
    timer_opts filter;
    uint64_t universe;
    double zipf_s;     /* 0: uniform over the universe */
    double rate;       /* events per ms at the base rate */
    uint64_t events;
    uint64_t late_max; /* a third of the events are late by up to this many ms */
    bool bursts;       /* every fourth block of events comes at five times the rate */
    bool gaps;         /* every seventh block starts after an idle gap of 1.1-3.1 spans */
    uint64_t seed;
} stream_opts;

/*
 * Test-and-add `events` events and check the window promise at every one against a
 * model that knows, per key, the latest expiry t_u + T among its insertions (the
 * filter keeps the later expiry of a timer): a key whose expiry is after the reference
 * time R = max(latest, t) must be reported seen, also for a late event already past
 * its own span (which is answered as a query at R would be, and inserts nothing).
 * Keys certainly expired that are reported seen are false
 * positives; their rate is returned through *fp_rate.
 */
static uint64_t run_stream(const stream_opts *o, double *fp_rate, uint32_t *max_filters)
{
    once_filter *f = make_timer(&o->filter);
    if (f == NULL) {
        CHECK(0);
        return 0;
    }
    uint64_t span = o->filter.span, tick = testing_stats(f).slack;
    uint64_t *expiry = calloc(o->universe, sizeof(uint64_t));
    testing_zipf z = {NULL, 0};
    if (o->zipf_s > 0)
        z = testing_zipf_make(o->universe, o->zipf_s);
    uint64_t state = o->seed, latest = 0, misses = 0, arrived_late = 0, late_past_span = 0;
    uint64_t dead = 0, false_pos = 0, delivered = 0;
    uint32_t filters_max = 1;
    double clock = (double)span, rate = o->rate;
    const uint64_t block = 5000;
    for (uint64_t e = 0; e < o->events; e++) {
        if (e % block == 0) {
            uint64_t b = e / block;
            rate = o->rate * (o->bursts && b % 4 == 3 ? 5.0 : 1.0);
            if (o->gaps && b % 7 == 6)
                clock += (double)span * (1.1 + 2.0 * uniform01(&state));
        }
        clock += -log(1.0 - uniform01(&state)) / rate;
        uint64_t t = (uint64_t)clock;
        if (o->late_max && rng(&state) % 3 == 0) {
            /* Mostly within the tolerance; one in a hundred up to two spans late. */
            uint64_t most = rng(&state) % 100 == 0 ? 2 * span : o->late_max;
            uint64_t late = rng(&state) % (most + 1);
            t = t > late ? t - late : 0;
        }
        uint64_t id = o->zipf_s > 0 ? testing_zipf_draw(&z, &state) : rng(&state) % o->universe;
        bool seen = testing_seen(f, o->seed, id, t);
        /* A late event happens at the clock (once.h, "Event time"). */
        uint64_t r = t > latest ? t : latest;
        arrived_late += t < latest;
        late_past_span += t < latest && latest - t >= span;
        if (expiry[id] > r && !seen)
            misses++;
        if (surely_dead(expiry[id], r, tick)) {
            dead++;
            false_pos += seen;
        }
        if (!seen || o->filter.policy == ONCE_POLICY_REFRESH) {
            if (r + span > expiry[id])
                expiry[id] = r + span;
        }
        delivered += !seen;
        latest = r;
        if (o->filter.dynamic && e % 2000 == 0) {
            uint32_t now = testing_stats(f).filters;
            filters_max = now > filters_max ? now : filters_max;
        }
    }
    once_stats s = testing_stats(f);
    double rate_fp = dead ? (double)false_pos / (double)dead : 0.0;
    fprintf(stderr,
            "%-34s %7" PRIu64 " events, %7" PRIu64 " delivered, %" PRIu64
            " misses, late %" PRIu64 " (%" PRIu64 " by a span or more), fp %.5f, filters now %u,"
            " at most %u\n",
            o->label, o->events, delivered, misses, arrived_late, late_past_span, rate_fp, s.filters,
            filters_max);
    CHECK(misses == 0);
    CHECK(delivered > 0 && delivered < o->events);
    CHECK(late_past_span > 0 || !o->late_max);
    *fp_rate = rate_fp;
    if (max_filters)
        *max_filters = filters_max;
    free(expiry);
    free(z.cdf);
    once_free(f);
    return o->events;
}

static stream_opts base_stream(const char *label, uint32_t width, once_policy policy)
{
    stream_opts o;
    memset(&o, 0, sizeof o);
    o.label = label;
    o.filter.width = width;
    o.filter.span = 5000;
    o.filter.capacity = 20000; /* at most the universe is alive: the rate stays at target */
    o.filter.error = 0.01;
    o.filter.policy = policy;
    o.filter.seed = 17;
    o.universe = 20000;
    o.rate = 2.0; /* 10^4 events per span, 5 * 10^4 in a burst */
    o.events = 400000;
    o.late_max = o.filter.span / 4;
    o.bursts = true;
    o.gaps = true;
    o.seed = 101;
    return o;
}

static void no_false_negatives_uniform(void)
{
    uint64_t total = 0;
    double fp;
    stream_opts a = base_stream("uniform W=16 first", 16, ONCE_POLICY_FIRST);
    total += run_stream(&a, &fp, NULL);
    CHECK(fp <= 0.02);
    stream_opts b = base_stream("uniform W=16 refresh k'=1", 16, ONCE_POLICY_REFRESH);
    b.filter.equal = 1; /* k' <= 1 is the plain filter */
    b.seed = 102;
    total += run_stream(&b, &fp, NULL);
    CHECK(fp <= 0.02);
    fprintf(stderr, "checked %" PRIu64 " events\n", total);
}

static void no_false_negatives_zipf(void)
{
    uint64_t total = 0;
    double fp;
    /* W = 8: ticks of 79 ms over a 5 s span, a wrap every 20 s. */
    stream_opts a = base_stream("zipf W=8 first", 8, ONCE_POLICY_FIRST);
    a.universe = 200000;
    a.zipf_s = 1.05;
    a.filter.capacity = 60000;
    a.seed = 103;
    total += run_stream(&a, &fp, NULL);
    CHECK(fp <= 0.02);
    stream_opts b = base_stream("zipf W=32 refresh", 32, ONCE_POLICY_REFRESH);
    b.universe = 200000;
    b.zipf_s = 1.05;
    b.filter.capacity = 60000;
    b.seed = 104;
    total += run_stream(&b, &fp, NULL);
    CHECK(fp <= 0.02);
    fprintf(stderr, "checked %" PRIu64 " events\n", total);
}

static void no_false_negatives_dynamic(void)
{
    uint64_t total = 0;
    double fp;
    uint32_t grew = 0;
    /* Capacity a fifth of the keys alive in a burst: the filter must grow. */
    stream_opts a = base_stream("dynamic uniform W=16 first", 16, ONCE_POLICY_FIRST);
    a.filter.dynamic = true;
    a.filter.capacity = 8000;
    a.seed = 105;
    total += run_stream(&a, &fp, &grew);
    CHECK(grew >= 3);
    CHECK(fp <= 0.05);
    stream_opts b = base_stream("dynamic testing_zipf W=16 refresh", 16, ONCE_POLICY_REFRESH);
    b.filter.dynamic = true;
    b.filter.capacity = 4000;
    b.universe = 200000;
    b.zipf_s = 1.05;
    b.seed = 106;
    total += run_stream(&b, &fp, &grew);
    CHECK(grew >= 3);
    CHECK(fp <= 0.05);
    fprintf(stderr, "checked %" PRIu64 " events\n", total);
}

/* Batches give the answers of the one-key calls, event times included. */
static void batch_matches_single(void)
{
    enum { N = 30000 };
    static testing_key raw[N];
    static once_key keys[N];
    static uint8_t out[N];
    uint64_t state = 7;
    for (int i = 0; i < N; i++) {
        raw[i] = testing_key_make(8, rng(&state) % 5000);
        uint64_t t = (uint64_t)i * 3 + 1000;
        if (i % 5 == 0) {
            uint64_t late = rng(&state) % 1500; /* some late, some already expired */
            t = t > late ? t - late : 0;
        }
        keys[i] = (once_key){&raw[i], sizeof raw[i], t};
    }
    for (int dynamic = 0; dynamic < 2; dynamic++) {
        timer_opts o = {.width = 16, .span = 1000, .capacity = 2000, .error = 0.01,
                        .dynamic = dynamic, .seed = 4};
        once_filter *a = make_timer(&o), *b = make_timer(&o);
        REQUIRE(a && b);
        CHECK_OK(once_test_and_add_batch(a, keys, N, out));
        uint64_t differ = 0;
        for (int i = 0; i < N; i++) {
            bool seen;
            CHECK_OK(once_test_and_add(b, keys[i].data, keys[i].len, keys[i].time_ms, &seen));
            differ += out[i] != seen;
        }
        CHECK(differ == 0);
        CHECK(once_items(a) == once_items(b));
        CHECK_OK(once_query_batch(a, keys, N, out));
        for (int i = 0; i < N; i++) {
            bool p;
            CHECK_OK(once_query(b, keys[i].data, keys[i].len, keys[i].time_ms, &p));
            differ += out[i] != p;
        }
        CHECK(differ == 0);
        CHECK(testing_same_save(a, b));
        once_free(a);
        once_free(b);
    }
}

/* ------------------------------------------------------------------ expiry */

static void keys_expire_after_span_and_one_tick(void)
{
    const uint32_t widths[] = {8, 16, 32};
    const uint64_t spans[] = {1, 7, 1000, 12345, 3600000};
    for (int w = 0; w < 3; w++) {
        for (int s = 0; s < 5; s++) {
            uint64_t span = spans[s];
            timer_opts o = {.width = widths[w], .span = span, .capacity = 10000, .error = 1e-6,
                            .seed = 5};
            once_filter *f = make_timer(&o);
            REQUIRE(f != NULL);
            once_stats st = testing_stats(f);
            uint64_t tick = st.slack;
            uint64_t per = UINT64_C(1) << (widths[w] - 2);
            CHECK(tick == (span + per - 1) / per);
            CHECK(st.window == span && st.span_ms == span);
            uint64_t t = 5 * span + 3, state = 9, wrong = 0;
            for (uint64_t i = 0; i < 300; i++) {
                t += rng(&state) % (3 * span + 2 * tick + 1); /* sometimes past a span */
                wrong += testing_seen(f, 4, i, t);                    /* new */
                wrong += !testing_present(f, 4, i, t + span - 1);     /* inside the span */
                wrong += !testing_seen(f, 4, i, t + span - 1 - (span - 1) / 2); /* a duplicate */
                /* Gone within one tick past the span: at t + T + tick - 1 already. */
                wrong += testing_present(f, 4, i, t + span + tick - 1);
                wrong += testing_present(f, 4, i, t + span + tick + 1);
                /* New again once past, and inserted again. */
                uint64_t again = t + span + tick + 1 + rng(&state) % (2 * tick + 1);
                wrong += testing_seen(f, 4, i, again);
                wrong += !testing_present(f, 4, i, again);
                t = again;
            }
            if (wrong)
                fprintf(stderr, "W=%u span=%" PRIu64 ": %" PRIu64 " wrong answers\n",
                        widths[w], span, wrong);
            CHECK(wrong == 0);
            once_free(f);
        }
    }
}

/*
 * Event time (once.h): a late event is tested against what the window holds at the
 * clock and, if delivered, remembered as of the clock, so it is kept for T after its
 * delivery; an event more than the bound ahead of the clock is refused and changes
 * nothing; times past ONCE_MAX_TIME_MS are refused for writes and reads alike.
 */
static void late_events_happen_at_the_clock(void)
{
    const uint32_t widths[] = {8, 16, 32};
    for (int w = 0; w < 3; w++) {
        uint64_t span = 10000;
        timer_opts o = {.width = widths[w], .span = span, .capacity = 1000, .error = 1e-6,
                        .seed = 6};
        once_filter *f = make_timer(&o);
        REQUIRE(f != NULL);
        uint64_t tick = testing_stats(f).slack;
        uint64_t t0 = 1000000, clock = 1;
        bool started = true;
        CHECK_OK(once_clock(f, &clock, &started));
        CHECK(clock == 0 && !started);
        CHECK(!testing_seen(f, 5, 0, t0)); /* the first event sets the clock, wherever it is */
        CHECK_OK(once_clock(f, &clock, &started));
        CHECK(clock == t0 && started);
        /* Late by a span or more: delivered at the clock, kept until t0 + T. */
        CHECK(!testing_seen(f, 5, 1, t0 - span - 12345));
        CHECK(testing_present(f, 5, 1, t0));
        CHECK(testing_seen(f, 5, 1, t0 - span)); /* a duplicate, whatever its own time */
        CHECK(testing_present(f, 5, 1, t0 + span - 1));
        CHECK(once_items(f) == 2);
        /* Late but inside: also kept as of the clock, not as of its own time. */
        CHECK(!testing_seen(f, 5, 2, t0 - span / 2));
        CHECK(testing_present(f, 5, 2, t0 + span - 1));
        CHECK(!testing_present(f, 5, 2, t0 + span + tick - 1));
        /* A query at an earlier time answers at the clock. */
        CHECK(testing_present(f, 5, 2, t0 - span / 2));
        CHECK(testing_present(f, 5, 2, 0));
        /* The boundary: the window at t is (t - T, t].  A repeat exactly T after its
         * delivery is new again (with 1 ms ticks the slack is nothing). */
        if (tick == 1) {
            CHECK(!testing_seen(f, 5, 3, t0 + 100));
            CHECK(testing_seen(f, 5, 3, t0 + 100 + span - 1));
            CHECK(!testing_seen(f, 5, 3, t0 + 100 + span));
        }
        /* Jumps: a day ahead of the clock is taken, a millisecond more is refused and
         * changes nothing. */
        CHECK_OK(once_clock(f, &clock, &started));
        uint64_t day = ONCE_DEFAULT_MAX_TIME_JUMP_MS;
        void *before = NULL, *after = NULL;
        size_t before_len = 0, after_len = 0;
        CHECK_OK(once_save_to_buffer(f, &before, &before_len));
        testing_key k = testing_key_make(5, 4);
        bool seen, p = true;
        CHECK_STATUS(once_test_and_add(f, &k, sizeof k, clock + day + 1, &seen), ONCE_ERR_TIME);
        CHECK_STATUS(once_add(f, &k, sizeof k, clock + day + 1), ONCE_ERR_TIME);
        CHECK_STATUS(once_query(f, &k, sizeof k, clock + day + 1, &p), ONCE_ERR_TIME);
        CHECK_OK(once_save_to_buffer(f, &after, &after_len));
        CHECK(before_len == after_len && memcmp(before, after, after_len) == 0);
        once_free_buffer(before);
        once_free_buffer(after);
        CHECK_OK(once_test_and_add(f, &k, sizeof k, clock + day, &seen));
        CHECK(!seen);
        /* Without a bound, any time up to ONCE_MAX_TIME_MS. */
        CHECK(once_max_time_jump(f) == day);
        CHECK_OK(once_set_max_time_jump(f, 0));
        CHECK(once_max_time_jump(f) == 0);
        CHECK_OK(once_add(f, &k, sizeof k, ONCE_MAX_TIME_MS));
        CHECK_OK(once_query(f, &k, sizeof k, ONCE_MAX_TIME_MS, &p));
        CHECK(p);
        CHECK_STATUS(once_test_and_add(f, &k, sizeof k, ONCE_MAX_TIME_MS + 1, &seen),
                     ONCE_ERR_TIME);
        CHECK_STATUS(once_add(f, &k, sizeof k, UINT64_MAX), ONCE_ERR_TIME);
        CHECK_STATUS(once_query(f, &k, sizeof k, UINT64_MAX, &p), ONCE_ERR_TIME);
        once_free(f);
    }
}

/* ------------------------------------------------------------ false positives */

/*
 * Keys arrive at the design rate (capacity per span) for two spans; at the end the
 * keys alive are exactly those whose rounded expiry is after the latest time, and the
 * alive timers are the standard filter of those keys, so absent keys test present at
 * once_fpr_standard(m, k, n alive).
 */
static void false_positive_rate_matches_formula(void)
{
    const uint32_t widths[] = {8, 16};
    const double errors[] = {0.01, 0.001};
    for (int w = 0; w < 2; w++) {
        uint64_t capacity = 20000, span = 60000;
        timer_opts o = {.width = widths[w], .span = span, .capacity = capacity,
                        .error = errors[w], .seed = 31};
        once_filter *f = make_timer(&o);
        REQUIRE(f != NULL);
        once_stats s = testing_stats(f);
        uint64_t tick = s.slack, keys = 2 * capacity, last = 0;
        uint64_t *when = malloc(keys * sizeof(uint64_t));
        for (uint64_t i = 0; i < keys; i++) {
            when[i] = i * span / capacity;
            testing_key k = testing_key_make(6, i);
            CHECK_OK(once_add(f, &k, sizeof k, when[i]));
            last = when[i];
        }
        uint64_t alive = 0;
        for (uint64_t i = 0; i < keys; i++)
            alive += !surely_dead(when[i] + span, last, tick);
        s = testing_stats(f);
        double p = once_fpr_standard(s.bits, s.hashes, alive);
        uint64_t next = 0, probes = (uint64_t)(1000.0 / p);
        uint64_t hits = probe_absent(f, &next, probes, last);
        double measured = (double)hits / (double)probes;
        fprintf(stderr,
                "W=%u m=%" PRIu64 " k=%u: %" PRIu64 " keys alive (capacity %" PRIu64
                "), measured %.6f, formula %.6f, estimate %.6f, design %.6f\n",
                widths[w], s.bits, s.hashes, alive, capacity, measured, p, s.fpr_estimate,
                s.design_fpr);
        CHECK(alive >= capacity - 2 && alive <= capacity + 2 + tick * capacity / span);
        CHECK(testing_within_sigmas(hits, probes, p, 4.0));
        CHECK(s.design_fpr <= errors[w]);
        CHECK(fabs(s.fpr_estimate - p) <= 0.1 * p);
        /* All keys alive test present; all expired ones are gone after a span more. */
        uint64_t missing = 0;
        for (uint64_t i = 0; i < keys; i++)
            if (when[i] + span > last)
                missing += !testing_present(f, 6, i, last);
        CHECK(missing == 0);
        CHECK(probe_absent(f, &next, 1000, last + span + tick) == 0);
        free(when);
        once_free(f);
    }
}

/* ------------------------------------------------------------- equal timers */

/*
 * Paper 000, Fig. 9: with k' of the k timers required equal, false positives fall and
 * false negatives rise as k' grows.  Keys are inserted one per 4 ms (distinct ticks),
 * twice the capacity inside one span, so many keys share timers and later keys raise
 * the timers of earlier ones.  Insertion (add) does not depend on k', so every filter
 * holds the same timers and the trade-off is exactly monotone.
 */
static void equal_timers_trade_off(void)
{
    uint64_t span = 16384, capacity = 2000, keys = 4000;
    timer_opts o = {.width = 16, .span = span, .capacity = capacity, .error = 0.01, .seed = 41};
    once_filter *plain = make_timer(&o);
    REQUIRE(plain != NULL);
    uint32_t k = testing_stats(plain).hashes;
    once_free(plain);
    REQUIRE(k >= 3);
    uint64_t probes = 200000, last = (keys - 1) * 4;
    double previous_fp = 2.0, previous_fn = -1.0, fp_at[65], fn_at[65];
    for (uint32_t kp = 0; kp <= k; kp++) {
        o.equal = kp;
        once_filter *f = make_timer(&o);
        REQUIRE(f != NULL);
        for (uint64_t i = 0; i < keys; i++) {
            testing_key key = testing_key_make(7, i);
            CHECK_OK(once_add(f, &key, sizeof key, i * 4));
        }
        uint64_t fn = 0, next = 0;
        for (uint64_t i = 0; i < keys; i++)
            fn += !testing_present(f, 7, i, last);
        uint64_t fp = probe_absent(f, &next, probes, last);
        fp_at[kp] = (double)fp / (double)probes;
        fn_at[kp] = (double)fn / (double)keys;
        fprintf(stderr, "k'=%2u of k=%u: false positives %.5f, false negatives %.5f\n", kp, k,
                fp_at[kp], fn_at[kp]);
        CHECK(fp_at[kp] <= previous_fp);
        CHECK(fn_at[kp] >= previous_fn);
        previous_fp = fp_at[kp];
        previous_fn = fn_at[kp];
        if (kp <= 1)
            CHECK(fn == 0);
        once_free(f);
    }
    /* The shape: the heuristic pays for itself at the top. */
    CHECK(fp_at[k] < fp_at[1] / 10);
    CHECK(fn_at[k] > 0.01);
    CHECK(fp_at[1] > 0.01); /* the plain filter is overloaded here */

    /* Through test-and-add (first policy) the filters diverge (a key reported new is
     * inserted again), so the shape holds within binomial slack: 4 sigmas. */
    double fp_prev = 1.0, fn_prev = 0.0;
    uint64_t fp_trials = probes, fn_trials_prev = 1;
    for (uint32_t kp = 1; kp <= k; kp++) {
        o.equal = kp;
        once_filter *f = make_timer(&o);
        REQUIRE(f != NULL);
        uint64_t state = 3, misses = 0, alive_events = 0;
        uint64_t *expiry = calloc(keys, sizeof(uint64_t));
        for (uint64_t i = 0; i < 3 * keys; i++) {
            uint64_t id = rng(&state) % keys, t = i * 2;
            bool seen = testing_seen(f, 8, id, t);
            alive_events += expiry[id] > t;
            misses += expiry[id] > t && !seen;
            if (!seen)
                expiry[id] = t + span;
        }
        uint64_t next = 0, hits = probe_absent(f, &next, fp_trials, 3 * keys * 2);
        double fp = (double)hits / (double)fp_trials;
        double fn = alive_events ? (double)misses / (double)alive_events : 0.0;
        double sd_fp = sqrt(fp_prev * (1 - fp_prev) / (double)fp_trials);
        double sd_fn = sqrt(fn_prev * (1 - fn_prev) / (double)fn_trials_prev) +
                       sqrt(fn * (1 - fn) / (double)(alive_events ? alive_events : 1));
        fprintf(stderr, "test-and-add k'=%u: false negatives %.5f, false positives %.5f\n", kp,
                fn, fp);
        if (kp == 1)
            CHECK(misses == 0);
        CHECK(fp <= fp_prev + 4 * sd_fp + 4 * sqrt(fp * (1 - fp) / (double)fp_trials));
        CHECK(fn >= fn_prev - 4 * sd_fn);
        fp_prev = fp;
        fn_prev = fn;
        fn_trials_prev = alive_events ? alive_events : 1;
        free(expiry);
        once_free(f);
    }
}

/* ---------------------------------------------------------------- wrapping */

/*
 * Timers wrap every (2^W - 1) ticks.  A small pool of keys in a large filter (no
 * false positive to speak of) is written sparsely - small steps, steps near a span,
 * idle gaps of several spans and of many wrap periods - with late events, and after
 * every write keys are queried at the present and far into the future (read-only
 * stretches).  A key is expected present exactly while its expiry is ahead, and absent
 * once it is a tick past: an expired timer mistaken for a live one after a wrap would
 * show as a present answer.
 */
static void wrap_safety(void)
{
    const uint32_t widths[] = {8, 16};
    const uint64_t spans[] = {200, 3000};
    const uint64_t steps[] = {60000, 20000};
    for (int w = 0; w < 2; w++) {
        uint64_t span = spans[w];
        timer_opts o = {.width = widths[w], .span = span, .capacity = 2000, .error = 1e-5,
                        .seed = 51};
        once_filter *f = make_timer(&o);
        REQUIRE(f != NULL);
        uint64_t tick = testing_stats(f).slack;
        uint64_t period = tick * ((UINT64_C(1) << widths[w]) - 1);
        enum { POOL = 64 };
        uint64_t expiry[POOL] = {0};
        uint64_t state = 77, t = 0, latest = 0, misses = 0, stale = 0, queries = 0;
        for (uint64_t step = 0; step < steps[w]; step++) {
            double u = uniform01(&state);
            if (u < 0.6)
                t += rng(&state) % (span / 8 + 1);
            else if (u < 0.85)
                t += span / 2 + rng(&state) % span;
            else if (u < 0.95)
                t += span + rng(&state) % (3 * span);
            else
                t += rng(&state) % (20 * period);
            uint64_t te = t;
            if (rng(&state) % 4 == 0) {
                uint64_t late = rng(&state) % (span / 4 + 1);
                te = te > late ? te - late : 0;
            }
            uint64_t id = rng(&state) % POOL;
            bool seen = testing_seen(f, 9, id, te);
            uint64_t r = te > latest ? te : latest; /* a late event happens at the clock */
            misses += expiry[id] > r && !seen;
            stale += surely_dead(expiry[id], r, tick) && seen;
            if (!seen && r + span > expiry[id])
                expiry[id] = r + span;
            latest = r;
            for (int q = 0; q < 4; q++) {
                uint64_t qid = rng(&state) % POOL, qt;
                uint64_t pick = rng(&state) % 4;
                if (pick == 0)
                    qt = latest;
                else if (pick == 1)
                    qt = latest + rng(&state) % (2 * span);
                else if (pick == 2)
                    qt = latest + rng(&state) % (8 * period);
                else
                    qt = latest > span ? latest - rng(&state) % span : 0;
                uint64_t qr = qt > latest ? qt : latest;
                bool p = testing_present(f, 9, qid, qt);
                misses += expiry[qid] > qr && !p;
                stale += surely_dead(expiry[qid], qr, tick) && p;
                queries++;
            }
        }
        fprintf(stderr,
                "W=%u span %" PRIu64 " ms, tick %" PRIu64 " ms: %.0f wrap periods, %" PRIu64
                " writes, %" PRIu64 " queries, %" PRIu64 " misses, %" PRIu64 " stale\n",
                widths[w], span, tick, (double)t / (double)period, steps[w], queries, misses,
                stale);
        CHECK((double)t / (double)period > 1000.0);
        CHECK(misses == 0);
        CHECK(stale == 0);
        once_free(f);
    }
}

/* ------------------------------------------------------------------ dynamic */

typedef struct dyn_stream {
    once_filter *f;
    uint64_t *expiry; /* by key id */
    uint64_t ids, next_id, latest, misses, state, span;
} dyn_stream;

/* `count` events at `per_span` events per span from time *t on: 70% new keys, 30%
 * repeats of one of the last 4096 keys.  Checks the window promise at every event. */
static once_status dyn_run(dyn_stream *d, uint64_t *t, uint64_t count, uint64_t per_span,
                           uint64_t *failed_at)
{
    for (uint64_t e = 0; e < count; e++) {
        *t += d->span / per_span;
        uint64_t id;
        bool fresh = !(d->next_id > 0 && rng(&d->state) % 10 < 3);
        if (!fresh) {
            uint64_t back = rng(&d->state) % (d->next_id < 4096 ? d->next_id : 4096);
            id = d->next_id - 1 - back;
        } else {
            id = d->next_id++;
        }
        if (id >= d->ids)
            return ONCE_ERR_INVALID; /* the test's own table is too small */
        testing_key k = testing_key_make(10, id);
        bool seen = false;
        once_status st = once_test_and_add(d->f, &k, sizeof k, *t, &seen);
        if (st != ONCE_OK) {
            if (failed_at)
                *failed_at = e;
            if (fresh)
                d->next_id--;
            return st;
        }
        d->misses += d->expiry[id] > *t && !seen;
        if (!seen)
            d->expiry[id] = *t + d->span;
        d->latest = *t;
    }
    return ONCE_OK;
}

/* The rate of absent keys at time t, over `probes` of them, with its bound: the target
 * plus four standard deviations of a binomial at the target. */
static bool rate_within(const once_filter *f, uint64_t *next_probe, uint64_t t, double error,
                        const char *what)
{
    uint64_t probes = 40000, hits = probe_absent(f, next_probe, probes, t);
    double measured = (double)hits / (double)probes;
    double bound = error + 4 * sqrt(error * (1 - error) / (double)probes);
    once_stats s = testing_stats(f);
    fprintf(stderr, "%s: %u filters, %" PRIu64 " alive timers, measured %.5f (bound %.5f), "
                    "estimate %.5f\n",
            what, s.filters, s.bits_set, measured, bound, s.fpr_estimate);
    return measured <= bound;
}

/* A timer filter grows through a burst within its target rate and shrinks back once
 * the burst has expired. */
static void dynamic_grows_and_shrinks(void)
{
    uint64_t span = 10000, capacity = 8000;
    double error = 0.01;
    timer_opts o = {.width = 16, .span = span, .capacity = capacity, .error = error,
                    .dynamic = true, .seed = 61};
    once_filter *f = make_timer(&o);
    REQUIRE(f != NULL);
    once_stats s = testing_stats(f);
    CHECK(s.filters == 1);
    CHECK(s.design_fpr <= error);
    uint64_t one = once_bytes(f);
    /* One sub-filter is planned for capacity / 4 keys at error / 8. */
    uint64_t m;
    uint32_t k;
    CHECK_OK(once_plan(ONCE_STANDARD, capacity / 4, error / 8, &m, &k));
    CHECK(s.bits == m && s.hashes == k);

    dyn_stream d = {f, calloc(200000, sizeof(uint64_t)), 200000, 0, 0, 0, 62, span};
    uint64_t t = 0, next_probe = 0;
    /* Base rate: half a sub-filter per span: one filter. */
    CHECK_OK(dyn_run(&d, &t, 3000, 1000, NULL));
    s = testing_stats(f);
    CHECK(s.filters == 1);
    /* A burst at five times the rate for two spans: it grows, within the target. */
    uint32_t most = 1;
    char what[64];
    for (int part = 0; part < 10; part++) {
        CHECK_OK(dyn_run(&d, &t, 1000, 5000, NULL));
        s = testing_stats(f);
        most = s.filters > most ? s.filters : most;
        snprintf(what, sizeof what, "burst %d", part);
        CHECK(rate_within(f, &next_probe, d.latest, error, what));
        CHECK((s.filters > 1) == (once_bytes(f) > one));
    }
    CHECK(most >= 3);
    /* Back to the base rate: after the burst has expired, one filter again. */
    CHECK_OK(dyn_run(&d, &t, 4000, 1000, NULL));
    s = testing_stats(f);
    fprintf(stderr, "after the burst: %u filter(s), %" PRIu64 " bytes (one: %" PRIu64 ")\n",
            s.filters, once_bytes(f), one);
    CHECK(s.filters == 1);
    CHECK(once_bytes(f) == one);
    CHECK(d.misses == 0);
    /* An idle gap longer than the span: everything expired, one filter again. */
    t += 3 * span;
    CHECK_OK(dyn_run(&d, &t, 500, 1000, NULL));
    CHECK(testing_stats(f).filters == 1);
    CHECK(d.misses == 0);
    free(d.expiry);
    once_free(f);
}

/* A timer filter is given a first guess of keys per span, and a stream brings twenty
 * times as many new keys: it grows and keeps its target rate (each new sub-filter aims
 * at its share of it, window/timer.c, "Dynamic size"), checked every half span, and
 * loses no key of the window. */
static void dynamic_keeps_its_rate_at_20x_its_guess(void)
{
    uint64_t span = 100000, capacity = 1750;
    double error = 0.01;
    timer_opts o = {.width = 16, .span = span, .capacity = capacity, .error = error,
                    .dynamic = true, .seed = 63};
    once_filter *f = make_timer(&o);
    REQUIRE(f != NULL);
    /* 50,000 events a span (an event every 2 ms), 70% new: 35,000 new keys a span. */
    dyn_stream d = {f, calloc(400000, sizeof(uint64_t)), 400000, 0, 0, 0, 64, span};
    uint64_t t = 0, next_probe = 0;
    char what[64];
    for (int half = 1; half <= 8; half++) {
        CHECK_OK(dyn_run(&d, &t, 25000, 50000, NULL));
        snprintf(what, sizeof what, "20x, half span %d", half);
        CHECK(rate_within(f, &next_probe, d.latest, error, what));
    }
    CHECK(d.misses == 0);
    free(d.expiry);
    once_free(f);
}

/* Under a memory cap of two sub-filters, the insertion that needs a third is refused
 * with ONCE_ERR_FULL and leaves the filter exactly as it was. */
static void dynamic_memory_cap_refuses_and_keeps_state(void)
{
    uint64_t span = 10000;
    timer_opts o = {.width = 16, .span = span, .capacity = 8000, .error = 0.01,
                    .dynamic = true, .seed = 71};
    /* First learn the size of two sub-filters. */
    once_filter *f = make_timer(&o);
    REQUIRE(f != NULL);
    uint64_t one = once_bytes(f), two = 0;
    dyn_stream d = {f, calloc(100000, sizeof(uint64_t)), 100000, 0, 0, 0, 72, span};
    uint64_t t = 0;
    while (two == 0 && d.next_id < 20000) {
        CHECK_OK(dyn_run(&d, &t, 100, 5000, NULL));
        if (testing_stats(f).filters == 2)
            two = once_bytes(f);
    }
    REQUIRE(two > one);
    free(d.expiry);
    once_free(f);

    /* A cap below one filter is refused at creation; one below it and its log (the
     * cells' log of a sparse sub-filter, window/timer.c "Sweeping") takes none. */
    o.max_bytes = one - 1;
    once_filter *plain = NULL;
    CHECK_OK(try_make(&o, &plain));
    REQUIRE(plain != NULL);
    uint64_t alone = once_bytes(plain);
    CHECK(alone < one);
    once_free(plain);
    o.max_bytes = alone - 1;
    once_filter *none = NULL;
    CHECK_STATUS(try_make(&o, &none), ONCE_ERR_TOO_LARGE);
    CHECK(none == NULL);

    /* Find the first refused event, then replay up to it with saves around. */
    o.max_bytes = two;
    uint64_t failed_at = UINT64_MAX, first_t = 0;
    {
        once_filter *g = make_timer(&o);
        REQUIRE(g != NULL);
        dyn_stream e = {g, calloc(100000, sizeof(uint64_t)), 100000, 0, 0, 0, 73, span};
        uint64_t tt = 0, at = 0;
        once_status st = dyn_run(&e, &tt, 40000, 5000, &at);
        CHECK_STATUS(st, ONCE_ERR_FULL);
        CHECK(e.misses == 0);
        CHECK(testing_stats(g).filters == 2);
        failed_at = at;
        first_t = tt;
        free(e.expiry);
        once_free(g);
    }
    REQUIRE(failed_at != UINT64_MAX);
    once_filter *g = make_timer(&o);
    REQUIRE(g != NULL);
    dyn_stream e = {g, calloc(100000, sizeof(uint64_t)), 100000, 0, 0, 0, 73, span};
    uint64_t tt = 0;
    CHECK_OK(dyn_run(&e, &tt, failed_at, 5000, NULL));
    size_t before_len = 0, after_len = 0;
    uint8_t *before = testing_save(g, &before_len);
    uint64_t items = once_items(g);
    CHECK_STATUS(dyn_run(&e, &tt, 1, 5000, NULL), ONCE_ERR_FULL);
    CHECK(tt == first_t);
    /* The same key again, and a fresh one, are refused too; queries still answer. */
    testing_key k = testing_key_make(10, e.next_id);
    bool seen;
    CHECK_STATUS(once_test_and_add(g, &k, sizeof k, tt, &seen), ONCE_ERR_FULL);
    CHECK_STATUS(once_add(g, &k, sizeof k, tt), ONCE_ERR_FULL);
    testing_key old = testing_key_make(10, e.next_id - 1);
    bool p = false;
    CHECK_OK(once_query(g, &old, sizeof old, tt, &p));
    CHECK(p);
    uint8_t *after = testing_save(g, &after_len);
    CHECK(before && after && before_len == after_len &&
          memcmp(before, after, before_len) == 0);
    CHECK(once_items(g) == items);
    CHECK(once_bytes(g) <= two);
    /* Once the keys have expired there is room again. */
    tt += span + span / 2;
    CHECK_OK(once_test_and_add(g, &k, sizeof k, tt, &seen));
    CHECK(!seen);
    CHECK(testing_stats(g).filters == 1);
    once_free_buffer(before);
    once_free_buffer(after);
    free(e.expiry);
    once_free(g);
}

/* ------------------------------------------------------------ serialization */

/* Where a file's payload length and payload are: after its parameter words
 * (saved_layout.h). */
static size_t params_of(const uint8_t *file)
{
    return (saved_payload_len_offset(file) - HEADER) / 8;
}
#define OFF_PAYLOAD_LEN saved_payload_len_offset(file)
#define OFF_PAYLOAD (OFF_PAYLOAD_LEN + 8)


static uint64_t double_bits(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits;
}

/* A stream with late events; returns the latest time written. */
static uint64_t feed(once_filter *f, uint64_t *state, uint64_t *t, uint64_t count,
                     uint64_t universe, uint64_t span, uint64_t step, bool *answers)
{
    for (uint64_t i = 0; i < count; i++) {
        *t += rng(state) % (2 * step + 1);
        if (rng(state) % 15000 == 0)
            *t += span + span / 3; /* an idle gap */
        uint64_t te = *t;
        if (rng(state) % 4 == 0) {
            uint64_t late = rng(state) % (span / 4 + 1);
            te = te > late ? te - late : 0;
        }
        bool seen = testing_seen(f, 12, rng(state) % universe, te);
        if (answers)
            answers[i] = seen;
    }
    return *t;
}

static void save_mid_stream_then_continue(void)
{
    for (int dynamic = 0; dynamic < 2; dynamic++) {
        for (int w = 0; w < 3; w++) {
            uint32_t width = 8u << w;
            uint64_t span = 20000;
            timer_opts o = {.width = width, .span = span, .capacity = dynamic ? 4000 : 20000,
                            .error = 0.01, .dynamic = dynamic, .equal = w == 2 ? 2 : 0,
                            .policy = (once_policy)(w == 1), .seed = 81};
            once_filter *a = make_timer(&o);
            REQUIRE(a != NULL);
            uint64_t state = 82 + (uint64_t)w, t = 0;
            /* Bursty: 10 events per second to start, then 5 per ms. */
            feed(a, &state, &t, 5000, 60000, span, 100, NULL);
            feed(a, &state, &t, 60000, 60000, span, 1, NULL);
            once_stats sa = testing_stats(a);
            if (dynamic)
                CHECK(sa.filters > 1);
            size_t len = 0;
            uint8_t *buf = testing_save(a, &len);
            REQUIRE(buf != NULL);
            CHECK(len == once_saved_size(a));
            once_filter *b = NULL;
            CHECK_OK(once_load(&b, buf, len));
            REQUIRE(b != NULL);
            CHECK(once_get_type(b) == ONCE_TIMER);
            CHECK(strcmp(testing_stats(b).structure, "timer") == 0);
            once_stats sb = testing_stats(b);
            CHECK(sb.filters == sa.filters && sb.bits == sa.bits &&
                  sb.bits_set == sa.bits_set && sb.fpr_estimate == sa.fpr_estimate &&
                  sb.items == sa.items && sb.capacity == sa.capacity &&
                  sb.span_ms == sa.span_ms && sb.slack == sa.slack);
            CHECK(once_bytes(a) == once_bytes(b));
            CHECK(testing_same_save(a, b));
            /* Every truncation is refused. */
            for (size_t cut = 0; cut < len; cut += 1 + cut / 61) {
                uint8_t *part = testing_copy_exact(buf, cut);
                once_filter *x = NULL;
                CHECK(once_load(&x, part, cut) != ONCE_OK);
                CHECK(x == NULL);
                free(part);
            }
            once_free_buffer(buf);
            /* Both continue alike: same answers, same saves. */
            enum { MORE = 20000 };
            static bool ra[MORE], rb[MORE];
            uint64_t sa_state = state, sb_state = state, ta = t, tb = t, differ = 0;
            for (int round = 0; round < 4; round++) {
                feed(a, &sa_state, &ta, MORE, 60000, span, round == 2 ? 400 : 2, ra);
                feed(b, &sb_state, &tb, MORE, 60000, span, round == 2 ? 400 : 2, rb);
                for (int i = 0; i < MORE; i++)
                    differ += ra[i] != rb[i];
                CHECK(testing_same_save(a, b));
            }
            CHECK(differ == 0);
            fprintf(stderr, "%s W=%u: %u filters at the save, continued alike\n",
                    dynamic ? "dynamic" : "fixed", width, sa.filters);
            once_free(a);
            once_free(b);
        }
    }
}

static void every_truncation_and_byte(void)
{
    /* A small filter: every cut, and every byte changed and resealed. */
    for (int dynamic = 0; dynamic < 2; dynamic++) {
        timer_opts o = {.width = 8, .span = 1000, .bits = 200, .hashes = 3, .capacity = 20,
                        .error = 0.05, .dynamic = dynamic, .seed = 91};
        once_filter *f = make_timer(&o);
        REQUIRE(f != NULL);
        uint64_t state = 5, t = 0;
        feed(f, &state, &t, 300, 200, 1000, 3, NULL);
        size_t len = 0;
        uint8_t *buf = testing_save(f, &len);
        once_free(f);
        REQUIRE(buf != NULL);
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *part = testing_copy_exact(buf, cut);
            once_filter *x = NULL;
            CHECK(once_load(&x, part, cut) != ONCE_OK);
            free(part);
            /* ... even with a checksum that fits the shorter bytes. */
            if (cut >= 8) {
                uint8_t *sealed = testing_copy_exact(buf, cut);
                testing_reseal(sealed, cut);
                CHECK(testing_load_and_vet(sealed, cut) != ONCE_OK);
                free(sealed);
            }
        }
        uint64_t accepted = 0, refused = 0;
        const uint8_t masks[] = {0x01, 0x80, 0xFF};
        for (size_t at = 0; at + 8 < len; at++) {
            for (int m = 0; m < 3; m++) {
                uint8_t *b = testing_copy_exact(buf, len);
                b[at] ^= masks[m];
                once_filter *x = NULL;
                CHECK(once_load(&x, b, len) != ONCE_OK); /* as damaged */
                testing_reseal(b, len);
                if (testing_load_and_vet(b, len) == ONCE_OK)
                    accepted++;
                else
                    refused++;
                free(b);
            }
        }
        fprintf(stderr, "%s: %zu bytes, resealed changes: %" PRIu64 " accepted, %" PRIu64
                        " refused\n",
                dynamic ? "dynamic" : "fixed", len, accepted, refused);
        CHECK(refused > 0);
        once_free_buffer(buf);
    }
}

/* A saved timer filter with its last `words` parameters cut out, resealed. */
static uint8_t *without_last_params(const uint8_t *file, size_t len, int words, size_t *out_len)
{
    size_t count = params_of(file);
    size_t keep = HEADER + 8 * (count - (size_t)words);
    *out_len = len - 8 * (size_t)words;
    uint8_t *b = malloc(*out_len);
    memcpy(b, file, keep);
    memcpy(b + keep, file + OFF_PAYLOAD_LEN, len - OFF_PAYLOAD_LEN);
    testing_put_le(b + OFF_PARAMS_LEN, 8 * (uint64_t)(count - (size_t)words), 4);
    testing_reseal(b, *out_len);
    return b;
}

static void hostile_params_refused(void)
{
    for (int dynamic = 0; dynamic < 2; dynamic++) {
        timer_opts o = {.width = 16, .span = 5000, .capacity = 400, .error = 0.01,
                        .dynamic = dynamic, .equal = 2, .seed = 95};
        once_filter *f = make_timer(&o);
        REQUIRE(f != NULL);
        uint64_t state = 6, t = 0;
        feed(f, &state, &t, dynamic ? 3000 : 600, 5000, 5000, 2, NULL);
        size_t len = 0;
        uint8_t *file = testing_save(f, &len);
        once_stats s = testing_stats(f);
        once_free(f);
        REQUIRE(file != NULL);
        if (dynamic)
            REQUIRE(s.filters >= 2);
        REQUIRE(testing_get_le(file + OFF_TYPE, 2) == ONCE_TIMER);
        REQUIRE(testing_get_le(file + OFF_PAYLOAD_LEN, 8) + OFF_PAYLOAD + 8 == len);
        CHECK_OK(testing_load_and_vet(file, len));
        uint64_t cursor = testing_param_of(file, TIMER_P_CURSOR);
        CHECK_OK(testing_with_param(file, len, TIMER_P_CURSOR, cursor)); /* resealed */

        uint64_t cells = testing_param_of(file, TIMER_P_CELLS);
        uint64_t span = testing_param_of(file, TIMER_P_SPAN);
        uint64_t k = testing_param_of(file, TIMER_P_HASHES);
        uint64_t latest = testing_param_of(file, TIMER_P_LATEST);
        uint64_t tick = testing_param_of(file, TIMER_P_TICK);
        uint64_t filters = testing_param_of(file, TIMER_P_FILTERS);
        REQUIRE(cells == s.bits / s.filters && k == s.hashes && tick == s.slack);
        struct {
            int param;
            uint64_t value;
            const char *what;
        } bad[] = {
            {TIMER_P_WIDTH, 0, "width 0"},
            {TIMER_P_WIDTH, 12, "width 12"},
            {TIMER_P_WIDTH, 64, "width 64"},
            {TIMER_P_WIDTH, 8, "width 8 (payload sized for 16)"},
            {TIMER_P_HASHES, 0, "k 0"},
            {TIMER_P_HASHES, 65, "k 65"},
            {TIMER_P_HASHES, 1, "k below k'"},
            {TIMER_P_CELLS, 0, "no cells"},
            {TIMER_P_CELLS, (UINT64_C(1) << 40) + 1, "cells past the library limit"},
            {TIMER_P_CELLS, UINT64_MAX, "cells 2^64 - 1"},
            {TIMER_P_CELLS, cells * 2, "cells for a longer payload"},
            {TIMER_P_SPAN, 0, "span 0"},
            {TIMER_P_SPAN, (UINT64_C(1) << 40) + 1, "span past the limit"},
            {TIMER_P_SPAN, span * 4, "span whose tick differs"},
            {TIMER_P_TICK, tick + 1, "tick off by one"},
            {TIMER_P_TICK, 0, "tick 0"},
            {TIMER_P_EQUAL, k + 1, "k' above k"},
            {TIMER_P_POLICY, 2, "policy 2"},
            {TIMER_P_DYNAMIC, 3, "dynamic 3"},
            {TIMER_P_DYNAMIC, !dynamic, "dynamic flipped"},
            {TIMER_P_PLAN_CAPACITY, (UINT64_C(1) << 40) + 1, "planned capacity past the limit"},
            {TIMER_P_SUB_ERROR, double_bits(NAN), "error NaN"},
            {TIMER_P_SUB_ERROR, double_bits(INFINITY), "error infinite"},
            {TIMER_P_SUB_ERROR, double_bits(-0.5), "error negative"},
            {TIMER_P_SUB_ERROR, double_bits(1.0), "error 1"},
            {TIMER_P_THRESHOLD, dynamic ? 0 : 1, "threshold"},
            {TIMER_P_THRESHOLD, cells + 1, "threshold above m"},
            {TIMER_P_MAX_BYTES, 0, "no memory"},
            {TIMER_P_MAX_BYTES, 1000, "memory cap below the filter"},
            {TIMER_P_LATEST, UINT64_C(1) << 63, "latest time 2^63"},
            {TIMER_P_LATEST, UINT64_MAX, "latest time 2^64 - 1"},
            {TIMER_P_LATEST, latest + span + tick, "timers all expired at the latest time"},
            {TIMER_P_LATEST, latest > 2 * span ? latest - 2 * span : 0, "timers beyond one span"},
            {TIMER_P_CURSOR, cells, "cursor at m"},
            {TIMER_P_CURSOR, UINT64_MAX, "cursor 2^64 - 1"},
            {TIMER_P_CREDIT, span, "credit of a whole span"},
            {TIMER_P_FILTERS, 0, "no filters"},
            {TIMER_P_FILTERS, 4097, "too many filters"},
            {TIMER_P_FILTERS, filters + 1, "one filter more than the payload"},
            {TIMER_P_FILTERS, dynamic ? filters - 1 : 2, "one filter less / two fixed"},
            {TIMER_P_STARTED, 2, "started 2"},
            {TIMER_P_STARTED, 0, "a clock that moved but never started"},
            {TIMER_P_MAX_TIME_JUMP, UINT64_C(1) << 63, "time jump bound 2^63"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            once_status st = testing_with_param(file, len, bad[i].param, bad[i].value);
            if (st != ONCE_ERR_CORRUPT) {
                fprintf(stderr, "%s: %s accepted (%s)\n", dynamic ? "dynamic" : "fixed",
                        bad[i].what, once_strerror(st));
                CHECK(0);
            }
        }
        /* Payload: a timer that is expired at the latest time, and a bit past m. */
        uint64_t payload = testing_get_le(file + OFF_PAYLOAD_LEN, 8), words = payload / 8 / filters;
        int expired_done = 0;
        for (size_t at = OFF_PAYLOAD; at + 1 < OFF_PAYLOAD + payload && !expired_done; at += 2) {
            uint64_t v = testing_get_le(file + at, 2);
            if (v == 0)
                continue;
            uint8_t *b = testing_copy_exact(file, len);
            uint64_t n = latest / tick, dead = (n % 65535) + 1; /* expires exactly now */
            testing_put_le(b + at, dead, 2);
            testing_reseal(b, len);
            CHECK_STATUS(testing_load_and_vet(b, len), ONCE_ERR_CORRUPT);
            testing_put_le(b + at, (n + span / tick + 2) % 65535 + 1, 2); /* beyond the span */
            testing_reseal(b, len);
            CHECK_STATUS(testing_load_and_vet(b, len), ONCE_ERR_CORRUPT);
            testing_put_le(b + at, (n + 1) % 65535 + 1, 2); /* alive: a valid (if forged) timer */
            testing_reseal(b, len);
            CHECK_OK(testing_load_and_vet(b, len));
            free(b);
            expired_done = 1;
        }
        CHECK(expired_done);
        if (cells * 16 < words * 64) {
            uint8_t *b = testing_copy_exact(file, len);
            b[OFF_PAYLOAD + words * 8 - 1] |= 0x80; /* the padding of the first filter */
            testing_reseal(b, len);
            CHECK_STATUS(testing_load_and_vet(b, len), ONCE_ERR_CORRUPT);
            free(b);
        }
        /* A parameter block one word short (the payload length moved up). */
        {
            size_t short_len = 0;
            uint8_t *b = without_last_params(file, len, 1, &short_len);
            CHECK_STATUS(testing_load_and_vet(b, short_len), ONCE_ERR_CORRUPT);
            free(b);
        }
        /* Budget growth needs when its newest sub-filter opened: not after the clock. */
        if (dynamic) {
            CHECK(params_of(file) == TIMER_P_COUNT && testing_param_of(file, TIMER_P_DYNAMIC) == 2);
            CHECK_STATUS(testing_with_param(file, len, TIMER_P_OPENED, latest + 1),
                         ONCE_ERR_CORRUPT);
            CHECK_OK(testing_with_param(file, len, TIMER_P_OPENED, latest));
        } else {
            CHECK(params_of(file) == TIMER_P_OPENED);
        }
        /* The parameter block of states written before the clock's bound (two words
         * fewer; growing ones then grew evenly, TIMER_P_DYNAMIC 1, without TIMER_P_OPENED) still
         * loads: no bound, a clock started if it moved.  So does a growing one of the
         * version after it, with the bound but without TIMER_P_OPENED. */
        if (dynamic) {
            uint8_t *even = testing_copy_exact(file, len);
            testing_put_le(even + HEADER + 8 * TIMER_P_DYNAMIC, 1, 8);
            size_t even_len = 0;
            uint8_t *b = without_last_params(even, len, 1, &even_len);
            CHECK_OK(testing_load_and_vet(b, even_len));
            free(b);
            free(even);
        }
        {
            uint8_t *even = testing_copy_exact(file, len);
            if (dynamic)
                testing_put_le(even + HEADER + 8 * TIMER_P_DYNAMIC, 1, 8);
            size_t short_len = 0;
            uint8_t *b = without_last_params(even, len, dynamic ? 3 : 2, &short_len);
            free(even);
            once_filter *old = NULL;
            CHECK_OK(once_load(&old, b, short_len));
            uint64_t clock = 0;
            bool started = false;
            if (old != NULL) {
                CHECK_OK(once_clock(old, &clock, &started));
                CHECK(clock == latest && started == (latest != 0));
                CHECK(!testing_seen(old, 95, 1u << 30, latest + 400 * 86400000ull)); /* no bound */
                once_free(old);
            }
            free(b);
        }
        /* Header capacity beyond the limit. */
        {
            uint8_t *b = testing_copy_exact(file, len);
            testing_put_le(b + OFF_CAPACITY, (UINT64_C(1) << 40) + 1, 8);
            testing_reseal(b, len);
            CHECK_STATUS(testing_load_and_vet(b, len), ONCE_ERR_CORRUPT);
            free(b);
        }
        once_free_buffer(file);
    }
}

/* ------------------------------------------------------------ combine, clear */

static void union_intersection_and_clear(void)
{
    uint64_t span = 10000;
    timer_opts o = {.width = 16, .span = span, .capacity = 5000, .error = 0.001, .seed = 97};
    once_filter *a = make_timer(&o), *b = make_timer(&o);
    REQUIRE(a && b);
    /* a: keys 0..999 at 1000 + i; b: keys 500..1499 at 4000 + i. */
    for (uint64_t i = 0; i < 1000; i++) {
        CHECK(!testing_seen(a, 13, i, 1000 + i));
        CHECK(!testing_seen(b, 13, i + 500, 4000 + i));
    }
    once_filter *u = NULL;
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(once_save_to_buffer(a, &buf, &len));
    CHECK_OK(once_load(&u, buf, len));
    once_free_buffer(buf);
    REQUIRE(u != NULL);
    CHECK_OK(once_union(u, b));
    CHECK_OK(once_intersect(a, b));
    uint64_t latest = 4999, wrong = 0, extra = 0;
    for (uint64_t i = 0; i < 1500; i++) {
        wrong += !testing_present(u, 13, i, latest);
        bool both = i >= 500 && i < 1000;
        if (both)
            wrong += !testing_present(a, 13, i, latest);
        else
            extra += testing_present(a, 13, i, latest);
    }
    CHECK(wrong == 0);
    CHECK(extra <= 5);
    /* The union keeps each key's own expiry: a's keys leave first. */
    uint64_t gone = 0;
    for (uint64_t i = 0; i < 500; i++)
        gone += !testing_present(u, 13, i, 1000 + i + span + testing_stats(u).slack);
    CHECK(gone == 500);
    CHECK(testing_present(u, 13, 1499, 4999 + span - 1));
    /* Intersection keeps the earlier expiry of the two. */
    CHECK(!testing_present(a, 13, 999, 1999 + span + testing_stats(a).slack));

    /* Dynamic filters and other spans or widths do not combine. */
    timer_opts other = o;
    other.span = span + 1;
    once_filter *c = make_timer(&other);
    other = o;
    other.width = 32;
    once_filter *d = make_timer(&other);
    other = o;
    other.dynamic = true;
    once_filter *e = make_timer(&other), *e2 = make_timer(&other);
    REQUIRE(c && d && e && e2);
    CHECK_STATUS(once_union(u, c), ONCE_ERR_MISMATCH);
    CHECK_STATUS(once_union(u, d), ONCE_ERR_MISMATCH);
    CHECK_STATUS(once_union(e, e2), ONCE_ERR_MISMATCH);
    CHECK_STATUS(once_remove(u, "x", 1, 0), ONCE_ERR_UNSUPPORTED);

    /* Clear: empty, one filter, time back to zero. */
    for (uint64_t i = 0; i < 20000; i++)
        testing_seen(e, 14, i, i);
    CHECK(testing_stats(e).filters > 1);
    CHECK_OK(once_clear(e));
    once_stats s = testing_stats(e);
    CHECK(s.filters == 1 && s.bits_set == 0 && s.items == 0);
    CHECK(!testing_present(e, 14, 19999, 19999));
    CHECK(!testing_seen(e, 14, 5, 10));
    CHECK(testing_seen(e, 14, 5, 11));
    CHECK_OK(once_clear(u));
    CHECK(testing_stats(u).bits_set == 0);
    once_free(a);
    once_free(b);
    once_free(c);
    once_free(d);
    once_free(e);
    once_free(e2);
    once_free(u);
}

/* ------------------------------------------------------------- configuration */

static void invalid_configs(void)
{
    timer_opts good = {.width = 16, .span = 1000, .capacity = 1000, .error = 0.01, .seed = 1};
    once_filter *f = NULL;
    CHECK_OK(try_make(&good, &f));
    once_stats s = testing_stats(f);
    CHECK(s.type == ONCE_TIMER && s.window == 1000 && s.span_ms == 1000 && s.slack == 1);
    CHECK(s.capacity == 1000 && s.error == 0.01 && s.design_fpr <= 0.01 && s.filters == 1);
    uint64_t m;
    uint32_t k;
    CHECK_OK(once_plan(ONCE_STANDARD, 1000, 0.01, &m, &k));
    CHECK(s.bits == m && s.hashes == k);
    CHECK(once_bytes(f) >= m * 2);
    once_free(f);

    timer_opts o = good;
    o.span = 0;
    CHECK_STATUS(try_make(&o, &f), ONCE_ERR_NO_WINDOW);
    o.span = (UINT64_C(1) << 40) + 1;
    CHECK_STATUS(try_make(&o, &f), ONCE_ERR_INVALID);
    o.span = UINT64_C(1) << 40;
    CHECK_OK(try_make(&o, &f));
    once_free(f);
    const uint32_t bad_widths[] = {1, 4, 12, 24, 64};
    for (int i = 0; i < 5; i++) {
        o = good;
        o.width = bad_widths[i];
        CHECK_STATUS(try_make(&o, &f), ONCE_ERR_INVALID);
    }
    o = good;
    o.width = 0; /* 16 */
    CHECK_OK(try_make(&o, &f));
    CHECK(testing_stats(f).slack == 1);
    once_free(f);
    o = good;
    o.equal = k + 1;
    CHECK_STATUS(try_make(&o, &f), ONCE_ERR_INVALID);
    o.equal = k;
    CHECK_OK(try_make(&o, &f));
    once_free(f);
    o = good;
    o.policy = (once_policy)2;
    CHECK_STATUS(try_make(&o, &f), ONCE_ERR_INVALID);
    o = good;
    o.hashes = 3; /* k without m */
    CHECK_STATUS(try_make(&o, &f), ONCE_ERR_INVALID);
    o.bits = 5000;
    o.hashes = 65;
    CHECK_STATUS(try_make(&o, &f), ONCE_ERR_INVALID);
    o.hashes = 4;
    o.equal = 5;
    CHECK_STATUS(try_make(&o, &f), ONCE_ERR_INVALID);
    o.equal = 0;
    CHECK_OK(try_make(&o, &f));
    s = testing_stats(f);
    CHECK(s.bits == 5000 && s.hashes == 4);
    CHECK(s.error == s.design_fpr && s.design_fpr == once_fpr_standard(5000, 4, 1000));
    once_free(f);
    o.hashes = 0; /* k from m and the capacity */
    CHECK_OK(try_make(&o, &f));
    CHECK(testing_stats(f).hashes == once_optimal_hashes(5000, 1000));
    once_free(f);
    o.bits = (UINT64_C(1) << 40) + 1;
    CHECK_STATUS(try_make(&o, &f), ONCE_ERR_TOO_LARGE);
    once_config c;
    once_config_init(&c, ONCE_TIMER);
    c.span_ms = 1000;
    c.capacity = 0;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
    c.capacity = 1000;
    c.error = 0;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_RATE);
    c.error = 1.5;
    c.dynamic = true;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_RATE);
    /* The default memory cap (1 GiB) and an explicit one. */
    once_config_init(&c, ONCE_TIMER);
    c.span_ms = 1000;
    c.capacity = 200000000;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_TOO_LARGE);
    c.capacity = 1000;
    c.max_bytes = 100;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_TOO_LARGE);
    CHECK(f == NULL);
    /* Names. */
    once_type type;
    CHECK_OK(once_type_from_name("timer", &type));
    CHECK(type == ONCE_TIMER && strcmp(once_type_name(ONCE_TIMER), "timer") == 0);
}

/* ------------------------------------------------------------ cardinality */

/*
 * The distinct keys alive at the latest time, estimated from the alive timers, against
 * the exact count: keys whose last insertion expires (rounded up to a tick) after it.
 * Zipf keys with duplicates, fixed and dynamic size; the 90% interval must hold at
 * least 90% of the checkpoints and the estimate stay within a few percent.
 */
static void distinct_alive_keys_match_exact_count(void)
{
    enum { UNIVERSE = 50000, CHECKPOINTS = 80, EVERY = 2500, WARMUP = 20000 };
    testing_zipf zipf = testing_zipf_make(UNIVERSE, 0.8);
    uint64_t *expiry = calloc(UNIVERSE, sizeof *expiry); /* t_u + T of the last insertion */
    REQUIRE(zipf.cdf != NULL && expiry != NULL);
    for (int dynamic = 0; dynamic < 2; dynamic++) {
        timer_opts o = {.width = 16, .span = 10000, .capacity = dynamic ? 4000 : 20000,
                        .error = 0.01, .dynamic = dynamic, .seed = 77 + dynamic};
        once_filter *f = make_timer(&o);
        REQUIRE(f != NULL);
        uint64_t tick = testing_stats(f).slack;
        memset(expiry, 0, UNIVERSE * sizeof *expiry);
        uint64_t state = 5 + dynamic, t = 1000;
        uint32_t covered = 0, checks = 0;
        double worst = 0;
        for (uint64_t e = 1; e <= WARMUP + (uint64_t)CHECKPOINTS * EVERY; e++) {
            t += rng(&state) % 3; /* about one event per ms: ~10^4 events a span */
            uint64_t id = testing_zipf_draw(&zipf, &state);
            if (!testing_seen(f, 1, id, t))
                expiry[id] = t + o.span;
            if (e <= WARMUP || e % EVERY != 0)
                continue;
            uint64_t truth = 0;
            for (uint64_t i = 0; i < UNIVERSE; i++)
                truth += !surely_dead(expiry[i], t, tick);
            once_cardinality c;
            CHECK_OK(once_estimate_cardinality(f, t, 0.9, &c));
            covered += c.low <= (double)truth && (double)truth <= c.high;
            checks++;
            double err = fabs(c.estimate - (double)truth) / (double)truth;
            worst = err > worst ? err : worst;
        }
        /* Later than everything: nothing is alive. */
        once_cardinality gone;
        CHECK_OK(once_estimate_cardinality(f, t + 2 * o.span, 0.9, &gone));
        CHECK(gone.estimate == 0 && gone.low == 0);
        printf("%s: 90%% interval held %u of %u checkpoints, worst relative error %.4f\n",
               dynamic ? "dynamic" : "fixed", covered, checks, worst);
        CHECK(checks == CHECKPOINTS);
        CHECK(covered >= 0.9 * checks);
        CHECK(worst < 0.05);
        once_free(f);
    }
    free(expiry);
    free(zipf.cdf);
}

/* once_overfull: a fixed filter says so once more keys are alive in its span than its
 * capacity (and not before), and no longer once they expired; a dynamic one grows and
 * never is.  A static filter is overfull past its capacity. */
static void overfull_only_when_fixed_and_past_capacity(void)
{
    timer_opts o = {.width = 16, .span = 10000, .capacity = 1000, .error = 0.01,
                    .seed = 11};
    for (int dynamic = 0; dynamic <= 1; dynamic++) {
        o.dynamic = dynamic;
        once_filter *f = make_timer(&o);
        uint64_t id = 0;
        for (; id < 900; id++)
            testing_seen(f, 1, id, 1000 + id);
        CHECK(!once_overfull(f));
        for (; id < 1200; id++)
            testing_seen(f, 1, id, 1000 + id);
        CHECK(once_overfull(f) == !dynamic);
        /* A span later the keys are gone, and 100 fresh ones are well within it. */
        for (uint64_t j = 0; j < 100; j++)
            testing_seen(f, 2, j, 1000 + id + o.span + 1000 + j);
        CHECK(!once_overfull(f));
        once_free(f);
    }
    CHECK(!once_overfull(NULL));

    once_config c;
    once_config_init(&c, ONCE_BLOCKED);
    c.capacity = 100;
    c.seed = 3;
    c.seed_is_set = true;
    once_filter *b = NULL;
    CHECK_OK(once_create(&b, &c));
    for (uint64_t i = 0; i < 100; i++) {
        testing_key k = testing_key_make(3, i);
        CHECK_OK(once_add(b, &k, sizeof k, 0));
    }
    CHECK(once_items(b) == 100 && !once_overfull(b));
    testing_key k = testing_key_make(4, 0);
    CHECK_OK(once_add(b, &k, sizeof k, 0));
    CHECK(once_overfull(b));
    once_free(b);
}

/* A sparse stream (a replay of events far apart): a sub-filter sweeps the cells its
 * insertions logged, not its m, and wipes them alone.  The same stream into the same
 * filter capped below its logs answers and saves alike at every step, through sweeps
 * owed more cells than the log holds, wipes (gaps past the span) and a burst that
 * overflows the log; fixed and dynamic. */
static void a_sparse_sub_filter_sweeps_its_log_and_answers_as_without(void)
{
    for (int dynamic = 0; dynamic < 2; dynamic++) {
        const uint64_t span = 10000;
        timer_opts o = {.width = 16, .span = span, .capacity = 200000, .error = 0.001,
                        .dynamic = dynamic, .seed = 91};
        once_filter *logged = make_timer(&o);
        REQUIRE(logged != NULL);
        timer_opts capped = o;
        capped.max_bytes = once_bytes(logged) - 1; /* the sub-filter, not its log */
        once_filter *plain = make_timer(&capped);
        REQUIRE(plain != NULL);
        CHECK(once_bytes(plain) < once_bytes(logged));
        enum { KEYS = 3000 };
        static uint64_t delivered_at[KEYS];
        memset(delivered_at, 0, sizeof delivered_at);
        uint64_t rng = 5, t = 1000000;
        for (int event = 0; event < 6000; event++) {
            uint64_t r = testing_mix(rng++);
            t += r % 100 < 70 ? r % 2000 : r % 100 < 95 ? r % 9000 : 11000 + r % 60000;
            bool burst = event == 3000; /* past the log's room, within a second */
            for (int k = 0; k < (burst ? 2000 : 1); k++) {
                uint64_t key = burst ? KEYS + (uint64_t)k : (testing_mix(r ^ 7) >> 3) % KEYS;
                twin_seen(logged, plain, 4, key, t + (uint64_t)k / 4, span,
                          key < KEYS ? &delivered_at[key] : NULL);
            }
            if (event % 500 == 499)
                CHECK(testing_same_save_but_cap(logged, plain));
        }
        once_free(logged);
        once_free(plain);
    }
}

/* A pause owes the sweep up to m cells; a write pays a step of them and carries the
 * rest (window/timer.c, "Sweeping"), within the bound the timers' wrap allows.  The
 * debt changes no answer: copies loaded from the original's bytes (which owe nothing)
 * every 400 events answer every later event as it does and save the same bytes, and
 * no key delivered within its span is new again; through pauses of up to 0.95 of a
 * span and past it, 8- and 16-bit timers (8: the least room past the wrap), fixed and
 * dynamic.  The debt is seen: a pause of most of a span leaves most of m owed. */
static void a_pause_is_swept_over_the_writes_after_it_and_answers_as_without(void)
{
    for (int variant = 0; variant < 4; variant++) {
        const uint64_t span = 10000;
        timer_opts o = {.width = variant < 2 ? 8 : 16, .span = span, .capacity = 100000,
                        .error = 0.001, .dynamic = variant % 2, .seed = 93};
        once_filter *a = make_timer(&o);
        REQUIRE(a != NULL);
        once_stats st;
        CHECK_OK(once_get_stats(a, &st));
        const uint64_t cells = st.bits / st.filters; /* m */
        once_filter *copy = NULL;
        enum { KEYS = 3000 };
        static uint64_t delivered_at[KEYS];
        memset(delivered_at, 0, sizeof delivered_at);
        uint64_t rng = 17, t = 1000000, pauses = 0, owed = 0, most_owed = 0, differ = 0;
        for (int event = 0; event < 40000; event++) {
            uint64_t r = testing_mix(rng++);
            uint64_t pause = r % 1000 < 994 ? r % 3
                             : r % 1000 < 998 ? span / 10 * (3 + r % 7) - r % 500
                                              : span + (r >> 20) % span;
            t += pause;
            if (event % 400 == 0) {
                copy = time_window_copy_again(a, copy, &differ);
                REQUIRE(copy != NULL);
            }
            uint64_t key = (testing_mix(r ^ 11) >> 3) % KEYS;
            twin_seen(a, copy, 5, key, t, span, &delivered_at[key]);
            if (pause > span / 4) { /* the write after a pause: what it left owed */
                CHECK_OK(once_get_stats(a, &st));
                pauses++;
                owed += st.sweep_owed != 0;
                if (pause > span / 2 && pause < span && st.sweep_owed > most_owed)
                    most_owed = st.sweep_owed;
                CHECK(st.sweep_owed < cells);
            }
        }
        CHECK(differ == 0 && pauses > 100 && owed > pauses / 2 && most_owed > cells / 2);
        if (differ != 0 || owed <= pauses / 2 || most_owed <= cells / 2)
            fprintf(stderr, "variant %d: %llu saves apart, %llu of %llu pauses left a debt, "
                    "at most %llu of %llu cells owed\n", variant, (unsigned long long)differ,
                    (unsigned long long)owed, (unsigned long long)pauses,
                    (unsigned long long)most_owed, (unsigned long long)cells);
        once_free(copy);
        once_free(a);
    }
}

static const testing_case cases[] = {
    {"a_pause_is_swept_over_the_writes_after_it_and_answers_as_without",
     a_pause_is_swept_over_the_writes_after_it_and_answers_as_without},
    {"a_sparse_sub_filter_sweeps_its_log_and_answers_as_without",
     a_sparse_sub_filter_sweeps_its_log_and_answers_as_without},
    {"no_false_negatives_uniform", no_false_negatives_uniform},
    {"no_false_negatives_zipf", no_false_negatives_zipf},
    {"no_false_negatives_dynamic", no_false_negatives_dynamic},
    {"batch_matches_single", batch_matches_single},
    {"keys_expire_after_span_and_one_tick", keys_expire_after_span_and_one_tick},
    {"late_events_happen_at_the_clock", late_events_happen_at_the_clock},
    {"false_positive_rate_matches_formula", false_positive_rate_matches_formula},
    {"equal_timers_trade_off", equal_timers_trade_off},
    {"wrap_safety", wrap_safety},
    {"dynamic_grows_and_shrinks", dynamic_grows_and_shrinks},
    {"dynamic_keeps_its_rate_at_20x_its_guess", dynamic_keeps_its_rate_at_20x_its_guess},
    {"dynamic_memory_cap_refuses_and_keeps_state", dynamic_memory_cap_refuses_and_keeps_state},
    {"save_mid_stream_then_continue", save_mid_stream_then_continue},
    {"every_truncation_and_byte", every_truncation_and_byte},
    {"hostile_params_refused", hostile_params_refused},
    {"union_intersection_and_clear", union_intersection_and_clear},
    {"invalid_configs", invalid_configs},
    {"distinct_alive_keys_match_exact_count", distinct_alive_keys_match_exact_count},
    {"overfull_only_when_fixed_and_past_capacity", overfull_only_when_fixed_and_past_capacity},
};

TESTING_MAIN(cases)
