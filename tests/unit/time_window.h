/*
 * time_window.h - the streams every time window is held to (test_tlbf.c, test_tagged.c):
 * a checker of the no-false-negative promise on the filter's clock, streams of rate
 * phases, and a stream of words with bursts, drops and idle hours whose fresh words
 * are counted against the target rate.
 */
#ifndef ONCE_TESTS_TIME_WINDOW_H
#define ONCE_TESTS_TIME_WINDOW_H

#include "once.h"
#include "testing.h"

#include <math.h>

#define MINUTE (60 * 1000ull)
#define HOUR (60 * MINUTE)

/* The config of a time window of `type` (level: the TLBF's; the others ignore it). */
static inline once_config time_window_config(once_type type, uint64_t span, uint64_t capacity,
                                             double error, uint32_t level, uint64_t max_bytes,
                                             once_policy policy, uint64_t seed)
{
    once_config c = testing_config(type, seed);
    c.span_ms = span;
    c.capacity = capacity;
    c.error = error;
    c.level = level;
    c.max_bytes = max_bytes;
    c.policy = policy;
    return c;
}

/* That time window, made. */
static inline once_filter *time_window_make(once_type type, uint64_t span, uint64_t capacity,
                                            double error, uint32_t level, uint64_t max_bytes,
                                            once_policy policy, uint64_t seed)
{
    once_config c =
        time_window_config(type, span, capacity, error, level, max_bytes, policy, seed);
    return testing_create(&c);
}

/* A window saved mid-stream and loaded back (NULL if either fails), every cut of its
 * file refused on the way. */
static inline once_filter *time_window_saved_copy(const once_filter *a)
{
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(once_save_to_buffer(a, &buf, &len));
    once_filter *b = NULL;
    CHECK_OK(once_load(&b, buf, len));
    for (size_t cut = 0; cut < len; cut += 1 + cut / 5) {
        once_filter *x = NULL;
        CHECK(once_load(&x, buf, cut) != ONCE_OK);
    }
    once_free_buffer(buf);
    return b;
}

/*
 * A burst of new keys, one a millisecond, into a window capped at `cap` bytes, until
 * one is refused: it must be refused with ONCE_ERR_FULL, leave the filter as it was
 * (the same saved bytes), within its cap, and every key taken before it present.
 * Frees the filter.
 */
static inline void time_window_cap_refuses_and_keeps_state(once_filter *f, uint64_t cap,
                                                           uint64_t domain)
{
    once_status st = ONCE_OK;
    uint64_t i = 0, t = 0;
    void *before = NULL;
    size_t before_len = 0;
    for (; i < 2000000 && st == ONCE_OK; i++, t++) {
        once_free_buffer(before);
        before = NULL;
        CHECK_OK(once_save_to_buffer(f, &before, &before_len));
        testing_key k = testing_key_make(domain, i);
        bool seen;
        st = once_test_and_add(f, &k, sizeof k, t, &seen);
    }
    CHECK_STATUS(st, ONCE_ERR_FULL);
    void *after = NULL;
    size_t after_len = 0;
    CHECK_OK(once_save_to_buffer(f, &after, &after_len));
    CHECK(before_len == after_len && memcmp(before, after, after_len) == 0);
    CHECK(once_bytes(f) <= cap);
    uint64_t missing = 0;
    for (uint64_t j = 0; j + 1 < i; j++) {
        testing_key k = testing_key_make(domain, j);
        bool present = false;
        CHECK_OK(once_query(f, &k, sizeof k, t, &present));
        missing += !present;
    }
    CHECK(missing == 0);
    once_free_buffer(before);
    once_free_buffer(after);
    once_free(f);
}

/*
 * A stream: event e happens at time(e) with key id(e).  The checker keeps, per key, the
 * filter-clock time of its last insertion and asserts that a key inserted within the
 * last span is reported seen.  The filter's clock is the latest event time (a late or
 * backwards event is clamped to it), so that is what the checker uses too.
 */
typedef struct checker {
    uint64_t universe;
    uint64_t *inserted_at; /* filter time + 1 of the last insertion; 0 = never */
    uint64_t clock;
    uint64_t events, misses, delivered;
} checker;

static inline checker checker_make(uint64_t universe)
{
    checker c = {universe, calloc(universe, sizeof(uint64_t)), 0, 0, 0, 0};
    return c;
}

