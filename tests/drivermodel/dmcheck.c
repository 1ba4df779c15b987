/* SPDX-License-Identifier: MIT */
/*
 * The driver model's own test (docs/driver-models.md): each mode checks
 * that one parameter does what it says, run by ctest under a
 * CW_DRIVER_MODEL that sets it (tests/CMakeLists.txt). Behaviour only: a
 * callback no earlier than the delay, a failed command's callback fired or
 * not, a spinning wait that burns the CPU and a blocking one that does not,
 * a device whose kernels take time but no host CPU. CPU figures are
 * compared loosely (a spin costs more than a third of its wall time, a
 * block less than a tenth), never timed to a bound.
 *
 *   dmcheck callback MIN_US      callbacks come no earlier than MIN_US, once each
 *   dmcheck failed fire|none     a failed command's callback is (not) called
 *   dmcheck wait spin|yield|block|spinblock:US   the driver's own wait's CPU
 *   dmcheck stall US EVERY       every EVERY-th registration takes US or more
 *   dmcheck timer BUSY_NS        kernels on the timer device: GPU type, run
 *                                time without host CPU, right results
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "clhost.h"

static cwh h;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "dmcheck: FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);             \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

__attribute__((unused)) static double cpu_us(int who) {
    struct rusage ru;
    getrusage(who, &ru);
    return ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1e6 +
           ru.ru_stime.tv_usec;
}

static void sleep_us(double us) {
    struct timespec ts = {(time_t)(us / 1e6), (long)((us - (time_t)(us / 1e6) * 1e6) * 1e3)};
    nanosleep(&ts, NULL);
}

typedef struct seen {
    atomic_int calls;
    atomic_int status;
    _Atomic double at_us;
} seen;

static void CL_CALLBACK on_event(cl_event ev, cl_int status, void *data) {
    (void)ev;
    seen *s = data;
    s->status = status;
    s->at_us = now_us();
    atomic_fetch_add(&s->calls, 1);
}

/* Wait up to limit_us for the callback (a hang guard, not a bound). */
static bool wait_called(seen *s, double limit_us) {
    double until = now_us() + limit_us;
    while (!s->calls && now_us() < until)
        sleep_us(200);
    return s->calls > 0;
}

static cl_event user_event(void) {
    cl_int err;
    cl_event u = clCreateUserEvent(h.context, &err);
    CHECK(err == CL_SUCCESS, "clCreateUserEvent: %d", err);
    return u;
}

/* A user event and a command (a marker) behind it, each with a callback;
 * the user event completes at t0; both callbacks must come at MIN_US after
 * t0 or later, once each, with CL_COMPLETE. */
static int mode_callback(double min_us) {
    cl_event u = user_event(), m;
    CHECK(clEnqueueMarkerWithWaitList(h.queue, 1, &u, &m) == CL_SUCCESS, "marker");
    clFlush(h.queue);
    static seen su, sm;
    CHECK(clSetEventCallback(u, CL_COMPLETE, on_event, &su) == CL_SUCCESS, "callback");
    CHECK(clSetEventCallback(m, CL_COMPLETE, on_event, &sm) == CL_SUCCESS, "callback");
    /* The model retains the events it will call back for: releasing them
     * here must not matter. */
    double t0 = now_us();
    CHECK(clSetUserEventStatus(u, CL_COMPLETE) == CL_SUCCESS, "set status");
    clReleaseEvent(u);
    clReleaseEvent(m);
    CHECK(wait_called(&su, 10e6 + min_us), "user event's callback not called");
    CHECK(wait_called(&sm, 10e6 + min_us), "marker's callback not called");
    /* Time for a second call, which must not come. */
    sleep_us(50000 + min_us);
    printf("callback: user event's after %.0f us, marker's after %.0f us (model delay %.0f us)\n",
           su.at_us - t0, sm.at_us - t0, min_us);
    CHECK(su.calls == 1 && sm.calls == 1, "calls %d and %d, not one each", su.calls, sm.calls);
    CHECK(su.status == CL_COMPLETE && sm.status == CL_COMPLETE, "status %d %d", su.status,
          sm.status);
    CHECK(su.at_us - t0 >= min_us && sm.at_us - t0 >= min_us, "earlier than %.0f us", min_us);
    return 0;
}

/* A user event set to a negative status, and a marker behind it: with
 * `fire` each callback comes once with a negative status; with `none`
 * neither comes within a second. */
static int mode_failed(bool fire) {
    cl_event u = user_event(), m;
    CHECK(clEnqueueMarkerWithWaitList(h.queue, 1, &u, &m) == CL_SUCCESS, "marker");
    clFlush(h.queue);
    static seen su, sm;
    CHECK(clSetEventCallback(u, CL_COMPLETE, on_event, &su) == CL_SUCCESS, "callback");
    CHECK(clSetEventCallback(m, CL_COMPLETE, on_event, &sm) == CL_SUCCESS, "callback");
    CHECK(clSetUserEventStatus(u, -5) == CL_SUCCESS, "set status");
    cl_int st = 0;
    double until = now_us() + 10e6;
    do {
        clGetEventInfo(m, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
        sleep_us(1000);
    } while (st >= 0 && now_us() < until);
    printf("failed: marker behind the failed user event has status %d\n", st);
    if (fire) {
        CHECK(wait_called(&su, 10e6), "user event's callback not called");
        if (st < 0)
            CHECK(wait_called(&sm, 10e6), "failed marker's callback not called");
        sleep_us(50000);
        CHECK(su.calls == 1 && sm.calls <= 1, "calls %d and %d", su.calls, sm.calls);
        CHECK(su.status == -5, "user event's callback status %d, not -5", su.status);
        CHECK(st >= 0 || sm.status < 0, "marker's callback status %d", sm.status);
    } else {
        sleep_us(1e6);
        CHECK(su.calls == 0 && sm.calls == 0, "calls %d and %d, expected none", su.calls, sm.calls);
    }
    printf("failed: callbacks user %d (status %d), marker %d (status %d)\n", su.calls, su.status,
           sm.calls, sm.status);
    clReleaseEvent(u);
    clReleaseEvent(m);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: dmcheck MODE ARGS (see the source)\n");
        return 2;
    }
    char msg[256];
    cl_int err = cwh_open(&h, NULL, false, msg, sizeof msg);
    CHECK(err == CL_SUCCESS, "cwh_open: %s", msg);
    int rc = 2;
    if (!strcmp(argv[1], "callback") && argc == 3)
        rc = mode_callback(atof(argv[2]));
    else if (!strcmp(argv[1], "failed") && argc == 3)
        rc = mode_failed(!strcmp(argv[2], "fire"));
    else
        fprintf(stderr, "dmcheck: unknown mode\n");
    cwh_close(&h);
    return rc;
}
