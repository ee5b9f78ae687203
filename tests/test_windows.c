/*
 * test_windows.c - what the count-window structures (APBF, APBBF) promise.
 *
 *   - the recurrence F of paper 001 reproduces Table 2's "actual fp" column and the
 *     access recurrence A its "query false" column; the APBBF rates reproduce Table 3;
 *   - a key delivered within the window is always reported seen (no false negatives),
 *     under both policies, for random and Zipf streams with duplicates;
 *   - measured on the filter in steady state, the false-positive rate averaged over a
 *     generation and the rate just before a shift agree with the formula at the
 *     filter's real fills, and with the table wherever the paper's linear-ramp fill
 *     assumption holds (see check_measured_rate);
 *   - the planner meets the target for every level, and a filter saved mid-stream and
 *     loaded continues exactly as the original.
 */
#include "once.h"
#include "paper_tables.h"
#include "testing.h"

/* ------------------------------------------------------------- tables */

static once_filter *make_window(once_type type, uint32_t k, uint32_t l, uint32_t block_bits,
                                uint32_t block_hashes, uint64_t window, once_policy policy,
                                uint64_t seed)
{
    once_config c;
    once_config_init(&c, type);
    c.hashes = k;
    c.age_slices = l;
    c.block_bits = block_bits;
    c.block_hashes = block_hashes;
    c.window = window;
    c.policy = policy;
    c.seed = seed;
    c.seed_is_set = true;
    return testing_create(&c);
}

/* --------------------------------------------------------- recurrences */

static void apbf_recurrence_reproduces_table2(void)
{
    for (size_t r = 0; r < PAPER_TABLE2_ROWS; r++) {
        const paper_table2_row *row = &paper_table2[r];
        double f = once_apbf_fpr(row->k, row->l);
        /* The table prints six decimals; F must round to the printed value. */
        double printed = f;
        if (row->k == 13 && row->l == 23) {
            /* The paper's row (13, 23) prints F(13, 22): F(13, 23) = 0.000990 (checked
             * by an independent recursion), and F(13, 22) = 0.000928 exactly as
             * printed.  Its accesses column (4.20) is that of (13, 23). */
            CHECK(fabs(f - 0.0009895) < 5e-8);
            printed = once_apbf_fpr(13, 22);
        }
        if (fabs(printed - row->fp) > 0.5e-6 + 1e-12) {
            fprintf(stderr, "(%u,%u): F = %.7f, table %.6f\n", row->k, row->l, printed, row->fp);
            CHECK(0);
        }
        /* Four significant digits wherever the table prints that many. */
        if (row->fp >= 1e-3)
            CHECK(fabs(printed - row->fp) / row->fp < 5e-4 + 0.5e-6 / row->fp);
        double a = once_apbf_accesses_absent(row->k, row->l);
        if (fabs(a - row->accesses_false) > 0.0051 + 1e-9) {
            fprintf(stderr, "(%u,%u): A = %.4f, table %.2f\n", row->k, row->l, a,
                    row->accesses_false);
            CHECK(0);
        }
    }
    /* Peak NPWS, section 5.2: sum_{i<k} 2^-i / l, under 2/l. */
    CHECK(fabs(once_apbf_npws(10, 7) - (2.0 - ldexp(1.0, -9)) / 7) < 1e-12);
    CHECK(once_apbf_npws(21, 54) < 2.0 / 54);
}

static void apbbf_rates_reproduce_table3(void)
{
    for (size_t r = 0; r < PAPER_TABLE3_ROWS; r++) {
        const paper_table3_row *row = &paper_table3[r];
        once_filter *f = make_window(ONCE_APBBF, row->k, row->l, row->block_bits,
                                     row->block_hashes, 100000, ONCE_POLICY_FIRST, 1);
        REQUIRE(f != NULL);
        once_stats s = testing_stats(f);
        if (fabs(s.design_fpr - row->apbbf) > 0.5e-7 + 1e-12) {
            fprintf(stderr, "APBBF (%u,%u,%u,%u): %.8f, table %.7f\n", row->k, row->l,
                    row->block_bits, row->block_hashes, s.design_fpr, row->apbbf);
            CHECK(0);
        }
        double equivalent = once_apbf_fpr(row->k * row->block_hashes, row->l * row->block_hashes);
        CHECK(fabs(equivalent - row->apbf) <= 0.5e-7 + 1e-12);
        CHECK(s.slices == row->k + row->l && s.age_slices == row->l);
        once_free(f);
    }
}

