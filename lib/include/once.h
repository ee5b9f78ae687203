/*
 * once.h - the public interface of libonce.
 *
 * libonce answers one question for a stream of keys: "have I delivered this key
 * before?" with bounded memory and a false-positive rate chosen by the caller, and
 * never a false negative.  Every structure in the library (standard, partitioned,
 * blocked and counting Bloom filters, count and time windows, growing filters) sits
 * behind the one opaque handle `once_filter` and the one set of calls below: the `once`
 * command (programs/) is one caller of these calls, and every other caller uses them
 * the same way.  The papers' formulas (the rate of a geometry, the geometry for a rate)
 * are in once_math.h.
 *
 * Conventions
 *   - Every call that can fail returns `once_status`; ONCE_OK is 0.  `once_strerror()`
 *     turns a status into a sentence.  Nothing aborts on bad input or failed malloc.
 *   - Every allocation goes through one allocator, the C library's unless the host
 *     installs its own (once_set_allocator, under "Memory" below); a buffer the library
 *     returns is freed with once_free_buffer.
 *   - Keys are arbitrary bytes (NULs included) given as pointer + length.
 *   - Time is always an argument (`now_ms`, milliseconds on a clock the caller
 *     chooses).  Structures without a time window ignore it; the library never reads
 *     a clock.  The time windows' rules (a watermark, late events, jumps, the
 *     window's boundary) are under "Event time" below.
 *   - Every filter carries a 64-bit hash seed.  By default it is drawn from the
 *     kernel's random source, so crafted keys cannot aim at chosen bits; fix it for
 *     reproducible results.  The seed is saved with the filter.
 *   - Two filters combine (union/intersection) only if they have the same structure,
 *     geometry and seed.
 *
 * Threads
 *   - Different filters are independent: calls on different filters may run on
 *     different threads at the same time, without locks.  The library's only state
 *     shared between filters is set with atomics: the SIMD path of the blocked layouts
 *     (once_simd_path, once_force_simd_path, callable from any thread at any time; a
 *     filter keeps the path it was built with) and a cache of the blocked layout's
 *     rate formula.  Seeds come from getrandom(2), which any thread may call.
 *   - One filter: any number of threads may make read-only calls on it at the same
 *     time while no thread makes any other call on it.  The read-only calls are the
 *     ones that take a `const once_filter *`: once_query, once_query_digest,
 *     once_query_reads, once_query_batch, once_query_digest_batch, once_positions,
 *     once_digest_key, once_get_stats, once_clock, once_clock_step, once_items,
 *     once_capacity, once_overfull, once_bytes, once_get_type, once_seed,
 *     once_estimate_cardinality, once_estimate_union, once_estimate_intersection,
 *     once_saved_size, once_save, once_save_to_buffer, once_save_chunk_min,
 *     once_save_chunk, once_get_metadata,
 *     once_bpbf_get_state, once_bpbf_fpr_at, once_dbf_matching_rows, once_dbf_version,
 *     and `src` of once_union, once_intersect, once_dbf_union, once_bpbf_union and
 *     once_bpbf_intersect.  They change nothing, not even a cache or a clock: a time
 *     window asked at a time past its clock answers at that time and leaves the clock
 *     where it was.
 *   - Every other call on a filter writes (test-and-add, which inserts, included;
 *     once_dbf_export_delta too, which moves its base) and needs the filter to itself:
 *     no other call on that filter, read-only or not, may run meanwhile.  Callers
 *     that share a filter between threads serialize its writes with their own lock
 *     (a reader-writer lock fits the rule above), or give each thread its own
 *     filters, for instance routing each key by its digest (below).  A chunk loader
 *     (once_load_begin) is the same: one thread at a time, different loaders at once.
 */
#ifndef ONCE_H
#define ONCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ONCE_VERSION_MAJOR 0
#define ONCE_VERSION_MINOR 1
#define ONCE_VERSION_PATCH 0
#define ONCE_VERSION_STRING "0.1.0"

#if defined(__GNUC__) && __GNUC__ >= 4
#define ONCE_API __attribute__((visibility("default")))
#else
#define ONCE_API
#endif

/* ------------------------------------------------------------------ status */

typedef enum once_status {
    ONCE_OK = 0,
    ONCE_ERR_INVALID,     /* an argument is out of range or inconsistent */
    ONCE_ERR_NOMEM,       /* an allocation failed */
    ONCE_ERR_TOO_LARGE,   /* the requested size passes the library's limits */
    ONCE_ERR_UNSUPPORTED, /* this structure does not offer the operation */
    ONCE_ERR_MISMATCH,    /* two filters differ in structure, geometry or seed */
    ONCE_ERR_NOT_PRESENT, /* delete of a key the filter does not hold */
    ONCE_ERR_FULL,        /* the structure cannot take more keys within its bounds */
    ONCE_ERR_TRUNCATED,   /* serialized data ends early */
    ONCE_ERR_BAD_MAGIC,   /* serialized data is not a once filter */
    ONCE_ERR_VERSION,     /* serialized with a format version this build cannot read */
    ONCE_ERR_CORRUPT,     /* serialized data has an invalid field */
    ONCE_ERR_CHECKSUM,    /* serialized data fails its checksum */
    ONCE_ERR_IO,          /* the caller's writer reported a failure */
    ONCE_ERR_TIME,        /* an event time the window's clock refuses (see "Event time") */
    ONCE_ERR_SEQUENCE,    /* a chunk or cursor out of its dump's order (see "Chunks") */
    ONCE_ERR_UNAVAILABLE, /* a site of a sliced filter or a node of a Bloom tree cannot be
                             reached (see "Sliced filters", "Bloom trees") */
    ONCE_ERR_PROBE_MISMATCH, /* two filters (or a DBF and a delta) place keys with different
                                probes: one comes from a saved format-1 file (see
                                ONCE_FORMAT_VERSION) */
    ONCE_ERR_RATE,        /* a target false-positive rate outside [ONCE_MIN_ERROR, 1) */
    ONCE_ERR_NO_WINDOW,   /* a window filter without its window: once_create with
                             once_config.window (count windows, unless `bits` sizes it)
                             or span_ms (time windows) */
    ONCE_STATUS_COUNT
} once_status;

ONCE_API const char *once_strerror(once_status status);

/*
 * Target false-positive rates.  A rate asked for (once_config.error where it plans the
 * geometry, the CLI's --error, the module's ERROR, error_rate and once.error-rate) is
 * in [ONCE_MIN_ERROR, 1), for every structure: below 1e-9 the blocked layout, which
 * the default filters use, has no exact rate to plan by (its inclusion-exclusion sum
 * loses its precision).  once_create refuses another with ONCE_ERR_RATE.  Structures
 * that share their target among parts (the scalable filter's sub-filters, the timer
 * filter's) plan parts below it.
 */
#define ONCE_MIN_ERROR 1e-9
ONCE_API bool once_error_in_range(double error);
ONCE_API const char *once_version(void);

/* --------------------------------------------------------------- structures */

typedef enum once_type {
    ONCE_STANDARD = 1,    /* one bit array, k probes */
    ONCE_PARTITIONED = 2, /* k slices, one probe each */
    ONCE_BLOCKED = 3,     /* one 512-bit cache line per key */
    ONCE_COUNTING = 4,    /* 4-bit saturating counters, supports delete */
    ONCE_APBF = 5,        /* count window: Age-Partitioned Bloom filter (k + l slices) */
    ONCE_APBBF = 6,       /* count window: Age-Partitioned Blocked Bloom filter */
    ONCE_TLBF = 7,        /* time window: Time-limited Bloom filter (variable slices) */
    ONCE_TIMER = 8,       /* time window: timers instead of bits (paper 000, section 4) */
    ONCE_SCALABLE = 9,    /* growing: a chain of filters, each larger and stricter (BF.* semantics) */
    ONCE_DBF = 10,        /* growing: Dynamic Bloom Filter, rows of counting filters (paper 003) */
    ONCE_BPBF = 11,       /* block-partitioned: reducible length without rehashing (paper 002, s. 3) */
    ONCE_DBPBF = 12       /* dynamic block-partitioned: grows by batches of blocks (paper 002, s. 4) */
} once_type;

/*
 * Windowed structures and dedup semantics
 *
 * A windowed filter forgets keys that fall out of its window.  test-and-add answers
 * "seen inside the window" and, under the default policy (first-test-then-set, paper
 * 000 Definition 4), inserts only a key it did not report seen: a count window of w
 * then spans the last w *delivered* keys.  Under the refresh policy a key reported seen
 * is inserted again, so its window restarts from its last occurrence and a count
 * window spans the last w events of any kind.  Inside the window a delivered key is
 * always reported seen (no false negatives); past the window plus the structure's
 * slack it is reported seen at most at the target false-positive rate.
 *
 * A count window reports the w asked for (stats `window`, and once_capacity), however
 * small, with the layout adapted to it; `slack` is how many insertions past the window
 * a key may still be reported seen (past window + slack only as a false positive).
 * With explicit `bits` the segments fix the window they can hold: a larger `window`
 * is refused with ONCE_ERR_INVALID, and without one that window is reported.
 */
