/*
 * site/memory_site.c - a site held in this process's memory (once_sliced.h, "Sliced
 * filters", "Sites"): the cells of one slice of a sliced filter (paper 000), bits or
 * timers, with growth, as the in-process sliced filters and Bloom trees (slice/) and
 * the kept-apart slices (site/slice.c) hold them.
 *
 * Design
 *   A memory site holds one slice in cells and applies each request to them in order,
 *   in the caller's thread.  Without a window a cell is a bit.  With a window of w ms
 *   (paper 000, section 4) a cell is a W-bit timer of core/timers.h holding the tick
 *   at which it expires, so setting a position for an event of producer timestamp t_u
 *   writes the tick of t_u + w, rounded up (the paper's w - (t_i - t_u) left at the
 *   site's time t_i, kept as an absolute expiry so that no timer is ever decremented),
 *   and keeps the later of that and the expiry already there (a later event with the
 *   same position must not be shortened by an earlier one that arrives late).  W is
 *   the narrowest of 8, 16 and 32 bits whose tick is one ms for the window
 *   (memory_site_timer_width: w up to 2^30 ms, about 12 days), so expiries are exact to the
 *   millisecond and equal timers (one insertion's) equal to it; a longer window ticks
 *   at w / 2^30 ms, and its events stay up to a tick longer, never shorter.  (The
 *   paper: log2(w) bits suffice.)
 *
 *   A request is answered at its own time t_u (Definition 4 in the producers' time): a
 *   position is alive for it while it expires after t_u, so all k timers of an event
 *   expire at t_u + w whatever its delay to each site, and a late event is a duplicate
 *   exactly when its key was delivered in the w before it.  That holds for requests up
 *   to a window behind the site's clock L, the latest time it set at: a request older
 *   than L - w is answered at L - w and sets nothing (its timers would expire behind
 *   the clock), so such an event, more than a window late, may be delivered twice.
 *
 *   Timers wrap (core/timers.h), so a stored value is read against the clock: its
 *   expiry is the one tick e within [n(L) - Q + S + 2, n(L) + S + 1] that it encodes.
 *   That is exact while every stored expiry lies in that range: none is later than
 *   n(L) + S + 1 (a set is at most at L), and a sweep clears every timer dead for
 *   requests at L - w, e <= n(L - w), all of them every quarter window (round robin,
 *   as window/timer.c sweeps), so none is older than n(L) - 5S/4 - 2, inside the range
 *   since Q >= 4S - 1.  Between its expiry and its clearing a timer is marked expired
 *   (a bit a cell beside the timers, the sweep's mark): no longer counted as set, its
 *   expiry kept for late requests.
 *
 *   Dynamic size (section 5), per site: a site is a list of sub-filters of its size,
 *   newest last.  A position set is written in the newest; a request's positions are
 *   present when they are all set (alive) in one sub-filter, the one a single earlier
 *   insertion wrote them all in.  The newest is followed by a new empty one when its
 *   density (cells set / cells) passes max_density (growth by density) or the positions
 *   written in it pass -cells ln(1 - max_density), the count that reaches that density
 *   in expectation (growth by cardinality); with a window, an older sub-filter whose
 *   latest expiry is past the clock is empty and dropped.  The sweep marks the timers
 *   that expired at the clock, so the count of cells set follows the alive ones within
 *   a quarter window.
 *   Growth by generation (ONCE_GROWTH_BOUNDED) leaves the opening to the filter: a
 *   set names its generation, which goes to the newest sub-filter if it holds that
 *   generation, else to a new one (the newest itself while it holds nothing), and a
 *   request reports every generation whose sub-filter holds all its positions, for
 *   the filter to intersect over the sites (slice/sliced.c, "Bounded growth").
 *   Sites may share a budget of bytes for the sub-filters past their first: a site
 *   whose newest is full and that finds no room refuses to set (ONCE_ERR_FULL) rather
 *   than let the newest pass its threshold, and a drop gives the bytes back.
 *
 *   A shared site (bits only, no growth) is run by several threads at once: bits are
 *   read with atomic loads and set with atomic OR, and its count with atomic adds;
 *   the sub-filter list never changes.
 *
 * Invariants
 *   - a memory site's cells are touched only by the caller that runs it (or by several
 *     threads at once for a shared site, through atomics);
 *   - with a window, every timer is 0 (empty) or an expiry tick within the range above,
 *     marked once a sweep found it expired (a mark only on a non-zero timer);
 *     cells_set counts the non-zero unmarked cells of a sub-filter.

 */
