/*
 * state.h - the filter's state file: locked for the run, loaded at start, saved
 * atomically at the end.
 */
#ifndef ONCE_PROGRAMS_STATE_H
#define ONCE_PROGRAMS_STATE_H

#include "once.h"

typedef enum state_result { STATE_LOADED, STATE_ABSENT, STATE_FAILED } state_result;

/* Why a state function failed, for a caller that says it its own way (the Python
 * package raises it).  The functions below that take one print to stderr, after
 * "once: ", when given NULL (the command line). */
typedef struct state_report {
    int error;      /* an errno value; 0: the file is there, but not a filter to run */
    char text[640]; /* the sentence, naming the file */
} state_report;

/* The path a run uses for the state named `path` (malloc'd): `path` itself, or the
 * target of a symbolic link; NULL after saying why not (a link to nothing, a path
 * that is not a regular file). */
char *state_resolve(const char *path, state_report *report);

/* Remove "<path>.tmp.<pid>" files, left by saves that never finished; while holding
 * the lock (no other run saves this state then).  Says how many on stderr. */
void state_remove_stale_temporaries(const char *path);

/* Load `path` (never blocking: a FIFO is refused).  STATE_ABSENT if it does not exist;
 * STATE_FAILED after saying why, naming the file. */
state_result state_load(const char *path, once_filter **out, state_report *report);

/* Save atomically: write a temporary file beside `path`, fsync it, rename it over
 * `path`, fsync the directory.  On failure the old file is untouched, the temporary
 * removed, the reason said, and -1 returned. */
int state_save(const char *path, const once_filter *filter, state_report *report);

/* A run's exclusive hold on its state file, from before the load to after the save:
 * two runs sharing a state would each save their own keys over the other's.  The lock
 * is flock(2) on "<path>.lock", a file beside the state that is never renamed (a lock
 * on the state file itself would be lost with its inode when the save renames the new
 * state over it). */
typedef struct state_lock {
    int fd;     /* -1: not held */
    char *path; /* "<path>.lock" */
} state_lock;

/* Take the lock without waiting, after checking that a new state can be saved beside
 * `path` (its directory exists and takes new files), so that an unusable path is
 * found before any input is read.  Returns 0, or -1 after saying why, naming the file:
 * the directory is unusable, or another process holds the lock (its pid named when it
 * can be read; EBUSY in a report). */
int state_lock_acquire(const char *path, state_lock *lock, state_report *report);

/* Remove the lock file and let go of the lock; nothing to do if not held. */
void state_lock_release(state_lock *lock);

#endif
