/*
 * once_sliced.h - one logical filter sliced over sites, and Bloom trees (paper 000,
 * sections 3 to 6): the distributed filtering component of the paper, with its sites
 * in this process (memory or worker threads) or behind the caller's own once_site.
 * The conventions of once.h hold; the objects here are not once_filters.  Not a stable
 * tier: like once_advanced.h, it compiles only with ONCE_USE_UNSTABLE_API defined
 * (once.h, "The headers").
 */
#ifndef ONCE_SLICED_H
#define ONCE_SLICED_H

#ifndef ONCE_USE_UNSTABLE_API
#error "once_sliced.h has no stable ABI: define ONCE_USE_UNSTABLE_API to use it, and \
link libonce statically or rebuild against each version (once.h alone is stable)"
#endif

#include "once_advanced.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 *   Split (section 3.3, Proposition 2): k1 hashes of the key pick k1 distinct slices
 *   of the S, and k2 = k / k1 positions fall in each (k1 = 1 is horizontal slicing);
 *   its rate, (1 - e^(-k1 k2 n / m))^(k2 k1) for slices of m/S bits, is the unsliced
 *   filter's whatever the split (once_split_fpr).
 *   Every slicing keeps m as given or planned and spreads its bits over the slices,
 *   floor(m/S) or ceil(m/S) each (and a slice's over its parts the same way), so that
 *   a vertical filter is the standard filter of that m and a horizontal one S filters
 *   of m bits in all; v-h rounds m up to a multiple of S S' (under S S' bits more), so
 *   that its parts are equal.  A site's memory holds its longest slice or part,
 *   rounded up to whole words (slice_bits).
 *
 * Primitives (section 3): first-test-then-set (ONCE_FTTS: test the k bits, set them
 * only for an event found distinct) and per-bit test-and-set (ONCE_TAS: set them
 * always, the event is a duplicate when all were set before).  Lookups: parallel
 * (every touched slice is asked at once) or pipelined (slices in turn: FTTS stops
 * testing at the first with an unset bit; TAS test-and-sets up to it and only sets
 * after it, since every site must set its bits whatever the others found, so it sends
 * as many requests as parallel TAS; the paper's saving there is the replies, one
 * instead of one a site, which a count of requests does not show).  A message is one
 * request to one site.
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
    ONCE_SLICING_DICED_VH = 4, /* vertical slices, each horizontal over S' parts */
    ONCE_SLICING_SPLIT = 5     /* k1 slices a key, k / k1 bits in each (Proposition 2) */
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
     * and tests it alive at t_u (a memory site: within a window of its clock, above).
     * Ignored by sites without a window. */
    uint64_t time_ms;
    /* Out, when not NULL (count of them): each position's expiry in ms, 0 when not
     * alive, from the sub-filter that holds them all when all_set (equal timers). */
    uint64_t *expiries;
    /* Bounded growth (ONCE_GROWTH_BOUNDED): in, the generation a SET or TEST_AND_SET
     * sets the positions in; out, bit g mod 64 for every generation g whose sub-filter
     * held them all (before the set).  Other sites leave `generations` 0. */
    uint32_t generation;
    uint64_t generations;
    /* Racing producers (once_sliced_config.claims): `release`, when not 0, drops the
     * claim held on that value at the site, before anything else; `claim`, when not 0,
     * takes a claim on that value, atomically with the request: claim_lost (out) when
     * it was held already (by another producer deciding the same event).  A site keeps
     * a bounded table of claims, oldest evicted first when it is full, never saved. */
    uint64_t claim, release;
    bool claim_lost;
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
    ONCE_GROWTH_CARDINALITY = 2, /* its newest took the positions that reach it on average */
    ONCE_GROWTH_BOUNDED = 3      /* the filter opens a generation at every site (below) */
} once_growth;

