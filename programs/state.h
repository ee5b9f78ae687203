/*
 * state.h - the filter's state file: load at start, save atomically at the end.
 */
#ifndef ONCE_PROGRAMS_STATE_H
#define ONCE_PROGRAMS_STATE_H

#include "once.h"

typedef enum state_result { STATE_LOADED, STATE_ABSENT, STATE_FAILED } state_result;

/* Load `path`.  STATE_ABSENT if it does not exist; STATE_FAILED after printing an
 * error that names the file. */
state_result state_load(const char *path, once_filter **out);

/* Save atomically: write a temporary file beside `path`, fsync it, rename it over
 * `path`, fsync the directory.  On failure the old file is untouched, the temporary
 * removed, an error printed, and -1 returned. */
int state_save(const char *path, const once_filter *filter);

#endif
