/*
 * cluster/routing.c - commands routed over a Redis Cluster by hash slot (routing.h).
 *
 * Design
 *   The client keeps the slot map (slot -> node index, from CLUSTER SLOTS: masters only,
 *   replicas are not routed to, but how many each slot's master has is kept, for the
 *   hold below) and, per node, at most one blocking hiredis connection.
 *   Nodes are never removed: a node seen once (in a map or a redirection) keeps its index
 *   for the client's life and new ones are appended, so the indices reported in
 *   cluster_command.node and cluster_node_info_at stay meaningful across failovers.
 *
 *   A run goes in rounds.  A round routes every command still pending (to the node a
 *   redirection named, else the slot's master in the map, else, for a slot no master
 *   serves or a keyless command, any node that may be reachable: it redirects or
 *   refuses), queues it on that node in the order given, then writes every node's
 *   queue as one pipeline and flushes it (redisBufferWrite: redisGetReply would only
 *   flush the connection it reads), and only then reads the replies, node by node, so
 *   all nodes work at once and a round costs about the slowest node's time (plus
 *   timeout_ms for each node that does not answer: those waits come one after another).
 *   Each reply either ends its command or sends it to the next round:
 *     - MOVED slot host:port sets that slot in the map, asks for a full map read before
 *       the next run, and resends to the node named;
 *     - ASK slot host:port resends to the node named, after ASKING, map unchanged;
 *     - TRYAGAIN and CLUSTERDOWN resend after RETRY_WAIT_MS (real time), for at most
 *       timeout_ms from the command's first such reply;
 *     - anything else (an error reply included: WRONGTYPE, a module's "ERR ...") is
 *       the command's reply.
 *   MOVED and ASK are hops, and so is a resend after a failed node (but a held one's,
 *   below); a command past max_redirects hops, or past its TRYAGAIN time, is given back
 *   CLUSTER_UNREACHABLE, unless it may be held.  So a run ends: every round ends a
 *   command or adds to one of those bounds, or to a hold's, which is real time.
 *
 *   Failures.  A node fails when connecting to it fails, a write or a read fails or
 *   times out (timeout_ms without progress), or its connection ends or breaks the
 *   protocol.  Its connection is then freed, whatever it still had in flight (replies
 *   read later would answer the wrong commands), and it is marked down until a backoff
 *   passes: retry_ms after a first failure, doubling on each failure in a row up to
 *   max_retry_ms, reset by a reply.  After the round the map is read again from another
 *   node (a connected one, else one not waiting out a backoff, else a seed that is no
 *   known node), and the failed node's commands that had no reply are routed again:
 *   to the replica promoted in its place if the map now says so, or else, their node
 *   being down, they are given back UNREACHABLE at once.  Until its backoff passes a
 *   down node is not connected to at all: its commands are UNREACHABLE at once and the
 *   other nodes' run at full speed, and each attempt after a backoff that fails reads
 *   the map again, so a promotion is seen within about max_retry_ms.  A command may
 *   have run on a node that failed before replying: delivery is at least once.
 *
 *   The hold (hold_ms).  Without it a failover's 2 to 8 s, from a master's death to
 *   its replica's promotion, give back every command of the master's slots
 *   UNREACHABLE, and the caller must decide without them (a filter's failure policy,
 *   which prints repeats or drops new lines, and sets no bits).  So a command that
 *   would be given back because its node cannot be reached (connection refused or
 *   lost, a reply timeout, a node waiting out its backoff, CLUSTERDOWN or TRYAGAIN
 *   past their wait) is held instead when the map lists a replica for its slot's
 *   master: it stays pending, no hop counted, and the run, once the round's other
 *   commands are answered, sleeps a hold pause (HOLD_PAUSE_MS doubling up to
 *   HOLD_PAUSE_MAX_MS), reads the map again and routes it afresh: to the promoted
 *   replica once a node says so, to the old master again if its backoff passed (it
 *   may be back).  A hold belongs to the slot's master, not to a command: its deadline
 *   is hold_ms (real time) after the first hold for that node, shared by every
 *   command and run after it, so a master that never comes back costs one hold, not
 *   one a batch.  Past the deadline its commands are given back UNREACHABLE at once,
 *   as without a hold, until the node answers again (a reply, or a new connection),
 *   which ends its hold.  A slot without a replica in the map (none was made, or the
 *   promoted one has none yet) is never held: nothing would take over.
 *
 *   Changes (a node failing or answering again, a hold starting, answered or run out)
 *   call options.on_change, so that a caller blocked in a hold can tell its user.
 *
 *   Order.  Commands on the same key go to the same node in the same round in the
 *   order given, and a node runs a connection's commands in order; a redirection or a
 *   retry moves every command of that key alike (the server decides by the key's
 *   slot and state, which a pipeline sees in order), and the next round keeps the
 *   order given.
 *
 *   Writes never raise SIGPIPE: a write to a connection the peer closed would kill the
 *   process by default, and a library must not change the process's signal handling,
 *   so SIGPIPE is blocked in the calling thread around writes and one they raised is
 *   consumed before it is unblocked.
 *
 *   Out of memory: our allocations fail softly (the run's commands UNREACHABLE, or
 *   connect's NULL); hiredis's own are its own (0.14 aborts in some of its paths, 1.x
 *   reports them as a connection error, which fails the node).
 *
 * Invariants
 *   - map[s] is -1 or the index of a node; node->slots counts the slots map[] gives it;
 *   - a node with a connection has nothing in flight between runs and between rounds:
 *     every command written is read back, or the connection is freed;
 *   - a down node has no connection; it is connected to only when clock_ms() >=
 *     retry_at (or by the map read after a failure, on the same condition);
 *   - a node's queue (head..tail through work.next) is empty outside a round;
 *   - every command of a run ends REPLIED with its reply or UNREACHABLE with none;
 *   - replicas[s] is 0 when map[s] is -1; a held command is pending, on no queue, and
 *     its slot's master has hold_until set and not passed (a run sleeps only while
 *     some command is held, and a hold ends by its deadline at the latest);
 *   - node->hold_until is 0, or the deadline of the hold that began at its first
 *     failure since it last answered.
 */
