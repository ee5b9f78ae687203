/*
 * slice/sites.c - sites held in this process (once.h, "Sliced filters"; sites.h).
 *
 * Design
 *   A memory site is a bit array behind the once_site interface: run() applies each
 *   request to the bits in order, in the caller's thread.
 *
 *   Thread sites are memory sites owned by worker threads (paper 000, section 3: a
 *   site holds its slices and answers requests on positions; here a site is a thread
 *   instead of a host).  Site i belongs to worker i mod T.  start() queues a batch of
 *   requests on the owner's list and returns; wait() returns once the owner has run it.
 *   A filter starts the batches of every site an operation needs and then waits for
 *   them, so the workers run them in parallel; run() is start() then wait().
 *
 * Invariants
 *   - a site's bits are touched only by its owner thread (or, for a memory site, by
 *     the caller that runs it); the owner's mutex orders a batch's hand-over and its
 *     completion, so the caller sees every answer once wait() returns;
 *   - a site has at most one batch in flight (the caller waits before starting the
 *     next), so one `next` link per site is the whole queue;
 *   - the workers live as long as any of their sites: the last site destroyed stops
 *     and joins them.
 */
#include "slice/sites.h"

#include "core/alloc.h"

#include <pthread.h>
#include <stdatomic.h>

/* ------------------------------------------------------------ the bits */

static void bits_run(uint64_t *words, uint64_t bits, once_site_request *requests,
                     size_t count)
{
    for (size_t r = 0; r < count; r++) {
        once_site_request *q = &requests[r];
        bool all = true;
        for (uint32_t i = 0; i < q->count; i++) {
            uint64_t p = q->positions[i], bit = UINT64_C(1) << (p & 63);
            if (p >= bits) {
                all = false; /* a position past the site is never set */
                continue;
            }
            uint64_t *word = &words[p >> 6];
            all = all && (*word & bit) != 0;
            if (q->op != ONCE_SITE_TEST)
                *word |= bit;
        }
        q->all_set = all;
        q->status = ONCE_OK;
    }
}

/* ------------------------------------------------------------ memory sites */

typedef struct memory_site {
    uint64_t bits;
    uint64_t words[];
} memory_site;

static void memory_site_run(void *context, once_site_request *requests, size_t count)
{
    memory_site *m = context;
    bits_run(m->words, m->bits, requests, count);
}

static void memory_site_destroy(void *context)
{
    once_free_memory(context);
}

once_status once_memory_site_new(uint64_t bits, once_site *out)
{
    memory_site *m = once_calloc(1, sizeof *m + (bits / 64) * sizeof(uint64_t));
    if (m == NULL)
        return ONCE_ERR_NOMEM;
    m->bits = bits;
    *out = (once_site){.context = m, .run = memory_site_run, .destroy = memory_site_destroy};
    return ONCE_OK;
}

/* ------------------------------------------------------------ thread sites */

typedef struct thread_site thread_site;

typedef struct worker {
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t wake; /* a batch was queued, or stop */
    pthread_cond_t done; /* a batch was run */
    thread_site *head, *tail;
    bool stop, started;
} worker;

typedef struct site_pool {
    uint32_t workers;
    atomic_uint alive_sites;
    worker worker[];
} site_pool;

struct thread_site {
    site_pool *pool;
    worker *owner;
    thread_site *next;
    once_site_request *requests;
    size_t count;
    bool pending; /* queued or running; under owner->mutex */
    uint64_t bits;
    uint64_t words[];
};

static void *worker_main(void *argument)
{
    worker *w = argument;
    pthread_mutex_lock(&w->mutex);
    for (;;) {
        while (!w->stop && w->head == NULL)
            pthread_cond_wait(&w->wake, &w->mutex);
        if (w->head == NULL)
            break; /* stop, with nothing left to run */
        thread_site *s = w->head;
        w->head = s->next;
        if (w->head == NULL)
            w->tail = NULL;
        pthread_mutex_unlock(&w->mutex);
        bits_run(s->words, s->bits, s->requests, s->count);
        pthread_mutex_lock(&w->mutex);
        s->pending = false;
        pthread_cond_broadcast(&w->done);
    }
    pthread_mutex_unlock(&w->mutex);
    return NULL;
}

