/*
 * math/bpbf_plan.c - the rates and the configuration of the block-partitioned filters
 * (paper 002): Eq. 1 per batch, Eq. 2 over batches, n_thres, the section 4 search
 * over mu, and the plans the static and dynamic filters are built from
 * (static/bpbf.c explains the layouts).
 */
#include "math/bpbf_plan.h"
#include "core/config.h"
#include "core/limits.h"

#include <math.h>
#include <string.h>

double once_bpbf_fpr(uint64_t block_length, uint32_t block_hashes, uint32_t blocks,
                     uint64_t items)
{
    if (block_length == 0 || block_hashes == 0 || blocks == 0)
        return 1.0;
    /* (1 - 1/m_b)^(k_b n) as exp(k_b n log1p(-1/m_b)): precise for large m_b. */
    double unset = exp((double)block_hashes * (double)items * log1p(-1.0 / (double)block_length));
    return pow(1.0 - unset, (double)block_hashes * blocks);
}

double once_bpbf_dynamic_fpr(const once_bpbf_geometry *g, uint64_t items)
{
    if (g == NULL || g->batch_threshold == 0)
        return g ? once_bpbf_fpr(g->block_length, g->block_hashes, g->blocks, items) : 1.0;
    uint64_t full = items / g->batch_threshold, last = items % g->batch_threshold;
    if (full > 0 && last == 0) { /* the last batch is full, not a new empty one */
        full--;
        last = g->batch_threshold;
    }
    double keep_full = 1.0 - once_bpbf_fpr(g->block_length, g->block_hashes, g->blocks,
                                           g->batch_threshold);
    double keep_last = 1.0 - once_bpbf_fpr(g->block_length, g->block_hashes, g->blocks, last);
    return 1.0 - keep_last * pow(keep_full, (double)full);
}

uint64_t once_bpbf_threshold(uint64_t block_length, uint32_t block_hashes, uint32_t blocks,
                             double error)
{
    if (block_length < 2 || block_hashes == 0 || blocks == 0 || !(error > 0.0 && error < 1.0))
        return 0;
    /* Eq. 1 <= p  <=>  (1 - 1/m_b)^(k_b n) >= 1 - p^(1/(k_b mu)). */
    double per_bit = pow(error, 1.0 / ((double)block_hashes * blocks));
    double n = log1p(-per_bit) / ((double)block_hashes * log1p(-1.0 / (double)block_length));
    if (!(n >= 0.0))
        return 0;
    if (n > (double)ONCE_MAX_CELLS)
        n = (double)ONCE_MAX_CELLS;
    uint64_t t = (uint64_t)floor(n);
    /* Settle the rounding of the closed form against the formula itself. */
    while (t > 0 && once_bpbf_fpr(block_length, block_hashes, blocks, t) > error)
        t--;
    while (t < ONCE_MAX_CELLS && once_bpbf_fpr(block_length, block_hashes, blocks, t + 1) <= error)
        t++;
    return t;
}

once_status once_bpbf_search(uint64_t batch_bits, double batch_error, uint32_t block_hashes,
                             once_bpbf_geometry *out)
{
    if (out == NULL || batch_bits < 2 || batch_bits > ONCE_MAX_CELLS || block_hashes == 0 ||
        block_hashes > ONCE_MAX_HASHES || !(batch_error > 0.0 && batch_error < 1.0))
        return ONCE_ERR_INVALID;
    once_bpbf_geometry best = {0, 0, block_hashes, 0};
    for (uint64_t mu = 1; mu <= BPBF_MAX_BLOCKS && batch_bits / mu >= 2; mu++) {
        uint64_t m_b = batch_bits / mu;
        uint64_t n = once_bpbf_threshold(m_b, block_hashes, (uint32_t)mu, batch_error);
        if (best.blocks != 0 && n < best.batch_threshold)
            break; /* concave: past the top */
        if (n > best.batch_threshold || best.blocks == 0) {
            best.blocks = (uint32_t)mu;
            best.block_length = m_b;
            best.batch_threshold = n;
        }
    }
    if (best.batch_threshold == 0)
        return ONCE_ERR_INVALID; /* not even one key fits at this rate */
    *out = best;
    return ONCE_OK;
}

bool once_bpbf_geometry_valid(uint64_t block_length, uint64_t blocks, uint64_t block_hashes)
{
    return block_length >= 1 && block_length <= ONCE_MAX_CELLS && blocks >= 1 &&
           blocks <= BPBF_MAX_BLOCKS && blocks * block_length <= ONCE_MAX_CELLS &&
           block_hashes >= 1 && block_hashes <= ONCE_MAX_HASHES;
}

