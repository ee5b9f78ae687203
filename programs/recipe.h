/*
 * recipe.h - the filter a command line describes, built as `once` builds it: the
 * structure, its shards and its first guess from the options (options.h).  The CLI
 * and the Python package (python/) build their filters here, so that one set of
 * options answers alike in both.
 */
#ifndef ONCE_PROGRAMS_RECIPE_H
#define ONCE_PROGRAMS_RECIPE_H

#include "options.h"

#include "once.h"
#include "once_cluster.h"

#include <stddef.h>
#include <stdint.h>

/* Room for a refusal's sentence. */
#define RECIPE_WHY_MAX 512

/* The shards a new filter of `options` takes (1: one piece). */
uint32_t recipe_shards(const cli_options *options);

/* A new filter as the options describe it; `guess`, when above the capacity, is a first
 * guess of the keys to come (a run over regular files knows about how many lines it
 * will read: target_filter.c), tried first unless past half of --max-memory.  Returns 0,
 * or an exit code (EXIT_USAGE, EXIT_IO without memory) with the reason in `why`, a
 * sentence without the program's name. */
int recipe_create(const cli_options *options, uint64_t guess, once_filter **out, char *why,
                  size_t why_len);

/* The cluster filter of the options (--cluster, once_cluster.h): the config they
 * describe opened, this process one of its producers; `on_change` and `context` as
 * once_cluster_config's.  *local is --local-filter's filter (NULL without), freed by
 * the caller after the cluster filter; *hold_ms the failover hold in force (0: none);
 * *geometry_bytes a timed slice's bytes as its geometry gives them (0: none).  Returns
 * 0, or an exit code (EXIT_USAGE, EXIT_IO for the network or memory) with the reason
 * in `why`. */
int recipe_cluster_open(const cli_options *options, void (*on_change)(void *), void *context,
                        once_cluster **out, once_filter **local, uint32_t *hold_ms,
                        uint64_t *geometry_bytes, char *why, size_t why_len);

#endif