/*
 * Event time (ONCE_TLBF, ONCE_TIMER)
 *
 * A time window keeps a clock: the latest event time it accepted, a watermark that
 * only moves forward.  Both time structures follow the same rules:
 *   - Times are milliseconds in [0, ONCE_MAX_TIME_MS]; any other is ONCE_ERR_TIME.
 *   - The first event of a new (or cleared) filter sets the clock wherever it is.
 *   - An event at or after the clock moves the clock to it, unless it is more than
 *     max_time_jump_ms ahead: then it is refused with ONCE_ERR_TIME and changes
 *     nothing.  One outlier timestamp (a year 2100 in a stream of today) would
 *     otherwise expire the whole window at once and freeze the clock far ahead.  A
 *     stream that really jumps further (a replay with a gap of days) needs a larger
 *     bound, or 0 for none.
 *   - An event before the clock (late, or a clock that went backwards) is taken as
 *     happening at the clock: it is tested against what the window holds now and, if
 *     inserted, remembered as of the clock, so no key is forgotten sooner than T after
 *     the moment it was delivered.
 *   - Queries and estimates are answered at max(clock, now_ms) and never move the
 *     clock; a time a write would refuse is refused for them too.
 *
 * The window's boundary: at clock t the window holds the deliveries made at times in
 * (t - T, t].  A key delivered at t0 is reported seen while t - t0 < T; a repeat
 * exactly T later is new again unless the structure's slack still holds it (stats
 * `slack`: under one timer tick for ONCE_TIMER, k ceil(T / l) for ONCE_TLBF).
 */
#define ONCE_MAX_TIME_MS (UINT64_MAX >> 1)
#define ONCE_DEFAULT_MAX_TIME_JUMP_MS (UINT64_C(24) * 3600 * 1000)
/* The memory cap of a time window that grows (ONCE_TLBF) when max_bytes is 0. */
#define ONCE_DEFAULT_TIME_WINDOW_MAX_BYTES (UINT64_C(1) << 30)

typedef enum once_policy {
    ONCE_POLICY_FIRST = 0,  /* insert only keys not seen: the window counts deliveries */
    ONCE_POLICY_REFRESH = 1 /* re-insert seen keys: the window counts from the last one */
} once_policy;

/*
 * The structures
 *
 * One registry lists every structure the library has, in once_type order, so that a
 * caller (the CLI, a server module) can name, list and choose them without a list of
 * its own.  once_structure_at(i) gives entry i, for i below once_structure_count();
 * once_structure_of the entry of a type.  Both answer NULL past the table.
 */
typedef enum once_kind {
    ONCE_KIND_STATIC = 1,   /* a fixed size for a capacity, all time */
    ONCE_KIND_COUNT_WINDOW, /* the last N keys (config.window) */
    ONCE_KIND_TIME_WINDOW,  /* the last T milliseconds (config.span_ms), with a clock */
    ONCE_KIND_GROWING       /* all time, growing with the keys */
} once_kind;

typedef struct once_structure {
    once_type type;
    const char *name;    /* "standard", "blocked", ...: once_type_name */
    once_kind kind;
    bool deletes;        /* once_remove works */
    bool levels;         /* config.level chooses its layout */
    bool memory_cap;     /* config.max_bytes caps its growth */
    const char *summary; /* one line of at most 62 bytes, for a list or a help */
} once_structure;

ONCE_API size_t once_structure_count(void);
ONCE_API const once_structure *once_structure_at(size_t index);
ONCE_API const once_structure *once_structure_of(once_type type);
/* Name <-> type for command lines and reports ("standard", "blocked", ...). */
ONCE_API const char *once_type_name(once_type type);
ONCE_API once_status once_type_from_name(const char *name, once_type *type);

typedef struct once_filter once_filter;

/*
 * Construction.  Either give capacity + error (the library picks the geometry that
 * reaches `error` at `capacity` keys with the least memory), or give bits + hashes
 * explicitly (capacity and error are then only recorded for reports: the error
 * recorded is the geometry's design rate at capacity, 1 when the geometry is too small
 * for it).
 *
 * A field a structure does not read (see each field's comment: `window` for a static
 * filter, `blocks` for a scalable one, ...) is ignored and leaves no trace: the filter
 * is the one built without it, and saves to the same bytes.  (The scalable filter
 * refuses `bits` and `hashes`: it plans every sub-filter itself, so a geometry given
 * for it is a mistake rather than a field to ignore.)  What once_create accepts
 * always saves into a file once_load accepts: it refuses (ONCE_ERR_TOO_LARGE) a
 * capacity past 2^40, the most the format records (the count windows record their
 * window instead and ignore `capacity`).
 */
typedef struct once_config {
    once_type type;
    uint64_t capacity; /* design number of distinct keys, n */
    double error;      /* target false-positive rate at capacity, p in (0, 1) */
    uint64_t bits;     /* explicit size in bits (counters for ONCE_COUNTING); 0 = derive */
    uint32_t hashes;   /* explicit number of probes k; 0 = derive */
    uint64_t seed;     /* hash seed, used when seed_is_set */
    bool seed_is_set;  /* false: draw a random seed */

    /* Windowed structures (ignored by the static ones). */
    uint64_t window;         /* count window w: keys kept (APBF, APBBF) */
    uint32_t level;          /* APBF/APBBF: 0 = fewest slices; higher = less slack, more slices */
    uint32_t age_slices;     /* explicit l (with `hashes` = k); 0 = choose from error/level */
    uint32_t block_bits;     /* APBBF block size B: 64 or 512 (0 = 512) */
    uint32_t block_hashes;   /* APBBF bits per block b: 4 or 8 (0 = 4 for error >= 1e-3, else 8) */
    once_policy policy;      /* what test-and-add does with a key it reports seen */
    uint64_t max_time_jump_ms; /* time windows: how far ahead of the clock an event may be
                                  (see "Event time"; once_config_init sets a day; 0 = any) */

    /* Time windows (TLBF, timer).  `capacity` is then the expected keys per span, the
     * starting size; the structures adapt to the observed rate. */
    uint64_t span_ms;        /* time window T in milliseconds */
    uint64_t max_bytes;      /* hard cap on once_bytes; an insertion (or metadata) that
                                would pass it fails with ONCE_ERR_FULL (0 = the
                                structure's default) */
    uint32_t timer_bits;     /* timer filter: width of a timer, 8, 16 or 32 (0 = 16) */
    uint32_t equal_timers;   /* timer filter: k' of the equal-timers heuristic (0 = off) */
    bool dynamic;            /* timer filter: grow by whole filters past `capacity` keys a
                                span, keeping `error` (paper 000, section 5; window/timer.c);
                                once_config_init sets it, false: a fixed size, whose rate
                                rises past `error` when the rate passes `capacity` */

    /* Growing structures (scalable, DBF, block-partitioned). */
    uint32_t expansion;       /* scalable: each new sub-filter holds `expansion` times the
                                 keys of the last; 0 = non-scaling, a full filter refuses
                                 adds with ONCE_ERR_FULL (once_config_init sets 2) */
    double tightening;        /* scalable: each new sub-filter's error is the last's times
                                 this, in (0, 1) (0 = 0.5) */
    bool query_before_insert; /* DBF: insert only keys not already present (paper 003, 3.5.1) */
    bool bit_slice;           /* DBF: bit-slice row storage (paper 003, 3.5.3) */
    uint64_t block_length;    /* block-partitioned: m_b, bits per block (0 = derive) */
    uint32_t blocks;          /* block-partitioned: mu, blocks (0 = derive) */
    uint64_t batch_threshold; /* dynamic block-partitioned: n_thres keys per batch (0 = derive) */
} once_config;

/* Fill `config` with the defaults: capacity 1,000,000, error 0.001, random seed, a
 * maximum time jump of a day, a timer filter that grows (`dynamic`). */
ONCE_API void once_config_init(once_config *config, once_type type);

ONCE_API once_status once_create(once_filter **out, const once_config *config);
/* A filter of `type` for `capacity` keys at `error`, the other fields once_config_init's.
 * A window needs its window, which these two calls cannot give: for ONCE_APBF, ONCE_APBBF
 * (once_config.window, keys) and ONCE_TLBF, ONCE_TIMER (span_ms) they answer
 * ONCE_ERR_NO_WINDOW; build those with once_create. */
ONCE_API once_status once_create_for_capacity(once_filter **out, once_type type, uint64_t capacity,
                                              double error);
ONCE_API once_status once_create_with_geometry(once_filter **out, once_type type, uint64_t bits,
                                               uint32_t hashes);
ONCE_API void once_free(once_filter *filter);

/* ------------------------------------------------------------- operations */

/* Insert a key. */
ONCE_API once_status once_add(once_filter *filter, const void *key, size_t len, uint64_t now_ms);
/* Is the key (probably) present?  *present is false only if it was never added. */
ONCE_API once_status once_query(const once_filter *filter, const void *key, size_t len,
                                uint64_t now_ms, bool *present);
/* The query, also reporting how many memory segments it read: slices or blocks for the
 * age-partitioned windows (their skip-back search stops early), otherwise
 * ONCE_ERR_UNSUPPORTED.  For capacity planning and for checking the access model. */
ONCE_API once_status once_query_reads(const once_filter *filter, const void *key, size_t len,
                                      uint64_t now_ms, bool *present, uint32_t *reads);
/* Dedup in one call: *seen = "already present"; inserts the key when it was not. */
ONCE_API once_status once_test_and_add(once_filter *filter, const void *key, size_t len,
                                       uint64_t now_ms, bool *seen);
/* Delete a key (counting structures).  A key that is certainly absent is refused with
 * ONCE_ERR_NOT_PRESENT and the filter is left untouched.  Deleting a key that was never
 * added but tests present (a false positive) cannot be detected by any Bloom filter;
 * callers delete only keys they added. */
ONCE_API once_status once_remove(once_filter *filter, const void *key, size_t len,
                                 uint64_t now_ms);
