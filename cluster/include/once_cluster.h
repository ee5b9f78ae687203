/*
 * once_cluster.h - one filter sliced over a Redis Cluster, shared by many producer
 * processes (paper 000, sections 3 to 6, over the network): libonce-cluster.
 *
 * The filter is a sliced filter of once_sliced.h whose sites are keys of the cluster,
 * one a slice, each held by the module's SLICE.* type on the master that serves its
 * slot.  A producer opens the filter by name: the first one writes its layout (the
 * slicing, S and S', m, k, the seed, the window, the slices' keys, a random id) in the
 * key NAME:layout, once and atomically, and creates the slices; every later one reads
 * it and is refused, with the difference named, if its options contradict it.  Then
 * each batch of events costs one SLICE.RUN command a slice it touches, grouped by
 * node and pipelined, and decides every event as once_sliced_test_and_add_batch does
 * (docs/CLUSTER.md).
 *
 * A slice whose node cannot be reached while the node has a replica is held: its
 * commands wait (the batch blocks) while the cluster promotes the replica, and go to it
 * (failover_hold_ms, below).  A slice whose node cannot answer otherwise (down without
 * a replica, past the hold, restarted without its data) fails its requests: the
 * filter's failure policy decides the events (ONCE_FAILURE_REPORT: undecided, or the
 * threshold rule), the producer keeps running, and the stats say which slices failed
 * and what false positives and negatives that gives (once_sliced_stats).
 *
 * One producer is one thread: a once_cluster is not to be called from two threads at
 * once.  Many producers (threads with their own once_cluster, or processes) share a
 * filter through the cluster.
 *
 * No stable ABI: it is built on once_sliced.h and, like it, compiles only with
 * ONCE_USE_UNSTABLE_API defined (once.h, "The headers"); libonce-cluster is a static
 * library, to be linked with the libonce of the same version.
 *
 * Memory: the client allocates every block of its own through the library's allocator
 * (once_malloc, once_advanced.h), so an allocator installed with once_set_allocator
 * sees them as it sees a filter's, and refuses to change while a once_cluster is
 * open.  hiredis allocates its connections and replies with its own allocator.
 */
#ifndef ONCE_CLUSTER_H
#define ONCE_CLUSTER_H

#ifndef ONCE_USE_UNSTABLE_API
#error "once_cluster.h has no stable ABI: define ONCE_USE_UNSTABLE_API to use it, and \
link libonce-cluster statically or rebuild against each version (once.h alone is stable)"
#endif

#include "once_sliced.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct once_cluster once_cluster;

