/*
 * fuzz_delta.h - the DBF geometry and seed that fuzz_delta's replicas and
 * fuzz_delta_corpus's sources share, so that a source's first delta applies.
 */
#ifndef ONCE_TESTS_FUZZ_DELTA_H
#define ONCE_TESTS_FUZZ_DELTA_H

#include "testing.h"

static inline once_config fuzz_delta_config(bool bit_slice)
{
    once_config c = testing_config(ONCE_DBF, 0x5eedde17);
    c.capacity = 64;
    c.error = 0.01;
    c.bit_slice = bit_slice;
    c.max_bytes = 1 << 20;
    return c;
}

static inline once_filter *fuzz_delta_replica(bool bit_slice)
{
    once_config c = fuzz_delta_config(bit_slice);
    once_filter *f = NULL;
    return once_create(&f, &c) == ONCE_OK ? f : NULL;
}

#endif