#include "routing.h"
#include "memory.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_TIMEOUT_MS 1000u
#define DEFAULT_MAX_REDIRECTS 5u
#define DEFAULT_RETRY_MS 100u
#define DEFAULT_MAX_RETRY_MS 2000u
/* The wait before a command answered TRYAGAIN or CLUSTERDOWN is sent again. */
#define RETRY_WAIT_MS 25u
/* A held command's round waits this long before the map is read again, doubling up to
 * the most: a promotion takes seconds, so the map is read a few times a second, and a
 * producer's CLUSTER SLOTS stay cheap for the nodes. */
#define HOLD_PAUSE_MS 50u
#define HOLD_PAUSE_MAX_MS 400u
/* Host names are at most 253 bytes; longer endpoints are refused. */
#define HOST_MAX 256
/* More nodes than slots is a runaway (a peer redirecting to ever new addresses). */
#define MAX_NODES CLUSTER_SLOT_COUNT
#define NO_NODE (-1)
#define NO_SLOT UINT32_MAX
#define NO_WORK SIZE_MAX

typedef struct node {
    char host[HOST_MAX];
    int port;
    redisContext *link;  /* NULL: not connected */
    bool down;           /* failed, and not connected since */
    bool tried;          /* a connection was attempted before */
    uint32_t backoff_ms; /* the last backoff, 0 once a reply came */
    uint64_t retry_at;   /* while down: when it may be tried again (clock_ms) */
    uint64_t messages;
    uint32_t slots;
    uint32_t replicas;   /* the most replicas the map lists for a slot of it */
    uint64_t hold_until; /* real ms: the deadline of its hold, 0 when none (see Design) */
    bool hold_expired;   /* its hold ran out (told once) */
    char why[64];        /* its last failure */
    size_t head, tail;   /* this round's queue, through work.next */
} node;

typedef struct seed {
    char host[HOST_MAX];
    int port;
} seed;

/* A pending command's routing state during a run. */
typedef struct work {
    uint32_t slot;        /* NO_SLOT: keyless */
    int target;           /* the node a redirection named, NO_NODE: the map's */
    int last_node;        /* the node it was last queued on */
    uint32_t hops;
    uint64_t retry_until; /* real ms: 0 until a TRYAGAIN or CLUSTERDOWN */
    size_t next;          /* the next command queued on the same node */
    bool pending, asking, resend;
    bool held;            /* held for a failover during this run */
} work;

struct cluster_client {
    cluster_options options;
    seed *seeds;
    size_t seed_count;
    node **nodes; /* each allocated alone: a node's address is stable while others are added */
    size_t node_count, node_room;
    bool refresh_wanted;
    work *work;
    size_t work_room;
    cluster_stats stats;
    bool holding;      /* a command was held this round: pause and read the map */
    bool changed;      /* something on_change tells happened since it was last called */
    int32_t map[CLUSTER_SLOT_COUNT];
    int32_t next_map[CLUSTER_SLOT_COUNT]; /* a map being read */
    uint8_t replicas[CLUSTER_SLOT_COUNT]; /* each slot's master's replicas (at most 255) */
    uint8_t next_replicas[CLUSTER_SLOT_COUNT];
};

/* ------------------------------------------------------------ hash slots */

/* CRC16 of the Redis Cluster specification: XMODEM (polynomial 0x1021, initial value 0,
 * no reflection, no final xor), a bit at a time. */
static uint16_t crc16(const unsigned char *p, size_t len)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

uint32_t cluster_key_slot(const void *key, size_t len)
{
    const unsigned char *k = key;
    if (len == 0)
        return 0;
    const unsigned char *open = memchr(k, '{', len);
    if (open != NULL) {
        size_t from = (size_t)(open - k) + 1;
        const unsigned char *close = memchr(k + from, '}', len - from);
        if (close != NULL && close != k + from) /* an empty tag {} hashes the whole key */
            return crc16(k + from, (size_t)(close - (k + from))) & (CLUSTER_SLOT_COUNT - 1);
    }
    return crc16(k, len) & (CLUSTER_SLOT_COUNT - 1);
}

/* ------------------------------------------------------------ clocks, addresses */

static uint64_t monotonic_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static uint64_t default_now_ms(void *context)
{
    (void)context;
    return monotonic_ms();
}

/* The backoff's clock. */
static uint64_t clock_ms(const cluster_client *c)
{
    return c->options.now_ms(c->options.clock_context);
}

