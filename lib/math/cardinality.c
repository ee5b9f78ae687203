/*
 * math/cardinality.c - how many distinct keys a filter holds, from its cells alone
 * (paper 002, section 5).
 *
 * The model
 *   Every layout here is an occupancy process: `cells` cells, and each key leaves a
 *   given cell clear with the same probability q (independently of the other keys).
 *   After n distinct keys the expected number of set cells is
 *       S(n) = cells * (1 - q^n)                                   [Lemma 1, Lemma 4]
 *   and its inverse gives the estimate from t set cells,
 *       S^-1(t) = ln(1 - t / cells) / ln q                      [Eq. 3, Theorem 3]
 *   For the standard filter q = (1 - 1/m)^k; for a block-partitioned filter of lambda
 *   blocks of m_b cells and k_b hashes, cells = lambda m_b and q = (1 - 1/m_b)^k_b
 *   (Lemma 4); a partitioned filter is that with lambda = k, k_b = 1; our blocked layout
 *   (k distinct lanes of a random 512-bit block) has q = 1 - k/m.  Keys added twice set
 *   no new cells, which is why this counts distinct keys where `items` counts adds.
 *
 * The interval (Theorem 1)
 *   Fewer keys than n_l would have set t or more cells only with probability at most
 *       e^(t-1-S(n_l)) (S(n_l)/(t-1))^(t-1)          (Chernoff, upper tail)
 *   and more than n_r keys would have set t or fewer only with probability at most
 *       e^(-(t+1-S(n_r))^2 / (2 S(n_r)))                  (Chernoff, lower tail)
 *   so (n_l, n_r) holds the true count with probability at least 1 minus both.  The
 *   theorem leaves the split of the failure mass open; we give each tail half of
 *   1 - confidence (equal tails) and take the tightest n_l and n_r that meet it.  The
 *   bounds are Chernoff bounds over independent cells, so the interval is
 *   conservative: measured coverage is well above `confidence` (tests check it is at
 *   least that).  docs/CARDINALITY.md sets our intervals beside the paper's Table 3.
 *
 * Intersections (section 5.2)
 *   AND-ing two filters sets cells that two different keys, one from each side, set
 *   by chance.  With t1, t2 the set cells of the two filters and t_and those of their
 *   AND, the expected chance collisions (Lemma 2) give
 *       S_and(n) = (t1 t2 + t(n) (m - t1 - t2)) / (m - t(n)),  t(n) = S(n)   [Eq. 5]
 *   whose inverse is Eq. 6: t_cap = (t_and m - t1 t2) / (m - t1 - t2 + t_and), then
 *   n = S^-1(t_cap).  Theorem 2's interval is Theorem 1's with S_and in place of S.
 *   S_and grows with n (its derivative has the sign of (m - t1)(m - t2)), so the same
 *   bisection finds both ends.  Unions need no model of their own: the OR of two
 *   filters is the filter of the union, so Theorem 1 applies to its set cells.
 *
 * Items
 *   What the cells cannot give, the items (keys added) of a union or intersection,
 *   is bounded from the two counts: their sum (saturating) or the smaller.
 *
 * Saturation
 *   A filter with every cell set carries no information about how many keys set
 *   them: the estimate is then the count that would set all but half a cell, and the
 *   upper end of the interval is +infinity.
 */
#include "math/cardinality.h"

#include <math.h>

/* Bisection steps: the interval ends are found to 2^-80 of their bracket. */
#define SEARCH_STEPS 80

double once_card_expected_set(const once_occupancy *o, double keys)
{
    /* cells * (1 - q^n), with q^n = exp(n ln q) kept accurate for q near 1. */
    return o->cells * -expm1(keys * o->log_clear);
}

double once_card_inverse(const once_occupancy *o, double set)
{
    if (set <= 0)
        return 0;
    if (set >= o->cells)
        set = o->cells - 0.5; /* saturated: see the file comment */
    return log1p(-set / o->cells) / o->log_clear;
}

once_status once_occupancy_make(once_occupancy *o, double cells, double clear_per_key)
{
    if (!(cells >= 1) || !(clear_per_key > 0 && clear_per_key < 1))
        return ONCE_ERR_INVALID;
    o->cells = cells;
    o->log_clear = log(clear_per_key);
    return ONCE_OK;
}

