/*
 * cardinality_trials.h - repeated trials of the distinct-key estimators, shared by the
 * tests (tests/unit/test_cardinality.c) and the paper reproductions (bench/experiments.c).
 *
 * One trial builds the filter of a fresh random set (or two filters of sets sharing
 * `overlap` keys), asks the library for the estimate and its 70% and 90% intervals,
 * and records the relative error and whether each interval held the true count.
 * Every trial has its own hash seed and keys, so trials are independent.
 */
#ifndef ONCE_CARDINALITY_TRIALS_H
#define ONCE_CARDINALITY_TRIALS_H

#include "testing.h"

typedef struct card_trials {
    uint32_t reps;
    double avg, max, sd;        /* relative error |estimate - true| / true */
    double density;             /* mean fill of the filter estimated from */
    uint32_t covered70, covered90; /* trials whose interval held the true count */
    double low70, high70, low90, high90; /* mean interval ends */
    uint32_t failures;          /* calls that did not return ONCE_OK */
} card_trials;

static inline once_filter *card_trial_filter(once_type type, uint64_t bits, uint32_t hashes,
                                             uint64_t seed)
{
    once_config c = testing_config(type, seed);
    c.capacity = 0;
    c.bits = bits;
    c.hashes = hashes;
    return testing_create(&c);
}

static inline void card_trial_fill(once_filter *f, uint64_t domain, uint64_t first,
                                   uint64_t count)
{
    enum { CHUNK = 1024 };
    testing_key keys[CHUNK];
    once_key batch[CHUNK];
    for (uint64_t i = 0; i < count; i += CHUNK) {
        size_t n = count - i < CHUNK ? (size_t)(count - i) : CHUNK;
        for (size_t j = 0; j < n; j++) {
            keys[j] = testing_key_make(domain, first + i + j);
            batch[j].data = &keys[j];
            batch[j].len = sizeof keys[j];
            batch[j].time_ms = 0;
        }
        once_add_batch(f, batch, n);
    }
}

/* Builds one trial's filter under a trial seed (`context`: what the maker needs). */
typedef once_filter *(*card_trial_maker)(const void *context, uint64_t seed);

/*
 * `items` distinct keys into one filter (overlap == 0), or, for an intersection, two
 * filters of `items` keys each sharing `overlap` of them, estimating the overlap; each
 * trial's filters come from `make`.
 */
static inline card_trials card_trials_run_with(card_trial_maker make, const void *context,
                                               uint64_t items, uint64_t overlap, uint32_t reps,
                                               uint64_t seed)
{
    card_trials r;
    memset(&r, 0, sizeof r);
    double sum = 0, sum2 = 0;
    double truth = (double)(overlap ? overlap : items);
    for (uint32_t rep = 0; rep < reps; rep++) {
        uint64_t trial_seed = testing_mix(seed + rep);
        once_filter *a = make(context, trial_seed);
        once_filter *b = overlap ? make(context, trial_seed) : NULL;
        if (a == NULL || (overlap && b == NULL)) {
            once_free(a);
            r.failures++;
            continue;
        }
        uint64_t domain = trial_seed * 4;
        card_trial_fill(a, domain, 0, items);
        if (b != NULL) {
            /* S' = the first `overlap` keys of S, then keys of its own. */
            card_trial_fill(b, domain, 0, overlap);
            card_trial_fill(b, domain + 1, 0, items - overlap);
        }
        once_cardinality c70, c90;
        once_status s70, s90;
        if (b != NULL) {
            s70 = once_estimate_intersection(a, b, 0.7, &c70);
            s90 = once_estimate_intersection(a, b, 0.9, &c90);
            once_intersect(a, b); /* for the density of the AND */
        } else {
            s70 = once_estimate_cardinality(a, 0, 0.7, &c70);
            s90 = once_estimate_cardinality(a, 0, 0.9, &c90);
        }
        if (s70 != ONCE_OK || s90 != ONCE_OK) {
            r.failures++;
        } else {
            double e = fabs(c70.estimate - truth) / truth;
            sum += e;
            sum2 += e * e;
            if (e > r.max)
                r.max = e;
            r.covered70 += c70.low <= truth && truth <= c70.high;
            r.covered90 += c90.low <= truth && truth <= c90.high;
            r.low70 += c70.low;
            r.high70 += c70.high;
            r.low90 += c90.low;
            r.high90 += c90.high;
            r.density += testing_stats(a).fill_ratio;
            r.reps++;
        }
        once_free(a);
        once_free(b);
    }
    if (r.reps > 0) {
        double n = r.reps;
        r.avg = sum / n;
        r.sd = n > 1 ? sqrt(fmax(0, (sum2 - sum * sum / n) / (n - 1))) : 0;
        r.density /= n;
        r.low70 /= n;
        r.high70 /= n;
        r.low90 /= n;
        r.high90 /= n;
    }
    return r;
}

typedef struct card_trial_geometry {
    once_type type;
    uint64_t bits;
    uint32_t hashes;
} card_trial_geometry;

static inline once_filter *card_trial_make_geometry(const void *context, uint64_t seed)
{
    const card_trial_geometry *g = (const card_trial_geometry *)context;
    return card_trial_filter(g->type, g->bits, g->hashes, seed);
}

/* The trials over filters of one layout of `bits` cells and `hashes` probes. */
static inline card_trials card_trials_run(once_type type, uint64_t bits, uint32_t hashes,
                                          uint64_t items, uint64_t overlap, uint32_t reps,
                                          uint64_t seed)
{
    card_trial_geometry g = {type, bits, hashes};
    return card_trials_run_with(card_trial_make_geometry, &g, items, overlap, reps, seed);
}

#endif
