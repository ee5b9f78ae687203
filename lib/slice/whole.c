/*
 * slice/whole.c - a whole slice runs a producer's events (once_sliced.h, "Whole slices").
 *
 * Design
 *   A whole slice is any filter of the registry kept at a site of its own: the
 *   producer digests each key with the layout's seed, picks its slice with
 *   once_shard_of, and sends the slice the digests with their event times.  The slice
 *   answers each as the filter's own test-and-add would, in the structure's own batch
 *   loop (api/batch.c), so a slice holds exactly the filter a single node would for
 *   its share of the keys.
 *
 *   A remote producer is not trusted: every time is checked before any event runs, so
 *   a message with one out of range changes nothing.  An event the filter refuses (full,
 *   or a clock jump past the structure's bound) is marked with its reason and the
 *   events after it still run: one outlier costs one answer, not the message.
 *
 *   A stamp (once_slice_events_stamp) is the structure's add, one event at a time: it
 *   runs only for a count window's new lines, a share of a batch, and an add of a key
 *   held refreshes it, which the batch loops (test-and-add) do not do.  It counts an
 *   item only for a key the filter did not hold (one stamped whose test-and-add this
 *   slice never saw).
 *
 * Invariants
 *   - an event marked ONCE_OK has `seen` as the filter's test-and-add answered it (a
 *     stamp: false);
 *   - a refused event has `seen` false and changed nothing.
 */
#include "api/api.h"
#include "once_sliced.h"

#define EVENTS_ROUND 256u /* events gathered for one batch call */

/* Every time in range, or ONCE_ERR_INVALID before any event runs. */
static once_status check_events(const once_filter *f, const once_slice_event *events,
                                size_t count)
{
    if (f == NULL || (events == NULL && count != 0))
        return ONCE_ERR_INVALID;
    for (size_t i = 0; i < count; i++)
        if (events[i].time_ms > ONCE_MAX_TIME_MS)
            return ONCE_ERR_INVALID;
    return ONCE_OK;
}

/* Why an event was refused, as its answer says it. */
static once_status refusal(once_status st)
{
    return st == ONCE_ERR_FULL || st == ONCE_ERR_TIME ? st : ONCE_ERR_UNAVAILABLE;
}

static void held_now(const once_filter *f, once_slice_held *held)
{
    /* Not once_get_stats: some structures count their set cells for it, a scan the
     * server would pay at every message. */
    if (held != NULL)
        *held = (once_slice_held){.bytes = once_bytes(f), .items = once_items(f)};
}

once_status once_slice_events_stamp(once_filter *f, once_slice_event *events, size_t count,
                                    once_slice_held *held)
{
    once_status st = check_events(f, events, count);
    if (st != ONCE_OK)
        return st;
    for (size_t i = 0; i < count; i++) {
        /* A stamp of a key held is not an item more: the filter's count of items stays
         * the keys inserted, as SLICE.INFO shows it. */
        const once_hash *h = &events[i].digest;
        bool held_before = f->ops->query(f, h, events[i].time_ms);
        st = f->ops->add(f, h, events[i].time_ms);
        if (st == ONCE_OK && !held_before)
            f->items++;
        events[i].seen = false;
        events[i].status = st == ONCE_OK ? ONCE_OK : refusal(st);
    }
    held_now(f, held);
    return ONCE_OK;
}

once_status once_slice_events_run(once_filter *f, once_slice_event *events, size_t count,
                                  once_slice_held *held)
{
    once_status checked = check_events(f, events, count);
    if (checked != ONCE_OK)
        return checked;
    /* The batch call runs a round's events through the structure's own loop and stops
     * at a refused one: it is marked and the round goes on after it. */
    once_digest digests[EVENTS_ROUND];
    uint64_t times[EVENTS_ROUND];
    uint8_t seen[EVENTS_ROUND];
    for (size_t at = 0; at < count;) {
        size_t n = count - at < EVENTS_ROUND ? count - at : EVENTS_ROUND;
        for (size_t i = 0; i < n; i++) {
            digests[i] = events[at + i].digest;
            times[i] = events[at + i].time_ms;
        }
        size_t done = 0;
        once_status st =
            once_test_and_add_digest_batch_partial(f, digests, times, n, seen, &done);
        for (size_t i = 0; i < done; i++)
            events[at + i] = (once_slice_event){.digest = digests[i], .time_ms = times[i],
                                                .seen = seen[i] != 0, .status = ONCE_OK};
        at += done;
        if (st != ONCE_OK && done < n) {
            events[at].seen = false;
            events[at].status = refusal(st);
            at++;
        }
    }
    held_now(f, held);
    return ONCE_OK;
}