ONCE_API once_status once_clear(once_filter *filter);

/* dst := dst OR src / dst := dst AND src.  Same structure, geometry and seed only.
 * For counting filters union adds counters (saturating) and intersection takes the
 * minimum.
 *
 * Either may fail: ONCE_ERR_INVALID, ONCE_ERR_MISMATCH, ONCE_ERR_UNSUPPORTED (a
 * combination the structure does not offer, below), ONCE_ERR_FULL or ONCE_ERR_NOMEM
 * (a DBF union that needs rows past dst's cap, or memory it cannot get).  On any
 * failure dst is unchanged: it answers, counts (once_items, once_bytes) and saves
 * exactly as before the call.
 *
 * Count windows (APBF, APBBF) combine only with the same geometry, seed and position
 * in the segment cycle (the same number of generations, modulo k + l), else
 * ONCE_ERR_MISMATCH.  Their union holds every key of either at the age it had there:
 * a key stays reported seen for the rest of the window it had in its own filter,
 * counting the insertions into the result from then on (the result takes the earlier
 * of the two positions in the current generation).  It holds the keys of both
 * windows, so its false-positive rate is above the target until they age out.
 * Intersection is refused with ONCE_ERR_UNSUPPORTED: a key both windows hold sits at
 * a different age in each, in different segments, and no segment-wise AND keeps it.
 *
 * Scalable filters: chains of one series (expansion, tightening, first capacity and
 * error) and seed unite whatever their lengths, sub-filter by sub-filter, dst first
 * growing to src's length (ONCE_ERR_FULL past its max_bytes).  Every key of either is
 * present after; sub-filters that took keys of both are past their design load, so the
 * rate holds its bound again only for keys added after the union.  once_items counts
 * the older sub-filters as full and estimates the newest from its cells.
 * Intersection is refused (ONCE_ERR_UNSUPPORTED): a key may sit in different
 * sub-filters of the two chains.
 *
 * Time windows: the TLBF's slices have their own sizes and stamps, so neither union
 * nor intersection is offered (ONCE_ERR_UNSUPPORTED; ONCE_ERR_MISMATCH for filters of
 * another k, l or span).  Fixed-size timer filters of one geometry and span combine
 * timer by timer at the later of the two clocks: union keeps the later expiry,
 * intersection the earlier, so a key alive in both stays alive. */
ONCE_API once_status once_union(once_filter *dst, const once_filter *src);
ONCE_API once_status once_intersect(once_filter *dst, const once_filter *src);

/* Batches: the same operations over arrays of keys, hashed ahead and prefetched so
 * that several cache misses are in flight at once.  Results are exactly those of the
 * one-key calls made in array order (a duplicate later in the same batch is seen). */
typedef struct once_key {
    const void *data;
    size_t len;
    uint64_t time_ms; /* event time for windowed structures; ignored otherwise */
} once_key;

ONCE_API once_status once_add_batch(once_filter *filter, const once_key *keys, size_t count);
ONCE_API once_status once_query_batch(const once_filter *filter, const once_key *keys,
                                      size_t count, uint8_t *present);
ONCE_API once_status once_test_and_add_batch(once_filter *filter, const once_key *keys,
                                             size_t count, uint8_t *seen);
/* The same, also saying how many keys took effect (*done, if not NULL): all `count` when
 * it succeeds; when a key is refused (ONCE_ERR_FULL at a memory cap, ONCE_ERR_TIME for a
 * time the clock refuses, ...), the keys before it, whose answers are in
 * seen[0 .. *done - 1], exactly as the one-key calls in array order would have left the
 * filter (0 when the arguments are refused).  For a caller that must account for every
 * key it was given, such as one that writes out the keys it delivers. */
ONCE_API once_status once_test_and_add_batch_partial(once_filter *filter, const once_key *keys,
                                                     size_t count, uint8_t *seen,
                                                     size_t *done);

/* ----------------------------------------------------------------- digests */

/*
 * A key's digest: the one hash of the key that every operation starts from, XXH3-128
 * of the key's bytes under the filter's 64-bit seed (lo, hi: its low and high 64-bit
 * halves).  It depends on the key and the seed only, never on the structure, its
 * geometry or its state: a digest made once serves every filter of that seed, of any
 * structure, and the same key and seed give the same digest on every host and in
 * every version that reads the same saved format (the saved cells are positions
 * derived from it).  So a caller that routes keys to threads or nodes hashes each key
 * once (once_digest_with_seed needs no filter) and passes the digest on.
 *
 * Every key call is exactly once_digest_key followed by the digest call: for every
 * structure, adding, querying, testing-and-adding or removing a key through its digest
 * answers, counts and changes the filter exactly as through the key.  The batch forms
 * take an array of digests and, for the time windows, an array of event times in
 * milliseconds, one a digest (the once_key time_ms of the key batches); times_ms may
 * be NULL: every event at time 0 (what a structure without a clock ignores anyway).
 * They behave as the key batches: the answers of the one-digest calls in array order,
 * stopping at the first digest whose operation fails.
 */
typedef struct once_digest {
    uint64_t lo, hi;
} once_digest;

ONCE_API once_status once_digest_with_seed(uint64_t seed, const void *key, size_t len,
                                           once_digest *out);
/* once_digest_with_seed(once_seed(filter), key, len, out). */
ONCE_API once_status once_digest_key(const once_filter *filter, const void *key, size_t len,
                                     once_digest *out);

ONCE_API once_status once_add_digest(once_filter *filter, const once_digest *digest,
                                     uint64_t now_ms);
ONCE_API once_status once_query_digest(const once_filter *filter, const once_digest *digest,
                                       uint64_t now_ms, bool *present);
ONCE_API once_status once_test_and_add_digest(once_filter *filter, const once_digest *digest,
                                              uint64_t now_ms, bool *seen);
ONCE_API once_status once_remove_digest(once_filter *filter, const once_digest *digest,
                                        uint64_t now_ms);

ONCE_API once_status once_add_digest_batch(once_filter *filter, const once_digest *digests,
                                           const uint64_t *times_ms, size_t count);
ONCE_API once_status once_query_digest_batch(const once_filter *filter,
                                             const once_digest *digests,
                                             const uint64_t *times_ms, size_t count,
                                             uint8_t *present);
ONCE_API once_status once_test_and_add_digest_batch(once_filter *filter,
                                                    const once_digest *digests,
                                                    const uint64_t *times_ms, size_t count,
                                                    uint8_t *seen);

/*
 * The cells of a key.  A vertically sliced filter (paper 000, section 3.1, Definition
 * 2) keeps ranges of one filter's cells at different sites, and a producer sends each
 * site only the positions of a key that fall in its range; these give them.
 *
 * once_positions: the k cells a key's digest names in `filter`'s array, each in
 * [0, m): for ONCE_STANDARD and ONCE_PARTITIONED the bits of the m-bit array, in probe
 * order (a standard filter's may coincide; a partitioned filter's probe i lies in
 * slice i, [i m/k, (i+1) m/k)), for ONCE_BLOCKED the k distinct bits of its m-bit
 * array, all in the key's 512-bit block, for ONCE_COUNTING the counters, as for the
 * standard filter.  The key is present exactly when all of them
 * are set (non-zero), and an insertion sets exactly them.  *count holds the room of
 * `positions` on entry and k on return; a room under k is ONCE_ERR_INVALID (with
 * *count = k, nothing written).  Other structures: ONCE_ERR_UNSUPPORTED.
 *
 * once_standard_positions: the k bits a standard filter of m = bits and k = hashes
 * built by this library (format 2) would set for the digest, as a function of the
 * geometry alone (no filter), into out[0 .. hashes-1]: once_positions of such a filter.
 * ONCE_ERR_INVALID for bits 0 or past 2^40, hashes 0 or past 64, or a NULL pointer.
 */
ONCE_API once_status once_positions(const once_filter *filter, const once_digest *digest,
                                    uint64_t *positions, uint32_t *count);
ONCE_API once_status once_standard_positions(uint64_t bits, uint32_t hashes,
                                             const once_digest *digest, uint64_t *out);

/* ------------------------------------------------------------------ stats */

typedef struct once_stats {
    once_type type;
    const char *structure; /* once_type_name(type) */
    uint64_t bytes;        /* memory held by the filter: once_bytes */
    uint64_t bits;         /* cells in the array: bits, or counters for counting */
    uint64_t bits_set;     /* cells that are non-zero */
    double fill_ratio;     /* bits_set / bits */
    uint64_t items;        /* keys inserted (new keys for test-and-add), minus deletes */
    uint64_t capacity;     /* design capacity */
    double error;          /* design false-positive rate */
    uint32_t hashes;       /* probes per key */
    double fpr_estimate;   /* false-positive rate estimated from the current fill */
    uint64_t seed;

    /* Windowed structures (zero for static ones). */
    uint64_t window;       /* guaranteed window, in keys (count windows) */
    uint64_t slack;        /* beyond the window, how long keys may still be reported seen */
    uint32_t slices;       /* k + l segments */
    uint32_t age_slices;   /* l */
    uint64_t generation;   /* insertions per generation g */
    double npws;           /* peak normalized probability-weighted slack (paper 001, 5.2) */
    double accesses_absent; /* expected segment accesses of a query that answers false */
    double design_fpr;     /* the structure's own formula for its peak rate */
    uint64_t span_ms;      /* time windows: the span T (window and slack are then in ms) */
    uint64_t newest_bits;  /* TLBF: size of the newest slice, the one sized for the rate */
    uint32_t filters;      /* dynamic structures: sub-filters (rows, batches) alive */
    uint32_t expansion;    /* scalable: capacity factor between sub-filters (0 = non-scaling) */
    uint32_t format;       /* the saved format it writes: ONCE_FORMAT_VERSION, or 1 for a filter
                              loaded from a format-1 file (see "Versions" under serialization) */
    const char *probe;     /* how it places keys: "mixed" (format 2), "linear" (format 1);
                              "blocked" for the blocked layouts, the same in both formats */
} once_stats;

