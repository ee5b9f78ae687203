/*
 * slice/wire.c - site requests and their answers as bytes, for a slice behind a network
 * (once_sliced.h, "Slices kept apart"; docs/CLUSTER.md, "The slice command").
 *
 * Design
 *   A producer sends one message per slice per batch (paper 000, section 3.2: a
 *   message costs more than an item), so a batch's requests to a slice travel as one
 *   binary argument, and their answers as one binary reply: one bit per request, all
 *   set or not, and the few requests that failed listed after.  Everything is
 *   little-endian and fixed-width; positions take 32 bits, which is why a slice holds
 *   at most ONCE_SLICE_MAX_BITS cells.
 *
 *   Requests:  u8 version (1), u8 flags (bit 0: each request carries its time; bit 1:
 *              its claim and release), u32 count, then per request u8 op,
 *              u8 positions, [u64 time_ms], [u64 claim, u64 release], and its
 *              positions as u32.
 *   Answers:   u8 version (1), u8 flags (bit 0: the claim bits follow), u32 count,
 *              the slice as it is after the requests (u64 cells a sub-filter, u64
 *              cells set, u32 sub-filters: the producer's live estimates come from
 *              every slice's fill, whoever set it), ceil(count / 8) bytes of all_set
 *              bits (bit i of byte i / 8, low bit first), u32 failures, then per
 *              failure u32 index and u8 reason (ONCE_SLICE_FAILED_*), then
 *              [ceil(count / 8) bytes of claim_lost bits].
 *
 *   Whole slices (once_sliced.h, "Whole slices") take events instead of positions:
 *   Events:    u8 version (2), u8 flags (bit 0: each event carries its time),
 *              u32 count, then per event its digest (u64 lo, u64 hi) and
 *              [u64 time_ms].
 *   Verdicts:  u8 version (2), u8 flags (0), u32 count, the slice as it is after
 *              them (u64 bytes, u64 items: the producer reports the filter's
 *              memory from them), ceil(count / 8) bytes of seen bits,
 *              u32 failures, then per failure u32 index and u8 reason.
 *   Version 2 tells an events message from a requests one, so a message sent to the
 *   wrong command is refused whole.
 *
 *   The decoder trusts nothing: a version, flag, op or length it does not know, a
 *   count the bytes cannot hold, or bytes left over is ONCE_ERR_CORRUPT, before the
 *   caller gets any request.
 */
#include "once_sliced.h"

#include "core/codec.h"

#include <string.h>

#define WIRE_VERSION 1
#define FLAG_TIMED 1u
#define FLAG_CLAIMS 2u
#define ANSWER_CLAIMS 1u
#define REQUEST_HEADER 6u
#define ANSWER_HEADER 26u
#define EVENTS_VERSION 2
#define EVENTS_HEADER 6u
#define VERDICTS_HEADER 22u

static bool any_claims(const once_site_request *requests, size_t count)
{
    for (size_t r = 0; r < count; r++)
        if (requests[r].claim != 0 || requests[r].release != 0)
            return true;
    return false;
}

static size_t request_bytes(const once_site_request *q, bool timed, bool claims)
{
    return 2 + (timed ? 8 : 0) + (claims ? 16 : 0) + (size_t)q->count * 4;
}

size_t once_slice_requests_size(const once_site_request *requests, size_t count, bool timed)
{
    size_t bytes = REQUEST_HEADER;
    bool claims = any_claims(requests, count);
    for (size_t r = 0; r < count; r++)
        bytes += request_bytes(&requests[r], timed, claims);
    return bytes;
}

