/* SPDX-License-Identifier: MIT */
/* What auto learned, as text (layer 6.0, src/learned.c): the line a
 * platform exports, the decisions a line seeds and those it leaves, and
 * the lines and arguments it rejects. */
#include "harness.h"

#include <stdio.h>
#include <string.h>

#include "clfixture.h"
#include "policyfix.h"
#include "cw.h"

/* The record of the fixture's platform once the probe's lateness sample is
 * in (clfixture.h): then the export has a line for it, whose key the cases
 * reuse. A probe kept off the CPU (a loaded machine) may see its marker
 * finish too late to time it; then a sample of the case's own stands in
 * for the probe's. */
static cw__driver *settled(void) {
    cw__driver *d = settled_driver();
    if (!cw__driver_lateness_known(d))
        cw__driver_lateness_sample(d, 1000);
    assert_true(cw__driver_lateness_known(d));
    return d;
}

/* The exported text: one line, "cw VERSION", three more key fields, the
 * values; `key` gets the four key fields with their tabs. */
static void export_one(char *text, size_t size, char *key, size_t key_size) {
    size_t needed = 0;
    assert_int_equal(cw_learned_export(text, size, &needed), CW_OK);
    assert_true(needed > 0 && needed < size);
    assert_int_equal(strlen(text), needed);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "cw %s\t", cw_version_string());
    assert_memory_equal(text, prefix, strlen(prefix));
    assert_non_null(strchr(text, '\n'));
    assert_true(strchr(text, '\n') + 1 == text + needed); /* one line */
    const char *tab = text;
    for (int i = 0; i < 4; ++i) {
        tab = strchr(tab, '\t');
        assert_non_null(tab);
        ++tab;
    }
    assert_null(strchr(tab, '\t'));
    size_t klen = (size_t)(tab - text);
    assert_true(klen < key_size);
    memcpy(key, text, klen);
    key[klen] = '\0';
}

/* A platform exports the lateness it learned and nothing it did not; a
 * line with its key seeds the decisions the process has not made (the
 * own-wait verdict, the long-wait way), not the one it has (the lateness),
 * and seeds nothing twice. */
static void a_line_seeds_what_the_process_has_not_learned(void **state) {
    (void)state;
    cw__driver *d = settled();
    char text[2048], key[1024];
    export_one(text, sizeof text, key, sizeof key);
    char want[128];
    snprintf(want, sizeof want, "lateness=%llu own=- long=- short=-\n",
             (unsigned long long)cw__driver_lateness_ns(d));
    assert_string_equal(strchr(text, '\0') - strlen(want), want);
    assert_true(vote_open(d));

    /* Seeded from a line with no short part: the own wait sleeps (3 of 4
     * trials slept), near long waits are the own wait's (8 trials each
     * way, the own at half the callback's CPU), short ones unknown, and a
     * lateness far from the one learned here. Waits of no class (from
     * CW__CLASS_NEAR_END_NS) park on the callback. */
    uint64_t before = cw__driver_lateness_ns(d);
    char line[2048];
    snprintf(line, sizeof line, "%slateness=%llu own=4/3 long=16/8/80000/8/160000\n", key,
             (unsigned long long)before + 20000000u);
    unsigned seeded = 99;
    assert_int_equal(cw_learned_import(line, &seeded), CW_OK);
    assert_int_equal(seeded, 1);
    assert_int_equal(cw__driver_lateness_ns(d), before);
    assert_false(vote_open(d));
    assert_true(vote_sleeps(d));
    assert_int_equal(class_way(d, CW__VOTE_MIN_NS, cw_now_ns()), WAY_DRIVER);
    assert_int_equal(class_way(d, CW__CLASS_NEAR_END_NS, cw_now_ns()), WAY_CALLBACK);
    assert_int_equal(class_way(d, CW__VOTE_MIN_NS / 2u, cw_now_ns()), WAY_TRIAL_DRIVER);

    /* The export now carries the seeded decisions; a second import finds
     * nothing left to seed. */
    export_one(text, sizeof text, key, sizeof key);
    assert_non_null(strstr(text, " own=4/3 long=16/8/80000/8/160000 short=-\n"));
    assert_int_equal(cw_learned_import(line, &seeded), CW_OK);
    assert_int_equal(seeded, 0);
}

/* A line written by cw 1.1, with a `far=` part (a class of waits from
 * CW__CLASS_NEAR_END_NS that auto no longer has), still seeds: its near
 * and short parts each keep their class (near seeded for the callback,
 * short for the driver's own wait); the far part, though it decided for
 * the driver's own wait, is read past: those waits park on the callback.
 * The export writes no far part. */