typedef struct once_cluster_config {
    const char *const *seeds; /* "host:port" of some nodes: the others are found */
    size_t seed_count;
    const char *name;         /* the filter's name: keys NAME:layout, NAME:slice:I:{TAG} */
    /* The filter: slicing, slices, parts, bits and hashes (or capacity and error),
     * seed, primitive, lookup, on_failure and threshold, window_ms and refresh, or
     * window_events, as once_sliced.h says.  A count window's clock is the key
     * NAME:count, shared by every producer (docs/CLUSTER.md, "Count windows"); not with
     * `local` or refresh.  Not used here: threads, concurrent, max_bytes, growth,
     * equal_timers, count_clock. */
    once_sliced_config sliced;
    uint32_t timeout_ms;      /* a node's connect and reply timeout (0: 1000) */
    /* Durability: after a batch that wrote, WAIT for `wait_replicas` replicas of every
     * node written (at most wait_timeout_ms: 0 for 100, and at most half timeout_ms, so
     * that a node without a replica is not taken for a dead one).  0: no WAIT.  Replication is
     * asynchronous, so a write a master acknowledged and lost in a failover before its
     * replica had it is lost to the filter (docs/CLUSTER.md, "Durability"). */
    uint32_t wait_replicas;
    uint32_t wait_timeout_ms;
    /* Two-level filtering (section 6): when not NULL, this producer's own filter (the
     * caller's, kept open while the cluster filter is; a window no longer than the
     * shared one's).  An event it holds is a repeat of one this producer sent, answered
     * duplicate with no message; the others go to the cluster and are then added to
     * it, but an undecided one (once_sliced_test_and_add_local_batch, the library's
     * two-level filtering, which this is). */
    once_filter *local;
    /* The most bytes a slice may take (0: 32 MiB).  Redis moves a key whole when its
     * slot moves, blocking its node meanwhile (a 63 MB key took up to 0.8 s), so a
     * filter's m sets its fewest slices: one whose slices pass this is refused
     * (ONCE_ERR_TOO_LARGE) with the slices it needs. */
    uint64_t max_slice_bytes;
    /*
     * A Bloom tree instead of a sliced filter (section 6), when not NULL: its internal
     * nodes and root are keys of the cluster, one a node, shared by every producer;
     * its leaves are the producers' own, in their processes (this producer's is
     * `leaf`), the local filter of the two-level scheme.  Dense without a window, an
     * event is test-and-set at the leaf, then at each ancestor in turn until one held
     * it (Algorithm 1): each is one atomic command on one key, so racing producers
     * deliver an event at most once without claims.  With a window (tree.window_ms, at
     * the producers' timestamps) or sparse, a walk tests and then sets, and claims
     * its nodes (once_tree_config.claims) for the same promise.  `sliced` is then not
     * used; no root slices, top-down testing or concurrent.  An event costs a message
     * a level it climbs (and one a level of its path to set a new one, with a window).
     * A node that cannot answer decides the event by sliced.on_failure: undecided
     * (REPORT), duplicate (THRESHOLD with threshold 0) or distinct (any other).
     */
    const once_tree_config *tree;
    uint64_t leaf;
    /*
     * Whole slices (once_sliced.h, "Whole slices"), with horizontal slicing and no count
     * window: when not 0, each slice is a filter of this structure (ONCE_TAGGED for a
     * time window, ONCE_SCALABLE or ONCE_BLOCKED for all time, ...) for its share of
     * sliced.capacity keys (capacity / S and four standard deviations of the share) at
     * sliced.error, and a key is test-and-added at its slice in one atomic step: the
     * filter takes the memory of one node's filter of those keys, racing producers need
     * no claims, and a batch is one round.  The layout is of version 3.  Of `sliced`,
     * only slicing, slices, capacity, error, seed, window_ms and on_failure with
     * threshold are used (an event its slice did not answer: undecided under
     * ONCE_FAILURE_REPORT; under THRESHOLD a duplicate with threshold 0, else new).
     * 0: slices of cells (paper 000's, any slicing).
     */
    once_type slice_filter;
    /*
     * The failover hold, in ms (0: ONCE_CLUSTER_DEFAULT_HOLD_MS; ONCE_CLUSTER_NO_HOLD:
     * none).  A command whose node cannot be reached (connection refused or lost, no
     * reply within timeout_ms, CLUSTERDOWN or TRYAGAIN past their short wait) while the
     * cluster's slot map lists a replica for its slot's master is held: the client
     * reads the map again, with a backoff, and sends it to whichever node serves the
     * slot then (the promoted replica), for up to this long from the node's first
     * failure.  The batch blocks meanwhile, and its events are decided with every slice
     * they need, not by the failure policy.  Past the hold, or at once for a slot whose
     * master has no replica, the command fails and the policy decides; a node past its
     * hold fails at once until it answers again (a master that stays dead costs one
     * hold, not one a batch).  A promotion takes the node timeout and an election
     * (2-3 s at cluster-node-timeout 1000, 7-8 s at 5000): the default covers both.
     */
    uint32_t failover_hold_ms;
    /* When not NULL, called from within a call of this filter (a batch holding, say)
     * when a node fails or answers again, or a hold starts, ends or runs out: the caller
     * may then read the filter's state (once_cluster_slice_at, once_cluster_node_at,
     * once_cluster_get_stats) to tell its user, but not run a batch.  It may be called
     * during once_cluster_open, before the filter is handed back. */
    void (*on_change)(void *context);
    void *change_context;
    /* Whole slices of ONCE_TAGGED: the lag allowance (once_config.lag_ms, at most twice
     * window_ms): an event up to lag_ms before its slice's clock, from a producer behind
     * the others in event time, is judged at its own time rather than at the clock.
     * 0: none.  Any other filter refuses it. */
    uint64_t lag_ms;
} once_cluster_config;

#define ONCE_CLUSTER_DEFAULT_HOLD_MS 15000u
#define ONCE_CLUSTER_NO_HOLD UINT32_MAX

/* A config of `name` over seeds, the sliced filter's fields at once_sliced's defaults
 * (horizontal slicing over `slices`, capacity 1,000,000 at 0.001). */
ONCE_API void once_cluster_config_init(once_cluster_config *config, const char *const *seeds,
                                       size_t seed_count, const char *name, uint32_t slices);

/* Open (or make) the filter.  On failure *out is NULL and `error` (when not NULL) says
 * why in a sentence: no node reachable, a layout that contradicts the config (naming
 * the fields), a slice that cannot be made.  ONCE_ERR_UNAVAILABLE for the network,
 * ONCE_ERR_MISMATCH for a layout, ONCE_ERR_INVALID for a config. */
ONCE_API once_status once_cluster_open(once_cluster **out, const once_cluster_config *config,
                                       char *error, size_t error_len);
