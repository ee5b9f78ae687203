/*
 * test_tagged.c - what the tagged time window (window/tagged.c) promises, on a virtual
 * clock: the default of `once --span`.
 *
 *   - a key delivered within the last T (on the filter's clock) is always reported
 *     seen: constant, doubling and bursting rates, Zipf repeats, late events, idle hours
 *     and jumps of the clock of every size, across the wrap of the 5-bit tags;
 *   - a key is forgotten at most T / 12 (a tick) after its span, whatever the traffic;
 *   - fresh keys are reported seen at most at the target rate (a statistical bound),
 *     also while the filter grows through bursts and after idle hours and rate drops;
 *   - memory: at most 30 bits a key for a span of keys spread or in a burst, and a
 *     span after a burst a first guess too small settles back; a table takes keys
 *     until its live entries fill 80% of its slots, not one more and not one less;
 *   - the memory cap answers ONCE_ERR_FULL and changes nothing; a filter saved
 *     mid-stream continues exactly as the original; damaged files are refused.
 */
#include "time_window.h"

static once_filter *make_tagged(uint64_t span, uint64_t capacity, double error,
                                uint64_t max_bytes, once_policy policy, uint64_t seed)
{
    return time_window_make(ONCE_TAGGED, span, capacity, error, 0, max_bytes, policy, seed);
}


static void no_false_negatives(void)
{
    const phase constant[] = {{180, 1000}};
    const phase doubling[] = {{60, 500}, {60, 1000}, {60, 2000}};
    const phase burst[] = {{60, 1000}, {10, 5000}, {90, 1000}};
    for (int policy = 0; policy < 2; policy++) {
        once_policy p = (once_policy)policy;
        run_phases(ONCE_TAGGED, constant, 1, 150000, 0, p, 0, "constant");
        run_phases(ONCE_TAGGED, doubling, 3, 150000, 1, p, 0, "doubling zipf");
        run_phases(ONCE_TAGGED, burst, 3, 150000, 0, p, 0, "burst");
        run_phases(ONCE_TAGGED, constant, 1, 150000, 1, p, 5 * MINUTE, "out of order");
    }
}

/*
 * The slack, exactly: a key delivered at t0 in tick a = floor(t0 / tick) is seen at
 * every time before t0 + T and gone from tick a + S + 1 on, which is at most a tick
 * (T / 12, rounded up) and 11 ms past t0 + T.  Checked alone in its filter (nothing else can
 * hold it), for spans that divide into 12 ticks and spans that do not.
 */
static void forgotten_within_a_tick_of_the_span(void)
{
    const uint64_t spans[] = {12000, 3600000, 1000, 7, 1};
    for (size_t i = 0; i < sizeof spans / sizeof spans[0]; i++) {
        uint64_t span = spans[i], tick = (span + 11) / 12, ticks = (span + tick - 1) / tick;
        once_filter *f = make_tagged(span, 100, 0.001, 0, ONCE_POLICY_FIRST, 30 + i);
        REQUIRE(f != NULL);
        once_stats s = testing_stats(f);
        CHECK(s.span_ms == span && s.window == span && s.slack == (ticks + 1) * tick - span);
        CHECK(s.slack <= tick + 11); /* S tick - T is under 12 ms: T / 12 rounded up */
        uint64_t state = 5 + i;
        for (int k = 0; k < 40; k++) {
            state = testing_mix(state);
            uint64_t t0 = 1000000 + state % (50 * span + 1);
            once_clear(f);
            CHECK(!testing_seen(f, 1, (uint64_t)k, t0));
            uint64_t gone = (t0 / tick + ticks + 1) * tick;
            CHECK(gone >= t0 + span && gone - (t0 + span) <= s.slack);
            CHECK(testing_present(f, 1, (uint64_t)k, t0 + span - 1));
            CHECK(!testing_present(f, 1, (uint64_t)k, gone));
            if (gone > t0 + span)
                CHECK(testing_present(f, 1, (uint64_t)k, gone - 1));
            /* The same answers from a write's test at those times. */
            once_filter *g = testing_reload(f);
            REQUIRE(g != NULL);
            CHECK(testing_seen(g, 1, (uint64_t)k, t0 + span - 1));
            once_free(g);
            g = testing_reload(f);
            REQUIRE(g != NULL);
            CHECK(!testing_seen(g, 1, (uint64_t)k, gone));
            once_free(g);
        }
        once_free(f);
    }
}

/*
 * Tags are 4 bits, ticks T / 12: a key's tag comes round again 16 ticks later.  A key
 * must stay forgotten however the clock then moves: by one tick at a time with writes
 * in every tick (the sweep's pace), by jumps of every size from 1 to 40 ticks, and
 * across long read-only stretches.  Keys delivered in the span stay seen throughout.
 */
static void tags_never_come_round(void)
{
    const uint64_t span = 12000, tick = 1000;
    for (uint64_t jump = 1; jump <= 40; jump++) {
        once_filter *f = make_tagged(span, 2000, 0.001, 0, ONCE_POLICY_FIRST, jump);
        REQUIRE(f != NULL);
        uint64_t t = 500000, id = 0, old = 0, old_seen = 0;
        /* A full table: 2,000 keys in the first tick (those reported seen, false
         * positives, were not delivered: 0). */
        uint64_t delivered_at[2200] = {0};
        for (; id < 2000; id++)
            delivered_at[id] = testing_seen(f, 2, id, t + id % tick) ? 0 : t + id % tick;
        /* Then the clock moves by `jump` ticks at a time, a few keys each move, for 64
         * ticks: every key delivered is checked at each move. */
        uint64_t clock = t + 1999 % tick;
        for (uint64_t step = 0; step * jump < 64 && id < 2200; step++) {
            clock += jump * tick;
            for (int k = 0; k < 3 && id < 2200; k++, id++)
                delivered_at[id] = testing_seen(f, 2, id, clock) ? 0 : clock;
            for (uint64_t j = 0; j < id; j++) {
                if (delivered_at[j] == 0)
                    continue;
                bool present = testing_present(f, 2, j, clock);
                if (clock - delivered_at[j] < span) {
                    CHECK(present);
                } else if (clock >= (delivered_at[j] / tick + 13) * tick) {
                    old++; /* forgotten: seen only as a false positive */
                    old_seen += present;
                }
            }
        }
        CHECK(old > 2000 && (double)old_seen <= 0.001 * (double)old + 3.0 * sqrt(0.001 * old));
        /* Read-only, far ahead: nothing from before is alive, at any distance. */
        uint64_t ahead_seen = 0;
        for (uint64_t ahead = 1; ahead < 100; ahead++)
            for (uint64_t j = 0; j < 2000; j += 97)
                ahead_seen += testing_present(f, 2, j, clock + ahead * tick + 13 * tick);
        CHECK(ahead_seen == 0);
        once_free(f);
    }
}