static void a_line_with_a_far_part_still_seeds(void **state) {
    (void)state;
    cw__driver *d = settled();
    char text[2048], key[1024], line[2048];
    export_one(text, sizeof text, key, sizeof key);
    snprintf(line, sizeof line,
             "%slateness=- own=- long=16/8/240000/8/160000 far=8/4/40000/4/80000 "
             "short=16/8/160000/8/200000",
             key);
    unsigned seeded = 0;
    assert_int_equal(cw_learned_import(line, &seeded), CW_OK);
    assert_int_equal(seeded, 1);
    for (int i = 0; i < 4; ++i) {
        assert_int_equal(class_way(d, CW__VOTE_MIN_NS, cw_now_ns()), WAY_CALLBACK);
        assert_int_equal(class_way(d, CW__VOTE_MIN_NS - 1u, cw_now_ns()), WAY_DRIVER);
        assert_int_equal(class_way(d, CW__CLASS_NEAR_END_NS, cw_now_ns()), WAY_CALLBACK);
    }
    assert_false(drv_settled(d, CW__CLASS_NEAR_END_NS, true, cw_now_ns()));
    assert_true(vote_open(d));
    export_one(text, sizeof text, key, sizeof key);
    assert_non_null(strstr(text, " long=16/8/240000/8/160000 short=16/8/160000/8/200000\n"));
    assert_null(strstr(text, "far="));
}

/* The short class's decision (waits expected under CW__VOTE_MIN_NS
 * that auto parks for at once) is seeded and written back as the near
 * class's is, the near class left to its trials. */
static void seeded_short_wait_verdict_keeps_its_class(void **state) {
    (void)state;
    cw__driver *d = settled();
    char text[2048], key[1024], line[2048];
    export_one(text, sizeof text, key, sizeof key);
    snprintf(line, sizeof line, "%slateness=- own=- long=- short=16/8/160000/8/200000", key);
    unsigned seeded = 0;
    assert_int_equal(cw_learned_import(line, &seeded), CW_OK);
    assert_int_equal(seeded, 1);
    for (int i = 0; i < 4; ++i)
        assert_int_equal(class_way(d, CW__VOTE_MIN_NS - 1u, cw_now_ns()), WAY_DRIVER);
    assert_true(drv_settled(d, CW__VOTE_MIN_NS - 1u, true, cw_now_ns()));
    assert_int_equal(class_way(d, CW__VOTE_MIN_NS, cw_now_ns()), WAY_TRIAL_DRIVER);
    export_one(text, sizeof text, key, sizeof key);
    assert_non_null(strstr(text, " long=- short=16/8/160000/8/200000\n"));
}

/* A near class that a driver trial spinning throughout decided (one
 * trial, its tickets not spent) is written with its tickets spent, and a
 * line like it seeds the callback wait, with no trial. */
static void a_class_a_spinning_trial_decided_is_kept_decided(void **state) {
    (void)state;
    cw__driver *d = settled();
    const uint64_t near = 5u * CW__VOTE_MIN_NS;
    if (cw__driver_lateness_ns(d) >= CW__LATE_FLOOR_NS)
        skip(); /* a late platform (a driver model's) runs no class trials */
    assert_int_equal(class_way(d, near, cw_now_ns()), WAY_TRIAL_DRIVER);
    class_sample(d, near, true, near, near);
    assert_int_equal(class_way(d, near, cw_now_ns()), WAY_CALLBACK);
    char text[2048], key[1024], want[64];
    export_one(text, sizeof text, key, sizeof key);
    snprintf(want, sizeof want, " long=%u/1/%llu/0/0 ", (unsigned)CW__CLASS_TICKETS,
             (unsigned long long)near);
    assert_non_null(strstr(text, want));

    /* Seeded into the short class of the same record, which has made no
     * trial yet: its waits park on the callback at once. */
    char line[2048];
    snprintf(line, sizeof line, "%slateness=- own=- long=- short=%u/1/%llu/0/0\n", key,
             (unsigned)CW__CLASS_TICKETS, (unsigned long long)CW__VOTE_MIN_NS);
    unsigned seeded = 0;
    assert_int_equal(cw_learned_import(line, &seeded), CW_OK);
    assert_int_equal(seeded, 1);
    for (int i = 0; i < 4; ++i)
        assert_int_equal(class_way(d, CW__VOTE_MIN_NS - 1u, cw_now_ns()), WAY_CALLBACK);
}

/* Lines of another cw, of another platform, or with values out of shape
 * seed nothing and leave the record as it was; a good line after them
 * still counts. */
