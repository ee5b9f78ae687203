/*
 * growth_sim.c - a simulation of a fingerprint table that grows one block at a time
 * (docs/GROWTH.md, "Next"): what memory and false-positive rate it keeps from 10^2 to
 * 10^7 keys, against the same table sized for the final count.  Not a filter of the
 * library: entries are kept unpacked, and memory is counted as the slots' bits.
 *
 * The table (linear hashing over blocks of SLOTS entries)
 *   B = 2^L + s blocks; a hash h addresses block h mod 2^L, or h mod 2^(L+1) where that
 *   is below s (the blocks already split).  A key has two hashes, h1 and h2 = h1 XOR G,
 *   G a mix of its fingerprint below 2^40 (partial-key cuckoo hashing: an entry's other
 *   block follows from what it holds).  An entry holds
 *     - f stable fingerprint bits (the top of h1, above every address bit);
 *     - which hash placed it (1 bit);
 *     - a tail: up to T bits of that hash just above its block's address bits, and
 *       a stop bit before them (T + 1 bits hold a tail of any length up to T).
 *   A query matches an entry whose fingerprint and tail equal its own bits, so a
 *   young entry compares f + T bits and one that lived through T splits f.
 *   Inserting tries the less full of the two blocks, then cuckoo moves (an entry's
 *   other block needs as many low bits of its hash as that block's address: its
 *   block's and its tail's; an entry without enough is not moved).  Past a load of
 *   MAX_LOAD the next block s splits into s and s + 2^L by the lowest tail bit of each
 *   entry, which the entry loses; an entry with no tail left goes into both halves.
 *
 * With GROUP, a key's second hash differs from its first in its low GROUP bits alone
 * (G is then 1 + a mix of its fingerprint modulo 2^GROUP - 1), the table starts at
 * 2^GROUP blocks at least, and blocks split in an order that takes their low GROUP bits
 * first (rank_of), so that every class of the high bits splits alike: a key's two
 * blocks share their high bits, and a class split last would hold twice its share
 * with nowhere else to go.  A tail is then the same bits of either hash above every
 * block's level, and an entry needs no choice bit.
 *
 * Usage: growth_sim F T [KEYS [FIRST [GROUP]]]   (default 10^7 keys, first guess 100)
 * Prints, at each doubling of the keys: bits a key (slots x slot bits / keys), the
 * share of entries that are copies, the false-positive rate measured on 10^6 fresh
 * keys, and the keys no block took (cuckoo moves failed: a real table would stash
 * them or grow).  A table sized for the count is T = 0 and FIRST = KEYS.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SLOTS
#define SLOTS 4 /* entries a block (-DSLOTS=...) */
#endif
#ifndef MAX_LOAD
#define MAX_LOAD 0.90 /* the load past which a block splits (-DMAX_LOAD=...) */
#endif
#define MAX_KICKS 500
#define LMAX 40
#define QUERIES 1000000

typedef struct entry {
    uint64_t tail;   /* bits of its hash from its block's level up */
    uint32_t fp;     /* the top f bits of h1 */
    uint8_t tail_len;
    uint8_t choice;  /* 0: h1, 1: h2 */
    uint8_t used;
} entry;

typedef struct table {
    entry *slots;    /* SLOTS a block */
    uint64_t room;   /* blocks allocated */
    uint32_t level;  /* L */
    uint64_t split;  /* s */
    uint64_t entries, copies, stashed;
    uint32_t f, t;
} table;

static uint64_t mix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* The low bits a key's two hashes may differ in (GROUP; LMAX: any address bit). */
static uint32_t group_bits = LMAX;

static uint64_t blocks(const table *t) { return (UINT64_C(1) << t->level) + t->split; }

/* Block b's place in the order of splits at level L: its low group bits first. */
static uint64_t rank_of(uint64_t b, uint32_t level)
{
    if (level <= group_bits)
        return b;
    uint32_t high = level - group_bits;
    return ((b & ((UINT64_C(1) << group_bits) - 1)) << high) | (b >> group_bits);
}

/* The block of rank r at level L. */
static uint64_t block_of_rank(uint64_t r, uint32_t level)
{
    if (level <= group_bits)
        return r;
    uint32_t high = level - group_bits;
    return ((r & ((UINT64_C(1) << high) - 1)) << group_bits) | (r >> high);
}

static uint64_t address(const table *t, uint64_t h)
{
    uint64_t a = h & ((UINT64_C(1) << t->level) - 1);
    return rank_of(a, t->level) < t->split ? h & ((UINT64_C(1) << (t->level + 1)) - 1) : a;
}

