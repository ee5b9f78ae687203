/*
 * recipe.c - the filter a command line describes (recipe.h).
 *
 * The options decide the structure (options.c), and here its shards and its first
 * size: the same options build the same filter, with the same seed the same answers,
 * whichever front end reads them.
 */
#include "recipe.h"
#include "report.h"

#include "once_advanced.h"
#include "once_cluster.h"

#include <stdio.h>
#include <string.h>

/*
 * The shards of a new filter: --shards, else TIME_WINDOW_SHARDS for a time window and
 * one for the others, whatever --threads: the geometry decides the answers, so it must
 * not depend on T (a state saved by one run resumes in any other).  A time window's
 * answer costs more than the rest of a line (a tagged one's, 100 ns a key), so one
 * answering thread is the run's pace, and its shards' answers on two threads took
 * --span 1h 1.6x faster.  A filter's answer is a line or a few (10 ns for the blocked
 * one): on two cores the run is already balanced with its answers on one thread
 * (1.8x), and gathering and forking made it slower (0.70 to 1.20 s, 20M lines);
 * --shards gives more cores their share (options.c refuses it for a count window,
 * whose last N keys are the stream's).
 */
#define TIME_WINDOW_SHARDS 16u

/* Fewer shards for a small --capacity: a shard of a few keys grows from too small a start
 * (--filter timer --capacity 100 in 16 shards passed 12x its rate) and gains nothing. */
#define MIN_SHARD_CAPACITY 1024u

uint32_t recipe_shards(const cli_options *o)
{
    if (o->shards_given)
        return o->shards;
    if (once_structure_of(o->type)->kind != ONCE_KIND_TIME_WINDOW)
        return 1;
    uint64_t most = o->capacity / MIN_SHARD_CAPACITY;
    return most >= TIME_WINDOW_SHARDS ? TIME_WINDOW_SHARDS : most > 1 ? (uint32_t)most : 1;
}

/*
 * A new filter of `c` in `shards` shards (1: one piece).  A --max-memory too small for
 * every shard's fixed part (a TLBF's slice table) is too small for shards, not for the
 * filter: unless --shards asked for them, such a window is one piece, which depends on
 * the options alone, as the geometry must.
 */
static once_status create_in_shards(once_filter **out, const once_config *c, uint32_t shards,
                                    bool shards_given)
{
    if (shards <= 1)
        return once_create(out, c);
    once_status st = once_create_sharded(out, c, shards);
    return st == ONCE_ERR_TOO_LARGE && !shards_given ? once_create(out, c) : st;
}

int recipe_create(const cli_options *o, uint64_t guess, once_filter **out, char *why,
                  size_t why_len)
{
    once_config c;
    once_config_init(&c, o->type);
    c.capacity = o->capacity;
    c.error = o->error;
    c.seed = o->seed;
    c.seed_is_set = o->seed_given;
    c.window = o->window;
    c.level = o->level;
    c.policy = o->refresh ? ONCE_POLICY_REFRESH : ONCE_POLICY_FIRST;
    c.span_ms = o->span_ms;
    c.lag_ms = o->lag_ms;
    c.max_bytes = o->max_memory;
    uint32_t shards = recipe_shards(o);
    once_status st = ONCE_ERR_FULL;
    if (guess > c.capacity) {
        once_config guessed = c;
        guessed.capacity = guess;
        st = create_in_shards(out, &guessed, shards, o->shards_given);
        if (st == ONCE_OK && o->max_memory != 0 && once_bytes(*out) > o->max_memory / 2) {
            once_free(*out); /* past half the cap: the default first guess */
            *out = NULL;
            st = ONCE_ERR_FULL;
        }
    }
    if (st != ONCE_OK)
        st = create_in_shards(out, &c, shards, o->shards_given);
    if (st == ONCE_OK)
        return 0;
    if (st != ONCE_ERR_NOMEM && c.max_bytes != 0 && report_cap_at_creation(&c, why, why_len))
        return EXIT_USAGE;
    snprintf(why, why_len, "cannot build a %s filter for %s %llu at error %g: %s",
             once_type_name(o->type), o->window_given ? "window" : "capacity",
             (unsigned long long)(o->window_given ? o->window : o->capacity), o->error,
             once_strerror(st));
    return st == ONCE_ERR_NOMEM ? EXIT_IO : EXIT_USAGE;
}

