/*
 * cluster/cluster_filter.c - one filter sliced over a Redis Cluster (once_cluster.h).
 *
 * Design
 *   The filter is the library's sliced filter (slice/sliced.c) over remote sites
 *   (remote_site.c), one a slice: every rule of paper 000 that decides an event
 *   (horizontal, vertical and diced slicing, FTTS and TAS, parallel and pipelined
 *   lookup, the failure policies and their live estimates, windows at the producers'
 *   timestamps) is the in-process filter's, so a producer over the cluster answers
 *   exactly as the in-process filter of the same seed would with every site up.
 *
 *   Opening: the layout (layout.c) is read from NAME:layout.  When there is none, this
 *   producer creates the slices (SLICE.CREATE, which answers OK for a slice that exists
 *   alike) and then writes the layout with SET NX, so a layout is never seen before its
 *   slices exist; when another producer won that race, its layout is read back and
 *   compared like any other.  A producer that finds a layout creates nothing: a slice
 *   missing then (a node restarted without its data) stays missing, and reads as a
 *   failed slice (NOSLICE), not as an empty one.
 *
 *   A count window's clock is the key NAME:count, the events delivered by every
 *   producer, made with the layout.  A batch reads it before its test and adds its
 *   distinct events to it after (once_count_clock), each by one script that fails
 *   when the key is missing: a node restarted without it must read as a failed clock,
 *   not restart the count at 0 under timers set far past it.
 *
 *   WAIT: after a batch that wrote, one WAIT to each node that took a write of it.
 *
 * Invariants
 *   - the layout in force is the one in the cluster: its seed and geometry are the
 *     sliced filter's;
 *   - the sites belong to the sliced filter once it is made (it destroys them); the
 *     round and the client outlive it.
 */
#include "once_cluster.h"

#include "layout.h"
#include "memory.h"
#include "remote_site.h"
#include "routing.h"
#include "whole_slices.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_ROOM 512

struct once_cluster {
    cluster_client *client;
    remote_round *round;
    once_sliced *sliced;
    once_tree *tree;   /* a Bloom tree instead (config.tree), its leaf this producer's */
    uint64_t leaf;
    once_failure tree_policy; /* what a node that cannot answer makes an event */
    uint32_t tree_threshold;
    uint32_t sites_made; /* entries of `sites` (the tree's nodes, or the slices) */
    layout layout;
    char *name;
    char (*keys)[KEY_ROOM]; /* the slices' keys */
    once_site *sites;       /* the sliced filter's, for their info */
    uint32_t wait_replicas, wait_timeout_ms;
    uint64_t waits, waits_short;
    once_filter *local;   /* the caller's, or NULL */
    once_count_clock clock; /* a count window's: over count_key */
    char count_key[KEY_ROOM];
    /* Whole slices (whole_slices.c) instead of the sliced filter: the failure policy
     * for events their slice did not answer, and what the producer counts itself. */
    whole_slices *whole;
    once_failure whole_policy;
    uint32_t whole_threshold;
    uint64_t events, failed_events, inserted, local_hits;
    /* Whole slices of a count window: the count as this producer last had it (its
     * tests' time), and the reads and reserves of it that failed. */
    uint64_t count_known, clock_failures;
};

/* Racing producers (once_cluster.h): one test-and-set on one key is atomic, and a
 * horizontal filter without a window decides an event so; anything else claims. */
static bool claims_needed(const layout *l)
{
    if (l->slice_filter != 0)
        return false; /* a key's whole slice answers it atomically */
    return l->slicing != ONCE_SLICING_HORIZONTAL || l->window_ms != 0 || l->window_events != 0;
}

void once_cluster_config_init(once_cluster_config *c, const char *const *seeds,
                              size_t seed_count, const char *name, uint32_t slices)
{
    memset(c, 0, sizeof *c);
    c->seeds = seeds;
    c->seed_count = seed_count;
    c->name = name;
    c->sliced.slicing = ONCE_SLICING_HORIZONTAL;
    c->sliced.slices = slices;
    c->sliced.capacity = 1000000;
    c->sliced.error = 0.001;
}

static once_status say(char *error, size_t room, once_status st, const char *fmt, ...)
{
    if (error != NULL && room > 0) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(error, room, fmt, args);
        va_end(args);
    }
    return st;
}

/* Run one command; its reply (freeReplyObject it) or NULL when unreachable. */
static redisReply *command(cluster_client *client, int argc, const char **argv,
                           const size_t *lens)
{
    cluster_command c = {.argc = argc, .argv = argv, .argv_len = lens, .key_index = 1};
    cluster_client_run(client, &c, 1);
    return c.status == CLUSTER_REPLIED ? c.reply : NULL;
}

/* The layout's id: random, so that a filter made again under a name is told apart. */
static void random_id(char out[17])
{
    uint64_t x = 0;
    if (once_random_seed(&x) != ONCE_OK)
        x = (uint64_t)(uintptr_t)out;
    snprintf(out, 17, "%016" PRIx64, x);
}

/* SLICE.RESERVE every whole slice of `want` (their keys in c->keys). */
static once_status reserve_whole_slices(once_cluster *c, const layout *want, char *error,
                                        size_t room)
{
    const char **keys = once_calloc(want->sites, sizeof *keys);
    if (keys == NULL)
        return say(error, room, ONCE_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < want->sites; i++)
        keys[i] = c->keys[i];
    whole_slices *w = whole_slices_new(c->client, keys, want->sites, want->seed, false);
    once_free_memory(keys);
    if (w == NULL)
        return say(error, room, ONCE_ERR_NOMEM, "out of memory");
    /* A count window's slices run on the count: N + 1, as slices of cells' timers. */
    uint64_t span = want->window_events ? want->window_events + 1 : want->window_ms;
    once_status st = whole_slices_reserve(w, want->slice_filter, want->slice_capacity,
                                          want->error, span, want->lag_ms, error, room);
    whole_slices_free(w);
    return st;
}

/* SLICE.CREATE every slice of `want` (their keys in c->keys); ONCE_OK, or why not in
 * `error`. */
