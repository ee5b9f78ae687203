/*
 * keys.h - what the key of a line is: the whole line or some of its fields, split by one
 * delimiter byte or, like awk's default, by runs of blanks; optionally with ASCII case
 * folded.
 */
#ifndef ONCE_PROGRAMS_KEYS_H
#define ONCE_PROGRAMS_KEYS_H

#include "once.h"

#include <stdbool.h>
#include <stddef.h>

#define KEY_MAX_FIELD 1000000u /* the highest field number accepted */
#define KEY_MAX_FIELDS 64      /* fields in one key */

typedef struct key_spec {
    /* The fields that make the key, 1-based, ascending and distinct; none: the line. */
    unsigned fields[KEY_MAX_FIELDS];
    size_t field_count;
    char delimiter;   /* one byte between fields (default tab) */
    bool whitespace;  /* instead: fields are separated by runs of spaces and tabs, and
                       * blanks at the ends of the line are not fields (awk's default) */
    bool ignore_case; /* ASCII letters count as lower case; other bytes as they are */
    bool strip_cr;    /* a CR ending the line is not part of it (newline records) */
} key_spec;

/* A decimal number of one or more digits at `text`, no larger than `max`; *end is set
 * past its digits.  Returns 0, or -1 if there is no digit or the number passes max. */
int parse_decimal(const char *text, unsigned long max, const char **end, unsigned long *out);

/* Parse a field list such as "2", "1,3" or "2-4,7" into spec->fields.  Returns 0, or -1
 * if it is not a list of field numbers from 1 to KEY_MAX_FIELD (at most KEY_MAX_FIELDS
 * of them). */
int key_fields_parse(key_spec *spec, const char *text);
/* The canonical spelling of spec's field list ("1,3-5"), as key_fields_parse reads it;
 * KEY_FIELDS_TEXT bytes always hold it. */
#define KEY_FIELDS_TEXT (KEY_MAX_FIELDS * 8 + 8)
void key_fields_format(const key_spec *spec, char *out, size_t size);

/* Field `field` (1-based) of a line; a line with fewer fields gives the empty field, as
 * awk's $N. */
void key_field(const key_spec *spec, unsigned field, const char *line, size_t len,
               const char **out, size_t *out_len);

/* Storage for the keys that are not a slice of their line (joined fields, folded case),
 * kept valid until key_arena_reset: a batch of keys refers to it until the filter has
 * answered them. */
typedef struct key_arena_block key_arena_block;
typedef struct key_arena {
    key_arena_block *blocks;
    size_t total; /* bytes used over all blocks since the last reset */
} key_arena;

void key_arena_reset(key_arena *arena);
void key_arena_free(key_arena *arena);

/* The key of a line into key->data and key->len (a slice of the line, or bytes in the
 * arena).  Returns 0, or -1 when the arena cannot grow (out of memory). */
int key_of_line(const key_spec *spec, const char *line, size_t len, key_arena *arena,
                once_key *key);

#endif
