/*
 * test_roundtrip.c - what the library builds or reaches, it saves, and what it saves
 * loads again and answers alike.
 *
 * The loader refuses every state it considers impossible; so each state an operation
 * reaches from a filter the library accepted (built by once_create, or loaded) must be
 * one the loader accepts, or a user's saved dedup state is lost.  These cases drive
 * every structure, from edge configurations and from the committed fuzz corpus,
 * through seeded random operations, and at random points replace one of two lockstep
 * copies by its own reload: both must keep giving the same answers, statuses, counts
 * and saved bytes.  A failure prints the structure, configuration, seed and step.
 */
#include "testing.h"

#include <dirent.h>

/* --------------------------------------------------------------- helpers */

/* The operations the driver picks from. */
enum {
    OP_TEST_AND_ADD,
    OP_ADD,
    OP_QUERY,
    OP_BATCH,
    OP_REMOVE,
    OP_TIME,
    OP_CLEAR,
    OP_UNION,
    OP_INTERSECT,
    OP_REDUCE,
    OP_MERGE,
    OP_RELOAD,
    OP_KINDS
};

static const char *const op_names[OP_KINDS] = {
    "test_and_add", "add",       "query",  "batch", "remove", "time",
    "clear",        "union",     "intersect", "reduce", "merge", "reload",
};

typedef struct drive_ctx {
    const char *label; /* structure and configuration, for failure messages */
    uint64_t seed;
    int step;
    int op;
    int failed;
} drive_ctx;

static void drive_fail(drive_ctx *c, const char *what)
{
    fprintf(stderr, "%s: seed %" PRIu64 ", step %d (%s): %s\n", c->label, c->seed, c->step,
            c->op >= 0 ? op_names[c->op] : "start", what);
    testing_failures++;
    c->failed = 1;
}

static uint64_t rng_next(uint64_t *state)
{
    *state = testing_mix(*state);
    return *state;
}

/* Reload `f` from its own saved bytes; NULL (after saying why) if that fails.  Every
 * other reload goes through a chunked dump, its chunk bound cycling from the least the
 * filter takes upwards, so every state reached is also dumped and loaded in chunks. */
static once_filter *reload(drive_ctx *c, const once_filter *f)
{
    static uint64_t reloads;
    size_t len = 0;
    uint8_t *saved = testing_save(f, &len);
    if (saved == NULL) {
        drive_fail(c, "filter does not save");
        return NULL;
    }
    once_filter *g = NULL;
    once_status st = ONCE_OK;
    if (reloads++ % 2) {
        g = testing_chunk_reload(f, once_save_chunk_min(f) + 8 * (reloads % 97));
        if (g == NULL) {
            drive_fail(c, "chunked dump does not load again");
            free(saved);
            return NULL;
        }
    } else {
        uint8_t *copy = testing_copy_exact(saved, len);
        st = once_load(&g, copy, len);
        free(copy);
    }
    if (st != ONCE_OK) {
        fprintf(stderr, "once_load: %s\n", once_strerror(st));
        drive_fail(c, "saved filter does not load again");
        once_free_buffer(saved);
        return NULL;
    }
    size_t again_len = 0;
    uint8_t *again = testing_save(g, &again_len);
    if (again == NULL || again_len != len || memcmp(again, saved, len) != 0)
        drive_fail(c, "reloaded filter saves to other bytes");
    once_free_buffer(again);
    once_free_buffer(saved);
    return g;
}

/* Compare two filters that should be in the same state. */
static void compare(drive_ctx *c, const once_filter *a, const once_filter *b)
{
    if (once_items(a) != once_items(b))
        drive_fail(c, "items differ");
    if (!testing_same_save(a, b))
        drive_fail(c, "saved bytes differ");
}

/*
 * Drive `a` through `steps` random operations from `seed`, starting at time `now`.
 * A lockstep twin starts as a's reload and is replaced by its own reload at random
 * points; every operation is applied to both and must answer alike.  Takes `a`.
 */
