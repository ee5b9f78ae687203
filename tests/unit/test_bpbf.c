/*
 * test_bpbf.c - what the block-partitioned filters promise (paper 002, sections 3-4).
 *
 *   - no false negatives, before and after any reduction, across D-BBF batches;
 *   - after reduction to m' blocks the measured rate is Eq. 1 with mu = m' (binomial
 *     and block-fill variance, 4 sigma), and at Fig. 1's full setup the BPBF beats a
 *     standard filter folded (mod) to the same length at every reduced length;
 *   - the configuration search of section 4 finds the largest n_thres, n_thres is
 *     concave in mu, and it reproduces the geometry behind Table 2; the D-BBF then
 *     reproduces Table 2's lengths and false-positive columns at its cardinalities;
 *   - union and intersection across resolutions give the lower resolution and obey
 *     the set laws; reduce then insert works; saved state continues exactly; hostile
 *     files are refused; the memory cap refuses and changes nothing;
 *   - distinct keys (Theorem 3): Table 6's relative errors, intervals that hold at
 *     least as often as promised for the BPBF, a union, an intersection and a D-BBF
 *     (the sum over its batches).
 */
#include "once_advanced.h"
#include "once_math.h"
#include "cardinality_trials.h"
#include "paper002.h"
#include "testing.h"

typedef struct opts {
    once_type type;
    uint64_t capacity;
    double error;
    uint64_t bits;
    uint64_t block_length;
    uint32_t blocks;
    uint32_t hashes;
    uint64_t threshold;
    uint64_t max_bytes;
    uint64_t seed;
} opts;

static once_filter *make(const opts *o)
{
    once_config c = testing_config(o->type, o->seed);
    c.capacity = o->capacity;
    c.error = o->error;
    c.bits = o->bits;
    c.block_length = o->block_length;
    c.blocks = o->blocks;
    c.hashes = o->hashes;
    c.batch_threshold = o->threshold;
    c.max_bytes = o->max_bytes;
    return testing_create(&c);
}

static void add_range(once_filter *f, uint64_t domain, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++) {
        testing_key k = testing_key_make(domain, i);
        CHECK_OK(once_add(f, &k, sizeof k, 0));
    }
}

static uint64_t missing_in_range(const once_filter *f, uint64_t domain, uint64_t from, uint64_t to)
{
    uint64_t missing = 0;
    for (uint64_t i = from; i < to; i++) {
        testing_key k = testing_key_make(domain, i);
        bool present = false;
        CHECK_OK(once_query(f, &k, sizeof k, 0, &present));
        missing += !present;
    }
    return missing;
}

/* Absent keys (domain 999) reported present, out of `probes`. */
static uint64_t false_hits(const once_filter *f, uint64_t first, uint64_t probes)
{
    uint64_t hits = 0;
    for (uint64_t i = first; i < first + probes; i++) {
        testing_key k = testing_key_make(999, i);
        bool present = false;
        once_query(f, &k, sizeof k, 0, &present);
        hits += present;
    }
    return hits;
}

static once_bpbf_state state_of(const once_filter *f)
{
    once_bpbf_state s;
    memset(&s, 0, sizeof s);
    CHECK_OK(once_bpbf_get_state(f, &s));
    return s;
}

static once_filter *copy_of(const once_filter *f)
{
    size_t len = 0;
    uint8_t *buf = testing_save(f, &len);
    once_filter *g = NULL;
    if (buf != NULL)
        CHECK_OK(once_load(&g, buf, len));
    once_free_buffer(buf);
    return g;
}

/*
 * The standard deviation of a batch's rate from its block fills: with `balls` = k_b n
 * probes thrown into a block of m_b bits, the number of clear bits has the occupancy
 * variance below; the rate P = fill^(k_b mu) then varies by about
 * P k_b sqrt(mu Var(fill)) / fill.
 */
static double fill_sigma(uint64_t block_length, uint32_t block_hashes, uint32_t blocks,
                         uint64_t items)
{
    double m = (double)block_length, balls = (double)block_hashes * (double)items;
    double q1 = exp(balls * log1p(-1.0 / m)), q2 = exp(balls * log1p(-2.0 / m));
    double var_clear = m * (m - 1) * q2 + m * q1 - m * m * q1 * q1;
    double fill = 1.0 - q1;
    if (var_clear < 0 || fill <= 0)
        return 0;
    double p = pow(fill, (double)block_hashes * blocks);
    return p * block_hashes * sqrt(blocks * var_clear / (m * m)) / fill;
}

/* |hits/probes - p| within 4 sigma of the probe sampling and `extra` (other variance). */
static bool rate_within(uint64_t hits, uint64_t probes, double p, double extra)
{
    double observed = (double)hits / (double)probes;
    double sd = sqrt(p * (1 - p) / (double)probes + extra * extra);
    return fabs(observed - p) <= 4 * sd;
}

/* ------------------------------------------------------------------ tests */

static void no_false_negatives(void)
{
    const opts shapes[] = {
        {.type = ONCE_BPBF, .capacity = 5000, .error = 0.001, .seed = 1},
        {.type = ONCE_BPBF, .capacity = 5000, .block_length = 1000, .blocks = 9, .hashes = 3,
         .seed = 2},
        {.type = ONCE_BPBF, .capacity = 5000, .block_length = 7, .blocks = 40, .seed = 3},
        {.type = ONCE_DBPBF, .capacity = 500, .error = 0.01, .seed = 4},
        {.type = ONCE_DBPBF, .block_length = 333, .blocks = 5, .hashes = 2, .threshold = 70,
         .seed = 5},
        /* More cells a key than insertions plan (64): walked as they are set. */
        {.type = ONCE_BPBF, .capacity = 5000, .block_length = 500, .blocks = 70, .seed = 6},
        {.type = ONCE_DBPBF, .block_length = 300, .blocks = 25, .hashes = 3, .threshold = 70,
         .seed = 7},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        once_filter *f = make(&shapes[s]);
        REQUIRE(f != NULL);
        /* Plain adds, test-and-add of a mix of new and repeated keys, and a batch. */
        add_range(f, 1, 0, 3000);
        for (uint64_t i = 2000; i < 4000; i++) {
            testing_key k = testing_key_make(1, i);
            bool seen = false;
            CHECK_OK(once_test_and_add(f, &k, sizeof k, 0, &seen));
            if (i < 3000)
                CHECK(seen);
        }
        testing_key keys[1000];
        once_key batch[1000];
        for (uint64_t i = 0; i < 1000; i++) {
            keys[i] = testing_key_make(1, 4000 + i);
            batch[i] = (once_key){&keys[i], sizeof keys[i], 0};
        }
        CHECK_OK(once_add_batch(f, batch, 1000));
        CHECK(missing_in_range(f, 1, 0, 5000) == 0);
        once_bpbf_state st = state_of(f);
        if (shapes[s].type == ONCE_DBPBF)
            CHECK(st.batches > 3);
        /* Every reduction keeps every key. */
        for (uint32_t b = st.geometry.blocks; b >= 1; b = b / 2) {
            CHECK_OK(once_bpbf_reduce(f, b));
            CHECK(state_of(f).geometry.blocks == b);
            CHECK(missing_in_range(f, 1, 0, 5000) == 0);
            if (b == 1)
                break;
        }
        once_free(f);
    }
}

