/* SPDX-License-Identifier: MIT */
/* Layer 6, the OpenCL-event unit: callbacks signal tokens, late ones touch nothing. */
#include "harness.h"

#include "clevent.h"
#include "clfixture.h"

static void callback_runs_inline_on_completed_event(void **state) {
    (void)state;
    cl_int err;
    cl_event ev = clCreateUserEvent(host.context, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clSetUserEventStatus(ev, CL_COMPLETE), CL_SUCCESS);
    cw_completion *c;
    assert_int_equal(cw_completion_acquire(CW_COMPLETION_YIELD, &c), CW_OK);
    assert_int_equal(cw__event_attach(c, ev, &err), CW_OK);
    /* Signalled before attach returned, on this very thread. */
    assert_true(cw_completion_is_signalled(c));
    assert_int_equal(cw_completion_status(c), CL_COMPLETE);
    assert_true(cw_completion_release(c, NULL));
    clReleaseEvent(ev);
}

/* Abandon a completion attached to an OpenCL event; the driver's callback
 * then runs (in the thread completing the user event) on a recycled slot. */
static void abandoned_attach_then_callback_fires(void **state) {
    (void)state;
    cl_int err;
    cl_event ev = clCreateUserEvent(host.context, &err);
    assert_int_equal(err, CL_SUCCESS);
    cw_completion *c;
    assert_int_equal(cw_completion_acquire(CW_COMPLETION_YIELD, &c), CW_OK);
    assert_int_equal(cw__event_attach(c, ev, &err), CW_OK);
    cw_futex_parker fp;
    cw_futex_parker_init(&fp);
    assert_int_equal(cw_completion_wait(c, &fp.parker, cw_deadline_after_ns(2000000)),
                     CW_ERR_TIMEOUT);
    assert_false(cw_completion_release(c, NULL));
    /* Someone else takes the slot meanwhile: the late callback must not signal it. */
    cw_completion *d;
    assert_int_equal(cw_completion_acquire(CW_COMPLETION_YIELD, &d), CW_OK);
    struct later u = {.ev = ev, .delay_us = 5000, .status = CL_COMPLETE};
    pthread_t t = cw_test_spawn(set_later, &u);
    cw_test_join(t);
    assert_false(cw_completion_is_signalled(d));
    assert_false(cw_completion_release(d, NULL));
    clReleaseEvent(ev);
}

/* Status reads map OpenCL's answers: a final status as it is, a bad handle
 * (NULL here: every implementation rejects it) as CW_ERR_INVALID_EVENT. */
static void read_status_maps_errors(void **state) {
    (void)state;
    cl_event ev = user_event();
    cl_int st = 0;
    assert_int_equal(cw__read_status(ev, &st), CW_OK);
    assert_int_equal(st, CL_SUBMITTED);
    assert_int_equal(clSetUserEventStatus(ev, -5), CL_SUCCESS);
    assert_int_equal(cw__read_status(ev, &st), CW_OK);
    assert_int_equal(st, -5);
    assert_int_equal(cw__final_status(st), CW_ERR_COMMAND_FAILED);
    assert_int_equal(cw__final_status(CL_COMPLETE), CW_OK);
    assert_int_equal(cw__read_status(NULL, &st), CW_ERR_INVALID_EVENT);
    assert_int_equal(st, CL_INVALID_EVENT);
    /* A user event has no queue: nothing to flush, whatever its status. */
    assert_int_equal(cw__flush_if_queued(ev, CL_QUEUED, &st), CW_OK);
    clReleaseEvent(ev);
}

/* The failed-command check schedule doubles up to its cap, 16x the first. */
static void check_schedule_doubles_to_cap(void **state) {
    (void)state;
    cw__check_schedule s = cw__check_schedule_start(0);
    assert_int_equal(s.first_ns, (uint64_t)CW_CHECK_INTERVAL_US_DEFAULT * 1000u);
    uint64_t seen[8];
    for (int i = 0; i < 8; ++i) {
        seen[i] = s.interval_ns;
        cw__check_schedule_grow(&s);
    }
    assert_int_equal(seen[1], 2 * seen[0]);
    assert_int_equal(seen[4], CW_CHECK_INTERVAL_GROWTH * seen[0]);
    assert_int_equal(seen[7], CW_CHECK_INTERVAL_GROWTH * seen[0]);
    assert_int_equal(cw__check_schedule_start(1000).first_ns, 1000000u);
}

static const struct CMUnitTest clevent_tests[] = {
    cmocka_unit_test(callback_runs_inline_on_completed_event),
    cmocka_unit_test(abandoned_attach_then_callback_fires),
    cmocka_unit_test(read_status_maps_errors),
    cmocka_unit_test(check_schedule_doubles_to_cap),
};

CW_TEST_MAIN(clevent_tests, open_host, close_host)
