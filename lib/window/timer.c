/*
 * window/timer.c - time windows with timers: the sliding Bloom filter of paper 000, section
 * 4 (Definition 4, producer timestamps, the equal-timers heuristic) and its dynamic
 * size (section 5).
 *
 * Design
 *   A standard Bloom filter whose cells are timers of W bits (8, 16 or 32), packed in
 *   64-bit words, probed by the shared sequence (once_probe_next over [0, m)).  A key
 *   is present when its k timers are alive.  Instead of decrementing every timer each
 *   time unit (O(m) per tick), a timer stores the absolute EXPIRY of the last key that
 *   set it, in wrapping tick units, and "alive" compares it with the current tick.
 *
 *   Time.  Every time is an argument: now_ms of an operation (once_key.time_ms in a
 *   batch) is the event's timestamp t_u, in ms, at most ONCE_MAX_TIME_MS.  The filter
 *   keeps L, the clock: the largest event time written so far (once.h, "Event time").
 *   An event more than the max time jump past L is refused with ONCE_ERR_TIME.  A late
 *   event (t_u < L) is taken at L: tested against the timers alive at L and, if
 *   inserted, stamped with expiry L + T, so it is kept for T after its delivery.  So
 *   every write is at max(t_u, L) and its expiry is never below an alive timer's.
 *   Reads are answered at the reference time R = max(L, now_ms).
 *
 *   Ticks.  tick = ceil(T / 2^(W-2)) ms, S = ceil(T / tick) <= 2^(W-2) ticks per
 *   span, and n(t) = floor(t / tick).  An event's expiry tick is e = ceil((t_u + T) /
 *   tick): rounded up, so a timer never expires early.  Tick values are kept modulo
 *   Q = 2^W - 1 and stored as (e mod Q) + 1, so the value 0 means empty and no expiry
 *   has to be moved off it (Q is also the cell mask; the packed array, its arithmetic
 *   and its sweep are core/timers.h, the timer core).  A timer is alive at R iff it is
 *   non-zero and left = (value - 1 - n(R)) mod Q lies in [1, S + 1]; that is iff
 *   R < e * tick.  Hence, in ms:
 *     - a key inserted at t_u is reported present while R < t_u + T: no false
 *       negatives inside the window (R - T, R] (with the equal-timers heuristic off);
 *     - it is gone once R >= t_u + T + tick - 1: the slack past the span is under one
 *       tick (stats: window = T, slack = tick, both in ms).
 *
 *   Setting a timer keeps the LATER of its current alive expiry and the new one (a
 *   timer is never shortened, which out-of-order events would otherwise turn into
 *   false negatives); an empty or expired timer is simply overwritten.  So an alive
 *   cell holds the latest expiry of the keys that set it, and the alive cells are
 *   exactly the standard filter of the alive keys: its rate is once_fpr_standard(m,
 *   k, n) with n the keys alive, and the geometry (m, k) is once_plan(ONCE_STANDARD,
 *   capacity, error) with capacity = expected distinct keys per span.
 *
 * Sweeping expired timers
 *   A stale (expired) timer left in place would look alive again once its value comes
 *   round the wrap.  Writes clear them incrementally: an operation that advances L by
 *   d ms owes the sweep m*d/T cells (exactly, a remainder is carried in `credit`),
 *   round-robin, clearing the expired ones; an advance of T + tick or more clears
 *   everything (nothing can be alive then).  Queries never write.
 *   A pause shorter than that owes up to m cells at once: milliseconds in one write at
 *   10^7 keys.  So the range sweep may fall behind: `cursor` is where a sweep paying
 *   every write's due at once would stand (it is what a file saves), and the sweep
 *   stands `debt` cells behind it.  A write pays what it owes and the debt up to a step
 *   of m / PACE_SHARE cells (within PACE_MIN_STEP and PACE_MAX_STEP, shared by the
 *   sub-filters), and more only where the debt would pass
 *     D = floor(m (Q - 3S - 6) / S) - 1  (about 0.89 m at W = 8, nearly m above),
 *   or all m cells where it would reach m.  So a steady stream pays as before, and a
 *   pause is paid over the writes after it.  The wrap allows the lag (the invariant
 *   below); the saved bytes are those of a sweep without debt (a file holds alive
 *   timers only, and the cursor), so a loaded copy, with no debt, answers alike.
 *
 *   A sparse sub-filter (few timers set for its m, a quiet stream or a replay of events
 *   far apart) would pay m d / T cells a write, and a wipe m, for a handful of live
 *   timers.  So a sub-filter opened empty, of at least LOG_MIN cells' log, keeps in its
 *   array, past its timers, a log of the cells its insertions set (at most LOG_MAX or
 *   one in LOG_SHARE of its cells); while the log holds every non-zero cell, the
 *   sub-filter owes no range: its logged cells are visited (the expired cleared, the
 *   others kept; the sub-filter is clean when none is left) each time the writes have
 *   owed 7/8 of m since the last visit (log_due, in parts of m rounded up), a visit or
 *   two a span rather than one at every write that moves the clock; a cell logged
 *   twice is kept twice until the copies fill half the log, when a visit sorts it and
 *   keeps each once; and a wipe clears the logged cells alone.  The cursor and the credit move as
 *   without a log, so the saved form is the same.  A full log is visited, and lost if
 *   that leaves it more than half full, until a wipe (or a rebuild) finds the
 *   sub-filter small again.  Its words are counted in once_bytes and taken only within
 *   the cap; a loaded filter takes them as the cap allows, rebuilt from its cells.
 *
 *   Invariant: after every write at latest time L, every non-zero timer has its
 *   expiry e in [n(L) - S - S (D + 1) / m - 1, n(L) + S + 1].  Upper end: e <= n(t_u +
 *   T) + 1 with t_u <= L.  Lower end: take the writes that moved the latest time over
 *   the last a = T (m + D + 1) / m ms before L.  They owed at least m a / T - 1 = m + D
 *   cells, and the debt, at most D after each write, left at most D of those unpaid:
 *   the range sweep covered every cell at some time tau > L - a (a logged sub-filter's
 *   non-zero cells each 7/8 of m owed, the others being zero; a lost log's all at its
 *   loss), and a timer that survived that visit (or was written after it) has e >
 *   n(tau) >= n(L) - a / tick - 1 >= n(L) - S - S (D + 1) / m - 2.  If there is no such
 *   earlier value, every timer was written (or loaded, alive) after L - a, and the same
 *   bound holds.
 *   Reads: at R >= L + T + tick nothing can be alive (every e * tick < L + T + tick),
 *   so the answer is "absent" without looking; this covers any read-only stretch,
 *   however long.  For R < L + T + tick, n(R) <= n(L) + S + 1, so an expired timer has
 *   n(R) - e <= 2S + 2 + S (D + 1) / m <= Q - S - 4 by D's choice, and it could only
 *   look alive at n(R) - e >= Q - S - 1: it cannot.  (Where Q - 3S - 6 <= 0, D = 0 and
 *   every write pays all it owes: the cover is then within (L - T, L], e > n(L) - S,
 *   and n(R) - e <= 2S < Q - S - 1, as Q >= max(255, 4S - 1).)  The same holds for a
 *   write's test, made before its sweep.
 *   Saving writes expired timers as empty (the payload is canonical: every non-zero
 *   timer in a file is alive at its L), and the loader refuses any other file.
 *
 * Equal timers (config equal_timers = k'; 0 or 1 is off)
 *   A key is reported present iff its k timers are alive AND at least k' of them hold
 *   the same value (the same expiry tick): the timers set by one insertion are equal,
 *   while an absent key's alive timers were set by several keys at different ticks.
 *   This lowers false positives, but a key whose timers were later raised by other
 *   keys (keep-the-later) loses equal timers and is reported absent: the heuristic
 *   trades false positives for false negatives (paper 000, Fig. 9), and the
 *   no-false-negative promise holds only with it off.  Keys inserted in the same tick
 *   share a value, so coarse ticks (small W, long spans) weaken it.
 *
 * Dynamic size (config dynamic, once_config_init's default; paper 000, section 5)
 *   The filter is a list of sub-filters of one geometry, oldest first.  Keys are
 *   tested against every sub-filter and inserted into the newest only.  Growth is
 *   density based (the key count is unknowable once keys expire): when the newest
 *   holds `threshold` alive timers, the insertion goes into a new empty sub-filter.  A
 *   sub-filter other than the newest is dropped once its latest expiry has passed (it
 *   holds no alive timer).  once_bytes is capped by max_bytes (0 = 1 GiB) and the
 *   sub-filters by TIMER_MAX_FILTERS: an insertion that would need more fails with
 *   ONCE_ERR_FULL and changes nothing.
 *
 *   An absent key is a false positive when any alive sub-filter matches it, so the
 *   filter's rate is at most the sum of its sub-filters' rates, and a sub-filter's
 *   rate is (alive timers / m)^k.  How full the newest may get is its share of that
 *   sum ("budget" growth, what once_create builds): each sub-filter is planned for
 *   ceil(capacity / 4) keys at error / 8, and a new sub-filter may reach
 *   error / (2 max(4, c)), c the sub-filters that will be alive together:
 *   threshold = m (error / (2 max(4, c)))^(1/k), set when it opens.  Sub-filters that
 *   fill in f ms each stay alive f + T, so c is the larger of the sub-filters alive
 *   once it opens and (T + f) / f + 1, f the time the one before it took to fill (and
 *   P_OPENED saves when the newest opened).  At the design rate a sub-filter fills in
 *   about a quarter span and about five are alive: their rates sum to about error / 2.
 *   At r times the design rate more are alive, and each aims at error / (2c), so the
 *   sum stays near error / 2 however large r is; in the span after the rate climbs the
 *   sub-filters opened before the climb add their larger aims (a few times error / 8).
 *   When the rate falls the new ones aim higher again and the old ones expire: memory
 *   follows the rate, a span behind.
 *   The cost of a high rate is memory (sub-filters fill to a lower density) and time
 *   (a key is tested against every alive sub-filter).
 *
 *   Files saved before budget growth existed ("even" growth, P_DYNAMIC = 1) keep it:
 *   every sub-filter planned for ceil(capacity / 4) keys at error / 4 and full at
 *   m (error / 4)^(1/k) alive timers, so that at the design rate about four full
 *   sub-filters stay near `error`, while above it the rate grows with the overload.
 *
 *   Alive counts are kept in O(1) per change: a ring of EPOCHS counters per sub-filter
 *   counts the alive timers by expiry epoch (EPOCHS_PER_SPAN epochs per span), only for
 *   epochs that start after the current tick.  When the current tick enters an epoch,
 *   its counter leaves the total and is zeroed.  The total is therefore the number of
 *   alive timers minus those of the one epoch in progress (at most 1/64 of a span's
 *   worth): growth may come that much late.  It depends only on the alive timers, not
 *   on expired ones still waiting for the sweep, so a saved and loaded filter (which
 *   keeps only alive timers) rebuilds exactly the same counts and grows and shrinks
 *   exactly like the original.
 *
 * Invariants
 *   - queries never change state; a failed operation (ONCE_ERR_TIME for a time the
 *     clock refuses, ONCE_ERR_FULL, ONCE_ERR_NOMEM) changes nothing;
 *   - L never decreases; cells past m in the last words are zero;
 *   - the expiry invariant above; the newest sub-filter is never dropped;
 *   - dynamic filters: `alive` of a sub-filter = sum of its epoch counters = its alive
 *     timers whose epoch starts after the current tick, and max_expiry bounds its
 *     expiries.  Only growth and dropping read them, and a static filter does neither
 *     (one sub-filter, never another), so writes keep them for dynamic filters only.
 */