/*
 * Eq. 1 after reduction: a BPBF for 20000 keys at m_b = n / ln2 (density 1/2) with 16
 * blocks, reduced to 12, 8, 6, 4, 2 and 1 blocks; the measured rate of 400000 absent
 * keys at each is Eq. 1 with mu = blocks within 4 sigma.  The same with k_b = 3.
 */
static void rate_after_reduction_is_eq1(void)
{
    const uint32_t hashes[] = {1, 3};
    for (int h = 0; h < 2; h++) {
        opts o = {.type = ONCE_BPBF, .capacity = 20000, .blocks = 16, .hashes = hashes[h],
                  .seed = 10 + (uint64_t)h};
        once_filter *f = make(&o);
        REQUIRE(f != NULL);
        add_range(f, 2, 0, 20000);
        once_bpbf_state st = state_of(f);
        CHECK(st.geometry.block_length == (uint64_t)ceil(hashes[h] * 20000 / log(2.0)));
        const uint32_t levels[] = {16, 12, 8, 6, 4, 2, 1};
        uint64_t probe = 0;
        for (int l = 0; l < 7; l++) {
            CHECK_OK(once_bpbf_reduce(f, levels[l]));
            double eq1 = once_bpbf_fpr(st.geometry.block_length, hashes[h], levels[l], 20000);
            double extra = fill_sigma(st.geometry.block_length, hashes[h], levels[l], 20000);
            const uint64_t probes = 400000;
            uint64_t hits = false_hits(f, probe, probes);
            probe += probes;
            fprintf(stderr, "k_b=%u blocks=%2u: measured %.6f  Eq. 1 %.6f\n", hashes[h], levels[l],
                    (double)hits / probes, eq1);
            CHECK(rate_within(hits, probes, eq1, extra));
            /* The state reports Eq. 1 and the fill-based rate of the reduced filter. */
            once_bpbf_state now = state_of(f);
            CHECK(fabs(now.fpr_formula - eq1) <= 1e-12 + 1e-9 * eq1);
            CHECK(fabs(now.fpr_fill - eq1) <= 4 * extra + 1e-12);
            CHECK(now.bits == (uint64_t)levels[l] * st.geometry.block_length);
        }
        once_free(f);
    }
}

/*
 * Fig. 1 at the paper's own size: 100000 keys; a standard filter of 8192 Kbits with 60
 * hash functions folded (mod) to 4096 .. 128 Kbits against the BPBF of 64 blocks of
 * 128 Kbits reduced to the same lengths.  The BPBF's measured rate is Eq. 1 and below
 * the folded filter's at every reduced length (measurably so wherever the folded rate
 * is above 1e-3), the folded rate follows section 3.1's formula, and the BPBF stays
 * near the optimal filter of each length.  The paper's spot values: at 1024 Kbits the
 * folded filter passes 0.75 while the BPBF stays under 0.01; at 512 Kbits the BPBF is
 * still under 0.1.
 */
static void fig1_blocks_beat_folding(void)
{
    opts o = {.type = ONCE_BPBF, .capacity = PAPER002_FIG1_KEYS,
              .block_length = PAPER002_FIG1_BLOCK_BITS, .blocks = PAPER002_FIG1_BLOCKS,
              .hashes = 1, .seed = 20};
    once_filter *f = make(&o);
    REQUIRE(f != NULL);
    folded_bloom folded;
    REQUIRE(folded_make(&folded, PAPER002_FIG1_BITS, PAPER002_FIG1_HASHES));
    for (uint64_t i = 0; i < PAPER002_FIG1_KEYS; i++) {
        testing_key k = testing_key_make(3, i);
        CHECK_OK(once_add(f, &k, sizeof k, 0));
        folded_add(&folded, k.w[0], k.w[1]);
    }
    const uint64_t n = PAPER002_FIG1_KEYS, probes = 200000;
    uint64_t probe = 0;
    for (uint64_t bits = PAPER002_FIG1_BITS / 2; bits >= PAPER002_FIG1_BLOCK_BITS; bits /= 2) {
        uint32_t blocks = (uint32_t)(bits / PAPER002_FIG1_BLOCK_BITS);
        CHECK_OK(once_bpbf_reduce(f, blocks));
        folded_reduce(&folded, bits);
        uint64_t bbf_hits = 0, fold_hits = 0;
        for (uint64_t i = 0; i < probes; i++, probe++) {
            testing_key k = testing_key_make(998, probe);
            bool present = false;
            once_query(f, &k, sizeof k, 0, &present);
            bbf_hits += present;
            fold_hits += folded_query(&folded, PAPER002_FIG1_BITS, k.w[0], k.w[1]);
        }
        double eq1 = once_bpbf_fpr(PAPER002_FIG1_BLOCK_BITS, 1, blocks, n);
        double fold = folded_fpr(bits, PAPER002_FIG1_HASHES, n);
        double best = optimal_fpr(bits, n);
        double bbf = (double)bbf_hits / probes, fd = (double)fold_hits / probes;
        fprintf(stderr, "%5llu Kbits: BPBF %.6f (Eq. 1 %.6f)  folded %.6f (formula %.6f)  "
                        "optimal %.6f\n",
                (unsigned long long)(bits / 1024), bbf, eq1, fd, fold, best);
        CHECK(rate_within(bbf_hits, probes, eq1,
                          fill_sigma(PAPER002_FIG1_BLOCK_BITS, 1, blocks, n)));
        CHECK(rate_within(fold_hits, probes, fold,
                          fill_sigma(bits, PAPER002_FIG1_HASHES, 1, n)));
        CHECK(eq1 < fold);
        if (fold > 1e-3)
            CHECK(bbf_hits < fold_hits);
        /* Near-optimal: the paper reports a gap under 1e-4; with 128-Kbit blocks (not
         * n / ln2) the exact formulas give 1.3e-4 at 1024 Kbits. */
        CHECK(eq1 - best <= 1.5e-4);
        if (bits == 1024 * 1024) {
            CHECK(fd > 0.75);
            CHECK(bbf < 0.01);
        }
        if (bits == 512 * 1024)
            CHECK(bbf < 0.1 && best < 0.1);
    }
    free(folded.words);
    once_free(f);
}

/* After a reduction the filter keeps working: more keys, no false negatives, the rate
 * Eq. 1 at the total count with the reduced blocks; and it reduces again. */