static void sleep_ms(uint32_t ms)
{
    struct timespec t = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* Append a reason to an error message ("; " between reasons), cut to fit. */
static void add_error(char *error, size_t error_len, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void add_error(char *error, size_t error_len, const char *format, ...)
{
    if (error == NULL || error_len == 0)
        return;
    size_t used = strnlen(error, error_len);
    if (used + 1 >= error_len)
        return;
    if (used > 0) {
        int n = snprintf(error + used, error_len - used, "; ");
        used += n > 0 ? (size_t)n : 0;
        if (used + 1 >= error_len)
            return;
    }
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(error + used, error_len - used, format, ap);
    va_end(ap);
    (void)n;
}

/* A port in decimal, 1..65535; `len` bytes, no sign. */
static bool parse_port(const char *s, size_t len, int *port)
{
    long v = 0;
    if (len == 0 || len > 5)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > 65535)
        return false;
    *port = (int)v;
    return true;
}

/* "host:port" (split at the last ':', so an IPv6 address may go unbracketed as Redis
 * writes it, or in brackets).  An empty host is left empty: a redirection's "the node
 * you asked". */
static bool parse_address(const char *s, size_t len, char host[HOST_MAX], int *port)
{
    const char *colon = NULL;
    for (size_t i = len; i > 0; i--)
        if (s[i - 1] == ':') {
            colon = s + i - 1;
            break;
        }
    if (colon == NULL || !parse_port(colon + 1, len - (size_t)(colon + 1 - s), port))
        return false;
    size_t host_len = (size_t)(colon - s);
    if (host_len >= 2 && s[0] == '[' && s[host_len - 1] == ']') {
        s++;
        host_len -= 2;
    }
    if (host_len >= HOST_MAX || memchr(s, '\0', host_len) != NULL)
        return false;
    memcpy(host, s, host_len);
    host[host_len] = '\0';
    return true;
}

/* ------------------------------------------------------------ connections */

/* Block SIGPIPE in this thread around writes; one they raised is consumed (a pending
 * one from before is left alone) before the old mask comes back. */
typedef struct pipe_guard {
    sigset_t old;
    bool was_pending;
} pipe_guard;

static void pipe_guard_begin(pipe_guard *g)
{
    sigset_t pipe_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &g->old);
    g->was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

static void pipe_guard_end(pipe_guard *g)
{
    sigset_t pipe_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    if (!g->was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static struct timeval timeval_of(uint32_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000u), (suseconds_t)(ms % 1000u) * 1000};
    return tv;
}

/* A connection with timeout_ms for the connect and for every read and write, or NULL
 * with the reason in `why`. */
static redisContext *open_link(const cluster_client *c, const char *host, int port, char *why,
                               size_t why_len)
{
    struct timeval tv = timeval_of(c->options.timeout_ms);
    redisContext *link = redisConnectWithTimeout(host, port, tv);
    if (link == NULL) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    /* 1.x applies the connect timeout only to the connect. */
    if (link->err != 0 || redisSetTimeout(link, tv) != REDIS_OK) {
        snprintf(why, why_len, "%s", link->err != 0 ? link->errstr : "cannot set the timeout");
        redisFree(link);
        return NULL;
    }
    return link;
}

/* Write everything appended to the connection. */
static bool flush_link(redisContext *link)
{
    pipe_guard guard;
    int done = 0;
    bool ok = true;
    pipe_guard_begin(&guard);
    while (!done)
        if (redisBufferWrite(link, &done) != REDIS_OK) {
            ok = false;
            break;
        }
    pipe_guard_end(&guard);
    return ok;
}

/* The next reply, or NULL when the connection failed (its context then has err set). */
static redisReply *read_reply(redisContext *link)
{
    void *reply = NULL;
    if (redisGetReply(link, &reply) != REDIS_OK)
        return NULL;
    return reply;
}

/* ------------------------------------------------------------ nodes */

static int find_node(const cluster_client *c, const char *host, int port)
{
    for (size_t i = 0; i < c->node_count; i++)
        if (c->nodes[i]->port == port && strcmp(c->nodes[i]->host, host) == 0)
            return (int)i;
    return NO_NODE;
}

/* The node at host:port, appended if new; NO_NODE when memory runs out. */
static int node_at(cluster_client *c, const char *host, int port)
{
    int found = find_node(c, host, port);
    if (found != NO_NODE)
        return found;
    if (c->node_count == MAX_NODES)
        return NO_NODE;
    if (c->node_count == c->node_room) {
        size_t room = c->node_room ? 2 * c->node_room : 8;
        node **nodes = once_realloc(c->nodes, room * sizeof *nodes);
        if (nodes == NULL)
            return NO_NODE;
        c->nodes = nodes;
        c->node_room = room;
    }
    node *n = once_calloc(1, sizeof *n);
    if (n == NULL)
        return NO_NODE;
    snprintf(n->host, sizeof n->host, "%s", host);
    n->port = port;
    n->head = n->tail = NO_WORK;
    c->nodes[c->node_count] = n;
    return (int)c->node_count++;
}

static bool node_waiting(const node *n, uint64_t now)
{
    return n->down && now < n->retry_at;
}

/* A connection to the node was made: it is up.  Its hold goes on until it replies (a
 * stopped node still accepts connections: its kernel does). */
static void node_up(cluster_client *c, node *n)
{
    if (n->down)
        c->changed = true;
    n->down = false;
}

/* The node gave a command its reply: a hold for it is over. */
static void node_replied(cluster_client *c, node *n)
{
    n->backoff_ms = 0;
    if (n->hold_until != 0)
        c->changed = true;
    n->hold_until = 0;
    n->hold_expired = false;
}

static bool node_connect(cluster_client *c, node *n)
{
    char why[128];
    if (n->tried)
        c->stats.reconnects++;
    n->tried = true;
    n->link = open_link(c, n->host, n->port, why, sizeof why);
    if (n->link == NULL) {
        snprintf(n->why, sizeof n->why, "%.63s", why);
        return false;
    }
    node_up(c, n);
    return true;
}

/* Why a connection failed, in words: hiredis says a read timeout as EAGAIN's text. */
static void link_why(const redisContext *link, char *why, size_t room)
{
    if (link->err == REDIS_ERR_IO && strstr(link->errstr, "temporarily unavailable") != NULL)
        snprintf(why, room, "no reply within the timeout");
    else if (link->err == REDIS_ERR_EOF)
        snprintf(why, room, "connection closed");
    else
        snprintf(why, room, "%.63s", link->errstr[0] ? link->errstr : "connection failed");
}

/* The node failed: drop its connection (and whatever it had in flight) and back off. */
static void node_fail(cluster_client *c, node *n)
{
    const cluster_options *o = &c->options;
    if (!n->down)
        c->changed = true;
    if (n->link != NULL) {
        if (n->link->err != 0)
            link_why(n->link, n->why, sizeof n->why);
        redisFree(n->link);
        n->link = NULL;
    }
    uint64_t backoff = n->backoff_ms == 0 ? o->retry_ms : 2 * (uint64_t)n->backoff_ms;
    n->backoff_ms = backoff > o->max_retry_ms ? o->max_retry_ms : (uint32_t)backoff;
    n->down = true;
    n->retry_at = clock_ms(c) + n->backoff_ms;
}

/* ------------------------------------------------------------ the slot map */

static bool is_string(const redisReply *r)
{
    return r != NULL && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) &&
           (r->str != NULL || r->len == 0);
}

