/*
 * slice/sliced.c - one logical Bloom filter sliced over sites (paper 000, section 3;
 * once_sliced.h, "Sliced filters").
 *
 * Design
 *   The filter keeps no bits itself: it turns an event into requests on positions and
 *   sends them to the sites that hold the slices (once_site), then decides from their
 *   answers.  Slicing only chooses the requests.  An event's k positions are those of
 *   a standard filter (once_standard_positions) over
 *     the bits of the slice H_S(key) picks (horizontal; h-v), floor(m/S) or ceil(m/S)
 *       of them, so that the S slices hold m bits exactly; H_S a hash of the key
 *       under a seed derived from the filter's, so independent of the k probe hashes;
 *     m bits (vertical; v-h), the same positions as ONCE_STANDARD's;
 *   then each position is placed (bit_place: a keyed relabelling of the bits) and goes
 *   to the site that holds it: the one site of its horizontal slice; the part of the
 *   slice's vertical filter that holds it (h-v); the vertical slice that holds it
 *   (vertical), and there the part a hash of the key and the slice picks (v-h).  One
 *   request per touched site.
 *   Primitives: FTTS sends TEST requests (all at once, or in turn stopping at the first
 *   site with an unset bit), then SET requests to every touched site when the event
 *   is distinct; TAS sends TEST_AND_SET requests (in turn, SET after the first site
 *   with an unset bit), and the event is a duplicate when every site found all its
 *   bits set.  Both decide as the unsliced filter does for
 *   one producer: a duplicate's bits are all set already, so setting them or not
 *   changes nothing (Proposition 1, exact for vertical slicing).  A batch therefore
 *   runs as TAS: it sends every request at once and each site runs its own in event
 *   order, which leaves every site as the one-event calls would.
 *
 *   Windows are the sites' timers (section 4): an event is sent with its time t_u and
 *   the sites keep its positions until t_u + w.  A count window of N (the last N
 *   events delivered) is the same timers on another clock: the filter counts the
 *   events it answers distinct, stamps each with its place in that count, and tests
 *   at the count so far, so its events leave the window in the order they came and
 *   none is forgotten while fewer than N others came after it (racing producers share
 *   the count through once_count_clock, and a claimed batch stamps its distinct
 *   events after its test; see "Claims over a batch").  With `refresh` a
 *   duplicate sends SET requests too, so its timers restart at its own time (a site
 *   keeps the later expiry, so a late duplicate shortens nothing).
 *
 *   Memory and thread sites are slice/sites.c's.
 *
 * Counting (the paper's load and fairness, section 7): an event counts once for each
 * site it touches; a message is one request to one site.
 *
 * Threads (section 6, "Concurrency"): with `concurrent`, an operation holds its locks
 * from its first request to its last: over the filter's own bit sites, the lock of its
 * key's stripe (event-level locking; the sites set bits with atomic OR), otherwise the
 * locks of the sites it touches (slice-level).  Locks are taken in increasing order,
 * so no two operations wait for each other in a circle; the counters are atomic, in
 * groups by stripe.
 *
 * Invariants
 *   - every site holds a whole number of words, and the S slices at least m bits: a
 *     vertical filter is the standard filter of m bits exactly;
 *   - a site that cannot be reached (ONCE_ERR_UNAVAILABLE) fails the call under
 *     ONCE_FAILURE_REPORT; under ONCE_FAILURE_THRESHOLD the event is decided from the
 *     positions reached (section 3.2: x = 0 treats a failed position as set, x = k any
 *     failure as "distinct"; the rates are lib/math/slicing.c's);
 *   - the filter owns its sites once created, and never has two batches in flight on
 *     one site.
 */
#include "core/alloc.h"
#include "core/hash.h"
#include "once_sliced.h"
#include "once_math.h"
#include "slice/sites.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define SLICED_MAX_HASHES 64u
/* Derives the horizontal slice hash's seed from the filter's. */
#define SLICE_SEED_SALT UINT64_C(0x9e3779b97f4a7c15)
/* Event-level locks (concurrent filters over their own bit sites): a key's lock is one
 * of this many, by its hash. */
#define EVENT_STRIPES 1024u
/* Events a batch plans and sends at once. */
#define BATCH_EVENTS 256u      /* events a batch's round carries, by default */
#define MAX_BATCH_EVENTS 4096u

typedef struct counter_group {
    _Alignas(64) _Atomic uint64_t events;
    _Atomic uint64_t messages, failed_messages, inserted, local_hits;
    _Atomic uint64_t failed_events; /* decided with a site that could not be reached */
} counter_group;

/* Counter groups of a concurrent filter. */
#define COUNTER_GROUPS 16u

struct once_sliced {
    once_slicing slicing;
    once_primitive primitive;
    once_lookup lookup;
    once_failure on_failure;
    uint32_t threshold;
    uint64_t window_ms;   /* the timers' span: the time window, or the count window + 1 */
    bool count_window;    /* the clock is `delivered`, not the callers' time */
    bool refresh;         /* a duplicate sets its timers again */
    uint32_t equal_timers;
    uint32_t slices, parts, site_count, hashes;
    uint32_t slice_hashes; /* k1: split slicing's slices a key, 1 otherwise */
    uint64_t bits, slice_bits, seed;
    uint64_t probe_bits; /* the most positions are drawn over: m, or the longest slice */
    uint64_t place_mask, place_keys[2]; /* the bit placement (bit_place) */
    uint64_t short_slice;               /* floor(m/S): a slice holds it or one more bit */
    slice_divisor by_bits, by_slices, by_parts, by_part;
    slice_divisor by_slice_length[2];   /* floor(m/S) and ceil(m/S) */
    uint32_t place_shift;
    once_site *sites;
    bool concurrent;
    bool claims;           /* racing producers claim events at their home sites */
    uint32_t batch_events; /* events a round of a batch carries (config.batch_events) */
    /* Claims won by the last batch, released by the next one (or once_sliced_flush):
     * their home sites and values. */
    uint32_t *release_site;
    uint64_t *release_value;
    uint32_t releases;
    bool event_locks;      /* concurrent over shared bit sites: locks by key stripe */
    uint32_t lock_count;   /* sites, or EVENT_STRIPES */
    pthread_mutex_t *locks; /* when concurrent */
    /* Counters, in groups so that concurrent producers seldom write one line: an
     * operation counts in the group of its key's stripe (one group without
     * `concurrent`); the stats add the groups up. */
    uint32_t groups;
    uint32_t loads_stride; /* site_count rounded up to a cache line of counters */
    counter_group *group;
    _Atomic uint64_t *loads; /* groups x loads_stride */
    _Atomic uint8_t *down;   /* per site: its last request could not reach it */
    /* A batch's work space, kept for the next batch rather than allocated each time
     * (a batch that finds it taken, by another thread's, makes its own). */
    struct batch_space *_Atomic spare;
    /* A count window's clock: the events answered distinct so far.  With claims the
     * clock is `clock` (the config's, or own_clock over `delivered`), the count it
     * last gave in `count_seen`. */
    _Alignas(64) _Atomic uint64_t delivered;
    once_count_clock own_clock;
    const once_count_clock *clock;
    uint64_t count_seen, clock_failures;
    /* A time window's stream clock, for callers that judge event times before they
     * offer them (once_sliced_clock): the latest time_ms a test-and-add took, plus one
     * (0: none yet, so that time 0 is a time).  The sites keep their own clocks; this
     * one only reads what the callers gave, atomically, as concurrent callers may. */
    _Atomic uint64_t latest_plus_one;
    /* max_bytes: what the memory sites may still take for sub-filters past their
     * first (once_memory_site_config.budget). */
    uint64_t budget;
    /* Bounded growth (ONCE_GROWTH_BOUNDED, see growth_rate below): the generation sets
     * go to, the events it took and may take, the target rate, and the generations
     * alive (oldest first) with the time their last event expires. */
    bool bounded;
    uint32_t generation;
    uint64_t generation_events, generation_limit;
    double target_rate;
    uint32_t alive;
    uint64_t alive_until[ONCE_MEMORY_SITE_MAX_FILTERS];
};

typedef struct batch_space batch_space;
static void batch_space_free(batch_space *b);

static bool is_diced(once_slicing slicing)
{
    return slicing == ONCE_SLICING_DICED_HV || slicing == ONCE_SLICING_DICED_VH;
}

static bool horizontal_first(once_slicing slicing)
{
    return slicing == ONCE_SLICING_HORIZONTAL || slicing == ONCE_SLICING_DICED_HV;
}

static counter_group *group_of(const once_sliced *f, uint32_t stripe)
{
    return &f->group[stripe % f->groups];
}

static _Atomic uint64_t *loads_of(const once_sliced *f, uint32_t stripe)
{
    return f->loads + (size_t)(stripe % f->groups) * f->loads_stride;
}

static void tally(_Atomic uint64_t *counter, uint64_t by)
{
    atomic_fetch_add_explicit(counter, by, memory_order_relaxed);
}

/* Whether a site's last request reached it (the live failed fraction). */
static void mark_site(once_sliced *f, uint32_t site, once_status status)
{
    uint8_t down = status == ONCE_ERR_UNAVAILABLE;
    if (atomic_load_explicit(&f->down[site], memory_order_relaxed) != down)
        atomic_store_explicit(&f->down[site], down, memory_order_relaxed);
}

/* ---------------------------------------------------------------- creation */

/* The rate growth keeps to: the configured error, or the rate at the configured
 * capacity. */
static double growth_target(const once_sliced_config *c, uint64_t m, uint32_t k)
{
    return c->error > 0.0 && c->error < 1.0 ? c->error : once_fpr_standard(m, k, c->capacity);
}

/* Section 5: the density at which a filter of k hashes has rate P is P^(1/k) (P =
 * (z/m)^k); every slice's share of the filter has the filter's rate at the same
 * density. */
static double growth_density(const once_sliced_config *c, uint64_t m, uint32_t k)
{
    double density = pow(growth_target(c, m, k), 1.0 / k);
    return density > 0.0 && density < 1.0 ? density : 0.5;
}

/*
 * Bounded growth (ONCE_GROWTH_BOUNDED).  Section 5's growth is per site: a site opens
 * a sub-filter when its newest is full, and answers "present" when any of its
 * sub-filters holds the positions.  That bounds each sub-filter, not the rate: through
 * a burst of g sub-filters a site's cell is set in one of them with about g times the
 * density, and a vertical key, whose positions are at several sites, meets that at
 * each (Figs. 10-11: over 12 times the target).  Bounded growth grows the filter as a
 * whole, in generations: every set names the filter's generation and goes to that
 * generation's sub-filter at its site (opened on its first set there), and an event is
 * present when one generation holds all its positions at every site it asks (each
 * site reports the generations that hold its positions; the filter intersects them).
 * A generation is then a filter of m bits with the slicing's rate, and the rate is at
 * most the sum over the generations alive.  As the scalable filter tightens (Almeida et
 * al., "Scalable Bloom Filters"), a generation opened while j others are alive takes
 * events until its rate reaches P_j = 6 P / (pi^2 (j + 1)^2): the i-th oldest
 * generation alive was opened with at least i others alive, so the sum stays under
 * sum_i P_i = P.  (The scalable filter's geometric P/2^(j+1) suits generations that
 * grow in size; ours keep the slices' size, and a share that halves each time cut a
 * generation's events to a tenth within ten of them, so that a filter took 64 in a
 * burst; the squares' share falls slowly, 0.61 P for the first, 0.15 P for the
 * second, and a tenth holds about 40% of the first's events.)  A generation is alive
 * until its last event expires (for ever without a window); the filter tracks that
 * from the times it sets at, and the sites drop its sub-filters as their timers expire.
 * The price is memory: a generation is a whole filter of m bits, and the first takes
 * events only to 0.61 P, so a filter at its capacity holds two.
 */
