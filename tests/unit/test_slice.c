/*
 * test_slice.c - a slice kept apart (ONCE_SLICE, once_sliced.h "Slices kept apart"):
 * it decides every request as the memory site it holds, keeps what it holds through a
 * save and a load, checks a whole batch before it runs any, refuses keys, and its wire
 * form survives a round trip and refuses every malformed message.  Whole slices
 * (once_sliced.h, "Whole slices"): S filters fed by once_shard_of answer a stream as
 * the sharded filter of S shards does, events run in order around a refused one, and
 * their messages round-trip and refuse malformed bytes.
 */
#include "testing.h"

#include "once_sliced.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP 7u /* positions a request */

/* Random requests over `bits` positions at times moving forward from `*clock` (some
 * late by up to 3 s, as producers' timestamps are), ops mixed. */
static void random_requests(uint64_t *state, uint64_t bits, uint64_t *clock,
                            once_site_request *q, uint64_t *positions, size_t count)
{
    for (size_t r = 0; r < count; r++) {
        uint64_t x = testing_mix((*state)++);
        memset(&q[r], 0, sizeof q[r]);
        q[r].op = (once_site_op)(x % 3);
        q[r].count = 1 + (uint32_t)(x >> 8) % GROUP;
        q[r].positions = positions + r * GROUP;
        for (uint32_t i = 0; i < q[r].count; i++)
            positions[r * GROUP + i] = testing_mix(x + i) % bits;
        *clock += (x >> 20) % 40;
        uint64_t late = (x >> 32) % 8 == 0 ? (x >> 40) % 3000 : 0;
        q[r].time_ms = *clock > late ? *clock - late : 0;
    }
}

static const once_memory_site_config slice_configs[] = {
    {.bits = 4096},
    {.bits = 4096, .window_ms = 5000},
    {.bits = 1024, .growth = ONCE_GROWTH_DENSITY, .max_density = 0.4},
    {.bits = 1024, .window_ms = 2000, .growth = ONCE_GROWTH_CARDINALITY, .max_density = 0.3},
};
#define CONFIGS (sizeof slice_configs / sizeof slice_configs[0])
#define BATCH 64u

/* Run the same batch on a slice and a memory site; false if any answer differs. */
static bool run_alike(once_filter *slice, once_site *site, const once_site_request *batch,
                      size_t count)
{
    once_site_request a[BATCH], b[BATCH];
    memcpy(a, batch, count * sizeof *a);
    memcpy(b, batch, count * sizeof *b);
    CHECK_OK(once_slice_run(slice, a, count));
    site->run(site->context, b, count);
    for (size_t r = 0; r < count; r++)
        if (a[r].all_set != b[r].all_set || a[r].status != b[r].status)
            return false;
    return true;
}

/* A slice answers every request as the memory site of its config does. */
static void slice_runs_as_its_memory_site(void)
{
    for (size_t c = 0; c < CONFIGS; c++) {
        once_filter *slice = NULL;
        once_site site;
        CHECK_OK(once_slice_create(&slice, &slice_configs[c]));
        CHECK_OK(once_memory_site_create(&slice_configs[c], &site));
        REQUIRE(slice != NULL);
        uint64_t state = 1 + c, clock = 1000, duplicates = 0;
        once_site_request q[BATCH];
        uint64_t positions[BATCH * GROUP];
        bool alike = true;
        for (int round = 0; round < 200 && alike; round++) {
            random_requests(&state, slice_configs[c].bits, &clock, q, positions, BATCH);
            alike = run_alike(slice, &site, q, BATCH);
        }
        CHECK(alike);
        /* It does work: tests of what was set (on time) are answered all set. */
        for (size_t r = 0; r < BATCH; r++) {
            q[r].op = ONCE_SITE_TEST_AND_SET;
            q[r].time_ms = clock;
        }
        CHECK_OK(once_slice_run(slice, q, BATCH));
        for (size_t r = 0; r < BATCH; r++)
            q[r].op = ONCE_SITE_TEST;
        CHECK_OK(once_slice_run(slice, q, BATCH));
        for (size_t r = 0; r < BATCH; r++)
            duplicates += q[r].all_set && q[r].status == ONCE_OK;
        CHECK(duplicates == BATCH);
        once_stats s = testing_stats(slice);
        CHECK(strcmp(s.structure, "slice") == 0);
        CHECK(s.bits_set > 0 && s.bits >= slice_configs[c].bits);
        CHECK(s.span_ms == slice_configs[c].window_ms);
        CHECK(s.items > 0);
        once_free(slice);
        site.destroy(site.context);
    }
}

/* Saved and loaded (whole, and in chunks), a slice answers as the one it was: both
 * copies go on taking the same requests with the same answers. */
