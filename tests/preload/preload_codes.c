/* SPDX-License-Identifier: MIT */
/*
 * The calls libcw_preload.so interposes, each with one line of output: the
 * return code and, where there is one, whether the data arrived. The test
 * (tests/preload/same-output.sh) runs it natively and under cw-run and
 * requires the same lines and exit status, so every code here is the
 * implementation's own, whatever it is.
 *
 *   preload_codes            every case
 *   preload_codes hang       clWaitForEvents on a user event another thread
 *                            completes after 400 ms (for --hang-ms)
 *   preload_codes hang-finish  clFinish on a kernel gated the same way
 *   preload_codes hang-fail    clWaitForEvents on a kernel whose gate fails
 */
/* OpenCL 3.0 headers for the SVM cases, whatever the build defines. */
#undef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clprog.h"

enum { N = 4096 };

static cl_platform_id platform;
static cl_device_id device;
static cl_context ctx;
static cl_command_queue q;
static cl_kernel kernel;
static int failures;

static void line(const char *name, cl_int rc, const char *extra) {
    printf("%-28s %d%s%s\n", name, rc, extra ? " " : "", extra ? extra : "");
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Sets a user event's status after a delay, from another thread. */
typedef struct later {
    cl_event ev;
    cl_int status;
    int ms;
    pthread_t thread;
} later;

static void *later_main(void *arg) {
    later *l = arg;
    sleep_ms(l->ms);
    clSetUserEventStatus(l->ev, l->status);
    return NULL;
}

static void later_start(later *l, cl_event ev, cl_int status, int ms) {
    l->ev = ev;
    l->status = status;
    l->ms = ms;
    if (pthread_create(&l->thread, NULL, later_main, l) != 0)
        exit(3);
}

static cl_event user_event(void) {
    cl_int err;
    cl_event ev = clCreateUserEvent(ctx, &err);
    CHECK(err);
    return ev;
}

static cl_mem buffer_of(const int *init) {
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * sizeof(int),
                              (void *)init, &err);
    CHECK(err);
    return m;
}

static cl_int enqueue_add(cl_command_queue queue, cl_mem m, int v, cl_uint nw, const cl_event *wl,
                          cl_event *ev) {
    size_t global = N;
    CHECK(clSetKernelArg(kernel, 0, sizeof m, &m));
    CHECK(clSetKernelArg(kernel, 1, sizeof v, &v));
    return clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, nw, wl, ev);
}

/* "data ok" when every element is base + i, else the first difference. */
static const char *data_verdict(const int *a, int base, char *buf, size_t len) {
    for (int i = 0; i < N; ++i) {
        if (a[i] != base + i) {
            snprintf(buf, len, "data WRONG at %d: %d", i, a[i]);
            ++failures;
            return buf;
        }
    }
    return "data ok";
}

static void setup(void) {
    cl_uint n = 0;
    CHECK(clGetPlatformIDs(1, &platform, &n));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_int err;
    ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &device, NULL, NULL, NULL));
    kernel = clCreateKernel(p, "add", &err);
    CHECK(err);
    clReleaseProgram(p);
}

