/* SPDX-License-Identifier: MIT */
/*
 * The timer-driven device (device=timer): kernels whose run time passes on
 * a timer and takes no host CPU, as a GPU's kernels do, so that a wait that
 * spins does not slow the device down as it does PoCL's CPU workers.
 *
 * An NDRange enqueue runs the kernel for real (its results stay right) and
 * returns, instead of the kernel's event, the event of a marker behind it
 * and behind a user event. When the real kernel has finished, the model's
 * timer thread completes the user event the kernel's duration later:
 *   - cw's busy kernel (kernels/busy.cl): iters x busy_ns, and the real
 *     kernel runs with at most 64 of its iterations, which give the same
 *     result (see busy.cl) at next to no cost;
 *   - any other kernel: kernel_us (the real kernel runs as it is).
 * On an in-order queue the next command starts after the marker, so
 * commands run one after another as on a device. The device reports
 * CL_DEVICE_TYPE_GPU.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "due.h"
#include "model.h"

/* The busy kernel's result is the same for any count from this on. */
#define BUSY_REAL_ITERS 64u
/* A kernel that failed: PoCL 3.1 never calls its callback, so the timer
 * thread looks at pending kernels this often, and, after a user event was
 * set to a failed status (the way a test fails a kernel), at once and then
 * after each of these delays: PoCL may pass the failure on to the kernel
 * some time later. */
#define LOOK_NS 100000000ull
static const uint64_t look_after_fail_ns[] = {1000000, 10000000};

typedef struct kern {
    struct kern *next;
    cl_kernel k;
    bool busy;
    cl_uint iters;
} kern;

typedef struct gate {
    dm_due at;         /* when the timer completes it (first: due.h) */
    struct gate *next; /* waiting for the real kernel */
    cl_event kernel, user;
    /* Held until the user event is set: PoCL 3.1 keeps a command failed by
     * another of its dependencies on the user event's list of dependents,
     * and setting the user event after the application freed that command
     * would touch freed memory. */
    cl_event marker;
    uint64_t duration_ns;
    bool done;          /* the kernel is over: the callback ran, or a look found it failed */
    bool driver_called; /* the driver's callback ran (or will never: not registered) */
    bool popped;        /* the timer thread is through with it */
    cl_int status;
} gate;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static pthread_once_t started = PTHREAD_ONCE_INIT;
static kern *kernels;
static gate *pending; /* gates whose kernel has not finished */
/* Gates the timer is through with but whose callback the driver still owes
 * (a failed kernel on PoCL 3.1, never): kept reachable, freed if it comes. */
static gate *owed;
static dm_due_queue due; /* finished kernels, due at their run time's end */
static uint64_t look_at;
static int look_step = -1; /* the next of look_after_fail_ns, -1: none */

static kern *find_locked(cl_kernel k) {
    for (kern *e = kernels; e; e = e->next)
        if (e->k == k)
            return e;
    return NULL;
}

/* Learn the kernel's name when it is created (a handle reused for another
 * kernel is created again, and learnt again). */
static void learn(cl_kernel k) {
    char name[64] = "";
    if (!k || dm_next->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL))
        return;
    pthread_mutex_lock(&lock);
    kern *e = find_locked(k);
    if (!e && (e = calloc(1, sizeof *e))) {
        e->k = k;
        e->next = kernels;
        kernels = e;
    }
    if (e) {
        e->busy = !strcmp(name, "busy");
        e->iters = 0;
    }
    pthread_mutex_unlock(&lock);
}

static cl_kernel CL_API_CALL create_kernel(cl_program p, const char *n, cl_int *err) {
    cl_kernel k = dm_next->clCreateKernel(p, n, err);
    learn(k);
    return k;
}

static cl_int CL_API_CALL create_kernels(cl_program p, cl_uint num, cl_kernel *ks,
                                         cl_uint *num_ret) {
    cl_uint got = 0;
    cl_int err = dm_next->clCreateKernelsInProgram(p, num, ks, &got);
    if (err == CL_SUCCESS && ks)
        for (cl_uint i = 0; i < got && i < num; ++i)
            learn(ks[i]);
    if (num_ret)
        *num_ret = got;
    return err;
}

