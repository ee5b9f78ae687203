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
#include "once_advanced.h"
#include "once_math.h"
#include "paper_tables.h"
#include "testing.h"

/* ------------------------------------------------------------- tables */

static once_filter *make_window(once_type type, uint32_t k, uint32_t l, uint32_t block_bits,
                                uint32_t block_hashes, uint64_t window, once_policy policy,
                                uint64_t seed)
{
    once_config c = testing_config(type, seed);
    c.hashes = k;
    c.age_slices = l;
    c.block_bits = block_bits;
    c.block_hashes = block_hashes;
    c.window = window;
    c.policy = policy;
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
    once_config c = testing_config(type, seed);
    c.window = window;
    c.error = error;
    c.policy = policy;
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
                CHECK(s.window == 100000 && (uint64_t)s.age_slices * s.generation >= 100000);
                CHECK(s.design_fpr <= targets[e]);
                CHECK(s.slack == (uint64_t)s.slices * s.generation - s.window);
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
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_NO_WINDOW);
    /* The capacity call cannot give a window: it says what a window needs. */
    for (once_type t = ONCE_STANDARD; once_structure_of(t) != NULL; t++) {
        once_kind kind = once_structure_of(t)->kind;
        once_status st = once_create_for_capacity(&f, t, 1000, 0.01);
        if (kind == ONCE_KIND_SLICE) {
            CHECK_STATUS(st, ONCE_ERR_INVALID); /* a slice's size is given, in bits */
        } else if (kind == ONCE_KIND_COUNT_WINDOW || kind == ONCE_KIND_TIME_WINDOW) {
            CHECK_STATUS(st, ONCE_ERR_NO_WINDOW);
            CHECK(strstr(once_strerror(st), "once_config.window") != NULL &&
                  strstr(once_strerror(st), "span_ms") != NULL);
        } else {
            CHECK_OK(st);
        }
        once_free(f);
        f = NULL;
    }
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
            once_config c = testing_config(types[t], 99);
            c.window = 5000;
            c.error = 0.01;
            c.policy = (once_policy)policy;
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
            once_free_buffer(buf);
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
        uint64_t k = st.hashes, l = st.age_slices;
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
            uint64_t span = inserted < st.window ? inserted : st.window; /* the last N */
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

/* ------------------------------------------------------ the window asked for */

static once_filter *make_planned(once_type type, uint64_t window, double error, uint32_t level,
                                 uint64_t seed)
{
    once_config c = testing_config(type, seed);
    c.window = window;
    c.error = error;
    c.level = level;
    return testing_create(&c);
}

/*
 * Stream distinct keys through a window of N and check, after every insertion, the
 * key inserted N - 1 insertions earlier (the oldest the window must hold: always
 * present) and the one inserted N + slack earlier (past the reported slack: all its
 * segments are gone, so present only as a false positive, at most at the peak rate).
 * Returns false after saying why.
 */
static bool window_edges_hold(once_filter *f, uint64_t seed)
{
    once_stats s = testing_stats(f);
    uint64_t n = s.window, horizon = s.window + s.slack;
    uint64_t events = 3 * horizon + 2000, misses = 0, late = 0, late_probes = 0;
    for (uint64_t t = 0; t < events; t++) {
        testing_key key = testing_key_make(seed, t);
        CHECK_OK(once_add(f, &key, sizeof key, 0));
        bool present;
        if (t + 1 >= n) {
            testing_key old = testing_key_make(seed, t + 1 - n);
            CHECK_OK(once_query(f, &old, sizeof old, 0, &present));
            misses += !present;
        }
        if (t >= horizon) {
            testing_key gone = testing_key_make(seed, t - horizon);
            CHECK_OK(once_query(f, &gone, sizeof gone, 0, &present));
            late += present;
            late_probes++;
        }
    }
    /* The peak rate bounds a false positive; 5 sigmas and a little room for tiny p. */
    double expected = (double)late_probes * s.design_fpr;
    bool ok = misses == 0 && (double)late <= expected + 5 * sqrt(expected) + 3;
    if (!ok)
        fprintf(stderr,
                "%s N=%" PRIu64 " k=%u l=%u g=%" PRIu64 " slack=%" PRIu64 " seed=%" PRIu64
                ": %" PRIu64 " misses inside the window, %" PRIu64 " of %" PRIu64
                " present past window + slack (expected %.1f)\n",
                s.structure, n, s.hashes, s.age_slices, s.generation, s.slack, seed, misses,
                late, late_probes, expected);
    return ok;
}