/* After an idle stretch longer than span + slack, or a drop of the rate after a
 * burst, the words from before are new again, reported seen at most at the target;
 * and words new to the window over the whole stream, bursts included, also at most at
 * the target (the tables share it: window/tagged.c, "False positives"). */
static void fresh_words_at_the_target_through_bursts_drops_and_idle_hours(void)
{
    const double p = 0.001;
    double worst_gap = 0, worst_drop = 0, worst = 0;
    for (int s = 1; s <= phased_seeds(); s++) {
        phased_rates r = phased_checked(ONCE_TAGGED, 3000 + (uint64_t)s, s, p, 1.0);
        worst_gap = fmax(worst_gap, r.after_gap);
        worst_drop = fmax(worst_drop, r.in_drop);
        worst = fmax(worst, r.fresh);
    }
    printf("tagged, worst over %d seeds: old words after an idle hour %.5f, after a 25x drop "
           "%.5f, all fresh words %.5f (target %.3f)\n",
           phased_seeds(), worst_gap, worst_drop, worst, p);
}

/* The rate of keys never added, at several targets, with the filter at its capacity:
 * within three standard errors of the target and of the filter's own estimate (the
 * union bound of window/tagged.c, which the target bounds). */
static void false_positive_rate_within_the_target(void)
{
    const double targets[] = {0.01, 0.001, 0.0001};
#ifdef ONCE_TESTS_SANITIZED
    const uint64_t probes = 200000;
#else
    const uint64_t probes = 2000000;
#endif
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        double p = targets[i];
        once_filter *f = make_tagged(HOUR, 50000, p, 0, ONCE_POLICY_FIRST, 40 + i);
        REQUIRE(f != NULL);
        for (uint64_t id = 0; id < 50000; id++)
            testing_seen(f, 3, id, id * (HOUR / 50000));
        uint64_t t = HOUR - 1, hits = 0;
        for (uint64_t id = 0; id < probes; id++)
            hits += testing_present(f, 4, id, t);
        double rate = (double)hits / (double)probes, sd = sqrt(p / (double)probes);
        once_stats s = testing_stats(f);
        printf("target %g: measured %.6f, estimate %.6f, %.1f bits a key\n", p, rate,
               s.fpr_estimate, 8.0 * (double)s.bytes / 50000.0);
        CHECK(s.fpr_estimate <= p);
        CHECK(rate <= p + 3 * sd);
        CHECK(rate <= s.fpr_estimate + 3 * sqrt(s.fpr_estimate / (double)probes));
        once_free(f);
    }
}

/*
 * Memory, the targets at a tenth of the bench's keys (bench/span_bench.c has
 * the full run): 10^5 keys a span of one hour at 0.1%, spread over the span or in its
 * first 10 s, hold at most 30 bits a key; a span after the burst, at the same rate
 * spread, still 30.  A first guess a hundred times too small grows, then settles:
 * three spans on, within 1.4 times the steady figure of a right guess.
 */
static void memory_meets_the_targets(void)
{
    const uint64_t keys = 100000;
    double steady = 0;
    for (int form = 0; form < 3; form++) {
        uint64_t capacity = form == 2 ? keys / 100 : keys;
        once_filter *f = make_tagged(HOUR, capacity, 0.001, 0, ONCE_POLICY_FIRST, 50 + form);
        REQUIRE(f != NULL);
        for (uint64_t id = 0; id < keys; id++)
            testing_seen(f, 5, id, form == 1 ? id * 10000 / keys : id * HOUR / keys);
        double peak = 8.0 * (double)once_bytes(f) / (double)keys;
        uint64_t spans = form == 2 ? 3 : 1;
        for (uint64_t id = 0; id < spans * keys; id++)
            testing_seen(f, 6, id, HOUR + 10000 + id * HOUR / keys);
        double later = 8.0 * (double)once_bytes(f) / (double)keys;
        printf("%s: %.1f bits a key, %.1f later\n",
               form == 0 ? "spread" : form == 1 ? "burst" : "a guess 100x small", peak, later);
        if (form < 2)
            CHECK(peak <= 30.0 && later <= 30.0);
        else
            CHECK(later <= 1.4 * steady); /* settled near the figure of a right guess */
        if (form == 0)
            steady = later;
        once_free(f);
    }
}

/* A table takes keys until its live entries fill MAX_LOAD (80%) of its slots, and the
 * next new key opens another table: never past that load, never before it.  The rate
 * rises after more than a span at a low one, so that the limit is reached with expired
 * entries still in the table (they count in `entries`, not among the live) and within
 * a tick, over which the live count is carried rather than summed again. */
