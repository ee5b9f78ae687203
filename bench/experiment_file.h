/*
 * experiment_file.h - where `make experiments` writes: one file of its output
 * directory, opened for writing, or the run stops (exit 2) saying which.
 */
#ifndef ONCE_BENCH_EXPERIMENT_FILE_H
#define ONCE_BENCH_EXPERIMENT_FILE_H

#include <stdio.h>
#include <stdlib.h>

static inline FILE *open_out(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    return f;
}

#endif /* ONCE_BENCH_EXPERIMENT_FILE_H */