/*
 * A site in process memory: `bits` cells (a multiple of 64); with window_ms a cell is a
 * timer, set to expire at t_u + w (the later of that and what it holds), alive for a
 * request of time t_u while it expires after t_u (so a late event is judged at its own
 * time, up to a window behind the latest time the site set at: an older one is judged
 * a window behind it and sets nothing).  A timer takes 8, 16 or 32 bits, the fewest
 * that keep expiries to the ms (windows up to 2^30 ms; a longer one ticks at w / 2^30
 * ms, and keeps an event up to a tick longer), and a bit for the sweep.  With growth
 * a list of sub-filters, a new one when the newest reaches
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

/*
 * A site of `bits` positions sliced vertically over `slices` inner sites (Definition
 * 2; section 6 slices "the root Bloom filter or the filter of any other overloaded
 * node in the tree" this way, Lemma 1): inner site i holds positions [ceil(i m / S),
 * ceil((i + 1) m / S)) of the m = bits, at offsets from 0, so it must hold at least
 * ceil(m / S) positions.  A request becomes one request per slice its positions touch
 * (same operation and time; the inner sites that start and wait work in parallel), and
 * is answered all set when every touched slice's positions are: the site decides every
 * request exactly as one site of m positions (Proposition 1).  A position past m is
 * never set.  Its status is the first failure of a slice (a slice that cannot be
 * reached fails the request; what the others did stays).  It takes the inner sites over
 * when created (its destroy destroys them) and leaves them to the caller on failure;
 * 1 <= slices <= min(bits, ONCE_MAX_SLICED_SITES), bits at most 2^40.  Run by one thread
 * at a time, as the sites it holds.
 */
ONCE_API once_status once_vertical_site_create(uint64_t bits, uint32_t slices,
                                               const once_site *inner, once_site *site);

/*
 * Slices kept apart
 *
 * A sliced filter whose sites are other processes (a Redis Cluster: the module's
 * SLICE.* keys, cluster/) keeps each slice where its site runs, as a filter of its own,
 * ONCE_SLICE: a memory site (above) that saves, loads, clears and describes as every
 * filter does (once_save, once_load, the chunked dumps, once_get_stats), and runs site
 * requests instead of keys; every key call on it answers ONCE_ERR_UNSUPPORTED.
 * once_create builds one from `bits` (a multiple of 64, at most ONCE_SLICE_MAX_BITS)
 * and `span_ms` (its window, 0 for none); once_slice_create from a memory site's
 * config, with growth by density or cardinality (not bounded, no budget, not shared).
 */
#define ONCE_SLICE_MAX_BITS (UINT64_C(1) << 32)

ONCE_API once_status once_slice_create(once_filter **out, const once_memory_site_config *config);
/* The config a slice was made with (ONCE_ERR_UNSUPPORTED for another structure). */
ONCE_API once_status once_slice_config(const once_filter *slice, once_memory_site_config *config);
/* What it holds: cells a sub-filter, cells set, sub-filters, bytes, sub-filters opened. */
ONCE_API once_status once_slice_describe(const once_filter *slice, once_site_info *info);
/* Run requests[0 .. count-1] in order, as the memory site does, after checking all of
 * them: ONCE_ERR_INVALID, with nothing run, for an op out of range, a position past
 * the slice or a time past ONCE_MAX_TIME_MS.  A set (SET, TEST_AND_SET) whose time is
 * more than the slice's max time jump (once_set_max_time_jump; a day by default) ahead
 * of its clock is not run: its status is ONCE_ERR_TIME.  `expiries` and `generation`
 * are not used (growth by generation is the in-process filter's). */
ONCE_API once_status once_slice_run(once_filter *slice, once_site_request *requests,
                                    size_t count);

/*
 * The wire form of a slice's requests and answers: one message carries a batch's
 * requests to one slice, one reply their answers (slice/wire.c has the layout).
 * Positions travel as 32 bits; a request holds at most 255 of them.
 */
/* Why a request failed, on the wire. */
enum { ONCE_SLICE_FAILED_FULL = 1, ONCE_SLICE_FAILED_TIME = 2, ONCE_SLICE_FAILED_OTHER = 3 };

/* Bytes of the requests' message; `timed`: each carries its time_ms. */
ONCE_API size_t once_slice_requests_size(const once_site_request *requests, size_t count,
                                         bool timed);
/* ONCE_ERR_INVALID for a position past 2^32 - 1, more than 255 positions, or room short
 * of once_slice_requests_size. */
ONCE_API once_status once_slice_requests_encode(const once_site_request *requests, size_t count,
                                                bool timed, uint8_t *out, size_t room,
                                                size_t *written);
/* Check a message and count its requests and positions (ONCE_ERR_CORRUPT for anything
 * malformed), so that the caller can make room for them. */
ONCE_API once_status once_slice_requests_count(const uint8_t *in, size_t len, size_t *requests,
                                               size_t *positions);
/* Fill requests (room for the count) and positions (room for theirs; the requests
 * point into it); the other fields are zero. */
ONCE_API once_status once_slice_requests_decode(const uint8_t *in, size_t len,
                                                once_site_request *requests,
                                                uint64_t *positions);
