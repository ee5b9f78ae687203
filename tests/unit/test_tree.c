/*
 * Bloom trees over node sites (paper 000, section 6; once_sliced.h, "Bloom trees").
 *
 * Specification:
 *   - without top-down testing, a single filter (a tree of one level, dense or
 *     sparse), the standard filter of the same m, k and seed (ONCE_STANDARD), the
 *     vertically sliced filter of them (Lemma 1), and sparse and dense trees of 2 and
 *     of 5 levels decide every event of a stream with repeats and producer locality
 *     identically (Propositions 3 and 4), false positives included;
 *   - a root sliced vertically over S sites (root_slices, S = 8 and an uneven 3)
 *     changes no decision (Lemma 1, Proposition 1); on a stream of new keys the
 *     false positives of a 2-level tree with a sliced root are within 4 sigmas of the
 *     standard filter's rate of the same m, k at the keys inserted so far (Lemma 1);
 *     a vertical site answers every request (test, set, test-and-set, with and
 *     without a window, past 64 positions, past m) as one memory site of m does, fails
 *     a request whose slice is down, destroys its slices, and refuses bad arguments;
 *   - without top-down testing, over N events of which D are answered distinct (Table
 *     1): a dense tree's leaves are accessed N times, a sparse tree's N + D (a distinct
 *     event is tested, then set); at both, the accesses of a level are those of the
 *     level below less its hits, and the root's misses are the D distinct events
 *     (sparse: counted twice, test and set); the hits add up to N - D, the same D in
 *     both; a dense tree catches every duplicate at least as low as a sparse one;
 *   - with top-down testing to level d > 0, every event seen before is still a
 *     duplicate; every event answered duplicate is one without the heuristic too; and
 *     on a stream whose upper levels give false positives across leaves, fewer false
 *     positives than without it (ground truth: the exact set of keys seen), the
 *     difference being exactly the events the heuristic turned distinct;
 *   - a match ruled out by top-down testing does not stop the walk: an event inserted
 *     through another subtree is found above it (where the paper's rule, which stops,
 *     would call it distinct);
 *   - with a window w (timers, first-test-then-set in both modes), on a virtual clock:
 *     an event whose key was delivered (answered distinct) less than w before is a
 *     duplicate, from any leaf (no false negatives); one delivered w or more before is
 *     forgotten unless a false positive keeps it; dense and sparse trees decide every
 *     event as a windowed vertical filter of the same m, k, seed and window does, and
 *     the dense tree's leaves are accessed N + D times (a duplicate sets nothing); with
 *     top-down testing still no false negatives;
 *   - nodes are the caller's sites in level order, root first; a node that cannot be
 *     reached when the event needs it fails the call (ONCE_ERR_UNAVAILABLE), nothing
 *     decided; one it does not need is not asked; the tree destroys its sites when
 *     freed, and leaves them to the caller when creation fails;
 *   - invalid configurations and arguments are refused (ONCE_ERR_INVALID, sizes past
 *     the limits ONCE_ERR_TOO_LARGE); a failed allocation is ONCE_ERR_NOMEM with
 *     nothing left allocated.
 */
#include "flaky_site.h"
#include "racing.h"
#include "testing.h"

#include "once_math.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define SEED 91

static once_tree_config config_of(once_tree_mode mode, uint32_t levels, uint32_t fanout,
                                  uint64_t bits, uint32_t hashes, uint32_t top_down_level)
{
    return (once_tree_config){.mode = mode, .levels = levels, .fanout = fanout, .bits = bits,
                              .hashes = hashes, .seed = SEED, .seed_is_set = true,
                              .top_down_level = top_down_level};
}

static once_tree *make_tree(const once_tree_config *c)
{
    once_tree *t = NULL;
    once_status st = once_tree_create(&t, c, NULL);
    if (st != ONCE_OK)
        fprintf(stderr, "create tree: %s\n", once_strerror(st));
    return t;
}

/*
 * A stream of events with repeats and producer locality: each key has a home leaf
 * that produces 4 events in 5 of it (another leaf the rest); an event is a new key
 * with probability fresh/100, else a repeat of a recent key (half the time) or of any
 * key so far.  Keys are numbered 0, 1, ... in order of first appearance.
 */
typedef struct stream {
    uint64_t *key, *leaf;
    size_t count;
    uint64_t keys; /* distinct keys */
} stream;

static stream stream_make(uint64_t salt, size_t count, uint64_t leaves, unsigned fresh)
{
    stream s = {calloc(count, sizeof(uint64_t)), calloc(count, sizeof(uint64_t)), count, 0};
    if (s.key == NULL || s.leaf == NULL) {
        s.count = 0;
        return s;
    }
    for (size_t i = 0; i < count; i++) {
        uint64_t r = testing_mix(salt * 1000003 + i), key;
        if (s.keys == 0 || r % 100 < fresh) {
            key = s.keys++;
        } else if (r >> 7 & 1) {
            uint64_t recent = s.keys < 200 ? s.keys : 200;
            key = s.keys - 1 - (r >> 8) % recent;
        } else {
            key = (r >> 8) % s.keys;
        }
        uint64_t home = testing_mix(key ^ (salt << 32)) % leaves;
        uint64_t u = testing_mix(r);
        s.key[i] = key;
        s.leaf[i] = u % 5 != 0 ? home : (u >> 8) % leaves;
    }
    return s;
}

static void stream_free(stream *s)
{
    free(s->key);
    free(s->leaf);
}

/* The tree's answers to the stream, into seen[]. */
static void run_tree(once_tree *t, const stream *s, uint64_t domain, bool *seen)
{
    for (size_t i = 0; i < s->count; i++) {
        testing_key k = testing_key_make(domain, s->key[i]);
        seen[i] = false;
        CHECK_OK(once_tree_test_and_add(t, s->leaf[i], &k, sizeof k, &seen[i]));
    }
}

