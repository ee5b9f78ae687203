/*
 * module/command.h - what every command of the module shares: argument parsing (the
 * creation options every type takes included), the errors clients match on, the
 * server's clock and seeds, the command tables, how a write is replicated, and the
 * adds of items (TYPE.ADD, TYPE.MADD, BF.INSERT), answered one way for every type.
 *
 * Each data type (t_bloom.c, t_window.c, t_dbf.c) describes its commands in one table
 * of command_spec rows, and value.c the two every type has (SCANDUMP, LOADCHUNK);
 * command_register makes from each row the command, its flags, its arity and its key
 * specs (so Redis Cluster routes every command by its key and the server checks arity
 * before the handler runs).  Nothing else lists the commands.
 */
#ifndef ONCE_MODULE_COMMAND_H
#define ONCE_MODULE_COMMAND_H

#include "redis_api.h"

#include "once.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Errors, verbatim where RedisBloom's clients or users match on them. */
#define ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NOT_FOUND "ERR not found"
#define ERR_EXISTS "ERR item exists"
#define ERR_UNKNOWN_ARGUMENT "ERR unknown argument received"
#define ERR_MEMORY_LIMIT "ERR operation exceeds the object's memory limit (once.max-memory)"
#define ERR_GROWTH_LIMIT                                                                      \
    "ERR operation exceeds the object's memory limit (MAXMEMORY, or once.max-memory)"
#define ERR_SUBFILTER_LIMIT                                                                   \
    "ERR the filter holds its 64 sub-filters, the most it can: it is full (a larger "        \
    "capacity or EXPANSION grows further)"
#define ERR_NO_MEMORY "ERR out of memory"
#define ERR_TIME                                                                              \
    "ERR event time refused: more than the window's MAXJUMP ahead of its clock"
#define ERR_INCOMPLETE                                                                        \
    "ERR the key holds a load in progress: send its remaining chunks (LOADCHUNK) or delete it"

/* Which keys a command names: its first argument only, or (KEYS_FIRST_AND_REST, as
 * BF.MERGE dest src...) the first, written, and every later one, read. */
typedef enum command_keys { KEYS_FIRST = 1, KEYS_FIRST_AND_REST } command_keys;

typedef struct command_spec {
    const char *name;   /* lower case, as the server's errors quote it: "bf.add" */
    rm_command_fn handler;
    const char *flags;  /* the server's command flags: "write deny-oom", "readonly fast" */
    int arity;          /* with the name: N exactly, -N at least N */
    command_keys keys;
    uint64_t key_flags; /* the first key's access: RM_KEY_RW | RM_KEY_INSERT, ... */
    const char *summary;
} command_spec;

/* The first key's access, for command_spec.key_flags. */
#define KEY_WRITES (RM_KEY_RW | RM_KEY_UPDATE)
#define KEY_CREATES (RM_KEY_RW | RM_KEY_INSERT)
#define KEY_READS (RM_KEY_RO | RM_KEY_ACCESS)

/* Create every command of a table with its key specs and arity.  RM_OK, or RM_ERR
 * after logging which command the server refused. */
int command_register(RedisModuleCtx *ctx, const command_spec *table, size_t count);

/* Is the command replayed: sent by the master or read from the AOF?  Then it must do
 * what it did where it first ran, whatever this server's settings (its limits are
 * carried in the command). */
bool command_replayed(RedisModuleCtx *ctx);
/* MAXMEMORY bytes, a new object's memory limit: at least 4096 and at most
 * once.max-memory (any, when replayed).  NULL or the error. */
const char *parse_max_memory(RedisModuleCtx *ctx, RedisModuleString *arg, uint64_t *out);
#define MIN_MAX_MEMORY 4096
/* A target error rate as asked for (ERROR, error_rate): NULL, or the error to reply.
 * Outside (0, 1) RedisBloom's reply, which its clients match on; inside it but below
 * ONCE_MIN_ERROR, the range the library plans for (once.h). */
