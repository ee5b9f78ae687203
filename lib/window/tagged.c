/*
 * window/tagged.c - time windows in little memory: a cuckoo table of fingerprints, each
 * tagged with the tick of its delivery.
 *
 * Why
 *   The papers' time windows pay for their clocks in bits: the TLBF (paper 004) keeps
 *   whole slices until their newest key expires, so a key lingers up to k ceil(T / l)
 *   past its span and a burst sizes slices for a rate carried over the span; the timer
 *   filter (paper 000, section 4) forgets on time but gives every one of k cells a
 *   16-bit timer.  Here a key is one entry: a fingerprint of f bits for the false
 *   positives and a tag of 5 bits for the time (6 with a lag, below), about f + 5 bits
 *   a key at high load.
 *
 * Layout
 *   A table has B buckets of 4 entries (SLOTS) of w = f + g bits (g = 5 tag bits, 6
 *   with a lag), packed in 64-bit
 *   words (two words of padding past the last entry).  A key's digest gives its first
 *   bucket i1 = reduce(lo, B) and its fingerprint fp = 1 + reduce(hi, 2^f - 1), in
 *   [1, 2^f), so that an entry of 0 is empty.  Its second bucket is
 *   i2 = (H(fp) - i1) mod B, with H(fp) = reduce(fp * golden, B): the map is its own
 *   inverse, so an entry moved by a kick finds its other bucket from its bucket and
 *   fingerprint alone, and B need not be a power of two (a table is sized to the keys
 *   it must hold, not to the next power of two).  An entry is (fp << g) | tag, at most
 *   57 bits (one unaligned 64-bit read), so f <= 57 - g.
 *   A key is inserted as in a cuckoo filter (Fan et al., 2014), into a free slot of the
 *   emptier of its two buckets (balanced buckets need fewer walks), or else by moving
 *   entries to their other buckets, at most MAX_KICKS moves; a walk that fails is
 *   undone, so that the table is as before, and a new table opens.
 *
 * Time
 *   tick = ceil(T / 12) ms, S = ceil(T / tick) <= 12 ticks a span, and a clock tick
 *   c = floor(L / tick) of the clock L (the latest event time written: once.h, "Event
 *   time").  A key delivered in tick a is tagged a mod 32; its age at tick c is c - a,
 *   read as (c - tag) mod 32, and it is alive while its age is at most S.  A key
 *   delivered at t0 is asked at t with t - t0 < T <= S tick, so its age is at most S:
 *   no false negative inside the span.  It is forgotten from tick a + S + 1 on, at
 *   most (S + 1) tick - T past its span: a tick plus S tick - T (under 12 ms, the
 *   rounding of the tick), so the slack is under T / 12 + 12 ms.
 *   Late events are tagged at the clock, so a key is never forgotten sooner than T
 *   after it was delivered.
 *
 *   A lag allowance H (once_config.lag_ms, at most 2T; once.h, "Event time") is for
 *   producers whose event times lag each other: judged at the clock, a repeat arriving
 *   after the clock passed its key's t0 + T is answered new, and a new key tagged at
 *   the clock lives T past the clock rather than past its own time.  With H, an event
 *   at t in [L - H, L) is judged and written at t, in tick u = floor(t / tick): it is a
 *   repeat iff an entry of its key has a tick a with |u - a| <= S, on either side
 *   (entries are never ahead of the clock's tick c, so a is in [u - S, min(u + S, c)],
 *   the ages c - u - S .. c - u + S: frame_late), and if new it is tagged u.  No false
 *   negative: a key delivered at t0 with |t - t0| < T <= S tick has
 *   |floor(t / tick) - floor(t0 / tick)| < |t - t0| / tick + 1 < S + 1, so |u - a| <= S.
 *   An event before L - H is judged and written as at L - H; one at or after L moves
 *   the clock as before.  With H_ticks = ceil(H / tick), floor((L - H) / tick) >=
 *   c - H_ticks, so a late event's u is at least c - H_ticks, and the entries it may
 *   need are of ages up to H_ticks + S: every entry is kept (its slot not free, the
 *   sweep leaves it) until its age passes K = S + H_ticks, K = S without a lag.  A
 *   table is loaded by its kept entries (table_alive), which include every entry a key
 *   may be found by in any frame (table_live), so the false-positive planning below
 *   counts them all.  Under the refresh policy a repeat takes the later of its entry's
 *   tick and u.  Queries at t in [L - H, L) answer at t the same way.
 *
 *   Tags: without a lag g = 5 as below, unchanged (keep = live at the clock, the code
 *   and the saved bytes of before).  With one, g = 6: K + 2P - 1 <= 12 + 24 + 19 = 55
 *   ages fit in 64 tag values, which H <= 2T ensures (H_ticks <= 2S since T <= S tick).
 *
 *   Tags wrap at 2^g, so an expired entry must leave before its age reaches 2^g, where
 *   it would read as new.  A sweep pass over every table runs each P = PASS_TICKS = 10
 *   ticks (ticks 10j to 10j + 9), removing the entries of age K + 1 or more it finds;
 *   a write sweeps SWEEP_STEP buckets of it, and the first write of the next P ticks
 *   finishes it before the clock moves.  An entry expires at tick a + K + 1; the first
 *   pass to start at or after that tick starts by a + K + P and is finished before
 *   a + K + 2P, so no entry's age passes K + 2P - 1 < 2^g and every age reads exactly.
 *   A move of the clock by 2 to K ticks (a pause in the stream) across a pass's end
 *   does not end the pass: one under way (its cursor short of the table's end) goes on
 *   over the writes after the pause, at their pace, and ends where a pass ends, at a
 *   move of one tick across a pass's end, or at a later pause when it is done (its
 *   sweep, and a log's visits, then see the clock of their own writes).  Ending it in
 *   the write after the pause cost that write the rest of the table, milliseconds at
 *   10^7 keys.  Finished passes end as before.  What keeps the ages exact then is the
 *   rule those passes serve: before the clock moves, an entry whose age would reach
 *   2^g at the new tick leaves, by a sweep of its table (or of its logged buckets).
 *   by_tag says whether there is one, since ages read exactly until then; passes on
 *   time leave none.  The carry depends on the cursor alone (saved), so a loaded copy
 *   carries as the original does.  A move past K ticks empties the tables, whether or
 *   not it crosses a pass's end: with K < P such a move may stay within one pass's
 *   ticks, and after a carried pass entries may be old enough for it to take them
 *   past 2^g (no entry is alive past K, so emptying is exact).  The pass costs a write
 *   B / (r P) buckets at r writes a tick: with 4-bit tags P could be 2 at most, and the
 *   pass was the largest part of an insertion's cost; the tag's fifth bit costs 1.25
 *   bits a key at MAX_LOAD and cuts the pass to a fifth.
 *   A pass over a table costs its B buckets, whatever it holds: a short span over a
 *   sparse stream (an event-time replay, a quiet feed) with a large capacity would pay
 *   B at every P ticks for a few live keys.  So a sparse table keeps a log of the
 *   buckets its writes filled (every slot a walk writes: an entry only ever sits in a
 *   bucket a write put it in), from when it opens empty, or from a pass's end where the
 *   pass left at most half of the log's room in entries: the next pass's sweep logs the
 *   buckets it finds holding entries, beside those written, and its end makes that log
 *   whole.  A pass that begins with the log whole visits the buckets logged then
 *   instead of the table (an entry dead as the pass began is in one; buckets logged
 *   since hold entries written since), in step with the cursor, the rest at its end,
 *   keeping those still holding entries; a jump revisits the whole log at the new tick.
 *   A log that overflows is lost (the pass under way still ends over the buckets logged
 *   as it began), until the table is empty or a pass logs it again; a table that stays
 *   dense gives it back.  The log takes a word a bucket, at most one in LOG_SHARE of its
 *   table's buckets and LOG_ROOM (counted in the memory, and taken only within the
 *   cap).  It changes what a pass costs, not what it removes: the entries kept, the
 *   cursor and the saved bytes are as without it.
 *   Pacing: a table too dense for its log yet given far fewer writes a pass than
 *   B / SWEEP_STEP (a span of ten thousand keys in a table planned for millions) would
 *   leave most of the pass to the write that ends it, milliseconds of sweep in one
 *   call.  So a filter of PACE_MIN_BUCKETS buckets or more sweeps
 *     step = ceil(2 B K / (P n)),  within [SWEEP_STEP, PACE_MAX_STEP],
 *   buckets a write (B over its tables, in order), where n is the entries of ages 1 to
 *   K: at the rate of the last K ticks a pass brings n P / K writes, and the step ends
 *   it in half of them; a pass costs B buckets either way.  n counts kept entries only,
 *   which a saved filter keeps exactly, and changes within a tick only by a refresh or
 *   a late write (the step is then made again), so a filter loaded from its bytes, or
 *   a replica, steps as the one that saved it: the cursor, saved, is the same.  A
 *   smaller filter keeps SWEEP_STEP (its whole pass is cheap).
 *   Reads run at R = max(L, now) (but within a lag, above): an entry is alive at R iff
 *   its age at L plus the ticks from c to floor(R / tick) is at most S, so a read-only
 *   stretch of any length answers right without a sweep.  Entries past K still in a
 *   table are free slots to an insertion.
 *
 * False positives
 *   An absent key matches an entry of its two buckets with chance 1 / (2^f - 1), so a
 *   table whose live entries fill a share a of its slots answers it present with
 *   chance at most 2 SLOTS a / (2^f - 1) (the union bound), and a filter of several
 *   tables at most the sum.  Each table is planned so that the sum stays under the
 *   target: the first takes all of it at its fullest load (MAX_LOAD: it is alone
 *   unless the keys outgrow it), and each later one half of what the tables alive
 *   when it opens leave at their current loads.  Tables that no longer take keys only
 *   lose live entries, so the sum never passes the target.  At 0.1% that is f = 13,
 *   w = 18 for the first table; a table opened beside a full one takes 3 bits more
 *   until settling (below) gives the span's keys a table of their own.
 *
 * Growth
 *   Keys go to the newest table.  The first is sized for `capacity` keys a span times
 *   (S + H_ticks + 1) / S (the keys kept at once: a span, the lag and a tick) at
 *   MAX_LOAD.  When the newest holds
 *   MAX_LOAD of its slots alive, or a walk fails, a table of twice its buckets opens
 *   for the next keys (with the fingerprint its share of the target asks); an older
 *   table is freed once nothing in it is alive, at most a span and a tick after it
 *   stopped taking keys.  So memory follows a burst up and comes back a span after it;
 *   max_bytes (0: ONCE_DEFAULT_MAX_BYTES) caps it, and an insertion that
 *   would pass it fails with ONCE_ERR_FULL.  A table that grew for a burst, or from a
 *   first guess too small, is settled once it has seen a span: a table sized to the
 *   span's keys opens, with the fingerprints the target then allows (settle()).
 *
 * Invariants
 *   - every entry is 0 or has fp in [1, 2^f) and an age in [0, 2^g - 1] at the clock
 *     (passes on time keep it within K + 2P - 1; past a carried pass the tags' rule and
 *     the emptying of the tables at any move past K keep it under 2^g);
 *   - by_tag[g] counts the non-empty entries of a table tagged g, and `entries` their
 *     sum; the kept entries are the sum of by_tag over the ages 0..K, exact at any tick
 *     (expired entries waiting for the sweep have older ages);
 *   - a table's `alive`, when counted_at is 1 + the clock's tick, is its kept count at
 *     that tick (only the newest's is kept: a write of the tick adds one there);
 *   - queries change nothing; a write that fails (ONCE_ERR_TIME, ONCE_ERR_FULL,
 *     ONCE_ERR_NOMEM) changes nothing: growth is decided and allocated, and a walk
 *     that might fail is tried and undone, before the clock moves;
 *   - the newest table is never freed; a saved table holds no entry past K;
 *   - no entry's tick is after the clock's: a late event's u is at most c.
 */