static void a_table_opens_when_its_live_entries_fill_the_load(void)
{
    const uint64_t tick = 1000, span = 12 * tick;
    once_filter *f = make_tagged(span, 1000, 0.01, 0, ONCE_POLICY_FIRST, 71);
    REQUIRE(f != NULL);
    once_stats st;
    memset(&st, 0, sizeof st);
    uint64_t id = 0, live_before = 0, limit = 0, opened_at = 0;
    for (uint64_t c = 0; c < 60 && opened_at == 0; c++) {
        uint64_t rate = c < 30 ? 60 : 200; /* keys a tick; the first table holds ~1,080 */
        for (uint64_t j = 0; j < rate && opened_at == 0; j++) {
            testing_seen(f, 9, id++, c * tick + j * tick / rate);
            once_get_stats(f, &st);
            if (st.filters == 1) {
                limit = (uint64_t)(0.8 * (double)st.bits); /* the first table's slots */
                CHECK(st.bits_set <= limit);
                live_before = st.bits_set;
            } else {
                opened_at = c;
                CHECK(live_before == limit);
            }
        }
    }
    CHECK(opened_at >= 30); /* at the higher rate, with expired entries in the table */
    once_free(f);
}

/* A cap too small for a burst: ONCE_ERR_FULL, nothing changed (the same saved bytes),
 * every key taken before still seen. */
static void memory_cap_refuses_and_keeps_state(void)
{
    once_filter *f = make_tagged(HOUR, 1000, 0.01, 16 * 1024, ONCE_POLICY_FIRST, 12);
    REQUIRE(f != NULL);
    time_window_cap_refuses_and_keeps_state(f, 16 * 1024, 7);
}

/* Saved mid-stream (while growing and settling, under both policies) and loaded, it
 * answers and saves exactly as the original from then on; every cut of the file is
 * refused. */
static void save_mid_stream_then_continue(void)
{
    for (int policy = 0; policy < 2; policy++) {
        once_filter *a = make_tagged(10 * MINUTE, 200, 0.01, 0, (once_policy)policy, 13);
        REQUIRE(a != NULL);
        uint64_t t = 0, state = 1;
        for (int i = 0; i < 30000; i++) {
            t += 30 + (uint64_t)(i % 7) * 10;
            state = testing_mix(state);
            testing_seen(a, 8, state % 4000, t);
        }
        CHECK(testing_stats(a).filters >= 1);
        once_filter *b = time_window_saved_copy(a);
        REQUIRE(b != NULL);
        uint64_t differ = 0;
        for (int i = 0; i < 60000; i++) {
            t += i % 1000 == 999 ? 7 * MINUTE : 30 + (uint64_t)(i % 11) * 10;
            state = testing_mix(state);
            differ += testing_seen(a, 8, state % 4000, t) != testing_seen(b, 8, state % 4000, t);
        }
        CHECK(differ == 0);
        CHECK(testing_same_save(a, b));
        once_free(a);
        once_free(b);
    }
}

/* Every byte of a saved filter changed, one at a time: the load refuses it or gives a
 * filter that answers, saves and takes keys (the sanitizers watch). */
static void every_byte_changed_loads_or_is_refused(void)
{
    once_filter *f = make_tagged(MINUTE, 30, 0.01, 0, ONCE_POLICY_FIRST, 14);
    REQUIRE(f != NULL);
    for (uint64_t id = 0; id < 200; id++)
        testing_seen(f, 9, id, id * 400);
    size_t len = 0;
    uint8_t *file = testing_save(f, &len);
    REQUIRE(file != NULL);
    uint64_t refused = 0;
    for (size_t at = 0; at < len; at++) {
        for (int flip = 0; flip < 2; flip++) {
            uint8_t *copy = testing_copy_exact(file, len);
            REQUIRE(copy != NULL);
            copy[at] ^= flip ? 0xff : 0x10;
            once_filter *g = NULL;
            if (once_load(&g, copy, len) == ONCE_OK) {
                bool present;
                once_query(g, "x", 1, 100000, &present);
                once_add(g, "y", 1, 100000);
                size_t again = 0;
                uint8_t *saved = testing_save(g, &again);
                once_free_buffer(saved);
                once_free(g);
            } else {
                refused++;
            }
            free(copy);
        }
    }
    CHECK(refused > 0);
    once_free_buffer(file);
    once_free(f);
}

/* Every parameter out of its range (docs/FORMAT.md, 6.9), in a file resealed as a
 * writer who means harm would: refused, and nothing allocated from it (the sanitizers
 * and the allocation limit of the fuzzer watch the sizes). */
