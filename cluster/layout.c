/*
 * cluster/layout.c - what the producers of a filter in a cluster agree on, written
 * once in the key NAME:layout (docs/CLUSTER.md, "The layout").
 *
 * Design
 *   The layout is text, one "field value" line each, so that an operator reads it with
 *   GET.  The first producer writes it with SET NX; a producer that finds one compares
 *   its own options with it field by field and is refused with the fields named (a
 *   producer with another m or seed would place every key elsewhere, and the filter
 *   would answer nothing right for either).  The random id tells a filter made again
 *   under the same name from the one before it.
 *
 *   The layout is also kept in LAYOUT_COPIES copies whose tags spread over the slots,
 *   so that a producer starts while the master of NAME:layout is down: NAME:layout
 *   alone decides which layout wins (SET NX), and every producer that reads it writes
 *   the copies again, so they hold what it holds.
 *
 *   Slices spread over the slots: Redis Cluster routes a key by CRC16 of its hash tag,
 *   and naive tags ("0", "1", "2") land wherever their CRC falls (3 slices over 3
 *   masters once fell 1, 2, 0: two on one master).  Site i's tag is searched so that
 *   its slot is near (i + 1/2) 16384 / S, the middle of the i-th S-th of the slots: an
 *   even slot map then gives each master its share of slices, whatever S.
 *
 * Invariants
 *   - layout_parse accepts exactly what layout_format writes: every field once, in
 *     range, the tag count equal to S S'; window_events in versions 2 and 4 alone;
 *     whole slices in versions 3 and 4 alone;
 *   - a tag is at most LAYOUT_MAX_TAG - 1 characters of [0-9.].
 */
#include "layout.h"
#include "memory.h"
#include "routing.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Version 1: every layout without a count window, as it always was.  Version 2 adds
 * the line "window_events N" after slice_bits, and is written only for a count window:
 * a producer that reads version 1 alone refuses it rather than take N for a time. */
#define LAYOUT_HEADER "once cluster layout 1"
#define LAYOUT_HEADER_2 "once cluster layout 2"
/* Version 3: whole slices, horizontal, each a filter of a structure; its own fields
 * (no bits, hashes or slice_bits: a slice plans its geometry from its capacity and
 * error).  A producer that reads versions 1 and 2 alone refuses it. */
#define LAYOUT_HEADER_3 "once cluster layout 3"
/* Version 4: whole slices of a count window, tagged windows on the producers' shared
 * count: version 3's fields (window and lag 0) and "window_events N" after them.  A
 * producer that reads versions 1 to 3 alone refuses it. */
#define LAYOUT_HEADER_4 "once cluster layout 4"
/* How many candidates the tag search tries before it takes the nearest seen. */
#define TAG_TRIES 200000u

static uint32_t slot_distance(uint32_t a, uint32_t b)
{
    return a > b ? a - b : b - a;
}

void layout_tag(uint32_t site, uint32_t sites, char tag[LAYOUT_MAX_TAG])
{
    uint32_t target = (uint32_t)(((2 * (uint64_t)site + 1) * CLUSTER_SLOT_COUNT) / (2 * sites));
    uint32_t tolerance = CLUSTER_SLOT_COUNT / (4 * sites);
    uint32_t best = UINT32_MAX, best_j = 0;
    char candidate[LAYOUT_MAX_TAG];
    for (uint32_t j = 0; j < TAG_TRIES; j++) {
        int n = snprintf(candidate, sizeof candidate, "%" PRIu32 ".%" PRIu32, site, j);
        uint32_t d = slot_distance(cluster_key_slot(candidate, (size_t)n), target);
        if (d < best) {
            best = d;
            best_j = j;
        }
        if (d <= tolerance)
            break;
    }
    snprintf(tag, LAYOUT_MAX_TAG, "%" PRIu32 ".%" PRIu32, site, best_j);
}

void layout_key(const char *name, char *out, size_t room)
{
    snprintf(out, room, "%s:layout", name);
}

void layout_slice_key(const char *name, uint32_t site, const char *tag, char *out, size_t room)
{
    snprintf(out, room, "%s:slice:%" PRIu32 ":{%s}", name, site, tag);
}

void layout_copy_key(const char *name, uint32_t copy, char *out, size_t room)
{
    char tag[LAYOUT_MAX_TAG];
    layout_tag(copy, LAYOUT_COPIES, tag);
    snprintf(out, room, "%s:layout:{%s}", name, tag);
}

void layout_count_key(const char *name, char *out, size_t room)
{
    snprintf(out, room, "%s:count", name);
}