#include "core/structure.h"
#include "core/limits.h"
#include "core/batch_loop.h"

#include <math.h>

/* The table at the end of this file, which the code above refers to. */
extern const once_filter_ops once_tagged_ops;

#define TAG_BITS 5u        /* without a lag */
#define LAG_TAG_BITS 6u    /* with one: ages up to S + H_ticks + 2P - 1 */
#define MAX_TAG_VALUES 64u
#define TICKS_PER_SPAN 12u /* S <= 12: slack under a tick, T / 12 */
#define PASS_TICKS 10u     /* ticks a sweep pass may take: K + 2P - 1 ages fit in the tags */
#define MAX_LAG_SPANS 2u   /* H <= 2T, so H_ticks <= 2 S (T <= S tick) */
#if TICKS_PER_SPAN + 2 * PASS_TICKS - 1 > (1u << TAG_BITS) - 1
#error "a sweep pass this long lets tags wrap"
#endif
#if TICKS_PER_SPAN * (1 + MAX_LAG_SPANS) + 2 * PASS_TICKS - 1 > (1u << LAG_TAG_BITS) - 1
#error "a lag this long lets tags wrap"
#endif
#define SLOTS 4u
#define MAX_LOAD 0.8       /* live share of a table's slots before the next one opens */
#define MAX_KICKS 128u     /* a walk longer than this opens a table instead */
#define SWEEP_STEP 2u      /* buckets a write sweeps, at the least */
#define PACE_MIN_BUCKETS 16384u /* a filter with fewer pays a whole pass in a write */
#define PACE_MAX_STEP 4096u     /* buckets a paced write sweeps at most */
#define LOG_ROOM 16384u    /* buckets a log holds at most: 128 KB */
#define LOG_SHARE 32u      /* and at most a bucket in this many of its table's */
#define LOG_MIN_ROOM 64u   /* a table whose log would hold fewer keeps none */
#define TAGGED_MAX_TABLES 64u
#define TAGGED_MAX_SPAN (UINT64_C(1) << 40) /* ms, about 35 years */
#define MAX_ENTRY_BITS 57u /* an entry fits one unaligned 64-bit read (7 bits of offset) */
#define MAX_FP_BITS (MAX_ENTRY_BITS - TAG_BITS) /* 52; 51 with a lag's tags */
#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)
#define TAGGED_MAX_TABLE_BITS (ONCE_MAX_CELLS * 4) /* what once_words_alloc accepts */

typedef struct tag_table {
    uint64_t *words;
    uint64_t buckets;      /* B */
    uint64_t word_count;   /* words allocated (with the padding words) */
    uint32_t fp_bits;      /* f */
    uint32_t width;        /* f + tag bits */
    uint32_t tag_bits;     /* the filter's: 5, or 6 with a lag */
    uint64_t tag_mask;     /* 2^tag_bits - 1 */
    uint64_t cursor;       /* the next bucket this tick's pass sweeps */
    uint64_t opened;       /* ms: when it began to take keys */
    uint64_t entries;      /* non-empty entries: the sum of by_tag, at least the live ones */
    uint64_t by_tag[MAX_TAG_VALUES]; /* non-empty entries by tag */
    uint64_t counted_at;   /* 1 + the tick whose live entries `alive` holds; 0: none */
    uint64_t alive;
    uint64_t limit;        /* MAX_LOAD of its slots: live entries before the next table */
    /* The buckets written since the table was last empty ("Time": sparse passes), or
     * NULL for a table without a log; `log_lost` when some entry may lie outside it. */
    uint64_t *log;
    uint32_t log_count, log_room;
    bool log_lost;
    bool log_building;     /* a lost log this pass's sweep fills: whole at its end if it fits */
    /* A pass over the log ("Time"): when the log was whole as the pass began, the pass
     * visits the buckets logged then, log[0 .. log_snap - 1], instead of sweeping the
     * table: those before log_visit were visited, and the ones still holding entries
     * kept at log[0 .. log_kept - 1]; buckets logged since are at log[log_snap ..]. */
    bool log_pass;
    uint32_t log_snap, log_visit, log_kept;
} tag_table;

/* A loader refuses a file whose filter would pass its cap, as the file's version counted
 * it: a list entry then took the table's fields without the log's (SAVED_TABLE_BYTES),
 * so that a state saved near its cap loads (and holds, with the log's fields, a few
 * bytes a table more than it was counted at). */
#define SAVED_TABLE_BYTES offsetof(tag_table, log)
_Static_assert(offsetof(tag_table, log) == 608, "a saved table's count is part of its format");

typedef struct tagged_filter {
    once_filter base;
    uint64_t span;         /* T, ms */
    uint64_t tick;         /* ms */
    uint64_t span_ticks;   /* S */
    uint64_t lag;          /* H, ms (0: none) */
    uint64_t lag_ticks;    /* ceil(H / tick) */
    uint64_t keep_ticks;   /* K = S + lag_ticks: the oldest age an entry keeps its slot */
    uint32_t tag_bits;     /* 5, or 6 with a lag */
    uint64_t tag_mask;     /* 2^tag_bits - 1 */
    uint32_t policy;
    uint32_t count;        /* tables */
    uint32_t room;         /* entries allocated in `tables` (>= count) */
    double error;          /* the target the tables share */
    uint64_t plan_buckets; /* the first table's */
    uint64_t max_bytes;
    uint64_t latest;       /* L, ms */
    uint64_t now;          /* c = floor(L / tick) */
    uint64_t tick_end;     /* ms: where the tick after c begins, (c + 1) tick (saturated) */
    uint64_t live_now;     /* the live tags at c: ages 0..S */
    uint64_t keep_now;     /* the kept tags at c: ages 0..K (live_now without a lag) */
    bool started;
    bool passing;          /* a table's pass may be unfinished: sweep_step has work (not saved) */
    uint32_t step;         /* buckets a write sweeps (pace(); not saved: made again) */
    bool pace_due;         /* what pace() reads changed: make `step` again before a sweep */
    tag_table *tables;     /* oldest first; the newest takes the keys */
} tagged_filter;

#define TAGGED(f) ((tagged_filter *)(f))
#define CTAGGED(f) ((const tagged_filter *)(f))

/* ------------------------------------------------------------------ entries */

/* Entry bit i is bit i % 64 of word i / 64.  On a little-endian machine that is bit
 * i % 8 of byte i / 8, so an entry (at most 57 bits: MAX_FP_BITS + TAG_BITS) lies within
 * the 8 bytes from its first byte: one unaligned access, where the word view needs two
 * words and a branch.  The padding past the last entry covers the 8 bytes. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ENTRY_BYTE_ACCESS 1
#else
#define ENTRY_BYTE_ACCESS 0
#endif

static inline uint64_t entry_get(const uint64_t *words, uint64_t bit, uint32_t width)
{
    uint64_t mask = (UINT64_C(1) << width) - 1;
#if ENTRY_BYTE_ACCESS
    uint64_t v;
    memcpy(&v, (const unsigned char *)words + (bit >> 3), sizeof v);
    return (v >> (bit & 7)) & mask;
#else
    uint64_t j = bit >> 6;
    unsigned off = (unsigned)(bit & 63);
    uint64_t v = (words[j] >> off) | ((words[j + 1] << 1) << (63 - off));
    return v & mask;
#endif
}

static inline void entry_put_raw(uint64_t *words, uint64_t bit, uint32_t width, uint64_t value)
{
    uint64_t mask = (UINT64_C(1) << width) - 1;
#if ENTRY_BYTE_ACCESS
    unsigned char *at = (unsigned char *)words + (bit >> 3);
    unsigned off = (unsigned)(bit & 7);
    uint64_t v;
    memcpy(&v, at, sizeof v);
    v = (v & ~(mask << off)) | (value << off);
    memcpy(at, &v, sizeof v);
#else
    uint64_t j = bit >> 6;
    unsigned off = (unsigned)(bit & 63);
    words[j] = (words[j] & ~(mask << off)) | (value << off);
    if (off + width > 64) {
        unsigned low = 64 - off;
        words[j + 1] = (words[j + 1] & ~(mask >> low)) | (value >> low);
    }
#endif
}

static inline uint64_t slot_bit(const tag_table *t, uint64_t bucket, uint32_t slot)
{
    return (bucket * SLOTS + slot) * t->width;
}

static inline uint64_t slot_get(const tag_table *t, uint64_t bucket, uint32_t slot)
{
    return entry_get(t->words, slot_bit(t, bucket, slot), t->width);
}

/* The four entries of bucket b. */
static inline void bucket_load(const tag_table *t, uint64_t b, uint64_t e[SLOTS])
{
    uint64_t bit = slot_bit(t, b, 0);
    for (uint32_t s = 0; s < SLOTS; s++, bit += t->width)
        e[s] = entry_get(t->words, bit, t->width);
}

/* Replace the entry `old` (as read) at `bit` by `value`, keeping by_tag. */
static inline void entry_replace(tag_table *t, uint64_t bit, uint64_t old, uint64_t value)
{
    if (old != 0) {
        t->by_tag[old & t->tag_mask]--;
        t->entries--;
    }
    if (value != 0) {
        t->by_tag[value & t->tag_mask]++;
        t->entries++;
    }
    entry_put_raw(t->words, bit, t->width, value);
}

static inline void slot_replace(tag_table *t, uint64_t bucket, uint32_t slot, uint64_t old,
                                uint64_t value)
{
    entry_replace(t, slot_bit(t, bucket, slot), old, value);
}

static inline void slot_put(tag_table *t, uint64_t bucket, uint32_t slot, uint64_t value)
{
    slot_replace(t, bucket, slot, slot_get(t, bucket, slot), value);
}

/* A view of the clock: ages read at tick `c`, the clock's.  An entry's age at c is
 * (c - tag) mod 2^tag_bits, exact since no age passes K + 2P - 1 < 2^tag_bits at the
 * clock's tick (the sweep's invariant).  `live` has bit g set for each tag g a key is
 * found by: the ages young .. young + ages - 1 at c.  `keep` has bit g set for each tag
 * whose entries hold their slots, the ages 0 .. kept - 1; the others' slots are free.
 * A write or read at the clock's tick plus `ahead` finds ages 0 .. S - ahead and keeps
 * 0 .. K - ahead; a late event's, d ticks before c (with a lag), finds the ages
 * d - S .. d + S (the ticks within S of its own, either side) and keeps 0 .. K.
 * Without a lag K = S, and `keep` is `live` at the clock. */
typedef struct tag_frame {
    uint64_t c;
    uint64_t mask;  /* 2^tag_bits - 1 */
    uint64_t live;
    uint64_t keep;
    uint64_t young, ages; /* the live ages */
    uint64_t kept;        /* the kept ages: 0 .. kept - 1 */
} tag_frame;