/* Read a CLUSTER SLOTS reply into the map: [[start, end, [host, port, ...], replicas...],
 * ...].  A NULL or empty host is the replying node's (`from_host`), "?" an unknown one
 * (the range is skipped).  Malformed ranges are skipped; a reply that names no master
 * at all, or memory running out, leaves the map as it was. */
static bool apply_slots(cluster_client *c, const redisReply *r, const char *from_host)
{
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || (r->elements > 0 && r->element == NULL))
        return false;
    for (uint32_t s = 0; s < CLUSTER_SLOT_COUNT; s++) {
        c->next_map[s] = NO_NODE;
        c->next_replicas[s] = 0;
    }
    size_t ranges = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *e = r->element[i];
        if (e == NULL || e->type != REDIS_REPLY_ARRAY || e->elements < 3 || e->element == NULL)
            continue;
        const redisReply *start = e->element[0], *end = e->element[1], *master = e->element[2];
        if (start == NULL || end == NULL || master == NULL ||
            start->type != REDIS_REPLY_INTEGER || end->type != REDIS_REPLY_INTEGER ||
            start->integer < 0 || start->integer > end->integer ||
            end->integer >= (long long)CLUSTER_SLOT_COUNT || master->type != REDIS_REPLY_ARRAY ||
            master->elements < 2 || master->element == NULL)
            continue;
        const redisReply *h = master->element[0], *p = master->element[1];
        if (h == NULL || p == NULL || p->type != REDIS_REPLY_INTEGER || p->integer < 1 ||
            p->integer > 65535)
            continue;
        char host[HOST_MAX];
        if (h->type == REDIS_REPLY_NIL || (is_string(h) && h->len == 0)) {
            snprintf(host, sizeof host, "%s", from_host);
        } else if (is_string(h) && h->len < HOST_MAX && memchr(h->str, '\0', h->len) == NULL) {
            if (h->len == 1 && h->str[0] == '?')
                continue;
            memcpy(host, h->str, h->len);
            host[h->len] = '\0';
        } else {
            continue;
        }
        int index = node_at(c, host, (int)p->integer);
        if (index == NO_NODE)
            return false;
        /* The replicas after the master: Redis lists those not marked failed. */
        size_t listed = e->elements - 3;
        uint8_t replicas = listed > UINT8_MAX ? UINT8_MAX : (uint8_t)listed;
        for (long long s = start->integer; s <= end->integer; s++) {
            c->next_map[s] = index;
            c->next_replicas[s] = replicas;
        }
        ranges++;
    }
    if (ranges == 0)
        return false;
    memcpy(c->map, c->next_map, sizeof c->map);
    memcpy(c->replicas, c->next_replicas, sizeof c->replicas);
    for (size_t i = 0; i < c->node_count; i++)
        c->nodes[i]->slots = c->nodes[i]->replicas = 0;
    for (uint32_t s = 0; s < CLUSTER_SLOT_COUNT; s++)
        if (c->map[s] != NO_NODE) {
            node *n = c->nodes[c->map[s]];
            n->slots++;
            if (c->replicas[s] > n->replicas)
                n->replicas = c->replicas[s];
        }
    /* A node the map gives no slot has nothing to hold for: a hold that outlived its
     * failover (the replica promoted) must not leave a deadline long past for the
     * node's next failure, if it serves slots again. */
    for (size_t i = 0; i < c->node_count; i++)
        if (c->nodes[i]->slots == 0) {
            c->nodes[i]->hold_until = 0;
            c->nodes[i]->hold_expired = false;
        }
    c->stats.map_refreshes++;
    return true;
}

