/*
 * window/tlbf.c - time windows: the Time-limited Bloom Filter (paper 004), an Age-Partitioned
 * filter whose slices age by the clock instead of by a fixed count.
 *
 * Design
 *   An ordered list of slices, newest first.  Each slice has its own size m_i, a
 *   capacity c_i = floor(m_i ln2) (the insertions that bring it to fill 1/2), a count
 *   of insertions received, a hash index (one of k, so the k insertion slices always
 *   use distinct hash functions), and a timestamp: the time of the last insertion it
 *   received while it was one of the k insertion slices.  Insertions set one bit in
 *   each of slices 0..k-1.  A query is the APBF skip-back search (paper 001,
 *   Algorithm 1) over all current slices, treating a slice whose timestamp is older
 *   than now - T as non-matching.
 *
 *   Shifts (a new empty slice 0; the others age by one) happen
 *     - by fill: right after a shift, the insertions allowed until the next one are
 *       min over insertion slices i of ceil((c_i - n_i) / (k - i)), so no insertion
 *       slice passes its fill limit before it leaves the insertion positions;
 *     - by time: at the first insertion after a generation boundary (boundaries every
 *       ceil(T / l) from the start of the last generation that began on time), one
 *       shift for every boundary passed, up to k (shift_by_time).  This keeps expiry
 *       independent of traffic: at a trickle, or after an idle stretch, a key's slices
 *       leave the insertion positions within k generations, their timestamps freeze,
 *       and T later they expire;
 *     - all k at once when a generation fills at more than twice the rate its slices
 *       were sized for (shift_by_fill): old insertion slices too small for the new
 *       rate would each force short generations and crowd the span with full slices.
 *   Each shift sizes the new slice for the observed rate.  The target generation size
 *   is ceil(g_last * (T / l) / dt) + 1 with dt the duration of the last generation,
 *   at most T / l and at least 1 ms (a burst that fills a generation within one tick).  The new slice must
 *   absorb one generation in each of its k insertion generations; in generation t it
 *   shares insertions with the older slices still in insertion positions, which can
 *   take at most R_j / (k - j) more a generation (R_j their remaining capacity, j their
 *   position), so its capacity is sum over t of min(target, those limits) and its size
 *   capacity / ln2 bits, at least 2k.
 *   On a shift, the oldest slices are retired while there are more than k + l of them
 *   and the oldest has expired; an oldest slice still live is kept (the filter grows),
 *   because dropping it would lose keys inside the span.
 *
 * Window and slack (time in ms, as every argument)
 *   A key inserted at t0 sets slices whose timestamps are >= t0; a slice stamped s is
 *   skipped from s + T on and retired only once skipped, so a key is reported seen
 *   while t - t0 < T (no false negatives inside the window (t - T, t]).  A slice
 *   created at c is an insertion slice only before c + k ceil(T / l) (every boundary
 *   counts a shift), so a key is reported at most until t0 + T + k ceil(T / l): the
 *   slack is k ceil(T / l).
 *
 * Time (once.h, "Event time")
 *   Every call takes the time; the library never reads a clock.  Times are absolute
 *   (a filter saved today and loaded tomorrow ages correctly).  The clock is the
 *   latest time accepted; every accepted event moves it, inserted or not.  An event
 *   more than the filter's max time jump past it is refused (ONCE_ERR_TIME) and
 *   changes nothing; an earlier one is taken at the clock.  Nothing subtracts times
 *   without ordering them first.
 *
 * Batches
 *   The batch loop (once_batch_loop) requests a key's slice lines some keys ahead
 *   under the slices of that moment and then runs the one-key operation, which clamps
 *   the key's own time, decides its shifts and recomputes every position: answers are
 *   exactly those of one-key calls in array order, and a refused shift stops the batch
 *   at that key.
 *
 * Bounded memory
 *   A cap on the number of slices and on once_bytes (the slices' arrays, the slice
 *   table, the struct and the metadata), set at construction.  A shift
 *   that would pass either fails with ONCE_ERR_FULL and changes nothing; the key is
 *   then not inserted and the caller decides (the CLI stops with an error).
 *
 * Invariants
 *   - k + l <= slices <= max_slices, and once_bytes <= max_bytes;
 *   - any k consecutive slices have distinct hash indices (index = serial mod k);
 *   - queries never change state.
 */
#include "window/skip_back.h"
#include "core/limits.h"
#include "math/age.h"
#include "math/cardinality.h"

#include <math.h>

/* The table at the end of this file, which the code above refers to. */
extern const once_filter_ops once_tlbf_ops;

#define TLBF_MAX_SLICES 65536u
#define TLBF_MAX_SPAN_MS (UINT64_C(1) << 56)
#define SLICE_FIELDS 6
#define SLICE_FIELDS_UNBOUNDED 5 /* states without the clock's bound: no capacity field */
#define TLBF_GROWTH 8 /* a new slice holds at most 8x the largest current one */

typedef struct tlbf_slice {
    uint64_t bits;     /* m_i */
    uint64_t capacity; /* floor(m_i ln 2) */
    uint64_t count;    /* insertions received */
    uint64_t stamp;    /* ms of the last insertion as an insertion slice */
    uint32_t cubic;    /* hash (hash - 1) (hash - 2) / 6, its probe's cubic term (< 2^19) */
    uint16_t hash;     /* hash index, < k <= ONCE_MAX_AGE_SLICES */
    bool stamped;      /* false: never received one (always checked) */
    uint64_t *array;
} tlbf_slice;

/* once_bytes counts the slice table (memory_for), and a loader refuses a file whose
 * filter would pass its cap: a larger slice would refuse files saved at their cap. */
_Static_assert(sizeof(tlbf_slice) == 48, "the slice's size is part of once_bytes");
_Static_assert(ONCE_MAX_AGE_SLICES <= 128, "cubic and hash fit their fields");