static inline void checker_event(checker *c, once_filter *f, uint64_t id, uint64_t t, uint64_t span,
                          once_policy policy)
{
    if (t > c->clock)
        c->clock = t;
    testing_key key = testing_key_make(77, id);
    bool seen = false;
    once_status st = once_test_and_add(f, &key, sizeof key, t, &seen);
    CHECK(st == ONCE_OK);
    uint64_t last = c->inserted_at[id];
    if (last != 0 && c->clock - (last - 1) <= span && !seen)
        c->misses++;
    if (!seen || policy == ONCE_POLICY_REFRESH)
        c->inserted_at[id] = c->clock + 1;
    c->delivered += !seen;
    c->events++;
}

static inline void checker_done(checker *c, const char *label)
{
    if (c->misses)
        fprintf(stderr, "%s: %" PRIu64 " false negatives in %" PRIu64 " events\n", label,
                c->misses, c->events);
    CHECK(c->misses == 0);
    CHECK(c->delivered > 0 && c->delivered < c->events);
    free(c->inserted_at);
}

/* Rates in events a minute over consecutive phases. */
typedef struct phase {
    uint64_t minutes;
    uint64_t per_minute;
} phase;

static inline void run_phases(once_type type, const phase *phases, int count, uint64_t universe,
                       int zipf_like, once_policy policy, uint64_t jitter_ms, const char *label)
{
    once_filter *f = time_window_make(type, HOUR, 20000, 0.001, 2, 0, policy, 5);
    if (f == NULL) {
        CHECK(0);
        return;
    }
    checker c = checker_make(universe);
    uint64_t t = 1000, state = 9;
    for (int p = 0; p < count; p++) {
        uint64_t step = MINUTE / phases[p].per_minute;
        for (uint64_t e = 0; e < phases[p].minutes * phases[p].per_minute; e++) {
            t += step;
            state = testing_mix(state);
            uint64_t id = zipf_like ? (state % 1000 < 300 ? state % 500 : state % universe)
                                    : state % universe;
            uint64_t when = t;
            if (jitter_ms) /* out of order: events arrive up to jitter late */
                when = t > jitter_ms ? t - (testing_mix(state) % jitter_ms) : t;
            checker_event(&c, f, id, when, HOUR, policy);
        }
    }
    checker_done(&c, label);
    once_free(f);
}

/*
 * A stream of words whose rate changes by phase, as a click or log stream does: cycles
 * of 400,000 events (150,000 at 1 ms apart, a 5x burst of 50,000 at 0.2 ms, a 25x drop
 * to 5 ms apart for 50,000, 150,000 at 1 ms again), each followed by an idle hour.
 * Half the events are new words, half are words seen before (any time before), so
 * after the idle hour almost every repeat is a word last delivered over an hour ago.
 * Span 60 s at target 0.001.  The checker keeps each word's delivery time on the
 * filter's clock and sorts each answer:
 *   - delivered within the span: must be seen (no false negatives);
 *   - never delivered, or delivered at least span + slack ago: new to the window, seen
 *     only as a false positive; the old ones are also counted apart for the 20,000
 *     events after an idle hour and for the drop phase.
 */
typedef struct phased_result {
    uint64_t misses;
    uint64_t fresh, fresh_seen; /* new to the window: never delivered, or span + slack ago */
    uint64_t after_gap, after_gap_seen;
    uint64_t in_drop, in_drop_seen;
} phased_result;

