/*
 * racing.h - racing producers for the tests of claims (sliced filters and Bloom
 * trees): a site several producers' filters share, run one request batch at a time
 * with the others let in between, and the tally of what they delivered between them.
 */
#ifndef ONCE_TESTS_RACING_H
#define ONCE_TESTS_RACING_H

#include "once_sliced.h"
#include "testing.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>

typedef struct shared_site {
    once_site inner;
    pthread_mutex_t lock;
} shared_site;

static inline void shared_run(void *context, once_site_request *requests, size_t count)
{
    shared_site *s = context;
    pthread_mutex_lock(&s->lock);
    s->inner.run(s->inner.context, requests, count);
    pthread_mutex_unlock(&s->lock);
    sched_yield(); /* let the other producers in between this producer's messages */
}

/* What a racing producer reports: the first member of each test's racer. */
typedef struct racing_lane {
    uint8_t *delivered; /* per key: deliveries by this producer */
    once_status status;
} racing_lane;

#define RACING_MAX_PRODUCERS 8

/*
 * Run `producers` racers, racer p at racers + p * stride (each opening with a
 * racing_lane), on threads through `race`, each given a zeroed tally of `keys`
 * deliveries; join them, check that each finished ONCE_OK, and count the keys
 * delivered by more than one delivery in all (*twice) and by none (*never).
 */
static inline void racing_run(void *racers, size_t stride, unsigned producers, uint64_t keys,
                              void *(*race)(void *), uint64_t *twice, uint64_t *never)
{
    *twice = *never = 0;
    REQUIRE(producers <= RACING_MAX_PRODUCERS);
    pthread_t threads[RACING_MAX_PRODUCERS];
    racing_lane *lanes[RACING_MAX_PRODUCERS];
    for (unsigned p = 0; p < producers; p++) {
        lanes[p] = (racing_lane *)((char *)racers + p * stride);
        lanes[p]->delivered = calloc(keys, 1);
        lanes[p]->status = ONCE_OK;
        REQUIRE(lanes[p]->delivered != NULL);
        REQUIRE(pthread_create(&threads[p], NULL, race, lanes[p]) == 0);
    }
    for (unsigned p = 0; p < producers; p++)
        pthread_join(threads[p], NULL);
    for (uint64_t k = 0; k < keys; k++) {
        unsigned total = 0;
        for (unsigned p = 0; p < producers; p++)
            total += lanes[p]->delivered[k];
        *twice += total > 1;
        *never += total == 0;
    }
    for (unsigned p = 0; p < producers; p++) {
        CHECK_OK(lanes[p]->status);
        free(lanes[p]->delivered);
    }
}

/*
 * racing_run, then what a race must give: no key delivered twice, and at most
 * `most_never` keys never delivered (the filter's false positives).  The counts of
 * `mode` are printed when either fails; the keys never delivered are returned.
 */
static inline uint64_t racing_expect(void *racers, size_t stride, unsigned producers,
                                     uint64_t keys, void *(*race)(void *), uint64_t most_never,
                                     size_t mode)
{
    uint64_t twice = 0, never = 0;
    racing_run(racers, stride, producers, keys, race, &twice, &never);
    if (twice != 0 || never > most_never)
        fprintf(stderr, "mode %zu: %" PRIu64 " keys delivered twice, %" PRIu64 " never\n", mode,
                twice, never);
    CHECK(twice == 0);
    CHECK(never <= most_never);
    return never;
}

#endif /* ONCE_TESTS_RACING_H */