#include "core/structure.h"
#include "core/timers.h"
#include "core/limits.h"
#include "math/cardinality.h"
#include "math/sizing.h"
#include "core/batch_loop.h"

#include <math.h>

/* The table at the end of this file, which the code above refers to. */
extern const once_filter_ops once_timer_ops;

#define TIMER_MAX_SPAN (UINT64_C(1) << 40)   /* ms, about 35 years */
#define TIMER_MAX_FILTERS 4096u
#define TIMER_SPLIT 4u        /* dynamic: sub-filters of capacity / 4 keys at error / 4 */
#define EPOCHS 256u           /* ring of alive counters by expiry epoch */
#define EPOCHS_PER_SPAN 64u   /* epoch = ceil(S / 64) ticks: the ring spans 4 spans */
#define TIMER_MAX_CELL_BITS (ONCE_MAX_CELLS * 4) /* what once_words_alloc accepts */
#define LOG_MAX 8192u   /* cells a sub-filter's log holds at most ("Sweeping") */
#define LOG_SHARE 64u   /* and at most one in this many of its cells */
#define LOG_MIN 64u     /* a sub-filter whose log would hold fewer keeps none */
#define LOG_AHEAD 16u   /* a log's visit requests the cell this many entries ahead */
#define LOG_DUE_SPAN (1u << 16) /* log_due's parts of m; the logs are visited at 7/8 */
#define PACE_MIN_STEP 4096u     /* cells a write sweeps at least of what it owes ("Sweeping") */
#define PACE_MAX_STEP 131072u   /* and at most, but for what passes the debt's bound */
#define PACE_SHARE 512u         /* a step is m / PACE_SHARE cells between those two */

typedef struct timer_sub {
    uint64_t *array;
    uint64_t alive;      /* alive timers in epochs that start after the current tick */
    uint64_t max_expiry; /* latest expiry tick set since creation (0 = none) */
    bool dirty;          /* a timer may be non-zero (a wipe is needed) */
    /* The log of the cells set since the sub-filter was last clean ("Sweeping"): in
     * `array`, past its timers' words, when `logged`; `log_lost` once some non-zero
     * cell may be outside it.  (In the padding before `epochs`: the struct's size is
     * part of once_bytes.) */
    bool logged, log_lost;
    uint32_t log_count;
    uint64_t epochs[EPOCHS];
} timer_sub;
_Static_assert(sizeof(timer_sub) == 32 + 8 * EPOCHS, "a sub-filter's size is part of once_bytes");

typedef struct timer_now {
    uint64_t n;     /* tick of the reference time */
    uint64_t res;   /* n mod Q */
    uint64_t epoch; /* n / epoch_ticks: epochs after it are counted */
} timer_now;

typedef struct timer_filter {
    once_filter base;
    uint64_t cells;       /* m: timers per sub-filter */
    uint32_t hashes;      /* k */
    uint32_t equal;       /* k' (0 or 1: off) */
    uint32_t policy;
    bool dynamic;
    bool budget;          /* dynamic: budget growth (each new sub-filter's threshold) */
    uint64_t words;       /* per sub-filter */
    once_timers timers;   /* W, T, the tick, S and Q (core/timers.h) */
    uint64_t debt;          /* cells the range sweep owes, behind `cursor` ("Sweeping") */
    uint64_t plan_capacity; /* keys per (sub-)filter the geometry was planned for */
    double sub_error;       /* rate per (sub-)filter aimed at */
    uint64_t threshold;     /* dynamic: alive timers at which the newest is full */
    double error;           /* budget growth: the whole filter's target */
    uint64_t opened;        /* budget growth: when the newest sub-filter opened, ms */
    uint64_t max_bytes;
    uint64_t latest;        /* L, ms: the clock */
    bool started;           /* L was set by an event (once.h, "Event time") */
    uint32_t log_due;       /* the logs' sweep owed since their last, in LOG_DUE_SPAN
                               parts of m cells rounded up ("Sweeping"; not saved) */
    timer_now now;          /* of L */
    uint64_t cursor;        /* next cell a sweep without debt would visit (saved) */
    uint64_t credit;        /* sweep remainder, < span */
    uint32_t count;         /* sub-filters */
    uint32_t room;          /* entries allocated in subs (>= count) */
    timer_sub *subs;        /* oldest first */
} timer_filter;

/* once_bytes counts the struct (timer_memory), and a loader refuses a file whose
 * filter would pass its cap: a larger struct would refuse files saved at their cap. */
_Static_assert(sizeof(timer_filter) == 264, "the struct's size is part of once_bytes");

#define TIMER(f) ((timer_filter *)(f))
#define CTIMER(f) ((const timer_filter *)(f))

/* The log ("Sweeping"), below. */
static void log_cells_set(const timer_filter *t, timer_sub *s, const uint64_t *pos);
static void log_sweep(const timer_filter *t, timer_sub *s, bool clear);
static void log_rebuild(const timer_filter *t, timer_sub *s);

/* ------------------------------------------------------------------ cells */

/* Ticks an epoch of the alive counts: ceil(S / EPOCHS_PER_SPAN). */
static inline uint64_t epoch_ticks(const timer_filter *t)
{
    return (t->timers.span_ticks + EPOCHS_PER_SPAN - 1) / EPOCHS_PER_SPAN;
}

