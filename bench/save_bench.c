/*
 * once-save-bench: how a filter's save time grows with its size, whole (once_save) and
 * as a dump of chunks (once_save_chunk, what SCANDUMP, the RDB save and DEBUG RELOAD
 * do), for every structure.  A save should be linear in the bytes saved: each chunk
 * costs its own bytes, not every byte before it.
 *
 *   once-save-bench [MIB...]     (default 8 16 32 64)
 *
 * Each filter is built for about MIB mebibytes and filled to its design load (windows
 * with keys inside their window), then saved whole and in 16 MiB chunks (RedisBloom's
 * SCANDUMP limit), each timed as the best of three.  Prints ns per saved byte, so a
 * linear save keeps its numbers as the size doubles.
 */
#include "once_advanced.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK (16u << 20)

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int discard(void *context, const void *data, size_t len)
{
    (void)data;
    *(uint64_t *)context += len;
    return 0;
}

typedef struct shape {
    const char *name;
    once_type type;
    bool dynamic;  /* timer */
    double bits_per_key;
} shape;

static const shape shapes[] = {
    {"blocked", ONCE_BLOCKED, false, 10.0},  {"standard", ONCE_STANDARD, false, 10.0},
    {"scalable", ONCE_SCALABLE, false, 10.0}, {"dbf", ONCE_DBF, false, 40.0},
    {"apbf", ONCE_APBF, false, 30.0},         {"tlbf", ONCE_TLBF, false, 30.0},
    {"timer", ONCE_TIMER, false, 160.0},     {"timer-dynamic", ONCE_TIMER, true, 160.0},
};

static once_filter *build(const shape *s, uint64_t bytes)
{
    uint64_t keys = (uint64_t)((double)bytes * 8.0 / s->bits_per_key);
    once_config c;
    once_config_init(&c, s->type);
    c.capacity = keys;
    c.error = 0.01;
    c.seed = 1;
    c.seed_is_set = true;
    c.window = keys;
    c.span_ms = 3600000;
    c.dynamic = s->dynamic;
    c.max_bytes = bytes * 4;
    once_filter *f = NULL;
    if (once_create(&f, &c) != ONCE_OK)
        return NULL;
    uint64_t key[2] = {0, 0};
    for (uint64_t i = 0; i < keys; i++) {
        key[0] = i;
        bool seen;
        /* A time window's keys arrive over half its span, all alive at the end. */
        if (once_test_and_add(f, key, sizeof key, 1000 + i * 1800000 / keys, &seen) != ONCE_OK)
            break;
    }
    return f;
}

/* Best of three: a whole save, then a chunked one. */
static void time_saves(const once_filter *f, double *whole, double *chunked)
{
    static uint8_t *buffer;
    if (buffer == NULL && (buffer = malloc(CHUNK)) == NULL)
        exit(1);
    *whole = *chunked = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        uint64_t written = 0;
        double t0 = seconds();
        if (once_save(f, discard, &written) != ONCE_OK)
            exit(1);
        double t1 = seconds();
        uint64_t cursor = 0;
        size_t len = 0;
        do {
            if (once_save_chunk(f, &cursor, CHUNK, buffer, &len) != ONCE_OK)
                exit(1);
        } while (cursor != 0);
        double t2 = seconds();
        *whole = t1 - t0 < *whole ? t1 - t0 : *whole;
        *chunked = t2 - t1 < *chunked ? t2 - t1 : *chunked;
    }
}

int main(int argc, char **argv)
{
    uint64_t sizes[16] = {8, 16, 32, 64};
    int count = 4;
    if (argc > 1) {
        count = 0;
        for (int i = 1; i < argc && count < 16; i++)
            sizes[count++] = strtoull(argv[i], NULL, 10);
    }
    printf("| structure | MiB | saved MiB | whole ns/byte | chunked ns/byte | chunks |\n");
    printf("|---|---:|---:|---:|---:|---:|\n");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int i = 0; i < count; i++) {
            once_filter *f = build(&shapes[s], sizes[i] << 20);
            if (f == NULL) {
                printf("| %s | %llu | - | - | - | - |\n", shapes[s].name,
                       (unsigned long long)sizes[i]);
                continue;
            }
            uint64_t saved = once_saved_size(f);
            double whole, chunked;
            time_saves(f, &whole, &chunked);
            printf("| %s | %llu | %.1f | %.3f | %.3f | %llu |\n", shapes[s].name,
                   (unsigned long long)sizes[i], (double)saved / (1 << 20),
                   whole * 1e9 / (double)saved, chunked * 1e9 / (double)saved,
                   (unsigned long long)((saved + CHUNK - 1) / CHUNK));
            fflush(stdout);
            once_free(f);
        }
    return 0;
}
