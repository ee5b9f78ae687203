/*
 * module/settings.c - the module's settings, registered with the server (7.0 configs).
 *
 * The error rate is a string setting (the server's numeric settings are integers),
 * parsed and checked here: a value outside (0, 1) is refused and the old one kept.
 */
#include "settings.h"
#include "once.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

module_config config = {0.01, 100, 2, 128LL << 20, true, 0};

/* The error rate as last set, in the form CONFIG GET shows. */
static RedisModuleString *error_rate_text;

static bool parse_rate(const char *s, size_t len, double *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end = NULL;
    errno = 0;
    double v = strtod(buf, &end);
    if (errno != 0 || end != buf + len || !once_error_in_range(v))
        return false;
    *out = v;
    return true;
}

static RedisModuleString *get_error_rate(const char *name, void *privdata)
{
    (void)name;
    (void)privdata;
    return error_rate_text;
}

static int set_error_rate(const char *name, RedisModuleString *val, void *privdata,
                          RedisModuleString **err)
{
    (void)name;
    (void)privdata;
    size_t len = 0;
    const char *s = RM_StringPtrLen(val, &len);
    double v = 0;
    if (!parse_rate(s, len, &v)) {
        static const char message[] =
            "error rate must be a number at least 1e-9 and below 1, the range a filter plans for";
        *err = RM_CreateString(NULL, message, sizeof message - 1);
        return RM_ERR;
    }
    RedisModuleString *text = RM_CreateString(NULL, s, len);
    if (error_rate_text != NULL)
        RM_FreeString(NULL, error_rate_text);
    error_rate_text = text;
    config.error_rate = v;
    return RM_OK;
}

/* The integer settings: one row each, their value in `config`. */
typedef struct numeric_setting {
    const char *name;
    long long *value;
    long long fallback, min, max;
    unsigned int flags;
} numeric_setting;

static const numeric_setting numeric_settings[] = {
    {"initial-capacity", &config.initial_capacity, 100, 1, 1LL << 40, RM_CONFIG_DEFAULT},
    {"expansion", &config.expansion, 2, 1, 32768, RM_CONFIG_DEFAULT},
    {"max-memory", &config.max_memory, 128LL << 20, 4096, 1LL << 42, RM_CONFIG_MEMORY},
    {"default-span", &config.default_span_ms, 0, 0, 1LL << 40, RM_CONFIG_DEFAULT},
};
#define NUMERIC_SETTINGS (sizeof numeric_settings / sizeof numeric_settings[0])

static long long get_numeric(const char *name, void *privdata)
{
    (void)name;
    return *((const numeric_setting *)privdata)->value;
}

static int set_numeric(const char *name, long long val, void *privdata, RedisModuleString **err)
{
    (void)name;
    (void)err; /* the server checks the range it was given */
    *((const numeric_setting *)privdata)->value = val;
    return RM_OK;
}

static int get_random_seeds(const char *name, void *privdata)
{
    (void)name;
    (void)privdata;
    return config.random_seeds;
}

static int set_random_seeds(const char *name, int val, void *privdata, RedisModuleString **err)
{
    (void)name;
    (void)privdata;
    (void)err;
    config.random_seeds = val != 0;
    return RM_OK;
}

/* A loadmodule word pair NAME VALUE: our setting names, or RedisBloom's. */
static int apply_argument(RedisModuleCtx *ctx, RedisModuleString *name_arg,
                          RedisModuleString *value_arg)
{
    size_t len = 0;
    const char *name = RM_StringPtrLen(name_arg, &len);
    size_t vlen = 0;
    const char *value = RM_StringPtrLen(value_arg, &vlen);
    if (strcasecmp(name, "error-rate") == 0 || strcasecmp(name, "ERROR_RATE") == 0) {
        RedisModuleString *err = NULL;
        if (set_error_rate(name, value_arg, NULL, &err) != RM_OK) {
            RM_Log(ctx, "warning", "loadmodule argument %s %.*s: error rate must be in (0, 1)",
                   name, (int)vlen, value);
            if (err != NULL)
                RM_FreeString(NULL, err);
            return RM_ERR;
        }
        return RM_OK;
    }
    if (strcasecmp(name, "random-seeds") == 0) {
        if (strcasecmp(value, "yes") != 0 && strcasecmp(value, "no") != 0) {
            RM_Log(ctx, "warning", "loadmodule argument random-seeds takes yes or no");
            return RM_ERR;
        }
        config.random_seeds = strcasecmp(value, "yes") == 0;
        return RM_OK;
    }
    const char *canonical = strcasecmp(name, "INITIAL_SIZE") == 0 ? "initial-capacity" : name;
    for (size_t i = 0; i < NUMERIC_SETTINGS; i++) {
        const numeric_setting *s = &numeric_settings[i];
        if (strcasecmp(canonical, s->name) != 0)
            continue;
        long long v = 0;
        if (RM_StringToLongLong(value_arg, &v) != RM_OK || v < s->min || v > s->max) {
            RM_Log(ctx, "warning", "loadmodule argument %s %.*s: an integer in [%lld, %lld]",
                   name, (int)vlen, value, s->min, s->max);
            return RM_ERR;
        }
        *s->value = v;
        return RM_OK;
    }
    RM_Log(ctx, "warning", "unknown loadmodule argument %s", name);
    return RM_ERR;
}

int config_register(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (RM_RegisterStringConfig(ctx, "error-rate", "0.01", RM_CONFIG_DEFAULT, get_error_rate,
                                set_error_rate, NULL, NULL) != RM_OK)
        return RM_ERR;
    for (size_t i = 0; i < NUMERIC_SETTINGS; i++) {
        const numeric_setting *s = &numeric_settings[i];
        if (RM_RegisterNumericConfig(ctx, s->name, s->fallback, s->flags, s->min, s->max,
                                     get_numeric, set_numeric, NULL, (void *)s) != RM_OK)
            return RM_ERR;
    }
    if (RM_RegisterBoolConfig(ctx, "random-seeds", 1, RM_CONFIG_DEFAULT, get_random_seeds,
                              set_random_seeds, NULL, NULL) != RM_OK)
        return RM_ERR;
    if (RM_LoadConfigs(ctx) != RM_OK)
        return RM_ERR;
    if (argc % 2 != 0) {
        RM_Log(ctx, "warning", "loadmodule arguments come in NAME VALUE pairs");
        return RM_ERR;
    }
    for (int i = 0; i < argc; i += 2)
        if (apply_argument(ctx, argv[i], argv[i + 1]) != RM_OK)
            return RM_ERR;
    return RM_OK;
}