/* ------------------------------------------------------ no false negatives */

/*
 * Run `events` events over a universe of keys through test-and-add and check the
 * window promise at every event: a key whose last insertion is among the last w
 * insertions must be reported seen.  Under the first policy only delivered keys are
 * inserted; under refresh every event inserts.  Returns the number of events.
 */
static uint64_t check_window_stream(once_type type, once_policy policy, int zipfian,
                                    uint64_t universe, uint64_t events, uint64_t window,
                                    double error, uint64_t seed)
{
    once_config c;
    once_config_init(&c, type);
    c.window = window;
    c.error = error;
    c.policy = policy;
    c.seed = seed;
    c.seed_is_set = true;
    once_filter *f = NULL;
    CHECK_OK(once_create(&f, &c));
    if (f == NULL)
        return 0;
    uint64_t guaranteed = testing_stats(f).window;
    CHECK(guaranteed >= window);
    uint64_t *last = malloc(universe * sizeof(uint64_t)); /* insertion index + 1, 0 = never */
    memset(last, 0, universe * sizeof(uint64_t));
    testing_zipf z = {NULL, 0};
    if (zipfian)
        z = testing_zipf_make(universe, 1.05);
    uint64_t state = seed, insertions = 0, misses = 0, delivered = 0;
    for (uint64_t e = 0; e < events; e++) {
        uint64_t id;
        if (zipfian) {
            id = testing_zipf_draw(&z, &state);
        } else {
            state = testing_mix(state);
            id = state % universe;
        }
        testing_key key = testing_key_make(seed, id);
        bool seen = false;
        CHECK_OK(once_test_and_add(f, &key, sizeof key, 0, &seen));
        /* Inserted within the last `guaranteed` insertions (before this event)? */
        if (last[id] != 0 && insertions - (last[id] - 1) <= guaranteed && !seen)
            misses++;
        if (!seen || policy == ONCE_POLICY_REFRESH) {
            insertions++;
            last[id] = insertions;
        }
        delivered += !seen;
    }
    if (misses)
        fprintf(stderr, "%s %s %s: %" PRIu64 " false negatives in %" PRIu64 " events\n",
                once_type_name(type), policy ? "refresh" : "first", zipfian ? "zipf" : "uniform",
                misses, events);
    CHECK(misses == 0);
    CHECK(delivered > 0 && delivered < events); /* the stream had duplicates and news */
    free(last);
    free(z.cdf);
    once_free(f);
    return events;
}

static void no_false_negatives_in_window(void)
{
    uint64_t total = 0;
    const once_type types[] = {ONCE_APBF, ONCE_APBBF};
    for (int t = 0; t < 2; t++) {
        for (int policy = 0; policy < 2; policy++) {
            /* Uniform over a universe twice the window: about half the events repeat a
             * key still inside the window, the rest return after it expired. */
            total += check_window_stream(types[t], (once_policy)policy, 0, 20000, 800000, 10000,
                                         0.01, 11 + (uint64_t)policy);
            /* Zipf: hot keys repeat inside the window, the tail arrives once. */
            total += check_window_stream(types[t], (once_policy)policy, 1, 200000, 800000, 5000,
                                         0.001, 21 + (uint64_t)policy);
        }
    }
    fprintf(stderr, "checked %" PRIu64 " events\n", total);
}

/* ------------------------------------------------------------- measured */

/* Insert `n` fresh distinct keys (domain 1, from *next on). */
static void insert_fresh(once_filter *f, uint64_t *next, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        testing_key k = testing_key_make(1, (*next)++);
        CHECK_OK(once_add(f, &k, sizeof k, 0));
    }
}

static uint64_t probe_absent(const once_filter *f, uint64_t *next_probe, uint64_t probes)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < probes; i++) {
        testing_key k = testing_key_make(2, (*next_probe)++);
        bool present;
        once_query(f, &k, sizeof k, 0, &present);
        hits += present;
    }
    return hits;
}

/*
 * Steady state: after k + l + 1 generations of distinct keys, measure the rate at
 * eight points over one generation (each with `probes` fresh absent keys) and at the
 * peak just before a shift.
 *
 * `paper` is the table's value: F at the paper's assumed peak fills, a linear ramp
 * (i+1)/(2k) over the insertion slices.  `exact` is F at the fills a filter with
 * g = m ln2 / k really has, 1 - 2^-(i+1)/k, which lie above the ramp; for small l
 * (rows (7,5), (10,7), (11,9)) that lifts the true peak 14-22% above the paper's F.
 * So: the peak is within 10% of `exact` always, and of `paper` wherever the ramp
 * assumption is itself within 10%; the cycle average is at most `paper` wherever the
 * ramp holds, and at most `exact` everywhere.  Margins add 4 binomial sigmas.
 */