/* The cluster filter of the options (recipe.h). */
int recipe_cluster_open(const cli_options *o, void (*on_change)(void *), void *context,
                        once_cluster **out, once_filter **local, uint32_t *hold_ms,
                        uint64_t *geometry_bytes, char *why, size_t why_len)
{
    enum { MAX_SEEDS = 16 };
    char text[1024]; /* the seeds' text: the client copies what it parses */
    const char *seeds[MAX_SEEDS];
    size_t count = 0;
    snprintf(text, sizeof text, "%s", o->cluster);
    for (char *save = NULL, *p = strtok_r(text, ",", &save); p && count < MAX_SEEDS;
         p = strtok_r(NULL, ",", &save))
        seeds[count++] = p;
    once_cluster_config c;
    once_cluster_config_init(&c, seeds, count, o->cluster_key, o->slices);
    once_tree_config tree = {.mode = ONCE_TREE_DENSE,
                             .levels = o->tree_levels,
                             .fanout = o->tree_fanout,
                             .capacity = o->capacity,
                             .error = o->error,
                             .seed = o->seed,
                             .seed_is_set = o->seed_given,
                             .window_ms = o->span_ms};
    if (o->tree_levels != 0) { /* of the sliced config, a tree takes the failure policy */
        c.tree = &tree;
        c.leaf = o->leaf;
    }
    c.sliced.slicing = o->slicing;
    c.sliced.parts = o->parts;
    c.sliced.capacity = o->window_given ? o->window : o->capacity; /* N keys at most */
    c.sliced.error = o->error;
    c.sliced.seed = o->seed;
    c.sliced.seed_is_set = o->seed_given;
    c.sliced.window_ms = o->span_ms;
    c.sliced.window_events = o->window_given ? o->window : 0;
    c.wait_replicas = o->wait ? 1 : 0;
    c.slice_filter = o->whole ? o->type : 0;
    c.lag_ms = o->whole ? o->lag_ms : 0;
    *out = NULL;
    *local = NULL;
    *hold_ms = o->failover_hold_given ? (uint32_t)o->failover_hold_ms
                                      : ONCE_CLUSTER_DEFAULT_HOLD_MS;
    c.failover_hold_ms = *hold_ms == 0 ? ONCE_CLUSTER_NO_HOLD : *hold_ms;
    c.on_change = on_change;
    c.change_context = context;
    uint64_t bits = 0, slice_bits = 0;
    uint32_t k = 0;
    if (o->tree_levels != 0) {
        uint64_t nodes = 0, leaves = 0;
        if (once_tree_geometry(&tree, &bits, &k, &nodes, &leaves) != ONCE_OK) {
            snprintf(why, why_len, "--tree: the tree's options are refused");
            return EXIT_USAGE;
        }
    } else if (o->whole) {
        k = 0; /* a whole slice's failure is its events': no positions to count */
    } else if (once_sliced_geometry(&c.sliced, &bits, &k, &slice_bits) != ONCE_OK) {
        snprintf(why, why_len, "--cluster: the sliced filter's options are refused");
        return EXIT_USAGE;
    }
    /* The policy for a slice that cannot answer: every position counts as set
     * (duplicate), none may fail (distinct), or at least X reached (threshold:X). */
    c.sliced.on_failure = ONCE_FAILURE_THRESHOLD;
    c.sliced.threshold = o->on_failed_slice == FAILED_SLICE_DUPLICATE   ? 0
                         : o->on_failed_slice == FAILED_SLICE_DISTINCT ? k
                                                                        : o->failed_slice_threshold;
    if (o->whole) { /* a whole slice's event has no positions: duplicate, or new */
        if (o->on_failed_slice != FAILED_SLICE_DUPLICATE &&
            o->on_failed_slice != FAILED_SLICE_DISTINCT) {
            snprintf(why, why_len, "--on-failed-slice threshold:X counts the positions of "
                                   "slices of cells (--slicing); a whole slice's events are "
                                   "duplicate or distinct");
            return EXIT_USAGE;
        }
        c.sliced.threshold = o->on_failed_slice == FAILED_SLICE_DUPLICATE ? 0 : 1;
    }
    if (c.sliced.threshold > k && !o->whole) {
        snprintf(why, why_len, "--on-failed-slice threshold:%u: at most k = %u positions",
                 c.sliced.threshold, k);
        return EXIT_USAGE;
    }
    if (o->local_filter) {
        once_config lc;
        once_config_init(&lc, o->span_given ? cli_time_window_type(o) : ONCE_BLOCKED);
        lc.capacity = o->capacity;
        lc.error = o->error;
        lc.span_ms = o->span_ms;
        lc.max_time_jump_ms = 0;
        once_status st = once_create(local, &lc);
        if (st != ONCE_OK) {
            snprintf(why, why_len, "--local-filter: %s", once_strerror(st));
            return st == ONCE_ERR_NOMEM ? EXIT_IO : EXIT_USAGE;
        }
        c.local = *local;
    }
    char reason[RECIPE_WHY_MAX - 64];
    once_status st = once_cluster_open(out, &c, reason, sizeof reason);
    if (st != ONCE_OK) {
        snprintf(why, why_len, "--cluster %s --key %s: %s", o->cluster, o->cluster_key, reason);
        once_free(*local);
        *local = NULL;
        return st == ONCE_ERR_MISMATCH || st == ONCE_ERR_INVALID || st == ONCE_ERR_TOO_LARGE
                   ? EXIT_USAGE
                   : EXIT_IO;
    }
    /* A timed slice's bytes are the server's: as the geometry gives them here. */
    *geometry_bytes = 0;
    if (o->tree_levels == 0)
        (void)once_sliced_first_bytes(&c.sliced, geometry_bytes);
    return 0;
}