static once_status create_slices(once_cluster *c, const layout *want, char *error, size_t room)
{
    if (want->slice_filter != 0)
        return reserve_whole_slices(c, want, error, room);
    uint32_t n = want->sites;
    cluster_command *commands = once_calloc(n, sizeof *commands);
    const char **argv = once_calloc((size_t)n * 8, sizeof *argv);
    size_t *lens = once_calloc((size_t)n * 8, sizeof *lens);
    char bits[24], window[24], jump[24]; /* every slice's alike */
    snprintf(bits, sizeof bits, "%" PRIu64, want->slice_bits);
    /* A count window's timers run on the count: N + 1 (slice/sliced.c, timer_span),
     * and any jump of it is a true one (other producers' deliveries). */
    snprintf(window, sizeof window, "%" PRIu64,
             want->window_events ? want->window_events + 1 : want->window_ms);
    snprintf(jump, sizeof jump, "%" PRIu64, (uint64_t)ONCE_MAX_TIME_MS);
    once_status st = ONCE_OK;
    if (commands == NULL || argv == NULL || lens == NULL)
        st = say(error, room, ONCE_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; st == ONCE_OK && i < n; i++) {
        const char **a = argv + 8 * (size_t)i;
        size_t *l = lens + 8 * (size_t)i;
        int argc = 4;
        a[0] = "SLICE.CREATE";
        a[1] = c->keys[i];
        a[2] = "BITS";
        a[3] = bits;
        if (want->window_ms != 0 || want->window_events != 0) {
            a[argc++] = "WINDOW";
            a[argc++] = window;
        }
        if (want->window_events != 0) {
            a[argc++] = "MAXJUMP";
            a[argc++] = jump;
        }
        for (int j = 0; j < argc; j++)
            l[j] = strlen(a[j]);
        commands[i] = (cluster_command){.argc = argc, .argv = a, .argv_len = l, .key_index = 1};
    }
    if (st == ONCE_OK)
        cluster_client_run(c->client, commands, n);
    for (uint32_t i = 0; commands != NULL && i < n; i++) {
        redisReply *r = commands[i].reply;
        if (st == ONCE_OK && commands[i].status != CLUSTER_REPLIED)
            st = say(error, room, ONCE_ERR_UNAVAILABLE,
                     "cannot create slice %s: its node cannot be reached", c->keys[i]);
        else if (st == ONCE_OK && (r == NULL || r->type == REDIS_REPLY_ERROR))
            st = say(error, room, ONCE_ERR_MISMATCH, "cannot create slice %s: %s", c->keys[i],
                     r != NULL && r->str != NULL ? r->str : "no reply");
        if (r != NULL)
            freeReplyObject(r);
    }
    once_free_memory(commands);
    once_free_memory(argv);
    once_free_memory(lens);
    return st;
}

/* A count window's clock at 0, unless it exists (another producer's, racing this one
 * to write the layout). */
static once_status create_count(once_cluster *c, char *error, size_t room)
{
    const char *argv[4] = {"SET", c->count_key, "0", "NX"};
    size_t lens[4] = {3, strlen(c->count_key), 1, 2};
    redisReply *r = command(c->client, 4, argv, lens);
    if (r == NULL)
        return say(error, room, ONCE_ERR_UNAVAILABLE,
                   "cannot create the count %s: its node cannot be reached", c->count_key);
    once_status st = r->type == REDIS_REPLY_ERROR
                         ? say(error, room, ONCE_ERR_MISMATCH, "cannot create the count %s: %s",
                               c->count_key, r->str)
                         : ONCE_OK;
    freeReplyObject(r);
    return st;
}

/* The count window's clock: read (n 0) or add n, by a script that fails on a missing
 * count.  The count as it is after, into *count. */
static const char COUNT_SCRIPT[] =
    "local v = redis.call('GET', KEYS[1])\n"
    "if not v then return redis.error_reply('NOCOUNT the count window clock is missing') end\n"
    "if ARGV[1] == '0' then return v end\n"
    "return redis.call('INCRBY', KEYS[1], ARGV[1])\n";

static once_status count_run(once_cluster *c, uint64_t n, uint64_t *count)
{
    char add[24];
    snprintf(add, sizeof add, "%" PRIu64, n);
    const char *argv[5] = {"EVAL", COUNT_SCRIPT, "1", c->count_key, add};
    size_t lens[5] = {4, sizeof COUNT_SCRIPT - 1, 1, strlen(c->count_key), strlen(add)};
    cluster_command command = {.argc = 5, .argv = argv, .argv_len = lens, .key_index = 3};
    cluster_client_run(c->client, &command, 1);
    redisReply *r = command.status == CLUSTER_REPLIED ? command.reply : NULL;
    once_status st = ONCE_ERR_UNAVAILABLE;
    char *end = NULL;
    if (r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= 0) {
        *count = (uint64_t)r->integer;
        st = ONCE_OK;
    } else if (r != NULL && r->type == REDIS_REPLY_STRING && r->len > 0 && r->str[0] >= '0' &&
               r->str[0] <= '9') {
        unsigned long long v = strtoull(r->str, &end, 10);
        if (end == r->str + r->len) {
            *count = v;
            st = ONCE_OK;
        }
    }
    if (command.reply != NULL)
        freeReplyObject(command.reply);
    return st;
}

static once_status count_read(void *context, uint64_t *count)
{
    return count_run(context, 0, count);
}

static once_status count_reserve(void *context, uint64_t n, uint64_t *first)
{
    uint64_t after = 0;
    once_status st = count_run(context, n, &after);
    if (st == ONCE_OK && after < n)
        st = ONCE_ERR_UNAVAILABLE;
    *first = after - n;
    return st;
}

/* The layout in the cluster (written by this producer when there was none) into
 * c->layout, checked against `want`. */
/* The layout's text, found in NAME:layout, as the copies are written again to hold
 * (their failures are not this producer's: a copy is written by every producer). */
static void write_copies(once_cluster *c, const char *text, size_t len)
{
    char keys[LAYOUT_COPIES][KEY_ROOM];
    const char *argv[LAYOUT_COPIES][3];
    size_t lens[LAYOUT_COPIES][3];
    cluster_command commands[LAYOUT_COPIES];
    for (uint32_t j = 0; j < LAYOUT_COPIES; j++) {
        layout_copy_key(c->name, j, keys[j], KEY_ROOM);
        argv[j][0] = "SET";
        argv[j][1] = keys[j];
        argv[j][2] = text;
        lens[j][0] = 3;
        lens[j][1] = strlen(keys[j]);
        lens[j][2] = len;
        commands[j] = (cluster_command){.argc = 3, .argv = argv[j], .argv_len = lens[j],
                                        .key_index = 1};
    }
    cluster_client_run(c->client, commands, LAYOUT_COPIES);
    for (uint32_t j = 0; j < LAYOUT_COPIES; j++)
        if (commands[j].reply != NULL)
            freeReplyObject(commands[j].reply);
}

/* NAME:layout's master cannot be reached: the first copy that answers a layout, or
 * NULL. */
static redisReply *read_a_copy(once_cluster *c)
{
    for (uint32_t j = 0; j < LAYOUT_COPIES; j++) {
        char key[KEY_ROOM];
        layout_copy_key(c->name, j, key, sizeof key);
        const char *get[2] = {"GET", key};
        size_t get_len[2] = {3, strlen(key)};
        redisReply *r = command(c->client, 2, get, get_len);
        if (r != NULL && r->type == REDIS_REPLY_STRING)
            return r;
        if (r != NULL)
            freeReplyObject(r);
    }
    return NULL;
}

