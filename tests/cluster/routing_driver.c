/*
 * tests/cluster/routing_driver.c - the routing layer (cluster/routing.h) driven over
 * stdin and stdout, for the Python tests of tests/cluster.
 *
 * Usage: routing_driver [--timeout MS] [--redirects N] [--retry MS] [--max-retry MS]
 *                       [--manual-clock] SEED...
 * The client's clock (cluster_options.now_ms, which its backoff reads) is the monotonic
 * clock, or with --manual-clock one that moves only by :advance.
 * prints "ready" once connected (or "error REASON" and exits 1), then reads lines:
 *   ARG ARG ...          a command of the next batch; arguments are separated by single
 *                        spaces, a byte may be written \xHH (a space \x20, a backslash
 *                        \x5c); the key is the second argument, or none with one only
 *   (an empty line)      runs the batch: one line a command, in order, "R NODE REPLY"
 *                        or "U NODE", then "done MICROSECONDS"
 *   :slot ARG...         "slot N..." the hash slot of each (escaped) argument
 *   :stats               "stats NAME=VALUE ..." (cluster_stats)
 *   :nodes               "node INDEX ADDRESS up|down MESSAGES SLOTS" a node, then "done 0"
 *   :advance MS          moves the client's clock (its backoff) MS ahead: "ok"
 *   :load PREFIX COUNT BATCH set|get|both
 *                        SET PREFIXi v:PREFIXi, or GET and check, for i < COUNT, in
 *                        batches of BATCH: "load replied=R unreachable=U wrong=W
 *                        batches=B max_batch_us=M total_us=T"
 * A REPLY is "+status", "-error", ":integer", "$string", "_" (nil) or "*N[e,e,...]",
 * with every byte outside '!'..'~' and each of \ , [ ] written \xHH.  End of input
 * frees the client and exits 0.
 */
#include "routing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct driver_clock {
    bool manual;
    uint64_t offset_ms;
} driver_clock;

static uint64_t monotonic_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static uint64_t driver_now_ms(void *context)
{
    const driver_clock *clock = context;
    return (clock->manual ? 0 : monotonic_us() / 1000u) + clock->offset_ms;
}

static void fail(const char *what)
{
    fprintf(stderr, "routing_driver: %s\n", what);
    exit(2);
}

static void *must(void *p)
{
    if (p == NULL)
        fail("out of memory");
    return p;
}

/* ------------------------------------------------------------ text */

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Undo \xHH in place; the new length. */
static size_t unescape(char *s, size_t len)
{
    size_t out = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x' && hex_digit(s[i + 2]) >= 0 &&
            hex_digit(s[i + 3]) >= 0) {
            s[out++] = (char)(hex_digit(s[i + 2]) * 16 + hex_digit(s[i + 3]));
            i += 3;
        } else {
            s[out++] = s[i];
        }
    }
    return out;
}

static void print_escaped(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < '!' || ch > '~' || ch == '\\' || ch == ',' || ch == '[' || ch == ']')
            printf("\\x%02x", ch);
        else
            putchar(ch);
    }
}

static void print_reply(const redisReply *r)
{
    switch (r->type) {
    case REDIS_REPLY_STATUS:
        putchar('+');
        print_escaped(r->str, r->len);
        break;
    case REDIS_REPLY_ERROR:
        putchar('-');
        print_escaped(r->str, r->len);
        break;
    case REDIS_REPLY_INTEGER:
        printf(":%lld", r->integer);
        break;
    case REDIS_REPLY_STRING:
        putchar('$');
        print_escaped(r->str, r->len);
        break;
    case REDIS_REPLY_NIL:
        putchar('_');
        break;
    case REDIS_REPLY_ARRAY:
        printf("*%zu[", r->elements);
        for (size_t i = 0; i < r->elements; i++) {
            if (i > 0)
                putchar(',');
            print_reply(r->element[i]);
        }
        putchar(']');
        break;
    default:
        printf("?%d", r->type);
    }
}

/* ------------------------------------------------------------ batches */

typedef struct batch {
    cluster_command *cmds;
    char **lines; /* each command's arguments live in its line */
    size_t count, room;
} batch;