static void check_measured_rate(once_filter *f, double paper, double exact, uint64_t probes,
                                const char *label)
{
    once_stats s = testing_stats(f);
    uint64_t g = s.generation, next = 0, next_probe = 0;
    insert_fresh(f, &next, (uint64_t)(s.slices + 1) * g);
    uint64_t hits = 0, samples = 0, peak_hits = 0;
    for (int point = 1; point <= 8; point++) {
        insert_fresh(f, &next, g / 8);
        hits += probe_absent(f, &next_probe, probes);
        samples += probes;
    }
    insert_fresh(f, &next, g - 8 * (g / 8)); /* now exactly at the end of a generation */
    uint64_t peak_probes = probes * 2;
    peak_hits = probe_absent(f, &next_probe, peak_probes);
    double average = (double)hits / samples, peak = (double)peak_hits / peak_probes;
    double sd_avg = sqrt(exact * (1 - exact) / samples);
    double sd_peak = sqrt(exact * (1 - exact) / peak_probes);
    int ramp_holds = exact <= 1.10 * paper;
    int ok = fabs(peak - exact) <= 0.10 * exact + 4 * sd_peak && average <= exact + 4 * sd_avg;
    if (ramp_holds)
        ok &= fabs(peak - paper) <= 0.10 * paper + 4 * sd_peak && average <= paper + 4 * sd_avg;
    fprintf(stderr, "%-22s average %.6f  peak %.6f  paper F %.6f  exact F %.6f%s %s\n", label,
            average, peak, paper, exact, ramp_holds ? "" : " (ramp off >10%)",
            ok ? "ok" : "OUT OF BOUNDS");
    CHECK(ok);
}

static uint64_t probes_for(double p)
{
    /* Enough that one sigma is about 2% of p at the peak, within a budget. */
    double n = (1 - p) / (p * 0.02 * 0.02);
    return n > 2500000 ? 2500000 : (uint64_t)n;
}

static void apbf_measured_rate_matches_table2(void)
{
    for (size_t r = 0; r < PAPER_TABLE2_ROWS; r++) {
        const paper_table2_row *row = &paper_table2[r];
        if (r >= 15)
            continue; /* the rows aimed at 1e-1, 1e-2 and 1e-3 (the first fifteen) */
        /* A window of 2000 l keys: slices of about 2900 k bits. */
        once_filter *f = make_window(ONCE_APBF, row->k, row->l, 0, 0, 2000 * row->l,
                                     ONCE_POLICY_FIRST, 100 + r);
        REQUIRE(f != NULL);
        char label[64];
        snprintf(label, sizeof label, "APBF (%u,%u)", row->k, row->l);
        check_measured_rate(f, once_apbf_fpr(row->k, row->l), testing_stats(f).design_fpr,
                            probes_for(row->fp), label);
        once_free(f);
    }
}

static void apbbf_measured_rate_matches_table3(void)
{
    for (size_t r = 0; r < PAPER_TABLE3_ROWS; r++) {
        const paper_table3_row *row = &paper_table3[r];
        if (row->apbbf < 1e-4)
            continue;
        once_filter *f = make_window(ONCE_APBBF, row->k, row->l, row->block_bits,
                                     row->block_hashes, 20000 * row->l, ONCE_POLICY_FIRST,
                                     200 + r);
        REQUIRE(f != NULL);
        char label[64];
        snprintf(label, sizeof label, "APBBF (%u,%u,%u,%u)", row->k, row->l, row->block_bits,
                 row->block_hashes);
        check_measured_rate(f, row->apbbf, testing_stats(f).design_fpr, probes_for(row->apbbf), label);
        once_free(f);
    }
}

/*
 * Accesses of a query answering false, measured with once_query_reads, against the
 * paper's recurrence A (Table 2's "query false" column) and A at the filter's real
 * peak fills (stats.accesses_absent).  Over a generation cycle in steady state the
 * average stays within 3% of the table; at the peak it matches the model at the real
 * fills within 5%.  (The real fills sit above the paper's ramp, as for the rates, so
 * a few rows average up to 3% above the printed value: the table's 2-decimal rounding
 * plus the ramp.)
 */
