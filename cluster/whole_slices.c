/*
 * cluster/whole_slices.c - a horizontal filter over a Redis Cluster whose slices are
 * whole filters (once_sliced.h, "Whole slices"; module/t_slice.c holds them).
 *
 * Design
 *   Paper 000's horizontal slicing (Definition 1) sends each key to one slice by a
 *   hash independent of the filter's own; the slice then answers the key alone, so it
 *   can be any filter of the library, not only bits: a tagged window keeps a key of a
 *   time window in about f + 5 bits where a slice of timers takes k timers of 8 to 32
 *   bits.  A key's slice is once_shard_of its digest under the layout's seed, the
 *   choice a sharded filter makes, so S whole slices of a structure answer a producer's
 *   stream as once_create_sharded's S shards of it (tests/cluster checks it).
 *
 *   A batch costs one message a slice it touches: the slice's events, digests and
 *   times, packed in one SLICE.TADD (slice/wire.c), every slice's sent together through
 *   the routing layer, which pipelines them by node.  Each slice runs its events in
 *   order, atomically, so two producers racing on a key meet at its slice and one of
 *   them finds it there: no claims, and no round more.
 *
 *   A slice that cannot answer (its node down past the routing layer's hold, NOSLICE
 *   after a restart without its data, an answer that does not decode) leaves its
 *   events undecided; the cluster filter applies its failure policy to them.
 *
 *   A count window's slices are tagged windows on the producers' shared count: the
 *   cluster filter test-and-adds a round, then stamps its new lines at their places
 *   (whole_slices_stamp: SLICE.STAMP, one message a slice again; cluster_filter.c,
 *   counted_batch).
 *
 * Backfill
 *   A line the policy printed is delivered, but its slice never saw it: once the slice
 *   answers again, a repeat would be new to it and come out again.  So with backfill
 *   on (the policy prints: whole_slices_set_backfill), the events of a failed slice's
 *   command are owed to it (a count window's by their stamps, sent as SLICE.STAMP),
 *   kept in order, and each later round sends a slice's owed events first, as a
 *   command of their own ahead of its round's (the routing layer keeps a node's
 *   commands in order); an answered one pays them.  Their verdicts are
 *   not used: those lines were decided.  A line the policy dropped is not owed: added
 *   to its slice it would never be delivered.  At most OWED_MAX events are owed over
 *   all slices (24 bytes each with their times, 16 MB); past that they are counted as
 *   given up, and a repeat of one may come out again.
 *
 * Invariants
 *   - every event of a batch is sent to exactly one slice, at most once a call;
 *   - events of one slice keep their order in its message, so a key's repeats within a
 *     batch are answered as one filter answers them in turn.
 */
#include "whole_slices.h"
#include "memory.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define ROUND_EVENTS 65536u /* events a round of messages carries at most */
#define OWED_MAX (1u << 20)  /* events owed to failed slices, over all slices */
#define NO_SLICE_ERROR "NOSLICE"

struct whole_slices {
    cluster_client *client;
    uint32_t count;
    uint64_t seed;
    bool timed;
    char **keys;
    whole_slice_info *info;
    /* A round's buffers, kept between calls. */
    size_t room;              /* events the per-event buffers hold */
    uint32_t *slice_of;       /* per event of the round */
    once_slice_event *unsorted, *events; /* in batch order; gathered by slice */
    uint32_t *start, *next;   /* count + 1 offsets into `events`; a cursor a slice */
    /* Commands: slot s for slice s's round, count + s for what it is owed. */
    uint8_t **wire;           /* per slot: its message */
    size_t *wire_room;
    bool *answered;           /* per slice */
    cluster_command *commands, *batch; /* per slot; those sent, in order */
    uint32_t *sent;           /* the slot of each sent command */
    const char **argv;        /* 3 a slot */
    size_t *argv_len;
    /* Backfill (above). */
    bool backfill;
    bool stamping;            /* a count window: owed events go as stamps */
    once_slice_event **owed;  /* per slice, oldest first */
    size_t *owed_count, *owed_room;
    size_t owed_total;
};

