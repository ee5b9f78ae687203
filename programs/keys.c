/*
 * keys.c - the key of a line.  See keys.h.
 *
 * A key that is one field, or the whole line, is a slice of the line: no copy.  A key
 * of several fields is the fields joined by the delimiter (a single space with
 * whitespace splitting); since no field contains the separator, different field tuples
 * give different keys.  Folded keys are copies too.  Copies live in an arena of blocks
 * that never move, so the keys of a batch stay valid while it fills.
 */
#include "keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK_BYTES ((size_t)1 << 16)

struct key_arena_block {
    key_arena_block *next;
    size_t used, capacity;
    char data[];
};

int parse_decimal(const char *text, unsigned long max, const char **end, unsigned long *out)
{
    if (*text < '0' || *text > '9')
        return -1;
    unsigned long v = 0;
    for (; *text >= '0' && *text <= '9'; text++) {
        v = v * 10 + (unsigned long)(*text - '0');
        if (v > max)
            return -1;
    }
    *end = text;
    *out = v;
    return 0;
}

static int parse_field_number(const char *text, const char **end, unsigned *out)
{
    unsigned long v;
    if (parse_decimal(text, KEY_MAX_FIELD, end, &v) != 0 || v == 0)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int compare_unsigned(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

int key_fields_parse(key_spec *spec, const char *text)
{
    unsigned fields[KEY_MAX_FIELDS];
    size_t count = 0;
    const char *p = text;
    for (;;) {
        unsigned first, last;
        if (parse_field_number(p, &p, &first) != 0)
            return -1;
        last = first;
        if (*p == '-' && parse_field_number(p + 1, &p, &last) != 0)
            return -1;
        if (last < first)
            return -1;
        for (unsigned f = first; f <= last; f++) {
            if (count == KEY_MAX_FIELDS)
                return -1;
            fields[count++] = f;
        }
        if (*p == '\0')
            break;
        if (*p++ != ',')
            return -1;
    }
    qsort(fields, count, sizeof fields[0], compare_unsigned);
    size_t distinct = 0;
    for (size_t i = 0; i < count; i++)
        if (distinct == 0 || fields[i] != fields[distinct - 1])
            fields[distinct++] = fields[i];
    memcpy(spec->fields, fields, distinct * sizeof fields[0]);
    spec->field_count = distinct;
    return 0;
}

void key_fields_format(const key_spec *spec, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < spec->field_count; i++) {
        size_t j = i; /* the run of consecutive fields from i */
        while (j + 1 < spec->field_count && spec->fields[j + 1] == spec->fields[j] + 1)
            j++;
        int n;
        if (j - i >= 2) { /* three or more in a row: a range */
            n = snprintf(out + used, size - used, "%s%u-%u", i ? "," : "", spec->fields[i],
                         spec->fields[j]);
            i = j;
        } else {
            n = snprintf(out + used, size - used, "%s%u", i ? "," : "", spec->fields[i]);
        }
        if (n < 0 || (size_t)n >= size - used)
            return; /* truncated: the caller's buffer holds KEY_FIELDS_TEXT bytes */
        used += (size_t)n;
    }
}

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

/* The field starting at or after p: its start, and its end in *field_end. */
static const char *next_field(const key_spec *spec, const char *p, const char *end,
                              const char **field_end)
{
    if (spec->whitespace) {
        while (p < end && blank(*p))
            p++;
        const char *q = p;
        while (q < end && !blank(*q))
            q++;
        *field_end = q;
        return p;
    }
    const char *d = memchr(p, spec->delimiter, (size_t)(end - p));
    *field_end = d ? d : end;
    return p;
}

/* Fields `fields[0 .. count)` (ascending) of a line, in one pass over it; a field past
 * the last is empty, as awk's $N. */
static void collect_fields(const key_spec *spec, const unsigned *fields, size_t count,
                           const char *line, size_t len, const char **starts, size_t *lens)
{
    const char *p = line, *end = line + len;
    size_t j = 0;
    for (unsigned f = 1; j < count; f++) {
        const char *field_end;
        const char *start = next_field(spec, p, end, &field_end);
        if (f == fields[j]) {
            starts[j] = start;
            lens[j] = (size_t)(field_end - start);
            j++;
        }
        if (field_end == end)
            break;
        p = field_end + 1;
    }
    for (; j < count; j++) {
        starts[j] = end;
        lens[j] = 0;
    }
}

void key_field(const key_spec *spec, unsigned field, const char *line, size_t len,
               const char **out, size_t *out_len)
{
    collect_fields(spec, &field, 1, line, len, out, out_len);
}

void key_arena_reset(key_arena *arena)
{
    if (arena->blocks != NULL && arena->blocks->next != NULL) {
        /* The last batch needed several blocks: replace them by one that holds it all,
         * so a steady stream settles on a single block. */
        size_t want = arena->total > ARENA_BLOCK_BYTES ? arena->total : ARENA_BLOCK_BYTES;
        key_arena_free(arena);
        key_arena_block *b = malloc(sizeof *b + want);
        if (b != NULL) {
            b->next = NULL;
            b->used = 0;
            b->capacity = want;
            arena->blocks = b;
        }
    }
    if (arena->blocks != NULL)
        arena->blocks->used = 0;
    arena->total = 0;
}

void key_arena_free(key_arena *arena)
{
    while (arena->blocks != NULL) {
        key_arena_block *next = arena->blocks->next;
        free(arena->blocks);
        arena->blocks = next;
    }
    arena->total = 0;
}

static char *arena_take(key_arena *arena, size_t len)
{
    key_arena_block *b = arena->blocks;
    if (b == NULL || b->capacity - b->used < len) {
        size_t want = len > ARENA_BLOCK_BYTES ? len : ARENA_BLOCK_BYTES;
        key_arena_block *nb = malloc(sizeof *nb + want);
        if (nb == NULL)
            return NULL;
        nb->next = b;
        nb->used = 0;
        nb->capacity = want;
        arena->blocks = b = nb;
    }
    char *p = b->data + b->used;
    b->used += len;
    arena->total += len;
    return p;
}

int key_of_line(const key_spec *spec, const char *line, size_t len, key_arena *arena,
                once_key *key)
{
    if (spec->strip_cr && len > 0 && line[len - 1] == '\r')
        len--;
    const char *data = line;
    size_t key_len = len;
    bool copied = false; /* data is in the arena, ours to change */
    if (spec->field_count == 1) {
        key_field(spec, spec->fields[0], line, len, &data, &key_len);
    } else if (spec->field_count > 1) {
        /* Joined: first the length, then the bytes. */
        const char *starts[KEY_MAX_FIELDS];
        size_t lens[KEY_MAX_FIELDS];
        collect_fields(spec, spec->fields, spec->field_count, line, len, starts, lens);
        key_len = spec->field_count - 1;
        for (size_t i = 0; i < spec->field_count; i++)
            key_len += lens[i];
        char *joined = arena_take(arena, key_len ? key_len : 1);
        if (joined == NULL)
            return -1;
        char separator = spec->whitespace ? ' ' : spec->delimiter;
        size_t at = 0;
        for (size_t i = 0; i < spec->field_count; i++) {
            if (i > 0)
                joined[at++] = separator;
            memcpy(joined + at, starts[i], lens[i]);
            at += lens[i];
        }
        data = joined;
        copied = true;
    }
    if (spec->ignore_case) {
        char *folded = NULL;
        for (size_t i = 0; i < key_len; i++) {
            char c = data[i];
            if (c >= 'A' && c <= 'Z') {
                if (folded == NULL) { /* copy only keys that have an upper-case letter */
                    if (copied) {
                        folded = (char *)data;
                    } else {
                        folded = arena_take(arena, key_len);
                        if (folded == NULL)
                            return -1;
                        memcpy(folded, data, key_len);
                    }
                }
                folded[i] = (char)(c - 'A' + 'a');
            }
        }
        if (folded != NULL)
            data = folded;
    }
    key->data = data;
    key->len = key_len;
    return 0;
}