once_status once_occupancy_for(once_occupancy *o, uint64_t cells, uint32_t hashes,
                               uint64_t cell_range)
{
    /* (1 - 1/range)^k, computed in logs so huge ranges keep their precision. */
    if (cells == 0 || cell_range == 0 || hashes == 0)
        return ONCE_ERR_INVALID;
    if (cell_range == 1) /* every key sets the one cell of its range */
        return ONCE_ERR_UNSUPPORTED;
    o->cells = (double)cells;
    o->log_clear = (double)hashes * log1p(-1.0 / (double)cell_range);
    return ONCE_OK;
}

/* ln of the upper-tail bound e^(t-1-S) (S/(t-1))^(t-1): "n_l keys set >= t cells". */
static double log_upper_tail(double expected, double t)
{
    double a = t - 1;
    if (a <= 0)
        return 0; /* no bound below one set cell */
    if (expected >= a)
        return 0;
    if (expected <= 0)
        return -INFINITY;
    return a - expected + a * log(expected / a);
}

/* ln of the lower-tail bound e^(-(t+1-S)^2 / 2S): "n_r keys set <= t cells". */
static double log_lower_tail(double expected, double t)
{
    double gap = expected - (t + 1);
    if (gap <= 0)
        return 0;
    return -gap * gap / (2 * expected);
}

/* The model of expected set cells as a function of keys: plain (Lemma 1) or through an
 * AND of two filters (Lemma 3). */
typedef struct card_model {
    const once_occupancy *o;
    bool intersection;
    double t1, t2; /* set cells of the two filters (intersection only) */
} card_model;

static double model_expected(const card_model *c, double keys)
{
    double t = once_card_expected_set(c->o, keys);
    if (!c->intersection)
        return t;
    double m = c->o->cells;
    return (c->t1 * c->t2 + t * (m - c->t1 - c->t2)) / (m - t); /* Eq. 5 */
}

/* Bisection of [lo, hi] for the n where tail(S(n)) <= log_alpha starts or stops
 * holding: it holds at the low side of the bracket (`met_low`, the lower end) or at
 * the high side (the upper end), and the end on that side is returned. */
static double bisect(const card_model *c, double t, double lo, double hi, double log_alpha,
                     double (*tail)(double expected, double t), bool met_low)
{
    for (int i = 0; i < SEARCH_STEPS && hi - lo > 1e-9 * (1 + hi); i++) {
        double mid = 0.5 * (lo + hi);
        if ((tail(model_expected(c, mid), t) <= log_alpha) == met_low)
            lo = mid;
        else
            hi = mid;
    }
    return met_low ? lo : hi;
}

/* Largest n in [0, hi] with tail(n) <= log_alpha, for a tail that falls as n falls
 * (lower end), or smallest n >= lo with tail(n) <= log_alpha (upper end). */
static double search_low(const card_model *c, double t, double hi, double log_alpha)
{
    if (log_upper_tail(model_expected(c, 0), t) > log_alpha)
        return 0;
    return bisect(c, t, 0, hi, log_alpha, log_upper_tail, true);
}

static double search_high(const card_model *c, double t, double lo, double log_alpha)
{
    /* Grow the bracket until the bound is met; if the cells saturate first, the data
     * cannot bound the count from above. */
    double hi = lo > 1 ? lo : 1;
    for (int i = 0; log_lower_tail(model_expected(c, hi), t) > log_alpha; i++) {
        if (i == 200 || !(model_expected(c, hi) < c->o->cells))
            return INFINITY;
        hi *= 2;
    }
    return bisect(c, t, lo, hi, log_alpha, log_lower_tail, false);
}

static void interval(const card_model *c, double t, double estimate, double confidence,
                     once_cardinality *out)
{
    double log_alpha = log((1 - confidence) / 2); /* equal tails */
    double low = search_low(c, t, estimate, log_alpha);
    double high = search_high(c, t, estimate, log_alpha);
    out->estimate = estimate;
    out->low = floor(low);
    out->high = isinf(high) ? INFINITY : ceil(high);
    out->confidence = confidence;
}

once_status once_card_estimate(const once_occupancy *o, uint64_t set, double confidence,
                               once_cardinality *out)
{
    if (o == NULL || out == NULL || !(confidence > 0 && confidence < 1))
        return ONCE_ERR_INVALID;
    card_model c = {o, false, 0, 0};
    double t = (double)set;
    if (t > o->cells)
        return ONCE_ERR_INVALID;
    interval(&c, t, once_card_inverse(o, t), confidence, out);
    return ONCE_OK;
}

