/*
 * card.c - `once card`: the number of distinct keys, estimated from a filter's cells
 * (paper 002, section 5) with an interval that holds with probability --confidence.
 *
 * Over a stream the command runs the same filter `once` would and prints one estimate
 * at the end; over the saved filters named by --state it prints one estimate per file
 * and changes nothing.  State files are named, never guessed from their first bytes,
 * so a text file is always a stream, whatever it starts with.  The estimate counts
 * distinct keys, which is what `items` cannot do once filters were merged or keys
 * were added twice.  A structure without an estimator reports its item count alone.
 */
#include "card.h"

#include "state.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A JSON string: quotes, backslashes and control bytes escaped; other bytes as-is. */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

int card_print(const cli_options *o, const char *name, const once_filter *filter)
{
    once_cardinality c;
    /* Time 0: windows clamp it to the latest event they saw, so a window is counted as
     * of its last event, whether the run was live or replayed history. */
    once_status st = once_estimate_cardinality(filter, 0, o->confidence, &c);
    if (st != ONCE_OK && st != ONCE_ERR_UNSUPPORTED) {
        fprintf(stderr, "once card: %s: %s\n", name, once_strerror(st));
        return EXIT_IO;
    }
    bool known = st == ONCE_OK;
    const char *structure = once_type_name(once_get_type(filter));
    unsigned long long items = (unsigned long long)once_items(filter);
    if (o->json) {
        fputs("{\"name\":", stdout);
        json_string(stdout, name);
        if (known) {
            printf(",\"estimate\":%.0f,\"low\":%.0f,\"high\":", c.estimate, c.low);
            if (isfinite(c.high))
                printf("%.0f", c.high);
            else
                fputs("null", stdout);
        } else {
            fputs(",\"estimate\":null,\"low\":null,\"high\":null", stdout);
        }
        printf(",\"confidence\":%g,\"structure\":\"%s\",\"items\":%llu}\n", o->confidence,
               structure, items);
    } else if (known && isfinite(c.high)) {
        printf("%s: %.0f distinct keys (%g%% interval %.0f-%.0f; %llu added, %s filter)\n", name,
               c.estimate, 100 * o->confidence, c.low, c.high, items, structure);
    } else if (known) {
        printf("%s: at least %.0f distinct keys (the filter is saturated; %llu added, %s "
               "filter)\n",
               name, c.low, items, structure);
    } else {
        printf("%s: %llu keys added (the %s filter has no distinct-key estimate)\n", name, items,
               structure);
    }
    return ferror(stdout) ? EXIT_IO : 0;
}

int card_states(const cli_options *o)
{
    int code = 0;
    for (size_t i = 0; i < o->state_count; i++) {
        const char *path = o->state_paths[i];
        once_filter *f = NULL;
        state_result r = state_load(path, &f, NULL);
        if (r == STATE_ABSENT) /* to `once` a new state; here there is nothing to count */
            fprintf(stderr, "once: cannot open state file '%s': %s\n", path, strerror(ENOENT));
        if (r != STATE_LOADED) {
            code = EXIT_IO; /* state_load said why otherwise */
            continue;
        }
        int c = card_print(o, path, f);
        if (c != 0)
            code = c;
        once_free(f);
    }
    if (fflush(stdout) != 0)
        code = EXIT_IO;
    return code;
}