static void hostile_params_refused(void)
{
    once_filter *f = make_tagged(MINUTE, 40, 0.01, 1 << 20, ONCE_POLICY_FIRST, 16);
    REQUIRE(f != NULL);
    for (uint64_t id = 0; id < 200; id++) /* grows to a second table */
        testing_seen(f, 13, id, 1000 + id * 10);
    size_t len = 0;
    uint8_t *file = testing_save(f, &len);
    once_stats s = testing_stats(f);
    once_free(f);
    REQUIRE(file != NULL && s.filters >= 2);
    REQUIRE(testing_get_le(file + OFF_TYPE, 2) == ONCE_TAGGED);
    REQUIRE(testing_param_of(file, TAGGED_P_TABLES) == s.filters);
    uint64_t span = testing_param_of(file, TAGGED_P_SPAN);
    uint64_t latest = testing_param_of(file, TAGGED_P_LATEST);
    CHECK_OK(testing_with_param(file, len, TAGGED_P_SPAN, span)); /* resealed, as it was */
    const int t0 = TAGGED_P_COUNT, t1 = TAGGED_P_COUNT + TAGGED_T_COUNT;
    uint64_t buckets = testing_param_of(file, t0 + TAGGED_T_BUCKETS);
    struct {
        int param;
        uint64_t value;
        const char *what;
    } bad[] = {
        {TAGGED_P_SPAN, 0, "span 0"},
        {TAGGED_P_SPAN, (UINT64_C(1) << 40) + 1, "span past the limit"},
        {TAGGED_P_SPAN, span * 2, "span whose tick differs"},
        {TAGGED_P_TICK, testing_param_of(file, TAGGED_P_TICK) + 1, "tick off by one"},
        {TAGGED_P_POLICY, 2, "policy 2"},
        {TAGGED_P_ERROR, 0, "error 0"},
        {TAGGED_P_ERROR, UINT64_C(0x3ff0000000000000), "error 1"},
        {TAGGED_P_ERROR, UINT64_C(0x7ff8000000000000), "error NaN"},
        {TAGGED_P_PLAN_BUCKETS, 0, "no planned buckets"},
        {TAGGED_P_PLAN_BUCKETS, (UINT64_C(1) << 62) + 4, "planned buckets that wrap"},
        {TAGGED_P_MAX_BYTES, 0, "cap 0"},
        {TAGGED_P_MAX_BYTES, 100, "a cap below the tables"},
        {TAGGED_P_LATEST, UINT64_MAX, "clock 2^64 - 1"},
        {TAGGED_P_LATEST, 0, "clock before the tables opened"},
        {TAGGED_P_STARTED, 2, "started 2"},
        {TAGGED_P_STARTED, 0, "not started, with entries"},
        {TAGGED_P_MAX_TIME_JUMP, UINT64_MAX, "jump bound 2^64 - 1"},
        {TAGGED_P_TABLES, 0, "no tables"},
        {TAGGED_P_TABLES, 65, "65 tables"},
        {TAGGED_P_TABLES, s.filters + 1, "a table more than the words"},
        {t0 + TAGGED_T_BUCKETS, 0, "a table of no buckets"},
        {t0 + TAGGED_T_BUCKETS, (UINT64_C(1) << 62) + buckets, "buckets whose slots wrap "
                                                                "to the payload's"},
        {t0 + TAGGED_T_BUCKETS, UINT64_MAX, "buckets 2^64 - 1"},
        {t0 + TAGGED_T_BUCKETS, buckets * 4, "buckets for a longer payload"},
        {t0 + TAGGED_T_FP_BITS, 0, "fingerprints of 0 bits"},
        {t0 + TAGGED_T_FP_BITS, 54, "fingerprints of 54 bits"},
        {t0 + TAGGED_T_FP_BITS, 60, "fingerprints of 60 bits"},
        {t0 + TAGGED_T_CURSOR, buckets + 1, "cursor past the buckets"},
        {t0 + TAGGED_T_OPENED, latest + 1, "opened after the clock"},
        {t1 + TAGGED_T_BUCKETS, (UINT64_C(1) << 62) + testing_param_of(file, t1),
         "second table's buckets wrap"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        once_status st = testing_with_param(file, len, bad[i].param, bad[i].value);
        if (st == ONCE_OK)
            fprintf(stderr, "accepted: %s\n", bad[i].what);
        CHECK(st != ONCE_OK);
    }
    /* A planned size far past the tables (within the limits) and a cap that allows it:
     * the file loads, and a jump of the clock, after which the tables would settle,
     * allocates nothing near the planned size (settling only ever saves memory). */
    uint8_t *big = testing_copy_exact(file, len);
    testing_put_le(big + HEADER + 8 * TAGGED_P_PLAN_BUCKETS, UINT64_C(1) << 26, 8);
    testing_put_le(big + HEADER + 8 * TAGGED_P_MAX_BYTES, UINT64_C(1) << 60, 8);
    testing_reseal(big, len);
    once_filter *loaded = NULL;
    CHECK_OK(once_load(&loaded, big, len));
    if (loaded != NULL) {
        uint64_t before = once_bytes(loaded);
        CHECK_OK(once_set_max_time_jump(loaded, 0));
        bool seen = true;
        CHECK_OK(once_test_and_add(loaded, "k", 1, latest + 100 * MINUTE, &seen));
        CHECK(!seen && once_bytes(loaded) <= before);
        once_free(loaded);
    }
    free(big);
    /* An entry expired at the clock, or with fingerprint 0, where the writer writes 0. */
    size_t payload = saved_payload_len_offset(file) + 8;
    size_t at = payload;
    while (at < len - 8 && file[at] == 0 && file[at + 1] == 0)
        at++;
    REQUIRE(at < len - 8);
    uint8_t *copy = testing_copy_exact(file, len);
    copy[at] ^= 0x0f; /* the first non-zero entry's tag bits, or a fingerprint's */
    testing_reseal(copy, len);
    once_filter *g = NULL;
    once_status st = once_load(&g, copy, len);
    if (st == ONCE_OK) { /* a tag still alive: it answers and saves */
        CHECK(testing_stats(g).type == ONCE_TAGGED);
        once_free(g);
    }
    free(copy);
    once_free_buffer(file);
}

/* The clock is the latest time written, whether the key was new or a repeat, moving its
 * tick or not; and the bound on jumps is measured from it. */
static void clock_is_the_latest_time_written(void)
{
    /* a span of 2 minutes: ticks of 10 s */
    once_filter *f = make_tagged(2 * MINUTE, 1000, 0.01, 0, ONCE_POLICY_FIRST, 3);
    REQUIRE(f != NULL);
    CHECK_OK(once_set_max_time_jump(f, 15000));
    const uint64_t times[] = {1000, 9000, 9500, 9400, 21000};
    const char *keys[] = {"a", "b", "a", "c", "d"};
    const uint64_t clocks[] = {1000, 9000, 9500, 9500, 21000};
    for (int i = 0; i < 5; i++) {
        bool seen = false;
        CHECK_OK(once_test_and_add(f, keys[i], 1, times[i], &seen));
        CHECK(seen == (i == 2));
        uint64_t clock = 0;
        bool started = false;
        CHECK_OK(once_clock(f, &clock, &started));
        CHECK(started && clock == clocks[i]);
    }
    /* 15 s past 21 s is the bound; a new key a millisecond beyond it is refused */
    bool seen = false;
    CHECK(once_test_and_add(f, "e", 1, 36001, &seen) == ONCE_ERR_TIME);
    CHECK_OK(once_test_and_add(f, "e", 1, 36000, &seen));
    once_free(f);
}

/* Batches answer as the one-key calls in array order, times included, also while
 * tables open mid-batch (a capacity far below the keys of a span: the batch loop's
 * requests for the older tables are made from a state the writes between change). */
static void batch_matches_single(void)
{
    for (int config = 0; config < 2; config++) {
        uint64_t capacity = config == 0 ? 300 : 20;
        once_filter *a = make_tagged(MINUTE, capacity, 0.01, 0, ONCE_POLICY_FIRST, 15);
        once_filter *b = make_tagged(MINUTE, capacity, 0.01, 0, ONCE_POLICY_FIRST, 15);
        REQUIRE(a != NULL && b != NULL);
        enum { N = 256 };
        static testing_key keys[N];
        once_key batch[N];
        uint8_t answers[N];
        uint64_t t = 1000000, state = 3, differ = 0;
        uint32_t most_tables = 0;
        for (int round = 0; round < 100; round++) {
            for (int i = 0; i < N; i++) {
                state = testing_mix(state);
                t += state % 500;
                keys[i] = testing_key_make(10, state % 3000);
                batch[i] = (once_key){&keys[i], sizeof keys[i], t - state % 700};
            }
            CHECK_OK(once_test_and_add_batch(a, batch, N, answers));
            for (int i = 0; i < N; i++) {
                bool seen = false;
                CHECK_OK(once_test_and_add(b, &keys[i], sizeof keys[i], batch[i].time_ms, &seen));
                differ += seen != (answers[i] != 0);
            }
            CHECK_OK(once_query_batch(a, batch, N, answers));
            for (int i = 0; i < N; i++) {
                bool present = false;
                CHECK_OK(once_query(b, &keys[i], sizeof keys[i], batch[i].time_ms, &present));
                differ += present != (answers[i] != 0);
            }
            once_stats st;
            once_get_stats(a, &st);
            if (st.filters > most_tables)
                most_tables = st.filters;
        }
        CHECK(differ == 0);
        CHECK(testing_same_save(a, b));
        /* the small capacity grew to several tables; the large one may stay at one */
        CHECK(config == 0 || most_tables >= 3);
        once_free(a);
        once_free(b);
    }
}

/* One clock (once.h, "Event time"): a far-future outlier is refused and changes
 * nothing; a late event is delivered at the clock and kept a span from there; the
 * window at t is (t - T, t]. */
static void one_clock_for_outliers_late_events_and_the_boundary(void)
{
    const uint64_t s = 1200; /* a tick of 100 ms */
    once_filter *f = make_tagged(10 * s, 1000, 0.001, 0, ONCE_POLICY_FIRST, 21);
    REQUIRE(f != NULL);
    bool seen = true;
    CHECK_OK(once_test_and_add(f, "A", 1, 1000 * s, &seen));
    CHECK(!seen);
    CHECK_STATUS(once_test_and_add(f, "X", 1, 4102444800000, &seen), ONCE_ERR_TIME);
    uint64_t clock = 0;
    bool started = false;
    CHECK_OK(once_clock(f, &clock, &started));
    CHECK(started && clock == 1000 * s);
    CHECK_OK(once_test_and_add(f, "A", 1, 1009 * s, &seen));
    CHECK(seen);
    CHECK_OK(once_test_and_add(f, "Y", 1, 1100 * s, &seen));
    CHECK_OK(once_test_and_add(f, "L", 1, 1006 * s, &seen)); /* late: at 1100 s */
    CHECK(!seen);
    CHECK_OK(once_query(f, "L", 1, 1109 * s, &seen));
    CHECK(seen);
    CHECK_OK(once_test_and_add(f, "A", 1, 1101 * s, &seen));
    CHECK(!seen);
    once_free(f);

    f = make_tagged(12000, 1000, 0.001, 0, ONCE_POLICY_FIRST, 23);
    REQUIRE(f != NULL);
    CHECK_OK(once_test_and_add(f, "K", 1, 500000, &seen));
    CHECK_OK(once_test_and_add(f, "K", 1, 512000 - 1, &seen));
    CHECK(seen);
    CHECK_OK(once_test_and_add(f, "K", 1, 513000, &seen)); /* tick 500 + 13 */
    CHECK(!seen);
    once_free(f);
}

/* Under the refresh policy a repeat restarts its key's span; under first delivery it
 * does not. */
static void refresh_restarts_the_span(void)
{
    for (int policy = 0; policy < 2; policy++) {
        once_filter *f = make_tagged(12000, 100, 0.001, 0, (once_policy)policy, 24);
        REQUIRE(f != NULL);
        CHECK(!testing_seen(f, 11, 1, 100000));
        CHECK(testing_seen(f, 11, 1, 110000));
        bool later = testing_present(f, 11, 1, 120000);
        CHECK(later == (policy == ONCE_POLICY_REFRESH));
        once_free(f);
    }
}

/* Entries of every width the targets give (f + 4 bits: 8 at 10%, 40 at 1e-9), packed
 * across word edges at every offset: every key added is found, in a table grown past
 * its first size and at every load up to full, and an absent key only at the target. */
static void every_entry_width_keeps_its_keys(void)
{
    const double targets[] = {0.2, 0.1, 0.03, 0.01, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6,
                              1e-7, 1e-8, 1e-9};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        once_filter *f = make_tagged(HOUR, 500, targets[i], 0, ONCE_POLICY_FIRST, 60 + i);
        REQUIRE(f != NULL);
        uint64_t missing = 0, dropped = 0;
        for (uint64_t id = 0; id < 3000; id++) {
            dropped += testing_seen(f, 12, id, 1000 + id);
            if (id % 7 == 0)
                for (uint64_t j = 0; j <= id; j += 13)
                    missing += !testing_present(f, 12, j, 1000 + id);
        }
        for (uint64_t j = 0; j < 3000; j++)
            missing += !testing_present(f, 12, j, 5000);
        if (missing)
            fprintf(stderr, "target %g: %" PRIu64 " keys added and not found\n", targets[i],
                    missing);
        CHECK(missing == 0);
        CHECK((double)dropped <= targets[i] * 3000 + 3 * sqrt(targets[i] * 3000) + 1);
        CHECK(testing_stats(f).filters >= 2); /* grown past 500 keys */
        once_free(f);
    }
}

