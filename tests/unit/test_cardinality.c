/*
 * test_cardinality.c - distinct keys from a filter's cells (paper 002, section 5).
 *
 * The specification:
 *   - the estimate reproduces paper 002's Table 3 (single filters) and Table 4
 *     (intersections): average relative error and its standard deviation within 15% of
 *     the printed values over 1000 repetitions;
 *   - the interval for confidence c holds the true count in at least a share c of the
 *     repetitions, for every layout that offers an estimate (the paper's printed bounds
 *     follow no single convention; docs/CARDINALITY.md puts ours beside them);
 *   - keys added twice count once; the union estimate is the estimate of the OR'ed
 *     filter; empty and saturated filters give 0 and an open upper end;
 *   - bad arguments are refused with a status, never a crash.
 */
#include "cardinality_trials.h"
#include "paper002.h"

/* The paper's 1000 repetitions.  The sanitizer build, which is there to check memory
 * safety and runs several times slower, uses a quarter of them: the sampling error of
 * the average is then about 5% of it, so the 15% tolerance is still over 3 sigma. */
#ifdef ONCE_TESTS_SANITIZED
#define PAPER_REPS 250
#else
#define PAPER_REPS 1000
#endif

/* Relative error statistics within 15% of the paper's (the tolerance); with
 * 1000 repetitions the sampling error of the average is about 2.5% of it. */
static void check_row(const paper002_card_row *row, const card_trials *t, const char *what)
{
    printf("%s %6.0f Kbit k=%u n=%-8" PRIu64 " density %.3f (paper %.3f)  avg %.3g (%.3g)  "
           "sd %.3g (%.3g)  max %.3g (%.3g)  covered 70%%: %u/%u  90%%: %u/%u\n",
           what, row->kbits, row->hashes, row->items, t->density, row->density, t->avg,
           row->avg, t->sd, row->sd, t->max, row->max, t->covered70, t->reps, t->covered90,
           t->reps);
    CHECK(t->failures == 0);
    CHECK(fabs(t->density - row->density) < 0.01);
    CHECK(fabs(t->avg - row->avg) <= 0.15 * row->avg);
    CHECK(fabs(t->sd - row->sd) <= 0.15 * row->sd);
    CHECK(t->covered70 >= 0.70 * t->reps);
    CHECK(t->covered90 >= 0.90 * t->reps);
}

/* The rows whose 1000 repetitions take a few seconds.  The 8192 Kbit rows (10^10
 * insertions at 1000 repetitions) run in `make experiments` only. */
static bool row_in_suite(const paper002_card_row *row)
{
    return row->kbits <= 2048;
}

static void table3_standard_filters(void)
{
    for (size_t i = 0; i < PAPER002_TABLE3_ROWS; i++) {
        const paper002_card_row *row = &paper002_table3[i];
        if (!row_in_suite(row))
            continue;
        card_trials t = card_trials_run(ONCE_STANDARD, (uint64_t)(row->kbits * 1024), row->hashes,
                                        row->items, 0, PAPER_REPS, 3000 + i);
        check_row(row, &t, "table 3");
        /* Equal tails are no wider than the paper's printed bounds for single filters. */
        CHECK(t.high70 - t.low70 <= 1.02 * (row->high70 - row->low70));
        CHECK(t.high90 - t.low90 <= 1.02 * (row->high90 - row->low90));
    }
}

static void table4_intersections(void)
{
    for (size_t i = 0; i < PAPER002_TABLE4_ROWS; i++) {
        const paper002_card_row *row = &paper002_table4[i];
        if (!row_in_suite(row))
            continue;
        /* |S| = |S'| = c with an overlap of c/2 (section 5.4.2). */
        card_trials t = card_trials_run(ONCE_STANDARD, (uint64_t)(row->kbits * 1024), row->hashes,
                                        2 * row->items, row->items, PAPER_REPS, 4000 + i);
        check_row(row, &t, "table 4");
    }
}

