// SPDX-License-Identifier: MIT
// Awaiting N concurrent OpenCL kernel events from C++, two ways:
//
//   asio    cw::async_wait(io.get_executor(), ev, handler) on one io_context
//           run by the main thread (one descriptor, no thread per wait)
//   async   std::async(std::launch::async, clWaitForEvents on ev): one
//           thread per wait, what plain C++ code writes
//
// Each measurement: N kernels on one in-order profiling queue of the first
// OpenCL device, all held behind a user event (the gate); the N waits
// start, then the gate opens and the kernels run one after another.
// Measured: process CPU time (every thread, the OpenCL implementation's
// included) from just before the waits start (thread creation is part of
// the cost of std::async) to the last wait's return; the same minus the
// kernels' own run time (the sum of END - START: PoCL runs them on threads
// of this process, so every method pays it); wall time from the gate to
// the last return; threads (the most present while the waits were pending,
// beyond those before they started). Latency per event: from the kernel's
// CL_PROFILING_COMMAND_END (checked at start to be CLOCK_MONOTONIC_RAW) to
// its handler or thread returning (CLOCK_MONOTONIC_RAW read there). A
// third run, finish, has the same kernels and one clWaitForEvents on the
// last: what it costs, every method pays; the CPU a method takes beyond it
// is its way of waiting. Every round runs each N with the methods and
// finish in rotating order; CPU, wall and threads are medians over the
// rounds, p50/p99 over the latencies of all rounds.
#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#include <CL/opencl.hpp>

#include "clsetup.hpp" // cwtest::thread_count, shared with the tests

#include <cw.hpp>
#include <cw/asio.hpp>

#include <asio/io_context.hpp>
#include <asio/version.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

const char *kernel_source = R"(
kernel void busy(uint n, global float *out) {
    float x = 0.0f;
    for (uint i = 0; i < n; ++i)
        x = x * 0.999f + 1.0f;
    out[get_global_id(0)] = x;
}
)";

const char *const methods[] = {"asio", "async", "finish"};

int64_t now_ns(clockid_t clock) {
    timespec ts;
    clock_gettime(clock, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

[[noreturn]] void die(const std::string &why) {
    std::fprintf(stderr, "cw-cpp-bench: %s\n", why.c_str());
    std::exit(1);
}

struct device {
    cl::Device dev;
    cl::Context ctx;
    cl::CommandQueue queue;
    cl::Kernel kernel;
    cl::Buffer out;
    std::string description;

    explicit device(cl_uint iterations) {
        std::vector<cl::Platform> platforms;
        cl::Platform::get(&platforms);
        for (auto &p : platforms) {
            std::vector<cl::Device> devices;
            if (p.getDevices(CL_DEVICE_TYPE_ALL, &devices) == CL_SUCCESS && !devices.empty()) {
                dev = devices[0];
                description =
                    p.getInfo<CL_PLATFORM_VERSION>() + "; device: " + dev.getInfo<CL_DEVICE_NAME>();
                break;
            }
        }
        if (!dev())
            die("no OpenCL device (OCL_ICD_VENDORS?)");
        ctx = cl::Context(dev);
        queue = cl::CommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE);
        cl::Program program(ctx, kernel_source);
        if (program.build() != CL_SUCCESS)
            die("the kernel did not build");
        kernel = cl::Kernel(program, "busy");
        out = cl::Buffer(ctx, CL_MEM_WRITE_ONLY, sizeof(float));
        kernel.setArg(0, iterations);
        kernel.setArg(1, out);
    }

    // n kernels behind a closed gate.
    std::vector<cl::Event> launch(int n, cl::UserEvent &gate) {
        gate = cl::UserEvent(ctx);
        std::vector<cl::Event> events(n);
        std::vector<cl::Event> wait_gate{gate};
        for (int i = 0; i < n; ++i)
            if (queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(1), cl::NullRange,
                                           i == 0 ? &wait_gate : nullptr, &events[i]) != CL_SUCCESS)
                die("enqueue failed");
        queue.flush();
        return events;
    }

    // The latency needs profiling times on CLOCK_MONOTONIC_RAW: each kernel
    // must start and end between two host readings around it. Returns the
    // longest kernel in microseconds.
    double check_clock() {
        int64_t worst = 0;
        for (int i = 0; i < 20; ++i) {
            cl::UserEvent gate;
            std::vector<cl::Event> ev = launch(1, gate);
            int64_t before = now_ns(CLOCK_MONOTONIC_RAW);
            gate.setStatus(CL_COMPLETE);
            ev[0].wait();
            int64_t after = now_ns(CLOCK_MONOTONIC_RAW);
            auto start = int64_t(ev[0].getProfilingInfo<CL_PROFILING_COMMAND_START>());
            auto end = int64_t(ev[0].getProfilingInfo<CL_PROFILING_COMMAND_END>());
            if (!(before <= start && start <= end && end <= after))
                die("the profiling clock is not CLOCK_MONOTONIC_RAW: the latency cannot be "
                    "measured on this platform");
            worst = std::max(worst, end - start);
        }
        return double(worst) / 1e3;
    }
};