static void apbf_query_accesses_match_table2(void)
{
    const uint64_t probes = 20000;
    for (size_t r = 0; r < PAPER_TABLE2_ROWS; r++) {
        const paper_table2_row *row = &paper_table2[r];
        once_filter *f = make_window(ONCE_APBF, row->k, row->l, 0, 0, 500 * row->l,
                                     ONCE_POLICY_FIRST, 300 + r);
        REQUIRE(f != NULL);
        once_stats s = testing_stats(f);
        uint64_t g = s.generation, next = 0, next_probe = 0;
        insert_fresh(f, &next, (uint64_t)(s.slices + 1) * g);
        double cycle = 0, peak = 0;
        uint64_t cycle_n = 0, peak_n = 0;
        for (int point = 1; point <= 8; point++) {
            insert_fresh(f, &next, point < 8 ? g / 8 : g - 7 * (g / 8));
            for (uint64_t i = 0; i < probes; i++) {
                testing_key k = testing_key_make(2, next_probe++);
                bool present;
                uint32_t reads = 0;
                CHECK_OK(once_query_reads(f, &k, sizeof k, 0, &present, &reads));
                if (present)
                    continue;
                cycle += reads;
                cycle_n++;
                if (point == 8) {
                    peak += reads;
                    peak_n++;
                }
            }
        }
        cycle /= (double)cycle_n;
        peak /= (double)peak_n;
        int ok = cycle <= row->accesses_false * 1.03 + 0.01 &&
                 fabs(peak - s.accesses_absent) <= 0.05 * s.accesses_absent;
        if (!ok || r < 15)
            fprintf(stderr, "APBF (%u,%u): accesses cycle %.3f peak %.3f, table %.2f, model %.3f %s\n",
                    row->k, row->l, cycle, peak, row->accesses_false, s.accesses_absent,
                    ok ? "ok" : "OUT OF BOUNDS");
        CHECK(ok);
        once_free(f);
    }
    /* Layouts without an early-stopping search say so. */
    once_filter *plain = NULL;
    CHECK_OK(once_create_for_capacity(&plain, ONCE_BLOCKED, 100, 0.01));
    bool present;
    uint32_t reads;
    CHECK_STATUS(once_query_reads(plain, "k", 1, 0, &present, &reads), ONCE_ERR_UNSUPPORTED);
    once_free(plain);
}

/* ------------------------------------------------------------- planning */

static void planner_meets_target(void)
{
    const double targets[] = {0.1, 0.01, 0.001, 0.0001};
    const once_type types[] = {ONCE_APBF, ONCE_APBBF};
    for (int t = 0; t < 2; t++) {
        for (int e = 0; e < 4; e++) {
            double previous_npws = 1e9;
            for (uint32_t level = 0; level < 3; level++) {
                once_config c;
                once_config_init(&c, types[t]);
                c.window = 100000;
                c.error = targets[e];
                c.level = level;
                c.seed_is_set = true;
                once_filter *f = NULL;
                CHECK_OK(once_create(&f, &c));
                REQUIRE(f != NULL);
                once_stats s = testing_stats(f);
                CHECK(s.window >= 100000 && s.window < 100000 + s.age_slices);
                CHECK(s.design_fpr <= targets[e]);
                CHECK(s.slack == (uint64_t)(s.slices - s.age_slices) * s.generation);
                CHECK(s.npws <= previous_npws); /* higher levels: less slack */
                previous_npws = s.npws;
                CHECK(s.accesses_absent >= 1.0);
                CHECK(s.capacity == 100000 && s.error == targets[e]); /* as requested */
                once_free(f);
            }
        }
    }
    once_filter *f = NULL;
    once_config c;
    once_config_init(&c, ONCE_APBF);
    c.window = 0;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
    c.window = 1000;
    c.hashes = 4; /* k without l */
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
    c.age_slices = 3;
    CHECK_OK(once_create(&f, &c));
    once_stats s = testing_stats(f);
    CHECK(s.hashes == 4 && s.age_slices == 3 && s.generation == 334);
    once_free(f);
    once_config_init(&c, ONCE_APBBF);
    c.window = 1000;
    c.block_bits = 128;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
    c.block_bits = 64;
    c.block_hashes = 5;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
    c.block_hashes = 4;
    c.policy = (once_policy)7;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
}

/* Keys age out: after w + slack more insertions a key is gone (barring a false
 * positive at the target rate), and before w it is always there. */