once_status once_slice_requests_encode(const once_site_request *requests, size_t count,
                                       bool timed, uint8_t *out, size_t room, size_t *written)
{
    if ((requests == NULL && count != 0) || out == NULL || written == NULL ||
        count > UINT32_MAX)
        return ONCE_ERR_INVALID;
    size_t need = once_slice_requests_size(requests, count, timed);
    if (room < need)
        return ONCE_ERR_INVALID;
    bool claims = any_claims(requests, count);
    uint8_t *p = out;
    *p++ = WIRE_VERSION;
    *p++ = (uint8_t)((timed ? FLAG_TIMED : 0) | (claims ? FLAG_CLAIMS : 0));
    once_le_write(p, count, 4);
    p += 4;
    for (size_t r = 0; r < count; r++) {
        const once_site_request *q = &requests[r];
        if (q->count > UINT8_MAX || q->op > ONCE_SITE_TEST_AND_SET)
            return ONCE_ERR_INVALID;
        *p++ = (uint8_t)q->op;
        *p++ = (uint8_t)q->count;
        if (timed) {
            once_le_write(p, q->time_ms, 8);
            p += 8;
        }
        if (claims) {
            once_le_write(p, q->claim, 8);
            once_le_write(p + 8, q->release, 8);
            p += 16;
        }
        for (uint32_t i = 0; i < q->count; i++) {
            if (q->positions[i] > UINT32_MAX)
                return ONCE_ERR_INVALID;
            once_le_write(p, q->positions[i], 4);
            p += 4;
        }
    }
    *written = need;
    return ONCE_OK;
}

/* Walk the requests of a message: count them and their positions, and, with `requests`
 * not NULL, fill them (positions into `positions`, in order). */
static once_status walk_requests(const uint8_t *in, size_t len, size_t *requests_out,
                                 size_t *positions_out, once_site_request *requests,
                                 uint64_t *positions)
{
    if (len < REQUEST_HEADER || in[0] != WIRE_VERSION || (in[1] & ~(FLAG_TIMED | FLAG_CLAIMS)) != 0)
        return ONCE_ERR_CORRUPT;
    bool timed = (in[1] & FLAG_TIMED) != 0, claims = (in[1] & FLAG_CLAIMS) != 0;
    size_t fixed = 2 + (timed ? 8u : 0u) + (claims ? 16u : 0u);
    uint64_t count = once_le32_read(in + 2);
    size_t at = REQUEST_HEADER, total = 0;
    /* Each request takes at least its two bytes: a count the rest cannot hold is
     * refused before anything is read for it. */
    if (count > (len - at) / 2)
        return ONCE_ERR_CORRUPT;
    for (uint64_t r = 0; r < count; r++) {
        if (len - at < fixed)
            return ONCE_ERR_CORRUPT;
        uint8_t op = in[at], n = in[at + 1];
        at += 2;
        if (op > ONCE_SITE_TEST_AND_SET)
            return ONCE_ERR_CORRUPT;
        uint64_t time_ms = 0, claim = 0, release = 0;
        if (timed) {
            time_ms = once_le64_read(in + at);
            at += 8;
        }
        if (claims) {
            claim = once_le64_read(in + at);
            release = once_le64_read(in + at + 8);
            at += 16;
        }
        if ((len - at) / 4 < n)
            return ONCE_ERR_CORRUPT;
        if (requests != NULL) {
            once_site_request *q = &requests[r];
            memset(q, 0, sizeof *q);
            q->op = (once_site_op)op;
            q->count = n;
            q->time_ms = time_ms;
            q->claim = claim;
            q->release = release;
            q->positions = positions + total;
            for (uint32_t i = 0; i < n; i++)
                positions[total + i] = once_le32_read(in + at + 4 * (size_t)i);
        }
        at += 4 * (size_t)n;
        total += n;
    }
    if (at != len)
        return ONCE_ERR_CORRUPT;
    *requests_out = (size_t)count;
    *positions_out = total;
    return ONCE_OK;
}

once_status once_slice_requests_count(const uint8_t *in, size_t len, size_t *requests,
                                      size_t *positions)
{
    if (in == NULL || requests == NULL || positions == NULL)
        return ONCE_ERR_INVALID;
    return walk_requests(in, len, requests, positions, NULL, NULL);
}