char *layout_format(const layout *l)
{
    size_t room = 512 + (size_t)l->sites * (LAYOUT_MAX_TAG + 1);
    char *text = once_malloc(room);
    if (text == NULL)
        return NULL;
    int n = l->slice_filter != 0
                ? snprintf(text, room,
                           "%s\nid %s\nslicing %s\nslices %" PRIu32 "\nfilter %s\ncapacity %" PRIu64
                           "\nerror %.17g\nseed %" PRIu64 "\nwindow %" PRIu64
                           "\nlag %" PRIu64,
                           l->window_events != 0 ? LAYOUT_HEADER_4 : LAYOUT_HEADER_3, l->id,
                           once_slicing_name(l->slicing), l->slices,
                           once_type_name(l->slice_filter), l->slice_capacity, l->error,
                           l->seed, l->window_ms, l->lag_ms)
                : snprintf(text, room,
                     "%s\nid %s\nslicing %s\nslices %" PRIu32 "\nparts %" PRIu32
                                   "\nbits %" PRIu64 "\nhashes %" PRIu32 "\nseed %" PRIu64
                                   "\nwindow %" PRIu64 "\nslice_bits %" PRIu64,
                     l->window_events != 0 ? LAYOUT_HEADER_2 : LAYOUT_HEADER, l->id,
                     once_slicing_name(l->slicing), l->slices, l->parts, l->bits, l->hashes,
                     l->seed, l->window_ms, l->slice_bits);
    size_t used = (size_t)n;
    if (l->window_events != 0)
        used += (size_t)snprintf(text + used, room - used, "\nwindow_events %" PRIu64,
                                 l->window_events);
    if (l->tree_levels != 0)
        used += (size_t)snprintf(text + used, room - used, "\ntree %" PRIu32 " %" PRIu32,
                                 l->tree_levels, l->tree_fanout);
    used += (size_t)snprintf(text + used, room - used, "\ntags");
    for (uint32_t i = 0; i < l->sites; i++)
        used += (size_t)snprintf(text + used, room - used, " %s", l->tags[i]);
    snprintf(text + used, room - used, "\n");
    return text;
}

void layout_free(layout *l)
{
    once_free_memory(l->tags);
    l->tags = NULL;
}

static bool fail(char *error, size_t room, const char *fmt, ...)
{
    if (error != NULL && room > 0) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(error, room, fmt, args);
        va_end(args);
    }
    return false;
}

static bool slicing_of(const char *name, once_slicing *out)
{
    static const once_slicing all[] = {ONCE_SLICING_HORIZONTAL, ONCE_SLICING_VERTICAL,
                                       ONCE_SLICING_DICED_HV, ONCE_SLICING_DICED_VH,
                                       ONCE_SLICING_SPLIT};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(once_slicing_name(all[i]), name) == 0) {
            *out = all[i];
            return true;
        }
    return false;
}

/* One "field value" line from *p (within end): its value as text, without the name. */
static bool line_value(const char **p, const char *end, const char *field, char *value,
                       size_t room)
{
    size_t flen = strlen(field);
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (nl == NULL || (size_t)(nl - *p) <= flen + 1 || memcmp(*p, field, flen) != 0 ||
        (*p)[flen] != ' ' || (size_t)(nl - *p) - flen - 1 >= room)
        return false;
    size_t vlen = (size_t)(nl - *p) - flen - 1;
    memcpy(value, *p + flen + 1, vlen);
    value[vlen] = 0;
    *p = nl + 1;
    return true;
}

static bool number(const char *text, uint64_t max, uint64_t *out)
{
    if (*text < '0' || *text > '9')
        return false;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (*end != 0 || v > max)
        return false;
    *out = v;
    return true;
}

static bool parse_tags(const char *p, const char *end, layout *out, char *error, size_t room);

/* Version 3's fields after the slicing: slices, filter, capacity, error, seed, window,
 * lag; with `counted` (version 4) then window_events, the filter tagged, window and
 * lag 0. */
