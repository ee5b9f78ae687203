/*
 * slice/tree.c - Bloom trees: filters placed near the producers, one level above the
 * other (paper 000, section 6; once_sliced.h, "Bloom trees").
 *
 * Design
 *   A tree of L levels, level 0 the root and level L - 1 the leaves (the paper's
 *   numbering, section 7), every internal node with `fanout` children.  Nodes are kept
 *   in level order, as a heap is: node 0 is the root, the children of node i are
 *   fanout i + 1 .. fanout i + fanout, its parent (i - 1) / fanout, and level l starts
 *   at node first[l] = 1 + fanout + .. + fanout^(l-1).  Leaf i is node first[L-1] + i.
 *
 *   Every node is a filter of the same m bits and k hash functions under one seed,
 *   held by a site (once_site): the tree keeps no bits itself.  The root may be sliced
 *   vertically over memory sites (root_slices; once_vertical_site_create), section 6's
 *   remedy for the load the upper levels take; by Lemma 1 that changes no decision.  An event is hashed once
 *   (once_digest_with_seed, then once_standard_positions, as ONCE_STANDARD and the
 *   vertically sliced filter do), and each node it visits gets one request on those k
 *   positions.
 *
 *   Dense (Algorithm 1, test-and-set): from the leaf up, a TEST_AND_SET to each node;
 *   the first that had all k bits set answers "duplicate" and the walk stops there;
 *   when the root too missed, "distinct".  Every node visited holds the event after.
 *
 *   Sparse (Algorithm 2, first-test-then-set): from the leaf up, a TEST to each node,
 *   pushing it on the path, until one matches ("duplicate", nothing set) or the root
 *   misses ("distinct"); then a SET to every node of the path, popped: the root first,
 *   the leaf last.
 *
 *   Windows (section 6, "Bloom trees can also be enhanced with timers"): every node is
 *   a windowed site (slice/sites.c: a position set for an event of time t_u expires at
 *   t_u + w, the later expiry stays, and a request is answered at its own time t_u),
 *   and both modes run first-test-then-set: a duplicate sets nothing, since a set at
 *   its time would restart its window at the nodes it reached.  The dense tree's
 *   test-and-set is therefore Algorithm 2 too (the paper: "the first-test-then-set
 *   primitive can be used both for sparse Bloom trees and for implementing the dense
 *   Bloom trees"), and every request carries the event's time.
 *
 *   Racing producers (claims, for nodes shared between processes): a walk that tests
 *   and then sets can be passed by two producers of one event.  With claims each test
 *   takes a claim on the event at its node, and a claim found held makes the event a
 *   duplicate; two producers of an event meet at the first node their paths share,
 *   where one finds the other's claim, or its bits (a claim is dropped with its node's
 *   set, root first as the sets go).
 *
 *   Top-down testing, threshold level d (section 6): the paper checks a match at a
 *   node i of level j < d by testing i's children other than the one the request came
 *   from, then the children of every child that matched, down to level d; "if all the
 *   children indicate a miss, then u is considered distinct, the match at i is
 *   determined as a false positive and the process stops".  We implement:
 *     - a match at level j >= d (all leaves' matches among them, as d <= L - 1) is
 *       final, as without the heuristic;
 *     - a match at node i of level j < d starts the check: frontier = the children of
 *       i but the one the event came up from; at each level down to d, every frontier
 *       node is sent a TEST (the paper forwards the request to all of them, which a
 *       deployment does at once); the ones that match give the next frontier, their
 *       children.  A match at level d confirms the duplicate; a level where nothing
 *       matches rules i's match a false positive (ruled_out[j]);
 *     - a ruled-out match is treated as a miss: the event goes on up to i's parent
 *       (dense: with the test-and-set i has already done; sparse: i stays on the path
 *       and is set if the event ends distinct).  The paper stops there and calls the
 *       event distinct; but a false positive at i says nothing of the rest of the
 *       tree: the event may have come before through another subtree of an ancestor
 *       of i, and stopping would pass that duplicate (a false negative, which the
 *       heuristic is not meant to trade for its fewer false positives).  Going on costs
 *       the rest of the walk to the root, and the event ends distinct only when no
 *       node above confirms it;
 *     - the check only tests (paper: "the top-down process consists of tests only, i.e.,
 *       no bits are set"), in both modes.
 *
 * Invariants (one caller, every node reachable)
 *   - every bit set at a node is set at its parent: a dense event sets its bits at each
 *     node up to the one that already held them all, whose ancestors hold them; a
 *     sparse distinct event sets its whole path, and a duplicate nothing;
 *   - so the root holds the bits of every event answered so far, as the standard filter
 *     of the same m, k and seed that saw them does (a duplicate's bits are all set
 *     already, wherever it was found).  Without the heuristic, an event is a duplicate
 *     exactly when some node of its path matches, which (nodes being subsets of the
 *     root) is exactly when the root matches: the tree decides as the single filter,
 *     dense and sparse alike (Propositions 3 and 4; Lemma 1 for the vertically sliced
 *     filter, which decides as the standard one);
 *   - with the heuristic a duplicate still needs a match, so it is one for the single
 *     filter too (Proposition 4), and the root holds the same bits as without it.  An
 *     event u seen before is still a duplicate: its earlier visit left a chain of nodes
 *     that match u reaching level d or below (its path down to its leaf when u was set,
 *     the confirming chain when u was found), and every ancestor of a node that matches
 *     matches.  Let x be the lowest node of the new walk's path among the chain and its
 *     ancestors: x matches; at level d or below that is final, else the chain goes on
 *     from x through a child off the path (one on it would be lower than x), which the
 *     check at x tests, and ruled-out matches below x do not stop the walk before x;
 *   - with a window, the same with timers: every timer at a node expires no later than
 *     the same position's at its parent (a distinct event sets its path, root first,
 *     each to the later of t_u + w and what it held; nothing else sets), so a position
 *     alive at a node is alive at its parent, and for events in time order the tree
 *     decides as its root, one windowed filter of the same m, k and seed;
 *   - a failed request (ONCE_ERR_UNAVAILABLE) fails the call, nothing decided and no
 *     further request sent.  Sparse sets go root first, so a failure while setting
 *     leaves the first invariant intact; a dense test-and-set below the unreachable
 *     node stays done.
 *
 * Threads (section 6, "Concurrency"; the paper locks the root, "as all first-test-then-set
 * requests will pass through the root node before setting any bits", which makes
 * producers at different leaves run one at a time).  With `concurrent` each node has a
 * lock, and an operation locks a node of its path before it asks it: leaf first, then
 * up, so every operation takes its locks in decreasing node index, one global order,
 * and no two wait for each other in a circle.
 *   - First-test-then-set keeps every node it tested until its sets are done.  Two
 *     producers of an event u meet at the lowest node x their paths share (the leaf,
 *     when it is the same): the second locks x only when the first is done with it, so
 *     if the first answered distinct, x holds u (sets go root first, down to the leaf,
 *     and x is on its path) and the second matches at x or below it.
 *   - A dense test-and-set (no window) keeps a node only while it asks it: the node
 *     runs one test-and-set at a time, so of two producers of u that reach x the second
 *     finds u's bits set by the first; an event answered distinct missed at every
 *     node of its path, x and the root included, so at most one is.
 *   - Top-down testing asks nodes below a match, whose indexes are larger than the
 *     path's: to lock them too would break the order, and to ask them unlocked would
 *     race with their sets.  A tree with it holds one lock for the whole operation.
 *   - Counters are atomic, in groups by leaf (one without `concurrent`), so producers
 *     at different leaves seldom write one cache line.
 *
 * Counting (Table 1, Fig. 12): per level, accesses are requests sent to the level's
 * nodes (each a message to one site), hits the tests and test-and-sets answered "all
 * set".  Without the heuristic, each event is answered by its one hit (or by none, when
 * distinct), so the hits sum to the duplicates; a dense tree's leaves are accessed once
 * per event, a sparse tree's once more per distinct event (section 7: "each filter is
 * accessed twice, once during testing and once during setting").
 */