/* A sparse stream over a large table (a replay of a day at a short span): the passes
 * sweep the buckets the writes logged, not the table, and that changes nothing of
 * what the filter answers or saves.  The same stream into the same filter capped at its
 * table's bytes, which leaves no room for a log, answers and saves alike at every
 * step, through pass ends, jumps within K and past it, and a burst that overflows the
 * log (the table dense again, then sparse once a whole pass finds it so). */
static void a_sparse_table_sweeps_its_log_and_answers_as_without(void)
{
    const uint64_t span = 12000, tick = 1000;
    once_filter *logged = make_tagged(span, 100000, 0.001, 0, ONCE_POLICY_FIRST, 7);
    REQUIRE(logged != NULL);
    const uint64_t no_room = once_bytes(logged) - 1; /* the table alone, not its log */
    once_filter *plain = make_tagged(span, 100000, 0.001, no_room, ONCE_POLICY_FIRST, 7);
    REQUIRE(plain != NULL);
    uint64_t rng = 42, t = 1000000, id = 0, logged_larger = 0;
    enum { KEYS = 3000 };
    static uint64_t delivered_at[KEYS];
    memset(delivered_at, 0, sizeof delivered_at);
    for (int event = 0; event < 20000; event++) {
        uint64_t r = testing_mix(rng++);
        uint64_t gap = r % 100 < 80   ? r % (tick / 2)            /* within the tick */
                       : r % 100 < 95 ? (2 + r % 9) * tick        /* a jump within K */
                                      : (14 + r % 60) * tick;     /* past K */
        t += gap;
        bool burst = event == 10000; /* past the log's room at once, within a tick */
        for (int k = 0; k < (burst ? 1500 : 1); k++) {
            uint64_t key = burst ? KEYS + (uint64_t)k : (testing_mix(r ^ 9) >> 3) % KEYS;
            twin_seen(logged, plain, 3, key, t, span, key < KEYS ? &delivered_at[key] : NULL);
        }
        id++;
        logged_larger += once_bytes(logged) > once_bytes(plain);
        if (event % 1000 == 999)
            CHECK(testing_same_save_but_cap(logged, plain));
    }
    CHECK(id == 20000 && logged_larger > 10000); /* the log was kept most of the stream */
    once_free(logged);
    once_free(plain);
}

