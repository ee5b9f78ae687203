/*
 * site/slice.c - one slice of a sliced filter kept as a filter of its own (ONCE_SLICE,
 * once_sliced.h, "Slices kept apart").
 *
 * Design
 *   A sliced filter (paper 000, section 3) whose sites are other processes keeps each
 *   slice where its site runs: a Redis key of the module, one per slice.  What such a
 *   site holds is exactly a memory site (site/memory_site.c: bits, or packed timers with a
 *   window, sub-filters with growth), so a slice is a memory site inside a filter
 *   object: it is created, described, cleared, saved and loaded as every filter is
 *   (once_save, once_load, the chunked dumps a Redis value travels by), and it runs
 *   site requests (once_slice_run) instead of keys.  The positions come placed from
 *   the producer, which alone knows the keys, the seed and the slicing; every key call
 *   answers ONCE_ERR_UNSUPPORTED.
 *
 *   A remote producer is not trusted: once_slice_run checks a whole batch before it
 *   runs any of it (every position inside the slice, every time in range), so a bad
 *   request changes nothing.  Its clock moves with the sets' producer times, so it
 *   keeps the bound every time window has (once.h, "Event time"): a set more than
 *   max_time_jump ahead of the clock is refused (ONCE_ERR_TIME in its status) rather
 *   than let one outlier expire the slice; the batch runs on around it.
 *
 * Saved form (docs/FORMAT.md, type 13): the memory site's config and clock in the
 * parameters, its sub-filters in the payload (slice/sites.h, memory_site_state).
 *
 * Invariants
 *   - `site` is a memory site of `config` (no budget, not shared), owned here;
 *   - items counts the requests that set positions not all set before.
 */
#include "site/memory_site.h"

#include "core/alloc.h"
#include "core/limits.h"
#include "core/structure.h"

#include <math.h>
#include <string.h>

typedef struct slice_filter {
    once_filter base;
    once_memory_site_config config;
    once_site site;
} slice_filter;

extern const once_filter_ops once_slice_ops;

#define SLICE(f) ((slice_filter *)(f))
#define CSLICE(f) ((const slice_filter *)(f))

static bool slice_config_valid(const once_memory_site_config *c)
{
    return c->bits != 0 && c->bits % 64 == 0 && c->bits <= ONCE_SLICE_MAX_BITS &&
           c->budget == NULL && !c->shared && c->growth != ONCE_GROWTH_BOUNDED;
}

static once_status slice_new(once_filter **out, const once_memory_site_config *config)
{
    if (!slice_config_valid(config))
        return ONCE_ERR_INVALID;
    slice_filter *s = once_calloc(1, sizeof *s);
    if (s == NULL)
        return ONCE_ERR_NOMEM;
    once_status st = once_memory_site_create(config, &s->site);
    if (st != ONCE_OK) {
        once_free_memory(s);
        return st;
    }
    s->base.ops = &once_slice_ops;
    s->base.format = ONCE_FORMAT_VERSION;
    s->base.max_time_jump = ONCE_DEFAULT_MAX_TIME_JUMP_MS;
    s->config = *config;
    *out = &s->base;
    return ONCE_OK;
}

once_status once_slice_create(once_filter **out, const once_memory_site_config *config)
{
    if (out == NULL || config == NULL)
        return ONCE_ERR_INVALID;
    *out = NULL;
    return slice_new(out, config);
}

/* once_create: `bits` cells, with span_ms a window; no growth (once_slice_create). */
static once_status slice_create(once_filter **out, const once_config *c)
{
    if (c->hashes != 0 || c->window != 0)
        return ONCE_ERR_INVALID;
    once_memory_site_config config = {.bits = c->bits, .window_ms = c->span_ms};
    once_status st = slice_new(out, &config);
    if (st != ONCE_OK)
        return st;
    (*out)->capacity = c->capacity;
    (*out)->error = 0.0;
    (*out)->max_time_jump = c->max_time_jump_ms;
    if (c->seed_is_set)
        (*out)->seed = c->seed;
    return ONCE_OK;
}

static bool slice_explicit_geometry(const once_config *c)
{
    (void)c;
    return true;
}

once_status once_slice_config(const once_filter *f, once_memory_site_config *config)
{
    if (f == NULL || config == NULL)
        return ONCE_ERR_INVALID;
    if (f->ops != &once_slice_ops)
        return ONCE_ERR_UNSUPPORTED;
    *config = CSLICE(f)->config;
    return ONCE_OK;
}

once_status once_slice_describe(const once_filter *f, once_site_info *info)
{
    if (f == NULL || info == NULL)
        return ONCE_ERR_INVALID;
    if (f->ops != &once_slice_ops)
        return ONCE_ERR_UNSUPPORTED;
    const once_site *site = &CSLICE(f)->site;
    site->describe(site->context, info);
    return ONCE_OK;
}

/* ------------------------------------------------------------ running requests */

