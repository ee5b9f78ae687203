/*
 * test_tagged_lag.c - the tagged window's lag allowance (once_config.lag_ms; once.h,
 * "Event time"; window/tagged.c, "Time"), on a virtual clock:
 *
 *   - an exact reference model (every delivered key with its event times), fed events
 *     of several producers that lag each other, redeliveries and events past the lag:
 *     no false negative (an event within T in event time of a delivery of its key, on
 *     either side, is reported seen), and events with no delivery within T plus the
 *     slack reported seen at most at the target (a binomial bound); an event before
 *     L - H is judged as at L - H; queries within the lag answer at their own time;
 *   - the two failures of a window without a lag, and the lag's answers to them;
 *   - the refresh policy moves an entry to the later of its tick and the event's;
 *   - a lag of 0, or a config from before the field, answers and saves as before;
 *   - the bound on the lag, the structures that refuse one, the stats that report it;
 *   - saved and loaded mid-stream it continues alike; a damaged or hostile file is
 *     refused.
 * A failing stream prints its seed and configuration.
 */
#include "time_window.h"

#include <stddef.h>

static once_filter *make_lagged(uint64_t span, uint64_t lag, uint64_t capacity, double error,
                                once_policy policy, uint64_t seed)
{
    once_config c = time_window_config(ONCE_TAGGED, span, capacity, error, 0, 0, policy, seed);
    c.lag_ms = lag;
    return testing_create(&c);
}

/* ------------------------------------------------------------ the model */

/* Every key's delivered event times (the times it was judged at when answered new). */
typedef struct lag_model {
    uint64_t universe;
    uint64_t **at;
    uint32_t *count, *room;
    uint64_t span, lag, slack;
    uint64_t clock;
    bool started;
} lag_model;

static lag_model model_make(uint64_t universe, uint64_t span, uint64_t lag, uint64_t slack)
{
    lag_model m = {universe, calloc(universe, sizeof(uint64_t *)),
                   calloc(universe, sizeof(uint32_t)), calloc(universe, sizeof(uint32_t)),
                   span, lag, slack, 0, false};
    return m;
}

static void model_free(lag_model *m)
{
    for (uint64_t k = 0; k < m->universe; k++)
        free(m->at[k]);
    free(m->at);
    free(m->count);
    free(m->room);
}

/* The time a write at t is judged at: its own within the lag, L - H before it. */
static uint64_t model_judged_at(const lag_model *m, uint64_t t)
{
    if (!m->started || t >= m->clock)
        return t;
    return m->clock - t <= m->lag ? t : m->clock - m->lag;
}

/* The nearest delivery of key k to time t, in event time (UINT64_MAX: none). */
static uint64_t model_distance(const lag_model *m, uint64_t k, uint64_t t, uint64_t *t0)
{
    uint64_t best = UINT64_MAX;
    for (uint32_t i = 0; i < m->count[k]; i++) {
        uint64_t a = m->at[k][i], d = a > t ? a - t : t - a;
        if (d < best) {
            best = d;
            *t0 = a;
        }
    }
    return best;
}

static void model_deliver(lag_model *m, uint64_t k, uint64_t t)
{
    if (m->count[k] == m->room[k]) {
        m->room[k] = m->room[k] ? 2 * m->room[k] : 4;
        m->at[k] = realloc(m->at[k], m->room[k] * sizeof(uint64_t));
    }
    m->at[k][m->count[k]++] = t;
}

typedef struct lag_tally {
    uint64_t events, must, misses;          /* within T of a delivery: must be seen */
    uint64_t fresh, fresh_seen;             /* none within T + slack: seen only as a false positive */
    uint64_t past_clock_span;               /* must, though the clock passed t0 + T (case 1) */
    uint64_t beyond;                        /* judged at L - H */
    uint64_t queries, query_misses, query_fresh, query_fresh_seen;
} lag_tally;

/* One answer against the model: what it had to be. */
static void tally_answer(const lag_model *m, uint64_t k, uint64_t judged, bool seen,
                         lag_tally *y, bool query)
{
    uint64_t t0 = 0, d = model_distance(m, k, judged, &t0);
    if (d < m->span) {
        if (query) {
            y->query_misses += !seen;
        } else {
            y->must++;
            y->misses += !seen;
            y->past_clock_span += m->clock >= t0 + m->span;
        }
    } else if (d >= m->span + m->slack) {
        if (query) {
            y->query_fresh++;
            y->query_fresh_seen += seen;
        } else {
            y->fresh++;
            y->fresh_seen += seen;
        }
    }
}