static void slice_keeps_its_state_through_a_load(void)
{
    for (size_t c = 0; c < CONFIGS; c++) {
        once_filter *slice = NULL;
        CHECK_OK(once_slice_create(&slice, &slice_configs[c]));
        REQUIRE(slice != NULL);
        CHECK_OK(once_set_max_time_jump(slice, 3600000));
        uint64_t state = 100 + c, clock = 5000;
        once_site_request q[BATCH];
        uint64_t positions[BATCH * GROUP];
        for (int round = 0; round < 100; round++) {
            random_requests(&state, slice_configs[c].bits, &clock, q, positions, BATCH);
            CHECK_OK(once_slice_run(slice, q, BATCH));
        }
        once_filter *loaded = testing_reload(slice);
        once_filter *chunked = testing_chunk_reload(slice, 300);
        REQUIRE(loaded != NULL && chunked != NULL);
        CHECK(testing_same_save(slice, loaded) && testing_same_save(slice, chunked));
        CHECK(once_max_time_jump(loaded) == 3600000);
        once_memory_site_config back;
        CHECK_OK(once_slice_config(loaded, &back));
        CHECK(back.bits == slice_configs[c].bits && back.window_ms == slice_configs[c].window_ms &&
              back.growth == slice_configs[c].growth);
        bool alike = true;
        for (int round = 0; round < 100 && alike; round++) {
            random_requests(&state, slice_configs[c].bits, &clock, q, positions, BATCH);
            once_site_request a[BATCH], b[BATCH], d[BATCH];
            memcpy(a, q, sizeof a);
            memcpy(b, q, sizeof b);
            memcpy(d, q, sizeof d);
            CHECK_OK(once_slice_run(slice, a, BATCH));
            CHECK_OK(once_slice_run(loaded, b, BATCH));
            CHECK_OK(once_slice_run(chunked, d, BATCH));
            for (size_t r = 0; r < BATCH; r++)
                alike = alike && a[r].all_set == b[r].all_set && a[r].all_set == d[r].all_set &&
                        a[r].status == b[r].status;
        }
        CHECK(alike);
        CHECK(testing_same_save(slice, loaded));
        /* Cleared, it is a new slice of the same config. */
        once_filter *fresh = NULL;
        CHECK_OK(once_slice_create(&fresh, &slice_configs[c]));
        CHECK_OK(once_clear(loaded));
        once_stats s = testing_stats(loaded);
        CHECK(s.bits_set == 0 && s.filters == 1);
        once_free(fresh);
        once_free(slice);
        once_free(loaded);
        once_free(chunked);
    }
}

/* A slice holds positions: every key call is refused, and a slice is made from bits. */
static void slice_refuses_keys(void)
{
    once_config c = testing_config(ONCE_SLICE, 5);
    c.bits = 640;
    c.span_ms = 1000;
    once_filter *f = testing_create(&c);
    REQUIRE(f != NULL);
    const char key[] = "a key of twenty-three b", short_key[] = "k";
    bool answer = true;
    CHECK_STATUS(once_add(f, key, sizeof key, 0), ONCE_ERR_UNSUPPORTED);
    CHECK_STATUS(once_add(f, short_key, 1, 0), ONCE_ERR_UNSUPPORTED);
    CHECK_STATUS(once_query(f, key, sizeof key, 0, &answer), ONCE_ERR_UNSUPPORTED);
    CHECK_STATUS(once_query(f, short_key, 1, 0, &answer), ONCE_ERR_UNSUPPORTED);
    CHECK_STATUS(once_test_and_add(f, key, sizeof key, 0, &answer), ONCE_ERR_UNSUPPORTED);
    CHECK_STATUS(once_test_and_add(f, short_key, 1, 0, &answer), ONCE_ERR_UNSUPPORTED);
    once_key keys[2] = {{key, sizeof key, 0}, {short_key, 1, 0}};
    uint8_t out[2];
    CHECK_STATUS(once_test_and_add_batch(f, keys, 2, out), ONCE_ERR_UNSUPPORTED);
    CHECK_STATUS(once_query_batch(f, keys, 2, out), ONCE_ERR_UNSUPPORTED);
    CHECK_STATUS(once_remove(f, key, sizeof key, 0), ONCE_ERR_UNSUPPORTED);
    CHECK(testing_stats(f).bits_set == 0 && testing_stats(f).span_ms == 1000);
    once_free(f);
    /* Its size is given: not planned from a capacity, a multiple of 64, within 2^32. */
    once_filter *g = NULL;
    CHECK_STATUS(once_create_for_capacity(&g, ONCE_SLICE, 1000, 0.01), ONCE_ERR_INVALID);
    c.bits = 100;
    CHECK_STATUS(once_create(&g, &c), ONCE_ERR_INVALID);
    once_memory_site_config big = {.bits = ONCE_SLICE_MAX_BITS + 64};
    CHECK_STATUS(once_slice_create(&g, &big), ONCE_ERR_INVALID);
    once_memory_site_config bounded = {.bits = 64, .growth = ONCE_GROWTH_BOUNDED};
    CHECK_STATUS(once_slice_create(&g, &bounded), ONCE_ERR_INVALID);
    CHECK(g == NULL);
    /* And a filter of keys runs no requests. */
    once_filter *keyed = testing_make(ONCE_STANDARD, 100, 0.01, 3);
    once_site_request q = {.op = ONCE_SITE_TEST};
    CHECK_STATUS(once_slice_run(keyed, &q, 1), ONCE_ERR_UNSUPPORTED);
    once_free(keyed);
}

