/*
 * core/structure.h - the interface every structure implements, and the batch loop
 * they share.
 *
 * Every structure is a struct whose first member is `once_filter`, plus an ops table
 * (once_filter_ops) listed in the registry (api/registry.c).  api/filter.c dispatches
 * the public calls through the table; the batch loop, hashing, argument checks and
 * item counting live there once, so a structure file only says how its layout probes,
 * sets, combines and serializes.
 */
#ifndef ONCE_CORE_STRUCTURE_H
#define ONCE_CORE_STRUCTURE_H

#include "once_advanced.h"
#include "core/codec.h"
#include "core/hash.h"
#include "core/words.h"

#include <stdbool.h>

/* Batches take each key ONCE_BATCH_AHEAD positions before they probe it and prefetch its
 * cache lines then, so that up to that many misses overlap.  The layouts that share this
 * loop request several lines a key (k probes, or a key's first blocks), so eight keys
 * ahead keep tens of misses in flight, and at their 30-100 ns of work a key the lines
 * are still in L1 when used.  (The blocked layout, one line and a few ns a key, runs
 * its own loop 16 keys ahead: static/blocked.c.)  Every batch loop keeps the keys in flight in a
 * ring of ONCE_BATCH_LOOP_RING slots, a power of two larger than any look-ahead. */
#define ONCE_BATCH_AHEAD 8
#define ONCE_BATCH_LOOP_RING 16

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

/* The items from the at-th on (a loop that stops part-way goes on from there). */
static inline once_batch_items once_items_from(const once_batch_items *items, size_t at)
{
    once_batch_items rest = *items;
    if (rest.keys != NULL)
        rest.keys += at;
    else
        rest.hashes += at;
    if (rest.times != NULL)
        rest.times += at;
    return rest;
}

/* ------------------------------------------------------------ filter base */

typedef enum once_batch_op { ONCE_OP_QUERY, ONCE_OP_ADD, ONCE_OP_TEST_AND_ADD } once_batch_op;