static void keys_expire_after_window_and_slack(void)
{
    const once_type types[] = {ONCE_APBF, ONCE_APBBF};
    for (int t = 0; t < 2; t++) {
        once_filter *f = NULL;
        once_config c;
        once_config_init(&c, types[t]);
        c.window = 1000;
        c.error = 0.001;
        c.seed_is_set = true;
        CHECK_OK(once_create(&f, &c));
        REQUIRE(f != NULL);
        once_stats s = testing_stats(f);
        uint64_t next = 0;
        /* 2000 old keys, then w + slack + g newer ones. */
        insert_fresh(f, &next, 2000);
        uint64_t old_first = 0;
        insert_fresh(f, &next, s.window + s.slack + s.generation);
        uint64_t still = 0;
        for (uint64_t i = old_first; i < 2000; i++) {
            testing_key k = testing_key_make(1, i);
            bool present;
            once_query(f, &k, sizeof k, 0, &present);
            still += present;
        }
        /* At most a few false positives among 2000 at rate 0.001. */
        CHECK(still <= 10);
        /* The newest w keys are all present. */
        uint64_t missing = 0;
        for (uint64_t i = next - s.window; i < next; i++) {
            testing_key k = testing_key_make(1, i);
            bool present;
            once_query(f, &k, sizeof k, 0, &present);
            missing += !present;
        }
        CHECK(missing == 0);
        once_free(f);
    }
}

/* ------------------------------------------------------------- state */

static void save_mid_stream_then_continue(void)
{
    const once_type types[] = {ONCE_APBF, ONCE_APBBF};
    for (int t = 0; t < 2; t++) {
        for (int policy = 0; policy < 2; policy++) {
            once_config c;
            once_config_init(&c, types[t]);
            c.window = 5000;
            c.error = 0.01;
            c.policy = (once_policy)policy;
            c.seed = 99;
            c.seed_is_set = true;
            once_filter *a = NULL;
            CHECK_OK(once_create(&a, &c));
            REQUIRE(a != NULL);
            uint64_t state = 5;
            for (int i = 0; i < 23456; i++) {
                state = testing_mix(state);
                testing_key k = testing_key_make(7, state % 9000);
                bool seen;
                once_test_and_add(a, &k, sizeof k, 0, &seen);
            }
            void *buf = NULL;
            size_t len = 0;
            CHECK_OK(once_save_to_buffer(a, &buf, &len));
            once_filter *b = NULL;
            CHECK_OK(once_load(&b, buf, len));
            REQUIRE(b != NULL);
            CHECK(once_get_type(b) == types[t]);
            /* Every truncation and a flipped byte are refused. */
            for (size_t cut = 0; cut < len; cut += 1 + cut / 7) {
                once_filter *x = NULL;
                CHECK(once_load(&x, buf, cut) != ONCE_OK);
            }
            ((unsigned char *)buf)[len / 2] ^= 1;
            once_filter *x = NULL;
            CHECK(once_load(&x, buf, len) != ONCE_OK);
            free(buf);
            uint64_t differ = 0;
            for (int i = 0; i < 40000; i++) {
                state = testing_mix(state);
                testing_key k = testing_key_make(7, state % 9000);
                bool sa, sb;
                once_test_and_add(a, &k, sizeof k, 0, &sa);
                once_test_and_add(b, &k, sizeof k, 0, &sb);
                differ += sa != sb;
            }
            CHECK(differ == 0);
            CHECK(testing_same_save(a, b));
            once_free(a);
            once_free(b);
        }
    }
}

static void batch_matches_single(void)
{
    enum { N = 20000 };
    static testing_key raw[N];
    static once_key keys[N];
    static uint8_t out[N];
    for (int i = 0; i < N; i++) {
        raw[i] = testing_key_make(8, (uint64_t)(i * 7919) % 6000);
        keys[i] = (once_key){&raw[i], sizeof raw[i], 0};
    }
    const once_type types[] = {ONCE_APBF, ONCE_APBBF};
    for (int t = 0; t < 2; t++) {
        once_filter *a = make_window(types[t], 5, 4, 0, 0, 4000, ONCE_POLICY_FIRST, 4);
        once_filter *b = make_window(types[t], 5, 4, 0, 0, 4000, ONCE_POLICY_FIRST, 4);
        REQUIRE(a && b);
        CHECK_OK(once_test_and_add_batch(a, keys, N, out));
        for (int i = 0; i < N; i++) {
            bool seen;
            once_test_and_add(b, keys[i].data, keys[i].len, 0, &seen);
            CHECK(out[i] == seen);
        }
        once_free(a);
        once_free(b);
    }
}