uint32_t whole_slices_count(const whole_slices *w)
{
    return w->count;
}

void whole_slices_info(const whole_slices *w, uint32_t slice, whole_slice_info *info)
{
    *info = w->info[slice];
}

void whole_slices_free(whole_slices *w)
{
    if (w == NULL)
        return;
    for (uint32_t i = 0; i < w->count; i++) {
        if (w->keys != NULL)
            once_free_memory(w->keys[i]);
        if (w->owed != NULL)
            once_free_memory(w->owed[i]);
    }
    for (size_t i = 0; w->wire != NULL && i < 2 * (size_t)w->count; i++)
        once_free_memory(w->wire[i]);
    once_free_memory(w->owed);
    once_free_memory(w->owed_count);
    once_free_memory(w->owed_room);
    once_free_memory(w->keys);
    once_free_memory(w->wire);
    once_free_memory(w->wire_room);
    once_free_memory(w->info);
    once_free_memory(w->slice_of);
    once_free_memory(w->unsorted);
    once_free_memory(w->events);
    once_free_memory(w->start);
    once_free_memory(w->next);
    once_free_memory(w->answered);
    once_free_memory(w->commands);
    once_free_memory(w->batch);
    once_free_memory(w->sent);
    once_free_memory(w->argv);
    once_free_memory(w->argv_len);
    once_free_memory(w);
}

whole_slices *whole_slices_new(cluster_client *client, const char *const *keys, uint32_t slices,
                               uint64_t seed, bool timed)
{
    whole_slices *w = once_calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->client = client;
    w->count = slices;
    w->seed = seed;
    w->timed = timed;
    w->keys = once_calloc(slices, sizeof *w->keys);
    size_t slots = 2 * (size_t)slices;
    w->wire = once_calloc(slots, sizeof *w->wire);
    w->wire_room = once_calloc(slots, sizeof *w->wire_room);
    w->info = once_calloc(slices, sizeof *w->info);
    w->start = once_calloc((size_t)slices + 1, sizeof *w->start);
    w->next = once_calloc((size_t)slices + 1, sizeof *w->next);
    w->answered = once_calloc(slices, sizeof *w->answered);
    w->commands = once_calloc(slots, sizeof *w->commands);
    w->batch = once_calloc(slots, sizeof *w->batch);
    w->sent = once_calloc(slots, sizeof *w->sent);
    w->argv = once_calloc(slots * 3, sizeof *w->argv);
    w->argv_len = once_calloc(slots * 3, sizeof *w->argv_len);
    w->owed = once_calloc(slices, sizeof *w->owed);
    w->owed_count = once_calloc(slices, sizeof *w->owed_count);
    w->owed_room = once_calloc(slices, sizeof *w->owed_room);
    bool ok = w->keys && w->wire && w->wire_room && w->info && w->start && w->next &&
              w->answered && w->commands && w->batch && w->sent && w->argv && w->argv_len &&
              w->owed && w->owed_count && w->owed_room;
    for (uint32_t i = 0; ok && i < slices; i++) {
        ok = (w->keys[i] = cluster_strdup(keys[i])) != NULL;
        w->info[i].node = -1;
    }
    if (!ok) {
        whole_slices_free(w);
        return NULL;
    }
    return w;
}

