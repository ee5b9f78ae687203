/*
 * options.c - parse and validate the command line.  Every value is checked here, so
 * the rest of the program can trust the struct.
 *
 * The options are one table, `options` below: each row is an option's long name,
 * short name, argument, the function that parses its value into cli_options, the
 * --help section it is listed in and its help text.  getopt_long's list, its short
 * option string, the parse and --help are all made from the table, so an option
 * cannot be accepted without its help nor helped without being accepted.  A row
 * without a function is a second help entry of an option parsed by another row
 * (--threads means one thing with --slicing and another without).
 *
 * The table's order is getopt_long's, which is the order an ambiguous prefix lists
 * its candidates in; --help prints the sections in their order and, within one, the
 * rows in table order.  The values are checked one by one as they come (a bad value
 * is refused with the option that gave it); how they combine is checked after the
 * last one (check_combinations and the checks it calls).
 */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every structure that takes keys (a slice takes positions from a remote producer). */
static bool any_structure(const once_structure *s)
{
    return s->kind != ONCE_KIND_SLICE;
}

/* Every --state, in order.  Kept for the whole run, like argv; a static, so the list
 * stays reachable and is never reported as a leak. */
static const char **state_list;

/* The last refusal's sentence (options_error), for the front end to show. */
static char refusal[1024];

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(refusal, sizeof refusal, fmt, args);
    va_end(args);
    return EXIT_USAGE;
}

const char *options_error(void)
{
    return refusal;
}

/* Is `val` the value of a long option that takes no value?  Such an option given one
 * ("--help=x") is reported by getopt_long as '?' with optopt set to its value. */
static bool takes_no_value(const struct option *longs, int val)
{
    for (const struct option *l = longs; l->name; l++)
        if (l->val == val && l->has_arg == no_argument)
            return true;
    return false;
}

/* Report an option getopt_long refused (it prints nothing itself: opterr is 0), naming
 * the option as it was typed.  getopt_long answers ':' for a missing value and '?' for
 * the rest: an unknown option, an ambiguous prefix of several long options, and a long
 * option given a value it does not take.  A long option is always consumed, so it is
 * argv[optind - 1]; a short one may sit inside a group ("-x2" leaves optind on that
 * element), so only optopt names it.  An unknown or ambiguous long option has optopt
 * 0, and `longs` (the one list of options) tells which of the two it is. */
static int option_error(int c, char **argv, const struct option *longs)
{
    bool long_option;
    if (c == ':') /* a short option misses its value only at the end of argv */
        long_option = strncmp(argv[optind - 1], "--", 2) == 0;
    else
        long_option = optopt == 0 || takes_no_value(longs, optopt);
    if (!long_option) {
        unsigned char ch = (unsigned char)optopt;
        if (!isprint(ch)) /* a stray byte, shown as an escape rather than raw */
            return fail("unknown option '-\\x%02x'", ch);
        return fail(c == ':' ? "option '-%c' needs a value" : "unknown option '-%c'", ch);
    }
    const char *typed = argv[optind - 1];
    const char *name = typed + 2;
    int name_len = (int)strcspn(name, "=");
    if (c == ':')
        return fail("option '%s' needs a value", typed);
    if (optopt != 0)
        return fail("option '--%.*s' takes no value", name_len, name);
    char candidates[1024] = "";
    size_t used = 0;
    int matches = 0;
    for (const struct option *l = longs; l->name && name_len > 0; l++) {
        if (strncmp(l->name, name, (size_t)name_len) != 0)
            continue;
        int n = snprintf(candidates + used, sizeof candidates - used, "%s--%s",
                         matches ? ", " : "", l->name);
        if (n > 0 && (size_t)n < sizeof candidates - used)
            used += (size_t)n;
        matches++;
    }
    if (matches > 1)
        return fail("option '--%.*s' is ambiguous: %s", name_len, name, candidates);
    return fail("unknown option '--%.*s'", name_len, name);
}

/* The names of the structures `keep` accepts, as "a, b or c", in registry order. */
static const char *structure_names(bool (*keep)(const once_structure *), char *out, size_t size)
{
    size_t n = 0, total = 0, used = 0;
    for (size_t i = 0; i < once_structure_count(); i++)
        total += keep(once_structure_at(i));
    out[0] = '\0';
    for (size_t i = 0; i < once_structure_count() && used < size; i++) {
        const once_structure *s = once_structure_at(i);
        if (!keep(s))
            continue;
        n++;
        int w = snprintf(out + used, size - used, "%s%s", n == 1 ? "" : n == total ? " or " : ", ",
                         s->name);
        used += w > 0 ? (size_t)w : 0;
    }
    return out;
}

static bool count_window(const once_structure *s)
{
    return s->kind == ONCE_KIND_COUNT_WINDOW;
}
static bool time_window(const once_structure *s)
{
    return s->kind == ONCE_KIND_TIME_WINDOW;
}
static bool capped_growth(const once_structure *s)
{
    return s->memory_cap && s->kind == ONCE_KIND_GROWING;
}

/* A positive integer with an optional k/M/G suffix (powers of ten). */
static int parse_count(const char *text, uint64_t *out)
{
    if (text == NULL || *text == '\0' || *text == '-')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || end == text)
        return -1;
    uint64_t scale = 1;
    if (*end == 'k' || *end == 'K')
        scale = 1000, end++;
    else if (*end == 'M')
        scale = 1000000, end++;
    else if (*end == 'G')
        scale = 1000000000, end++;
    if (*end != '\0' || v == 0 || v > UINT64_MAX / scale)
        return -1;
    *out = (uint64_t)v * scale;
    return 0;
}

static int parse_u64(const char *text, uint64_t *out)
{
    if (text == NULL || *text == '\0' || *text == '-')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0')
        return -1;
    *out = (uint64_t)v;
    return 0;
}

/* "S" or, for diced slicing, "SxP": slices, and parts of each (0 when not given). */
static int parse_slices(const char *text, uint32_t *slices, uint32_t *parts)
{
    char first[32];
    const char *x = strchr(text, 'x');
    size_t len = x ? (size_t)(x - text) : strlen(text);
    uint64_t s = 0, p = 0;
    if (len == 0 || len >= sizeof first)
        return -1;
    memcpy(first, text, len);
    first[len] = '\0';
    if (!isdigit((unsigned char)first[0]) || parse_u64(first, &s) != 0 || s == 0 ||
        s > ONCE_MAX_SLICED_SITES)
        return -1;
    if (x != NULL && (!isdigit((unsigned char)x[1]) || parse_u64(x + 1, &p) != 0 || p == 0 ||
                      p > ONCE_MAX_SLICED_SITES))
        return -1;
    *slices = (uint32_t)s;
    *parts = (uint32_t)p;
    return 0;
}