/* The tags of ages young .. young + n - 1 at tick c, as bits: a run of n bits rotated
 * to its place among the 2^tag_bits values (n <= K + 1, less than the values). */
static inline uint64_t tag_run(uint64_t c, uint64_t young, uint64_t n, uint64_t mask)
{
    if (n == 0)
        return 0;
    uint64_t run = (UINT64_C(1) << n) - 1, at = (c - young - n + 1) & mask;
    uint64_t values = (UINT64_C(2) << mask) - 1; /* 2^32 - 1 or, wrapping, 2^64 - 1 */
    return ((run << at) | (run >> ((mask + 1 - at) & mask))) & values;
}

static inline tag_frame frame_of(uint64_t c, uint64_t ahead, uint64_t span_ticks,
                                 uint64_t keep_ticks, uint64_t mask)
{
    tag_frame fr = {c, mask, 0, 0, 0, 0, 0};
    fr.ages = ahead <= span_ticks ? span_ticks - ahead + 1 : 0;
    fr.kept = ahead <= keep_ticks ? keep_ticks - ahead + 1 : 0;
    fr.live = tag_run(c, 0, fr.ages, mask);
    fr.keep = tag_run(c, 0, fr.kept, mask);
    return fr;
}

/* Without a branch (`&`, not `&&`): whether a slot is free is a coin toss near
 * MAX_LOAD, and a mispredicted branch costs more than the test. */
static inline bool entry_alive(uint64_t entry, const tag_frame *fr)
{
    return (entry != 0) & (fr->live >> (entry & fr->mask));
}


/* Bit s set for each slot s of the entries e free in frame fr: empty, or past K.
 * An entry is empty when it is 0 ((e - 1) >> 63: a non-empty entry is below 2^57), and
 * expired when its tag is dead; no flags, no compare (the baseline ISA has no
 * flag-free shifts, and this runs eight times an insertion). */
static inline uint32_t entries_free(const uint64_t e[SLOTS], const tag_frame *fr)
{
    uint64_t dead = ~fr->keep, mask = fr->mask;
    uint32_t m = 0;
    for (uint32_t s = 0; s < SLOTS; s++)
        m |= (uint32_t)(((dead >> (e[s] & mask)) | ((e[s] - 1) >> 63)) & 1) << s;
    return m;
}

/* The bits set in a mask of SLOTS bits (no popcount instruction in the baseline ISA). */
_Static_assert(SLOTS == 4, "slots_count counts 4 bits");
static inline uint32_t slots_count(uint32_t mask)
{
    return (uint32_t)(UINT64_C(0x4332322132212110) >> (4 * mask)) & 15;
}

/* ------------------------------------------------------------------ hashing */

static inline uint64_t fingerprint(uint64_t hi, uint32_t fp_bits)
{
    return 1 + once_reduce(hi, (UINT64_C(1) << fp_bits) - 1);
}

static inline uint64_t other_bucket(uint64_t bucket, uint64_t fp, uint64_t buckets)
{
    uint64_t h = once_reduce(fp * GOLDEN, buckets);
    return h >= bucket ? h - bucket : h + buckets - bucket;
}

typedef struct tag_place {
    uint64_t first, second, fp;
    uint64_t fp_entry; /* fp << tag_bits: an entry holds fp iff (entry ^ fp_entry) <= mask */
} tag_place;

static inline tag_place place_of(const tag_table *t, const once_hash *h)
{
    tag_place p;
    p.fp = fingerprint(h->hi, t->fp_bits);
    p.first = once_reduce(h->lo, t->buckets);
    p.second = other_bucket(p.first, p.fp, t->buckets);
    p.fp_entry = p.fp << t->tag_bits;
    return p;
}

static inline void prefetch_place(const tag_table *t, const tag_place *p)
{
    once_prefetch_write(&t->words[slot_bit(t, p->first, 0) >> 6]);
    once_prefetch_write(&t->words[slot_bit(t, p->second, 0) >> 6]);
}

/* A key's place in a table and its two buckets' entries, read once: the search and
 * the placement that follows it share the reads (each is a miss at 10^7 keys).  The
 * two buckets are requested together before either is read, so that their misses
 * overlap rather than follow each other. */
typedef struct tag_look {
    tag_place p;
    uint64_t first[SLOTS], second[SLOTS];
} tag_look;

static inline void look_at(const tag_table *t, const once_hash *h, tag_look *l)
{
    l->p = place_of(t, h);
    prefetch_place(t, &l->p);
    bucket_load(t, l->p.first, l->first);
    bucket_load(t, l->p.second, l->second);
}

/* The slot of the entries e holding fp alive in frame fr, or SLOTS.  (Branches here
 * are right: a fingerprint rarely matches.) */
static inline uint32_t entries_find(const uint64_t e[SLOTS], uint64_t fp_entry,
                                    const tag_frame *fr)
{
    for (uint32_t s = 0; s < SLOTS; s++)
        if ((e[s] ^ fp_entry) <= fr->mask && entry_alive(e[s], fr))
            return s;
    return SLOTS;
}

/* Where the look's table holds the key alive: *bucket and *slot; false if nowhere. */
static inline bool look_find(const tag_look *l, const tag_frame *fr, uint64_t *bucket,
                             uint32_t *slot)
{
    uint32_t s = entries_find(l->first, l->p.fp_entry, fr);
    if (s < SLOTS) {
        *bucket = l->p.first;
        *slot = s;
        return true;
    }
    s = entries_find(l->second, l->p.fp_entry, fr);
    *bucket = l->p.second;
    *slot = s;
    return s < SLOTS;
}

/* Newest first (recent keys are the likely repeats): the table that holds the key, or
 * count if none; *look is the newest table's look, for a placement to follow.  In line:
 * a call's frame and its stores of the look cost a write 22 instructions. */
static inline __attribute__((always_inline)) uint32_t
find_any(const tagged_filter *t, const once_hash *h, const tag_frame *fr, tag_look *look,
         uint64_t *bucket, uint32_t *slot)
{
    look_at(&t->tables[t->count - 1], h, look);
    if (look_find(look, fr, bucket, slot))
        return t->count - 1;
    for (uint32_t i = t->count - 1; i-- > 0;) {
        tag_look older;
        look_at(&t->tables[i], h, &older);
        if (look_find(&older, fr, bucket, slot))
            return i;
    }
    return t->count;
}

/* ------------------------------------------------------------------ counts */

/* The entries that hold their slots in frame fr (ages 0 to K - ahead): those that
 * load a table, and that a key absent may match (the live ones of any frame are among
 * them). */
static uint64_t table_alive(const tag_table *t, const tag_frame *fr)
{
    uint64_t alive = 0;
    for (uint64_t age = 0; age < fr->kept; age++)
        alive += t->by_tag[(fr->c - age) & fr->mask];
    return alive;
}

/* The entries a key is found by in frame fr: the keys in the window. */
static uint64_t table_live(const tag_table *t, const tag_frame *fr)
{
    uint64_t live = 0;
    for (uint64_t age = fr->young; age < fr->young + fr->ages; age++)
        live += t->by_tag[(fr->c - age) & fr->mask];
    return live;
}

static uint64_t table_slots(const tag_table *t)
{
    return t->buckets * SLOTS;
}

/* The union bound of a table's false positives with `alive` live entries. */
static double table_rate(const tag_table *t, uint64_t alive)
{
    double fp_values = (double)((UINT64_C(1) << t->fp_bits) - 1);
    return 2.0 * SLOTS * ((double)alive / (double)table_slots(t)) / fp_values;
}

/* The fewest fingerprint bits that keep a full table (MAX_LOAD) under `share`; 0 if
 * none up to the most entries of tag_bits take does. */
static uint32_t fp_bits_for(double share, uint32_t tag_bits)
{
    for (uint32_t f = 1; f + tag_bits <= MAX_ENTRY_BITS; f++)
        if (2.0 * SLOTS * MAX_LOAD / (double)((UINT64_C(1) << f) - 1) <= share)
            return f;
    return 0;
}

/* ------------------------------------------------------------------ tables */

/* Does a table of `buckets` and entries of `width` bits stay within the limits?  (The
 * bucket bound first, so that the product cannot overflow.) */
static bool table_fits(uint64_t buckets, uint32_t width)
{
    return buckets <= ONCE_MAX_CELLS / SLOTS && width <= MAX_ENTRY_BITS &&
           buckets * SLOTS * width <= TAGGED_MAX_TABLE_BITS;
}

static uint64_t table_words(uint64_t buckets, uint32_t width)
{
    /* two words of padding (part of the saved size): entry_get reads up to 8 bytes
     * from an entry's first, or the word past its first word */
    return once_words_for_bits(buckets * SLOTS * width + 128);
}

/* The structure's memory with a list of `room` entries and tables of `table_bytes`. */
static uint64_t memory_for(uint64_t room, uint64_t table_bytes)
{
    return once_table_memory(sizeof(tagged_filter), room, sizeof(tag_table), table_bytes);
}

/* Room in the list for one more table, and no more: the list follows the tables, as
 * table_open's cap check counts it (false: no memory; nothing changed). */
static bool list_grow(tagged_filter *t)
{
    return once_table_reserve((void **)&t->tables, &t->room, t->count + 1, sizeof *t->tables, 1,
                              t->count + 1);
}

/* Give back the list's entries past the tables in use. */
static void list_fit(tagged_filter *t)
{
    once_table_fit((void **)&t->tables, &t->room, t->count, sizeof *t->tables);
}

static uint64_t tables_bytes(const tagged_filter *t)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < t->count; i++)
        bytes += once_words_memory(t->tables[i].word_count) +
                 (t->tables[i].log != NULL ? once_words_memory(t->tables[i].log_room) : 0);
    return bytes;
}

static void table_free(tag_table *t)
{
    once_words_free(t->words);
    once_words_free(t->log);
    t->words = t->log = NULL;
}

/* The buckets table tb's log would hold: a share of its own, at most LOG_ROOM. */
static uint32_t log_room_for(const tag_table *tb)
{
    uint64_t room = tb->buckets / LOG_SHARE;
    return room > LOG_ROOM ? LOG_ROOM : (uint32_t)room;
}

/* A log for table tb of t (`extra`: its bytes when it is not yet in t's list), if its
 * room is worth having and fits the cap (optional: a table without one sweeps whole
 * passes).  Whole when tb is empty; else lost until filled (log_adapt). */
static void table_take_log(tagged_filter *t, tag_table *tb, uint64_t extra)
{
    uint32_t room = log_room_for(tb);
    uint64_t list = t->room > t->count + (extra != 0) ? t->room : t->count + (extra != 0);
    if (room < LOG_MIN_ROOM || tb->log != NULL ||
        !once_fits_cap(memory_for(list, tables_bytes(t) + extra + once_words_memory(room)),
                       t->base.metadata_len, t->max_bytes))
        return;
    tb->log = once_words_alloc(room);
    tb->log_room = room;
    tb->log_count = 0;
    tb->log_lost = tb->entries != 0;
    tb->log_pass = tb->log != NULL && tb->entries == 0; /* its pass owes nothing */
}

