/*
 * module/t_bloom.h - BF.*: RedisBloom's commands over the scalable filter (t_bloom.c).
 */
#ifndef ONCE_MODULE_T_BLOOM_H
#define ONCE_MODULE_T_BLOOM_H

#include "redis_api.h"

/* Register the type and its commands.  RM_OK, or RM_ERR after logging why. */
int bloom_register(RedisModuleCtx *ctx);

#endif /* ONCE_MODULE_T_BLOOM_H */
