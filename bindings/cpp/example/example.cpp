// SPDX-License-Identifier: MIT
// cw's C++ binding in one program: double 1024 numbers on the first OpenCL
// device and wait for the kernel with cw::wait_for, then run eight kernels
// and await them all on an Asio io_context with cw::async_wait, one
// descriptor and no thread per wait.
#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#include <CL/opencl.hpp>

#include <cw.hpp>
#include <cw/asio.hpp>

#include <asio/io_context.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

static const char *source = "kernel void twice(global int *a) { a[get_global_id(0)] *= 2; }";

int main() {
    std::vector<cl::Platform> platforms;
    cl::Platform::get(&platforms);
    cl::Device device;
    for (auto &p : platforms) {
        std::vector<cl::Device> devices;
        if (p.getDevices(CL_DEVICE_TYPE_ALL, &devices) == CL_SUCCESS && !devices.empty()) {
            device = devices[0];
            break;
        }
    }
    if (!device()) {
        std::fprintf(stderr, "example: no OpenCL device\n");
        return 1;
    }
    cl::Context context(device);
    cl::CommandQueue queue(context, device);
    cl::Program program(context, source);
    if (program.build() != CL_SUCCESS) {
        std::fprintf(stderr, "example: the kernel did not build\n");
        return 1;
    }
    cl::Kernel kernel(program, "twice");
    std::vector<int> data(1024);
    for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<int>(i);
    cl::Buffer buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, data.size() * sizeof(int),
                      data.data());
    kernel.setArg(0, buffer);

    // 1. One kernel, one blocking wait with a timeout. cw::wait (no timeout)
    //    and the std::error_code overloads work the same way.
    cl::Event done;
    queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(data.size()), cl::NullRange,
                               nullptr, &done);
    try {
        if (!cw::wait_for(done, std::chrono::seconds(10))) {
            std::fprintf(stderr, "example: the kernel took more than 10 s\n");
            return 1;
        }
    } catch (const cw::error &e) { // a failed command, a bad event, ...
        std::fprintf(stderr, "example: %s (OpenCL status %d)\n", e.what(), e.status());
        return 1;
    }
    queue.enqueueReadBuffer(buffer, CL_TRUE, 0, data.size() * sizeof(int), data.data());
    std::printf("wait_for: data[1023] = %d\n", data[1023]);

    // 2. Eight kernels awaited on an io_context: each handler runs on the
    //    thread that runs io.run(), once its kernel has finished.
    asio::io_context io;
    int completed = 0;
    for (int i = 0; i < 8; ++i) {
        cl::Event ev;
        queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(data.size()), cl::NullRange,
                                   nullptr, &ev);
        // The event may be released once async_wait returns.
        cw::async_wait(io.get_executor(), ev, [&completed, i](std::error_code ec, cl_int status) {
            if (ec)
                std::fprintf(stderr, "example: kernel %d: %s (status %d)\n", i,
                             ec.message().c_str(), status);
            else
                ++completed;
        });
    }
    io.run(); // returns when every wait has completed
    queue.enqueueReadBuffer(buffer, CL_TRUE, 0, data.size() * sizeof(int), data.data());
    std::printf("async_wait: %d of 8 kernels completed, data[1023] = %d\n", completed, data[1023]);
    return completed == 8 && data[1023] == 1023 * 512 ? 0 : 1;
}