/* The answers (all_set, status and claim_lost of each request) as a reply, with what
 * the slice holds after them (`site`: its cells, cells set and sub-filters; NULL:
 * zeros), and back (`site` NULL: not wanted): a failure comes back as ONCE_ERR_FULL,
 * ONCE_ERR_TIME or ONCE_ERR_UNAVAILABLE. */
ONCE_API size_t once_slice_answers_size(const once_site_request *requests, size_t count);
ONCE_API once_status once_slice_answers_encode(const once_site_request *requests, size_t count,
                                               const once_site_info *site, uint8_t *out,
                                               size_t room, size_t *written);
ONCE_API once_status once_slice_answers_decode(const uint8_t *in, size_t len,
                                               once_site_request *requests, size_t count,
                                               once_site_info *site);

/*
 * Whole slices.  A horizontal slice (Definition 1) is a filter for the keys that hash to
 * it, so it may be a filter of any structure, not only bits: over a cluster each
 * slice is then a whole filter of the library (a tagged window for a time window, a
 * blocked or scalable filter for all time), in the memory one node would take for its
 * keys.  A producer picks a key's slice by once_shard_of on its digest (as a sharded
 * filter picks its shard, so S whole slices answer as once_create_sharded's S shards
 * of the structure) and sends each slice its events' digests, with their times, as one
 * message; the slice test-and-adds them in order (once_slice_events_run) and answers a
 * bit an event.
 */
typedef struct once_slice_event {
    once_digest digest;
    uint64_t time_ms;    /* the event's time (time windows; 0 otherwise) */
    bool seen;           /* out: a duplicate */
    once_status status;  /* out: ONCE_OK, or why it was not decided (ONCE_ERR_FULL,
                            ONCE_ERR_TIME, ONCE_ERR_UNAVAILABLE) */
} once_slice_event;

/* What a whole slice holds after a batch, as its answer carries it. */
typedef struct once_slice_held {
    uint64_t bytes; /* once_bytes */
    uint64_t items; /* once_items */
} once_slice_held;

/* Test-and-add events[0 .. count-1] in order, each with its own status: one refused
 * (ONCE_ERR_FULL at the filter's memory cap, ONCE_ERR_TIME for a time its clock
 * refuses) changes nothing and the others run on around it.  ONCE_ERR_INVALID for a
 * time past ONCE_MAX_TIME_MS, checked for all before any runs; with `held` not NULL,
 * what the filter holds after. */
ONCE_API once_status once_slice_events_run(once_filter *filter, once_slice_event *events,
                                           size_t count, once_slice_held *held);
/* Stamp events[0 .. count-1] in order: each is added at its time (once_add_digest),
 * which a time window takes as a delivery then, a key it holds keeping the later of
 * its own time and this one (window/tagged.c, "Time").  A count window over whole
 * slices stamps so the lines a test-and-add found new, once the shared count gave
 * them their places (docs/CLUSTER.md, "Count windows").  Statuses and `held` as
 * once_slice_events_run's; `seen` is false. */
ONCE_API once_status once_slice_events_stamp(once_filter *filter, once_slice_event *events,
                                             size_t count, once_slice_held *held);
/* The events as one message (`timed`: with their times), and back.  The decoder checks
 * the whole message first: ONCE_ERR_CORRUPT for anything malformed. */
ONCE_API size_t once_slice_events_size(size_t count, bool timed);
ONCE_API once_status once_slice_events_encode(const once_slice_event *events, size_t count,
                                              bool timed, uint8_t *out, size_t room,
                                              size_t *written);
ONCE_API once_status once_slice_events_count(const uint8_t *in, size_t len, size_t *count);
ONCE_API once_status once_slice_events_decode(const uint8_t *in, size_t len,
                                              once_slice_event *events);
/* Their answers (seen and status of each) with what the slice holds, and back. */
ONCE_API size_t once_slice_verdicts_size(const once_slice_event *events, size_t count);
ONCE_API once_status once_slice_verdicts_encode(const once_slice_event *events, size_t count,
                                                const once_slice_held *held, uint8_t *out,
                                                size_t room, size_t *written);
ONCE_API once_status once_slice_verdicts_decode(const uint8_t *in, size_t len,
                                                once_slice_event *events, size_t count,
                                                once_slice_held *held);

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

