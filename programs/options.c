/*
 * options.c - parse and validate the command line.  Every value is checked here, so
 * the rest of the program can trust the struct.
 */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fputs("Usage: once [OPTIONS] [FILE...]\n"
          "       once card [OPTIONS] [FILE...]\n"
          "Print each line of the input whose key was not seen before, in input order.\n"
          "With no FILE, or when FILE is -, read standard input.\n"
          "`once card` prints how many distinct keys the input holds instead (estimated\n"
          "from the filter's cells, with an interval); given saved state files (--state),\n"
          "it reads each and prints its estimate.\n"
          "\n"
          "Key:\n"
          "  -f, --field N          use field N (1-based) as the key instead of the whole line\n"
          "  -t, --delimiter C      field delimiter (one byte; default: tab)\n"
          "\n"
          "Filter:\n"
          "      --capacity N       expected number of distinct keys: a fixed-size blocked\n"
          "                         filter (suffixes k, M, G multiply by 10^3, 10^6, 10^9);\n"
          "                         without it a scalable filter starts at 1000000 keys and\n"
          "                         grows, keeping the error target at any size\n"
          "      --error P          target false-positive rate (default 0.001)\n"
          "      --filter NAME      scalable, standard, partitioned or blocked (default\n"
          "                         scalable, or blocked with --capacity); also dbf\n"
          "                         (dynamic, rows of --capacity keys), bpbf and dbpbf\n"
          "                         (block-partitioned, static and dynamic);\n"
          "                         with --window: apbf (default) or apbbf;\n"
          "                         with --span: tlbf (default) or timer\n"
          "      --seed S           hash seed (decimal or 0x hex; default random)\n"
          "\n"
          "Window:\n"
          "      --window N         forget keys older than the last N delivered keys (count\n"
          "                         window; suffixes k, M, G); --error is then the target rate\n"
          "                         for keys that left the window\n"
          "      --span DURATION    forget keys delivered more than DURATION ago (time window:\n"
          "                         500ms, 90s, 15m, 2h, 7d); --filter tlbf (default) or timer;\n"
          "                         --capacity is then a first guess of keys per span\n"
          "      --time-field N     event time from field N (default: the clock at reading)\n"
          "      --time-format F    epoch (seconds, default), epoch_ms or iso8601\n"
          "      --on-bad-time A    a line whose time does not parse, or jumps too far ahead:\n"
          "                         fail (default, exit 2), skip (drop it) or keep (print it,\n"
          "                         unfiltered); neither moves the window's clock\n"
          "      --max-time-jump D  how far past the latest event time a line's time may be\n"
          "                         (default 1d; 0 for no bound); a line past it is a bad\n"
          "                         time.  Earlier times than the latest are taken as the\n"
          "                         latest: a late line is a repeat if its key is in the window\n"
          "      --max-memory SIZE  cap on the memory of a filter that grows, the scalable\n"
          "                         filter or a time window (e.g. 512M, 4G); past it the run\n"
          "                         stops with exit 2 (default: none for the scalable filter,\n"
          "                         1G for time windows)\n"
          "      --level L          window layout: 0 uses the fewest slices; higher levels cut\n"
          "                         the slack past the window and the memory per key for more\n"
          "                         memory accesses (default 2)\n"
          "      --refresh          a repeated key restarts its window (default: the window\n"
          "                         counts from the key's first delivery)\n"
          "\n"
          "State:\n"
          "      --state FILE       load the filter from FILE if it exists, save it there at\n"
          "                         the end and on SIGINT/SIGTERM (atomically)\n"
          "\n"
          "Output:\n"
          "  -D, --duplicates       print only the lines whose key was seen before\n"
          "  -z, --zero-terminated  lines end with NUL, not newline, on input and output\n"
          "                         (a CR before the NUL is part of the key)\n"
          "      --stats[=FORMAT]   summary on stderr at the end: human (default) or json\n"
          "      --progress         progress line on stderr (default: when it is a terminal)\n"
          "      --no-progress      never print the progress line\n"
          "      --confidence C     once card: probability of the interval (default 0.9)\n"
          "      --json             once card: one JSON object per estimate\n"
          "  -h, --help             this help\n"
          "  -V, --version          version\n"
          "\n"
          "Exit status: 0 success, 1 usage error, 2 I/O or state error, 128+N after\n"
          "signal N (the state is saved first).  An input that cannot be read (missing,\n"
          "a directory) is reported and the others are still read and written, as cat\n"
          "does; the run then exits 2 and saves no state.\n",
          out);
}