typedef struct once_filter_ops {
    once_type type; /* its name and kind are in the registry (api/registry.c) */
    /* Building: a static layout from the geometry once_create plans (new_geometry), the
     * others from the whole config (create); exactly one is set.  explicit_geometry
     * says whether the config gives the geometry (so the error recorded is the design
     * rate); NULL where the structure plans every size itself. */
    once_status (*new_geometry)(once_filter **out, uint64_t bits, uint32_t hashes);
    once_status (*create)(once_filter **out, const once_config *config);
    bool (*explicit_geometry)(const once_config *config);
    /* Insertions go through test_and_add and count only keys not already present
     * (BF.ADD semantics): api/filter.c then never calls `add` (which may be NULL), and
     * api/batch.c runs an insertion batch as the fused `batch` loop's TEST_AND_ADD. */
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
     * api/filter.c).  For a layout whose whole probe is a few dozen instructions (the
     * blocked one), handing the digest over in memory to a second function is a large
     * part of a one-key call: these keep the call in one function.  Only for structures
     * without a clock and not add_tests_first; NULL: api/filter.c hashes and calls the
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
     * the one-key calls); otherwise *done = count.  NULL: api/batch.c's generic loop over
     * prefetch and the one-key operations. */
    once_status (*batch)(once_filter *f, const once_batch_items *items, size_t count,
                         once_batch_op op, uint8_t *out, size_t *done);
    once_status (*remove)(once_filter *f, const once_hash *h, uint64_t now_ms); /* may be NULL */
    /* The cells a key occupies in the structure's one array, in probe order, into
     * out[0 .. k-1] (k <= ONCE_MAX_HASHES); returns k (once.h, once_positions).  NULL
     * where a key's cells are not a fixed set of one array. */
    uint32_t (*positions)(const once_filter *f, const once_hash *h, uint64_t *out);
    void (*clear)(once_filter *f);
    /* Geometry equality is checked by api/filter.c through same_geometry. */
    bool (*same_geometry)(const once_filter *a, const once_filter *b);
    /* dst op= src for two filters of the same structure, geometry and seed.  A
     * structure refuses what it cannot do (ONCE_ERR_UNSUPPORTED: an intersection that
     * could lose keys both hold, window/apbf.c) or cannot finish (ONCE_ERR_FULL,
     * ONCE_ERR_NOMEM: a union that needs memory, grow/dbf.c) by returning the status with
     * dst unchanged.  NULL: neither is offered (ONCE_ERR_UNSUPPORTED). */
    once_status (*combine)(once_filter *dst, const once_filter *src, once_combine_op op);
    /* combine sets dst's items itself (grow/scalable.c keeps its per-sub-filter counts
     * consistent); otherwise api/filter.c keeps a bound: the sum for a union, the
     * smaller for an intersection. */
    bool combine_sets_items;
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
    /* Set that cap (0: the structure's default, as once_create takes 0); with
     * memory_cap, NULL where that is NULL.  api/filter.c checks the bytes held. */
    void (*set_memory_cap)(once_filter *f, uint64_t cap);
    /* Whether a filter that keeps its size holds more keys than it was planned for
     * (once_overfull); NULL: a static filter is past its capacity when its items are,
     * the other kinds grow or forget and never are. */
    bool (*overfull)(const once_filter *f);
    /* Serialization: the type parameters and the payload. */
    uint64_t (*saved_params_size)(const once_filter *f);
    uint64_t (*saved_payload_size)(const once_filter *f);
    void (*save_params)(const once_filter *f, once_writer *w);
    void (*save_payload)(const once_filter *f, once_writer *w);
    /* Build a filter from validated header fields and raw params/payload bytes. */
    once_status (*load)(once_filter **out, const uint8_t *params, size_t params_len,
                        const uint8_t *payload, size_t payload_len);
    /* Optional (NULL: nothing to check): after a load, do the common header's items,
     * capacity and error, already set on f, agree with the structure's own state?
     * false makes the load fail with ONCE_ERR_CORRUPT. */
    bool (*check_header)(const once_filter *f);
    /* Optional: give the filters the structure holds (the DBF's rows) the format the
     * loader gave it (once_filter.format, set after `load`), so that they place keys
     * alike.  NULL: it holds none. */
    void (*set_format)(once_filter *f);
    /* The layout places keys without the shared probe (the blocked layouts: a block
     * from one half of the digest, its bits from the other), the same in every saved
     * format; once_stats names its probe "blocked". */
    bool blocked_probe;
    /* The structure holds positions, not keys (ONCE_SLICE): every key call answers
     * ONCE_ERR_UNSUPPORTED (api/filter.c checks it where the structure cannot). */
    bool positions_only;
    /* Time windows (NULL for the others): the clock, the latest event time accepted;
     * returns false before the first event.  See once.h, "Event time". */
    bool (*clock)(const once_filter *f, uint64_t *latest);
    /* The lag allowance H, ms (once_config.lag_ms; NULL: none): an event up to H before
     * the clock is judged at its own time (the tagged window). */
    uint64_t (*lag)(const once_filter *f);
    /* Can the next `keys` insertions, of any keys, at admissible times none past
     * `until_ms` (time windows), be made without one refused with ONCE_ERR_FULL?  A lower
     * bound: false when unsure.  NULL: the structure cannot say (a sharded filter then
     * answers its shards in the batch's order, api/sharded.c).  once_never_full for
     * those that never refuse a key. */
    bool (*can_take)(const once_filter *f, uint64_t keys, uint64_t until_ms);
    /* The type once_get_type and once_get_stats report, where it is not `type` (a
     * sharded filter reports its shards' structure); NULL: `type`. */
    once_type (*reported_type)(const once_filter *f);
} once_filter_ops;

/* can_take of the structures that take any number of keys (static ones overfill). */
static inline bool once_never_full(const once_filter *f, uint64_t keys, uint64_t until_ms)
{
    (void)f;
    (void)keys;
    (void)until_ms;
    return true;
}

/* The saved type of a sharded filter (api/sharded.c): a filter of a registered structure
 * in P shards, which reports that structure's type.  Not a once_type: it is no structure
 * of its own. */
#define ONCE_SAVED_SHARDED 15

struct once_filter {
    const once_filter_ops *ops;
    uint64_t seed;
    uint64_t items;    /* keys inserted, minus deletes */
    uint64_t max_time_jump; /* time windows: ms an event may be ahead of the clock (0: any) */
    uint64_t capacity; /* design capacity */
    double error;      /* design false-positive rate */
    uint8_t *metadata; /* the application's bytes saved with the filter (once.h) */
    uint32_t metadata_len; /* at most ONCE_MAX_METADATA */
    /* The saved format the filter writes: ONCE_FORMAT_VERSION for a filter built here,
     * 1 for one loaded from a format-1 file, which keeps placing keys with that
     * format's linear probe for as long as it lives (once_filter_probe). */
    uint16_t format;
};