static bool request_valid(const slice_filter *s, const once_site_request *q)
{
    if ((q->op != ONCE_SITE_TEST && q->op != ONCE_SITE_SET && q->op != ONCE_SITE_TEST_AND_SET) ||
        (q->positions == NULL && q->count != 0) || q->time_ms > ONCE_MAX_TIME_MS)
        return false;
    for (uint32_t i = 0; i < q->count; i++)
        if (q->positions[i] >= s->config.bits)
            return false;
    return true;
}

once_status once_slice_run(once_filter *f, once_site_request *requests, size_t count)
{
    if (f == NULL || (requests == NULL && count != 0))
        return ONCE_ERR_INVALID;
    if (f->ops != &once_slice_ops)
        return ONCE_ERR_UNSUPPORTED;
    slice_filter *s = SLICE(f);
    for (size_t r = 0; r < count; r++)
        if (!request_valid(s, &requests[r]))
            return ONCE_ERR_INVALID;
    /* The clock the sets move, followed as the site moves it (a set's time, when
     * later), so that a set too far ahead of it is known before the batch runs. */
    memory_site_state state;
    memory_site_get_state(&s->site, &state);
    uint64_t clock = state.clock, jump = f->max_time_jump;
    bool started = state.clock_started, windowed = s->config.window_ms != 0;
    size_t from = 0;
    for (size_t r = 0; r <= count; r++) {
        once_site_request *q = r < count ? &requests[r] : NULL;
        bool refused = q != NULL && windowed && q->op != ONCE_SITE_TEST && started &&
                       jump != 0 && q->time_ms > clock && q->time_ms - clock > jump;
        if (q != NULL && !refused) {
            if (windowed && q->op != ONCE_SITE_TEST && (!started || q->time_ms > clock)) {
                clock = q->time_ms;
                started = true;
            }
            continue;
        }
        if (r > from)
            s->site.run(s->site.context, requests + from, r - from);
        for (size_t i = from; i < r; i++)
            if (requests[i].op != ONCE_SITE_TEST && requests[i].status == ONCE_OK &&
                !requests[i].all_set)
                f->items++;
        if (q != NULL) {
            q->all_set = false;
            q->status = ONCE_ERR_TIME;
            q->generations = 0;
        }
        from = r + 1;
    }
    return ONCE_OK;
}

/* ------------------------------------------------------------ the filter's calls */

static void slice_destroy(once_filter *f)
{
    slice_filter *s = SLICE(f);
    if (s->site.destroy != NULL)
        s->site.destroy(s->site.context);
    once_free_memory(s);
}

static bool slice_query(const once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)f, (void)h, (void)now_ms;
    return false; /* never called: api/filter.c refuses key calls (positions_only) */
}

static once_status slice_add(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    (void)f, (void)h, (void)now_ms;
    return ONCE_ERR_UNSUPPORTED;
}

static once_status slice_test_and_add(once_filter *f, const once_hash *h, uint64_t now_ms,
                                      bool *seen)
{
    (void)f, (void)h, (void)now_ms;
    *seen = false;
    return ONCE_ERR_UNSUPPORTED;
}

static once_status slice_query_key(const once_filter *f, const void *key, size_t len,
                                   uint64_t now_ms, bool *present)
{
    (void)f, (void)key, (void)len, (void)now_ms;
    *present = false;
    return ONCE_ERR_UNSUPPORTED;
}

static once_status slice_add_key(once_filter *f, const void *key, size_t len, uint64_t now_ms)
{
    (void)f, (void)key, (void)len, (void)now_ms;
    return ONCE_ERR_UNSUPPORTED;
}

static once_status slice_test_and_add_key(once_filter *f, const void *key, size_t len,
                                          uint64_t now_ms, bool *seen)
{
    (void)f, (void)key, (void)len, (void)now_ms;
    *seen = false;
    return ONCE_ERR_UNSUPPORTED;
}

static void slice_clear(once_filter *f)
{
    memory_site_clear(&SLICE(f)->site);
}

static bool slice_same_geometry(const once_filter *a, const once_filter *b)
{
    const once_memory_site_config *x = &CSLICE(a)->config, *y = &CSLICE(b)->config;
    return x->bits == y->bits && x->window_ms == y->window_ms && x->growth == y->growth &&
           x->max_density == y->max_density;
}

static void slice_stats(const once_filter *f, once_stats *s)
{
    const slice_filter *x = CSLICE(f);
    once_site_info info;
    x->site.describe(x->site.context, &info);
    s->bits = info.cells * info.filters;
    s->bits_set = info.cells_set;
    s->span_ms = x->config.window_ms;
    s->filters = info.filters;
}

static uint64_t slice_memory(const once_filter *f)
{
    const slice_filter *x = CSLICE(f);
    once_site_info info;
    x->site.describe(x->site.context, &info);
    return sizeof *x + info.bytes;
}

/* The clock the sets moved (a windowed slice's; a slice of bits never starts one). */
static bool slice_clock(const once_filter *f, uint64_t *latest)
{
    memory_site_state state;
    memory_site_get_state(&CSLICE(f)->site, &state);
    *latest = state.clock;
    return state.clock_started;
}

/* ------------------------------------------------------------ serialization */

