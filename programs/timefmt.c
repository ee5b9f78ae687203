/*
 * timefmt.c - parse durations and event times without the C library's locale- and
 * time-zone-dependent functions: the result must not depend on the machine's TZ.
 */
#include "timefmt.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The units of a duration.  A suffix that begins another ("ms", "min" and "m") comes
 * first, so the longest one matches. */
static const struct duration_unit {
    const char *suffix;
    uint64_t ms;
} duration_units[] = {
    {"ms", 1}, {"min", 60 * 1000}, {"m", 60 * 1000}, {"s", 1000}, {"h", 3600 * 1000},
    {"d", 86400 * 1000},
};

/* Durations stay far below UINT64_MAX: the windows add them to times and to each other. */
#define DURATION_MAX_MS (UINT64_MAX / 4)

/* Digits of a decimal fraction that can still give whole milliseconds: a unit of at
 * most 86400000 ms = 2^10 3^3 5^5 ms cancels at most 10 digits (a last digit that is
 * not 0 leaves the fraction without a factor 2 or without a factor 5). */
#define DURATION_MAX_FRACTION_DIGITS 10

/* One number with its unit at *p ("1.5h"), in milliseconds.  Returns 0 and moves *p
 * past it, or -1.  `unit` is NULL for a bare number, taken as seconds. */
static int duration_term(const char **p, uint64_t *ms, const struct duration_unit **unit)
{
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return -1;
    uint64_t whole = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (whole > (DURATION_MAX_MS - 9) / 10)
            return -1;
        whole = whole * 10 + (uint64_t)(*s - '0');
    }
    const char *fraction = s, *fraction_end = s;
    if (*s == '.') {
        fraction = ++s;
        for (; *s >= '0' && *s <= '9'; s++)
            if (*s != '0')
                fraction_end = s + 1; /* trailing zeros change nothing */
        if (s == fraction)
            return -1; /* "1.h" */
        if (fraction_end < fraction)
            fraction_end = fraction;
    }
    *unit = NULL;
    for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++) {
        size_t len = strlen(duration_units[i].suffix);
        if (strncmp(s, duration_units[i].suffix, len) == 0) {
            *unit = &duration_units[i];
            s += len;
            break;
        }
    }
    uint64_t unit_ms = *unit ? (*unit)->ms : 1000;
    if (whole > DURATION_MAX_MS / unit_ms)
        return -1;
    size_t digits = (size_t)(fraction_end - fraction);
    if (digits > DURATION_MAX_FRACTION_DIGITS)
        return -1;
    uint64_t numerator = 0, denominator = 1;
    for (const char *f = fraction; f < fraction_end; f++) {
        numerator = numerator * 10 + (uint64_t)(*f - '0');
        denominator *= 10;
    }
    numerator *= unit_ms; /* below 10^10 * 86400000 < 2^63 */
    if (numerator % denominator != 0)
        return -1; /* not a whole number of milliseconds */
    uint64_t total = whole * unit_ms;
    if (numerator / denominator > DURATION_MAX_MS - total)
        return -1;
    *ms = total + numerator / denominator;
    *p = s;
    return 0;
}

int parse_duration_ms(const char *text, uint64_t *ms)
{
    if (text == NULL)
        return -1;
    const char *p = text;
    uint64_t total = 0;
    uint64_t smaller_than = UINT64_MAX; /* each unit is smaller than the one before */
    do {
        uint64_t term;
        const struct duration_unit *unit;
        if (duration_term(&p, &term, &unit) != 0)
            return -1;
        if (unit == NULL) {
            if (p != text + strlen(text) || total != 0 || smaller_than != UINT64_MAX)
                return -1; /* a bare number is the whole duration: "90", not "1h30" */
        } else {
            if (unit->ms >= smaller_than)
                return -1; /* "30m1h", "1m1m" */
            smaller_than = unit->ms;
        }
        if (term > DURATION_MAX_MS - total)
            return -1;
        total += term;
    } while (*p != '\0');
    if (total == 0)
        return -1;
    *ms = total;
    return 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

typedef struct cursor {
    const char *p, *end;
} cursor;

static int digits(cursor *c, unsigned count, unsigned *out)
{
    unsigned v = 0;
    for (unsigned i = 0; i < count; i++) {
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return -1;
        v = v * 10 + (unsigned)(*c->p++ - '0');
    }
    *out = v;
    return 0;
}

static int expect(cursor *c, char ch)
{
    if (c->p >= c->end || *c->p != ch)
        return -1;
    c->p++;
    return 0;
}

/* Milliseconds of a fraction ".ddd...", truncated; leaves the cursor after it. */
static unsigned fraction_ms(cursor *c)
{
    unsigned ms = 0, place = 100;
    if (c->p < c->end && (*c->p == '.' || *c->p == ',')) {
        c->p++;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            ms += (unsigned)(*c->p - '0') * place;
            place /= 10;
            c->p++;
        }
    }
    return ms;
}