typedef enum refresh_result { REFRESH_OK, REFRESH_REFUSED, REFRESH_LINK_FAILED } refresh_result;

/* CLUSTER SLOTS over a connection with nothing in flight. */
static refresh_result refresh_over(cluster_client *c, redisContext *link, const char *host,
                                   node *via, char *why, size_t why_len)
{
    static const char *const argv[] = {"CLUSTER", "SLOTS"};
    static const size_t argv_len[] = {7, 5};
    if (redisAppendCommandArgv(link, 2, (const char **)argv, argv_len) != REDIS_OK ||
        !flush_link(link)) {
        snprintf(why, why_len, "%s", link->errstr);
        return REFRESH_LINK_FAILED;
    }
    c->stats.messages++;
    if (via != NULL)
        via->messages++;
    redisReply *reply = read_reply(link);
    if (reply == NULL) {
        snprintf(why, why_len, "%s", link->errstr[0] ? link->errstr : "no reply");
        return REFRESH_LINK_FAILED;
    }
    c->stats.replies++;
    if (via != NULL)
        via->backoff_ms = 0;
    bool ok = apply_slots(c, reply, host);
    if (!ok) {
        if (reply->type == REDIS_REPLY_ERROR && reply->str != NULL)
            snprintf(why, why_len, "CLUSTER SLOTS: %.*s", (int)(reply->len < 80 ? reply->len : 80),
                     reply->str);
        else
            snprintf(why, why_len, "CLUSTER SLOTS names no master");
    }
    freeReplyObject(reply);
    return ok ? REFRESH_OK : REFRESH_REFUSED;
}

/* Read the map again: from a connected node, else from a node that may be connected
 * to (not waiting out a backoff), else from a seed that is no known node (those were
 * asked already, or are waiting out their backoff).  False when none answered (the map
 * stays as it was), with the reasons in `error`. */
static bool refresh_map(cluster_client *c, char *error, size_t error_len)
{
    char why[160];
    c->refresh_wanted = false;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < c->node_count; i++) {
            node *n = c->nodes[i];
            bool skip = pass == 0 ? n->link == NULL
                                  : (n->link != NULL || node_waiting(n, clock_ms(c)));
            if (skip)
                continue;
            if (n->link == NULL && !node_connect(c, n)) {
                node_fail(c, n);
                continue;
            }
            switch (refresh_over(c, n->link, n->host, n, why, sizeof why)) {
            case REFRESH_OK:
                return true;
            case REFRESH_REFUSED:
                break;
            case REFRESH_LINK_FAILED:
                node_fail(c, n);
                break;
            }
        }
    }
    for (size_t i = 0; i < c->seed_count; i++) {
        const seed *s = &c->seeds[i];
        if (find_node(c, s->host, s->port) != NO_NODE)
            continue;
        why[0] = '\0';
        redisContext *link = open_link(c, s->host, s->port, why, sizeof why);
        refresh_result result = link != NULL ? refresh_over(c, link, s->host, NULL, why, sizeof why)
                                             : REFRESH_LINK_FAILED;
        if (result == REFRESH_OK) {
            /* The seed may be a master now known: keep the connection as its own. */
            int index = find_node(c, s->host, s->port);
            if (index != NO_NODE) {
                node *n = c->nodes[index];
                n->messages++;
                n->tried = true;
                if (n->link == NULL) {
                    n->link = link;
                    node_up(c, n);
                    link = NULL;
                }
            }
        } else {
            add_error(error, error_len, "%s:%d: %s", s->host, s->port, why);
        }
        if (link != NULL)
            redisFree(link);
        if (result == REFRESH_OK)
            return true;
    }
    return false;
}

/* ------------------------------------------------------------ runs */

static void give_up(cluster_client *c, cluster_command *cmd, work *w, int node_index, size_t *left)
{
    cmd->status = CLUSTER_UNREACHABLE;
    cmd->reply = NULL;
    cmd->node = node_index;
    w->pending = false;
    c->stats.unreachable++;
    if (w->held)
        c->stats.held_expired++;
    (*left)--;
}

/* May the command wait for a failover: holds on, and the map lists a replica for its
 * slot's master? */
static bool holdable(const cluster_client *c, const work *w)
{
    return c->options.hold_ms != 0 && w->slot != NO_SLOT && c->map[w->slot] != NO_NODE &&
           c->replicas[w->slot] > 0;
}

/* Hold a command its node cannot answer, instead of giving it up, while its slot's
 * master's hold lasts (starting that hold if it has none): true when held (it stays
 * pending, for a round after the hold pause). */
static bool hold(cluster_client *c, work *w)
{
    if (!holdable(c, w))
        return false;
    node *n = c->nodes[c->map[w->slot]];
    uint64_t now = monotonic_ms();
    if (n->hold_until == 0) {
        n->hold_until = now + c->options.hold_ms;
        n->hold_expired = false;
        c->changed = true;
    }
    if (now >= n->hold_until) {
        if (!n->hold_expired)
            c->changed = true;
        n->hold_expired = true;
        return false;
    }
    if (!w->held)
        c->stats.held++;
    w->held = true;
    w->target = NO_NODE;
    w->asking = false;
    c->holding = true;
    return true;
}