#include "core/alloc.h"
#include "once_sliced.h"
#include "once_math.h"
#include "slice/sites.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define TREE_MAX_HASHES 64u
#define TREE_MAX_BITS (UINT64_C(1) << 40)
/* A windowed memory site's most cells (once_memory_site_create: a timer and its mark
 * each, up to 33 bits). */
#define TREE_MAX_TIMERS (UINT64_C(1) << 34)
#define NO_NODE UINT64_MAX
/* Counter groups of a concurrent tree: an operation counts in its leaf's group, so that
 * producers at different leaves seldom write one cache line. */
#define TREE_COUNTER_GROUPS 16u

typedef struct tree_counters {
    _Alignas(64) _Atomic uint64_t events;
    _Atomic uint64_t duplicates, failures;
    _Atomic uint64_t accesses[ONCE_TREE_MAX_LEVELS], hits[ONCE_TREE_MAX_LEVELS],
        ruled_out[ONCE_TREE_MAX_LEVELS];
} tree_counters;

struct once_tree {
    once_tree_mode mode;
    uint32_t levels, fanout, hashes, top_down_level;
    uint64_t bits, seed, nodes, leaves;
    uint64_t window_ms;                   /* 0: no window */
    uint32_t root_slices;                 /* 1: the root is one site */
    bool claims;                          /* a first-test-then-set walk claims its nodes */
    uint64_t first[ONCE_TREE_MAX_LEVELS]; /* the first node of each level */
    once_site *sites;                     /* nodes of them, in level order */
    uint64_t *frontier, *next;            /* top-down scratch, leaves of them each */
    uint32_t groups;                      /* of counters: 1, or TREE_COUNTER_GROUPS */
    tree_counters *counters;
    bool concurrent;
    /* When concurrent: a lock per node (node_locks), or with top-down testing one for
     * the whole tree (tree_lock; see "Threads" above). */
    pthread_mutex_t *node_locks;
    pthread_mutex_t tree_lock;
};

