/*
 * target.c - the choice of target (target.h) and what its kinds share.
 *
 * The options decide the kind once, here: --cluster, else --slicing, else the
 * library's filter.  Nothing else in programs/ asks which kind a target is.
 */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>

int target_open(target *t, cli_options *o)
{
    t->options = o;
    t->impl = NULL;
    t->threads = 1;
    t->seed = 0;
    t->timed = false;
    if (o->cluster != NULL)
        return target_cluster_open(t, o);
    if (o->sliced)
        return target_sliced_open(t, o);
    return target_filter_open(t, o);
}

void *target_start(target *t, const target_ops *ops, size_t impl_size)
{
    t->ops = ops;
    t->impl = calloc(1, impl_size);
    if (t->impl == NULL)
        fprintf(stderr, "once: out of memory\n");
    return t->impl;
}

void target_close(target *t)
{
    if (t->impl != NULL)
        t->ops->close(t);
    free(t->impl);
    t->impl = NULL;
    t->ops = NULL;
}

void target_warn_capacity(uint64_t capacity)
{
    fprintf(stderr,
            "once: warning: more than %llu distinct keys, the filter's capacity; "
            "false positives will rise above the target (use a larger --capacity)\n",
            (unsigned long long)capacity);
}