/* A batch is checked whole before any of it runs: one bad request and nothing changed.
 * A set too far ahead of the clock is refused alone, and the clock stays. */
static void slice_checks_a_batch_before_it_runs(void)
{
    once_memory_site_config config = {.bits = 256, .window_ms = 1000};
    once_filter *f = NULL;
    CHECK_OK(once_slice_create(&f, &config));
    REQUIRE(f != NULL);
    uint64_t good[2] = {3, 200}, bad[2] = {3, 256};
    once_site_request q[3] = {
        {.op = ONCE_SITE_SET, .positions = good, .count = 2, .time_ms = 10},
        {.op = ONCE_SITE_SET, .positions = bad, .count = 2, .time_ms = 10},
        {.op = ONCE_SITE_TEST, .positions = good, .count = 2, .time_ms = 10},
    };
    CHECK_STATUS(once_slice_run(f, q, 3), ONCE_ERR_INVALID);
    CHECK(testing_stats(f).bits_set == 0);
    q[1].positions = good;
    q[1].op = (once_site_op)3;
    CHECK_STATUS(once_slice_run(f, q, 3), ONCE_ERR_INVALID);
    q[1].op = ONCE_SITE_SET;
    q[1].time_ms = ONCE_MAX_TIME_MS + 1;
    CHECK_STATUS(once_slice_run(f, q, 3), ONCE_ERR_INVALID);
    q[1].positions = NULL;
    q[1].time_ms = 10;
    CHECK_STATUS(once_slice_run(f, q, 3), ONCE_ERR_INVALID);
    CHECK(testing_stats(f).bits_set == 0 && testing_stats(f).items == 0);

    /* Jumps: the bound (a minute here) refuses the set past it, and only that one. */
    CHECK_OK(once_set_max_time_jump(f, 60000));
    uint64_t other[1] = {77};
    once_site_request j[4] = {
        {.op = ONCE_SITE_TEST_AND_SET, .positions = good, .count = 2, .time_ms = 1000},
        {.op = ONCE_SITE_SET, .positions = other, .count = 1, .time_ms = 1000 + 60001},
        {.op = ONCE_SITE_TEST, .positions = good, .count = 2, .time_ms = 1500},
        {.op = ONCE_SITE_SET, .positions = other, .count = 1, .time_ms = 1000 + 60000},
    };
    CHECK_OK(once_slice_run(f, j, 4));
    CHECK(j[0].status == ONCE_OK && !j[0].all_set);
    CHECK(j[1].status == ONCE_ERR_TIME);
    CHECK(j[2].status == ONCE_OK && j[2].all_set);
    CHECK(j[3].status == ONCE_OK && !j[3].all_set);
    CHECK(testing_stats(f).items == 2);
    once_free(f);
}