/* The sliced filter's options, together and against the rest. */
static int check_slicing(cli_options *o, bool slices_given, bool dicing_given, bool diced,
                         once_slicing dicing, bool growth_given)
{
    if (!o->sliced)
        return fail("%s", "--slices, --dicing and --slice-growth shape a sliced filter: add "
                          "--slicing horizontal, vertical or diced");
    if (growth_given && !o->span_given)
        return fail("%s", "--slice-growth is how a sliced time window grows: add --span (a "
                          "count window is sized for its N keys and never grows)");
    if (o->bounded_growth && o->threads != 0)
        return fail("%s", "--slice-growth bounded opens its generations between events, in "
                          "the reading thread: drop --threads");
    if (!slices_given)
        return fail("%s", "--slicing needs --slices S (SxP for diced slicing)");
    if (diced) {
        o->slicing = dicing;
        if (o->parts == 0)
            return fail("%s", "--slicing diced needs --slices SxP (S slices of P parts)");
        if ((uint64_t)o->slices * o->parts > ONCE_MAX_SLICED_SITES)
            return fail("--slices %ux%u: at most %u sites in all", o->slices, o->parts,
                        ONCE_MAX_SLICED_SITES);
    } else if (dicing_given) {
        return fail("%s", "--dicing applies to --slicing diced");
    } else if (o->parts != 0) {
        return fail("%s", "--slices SxP applies to --slicing diced: give a number of slices");
    }
    if (o->type_given && o->type != ONCE_STANDARD)
        return fail("--slicing slices a standard filter: drop --filter %s",
                    once_type_name(o->type));
    if (o->state_count > 0)
        return fail("%s", "--slicing has no saved form: drop --state");
    if (o->card)
        return fail("%s", "`once card` estimates from a filter's cells, which a sliced filter "
                          "keeps on its sites: drop --slicing");
    if (o->max_memory && !o->span_given)
        return fail("%s", "--max-memory caps a sliced filter that grows, with --span; without it "
                          "the slices keep the size of --capacity and --error (of N keys with "
                          "--window N)");
    if (o->level_given)
        return fail("%s", "--level lays out the slices of a window filter; a sliced filter's "
                          "windows are timers: drop --level");
    o->type = ONCE_STANDARD;
    o->type_given = true;
    return 0;
}

/* --cluster and its options, together and against the rest (then check_slicing). */
static int check_cluster(cli_options *o, bool threads_given, bool growth_given, bool leaf_given)
{
    if (o->cluster == NULL)
        return fail("%s", "--key, --on-failed-slice, --local-filter, --wait and "
                          "--failover-hold apply to a filter over a cluster: add --cluster "
                          "HOST:PORT");
    if (o->cluster_key == NULL || o->cluster_key[0] == '\0')
        return fail("%s", "--cluster needs --key NAME, the filter's name in the cluster");
    if (leaf_given && o->tree_levels == 0)
        return fail("%s", "--leaf is this run's leaf of a Bloom tree: add --tree LxF");
    if (o->tree_levels == 0 && !o->sliced && !o->whole)
        return fail("%s", "--cluster needs whole slices, --slicing horizontal, vertical or diced, "
                          "or --tree LxF");
    /* A sliced filter and a tree alike. */
    if (threads_given)
        return fail("%s", "--cluster: the cluster's nodes answer for the slices: drop --threads");
    if (growth_given)
        return fail("%s", "--cluster: the slices keep their size: drop --slice-growth");
    if (o->state_count > 0)
        return fail("%s", "--cluster: the filter is kept in the cluster under --key, not in a "
                          "file: drop --state");
    if (o->max_memory)
        return fail("%s", "--cluster: the slices keep the size of --capacity and --error: drop "
                          "--max-memory");
    if (o->tree_levels != 0) {
        if (o->sliced)
            return fail("%s", "--tree is a Bloom tree over the cluster, --slicing a sliced filter: "
                              "give one");
        if (o->window_given)
            return fail("%s", "--tree keeps time windows (--span) over a cluster, not count "
                              "windows: drop --window");
        if (o->local_filter || o->wait)
            return fail("%s", "--tree: the leaf is this run's local filter, and a tree does not "
                              "WAIT: drop --local-filter and --wait");
        uint64_t leaves = 1;
        for (uint32_t l = 1; l < o->tree_levels && leaves <= o->leaf; l++)
            leaves *= o->tree_fanout;
        if (o->leaf >= leaves)
            return fail("--leaf %llu: the tree has %llu leaves (0 to %llu)",
                        (unsigned long long)o->leaf, (unsigned long long)leaves,
                        (unsigned long long)(leaves - 1));
        o->type = ONCE_STANDARD;
        o->type_given = true;
        return 0;
    }
    if (o->window_given && o->local_filter)
        return fail("%s", "--window over a cluster counts the deliveries of every producer, a "
                          "local filter this run's alone: drop --local-filter");
    return 0;
}

once_type cli_time_window_type(const cli_options *o)
{
    return o->level_given ? ONCE_TLBF : ONCE_TAGGED;
}

/* What the parse keeps besides the options: which were given, for the checks of how
 * they combine. */
typedef struct parse_state {
    cli_options *o;
    int argc;
    bool bad_time_given, time_jump_given, confidence_given;
    bool slices_given, dicing_given, threads_given, diced;
    bool growth_given, cluster_options_given, leaf_given;
    once_slicing dicing;
} parse_state;

static void usage(FILE *out);

/* The place of `arg` among `count` words (-1: none), for an option that takes one of
 * them (their places are the enum's values). */
static int word_of(const char *arg, const char *const *words, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(arg, words[i]) == 0)
            return i;
    return -1;
}

/* The options' values, one function an option: 0 to go on, -1 to exit 0 (--help,
 * --version, printed), or EXIT_USAGE after printing why. */
static int set_field(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (key_fields_parse(&o->key, arg) != 0)
        return fail("invalid field list '%s' (field numbers from 1, e.g. 2, 1,3 or 2-4; "
                    "at most 64 fields)",
                    arg);
    return 0;
}

static int set_delimiter(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (strcmp(arg, "\\t") == 0)
        o->key.delimiter = '\t';
    else if (strlen(arg) == 1)
        o->key.delimiter = arg[0];
    else
        return fail("the delimiter must be a single byte, not '%s'", arg);
    if (o->key.whitespace)
        return fail("%s", "-t and --ws exclude each other (one way to split fields)");
    o->split_given = true;
    return 0;
}

