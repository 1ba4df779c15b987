// SPDX-License-Identifier: MIT
// OpenCL for the C++ tests through Khronos' opencl.hpp: the first device of
// the first platform that has one (the tests' environment names the
// implementation with OCL_ICD_VENDORS), its context and one queue.
#ifndef CW_CPP_TEST_CLSETUP_HPP
#define CW_CPP_TEST_CLSETUP_HPP

#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 120
#endif
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#include <CL/opencl.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <thread>
#include <vector>

namespace cwtest {

struct cl_host {
    cl::Device device;
    cl::Context context;
    cl::CommandQueue queue;

    cl_host() {
        std::vector<cl::Platform> platforms;
        cl::Platform::get(&platforms);
        for (auto &p : platforms) {
            std::vector<cl::Device> devices;
            if (p.getDevices(CL_DEVICE_TYPE_ALL, &devices) == CL_SUCCESS && !devices.empty()) {
                device = devices[0];
                break;
            }
        }
        if (!device()) {
            std::fprintf(stderr, "no OpenCL device\n");
            std::exit(1);
        }
        context = cl::Context(device);
        queue = cl::CommandQueue(context, device);
    }
};

inline cl_host &host() {
    static cl_host h;
    return h;
}

inline cl::UserEvent user_event() {
    cl_int err = CL_SUCCESS;
    cl::UserEvent ev(host().context, &err);
    if (err != CL_SUCCESS) {
        std::fprintf(stderr, "clCreateUserEvent: %d\n", err);
        std::exit(1);
    }
    return ev;
}

// Set `ev`'s status from another thread after `delay`.
inline std::thread set_later(cl::UserEvent ev, cl_int status, std::chrono::milliseconds delay) {
    return std::thread([ev, status, delay]() mutable {
        std::this_thread::sleep_for(delay);
        ev.setStatus(status);
    });
}

// Threads of this process.
inline int thread_count() {
    int n = 0;
    if (DIR *d = opendir("/proc/self/task")) {
        while (dirent *e = readdir(d))
            if (e->d_name[0] != '.')
                ++n;
        closedir(d);
    }
    return n;
}

} // namespace cwtest

#endif