/* Split an owned line into a command: arguments at single spaces, unescaped. */
static void batch_add(batch *b, char *line)
{
    if (b->count == b->room) {
        b->room = b->room ? 2 * b->room : 64;
        b->cmds = must(realloc(b->cmds, b->room * sizeof *b->cmds));
        b->lines = must(realloc(b->lines, b->room * sizeof *b->lines));
    }
    size_t argc = 1;
    for (char *p = line; *p; p++)
        argc += *p == ' ';
    const char **argv = must(calloc(argc, sizeof *argv));
    size_t *argv_len = must(calloc(argc, sizeof *argv_len));
    char *start = line;
    for (size_t i = 0; i < argc; i++) {
        char *end = strchr(start, ' ');
        size_t len = end ? (size_t)(end - start) : strlen(start);
        argv_len[i] = unescape(start, len);
        argv[i] = start;
        start += len + 1;
    }
    b->lines[b->count] = line;
    b->cmds[b->count++] = (cluster_command){
        .argc = (int)argc, .argv = argv, .argv_len = argv_len, .key_index = argc > 1 ? 1 : -1};
}

static void batch_clear(batch *b)
{
    for (size_t i = 0; i < b->count; i++) {
        if (b->cmds[i].reply != NULL)
            freeReplyObject(b->cmds[i].reply);
        free((void *)b->cmds[i].argv);
        free((void *)b->cmds[i].argv_len);
        free(b->lines[i]);
    }
    b->count = 0;
}

static void batch_run(cluster_client *c, batch *b)
{
    uint64_t start = monotonic_us();
    cluster_client_run(c, b->cmds, b->count);
    uint64_t took = monotonic_us() - start;
    for (size_t i = 0; i < b->count; i++) {
        const cluster_command *cmd = &b->cmds[i];
        if (cmd->status == CLUSTER_REPLIED) {
            printf("R %d ", cmd->node);
            print_reply(cmd->reply);
            putchar('\n');
        } else {
            printf("U %d\n", cmd->node);
        }
    }
    printf("done %llu\n", (unsigned long long)took);
    batch_clear(b);
}

/* ------------------------------------------------------------ :load */

static void run_load(cluster_client *c, const char *prefix, size_t count, size_t size,
                     const char *verb)
{
    uint64_t replied = 0, unreachable = 0, wrong = 0, batches = 0, max_us = 0, total_us = 0;
    bool sets = strcmp(verb, "set") == 0 || strcmp(verb, "both") == 0;
    bool gets = strcmp(verb, "get") == 0 || strcmp(verb, "both") == 0;
    if (size == 0 || (!sets && !gets)) {
        printf("error bad :load\n");
        return;
    }
    cluster_command *cmds = must(calloc(size, sizeof *cmds));
    char (*keys)[128] = must(calloc(size, sizeof *keys));
    char (*values)[136] = must(calloc(size, sizeof *values));
    const char *(*argv)[3] = must(calloc(size, sizeof *argv));
    size_t (*argv_len)[3] = must(calloc(size, sizeof *argv_len));
    for (int phase = 0; phase < 2; phase++) {
        bool set = phase == 0;
        if ((set && !sets) || (!set && !gets))
            continue;
        for (size_t from = 0; from < count; from += size) {
            size_t n = count - from < size ? count - from : size;
            for (size_t i = 0; i < n; i++) {
                snprintf(keys[i], sizeof keys[i], "%s%zu", prefix, from + i);
                snprintf(values[i], sizeof values[i], "v:%s", keys[i]);
                argv[i][0] = set ? "SET" : "GET";
                argv[i][1] = keys[i];
                argv[i][2] = values[i];
                argv_len[i][0] = 3;
                argv_len[i][1] = strlen(keys[i]);
                argv_len[i][2] = strlen(values[i]);
                cmds[i] = (cluster_command){.argc = set ? 3 : 2, .argv = argv[i],
                                            .argv_len = argv_len[i], .key_index = 1};
            }
            uint64_t start = monotonic_us();
            cluster_client_run(c, cmds, n);
            uint64_t took = monotonic_us() - start;
            total_us += took;
            max_us = took > max_us ? took : max_us;
            batches++;
            for (size_t i = 0; i < n; i++) {
                const redisReply *r = cmds[i].reply;
                if (cmds[i].status != CLUSTER_REPLIED) {
                    unreachable++;
                    continue;
                }
                replied++;
                bool right = set ? r->type == REDIS_REPLY_STATUS && r->len == 2 &&
                                       memcmp(r->str, "OK", 2) == 0
                                 : r->type == REDIS_REPLY_STRING && r->len == strlen(values[i]) &&
                                       memcmp(r->str, values[i], r->len) == 0;
                wrong += !right;
                freeReplyObject(cmds[i].reply);
            }
        }
    }
    printf("load replied=%llu unreachable=%llu wrong=%llu batches=%llu max_batch_us=%llu "
           "total_us=%llu\n",
           (unsigned long long)replied, (unsigned long long)unreachable,
           (unsigned long long)wrong, (unsigned long long)batches, (unsigned long long)max_us,
           (unsigned long long)total_us);
    free(cmds);
    free(keys);
    free(values);
    free(argv);
    free(argv_len);
}