static int parse_iso8601(cursor *c, uint64_t *ms)
{
    unsigned year, month, day, hour, minute, second;
    if (digits(c, 4, &year) || expect(c, '-') || digits(c, 2, &month) || expect(c, '-') ||
        digits(c, 2, &day))
        return -1;
    if (c->p >= c->end || (*c->p != 'T' && *c->p != 't' && *c->p != ' '))
        return -1;
    c->p++;
    if (digits(c, 2, &hour) || expect(c, ':') || digits(c, 2, &minute) || expect(c, ':') ||
        digits(c, 2, &second))
        return -1;
    unsigned millis = fraction_ms(c);
    static const unsigned month_days[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12 || day < 1 || day > month_days[month - 1] || hour > 23 ||
        minute > 59 || second > 60)
        return -1;
    if (month == 2 && day == 29 && !((year % 4 == 0 && year % 100 != 0) || year % 400 == 0))
        return -1;
    int64_t offset_s = 0;
    if (c->p < c->end && (*c->p == 'Z' || *c->p == 'z')) {
        c->p++;
    } else if (c->p < c->end && (*c->p == '+' || *c->p == '-')) {
        int sign = *c->p++ == '-' ? -1 : 1;
        unsigned oh, om = 0;
        if (digits(c, 2, &oh))
            return -1;
        if (c->p < c->end && *c->p == ':')
            c->p++;
        if (c->p < c->end && *c->p >= '0' && *c->p <= '9' && digits(c, 2, &om))
            return -1;
        if (oh > 23 || om > 59)
            return -1;
        offset_s = sign * (int64_t)(oh * 3600 + om * 60);
    }
    if (c->p != c->end)
        return TIME_UNREADABLE;
    int64_t seconds = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 +
                      second - offset_s;
    if (seconds < 0)
        return TIME_BEFORE_1970; /* a valid time, but the windows' clock starts at 1970 */
    *ms = (uint64_t)seconds * 1000 + millis;
    return 0;
}

int parse_event_time(const char *text, size_t len, time_format format, uint64_t *ms)
{
    cursor c = {text, text + len};
    while (c.p < c.end && (*c.p == ' ' || *c.p == '\t'))
        c.p++;
    while (c.end > c.p && (c.end[-1] == ' ' || c.end[-1] == '\t' || c.end[-1] == '\r'))
        c.end--;
    if (c.p == c.end)
        return -1;
    uint64_t value = 0;
    switch (format) {
    case TIME_ISO8601: {
        int status = parse_iso8601(&c, &value);
        if (status != 0)
            return status;
        break;
    }
    case TIME_EPOCH:
    case TIME_EPOCH_MS: {
        /* A negative epoch time is read through, to tell it from garbage. */
        bool negative = c.p < c.end && *c.p == '-';
        c.p += negative;
        const char *start = c.p;
        while (c.p < c.end && *c.p >= '0' && *c.p <= '9') {
            if (value > (UINT64_MAX / 4) / 10)
                return -1;
            value = value * 10 + (uint64_t)(*c.p++ - '0');
        }
        if (c.p == start)
            return -1;
        if (format == TIME_EPOCH) {
            if (value > UINT64_MAX / 4000)
                return -1;
            value = value * 1000 + fraction_ms(&c);
        }
        if (c.p == c.end && negative && value != 0)
            return TIME_BEFORE_1970;
        break;
    }
    }
    if (c.p != c.end)
        return TIME_UNREADABLE;
    *ms = value;
    return 0;
}

/* Days since 1970-01-01 to a civil date (proleptic Gregorian), the inverse of the
 * parser's day count. */
static void civil_from_days(uint64_t days, uint64_t *year, unsigned *month, unsigned *day)
{
    uint64_t z = days + 719468; /* days since 0000-03-01 */
    uint64_t era = z / 146097;
    uint64_t doe = z - era * 146097;
    uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    uint64_t mp = (5 * doy + 2) / 153;
    *day = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *month = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *year = yoe + era * 400 + (*month <= 2);
}

const char *format_event_time(uint64_t ms, time_format format, char *out)
{
    uint64_t seconds = ms / 1000, milli = ms % 1000;
    if (format == TIME_EPOCH_MS) {
        snprintf(out, EVENT_TIME_TEXT, "%llu", (unsigned long long)ms);
    } else if (format == TIME_EPOCH) {
        if (milli)
            snprintf(out, EVENT_TIME_TEXT, "%llu.%03llu", (unsigned long long)seconds,
                     (unsigned long long)milli);
        else
            snprintf(out, EVENT_TIME_TEXT, "%llu", (unsigned long long)seconds);
    } else {
        uint64_t year;
        unsigned month, day;
        civil_from_days(seconds / 86400, &year, &month, &day);
        unsigned in_day = (unsigned)(seconds % 86400);
        int n = snprintf(out, EVENT_TIME_TEXT, "%04llu-%02u-%02uT%02u:%02u:%02u",
                         (unsigned long long)year, month, day, in_day / 3600,
                         in_day / 60 % 60, in_day % 60);
        if (n > 0 && n < EVENT_TIME_TEXT)
            snprintf(out + n, (size_t)(EVENT_TIME_TEXT - n), milli ? ".%03lluZ" : "Z",
                     (unsigned long long)milli);
    }
    return out;
}
