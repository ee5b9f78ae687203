/*
 * once_internal.h - what the structure files share and the public header hides.
 *
 * Every structure is a struct whose first member is `once_filter`, plus an ops table.
 * filter.c dispatches the public calls through the table; the batch loop, hashing,
 * argument checks and item counting live there once, so a structure file only says
 * how its layout probes, sets, combines and serializes.
 *
 * Hashing: each key is hashed once with XXH3-128 under the filter's seed, into the
 * public once_digest (once.h), and the structures see only that digest: every probe
 * entry takes a hash, so the key calls and the digest calls reach one probe path.  (The
 * optional key operations, query_key and the like, hash a short key themselves and then
 * run that same probe, in one function.)  The two 64-bit halves drive every probe: enhanced double hashing
 * (Dillinger & Manolios) gives the k positions of the standard, partitioned and
 * counting layouts, and the blocked layout takes its block from one half and its
 * in-block bits from the other.  A 64-bit value is mapped onto [0, n) by
 * multiply-shift ((x * n) >> 64), which is uniform up to n / 2^64 and needs no
 * division in the hot path.
 */
#ifndef ONCE_INTERNAL_H
#define ONCE_INTERNAL_H

#include "once.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Batches take each key ONCE_BATCH_AHEAD positions before they probe it and prefetch its
 * cache lines then, so that up to that many misses overlap.  Eight is enough to cover
 * DRAM latency at the ~10 ns of work per key of the blocked layout and small enough that
 * the lines are still in L1 when used.  Every batch loop keeps the keys in flight in a
 * ring of ONCE_PIPELINE_RING slots, a power of two larger than any look-ahead. */
#define ONCE_BATCH_AHEAD 8
#define ONCE_PIPELINE_RING 16

/* x86 SIMD paths are compiled for instruction sets the build does not assume and chosen
 * at run time (once_simd_path), so each such function carries its target. */
#if defined(__x86_64__) || defined(__i386__)
#define ONCE_X86 1
#define ONCE_TARGET_AVX2 __attribute__((target("avx2")))
#define ONCE_TARGET_AVX512 __attribute__((target("avx512f")))
#else
#define ONCE_TARGET_AVX2
#define ONCE_TARGET_AVX512
#endif

/* Library limits.  2^40 cells is 128 GiB of bits: far beyond one host's filter, small
 * enough that every size computation below fits in 64 bits without overflow. */
#define ONCE_MAX_CELLS (UINT64_C(1) << 40)
#define ONCE_MAX_HASHES 64u
/* Age-partitioned windows: at most this many insertion (k) or age (l) segments. */
#define ONCE_MAX_AGE_SLICES 128u

/* ------------------------------------------------------------- allocation */

/*
 * Every allocation of the library goes through these (alloc.c), so through the host's
 * allocator when once_set_allocator installed one; no other file calls malloc, calloc,
 * realloc or free.  They behave as the C library's (NULL on failure; once_realloc keeps
 * the block on failure; a size of 0 asks for 1 byte).
 */
void *once_malloc(size_t size);
void *once_calloc(size_t count, size_t size);
void *once_realloc(void *block, size_t size);
void once_free_memory(void *block);

/* A zeroed block of `bytes` aligned to a cache line, freed with once_aligned_free.  It
 * costs the allocator once_aligned_footprint(bytes): the block is over-allocated by
 * ONCE_ALIGNED_PAD, room to align any address and keep the allocator's pointer before
 * the aligned start (alloc.c). */
#define ONCE_CACHE_LINE 64
#define ONCE_ALIGNED_PAD (ONCE_CACHE_LINE + sizeof(void *))
void *once_aligned_alloc(size_t bytes);
void once_aligned_free(void *block);

static inline uint64_t once_aligned_footprint(uint64_t bytes)
{
    return bytes + ONCE_ALIGNED_PAD;
}

/* The key's hash as the structures see it: the public digest itself, so that an array
 * of digests a caller passes is an array of hashes with no copy. */
typedef once_digest once_hash;