/*
 * The window reported is the N asked for, small or large, divisible by l or not, at
 * every level; the slack is the honest (l + k) g - N, within the level's promise
 * (slack / window = k / l of its plan, section 5.2) up to the rounding of a generation,
 * unless the window is too small for that (k <= 3, below which the segments would have
 * to be implausibly sparse); the rate stays at the target; and on streams the edges
 * hold: no key lost before N, none kept past N + slack but at the false-positive rate.
 */
static void window_is_the_one_asked_for(void)
{
    static const uint64_t windows[] = {1,   2,   3,   4,   5,    7,    12,   13,    20,
                                       27,  50,  64,  99,  100,  155,  257,  1000,  1001,
                                       4099, 16383, 99991, 100007, 1000000};
    const once_type types[] = {ONCE_APBF, ONCE_APBBF};
    const double errors[] = {0.01, 0.001};
    uint64_t checked = 0;
    for (int t = 0; t < 2; t++) {
        for (int e = 0; e < 2; e++) {
            for (uint32_t level = 0; level <= 8; level++) {
                once_filter *big = make_planned(types[t], 1000000, errors[e], level, 1);
                REQUIRE(big != NULL);
                once_stats plan = testing_stats(big); /* the level's plan, unadapted */
                once_free(big);
                double promise = (double)plan.hashes / plan.age_slices;
                for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
                    uint64_t n = windows[w], seed = 1000 + 100 * level + w;
                    once_filter *f = make_planned(types[t], n, errors[e], level, seed);
                    REQUIRE(f != NULL);
                    once_stats s = testing_stats(f);
                    uint64_t g = s.generation;
                    bool ok = s.window == n && once_capacity(f) == n &&
                              (uint64_t)s.age_slices * g >= n &&
                              (uint64_t)s.age_slices * g < n + g &&
                              s.slack == (uint64_t)(s.age_slices + s.hashes) * g - n &&
                              s.design_fpr <= errors[e] && s.age_slices <= plan.age_slices &&
                              s.hashes <= plan.hashes &&
                              ((double)s.slack <= promise * (double)n + (1 + promise) * (double)g ||
                               s.hashes <= 3);
                    if (!ok)
                        fprintf(stderr,
                                "%s p=%g level %u N=%" PRIu64 ": window %" PRIu64 " slack %" PRIu64
                                " k=%u l=%u g=%" PRIu64 " rate %.3g (plan k=%u l=%u)\n",
                                s.structure, errors[e], level, n, s.window, s.slack, s.hashes,
                                s.age_slices, g, s.design_fpr, plan.hashes, plan.age_slices);
                    CHECK(ok);
                    /* Streams: every window up to 4099 at levels 0, 2, 8 (and 5). */
                    if (n <= 4099 && (level == 0 || level == 2 || level == 5 || level == 8)) {
                        CHECK(window_edges_hold(f, seed));
                        checked++;
                    }
                    once_free(f);
                }
            }
        }
    }
    fprintf(stderr, "streamed %" PRIu64 " windows\n", checked);
    /* The case that shows it: a window of 5 at the CLI's level forgets a key repeated
     * after 12 others (it used to keep 13 and report 12 of slack). */
    once_filter *f = make_planned(ONCE_APBF, 5, 0.001, 2, 7);
    REQUIRE(f != NULL);
    once_stats s = testing_stats(f);
    CHECK(s.window == 5 && s.window + s.slack <= 12);
    once_free(f);
}

/* Explicit segment bits fix g and so the window l g: a larger window asked for is
 * refused; one that fits is the one reported, with the slack measured from it. */
static void explicit_bits_must_hold_the_window(void)
{
    const once_type types[] = {ONCE_APBF, ONCE_APBBF};
    const uint64_t small_bits[] = {64, 4096};
    for (int t = 0; t < 2; t++) {
        once_config c = testing_config(types[t], 3);
        c.window = 1000;
        c.bits = small_bits[t];
        once_filter *f = NULL;
        CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
        once_free(f);
        /* Without a window, the geometry's own is reported. */
        c.window = 0;
        f = testing_create(&c);
        REQUIRE(f != NULL);
        once_stats s = testing_stats(f);
        uint64_t own = (uint64_t)s.age_slices * s.generation;
        CHECK(s.window == own && once_capacity(f) == own);
        CHECK(s.slack == (uint64_t)s.hashes * s.generation);
        CHECK(window_edges_hold(f, 40 + (uint64_t)t));
        once_free(f);
        /* Bits that hold the window: accepted, and it is the window reported. */
        c.window = 1000;
        c.bits = 1u << 16;
        f = testing_create(&c);
        REQUIRE(f != NULL);
        s = testing_stats(f);
        CHECK(s.window == 1000 && once_capacity(f) == 1000);
        CHECK((uint64_t)s.age_slices * s.generation >= 1000);
        CHECK(s.slack == (uint64_t)(s.age_slices + s.hashes) * s.generation - 1000);
        CHECK(window_edges_hold(f, 50 + (uint64_t)t));
        once_free(f);
    }
}