typedef struct tlbf {
    once_filter base;
    uint32_t k, l;
    uint64_t span; /* T */
    uint32_t policy;
    uint64_t max_bytes;
    uint32_t max_slices;
    uint32_t count; /* slices in use */
    tlbf_slice *slices; /* [0] newest; room for max_slices */
    uint64_t countdown; /* insertions until a fill-triggered shift */
    uint64_t target;    /* target insertions per generation */
    uint64_t generation_size;
    uint64_t generation_start;
    uint64_t latest; /* the latest time seen */
    bool started;    /* `latest` and `generation_start` are set */
    uint64_t serial; /* creation number of the next slice */
    uint64_t bytes;  /* bytes of all slice arrays */
} tlbf;

#define TL(f) ((tlbf *)(f))
#define CTL(f) ((const tlbf *)(f))

/* Slice serials: only serial mod k is used (the slice's hash index).  They wrap at the
 * largest multiple of k below 2^64 rather than at 2^64, which k need not divide, so the
 * indices run on unbroken; the loader refuses a serial at or past that bound. */
static uint64_t serial_bound(uint32_t k)
{
    return UINT64_MAX / k * k;
}

static uint64_t next_serial(uint64_t serial, uint32_t k)
{
    return serial + 1 >= serial_bound(k) ? 0 : serial + 1;
}

static uint64_t slice_words(uint64_t bits)
{
    return once_words_for_bits(bits);
}

/* The structure's memory (once_bytes without the metadata) with `slices` slices whose
 * arrays hold `bytes` bytes together: the struct, the slice table (room for
 * max_slices), and each array at its cost to the allocator (once_aligned_footprint). */
static uint64_t memory_for(uint32_t max_slices, uint64_t slices, uint64_t bytes)
{
    return once_table_memory(sizeof(tlbf), max_slices, sizeof(tlbf_slice),
                             bytes + slices * ONCE_ALIGNED_PAD);
}

static uint64_t capacity_of(uint64_t bits)
{
    return (uint64_t)floor((double)bits * log(2.0));
}

static void slice_set_hash(tlbf_slice *s, uint32_t hash)
{
    s->hash = (uint16_t)hash;
    s->cubic = (uint32_t)once_probe_cubic(hash);
}

static once_status slice_init(tlbf_slice *s, uint64_t bits, uint32_t hash)
{
    memset(s, 0, sizeof *s);
    s->bits = bits;
    s->capacity = capacity_of(bits);
    slice_set_hash(s, hash);
    s->array = once_words_alloc(slice_words(bits));
    return s->array ? ONCE_OK : ONCE_ERR_NOMEM;
}

/* A slice stamped at s holds only deliveries made at or before s: at `now` they are all
 * outside the window (now - T, now] once now - s >= T. */
static bool expired(const tlbf_slice *s, uint64_t now, uint64_t span)
{
    return s->stamped && s->stamp <= now && now - s->stamp >= span;
}

/* A key's bit in slice s: probe s->hash of the filter's sequence (its multiplier `mix`:
 * core/hash.h), so that slices keep their bits whatever their place in the ring.  The
 * probe's cubic term is the slice's, computed once: per key it took three multiplies
 * of the six a position costs. */
static inline uint64_t slice_position(const tlbf_slice *s, const once_hash *h, uint64_t mix)
{
    return once_reduce(once_probe_mix(once_probe_value_from(h, s->hash, s->cubic), mix),
                       s->bits);
}

/* The clock never goes back past the latest time seen (0 for a new filter), whatever
 * state the filter came from: slice stamps are never later than `latest`. */
static uint64_t clamp_time(const tlbf *t, uint64_t now)
{
    return now < t->latest ? t->latest : now;
}

/* ------------------------------------------------------------ sizing */

/* Insertions the k insertion slices allow before one passes its share. */
static uint64_t allowed_insertions(const tlbf *t)
{
    uint64_t allowed = UINT64_MAX;
    for (uint32_t i = 0; i < t->k && i < t->count; i++) {
        const tlbf_slice *s = &t->slices[i];
        uint64_t room = s->capacity > s->count ? s->capacity - s->count : 0;
        uint64_t share = (room + (t->k - i) - 1) / (t->k - i);
        if (share < allowed)
            allowed = share;
    }
    return allowed == 0 ? 1 : allowed; /* always let the current insertion through */
}

/* Capacity of a new slice 0 at target generation size `target` (see the header). */
static uint64_t new_slice_capacity(const tlbf *t, uint64_t target)
{
    uint64_t total = 0;
    for (uint32_t gen = 0; gen < t->k; gen++) {
        uint64_t size = target;
        /* Old slice now at position p (0 .. k-2) will be at p + 1 + gen. */
        for (uint32_t p = 0; p + 1 + gen < t->k && p < t->count; p++) {
            const tlbf_slice *s = &t->slices[p];
            uint64_t room = s->capacity > s->count ? s->capacity - s->count : 0;
            uint64_t limit = room / (t->k - (p + 1));
            if (limit < size)
                size = limit;
        }
        total += size;
    }
    return total;
}

static uint64_t bits_for_capacity(uint64_t capacity, uint32_t k)
{
    double bits = ceil((double)capacity / log(2.0));
    if (bits < 2.0 * k)
        bits = 2.0 * k;
    if (bits > (double)ONCE_MAX_CELLS)
        bits = (double)ONCE_MAX_CELLS;
    return (uint64_t)bits;
}

/* ------------------------------------------------------------ shift */

/* The time a generation may last, T / l rounded up: generation boundaries fall at
 * multiples of it from the start of the generation that began on time. */
static uint64_t generation_ms(const tlbf *t)
{
    return (t->span + t->l - 1) / t->l;
}

/* Target insertions for the next generation: the last one's rate over a generation's
 * time, ceil(g_last (T / l) / dt) + 1.  dt is at most T / l (a generation that ended on
 * time ended at its boundary, whatever the time of the insertion that noticed it) and
 * at least 1 ms (a burst inside one clock tick). */
static double generation_target(const tlbf *t, uint64_t now)
{
    uint64_t per_generation = generation_ms(t);
    uint64_t duration = now > t->generation_start ? now - t->generation_start : 0;
    if (duration > per_generation)
        duration = per_generation;
    if (duration == 0)
        duration = 1;
    return ceil((double)t->generation_size * (double)per_generation / (double)duration) + 1.0;
}