static void reduce_then_continue_inserting(void)
{
    opts o = {.type = ONCE_BPBF, .capacity = 10000, .blocks = 12, .seed = 30};
    once_filter *f = make(&o);
    REQUIRE(f != NULL);
    add_range(f, 4, 0, 5000);
    CHECK_OK(once_bpbf_reduce(f, 6));
    add_range(f, 4, 5000, 10000);
    CHECK(missing_in_range(f, 4, 0, 10000) == 0);
    once_bpbf_state st = state_of(f);
    double eq1 = once_bpbf_fpr(st.geometry.block_length, 1, 6, 10000);
    uint64_t hits = false_hits(f, 0, 300000);
    CHECK(rate_within(hits, 300000, eq1, fill_sigma(st.geometry.block_length, 1, 6, 10000)));
    /* By length: round(m' / m_b) blocks, at least one. */
    uint64_t m_b = st.geometry.block_length;
    CHECK_STATUS(once_bpbf_reduce_to_length(f, 6 * m_b + 1), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_reduce_to_length(f, 0), ONCE_ERR_INVALID);
    CHECK_OK(once_bpbf_reduce_to_length(f, 5 * m_b + m_b / 2 - 1));
    CHECK(state_of(f).geometry.blocks == 5);
    CHECK_OK(once_bpbf_reduce_to_length(f, 3 * m_b + m_b / 2 + 1));
    CHECK(state_of(f).geometry.blocks == 4);
    CHECK_OK(once_bpbf_reduce_to_length(f, 2 * m_b + m_b / 3));
    CHECK(state_of(f).geometry.blocks == 2);
    CHECK_OK(once_bpbf_reduce_to_length(f, 1));
    CHECK(state_of(f).geometry.blocks == 1);
    add_range(f, 4, 10000, 11000);
    CHECK(missing_in_range(f, 4, 0, 11000) == 0);
    once_free(f);

    /* D-BBF: reduced mid-stream, new batches open with the reduced blocks. */
    opts d = {.type = ONCE_DBPBF, .capacity = 2000, .error = 0.001, .seed = 31};
    f = make(&d);
    REQUIRE(f != NULL);
    add_range(f, 5, 0, 5000);
    st = state_of(f);
    CHECK(st.batches >= 2);
    CHECK_OK(once_bpbf_reduce(f, st.geometry.blocks - 3));
    add_range(f, 5, 5000, 12000);
    once_bpbf_state after = state_of(f);
    CHECK(after.batches > st.batches);
    CHECK(after.geometry.blocks == st.geometry.blocks - 3);
    CHECK(after.geometry.batch_threshold == st.geometry.batch_threshold);
    CHECK(missing_in_range(f, 5, 0, 12000) == 0);
    /* Eq. 2 at the reduced geometry and the measured rate agree. */
    double eq2 = once_bpbf_dynamic_fpr(&after.geometry, 12000);
    CHECK(fabs(after.fpr_formula - eq2) <= 1e-9);
    hits = false_hits(f, 0, 300000);
    double extra = sqrt((double)after.batches) *
                   fill_sigma(after.geometry.block_length, 1, after.geometry.blocks,
                              after.geometry.batch_threshold);
    CHECK(rate_within(hits, 300000, eq2, extra));
    once_free(f);
}

/*
 * Section 4's search.  For several batch lengths and rates: the search's n_thres is
 * the largest over every mu (brute force to 128), n_thres is concave - rises then
 * falls - in mu (up to 3x the best mu; beyond, whole-bit block lengths of a short
 * batch wiggle it by a key, which cannot mislead the climb that stopped long before),
 * mu is within one of log2(1/p) and each block then sits near density 1/2 (section
 * 3.2's optimum).  Table 2's setup (batches of the standard filter's
 * length for 100000 keys) gives 4 blocks at 0.05 and 8 at 0.005, and its length column
 * implies 83334 <= n_thres < 100000 (100000 keys take 2 batches, 500000 take 6).
 */
static void configuration_search(void)
{
    const double ps[] = {0.1, 0.05, 0.01, 0.005, 0.001, 1e-4};
    const uint64_t lengths[] = {0, 8192, 777777, UINT64_C(1) << 22};
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 4; j++) {
            uint64_t m = lengths[j] ? lengths[j] : once_optimal_bits(100000, ps[i]);
            once_bpbf_geometry g;
            REQUIRE(once_bpbf_search(m, ps[i], 1, &g) == ONCE_OK);
            uint64_t best = 0, best_mu = 0;
            bool falling = false, concave = true;
            uint64_t previous = 0;
            for (uint64_t mu = 1; mu <= 128; mu++) {
                uint64_t n = once_bpbf_threshold(m / mu, 1, (uint32_t)mu, ps[i]);
                if (n > best) {
                    best = n;
                    best_mu = mu;
                }
                /* Whole-bit block lengths (floor(m/mu)) make the far tail wiggle by a
                 * key where m/mu is small; concavity is checked up to 3x the top. */
                if (n < previous)
                    falling = true;
                else if (falling && n > previous && mu <= 3 * best_mu) {
                    concave = false;
                    fprintf(stderr, "p=%g m=%llu: n_thres rises again at mu=%llu (%llu -> %llu)\n",
                            ps[i], (unsigned long long)m, (unsigned long long)mu,
                            (unsigned long long)previous, (unsigned long long)n);
                }
                previous = n;
            }
            CHECK(concave);
            CHECK(g.batch_threshold == best && g.blocks == best_mu);
            CHECK(g.block_length == m / g.blocks && g.block_hashes == 1);
            CHECK(fabs((double)g.blocks - log2(1.0 / ps[i])) <= 1.0);
            double density = 1.0 - exp((double)g.batch_threshold * log1p(-1.0 / g.block_length));
            CHECK(fabs(density - 0.5) <= 0.06);
            CHECK(once_bpbf_fpr(g.block_length, 1, g.blocks, g.batch_threshold) <= ps[i]);
            CHECK(once_bpbf_fpr(g.block_length, 1, g.blocks, g.batch_threshold + 1) > ps[i]);
        }
    }
    const double table_ps[] = {0.05, 0.005};
    const uint32_t table_blocks[] = {4, 8};
    for (int i = 0; i < 2; i++) {
        once_config c;
        once_config_init(&c, ONCE_DBPBF);
        c.capacity = PAPER002_TABLE2_CAPACITY;
        c.error = table_ps[i];
        once_bpbf_geometry g;
        REQUIRE(once_bpbf_plan(&c, &g) == ONCE_OK);
        CHECK(g.blocks == table_blocks[i]);
        CHECK(g.batch_threshold >= 83334 && g.batch_threshold < 100000);
    }
    /* k_b = 2 per block also searches to a working geometry. */
    once_bpbf_geometry g2;
    CHECK_OK(once_bpbf_search(1 << 20, 0.01, 2, &g2));
    CHECK(g2.block_hashes == 2 && g2.batch_threshold > 0);
    CHECK(once_bpbf_fpr(g2.block_length, 2, g2.blocks, g2.batch_threshold) <= 0.01);
}

/* The static configuration of section 3.2. */
static void static_configuration(void)
{
    once_config c;
    once_config_init(&c, ONCE_BPBF);
    c.capacity = 100000;
    c.error = 0.01;
    once_bpbf_geometry g;
    REQUIRE(once_bpbf_plan(&c, &g) == ONCE_OK);
    CHECK(g.block_hashes == 1 && g.batch_threshold == 0);
    CHECK(g.block_length == (uint64_t)ceil(100000 / log(2.0)));
    CHECK(once_bpbf_fpr(g.block_length, 1, g.blocks, 100000) <= 0.01);
    CHECK(once_bpbf_fpr(g.block_length, 1, g.blocks - 1, 100000) > 0.01);
    CHECK(g.blocks == 7); /* density 1/2: 2^-7 < 0.01 < 2^-6 */
    /* The maximum length m: mu = m / m_b. */
    c.bits = PAPER002_FIG1_BITS;
    REQUIRE(once_bpbf_plan(&c, &g) == ONCE_OK);
    CHECK(g.blocks == PAPER002_FIG1_BITS / g.block_length);
    /* A preselected m_b: k_b = max(1, floor(m_b / n ln2)). */
    c.bits = 0;
    c.block_length = 1 << 20;
    REQUIRE(once_bpbf_plan(&c, &g) == ONCE_OK);
    CHECK(g.block_hashes == (uint32_t)floor((1 << 20) / 100000.0 * log(2.0)));
    c.block_length = PAPER002_FIG1_BLOCK_BITS;
    REQUIRE(once_bpbf_plan(&c, &g) == ONCE_OK);
    CHECK(g.block_hashes == 1);
    /* once_create records the design rate: Eq. 1 at capacity. */
    c.blocks = 5;
    c.seed_is_set = true;
    once_filter *f = testing_create(&c);
    REQUIRE(f != NULL);
    once_stats s = testing_stats(f);
    CHECK(s.design_fpr == once_bpbf_fpr(PAPER002_FIG1_BLOCK_BITS, 1, 5, 100000));
    CHECK(s.error == s.design_fpr);
    CHECK(s.bits == 5 * (uint64_t)PAPER002_FIG1_BLOCK_BITS && s.hashes == 5 && s.filters == 1);
    CHECK(strcmp(s.structure, "bpbf") == 0);
    once_free(f);
}

