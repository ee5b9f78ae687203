/*
 * cluster/remote_site.c - a slice in a Redis Cluster as a site of a sliced filter
 * (once_sliced.h, "Sites"; module/t_slice.c holds the slice).
 *
 * Design
 *   A sliced filter runs a batch by starting every site it needs, then waiting for
 *   each (slice/sliced.c).  A remote site's start encodes its requests (slice/wire.c)
 *   as one SLICE.RUN command on its key and adds it to the round its filter's sites
 *   share; the first wait sends the whole round through the routing layer, which
 *   groups the commands by node and pipelines them, so every node works on its slices
 *   at once and a batch costs one message a slice and one round trip.  Each wait then
 *   reads its own answer.
 *
 *   Every answer also says what the slice holds (its cells set, whoever set them),
 *   which the site describes, so the filter's live estimates follow the slices' fill
 *   and not only this producer's events.
 *
 *   A command that comes back unreachable, with an error (NOSLICE: the node has no
 *   such slice, as after a restart without its data; any other error), or with an
 *   answer that does not decode, fails every request of its batch with
 *   ONCE_ERR_UNAVAILABLE: the sliced filter's failure policy decides those events,
 *   and its stats count the site as failed.
 *
 * Backfill
 *   An event the failure policy printed is delivered, but the failed slice never set
 *   its positions there: once the slice answers again, a repeat would find them unset
 *   and come out again.  The policy's printed events are exactly those whose sets
 *   (SET and TEST_AND_SET requests: a batch's second round under claims, or its only
 *   round without) went out; an event it dropped sends none (slice/sliced.c, "Claims
 *   over a batch").  So with backfill on (remote_round_set_backfill: the policy can
 *   print), the sets of a failed command are owed to its site, kept in order with
 *   their times, and the site's next command is preceded by one of what it owes, as
 *   SETs (the routing layer keeps a node's commands in order); an answer pays them.
 *   A slice that answers them with an error (a time it no longer keeps; NOSLICE, a
 *   node restarted without it) would refuse them again: they are given up.  Tests,
 *   claims and releases are never owed: a claim is held only for its batch.  At most
 *   OWED_POSITIONS_MAX positions are owed over the round's sites (8 bytes each, 16 MB);
 *   past that the requests are counted as given up, and a repeat of one may come out
 *   again.
 *
 * Invariants
 *   - a round holds at most two commands a site, what it owes first, then its batch:
 *     the filter starts a site again only after waiting for it;
 *   - every command is sent once, by the first wait after its start (with every command
 *     started before it and not yet sent), and the round is emptied when the last of
 *     its sites has waited; a site's replies are freed by its wait.
 */
#include "remote_site.h"
#include "memory.h"

#include <stdlib.h>
#include <string.h>

#define OWED_POSITIONS_MAX (1u << 21) /* positions owed over a round's sites */

typedef struct remote_site remote_site;

struct remote_round {
    cluster_client *client;
    cluster_command *commands;
    size_t count, room, waiting;
    size_t sent; /* commands [0, sent) have been sent */
    bool backfill;
    size_t owed_positions; /* over its sites */
};

/* A set owed to a site: `count` positions from `first` of the site's owed positions. */
typedef struct owed_set {
    size_t first;
    uint32_t count;
    uint64_t time_ms;
} owed_set;

/* What a site owes (Backfill), oldest first, and the command that pays it. */
typedef struct owed_sets {
    owed_set *sets;
    size_t count, room;
    uint64_t *positions;
    size_t positions_count, positions_room;
    once_site_request *requests; /* the command's, made from `sets` when sent */
    size_t requests_room, sent;  /* sent: the sets the command carries */
    uint8_t *wire;
    size_t wire_len, wire_room;
    const char *argv[3];
    size_t argv_len[3];
    size_t command; /* its index in the round, SIZE_MAX when none */
} owed_sets;