static double rate_at(const once_sliced *f, uint64_t events)
{
    if (f->slicing == ONCE_SLICING_SPLIT)
        return once_split_fpr(f->bits, f->slice_hashes, f->hashes, f->slices, events);
    return once_sliced_fpr(f->slicing, f->bits, f->hashes, f->slices, f->parts, events);
}

/* The most events at which the filter's rate is at most `rate` (at least 1). */
static uint64_t events_within(const once_sliced *f, double rate)
{
    uint64_t low = 0, high = 1;
    while (high < (UINT64_C(1) << 40) && rate_at(f, high) <= rate) {
        low = high;
        high *= 2;
    }
    while (high - low > 1) { /* rate_at(low) <= rate < rate_at(high) */
        uint64_t mid = low + (high - low) / 2;
        if (rate_at(f, mid) <= rate)
            low = mid;
        else
            high = mid;
    }
    return low > 0 ? low : 1;
}

/* The current generation's share of the rate, with `alive` generations alive, itself
 * included: 6 P / (pi^2 alive^2), the terms of a series that sums to P. */
static void set_generation_limit(once_sliced *f)
{
    const double pi = 3.14159265358979323846;
    double share = 6.0 / (pi * pi * (double)f->alive * (double)f->alive);
    f->generation_limit = events_within(f, f->target_rate * share);
}

/* A new generation at `now`, the dead ones forgotten (a site holds no more than
 * ONCE_MEMORY_SITE_MAX_FILTERS: past them the newest takes more, and the rate rises). */
static void open_generation(once_sliced *f, uint64_t now)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < f->alive; i++)
        if (f->window_ms == 0 || f->alive_until[i] > now)
            f->alive_until[kept++] = f->alive_until[i];
    f->alive = kept;
    if (f->alive == ONCE_MEMORY_SITE_MAX_FILTERS) {
        f->generation_limit = UINT64_MAX;
        return;
    }
    f->generation++;
    f->alive_until[f->alive++] = 0;
    f->generation_events = 0;
    set_generation_limit(f);
}

/* Bounded growth: an event of time (or count) `time_ms` was inserted in the current
 * generation. */
static void generation_took(once_sliced *f, uint64_t time_ms)
{
    uint64_t until = f->window_ms == 0 ? UINT64_MAX : time_ms + f->window_ms;
    if (until > f->alive_until[f->alive - 1])
        f->alive_until[f->alive - 1] = until;
    if (++f->generation_events >= f->generation_limit)
        open_generation(f, time_ms);
}

/* How long the timers keep an event.  A count window of N runs the timers on the count
 * of events delivered: an event distinct at count s is stamped s, and is in the window
 * at count c while c - s <= N (it and fewer than N others delivered since), that is
 * while its expiry s + N + 1 is past c. */
static uint64_t timer_span(const once_sliced_config *c)
{
    return c->window_events != 0 ? c->window_events + 1 : c->window_ms;
}

/* The bits of one (horizontal or vertical) slice: m/S, rounded up to whole words for
 * each of its S' parts.  m itself is kept: a vertical filter spreads its m bits over
 * the S slices, floor(m/S) or ceil(m/S) each, so it is the standard filter of m bits
 * exactly and its slices are as even as m allows. */
static uint64_t slice_span(uint64_t m, uint32_t slices, uint32_t parts)
{
    uint64_t unit = UINT64_C(64) * parts, per_slice = (m + slices - 1) / slices;
    return (per_slice + unit - 1) / unit * unit;
}

const char *once_slicing_name(once_slicing slicing)
{
    switch (slicing) {
    case ONCE_SLICING_HORIZONTAL:
        return "horizontal";
    case ONCE_SLICING_VERTICAL:
        return "vertical";
    case ONCE_SLICING_DICED_HV:
        return "diced h-v";
    case ONCE_SLICING_DICED_VH:
        return "diced v-h";
    case ONCE_SLICING_SPLIT:
        return "split";
    }
    return "unknown";
}

once_status once_sliced_geometry(const once_sliced_config *c, uint64_t *bits, uint32_t *hashes,
                                 uint64_t *slice_bits)
{
    if (c == NULL || bits == NULL || hashes == NULL || slice_bits == NULL)
        return ONCE_ERR_INVALID;
    uint32_t parts = c->parts == 0 ? 1 : c->parts;
    if (c->slicing < ONCE_SLICING_HORIZONTAL || c->slicing > ONCE_SLICING_SPLIT ||
        (c->slicing == ONCE_SLICING_SPLIT) != (c->slice_hashes != 0) ||
        c->slice_hashes > c->slices ||
        c->slices == 0 || (parts > 1 && !is_diced(c->slicing)) ||
        (uint64_t)c->slices * parts > ONCE_MAX_SLICED_SITES ||
        (c->primitive != ONCE_FTTS && c->primitive != ONCE_TAS) ||
        (c->lookup != ONCE_LOOKUP_PARALLEL && c->lookup != ONCE_LOOKUP_PIPELINED) ||
        (c->on_failure != ONCE_FAILURE_REPORT && c->on_failure != ONCE_FAILURE_THRESHOLD) ||
        c->hashes > SLICED_MAX_HASHES || c->threads > ONCE_MAX_SITE_THREADS ||
        (c->window_ms != 0 && c->window_events != 0) ||
        c->window_events >= ONCE_MAX_TIME_MS / 2 || c->batch_events > MAX_BATCH_EVENTS ||
        (timer_span(c) != 0 && c->primitive != ONCE_FTTS) || c->window_ms > ONCE_MAX_TIME_MS / 2 ||
        (c->equal_timers > 1 && timer_span(c) == 0) || (c->refresh && timer_span(c) == 0) ||
        (c->max_bytes != 0 && c->window_events != 0) ||
        (c->growth != ONCE_GROWTH_NONE && c->growth != ONCE_GROWTH_DENSITY &&
         c->growth != ONCE_GROWTH_CARDINALITY && c->growth != ONCE_GROWTH_BOUNDED) ||
        (c->growth == ONCE_GROWTH_BOUNDED && (c->concurrent || c->threads > 0)) ||
        (c->claims && (c->concurrent || c->refresh || c->equal_timers > 1 ||
                       c->growth == ONCE_GROWTH_BOUNDED)) ||
        (c->count_clock != NULL &&
         (!c->claims || c->window_events == 0 || c->count_clock->read == NULL ||
          c->count_clock->reserve == NULL)))
        return ONCE_ERR_INVALID;
    uint64_t m = 0;
    uint32_t k = 0;
    once_status planned = slice_plan_geometry(c->bits, c->hashes, c->capacity, c->error, &m, &k);
    if (planned != ONCE_OK)
        return planned;
    if ((c->on_failure == ONCE_FAILURE_THRESHOLD && c->threshold > k) || c->equal_timers > k ||
        (c->slice_hashes != 0 && k % c->slice_hashes != 0))
        return ONCE_ERR_INVALID;
    if (m > (UINT64_C(1) << 40))
        return ONCE_ERR_TOO_LARGE;
    if (m < (uint64_t)c->slices * parts)
        return ONCE_ERR_INVALID; /* a site without a bit */
    if (c->slicing == ONCE_SLICING_DICED_VH) /* parts of m/(S S') bits, all equal */
        m = (m + (uint64_t)c->slices * parts - 1) / ((uint64_t)c->slices * parts) *
            ((uint64_t)c->slices * parts);
    *bits = m;
    *hashes = k;
    *slice_bits = slice_span(m, c->slices, parts) / parts;
    return ONCE_OK;
}

once_status once_sliced_first_bytes(const once_sliced_config *c, uint64_t *bytes)
{
    uint64_t m = 0, slice_bits = 0;
    uint32_t k = 0;
    if (bytes == NULL)
        return ONCE_ERR_INVALID;
    once_status st = once_sliced_geometry(c, &m, &k, &slice_bits);
    if (st != ONCE_OK)
        return st;
    uint64_t sites = (uint64_t)c->slices * (c->parts == 0 ? 1 : c->parts);
    *bytes = sites * memory_site_sub_filter_bytes(slice_bits, timer_span(c));
    return ONCE_OK;
}

/* The filter's own count as a count window's clock (claims without a shared one). */
static once_status own_clock_read(void *context, uint64_t *count)
{
    once_sliced *f = context;
    *count = atomic_load_explicit(&f->delivered, memory_order_relaxed);
    return ONCE_OK;
}