ONCE_API once_status once_get_stats(const once_filter *filter, once_stats *stats);
/* Time windows: the clock (latest event time accepted; *started false before the first
 * event) and the bound on how far ahead of it an event may be (0 = none).  The bound is
 * saved with the filter; setting it is how a loaded filter takes a new one.
 * ONCE_ERR_UNSUPPORTED for structures without a clock. */
ONCE_API once_status once_clock(const once_filter *filter, uint64_t *clock_ms, bool *started);
ONCE_API once_status once_set_max_time_jump(once_filter *filter, uint64_t max_time_jump_ms);
/* The bound in force (0: none; 0 too for structures without a clock). */
ONCE_API uint64_t once_max_time_jump(const once_filter *filter);
/* The clock rule as a step, for a caller that batches events and sets aside the ones a
 * write would refuse (a batch stops at such a key): would `filter` take an event at
 * time_ms with its clock at *clock_ms (*started)?  If so, *clock_ms and *started become
 * what the filter's would after it.  Start from once_clock.  False for a filter
 * without a clock. */
ONCE_API bool once_clock_step(const once_filter *filter, uint64_t *clock_ms, bool *started,
                              uint64_t time_ms);
/* Cheap accessors that do not scan the array.
 *
 * once_bytes is all the memory the filter holds, what a host reports for it and what a
 * `max_bytes` cap bounds: every block it owns (its struct, tables and arrays, the
 * cache-line arrays with their alignment pad) plus its metadata, counted at the sizes
 * the library asked the allocator for.  An allocator's own rounding and bookkeeping
 * (malloc_usable_size minus the request) are not in it: a host that counts usable
 * sizes sees a few bytes more per block.  It does not depend on the allocator
 * installed, and it changes only when the filter allocates or frees: as it grows,
 * shrinks (sub-filters dropped, cleared), combines, or takes metadata. */
ONCE_API uint64_t once_items(const once_filter *filter);
ONCE_API uint64_t once_capacity(const once_filter *filter);
/* Whether a filter that keeps its size holds more keys than its capacity, so that its
 * false-positive rate rises past the one it was planned for: a static filter whose
 * once_items passed once_capacity (constant time), or a fixed timer window (config
 * `dynamic` false, or a timer saved before timer windows grew) whose keys alive in its
 * span, estimated from its alive timers, passed it (a scan of its cells: a host calls
 * it every once_capacity new keys or so, not on every key).  False for the structures
 * that grow or forget on their own, and for NULL.  Hosts warn with it once. */
ONCE_API bool once_overfull(const once_filter *filter);
ONCE_API uint64_t once_bytes(const once_filter *filter);
ONCE_API once_type once_get_type(const once_filter *filter);
ONCE_API uint64_t once_seed(const once_filter *filter);

/* ------------------------------------------------------------ cardinality */

/*
 * How many distinct keys a filter holds, estimated from its cells alone (paper 002,
 * section 5): an estimate and an interval (low, high) that holds the true count with
 * at least the requested probability `confidence` (e.g. 0.9).  The estimate counts
 * distinct keys, so it differs from `items` when keys were added twice or when two
 * filters were combined.  ONCE_ERR_UNSUPPORTED for structures without an estimator.
 * Windowed structures count the distinct keys inside their window at `now_ms` (count
 * windows: the last w insertions; see docs/CARDINALITY.md); the others ignore it.
 */
typedef struct once_cardinality {
    double estimate;
    double low, high;
    double confidence;
} once_cardinality;

ONCE_API once_status once_estimate_cardinality(const once_filter *filter, uint64_t now_ms,
                                               double confidence, once_cardinality *out);
/* |A union B| and |A intersect B| of two filters of the same structure, geometry and
 * seed, without materializing either set (paper 002, section 5.2). */
ONCE_API once_status once_estimate_union(const once_filter *a, const once_filter *b,
                                         double confidence, once_cardinality *out);
ONCE_API once_status once_estimate_intersection(const once_filter *a, const once_filter *b,
                                                double confidence, once_cardinality *out);

/* ---------------------------------------------------------- serialization */

/*
 * One format for every structure: magic "ONCE", format version, structure type,
 * seed, counters, design values, type parameters, payload, and an XXH3-64 checksum of
 * everything before it.  All integers little-endian, so files move between hosts.
 * Loading checks every field against its range and every length against the buffer;
 * it returns an error, never crashes, on truncated, corrupt or hostile input.  Every
 * filter once_create builds, and every state an operation reaches from a filter the
 * library accepted, saves into a file that loads again and answers alike.
 *
 * Versions.  A filter built by this library writes format ONCE_FORMAT_VERSION (2),
 * whose probes are mixed before their reduction (lib/core/hash.h says why).  Format 1
 * placed the keys of every layout but the blocked one with the linear probe; a
 * format-1 file still loads, answers exactly as it did, keeps placing new keys with
 * that probe for as long as it lives, and saves as format 1 again (once_stats.format
 * says which a filter writes).  Combining a format-1 filter with a format-2 one (union,
 * intersection, the pair estimates, a DBF delta) is refused with
 * ONCE_ERR_PROBE_MISMATCH: their keys sit on different cells.
 */
#define ONCE_FORMAT_VERSION 2

typedef int (*once_write_fn)(void *context, const void *data, size_t len); /* 0 = ok */

ONCE_API uint64_t once_saved_size(const once_filter *filter);
ONCE_API once_status once_save(const once_filter *filter, once_write_fn write, void *context);
/* Serialize into a new buffer that the caller frees with once_free_buffer(). */
ONCE_API once_status once_save_to_buffer(const once_filter *filter, void **buffer, size_t *len);
ONCE_API once_status once_load(once_filter **out, const void *buffer, size_t len);

/* Metadata: up to ONCE_MAX_METADATA bytes that an application saves with a filter and
 * reads back after once_load; the library keeps them opaque.  The CLI records in it how
 * it derives keys from lines, so that a resumed run cannot read keys another way.
 * Setting copies the bytes (a length of 0 removes them); once_get_metadata gives a view
 * valid until the next set or free (NULL and 0 when there is none).  The bytes count in
 * once_bytes and once_saved_size; ONCE_ERR_FULL when they would take once_bytes past
 * the structure's cap (`max_bytes`). */
#define ONCE_MAX_METADATA 4096
ONCE_API once_status once_set_metadata(once_filter *filter, const void *data, size_t len);
ONCE_API once_status once_get_metadata(const once_filter *filter, const void **data,
                                       size_t *len);

/* The memory cap of a structure that grows (once_config.max_bytes: scalable, DBF,
 * block-partitioned, TLBF, timer), changed on a filter that exists, such as one just
 * loaded, which keeps the cap it was saved with until then; the new cap is saved with
 * it.  0 is the structure's default, as at creation.  ONCE_ERR_FULL, the cap unchanged,
 * when the filter already holds more than the new cap; ONCE_ERR_UNSUPPORTED for a
 * structure without one.  once_max_bytes reads it (0: none). */
ONCE_API once_status once_set_max_bytes(once_filter *filter, uint64_t max_bytes);
ONCE_API uint64_t once_max_bytes(const once_filter *filter);