/* Requests and answers through the wire form come back as they were. */
static void wire_round_trips(void)
{
    uint64_t state = 9, clock = 0;
    once_site_request q[BATCH];
    uint64_t positions[BATCH * GROUP];
    random_requests(&state, UINT32_MAX + UINT64_C(1), &clock, q, positions, BATCH);
    q[5].count = 0; /* an empty request travels too */
    for (int timed = 0; timed < 4; timed++) {
        for (size_t r = 0; r < BATCH; r++) { /* 2, 3: with claims */
            q[r].claim = timed >= 2 && r % 3 == 0 ? testing_mix(r) : 0;
            q[r].release = timed >= 2 && r % 5 == 1 ? testing_mix(r + 1) : 0;
        }
        size_t size = once_slice_requests_size(q, BATCH, timed % 2), written = 0;
        uint8_t *wire = malloc(size);
        REQUIRE(wire != NULL);
        CHECK_STATUS(once_slice_requests_encode(q, BATCH, timed % 2, wire, size - 1, &written),
                     ONCE_ERR_INVALID);
        CHECK_OK(once_slice_requests_encode(q, BATCH, timed % 2, wire, size, &written));
        CHECK(written == size);
        size_t count = 0, total = 0;
        CHECK_OK(once_slice_requests_count(wire, size, &count, &total));
        CHECK(count == BATCH);
        once_site_request back[BATCH];
        uint64_t back_positions[BATCH * GROUP];
        CHECK_OK(once_slice_requests_decode(wire, size, back, back_positions));
        for (size_t r = 0; r < BATCH; r++) {
            CHECK(back[r].op == q[r].op && back[r].count == q[r].count);
            CHECK(back[r].time_ms == (timed % 2 ? q[r].time_ms : 0));
            CHECK(back[r].claim == q[r].claim && back[r].release == q[r].release);
            for (uint32_t i = 0; i < q[r].count; i++)
                CHECK(back[r].positions[i] == q[r].positions[i]);
        }
        free(wire);
    }
    /* Answers: the bits and the failures. */
    for (size_t r = 0; r < BATCH; r++) {
        q[r].all_set = testing_mix(r) & 1;
        q[r].claim_lost = r % 7 == 3;
        q[r].status = r % 9 == 4 ? ONCE_ERR_FULL : r % 11 == 2 ? ONCE_ERR_TIME : ONCE_OK;
        if (q[r].status != ONCE_OK)
            q[r].all_set = false;
    }
    for (size_t count = 0; count <= BATCH; count += 13) {
        size_t size = once_slice_answers_size(q, count), written = 0;
        uint8_t wire[2 * BATCH + 96 + BATCH * 5];
        once_site_info held = {.cells = 640, .cells_set = 900, .filters = 2}, got;
        CHECK_OK(once_slice_answers_encode(q, count, &held, wire, sizeof wire, &written));
        CHECK(written == size);
        once_site_request back[BATCH];
        CHECK_OK(once_slice_answers_decode(wire, size, back, count, &got));
        CHECK(got.cells == 640 && got.cells_set == 900 && got.filters == 2);
        for (size_t r = 0; r < count; r++)
            CHECK(back[r].all_set == q[r].all_set && back[r].status == q[r].status &&
                  back[r].claim_lost == q[r].claim_lost);
        CHECK_STATUS(once_slice_answers_decode(wire, size, back, count + 1, NULL),
                     ONCE_ERR_CORRUPT);
    }
    /* What does not fit the wire is refused, not cut. */
    uint64_t far[1] = {UINT32_MAX + UINT64_C(1)};
    once_site_request wide = {.op = ONCE_SITE_SET, .positions = far, .count = 1};
    uint8_t small[64];
    size_t written = 0;
    CHECK_STATUS(once_slice_requests_encode(&wide, 1, false, small, sizeof small, &written),
                 ONCE_ERR_INVALID);
}

/* Every cut of a message, and random bytes, are refused or decoded within their room;
 * none crashes (the sanitizer build checks the reads). */
static void wire_refuses_malformed_messages(void)
{
    uint64_t state = 3, clock = 0;
    once_site_request q[8];
    uint64_t positions[8 * GROUP];
    random_requests(&state, 1 << 20, &clock, q, positions, 8);
    size_t size = once_slice_requests_size(q, 8, true), written = 0;
    uint8_t wire[8 * (10 + 4 * GROUP) + 16];
    CHECK_OK(once_slice_requests_encode(q, 8, true, wire, sizeof wire, &written));
    size_t count = 0, total = 0;
    for (size_t cut = 0; cut < size; cut++) {
        uint8_t *copy = testing_copy_exact(wire, cut);
        CHECK_STATUS(once_slice_requests_count(copy, cut, &count, &total), ONCE_ERR_CORRUPT);
        free(copy);
    }
    uint8_t longer[sizeof wire + 1];
    memcpy(longer, wire, size);
    longer[size] = 0;
    CHECK_STATUS(once_slice_requests_count(longer, size + 1, &count, &total), ONCE_ERR_CORRUPT);
    wire[0] = 2; /* a version this build does not know */
    CHECK_STATUS(once_slice_requests_count(wire, size, &count, &total), ONCE_ERR_CORRUPT);
    wire[0] = 1;
    wire[1] = 5; /* an unknown flag */
    CHECK_STATUS(once_slice_requests_count(wire, size, &count, &total), ONCE_ERR_CORRUPT);
    wire[1] = 1;
    wire[6] = 3; /* an unknown op */
    CHECK_STATUS(once_slice_requests_count(wire, size, &count, &total), ONCE_ERR_CORRUPT);
    /* A count far past the bytes is refused before anything is read for it. */
    uint8_t huge[6] = {1, 0, 0xff, 0xff, 0xff, 0xff};
    CHECK_STATUS(once_slice_requests_count(huge, sizeof huge, &count, &total), ONCE_ERR_CORRUPT);
    uint64_t seed = 77;
    for (int trial = 0; trial < 20000; trial++) {
        uint8_t noise[64];
        size_t len = testing_mix(seed++) % sizeof noise;
        for (size_t i = 0; i < len; i++)
            noise[i] = (uint8_t)testing_mix(seed++);
        if (len > 0)
            noise[0] = 1;
        if (len > 1)
            noise[1] &= 3;
        uint8_t *copy = testing_copy_exact(noise, len);
        if (once_slice_requests_count(copy, len, &count, &total) == ONCE_OK) {
            once_site_request *back = malloc((count + 1) * sizeof *back);
            uint64_t *back_positions = malloc((total + 1) * sizeof *back_positions);
            REQUIRE(back != NULL && back_positions != NULL);
            CHECK_OK(once_slice_requests_decode(copy, len, back, back_positions));
            free(back);
            free(back_positions);
        }
        once_site_request answers[16];
        once_site_info held;
        (void)once_slice_answers_decode(copy, len, answers, len % 16, &held);
        free(copy);
    }
}