static int set_ws(parse_state *p, const char *arg)
{
    (void)arg;
    cli_options *o = p->o;
    if (o->split_given && !o->key.whitespace)
        return fail("%s", "-t and --ws exclude each other (one way to split fields)");
    o->key.whitespace = true;
    o->split_given = true;
    return 0;
}

static int set_ignore_case(parse_state *p, const char *arg)
{
    (void)arg;
    cli_options *o = p->o;
    o->key.ignore_case = true;
    return 0;
}

static int set_duplicates(parse_state *p, const char *arg)
{
    (void)arg;
    cli_options *o = p->o;
    o->print_duplicates = true;
    return 0;
}

static int set_zero_terminated(parse_state *p, const char *arg)
{
    (void)arg;
    cli_options *o = p->o;
    o->terminator = '\0';
    return 0;
}

static int set_capacity(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (parse_count(arg, &o->capacity) != 0)
        return fail("invalid capacity '%s' (a positive integer, e.g. 1000000 or 10M)",
                    arg);
    o->capacity_given = true;
    return 0;
}

static int set_error(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    char *end = NULL;
    errno = 0;
    double rate = strtod(arg, &end);
    if (errno == ERANGE && rate == 0.0) /* underflow: a positive number below any range */
        errno = 0;
    if (errno != 0 || end == arg || *end != '\0' || !once_error_in_range(rate))
        return fail("invalid error rate '%s': a target rate is at least %g and below 1 "
                    "(e.g. 0.001)",
                    arg, ONCE_MIN_ERROR);
    o->error = rate;
    o->error_given = true;
    return 0;
}

static int set_filter(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    char names[256]; /* a list of structure names for a message */
    if (once_type_from_name(arg, &o->type) != ONCE_OK ||
        !any_structure(once_structure_of(o->type)))
        return fail("unknown filter '%s' (%s)", arg,
                    structure_names(any_structure, names, sizeof names));
    o->type_given = true;
    return 0;
}

static int set_seed(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (parse_u64(arg, &o->seed) != 0)
        return fail("invalid seed '%s' (a 64-bit integer, decimal or 0x hex)", arg);
    o->seed_given = true;
    return 0;
}

static int set_state(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (*arg == '\0')
        return fail("%s", "--state needs a file name");
    if (o->state_count > 0 && !o->card)
        return fail("%s", "--state given twice: a run keeps one state file (`once card` "
                          "estimates several)");
    if (state_list == NULL) {
        state_list = calloc((size_t)p->argc, sizeof *state_list); /* argc bounds them */
        if (state_list == NULL)
            return fail("%s", "out of memory");
    }
    state_list[o->state_count++] = arg;
    o->state_paths = state_list;
    o->state_path = state_list[0];
    return 0;
}

static int set_stats(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (arg == NULL || strcmp(arg, "human") == 0)
        o->stats = STATS_HUMAN;
    else if (strcmp(arg, "json") == 0)
        o->stats = STATS_JSON;
    else
        return fail("unknown stats format '%s' (human or json)", arg);
    return 0;
}

static int set_progress(parse_state *p, const char *arg)
{
    (void)arg;
    cli_options *o = p->o;
    o->progress = PROGRESS_ON;
    return 0;
}

static int set_no_progress(parse_state *p, const char *arg)
{
    (void)arg;
    cli_options *o = p->o;
    o->progress = PROGRESS_OFF;
    return 0;
}

static int set_window(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (parse_count(arg, &o->window) != 0)
        return fail("invalid window '%s' (a positive number of keys, e.g. 100000 or 1M)",
                    arg);
    o->window_given = true;
    return 0;
}

static int set_level(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    uint64_t v;
    if (parse_u64(arg, &v) != 0 || v > 8)
        return fail("invalid level '%s' (0 to 8)", arg);
    o->level = (uint32_t)v;
    o->level_given = true;
    return 0;
}

static int set_refresh(parse_state *p, const char *arg)
{
    (void)arg;
    cli_options *o = p->o;
    o->refresh = true;
    return 0;
}

static int set_span(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (parse_duration_ms(arg, &o->span_ms) != 0)
        return fail("invalid span '%s' (a duration such as 90s, 1h30m, 1.5h or 7d, "
                    "in whole milliseconds)",
                    arg);
    o->span_given = true;
    return 0;
}

static int set_lag(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (strcmp(arg, "0") == 0)
        o->lag_ms = 0;
    else if (parse_duration_ms(arg, &o->lag_ms) != 0)
        return fail("invalid lag '%s' (a duration as for --span, or 0 for none)", arg);
    o->lag_given = true;
    return 0;
}

static int set_time_field(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    uint64_t v;
    if (parse_u64(arg, &v) != 0 || v == 0 || v > KEY_MAX_FIELD)
        return fail("invalid time field '%s' (fields count from 1)", arg);
    o->time_field = (unsigned)v;
    return 0;
}

static int set_time_format(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    static const char *const formats[] = {"epoch", "epoch_ms", "iso8601"}; /* time_format */
    o->time_format_given = true;
    int i = word_of(arg, formats, 3);
    if (i < 0)
        return fail("unknown time format '%s' (epoch, epoch_ms or iso8601)", arg);
    o->time_format = (time_format)i;
    return 0;
}

static int set_on_bad_time(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    static const char *const actions[] = {"fail", "skip", "keep"}; /* bad_time_policy */
    p->bad_time_given = true;
    int i = word_of(arg, actions, 3);
    if (i < 0)
        return fail("unknown --on-bad-time action '%s' (fail, skip or keep)", arg);
    o->on_bad_time = (bad_time_policy)i;
    return 0;
}

int options_time_jump(const char *arg, uint64_t *ms)
{
    refusal[0] = '\0';
    if (strcmp(arg, "0") == 0)
        *ms = 0;
    else if (parse_duration_ms(arg, ms) != 0 || *ms > ONCE_MAX_TIME_MS)
        return fail("invalid time jump '%s' (a duration such as 6h, 1h30m or 2d, or 0 for "
                    "no bound)",
                    arg);
    return 0;
}

static int set_max_time_jump(parse_state *p, const char *arg)
{
    p->time_jump_given = true;
    return options_time_jump(arg, &p->o->max_time_jump_ms);
}

static int set_max_memory(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    uint64_t scale = 1;
    if (end && (*end == 'k' || *end == 'K'))
        scale = 1024, end++;
    else if (end && *end == 'M')
        scale = 1024 * 1024, end++;
    else if (end && *end == 'G')
        scale = 1024 * 1024 * 1024, end++;
    if (errno || end == arg || *arg == '-' || *end != '\0' || v == 0 ||
        v > UINT64_MAX / scale)
        return fail("invalid memory size '%s' (bytes, or with K, M, G)", arg);
    o->max_memory = (uint64_t)v * scale;
    return 0;
}