#include "site/memory_site.h"

#include "once_math.h"

#include "core/alloc.h"
#include "core/hash.h"
#include "core/timers.h"
#include "core/words.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ memory sites */

/* Expired timers are marked (and timers dead a window behind the clock cleared) over a
 * quarter of the window, so a density counts at most a quarter window's worth of
 * expired cells. */
#define SWEEPS_PER_WINDOW 4u

typedef struct sub_filter {
    uint64_t *cells;      /* bits, or W-bit timers followed by their marks (a bit each) */
    uint64_t cells_set;   /* cells set: bits, or timers alive at the clock when last seen */
    uint64_t written;     /* positions written (growth by cardinality) */
    uint64_t last_expiry; /* with a window: the latest expiry tick written */
    uint32_t generation;  /* bounded growth: the generation it holds */
} sub_filter;

typedef struct memory_site {
    once_memory_site_config config;
    once_timers timers;       /* with a window: what a timer's bits mean */
    uint64_t timer_words;     /* with a window: words of timers before the marks */
    uint64_t grow_at_set;     /* cells set that start a new sub-filter (by density) */
    uint64_t grow_at_written; /* positions written that do (by cardinality) */
    uint64_t clock;           /* with a window: L, the latest time set at */
    uint64_t clock_tick, clock_residue; /* n(L), and n(L) mod Q */
    bool clock_started;
    uint64_t sweep_cursor, sweep_credit; /* expired timers cleared so far (see above) */
    uint32_t filters;
    uint64_t opened; /* sub-filters opened, the first included */
    struct claim *claims; /* racing producers' claims (CLAIM_SLOTS), made at the first */
    uint64_t claim_serial;
    sub_filter filter[ONCE_MEMORY_SITE_MAX_FILTERS];
} memory_site;

/* ------------------------------------------------------------ claims */

/* Racing producers (once_site_request.claim): a claim is held from the request that
 * takes it to the one that releases it, here in a table of CLAIM_SLOTS slots searched
 * CLAIM_WINDOW at a time from the value's hash.  A lookup reads the whole window (a
 * release leaves a hole, which must not hide a claim past it); a claim takes the
 * window's first free slot, or the oldest claim's when none is free, so the table
 * never refuses and only the oldest claims are lost, long after their producers
 * released them.  Claims are not saved: they live for a batch or two. */
#define CLAIM_SLOTS 16384u
#define CLAIM_WINDOW 32u

struct claim {
    uint64_t value, serial; /* value 0: free */
};

static uint64_t claim_hash(uint64_t value)
{
    return (value * UINT64_C(0x9E3779B97F4A7C15)) >> 32;
}

static struct claim *claim_find(memory_site *m, uint64_t value)
{
    uint64_t h = claim_hash(value);
    for (uint32_t i = 0; i < CLAIM_WINDOW; i++) {
        struct claim *c = &m->claims[(h + i) & (CLAIM_SLOTS - 1)];
        if (c->value == value)
            return c;
    }
    return NULL;
}

static void claim_release(memory_site *m, uint64_t value)
{
    struct claim *c = m->claims != NULL ? claim_find(m, value) : NULL;
    if (c != NULL)
        c->value = 0;
}

/* Take the claim on `value`: false when it is held already.  Without memory for the
 * table the claim is taken (the producers then race as without claims). */
static bool claim_take(memory_site *m, uint64_t value)
{
    if (m->claims == NULL && (m->claims = once_calloc(CLAIM_SLOTS, sizeof *m->claims)) == NULL)
        return true;
    if (claim_find(m, value) != NULL)
        return false;
    uint64_t h = claim_hash(value);
    struct claim *slot = NULL;
    for (uint32_t i = 0; i < CLAIM_WINDOW; i++) {
        struct claim *c = &m->claims[(h + i) & (CLAIM_SLOTS - 1)];
        if (c->value == 0) {
            slot = c;
            break;
        }
        if (slot == NULL || c->serial < slot->serial)
            slot = c;
    }
    *slot = (struct claim){value, ++m->claim_serial};
    return true;
}