/* True repeats: repeat[i] when key[i] came before i. */
static bool *ground_truth(const stream *s)
{
    bool *repeat = calloc(s->count ? s->count : 1, sizeof *repeat);
    bool *known = calloc(s->keys ? s->keys : 1, sizeof *known);
    if (repeat != NULL && known != NULL)
        for (size_t i = 0; i < s->count; i++) {
            repeat[i] = known[s->key[i]];
            known[s->key[i]] = true;
        }
    free(known);
    return repeat;
}

/* The vertical sliced filter of m bits, k hashes and the tests' seed over `slices`
 * sites, with a window of `window_ms` (0: none): what a tree decides as (Lemma 1). */
static once_sliced *vertical_filter(uint64_t m, uint32_t k, uint32_t slices, uint64_t window_ms)
{
    once_sliced_config vc;
    memset(&vc, 0, sizeof vc);
    vc.slicing = ONCE_SLICING_VERTICAL;
    vc.slices = slices;
    vc.bits = m;
    vc.hashes = k;
    vc.seed = SEED;
    vc.seed_is_set = true;
    vc.window_ms = window_ms;
    once_sliced *v = NULL;
    CHECK_OK(once_sliced_create(&v, &vc, NULL));
    return v; /* the callers REQUIRE it */
}

/* ------------------------------------------------- Propositions 3, 4, Lemma 1 */

static void decisions_equal_a_single_filter(void)
{
    const uint64_t m = 131072;
    const uint32_t k = 4;
    const struct {
        uint32_t levels, fanout;
    } shapes[] = {{2, 8}, {5, 3}};
    for (size_t sh = 0; sh < 2; sh++) {
        uint32_t levels = shapes[sh].levels, fanout = shapes[sh].fanout;
        uint64_t leaves = 1;
        for (uint32_t l = 1; l < levels; l++)
            leaves *= fanout;
        stream s = stream_make(1 + sh, 40000, leaves, 50);
        bool *repeat = ground_truth(&s);
        bool *want = calloc(s.count, sizeof *want), *got = calloc(s.count, sizeof *got);
        REQUIRE(s.count == 40000 && repeat != NULL && want != NULL && got != NULL);

        /* The standard filter of the same m, k and seed, through the filter API. */
        once_config sc = testing_config(ONCE_STANDARD, SEED);
        sc.bits = m;
        sc.hashes = k;
        once_filter *f = testing_create(&sc);
        REQUIRE(f != NULL);
        uint64_t fp = 0, fn = 0;
        for (size_t i = 0; i < s.count; i++) {
            testing_key key = testing_key_make(20, s.key[i]);
            CHECK_OK(once_test_and_add(f, &key, sizeof key, 0, &want[i]));
            fp += want[i] && !repeat[i];
            fn += !want[i] && repeat[i];
        }
        once_free(f);
        /* The comparison covers false positives, and the stream has duplicates. */
        CHECK(fp > 20 && fn == 0);

        /* Lemma 1: the filter split vertically over 8 sites. */
        once_sliced *v = vertical_filter(m, k, 8, 0);
        REQUIRE(v != NULL);
        uint64_t differ = 0;
        for (size_t i = 0; i < s.count; i++) {
            testing_key key = testing_key_make(20, s.key[i]);
            bool seen = false;
            CHECK_OK(once_sliced_test_and_add(v, &key, sizeof key, 0, &seen));
            differ += seen != want[i];
        }
        once_sliced_free(v);
        CHECK(differ == 0);

        /* A single filter as a tree of one level, and trees of the shape, their roots
         * whole or sliced over 8 or 3 sites (Lemma 1). */
        const uint32_t root_slices[] = {0, 8, 3};
        for (int mode = 0; mode < 2; mode++)
            for (int variant = 0; variant < 4; variant++) {
                int one = variant == 3;
                once_tree_config c = config_of((once_tree_mode)mode, one ? 1 : levels,
                                               one ? 1 : fanout, m, k, 0);
                c.root_slices = one ? 0 : root_slices[variant];
                once_tree *t = make_tree(&c);
                REQUIRE(t != NULL);
                stream routed = s;
                uint64_t *zero = NULL;
                if (one) { /* one leaf: every event there */
                    zero = calloc(s.count, sizeof *zero);
                    REQUIRE(zero != NULL);
                    routed.leaf = zero;
                }
                run_tree(t, &routed, 20, got);
                differ = 0;
                uint64_t dups = 0;
                for (size_t i = 0; i < s.count; i++) {
                    differ += got[i] != want[i];
                    dups += got[i];
                }
                CHECK(differ == 0);
                once_tree_stats st;
                CHECK_OK(once_tree_get_stats(t, &st));
                CHECK(st.events == s.count && st.duplicates == dups);
                CHECK(st.bits == m && st.hashes == k);
                CHECK(st.levels == (one ? 1u : levels) && st.leaves == (one ? 1 : leaves));
                CHECK(st.root_slices == (c.root_slices > 1 ? c.root_slices : 1));
                free(zero);
                once_tree_free(t);
            }
        free(want);
        free(got);
        free(repeat);
        stream_free(&s);
    }
}

/* Lemma 1, measured: a tree of 2 levels, 8 leaves, its root sliced over 8 sites, on a
 * stream of new keys only.  Every answer "duplicate" is a false positive; event i meets
 * the standard filter's rate at the i keys before it (a false positive's bits are all
 * set, so the root holds every key offered). */