static void waits(void) {
    line("wait.zero_events", clWaitForEvents(0, NULL), NULL);
    line("wait.null_list", clWaitForEvents(1, NULL), NULL);

    cl_event done = user_event();
    CHECK(clSetUserEventStatus(done, CL_COMPLETE));
    line("wait.complete_user_event", clWaitForEvents(1, &done), NULL);

    /* Two contexts in one list. */
    cl_int err;
    cl_context other = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err);
    cl_event foreign = clCreateUserEvent(other, &err);
    CHECK(err);
    CHECK(clSetUserEventStatus(foreign, CL_COMPLETE));
    cl_event two[2] = {done, foreign};
    line("wait.two_contexts", clWaitForEvents(2, two), NULL);
    clReleaseEvent(foreign);
    clReleaseContext(other);

    cl_event failed = user_event();
    CHECK(clSetUserEventStatus(failed, -5));
    line("wait.failed_user_event", clWaitForEvents(1, &failed), NULL);
    cl_event mixed[2] = {done, failed};
    line("wait.failed_among_two", clWaitForEvents(2, mixed), NULL);

    /* Failed while waited on, and a kernel that depends on it. */
    int init[N];
    for (int i = 0; i < N; ++i)
        init[i] = i;
    cl_mem m = buffer_of(init);
    cl_event gate = user_event(), k;
    CHECK(enqueue_add(q, m, 1, 1, &gate, &k));
    CHECK(clFlush(q));
    later l;
    later_start(&l, gate, -14, 100);
    line("wait.gate_fails_during_wait", clWaitForEvents(1, &gate), NULL);
    pthread_join(l.thread, NULL);
    line("wait.kernel_after_failed_gate", clWaitForEvents(1, &k), NULL);
    clReleaseEvent(k);
    clReleaseEvent(gate);

    /* A kernel and a user event completed 50 ms later by another thread. */
    cl_event gate2 = user_event(), k2;
    CHECK(enqueue_add(q, m, 1, 0, NULL, &k2));
    later_start(&l, gate2, CL_COMPLETE, 50);
    cl_event both[2] = {k2, gate2};
    line("wait.kernel_and_late_user", clWaitForEvents(2, both), NULL);
    pthread_join(l.thread, NULL);
    int out[N];
    char buf[64];
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    line("wait.kernel_result", CL_SUCCESS, data_verdict(out, 1, buf, sizeof buf));
    clReleaseEvent(k2);
    clReleaseEvent(gate2);
    clReleaseEvent(failed);
    clReleaseEvent(done);
    clReleaseMemObject(m);
}