/* At most the target p over n trials: the mean plus 4 standard deviations. */
static bool within_target(uint64_t hits, uint64_t n, double p)
{
    return (double)hits <= (double)n * p + 4.0 * sqrt((double)n * p * (1.0 - p)) + 1.0;
}

/*
 * Producers: each event comes from one of 4 producers, producer j lagging j H / 4 behind
 * the stream's real time plus up to H / 8 of jitter; 30% of the events are
 * redeliveries of an earlier event's key (of the last 16,384), at its time or up to
 * T / 2 after it, late by how long ago that was; 2% come from past the lag (up to a
 * span before L - H); every 60,000 events the stream idles for 3 spans.  Every 7th
 * event a query of a recent key at a time within the lag.
 */
static lag_tally run_producers(uint64_t span, uint64_t lag, double p, uint64_t seed)
{
    const uint64_t events = 240000, universe = 30000, ring_size = 16384;
    once_filter *f = make_lagged(span, lag, 12000, p, ONCE_POLICY_FIRST, seed);
    lag_tally y;
    memset(&y, 0, sizeof y);
    if (f == NULL) {
        CHECK(0);
        return y;
    }
    lag_model m = model_make(universe, span, lag, testing_stats(f).slack);
    uint64_t *ring_key = calloc(ring_size, sizeof(uint64_t));
    uint64_t *ring_at = calloc(ring_size, sizeof(uint64_t));
    uint64_t ring_n = 0, r = 10 * span, state = seed, step = span / 12000 + 1;
    for (uint64_t e = 0; e < events; e++) {
        state = testing_mix(state);
        r += 1 + state % (2 * step);
        if (e % 60000 == 59999)
            r += 3 * span;
        state = testing_mix(state);
        uint64_t roll = state % 100, k, t;
        if (roll < 30 && ring_n > 0) {
            uint64_t i = testing_mix(state) % (ring_n < ring_size ? ring_n : ring_size);
            k = ring_key[i];
            t = ring_at[i] + testing_mix(state + 1) % (span / 2);
            if (t > r)
                t = r;
        } else if (roll < 32 && m.started && m.clock > lag + span + 1) {
            k = testing_mix(state) % universe;
            t = m.clock - lag - 1 - testing_mix(state + 1) % span;
        } else {
            uint64_t j = state % 4;
            k = testing_mix(state) % universe;
            t = r - j * lag / 4 - testing_mix(state + 1) % (lag / 8 + 1);
            ring_key[ring_n % ring_size] = k;
            ring_at[ring_n % ring_size] = t;
            ring_n++;
        }
        uint64_t judged = model_judged_at(&m, t);
        y.beyond += judged != t;
        testing_key key = testing_key_make(seed, k);
        bool seen = false;
        CHECK_OK(once_test_and_add(f, &key, sizeof key, t, &seen));
        tally_answer(&m, k, judged, seen, &y, false);
        if (!seen)
            model_deliver(&m, k, judged);
        if (!m.started || t > m.clock)
            m.clock = t;
        m.started = true;
        y.events++;
        if (e % 7 == 0) { /* a query within the lag, at its own time */
            state = testing_mix(state);
            uint64_t qk = ring_n > 0 ? ring_key[state % (ring_n < ring_size ? ring_n : ring_size)]
                                     : state % universe;
            uint64_t qt = m.clock - testing_mix(state) % (lag + 1);
            testing_key q = testing_key_make(seed, qk);
            bool present = false;
            CHECK_OK(once_query(f, &q, sizeof q, qt, &present));
            tally_answer(&m, qk, qt, present, &y, true);
            y.queries++;
        }
    }
    free(ring_key);
    free(ring_at);
    model_free(&m);
    once_free(f);
    return y;
}

