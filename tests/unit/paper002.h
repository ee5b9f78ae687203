/*
 * paper002.h - what paper 002's block-partitioned sections print and compare against,
 * typed in once for the tests and `make experiments`:
 *   - Table 2 (section 4.1): D-BBF and standard filter rates and lengths, both built
 *     for 100000 keys at 0.05 and at 0.005, against the set's cardinality;
 *   - Table 6 (section 5.4.3): cardinality estimates of BPBFs;
 *   - the baseline of Fig. 1 (section 3.1): a standard filter of m bits and k hash
 *     functions reduced to m' bits by folding, map(x) = x mod m'.  It is not a library
 *     structure (the paper shows why it fails), so it lives here.
 */
#ifndef ONCE_PAPER002_H
#define ONCE_PAPER002_H

#include "testing.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A printed rate of "~0" (below the table's 0.001 resolution). */
#define PAPER002_ABOUT_ZERO (-1.0)

/* One row of Table 2: lengths in Kbits (1024 bits), rates as printed. */
typedef struct paper002_table2_row {
    uint64_t cardinality;
    double dbbf_kbits_05, dbbf_fpr_05, bf_fpr_05;    /* optimized for 0.05; BF 610 Kbits */
    double dbbf_kbits_005, dbbf_fpr_005, bf_fpr_005; /* optimized for 0.005; BF 1078 Kbits */
} paper002_table2_row;

static const paper002_table2_row paper002_table2[] = {
    {25000, 305, 0.022, PAPER002_ABOUT_ZERO, 404, 0.005, PAPER002_ABOUT_ZERO},
    {50000, 458, 0.021, 0.006, 674, 0.003, PAPER002_ABOUT_ZERO},
    {100000, 1220, 0.050, 0.050, 2155, 0.005, 0.005},
    {150000, 1220, 0.055, 0.145, 2155, 0.005, 0.037},
    {200000, 1830, 0.097, 0.272, 3232, 0.010, 0.117},
    {300000, 2440, 0.142, 0.531, 4310, 0.015, 0.380},
    {400000, 3050, 0.185, 0.726, 5388, 0.020, 0.635},
    {500000, 3660, 0.226, 0.847, 6466, 0.025, 0.805},
};
#define PAPER002_TABLE2_ROWS (sizeof paper002_table2 / sizeof paper002_table2[0])
/* Table 2's setup: expected cardinality and the standard filters' geometry. */
#define PAPER002_TABLE2_CAPACITY 100000u
#define PAPER002_BF_BITS_05 (610u * 1024u)
#define PAPER002_BF_HASHES_05 4u
#define PAPER002_BF_BITS_005 (1078u * 1024u)
#define PAPER002_BF_HASHES_005 8u

/* Fig. 1's setup (section 3.3): 100000 keys; a standard filter of 8192 Kbits with 60
 * hash functions; a BPBF of 64 blocks of 128 Kbits with one hash function each. */
#define PAPER002_FIG1_KEYS 100000u
#define PAPER002_FIG1_BITS (8192u * 1024u)
#define PAPER002_FIG1_HASHES 60u
#define PAPER002_FIG1_BLOCKS 64u
#define PAPER002_FIG1_BLOCK_BITS (128u * 1024u)

/* Table 3 (section 5.4.1, standard filters) and Table 4 (section 5.4.2, intersections
 * of two filters of |S| = |S'| = 2 |S intersect S'|): length in Kbits, hashes, items (of
 * the set, or of the intersection), density, average / max / standard deviation of the
 * relative error over 1000 repetitions, and the printed 70% and 90% bounds. */
typedef struct paper002_card_row {
    double kbits;
    uint32_t hashes;
    uint64_t items;
    double density, avg, max, sd;
    double low70, high70, low90, high90;
} paper002_card_row;

static const paper002_card_row paper002_table3[] = {
    {8, 2, 3000, 0.519, 7.2e-3, 0.032, 5.77e-3, 2837, 3161, 2793, 3204},
    {8, 2, 9000, 0.889, 9.44e-3, 0.040, 7.23e-3, 8103, 9887, 7879, 10111},
    {256, 2, 100000, 0.534, 1.34e-3, 5.37e-3, 1.02e-3, 99044, 100955, 98764, 101235},
    {256, 2, 200000, 0.783, 1.44e-3, 6.38e-3, 1.06e-3, 197523, 202475, 196808, 203190},
    {512, 2, 200000, 0.534, 8.76e-4, 3.35e-3, 6.66e-4, 198647, 201350, 198250, 201747},
    {8192, 2, 10000000, 0.908, 1.13e-3, 2.2e-3, 4.04e-4, 9964361, 10035632, 9953888, 10046105},
    {2048, 1, 500000, 0.212, 3.65e-4, 1.64e-3, 2.8e-4, 497123, 502875, 496386, 503611},
    {2048, 10, 500000, 0.908, 6.46e-4, 2.96e-3, 4.91e-4, 496439, 503559, 495404, 504594},
};
#define PAPER002_TABLE3_ROWS (sizeof paper002_table3 / sizeof paper002_table3[0])

/* The 512 Kbit row prints a standard deviation of 1.41E-4 beside an average of 1.86E-3;
 * every other row has sd/avg near 0.75, so it is read as 1.41E-3. */