static once_status settle_layout(once_cluster *c, const layout *want, bool seed_given,
                                 char *error, size_t room)
{
    char key[KEY_ROOM];
    layout_key(c->name, key, sizeof key);
    for (int attempt = 0; attempt < 3; attempt++) {
        const char *get[2] = {"GET", key};
        size_t get_len[2] = {3, strlen(key)};
        redisReply *r = command(c->client, 2, get, get_len);
        bool copy = r == NULL;
        if (copy && (r = read_a_copy(c)) == NULL)
            return say(error, room, ONCE_ERR_UNAVAILABLE,
                       "cannot read the layout %s: its node cannot be reached, nor a copy's",
                       key);
        if (r->type == REDIS_REPLY_STRING) {
            if (!copy)
                write_copies(c, r->str, r->len);
            layout have;
            char why[256];
            bool parsed = layout_parse(r->str, r->len, &have, why, sizeof why);
            freeReplyObject(r);
            if (!parsed)
                return say(error, room, ONCE_ERR_MISMATCH, "the key %s is not a layout: %s", key,
                           why);
            char diff[512];
            if (layout_differs(&have, want, seed_given, diff, sizeof diff)) {
                layout_free(&have);
                return say(error, room, ONCE_ERR_MISMATCH,
                           "the filter '%s' exists with another layout: %s", c->name, diff);
            }
            c->layout = have;
            return ONCE_OK;
        }
        bool missing = r->type == REDIS_REPLY_NIL;
        if (!missing) {
            once_status st = say(error, room, ONCE_ERR_MISMATCH, "cannot read the layout %s: %s",
                                 key, r->type == REDIS_REPLY_ERROR ? r->str : "not a string");
            freeReplyObject(r);
            return st;
        }
        freeReplyObject(r);
        /* None yet: make the slices, then write the layout (SET NX: one producer wins). */
        for (uint32_t i = 0; i < want->sites; i++)
            layout_slice_key(c->name, i, want->tags[i], c->keys[i], KEY_ROOM);
        once_status st = create_slices(c, want, error, room);
        if (st == ONCE_OK && want->window_events != 0)
            st = create_count(c, error, room);
        if (st != ONCE_OK)
            return st;
        char *text = layout_format(want);
        if (text == NULL)
            return say(error, room, ONCE_ERR_NOMEM, "out of memory");
        const char *set[4] = {"SET", key, text, "NX"};
        size_t set_len[4] = {3, strlen(key), strlen(text), 2};
        r = command(c->client, 4, set, set_len);
        once_free_memory(text);
        if (r == NULL)
            return say(error, room, ONCE_ERR_UNAVAILABLE,
                       "cannot write the layout %s: its node cannot be reached", key);
        freeReplyObject(r); /* OK, or nil when another producer's came first: read it */
    }
    return say(error, room, ONCE_ERR_UNAVAILABLE, "the layout %s would not settle", key);
}

/* What a filter and a tree open alike: the connection, the layout settled (`want`,
 * written when there is none), the keys and remote sites of its slices (site_room
 * entries of `sites` for the caller's). */
static once_status open_common(once_cluster *c, const once_cluster_config *config, layout *want,
                               bool seed_given, uint32_t site_room, char *error, size_t room)
{
    once_status st = ONCE_OK;
    if (!seed_given && once_random_seed(&want->seed) != ONCE_OK)
        want->seed = 0x6f6e6365u;
    random_id(want->id);
    want->tags = once_calloc(want->sites, sizeof *want->tags);
    c->keys = once_calloc(want->sites, sizeof *c->keys);
    c->sites = once_calloc(site_room, sizeof *c->sites);
    /* The failover hold is the routing's (routing.c, Design), in its terms: 0 none. */
    uint32_t hold = config->failover_hold_ms;
    cluster_options options = {
        .timeout_ms = config->timeout_ms,
        .hold_ms = hold == ONCE_CLUSTER_NO_HOLD ? 0 : hold ? hold : ONCE_CLUSTER_DEFAULT_HOLD_MS,
        .on_change = config->on_change,
        .change_context = config->change_context};
    char why[256] = "";
    if (c->name == NULL || want->tags == NULL || c->keys == NULL || c->sites == NULL) {
        st = say(error, room, ONCE_ERR_NOMEM, "out of memory");
    } else if ((c->client = cluster_client_connect(config->seeds, config->seed_count, &options,
                                                   why, sizeof why)) == NULL) {
        st = say(error, room, ONCE_ERR_UNAVAILABLE, "cannot reach the cluster: %s", why);
    } else if ((c->round = remote_round_new(c->client)) == NULL) {
        st = say(error, room, ONCE_ERR_NOMEM, "out of memory");
    } else {
        for (uint32_t i = 0; i < want->sites; i++)
            layout_tag(i, want->sites, want->tags[i]);
        st = settle_layout(c, want, seed_given, error, room);
    }
    once_free_memory(want->tags);
    want->tags = NULL;
    if (st != ONCE_OK)
        return st;
    /* The layout's tags and seed, whoever wrote it. */
    for (uint32_t i = 0; i < c->layout.sites; i++)
        layout_slice_key(c->name, i, c->layout.tags[i], c->keys[i], KEY_ROOM);
    bool timed = c->layout.window_ms != 0 || c->layout.window_events != 0;
    if (c->layout.slice_filter != 0) {
        const char **keys = once_calloc(c->layout.sites, sizeof *keys);
        for (uint32_t i = 0; keys != NULL && i < c->layout.sites; i++)
            keys[i] = c->keys[i];
        c->whole = keys != NULL ? whole_slices_new(c->client, keys, c->layout.sites,
                                                   c->layout.seed, timed)
                                : NULL;
        once_free_memory(keys);
        if (c->whole == NULL)
            return say(error, room, ONCE_ERR_NOMEM, "out of memory");
        /* A policy that prints a failed slice's lines owes them to it (backfill). */
        whole_slices_set_backfill(c->whole, c->whole_policy != ONCE_FAILURE_REPORT &&
                                                c->whole_threshold != 0);
        whole_slices_set_stamping(c->whole, c->layout.window_events != 0);
        if (c->layout.window_events != 0 && count_run(c, 0, &c->count_known) != ONCE_OK)
            c->clock_failures++; /* tests run at the slices' clocks until a reserve */
        return ONCE_OK;
    }
    for (uint32_t i = 0; st == ONCE_OK && i < c->layout.sites; i++) {
        st = remote_site_create(c->round, c->keys[i], c->layout.slice_bits, timed,
                                &c->sites[i]);
        c->sites_made += st == ONCE_OK;
    }
    return st;
}

