/*
 * once_advanced.h - the calls beyond one filter's life (once.h): a key's digest and its
 * cells, for callers that hash once and route keys to threads or nodes; the clock as a
 * step; the saved form in bounded chunks, for hosts that cannot hold or send it whole;
 * the calls of one structure (block-partitioned filters, scalable filters, DBFs and
 * their incremental updates); sharded filters and their executor; the allocator and the
 * SIMD path.  The conventions and the threads rules are once.h's.
 *
 * Not a stable tier (once.h, "The headers"): its calls and structs change with the
 * library, so it compiles only with ONCE_USE_UNSTABLE_API defined, by which a program
 * accepts being built for this exact version of libonce.
 */
#ifndef ONCE_ADVANCED_H
#define ONCE_ADVANCED_H

#ifndef ONCE_USE_UNSTABLE_API
#error "once_advanced.h has no stable ABI: define ONCE_USE_UNSTABLE_API to use it, and \
link libonce statically or rebuild against each version (once.h alone is stable)"
#endif

#include "once.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ the query's reads */

/* The query, also reporting how many memory segments it read: slices or blocks for the
 * age-partitioned windows (their skip-back search stops early), otherwise
 * ONCE_ERR_UNSUPPORTED.  For capacity planning and for checking the access model. */
ONCE_API once_status once_query_reads(const once_filter *filter, const void *key, size_t len,
                                      uint64_t now_ms, bool *present, uint32_t *reads);

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

/* Can `filter` take `keys` more insertions at times up to until_ms without refusing one
 * for its memory (ONCE_ERR_FULL)?  false when unsure (near its cap, or a structure that
 * cannot tell): a caller that must apply a batch whole keeps a copy to go back to. */
ONCE_API bool once_can_take(const once_filter *filter, uint64_t keys, uint64_t until_ms);

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
/* once_test_and_add_digest_batch that also says, in *done, how many digests took effect
 * (all of them, or those before the one whose operation failed), as
 * once_test_and_add_batch_partial does for keys. */
ONCE_API once_status once_test_and_add_digest_batch_partial(once_filter *filter,
                                                            const once_digest *digests,
                                                            const uint64_t *times_ms,
                                                            size_t count, uint8_t *seen,
                                                            size_t *done);

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

/* ------------------------------------------------------------------ clock */

/* The clock rule as a step, for a caller that batches events and sets aside the ones a
 * write would refuse (a batch stops at such a key): would `filter` take an event at
 * time_ms with its clock at *clock_ms (*started)?  If so, *clock_ms and *started become
 * what the filter's would after it.  Start from once_clock.  False for a filter
 * without a clock. */
ONCE_API bool once_clock_step(const once_filter *filter, uint64_t *clock_ms, bool *started,
                              uint64_t time_ms);
/* The same rule for a caller that keeps a clock of its own, with no filter that has one
 * (the CLI's, over a sliced filter whose sites keep theirs): an event at time_ms is
 * taken unless it is past ONCE_MAX_TIME_MS or, once the clock has started, more than
 * max_time_jump_ms (0: any) past *clock_ms; if taken, the clock moves as above. */
ONCE_API bool once_time_step(uint64_t max_time_jump_ms, uint64_t *clock_ms, bool *started,
                             uint64_t time_ms);

/* ------------------------------------------------------------------ chunks */

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

/*
 * Memory through the allocator in use, for code built on the library that keeps its own
 * state (libonce-cluster, a host's wrapper), so that the allocator a host installs
 * covers it too.  They behave as the C library's calls (NULL on failure, once_realloc
 * leaves the block as it was when it fails, a size of 0 asks for 1 byte; once_calloc
 * refuses a count and size whose product overflows), and a block they return counts as
 * alive until once_free_memory frees it, as the library's own do: once_set_allocator
 * refuses a change meanwhile.  A block from them is freed with once_free_memory (or
 * once_free_buffer, the same call), never with free().
 */
ONCE_API void *once_malloc(size_t size);
ONCE_API void *once_calloc(size_t count, size_t size);
ONCE_API void *once_realloc(void *block, size_t size);
ONCE_API void once_free_memory(void *block);

/* ------------------------------------------------------------- utilities */

/* Which SIMD path the blocked filter uses on this CPU: "avx512", "avx2" or "scalar". */
ONCE_API const char *once_simd_path(void);
/* Force a path (for tests that compare paths): "avx512", "avx2", "scalar", or NULL to
 * pick the best again.  Refused (ONCE_ERR_UNSUPPORTED) if the CPU lacks it. */
ONCE_API once_status once_force_simd_path(const char *name);

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

/* --------------------------------------------------------- sharded filters */

/*
 * Sharded filters: one filter in P shards, for answering a stream's keys on several
 * threads.  once_create_sharded builds P filters of config->type, each for
 * capacity / P keys (rounded up) at config->error and a P-th of config->max_bytes (of
 * the structure's default cap with 0), under one seed; a key goes to one shard, chosen
 * from its digest, so the filter's false-positive rate is a shard's.  The result is a
 * filter like any: every call, saving and loading take it, once_get_type and
 * once_get_stats report config->type (stats.shards = P), and its answers are those of
 * one-key calls in order.  Time windows keep one clock for all shards (once.h, "Event
 * time"); a late event is written at the clock, as one window writes it.  P from 1 to
 * ONCE_MAX_SHARDS; count windows, slices and explicit geometry (config.bits) are
 * refused with ONCE_ERR_UNSUPPORTED.  Union and intersection are not offered.
 *
 * An executor runs a write batch's shards side by side: once_set_executor gives the
 * filter one (NULL: none), kept until changed and not saved.  A batch of insertions or
 * test-and-adds then gathers each round of up to 4096 keys by shard and calls
 * executor->run(context, task, task_context, n), which must call task(task_context, i)
 * once for each i in [0, n), on any threads, and return when all have returned; each
 * task answers one shard's keys in their order.  The answers are the same with any executor or none.  A write batch
 * runs key by key on the calling thread instead while a shard might refuse a key for
 * memory (near its cap), so that a refused key leaves no later key written.  Queries
 * run on the calling thread, as read-only calls (once.h, "Threads"); the executor is
 * called by one write at a time.
 * once_shard_count: P, or 1 for a filter not sharded (0 for NULL).  once_shard_of: the
 * shard of P (any P >= 1) a digest goes to, for a caller that
 * spreads keys as a sharded filter does (a cluster's whole slices, once_sliced.h).
 */
#define ONCE_MAX_SHARDS 256u

typedef void (*once_task_fn)(void *task_context, size_t index);
typedef struct once_executor {
    void (*run)(void *context, once_task_fn task, void *task_context, size_t count);
    void *context;
} once_executor;

ONCE_API once_status once_create_sharded(once_filter **out, const once_config *config,
                                         uint32_t shards);
ONCE_API uint32_t once_shard_count(const once_filter *filter);
ONCE_API uint32_t once_shard_of(const once_digest *digest, uint32_t shards);
ONCE_API once_status once_set_executor(once_filter *filter, const once_executor *executor);

#ifdef __cplusplus
}
#endif
#endif /* ONCE_ADVANCED_H */
