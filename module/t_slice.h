/*
 * module/t_slice.h - SLICE.*: one slice of a filter sliced over a Redis Cluster
 * (t_slice.c).
 */
#ifndef ONCE_MODULE_T_SLICE_H
#define ONCE_MODULE_T_SLICE_H

#include "redis_api.h"

/* Register the type and its commands.  RM_OK, or RM_ERR after logging why. */
int slice_register(RedisModuleCtx *ctx);

#endif /* ONCE_MODULE_T_SLICE_H */