static inline phased_result run_phased_words(once_type type, uint64_t seed, int cycles)
{
    phased_result r;
    memset(&r, 0, sizeof r);
    const uint64_t span = MINUTE;
    once_filter *f = time_window_make(type, span, 60000, 0.001, 0, 0, ONCE_POLICY_FIRST, seed);
    if (f == NULL) {
        CHECK(0);
        return r;
    }
    uint64_t slack = testing_stats(f).slack;
    uint64_t words = (uint64_t)cycles * 400000;
    uint64_t *delivered_at = calloc(words, sizeof *delivered_at); /* clock + 1; 0 = never */
    uint64_t t = 1700000000000ull, clock = 0, state = seed, next = 0, fifth = 0;
    for (int cycle = 0; cycle < cycles; cycle++) {
        for (uint64_t e = 0; e < 400000; e++) {
            if (e < 150000 || e >= 250000)
                t += 1;
            else if (e < 200000)
                t += ++fifth % 5 == 0; /* five events a millisecond */
            else
                t += 5;
            state = testing_mix(state);
            uint64_t id = state % 2 == 0 || next == 0 ? next++ : testing_mix(state) % next;
            testing_key k = testing_key_make(seed, id);
            bool seen = false;
            CHECK_OK(once_test_and_add(f, &k, sizeof k, t, &seen));
            clock = t > clock ? t : clock;
            uint64_t at = delivered_at[id];
            if (at == 0) {
                r.fresh++;
                r.fresh_seen += seen;
            } else if (clock - (at - 1) < span) {
                r.misses += !seen;
            } else if (clock - (at - 1) >= span + slack) {
                r.fresh++;
                r.fresh_seen += seen;
                if (cycle > 0 && e < 20000) {
                    r.after_gap++;
                    r.after_gap_seen += seen;
                } else if (e >= 200000 && e < 250000) {
                    r.in_drop++;
                    r.in_drop_seen += seen;
                }
            }
            if (!seen)
                delivered_at[id] = clock + 1;
        }
        t += HOUR;
    }
    free(delivered_at);
    once_free(f);
    return r;
}

/* The rate seen / n, checked to be within `factor` times p plus three standard errors
 * (what and seed are named when it is not). */
static inline double checked_rate(const char *what, int seed, uint64_t seen, uint64_t n,
                           double factor, double p)
{
    double rate = n ? (double)seen / (double)n : 0.0;
    bool within = n > 0 && rate <= factor * p + 3.0 * sqrt(factor * p / (double)n);
    if (!within)
        fprintf(stderr, "seed %d: %s seen at %.5f\n", seed, what, rate);
    CHECK(within);
    return rate;
}

static inline int phased_seeds(void)
{
#ifdef ONCE_TESTS_SANITIZED
    return 4;
#else
    return 20;
#endif
}

/* One seed of the phased stream: no false negative; enough old words after the idle
 * hours and in the drops; those reported seen at most at the target p, and the words
 * new to the window at most at fresh_factor times it (0: not checked).  The rates, for
 * the worst over the seeds. */
typedef struct phased_rates {
    double after_gap, in_drop, fresh;
} phased_rates;

static inline phased_rates phased_checked(once_type type, uint64_t seed, int s, double p,
                                          double fresh_factor)
{
    phased_result r = run_phased_words(type, seed, 3);
    CHECK(r.misses == 0);
    CHECK(r.after_gap > 15000 && r.in_drop > 15000);
    phased_rates out = {
        checked_rate("after an idle hour, old words", s, r.after_gap_seen, r.after_gap, 1.0, p),
        checked_rate("after a 25x drop, old words", s, r.in_drop_seen, r.in_drop, 1.0, p),
        fresh_factor > 0 ? checked_rate("words new to the window", s, r.fresh_seen, r.fresh,
                                        fresh_factor, p)
                         : 0.0,
    };
    return out;
}

/* Key `key` of `domain` test-and-added at t into a filter and its twin (the same but for
 * what must change no answer): the same answer from both, and, with `delivered_at` (the
 * key's last delivery time, 0 for none), never a false negative inside the span, the
 * delivery recorded.  Returns the answer. */
static inline bool twin_seen(once_filter *a, once_filter *b, uint64_t domain, uint64_t key,
                             uint64_t t, uint64_t span, uint64_t *delivered_at)
{
    bool seen = testing_seen(a, domain, key, t);
    CHECK(seen == testing_seen(b, domain, key, t));
    if (delivered_at != NULL) {
        if (*delivered_at != 0 && t - *delivered_at < span)
            CHECK(seen); /* no false negative */
        if (!seen)
            *delivered_at = t;
    }
    return seen;
}

/* A copy of `a` loaded from its bytes, in place of `copy` (NULL at first), which is
 * first counted in *differ if it no longer saves as `a` does: the check of what must
 * change no saved byte (a debt, a carried pass), made over a stream of events. */
static inline once_filter *time_window_copy_again(const once_filter *a, once_filter *copy,
                                                  uint64_t *differ)
{
    if (copy != NULL) {
        *differ += !testing_same_save(a, copy);
        once_free(copy);
    }
    return testing_reload(a);
}

#endif /* ONCE_TESTS_TIME_WINDOW_H */