static bool parse_whole(const char **p, const char *end, layout *out, bool counted, char *error,
                        size_t room)
{
    char value[64];
    uint64_t slices = 0;
    if (out->slicing != ONCE_SLICING_HORIZONTAL)
        return fail(error, room, "its slices are whole filters, which only horizontal slicing has");
    if (!line_value(p, end, "slices", value, sizeof value) ||
        !number(value, ONCE_MAX_SLICED_SITES, &slices) || slices == 0)
        return fail(error, room, "its slices is missing or out of range");
    const once_structure *kind = NULL;
    if (!line_value(p, end, "filter", value, sizeof value) ||
        once_type_from_name(value, &out->slice_filter) != ONCE_OK ||
        (kind = once_structure_of(out->slice_filter)) == NULL ||
        (kind->kind != ONCE_KIND_STATIC && kind->kind != ONCE_KIND_GROWING &&
         kind->kind != ONCE_KIND_TIME_WINDOW))
        return fail(error, room, "its filter is missing or not one a whole slice may be");
    if (!line_value(p, end, "capacity", value, sizeof value) ||
        !number(value, UINT64_C(1) << 40, &out->slice_capacity) || out->slice_capacity == 0)
        return fail(error, room, "its capacity is missing or out of range");
    char *stop = NULL;
    if (!line_value(p, end, "error", value, sizeof value) ||
        !((out->error = strtod(value, &stop)) > 0.0 && out->error < 1.0) || *stop != 0)
        return fail(error, room, "its error is missing or out of range");
    if (!line_value(p, end, "seed", value, sizeof value) || !number(value, UINT64_MAX, &out->seed))
        return fail(error, room, "its seed is missing or out of range");
    if (counted && out->slice_filter != ONCE_TAGGED)
        return fail(error, room, "its count window's slices are not tagged windows");
    if (!line_value(p, end, "window", value, sizeof value) ||
        !number(value, ONCE_MAX_TIME_MS / 2, &out->window_ms) ||
        (out->window_ms != 0) != (kind->kind == ONCE_KIND_TIME_WINDOW && !counted))
        return fail(error, room, "its window is missing, out of range or not its filter's");
    if (!line_value(p, end, "lag", value, sizeof value) ||
        !number(value, 2 * out->window_ms, &out->lag_ms) ||
        (out->lag_ms != 0 && out->slice_filter != ONCE_TAGGED))
        return fail(error, room, "its lag is missing, out of range or not its filter's");
    if (counted && (!line_value(p, end, "window_events", value, sizeof value) ||
                    !number(value, ONCE_MAX_TIME_MS / 2 - 1, &out->window_events) ||
                    out->window_events == 0))
        return fail(error, room, "its window_events is missing or out of range");
    out->slices = (uint32_t)slices;
    out->parts = 1;
    out->sites = out->slices;
    return true;
}

bool layout_parse(const char *text, size_t len, layout *out, char *error, size_t room)
{
    memset(out, 0, sizeof *out);
    const char *p = text, *end = text + len;
    size_t hlen = strlen(LAYOUT_HEADER); /* every version's header is as long */
    bool version_2 = len > hlen && memcmp(text, LAYOUT_HEADER_2, hlen) == 0;
    bool version_3 = len > hlen && memcmp(text, LAYOUT_HEADER_3, hlen) == 0;
    bool version_4 = len > hlen && memcmp(text, LAYOUT_HEADER_4, hlen) == 0;
    if (len <= hlen ||
        (!version_2 && !version_3 && !version_4 && memcmp(text, LAYOUT_HEADER, hlen) != 0) ||
        text[hlen] != '\n')
        return fail(error, room, "it is not a layout of a version this producer reads");
    p += hlen + 1;
    char value[64];
    uint64_t v[8];
    static const char *const fields[] = {"slices", "parts", "bits", "hashes", "seed", "window",
                                         "slice_bits"};
    static const uint64_t max[] = {ONCE_MAX_SLICED_SITES, ONCE_MAX_SLICED_SITES,
                                   UINT64_C(1) << 40, 64, UINT64_MAX, UINT64_MAX >> 2,
                                   ONCE_SLICE_MAX_BITS};
    if (!line_value(&p, end, "id", out->id, sizeof out->id) || strlen(out->id) != 16)
        return fail(error, room, "its id is missing or malformed");
    if (!line_value(&p, end, "slicing", value, sizeof value) || !slicing_of(value, &out->slicing))
        return fail(error, room, "its slicing is missing or unknown");
    if (version_3 || version_4)
        return parse_whole(&p, end, out, version_4, error, room) &&
               parse_tags(p, end, out, error, room);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!line_value(&p, end, fields[i], value, sizeof value) ||
            !number(value, max[i], &v[i]))
            return fail(error, room, "its %s is missing or out of range", fields[i]);
    out->slices = (uint32_t)v[0];
    out->parts = (uint32_t)v[1];
    out->bits = v[2];
    out->hashes = (uint32_t)v[3];
    out->seed = v[4];
    out->window_ms = v[5];
    out->slice_bits = v[6];
    if (out->slices == 0 || out->parts == 0 ||
        (uint64_t)out->slices * out->parts > ONCE_MAX_SLICED_SITES || out->hashes == 0 ||
        out->slice_bits == 0 || out->slice_bits % 64 != 0)
        return fail(error, room, "its geometry is out of range");
    out->sites = out->slices * out->parts;
    if (version_2) {
        if (!line_value(&p, end, "window_events", value, sizeof value) ||
            !number(value, ONCE_MAX_TIME_MS / 2 - 1, &out->window_events) ||
            out->window_events == 0 || out->window_ms != 0)
            return fail(error, room, "its window_events is missing or out of range");
    }
    if ((size_t)(end - p) > 5 && memcmp(p, "tree ", 5) == 0) {
        char second[32] = "";
        uint64_t levels = 0, fanout = 0;
        if (!line_value(&p, end, "tree", value, sizeof value))
            return fail(error, room, "its tree is malformed");
        char *space = strchr(value, ' ');
        if (space == NULL || strlen(space + 1) >= sizeof second)
            return fail(error, room, "its tree is malformed");
        memcpy(second, space + 1, strlen(space + 1) + 1);
        *space = 0;
        if (!number(value, 32, &levels) || !number(second, 1u << 20, &fanout) || levels < 2 ||
            fanout == 0)
            return fail(error, room, "its tree is out of range");
        out->tree_levels = (uint32_t)levels;
        out->tree_fanout = (uint32_t)fanout;
    }
    return parse_tags(p, end, out, error, room);
}