struct remote_site {
    remote_round *round;
    char *key;
    size_t key_len;
    bool timed;
    once_site_request *requests; /* the batch in flight */
    size_t count;
    uint8_t *wire;
    size_t wire_len, wire_room;
    const char *argv[3];
    size_t argv_len[3];
    bool encoded;       /* the batch encoded; else its requests fail */
    size_t command;     /* its command's index in the round */
    remote_site_info info;
    once_site_info held; /* the slice as its last answer described it */
    owed_sets owed;
};

remote_round *remote_round_new(cluster_client *client)
{
    remote_round *r = once_calloc(1, sizeof *r);
    if (r != NULL)
        r->client = client;
    return r;
}

void remote_round_set_backfill(remote_round *r, bool on)
{
    r->backfill = on;
}

void remote_round_free(remote_round *r)
{
    if (r == NULL)
        return;
    once_free_memory(r->commands);
    once_free_memory(r);
}

static void fail_all(once_site_request *requests, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        requests[i].status = ONCE_ERR_UNAVAILABLE;
        requests[i].all_set = false;
        requests[i].generations = 0;
    }
}

static bool round_room(remote_round *r)
{
    if (r->count < r->room)
        return true;
    size_t room = r->room ? 2 * r->room : 16;
    cluster_command *commands = once_realloc(r->commands, room * sizeof *commands);
    if (commands == NULL)
        return false;
    r->commands = commands;
    r->room = room;
    return true;
}

/* requests[0 .. count-1] into *wire (grown as needed); false when memory runs out. */
static bool encode(const once_site_request *requests, size_t count, bool timed, uint8_t **wire,
                   size_t *room, size_t *len)
{
    size_t need = once_slice_requests_size(requests, count, timed);
    if (need > *room) {
        uint8_t *grown = once_realloc(*wire, need);
        if (grown == NULL)
            return false;
        *wire = grown;
        *room = need;
    }
    return once_slice_requests_encode(requests, count, timed, *wire, *room, len) == ONCE_OK;
}

/* A SLICE.RUN of `wire` on the site's key, as the round's next command (room made). */
static size_t add_command(remote_site *s, const char **argv, size_t *argv_len,
                          const uint8_t *wire, size_t len)
{
    remote_round *r = s->round;
    argv[0] = "SLICE.RUN";
    argv_len[0] = 9;
    argv[1] = s->key;
    argv_len[1] = s->key_len;
    argv[2] = (const char *)wire;
    argv_len[2] = len;
    r->commands[r->count] =
        (cluster_command){.argc = 3, .argv = argv, .argv_len = argv_len, .key_index = 1};
    return r->count++;
}

/* What the site owes, as a command of the round ahead of its batch's. */
static void start_owed(remote_site *s)
{
    owed_sets *o = &s->owed;
    o->command = SIZE_MAX;
    if (o->count == 0 || !round_room(s->round))
        return;
    if (o->count > o->requests_room) {
        once_site_request *grown = once_realloc(o->requests, o->count * sizeof *grown);
        if (grown == NULL)
            return;
        o->requests = grown;
        o->requests_room = o->count;
    }
    for (size_t i = 0; i < o->count; i++)
        o->requests[i] = (once_site_request){.op = ONCE_SITE_SET,
                                             .positions = o->positions + o->sets[i].first,
                                             .count = o->sets[i].count,
                                             .status = ONCE_OK,
                                             .time_ms = o->sets[i].time_ms};
    if (!encode(o->requests, o->count, s->timed, &o->wire, &o->wire_room, &o->wire_len))
        return;
    o->sent = o->count;
    o->command = add_command(s, o->argv, o->argv_len, o->wire, o->wire_len);
}