static const paper002_card_row paper002_table4[] = {
    {8, 2, 2000, 0.478, 0.016, 0.060, 0.012, 1736, 2262, 1670, 2329},
    {8, 2, 5000, 0.852, 0.034, 0.177, 0.026, 2606, 7379, 2162, 7823},
    {256, 2, 50000, 0.386, 2.6e-3, 0.012, 1.95e-3, 49022, 50974, 48774, 51223},
    {256, 2, 100000, 0.667, 3.64e-3, 0.014, 2.67e-3, 96024, 103967, 95020, 104970},
    {512, 2, 100000, 0.386, 1.86e-3, 8.39e-3, 1.41e-3, 98620, 101376, 98267, 101730},
    {8192, 2, 5000000, 0.844, 1.02e-3, 4.05e-3, 7.6e-4, 4908341, 5091644, 4885133, 5114852},
    {2048, 1, 250000, 0.124, 7.07e-4, 2.94e-3, 5.39e-4, 248576, 251423, 248211, 251788},
    {2048, 10, 250000, 0.844, 1.91e-3, 8.57e-3, 1.5e-3, 240923, 259072, 238656, 261338},
};
#define PAPER002_TABLE4_ROWS (sizeof paper002_table4 / sizeof paper002_table4[0])

/* Table 6 (section 5.4.3): cardinality estimation for BPBFs of one hash function a
 * block - block length in Kbits, blocks, keys, density, average / max / standard
 * deviation of the relative error over 1000 repetitions, the printed 70% and 90%
 * bounds. */
typedef struct paper002_table6_row {
    double block_kbits;
    uint32_t blocks;
    uint64_t items;
    double density, avg, max, sd;
    double low70, high70, low90, high90;
} paper002_table6_row;

static const paper002_table6_row paper002_table6[] = {
    {4, 2, 3000, 0.519, 7.25e-3, 0.030, 5.47e-3, 2837, 3161, 2794, 3205},
    {4, 2, 9000, 0.889, 9.19e-3, 0.042, 7.02e-3, 8105, 9893, 7881, 10117},
    {128, 2, 100000, 0.534, 1.21e-3, 6.29e-3, 9.24e-4, 99043, 100955, 98764, 101234},
    {128, 2, 200000, 0.783, 1.42e-3, 7.37e-3, 1.1e-3, 197523, 202474, 196808, 203189},
    {256, 2, 200000, 0.534, 8.89e-4, 3.9e-3, 6.92e-4, 198648, 201351, 198251, 201748},
    {4096, 2, 10000000, 0.908, 1.19e-3, 2.5e-3, 3.93e-4, 9964361, 10035631, 9953887, 10046105},
    {2048, 1, 500000, 0.212, 3.68e-4, 1.67e-3, 2.8e-4, 497981, 502018, 497385, 502614},
    {204.8, 10, 500000, 0.908, 6.4e-4, 2.91e-3, 4.64e-4, 496438, 503559, 495404, 504594},
};
#define PAPER002_TABLE6_ROWS (sizeof paper002_table6 / sizeof paper002_table6[0])

/* ------------------------------------------------- folded standard filter */

typedef struct folded_bloom {
    uint64_t bits; /* current length m' (a power-of-two divisor of the original) */
    uint32_t hashes;
    uint64_t *words;
} folded_bloom;

/* Position i of key (a, b) in the original m bits (double hashing of a 128-bit key
 * digest); folding then maps it to position mod m'. */
static inline uint64_t folded_position(uint64_t a, uint64_t b, uint32_t i, uint64_t bits)
{
    uint64_t h1 = testing_mix(a ^ testing_mix(b)), h2 = testing_mix(h1 + b) | 1;
    return (h1 + i * h2) % bits;
}

static inline bool folded_make(folded_bloom *f, uint64_t bits, uint32_t hashes)
{
    f->bits = bits;
    f->hashes = hashes;
    f->words = (uint64_t *)calloc(bits / 64, sizeof(uint64_t));
    return f->words != NULL;
}

static inline void folded_add(folded_bloom *f, uint64_t a, uint64_t b)
{
    for (uint32_t i = 0; i < f->hashes; i++) {
        uint64_t pos = folded_position(a, b, i, f->bits);
        f->words[pos / 64] |= UINT64_C(1) << (pos % 64);
    }
}

static inline bool folded_query(const folded_bloom *f, uint64_t original_bits, uint64_t a,
                                uint64_t b)
{
    for (uint32_t i = 0; i < f->hashes; i++) {
        uint64_t pos = folded_position(a, b, i, original_bits) % f->bits;
        if (!(f->words[pos / 64] >> (pos % 64) & 1))
            return false;
    }
    return true;
}

/* Fold to `bits` (a multiple of 64 dividing the current length): bit x -> x mod m'. */
static inline void folded_reduce(folded_bloom *f, uint64_t bits)
{
    uint64_t keep = bits / 64;
    for (uint64_t w = keep; w < f->bits / 64; w++)
        f->words[w % keep] |= f->words[w];
    f->bits = bits;
}

/* Section 3.1: a standard filter's rate, (1 - (1 - 1/m)^(kn))^k, at m' = m r. */
static inline double folded_fpr(uint64_t bits, uint32_t hashes, uint64_t keys)
{
    return pow(1.0 - exp((double)hashes * (double)keys * log1p(-1.0 / (double)bits)),
               (double)hashes);
}

/* The optimal standard filter of `bits` for `keys`: the best integer k rebuilt from
 * scratch (Fig. 1's "optimal" baseline). */
static inline double optimal_fpr(uint64_t bits, uint64_t keys)
{
    double best = 1.0;
    for (uint32_t k = 1; k <= 64; k++) {
        double p = folded_fpr(bits, k, keys);
        if (p < best)
            best = p;
    }
    return best;
}

#endif