/* The saved cursors of a filter's tables: are they all at their tables' ends? */
static bool passes_done(const once_filter *f, bool lagged)
{
    size_t len = 0;
    uint8_t *file = testing_save(f, &len);
    if (file == NULL)
        return false;
    uint64_t tables = testing_param_of(file, TAGGED_P_TABLES);
    int first = lagged ? TAGGED_L_END : TAGGED_P_COUNT;
    bool done = true;
    for (uint64_t i = 0; i < tables; i++) {
        int at = first + (int)i * TAGGED_T_COUNT;
        done &= testing_param_of(file, at + TAGGED_T_CURSOR) ==
                testing_param_of(file, at + TAGGED_T_BUCKETS);
    }
    once_free_buffer(file);
    return done;
}

/* A table planned for far more keys than a pass brings writes (a write's SWEEP_STEP
 * buckets would leave most of its pass to the write that ends it) paces its passes:
 * by the last tick of every pass the writes have swept all of it (the saved cursors
 * are at the tables' ends).  The step follows the kept entries alone, so copies saved
 * and loaded anywhere in the stream, under either policy and with a lag, answer, step
 * and save as the original. */
static void a_large_table_paces_its_passes_and_copies_step_alike(void)
{
    const uint64_t span = 12000, tick = 1000;
    for (int variant = 0; variant < 3; variant++) {
        once_policy policy = variant == 1 ? ONCE_POLICY_REFRESH : ONCE_POLICY_FIRST;
        uint64_t lag = variant == 2 ? span : 0;
        once_config c = time_window_config(ONCE_TAGGED, span, 100000, 0.001, 0, 0, policy, 21);
        c.lag_ms = lag;
        once_filter *a = testing_create(&c);
        REQUIRE(a != NULL);
        enum { COPIES = 7, EVENTS = 40000 };
        once_filter *copy[COPIES] = {NULL};
        bool fresh[COPIES] = {false};
        int copies = 0;
        uint64_t rng = 5, t = 1000000, id = 0, checked = 0, unfinished = 0, differ = 0;
        uint64_t tick_of_last = t / tick, in_tick = 0;
        for (int event = 0; event < EVENTS; event++) {
            /* Copies halfway through the second tick of every third pass (its sweep under
             * way, the tick's refreshes and late writes so far in the copy's step): each is
             * compared as the next tick begins, before the pass's end hides a cursor apart. */
            uint64_t now_tick = t / tick;
            if (now_tick % 10 == 1 && now_tick / 10 % 3 == 0 && in_tick == 80 && copies < COPIES) {
                fresh[copies] = true;
                copy[copies++] = time_window_saved_copy(a);
            }
            uint64_t r = testing_mix(rng++);
            t += 4 + r % 5; /* 6 ms apart: 2,000 keys a span, for 100,000 planned */
            uint64_t key = r % 10 < 3 && id > 500 ? id - r % 500 : id++; /* 30% repeats */
            uint64_t at = lag != 0 && r % 7 == 0 ? t - (r >> 20) % lag : t;
            bool seen = testing_seen(a, 22, key, at);
            for (int i = 0; i < copies; i++)
                differ += testing_seen(copy[i], 22, key, at) != seen;
            in_tick++;
            if (t / tick == tick_of_last)
                continue;
            in_tick = 0;
            tick_of_last = t / tick;
            if (t / tick % 10 == 9) { /* a pass's last tick */
                checked++;
                unfinished += !passes_done(a, lag != 0);
            }
            for (int i = 0; i < copies; i++)
                if (fresh[i]) {
                    fresh[i] = false;
                    differ += !testing_same_save(a, copy[i]);
                }
        }
        CHECK(checked >= 20 && copies == COPIES && unfinished == 0 && differ == 0);
        if (unfinished != 0 || differ != 0)
            fprintf(stderr, "variant %d: %llu of %llu passes unfinished at their last tick, "
                    "%llu answers or saves of the copies apart\n", variant,
                    (unsigned long long)unfinished, (unsigned long long)checked,
                    (unsigned long long)differ);
        for (int i = 0; i < copies; i++) {
            CHECK(testing_same_save(a, copy[i]));
            once_free(copy[i]);
        }
        once_free(a);
    }
}