struct run {
    double cpu_s, wait_cpu_s, wall_s;
    int threads;
    std::vector<double> latency_us;
};

run measure(device &d, const std::string &method, int n) {
    cl::UserEvent gate;
    std::vector<cl::Event> events = d.launch(n, gate);
    std::vector<int64_t> resumed(n, 0);
    int before = cwtest::thread_count();
    int64_t cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    int threads = 0;
    int64_t wall0, cpu1, wall1;
    if (method == "asio") {
        asio::io_context io;
        int failed = 0;
        for (int i = 0; i < n; ++i)
            cw::async_wait(io.get_executor(), events[i],
                           [&resumed, &failed, i](std::error_code ec, cl_int) {
                               resumed[i] = now_ns(CLOCK_MONOTONIC_RAW);
                               failed += ec ? 1 : 0;
                           });
        threads = cwtest::thread_count() - before;
        wall0 = now_ns(CLOCK_MONOTONIC);
        gate.setStatus(CL_COMPLETE);
        io.run();
        cpu1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        wall1 = now_ns(CLOCK_MONOTONIC);
        if (failed)
            die("asio: a wait failed");
    } else if (method == "async") {
        std::vector<std::future<cl_int>> waits;
        waits.reserve(n);
        for (int i = 0; i < n; ++i)
            waits.push_back(std::async(std::launch::async, [&resumed, &events, i] {
                cl_event ev = events[i]();
                cl_int rc = clWaitForEvents(1, &ev);
                resumed[i] = now_ns(CLOCK_MONOTONIC_RAW);
                return rc;
            }));
        threads = cwtest::thread_count() - before;
        wall0 = now_ns(CLOCK_MONOTONIC);
        gate.setStatus(CL_COMPLETE);
        for (auto &w : waits)
            if (w.get() != CL_SUCCESS)
                die("async: clWaitForEvents failed");
        cpu1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        wall1 = now_ns(CLOCK_MONOTONIC);
    } else {
        wall0 = now_ns(CLOCK_MONOTONIC);
        gate.setStatus(CL_COMPLETE);
        cl_event last = events.back()(); // in-order queue: the last finishes last
        if (clWaitForEvents(1, &last) != CL_SUCCESS)
            die("finish: clWaitForEvents failed");
        cpu1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
        wall1 = now_ns(CLOCK_MONOTONIC);
        cl::WaitForEvents(events); // outside the timing: every event finished
    }
    run r{};
    int64_t kernels_ns = 0;
    for (int i = 0; i < n; ++i) {
        if (events[i].getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() != CL_COMPLETE)
            die(method + ": an event did not complete");
        auto start = int64_t(events[i].getProfilingInfo<CL_PROFILING_COMMAND_START>());
        auto end = int64_t(events[i].getProfilingInfo<CL_PROFILING_COMMAND_END>());
        kernels_ns += end - start;
        if (method != "finish")
            r.latency_us.push_back(double(resumed[i] - end) / 1e3);
    }
    r.cpu_s = double(cpu1 - cpu0) / 1e9;
    r.wait_cpu_s = r.cpu_s - double(kernels_ns) / 1e9;
    r.wall_s = double(wall1 - wall0) / 1e9;
    r.threads = threads;
    return r;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t k = v.size();
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

double pct(std::vector<double> v, double q) {
    if (v.empty())
        return NAN;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

struct summary {
    double cpu_ms, wait_cpu_ms, wall_ms, threads, p50_us, p99_us;
    size_t samples;
};

summary summarise(const std::vector<run> &runs) {
    std::vector<double> cpu, wait_cpu, wall, threads, lat;
    for (const run &r : runs) {
        cpu.push_back(r.cpu_s * 1e3);
        wait_cpu.push_back(r.wait_cpu_s * 1e3);
        wall.push_back(r.wall_s * 1e3);
        threads.push_back(r.threads);
        lat.insert(lat.end(), r.latency_us.begin(), r.latency_us.end());
    }
    return {median(cpu),    median(wait_cpu), median(wall), median(threads),
            pct(lat, 0.50), pct(lat, 0.99),   lat.size()};
}

std::string fmt(const char *f, double x) {
    if (std::isnan(x))
        return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, f, x);
    return buf;
}

std::string load_average() {
    std::ifstream f("/proc/loadavg");
    std::string one;
    f >> one;
    return one;
}

void usage(FILE *to) {
    std::fprintf(to, "usage: cw-cpp-bench [--quick] [--sizes LIST] [--rounds N] [--iterations N]\n"
                     "                    [--json PATH] [--text PATH]\n"
                     "Awaits N concurrent kernel events with cw::async_wait on Asio and with one\n"
                     "std::async thread each (clWaitForEvents); see the top of bench_async.cpp.\n"
                     "  --quick        a smoke run: N = 1, 10, 100 and 2 rounds\n"
                     "  --sizes LIST   the N values (default 1,10,100,1000)\n"
                     "  --rounds N     rounds (default 7)\n"
                     "  --iterations N loop iterations of the busy kernel (default 100000)\n"
                     "  --json PATH    write the results as JSON\n"
                     "  --text PATH    write the printed report to a file too\n");
}

} // namespace