/* The loader refuses a slice whose fields contradict each other, each case a file the
 * library wrote with one field changed and the checksum made right again. */
static void slice_loader_refuses_what_it_cannot_be(void)
{
    once_memory_site_config config = {.bits = 128, .window_ms = 4000};
    once_filter *f = NULL;
    CHECK_OK(once_slice_create(&f, &config));
    REQUIRE(f != NULL);
    uint64_t p[3] = {1, 2, 127};
    once_site_request q = {.op = ONCE_SITE_SET, .positions = p, .count = 3, .time_ms = 9000};
    CHECK_OK(once_slice_run(f, &q, 1));
    size_t len = 0;
    uint8_t *saved = testing_save(f, &len);
    REQUIRE(saved != NULL);
    const size_t params = 48, words = testing_get_le(saved + 40, 4) / 8;
    CHECK(words == 11);
    /* (parameter, value): bits not a multiple of 64, bits 0, an unknown growth, growth
     * without a density, a clock started at 0 with a time, filters 0, filters past the
     * most, a sweep cursor past the cells, no clock but a time. */
    static const struct {
        size_t word;
        uint64_t value;
    } edits[] = {{0, 100}, {0, 0}, {2, 7}, {2, ONCE_GROWTH_DENSITY}, {10, 0}, {10, 65},
                 {7, 128}, {6, 0}, {0, 192}};
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        uint8_t *copy = testing_copy_exact(saved, len);
        testing_put_le(copy + params + 8 * edits[e].word, edits[e].value, 8);
        testing_reseal(copy, len);
        once_filter *g = NULL;
        once_status st = once_load(&g, copy, len);
        if (st == ONCE_OK)
            fprintf(stderr, "edit %zu loaded\n", e);
        CHECK(st != ONCE_OK && g == NULL);
        free(copy);
    }
    /* A mark on an empty timer: the marks follow the timers (16 bits a cell here). */
    size_t payload = params + 8 * words + 8;
    size_t marks = payload + 16 + 128 * 16 / 8;
    uint8_t *copy = testing_copy_exact(saved, len);
    copy[marks] |= 1; /* cell 0 is empty */
    testing_reseal(copy, len);
    once_filter *g = NULL;
    CHECK_STATUS(once_load(&g, copy, len), ONCE_ERR_CORRUPT);
    free(copy);
    CHECK_OK(testing_load_and_vet(saved, len));
    once_free_buffer(saved);
    once_free(f);
}

/* An allocator that fails from the n-th call on, counting the blocks alive. */
static uint64_t calls_left, blocks_alive;

static void *failing_malloc(size_t size)
{
    if (calls_left == 0)
        return NULL;
    calls_left--;
    void *p = malloc(size);
    blocks_alive += p != NULL;
    return p;
}
static void *failing_calloc(size_t count, size_t size)
{
    if (calls_left == 0)
        return NULL;
    calls_left--;
    void *p = calloc(count, size);
    blocks_alive += p != NULL;
    return p;
}
static void *failing_realloc(void *block, size_t size)
{
    if (calls_left == 0)
        return NULL;
    calls_left--;
    void *p = realloc(block, size);
    blocks_alive += block == NULL && p != NULL;
    return p;
}
static void counted_free(void *block)
{
    blocks_alive -= block != NULL;
    free(block);
}

/* Every allocation a slice makes (creating, growing, saving, loading) may fail: the
 * call answers ONCE_ERR_NOMEM (a set, ONCE_ERR_FULL: the memory site cannot open its
 * next sub-filter), and freeing what was made leaves no block behind. */
