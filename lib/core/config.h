/*
 * core/config.h - a caller's once_config read into this library's own.
 *
 * A once_config carries the size of the struct its caller was built with (once.h,
 * once_config_init).  Every public call that takes one reads it through
 * once_config_read first, so that the code past it sees this build's whole struct:
 * an older caller's missing fields at their defaults, a newer caller's unknown fields
 * checked to be zero.
 */
#ifndef ONCE_CORE_CONFIG_H
#define ONCE_CORE_CONFIG_H

#include "once.h"

#include <stddef.h>

/* The size of the first once_config that carried its size: the least a caller's is
 * (lag_ms came after it). */
#define ONCE_CONFIG_FIRST_SIZE offsetof(once_config, lag_ms)
/* The same for once_stats (once_get_stats_sized). */
#define ONCE_STATS_FIRST_SIZE offsetof(once_stats, lag_ms)

/* *out := the defaults for given->type, overwritten by the fields `given` has.
 * ONCE_ERR_INVALID for NULL or a size below ONCE_CONFIG_FIRST_SIZE,
 * ONCE_ERR_UNSUPPORTED when a field this build does not know is set. */
once_status once_config_read(const once_config *given, once_config *out);

#endif