int main(int argc, char **argv) {
    std::vector<int> sizes{1, 10, 100, 1000};
    int rounds = 7;
    long iterations = 100000;
    std::string json_path, text_path;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                usage(stderr);
                die(a + " needs a value");
            }
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        } else if (a == "--quick") {
            sizes = {1, 10, 100};
            rounds = 2;
        } else if (a == "--sizes") {
            sizes.clear();
            std::stringstream ss(value());
            std::string item;
            while (std::getline(ss, item, ',')) {
                int n = std::atoi(item.c_str());
                if (n < 1 || n > 100000)
                    die("bad size '" + item + "' (1..100000)");
                sizes.push_back(n);
            }
        } else if (a == "--rounds") {
            rounds = std::atoi(value().c_str());
            if (rounds < 1)
                die("--rounds must be at least 1");
        } else if (a == "--iterations") {
            iterations = std::atol(value().c_str());
            if (iterations < 1 || iterations > 100000000)
                die("--iterations must be 1..100000000");
        } else if (a == "--json") {
            json_path = value();
        } else if (a == "--text") {
            text_path = value();
        } else {
            usage(stderr);
            die("unknown argument " + a);
        }
    }

    device d{cl_uint(iterations)};
    double kernel_us = d.check_clock();
    std::string load_before = load_average();
    std::map<std::pair<std::string, int>, std::vector<run>> runs;
    int total = rounds * int(sizes.size()) * 3, done = 0;
    for (int round = 0; round < rounds; ++round) {
        for (int n : sizes) {
            for (int k = 0; k < 3; ++k) {
                std::string m = methods[(round + k) % 3]; // rotating order
                runs[{m, n}].push_back(measure(d, m, n));
                ++done;
            }
            std::fprintf(stderr, "\rround %d/%d, N=%d: %d of %d runs", round + 1, rounds, n, done,
                         total);
        }
    }
    std::fprintf(stderr, "\n");
    std::string load_after = load_average();

    std::ostringstream out;
    out << "cw-cpp-bench: awaiting N concurrent kernel events from C++\n";
    out << "platform: " << d.description << "; cw " << cw_version_string() << "; compiler "
#if defined(__clang__)
        << "clang " << __clang_version__
#else
        << "g++ " << __VERSION__
