/* SPDX-License-Identifier: MIT */
/* Layer 6.0: status reads, the flush rule, error mapping and the first look. */
#include "status.h"

int cw__status_error(cl_int err, cl_int *cl_status) {
    *cl_status = err;
    return err == CL_INVALID_EVENT ? CW_ERR_INVALID_EVENT : CW_ERR_OPENCL;
}

int cw__status_read(cl_event event, cl_int *status) {
    cl_int st = 0;
    cl_int err = clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    if (err != CL_SUCCESS)
        return cw__status_error(err, status);
    *status = st;
    return CW_OK;
}

int cw__status_flush(cl_event event, cl_int status, cl_int *cl_status) {
    if (status != CL_QUEUED)
        return CW_OK;
    cl_command_queue queue = NULL;
    cl_int err = clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof queue, &queue, NULL);
    if (err == CL_SUCCESS && queue)
        err = clFlush(queue);
    return err == CL_SUCCESS ? CW_OK : cw__status_error(err, cl_status);
}

int cw__status_first_look(cl_event event, bool flush, cl_int *status) {
    int rc = cw__status_read(event, status);
    if (rc != CW_OK || *status <= CL_COMPLETE || !flush)
        return rc;
    return cw__status_flush(event, *status, status);
}