static void sliced_root_meets_lemma_1(void)
{
    enum { EVENTS = 30000 };
    const uint64_t m = 187392; /* about 0.05 at the end for k = 4 (Eq. 2) */
    const uint32_t k = 4;
    once_tree_config c = config_of(ONCE_TREE_SPARSE, 2, 8, m, k, 0);
    c.root_slices = 8;
    once_tree *t = make_tree(&c);
    REQUIRE(t != NULL);
    uint64_t fp = 0;
    double expected = 0;
    for (uint64_t i = 0; i < EVENTS; i++) {
        testing_key key = testing_key_make(29, i);
        bool seen = false;
        CHECK_OK(once_tree_test_and_add(t, testing_mix(i) % 8, &key, sizeof key, &seen));
        fp += seen;
        expected += once_fpr_standard(m, k, i);
    }
    double rate = expected / EVENTS;
    CHECK(fp > 100); /* the stream tests the rate */
    CHECK(testing_within_sigmas(fp, EVENTS, rate, 4.0));
    /* Not the rate of a horizontally sliced root of the same m (Eq. 4), which is higher. */
    CHECK(once_sliced_fpr(ONCE_SLICING_HORIZONTAL, m, k, 8, 0, EVENTS) >
          once_fpr_standard(m, k, EVENTS));
    once_tree_free(t);
}

static void vertical_site_decides_as_one_site(void)
{
    const uint64_t m = 4000; /* not a multiple of 64 S: the slices differ by one */
    const uint32_t slices = 7;
    for (int windowed = 0; windowed < 2; windowed++) {
        const uint64_t w = windowed ? 5000 : 0;
        once_memory_site_config whole_config = {.bits = 4032, .window_ms = w};
        once_memory_site_config slice_config = {.bits = 640, .window_ms = w}; /* >= 572 */
        once_site whole, inner[7], vertical;
        CHECK_OK(once_memory_site_create(&whole_config, &whole));
        for (uint32_t i = 0; i < slices; i++)
            CHECK_OK(once_memory_site_create(&slice_config, &inner[i]));
        CHECK_OK(once_vertical_site_create(m, slices, inner, &vertical));
        uint64_t differ = 0, set_answers = 0;
        for (uint64_t r = 0; r < 20000; r++) {
            uint64_t h = testing_mix(r + 1000 * windowed), positions[80];
            uint32_t count = 1 + (uint32_t)(h % 8);
            if (h % 97 == 0)
                count = 65 + (uint32_t)(h >> 20) % 15; /* past the stack's 64 */
            for (uint32_t i = 0; i < count; i++)
                positions[i] = testing_mix(h + i) % (h % 501 == 0 ? m + 30 : m);
            once_site_op op = (once_site_op)(h >> 8 & 3) == 3 ? ONCE_SITE_TEST
                                                              : (once_site_op)(h >> 8 & 3);
            uint64_t time = 10000 + r * 3, got_expiries[80], want_expiries[80];
            bool past = false;
            for (uint32_t i = 0; i < count; i++)
                past = past || positions[i] >= m;
            once_status a = ONCE_ERR_INVALID, b = ONCE_ERR_INVALID;
            /* A position past m: the vertical site sets nothing and answers not set (the
             * whole site, of 4032 cells, would hold it). */
            bool want = !past && site_request(&whole, op, positions, count, time, want_expiries, &a);
            bool got = site_request(&vertical, op, positions, count, time, got_expiries, &b);
            differ += want != got || (!past && a != ONCE_OK) || b != ONCE_OK;
            for (uint32_t i = 0; i < count; i++)
                differ += (past ? 0 : want_expiries[i]) != got_expiries[i];
            set_answers += got;
        }
        CHECK(differ == 0);
        CHECK(set_answers > 1000 && set_answers < 19000);
        once_site_info info;
        vertical.describe(vertical.context, &info);
        CHECK(info.cells == slices * 640 && info.cells_set > 0 && info.filters == 1);
        whole.destroy(whole.context);
        vertical.destroy(vertical.context);
    }

    /* Over the caller's sites: a slice that is down fails the requests that touch it,
     * and the site destroys its slices. */
    flaky_site store[4];
    once_site sites[4], vertical;
    int destroyed = 0;
    flaky_sites(store, sites, 4, &destroyed);
    CHECK_OK(once_vertical_site_create(4096, 4, sites, &vertical));
    uint64_t low[2] = {5, 1000}, high[2] = {3000, 4095};
    once_status st = ONCE_OK;
    CHECK(!site_request(&vertical, ONCE_SITE_TEST_AND_SET, low, 2, 0, NULL, &st) && st == ONCE_OK);
    CHECK(site_request(&vertical, ONCE_SITE_TEST, low, 2, 0, NULL, &st) && st == ONCE_OK);
    uint64_t offset[1] = {5};
    CHECK(flaky_has(&store[0], offset, 1) && flaky_empty(&store[2]) && flaky_empty(&store[3]));
    store[3].down = true;
    site_request(&vertical, ONCE_SITE_TEST, high, 2, 0, NULL, &st);
    CHECK(st == ONCE_ERR_UNAVAILABLE);
    site_request(&vertical, ONCE_SITE_TEST, low, 2, 0, NULL, &st);
    CHECK(st == ONCE_OK);
    vertical.destroy(vertical.context);
    CHECK(destroyed == 4);

    /* Refusals leave the sites to the caller. */
    destroyed = 0;
    flaky_sites(store, sites, 4, &destroyed);
    once_site out;
    CHECK_STATUS(once_vertical_site_create(0, 4, sites, &out), ONCE_ERR_INVALID);
    CHECK_STATUS(once_vertical_site_create(3, 4, sites, &out), ONCE_ERR_INVALID);
    CHECK_STATUS(once_vertical_site_create(4096, 0, sites, &out), ONCE_ERR_INVALID);
    CHECK_STATUS(once_vertical_site_create((UINT64_C(1) << 40) + 1, 4, sites, &out),
                 ONCE_ERR_INVALID);
    CHECK_STATUS(once_vertical_site_create(4096, 4, NULL, &out), ONCE_ERR_INVALID);
    CHECK_STATUS(once_vertical_site_create(4096, 4, sites, NULL), ONCE_ERR_INVALID);
    sites[2].run = NULL;
    CHECK_STATUS(once_vertical_site_create(4096, 4, sites, &out), ONCE_ERR_INVALID);
    CHECK(destroyed == 0);
}