/*
 * Chunks: the saved form as a sequence of bounded chunks, for a caller that cannot hold
 * or send it whole (a Redis module's BF.SCANDUMP / BF.LOADCHUNK, RDB and AOF rewrite).
 * The chunks' bodies, in order, are exactly the bytes once_save writes, so they load
 * with once_load too; each chunk adds a header of ONCE_CHUNK_HEADER_SIZE bytes that
 * states its place in the dump and carries its own checksum (lib/api/format.c), so a
 * chunk out of order, repeated, damaged or from another dump is refused where it
 * arrives, not at the end.
 *
 * Saving: a cursor of 0 starts; each call writes the next chunk, at most max_chunk
 * bytes, into `out` (which holds max_chunk bytes), sets *out_len and moves *cursor on.
 * After the last chunk comes one call that writes nothing (*out_len 0) and sets
 * *cursor to 0, so a caller's loop is
 *
 *     uint64_t cursor = 0;
 *     do {
 *         if ((st = once_save_chunk(f, &cursor, max, buf, &n)) != ONCE_OK) break;
 *         if (n != 0) send(buf, n);
 *     } while (cursor != 0);
 *
 * which is BF.SCANDUMP's protocol: [cursor, chunk] per call, [0, ""] at the end.  The
 * cursor is a plain integer below 2^53 (the library keeps no state between calls; a
 * JavaScript client reads it exactly) and
 * max_chunk may differ from call to call.  The first chunk holds at least the whole
 * header, parameters and metadata: the first call needs a max_chunk of at least
 * once_save_chunk_min(f) (never more than ONCE_CHUNK_MIN), later calls at least
 * ONCE_CHUNK_HEADER_SIZE + 8; a smaller one is ONCE_ERR_INVALID.  A chunk is a whole
 * number of 64-bit words of the stream.  The first and the last call each hash the
 * whole stream (for the dump's checksum); the others cost about their own size.
 *   The filter must not change during a dump.  If it does, the last call usually
 * refuses (ONCE_ERR_SEQUENCE), as does any call once the filter is shorter than the
 * cursor's offset; and the loader refuses a dump whose chunks mix states
 * (ONCE_ERR_CHECKSUM, or ONCE_ERR_SEQUENCE when the length changed).  A cursor this library never gave is
 * ONCE_ERR_INVALID or ONCE_ERR_SEQUENCE.  A stream of 1 TiB or more is
 * ONCE_ERR_TOO_LARGE.
 *
 * Loading: once_load_begin makes a loader; once_load_chunk takes the chunks in the
 * order they were saved (*complete, which may be NULL, turns true with the last one);
 * once_load_finish hands out the filter; once_load_abort drops a load at any point.
 * The first chunk's header fields are checked as once_load checks them; the last
 * chunk's call checks the whole stream's checksum and builds the filter through the
 * structure's own loader, which checks the structure's parameters with the payload.
 * So a dump's verdict is once_load's on the same bytes, but that a length past the
 * end (ONCE_ERR_TRUNCATED there) is ONCE_ERR_CORRUPT between chunks that state the
 * stream's length.  A chunk that is not the next one of the dump begun by the first
 * chunk (out of order, repeated, from another dump, or past the end) is
 * ONCE_ERR_SEQUENCE; a damaged one ONCE_ERR_CHECKSUM; one shorter than its header says
 * ONCE_ERR_TRUNCATED; other bad fields ONCE_ERR_CORRUPT, _BAD_MAGIC or _VERSION.  The
 * iterator a Redis client sends with each chunk is not needed: the chunk states its
 * place.
 *   An error ends the load: the loader frees what it holds at once and answers every
 * later call with that same status.  once_load_finish (ONCE_ERR_TRUNCATED before the
 * last chunk) and once_load_abort always free the loader; every loader ends with
 * exactly one of them.  The loader holds the payload received so far (it grows with
 * the chunks, never ahead of them, so a hostile first chunk declaring a huge payload
 * costs nothing) and builds the filter from it after the last chunk: at that moment it
 * needs about twice the filter's size.
 */
#define ONCE_CHUNK_HEADER_SIZE 40
/* Enough for the first chunk of any filter: the chunk header, the 48-byte header, the
 * most parameters (4096 bytes) and metadata section (8 + ONCE_MAX_METADATA) a file may
 * hold, and the payload length. */
#define ONCE_CHUNK_MIN 8296
typedef struct once_loader once_loader;

/* The smallest max_chunk the first call of this filter's dump takes (0 for NULL). */
ONCE_API size_t once_save_chunk_min(const once_filter *filter);
ONCE_API once_status once_save_chunk(const once_filter *filter, uint64_t *cursor,
                                     size_t max_chunk, void *out, size_t *out_len);
ONCE_API once_status once_load_begin(once_loader **out);
ONCE_API once_status once_load_chunk(once_loader *loader, const void *chunk, size_t len,
                                     bool *complete);
ONCE_API once_status once_load_finish(once_loader *loader, once_filter **out);
ONCE_API void once_load_abort(once_loader *loader);

/* ------------------------------------------------ block-partitioned filters */

/*
 * ONCE_BPBF and ONCE_DBPBF (paper 002, sections 3 and 4).  A block-partitioned filter
 * is mu blocks of m_b bits, each a small Bloom filter with its own k_b hash functions;
 * a key is in the filter when every block holds it.  Block j's hash functions depend
 * only on the seed and j, so keeping the first m' blocks is a valid filter of fewer
 * hash functions: the length shrinks without rehashing, at a near-optimal rate
 * (Eq. 1: Pfp = (1 - (1 - 1/m_b)^(k_b n))^(k_b mu)).  The dynamic variant (D-BBF) is a
 * list of such batches: a batch takes n_thres keys, then a new empty batch opens.
 *
 * Construction (once_create with the config fields block_length = m_b, blocks = mu,
 * hashes = k_b, batch_threshold = n_thres; zero fields are derived):
 *   BPBF   k_b = 1 (paper's default) or, when m_b is given with a capacity n,
 *          max(1, floor(m_b ln2 / n)); m_b = ceil(k_b n / ln2) (density 1/2 per block);
 *          mu = bits / m_b when `bits` (the maximum length m) is given, else the fewest
 *          blocks whose Eq. 1 rate at `capacity` is at most `error`.
 *   DBPBF  each batch is `bits` long (default: the standard filter's length for
 *          capacity and error) and the search of section 4 picks mu, m_b = floor(m/mu)
 *          and the n_thres that keeps a batch at `error` (once_bpbf_search); explicit
 *          block_length/blocks skip the search.  `max_bytes` caps once_bytes
 *          (default 1 GiB): an insertion that needs a batch past it fails with
 *          ONCE_ERR_FULL and changes nothing.
 *
 * Combining: once_union / once_intersect need equal geometry (blocks, m_b, k_b, and
 * for the D-BBF n_thres and the batch count).  once_bpbf_union / once_bpbf_intersect
 * also take a `src` of another resolution (other block count, and for the D-BBF other
 * batch count) that shares seed, m_b, k_b (and n_thres): `dst` first drops to the
 * lower resolution, as the paper prescribes, then combines.  D-BBF union is batch-wise
 * OR; D-BBF intersection keeps in batch i the bits of dst's batch i that are set in
 * any batch of src, so a key held by both, in whatever batches, is never lost.
 *
 * Distinct keys: once_estimate_cardinality uses Theorem 3 (section 5.3), summed over
 * the batches of a D-BBF (its keys are counted once when fed through test-and-add);
 * once_estimate_union / once_estimate_intersection are offered for the static BPBF.
 */
typedef struct once_bpbf_geometry {
    uint64_t block_length;    /* m_b, bits per block */
    uint32_t blocks;          /* mu, blocks per batch */
    uint32_t block_hashes;    /* k_b, hash functions per block */
    uint64_t batch_threshold; /* n_thres, keys per batch (0 for the static BPBF) */
} once_bpbf_geometry;

typedef struct once_bpbf_state {
    once_bpbf_geometry geometry; /* current: blocks drops with each reduction */
    uint32_t batches;            /* lambda (1 for the BPBF) */
    uint64_t last_batch_items;   /* keys in the open batch */
    uint64_t bits;               /* logical length: batches * blocks * m_b */
    double fpr_formula;          /* Eq. 1 (BPBF) / Eq. 2 (D-BBF) at the batches' counts */
    double fpr_fill;             /* the same from the measured block fills */
} once_bpbf_state;

ONCE_API once_status once_bpbf_get_state(const once_filter *filter, once_bpbf_state *out);
/* The rate, from the measured fills, the filter would have reduced to `blocks`. */
ONCE_API once_status once_bpbf_fpr_at(const once_filter *filter, uint32_t blocks, double *fpr);
/* Keep the first `blocks` blocks of every batch (1 <= blocks <= current), no rehashing.
 * The filter stays fully usable: it answers, takes keys and reduces again. */
ONCE_API once_status once_bpbf_reduce(once_filter *filter, uint32_t blocks);
/* Reduce to a length of m' bits a batch (m' <= blocks * m_b): the first round(m'/m_b)
 * blocks, at least one (section 3.2). */
ONCE_API once_status once_bpbf_reduce_to_length(once_filter *filter, uint64_t bits);
/* Reduce to the fewest blocks whose measured rate is at most `error`; a filter already
 * above `error` keeps its blocks.  *blocks (may be NULL) gets the blocks kept. */
ONCE_API once_status once_bpbf_reduce_to_error(once_filter *filter, double error,
                                               uint32_t *blocks);
/* Union / intersection across resolutions (see above); the result has the lower one. */
ONCE_API once_status once_bpbf_union(once_filter *dst, const once_filter *src);
ONCE_API once_status once_bpbf_intersect(once_filter *dst, const once_filter *src);

/* ------------------------------------------------------------------ memory */

/*
 * Every byte the library allocates - filters, the buffers it returns, the scratch
 * space of a call, the compressor's state of a DBF delta - comes from one allocator:
 * the C library's, unless the host installs its own, so that a host that accounts for
 * memory (a server that reports and caps what each object holds) sees all of it.
 *
 * Install it once, before any filter exists: once_set_allocator copies the four
 * functions; NULL restores the C library's.  A block must be freed by the allocator
 * that made it, so the library counts the blocks alive and refuses a change
 * (ONCE_ERR_INVALID, nothing changed) while any is: a filter not yet given to
 * once_free, a buffer not yet given to once_free_buffer (one freed with free() stays
 * counted).  Installing the allocator already in use is always accepted.  Not to be
 * called while another thread is inside the library.
 *
 * The functions must behave as the C library's (NULL on failure, realloc leaves the
 * block as it was when it fails) and may be called from every thread that uses the
 * library.  They need only malloc's alignment: the library aligns its cache-line
 * arrays itself, by over-allocating each by 64 + sizeof(void *) bytes (72 on 64-bit
 * hosts; counted in once_bytes).  Under
 * the C library's allocator the large arrays (4 MiB and up) also get the
 * transparent-huge-page hint (madvise); under a host's they do not, as the host owns
 * its pages' policy.  A failed allocation makes the call that needed it return
 * ONCE_ERR_NOMEM, with nothing leaked and the filter as it was (for a batch: as the
 * keys before the failing one left it); no call aborts.  One call cannot fail and
 * falls back instead: once_get_stats reports accesses_absent as 0 when its scratch
 * memory is refused.
 */
