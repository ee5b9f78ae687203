/*
 * fuzz_delta_corpus.c - seed inputs for fuzz_delta: first deltas of DBFs of the replica's
 * geometry (fuzz_delta.h), empty and with keys in one row and in several, after deletes,
 * from bit-sliced and plain sources, each preceded by the byte that picks the
 * replica's storage.
 *
 *   fuzz_delta_corpus DIR    writes DIR/delta-<keys>-<deletes>-<slices>
 */
#include "once_advanced.h"

#include <stdio.h>
#include <stdlib.h>

#include "fuzz_delta.h"

static int write_seed(const char *dir, uint64_t keys, uint64_t deletes, bool bit_slice)
{
    once_config c = fuzz_delta_config(bit_slice);
    once_filter *f = NULL;
    if (once_create(&f, &c) != ONCE_OK)
        return 1;
    for (uint64_t i = 0; i < keys; i++)
        if (once_add(f, &i, sizeof i, 0) != ONCE_OK)
            return 1;
    for (uint64_t i = 0; i < deletes; i++)
        (void)once_remove(f, &i, sizeof i, 0); /* a refused one (several rows) is kept */
    void *delta = NULL;
    size_t len = 0;
    if (once_dbf_export_delta(f, 0, &delta, &len) != ONCE_OK)
        return 1;
    char path[1024];
    snprintf(path, sizeof path, "%s/delta-%llu-%llu-%d", dir, (unsigned long long)keys,
             (unsigned long long)deletes, bit_slice);
    FILE *out = fopen(path, "wb");
    unsigned char storage = bit_slice;
    int failed = out == NULL || fwrite(&storage, 1, 1, out) != 1 ||
                 fwrite(delta, 1, len, out) != len;
    if (out != NULL && fclose(out) != 0)
        failed = 1;
    once_free_buffer(delta);
    once_free(f);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_delta_corpus DIR\n");
        return 2;
    }
    static const uint64_t keys[][2] = {{0, 0}, {10, 0}, {64, 0}, {300, 0}, {300, 40}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        for (int slices = 0; slices < 2; slices++)
            if (write_seed(argv[1], keys[i][0], keys[i][1], slices))
                return 1;
    return 0;
}