/* The last line: "tags" and one tag a site. */
static bool parse_tags(const char *p, const char *end, layout *out, char *error, size_t room)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (nl == NULL || nl + 1 != end || (size_t)(nl - p) < 4 || memcmp(p, "tags", 4) != 0)
        return fail(error, room, "its tags are missing");
    out->tags = once_calloc(out->sites, sizeof *out->tags);
    if (out->tags == NULL)
        return fail(error, room, "out of memory");
    p += 4;
    for (uint32_t i = 0; i < out->sites; i++) {
        if (p >= nl || *p != ' ')
            break;
        p++;
        size_t t = 0;
        while (p < nl && *p != ' ' && t + 1 < LAYOUT_MAX_TAG &&
               ((*p >= '0' && *p <= '9') || *p == '.'))
            out->tags[i][t++] = *p++;
        if (t == 0 || (p < nl && *p != ' ')) {
            layout_free(out);
            return fail(error, room, "tag %" PRIu32 " is malformed", i);
        }
        if (i + 1 == out->sites && p == nl)
            return true;
    }
    layout_free(out);
    return fail(error, room, "it does not hold one tag a slice");
}

static void note(char *out, size_t room, size_t *used, const char *fmt, ...)
{
    if (*used >= room)
        return;
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(out + *used, room - *used, fmt, args);
    va_end(args);
    *used += n > 0 ? (size_t)n : 0;
}

bool layout_differs(const layout *have, const layout *want, bool seed_given, char *out,
                    size_t room)
{
    size_t used = 0;
    if (room > 0)
        out[0] = 0;
    const char *sep = "";
#define DIFF(FIELD, FMT, HAVE, WANT)                                                          \
    do {                                                                                      \
        if ((HAVE) != (WANT)) {                                                               \
            note(out, room, &used, "%s" FIELD " " FMT " (asked " FMT ")", sep, HAVE, WANT);   \
            sep = ", ";                                                                       \
        }                                                                                     \
    } while (0)
    if (have->slicing != want->slicing) {
        note(out, room, &used, "%sslicing %s (asked %s)", sep, once_slicing_name(have->slicing),
             once_slicing_name(want->slicing));
        sep = ", ";
    }
    DIFF("slices", "%" PRIu32, have->slices, want->slices);
    DIFF("parts", "%" PRIu32, have->parts, want->parts);
    DIFF("bits", "%" PRIu64, have->bits, want->bits);
    DIFF("hashes", "%" PRIu32, have->hashes, want->hashes);
    DIFF("window", "%" PRIu64 " ms", have->window_ms, want->window_ms);
    DIFF("count window", "%" PRIu64 " events", have->window_events, want->window_events);
    DIFF("tree levels", "%" PRIu32, have->tree_levels, want->tree_levels);
    DIFF("tree fanout", "%" PRIu32, have->tree_fanout, want->tree_fanout);
    if (have->slice_filter != want->slice_filter) {
        note(out, room, &used, "%sslices of %s (asked %s)", sep,
             have->slice_filter ? once_type_name(have->slice_filter) : "cells",
             want->slice_filter ? once_type_name(want->slice_filter) : "cells");
        sep = ", ";
    }
    DIFF("slice capacity", "%" PRIu64, have->slice_capacity, want->slice_capacity);
    DIFF("error", "%g", have->error, want->error);
    DIFF("lag", "%" PRIu64 " ms", have->lag_ms, want->lag_ms);
    if (seed_given)
        DIFF("seed", "%" PRIu64, have->seed, want->seed);
#undef DIFF
    return used > 0;
}