once_status once_slice_requests_decode(const uint8_t *in, size_t len, once_site_request *requests,
                                       uint64_t *positions)
{
    size_t count = 0, total = 0;
    if (in == NULL || requests == NULL || positions == NULL)
        return ONCE_ERR_INVALID;
    return walk_requests(in, len, &count, &total, requests, positions);
}

/* ------------------------------------------------------------ answers */

static uint8_t failure_reason(once_status st)
{
    switch (st) {
    case ONCE_ERR_FULL:
        return ONCE_SLICE_FAILED_FULL;
    case ONCE_ERR_TIME:
        return ONCE_SLICE_FAILED_TIME;
    default:
        return ONCE_SLICE_FAILED_OTHER;
    }
}

static once_status reason_status(uint8_t reason)
{
    switch (reason) {
    case ONCE_SLICE_FAILED_FULL:
        return ONCE_ERR_FULL;
    case ONCE_SLICE_FAILED_TIME:
        return ONCE_ERR_TIME;
    default:
        return ONCE_ERR_UNAVAILABLE;
    }
}

static bool any_claim_lost(const once_site_request *requests, size_t count)
{
    for (size_t r = 0; r < count; r++)
        if (requests[r].claim_lost)
            return true;
    return false;
}

size_t once_slice_answers_size(const once_site_request *requests, size_t count)
{
    size_t failures = 0;
    for (size_t r = 0; r < count; r++)
        failures += requests[r].status != ONCE_OK;
    size_t bitmap = (count + 7) / 8;
    return ANSWER_HEADER + bitmap + 4 + failures * 5 +
           (any_claim_lost(requests, count) ? bitmap : 0);
}

once_status once_slice_answers_encode(const once_site_request *requests, size_t count,
                                      const once_site_info *site, uint8_t *out, size_t room,
                                      size_t *written)
{
    if ((requests == NULL && count != 0) || out == NULL || written == NULL ||
        count > UINT32_MAX)
        return ONCE_ERR_INVALID;
    size_t need = once_slice_answers_size(requests, count);
    if (room < need)
        return ONCE_ERR_INVALID;
    memset(out, 0, need);
    bool claims = any_claim_lost(requests, count);
    out[0] = WIRE_VERSION;
    out[1] = claims ? ANSWER_CLAIMS : 0;
    once_le_write(out + 2, count, 4);
    if (site != NULL) {
        once_le_write(out + 6, site->cells, 8);
        once_le_write(out + 14, site->cells_set, 8);
        once_le_write(out + 22, site->filters, 4);
    }
    uint8_t *bits = out + ANSWER_HEADER;
    uint8_t *failures = bits + (count + 7) / 8;
    uint8_t *p = failures + 4;
    uint32_t failed = 0;
    for (size_t r = 0; r < count; r++) {
        if (requests[r].all_set)
            bits[r / 8] |= (uint8_t)(1u << (r % 8));
        if (requests[r].status != ONCE_OK) {
            once_le_write(p, r, 4);
            p[4] = failure_reason(requests[r].status);
            p += 5;
            failed++;
        }
    }
    once_le_write(failures, failed, 4);
    for (size_t r = 0; claims && r < count; r++)
        if (requests[r].claim_lost)
            p[r / 8] |= (uint8_t)(1u << (r % 8));
    *written = need;
    return ONCE_OK;
}