static timer_now now_of(const timer_filter *t, uint64_t ms)
{
    timer_now w;
    w.n = ms / t->timers.tick;
    w.res = w.n % t->timers.period;
    w.epoch = w.n / epoch_ticks(t);
    return w;
}

/* ------------------------------------------------------------ alive counts */

/* Count `n` (0 or 1) more alive timers expiring at tick e, whose epoch j = e /
 * epoch_ticks the caller gives (sub_set sets k timers to one expiry and divides once).
 * Without branches, so that a caller may count 0 rather than test. */
static inline void count_add(timer_sub *s, uint64_t e, uint64_t j, const timer_now *w,
                             uint64_t n)
{
    uint64_t counted = n & (j > w->epoch);
    s->epochs[j % EPOCHS] += counted;
    s->alive += counted;
    s->max_expiry = n && e > s->max_expiry ? e : s->max_expiry;
}

/* Count `n` (0 or 1) fewer alive timers expiring at tick e; a count never goes below 0.
 * e = n(now) (a timer with no ticks left) counts nothing: its epoch is not after now's. */
static inline void count_remove(const timer_filter *t, timer_sub *s, uint64_t e,
                                const timer_now *w, uint64_t n)
{
    uint64_t j = e / epoch_ticks(t);
    uint64_t counted = n & (j > w->epoch);
    uint64_t *c = &s->epochs[j % EPOCHS];
    *c -= counted & (*c > 0);
    s->alive -= counted & (s->alive > 0);
}

/* `alive` once the tick has moved from epoch `from` to epoch `to`, without changing it. */
static uint64_t alive_after(const timer_sub *s, uint64_t from, uint64_t to)
{
    if (to - from >= EPOCHS)
        return 0;
    uint64_t alive = s->alive;
    for (uint64_t j = from + 1; j <= to; j++) {
        uint64_t c = s->epochs[j % EPOCHS];
        alive = alive > c ? alive - c : 0;
    }
    return alive;
}

static void epochs_pass(timer_sub *s, uint64_t from, uint64_t to)
{
    if (to - from >= EPOCHS) {
        memset(s->epochs, 0, sizeof s->epochs);
        s->alive = 0;
        return;
    }
    for (uint64_t j = from + 1; j <= to; j++) {
        uint64_t *c = &s->epochs[j % EPOCHS];
        s->alive = s->alive > *c ? s->alive - *c : 0;
        *c = 0;
    }
}

/* Recount a sub-filter's alive timers, clearing expired ones (after a load or a combine). */
static void sub_rebuild(const timer_filter *t, timer_sub *s)
{
    memset(s->epochs, 0, sizeof s->epochs);
    s->alive = 0;
    s->max_expiry = 0;
    s->dirty = false;
    for (uint64_t i = 0; i < t->cells; i++) {
        uint64_t v = once_timer_get(&t->timers, s->array, i);
        if (v == 0)
            continue;
        uint64_t left = once_timer_left(&t->timers, v, t->now.res);
        if (left == 0) {
            once_timer_put(&t->timers, s->array, i, 0);
            continue;
        }
        uint64_t e = t->now.n + left;
        count_add(s, e, e / epoch_ticks(t), &t->now, 1);
        s->dirty = true;
    }
    log_rebuild(t, s);
}

/* ------------------------------------------------------------------ probes */

static inline void probe_positions(const timer_filter *t, const once_hash *h, uint64_t *pos)
{
    once_probe p = once_probe_start(h, once_filter_probe(&t->base));
    for (uint32_t i = 0; i < t->hashes; i++)
        pos[i] = once_probe_next(&p, t->cells);
}

/* At least `need` of the k values are equal. */
static bool enough_equal(const uint64_t *v, uint32_t k, uint32_t need)
{
    for (uint32_t i = 0; i + need <= k; i++) {
        uint32_t same = 1;
        for (uint32_t j = i + 1; j < k && same < need; j++)
            same += v[j] == v[i];
        if (same >= need)
            return true;
    }
    return false;
}

/* Are the key's k timers of sub-filter s alive (and enough of them equal)?  Stops at
 * the first dead one: a write has requested its lines already (timer_write), and
 * reading every timer first measured no faster. */
static bool sub_holds(const timer_filter *t, const timer_sub *s, const uint64_t *pos,
                      uint64_t now_res)
{
    uint64_t values[ONCE_MAX_HASHES];
    for (uint32_t i = 0; i < t->hashes; i++) {
        uint64_t v = once_timer_get(&t->timers, s->array, pos[i]);
        if (!once_timer_alive(&t->timers, v, now_res))
            return false;
        values[i] = v;
    }
    return t->equal <= 1 || enough_equal(values, t->hashes, t->equal);
}

/* Newest first: recent keys are the likely duplicates. */
static bool holds_any(const timer_filter *t, const uint64_t *pos, uint64_t now_res)
{
    for (uint32_t i = t->count; i-- > 0;)
        if (sub_holds(t, &t->subs[i], pos, now_res))
            return true;
    return false;
}

/*
 * Set the key's timers to expiry tick e, keeping any later alive expiry.  Whether a
 * timer is empty, alive or later is a coin toss at the design fill, and a branch on it
 * mispredicts about once a timer, which costs more than the rest of a timer's work:
 * so each timer is decided without a branch.  Every timer is written back (with its
 * own value where it stays), and the counts move by 1 or 0, in the same order as
 * a timer-by-timer test would move them; a timer with no ticks left removes nothing
 * (count_remove of tick n(now)).  The counts are kept for dynamic filters only (see
 * the invariants): they cost more than the timers themselves.
 */
static void sub_set(const timer_filter *t, timer_sub *s, const uint64_t *pos, uint64_t e,
                    const timer_now *w)
{
    uint64_t want = e - w->n; /* in [1, S + 1] */
    uint64_t value = once_timer_value(&t->timers, e);
    uint64_t epoch = e / epoch_ticks(t);
    for (uint32_t i = 0; i < t->hashes; i++) {
        uint64_t v = once_timer_get(&t->timers, s->array, pos[i]);
        uint64_t left = once_timer_left(&t->timers, v, w->res);
        uint64_t set = (v != value) & (left < want);
        once_timer_put(&t->timers, s->array, pos[i], set ? value : v);
        if (t->dynamic) {
            count_remove(t, s, w->n + left, w, set);
            count_add(s, e, epoch, w, set);
        }
    }
    s->dirty = true;
    log_cells_set(t, s, pos);
}

/* ------------------------------------------------------------------ sweep */

/* The most cells the range sweep may owe ("Sweeping"): D = floor(m x / S) - 1 with
 * x = Q - 3S - 6, so that S (D + 1) / m <= x; below m. */
static uint64_t debt_max(const timer_filter *t)
{
    uint64_t q = t->timers.period, span = t->timers.span_ticks, m = t->cells;
    if (q <= 3 * span + 6)
        return 0;
    uint64_t x = q - 3 * span - 6;
    if (x >= span)
        return m - 1;
    /* floor(m x / S) without m x, which may pass 64 bits: m = aS + b, x < S < 2^32 */
    uint64_t most = m / span * x + m % span * x / span;
    return most == 0 ? 0 : most - 1;
}

/* Cells [from, from + cells) of the ring of m (cells <= m) swept in every sub-filter
 * that has no whole log. */
static void sweep_ring(timer_filter *t, uint64_t from, uint64_t cells)
{
    uint64_t to = from + cells; /* from < m and cells <= m, so to < 2m */
    for (uint32_t f = 0; f < t->count; f++) {
        timer_sub *s = &t->subs[f];
        if (!s->dirty || (s->logged && !s->log_lost))
            continue;
        if (to <= t->cells) {
            once_timers_sweep_range(&t->timers, s->array, from, to, t->now.res);
        } else {
            once_timers_sweep_range(&t->timers, s->array, from, t->cells, t->now.res);
            once_timers_sweep_range(&t->timers, s->array, 0, to - t->cells, t->now.res);
        }
    }
}