static int set_confidence(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    char *end = NULL;
    errno = 0;
    double level = strtod(arg, &end);
    if (errno != 0 || end == arg || *end != '\0' || !(level > 0.0 && level < 1.0))
        return fail("invalid confidence '%s' (a probability between 0 and 1, e.g. 0.9)",
                    arg);
    o->confidence = level;
    p->confidence_given = true;
    return 0;
}

static int set_json(parse_state *p, const char *arg)
{
    (void)arg;
    cli_options *o = p->o;
    o->json = true;
    return 0;
}

static int set_slicing(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    o->sliced = true;
    p->diced = strcmp(arg, "diced") == 0;
    if (strcmp(arg, "horizontal") == 0)
        o->slicing = ONCE_SLICING_HORIZONTAL;
    else if (strcmp(arg, "vertical") == 0)
        o->slicing = ONCE_SLICING_VERTICAL;
    else if (!p->diced)
        return fail("unknown slicing '%s' (horizontal, vertical or diced)", arg);
    return 0;
}

static int set_slices(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (parse_slices(arg, &o->slices, &o->parts) != 0)
        return fail("invalid slices '%s' (a number of slices from 1 to %u, or SxP for "
                    "diced slicing, e.g. 4x2)",
                    arg, ONCE_MAX_SLICED_SITES);
    p->slices_given = true;
    return 0;
}

static int set_dicing(parse_state *p, const char *arg)
{
    static const char *const dicings[] = {"h-v", "v-h"};
    int i = word_of(arg, dicings, 2);
    if (i < 0)
        return fail("unknown dicing '%s' (h-v or v-h)", arg);
    p->dicing = i == 0 ? ONCE_SLICING_DICED_HV : ONCE_SLICING_DICED_VH;
    p->dicing_given = true;
    return 0;
}

static int set_slice_growth(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    static const char *const growths[] = {"per-site", "bounded"};
    int i = word_of(arg, growths, 2);
    if (i < 0)
        return fail("unknown slice growth '%s' (per-site or bounded)", arg);
    if (i == 1) /* per-site leaves it as it was, as a repeated option does */
        o->bounded_growth = true;
    p->growth_given = true;
    return 0;
}

static int set_threads(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    uint64_t v;
    if (parse_u64(arg, &v) != 0 || v == 0 || v > ONCE_MAX_SITE_THREADS)
        return fail("invalid threads '%s' (1 to %u)", arg, ONCE_MAX_SITE_THREADS);
    o->threads = (uint32_t)v;
    p->threads_given = true;
    return 0;
}

static int set_shards(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    uint64_t v;
    if (parse_u64(arg, &v) != 0 || v == 0 || v > ONCE_MAX_SHARDS)
        return fail("invalid shards '%s' (1 to %u)", arg, ONCE_MAX_SHARDS);
    o->shards = (uint32_t)v;
    o->shards_given = true;
    return 0;
}

static int set_cluster(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    o->cluster = arg;
    return 0;
}

static int set_key(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    o->cluster_key = arg;
    return 0;
}

static int set_on_failed_slice(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    uint64_t x = 0;
    if (strcmp(arg, "distinct") == 0)
        o->on_failed_slice = FAILED_SLICE_DISTINCT;
    else if (strcmp(arg, "duplicate") == 0)
        o->on_failed_slice = FAILED_SLICE_DUPLICATE;
    else if (strncmp(arg, "threshold:", 10) == 0 && isdigit((unsigned char)arg[10]) &&
             parse_u64(arg + 10, &x) == 0 && x <= 64) {
        o->on_failed_slice = FAILED_SLICE_THRESHOLD;
        o->failed_slice_threshold = (uint32_t)x;
    } else if (strncmp(arg, "threshold:", 10) == 0)
        return fail("invalid --on-failed-slice '%s' (threshold:X, X from 0 to k, the "
                    "filter's number of hashes, at most 64)",
                    arg);
    else
        return fail("unknown --on-failed-slice policy '%s' (distinct, duplicate or "
                    "threshold:X)",
                    arg);
    p->cluster_options_given = true;
    return 0;
}

static int set_local_filter(parse_state *p, const char *arg)
{
    (void)arg;
    cli_options *o = p->o;
    o->local_filter = true;
    p->cluster_options_given = true;
    return 0;
}

static int set_wait(parse_state *p, const char *arg)
{
    (void)arg;
    cli_options *o = p->o;
    o->wait = true;
    p->cluster_options_given = true;
    return 0;
}

/* The longest hold: a producer blocked a day for one failover is a stopped one. */
#define FAILOVER_HOLD_MAX_MS (24u * 3600u * 1000u)

static int set_failover_hold(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (strcmp(arg, "0") == 0)
        o->failover_hold_ms = 0;
    else if (parse_duration_ms(arg, &o->failover_hold_ms) != 0 ||
             o->failover_hold_ms > FAILOVER_HOLD_MAX_MS)
        return fail("invalid failover hold '%s' (a duration such as 15s or 1m, at most 1d, "
                    "or 0 for no hold)",
                    arg);
    o->failover_hold_given = true;
    p->cluster_options_given = true;
    return 0;
}

static int set_tree(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    uint32_t levels = 0, fanout = 0;
    if (parse_slices(arg, &levels, &fanout) != 0 || levels < 2 || levels > 16 ||
        fanout == 0)
        return fail("invalid tree '%s' (LxF: L levels from 2 to 16, F children a node, "
                    "e.g. 3x4)",
                    arg);
    o->tree_levels = levels;
    o->tree_fanout = fanout;
    p->cluster_options_given = true;
    return 0;
}

static int set_leaf(parse_state *p, const char *arg)
{
    cli_options *o = p->o;
    if (parse_u64(arg, &o->leaf) != 0)
        return fail("invalid leaf '%s' (a number from 0)", arg);
    p->leaf_given = true;
    p->cluster_options_given = true;
    return 0;
}

static int set_help(parse_state *p, const char *arg)
{
    (void)arg;
    (void)p;
    usage(stdout);
    return -1;
}

static int set_version(parse_state *p, const char *arg)
{
    (void)arg;
    (void)p;
    printf("once %s\n", once_version());
    return -1;
}

/* --help's sections, in order. */
typedef enum help_section {
    SECTION_KEY,
    SECTION_FILTER,
    SECTION_SLICED,
    SECTION_CLUSTER,
    SECTION_WINDOW,
    SECTION_STATE,
    SECTION_OUTPUT,
    SECTIONS
} help_section;