/* Drops the first n sets owed (paid, or given up). */
static void drop_owed(remote_site *s, size_t n)
{
    owed_sets *o = &s->owed;
    size_t positions = n == o->count ? o->positions_count : o->sets[n].first;
    memmove(o->positions, o->positions + positions,
            (o->positions_count - positions) * sizeof *o->positions);
    memmove(o->sets, o->sets + n, (o->count - n) * sizeof *o->sets);
    o->count -= n;
    o->positions_count -= positions;
    for (size_t i = 0; i < o->count; i++)
        o->sets[i].first -= positions;
    s->round->owed_positions -= positions;
    s->info.owed = o->count;
}

/* The answer to what the site owed: paid, refused (given up), or still owed. */
static void read_owed(remote_site *s)
{
    owed_sets *o = &s->owed;
    if (o->command == SIZE_MAX)
        return;
    cluster_command *c = &s->round->commands[o->command];
    o->command = SIZE_MAX;
    s->info.messages++;
    const redisReply *reply = c->status == CLUSTER_REPLIED ? c->reply : NULL;
    if (reply != NULL) { /* else unreachable: still owed */
        bool paid = reply->type == REDIS_REPLY_STRING &&
                    once_slice_answers_decode((const uint8_t *)reply->str, reply->len,
                                              o->requests, o->sent, NULL) == ONCE_OK;
        if (paid)
            s->info.backfilled += o->sent;
        else
            s->info.given_up += o->sent;
        drop_owed(s, o->sent);
    }
    if (c->reply != NULL)
        freeReplyObject(c->reply);
    c->reply = NULL;
}

/* The sets of the failed batch, owed to its site (as many as the round's bound leaves). */
static void owe(remote_site *s)
{
    owed_sets *o = &s->owed;
    remote_round *r = s->round;
    for (size_t i = 0; i < s->count; i++) {
        const once_site_request *q = &s->requests[i];
        if (q->op == ONCE_SITE_TEST || q->count == 0)
            continue;
        bool room = r->owed_positions + q->count <= OWED_POSITIONS_MAX;
        if (room && o->count == o->room) {
            size_t grown_room = o->room ? 2 * o->room : 256;
            owed_set *grown = once_realloc(o->sets, grown_room * sizeof *grown);
            room = grown != NULL;
            if (room) {
                o->sets = grown;
                o->room = grown_room;
            }
        }
        if (room && o->positions_count + q->count > o->positions_room) {
            size_t grown_room = o->positions_room ? 2 * o->positions_room : 1024;
            while (grown_room < o->positions_count + q->count)
                grown_room *= 2;
            uint64_t *grown = once_realloc(o->positions, grown_room * sizeof *grown);
            room = grown != NULL;
            if (room) {
                o->positions = grown;
                o->positions_room = grown_room;
            }
        }
        if (!room) {
            s->info.given_up++;
            continue;
        }
        memcpy(o->positions + o->positions_count, q->positions, q->count * sizeof *q->positions);
        o->sets[o->count++] = (owed_set){.first = o->positions_count, .count = q->count,
                                         .time_ms = q->time_ms};
        o->positions_count += q->count;
        r->owed_positions += q->count;
    }
    s->info.owed = o->count;
}

static void remote_start(void *context, once_site_request *requests, size_t count)
{
    remote_site *s = context;
    remote_round *r = s->round;
    s->requests = requests;
    s->count = count;
    s->encoded = false;
    s->command = SIZE_MAX;
    r->waiting++;
    start_owed(s);
    if (!round_room(r) ||
        !encode(requests, count, s->timed, &s->wire, &s->wire_room, &s->wire_len))
        return;
    s->encoded = true;
    s->command = add_command(s, s->argv, s->argv_len, s->wire, s->wire_len);
}

/* The answers of a command's reply into the batch; false if there are none to read. */
static bool read_answers(remote_site *s, const cluster_command *c)
{
    if (c->status != CLUSTER_REPLIED || c->reply == NULL)
        return false;
    const redisReply *reply = c->reply;
    if (reply->type == REDIS_REPLY_ERROR) {
        if (reply->str != NULL && strncmp(reply->str, "NOSLICE", 7) == 0)
            s->info.missing++;
        return false;
    }
    once_site_info held;
    if (reply->type != REDIS_REPLY_STRING ||
        once_slice_answers_decode((const uint8_t *)reply->str, reply->len, s->requests, s->count,
                                  &held) != ONCE_OK)
        return false;
    s->held = held;
    return true;
}