/*
 * Table 2: D-BBFs for 100000 keys at 0.05 and 0.005 (the search's geometry) and the
 * standard filters of the same setup (610 Kbits, k = 4; 1078 Kbits, k = 8), fed the
 * same keys.  At each printed cardinality the D-BBF is reduced to the fewest blocks
 * whose measured rate is at most the target (the paper's protocol); its length is the
 * printed one within 0.5%, and both measured rates (200000 absent keys) are the
 * printed ones within 4 sigma plus the printing's rounding (0.0005).  Where the table
 * prints "~0" the rate is under 0.0005 (+ 4 sigma).  Full size: the whole case runs in
 * a few seconds.
 */
static void dbbf_reproduces_table2(void)
{
    const double ps[] = {0.05, 0.005};
    const uint64_t bf_bits[] = {PAPER002_BF_BITS_05, PAPER002_BF_BITS_005};
    const uint32_t bf_hashes[] = {PAPER002_BF_HASHES_05, PAPER002_BF_HASHES_005};
    const uint64_t probes = 200000;
    for (int t = 0; t < 2; t++) {
        opts o = {.type = ONCE_DBPBF, .capacity = PAPER002_TABLE2_CAPACITY, .error = ps[t],
                  .seed = 40 + (uint64_t)t};
        once_filter *dbbf = make(&o);
        once_config c = testing_config(ONCE_STANDARD, 50);
        c.bits = bf_bits[t];
        c.hashes = bf_hashes[t];
        c.capacity = PAPER002_TABLE2_CAPACITY;
        once_filter *bf = testing_create(&c);
        REQUIRE(dbbf != NULL && bf != NULL);
        uint64_t inserted = 0, probe = 0;
        for (size_t r = 0; r < PAPER002_TABLE2_ROWS; r++) {
            const paper002_table2_row *row = &paper002_table2[r];
            for (; inserted < row->cardinality; inserted++) {
                testing_key k = testing_key_make(6, inserted);
                CHECK_OK(once_add(dbbf, &k, sizeof k, 0));
                CHECK_OK(once_add(bf, &k, sizeof k, 0));
            }
            once_filter *reduced = copy_of(dbbf);
            REQUIRE(reduced != NULL);
            uint32_t kept = 0;
            CHECK_OK(once_bpbf_reduce_to_error(reduced, ps[t], &kept));
            once_bpbf_state st = state_of(reduced);
            double kbits = (double)st.bits / 1024.0;
            double printed_kbits = t == 0 ? row->dbbf_kbits_05 : row->dbbf_kbits_005;
            double printed_dbbf = t == 0 ? row->dbbf_fpr_05 : row->dbbf_fpr_005;
            double printed_bf = t == 0 ? row->bf_fpr_05 : row->bf_fpr_005;
            uint64_t dbbf_hits = false_hits(reduced, probe, probes);
            uint64_t bf_hits = false_hits(bf, probe, probes);
            probe += probes;
            double rd = (double)dbbf_hits / probes, rb = (double)bf_hits / probes;
            fprintf(stderr, "p=%.3f n=%6llu: D-BBF %7.1f Kbits (paper %4.0f) %u blocks x %u "
                            "batches, rate %.4f (paper %.3f, Eq. 2 %.4f); BF %.4f (paper %.3f)\n",
                    ps[t], (unsigned long long)row->cardinality, kbits, printed_kbits, kept,
                    st.batches, rd, printed_dbbf, st.fpr_formula, rb, printed_bf);
            CHECK(fabs(kbits - printed_kbits) <= 0.005 * printed_kbits);
            double batch_sigma = sqrt((double)st.batches) *
                                 fill_sigma(st.geometry.block_length, 1, st.geometry.blocks,
                                            st.geometry.batch_threshold);
            double bf_sigma = fill_sigma(bf_bits[t], bf_hashes[t], 1, row->cardinality);
            const double rounding = 0.0005;
            double sd_d = sqrt(printed_dbbf * (1 - printed_dbbf) / probes +
                               batch_sigma * batch_sigma);
            CHECK(fabs(rd - printed_dbbf) <= 4 * sd_d + rounding);
            if (printed_bf == PAPER002_ABOUT_ZERO) {
                CHECK(rb <= rounding + 4 * sqrt(rounding / probes));
            } else {
                double sd_b = sqrt(printed_bf * (1 - printed_bf) / probes + bf_sigma * bf_sigma);
                CHECK(fabs(rb - printed_bf) <= 4 * sd_b + rounding);
            }
            /* The point of the D-BBF: past the expected cardinality it stays far below
             * the standard filter. */
            if (row->cardinality >= 200000)
                CHECK(dbbf_hits * 2 < bf_hits);
            CHECK(missing_in_range(reduced, 6, 0, row->cardinality) == 0);
            once_free(reduced);
        }
        once_free(dbbf);
        once_free(bf);
    }
}

/*
 * Union and intersection across resolutions (section 3.2): filters sharing seed, m_b
 * and k_b combine into the lower resolution.  The union of a 16-block A and an 8-block
 * B is bit for bit the 8-block filter of A's and B's keys; the intersection is the
 * equal-geometry AND of A reduced to 8 blocks and B; both commute and are idempotent;
 * keys of both sets are never lost.  D-BBFs of other batch counts: the union holds
 * every key, the intersection every common key wherever each side batched it.
 */