/* Saved parameters, in order. */
enum {
    P_BITS,
    P_WINDOW,
    P_GROWTH,
    P_MAX_DENSITY, /* IEEE-754 binary64 bits; 0 without growth */
    P_MAX_TIME_JUMP,
    P_CLOCK,
    P_STARTED,
    P_CURSOR,
    P_CREDIT,
    P_OPENED,
    P_FILTERS,
    P_COUNT
};

static uint64_t slice_params_size(const once_filter *f)
{
    (void)f;
    return P_COUNT * 8;
}

static uint64_t slice_payload_size(const once_filter *f)
{
    return memory_site_payload_bytes(&CSLICE(f)->site);
}

static void slice_save_params(const once_filter *f, once_writer *w)
{
    const slice_filter *s = CSLICE(f);
    memory_site_state state;
    memory_site_get_state(&s->site, &state);
    uint64_t density_bits;
    memcpy(&density_bits, &s->config.max_density, sizeof density_bits);
    uint64_t v[P_COUNT] = {
        [P_BITS] = s->config.bits,
        [P_WINDOW] = s->config.window_ms,
        [P_GROWTH] = s->config.growth,
        [P_MAX_DENSITY] = s->config.growth != ONCE_GROWTH_NONE ? density_bits : 0,
        [P_MAX_TIME_JUMP] = f->max_time_jump,
        [P_CLOCK] = state.clock,
        [P_STARTED] = state.clock_started,
        [P_CURSOR] = state.sweep_cursor,
        [P_CREDIT] = state.sweep_credit,
        [P_OPENED] = state.opened,
        [P_FILTERS] = state.filters,
    };
    for (int i = 0; i < P_COUNT; i++)
        once_writer_u64(w, v[i]);
}

static void slice_save_payload(const once_filter *f, once_writer *w)
{
    memory_site_save(&CSLICE(f)->site, w);
}

static once_status slice_load(once_filter **out, const uint8_t *params, size_t params_len,
                              const uint8_t *payload, size_t payload_len)
{
    uint64_t v[P_COUNT];
    if (!once_read_params(params, params_len, v, P_COUNT))
        return ONCE_ERR_CORRUPT;
    double density;
    memcpy(&density, &v[P_MAX_DENSITY], sizeof density);
    bool grows = v[P_GROWTH] == ONCE_GROWTH_DENSITY || v[P_GROWTH] == ONCE_GROWTH_CARDINALITY;
    if (v[P_BITS] == 0 || v[P_BITS] % 64 != 0 || v[P_BITS] > ONCE_SLICE_MAX_BITS ||
        v[P_WINDOW] > ONCE_MAX_TIME_MS / 2 || (v[P_GROWTH] != ONCE_GROWTH_NONE && !grows) ||
        (grows ? !(density > 0.0 && density < 1.0) : v[P_MAX_DENSITY] != 0) ||
        v[P_MAX_TIME_JUMP] > ONCE_MAX_TIME_MS || v[P_STARTED] > 1 ||
        v[P_OPENED] > UINT64_MAX / 2 || v[P_FILTERS] > ONCE_MEMORY_SITE_MAX_FILTERS)
        return ONCE_ERR_CORRUPT;
    once_memory_site_config config = {.bits = v[P_BITS],
                                      .window_ms = v[P_WINDOW],
                                      .growth = (once_growth)v[P_GROWTH],
                                      .max_density = grows ? density : 0.0};
    memory_site_state state = {.clock = v[P_CLOCK],
                              .sweep_cursor = v[P_CURSOR],
                              .sweep_credit = v[P_CREDIT],
                              .opened = v[P_OPENED],
                              .filters = (uint32_t)v[P_FILTERS],
                              .clock_started = v[P_STARTED] != 0};
    slice_filter *s = once_calloc(1, sizeof *s);
    if (s == NULL)
        return ONCE_ERR_NOMEM;
    once_status st = memory_site_load(&config, &state, payload, payload_len, &s->site);
    if (st != ONCE_OK) {
        once_free_memory(s);
        return st;
    }
    s->base.ops = &once_slice_ops;
    s->base.max_time_jump = v[P_MAX_TIME_JUMP];
    s->config = config;
    *out = &s->base;
    return ONCE_OK;
}

const once_filter_ops once_slice_ops = {
    .type = ONCE_SLICE,
    .create = slice_create,
    .explicit_geometry = slice_explicit_geometry,
    .destroy = slice_destroy,
    .query = slice_query,
    .add = slice_add,
    .test_and_add = slice_test_and_add,
    .query_key = slice_query_key,
    .add_key = slice_add_key,
    .test_and_add_key = slice_test_and_add_key,
    .clear = slice_clear,
    .same_geometry = slice_same_geometry,
    .stats = slice_stats,
    .memory = slice_memory,
    .saved_params_size = slice_params_size,
    .saved_payload_size = slice_payload_size,
    .save_params = slice_save_params,
    .save_payload = slice_save_payload,
    .load = slice_load,
    .positions_only = true,
    .clock = slice_clock,
};