const char *check_error_rate(double rate);
#define ERR_RATE_RANGE "ERR (0 < error rate range < 1)"
#define ERR_RATE_BELOW                                                                        \
    "ERR error rate below 1e-9: the smallest target rate a filter plans for (1e-9 <= error " \
    "rate < 1)"

/*
 * The creation options every type takes, checked one way (each NULL, or the error to
 * reply, RedisBloom's text where its clients match on one).  A window's CAPACITY is
 * another quantity (keys per span, at most 2^40) with its own check (t_window.c).
 */
/* An error rate: a number (else "ERR bad error rate"), then check_error_rate. */
const char *parse_error_rate(RedisModuleString *arg, double *out);
/* A set's capacity (BF, and each DBF row): an integer above 0. */
const char *parse_capacity(RedisModuleString *arg, long long *out);
/* A hash seed: any unsigned 64-bit integer. */
const char *parse_seed(RedisModuleString *arg, uint64_t *out);
/* SEED s or MAXMEMORY bytes at argv[i], the words after RESERVE's numbers that BF and
 * DBF share: *used is how many arguments it took (0: neither word, nothing parsed). */
typedef struct seed_and_limit {
    uint64_t seed;
    bool seed_given;
    uint64_t max_bytes; /* the object's memory limit */
} seed_and_limit;
const char *parse_seed_or_limit(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int i,
                                seed_and_limit *o, int *used);

/*
 * The replicated form of a creation (BF.RESERVE, DBF.RESERVE, ONCE.RESERVE with every
 * option that decides the value's bytes): its words after the key, each kept as text
 * and sent as a string, so that no format string can drop a word or send the wrong
 * kind (a number passed where a C string was declared went out as a pointer once).
 * The one builder the three types use, also for the one other command a write sends
 * ahead of itself (ONCE.CLOCK, when a window's first write fixes its clock).
 */
#define CREATION_MAX_WORDS 24
typedef struct creation {
    const char *command;
    int count;
    char word[CREATION_MAX_WORDS][48];
} creation;

void creation_start(creation *c, const char *command);
void creation_word(creation *c, const char *word);
void creation_u64(creation *c, uint64_t value);
void creation_option(creation *c, const char *name, uint64_t value); /* NAME value */
void creation_rate(creation *c, double rate); /* %.17g: the same double on the replica */
/* Replicate `command key words...` (RM_Replicate; nothing is sent if the words did not
 * fit, which a test of every option guards). */
void creation_replicate(RedisModuleCtx *ctx, RedisModuleString *key, const creation *c);

/* Replicate a write to argv[1]: verbatim; or, when it sends `first` ahead of itself
 * (the creation of its key, made by this write, or a window's clock), `first` and then
 * the command itself, as `name` with its arguments (argv[1 ..]), never mixed with a
 * verbatim copy.  `name` NULL: argv[0], as the client spelled it. */
void replicate_write(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const char *name,
                     const creation *first);

/*
 * The items of an add (TYPE.ADD key item, TYPE.MADD key item ..., BF.INSERT ... ITEMS
 * item ...), answered in order: true for an item not present before, false for one
 * that was, stopping at the first item the filter refuses, whose place holds the error
 * (so the items before it are in, and none after it).  One item (`single`) is
 * answered bare, several as an array.
 */
typedef struct add_request {
    RedisModuleString **items;
    int count;
    uint64_t now_ms; /* every item's time (a window's event time); 0 for the others */
    bool single;
    /* Insert an item already present too (DBF.ADD: a counting set counts every
     * insertion), item by item: whether an item is present then depends on every
     * insertion before it, present items' included, which no batch call reports.
     * Otherwise the library's test-and-add in batches (once_test_and_add_batch_partial),
     * whose answers and effects are those of the one-key calls in order. */
    bool insert_present;
    /* The error of a refused item; NULL: reply_status's. */
    const char *(*refusal)(const once_filter *f, once_status st);
    /* Is a refusal of `st` one that undoes the whole command (the object's memory
     * limit: value_add_items)?  NULL: none does, each stays in its item's place. */
    bool (*undoes_all)(const once_filter *f, once_status st);
} add_request;

