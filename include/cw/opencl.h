/* cw: the OpenCL headers as cw uses them (OpenCL 1.2 API level). */
#ifndef CW_OPENCL_H
#define CW_OPENCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#endif