static once_status table_init(tag_table *t, uint64_t buckets, uint32_t fp_bits,
                              uint32_t tag_bits, uint64_t opened)
{
    memset(t, 0, sizeof *t);
    t->buckets = buckets;
    t->fp_bits = fp_bits;
    t->tag_bits = tag_bits;
    t->tag_mask = (UINT64_C(1) << tag_bits) - 1;
    t->width = fp_bits + tag_bits;
    t->word_count = table_words(buckets, t->width);
    t->limit = (uint64_t)(MAX_LOAD * (double)(buckets * SLOTS));
    t->opened = opened;
    t->words = once_words_alloc(t->word_count);
    return t->words != NULL ? ONCE_OK : ONCE_ERR_NOMEM;
}

static void table_wipe(tag_table *t)
{
    memset(t->words, 0, (size_t)(t->word_count * 8));
    memset(t->by_tag, 0, sizeof t->by_tag);
    t->entries = 0;
    t->cursor = 0;
    t->counted_at = 0;
    t->log_count = 0;
    t->log_lost = false;
    t->log_building = false;
    t->log_pass = t->log != NULL; /* empty: its pass owes nothing */
    t->log_snap = t->log_visit = t->log_kept = 0;
}

/* Empty the entries of buckets [from, to) that are dead in frame fr (those of ages past
 * K - ahead at its tick): one test of the frame's kept tags an entry, entry by entry in
 * order. */
static void table_sweep(tag_table *t, uint64_t from, uint64_t to, const tag_frame *fr)
{
    const uint32_t width = t->width;  /* locals: the stores below may */
    const uint64_t keep = fr->keep, mask = fr->mask; /* alias the table and the frame */
    uint64_t *const words = t->words;
    uint64_t end = to * SLOTS * width;
    for (uint64_t bit = from * SLOTS * width; bit < end;) {
        /* An entry lies in the word of its first bit and the next (width <= 57): where
         * both are zero, so is every entry starting in the first, and a table that holds
         * few entries for its size is mostly such words (the padding words past the
         * last entry keep words[j + 1] in the array). */
        uint64_t j = bit >> 6;
        if ((words[j] | words[j + 1]) == 0) {
            do
                j++;
            while ((j << 6) < end && (words[j] | words[j + 1]) == 0);
            bit += ((j << 6) - bit + width - 1) / width * width; /* the first entry in word j */
            continue;
        }
        uint64_t e = entry_get(words, bit, width);
        if (e != 0 && !((keep >> (e & mask)) & 1))
            entry_replace(t, bit, e, 0);
        bit += width;
    }
}

/* ------------------------------------------------------------------ the walk */

/* The slots a walk wrote, with what they held, so that it can be undone. */
typedef struct tag_move {
    uint64_t bucket;
    uint32_t slot;
    uint64_t old;
} tag_move;

typedef struct tag_walk {
    uint32_t moves;
    tag_move move[MAX_KICKS + 1];
} tag_walk;

/* Write v over the slot's entry `old` (as read). */
static inline void walk_put(tag_table *t, tag_walk *w, uint64_t b, uint32_t s, uint64_t old,
                            uint64_t v)
{
    w->move[w->moves++] = (tag_move){b, s, old};
    slot_replace(t, b, s, old, v);
}

static void walk_undo(tag_table *t, tag_walk *w)
{
    while (w->moves > 0) {
        const tag_move *m = &w->move[--w->moves];
        slot_put(t, m->bucket, m->slot, m->old);
    }
}

/* ------------------------------------------------------------------ the log */

/* Does the log hold every bucket with an entry (a sparse pass may use it)? */
static inline bool log_whole(const tag_table *t)
{
    return t->log != NULL && !t->log_lost;
}

static bool bucket_empty(const tag_table *t, uint64_t b)
{
    for (uint32_t s = 0; s < SLOTS; s++)
        if (slot_get(t, b, s) != 0)
            return false;
    return true;
}

/* An empty table's log holds every entry's bucket again: none; and its pass owes nothing
 * (no entry in it can have been dead when the pass began). */
static void log_if_empty(tag_table *t)
{
    if (t->entries == 0) {
        t->log_count = 0;
        t->log_lost = false;
        t->log_building = false;
        t->log_pass = t->log != NULL;
        t->log_snap = t->log_visit = t->log_kept = 0;
    }
}

/* A pass begins for table t: over its log if whole, else over its buckets. */
static void pass_begin(tag_table *t)
{
    t->cursor = 0;
    t->log_pass = log_whole(t);
    t->log_snap = t->log_pass ? t->log_count : 0;
    t->log_visit = t->log_kept = 0;
}

/* Visit the logged buckets of the pass up to log[upto - 1]: their entries dead in frame
 * fr emptied, the buckets still holding entries kept. */
static void log_visit_to(tag_table *t, const tag_frame *fr, uint32_t upto)
{
    for (uint32_t i = t->log_visit; i < upto; i++) {
        uint64_t b = t->log[i];
        if (i + 8 < upto)
            __builtin_prefetch(t->words + b * SLOTS * t->width / 64);
        table_sweep(t, b, b + 1, fr);
        if (!bucket_empty(t, b))
            t->log[t->log_kept++] = b;
    }
    t->log_visit = upto;
}

/* The end of a pass over the log: the rest of its buckets visited, the kept ones and
 * those logged since closed up (a lost log's are no longer needed). */
static void log_pass_end(tag_table *t, const tag_frame *fr)
{
    log_visit_to(t, fr, t->log_snap);
    if (t->log_lost) {
        t->log_count = 0;
    } else {
        uint32_t since = t->log_count - t->log_snap;
        memmove(t->log + t->log_kept, t->log + t->log_snap, since * sizeof *t->log);
        t->log_count = t->log_kept + since;
    }
    t->log_pass = false;
    log_if_empty(t);
}

/* Every entry of a table whose log is whole emptied: the logged buckets alone. */
static void log_clear(tag_table *t)
{
    for (uint32_t i = 0; i < t->log_count; i++)
        for (uint32_t s = 0; s < SLOTS; s++)
            slot_replace(t, t->log[i], s, slot_get(t, t->log[i], s), 0);
    log_if_empty(t);
}

/* The buckets a walk wrote, into a whole log or one being built (lost, or no longer
 * built, if they do not fit; a pass over the log goes on over the buckets logged when
 * it began, which hold every entry that may have been dead then). */
static void log_walk(tag_table *t, const tag_walk *w)
{
    if (!log_whole(t) && !t->log_building)
        return;
    if (t->log_count + w->moves > t->log_room) {
        t->log_lost = true;
        t->log_building = false;
        return;
    }
    for (uint32_t i = 0; i < w->moves; i++)
        t->log[t->log_count++] = w->move[i].bucket;
}

/* The buckets [from, to) that hold entries, into the log being built (no longer built if
 * they do not fit). */
static void log_range(tag_table *t, uint64_t from, uint64_t to)
{
    for (uint64_t b = from; b < to && t->log_building; b++) {
        if (bucket_empty(t, b))
            continue;
        if (t->log_count == t->log_room)
            t->log_building = false;
        else
            t->log[t->log_count++] = b;
    }
}

/* After a whole pass over table tb of t: a table whose log was built through the pass
 * (every bucket the sweep found holding entries, and every bucket written) has it
 * whole; one left with few entries for its size (half its log's room at most) builds
 * one through the next pass; one with more gives its log back. */
static void log_adapt(tagged_filter *t, tag_table *tb)
{
    if (tb->log_building) {
        tb->log_building = false;
        tb->log_lost = false;
    }
    log_if_empty(tb);
    if (log_whole(tb))
        return;
    if (tb->entries > log_room_for(tb) / 2) {
        once_words_free(tb->log);
        tb->log = NULL;
        tb->log_room = 0;
        return;
    }
    table_take_log(t, tb, 0);
    if (tb->log == NULL)
        return;
    tb->log_count = 0;
    tb->log_lost = true;
    tb->log_building = true;
}

/* Where a walk's own entry sits once placed (bucket UINT64_MAX: not yet). */
typedef struct tag_held {
    uint64_t bucket;
    uint32_t slot;
} tag_held;

/* The free slots of bucket b, whose entries are e, as bits: empty, or expired in frame
 * fr, and not the walk's own entry (`held`). */
static inline uint32_t entries_room(const uint64_t e[SLOTS], uint64_t b, const tag_frame *fr,
                                    const tag_held *held)
{
    uint32_t free = entries_free(e, fr);
    if (b == held->bucket)
        free &= ~(UINT32_C(1) << held->slot);
    return free;
}

/*
 * Put `entry` (the key at place p) into the table: into a free slot of the emptier of
 * its buckets, or else by a walk (walk_kicks); every slot written is recorded in w.
 * Slots whose entries are dead in frame fr are free.
 */
static bool walk_kicks(tag_table *t, const tag_look *l, uint64_t entry, const tag_frame *fr,
                       tag_walk *w);

static inline bool walk_place(tag_table *t, const tag_look *l, uint64_t entry,
                              const tag_frame *fr, tag_walk *w)
{
    w->moves = 0;
    /* The emptier of the two buckets (the first on a tie): balanced buckets leave a
     * free slot to more keys, so fewer walks are needed, and each move of a walk is a
     * miss. */
    uint32_t free1 = entries_free(l->first, fr), free2 = entries_free(l->second, fr);
    if ((free1 | free2) == 0)
        return walk_kicks(t, l, entry, fr, w);
    if (slots_count(free2) > slots_count(free1)) {
        uint32_t s = (uint32_t)__builtin_ctz(free2);
        walk_put(t, w, l->p.second, s, l->second[s], entry);
    } else {
        uint32_t s = (uint32_t)__builtin_ctz(free1);
        walk_put(t, w, l->p.first, s, l->first[s], entry);
    }
    return true;
}

/*
 * Both buckets of the key full: move entries to their other buckets, at most
 * MAX_KICKS moves (Fan et al.'s walk).  Once placed, the walk's own entry is neither
 * moved nor overwritten by the rest of its walk (its slot is skipped), so that a walk
 * tried before the clock moves, in whose frame the new tag does not read as new, takes
 * the same path as the same walk made after (the free slots are the same in both
 * frames: the sweep between them only empties dead ones).  Deterministic: the victim
 * of kick j is a function of its bucket and j.  false (w holds the moves, for
 * walk_undo) if it found no free slot.  Out of line: a walk is a few percent of the
 * insertions near MAX_LOAD, and its frame would burden every one.
 */
