/* SPDX-License-Identifier: MIT */
/* The loader's entry points (real.h). */
#include "real.h"

#include <dlfcn.h>

struct cwp_real cwp_real;

bool cwp_real_load(void) {
    /* RTLD_NEXT: the next definition after this object in the search order,
     * i.e. the ICD loader (a dependency of this library, so it is loaded
     * even when the program itself dlopens it only later). */
#define CWP_LOOK_UP(field, function)                                                               \
    cwp_real.field = (__typeof__(cwp_real.field))dlsym(RTLD_NEXT, #function);
    CWP_REAL_1_2(CWP_LOOK_UP)
    CWP_REAL_OWN(CWP_LOOK_UP)
    CWP_REAL_2_0(CWP_LOOK_UP)
#undef CWP_LOOK_UP
#define CWP_FOUND(field, function) cwp_real.field &&
    return CWP_REAL_1_2(CWP_FOUND) CWP_REAL_OWN(CWP_FOUND) true;
#undef CWP_FOUND
}
