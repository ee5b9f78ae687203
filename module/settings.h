/*
 * module/settings.h - the module's settings (CONFIG GET/SET once.<name>).
 *
 * One table (settings.c) names each setting, its default and its range; the server shows
 * them as once.<name>, and the words after the module's path on its loadmodule line
 * set them too (NAME VALUE pairs, with RedisBloom's ERROR_RATE and INITIAL_SIZE
 * accepted under those names).  Commands read the current values through these calls.
 */
#ifndef ONCE_MODULE_SETTINGS_H
#define ONCE_MODULE_SETTINGS_H

#include "redis_api.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct module_config {
    double error_rate;         /* once.error-rate: a new filter's false-positive rate */
    long long initial_capacity; /* once.initial-capacity: keys a new filter is sized for */
    long long expansion;       /* once.expansion: growth of a scalable filter (BF.*) */
    long long max_memory;      /* once.max-memory: bytes one key's filter may take */
    bool random_seeds;         /* once.random-seeds: each filter draws its own seed */
    long long default_span_ms; /* once.default-span: ONCE.ADD's window for a missing key
                                  (0: ONCE.ADD refuses a missing key) */
} module_config;

extern module_config config;

/* Register every setting, then apply the loadmodule words.  RM_OK, or RM_ERR after
 * logging what was wrong. */
int config_register(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

#endif /* ONCE_MODULE_SETTINGS_H */
