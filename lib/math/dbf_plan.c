/*
 * math/dbf_plan.c - the Dynamic Bloom Filter's formulas (paper 003): the rate of
 * Eq. 3, the multiple-address bound of Eq. 10, when query-before-insert pays
 * (section 3.5.1), the number of rows for a size distribution (section 4.2) and the
 * two-bound policy of section 4.3.
 */
#include "once_math.h"
#include "core/alloc.h"
#include "core/limits.h"

#include <math.h>

double once_dbf_fpr(uint64_t bits, uint32_t hashes, uint64_t row_capacity, uint64_t items)
{
    if (row_capacity == 0)
        return 1.0;
    double full = (double)(items / row_capacity);
    double rest = once_fpr_standard(bits, hashes, items % row_capacity);
    double row = once_fpr_standard(bits, hashes, row_capacity);
    return 1.0 - pow(1.0 - row, full) * (1.0 - rest);
}

double once_dbf_multiple_address_bound(uint64_t bits, uint32_t hashes, uint64_t row_capacity,
                                       uint64_t items)
{
    if (row_capacity == 0 || items == 0)
        return 0.0;
    uint64_t rows = items / row_capacity + (items % row_capacity != 0);
    double row = once_fpr_standard(bits, hashes, row_capacity);
    return 1.0 - pow(1.0 - row, (double)(rows - 1));
}

double once_dbf_query_first_ratio(uint32_t rows, double row_error)
{
    if (rows == 0 || !(row_error >= 0.0 && row_error <= 1.0))
        return 0.0;
    return (double)rows * (1.0 - pow(1.0 - row_error, (double)rows - 1.0));
}

/* ln(0.6185...): the rate of an optimally loaded filter is 0.6185^(m/n), 0.6185 =
 * (1/2)^ln 2 (paper 003 section 4, from Eq. 1 at k = (m/n) ln 2). */
static double log_optimal_base(void)
{
    return log(2.0) * log(0.5);
}

/* suffix[i] = P(n >= i) for i = 0..N+1 from non-negative weights; false if invalid. */
static bool tail_sums(const double *pmf, uint64_t max_items, double *suffix)
{
    double total = 0;
    for (uint64_t i = 0; i <= max_items; i++) {
        if (!isfinite(pmf[i]) || pmf[i] < 0)
            return false;
        total += pmf[i];
    }
    if (!(total > 0) || !isfinite(total))
        return false;
    suffix[max_items + 1] = 0;
    for (uint64_t i = max_items + 1; i-- > 0;)
        suffix[i] = suffix[i + 1] + pmf[i] / total;
    return true;
}

static void plan_eval(const double *suffix, uint64_t max_items, double error, uint32_t rows,
                      once_dbf_plan *out)
{
    uint64_t c = max_items / rows + (max_items % rows != 0);
    double row_error = -expm1(log1p(-error) / rows);
    double m = ceil((double)c * log(row_error) / log_optimal_base());
    double used = 0;
    for (uint32_t i = 1; i <= rows; i++) {
        uint64_t first = c * (i - 1) + 1; /* row i is used iff n > c(i - 1) */
        used += i == 1 ? 1.0 : (first <= max_items ? suffix[first] : 0.0);
    }
    out->rows = rows;
    out->row_capacity = c;
    out->row_bits = (uint64_t)m;
    out->hashes = (uint32_t)ceil(m / (double)c * log(2.0));
    out->row_error = row_error;
    out->expected_bits = m * used;
    out->sbf_bits = ceil((double)max_items * log(error) / log_optimal_base());
}

static once_status plan_check(const double *pmf, uint64_t max_items, double error,
                              uint32_t rows, once_dbf_plan *out)
{
    if (pmf == NULL || out == NULL || max_items == 0 || max_items > ONCE_MAX_CELLS ||
        !(error > 0.0 && error < 1.0) || rows == 0 || rows > max_items)
        return ONCE_ERR_INVALID;
    return ONCE_OK;
}

static once_status plan_search(const double *pmf, uint64_t max_items, double error,
                               uint32_t first, uint32_t last, once_dbf_plan *out)
{
    once_status st = plan_check(pmf, max_items, error, last, out);
    if (st != ONCE_OK)
        return st;
    double *suffix = once_malloc((size_t)(max_items + 2) * sizeof *suffix);
    if (suffix == NULL)
        return ONCE_ERR_NOMEM;
    if (!tail_sums(pmf, max_items, suffix)) {
        once_free_memory(suffix);
        return ONCE_ERR_INVALID;
    }
    for (uint32_t s = first; s <= last; s++) {
        once_dbf_plan p;
        plan_eval(suffix, max_items, error, s, &p);
        if (s == first || p.expected_bits < out->expected_bits)
            *out = p;
    }
    once_free_memory(suffix);
    return ONCE_OK;
}

once_status once_dbf_plan_for_rows(const double *pmf, uint64_t max_items, double error,
                                   uint32_t rows, once_dbf_plan *out)
{
    return plan_search(pmf, max_items, error, rows, rows, out);
}

once_status once_dbf_plan_rows(const double *pmf, uint64_t max_items, double error,
                               uint32_t max_rows, once_dbf_plan *out)
{
    return plan_search(pmf, max_items, error, 1, max_rows, out);
}

once_status once_dbf_two_bounds(uint64_t n0, double alpha, double beta, once_dbf_bounds *out)
{
    if (out == NULL || n0 == 0 || !(alpha > 0.0 && alpha < beta && beta < 1.0))
        return ONCE_ERR_INVALID;
    double sbf = floor((double)n0 * log(alpha) / log(beta));
    double rows = floor(log1p(-beta) / log1p(-alpha));
    double dbf = (double)n0 * rows;
    if (sbf >= 0x1p62 || dbf >= 0x1p62 || rows > DBF_MAX_ROWS)
        return ONCE_ERR_TOO_LARGE;
    out->sbf_limit = (uint64_t)sbf;
    out->dbf_rows = (uint32_t)rows;
    out->dbf_limit = (uint64_t)dbf;
    out->next_sbf_n0 = out->sbf_limit + 1;
    out->next_dbf_n0 = out->dbf_limit + 1;
    return ONCE_OK;
}

once_status once_dbf_rebuilds(uint64_t n0, double alpha, double beta, uint64_t items,
                              uint64_t *sbf_rebuilds, uint64_t *dbf_rebuilds)
{
    if (sbf_rebuilds == NULL || dbf_rebuilds == NULL)
        return ONCE_ERR_INVALID;
    uint64_t counts[2] = {0, 0};
    for (int which = 0; which < 2; which++) {
        uint64_t size = n0;
        for (;;) {
            once_dbf_bounds b;
            once_status st = once_dbf_two_bounds(size, alpha, beta, &b);
            if (st != ONCE_OK)
                return st;
            uint64_t limit = which == 0 ? b.sbf_limit : b.dbf_limit;
            if (items <= limit)
                break;
            if (++counts[which] > 1000000)
                return ONCE_ERR_TOO_LARGE; /* bounds too close to make progress */
            size = which == 0 ? b.next_sbf_n0 : b.next_dbf_n0;
        }
    }
    *sbf_rebuilds = counts[0];
    *dbf_rebuilds = counts[1];
    return ONCE_OK;
}