/* What one shift does: the new slice's size and the oldest slices it retires. */
typedef struct shift_plan {
    uint64_t bits;     /* of the new slice 0 */
    uint64_t capacity; /* insertions it takes (its fill limit) */
    uint64_t target; /* insertions per generation it was sized for */
    uint32_t retire; /* oldest slices freed */
    uint64_t freed;  /* their bytes */
} shift_plan;

/* Plan a shift at `now` for `target` insertions a generation, within the caps
 * (ONCE_ERR_FULL otherwise).  Reads only the slices' sizes, counts and stamps. */
static once_status plan_shift(const tlbf *t, uint64_t now, double target, uint32_t generations,
                              shift_plan *p)
{
    /* Never size a slice past what the memory cap could hold. */
    double ceiling = (double)t->max_bytes * 8.0 * log(2.0) / t->k;
    if (target > ceiling)
        target = ceiling;
    if (target < 1.0)
        target = 1.0;
    /* A new slice is at most GROWTH times the largest current one: a rate estimate
     * from one short generation (or a hostile saved state) cannot claim the whole
     * memory cap in one step; a real surge reaches its size within a few shifts. */
    uint64_t largest = 0;
    for (uint32_t i = 0; i < t->count; i++)
        if (t->slices[i].capacity > largest)
            largest = t->slices[i].capacity;
    double growth_limit = (double)largest * TLBF_GROWTH / t->k + 1.0;
    if (target > growth_limit)
        target = growth_limit;
    /* `generations`: the slice is one of a set that replaces every insertion slice at
     * once and takes this many generations of `target` before it leaves them; 0: it
     * shares them with the older insertion slices, within their room. */
    uint64_t capacity = generations ? (uint64_t)target * generations
                                    : new_slice_capacity(t, (uint64_t)target);
    uint64_t bits = bits_for_capacity(capacity, t->k);
    uint64_t fill_capacity = capacity_of(bits);
    /* More than k + l slices (a rate increase keeps old live slices) give a query more
     * places to find k false matches: F grows about like (slices - k + 1) r^k.  New
     * slices then aim at a lower fill r' = r ((l + 1) / (slices - k + 1))^(1/k), which
     * holds the rate at the target once they age into the query's range.  The fill is
     * a limit, not only a size: the slice's capacity (what the shift trigger lets in)
     * is the insertions that bring it to r', so a rate that keeps rising meets more
     * frequent shifts instead of slices filled past r'. */
    if (t->count + 1 > t->k + t->l) {
        double extra = (double)(t->l + 1) / (double)(t->count + 1 - t->k + 1);
        double fill = 0.5 * pow(extra, 1.0 / t->k);
        double scaled = ceil((double)capacity / -log1p(-fill));
        if (scaled > (double)bits)
            bits = scaled > (double)ONCE_MAX_CELLS ? ONCE_MAX_CELLS : (uint64_t)scaled;
        fill_capacity = (uint64_t)floor((double)bits * -log1p(-fill));
        if (fill_capacity == 0)
            fill_capacity = 1;
    }
    uint64_t new_bytes = slice_words(bits) * 8;

    /* Oldest slices that may go: beyond k + l, and expired (or never used). */
    uint32_t retire = 0;
    uint64_t freed = 0;
    while (t->count + 1 - retire > t->k + t->l) {
        const tlbf_slice *oldest = &t->slices[t->count - 1 - retire];
        if (!(expired(oldest, now, t->span) || oldest->count == 0))
            break;
        freed += slice_words(oldest->bits) * 8;
        retire++;
    }
    uint32_t slices = t->count + 1 - retire;
    if (slices > t->max_slices ||
        !once_fits_cap(memory_for(t->max_slices, slices, t->bytes - freed + new_bytes),
                       t->base.metadata_len, t->max_bytes))
        return ONCE_ERR_FULL;
    p->bits = bits;
    p->capacity = fill_capacity;
    p->target = (uint64_t)target;
    p->retire = retire;
    p->freed = freed;
    return ONCE_OK;
}

/* Carry out a planned shift with the new slice's zeroed `array`.  `owner`: the slices'
 * arrays belong to t, so the retired ones are freed (a plan's scratch copy frees none). */
static void apply_shift(tlbf *t, uint64_t now, const shift_plan *p, uint64_t *array, bool owner)
{
    for (uint32_t r = 0; r < p->retire; r++)
        if (owner)
            once_words_free(t->slices[t->count - 1 - r].array);
    t->count -= p->retire;
    memmove(&t->slices[1], &t->slices[0], t->count * sizeof t->slices[0]);
    tlbf_slice *fresh = &t->slices[0];
    memset(fresh, 0, sizeof *fresh);
    fresh->bits = p->bits;
    fresh->capacity = p->capacity;
    slice_set_hash(fresh, (uint32_t)(t->serial % t->k));
    fresh->array = array;
    t->count++;
    t->serial = next_serial(t->serial, t->k);
    t->bytes = t->bytes - p->freed + slice_words(p->bits) * 8;
    t->target = p->target;
    t->generation_size = 0;
    t->generation_start = now;
    t->countdown = allowed_insertions(t);
}

/*
 * `n` shifts at once (at most k), all or none: they are planned first (several on a
 * copy of the slice table), then their arrays allocated, then applied.  Every new slice
 * is sized for `target` insertions a generation; when n = k they replace every
 * insertion slice, and the one that ends at position p takes k - p generations of it.
 * The new generation starts at `start`.
 */