/*
 * The count of a count window that racing producers share (once_sliced_config
 * .count_clock): the events delivered by all of them.  `read` gives the count now;
 * `reserve` adds n to it and gives the count before, so that the n events a producer
 * has just found distinct take the stamps first .. first + n - 1, each its own place
 * in the common count.  A clock that answers anything but ONCE_OK fails the events it
 * was asked for as an unreachable site would (on_failure; a distinct event is then
 * not set, having no stamp).  Over a cluster it is a key of its own (once_cluster.h).
 *
 * With claims a batch tests all its events at the count read before it and stamps the
 * distinct ones after, so an event is kept while fewer than N others were delivered
 * after it (never less: no false negative) and forgotten by the time N + d were, d
 * the deliveries that happened between the read and its test: the batch's own earlier
 * ones (a batch takes at most max(1, N / 16) events for that) and other producers'
 * meanwhile.  Within a batch a repeat of an event found distinct is a duplicate.
 */
typedef struct once_count_clock {
    void *context;
    once_status (*read)(void *context, uint64_t *count);
    once_status (*reserve)(void *context, uint64_t n, uint64_t *first);
} once_count_clock;

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
     * reaches it on average.  That bounds each sub-filter, not the rate (a site answers
     * present when any of its sub-filters holds the positions).  ONCE_GROWTH_BOUNDED
     * grows the filter as a whole, in generations: a set goes to the filter's current
     * generation at every site, an event is present when one generation holds all its
     * positions at every site asked, and a generation opened while j others are alive
     * takes events until its rate reaches 6 P / (pi^2 (j + 1)^2), so that the rate
     * stays under P = `error` (or the rate at `capacity`) through any burst, for more
     * memory (a generation is a filter of m bits; the first takes events to 0.61 P).
     * Not with `concurrent` or `threads` (generations change between events); a batch
     * is its one-key calls in turn. */
    once_growth growth;
    /* ONCE_SLICING_SPLIT only (0 otherwise): k1, the slices a key's bits go to, at most
     * S and a divisor of k. */
    uint32_t slice_hashes;
    /*
     * Racing producers (section 6: sites shared by producers that do not coordinate
     * otherwise, as over a cluster): when two producers decide the same event at
     * once, each test-and-set of a slice is atomic, but an event of several slices
     * can find an unset bit for each producer in a different slice, and be delivered
     * by both.  With claims, an event is tested first, its home site (the first it
     * touches) taking a claim on it with the test; a producer that finds the claim
     * held answers duplicate (another is deciding the same event now); the holder
     * decides from the tests, sets a distinct event's bits, and only then releases
     * the claim (in a batch, with its next batch's tests, or once_sliced_flush).  So
     * racing producers deliver an event at most once between them, for one message
     * round more a batch.  Not with concurrent, refresh, equal timers or bounded
     * growth.  A count window with claims runs on `count_clock` (below).
     */
    bool claims;
    /* The events a batch's round of messages carries (0: 256; at most 4096): a batch
     * call of more events sends a round for each such many.  Sites apart (a cluster's)
     * gain from more: each round costs a message a site it touches and a round trip. */
    uint32_t batch_events;
    /* A count window with claims: the clock its producers share (once_count_clock), or
     * NULL for the filter's own count (one producer, or producers in one process that
     * are given one clock). */
    const struct once_count_clock *count_clock;
} once_sliced_config;

typedef struct once_sliced once_sliced;

typedef struct once_sliced_stats {
    once_slicing slicing;
    uint64_t bits;            /* m */
    uint64_t slice_bits;      /* bits a site's memory holds: its longest slice or part,
                                 ceil(m / (S S')) at most, rounded up to words */
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
    uint32_t slice_hashes;    /* split slicing's k1 (1 for the others) */
    uint64_t local_hits;      /* events a producer's local filter answered, with no
                                 message (once_sliced_test_and_add_local; counted in
                                 `events`) */
    uint64_t count;           /* a count window: the count as this producer last had it */
    uint64_t clock_failures;  /* a count window's clock reads and reserves that failed */
    uint64_t failed_events;   /* events decided (or, under ONCE_FAILURE_REPORT, left
                                 undecided) with a site that could not be reached: the
                                 failure policy's, whatever it answered */
} once_sliced_stats;

/* "horizontal", "vertical", "diced h-v" or "diced v-h" ("unknown" for another value). */
ONCE_API const char *once_slicing_name(once_slicing slicing);

/* `sites`, when not NULL, holds S S' sites, each of slice_bits bits
 * (once_sliced_geometry tells them before creation); the filter takes them over when
 * it is created (once_sliced_free destroys them), and leaves them to the caller when
 * creation fails. */
