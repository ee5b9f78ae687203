/*
 * slice/sites.c - sites that hold other sites: thread sites and vertical sites
 * (once_sliced.h, "Sliced filters", "Sites"); memory sites are site/memory_site.c.
 *
 * Design
 *   Thread sites own other sites (paper 000, section 3: a site holds its slices and
 *   answers requests on positions; here a site is a thread instead of a host).  Site i
 *   belongs to worker i mod T.  start() queues a batch of requests on the owner's list
 *   and returns; wait() returns once the batch has run on the site it wraps: by the
 *   owner, or by the caller itself if the owner had not begun it (it is taken off the
 *   list), since the caller would only sleep until the owner reached it.  A filter
 *   starts the batches of every site an operation needs and then waits for them, the
 *   last started first: the workers run their lists from the front while the caller
 *   takes from the back, so all of them work and the caller sleeps at most once a
 *   worker.  run() is start() then wait().
 *
 *   Vertical sites are one node's filter sliced over S inner sites (paper 000, section
 *   6: "slicing the root Bloom filter or the filter of any other overloaded node in
 *   the tree"; Lemma 1).  Positions [0, m) are split as Definition 2 splits a filter's
 *   bits (slice_vertical_of, the vertically sliced filter's own rule): a request
 *   becomes one request per touched slice, on the positions' offsets there, with the
 *   same operation and time; every inner site that works apart is started before any
 *   is waited for.  All positions are set when every touched slice says so, and a
 *   test-and-set's positions were all set before when every slice's were, so the node
 *   decides as the unsliced one of the same m (Proposition 1): each position lives in
 *   exactly one slice and is tested and set there alone.
 *
 * Invariants
 *   - a site's cells are touched by one thread at a time, its owner or the caller that
 *     took its batch back; the owner's mutex orders a batch's hand-over, its taking
 *     back and its completion, so the caller sees every answer once wait() returns;
 *   - a thread site has at most one batch in flight (the caller waits before starting
 *     the next), so one `next` link per site is the whole queue;
 *   - the workers live as long as any of their sites: the last site destroyed stops
 *     and joins them;
 */
#include "slice/sites.h"

#include "once_math.h"

#include "core/alloc.h"
#include "core/hash.h"
#include "core/timers.h"
#include "core/words.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
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
    once_site inner; /* the site this thread owns */
    once_site_request *requests;
    size_t count;
    bool pending; /* queued or running; under owner->mutex */
    bool waited;  /* a caller sleeps until it has run; under owner->mutex */
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
        s->inner.run(s->inner.context, s->requests, s->count);
        pthread_mutex_lock(&w->mutex);
        s->pending = false;
        if (s->waited) { /* no one to wake for a batch not yet waited for: a wake-up is
                            a system call, and it costs more than a site's batch */
            s->waited = false;
            pthread_cond_broadcast(&w->done);
        }
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

/* Take s off its worker's list if the worker has not begun it (under the mutex). */
static bool take_back(worker *w, thread_site *s)
{
    thread_site *before = NULL;
    for (thread_site *x = w->head; x != NULL; before = x, x = x->next) {
        if (x != s)
            continue;
        if (before != NULL)
            before->next = s->next;
        else
            w->head = s->next;
        if (w->tail == s)
            w->tail = before;
        s->next = NULL;
        return true;
    }
    return false;
}

static void thread_site_wait(void *context)
{
    thread_site *s = context;
    worker *w = s->owner;
    pthread_mutex_lock(&w->mutex);
    if (s->pending && take_back(w, s)) {
        pthread_mutex_unlock(&w->mutex);
        s->inner.run(s->inner.context, s->requests, s->count);
        pthread_mutex_lock(&w->mutex); /* orders the run before the owner's next one */
        s->pending = false;
    }
    while (s->pending) {
        s->waited = true;
        pthread_cond_wait(&w->done, &w->mutex);
    }
    pthread_mutex_unlock(&w->mutex);
}

static void thread_site_run(void *context, once_site_request *requests, size_t count)
{
    thread_site_start(context, requests, count);
    thread_site_wait(context);
}