static const char *const section_heading[SECTIONS] = {
    "Key:",
    "Filter:",
    "Sliced filter (one standard filter spread over sites, here threads):",
    "Over a Redis Cluster (one filter, its slices keys of the cluster, shared by\nevery once on the same --key; docs/CLUSTER.md):",
    "Window:",
    "State:",
    "Output:",
};

typedef struct cli_option {
    const char *name; /* --name */
    char short_name;  /* -c, or 0 */
    int has_arg;      /* as getopt_long's */
    const char *arg;  /* what --help shows after the name: " N", "[=FORMAT]", NULL */
    int (*set)(parse_state *p, const char *arg); /* NULL: a second help entry */
    help_section section;
    const char *help; /* its lines, the first beside the name */
} cli_option;

static const cli_option options[] = {
    {"field", 'f', required_argument, " LIST", set_field, SECTION_KEY,
         "use these fields as the key instead of the whole line:\n"
         "N, or a list such as 1,3 or 2-4 (joined by the\n"
         "delimiter); fields count from 1, a missing field is\n"
         "empty"},
    {"delimiter", 't', required_argument, " C", set_delimiter, SECTION_KEY,
         "field delimiter (one byte; default: tab)"},
    {"ws", 0, no_argument, NULL, set_ws, SECTION_KEY,
         "fields are separated by runs of spaces and tabs, and\n"
         "blanks at the ends of a line are ignored (awk's\n"
         "default)"},
    {"ignore-case", 'i', no_argument, NULL, set_ignore_case, SECTION_KEY,
         "keys that differ only in ASCII letter case are the same"},
    {"duplicates", 'D', no_argument, NULL, set_duplicates, SECTION_OUTPUT,
         "print only the lines whose key was seen before"},
    {"zero-terminated", 'z', no_argument, NULL, set_zero_terminated, SECTION_OUTPUT,
         "lines end with NUL, not newline, on input and output (a\n"
         "CR before the NUL is part of the key)"},
    {"capacity", 0, required_argument, " N", set_capacity, SECTION_FILTER,
         "expected number of distinct keys: a fixed-size blocked\n"
         "filter (suffixes k, M, G multiply by 10^3, 10^6, 10^9);\n"
         "without it a scalable filter starts at 1000000 keys, or\n"
         "about the lines of the input files, and grows, keeping\n"
         "the error target at any size"},
    {"error", 0, required_argument, " P", set_error, SECTION_FILTER,
         "target false-positive rate (default 0.001); of each row\n"
         "of dbf and each batch of dbpbf, whose rates add up once\n"
         "a second opens (a warning says when)"},
    {"filter", 0, required_argument, " NAME", set_filter, SECTION_FILTER,
         "the structure, one of \"Filters\" below (default\n"
         "scalable, or blocked with --capacity, apbf with\n"
         "--window, tagged with --span, tlbf with --span and\n"
         "--level)"},
    {"seed", 0, required_argument, " S", set_seed, SECTION_FILTER,
         "hash seed (decimal or 0x hex; default random)"},
    {"state", 0, required_argument, " FILE", set_state, SECTION_STATE,
         "load the filter from FILE if it exists, save it there\n"
         "at the end and on SIGINT/SIGTERM/SIGHUP (atomically).\n"
         "The file keeps the options that shape keys and the\n"
         "window (-f, -t, --ws, -i, --level, --refresh, the time\n"
         "source): a resumed run uses them; contradicting one is\n"
         "exit 1. The run locks FILE (flock on FILE.lock) until\n"
         "it has saved: another run on FILE is refused at once\n"
         "with exit 2. FILE's directory must take new files; that\n"
         "is checked before any input is read.  once card: a\n"
         "saved filter to estimate (repeatable; read as last\n"
         "saved, without a lock)"},
    {"stats", 0, optional_argument, "[=FORMAT]", set_stats, SECTION_OUTPUT,
         "summary on stderr at the end: human (default) or json;\n"
         "with the threads and where the time went"},
    {"window", 0, required_argument, " N", set_window, SECTION_WINDOW,
         "forget keys older than the last N delivered keys (count\n"
         "window; suffixes k, M, G); --error is then the target\n"
         "rate for keys that left the window"},
    {"span", 0, required_argument, " DURATION", set_span, SECTION_WINDOW,
         "forget keys delivered more than DURATION ago (time\n"
         "window: 500ms, 90s, 15m, 1h30m, 1.5h, 7d: units ms, s,\n"
         "m, h, d, largest first, in whole milliseconds; a bare\n"
         "number is seconds); a key is forgotten at most a\n"
         "twelfth of DURATION late (--filter tagged, the\n"
         "default; tlbf or timer); --capacity is then a first\n"
         "guess of keys per span"},
    {"lag", 0, required_argument, " DURATION", set_lag, SECTION_WINDOW,
         "with --span (tagged): a line up to DURATION behind the\n"
         "latest time is judged at its own time, for producers\n"
         "that lag each other; at most twice the span (default\n"
         "0: a late line is taken at the latest time; a twelfth\n"
         "of the span with --cluster)"},
    {"time-field", 0, required_argument, " N", set_time_field, SECTION_WINDOW,
         "event time from field N (default: the clock at reading)"},
    {"time-format", 0, required_argument, " F", set_time_format, SECTION_WINDOW,
         "epoch (seconds, default), epoch_ms or iso8601; times\n"
         "are milliseconds since 1970: an earlier one is a bad\n"
         "time"},
    {"on-bad-time", 0, required_argument, " A", set_on_bad_time, SECTION_WINDOW,
         "a line whose time does not parse, is before 1970, or\n"
         "is too far ahead (of the latest time or the wall\n"
         "clock): fail (default, exit 2), skip (drop\n"
         "it) or keep (print it, unfiltered); neither moves the\n"
         "window's clock"},
    {"max-time-jump", 0, required_argument, " D", set_max_time_jump, SECTION_WINDOW,
         "how far past the latest event time, and past the wall\n"
         "clock, a line's time may be\n"
         "(a duration as for --span; default 1d; 0 for no bound);\n"
         "a line past it is a bad time.  Earlier times than the\n"
         "latest are taken as the latest: a late line is a repeat\n"
         "if its key is in the window"},
    {"max-memory", 0, required_argument, " SIZE", set_max_memory, SECTION_WINDOW,
         "cap on the memory of a filter that grows (scalable,\n"
         "dbf, dbpbf) or a time window (e.g. 512M, 4G); past it\n"
         "the run stops with exit 2 (default: none for the\n"
         "filters that grow, 1G for time windows)"},
    {"level", 0, required_argument, " L", set_level, SECTION_WINDOW,
         "window layout: 0 uses the fewest slices; higher levels\n"
         "cut the slack past the window and the memory per key\n"
         "for more memory accesses (default 2, and 0 for apbbf;\n"
         "the timer and tagged filters have no levels, and\n"
         "--span with --level keeps a tlbf)"},
    {"refresh", 0, no_argument, NULL, set_refresh, SECTION_WINDOW,
         "a repeated key restarts its window (default: the window\n"
         "counts from the key's first delivery); with --window N\n"
         "every repeat is inserted again and takes a place, so\n"
         "the window is the last N lines of any key, not the last\n"
         "N delivered keys (a, twenty b, a: prints a b a)"},
    {"slicing", 0, required_argument, " MODE", set_slicing, SECTION_SLICED,
         "horizontal (an event goes to the one slice a hash of it\n"
         "picks), vertical (to the slices of its k bits: decides\n"
         "every line as --filter standard with the same\n"
         "--capacity, --error and --seed) or diced (--slices SxP)"},
    {"slices", 0, required_argument, " S", set_slices, SECTION_SLICED,
         "slices; SxP for diced: S slices of P parts each"},
    {"dicing", 0, required_argument, " D", set_dicing, SECTION_SLICED,
         "diced slicing: h-v (horizontal slices, vertical parts;\n"
         "default) or v-h (vertical slices, horizontal parts)"},
    {"threads", 0, required_argument, " T", NULL, SECTION_SLICED,
         "with --slicing: T threads own the slices and answer for\n"
         "them (default: the reading thread does); --stats adds\n"
         "messages per lookup, the load of each slice, fairness\n"
         "and max load.\n"
         "With --span, every slice keeps timers that expire at\n"
         "each line's time plus the span, and grows alone; with\n"
         "--window N, timers on the count of keys delivered"},
    {"slice-growth", 0, required_argument, " G", set_slice_growth, SECTION_SLICED,
         "with --span: per-site (default: each slice opens a\n"
         "sub-filter when its own is full, paper 000 section 5;\n"
         "a burst can pass --error) or bounded (the whole filter\n"
         "grows in generations and keeps the rate under --error\n"
         "through bursts, for more memory; not with --threads)"},
    {"threads", 0, required_argument, " T", set_threads, SECTION_OUTPUT,
         "T threads on the lines (reading, keys and times,\n"
         "hashing, answering and writing overlap; the answers\n"
         "and writes come in input order): the output is that\n"
         "of one thread, byte for byte, and so is the state"},
    {"shards", 0, required_argument, " P", set_shards, SECTION_OUTPUT,
         "the filter in P shards, each key in one (1 to 256):\n"
         "threads answer different shards side by side (default\n"
         "16 for a time window, fewer under --capacity 16384,\n"
         "else 1)"},
    {"progress", 0, no_argument, NULL, set_progress, SECTION_OUTPUT,
         "progress line on stderr (default: when it is a\n"
         "terminal)"},
    {"no-progress", 0, no_argument, NULL, set_no_progress, SECTION_OUTPUT,
         "never print the progress line"},
    {"confidence", 0, required_argument, " C", set_confidence, SECTION_OUTPUT,
         "once card: probability of the interval (default 0.9)"},
    {"json", 0, no_argument, NULL, set_json, SECTION_OUTPUT,
         "once card: one JSON object per estimate"},
    {"cluster", 0, required_argument, " ADDR", set_cluster, SECTION_CLUSTER,
         "a node of the cluster, host:port (or several, comma\n"
         "separated); needs --key.  Without --slicing: --slices\n"
         "(16) whole slices, each a filter of --filter's kind"},
    {"key", 0, required_argument, " NAME", set_key, SECTION_CLUSTER,
         "the filter's name in the cluster: the first run makes\n"
         "it, later ones must give the same --slicing, --slices,\n"
         "--capacity, --error, --span (and --seed, if given)"},
    {"on-failed-slice", 0, required_argument, " P", set_on_failed_slice, SECTION_CLUSTER,
         "a line with a position in a slice whose node cannot\n"
         "answer: distinct (default: printed), duplicate (not\n"
         "printed), or threshold:X (a repeat when the X or more\n"
         "positions reached are all set)"},
    {"local-filter", 0, no_argument, NULL, set_local_filter, SECTION_CLUSTER,
         "keep a filter of this run's own keys too: its repeats\n"
         "cost no message (paper 000, section 6)"},
    {"wait", 0, no_argument, NULL, set_wait, SECTION_CLUSTER,
         "after each batch, wait for a replica of every node\n"
         "written (WAIT): what a failover could lose is less"},
    {"failover-hold", 0, required_argument, " DURATION", set_failover_hold, SECTION_CLUSTER,
         "hold a failed master's lines\n"
         "while its replica takes over, up to DURATION (default\n"
         "15s; 0: no hold), rather than decide them by\n"
         "--on-failed-slice"},
    {"tree", 0, required_argument, " LxF", set_tree, SECTION_CLUSTER,
         "a Bloom tree instead of --slicing: L levels, F children\n"
         "a node; its internal nodes are keys of the cluster, its\n"
         "leaves the runs' own (paper 000, section 6)"},
    {"leaf", 0, required_argument, " I", set_leaf, SECTION_CLUSTER,
         "this run's leaf of the tree (default 0): repeats of its\n"
         "own keys stop there, with no message"},
    {"help", 'h', no_argument, NULL, set_help, SECTION_OUTPUT,
         "this help"},
    {"version", 'V', no_argument, NULL, set_version, SECTION_OUTPUT,
         "version"},
};