static void no_false_negative_and_fresh_keys_at_the_target_with_producers_lagging(void)
{
    const uint64_t span = MINUTE;
    const double p = 0.01;
    const uint64_t lags[] = {span / 4, span, 2 * span, 777};
#ifdef ONCE_TESTS_SANITIZED
    const int seeds = 1;
#else
    const int seeds = 3;
#endif
    for (size_t i = 0; i < sizeof lags / sizeof lags[0]; i++)
        for (int s = 0; s < seeds; s++) {
            uint64_t seed = 9100 + 10 * i + (uint64_t)s;
            lag_tally y = run_producers(span, lags[i], p, seed);
            bool ok = y.misses == 0 && y.query_misses == 0 &&
                      within_target(y.fresh_seen, y.fresh, p) &&
                      within_target(y.query_fresh_seen, y.query_fresh, p);
            printf("lag %" PRIu64 " ms, seed %" PRIu64 ": %" PRIu64 " events, %" PRIu64
                   " within T (%" PRIu64 " after the clock passed t0 + T), %" PRIu64
                   " missed; %" PRIu64 " past the lag; fresh seen %" PRIu64 " / %" PRIu64
                   " (%.5f, target %.2f); queries: %" PRIu64 " missed, fresh seen %" PRIu64
                   " / %" PRIu64 "\n",
                   lags[i], seed, y.events, y.must, y.past_clock_span, y.misses, y.beyond,
                   y.fresh_seen, y.fresh, y.fresh ? (double)y.fresh_seen / (double)y.fresh : 0,
                   p, y.query_misses, y.query_fresh_seen, y.query_fresh);
            if (!ok)
                fprintf(stderr, "FAILED: lag %" PRIu64 " ms, seed %" PRIu64 "\n", lags[i], seed);
            CHECK(y.misses == 0 && y.query_misses == 0);
            CHECK(within_target(y.fresh_seen, y.fresh, p));
            CHECK(within_target(y.query_fresh_seen, y.query_fresh, p));
            /* the stream exercises what it claims to */
            CHECK(y.must > 10000 && y.fresh > 10000 && y.beyond > 1000 && y.query_fresh > 1000);
            if (lags[i] >= span)
                CHECK(y.past_clock_span > 100);
        }
}

/* ------------------------------------------------------------ directed */

/*
 * Ticks of 1 s (T = 12 s), a lag of 8 s: the two failures of a window that judges late
 * events at its clock, and what the lag answers.
 *   1. A delivered at 100 s (tick 100, held to tick 112 with the slack); the clock
 *      passes 113 s; a late repeat at 107 s is a repeat (7 s after it) but the clock's
 *      window no longer holds A.
 *   2. B first seen late at 110 s (clock 113.5 s) is kept from 110 s, not from the
 *      clock: a new event of B at 123 s, 13 s after it, is fresh.
 */
static void late_events_judged_at_their_own_time(void)
{
    const uint64_t s = 1000;
    once_filter *lagged = make_lagged(12 * s, 8 * s, 100, 0.001, ONCE_POLICY_FIRST, 31);
    once_filter *plain = make_lagged(12 * s, 0, 100, 0.001, ONCE_POLICY_FIRST, 31);
    REQUIRE(lagged != NULL && plain != NULL);
    once_filter *both[2] = {lagged, plain};
    for (int i = 0; i < 2; i++) {
        once_filter *f = both[i];
        CHECK(!testing_seen(f, 1, 'A', 100 * s));
        CHECK(!testing_seen(f, 1, 'Y', 113 * s + 500));
        CHECK(testing_seen(f, 1, 'A', 107 * s) == (f == lagged)); /* 1 */
        CHECK(!testing_seen(f, 1, 'B', 110 * s));
        uint64_t clock = 0;
        bool started = false;
        CHECK_OK(once_clock(f, &clock, &started));
        CHECK(started && clock == 113 * s + 500); /* late events leave the clock */
    }
    /* B alone past its own span: fresh with the lag, dropped without */
    CHECK(!testing_seen(lagged, 1, 'B', 123 * s)); /* 2 */
    CHECK(testing_seen(plain, 1, 'B', 123 * s));
    once_free(plain);
    once_free(lagged);

    /* Past the lag: judged and written as at L - H (106.5 s, tick 106). */
    once_filter *f = make_lagged(12 * s, 6 * s, 100, 0.001, ONCE_POLICY_FIRST, 32);
    REQUIRE(f != NULL);
    CHECK(!testing_seen(f, 2, 'Y', 112 * s + 500));
    CHECK(!testing_seen(f, 2, 'C', 90 * s));
    CHECK(testing_present(f, 2, 'C', 118 * s + 999)); /* tick 118: 12 after 106 */
    CHECK(!testing_present(f, 2, 'C', 119 * s));
    CHECK(testing_seen(f, 2, 'C', 95 * s)); /* judged at 106.5 s too */
    /* Either side within the lag: a key delivered at 112 s is found from 106.5 s. */
    CHECK(!testing_seen(f, 2, 'D', 112 * s));
    CHECK(testing_present(f, 2, 'D', 106 * s + 500));
    CHECK(testing_present(f, 2, 'D', 100 * s)); /* past the lag: read at the clock */
    /* A late key lives a span from its own tick (107), not the clock's (112). */
    CHECK(!testing_seen(f, 2, 'E', 107 * s));
    CHECK(testing_present(f, 2, 'E', 119 * s + 999));
    CHECK(!testing_present(f, 2, 'E', 120 * s));
    once_free(f);
}

