/*
 * once.h - the public interface of libonce: one filter, from creation to saved file.
 *
 * libonce answers one question for a stream of keys: "have I delivered this key
 * before?" with bounded memory and a false-positive rate chosen by the caller, and
 * never a false negative.  Every structure in the library (standard, partitioned,
 * blocked and counting Bloom filters, count and time windows, growing filters) sits
 * behind the one opaque handle `once_filter` and the one set of calls below: the `once`
 * command (programs/) is one caller of these calls, and every other caller uses them
 * the same way.
 *
 *     #include <once.h>
 *
 *     once_config config;
 *     once_config_init(&config, ONCE_TAGGED);    // a time window ...
 *     config.span_ms = 3600 * 1000;              // ... of one hour
 *     once_filter *filter;
 *     if (once_create(&filter, &config) != ONCE_OK)
 *         return 1;
 *     bool seen;
 *     once_test_and_add(filter, "click:42", 8, now_ms, &seen); // seen: drop it
 *     once_free(filter);
 *
 * The headers, in tiers (each includes the one before):
 *   once.h           what a user of one filter needs: configuration, creation, one-key
 *                    and batch operations, union and intersection, statistics,
 *                    cardinality, save and load.  The stable tier.
 *   once_advanced.h  digests and cell positions, the clock as a step, chunked save and
 *                    load, the calls of one structure (block-partitioned, scalable,
 *                    DBF and its incremental updates), sharded filters and their
 *                    executor, the allocator, the SIMD path.
 *   once_sliced.h    one filter sliced over sites, and Bloom trees (paper 000).
 *   once_math.h      the papers' formulas: the rate of a geometry, the geometry for a
 *                    rate.
 * Only once.h is stable: a program built against it keeps working with every later
 * libonce.so.1.  The other three change with the library, calls and structs alike, and
 * compile only where ONCE_USE_UNSTABLE_API is defined before they are included (else
 * an #error): by defining it a program accepts that it is built for this exact version,
 * linked statically or rebuilt against each release.  libonce.so exports exactly the
 * calls these headers declare (a check in `make test`): once.h's under the version
 * node ONCE_1, the others' under ONCE_PRIVATE_<version> (ONCE_VERSION_STRING), so that
 * a program using them fails to load against another version instead of misbehaving.
 * once.h's structures that a caller fills (once_config) or the library fills
 * (once_stats) carry their size, set by the macros once_config_init and once_get_stats
 * from the caller's own header: a program built against an older libonce keeps working
 * with a newer one that added fields.  Its other structures say why they need none.
 *
 * Conventions
 *   - Every call that can fail returns `once_status`; ONCE_OK is 0.  `once_strerror()`
 *     turns a status into a sentence.  Nothing aborts on bad input or failed malloc.
 *   - Every allocation goes through one allocator, the C library's unless the host
 *     installs its own (once_set_allocator, once_advanced.h); a buffer the library
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
 *     ones that take a `const once_filter *` (tests/rules/exports.sh checks this list
 *     against the headers):
 *       once.h: once_query, once_query_batch, once_get_stats (once_get_stats_sized),
 *         once_clock, once_max_time_jump, once_items, once_capacity, once_overfull,
 *         once_bytes, once_get_type, once_seed, once_estimate_cardinality,
 *         once_estimate_union, once_estimate_intersection, once_saved_size, once_save,
 *         once_save_to_buffer, once_get_metadata, once_max_bytes;
 *       once_advanced.h: once_query_reads, once_query_digest, once_query_digest_batch,
 *         once_positions, once_digest_key, once_clock_step, once_save_chunk_min,
 *         once_save_chunk, once_bpbf_get_state, once_bpbf_fpr_at,
 *         once_scalable_shape, once_dbf_matching_rows, once_dbf_version,
 *         once_shard_count, once_can_take;
 *       once_sliced.h: once_slice_config, once_slice_describe;
 *       and `src` of once_union, once_intersect, once_bpbf_union and
 *         once_bpbf_intersect.
 *     They change nothing, not even a cache or a clock: a time window asked at a time
 *     past its clock answers at that time and leaves the clock where it was.
 *   - Every other call on a filter writes (test-and-add, which inserts, included;
 *     once_dbf_export_delta too, which moves its base) and needs the filter to itself:
 *     no other call on that filter, read-only or not, may run meanwhile.  Callers
 *     that share a filter between threads serialize its writes with their own lock
 *     (a reader-writer lock fits the rule above), or give each thread its own
 *     filters, for instance routing each key by its digest (once_advanced.h).  A chunk
 *     loader (once_load_begin) is the same: one thread at a time, different loaders at
 *     once.
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
#define ONCE_VERSION_MINOR 2
#define ONCE_VERSION_PATCH 0
#define ONCE_VERSION_STRING "0.2.0"

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
    ONCE_DBPBF = 12,      /* dynamic block-partitioned: grows by batches of blocks (paper 002, s. 4) */
    ONCE_SLICE = 13,      /* one slice of a sliced filter, run by positions (once_sliced.h) */
    ONCE_TAGGED = 14      /* time window: fingerprints tagged with their tick (window/tagged.c) */
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
 * Event time (ONCE_TAGGED, ONCE_TLBF, ONCE_TIMER)
 *
 * A time window keeps a clock: the latest event time it accepted, a watermark that
 * only moves forward.  Every time structure follows the same rules:
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
 *   - With a lag allowance H (once_config.lag_ms, ONCE_TAGGED only), an event at t with
 *     L - H <= t < L (L the clock) is instead judged and written at its own time t,
 *     for producers whose event times lag each other (consumer lag, skewed partitions):
 *     it is reported seen iff a key delivered at an event time t0 with |t - t0| < T is
 *     held (within a tick's rounding, once_stats `slack`), from either side, and if new
 *     it is remembered as delivered at t, so it lives T past t, not past the clock.
 *     An event before L - H is judged and written as at L - H.  The clock stays where
 *     it is.  Entries are kept H longer, so that late events still find them: a lag
 *     costs memory (the first table is planned for the keys of T + H, and the tags take
 *     a sixth bit).
 *   - Queries and estimates are answered at max(clock, now_ms) and never move the
 *     clock; a time a write would refuse is refused for them too.  With a lag, a query
 *     at t in [L - H, L) is answered at t, as a write there would be judged (estimates
 *     still at the clock).
 *
 * The window's boundary: at clock t the window holds the deliveries made at times in
 * (t - T, t].  A key delivered at t0 is reported seen while t - t0 < T; a repeat
 * exactly T later is new again unless the structure's slack still holds it (stats
 * `slack`: under a tick of T / 12 (plus 12 ms of rounding) for ONCE_TAGGED, under one
 * timer tick for ONCE_TIMER, k ceil(T / l) for ONCE_TLBF).
 */