static void union_and_intersection_across_resolutions(void)
{
    opts big = {.type = ONCE_BPBF, .capacity = 1000, .block_length = 3000, .blocks = 16,
                .hashes = 2, .seed = 60};
    opts small = big;
    small.blocks = 8;
    once_filter *a = make(&big), *b = make(&small), *all = make(&small);
    REQUIRE(a && b && all);
    add_range(a, 7, 0, 1000);
    add_range(b, 7, 500, 1500);
    add_range(all, 7, 0, 1500);

    once_filter *u = copy_of(a);
    REQUIRE(u != NULL);
    CHECK_STATUS(once_union(u, b), ONCE_ERR_MISMATCH); /* equal geometry only */
    CHECK_OK(once_bpbf_union(u, b));
    CHECK(state_of(u).geometry.blocks == 8);
    CHECK(missing_in_range(u, 7, 0, 1500) == 0);
    CHECK(testing_stats(u).bits_set == testing_stats(all).bits_set);
    once_filter *check = copy_of(all);
    CHECK_OK(once_union(check, u)); /* u adds nothing to the reference: same bits */
    CHECK(testing_stats(check).bits_set == testing_stats(all).bits_set);
    once_free(check);
    once_filter *u2 = copy_of(b);
    CHECK_OK(once_bpbf_union(u2, a)); /* commutes */
    CHECK(state_of(u2).geometry.blocks == 8);
    CHECK(testing_stats(u2).bits_set == testing_stats(u).bits_set);
    CHECK(false_hits(u2, 0, 20000) == false_hits(u, 0, 20000));

    once_filter *x = copy_of(a);
    CHECK_OK(once_bpbf_intersect(x, b));
    CHECK(missing_in_range(x, 7, 500, 1000) == 0);
    once_filter *ref = copy_of(a);
    CHECK_OK(once_bpbf_reduce(ref, 8));
    CHECK_OK(once_intersect(ref, b));
    CHECK(testing_same_save(ref, x));
    once_filter *x2 = copy_of(b);
    CHECK_OK(once_bpbf_intersect(x2, a));
    CHECK(testing_stats(x2).bits_set == testing_stats(x).bits_set);
    CHECK(testing_stats(x).bits_set <= testing_stats(b).bits_set);
    /* Idempotent: A op A is A. */
    once_filter *same = copy_of(a);
    CHECK_OK(once_bpbf_union(same, a));
    CHECK_OK(once_bpbf_intersect(same, a));
    CHECK(testing_stats(same).bits_set == testing_stats(a).bits_set);
    CHECK(false_hits(same, 0, 20000) == false_hits(a, 0, 20000));

    /* What does not share hash functions does not combine. */
    opts other = big;
    other.seed = 61;
    once_filter *o1 = make(&other);
    other = big;
    other.block_length = 3001;
    once_filter *o2 = make(&other);
    other = big;
    other.hashes = 1;
    once_filter *o3 = make(&other);
    opts dyn = {.type = ONCE_DBPBF, .block_length = 3000, .blocks = 16, .hashes = 2,
                .threshold = 300, .seed = 60};
    once_filter *o4 = make(&dyn);
    REQUIRE(o1 && o2 && o3 && o4);
    CHECK_STATUS(once_bpbf_union(u, o1), ONCE_ERR_MISMATCH);
    CHECK_STATUS(once_bpbf_union(u, o2), ONCE_ERR_MISMATCH);
    CHECK_STATUS(once_bpbf_intersect(u, o3), ONCE_ERR_MISMATCH);
    CHECK_STATUS(once_bpbf_union(u, o4), ONCE_ERR_MISMATCH);

    /* D-BBFs: A has 4 batches (keys 0..999), B 5 at fewer blocks (keys 500..1999). */
    once_filter *da = make(&dyn);
    dyn.blocks = 10;
    once_filter *db = make(&dyn);
    REQUIRE(da && db);
    add_range(da, 8, 0, 1000);
    add_range(db, 8, 500, 2000);
    once_filter *du = copy_of(da);
    CHECK_OK(once_bpbf_union(du, db));
    once_bpbf_state su = state_of(du);
    CHECK(su.geometry.blocks == 10 && su.batches == state_of(db).batches);
    CHECK(missing_in_range(du, 8, 0, 2000) == 0);
    once_filter *dx = copy_of(da);
    CHECK_OK(once_bpbf_intersect(dx, db));
    CHECK(state_of(dx).batches == state_of(da).batches);
    CHECK(missing_in_range(dx, 8, 500, 1000) == 0);
    CHECK(testing_stats(dx).bits_set < testing_stats(da).bits_set);
    /* Equal geometry through the common calls (same batch count). */
    once_filter *dc = make(&dyn), *dd = make(&dyn);
    REQUIRE(dc && dd);
    add_range(dc, 9, 0, 900);
    add_range(dd, 9, 300, 1200);
    REQUIRE(state_of(dc).batches == state_of(dd).batches);
    once_filter *dci = copy_of(dc);
    CHECK_OK(once_intersect(dci, dd));
    CHECK(missing_in_range(dci, 9, 300, 900) == 0);
    CHECK_OK(once_union(dc, dd));
    CHECK(missing_in_range(dc, 9, 0, 1200) == 0);

    once_filter *list[] = {a, b, all, u, u2, x, ref, x2, same, o1, o2, o3, o4, da, db, du, dx,
                           dc, dd, dci};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        once_free(list[i]);
}

/* A filter saved mid-stream and loaded answers and evolves exactly as the original. */
static void save_mid_stream_then_continue(void)
{
    const opts shapes[] = {
        {.type = ONCE_BPBF, .capacity = 3000, .error = 0.01, .seed = 70},
        {.type = ONCE_DBPBF, .capacity = 800, .error = 0.01, .seed = 71},
        {.type = ONCE_DBPBF, .block_length = 500, .blocks = 6, .hashes = 2, .threshold = 90,
         .seed = 72},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        once_filter *a = make(&shapes[s]);
        REQUIRE(a != NULL);
        uint64_t state = 3 + s;
        for (int i = 0; i < 3000; i++) {
            state = testing_mix(state);
            testing_key k = testing_key_make(10, state % 4000);
            bool seen;
            CHECK_OK(once_test_and_add(a, &k, sizeof k, 0, &seen));
        }
        if (s == 2)
            CHECK_OK(once_bpbf_reduce(a, 4));
        size_t len = 0;
        uint8_t *buf = testing_save(a, &len);
        REQUIRE(buf != NULL);
        once_filter *b = NULL;
        CHECK_OK(once_load(&b, buf, len));
        REQUIRE(b != NULL);
        for (size_t cut = 0; cut < len; cut += 1 + cut / 7) {
            once_filter *t = NULL;
            CHECK(once_load(&t, buf, cut) != ONCE_OK && t == NULL);
        }
        once_free_buffer(buf);
        CHECK(testing_same_save(a, b));
        uint64_t differ = 0;
        for (int i = 0; i < 6000; i++) {
            state = testing_mix(state);
            testing_key k = testing_key_make(10, state % 9000);
            bool sa = false, sb = false;
            CHECK_OK(once_test_and_add(a, &k, sizeof k, 0, &sa));
            CHECK_OK(once_test_and_add(b, &k, sizeof k, 0, &sb));
            differ += sa != sb;
        }
        CHECK(differ == 0);
        CHECK(testing_same_save(a, b));
        once_stats sa = testing_stats(a), sb = testing_stats(b);
        CHECK(sa.items == sb.items && sa.bits_set == sb.bits_set && sa.filters == sb.filters);
        once_free(a);
        once_free(b);
    }
}

/* ------------------------------------------------------ hostile input */

static once_status with_word(const uint8_t *file, size_t len, size_t offset, uint64_t value)
{
    uint8_t *b = malloc(len);
    memcpy(b, file, len);
    testing_put_le(b + offset, value, 8);
    testing_reseal(b, len);
    once_status st = testing_load_and_vet(b, len);
    free(b);
    return st;
}

/*
 * Every byte flipped (and resealed, as a writer who means harm would), every
 * parameter set out of range or inconsistent with the payload, padding bits set, a
 * batch below the threshold before the last: refused, never a crash, never an
 * allocation beyond the file's size; what loads is sound.
 */