/* Every layout with an estimator: the intervals hold at least as often as promised,
 * and the estimate is unbiased to within its own spread. */
static void intervals_cover_true_count(void)
{
    static const struct {
        once_type type;
        uint32_t hashes;
    } layouts[] = {{ONCE_STANDARD, 3}, {ONCE_PARTITIONED, 4}, {ONCE_BLOCKED, 8},
                   {ONCE_COUNTING, 3}};
    const uint64_t bits = 1 << 16;
    const double fills[] = {0.1, 0.5, 0.8};
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
        for (size_t d = 0; d < sizeof fills / sizeof fills[0]; d++) {
            /* keys for the wanted fill: n = ln(1 - fill) / (k ln(1 - 1/m)) */
            uint64_t items = (uint64_t)(log(1 - fills[d]) / (layouts[l].hashes * log1p(-1.0 / bits)));
            card_trials t = card_trials_run(layouts[l].type, bits, layouts[l].hashes, items, 0, 300,
                                            500 + 10 * l + d);
            printf("%-11s fill %.1f n=%-6" PRIu64 " avg %.3g sd %.3g covered 70%%: %u/%u 90%%: %u/%u\n",
                   once_type_name(layouts[l].type), fills[d], items, t.avg, t.sd, t.covered70,
                   t.reps, t.covered90, t.reps);
            CHECK(t.reps == 300);
            CHECK(t.covered70 >= 0.70 * t.reps);
            CHECK(t.covered90 >= 0.90 * t.reps);
            CHECK(t.avg < 0.05);
        }
    }
}

static void fill(once_filter *f, uint64_t domain, uint64_t count)
{
    card_trial_fill(f, domain, 0, count);
}

static void duplicates_count_once(void)
{
    once_filter *f = card_trial_filter(ONCE_STANDARD, 1 << 16, 3, 7);
    REQUIRE(f != NULL);
    fill(f, 1, 5000);
    once_cardinality once_added, twice_added;
    CHECK_OK(once_estimate_cardinality(f, 0, 0.9, &once_added));
    fill(f, 1, 5000);
    CHECK(once_items(f) == 10000);
    CHECK_OK(once_estimate_cardinality(f, 0, 0.9, &twice_added));
    CHECK(once_added.estimate == twice_added.estimate);
    CHECK(twice_added.low <= 5000 && 5000 <= twice_added.high);
    CHECK(twice_added.confidence == 0.9);
    once_free(f);
}

static void union_is_the_or_filter(void)
{
    once_filter *a = card_trial_filter(ONCE_BLOCKED, 1 << 18, 6, 9);
    once_filter *b = card_trial_filter(ONCE_BLOCKED, 1 << 18, 6, 9);
    REQUIRE(a != NULL && b != NULL);
    fill(a, 1, 20000);
    fill(b, 1, 10000); /* the first 10000 keys of a ... */
    card_trial_fill(b, 2, 0, 15000); /* ... and 15000 of its own: |a union b| = 35000 */
    once_cardinality u, ored, inter;
    CHECK_OK(once_estimate_union(a, b, 0.9, &u));
    CHECK_OK(once_estimate_intersection(a, b, 0.9, &inter));
    CHECK(u.low <= 35000 && 35000 <= u.high);
    CHECK(inter.low <= 10000 && 10000 <= inter.high);
    CHECK(fabs(inter.estimate - 10000) < 0.05 * 10000);
    CHECK_OK(once_union(a, b));
    CHECK_OK(once_estimate_cardinality(a, 0, 0.9, &ored));
    CHECK(u.estimate == ored.estimate && u.low == ored.low && u.high == ored.high);
    once_free(a);
    once_free(b);
}