static void sweep(timer_filter *t, uint64_t advance)
{
    uint64_t cells = once_timers_sweep_due(t->cells, t->timers.span, advance, &t->credit);
    if (cells == 0)
        return;
    /* The logs, every non-zero cell of their sub-filters, are visited once 7/8 of a span's
     * cells are owed (cells <= m < 2^40, so the product fits). */
    uint64_t share = (cells * LOG_DUE_SPAN + t->cells - 1) / t->cells;
    bool logs = t->log_due + share >= LOG_DUE_SPAN / 8 * 7;
    t->log_due = logs ? 0 : t->log_due + (uint32_t)share;
    for (uint32_t f = 0; logs && f < t->count; f++) {
        timer_sub *s = &t->subs[f];
        if (s->dirty && s->logged && !s->log_lost)
            log_sweep(t, s, false);
    }
    /* The range: what this advance owes and what earlier ones left, from where the sweep
     * stands (debt cells behind the cursor); a step of it, and all that passes the
     * debt's bound. */
    uint64_t from = t->cursor >= t->debt ? t->cursor - t->debt : t->cursor + t->cells - t->debt;
    uint64_t owed = t->debt + cells;
    t->cursor = t->cursor + cells >= t->cells ? t->cursor + cells - t->cells : t->cursor + cells;
    if (owed >= t->cells) { /* a whole round owed: one sweep of everything */
        sweep_ring(t, 0, t->cells);
        t->debt = 0;
        return;
    }
    uint64_t step = t->cells / PACE_SHARE / t->count;
    step = step < PACE_MIN_STEP ? PACE_MIN_STEP : step > PACE_MAX_STEP ? PACE_MAX_STEP : step;
    uint64_t bound = debt_max(t), over = owed > bound ? owed - bound : 0;
    uint64_t pay = owed <= step ? owed : over > step ? over : step;
    sweep_ring(t, from, pay);
    t->debt = owed - pay;
}

static void sub_wipe(const timer_filter *t, timer_sub *s)
{
    if (s->dirty && s->logged && !s->log_lost)
        log_sweep(t, s, true);
    else if (s->dirty)
        memset(s->array, 0, (size_t)(t->words * 8));
    s->log_count = 0;
    s->log_lost = false;
    memset(s->epochs, 0, sizeof s->epochs);
    s->alive = 0;
    s->dirty = false;
}

/* Sub-filters other than the newest whose every timer has expired at tick n. */
static bool sub_droppable(const timer_filter *t, uint32_t i, uint64_t n)
{
    return i + 1 < t->count && t->subs[i].max_expiry <= n;
}

static void drop_expired(timer_filter *t, uint64_t n)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        if (sub_droppable(t, i, n)) {
            once_words_free(t->subs[i].array);
            continue;
        }
        if (kept != i)
            t->subs[kept] = t->subs[i];
        kept++;
    }
    t->count = kept;
}

/* The structure's memory (once_bytes without the metadata) with a table of `room`
 * entries holding `filters` sub-filters of `words` words. */
static uint64_t memory_for(uint64_t words, uint64_t room, uint64_t filters)
{
    return once_table_memory(sizeof(timer_filter), room, sizeof(timer_sub),
                             filters * once_words_memory(words));
}

/* The cells a sub-filter's log of a filter of t's cells holds (0: none). */
static uint64_t log_cells(const timer_filter *t)
{
    uint64_t cells = t->cells / LOG_SHARE < LOG_MAX ? t->cells / LOG_SHARE : LOG_MAX;
    return cells < LOG_MIN ? 0 : cells;
}

/* What a sub-filter's log adds to its array's cost. */
static uint64_t log_bytes(const timer_filter *t)
{
    uint64_t cells = log_cells(t);
    return cells ? once_words_memory(t->words + cells) - once_words_memory(t->words) : 0;
}

/* The logs of the sub-filters that have one. */
static uint64_t logs_bytes(const timer_filter *t)
{
    uint64_t logged = 0;
    for (uint32_t i = 0; i < t->count; i++)
        logged += t->subs[i].logged;
    return logged * log_bytes(t);
}

/* Do `filters` sub-filters fit under the cap with a log each? */
static bool logs_fit(const timer_filter *t, uint64_t filters)
{
    return memory_for(t->words, filters, filters) + filters * log_bytes(t) <= t->max_bytes;
}

/* An empty sub-filter's array, with its log when it has a log's worth of cells and
 * `room_for_log` (within the cap): the array, and *logged. */
static uint64_t *sub_array_alloc(const timer_filter *t, bool room_for_log, bool *logged)
{
    uint64_t cells = room_for_log ? log_cells(t) : 0;
    uint64_t *array = once_words_alloc(t->words + cells);
    *logged = array != NULL && cells != 0;
    return array;
}

static uint64_t *log_of(const timer_filter *t, timer_sub *s)
{
    return s->array + t->words;
}

/* The cells an insertion set, into the log.  A full log is swept first (its cells are
 * then visited now, as a lost log's must be: "Sweeping"); it is lost when that leaves
 * it more than half full. */
static void log_cells_set(const timer_filter *t, timer_sub *s, const uint64_t *pos)
{
    if (!s->logged || s->log_lost)
        return;
    if (s->log_count + t->hashes > log_cells(t)) {
        log_sweep(t, s, false);
        s->dirty = true; /* the insertion's cells, not yet logged */
        if (s->log_count + t->hashes > log_cells(t) / 2) {
            s->log_lost = true;
            return;
        }
    }
    memcpy(log_of(t, s) + s->log_count, pos, t->hashes * sizeof *pos);
    s->log_count += t->hashes;
}

/* A sweep of the logged cells alone (every non-zero cell is one): the expired cleared,
 * or every one with `clear`; the log keeps the others, once each, and a sub-filter
 * left with none is clean. */
static void log_sweep(const timer_filter *t, timer_sub *s, bool clear)
{
    uint64_t *log = log_of(t, s);
    /* A cell set again while alive (a refresh, two keys') is logged again: the copies
     * are dropped once they fill half the log, not at every visit (a sort of the log at
     * each visit was most of a sparse stream's time). */
    bool unique = 2 * (uint64_t)s->log_count > log_cells(t);
    if (unique)
        once_words_sort(log, s->log_count);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < s->log_count; i++) {
        /* The cells lie anywhere in m: their lines are requested LOG_AHEAD visits ahead, so
         * that the misses overlap rather than follow one another. */
        if (i + LOG_AHEAD < s->log_count)
            once_prefetch_write(&s->array[log[i + LOG_AHEAD] >> t->timers.shift]);
        uint64_t c = log[i];
        if (unique && kept > 0 && log[kept - 1] == c)
            continue;
        uint64_t v = once_timer_get(&t->timers, s->array, c);
        if (v != 0 && (clear || once_timer_left(&t->timers, v, t->now.res) == 0)) {
            once_timer_put(&t->timers, s->array, c, 0);
            v = 0;
        }
        if (v != 0)
            log[kept++] = c;
    }
    s->log_count = kept;
    s->dirty = kept != 0;
}

/* The log of a sub-filter whose cells were written otherwise (a combine, a load): its
 * non-zero cells, by a scan, or lost when they do not fit. */
static void log_rebuild(const timer_filter *t, timer_sub *s)
{
    if (!s->logged)
        return;
    s->log_count = 0;
    s->log_lost = false;
    uint64_t room = log_cells(t), *log = log_of(t, s);
    for (uint64_t i = 0; i < t->cells && !s->log_lost; i++)
        if (once_timer_get(&t->timers, s->array, i) != 0) {
            s->log_lost = s->log_count == room;
            if (!s->log_lost)
                log[s->log_count++] = i;
        }
}

/* Give back the table entries past the sub-filters in use, so that memory follows the
 * sub-filters down (a failure keeps them, still counted in room). */
static void fit_subs(timer_filter *t)
{
    once_table_fit((void **)&t->subs, &t->room, t->count, sizeof *t->subs);
}

/* ------------------------------------------------------------------ writes */

/* Move the clock from `before` to `latest` (tick state w, an advance of `advance` ms):
 * drop the sub-filters that expired, and wipe everything or sweep. */
static void clock_move(timer_filter *t, uint64_t latest, timer_now before, timer_now w,
                       uint64_t advance, bool wipe)
{
    t->latest = latest;
    t->started = true;
    t->now = w;
    drop_expired(t, w.n);
    if (advance) {
        if (wipe) {
            for (uint32_t i = 0; i < t->count; i++)
                sub_wipe(t, &t->subs[i]);
            t->credit = 0;
            t->debt = 0;
        } else {
            for (uint32_t i = 0; t->dynamic && i < t->count; i++)
                epochs_pass(&t->subs[i], before.epoch, w.epoch);
            sweep(t, advance);
        }
    }
}

/* Alive timers at which a sub-filter of m cells and k probes reaches rate p:
 * (z / m)^k = p, at least 1 and at most m. */