/* Give the command up unless it may be held. */
static void hold_or_give_up(cluster_client *c, cluster_command *cmd, work *w, int node_index,
                            size_t *left)
{
    if (!hold(c, w))
        give_up(c, cmd, w, node_index, left);
}

/* A node that may be reachable, for a keyless command or a slot the map gives nobody:
 * preferably a master, preferably connected. */
static int any_node(const cluster_client *c, uint64_t now)
{
    int best = NO_NODE, best_score = -1;
    for (size_t i = 0; i < c->node_count; i++) {
        const node *n = c->nodes[i];
        if (node_waiting(n, now))
            continue;
        int score = (n->slots > 0 ? 2 : 0) + (n->link != NULL ? 1 : 0);
        if (score > best_score) {
            best = (int)i;
            best_score = score;
        }
    }
    return best;
}

static int route(const cluster_client *c, const work *w, uint64_t now)
{
    if (w->target != NO_NODE)
        return w->target;
    if (w->slot != NO_SLOT && c->map[w->slot] != NO_NODE)
        return c->map[w->slot];
    return any_node(c, now);
}

/* Queue every pending command on its node, in the order given; the ones bound for a
 * node waiting out its backoff (or for none) are held, or UNREACHABLE at once. */
static void queue_round(cluster_client *c, cluster_command *cmds, size_t count, size_t *left)
{
    uint64_t now = clock_ms(c);
    for (size_t i = 0; i < count; i++) {
        work *w = &c->work[i];
        if (!w->pending)
            continue;
        int index = route(c, w, now);
        if (index == NO_NODE || node_waiting(c->nodes[index], now)) {
            hold_or_give_up(c, &cmds[i], w, index, left);
            continue;
        }
        node *n = c->nodes[index];
        w->last_node = index;
        w->next = NO_WORK;
        if (n->tail == NO_WORK)
            n->head = i;
        else
            c->work[n->tail].next = i;
        n->tail = i;
    }
}

/* Every command queued on the node from `from` on had no reply: it goes again after
 * the map is read. */
static void mark_resend(cluster_client *c, size_t from)
{
    for (size_t i = from; i != NO_WORK; i = c->work[i].next)
        c->work[i].resend = true;
}

/* Connect if needed, append the node's queue and flush it.  False when the node failed
 * (its commands are marked to be resent). */
static bool send_queue(cluster_client *c, node *n, const cluster_command *cmds)
{
    static const char *const asking[] = {"ASKING"};
    static const size_t asking_len[] = {6};
    if (n->link == NULL && !node_connect(c, n)) {
        node_fail(c, n);
        mark_resend(c, n->head);
        return false;
    }
    uint64_t written = 0;
    for (size_t i = n->head; i != NO_WORK; i = c->work[i].next) {
        const cluster_command *cmd = &cmds[i];
        if ((c->work[i].asking &&
             redisAppendCommandArgv(n->link, 1, (const char **)asking, asking_len) != REDIS_OK) ||
            redisAppendCommandArgv(n->link, cmd->argc, (const char **)cmd->argv, cmd->argv_len) !=
                REDIS_OK) {
            node_fail(c, n);
            mark_resend(c, n->head);
            return false;
        }
        written += c->work[i].asking ? 2 : 1;
    }
    if (!flush_link(n->link)) {
        node_fail(c, n);
        mark_resend(c, n->head);
        return false;
    }
    c->stats.messages += written;
    n->messages += written;
    return true;
}

/* Is the error reply `word` followed by its end or a space? */
static bool error_is(const redisReply *r, const char *word)
{
    size_t n = strlen(word);
    return r->len >= n && memcmp(r->str, word, n) == 0 && (r->len == n || r->str[n] == ' ');
}

/* "MOVED slot host:port" or "ASK slot host:port" after its word (`skip` bytes). */
static bool parse_redirect(const redisReply *r, size_t skip, const node *from, uint32_t *slot,
                           char host[HOST_MAX], int *port)
{
    const char *s = r->str + skip, *end = r->str + r->len;
    uint32_t v = 0;
    const char *digits = s;
    while (s < end && *s >= '0' && *s <= '9' && v < CLUSTER_SLOT_COUNT)
        v = v * 10 + (uint32_t)(*s++ - '0');
    if (s == digits || v >= CLUSTER_SLOT_COUNT || s == end || *s != ' ')
        return false;
    s++;
    if (!parse_address(s, (size_t)(end - s), host, port))
        return false;
    if (host[0] == '\0')
        snprintf(host, HOST_MAX, "%s", from->host);
    *slot = v;
    return true;
}

/* Move slot `s` to node `index` in the map. */
static void map_set(cluster_client *c, uint32_t s, int index)
{
    if (c->map[s] == index)
        return;
    if (c->map[s] != NO_NODE)
        c->nodes[c->map[s]]->slots--;
    c->map[s] = index;
    c->nodes[index]->slots++;
}

