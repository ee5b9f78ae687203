/*
 * timefmt.h - durations on the command line and event times in the input.
 */
#ifndef ONCE_PROGRAMS_TIMEFMT_H
#define ONCE_PROGRAMS_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

typedef enum time_format { TIME_EPOCH, TIME_EPOCH_MS, TIME_ISO8601 } time_format;

/* A duration in milliseconds: numbers with units ms, s, m (or min), h, d, largest unit
 * first and each at most once ("90s", "1h30m", "2d12h", "250ms"), or a bare number of
 * seconds; a number may have a decimal fraction ("1.5h") that comes to whole
 * milliseconds ("0.5ms" is refused rather than rounded).  Returns 0, or -1 if the text
 * is not such a positive duration of at most UINT64_MAX / 4 ms. */
int parse_duration_ms(const char *text, uint64_t *ms);

/* Why an event time was not read. */
enum {
    TIME_UNREADABLE = -1,  /* not a time of the format */
    TIME_BEFORE_1970 = -2, /* a time of the format, but before 1970-01-01T00:00:00Z: the
                              windows' times are unsigned milliseconds since then */
};

/* Parse an event time from `len` bytes (not NUL-terminated) into Unix milliseconds.
 *   epoch     seconds, optionally with a fraction: 1700000000 or 1700000000.25
 *   epoch_ms  integer milliseconds
 *   iso8601   YYYY-MM-DDTHH:MM:SS[.fraction][Z|+HH:MM|-HH:MM] (a space for T is fine;
 *             no zone means UTC)
 * Surrounding spaces are allowed.  Returns 0, TIME_UNREADABLE, or TIME_BEFORE_1970 (a
 * negative epoch time, or an ISO-8601 time before 1970 in UTC). */
int parse_event_time(const char *text, size_t len, time_format format, uint64_t *ms);

/* Unix milliseconds written as the input gives times, for messages: seconds (with a
 * fraction when there is one) for epoch, milliseconds for epoch_ms, UTC ISO-8601 for
 * iso8601.  `out` takes at least EVENT_TIME_TEXT bytes. */
#define EVENT_TIME_TEXT 40
const char *format_event_time(uint64_t ms, time_format format, char *out);

#endif