once_status once_cluster_flush(once_cluster *c)
{
    if (c == NULL)
        return ONCE_ERR_INVALID;
    if (c->whole != NULL)
        whole_slices_flush(c->whole);
    if (c->sliced == NULL)
        return ONCE_OK;
    once_status st = once_sliced_flush(c->sliced); /* the last batch's claims */
    for (uint32_t i = 0; i < c->sites_made; i++)
        remote_site_flush(&c->sites[i]);
    return st;
}

void once_cluster_close(once_cluster *c)
{
    if (c == NULL)
        return;
    once_cluster_flush(c);
    if (c->sliced != NULL) {
        once_sliced_free(c->sliced); /* destroys the sites */
    } else if (c->tree != NULL) {
        once_tree_free(c->tree);
    } else if (c->sites != NULL) {
        for (uint32_t i = 0; i < c->sites_made; i++)
            if (c->sites[i].destroy != NULL)
                c->sites[i].destroy(c->sites[i].context);
    }
    whole_slices_free(c->whole);
    remote_round_free(c->round);
    cluster_client_free(c->client);
    layout_free(&c->layout);
    once_free_memory(c->sites);
    once_free_memory(c->keys);
    once_free_memory(c->name);
    once_free_memory(c);
}

static bool name_valid(const char *name)
{
    if (name == NULL || name[0] == 0 || strlen(name) > 200)
        return false;
    for (const char *p = name; *p; p++)
        if (*p == '{' || *p == '}' || *p == '\n' || *p == ' ')
            return false; /* a brace would be the slices' hash tag; the others the layout's */
    return true;
}

/* A leaf of another producer: never asked by this one (its events enter at its own
 * leaf), and failing if it were. */
static void foreign_leaf_run(void *context, once_site_request *requests, size_t count)
{
    (void)context;
    for (size_t i = 0; i < count; i++) {
        requests[i].status = ONCE_ERR_UNAVAILABLE;
        requests[i].all_set = false;
    }
}

static once_status open_tree(once_cluster *c, const once_cluster_config *config, char *error,
                             size_t room)
{
    once_tree_config tc = *config->tree;
    if (tc.root_slices > 1 || tc.concurrent || tc.top_down_level != 0)
        return say(error, room, ONCE_ERR_INVALID,
                   "a Bloom tree over a cluster has one key a node (no root slices), one "
                   "thread a producer and no top-down testing (it would ask other "
                   "producers' leaves)");
    /* Racing producers meet at the first node their paths share: a dense tree's
     * test-and-set there is atomic; a walk that tests, then sets, claims its nodes. */
    tc.claims = tc.mode == ONCE_TREE_SPARSE || tc.window_ms != 0;
    uint64_t bits = 0, nodes = 0, leaves = 0;
    uint32_t hashes = 0;
    once_status st = once_tree_geometry(&tc, &bits, &hashes, &nodes, &leaves);
    if (st != ONCE_OK)
        return say(error, room, st, "the tree's options are refused: %s", once_strerror(st));
    if (tc.levels < 2 || config->leaf >= leaves)
        return say(error, room, ONCE_ERR_INVALID,
                   "a tree over a cluster has 2 levels or more, and this producer's leaf is "
                   "one of its %" PRIu64,
                   leaves);
    uint64_t slice_bits = (bits + 63) / 64 * 64, most = config->max_slice_bytes
                                                            ? config->max_slice_bytes
                                                            : UINT64_C(32) << 20;
    /* A node's bytes as a slice of its own: a bit a cell, or a timer and a mark. */
    once_sliced_config one = {.slicing = ONCE_SLICING_HORIZONTAL, .slices = 1,
                              .bits = slice_bits, .hashes = hashes, .primitive = ONCE_FTTS,
                              .window_ms = tc.window_ms};
    uint64_t node_bytes = slice_bits / 8;
    if (once_sliced_first_bytes(&one, &node_bytes) != ONCE_OK)
        node_bytes = UINT64_MAX;
    if (node_bytes > most || slice_bits > ONCE_SLICE_MAX_BITS)
        return say(error, room, ONCE_ERR_TOO_LARGE,
                   "a node of %" PRIu64 " bits passes what a key may take: a smaller capacity",
                   bits);
    uint32_t internal = (uint32_t)(nodes - leaves);
    layout want = {.slicing = ONCE_SLICING_HORIZONTAL, .slices = internal, .parts = 1,
                   .sites = internal, .bits = bits, .slice_bits = slice_bits, .hashes = hashes,
                   .seed = tc.seed, .window_ms = tc.window_ms, .tree_levels = tc.levels,
                   .tree_fanout = tc.fanout};
    st = open_common(c, config, &want, tc.seed_is_set, (uint32_t)nodes, error, room);
    /* The leaves: this producer's in memory, the others' never asked. */
    for (uint64_t i = internal; st == ONCE_OK && i < nodes; i++) {
        if (i - internal == config->leaf) {
            once_memory_site_config leaf = {.bits = slice_bits, .window_ms = tc.window_ms};
            st = once_memory_site_create(&leaf, &c->sites[i]);
        } else {
            c->sites[i] = (once_site){.run = foreign_leaf_run};
        }
        c->sites_made += st == ONCE_OK;
    }
    if (st != ONCE_OK)
        return st;
    tc.seed = c->layout.seed;
    tc.seed_is_set = true;
    c->leaf = config->leaf;
    c->tree_policy = config->sliced.on_failure;
    c->tree_threshold = config->sliced.threshold;
    st = once_tree_create(&c->tree, &tc, c->sites);
    if (st != ONCE_OK)
        return say(error, room, st, "cannot build the tree: %s", once_strerror(st));
    return ONCE_OK;
}

/* A whole slice's capacity: the keys that hash to it are capacity / S on average,
 * binomially spread (standard deviation about sqrt(capacity / S)); four deviations more
 * keep a slice at or under its capacity whenever the whole filter is (a slice passes it
 * with chance about 3e-5), for 4 / sqrt(capacity / S) more memory: 1% at 10^5 keys a
 * slice.  A scalable slice past its capacity would open a sub-filter twice its first,
 * and a blocked one pass its rate. */
static uint64_t whole_slice_capacity(uint64_t capacity, uint32_t slices)
{
    uint64_t mean = capacity / slices + (capacity % slices != 0);
    return slices == 1 ? mean : mean + (uint64_t)ceil(4.0 * sqrt((double)mean));
}