/* One operation: its group of counters, and the node locks it holds, in the order
 * taken (decreasing node index). */
typedef struct operation {
    tree_counters *counters;
    bool shared; /* the tree is concurrent: counters take atomic adds */
    uint64_t held[ONCE_TREE_MAX_LEVELS];
    uint32_t held_count;
} operation;

/* One thread's tree adds with a plain load and store (no locked instruction). */
static void count(const operation *o, _Atomic uint64_t *counter, uint64_t by)
{
    if (o->shared)
        atomic_fetch_add_explicit(counter, by, memory_order_relaxed);
    else
        atomic_store_explicit(counter,
                              atomic_load_explicit(counter, memory_order_relaxed) + by,
                              memory_order_relaxed);
}

/* ---------------------------------------------------------------- creation */

/* The nodes of a complete tree, level by level into first[] (when not NULL), or
 * ONCE_ERR_TOO_LARGE past ONCE_TREE_MAX_NODES. */
static once_status count_nodes(uint32_t levels, uint32_t fanout, uint64_t *first,
                               uint64_t *nodes, uint64_t *leaves)
{
    uint64_t total = 0, width = 1;
    for (uint32_t l = 0; l < levels; l++) {
        if (l > 0) {
            if (width > ONCE_TREE_MAX_NODES / fanout)
                return ONCE_ERR_TOO_LARGE;
            width *= fanout;
        }
        if (first != NULL)
            first[l] = total;
        total += width;
        if (total > ONCE_TREE_MAX_NODES)
            return ONCE_ERR_TOO_LARGE;
    }
    *nodes = total;
    *leaves = width;
    return ONCE_OK;
}

