/*
 * tests/cluster/alloc_driver.c - the cluster client under a counting allocator, for
 * tests/cluster/test_alloc.py.
 *
 * Usage: alloc_driver SEED NAME
 * Installs an allocator that counts its calls and the blocks alive, then connects the
 * routing layer alone (cluster/routing.h: no filter of the library in it) and frees
 * it, then opens the filter NAME over the cluster at SEED (host:port), deduplicates a
 * batch of keys with a local filter in front (two-level filtering), and closes it.  It
 * prints one line,
 *   "routing=G opened=A batch=B alive_open=L refused=R alive_closed=C"
 * G the allocations of the routing layer alone, A those opening the client made (the
 * routing layer's nodes, the layout, the remote sites, the sliced filter), B those of
 * the batch, L the blocks alive while it is open, R 1 when once_set_allocator refused
 * to change allocator meanwhile, C the blocks alive once the client and the local
 * filter are freed; or "error REASON" and exits 1.  What hiredis allocates is its own,
 * not counted.
 */
#include "once_cluster.h"
#include "routing.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_long calls, alive;

static void *counted(void *block)
{
    if (block != NULL) {
        atomic_fetch_add(&calls, 1);
        atomic_fetch_add(&alive, 1);
    }
    return block;
}

static void *count_malloc(size_t size)
{
    return counted(malloc(size));
}

static void *count_calloc(size_t count, size_t size)
{
    return counted(calloc(count, size));
}

static void *count_realloc(void *block, size_t size)
{
    void *moved = realloc(block, size);
    if (moved != NULL && block == NULL)
        atomic_fetch_add(&alive, 1);
    if (moved != NULL)
        atomic_fetch_add(&calls, 1);
    return moved;
}

static void count_free(void *block)
{
    if (block != NULL)
        atomic_fetch_sub(&alive, 1);
    free(block);
}

static int fail(const char *what, once_status st)
{
    printf("error %s: %s\n", what, once_strerror(st));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: alloc_driver SEED NAME\n");
        return 2;
    }
    static const once_allocator counting = {count_malloc, count_calloc, count_realloc,
                                            count_free};
    once_status st = once_set_allocator(&counting);
    if (st != ONCE_OK)
        return fail("once_set_allocator", st);
    once_config lc;
    once_config_init(&lc, ONCE_BLOCKED);
    lc.capacity = 10000;
    lc.error = 0.001;
    once_filter *local = NULL;
    if ((st = once_create(&local, &lc)) != ONCE_OK)
        return fail("once_create", st);
    const char *seeds[] = {argv[1]};
    char why[256];
    cluster_options options = {0};
    long before_routing = atomic_load(&calls);
    cluster_client *routing = cluster_client_connect(seeds, 1, &options, why, sizeof why);
    if (routing == NULL) {
        printf("error %s\n", why);
        return 1;
    }
    cluster_client_free(routing);
    long routing_calls = atomic_load(&calls) - before_routing;
    long before_open = atomic_load(&calls);
    once_cluster_config c;
    once_cluster_config_init(&c, seeds, 1, argv[2], 3);
    c.sliced.capacity = 10000;
    c.local = local;
    once_cluster *cluster = NULL;
    if ((st = once_cluster_open(&cluster, &c, why, sizeof why)) != ONCE_OK) {
        printf("error %s\n", why);
        return 1;
    }
    long opened = atomic_load(&calls) - before_open;
    enum { KEYS = 2000 };
    static unsigned long values[KEYS];
    static once_key keys[KEYS];
    static uint8_t seen[KEYS];
    for (size_t i = 0; i < KEYS; i++) {
        values[i] = i % 1500; /* some repeats */
        keys[i] = (once_key){&values[i], sizeof values[i], 0};
    }
    long before_batch = atomic_load(&calls);
    if ((st = once_cluster_test_and_add_batch(cluster, keys, KEYS, seen)) != ONCE_OK)
        return fail("once_cluster_test_and_add_batch", st);
    long batch = atomic_load(&calls) - before_batch;
    long alive_open = atomic_load(&alive);
    int refused = once_set_allocator(NULL) == ONCE_ERR_INVALID;
    once_cluster_close(cluster);
    once_free(local);
    printf("routing=%ld opened=%ld batch=%ld alive_open=%ld refused=%d alive_closed=%ld\n",
           routing_calls, opened, batch, alive_open, refused, (long)atomic_load(&alive));
    return 0;
}