static void thread_site_describe(void *context, once_site_info *info)
{
    thread_site *s = context;
    if (s->inner.describe == NULL)
        return;
    /* No batch is in flight between calls (the filter waits for each), and the
     * owner's mutex, taken and released after the last one ran, orders its writes
     * before this read. */
    pthread_mutex_lock(&s->owner->mutex);
    s->inner.describe(s->inner.context, info);
    pthread_mutex_unlock(&s->owner->mutex);
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
    if (s->inner.destroy != NULL)
        s->inner.destroy(s->inner.context);
    once_free_memory(s);
    if (atomic_fetch_sub(&pool->alive_sites, 1) == 1)
        pool_stop(pool);
}

static once_status worker_start(worker *w)
{
    if (pthread_mutex_init(&w->mutex, NULL) != 0)
        return ONCE_ERR_NOMEM;
    if (pthread_cond_init(&w->wake, NULL) != 0) {
        pthread_mutex_destroy(&w->mutex);
        return ONCE_ERR_NOMEM;
    }
    if (pthread_cond_init(&w->done, NULL) != 0) {
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->mutex);
        return ONCE_ERR_NOMEM;
    }
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        pthread_cond_destroy(&w->done);
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->mutex);
        return ONCE_ERR_NOMEM;
    }
    w->started = true;
    return ONCE_OK;
}

once_status once_thread_sites_create(uint32_t threads, uint32_t count, once_site *sites)
{
    if (threads == 0 || threads > ONCE_MAX_SITE_THREADS || count == 0 || sites == NULL)
        return ONCE_ERR_INVALID;
    for (uint32_t i = 0; i < count; i++)
        if (sites[i].run == NULL)
            return ONCE_ERR_INVALID;
    if (threads > count)
        threads = count; /* a worker without a site would only wait */
    site_pool *pool = once_calloc(1, sizeof *pool + threads * sizeof(worker));
    thread_site **made = once_calloc(count, sizeof *made);
    once_status st = pool == NULL || made == NULL ? ONCE_ERR_NOMEM : ONCE_OK;
    for (uint32_t i = 0; i < count && st == ONCE_OK; i++)
        if ((made[i] = once_calloc(1, sizeof *made[i])) == NULL)
            st = ONCE_ERR_NOMEM;
    for (uint32_t i = 0; i < threads && st == ONCE_OK; i++)
        st = worker_start(&pool->worker[i]);
    if (st != ONCE_OK) { /* the given sites stay the caller's, untouched */
        for (uint32_t i = 0; made != NULL && i < count; i++)
            once_free_memory(made[i]);
        once_free_memory(made);
        if (pool != NULL)
            pool_stop(pool);
        return st;
    }
    pool->workers = threads;
    atomic_init(&pool->alive_sites, count);
    for (uint32_t i = 0; i < count; i++) {
        thread_site *s = made[i];
        s->pool = pool;
        s->owner = &pool->worker[i % threads];
        s->inner = sites[i];
        sites[i] = (once_site){.context = s,
                               .run = thread_site_run,
                               .destroy = thread_site_destroy,
                               .start = thread_site_start,
                               .wait = thread_site_wait,
                               .describe = thread_site_describe};
    }
    once_free_memory(made);
    return ONCE_OK;
}

/* ------------------------------------------------------------ vertical sites */

/* Positions a vertical site splits in stack space; a longer request allocates. */
#define VERTICAL_STACK_POSITIONS 64u

typedef struct vertical_site {
    uint64_t bits;
    uint32_t slices;
    slice_divisor by_bits, by_slices;
    once_site inner[]; /* slices of them */
} vertical_site;

/* A request's split, `count` entries each: every position's slice and offset there, the
 * positions in slice order (sorted: their indexes; grouped: their offsets), the expiries
 * the slices answer in that order, and a request per touched slice. */
typedef struct vertical_split {
    uint32_t *slice_of, *sorted, *part_slice;
    uint64_t *offsets, *grouped, *expiries;
    once_site_request *parts;
} vertical_split;

