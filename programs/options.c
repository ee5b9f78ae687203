/*
 * options.c - parse and validate the command line.  Every value is checked here, so
 * the rest of the program can trust the struct.
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
          "A FILE is always input, whatever its bytes.\n"
          "\n"
          "Key:\n"
          "  -f, --field LIST       use these fields as the key instead of the whole line:\n"
          "                         N, or a list such as 1,3 or 2-4 (joined by the\n"
          "                         delimiter); fields count from 1, a missing field is\n"
          "                         empty\n"
          "  -t, --delimiter C      field delimiter (one byte; default: tab)\n"
          "      --ws               fields are separated by runs of spaces and tabs, and\n"
          "                         blanks at the ends of a line are ignored (awk's\n"
          "                         default)\n"
          "  -i, --ignore-case      keys that differ only in ASCII letter case are the same\n"
          "\n"
          "Filter:\n"
          "      --capacity N       expected number of distinct keys: a fixed-size blocked\n"
          "                         filter (suffixes k, M, G multiply by 10^3, 10^6, 10^9);\n"
          "                         without it a scalable filter starts at 1000000 keys, or\n"
          "                         about the lines of the input files, and grows, keeping\n"
          "                         the error target at any size\n"
          "      --error P          target false-positive rate (default 0.001); of each row\n"
          "                         of dbf and each batch of dbpbf, whose rates add up once\n"
          "                         a second opens (a warning says when)\n"
          "      --filter NAME      the structure, one of \"Filters\" below (default\n"
          "                         scalable, or blocked with --capacity, apbf with\n"
          "                         --window, tagged with --span, tlbf with --span and\n"
          "                         --level)\n"
          "      --seed S           hash seed (decimal or 0x hex; default random)\n"
          "\n"
          "Sliced filter (one standard filter spread over sites, here threads):\n"
          "      --slicing MODE     horizontal (an event goes to the one slice a hash of it\n"
          "                         picks), vertical (to the slices of its k bits: decides\n"
          "                         every line as --filter standard with the same\n"
          "                         --capacity, --error and --seed) or diced (--slices SxP)\n"
          "      --slices S         slices; SxP for diced: S slices of P parts each\n"
          "      --dicing D         diced slicing: h-v (horizontal slices, vertical parts;\n"
          "                         default) or v-h (vertical slices, horizontal parts)\n"
          "      --threads T        with --slicing: T threads own the slices and answer for\n"
          "                         them (default: the reading thread does); --stats adds\n"
          "                         messages per lookup, the load of each slice, fairness\n"
          "                         and max load.\n"
          "                         With --span, every slice keeps timers that expire at\n"
          "                         each line's time plus the span, and grows alone; with\n"
          "                         --window N, timers on the count of keys delivered\n"
          "      --slice-growth G   with --span: per-site (default: each slice opens a\n"
          "                         sub-filter when its own is full, paper 000 section 5;\n"
          "                         a burst can pass --error) or bounded (the whole filter\n"
          "                         grows in generations and keeps the rate under --error\n"
          "                         through bursts, for more memory; not with --threads)\n"
          "\n"
          "Over a Redis Cluster (the same sliced filter, its slices keys of the cluster,\n"
          "shared by every once on the same --key; docs/CLUSTER.md):\n"
          "      --cluster ADDR     a node of the cluster, host:port (or several, comma\n"
          "                         separated); needs --slicing, --slices and --key\n"
          "      --key NAME         the filter's name in the cluster: the first run makes\n"
          "                         it, later ones must give the same --slicing, --slices,\n"
          "                         --capacity, --error, --span (and --seed, if given)\n"
          "      --on-failed-slice P  a line with a position in a slice whose node cannot\n"
          "                         answer: distinct (default: printed), duplicate (not\n"
          "                         printed), or threshold:X (a repeat when the X or more\n"
          "                         positions reached are all set)\n"
          "      --local-filter     keep a filter of this run's own keys too: its repeats\n"
          "                         cost no message (paper 000, section 6)\n"
          "      --wait             after each batch, wait for a replica of every node\n"
          "                         written (WAIT): what a failover could lose is less\n"
          "      --tree LxF         a Bloom tree instead of --slicing: L levels, F children\n"
          "                         a node; its internal nodes are keys of the cluster, its\n"
          "                         leaves the runs' own (paper 000, section 6)\n"
          "      --leaf I           this run's leaf of the tree (default 0): repeats of its\n"
          "                         own keys stop there, with no message\n"
          "\n"
          "Window:\n"
          "      --window N         forget keys older than the last N delivered keys (count\n"
          "                         window; suffixes k, M, G); --error is then the target\n"
          "                         rate for keys that left the window\n"
          "      --span DURATION    forget keys delivered more than DURATION ago (time\n"
          "                         window: 500ms, 90s, 15m, 1h30m, 1.5h, 7d: units ms, s,\n"
          "                         m, h, d, largest first, in whole milliseconds; a bare\n"
          "                         number is seconds); a key is forgotten at most a\n"
          "                         twelfth of DURATION late (--filter tagged, the\n"
          "                         default; tlbf or timer); --capacity is then a first\n"
          "                         guess of keys per span\n"
          "      --time-field N     event time from field N (default: the clock at reading)\n"
          "      --time-format F    epoch (seconds, default), epoch_ms or iso8601; times\n"
          "                         are milliseconds since 1970: an earlier one is a bad\n"
          "                         time\n"
          "      --on-bad-time A    a line whose time does not parse, is before 1970, or\n"
          "                         is too far ahead (of the latest time or the wall\n"
          "                         clock): fail (default, exit 2), skip (drop\n"
          "                         it) or keep (print it, unfiltered); neither moves the\n"
          "                         window's clock\n"
          "      --max-time-jump D  how far past the latest event time, and past the wall\n"
          "                         clock, a line's time may be\n"
          "                         (a duration as for --span; default 1d; 0 for no bound);\n"
          "                         a line past it is a bad time.  Earlier times than the\n"
          "                         latest are taken as the latest: a late line is a repeat\n"
          "                         if its key is in the window\n"
          "      --max-memory SIZE  cap on the memory of a filter that grows (scalable,\n"
          "                         dbf, dbpbf) or a time window (e.g. 512M, 4G); past it\n"
          "                         the run stops with exit 2 (default: none for the\n"
          "                         filters that grow, 1G for time windows)\n"
          "      --level L          window layout: 0 uses the fewest slices; higher levels\n"
          "                         cut the slack past the window and the memory per key\n"
          "                         for more memory accesses (default 2, and 0 for apbbf;\n"
          "                         the timer and tagged filters have no levels, and\n"
          "                         --span with --level keeps a tlbf)\n"
          "      --refresh          a repeated key restarts its window (default: the window\n"
          "                         counts from the key's first delivery); with --window N\n"
          "                         every repeat is inserted again and takes a place, so\n"
          "                         the window is the last N lines of any key, not the last\n"
          "                         N delivered keys (a, twenty b, a: prints a b a)\n"
          "\n"
          "State:\n"
          "      --state FILE       load the filter from FILE if it exists, save it there\n"
          "                         at the end and on SIGINT/SIGTERM/SIGHUP (atomically).\n"
          "                         The file keeps the options that shape keys and the\n"
          "                         window (-f, -t, --ws, -i, --level, --refresh, the time\n"
          "                         source): a resumed run uses them; contradicting one is\n"
          "                         exit 1. The run locks FILE (flock on FILE.lock) until\n"
          "                         it has saved: another run on FILE is refused at once\n"
          "                         with exit 2. FILE's directory must take new files; that\n"
          "                         is checked before any input is read.  once card: a\n"
          "                         saved filter to estimate (repeatable; read as last\n"
          "                         saved, without a lock)\n"
          "\n"
          "Output:\n"
          "  -D, --duplicates       print only the lines whose key was seen before\n"
          "  -z, --zero-terminated  lines end with NUL, not newline, on input and output (a\n"
          "                         CR before the NUL is part of the key)\n"
          "      --stats[=FORMAT]   summary on stderr at the end: human (default) or json;\n"
          "                         with the threads and where the time went\n"
          "      --threads T        T threads on the lines (reading, keys and times,\n"
          "                         hashing, answering and writing overlap; the answers\n"
          "                         and writes come in input order): the output is that\n"
          "                         of one thread, byte for byte, and so is the state\n"
          "      --shards P         the filter in P shards, each key in one (1 to 256):\n"
          "                         threads answer different shards side by side (default\n"
          "                         16 for a time window, fewer under --capacity 16384,\n"
          "                         else 1)\n"
          "      --progress         progress line on stderr (default: when it is a\n"
          "                         terminal)\n"
          "      --no-progress      never print the progress line\n"
          "      --confidence C     once card: probability of the interval (default 0.9)\n"
          "      --json             once card: one JSON object per estimate\n"
          "  -h, --help             this help\n"
          "  -V, --version          version\n"
          "\n"
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

/* Every --state, in order.  Kept for the whole run, like argv; a static, so the list
 * stays reachable and is never reported as a leak. */