static once_status shift_several(tlbf *t, uint64_t now, uint32_t n, double target,
                                 uint64_t start)
{
    shift_plan plans[ONCE_MAX_AGE_SLICES];
    uint64_t *arrays[ONCE_MAX_AGE_SLICES];
    once_status st = ONCE_OK;
    if (n == 1) {
        st = plan_shift(t, now, target, t->k == 1, &plans[0]);
    } else {
        tlbf scratch = *t;
        scratch.slices = once_malloc(((size_t)t->count + n) * sizeof *scratch.slices);
        if (scratch.slices == NULL)
            return ONCE_ERR_NOMEM;
        memcpy(scratch.slices, t->slices, t->count * sizeof *t->slices);
        for (uint32_t i = 0; i < n && st == ONCE_OK; i++) {
            st = plan_shift(&scratch, now, target, n == t->k ? i + 1 : 0, &plans[i]);
            if (st == ONCE_OK)
                apply_shift(&scratch, now, &plans[i], NULL, false);
        }
        once_free_memory(scratch.slices);
    }
    uint32_t ready = 0;
    for (; st == ONCE_OK && ready < n; ready++)
        if ((arrays[ready] = once_words_alloc(slice_words(plans[ready].bits))) == NULL)
            st = ONCE_ERR_NOMEM;
    if (st != ONCE_OK) {
        for (uint32_t i = 0; i < ready; i++)
            if (arrays[i] != NULL)
                once_words_free(arrays[i]);
        return st;
    }
    for (uint32_t i = 0; i < n; i++)
        apply_shift(t, now, &plans[i], arrays[i], true);
    t->generation_start = start;
    return ONCE_OK;
}

/*
 * The shifts owed by time: one for every generation boundary passed since the current
 * generation started, at most k (after k, every insertion slice is new).  Doing them
 * all, rather than one, is what keeps the slack bound after an idle stretch: an
 * insertion refreshes the stamps of all k insertion slices, so an old slice left in an
 * insertion position would carry keys from before the gap back into the window.  With
 * every boundary counted, a slice created at c is an insertion slice only before
 * c + k ceil(T / l), so a key delivered at t0 is reported at most until
 * t0 + T + k ceil(T / l) (the reported slack).  The generations skipped were empty;
 * their slices are sized for the rate of the last generation that had traffic (the
 * likeliest rate when it comes back; a lower one only leaves them emptier).
 */
static once_status shift_by_time(tlbf *t, uint64_t now)
{
    uint64_t per_generation = generation_ms(t);
    uint64_t due = (now - t->generation_start) / per_generation;
    uint64_t start = t->generation_start + due * per_generation; /* the last boundary */
    return shift_several(t, now, due < t->k ? (uint32_t)due : t->k, generation_target(t, now),
                         start);
}

/*
 * A shift by fill.  When the generation filled at more than RATE_JUMP times the rate
 * its slices were sized for, the older insertion slices are too small for the new
 * rate: left in place, each would force short generations until it leaves, and the
 * span fills with extra slices at fill 1/2 that a query can match.  They are replaced
 * all at once instead, by k slices sized for the new rate: the old ones leave the
 * insertion positions part-filled, which keeps the false-positive rate of a rate
 * increase close to the target.
 */
#define RATE_JUMP 2.0
#define RATE_JUMP_SAMPLE 32 /* insertions a generation needs to say the rate jumped */

static once_status shift_by_fill(tlbf *t, uint64_t now)
{
    double target = generation_target(t, now);
    if (t->generation_size < RATE_JUMP_SAMPLE || !(target > RATE_JUMP * (double)t->target))
        return shift_several(t, now, 1, target, now);
    /* A burst inside a few milliseconds extrapolates to any rate over T / l: the k new
     * slices are sized for at most GROWTH times the generation just seen, so a burst
     * that goes on is followed through a few such steps rather than one guess. */
    double seen = (double)t->generation_size * TLBF_GROWTH;
    return shift_several(t, now, t->k, target < seen ? target : seen, now);
}

/* A key's bit positions in slices 0 .. k-1 computed ahead (the batch), right while no
 * shift has happened since: `serial` is the filter's serial when they were computed. */
#define READY_SLICES ONCE_AGE_INSERT_LINES

typedef struct tlbf_ready {
    uint64_t serial;
    uint64_t position[READY_SLICES];
    /* The search's: slice i's position in searched[i] when bit i of `known` is set
     * (slices 0 .. 63), computed when its line was requested. */
    uint64_t known;
    uint64_t searched[64];
} tlbf_ready;

/* Insert at `now` (already clamped).  Either everything happens or, when a needed
 * shift is refused, nothing does.  `ready`: positions computed ahead, or NULL. */
static inline __attribute__((always_inline)) once_status
insert(tlbf *t, const once_hash *h, uint64_t now, const tlbf_ready *ready)
{
    if (t->started && t->generation_size > 0 && now - t->generation_start >= generation_ms(t)) {
        once_status st = shift_by_time(t, now);
        if (st != ONCE_OK)
            return st;
    } else if (t->countdown == 0) {
        once_status st = shift_by_fill(t, now);
        if (st != ONCE_OK)
            return st;
    }
    if (!t->started) {
        t->started = true;
        t->generation_start = now;
    }
    t->latest = now;
    bool fresh = ready != NULL && ready->serial == t->serial;
    for (uint32_t i = 0; i < t->k; i++) {
        tlbf_slice *s = &t->slices[i];
        once_bit_set(s->array, fresh && i < READY_SLICES
                                   ? ready->position[i]
                                   : slice_position(s, h, once_filter_probe(&t->base)));
        s->count++;
        s->stamp = now;
        s->stamped = true;
    }
    t->countdown--;
    t->generation_size++;
    return ONCE_OK;
}

/* ------------------------------------------------------------------ ops */

typedef struct tlbf_probe {
    const tlbf *t;
    const once_hash *h;
    uint64_t now;
    uint64_t known; /* slices whose positions `searched` holds (0: none) */
    const uint64_t *searched;
} tlbf_probe;

static inline bool tlbf_slice_matches(const void *ctx, uint32_t i)
{
    const tlbf_probe *p = ctx;
    const tlbf_slice *s = &p->t->slices[i];
    if (expired(s, p->now, p->t->span))
        return false;
    uint64_t position = i < 64 && (p->known >> i & 1)
                            ? p->searched[i]
                            : slice_position(s, p->h, once_filter_probe(&p->t->base));
    return once_bit_get(s->array, position);
}

/* The APBF search over the current slices (l = slices - k), expired slices missing.
 * `ready`: positions computed ahead (the batch), used while no shift has happened since
 * (its serial), or NULL. */
