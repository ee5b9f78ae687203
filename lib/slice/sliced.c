/*
 * slice/sliced.c - one logical Bloom filter sliced over sites (paper 000, section 3;
 * once.h, "Sliced filters").
 *
 * Design
 *   The filter keeps no bits itself: it turns an event into requests on positions and
 *   sends them to the sites that hold the slices (once_site), then decides from their
 *   answers.  Slicing only chooses the requests:
 *     horizontal: slice H_S(key), a hash of the key under a seed derived from the
 *       filter's (so independent of the k probe hashes), and the k positions of a
 *       standard filter of m/S bits, all in that slice: one request;
 *     vertical: the k positions of the standard filter of m bits
 *       (once_standard_positions, the same as ONCE_STANDARD's), grouped by the slice
 *       that holds them (bit_place: slice i holds 1/S of the filter's bits, a range of
 *       them in a keyed order): one request per touched slice.
 *   Primitives: FTTS sends TEST requests (all at once, or in turn stopping at the first
 *   slice with an unset bit), then SET requests to every touched slice when the event
 *   is distinct; TAS sends TEST_AND_SET requests, and the event is a duplicate when
 *   every slice found all its bits set.  Both decide as the unsliced filter does for
 *   one producer: a duplicate's bits are all set already, so setting them or not
 *   changes nothing (Proposition 1, exact for vertical slicing).
 *
 *   The memory site, used when the caller gives no sites, is a plain bit array.
 *
 * Counting (the paper's load and fairness, section 7): an event counts once for each
 * slice it touches; a message is one request to one site.
 *
 * Invariants
 *   - m is a multiple of 64 S, so every slice is a whole number of words;
 *   - a site that cannot be reached (ONCE_ERR_UNAVAILABLE) fails the call under
 *     ONCE_FAILURE_REPORT; under ONCE_FAILURE_THRESHOLD the event is decided from the
 *     positions reached (section 3.2: x = 0 treats a failed position as set, x = k any
 *     failure as "distinct"; the rates are lib/math/slicing.c's).
 */
#include "core/alloc.h"
#include "once.h"
#include "once_math.h"

#include <string.h>

#define SLICED_MAX_SLICES 4096u
#define SLICED_MAX_HASHES 64u
/* Derives the horizontal slice hash's seed from the filter's. */
#define SLICE_SEED_SALT UINT64_C(0x9e3779b97f4a7c15)

struct once_sliced {
    once_slicing slicing;
    once_primitive primitive;
    once_lookup lookup;
    once_failure on_failure;
    uint32_t threshold;
    uint32_t slices, hashes;
    uint64_t bits, slice_bits, seed;
    uint32_t half_bits; /* b / 2 for the bit placement (bit_place) */
    once_site *sites;
    uint64_t *loads;
    uint64_t events, messages, failed_messages;
};

/* ----------------------------------------------------------- memory sites */

typedef struct memory_site {
    uint64_t bits;
    uint64_t words[];
} memory_site;

static void memory_site_run(void *context, once_site_request *requests, size_t count)
{
    memory_site *m = context;
    for (size_t r = 0; r < count; r++) {
        once_site_request *q = &requests[r];
        bool all = true;
        for (uint32_t i = 0; i < q->count; i++) {
            uint64_t p = q->positions[i], bit = UINT64_C(1) << (p & 63);
            if (p >= m->bits) {
                all = false; /* a position past the slice is never set */
                continue;
            }
            uint64_t *word = &m->words[p >> 6];
            all = all && (*word & bit) != 0;
            if (q->op != ONCE_SITE_TEST)
                *word |= bit;
        }
        q->all_set = all;
        q->status = ONCE_OK;
    }
}

static void memory_site_destroy(void *context)
{
    once_free_memory(context);
}

static once_status memory_site_new(uint64_t bits, once_site *out)
{
    memory_site *m = once_calloc(1, sizeof *m + (bits / 64) * sizeof(uint64_t));
    if (m == NULL)
        return ONCE_ERR_NOMEM;
    m->bits = bits;
    out->context = m;
    out->run = memory_site_run;
    out->destroy = memory_site_destroy;
    return ONCE_OK;
}

/* ---------------------------------------------------------------- creation */