once_status whole_slices_reserve(whole_slices *w, once_type filter, uint64_t capacity,
                                 double error_rate, uint64_t span_ms, uint64_t lag_ms,
                                 char *error, size_t room)
{
    char cap[24], rate[32], seed[24], span[24], lag[24];
    snprintf(cap, sizeof cap, "%" PRIu64, capacity);
    snprintf(rate, sizeof rate, "%.17g", error_rate);
    snprintf(seed, sizeof seed, "%" PRIu64, w->seed);
    snprintf(span, sizeof span, "%" PRIu64, span_ms);
    snprintf(lag, sizeof lag, "%" PRIu64, lag_ms);
    const char *name = once_type_name(filter);
    enum { ARGS = 14 };
    cluster_command *commands = once_calloc(w->count, sizeof *commands);
    const char **argv = once_calloc((size_t)w->count * ARGS, sizeof *argv);
    size_t *lens = once_calloc((size_t)w->count * ARGS, sizeof *lens);
    if (commands == NULL || argv == NULL || lens == NULL) {
        once_free_memory(commands);
        once_free_memory(argv);
        once_free_memory(lens);
        snprintf(error, room, "out of memory");
        return ONCE_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < w->count; i++) {
        const char **a = argv + ARGS * (size_t)i;
        size_t *l = lens + ARGS * (size_t)i;
        int argc = 0;
        const char *words[] = {"SLICE.RESERVE", w->keys[i], "FILTER", name, "CAPACITY", cap,
                               "ERROR", rate, "SEED", seed, "SPAN", span, "LAG", lag};
        int n = span_ms == 0 ? 10 : lag_ms == 0 ? 12 : 14;
        for (; argc < n; argc++) {
            a[argc] = words[argc];
            l[argc] = strlen(words[argc]);
        }
        commands[i] = (cluster_command){.argc = argc, .argv = a, .argv_len = l, .key_index = 1};
    }
    cluster_client_run(w->client, commands, w->count);
    once_status st = ONCE_OK;
    for (uint32_t i = 0; i < w->count; i++) {
        redisReply *r = commands[i].reply;
        if (st == ONCE_OK && commands[i].status != CLUSTER_REPLIED) {
            snprintf(error, room, "cannot create slice %s: its node cannot be reached",
                     w->keys[i]);
            st = ONCE_ERR_UNAVAILABLE;
        } else if (st == ONCE_OK && (r == NULL || r->type == REDIS_REPLY_ERROR)) {
            snprintf(error, room, "cannot create slice %s: %s", w->keys[i],
                     r != NULL && r->str != NULL ? r->str : "no reply");
            st = ONCE_ERR_MISMATCH;
        }
        if (r != NULL)
            freeReplyObject(r);
    }
    once_free_memory(commands);
    once_free_memory(argv);
    once_free_memory(lens);
    return st;
}

/* Room for a round of n events. */
static bool round_room(whole_slices *w, size_t n)
{
    if (n <= w->room)
        return true;
    uint32_t *slice_of = once_realloc(w->slice_of, n * sizeof *slice_of);
    if (slice_of != NULL)
        w->slice_of = slice_of;
    once_slice_event *unsorted = once_realloc(w->unsorted, n * sizeof *unsorted);
    if (unsorted != NULL)
        w->unsorted = unsorted;
    once_slice_event *events = once_realloc(w->events, n * sizeof *events);
    if (events != NULL)
        w->events = events;
    if (slice_of == NULL || unsorted == NULL || events == NULL)
        return false;
    w->room = n;
    return true;
}

/* events[0 .. n-1] as the `command` (SLICE.TADD or SLICE.STAMP) of `slot` to slice
 * slot % count; false when memory runs out (its events then fail). */
static bool encode_events(whole_slices *w, uint32_t slot, const once_slice_event *events,
                          size_t n, const char *command)
{
    size_t need = once_slice_events_size(n, w->timed), len = 0;
    if (need > w->wire_room[slot]) {
        uint8_t *wire = once_realloc(w->wire[slot], need);
        if (wire == NULL)
            return false;
        w->wire[slot] = wire;
        w->wire_room[slot] = need;
    }
    if (once_slice_events_encode(events, n, w->timed, w->wire[slot], need, &len) != ONCE_OK)
        return false;
    const char **a = w->argv + 3 * (size_t)slot;
    size_t *l = w->argv_len + 3 * (size_t)slot;
    const char *key = w->keys[slot % w->count];
    a[0] = command;
    l[0] = strlen(command);
    a[1] = key;
    l[1] = strlen(key);
    a[2] = (const char *)w->wire[slot];
    l[2] = len;
    w->commands[slot] = (cluster_command){.argc = 3, .argv = a, .argv_len = l, .key_index = 1};
    return true;
}

void whole_slices_set_backfill(whole_slices *w, bool on)
{
    w->backfill = on;
}