static void slice_allocation_failures_leave_nothing(void)
{
    const once_allocator failing = {failing_malloc, failing_calloc, failing_realloc,
                                    counted_free};
    CHECK_OK(once_set_allocator(&failing));
    once_memory_site_config config = {.bits = 256, .window_ms = 800,
                                      .growth = ONCE_GROWTH_DENSITY, .max_density = 0.2};
    bool completed = false;
    for (uint64_t budget = 0; budget < 200 && !completed; budget++) {
        calls_left = budget;
        once_filter *f = NULL, *g = NULL;
        once_status st = once_slice_create(&f, &config);
        CHECK((st == ONCE_OK) == (f != NULL));
        CHECK(st == ONCE_OK || st == ONCE_ERR_NOMEM);
        void *saved = NULL;
        size_t len = 0;
        if (f != NULL) {
            uint64_t state = 5, clock = 0;
            once_site_request q[BATCH];
            uint64_t positions[BATCH * GROUP];
            for (int round = 0; round < 4; round++) {
                random_requests(&state, config.bits, &clock, q, positions, BATCH);
                CHECK_OK(once_slice_run(f, q, BATCH));
            }
            st = once_save_to_buffer(f, &saved, &len);
            CHECK(st == ONCE_OK || st == ONCE_ERR_NOMEM);
            if (st == ONCE_OK) {
                st = once_load(&g, saved, len);
                CHECK(st == ONCE_OK || st == ONCE_ERR_NOMEM);
                CHECK((st == ONCE_OK) == (g != NULL));
                completed = st == ONCE_OK && testing_stats(f).filters > 1;
            }
        }
        once_free_buffer(saved);
        once_free(g);
        once_free(f);
        CHECK(blocks_alive == 0);
    }
    CHECK(completed);
    calls_left = UINT64_MAX;
    CHECK_OK(once_set_allocator(NULL));
}

/* ------------------------------------------------------------ whole slices */

enum { WHOLE_SLICES = 4, WHOLE_EVENTS = 6000 };

/* A stream of keys with repeats, at times moving forward (a 1 s span sees both fresh
 * repeats and expired ones). */
static void whole_stream(once_slice_event *events, char (*keys)[32], size_t count,
                         uint64_t seed)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t x = testing_mix(i + 77);
        uint64_t back = testing_mix(x) % (x % 3 == 0 ? 200 : i + 1); /* recent, or any */
        uint64_t id = x % 3 != 2 && back < i ? i - 1 - back : i;
        snprintf(keys[i], sizeof keys[i], "key-%llu", (unsigned long long)id);
        once_digest_with_seed(seed, keys[i], strlen(keys[i]), &events[i].digest);
        events[i].time_ms = 1000000 + i * 3;
    }
}

/* S filters, each fed the events whose digest once_shard_of sends it, answer every
 * event as the sharded filter of S shards of the same structure answers its key: the
 * cluster's whole slices are a sharded filter whose shards are keys. */
static void whole_slices_answer_as_the_sharded_filter(void)
{
    static const once_type types[] = {ONCE_TAGGED, ONCE_BLOCKED, ONCE_SCALABLE};
    static once_slice_event events[WHOLE_EVENTS];
    static char keys[WHOLE_EVENTS][32];
    static uint8_t seen[WHOLE_EVENTS];
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        once_config c;
        once_config_init(&c, types[t]);
        c.capacity = 4000;
        c.error = 0.01;
        c.seed = 99;
        c.seed_is_set = true;
        c.max_time_jump_ms = 0;
        if (types[t] == ONCE_TAGGED)
            c.span_ms = 1000;
        once_filter *sharded = NULL, *slices[WHOLE_SLICES];
        CHECK_OK(once_create_sharded(&sharded, &c, WHOLE_SLICES));
        once_config one = c;
        one.capacity = (c.capacity + WHOLE_SLICES - 1) / WHOLE_SLICES;
        for (uint32_t s = 0; s < WHOLE_SLICES; s++)
            CHECK_OK(once_create(&slices[s], &one));
        whole_stream(events, keys, WHOLE_EVENTS, c.seed);
        size_t duplicates = 0;
        for (size_t i = 0; i < WHOLE_EVENTS; i++) {
            once_key k = {keys[i], strlen(keys[i]), events[i].time_ms};
            CHECK_OK(once_test_and_add_batch(sharded, &k, 1, &seen[i]));
            uint32_t s = once_shard_of(&events[i].digest, WHOLE_SLICES);
            CHECK(s < WHOLE_SLICES);
            CHECK_OK(once_slice_events_run(slices[s], &events[i], 1, NULL));
            CHECK(events[i].status == ONCE_OK);
            CHECK(events[i].seen == (seen[i] != 0));
            duplicates += seen[i] != 0;
        }
        CHECK(duplicates > WHOLE_EVENTS / 10); /* the stream has repeats to find */
        for (uint32_t s = 0; s < WHOLE_SLICES; s++)
            once_free(slices[s]);
        once_free(sharded);
    }
    once_digest d = {1, 2};
    CHECK(once_shard_of(&d, 1) == 0 && once_shard_of(NULL, 8) == 0);
}

