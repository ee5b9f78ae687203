/*
 * cluster/remote_site.h - slices in a Redis Cluster as sites of a sliced filter
 * (remote_site.c).
 */
#ifndef ONCE_DIST_REMOTE_SITE_H
#define ONCE_DIST_REMOTE_SITE_H

#include "routing.h"

#include "once_sliced.h"

/* What the sites of one filter share: the client, and the round of SLICE.RUN commands
 * their started batches make, sent together by the first wait. */
typedef struct remote_round remote_round;

remote_round *remote_round_new(cluster_client *client);
/* Backfill (remote_site.c): when on, the sets a failed command carried are owed to its
 * site and sent ahead of its next command.  On when the failure policy prints. */
void remote_round_set_backfill(remote_round *round, bool on);
/* After every site of the round is destroyed. */
void remote_round_free(remote_round *round);

/* How a remote site is doing, for stats. */
typedef struct remote_site_info {
    uint64_t messages;  /* SLICE.RUN commands sent */
    uint64_t failures;  /* of which answered nothing usable: unreachable, NOSLICE, an error */
    uint64_t missing;   /* of which NOSLICE: the node holds no such slice */
    uint64_t falls;     /* times a command failed after one that answered (or first) */
    uint64_t owed;       /* sets the failure policy's printed events still owe it */
    uint64_t backfilled; /* of those, sent and answered once it answered again */
    uint64_t given_up;   /* past the bound of what is kept, or refused by the slice */
    bool failed;        /* its last command failed */
    int node;           /* the node that last answered or failed (-1: none yet) */
} remote_site_info;

/* A site whose slice is the key `key` (copied), of `bits` cells: its batches become
 * SLICE.RUN commands of `round`, the requests carrying their times when `timed`.  It
 * fails a request (ONCE_ERR_UNAVAILABLE) that it could not send or whose answer it
 * could not read, and describes the slice as its last answer did: its cells, and the
 * bytes a bit a cell takes (a timed slice's timers are the server's: 0, unknown). */
once_status remote_site_create(remote_round *round, const char *key, uint64_t bits,
                               bool timed, once_site *out);
void remote_site_describe_remote(const once_site *site, remote_site_info *info);
/* Send what the site is owed now, alone, between batches (kept if it still fails). */
void remote_site_flush(const once_site *site);

#endif /* ONCE_DIST_REMOTE_SITE_H */