static int fail(const char *fmt, const char *arg)
{
    fputs("once: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry 'once --help' for more information.\n", stderr);
    return EXIT_USAGE;
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
};

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
    o->delimiter = '\t';
    o->terminator = '\n';
    o->stats = STATS_NONE;
    o->progress = PROGRESS_AUTO;
    o->level = 2; /* count and time windows on slices; the blocked APBBF uses 0 */
    o->time_format = TIME_EPOCH;
    o->on_bad_time = BAD_TIME_FAIL;
    o->max_time_jump_ms = ONCE_DEFAULT_MAX_TIME_JUMP_MS;
    bool level_given = false, time_format_given = false, bad_time_given = false;
    bool time_jump_given = false;
    bool confidence_given = false;

    static const struct option longs[] = {
        {"field", required_argument, NULL, 'f'},
        {"delimiter", required_argument, NULL, 't'},
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
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":f:t:DzhV", longs, NULL)) != -1) {
        switch (c) {
        case 'f': {
            uint64_t v;
            if (parse_u64(optarg, &v) != 0 || v == 0 || v > 1000000)
                return fail("invalid field number '%s' (fields count from 1)", optarg);
            o->field = (unsigned)v;
            break;
        }
        case 't':
            if (strcmp(optarg, "\\t") == 0)
                o->delimiter = '\t';
            else if (strlen(optarg) == 1)
                o->delimiter = optarg[0];
            else
                return fail("the delimiter must be a single byte, not '%s'", optarg);
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
            if (errno != 0 || end == optarg || *end != '\0' || !(p > 0.0 && p < 1.0))
                return fail("invalid error rate '%s' (a number between 0 and 1, e.g. 0.001)",
                            optarg);
            o->error = p;
            o->error_given = true;
            break;
        }
        case OPT_FILTER:
            if (once_type_from_name(optarg, &o->type) != ONCE_OK || o->type == ONCE_COUNTING)
                return fail("unknown filter '%s' (scalable, standard, partitioned, blocked, "
                            "dbf, bpbf, dbpbf; with --window: apbf, apbbf; with --span: "
                            "tlbf, timer)",
                            optarg);
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
            level_given = true;
            break;
        }
        case OPT_REFRESH:
            o->refresh = true;
            break;
        case OPT_SPAN:
            if (parse_duration_ms(optarg, &o->span_ms) != 0)
                return fail("invalid span '%s' (a duration such as 90s, 15m, 2h or 7d)", optarg);
            o->span_given = true;
            break;
        case OPT_TIME_FIELD: {
            uint64_t v;
            if (parse_u64(optarg, &v) != 0 || v == 0 || v > 1000000)
                return fail("invalid time field '%s' (fields count from 1)", optarg);
            o->time_field = (unsigned)v;
            break;
        }
        case OPT_TIME_FORMAT:
            time_format_given = true;
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
                return fail("invalid time jump '%s' (a duration such as 6h or 2d, or 0 for no "
                            "bound)",
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
            o->state_path = optarg;
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
        case ':':
            return fail("option '%s' needs a value", argv[optind - 1]);
        default:
            return fail("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (o->delimiter == o->terminator) /* with -z a newline may split fields */
        return fail("%s", "the delimiter cannot be a newline");
    bool count_type = o->type == ONCE_APBF || o->type == ONCE_APBBF;
    bool time_type = o->type == ONCE_TLBF || o->type == ONCE_TIMER;
    if (o->window_given && o->span_given)
        return fail("%s", "--window and --span exclude each other (a count or a time window)");
    if (o->window_given) {
        if (!o->type_given)
            o->type = ONCE_APBF;
        else if (!count_type)
            return fail("--filter %s does not keep a count window: use apbf or apbbf",
                        once_type_name(o->type));
        if (o->capacity_given)
            return fail("%s", "--capacity and --window exclude each other (the window is the "
                              "capacity)");
    } else if (o->span_given) {
        if (!o->type_given)
            o->type = ONCE_TLBF;
        else if (!time_type)
            return fail("--filter %s does not keep a time window: use tlbf or timer",
                        once_type_name(o->type));
    } else if (count_type || time_type) {
        return fail(count_type ? "--filter %s needs --window N" : "--filter %s needs --span DURATION",
                    once_type_name(o->type));
    } else if (o->refresh || level_given) {
        return fail("%s", "--refresh and --level apply to windows: add --window or --span");
    } else if (o->capacity_given && !o->type_given) {
        o->type = ONCE_BLOCKED; /* a stated capacity asks for a fixed size */
    }
    if (o->type == ONCE_APBBF && !level_given)
        o->level = 0;
    if (!o->span_given && (o->time_field || time_format_given || bad_time_given ||
                           time_jump_given))
        return fail("%s", "--time-field, --time-format, --on-bad-time and --max-time-jump apply "
                          "to time windows: add --span");
    if (o->max_memory && !o->span_given && o->type != ONCE_SCALABLE)
        return fail("%s", "--max-memory applies to the filters that grow: the scalable filter "
                          "(the default without --capacity) and time windows (--span)");
    if (!o->card && (confidence_given || o->json))
        return fail("%s", "--confidence and --json are options of `once card`");
    if ((time_format_given || bad_time_given || time_jump_given) && !o->time_field)
        return fail("%s", "--time-format, --on-bad-time and --max-time-jump need --time-field N "
                          "(the clock at reading is taken as it is)");
    o->inputs = argv + optind;
    o->input_count = (size_t)(argc - optind);
    return 0;
}
