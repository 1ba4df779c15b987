/* SPDX-License-Identifier: MIT */
/* What auto learned of the drivers, as text a later process can start from. */
#ifndef CW_LEARNED_H
#define CW_LEARNED_H

#include <stddef.h>
#include "cw/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What auto learned of each OpenCL platform, as text: one line for each
 * platform on which it decided something (how late callbacks come, whether
 * the driver's own wait sleeps, which way serves long waits), keyed by
 * cw's version and the platform's name, version and devices. A program
 * that runs for a few waits only ends before auto's trials pay off; given
 * the text of an earlier run, it starts with those decisions made
 * (cw_learned_export(3)).
 *
 * The text is printable ASCII, one line a platform, tab-separated fields:
 * the first four (cw's version, then the platform's name, version and
 * device names) are the key, the fifth what was learned. Nothing else of
 * its format is promised; give it back as it came.
 *
 * cw_learned_export writes as many whole lines as fit in `size` bytes
 * with their NUL (`buf` may be NULL when `size` is 0) and sets *needed,
 * when not NULL, to the length of the whole text without the NUL: it fit
 * when *needed < size. It asks OpenCL for the names of platforms it has
 * not named before. CW_ERR_INVALID_ARGUMENT for a NULL `buf` with a
 * non-zero `size`.
 *
 * cw_learned_import takes each line whose key is one of this process's
 * platforms (clGetPlatformIDs) and of this version of cw; on that platform
 * it seeds each decision this process has not yet made itself, which then
 * stands as if learned here. Other lines (another platform, another cw,
 * malformed) are skipped. Whether failed commands fire their callbacks,
 * which turns the failed-command checks off, is never taken from the
 * text: each process probes it. *seeded, when not NULL, gets the number of
 * platforms seeded. CW_ERR_INVALID_ARGUMENT for a NULL `text`.
 *
 * Both may be called from any thread at any time; a decision a wait makes
 * while the text is imported may be the wait's or the text's.
 */
CW_API int cw_learned_export(char *buf, size_t size, size_t *needed);
CW_API int cw_learned_import(const char *text, unsigned *seeded);

#ifdef __cplusplus
}
#endif
#endif