/* ------------------------------------------------------------ main */

static void print_stats(const cluster_client *c)
{
    cluster_stats s;
    cluster_client_stats(c, &s);
    printf("stats messages=%llu replies=%llu moved=%llu ask=%llu tryagain=%llu clusterdown=%llu "
           "unreachable=%llu reconnects=%llu map_refreshes=%llu\n",
           (unsigned long long)s.messages, (unsigned long long)s.replies,
           (unsigned long long)s.moved, (unsigned long long)s.ask,
           (unsigned long long)s.tryagain, (unsigned long long)s.clusterdown,
           (unsigned long long)s.unreachable, (unsigned long long)s.reconnects,
           (unsigned long long)s.map_refreshes);
}

static void print_nodes(const cluster_client *c)
{
    for (size_t i = 0; i < cluster_node_count(c); i++) {
        cluster_node_info info;
        if (cluster_node_info_at(c, i, &info))
            printf("node %zu %s %s %llu %u\n", i, info.address, info.up ? "up" : "down",
                   (unsigned long long)info.messages, info.slots);
    }
    printf("done 0\n");
}

static void print_slots(char *args)
{
    printf("slot");
    char *start = args;
    while (start != NULL && *start != '\0') {
        char *end = strchr(start, ' ');
        size_t len = end ? (size_t)(end - start) : strlen(start);
        printf(" %u", cluster_key_slot(start, unescape(start, len)));
        start = end ? end + 1 : NULL;
    }
    putchar('\n');
}

static uint32_t option_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        fail("an option lacks its value");
    return (uint32_t)strtoul(argv[++*i], NULL, 10);
}

int main(int argc, char **argv)
{
    driver_clock clock = {0};
    cluster_options options = {.now_ms = driver_now_ms, .clock_context = &clock};
    const char **seeds = must(calloc((size_t)argc, sizeof *seeds));
    size_t seed_count = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--timeout") == 0)
            options.timeout_ms = option_value(argc, argv, &i);
        else if (strcmp(argv[i], "--redirects") == 0)
            options.max_redirects = option_value(argc, argv, &i);
        else if (strcmp(argv[i], "--retry") == 0)
            options.retry_ms = option_value(argc, argv, &i);
        else if (strcmp(argv[i], "--max-retry") == 0)
            options.max_retry_ms = option_value(argc, argv, &i);
        else if (strcmp(argv[i], "--manual-clock") == 0)
            clock.manual = true;
        else
            seeds[seed_count++] = argv[i];
    }
    char error[512];
    cluster_client *c = cluster_client_connect(seeds, seed_count, &options, error, sizeof error);
    free(seeds);
    if (c == NULL) {
        printf("error %s\n", error);
        return 1;
    }
    printf("ready\n");
    fflush(stdout);

    batch b = {0};
    char *line = NULL;
    size_t room = 0;
    ssize_t got;
    while ((got = getline(&line, &room, stdin)) >= 0) {
        if (got > 0 && line[got - 1] == '\n')
            line[--got] = '\0';
        if (got == 0) {
            batch_run(c, &b);
        } else if (strncmp(line, ":slot", 5) == 0) {
            print_slots(line[5] == ' ' ? line + 6 : line + 5);
        } else if (strcmp(line, ":stats") == 0) {
            print_stats(c);
        } else if (strcmp(line, ":nodes") == 0) {
            print_nodes(c);
        } else if (strncmp(line, ":advance ", 9) == 0) {
            clock.offset_ms += strtoull(line + 9, NULL, 10);
            printf("ok\n");
        } else if (strncmp(line, ":load ", 6) == 0) {
            char prefix[64], verb[8];
            size_t count, size;
            if (sscanf(line + 6, "%63s %zu %zu %7s", prefix, &count, &size, verb) == 4)
                run_load(c, prefix, count, size, verb);
            else
                printf("error bad :load\n");
        } else {
            batch_add(&b, must(strdup(line)));
        }
        fflush(stdout);
    }
    free(line);
    batch_clear(&b);
    free(b.cmds);
    free(b.lines);
    cluster_client_free(c);
    return 0;
}
