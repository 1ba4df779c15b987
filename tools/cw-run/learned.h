/* SPDX-License-Identifier: MIT */
/*
 * What auto learned, kept across runs in a file (CW_RUN_LEARNED,
 * docs/cw-run-internals.md "What auto learned, across runs"): read before the
 * process's first wait with cw, merged back at exit.
 */
#ifndef CWP_LEARNED_H
#define CWP_LEARNED_H

/* Seed cw from the file, once, before the first wait with cw (the
 * platforms' names are asked of OpenCL then, not at exit). */
void cwp_learned_begin(void);
/* How many platforms the file seeded (0 before cwp_learned_begin). */
unsigned cwp_learned_seeded(void);
/* The exit handler: write back what this process learned, if it waited
 * with cw and learned anything the file did not say. */
void cwp_learned_end(void);

#endif