#endif
        << "; Asio " << ASIO_VERSION / 100000 << "." << ASIO_VERSION / 100 % 1000 << "."
        << ASIO_VERSION % 100 << "\n";
    out << "kernel: " << iterations << " iterations, about " << fmt("%.0f", kernel_us) << " us; "
        << rounds
        << " rounds, methods interleaved; CPU/wall/threads: medians; p50/p99: all rounds' "
           "latencies\n";
    out << "load average before " << load_before << ", after " << load_after << "; "
        << std::thread::hardware_concurrency() << " CPUs\n";
    out << "latency: CL_PROFILING_COMMAND_END (CLOCK_MONOTONIC_RAW) to the handler or thread "
           "returning\n\n";
    out << "CPU: the whole process, from the waits' start; CPU-kernels: minus the kernels' run "
           "time; finish: the same kernels with one clWaitForEvents on the last, the cost every "
           "method shares\n\n";
    out << "| N | method | CPU ms | CPU-kernels ms | wall ms | threads | p50 us | p99 us |\n";
    out << "|---|---|---|---|---|---|---|---|\n";
    std::map<std::pair<std::string, int>, summary> table;
    for (int n : sizes)
        for (const char *m : methods) {
            summary s = summarise(runs[{m, n}]);
            table[{m, n}] = s;
            out << "| " << n << " | " << m << " | " << fmt("%.1f", s.cpu_ms) << " | "
                << fmt("%.1f", s.wait_cpu_ms) << " | " << fmt("%.1f", s.wall_ms) << " | "
                << fmt("%g", s.threads) << " | " << fmt("%.1f", s.p50_us) << " | "
                << fmt("%.1f", s.p99_us) << " |\n";
        }
    // The goals, at the largest N: no thread, at most half the CPU
    // std::async adds over finish, and a p50 no later than std::async's.
    int n = sizes.back();
    const summary &a = table[{"asio", n}], &b = table[{"async", n}], &f = table[{"finish", n}];
    out << "\ngoals at N = " << n << " (asio against async):\n";
    auto goal = [&out](const char *what, bool met, const std::string &detail) {
        char label[48];
        std::snprintf(label, sizeof label, "%-34s", what);
        out << "  " << label << (met ? " met    " : " MISSED ") << detail << "\n";
    };
    goal("asio creates no thread", a.threads == 0,
         fmt("%g", a.threads) + " threads against " + fmt("%g", b.threads));
    if (b.cpu_ms > f.cpu_ms) {
        double ratio = std::max(a.cpu_ms - f.cpu_ms, 0.0) / (b.cpu_ms - f.cpu_ms);
        goal("asio CPU over finish <= 0.5x", ratio <= 0.5,
             fmt("%.2fx", ratio) + " (" + fmt("%.1f", a.cpu_ms - f.cpu_ms) + " ms against " +
                 fmt("%.1f", b.cpu_ms - f.cpu_ms) + " ms)");
    }
    if (b.p50_us > 0)
        goal("asio p50 <= 1.0x async", a.p50_us <= b.p50_us,
             fmt("%.2fx", a.p50_us / b.p50_us) + " (" + fmt("%.1f", a.p50_us) + " us against " +
                 fmt("%.1f", b.p50_us) + " us)");
    std::fputs(out.str().c_str(), stdout);
    if (!text_path.empty()) {
        std::ofstream t(text_path);
        t << out.str();
        if (!t)
            die("cannot write " + text_path);
    }
    if (!json_path.empty()) {
        std::ofstream j(json_path);
        j << "{\n  \"iterations\": " << iterations << ",\n  \"rounds\": " << rounds
          << ",\n  \"kernel_us\": " << fmt("%.1f", kernel_us) << ",\n  \"load_before\": \""
          << load_before << "\",\n  \"load_after\": \"" << load_after << "\",\n  \"results\": [";
        bool first = true;
        for (auto &[key, s] : table) {
            auto num = [](double x) {
                return std::isnan(x) ? std::string("null") : fmt("%.3f", x);
            };
            j << (first ? "\n" : ",\n") << "    {\"method\": \"" << key.first
              << "\", \"n\": " << key.second << ", \"cpu_ms\": " << num(s.cpu_ms)
              << ", \"wait_cpu_ms\": " << num(s.wait_cpu_ms) << ", \"wall_ms\": " << num(s.wall_ms)
              << ", \"threads\": " << num(s.threads) << ", \"p50_us\": " << num(s.p50_us)
              << ", \"p99_us\": " << num(s.p99_us) << ", \"samples\": " << s.samples << "}";
            first = false;
        }
        j << "\n  ]\n}\n";
        if (!j)
            die("cannot write " + json_path);
    }
    return 0;
}
