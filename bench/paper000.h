/*
 * paper000.h - the paper 000 reproductions of `make experiments` (bench/paper000.c):
 * sliced filters, windows, dynamic size and Bloom trees (Koloniari et al., "One is
 * enough: distributed filtering for duplicate elimination", CIKM 2011, sections 3-7).
 */
#ifndef ONCE_BENCH_PAPER000_H
#define ONCE_BENCH_PAPER000_H

/* Write the p000_* tables (Markdown) and gnuplot data files into `dir`. */
void write_paper000(const char *dir);

#endif /* ONCE_BENCH_PAPER000_H */
