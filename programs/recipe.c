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

#include <stdio.h>

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