static __attribute__((noinline)) bool walk_kicks(tag_table *t, const tag_look *l,
                                                 uint64_t entry, const tag_frame *fr,
                                                 tag_walk *w)
{
    tag_held held = {UINT64_MAX, SLOTS};
    uint64_t b = (l->p.fp & 1) ? l->p.second : l->p.first;
    uint64_t carried = entry;
    for (uint32_t kick = 0; kick < MAX_KICKS; kick++) {
        uint64_t r = (b ^ ((uint64_t)kick * GOLDEN)) * UINT64_C(0xbf58476d1ce4e5b9);
        uint32_t victim = (uint32_t)(r >> 62);
        if (b == held.bucket && victim == held.slot)
            victim = (victim + 1) % SLOTS;
        uint64_t evicted = slot_get(t, b, victim);
        walk_put(t, w, b, victim, evicted, carried);
        if (kick == 0)
            held = (tag_held){b, victim};
        carried = evicted;
        b = other_bucket(b, carried >> t->tag_bits, t->buckets);
        uint64_t e[SLOTS];
        bucket_load(t, b, e);
        uint32_t room = entries_room(e, b, fr, &held);
        if (room != 0) {
            uint32_t s = (uint32_t)__builtin_ctz(room);
            walk_put(t, w, b, s, e[s], carried);
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------------ growth */

/* The fingerprint of the next table: half of what the tables now alive leave of the
 * target at their current loads (0: none fits). */
static uint32_t next_fp_bits(const tagged_filter *t, const tag_frame *fr)
{
    double used = 0;
    for (uint32_t i = 0; i < t->count; i++)
        used += table_rate(&t->tables[i], table_alive(&t->tables[i], fr));
    double left = t->error - used;
    return left > 0 ? fp_bits_for(left / 2.0, t->tag_bits) : 0;
}

/* A table of `buckets` and `fp_bits` in *out, allocated with room in the list for it
 * (not yet in it), or the reason it cannot be: ONCE_ERR_FULL past the limits or the
 * cap, ONCE_ERR_NOMEM.  Nothing of the filter changes but the list's room. */
static once_status table_open(tagged_filter *t, uint64_t buckets, uint32_t fp_bits,
                              uint64_t opened, tag_table *out)
{
    if (fp_bits == 0 || t->count >= TAGGED_MAX_TABLES ||
        !table_fits(buckets, fp_bits + t->tag_bits))
        return ONCE_ERR_FULL;
    uint64_t bytes =
        tables_bytes(t) + once_words_memory(table_words(buckets, fp_bits + t->tag_bits));
    uint64_t room = t->room > t->count + 1 ? t->room : t->count + 1;
    if (!once_fits_cap(memory_for(room, bytes), t->base.metadata_len, t->max_bytes))
        return ONCE_ERR_FULL;
    if (table_init(out, buckets, fp_bits, t->tag_bits, opened) != ONCE_OK)
        return ONCE_ERR_NOMEM;
    if (!list_grow(t)) {
        table_free(out);
        return ONCE_ERR_NOMEM;
    }
    table_take_log(t, out, once_words_memory(out->word_count)); /* empty: a whole log */
    t->pace_due = true; /* buckets to come */
    return ONCE_OK;
}

/* ------------------------------------------------------------------ the clock */

static inline tag_frame frame_at(const tagged_filter *t, uint64_t ahead)
{
    if (ahead == 0) {
        tag_frame fr = {t->now,  t->tag_mask,        t->live_now, t->keep_now,
                        0,       t->span_ticks + 1,  t->keep_ticks + 1};
        return fr;
    }
    return frame_of(t->now, ahead, t->span_ticks, t->keep_ticks, t->tag_mask);
}

/* The frame of a late event judged d ticks before the clock's (0 < d <= lag_ticks):
 * found by the entries within S ticks of its own, on either side, and the clock's kept
 * tags (see "Time"). */
static tag_frame frame_late(const tagged_filter *t, uint64_t d)
{
    tag_frame fr = frame_at(t, 0);
    fr.young = d > t->span_ticks ? d - t->span_ticks : 0;
    fr.ages = d + t->span_ticks - fr.young + 1;
    fr.live = tag_run(t->now, fr.young, fr.ages, t->tag_mask);
    return fr;
}

/* Set the clock's tick c, with what the writes of a tick read instead of computing:
 * where the next tick begins (no division while the clock stays in c) and the live
 * tags at c. */
static void clock_set_tick(tagged_filter *t, uint64_t c)
{
    t->now = c;
    t->tick_end = c + 1 > UINT64_MAX / t->tick ? UINT64_MAX : (c + 1) * t->tick;
    t->live_now = tag_run(c, 0, t->span_ticks + 1, t->tag_mask);
    t->keep_now = tag_run(c, 0, t->keep_ticks + 1, t->tag_mask);
    t->pace_due = true; /* the ages moved */
}

/* The frame of a read at R = max(L, now_ms). */
static tag_frame read_frame(const tagged_filter *t, uint64_t now_ms)
{
    uint64_t ahead = 0;
    if (t->started && now_ms > t->latest)
        ahead = now_ms / t->tick - t->now;
    return frame_at(t, ahead);
}

/* The tick a write at `ms` is judged and written at, with a lag, when the clock stays
 * at L: its own for L - H <= ms, L - H's before (the clock's tick without a lag). */
static inline uint64_t lag_tick(const tagged_filter *t, uint64_t ms)
{
    uint64_t at = t->latest - ms > t->lag ? t->latest - t->lag : ms;
    return at / t->tick;
}

/* The frame of a query at now_ms: a late one, within the lag, at its own time (as a
 * write there is judged); any other at max(L, now_ms). */
static tag_frame query_frame(const tagged_filter *t, uint64_t now_ms)
{
    if (t->lag != 0 && t->started && now_ms < t->latest && t->latest - now_ms <= t->lag &&
        now_ms / t->tick < t->now)
        return frame_late(t, t->now - now_ms / t->tick);
    return read_frame(t, now_ms);
}

/* Free the tables, other than the newest, with nothing alive at the clock. */
static void drop_empty(tagged_filter *t)
{
    tag_frame fr = frame_at(t, 0);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        if (i + 1 < t->count && table_alive(&t->tables[i], &fr) == 0) {
            table_free(&t->tables[i]);
            t->pace_due = true;
            continue;
        }
        if (kept != i)
            t->tables[kept] = t->tables[i];
        kept++;
    }
    t->count = kept;
}

/*
 * Settling: a table that grew for a burst, or by doubling from a small first guess,
 * keeps its size and the fingerprints its share of the target gave it.  Once the
 * newest has taken keys for a span and a tick, the live entries are the keys of a
 * whole span at the current rate: if the newest is more than twice what they need
 * (with SETTLE_ROOM), or its fingerprints are two bits wider than a table opened now
 * would take, a table of that size opens for the next keys and the old one drains.
 * Never below the first table's size (the capacity asked is a floor).  Optional: a
 * table that cannot be had (the cap, memory) leaves things as they are.
 */
#define SETTLE_ROOM 1.125

static void settle(tagged_filter *t)
{
    const tag_table *newest = &t->tables[t->count - 1];
    if (t->now - newest->opened / t->tick <= t->keep_ticks) /* K: the keys a table keeps */
        return;
    tag_frame fr = frame_at(t, 0);
    uint64_t alive = 0;
    for (uint32_t i = 0; i < t->count; i++)
        alive += table_alive(&t->tables[i], &fr);
    double need = ceil((double)alive * SETTLE_ROOM / (SLOTS * MAX_LOAD));
    uint64_t buckets = need > (double)t->plan_buckets ? (uint64_t)need : t->plan_buckets;
    uint32_t fp_bits = next_fp_bits(t, &fr);
    if (newest->buckets <= 2 * buckets && fp_bits + 2 > newest->fp_bits)
        return;
    /* Settling saves memory or it does not happen: a table no smaller than the newest
     * (a rate that grew since, or a planned size a loaded file overstates) is left to
     * growth. */
    if (!table_fits(buckets, fp_bits + t->tag_bits) ||
        once_words_memory(table_words(buckets, fp_bits + t->tag_bits)) >=
            once_words_memory(newest->word_count))
        return;
    tag_table fresh;
    if (table_open(t, buckets, fp_bits, t->latest, &fresh) == ONCE_OK)
        t->tables[t->count++] = fresh;
}

/* Would an entry of table tb reach the age 2^g (its tag read as new) if the clock moved
 * d ticks (at most K)?  Ages are exact until then: by_tag tells. */
static bool ages_would_wrap(const tagged_filter *t, const tag_table *tb, uint64_t d)
{
    for (uint64_t age = t->tag_mask + 1 - d; age <= t->tag_mask; age++)
        if (tb->by_tag[(t->now - age) & t->tag_mask] != 0)
            return true;
    return false;
}

/* Empty every entry of table tb dead in frame fr: its logged buckets if its log is whole,
 * else all of them; the cursor, the log and its pass are left as they are. */
static void sweep_all(tag_table *tb, const tag_frame *fr)
{
    if (!log_whole(tb)) {
        table_sweep(tb, 0, tb->buckets, fr);
        return;
    }
    for (uint32_t i = 0; i < tb->log_count; i++)
        table_sweep(tb, tb->log[i], tb->log[i] + 1, fr);
}

/* Move the clock to `latest` (admissible, not before L): at the end of a pass's P ticks
 * finish it, and before any entry's age would reach 2^g sweep it away (see "Time"); free
 * what emptied, and settle (unless the write opens a table itself: `growing`). */
static void clock_move(tagged_filter *t, uint64_t latest, bool growing)
{
    uint64_t c = latest / t->tick;
    bool first = !t->started;
    t->latest = latest;
    t->started = true;
    if (first) {
        clock_set_tick(t, c);
        t->tables[t->count - 1].opened = latest;
        t->passing = true;
        return;
    }
    uint64_t d = c - t->now;
    if (d == 0)
        return;
    t->passing = true; /* a pass may begin, tables be wiped or opened */
    bool past_k = d > t->keep_ticks;
    if (past_k || c / PASS_TICKS != t->now / PASS_TICKS) { /* the pass ends */
        /* Past K ticks every entry emptied, whether or not the move crosses a pass's
         * end (a carried pass may have left entries whose ages such a move would take
         * past 2^g).  Else the rest of the pass, at its last tick (a jump: at the new
         * tick; a jump within K carries a pass under way instead).  A pass over the log
         * visits the rest of the buckets logged as it began (its log lost since, or
         * not: they hold every entry that may have been dead then).  Either way the
         * cursor (saved) goes on as without a log. */
        tag_frame fr = frame_at(t, d == 1 ? 0 : d);
        for (uint32_t i = 0; i < t->count; i++) {
            tag_table *tb = &t->tables[i];
            if (past_k) {
                if (log_whole(tb))
                    log_clear(tb);
                if (tb->entries != 0)
                    table_wipe(tb);
            } else if (d >= 2 && tb->cursor < tb->buckets) {
                continue; /* a pause carries the pass under way over the writes after it */
            } else if (tb->log_pass) {
                log_pass_end(tb, &fr);
            } else {
                table_sweep(tb, tb->cursor, tb->buckets, &fr);
                log_range(tb, tb->cursor, tb->buckets);
            }
            log_adapt(t, tb);
            pass_begin(tb);
        }
    }
    /* The tags' limit itself: an entry whose age would reach 2^g at the new tick leaves
     * first (passes on time leave none; after a jump one may).  Past K, the tables were
     * emptied. */
    if (!past_k) {
        tag_frame fr = frame_at(t, d);
        for (uint32_t i = 0; i < t->count; i++)
            if (ages_would_wrap(t, &t->tables[i], d))
                sweep_all(&t->tables[i], &fr);
    }
    clock_set_tick(t, c);
    drop_empty(t);
    if (!growing) { /* a write that opens a table keeps the room it made for it */
        settle(t);
        list_fit(t);
    }
}

/* The buckets a write sweeps ("Time": pacing), from the tables' buckets and their
 * entries of ages 1 to K at the clock. */
static void pace(tagged_filter *t)
{
    uint64_t buckets = 0, settled = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const tag_table *tb = &t->tables[i];
        buckets += tb->buckets;
        for (uint64_t age = 1; age <= t->keep_ticks; age++)
            settled += tb->by_tag[(t->now - age) & t->tag_mask];
    }
    uint64_t step = SWEEP_STEP;
    if (buckets >= PACE_MIN_BUCKETS) {
        /* a pass of P ticks brings about settled P / K writes: sweep it in half of them */
        uint64_t writes = settled * PASS_TICKS;
        step = writes == 0 ? PACE_MAX_STEP : (2 * buckets * t->keep_ticks + writes - 1) / writes;
        step = step < SWEEP_STEP ? SWEEP_STEP : step > PACE_MAX_STEP ? PACE_MAX_STEP : step;
    }
    t->step = (uint32_t)step;
    t->pace_due = false;
}

/* A write's share of its tick's pass (inline: every write runs it, and most find the pass
 * done): over a table's buckets from the cursor, or for a pass over its log the share of
 * the logged buckets the cursor's move stands for. */
static inline void sweep_step(tagged_filter *t)
{
    if (!t->passing)
        return;
    if (t->pace_due)
        pace(t);
    uint64_t left = t->step;
    for (uint32_t i = 0; i < t->count && left > 0; i++) {
        tag_table *tb = &t->tables[i];
        if (tb->cursor >= tb->buckets)
            continue;
        tag_frame fr = frame_at(t, 0);
        uint64_t to = tb->buckets - tb->cursor < left ? tb->buckets : tb->cursor + left;
        left -= to - tb->cursor;
        if (tb->log_pass) { /* the logged buckets in step with the cursor */
            log_visit_to(tb, &fr, (uint32_t)(tb->log_snap * to / tb->buckets));
        } else {
            table_sweep(tb, tb->cursor, to, &fr);
            log_range(tb, tb->cursor, to);
        }
        tb->cursor = to;
        if (to == tb->buckets)
            log_if_empty(tb);
    }
    if (left > 0) /* every table's pass is finished */
        t->passing = false;
}

/* ------------------------------------------------------------------ writes */

/*
 * A write at `ms`: test (if `test`), then insert the key unless it was found (under
 * the first-delivery policy), or refresh its tag where it was found.  Everything that
 * can fail comes before the first change: the new table, if the newest is full or the
 * walk into it fails, and the walk itself, tried in the frame of the new clock and
 * undone when the clock is about to move (the sweep must run before an entry with
 * the new tag is in the table).
 */
static once_status tagged_write(tagged_filter *t, const once_hash *h, uint64_t ms, bool test,
                                bool *seen)
{
    if (!once_time_admissible(&t->base, t->latest, t->started, ms))
        return ONCE_ERR_TIME;
    uint64_t latest = t->started && ms < t->latest ? t->latest : ms;
    uint64_t c = t->started && latest < t->tick_end ? t->now : latest / t->tick;
    /* u: the tick the event is judged and written at; the clock's but for a late event
     * with a lag, which keeps its own (L - H's at the earliest). */
    uint64_t u = t->lag != 0 && ms < latest ? lag_tick(t, ms) : c;
    uint64_t tag = u & t->tag_mask;
    /* The new clock, read from the tables as they are. */
    tag_frame fr = t->started ? frame_at(t, c - t->now)
                              : frame_of(c, 0, t->span_ticks, t->keep_ticks, t->tag_mask);
    if (u != c) { /* late: the clock stays; ages 1..K may gain an entry (pace) */
        fr = frame_late(t, c - u);
        t->pace_due = true;
    }
    bool moves = !t->started || c != t->now;

    tag_look look;
    uint64_t bucket = 0;
    uint32_t slot = 0;
    bool found = find_any(t, h, &fr, &look, &bucket, &slot) < t->count;
    if (seen)
        *seen = test && found;
    if (found) {
        clock_move(t, latest, false);
        if (!test || t->policy == ONCE_POLICY_REFRESH) {
            /* The entry takes the later of its tick and u: its own if its age at c is
             * at most c - u (a late repeat of a later delivery), else u's. */
            if (u == c)
                fr = frame_at(t, 0);
            uint32_t held = find_any(t, h, &fr, &look, &bucket, &slot); /* tables may have left */
            tag_table *tb = &t->tables[held];
            uint64_t e = slot_get(tb, bucket, slot), mask = t->tag_mask;
            uint64_t g = ((c - (e & mask)) & mask) <= c - u ? e & mask : tag;
            slot_put(tb, bucket, slot, (e & ~mask) | g);
            t->pace_due |= g != (e & mask); /* an entry left ages 1..K (pace) */
        }
        sweep_step(t);
        return ONCE_OK;
    }

    /* A new key: into the newest table, or a new one. */
    tag_walk walk;
    tag_table fresh;
    tag_table *newest = &t->tables[t->count - 1];
    /* Full at MAX_LOAD live: the entries bound the live ones, so the sum over the ages
     * is needed only near the limit, and it is kept through a tick: the tick's writes
     * add keys to the newest table or move its live entries, the sweep removes dead
     * ones, so the live count at the tick changes only by the keys added. */
    uint64_t limit = newest->limit;
    bool grow = false;
    if (newest->entries + 1 > limit) {
        if (moves) {
            grow = table_alive(newest, &fr) + 1 > limit;
        } else {
            if (newest->counted_at != t->now + 1) {
                newest->alive = table_alive(newest, &fr);
                newest->counted_at = t->now + 1;
            }
            grow = newest->alive + 1 > limit;
        }
    }
    if (!grow) { /* the look is the newest table's, as it is */
        bool placed = walk_place(newest, &look, look.p.fp_entry | tag, &fr, &walk);
        if (placed && !moves) {
            log_walk(newest, &walk);
            t->latest = latest; /* within the tick: nothing else of the clock changes */
            newest->alive += newest->counted_at == t->now + 1;
            sweep_step(t);
            return ONCE_OK;
        }
        walk_undo(newest, &walk); /* tried: made again once the clock has moved */
        grow = !placed;
    }
    if (grow) { /* twice the newest's buckets */
        once_status st = table_open(t, newest->buckets * 2, next_fp_bits(t, &fr), latest, &fresh);
        if (st != ONCE_OK)
            return st;
    }
    clock_move(t, latest, grow);
    if (grow) {
        t->tables[t->count++] = fresh;
        t->passing = true;
        list_fit(t);
    }
    newest = &t->tables[t->count - 1];
    look_at(newest, h, &look); /* swept, or a new table */
    fr = frame_at(t, 0);
    if (!walk_place(newest, &look, look.p.fp_entry | tag, &fr, &walk)) {
        walk_undo(newest, &walk); /* not reached: the same walk fitted before */
        return ONCE_ERR_FULL;
    }
    log_walk(newest, &walk);
    sweep_step(t);
    return ONCE_OK;
}

static once_status tagged_add(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    return tagged_write(TAGGED(f), h, now_ms, false, NULL);
}

static once_status tagged_test_and_add(once_filter *f, const once_hash *h, uint64_t now_ms,
                                       bool *seen)
{
    return tagged_write(TAGGED(f), h, now_ms, true, seen);
}

static bool tagged_query(const once_filter *f, const once_hash *h, uint64_t now_ms)
{
    const tagged_filter *t = CTAGGED(f);
    if (!t->started)
        return false;
    /* Without a lag, or at or past the clock, the read of before (no lag test on the
     * way): a frame at R = max(L, now). */
    tag_frame fr = t->lag == 0 || now_ms >= t->latest ? read_frame(t, now_ms)
                                                      : query_frame(t, now_ms);
    if (fr.ages == 0)
        return false;
    tag_look look;
    uint64_t bucket;
    uint32_t slot;
    return find_any(t, h, &fr, &look, &bucket, &slot) < t->count;
}

/*
 * Batches, in three steps a key (once_batch_loop_staged, core/batch_loop.h): its
 * buckets in the newest table requested TAGGED_AHEAD keys before its answer; the
 * newest asked TAGGED_OLDER_AHEAD keys before, and only if it lacks the key, the older
 * tables' buckets requested; then the one-key operation at its turn.  The first two
 * are hints read from the state of the moment: the writes in between may move the
 * clock, open or free tables, so the answer is the one-key call's, in array order
 * (a stale request is a wasted prefetch, never a wrong answer).  A key the newest
 * holds costs its two lines; a new key, two a table, requested together rather than
 * missed one table after the other: 20M lines of which half repeat, in four tables
 * (`once --span 1h`, capacity 10^6), took 0.7x the time of a loop that requested the
 * newest's lines alone.  The newest's distance is the loop's before, 12 keys; 8/4 to
 * 24/12 measured alike, for one table and for four.
 */
#define TAGGED_AHEAD 12
#define TAGGED_OLDER_AHEAD 6

typedef struct tagged_record {
    once_hash h;
} tagged_record;

static inline __attribute__((always_inline)) void
tagged_request_newest(const void *ctx, void *record, const once_hash *h, once_batch_op op)
{
    (void)op;
    const tagged_filter *t = ctx;
    ((tagged_record *)record)->h = *h;
    const tag_table *newest = &t->tables[t->count - 1];
    tag_place p = place_of(newest, h);
    prefetch_place(newest, &p);
}

static inline __attribute__((always_inline)) void
tagged_request_older(const void *ctx, const void *record, once_batch_op op)
{
    (void)op;
    const tagged_filter *t = ctx;
    if (t->count < 2)
        return;
    const once_hash *h = &((const tagged_record *)record)->h;
    tag_frame fr = frame_at(t, 0);
    tag_look look;
    uint64_t bucket;
    uint32_t slot;
    look_at(&t->tables[t->count - 1], h, &look);
    if (look_find(&look, &fr, &bucket, &slot))
        return;
    for (uint32_t i = 0; i + 1 < t->count; i++) {
        tag_place p = place_of(&t->tables[i], h);
        prefetch_place(&t->tables[i], &p);
    }
}

static inline __attribute__((always_inline)) once_status
tagged_batch_step(const void *ctx, void *record, uint64_t now_ms, once_batch_op op, bool *answer)
{
    tagged_filter *t = (tagged_filter *)ctx; /* the batch's own, writable filter */
    const once_hash *h = &((const tagged_record *)record)->h;
    if (op == ONCE_OP_QUERY) {
        *answer = tagged_query(&t->base, h, now_ms);
        return ONCE_OK;
    }
    return tagged_write(t, h, now_ms, op == ONCE_OP_TEST_AND_ADD, answer);
}

static __attribute__((flatten)) once_status tagged_batch(once_filter *f,
                                                         const once_batch_items *items,
                                                         size_t count, once_batch_op op,
                                                         uint8_t *out, size_t *done)
{
    tagged_record ring[ONCE_BATCH_LOOP_RING];
    return once_batch_loop_staged_any(items, count, op, out, done, TAGGED_AHEAD,
                                          TAGGED_OLDER_AHEAD, ring, sizeof ring[0], f,
                                          tagged_request_newest, tagged_request_older,
                                          tagged_batch_step);
}

/*
 * Can the next `keys` new keys be written with none refused for memory (can_take in
 * core/structure.h)?  Only table_open refuses, when the newest is full or a walk into
 * it fails.  So: the newest has room for them all below its limit (its live count at
 * the clock, which later ticks only lower), and a table the newest's failing walk would
 * open fits the limits and the cap, with the fingerprints the target leaves with the
 * newest at its limit (more live entries ask more bits of the next table).  The cap
 * also keeps room for a settled table, never larger than the newest, that a clock
 * move may open first.  The keys then fit the newest, or the one table opened after
 * it, at most half its limit: a walk in a table that empty does not fail.
 */
static bool tagged_can_take(const once_filter *f, uint64_t keys, uint64_t until_ms)
{
    (void)until_ms;
    const tagged_filter *t = CTAGGED(f);
    const tag_table *newest = &t->tables[t->count - 1];
    tag_frame fr = frame_at(t, 0);
    uint64_t alive = t->started ? table_alive(newest, &fr) : newest->entries;
    if (alive > newest->limit || keys > newest->limit - alive ||
        t->count + 2 > TAGGED_MAX_TABLES)
        return false;
    double used = table_rate(newest, newest->limit);
    for (uint32_t i = 0; i + 1 < t->count; i++)
        used += table_rate(&t->tables[i], t->started ? table_alive(&t->tables[i], &fr) : 0);
    uint32_t fp_bits = t->error > used ? fp_bits_for((t->error - used) / 2.0, t->tag_bits) : 0;
    uint64_t buckets = newest->buckets * 2;
    if (fp_bits == 0 || buckets / 2 != newest->buckets ||
        !table_fits(buckets, fp_bits + t->tag_bits))
        return false;
    uint64_t bytes = tables_bytes(t) + once_words_memory(newest->word_count) +
                     once_words_memory(table_words(buckets, fp_bits + t->tag_bits));
    uint64_t room = t->room > t->count + 2 ? t->room : t->count + 2;
    return once_fits_cap(memory_for(room, bytes), t->base.metadata_len, t->max_bytes);
}

/* ------------------------------------------------------------ whole filter */

static void tagged_destroy(once_filter *f)
{
    tagged_filter *t = TAGGED(f);
    for (uint32_t i = 0; i < t->count; i++)
        table_free(&t->tables[i]);
    once_free_memory(t->tables);
    once_free_memory(t);
}

/* Back to the newest table, empty, before any event. */
static void tagged_clear(once_filter *f)
{
    tagged_filter *t = TAGGED(f);
    for (uint32_t i = 0; i + 1 < t->count; i++)
        table_free(&t->tables[i]);
    if (t->count > 1)
        t->tables[0] = t->tables[t->count - 1];
    t->count = 1;
    list_fit(t);
    table_wipe(&t->tables[0]);
    t->tables[0].opened = 0;
    t->latest = 0;
    clock_set_tick(t, 0);
    t->started = false;
}

static bool tagged_clock(const once_filter *f, uint64_t *latest)
{
    *latest = CTAGGED(f)->latest;
    return CTAGGED(f)->started;
}

static uint64_t tagged_lag(const once_filter *f)
{
    return CTAGGED(f)->lag;
}

static bool tagged_same_geometry(const once_filter *x, const once_filter *y)
{
    const tagged_filter *a = CTAGGED(x), *b = CTAGGED(y);
    return a->span == b->span && a->lag == b->lag && a->plan_buckets == b->plan_buckets &&
           a->error == b->error;
}

static void tagged_stats(const once_filter *f, once_stats *st)
{
    const tagged_filter *t = CTAGGED(f);
    tag_frame fr = frame_at(t, 0);
    st->bits = 0;
    st->bits_set = 0;
    st->fpr_estimate = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const tag_table *tb = &t->tables[i];
        uint64_t alive = t->started ? table_live(tb, &fr) : 0;
        st->bits += table_slots(tb);
        st->bits_set += alive;
        st->fpr_estimate += table_rate(tb, alive);
    }
    st->hashes = 2;
    st->design_fpr = t->error;
    st->span_ms = t->span;
    st->window = t->span;
    st->slack = (t->span_ticks + 1) * t->tick - t->span;
    st->filters = t->count;
    st->newest_bits = table_slots(&t->tables[t->count - 1]) * t->tables[t->count - 1].width;
    st->lag_ms = t->lag;
}