static void vertical_request(vertical_site *v, once_site_request *q, const vertical_split *x)
{
    q->all_set = true;
    q->status = ONCE_OK;
    q->generations = 0;
    for (uint32_t i = 0; i < q->count; i++) {
        uint64_t p = q->positions[i];
        if (p >= v->bits) { /* past the node: never set, and not written */
            q->all_set = false;
            if (q->expiries != NULL)
                memset(q->expiries, 0, q->count * sizeof *q->expiries);
            return;
        }
        x->slice_of[i] =
            slice_vertical_of(p, v->slices, &v->by_bits, &v->by_slices, &x->offsets[i]);
    }
    /* Group by slice, in slice order (a stable insertion sort of the k positions, as the
     * sliced filter groups its sites). */
    for (uint32_t i = 0; i < q->count; i++) {
        uint32_t j = i;
        while (j > 0 && x->slice_of[x->sorted[j - 1]] > x->slice_of[i]) {
            x->sorted[j] = x->sorted[j - 1];
            j--;
        }
        x->sorted[j] = i;
    }
    uint32_t touched = 0;
    for (uint32_t i = 0; i < q->count; i++) {
        uint32_t slice = x->slice_of[x->sorted[i]];
        if (touched == 0 || slice != x->part_slice[touched - 1]) {
            x->part_slice[touched] = slice;
            x->parts[touched++] = (once_site_request){
                .op = q->op,
                .positions = x->grouped + i,
                .status = ONCE_OK,
                .time_ms = q->time_ms,
                .expiries = q->expiries != NULL ? x->expiries + i : NULL,
                .generation = q->generation};
        }
        x->grouped[i] = x->offsets[x->sorted[i]];
        x->parts[touched - 1].count++;
    }
    /* A claim (racing producers) is the node's: its first touched slice holds it, or
     * slice 0 for a request without positions. */
    if (touched > 0) {
        x->parts[0].claim = q->claim;
        x->parts[0].release = q->release;
    } else if (q->claim != 0 || q->release != 0) {
        once_site_request only = {.op = q->op, .time_ms = q->time_ms, .claim = q->claim,
                                  .release = q->release};
        v->inner[0].run(v->inner[0].context, &only, 1);
        q->status = only.status;
        q->claim_lost = only.claim_lost;
    }
    /* Start the slices that work apart, run the others here, then wait. */
    for (uint32_t t = 0; t < touched; t++) {
        const once_site *site = &v->inner[x->part_slice[t]];
        if (site->start != NULL)
            site->start(site->context, &x->parts[t], 1);
    }
    for (uint32_t t = 0; t < touched; t++) {
        const once_site *site = &v->inner[x->part_slice[t]];
        if (site->start == NULL)
            site->run(site->context, &x->parts[t], 1);
    }
    for (uint32_t t = touched; t-- > 0;) { /* the last started first: see run_sites */
        const once_site *site = &v->inner[x->part_slice[t]];
        if (site->wait != NULL)
            site->wait(site->context);
    }
    q->generations = touched > 0 ? UINT64_MAX : 0;
    for (uint32_t t = 0; t < touched; t++) {
        if (x->parts[t].status != ONCE_OK && q->status == ONCE_OK)
            q->status = x->parts[t].status;
        q->all_set = q->all_set && x->parts[t].all_set;
        q->generations &= x->parts[t].generations; /* one generation at every slice */
    }
    if (touched > 0)
        q->claim_lost = x->parts[0].claim_lost;
    if (q->expiries != NULL) /* back in the request's order */
        for (uint32_t i = 0; i < q->count; i++)
            q->expiries[x->sorted[i]] = x->expiries[i];
}