/* Send now what the last batches left pending: the claims they won (released), and
 * the lines the failure policy printed while their slices failed (backfill: sent to
 * the slices that answer again; those that still cannot keep them).  Between batches;
 * once_cluster_close does it too. */
ONCE_API once_status once_cluster_flush(once_cluster *cluster);
ONCE_API void once_cluster_close(once_cluster *cluster);

/* Dedup keys[0 .. count-1] (their time_ms the producer timestamps, with a window):
 * seen[i] as once_sliced_test_and_add_batch answers it (0 new, 1 duplicate,
 * ONCE_SLICED_UNDECIDED), and its status. */
ONCE_API once_status once_cluster_test_and_add_batch(once_cluster *cluster, const once_key *keys,
                                                     size_t count, uint8_t *seen);

/* The sliced filter underneath (its stats, loads and site info; NULL for a tree); the
 * cluster filter keeps it. */
ONCE_API once_sliced *once_cluster_sliced(const once_cluster *cluster);

/* Per node (the cluster's masters as this producer knows them). */
typedef struct once_cluster_node {
    char address[64]; /* host:port */
    bool up;
    uint64_t messages;  /* commands sent to it */
    uint32_t slots;     /* slots it serves */
    uint32_t slices;    /* this filter's slices it last served */
    uint32_t replicas;  /* the most replicas the slot map lists for a slot of it */
    bool holding;       /* its slices' commands are held for a failover now */
    bool hold_expired;  /* a hold ran out: its commands fail at once until it answers */
    char why[64];       /* why it last failed, in words ("" if it never did) */
} once_cluster_node;

typedef struct once_cluster_stats {
    once_sliced_stats sliced; /* events, messages per event, fill, failed fraction, the
                                 live FP and FN estimates, ... */
    char layout_id[17];       /* the layout's random id, hex */
    uint32_t nodes;           /* masters known */
    uint32_t failed_slices;   /* slices whose last command failed */
    uint64_t missing_answers; /* commands answered NOSLICE: a node without its slice */
    uint64_t commands;        /* commands sent, retries and the client's own included */
    uint64_t moved, ask, retries, unreachable, reconnects, map_refreshes;
    uint64_t waits, waits_short; /* WAITs sent, and those that returned fewer replicas */
    uint64_t local_hits;      /* events the local filter answered, with no message */
    /* Failovers: commands held (each once a batch), of which answered after their
     * hold and given up when it ran out, and the ms batches spent holding. */
    uint64_t held, held_answered, held_expired, hold_ms;
    uint64_t failed_events;   /* events the failure policy decided (sliced.failed_events;
                                 a tree's failures) */
    uint64_t slice_failures;  /* times a slice failed after answering, over the run */
    bool claims;              /* racing producers claim events (vertical, diced, windows) */
    bool is_tree;             /* a Bloom tree: `tree` holds its stats, `sliced` nothing */
    once_tree_stats tree;
    /* Whole slices: their structure (0 for cells), the keys they hold as their last
     * answers said (their bytes in sliced.bytes), and their lag allowance. */
    once_type slice_filter;
    uint64_t slice_items;
    uint64_t lag_ms;
    /* Backfill: of the events the failure policy printed because their slice did not
     * answer, those still owed to it, those sent once it answered again, and those
     * past the bound of what a producer keeps owed or refused by the slice (a repeat
     * of one may be printed again).  Slices of cells count an event once a slice it
     * owes (its share of the k positions there). */
    uint64_t owed, backfilled, given_up;
} once_cluster_stats;

ONCE_API once_status once_cluster_get_stats(const once_cluster *cluster,
                                            once_cluster_stats *stats);
/* Node i, i below stats.nodes; ONCE_ERR_INVALID past them. */
ONCE_API once_status once_cluster_node_at(const once_cluster *cluster, uint32_t index,
                                          once_cluster_node *node);
/* Is slice i's last command failed?  Its key into `key` (room `room`) when not NULL. */
ONCE_API bool once_cluster_slice_failed(const once_cluster *cluster, uint32_t slice, char *key,
                                        size_t room);

/* Slice i (i below sliced.sites; a tree's nodes in the cluster, i below its internal
 * nodes' count): where it is and how it did. */
typedef struct once_cluster_slice {
    char key[256];
    int32_t node;       /* the node the slot map gives its slot now (once_cluster_node_at),
                           -1 for none */
    bool failed;        /* its last command failed */
    uint64_t failures;  /* times it failed after answering */
} once_cluster_slice;
/* ONCE_ERR_INVALID past the slices. */
ONCE_API once_status once_cluster_slice_at(const once_cluster *cluster, uint32_t slice,
                                           once_cluster_slice *out);

#ifdef __cplusplus
}
#endif
#endif /* ONCE_CLUSTER_H */