static uint64_t density_threshold(uint64_t cells, uint32_t hashes, double p)
{
    double z = ceil((double)cells * pow(p, 1.0 / hashes));
    return z < 1.0 ? 1 : z > (double)cells ? cells : (uint64_t)z;
}

/*
 * Budget growth: the threshold of a new sub-filter, the newest of `alive`, opened
 * after the one before it took `fill_ms` to fill.  Sub-filters that fill in f ms are
 * alive for f + T each, so (T + f) / f + 1 of them will be alive together: that count
 * is known as soon as one has filled, while `alive` only reaches it a span later.  The
 * share is the larger of the two (and at least 4), so the aims fall as soon as the rate
 * climbs, and the rates of the sub-filters opened before the climb are all that passes
 * the budget.
 */
static uint64_t budget_threshold(const timer_filter *t, uint32_t alive, uint64_t fill_ms)
{
    uint64_t coming = (t->timers.span + fill_ms) / (fill_ms ? fill_ms : 1) + 1;
    uint64_t share = alive > TIMER_SPLIT ? alive : TIMER_SPLIT;
    share = coming > share ? coming : share;
    share = share < TIMER_MAX_FILTERS ? share : TIMER_MAX_FILTERS;
    return density_threshold(t->cells, t->hashes, t->error / (2.0 * (double)share));
}

/* The key's k timers (its positions, the same in every sub-filter), those of the
 * newest sub-filter requested: for a write (read by the test, then written), or for a
 * query. */
static inline __attribute__((always_inline)) void
plan_positions(const timer_filter *t, const once_hash *h, uint64_t *pos, bool write)
{
    probe_positions(t, h, pos);
    const uint64_t *newest = t->subs[t->count - 1].array;
    for (uint32_t i = 0; i < t->hashes; i++) {
        if (write)
            once_prefetch_write(&newest[pos[i] >> t->timers.shift]);
        else
            once_prefetch_read(&newest[pos[i] >> t->timers.shift]);
    }
}

/* A write of the key at positions `pos` (plan_positions): the k timers of the newest
 * sub-filter are requested before any other work, so the time arithmetic and the sweep
 * below run while the lines arrive, and the test and the insertion find them at hand
 * (they branch on nothing, but a load that misses holds up all that follows it). */
static inline __attribute__((always_inline)) once_status
timer_write(timer_filter *t, const uint64_t *pos, uint64_t ms, bool test, bool *seen)
{
    if (!once_time_admissible(&t->base, t->latest, t->started, ms))
        return ONCE_ERR_TIME;

    uint64_t old = t->latest;
    bool first = !t->started;
    uint64_t latest = ms > old ? ms : old; /* a late event happens at the clock */
    ms = latest;
    uint64_t advance = latest - old;
    bool wipe = advance >= t->timers.span + t->timers.tick;
    timer_now before = t->now;
    timer_now w = advance ? now_of(t, latest) : before;
    uint64_t expiry = once_timer_expiry(&t->timers, ms);
    /* A static filter's write cannot fail from here on (it never grows), so its clock
     * moves now, also while the lines arrive.  That changes no answer: the sweep only
     * clears timers already expired at the new clock, which the test reads as dead
     * anyway.  A dynamic filter first decides its growth, which may fail and must then
     * change nothing. */
    if (!t->dynamic)
        clock_move(t, latest, before, w, advance, wipe);
    bool found = test && !wipe && holds_any(t, pos, w.res);
    bool insert = !found || t->policy == ONCE_POLICY_REFRESH;

    /* Decide growth before changing anything, so that a refusal leaves all as it was. */
    bool grow = false, fresh_logged = false;
    uint64_t *fresh = NULL;
    if (t->dynamic && insert && !wipe)
        grow = alive_after(&t->subs[t->count - 1], before.epoch, w.epoch) >= t->threshold;
    if (grow) {
        uint64_t after = 2; /* the newest and the new one */
        for (uint32_t i = 0; i + 1 < t->count; i++)
            after += !sub_droppable(t, i, w.n);
        /* The table grows to count + 1 entries before the expired ones leave it. */
        uint64_t bytes = memory_for(t->words, (uint64_t)t->count + 1, after) + logs_bytes(t);
        if (after > TIMER_MAX_FILTERS ||
            !once_fits_cap(bytes, t->base.metadata_len, t->max_bytes))
            return ONCE_ERR_FULL;
        fresh = sub_array_alloc(
            t, once_fits_cap(bytes + log_bytes(t), t->base.metadata_len, t->max_bytes),
            &fresh_logged);
        if (fresh == NULL)
            return ONCE_ERR_NOMEM;
        if (!once_table_reserve((void **)&t->subs, &t->room, t->count + 1, sizeof *t->subs, 1,
                                t->count + 1)) {
            once_words_free(fresh);
            return ONCE_ERR_NOMEM;
        }
    }

    if (t->dynamic)
        clock_move(t, latest, before, w, advance, wipe);
    if (grow) {
        timer_sub *s = &t->subs[t->count++];
        memset(s, 0, sizeof *s);
        s->array = fresh;
        s->logged = fresh_logged;
    }
    fit_subs(t);
    if (grow && t->budget) {
        t->threshold = budget_threshold(t, t->count, latest - t->opened);
        t->opened = latest;
    } else if (first) {
        t->opened = latest; /* the first sub-filter opens with the first event */
    }
    if (insert)
        sub_set(t, &t->subs[t->count - 1], pos, expiry, &w);
    if (seen)
        *seen = found;
    return ONCE_OK;
}

static once_status timer_add(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    uint64_t pos[ONCE_MAX_HASHES];
    plan_positions(TIMER(f), h, pos, true);
    return timer_write(TIMER(f), pos, now_ms, false, NULL);
}

static once_status timer_test_and_add(once_filter *f, const once_hash *h, uint64_t now_ms,
                                      bool *seen)
{
    uint64_t pos[ONCE_MAX_HASHES];
    plan_positions(TIMER(f), h, pos, true);
    return timer_write(TIMER(f), pos, now_ms, true, seen);
}

/* Is the key at positions `pos` alive at now_ms (reads at max(L, now_ms))? */
static inline __attribute__((always_inline)) bool
query_positions(const timer_filter *t, const uint64_t *pos, uint64_t now_ms)
{
    uint64_t res = t->now.res;
    if (now_ms > t->latest) {
        if (now_ms - t->latest >= t->timers.span + t->timers.tick)
            return false; /* every expiry has passed: nothing can be alive */
        res = (now_ms / t->timers.tick) % t->timers.period;
    }
    return holds_any(t, pos, res);
}

/* Every line of the newest sub-filter (the only one of a fixed filter) is requested
 * before any is read, so that the misses overlap, as the standard filter's one-key
 * calls do (static/array_filter.h, once_array_cell_one). */
static bool timer_query(const once_filter *f, const once_hash *h, uint64_t now_ms)
{
    uint64_t pos[ONCE_MAX_HASHES];
    plan_positions(CTIMER(f), h, pos, false);
    return query_positions(CTIMER(f), pos, now_ms);
}

/*
 * Batches run once_batch_loop (core/batch_loop.h): a key's positions are computed once,
 * some keys ahead, and its newest sub-filter's lines requested; at its turn the key
 * is answered from them by the one-key operation's own code, at its own time, so a
 * batch answers exactly as the one-key calls in array order.  (A sub-filter that opens
 * or leaves in between makes a request miss, never an answer: the positions are the
 * same in every sub-filter.)
 */
typedef struct timer_record {
    uint64_t pos[ONCE_MAX_HASHES];
} timer_record;

static inline __attribute__((always_inline)) void
timer_batch_prepare(const void *ctx, void *record, const once_hash *h, once_batch_op op)
{
    plan_positions(ctx, h, ((timer_record *)record)->pos, op != ONCE_OP_QUERY);
}

static inline __attribute__((always_inline)) once_status
timer_batch_step(const void *ctx, void *record, uint64_t now_ms, once_batch_op op, bool *answer)
{
    timer_filter *t = (timer_filter *)ctx; /* the batch's own, writable filter */
    const uint64_t *pos = ((const timer_record *)record)->pos;
    if (op == ONCE_OP_QUERY) {
        *answer = query_positions(t, pos, now_ms);
        return ONCE_OK;
    }
    return timer_write(t, pos, now_ms, op == ONCE_OP_TEST_AND_ADD, answer);
}

ONCE_BATCH_LOOP_ENTRY(timer_batch, timer_record, ONCE_LINES_IN_FLIGHT / CTIMER(f)->hashes,
                      timer_batch_prepare, timer_batch_step)

