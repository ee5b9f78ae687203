/*
 * core/config.c - the defaults of once_config, and a caller's config of any version
 * read into this build's (core/config.h).
 */
#include "core/config.h"

#include <string.h>

void once_config_init_sized(once_config *config, size_t size, once_type type)
{
    if (config == NULL || size < ONCE_CONFIG_FIRST_SIZE)
        return;
    /* A newer caller's struct: its fields past ours start at zero, which is what this
     * build takes them to be. */
    memset(config, 0, size);
    config->size = size;
    config->type = type;
    config->capacity = 1000000;
    config->error = 0.001;
    config->expansion = 2;
    config->tightening = 0.5;
    config->max_time_jump_ms = ONCE_DEFAULT_MAX_TIME_JUMP_MS;
    config->dynamic = true; /* a time window's capacity is a first guess: it grows */
}

once_status once_config_read(const once_config *given, once_config *out)
{
    if (given == NULL || out == NULL || given->size < ONCE_CONFIG_FIRST_SIZE)
        return ONCE_ERR_INVALID;
    const unsigned char *bytes = (const unsigned char *)given;
    for (size_t i = sizeof *out; i < given->size; i++)
        if (bytes[i] != 0)
            return ONCE_ERR_UNSUPPORTED;
    once_config_init(out, given->type);
    /* The versions this build knows: the first (up to lag_ms) and its own.  A size
     * between them copies the first's fields alone, never part of a field. */
    size_t known = given->size >= sizeof *out ? sizeof *out : ONCE_CONFIG_FIRST_SIZE;
    memcpy(out, given, known);
    out->size = sizeof *out;
    return ONCE_OK;
}
