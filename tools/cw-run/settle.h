/* SPDX-License-Identifier: MIT */
/*
 * The preload's releases of its own events (clFinish's marker, a queue's
 * last command, a blocking call's event), put off while a failure may
 * still be spreading through the driver.
 *
 * PoCL 3.1 to 6.0 fail a command whose wait list holds a failed event
 * inside the clSetUserEventStatus call that set the negative status
 * (pocl_broadcast, then the device's notify), and go on using the failed
 * command after they dropped their own reference to it:
 * pocl_update_event_failed locks it again after
 * pocl_update_event_finished released it (lib/CL/pocl_util.c; PoCL 7.0
 * no longer does). If the only other reference was the preload's, and the
 * preload let it go as soon as its wait saw the command failed, that lock
 * finds the event freed: PoCL aborts ("PTHREAD ERROR in
 * pocl_update_event_failed(): Invalid argument"). Natively there is no
 * such reference, only the program's, which it drops after its own wait
 * returns, as late as the driver lets it.
 *
 * So while a negative clSetUserEventStatus is in progress (the wrapper
 * says so), the preload's releases wait until the last such call has
 * returned; at other times they are made at once. A wait that saw a
 * command fail saw it after the call that failed it began, so that call
 * is counted. A status set through an entry point the preload does not
 * interpose is not; its releases are made at once, as before.
 *
 * Thread-safe, without a lock (a fork in another thread leaves nothing
 * held; a child forked while another thread was setting a failing status
 * keeps that call counted, and so keeps its releases for good); no OpenCL
 * call but the releases.
 */
#ifndef CWP_SETTLE_H
#define CWP_SETTLE_H

#include <CL/cl.h>

/* Around the real clSetUserEventStatus with a negative status. */
void cwp_settle_failing_begin(void);
void cwp_settle_failing_end(void);

/* Drop the preload's reference to `event` (NULL: nothing), now or once no
 * failing status is being set. */
void cwp_settle_release(cl_event event);

#endif