static once_status open_whole(once_cluster *c, const once_cluster_config *config, char *error,
                              size_t room)
{
    const once_sliced_config *sc = &config->sliced;
    const once_structure *kind = once_structure_of(config->slice_filter);
    if (kind == NULL || (kind->kind != ONCE_KIND_STATIC && kind->kind != ONCE_KIND_GROWING &&
                         kind->kind != ONCE_KIND_TIME_WINDOW))
        return say(error, room, ONCE_ERR_INVALID,
                   "a whole slice is an all-time or time-window structure");
    bool counted = sc->window_events != 0;
    if (counted && (config->slice_filter != ONCE_TAGGED || sc->window_ms != 0 ||
                    config->lag_ms != 0 || config->local != NULL ||
                    sc->window_events > ONCE_MAX_TIME_MS / 2 - 1))
        return say(error, room, ONCE_ERR_INVALID,
                   "whole slices of a count window are tagged windows on the producers' "
                   "shared count: no time window, lag or local filter, and N below 2^61");
    if (!counted && (kind->kind == ONCE_KIND_TIME_WINDOW) != (sc->window_ms != 0))
        return say(error, room, ONCE_ERR_INVALID,
                   "whole slices of %s need %s", once_type_name(config->slice_filter),
                   sc->window_ms != 0 ? "an all-time structure without a window, or a time "
                                        "window's with one"
                                      : "a time window (window_ms)");
    if (sc->parts > 1 || sc->bits != 0 || sc->hashes != 0 || sc->lookup != ONCE_LOOKUP_PARALLEL ||
        sc->primitive != ONCE_FTTS || sc->refresh || sc->claims)
        return say(error, room, ONCE_ERR_INVALID,
                   "whole slices plan their own geometry from capacity and error, and answer "
                   "each key at one slice: no parts, bits, hashes, lookup, primitive, refresh "
                   "or claims");
    if (sc->capacity == 0 || sc->capacity > (UINT64_C(1) << 40) || !(sc->error > 0.0) ||
        !(sc->error < 1.0))
        return say(error, room, ONCE_ERR_INVALID,
                   "whole slices need a capacity from 1 to 2^40 and an error in (0, 1)");
    if (config->lag_ms != 0 &&
        (config->slice_filter != ONCE_TAGGED ||
         (config->lag_ms > sc->window_ms && config->lag_ms - sc->window_ms > sc->window_ms)))
        return say(error, room, ONCE_ERR_INVALID,
                   "a lag is for whole slices of the tagged window, at most twice its span");
    c->whole_policy = sc->on_failure;
    c->whole_threshold = sc->threshold;
    layout want = {.slicing = ONCE_SLICING_HORIZONTAL, .slices = sc->slices, .parts = 1,
                   .sites = sc->slices, .seed = sc->seed, .window_ms = sc->window_ms,
                   .window_events = sc->window_events,
                   .slice_filter = config->slice_filter,
                   .slice_capacity = whole_slice_capacity(sc->capacity, sc->slices),
                   .error = sc->error, .lag_ms = config->lag_ms};
    layout_count_key(config->name, c->count_key, sizeof c->count_key);
    return open_common(c, config, &want, sc->seed_is_set, sc->slices, error, room);
}

once_status once_cluster_open(once_cluster **out, const once_cluster_config *config,
                              char *error, size_t room)
{
    if (out == NULL)
        return ONCE_ERR_INVALID;
    *out = NULL;
    if (config == NULL || config->seeds == NULL || config->seed_count == 0)
        return say(error, room, ONCE_ERR_INVALID, "no node to connect to");
    if (!name_valid(config->name))
        return say(error, room, ONCE_ERR_INVALID,
                   "the filter's name must be 1 to 200 bytes without braces, spaces or "
                   "newlines");
    if (config->lag_ms != 0 && config->slice_filter == 0)
        return say(error, room, ONCE_ERR_INVALID,
                   "a lag is for whole slices of the tagged window: slices of cells and "
                   "trees keep timers, which judge each event at its own time");
    if (config->tree != NULL) {
        once_cluster *c = once_calloc(1, sizeof *c);
        if (c == NULL)
            return ONCE_ERR_NOMEM;
        c->name = cluster_strdup(config->name);
        once_status st = config->local != NULL || config->wait_replicas != 0
                             ? say(error, room, ONCE_ERR_INVALID,
                                   "a tree's leaf is the local filter, and it does not WAIT")
                             : open_tree(c, config, error, room);
        if (st != ONCE_OK) {
            once_cluster_close(c);
            return st;
        }
        *out = c;
        return ONCE_OK;
    }
    if (config->slice_filter != 0 && config->sliced.slicing == ONCE_SLICING_HORIZONTAL) {
        if (config->sliced.slices == 0 || config->sliced.slices > ONCE_MAX_SLICED_SITES ||
            config->sliced.threads != 0 || config->sliced.concurrent ||
            config->sliced.max_bytes != 0 || config->sliced.growth != ONCE_GROWTH_NONE)
            return say(error, room, ONCE_ERR_INVALID,
                       "whole slices: 1 to %u of them, and no threads, memory cap or growth "
                       "of the caller's",
                       ONCE_MAX_SLICED_SITES);
        once_cluster *c = once_calloc(1, sizeof *c);
        if (c == NULL)
            return ONCE_ERR_NOMEM;
        c->name = cluster_strdup(config->name);
        c->local = config->local;
        once_status st = open_whole(c, config, error, room);
        if (st != ONCE_OK) {
            once_cluster_close(c);
            return st;
        }
        *out = c;
        return ONCE_OK;
    }
    once_sliced_config sc = config->sliced;
    if (sc.threads != 0 || sc.concurrent || sc.max_bytes != 0 ||
        sc.growth != ONCE_GROWTH_NONE || sc.equal_timers != 0 || sc.count_clock != NULL)
        return say(error, room, ONCE_ERR_INVALID,
                   "over a cluster a filter has no threads, memory cap, growth, equal timers "
                   "or clock of the caller's");
    if (sc.window_events != 0 && (config->local != NULL || sc.refresh))
        return say(error, room, ONCE_ERR_INVALID,
                   "a count window over a cluster counts every producer's deliveries: a local "
                   "filter would count this producer's alone, and refresh is not offered");
    if (sc.slicing == ONCE_SLICING_SPLIT)
        return say(error, room, ONCE_ERR_INVALID, "split slicing is not offered over a cluster");
    uint64_t bits = 0, slice_bits = 0;
    uint32_t hashes = 0;
    once_status st = once_sliced_geometry(&sc, &bits, &hashes, &slice_bits);
    if (st != ONCE_OK)
        return say(error, room, st, "the sliced filter's options are refused: %s",
                   once_strerror(st));
    /* A slice's bytes: a bit a cell, or with a window a timer and the sweep's mark. */
    uint64_t first_bytes = 0, most = config->max_slice_bytes ? config->max_slice_bytes
                                                             : UINT64_C(32) << 20;
    uint32_t sites = sc.slices * (sc.parts ? sc.parts : 1);
    if (once_sliced_first_bytes(&sc, &first_bytes) == ONCE_OK && first_bytes / sites > most) {
        uint64_t need = (first_bytes + most - 1) / most;
        return say(error, room, ONCE_ERR_TOO_LARGE,
                   "a slice would take %" PRIu64 " bytes, past the %" PRIu64 " a slice may "
                   "take (moving a larger key stalls its node): use %" PRIu64 " slices or more",
                   first_bytes / sites, most, need);
    }
    if (slice_bits > ONCE_SLICE_MAX_BITS)
        return say(error, room, ONCE_ERR_TOO_LARGE,
                   "a slice of %" PRIu64 " bits passes the 2^32 a slice may hold: use more "
                   "slices",
                   slice_bits);
    uint32_t parts = sc.parts ? sc.parts : 1;
    layout want = {.slicing = sc.slicing, .slices = sc.slices, .parts = parts,
                   .sites = sc.slices * parts, .bits = bits, .slice_bits = slice_bits,
                   .hashes = hashes, .seed = sc.seed, .window_ms = sc.window_ms,
                   .window_events = sc.window_events};
    if (claims_needed(&want))
        sc.claims = true;
    /* A round of a batch costs a command a slice it touches and a round trip: the most
     * events a round, unless the caller chose. */
    if (sc.batch_events == 0)
        sc.batch_events = 4096;
    once_cluster *c = once_calloc(1, sizeof *c);
    if (c == NULL)
        return ONCE_ERR_NOMEM;
    c->local = config->local;
    c->name = cluster_strdup(config->name);
    c->wait_replicas = config->wait_replicas;
    /* A WAIT blocks its connection for up to its timeout: it must end well within the
     * reply timeout, or a node whose replica is gone (a promoted one has none) would
     * be taken for a dead one. */
    uint32_t timeout = config->timeout_ms ? config->timeout_ms : 1000;
    c->wait_timeout_ms = config->wait_timeout_ms ? config->wait_timeout_ms : 100;
    if (c->wait_timeout_ms > timeout / 2)
        c->wait_timeout_ms = timeout / 2;
    layout_count_key(config->name, c->count_key, sizeof c->count_key);
    st = open_common(c, config, &want, sc.seed_is_set, want.sites, error, room);
    if (st == ONCE_OK) {
        sc.seed = c->layout.seed;
        sc.seed_is_set = true;
        if (sc.window_events != 0) {
            c->clock = (once_count_clock){.context = c, .read = count_read,
                                          .reserve = count_reserve};
            sc.count_clock = &c->clock;
        }
        /* A policy that prints an event of a failed slice owes its sets to it. */
        remote_round_set_backfill(c->round, sc.on_failure != ONCE_FAILURE_REPORT &&
                                                sc.threshold != 0);
        st = once_sliced_create(&c->sliced, &sc, c->sites);
        if (st != ONCE_OK)
            say(error, room, st, "cannot build the sliced filter: %s", once_strerror(st));
    }
    if (st != ONCE_OK) {
        once_cluster_close(c);
        return st;
    }
    *out = c;
    return ONCE_OK;
}

