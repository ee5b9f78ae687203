/*
 * profile.h - the options a state file must be resumed with, saved in it.
 *
 * The library's state holds the filter and its parameters; what a key is (the fields,
 * the delimiter, case folding), the window layout's level, the refresh policy and
 * where event times come from are choices of the command line that the filter's bits
 * silently depend on: a whole-line state resumed with -f 2 would answer for keys it never
 * saw.  The profile records them in the state's metadata, as short "name value" lines,
 * so a resumed run takes them from the file, and an option that contradicts one is a
 * usage error.
 */
#ifndef ONCE_PROGRAMS_PROFILE_H
#define ONCE_PROGRAMS_PROFILE_H

#include "keys.h"
#include "options.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct run_profile {
    key_spec key;       /* fields, delimiter or whitespace, case */
    bool has_level;     /* windows with a level (apbf, apbbf, tlbf) */
    uint32_t level;
    bool has_policy;    /* windows */
    bool refresh;
    bool has_time;      /* time windows */
    unsigned time_field; /* 0: the clock at reading */
    time_format time_format;
} run_profile;

#define PROFILE_TEXT_MAX 1024

/* The profile of a run of `options` on a filter of `type`. */
void profile_of_options(run_profile *profile, const cli_options *options, once_type type);
/* Write it as text (at most PROFILE_TEXT_MAX bytes); returns the length. */
size_t profile_encode(const run_profile *profile, char *out);
/* Read text that profile_encode wrote.  Returns 0, or -1 if it is not such a profile
 * (from a newer version, or damaged): every line must be known and in range. */
int profile_decode(run_profile *profile, const char *text, size_t len);

/* Check the options given on the command line against a loaded state's profile and
 * take the rest from it.  Returns NULL when they agree (and *options now holds the
 * state's choices), or the option that contradicts, with the state's value described
 * in `made_with` (PROFILE_TEXT_MAX bytes). */
const char *profile_apply(const run_profile *profile, cli_options *options, char *made_with);

#endif
