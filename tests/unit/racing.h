/*
 * racing.h - racing producers for the tests of claims (sliced filters and Bloom
 * trees): a site several producers' filters share, run one request batch at a time
 * with the others let in between, and the tally of what they delivered between them.
 */
#ifndef ONCE_TESTS_RACING_H
#define ONCE_TESTS_RACING_H

#include "once_sliced.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>

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

/* delivered[p][k]: how often producer p delivered key k.  Keys delivered by more than
 * one delivery in all into *twice, by none into *never. */
static inline void racing_tally(uint8_t *const *delivered, unsigned producers, uint64_t keys,
                                uint64_t *twice, uint64_t *never)
{
    *twice = *never = 0;
    for (uint64_t k = 0; k < keys; k++) {
        unsigned total = 0;
        for (unsigned p = 0; p < producers; p++)
            total += delivered[p][k];
        *twice += total > 1;
        *never += total == 0;
    }
}

#endif /* ONCE_TESTS_RACING_H */