/* A batch runs in order, each event with its own status: a time past what the clock
 * admits is refused alone and the events after it still run; a time past the most any
 * clock takes refuses the whole batch before any runs. */
static void whole_slice_events_run_around_a_refusal(void)
{
    once_config c;
    once_config_init(&c, ONCE_TAGGED);
    c.capacity = 1000;
    c.span_ms = 1000;
    c.seed = 5;
    c.seed_is_set = true;
    c.max_time_jump_ms = 60000;
    once_filter *f = NULL;
    CHECK_OK(once_create(&f, &c));
    once_slice_event e[4];
    memset(e, 0, sizeof e);
    for (int i = 0; i < 4; i++) {
        once_digest_with_seed(5, &i, sizeof i, &e[i].digest);
        e[i].time_ms = 10000 + (uint64_t)i;
    }
    e[2].time_ms = 10000 + 3600000; /* an hour past a clock that admits a minute */
    e[3].digest = e[0].digest;      /* a repeat of the first */
    once_slice_held held;
    CHECK_OK(once_slice_events_run(f, e, 4, &held));
    CHECK(e[0].status == ONCE_OK && !e[0].seen);
    CHECK(e[1].status == ONCE_OK && !e[1].seen);
    CHECK(e[2].status == ONCE_ERR_TIME);
    CHECK(e[3].status == ONCE_OK && e[3].seen);
    CHECK(held.items == 2 && held.bytes == once_bytes(f));
    e[1].time_ms = ONCE_MAX_TIME_MS + 1;
    CHECK_STATUS(once_slice_events_run(f, e, 4, NULL), ONCE_ERR_INVALID);
    CHECK(once_items(f) == 2);
    once_free(f);
}

/* A count window's whole slice (docs/CLUSTER.md, "Count windows"): a line is
 * test-and-added where its producer last knew the count, then stamped at its place in
 * it.  The stamp keeps the key for its window from there, where its test's time alone
 * would have let it go; a stamp of a key held counts no item, one of a key the slice
 * never saw adds it. */
static void whole_slice_stamps_keep_a_key_from_its_place(void)
{
    enum { WINDOW = 100 }; /* the slice's span is N + 1 counts */
    once_config c;
    once_config_init(&c, ONCE_TAGGED);
    c.capacity = 1000;
    c.span_ms = WINDOW + 1;
    c.seed = 5;
    c.seed_is_set = true;
    c.max_time_jump_ms = 0;
    for (int stamped = 0; stamped < 2; stamped++) {
        once_filter *f = NULL;
        CHECK_OK(once_create(&f, &c));
        once_slice_event e[2];
        memset(e, 0, sizeof e);
        for (int i = 0; i < 2; i++)
            once_digest_with_seed(5, &i, sizeof i, &e[i].digest);
        CHECK_OK(once_slice_events_run(f, e, 1, NULL)); /* tested at count 0 */
        CHECK(e[0].status == ONCE_OK && !e[0].seen);
        if (stamped) {
            e[0].time_ms = 50; /* its place */
            e[1].time_ms = 60; /* a key this slice never tested */
            once_slice_held held;
            CHECK_OK(once_slice_events_stamp(f, e, 2, &held));
            CHECK(e[0].status == ONCE_OK && !e[0].seen && e[1].status == ONCE_OK);
            CHECK(held.items == 2 && once_items(f) == 2);
        }
        /* Other lines move the count on to 50 + N: the key is still inside. */
        for (uint64_t t = 51; t <= 50 + WINDOW; t++) {
            once_digest other;
            once_digest_with_seed(6, &t, sizeof t, &other);
            CHECK_OK(once_add_digest(f, &other, t));
        }
        bool present = false;
        CHECK_OK(once_query_digest(f, &e[0].digest, 50 + WINDOW, &present));
        CHECK(present == (stamped == 1));
        once_free(f);
    }
    once_filter *f = NULL;
    CHECK_OK(once_create(&f, &c));
    once_slice_event late = {.time_ms = ONCE_MAX_TIME_MS + 1};
    CHECK_STATUS(once_slice_events_stamp(f, &late, 1, NULL), ONCE_ERR_INVALID);
    CHECK(once_items(f) == 0);
    once_free(f);
}