/*
 * Distinct keys in the last N deliveries: over many streams of random lengths (so the
 * window ends anywhere in a generation), the 90% interval holds the exact count in at
 * least 90% of trials, for the APBF and the APBBF at several levels, on distinct keys
 * and on a stream with duplicates (keys drawn from a universe of 5 windows;
 * first-test-then-set: the deliveries are the keys reported new), and for filters
 * younger than their window.
 */
static void window_cardinality_covers_last_n(void)
{
    enum { WINDOW = 20000, TRIALS = 24, UNIVERSE = 100000 };
    static const struct {
        once_type type;
        uint32_t level;
        double error;
    } configs[] = {
        {ONCE_APBF, 0, 0.001}, {ONCE_APBF, 2, 0.001}, {ONCE_APBF, 5, 0.01},
        {ONCE_APBBF, 0, 0.001}, {ONCE_APBBF, 2, 0.01},
    };
    uint64_t *delivered = malloc(4 * WINDOW * sizeof *delivered);
    uint8_t *mark = calloc(UNIVERSE, 1);
    REQUIRE(delivered && mark);
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        for (int repeats = 0; repeats < 2; repeats++) {
            uint32_t covered = 0;
            double worst = 0;
            for (uint32_t trial = 0; trial < TRIALS; trial++) {
                uint64_t seed = 500 + 1000 * c + 100 * (uint64_t)repeats + trial;
                once_filter *f =
                    make_planned(configs[c].type, WINDOW, configs[c].error, configs[c].level, seed);
                REQUIRE(f != NULL);
                /* Lengths from half the window to 3.5 windows of deliveries. */
                uint64_t state = testing_mix(seed);
                uint64_t want = WINDOW / 2 + state % (3 * WINDOW), count = 0;
                for (uint64_t draw = 0; count < want; draw++) {
                    state = testing_mix(state);
                    uint64_t id = repeats ? state % UNIVERSE : UNIVERSE + draw;
                    testing_key key = testing_key_make(seed, id);
                    bool seen = false;
                    CHECK_OK(once_test_and_add(f, &key, sizeof key, 0, &seen));
                    if (!seen)
                        delivered[count++] = id;
                }
                /* The exact count of distinct keys in the last N deliveries. */
                uint64_t from = count > WINDOW ? count - WINDOW : 0, exact = 0;
                for (uint64_t i = from; i < count; i++)
                    if (delivered[i] >= UNIVERSE || !mark[delivered[i]]) {
                        exact++;
                        if (delivered[i] < UNIVERSE)
                            mark[delivered[i]] = 1;
                    }
                for (uint64_t i = from; i < count; i++)
                    if (delivered[i] < UNIVERSE)
                        mark[delivered[i]] = 0;
                once_cardinality card;
                CHECK_OK(once_estimate_cardinality(f, 0, 0.9, &card));
                bool in = card.low <= (double)exact && (double)exact <= card.high;
                covered += in;
                double err = fabs(card.estimate - (double)exact) / (double)exact;
                worst = err > worst ? err : worst;
                if (!in)
                    fprintf(stderr,
                            "  seed %" PRIu64 ": %" PRIu64 " deliveries, exact %" PRIu64
                            ", estimate %.0f (%.0f-%.0f)\n",
                            seed, count, exact, card.estimate, card.low, card.high);
                once_free(f);
            }
            once_stats s;
            once_filter *f =
                make_planned(configs[c].type, WINDOW, configs[c].error, configs[c].level, 1);
            REQUIRE(f != NULL);
            s = testing_stats(f);
            once_free(f);
            printf("%s level %u k=%u l=%u %s: interval held the last-N count in %u of %u "
                   "trials, worst error %.4f\n",
                   s.structure, configs[c].level, s.hashes, s.age_slices,
                   repeats ? "repeats" : "distinct", covered, (unsigned)TRIALS, worst);
            CHECK(covered >= 0.9 * TRIALS);
            CHECK(worst < 0.03);
        }
    }
    free(mark);
    free(delivered);
}

