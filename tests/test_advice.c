/* SPDX-License-Identifier: MIT */
/* How cw_wait would wait on a queue now (layer 6.3, src/advice.c): the
 * expected wait it reports and what feeds it, its answer against what an
 * auto wait then does, and the arguments it rejects. */
#include "harness.h"

#include <stdio.h>
#include <string.h>

#include "clfixture.h"
#include "cw.h"

/* An in-order queue of the fixture's context and device that no wait has
 * used: cw has no estimate of it. */
static cl_command_queue fresh_queue(void) {
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(host.context, host.device, 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    return q;
}

static cw_advice advice(cl_command_queue q, const cw_wait_options *o) {
    cw_advice a;
    memset(&a, 0xab, sizeof a);
    assert_int_equal(cw_advice_get(q, o, &a, sizeof a), CW_OK);
    return a;
}

static uint64_t driver_waits(void) {
    cw_stats_auto a;
    assert_int_equal(cw_stats_auto_get(&a, sizeof a), CW_OK);
    return a.driver_waits;
}

/* Wait with `o` on a marker of `q` gated on a user event that another
 * thread sets 5 ms later, so that the wait finds it unfinished, and say
 * whether the driver's own wait served it. */
static bool served_by_driver(cl_command_queue q, const cw_wait_options *o) {
    struct later l = {.ev = user_event(), .delay_us = 5000, .status = CL_COMPLETE};
    cl_event ev;
    assert_int_equal(clEnqueueMarkerWithWaitList(q, 1, &l.ev, &ev), CL_SUCCESS);
    assert_int_equal(clFlush(q), CL_SUCCESS); /* for a wait with CW_WAIT_NO_FLUSH */
    uint64_t before = driver_waits();
    pthread_t t = cw_test_spawn(set_later, &l);
    assert_int_equal(cw_wait(ev, o, NULL), CW_OK);
    uint64_t after = driver_waits();
    cw_test_join(t);
    clReleaseEvent(ev);
    clReleaseEvent(l.ev);
    return after > before;
}

/* A queue no wait has used has no expected wait, and nothing learned in
 * this process hands a wait to the driver's own: auto has made no trial. */
static void a_new_queue_expects_nothing(void **state) {
    (void)state;
    cl_command_queue q = fresh_queue();
    cw_advice a = advice(q, NULL);
    assert_int_equal(a.expected_ns, 0);
    assert_int_equal(a.driver_wait, 0);
    clReleaseCommandQueue(q);
}

/* What the caller reports it waited feeds the queue's estimate as cw's own
 * waits do: the first length is the estimate; a wait under 10 µs (work as
 * good as done) is left out; waits of cw_wait on the queue feed it too,
 * with no more than the wait lasted. */
static void waits_feed_the_expected_wait(void **state) {
    (void)state;
    cl_command_queue q = fresh_queue();
    assert_int_equal(cw_advice_waited(q, 50000000u), CW_OK);
    assert_int_equal(advice(q, NULL).expected_ns, 50000000u);
    assert_int_equal(cw_advice_waited(q, 5000u), CW_OK);
    assert_int_equal(advice(q, NULL).expected_ns, 50000000u);

    /* A cooperative wait on a marker gated on a user event that another
     * thread sets 20 ms later: the wait finds it unfinished, and its
     * length is the estimate of a queue cw knew nothing of (a second
     * queue, alive beside the first, so not one at its address). */
    cl_command_queue first = q;
    q = fresh_queue();
    struct later l = {.ev = user_event(), .delay_us = 20000, .status = CL_COMPLETE};
    cl_event marker;
    assert_int_equal(clEnqueueMarkerWithWaitList(q, 1, &l.ev, &marker), CL_SUCCESS);
    cw_wait_options o = {.strategy = CW_STRATEGY_COOPERATIVE};
    uint64_t began = cw_now_ns();
    pthread_t t = cw_test_spawn(set_later, &l);
    assert_int_equal(cw_wait(marker, &o, NULL), CW_OK);
    uint64_t took = cw_now_ns() - began;
    cw_test_join(t);
    uint64_t expected = advice(q, &o).expected_ns;
    assert_true(expected > 0 && expected <= took);
    clReleaseEvent(marker);
    clReleaseEvent(l.ev);
    clReleaseCommandQueue(q);
    clReleaseCommandQueue(first);
}

/*
 * The answer is what auto's wait does. Seeded with a line that settles
 * every way on the driver's own wait (it sleeps, 4 of 4 trials; each class
 * of long waits timed it at half the callback wait's CPU), a queue whose
 * waits are 1 ms is the driver's under auto, whether the model's
 * callbacks are late for it (50 µs or more: the own wait's verdict) or not
 * (the near class's, as no spin is planned for 1 ms): the advice says so,
 * and the wait that follows counts one wait in the driver's own. A queue
 * with no expected wait yet is the driver's only where callbacks are late
 * even for the shortest waits (pocl7, nvidia): the wait does as the advice
 * says, whichever it is. Not with a timeout, without the flush, or under
 * cooperative: there the advice says no and no such wait is counted. The
 * blocking strategy is the driver's wait itself.
 */
static void the_advice_is_what_auto_does(void **state) {
    (void)state;
    cw__driver *d = settled_driver();
    if (!cw__driver_lateness_known(d))
        cw__driver_lateness_sample(d, 1000); /* a probe kept off the CPU (clfixture.h) */
    char text[2048];
    assert_int_equal(cw_learned_export(text, sizeof text, NULL), CW_OK);
    const char *values = text;
    for (int i = 0; i < 4; ++i) {
        values = strchr(values, '\t');
        assert_non_null(values);
        ++values;
    }
    char line[2600];
    snprintf(line, sizeof line,
             "%.*slateness=- own=4/4 long=16/8/80000/8/160000 short=16/8/80000/8/160000\n",
             (int)(values - text), text);
    unsigned seeded = 0;
    assert_int_equal(cw_learned_import(line, &seeded), CW_OK);
    assert_int_equal(seeded, 1);

    cl_command_queue q = fresh_queue();
    assert_int_equal(cw_advice_waited(q, 1000000u), CW_OK);
    cw_advice a = advice(q, NULL);
    assert_int_equal(a.expected_ns, 1000000u);
    assert_int_equal(a.driver_wait, 1);
    assert_true(served_by_driver(q, NULL));
    cl_command_queue unknown = fresh_queue();
    a = advice(unknown, NULL);
    assert_int_equal(a.expected_ns, 0);
    assert_int_equal(a.driver_wait, served_by_driver(unknown, NULL));
    clReleaseCommandQueue(unknown);

    const cw_wait_options others[] = {
        {.strategy = CW_STRATEGY_AUTO, .timeout_us = 10000000},
        {.strategy = CW_STRATEGY_AUTO, .flags = CW_WAIT_NO_FLUSH},
        {.strategy = CW_STRATEGY_COOPERATIVE},
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; ++i) {
        assert_int_equal(advice(q, &others[i]).driver_wait, 0);
        assert_false(served_by_driver(q, &others[i]));
    }
    cw_wait_options blocking = {.strategy = CW_STRATEGY_BLOCKING};
    assert_int_equal(advice(q, &blocking).driver_wait, 1);
    blocking.timeout_us = 1000000;
    assert_int_equal(advice(q, &blocking).driver_wait, 0);
    clReleaseCommandQueue(q);
}

/* Bad arguments, options cw_wait rejects (and one it accepts: the latency
 * preference), and a short `size`: only that many bytes are written. A
 * strategy other than auto asks OpenCL nothing, so its answer needs no
 * real queue. */
static void arguments_and_short_sizes(void **state) {
    (void)state;
    cw_advice a;
    assert_int_equal(cw_advice_get(NULL, NULL, &a, sizeof a), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_advice_get(host.queue, NULL, NULL, sizeof a), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_advice_get(host.queue, NULL, &a, 0), CW_ERR_INVALID_ARGUMENT);
    cw_wait_options bad = {.reserved = {1}};
    assert_int_equal(cw_advice_get(host.queue, &bad, &a, sizeof a), CW_ERR_INVALID_ARGUMENT);
    bad = (cw_wait_options){.flags = 1u << 30};
    assert_int_equal(cw_advice_get(host.queue, &bad, &a, sizeof a), CW_ERR_INVALID_ARGUMENT);
    bad = (cw_wait_options){.strategy = CW_STRATEGY_COUNT};
    assert_int_equal(cw_advice_get(host.queue, &bad, &a, sizeof a), CW_ERR_INVALID_ARGUMENT);
    assert_int_equal(cw_advice_waited(NULL, 1000000u), CW_ERR_INVALID_ARGUMENT);
    cw_wait_options latency = {.flags = CW_WAIT_LATENCY};
    assert_int_equal(cw_advice_get(host.queue, &latency, &a, sizeof a), CW_OK);

    cl_command_queue q = fresh_queue();
    assert_int_equal(cw_advice_waited(q, 3000000u), CW_OK);
    unsigned char bytes[sizeof(cw_advice) + 8];
    memset(bytes, 0xab, sizeof bytes);
    assert_int_equal(cw_advice_get(q, NULL, (cw_advice *)bytes, sizeof(uint64_t)), CW_OK);
    uint64_t expected;
    memcpy(&expected, bytes, sizeof expected);
    assert_int_equal(expected, 3000000u);
    for (size_t i = sizeof(uint64_t); i < sizeof bytes; ++i)
        assert_int_equal(bytes[i], 0xab);
    clReleaseCommandQueue(q);

    int not_a_queue = 0;
    cw_wait_options coop = {.strategy = CW_STRATEGY_COOPERATIVE};
    a = advice((cl_command_queue)&not_a_queue, &coop);
    assert_int_equal(a.expected_ns, 0);
    assert_int_equal(a.driver_wait, 0);
}

static const struct CMUnitTest advice_tests[] = {
    cmocka_unit_test(a_new_queue_expects_nothing),
    cmocka_unit_test(waits_feed_the_expected_wait),
    cmocka_unit_test(the_advice_is_what_auto_does),
    cmocka_unit_test(arguments_and_short_sizes),
};

CW_TEST_MAIN(advice_tests, open_host, close_host)
