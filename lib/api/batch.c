/*
 * api/batch.c - the batch calls: many keys (or digests) a call, answered exactly as
 * the one-key calls would answer them in array order (api/filter.c states the
 * invariants).  A batch only overlaps the keys' memory waits: each key is hashed and
 * its lines requested a few keys before it is probed.
 */
#include "api/api.h"

/*
 * The one batch path, over items that are keys or digests (once_batch_items): a
 * structure's fused loop, or the generic loop below.  Keys are hashed ONCE_BATCH_AHEAD
 * positions before they are probed (core/structure.h).
 */

static inline void batch_advance(const once_filter *f, const once_batch_items *items,
                                 size_t count, once_hash *ring, size_t next)
{
    if (next < count) {
        once_hash *h = &ring[next & (ONCE_BATCH_LOOP_RING - 1)];
        *h = once_item_hash(items, next);
        f->ops->prefetch(f, h);
    }
}

/* Insertions into a structure that tests first (add_tests_first) through its fused
 * loop: they are its test-and-adds, counted as such, their answers dropped. */
static once_status add_by_testing(once_filter *f, const once_batch_items *items, size_t count,
                                  size_t *done)
{
    uint8_t seen[256];
    *done = 0;
    while (*done < count) {
        once_batch_items rest = once_items_from(items, *done);
        size_t n = count - *done < sizeof seen ? count - *done : sizeof seen, took = 0;
        once_status st = f->ops->batch(f, &rest, n, ONCE_OP_TEST_AND_ADD, seen, &took);
        for (size_t i = 0; i < took; i++)
            f->items += !seen[i];
        *done += took;
        if (st != ONCE_OK)
            return st;
    }
    return ONCE_OK;
}

/* Arguments already checked; `out` gets the answers (unused for ONCE_OP_ADD), *done
 * the keys that took effect (all, or those before the one refused). */
once_status once_run_batch(once_filter *f, const once_batch_items *items, size_t count,
                             once_batch_op op, uint8_t *out, size_t *done)
{
    once_status st;
    *done = count;
    if (f->ops->batch != NULL && op == ONCE_OP_ADD && f->ops->add_tests_first)
        return add_by_testing(f, items, count, done);
    if (f->ops->batch != NULL) {
        st = f->ops->batch(f, items, count, op, out, done);
        if (op == ONCE_OP_ADD)
            f->items += *done;
        else if (op == ONCE_OP_TEST_AND_ADD)
            for (size_t i = 0; i < *done; i++)
                f->items += !out[i];
        return st;
    }
    const once_batch_items in = *items; /* a local: the answer stores cannot alias it */
    once_hash ring[ONCE_BATCH_LOOP_RING];
    for (size_t i = 0; i < ONCE_BATCH_AHEAD; i++)
        batch_advance(f, &in, count, ring, i);
    for (size_t i = 0; i < count; i++) {
        batch_advance(f, &in, count, ring, i + ONCE_BATCH_AHEAD);
        const once_hash *h = &ring[i & (ONCE_BATCH_LOOP_RING - 1)];
        uint64_t now_ms = once_item_time(&in, i);
        if (op == ONCE_OP_QUERY) {
            out[i] = f->ops->query(f, h, now_ms);
            continue;
        }
        if (op == ONCE_OP_ADD) {
            st = once_add_hashed(f, h, now_ms);
        } else {
            bool was = false;
            st = f->ops->test_and_add(f, h, now_ms, &was);
            if (st == ONCE_OK) {
                out[i] = was;
                f->items += !was;
            }
        }
        if (st != ONCE_OK) {
            *done = i;
            return st;
        }
    }
    return ONCE_OK;
}

/* Check the arguments, then run.  Nothing happens unless all are valid; a query batch
 * also refuses, before it answers any key, a time a write would refuse. */