/*
 * Batches that span many shifts: generations of 10 to 20 insertions against batches of
 * up to 1000 keys, so the insertion segments move many times inside one call (and the
 * lines requested ahead go stale), with repeats inside a batch and across batches.
 * Both the answers and the final state must be those of the one-key calls.
 */
static void batch_spanning_shifts_matches_single(void)
{
    enum { EVENTS = 30000, UNIVERSE = 500 };
    static testing_key raw[EVENTS];
    static once_key keys[EVENTS];
    uint64_t state = 99;
    for (int i = 0; i < EVENTS; i++) {
        state = testing_mix(state);
        /* Every fifth event repeats its predecessor: duplicates next to each other. */
        uint64_t id = i % 5 == 4 ? raw[i - 1].w[0] : state % UNIVERSE;
        raw[i] = i % 5 == 4 ? raw[i - 1] : testing_key_make(21, id);
        keys[i] = (once_key){&raw[i], sizeof raw[i], 0};
    }
    static const size_t sizes[] = {1, 2, 3, 16, 17, 100, 255, 256, 1000, 7};
    const struct {
        once_type type;
        uint32_t k, l, block_bits, block_hashes;
    } layouts[] = {
        {ONCE_APBF, 5, 4, 0, 0},
        {ONCE_APBBF, 3, 3, 512, 4},
        {ONCE_APBBF, 2, 3, 64, 8},
        {ONCE_APBF, 18, 4, 0, 0}, /* more insertion slices than a batch computes ahead */
        {ONCE_APBBF, 3, 4, 512, 8},
        {ONCE_APBBF, 2, 5, 64, 4},
        {ONCE_APBBF, 18, 4, 512, 4}, /* more insertion segments than a batch keeps */
    };
    /* The APBBF's batch tests and sets 512-bit blocks on the SIMD path of the moment
     * (recorded when a filter is built): every path this CPU has must agree with the
     * one-key calls. */
    static const char *const paths[] = {"scalar", "avx2", "avx512"};
    for (size_t t = 0; t < sizeof layouts / sizeof layouts[0]; t++) {
        for (int run = 0; run < 2 * 3; run++) {
            int policy = run % 2;
            const char *path = paths[run / 2];
            if (layouts[t].type != ONCE_APBBF && run >= 2)
                break;
            if (once_force_simd_path(path) != ONCE_OK)
                continue;
            once_filter *a = make_window(layouts[t].type, layouts[t].k, layouts[t].l,
                                         layouts[t].block_bits, layouts[t].block_hashes, 60,
                                         (once_policy)policy, 5);
            once_filter *b = make_window(layouts[t].type, layouts[t].k, layouts[t].l,
                                         layouts[t].block_bits, layouts[t].block_hashes, 60,
                                         (once_policy)policy, 5);
            REQUIRE(a && b);
            CHECK(testing_stats(a).generation <= 20);
            once_status stopped;
            CHECK(testing_batch_replay(a, b, keys, EVENTS, sizes, 10, &stopped) == 0);
            CHECK_OK(stopped);
            CHECK(testing_same_save(a, b));
            /* The stream is not trivial: both answers occur. */
            uint64_t items = once_items(a);
            CHECK(items > EVENTS / 10 && items < EVENTS);
            once_free(a);
            once_free(b);
        }
    }
    CHECK_OK(once_force_simd_path(NULL));
}

/*
 * A query batch finishes its searches out of order (a search waiting for a segment's
 * line is parked and resumed later), so the answers must still land on their keys:
 * half present and half absent keys, in runs and interleaved, against one-key queries,
 * on every SIMD path, with batches long enough to fill the parking (present keys in
 * old segments all park).
 */