/* ------------------------------------------------------------ Table 1 */

static void table1_access_and_hit_identities(void)
{
    const struct {
        uint32_t levels, fanout;
    } shapes[] = {{2, 16}, {5, 3}};
    for (size_t sh = 0; sh < 2; sh++) {
        uint32_t L = shapes[sh].levels;
        once_tree_config dc = config_of(ONCE_TREE_DENSE, L, shapes[sh].fanout, 65536, 5, 0);
        once_tree_config sc = dc;
        sc.mode = ONCE_TREE_SPARSE;
        once_tree *dense = make_tree(&dc), *sparse = make_tree(&sc);
        REQUIRE(dense != NULL && sparse != NULL);
        once_tree_stats ds, ss;
        CHECK_OK(once_tree_get_stats(dense, &ds));
        stream s = stream_make(10 + sh, 30000, ds.leaves, 30);
        bool *a = calloc(s.count, sizeof *a), *b = calloc(s.count, sizeof *b);
        REQUIRE(s.count == 30000 && a != NULL && b != NULL);
        run_tree(dense, &s, 21, a);
        run_tree(sparse, &s, 21, b);
        uint64_t differ = 0;
        for (size_t i = 0; i < s.count; i++)
            differ += a[i] != b[i];
        CHECK(differ == 0); /* Proposition 3 */
        CHECK_OK(once_tree_get_stats(dense, &ds));
        CHECK_OK(once_tree_get_stats(sparse, &ss));
        const uint64_t N = s.count, D = N - ds.duplicates;
        CHECK(ds.events == N && ss.events == N);
        CHECK(ss.duplicates == ds.duplicates && D > 0 && D < N);
        CHECK(ds.accesses[L - 1] == N);
        CHECK(ss.accesses[L - 1] == N + D);
        uint64_t dense_hits = 0, sparse_hits = 0, dense_low = 0, sparse_low = 0;
        for (uint32_t l = L; l-- > 0;) {
            dense_hits += ds.hits[l];
            sparse_hits += ss.hits[l];
            if (l > 0) {
                CHECK(ds.accesses[l - 1] == ds.accesses[l] - ds.hits[l]);
                CHECK(ss.accesses[l - 1] == ss.accesses[l] - ss.hits[l]);
            }
            /* Duplicates caught at this level or below: dense at least as many. */
            dense_low += ds.hits[l];
            sparse_low += ss.hits[l];
            CHECK(dense_low >= sparse_low);
            CHECK(ds.ruled_out[l] == 0 && ss.ruled_out[l] == 0);
        }
        CHECK(ds.accesses[0] - ds.hits[0] == D);
        CHECK(ss.accesses[0] - ss.hits[0] == 2 * D);
        CHECK(dense_hits == N - D && sparse_hits == N - D);
        /* Locality: the dense leaves catch strictly more (Table 1: 49K against 5K). */
        CHECK(ds.hits[L - 1] > ss.hits[L - 1]);
        CHECK(ds.failures == 0 && ss.failures == 0);
        for (uint32_t l = L; l < ONCE_TREE_MAX_LEVELS; l++)
            CHECK(ds.accesses[l] == 0 && ds.hits[l] == 0 && ss.accesses[l] == 0);
        free(a);
        free(b);
        stream_free(&s);
        once_tree_free(dense);
        once_tree_free(sparse);
    }
}

/* ------------------------------------------------------------ top-down testing */

static void top_down_keeps_repeats_and_cuts_false_positives(void)
{
    /* 3 levels, 16 leaves, small nodes: the root fills (false positives for keys from
     * anywhere), the leaves hold a sixteenth of the keys each. */
    enum { LEVELS = 3, EVENTS = 8000 };
    stream s = stream_make(30, EVENTS, 16, 50);
    bool *repeat = ground_truth(&s);
    bool *base = calloc(EVENTS, sizeof *base), *with = calloc(EVENTS, sizeof *with);
    REQUIRE(s.count == EVENTS && repeat != NULL && base != NULL && with != NULL);
    for (int mode = 0; mode < 2; mode++) {
        uint64_t base_fp = 0;
        for (uint32_t d = 0; d < LEVELS; d++) {
            once_tree_config c = config_of((once_tree_mode)mode, LEVELS, 4, 8192, 3, d);
            once_tree *t = make_tree(&c);
            REQUIRE(t != NULL);
            bool *seen = d == 0 ? base : with;
            run_tree(t, &s, 22, seen);
            uint64_t fp = 0, fn = 0, turned = 0, wrong_way = 0;
            for (size_t i = 0; i < s.count; i++) {
                fp += seen[i] && !repeat[i];
                fn += !seen[i] && repeat[i];
                turned += base[i] && !seen[i];
                wrong_way += seen[i] && !base[i];
            }
            CHECK(fn == 0);
            CHECK(wrong_way == 0);
            once_tree_stats st;
            CHECK_OK(once_tree_get_stats(t, &st));
            uint64_t ruled_out = 0;
            for (uint32_t l = 0; l < LEVELS; l++) {
                ruled_out += st.ruled_out[l];
                CHECK(l < d || st.ruled_out[l] == 0);
            }
            if (d == 0) {
                base_fp = fp;
                CHECK(fp > 200); /* the stream gives the heuristic work */
                CHECK(ruled_out == 0);
            } else {
                CHECK(fp < base_fp / 2);
                CHECK(turned == base_fp - fp);
                CHECK(ruled_out >= turned && turned > 0);
            }
            once_tree_free(t);
        }
    }
    free(base);
    free(with);
    free(repeat);
    stream_free(&s);
}