static void drive(once_filter *a, const char *label, uint64_t seed, int steps, uint64_t now,
                  uint64_t universe)
{
    drive_ctx c = {label, seed, 0, -1, 0};
    once_filter *b = reload(&c, a);
    if (b == NULL) {
        once_free(a);
        return;
    }
    once_stats s0 = testing_stats(a);
    uint64_t span = s0.span_ms ? s0.span_ms : 1000;
    uint64_t rng = seed;
    /* An earlier state, the partner of unions and intersections (same geometry). */
    size_t snap_len = 0;
    uint8_t *snap = testing_save(a, &snap_len);

    for (c.step = 0; c.step < steps && !c.failed; c.step++) {
        uint64_t r = rng_next(&rng);
        /* Mostly keys; the rarer operations a few percent each. */
        uint64_t pick = r % 100;
        c.op = pick < 35   ? OP_TEST_AND_ADD
               : pick < 50 ? OP_ADD
               : pick < 60 ? OP_QUERY
               : pick < 70 ? OP_BATCH
               : pick < 76 ? OP_REMOVE
               : pick < 86 ? OP_TIME
               : pick < 87 ? OP_CLEAR
               : pick < 89 ? OP_UNION
               : pick < 90 ? OP_INTERSECT
               : pick < 91 ? OP_REDUCE
               : pick < 92 ? OP_MERGE
                           : OP_RELOAD;
        uint64_t key = rng_next(&rng) % universe;
        once_status sa = ONCE_OK, sb = ONCE_OK;
        bool ya = false, yb = false;
        switch (c.op) {
        case OP_TEST_AND_ADD:
            sa = once_test_and_add(a, &key, sizeof key, now, &ya);
            sb = once_test_and_add(b, &key, sizeof key, now, &yb);
            break;
        case OP_ADD:
            sa = once_add(a, &key, sizeof key, now);
            sb = once_add(b, &key, sizeof key, now);
            break;
        case OP_QUERY:
            sa = once_query(a, &key, sizeof key, now, &ya);
            sb = once_query(b, &key, sizeof key, now, &yb);
            break;
        case OP_BATCH: {
            uint64_t ks[8];
            once_key keys[8];
            size_t n = 1 + rng_next(&rng) % 8;
            for (size_t i = 0; i < n; i++) {
                ks[i] = rng_next(&rng) % universe;
                keys[i].data = &ks[i];
                keys[i].len = sizeof ks[i];
                keys[i].time_ms = now + i * (span / 50);
            }
            uint8_t oa[8] = {0}, ob[8] = {0};
            if (r & 1) {
                sa = once_test_and_add_batch(a, keys, n, oa);
                sb = once_test_and_add_batch(b, keys, n, ob);
            } else {
                sa = once_query_batch(a, keys, n, oa);
                sb = once_query_batch(b, keys, n, ob);
            }
            ya = memcmp(oa, ob, n) != 0;
            now += (n - 1) * (span / 50);
            break;
        }
        case OP_REMOVE:
            sa = once_remove(a, &key, sizeof key, now);
            sb = once_remove(b, &key, sizeof key, now);
            break;
        case OP_TIME: {
            /* Small steps, a jump past the span, or a clock that goes back. */
            uint64_t how = rng_next(&rng) % 10;
            uint64_t delta = how < 6 ? rng_next(&rng) % (span / 4 + 1)
                             : how < 8 ? span + rng_next(&rng) % (3 * span)
                                       : 0;
            if (how >= 8 && now > span / 8)
                now -= rng_next(&rng) % (span / 8 + 1);
            now += delta;
            break;
        }
        case OP_CLEAR:
            sa = once_clear(a);
            sb = once_clear(b);
            break;
        case OP_UNION:
        case OP_INTERSECT: {
            once_filter *pa = NULL, *pb = NULL;
            if (snap == NULL || once_load(&pa, snap, snap_len) != ONCE_OK ||
                once_load(&pb, snap, snap_len) != ONCE_OK) {
                drive_fail(&c, "snapshot does not load");
            } else if (rng_next(&rng) % 2) {
                /* The earlier state into the current one. */
                sa = c.op == OP_UNION ? once_union(a, pa) : once_intersect(a, pa);
                sb = c.op == OP_UNION ? once_union(b, pb) : once_intersect(b, pb);
            } else {
                /* The current state into the earlier one (its clock behind the
                 * other's), which must then save and load too. */
                sa = c.op == OP_UNION ? once_union(pa, a) : once_intersect(pa, a);
                sb = c.op == OP_UNION ? once_union(pb, b) : once_intersect(pb, b);
                compare(&c, pa, pb);
                once_free(reload(&c, pa));
            }
            once_free(pa);
            once_free(pb);
            break;
        }
        case OP_REDUCE: {
            once_bpbf_state st;
            if (once_bpbf_get_state(a, &st) == ONCE_OK && st.geometry.blocks > 1) {
                uint32_t to = 1 + (uint32_t)(rng_next(&rng) % st.geometry.blocks);
                sa = once_bpbf_reduce(a, to);
                sb = once_bpbf_reduce(b, to);
                once_free_buffer(snap); /* the partner must keep the geometry */
                snap = testing_save(a, &snap_len);
            }
            break;
        }
        case OP_MERGE:
            sa = once_dbf_merge(a);
            sb = once_dbf_merge(b);
            break;
        case OP_RELOAD: {
            once_filter *g = reload(&c, b);
            if (g != NULL) {
                once_free(b);
                b = g;
            }
            if (rng_next(&rng) % 4 == 0) { /* a new partner for the combinations */
                once_free_buffer(snap);
                snap = testing_save(a, &snap_len);
            }
            break;
        }
        }
        if (sa != sb)
            drive_fail(&c, "statuses differ");
        if (ya != yb)
            drive_fail(&c, "answers differ");
        if (c.op != OP_QUERY && c.op != OP_TIME)
            compare(&c, a, b);
    }
    /* The end state too must load again. */
    c.op = OP_RELOAD;
    once_filter *g = c.failed ? NULL : reload(&c, a);
    once_free(g);
    once_free_buffer(snap);
    once_free(a);
    once_free(b);
}

/* ------------------------------------------------ configurations to drive */

typedef struct named_config {
    const char *name;
    once_config config;
    uint64_t start_ms;
} named_config;

/* Small and edge configurations of every structure: tiny sizes, one probe and the
 * most, tiny rows and batches, caps that refuse, both policies, clocks near the top. */