ONCE_API once_status once_sliced_geometry(const once_sliced_config *config, uint64_t *bits,
                                          uint32_t *hashes, uint64_t *slice_bits);
/* The bytes the memory sites' first sub-filters take in all (what max_bytes must
 * cover): a site's slice_bits cells each, with a window a timer (the narrowest of 8,
 * 16 and 32 bits that keeps the window to the ms) and the sweep's bit, a bit
 * otherwise. */
ONCE_API once_status once_sliced_first_bytes(const once_sliced_config *config,
                                             uint64_t *bytes);
ONCE_API once_status once_sliced_create(once_sliced **out, const once_sliced_config *config,
                                        const once_site *sites);
ONCE_API void once_sliced_free(once_sliced *filter);
/* Dedup through the slices: *seen = duplicate; a distinct event is inserted.  time_ms
 * is the event's producer timestamp t_u (windows; ignored otherwise). */
ONCE_API once_status once_sliced_test_and_add(once_sliced *filter, const void *key, size_t len,
                                              uint64_t time_ms, bool *seen);
/*
 * Two-level filtering (section 6, its opening): a local filter at each producer, in
 * front of the shared one.  The event is first queried in `local`, the producer's own
 * filter (any once_filter, one a producer; a window no longer than the shared one's
 * for a windowed filter): there it is a repeat of an event this producer sent before,
 * answered duplicate with no message.  Otherwise it goes to the shared filter, as
 * once_sliced_test_and_add, and is then added to `local`, whatever the answer (the
 * producer has now sent it).  Repeats of a producer's own events cost no message; the
 * local filter's false positives add to the shared one's (an event it wrongly holds
 * is answered duplicate and never reaches the sites), and it has no false negatives
 * for what it holds.  *seen is the answer even when the local add then fails; the
 * status says so (the local filter's error).
 */
ONCE_API once_status once_sliced_test_and_add_local(once_sliced *filter, once_filter *local,
                                                    const void *key, size_t len,
                                                    uint64_t time_ms, bool *seen);
/* The same over keys[0 .. count-1], as one-key calls in array order would answer: the
 * keys `local` holds are answered here, the others go to the shared filter in one
 * batch (once_sliced_test_and_add_batch, its seen[] values) and are added to `local`
 * when decided (not an undecided event, ONCE_SLICED_UNDECIDED: sent again, it must
 * reach the shared filter again).  Within a batch, a repeat of a key the local filter
 * did not hold is answered by the shared filter. */
ONCE_API once_status once_sliced_test_and_add_local_batch(once_sliced *filter,
                                                          once_filter *local,
                                                          const once_key *keys, size_t count,
                                                          uint8_t *seen);
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
/*
 * A time window's clock: the latest time_ms of an event offered to the filter by
 * once_sliced_test_and_add or once_sliced_test_and_add_batch (directly, or through
 * once_sliced_test_and_add_local for the events the local filter did not hold), in
 * *clock_ms, and whether there was one in *started.  The sites keep their own clocks;
 * this is the stream's, for a caller that judges an event time before it offers it,
 * by the rule of once_time_step from here: the filter itself refuses no time but one
 * past ONCE_MAX_TIME_MS.  Queries never move it.  ONCE_ERR_UNSUPPORTED without a time
 * window (a count window's clock is its count of events).
 */
ONCE_API once_status once_sliced_clock(const once_sliced *filter, uint64_t *clock_ms,
                                       bool *started);
/* Claims: release the claims this filter still holds (its last batch's), as the next
 * batch would; a producer that stops calls it before once_sliced_free. */
