/*
 * once-span-bench: a time window of one span, as `once --span` keeps it, on a virtual
 * clock: what it costs in memory, how late it forgets, and its false positives, with
 * the keys spread over the span and with the keys in a burst at its start.
 *
 *   once-span-bench [KEYS [SPAN_SECONDS [TYPE...]]]   (default 1e6 3600 tagged tlbf timer)
 *
 * For each structure (error 0.001, the CLI's level 2 for the TLBF), three streams of
 * KEYS distinct keys a span:
 *   - spread (capacity KEYS a span): one every SPAN / KEYS over the first span, then
 *     new ones at that rate for two spans more.  Bits a key at the end of the first
 *     span (KEYS keys in it) and of the third (the steady state).  The slack: 2,000
 *     keys of the first span are queried every SPAN / 120 after it; a key's slack is
 *     how long after its time + SPAN it was still reported present (the 99th
 *     percentile, past which a false positive weighs as much as the slack, and the
 *     mean, as fractions of the span, to SPAN / 120; "never forgotten", still present
 *     after 3 spans, a false positive or a slack past 2 spans; a key inside its span
 *     reported absent is a false negative, unless it was reported seen when added: a
 *     false positive, never delivered).
 *   - burst (capacity KEYS): the KEYS keys in the first 10 s, then nothing until SPAN,
 *     then the spread rate for a span.  Bits a key at the end of the burst (the peak),
 *     and a span after it ended.
 *   - spread with a capacity of KEYS / 100: the first guess a hundred times too small,
 *     which the structure must grow from (and, for the steady figure, settle).
 * False positives: 10^5 keys never added, queried at the end of each stream, against
 * the 0.001 asked.  Every time is injected; nothing sleeps.
 */
#include "once.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERROR_RATE 0.001
#define SAMPLE 2000u
#define PROBES 100000u
#define CHECKS 120u

static uint64_t mix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* Key i of stream `domain`: 16 bytes. */
typedef struct key16 {
    uint64_t w[2];
} key16;

static key16 key_of(uint64_t domain, uint64_t i)
{
    return (key16){{mix(domain * UINT64_C(0x100000001b3) ^ i), domain}};
}

static void die(const char *what, once_status st)
{
    fprintf(stderr, "once-span-bench: %s: %s\n", what, once_strerror(st));
    exit(1);
}

static once_filter *make(once_type type, uint64_t capacity, uint64_t span_ms)
{
    once_config c;
    once_config_init(&c, type);
    c.capacity = capacity;
    c.error = ERROR_RATE;
    c.span_ms = span_ms;
    c.level = 2;
    c.seed = 7;
    c.seed_is_set = true;
    once_filter *f = NULL;
    once_status st = once_create(&f, &c);
    if (st != ONCE_OK)
        die("create", st);
    return f;
}

/* Test-and-add key i of `domain` at t: was it reported seen? */
static bool add(once_filter *f, uint64_t domain, uint64_t i, uint64_t t)
{
    key16 k = key_of(domain, i);
    bool seen = false;
    once_status st = once_test_and_add(f, &k, sizeof k, t, &seen);
    if (st != ONCE_OK)
        die("test_and_add", st);
    return seen;
}

static double false_positives(const once_filter *f, uint64_t t)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < PROBES; i++) {
        key16 k = key_of(999, i);
        bool present = false;
        once_status st = once_query(f, &k, sizeof k, t, &present);
        if (st != ONCE_OK)
            die("query", st);
        hits += present;
    }
    return (double)hits / PROBES;
}