static size_t edge_configs(named_config *out, size_t room)
{
    size_t n = 0;
#define ADD_CONFIG(NAME, TYPE, START, ...)                                                      \
    do {                                                                                        \
        if (n < room) {                                                                         \
            named_config *nc = &out[n++];                                                       \
            *nc = (named_config){NAME, testing_config_any_kind(TYPE, 50, 40, 1000, 0x5eed + n), \
                                 START};                                                        \
            once_config *c = &nc->config;                                                       \
            __VA_ARGS__;                                                                        \
        }                                                                                       \
    } while (0)
    const uint64_t late = UINT64_C(1) << 62;
    ADD_CONFIG("standard planned", ONCE_STANDARD, 0, (void)c);
    ADD_CONFIG("standard 64 bits k=1", ONCE_STANDARD, 0, c->bits = 64; c->hashes = 1);
    ADD_CONFIG("standard 1 bit k=64", ONCE_STANDARD, 0, c->bits = 1; c->hashes = 64);
    ADD_CONFIG("partitioned 99 bits k=3", ONCE_PARTITIONED, 0, c->bits = 99; c->hashes = 3);
    ADD_CONFIG("blocked 512 bits k=16", ONCE_BLOCKED, 0, c->bits = 512; c->hashes = 16);
    ADD_CONFIG("counting 16 counters k=2", ONCE_COUNTING, 0, c->bits = 16; c->hashes = 2);
    ADD_CONFIG("counting planned", ONCE_COUNTING, 0, (void)c);
    ADD_CONFIG("apbf planned", ONCE_APBF, 0, (void)c);
    ADD_CONFIG("apbf k=1 l=1 refresh", ONCE_APBF, 0,
               c->hashes = 1; c->age_slices = 1; c->window = 3; c->policy = ONCE_POLICY_REFRESH);
    ADD_CONFIG("apbf 64-bit segments", ONCE_APBF, 0, c->bits = 64; c->window = 0);
    ADD_CONFIG("apbbf planned", ONCE_APBBF, 0, (void)c);
    ADD_CONFIG("apbbf 64-bit blocks refresh", ONCE_APBBF, 0,
               c->block_bits = 64; c->block_hashes = 4; c->policy = ONCE_POLICY_REFRESH);
    ADD_CONFIG("tlbf planned", ONCE_TLBF, 0, (void)c);
    ADD_CONFIG("tlbf k=1 l=1 span 1", ONCE_TLBF, 0,
               c->hashes = 1; c->age_slices = 1; c->span_ms = 1; c->capacity = 1);
    /* The cap counts the slice table (room for 64 (k + l) slices, 33 KiB here): about
     * 4 KiB is left for the slices. */
    ADD_CONFIG("tlbf capped refresh late", ONCE_TLBF, late,
               c->max_bytes = 40 << 10; c->policy = ONCE_POLICY_REFRESH);
    ADD_CONFIG("timer planned", ONCE_TIMER, 0, (void)c);
    ADD_CONFIG("timer 8-bit equal timers", ONCE_TIMER, 0,
               c->timer_bits = 8; c->equal_timers = 2; c->hashes = 4; c->bits = 200);
    ADD_CONFIG("timer 1 timer", ONCE_TIMER, 0, c->bits = 1);
    ADD_CONFIG("timer dynamic capped late", ONCE_TIMER, late,
               c->dynamic = true; c->timer_bits = 32; c->max_bytes = 8192);
    ADD_CONFIG("timer 32-bit span 1 refresh", ONCE_TIMER, 0,
               c->timer_bits = 32; c->span_ms = 1; c->policy = ONCE_POLICY_REFRESH);
    ADD_CONFIG("scalable", ONCE_SCALABLE, 0, c->capacity = 10; c->error = 0.05);
    ADD_CONFIG("scalable non-scaling", ONCE_SCALABLE, 0, c->capacity = 10; c->expansion = 0);
    ADD_CONFIG("scalable capped x1 r=0.9", ONCE_SCALABLE, 0,
               c->capacity = 5; c->expansion = 1; c->tightening = 0.9; c->max_bytes = 1200);
    ADD_CONFIG("dbf rows of 1, bit slices", ONCE_DBF, 0,
               c->capacity = 1; c->bits = 7; c->hashes = 3; c->bit_slice = true);
    ADD_CONFIG("dbf rows of 10", ONCE_DBF, 0, c->capacity = 10; c->bits = 100; c->hashes = 3);
    ADD_CONFIG("dbf query first, capped", ONCE_DBF, 0,
               c->capacity = 3; c->bits = 64; c->hashes = 2; c->query_before_insert = true;
               c->max_bytes = 2000);
    ADD_CONFIG("dbf 2 counters", ONCE_DBF, 0, c->bits = 2);
    ADD_CONFIG("bpbf 4 blocks of 64", ONCE_BPBF, 0,
               c->block_length = 64; c->blocks = 4; c->hashes = 1);
    ADD_CONFIG("bpbf 3 blocks of 100 k=2", ONCE_BPBF, 0,
               c->block_length = 100; c->blocks = 3; c->hashes = 2);
    ADD_CONFIG("dbpbf batches of 15, capped", ONCE_DBPBF, 0,
               c->block_length = 100; c->blocks = 3; c->hashes = 2; c->batch_threshold = 15;
               c->max_bytes = 4096);
    ADD_CONFIG("dbpbf batches of 1", ONCE_DBPBF, 0,
               c->block_length = 64; c->blocks = 2; c->hashes = 1; c->batch_threshold = 1;
               c->max_bytes = 8192);
    ADD_CONFIG("dbpbf large threshold", ONCE_DBPBF, 0, c->batch_threshold = 1000000);
#undef ADD_CONFIG
    return n;
}