static cl_int CL_API_CALL set_kernel_arg(cl_kernel k, cl_uint index, size_t size,
                                         const void *value) {
    if (index == 1 && size == sizeof(cl_uint) && value) {
        pthread_mutex_lock(&lock);
        kern *e = find_locked(k);
        bool busy = e && e->busy;
        cl_uint iters = *(const cl_uint *)value;
        if (busy)
            e->iters = iters;
        pthread_mutex_unlock(&lock);
        if (busy) {
            cl_uint real = iters < BUSY_REAL_ITERS ? iters : BUSY_REAL_ITERS;
            return dm_next->clSetKernelArg(k, index, size, &real);
        }
    }
    return dm_next->clSetKernelArg(k, index, size, value);
}

/* The real kernel is over: its run time starts now (or it failed, and the
 * user event fails at once). Under the lock. */
static void finished_locked(gate *g, cl_int status) {
    if (g->done)
        return;
    g->done = true;
    for (gate **p = &pending; *p; p = &(*p)->next)
        if (*p == g) {
            *p = g->next;
            break;
        }
    g->status = status < 0 ? status : CL_COMPLETE;
    g->at.due = dm_now_ns() + (status < 0 ? 0 : g->duration_ns);
    dm_due_push(&due, &g->at);
    pthread_cond_signal(&wake);
}

static void unlink_owed_locked(gate *g) {
    for (gate **p = &owed; *p; p = &(*p)->next)
        if (*p == g) {
            *p = g->next;
            return;
        }
}

static void CL_CALLBACK kernel_done(cl_event ev, cl_int status, void *data) {
    (void)ev;
    gate *g = data;
    pthread_mutex_lock(&lock);
    g->driver_called = true;
    if (g->popped) {
        unlink_owed_locked(g);
        free(g);
    } else {
        finished_locked(g, status);
    }
    pthread_mutex_unlock(&lock);
}

/* Failed kernels whose callback the driver never calls. */
static void look(void) {
    pthread_mutex_lock(&lock);
    size_t n = 0;
    for (gate *g = pending; g; g = g->next)
        ++n;
    gate **list = n ? malloc(n * sizeof *list) : NULL;
    n = 0;
    for (gate *g = pending; list && g; g = g->next)
        list[n++] = g;
    pthread_mutex_unlock(&lock);
    /* A gate on the pending list is freed only by this thread, after it
     * left the list, so the pointers stay good while the lock is off. */
    for (size_t i = 0; i < n; ++i) {
        cl_int st = CL_COMPLETE;
        if (dm_next->clGetEventInfo(list[i]->kernel, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st,
                                    &st, NULL) == CL_SUCCESS &&
            st < 0) {
            pthread_mutex_lock(&lock);
            finished_locked(list[i], st);
            pthread_mutex_unlock(&lock);
        }
    }
    free(list);
}

/* The device's clock: completes each gate's user event when it is due.
 * Detached; at exit it is gone with whatever was running. */