/* What one reply does to its command (see Design). */
static void take_reply(cluster_client *c, int index, cluster_command *cmd, work *w,
                       redisReply *r, size_t *left, bool *wait)
{
    const cluster_options *o = &c->options;
    if (r->type == REDIS_REPLY_ERROR && r->str != NULL) {
        bool moved = error_is(r, "MOVED"), ask = !moved && error_is(r, "ASK");
        if (moved || ask) {
            uint32_t slot;
            int port;
            char host[HOST_MAX];
            if (moved)
                c->stats.moved++;
            else
                c->stats.ask++;
            if (parse_redirect(r, moved ? 6 : 4, c->nodes[index], &slot, host, &port)) {
                freeReplyObject(r);
                int target = node_at(c, host, port);
                if (target == NO_NODE || ++w->hops > o->max_redirects) {
                    give_up(c, cmd, w, index, left);
                    return;
                }
                if (moved) {
                    map_set(c, slot, target);
                    c->refresh_wanted = true;
                }
                w->target = target;
                w->asking = ask;
                return;
            }
            /* A redirection we cannot read is the command's reply. */
        } else if (error_is(r, "TRYAGAIN") || error_is(r, "CLUSTERDOWN")) {
            if (r->str[0] == 'T')
                c->stats.tryagain++;
            else
                c->stats.clusterdown++;
            freeReplyObject(r);
            uint64_t now = monotonic_ms();
            if (w->retry_until == 0)
                w->retry_until = now + o->timeout_ms;
            if (now + RETRY_WAIT_MS > w->retry_until) {
                hold_or_give_up(c, cmd, w, index, left);
                return;
            }
            w->target = NO_NODE;
            w->asking = false;
            *wait = true;
            return;
        }
    }
    cmd->status = CLUSTER_REPLIED;
    cmd->reply = r;
    cmd->node = index;
    w->pending = false;
    if (w->held)
        c->stats.held_replied++;
    node_replied(c, c->nodes[index]);
    (*left)--;
}

/* Read the replies to a node's queue.  False when the node failed (the commands left
 * without a reply are marked to be resent). */
static bool read_queue(cluster_client *c, int index, cluster_command *cmds, size_t *left,
                       bool *wait)
{
    node *n = c->nodes[index];
    for (size_t i = n->head; i != NO_WORK;) {
        work *w = &c->work[i];
        size_t next = w->next;
        bool linked = true;
        if (w->asking) {
            redisReply *ok = read_reply(n->link); /* ASKING's +OK */
            linked = ok != NULL;
            if (linked) {
                c->stats.replies++;
                freeReplyObject(ok);
            }
        }
        redisReply *r = linked ? read_reply(n->link) : NULL;
        if (r == NULL) {
            node_fail(c, n);
            mark_resend(c, i);
            return false;
        }
        c->stats.replies++;
        n->backoff_ms = 0;
        take_reply(c, index, &cmds[i], w, r, left, wait);
        i = next;
    }
    return true;
}

/* After the map was read again: the commands of failed nodes are routed afresh (a
 * command that may be held counts no hop: its hold bounds it). */
static void route_resends(cluster_client *c, cluster_command *cmds, size_t count, size_t *left)
{
    for (size_t i = 0; i < count; i++) {
        work *w = &c->work[i];
        if (!w->pending || !w->resend)
            continue;
        w->resend = false;
        w->target = NO_NODE;
        w->asking = false;
        if (holdable(c, w))
            continue;
        if (++w->hops > c->options.max_redirects)
            give_up(c, &cmds[i], w, w->last_node, left);
    }
}

/* Tell the caller what changed since it was last told. */
static void tell(cluster_client *c)
{
    if (!c->changed)
        return;
    c->changed = false;
    if (c->options.on_change != NULL)
        c->options.on_change(c->options.change_context);
}

static bool work_reserve(cluster_client *c, size_t count)
{
    if (count <= c->work_room)
        return true;
    if (count > SIZE_MAX / sizeof *c->work)
        return false;
    work *grown = once_realloc(c->work, count * sizeof *grown);
    if (grown == NULL)
        return false;
    c->work = grown;
    c->work_room = count;
    return true;
}