/* ------------------------------------------------------------------ cases */

/* A filter of every edge configuration, driven from several seeds. */
static void random_operations_reload_alike(void)
{
    named_config configs[64];
    size_t n = edge_configs(configs, 64);
    for (size_t i = 0; i < n; i++) {
        char label[128];
        snprintf(label, sizeof label, "%s (%s)", once_type_name(configs[i].config.type),
                 configs[i].name);
        for (uint64_t trial = 0; trial < 8; trial++) {
            once_filter *f = testing_create(&configs[i].config);
            if (f == NULL) {
                fprintf(stderr, "%s: refused\n", label);
                testing_failures++;
                break;
            }
            uint64_t universe = trial % 2 ? 40 : 400;
            drive(f, label, 1000 * i + trial, 1000, configs[i].start_ms, universe);
        }
    }
}

/* The loader fuzzer's regression: a DBF whose saved version is 2 below 2^64 (rows of
 * one key, bit slices).  It loads; five test-and-adds used to wrap its version and
 * stamp rows above it, and the result did not load again. */
static void dbf_version_use(once_filter *f, uint64_t version);

static const char dbf_version_input[] =
    "T05DRQEACgADIO1d//sAAAAAAAAAAAAACgAAAAAAAABArFruz1SrPzgAAAAAAAAABwAAAAAAAAADAAAAAAAAAAEA"
    "AAAAAAAAAgAAAAAAAAAAAABAAAAAAAEAAAAAAAAA/v////////9QAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAqjfBfxty"
    "K2U=";

static size_t base64_decode(const char *in, uint8_t *out, size_t room)
{
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (const char *p = in; *p && *p != '='; p++) {
        const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *at = strchr(alphabet, *p);
        if (at == NULL)
            continue;
        acc = acc << 6 | (uint32_t)(at - alphabet);
        bits += 6;
        if (bits >= 8 && n < room) {
            bits -= 8;
            out[n++] = (uint8_t)(acc >> bits);
        }
    }
    return n;
}

/* Where the DBF's version sits in its saved parameters (lib/grow/dbf.c: cells, hashes, row
 * capacity, flags, max_bytes, rows, version). */
#define DBF_VERSION_OFFSET (HEADER + 6 * 8)

/* The input as found, then with its version moved to the few changes below the limit
 * the loader accepts (2^62), and at the limit itself: whatever loads must take changes
 * past the limit and load again. */
static void dbf_version_limit_survives_use(void)
{
    uint8_t file[512];
    size_t len = base64_decode(dbf_version_input, file, sizeof file);
    REQUIRE(len > DBF_VERSION_OFFSET + 8);
    const uint64_t limit = UINT64_C(1) << 62;
    const uint64_t versions[] = {0, limit - 3, limit - 1, limit, limit + 1};
    for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
        if (versions[v] != 0)
            testing_put_le(file + DBF_VERSION_OFFSET, versions[v], 8);
        testing_reseal(file, len); /* the fuzz build skipped the checksum */
        once_filter *f = NULL;
        once_status st = once_load(&f, file, len);
        /* Either refused outright, or usable: never accepted and then lost. */
        if (st != ONCE_OK) {
            CHECK_STATUS(st, ONCE_ERR_CORRUPT);
            CHECK(versions[v] == 0 || versions[v] > limit);
            continue;
        }
        CHECK(versions[v] != 0 && versions[v] <= limit);
        dbf_version_use(f, versions[v]);
    }
}

/* A DBF at saved version `version`: the regression's five test-and-adds, a reload,
 * an export from the saturated version refused, then random operations. */
static void dbf_version_use(once_filter *f, uint64_t version)
{
    static const char *const keys[] = {"", "a", "once", "a longer key, past 16 bytes", "\1"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        bool seen = true;
        CHECK_OK(once_test_and_add(f, keys[i], strlen(keys[i]), 0, &seen));
    }
    drive_ctx c = {"dbf near the version limit", 0, 0, -1, 0};
    once_filter *g = reload(&c, f);
    REQUIRE(g != NULL);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        bool present = false;
        CHECK_OK(once_query(g, keys[i], strlen(keys[i]), 0, &present));
        CHECK(present);
    }
    CHECK(once_dbf_version(g) == (UINT64_C(1) << 62));
    /* A delta from a new DBF still describes it; one from the saturated version could
     * not tell later changes from the base, so it is refused. */
    void *delta = NULL;
    size_t delta_len = 0;
    CHECK_OK(once_dbf_export_delta(g, 0, &delta, &delta_len));
    once_free_buffer(delta);
    bool seen = false;
    CHECK_OK(once_test_and_add(g, "later", 5, 0, &seen));
    CHECK_STATUS(once_dbf_export_delta(g, once_dbf_version(g), &delta, &delta_len),
                 ONCE_ERR_MISMATCH);
    once_free(g);
    /* And on through many more changes, with reloads on the way. */
    drive(f, "dbf near the version limit", version, 300, 0, 100);
}