#define ONCE_MAX_TIME_MS (UINT64_MAX >> 1)
#define ONCE_DEFAULT_MAX_TIME_JUMP_MS (UINT64_C(24) * 3600 * 1000)
/* The memory cap of a structure that grows (the time windows ONCE_TAGGED, ONCE_TLBF and
 * ONCE_TIMER, the DBF, the D-BBF) when max_bytes is 0: 1 GiB.  The time windows' name for
 * it is kept for their callers. */
#define ONCE_DEFAULT_MAX_BYTES (UINT64_C(1) << 30)
#define ONCE_DEFAULT_TIME_WINDOW_MAX_BYTES ONCE_DEFAULT_MAX_BYTES

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
    ONCE_KIND_GROWING,      /* all time, growing with the keys */
    ONCE_KIND_SLICE         /* no keys: positions of a sliced filter (once_slice_run) */
} once_kind;

/* The library's own table, read through the pointers below: fields may be appended,
 * as a program reads only those it knows. */
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
    size_t size;       /* the caller's sizeof(once_config): once_config_init sets it */
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

    /* Time windows (tagged, TLBF, timer).  `capacity` is then the expected keys per span, the
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

    /* Appended after the first version (a caller's shorter struct reads as 0 here). */
    uint64_t lag_ms;          /* ONCE_TAGGED: the lag allowance H, ms: an event up to H before
                                 the clock is judged and written at its own time (see
                                 "Event time"); at most 2 * span_ms, else ONCE_ERR_INVALID.
                                 0 (the default) = none.  Every other structure refuses a
                                 non-zero lag with ONCE_ERR_INVALID: it has no way to judge
                                 an event at any time but its clock's. */
} once_config;

/* Fill `config` with the defaults: capacity 1,000,000, error 0.001, random seed, a
 * maximum time jump of a day, a timer filter that grows (`dynamic`); and its `size`.
 *
 * once_config_init is a macro that passes the size of the caller's once_config, so a
 * program keeps the struct it was built with: a newer library takes an older, shorter
 * struct (the fields it lacks get their defaults), and an older library takes a newer
 * one whose fields it does not know are zero (otherwise once_create answers
 * ONCE_ERR_UNSUPPORTED).  A config not filled by once_config_init (its size below the
 * first version's) is refused with ONCE_ERR_INVALID.  once_config_init_sized writes
 * `size` bytes, at most, and nothing when size is below the first version's. */
