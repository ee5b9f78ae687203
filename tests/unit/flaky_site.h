/*
 * flaky_site.h - a site for the tests of sliced filters and Bloom trees: bits in
 * memory behind the once_site interface, that answers, or says it cannot be reached
 * (down), or cannot be reached for sets only (refuse_sets), and counts its destroy.
 */
#ifndef ONCE_TESTS_FLAKY_SITE_H
#define ONCE_TESTS_FLAKY_SITE_H

#include "once_sliced.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define FLAKY_SITE_WORDS 1024 /* 65536 bits */

typedef struct flaky_site {
    uint64_t words[FLAKY_SITE_WORDS];
    bool down, refuse_sets;
    int *destroyed;
} flaky_site;

static inline void flaky_run(void *context, once_site_request *requests, size_t count)
{
    flaky_site *s = context;
    for (size_t r = 0; r < count; r++) {
        once_site_request *q = &requests[r];
        if (s->down || (s->refuse_sets && q->op == ONCE_SITE_SET)) {
            q->status = ONCE_ERR_UNAVAILABLE;
            continue;
        }
        q->status = ONCE_OK;
        q->all_set = true;
        for (uint32_t i = 0; i < q->count; i++) {
            uint64_t p = q->positions[i];
            q->all_set = q->all_set && (s->words[p / 64] >> (p % 64) & 1);
            if (q->op != ONCE_SITE_TEST)
                s->words[p / 64] |= UINT64_C(1) << (p % 64);
        }
    }
}

static inline void flaky_destroy(void *context)
{
    flaky_site *s = context;
    (*s->destroyed)++;
}

/* store[0 .. count-1] emptied and up, as sites[0 .. count-1]. */
static inline void flaky_sites(flaky_site *store, once_site *sites, int count, int *destroyed)
{
    for (int i = 0; i < count; i++) {
        memset(&store[i], 0, sizeof store[i]);
        store[i].destroyed = destroyed;
        sites[i] = (once_site){.context = &store[i], .run = flaky_run, .destroy = flaky_destroy};
    }
}

static inline bool flaky_empty(const flaky_site *s)
{
    for (int i = 0; i < FLAKY_SITE_WORDS; i++)
        if (s->words[i] != 0)
            return false;
    return true;
}

static inline void flaky_set(flaky_site *s, const uint64_t *positions, uint32_t k)
{
    for (uint32_t i = 0; i < k; i++)
        s->words[positions[i] / 64] |= UINT64_C(1) << (positions[i] % 64);
}

static inline bool flaky_has(const flaky_site *s, const uint64_t *positions, uint32_t k)
{
    for (uint32_t i = 0; i < k; i++)
        if (!(s->words[positions[i] / 64] >> (positions[i] % 64) & 1))
            return false;
    return true;
}

/* One request to a site: all_set, and its status into *status. */
static inline bool site_request(const once_site *site, once_site_op op,
                                const uint64_t *positions, uint32_t count, uint64_t time_ms,
                                uint64_t *expiries, once_status *status)
{
    once_site_request q = {.op = op,
                           .positions = positions,
                           .count = count,
                           .status = ONCE_ERR_INVALID,
                           .time_ms = time_ms,
                           .expiries = expiries};
    site->run(site->context, &q, 1);
    *status = q.status;
    return q.all_set;
}

#endif /* ONCE_TESTS_FLAKY_SITE_H */