static inline once_hash once_hash_key(const void *key, size_t len, uint64_t seed)
{
    XXH128_hash_t h = XXH3_128bits_withSeed(key, len, seed);
    once_hash r = {h.low64, h.high64};
    return r;
}

/*
 * The items of a batch: keys (once_key, hashed under `seed` as each enters the batch's
 * prefetch window) or digests with their times (`times` NULL: time 0 for all).  The
 * batch loops read them only through once_item_hash and once_item_time, so the key
 * batches and the digest batches run the same loop.  Hashing a key as it enters the
 * window, rather than the whole batch first, overlaps the hashing with the memory
 * wait of the keys ahead, which hashing first would leave idle: the prefetch distances
 * of the loops are tuned for a key's work with its hashing in it.  A loop copies the
 * items into a local first (as it does the filter's fields): its byte-sized answer
 * stores could alias them and would otherwise force a reload for each key.
 */
typedef struct once_batch_items {
    const once_key *keys; /* NULL: the items are `hashes` */
    const once_hash *hashes;
    const uint64_t *times;
    uint64_t seed;
} once_batch_items;

/*
 * A one-key call's hash of its key, the digest once_hash_key gives.  Keys of up to
 * ONCE_INLINE_KEY_BYTES bytes are hashed in line by XXH3-128's short-key path, called
 * directly (it is what XXH3_128bits_withSeed runs for them; test_interface checks the
 * two agree at every length): XXH3's entry point is not forced inline, and its long-key
 * paths, compiled into a function, give it a frame (their aligned stack buffers) and
 * register saves that every key would pay.  Longer keys go through once_hash_long_key,
 * never inlined.
 */
#define ONCE_INLINE_KEY_BYTES 16

static inline __attribute__((always_inline)) once_hash once_hash_short_key(const void *key,
                                                                           size_t len,
                                                                           uint64_t seed)
{
    XXH128_hash_t h = XXH3_len_0to16_128b((const xxh_u8 *)key, len, XXH3_kSecret, seed);
    once_hash r = {h.low64, h.high64};
    return r;
}

once_hash once_hash_long_key(const void *key, size_t len, uint64_t seed);

static inline __attribute__((always_inline)) once_hash once_one_key_hash(const void *key,
                                                                         size_t len,
                                                                         uint64_t seed)
{
    if (len <= ONCE_INLINE_KEY_BYTES)
        return once_hash_short_key(key, len, seed);
    return once_hash_long_key(key, len, seed);
}

static inline __attribute__((always_inline)) once_hash
once_item_hash(const once_batch_items *items, size_t i)
{
    if (items->keys != NULL)
        return once_hash_key(items->keys[i].data, items->keys[i].len, items->seed);
    return items->hashes[i];
}

static inline __attribute__((always_inline)) uint64_t
once_item_time(const once_batch_items *items, size_t i)
{
    if (items->keys != NULL)
        return items->keys[i].time_ms;
    return items->times != NULL ? items->times[i] : 0;
}