static once_status own_clock_reserve(void *context, uint64_t n, uint64_t *first)
{
    once_sliced *f = context;
    *first = atomic_fetch_add_explicit(&f->delivered, n, memory_order_relaxed);
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
    uint32_t parts = c->parts == 0 ? 1 : c->parts, site_count = c->slices * parts;
    if (sites != NULL && (c->growth != ONCE_GROWTH_NONE || c->max_bytes != 0))
        return ONCE_ERR_INVALID; /* growth is the memory sites'; given sites grow as they do */
    /* The first sub-filter of every memory site: a timer and its mark, or a bit. */
    uint64_t first_bytes = memory_site_sub_filter_bytes(slice_bits, timer_span(c));
    if (c->max_bytes != 0 && first_bytes > c->max_bytes / site_count)
        return ONCE_ERR_FULL;
    if (c->growth != ONCE_GROWTH_NONE && !(c->error > 0.0 && c->error < 1.0) &&
        c->capacity == 0)
        return ONCE_ERR_INVALID; /* no rate to grow at */
    if (sites != NULL)
        for (uint32_t i = 0; i < site_count; i++)
            if (sites[i].run == NULL || (sites[i].start == NULL) != (sites[i].wait == NULL))
                return ONCE_ERR_INVALID;
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
    f->window_ms = timer_span(c);
    f->count_window = c->window_events != 0;
    f->refresh = c->refresh;
    f->claims = c->claims;
    f->batch_events = c->batch_events ? c->batch_events : BATCH_EVENTS;
    if (f->claims && f->count_window) {
        /* A claimed batch tests at the count read before it: its own deliveries are
         * the slack that gives (once_count_clock), kept to N/16. */
        uint64_t most = c->window_events / 16 ? c->window_events / 16 : 1;
        if (f->batch_events > most)
            f->batch_events = (uint32_t)most;
        f->own_clock = (once_count_clock){.context = f, .read = own_clock_read,
                                          .reserve = own_clock_reserve};
        f->clock = c->count_clock != NULL ? c->count_clock : &f->own_clock;
    }
    if (f->claims) {
        f->release_site = once_malloc(f->batch_events * sizeof *f->release_site);
        f->release_value = once_malloc(f->batch_events * sizeof *f->release_value);
        if (f->release_site == NULL || f->release_value == NULL) {
            once_free_memory(f->release_site);
            once_free_memory(f->release_value);
            once_free_memory(f);
            return ONCE_ERR_NOMEM;
        }
    }
    f->equal_timers = c->equal_timers > 1 ? c->equal_timers : 0;
    f->slices = c->slices;
    f->parts = parts;
    f->site_count = site_count;
    f->hashes = k;
    f->bits = m;
    f->slice_bits = slice_bits;
    f->seed = seed;
    f->by_bits = slice_divisor_of(m);
    f->by_slices = slice_divisor_of(c->slices);
    f->by_parts = slice_divisor_of(parts);
    f->short_slice = m / c->slices;
    f->by_slice_length[0] = slice_divisor_of(f->short_slice);
    f->by_slice_length[1] = slice_divisor_of(f->short_slice + 1);
    if (c->slicing == ONCE_SLICING_DICED_VH) /* m is a multiple of S S' (geometry) */
        f->by_part = slice_divisor_of(m / ((uint64_t)c->slices * parts));
    f->slice_hashes = c->slice_hashes ? c->slice_hashes : 1;
    f->probe_bits = horizontal_first(c->slicing) || c->slicing == ONCE_SLICING_SPLIT
                        ? (m + c->slices - 1) / c->slices
                        : m;
    uint32_t b = 1;
    while ((UINT64_C(1) << b) < f->probe_bits)
        b++;
    f->place_mask = (UINT64_C(1) << b) - 1;
    f->place_shift = (b + 1) / 2;
    f->place_keys[0] = seed ^ UINT64_C(0x243f6a8885a308d3);
    f->place_keys[1] = seed * UINT64_C(0x13198a2e03707345);
    f->sites = once_calloc(site_count, sizeof *f->sites);
    f->groups = c->concurrent ? COUNTER_GROUPS : 1;
    f->loads_stride = (site_count + 7) / 8 * 8;
    f->group = once_aligned_alloc((size_t)f->groups * sizeof *f->group);
    f->loads = once_aligned_alloc((size_t)f->groups * f->loads_stride * sizeof *f->loads);
    f->down = once_calloc(site_count, sizeof *f->down);
    if (f->sites == NULL || f->loads == NULL || f->group == NULL || f->down == NULL) {
        once_sliced_free(f);
        return ONCE_ERR_NOMEM;
    }
    if (c->concurrent) {
        /* Bits that the callers set with atomic OR need only the event's own lock;
         * other sites (timers, growth, threads, the caller's) lock slice by slice. */
        f->event_locks = sites == NULL && c->threads == 0 && f->window_ms == 0 &&
                         c->growth == ONCE_GROWTH_NONE;
        f->lock_count = f->event_locks ? EVENT_STRIPES : site_count;
        f->locks = once_calloc(f->lock_count, sizeof *f->locks);
        if (f->locks == NULL) {
            once_sliced_free(f);
            return ONCE_ERR_NOMEM;
        }
        for (uint32_t i = 0; i < f->lock_count; i++)
            pthread_mutex_init(&f->locks[i], NULL);
        f->concurrent = true;
    }
    if (sites != NULL) {
        memcpy(f->sites, sites, site_count * sizeof *sites);
    } else {
        once_memory_site_config mc = {slice_bits, f->window_ms, c->growth, 0.0,
                                      f->event_locks, NULL};
        if (c->max_bytes != 0) {
            f->budget = c->max_bytes - first_bytes * site_count;
            mc.budget = &f->budget;
        }
        if (c->growth == ONCE_GROWTH_DENSITY || c->growth == ONCE_GROWTH_CARDINALITY)
            mc.max_density = growth_density(c, m, k);
        for (uint32_t i = 0; i < site_count && st == ONCE_OK; i++)
            st = once_memory_site_create(&mc, &f->sites[i]);
        if (st == ONCE_OK && c->threads > 0)
            st = once_thread_sites_create(c->threads, site_count, f->sites);
    }
    if (st != ONCE_OK) {
        once_sliced_free(f); /* destroys the memory sites made so far, nothing else */
        return st;
    }
    if (c->growth == ONCE_GROWTH_BOUNDED) {
        f->bounded = true;
        f->target_rate = growth_target(c, m, k);
        f->alive = 1;
        set_generation_limit(f);
    }
    *out = f;
    return ONCE_OK;
}

void once_sliced_free(once_sliced *f)
{
    if (f == NULL)
        return;
    slice_sites_destroy(f->sites, f->site_count);
    if (f->concurrent)
        for (uint32_t i = 0; i < f->lock_count; i++)
            pthread_mutex_destroy(&f->locks[i]);
    once_free_memory(f->locks);
    once_free_memory(f->release_site);
    once_free_memory(f->release_value);
    once_free_memory(f->sites);
    once_aligned_free(f->loads);
    once_aligned_free(f->group);
    once_free_memory((void *)f->down);
    batch_space_free(atomic_load(&f->spare));
    once_free_memory(f);
}

/* ------------------------------------------------------------- an event */

/*
 * Where bit p of the probed filter (probe_bits: m, or the span of a slice for
 * horizontal-first slicing) lives: position sigma(p), sigma a keyed bijection of
 * [0, probe_bits).
 * Definition 2 gives slice i the range [i m/S, (i+1) m/S) of the filter's bits (and
 * diced slicing each part a range of its slice); we apply it to the bits in the order
 * sigma puts them.  The filter is the same (a relabelling of bits changes no
 * decision), but the k probe positions of a key, which enhanced double hashing makes
 * a progression, land in slices as if independent, as section 3.2's failure rates
 * assume: without it, a key with a short step keeps all its positions in one or two
 * slices, and a failure takes all of them far more often than phi^k.
 *
 * sigma is a keyed permutation of [0, 2^b), 2^b the first power of two of at least
 * probe_bits, walked until it lands below probe_bits (cycle walking: a permutation of
 * [0, probe_bits), in under 2 steps on average): xor and add of key words, products
 * by odd constants and right xorshifts, each a bijection modulo 2^b.  A product
 * carries every low bit into the high ones (the slice a bit lands in) and a xorshift
 * the high ones back down, so each output bit depends on every input bit; the
 * measured failure rates (tests/unit/test_sliced.c) hold it to the independent placement
 * the formulas assume.
 */
static uint64_t bit_place(const once_sliced *f, uint64_t p, uint64_t range)
{
    const uint64_t mask = f->place_mask;
    const uint32_t shift = f->place_shift;
    do {
        uint64_t x = ((p ^ f->place_keys[0]) * UINT64_C(0x9e3779b97f4a7c15)) & mask;
        x ^= x >> shift;
        x = (x * UINT64_C(0xbf58476d1ce4e5b9) + f->place_keys[1]) & mask;
        x ^= x >> shift;
        x = (x * UINT64_C(0x94d049bb133111eb)) & mask;
        p = x ^ (x >> shift);
    } while (p >= range);
    return p;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    return x ^ (x >> 33);
}

/* Where slice i of a horizontal-first filter starts: ceil(i m / S), so that slice i
 * holds floor(m/S) or ceil(m/S) bits and the S slices exactly m. */
static uint64_t slice_start(const once_sliced *f, uint64_t i)
{
    uint64_t ignored = 0;
    return slice_divide(i * f->bits + f->slices - 1, &f->by_slices, &ignored);
}

/* The requests of one event: the touched sites, each with its positions. */
typedef struct event_plan {
    uint64_t time_ms; /* the producer's timestamp t_u (windows) */
    uint32_t stripe;  /* the key's event lock (event-level locking) */
    uint32_t touched;
    uint32_t site[SLICED_MAX_HASHES];
    uint32_t first[SLICED_MAX_HASHES], count[SLICED_MAX_HASHES];
    uint64_t offsets[SLICED_MAX_HASHES];
    uint64_t expiries[SLICED_MAX_HASHES]; /* the sites' answers, for equal timers */
    uint64_t generations; /* bounded growth: the generations every site asked holds it in */
    uint64_t claim;       /* claims: the value its home site (site[0]) is claimed by */
    bool claim_lost;      /* claims: another producer held the claim */
} event_plan;

/* A touched site's request: its probe indexes, in probe order. */
static void add_request(event_plan *e, uint32_t this_site, uint32_t at)
{
    e->site[e->touched] = this_site;
    e->first[e->touched] = at;
    e->count[e->touched] = 0;
    e->touched++;
}

/* An event's requests from its positions' sites: grouped by site, in increasing site
 * order, the positions of a site in their probe order.  Up to 64 sites, the sites
 * touched are the bits of one word, walked upwards, each with the list of its probes
 * (O(k), where sorting k pairs is O(k^2): most of an event's cost at k = 10); past
 * that, an insertion sort of the pairs, stable. */