/* The keys alive: the live entries, each a key (two keys of one fingerprint and
 * buckets are one entry, at the false-positive rate: the low end). */
static once_status tagged_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                      once_cardinality *out)
{
    const tagged_filter *t = CTAGGED(f);
    tag_frame fr = read_frame(t, now_ms);
    double alive = 0, rate = 0;
    for (uint32_t i = 0; t->started && i < t->count; i++) {
        uint64_t n = table_live(&t->tables[i], &fr);
        alive += (double)n;
        rate += table_rate(&t->tables[i], n);
    }
    out->estimate = alive;
    out->low = alive;
    out->high = rate < 1.0 ? alive / (1.0 - rate) : alive;
    out->confidence = confidence;
    return ONCE_OK;
}

static uint64_t tagged_memory(const once_filter *f)
{
    return memory_for(CTAGGED(f)->room, tables_bytes(CTAGGED(f)));
}

static uint64_t tagged_memory_cap(const once_filter *f)
{
    return CTAGGED(f)->max_bytes;
}

static void tagged_set_memory_cap(once_filter *f, uint64_t cap)
{
    TAGGED(f)->max_bytes = once_cap_or_default(cap);
}

/* ------------------------------------------------------------ construction */

typedef struct tagged_geometry {
    uint64_t span, lag, plan_buckets, max_bytes;
    uint32_t policy, fp_bits;
    double error;
} tagged_geometry;