#define OPTION_COUNT (sizeof options / sizeof options[0])
/* getopt_long's value for a long option without a short one: its row, past the bytes. */
#define LONG_ONLY 256

/* The help's columns: the names, then the text from HELP_COLUMN (two spaces past a
 * longer name), its next lines indented to it. */
#define HELP_COLUMN 25

static void usage_option(FILE *out, const cli_option *opt)
{
    char names[64];
    const char *arg = opt->arg ? opt->arg : "";
    int len = opt->short_name
                  ? snprintf(names, sizeof names, "  -%c, --%s%s", opt->short_name, opt->name, arg)
                  : snprintf(names, sizeof names, "      --%s%s", opt->name, arg);
    int pad = len + 2 > HELP_COLUMN ? 2 : HELP_COLUMN - len;
    fprintf(out, "%s%*s", names, pad, "");
    for (const char *line = opt->help; *line;) {
        size_t n = strcspn(line, "\n");
        fprintf(out, "%.*s\n", (int)n, line);
        line += n;
        if (*line == '\n' && *++line)
            fprintf(out, "%*s", HELP_COLUMN, "");
    }
}

static void usage(FILE *out)
{
    fputs("Usage: once [OPTIONS] [FILE...]\n"
          "       once card [OPTIONS] [FILE...]\n"
          "       once card [OPTIONS] --state FILE [--state FILE...]\n"
          "Print each line of the input whose key was not seen before, in input order.\n"
          "With no FILE, or when FILE is -, read standard input.\n"
          "`once card` prints how many distinct keys the input holds instead (estimated\n"
          "from the filter's cells, with an interval).  With --state it prints the\n"
          "estimate of each saved filter named, reads no input and changes nothing.\n"
          "A FILE is always input, whatever its bytes.\n",
          out);
    for (int s = 0; s < SECTIONS; s++) {
        fprintf(out, "\n%s\n", section_heading[s]);
        for (size_t i = 0; i < OPTION_COUNT; i++)
            if (options[i].section == (help_section)s)
                usage_option(out, &options[i]);
    }
    fputs("\n"
          "Exit status: 0 success, 1 usage error, 2 I/O or state error, 128+N after\n"
          "SIGINT, SIGTERM or SIGHUP (N = 2, 15, 1: complete lines already read are\n"
          "finished, the output flushed and the state saved first).  An input that cannot\n"
          "be read (missing, a directory) is reported and the others are still read and\n"
          "written, as cat does; the run then exits 2.  Whatever ends a run, --state is\n"
          "saved as of the last line answered, so a rerun on the rest of the input\n"
          "delivers no line twice; a run that stops early says where, and after a failed\n"
          "write how many lines at most were answered but not written.\n",
          out);
    /* The structures, from the library's registry. */
    fputs("\nFilters (the last N keys: with --window; the last T: with --span):\n", out);
    for (size_t i = 0; i < once_structure_count(); i++) {
        const once_structure *s = once_structure_at(i);
        if (any_structure(s))
            fprintf(out, "  %-12s %s\n", s->name, s->summary);
    }
}