once_status once_card_estimate_intersection(const once_occupancy *o, uint64_t set1, uint64_t set2,
                                            uint64_t set_and, double confidence,
                                            once_cardinality *out)
{
    if (o == NULL || out == NULL || !(confidence > 0 && confidence < 1))
        return ONCE_ERR_INVALID;
    double m = o->cells, t1 = (double)set1, t2 = (double)set2, ta = (double)set_and;
    if (t1 > m || t2 > m || ta > t1 || ta > t2)
        return ONCE_ERR_INVALID;
    card_model c = {o, true, t1, t2};
    /* Eq. 6: the set cells the intersection alone would have, then Eq. 3.  Cells clear
     * in both filters (m - t1 - t2 + t_and) are what make the estimate finite. */
    double clear_both = m - t1 - t2 + ta;
    double estimate;
    if (clear_both <= 0) {
        estimate = once_card_inverse(o, m);
    } else {
        double t_cap = (ta * m - t1 * t2) / clear_both;
        estimate = t_cap > 0 ? once_card_inverse(o, t_cap) : 0;
    }
    interval(&c, ta, estimate, confidence, out);
    if (clear_both <= 0)
        out->high = INFINITY;
    return ONCE_OK;
}

/*
 * Sums of parts.  Structures made of parts that hold disjoint sets of keys (a scalable
 * chain's sub-filters, DBF rows, D-BBF batches, timer sub-filters, the segment groups
 * of a window) add up their parts' estimates.  For the sum's interval to hold with
 * probability c, each of the P parts' intervals is taken at 1 - (1 - c)/P: all hold
 * together with probability at least c (the union bound), and then so does the sum of
 * their ends (an infinite upper end stays so).
 */
once_status once_card_sum_estimates(uint32_t parts,
                                    once_status (*estimate)(const void *ctx, uint32_t i,
                                                            double confidence,
                                                            once_cardinality *out),
                                    const void *ctx, double confidence, once_cardinality *out)
{
    if (estimate == NULL || out == NULL || !(confidence > 0 && confidence < 1))
        return ONCE_ERR_INVALID;
    double each = parts > 1 ? 1 - (1 - confidence) / parts : confidence;
    once_cardinality total = {0, 0, 0, confidence};
    for (uint32_t i = 0; i < parts; i++) {
        once_cardinality c;
        once_status st = estimate(ctx, i, each, &c);
        if (st != ONCE_OK)
            return st;
        total.estimate += c.estimate;
        total.low += c.low;
        total.high += c.high;
    }
    *out = total;
    return ONCE_OK;
}

typedef struct occupancy_parts {
    once_status (*part)(const void *ctx, uint32_t i, uint64_t *set, once_occupancy *o);
    const void *ctx;
} occupancy_parts;

static once_status occupancy_part_estimate(const void *ctx, uint32_t i, double confidence,
                                           once_cardinality *out)
{
    const occupancy_parts *p = ctx;
    uint64_t set;
    once_occupancy o;
    once_status st = p->part(p->ctx, i, &set, &o);
    return st != ONCE_OK ? st : once_card_estimate(&o, set, confidence, out);
}

once_status once_card_sum(uint32_t parts,
                          once_status (*part)(const void *ctx, uint32_t i, uint64_t *set,
                                              once_occupancy *o),
                          const void *ctx, double confidence, once_cardinality *out)
{
    if (part == NULL)
        return ONCE_ERR_INVALID;
    occupancy_parts p = {part, ctx};
    return once_card_sum_estimates(parts, occupancy_part_estimate, &p, confidence, out);
}

/*
 * Windows (our design; the papers give no estimator for them)
 *
 * In an age-partitioned layout (APBF, APBBF, TLBF) every insertion goes into the k
 * newest segments, and the segments then age one generation per shift.  Logical
 * segment i therefore holds exactly the keys of generations max(0, i-k+1) .. i
 * (generation 0 is the one being filled), each segment under its own hash.  Counted
 * here: generations 0 .. L, for the TLBF L the oldest generation whose k segments are
 * all still live.  A count window of N counts its last N insertions, from two such
 * counts (once_card_age_span, below).
 *
 * Segments L, L-k, L-2k, ... down to L mod k hold the generation ranges
 * (L-k, L], (L-2k, L-k], ..., [0, L mod k]: disjoint, and together exactly the
 * window.  Each is an occupancy process of its own (Theorem 1 over that segment's
 * set cells), so the window's distinct keys are the sum of their estimates, and an
 * interval at confidence c is the sum of the groups' intervals at 1 - (1 - c)/G
 * (G groups, Bonferroni: all hold at once with probability at least c).  The error
 * is that of one segment per group: for a segment of s cells at fill f the
 * estimate's relative standard error is about sqrt(f / (1 - f)) / (sqrt(s) ln(1/(1-f)))
 * (the delta method on Eq. 3 with binomial cell counts): 1.4% for s = 10^4 at f = 1/2;
 * Theorem 1's interval bounds it.
 *
 * What it counts: distinct keys inserted within the window.  Under first-test-then-
 * set that is the delivered keys of the window; under the refresh policy a key
 * inserted again in two different groups counts once per group, so the estimate is
 * then an upper bound.  With l < k (the APBF's level-0 plan, and most of paper 001's
 * Table 2) the window is one group and the question does not arise.
 */
