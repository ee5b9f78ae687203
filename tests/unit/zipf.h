/*
 * zipf.h - Zipf(s) over ranks [0, n) by inversion of the cumulative weights, for the
 * tests (testing.h draws from it) and the paper reproductions (bench/paper000.c).
 */
#ifndef ONCE_TESTS_ZIPF_H
#define ONCE_TESTS_ZIPF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct zipf_table {
    double *cdf; /* malloc'd, n of them; free() when done */
    uint64_t n;
} zipf_table;

static inline zipf_table zipf_table_make(uint64_t n, double s)
{
    zipf_table z = {malloc(n * sizeof(double)), n};
    if (z.cdf == NULL)
        return z;
    double total = 0;
    for (uint64_t i = 0; i < n; i++)
        total += pow((double)(i + 1), -s);
    double run = 0;
    for (uint64_t i = 0; i < n; i++) {
        run += pow((double)(i + 1), -s) / total;
        z.cdf[i] = run;
    }
    return z;
}

/* The rank a uniform u in [0, 1) falls on. */
static inline uint64_t zipf_rank(const zipf_table *z, double u)
{
    uint64_t lo = 0, hi = z->n - 1;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (z->cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif /* ONCE_TESTS_ZIPF_H */