static void apbbf_query_batch_answers_in_place(void)
{
    enum { WINDOW = 20000, N = 8000 };
    static testing_key raw[N];
    static once_key keys[N];
    static uint8_t out[N];
    static const char *const paths[] = {"scalar", "avx2", "avx512"};
    for (int p = 0; p < 3; p++) {
        if (once_force_simd_path(paths[p]) != ONCE_OK)
            continue;
        once_filter *f = make_window(ONCE_APBBF, 2, 2, 512, 4, WINDOW, ONCE_POLICY_FIRST, 31);
        REQUIRE(f != NULL);
        for (uint64_t i = 0; i < WINDOW; i++) {
            testing_key key = testing_key_make(31, i);
            CHECK_OK(once_add(f, &key, sizeof key, 0));
        }
        /* Keys 0..3999: the oldest half of the window; then absent keys, interleaved
         * with the newest ones. */
        for (int i = 0; i < N; i++) {
            uint64_t id = i < N / 2 ? (uint64_t)i
                                    : (i % 2 ? WINDOW - 1 - (uint64_t)i : 1000000 + (uint64_t)i);
            raw[i] = testing_key_make(31, id);
            keys[i] = (once_key){&raw[i], sizeof raw[i], 0};
        }
        uint64_t positives = 0, differ = 0;
        static const size_t sizes[] = {N, 1, 33, 500, 2};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            memset(out, 0xAA, sizeof out);
            for (size_t at = 0; at < N; at += sizes[s]) {
                size_t n = N - at < sizes[s] ? N - at : sizes[s];
                CHECK_OK(once_query_batch(f, keys + at, n, out + at));
            }
            for (int i = 0; i < N; i++) {
                bool seen;
                CHECK_OK(once_query(f, keys[i].data, keys[i].len, 0, &seen));
                differ += out[i] != (uint8_t)seen;
                positives += seen;
            }
        }
        CHECK(differ == 0);
        /* Every window key is seen; the absent ones mostly not. */
        CHECK(positives >= 5 * (uint64_t)(N / 2 + N / 4));
        CHECK(positives < 5 * (uint64_t)(N / 2 + N / 4 + N / 20));
        once_free(f);
    }
    CHECK_OK(once_force_simd_path(NULL));
}

/* One key 300 times in one batch: the first is new, every later copy is seen (under
 * refresh each copy is inserted again, so the batch also shifts many times). */
static void batch_of_one_repeated_key(void)
{
    enum { N = 300 };
    testing_key raw = testing_key_make(22, 1);
    static once_key keys[N];
    static uint8_t out[N];
    for (int i = 0; i < N; i++)
        keys[i] = (once_key){&raw, sizeof raw, 0};
    const once_type types[] = {ONCE_APBF, ONCE_APBBF};
    for (int t = 0; t < 2; t++) {
        for (int policy = 0; policy < 2; policy++) {
            once_filter *a = make_window(types[t], 3, 3, 0, 0, 30, (once_policy)policy, 6);
            once_filter *b = make_window(types[t], 3, 3, 0, 0, 30, (once_policy)policy, 6);
            REQUIRE(a && b);
            CHECK_OK(once_test_and_add_batch(a, keys, N, out));
            CHECK(out[0] == 0);
            for (int i = 1; i < N; i++)
                CHECK(out[i] == 1);
            CHECK(once_items(a) == 1);
            for (int i = 0; i < N; i++) {
                bool seen;
                CHECK_OK(once_test_and_add(b, &raw, sizeof raw, 0, &seen));
            }
            CHECK(testing_same_save(a, b));
            once_free(a);
            once_free(b);
        }
    }
}

/* ------------------------------------------------------------ cardinality */

/*
 * Distinct keys in the window, estimated from the segments (docs/CARDINALITY.md),
 * against exact counts.  The window is the insertions of generations 0 .. l (a shift
 * comes at the start of an insertion when the generation holds g).  Two exact counts
 * bracket what the segments can know: the keys inserted in the window, and the keys
 * offered in it (also those the filter wrongly reported seen: a false positive is not
 * inserted, but the bits that made it one are already set, so the estimate counts it
 * about as if it had been).  Zipf keys with repeats; one-group windows (l < k) under
 * both policies, and windows of two and three groups (paper 001's (12, 14) and
 * (14, 40)).  At 90% the interval must meet the bracket at 90% of the checkpoints and
 * the estimate stay within 3% of it; under refresh with several groups a key repeated
 * across groups counts once per group, so there only the lower side holds.
 */