void cluster_client_run(cluster_client *c, cluster_command *cmds, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        cmds[i].status = CLUSTER_UNREACHABLE;
        cmds[i].reply = NULL;
        cmds[i].node = NO_NODE;
    }
    if (c == NULL || count == 0)
        return;
    if (!work_reserve(c, count)) {
        c->stats.unreachable += count;
        return;
    }
    size_t left = 0;
    for (size_t i = 0; i < count; i++) {
        const cluster_command *cmd = &cmds[i];
        work *w = &c->work[i];
        *w = (work){.slot = NO_SLOT, .target = NO_NODE, .last_node = NO_NODE, .next = NO_WORK};
        if (cmd->argc <= 0 || cmd->argv == NULL || cmd->argv_len == NULL) {
            c->stats.unreachable++;
            continue;
        }
        if (cmd->key_index >= 0 && cmd->key_index < cmd->argc)
            w->slot = cluster_key_slot(cmd->argv[cmd->key_index], cmd->argv_len[cmd->key_index]);
        else if (cmd->route_key != NULL)
            w->slot = cluster_key_slot(cmd->route_key, cmd->route_key_len);
        w->pending = true;
        left++;
    }
    if (c->refresh_wanted)
        refresh_map(c, NULL, 0);
    bool wait = false;
    uint64_t hold_start = 0;   /* real ms of the run's first hold, 0: none */
    uint32_t pause = HOLD_PAUSE_MS;
    c->holding = false;
    while (left > 0) {
        if (c->holding) { /* held commands: wait for the failover, then read the map */
            if (hold_start == 0)
                hold_start = monotonic_ms();
            sleep_ms(pause);
            pause = pause * 2 > HOLD_PAUSE_MAX_MS ? HOLD_PAUSE_MAX_MS : pause * 2;
            refresh_map(c, NULL, 0);
        } else if (wait) {
            sleep_ms(RETRY_WAIT_MS);
        }
        wait = false;
        c->holding = false;
        queue_round(c, cmds, count, &left);
        bool failed = false;
        for (size_t i = 0; i < c->node_count; i++) {
            node *n = c->nodes[i];
            if (n->head != NO_WORK && !send_queue(c, n, cmds)) {
                n->head = n->tail = NO_WORK;
                failed = true;
            }
        }
        /* Replies may name new nodes (appended: none of these is skipped). */
        for (size_t i = 0; i < c->node_count; i++) {
            node *n = c->nodes[i];
            if (n->head != NO_WORK) {
                if (!read_queue(c, (int)i, cmds, &left, &wait))
                    failed = true;
                n->head = n->tail = NO_WORK;
            }
        }
        if (failed) {
            refresh_map(c, NULL, 0);
            route_resends(c, cmds, count, &left);
        }
        tell(c);
    }
    if (hold_start != 0)
        c->stats.hold_ms += monotonic_ms() - hold_start;
    tell(c);
}

/* ------------------------------------------------------------ the client */

cluster_client *cluster_client_connect(const char *const *seeds, size_t count,
                                       const cluster_options *options, char *error,
                                       size_t error_len)
{
    if (error != NULL && error_len > 0)
        error[0] = '\0';
    if (seeds == NULL || count == 0) {
        add_error(error, error_len, "no seed node given");
        return NULL;
    }
    cluster_client *c = once_calloc(1, sizeof *c);
    if (c == NULL || (c->seeds = once_calloc(count, sizeof *c->seeds)) == NULL) {
        once_free_memory(c);
        add_error(error, error_len, "out of memory");
        return NULL;
    }
    if (options != NULL)
        c->options = *options;
    cluster_options *o = &c->options;
    if (o->timeout_ms == 0)
        o->timeout_ms = DEFAULT_TIMEOUT_MS;
    if (o->max_redirects == 0)
        o->max_redirects = DEFAULT_MAX_REDIRECTS;
    if (o->retry_ms == 0)
        o->retry_ms = DEFAULT_RETRY_MS;
    if (o->max_retry_ms == 0)
        o->max_retry_ms = DEFAULT_MAX_RETRY_MS;
    if (o->max_retry_ms < o->retry_ms)
        o->max_retry_ms = o->retry_ms;
    if (o->now_ms == NULL) {
        o->now_ms = default_now_ms;
        o->clock_context = NULL;
    }
    for (size_t i = 0; i < count; i++) {
        seed *s = &c->seeds[c->seed_count];
        if (seeds[i] == NULL || !parse_address(seeds[i], strlen(seeds[i]), s->host, &s->port) ||
            s->host[0] == '\0') {
            add_error(error, error_len, "seed %zu is not host:port", i);
            cluster_client_free(c);
            return NULL;
        }
        c->seed_count++;
    }
    for (uint32_t s = 0; s < CLUSTER_SLOT_COUNT; s++)
        c->map[s] = NO_NODE;
    if (!refresh_map(c, error, error_len)) {
        cluster_client_free(c);
        return NULL;
    }
    return c;
}

void cluster_client_free(cluster_client *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->node_count; i++) {
        if (c->nodes[i]->link != NULL)
            redisFree(c->nodes[i]->link);
        once_free_memory(c->nodes[i]);
    }
    once_free_memory(c->nodes);
    once_free_memory(c->seeds);
    once_free_memory(c->work);
    once_free_memory(c);
}

void cluster_client_stats(const cluster_client *c, cluster_stats *out)
{
    *out = c->stats;
}

size_t cluster_node_count(const cluster_client *c)
{
    return c->node_count;
}

bool cluster_node_info_at(const cluster_client *c, size_t index, cluster_node_info *out)
{
    if (index >= c->node_count)
        return false;
    const node *n = c->nodes[index];
    /* "host:port", a host too long cut to keep the port */
    char port[8];
    snprintf(port, sizeof port, ":%d", n->port);
    size_t port_len = strlen(port), host_len = strlen(n->host);
    if (host_len + port_len >= sizeof out->address)
        host_len = sizeof out->address - 1 - port_len;
    memcpy(out->address, n->host, host_len);
    memcpy(out->address + host_len, port, port_len + 1);
    out->up = !n->down;
    out->messages = n->messages;
    out->slots = n->slots;
    out->replicas = n->replicas;
    out->hold_expired = n->hold_expired;
    out->holding = n->hold_until != 0 && !n->hold_expired && monotonic_ms() < n->hold_until;
    snprintf(out->why, sizeof out->why, "%s", n->why);
    return true;
}

int cluster_slot_node(const cluster_client *c, uint32_t slot)
{
    return slot < CLUSTER_SLOT_COUNT ? c->map[slot] : NO_NODE;
}
