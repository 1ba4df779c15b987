/* SPDX-License-Identifier: MIT */
/* Layer 6.0, the status unit: status reads, the flush rule, error mapping. */
#include "harness.h"

#include "clfixture.h"
#include "clshim.h"
#include "status.h"

/* Status reads map OpenCL's answers: a final status as it is, a bad handle
 * (NULL here: every implementation rejects it) as CW_ERR_INVALID_EVENT. */
static void read_status_maps_errors(void **state) {
    (void)state;
    cl_event ev = user_event();
    cl_int st = 0;
    assert_int_equal(cw__status_read(ev, &st), CW_OK);
    assert_int_equal(st, CL_SUBMITTED);
    assert_int_equal(clSetUserEventStatus(ev, -5), CL_SUCCESS);
    assert_int_equal(cw__status_read(ev, &st), CW_OK);
    assert_int_equal(st, -5);
    assert_int_equal(cw__status_verdict(st), CW_ERR_COMMAND_FAILED);
    assert_int_equal(cw__status_verdict(CL_COMPLETE), CW_OK);
    assert_int_equal(cw__status_read(NULL, &st), CW_ERR_INVALID_EVENT);
    assert_int_equal(st, CL_INVALID_EVENT);
    /* A user event has no queue: nothing to flush, whatever its status. */
    assert_int_equal(cw__status_flush(ev, CL_QUEUED, &st), CW_OK);
    clReleaseEvent(ev);
}

/* The first look reads the status and flushes only an unfinished command
 * that is still CL_QUEUED, and only when asked to. */
static void first_look_flushes_queued_work_only(void **state) {
    (void)state;
    cwh_saxpy sx;
    assert_int_equal(cwh_saxpy_init(&host, &sx, 1024), CL_SUCCESS);
    cl_event gate = user_event(), ev;
    /* Gated on an unfinished event, the kernel stays CL_QUEUED. */
    assert_int_equal(cwh_saxpy_enqueue(&host, &sx, 1.0f, 1, &gate, &ev), CL_SUCCESS);
    cl_int st = 0;
    unsigned before = clshim_thread_flushes;
    assert_int_equal(cw__status_first_look(ev, false, &st), CW_OK);
    assert_int_equal(clshim_thread_flushes - before, 0);
    assert_int_equal(st, CL_QUEUED);
    assert_int_equal(cw__status_first_look(ev, true, &st), CW_OK);
    assert_int_equal(clshim_thread_flushes - before, 1);
    /* A user event is never queued: no flush, whatever is asked. */
    before = clshim_thread_flushes;
    assert_int_equal(cw__status_first_look(gate, true, &st), CW_OK);
    assert_int_equal(st, CL_SUBMITTED);
    assert_int_equal(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
    assert_int_equal(cw__status_first_look(ev, true, &st), CW_OK);
    assert_int_equal(st, CL_COMPLETE);
    assert_int_equal(clshim_thread_flushes - before, 0);
    assert_int_equal(cw__status_first_look(NULL, true, &st), CW_ERR_INVALID_EVENT);
    assert_int_equal(st, CL_INVALID_EVENT);
    clReleaseEvent(ev);
    clReleaseEvent(gate);
    cwh_saxpy_free(&sx);
}

static const struct CMUnitTest status_tests[] = {
    cmocka_unit_test(first_look_flushes_queued_work_only),
    cmocka_unit_test(read_status_maps_errors),
};

CW_TEST_MAIN(status_tests, open_host, close_host)