/* ------------------------------------------------------------- windows */

static void windows_keep_definition_4(void)
{
    enum { EVENTS = 40000, STEP = 10, LEVELS = 3, FANOUT = 4, LEAVES = 16 };
    const uint64_t w = 20000, m = 24000; /* 2000 events a window */
    const uint32_t k = 4;
    static uint64_t delivered[EVENTS]; /* key index -> last delivery time + 1 */
    static bool by_filter[EVENTS];
    /* The windowed vertical filter of the same m, k, seed and window (Lemma 1). */
    once_sliced *v = vertical_filter(m, k, 4, w);
    REQUIRE(v != NULL);
    for (uint64_t i = 0; i < EVENTS; i++) {
        uint64_t r = testing_mix(i * 31 + 7), back = i % 3 == 0 ? 6000 : 1500;
        uint64_t id = i >= back && r % 2 == 0 ? i - 1 - (r >> 8) % back : i;
        testing_key key = testing_key_make(28, id);
        CHECK_OK(once_sliced_test_and_add(v, &key, sizeof key, 100000 + i * STEP,
                                          &by_filter[i]));
    }
    once_sliced_free(v);
    for (int mode = 0; mode < 2; mode++)
        for (uint32_t d = 0; d < 2; d++) {
            once_tree_config c = config_of((once_tree_mode)mode, LEVELS, FANOUT, m, k, d);
            c.window_ms = w;
            once_tree *t = make_tree(&c);
            REQUIRE(t != NULL);
            memset(delivered, 0, sizeof delivered);
            uint64_t false_negatives = 0, forgotten = 0, old_repeats = 0, differ = 0,
                     distinct = 0;
            for (uint64_t i = 0; i < EVENTS; i++) {
                /* Repeats from 1500 events back (inside the window) and 6000 (beyond). */
                uint64_t r = testing_mix(i * 31 + 7), back = i % 3 == 0 ? 6000 : 1500;
                uint64_t id = i >= back && r % 2 == 0 ? i - 1 - (r >> 8) % back : i;
                uint64_t u = testing_mix(id ^ r), t_u = 100000 + i * STEP;
                uint64_t leaf = u % 5 != 0 ? testing_mix(id) % LEAVES : (u >> 8) % LEAVES;
                testing_key key = testing_key_make(28, id);
                bool seen = false;
                CHECK_OK(once_tree_test_and_add_at(t, leaf, &key, sizeof key, t_u, &seen));
                bool inside = delivered[id] != 0 && t_u - (delivered[id] - 1) < w;
                false_negatives += inside && !seen;
                old_repeats += delivered[id] != 0 && !inside;
                forgotten += delivered[id] != 0 && !inside && !seen;
                differ += seen != by_filter[i];
                if (!seen) {
                    delivered[id] = t_u + 1;
                    distinct++;
                }
            }
            CHECK(false_negatives == 0);
            CHECK(old_repeats > 1000 && forgotten > old_repeats * 9 / 10);
            once_tree_stats st;
            CHECK_OK(once_tree_get_stats(t, &st));
            CHECK(st.window_ms == w && st.events == EVENTS);
            if (d == 0) {
                CHECK(differ == 0);
                /* Both modes test, then set a distinct event's path: N + D at the leaves. */
                CHECK(st.accesses[LEVELS - 1] == EVENTS + distinct);
            }
            /* Without a time a windowed tree refuses the event. */
            testing_key key = testing_key_make(28, 1);
            bool seen = false;
            CHECK_STATUS(once_tree_test_and_add(t, 0, &key, sizeof key, &seen), ONCE_ERR_INVALID);
            CHECK_STATUS(once_tree_test_and_add_at(t, 0, &key, sizeof key, ONCE_MAX_TIME_MS + 1,
                                                   &seen),
                         ONCE_ERR_TIME);
            once_tree_free(t);
        }
}

/* ----------------------------------------------- sites: caller's, unreachable */

/* The k positions of a key in the trees of these tests (m = 4096, k = 4). */
static void positions_of(const testing_key *key, uint64_t *positions)
{
    once_digest d;
    CHECK_OK(once_digest_with_seed(SEED, key, sizeof *key, &d));
    CHECK_OK(once_standard_positions(4096, 4, &d, positions));
}

static once_tree *tree_over(const once_tree_config *c, flaky_site *store, once_site *sites,
                            uint64_t nodes, int *destroyed)
{
    flaky_sites(store, sites, (int)nodes, destroyed);
    once_tree *t = NULL;
    CHECK_OK(once_tree_create(&t, c, sites));
    return t;
}