static void hostile_loads(void)
{
    const opts shapes[] = {
        {.type = ONCE_BPBF, .capacity = 40, .block_length = 100, .blocks = 3, .hashes = 2,
         .seed = 80},
        {.type = ONCE_DBPBF, .block_length = 100, .blocks = 3, .hashes = 2, .threshold = 20,
         .max_bytes = 4096, .seed = 81},
    };
    for (int s = 0; s < 2; s++) {
        bool dynamic = shapes[s].type == ONCE_DBPBF;
        once_filter *f = make(&shapes[s]);
        REQUIRE(f != NULL);
        add_range(f, 12, 0, 70);
        size_t len = 0;
        uint8_t *file = testing_save(f, &len);
        once_free(f);
        REQUIRE(file != NULL);
        CHECK_OK(testing_load_and_vet(file, len));
        uint64_t batches = testing_get_le(file + HEADER + 8 * BPBF_P_BATCHES, 8);
        CHECK(batches == (dynamic ? 4u : 1u));
        uint64_t max_bytes = testing_get_le(file + HEADER + 8 * BPBF_P_MAX_BYTES, 8);

        for (size_t at = 0; at + 8 < len; at++) {
            for (int bit = 0; bit < 8; bit += 3) {
                uint8_t *b = malloc(len);
                memcpy(b, file, len);
                b[at] ^= (uint8_t)(1u << bit);
                CHECK(once_load(&f, b, len) != ONCE_OK || (once_free(f), true));
                testing_reseal(b, len);
                testing_load_and_vet(b, len); /* sound if it loads (bits of the payload may flip) */
                free(b);
            }
        }
        struct {
            int param;
            uint64_t value;
        } bad[] = {
            {BPBF_P_BLOCK_LENGTH, 0},
            {BPBF_P_BLOCK_LENGTH, (UINT64_C(1) << 40) + 1},
            {BPBF_P_BLOCK_LENGTH, UINT64_MAX},
            {BPBF_P_BLOCK_LENGTH, 200}, /* a longer payload than the file has */
            {BPBF_P_BLOCKS, 0},
            {BPBF_P_BLOCKS, 65537},
            {BPBF_P_BLOCKS, UINT64_MAX},
            {BPBF_P_BLOCKS, 4},
            {BPBF_P_BLOCK_HASHES, 0},
            {BPBF_P_BLOCK_HASHES, 65},
            {BPBF_P_THRESHOLD, dynamic ? 0 : 1},
            {BPBF_P_BATCHES, 0},
            {BPBF_P_BATCHES, batches + 1},
            {BPBF_P_BATCHES, (UINT64_C(1) << 20) + 1},
            {BPBF_P_BATCHES, UINT64_MAX},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            once_status st = with_word(file, len, HEADER + 8 * (size_t)bad[i].param, bad[i].value);
            if (st != ONCE_ERR_CORRUPT)
                fprintf(stderr, "param %d = %llu: %s\n", bad[i].param,
                        (unsigned long long)bad[i].value, once_strerror(st));
            CHECK(st == ONCE_ERR_CORRUPT);
        }
        if (dynamic) {
            CHECK(with_word(file, len, HEADER + 8 * BPBF_P_MAX_BYTES, 0) == ONCE_ERR_CORRUPT);
            /* The cap bounds once_bytes: a cap one byte below what the filter holds is
             * a file the library would not write. */
            CHECK(max_bytes == 4096);
            once_filter *g = NULL;
            CHECK_OK(once_load(&g, file, len));
            uint64_t held = once_bytes(g);
            once_free(g);
            CHECK(held > 4 * 64 && held < max_bytes);
            CHECK(with_word(file, len, HEADER + 8 * BPBF_P_MAX_BYTES, held - 1) == ONCE_ERR_CORRUPT);
            CHECK_OK(with_word(file, len, HEADER + 8 * BPBF_P_MAX_BYTES, held));
            /* The first batch (not the last) below the threshold. */
            CHECK(with_word(file, len, BPBF_OFF_PAYLOAD, 19) == ONCE_ERR_CORRUPT);
            CHECK_OK(with_word(file, len, BPBF_OFF_PAYLOAD + 8 * (batches - 1), 19));
        } else {
            CHECK(with_word(file, len, HEADER + 8 * BPBF_P_MAX_BYTES, 8) == ONCE_ERR_CORRUPT);
        }
        /* A padding bit (bit 100 of the first block: block 0's second word, bit 36). */
        {
            uint8_t *b = malloc(len);
            memcpy(b, file, len);
            size_t words_at = BPBF_OFF_PAYLOAD + 8 * batches;
            b[words_at + 8 + 4] |= 0x10;
            testing_reseal(b, len);
            CHECK(testing_load_and_vet(b, len) == ONCE_ERR_CORRUPT);
            free(b);
        }
        /* A payload length that disagrees with the parameters. */
        for (int extra = -16; extra <= 16; extra += 8) {
            if (extra == 0)
                continue;
            size_t blen = (size_t)((long)len + extra);
            uint8_t *b = calloc(1, blen);
            memcpy(b, file, extra < 0 ? blen : len);
            uint64_t payload_len = testing_get_le(file + HEADER + 8 * BPBF_P_COUNT, 8);
            testing_put_le(b + HEADER + 8 * BPBF_P_COUNT, payload_len + (uint64_t)extra, 8);
            testing_reseal(b, blen);
            CHECK(testing_load_and_vet(b, blen) != ONCE_OK);
            free(b);
        }
        once_free_buffer(file);
    }
}

/* The memory cap: the insertion that needs one batch too many fails with
 * ONCE_ERR_FULL and leaves the filter byte for byte as it was. */
static void memory_cap_refuses_and_keeps_state(void)
{
    /* Batches of 4 blocks of 1000 bits = 64 words = 512 bytes; a cap of what the filter
     * holds with 3 of them. */
    opts o = {.type = ONCE_DBPBF, .block_length = 1000, .blocks = 4, .threshold = 100,
              .seed = 90};
    once_filter *f = make(&o);
    REQUIRE(f != NULL);
    add_range(f, 13, 0, 300);
    CHECK(state_of(f).batches == 3);
    o.max_bytes = once_bytes(f);
    CHECK(o.max_bytes > 3 * 512 && o.max_bytes < 4 * 512);
    once_free(f);
    f = make(&o);
    REQUIRE(f != NULL);
    add_range(f, 13, 0, 300);
    CHECK(state_of(f).batches == 3);
    size_t len_before = 0;
    uint8_t *before = testing_save(f, &len_before);
    testing_key k = testing_key_make(13, 300);
    CHECK_STATUS(once_add(f, &k, sizeof k, 0), ONCE_ERR_FULL);
    bool seen = true;
    CHECK_STATUS(once_test_and_add(f, &k, sizeof k, 0, &seen), ONCE_ERR_FULL);
    once_key batch[2] = {{&k, sizeof k, 0}, {&k, sizeof k, 0}};
    CHECK_STATUS(once_add_batch(f, batch, 2), ONCE_ERR_FULL);
    uint8_t answers[2];
    CHECK_STATUS(once_test_and_add_batch(f, batch, 2, answers), ONCE_ERR_FULL);
    size_t len_after = 0;
    uint8_t *after = testing_save(f, &len_after);
    CHECK(before && after && len_before == len_after && memcmp(before, after, len_after) == 0);
    CHECK(once_items(f) == 300);
    CHECK(missing_in_range(f, 13, 0, 300) == 0);
    CHECK(testing_stats(f).bytes == o.max_bytes);
    /* A union that would need a fourth batch is refused the same way. */
    o.max_bytes = 0;
    once_filter *g = make(&o);
    REQUIRE(g != NULL);
    add_range(g, 14, 0, 350);
    CHECK_STATUS(once_bpbf_union(f, g), ONCE_ERR_FULL);
    uint8_t *again = testing_save(f, &len_after);
    CHECK(again && len_before == len_after && memcmp(before, again, len_after) == 0);
    once_free_buffer(before);
    once_free_buffer(after);
    once_free_buffer(again);
    /* After a reduction the same cap holds more (smaller) batches. */
    CHECK_OK(once_bpbf_reduce(f, 2));
    CHECK_OK(once_add(f, &k, sizeof k, 0));
    CHECK(state_of(f).batches == 4);
    /* Clearing gives the memory back: one empty batch. */
    CHECK_OK(once_clear(f));
    CHECK(state_of(f).batches == 1 && testing_stats(f).bits_set == 0 && once_items(f) == 0);
    once_free(f);
    once_free(g);
    /* A static filter larger than its cap is refused at creation. */
    opts s = {.type = ONCE_BPBF, .capacity = 100000, .error = 0.01, .max_bytes = 1000, .seed = 91};
    once_config c;
    once_config_init(&c, ONCE_BPBF);
    c.capacity = s.capacity;
    c.error = s.error;
    c.max_bytes = s.max_bytes;
    once_filter *h = NULL;
    CHECK_STATUS(once_create(&h, &c), ONCE_ERR_TOO_LARGE);
    CHECK(h == NULL);
}