/* Where the TLBF's serial sits in its saved parameters (lib/window/tlbf.c: k, l, span,
 * policy, max_bytes, max_slices, slices, countdown, target, generation size and start,
 * latest, started, serial). */
#define TLBF_SERIAL_OFFSET (HEADER + 13 * 8)

/* The TLBF numbers its slices; only the number mod k is used (a slice's hash index).
 * A saved serial near 2^64 must not wrap into a number whose residue breaks the run
 * of indices: consecutive slices would share a hash function (keys lost) and the
 * loader would refuse the saved result.  k = 3 does not divide 2^64. */
static void tlbf_serial_near_limit(void)
{
    once_config c = testing_config(ONCE_TLBF, 3);
    c.capacity = 20;
    c.span_ms = 1000;
    c.hashes = 3;
    c.age_slices = 2;
    once_filter *f = testing_create(&c);
    REQUIRE(f != NULL);
    size_t len = 0;
    uint8_t *file = testing_save(f, &len);
    once_free(f);
    REQUIRE(file != NULL && len > TLBF_SERIAL_OFFSET + 8);
    uint64_t serial = testing_get_le(file + TLBF_SERIAL_OFFSET, 8);
    /* The largest serials of the same residue, then the same shifted by k. */
    for (uint64_t back = 0; back < 6; back++) {
        uint64_t top = UINT64_MAX - (UINT64_MAX - serial) % 3 - 3 * back;
        testing_put_le(file + TLBF_SERIAL_OFFSET, top, 8);
        testing_reseal(file, len);
        uint8_t *copy = testing_copy_exact(file, len);
        once_filter *g = NULL;
        once_status st = once_load(&g, copy, len);
        free(copy);
        if (st != ONCE_OK) {
            CHECK_STATUS(st, ONCE_ERR_CORRUPT); /* refused outright is fine */
            continue;
        }
        /* Enough keys, over enough time, for several shifts. */
        drive(g, "tlbf serial near 2^64", back, 800, 0, 1000);
    }
    once_free_buffer(file);
}

/* ------------------------------------------------ create and load agree */

/*
 * Every configuration once_create accepts must survive use, save and load: the
 * configurations once seen saving files the loader refused, then every structure with
 * one field at a time set to an edge value.  Refusals must be ONCE_ERR_INVALID,
 * ONCE_ERR_TOO_LARGE, ONCE_ERR_RATE (a target rate outside its range) or
 * ONCE_ERR_NO_WINDOW (a window without its window).
 */
static void create_use_save_load(const once_config *config, const char *label, uint64_t seed)
{
    once_filter *f = NULL;
    once_status st = once_create(&f, config);
    if (st != ONCE_OK) {
        if (f != NULL || (st != ONCE_ERR_INVALID && st != ONCE_ERR_TOO_LARGE &&
                          st != ONCE_ERR_RATE && st != ONCE_ERR_NO_WINDOW &&
                          st != ONCE_ERR_NOMEM)) {
            fprintf(stderr, "%s: refused with %s\n", label, once_strerror(st));
            testing_failures++;
        }
        return;
    }
    drive(f, label, seed, 60, 0, 100);
}