/* Map a uniform 64-bit value onto [0, n). */
static inline uint64_t once_reduce(uint64_t x, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

/*
 * The probe sequence shared by the standard, partitioned and counting layouts:
 * position i is reduce(x_i, range) with x_0 = lo, x_{i+1} = x_i + y_i, y_{i+1} = y_i + i
 * (enhanced double hashing).  `hi` is forced odd so the sequence never stalls.
 */
typedef struct once_probe {
    uint64_t x, y;
    uint32_t i;
} once_probe;

static inline once_probe once_probe_start(const once_hash *h)
{
    once_probe p = {h->lo, h->hi | 1, 0};
    return p;
}

static inline uint64_t once_probe_next(once_probe *p, uint64_t range)
{
    uint64_t pos = once_reduce(p->x, range);
    p->x += p->y;
    p->y += p->i;
    p->i++;
    return pos;
}

/* Position i of the same sequence in closed form, for layouts that need probe i
 * without the ones before it (x_i = lo + i*y + i(i-1)(i-2)/6, y = hi | 1). */
static inline uint64_t once_probe_at(const once_hash *h, uint64_t i, uint64_t range)
{
    uint64_t x = h->lo + i * (h->hi | 1) + i * (i - 1) * (i - 2) / 6;
    return once_reduce(x, range);
}

static inline void once_prefetch_read(const void *addr)
{
    __builtin_prefetch(addr, 0, 3);
}
static inline void once_prefetch_write(const void *addr)
{
    __builtin_prefetch(addr, 1, 3);
}

/* ------------------------------------------------------------ filter base */

typedef enum once_combine_op { ONCE_COMBINE_UNION, ONCE_COMBINE_INTERSECT } once_combine_op;

struct once_writer; /* serialize.c */

typedef enum once_batch_op { ONCE_OP_QUERY, ONCE_OP_ADD, ONCE_OP_TEST_AND_ADD } once_batch_op;

typedef struct once_filter_ops {
    once_type type; /* its name and kind are in the registry (registry.c) */
    /* Building: a static layout from the geometry once_create plans (new_geometry), the
     * others from the whole config (create); exactly one is set.  explicit_geometry
     * says whether the config gives the geometry (so the error recorded is the design
     * rate); NULL where the structure plans every size itself. */
    once_status (*new_geometry)(once_filter **out, uint64_t bits, uint32_t hashes);
    once_status (*create)(once_filter **out, const once_config *config);
    bool (*explicit_geometry)(const once_config *config);
    /* Insertions go through test_and_add and count only keys not already present
     * (BF.ADD semantics): filter.c then never calls `add` (which may be NULL) and
     * never uses the fused `batch` loop for insertions. */
    bool add_tests_first;
    void (*destroy)(once_filter *f);
    /* The probe operations.  `now_ms` is for windowed structures. */
    bool (*query)(const once_filter *f, const once_hash *h, uint64_t now_ms);

    /* The query, also counting the memory segments (lines) it read; NULL where that
     * is fixed by the layout (see once_query_reads). */
    bool (*query_reads)(const once_filter *f, const once_hash *h, uint64_t now_ms,
                        uint32_t *reads);
    once_status (*add)(once_filter *f, const once_hash *h, uint64_t now_ms);
    once_status (*test_and_add)(once_filter *f, const once_hash *h, uint64_t now_ms, bool *seen);
    /* The same three from the key itself, for keys of at most ONCE_INLINE_KEY_BYTES
     * bytes, arguments checked: the key hashed with once_hash_key under f->seed, then
     * exactly query, add or test_and_add, the answer stored (items are counted by
     * filter.c).  For a layout whose whole probe is a few dozen instructions (the
     * blocked one), handing the digest over in memory to a second function is a large
     * part of a one-key call: these keep the call in one function.  Only for structures
     * without a clock and not add_tests_first; NULL: filter.c hashes and calls the
     * digest operations, as it does for longer keys. */
    once_status (*query_key)(const once_filter *f, const void *key, size_t len, uint64_t now_ms,
                             bool *present);
    once_status (*add_key)(once_filter *f, const void *key, size_t len, uint64_t now_ms);
    once_status (*test_and_add_key)(once_filter *f, const void *key, size_t len,
                                    uint64_t now_ms, bool *seen);
    /* Request a key's lines ahead of the generic batch loop; NULL with `batch`. */
    void (*prefetch)(const once_filter *f, const once_hash *h);
    /* Optional fused batch loop (hash, prefetch and probe in one pass) for layouts
     * where the per-key work is small enough that the generic loop's calls dominate,
     * or whose prefetch depends on the operation.  Items (keys or digests, see
     * once_batch_items) are already checked; `out` gets seen/present per key (unused
     * for ADD).  It stops at the first key whose operation fails and returns that
     * status with *done = that key's index (the keys before it took effect, as with
     * the one-key calls); otherwise *done = count.  NULL: filter.c's generic loop over
     * prefetch and the one-key operations. */
    once_status (*batch)(once_filter *f, const once_batch_items *items, size_t count,
                         once_batch_op op, uint8_t *out, size_t *done);
    once_status (*remove)(once_filter *f, const once_hash *h, uint64_t now_ms); /* may be NULL */
    /* The cells a key occupies in the structure's one array, in probe order, into
     * out[0 .. k-1] (k <= ONCE_MAX_HASHES); returns k (once.h, once_positions).  NULL
     * where a key's cells are not a fixed set of one array. */
    uint32_t (*positions)(const once_filter *f, const once_hash *h, uint64_t *out);
    void (*clear)(once_filter *f);
    /* Geometry equality is checked by filter.c through same_geometry. */
    bool (*same_geometry)(const once_filter *a, const once_filter *b);
    /* dst op= src for two filters of the same structure, geometry and seed.  A
     * structure refuses what it cannot do (ONCE_ERR_UNSUPPORTED: an intersection that
     * could lose keys both hold, apbf.c) or cannot finish (ONCE_ERR_FULL,
     * ONCE_ERR_NOMEM: a union that needs memory, dbf.c) by returning the status with
     * dst unchanged.  NULL: neither is offered (ONCE_ERR_UNSUPPORTED). */
    once_status (*combine)(once_filter *dst, const once_filter *src, once_combine_op op);
    void (*stats)(const once_filter *f, once_stats *s);
    /* Distinct keys from the cells (paper 002, section 5); NULL = unsupported.  The
     * pair form estimates |a union b| or |a intersect b| for two filters already checked
     * to share structure, geometry and seed; NULL = unsupported. */
    once_status (*cardinality)(const once_filter *f, uint64_t now_ms, double confidence,
                               once_cardinality *out);
    once_status (*cardinality_pair)(const once_filter *a, const once_filter *b,
                                    once_combine_op op, double confidence,
                                    once_cardinality *out);
    /* Bytes the structure holds (once_bytes adds the metadata): every block it owns,
     * at the size requested from the allocator, its struct included. */
    uint64_t (*memory)(const once_filter *f);
    /* The structure's cap on once_bytes (0: none; NULL: the structure has no cap). */
    uint64_t (*memory_cap)(const once_filter *f);
    /* Serialization: the type parameters and the payload. */
    uint64_t (*saved_params_size)(const once_filter *f);
    uint64_t (*saved_payload_size)(const once_filter *f);
    void (*save_params)(const once_filter *f, struct once_writer *w);
    void (*save_payload)(const once_filter *f, struct once_writer *w);
    /* Build a filter from validated header fields and raw params/payload bytes. */
    once_status (*load)(once_filter **out, const uint8_t *params, size_t params_len,
                        const uint8_t *payload, size_t payload_len);
    /* Optional (NULL: nothing to check): after a load, do the common header's items,
     * capacity and error, already set on f, agree with the structure's own state?
     * false makes the load fail with ONCE_ERR_CORRUPT. */
    bool (*check_header)(const once_filter *f);
    /* Time windows (NULL for the others): the clock, the latest event time accepted;
     * returns false before the first event.  See once.h, "Event time". */
    bool (*clock)(const once_filter *f, uint64_t *latest);
} once_filter_ops;

struct once_filter {
    const once_filter_ops *ops;
    uint64_t seed;
    uint64_t items;    /* keys inserted, minus deletes */
    uint64_t max_time_jump; /* time windows: ms an event may be ahead of the clock (0: any) */
    uint64_t capacity; /* design capacity */
    double error;      /* design false-positive rate */
    uint8_t *metadata; /* the application's bytes saved with the filter (once.h) */
    size_t metadata_len;
};

/* Structure tables (one per .c file). */
extern const once_filter_ops once_standard_ops;
extern const once_filter_ops once_partitioned_ops;
extern const once_filter_ops once_blocked_ops;
extern const once_filter_ops once_counting_ops;
extern const once_filter_ops once_apbf_ops;
extern const once_filter_ops once_apbbf_ops;
extern const once_filter_ops once_tlbf_ops;
extern const once_filter_ops once_timer_ops;
extern const once_filter_ops once_scalable_ops;
extern const once_filter_ops once_dbf_ops;

const once_filter_ops *once_ops_for_type(once_type type);

/* Constructors by geometry, used by once_create. */
once_status once_standard_new(once_filter **out, uint64_t bits, uint32_t hashes);
once_status once_partitioned_new(once_filter **out, uint64_t bits, uint32_t hashes);
once_status once_blocked_new(once_filter **out, uint64_t bits, uint32_t hashes);
once_status once_counting_new(once_filter **out, uint64_t counters, uint32_t hashes);
/* The value of one counter of a counting filter (the DBF's rows keep their bit-slice
 * index in step with it). */
unsigned once_counting_counter(const once_filter *f, uint64_t cell);
/* The counting filter's query and insertion of a key whose k cells (once_positions'
 * order) the caller has already: the DBF computes them once for all its rows. */
bool once_counting_holds_cells(const once_filter *f, const uint64_t *cells);
void once_counting_add_cells(once_filter *f, const uint64_t *cells);

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

/* Lines a batch keeps requested at a time: about what one core's miss buffers hold. */
#define ONCE_AGE_LINES_IN_FLIGHT 24

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

/* How many keys ahead a batch requests lines (see once_batch_pipeline). */
static inline size_t once_age_batch_distance(once_age_reach r, once_batch_op op)
{
    uint32_t lines = once_age_prefetch_count(r, op);
    return ONCE_AGE_LINES_IN_FLIGHT / (lines ? lines : 1);
}

/*
 * A fused batch loop for layouts whose lines for a key depend on state that an
 * insertion can change (the TLBF: a shift moves the insertion slices, its clock
 * expires slices; the APBF and APBBF run a loop of their own that also keeps the
 * spots it computed ahead, apbf.c).  Key i + distance is hashed and handed
 * to `prepare`, which fills the layout's per-key record (`record_size` bytes in `ring`,
 * ONCE_PIPELINE_RING of them) and requests the key's lines under the state of the
 * moment: a guess that a shift in between makes partly stale (a wasted prefetch, never
 * a wrong answer).  Key i is then probed by `step`, the layout's one-key operation,
 * which works out its real positions from the state it finds.  So a batch answers
 * exactly as the one-key calls in array order, duplicates and mid-batch shifts
 * included.  `ctx` is the layout's (its filter and constants), handed to both.
 * `distance` (clamped to 1 .. ONCE_PIPELINE_RING - 1) is chosen by the
 * layout from how many lines one key requests: enough keys ahead to keep the memory
 * busy, few enough that the lines are still cached when used.  Always inlined with a
 * constant `op`, so each operation gets its own loop with `prepare` and `step` inlined.
 */

static inline __attribute__((always_inline)) once_status
once_batch_pipeline(const once_batch_items *items, size_t count, const once_batch_op op,
                    uint8_t *out, size_t *done, size_t distance, void *ring,
                    size_t record_size, const void *ctx,
                    void (*prepare)(const void *ctx, void *record, const once_hash *h,
                                    once_batch_op op),
                    once_status (*step)(const void *ctx, void *record, uint64_t now_ms,
                                        once_batch_op op, bool *answer))
{
    if (distance >= ONCE_PIPELINE_RING)
        distance = ONCE_PIPELINE_RING - 1;
    if (distance == 0)
        distance = 1;
#define ONCE_RECORD(i) ((char *)ring + ((i) % ONCE_PIPELINE_RING) * record_size)
    const once_batch_items in = *items;
    size_t ahead = count < distance ? count : distance;
    for (size_t i = 0; i < ahead; i++) {
        once_hash h = once_item_hash(&in, i);
        prepare(ctx, ONCE_RECORD(i), &h, op);
    }
    for (size_t i = 0; i < count; i++) {
        size_t next = i + distance;
        if (next < count) {
            once_hash h = once_item_hash(&in, next);
            prepare(ctx, ONCE_RECORD(next), &h, op);
        }
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

/* Windowed structures are built from the whole config (apbf.c, tlbf.c, timer.c). */
/* The structures whose config gives their geometry by bits or hashes (timer, DBF). */
bool once_bits_or_hashes_given(const once_config *config);
once_status once_age_create(once_filter **out, const once_config *config);
once_status once_tlbf_create(once_filter **out, const once_config *config);
once_status once_timer_create(once_filter **out, const once_config *config);
once_status once_scalable_create(once_filter **out, const once_config *config);
once_status once_dbf_create(once_filter **out, const once_config *config);
/* The (k, l) an age-partitioned layout needs for rate p at `level` (apbf.c). */
once_status once_age_plan(double error, uint32_t level, uint32_t *k, uint32_t *l);

/* The age-partitioned recurrences (sizing.c) over explicit per-slice match rates. */
double once_age_fpr(uint32_t k, uint32_t l, const double *fill);
double once_age_accesses_absent(uint32_t k, uint32_t l, const double *fill);

/* The SIMD path in use (bloom_blocked.c): the best this CPU has, or the one
 * once_force_simd_path chose.  A filter records it when built, so forcing a path
 * affects the filters built after. */
typedef enum once_simd { ONCE_SIMD_SCALAR, ONCE_SIMD_AVX2, ONCE_SIMD_AVX512 } once_simd;
once_simd once_simd_current(void);

/* Geometry planning for the blocked layout (bloom_blocked.c). */
once_status once_blocked_plan(uint64_t capacity, double error, uint64_t *bits, uint32_t *hashes);

/* ---------------------------------------------------------- cardinality */

/*
 * The occupancy model behind every distinct-key estimate (cardinality.c, paper 002
 * section 5): `cells` cells, each left clear by one key with probability
 * q = exp(log_clear).
 */
typedef struct once_occupancy {
    double cells;
    double log_clear; /* ln q < 0 */
} once_occupancy;

/* From q directly (the blocked layout: q = 1 - k/m). */
once_status once_occupancy_make(once_occupancy *o, double cells, double clear_per_key);
/* `cells` cells in ranges of `cell_range`, each key setting `hashes` random cells of
 * each range: q = (1 - 1/range)^hashes.  Standard: (m, k, m); partitioned (m, 1, m/k);
 * block-partitioned (lambda m_b, k_b, m_b). */
once_status once_occupancy_for(once_occupancy *o, uint64_t cells, uint32_t hashes,
                               uint64_t cell_range);
/* S(n), the expected set cells after n keys (Lemma 1, Lemma 4), and its inverse. */
double once_card_expected_set(const once_occupancy *o, double keys);
double once_card_inverse(const once_occupancy *o, double set);
/* Theorem 1 / 3: estimate and equal-tailed interval from `set` set cells. */
once_status once_card_estimate(const once_occupancy *o, uint64_t set, double confidence,
                               once_cardinality *out);
/* Theorem 2: |A intersect B| from the set cells of A, of B and of A AND B (Eq. 6). */
once_status once_card_estimate_intersection(const once_occupancy *o, uint64_t set1,
                                            uint64_t set2, uint64_t set_and, double confidence,
                                            once_cardinality *out);

/* The sum over `parts` parts holding disjoint keys; `part` gives part i's set cells and
 * occupancy (intervals combined by the union bound, see cardinality.c). */
once_status once_card_sum(uint32_t parts,
                          once_status (*part)(const void *ctx, uint32_t i, uint64_t *set,
                                              once_occupancy *o),
                          const void *ctx, double confidence, once_cardinality *out);
/* Distinct keys inside the window of an age-partitioned layout: generations
 * 0 .. last_generation, from the disjoint segment groups that hold them (see
 * cardinality.c).  `segment` gives logical segment i's set cells and occupancy. */
once_status once_card_age_window(uint32_t k, uint32_t last_generation,
                                 once_status (*segment)(const void *ctx, uint32_t logical,
                                                        uint64_t *set, once_occupancy *o),
                                 const void *ctx, double confidence, once_cardinality *out);
/* Distinct keys among the last insertions of a count window that span generations
 * 0 .. whole-1 and the newest `share` (in [0, 1)) of generation `whole`: the same
 * share of the way from the count of generations 0 .. whole-1 to that of 0 .. whole
 * (see cardinality.c).  whole = 0 counts only the share of generation 0. */
once_status once_card_age_span(uint32_t k, uint32_t whole, double share,
                               once_status (*segment)(const void *ctx, uint32_t logical,
                                                      uint64_t *set, once_occupancy *o),
                               const void *ctx, double confidence, once_cardinality *out);

/* Block-partitioned filters, static and dynamic (bpbf.c), built from the whole config. */
extern const once_filter_ops once_bpbf_ops;
extern const once_filter_ops once_dbpbf_ops;
once_status once_bpbf_create(once_filter **out, const once_config *config);

/* -------------------------------------------------------- array filters */

/*
 * The four static layouts share one shape: a flat array of `cells` cells of
 * `cell_bits` bits each (1 for bit arrays, 4 for counters) and k probes.  What they
 * share - allocation, clear, geometry checks, bitwise combine, memory, the saved
 * parameters (cells, k) and payload (the words), and the loader's validation - lives
 * once in array_filter.c; each structure file supplies only its probing, stats and any
 * extra geometry rule.
 */
typedef struct once_array_filter {
    once_filter base;
    uint64_t cells;     /* m: bits, or counters */
    uint32_t cell_bits; /* 1 or 4 */
    uint32_t hashes;    /* k */
    uint64_t words;     /* allocated 64-bit words, a whole number of 64-byte lines */
    uint64_t *array;
    const void *impl;   /* per-layout extra (the blocked layout's SIMD path) */
} once_array_filter;

#define ARRAY(f) ((once_array_filter *)(f))
#define CARRAY(f) ((const once_array_filter *)(f))

once_status once_array_new(once_filter **out, const once_filter_ops *ops, uint64_t cells,
                           uint32_t cell_bits, uint32_t hashes);
void once_array_destroy(once_filter *f);
void once_array_clear(once_filter *f);
bool once_array_same_geometry(const once_filter *a, const once_filter *b);
once_status once_array_combine_bits(once_filter *dst, const once_filter *src, once_combine_op op);
uint64_t once_array_memory(const once_filter *f);
uint64_t once_array_params_size(const once_filter *f);
uint64_t once_array_payload_size(const once_filter *f);
void once_array_save_params(const once_filter *f, struct once_writer *w);
void once_array_save_payload(const once_filter *f, struct once_writer *w);
/* Parse (cells, k), build through `make` (which checks the layout's own geometry
 * rules), copy the payload and check that no cell past `cells` is set. */
once_status once_array_load(once_filter **out, const uint8_t *params, size_t params_len,
                            const uint8_t *payload, size_t payload_len, uint32_t cell_bits,
                            once_status (*make)(once_filter **, uint64_t, uint32_t));
/* Set cells in the whole array (popcount for bits; non-zero nibbles for counters). */
uint64_t once_array_cells_set(const once_filter *f);
void once_array_stats(const once_filter *f, once_stats *st);
/* An array filter's set cells and its layout's occupancy model (cardinality.c), for
 * structures built of array filters that sum their parts (once_card_sum). */
once_status once_array_cells(const once_filter *f, uint64_t *set, once_occupancy *o);
/* Distinct keys of one array filter, or of the union / intersection of two of the
 * same geometry, under the layout's occupancy model (paper 002, section 5). */
once_status once_array_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                   once_cardinality *out);
once_status once_array_cardinality_pair(const once_filter *a, const once_filter *b,
                                        once_combine_op op, double confidence,
                                        once_cardinality *out);
/* True when no bit at or past bit `used` of the `words` words is set (loaders check
 * the padding past the last cell). */
bool once_words_tail_clear(const uint64_t *array, uint64_t words, uint64_t used);

/* Bit 4i of the result is set iff 4-bit counter i of w is non-zero. */
static inline uint64_t once_nibbles_nonzero(uint64_t w)
{
    return (w | w >> 1 | w >> 2 | w >> 3) & UINT64_C(0x1111111111111111);
}

/* ---------------------------------------------------------- bit arrays */

/* A zeroed, 64-byte aligned array of `words` 64-bit words, rounded up to whole 64-byte
 * lines (NULL on failure); once_words_memory(words) is what it costs the allocator, the
 * figure every structure's once_bytes adds up. */
uint64_t *once_words_alloc(uint64_t words);
void once_words_free(uint64_t *words);

static inline uint64_t once_words_memory(uint64_t words)
{
    return once_aligned_footprint(((words + 7) & ~UINT64_C(7)) * sizeof(uint64_t));
}

uint64_t once_words_popcount(const uint64_t *words, uint64_t n);
void once_words_combine(uint64_t *dst, const uint64_t *src, uint64_t n, once_combine_op op);

static inline bool once_bit_get(const uint64_t *words, uint64_t pos)
{
    return (words[pos >> 6] >> (pos & 63)) & 1;
}
static inline void once_bit_set(uint64_t *words, uint64_t pos)
{
    words[pos >> 6] |= UINT64_C(1) << (pos & 63);
}

/* ------------------------------------------------------ serialization I/O */

typedef struct once_writer {
    once_write_fn write;
    void *context;
    XXH3_state_t *checksum;
    int failed;
} once_writer;

void once_writer_bytes(once_writer *w, const void *data, size_t len);
void once_writer_u32(once_writer *w, uint32_t v);
void once_writer_u64(once_writer *w, uint64_t v);
void once_writer_f64(once_writer *w, double v);
void once_writer_words(once_writer *w, const uint64_t *words, uint64_t n);

static inline uint64_t once_le64_read(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint32_t once_le32_read(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint16_t once_le16_read(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
/* Write the low `bytes` bytes of v, little-endian. */
static inline void once_le_write(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
/* Copy `n` little-endian words from a byte buffer. */
void once_words_from_le(uint64_t *dst, const uint8_t *src, uint64_t n);

/* A cursor over the parameter bytes of a saved filter. */
typedef struct once_reader {
    const uint8_t *p;
    size_t left;
    int failed;
} once_reader;

static inline uint64_t once_reader_u64(once_reader *r)
{
    if (r->left < 8) {
        r->failed = 1;
        return 0;
    }
    uint64_t v = once_le64_read(r->p);
    r->p += 8;
    r->left -= 8;
    return v;
}

/* Read exactly `count` parameter words; false if there are more or fewer. */
static inline bool once_read_params(const uint8_t *params, size_t len, uint64_t *v, size_t count)
{
    once_reader r = {params, len, 0};
    for (size_t i = 0; i < count; i++)
        v[i] = once_reader_u64(&r);
    return !r.failed && r.left == 0;
}

/* The one rule for the common header's design capacity and error (serialize.c):
 * ONCE_ERR_TOO_LARGE for a capacity past ONCE_MAX_CELLS, ONCE_ERR_INVALID for an error
 * outside [0, 1].  once_create applies it to what it records, once_load to what it
 * reads. */
once_status once_header_check(uint64_t capacity, double error);

/* Fill the common fields of a freshly built filter. */
static inline void once_filter_init(once_filter *f, const once_filter_ops *ops)
{
    f->ops = ops;
    f->seed = 0;
    f->items = 0;
    f->capacity = 0;
    f->error = 0;
    f->max_time_jump = 0;
}

/*
 * The event-time rule shared by the time windows (once.h, "Event time"): may an event
 * at `now` be taken by a filter whose clock is `latest` (`started`: it has one)?  Late
 * events are admissible (they are taken at the clock); an event past the clock by more
 * than the filter's bound is not, and neither is a time past ONCE_MAX_TIME_MS.
 */
static inline bool once_time_admissible(const once_filter *f, uint64_t latest, bool started,
                                        uint64_t now)
{
    if (now > ONCE_MAX_TIME_MS)
        return false;
    return !started || f->max_time_jump == 0 || now <= latest ||
           now - latest <= f->max_time_jump;
}

/* Bytes for `cells` cells of `bits_per_cell` bits, rounded to whole 64-byte lines. */
static inline uint64_t once_words_for_bits(uint64_t bits)
{
    uint64_t words = (bits + 63) / 64;
    return (words + 7) & ~UINT64_C(7);
}

#endif /* ONCE_INTERNAL_H */