static bool tlbf_search(const tlbf *t, const once_hash *h, uint64_t now_ms, uint32_t *reads,
                        const tlbf_ready *ready)
{
    bool fresh = ready != NULL && ready->serial == t->serial;
    tlbf_probe probe = {t, h, clamp_time(t, now_ms), fresh ? ready->known : 0,
                        fresh ? ready->searched : NULL};
    return once_skip_back_search(t->k, t->count - t->k, tlbf_slice_matches, &probe, reads);
}

static bool tlbf_query(const once_filter *f, const once_hash *h, uint64_t now_ms)
{
    uint32_t reads;
    return tlbf_search(CTL(f), h, now_ms, &reads, NULL);
}

static bool tlbf_query_reads(const once_filter *f, const once_hash *h, uint64_t now_ms,
                             uint32_t *reads)
{
    return tlbf_search(CTL(f), h, now_ms, reads, NULL);
}

/* The time a write at now_ms happens at (once.h, "Event time"): refused past the
 * clock's bound, the clock itself for a late event. */
static inline once_status write_time(const tlbf *t, uint64_t now_ms, uint64_t *now)
{
    if (!once_time_admissible(&t->base, t->latest, t->started, now_ms))
        return ONCE_ERR_TIME;
    *now = clamp_time(t, now_ms);
    return ONCE_OK;
}

static inline __attribute__((always_inline)) once_status
add_at(tlbf *t, const once_hash *h, uint64_t now_ms, const tlbf_ready *ready)
{
    uint64_t now;
    once_status st = write_time(t, now_ms, &now);
    return st != ONCE_OK ? st : insert(t, h, now, ready);
}

static once_status tlbf_add(once_filter *f, const once_hash *h, uint64_t now_ms)
{
    return add_at(TL(f), h, now_ms, NULL);
}

static inline __attribute__((always_inline)) once_status
test_and_insert(tlbf *t, const once_hash *h, uint64_t now_ms, const tlbf_ready *ready,
                bool *seen)
{
    uint64_t now;
    once_status st = write_time(t, now_ms, &now);
    if (st != ONCE_OK)
        return st;
    uint32_t reads;
    *seen = tlbf_search(t, h, now, &reads, ready);
    if (*seen && t->policy != ONCE_POLICY_REFRESH) {
        t->latest = now; /* every event accepted moves the clock, inserted or not */
        return ONCE_OK;
    }
    return insert(t, h, now, ready);
}

/* ---------------------------------------------------------------- batch */

/*
 * The batch runs once_batch_loop with the one-key operations as its step: a key's
 * slice lines are requested `distance` keys ahead under the slices of the moment
 * (once_age_prefetch: the search chain, the k insertion slices, or both), and the
 * step recomputes every position from the slices it finds.  A shift between the two
 * moves every slice down one place (and may retire the oldest), so the lines requested
 * for the keys already ahead partly miss; their answers cannot, and each key's time is
 * clamped and its shifts decided at its own turn, exactly as in one-key calls.  A
 * refused shift stops the batch at that key with ONCE_ERR_FULL.
 */
typedef struct tlbf_lines {
    const tlbf *t;
    const once_hash *h;
    tlbf_ready *ready; /* where the search's positions are kept */
} tlbf_lines;

/* The search runs over all current slices; a slice at fill up to 1/2 matches an absent
 * key about half the time, so the slice after each chain head is requested too. */
static inline once_age_reach tlbf_reach(const tlbf *t)
{
    once_age_reach reach = {t->k, t->count - t->k, 1};
    return reach;
}

static inline void tlbf_prefetch_slice(const void *ctx, uint32_t i, bool write)
{
    const tlbf_lines *p = ctx;
    const tlbf_slice *s = &p->t->slices[i];
    uint64_t position = slice_position(s, p->h, once_filter_probe(&p->t->base));
    if (i < 64) {
        p->ready->searched[i] = position;
        p->ready->known |= UINT64_C(1) << i;
    }
    const uint64_t *line = s->array + (position >> 6);
    if (write)
        once_prefetch_write(line);
    else
        once_prefetch_read(line);
}

typedef struct tlbf_record {
    once_hash h;
    tlbf_ready ready;
} tlbf_record;

static inline __attribute__((always_inline)) void
tlbf_batch_prepare(const void *ctx, void *record, const once_hash *h, once_batch_op op)
{
    const tlbf *t = ctx;
    tlbf_record *r = record;
    r->h = *h;
    r->ready.serial = t->serial;
    r->ready.known = 0;
    tlbf_lines lines = {t, &r->h, &r->ready};
    if (op != ONCE_OP_ADD)
        once_age_prefetch_search(tlbf_reach(t), op == ONCE_OP_TEST_AND_ADD,
                                 tlbf_prefetch_slice, &lines);
    if (op != ONCE_OP_QUERY) {
        for (uint32_t i = 0; i < t->k && i < READY_SLICES; i++) {
            const tlbf_slice *s = &t->slices[i];
            r->ready.position[i] = slice_position(s, &r->h, once_filter_probe(&t->base));
            once_prefetch_write(s->array + (r->ready.position[i] >> 6));
        }
    }
}

/* A one-key test-and-add is the batch's two halves back to back: its lines (the search
 * chain above the insertion slices, and those slices) are all requested before the
 * search reads any, and the insertion uses the positions computed for the requests.
 * A new key (the common case of a dedup stream) then waits for one round of misses
 * instead of the search's misses, one after another, and then the insertion's. */
static once_status tlbf_test_and_add(once_filter *f, const once_hash *h, uint64_t now_ms,
                                     bool *seen)
{
    tlbf_record r;
    tlbf_batch_prepare(f, &r, h, ONCE_OP_TEST_AND_ADD);
    return test_and_insert(TL(f), &r.h, now_ms, &r.ready, seen);
}