/* ------------------------------------------------------------ whole filter */

static void timer_destroy(once_filter *f)
{
    timer_filter *t = TIMER(f);
    for (uint32_t i = 0; i < t->count; i++)
        once_words_free(t->subs[i].array);
    once_free_memory(t->subs);
    once_free_memory(t);
}

static void timer_clear(once_filter *f)
{
    timer_filter *t = TIMER(f);
    /* Back to one empty filter at time 0. */
    for (uint32_t i = 0; i + 1 < t->count; i++)
        once_words_free(t->subs[i].array);
    if (t->count > 1)
        t->subs[0] = t->subs[t->count - 1];
    t->count = 1;
    fit_subs(t);
    timer_sub *s = &t->subs[0];
    s->dirty = true;
    sub_wipe(t, s);
    s->max_expiry = 0;
    t->latest = 0;
    t->started = false;
    t->now = now_of(t, 0);
    t->cursor = 0;
    t->credit = 0;
    t->debt = 0;
    t->opened = 0;
    if (t->budget) /* the first sub-filter's, as created */
        t->threshold = density_threshold(t->cells, t->hashes, t->error / (2.0 * TIMER_SPLIT));
}

/* Can the next `keys` insertions be made with none refused (can_take in
 * core/structure.h)?  Only growth refuses, and a static filter never grows; a dynamic
 * one grows when its newest holds `threshold` alive timers, which an insertion raises
 * by at most k and time only lowers.  A round that may reach it: unsure. */
static bool timer_can_take(const once_filter *f, uint64_t keys, uint64_t until_ms)
{
    (void)until_ms;
    const timer_filter *t = CTIMER(f);
    if (!t->dynamic)
        return true;
    uint64_t alive = t->subs[t->count - 1].alive;
    return alive < t->threshold && keys <= (t->threshold - alive - 1) / t->hashes;
}

static bool timer_clock(const once_filter *f, uint64_t *latest)
{
    *latest = CTIMER(f)->latest;
    return CTIMER(f)->started;
}

/* Combining is offered for fixed-size filters of one geometry and span. */
static bool timer_same_geometry(const once_filter *x, const once_filter *y)
{
    const timer_filter *a = CTIMER(x), *b = CTIMER(y);
    return !a->dynamic && !b->dynamic && a->cells == b->cells && a->hashes == b->hashes &&
           a->timers.width == b->timers.width && a->timers.span == b->timers.span;
}

/* Ticks left of cell i of a filter at reference n (0: empty or expired). */
static uint64_t left_at(const timer_filter *t, uint64_t i, bool all_expired, uint64_t res)
{
    if (all_expired)
        return 0;
    return once_timer_left(&t->timers, once_timer_get(&t->timers, t->subs[0].array, i), res);
}

/*
 * Union: per cell the later of the two alive expiries; intersection: the earlier of
 * two alive ones, else empty.  Both are taken at R = the later of the two latest
 * times, which the result keeps (expired timers are dropped, so the result holds
 * only timers alive at R, like a freshly loaded filter).
 */
static once_status timer_combine(once_filter *dst, const once_filter *src, once_combine_op op)
{
    timer_filter *d = TIMER(dst);
    const timer_filter *s = CTIMER(src);
    uint64_t latest = d->latest > s->latest ? d->latest : s->latest;
    timer_now w = now_of(d, latest);
    bool d_gone = latest - d->latest >= d->timers.span + d->timers.tick;
    bool s_gone = latest - s->latest >= s->timers.span + s->timers.tick;
    for (uint64_t i = 0; i < d->cells; i++) {
        uint64_t a = left_at(d, i, d_gone, w.res), b = left_at(s, i, s_gone, w.res);
        uint64_t left;
        if (op == ONCE_COMBINE_UNION)
            left = a > b ? a : b;
        else
            left = a == 0 || b == 0 ? 0 : (a < b ? a : b);
        once_timer_put(&d->timers, d->subs[0].array, i,
                       left ? once_timer_value(&d->timers, w.n + left) : 0);
    }
    d->latest = latest;
    d->started = d->started || s->started;
    d->now = w;
    d->debt = 0; /* every cell rewritten: none expired is left */
    sub_rebuild(d, &d->subs[0]);
    return ONCE_OK;
}

/* Alive timers of a sub-filter at the tick residue `res` (a full scan). */
static uint64_t sub_alive_at(const timer_filter *t, const timer_sub *s, uint64_t res)
{
    if (!s->dirty)
        return 0;
    uint64_t alive = 0;
    for (uint64_t i = 0; i < t->cells; i++)
        alive += once_timer_left(&t->timers, once_timer_get(&t->timers, s->array, i), res) != 0;
    return alive;
}

static uint64_t sub_alive_exact(const timer_filter *t, const timer_sub *s)
{
    return sub_alive_at(t, s, t->now.res);
}

/*
 * Distinct keys alive at now_ms (delivered within the span before it).  The alive
 * timers of a sub-filter are exactly the standard filter of its alive keys (see the
 * design note), so Theorem 1 of paper 002 applies to their count with the standard
 * occupancy; a dynamic filter inserts each key into one sub-filter, so the count is
 * the sum over sub-filters, with each interval at 1 - (1 - c)/count so that all hold
 * together with probability c (union bound).
 */
typedef struct timer_alive_at {
    const timer_filter *t;
    uint64_t res;      /* tick residue of the reference time */
    bool all_expired;  /* nothing can be alive then */
} timer_alive_at;

static once_status timer_sub_cells(const void *ctx, uint32_t i, uint64_t *set, once_occupancy *o)
{
    const timer_alive_at *at = ctx;
    *set = at->all_expired ? 0 : sub_alive_at(at->t, &at->t->subs[i], at->res);
    return once_occupancy_for(o, at->t->cells, at->t->hashes, at->t->cells);
}

static once_status timer_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                     once_cardinality *out)
{
    const timer_filter *t = CTIMER(f);
    timer_alive_at at = {t, t->now.res, false};
    if (now_ms > t->latest) {
        at.all_expired = now_ms - t->latest >= t->timers.span + t->timers.tick;
        at.res = (now_ms / t->timers.tick) % t->timers.period;
    }
    return once_card_sum(t->count, timer_sub_cells, &at, confidence, out);
}

static double design_fpr(const timer_filter *t)
{
    if (t->plan_capacity == 0)
        return 0.0;
    double one = once_fpr_standard(t->cells, t->hashes, t->plan_capacity);
    return t->dynamic ? 1.0 - pow(1.0 - one, TIMER_SPLIT) : one;
}

static void timer_stats(const once_filter *f, once_stats *st)
{
    const timer_filter *t = CTIMER(f);
    /* Cells are timers (as counters are for the counting filter), so fill_ratio is
     * the share of alive timers.  Everything is as of the latest event time L. */
    st->bits = t->cells * t->count;
    st->bits_set = 0;
    double absent = 1.0; /* chance that no sub-filter matches an absent key */
    for (uint32_t i = 0; i < t->count; i++) {
        uint64_t alive = sub_alive_exact(t, &t->subs[i]);
        st->bits_set += alive;
        absent *= 1.0 - pow((double)alive / (double)t->cells, t->hashes);
    }
    st->hashes = t->hashes;
    st->fpr_estimate = 1.0 - absent;
    st->design_fpr = design_fpr(t);
    st->span_ms = t->timers.span;
    st->window = t->timers.span;
    st->slack = t->timers.tick;
    st->filters = t->count;
    st->sweep_owed = t->debt;
}

/* A fixed filter keeps one geometry for `plan_capacity` keys a span: it is overfull
 * once the keys alive, estimated from its alive timers under the standard occupancy
 * (as timer_cardinality estimates them), pass that.  A dynamic filter grows instead. */
static bool timer_overfull(const once_filter *f)
{
    const timer_filter *t = CTIMER(f);
    once_occupancy o;
    if (t->dynamic || t->plan_capacity == 0 ||
        once_occupancy_for(&o, t->cells, t->hashes, t->cells) != ONCE_OK)
        return false;
    double alive = (double)sub_alive_exact(t, &t->subs[0]);
    return once_card_inverse(&o, alive) > (double)t->plan_capacity;
}

static uint64_t timer_memory(const once_filter *f)
{
    return memory_for(CTIMER(f)->words, CTIMER(f)->room, CTIMER(f)->count) +
           logs_bytes(CTIMER(f));
}

static uint64_t timer_memory_cap(const once_filter *f)
{
    return CTIMER(f)->max_bytes;
}