/* The struct's size counts in every filter's once_bytes, which a capped filter saved
 * near its cap must still fit when a later library loads it (loaders refuse a file
 * whose filter would pass its cap): the format fits where metadata_len's upper half
 * was, and a field added later must too. */
_Static_assert(sizeof(void *) != 8 || sizeof(struct once_filter) == 64,
               "once_filter keeps the size filters were saved with");

/* Saved format 1, whose probe was linear (core/hash.h); the loader and the DBF's deltas
 * take it and ONCE_FORMAT_VERSION, no other. */
#define ONCE_FORMAT_LINEAR 1

static inline bool once_format_known(uint32_t format)
{
    return format == ONCE_FORMAT_VERSION || format == ONCE_FORMAT_LINEAR;
}

/* The multiplier of a filter's probe (core/hash.h): the mix of format 2, or none. */
static inline uint64_t once_filter_probe(const once_filter *f)
{
    return f->format == ONCE_FORMAT_LINEAR ? ONCE_PROBE_LINEAR_MULTIPLIER
                                           : ONCE_PROBE_MIX_MULTIPLIER;
}

/* May two filters' cells be combined?  Only if they place keys alike. */
static inline bool once_same_probe(const once_filter *a, const once_filter *b)
{
    return a->format == b->format;
}


/* Fill the common fields of a freshly built filter. */
static inline void once_filter_init(once_filter *f, const once_filter_ops *ops)
{
    f->ops = ops;
    f->seed = 0;
    f->items = 0;
    f->capacity = 0;
    f->error = 0;
    f->max_time_jump = 0;
    f->format = ONCE_FORMAT_VERSION;
}

/*
 * The event-time rule shared by the time windows (once.h, "Event time"): may an event
 * at `now` be taken by a filter whose clock is `latest` (`started`: it has one)?  Late
 * events are admissible (they are taken at the clock); an event past the clock by more
 * than the filter's bound is not, and neither is a time past ONCE_MAX_TIME_MS.
 */
static inline bool once_time_within(uint64_t max_time_jump, uint64_t latest, bool started,
                                    uint64_t now)
{
    if (now > ONCE_MAX_TIME_MS)
        return false;
    return !started || max_time_jump == 0 || now <= latest || now - latest <= max_time_jump;
}

static inline bool once_time_admissible(const once_filter *f, uint64_t latest, bool started,
                                        uint64_t now)
{
    return once_time_within(f->max_time_jump, latest, started, now);
}

/* What once_bytes reports: the structure's memory and the application's metadata. */
static inline uint64_t once_filter_bytes(const once_filter *f)
{
    return f->ops->memory(f) + f->metadata_len;
}

/* The one rule of every memory cap (once_config.max_bytes): would a filter whose
 * structure holds `memory` bytes (once_bytes without the metadata) and `metadata`
 * bytes of metadata stay within `max_bytes` (0: no cap)?  A structure that grows asks
 * it with the memory it would hold after growing (its tables' room included) before it
 * allocates anything, so a refusal changes nothing. */
static inline bool once_fits_cap(uint64_t memory, uint64_t metadata, uint64_t max_bytes)
{
    return max_bytes == 0 || memory + metadata <= max_bytes;
}

/* A growing structure's cap: the configured one, or ONCE_DEFAULT_MAX_BYTES for 0. */
static inline uint64_t once_cap_or_default(uint64_t max_bytes)
{
    return max_bytes != 0 ? max_bytes : ONCE_DEFAULT_MAX_BYTES;
}

/* The memory of a structure that keeps a table of `room` entries of `entry` bytes
 * beside its struct of `head` bytes, and `items` bytes of what the entries point to
 * (once_bytes without the metadata; what its cap is checked against before it grows,
 * once_fits_cap). */
static inline uint64_t once_table_memory(size_t head, uint64_t room, size_t entry,
                                         uint64_t items)
{
    return (uint64_t)head + room * (uint64_t)entry + items;
}

#endif /* ONCE_CORE_STRUCTURE_H */
