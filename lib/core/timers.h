/*
 * core/timers.h - arrays of packed timers: the cells of paper 000's sliding Bloom filter
 * (section 4), for every structure that keeps one (window/timer.c).
 *
 * Design
 *   A timer of W bits (8, 16 or 32) stores the absolute EXPIRY of the last key that
 *   set it, in wrapping tick units, packed 64 / W to a 64-bit word; "alive" compares
 *   it with the current tick, so that no timer is ever decremented (O(m) a tick).
 *   For a span T in ms: tick = ceil(T / 2^(W-2)) ms, S = ceil(T / tick) <= 2^(W-2)
 *   ticks a span, n(t) = floor(t / tick).  An event at t_u expires at tick
 *   e = ceil((t_u + T) / tick), rounded up so that a timer never expires early.  Ticks
 *   are kept modulo Q = 2^W - 1 and stored as (e mod Q) + 1, so the value 0 means
 *   empty (Q is also the cell mask).  A timer is alive at R iff it is non-zero and
 *   left = (value - 1 - n(R)) mod Q lies in [1, S + 1]; that is iff R < e * tick, as
 *   long as every stored expiry lies within S + 1 ticks of n(R) either way: the owner
 *   keeps that true by sweeping expired timers (once_timers_sweep_range) at the pace
 *   once_timers_sweep_due sets, before a stale value comes round the wrap (Q >= 4S - 1
 *   > 3S + 1).  window/timer.c states and proves the invariant for its clock.
 *
 * Invariants
 *   - S + 1 <= 2^(W-2) + 1 < Q / 3, so an alive window and its mirror never overlap;
 *   - a swept word keeps every alive timer and every lane outside the swept range.
 */
#ifndef ONCE_CORE_TIMERS_H
#define ONCE_CORE_TIMERS_H

#include <stdbool.h>
#include <stdint.h>

/* The geometry of a timer array: what a timer's bits mean. */
typedef struct once_timers {
    uint32_t width;      /* W */
    uint32_t shift;      /* log2(64 / W): cell -> word */
    uint64_t period;     /* Q = 2^W - 1, also the cell mask */
    uint64_t span;       /* T, ms */
    uint64_t tick;       /* ms */
    uint64_t span_ticks; /* S */
} once_timers;

/* The tick of timers of `width` bits over a span: T / 2^(W-2), rounded up. */
static inline uint64_t once_timers_tick_for(uint64_t span, uint32_t width)
{
    uint64_t per = UINT64_C(1) << (width - 2);
    return (span + per - 1) / per;
}

/* The geometry for `span` ms (> 0) and `width` (8, 16 or 32). */
static inline once_timers once_timers_make(uint64_t span, uint32_t width)
{
    once_timers g;
    g.width = width;
    g.shift = (uint32_t)__builtin_ctz(64 / width);
    g.period = (UINT64_C(1) << width) - 1;
    g.span = span;
    g.tick = once_timers_tick_for(span, width);
    g.span_ticks = (span + g.tick - 1) / g.tick;
    return g;
}

static inline uint64_t once_timer_get(const once_timers *g, const uint64_t *a, uint64_t i)
{
    uint32_t bit = (uint32_t)(i & ((UINT64_C(1) << g->shift) - 1)) * g->width;
    return (a[i >> g->shift] >> bit) & g->period;
}

static inline void once_timer_put(const once_timers *g, uint64_t *a, uint64_t i, uint64_t v)
{
    uint32_t bit = (uint32_t)(i & ((UINT64_C(1) << g->shift) - 1)) * g->width;
    uint64_t *w = &a[i >> g->shift];
    *w = (*w & ~(g->period << bit)) | (v << bit);
}

/* The stored value of expiry tick e. */
static inline uint64_t once_timer_value(const once_timers *g, uint64_t e)
{
    return e % g->period + 1;
}

/* The expiry tick of an event at `ms`: ceil((ms + T) / tick), without overflow. */
static inline uint64_t once_timer_expiry(const once_timers *g, uint64_t ms)
{
    return ms / g->tick + (ms % g->tick + g->span + g->tick - 1) / g->tick;
}

/* (value - 1 - now) mod Q, now_res = n(R) mod Q: the ticks a stored timer has left if
 * it is alive, that is if this lies in [1, S + 1].  An empty timer (0) gives r =
 * 2^64 - 1 and a result past S + 1, so it needs no test of its own, and the callers
 * stay free of branches on the timer's value. */
static inline uint64_t once_timer_ticks(const once_timers *g, uint64_t v, uint64_t now_res)
{
    uint64_t r = v - 1;
    return r >= now_res ? r - now_res : r + g->period - now_res;
}