typedef struct once_allocator {
    void *(*malloc)(size_t size);
    void *(*calloc)(size_t count, size_t size);
    void *(*realloc)(void *block, size_t size);
    void (*free)(void *block);
} once_allocator;

ONCE_API once_status once_set_allocator(const once_allocator *allocator);
/* Free a buffer the library returned (once_save_to_buffer, once_dbf_export_delta)
 * through the allocator that made it.  NULL is ignored. */
ONCE_API void once_free_buffer(void *buffer);

/* ------------------------------------------------------------- utilities */

/* Which SIMD path the blocked filter uses on this CPU: "avx512", "avx2" or "scalar". */
ONCE_API const char *once_simd_path(void);
/* Force a path (for tests that compare paths): "avx512", "avx2", "scalar", or NULL to
 * pick the best again.  Refused (ONCE_ERR_UNSUPPORTED) if the CPU lacks it. */
ONCE_API once_status once_force_simd_path(const char *name);
/* A seed from the kernel's random source. */
ONCE_API once_status once_random_seed(uint64_t *seed);


/* ------------------------------------------------------- scalable filters */

/* A scalable filter holds at most this many sub-filters (the saved format's bound on
 * its parameters): past the last one's capacity it is full (ONCE_ERR_FULL), as it is
 * at its memory cap.  Its sub-filters' rates tighten down to 1e-15 and stay there, so
 * its target rate never stops its growth before one of those two limits does. */
#define ONCE_SCALABLE_MAX_FILTERS 64u

/* A scalable filter's sub-filters and expansion (0: non-scaling) in constant time,
 * where once_get_stats reads every cell (for BF.INFO, which must be cheap).
 * ONCE_ERR_UNSUPPORTED for another structure. */
ONCE_API once_status once_scalable_shape(const once_filter *filter, uint32_t *filters,
                                         uint32_t *expansion);

/* ---------------------------------------------------- Dynamic Bloom Filters */

/*
 * ONCE_DBF (paper 003): rows of counting Bloom filters of one geometry (m counters, k
 * probes), each holding at most `capacity` = c keys at `error` = its own rate at c.
 * Keys go into the active row (a new row once it holds c keys); a query asks every row;
 * a delete acts only when exactly one row holds the key's address.  When several rows
 * do (the multiple-address problem, paper 003 section 3.1) the delete is refused with
 * ONCE_ERR_UNSUPPORTED and nothing changes: acting on the wrong row could create false
 * negatives.  ONCE_ERR_NOT_PRESENT when no row holds it.  Rows whose counts fit in one
 * are merged and empty rows dropped after deletes and unions.  With query_before_insert
 * (paper 003 section 3.5.1, meant for DBFs without deletion) a key that already tests
 * present is not inserted, and deletes are refused with ONCE_ERR_UNSUPPORTED: a key
 * skipped as a false positive would become a false negative once its cover is deleted.
 *
 * once_union appends the rows of a DBF of the same m, k, c and seed (paper 003,
 * Definition 3); rows past dst's memory cap are refused with ONCE_ERR_FULL, and dst
 * is unchanged.  once_intersect keeps dst's rows and clears the counters no row of src
 * sets: every key of both sets stays present.
 *
 * Stats: filters = rows, bits = rows * m counters, items = keys the rows hold (with
 * query_before_insert a key already present is not inserted again), fpr_estimate =
 * paper 003 Eq. 3 over the rows' actual counts, design_fpr = one row's rate at c.
 */

/* How many rows hold the key's address (0, 1, or more: then a delete is refused). */
ONCE_API once_status once_dbf_matching_rows(const once_filter *filter, const void *key,
                                            size_t len, uint32_t *rows);
/* Merge rows whose counts fit in one row and drop empty rows (paper 003, Merge()). */
ONCE_API once_status once_dbf_merge(once_filter *filter);
/* once_union for a DBF dst (ONCE_ERR_UNSUPPORTED for another structure): it refuses
 * (ONCE_ERR_FULL, dst unchanged) what dst's cap cannot hold, as once_union does. */
ONCE_API once_status once_dbf_union(once_filter *dst, const once_filter *src);

/*
 * Incremental updates between nodes (paper 003 sections 4.4 and 3.5.2).  Every change
 * of a DBF advances its version; each row remembers the version of its last change.
 * The version stops at 2^62 (146 years of a change a nanosecond; only a file written
 * near it gets there), and a file past it is refused; from a base at 2^62 changes
 * cannot be told apart, so an export since that version is ONCE_ERR_MISMATCH.
 * once_dbf_export_delta(f, v, ...) writes, for the rows changed since version v, the
 * bitwise xor of the row's counters with the row as it was at v (a new row: itself),
 * zstd-compressed, and makes the current state the new base.  v is either 0 (the state
 * of a new, empty DBF) or the version of the last export; anything else is
 * ONCE_ERR_MISMATCH (send a full once_save instead).  The delta is a new buffer that
 * the caller frees with once_free_buffer.  The exporter keeps one copy of the rows as
 * last exported, counted in its bytes and its memory cap.
 * once_dbf_apply_delta checks the delta like any loader (ONCE_ERR_TRUNCATED, _CORRUPT,
 * _CHECKSUM, _BAD_MAGIC, _VERSION), that the replica has the same m, k, c and seed
 * (ONCE_ERR_MISMATCH) and is at the delta's base version with its rows
 * (ONCE_ERR_MISMATCH), and that the result fits the replica's cap (ONCE_ERR_FULL); on
 * any error the replica is unchanged.  Afterwards the replica answers every query,
 * insert and delete exactly as the source.
 */
ONCE_API uint64_t once_dbf_version(const once_filter *filter);
ONCE_API once_status once_dbf_export_delta(once_filter *filter, uint64_t since_version,
                                           void **delta, size_t *len);
ONCE_API once_status once_dbf_apply_delta(once_filter *replica, const void *delta, size_t len);

/* ---------------------------------------------------------- sliced filters */

/*
 * One logical Bloom filter of m bits and k hash functions, sliced over sites (paper
 * 000, section 3): each site holds one slice's bits and answers operations on
 * positions inside it.
 *
 *   Horizontal (Definition 1): S independent filters of m/S bits; a hash H_S of the
 *   key, independent of the k probe hashes, picks the one slice an event goes to, and
 *   the k positions fall in it.  Rate (Eq. 4): (1 - (1 - S/m)^(k n/S))^k.
 *   Vertical (Definition 2): slice i holds bits [i m/S, (i+1) m/S) of one m-bit
 *   filter, its bits taken in a keyed order (so that a key's k positions land in
 *   slices independently, as the failure rates of section 3.2 assume); an event's k
 *   positions are the unsliced standard filter's (once_standard_positions) and go to
 *   the slices that hold them, so a vertical filter decides every event exactly as the
 *   standard filter of the same m, k and seed (Eq. 3, Proposition 1).
 *   Diced (section 3.3), S x S' sites of m/(S S') bits: h-v is horizontal over S
 *   slices, each a vertical filter of S' parts (the rate of horizontal slicing over
 *   S); v-h is vertical over S slices, each a horizontal filter of S' parts (a part
 *   chosen by a hash of the key and the slice; the rate of horizontal slicing over
 *   S S').  Site s x S' + p holds part p of slice s.
 *   A slice holds m/S bits rounded up to whole words for each part (slice_bits a
 *   site); a vertical filter keeps m as given or planned, spreading its bits over the
 *   slices (floor(m/S) or ceil(m/S) each), so that it is the standard filter of that
 *   m; v-h rounds m up to a multiple of S S', so that its parts are equal.
 *
 * Primitives (section 3): first-test-then-set (ONCE_FTTS: test the k bits, set them
 * only for an event found distinct) and per-bit test-and-set (ONCE_TAS: set them
 * always, the event is a duplicate when all were set before).  Lookups: parallel
 * (every touched slice is asked at once) or pipelined (slices in turn, stopping at the
 * first with an unset bit; FTTS only).  A message is one request to one site.
 *
 * Sites: a site is the storage of one slice behind a function that runs a batch of
 * requests, each with its own status, so that a remote site (another thread, a Redis
 * node) is one more implementation: ONCE_ERR_UNAVAILABLE says it cannot be reached.
 * With sites NULL the filter holds its slices in process memory, run by the calling
 * thread, or by `threads` worker threads that own them (once_thread_sites_create).
 *
 * Threads (section 6, "Concurrency"): with `concurrent` set, several threads may call
 * one filter at once, and with every site reachable an event is answered distinct at
 * most once however many threads offer it: two producers of one event cannot
 * interleave their tests and sets.  The filter's own bit sites, run by the callers
 * (no threads, window or growth), take event-level locks: an operation holds the lock
 * of its key's stripe (a batch, those of its keys, in order) from its first test to
 * its last set, and bits are set with atomic OR, so events of other keys run at once
 * and no set is lost.  Other sites take slice-level locks: an event holds the locks of
 * the sites it touches, in site order.  Without `concurrent` a filter is one thread's
 * at a time.
 */
typedef enum once_slicing {
    ONCE_SLICING_HORIZONTAL = 1,
    ONCE_SLICING_VERTICAL = 2,
    ONCE_SLICING_DICED_HV = 3, /* horizontal slices, each vertical over S' parts */
    ONCE_SLICING_DICED_VH = 4  /* vertical slices, each horizontal over S' parts */
} once_slicing;

typedef enum once_primitive {
    ONCE_FTTS = 0, /* first test, then set */
    ONCE_TAS = 1   /* test-and-set, bit by bit */
} once_primitive;