static void nodes_are_sites_in_level_order(void)
{
    /* 2 levels, fanout 3: root = site 0, leaves 0..2 = sites 1..3. */
    for (int mode = 0; mode < 2; mode++) {
        once_tree_config c = config_of((once_tree_mode)mode, 2, 3, 4096, 4, 0);
        uint64_t m = 0, nodes = 0, leaves = 0;
        uint32_t k = 0;
        CHECK_OK(once_tree_geometry(&c, &m, &k, &nodes, &leaves));
        CHECK(m == 4096 && k == 4 && nodes == 4 && leaves == 3);
        flaky_site store[4];
        once_site sites[4];
        int destroyed = 0;
        once_tree *t = tree_over(&c, store, sites, 4, &destroyed);
        REQUIRE(t != NULL);
        testing_key u = testing_key_make(23, 1);
        bool seen = true;
        CHECK_OK(once_tree_test_and_add(t, 2, &u, sizeof u, &seen));
        CHECK(!seen);
        CHECK(!flaky_empty(&store[0]) && !flaky_empty(&store[3]));
        CHECK(flaky_empty(&store[1]) && flaky_empty(&store[2]));
        /* Found at its leaf: the root, down, is not asked. */
        store[0].down = true;
        CHECK_OK(once_tree_test_and_add(t, 2, &u, sizeof u, &seen));
        CHECK(seen);
        /* From another leaf it needs the root: unavailable, nothing decided. */
        CHECK_STATUS(once_tree_test_and_add(t, 0, &u, sizeof u, &seen), ONCE_ERR_UNAVAILABLE);
        once_tree_stats st;
        CHECK_OK(once_tree_get_stats(t, &st));
        CHECK(st.events == 2 && st.duplicates == 1 && st.failures == 1);
        CHECK(st.accesses[0] == (mode == ONCE_TREE_SPARSE ? 3u : 2u));
        store[0].down = false;
        CHECK_OK(once_tree_test_and_add(t, 0, &u, sizeof u, &seen));
        CHECK(seen);
        once_tree_free(t);
        CHECK(destroyed == 4);
    }
}

static void unreachable_nodes_fail_the_call(void)
{
    enum { NODES = 7 }; /* 3 levels, fanout 2: root 0; 1, 2; leaves 3..6 */
    flaky_site store[NODES];
    once_site sites[NODES];
    int destroyed = 0;

    /* Top-down testing that needs a node that is down. */
    once_tree_config c = config_of(ONCE_TREE_SPARSE, 3, 2, 4096, 4, 1);
    once_tree *t = tree_over(&c, store, sites, NODES, &destroyed);
    REQUIRE(t != NULL);
    testing_key u = testing_key_make(24, 1), v = testing_key_make(24, 2);
    bool seen = true;
    CHECK_OK(once_tree_test_and_add(t, 0, &u, sizeof u, &seen)); /* leaf 0: nodes 3, 1, 0 */
    CHECK(!seen);
    store[1].down = true;
    /* From leaf 2 (node 5): misses at 5 and 2, matches at the root, whose check asks
     * node 1. */
    CHECK_STATUS(once_tree_test_and_add(t, 2, &u, sizeof u, &seen), ONCE_ERR_UNAVAILABLE);
    store[1].down = false;
    CHECK_OK(once_tree_test_and_add(t, 2, &u, sizeof u, &seen));
    CHECK(seen);

    /* Sparse: a leaf that cannot be set fails the call; the root, set first, holds the
     * event, the leaf does not. */
    store[6].refuse_sets = true;
    CHECK_STATUS(once_tree_test_and_add(t, 3, &v, sizeof v, &seen), ONCE_ERR_UNAVAILABLE);
    uint64_t pos[4];
    positions_of(&v, pos);
    CHECK(flaky_has(&store[0], pos, 4) && flaky_has(&store[2], pos, 4));
    CHECK(flaky_empty(&store[6]));
    once_tree_stats st;
    CHECK_OK(once_tree_get_stats(t, &st));
    CHECK(st.events == 2 && st.failures == 2);
    once_tree_free(t);
    CHECK(destroyed == NODES);

    /* Dense: the leaf's test-and-set is done when its parent is down. */
    destroyed = 0;
    c = config_of(ONCE_TREE_DENSE, 3, 2, 4096, 4, 0);
    t = tree_over(&c, store, sites, NODES, &destroyed);
    REQUIRE(t != NULL);
    store[2].down = true;
    CHECK_STATUS(once_tree_test_and_add(t, 3, &v, sizeof v, &seen), ONCE_ERR_UNAVAILABLE);
    CHECK(!flaky_empty(&store[6]) && flaky_empty(&store[0]));
    once_tree_free(t);
    CHECK(destroyed == NODES);

    /* A site without run: refused, and the caller keeps every site. */
    destroyed = 0;
    for (int i = 0; i < NODES; i++)
        sites[i] = (once_site){.context = &store[i], .run = flaky_run, .destroy = flaky_destroy};
    sites[4].run = NULL;
    t = NULL;
    CHECK_STATUS(once_tree_create(&t, &c, sites), ONCE_ERR_INVALID);
    CHECK(t == NULL && destroyed == 0);
}

/* The paper stops at a ruled-out match and calls the event distinct; we go on up. */
static void ruled_out_match_goes_on_up(void)
{
    enum { NODES = 7 }; /* 3 levels, fanout 2: root 0; 1, 2; leaves 3..6 */
    for (int mode = 0; mode < 2; mode++) {
        flaky_site store[NODES];
        once_site sites[NODES];
        int destroyed = 0;
        once_tree_config c = config_of((once_tree_mode)mode, 3, 2, 4096, 4, 2);
        once_tree *t = tree_over(&c, store, sites, NODES, &destroyed);
        REQUIRE(t != NULL);
        testing_key u = testing_key_make(25, 7);
        bool seen = true;
        CHECK_OK(once_tree_test_and_add(t, 0, &u, sizeof u, &seen)); /* nodes 3, 1, 0 */
        CHECK(!seen);
        /* A false positive for u at node 2 (over leaves 2 and 3), which its subtree does
         * not explain; the root holds u already, so every node stays a subset of its
         * parent. */
        uint64_t pos[4];
        positions_of(&u, pos);
        CHECK(flaky_has(&store[0], pos, 4) && !flaky_has(&store[2], pos, 4));
        flaky_set(&store[2], pos, 4);
        /* From leaf 3 (node 6): miss at 6; match at 2 (level 1 < d = 2), whose other
         * child, node 5, misses: ruled out; on to the root, whose check finds node 1,
         * then node 3 at level 2. */
        CHECK_OK(once_tree_test_and_add(t, 3, &u, sizeof u, &seen));
        CHECK(seen);
        once_tree_stats st;
        CHECK_OK(once_tree_get_stats(t, &st));
        CHECK(st.ruled_out[1] == 1 && st.ruled_out[0] == 0 && st.duplicates == 1);
        /* Level 2: node 3 (sparse: test and set; dense: one test-and-set), then 6, 5,
         * and 3 and 4. */
        CHECK(st.accesses[2] == (mode == ONCE_TREE_SPARSE ? 6u : 5u));
        once_tree_free(t);
        CHECK(destroyed == NODES);
    }
}