/* Ticks until a stored timer expires, 0 if it is empty or expired. */
static inline uint64_t once_timer_left(const once_timers *g, uint64_t v, uint64_t now_res)
{
    uint64_t d = once_timer_ticks(g, v, now_res);
    return d <= g->span_ticks + 1 ? d : 0;
}

/* once_timer_left != 0, as one unsigned comparison: written so, it compiles to a flag,
 * not to the two branches that testing once_timer_left's result would give. */
static inline bool once_timer_alive(const once_timers *g, uint64_t v, uint64_t now_res)
{
    return once_timer_ticks(g, v, now_res) - 1 < g->span_ticks + 1;
}

/*
 * One word of W-bit timers with its expired ones cleared, without branches.  An empty
 * lane may be "cleared" too (that changes nothing), so the test is only the alive one:
 * left = (v - 1 - now) mod Q in [1, S + 1], computed as x = v + Q - 1 - now, which is
 * in [0, 2Q) and needs one conditional subtraction.
 */
static inline uint64_t once_timers_word_swept(uint64_t word, uint32_t width, uint64_t q,
                                              uint64_t now_res, uint64_t span_ticks)
{
    uint64_t out = word;
    for (uint32_t bit = 0; bit < 64; bit += width) {
        uint64_t v = (word >> bit) & q;
        uint64_t x = v + q - 1 - now_res;
        uint64_t left = x >= q ? x - q : x;
        uint64_t alive = left - 1 < span_ticks + 1;
        out &= ~((alive - 1) & (q << bit));
    }
    return out;
}

/*
 * Cells [from, to) with their expired timers cleared, a word at a time (from < to): the
 * words at the two ends keep the lanes outside the range.  A sweep covers m / T cells
 * a millisecond, a few words, so the ends are most of it: swept as words too, they
 * cost a word's arithmetic instead of a branchy loop over their cells.  `width` is a
 * constant in each caller (once_timers_sweep_range), so the lane loop unrolls.
 */
static inline __attribute__((always_inline)) void
once_timers_sweep_words(uint64_t *a, uint64_t from, uint64_t to, uint32_t shift,
                        uint32_t width, uint64_t q, uint64_t now_res, uint64_t span_ticks)
{
    uint64_t lanes = UINT64_C(1) << shift;
    uint64_t first = from >> shift, last = (to - 1) >> shift;
    for (uint64_t w = first; w <= last; w++) {
        if (!a[w])
            continue;
        /* The bits of the lanes before `from` (first word) and from `to` on (last). */
        uint64_t outside = 0;
        if (w == first)
            outside |= (UINT64_C(1) << ((from & (lanes - 1)) * width)) - 1;
        if (w == last && ((to & (lanes - 1)) != 0))
            outside |= ~((UINT64_C(1) << ((to & (lanes - 1)) * width)) - 1);
        a[w] &= once_timers_word_swept(a[w], width, q, now_res, span_ticks) | outside;
    }
}

/* Cells [from, to) of array `a` with their timers expired at tick residue now_res
 * cleared (nothing when from >= to). */
static inline void once_timers_sweep_range(const once_timers *g, uint64_t *a, uint64_t from,
                                           uint64_t to, uint64_t now_res)
{
    if (from >= to)
        return;
    switch (g->width) {
    case 8:
        once_timers_sweep_words(a, from, to, g->shift, 8, g->period, now_res, g->span_ticks);
        break;
    case 16:
        once_timers_sweep_words(a, from, to, g->shift, 16, g->period, now_res, g->span_ticks);
        break;
    default:
        once_timers_sweep_words(a, from, to, g->shift, 32, g->period, now_res, g->span_ticks);
        break;
    }
}

/*
 * How many of `cells` cells a clock advance of `advance` ms owes the sweep, at all of
 * them every `period` ms: (credit + cells * advance) / period, at most `cells`, with
 * the remainder kept in *credit (< period) for the next advance.  It fits 64 bits
 * unless the advance is huge; the 128-bit division (a library call) only then.
 */
static inline uint64_t once_timers_sweep_due(uint64_t cells, uint64_t period, uint64_t advance,
                                             uint64_t *credit)
{
    uint64_t owed;
    if (!__builtin_mul_overflow(cells, advance, &owed) &&
        !__builtin_add_overflow(owed, *credit, &owed)) {
        uint64_t due = owed / period;
        *credit = owed % period;
        return due >= cells ? cells : due;
    }
    unsigned __int128 total = (unsigned __int128)*credit + (unsigned __int128)cells * advance;
    unsigned __int128 due = total / period;
    *credit = (uint64_t)(total % period);
    return due >= cells ? cells : (uint64_t)due;
}

#endif /* ONCE_CORE_TIMERS_H */