/* Under the refresh policy a late repeat moves its entry to the later of its tick and
 * the repeat's, never back. */
static void refresh_takes_the_later_tick(void)
{
    const uint64_t s = 1000;
    once_filter *f = make_lagged(12 * s, 6 * s, 100, 0.001, ONCE_POLICY_REFRESH, 33);
    REQUIRE(f != NULL);
    CHECK(!testing_seen(f, 3, 'R', 100 * s));
    CHECK(!testing_seen(f, 3, 'Z', 105 * s));
    CHECK(testing_seen(f, 3, 'R', 101 * s)); /* tick 100 -> 101 */
    CHECK(testing_seen(f, 3, 'R', 99 * s));  /* stays at 101 */
    CHECK(testing_present(f, 3, 'R', 113 * s + 500)); /* tick 113: 12 after 101 */
    CHECK(!testing_present(f, 3, 'R', 114 * s));
    once_free(f);
}

/* A lag of 0, and a config from a caller built before the field (its struct ends
 * before lag_ms), answer and save exactly as a filter built without it, through late
 * events, refreshes, jumps and growth. */
static void no_lag_answers_and_saves_as_before(void)
{
    for (int policy = 0; policy < 2; policy++) {
        once_config full = testing_config(ONCE_TAGGED, 40 + (uint64_t)policy);
        full.span_ms = MINUTE;
        full.capacity = 500;
        full.policy = (once_policy)policy;
        once_config older; /* an older caller's: a shorter struct, lag_ms never written */
        memset(&older, 0xee, sizeof older);
        once_config_init_sized(&older, offsetof(once_config, lag_ms), ONCE_TAGGED);
        CHECK(older.size == offsetof(once_config, lag_ms) && older.lag_ms == 0xeeeeeeeeeeeeeeee);
        memcpy(&older, &full, offsetof(once_config, lag_ms));
        older.size = offsetof(once_config, lag_ms);
        once_filter *a = testing_create(&full), *b = testing_create(&older);
        REQUIRE(a != NULL && b != NULL);
        CHECK(testing_stats(a).lag_ms == 0 && testing_stats(b).lag_ms == 0);
        uint64_t state = 7, t = 1000000, differ = 0;
        for (uint64_t e = 0; e < 60000; e++) {
            state = testing_mix(state);
            t += state % 3;
            if (e % 20000 == 19999)
                t += 5 * MINUTE;
            uint64_t when = t - testing_mix(state) % (2 * MINUTE); /* late, up to 2 spans */
            uint64_t id = testing_mix(state + 1) % 5000;
            differ += testing_seen(a, 4, id, when) != testing_seen(b, 4, id, when);
            if (e % 5 == 0)
                differ += testing_present(a, 5, id, when) != testing_present(b, 5, id, when);
        }
        CHECK(differ == 0);
        CHECK(testing_same_save(a, b));
        /* the saved form is version 1 of the params: 10 words and the tables' */
        size_t len = 0;
        uint8_t *file = testing_save(a, &len);
        REQUIRE(file != NULL);
        CHECK(testing_get_le(file + OFF_PARAMS_LEN, 4) ==
              8 * (TAGGED_P_COUNT + TAGGED_T_COUNT * testing_param_of(file, TAGGED_P_TABLES)));
        once_free_buffer(file);
        once_free(a);
        once_free(b);
    }
}

