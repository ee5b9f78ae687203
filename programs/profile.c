/*
 * profile.c - the options a state file must be resumed with.  See profile.h.
 *
 *   once-profile 1
 *   key line | key fields 1,3-5
 *   split byte 9 | split blanks
 *   case exact | case fold
 *   level 2                                    (windows with levels)
 *   policy first | policy refresh              (windows)
 *   time clock | time field 1 iso8601          (time windows)
 */
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const format_names[] = {
    [TIME_EPOCH] = "epoch", [TIME_EPOCH_MS] = "epoch_ms", [TIME_ISO8601] = "iso8601"};

void profile_of_options(run_profile *p, const cli_options *o, once_type type)
{
    memset(p, 0, sizeof *p);
    p->key = o->key;
    p->key.strip_cr = false; /* how records end is not part of the profile */
    const once_structure *s = once_structure_of(type);
    p->has_level = s->levels;
    p->level = o->level;
    p->has_policy = s->kind == ONCE_KIND_COUNT_WINDOW || s->kind == ONCE_KIND_TIME_WINDOW;
    p->refresh = o->refresh;
    p->has_time = s->kind == ONCE_KIND_TIME_WINDOW;
    p->time_field = o->time_field;
    p->time_format = o->time_format;
}

size_t profile_encode(const run_profile *p, char *out)
{
    char fields[KEY_FIELDS_TEXT];
    key_fields_format(&p->key, fields, sizeof fields);
    int n = snprintf(out, PROFILE_TEXT_MAX, "once-profile 1\n");
    size_t used = (size_t)n;
#define APPEND(...)                                                                        \
    do {                                                                                   \
        n = snprintf(out + used, PROFILE_TEXT_MAX - used, __VA_ARGS__);                    \
        used += n > 0 && (size_t)n < PROFILE_TEXT_MAX - used ? (size_t)n : 0;              \
    } while (0)
    if (p->key.field_count == 0)
        APPEND("key line\n");
    else
        APPEND("key fields %s\n", fields);
    if (p->key.whitespace)
        APPEND("split blanks\n");
    else
        APPEND("split byte %u\n", (unsigned)(unsigned char)p->key.delimiter);
    APPEND("case %s\n", p->key.ignore_case ? "fold" : "exact");
    if (p->has_level)
        APPEND("level %u\n", (unsigned)p->level);
    if (p->has_policy)
        APPEND("policy %s\n", p->refresh ? "refresh" : "first");
    if (p->has_time) {
        if (p->time_field == 0)
            APPEND("time clock\n");
        else
            APPEND("time field %u %s\n", p->time_field, format_names[p->time_format]);
    }
#undef APPEND
    return used;
}

/* A decimal number that is all of `text`, no larger than `max`. */
static int parse_number(const char *text, unsigned long max, unsigned long *out)
{
    const char *end;
    return parse_decimal(text, max, &end, out) == 0 && *end == '\0' ? 0 : -1;
}

static int decode_line(run_profile *p, char *line, unsigned *seen)
{
    char *value = strchr(line, ' ');
    if (value == NULL)
        return -1;
    *value++ = '\0';
    unsigned long v;
    if (strcmp(line, "key") == 0) {
        *seen |= 1;
        if (strcmp(value, "line") == 0)
            p->key.field_count = 0;
        else if (strncmp(value, "fields ", 7) != 0 || key_fields_parse(&p->key, value + 7) != 0)
            return -1;
    } else if (strcmp(line, "split") == 0) {
        *seen |= 2;
        if (strcmp(value, "blanks") == 0)
            p->key.whitespace = true;
        else if (strncmp(value, "byte ", 5) == 0 && parse_number(value + 5, 255, &v) == 0 &&
                 v != '\n')
            p->key.delimiter = (char)v;
        else
            return -1;
    } else if (strcmp(line, "case") == 0) {
        *seen |= 4;
        if (strcmp(value, "fold") == 0)
            p->key.ignore_case = true;
        else if (strcmp(value, "exact") != 0)
            return -1;
    } else if (strcmp(line, "level") == 0) {
        if (parse_number(value, 8, &v) != 0)
            return -1;
        p->has_level = true;
        p->level = (uint32_t)v;
    } else if (strcmp(line, "policy") == 0) {
        p->has_policy = true;
        if (strcmp(value, "refresh") == 0)
            p->refresh = true;
        else if (strcmp(value, "first") != 0)
            return -1;
    } else if (strcmp(line, "time") == 0) {
        p->has_time = true;
        if (strcmp(value, "clock") == 0)
            return 0;
        char *format = strrchr(value, ' ');
        if (strncmp(value, "field ", 6) != 0 || format == NULL)
            return -1;
        *format++ = '\0';
        if (parse_number(value + 6, KEY_MAX_FIELD, &v) != 0 || v == 0)
            return -1;
        p->time_field = (unsigned)v;
        size_t f = 0;
        while (f < sizeof format_names / sizeof format_names[0] &&
               strcmp(format, format_names[f]) != 0)
            f++;
        if (f == sizeof format_names / sizeof format_names[0])
            return -1;
        p->time_format = (time_format)f;
    } else {
        return -1; /* an option of a newer version: it may change keys, so no guessing */
    }
    return 0;
}