static uint64_t tick_for(uint64_t span)
{
    return (span + TICKS_PER_SPAN - 1) / TICKS_PER_SPAN;
}

/* S: the ticks of a span, at most TICKS_PER_SPAN. */
static uint64_t span_ticks_for(uint64_t span)
{
    uint64_t tick = tick_for(span);
    return (span + tick - 1) / tick;
}

/* H_ticks = ceil(H / tick): a late event's tick is at most this many before the clock's
 * (floor((L - H) / tick) >= c - ceil(H / tick)). */
static uint64_t lag_ticks_for(uint64_t span, uint64_t lag)
{
    uint64_t tick = tick_for(span);
    return lag / tick + (lag % tick != 0);
}

/* A lag the tags can hold: at most MAX_LAG_SPANS spans (so H_ticks <= 2 S and the ages
 * K + 2P - 1 <= 55 fit the 6-bit tags). */
static bool lag_fits(uint64_t span, uint64_t lag)
{
    return lag <= MAX_LAG_SPANS * span;
}

static uint32_t tag_bits_for(uint64_t lag)
{
    return lag != 0 ? LAG_TAG_BITS : TAG_BITS;
}

/* The filter of a geometry, before any event, without its tables (the caller adds
 * them); NULL without memory. */
static tagged_filter *tagged_alloc(const tagged_geometry *g)
{
    tagged_filter *t = once_calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    once_filter_init(&t->base, &once_tagged_ops);
    t->span = g->span;
    t->tick = tick_for(g->span);
    t->span_ticks = span_ticks_for(g->span);
    t->lag = g->lag;
    t->lag_ticks = lag_ticks_for(g->span, g->lag);
    t->keep_ticks = t->span_ticks + t->lag_ticks;
    t->tag_bits = tag_bits_for(g->lag);
    t->tag_mask = (UINT64_C(1) << t->tag_bits) - 1;
    t->policy = g->policy;
    t->error = g->error;
    t->plan_buckets = g->plan_buckets;
    t->max_bytes = g->max_bytes;
    clock_set_tick(t, 0);
    return t;
}

/* One empty filter with its first table (ONCE_ERR_INVALID for a geometry out of range,
 * ONCE_ERR_TOO_LARGE past the limits or its own cap, checked before allocating). */
static once_status tagged_new(once_filter **out, const tagged_geometry *g)
{
    uint32_t tag_bits = tag_bits_for(g->lag);
    if (g->span == 0 || g->span > TAGGED_MAX_SPAN || !lag_fits(g->span, g->lag) ||
        g->plan_buckets == 0 || g->fp_bits == 0 || g->fp_bits + tag_bits > MAX_ENTRY_BITS ||
        g->policy > ONCE_POLICY_REFRESH || !(g->error > 0.0 && g->error < 1.0) ||
        g->max_bytes == 0)
        return ONCE_ERR_INVALID;
    if (!table_fits(g->plan_buckets, g->fp_bits + tag_bits))
        return ONCE_ERR_TOO_LARGE;
    uint64_t words = table_words(g->plan_buckets, g->fp_bits + tag_bits);
    if (memory_for(1, once_words_memory(words)) > g->max_bytes)
        return ONCE_ERR_TOO_LARGE;
    tagged_filter *t = tagged_alloc(g);
    if (t == NULL)
        return ONCE_ERR_NOMEM;
    t->tables = once_calloc(1, sizeof *t->tables);
    if (t->tables == NULL ||
        table_init(&t->tables[0], g->plan_buckets, g->fp_bits, tag_bits, 0) != ONCE_OK) {
        once_free_memory(t->tables);
        once_free_memory(t);
        return ONCE_ERR_NOMEM;
    }
    t->count = 1;
    t->room = 1;
    table_take_log(t, &t->tables[0], 0); /* empty: a whole log */
    *out = &t->base;
    return ONCE_OK;
}

/* Buckets for `capacity` keys a span: the keys of the S + H_ticks + 1 ticks an entry
 * is kept for, at once, at MAX_LOAD (S + 1 without a lag). */
static uint64_t buckets_for(uint64_t capacity, uint64_t span, uint64_t lag)
{
    uint64_t ticks = span_ticks_for(span);
    double alive = (double)capacity * (double)(ticks + lag_ticks_for(span, lag) + 1) /
                   (double)ticks;
    double buckets = ceil(alive / (SLOTS * MAX_LOAD));
    return buckets < 1.0 ? 1 : (uint64_t)buckets;
}

static once_status tagged_create(once_filter **out, const once_config *c)
{
    /* A lag past MAX_LAG_SPANS spans is refused: its ages would not fit the tags, and
     * the entries it keeps would cost more than the span's own. */
    if (c->span_ms == 0 || c->span_ms > TAGGED_MAX_SPAN || c->capacity == 0 ||
        !lag_fits(c->span_ms, c->lag_ms) ||
        (c->policy != ONCE_POLICY_FIRST && c->policy != ONCE_POLICY_REFRESH))
        return ONCE_ERR_INVALID;
    if (c->capacity > ONCE_MAX_CELLS)
        return ONCE_ERR_TOO_LARGE;
    tagged_geometry g = {
        .span = c->span_ms,
        .lag = c->lag_ms,
        .plan_buckets = buckets_for(c->capacity, c->span_ms, c->lag_ms),
        .max_bytes = once_cap_or_default(c->max_bytes),
        .policy = (uint32_t)c->policy,
        .fp_bits = fp_bits_for(c->error, tag_bits_for(c->lag_ms)),
        .error = c->error,
    };
    return tagged_new(out, &g);
}

/* ---------------------------------------------------------- serialization */

/* Saved parameters, in order, then (a filter with a lag: version 2 of the parameters)
 * L_COUNT more, then T_COUNT for each table, oldest first.  A filter without a lag
 * writes version 1, the bytes it wrote before lags were. */