/* The bound on the lag, and who refuses one. */
static void lag_bounds_and_who_takes_one(void)
{
    once_filter *f = NULL;
    once_config c = testing_config(ONCE_TAGGED, 50);
    c.span_ms = MINUTE;
    c.lag_ms = 2 * MINUTE + 1;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
    CHECK_STATUS(once_create_sharded(&f, &c, 4), ONCE_ERR_INVALID);
    c.lag_ms = 2 * MINUTE;
    CHECK_OK(once_create(&f, &c));
    once_stats st = testing_stats(f);
    CHECK(st.lag_ms == 2 * MINUTE && st.span_ms == MINUTE);
    /* an older caller's stats end before lag_ms, and are filled that far */
    once_stats older;
    memset(&older, 0xee, sizeof older);
    CHECK_OK(once_get_stats_sized(f, &older, offsetof(once_stats, lag_ms)));
    CHECK(older.span_ms == MINUTE && older.lag_ms == 0xeeeeeeeeeeeeeeee);
    once_free(f);
    /* memory: the first table is planned for the keys of T + H */
    c.lag_ms = 0;
    CHECK_OK(once_create(&f, &c));
    uint64_t plain = once_bytes(f);
    once_free(f);
    c.lag_ms = MINUTE;
    CHECK_OK(once_create(&f, &c));
    CHECK(once_bytes(f) > plain * 3 / 2);
    once_free(f);
    static const once_type others[] = {ONCE_TLBF, ONCE_TIMER, ONCE_BLOCKED, ONCE_APBF,
                                       ONCE_SCALABLE};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        once_config o = testing_config_any_kind(others[i], 1000, 100, MINUTE, 51);
        o.lag_ms = 1000;
        CHECK_STATUS(once_create(&f, &o), ONCE_ERR_INVALID);
        o.lag_ms = 0;
        CHECK_OK(once_create(&f, &o));
        CHECK(testing_stats(f).lag_ms == 0);
        once_free(f);
    }
}

/* Saved mid-stream with late events, loaded, the copy answers and saves as the
 * original through more of them, and the lag is in the file and the stats. */
static void save_mid_stream_then_continue(void)
{
    for (int policy = 0; policy < 2; policy++) {
        once_filter *a = make_lagged(MINUTE, MINUTE / 2, 300, 0.01, (once_policy)policy, 60);
        REQUIRE(a != NULL);
        uint64_t state = 3, t = 500000;
        for (int round = 0; round < 3; round++) {
            for (uint64_t e = 0; e < 4000; e++) {
                state = testing_mix(state);
                t += state % 20;
                testing_seen(a, 6, testing_mix(state) % 3000, t - testing_mix(state + 1) % MINUTE);
            }
            once_filter *b = time_window_saved_copy(a);
            REQUIRE(b != NULL);
            CHECK(testing_same_save(a, b));
            CHECK(testing_stats(b).lag_ms == MINUTE / 2);
            uint64_t differ = 0, st2 = state, t2 = t;
            for (uint64_t e = 0; e < 4000; e++) {
                st2 = testing_mix(st2);
                t2 += st2 % 20;
                uint64_t id = testing_mix(st2) % 3000, when = t2 - testing_mix(st2 + 1) % MINUTE;
                differ += testing_seen(a, 7, id, when) != testing_seen(b, 7, id, when);
                differ += testing_present(a, 6, id, when) != testing_present(b, 6, id, when);
            }
            CHECK(differ == 0);
            CHECK(testing_same_save(a, b));
            once_free(b);
        }
        once_free(a);
    }
}

/* A lagged file with its lag or tag width out of range, or a byte changed anywhere:
 * refused or loaded whole, never a crash (the sanitizers watch). */
