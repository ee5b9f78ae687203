/*
 * window/skip_back.h - what the age-partitioned windows (APBF and APBBF: window/apbf.c;
 * TLBF: window/tlbf.c) share: the skip-back search of paper 001 and the lines an
 * operation will touch.  Their batches run core/batch_loop.h's loop.
 */
#ifndef ONCE_WINDOW_SKIP_BACK_H
#define ONCE_WINDOW_SKIP_BACK_H

#include "core/batch_loop.h"

/*
 * The skip-back search of paper 001, Algorithm 1, over `k + l` logical segments:
 * "do k consecutive segments match?", starting at segment l, walking forward while
 * segments match and jumping back k on a miss with the matches already found kept.
 * The one search of every age-partitioned layout (APBF, APBBF, TLBF).  It is kept as
 * a state (once_skip_back) advanced one tested segment at a time, so a batch can park
 * a search whose next segment is not cached yet and resume it later; and as the
 * whole search, once_skip_back_search, where `match(ctx, i)` says whether logical
 * segment i matches the key (always inlined, so the layout's match function is
 * inlined into it).  reads counts the segments tested.
 */
typedef struct once_skip_back {
    int next;             /* the segment to test next */
    uint32_t before, run; /* matches kept from before the last jump, and since */
    uint32_t reads;
} once_skip_back;

static inline once_skip_back once_skip_back_start(uint32_t l)
{
    once_skip_back s = {(int)l, 0, 0, 0};
    return s;
}

/* Record whether segment s->next matched; true when the search is over, with *found
 * its answer. */
static inline __attribute__((always_inline)) bool
once_skip_back_step(once_skip_back *s, uint32_t k, bool matched, bool *found)
{
    s->reads++;
    if (matched) {
        s->run++;
        s->next++;
        if (s->before + s->run == k) {
            *found = true;
            return true;
        }
    } else {
        s->next -= (int)k;
        s->before = s->run;
        s->run = 0;
    }
    *found = false;
    return s->next < 0;
}

static inline __attribute__((always_inline)) bool
once_skip_back_search(uint32_t k, uint32_t l, bool (*match)(const void *ctx, uint32_t i),
                      const void *ctx, uint32_t *reads)
{
    once_skip_back s = once_skip_back_start(l);
    bool found = false;
    while (s.next >= 0 && !once_skip_back_step(&s, k, match(ctx, (uint32_t)s.next), &found))
        ;
    *reads = s.reads;
    return found;
}

/*
 * The lines an age-partitioned operation will touch, for requesting them ahead (the
 * batch loop, below, and the one-key query).  A query reads s_l, then after each miss
 * s_{l-k}, s_{l-2k}, ...: for an absent key a chain of dependent misses, so the chain
 * is requested up front (at most ONCE_AGE_SEARCH_LINES heads), each head with the
 * `follow` segments after it, read when the head matches: 1 where a segment matches
 * an absent key about half the time (slices at fill 1/2: APBF, TLBF), 0 where rarely
 * (APBBF blocks).  An insertion writes s_0 .. s_{k-1} (at most ONCE_AGE_INSERT_LINES).
 * A test-and-add of a new key does both, the chain's segments inside s_0 .. s_{k-1}
 * requested once, for writing.  `line(ctx, i, write)` requests logical segment i's
 * line; the count is what the batch sizes its distance by.
 */
#define ONCE_AGE_SEARCH_LINES 8
#define ONCE_AGE_INSERT_LINES 16

typedef struct once_age_reach {
    uint32_t k, l;   /* insertion and age segments */
    uint32_t follow; /* segments requested after each chain head */
} once_age_reach;

static inline __attribute__((always_inline)) void
once_age_prefetch_search(once_age_reach r, bool above_insertion,
                         void (*line)(const void *ctx, uint32_t logical, bool write),
                         const void *ctx)
{
    for (int j = (int)r.l, heads = 0; j >= 0 && heads < ONCE_AGE_SEARCH_LINES; j -= (int)r.k) {
        if (above_insertion && j < (int)r.k)
            break;
        for (uint32_t i = (uint32_t)j; i <= (uint32_t)j + r.follow && i < r.k + r.l; i++)
            line(ctx, i, false);
        heads++;
    }
}

static inline __attribute__((always_inline)) void
once_age_prefetch(once_age_reach r, once_batch_op op,
                  void (*line)(const void *ctx, uint32_t logical, bool write), const void *ctx)
{
    if (op != ONCE_OP_ADD)
        once_age_prefetch_search(r, op == ONCE_OP_TEST_AND_ADD, line, ctx);
    if (op != ONCE_OP_QUERY)
        for (uint32_t i = 0; i < r.k && i < ONCE_AGE_INSERT_LINES; i++)
            line(ctx, i, true);
}

static inline uint32_t once_age_prefetch_count(once_age_reach r, once_batch_op op)
{
    uint32_t heads = r.l / r.k + 1, insert = r.k;
    if (op == ONCE_OP_TEST_AND_ADD)
        heads = r.l >= r.k ? (r.l - r.k) / r.k + 1 : 0; /* the chain above s_{k-1} */
    if (heads > ONCE_AGE_SEARCH_LINES)
        heads = ONCE_AGE_SEARCH_LINES;
    if (insert > ONCE_AGE_INSERT_LINES)
        insert = ONCE_AGE_INSERT_LINES;
    uint32_t search = heads * (1 + r.follow);
    return op == ONCE_OP_QUERY ? search : op == ONCE_OP_ADD ? insert : search + insert;
}

/* How many keys ahead a batch requests lines (see once_batch_loop). */
static inline size_t once_age_batch_distance(once_age_reach r, once_batch_op op)
{
    uint32_t lines = once_age_prefetch_count(r, op);
    return ONCE_LINES_IN_FLIGHT / (lines ? lines : 1);
}

#endif /* ONCE_WINDOW_SKIP_BACK_H */