ONCE_API void once_config_init_sized(once_config *config, size_t size, once_type type);
#define once_config_init(config, type) once_config_init_sized((config), sizeof *(config), (type))

ONCE_API once_status once_create(once_filter **out, const once_config *config);
/* A filter of `type` for `capacity` keys at `error`, the other fields once_config_init's.
 * A window needs its window, which these two calls cannot give: for ONCE_APBF, ONCE_APBBF
 * (once_config.window, keys) and ONCE_TAGGED, ONCE_TLBF, ONCE_TIMER (span_ms) they
 * answer ONCE_ERR_NO_WINDOW; build those with once_create. */
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
 * Time windows: the TLBF's slices have their own sizes and stamps, and the tagged
 * window's tables their own sizes and fingerprints, so neither union nor intersection
 * is offered (ONCE_ERR_UNSUPPORTED; ONCE_ERR_MISMATCH for filters of another geometry
 * or span).  Fixed-size timer filters of one geometry and span combine
 * timer by timer at the later of the two clocks: union keeps the later expiry,
 * intersection the earlier, so a key alive in both stays alive. */
ONCE_API once_status once_union(once_filter *dst, const once_filter *src);
ONCE_API once_status once_intersect(once_filter *dst, const once_filter *src);

/* Batches: the same operations over arrays of keys, hashed ahead and prefetched so
 * that several cache misses are in flight at once.  Results are exactly those of the
 * one-key calls made in array order (a duplicate later in the same batch is seen).
 * once_key is frozen: callers pass arrays of it, so its size is part of the ABI (a key
 * is its bytes and its event time, and no more). */
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
    uint32_t shards;       /* a sharded filter's P (once_advanced.h, once_create_sharded); 0
                              for one not sharded.  The counts above are all shards'. */

    /* Appended after the first version. */
    uint64_t lag_ms;       /* ONCE_TAGGED: the lag allowance H (once_config.lag_ms); 0: none */
    uint64_t sweep_owed;   /* ONCE_TIMER: expired-timer cells its sweep still owes, carried
                              over the writes after a pause (window/timer.c, "Sweeping") */
} once_stats;

/* once_get_stats is a macro that passes the size of the caller's once_stats: the library
 * fills as many of its fields as that struct has (so an older program's shorter struct
 * is never written past), and zeroes those it does not know (a newer program's fields
 * against an older library).  ONCE_ERR_INVALID for a size below the first version's. */
ONCE_API once_status once_get_stats_sized(const once_filter *filter, once_stats *stats,
                                          size_t size);
#define once_get_stats(filter, stats) once_get_stats_sized((filter), (stats), sizeof *(stats))
/* Time windows: the clock (latest event time accepted; *started false before the first
 * event) and the bound on how far ahead of it an event may be (0 = none).  The bound is
 * saved with the filter; setting it is how a loaded filter takes a new one.
 * ONCE_ERR_UNSUPPORTED for structures without a clock. */
ONCE_API once_status once_clock(const once_filter *filter, uint64_t *clock_ms, bool *started);
ONCE_API once_status once_set_max_time_jump(once_filter *filter, uint64_t max_time_jump_ms);
/* The bound in force (0: none; 0 too for structures without a clock). */
ONCE_API uint64_t once_max_time_jump(const once_filter *filter);
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
 * once_cardinality is frozen (an estimate, its interval and their confidence are the
 * whole answer): a new field would come with a new call.
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
 * dynamic block-partitioned, tagged, TLBF, timer), changed on a filter that exists, such as one just
 * loaded, which keeps the cap it was saved with until then; the new cap is saved with
 * it.  0 is the structure's default, as at creation.  ONCE_ERR_FULL, the cap unchanged,
 * when the filter already holds more than the new cap; ONCE_ERR_UNSUPPORTED for a
 * structure without one.  once_max_bytes reads it (0: none). */
ONCE_API once_status once_set_max_bytes(once_filter *filter, uint64_t max_bytes);
ONCE_API uint64_t once_max_bytes(const once_filter *filter);

/* Free a buffer the library returned (once_save_to_buffer, once_dbf_export_delta)
 * through the allocator that made it.  NULL is ignored. */
ONCE_API void once_free_buffer(void *buffer);

/* A seed from the kernel's random source. */
ONCE_API once_status once_random_seed(uint64_t *seed);

#ifdef __cplusplus
}
#endif
#endif /* ONCE_H */