static void lines_of_other_keys_and_malformed_ones_seed_nothing(void **state) {
    (void)state;
    cw__driver *d = settled();
    char text[2048], key[1024];
    export_one(text, sizeof text, key, sizeof key);
    const char *values_bad[] = {
        "lateness=- own=5/6 long=-",                 /* more asleep than trials */
        "lateness=- own=4/3 long=-  ",               /* trailing text */
        "lateness=- own=4/x long=-",                 /* not a number */
        "lateness=- own=4 long=-",                   /* a count missing */
        "own=4/3 lateness=- long=-",                 /* out of order */
        "lateness=- own=- long=-",                   /* nothing known */
        "lateness=- own=- long=1/2/3/4",             /* a field short */
        "lateness=- own=- long=9999999/8/1/8/1",     /* a count too large */
        "lateness=- own=4/3 long=-\tmore",           /* a sixth field */
        "lateness=- own=- long=- far=1/2/3/4",       /* a far field short */
        "lateness=- own=- long=- far=",              /* a far part empty */
        "lateness=- own=- far=- long=1/1/1/1/1",     /* out of order */
        "lateness=- own=4/3 long=- far=- x",         /* text after the far part */
        "lateness=- own=4/3 long=- short=- far=-",   /* a far part after the short */
        "lateness=- own=- long=- far=1/1/1/1/1",     /* only a far part: nothing used */
        "lateness=- own=- long=- short=1/2/3",       /* a short field short */
        "lateness=- own=4/3 long=- short=- x",       /* text after the short part */
        "lateness=- own=4/3 long=- far=- short=- x", /* the same after a far part */
        "lateness=- own=2/1 long=-",                 /* a vote not decided */
    };
    for (size_t i = 0; i < sizeof values_bad / sizeof values_bad[0]; ++i) {
        char line[2048];
        snprintf(line, sizeof line, "%s%s\n", key, values_bad[i]);
        unsigned seeded = 99;
        assert_int_equal(cw_learned_import(line, &seeded), CW_OK);
        if (seeded != 0)
            fail_msg("seeded from '%s'", values_bad[i]);
        assert_true(vote_open(d));
    }
    /* Another cw version, another platform name: the first two key fields
     * changed; then the good line, after a blank one. */
    char other_cw[2048], other_platform[2048];
    const char *rest = strchr(key, '\t');
    snprintf(other_cw, sizeof other_cw, "cw 0.0.0%slateness=- own=4/4 long=-\n", rest);
    const char *after_name = strchr(rest + 1, '\t');
    snprintf(other_platform, sizeof other_platform,
             "%.*s\tNo Such Platform%slateness=- own=4/4 long=-\n", (int)(rest - key), key,
             after_name);
    char all[8192];
    snprintf(all, sizeof all, "%s%s\n%slateness=- own=3/0 long=-", other_cw, other_platform, key);
    unsigned seeded = 0;
    assert_int_equal(cw_learned_import(other_cw, &seeded), CW_OK);
    assert_int_equal(seeded, 0);
    assert_int_equal(cw_learned_import(other_platform, &seeded), CW_OK);
    assert_int_equal(seeded, 0);
    assert_true(vote_open(d));
    assert_int_equal(cw_learned_import(all, &seeded), CW_OK);
    assert_int_equal(seeded, 1);
    assert_false(vote_open(d));
    assert_false(vote_sleeps(d)); /* 3 of 3 spun: decided */
}

/* The arguments: a NULL text, a NULL buffer with room; a buffer too small
 * for the line gets no part of it, and the length asked for alone. */
static void arguments_and_short_buffers(void **state) {
    (void)state;
    settled();
    unsigned seeded = 7;
    assert_int_equal(cw_learned_import(NULL, &seeded), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(seeded, 0);
    assert_int_equal(cw_learned_import("", NULL), CW_OK);
    assert_int_equal(cw_learned_export(NULL, 16, NULL), CW_ERR_INVALID_ARGUMENT);
    size_t needed = 0;
    assert_int_equal(cw_learned_export(NULL, 0, &needed), CW_OK);
    assert_true(needed > 0);
    char small[16];
    memset(small, 'x', sizeof small);
    size_t again = 0;
    assert_int_equal(cw_learned_export(small, sizeof small, &again), CW_OK);
    assert_int_equal(again, needed);
    assert_string_equal(small, "");
    char exact[2048];
    assert_true(needed + 1 <= sizeof exact);
    assert_int_equal(cw_learned_export(exact, needed + 1, &again), CW_OK);
    assert_int_equal(strlen(exact), needed);
    assert_int_equal(cw_learned_export(exact, needed, &again), CW_OK);
    assert_string_equal(exact, "");
}

static const struct CMUnitTest learned_tests[] = {
    cmocka_unit_test(a_line_seeds_what_the_process_has_not_learned),
    cmocka_unit_test(a_line_with_a_far_part_still_seeds),
    cmocka_unit_test(seeded_short_wait_verdict_keeps_its_class),
    cmocka_unit_test(a_class_a_spinning_trial_decided_is_kept_decided),
    cmocka_unit_test(lines_of_other_keys_and_malformed_ones_seed_nothing),
    cmocka_unit_test(arguments_and_short_buffers),
};

CW_TEST_MAIN(learned_tests, open_host, close_host)