static void reported_configs_round_trip(void)
{
    struct {
        const char *label;
        once_type type;
        uint64_t bits, capacity, batch_threshold;
        uint32_t hashes, blocks;
    } examples[] = {
        {"timer bits=1", ONCE_TIMER, 1, 0, 0, 0, 0},
        {"timer bits=1000 hashes=64", ONCE_TIMER, 1000, 0, 0, 64, 0},
        {"dbf bits=2", ONCE_DBF, 2, 0, 0, 0, 0},
        {"dbpbf batch_threshold=1000000", ONCE_DBPBF, 0, 0, 1000000, 0, 0},
        {"dbpbf batch_threshold=1000000 capacity 100", ONCE_DBPBF, 0, 100, 1000000, 0, 0},
        {"standard capacity=UINT64_MAX", ONCE_STANDARD, 0, UINT64_MAX, 0, 0, 0},
        {"standard bits=1000 capacity=UINT64_MAX", ONCE_STANDARD, 1000, UINT64_MAX, 0, 0, 0},
        {"tlbf capacity=UINT64_MAX", ONCE_TLBF, 0, UINT64_MAX, 0, 0, 0},
        {"scalable blocks=1", ONCE_SCALABLE, 0, 0, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        once_config c = testing_config(examples[i].type, 42);
        c.span_ms = 1000;
        c.bits = examples[i].bits;
        c.hashes = examples[i].hashes;
        c.blocks = examples[i].blocks;
        c.batch_threshold = examples[i].batch_threshold;
        if (examples[i].capacity)
            c.capacity = examples[i].capacity;
        c.max_bytes = UINT64_C(1) << 24; /* keeps the planned ones small */
        create_use_save_load(&c, examples[i].label, i);
    }
}

/* Capacity past the limit is refused, not wrapped: ceil(capacity / l) once formed
 * capacity + l - 1, and UINT64_MAX became a filter of one key a generation. */
static void tlbf_huge_capacity_refused(void)
{
    const uint64_t capacities[] = {UINT64_MAX, UINT64_MAX - 1, (UINT64_C(1) << 40) + 1};
    for (size_t i = 0; i < sizeof capacities / sizeof capacities[0]; i++) {
        once_config c;
        once_config_init(&c, ONCE_TLBF);
        c.span_ms = 1000;
        c.capacity = capacities[i];
        once_filter *f = NULL;
        CHECK_STATUS(once_create(&f, &c), ONCE_ERR_TOO_LARGE);
        CHECK(f == NULL);
        once_free(f);
    }
    /* The largest capacity the format records is sized for, not refused for wrapping:
     * under a small memory cap it is too large for the cap. */
    once_config c;
    once_config_init(&c, ONCE_TLBF);
    c.span_ms = 1000;
    c.capacity = UINT64_C(1) << 40;
    c.max_bytes = 1 << 20;
    once_filter *f = NULL;
    CHECK_STATUS(once_create(&f, &c), ONCE_ERR_TOO_LARGE);
    /* A small capacity that is not a multiple of l rounds up: at least capacity keys a
     * span fit without a fill shift. */
    once_config_init(&c, ONCE_TLBF);
    c.span_ms = 1000;
    c.capacity = 7;
    c.hashes = 2;
    c.age_slices = 3;
    f = testing_create(&c);
    REQUIRE(f != NULL);
    once_stats s = testing_stats(f);
    CHECK(s.capacity == 7);
    CHECK(s.generation * 3 >= 7);
    once_free(f);
}

/* One field at a time at its edges, on every structure. */
typedef enum field {
    F_CAPACITY,
    F_ERROR,
    F_BITS,
    F_HASHES,
    F_WINDOW,
    F_LEVEL,
    F_AGE_SLICES,
    F_BLOCK_BITS,
    F_BLOCK_HASHES,
    F_POLICY,
    F_SPAN,
    F_MAX_BYTES,
    F_TIMER_BITS,
    F_EQUAL_TIMERS,
    F_DYNAMIC,
    F_EXPANSION,
    F_TIGHTENING,
    F_QUERY_FIRST,
    F_BIT_SLICE,
    F_BLOCK_LENGTH,
    F_BLOCKS,
    F_BATCH_THRESHOLD,
    F_COUNT
} field;

static const char *const field_names[F_COUNT] = {
    "capacity",   "error",        "bits",     "hashes",    "window",       "level",
    "age_slices", "block_bits",   "block_hashes", "policy", "span_ms",     "max_bytes",
    "timer_bits", "equal_timers", "dynamic",  "expansion", "tightening",   "query_before_insert",
    "bit_slice",  "block_length", "blocks",   "batch_threshold",
};

/* Edge values; sizes stop short of what would allocate much (2^40 bits would be
 * 128 GiB), but include the first values past each limit. */
static const double edge_values[F_COUNT][12] = {
    [F_CAPACITY] = {0, 1, 2, 3, 63, 1099511627777.0 /* 2^40 + 1 */, 18446744073709551615.0, -1},
    [F_ERROR] = {0, 1e-300, 1e-15, 1e-12, 0.5, 0.999999, 1, 1.5, -0.1, NAN, INFINITY, -2},
    [F_BITS] = {0, 1, 2, 3, 63, 64, 65, 511, 512, 513, 1099511627777.0, -1},
    [F_HASHES] = {0, 1, 2, 63, 64, 65, 4294967295.0, -1},
    [F_WINDOW] = {0, 1, 2, 3, 1000, -1},
    [F_LEVEL] = {0, 1, 32, 33, 4294967295.0, -1},
    [F_AGE_SLICES] = {0, 1, 2, 128, 129, -1},
    [F_BLOCK_BITS] = {0, 1, 63, 64, 512, 1024, -1},
    [F_BLOCK_HASHES] = {0, 1, 4, 8, 9, -1},
    [F_POLICY] = {0, 1, 2, -1},
    [F_SPAN] = {0, 1, 2, 1099511627776.0, 1099511627777.0, 72057594037927936.0,
                72057594037927937.0, 18446744073709551615.0, -1},
    [F_MAX_BYTES] = {0, 1, 64, 4096, 65536, -1},
    [F_TIMER_BITS] = {0, 1, 7, 8, 16, 32, 33, 64, -1},
    [F_EQUAL_TIMERS] = {0, 1, 2, 64, 65, 4294967295.0, -1},
    [F_DYNAMIC] = {0, 1, -1},
    [F_EXPANSION] = {0, 1, 2, 1000, 4294967295.0, -1},
    [F_TIGHTENING] = {0, 1e-300, 0.5, 0.999999, 1, 1.5, -0.5, NAN, -2},
    [F_QUERY_FIRST] = {0, 1, -1},
    [F_BIT_SLICE] = {0, 1, -1},
    [F_BLOCK_LENGTH] = {0, 1, 2, 63, 64, 100, 1099511627777.0, -1},
    [F_BLOCKS] = {0, 1, 2, 64, 4294967295.0, -1},
    [F_BATCH_THRESHOLD] = {0, 1, 2, 1000000, 18446744073709551615.0, -1},
};

/* Where a list of edge values ends: -1 (error and tightening lists end at -2, since -1
 * is not an edge there but -0.1 and -0.5 are). */
static bool edge_end(field f, double v)
{
    return (f == F_ERROR || f == F_TIGHTENING) ? v == -2 : v == -1;
}

static uint64_t as_u64(double v)
{
    return v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
}

static uint32_t as_u32(double v)
{
    return v >= 4294967295.0 ? UINT32_MAX : (uint32_t)v;
}

static void set_field(once_config *c, field f, double v)
{
    switch (f) {
    case F_CAPACITY: c->capacity = as_u64(v); break;
    case F_ERROR: c->error = v; break;
    case F_BITS: c->bits = as_u64(v); break;
    case F_HASHES: c->hashes = as_u32(v); break;
    case F_WINDOW: c->window = as_u64(v); break;
    case F_LEVEL: c->level = as_u32(v); break;
    case F_AGE_SLICES: c->age_slices = as_u32(v); break;
    case F_BLOCK_BITS: c->block_bits = as_u32(v); break;
    case F_BLOCK_HASHES: c->block_hashes = as_u32(v); break;
    case F_POLICY: c->policy = (once_policy)as_u32(v); break;
    case F_SPAN: c->span_ms = as_u64(v); break;
    case F_MAX_BYTES: c->max_bytes = as_u64(v); break;
    case F_TIMER_BITS: c->timer_bits = as_u32(v); break;
    case F_EQUAL_TIMERS: c->equal_timers = as_u32(v); break;
    case F_DYNAMIC: c->dynamic = v != 0; break;
    case F_EXPANSION: c->expansion = as_u32(v); break;
    case F_TIGHTENING: c->tightening = v; break;
    case F_QUERY_FIRST: c->query_before_insert = v != 0; break;
    case F_BIT_SLICE: c->bit_slice = v != 0; break;
    case F_BLOCK_LENGTH: c->block_length = as_u64(v); break;
    case F_BLOCKS: c->blocks = as_u32(v); break;
    case F_BATCH_THRESHOLD: c->batch_threshold = as_u64(v); break;
    case F_COUNT: break;
    }
}

/* A small base configuration of each structure, capped so that no edge value makes it
 * allocate much. */
static void base_config(once_config *c, once_type type)
{
    once_config_init(c, type);
    c->capacity = 50;
    c->error = 0.01;
    c->window = 40;
    c->span_ms = 1000;
    c->max_bytes = UINT64_C(1) << 22;
    c->seed = 99;
    c->seed_is_set = true;
    if (type == ONCE_BPBF || type == ONCE_DBPBF) {
        c->block_length = 100;
        c->blocks = 3;
    }
}

static void edge_configs_round_trip(void)
{
    for (int t = ONCE_STANDARD; t <= ONCE_DBPBF; t++) {
        for (int f = 0; f < F_COUNT; f++) {
            for (int i = 0; !edge_end((field)f, edge_values[f][i]); i++) {
                once_config c;
                base_config(&c, (once_type)t);
                /* The static layouts have no memory cap: keep their planned sizes
                 * small by giving the geometry when the field is the capacity. */
                if (t <= ONCE_COUNTING && f == F_CAPACITY)
                    c.bits = 1000;
                set_field(&c, (field)f, edge_values[f][i]);
                char label[160];
                snprintf(label, sizeof label, "%s with %s = %g", once_type_name((once_type)t),
                         field_names[f], edge_values[f][i]);
                create_use_save_load(&c, label, (uint64_t)(t * 1000 + f * 20 + i));
            }
        }
    }
}

/*
 * A field a structure does not read is ignored and leaves no trace: the filter saves
 * to the same bytes as without it.  Each structure's unread fields, as once.h states
 * them.
 */
static void unused_fields_leave_no_trace(void)
{
    const uint32_t windowed = 1u << F_WINDOW | 1u << F_LEVEL | 1u << F_AGE_SLICES |
                              1u << F_BLOCK_BITS | 1u << F_BLOCK_HASHES | 1u << F_POLICY |
                              1u << F_SPAN | 1u << F_TIMER_BITS | 1u << F_EQUAL_TIMERS |
                              1u << F_DYNAMIC;
    const uint32_t growing = 1u << F_EXPANSION | 1u << F_TIGHTENING | 1u << F_QUERY_FIRST |
                             1u << F_BIT_SLICE | 1u << F_BLOCK_LENGTH | 1u << F_BLOCKS |
                             1u << F_BATCH_THRESHOLD;
    const uint32_t timer_only = 1u << F_TIMER_BITS | 1u << F_EQUAL_TIMERS | 1u << F_DYNAMIC;
    const uint32_t age_only = 1u << F_WINDOW | 1u << F_LEVEL | 1u << F_BLOCK_BITS |
                              1u << F_BLOCK_HASHES;
    const uint32_t block_partitioned =
        1u << F_BLOCK_LENGTH | 1u << F_BLOCKS | 1u << F_BATCH_THRESHOLD;
    struct {
        once_type type;
        uint32_t unread;
    } rows[] = {
        {ONCE_STANDARD, windowed | growing | 1u << F_MAX_BYTES},
        {ONCE_PARTITIONED, windowed | growing | 1u << F_MAX_BYTES},
        {ONCE_BLOCKED, windowed | growing | 1u << F_MAX_BYTES},
        {ONCE_COUNTING, windowed | growing | 1u << F_MAX_BYTES},
        {ONCE_APBF, timer_only | 1u << F_SPAN | growing | 1u << F_MAX_BYTES | 1u << F_BLOCK_BITS |
                        1u << F_BLOCK_HASHES},
        {ONCE_APBBF, timer_only | 1u << F_SPAN | growing | 1u << F_MAX_BYTES},
        {ONCE_TLBF, timer_only | 1u << F_WINDOW | 1u << F_BLOCK_BITS | 1u << F_BLOCK_HASHES |
                        growing | 1u << F_BITS},
        {ONCE_TIMER, age_only | 1u << F_AGE_SLICES | growing},
        {ONCE_SCALABLE, windowed | 1u << F_QUERY_FIRST | 1u << F_BIT_SLICE | block_partitioned},
        {ONCE_DBF, windowed | 1u << F_EXPANSION | 1u << F_TIGHTENING | block_partitioned},
        {ONCE_BPBF, windowed | 1u << F_EXPANSION | 1u << F_TIGHTENING | 1u << F_QUERY_FIRST |
                        1u << F_BIT_SLICE | 1u << F_BATCH_THRESHOLD},
        {ONCE_DBPBF, windowed | 1u << F_EXPANSION | 1u << F_TIGHTENING | 1u << F_QUERY_FIRST |
                         1u << F_BIT_SLICE},
    };
    /* A value each field could take on a structure that reads it. */
    static const double set_to[F_COUNT] = {
        [F_WINDOW] = 77,       [F_LEVEL] = 3,          [F_AGE_SLICES] = 2,
        [F_BLOCK_BITS] = 64,   [F_BLOCK_HASHES] = 8,   [F_POLICY] = 1,
        [F_SPAN] = 5000,       [F_TIMER_BITS] = 8,     [F_EQUAL_TIMERS] = 1,
        [F_DYNAMIC] = 1,       [F_EXPANSION] = 3,      [F_TIGHTENING] = 0.8,
        [F_QUERY_FIRST] = 1,   [F_BIT_SLICE] = 1,      [F_BLOCK_LENGTH] = 64,
        [F_BLOCKS] = 1,        [F_BATCH_THRESHOLD] = 7, [F_MAX_BYTES] = 1 << 21,
        [F_BITS] = 640,
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        once_config plain;
        base_config(&plain, rows[r].type);
        once_filter *a = testing_create(&plain);
        REQUIRE(a != NULL);
        for (int f = 0; f < F_COUNT; f++) {
            if (!(rows[r].unread >> f & 1))
                continue;
            once_config c = plain;
            set_field(&c, (field)f, set_to[f]);
            once_filter *b = NULL;
            once_status st = once_create(&b, &c);
            if (st != ONCE_OK || !testing_same_save(a, b)) {
                fprintf(stderr, "%s: unread field %s changed the filter (%s)\n",
                        once_type_name(rows[r].type), field_names[f], once_strerror(st));
                testing_failures++;
            }
            once_free(b);
        }
        once_free(a);
    }
}

/* --------------------------------------------------- the committed corpus */

#ifndef ONCE_FUZZ_CORPUS
#error "ONCE_FUZZ_CORPUS: the committed fuzz corpus directory (tests/CMakeLists.txt)"
#endif

/* Every state in the committed fuzz corpus that loads (as it is, or resealed as the
 * fuzzer loads it) is driven through random operations with reloads on the way: the
 * states the fuzzer found are the odd ones no configuration builds. */
static void corpus_states_reload_alike(void)
{
    DIR *dir = opendir(ONCE_FUZZ_CORPUS);
    REQUIRE(dir != NULL);
    struct dirent *e;
    int files = 0, loaded = 0;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", ONCE_FUZZ_CORPUS, e->d_name);
        FILE *in = fopen(path, "rb");
        if (in == NULL)
            continue;
        uint8_t *buf = malloc(1 << 20);
        size_t len = buf ? fread(buf, 1, 1 << 20, in) : 0;
        fclose(in);
        files++;
        for (int reseal = 0; reseal < 2 && buf != NULL; reseal++) {
            if (reseal)
                testing_reseal(buf, len);
            once_filter *f = NULL;
            if (once_load(&f, buf, len) != ONCE_OK)
                continue;
            loaded++;
            /* Time windows at the fuzzer's late clock as well as from 0. */
            uint64_t start = (testing_mix((uint64_t)files) & 1) ? UINT64_C(1) << 62 : 0;
            drive(f, e->d_name, (uint64_t)files * 2 + (uint64_t)reseal, 150, start, 200);
            break;
        }
        free(buf);
    }
    closedir(dir);
    fprintf(stderr, "corpus: %d files, %d loaded\n", files, loaded);
    CHECK(files > 0 && loaded > 0);
}

static const testing_case cases[] = {
    {"random_operations_reload_alike", random_operations_reload_alike},
    {"dbf_version_limit_survives_use", dbf_version_limit_survives_use},
    {"reported_configs_round_trip", reported_configs_round_trip},
    {"tlbf_huge_capacity_refused", tlbf_huge_capacity_refused},
    {"tlbf_serial_near_limit", tlbf_serial_near_limit},
    {"edge_configs_round_trip", edge_configs_round_trip},
    {"unused_fields_leave_no_trace", unused_fields_leave_no_trace},
    {"corpus_states_reload_alike", corpus_states_reload_alike},
};

TESTING_MAIN(cases)