static const char **state_list;

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    fputs("once: ", stderr);
    va_list args;
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputs("\nTry 'once --help' for more information.\n", stderr);
    return EXIT_USAGE;
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

enum {
    OPT_CAPACITY = 256,
    OPT_ERROR,
    OPT_FILTER,
    OPT_SEED,
    OPT_STATE,
    OPT_STATS,
    OPT_PROGRESS,
    OPT_NO_PROGRESS,
    OPT_WINDOW,
    OPT_LEVEL,
    OPT_REFRESH,
    OPT_SPAN,
    OPT_TIME_FIELD,
    OPT_TIME_FORMAT,
    OPT_ON_BAD_TIME,
    OPT_MAX_TIME_JUMP,
    OPT_MAX_MEMORY,
    OPT_CONFIDENCE,
    OPT_JSON,
    OPT_WS,
    OPT_SLICING,
    OPT_SLICES,
    OPT_DICING,
    OPT_THREADS,
    OPT_SHARDS,
    OPT_SLICE_GROWTH,
    OPT_CLUSTER,
    OPT_KEY,
    OPT_ON_FAILED_SLICE,
    OPT_LOCAL_FILTER,
    OPT_WAIT,
    OPT_TREE,
    OPT_LEAF,
};

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
        return fail("%s", "--key, --on-failed-slice, --local-filter and --wait apply to a "
                          "filter over a cluster: add --cluster HOST:PORT");
    if (o->cluster_key == NULL || o->cluster_key[0] == '\0')
        return fail("%s", "--cluster needs --key NAME, the filter's name in the cluster");
    if (leaf_given && o->tree_levels == 0)
        return fail("%s", "--leaf is this run's leaf of a Bloom tree: add --tree LxF");
    if (o->tree_levels == 0 && !o->sliced)
        return fail("%s", "--cluster needs --slicing horizontal, vertical or diced, or --tree LxF");
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