static void remote_wait(void *context)
{
    remote_site *s = context;
    remote_round *r = s->round;
    size_t first = s->owed.command < s->command ? s->owed.command : s->command;
    if (first != SIZE_MAX && first >= r->sent) { /* send what was started since */
        cluster_client_run(r->client, r->commands + r->sent, r->count - r->sent);
        r->sent = r->count;
    }
    read_owed(s);
    bool answered = false;
    if (s->encoded && s->command < r->count) {
        cluster_command *c = &r->commands[s->command];
        s->info.messages++;
        s->info.node = c->node;
        answered = read_answers(s, c);
        if (c->reply != NULL)
            freeReplyObject(c->reply);
        c->reply = NULL;
    }
    if (!answered) {
        if (r->backfill)
            owe(s);
        fail_all(s->requests, s->count);
        s->info.failures++;
        s->info.falls += !s->info.failed;
    }
    s->info.failed = !answered;
    if (--r->waiting == 0) {
        r->count = 0;
        r->sent = 0;
    }
}

static void remote_run(void *context, once_site_request *requests, size_t count)
{
    remote_start(context, requests, count);
    remote_wait(context);
}

/* What the slice held at its last answer: its fill, whoever set it, for the filter's
 * live estimates. */
static void remote_describe(void *context, once_site_info *info)
{
    const remote_site *s = context;
    *info = s->held;
    /* The answers carry no bytes: a slice of bits takes a bit a cell, in words, as the
     * module holds it; a timed slice's timer width is the server's to choose. */
    if (!s->timed)
        info->bytes = (info->cells + 63) / 64 * 8 * (info->filters ? info->filters : 1);
}

static void remote_destroy(void *context)
{
    remote_site *s = context;
    s->round->owed_positions -= s->owed.positions_count;
    once_free_memory(s->owed.sets);
    once_free_memory(s->owed.positions);
    once_free_memory(s->owed.requests);
    once_free_memory(s->owed.wire);
    once_free_memory(s->wire);
    once_free_memory(s->key);
    once_free_memory(s);
}

once_status remote_site_create(remote_round *round, const char *key, uint64_t bits,
                               bool timed, once_site *out)
{
    if (round == NULL || key == NULL || out == NULL)
        return ONCE_ERR_INVALID;
    remote_site *s = once_calloc(1, sizeof *s);
    if (s == NULL)
        return ONCE_ERR_NOMEM;
    s->key = cluster_strdup(key);
    if (s->key == NULL) {
        once_free_memory(s);
        return ONCE_ERR_NOMEM;
    }
    s->key_len = strlen(key);
    s->round = round;
    s->timed = timed;
    s->info.node = -1;
    s->owed.command = SIZE_MAX;
    s->held = (once_site_info){.cells = bits, .filters = 1};
    *out = (once_site){.context = s,
                       .run = remote_run,
                       .destroy = remote_destroy,
                       .start = remote_start,
                       .wait = remote_wait,
                       .describe = remote_describe};
    return ONCE_OK;
}

void remote_site_describe_remote(const once_site *site, remote_site_info *info)
{
    *info = ((const remote_site *)site->context)->info;
}

void remote_site_flush(const once_site *site)
{
    remote_site *s = site->context;
    remote_round *r = s->round;
    if (s->owed.count == 0 || r->count != 0) /* nothing owed, or a round in flight */
        return;
    start_owed(s);
    if (s->owed.command == SIZE_MAX)
        return;
    cluster_client_run(r->client, r->commands, r->count);
    r->sent = r->count;
    read_owed(s);
    r->count = r->sent = 0;
}