typedef enum once_lookup {
    ONCE_LOOKUP_PARALLEL = 0,
    ONCE_LOOKUP_PIPELINED = 1
} once_lookup;

typedef enum once_site_op {
    ONCE_SITE_TEST = 0,        /* all_set: every position is set */
    ONCE_SITE_SET = 1,         /* set every position */
    ONCE_SITE_TEST_AND_SET = 2 /* set every position; all_set: every one was set before */
} once_site_op;

typedef struct once_site_request {
    once_site_op op;
    const uint64_t *positions; /* in [0, the site's bits) */
    uint32_t count;
    bool all_set;       /* out */
    once_status status; /* out: ONCE_OK, or ONCE_ERR_UNAVAILABLE */
    /* Windows (section 4): the event's producer timestamp t_u in ms; a site sets a
     * position to expire at t_u + w, whatever the delay before it gets the request,
     * and tests it alive at t_u.  Ignored by sites without a window. */
    uint64_t time_ms;
    /* Out, when not NULL (count of them): each position's expiry in ms, 0 when not
     * alive, from the sub-filter that holds them all when all_set (equal timers). */
    uint64_t *expiries;
} once_site_request;

/* What a site holds, for stats (once_site.describe). */
typedef struct once_site_info {
    uint64_t cells;     /* positions a sub-filter holds */
    uint64_t cells_set; /* set (alive) cells, over its sub-filters */
    uint32_t filters;   /* sub-filters (dynamic size) */
    uint64_t bytes;
    uint64_t opened;    /* sub-filters opened since creation, the first included */
} once_site_info;

typedef struct once_site {
    void *context;
    /* Run requests[0 .. count-1] in order, filling each one's all_set and status. */
    void (*run)(void *context, once_site_request *requests, size_t count);
    /* Called by once_sliced_free (may be NULL). */
    void (*destroy)(void *context);
    /* Optional, both or neither, for a site that works apart from its caller (a thread,
     * a server): start begins running the requests and returns; wait returns when they
     * have run.  A batch starts every site it needs before it waits for any, so such
     * sites work in parallel.  The filter never starts a site that has a batch in
     * flight. */
    void (*start)(void *context, once_site_request *requests, size_t count);
    void (*wait)(void *context);
    /* Optional: fill *info (never called with a batch in flight). */
    void (*describe)(void *context, once_site_info *info);
} once_site;

/* Dynamic size (section 5): when a site opens a new sub-filter. */
typedef enum once_growth {
    ONCE_GROWTH_NONE = 0,
    ONCE_GROWTH_DENSITY = 1,    /* its newest passes a density of set cells */
    ONCE_GROWTH_CARDINALITY = 2 /* its newest took the positions that reach it on average */
} once_growth;

/*
 * A site in process memory: `bits` cells (a multiple of 64); with window_ms a cell is a
 * timer (8 bytes), set to expire at t_u + w (the later of that and what it holds),
 * alive for a request of time t_u while it expires after t_u (so a late event is
 * judged at its own time); with growth a list of sub-filters, a new one when the newest reaches
 * max_density (by density, or by the count of positions that gives it on average),
 * the positions of a request present when one sub-filter holds them all, and an old
 * sub-filter dropped when all its timers expired.  Queries never move its clock.
 */
typedef struct once_memory_site_config {
    uint64_t bits;
    uint64_t window_ms; /* 0: bits, no window */
    once_growth growth;
    double max_density; /* in (0, 1), with growth */
    bool shared;        /* bits only, no growth: several threads may run it at once (a
                           bit is set with an atomic OR, so no set is lost) */
    /* With growth, when not NULL: the bytes that the sites given this budget may still
     * take for sub-filters past their first, taken and given back atomically (the sites
     * may run on several threads).  A site whose newest is full and that cannot open
     * another within it answers a request that sets with ONCE_ERR_FULL, setting
     * nothing, as it does past ONCE_MEMORY_SITE_MAX_FILTERS; a dropped sub-filter
     * gives its bytes back.  NULL: no budget, and a site past its most sub-filters lets
     * the newest take more (the rate then rises above the target). */
    uint64_t *budget;
} once_memory_site_config;

#define ONCE_MEMORY_SITE_MAX_FILTERS 64u

ONCE_API once_status once_memory_site_create(const once_memory_site_config *config,
                                             once_site *site);

/* What a sliced filter does when a site cannot be reached (section 3.2). */
typedef enum once_failure {
    ONCE_FAILURE_REPORT = 0,   /* the call fails with ONCE_ERR_UNAVAILABLE, nothing decided */
    ONCE_FAILURE_THRESHOLD = 1 /* decide from the sites reached: a duplicate when every
                                  reachable position is set and at least `threshold`
                                  positions were reached (0: a failed position counts as
                                  set, "duplicate"; k: any failure makes the event
                                  "distinct"; between, the hybrid); a distinct event's
                                  reachable positions are set */
} once_failure;

#define ONCE_MAX_SLICED_SITES 4096u /* S S' */
#define ONCE_MAX_SITE_THREADS 256u

typedef struct once_sliced_config {
    once_slicing slicing;
    uint32_t slices;          /* S, 1 to 4096 */
    uint32_t parts;           /* S', diced slicing only (0 = 1); S S' at most 4096 */
    uint64_t bits;            /* m; 0 = the standard filter's for capacity and error */
    uint32_t hashes;          /* k; 0 = derive */
    uint64_t capacity;        /* n, with error, when bits is 0 */
    double error;
    uint64_t seed;
    bool seed_is_set;         /* false: draw one */
    once_primitive primitive;
    once_lookup lookup;
    once_failure on_failure;
    uint32_t threshold;       /* x, at most k, for ONCE_FAILURE_THRESHOLD */
    uint32_t threads;         /* sites NULL: 0 = run the memory sites in the caller's
                                 thread; T = T worker threads own them */
    bool concurrent;          /* several threads call at once (see above) */
    /* Windows (section 4): keep an event for window_ms after its timestamp (FTTS only:
     * a duplicate must not set its timers, unless `refresh` below).  0 = all time. */
    uint64_t window_ms;
    /* Or a count window: keep the last N events answered distinct (0 = none; not with
     * window_ms).  The filter's count of such events is then its clock: an event
     * distinct at count c is stamped c and stays while fewer than N others follow it,
     * and the time_ms of calls is ignored. */
    uint64_t window_events;
    /* With a window: a duplicate restarts its window (its timers are set again at its
     * own time, or count), as ONCE_POLICY_REFRESH; false: the window counts from the
     * key's first delivery, the paper's timers. */
    bool refresh;
    uint32_t equal_timers;    /* k' of the equal-timers heuristic, at most k (0 = off) */
    /* Memory sites (sites NULL): their cells take at most this many bytes in all, the
     * first sub-filter of each site included (creation fails with ONCE_ERR_FULL when
     * those alone pass it); an event whose site would need a sub-filter past it fails
     * with ONCE_ERR_FULL.  0 = no cap.  Not with a count window, which holds N events
     * at most and is sized for them. */
    uint64_t max_bytes;
    /* Dynamic size (section 5), sites NULL: each site grows alone, opening a new
     * sub-filter of its size when its newest reaches the density at which a filter of
     * the slice's share has rate `error` (P^(1/k)), or the count of positions that
     * reaches it on average. */
    once_growth growth;
} once_sliced_config;

typedef struct once_sliced once_sliced;

typedef struct once_sliced_stats {
    once_slicing slicing;
    uint64_t bits;            /* m */
    uint64_t slice_bits;      /* bits a site holds: m / (S S'), rounded up to words */
    uint32_t hashes, slices, parts;
    uint32_t sites;           /* S S' */
    uint64_t events;          /* events decided or offered (test-and-add, one or batched) */
    uint64_t messages;        /* requests sent to sites */
    uint64_t failed_messages; /* of which the site could not be reached */
    double messages_per_event;
    double fairness;          /* (sum x)^2 / (N sum x^2) over the events each of the N
                                 sites saw */
    uint64_t max_load;        /* the most events one site saw */
    uint32_t filters;         /* sub-filters over the sites (a site without describe: 1) */
    uint64_t bytes;           /* the sites' memory, as they describe it */
    uint64_t inserted;        /* events answered distinct (and so inserted) */
    uint64_t window_ms;       /* the time window, or 0 */
    uint64_t window_events;   /* the count window (N events delivered), or 0 */
    /* Live estimates (section 3.2): the fill where an event's positions fall (the
     * set cells the sites describe, over their cells and sub-filters; from `inserted`
     * and the formulas for sites that describe nothing), the fraction of sites whose
     * last request failed, and the false-positive and false-negative rates they give
     * under the filter's failure rule (once_sliced_failure_rates_at_fill).  A site
     * that comes back is as its implementation brings it: with its old state (a
     * site that was unreachable: the rates return to those without failures, but for
     * the events decided without it, whose bits there were never set), or empty (a
     * replaced site: every key stored before loses the positions it held there, a
     * false negative for a key with any of them, 1 - (1 - 1/S)^k of vertical keys,
     * until they are offered again).  The filter does not repair sites. */
    double fill;
    double failed_fraction;
    double fp_estimate, fn_estimate;
} once_sliced_stats;

/* "horizontal", "vertical", "diced h-v" or "diced v-h" ("unknown" for another value). */
ONCE_API const char *once_slicing_name(once_slicing slicing);

/* `sites`, when not NULL, holds S S' sites, each of slice_bits bits
 * (once_sliced_geometry tells them before creation); the filter takes them over when
 * it is created (once_sliced_free destroys them), and leaves them to the caller when
 * creation fails. */