/*
 * Combining windows.  Intersection is refused: A holding 0-399 and B 200-599 hold the
 * shared keys at different ages, in different physical segments, and an AND loses
 * them.  Union keeps every key of either for the rest of the window it had there,
 * counting insertions into the result, also when the two are at different points of
 * their generations (the result takes the earlier one).
 */
static void combining_windows_keeps_keys(void)
{
    const once_type types[] = {ONCE_APBF, ONCE_APBBF};
    for (int t = 0; t < 2; t++) {
        once_filter *a = make_planned(types[t], 1000, 0.001, 2, 77);
        once_filter *b = make_planned(types[t], 1000, 0.001, 2, 77);
        REQUIRE(a != NULL && b != NULL);
        for (uint64_t i = 0; i < 400; i++) {
            testing_key ka = testing_key_make(3, i), kb = testing_key_make(3, 200 + i);
            CHECK_OK(once_add(a, &ka, sizeof ka, 0));
            CHECK_OK(once_add(b, &kb, sizeof kb, 0));
        }
        size_t len_before;
        uint8_t *before = testing_save(a, &len_before);
        CHECK_STATUS(once_intersect(a, b), ONCE_ERR_UNSUPPORTED);
        size_t len_after;
        uint8_t *after = testing_save(a, &len_after);
        CHECK(before && after && len_before == len_after &&
              memcmp(before, after, len_before) == 0); /* left untouched */
        once_free_buffer(before);
        once_free_buffer(after);
        CHECK_OK(once_union(a, b));
        uint64_t missing = 0;
        for (uint64_t i = 0; i < 600; i++) {
            testing_key k = testing_key_make(3, i);
            bool present;
            CHECK_OK(once_query(a, &k, sizeof k, 0, &present));
            missing += !present;
        }
        CHECK(missing == 0);
        once_cardinality card;
        CHECK_STATUS(once_estimate_intersection(a, b, 0.9, &card), ONCE_ERR_UNSUPPORTED);
        once_free(a);
        once_free(b);

        /* Same head, different points of the generation: dst one insertion short of a
         * shift, src just after one. */
        once_filter *dst = make_planned(types[t], 1000, 0.001, 2, 78);
        once_filter *src = make_planned(types[t], 1000, 0.001, 2, 78);
        REQUIRE(dst != NULL && src != NULL);
        uint64_t g = testing_stats(dst).generation, n = testing_stats(dst).window;
        uint64_t src_count = 3 * g + 1, dst_count = 3 * g + g; /* 3 shifts each */
        for (uint64_t i = 0; i < src_count; i++) {
            testing_key k = testing_key_make(4, i);
            CHECK_OK(once_add(src, &k, sizeof k, 0));
        }
        for (uint64_t i = 0; i < dst_count; i++) {
            testing_key k = testing_key_make(5, i);
            CHECK_OK(once_add(dst, &k, sizeof k, 0));
        }
        CHECK_OK(once_union(dst, src));
        /* After j more insertions, every key of either with fewer than n insertions
         * after it (in its own filter, then in the union) must be present. */
        uint64_t lost = 0;
        for (uint64_t j = 0; j < n; j++) {
            if (j > 0) {
                testing_key k = testing_key_make(6, j);
                CHECK_OK(once_add(dst, &k, sizeof k, 0));
            }
            uint64_t edge = n - 1 - j; /* insertions after the edge key in its filter */
            bool present;
            if (edge < src_count) {
                testing_key k = testing_key_make(4, src_count - 1 - edge);
                CHECK_OK(once_query(dst, &k, sizeof k, 0, &present));
                lost += !present;
            }
            if (edge < dst_count) {
                testing_key k = testing_key_make(5, dst_count - 1 - edge);
                CHECK_OK(once_query(dst, &k, sizeof k, 0, &present));
                lost += !present;
            }
        }
        if (lost)
            fprintf(stderr, "%s union: %" PRIu64 " keys lost inside their window\n",
                    once_type_name(types[t]), lost);
        CHECK(lost == 0);
        once_free(dst);
        once_free(src);
    }
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
    {"window_is_the_one_asked_for", window_is_the_one_asked_for},
    {"explicit_bits_must_hold_the_window", explicit_bits_must_hold_the_window},
    {"window_cardinality_covers_last_n", window_cardinality_covers_last_n},
    {"combining_windows_keeps_keys", combining_windows_keeps_keys},
};

TESTING_MAIN(cases)