static once_status plan_static(const once_config *c, once_bpbf_geometry *g)
{
    const double ln2 = log(2.0);
    uint64_t n = c->capacity;
    g->batch_threshold = 0;
    g->block_hashes = c->hashes;
    if (g->block_hashes == 0) /* section 3.2: k_b = max(1, floor(m_b/n ln2)) for a given m_b */
        g->block_hashes = c->block_length && n
                              ? (uint32_t)fmax(1.0, fmin(ONCE_MAX_HASHES,
                                                         floor((double)c->block_length / n * ln2)))
                              : 1;
    g->block_length = c->block_length;
    if (g->block_length == 0) { /* m_b = ceil(k_b n / ln2): density 1/2 at n keys */
        if (n == 0)
            return ONCE_ERR_INVALID;
        double m_b = ceil((double)g->block_hashes * (double)n / ln2);
        if (m_b > (double)ONCE_MAX_CELLS)
            return ONCE_ERR_TOO_LARGE;
        g->block_length = (uint64_t)m_b;
    }
    g->blocks = c->blocks;
    if (g->blocks == 0 && c->bits) { /* mu = m / m_b: the most blocks within length m */
        uint64_t mu = c->bits / g->block_length;
        if (mu == 0 || mu > BPBF_MAX_BLOCKS)
            return ONCE_ERR_INVALID;
        g->blocks = (uint32_t)mu;
    } else if (g->blocks == 0) { /* the fewest blocks whose Eq. 1 rate meets `error` */
        if (n == 0 || !(c->error > 0.0 && c->error < 1.0))
            return ONCE_ERR_INVALID;
        double one = once_bpbf_fpr(g->block_length, g->block_hashes, 1, n);
        if (!(one < 1.0))
            return ONCE_ERR_INVALID;
        double mu = one > 0.0 ? ceil(log(c->error) / log(one)) : 1.0;
        if (mu < 1.0)
            mu = 1.0;
        if (mu > BPBF_MAX_BLOCKS)
            return ONCE_ERR_TOO_LARGE;
        g->blocks = (uint32_t)mu;
        /* ceil of a quotient of logs can land one off; settle against Eq. 1. */
        while (g->blocks > 1 &&
               once_bpbf_fpr(g->block_length, g->block_hashes, g->blocks - 1, n) <= c->error)
            g->blocks--;
        while (g->blocks < BPBF_MAX_BLOCKS &&
               once_bpbf_fpr(g->block_length, g->block_hashes, g->blocks, n) > c->error)
            g->blocks++;
    }
    return ONCE_OK;
}

static once_status plan_dynamic(const once_config *c, once_bpbf_geometry *g)
{
    uint32_t k_b = c->hashes ? c->hashes : 1; /* section 4: k_b = 1 by default */
    if (k_b > ONCE_MAX_HASHES)
        return ONCE_ERR_INVALID;
    bool error_ok = c->error > 0.0 && c->error < 1.0;
    if (c->block_length && c->blocks) {
        g->block_length = c->block_length;
        g->blocks = c->blocks;
        g->block_hashes = k_b;
    } else {
        /* The batch length m: given, or the standard filter's for (capacity, error). */
        uint64_t m = c->bits ? c->bits : once_optimal_bits(c->capacity, c->error);
        if (m < 2)
            return ONCE_ERR_INVALID;
        if (c->block_length || c->blocks) { /* one of the two given: the other from m */
            uint64_t m_b = c->block_length ? c->block_length : m / c->blocks;
            uint64_t mu = c->blocks ? c->blocks : m / c->block_length;
            if (m_b == 0 || mu == 0 || mu > BPBF_MAX_BLOCKS)
                return ONCE_ERR_INVALID;
            g->block_length = m_b;
            g->blocks = (uint32_t)mu;
            g->block_hashes = k_b;
        } else {
            if (!error_ok)
                return ONCE_ERR_INVALID;
            once_status st = once_bpbf_search(m, c->error, k_b, g);
            if (st != ONCE_OK)
                return st;
        }
    }
    if (c->batch_threshold) {
        g->batch_threshold = c->batch_threshold;
    } else {
        g->batch_threshold =
            error_ok ? once_bpbf_threshold(g->block_length, g->block_hashes, g->blocks, c->error)
                     : 0;
        if (g->batch_threshold == 0)
            return ONCE_ERR_INVALID;
    }
    return ONCE_OK;
}

once_status once_bpbf_plan(const once_config *given, once_bpbf_geometry *out)
{
    once_config read;
    once_status read_st = once_config_read(given, &read);
    if (read_st != ONCE_OK)
        return read_st;
    const once_config *c = &read;
    if (out == NULL || (c->type != ONCE_BPBF && c->type != ONCE_DBPBF))
        return ONCE_ERR_INVALID;
    once_bpbf_geometry g;
    memset(&g, 0, sizeof g);
    once_status st = c->type == ONCE_BPBF ? plan_static(c, &g) : plan_dynamic(c, &g);
    if (st != ONCE_OK)
        return st;
    if (g.block_length > ONCE_MAX_CELLS || (uint64_t)g.blocks * g.block_length > ONCE_MAX_CELLS)
        return ONCE_ERR_TOO_LARGE;
    if (!once_bpbf_geometry_valid(g.block_length, g.blocks, g.block_hashes))
        return ONCE_ERR_INVALID;
    *out = g;
    return ONCE_OK;
}