static inline __attribute__((always_inline)) once_status
tlbf_batch_step(const void *ctx, void *record, uint64_t now_ms, once_batch_op op, bool *answer)
{
    tlbf *t = (tlbf *)ctx; /* the batch's own, writable filter */
    const tlbf_record *r = record;
    if (op == ONCE_OP_QUERY) {
        uint32_t reads;
        *answer = tlbf_search(t, &r->h, now_ms, &reads, &r->ready);
        return ONCE_OK;
    }
    if (op == ONCE_OP_ADD)
        return add_at(t, &r->h, now_ms, &r->ready);
    return test_and_insert(t, &r->h, now_ms, &r->ready, answer);
}

ONCE_BATCH_LOOP_ENTRY(tlbf_batch, tlbf_record, once_age_batch_distance(tlbf_reach(CTL(f)), op),
                      tlbf_batch_prepare, tlbf_batch_step)

static void free_slices(tlbf *t)
{
    for (uint32_t i = 0; i < t->count; i++)
        once_words_free(t->slices[i].array);
    t->count = 0;
}

static void tlbf_destroy(once_filter *f)
{
    tlbf *t = TL(f);
    free_slices(t);
    once_free_memory(t->slices);
    once_free_memory(t);
}

static void tlbf_clear(once_filter *f)
{
    tlbf *t = TL(f);
    for (uint32_t i = 0; i < t->count; i++) {
        tlbf_slice *s = &t->slices[i];
        memset(s->array, 0, (size_t)(slice_words(s->bits) * 8));
        s->count = 0;
        s->stamped = false;
        s->stamp = 0;
    }
    t->countdown = allowed_insertions(t);
    t->generation_size = 0;
    t->generation_start = 0;
    t->latest = 0; /* a cleared filter is a new one: the next event sets the clock */
    t->started = false;
}

/* Two TLBFs have slices of their own sizes, ages and stamps: there is no slice-wise
 * union or intersection that keeps the window's promises, so combining is refused
 * (ONCE_ERR_UNSUPPORTED, as `combine` is NULL) once the filters are known to match. */
static bool tlbf_same_geometry(const once_filter *x, const once_filter *y)
{
    const tlbf *a = CTL(x), *b = CTL(y);
    return a->k == b->k && a->l == b->l && a->span == b->span;
}

static bool tlbf_clock(const once_filter *f, uint64_t *latest)
{
    *latest = CTL(f)->latest;
    return CTL(f)->started;
}

static double slice_fill(const tlbf_slice *s)
{
    return (double)once_words_popcount(s->array, slice_words(s->bits)) / (double)s->bits;
}

static void tlbf_stats(const once_filter *f, once_stats *st)
{
    const tlbf *t = CTL(f);
    st->bits = 0;
    st->bits_set = 0;
    /* The recurrence runs over at most k + ONCE_MAX_AGE_SLICES slices (the newest);
     * older ones beyond that are ignored by the estimate, not by queries. */
    double fill[2 * ONCE_MAX_AGE_SLICES];
    uint32_t usable = t->count <= t->k + ONCE_MAX_AGE_SLICES ? t->count : t->k + ONCE_MAX_AGE_SLICES;
    for (uint32_t i = 0; i < t->count; i++) {
        const tlbf_slice *s = &t->slices[i];
        st->bits += s->bits;
        st->bits_set += once_words_popcount(s->array, slice_words(s->bits));
        if (i < usable)
            fill[i] = expired(s, t->latest, t->span) ? 0.0 : slice_fill(s);
    }
    st->hashes = t->k;
    st->age_slices = t->l;
    st->slices = t->count;
    st->span_ms = t->span;
    st->window = t->span;
    st->slack = t->k * generation_ms(t); /* see shift_by_time */
    st->generation = t->target;
    st->newest_bits = t->slices[0].bits;
    st->npws = once_apbf_npws(t->k, t->l);
    uint32_t l_now = usable > t->k ? usable - t->k : 0;
    st->fpr_estimate = l_now && l_now <= ONCE_MAX_AGE_SLICES ? once_age_fpr(t->k, l_now, fill) : 0;
    double peak[2 * ONCE_MAX_AGE_SLICES];
    for (uint32_t i = 0; i < t->k + t->l; i++)
        peak[i] = i < t->k ? 1.0 - exp2(-(double)(i + 1) / t->k) : 0.5;
    st->design_fpr = once_age_fpr(t->k, t->l, peak);
    st->accesses_absent = once_age_accesses_absent(t->k, t->l, peak);
}

/*
 * Distinct keys the filter still holds at now_ms (docs/CARDINALITY.md): slice i holds
 * the keys of generations max(0, i-k+1) .. i, a key is found while its k slices are
 * live, and live slices are a prefix of the list (stamps fall with age).  With P live
 * slices the window is generations 0 .. P-k: the keys delivered in the last T ms and
 * those of the slack beyond it that are still reported seen.  Each slice is one hash
 * over its own m_i bits.
 */
static once_status tlbf_slice_cells(const void *ctx, uint32_t logical, uint64_t *set,
                                    once_occupancy *o)
{
    const tlbf_slice *s = &((const tlbf *)ctx)->slices[logical];
    *set = once_words_popcount(s->array, slice_words(s->bits));
    return once_occupancy_for(o, s->bits, 1, s->bits);
}

static once_status tlbf_cardinality(const once_filter *f, uint64_t now_ms, double confidence,
                                    once_cardinality *out)
{
    const tlbf *t = CTL(f);
    uint64_t now = clamp_time(t, now_ms);
    uint32_t live = 0;
    while (live < t->count && !expired(&t->slices[live], now, t->span))
        live++;
    if (live < t->k) { /* no generation has all its slices live: nothing is held */
        once_cardinality none = {0, 0, 0, confidence};
        *out = none;
        return ONCE_OK;
    }
    return once_card_age_window(t->k, live - t->k, tlbf_slice_cells, t, confidence, out);
}

static uint64_t tlbf_memory(const once_filter *f)
{
    const tlbf *t = CTL(f);
    return memory_for(t->max_slices, t->count, t->bytes);
}

static uint64_t tlbf_memory_cap(const once_filter *f)
{
    return CTL(f)->max_bytes;
}

static void tlbf_set_memory_cap(once_filter *f, uint64_t cap)
{
    TL(f)->max_bytes = once_cap_or_default(cap);
}