once_status once_tree_geometry(const once_tree_config *c, uint64_t *bits, uint32_t *hashes,
                               uint64_t *nodes, uint64_t *leaves)
{
    if (c == NULL || bits == NULL || hashes == NULL || nodes == NULL || leaves == NULL)
        return ONCE_ERR_INVALID;
    if ((c->mode != ONCE_TREE_DENSE && c->mode != ONCE_TREE_SPARSE) || c->levels == 0 ||
        c->levels > ONCE_TREE_MAX_LEVELS || c->fanout == 0 || c->hashes > TREE_MAX_HASHES ||
        c->top_down_level >= c->levels || c->window_ms > ONCE_MAX_TIME_MS / 2 ||
        c->root_slices > ONCE_MAX_SLICED_SITES ||
        (c->claims && (c->concurrent || c->top_down_level > 0)))
        return ONCE_ERR_INVALID;
    uint64_t m = 0;
    uint32_t k = 0;
    once_status planned = slice_plan_geometry(c->bits, c->hashes, c->capacity, c->error, &m, &k);
    if (planned != ONCE_OK)
        return planned;
    if (k == 0 || k > TREE_MAX_HASHES || c->root_slices > m)
        return ONCE_ERR_INVALID;
    if (m > TREE_MAX_BITS || (c->window_ms != 0 && m > TREE_MAX_TIMERS))
        return ONCE_ERR_TOO_LARGE;
    uint64_t n = 0, l = 0;
    once_status st = count_nodes(c->levels, c->fanout, NULL, &n, &l);
    if (st != ONCE_OK)
        return st;
    *bits = m;
    *hashes = k;
    *nodes = n;
    *leaves = l;
    return ONCE_OK;
}

/* A root of m positions sliced vertically over `slices` memory sites, each of the
 * largest slice's ceil(m / S) positions rounded up to whole words. */
static once_status sliced_root(uint64_t m, uint32_t slices, uint64_t window_ms, once_site *root)
{
    once_site *inner = once_calloc(slices, sizeof *inner);
    if (inner == NULL)
        return ONCE_ERR_NOMEM;
    once_memory_site_config slice = {.bits = ((m + slices - 1) / slices + 63) / 64 * 64,
                                     .window_ms = window_ms};
    once_status st = ONCE_OK;
    uint32_t made = 0;
    for (; made < slices && st == ONCE_OK; made += st == ONCE_OK)
        st = once_memory_site_create(&slice, &inner[made]);
    if (st == ONCE_OK)
        st = once_vertical_site_create(m, slices, inner, root);
    if (st != ONCE_OK)
        slice_sites_destroy(inner, made);
    once_free_memory(inner);
    return st;
}

once_status once_tree_create(once_tree **out, const once_tree_config *c, const once_site *sites)
{
    if (out == NULL)
        return ONCE_ERR_INVALID;
    *out = NULL;
    uint64_t m = 0, nodes = 0, leaves = 0;
    uint32_t k = 0;
    once_status st = once_tree_geometry(c, &m, &k, &nodes, &leaves);
    if (st != ONCE_OK)
        return st;
    if (sites != NULL && c->root_slices > 1)
        return ONCE_ERR_INVALID; /* the caller slices its own root (once_vertical_site_create) */
    if (sites != NULL) /* checked before anything is taken over */
        for (uint64_t i = 0; i < nodes; i++)
            if (sites[i].run == NULL)
                return ONCE_ERR_INVALID;
    uint64_t seed = c->seed;
    if (!c->seed_is_set && (st = once_random_seed(&seed)) != ONCE_OK)
        return st;
    once_tree *t = once_calloc(1, sizeof *t);
    if (t == NULL)
        return ONCE_ERR_NOMEM;
    t->mode = c->mode;
    t->levels = c->levels;
    t->fanout = c->fanout;
    t->hashes = k;
    t->top_down_level = c->top_down_level;
    t->window_ms = c->window_ms;
    t->root_slices = c->root_slices > 1 ? c->root_slices : 1;
    t->claims = c->claims;
    t->groups = c->concurrent ? TREE_COUNTER_GROUPS : 1;
    t->counters = once_aligned_alloc(t->groups * sizeof *t->counters); /* zeroed */
    if (t->counters == NULL) {
        once_free_memory(t);
        return ONCE_ERR_NOMEM;
    }
    if (c->concurrent && c->top_down_level > 0) {
        if (pthread_mutex_init(&t->tree_lock, NULL) != 0) {
            once_aligned_free(t->counters);
            once_free_memory(t);
            return ONCE_ERR_NOMEM;
        }
        t->concurrent = true;
    } else if (c->concurrent) {
        t->node_locks = once_calloc((size_t)nodes, sizeof *t->node_locks);
        if (t->node_locks == NULL) {
            once_aligned_free(t->counters);
            once_free_memory(t);
            return ONCE_ERR_NOMEM;
        }
        for (uint64_t i = 0; i < nodes; i++)
            pthread_mutex_init(&t->node_locks[i], NULL);
        t->concurrent = true;
    }
    t->bits = m;
    t->seed = seed;
    count_nodes(c->levels, c->fanout, t->first, &t->nodes, &t->leaves);
    t->sites = once_calloc((size_t)nodes, sizeof *t->sites);
    t->frontier = once_calloc((size_t)leaves, sizeof *t->frontier);
    t->next = once_calloc((size_t)leaves, sizeof *t->next);
    if (t->sites == NULL || t->frontier == NULL || t->next == NULL) {
        once_tree_free(t);
        return ONCE_ERR_NOMEM;
    }
    if (sites != NULL) {
        memcpy(t->sites, sites, (size_t)nodes * sizeof *sites);
    } else {
        /* Positions fall in [0, m): a node holds m bits, rounded up to whole words. */
        once_memory_site_config node = {.bits = (m + 63) / 64 * 64, .window_ms = t->window_ms};
        for (uint64_t i = 0; i < nodes; i++)
            if ((st = i == 0 && t->root_slices > 1
                          ? sliced_root(m, t->root_slices, t->window_ms, &t->sites[0])
                          : once_memory_site_create(&node, &t->sites[i])) != ONCE_OK) {
                once_tree_free(t); /* destroys the ones made so far */
                return st;
            }
    }
    *out = t;
    return ONCE_OK;
}