void whole_slices_set_stamping(whole_slices *w, bool on)
{
    w->stamping = on;
}

/* The events of slice i's failed command, owed to it (as many as OWED_MAX leaves). */
static void owe(whole_slices *w, uint32_t i, const once_slice_event *events, size_t n)
{
    size_t take = OWED_MAX - w->owed_total < n ? OWED_MAX - w->owed_total : n;
    if (w->owed_count[i] + take > w->owed_room[i]) {
        size_t room = w->owed_room[i] ? 2 * w->owed_room[i] : 1024;
        while (room < w->owed_count[i] + take)
            room *= 2;
        once_slice_event *grown = once_realloc(w->owed[i], room * sizeof *grown);
        if (grown == NULL) {
            take = 0;
        } else {
            w->owed[i] = grown;
            w->owed_room[i] = room;
        }
    }
    memcpy(w->owed[i] + w->owed_count[i], events, take * sizeof *events);
    w->owed_count[i] += take;
    w->owed_total += take;
    w->info[i].owed = w->owed_count[i];
    w->info[i].given_up += n - take;
}

/* The answer to what slice i was owed: paid, or still owed. */
static void read_owed(whole_slices *w, uint32_t i, const cluster_command *c)
{
    whole_slice_info *info = &w->info[i];
    info->messages++;
    const redisReply *r = c->status == CLUSTER_REPLIED ? c->reply : NULL;
    size_t n = w->owed_count[i];
    if (r == NULL || r->type != REDIS_REPLY_STRING ||
        once_slice_verdicts_decode((const uint8_t *)r->str, r->len, w->owed[i], n,
                                   &info->held) != ONCE_OK)
        return;
    info->node = c->node;
    info->failed = false;
    info->backfilled += n;
    w->owed_total -= n;
    w->owed_count[i] = 0;
    info->owed = 0;
}

/* Slice i's answer into its events; false when there is none to read. */
static bool read_slice(whole_slices *w, uint32_t i, const cluster_command *c)
{
    whole_slice_info *info = &w->info[i];
    info->messages++;
    info->node = c->node;
    const redisReply *r = c->status == CLUSTER_REPLIED ? c->reply : NULL;
    size_t n = w->start[i + 1] - w->start[i];
    bool ok = r != NULL && r->type == REDIS_REPLY_STRING &&
              once_slice_verdicts_decode((const uint8_t *)r->str, r->len, w->events + w->start[i],
                                         n, &info->held) == ONCE_OK;
    if (r != NULL && r->type == REDIS_REPLY_ERROR && r->str != NULL &&
        strncmp(r->str, NO_SLICE_ERROR, strlen(NO_SLICE_ERROR)) == 0)
        info->missing++;
    info->falls += !ok && !info->failed;
    info->failed = !ok;
    info->failures += !ok;
    info->failed_events += ok ? 0 : n;
    return ok;
}

once_status whole_slices_worse(once_status now, once_status next)
{
    if (now == ONCE_ERR_UNAVAILABLE || next == ONCE_OK)
        return now;
    return next;
}