static void group_by_site(const once_sliced *f, const uint32_t *site, const uint64_t *pos,
                          event_plan *e)
{
    e->touched = 0;
    uint32_t at = 0;
    if (f->site_count <= 64) {
        uint64_t touched = 0;
        uint8_t head[64], tail[64], next[SLICED_MAX_HASHES];
        for (uint32_t i = 0; i < f->hashes; i++) {
            uint32_t s = site[i];
            next[i] = UINT8_MAX;
            if (!(touched >> s & 1)) {
                touched |= UINT64_C(1) << s;
                head[s] = (uint8_t)i;
            } else {
                next[tail[s]] = (uint8_t)i;
            }
            tail[s] = (uint8_t)i;
        }
        for (; touched != 0; touched &= touched - 1) {
            uint32_t s = (uint32_t)__builtin_ctzll(touched);
            add_request(e, s, at);
            for (uint32_t i = head[s]; i != UINT8_MAX; i = next[i])
                e->offsets[at++] = pos[i];
            e->count[e->touched - 1] = at - e->first[e->touched - 1];
        }
        return;
    }
    uint32_t order[SLICED_MAX_HASHES];
    for (uint32_t i = 0; i < f->hashes; i++) {
        uint32_t j = i;
        while (j > 0 && site[order[j - 1]] > site[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    for (uint32_t i = 0; i < f->hashes; i++, at++) {
        uint32_t this_site = site[order[i]];
        if (i == 0 || this_site != e->site[e->touched - 1])
            add_request(e, this_site, at);
        e->offsets[at] = pos[order[i]];
        e->count[e->touched - 1]++;
    }
}

/* Split slicing (Proposition 2): the key's k1 distinct slices, the first the one H_S
 * picks (so that k1 = 1 is horizontal slicing), each next from a further hash of the
 * key, drawn again while it repeats one taken; slice a takes probes a k2 .. a k2 +
 * k2 - 1 of the standard sequence over its own bits. */
static once_status split_positions(const once_sliced *f, const once_digest *d,
                                   const once_digest *h, uint32_t *site, uint64_t *pos)
{
    uint32_t per_slice = f->hashes / f->slice_hashes;
    uint64_t over[2][SLICED_MAX_HASHES]; /* the sequence over floor(m/S) and ceil(m/S) */
    bool made[2] = {false, false};
    uint64_t draw = h->lo;
    for (uint32_t a = 0; a < f->slice_hashes; a++) {
        uint32_t slice = 0;
        for (bool taken = true; taken;) {
            slice = (uint32_t)once_reduce(draw, f->slices);
            draw = mix64(draw + h->hi);
            taken = false;
            for (uint32_t b = 0; b < a; b++)
                taken = taken || site[b * per_slice] == slice;
        }
        uint64_t range = slice_start(f, slice + 1) - slice_start(f, slice);
        int longer = range != f->short_slice;
        if (!made[longer]) {
            once_status st = once_standard_positions(range, f->hashes, d, over[longer]);
            if (st != ONCE_OK)
                return st;
            made[longer] = true;
        }
        for (uint32_t b = a * per_slice; b < (a + 1) * per_slice; b++) {
            site[b] = slice;
            pos[b] = over[longer][b];
        }
    }
    return ONCE_OK;
}

static once_status plan_event(const once_sliced *f, const void *key, size_t len, event_plan *e)
{
    once_digest d, h = {0, 0};
    once_status st = once_digest_with_seed(f->seed, key, len, &d);
    if (st == ONCE_OK && f->slicing != ONCE_SLICING_VERTICAL)
        st = once_digest_with_seed(f->seed ^ SLICE_SEED_SALT, key, len, &h);
    if (st != ONCE_OK)
        return st;
    e->stripe = (uint32_t)(d.hi % EVENT_STRIPES);
    e->claim = f->claims ? d.lo | 1 : 0; /* never 0: 0 claims nothing */
    e->claim_lost = false;
    uint32_t site[SLICED_MAX_HASHES];
    uint64_t pos[SLICED_MAX_HASHES];
    if (f->slicing == ONCE_SLICING_SPLIT) {
        if ((st = split_positions(f, &d, &h, site, pos)) != ONCE_OK)
            return st;
        group_by_site(f, site, pos, e);
        return ONCE_OK;
    }
    /* Horizontal first: the key's slice, and the bits it holds (its positions' range). */
    uint32_t outer = horizontal_first(f->slicing) ? (uint32_t)once_reduce(h.lo, f->slices) : 0;
    uint64_t range = horizontal_first(f->slicing) ? slice_start(f, outer + 1) - slice_start(f, outer)
                                                  : f->bits;
    if ((st = once_standard_positions(range, f->hashes, &d, pos)) != ONCE_OK)
        return st;
    if (f->slicing == ONCE_SLICING_HORIZONTAL) {
        e->touched = 1;
        e->site[0] = outer;
        e->first[0] = 0;
        e->count[0] = f->hashes;
        memcpy(e->offsets, pos, f->hashes * sizeof pos[0]);
        return ONCE_OK;
    }
    const slice_divisor *by_range = &f->by_slice_length[range != f->short_slice];
    for (uint32_t i = 0; i < f->hashes; i++) {
        uint64_t place = bit_place(f, pos[i], range), offset = 0, ignored = 0;
        if (f->slicing == ONCE_SLICING_DICED_HV) {
            /* The slice is a vertical filter of `range` bits over S' parts: part p holds
             * [ceil(p range / S'), ceil((p + 1) range / S')), as Definition 2 does. */
            uint64_t part = slice_divide(place * f->parts, by_range, &ignored);
            uint64_t start = slice_divide(part * range + f->parts - 1, &f->by_parts, &ignored);
            site[i] = outer * f->parts + (uint32_t)part;
            pos[i] = place - start;
            continue;
        }
        /* Definition 2, as even as m allows (slice/sites.h). */
        uint64_t slice = slice_vertical_of(place, f->slices, &f->by_bits, &f->by_slices, &offset);
        if (f->parts == 1) {
            site[i] = (uint32_t)slice;
            pos[i] = offset;
            continue;
        }
        /* v-h: the part this slice gives the key, and the offset folded into its
         * m/(S S') bits (m is a multiple of S S' here, so every cell takes S' of the
         * slice's offsets). */
        uint32_t part = (uint32_t)once_reduce(mix64(h.hi ^ mix64(slice + 1)), f->parts);
        site[i] = (uint32_t)slice * f->parts + part;
        slice_divide(offset, &f->by_part, &pos[i]);
    }
    group_by_site(f, site, pos, e);
    return ONCE_OK;
}

/* Concurrent filters: take locks held[0 .. n-1] (sites, or key stripes), increasing
 * and distinct, so that no two operations wait for each other in a circle. */
static void lock_all(once_sliced *f, const uint32_t *held, uint32_t n)
{
    if (f->concurrent)
        for (uint32_t i = 0; i < n; i++)
            pthread_mutex_lock(&f->locks[held[i]]);
}

static void unlock_all(once_sliced *f, const uint32_t *held, uint32_t n)
{
    if (f->concurrent)
        for (uint32_t i = n; i-- > 0;)
            pthread_mutex_unlock(&f->locks[held[i]]);
}

/* The locks an event takes, into held[]: its key's stripe, or its touched sites,
 * increasing (plan_event groups them so). */
static uint32_t locks_of(const once_sliced *f, const event_plan *e, uint32_t *held)
{
    if (f->event_locks) {
        held[0] = e->stripe;
        return 1;
    }
    memcpy(held, e->site, e->touched * sizeof *held);
    return e->touched;
}

/* One request to the site of touched site t (its expiries into e->expiries when the
 * equal-timers heuristic needs them). */
static once_status ask(once_sliced *f, event_plan *e, uint32_t t, once_site_op op,
                       bool *all_set)
{
    once_site_request q = {.op = op,
                           .positions = e->offsets + e->first[t],
                           .count = e->count[t],
                           .status = ONCE_OK,
                           .time_ms = e->time_ms,
                           .generation = f->generation};
    if (f->equal_timers && op == ONCE_SITE_TEST)
        q.expiries = e->expiries + e->first[t];
    if (t == 0 && op != ONCE_SITE_SET)
        q.claim = e->claim; /* the home site: taken with the test (claims) */
    const once_site *site = &f->sites[e->site[t]];
    site->run(site->context, &q, 1);
    if (t == 0 && q.status == ONCE_OK)
        e->claim_lost = q.claim_lost;
    if (op != ONCE_SITE_SET && q.status == ONCE_OK)
        e->generations &= q.generations;
    counter_group *g = group_of(f, e->stripe);
    tally(&g->messages, 1);
    if (q.status == ONCE_ERR_UNAVAILABLE)
        tally(&g->failed_messages, 1);
    mark_site(f, e->site[t], q.status);
    *all_set = q.all_set;
    return q.status;
}

/* The equal-timers heuristic (section 4): do at least k' of the reached positions hold
 * one expiry, as the positions one insertion set do? */
static bool enough_equal_timers(const once_sliced *f, const event_plan *e, const bool *failed)
{
    uint64_t values[SLICED_MAX_HASHES];
    uint32_t n = 0, best = 0;
    for (uint32_t t = 0; t < e->touched; t++)
        for (uint32_t i = 0; i < e->count[t] && !failed[t]; i++)
            values[n++] = e->expiries[e->first[t] + i];
    for (uint32_t i = 0; i < n && best < f->equal_timers; i++) {
        uint32_t same = 0;
        for (uint32_t j = 0; j < n; j++)
            same += values[j] == values[i];
        if (values[i] != 0 && same > best)
            best = same;
    }
    return best >= f->equal_timers;
}

/*
 * Decide an event from its sites' answers to `op` (TEST, or TEST_AND_SET for TAS):
 * *present when every reachable position is set and, with failures, at least the
 * threshold of positions was reached (and, with equal timers, k' of them equal).
 * failed[t] tells which touched sites could not be reached.  Pipelined, sites are
 * asked in turn until one has an unset bit: the event is then distinct whatever the
 * others hold.
 */
static once_status decide(once_sliced *f, event_plan *e, once_site_op op, bool *present,
                          bool *failed)
{
    bool all = true, some_failed = false;
    uint32_t reached = 0;
    e->generations = UINT64_MAX;
    for (uint32_t t = 0; t < e->touched; t++)
        failed[t] = false;
    for (uint32_t t = 0; t < e->touched; t++) {
        bool slice_all = false;
        /* Pipelined TAS: once a site had an unset bit the event is distinct, and the
         * sites after it only set theirs. */
        once_site_op this_op = op == ONCE_SITE_TEST_AND_SET && !all ? ONCE_SITE_SET : op;
        once_status st = ask(f, e, t, this_op, &slice_all);
        failed[t] = st == ONCE_ERR_UNAVAILABLE;
        if (failed[t] && f->on_failure == ONCE_FAILURE_REPORT) {
            tally(&group_of(f, e->stripe)->failed_events, 1);
            return st;
        }
        if (st != ONCE_OK && !failed[t])
            return st;
        if (failed[t]) {
            some_failed = true;
            continue;
        }
        reached += e->count[t];
        /* Bounded growth: held only where one generation holds it at every site. */
        all = all && slice_all && (!f->bounded || e->generations != 0);
        if (!all && f->lookup == ONCE_LOOKUP_PIPELINED && op == ONCE_SITE_TEST)
            break;
    }
    *present = all && reached >= (f->on_failure == ONCE_FAILURE_THRESHOLD ? f->threshold : 0);
    if (*present && f->equal_timers)
        *present = enough_equal_timers(f, e, failed);
    if (some_failed)
        tally(&group_of(f, e->stripe)->failed_events, 1);
    return ONCE_OK;
}

/* Claims: drop the claim an event took at its home site, once its sets are in. */
static void release_claim(once_sliced *f, const event_plan *e)
{
    once_site_request q = {.op = ONCE_SITE_TEST, .status = ONCE_OK, .time_ms = e->time_ms,
                           .release = e->claim};
    const once_site *site = &f->sites[e->site[0]];
    site->run(site->context, &q, 1);
    tally(&group_of(f, e->stripe)->messages, 1);
    mark_site(f, e->site[0], q.status);
}

/* A count window reads its clock under the event's locks: a repeat of a key, which
 * takes the same locks, sees the count its first event left.  With claims the clock
 * is the producers' (once_count_clock), and may fail: ONCE_ERR_UNAVAILABLE. */
static once_status read_count_clock(once_sliced *f, event_plan *e)
{
    if (!f->count_window)
        return ONCE_OK;
    if (!f->claims) {
        e->time_ms = atomic_load_explicit(&f->delivered, memory_order_relaxed);
        return ONCE_OK;
    }
    if (f->clock->read(f->clock->context, &e->time_ms) != ONCE_OK) {
        f->clock_failures++;
        return ONCE_ERR_UNAVAILABLE;
    }
    f->count_seen = e->time_ms;
    return ONCE_OK;
}

/* Stamps for n events found distinct, the first into *first (claims). */
static once_status reserve_stamps(once_sliced *f, uint64_t n, uint64_t *first)
{
    if (f->clock->reserve(f->clock->context, n, first) != ONCE_OK) {
        f->clock_failures++;
        return ONCE_ERR_UNAVAILABLE;
    }
    f->count_seen = *first + n;
    return ONCE_OK;
}

/* What an event is when its count window's clock failed: as when no site could be
 * reached (ONCE_ERR_UNAVAILABLE under REPORT; threshold 0 a duplicate, any other
 * distinct, and then not set: there is no stamp to set it with). */
static once_status clock_down_answer(const once_sliced *f, bool *answer)
{
    if (f->on_failure == ONCE_FAILURE_REPORT)
        return ONCE_ERR_UNAVAILABLE;
    *answer = f->threshold == 0;
    return ONCE_OK;
}

static once_status test_and_add_planned(once_sliced *f, event_plan *e, bool *seen)
{
    bool failed[SLICED_MAX_HASHES];
    if (f->claims) { /* the test claims the event at its home site; the sets follow */
        once_status st = decide(f, e, ONCE_SITE_TEST, seen, failed);
        if (st != ONCE_OK || e->claim_lost || failed[0]) {
            if (st == ONCE_OK && e->claim_lost)
                *seen = true; /* another producer is deciding it: a repeat here */
            if (st == ONCE_OK && !failed[0] && !e->claim_lost)
                release_claim(f, e);
            return st;
        }
        if (!*seen && f->count_window && reserve_stamps(f, 1, &e->time_ms) != ONCE_OK) {
            release_claim(f, e);
            return clock_down_answer(f, seen);
        }
        if (!*seen) {
            tally(&group_of(f, e->stripe)->inserted, 1);
            for (uint32_t t = 0; t < e->touched && st == ONCE_OK; t++) {
                bool ignored = false;
                if (!failed[t])
                    st = ask(f, e, t, ONCE_SITE_SET, &ignored);
                if (st == ONCE_ERR_UNAVAILABLE && f->on_failure == ONCE_FAILURE_THRESHOLD)
                    st = ONCE_OK;
            }
        }
        release_claim(f, e); /* after the sets: a claim taken later finds them */
        return st;
    }
    if (f->primitive == ONCE_TAS) {
        once_status st = decide(f, e, ONCE_SITE_TEST_AND_SET, seen, failed);
        if (st == ONCE_OK && !*seen) {
            tally(&group_of(f, e->stripe)->inserted, 1);
            if (f->bounded)
                generation_took(f, e->time_ms);
        }
        return st;
    }
    once_status st = decide(f, e, ONCE_SITE_TEST, seen, failed);
    if (st != ONCE_OK || (*seen && !f->refresh))
        return st;
    if (!*seen) {
        tally(&group_of(f, e->stripe)->inserted, 1);
        if (f->count_window) /* tested at the count so far, stamped with its own place */
            e->time_ms = atomic_fetch_add_explicit(&f->delivered, 1, memory_order_relaxed);
    } /* a refreshed duplicate is stamped with the time, or count, it was tested at */
    for (uint32_t t = 0; t < e->touched; t++) {
        bool ignored = false;
        if (failed[t])
            continue; /* what cannot be reached cannot be set */
        st = ask(f, e, t, ONCE_SITE_SET, &ignored);
        if (st != ONCE_OK && !(st == ONCE_ERR_UNAVAILABLE &&
                               f->on_failure == ONCE_FAILURE_THRESHOLD))
            return st;
    }
    if (f->bounded && !*seen)
        generation_took(f, e->time_ms);
    return ONCE_OK;
}

static bool valid_time(const once_sliced *f, uint64_t time_ms)
{
    return f->window_ms == 0 || f->count_window || time_ms <= ONCE_MAX_TIME_MS;
}

/* A time window's clock moves to time_ms if that is later (once_sliced_clock). */
static void clock_took(once_sliced *f, uint64_t time_ms)
{
    if (f->window_ms == 0 || f->count_window)
        return;
    uint64_t was = atomic_load_explicit(&f->latest_plus_one, memory_order_relaxed);
    while (was <= time_ms &&
           !atomic_compare_exchange_weak_explicit(&f->latest_plus_one, &was, time_ms + 1,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

once_status once_sliced_clock(const once_sliced *f, uint64_t *clock_ms, bool *started)
{
    if (f == NULL || clock_ms == NULL || started == NULL)
        return ONCE_ERR_INVALID;
    if (f->window_ms == 0 || f->count_window)
        return ONCE_ERR_UNSUPPORTED;
    uint64_t latest = atomic_load_explicit(&f->latest_plus_one, memory_order_relaxed);
    *started = latest != 0;
    *clock_ms = latest != 0 ? latest - 1 : 0;
    return ONCE_OK;
}

/* The checks and the plan a one-key call starts with. */
static once_status plan_call(const once_sliced *f, const void *key, size_t len,
                             uint64_t time_ms, const void *answer, event_plan *e)
{
    if (f == NULL || answer == NULL || (key == NULL && len != 0))
        return ONCE_ERR_INVALID;
    if (!valid_time(f, time_ms))
        return ONCE_ERR_TIME;
    e->time_ms = time_ms;
    return plan_event(f, key, len, e);
}

once_status once_sliced_test_and_add(once_sliced *f, const void *key, size_t len,
                                     uint64_t time_ms, bool *seen)
{
    event_plan e;
    once_status st = plan_call(f, key, len, time_ms, seen, &e);
    if (st != ONCE_OK)
        return st;
    clock_took(f, time_ms);
    for (uint32_t t = 0; t < e.touched; t++)
        tally(&loads_of(f, e.stripe)[e.site[t]], 1);
    tally(&group_of(f, e.stripe)->events, 1);
    uint32_t held[SLICED_MAX_HASHES];
    uint32_t n = locks_of(f, &e, held);
    lock_all(f, held, n);
    st = read_count_clock(f, &e);
    st = st == ONCE_OK ? test_and_add_planned(f, &e, seen) : clock_down_answer(f, seen);
    unlock_all(f, held, n);
    return st;
}

once_status once_sliced_query(once_sliced *f, const void *key, size_t len, uint64_t time_ms,
                              bool *present)
{
    event_plan e;
    once_status st = plan_call(f, key, len, time_ms, present, &e);
    if (st != ONCE_OK)
        return st;
    uint32_t held[SLICED_MAX_HASHES];
    /* A query sets nothing: over shared bits it needs no lock. */
    uint32_t n = f->event_locks ? 0 : locks_of(f, &e, held);
    bool failed[SLICED_MAX_HASHES];
    lock_all(f, held, n);
    st = read_count_clock(f, &e);
    st = st == ONCE_OK ? decide(f, &e, ONCE_SITE_TEST, present, failed)
                       : clock_down_answer(f, present);
    unlock_all(f, held, n);
    return st;
}

/* ------------------------------------------------------------- batches */

/*
 * A batch's work space: the plans of up to batch_events events, their requests grouped
 * by site (each site's in event order), which event each request answers, and what
 * the decisions count per event.
 */
struct batch_space {
    event_plan *plans;
    once_site_request *requests; /* by site: site s has requests [start[s], start[s+1]) */
    uint32_t *request_event;
    uint32_t *start;             /* site_count + 1 */
    uint32_t *used_sites;        /* sites with requests, increasing */
    uint32_t *stripes;           /* the events' key stripes (event-level locking) */
    uint32_t *reached;           /* positions reached, per event */
    bool *failed, *home_failed, *lost, *all_set, *asked; /* per event */
    /* Claims over a count window: the events found distinct, in order, and a table of
     * them by claim (repeat_slots entries, a power of two; event + 1, 0 empty). */
    uint32_t *distinct, *repeat_table, repeat_slots, distinct_count;
    /* Claims otherwise: each event's first event of the batch with its key (itself for
     * the first), found through repeat_table: only that one claims the key. */
    uint32_t *first_of;
};

/* The distinct stripes of the batch's n events, increasing, into b->stripes. */
static uint32_t batch_stripes(batch_space *b, size_t n)
{
    uint32_t count = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t stripe = b->plans[i].stripe, j = count;
        while (j > 0 && b->stripes[j - 1] > stripe)
            j--;
        if (j > 0 && b->stripes[j - 1] == stripe)
            continue;
        memmove(b->stripes + j + 1, b->stripes + j, (count - j) * sizeof *b->stripes);
        b->stripes[j] = stripe;
        count++;
    }
    return count;
}

static void batch_space_free(batch_space *b)
{
    if (b == NULL)
        return;
    once_free_memory(b->plans);
    once_free_memory(b->requests);
    once_free_memory(b->request_event);
    once_free_memory(b->start);
    once_free_memory(b->used_sites);
    once_free_memory(b->stripes);
    once_free_memory(b->reached);
    once_free_memory(b->failed);
    once_free_memory(b->home_failed);
    once_free_memory(b->lost);
    once_free_memory(b->all_set);
    once_free_memory(b->asked);
    once_free_memory(b->distinct);
    once_free_memory(b->repeat_table);
    once_free_memory(b->first_of);
    once_free_memory(b);
}

/* The filter's kept work space, or a new one for batch_events events (NULL: out of
 * memory). */
static batch_space *batch_space_take(once_sliced *f)
{
    batch_space *b = atomic_exchange(&f->spare, NULL);
    if (b != NULL)
        return b;
    size_t events = f->batch_events, requests = events * f->hashes;
    b = once_calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    b->plans = once_malloc(events * sizeof *b->plans);
    b->requests = once_malloc(requests * sizeof *b->requests);
    b->request_event = once_malloc(requests * sizeof *b->request_event);
    b->start = once_malloc(((size_t)f->site_count + 1) * sizeof *b->start);
    b->used_sites = once_malloc((size_t)f->site_count * sizeof *b->used_sites);
    b->stripes = once_malloc(events * sizeof *b->stripes);
    b->reached = once_malloc(events * sizeof *b->reached);
    b->failed = once_malloc(events);
    b->home_failed = once_malloc(events);
    b->lost = once_malloc(events);
    b->all_set = once_malloc(events);
    b->asked = once_malloc(events);
    if (f->claims) {
        b->repeat_slots = 2;
        while (b->repeat_slots < 2 * events)
            b->repeat_slots *= 2;
        b->repeat_table = once_malloc(b->repeat_slots * sizeof *b->repeat_table);
        if (f->count_window)
            b->distinct = once_malloc(events * sizeof *b->distinct);
        else
            b->first_of = once_malloc(events * sizeof *b->first_of);
    }
    if (b->plans == NULL || b->requests == NULL || b->request_event == NULL ||
        b->start == NULL || b->used_sites == NULL || b->stripes == NULL ||
        b->reached == NULL || b->failed == NULL || b->home_failed == NULL ||
        b->lost == NULL || b->all_set == NULL || b->asked == NULL ||
        (b->repeat_slots != 0 && b->repeat_table == NULL) ||
        (f->claims && b->distinct == NULL && b->first_of == NULL)) {
        batch_space_free(b);
        return NULL;
    }
    return b;
}

/* Keep the work space for the next batch, unless another is kept already. */
static void batch_space_give(once_sliced *f, batch_space *b)
{
    batch_space *none = NULL;
    if (!atomic_compare_exchange_strong(&f->spare, &none, b))
        batch_space_free(b);
}

/* Run a batch's requests, site s's [start[s], start[s + 1]) for the used sites: every
 * site that works apart started before any is waited for, so that they work at once,
 * and the others run here in between. */
static void run_sites(once_sliced *f, once_site_request *requests, const uint32_t *start,
                      const uint32_t *used_sites, uint32_t used)
{
    for (uint32_t u = 0; u < used; u++) {
        const once_site *site = &f->sites[used_sites[u]];
        uint32_t s = used_sites[u];
        if (site->start != NULL)
            site->start(site->context, requests + start[s], start[s + 1] - start[s]);
    }
    for (uint32_t u = 0; u < used; u++) {
        const once_site *site = &f->sites[used_sites[u]];
        uint32_t s = used_sites[u];
        if (site->start == NULL)
            site->run(site->context, requests + start[s], start[s + 1] - start[s]);
    }
    /* The last started first: a worker runs its sites' batches in the order they were
     * started, so once the last of a worker's is done, so are the others, and the
     * caller sleeps at most once a worker, not once a site. */
    for (uint32_t u = used; u-- > 0;) {
        const once_site *site = &f->sites[used_sites[u]];
        if (site->wait != NULL)
            site->wait(site->context);
    }
}

/* Plan, send and decide keys[0 .. n-1], n at most batch_events. */
static once_status run_batch(once_sliced *f, batch_space *b, const once_key *keys, size_t n,
                             uint8_t *seen)
{
    once_status st = ONCE_OK;
    memset(b->start, 0, ((size_t)f->site_count + 1) * sizeof *b->start);
    for (size_t i = 0; i < n; i++) {
        if (keys[i].data == NULL && keys[i].len != 0)
            return ONCE_ERR_INVALID;
        if ((st = plan_event(f, keys[i].data, keys[i].len, &b->plans[i])) != ONCE_OK)
            return st;
        for (uint32_t t = 0; t < b->plans[i].touched; t++)
            b->start[b->plans[i].site[t] + 1]++;
    }
    /* Counting sort of the requests by site, stable: each site's in event order. */
    uint32_t used = 0;
    for (uint32_t s = 0; s < f->site_count; s++) {
        if (b->start[s + 1] != 0)
            b->used_sites[used++] = s;
        tally(&loads_of(f, b->plans[0].stripe)[s], b->start[s + 1]);
        b->start[s + 1] += b->start[s];
    }
    uint32_t total = b->start[f->site_count];
    for (size_t i = 0; i < n; i++) {
        const event_plan *e = &b->plans[i];
        for (uint32_t t = 0; t < e->touched; t++) {
            uint32_t r = b->start[e->site[t]]++;
            b->requests[r] = (once_site_request){.op = ONCE_SITE_TEST_AND_SET,
                                                 .positions = e->offsets + e->first[t],
                                                 .count = e->count[t],
                                                 .status = ONCE_OK};
            b->request_event[r] = (uint32_t)i;
        }
    }
    for (uint32_t s = f->site_count; s > 0; s--) /* undo the shift of the placement */
        b->start[s] = b->start[s - 1];
    b->start[0] = 0;
    counter_group *g = group_of(f, b->plans[0].stripe);
    tally(&g->events, n);
    tally(&g->messages, total);
    /* Start the sites that work apart, run the others here, then wait. */
    uint32_t *held = b->used_sites, held_count = used;
    if (f->event_locks) {
        held = b->stripes;
        held_count = batch_stripes(b, n);
    }
    lock_all(f, held, held_count);
    run_sites(f, b->requests, b->start, b->used_sites, used);
    unlock_all(f, held, held_count);
    /* Decide: a duplicate when every reachable position was set, and enough reached. */
    uint32_t *reached = b->reached;
    bool *failed_event = b->failed;
    for (size_t i = 0; i < n; i++) {
        seen[i] = 1;
        reached[i] = 0;
        failed_event[i] = false;
    }
    for (uint32_t u = 0; u < used; u++) { /* a site's last request is its batch's last */
        uint32_t site = b->used_sites[u];
        mark_site(f, site, b->requests[b->start[site + 1] - 1].status);
    }
    uint64_t failures = 0;
    for (uint32_t r = 0; r < total; r++) {
        const once_site_request *q = &b->requests[r];
        uint32_t i = b->request_event[r];
        if (q->status == ONCE_ERR_UNAVAILABLE) {
            failures++;
            failed_event[i] = true;
            continue;
        }
        if (q->status != ONCE_OK && st == ONCE_OK)
            st = q->status;
        reached[i] += q->count;
        if (!q->all_set)
            seen[i] = 0;
    }
    tally(&g->failed_messages, failures);
    if (st != ONCE_OK)
        return st;
    bool undecided = false;
    uint64_t inserted = 0, decided_failed = 0;
    for (size_t i = 0; i < n; i++) {
        decided_failed += failed_event[i];
        if (failed_event[i] && f->on_failure == ONCE_FAILURE_REPORT) {
            seen[i] = ONCE_SLICED_UNDECIDED;
            undecided = true;
        } else if (f->on_failure == ONCE_FAILURE_THRESHOLD && reached[i] < f->threshold) {
            seen[i] = 0;
        }
        inserted += seen[i] == 0;
    }
    tally(&g->inserted, inserted);
    tally(&g->failed_events, decided_failed);
    return undecided ? ONCE_ERR_UNAVAILABLE : ONCE_OK;
}

static once_status one_at_a_time(once_sliced *f, const once_key *keys, size_t count,
                                 uint8_t *seen)
{
    bool undecided = false;
    for (size_t i = 0; i < count; i++) {
        bool dup = false;
        once_status st = once_sliced_test_and_add(f, keys[i].data, keys[i].len,
                                                  keys[i].time_ms, &dup);
        if (st == ONCE_ERR_UNAVAILABLE) {
            seen[i] = ONCE_SLICED_UNDECIDED;
            undecided = true;
            continue;
        }
        if (st != ONCE_OK)
            return st;
        seen[i] = dup;
    }
    return undecided ? ONCE_ERR_UNAVAILABLE : ONCE_OK;
}

/*
 * Claims over a batch (once_sliced_config.claims): two rounds of one message a site.
 * Round 1 carries the last batch's releases and, for every event, a TEST at each site
 * it touches, its home site's taking the claim (the first event of the batch with a
 * key takes it; a later one defers to another producer's claim with it, and is else
 * decided in round 2 at its own time: over a time window a repeat of the batch may
 * fall past the window of the first); round 2 test-and-sets the bits of the events
 * found distinct, in event order, so the batch answers as its one-key calls in turn
 * would (an event whose bits the earlier ones set is a duplicate).  The claims won are
 * released by the next batch's round 1, after round 2's sets were answered, so a
 * producer that takes a claim after the release finds the bits.
 *
 * A count window's stamps are places in the producers' common count, so they can only
 * be taken for events known distinct: round 1 tests at the count read before it, the
 * distinct events (less the batch's repeats of them) take their stamps from the clock
 * in one reserve, and round 2 sets them with those stamps.  An event another event of
 * the batch covered is then delivered where one-key calls would have dropped it: a
 * false positive spared, never a repeat let through.
 */
typedef struct claim_round {
    once_site_request *requests; /* in the order built */
    uint32_t *site, *event;      /* each request's site and event (UINT32_MAX: none) */
    once_site_request *sorted;   /* by site, each site's in order */
    uint32_t *from;              /* sorted[r] came from requests[from[r]] */
    uint32_t *start, *used;
    uint32_t total;
} claim_round;

static void claim_round_free(claim_round *r)
{
    once_free_memory(r->requests);
    once_free_memory(r->site);
    once_free_memory(r->event);
    once_free_memory(r->sorted);
    once_free_memory(r->from);
    once_free_memory(r->start);
    once_free_memory(r->used);
}

static bool claim_round_make(const once_sliced *f, size_t room, claim_round *r)
{
    memset(r, 0, sizeof *r);
    r->requests = once_malloc(room * sizeof *r->requests);
    r->site = once_malloc(room * sizeof *r->site);
    r->event = once_malloc(room * sizeof *r->event);
    r->sorted = once_malloc(room * sizeof *r->sorted);
    r->from = once_malloc(room * sizeof *r->from);
    r->start = once_malloc(((size_t)f->site_count + 1) * sizeof *r->start);
    r->used = once_malloc((size_t)f->site_count * sizeof *r->used);
    if (r->requests && r->site && r->event && r->sorted && r->from && r->start && r->used)
        return true;
    claim_round_free(r);
    return false;
}

static void claim_round_add(claim_round *r, uint32_t site, uint32_t event,
                            const once_site_request *q)
{
    r->requests[r->total] = *q;
    r->site[r->total] = site;
    r->event[r->total++] = event;
}

/* Send a round: each site's requests in one batch, every site started before any is
 * waited for; the answers back into r->requests. */
static void claim_round_send(once_sliced *f, claim_round *r)
{
    memset(r->start, 0, ((size_t)f->site_count + 1) * sizeof *r->start);
    for (uint32_t i = 0; i < r->total; i++)
        r->start[r->site[i] + 1]++;
    uint32_t used = 0;
    for (uint32_t s = 0; s < f->site_count; s++) {
        if (r->start[s + 1] != 0)
            r->used[used++] = s;
        r->start[s + 1] += r->start[s];
    }
    for (uint32_t i = 0; i < r->total; i++) {
        uint32_t at = r->start[r->site[i]]++;
        r->sorted[at] = r->requests[i];
        r->from[at] = i;
    }
    for (uint32_t s = f->site_count; s > 0; s--)
        r->start[s] = r->start[s - 1];
    r->start[0] = 0;
    counter_group *g = group_of(f, 0);
    tally(&g->messages, r->total);
    run_sites(f, r->sorted, r->start, r->used, used);
    for (uint32_t u = 0; u < used; u++) /* a site's last request is its batch's last */
        mark_site(f, r->used[u], r->sorted[r->start[r->used[u] + 1] - 1].status);
    uint64_t failures = 0;
    for (uint32_t at = 0; at < r->total; at++) {
        once_site_request *q = &r->requests[r->from[at]];
        q->all_set = r->sorted[at].all_set;
        q->status = r->sorted[at].status;
        q->claim_lost = r->sorted[at].claim_lost;
        failures += q->status == ONCE_ERR_UNAVAILABLE;
    }
    tally(&g->failed_messages, failures);
}

/* Round 1's releases: the claims the last batch won. */
static void add_releases(once_sliced *f, claim_round *r)
{
    for (uint32_t i = 0; i < f->releases; i++) {
        once_site_request q = {.op = ONCE_SITE_TEST, .status = ONCE_OK,
                               .release = f->release_value[i]};
        claim_round_add(r, f->release_site[i], UINT32_MAX, &q);
    }
    f->releases = 0;
}

/* Do two events place the same positions (the same key, as the filter tells keys)? */
static bool same_positions(const once_sliced *f, const event_plan *a, const event_plan *b)
{
    return a->claim == b->claim && a->touched == b->touched &&
           memcmp(a->site, b->site, a->touched * sizeof a->site[0]) == 0 &&
           memcmp(a->count, b->count, a->touched * sizeof a->count[0]) == 0 &&
           memcmp(a->offsets, b->offsets, f->hashes * sizeof a->offsets[0]) == 0;
}

/* Claims over a count window: is event i, found distinct by round 1, a repeat of an
 * event of this batch found distinct before it?  If not, it joins them (b->distinct).
 * A batch takes at most N/16 events, so such a repeat is inside the window. */
static bool repeat_in_batch(const once_sliced *f, batch_space *b, uint32_t i)
{
    const event_plan *e = &b->plans[i];
    uint32_t mask = b->repeat_slots - 1;
    uint32_t slot = (uint32_t)((e->claim * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
    for (; b->repeat_table[slot] != 0; slot = (slot + 1) & mask)
        if (same_positions(f, &b->plans[b->repeat_table[slot] - 1], e))
            return true;
    b->repeat_table[slot] = i + 1;
    b->distinct[b->distinct_count++] = i;
    return false;
}

/* Claims otherwise: each event's first event of the batch with the same key, into
 * b->first_of.  Only the first claims the key: a later one would find the claim held
 * by its own batch and be taken for a repeat, which over a time window it is only
 * within the window of the first (its test-and-set in round 2 says so, at its own
 * time, as the one-key calls in turn would). */
static void first_of_keys(const once_sliced *f, batch_space *b, size_t n)
{
    uint32_t mask = b->repeat_slots - 1;
    memset(b->repeat_table, 0, b->repeat_slots * sizeof *b->repeat_table);
    for (size_t i = 0; i < n; i++) {
        const event_plan *e = &b->plans[i];
        uint32_t slot = (uint32_t)((e->claim * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
        b->first_of[i] = (uint32_t)i;
        for (; b->repeat_table[slot] != 0; slot = (slot + 1) & mask)
            if (same_positions(f, &b->plans[b->repeat_table[slot] - 1], e)) {
                b->first_of[i] = b->repeat_table[slot] - 1;
                break;
            }
        if (b->first_of[i] == i)
            b->repeat_table[slot] = (uint32_t)i + 1;
    }
}

/* Claims over a count window, after round 1: stamps for the batch's distinct events,
 * in event order, and their sets into round 2 (r, emptied by the caller).  A clock
 * that cannot reserve leaves them as clock_down_answer says.  The events stamped. */
static uint64_t stamp_distinct(once_sliced *f, batch_space *b, uint8_t *seen, claim_round *r,
                               bool *undecided)
{
    uint32_t count = b->distinct_count;
    uint64_t first = 0;
    if (count == 0)
        return 0;
    if (reserve_stamps(f, count, &first) != ONCE_OK) {
        for (uint32_t d = 0; d < count; d++) {
            bool answer = false;
            if (clock_down_answer(f, &answer) != ONCE_OK) {
                seen[b->distinct[d]] = ONCE_SLICED_UNDECIDED;
                *undecided = true;
            } else {
                seen[b->distinct[d]] = answer;
            }
        }
        return 0;
    }
    for (uint32_t d = 0; d < count; d++) {
        uint32_t i = b->distinct[d];
        const event_plan *e = &b->plans[i];
        for (uint32_t t = 0; t < e->touched; t++) {
            once_site_request q = {.op = ONCE_SITE_SET,
                                   .positions = e->offsets + e->first[t],
                                   .count = e->count[t],
                                   .status = ONCE_OK,
                                   .time_ms = first + d};
            claim_round_add(r, e->site[t], i, &q);
        }
    }
    return count;
}

/* Round 2 (r) ran test-and-set in event order at every site: an event all of whose
 * bits the batch's earlier events set is a duplicate, as the one-key calls in turn
 * would answer it (and its test-and-set changed nothing).  The events inserted. */
static uint64_t round_two_answers(batch_space *b, const claim_round *r, size_t n, uint8_t *seen)
{
    bool *all_set = b->all_set, *asked = b->asked;
    uint64_t inserted = 0;
    for (size_t i = 0; i < n; i++)
        all_set[i] = asked[i] = false;
    for (uint32_t q = 0; q < r->total; q++) {
        uint32_t i = r->event[q];
        all_set[i] = (asked[i] ? all_set[i] : true) && r->requests[q].status == ONCE_OK &&
                     r->requests[q].all_set;
        asked[i] = true;
    }
    for (size_t i = 0; i < n; i++) {
        if (asked[i] && all_set[i])
            seen[i] = 1;
        inserted += asked[i] && !all_set[i];
    }
    return inserted;
}

/* Does event i of a claimed batch claim its key (the first of the batch with it, or
 * any event of a count window's batch)? */
static inline bool claims_key(const once_sliced *f, const batch_space *b, size_t i)
{
    return f->count_window || b->first_of[i] == i;
}

static once_status claimed_batch(once_sliced *f, batch_space *b, const once_key *keys, size_t n,
                                 uint8_t *seen)
{
    once_status st = ONCE_OK;
    for (size_t i = 0; i < n; i++) {
        if (keys[i].data == NULL && keys[i].len != 0)
            return ONCE_ERR_INVALID;
        if (!valid_time(f, keys[i].time_ms))
            return ONCE_ERR_TIME;
        if ((st = plan_event(f, keys[i].data, keys[i].len, &b->plans[i])) != ONCE_OK)
            return st;
        b->plans[i].time_ms = keys[i].time_ms;
    }
    /* A count window tests the batch at the count now (its stamps come after). */
    bool clock_down = false;
    if (f->count_window) {
        clock_down = read_count_clock(f, &b->plans[0]) != ONCE_OK;
        for (size_t i = 1; i < n; i++)
            b->plans[i].time_ms = b->plans[0].time_ms;
        b->distinct_count = 0;
        memset(b->repeat_table, 0, b->repeat_slots * sizeof *b->repeat_table);
    } else {
        first_of_keys(f, b, n);
    }
    claim_round r;
    if (!claim_round_make(f, n * ((size_t)f->hashes + 1) + f->releases, &r))
        return ONCE_ERR_NOMEM;
    counter_group *g = group_of(f, 0);
    tally(&g->events, n);
    add_releases(f, &r);
    for (size_t i = 0; i < n && !clock_down; i++) {
        const event_plan *e = &b->plans[i];
        for (uint32_t t = 0; t < e->touched; t++) {
            once_site_request q = {.op = ONCE_SITE_TEST,
                                   .positions = e->offsets + e->first[t],
                                   .count = e->count[t],
                                   .status = ONCE_OK,
                                   .time_ms = e->time_ms,
                                   .claim = t == 0 && claims_key(f, b, i) ? e->claim : 0};
            claim_round_add(&r, e->site[t], (uint32_t)i, &q);
            tally(&loads_of(f, 0)[e->site[t]], 1);
        }
    }
    claim_round_send(f, &r);
    /* Decide: the claim lost, a duplicate; else every reachable position set. */
    uint32_t *reached = b->reached;
    bool *failed = b->failed, *home_failed = b->home_failed, *lost = b->lost;
    for (size_t i = 0; i < n; i++) {
        seen[i] = 1;
        reached[i] = 0;
        failed[i] = home_failed[i] = clock_down; /* no clock: as if nothing answered */
        lost[i] = false;
    }
    for (uint32_t q = 0; q < r.total; q++) {
        const once_site_request *x = &r.requests[q];
        uint32_t i = r.event[q];
        if (i == UINT32_MAX)
            continue;
        if (x->status != ONCE_OK) {
            failed[i] = true;
            home_failed[i] |= x->claim != 0;
            continue;
        }
        lost[i] |= x->claim_lost;
        reached[i] += x->count;
        if (!x->all_set)
            seen[i] = 0;
    }
    bool undecided = false;
    uint64_t inserted = 0, decided_failed = 0;
    r.total = 0;
    for (size_t i = 0; i < n; i++) {
        const event_plan *e = &b->plans[i];
        if (lost[i] || (!claims_key(f, b, i) && lost[b->first_of[i]])) {
            seen[i] = 1; /* another producer holds the claim: it decides the event */
            continue;
        }
        decided_failed += failed[i] && !clock_down;
        if (!home_failed[i] && claims_key(f, b, i)) { /* won: released by the next batch */
            f->release_site[f->releases] = e->site[0];
            f->release_value[f->releases++] = e->claim;
        }
        if (failed[i] && f->on_failure == ONCE_FAILURE_REPORT) {
            seen[i] = ONCE_SLICED_UNDECIDED;
            undecided = true;
            continue;
        }
        if (f->on_failure == ONCE_FAILURE_THRESHOLD && reached[i] < f->threshold)
            seen[i] = 0;
        if (seen[i] != 0 || clock_down)
            continue;
        if (f->count_window) { /* stamped below, once the batch's distinct are known */
            if (repeat_in_batch(f, b, (uint32_t)i))
                seen[i] = 1;
            continue;
        }
        for (uint32_t t = 0; t < e->touched; t++) {
            once_site_request q = {.op = ONCE_SITE_TEST_AND_SET,
                                   .positions = e->offsets + e->first[t],
                                   .count = e->count[t],
                                   .status = ONCE_OK,
                                   .time_ms = e->time_ms};
            claim_round_add(&r, e->site[t], (uint32_t)i, &q);
        }
    }
    if (f->count_window && !clock_down)
        inserted += stamp_distinct(f, b, seen, &r, &undecided);
    if (r.total != 0)
        claim_round_send(f, &r);
    if (!f->count_window) /* a count window's stamped sets answer nothing more */
        inserted += round_two_answers(b, &r, n, seen);
    tally(&g->inserted, inserted);
    tally(&g->failed_events, decided_failed);
    claim_round_free(&r);
    return undecided ? ONCE_ERR_UNAVAILABLE : ONCE_OK;
}

once_status once_sliced_flush(once_sliced *f)
{
    if (f == NULL)
        return ONCE_ERR_INVALID;
    if (f->releases == 0)
        return ONCE_OK;
    claim_round r;
    if (!claim_round_make(f, f->releases, &r))
        return ONCE_ERR_NOMEM;
    add_releases(f, &r);
    claim_round_send(f, &r);
    claim_round_free(&r);
    return ONCE_OK;
}

once_status once_sliced_test_and_add_batch(once_sliced *f, const once_key *keys, size_t count,
                                           uint8_t *seen)
{
    if (f == NULL || (count != 0 && (keys == NULL || seen == NULL)))
        return ONCE_ERR_INVALID;
    if (count == 0)
        return ONCE_OK;
    if (f->window_ms != 0 && !f->count_window) { /* the clock takes the batch's latest */
        uint64_t latest = 0;
        bool any = false;
        for (size_t i = 0; i < count; i++)
            if (valid_time(f, keys[i].time_ms) && (!any || keys[i].time_ms > latest)) {
                latest = keys[i].time_ms;
                any = true;
            }
        if (any)
            clock_took(f, latest);
    }
    if ((f->window_ms != 0 && !f->claims) || f->bounded) /* each event tested, then set,
                                        before the next (a window: FTTS; bounded: its
                                        generation); claims test a batch, then set it */
        return one_at_a_time(f, keys, count, seen);
    batch_space *b = batch_space_take(f);
    if (b == NULL)
        return ONCE_ERR_NOMEM;
    once_status st = ONCE_OK;
    bool undecided = false;
    for (size_t done = 0; st == ONCE_OK && done < count; done += f->batch_events) {
        size_t n = count - done < f->batch_events ? count - done : f->batch_events;
        st = f->claims ? claimed_batch(f, b, keys + done, n, seen + done)
                       : run_batch(f, b, keys + done, n, seen + done);
        if (st == ONCE_ERR_UNAVAILABLE) {
            undecided = true;
            st = ONCE_OK;
        }
    }
    batch_space_give(f, b);
    return st != ONCE_OK ? st : undecided ? ONCE_ERR_UNAVAILABLE : ONCE_OK;
}

/* ------------------------------------------------------- two-level filtering */

/* Keys a two-level call keeps on the stack (a one-key call's, small batches'). */
#define LOCAL_STACK_KEYS 16u

/* A key the local filter answered counts as an event of its stripe, as the shared
 * filter would have counted it (hashed only when there are groups to choose from:
 * concurrent filters). */
static once_status count_local_hit(once_sliced *f, const once_key *k)
{
    once_digest d = {0, 0};
    if (f->groups > 1) {
        once_status st = once_digest_with_seed(f->seed, k->data, k->len, &d);
        if (st != ONCE_OK)
            return st;
    }
    counter_group *g = group_of(f, (uint32_t)(d.hi % EVENT_STRIPES));
    tally(&g->events, 1);
    tally(&g->local_hits, 1);
    return ONCE_OK;
}

/* The shared step of two-level filtering, then the local filter's insertions: the
 * misses[0 .. n-1] go to the shared filter (the one-key call's own path for
 * `one_key`, so that its locks and messages are those of once_sliced_test_and_add;
 * one batch otherwise), and those it decided are added to `local`.  An undecided event
 * (a site down under ONCE_FAILURE_REPORT) or a failed call adds nothing: a caller
 * that sends the event again must reach the shared filter again, not be answered
 * duplicate by its own first attempt. */
static once_status shared_then_local(once_sliced *f, once_filter *local, once_key *misses,
                                     size_t n, uint8_t *answers, bool one_key)
{
    once_status st = one_key ? one_at_a_time(f, misses, n, answers)
                             : once_sliced_test_and_add_batch(f, misses, n, answers);
    if (st != ONCE_OK && st != ONCE_ERR_UNAVAILABLE)
        return st;
    size_t decided = 0;
    for (size_t j = 0; j < n; j++)
        if (answers[j] != ONCE_SLICED_UNDECIDED)
            misses[decided++] = misses[j];
    once_status added = once_add_batch(local, misses, decided);
    return st != ONCE_OK ? st : added;
}

/* Section 6's two levels over keys[0 .. count-1] (once_sliced.h): the keys `local`
 * holds are answered duplicate here, the others by the shared filter. */
static once_status local_then_shared(once_sliced *f, once_filter *local, const once_key *keys,
                                     size_t count, uint8_t *seen, bool one_key)
{
    if (f == NULL || local == NULL || (count != 0 && (keys == NULL || seen == NULL)))
        return ONCE_ERR_INVALID;
    once_status st = once_query_batch(local, keys, count, seen);
    if (st != ONCE_OK || count == 0)
        return st;
    once_key stack_keys[LOCAL_STACK_KEYS];
    uint8_t stack_answers[LOCAL_STACK_KEYS];
    once_key *misses = stack_keys;
    uint8_t *answers = stack_answers;
    if (count > LOCAL_STACK_KEYS) {
        misses = once_malloc(count * sizeof *misses);
        answers = once_malloc(count);
        if (misses == NULL || answers == NULL) {
            st = ONCE_ERR_NOMEM;
            goto done;
        }
    }
    size_t n = 0;
    for (size_t i = 0; i < count && st == ONCE_OK; i++) {
        if (seen[i])
            st = count_local_hit(f, &keys[i]);
        else
            misses[n++] = keys[i];
    }
    if (st == ONCE_OK && n != 0) {
        size_t j = 0; /* the misses' answers, back in key order */
        memset(answers, 0, n); /* what a failed call leaves: distinct, not garbage */
        st = shared_then_local(f, local, misses, n, answers, one_key);
        for (size_t i = 0; i < count; i++)
            if (!seen[i])
                seen[i] = answers[j++];
    }
done:
    if (misses != stack_keys) {
        once_free_memory(misses);
        once_free_memory(answers);
    }
    return st;
}

once_status once_sliced_test_and_add_local_batch(once_sliced *f, once_filter *local,
                                                 const once_key *keys, size_t count,
                                                 uint8_t *seen)
{
    return local_then_shared(f, local, keys, count, seen, false);
}

once_status once_sliced_test_and_add_local(once_sliced *f, once_filter *local, const void *key,
                                           size_t len, uint64_t time_ms, bool *seen)
{
    if (seen == NULL)
        return ONCE_ERR_INVALID;
    once_key k = {.data = key, .len = len, .time_ms = time_ms};
    uint8_t answer = 0;
    once_status st = local_then_shared(f, local, &k, 1, &answer, true);
    *seen = answer == 1;
    return st;
}

/* ---------------------------------------------------------------- stats */

static uint64_t site_load(const once_sliced *f, uint32_t site)
{
    uint64_t load = 0;
    for (uint32_t j = 0; j < f->groups; j++)
        load += atomic_load_explicit(&f->loads[(size_t)j * f->loads_stride + site],
                                     memory_order_relaxed);
    return load;
}

once_status once_sliced_get_stats(const once_sliced *f, once_sliced_stats *s)
{
    if (f == NULL || s == NULL)
        return ONCE_ERR_INVALID;
    memset(s, 0, sizeof *s);
    s->slicing = f->slicing;
    s->bits = f->bits;
    s->slice_bits = f->slice_bits;
    s->hashes = f->hashes;
    s->slices = f->slices;
    s->parts = f->parts;
    s->slice_hashes = f->slice_hashes;
    s->sites = f->site_count;
    s->window_events = f->count_window ? f->window_ms - 1 : 0;
    s->count = !f->count_window ? 0
               : f->claims  ? f->count_seen
                            : atomic_load_explicit(&f->delivered, memory_order_relaxed);
    s->clock_failures = f->clock_failures;
    s->window_ms = f->count_window ? 0 : f->window_ms;
    for (uint32_t j = 0; j < f->groups; j++) {
        s->inserted += atomic_load_explicit(&f->group[j].inserted, memory_order_relaxed);
        s->local_hits += atomic_load_explicit(&f->group[j].local_hits, memory_order_relaxed);
        s->events += atomic_load_explicit(&f->group[j].events, memory_order_relaxed);
        s->messages += atomic_load_explicit(&f->group[j].messages, memory_order_relaxed);
        s->failed_messages +=
            atomic_load_explicit(&f->group[j].failed_messages, memory_order_relaxed);
        s->failed_events +=
            atomic_load_explicit(&f->group[j].failed_events, memory_order_relaxed);
    }
    s->messages_per_event = s->events ? (double)s->messages / (double)s->events : 0.0;
    double sum = 0, squares = 0;
    for (uint32_t i = 0; i < f->site_count; i++) {
        uint64_t load = site_load(f, i);
        sum += (double)load;
        squares += (double)load * (double)load;
        if (load > s->max_load)
            s->max_load = load;
    }
    s->fairness = squares > 0 ? sum * sum / ((double)f->site_count * squares) : 1.0;
    /* Live estimates: the fill the sites describe (or the formulas' at `inserted`) and
     * the sites found down. */
    /* The fill is the sites' that answer: a site found down describes what it held
     * when last reached (a remote one) while the others go on filling, and the rates
     * under failure are those of the reachable positions. */
    double set = 0, cells = 0, set_all = 0, cells_all = 0;
    bool described = true;
    uint32_t down = 0;
    for (uint32_t i = 0; i < f->site_count; i++) {
        once_site_info info;
        once_sliced_site_info(f, i, &info);
        s->filters += info.filters;
        s->bytes += info.bytes;
        described = described && f->sites[i].describe != NULL;
        bool site_down = atomic_load_explicit(&f->down[i], memory_order_relaxed) != 0;
        double c = (double)info.cells * (info.filters ? info.filters : 1);
        set_all += (double)info.cells_set;
        cells_all += c;
        if (!site_down) {
            set += (double)info.cells_set;
            cells += c;
        }
        down += site_down;
    }
    if (cells == 0) { /* every site down: what they held */
        set = set_all;
        cells = cells_all;
    }
    s->failed_fraction = (double)down / f->site_count;
    s->fill = described && cells > 0 ? set / cells
                                     : pow(rate_at(f, s->inserted), 1.0 / f->hashes);
    if (s->fill > 1.0)
        s->fill = 1.0;
    /* Under ONCE_FAILURE_REPORT nothing is decided without its sites: the rates are
     * those of the events decided, with every site they need. */
    bool threshold_rule = f->on_failure == ONCE_FAILURE_THRESHOLD;
    double failed = threshold_rule ? s->failed_fraction : 0.0;
    uint32_t threshold = threshold_rule ? f->threshold : 0;
    if (f->slicing == ONCE_SLICING_SPLIT)
        once_split_failure_rates_at_fill(f->slice_hashes, f->hashes, s->fill, failed, threshold,
                                         &s->fp_estimate, &s->fn_estimate);
    else
        once_sliced_failure_rates_at_fill(f->slicing, f->hashes, f->slices, s->fill, failed,
                                          threshold, &s->fp_estimate, &s->fn_estimate);
    return ONCE_OK;
}

once_status once_sliced_site_info(const once_sliced *f, uint32_t site, once_site_info *info)
{
    if (f == NULL || info == NULL || site >= f->site_count)
        return ONCE_ERR_INVALID;
    *info = (once_site_info){f->slice_bits, 0, 1, f->slice_bits / 8, 1};
    if (f->sites[site].describe != NULL) {
        /* Shared bit sites count atomically; other sites are read under their lock. */
        bool lock = f->concurrent && !f->event_locks;
        if (lock)
            pthread_mutex_lock(&f->locks[site]);
        f->sites[site].describe(f->sites[site].context, info);
        if (lock)
            pthread_mutex_unlock(&f->locks[site]);
    }
    return ONCE_OK;
}

once_status once_sliced_loads(const once_sliced *f, uint64_t *loads, uint32_t room)
{
    if (f == NULL || loads == NULL || room < f->site_count)
        return ONCE_ERR_INVALID;
    for (uint32_t i = 0; i < f->site_count; i++)
        loads[i] = site_load(f, i);
    return ONCE_OK;
}