/* ------------------------------------------------------------- refusals */

static void invalid_configs_refused(void)
{
    once_tree *t = NULL;
    const once_tree_config c = config_of(ONCE_TREE_SPARSE, 3, 4, 4096, 4, 1);
    once_tree_config bad = c;
    bad.levels = 0;
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_INVALID);
    bad.levels = ONCE_TREE_MAX_LEVELS + 1;
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.fanout = 0;
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.mode = (once_tree_mode)7;
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.hashes = 65;
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.top_down_level = 3; /* past the leaves */
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.bits = 0; /* and no capacity */
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_INVALID);
    bad.capacity = 1000;
    bad.error = 1.5;
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.root_slices = ONCE_MAX_SLICED_SITES + 1;
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_INVALID);
    bad.root_slices = 4096;
    bad.bits = 4000; /* more slices than positions */
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_INVALID);
    bad = c;
    bad.window_ms = ONCE_MAX_TIME_MS / 2 + 1;
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_INVALID);
    bad.window_ms = 1000;
    bad.bits = (UINT64_C(1) << 34) + 64; /* past a windowed node's timers */
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_TOO_LARGE);
    bad = c;
    bad.bits = (UINT64_C(1) << 40) + 1;
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_TOO_LARGE);
    bad = c;
    bad.levels = 16;
    bad.fanout = 4; /* 4^15 leaves */
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_TOO_LARGE);
    bad.levels = 2;
    bad.fanout = UINT32_MAX;
    bad.top_down_level = 0;
    CHECK_STATUS(once_tree_create(&t, &bad, NULL), ONCE_ERR_TOO_LARGE);
    CHECK(t == NULL);
    CHECK_STATUS(once_tree_create(NULL, &c, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_tree_create(&t, NULL, NULL), ONCE_ERR_INVALID);

    /* Derived from capacity and error: the standard filter's geometry. */
    once_tree_config derived = c;
    derived.bits = 0;
    derived.hashes = 0;
    derived.capacity = 10000;
    derived.error = 0.01;
    uint64_t m = 0, plain = 0, nodes = 0, leaves = 0;
    uint32_t k = 0, plain_k = 0;
    CHECK_OK(once_tree_geometry(&derived, &m, &k, &nodes, &leaves));
    CHECK_OK(once_plan(ONCE_STANDARD, 10000, 0.01, &plain, &plain_k));
    CHECK(m == plain && k == plain_k && nodes == 1 + 4 + 16 && leaves == 16);
    /* One level: one filter, whatever the fanout. */
    once_tree_config single = c;
    single.levels = 1;
    single.fanout = 1000;
    single.top_down_level = 0;
    CHECK_OK(once_tree_geometry(&single, &m, &k, &nodes, &leaves));
    CHECK(nodes == 1 && leaves == 1);

    /* Arguments of a call. */
    CHECK_OK(once_tree_create(&t, &c, NULL));
    REQUIRE(t != NULL);
    testing_key key = testing_key_make(26, 1);
    bool seen = false;
    CHECK_STATUS(once_tree_test_and_add(t, 16, &key, sizeof key, &seen), ONCE_ERR_INVALID);
    CHECK_STATUS(once_tree_test_and_add(t, 0, NULL, 4, &seen), ONCE_ERR_INVALID);
    CHECK_STATUS(once_tree_test_and_add(t, 0, &key, sizeof key, NULL), ONCE_ERR_INVALID);
    CHECK_STATUS(once_tree_test_and_add(NULL, 0, &key, sizeof key, &seen), ONCE_ERR_INVALID);
    CHECK_OK(once_tree_test_and_add(t, 15, NULL, 0, &seen)); /* the empty key is a key */
    CHECK(!seen);
    CHECK_STATUS(once_tree_get_stats(t, NULL), ONCE_ERR_INVALID);
    once_tree_free(t);
    once_tree_free(NULL);
}

/* An allocator that fails from its Nth call on, and counts the blocks alive. */
static long alloc_budget, alloc_live;

static void *budget_malloc(size_t size)
{
    if (alloc_budget-- <= 0)
        return NULL;
    void *p = malloc(size);
    alloc_live += p != NULL;
    return p;
}
static void *budget_calloc(size_t count, size_t size)
{
    if (alloc_budget-- <= 0)
        return NULL;
    void *p = calloc(count, size);
    alloc_live += p != NULL;
    return p;
}
static void *budget_realloc(void *block, size_t size)
{
    if (alloc_budget-- <= 0)
        return NULL;
    void *p = realloc(block, size);
    alloc_live += block == NULL && p != NULL;
    return p;
}
static void budget_free(void *block)
{
    alloc_live -= block != NULL;
    free(block);
}

