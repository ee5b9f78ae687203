/*
 * cluster/routing.h - commands to a Redis Cluster, each routed to the master that
 * serves its key's hash slot (an internal header of cluster/, not installed).
 *
 * A client holds the cluster's slot map (CLUSTER SLOTS: each slot's master, and how many
 * replicas it has) and one blocking hiredis connection per master.  cluster_client_run
 * takes a batch of commands, sends each master its share as one pipeline (every
 * master's commands are written before any reply is read, so the masters work in
 * parallel), follows MOVED and ASK redirections, waits out TRYAGAIN and CLUSTERDOWN
 * briefly, and hands every command back either with its reply (CLUSTER_REPLIED) or as
 * CLUSTER_UNREACHABLE: none is dropped.  A master that fails is marked down and not
 * tried again until a backoff passes, and the map is read again from another node, so
 * that the slots of a master replaced by its replica (a failover) follow it.
 *
 * With hold_ms, a command whose node cannot be reached and whose slot's master has a
 * replica is held rather than given back: the run keeps it, reads the map again with a
 * backoff and sends it to whichever node then serves the slot (the promoted replica),
 * for up to hold_ms from the node's first failure.  The run blocks meanwhile; that is
 * the point: the caller gets answers, not failures, across a failover.  Past the hold,
 * or at once for a slot without a replica, the command is UNREACHABLE as above, so a
 * producer over a dead master without replicas keeps its pace on the other masters.
 *
 * Threads: a client belongs to one thread at a time (it holds its connections and
 * map unlocked); clients share nothing, so each thread may have its own.
 *
 * Only the hiredis calls that 0.14 and 1.x share are used (blocking connections, RESP2).
 */
#ifndef ONCE_DIST_CLUSTER_ROUTING_H
#define ONCE_DIST_CLUSTER_ROUTING_H

#include <hiredis/hiredis.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hash slots of a Redis Cluster. */
#define CLUSTER_SLOT_COUNT 16384u

typedef struct cluster_options {
    uint32_t timeout_ms;    /* connect and reply timeout (0: 1000) */
    uint32_t max_redirects; /* MOVED/ASK hops one command may take (0: 5) */
    uint32_t retry_ms;      /* first backoff before a down node is tried again (0: 100),
                               doubling up to max_retry_ms */
    uint32_t max_retry_ms;  /* (0: 2000) */
    /* The clock the backoff is read on, in ms (NULL: CLOCK_MONOTONIC).  The short
     * waits on TRYAGAIN and CLUSTERDOWN are real time whatever this clock says. */
    uint64_t (*now_ms)(void *context);
    void *clock_context;
    /* The failover hold (above), in real ms from a node's first failure; 0: no hold. */
    uint32_t hold_ms;
    /* When not NULL, called from within a run when a node fails or answers again, or a
     * hold starts, ends in a reply or runs out: the caller may read the client's state
     * (cluster_node_info_at, cluster_slot_node), not run commands. */
    void (*on_change)(void *context);
    void *change_context;
} cluster_options;

typedef enum cluster_status { CLUSTER_REPLIED = 0, CLUSTER_UNREACHABLE = 1 } cluster_status;

typedef struct cluster_command {
    int argc;                  /* in: > 0 */
    const char *const *argv;   /* in: the arguments, the command's name first */
    const size_t *argv_len;    /* in: their lengths (binary safe) */
    int key_index;             /* in: the argument whose hash slot routes it (1 for most
                                  commands); outside [0, argc) the command has no key and
                                  goes to any reachable master */
    const char *route_key;     /* in, with key_index outside the arguments: when not NULL,
                                  the command goes to the master of this key's slot (a
                                  WAIT for the writes made to that key's node) */
    size_t route_key_len;
    cluster_status status;     /* out */
    redisReply *reply;         /* out, when REPLIED: the final reply, possibly an error
                                  reply other than the redirections; the caller frees it
                                  with freeReplyObject.  NULL when UNREACHABLE */
    int node;                  /* out: the index of the node that answered or failed
                                  (cluster_node_info_at), -1 if none was known */
} cluster_command;

typedef struct cluster_client cluster_client;

/* A client over the cluster that one of `seeds` ("host:port") belongs to: the first
 * seed that answers CLUSTER SLOTS gives the map.  NULL when none does or memory runs
 * out, with the reasons in `error` (if error_len > 0). */
cluster_client *cluster_client_connect(const char *const *seeds, size_t count,
                                       const cluster_options *options, char *error,
                                       size_t error_len);
/* Close every connection and free the client (NULL: nothing). */
void cluster_client_free(cluster_client *c);

/* Run the commands: grouped by the node that serves each key's slot, pipelined (every
 * node's commands appended and flushed before any reply is read, so nodes work in
 * parallel), redirections followed; commands on the same key run in the order given.
 * Every command ends CLUSTER_REPLIED or CLUSTER_UNREACHABLE.  A command whose node
 * failed after it was sent may have run there and is sent again to the slot's new
 * master, if the map names one: delivery is at least once. */
void cluster_client_run(cluster_client *c, cluster_command *commands, size_t count);

/* The hash slot of a key, as Redis Cluster computes it: CRC16 (XMODEM) of the key, or of
 * its hash tag (the bytes between the first '{' and the first '}' after it, when there
 * are any), mod 16384. */
uint32_t cluster_key_slot(const void *key, size_t len);

/* Counts since the client was made. */
typedef struct cluster_stats {
    uint64_t messages;      /* commands written to nodes, the client's own (ASKING,
                               CLUSTER SLOTS) and every resend included */
    uint64_t replies;       /* replies read */
    uint64_t moved, ask, tryagain, clusterdown; /* those replies */
    uint64_t unreachable;   /* commands given back CLUSTER_UNREACHABLE */
    uint64_t reconnects;    /* connection attempts to a node after its first */
    uint64_t map_refreshes; /* slot maps read (CLUSTER SLOTS applied) */
    uint64_t held;          /* commands held for a failover (each once a run) */
    uint64_t held_replied;  /* of which answered after the hold */
    uint64_t held_expired;  /* of which given back UNREACHABLE when the hold ran out */
    uint64_t hold_ms;       /* real ms runs spent holding: from a run's first hold to its end */
} cluster_stats;
void cluster_client_stats(const cluster_client *c, cluster_stats *out);

/* The nodes the client has known, by index: a node keeps its index for the client's
 * life, new ones are appended. */
typedef struct cluster_node_info {
    char address[64]; /* "host:port" (cut to fit) */
    bool up;          /* not marked down */
    uint64_t messages;
    uint32_t slots;   /* slots the map gives it */
    uint32_t replicas; /* the most replicas the map lists for a slot of it */
    bool holding;     /* its commands are being held for a failover now */
    bool hold_expired; /* a hold for it ran out: its commands fail at once until it answers */
    char why[64];     /* why it last failed ("" if it never did) */
} cluster_node_info;
size_t cluster_node_count(const cluster_client *c);
bool cluster_node_info_at(const cluster_client *c, size_t index, cluster_node_info *out);
/* The node the map gives a slot to, or -1. */
int cluster_slot_node(const cluster_client *c, uint32_t slot);

#endif