void once_tree_free(once_tree *t)
{
    if (t == NULL)
        return;
    slice_sites_destroy(t->sites, t->nodes);
    if (t->node_locks != NULL)
        for (uint64_t i = 0; i < t->nodes; i++)
            pthread_mutex_destroy(&t->node_locks[i]);
    else if (t->concurrent)
        pthread_mutex_destroy(&t->tree_lock);
    once_free_memory(t->node_locks);
    once_aligned_free(t->counters);
    once_free_memory(t->sites);
    once_free_memory(t->frontier);
    once_free_memory(t->next);
    once_free_memory(t);
}

/* ------------------------------------------------------------- an event */

/* Per-node locking: take `node`'s lock for the operation (nodes of one path, leaf
 * first: decreasing indexes, the one order every operation takes them in). */
static void hold(once_tree *t, operation *o, uint64_t node)
{
    if (t->node_locks == NULL)
        return;
    pthread_mutex_lock(&t->node_locks[node]);
    o->held[o->held_count++] = node;
}

/* Give back the lock taken last (a dense test-and-set needs a node only while it asks). */
static void release_last(once_tree *t, operation *o)
{
    if (t->node_locks != NULL && o->held_count > 0)
        pthread_mutex_unlock(&t->node_locks[o->held[--o->held_count]]);
}

/* A claim taken or dropped with a request (claims; see once_tree_config.claims). */
typedef struct claim_step {
    uint64_t claim, release; /* the event's claim to take, or to drop (0: none) */
    bool lost;               /* out: another producer holds it */
} claim_step;

/* One request on the event's positions to `node`, of level `level`, with a claim
 * taken or dropped (claims NULL: none). */
static once_status ask_claimed(once_tree *t, operation *o, uint64_t node, uint32_t level,
                               once_site_op op, const uint64_t *positions, uint64_t time_ms,
                               claim_step *claims, bool *all_set)
{
    once_site_request q = {.op = op, .positions = positions, .count = t->hashes,
                           .status = ONCE_OK, .time_ms = time_ms};
    if (claims != NULL) {
        q.claim = claims->claim;
        q.release = claims->release;
    }
    const once_site *site = &t->sites[node];
    site->run(site->context, &q, 1);
    count(o, &o->counters->accesses[level], 1);
    if (q.status != ONCE_OK) {
        count(o, &o->counters->failures, 1);
        return q.status;
    }
    if (claims != NULL)
        claims->lost = q.claim_lost;
    *all_set = op != ONCE_SITE_SET && q.all_set;
    if (*all_set)
        count(o, &o->counters->hits[level], 1);
    return ONCE_OK;
}

static once_status ask(once_tree *t, operation *o, uint64_t node, uint32_t level,
                       once_site_op op, const uint64_t *positions, uint64_t time_ms,
                       bool *all_set)
{
    return ask_claimed(t, o, node, level, op, positions, time_ms, NULL, all_set);
}