int profile_decode(run_profile *p, const char *text, size_t len)
{
    memset(p, 0, sizeof *p);
    p->key.delimiter = '\t';
    static const char magic[] = "once-profile 1\n";
    if (len > PROFILE_TEXT_MAX || len < sizeof magic - 1 ||
        memcmp(text, magic, sizeof magic - 1) != 0 || text[len - 1] != '\n' ||
        memchr(text, '\0', len) != NULL)
        return -1;
    char copy[PROFILE_TEXT_MAX + 1];
    memcpy(copy, text, len);
    copy[len] = '\0';
    unsigned seen = 0;
    for (char *line = copy + sizeof magic - 1; *line;) {
        char *end = strchr(line, '\n'); /* every line ends with one: checked above */
        *end = '\0';
        if (decode_line(p, line, &seen) != 0)
            return -1;
        line = end + 1;
    }
    return seen == 7 ? 0 : -1;
}

/* The key options as a user would type them. */
static void describe_key(const key_spec *k, char *out, size_t size)
{
    char fields[KEY_FIELDS_TEXT];
    key_fields_format(k, fields, sizeof fields);
    char split[32];
    if (k->whitespace)
        snprintf(split, sizeof split, " --ws");
    else if (k->delimiter == '\t')
        split[0] = '\0';
    else if (k->delimiter > ' ' && k->delimiter < 127 && k->delimiter != '\'')
        snprintf(split, sizeof split, " -t '%c'", k->delimiter);
    else
        snprintf(split, sizeof split, " -t byte %u", (unsigned)(unsigned char)k->delimiter);
    if (k->field_count == 0)
        snprintf(out, size, "the whole line as the key%s", k->ignore_case ? " and -i" : "");
    else
        snprintf(out, size, "-f %s%s%s", fields, split, k->ignore_case ? " -i" : "");
}

static bool same_fields(const key_spec *a, const key_spec *b)
{
    return a->field_count == b->field_count &&
           memcmp(a->fields, b->fields, a->field_count * sizeof a->fields[0]) == 0;
}

const char *profile_apply(const run_profile *p, cli_options *o, char *made_with)
{
    /* What splits fields matters when fields are read: for the key or for times. */
    bool fields_read = p->key.field_count > 0 || (p->has_time && p->time_field > 0);
    describe_key(&p->key, made_with, PROFILE_TEXT_MAX);
    if (o->key.field_count > 0 && !same_fields(&o->key, &p->key)) /* -f given */
        return "-f";
    if (o->key.ignore_case && !p->key.ignore_case)
        return "-i";
    if (fields_read && o->split_given &&
        (o->key.whitespace != p->key.whitespace ||
         (!p->key.whitespace && o->key.delimiter != p->key.delimiter)))
        return o->key.whitespace ? "--ws" : "-t";
    if (p->has_level && o->level_given && o->level != p->level) {
        snprintf(made_with, PROFILE_TEXT_MAX, "--level %u", (unsigned)p->level);
        return "--level";
    }
    if (!p->has_level && o->level_given) { /* a tagged or timer window: no layout to set */
        snprintf(made_with, PROFILE_TEXT_MAX, "a filter without levels");
        return "--level";
    }
    if (p->has_policy && o->refresh && !p->refresh) {
        snprintf(made_with, PROFILE_TEXT_MAX, "windows counted from a key's first delivery");
        return "--refresh";
    }
    if (p->has_time && ((o->time_field && o->time_field != p->time_field) ||
                        (o->time_format_given && o->time_format != p->time_format))) {
        if (p->time_field == 0)
            snprintf(made_with, PROFILE_TEXT_MAX, "the clock at reading as event time");
        else
            snprintf(made_with, PROFILE_TEXT_MAX, "--time-field %u --time-format %s",
                     p->time_field, format_names[p->time_format]);
        return o->time_field && o->time_field != p->time_field ? "--time-field"
                                                               : "--time-format";
    }
    /* No contradiction: the run reads keys and times as the state was made. */
    bool strip_cr = o->key.strip_cr;
    o->key = p->key;
    o->key.strip_cr = strip_cr;
    if (p->has_level)
        o->level = p->level;
    if (p->has_policy)
        o->refresh = p->refresh;
    if (p->has_time) {
        o->time_field = p->time_field;
        o->time_format = p->time_format;
    }
    return NULL;
}