enum {
    P_SPAN,
    P_TICK,
    P_POLICY,
    P_ERROR, /* IEEE-754 binary64 bits */
    P_PLAN_BUCKETS,
    P_MAX_BYTES,
    P_LATEST,
    P_STARTED,
    P_MAX_TIME_JUMP,
    P_TABLES,
    P_COUNT
};
enum { L_LAG, L_TAG_BITS, L_COUNT };
enum { T_BUCKETS, T_FP_BITS, T_CURSOR, T_OPENED, T_COUNT };

static uint64_t lag_params(const tagged_filter *t)
{
    return t->lag != 0 ? L_COUNT : 0;
}

static uint64_t tagged_params_size(const once_filter *f)
{
    const tagged_filter *t = CTAGGED(f);
    return (P_COUNT + lag_params(t) + (uint64_t)t->count * T_COUNT) * 8;
}

static uint64_t tagged_payload_size(const once_filter *f)
{
    const tagged_filter *t = CTAGGED(f);
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < t->count; i++)
        bytes += t->tables[i].word_count * 8;
    return bytes;
}

static void tagged_save_params(const once_filter *f, once_writer *w)
{
    const tagged_filter *t = CTAGGED(f);
    uint64_t error_bits;
    memcpy(&error_bits, &t->error, sizeof error_bits);
    uint64_t v[P_COUNT] = {
        [P_SPAN] = t->span,
        [P_TICK] = t->tick,
        [P_POLICY] = t->policy,
        [P_ERROR] = error_bits,
        [P_PLAN_BUCKETS] = t->plan_buckets,
        [P_MAX_BYTES] = t->max_bytes,
        [P_LATEST] = t->latest,
        [P_STARTED] = t->started,
        [P_MAX_TIME_JUMP] = t->base.max_time_jump,
        [P_TABLES] = t->count,
    };
    for (int i = 0; i < P_COUNT; i++)
        once_writer_u64(w, v[i]);
    if (t->lag != 0) {
        once_writer_u64(w, t->lag);
        once_writer_u64(w, t->tag_bits);
    }
    for (uint32_t i = 0; i < t->count; i++) {
        const tag_table *tb = &t->tables[i];
        once_writer_u64(w, tb->buckets);
        once_writer_u64(w, tb->fp_bits);
        once_writer_u64(w, tb->cursor);
        once_writer_u64(w, tb->opened);
    }
}

/* Clear bits [from, to) of an array of words. */
static void bits_clear(uint64_t *words, uint64_t from, uint64_t to)
{
    for (uint64_t bit = from; bit < to;) {
        uint64_t j = bit >> 6, off = bit & 63, n = 64 - off < to - bit ? 64 - off : to - bit;
        uint64_t mask = n == 64 ? UINT64_MAX : ((UINT64_C(1) << n) - 1) << off;
        words[j] &= ~mask;
        bit += n;
    }
}

/* The tables oldest first, entries past K written as empty (canonical form), in
 * chunks of words: an entry that runs over a chunk's edge is cleared on each side. */
static void tagged_save_payload(const once_filter *f, once_writer *w)
{
    const tagged_filter *t = CTAGGED(f);
    tag_frame fr = frame_at(t, 0);
    enum { CHUNK = 512 };
    uint64_t buffer[CHUNK];
    for (uint32_t i = 0; i < t->count; i++) {
        const tag_table *tb = &t->tables[i];
        if (once_writer_skip(w, tb->word_count * 8))
            continue;
        for (uint64_t at = 0; at < tb->word_count; at += CHUNK) {
            uint64_t n = tb->word_count - at < CHUNK ? tb->word_count - at : CHUNK;
            if (once_writer_skip(w, n * 8))
                continue;
            memcpy(buffer, tb->words + at, (size_t)(n * 8));
            uint64_t lo = at * 64, hi = lo + n * 64;
            for (uint64_t slot = lo / tb->width; slot < table_slots(tb); slot++) {
                uint64_t bit = slot * tb->width;
                if (bit >= hi)
                    break;
                uint64_t e = entry_get(tb->words, bit, tb->width);
                if (e != 0 && !((fr.keep >> (e & fr.mask)) & 1)) { /* past K */
                    uint64_t from = bit > lo ? bit : lo, to = bit + tb->width;
                    bits_clear(buffer, from - lo, (to < hi ? to : hi) - lo);
                }
            }
            once_writer_words(w, buffer, n);
        }
    }
}

static once_status tagged_load(once_filter **out, const uint8_t *params, size_t params_len,
                               const uint8_t *payload, size_t payload_len)
{
    uint64_t v[P_COUNT], lv[L_COUNT] = {0, TAG_BITS};
    if (params_len < P_COUNT * 8 || !once_read_params(params, P_COUNT * 8, v, P_COUNT))
        return ONCE_ERR_CORRUPT;
    if (v[P_TABLES] == 0 || v[P_TABLES] > TAGGED_MAX_TABLES)
        return ONCE_ERR_CORRUPT;
    /* Version 1 (no lag) or 2 (a lag, its tag width), told apart by the length: the
     * tables' words come in fours, and version 2 has two words more. */
    uint64_t extra = 0;
    if (params_len == (P_COUNT + L_COUNT + v[P_TABLES] * T_COUNT) * 8) {
        extra = L_COUNT;
        if (!once_read_params(params + P_COUNT * 8, L_COUNT * 8, lv, L_COUNT))
            return ONCE_ERR_CORRUPT;
        /* a lag of 0 is written as version 1: canonical */
        if (lv[L_LAG] == 0 || lv[L_TAG_BITS] != LAG_TAG_BITS || v[P_SPAN] == 0 ||
            v[P_SPAN] > TAGGED_MAX_SPAN || !lag_fits(v[P_SPAN], lv[L_LAG]))
            return ONCE_ERR_CORRUPT;
    } else if (params_len != (P_COUNT + v[P_TABLES] * T_COUNT) * 8) {
        return ONCE_ERR_CORRUPT;
    }
    uint32_t tag_bits = (uint32_t)lv[L_TAG_BITS];
    double error;
    memcpy(&error, &v[P_ERROR], sizeof error);
    if (v[P_SPAN] == 0 || v[P_SPAN] > TAGGED_MAX_SPAN || v[P_TICK] != tick_for(v[P_SPAN]) ||
        v[P_POLICY] > ONCE_POLICY_REFRESH || !isfinite(error) || !(error > 0.0 && error < 1.0) ||
        v[P_PLAN_BUCKETS] == 0 || v[P_PLAN_BUCKETS] > ONCE_MAX_CELLS / SLOTS ||
        v[P_MAX_BYTES] == 0 || v[P_LATEST] > ONCE_MAX_TIME_MS || v[P_STARTED] > 1 ||
        (!v[P_STARTED] && v[P_LATEST] != 0) || v[P_MAX_TIME_JUMP] > ONCE_MAX_TIME_MS)
        return ONCE_ERR_CORRUPT;
    uint64_t tv[TAGGED_MAX_TABLES][T_COUNT];
    uint64_t bytes = 0, payload_words = 0;
    for (uint64_t i = 0; i < v[P_TABLES]; i++) {
        if (!once_read_params(params + (P_COUNT + extra + i * T_COUNT) * 8, T_COUNT * 8, tv[i],
                              T_COUNT))
            return ONCE_ERR_CORRUPT;
        uint64_t *x = tv[i];
        if (x[T_BUCKETS] == 0 || x[T_FP_BITS] == 0 || x[T_FP_BITS] > MAX_ENTRY_BITS - tag_bits ||
            !table_fits(x[T_BUCKETS], (uint32_t)x[T_FP_BITS] + tag_bits) ||
            x[T_CURSOR] > x[T_BUCKETS] || x[T_OPENED] > v[P_LATEST])
            return ONCE_ERR_CORRUPT;
        uint64_t words = table_words(x[T_BUCKETS], (uint32_t)x[T_FP_BITS] + tag_bits);
        payload_words += words;
        bytes += once_words_memory(words);
    }
    if (payload_len != payload_words * 8 ||
        once_table_memory(sizeof(tagged_filter), v[P_TABLES], SAVED_TABLE_BYTES, bytes) >
            v[P_MAX_BYTES])
        return ONCE_ERR_CORRUPT;

    tagged_geometry g = {
        .span = v[P_SPAN],
        .lag = lv[L_LAG],
        .plan_buckets = v[P_PLAN_BUCKETS],
        .max_bytes = v[P_MAX_BYTES],
        .policy = (uint32_t)v[P_POLICY],
        .error = error,
    };
    tagged_filter *t = tagged_alloc(&g);
    if (t == NULL)
        return ONCE_ERR_NOMEM;
    once_filter *f = &t->base;
    t->tables = once_calloc((size_t)v[P_TABLES], sizeof *t->tables);
    if (t->tables == NULL) {
        tagged_destroy(f);
        return ONCE_ERR_NOMEM;
    }
    t->room = (uint32_t)v[P_TABLES];
    t->latest = v[P_LATEST];
    t->started = v[P_STARTED] != 0;
    t->passing = true;
    clock_set_tick(t, t->latest / t->tick);
    t->base.max_time_jump = v[P_MAX_TIME_JUMP];
    tag_frame fr = frame_at(t, 0);
    size_t at = 0;
    for (uint64_t i = 0; i < v[P_TABLES]; i++) {
        tag_table *tb = &t->tables[t->count];
        if (table_init(tb, tv[i][T_BUCKETS], (uint32_t)tv[i][T_FP_BITS], tag_bits,
                       tv[i][T_OPENED]) != ONCE_OK) {
            tagged_destroy(f);
            return ONCE_ERR_NOMEM;
        }
        t->count++;
        tb->cursor = tv[i][T_CURSOR];
        once_words_from_le(tb->words, payload + at, tb->word_count);
        at += (size_t)(tb->word_count * 8);
        bool canonical =
            once_words_tail_clear(tb->words, tb->word_count, table_slots(tb) * tb->width);
        /* Every stored entry is kept at L, with a fingerprint in [1, 2^f). */
        for (uint64_t b = 0; b < tb->buckets && canonical; b++)
            for (uint32_t s = 0; s < SLOTS && canonical; s++) {
                uint64_t e = slot_get(tb, b, s);
                if (e == 0)
                    continue;
                canonical = t->started && (e >> tag_bits) != 0 && ((fr.keep >> (e & fr.mask)) & 1);
                tb->by_tag[e & fr.mask]++;
                tb->entries++;
            }
        if (!canonical) {
            tagged_destroy(f);
            return ONCE_ERR_CORRUPT;
        }
    }
    *out = f;
    return ONCE_OK;
}

const once_filter_ops once_tagged_ops = {
    .type = ONCE_TAGGED,
    .create = tagged_create,
    .destroy = tagged_destroy,
    .query = tagged_query,
    .add = tagged_add,
    .test_and_add = tagged_test_and_add,
    .batch = tagged_batch,
    .clear = tagged_clear,
    .same_geometry = tagged_same_geometry,
    .stats = tagged_stats,
    .cardinality = tagged_cardinality,
    .memory = tagged_memory,
    .memory_cap = tagged_memory_cap,
    .set_memory_cap = tagged_set_memory_cap,
    .saved_params_size = tagged_params_size,
    .saved_payload_size = tagged_payload_size,
    .save_params = tagged_save_params,
    .save_payload = tagged_save_payload,
    .load = tagged_load,
    .clock = tagged_clock,
    .lag = tagged_lag,
    .can_take = tagged_can_take,
};