static void timer_set_memory_cap(once_filter *f, uint64_t cap)
{
    TIMER(f)->max_bytes = once_cap_or_default(cap);
}

/* ------------------------------------------------------------ construction */

typedef struct timer_geometry {
    uint32_t width, hashes, equal, policy;
    bool dynamic, budget;
    uint64_t filters; /* sub-filters the logs must fit beside under the cap (0: 1) */
    uint64_t cells, span, plan_capacity, threshold, max_bytes;
    double sub_error;
} timer_geometry;

/* Build one empty filter of a checked geometry (ONCE_ERR_INVALID if it is not;
 * ONCE_ERR_TOO_LARGE if it passes the limits or its own memory cap, checked before
 * anything is allocated). */
static once_status timer_new(once_filter **out, const timer_geometry *g)
{
    if ((g->width != 8 && g->width != 16 && g->width != 32) || g->hashes == 0 ||
        g->hashes > ONCE_MAX_HASHES || g->cells == 0 || g->span == 0 ||
        g->span > TIMER_MAX_SPAN || g->equal > g->hashes || g->policy > ONCE_POLICY_REFRESH ||
        (g->dynamic && (g->threshold == 0 || g->threshold > g->cells)) || g->max_bytes == 0)
        return ONCE_ERR_INVALID;
    if (g->cells > ONCE_MAX_CELLS || g->cells * g->width > TIMER_MAX_CELL_BITS)
        return ONCE_ERR_TOO_LARGE;
    uint64_t words = once_words_for_bits(g->cells * g->width);
    if (memory_for(words, 1, 1) > g->max_bytes)
        return ONCE_ERR_TOO_LARGE;
    timer_filter *t = once_calloc(1, sizeof *t);
    if (t == NULL)
        return ONCE_ERR_NOMEM;
    once_filter_init(&t->base, &once_timer_ops);
    t->cells = g->cells;
    t->hashes = g->hashes;
    t->equal = g->equal;
    t->policy = g->policy;
    t->dynamic = g->dynamic;
    t->budget = g->dynamic && g->budget;
    t->words = words;
    t->timers = once_timers_make(g->span, g->width);
    t->plan_capacity = g->plan_capacity;
    t->sub_error = g->sub_error;
    t->error = t->budget ? g->sub_error * 2.0 * TIMER_SPLIT : 0.0;
    t->threshold = g->dynamic ? g->threshold : 0;
    t->max_bytes = g->max_bytes;
    t->now = now_of(t, 0);
    t->subs = once_calloc(1, sizeof *t->subs);
    if (t->subs == NULL) {
        once_free_memory(t);
        return ONCE_ERR_NOMEM;
    }
    t->room = 1;
    t->subs[0].array =
        sub_array_alloc(t, logs_fit(t, g->filters ? g->filters : 1), &t->subs[0].logged);
    if (t->subs[0].array == NULL) {
        once_free_memory(t->subs);
        once_free_memory(t);
        return ONCE_ERR_NOMEM;
    }
    t->count = 1;
    *out = &t->base;
    return ONCE_OK;
}

static once_status once_timer_create(once_filter **out, const once_config *c)
{
    timer_geometry g;
    memset(&g, 0, sizeof g);
    g.width = c->timer_bits ? c->timer_bits : 16;
    g.span = c->span_ms;
    g.policy = (uint32_t)c->policy;
    g.dynamic = c->dynamic;
    g.budget = c->dynamic;
    g.max_bytes = once_cap_or_default(c->max_bytes);
    if ((g.width != 8 && g.width != 16 && g.width != 32) || g.span == 0 ||
        g.span > TIMER_MAX_SPAN ||
        (c->policy != ONCE_POLICY_FIRST && c->policy != ONCE_POLICY_REFRESH))
        return ONCE_ERR_INVALID;
    if (g.dynamic && !(c->error > 0.0 && c->error < 1.0))
        return ONCE_ERR_INVALID;
    g.plan_capacity = g.dynamic ? c->capacity / TIMER_SPLIT + (c->capacity % TIMER_SPLIT != 0)
                                : c->capacity;
    g.sub_error = g.dynamic ? c->error / (2.0 * TIMER_SPLIT) : c->error;
    if (!(g.sub_error >= 0.0 && g.sub_error < 1.0))
        g.sub_error = 0.0; /* explicit geometry: the error is only recorded */
    g.cells = c->bits;
    g.hashes = c->hashes;
    if (g.cells == 0) {
        if (g.hashes != 0)
            return ONCE_ERR_INVALID; /* a probe count alone says nothing of the size */
        once_status st =
            once_plan(ONCE_STANDARD, g.plan_capacity, g.sub_error, &g.cells, &g.hashes);
        if (st != ONCE_OK)
            return st;
    } else if (g.hashes == 0) {
        if (g.plan_capacity == 0)
            return ONCE_ERR_INVALID;
        g.hashes = once_optimal_hashes(g.cells, g.plan_capacity);
    }
    if (g.hashes > ONCE_MAX_HASHES || c->equal_timers > g.hashes)
        return ONCE_ERR_INVALID;
    g.equal = c->equal_timers;
    if (g.dynamic) /* the first sub-filter, alone: error / 8, its plan */
        g.threshold = density_threshold(g.cells, g.hashes, c->error / (2.0 * TIMER_SPLIT));
    return timer_new(out, &g);
}

/* ---------------------------------------------------------- serialization */

/* Saved parameters, in order. */
enum {
    P_WIDTH,
    P_HASHES,
    P_CELLS,
    P_SPAN,
    P_TICK,
    P_EQUAL,
    P_POLICY,
    P_DYNAMIC,
    P_PLAN_CAPACITY,
    P_SUB_ERROR, /* IEEE-754 binary64 bits */
    P_THRESHOLD,
    P_MAX_BYTES,
    P_LATEST,
    P_CURSOR,
    P_CREDIT,
    P_FILTERS,
    P_STARTED,
    P_MAX_TIME_JUMP,
    P_OPENED, /* budget growth only: when the newest sub-filter opened, ms */
    P_COUNT
};
/* Filters without budget growth save the parameters before P_OPENED (their bytes are
 * those of the version that wrote them); budget growth always saves P_OPENED. */
#define P_COUNT_FIXED_OR_EVEN P_OPENED
/* States written before the clock's bound existed end at P_FILTERS; they load with no
 * bound, as they ran, and a clock started if it ever moved. */
#define P_COUNT_UNBOUNDED P_STARTED

static uint64_t timer_params_size(const once_filter *f)
{
    return (CTIMER(f)->budget ? P_COUNT : P_COUNT_FIXED_OR_EVEN) * 8;
}

static uint64_t timer_payload_size(const once_filter *f)
{
    return CTIMER(f)->words * 8 * CTIMER(f)->count;
}

static void timer_save_params(const once_filter *f, once_writer *w)
{
    const timer_filter *t = CTIMER(f);
    uint64_t error_bits;
    memcpy(&error_bits, &t->sub_error, sizeof error_bits);
    uint64_t v[P_COUNT] = {
        [P_WIDTH] = t->timers.width,
        [P_HASHES] = t->hashes,
        [P_CELLS] = t->cells,
        [P_SPAN] = t->timers.span,
        [P_TICK] = t->timers.tick,
        [P_EQUAL] = t->equal,
        [P_POLICY] = t->policy,
        [P_DYNAMIC] = t->budget ? 2 : t->dynamic, /* 1: even growth (older files) */
        [P_PLAN_CAPACITY] = t->plan_capacity,
        [P_SUB_ERROR] = error_bits,
        [P_THRESHOLD] = t->threshold,
        [P_MAX_BYTES] = t->max_bytes,
        [P_LATEST] = t->latest,
        [P_CURSOR] = t->cursor,
        [P_CREDIT] = t->credit,
        [P_FILTERS] = t->count,
        [P_STARTED] = t->started,
        [P_MAX_TIME_JUMP] = t->base.max_time_jump,
        [P_OPENED] = t->opened,
    };
    for (int i = 0; i < (t->budget ? P_COUNT : P_COUNT_FIXED_OR_EVEN); i++)
        once_writer_u64(w, v[i]);
}