/* ------------------------------------------------------- serialization */

enum { P_K, P_L, P_SPAN, P_POLICY, P_MAX_BYTES, P_MAX_SLICES, P_COUNT_SLICES, P_COUNTDOWN,
       P_TARGET, P_GENERATION_SIZE, P_GENERATION_START, P_LATEST, P_STARTED, P_SERIAL,
       P_MAX_TIME_JUMP, P_FIELDS };
/* States written before the clock's bound existed end at P_SERIAL; they load with no
 * bound, as they ran. */
#define P_FIELDS_UNBOUNDED P_MAX_TIME_JUMP

static uint64_t tlbf_params_size(const once_filter *f)
{
    (void)f;
    return P_FIELDS * 8;
}

static uint64_t tlbf_payload_size(const once_filter *f)
{
    const tlbf *t = CTL(f);
    return (uint64_t)t->count * SLICE_FIELDS * 8 + t->bytes;
}

static void tlbf_save_params(const once_filter *f, once_writer *w)
{
    const tlbf *t = CTL(f);
    uint64_t v[P_FIELDS] = {t->k,          t->l,          t->span,           t->policy,
                            t->max_bytes,  t->max_slices, t->count,          t->countdown,
                            t->target,     t->generation_size, t->generation_start,
                            t->latest,     t->started,    t->serial,
                            t->base.max_time_jump};
    for (int i = 0; i < P_FIELDS; i++)
        once_writer_u64(w, v[i]);
}

static void tlbf_save_payload(const once_filter *f, once_writer *w)
{
    const tlbf *t = CTL(f);
    for (uint32_t i = 0; i < t->count; i++) {
        const tlbf_slice *s = &t->slices[i];
        once_writer_u64(w, s->bits);
        once_writer_u64(w, s->count);
        once_writer_u64(w, s->stamp);
        once_writer_u64(w, s->stamped);
        once_writer_u64(w, s->hash);
        once_writer_u64(w, s->capacity);
    }
    for (uint32_t i = 0; i < t->count; i++)
        once_writer_words(w, t->slices[i].array, slice_words(t->slices[i].bits));
}

static once_status tlbf_new(tlbf **out, uint32_t k, uint32_t l, uint64_t span, uint32_t policy,
                            uint64_t max_bytes, uint32_t max_slices)
{
    tlbf *t = once_calloc(1, sizeof *t);
    if (t == NULL)
        return ONCE_ERR_NOMEM;
    once_filter_init(&t->base, &once_tlbf_ops);
    t->k = k;
    t->l = l;
    t->span = span;
    t->policy = policy;
    t->max_bytes = max_bytes;
    t->max_slices = max_slices;
    t->slices = once_calloc(max_slices, sizeof *t->slices);
    if (t->slices == NULL) {
        once_free_memory(t);
        return ONCE_ERR_NOMEM;
    }
    *out = t;
    return ONCE_OK;
}

static once_status tlbf_load(once_filter **out, const uint8_t *params, size_t params_len,
                             const uint8_t *payload, size_t payload_len)
{
    uint64_t v[P_FIELDS];
    bool current = once_read_params(params, params_len, v, P_FIELDS);
    if (!current) {
        if (!once_read_params(params, params_len, v, P_FIELDS_UNBOUNDED))
            return ONCE_ERR_CORRUPT;
        v[P_MAX_TIME_JUMP] = 0;
    }
    size_t fields = current ? SLICE_FIELDS : SLICE_FIELDS_UNBOUNDED;
    uint64_t k = v[P_K], l = v[P_L], count = v[P_COUNT_SLICES];
    if (k == 0 || k > ONCE_MAX_AGE_SLICES || l == 0 || l > ONCE_MAX_AGE_SLICES ||
        v[P_SPAN] == 0 || v[P_SPAN] > TLBF_MAX_SPAN_MS || v[P_POLICY] > ONCE_POLICY_REFRESH ||
        v[P_MAX_SLICES] < k + l || v[P_MAX_SLICES] > TLBF_MAX_SLICES || count < k + l ||
        count > v[P_MAX_SLICES] || v[P_MAX_BYTES] == 0 || v[P_STARTED] > 1 ||
        v[P_GENERATION_START] > v[P_LATEST] || v[P_TARGET] == 0 ||
        v[P_LATEST] > ONCE_MAX_TIME_MS || v[P_MAX_TIME_JUMP] > ONCE_MAX_TIME_MS ||
        v[P_SERIAL] >= serial_bound((uint32_t)k))
        return ONCE_ERR_CORRUPT;
    if (payload_len / (fields * 8) < count)
        return ONCE_ERR_CORRUPT;
    tlbf *t = NULL;
    once_status st = tlbf_new(&t, (uint32_t)k, (uint32_t)l, v[P_SPAN], (uint32_t)v[P_POLICY],
                              v[P_MAX_BYTES], (uint32_t)v[P_MAX_SLICES]);
    if (st != ONCE_OK)
        return st;
    t->countdown = v[P_COUNTDOWN];
    t->target = v[P_TARGET];
    t->generation_size = v[P_GENERATION_SIZE];
    t->generation_start = v[P_GENERATION_START];
    t->latest = v[P_LATEST];
    t->started = v[P_STARTED] != 0;
    t->serial = v[P_SERIAL];
    t->base.max_time_jump = v[P_MAX_TIME_JUMP];

    const uint8_t *p = payload;
    size_t left = payload_len - (size_t)count * fields * 8;
    const uint8_t *words = payload + (size_t)count * fields * 8;
    st = ONCE_OK;
    for (uint32_t i = 0; i < count && st == ONCE_OK; i++, p += fields * 8) {
        uint64_t bits = once_le64_read(p), n = once_le64_read(p + 8);
        uint64_t stamp = once_le64_read(p + 16), stamped = once_le64_read(p + 24);
        uint64_t hash = once_le64_read(p + 32);
        uint64_t capacity = current ? once_le64_read(p + 40) : capacity_of(bits);
        if (bits < 2 * k || bits > ONCE_MAX_CELLS || stamped > 1 || hash >= k ||
            capacity == 0 || capacity > capacity_of(bits) ||
            (stamped && stamp > t->latest) || (!stamped && stamp != 0) ||
            slice_words(bits) * 8 > left ||
            memory_for(t->max_slices, i + 1, t->bytes + slice_words(bits) * 8) > t->max_bytes) {
            st = ONCE_ERR_CORRUPT;
            break;
        }
        st = slice_init(&t->slices[i], bits, (uint32_t)hash);
        if (st != ONCE_OK)
            break;
        t->count = i + 1;
        tlbf_slice *s = &t->slices[i];
        s->capacity = capacity;
        s->count = n;
        s->stamp = stamp;
        s->stamped = stamped != 0;
        once_words_from_le(s->array, words, slice_words(bits));
        words += slice_words(bits) * 8;
        left -= (size_t)(slice_words(bits) * 8);
        t->bytes += slice_words(bits) * 8;
        if (!once_words_tail_clear(s->array, slice_words(s->bits), s->bits))
            st = ONCE_ERR_CORRUPT;
    }
    /* Consecutive slices must use distinct hash functions: a file that breaks this was
     * not written by us, and a filter built on it could miss keys. */
    for (uint32_t i = 0; st == ONCE_OK && i + 1 < t->count; i++)
        if (t->slices[i].hash != (t->slices[i + 1].hash + 1) % t->k)
            st = ONCE_ERR_CORRUPT;
    if (st == ONCE_OK && t->count > 0 && t->serial % t->k != (t->slices[0].hash + 1) % t->k)
        st = ONCE_ERR_CORRUPT;
    if (st == ONCE_OK && (left != 0 || t->count != count))
        st = ONCE_ERR_CORRUPT;
    if (st != ONCE_OK) {
        tlbf_destroy(&t->base);
        return st;
    }
    *out = &t->base;
    return ONCE_OK;
}