/* Claims: drop the event's claim at the nodes of path[] whose levels `won` marks (a
 * duplicate's, or an unfinished walk's), as far as they can be reached. */
static void drop_claims(once_tree *t, const uint64_t *path, const bool *won, uint64_t claim)
{
    for (uint32_t level = 0; level < t->levels; level++) {
        if (!won[level])
            continue;
        once_site_request q = {.op = ONCE_SITE_TEST, .status = ONCE_OK, .release = claim};
        const once_site *site = &t->sites[path[level]];
        site->run(site->context, &q, 1);
    }
}

/*
 * Top-down testing of a match at `node`, of level `level` < d, reached from its child
 * `from` (NO_NODE: none): *confirmed when a chain of matching nodes leads from one of
 * node's other children down to level d.  Level by level, every node of the frontier
 * is tested; those that match pass their children on.
 */
static once_status confirm_below(once_tree *t, operation *o, uint64_t node, uint64_t from,
                                 uint32_t level,
                                 const uint64_t *positions, uint64_t time_ms, bool *confirmed)
{
    uint64_t *frontier = t->frontier, *next = t->next;
    size_t count = 0;
    for (uint64_t c = node * t->fanout + 1; c <= node * t->fanout + t->fanout; c++)
        if (c != from)
            frontier[count++] = c;
    for (uint32_t l = level + 1;; l++) {
        size_t matched = 0;
        for (size_t i = 0; i < count; i++) {
            bool present = false;
            once_status st = ask(t, o, frontier[i], l, ONCE_SITE_TEST, positions, time_ms,
                                 &present);
            if (st != ONCE_OK)
                return st;
            if (present)
                frontier[matched++] = frontier[i];
        }
        if (matched == 0 || l == t->top_down_level) {
            *confirmed = matched > 0;
            return ONCE_OK;
        }
        count = 0;
        for (size_t i = 0; i < matched; i++)
            for (uint64_t c = frontier[i] * t->fanout + 1;
                 c <= frontier[i] * t->fanout + t->fanout; c++)
                next[count++] = c;
        uint64_t *swap = frontier;
        frontier = next;
        next = swap;
    }
}

static once_status tree_test_and_add(once_tree *t, operation *o, uint64_t leaf,
                                     const void *key, size_t len, uint64_t time_ms, bool *seen)
{
    once_digest d;
    uint64_t positions[TREE_MAX_HASHES];
    once_status st = once_digest_with_seed(t->seed, key, len, &d);
    if (st != ONCE_OK ||
        (st = once_standard_positions(t->bits, t->hashes, &d, positions)) != ONCE_OK)
        return st;
    /* Test-and-set for a dense tree without a window; else first test, then set. */
    const bool test_and_set = t->mode == ONCE_TREE_DENSE && t->window_ms == 0;
    const once_site_op op = test_and_set ? ONCE_SITE_TEST_AND_SET : ONCE_SITE_TEST;
    uint64_t path[ONCE_TREE_MAX_LEVELS]; /* path[l]: the event's node at level l */
    uint64_t node = t->first[t->levels - 1] + leaf, from = NO_NODE;
    bool duplicate = false;
    /* Claims: each test takes one; won[l] when the node of level l gave it. */
    const uint64_t claim = t->claims && !test_and_set ? d.lo | 1 : 0;
    bool won[ONCE_TREE_MAX_LEVELS] = {false};
    for (uint32_t level = t->levels - 1;; level--) {
        path[level] = node;
        bool present = false;
        hold(t, o, node);
        claim_step step = {.claim = claim};
        st = ask_claimed(t, o, node, level, op, positions, time_ms, claim ? &step : NULL,
                         &present);
        if (test_and_set)
            release_last(t, o);
        if (st != ONCE_OK) {
            if (claim)
                drop_claims(t, path, won, claim);
            return st;
        }
        won[level] = claim != 0 && !step.lost;
        if (step.lost) { /* another producer is deciding the event: a repeat here */
            duplicate = true;
            break;
        }
        if (present && level < t->top_down_level) {
            if ((st = confirm_below(t, o, node, from, level, positions, time_ms,
                                    &present)) != ONCE_OK)
                return st;
            if (!present) /* a false positive: on up, as after a miss */
                count(o, &o->counters->ruled_out[level], 1);
        }
        if (present) {
            duplicate = true;
            break;
        }
        if (level == 0)
            break;
        from = node;
        node = (node - 1) / t->fanout;
    }
    if (!duplicate && !test_and_set)
        for (uint32_t level = 0; level < t->levels; level++) { /* pop: root first */
            bool ignored = false;
            /* Claims: dropped with the set, so that a test after it finds the bits. */
            claim_step step = {.release = won[level] ? claim : 0};
            st = ask_claimed(t, o, path[level], level, ONCE_SITE_SET, positions, time_ms,
                             claim ? &step : NULL, &ignored);
            won[level] = won[level] && st != ONCE_OK;
            if (st != ONCE_OK) {
                if (claim)
                    drop_claims(t, path, won, claim);
                return st;
            }
        }
    else if (claim)
        drop_claims(t, path, won, claim);
    count(o, &o->counters->events, 1);
    count(o, &o->counters->duplicates, duplicate);
    *seen = duplicate;
    return ONCE_OK;
}