static void thread_site_start(void *context, once_site_request *requests, size_t count)
{
    thread_site *s = context;
    worker *w = s->owner;
    pthread_mutex_lock(&w->mutex);
    s->requests = requests;
    s->count = count;
    s->pending = true;
    s->next = NULL;
    if (w->tail != NULL)
        w->tail->next = s;
    else
        w->head = s;
    w->tail = s;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->mutex);
}

static void thread_site_wait(void *context)
{
    thread_site *s = context;
    worker *w = s->owner;
    pthread_mutex_lock(&w->mutex);
    while (s->pending)
        pthread_cond_wait(&w->done, &w->mutex);
    pthread_mutex_unlock(&w->mutex);
}

static void thread_site_run(void *context, once_site_request *requests, size_t count)
{
    thread_site_start(context, requests, count);
    thread_site_wait(context);
}

static void pool_stop(site_pool *pool)
{
    for (uint32_t i = 0; i < pool->workers; i++) {
        worker *w = &pool->worker[i];
        if (!w->started)
            continue;
        pthread_mutex_lock(&w->mutex);
        w->stop = true;
        pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->mutex);
        pthread_join(w->thread, NULL);
        pthread_mutex_destroy(&w->mutex);
        pthread_cond_destroy(&w->wake);
        pthread_cond_destroy(&w->done);
    }
    once_free_memory(pool);
}

static void thread_site_destroy(void *context)
{
    thread_site *s = context;
    site_pool *pool = s->pool;
    once_free_memory(s);
    if (atomic_fetch_sub(&pool->alive_sites, 1) == 1)
        pool_stop(pool);
}

once_status once_thread_sites_create(uint32_t threads, uint32_t count, uint64_t bits,
                                     once_site *sites)
{
    if (threads == 0 || threads > ONCE_MAX_SITE_THREADS || count == 0 || sites == NULL ||
        bits == 0 || bits % 64 != 0 || bits > (UINT64_C(1) << 40))
        return ONCE_ERR_INVALID;
    if (threads > count)
        threads = count; /* a worker without a site would only wait */
    site_pool *pool = once_calloc(1, sizeof *pool + threads * sizeof(worker));
    if (pool == NULL)
        return ONCE_ERR_NOMEM;
    pool->workers = threads;
    atomic_init(&pool->alive_sites, 0);
    once_status st = ONCE_OK;
    for (uint32_t i = 0; i < count && st == ONCE_OK; i++) {
        thread_site *s = once_calloc(1, sizeof *s + (bits / 64) * sizeof(uint64_t));
        if (s == NULL) {
            st = ONCE_ERR_NOMEM;
            break;
        }
        s->pool = pool;
        s->owner = &pool->worker[i % threads];
        s->bits = bits;
        sites[i] = (once_site){.context = s,
                               .run = thread_site_run,
                               .destroy = thread_site_destroy,
                               .start = thread_site_start,
                               .wait = thread_site_wait};
        atomic_fetch_add(&pool->alive_sites, 1);
    }
    for (uint32_t i = 0; i < threads && st == ONCE_OK; i++) {
        worker *w = &pool->worker[i];
        if (pthread_mutex_init(&w->mutex, NULL) != 0) {
            st = ONCE_ERR_NOMEM;
            break;
        }
        if (pthread_cond_init(&w->wake, NULL) != 0) {
            pthread_mutex_destroy(&w->mutex);
            st = ONCE_ERR_NOMEM;
            break;
        }
        if (pthread_cond_init(&w->done, NULL) != 0) {
            pthread_cond_destroy(&w->wake);
            pthread_mutex_destroy(&w->mutex);
            st = ONCE_ERR_NOMEM;
            break;
        }
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            pthread_cond_destroy(&w->done);
            pthread_cond_destroy(&w->wake);
            pthread_mutex_destroy(&w->mutex);
            st = ONCE_ERR_NOMEM;
            break;
        }
        w->started = true;
    }
    if (st != ONCE_OK) {
        uint32_t made = atomic_load(&pool->alive_sites);
        for (uint32_t i = 0; i < made; i++)
            once_free_memory(sites[i].context);
        for (uint32_t i = 0; i < count; i++)
            sites[i] = (once_site){0};
        pool_stop(pool);
    }
    return st;
}