once_status once_sliced_geometry(const once_sliced_config *c, uint64_t *bits, uint32_t *hashes,
                                 uint64_t *slice_bits)
{
    if (c == NULL || bits == NULL || hashes == NULL || slice_bits == NULL)
        return ONCE_ERR_INVALID;
    if ((c->slicing != ONCE_SLICING_HORIZONTAL && c->slicing != ONCE_SLICING_VERTICAL) ||
        c->slices == 0 || c->slices > SLICED_MAX_SLICES ||
        (c->primitive != ONCE_FTTS && c->primitive != ONCE_TAS) ||
        (c->lookup != ONCE_LOOKUP_PARALLEL && c->lookup != ONCE_LOOKUP_PIPELINED) ||
        (c->lookup == ONCE_LOOKUP_PIPELINED && c->primitive != ONCE_FTTS) ||
        (c->on_failure != ONCE_FAILURE_REPORT && c->on_failure != ONCE_FAILURE_THRESHOLD) ||
        c->hashes > SLICED_MAX_HASHES)
        return ONCE_ERR_INVALID;
    uint64_t m = c->bits;
    uint32_t k = c->hashes;
    if (m == 0) {
        uint32_t planned = 0;
        once_status st = once_plan(ONCE_STANDARD, c->capacity, c->error, &m, &planned);
        if (st != ONCE_OK)
            return st;
        if (k == 0)
            k = planned;
    }
    if (k == 0) /* m given alone: the k that is best at the capacity, else 7 */
        k = c->capacity != 0 ? once_optimal_hashes(m, c->capacity) : 7;
    if (c->on_failure == ONCE_FAILURE_THRESHOLD && c->threshold > k)
        return ONCE_ERR_INVALID;
    uint64_t unit = UINT64_C(64) * c->slices;
    if (m > (UINT64_C(1) << 40) - unit)
        return ONCE_ERR_TOO_LARGE;
    m = (m + unit - 1) / unit * unit;
    *bits = m;
    *hashes = k;
    *slice_bits = m / c->slices;
    return ONCE_OK;
}

once_status once_sliced_create(once_sliced **out, const once_sliced_config *c,
                               const once_site *sites)
{
    if (out == NULL)
        return ONCE_ERR_INVALID;
    *out = NULL;
    uint64_t m = 0, slice_bits = 0;
    uint32_t k = 0;
    once_status st = once_sliced_geometry(c, &m, &k, &slice_bits);
    if (st != ONCE_OK)
        return st;
    uint64_t seed = c->seed;
    if (!c->seed_is_set && (st = once_random_seed(&seed)) != ONCE_OK)
        return st;
    once_sliced *f = once_calloc(1, sizeof *f);
    if (f == NULL)
        return ONCE_ERR_NOMEM;
    f->slicing = c->slicing;
    f->primitive = c->primitive;
    f->lookup = c->lookup;
    f->on_failure = c->on_failure;
    f->threshold = c->threshold;
    f->slices = c->slices;
    f->hashes = k;
    f->bits = m;
    f->slice_bits = slice_bits;
    f->seed = seed;
    while ((UINT64_C(1) << (2 * f->half_bits)) < m)
        f->half_bits++;
    f->sites = once_calloc(c->slices, sizeof *f->sites);
    f->loads = once_calloc(c->slices, sizeof *f->loads);
    if (f->sites == NULL || f->loads == NULL) {
        once_sliced_free(f);
        return ONCE_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < c->slices; i++) {
        if (sites != NULL) {
            if (sites[i].run == NULL) {
                once_sliced_free(f);
                return ONCE_ERR_INVALID;
            }
            f->sites[i] = sites[i];
        } else if ((st = memory_site_new(slice_bits, &f->sites[i])) != ONCE_OK) {
            once_sliced_free(f);
            return st;
        }
    }
    *out = f;
    return ONCE_OK;
}

void once_sliced_free(once_sliced *f)
{
    if (f == NULL)
        return;
    if (f->sites != NULL)
        for (uint32_t i = 0; i < f->slices; i++)
            if (f->sites[i].destroy != NULL)
                f->sites[i].destroy(f->sites[i].context);
    once_free_memory(f->sites);
    once_free_memory(f->loads);
    once_free_memory(f);
}

/* ------------------------------------------------------------- an event */