/* Batches give exactly the one-key answers, across batch openings inside a call. */
static void batch_matches_single(void)
{
    const opts shapes[] = {
        {.type = ONCE_BPBF, .capacity = 2000, .error = 0.01, .seed = 100},
        {.type = ONCE_DBPBF, .block_length = 700, .blocks = 5, .threshold = 150, .seed = 101},
        /* More cells a key (90) than a plan holds: the batch walks them too. */
        {.type = ONCE_BPBF, .capacity = 2000, .block_length = 1000, .blocks = 30, .hashes = 3,
         .seed = 102},
        {.type = ONCE_DBPBF, .block_length = 1000, .blocks = 30, .hashes = 3, .threshold = 150,
         .seed = 103},
    };
    for (int s = 0; s < 4; s++) {
        once_filter *one = make(&shapes[s]), *many = make(&shapes[s]);
        REQUIRE(one && many);
        enum { N = 3000 };
        static testing_key keys[N];
        static once_key batch[N];
        static uint8_t out[N];
        uint64_t state = 7;
        for (int i = 0; i < N; i++) {
            state = testing_mix(state);
            keys[i] = testing_key_make(15, state % 1500);
            batch[i] = (once_key){&keys[i], sizeof keys[i], 0};
        }
        CHECK_OK(once_test_and_add_batch(many, batch, N, out));
        uint64_t differ = 0;
        for (int i = 0; i < N; i++) {
            bool seen = false;
            CHECK_OK(once_test_and_add(one, &keys[i], sizeof keys[i], 0, &seen));
            differ += seen != (out[i] != 0);
        }
        CHECK(differ == 0);
        CHECK(testing_same_save(one, many));
        CHECK_OK(once_add_batch(many, batch, N));
        for (int i = 0; i < N; i++)
            CHECK_OK(once_add(one, &keys[i], sizeof keys[i], 0));
        CHECK(testing_same_save(one, many));
        for (int i = 0; i < N; i++)
            keys[i] = testing_key_make(16, (uint64_t)i);
        CHECK_OK(once_query_batch(many, batch, N, out));
        for (int i = 0; i < N; i++) {
            bool present = false;
            CHECK_OK(once_query(one, &keys[i], sizeof keys[i], 0, &present));
            differ += present != (out[i] != 0);
        }
        CHECK(differ == 0);
        once_free(one);
        once_free(many);
    }
}