/* Add a->items to `f` and reply; how many took effect (all, or those before the one
 * refused). */
size_t add_items(RedisModuleCtx *ctx, once_filter *f, const add_request *a);
/* The same in two steps: add without replying (seen[i] for the items that took effect,
 * *done of them; the status of the one refused), then reply as add_items does. */
once_status add_items_quietly(once_filter *f, const add_request *a, uint8_t *seen,
                              size_t *done);
void reply_added(RedisModuleCtx *ctx, const once_filter *f, const add_request *a,
                 const uint8_t *seen, size_t done, once_status st);
/* The error of an item `f` refused for `st`: a->refusal's, or reply_status's. */
void reply_refusal(RedisModuleCtx *ctx, const once_filter *f, const add_request *a,
                   once_status st);
/* A refusal for memory (the object's limit, or the server's): the one undoes_all takes
 * where the refusal of an item is its memory's. */
bool refused_for_memory(const once_filter *f, once_status st);

/* Are items[0 .. count-1] present in `f` at now_ms?  Into present[i], through the
 * library's query batches (their lines requested ahead), with the answers of the
 * one-key queries in order; the first refusal (a time the window refuses) ends it. */
once_status query_items(const once_filter *f, RedisModuleString **items, size_t count,
                        uint64_t now_ms, uint8_t *present);

/* Does the calling client speak RESP3? */
bool client_resp3(RedisModuleCtx *ctx);

/* Case-insensitive comparison of an argument with a keyword. */
bool arg_is(RedisModuleString *arg, const char *word);
/* Strict numbers: the whole argument, no spaces, in range, NaN refused. */
bool arg_double(RedisModuleString *arg, double *out);
bool arg_long(RedisModuleString *arg, long long *out);
/* A non-negative integer up to `max`. */
bool arg_unsigned(RedisModuleString *arg, uint64_t max, uint64_t *out);
/* Any unsigned 64-bit integer in decimal (a seed). */
bool arg_u64(RedisModuleString *arg, uint64_t *out);

/* A new object's hash seed: drawn from the server's random source under
 * once.random-seeds yes, else one fixed seed (every object then shares its hashes, as
 * BF.MERGE between objects made apart needs).  Either way the seed is saved with the
 * object and replicated with its creation. */
uint64_t command_new_seed(void);
#define COMMAND_FIXED_SEED UINT64_C(0x6f6e63652d736565)

/* Reply with the error for a library status of a write (FULL meaning the memory
 * limit, TIME an event time the window's clock refuses); RM_OK. */
int reply_status(RedisModuleCtx *ctx, once_status status);

/* The words after the key of TYPE.CARD key ESTIMATE [CONFIDENCE c], from argv[2]:
 * *estimate tells whether ESTIMATE was given.  NULL, or the error to reply (with
 * *wrong_arity for a word without its value). */
#define CARD_DEFAULT_CONFIDENCE 0.95
const char *parse_card_estimate(RedisModuleString **argv, int argc, bool *estimate,
                                double *confidence, bool *wrong_arity);
/* Reply [estimate, low, high] for the distinct keys of `f` at now_ms (0 0 0 for NULL,
 * a missing key), or the error of the estimator. */
int reply_cardinality(RedisModuleCtx *ctx, const once_filter *f, uint64_t now_ms,
                      double confidence);

/* One pair of an INFO map (a flat array under RESP2): its label, then a count (an
 * integer) or a rate (a double). */
void reply_info_count(RedisModuleCtx *ctx, const char *label, uint64_t count);
void reply_info_rate(RedisModuleCtx *ctx, const char *label, double rate);

/* The last two pairs of an INFO map: "Format", the saved format the value writes (2,
 * or 1 for a value saved by a module of format 1, which keeps its probe), and
 * "Probe", how it places keys ("mixed", "linear"; once_stats.probe). */
#define INFO_FORMAT_PAIRS 2
void reply_format(RedisModuleCtx *ctx, const once_stats *s);

#endif /* ONCE_MODULE_COMMAND_H */