/* getopt_long's list and short option string, from the table (the rows that parse). */
static void getopt_lists(struct option *longs, char *shorts)
{
    size_t n = 0, s = 0;
    shorts[s++] = ':'; /* a missing value is ':', not '?' */
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const cli_option *opt = &options[i];
        if (opt->set == NULL)
            continue;
        int val = opt->short_name ? opt->short_name : LONG_ONLY + (int)i;
        longs[n++] = (struct option){opt->name, opt->has_arg, NULL, val};
        if (opt->short_name) {
            shorts[s++] = opt->short_name;
            if (opt->has_arg == required_argument)
                shorts[s++] = ':';
        }
    }
    longs[n] = (struct option){NULL, 0, NULL, 0};
    shorts[s] = '\0';
}

/* The row getopt_long's answer `c` names (NULL: none). */
static const cli_option *option_of(int c)
{
    if (c >= LONG_ONLY && (size_t)(c - LONG_ONLY) < OPTION_COUNT)
        return &options[c - LONG_ONLY];
    for (size_t i = 0; i < OPTION_COUNT && c > 0; i++)
        if (options[i].short_name == c && options[i].set != NULL)
            return &options[i];
    return NULL;
}

static void set_defaults(cli_options *o)
{
    memset(o, 0, sizeof *o);
    o->confidence = 0.9;
    o->type = ONCE_SCALABLE;
    o->capacity = 1000000;
    o->error = 0.001;
    o->key.delimiter = '\t';
    o->terminator = '\n';
    o->stats = STATS_NONE;
    o->progress = PROGRESS_AUTO;
    o->level = 2; /* count and time windows on slices; the blocked APBBF uses 0 */
    o->time_format = TIME_EPOCH;
    o->on_bad_time = BAD_TIME_FAIL;
    o->max_time_jump_ms = ONCE_DEFAULT_MAX_TIME_JUMP_MS;
}

/* A structure a whole slice over a cluster may be (once_sliced.h, "Whole slices"). */
static bool whole_slice_type(const once_structure *s)
{
    return s->kind == ONCE_KIND_STATIC || s->kind == ONCE_KIND_GROWING ||
           s->kind == ONCE_KIND_TIME_WINDOW;
}

/* The kind of filter the options ask for: over a cluster, sliced, or neither; and
 * the key's delimiter against the line's end. */
static int check_kinds(parse_state *p)
{
    cli_options *o = p->o;
    if (o->cluster != NULL && !o->sliced && o->tree_levels == 0) {
        /* The default over a cluster: whole slices, horizontal (docs/CLUSTER.md says
         * why); a count window's are tagged windows on the producers' shared count. */
        if (p->dicing_given || p->growth_given)
            return fail("%s", "--dicing and --slice-growth shape a sliced filter of cells: add "
                              "--slicing");
        o->whole = true;
        o->slicing = ONCE_SLICING_HORIZONTAL;
        if (!p->slices_given)
            o->slices = 16;
        p->slices_given = !o->whole;
    }
    if (o->cluster != NULL || o->cluster_key != NULL || p->cluster_options_given) {
        int code = check_cluster(o, p->threads_given, p->growth_given, p->leaf_given);
        if (code != 0)
            return code;
    }
    /* --threads alone runs the lines on a pipeline of threads (once.c); with --slicing
     * the threads are the sliced filter's sites. */
    if (o->whole && o->parts != 0)
        return fail("%s", "--slices SxP applies to --slicing diced: give a number of slices");
    if (o->whole && o->type_given && !whole_slice_type(once_structure_of(o->type)))
        return fail("--cluster: a slice is a whole filter of an all-time or time-window "
                    "structure, not %s (a count window: --window N)",
                    once_type_name(o->type));
    if (!o->whole && (o->sliced || p->slices_given || p->dicing_given || p->growth_given)) {
        int code = check_slicing(o, p->slices_given, p->dicing_given, p->diced, p->dicing,
                                 p->growth_given);
        if (code != 0)
            return code;
    }
    if (o->key.delimiter == o->terminator) /* with -z a newline may split fields */
        return fail("%s", "the delimiter cannot be a newline");
    o->key.strip_cr = o->terminator == '\n'; /* a CR ends a CRLF line, not a -z record */
    return 0;
}