/* One round: n <= ROUND_EVENTS events, test-and-added, or with `stamp` stamped. */
static once_status run_round(whole_slices *w, const once_key *keys, size_t n, uint8_t *seen,
                             bool *decided, bool stamp)
{
    const char *command = stamp ? "SLICE.STAMP" : "SLICE.TADD";
    const char *owed_command = w->stamping ? "SLICE.STAMP" : "SLICE.TADD";
    /* A count window owes its lines' stamps: a line its test could not reach is owed
     * once the count gave it its place, by the stamp round. */
    bool owe_failed = w->backfill && (stamp || !w->stamping);
    if (!round_room(w, n))
        return ONCE_ERR_NOMEM;
    /* Each event's digest and slice, then the events gathered by slice (a stable
     * counting sort: a slice's events keep their batch order). */
    memset(w->start, 0, ((size_t)w->count + 1) * sizeof *w->start);
    for (size_t e = 0; e < n; e++) {
        once_digest d;
        once_digest_with_seed(w->seed, keys[e].data, keys[e].len, &d);
        w->slice_of[e] = once_shard_of(&d, w->count);
        w->start[w->slice_of[e] + 1]++;
        w->unsorted[e] =
            (once_slice_event){.digest = d, .time_ms = w->timed ? keys[e].time_ms : 0};
    }
    for (uint32_t s = 0; s < w->count; s++)
        w->start[s + 1] += w->start[s];
    memcpy(w->next, w->start, (size_t)w->count * sizeof *w->next);
    for (size_t e = 0; e < n; e++)
        w->events[w->next[w->slice_of[e]]++] = w->unsorted[e];
    /* One command a slice touched, all sent together; what a slice is owed ahead of
     * its round's. */
    uint32_t commands = 0;
    for (uint32_t s = 0; s < w->count; s++) {
        w->answered[s] = false;
        if (w->owed_count[s] != 0 &&
            encode_events(w, w->count + s, w->owed[s], w->owed_count[s], owed_command)) {
            w->batch[commands] = w->commands[w->count + s];
            w->sent[commands++] = w->count + s;
        }
        if (w->start[s + 1] == w->start[s])
            continue;
        w->info[s].events += w->start[s + 1] - w->start[s];
        if (encode_events(w, s, w->events + w->start[s], w->start[s + 1] - w->start[s],
                          command)) {
            w->batch[commands] = w->commands[s];
            w->sent[commands++] = s;
        }
    }
    cluster_client_run(w->client, w->batch, commands);
    for (uint32_t c = 0; c < commands; c++) {
        uint32_t slot = w->sent[c];
        if (slot >= w->count)
            read_owed(w, slot - w->count, &w->batch[c]);
        else
            w->answered[slot] = read_slice(w, slot, &w->batch[c]);
        if (w->batch[c].reply != NULL)
            freeReplyObject(w->batch[c].reply);
    }
    for (uint32_t s = 0; owe_failed && s < w->count; s++)
        if (!w->answered[s] && w->start[s + 1] > w->start[s])
            owe(w, s, w->events + w->start[s], w->start[s + 1] - w->start[s]);
    /* The answers back in the batch's order. */
    once_status st = ONCE_OK;
    memcpy(w->next, w->start, (size_t)w->count * sizeof *w->next);
    for (size_t e = 0; e < n; e++) {
        uint32_t s = w->slice_of[e];
        const once_slice_event *ev = &w->events[w->next[s]++];
        decided[e] = w->answered[s] && ev->status == ONCE_OK;
        seen[e] = decided[e] && ev->seen;
        if (!w->answered[s])
            st = whole_slices_worse(st, ONCE_ERR_UNAVAILABLE);
        else if (ev->status != ONCE_OK)
            st = whole_slices_worse(st, ev->status);
    }
    return st;
}

static once_status run_rounds(whole_slices *w, const once_key *keys, size_t count,
                              uint8_t *seen, bool *decided, bool stamp)
{
    once_status st = ONCE_OK;
    for (size_t at = 0; at < count; at += ROUND_EVENTS) {
        size_t n = count - at < ROUND_EVENTS ? count - at : ROUND_EVENTS;
        once_status round = run_round(w, keys + at, n, seen + at, decided + at, stamp);
        if (round == ONCE_ERR_NOMEM)
            return round;
        st = whole_slices_worse(st, round);
    }
    return st;
}

once_status whole_slices_batch(whole_slices *w, const once_key *keys, size_t count, uint8_t *seen,
                               bool *decided)
{
    return run_rounds(w, keys, count, seen, decided, false);
}

once_status whole_slices_stamp(whole_slices *w, const once_key *keys, size_t count,
                               uint8_t *scratch, bool *decided)
{
    return run_rounds(w, keys, count, scratch, decided, true);
}

void whole_slices_flush(whole_slices *w)
{
    bool owed = false;
    for (uint32_t s = 0; s < w->count; s++)
        owed |= w->owed_count[s] != 0;
    if (owed) /* a round of no events sends only what the slices are owed */
        run_round(w, NULL, 0, NULL, NULL, false);
}
