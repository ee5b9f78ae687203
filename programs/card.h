/*
 * card.h - `once card`: how many distinct keys a stream or a saved filter holds.
 */
#ifndef ONCE_PROGRAMS_CARD_H
#define ONCE_PROGRAMS_CARD_H

#include "once.h"
#include "options.h"

/* Print the estimate for one filter under `name` on stdout.  Returns 0 or an exit code. */
int card_print(const cli_options *o, const char *name, const once_filter *filter);

/* `once card --state FILE...`: load each saved filter and print its estimate. */
int card_states(const cli_options *o);

#endif
