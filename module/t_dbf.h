/*
 * module/t_dbf.h - DBF.*: the Dynamic Bloom Filter, a set that grows and deletes
 * (t_dbf.c).
 */
#ifndef ONCE_MODULE_T_DBF_H
#define ONCE_MODULE_T_DBF_H

#include "redis_api.h"

/* Register the type and its commands.  RM_OK, or RM_ERR after logging why. */
int dbf_register(RedisModuleCtx *ctx);

#endif /* ONCE_MODULE_T_DBF_H */