static void finishes(void) {
    line("finish.null_queue", clFinish(NULL), NULL);
    int init[N];
    for (int i = 0; i < N; ++i)
        init[i] = i;
    cl_mem m = buffer_of(init);
    for (int r = 0; r < 10; ++r)
        CHECK(enqueue_add(q, m, 1, 0, NULL, NULL));
    line("finish.in_order", clFinish(q), NULL);
    int out[N];
    char buf[64];
    CHECK(clEnqueueReadBuffer(q, m, CL_FALSE, 0, sizeof out, out, 0, NULL, NULL));
    cl_int rc = clFinish(q);
    line("finish.after_read", rc, data_verdict(out, 10, buf, sizeof buf));

    /* Out of order: independent commands on several buffers, then clFinish. */
    cl_int err;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue ooo = clCreateCommandQueueWithProperties(ctx, device, props, &err);
    if (err != CL_SUCCESS) {
        line("finish.out_of_order", CL_SUCCESS, "skipped (no out-of-order queue)");
    } else {
        cl_mem ms[4];
        int outs[4][N];
        for (int b = 0; b < 4; ++b) {
            ms[b] = buffer_of(init);
            CHECK(enqueue_add(ooo, ms[b], b + 1, 0, NULL, NULL));
        }
        rc = clFinish(ooo);
        for (int b = 0; b < 4; ++b)
            CHECK(clEnqueueReadBuffer(ooo, ms[b], CL_FALSE, 0, sizeof outs[b], outs[b], 0, NULL,
                                      NULL));
        cl_int rc2 = clFinish(ooo);
        const char *v = "data ok";
        for (int b = 0; b < 4; ++b) {
            const char *one = data_verdict(outs[b], b + 1, buf, sizeof buf);
            if (strcmp(one, "data ok"))
                v = one;
            clReleaseMemObject(ms[b]);
        }
        line("finish.out_of_order", rc, NULL);
        line("finish.out_of_order_reads", rc2, v);
        clReleaseCommandQueue(ooo);
    }

    /*
     * A command the preload does not see: enqueued through the loader's own
     * clEnqueueNDRangeKernel (dlsym on a handle of libOpenCL), gated by a
     * user event set 100 ms later, behind a kernel the preload saw. clFinish
     * must still wait for it: its status right after clFinish is complete.
     */
    typedef cl_int (*ndrange_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
                                 const size_t *, const size_t *, cl_uint, const cl_event *,
                                 cl_event *);
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);
    ndrange_fn loader_ndrange = lib ? (ndrange_fn)dlsym(lib, "clEnqueueNDRangeKernel") : NULL;
    if (!loader_ndrange) {
        line("finish.unseen_command", CL_SUCCESS, "skipped (no loader handle)");
    } else {
        cl_event gate = user_event(), unseen;
        size_t global = N;
        int v = 1;
        CHECK(enqueue_add(q, m, 1, 0, NULL, NULL));
        CHECK(clSetKernelArg(kernel, 1, sizeof v, &v));
        CHECK(loader_ndrange(q, kernel, 1, NULL, &global, NULL, 1, &gate, &unseen));
        later l;
        later_start(&l, gate, CL_COMPLETE, 100);
        rc = clFinish(q);
        cl_int st = CL_QUEUED;
        CHECK(clGetEventInfo(unseen, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
        if (st != CL_COMPLETE)
            ++failures;
        line("finish.unseen_command", rc,
             st == CL_COMPLETE ? "status complete" : "status NOT complete");
        pthread_join(l.thread, NULL);
        clReleaseEvent(unseen);
        clReleaseEvent(gate);
    }
    if (lib)
        dlclose(lib);

    /* A separate queue whose only kernel depends on a failed user event. */
    cl_command_queue q2 = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    cl_event gate = user_event();
    CHECK(enqueue_add(q2, m, 1, 1, &gate, NULL));
    later l;
    later_start(&l, gate, -14, 100);
    line("finish.failed_gate", clFinish(q2), NULL);
    pthread_join(l.thread, NULL);
    clReleaseEvent(gate);
    clReleaseCommandQueue(q2);
    clReleaseMemObject(m);
}

static void transfers(void) {
    int init[N], out[N];
    for (int i = 0; i < N; ++i)
        init[i] = i;
    char buf[64];
    cl_mem m = buffer_of(init);
    memset(out, 0, sizeof out);
    cl_int rc = clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
    line("read.blocking", rc, data_verdict(out, 0, buf, sizeof buf));

    cl_event ev = NULL;
    memset(out, 0, sizeof out);
    rc = clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, &ev);
    cl_int st = 0;
    cl_command_type type = 0;
    CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    /* Not the reference count: an implementation may hold references of
     * its own for a while (rusticl does), so it is timing, not a result. */
    char extra[160];
    snprintf(extra, sizeof extra, "%s, event status %d, type 0x%x",
             data_verdict(out, 0, buf, sizeof buf), st, (unsigned)type);
    line("read.blocking_with_event", rc, extra);
    CHECK(clReleaseEvent(ev));

    line("read.bad_buffer", clEnqueueReadBuffer(q, NULL, CL_TRUE, 0, 4, out, 0, NULL, NULL), NULL);
    line("read.out_of_range",
         clEnqueueReadBuffer(q, m, CL_TRUE, 0, 2 * sizeof out, out, 0, NULL, NULL), NULL);
    line("read.null_queue", clEnqueueReadBuffer(NULL, m, CL_TRUE, 0, 4, out, 0, NULL, NULL), NULL);

    /* Not here: a blocking read whose wait list holds a failed event, which
     * never returns on PoCL 3.1 natively either. */
    int twice[N];
    for (int i = 0; i < N; ++i)
        twice[i] = 7 + i;
    line("write.blocking",
         clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof twice, twice, 0, NULL, NULL), NULL);
    memset(out, 0, sizeof out);
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    line("write.read_back", CL_SUCCESS, data_verdict(out, 7, buf, sizeof buf));

    /* Rectangles: the buffer as 64 rows of 64 ints; copy rows 8..15 back. */
    size_t bo[3] = {0, 8, 0}, ho[3] = {0, 0, 0}, region[3] = {64 * sizeof(int), 8, 1};
    int rect[8 * 64];
    rc = clEnqueueReadBufferRect(q, m, CL_TRUE, bo, ho, region, 64 * sizeof(int), 0,
                                 64 * sizeof(int), 0, rect, 0, NULL, NULL);
    bool ok = true;
    for (int i = 0; i < 8 * 64; ++i)
        ok = ok && rect[i] == 7 + 8 * 64 + i;
    failures += !ok;
    line("read_rect.blocking", rc, ok ? "data ok" : "data WRONG");
    for (int i = 0; i < 8 * 64; ++i)
        rect[i] = -i;
    line("write_rect.blocking",
         clEnqueueWriteBufferRect(q, m, CL_TRUE, bo, ho, region, 64 * sizeof(int), 0,
                                  64 * sizeof(int), 0, rect, 0, NULL, NULL),
         NULL);
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    ok = out[8 * 64] == 0 && out[8 * 64 + 5] == -5 && out[16 * 64] == 7 + 16 * 64;
    failures += !ok;
    line("write_rect.read_back", CL_SUCCESS, ok ? "data ok" : "data WRONG");

    cl_event mev = NULL;
    cl_int err = 1;
    int *p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, sizeof out, 0, NULL,
                                &mev, &err);
    ok = p && p[16 * 64] == 7 + 16 * 64;
    failures += !ok;
    st = 0;
    if (mev)
        CHECK(clGetEventInfo(mev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    snprintf(extra, sizeof extra, "%s, event status %d", ok ? "data ok" : "data WRONG", st);
    line("map_buffer.blocking", err, extra);
    if (p) {
        p[0] = 1234;
        CHECK(clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL));
    }
    if (mev)
        clReleaseEvent(mev);
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    line("map_buffer.write_back", CL_SUCCESS, out[0] == 1234 ? "data ok" : "data WRONG");
    failures += out[0] != 1234;
    err = 1;
    p = clEnqueueMapBuffer(q, NULL, CL_TRUE, CL_MAP_READ, 0, 4, 0, NULL, NULL, &err);
    line("map_buffer.bad_buffer", err, p ? "pointer" : "NULL");
    clReleaseMemObject(m);
}