once_status once_slice_answers_decode(const uint8_t *in, size_t len, once_site_request *requests,
                                      size_t count, once_site_info *site)
{
    if (in == NULL || (requests == NULL && count != 0))
        return ONCE_ERR_INVALID;
    size_t bitmap = (count + 7) / 8;
    if (len < ANSWER_HEADER + bitmap + 4 || in[0] != WIRE_VERSION ||
        (in[1] & ~ANSWER_CLAIMS) != 0 || once_le32_read(in + 2) != count)
        return ONCE_ERR_CORRUPT;
    bool claims = (in[1] & ANSWER_CLAIMS) != 0;
    uint64_t cells = once_le64_read(in + 6), cells_set = once_le64_read(in + 14);
    uint32_t filters = once_le32_read(in + 22);
    if (cells_set > cells * (uint64_t)filters || filters > ONCE_MEMORY_SITE_MAX_FILTERS)
        return ONCE_ERR_CORRUPT;
    if (site != NULL)
        *site = (once_site_info){.cells = cells, .cells_set = cells_set, .filters = filters};
    const uint8_t *bits = in + ANSWER_HEADER, *failures = bits + bitmap;
    uint64_t failed = once_le32_read(failures);
    if (failed > count || len != ANSWER_HEADER + bitmap + 4 + failed * 5 + (claims ? bitmap : 0))
        return ONCE_ERR_CORRUPT;
    const uint8_t *lost = failures + 4 + failed * 5;
    /* Unused bits of the last byte are zero in a well-formed answer. */
    if (count % 8 != 0 && ((bits[bitmap - 1] >> (count % 8)) != 0 ||
                           (claims && (lost[bitmap - 1] >> (count % 8)) != 0)))
        return ONCE_ERR_CORRUPT;
    for (size_t r = 0; r < count; r++) {
        requests[r].all_set = (bits[r / 8] >> (r % 8)) & 1;
        requests[r].claim_lost = claims && ((lost[r / 8] >> (r % 8)) & 1);
        requests[r].status = ONCE_OK;
    }
    const uint8_t *p = failures + 4;
    for (uint64_t i = 0; i < failed; i++, p += 5) {
        uint32_t index = once_le32_read(p);
        if (index >= count || p[4] < ONCE_SLICE_FAILED_FULL || p[4] > ONCE_SLICE_FAILED_OTHER ||
            requests[index].status != ONCE_OK)
            return ONCE_ERR_CORRUPT;
        requests[index].status = reason_status(p[4]);
        requests[index].all_set = false;
    }
    return ONCE_OK;
}

/* ------------------------------------------------------------ whole slices */

size_t once_slice_events_size(size_t count, bool timed)
{
    return EVENTS_HEADER + count * (timed ? 24u : 16u);
}

once_status once_slice_events_encode(const once_slice_event *events, size_t count, bool timed,
                                     uint8_t *out, size_t room, size_t *written)
{
    if ((events == NULL && count != 0) || out == NULL || written == NULL ||
        count > UINT32_MAX || room < once_slice_events_size(count, timed))
        return ONCE_ERR_INVALID;
    uint8_t *p = out;
    *p++ = EVENTS_VERSION;
    *p++ = timed ? FLAG_TIMED : 0;
    once_le_write(p, count, 4);
    p += 4;
    for (size_t i = 0; i < count; i++) {
        once_le_write(p, events[i].digest.lo, 8);
        once_le_write(p + 8, events[i].digest.hi, 8);
        p += 16;
        if (timed) {
            once_le_write(p, events[i].time_ms, 8);
            p += 8;
        }
    }
    *written = (size_t)(p - out);
    return ONCE_OK;
}

/* The count of a well-formed events message, and whether it is timed; false for any
 * other bytes. */
static bool events_shape(const uint8_t *in, size_t len, size_t *count, bool *timed)
{
    if (in == NULL || len < EVENTS_HEADER || in[0] != EVENTS_VERSION ||
        (in[1] & ~FLAG_TIMED) != 0)
        return false;
    *timed = (in[1] & FLAG_TIMED) != 0;
    uint64_t n = once_le32_read(in + 2);
    size_t each = *timed ? 24u : 16u;
    if (n > (len - EVENTS_HEADER) / each || len != EVENTS_HEADER + n * each)
        return false;
    *count = (size_t)n;
    return true;
}

once_status once_slice_events_count(const uint8_t *in, size_t len, size_t *count)
{
    bool timed = false;
    if (count == NULL)
        return ONCE_ERR_INVALID;
    return events_shape(in, len, count, &timed) ? ONCE_OK : ONCE_ERR_CORRUPT;
}

