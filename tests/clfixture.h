/* SPDX-License-Identifier: MIT */
/*
 * Group fixture for the OpenCL tests: one PoCL context (or the platform in
 * $CW_PLATFORM) per test process, and a leak check of cw's completion pool
 * when the group ends: every test must give back every slot it took.
 */
#ifndef CW_TEST_CLFIXTURE_H
#define CW_TEST_CLFIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clhost.h"
#include "completion.h"
#include "driver.h"
#include "drivermodel/model.h"
#include "table.h"

static cwh host;

static int open_host(void **state) {
    (void)state;
    char msg[2300];
    if (cwh_open(&host, NULL, false, msg, sizeof msg) != CL_SUCCESS) {
        fprintf(stderr, "OpenCL set-up failed: %s\n", msg);
        return -1;
    }
    /* Probe the platform now, as the first callback wait would (driver.h),
     * so that the tests that count callback registrations count their own
     * only. */
    cl_int err;
    cl_event ev = clCreateUserEvent(host.context, &err);
    if (err != CL_SUCCESS)
        return -1;
    cw__driver *d = cw__driver_of(ev);
    cw__driver_probe(d, ev);
    /* A probe on a loaded machine may give up before its marker ran and
     * learn no lateness, or learn one near the late floor; a wait would
     * then make the marker again (cw__driver_reprobe). Make it here, until
     * the lateness is settled or the markers are spent, so that no test's
     * wait does. */
    for (int i = 0; i < 3000 &&
                    cw__policy_probe_again(cw__driver_lateness_known(d), cw__driver_lateness_ns(d));
         ++i) {
        cw__driver_reprobe(d, ev);
        cw_test_sleep_us(1000);
    }
    clReleaseEvent(ev);
    return 0;
}

static int close_host(void **state) {
    (void)state;
    /* Every event a test waited on finished or was forgotten: once a sweep
     * has read the statuses, cw holds no record (nor an event reference). */
    size_t records = cw__table_sweep();
    cwh_close(&host);
    if (records != 0) {
        fprintf(stderr, "%zu event records were left behind\n", records);
        return -1;
    }
    if (cw__completion_outstanding() != 0) {
        fprintf(stderr, "%u completions were not released\n", cw__completion_outstanding());
        return -1;
    }
    return 0;
}

/* Completions held by waits, watches and the like: every one but the one
 * each event record keeps for its callback (table.c). */
static inline unsigned wait_completions(void) {
    /* Records first: counting them tears down the ones whose callback ran. */
    unsigned records = (unsigned)cw__table_records();
    return cw__completion_outstanding() - records;
}

/* What the driver model in force (CW_DRIVER_MODEL, support/drivermodel)
 * makes the driver do, for the tests whose expectations depend on it: its
 * delay of every callback, in µs (the nvidia preset's 20 ms, or
 * callback_delay_us), and whether it fires failed commands' callbacks (the
 * pocl7 preset, or failed=fire or fire_complete). Unchanged PoCL or rusticl: 0 and false. */
/* The driver model in force, as the layer reads CW_DRIVER_MODEL (its own
 * parser, support/drivermodel/config.c): the real driver when none is set. */
static inline dm_config model_config(void) {
    dm_config c;
    char msg[256];
    const char *m = getenv("CW_DRIVER_MODEL");
    if (!m || dm_config_parse(m, &c, msg, sizeof msg) != 0)
        dm_config_parse("pocl3", &c, msg, sizeof msg);
    return c;
}

static inline long model_callback_delay_us(void) {
    return model_config().callback_delay_us;
}

/* Whether the model fires failed commands' callbacks (the driver below,
 * PoCL 3.1 or rusticl, fires none). */
static inline bool model_fires_failed(void) {
    enum dm_failed f = model_config().failed;
    return f == DM_FAILED_FIRE || f == DM_FAILED_FIRE_COMPLETE;
}

/* A fresh user event of the fixture's context. */
static inline cl_event user_event(void) {
    cl_int err;
    cl_event ev = clCreateUserEvent(host.context, &err);
    assert_int_equal(err, CL_SUCCESS);
    return ev;
}

/* The record of the fixture's platform, once the probe's own lateness
 * sample is in, so that the samples a test feeds are the only ones. The
 * probe's second marker's callback gives it, on PoCL within microseconds
 * of the marker (which the probe saw finish, or gave up on after 2 ms:
 * then it gives none); 200 ms leaves room for a loaded machine. */
static inline cw__driver *settled_driver(void) {
    cl_event ev = user_event();
    cw__driver *d = cw__driver_of(ev);
    clReleaseEvent(ev);
    assert_non_null(d);
    for (int i = 0; i < 200 && !cw__driver_lateness_known(d); ++i)
        cw_test_sleep_us(1000);
    return d;
}

/* A gate: a thread that sets a user event's status after a delay, from a
 * thread of its own, as another part of a program would. */
struct later {
    cl_event ev;
    unsigned delay_us; /* after `after` is set, when not NULL */
    cl_int status;
    cl_command_queue flush;   /* flushed after setting the status, when not NULL */
    const atomic_bool *after; /* an order the test needs, which no delay can
                               * promise on a loaded machine */
    _Atomic uint64_t set_ns;  /* cw_now_ns() once clSetUserEventStatus returned */
};

static inline void *set_later(void *arg) {
    struct later *l = arg;
    while (l->after && !atomic_load(l->after))
        cw_test_sleep_us(100);
    cw_test_sleep_us(l->delay_us);
    clSetUserEventStatus(l->ev, l->status);
    atomic_store(&l->set_ns, cw_now_ns());
    if (l->flush)
        clFlush(l->flush);
    return NULL;
}

#endif