static double bits_a_key(const once_filter *f, uint64_t keys)
{
    return 8.0 * (double)once_bytes(f) / (double)keys;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The spread stream, the filter built for `capacity` keys a span (KEYS, or a guess a
 * hundred times too small, which the structure must grow from and settle). */
static void spread(once_type type, uint64_t keys, uint64_t span_ms, uint64_t capacity,
                   const char *label)
{
    once_filter *f = make(type, capacity, span_ms);
    bool *dropped = calloc(SAMPLE, sizeof *dropped); /* reported seen when added: a false
                                                        positive, never delivered */
    if (dropped == NULL)
        die("sample", ONCE_ERR_NOMEM);
    for (uint64_t i = 0, s = 0; i < keys; i++) {
        bool seen = add(f, 1, i, i * span_ms / keys);
        if (s < SAMPLE && i == s * keys / SAMPLE)
            dropped[s++] = seen;
    }
    double first = bits_a_key(f, keys);
    /* Two spans more: new keys at the same rate, the sample checked as they go. */
    uint64_t *forgotten = calloc(SAMPLE, sizeof *forgotten); /* time + 1, 0: not yet */
    uint64_t false_negatives = 0, next_check = 1;
    if (forgotten == NULL)
        die("sample", ONCE_ERR_NOMEM);
    double steady = 0;
    for (uint64_t i = 0; i <= 2 * keys; i++) {
        uint64_t t = span_ms + i * span_ms / keys;
        if (i == 2 * keys || t >= span_ms + next_check * span_ms / CHECKS) {
            for (uint32_t s = 0; s < SAMPLE; s++) {
                if (forgotten[s] != 0)
                    continue;
                uint64_t j = (uint64_t)s * keys / SAMPLE, born = j * span_ms / keys;
                key16 k = key_of(1, j);
                bool present = false;
                once_status st = once_query(f, &k, sizeof k, t, &present);
                if (st != ONCE_OK)
                    die("query", st);
                if (!present && t < born + span_ms && !dropped[s])
                    false_negatives++;
                if (!present)
                    forgotten[s] = t + 1;
            }
            next_check++;
        }
        if (i < 2 * keys)
            add(f, 2, i, t);
    }
    steady = bits_a_key(f, keys);
    double fp = false_positives(f, 3 * span_ms);
    double slack[SAMPLE], sum = 0;
    uint32_t never = 0;
    for (uint32_t s = 0; s < SAMPLE; s++) {
        uint64_t j = (uint64_t)s * keys / SAMPLE, born = j * span_ms / keys;
        uint64_t gone = forgotten[s] ? forgotten[s] - 1 : 3 * span_ms;
        never += forgotten[s] == 0;
        slack[s] = gone > born + span_ms ? (double)(gone - born - span_ms) / span_ms : 0;
        sum += slack[s];
    }
    qsort(slack, SAMPLE, sizeof slack[0], by_value);
    double most = slack[SAMPLE * 99 / 100]; /* the 99th percentile: past it, false
                                               positives as much as slack */
    printf("| %s | %s | %.1f | %.1f | %.3f | %.3f | %.3f | %u | %" PRIu64 " | %.5f |\n",
           once_type_name(type), label, first, steady, most, slack[SAMPLE - 1], sum / SAMPLE, never,
           false_negatives, fp);
    free(forgotten);
    free(dropped);
    once_free(f);
}

static void burst(once_type type, uint64_t keys, uint64_t span_ms)
{
    once_filter *f = make(type, keys, span_ms);
    const uint64_t burst_ms = 10000;
    for (uint64_t i = 0; i < keys; i++)
        add(f, 3, i, i * burst_ms / keys);
    double peak = bits_a_key(f, keys), fp = false_positives(f, burst_ms);
    for (uint64_t i = 0; i < keys; i++)
        add(f, 4, i, span_ms + burst_ms + i * span_ms / keys);
    double after = bits_a_key(f, keys);
    printf("| %s | burst of 10 s | %.1f | %.1f (a span after) | | | | | | %.5f |\n",
           once_type_name(type), peak, after, fp);
    once_free(f);
}

int main(int argc, char **argv)
{
    uint64_t keys = argc > 1 ? (uint64_t)strtod(argv[1], NULL) : 1000000;
    uint64_t span_s = argc > 2 ? (uint64_t)strtod(argv[2], NULL) : 3600;
    if (keys < SAMPLE || span_s == 0) {
        fprintf(stderr, "usage: once-span-bench [KEYS >= %u [SPAN_SECONDS [TYPE...]]]\n",
                SAMPLE);
        return 2;
    }
    const char *defaults[] = {"tagged", "tlbf", "timer"};
    const char *const *types = argc > 3 ? (const char *const *)argv + 3 : defaults;
    int count = argc > 3 ? argc - 3 : 3;
    printf("%" PRIu64 " keys a span of %" PRIu64 " s, error %g\n\n", keys, span_s, ERROR_RATE);
    printf("| structure | stream | bits a key | bits a key, steady | slack p99 / span | "
           "slack max / span | slack mean / span | never forgotten | false negatives | "
           "false positives |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < count; i++) {
        once_type type;
        if (once_type_from_name(types[i], &type) != ONCE_OK) {
            fprintf(stderr, "once-span-bench: unknown structure '%s'\n", types[i]);
            return 2;
        }
        spread(type, keys, span_s * 1000, keys, "spread");
        burst(type, keys, span_s * 1000);
        spread(type, keys, span_s * 1000, keys / 100, "spread, capacity a 100th");
        fflush(stdout);
    }
    return 0;
}