static bool windowed(const memory_site *m)
{
    return m->config.window_ms != 0;
}

static uint64_t sub_filter_bytes(const memory_site *m)
{
    return memory_site_sub_filter_bytes(m->config.bits, m->config.window_ms);
}

/* Take a sub-filter's bytes from the budget, when there is one and they fit. */
static bool budget_take(memory_site *m)
{
    uint64_t *budget = m->config.budget, need = sub_filter_bytes(m);
    if (budget == NULL || m->filters == 0) /* the first is the creator's to count */
        return true;
    uint64_t left = __atomic_load_n(budget, __ATOMIC_RELAXED);
    do {
        if (left < need)
            return false;
    } while (!__atomic_compare_exchange_n(budget, &left, left - need, true, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return true;
}

static void budget_give(memory_site *m)
{
    if (m->config.budget != NULL)
        __atomic_fetch_add(m->config.budget, sub_filter_bytes(m), __ATOMIC_RELAXED);
}

static once_status sub_filter_add(memory_site *m)
{
    if (!budget_take(m))
        return ONCE_ERR_FULL;
    uint64_t *cells = once_calloc(sub_filter_bytes(m) / sizeof *cells, sizeof *cells);
    if (cells == NULL) {
        if (m->filters > 0)
            budget_give(m);
        return ONCE_ERR_NOMEM;
    }
    m->filter[m->filters++] = (sub_filter){cells, 0, 0, 0, 0};
    m->opened++;
    return ONCE_OK;
}

/* ------------------------------------------------------------ timers */

static uint64_t tick_of(const memory_site *m, uint64_t ms)
{
    return ms / m->timers.tick;
}

/* The expiry tick that stored timer v (non-zero) encodes, read against clock tick
 * `now` (`residue` = now mod Q; the range above; 0 if v could only be older than any
 * time, which the range rules out). */
static uint64_t expiry_tick(const memory_site *m, uint64_t v, uint64_t now, uint64_t residue)
{
    const once_timers *g = &m->timers;
    uint64_t d = once_timer_ticks(g, v, residue);
    if (d <= g->span_ticks + 1)
        return now + d;
    return now >= g->period - d ? now - (g->period - d) : 0;
}

/* The same against the site's clock. */
static uint64_t held_expiry(const memory_site *m, uint64_t v)
{
    return expiry_tick(m, v, m->clock_tick, m->clock_residue);
}

static bool marked(const memory_site *m, const sub_filter *f, uint64_t p)
{
    return once_bit_get(f->cells + m->timer_words, p);
}

/* The expiry tick of an event at `ms`: t_u + w rounded up to a tick, short of the
 * largest time's tick, and after the event's own. */
static uint64_t event_expiry(const memory_site *m, uint64_t ms)
{
    uint64_t e = once_timer_expiry(&m->timers, ms), last = tick_of(m, ONCE_MAX_TIME_MS);
    if (e > last)
        e = last > tick_of(m, ms) ? last : tick_of(m, ms) + 1;
    return e;
}

/* The time requests are answered at: their own, or L - w for one older than that. */
static uint64_t answer_time(const memory_site *m, uint64_t ms)
{
    uint64_t w = m->config.window_ms;
    return m->clock_started && m->clock >= w && ms < m->clock - w ? m->clock - w : ms;
}

/* Is position p set (alive at tick `at`, with a window) in sub-filter f?  Its expiry
 * in ms, or 1 for a bit. */
/* Bit p of a site without a window (a shared one's read atomically). */
static inline __attribute__((always_inline)) uint64_t bit_value(const memory_site *m,
                                                                const sub_filter *f, uint64_t p)
{
    if (m->config.shared) /* other threads set bits meanwhile */
        return __atomic_load_n(&f->cells[p >> 6], __ATOMIC_RELAXED) >> (p & 63) & 1;
    return once_bit_get(f->cells, p);
}

static uint64_t cell_value(const memory_site *m, const sub_filter *f, uint64_t p, uint64_t at)
{
    if (!windowed(m))
        return bit_value(m, f, p);
    uint64_t v = once_timer_get(&m->timers, f->cells, p);
    if (v == 0)
        return 0;
    uint64_t e = held_expiry(m, v);
    return e > at ? e * m->timers.tick : 0;
}

/* Set position p: a bit, or a timer to expiry tick `expiry` (the later stays). */
/* Set bit p of a site without a window (a shared one's atomically). */
static inline __attribute__((always_inline)) void bit_set(memory_site *m, sub_filter *f,
                                                          uint64_t p)
{
    uint64_t bit = UINT64_C(1) << (p & 63);
    if (m->config.shared) {
        /* A bit set already needs no write: a read keeps the line shared between the
         * cores, where an atomic OR would take it over. */
        if (__atomic_load_n(&f->cells[p >> 6], __ATOMIC_RELAXED) & bit)
            return;
        uint64_t old = __atomic_fetch_or(&f->cells[p >> 6], bit, __ATOMIC_RELAXED);
        if ((old & bit) == 0)
            __atomic_fetch_add(&f->cells_set, 1, __ATOMIC_RELAXED);
        return; /* no growth: `written` is not needed */
    }
    f->written++;
    f->cells_set += (f->cells[p >> 6] & bit) == 0;
    f->cells[p >> 6] |= bit;
}

static void cell_set(memory_site *m, sub_filter *f, uint64_t p, uint64_t expiry)
{
    if (!windowed(m)) {
        bit_set(m, f, p);
        return;
    }
    f->written++;
    uint64_t v = once_timer_get(&m->timers, f->cells, p);
    if (v == 0 || marked(m, f, p)) { /* counted again: alive from now */
        f->cells_set++;
        once_bit_clear(f->cells + m->timer_words, p);
    }
    /* The later expiry stays: a late event does not shorten a timer. */
    uint64_t held = v != 0 ? held_expiry(m, v) : 0;
    if (expiry > held)
        once_timer_put(&m->timers, f->cells, p, once_timer_value(&m->timers, expiry));
    if (expiry > f->last_expiry)
        f->last_expiry = expiry;
}

/* What a sweep at a new clock needs: the old clock to read timers against, the new
 * clock's tick (expired at or before it: marked) and the tick a window behind it (dead
 * at or before it: cleared). */
typedef struct sweep_ticks {
    uint64_t then, then_residue, expired, dead;
} sweep_ticks;

static void sweep_cell(memory_site *m, sub_filter *f, uint64_t p, const sweep_ticks *t)
{
    uint64_t v = once_timer_get(&m->timers, f->cells, p);
    if (v == 0)
        return;
    uint64_t e = expiry_tick(m, v, t->then, t->then_residue);
    bool was_marked = marked(m, f, p);
    if (e <= t->dead) {
        once_timer_put(&m->timers, f->cells, p, 0);
        once_bit_clear(f->cells + m->timer_words, p);
    } else if (e <= t->expired && !was_marked) {
        once_bit_set(f->cells + m->timer_words, p);
    } else {
        return;
    }
    if (!was_marked)
        f->cells_set--;
}

/* The clock moves to `now`: sweep cells * advance / (w/4) cells of each sub-filter
 * (all of them every quarter window), and drop the old sub-filters that are empty. */
static void advance_clock(memory_site *m, uint64_t now)
{
    if (m->clock_started && now <= m->clock)
        return;
    uint64_t advance = m->clock_started ? now - m->clock : m->config.window_ms;
    uint64_t w = m->config.window_ms;
    /* Every stored timer reads right against the old clock. */
    sweep_ticks t = {m->clock_tick, m->clock_residue, tick_of(m, now),
                     now >= w ? tick_of(m, now - w) : 0};
    m->clock = now;
    m->clock_tick = t.expired;
    m->clock_residue = t.expired % m->timers.period;
    m->clock_started = true;
    uint64_t cells = m->config.bits, period = m->config.window_ms / SWEEPS_PER_WINDOW;
    uint64_t sweep = once_timers_sweep_due(cells, period == 0 ? 1 : period, advance,
                                           &m->sweep_credit);
    for (uint64_t i = 0, p = m->sweep_cursor; i < sweep; i++, p = p + 1 == cells ? 0 : p + 1)
        for (uint32_t j = 0; j < m->filters; j++)
            sweep_cell(m, &m->filter[j], p, &t);
    m->sweep_cursor = (m->sweep_cursor + sweep) % cells;
    uint32_t kept = 0;
    for (uint32_t j = 0; j < m->filters; j++) {
        sub_filter *f = &m->filter[j];
        if (j + 1 < m->filters && f->last_expiry <= t.expired) {
            once_free_memory(f->cells);
            budget_give(m);
            continue;
        }
        m->filter[kept++] = *f;
    }
    m->filters = kept;
}

static bool by_generation(const memory_site *m)
{
    return m->config.growth == ONCE_GROWTH_BOUNDED;
}

/* Bounded growth: the sub-filter a set of `generation` goes to.  The filter's
 * generations only grow, so it is the newest, or a new one after it (the newest
 * itself while nothing was written in it); NULL, with *status, when there is no room
 * for it or the generation is older than the newest (a caller out of order). */
static sub_filter *generation_filter(memory_site *m, uint32_t generation, once_status *status)
{
    sub_filter *newest = &m->filter[m->filters - 1];
    if (newest->generation == generation)
        return newest;
    if (generation < newest->generation) {
        *status = ONCE_ERR_INVALID;
        return NULL;
    }
    if (newest->written == 0) {
        newest->generation = generation;
        return newest;
    }
    *status = m->filters < ONCE_MEMORY_SITE_MAX_FILTERS ? sub_filter_add(m) : ONCE_ERR_FULL;
    if (*status != ONCE_OK)
        return NULL;
    newest = &m->filter[m->filters - 1];
    newest->generation = generation;
    return newest;
}

static bool newest_full(const memory_site *m)
{
    const sub_filter *newest = &m->filter[m->filters - 1];
    return (m->config.growth == ONCE_GROWTH_DENSITY && newest->cells_set >= m->grow_at_set) ||
           (m->config.growth == ONCE_GROWTH_CARDINALITY && newest->written >= m->grow_at_written);
}

/* The newest sub-filter past its threshold: open another, while there is room.  Past
 * it, without a budget, the newest takes more and the rate rises above the target (out
 * of memory too); with one, the site refuses to set until a drop gives room back
 * (has_room). */
static void maybe_grow(memory_site *m)
{
    if (newest_full(m) && m->filters < ONCE_MEMORY_SITE_MAX_FILTERS)
        (void)sub_filter_add(m);
}

/* May a request set positions?  Not when the site keeps a budget and its newest is
 * full with no room for another. */
static bool has_room(memory_site *m)
{
    if (m->config.budget == NULL || !newest_full(m))
        return true;
    return m->filters < ONCE_MEMORY_SITE_MAX_FILTERS && sub_filter_add(m) == ONCE_OK;
}

/* Ask for the cells of a request some requests ahead, so that a batch has several
 * cache misses in flight (as the library's own batches do). */
#define PREFETCH_AHEAD 8u

static void prefetch_request(const memory_site *m, const once_site_request *q)
{
    const sub_filter *newest = &m->filter[m->filters - 1];
    for (uint32_t i = 0; i < q->count; i++) {
        uint64_t p = q->positions[i];
        if (p < m->config.bits)
            once_prefetch_write(windowed(m) ? &newest->cells[p >> m->timers.shift]
                                            : &newest->cells[p >> 6]);
    }
}

/*
 * A site of plain bits (no window, no growth: one sub-filter, whose bits are only ever
 * set) asked requests that claim nothing: each request is answered without what such a
 * site never does, no clock, no generations, no growth or budget (answer_plain).  The
 * requests of a sliced filter's event are a few positions each, so that work, done for
 * every request, was most of a site's cost.  Answers and cells are those of the full
 * path.
 */
static bool plain_requests(const memory_site *m, const once_site_request *requests,
                           size_t count)
{
    if (windowed(m) || m->config.growth != ONCE_GROWTH_NONE || m->filters != 1)
        return false;
    for (size_t r = 0; r < count; r++)
        if ((requests[r].claim | requests[r].release) != 0)
            return false;
    return true;
}

/* A plain site's request, its positions in range (see plain_requests). */
static void answer_plain(memory_site *m, once_site_request *q)
{
    sub_filter *f = &m->filter[0];
    bool all = true;
    for (uint32_t i = 0; i < q->count; i++)
        all &= bit_value(m, f, q->positions[i]) != 0;
    q->all_set = all;
    if (q->expiries != NULL)
        for (uint32_t i = 0; i < q->count; i++)
            q->expiries[i] = bit_value(m, f, q->positions[i]);
    if (q->op != ONCE_SITE_TEST)
        for (uint32_t i = 0; i < q->count; i++)
            bit_set(m, f, q->positions[i]);
}

static void memory_site_run(void *context, once_site_request *requests, size_t count)
{
    memory_site *m = context;
    const bool plain = plain_requests(m, requests, count);
    const uint64_t bits = m->config.bits; /* a local: the requests' stores could alias it */
    for (size_t r = 0; r < count && r < PREFETCH_AHEAD; r++)
        prefetch_request(m, &requests[r]);
    for (size_t r = 0; r < count; r++) {
        if (r + PREFETCH_AHEAD < count)
            prefetch_request(m, &requests[r + PREFETCH_AHEAD]);
        once_site_request *q = &requests[r];
        q->status = ONCE_OK;
        q->all_set = false;
        q->generations = 0;
        q->claim_lost = false;
        if (q->release != 0)
            claim_release(m, q->release);
        if (q->claim != 0)
            q->claim_lost = !claim_take(m, q->claim);
        bool in_range = true;
        for (uint32_t i = 0; i < q->count; i++)
            in_range &= q->positions[i] < bits;
        if (!in_range) { /* a position past the site is never set, and is not written */
            if (q->expiries != NULL)
                memset(q->expiries, 0, q->count * sizeof *q->expiries);
            continue;
        }
        if (plain) {
            answer_plain(m, q);
            continue;
        }
        if (windowed(m) && q->op != ONCE_SITE_TEST)
            advance_clock(m, q->time_ms);
        /* Definition 4 at the event's own time: a position is alive for t_u when it
         * expires after t_u, whatever the site's clock (within a window of it). */
        uint64_t at = windowed(m) ? answer_time(m, q->time_ms) : q->time_ms;
        uint64_t at_tick = windowed(m) ? tick_of(m, at) : 0;
        /* The positions are present when set in one sub-filter, newest first (every
         * one, by generation). */
        for (uint32_t j = m->filters; j-- > 0 && (!q->all_set || by_generation(m));) {
            bool all = true;
            for (uint32_t i = 0; i < q->count && all; i++)
                all = cell_value(m, &m->filter[j], q->positions[i], at_tick) != 0;
            if (!all)
                continue;
            if (by_generation(m))
                q->generations |= UINT64_C(1) << (m->filter[j].generation % 64);
            if (q->all_set)
                continue;
            q->all_set = true;
            if (q->expiries != NULL)
                for (uint32_t i = 0; i < q->count; i++)
                    q->expiries[i] = cell_value(m, &m->filter[j], q->positions[i], at_tick);
        }
        if (!q->all_set && q->expiries != NULL)
            for (uint32_t i = 0; i < q->count; i++) /* what the newest holds */
                q->expiries[i] = cell_value(m, &m->filter[m->filters - 1], q->positions[i],
                                            at_tick);
        if (q->op == ONCE_SITE_TEST)
            continue;
        if (!has_room(m)) {
            q->status = ONCE_ERR_FULL;
            continue;
        }
        if (at != q->time_ms) /* more than a window late: it would expire behind L */
            continue;
        sub_filter *newest = &m->filter[m->filters - 1];
        if (by_generation(m) && (newest = generation_filter(m, q->generation, &q->status)) == NULL)
            continue;
        uint64_t expiry = windowed(m) ? event_expiry(m, q->time_ms) : 1;
        for (uint32_t i = 0; i < q->count; i++)
            cell_set(m, newest, q->positions[i], expiry);
        maybe_grow(m);
    }
}

static void memory_site_describe(void *context, once_site_info *info)
{
    const memory_site *m = context;
    info->cells = m->config.bits;
    info->filters = m->filters;
    info->opened = m->opened;
    info->cells_set = 0;
    for (uint32_t j = 0; j < m->filters; j++)
        info->cells_set += __atomic_load_n(&m->filter[j].cells_set, __ATOMIC_RELAXED);
    info->bytes = sizeof *m + (uint64_t)m->filters * sub_filter_bytes(m);
}

static void memory_site_destroy(void *context)
{
    memory_site *m = context;
    once_free_memory(m->claims);
    for (uint32_t j = 0; j < m->filters; j++)
        once_free_memory(m->filter[j].cells);
    once_free_memory(m);
}

once_status once_memory_site_create(const once_memory_site_config *c, once_site *out)
{
    if (c == NULL || out == NULL || c->bits == 0 || c->bits % 64 != 0 ||
        c->bits > (UINT64_C(1) << 40) || c->window_ms > ONCE_MAX_TIME_MS / 2 ||
        (c->growth != ONCE_GROWTH_NONE && c->growth != ONCE_GROWTH_DENSITY &&
         c->growth != ONCE_GROWTH_CARDINALITY && c->growth != ONCE_GROWTH_BOUNDED) ||
        ((c->growth == ONCE_GROWTH_DENSITY || c->growth == ONCE_GROWTH_CARDINALITY) &&
         !(c->max_density > 0.0 && c->max_density < 1.0)))
        return ONCE_ERR_INVALID;
    if (c->shared && (c->window_ms != 0 || c->growth != ONCE_GROWTH_NONE))
        return ONCE_ERR_INVALID;
    if (c->window_ms != 0 && c->bits > (UINT64_C(1) << 34))
        return ONCE_ERR_TOO_LARGE; /* up to 33 bits a timer and its mark */
    memory_site *m = once_calloc(1, sizeof *m);
    if (m == NULL)
        return ONCE_ERR_NOMEM;
    m->config = *c;
    if (c->window_ms != 0) {
        m->timers = once_timers_make(c->window_ms, memory_site_timer_width(c->window_ms));
        m->timer_words = c->bits * m->timers.width / 64;
    }
    if (c->growth != ONCE_GROWTH_NONE) {
        m->grow_at_set = (uint64_t)ceil((double)c->bits * c->max_density);
        m->grow_at_written = (uint64_t)ceil(-(double)c->bits * log1p(-c->max_density));
    }
    if (sub_filter_add(m) != ONCE_OK) {
        once_free_memory(m);
        return ONCE_ERR_NOMEM;
    }
    *out = (once_site){.context = m,
                       .run = memory_site_run,
                       .destroy = memory_site_destroy,
                       .describe = memory_site_describe};
    return ONCE_OK;
}

/* ------------------------------------------------------------ saved memory sites */

void memory_site_get_state(const once_site *site, memory_site_state *out)
{
    const memory_site *m = site->context;
    *out = (memory_site_state){.clock = m->clock,
                              .clock_started = m->clock_started,
                              .sweep_cursor = m->sweep_cursor,
                              .sweep_credit = m->sweep_credit,
                              .opened = m->opened,
                              .filters = m->filters};
}

uint64_t memory_site_payload_bytes(const once_site *site)
{
    const memory_site *m = site->context;
    return (uint64_t)m->filters * (2 * 8 + sub_filter_bytes(m));
}

void memory_site_save(const once_site *site, once_writer *w)
{
    const memory_site *m = site->context;
    for (uint32_t j = 0; j < m->filters; j++) {
        const sub_filter *f = &m->filter[j];
        once_writer_u64(w, f->written);
        once_writer_u64(w, f->generation);
        once_writer_words(w, f->cells, sub_filter_bytes(m) / 8);
    }
}

/* After a load: the counts a sub-filter keeps from its cells (set cells: bits, or
 * non-zero unmarked timers; the latest expiry held), false when a mark stands on an
 * empty timer or a bit past the cells is set, which no site writes. */
static bool sub_filter_rebuild(memory_site *m, sub_filter *f)
{
    uint64_t words = sub_filter_bytes(m) / 8;
    f->cells_set = 0;
    f->last_expiry = 0;
    if (!windowed(m)) {
        for (uint64_t i = 0; i < words; i++)
            f->cells_set += (uint64_t)__builtin_popcountll(f->cells[i]);
        return f->cells_set <= f->written;
    }
    for (uint64_t p = 0; p < m->config.bits; p++) {
        uint64_t v = once_timer_get(&m->timers, f->cells, p);
        if (v == 0) {
            if (marked(m, f, p))
                return false;
            continue;
        }
        if (v > m->timers.period)
            return false;
        uint64_t e = held_expiry(m, v);
        f->last_expiry = e > f->last_expiry ? e : f->last_expiry;
        f->cells_set += !marked(m, f, p);
    }
    return f->cells_set <= f->written;
}

static void memory_site_reset_clock(memory_site *m, const memory_site_state *s)
{
    m->clock = s->clock;
    m->clock_started = s->clock_started;
    m->clock_tick = windowed(m) ? tick_of(m, s->clock) : 0;
    m->clock_residue = windowed(m) ? m->clock_tick % m->timers.period : 0;
    m->sweep_cursor = s->sweep_cursor;
    m->sweep_credit = s->sweep_credit;
}

once_status memory_site_load(const once_memory_site_config *config,
                             const memory_site_state *state, const uint8_t *payload, size_t len,
                             once_site *out)
{
    if (config->budget != NULL || config->shared)
        return ONCE_ERR_INVALID;
    uint64_t quarter = config->window_ms / SWEEPS_PER_WINDOW;
    bool windowed_site = config->window_ms != 0;
    if (state->filters == 0 || state->filters > ONCE_MEMORY_SITE_MAX_FILTERS ||
        state->opened < state->filters || state->clock > ONCE_MAX_TIME_MS ||
        (!state->clock_started && state->clock != 0) ||
        (config->growth == ONCE_GROWTH_NONE && state->filters != 1) ||
        (windowed_site ? state->sweep_cursor >= config->bits ||
                             state->sweep_credit >= (quarter == 0 ? 1 : quarter)
                       : state->clock_started || state->sweep_cursor != 0 ||
                             state->sweep_credit != 0))
        return ONCE_ERR_CORRUPT;
    /* The payload's length against the geometry before anything is allocated: a file
     * that declares a huge site with a small payload must not make it allocate. */
    if (config->bits == 0 || config->bits > (UINT64_C(1) << 40) ||
        len != (uint64_t)state->filters *
                   (2 * 8 + memory_site_sub_filter_bytes(config->bits, config->window_ms)))
        return ONCE_ERR_CORRUPT;
    once_site site;
    once_status st = once_memory_site_create(config, &site);
    if (st != ONCE_OK)
        return st == ONCE_ERR_INVALID || st == ONCE_ERR_TOO_LARGE ? ONCE_ERR_CORRUPT : st;
    memory_site *m = site.context;
    if (len != (uint64_t)state->filters * (2 * 8 + sub_filter_bytes(m))) {
        memory_site_destroy(m);
        return ONCE_ERR_CORRUPT;
    }
    while (m->filters < state->filters)
        if (sub_filter_add(m) != ONCE_OK) {
            memory_site_destroy(m);
            return ONCE_ERR_NOMEM;
        }
    memory_site_reset_clock(m, state);
    m->opened = state->opened;
    const uint8_t *at = payload;
    uint32_t previous_generation = 0;
    for (uint32_t j = 0; j < m->filters; j++) {
        sub_filter *f = &m->filter[j];
        f->written = once_le64_read(at);
        uint64_t generation = once_le64_read(at + 8);
        at += 16;
        once_words_from_le(f->cells, at, sub_filter_bytes(m) / 8);
        at += sub_filter_bytes(m);
        if (generation > UINT32_MAX || (!by_generation(m) && generation != 0) ||
            generation < previous_generation || !sub_filter_rebuild(m, f)) {
            memory_site_destroy(m);
            return ONCE_ERR_CORRUPT;
        }
        f->generation = previous_generation = (uint32_t)generation;
    }
    *out = site;
    return ONCE_OK;
}

void memory_site_clear(once_site *site)
{
    memory_site *m = site->context;
    for (uint32_t j = 1; j < m->filters; j++)
        once_free_memory(m->filter[j].cells);
    m->filters = 1;
    sub_filter *first = &m->filter[0];
    memset(first->cells, 0, sub_filter_bytes(m));
    *first = (sub_filter){first->cells, 0, 0, 0, 0};
    memory_site_reset_clock(m, &(memory_site_state){0});
}