typedef struct age_window {
    uint32_t k, last;
    once_status (*segment)(const void *ctx, uint32_t logical, uint64_t *set, once_occupancy *o);
    const void *ctx;
} age_window;

/* Part g of the window: segment L - g k. */
static once_status age_window_group(const void *ctx, uint32_t g, uint64_t *set,
                                    once_occupancy *o)
{
    const age_window *w = ctx;
    return w->segment(w->ctx, w->last - g * w->k, set, o);
}

once_status once_card_age_window(uint32_t k, uint32_t last_generation,
                                 once_status (*segment)(const void *ctx, uint32_t logical,
                                                        uint64_t *set, once_occupancy *o),
                                 const void *ctx, double confidence, once_cardinality *out)
{
    if (k == 0 || segment == NULL)
        return ONCE_ERR_INVALID;
    age_window w = {k, last_generation, segment, ctx};
    return once_card_sum(last_generation / k + 1, age_window_group, &w, confidence, out);
}

/*
 * A count window of N insertions (APBF, APBBF) rarely ends on a generation boundary:
 * it holds the current generation's f insertions, q whole older generations and the
 * newest r of the next, N = f + q g + r with 0 <= r < g.  The segments only tell
 * generations apart, so the count of the window is taken the share rho = r / g of the
 * way from T0, the keys of generations 0 .. q, to T1, those of 0 .. q + 1:
 *     W = (1 - rho) T0 + rho T1.
 * Under first-test-then-set every insertion of the window is a distinct key (a key
 * inside the window is reported seen and not inserted again), so T1 - T0 = g and
 * W = T0 + r exactly: the interpolation is no approximation there.  Under the refresh
 * policy it assumes the keys new to the window are spread evenly over generation q + 1.
 * The interval is the same combination of the intervals of T0 and T1, each taken at
 * 1 - (1 - c)/2: both hold together with probability at least c (the union bound), and
 * then the combination of their ends bounds the combination of the counts.
 */
static once_status age_generations(uint32_t k, uint32_t generations,
                                   once_status (*segment)(const void *ctx, uint32_t logical,
                                                          uint64_t *set, once_occupancy *o),
                                   const void *ctx, double confidence, once_cardinality *out)
{
    if (generations == 0) {
        once_cardinality none = {0, 0, 0, confidence};
        *out = none;
        return ONCE_OK;
    }
    return once_card_age_window(k, generations - 1, segment, ctx, confidence, out);
}

static double weighted(double weight, double value)
{
    return weight == 0 ? 0 : weight * value; /* an unused infinite end stays out */
}

once_status once_card_age_span(uint32_t k, uint32_t whole, double share,
                               once_status (*segment)(const void *ctx, uint32_t logical,
                                                      uint64_t *set, once_occupancy *o),
                               const void *ctx, double confidence, once_cardinality *out)
{
    if (k == 0 || segment == NULL || out == NULL || !(share >= 0 && share < 1) ||
        !(confidence > 0 && confidence < 1))
        return ONCE_ERR_INVALID;
    if (share == 0)
        return age_generations(k, whole, segment, ctx, confidence, out);
    double each = whole == 0 ? confidence : 1 - (1 - confidence) / 2;
    once_cardinality t0, t1;
    once_status st = age_generations(k, whole, segment, ctx, each, &t0);
    if (st == ONCE_OK)
        st = age_generations(k, whole + 1, segment, ctx, each, &t1);
    if (st != ONCE_OK)
        return st;
    out->estimate = weighted(1 - share, t0.estimate) + weighted(share, t1.estimate);
    out->low = floor(weighted(1 - share, t0.low) + weighted(share, t1.low));
    out->high = ceil(weighted(1 - share, t0.high) + weighted(share, t1.high));
    out->confidence = confidence;
    return ONCE_OK;
}

uint64_t once_card_combined_items(uint64_t a, uint64_t b, once_combine_op op)
{
    if (op == ONCE_COMBINE_UNION)
        return a + b < a ? UINT64_MAX : a + b;
    return b < a ? b : a;
}
