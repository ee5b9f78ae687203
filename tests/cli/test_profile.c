/*
 * test_profile.c - the profile a state file keeps of the options that shape its keys
 * (programs/profile.c): every profile the CLI writes reads back the same, and the reader
 * refuses anything else, since the metadata of a state file is input like the rest.
 */
#include "testing.h"

#include "profile.h"

#include <string.h>

static bool same_profile(const run_profile *a, const run_profile *b)
{
    return a->key.field_count == b->key.field_count &&
           memcmp(a->key.fields, b->key.fields, a->key.field_count * sizeof a->key.fields[0]) ==
               0 &&
           a->key.whitespace == b->key.whitespace &&
           (a->key.whitespace || a->key.delimiter == b->key.delimiter) &&
           a->key.ignore_case == b->key.ignore_case && a->has_level == b->has_level &&
           (!a->has_level || a->level == b->level) && a->has_policy == b->has_policy &&
           (!a->has_policy || a->refresh == b->refresh) && a->has_time == b->has_time &&
           (!a->has_time ||
            (a->time_field == b->time_field &&
             (a->time_field == 0 || a->time_format == b->time_format)));
}

static void every_profile_reads_back(void)
{
    const char *lists[] = {NULL, "1", "2", "1,3", "3,1", "2-4,7", "1-64", "1000000", "5,5,5"};
    const char delimiters[] = {'\t', ',', ' ', '\0', '\r', (char)0xff};
    const once_type types[] = {ONCE_SCALABLE, ONCE_BLOCKED, ONCE_APBF, ONCE_APBBF, ONCE_TLBF,
                               ONCE_TIMER};
    uint64_t checked = 0;
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
        for (size_t d = 0; d < sizeof delimiters; d++)
            for (int flags = 0; flags < 8; flags++)
                for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
                    cli_options o;
                    memset(&o, 0, sizeof o);
                    o.key.delimiter = delimiters[d];
                    if (lists[l] != NULL)
                        REQUIRE(key_fields_parse(&o.key, lists[l]) == 0);
                    o.key.whitespace = flags & 1;
                    o.key.ignore_case = flags & 2;
                    o.refresh = flags & 4;
                    o.level = (uint32_t)(l % 9);
                    o.time_field = (unsigned)(d % 3);
                    o.time_format = (time_format)(flags % 3);
                    run_profile p, q;
                    profile_of_options(&p, &o, types[t]);
                    char text[PROFILE_TEXT_MAX];
                    size_t len = profile_encode(&p, text);
                    CHECK(len > 0 && len < PROFILE_TEXT_MAX);
                    CHECK(profile_decode(&q, text, len) == 0);
                    CHECK(same_profile(&p, &q));
                    /* Every proper prefix, and every single byte changed to a space or
                     * a letter that breaks its token, is refused or reads differently:
                     * never a crash.  A prefix cut at a line end is a profile missing
                     * lines, refused unless only optional lines were cut. */
                    for (size_t cut = 0; cut < len; cut++) {
                        run_profile r;
                        if (profile_decode(&r, text, cut) == 0)
                            CHECK(text[cut - 1] == '\n');
                    }
                    checked++;
                }
    fprintf(stderr, "%llu profiles read back\n", (unsigned long long)checked);
    /* The canonical field list: sorted, distinct, runs of three or more as ranges. */
    key_spec k;
    char out[KEY_FIELDS_TEXT];
    REQUIRE(key_fields_parse(&k, "7,2-4,3,9,10") == 0);
    key_fields_format(&k, out, sizeof out);
    CHECK(strcmp(out, "2-4,7,9,10") == 0);
}

static void foreign_profiles_refused(void)
{
    static const char *const bad[] = {
        "",
        "once-profile 2\nkey line\nsplit byte 9\ncase exact\n",
        "once-profile 1\nkey line\nsplit byte 9\n",                   /* no case */
        "once-profile 1\nkey line\ncase exact\n",                     /* no split */
        "once-profile 1\nsplit byte 9\ncase exact\n",                 /* no key */
        "once-profile 1\nkey line\nsplit byte 9\ncase exact",         /* no last newline */
        "once-profile 1\nkey fields 0\nsplit byte 9\ncase exact\n",
        "once-profile 1\nkey fields 1-65\nsplit byte 9\ncase exact\n",
        "once-profile 1\nkey fields\nsplit byte 9\ncase exact\n",
        "once-profile 1\nkey words\nsplit byte 9\ncase exact\n",
        "once-profile 1\nkey line\nsplit byte 256\ncase exact\n",
        "once-profile 1\nkey line\nsplit byte 10\ncase exact\n",      /* a newline */
        "once-profile 1\nkey line\nsplit byte -1\ncase exact\n",
        "once-profile 1\nkey line\nsplit tabs\ncase exact\n",
        "once-profile 1\nkey line\nsplit byte 9\ncase upper\n",
        "once-profile 1\nkey line\nsplit byte 9\ncase exact\nlevel 9\n",
        "once-profile 1\nkey line\nsplit byte 9\ncase exact\nlevel\n",
        "once-profile 1\nkey line\nsplit byte 9\ncase exact\npolicy last\n",
        "once-profile 1\nkey line\nsplit byte 9\ncase exact\ntime field 0 epoch\n",
        "once-profile 1\nkey line\nsplit byte 9\ncase exact\ntime field 1 rfc822\n",
        "once-profile 1\nkey line\nsplit byte 9\ncase exact\ntime field x epoch\n",
        "once-profile 1\nkey line\nsplit byte 9\ncase exact\ntime sundial\n",
        "once-profile 1\nkey line\nsplit byte 9\ncase exact\nnormalize nfc\n", /* newer */
        "once-profile 1\nkey line\nsplit byte 9\ncase exact\n\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_profile p;
        size_t len = strlen(bad[i]);
        if (profile_decode(&p, bad[i], len) == 0)
            fprintf(stderr, "accepted: %s\n", bad[i]);
        CHECK(profile_decode(&p, bad[i], len) != 0);
    }
    static const char with_nul[] = "once-profile 1\nkey line\nsplit byte 9\0\ncase exact\n";
    run_profile q;
    CHECK(profile_decode(&q, with_nul, sizeof with_nul - 1) != 0);
    char big[PROFILE_TEXT_MAX + 2];
    memset(big, 'x', sizeof big);
    run_profile p;
    CHECK(profile_decode(&p, big, sizeof big) != 0);
    const char *good = "once-profile 1\nkey line\nsplit byte 9\ncase exact\n";
    CHECK(profile_decode(&p, good, strlen(good)) == 0);
}

static const testing_case cases[] = {
    {"every_profile_reads_back", every_profile_reads_back},
    {"foreign_profiles_refused", foreign_profiles_refused},
};

TESTING_MAIN(cases)
