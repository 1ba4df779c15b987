/* SPDX-License-Identifier: MIT */
/* cw: the version these headers belong to. Generated from CMake's project(VERSION); do not edit. */
#ifndef CW_VERSION_H
#define CW_VERSION_H

#define CW_VERSION_MAJOR 1
#define CW_VERSION_MINOR 0
#define CW_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, as cw_version() returns it. */
#define CW_VERSION_NUMBER (CW_VERSION_MAJOR * 10000 + CW_VERSION_MINOR * 100 + CW_VERSION_PATCH)
#define CW_VERSION_STRING "1.0.0"

#endif