/* The sub-filters oldest first, expired timers written as empty (canonical form). */
static void timer_save_payload(const once_filter *f, once_writer *w)
{
    const timer_filter *t = CTIMER(f);
    enum { CHUNK = 512 };
    uint64_t buffer[CHUNK];
    uint32_t per_word = 64 / t->timers.width;
    for (uint32_t s = 0; s < t->count; s++) {
        const uint64_t *a = t->subs[s].array;
        if (once_writer_skip(w, t->words * 8))
            continue; /* a whole sub-filter before the chunk a dump asks for */
        for (uint64_t at = 0; at < t->words; at += CHUNK) {
            uint64_t n = t->words - at < CHUNK ? t->words - at : CHUNK;
            if (once_writer_skip(w, n * 8))
                continue;
            for (uint64_t i = 0; i < n; i++) {
                uint64_t word = a[at + i];
                for (uint32_t c = 0; c < per_word && word != 0; c++) {
                    uint64_t v = (word >> (c * t->timers.width)) & t->timers.period;
                    if (v != 0 && once_timer_left(&t->timers, v, t->now.res) == 0)
                        word &= ~(t->timers.period << (c * t->timers.width));
                }
                buffer[i] = word;
            }
            once_writer_words(w, buffer, n);
        }
    }
}


static once_status timer_load(once_filter **out, const uint8_t *params, size_t params_len,
                              const uint8_t *payload, size_t payload_len)
{
    uint64_t v[P_COUNT];
    bool has_opened = false;
    if (once_read_params(params, params_len, v, P_COUNT_UNBOUNDED)) {
        v[P_STARTED] = v[P_LATEST] != 0;
        v[P_MAX_TIME_JUMP] = 0;
        v[P_OPENED] = 0;
    } else if (once_read_params(params, params_len, v, P_COUNT_FIXED_OR_EVEN)) {
        v[P_OPENED] = 0;
    } else if (once_read_params(params, params_len, v, P_COUNT)) {
        has_opened = true;
    } else {
        return ONCE_ERR_CORRUPT;
    }
    /* Budget growth (P_DYNAMIC 2) and its P_OPENED come together. */
    if ((v[P_DYNAMIC] == 2) != has_opened || v[P_OPENED] > v[P_LATEST])
        return ONCE_ERR_CORRUPT;
    double sub_error;
    memcpy(&sub_error, &v[P_SUB_ERROR], sizeof sub_error);
    /* Ranges first, so that the geometry arithmetic below cannot overflow. */
    if ((v[P_WIDTH] != 8 && v[P_WIDTH] != 16 && v[P_WIDTH] != 32) || v[P_HASHES] == 0 ||
        v[P_HASHES] > ONCE_MAX_HASHES || v[P_CELLS] == 0 || v[P_CELLS] > ONCE_MAX_CELLS ||
        v[P_CELLS] * v[P_WIDTH] > TIMER_MAX_CELL_BITS || v[P_SPAN] == 0 ||
        v[P_SPAN] > TIMER_MAX_SPAN ||
        v[P_TICK] != once_timers_tick_for(v[P_SPAN], (uint32_t)v[P_WIDTH]) ||
        v[P_EQUAL] > v[P_HASHES] || v[P_POLICY] > ONCE_POLICY_REFRESH || v[P_DYNAMIC] > 2 ||
        v[P_PLAN_CAPACITY] > ONCE_MAX_CELLS || !isfinite(sub_error) || sub_error < 0.0 ||
        sub_error >= 1.0 || (v[P_DYNAMIC] && sub_error == 0.0) ||
        (v[P_DYNAMIC] ? v[P_THRESHOLD] == 0 || v[P_THRESHOLD] > v[P_CELLS]
                      : v[P_THRESHOLD] != 0) ||
        v[P_MAX_BYTES] == 0 || v[P_LATEST] > ONCE_MAX_TIME_MS || v[P_CURSOR] >= v[P_CELLS] ||
        v[P_CREDIT] >= v[P_SPAN] || v[P_FILTERS] == 0 || v[P_FILTERS] > TIMER_MAX_FILTERS ||
        (!v[P_DYNAMIC] && v[P_FILTERS] != 1) || v[P_STARTED] > 1 ||
        (!v[P_STARTED] && v[P_LATEST] != 0) || v[P_MAX_TIME_JUMP] > ONCE_MAX_TIME_MS)
        return ONCE_ERR_CORRUPT;
    uint64_t words = once_words_for_bits(v[P_CELLS] * v[P_WIDTH]);
    if (payload_len != words * 8 * v[P_FILTERS])
        return ONCE_ERR_CORRUPT;

    timer_geometry g = {
        .width = (uint32_t)v[P_WIDTH],
        .hashes = (uint32_t)v[P_HASHES],
        .equal = (uint32_t)v[P_EQUAL],
        .policy = (uint32_t)v[P_POLICY],
        .dynamic = v[P_DYNAMIC] != 0,
        .budget = v[P_DYNAMIC] == 2,
        .cells = v[P_CELLS],
        .span = v[P_SPAN],
        .plan_capacity = v[P_PLAN_CAPACITY],
        .threshold = v[P_THRESHOLD],
        .max_bytes = v[P_MAX_BYTES],
        .sub_error = sub_error,
        .filters = v[P_FILTERS], /* logs for all of them, or none */
    };
    once_filter *f = NULL;
    once_status st = timer_new(&f, &g);
    if (st != ONCE_OK)
        return st == ONCE_ERR_INVALID || st == ONCE_ERR_TOO_LARGE ? ONCE_ERR_CORRUPT : st;
    timer_filter *t = TIMER(f);
    if (memory_for(t->words, v[P_FILTERS], v[P_FILTERS]) > t->max_bytes) { /* not our file */
        timer_destroy(f);
        return ONCE_ERR_CORRUPT;
    }
    timer_sub *subs = once_realloc(t->subs, (size_t)v[P_FILTERS] * sizeof *subs);
    if (subs == NULL) {
        timer_destroy(f);
        return ONCE_ERR_NOMEM;
    }
    t->subs = subs;
    t->room = (uint32_t)v[P_FILTERS];
    /* Logs as a filter that made its sub-filters under this cap took them (rebuilt from
     * the cells below, by sub_rebuild), the first's decided by timer_new; the file's
     * check above counts none. */
    for (uint32_t i = 1; i < v[P_FILTERS]; i++) {
        memset(&t->subs[i], 0, sizeof t->subs[i]);
        t->subs[i].array = sub_array_alloc(t, t->subs[0].logged, &t->subs[i].logged);
        if (t->subs[i].array == NULL) {
            timer_destroy(f);
            return ONCE_ERR_NOMEM;
        }
        t->count++;
    }
    t->latest = v[P_LATEST];
    t->started = v[P_STARTED] != 0;
    t->base.max_time_jump = v[P_MAX_TIME_JUMP];
    t->opened = v[P_OPENED];
    t->now = now_of(t, t->latest);
    t->cursor = v[P_CURSOR];
    t->credit = v[P_CREDIT];
    for (uint32_t i = 0; i < t->count; i++) {
        timer_sub *s = &t->subs[i];
        once_words_from_le(s->array, payload + (size_t)(i * t->words * 8), t->words);
        bool canonical = once_words_tail_clear(s->array, t->words, t->cells * t->timers.width);
        /* Every stored timer must be alive at L: a saved filter holds no other. */
        for (uint64_t c = 0; c < t->cells && canonical; c++) {
            uint64_t value = once_timer_get(&t->timers, s->array, c);
            canonical = value == 0 || once_timer_left(&t->timers, value, t->now.res) != 0;
        }
        if (!canonical) {
            timer_destroy(f);
            return ONCE_ERR_CORRUPT;
        }
        sub_rebuild(t, s);
    }
    *out = f;
    return ONCE_OK;
}

const once_filter_ops once_timer_ops = {
    .type = ONCE_TIMER,
    .create = once_timer_create,
    .explicit_geometry = once_bits_or_hashes_given,
    .destroy = timer_destroy,
    .query = timer_query,
    .add = timer_add,
    .test_and_add = timer_test_and_add,
    .prefetch = NULL,
    .batch = timer_batch,
    .remove = NULL,
    .clear = timer_clear,
    .same_geometry = timer_same_geometry,
    .combine = timer_combine,
    .stats = timer_stats,
    .cardinality = timer_cardinality,
    .overfull = timer_overfull,
    .memory = timer_memory,
    .memory_cap = timer_memory_cap,
    .set_memory_cap = timer_set_memory_cap,
    .saved_params_size = timer_params_size,
    .saved_payload_size = timer_payload_size,
    .save_params = timer_save_params,
    .save_payload = timer_save_payload,
    .load = timer_load,
    .clock = timer_clock,
    .can_take = timer_can_take,
};
