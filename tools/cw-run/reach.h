/* SPDX-License-Identifier: MIT */
/*
 * How cw-run reaches the program (reach.c): the OpenCL layer, or the
 * preload where the loader has no layer support.
 */
#ifndef CWR_REACH_H
#define CWR_REACH_H

/* Set up the environment so that the program it executes loads `object`
 * (libcw_preload.so) as CW_RUN_MECHANISM says: "layer", "preload", or
 * "auto" (unset or empty: the layer where the loader supports layers).
 * Returns 0, or cw-run's exit status after a message on stderr. */
int cwr_reach(const char *object);

#endif