ONCE_API once_status once_sliced_flush(once_sliced *filter);
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
 * parallel; a wait for a batch the owner has not begun runs it on the waiting thread
 * instead.  A site so runs on one thread at a time, not always the same one.
 * Destroying it destroys the site it owns.  The workers stop when the last of their
 * sites is destroyed.  On failure the sites are left as they were. */
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
 * Windows (section 6: "Bloom trees can also be enhanced with timers to support sliding
 * windows"): with window_ms every node is a windowed site (memory nodes are
 * once_memory_site_config.window_ms sites): a node sets an event's positions to expire
 * at t_u + w and answers a request at the event's own time t_u, so an event is a
 * duplicate exactly when its key was delivered (answered distinct) less than w before
 * (Definition 4), but for false positives.  Calls then give the event's time
 * (once_tree_test_and_add_at).  Both modes are first-test-then-set (Algorithm 2): a
 * duplicate must not set timers, since a set restarts the key's window at the nodes
 * it reaches; test-and-set would make every repeat a fresh delivery there, and the
 * key would stay a duplicate for as long as it kept coming.  So with a window the
 * dense tree tests from its leaf up and sets only a distinct event's path, root
 * first, as the sparse one does: its leaves no longer take a duplicate found above
 * them (the locality of Table 1 is lost, the decisions are the same, Proposition 3).
 * Every timer at a node then expires no later than its parent's, and the tree
 * decides every event (in time order) as one windowed filter of the same m, k and
 * seed: its root.
 *
 * Nodes: a node is a site (once_site above), so it may live anywhere; with sites NULL
 * the tree holds its nodes in process memory.  A node that cannot be reached when the
 * event needs it fails the call with ONCE_ERR_UNAVAILABLE, nothing decided; what the
 * nodes asked before it were told stays (dense: the event's bits at the nodes below
 * it; sparse: at the nodes above it when the failure comes while setting), so a retry
 * may answer duplicate.
 *
 * Threads (section 6, "Concurrency"): without `concurrent`, calls on one tree are made
 * by one thread at a time.  With it, several threads may call at once, and with every
 * node reachable an event is answered distinct at most once however many threads
 * offer it.  Locks are per node: an operation locks each node of its path before it
 * asks it, leaf first, so that every operation takes its locks in one order (by
 * decreasing node index) and none waits for another in a circle.  First-test-then-set
 * (sparse trees, and any tree with a window) keeps the nodes it tested until its sets
 * are done, so a second producer of the event waits at the first node their paths
 * share and then finds it set; a dense test-and-set needs a node only while it asks
 * it, as a node answers one test-and-set at a time.  Producers at different leaves
 * run at once until their paths meet, and events found near their leaves never wait
 * on the root.  With top-down testing the check tests nodes below the path, against
 * that order, so such a tree holds one lock for the whole operation.
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
    bool concurrent;          /* several threads call at once: per-node locks (see
                                 "Threads" above), so an event is answered distinct at
                                 most once */
    uint64_t window_ms;       /* keep an event for this long after its time t_u (see
                                 "Windows" above); 0 = all time */
    uint32_t root_slices;     /* sites NULL: the root is a vertical site over this many
                                 memory sites (once_vertical_site_create; 0 or 1 = one
                                 site), at most min(m, ONCE_MAX_SLICED_SITES); the tree
                                 decides as with one root (Lemma 1) */
    /*
     * Racing producers (nodes shared by producers that do not coordinate otherwise, as
     * over a cluster; once_sliced_config.claims for the sliced filters).  A dense tree
     * without a window needs nothing: each node's test-and-set is atomic, and two
     * producers of an event meet at the first node their paths share.  A walk that
     * first tests and then sets (a window, or sparse) could be passed by both; with
     * claims each of its tests takes a claim on the event at its node, a producer
     * that finds one held answers duplicate (another is deciding the event now), and
     * the holder drops each claim with its set at that node (a duplicate: after its
     * walk).  So a producer that tests a node after the claim is gone finds the
     * event's bits there.  Not with concurrent or top-down testing.
     */
    bool claims;
} once_tree_config;

typedef struct once_tree once_tree;

/* Per level, indexed by level (0 = the root, levels - 1 = the leaves); entries past
 * `levels` are 0. */
typedef struct once_tree_stats {
    uint64_t bits;            /* m of every node */
    uint32_t hashes, levels, fanout;
    uint64_t nodes, leaves;
    uint64_t window_ms;       /* the window, or 0 */
    uint32_t root_slices;     /* the root's vertical slices (1: not sliced) */
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
 * distinct event is inserted as the mode says.  A tree with a window needs the event's
 * time: this call refuses it (ONCE_ERR_INVALID). */
ONCE_API once_status once_tree_test_and_add(once_tree *tree, uint64_t leaf, const void *key,
                                            size_t len, bool *seen);
/* The same for an event of producer timestamp time_ms, t_u (ms, at most
 * ONCE_MAX_TIME_MS, else ONCE_ERR_TIME; windows; ignored without one). */
ONCE_API once_status once_tree_test_and_add_at(once_tree *tree, uint64_t leaf, const void *key,
                                               size_t len, uint64_t time_ms, bool *seen);
ONCE_API once_status once_tree_get_stats(const once_tree *tree, once_tree_stats *stats);

#ifdef __cplusplus
}
#endif
#endif /* ONCE_SLICED_H */