static void damaged_lagged_files_refused(void)
{
    once_filter *f = make_lagged(MINUTE, MINUTE, 40, 0.01, ONCE_POLICY_FIRST, 70);
    REQUIRE(f != NULL);
    for (uint64_t id = 0; id < 300; id++) /* grows to a second table */
        testing_seen(f, 8, id, 100000 + id * 200 - (id % 5) * 20000);
    size_t len = 0;
    uint8_t *file = testing_save(f, &len);
    once_stats s = testing_stats(f);
    once_free(f);
    REQUIRE(file != NULL && s.filters >= 2);
    uint64_t tables = testing_param_of(file, TAGGED_P_TABLES);
    CHECK(testing_get_le(file + OFF_PARAMS_LEN, 4) ==
          8 * (TAGGED_L_END + TAGGED_T_COUNT * tables));
    CHECK(testing_param_of(file, TAGGED_L_LAG) == MINUTE);
    CHECK(testing_param_of(file, TAGGED_L_TAG_BITS) == 6);
    CHECK_OK(testing_with_param(file, len, TAGGED_L_LAG, MINUTE)); /* resealed as it was */
    CHECK_OK(testing_with_param(file, len, TAGGED_L_LAG, 2 * MINUTE)); /* any lag in range */
    struct {
        int param;
        uint64_t value;
        const char *what;
    } bad[] = {
        {TAGGED_L_LAG, 0, "a lag of 0 in the lagged form"},
        {TAGGED_L_LAG, 2 * MINUTE + 1, "a lag past two spans"},
        {TAGGED_L_LAG, UINT64_MAX, "a lag of 2^64 - 1"},
        {TAGGED_L_TAG_BITS, 5, "5-bit tags with a lag"},
        {TAGGED_L_TAG_BITS, 0, "0-bit tags"},
        {TAGGED_L_TAG_BITS, 7, "7-bit tags"},
        {TAGGED_L_TAG_BITS, UINT64_MAX, "tags of 2^64 - 1 bits"},
        {TAGGED_L_END + TAGGED_T_FP_BITS, 52, "52-bit fingerprints beside 6-bit tags"},
        {TAGGED_L_END + TAGGED_T_BUCKETS, 0, "a table of no buckets"},
        {TAGGED_P_TABLES, tables + 1, "a table more than the words"},
        {TAGGED_P_TABLES, tables - 1, "a table fewer: the words of a lagless file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        once_status st = testing_with_param(file, len, bad[i].param, bad[i].value);
        if (st == ONCE_OK)
            fprintf(stderr, "accepted: %s\n", bad[i].what);
        CHECK(st != ONCE_OK);
    }
    uint64_t refused = 0;
    for (size_t at = 0; at < len; at++) {
        uint8_t *copy = testing_copy_exact(file, len);
        REQUIRE(copy != NULL);
        copy[at] ^= 0x21;
        testing_reseal(copy, len);
        refused += testing_load_and_vet(copy, len) != ONCE_OK;
        free(copy);
    }
    CHECK(refused > 0);
    once_free_buffer(file);
}

/* Batches answer as the one-key calls in array order with late events in them. */
static void batch_matches_single_with_a_lag(void)
{
    enum { EVENTS = 40000 };
    once_filter *batched = make_lagged(MINUTE, MINUTE / 3, 2000, 0.01, ONCE_POLICY_FIRST, 80);
    once_filter *single = make_lagged(MINUTE, MINUTE / 3, 2000, 0.01, ONCE_POLICY_FIRST, 80);
    REQUIRE(batched != NULL && single != NULL);
    testing_key *storage = malloc(EVENTS * sizeof *storage);
    once_key *keys = malloc(EVENTS * sizeof *keys);
    uint64_t state = 11, t = 1000000;
    for (size_t i = 0; i < EVENTS; i++) {
        state = testing_mix(state);
        t += state % 7;
        storage[i] = testing_key_make(9, testing_mix(state) % 6000);
        keys[i] = (once_key){&storage[i], sizeof storage[i],
                             t - testing_mix(state + 1) % (MINUTE / 2)};
    }
    const size_t sizes[] = {1, 7, 64, 300, 1024};
    once_status stopped;
    CHECK(testing_batch_replay(batched, single, keys, EVENTS, sizes, 5, &stopped) == 0);
    CHECK_OK(stopped);
    CHECK(testing_same_save(batched, single));
    free(keys);
    free(storage);
    once_free(batched);
    once_free(single);
}

static const testing_case cases[] = {
    {"no_false_negative_and_fresh_keys_at_the_target_with_producers_lagging",
     no_false_negative_and_fresh_keys_at_the_target_with_producers_lagging},
    {"late_events_judged_at_their_own_time", late_events_judged_at_their_own_time},
    {"refresh_takes_the_later_tick", refresh_takes_the_later_tick},
    {"no_lag_answers_and_saves_as_before", no_lag_answers_and_saves_as_before},
    {"lag_bounds_and_who_takes_one", lag_bounds_and_who_takes_one},
    {"save_mid_stream_then_continue", save_mid_stream_then_continue},
    {"damaged_lagged_files_refused", damaged_lagged_files_refused},
    {"batch_matches_single_with_a_lag", batch_matches_single_with_a_lag},
};

TESTING_MAIN(cases)
