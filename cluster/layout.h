/*
 * cluster/layout.h - a sliced filter's layout in its cluster, and the slices'
 * hash tags (layout.c).
 */
#ifndef ONCE_DIST_LAYOUT_H
#define ONCE_DIST_LAYOUT_H

#include "once_sliced.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LAYOUT_MAX_TAG 16

/* What every producer of a filter must agree on.  The slices are keys
 * NAME:slice:I:{TAG_I}; the text form is layout_format's. */
typedef struct layout {
    char id[17]; /* 16 hex digits, random: a filter made again gets another */
    once_slicing slicing;
    uint32_t slices, parts, sites; /* S, S', S S' */
    uint64_t bits, slice_bits;
    uint32_t hashes;
    uint64_t seed;
    uint64_t window_ms;
    /* A count window: N, the events delivered that the filter keeps (0: none).  Its
     * slices then keep timers on the producers' common count (the key NAME:count),
     * window_ms is 0, and the layout is of version 2, which a producer that does not
     * know count windows refuses as a layout it cannot read. */
    uint64_t window_events;
    /* A Bloom tree (tree.c): its levels and fanout (0 for a sliced filter); its sites
     * are then the tree's internal nodes, root first, each one key of bits cells. */
    uint32_t tree_levels, tree_fanout;
    /* Whole slices (once_sliced.h, "Whole slices"): each slice a filter of this
     * structure for slice_capacity keys (a span's, with a window) at `error`, the
     * layout of version 3; 0 for slices of cells (bits, hashes and slice_bits are then
     * 0: the slices plan their own). */
    once_type slice_filter;
    uint64_t slice_capacity;
    double error;
    uint64_t lag_ms; /* whole tagged slices: the lag allowance (once_config.lag_ms) */
    char (*tags)[LAYOUT_MAX_TAG]; /* sites of them */
} layout;

/* The tag of site i of `sites`: the first "I.J" (J = 0, 1, ...) whose slot is within
 * 16384 / (4 sites) of (i + 1/2) 16384 / sites, so the sites spread evenly over the
 * slots whatever node serves them (the nearest found in a bounded search, else). */
void layout_tag(uint32_t site, uint32_t sites, char tag[LAYOUT_MAX_TAG]);

/* The layout's text (NUL-terminated, in a new buffer: free it), and back.  layout_parse
 * fills `out` (its tags allocated: layout_free) or says in `error` why the text is not
 * a layout. */
char *layout_format(const layout *l);
bool layout_parse(const char *text, size_t len, layout *out, char *error, size_t error_len);
void layout_free(layout *l);

/* The fields of `have` that differ from `want` as "slices 3 (asked 4), bits ..." into
 * `out`; false when they agree.  The seed counts only when `seed_given`. */
bool layout_differs(const layout *have, const layout *want, bool seed_given, char *out,
                    size_t room);

/* Key names. */
void layout_key(const char *name, char *out, size_t room);
void layout_slice_key(const char *name, uint32_t site, const char *tag, char *out, size_t room);
/* The layout's copies: NAME:layout:{TAG_j}, j below LAYOUT_COPIES, their tags those of
 * sites j of LAYOUT_COPIES (spread over the slots, so over the masters: a producer
 * reads one when the master of NAME:layout is down). */
#define LAYOUT_COPIES 3u
void layout_copy_key(const char *name, uint32_t copy, char *out, size_t room);
/* The count window's clock: NAME:count, the events delivered, an integer. */
void layout_count_key(const char *name, char *out, size_t room);

#endif /* ONCE_DIST_LAYOUT_H */