/*
 * Where bit p of the m-bit filter lives: slice place / (m/S), offset place mod (m/S),
 * with place = sigma(p), a keyed bijection of [0, m).  Definition 2 gives slice i the
 * range [i m/S, (i+1) m/S) of the filter's bits; we apply it to the bits in the order
 * sigma puts them.  The filter is the same (a relabelling of bits changes no
 * decision), but the k probe positions of a key, which enhanced double hashing makes
 * a progression, land in slices as if independent, as section 3.2's failure rates
 * assume: without it, a key with a short step keeps all its positions in one or two
 * slices, and a failure takes all of them far more often than phi^k.
 *
 * sigma is a 4-round Feistel permutation of [0, 2^b), 2^b the first even power of two
 * of at least m, walked until it lands below m (cycle walking: a permutation of
 * [0, m), in under 4 steps on average as m > 2^(b-2)).
 */
static uint64_t feistel_round(uint64_t half, uint64_t key)
{
    uint64_t x = half ^ key;
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    return x ^ (x >> 33);
}

static uint64_t bit_place(const once_sliced *f, uint64_t p)
{
    uint64_t mask = (UINT64_C(1) << f->half_bits) - 1;
    do {
        uint64_t left = p >> f->half_bits, right = p & mask;
        for (int round = 0; round < 4; round++) {
            uint64_t next = left ^ (feistel_round(right, f->seed + (uint64_t)round) & mask);
            left = right;
            right = next;
        }
        p = left << f->half_bits | right;
    } while (p >= f->bits);
    return p;
}

/* The requests of one event: the touched slices, each with its positions. */
typedef struct event_plan {
    uint32_t touched;
    uint32_t slice[SLICED_MAX_HASHES];
    uint32_t first[SLICED_MAX_HASHES], count[SLICED_MAX_HASHES];
    uint64_t offsets[SLICED_MAX_HASHES];
} event_plan;

static once_status plan_event(const once_sliced *f, const void *key, size_t len, event_plan *e)
{
    once_digest d;
    once_status st = once_digest_with_seed(f->seed, key, len, &d);
    if (st != ONCE_OK)
        return st;
    uint64_t pos[SLICED_MAX_HASHES];
    e->touched = 0;
    if (f->slicing == ONCE_SLICING_HORIZONTAL) {
        once_digest h;
        if ((st = once_digest_with_seed(f->seed ^ SLICE_SEED_SALT, key, len, &h)) != ONCE_OK ||
            (st = once_standard_positions(f->slice_bits, f->hashes, &d, e->offsets)) != ONCE_OK)
            return st;
        e->touched = 1;
        e->slice[0] = (uint32_t)(((unsigned __int128)h.lo * f->slices) >> 64);
        e->first[0] = 0;
        e->count[0] = f->hashes;
        return ONCE_OK;
    }
    if ((st = once_standard_positions(f->bits, f->hashes, &d, pos)) != ONCE_OK)
        return st;
    for (uint32_t i = 0; i < f->hashes; i++)
        pos[i] = bit_place(f, pos[i]);
    /* Group by slice, in the order slices are first touched. */
    uint32_t used = 0;
    for (uint32_t t = 0; used < f->hashes; t++) {
        uint32_t slice = UINT32_MAX;
        for (uint32_t i = 0; i < f->hashes; i++) {
            if (pos[i] == UINT64_MAX)
                continue;
            uint32_t s = (uint32_t)(pos[i] / f->slice_bits);
            if (slice == UINT32_MAX)
                slice = s;
            if (s != slice)
                continue;
            e->offsets[used++] = pos[i] - (uint64_t)s * f->slice_bits;
            pos[i] = UINT64_MAX;
        }
        e->slice[t] = slice;
        e->first[t] = t == 0 ? 0 : e->first[t - 1] + e->count[t - 1];
        e->count[t] = used - e->first[t];
        e->touched = t + 1;
    }
    return ONCE_OK;
}

/* One request to the site of touched slice t. */
static once_status ask(once_sliced *f, const event_plan *e, uint32_t t, once_site_op op,
                       bool *all_set)
{
    once_site_request q = {op, e->offsets + e->first[t], e->count[t], false, ONCE_OK};
    const once_site *site = &f->sites[e->slice[t]];
    site->run(site->context, &q, 1);
    f->messages++;
    if (q.status == ONCE_ERR_UNAVAILABLE)
        f->failed_messages++;
    *all_set = q.all_set;
    return q.status;
}

