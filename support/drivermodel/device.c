/* SPDX-License-Identifier: MIT */
#include "model.h"

void dm_device_install(cl_icd_dispatch *d) {
    (void)d;
}