/* WAIT on every node that took a write of the last batch (routed by a slice key it
 * served: a WAIT counts the replicas of the writes made on its own connection), and on
 * the count window's clock (a count a failover took back would hand its stamps out
 * again; on a node already waited for, its WAIT returns at once). */
static void wait_for_replicas(once_cluster *c)
{
    size_t nodes = cluster_node_count(c->client);
    if (nodes == 0)
        return;
    bool *wrote = once_calloc(nodes, sizeof *wrote);
    cluster_command *commands = once_calloc(nodes + 1, sizeof *commands);
    char replicas[16], timeout[16];
    snprintf(replicas, sizeof replicas, "%" PRIu32, c->wait_replicas);
    snprintf(timeout, sizeof timeout, "%" PRIu32, c->wait_timeout_ms);
    const char *argv[3] = {"WAIT", replicas, timeout};
    size_t lens[3] = {4, strlen(replicas), strlen(timeout)};
    size_t count = 0;
    for (uint32_t i = 0; wrote != NULL && commands != NULL && i < c->layout.sites; i++) {
        int node = -1;
        bool failed = true;
        if (c->whole != NULL) {
            whole_slice_info w;
            whole_slices_info(c->whole, i, &w);
            node = w.node;
            failed = w.failed;
        } else {
            remote_site_info info;
            remote_site_describe_remote(&c->sites[i], &info);
            node = info.node;
            failed = info.failed;
        }
        if (node < 0 || (size_t)node >= nodes || wrote[node] || failed)
            continue;
        wrote[node] = true;
        commands[count++] = (cluster_command){.argc = 3, .argv = argv, .argv_len = lens,
                                              .key_index = -1, .route_key = c->keys[i],
                                              .route_key_len = strlen(c->keys[i])};
    }
    if (commands != NULL && c->layout.window_events != 0)
        commands[count++] = (cluster_command){.argc = 3, .argv = argv, .argv_len = lens,
                                              .key_index = -1, .route_key = c->count_key,
                                              .route_key_len = strlen(c->count_key)};
    cluster_client_run(c->client, commands, count);
    for (size_t i = 0; i < count; i++) {
        redisReply *r = commands[i].reply;
        c->waits++;
        if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer < c->wait_replicas)
            c->waits_short++;
        if (r != NULL)
            freeReplyObject(r);
    }
    once_free_memory(wrote);
    once_free_memory(commands);
}

/* The failure policy's answer for an event its whole slice did not answer. */
static uint8_t policy_answer(const once_cluster *c)
{
    if (c->whole_policy == ONCE_FAILURE_REPORT)
        return ONCE_SLICED_UNDECIDED;
    return c->whole_threshold == 0; /* every failed position set: duplicate */
}

/*
 * A count window over whole slices (docs/CLUSTER.md, "Count windows").  Each slice is
 * a tagged window whose time is the shared count.  A round of at most N/16 lines is
 * test-and-added at the count this producer last had: a slice judges a line at its
 * clock when that is later (the stamps other producers wrote there), never past the
 * true count, and tags a new line there for now, so a producer racing on the key
 * finds it.  The count then gives the round's new lines (and those the failure policy
 * prints) their places, and each is stamped at its place: a tagged entry keeps the
 * later tick.  A line is so never forgotten before N others were delivered after it.
 * When the count cannot be reached, its new lines are left undecided, to the failure
 * policy, as slices of cells leave theirs (counted in clock_failures).
 */
