/*
 * paper_tables.h - the printed tables of paper 001 that the tests check and
 * `make experiments` recomputes, typed in once.
 */
#ifndef ONCE_PAPER_TABLES_H
#define ONCE_PAPER_TABLES_H

#include <stdint.h>

/* Table 2: aimed rate, k, l, actual fp, expected accesses of a query answering false. */
typedef struct paper_table2_row {
    double aimed;
    uint32_t k, l;
    double fp, accesses_false;
} paper_table2_row;

static const paper_table2_row paper_table2[] = {
    {0.1, 4, 3, 0.100586, 2.16},     {0.1, 5, 7, 0.101603, 3.42},
    {0.1, 6, 14, 0.098623, 5.42},    {0.1, 7, 28, 0.099033, 9.10},
    {0.1, 8, 56, 0.100234, 15.60},   {0.01, 7, 5, 0.011232, 2.02},
    {0.01, 8, 8, 0.010244, 3.09},    {0.01, 9, 14, 0.010212, 3.79},
    {0.01, 10, 25, 0.010076, 5.85},  {0.01, 11, 46, 0.009948, 9.55},
    {0.001, 10, 7, 0.001211, 1.85},  {0.001, 11, 9, 0.000918, 2.15},
    {0.001, 12, 14, 0.000981, 3.21}, {0.001, 13, 23, 0.000928, 4.20},
    {0.001, 14, 40, 0.000988, 6.75}, {1e-4, 14, 11, 0.000099, 1.93},
    {1e-4, 15, 15, 0.000100, 3.08},  {1e-4, 16, 22, 0.000097, 3.36},
    {1e-4, 17, 36, 0.000099, 5.19},  {1e-4, 18, 63, 0.000099, 7.68},
    {1e-5, 17, 13, 0.000011, 1.81},  {1e-5, 18, 16, 0.000009, 2.20},
    {1e-5, 19, 22, 0.000010, 3.16},  {1e-5, 20, 33, 0.000010, 3.68},
    {1e-5, 21, 54, 0.000010, 5.63},
};
#define PAPER_TABLE2_ROWS (sizeof paper_table2 / sizeof paper_table2[0])

/* Table 3: k, l, B, b, APBBF fp, fp of the APBF (k*b, l*b). */
typedef struct paper_table3_row {
    uint32_t k, l, block_bits, block_hashes;
    double apbbf, apbf;
} paper_table3_row;

static const paper_table3_row paper_table3[] = {
    {2, 3, 64, 4, 0.0159865, 0.0180539},  {2, 3, 512, 4, 0.0121825, 0.0180539},
    {2, 5, 64, 4, 0.0257532, 0.0335359},  {2, 5, 512, 4, 0.0197654, 0.0335359},
    {3, 5, 64, 4, 0.0016005, 0.0017134},  {3, 5, 512, 4, 0.0010688, 0.0017134},
    {3, 8, 64, 4, 0.0026767, 0.0031769},  {3, 8, 512, 4, 0.0017993, 0.0031769},
    {2, 3, 64, 8, 0.0005608, 0.0001122},  {2, 3, 512, 8, 0.0000738, 0.0001122},
    {2, 5, 64, 8, 0.0009231, 0.0002342},  {2, 5, 512, 8, 0.0001226, 0.0002342},
    {3, 5, 64, 8, 0.0000104, 0.0000007},  {3, 5, 512, 8, 0.0000005, 0.0000007},
    {3, 8, 64, 8, 0.0000178, 0.0000014},  {3, 8, 512, 8, 0.0000009, 0.0000014},
};
#define PAPER_TABLE3_ROWS (sizeof paper_table3 / sizeof paper_table3[0])


/* Paper 002, Table 3 (standard filters) and Table 4 (intersections of two filters of
 * |S| = |S'| = 2 |S intersect S'|): length in Kbits, hashes, items (of the set, or of
 * the intersection), density, average / max / standard deviation of the relative
 * error over 1000 repetitions, and the printed 70% and 90% bounds. */
typedef struct paper_card_row {
    double kbits;
    uint32_t hashes;
    uint64_t items;
    double density, avg, max, sd;
    double low70, high70, low90, high90;
} paper_card_row;

static const paper_card_row paper_card_table3[] = {
    {8, 2, 3000, 0.519, 7.2e-3, 0.032, 5.77e-3, 2837, 3161, 2793, 3204},
    {8, 2, 9000, 0.889, 9.44e-3, 0.040, 7.23e-3, 8103, 9887, 7879, 10111},
    {256, 2, 100000, 0.534, 1.34e-3, 5.37e-3, 1.02e-3, 99044, 100955, 98764, 101235},
    {256, 2, 200000, 0.783, 1.44e-3, 6.38e-3, 1.06e-3, 197523, 202475, 196808, 203190},
    {512, 2, 200000, 0.534, 8.76e-4, 3.35e-3, 6.66e-4, 198647, 201350, 198250, 201747},
    {8192, 2, 10000000, 0.908, 1.13e-3, 2.2e-3, 4.04e-4, 9964361, 10035632, 9953888, 10046105},
    {2048, 1, 500000, 0.212, 3.65e-4, 1.64e-3, 2.8e-4, 497123, 502875, 496386, 503611},
    {2048, 10, 500000, 0.908, 6.46e-4, 2.96e-3, 4.91e-4, 496439, 503559, 495404, 504594},
};
#define PAPER_CARD_TABLE3_ROWS (sizeof paper_card_table3 / sizeof paper_card_table3[0])

/* The 512 Kbit row prints a standard deviation of 1.41E-4 beside an average of 1.86E-3;
 * every other row has sd/avg near 0.75, so it is read as 1.41E-3. */
static const paper_card_row paper_card_table4[] = {
    {8, 2, 2000, 0.478, 0.016, 0.060, 0.012, 1736, 2262, 1670, 2329},
    {8, 2, 5000, 0.852, 0.034, 0.177, 0.026, 2606, 7379, 2162, 7823},
    {256, 2, 50000, 0.386, 2.6e-3, 0.012, 1.95e-3, 49022, 50974, 48774, 51223},
    {256, 2, 100000, 0.667, 3.64e-3, 0.014, 2.67e-3, 96024, 103967, 95020, 104970},
    {512, 2, 100000, 0.386, 1.86e-3, 8.39e-3, 1.41e-3, 98620, 101376, 98267, 101730},
    {8192, 2, 5000000, 0.844, 1.02e-3, 4.05e-3, 7.6e-4, 4908341, 5091644, 4885133, 5114852},
    {2048, 1, 250000, 0.124, 7.07e-4, 2.94e-3, 5.39e-4, 248576, 251423, 248211, 251788},
    {2048, 10, 250000, 0.844, 1.91e-3, 8.57e-3, 1.5e-3, 240923, 259072, 238656, 261338},
};
#define PAPER_CARD_TABLE4_ROWS (sizeof paper_card_table4 / sizeof paper_card_table4[0])

#endif