static void allocation_failures_leave_nothing(void)
{
    const once_allocator budget = {budget_malloc, budget_calloc, budget_realloc, budget_free};
    REQUIRE(once_set_allocator(&budget) == ONCE_OK);
    once_tree_config c = config_of(ONCE_TREE_DENSE, 3, 3, 1000, 4, 2);
    bool created = false;
    for (long n = 0; n < 100 && !created; n++) {
        alloc_budget = n;
        once_tree *t = NULL;
        once_status st = once_tree_create(&t, &c, NULL);
        CHECK(st == ONCE_OK || st == ONCE_ERR_NOMEM);
        if (st == ONCE_OK) {
            created = true;
            CHECK(n >= 1 + 3 + 13); /* the tree, its arrays, its 13 nodes */
            testing_key key = testing_key_make(27, 1);
            bool seen = true;
            CHECK_OK(once_tree_test_and_add(t, 8, &key, sizeof key, &seen));
            CHECK(!seen);
            once_tree_free(t);
        } else {
            CHECK(t == NULL && alloc_live == 0);
        }
    }
    CHECK(created && alloc_live == 0);
    CHECK_OK(once_set_allocator(NULL));
}

static void never_run(void *context, once_site_request *requests, size_t count)
{
    (void)context;
    for (size_t i = 0; i < count; i++)
        requests[i].status = ONCE_ERR_UNAVAILABLE;
}

typedef struct tree_racer {
    racing_lane lane;  /* first: what racing_run reads */
    once_tree_config config;
    shared_site *root; /* shared */
    uint32_t leaf;     /* this producer's, in its own memory */
} tree_racer;

enum { RACE_LEAVES = 4, RACE_KEYS = 2000 };

static void *tree_race(void *argument)
{
    tree_racer *r = argument;
    once_site sites[1 + RACE_LEAVES];
    sites[0] = (once_site){.context = r->root, .run = shared_run};
    for (uint32_t i = 0; i < RACE_LEAVES; i++)
        sites[1 + i] = (once_site){.run = never_run};
    once_memory_site_config leaf = {.bits = r->config.bits, .window_ms = r->config.window_ms};
    if ((r->lane.status = once_memory_site_create(&leaf, &sites[1 + r->leaf])) != ONCE_OK)
        return NULL;
    once_tree *t = NULL;
    if ((r->lane.status = once_tree_create(&t, &r->config, sites)) != ONCE_OK) {
        sites[1 + r->leaf].destroy(sites[1 + r->leaf].context);
        return NULL;
    }
    for (uint64_t i = 0; i < RACE_KEYS && r->lane.status == ONCE_OK; i++) {
        testing_key key = testing_key_make(41, i);
        bool seen = true;
        r->lane.status = once_tree_test_and_add_at(t, r->leaf, &key, sizeof key, 1000 + i, &seen);
        r->lane.delivered[i] += !seen;
    }
    once_tree_free(t);
    return NULL;
}

/* Producers at every leaf of a tree whose root they share, each offering every key at
 * once: a walk that tests and then sets (a window, or sparse) claims its nodes, so no
 * key is delivered twice between them (but for false positives, each once). */
static void racing_producers_deliver_once_with_claims(void)
{
    const struct {
        once_tree_mode mode;
        uint64_t window_ms;
    } modes[] = {{ONCE_TREE_DENSE, 3600000}, {ONCE_TREE_SPARSE, 0}, {ONCE_TREE_SPARSE, 3600000}};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        once_tree_config c = config_of(modes[m].mode, 2, RACE_LEAVES, 1 << 16, 6, 0);
        c.window_ms = modes[m].window_ms;
        c.claims = true;
        shared_site root;
        once_memory_site_config mc = {.bits = c.bits, .window_ms = c.window_ms};
        CHECK_OK(once_memory_site_create(&mc, &root.inner));
        pthread_mutex_init(&root.lock, NULL);
        tree_racer racers[RACE_LEAVES];
        for (uint32_t p = 0; p < RACE_LEAVES; p++)
            racers[p] = (tree_racer){{NULL, ONCE_OK}, c, &root, p};
        /* Never delivered: 2,000 keys in 2^16 bits, k = 6, a rate near 1e-9. */
        racing_expect(racers, sizeof racers[0], RACE_LEAVES, RACE_KEYS, tree_race, 2, m);
        root.inner.destroy(root.inner.context);
        pthread_mutex_destroy(&root.lock);
    }
    /* Claims are refused with threads of one tree and with top-down testing. */
    once_tree_config c = config_of(ONCE_TREE_SPARSE, 3, 2, 4096, 4, 1);
    c.claims = true;
    once_tree *t = NULL;
    CHECK_STATUS(once_tree_create(&t, &c, NULL), ONCE_ERR_INVALID);
    c.top_down_level = 0;
    c.concurrent = true;
    CHECK_STATUS(once_tree_create(&t, &c, NULL), ONCE_ERR_INVALID);
}

static const testing_case cases[] = {
    {"decisions_equal_a_single_filter", decisions_equal_a_single_filter},
    {"sliced_root_meets_lemma_1", sliced_root_meets_lemma_1},
    {"vertical_site_decides_as_one_site", vertical_site_decides_as_one_site},
    {"table1_access_and_hit_identities", table1_access_and_hit_identities},
    {"top_down_keeps_repeats_and_cuts_false_positives",
     top_down_keeps_repeats_and_cuts_false_positives},
    {"ruled_out_match_goes_on_up", ruled_out_match_goes_on_up},
    {"windows_keep_definition_4", windows_keep_definition_4},
    {"nodes_are_sites_in_level_order", nodes_are_sites_in_level_order},
    {"unreachable_nodes_fail_the_call", unreachable_nodes_fail_the_call},
    {"racing_producers_deliver_once_with_claims", racing_producers_deliver_once_with_claims},
    {"invalid_configs_refused", invalid_configs_refused},
    {"allocation_failures_leave_nothing", allocation_failures_leave_nothing},
};

TESTING_MAIN(cases)
