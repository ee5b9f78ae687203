/*
 * card.h - `once card`: how many distinct keys a stream or a saved filter holds.
 */
#ifndef ONCE_PROGRAMS_CARD_H
#define ONCE_PROGRAMS_CARD_H

#include "once.h"
#include "options.h"

#include <stdbool.h>

/* What a named input is: a saved filter (it starts like one; the full check is
 * once_load's), a stream of lines, or unreadable: it cannot be opened or read (a
 * directory), errno says why. */
typedef enum card_input { CARD_INPUT_STREAM, CARD_INPUT_STATE, CARD_INPUT_UNREADABLE } card_input;
card_input card_input_kind(const char *path);

/* Print the estimate for one filter under `name` on stdout.  Returns 0 or an exit code. */
int card_print(const cli_options *o, const char *name, const once_filter *filter);

/* `once card STATE...`: load each file and print its estimate; a file that cannot be
 * read is reported, the others still printed, and the exit code is then 2. */
int card_files(const cli_options *o);

#endif