int options_parse(cli_options *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    if (argc > 1 && strcmp(argv[1], "card") == 0) {
        o->card = true;
        argv[1] = argv[0]; /* parse the rest as the options of the command */
        argv++;
        argc--;
    }
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
    bool bad_time_given = false;
    bool time_jump_given = false;
    bool confidence_given = false;
    bool slices_given = false, dicing_given = false, threads_given = false, diced = false;
    bool growth_given = false, cluster_options_given = false, leaf_given = false;
    once_slicing dicing = ONCE_SLICING_DICED_HV;

    static const struct option longs[] = {
        {"field", required_argument, NULL, 'f'},
        {"delimiter", required_argument, NULL, 't'},
        {"ws", no_argument, NULL, OPT_WS},
        {"ignore-case", no_argument, NULL, 'i'},
        {"duplicates", no_argument, NULL, 'D'},
        {"zero-terminated", no_argument, NULL, 'z'},
        {"capacity", required_argument, NULL, OPT_CAPACITY},
        {"error", required_argument, NULL, OPT_ERROR},
        {"filter", required_argument, NULL, OPT_FILTER},
        {"seed", required_argument, NULL, OPT_SEED},
        {"state", required_argument, NULL, OPT_STATE},
        {"stats", optional_argument, NULL, OPT_STATS},
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
        {"window", required_argument, NULL, OPT_WINDOW},
        {"level", required_argument, NULL, OPT_LEVEL},
        {"refresh", no_argument, NULL, OPT_REFRESH},
        {"span", required_argument, NULL, OPT_SPAN},
        {"time-field", required_argument, NULL, OPT_TIME_FIELD},
        {"time-format", required_argument, NULL, OPT_TIME_FORMAT},
        {"on-bad-time", required_argument, NULL, OPT_ON_BAD_TIME},
        {"max-time-jump", required_argument, NULL, OPT_MAX_TIME_JUMP},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {"confidence", required_argument, NULL, OPT_CONFIDENCE},
        {"json", no_argument, NULL, OPT_JSON},
        {"slicing", required_argument, NULL, OPT_SLICING},
        {"slices", required_argument, NULL, OPT_SLICES},
        {"dicing", required_argument, NULL, OPT_DICING},
        {"slice-growth", required_argument, NULL, OPT_SLICE_GROWTH},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"shards", required_argument, NULL, OPT_SHARDS},
        {"cluster", required_argument, NULL, OPT_CLUSTER},
        {"key", required_argument, NULL, OPT_KEY},
        {"on-failed-slice", required_argument, NULL, OPT_ON_FAILED_SLICE},
        {"local-filter", no_argument, NULL, OPT_LOCAL_FILTER},
        {"wait", no_argument, NULL, OPT_WAIT},
        {"tree", required_argument, NULL, OPT_TREE},
        {"leaf", required_argument, NULL, OPT_LEAF},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    char names[256]; /* a list of structure names for a message */
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":f:t:iDzhV", longs, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (key_fields_parse(&o->key, optarg) != 0)
                return fail("invalid field list '%s' (field numbers from 1, e.g. 2, 1,3 or 2-4; "
                            "at most 64 fields)",
                            optarg);
            break;
        case 't':
            if (strcmp(optarg, "\\t") == 0)
                o->key.delimiter = '\t';
            else if (strlen(optarg) == 1)
                o->key.delimiter = optarg[0];
            else
                return fail("the delimiter must be a single byte, not '%s'", optarg);
            if (o->key.whitespace)
                return fail("%s", "-t and --ws exclude each other (one way to split fields)");
            o->split_given = true;
            break;
        case OPT_WS:
            if (o->split_given && !o->key.whitespace)
                return fail("%s", "-t and --ws exclude each other (one way to split fields)");
            o->key.whitespace = true;
            o->split_given = true;
            break;
        case 'i':
            o->key.ignore_case = true;
            break;
        case 'D':
            o->print_duplicates = true;
            break;
        case 'z':
            o->terminator = '\0';
            break;
        case OPT_CAPACITY:
            if (parse_count(optarg, &o->capacity) != 0)
                return fail("invalid capacity '%s' (a positive integer, e.g. 1000000 or 10M)",
                            optarg);
            o->capacity_given = true;
            break;
        case OPT_ERROR: {
            char *end = NULL;
            errno = 0;
            double p = strtod(optarg, &end);
            if (errno == ERANGE && p == 0.0) /* underflow: a positive number below any range */
                errno = 0;
            if (errno != 0 || end == optarg || *end != '\0' || !once_error_in_range(p))
                return fail("invalid error rate '%s': a target rate is at least %g and below 1 "
                            "(e.g. 0.001)",
                            optarg, ONCE_MIN_ERROR);
            o->error = p;
            o->error_given = true;
            break;
        }
        case OPT_FILTER:
            if (once_type_from_name(optarg, &o->type) != ONCE_OK ||
                !any_structure(once_structure_of(o->type)))
                return fail("unknown filter '%s' (%s)", optarg,
                            structure_names(any_structure, names, sizeof names));
            o->type_given = true;
            break;
        case OPT_WINDOW:
            if (parse_count(optarg, &o->window) != 0)
                return fail("invalid window '%s' (a positive number of keys, e.g. 100000 or 1M)",
                            optarg);
            o->window_given = true;
            break;
        case OPT_LEVEL: {
            uint64_t v;
            if (parse_u64(optarg, &v) != 0 || v > 8)
                return fail("invalid level '%s' (0 to 8)", optarg);
            o->level = (uint32_t)v;
            o->level_given = true;
            break;
        }
        case OPT_REFRESH:
            o->refresh = true;
            break;
        case OPT_SPAN:
            if (parse_duration_ms(optarg, &o->span_ms) != 0)
                return fail("invalid span '%s' (a duration such as 90s, 1h30m, 1.5h or 7d, "
                            "in whole milliseconds)",
                            optarg);
            o->span_given = true;
            break;
        case OPT_TIME_FIELD: {
            uint64_t v;
            if (parse_u64(optarg, &v) != 0 || v == 0 || v > KEY_MAX_FIELD)
                return fail("invalid time field '%s' (fields count from 1)", optarg);
            o->time_field = (unsigned)v;
            break;
        }
        case OPT_TIME_FORMAT:
            o->time_format_given = true;
            if (strcmp(optarg, "epoch") == 0)
                o->time_format = TIME_EPOCH;
            else if (strcmp(optarg, "epoch_ms") == 0)
                o->time_format = TIME_EPOCH_MS;
            else if (strcmp(optarg, "iso8601") == 0)
                o->time_format = TIME_ISO8601;
            else
                return fail("unknown time format '%s' (epoch, epoch_ms or iso8601)", optarg);
            break;
        case OPT_ON_BAD_TIME:
            bad_time_given = true;
            if (strcmp(optarg, "fail") == 0)
                o->on_bad_time = BAD_TIME_FAIL;
            else if (strcmp(optarg, "skip") == 0)
                o->on_bad_time = BAD_TIME_SKIP;
            else if (strcmp(optarg, "keep") == 0)
                o->on_bad_time = BAD_TIME_KEEP;
            else
                return fail("unknown --on-bad-time action '%s' (fail, skip or keep)", optarg);
            break;
        case OPT_MAX_TIME_JUMP:
            time_jump_given = true;
            if (strcmp(optarg, "0") == 0)
                o->max_time_jump_ms = 0;
            else if (parse_duration_ms(optarg, &o->max_time_jump_ms) != 0 ||
                     o->max_time_jump_ms > ONCE_MAX_TIME_MS)
                return fail("invalid time jump '%s' (a duration such as 6h, 1h30m or 2d, or 0 for "
                            "no bound)",
                            optarg);
            break;
        case OPT_CONFIDENCE: {
            char *end = NULL;
            errno = 0;
            double level = strtod(optarg, &end);
            if (errno != 0 || end == optarg || *end != '\0' || !(level > 0.0 && level < 1.0))
                return fail("invalid confidence '%s' (a probability between 0 and 1, e.g. 0.9)",
                            optarg);
            o->confidence = level;
            confidence_given = true;
            break;
        }
        case OPT_JSON:
            o->json = true;
            break;
        case OPT_SLICING:
            o->sliced = true;
            diced = strcmp(optarg, "diced") == 0;
            if (strcmp(optarg, "horizontal") == 0)
                o->slicing = ONCE_SLICING_HORIZONTAL;
            else if (strcmp(optarg, "vertical") == 0)
                o->slicing = ONCE_SLICING_VERTICAL;
            else if (!diced)
                return fail("unknown slicing '%s' (horizontal, vertical or diced)", optarg);
            break;
        case OPT_SLICES:
            if (parse_slices(optarg, &o->slices, &o->parts) != 0)
                return fail("invalid slices '%s' (a number of slices from 1 to %u, or SxP for "
                            "diced slicing, e.g. 4x2)",
                            optarg, ONCE_MAX_SLICED_SITES);
            slices_given = true;
            break;
        case OPT_DICING:
            if (strcmp(optarg, "h-v") == 0)
                dicing = ONCE_SLICING_DICED_HV;
            else if (strcmp(optarg, "v-h") == 0)
                dicing = ONCE_SLICING_DICED_VH;
            else
                return fail("unknown dicing '%s' (h-v or v-h)", optarg);
            dicing_given = true;
            break;
        case OPT_SLICE_GROWTH:
            if (strcmp(optarg, "bounded") == 0)
                o->bounded_growth = true;
            else if (strcmp(optarg, "per-site") != 0)
                return fail("unknown slice growth '%s' (per-site or bounded)", optarg);
            growth_given = true;
            break;
        case OPT_CLUSTER:
            o->cluster = optarg;
            break;
        case OPT_KEY:
            o->cluster_key = optarg;
            break;
        case OPT_ON_FAILED_SLICE: {
            uint64_t x = 0;
            if (strcmp(optarg, "distinct") == 0)
                o->on_failed_slice = FAILED_SLICE_DISTINCT;
            else if (strcmp(optarg, "duplicate") == 0)
                o->on_failed_slice = FAILED_SLICE_DUPLICATE;
            else if (strncmp(optarg, "threshold:", 10) == 0 && isdigit((unsigned char)optarg[10]) &&
                     parse_u64(optarg + 10, &x) == 0 && x <= 64) {
                o->on_failed_slice = FAILED_SLICE_THRESHOLD;
                o->failed_slice_threshold = (uint32_t)x;
            } else if (strncmp(optarg, "threshold:", 10) == 0)
                return fail("invalid --on-failed-slice '%s' (threshold:X, X from 0 to k, the "
                            "filter's number of hashes, at most 64)",
                            optarg);
            else
                return fail("unknown --on-failed-slice policy '%s' (distinct, duplicate or "
                            "threshold:X)",
                            optarg);
            cluster_options_given = true;
            break;
        }
        case OPT_LOCAL_FILTER:
            o->local_filter = true;
            cluster_options_given = true;
            break;
        case OPT_WAIT:
            o->wait = true;
            cluster_options_given = true;
            break;
        case OPT_TREE: {
            uint32_t levels = 0, fanout = 0;
            if (parse_slices(optarg, &levels, &fanout) != 0 || levels < 2 || levels > 16 ||
                fanout == 0)
                return fail("invalid tree '%s' (LxF: L levels from 2 to 16, F children a node, "
                            "e.g. 3x4)",
                            optarg);
            o->tree_levels = levels;
            o->tree_fanout = fanout;
            cluster_options_given = true;
            break;
        }
        case OPT_LEAF:
            if (parse_u64(optarg, &o->leaf) != 0)
                return fail("invalid leaf '%s' (a number from 0)", optarg);
            leaf_given = true;
            cluster_options_given = true;
            break;
        case OPT_THREADS: {
            uint64_t v;
            if (parse_u64(optarg, &v) != 0 || v == 0 || v > ONCE_MAX_SITE_THREADS)
                return fail("invalid threads '%s' (1 to %u)", optarg, ONCE_MAX_SITE_THREADS);
            o->threads = (uint32_t)v;
            threads_given = true;
            break;
        }
        case OPT_SHARDS: {
            uint64_t v;
            if (parse_u64(optarg, &v) != 0 || v == 0 || v > ONCE_MAX_SHARDS)
                return fail("invalid shards '%s' (1 to %u)", optarg, ONCE_MAX_SHARDS);
            o->shards = (uint32_t)v;
            o->shards_given = true;
            break;
        }
        case OPT_MAX_MEMORY: {
            char *end = NULL;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            uint64_t scale = 1;
            if (end && (*end == 'k' || *end == 'K'))
                scale = 1024, end++;
            else if (end && *end == 'M')
                scale = 1024 * 1024, end++;
            else if (end && *end == 'G')
                scale = 1024 * 1024 * 1024, end++;
            if (errno || end == optarg || *optarg == '-' || *end != '\0' || v == 0 ||
                v > UINT64_MAX / scale)
                return fail("invalid memory size '%s' (bytes, or with K, M, G)", optarg);
            o->max_memory = (uint64_t)v * scale;
            break;
        }
        case OPT_SEED:
            if (parse_u64(optarg, &o->seed) != 0)
                return fail("invalid seed '%s' (a 64-bit integer, decimal or 0x hex)", optarg);
            o->seed_given = true;
            break;
        case OPT_STATE:
            if (*optarg == '\0')
                return fail("%s", "--state needs a file name");
            if (o->state_count > 0 && !o->card)
                return fail("%s", "--state given twice: a run keeps one state file (`once card` "
                                  "estimates several)");
            if (state_list == NULL) {
                state_list = calloc((size_t)argc, sizeof *state_list); /* argc bounds them */
                if (state_list == NULL)
                    return fail("%s", "out of memory");
            }
            state_list[o->state_count++] = optarg;
            o->state_paths = state_list;
            o->state_path = state_list[0];
            break;
        case OPT_STATS:
            if (optarg == NULL || strcmp(optarg, "human") == 0)
                o->stats = STATS_HUMAN;
            else if (strcmp(optarg, "json") == 0)
                o->stats = STATS_JSON;
            else
                return fail("unknown stats format '%s' (human or json)", optarg);
            break;
        case OPT_PROGRESS:
            o->progress = PROGRESS_ON;
            break;
        case OPT_NO_PROGRESS:
            o->progress = PROGRESS_OFF;
            break;
        case 'h':
            usage(stdout);
            return -1;
        case 'V':
            printf("once %s\n", once_version());
            return -1;
        default: /* '?' and ':' */
            return option_error(c, argv, longs);
        }
    }
    if (o->cluster != NULL || o->cluster_key != NULL || cluster_options_given) {
        int code = check_cluster(o, threads_given, growth_given, leaf_given);
        if (code != 0)
            return code;
    }
    /* --threads alone runs the lines on a pipeline of threads (once.c); with --slicing
     * the threads are the sliced filter's sites. */
    if (o->sliced || slices_given || dicing_given || growth_given) {
        int code = check_slicing(o, slices_given, dicing_given, diced, dicing, growth_given);
        if (code != 0)
            return code;
    }
    if (o->key.delimiter == o->terminator) /* with -z a newline may split fields */
        return fail("%s", "the delimiter cannot be a newline");
    o->key.strip_cr = o->terminator == '\n'; /* a CR ends a CRLF line, not a -z record */
    const once_structure *chosen = once_structure_of(o->type);
    bool count_type = count_window(chosen), time_type = time_window(chosen);
    /* A sliced filter or a tree keeps its windows in its sites' timers, whatever the
     * type its options left. */
    bool site_timers = o->sliced || o->tree_levels != 0;
    if (o->window_given && o->span_given)
        return fail("%s", "--window and --span exclude each other (a count or a time window)");
    if (o->window_given) {
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
    if (!o->span_given && (o->time_field || o->time_format_given || bad_time_given ||
                           time_jump_given))
        return fail("%s", "--time-field, --time-format, --on-bad-time and --max-time-jump apply "
                          "to time windows: add --span");
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
    if (!o->card && (confidence_given || o->json))
        return fail("%s", "--confidence and --json are options of `once card`");
    if ((o->time_format_given || bad_time_given || time_jump_given) && !o->time_field)
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