static void images(void) {
    cl_bool has = CL_FALSE;
    CHECK(clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof has, &has, NULL));
    if (!has) {
        line("image", CL_SUCCESS, "skipped (no image support)");
        return;
    }
    cl_image_format fmt = {CL_R, CL_SIGNED_INT32};
    cl_image_desc desc = {0};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 64;
    desc.image_height = 64;
    cl_int err;
    cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    CHECK(err);
    int in[N], out[N];
    for (int i = 0; i < N; ++i)
        in[i] = 3 * i;
    size_t origin[3] = {0, 0, 0}, region[3] = {64, 64, 1};
    line("write_image.blocking",
         clEnqueueWriteImage(q, img, CL_TRUE, origin, region, 0, 0, in, 0, NULL, NULL), NULL);
    memset(out, 0, sizeof out);
    cl_int rc = clEnqueueReadImage(q, img, CL_TRUE, origin, region, 0, 0, out, 0, NULL, NULL);
    bool ok = !memcmp(in, out, sizeof in);
    failures += !ok;
    line("read_image.blocking", rc, ok ? "data ok" : "data WRONG");
    size_t row = 0;
    err = 1;
    int *p = clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_READ, origin, region, &row, NULL, 0, NULL,
                               NULL, &err);
    ok = p && p[(row / sizeof(int)) * 10 + 3] == 3 * (64 * 10 + 3);
    failures += !ok;
    line("map_image.blocking", err, ok ? "data ok" : "data WRONG");
    if (p)
        CHECK(clEnqueueUnmapMemObject(q, img, p, 0, NULL, NULL));
    CHECK(clFinish(q));
    clReleaseMemObject(img);
}