static void vertical_site_run(void *context, once_site_request *requests, size_t count)
{
    vertical_site *v = context;
    enum { N = VERTICAL_STACK_POSITIONS };
    uint32_t slice_of[N], sorted[N], part_slice[N];
    uint64_t offsets[N], grouped[N], expiries[N];
    once_site_request parts[N];
    const vertical_split stack = {slice_of, sorted, part_slice, offsets, grouped, expiries, parts};
    for (size_t r = 0; r < count; r++) {
        once_site_request *q = &requests[r];
        if (q->count <= N) {
            vertical_request(v, q, &stack);
            continue;
        }
        /* One block: three index arrays, three of positions, the requests. */
        size_t n = q->count;
        void *block = once_malloc(n * (3 * sizeof(uint32_t) + 3 * sizeof(uint64_t) +
                                       sizeof(once_site_request)));
        if (block == NULL) {
            q->status = ONCE_ERR_NOMEM;
            continue;
        }
        once_site_request *heap_parts = block; /* the most aligned first */
        uint64_t *words = (uint64_t *)(heap_parts + n);
        uint32_t *indexes = (uint32_t *)(words + 3 * n);
        const vertical_split heap = {indexes, indexes + n, indexes + 2 * n, words,
                                     words + n, words + 2 * n, heap_parts};
        vertical_request(v, q, &heap);
        once_free_memory(block);
    }
}

/* The node's filter is its slices': cells, set cells, bytes and sub-filters added up
 * (filters: the most any slice holds, as the node's positions are split, not copied). */
static void vertical_site_describe(void *context, once_site_info *info)
{
    vertical_site *v = context;
    once_site_info sum = {0, 0, 0, sizeof *v + v->slices * sizeof *v->inner, 0};
    for (uint32_t i = 0; i < v->slices; i++) {
        once_site_info one = {0, 0, 1, 0, 1};
        if (v->inner[i].describe != NULL)
            v->inner[i].describe(v->inner[i].context, &one);
        sum.cells += one.cells;
        sum.cells_set += one.cells_set;
        sum.filters = one.filters > sum.filters ? one.filters : sum.filters;
        sum.bytes += one.bytes;
        sum.opened += one.opened;
    }
    *info = sum;
}

static void vertical_site_destroy(void *context)
{
    vertical_site *v = context;
    slice_sites_destroy(v->inner, v->slices);
    once_free_memory(v);
}

once_status once_vertical_site_create(uint64_t bits, uint32_t slices, const once_site *inner,
                                      once_site *out)
{
    if (out == NULL || inner == NULL || bits == 0 || bits > (UINT64_C(1) << 40) ||
        slices == 0 || slices > ONCE_MAX_SLICED_SITES || slices > bits)
        return ONCE_ERR_INVALID;
    for (uint32_t i = 0; i < slices; i++)
        if (inner[i].run == NULL || (inner[i].start == NULL) != (inner[i].wait == NULL))
            return ONCE_ERR_INVALID;
    vertical_site *v = once_calloc(1, sizeof *v + slices * sizeof *v->inner);
    if (v == NULL)
        return ONCE_ERR_NOMEM;
    v->bits = bits;
    v->slices = slices;
    v->by_bits = slice_divisor_of(bits);
    v->by_slices = slice_divisor_of(slices);
    memcpy(v->inner, inner, slices * sizeof *inner);
    *out = (once_site){.context = v,
                       .run = vertical_site_run,
                       .destroy = vertical_site_destroy,
                       .describe = vertical_site_describe};
    return ONCE_OK;
}

void slice_sites_destroy(once_site *sites, uint64_t count)
{
    for (uint64_t i = 0; sites != NULL && i < count; i++)
        if (sites[i].destroy != NULL)
            sites[i].destroy(sites[i].context);
}

once_status slice_plan_geometry(uint64_t bits, uint32_t hashes, uint64_t capacity, double error,
                                uint64_t *m, uint32_t *k)
{
    *m = bits;
    *k = hashes;
    if (*m == 0) {
        uint32_t planned = 0;
        once_status st = once_plan(ONCE_STANDARD, capacity, error, m, &planned);
        if (st != ONCE_OK)
            return st;
        if (*k == 0)
            *k = planned;
    }
    if (*k == 0) /* m given alone: the k that is best at the capacity, else 7 */
        *k = capacity != 0 ? once_optimal_hashes(*m, capacity) : 7;
    return ONCE_OK;
}