static uint32_t level_of(const table *t, uint64_t b)
{
    return b >= (UINT64_C(1) << t->level) || rank_of(b, t->level) < t->split ? t->level + 1
                                                                             : t->level;
}

/* G, what a key's second hash differs from its first by: any bits below 2^LMAX, or
 * with GROUP never 0 (its two blocks would always be one, where with LMAX some higher
 * bit differs). */
static uint64_t other_mask(uint32_t fp)
{
    uint64_t below = (UINT64_C(1) << group_bits) - 1;
    return group_bits == LMAX ? mix(fp) & below : 1 + mix(fp) % below;
}

static entry *block(table *t, uint64_t b) { return &t->slots[b * SLOTS]; }

static void ensure(table *t, uint64_t b)
{
    if (b < t->room)
        return;
    uint64_t room = t->room ? t->room : 16;
    while (room <= b)
        room *= 2;
    t->slots = realloc(t->slots, room * SLOTS * sizeof *t->slots);
    if (t->slots == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memset(t->slots + t->room * SLOTS, 0, (room - t->room) * SLOTS * sizeof *t->slots);
    t->room = room;
}

static int block_count(table *t, uint64_t b)
{
    int n = 0;
    for (int i = 0; i < SLOTS; i++)
        n += block(t, b)[i].used;
    return n;
}

static bool put(table *t, uint64_t b, entry e)
{
    for (int i = 0; i < SLOTS; i++)
        if (!block(t, b)[i].used) {
            block(t, b)[i] = e;
            return true;
        }
    return false;
}

/* An entry of block b at its address under hash `hash` (its own): its tail from there. */
static entry placed(const table *t, uint64_t b, uint64_t hash, uint32_t fp, int choice,
                    uint32_t known)
{
    entry e = {0};
    uint32_t lv = level_of(t, b);
    e.used = 1;
    e.fp = fp;
    e.choice = (uint8_t)choice;
    uint32_t len = known > lv ? known - lv : 0;
    if (len > t->t)
        len = t->t;
    e.tail_len = (uint8_t)len;
    e.tail = len ? (hash >> lv) & ((UINT64_C(1) << len) - 1) : 0;
    return e;
}

/* The other block of entry e in block b, and its hash's known low bits (false: not
 * enough bits known to address it). */
static bool other_block(const table *t, uint64_t b, const entry *e, uint64_t *to,
                        uint64_t *hash, uint32_t *known)
{
    uint32_t lv = level_of(t, b);
    uint32_t k = lv + e->tail_len;
    uint64_t own = b | (e->tail << lv);
    uint64_t other = (own ^ other_mask(e->fp)) & ((UINT64_C(1) << k) - 1);
    uint32_t need = t->level;
    if (k < need)
        return false;
    uint64_t a = other & ((UINT64_C(1) << t->level) - 1);
    if (rank_of(a, t->level) < t->split) {
        if (k < t->level + 1)
            return false;
        a = other & ((UINT64_C(1) << (t->level + 1)) - 1);
    }
    *to = a;
    *hash = other;
    *known = k;
    return true;
}

static uint64_t rng_state = 12345;

static void insert(table *t, uint64_t key)
{
    uint64_t h1 = mix(key), fp = h1 >> (64 - t->f);
    uint64_t h2 = h1 ^ other_mask((uint32_t)fp);
    uint64_t b1 = address(t, h1), b2 = address(t, h2);
    int n1 = block_count(t, b1), n2 = block_count(t, b2);
    bool first = n1 <= n2;
    uint64_t b = first ? b1 : b2;
    entry e = placed(t, b, first ? h1 : h2, (uint32_t)fp, first ? 0 : 1, 64);
    if (!put(t, b, e)) {
        b = first ? b2 : b1;
        e = placed(t, b, first ? h2 : h1, (uint32_t)fp, first ? 1 : 0, 64);
        if (!put(t, b, e)) { /* cuckoo moves from b */
            int kicks = 0;
            while (kicks++ < MAX_KICKS) {
                rng_state = mix(rng_state);
                int slot = (int)(rng_state % SLOTS);
                entry victim = block(t, b)[slot];
                uint64_t to, hash;
                uint32_t known;
                if (!other_block(t, b, &victim, &to, &hash, &known))
                    continue;
                block(t, b)[slot] = e;
                entry moved = placed(t, to, hash, victim.fp, !victim.choice, known);
                if (put(t, to, moved)) {
                    e.used = 0;
                    break;
                }
                e = moved;
                b = to;
            }
            if (e.used) {
                t->stashed++;
                return;
            }
        }
    }
    t->entries++;
}

static void split_one(table *t)
{
    uint64_t s = block_of_rank(t->split, t->level), high = s + (UINT64_C(1) << t->level);
    ensure(t, high);
    entry old[SLOTS];
    memcpy(old, block(t, s), sizeof old);
    memset(block(t, s), 0, sizeof old);
    for (int i = 0; i < SLOTS; i++) {
        entry e = old[i];
        if (!e.used)
            continue;
        if (e.tail_len == 0) { /* no bit left to choose a half: a copy in each */
            put(t, s, e);
            put(t, high, e);
            t->entries++;
            t->copies++;
            continue;
        }
        uint64_t bit = e.tail & 1;
        e.tail >>= 1;
        e.tail_len--;
        put(t, bit ? high : s, e);
    }
    if (++t->split == (UINT64_C(1) << t->level)) {
        t->level++;
        t->split = 0;
    }
}

static bool matches(const table *t, uint64_t b, const entry *e, uint64_t h1, uint64_t fp)
{
    if (!e->used || e->fp != fp)
        return false;
    uint64_t h = e->choice ? h1 ^ other_mask((uint32_t)fp) : h1;
    uint32_t lv = level_of(t, b);
    uint64_t mask = (UINT64_C(1) << e->tail_len) - 1;
    return ((h >> lv) & mask) == e->tail;
}

static bool query(table *t, uint64_t key)
{
    uint64_t h1 = mix(key), fp = h1 >> (64 - t->f);
    uint64_t h2 = h1 ^ other_mask((uint32_t)fp);
    uint64_t b1 = address(t, h1), b2 = address(t, h2);
    for (int i = 0; i < SLOTS; i++)
        if (matches(t, b1, &block(t, b1)[i], h1, fp) || matches(t, b2, &block(t, b2)[i], h1, fp))
            return true;
    return false;
}

static void table_init(table *t, uint32_t f, uint32_t tail, uint64_t keys)
{
    memset(t, 0, sizeof *t);
    t->f = f;
    t->t = tail;
    uint64_t want = (uint64_t)ceil((double)keys / (MAX_LOAD * SLOTS));
    while ((UINT64_C(1) << (t->level + 1)) <= want)
        t->level++;
    t->split = want - (UINT64_C(1) << t->level);
    ensure(t, blocks(t));
}

/* A slot: the fingerprint, and with a tail its bits ended by a stop bit (a tail of
 * fewer than T bits is 1 then zeros on its left, as quotient filters encode ages) and,
 * without GROUP, the choice bit. */
static double slot_bits(const table *t)
{
    return t->f + (t->t ? t->t + 1 + (group_bits == LMAX ? 1 : 0) : 0);
}

static void grow_to_load(table *t)
{
    while ((double)t->entries > MAX_LOAD * (double)(blocks(t) * SLOTS))
        split_one(t);
}

static double fpr(table *t, uint64_t salt)
{
    uint64_t hits = 0;
    for (uint64_t q = 0; q < QUERIES; q++)
        hits += query(t, mix(salt + q) | (UINT64_C(1) << 63));
    return (double)hits / QUERIES;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: growth_sim F T [KEYS [FIRST [GROUP]]]\n");
        return 2;
    }
    uint32_t f = (uint32_t)atoi(argv[1]), tail = (uint32_t)atoi(argv[2]);
    uint64_t keys = argc > 3 ? (uint64_t)atof(argv[3]) : 10000000;
    uint64_t first = argc > 4 ? (uint64_t)atof(argv[4]) : 100;
    if (argc > 5)
        group_bits = (uint32_t)atoi(argv[5]);
    if (group_bits < 1 || group_bits > LMAX) {
        fprintf(stderr, "growth_sim: GROUP is 1 to %d\n", LMAX);
        return 2;
    }
    table grown;
    table_init(&grown, f, tail, first);
    if (group_bits < LMAX && grown.level < group_bits) { /* the first: 2^GROUP blocks */
        grown.level = group_bits;
        grown.split = 0;
        ensure(&grown, blocks(&grown));
    }
    printf("| keys | grown bits a key | copies | grown rate | stashed |\n"
           "|---:|---:|---:|---:|---:|\n");
    uint64_t next = first;
    for (uint64_t k = 0; k < keys; k++) {
        insert(&grown, k);
        grow_to_load(&grown);
        if (k + 1 == next || k + 1 == keys) {
            uint64_t n = k + 1;
            double gb = (double)(blocks(&grown) * SLOTS) * slot_bits(&grown) / (double)n;
            printf("| %llu | %.1f | %.4f | %.2e | %llu |\n", (unsigned long long)n, gb,
                   (double)grown.copies / (double)grown.entries, fpr(&grown, UINT64_C(1) << 40),
                   (unsigned long long)grown.stashed);
            next *= 2;
        }
    }
    free(grown.slots);
    return 0;
}
