/*
 * api/registry.c - every structure of the library, one line each.
 *
 * A structure is its own file (its ops table: probes, save and load, and how to build
 * it) and one line here: its type, name, kind, what it offers and a summary.  The rest
 * of the library (once_create, once_load, the names in stats and errors) and its callers
 * (the CLI's --filter, a module's list of types) find structures here, so adding one is
 * one file and one line.  The table is in once_type order.
 */
#include "api/api.h"

#include <string.h>

/* Each structure's table, defined in its own file. */
extern const once_filter_ops once_standard_ops, once_partitioned_ops, once_blocked_ops,
    once_counting_ops, once_apbf_ops, once_apbbf_ops, once_tlbf_ops, once_timer_ops,
    once_scalable_ops, once_dbf_ops, once_bpbf_ops, once_dbpbf_ops, once_slice_ops, once_tagged_ops;

typedef struct registration {
    once_structure info;
    const once_filter_ops *ops;
} registration;

#define STATIC ONCE_KIND_STATIC
#define COUNT ONCE_KIND_COUNT_WINDOW
#define TIME ONCE_KIND_TIME_WINDOW
#define GROWING ONCE_KIND_GROWING
#define SLICE ONCE_KIND_SLICE

/* type, name, kind, deletes, levels, memory cap, summary; ops */
static const registration registry[] = {
    {{ONCE_STANDARD, "standard", STATIC, false, false, false,
      "one bit array, k probes"}, &once_standard_ops},
    {{ONCE_PARTITIONED, "partitioned", STATIC, false, false, false,
      "k slices, one probe each"}, &once_partitioned_ops},
    {{ONCE_BLOCKED, "blocked", STATIC, false, false, false,
      "one 512-bit cache line per key"}, &once_blocked_ops},
    {{ONCE_COUNTING, "counting", STATIC, true, false, false,
      "4-bit counters: keys can be deleted"}, &once_counting_ops},
    {{ONCE_APBF, "apbf", COUNT, false, true, false,
      "Age-Partitioned Bloom filter: the last N keys"}, &once_apbf_ops},
    {{ONCE_APBBF, "apbbf", COUNT, false, true, false,
      "Age-Partitioned Blocked BF: the last N keys, a line per slice"}, &once_apbbf_ops},
    {{ONCE_TLBF, "tlbf", TIME, false, true, true,
      "Time-limited Bloom filter: the last T, slices sized to rate"}, &once_tlbf_ops},
    {{ONCE_TIMER, "timer", TIME, false, false, true,
      "timers instead of bits: the last T, exact expiry"}, &once_timer_ops},
    {{ONCE_SCALABLE, "scalable", GROWING, false, false, true,
      "scalable Bloom filter: ever larger, stricter sub-filters"}, &once_scalable_ops},
    {{ONCE_DBF, "dbf", GROWING, true, false, true,
      "Dynamic Bloom Filter: rows of counting filters"}, &once_dbf_ops},
    {{ONCE_BPBF, "bpbf", STATIC, false, false, false,
      "block-partitioned: its length reduces without rehashing"}, &once_bpbf_ops},
    {{ONCE_DBPBF, "dbpbf", GROWING, false, false, true,
      "dynamic block-partitioned: grows by batches of blocks"}, &once_dbpbf_ops},
    {{ONCE_SLICE, "slice", SLICE, false, false, false,
      "one slice of a sliced filter: positions, not keys"}, &once_slice_ops},
    {{ONCE_TAGGED, "tagged", TIME, false, false, true,
      "fingerprints tagged with their tick: the last T, small"}, &once_tagged_ops},
};

#define REGISTERED (sizeof registry / sizeof registry[0])

static const registration *registration_of(once_type type)
{
    /* In once_type order from 1: the entry of a type is at type - 1, checked. */
    size_t i = (size_t)type - 1;
    if ((int)type < 1 || i >= REGISTERED || registry[i].info.type != type)
        return NULL;
    return &registry[i];
}

size_t once_structure_count(void)
{
    return REGISTERED;
}

const once_structure *once_structure_at(size_t index)
{
    return index < REGISTERED ? &registry[index].info : NULL;
}

const once_structure *once_structure_of(once_type type)
{
    const registration *r = registration_of(type);
    return r ? &r->info : NULL;
}

const once_filter_ops *once_ops_for_type(once_type type)
{
    const registration *r = registration_of(type);
    return r ? r->ops : NULL;
}

const char *once_type_name(once_type type)
{
    const registration *r = registration_of(type);
    return r ? r->info.name : "unknown";
}

once_status once_type_from_name(const char *name, once_type *type)
{
    if (name == NULL || type == NULL)
        return ONCE_ERR_INVALID;
    for (size_t i = 0; i < REGISTERED; i++) {
        if (strcmp(registry[i].info.name, name) == 0) {
            *type = registry[i].info.type;
            return ONCE_OK;
        }
    }
    return ONCE_ERR_INVALID;
}