static void *timer(void *arg) {
    (void)arg;
    /* A device's interrupt is not rounded up by 50 us of timer slack. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    pthread_mutex_lock(&lock);
    look_at = dm_now_ns() + LOOK_NS;
    for (;;) {
        uint64_t now = dm_now_ns();
        if (dm_due_next(&due) <= now) {
            gate *g = (gate *)dm_due_pop(&due);
            pthread_mutex_unlock(&lock);
            dm_next->clSetUserEventStatus(g->user, g->status);
            dm_next->clReleaseEvent(g->user);
            if (g->marker)
                dm_next->clReleaseEvent(g->marker);
            dm_next->clReleaseEvent(g->kernel);
            pthread_mutex_lock(&lock);
            g->popped = true;
            if (g->driver_called) {
                free(g);
            } else {
                g->next = owed;
                owed = g;
            }
            continue;
        }
        if (pending && look_at <= now) {
            pthread_mutex_unlock(&lock);
            look();
            pthread_mutex_lock(&lock);
            if (look_step >= 0 && (size_t)look_step < sizeof look_after_fail_ns / sizeof(uint64_t))
                look_at = dm_now_ns() + look_after_fail_ns[look_step++];
            else {
                look_step = -1;
                look_at = dm_now_ns() + LOOK_NS;
            }
            continue;
        }
        uint64_t until = dm_due_next(&due);
        if (pending && look_at < until)
            until = look_at;
        dm_cond_wait_until(&wake, &lock, until);
    }
    return NULL;
}

static void start(void) {
    dm_thread_start(&wake, timer, "device's timer thread");
}

void dm_device_failure_seen(void) {
    if (dm_cfg.device != DM_DEVICE_TIMER)
        return;
    pthread_once(&started, start);
    pthread_mutex_lock(&lock);
    look_at = dm_now_ns();
    look_step = 0;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
}

static cl_int CL_API_CALL enqueue_ndrange(cl_command_queue q, cl_kernel k, cl_uint dim,
                                          const size_t *offset, const size_t *global,
                                          const size_t *local, cl_uint nwait, const cl_event *wait,
                                          cl_event *event) {
    uint64_t duration = (uint64_t)dm_cfg.kernel_us * 1000;
    pthread_mutex_lock(&lock);
    kern *e = find_locked(k);
    if (e && e->busy)
        duration = (uint64_t)e->iters * (uint64_t)dm_cfg.busy_ns;
    pthread_mutex_unlock(&lock);
    cl_context ctx = NULL;
    cl_int err = dm_next->clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL);
    if (err != CL_SUCCESS)
        return dm_next->clEnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait, wait,
                                               event);
    gate *g = calloc(1, sizeof *g);
    if (!g)
        return CL_OUT_OF_HOST_MEMORY;
    g->duration_ns = duration;
    g->user = dm_next->clCreateUserEvent(ctx, &err);
    if (err != CL_SUCCESS) {
        free(g);
        return err;
    }
    err =
        dm_next->clEnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait, wait, &g->kernel);
    if (err != CL_SUCCESS) {
        dm_next->clSetUserEventStatus(g->user, CL_COMPLETE);
        dm_next->clReleaseEvent(g->user);
        free(g);
        return err;
    }
    /* Behind the real kernel explicitly, for an out-of-order queue too. */
    cl_event gates[2] = {g->kernel, g->user};
    cl_event marker = NULL;
    err = dm_next->clEnqueueMarkerWithWaitList(q, 2, gates, &marker);
    if (err == CL_SUCCESS) {
        dm_next->clRetainEvent(marker);
        g->marker = marker;
    }
    pthread_once(&started, start);
    pthread_mutex_lock(&lock);
    if (!pending && look_step < 0)
        look_at = dm_now_ns() + LOOK_NS;
    g->next = pending;
    pending = g;
    pthread_mutex_unlock(&lock);
    cl_event kernel = g->kernel; /* g may be gone once the callback is set */
    if (err != CL_SUCCESS && event)
        dm_next->clRetainEvent(kernel);
    if (dm_next->clSetEventCallback(kernel, CL_COMPLETE, kernel_done, g) != CL_SUCCESS) {
        pthread_mutex_lock(&lock);
        g->driver_called = true;
        finished_locked(g, CL_COMPLETE);
        pthread_mutex_unlock(&lock);
    }
    if (err != CL_SUCCESS) {
        /* The kernel was enqueued, so the call succeeded: give its own
         * event, without the modelled run time. */
        if (event)
            *event = kernel;
        return CL_SUCCESS;
    }
    if (event)
        *event = marker;
    else
        dm_next->clReleaseEvent(marker);
    return CL_SUCCESS;
}

static cl_int CL_API_CALL get_device_info(cl_device_id d, cl_device_info p, size_t size,
                                          void *value, size_t *size_ret) {
    cl_int err = dm_next->clGetDeviceInfo(d, p, size, value, size_ret);
    if (err == CL_SUCCESS && p == CL_DEVICE_TYPE && value && size >= sizeof(cl_device_type))
        *(cl_device_type *)value = CL_DEVICE_TYPE_GPU;
    return err;
}

/* The driver's devices are all GPUs now: a request for GPUs gets them all,
 * one for CPUs gets none. */
static cl_int CL_API_CALL get_device_ids(cl_platform_id p, cl_device_type type, cl_uint n,
                                         cl_device_id *ids, cl_uint *n_ret) {
    if (type != CL_DEVICE_TYPE_ALL && type != CL_DEVICE_TYPE_DEFAULT) {
        if (type & CL_DEVICE_TYPE_GPU)
            type = CL_DEVICE_TYPE_ALL;
        else if (type & CL_DEVICE_TYPE_CPU)
            return CL_DEVICE_NOT_FOUND;
    }
    return dm_next->clGetDeviceIDs(p, type, n, ids, n_ret);
}

void dm_device_install(cl_icd_dispatch *d) {
    if (dm_cfg.device != DM_DEVICE_TIMER)
        return;
    d->clCreateKernel = create_kernel;
    d->clCreateKernelsInProgram = create_kernels;
    d->clSetKernelArg = set_kernel_arg;
    d->clEnqueueNDRangeKernel = enqueue_ndrange;
    d->clGetDeviceInfo = get_device_info;
    d->clGetDeviceIDs = get_device_ids;
}
