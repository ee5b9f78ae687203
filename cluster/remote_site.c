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
 * Invariants
 *   - a round holds at most one command a site: the filter starts a site again only
 *     after waiting for it;
 *   - every command is sent once, by the first wait after its start (with every command
 *     started before it and not yet sent), and the round is emptied when the last of
 *     its sites has waited; a site's reply is freed by its wait.
 */
#include "remote_site.h"
#include "memory.h"

#include <stdlib.h>
#include <string.h>

typedef struct remote_site remote_site;

struct remote_round {
    cluster_client *client;
    cluster_command *commands;
    size_t count, room, waiting;
    size_t sent; /* commands [0, sent) have been sent */
};

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
};

remote_round *remote_round_new(cluster_client *client)
{
    remote_round *r = once_calloc(1, sizeof *r);
    if (r != NULL)
        r->client = client;
    return r;
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

static bool encode(remote_site *s)
{
    size_t need = once_slice_requests_size(s->requests, s->count, s->timed);
    if (need > s->wire_room) {
        uint8_t *wire = once_realloc(s->wire, need);
        if (wire == NULL)
            return false;
        s->wire = wire;
        s->wire_room = need;
    }
    return once_slice_requests_encode(s->requests, s->count, s->timed, s->wire, s->wire_room,
                                      &s->wire_len) == ONCE_OK;
}

static void remote_start(void *context, once_site_request *requests, size_t count)
{
    remote_site *s = context;
    remote_round *r = s->round;
    s->requests = requests;
    s->count = count;
    s->encoded = false;
    if (!round_room(r) || !encode(s)) {
        s->command = SIZE_MAX;
        r->waiting++;
        return;
    }
    s->encoded = true;
    s->argv[0] = "SLICE.RUN";
    s->argv_len[0] = 9;
    s->argv[1] = s->key;
    s->argv_len[1] = s->key_len;
    s->argv[2] = (const char *)s->wire;
    s->argv_len[2] = s->wire_len;
    s->command = r->count;
    r->commands[r->count++] = (cluster_command){
        .argc = 3, .argv = s->argv, .argv_len = s->argv_len, .key_index = 1};
    r->waiting++;
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
    if (s->encoded && s->command >= r->sent) { /* send what was started since */
        cluster_client_run(r->client, r->commands + r->sent, r->count - r->sent);
        r->sent = r->count;
    }
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