/* A pass that began over a whole log visits the buckets logged then, in step with its
 * cursor, instead of the table's; if the log is lost partway (a burst past its room),
 * the pass's end still visits the rest of them.  Else the entries there outlive the
 * pass that must remove them, and a pass later their 5-bit tags wrap and read as new:
 * keys delivered at tick 17, forgotten from tick 30, found again when the clock jumps
 * from tick 40 to 49 (within a pass: no sweep).  (A table of about 34,000 buckets, its
 * log 1,057.  700 keys logged at tick 11, ahead of those of tick 17, and refreshed at
 * tick 22 slow the pacing of the pass from tick 30, so that the burst then loses the
 * log with two thirds of the pass done and the keys of tick 17 not yet visited.) */
static void a_log_lost_mid_pass_still_ends_its_pass(void)
{
    const uint64_t tick = 1000;
    once_filter *f = make_tagged(12 * tick, 100000, 0.001, 0, ONCE_POLICY_REFRESH, 31);
    REQUIRE(f != NULL);
    enum { OLD = 200, EARLY = 700, BURST = 200 };
    uint64_t filler = 0;
    for (uint64_t c = 0; c <= 49; c++) {
        if (c > 40 && c < 49)
            continue; /* then a jump within the pass from tick 40, which sweeps nothing */
        testing_seen(f, 42, filler++, c * tick + 100); /* until then the clock never jumps */
        for (uint64_t k = 0; c == 11 && k < EARLY; k++)
            testing_seen(f, 43, k, c * tick + 200);
        for (uint64_t k = 0; c == 17 && k < OLD; k++)
            CHECK(!testing_seen(f, 41, k, c * tick + 200));
        for (uint64_t k = 0; c == 22 && k < EARLY; k++) /* refreshed: ages 1..12 at 30 */
            CHECK(testing_seen(f, 43, k, c * tick + 200));
        for (uint64_t k = 0; c == 30 && k < BURST; k++)
            testing_seen(f, 44, k, c * tick + 200);
    }
    uint64_t found = 0;
    for (uint64_t k = 0; k < OLD; k++)
        found += testing_present(f, 41, k, 49 * tick + 500);
    CHECK(found <= 3); /* false positives alone: 0.2 expected at 0.001 */
    if (found > 3)
        fprintf(stderr, "%llu of %d keys forgotten at tick 30 found at tick 49\n",
                (unsigned long long)found, OLD);
    once_free(f);
}

/* A pause in the stream moves the clock many ticks at once.  Keys that died after their
 * pass swept their buckets wait for the next pass; a pause of 11 ticks (under the span
 * of 12) brings those of tick 8, age 21 at tick 29, to age 32, where their 5-bit tags
 * would read as new: they must leave before the clock moves, and none be found. */
static void a_pause_of_most_of_a_span_brings_no_tag_round(void)
{
    const uint64_t tick = 1000;
    once_filter *f = make_tagged(12 * tick, 5000, 0.001, 0, ONCE_POLICY_FIRST, 33);
    REQUIRE(f != NULL);
    enum { A_TICK = 200 };
    for (uint64_t c = 0; c <= 29; c++)
        for (uint64_t k = 0; k < A_TICK; k++)
            testing_seen(f, 50 + c, k, c * tick + k * (tick / A_TICK));
    testing_seen(f, 99, 0, 40 * tick); /* the pause: from tick 29 to 40 */
    uint64_t found = 0;
    for (uint64_t k = 0; k < A_TICK; k++)
        found += testing_present(f, 50 + 8, k, 40 * tick + 1);
    CHECK(found <= 3); /* false positives alone */
    if (found > 3)
        fprintf(stderr, "%llu of %d keys of tick 8 found at tick 40\n",
                (unsigned long long)found, A_TICK);
    once_free(f);
}

/* The first table's saved sweep cursor, and its buckets (*buckets). */
static uint64_t first_cursor(const once_filter *f, uint64_t *buckets)
{
    size_t len = 0;
    uint8_t *file = testing_save(f, &len);
    if (file == NULL)
        return UINT64_MAX;
    uint64_t cursor = testing_param_of(file, TAGGED_P_COUNT + TAGGED_T_CURSOR);
    *buckets = testing_param_of(file, TAGGED_P_COUNT + TAGGED_T_BUCKETS);
    once_free_buffer(file);
    return cursor;
}

/* A pause of 9 to 11 ticks that crosses the end of a pass carries a large table's pass
 * under way over the writes after it, rather than sweeping the rest of the table in
 * the write after the pause (milliseconds at 10^7 keys); what keeps the ages exact
 * is the tags' own rule (a_pause_of_most_of_a_span_brings_no_tag_round).  Copies
 * loaded every 500 events answer every later event alike and save the same bytes, no
 * key delivered within its span is new again, and the pass is seen carried: the write
 * after such a pause leaves the cursor past where it stood. */