static void counting_after_deletes(void)
{
    once_filter *f = card_trial_filter(ONCE_COUNTING, 1 << 16, 3, 11);
    REQUIRE(f != NULL);
    fill(f, 1, 8000);
    for (uint64_t i = 0; i < 3000; i++) {
        testing_key k = testing_key_make(1, i);
        CHECK_OK(once_remove(f, &k, sizeof k, 0));
    }
    once_cardinality c;
    CHECK_OK(once_estimate_cardinality(f, 0, 0.9, &c));
    CHECK(c.low <= 5000 && 5000 <= c.high);
    once_free(f);
}

static void empty_and_saturated(void)
{
    once_filter *f = card_trial_filter(ONCE_STANDARD, 4096, 2, 13);
    REQUIRE(f != NULL);
    once_cardinality c;
    CHECK_OK(once_estimate_cardinality(f, 0, 0.9, &c));
    CHECK(c.estimate == 0 && c.low == 0 && isfinite(c.high) && c.high < 10);
    fill(f, 1, 100000); /* every bit set */
    REQUIRE(testing_stats(f).bits_set == 4096);
    CHECK_OK(once_estimate_cardinality(f, 0, 0.9, &c));
    CHECK(isfinite(c.estimate) && c.estimate > 4096);
    CHECK(isinf(c.high) && c.low <= c.estimate);
    once_free(f);
}

static void wider_with_confidence(void)
{
    once_filter *f = card_trial_filter(ONCE_STANDARD, 1 << 14, 2, 17);
    REQUIRE(f != NULL);
    fill(f, 1, 4000);
    double previous_width = 0;
    const double levels[] = {0.5, 0.7, 0.9, 0.99, 0.999999};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        once_cardinality c;
        CHECK_OK(once_estimate_cardinality(f, 0, levels[i], &c));
        CHECK(c.low <= c.estimate && c.estimate <= c.high);
        CHECK(c.high - c.low > previous_width);
        previous_width = c.high - c.low;
    }
    once_free(f);
}

static void refused_arguments(void)
{
    once_filter *a = card_trial_filter(ONCE_STANDARD, 4096, 2, 1);
    once_filter *b = card_trial_filter(ONCE_STANDARD, 4096, 2, 2);    /* other seed */
    once_filter *c = card_trial_filter(ONCE_STANDARD, 8192, 2, 1);    /* other size */
    once_filter *d = card_trial_filter(ONCE_PARTITIONED, 4096, 2, 1); /* other layout */
    REQUIRE(a && b && c && d);
    once_cardinality out;
    CHECK_STATUS(once_estimate_cardinality(NULL, 0, 0.9, &out), ONCE_ERR_INVALID);
    CHECK_STATUS(once_estimate_cardinality(a, 0, 0.9, NULL), ONCE_ERR_INVALID);
    const double bad[] = {0, 1, -0.5, 2, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_STATUS(once_estimate_cardinality(a, 0, bad[i], &out), ONCE_ERR_INVALID);
        CHECK_STATUS(once_estimate_union(a, a, bad[i], &out), ONCE_ERR_INVALID);
    }
    CHECK_STATUS(once_estimate_union(a, b, 0.9, &out), ONCE_ERR_MISMATCH);
    CHECK_STATUS(once_estimate_intersection(a, c, 0.9, &out), ONCE_ERR_MISMATCH);
    CHECK_STATUS(once_estimate_intersection(a, d, 0.9, &out), ONCE_ERR_MISMATCH);
    CHECK_STATUS(once_estimate_union(a, NULL, 0.9, &out), ONCE_ERR_INVALID);
    once_free(a);
    once_free(b);
    once_free(c);
    once_free(d);
}

static const testing_case cases[] = {
    {"table3_standard_filters", table3_standard_filters},
    {"table4_intersections", table4_intersections},
    {"intervals_cover_true_count", intervals_cover_true_count},
    {"duplicates_count_once", duplicates_count_once},
    {"union_is_the_or_filter", union_is_the_or_filter},
    {"counting_after_deletes", counting_after_deletes},
    {"empty_and_saturated", empty_and_saturated},
    {"wider_with_confidence", wider_with_confidence},
    {"refused_arguments", refused_arguments},
};

TESTING_MAIN(cases)
