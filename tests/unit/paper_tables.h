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

#endif