static void a_pause_carries_the_pass_under_way(void)
{
    const uint64_t tick = 1000, span = 12 * tick;
    once_filter *a = make_tagged(span, 1000000, 0.001, 0, ONCE_POLICY_FIRST, 35);
    REQUIRE(a != NULL);
    once_filter *copy = NULL;
    enum { KEYS = 30000 };
    static uint64_t delivered_at[KEYS];
    memset(delivered_at, 0, sizeof delivered_at);
    uint64_t rng = 23, t = 1000000, carried = 0, crossings = 0, differ = 0, last = 0;
    for (uint64_t event = 0; event < 120000; event++) {
        uint64_t r = testing_mix(rng++);
        /* pauses early in a pass (its second tick), where most of it is still to sweep,
         * into the next one */
        bool early = t / tick % 10 == 1 && event - last > 1000;
        uint64_t pause = early ? (9 + r % 3) * tick : r % 3;
        last = early ? event : last;
        if (event % 500 == 0) {
            copy = time_window_copy_again(a, copy, &differ);
            REQUIRE(copy != NULL);
        }
        uint64_t buckets = 0, before = pause > tick ? first_cursor(a, &buckets) : 0;
        bool crosses = (t + pause) / tick / 10 != t / tick / 10;
        t += pause;
        uint64_t key = (testing_mix(r ^ 3) >> 3) % KEYS;
        twin_seen(a, copy, 6, key, t, span, &delivered_at[key]);
        if (pause > tick && crosses && before > 0 && before < buckets) { /* under way */
            crossings++;
            carried += first_cursor(a, &buckets) > before;
        }
    }
    CHECK(differ == 0 && crossings >= 10 && carried == crossings);
    if (differ != 0 || crossings < 10 || carried != crossings)
        fprintf(stderr, "%llu saves apart; %llu of %llu pauses across a pass's end carried it\n",
                (unsigned long long)differ, (unsigned long long)carried,
                (unsigned long long)crossings);
    once_free(copy);
    once_free(a);
}

/* A span of 5 ms (a tick of 1 ms, K = 5 < P): writes 2 ms apart cross every pass's end
 * with a move of 2 ticks, so every pass is carried and entries age up to the tags'
 * rule; then a move of 6 ticks (past K) within one pass's ticks.  Every key written
 * before it is dead, and none may read as alive after it (their ages would pass 2^g
 * and come round): such a move empties the tables wherever it falls. */
static void a_move_past_the_span_within_a_pass_forgets_every_key(void)
{
    uint64_t found = 0, control = 0;
    for (uint64_t trial = 0; trial < 200; trial++) {
        once_filter *f = make_tagged(5, 1000, 0.001, 0, ONCE_POLICY_FIRST, 1);
        REQUIRE(f != NULL);
        testing_seen(f, 60, trial, 0);
        for (uint64_t t = 1; t <= 31; t += 2)
            testing_seen(f, 61 + trial, t, t);
        testing_seen(f, 62, trial, 37); /* ticks 31 to 37: both in the pass of 30..39 */
        found += testing_present(f, 60, trial, 37);
        control += testing_present(f, 63, trial, 37);
        once_free(f);
    }
    CHECK(found <= 3 && control <= 3); /* false positives alone: 0.2 expected at 0.001 */
    if (found > 3 || control > 3)
        fprintf(stderr, "%llu of 200 keys dead for 37 ms found (never written: %llu)\n",
                (unsigned long long)found, (unsigned long long)control);
}

static void invalid_configs(void)
{
    once_config c;
    once_config_init(&c, ONCE_TAGGED);
    once_filter *f = NULL;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_NO_WINDOW);
    c.span_ms = 1000;
    c.capacity = 0;
    CHECK(once_create(&f, &c) != ONCE_OK);
    c.capacity = 100;
    c.error = 0;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_RATE);
    c.error = 0.01;
    c.max_bytes = 100; /* less than the first table */
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_TOO_LARGE);
    c.max_bytes = 0;
    CHECK_OK(once_create(&f, &c));
    once_stats s = testing_stats(f);
    CHECK(s.type == ONCE_TAGGED && strcmp(s.structure, "tagged") == 0 && s.filters == 1);
    once_free(f);
}

static const testing_case cases[] = {
    {"no_false_negatives", no_false_negatives},
    {"forgotten_within_a_tick_of_the_span", forgotten_within_a_tick_of_the_span},
    {"tags_never_come_round", tags_never_come_round},
    {"fresh_words_at_the_target_through_bursts_drops_and_idle_hours",
     fresh_words_at_the_target_through_bursts_drops_and_idle_hours},
    {"false_positive_rate_within_the_target", false_positive_rate_within_the_target},
    {"memory_meets_the_targets", memory_meets_the_targets},
    {"a_table_opens_when_its_live_entries_fill_the_load",
     a_table_opens_when_its_live_entries_fill_the_load},
    {"memory_cap_refuses_and_keeps_state", memory_cap_refuses_and_keeps_state},
    {"save_mid_stream_then_continue", save_mid_stream_then_continue},
    {"every_byte_changed_loads_or_is_refused", every_byte_changed_loads_or_is_refused},
    {"hostile_params_refused", hostile_params_refused},
    {"clock_is_the_latest_time_written", clock_is_the_latest_time_written},
    {"batch_matches_single", batch_matches_single},
    {"one_clock_for_outliers_late_events_and_the_boundary",
     one_clock_for_outliers_late_events_and_the_boundary},
    {"refresh_restarts_the_span", refresh_restarts_the_span},
    {"every_entry_width_keeps_its_keys", every_entry_width_keeps_its_keys},
    {"invalid_configs", invalid_configs},
    {"a_sparse_table_sweeps_its_log_and_answers_as_without",
     a_sparse_table_sweeps_its_log_and_answers_as_without},
    {"a_large_table_paces_its_passes_and_copies_step_alike",
     a_large_table_paces_its_passes_and_copies_step_alike},
    {"a_log_lost_mid_pass_still_ends_its_pass", a_log_lost_mid_pass_still_ends_its_pass},
    {"a_pause_of_most_of_a_span_brings_no_tag_round",
     a_pause_of_most_of_a_span_brings_no_tag_round},
    {"a_pause_carries_the_pass_under_way", a_pause_carries_the_pass_under_way},
    {"a_move_past_the_span_within_a_pass_forgets_every_key",
     a_move_past_the_span_within_a_pass_forgets_every_key},
};

TESTING_MAIN(cases)