static void svm(void) {
    cl_device_svm_capabilities caps = 0;
    char version[128] = "";
    clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof version, version, NULL);
    if (strncmp(version, "OpenCL 2", 8) && strncmp(version, "OpenCL 3", 8)) {
        line("svm", CL_SUCCESS, "skipped (OpenCL 1.x device)");
        return;
    }
    if (clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL) !=
            CL_SUCCESS ||
        !(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
        line("svm", CL_SUCCESS, "skipped (no coarse-grain SVM)");
        return;
    }
    int *a = clSVMAlloc(ctx, CL_MEM_READ_WRITE, N * sizeof(int), 0);
    int *b = clSVMAlloc(ctx, CL_MEM_READ_WRITE, N * sizeof(int), 0);
    if (!a || !b) {
        line("svm", CL_SUCCESS, "skipped (clSVMAlloc failed)");
        return;
    }
    cl_int rc = clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE, a, N * sizeof(int), 0, NULL, NULL);
    for (int i = 0; i < N; ++i)
        a[i] = 5 * i;
    CHECK(clEnqueueSVMUnmap(q, a, 0, NULL, NULL));
    line("svm_map.blocking", rc, NULL);
    line("svm_memcpy.blocking",
         clEnqueueSVMMemcpy(q, CL_TRUE, b, a, N * sizeof(int), 0, NULL, NULL), NULL);
    rc = clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, b, N * sizeof(int), 0, NULL, NULL);
    bool ok = true;
    for (int i = 0; i < N; ++i)
        ok = ok && b[i] == 5 * i;
    failures += !ok;
    CHECK(clEnqueueSVMUnmap(q, b, 0, NULL, NULL));
    line("svm_map.read_back", rc, ok ? "data ok" : "data WRONG");
    CHECK(clFinish(q));
    clSVMFree(ctx, a);
    clSVMFree(ctx, b);
}

/* mode 0: clWaitForEvents on a user event completed after 400 ms; 1: clFinish
 * on a kernel gated by it; 2: clWaitForEvents on that kernel while the gate
 * fails after 400 ms (PoCL 3.1 and rusticl run no callback for it). */
static int hang(int mode) {
    static const char *const names[] = {"hang.wait", "hang.finish", "hang.fail"};
    cl_event gate = user_event(), k = NULL;
    int init[N] = {0};
    cl_mem m = buffer_of(init);
    if (mode > 0)
        CHECK(enqueue_add(q, m, 1, 1, &gate, &k));
    later l;
    later_start(&l, gate, mode == 2 ? -14 : CL_COMPLETE, 400);
    cl_int rc = mode == 0   ? clWaitForEvents(1, &gate)
                : mode == 1 ? clFinish(q)
                            : clWaitForEvents(1, &k);
    pthread_join(l.thread, NULL);
    line(names[mode], rc, NULL);
    if (k)
        clReleaseEvent(k);
    clFinish(q);
    clReleaseMemObject(m);
    clReleaseEvent(gate);
    return rc == (mode == 2 ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS) ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: preload_codes [hang|hang-finish|hang-fail|--exit N]\n");
        return 0;
    }
    /* No OpenCL at all: for cw-run's own checks (exit status passed on). */
    if (argc > 2 && !strcmp(argv[1], "--exit"))
        return atoi(argv[2]);
    setup();
    int rc = 0;
    if (argc > 1 && !strcmp(argv[1], "hang")) {
        rc = hang(0);
    } else if (argc > 1 && !strcmp(argv[1], "hang-finish")) {
        rc = hang(1);
    } else if (argc > 1 && !strcmp(argv[1], "hang-fail")) {
        rc = hang(2);
    } else {
        waits();
        finishes();
        transfers();
        images();
        svm();
        rc = failures ? 1 : 0;
    }
    clReleaseKernel(kernel);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return rc;
}
