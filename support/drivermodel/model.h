/* SPDX-License-Identifier: MIT */
/*
 * Driver models (docs/driver-models.md): an OpenCL layer, loaded with
 * OPENCL_LAYERS, that makes the real driver below it (PoCL, rusticl) behave
 * as another driver does, one parameter at a time. For cw's tests and
 * benchmark only: never linked into libcw or the preload.
 */
#ifndef CW_DRIVERMODEL_MODEL_H
#define CW_DRIVERMODEL_MODEL_H

#include <CL/cl_icd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define DM_HIDDEN __attribute__((visibility("hidden")))

/* What CL_COMPLETE callbacks of failed commands (negative status) do. */
enum dm_failed {
    DM_FAILED_REAL,          /* whatever the driver below does */
    DM_FAILED_FIRE,          /* the model fires them with the error status (the specification) */
    DM_FAILED_FIRE_COMPLETE, /* fires them with CL_COMPLETE as the status (PoCL 7.0) */
    DM_FAILED_DROP,          /* never called (PoCL 3.1-6.0, rusticl) */
};

/* The driver's own clWaitForEvents and clFinish. */
enum dm_wait {
    DM_WAIT_BLOCK,     /* the driver's own blocking wait */
    DM_WAIT_SPIN,      /* busy-poll the status until done */
    DM_WAIT_YIELD,     /* poll with sched_yield between looks */
    DM_WAIT_SPINBLOCK, /* spin spin_us, then block */
};

enum dm_device {
    DM_DEVICE_REAL,  /* kernels run on the driver's device */
    DM_DEVICE_TIMER, /* kernels' run time passes on a timer, no host CPU */
};

typedef struct dm_config {
    char preset[16];
    long callback_delay_us; /* every callback at least this late */
    long jitter_us;         /* plus a uniform random 0..jitter_us */
    enum dm_failed failed;
    enum dm_wait wait;
    long spin_us;     /* spinblock: how long to spin before blocking */
    long stall_us;    /* clSetEventCallback stalls this long ... */
    long stall_every; /* ... every stall_every-th registration */
    enum dm_device device;
    long kernel_us;     /* timer device: run time of a kernel other than busy */
    long busy_ns;       /* timer device: ns per iteration of the busy kernel */
    unsigned long seed; /* the jitter's random sequence */
} dm_config;

/* The model in force, set once by clInitLayer before any other entry runs. */
DM_HIDDEN extern dm_config dm_cfg;
/* The driver below (the next layer or the loader's dispatch to the ICD). */
DM_HIDDEN extern const cl_icd_dispatch *dm_next;

/* config.c: parse `preset[,name=value...]` (or only name=value pairs) into
 * *cfg. Returns 0, or -1 with a message naming the bad item in msg. */
DM_HIDDEN int dm_config_parse(const char *text, dm_config *cfg, char *msg, size_t msglen);
/* One line describing cfg, for the layer's banner and the tests. */
DM_HIDDEN void dm_config_describe(const dm_config *cfg, char *buf, size_t len);
/* Whether callbacks go through the model's own delivery thread. */
DM_HIDDEN bool dm_config_wraps_callbacks(const dm_config *cfg);

/* Clock and sleep shared by the parts (layer.c). */
DM_HIDDEN uint64_t dm_now_ns(void);
DM_HIDDEN void dm_sleep_ns(uint64_t ns);
/* A model thread of its own: `wake` initialised on CLOCK_MONOTONIC (the
 * clock of dm_now_ns), then fn started detached, so that exit never waits
 * for it; aborts, naming `what`, if it cannot start. */
DM_HIDDEN void dm_thread_start(pthread_cond_t *wake, void *(*fn)(void *), const char *what);
/* Wait on c until signalled or dm_now_ns() reaches `until` (UINT64_MAX: no
 * time limit); m held, as for pthread_cond_wait. */
DM_HIDDEN void dm_cond_wait_until(pthread_cond_t *c, pthread_mutex_t *m, uint64_t until);

/* callbacks.c */
DM_HIDDEN cl_int CL_API_CALL dm_set_event_callback(cl_event ev, cl_int type,
                                                   void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                                                   void *data);
DM_HIDDEN cl_int CL_API_CALL dm_set_user_event_status(cl_event ev, cl_int status);

/* waits.c */
DM_HIDDEN cl_int CL_API_CALL dm_wait_for_events(cl_uint n, const cl_event *list);
DM_HIDDEN cl_int CL_API_CALL dm_finish(cl_command_queue q);

/* device.c */
DM_HIDDEN void dm_device_install(cl_icd_dispatch *d);
/* A user event was set to a failed status: look at the pending kernels. */
DM_HIDDEN void dm_device_failure_seen(void);

#endif