ONCE_API once_status once_sliced_geometry(const once_sliced_config *config, uint64_t *bits,
                                          uint32_t *hashes, uint64_t *slice_bits);
ONCE_API once_status once_sliced_create(once_sliced **out, const once_sliced_config *config,
                                        const once_site *sites);
ONCE_API void once_sliced_free(once_sliced *filter);
/* Dedup through the slices: *seen = duplicate; a distinct event is inserted.  time_ms
 * is the event's producer timestamp t_u (windows; ignored otherwise). */
ONCE_API once_status once_sliced_test_and_add(once_sliced *filter, const void *key, size_t len,
                                              uint64_t time_ms, bool *seen);
/*
 * The same over keys[0 .. count-1], with the answers of one-key calls made in array
 * order.  Each event's test-and-set requests go to all its sites at once
 * and each site runs its requests in event order, so the sites of a batch work in
 * parallel (thread sites, remote sites); test-and-set decides, and leaves the bits,
 * exactly as first-test-then-set does for one producer (a duplicate's reachable bits
 * are set already), whatever the primitive and lookup.  seen[i]: 0 distinct,
 * 1 duplicate, ONCE_SLICED_UNDECIDED when a site it needs could not be reached under
 * ONCE_FAILURE_REPORT (the call then returns ONCE_ERR_UNAVAILABLE, every other answer
 * stands; the reachable bits of an undecided event are set).  A window is FTTS, which
 * must test every event before it sets any: its batch is the one-key calls in turn.
 */
#define ONCE_SLICED_UNDECIDED 2
ONCE_API once_status once_sliced_test_and_add_batch(once_sliced *filter, const once_key *keys,
                                                    size_t count, uint8_t *seen);
ONCE_API once_status once_sliced_query(once_sliced *filter, const void *key, size_t len,
                                       uint64_t time_ms, bool *present);
ONCE_API once_status once_sliced_get_stats(const once_sliced *filter, once_sliced_stats *stats);
/* What site i holds (once_site.describe; a site without it: its size, one filter). */
ONCE_API once_status once_sliced_site_info(const once_sliced *filter, uint32_t site,
                                           once_site_info *info);
/* Events each site saw, into loads[0 .. S S' - 1] (room at least S S'). */
ONCE_API once_status once_sliced_loads(const once_sliced *filter, uint64_t *loads, uint32_t room);

/* Give sites[0 .. count-1] to `threads` worker threads (1 to ONCE_MAX_SITE_THREADS;
 * site i to thread i mod threads): each site is replaced by one that runs its requests
 * on the owner thread, and starts and waits (once_site) so that a batch's sites run in
 * parallel; destroying it destroys the site it owns.  The workers stop when the last
 * of their sites is destroyed.  On failure the sites are left as they were. */
ONCE_API once_status once_thread_sites_create(uint32_t threads, uint32_t count,
                                              once_site *sites);

/* ------------------------------------------------------------- Bloom trees */

/*
 * A tree of Bloom filters placed near the producers (paper 000, section 6, Definition
 * 5): an event is tested first at the leaf of its producer group, and goes up toward
 * the root only on a miss, so that duplicates produced near each other are caught
 * without reaching the remote part of the tree.  Every node is a filter of the same m
 * bits, k hash functions and seed, and an event's k positions are computed once
 * (once_standard_positions of once_digest_with_seed, as ONCE_STANDARD's) and asked of
 * every node it visits.
 *
 * Shape: a complete tree of L levels, numbered as the paper does (section 7, Table 1):
 * level 0 is the root, level L - 1 the leaves; every internal node has `fanout`
 * children, so there are fanout^(L-1) leaves, named 0 .. leaves - 1 left to right.  The
 * caller names the leaf of each event.  L = 1 is a single filter.
 *
 * Modes (section 6):
 *   ONCE_TREE_DENSE, test-and-set (Algorithm 1): test-and-set at the leaf, then at each
 *     ancestor in turn; the first node that held all k bits makes the event a
 *     duplicate and nothing above it is asked; past the root, the event is distinct.
 *     Leaves' sets may overlap: an event is kept near every producer that sent it.
 *   ONCE_TREE_SPARSE, first-test-then-set (Algorithm 2): test at the leaf, then at
 *     each ancestor, setting nothing; a node holding all k bits makes the event a
 *     duplicate; past the root, the event is distinct and its bits are set at every
 *     node of its path, from the root down to the leaf.  Leaves' sets are disjoint.
 * Without top-down testing both decide every event exactly as one standard filter of
 * the same m, k and seed that sees the whole stream (Propositions 3 and 4): the root
 * holds the bits of every event so far, and every node holds a subset of its parent's.
 *
 * Top-down testing (section 6, the heuristic with threshold level d): a match at a
 * node of level j < d, which the upper levels make likelier to be a false positive, is
 * checked below it.  The node's other children (all but the one the event came up
 * from) are tested, then every child of each that matched, level by level down to
 * level d; a match at level d confirms the event a duplicate.  If a level has no match
 * the node's match was a false positive and the event goes on up the tree as after a
 * miss (where the paper stops and calls the event distinct: going on keeps every
 * repeat a duplicate).  A match at level d or below is final.  The check only tests,
 * in both modes.  It makes an event distinct only where the tree without it would say
 * duplicate, never the other way; run by one caller with every node reachable, an
 * event seen before is still always a duplicate.  d = 0 turns it off; d is at most
 * L - 1.
 *
 * Nodes: a node is a site (once_site above), so it may live anywhere; with sites NULL
 * the tree holds its nodes in process memory.  A node that cannot be reached when the
 * event needs it fails the call with ONCE_ERR_UNAVAILABLE, nothing decided; what the
 * nodes asked before it were told stays (dense: the event's bits at the nodes below
 * it; sparse: at the nodes above it when the failure comes while setting), so a retry
 * may answer duplicate.  Calls on one tree are made by one thread at a time.
 */
typedef enum once_tree_mode {
    ONCE_TREE_DENSE = 0, /* test-and-set up the tree (Algorithm 1) */
    ONCE_TREE_SPARSE = 1 /* first test up to a match or the root, then set (Algorithm 2) */
} once_tree_mode;

#define ONCE_TREE_MAX_LEVELS 16
#define ONCE_TREE_MAX_NODES (UINT64_C(1) << 24)

typedef struct once_tree_config {
    once_tree_mode mode;
    uint32_t levels;          /* L, 1 to ONCE_TREE_MAX_LEVELS */
    uint32_t fanout;          /* children of each internal node, at least 1; at most
                                 ONCE_TREE_MAX_NODES nodes in all */
    uint64_t bits;            /* m of every node; 0 = the standard filter's for capacity
                                 and error */
    uint32_t hashes;          /* k, at most 64; 0 = derive */
    uint64_t capacity;        /* n, with error, when bits is 0 */
    double error;
    uint64_t seed;
    bool seed_is_set;         /* false: draw one */
    uint32_t top_down_level;  /* d, 0 (off) to L - 1 */
    bool concurrent;          /* several threads call at once: each operation holds the
                                 root's lock (section 6), so an event is answered
                                 distinct at most once */
} once_tree_config;

typedef struct once_tree once_tree;

/* Per level, indexed by level (0 = the root, levels - 1 = the leaves); entries past
 * `levels` are 0. */
typedef struct once_tree_stats {
    uint64_t bits;            /* m of every node */
    uint32_t hashes, levels, fanout;
    uint64_t nodes, leaves;
    uint64_t events;          /* test-and-add calls answered */
    uint64_t duplicates;      /* of which answered duplicate */
    uint64_t failures;        /* requests a node could not answer */
    uint64_t accesses[ONCE_TREE_MAX_LEVELS];  /* requests to the level's nodes: tests,
                                                 test-and-sets, sets, top-down tests */
    uint64_t hits[ONCE_TREE_MAX_LEVELS];      /* of which answered "all k bits set"
                                                 (a set is never a hit) */
    uint64_t ruled_out[ONCE_TREE_MAX_LEVELS]; /* matches at the level that top-down
                                                 testing found false positives */
} once_tree_stats;

/* The tree's m, k, nodes and leaves for a configuration, before creation (to build its
 * sites).  ONCE_ERR_INVALID for a field out of range, ONCE_ERR_TOO_LARGE for m past
 * 2^40 or a tree past ONCE_TREE_MAX_NODES nodes. */
ONCE_API once_status once_tree_geometry(const once_tree_config *config, uint64_t *bits,
                                        uint32_t *hashes, uint64_t *nodes, uint64_t *leaves);
/* `sites`, when not NULL, holds one site per node, each of m bits, in level order: the
 * root first, then level 1 left to right, and so on, the leaves last (leaf i is
 * sites[nodes - leaves + i]); the children of sites[i] are sites[fanout i + 1 ..
 * fanout i + fanout].  The tree takes them over (once_tree_free calls each destroy);
 * if creation fails the caller keeps them. */
ONCE_API once_status once_tree_create(once_tree **out, const once_tree_config *config,
                                      const once_site *sites);
ONCE_API void once_tree_free(once_tree *tree);
/* Dedup an event produced at leaf `leaf` (0 .. leaves - 1): *seen = duplicate; a
 * distinct event is inserted as the mode says. */
ONCE_API once_status once_tree_test_and_add(once_tree *tree, uint64_t leaf, const void *key,
                                            size_t len, bool *seen);
ONCE_API once_status once_tree_get_stats(const once_tree *tree, once_tree_stats *stats);

#ifdef __cplusplus
}
#endif
#endif /* ONCE_H */