static once_status counted_batch(once_cluster *c, const once_key *keys, size_t count,
                                 uint8_t *seen, bool *decided)
{
    uint64_t most = c->layout.window_events / 16 ? c->layout.window_events / 16 : 1;
    size_t room = count < most ? count : (size_t)most;
    once_key *round = once_malloc(room * sizeof *round);
    once_key *stamps = once_malloc(room * sizeof *stamps);
    uint8_t *scratch = once_malloc(room);
    bool *stamped = once_malloc(room * sizeof *stamped);
    size_t *line = once_malloc(room * sizeof *line); /* a stamp's line in the round */
    once_status st = ONCE_OK;
    if (round == NULL || stamps == NULL || scratch == NULL || stamped == NULL || line == NULL)
        st = ONCE_ERR_NOMEM;
    bool prints = policy_answer(c) == 0;
    for (size_t done = 0; st != ONCE_ERR_NOMEM && done < count; done += room) {
        size_t n = count - done < room ? count - done : room;
        for (size_t j = 0; j < n; j++) {
            round[j] = keys[done + j];
            round[j].time_ms = c->count_known;
        }
        once_status tested = whole_slices_batch(c->whole, round, n, seen + done, decided + done);
        if (tested == ONCE_ERR_NOMEM) {
            st = tested;
            break;
        }
        st = whole_slices_worse(st, tested);
        size_t fresh = 0;
        for (size_t j = 0; j < n; j++)
            if (decided[done + j] ? seen[done + j] == 0 : prints) {
                line[fresh] = j;
                stamps[fresh++] = round[j];
            }
        uint64_t first = 0;
        if (fresh == 0)
            continue;
        if (count_reserve(c, fresh, &first) != ONCE_OK) {
            c->clock_failures++;
            for (size_t i = 0; i < fresh; i++)
                decided[done + line[i]] = false;
            st = whole_slices_worse(st, ONCE_ERR_UNAVAILABLE);
            continue;
        }
        c->count_known = first + fresh;
        for (size_t i = 0; i < fresh; i++)
            stamps[i].time_ms = first + i;
        if (whole_slices_stamp(c->whole, stamps, fresh, scratch, stamped) == ONCE_ERR_NOMEM)
            st = ONCE_ERR_NOMEM;
    }
    once_free_memory(round);
    once_free_memory(stamps);
    once_free_memory(scratch);
    once_free_memory(stamped);
    once_free_memory(line);
    return st;
}

/* keys[0 .. count-1] at their whole slices, the local filter first (two-level
 * filtering, section 6: a key it holds is a repeat this producer sent, answered with no
 * message; a key the cluster decided new is added to it, an undecided one is not). */
static once_status whole_batch(once_cluster *c, const once_key *keys, size_t count,
                               uint8_t *seen)
{
    if (count == 0)
        return ONCE_OK;
    size_t sent = count;
    const once_key *ask = keys;
    once_key *misses = NULL;
    size_t *where = NULL;
    uint8_t *present = NULL, *answers = seen;
    bool *decided = once_malloc(count * sizeof *decided);
    once_status st = decided != NULL ? ONCE_OK : ONCE_ERR_NOMEM;
    if (st == ONCE_OK && c->local != NULL) {
        present = once_malloc(count);
        misses = once_malloc(count * sizeof *misses);
        where = once_malloc(count * sizeof *where);
        answers = once_malloc(count);
        st = present && misses && where && answers
                 ? once_query_batch(c->local, keys, count, present)
                 : ONCE_ERR_NOMEM;
        sent = 0;
        for (size_t i = 0; st == ONCE_OK && i < count; i++) {
            if (present[i]) {
                seen[i] = 1;
                c->local_hits++;
            } else {
                where[sent] = i;
                misses[sent++] = keys[i];
            }
        }
        ask = misses;
    }
    if (st == ONCE_OK && sent != 0)
        st = c->layout.window_events != 0 ? counted_batch(c, ask, sent, answers, decided)
                                          : whole_slices_batch(c->whole, ask, sent, answers,
                                                               decided);
    if (st == ONCE_OK || st == ONCE_ERR_UNAVAILABLE) {
        bool undecided = false;
        for (size_t j = 0; j < sent; j++) {
            if (!decided[j]) {
                answers[j] = policy_answer(c);
                undecided |= answers[j] == ONCE_SLICED_UNDECIDED;
                c->failed_events++;
            }
            c->inserted += decided[j] && answers[j] == 0;
        }
        c->events += count;
        st = undecided ? ONCE_ERR_UNAVAILABLE : ONCE_OK;
        for (size_t j = 0; c->local != NULL && j < sent; j++) {
            seen[where[j]] = answers[j];
            if (answers[j] == 0) {
                once_status added = once_add(c->local, misses[j].data, misses[j].len,
                                             misses[j].time_ms);
                if (added != ONCE_OK && st == ONCE_OK)
                    st = added;
            }
        }
    }
    once_free_memory(decided);
    once_free_memory(present);
    once_free_memory(misses);
    once_free_memory(where);
    if (answers != seen)
        once_free_memory(answers);
    return st;
}

once_status once_cluster_test_and_add_batch(once_cluster *c, const once_key *keys, size_t count,
                                            uint8_t *seen)
{
    if (c == NULL)
        return ONCE_ERR_INVALID;
    if (c->tree != NULL) { /* an event climbs from this producer's leaf, one at a time */
        bool undecided = false;
        for (size_t i = 0; i < count; i++) {
            bool dup = false;
            once_status st = once_tree_test_and_add_at(c->tree, c->leaf, keys[i].data,
                                                       keys[i].len, keys[i].time_ms, &dup);
            if (st != ONCE_OK && st != ONCE_ERR_UNAVAILABLE)
                return st;
            /* A node that cannot answer: the failure policy's answer (threshold 0, every
             * failed position set: duplicate; any other threshold: distinct). */
            if (st == ONCE_ERR_UNAVAILABLE && c->tree_policy == ONCE_FAILURE_REPORT) {
                seen[i] = ONCE_SLICED_UNDECIDED;
                undecided = true;
            } else if (st == ONCE_ERR_UNAVAILABLE) {
                seen[i] = c->tree_threshold == 0;
            } else {
                seen[i] = dup;
            }
        }
        return undecided ? ONCE_ERR_UNAVAILABLE : ONCE_OK;
    }
    /* Two-level filtering is the library's (section 6): the local filter answers the
     * keys it holds, the others go to the cluster in one batch. */
    once_status st =
        c->whole != NULL   ? whole_batch(c, keys, count, seen)
        : c->local != NULL
            ? once_sliced_test_and_add_local_batch(c->sliced, c->local, keys, count, seen)
            : once_sliced_test_and_add_batch(c->sliced, keys, count, seen);
    if (c->wait_replicas != 0 && count != 0)
        wait_for_replicas(c);
    return st;
}

