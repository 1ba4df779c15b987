/* SPDX-License-Identifier: MIT */
/*
 * The OpenCL layer (layer.c): how a call reached the wrappers, for the
 * notice at exit and the profile.
 */
#ifndef CWP_LAYER_H
#define CWP_LAYER_H

/* "layer" when the loader called the wrappers through this object's
 * dispatch table, else "preload". */
const char *cwp_mechanism(void);

/* At exit: when no call of the program reached a wrapper although it used
 * OpenCL, say so on stderr, and why that may be. An atexit handler. */
void cwp_reach_notice(void);

#endif