static void invalid_arguments(void)
{
    once_filter *f = NULL;
    once_config c;
    once_config_init(&c, ONCE_BPBF);
    c.capacity = 0;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID); /* nothing to size from */
    c.capacity = 1000;
    c.error = 0;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_RATE);
    c.error = 0.01;
    c.blocks = 65537;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
    c.blocks = 0;
    c.hashes = 65;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID);
    c.hashes = 0;
    c.block_length = UINT64_C(1) << 41;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_TOO_LARGE);
    once_config_init(&c, ONCE_DBPBF);
    c.error = 1.5;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_RATE);
    c.error = 0.01;
    c.block_length = 100;
    c.blocks = 3;
    c.error = 0;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_INVALID); /* no threshold, no rate */
    c.batch_threshold = 10;
    CHECK_OK(once_create(&f, &c));
    REQUIRE(f != NULL);
    CHECK(strcmp(testing_stats(f).structure, "dbpbf") == 0);
    CHECK_STATUS(once_bpbf_reduce(f, 0), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_reduce(f, 4), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_reduce(NULL, 1), ONCE_ERR_INVALID);
    double p;
    CHECK_STATUS(once_bpbf_fpr_at(f, 0, &p), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_fpr_at(f, 4, &p), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_fpr_at(f, 1, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_reduce_to_error(f, 0, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_reduce_to_error(f, 1, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_get_state(f, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_union(f, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_intersect(NULL, f), ONCE_ERR_INVALID);
    CHECK_STATUS(once_remove(f, "a", 1, 0), ONCE_ERR_UNSUPPORTED);
    once_filter *std = testing_make(ONCE_STANDARD, 100, 0.01, 1);
    REQUIRE(std != NULL);
    once_bpbf_state st;
    CHECK_STATUS(once_bpbf_get_state(std, &st), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_reduce(std, 1), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_union(f, std), ONCE_ERR_INVALID);
    CHECK_STATUS(once_union(f, std), ONCE_ERR_MISMATCH);
    once_free(std);
    once_free(f);
    once_bpbf_geometry g;
    CHECK_STATUS(once_bpbf_search(1, 0.01, 1, &g), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_search(1000, 0, 1, &g), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_search(1000, 0.01, 0, &g), ONCE_ERR_INVALID);
    CHECK_STATUS(once_bpbf_search(1000, 0.01, 1, NULL), ONCE_ERR_INVALID);
    CHECK(once_bpbf_threshold(1000, 1, 3, 0) == 0);
    CHECK(once_bpbf_fpr(0, 1, 1, 5) == 1.0);
    once_type type;
    CHECK_OK(once_type_from_name("bpbf", &type));
    CHECK(type == ONCE_BPBF);
    CHECK_OK(once_type_from_name("dbpbf", &type));
    CHECK(type == ONCE_DBPBF);
}

/* ------------------------------------------------------------ cardinality */

typedef struct block_geometry {
    uint64_t block_length;
    uint32_t blocks;
} block_geometry;

static once_filter *make_blocks(const void *context, uint64_t seed)
{
    const block_geometry *g = context;
    opts o = {.type = ONCE_BPBF, .block_length = g->block_length, .blocks = g->blocks,
              .hashes = 1, .seed = seed};
    return make(&o);
}

/*
 * Table 6 (Theorem 3, section 5.3): BPBFs of one hash function a block.  The average
 * relative error and its standard deviation are the printed ones within 15%, or within
 * 4 standard errors of the mean where fewer repetitions are run (the relative error's
 * sd is about 0.75 of its mean, so R repetitions give the mean to 0.75/sqrt(R)); the
 * density within 0.01; the 70% and 90% intervals hold at least that often.  Rows of up
 * to 4 10^5 insertions a repetition run the paper's 1000 repetitions, the 2048-Kbit row
 * 300 and the ten-block row 100 (a quarter of each under the sanitizers, which run
 * several times slower); the 4096-Kbit row (10^10 insertions at 1000 repetitions) is
 * not run.
 */
#ifdef ONCE_TESTS_SANITIZED
#define REPS_DIVISOR 4
#else
#define REPS_DIVISOR 1
#endif
static void table6_block_partitioned_estimates(void)
{
    for (size_t i = 0; i < PAPER002_TABLE6_ROWS; i++) {
        const paper002_table6_row *row = &paper002_table6[i];
        if (row->block_kbits >= 4096)
            continue;
        uint64_t work = row->items * row->blocks;
        uint32_t reps = (work <= 400000 ? 1000 : work <= 500000 ? 300 : 100) / REPS_DIVISOR;
        block_geometry g = {(uint64_t)llround(row->block_kbits * 1024), row->blocks};
        card_trials t = card_trials_run_with(make_blocks, &g, row->items, 0, reps, 600 + i);
        printf("table 6 %6.1f Kbit x %2u n=%-7" PRIu64 " density %.3f (paper %.3f)  avg %.3g "
               "(%.3g)  sd %.3g (%.3g)  max %.3g (%.3g)  90%%: %.0f-%.0f (%.0f-%.0f)  "
               "covered 70%%: %u/%u  90%%: %u/%u\n",
               row->block_kbits, row->blocks, row->items, t.density, row->density, t.avg,
               row->avg, t.sd, row->sd, t.max, row->max, t.low90, t.high90, row->low90,
               row->high90, t.covered70, t.reps, t.covered90, t.reps);
        double tolerance = fmax(0.15, 4 * 0.75 / sqrt((double)reps));
        CHECK(t.failures == 0 && t.reps == reps);
        CHECK(fabs(t.density - row->density) < 0.01);
        CHECK(fabs(t.avg - row->avg) <= tolerance * row->avg);
        CHECK(fabs(t.sd - row->sd) <= tolerance * row->sd);
        CHECK(t.covered70 >= 0.70 * t.reps);
        CHECK(t.covered90 >= 0.90 * t.reps);
    }
}

/* Pairs of static filters (section 5.2 on blocks): the union estimate is the estimate
 * of the OR'ed filter, intersections cover their true size; D-BBFs sum their batches,
 * count a key once under test-and-add, and offer no pair estimate. */
static void cardinality_of_pairs_and_batches(void)
{
    block_geometry g = {1 << 15, 4};
    card_trials t = card_trials_run_with(make_blocks, &g, 20000, 10000, 300, 700);
    printf("intersection 4 x 32 Kbit, 20000 each, 10000 shared: avg %.3g sd %.3g covered "
           "70%%: %u/%u 90%%: %u/%u\n",
           t.avg, t.sd, t.covered70, t.reps, t.covered90, t.reps);
    CHECK(t.failures == 0 && t.reps == 300);
    CHECK(t.covered70 >= 0.70 * t.reps && t.covered90 >= 0.90 * t.reps);
    CHECK(t.avg < 0.05);

    once_filter *a = make_blocks(&g, 7), *b = make_blocks(&g, 7);
    REQUIRE(a && b);
    add_range(a, 20, 0, 15000);
    add_range(b, 20, 10000, 25000);
    once_cardinality u, ref, x;
    CHECK_OK(once_estimate_union(a, b, 0.9, &u));
    CHECK_OK(once_estimate_intersection(a, b, 0.9, &x));
    CHECK(x.low <= 5000 && 5000 <= x.high);
    CHECK(u.low <= 25000 && 25000 <= u.high);
    CHECK_OK(once_union(a, b));
    CHECK_OK(once_estimate_cardinality(a, 0, 0.9, &ref));
    CHECK(u.estimate == ref.estimate && u.low == ref.low && u.high == ref.high);
    once_free(a);
    once_free(b);

    /* D-BBF: 6 batches of 2000; 300 trials of 11000 distinct keys fed twice through
     * test-and-add. */
    uint32_t covered70 = 0, covered90 = 0;
    double error = 0;
    for (uint32_t rep = 0; rep < 300; rep++) {
        opts d = {.type = ONCE_DBPBF, .block_length = 4000, .blocks = 5, .threshold = 2000,
                  .seed = 800 + rep};
        once_filter *f = make(&d);
        REQUIRE(f != NULL);
        for (int pass = 0; pass < 2; pass++) {
            for (uint64_t i = 0; i < 11000; i++) {
                testing_key k = testing_key_make(21 + rep, i);
                bool seen;
                CHECK_OK(once_test_and_add(f, &k, sizeof k, 0, &seen));
            }
        }
        /* The keys held: a first sighting that tested present (a false positive) was
         * not inserted, so the truth is the filter's count of insertions. */
        double truth = (double)once_items(f);
        once_cardinality c70, c90;
        CHECK_OK(once_estimate_cardinality(f, 0, 0.7, &c70));
        CHECK_OK(once_estimate_cardinality(f, 0, 0.9, &c90));
        covered70 += c70.low <= truth && truth <= c70.high;
        covered90 += c90.low <= truth && truth <= c90.high;
        error += fabs(c70.estimate - truth) / truth;
        if (rep == 0) {
            CHECK(state_of(f).batches == 6);
            once_filter *other = make(&d);
            CHECK_STATUS(once_estimate_union(f, other, 0.9, &c70), ONCE_ERR_MISMATCH);
            add_range(other, 22, 0, 11000);
            CHECK_STATUS(once_estimate_union(f, other, 0.9, &c70), ONCE_ERR_UNSUPPORTED);
            once_free(other);
        }
        once_free(f);
    }
    printf("D-BBF 11000 keys in 6 batches: avg error %.3g covered 70%%: %u/300 90%%: %u/300\n",
           error / 300, covered70, covered90);
    CHECK(covered70 >= 0.70 * 300 && covered90 >= 0.90 * 300);
    CHECK(error / 300 < 0.01);
}

static const testing_case cases[] = {
    {"no_false_negatives", no_false_negatives},
    {"rate_after_reduction_is_eq1", rate_after_reduction_is_eq1},
    {"fig1_blocks_beat_folding", fig1_blocks_beat_folding},
    {"reduce_then_continue_inserting", reduce_then_continue_inserting},
    {"configuration_search", configuration_search},
    {"static_configuration", static_configuration},
    {"dbbf_reproduces_table2", dbbf_reproduces_table2},
    {"union_and_intersection_across_resolutions", union_and_intersection_across_resolutions},
    {"save_mid_stream_then_continue", save_mid_stream_then_continue},
    {"hostile_loads", hostile_loads},
    {"memory_cap_refuses_and_keeps_state", memory_cap_refuses_and_keeps_state},
    {"batch_matches_single", batch_matches_single},
    {"invalid_arguments", invalid_arguments},
    {"table6_block_partitioned_estimates", table6_block_partitioned_estimates},
    {"cardinality_of_pairs_and_batches", cardinality_of_pairs_and_batches},
};

TESTING_MAIN(cases)
