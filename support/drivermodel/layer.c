/* SPDX-License-Identifier: MIT */
/*
 * The layer's entry points (the OpenCL layer API of CL/cl_layer.h, as the
 * ICD loader calls them) and the dispatch table that routes the calls the
 * model changes; every other call goes straight to the driver below.
 */
#include <CL/cl_layer.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

#define DM_EXPORT __attribute__((visibility("default")))

dm_config dm_cfg;
const cl_icd_dispatch *dm_next;
static cl_icd_dispatch table;
static char name[600];

uint64_t dm_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void dm_sleep_ns(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
}

void dm_thread_start(pthread_cond_t *wake, void *(*fn)(void *), const char *what) {
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, fn, NULL)) {
        fprintf(stderr, "cw driver model: cannot start the %s\n", what);
        abort();
    }
    pthread_attr_destroy(&a);
}

void dm_cond_wait_until(pthread_cond_t *c, pthread_mutex_t *m, uint64_t until) {
    if (until == UINT64_MAX) {
        pthread_cond_wait(c, m);
        return;
    }
    struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
    pthread_cond_timedwait(c, m, &ts);
}

DM_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param, size_t size, void *value,
                                            size_t *size_ret) {
    const void *src;
    size_t len;
    static const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
    if (param == CL_LAYER_API_VERSION) {
        src = &version;
        len = sizeof version;
    } else if (param == CL_LAYER_NAME) {
        if (!name[0])
            snprintf(name, sizeof name, "cw driver model");
        src = name;
        len = strlen(name) + 1;
    } else {
        return CL_INVALID_VALUE;
    }
    if (value && size < len)
        return CL_INVALID_VALUE;
    if (value)
        memcpy(value, src, len);
    if (size_ret)
        *size_ret = len;
    return CL_SUCCESS;
}

DM_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch *target,
                                         cl_uint *num_entries_ret,
                                         const cl_icd_dispatch **layer_dispatch_ret) {
    /* Every entry the model uses must exist in the loader's table. */
    if (!target || !num_entries_ret || !layer_dispatch_ret ||
        num_entries < sizeof(cl_icd_dispatch) / sizeof(void *))
        return CL_INVALID_VALUE;
    const char *text = getenv("CW_DRIVER_MODEL");
    char msg[256] = "";
    if (dm_config_parse(text, &dm_cfg, msg, sizeof msg)) {
        fprintf(stderr, "cw driver model: CW_DRIVER_MODEL=%s: %s; the layer is not loaded\n", text,
                msg);
        return CL_INVALID_VALUE;
    }
    char desc[400];
    dm_config_describe(&dm_cfg, desc, sizeof desc);
    snprintf(name, sizeof name, "cw driver model: %s", desc);
    const char *verbose = getenv("CW_DRIVER_MODEL_VERBOSE");
    if (verbose && *verbose && strcmp(verbose, "0"))
        fprintf(stderr, "%s\n", name);
    dm_next = target;
    /* NULL entries go to the driver below (the loader fills them in). */
    memset(&table, 0, sizeof table);
    table.clSetEventCallback = dm_set_event_callback;
    table.clSetUserEventStatus = dm_set_user_event_status;
    table.clWaitForEvents = dm_wait_for_events;
    table.clFinish = dm_finish;
    dm_device_install(&table);
    *num_entries_ret = sizeof(cl_icd_dispatch) / sizeof(void *);
    *layer_dispatch_ret = &table;
    return CL_SUCCESS;
}