once_sliced *once_cluster_sliced(const once_cluster *c)
{
    return c != NULL ? c->sliced : NULL;
}

/* A filter of whole slices' stats, in the sliced filter's fields that mean the same. */
static void whole_stats(const once_cluster *c, once_cluster_stats *s)
{
    once_sliced_stats *f = &s->sliced;
    f->slicing = ONCE_SLICING_HORIZONTAL;
    f->slices = f->sites = c->layout.slices;
    f->parts = 1;
    f->events = c->events;
    f->inserted = c->inserted;
    f->window_ms = c->layout.window_ms;
    f->window_events = c->layout.window_events;
    f->count = c->count_known;
    f->clock_failures = c->clock_failures;
    double sum = 0, squares = 0;
    uint32_t failed = 0;
    for (uint32_t i = 0; i < c->layout.sites; i++) {
        whole_slice_info info;
        whole_slices_info(c->whole, i, &info);
        f->messages += info.events; /* a request to a site each, as paper 000 counts */
        f->failed_messages += info.failed_events;
        f->bytes += info.held.bytes;
        s->slice_items += info.held.items;
        f->max_load = info.events > f->max_load ? info.events : f->max_load;
        sum += (double)info.events;
        squares += (double)info.events * (double)info.events;
        failed += info.failed;
        s->failed_slices += info.failed;
        s->missing_answers += info.missing;
        s->slice_failures += info.falls;
        s->owed += info.owed;
        s->backfilled += info.backfilled;
        s->given_up += info.given_up;
    }
    f->messages_per_event = f->events ? (double)f->messages / (double)f->events : 0.0;
    f->fairness = squares > 0 ? sum * sum / ((double)c->layout.sites * squares) : 1.0;
    f->failed_fraction = (double)failed / (double)c->layout.sites;
    f->filters = c->layout.sites;
    s->slice_filter = c->layout.slice_filter;
    s->lag_ms = c->layout.lag_ms;
    f->failed_events = c->failed_events; /* the stats' failed_events, below */
    s->local_hits = c->local_hits;
}

once_status once_cluster_get_stats(const once_cluster *c, once_cluster_stats *s)
{
    if (c == NULL || s == NULL)
        return ONCE_ERR_INVALID;
    memset(s, 0, sizeof *s);
    if (c->whole != NULL)
        whole_stats(c, s);
    s->is_tree = c->tree != NULL;
    once_status st = s->is_tree          ? once_tree_get_stats(c->tree, &s->tree)
                     : c->whole != NULL ? ONCE_OK
                                        : once_sliced_get_stats(c->sliced, &s->sliced);
    if (st != ONCE_OK)
        return st;
    memcpy(s->layout_id, c->layout.id, sizeof s->layout_id);
    s->nodes = (uint32_t)cluster_node_count(c->client);
    for (uint32_t i = 0; c->whole == NULL && i < c->layout.sites; i++) {
        remote_site_info info;
        remote_site_describe_remote(&c->sites[i], &info);
        s->failed_slices += info.failed;
        s->missing_answers += info.missing;
        s->slice_failures += info.falls;
        s->owed += info.owed;
        s->backfilled += info.backfilled;
        s->given_up += info.given_up;
    }
    cluster_stats routing;
    cluster_client_stats(c->client, &routing);
    s->commands = routing.messages;
    s->moved = routing.moved;
    s->ask = routing.ask;
    s->retries = routing.tryagain + routing.clusterdown;
    s->unreachable = routing.unreachable;
    s->reconnects = routing.reconnects;
    s->map_refreshes = routing.map_refreshes;
    s->held = routing.held;
    s->held_answered = routing.held_replied;
    s->held_expired = routing.held_expired;
    s->hold_ms = routing.hold_ms;
    s->failed_events = s->is_tree ? s->tree.failures : s->sliced.failed_events;
    s->waits = c->waits;
    s->waits_short = c->waits_short;
    if (c->whole == NULL)
        s->local_hits = s->sliced.local_hits;
    s->claims = !s->is_tree && claims_needed(&c->layout);
    return ONCE_OK;
}

once_status once_cluster_node_at(const once_cluster *c, uint32_t index, once_cluster_node *node)
{
    cluster_node_info info;
    if (c == NULL || node == NULL || !cluster_node_info_at(c->client, index, &info))
        return ONCE_ERR_INVALID;
    memset(node, 0, sizeof *node);
    memcpy(node->address, info.address, sizeof node->address);
    node->up = info.up;
    node->messages = info.messages;
    node->slots = info.slots;
    node->replicas = info.replicas;
    node->holding = info.holding;
    node->hold_expired = info.hold_expired;
    memcpy(node->why, info.why, sizeof node->why);
    for (uint32_t i = 0; i < c->layout.sites; i++) {
        int at = -1;
        if (c->whole != NULL) {
            whole_slice_info w;
            whole_slices_info(c->whole, i, &w);
            at = w.node;
        } else {
            remote_site_info r;
            remote_site_describe_remote(&c->sites[i], &r);
            at = r.node;
        }
        node->slices += at == (int)index;
    }
    return ONCE_OK;
}

bool once_cluster_slice_failed(const once_cluster *c, uint32_t slice, char *key, size_t room)
{
    if (c == NULL || slice >= c->layout.sites)
        return false;
    if (key != NULL && room > 0)
        snprintf(key, room, "%s", c->keys[slice]);
    if (c->whole != NULL) {
        whole_slice_info w;
        whole_slices_info(c->whole, slice, &w);
        return w.failed;
    }
    remote_site_info info;
    remote_site_describe_remote(&c->sites[slice], &info);
    return info.failed;
}

once_status once_cluster_slice_at(const once_cluster *c, uint32_t slice, once_cluster_slice *out)
{
    if (c == NULL || out == NULL || slice >= c->layout.sites)
        return ONCE_ERR_INVALID;
    memset(out, 0, sizeof *out);
    snprintf(out->key, sizeof out->key, "%s", c->keys[slice]);
    out->node = cluster_slot_node(c->client, cluster_key_slot(c->keys[slice],
                                                              strlen(c->keys[slice])));
    if (c->whole != NULL) {
        whole_slice_info w;
        whole_slices_info(c->whole, slice, &w);
        out->failed = w.failed;
        out->failures = w.falls;
        return ONCE_OK;
    }
    remote_site_info info;
    remote_site_describe_remote(&c->sites[slice], &info);
    out->failed = info.failed;
    out->failures = info.falls;
    return ONCE_OK;
}