once_status once_slice_events_decode(const uint8_t *in, size_t len, once_slice_event *events)
{
    size_t count = 0;
    bool timed = false;
    if (events == NULL)
        return ONCE_ERR_INVALID;
    if (!events_shape(in, len, &count, &timed))
        return ONCE_ERR_CORRUPT;
    const uint8_t *p = in + EVENTS_HEADER;
    for (size_t i = 0; i < count; i++) {
        events[i] = (once_slice_event){.digest = {once_le64_read(p), once_le64_read(p + 8)}};
        p += 16;
        if (timed) {
            events[i].time_ms = once_le64_read(p);
            p += 8;
        }
    }
    return ONCE_OK;
}

size_t once_slice_verdicts_size(const once_slice_event *events, size_t count)
{
    size_t failures = 0;
    for (size_t i = 0; i < count; i++)
        failures += events[i].status != ONCE_OK;
    return VERDICTS_HEADER + (count + 7) / 8 + 4 + failures * 5;
}

once_status once_slice_verdicts_encode(const once_slice_event *events, size_t count,
                                       const once_slice_held *held, uint8_t *out, size_t room,
                                       size_t *written)
{
    if ((events == NULL && count != 0) || out == NULL || written == NULL ||
        count > UINT32_MAX)
        return ONCE_ERR_INVALID;
    size_t need = once_slice_verdicts_size(events, count);
    if (room < need)
        return ONCE_ERR_INVALID;
    memset(out, 0, need);
    out[0] = EVENTS_VERSION;
    once_le_write(out + 2, count, 4);
    if (held != NULL) {
        once_le_write(out + 6, held->bytes, 8);
        once_le_write(out + 14, held->items, 8);
    }
    uint8_t *bits = out + VERDICTS_HEADER, *failures = bits + (count + 7) / 8;
    uint8_t *p = failures + 4;
    uint32_t failed = 0;
    for (size_t i = 0; i < count; i++) {
        if (events[i].status != ONCE_OK) {
            once_le_write(p, i, 4);
            p[4] = failure_reason(events[i].status);
            p += 5;
            failed++;
        } else if (events[i].seen) {
            bits[i / 8] |= (uint8_t)(1u << (i % 8));
        }
    }
    once_le_write(failures, failed, 4);
    *written = need;
    return ONCE_OK;
}

once_status once_slice_verdicts_decode(const uint8_t *in, size_t len, once_slice_event *events,
                                       size_t count, once_slice_held *held)
{
    if (in == NULL || (events == NULL && count != 0))
        return ONCE_ERR_INVALID;
    size_t bitmap = (count + 7) / 8;
    if (len < VERDICTS_HEADER + bitmap + 4 || in[0] != EVENTS_VERSION || in[1] != 0 ||
        once_le32_read(in + 2) != count)
        return ONCE_ERR_CORRUPT;
    const uint8_t *bits = in + VERDICTS_HEADER, *failures = bits + bitmap;
    uint64_t failed = once_le32_read(failures);
    if (failed > count || len != VERDICTS_HEADER + bitmap + 4 + failed * 5 ||
        (count % 8 != 0 && (bits[bitmap - 1] >> (count % 8)) != 0))
        return ONCE_ERR_CORRUPT;
    for (size_t i = 0; i < count; i++) {
        events[i].seen = (bits[i / 8] >> (i % 8)) & 1;
        events[i].status = ONCE_OK;
    }
    const uint8_t *p = failures + 4;
    for (uint64_t f = 0; f < failed; f++, p += 5) {
        uint32_t index = once_le32_read(p);
        if (index >= count || p[4] < ONCE_SLICE_FAILED_FULL || p[4] > ONCE_SLICE_FAILED_OTHER ||
            events[index].status != ONCE_OK || events[index].seen)
            return ONCE_ERR_CORRUPT;
        events[index].status = reason_status(p[4]);
    }
    if (held != NULL)
        *held = (once_slice_held){.bytes = once_le64_read(in + 6),
                                  .items = once_le64_read(in + 14)};
    return ONCE_OK;
}