/* The windows (--window, --span) against the structure, which they may choose. */
static int check_windows(parse_state *p)
{
    cli_options *o = p->o;
    char names[256]; /* a list of structure names for a message */
    const once_structure *chosen = once_structure_of(o->type);
    bool count_type = count_window(chosen), time_type = time_window(chosen);
    /* A sliced filter or a tree keeps its windows in its sites' timers, whatever the
     * type its options left. */
    bool site_timers = o->sliced || o->tree_levels != 0;
    if (o->window_given && o->span_given)
        return fail("%s", "--window and --span exclude each other (a count or a time window)");
    if (o->window_given && o->whole) { /* the slices' time is the shared count */
        if (o->type_given && o->type != ONCE_TAGGED)
            return fail("--cluster --window: each slice is a tagged window on the producers' "
                        "shared count, not %s (or add --slicing for slices of cells)",
                        once_type_name(o->type));
        o->type = ONCE_TAGGED;
        if (o->capacity_given)
            return fail("%s", "--capacity and --window exclude each other (the window is the "
                              "capacity)");
    } else if (o->window_given) {
        if (!o->type_given)
            o->type = ONCE_APBF;
        else if (!count_type && !site_timers) /* on the count */
            return fail("--filter %s does not keep a count window: use %s",
                        once_type_name(o->type), structure_names(count_window, names, sizeof names));
        if (o->capacity_given)
            return fail("%s", "--capacity and --window exclude each other (the window is the "
                              "capacity)");
    } else if (o->span_given) {
        if (!o->type_given) /* check_slicing gave a sliced filter its type */
            o->type = cli_time_window_type(o);
        else if (!site_timers && !time_type)
            return fail("--filter %s does not keep a time window: use %s",
                        once_type_name(o->type), structure_names(time_window, names, sizeof names));
    } else if (count_type || time_type) {
        return fail(count_type ? "--filter %s needs --window N" : "--filter %s needs --span DURATION",
                    once_type_name(o->type));
    } else if (o->refresh || o->level_given) {
        return fail("%s", "--refresh and --level apply to windows: add --window or --span");
    } else if (o->capacity_given && !o->type_given) {
        o->type = ONCE_BLOCKED; /* a stated capacity asks for a fixed size */
    }
    chosen = once_structure_of(o->type);
    if (!chosen->levels && o->level_given)
        return fail("--level does not apply to --filter %s (it has no levels): drop it",
                    chosen->name);
    if (o->type == ONCE_APBBF && !o->level_given)
        o->level = 0;
    return 0;
}

/* How the options combine, after the last one. */
static int check_combinations(parse_state *p, int argc, char **argv)
{
    cli_options *o = p->o;
    char names[256]; /* a list of structure names for a message */
    int code = check_kinds(p);
    if (code == 0)
        code = check_windows(p);
    if (code != 0)
        return code;
    const once_structure *chosen = once_structure_of(o->type);
    if (!o->span_given && (o->time_field || o->time_format_given || p->bad_time_given ||
                           p->time_jump_given))
        return fail("%s", "--time-field, --time-format, --on-bad-time and --max-time-jump apply "
                          "to time windows: add --span");
    if (o->lag_given && (!o->span_given || o->type != ONCE_TAGGED || o->sliced ||
                         o->tree_levels != 0))
        return fail("%s", "--lag judges late lines at their own time in the tagged time window: "
                          "add --span (its filter is tagged, the default), without --slicing "
                          "or --tree (their timers judge each line at its own time)");
    /* Producers over a cluster lag each other by design (docs/CLUSTER.md, "Racing
     * producers"): whole tagged slices judge a line up to a tick of the window behind
     * at its own time unless told otherwise, the lag the tagged window keeps for least
     * (a tick more of entries: window/tagged.c, "Time"). */
    if (o->whole && o->span_given && o->type == ONCE_TAGGED && !o->lag_given)
        o->lag_ms = o->span_ms / 12 + (o->span_ms % 12 != 0);
    if (o->lag_given && o->lag_ms > o->span_ms && o->lag_ms - o->span_ms > o->span_ms)
        return fail("%s", "--lag is at most twice --span: a longer lag would keep every key "
                          "three spans and more");
    if (o->max_memory && !chosen->memory_cap && !o->sliced)
        return fail("--max-memory applies to the filters that grow: %s (the scalable filter is "
                    "the default without --capacity), and time windows (--span)",
                    structure_names(capped_growth, names, sizeof names));
    if (o->shards_given && (o->sliced || o->cluster != NULL))
        return fail("%s", "--shards shares one filter's keys out on this host; a sliced filter "
                          "spreads them over its sites: drop one of them");
    if (o->shards_given && o->shards > 1 && chosen->kind == ONCE_KIND_COUNT_WINDOW)
        return fail("--filter %s keeps the stream's last N keys, which shards cannot share "
                    "out: drop --shards",
                    chosen->name);
    if (o->card && o->print_duplicates)
        return fail("%s", "-D/--duplicates selects lines to print, and `once card` prints a "
                          "count instead of lines: drop one of them");
    if (!o->card && (p->confidence_given || o->json))
        return fail("%s", "--confidence and --json are options of `once card`");
    if ((o->time_format_given || p->bad_time_given || p->time_jump_given) && !o->time_field)
        return fail("%s", "--time-format, --on-bad-time and --max-time-jump need --time-field N "
                          "(the clock at reading is taken as it is)");
    /* A saved filter is estimated as it was made: options that would make or feed a
     * filter mean nothing to it. */
    if (o->card && o->state_count > 0 &&
        (o->type_given || o->capacity_given || o->error_given || o->seed_given ||
         o->window_given || o->span_given || o->key.field_count || o->split_given ||
         o->key.ignore_case || o->level_given || o->refresh || o->time_field ||
         o->max_memory || o->terminator != '\n'))
        return fail("%s", "`once card --state` estimates saved filters as they were made: "
                          "options that build a filter or read input do not apply to it");
    if (o->card && o->state_count > 0 && optind < argc)
        return fail("`once card --state` estimates saved filters and reads no input: give "
                    "--state files or input files, not both ('%s')",
                    argv[optind]);
    o->inputs = argv + optind;
    o->input_count = (size_t)(argc - optind);
    return 0;
}

int options_parse(cli_options *o, int argc, char **argv)
{
    refusal[0] = '\0';
    set_defaults(o);
    if (argc > 1 && strcmp(argv[1], "card") == 0) {
        o->card = true;
        argv[1] = argv[0]; /* parse the rest as the options of the command */
        argv++;
        argc--;
    }
    parse_state p = {.o = o, .argc = argc, .dicing = ONCE_SLICING_DICED_HV};
    static struct option longs[OPTION_COUNT + 1];
    static char shorts[2 * OPTION_COUNT + 2];
    getopt_lists(longs, shorts);
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        const cli_option *opt = option_of(c);
        if (opt == NULL) /* '?' and ':' */
            return option_error(c, argv, longs);
        int code = opt->set(&p, optarg);
        if (code != 0)
            return code;
    }
    return check_combinations(&p, argc, argv);
}