/* Events and verdicts survive a round trip; every malformed message is refused. */
static void whole_slice_wire_round_trips_and_refuses(void)
{
    once_slice_event e[11], back[11];
    for (size_t i = 0; i < 11; i++)
        e[i] = (once_slice_event){.digest = {testing_mix(i), testing_mix(i + 100)},
                                  .time_ms = i * 1000, .seen = i % 3 == 0,
                                  .status = i == 4 ? ONCE_ERR_TIME : ONCE_OK};
    e[4].seen = false;
    for (int timed = 0; timed < 2; timed++) {
        uint8_t wire[512];
        size_t len = 0, count = 0;
        CHECK(once_slice_events_size(11, timed) <= sizeof wire);
        CHECK_STATUS(once_slice_events_encode(e, 11, timed, wire,
                                              once_slice_events_size(11, timed) - 1, &len),
                     ONCE_ERR_INVALID);
        CHECK_OK(once_slice_events_encode(e, 11, timed, wire, sizeof wire, &len));
        CHECK(len == once_slice_events_size(11, timed));
        CHECK_OK(once_slice_events_count(wire, len, &count));
        CHECK(count == 11);
        CHECK_OK(once_slice_events_decode(wire, len, back));
        for (size_t i = 0; i < 11; i++)
            CHECK(back[i].digest.lo == e[i].digest.lo && back[i].digest.hi == e[i].digest.hi &&
                  back[i].time_ms == (timed ? e[i].time_ms : 0));
        /* Every cut, a byte more, another version or flag, a count too large. */
        for (size_t cut = 0; cut < len; cut++)
            CHECK_STATUS(once_slice_events_count(wire, cut, &count), ONCE_ERR_CORRUPT);
        CHECK_STATUS(once_slice_events_count(wire, len + 1, &count), ONCE_ERR_CORRUPT);
        wire[0] = 1;
        CHECK_STATUS(once_slice_events_decode(wire, len, back), ONCE_ERR_CORRUPT);
        wire[0] = 2;
        wire[1] |= 4;
        CHECK_STATUS(once_slice_events_count(wire, len, &count), ONCE_ERR_CORRUPT);
        wire[1] &= 1;
        wire[2] = 12;
        CHECK_STATUS(once_slice_events_count(wire, len, &count), ONCE_ERR_CORRUPT);
    }
    uint8_t wire[128];
    size_t len = 0;
    once_slice_held held = {123456, 789}, got;
    CHECK_OK(once_slice_verdicts_encode(e, 11, &held, wire, sizeof wire, &len));
    CHECK(len == once_slice_verdicts_size(e, 11));
    CHECK_OK(once_slice_verdicts_decode(wire, len, back, 11, &got));
    CHECK(got.bytes == 123456 && got.items == 789);
    for (size_t i = 0; i < 11; i++)
        CHECK(back[i].seen == e[i].seen && back[i].status == e[i].status);
    for (size_t cut = 0; cut < len; cut++)
        CHECK_STATUS(once_slice_verdicts_decode(wire, cut, back, 11, NULL), ONCE_ERR_CORRUPT);
    CHECK_STATUS(once_slice_verdicts_decode(wire, len, back, 10, NULL), ONCE_ERR_CORRUPT);
    /* A failure that names an event past the count, or one answered seen. */
    size_t failure = len - 5;
    wire[failure] = 11;
    CHECK_STATUS(once_slice_verdicts_decode(wire, len, back, 11, NULL), ONCE_ERR_CORRUPT);
    wire[failure] = 0; /* event 0 is answered seen */
    CHECK_STATUS(once_slice_verdicts_decode(wire, len, back, 11, NULL), ONCE_ERR_CORRUPT);
}

static const testing_case cases[] = {
    {"slice_runs_as_its_memory_site", slice_runs_as_its_memory_site},
    {"slice_keeps_its_state_through_a_load", slice_keeps_its_state_through_a_load},
    {"slice_refuses_keys", slice_refuses_keys},
    {"slice_checks_a_batch_before_it_runs", slice_checks_a_batch_before_it_runs},
    {"wire_round_trips", wire_round_trips},
    {"wire_refuses_malformed_messages", wire_refuses_malformed_messages},
    {"slice_loader_refuses_what_it_cannot_be", slice_loader_refuses_what_it_cannot_be},
    {"slice_allocation_failures_leave_nothing", slice_allocation_failures_leave_nothing},
    {"whole_slices_answer_as_the_sharded_filter", whole_slices_answer_as_the_sharded_filter},
    {"whole_slice_events_run_around_a_refusal", whole_slice_events_run_around_a_refusal},
    {"whole_slice_wire_round_trips_and_refuses", whole_slice_wire_round_trips_and_refuses},
    {"whole_slice_stamps_keep_a_key_from_its_place", whole_slice_stamps_keep_a_key_from_its_place},
};

TESTING_MAIN(cases)
