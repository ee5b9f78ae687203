/*
 * module/t_window.h - ONCE.*: windowed dedup by count or by time (t_window.c).
 */
#ifndef ONCE_MODULE_T_WINDOW_H
#define ONCE_MODULE_T_WINDOW_H

#include "redis_api.h"

/* Register the type and its commands.  RM_OK, or RM_ERR after logging why. */
int window_register(RedisModuleCtx *ctx);

#endif /* ONCE_MODULE_T_WINDOW_H */