/* ------------------------------------------------------------ create */

static once_status once_tlbf_create(once_filter **out, const once_config *c)
{
    if (c->span_ms == 0 || c->span_ms > TLBF_MAX_SPAN_MS || c->capacity == 0 ||
        (c->policy != ONCE_POLICY_FIRST && c->policy != ONCE_POLICY_REFRESH))
        return ONCE_ERR_INVALID;
    uint32_t k = c->hashes, l = c->age_slices;
    if ((k == 0) != (l == 0) || k > ONCE_MAX_AGE_SLICES || l > ONCE_MAX_AGE_SLICES)
        return ONCE_ERR_INVALID;
    if (k == 0) {
        once_status st = once_age_plan(c->error, c->level, &k, &l);
        if (st != ONCE_OK)
            return st;
    }
    uint64_t max_bytes = once_cap_or_default(c->max_bytes);
    uint32_t max_slices = 64 * (k + l);
    if (max_slices > TLBF_MAX_SLICES)
        max_slices = TLBF_MAX_SLICES;

    /* Start as an APBF for `capacity` keys a span: generations of capacity / l keys
     * (rounded up without forming capacity + l - 1, which wraps near UINT64_MAX). */
    if (c->capacity > ONCE_MAX_CELLS)
        return ONCE_ERR_TOO_LARGE;
    uint64_t generation = c->capacity / l + (c->capacity % l != 0);
    uint64_t bits = bits_for_capacity(generation * k, k);
    if (memory_for(max_slices, k + l, (uint64_t)(k + l) * (slice_words(bits) * 8)) > max_bytes)
        return ONCE_ERR_TOO_LARGE;

    tlbf *t = NULL;
    once_status st = tlbf_new(&t, k, l, c->span_ms, c->policy, max_bytes, max_slices);
    if (st != ONCE_OK)
        return st;
    /* Slice i (0 newest) is the (k+l-1-i)th created: hash indices run down with age. */
    for (uint32_t i = 0; i < k + l; i++) {
        uint64_t serial = k + l - 1 - i;
        st = slice_init(&t->slices[i], bits, (uint32_t)(serial % k));
        if (st != ONCE_OK) {
            tlbf_destroy(&t->base);
            return st;
        }
        t->count = i + 1;
        t->bytes += slice_words(bits) * 8;
    }
    t->serial = k + l;
    t->target = generation;
    t->countdown = allowed_insertions(t);
    *out = &t->base;
    return ONCE_OK;
}

/* The geometry is given: k, with l in age_slices (the slices size themselves). */
static bool tlbf_explicit_geometry(const once_config *c)
{
    return c->hashes != 0;
}

/* Can the next `keys` insertions, none after `until_ms`, be made with none refused
 * (can_take in core/structure.h)?  Only a shift refuses (plan_shift: the caps), and
 * none comes while the generation has room for them by fill (countdown) and none of
 * them reaches its end by time (insert). */
static bool tlbf_can_take(const once_filter *f, uint64_t keys, uint64_t until_ms)
{
    const tlbf *t = CTL(f);
    return t->started && t->countdown > keys && until_ms >= t->generation_start &&
           until_ms - t->generation_start < generation_ms(t);
}

const once_filter_ops once_tlbf_ops = {
    .type = ONCE_TLBF,
    .can_take = tlbf_can_take,
    .create = once_tlbf_create,
    .explicit_geometry = tlbf_explicit_geometry,
    .destroy = tlbf_destroy,
    .query = tlbf_query,
    .query_reads = tlbf_query_reads,
    .add = tlbf_add,
    .test_and_add = tlbf_test_and_add,
    .prefetch = NULL,
    .batch = tlbf_batch,
    .remove = NULL,
    .clear = tlbf_clear,
    .same_geometry = tlbf_same_geometry,
    .combine = NULL,
    .stats = tlbf_stats,
    .cardinality = tlbf_cardinality,
    .memory = tlbf_memory,
    .memory_cap = tlbf_memory_cap,
    .set_memory_cap = tlbf_set_memory_cap,
    .saved_params_size = tlbf_params_size,
    .saved_payload_size = tlbf_payload_size,
    .save_params = tlbf_save_params,
    .save_payload = tlbf_save_payload,
    .load = tlbf_load,
    .clock = tlbf_clock,
};
