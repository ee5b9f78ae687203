/*
 * core/batch_loop.h - the batch loop of the layouts that run their own (once_filter_ops
 * batch): each key hashed and its lines requested some keys before it is probed.
 */
#ifndef ONCE_CORE_BATCH_LOOP_H
#define ONCE_CORE_BATCH_LOOP_H

#include "core/structure.h"

/* Lines a batch keeps requested at a time: about what one core's miss buffers hold. */
#define ONCE_LINES_IN_FLIGHT 24

/*
 * Key i + distance is hashed and handed to `prepare`, which fills the layout's
 * per-key record (`record_size` bytes in `ring`, ONCE_BATCH_LOOP_RING of them) and
 * requests the key's lines under the state of the moment.  Key i is then probed by
 * `step`, the layout's one-key operation, which takes from the record what an
 * insertion in between cannot have changed (the DBF's cells, which are every row's)
 * and works out the rest from the state it finds (the TLBF: a shift moves its
 * insertion slices, its clock expires slices; the timer filter: growth opens
 * sub-filters).  A request made stale by such a change is a wasted prefetch, never a
 * wrong answer: a batch answers exactly as the one-key calls in array order,
 * duplicates and mid-batch shifts included.  `ctx` is the layout's (its filter and
 * constants), handed to both.  `distance` (clamped to 1 .. ONCE_BATCH_LOOP_RING - 1) is
 * chosen by the layout from how many lines one key requests: enough keys ahead to
 * keep the memory busy, few enough that the lines are still cached when used.  Always
 * inlined with a constant `op`, so each operation gets its own loop with `prepare`
 * and `step` inlined.  (The APBF and APBBF run a loop of their own that also parks
 * searches, window/apbf_batch.c.)
 */
typedef void (*once_batch_loop_prepare_fn)(const void *ctx, void *record, const once_hash *h,
                                         once_batch_op op);
typedef once_status (*once_batch_loop_step_fn)(const void *ctx, void *record, uint64_t now_ms,
                                             once_batch_op op, bool *answer);
/* A second, nearer request (once_batch_loop_staged): from the prepared record, under
 * the state of the moment. */
typedef void (*once_batch_loop_near_fn)(const void *ctx, const void *record, once_batch_op op);

/*
 * once_batch_loop with a second request `near_distance` keys before a key's step
 * (clamped below `distance`), for a layout whose later lines depend on what the first
 * ones say (the tagged window asks its newest table, then requests the older ones' lines
 * for a key it lacks).  `near` NULL: the one-request loop.
 */
static inline __attribute__((always_inline)) once_status
once_batch_loop_staged(const once_batch_items *items, size_t count, const once_batch_op op,
                           uint8_t *out, size_t *done, size_t distance, size_t near_distance,
                           void *ring, size_t record_size, const void *ctx,
                           once_batch_loop_prepare_fn prepare, once_batch_loop_near_fn near,
                           once_batch_loop_step_fn step)
{
    if (distance >= ONCE_BATCH_LOOP_RING)
        distance = ONCE_BATCH_LOOP_RING - 1;
    if (distance == 0)
        distance = 1;
    if (near_distance >= distance)
        near_distance = distance - 1;
    if (near_distance == 0)
        near = NULL;
#define ONCE_RECORD(i) ((char *)ring + ((i) % ONCE_BATCH_LOOP_RING) * record_size)
    const once_batch_items in = *items;
    size_t ahead = count < distance ? count : distance;
    for (size_t i = 0; i < ahead; i++) {
        once_hash h = once_item_hash(&in, i);
        prepare(ctx, ONCE_RECORD(i), &h, op);
    }
    if (near != NULL)
        for (size_t i = 0; i < count && i < near_distance; i++)
            near(ctx, ONCE_RECORD(i), op);
    for (size_t i = 0; i < count; i++) {
        size_t next = i + distance;
        if (next < count) {
            once_hash h = once_item_hash(&in, next);
            prepare(ctx, ONCE_RECORD(next), &h, op);
        }
        if (near != NULL && i + near_distance < count)
            near(ctx, ONCE_RECORD(i + near_distance), op);
        bool answer = false;
        once_status st = step(ctx, ONCE_RECORD(i), once_item_time(&in, i), op, &answer);
        if (st != ONCE_OK) {
            *done = i;
            return st;
        }
        if (op != ONCE_OP_ADD)
            out[i] = answer;
    }
#undef ONCE_RECORD
    *done = count;
    return ONCE_OK;
}

static inline __attribute__((always_inline)) once_status
once_batch_loop(const once_batch_items *items, size_t count, const once_batch_op op,
                    uint8_t *out, size_t *done, size_t distance, void *ring,
                    size_t record_size, const void *ctx, once_batch_loop_prepare_fn prepare,
                    once_batch_loop_step_fn step)
{
    return once_batch_loop_staged(items, count, op, out, done, distance, 0, ring,
                                      record_size, ctx, prepare, NULL, step);
}

/* The loop for an operation known only at run time: a branch for each, so that each
 * still gets its own loop with `op` a constant in it. */
static inline __attribute__((always_inline)) once_status
once_batch_loop_staged_any(const once_batch_items *items, size_t count, once_batch_op op,
                               uint8_t *out, size_t *done, size_t distance, size_t near_distance,
                               void *ring, size_t record_size, const void *ctx,
                               once_batch_loop_prepare_fn prepare, once_batch_loop_near_fn near,
                               once_batch_loop_step_fn step)
{
    switch (op) {
    case ONCE_OP_QUERY:
        return once_batch_loop_staged(items, count, ONCE_OP_QUERY, out, done, distance,
                                          near_distance, ring, record_size, ctx, prepare, near,
                                          step);
    case ONCE_OP_ADD:
        return once_batch_loop_staged(items, count, ONCE_OP_ADD, out, done, distance,
                                          near_distance, ring, record_size, ctx, prepare, near,
                                          step);
    case ONCE_OP_TEST_AND_ADD:
        break;
    }
    return once_batch_loop_staged(items, count, ONCE_OP_TEST_AND_ADD, out, done, distance,
                                      near_distance, ring, record_size, ctx, prepare, near, step);
}

static inline __attribute__((always_inline)) once_status
once_batch_loop_any(const once_batch_items *items, size_t count, once_batch_op op,
                        uint8_t *out, size_t *done, size_t distance, void *ring,
                        size_t record_size, const void *ctx, once_batch_loop_prepare_fn prepare,
                        once_batch_loop_step_fn step)
{
    return once_batch_loop_staged_any(items, count, op, out, done, distance, 0, ring,
                                          record_size, ctx, prepare, NULL, step);
}

/*
 * A layout's batch entry (once_filter_ops.batch) over the loop: `name`(f, items, count,
 * op, out, done) runs the batch with `record`s in a ring on its stack, `distance` keys
 * ahead (an expression of f and op), `prepare` and `step` the layout's.  Flattened, so
 * that the loop, `prepare` and `step` are one function for each operation.
 */
#define ONCE_BATCH_LOOP_ENTRY(name, record, distance, prepare, step)                           \
    static __attribute__((flatten)) once_status name(once_filter *f,                           \
                                                     const once_batch_items *items,            \
                                                     size_t count, once_batch_op op,           \
                                                     uint8_t *out, size_t *done)               \
    {                                                                                          \
        record ring[ONCE_BATCH_LOOP_RING];                                                     \
        return once_batch_loop_any(items, count, op, out, done, (distance), ring,              \
                                   sizeof ring[0], f, prepare, step);                          \
    }

#endif /* ONCE_CORE_BATCH_LOOP_H */