/*
 * Decide an event from its slices' answers to `op` (TEST, or TEST_AND_SET for TAS):
 * *present when every reachable position is set and, with failures, at least the
 * threshold of positions was reached.  failed[t] tells which touched slices could not
 * be reached.  Pipelined, slices are asked in turn until one has an unset bit: the
 * event is then distinct whatever the others hold.
 */
static once_status decide(once_sliced *f, const event_plan *e, once_site_op op, bool *present,
                          bool *failed)
{
    bool all = true;
    uint32_t reached = 0;
    for (uint32_t t = 0; t < e->touched; t++) {
        bool slice_all = false;
        once_status st = ask(f, e, t, op, &slice_all);
        failed[t] = st == ONCE_ERR_UNAVAILABLE;
        if (failed[t] && f->on_failure == ONCE_FAILURE_REPORT)
            return st;
        if (st != ONCE_OK && !failed[t])
            return st;
        if (failed[t])
            continue;
        reached += e->count[t];
        all = all && slice_all;
        if (!all && f->lookup == ONCE_LOOKUP_PIPELINED) {
            for (uint32_t u = t + 1; u < e->touched; u++)
                failed[u] = false;
            break;
        }
    }
    *present = all && reached >= (f->on_failure == ONCE_FAILURE_THRESHOLD ? f->threshold : 0);
    return ONCE_OK;
}

once_status once_sliced_test_and_add(once_sliced *f, const void *key, size_t len, bool *seen)
{
    if (f == NULL || seen == NULL || (key == NULL && len != 0))
        return ONCE_ERR_INVALID;
    event_plan e;
    once_status st = plan_event(f, key, len, &e);
    if (st != ONCE_OK)
        return st;
    for (uint32_t t = 0; t < e.touched; t++)
        f->loads[e.slice[t]]++;
    f->events++;
    bool failed[SLICED_MAX_HASHES];
    if (f->primitive == ONCE_TAS)
        return decide(f, &e, ONCE_SITE_TEST_AND_SET, seen, failed);
    if ((st = decide(f, &e, ONCE_SITE_TEST, seen, failed)) != ONCE_OK || *seen)
        return st;
    for (uint32_t t = 0; t < e.touched; t++) {
        bool ignored = false;
        if (failed[t])
            continue; /* what cannot be reached cannot be set */
        st = ask(f, &e, t, ONCE_SITE_SET, &ignored);
        if (st != ONCE_OK && !(st == ONCE_ERR_UNAVAILABLE &&
                               f->on_failure == ONCE_FAILURE_THRESHOLD))
            return st;
    }
    return ONCE_OK;
}

once_status once_sliced_query(once_sliced *f, const void *key, size_t len, bool *present)
{
    if (f == NULL || present == NULL || (key == NULL && len != 0))
        return ONCE_ERR_INVALID;
    event_plan e;
    once_status st = plan_event(f, key, len, &e);
    bool failed[SLICED_MAX_HASHES];
    return st != ONCE_OK ? st : decide(f, &e, ONCE_SITE_TEST, present, failed);
}

/* ---------------------------------------------------------------- stats */

once_status once_sliced_get_stats(const once_sliced *f, once_sliced_stats *s)
{
    if (f == NULL || s == NULL)
        return ONCE_ERR_INVALID;
    memset(s, 0, sizeof *s);
    s->bits = f->bits;
    s->slice_bits = f->slice_bits;
    s->hashes = f->hashes;
    s->slices = f->slices;
    s->events = f->events;
    s->messages = f->messages;
    s->failed_messages = f->failed_messages;
    s->messages_per_event = f->events ? (double)f->messages / (double)f->events : 0.0;
    double sum = 0, squares = 0;
    for (uint32_t i = 0; i < f->slices; i++) {
        sum += (double)f->loads[i];
        squares += (double)f->loads[i] * (double)f->loads[i];
        if (f->loads[i] > s->max_load)
            s->max_load = f->loads[i];
    }
    s->fairness = squares > 0 ? sum * sum / ((double)f->slices * squares) : 1.0;
    return ONCE_OK;
}

once_status once_sliced_loads(const once_sliced *f, uint64_t *loads, uint32_t room)
{
    if (f == NULL || loads == NULL || room < f->slices)
        return ONCE_ERR_INVALID;
    memcpy(loads, f->loads, f->slices * sizeof *loads);
    return ONCE_OK;
}
