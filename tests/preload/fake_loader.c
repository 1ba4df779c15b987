/* SPDX-License-Identifier: MIT */
/*
 * A libOpenCL.so.1 without layer support, for mechanism.sh: cw-run, finding
 * it first on LD_LIBRARY_PATH, must fall back to the preload. The programs
 * run with it use no OpenCL, so it needs no entry points.
 */
int cw_fake_loader(void);

int cw_fake_loader(void) {
    return 0;
}