static once_status checked_batch(once_filter *f, const once_batch_items *items, size_t count,
                                 once_batch_op op, uint8_t *out, size_t *done)
{
    *done = 0;
    if (f == NULL || (items->keys == NULL && items->hashes == NULL && count != 0))
        return ONCE_ERR_INVALID;
    if (op != ONCE_OP_ADD && out == NULL && count != 0)
        return ONCE_ERR_INVALID;
    if (f->ops->positions_only)
        return ONCE_ERR_UNSUPPORTED;
    for (size_t i = 0; items->keys != NULL && i < count; i++)
        if (items->keys[i].data == NULL && items->keys[i].len != 0)
            return ONCE_ERR_INVALID;
    if (op == ONCE_OP_QUERY && f->ops->clock != NULL) {
        /* A query moves no clock: read it once.  Digests without times are all at 0:
         * one check stands for all. */
        uint64_t latest = 0;
        bool started = f->ops->clock(f, &latest);
        size_t times = items->keys == NULL && items->times == NULL && count != 0 ? 1 : count;
        for (size_t i = 0; i < times; i++)
            if (!once_time_admissible(f, latest, started, once_item_time(items, i)))
                return ONCE_ERR_TIME;
    }
    return once_run_batch(f, items, count, op, out, done);
}

static once_status key_batch(once_filter *f, const once_key *keys, size_t count,
                             once_batch_op op, uint8_t *out, size_t *done)
{
    once_batch_items items = {keys, NULL, NULL, f != NULL ? f->seed : 0};
    size_t ignored;
    done = done != NULL ? done : &ignored;
    *done = 0;
    if (keys == NULL && count != 0)
        return ONCE_ERR_INVALID;
    return checked_batch(f, &items, count, op, out, done);
}

static once_status digest_batch(once_filter *f, const once_digest *digests,
                                const uint64_t *times_ms, size_t count, once_batch_op op,
                                uint8_t *out, size_t *done)
{
    once_batch_items items = {NULL, digests, times_ms, 0};
    size_t ignored;
    done = done != NULL ? done : &ignored;
    *done = 0;
    if (digests == NULL && count != 0)
        return ONCE_ERR_INVALID;
    return checked_batch(f, &items, count, op, out, done);
}

once_status once_add_batch(once_filter *f, const once_key *keys, size_t count)
{
    return key_batch(f, keys, count, ONCE_OP_ADD, NULL, NULL);
}

/* Queries never write: the fused loops and the generic one take the filter as
 * writable only because one loop serves the three operations. */
once_status once_query_batch(const once_filter *f, const once_key *keys, size_t count,
                             uint8_t *present)
{
    return key_batch((once_filter *)f, keys, count, ONCE_OP_QUERY, present, NULL);
}

once_status once_test_and_add_batch(once_filter *f, const once_key *keys, size_t count,
                                    uint8_t *seen)
{
    return key_batch(f, keys, count, ONCE_OP_TEST_AND_ADD, seen, NULL);
}

once_status once_test_and_add_batch_partial(once_filter *f, const once_key *keys, size_t count,
                                            uint8_t *seen, size_t *done)
{
    return key_batch(f, keys, count, ONCE_OP_TEST_AND_ADD, seen, done);
}

once_status once_add_digest_batch(once_filter *f, const once_digest *digests,
                                  const uint64_t *times_ms, size_t count)
{
    return digest_batch(f, digests, times_ms, count, ONCE_OP_ADD, NULL, NULL);
}

once_status once_query_digest_batch(const once_filter *f, const once_digest *digests,
                                    const uint64_t *times_ms, size_t count, uint8_t *present)
{
    return digest_batch((once_filter *)f, digests, times_ms, count, ONCE_OP_QUERY, present,
                        NULL);
}

once_status once_test_and_add_digest_batch(once_filter *f, const once_digest *digests,
                                           const uint64_t *times_ms, size_t count,
                                           uint8_t *seen)
{
    return digest_batch(f, digests, times_ms, count, ONCE_OP_TEST_AND_ADD, seen, NULL);
}

once_status once_test_and_add_digest_batch_partial(once_filter *f, const once_digest *digests,
                                                   const uint64_t *times_ms, size_t count,
                                                   uint8_t *seen, size_t *done)
{
    return digest_batch(f, digests, times_ms, count, ONCE_OP_TEST_AND_ADD, seen, done);
}