static void window_distinct_keys_match_exact_count(void)
{
    enum { WINDOW = 20000, UNIVERSE = 60000, EVENTS = 400000, EVERY = 5000 };
    static const struct {
        once_type type;
        uint32_t k, l;
        once_policy policy;
    } cases[] = {
        {ONCE_APBF, 0, 0, ONCE_POLICY_FIRST},   {ONCE_APBF, 0, 0, ONCE_POLICY_REFRESH},
        {ONCE_APBBF, 0, 0, ONCE_POLICY_FIRST},  {ONCE_APBBF, 0, 0, ONCE_POLICY_REFRESH},
        {ONCE_APBF, 12, 14, ONCE_POLICY_FIRST}, {ONCE_APBF, 14, 40, ONCE_POLICY_FIRST},
        {ONCE_APBF, 14, 40, ONCE_POLICY_REFRESH},
    };
    testing_zipf zipf = testing_zipf_make(UNIVERSE, 0.9);
    uint64_t *inserted_at = calloc(UNIVERSE, sizeof *inserted_at); /* insertion number */
    uint64_t *offered_at = calloc(UNIVERSE, sizeof *offered_at);   /* event number */
    uint64_t *event_of = calloc(EVENTS + 1, sizeof *event_of);     /* insertion -> event */
    REQUIRE(zipf.cdf && inserted_at && offered_at && event_of);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        once_filter *f = make_window(cases[c].type, cases[c].k, cases[c].l, 0, 0, WINDOW,
                                     cases[c].policy, 300 + c);
        REQUIRE(f != NULL);
        once_stats st = testing_stats(f);
        uint64_t g = st.generation, k = st.hashes, l = st.age_slices;
        bool one_sided = cases[c].policy == ONCE_POLICY_REFRESH && l >= k;
        memset(inserted_at, 0, UNIVERSE * sizeof *inserted_at);
        memset(offered_at, 0, UNIVERSE * sizeof *offered_at);
        uint64_t inserted = 0, state = 77 + c;
        uint32_t checks = 0, met = 0;
        double worst = 0;
        for (uint64_t e = 1; e <= EVENTS; e++) {
            uint64_t id = testing_zipf_draw(&zipf, &state);
            testing_key key = testing_key_make(9, id);
            bool seen = false;
            CHECK_OK(once_test_and_add(f, &key, sizeof key, 0, &seen));
            offered_at[id] = e;
            if (!seen || cases[c].policy == ONCE_POLICY_REFRESH) {
                inserted_at[id] = ++inserted;
                event_of[inserted] = e;
            }
            if (e % EVERY != 0 || e < 4 * WINDOW)
                continue;
            uint64_t shifts = (inserted - 1) / g, filled = inserted - shifts * g;
            uint64_t span = filled + (shifts < l ? shifts : l) * g; /* the window's insertions */
            uint64_t first_event = event_of[inserted - span + 1];
            uint64_t in = 0, offered = 0;
            for (uint64_t i = 0; i < UNIVERSE; i++) {
                in += inserted_at[i] > inserted - span;
                offered += offered_at[i] >= first_event;
            }
            once_cardinality card;
            CHECK_OK(once_estimate_cardinality(f, 0, 0.9, &card));
            checks++;
            double lo = (double)in, hi = one_sided ? INFINITY : (double)offered;
            met += card.low <= hi && card.high >= lo;
            double below = (lo - card.estimate) / lo, above = (card.estimate - hi) / hi;
            double err = below > above ? below : above;
            worst = err > worst ? err : worst;
        }
        printf("%s k=%" PRIu64 " l=%" PRIu64 " %s: interval met the exact counts at %u of %u, "
               "worst error outside them %.4f\n",
               once_type_name(cases[c].type), k, l,
               cases[c].policy == ONCE_POLICY_FIRST ? "first" : "refresh", met, checks, worst);
        CHECK(checks > 50);
        CHECK(met >= 0.9 * checks);
        CHECK(worst < 0.03);
        once_free(f);
    }
    free(event_of);
    free(offered_at);
    free(inserted_at);
    free(zipf.cdf);
}

static const testing_case cases[] = {
    {"apbf_recurrence_reproduces_table2", apbf_recurrence_reproduces_table2},
    {"apbbf_rates_reproduce_table3", apbbf_rates_reproduce_table3},
    {"no_false_negatives_in_window", no_false_negatives_in_window},
    {"apbf_measured_rate_matches_table2", apbf_measured_rate_matches_table2},
    {"apbbf_measured_rate_matches_table3", apbbf_measured_rate_matches_table3},
    {"apbf_query_accesses_match_table2", apbf_query_accesses_match_table2},
    {"planner_meets_target", planner_meets_target},
    {"keys_expire_after_window_and_slack", keys_expire_after_window_and_slack},
    {"save_mid_stream_then_continue", save_mid_stream_then_continue},
    {"batch_matches_single", batch_matches_single},
    {"batch_spanning_shifts_matches_single", batch_spanning_shifts_matches_single},
    {"batch_of_one_repeated_key", batch_of_one_repeated_key},
    {"apbbf_query_batch_answers_in_place", apbbf_query_batch_answers_in_place},
    {"window_distinct_keys_match_exact_count", window_distinct_keys_match_exact_count},
};

TESTING_MAIN(cases)
