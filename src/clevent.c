/* SPDX-License-Identifier: MIT */
/* Layer 6 (internal): status reads, flushes, error mapping, callback registration. */
#include "clevent.h"

int cw__cl_failure(cl_int err, cl_int *cl_status) {
    *cl_status = err;
    return err == CL_INVALID_EVENT ? CW_ERR_INVALID_EVENT : CW_ERR_OPENCL;
}

int cw__read_status(cl_event event, cl_int *status) {
    cl_int st = 0;
    cl_int err = clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    if (err != CL_SUCCESS)
        return cw__cl_failure(err, status);
    *status = st;
    return CW_OK;
}

int cw__flush_if_queued(cl_event event, cl_int status, cl_int *cl_status) {
    if (status != CL_QUEUED)
        return CW_OK;
    cl_command_queue queue = NULL;
    cl_int err = clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof queue, &queue, NULL);
    if (err == CL_SUCCESS && queue)
        err = clFlush(queue);
    return err == CL_SUCCESS ? CW_OK : cw__cl_failure(err, cl_status);
}

static void CL_CALLBACK on_complete(cl_event event, cl_int status, void *data) {
    (void)event;
    /* `status` is the trigger status (CL_COMPLETE on most implementations,
     * even for a failed command); the waiter reads the real one itself. */
    cw_completion_signal_token((uintptr_t)data, status);
}

int cw__event_attach(cw_completion *c, cl_event event, cl_int *cl_error) {
    cl_int err =
        clSetEventCallback(event, CL_COMPLETE, on_complete, (void *)cw_completion_token(c));
    *cl_error = err;
    return err == CL_SUCCESS ? CW_OK : cw__cl_failure(err, cl_error);
}
