/*
 * card.h - `once card`: how many distinct keys a stream or a saved filter holds.
 */
#ifndef ONCE_PROGRAMS_CARD_H
#define ONCE_PROGRAMS_CARD_H

#include "once.h"
#include "options.h"

#include <stdbool.h>

/* Does the file start like a saved filter?  (Its full check is once_load's.) */
bool card_is_state_file(const char *path);

/* Print the estimate for one filter under `name` on stdout.  Returns 0 or an exit code. */
int card_print(const cli_options *o, const char *name, const once_filter *filter);

/* `once card STATE...`: load each file and print its estimate. */
int card_files(const cli_options *o);

#endif
