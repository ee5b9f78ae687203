/*
 * timefmt.c - parse durations and event times without the C library's locale- and
 * time-zone-dependent functions: the result must not depend on the machine's TZ.
 */
#include "timefmt.h"

#include <string.h>

int parse_duration_ms(const char *text, uint64_t *ms)
{
    if (text == NULL || *text < '0' || *text > '9')
        return -1;
    uint64_t v = 0;
    const char *p = text;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    uint64_t unit;
    if (strcmp(p, "ms") == 0)
        unit = 1;
    else if (*p == '\0' || strcmp(p, "s") == 0)
        unit = 1000;
    else if (strcmp(p, "m") == 0 || strcmp(p, "min") == 0)
        unit = 60 * 1000;
    else if (strcmp(p, "h") == 0)
        unit = 3600 * 1000;
    else if (strcmp(p, "d") == 0)
        unit = 86400 * 1000;
    else
        return -1;
    if (v == 0 || v > UINT64_MAX / unit / 4)
        return -1;
    *ms = v * unit;
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
    if (year < 1970 || month < 1 || month > 12 || day < 1 || day > month_days[month - 1] ||
        hour > 23 || minute > 59 || second > 60)
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
    int64_t seconds = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 +
                      second - offset_s;
    if (seconds < 0)
        return -1;
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
    case TIME_ISO8601:
        if (parse_iso8601(&c, &value) != 0)
            return -1;
        break;
    case TIME_EPOCH:
    case TIME_EPOCH_MS: {
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
        break;
    }
    }
    if (c.p != c.end)
        return -1;
    *ms = value;
    return 0;
}