/* Threads (section 6, "Concurrency"; the design above): the node locks an operation
 * took are given back when it ends, the last taken first; with top-down testing the
 * whole operation holds the tree's lock, which also guards the check's scratch. */
once_status once_tree_test_and_add_at(once_tree *t, uint64_t leaf, const void *key, size_t len,
                                      uint64_t time_ms, bool *seen)
{
    if (t == NULL || seen == NULL || (key == NULL && len != 0) || leaf >= t->leaves)
        return ONCE_ERR_INVALID;
    if (t->window_ms != 0 && time_ms > ONCE_MAX_TIME_MS)
        return ONCE_ERR_TIME;
    operation o = {.counters = &t->counters[leaf % t->groups], .shared = t->concurrent,
                   .held_count = 0};
    bool whole_tree = t->concurrent && t->node_locks == NULL;
    if (whole_tree)
        pthread_mutex_lock(&t->tree_lock);
    once_status st = tree_test_and_add(t, &o, leaf, key, len, time_ms, seen);
    while (o.held_count > 0)
        release_last(t, &o);
    if (whole_tree)
        pthread_mutex_unlock(&t->tree_lock);
    return st;
}

/* A tree without a window: its events need no time. */
once_status once_tree_test_and_add(once_tree *t, uint64_t leaf, const void *key, size_t len,
                                   bool *seen)
{
    if (t != NULL && t->window_ms != 0)
        return ONCE_ERR_INVALID; /* once_tree_test_and_add_at */
    return once_tree_test_and_add_at(t, leaf, key, len, 0, seen);
}

/* ---------------------------------------------------------------- stats */

once_status once_tree_get_stats(const once_tree *t, once_tree_stats *s)
{
    if (t == NULL || s == NULL)
        return ONCE_ERR_INVALID;
    memset(s, 0, sizeof *s);
    s->bits = t->bits;
    s->hashes = t->hashes;
    s->levels = t->levels;
    s->fanout = t->fanout;
    s->nodes = t->nodes;
    s->leaves = t->leaves;
    s->window_ms = t->window_ms;
    s->root_slices = t->root_slices;
    /* The groups added up; while operations run, each counter is one they reached. */
    for (uint32_t g = 0; g < t->groups; g++) {
        tree_counters *c = &t->counters[g];
        s->events += atomic_load_explicit(&c->events, memory_order_relaxed);
        s->duplicates += atomic_load_explicit(&c->duplicates, memory_order_relaxed);
        s->failures += atomic_load_explicit(&c->failures, memory_order_relaxed);
        for (uint32_t l = 0; l < t->levels; l++) {
            s->accesses[l] += atomic_load_explicit(&c->accesses[l], memory_order_relaxed);
            s->hits[l] += atomic_load_explicit(&c->hits[l], memory_order_relaxed);
            s->ruled_out[l] += atomic_load_explicit(&c->ruled_out[l], memory_order_relaxed);
        }
    }
    return ONCE_OK;
}
