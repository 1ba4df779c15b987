/* SPDX-License-Identifier: MIT */
/*
 * libcw_preload.so: cw's waits under an unmodified OpenCL program, loaded
 * with LD_PRELOAD (cw-run sets it up; docs/cw-run.md).
 *
 * Interposition. An LD_PRELOADed library comes first in the global symbol
 * scope, so every reference to clWaitForEvents, clFinish or a blocking
 * enqueue that the dynamic linker resolves through that scope binds here:
 * the program's own references, and those of any library it loads later
 * with dlopen that lists libOpenCL.so.1 as NEEDED (pyopencl's _cl module).
 * Everything else, and the real entry points these wrappers forward to, are
 * reached with dlsym(RTLD_NEXT, ...), i.e. the ICD loader, untouched. A
 * program that looks entry points up with dlsym(handle, ...) on its own
 * handle of libOpenCL gets the loader's functions and is not interposed.
 *
 * The preload carries its own copy of cw (the static library, hidden
 * symbols), so its counters (cw_stats_get) count only the waits it made,
 * and a program that links libcw-opencl.so itself keeps its own copy untouched.
 *
 * Recursion: the waits below call cw, and cw calls OpenCL. cw's blocking
 * strategy calls clWaitForEvents, and a reference to that name from inside
 * this shared object binds to the interposer above (default visibility, so
 * preemptible). A per-thread depth counter marks the calls cw makes on the
 * preload's behalf; the interposers forward those straight to the real
 * function.
 */
#undef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cw.h"
#include "lastcmd.h"

#define CWP_EXPORT __attribute__((visibility("default")))

/* ---- the interposed calls ---------------------------------------------- */

enum cwp_call {
    CWP_WAIT_FOR_EVENTS,
    CWP_FINISH,
    CWP_READ_BUFFER,
    CWP_WRITE_BUFFER,
    CWP_READ_BUFFER_RECT,
    CWP_WRITE_BUFFER_RECT,
    CWP_READ_IMAGE,
    CWP_WRITE_IMAGE,
    CWP_MAP_BUFFER,
    CWP_MAP_IMAGE,
    CWP_SVM_MEMCPY,
    CWP_SVM_MAP,
    CWP_CALLS
};

static const char *const cwp_call_names[CWP_CALLS] = {
    "clWaitForEvents",         "clFinish",
    "clEnqueueReadBuffer",     "clEnqueueWriteBuffer",
    "clEnqueueReadBufferRect", "clEnqueueWriteBufferRect",
    "clEnqueueReadImage",      "clEnqueueWriteImage",
    "clEnqueueMapBuffer",      "clEnqueueMapImage",
    "clEnqueueSVMMemcpy",      "clEnqueueSVMMap",
};

typedef cl_int (*wait_for_events_fn)(cl_uint, const cl_event *);
typedef cl_int (*finish_fn)(cl_command_queue);
typedef cl_int (*read_buffer_fn)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                                 const cl_event *, cl_event *);
typedef cl_int (*write_buffer_fn)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *,
                                  cl_uint, const cl_event *, cl_event *);
typedef cl_int (*read_buffer_rect_fn)(cl_command_queue, cl_mem, cl_bool, const size_t *,
                                      const size_t *, const size_t *, size_t, size_t, size_t,
                                      size_t, void *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*write_buffer_rect_fn)(cl_command_queue, cl_mem, cl_bool, const size_t *,
                                       const size_t *, const size_t *, size_t, size_t, size_t,
                                       size_t, const void *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*read_image_fn)(cl_command_queue, cl_mem, cl_bool, const size_t *, const size_t *,
                                size_t, size_t, void *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*write_image_fn)(cl_command_queue, cl_mem, cl_bool, const size_t *, const size_t *,
                                 size_t, size_t, const void *, cl_uint, const cl_event *,
                                 cl_event *);
typedef void *(*map_buffer_fn)(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t,
                               cl_uint, const cl_event *, cl_event *, cl_int *);
typedef void *(*map_image_fn)(cl_command_queue, cl_mem, cl_bool, cl_map_flags, const size_t *,
                              const size_t *, size_t *, size_t *, cl_uint, const cl_event *,
                              cl_event *, cl_int *);
typedef cl_int (*svm_memcpy_fn)(cl_command_queue, cl_bool, void *, const void *, size_t, cl_uint,
                                const cl_event *, cl_event *);
typedef cl_int (*svm_map_fn)(cl_command_queue, cl_bool, cl_map_flags, void *, size_t, cl_uint,
                             const cl_event *, cl_event *);

/* The non-blocking enqueues recorded for clFinish (lastcmd.h). */
typedef cl_int (*ndrange_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                             const size_t *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*task_fn)(cl_command_queue, cl_kernel, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*copy_buffer_fn)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
                                 const cl_event *, cl_event *);
typedef cl_int (*copy_buffer_rect_fn)(cl_command_queue, cl_mem, cl_mem, const size_t *,
                                      const size_t *, const size_t *, size_t, size_t, size_t,
                                      size_t, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*fill_buffer_fn)(cl_command_queue, cl_mem, const void *, size_t, size_t, size_t,
                                 cl_uint, const cl_event *, cl_event *);
typedef cl_int (*copy_image_fn)(cl_command_queue, cl_mem, cl_mem, const size_t *, const size_t *,
                                const size_t *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*fill_image_fn)(cl_command_queue, cl_mem, const void *, const size_t *,
                                const size_t *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*copy_image_to_buffer_fn)(cl_command_queue, cl_mem, cl_mem, const size_t *,
                                          const size_t *, size_t, cl_uint, const cl_event *,
                                          cl_event *);
typedef cl_int (*copy_buffer_to_image_fn)(cl_command_queue, cl_mem, cl_mem, size_t, const size_t *,
                                          const size_t *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*unmap_fn)(cl_command_queue, cl_mem, void *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*migrate_fn)(cl_command_queue, cl_uint, const cl_mem *, cl_mem_migration_flags,
                             cl_uint, const cl_event *, cl_event *);
typedef cl_int (*marker_fn)(cl_command_queue, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*svm_memfill_fn)(cl_command_queue, void *, const void *, size_t, size_t, cl_uint,
                                 const cl_event *, cl_event *);
typedef cl_int (*svm_unmap_fn)(cl_command_queue, void *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*release_queue_fn)(cl_command_queue);

/* The loader's entry points, found once; written before any wrapper uses
 * them (pthread_once) and never again. */
static struct {
    wait_for_events_fn wait_for_events;
    finish_fn finish;
    read_buffer_fn read_buffer;
    write_buffer_fn write_buffer;
    read_buffer_rect_fn read_buffer_rect;
    write_buffer_rect_fn write_buffer_rect;
    read_image_fn read_image;
    write_image_fn write_image;
    map_buffer_fn map_buffer;
    map_image_fn map_image;
    svm_memcpy_fn svm_memcpy;
    svm_map_fn svm_map;
    ndrange_fn ndrange;
    task_fn task;
    copy_buffer_fn copy_buffer;
    copy_buffer_rect_fn copy_buffer_rect;
    fill_buffer_fn fill_buffer;
    copy_image_fn copy_image;
    fill_image_fn fill_image;
    copy_image_to_buffer_fn copy_image_to_buffer;
    copy_buffer_to_image_fn copy_buffer_to_image;
    unmap_fn unmap;
    migrate_fn migrate;
    marker_fn marker;
    marker_fn barrier;
    svm_memfill_fn svm_memfill;
    svm_unmap_fn svm_unmap;
    release_queue_fn release_queue;
} real;

/* ---- configuration (CW_RUN_* environment, read once) ------------------- */

static struct {
    bool active; /* false: every wrapper forwards, nothing is measured */
    bool native; /* --strategy blocking: the real blocking calls */
    bool stats;  /* measure and print the profile at exit */
    const char *stats_file;
    uint64_t hang_ns; /* 0: no hang diagnosis */
    bool hang_abort;
    cw_wait_options opt;
} cfg;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Depth of cw calls this thread makes on the preload's behalf (see the
 * recursion note at the top). Initial-exec TLS: the preload is loaded at
 * start-up, so its variables sit in the static TLS block and the access is
 * a plain load, with no __tls_get_addr call on every wrapper. */
static __thread int inside_cw __attribute__((tls_model("initial-exec")));

static void calibrate_cpu_clock(void); /* with the profile, below */

static void warn(const char *fmt, const char *arg) {
    fprintf(stderr, "cw-run: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out) {
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || s[0] == '-' || v > max)
        return false;
    *out = v;
    return true;
}

static void read_config(void) {
    const char *s = getenv("CW_RUN_STRATEGY");
    cw_strategy st = CW_STRATEGY_DEFAULT;
    if (s && *s && cw_strategy_from_name(s, &st) != CW_OK) {
        warn("unknown strategy '%s' in CW_RUN_STRATEGY: waits are not interposed", s);
        return;
    }
    cfg.opt.strategy = st;
    cfg.native = st == CW_STRATEGY_BLOCKING;
    uint64_t v;
    s = getenv("CW_RUN_SPIN_US");
    if (s && *s) {
        if (!parse_u64(s, CW_SPIN_US_MAX, &v) || v == 0) {
            warn("CW_RUN_SPIN_US='%s' is not 1 to 1000000: waits are not interposed", s);
            return;
        }
        cfg.opt.spin_us = (uint32_t)v;
    }
    s = getenv("CW_RUN_HANG_MS");
    if (s && *s) {
        if (!parse_u64(s, UINT64_MAX / 1000000u, &v)) {
            warn("CW_RUN_HANG_MS='%s' is not a number of milliseconds: waits are not interposed",
                 s);
            return;
        }
        cfg.hang_ns = v * 1000000u;
    }
    s = getenv("CW_RUN_ON_HANG");
    if (s && *s && strcmp(s, "report") && strcmp(s, "abort")) {
        warn("CW_RUN_ON_HANG='%s' is not report or abort: waits are not interposed", s);
        return;
    }
    cfg.hang_abort = s && !strcmp(s, "abort");
    s = getenv("CW_RUN_STATS");
    if (s) {
        cfg.stats = true;
        cfg.stats_file = *s && strcmp(s, "-") ? s : NULL;
        calibrate_cpu_clock();
    }
    cfg.active = true;
}

static void init(void) {
    /* RTLD_NEXT: the next definition after this object in the search order,
     * i.e. the ICD loader (a dependency of this library, so it is loaded
     * even when the program itself dlopens it only later). */
    real.wait_for_events = (wait_for_events_fn)dlsym(RTLD_NEXT, "clWaitForEvents");
    real.finish = (finish_fn)dlsym(RTLD_NEXT, "clFinish");
    real.read_buffer = (read_buffer_fn)dlsym(RTLD_NEXT, "clEnqueueReadBuffer");
    real.write_buffer = (write_buffer_fn)dlsym(RTLD_NEXT, "clEnqueueWriteBuffer");
    real.read_buffer_rect = (read_buffer_rect_fn)dlsym(RTLD_NEXT, "clEnqueueReadBufferRect");
    real.write_buffer_rect = (write_buffer_rect_fn)dlsym(RTLD_NEXT, "clEnqueueWriteBufferRect");
    real.read_image = (read_image_fn)dlsym(RTLD_NEXT, "clEnqueueReadImage");
    real.write_image = (write_image_fn)dlsym(RTLD_NEXT, "clEnqueueWriteImage");
    real.map_buffer = (map_buffer_fn)dlsym(RTLD_NEXT, "clEnqueueMapBuffer");
    real.map_image = (map_image_fn)dlsym(RTLD_NEXT, "clEnqueueMapImage");
    real.svm_memcpy = (svm_memcpy_fn)dlsym(RTLD_NEXT, "clEnqueueSVMMemcpy");
    real.svm_map = (svm_map_fn)dlsym(RTLD_NEXT, "clEnqueueSVMMap");
    real.ndrange = (ndrange_fn)dlsym(RTLD_NEXT, "clEnqueueNDRangeKernel");
    real.task = (task_fn)dlsym(RTLD_NEXT, "clEnqueueTask");
    real.copy_buffer = (copy_buffer_fn)dlsym(RTLD_NEXT, "clEnqueueCopyBuffer");
    real.copy_buffer_rect = (copy_buffer_rect_fn)dlsym(RTLD_NEXT, "clEnqueueCopyBufferRect");
    real.fill_buffer = (fill_buffer_fn)dlsym(RTLD_NEXT, "clEnqueueFillBuffer");
    real.copy_image = (copy_image_fn)dlsym(RTLD_NEXT, "clEnqueueCopyImage");
    real.fill_image = (fill_image_fn)dlsym(RTLD_NEXT, "clEnqueueFillImage");
    real.copy_image_to_buffer =
        (copy_image_to_buffer_fn)dlsym(RTLD_NEXT, "clEnqueueCopyImageToBuffer");
    real.copy_buffer_to_image =
        (copy_buffer_to_image_fn)dlsym(RTLD_NEXT, "clEnqueueCopyBufferToImage");
    real.unmap = (unmap_fn)dlsym(RTLD_NEXT, "clEnqueueUnmapMemObject");
    real.migrate = (migrate_fn)dlsym(RTLD_NEXT, "clEnqueueMigrateMemObjects");
    real.marker = (marker_fn)dlsym(RTLD_NEXT, "clEnqueueMarkerWithWaitList");
    real.barrier = (marker_fn)dlsym(RTLD_NEXT, "clEnqueueBarrierWithWaitList");
    real.svm_memfill = (svm_memfill_fn)dlsym(RTLD_NEXT, "clEnqueueSVMMemFill");
    real.svm_unmap = (svm_unmap_fn)dlsym(RTLD_NEXT, "clEnqueueSVMUnmap");
    real.release_queue = (release_queue_fn)dlsym(RTLD_NEXT, "clReleaseCommandQueue");
    if (!real.wait_for_events || !real.finish || !real.ndrange || !real.task || !real.copy_buffer ||
        !real.copy_buffer_rect || !real.fill_buffer || !real.copy_image || !real.fill_image ||
        !real.copy_image_to_buffer || !real.copy_buffer_to_image || !real.unmap || !real.migrate ||
        !real.marker || !real.barrier || !real.release_queue) {
        warn("%s", "no OpenCL 1.2 ICD loader after the preload: waits are not interposed");
        return;
    }
    read_config();
}

static void report_stats(void);

/* Configuration errors show at start-up, not at the first wait. */
__attribute__((constructor)) static void init_at_load(void) {
    pthread_once(&init_once, init);
    if (cfg.active && cfg.stats && atexit(report_stats) != 0)
        warn("%s", "cannot register the profile's exit handler: no profile");
}

/* Forward without interposing: not configured, or a call cw makes itself. */
static inline bool passthrough(void) {
    pthread_once(&init_once, init);
    return !cfg.active || inside_cw;
}

/* The program's own calls, only measured: --strategy blocking without
 * --hang-ms (with it, a wait's first N ms are cw's, as the real calls cannot
 * time out). */
static inline bool native_blocking(void) {
    return cfg.native && !cfg.hang_ns;
}

/* ---- the profile -------------------------------------------------------- */

/*
 * Durations go into a log-linear histogram: exact below 16 ns, then 16
 * buckets per power of two (a bucket is at most 1/16 = 6.25% wide), so the
 * percentiles are within about 3% of the true value, with lock-free
 * counting and fixed memory however long the program runs.
 */
#define HIST_SUB 16
#define HIST_BUCKETS (HIST_SUB + (64 - 4) * HIST_SUB)

static unsigned hist_index(uint64_t ns) {
    if (ns < HIST_SUB)
        return (unsigned)ns;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* >= 4 */
    unsigned sub = (unsigned)(ns >> (e - 4)) & (HIST_SUB - 1);
    return HIST_SUB + (e - 4) * HIST_SUB + sub;
}

/* The middle of bucket i, in ns. */
static double hist_value(unsigned i) {
    if (i < HIST_SUB)
        return i;
    unsigned e = (i - HIST_SUB) / HIST_SUB + 4, sub = (i - HIST_SUB) % HIST_SUB;
    double width = (double)(1ull << (e - 4));
    return ((double)(HIST_SUB + sub) + 0.5) * width;
}

typedef struct call_stats {
    _Atomic uint64_t count, wall_ns, failed, hangs;
    _Atomic uint64_t started, cpu_samples, cpu_ns;
    _Atomic uint64_t hist[HIST_BUCKETS];
} call_stats;

static call_stats stats[CWP_CALLS];

/* How clFinish waited under the cw strategies: on the queue's last command
 * or on a marker. */
static _Atomic uint64_t finish_on_last, finish_on_marker;

static uint64_t clock_ns(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Reading the thread's CPU clock is a system call, not a vDSO read: about
 * 4 us on the 2-vCPU VM of the kept runs, as much as a whole cooperative
 * wait costs. Measuring every wait would put that cost on every wait and
 * into the figures it reports. So the CPU time is measured on every call of
 * a kind for its first CPU_SAMPLE_ALL calls, then on one call in
 * CPU_SAMPLE_EVERY, and the clock's own cost (the least CPU time between
 * two consecutive reads, found at start-up) is subtracted from each sample.
 * The wall clock is a vDSO read and times every call.
 */
#define CPU_SAMPLE_ALL 64u
#define CPU_SAMPLE_EVERY 16u
static uint64_t cpu_clock_cost_ns;

static void calibrate_cpu_clock(void) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 64; ++i) {
        uint64_t a = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        uint64_t b = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (b - a < best)
            best = b - a;
    }
    cpu_clock_cost_ns = best;
}

/* A measurement: wall and (when sampled) thread CPU time at the start. For
 * clFinish the wall clock is read even without --stats: it times the waits
 * for the queue's typical wait (lastcmd.h), so that one read serves both. */
typedef struct span {
    uint64_t wall, cpu;
    bool sampled;
} span;

static span span_start(enum cwp_call k) {
    span s = {0, 0, false};
    if (cfg.stats) {
        uint64_t n = atomic_fetch_add_explicit(&stats[k].started, 1, memory_order_relaxed);
        s.sampled = n < CPU_SAMPLE_ALL || n % CPU_SAMPLE_EVERY == 0;
    }
    if (cfg.stats || k == CWP_FINISH)
        s.wall = clock_ns(CLOCK_MONOTONIC);
    if (s.sampled)
        s.cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return s;
}

/* End a span whose wall end, `wall_end`, the caller has read. */
static void span_end_at(enum cwp_call k, span s, cl_int result, uint64_t wall_end) {
    if (!cfg.stats)
        return;
    call_stats *c = &stats[k];
    if (s.sampled) {
        uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - s.cpu;
        cpu = cpu > cpu_clock_cost_ns ? cpu - cpu_clock_cost_ns : 0;
        atomic_fetch_add_explicit(&c->cpu_samples, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->cpu_ns, cpu, memory_order_relaxed);
    }
    uint64_t wall = wall_end - s.wall;
    atomic_fetch_add_explicit(&c->count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->wall_ns, wall, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->hist[hist_index(wall)], 1, memory_order_relaxed);
    if (result != CL_SUCCESS)
        atomic_fetch_add_explicit(&c->failed, 1, memory_order_relaxed);
}

static void span_end(enum cwp_call k, span s, cl_int result) {
    if (cfg.stats)
        span_end_at(k, s, result, clock_ns(CLOCK_MONOTONIC));
}

/* CPU time per call from the samples, in us. */
static double cpu_per_call_us(const call_stats *c) {
    uint64_t n = atomic_load_explicit(&c->cpu_samples, memory_order_relaxed);
    return n ? (double)atomic_load_explicit(&c->cpu_ns, memory_order_relaxed) / 1e3 / (double)n
             : 0.0;
}

static double percentile_us(const call_stats *c, uint64_t count, double p) {
    uint64_t want = (uint64_t)((double)count * p + 0.999999);
    if (want == 0)
        want = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; ++i) {
        seen += atomic_load_explicit(&c->hist[i], memory_order_relaxed);
        if (seen >= want)
            return hist_value(i) / 1e3;
    }
    return 0;
}

/* Bucket k of cw's wake-up latency histogram as text ("<1", "1-2", ">=16384"). */
static void latency_label(unsigned k, char *buf, size_t len) {
    if (k == 0)
        snprintf(buf, len, "<1");
    else if (k + 1 == CW_STATS_LATENCY_BUCKETS)
        snprintf(buf, len, ">=%u", 1u << (k - 1));
    else
        snprintf(buf, len, "%u-%u", 1u << (k - 1), 1u << k);
}

static void print_table(FILE *f, const cw_stats *cs) {
    const char *strategy = cw_strategy_name(cfg.opt.strategy);
    fprintf(f, "cw-run: wait profile of pid %ld, strategy %s%s\n", (long)getpid(), strategy,
            cfg.native ? " (native calls)" : "");
    fprintf(f, "%-26s %8s %11s %10s %10s %10s %11s %6s\n", "call", "count", "total ms", "p50 us",
            "p99 us", "CPU ms", "CPU/wait us", "failed");
    for (int k = 0; k < CWP_CALLS; ++k) {
        const call_stats *c = &stats[k];
        uint64_t n = atomic_load_explicit(&c->count, memory_order_relaxed);
        if (!n)
            continue;
        double wall = (double)atomic_load_explicit(&c->wall_ns, memory_order_relaxed);
        double per = cpu_per_call_us(c);
        fprintf(f, "%-26s %8" PRIu64 " %11.3f %10.2f %10.2f %10.3f %11.2f %6" PRIu64 "\n",
                cwp_call_names[k], n, wall / 1e6, percentile_us(c, n, 0.50),
                percentile_us(c, n, 0.99), per * (double)n / 1e3, per,
                atomic_load_explicit(&c->failed, memory_order_relaxed));
    }
    uint64_t fl = atomic_load_explicit(&finish_on_last, memory_order_relaxed),
             fm = atomic_load_explicit(&finish_on_marker, memory_order_relaxed);
    if (fl || fm)
        fprintf(f,
                "clFinish waited on the last command %" PRIu64 " times, on a marker %" PRIu64
                " times\n",
                fl, fm);
    fprintf(f,
            "CPU: of the calling thread, sampled (every call for the first %u of a kind, then "
            "1 in %u), the clock's own %" PRIu64 " ns subtracted\n",
            CPU_SAMPLE_ALL, CPU_SAMPLE_EVERY, cpu_clock_cost_ns);
    fprintf(f,
            "cw: waits %" PRIu64 ", spins %" PRIu64 ", yields %" PRIu64 ", parks %" PRIu64
            ", sleeps %" PRIu64 ", polls %" PRIu64 ", timeouts %" PRIu64 "\n",
            cs->waits, cs->spins, cs->yields, cs->parks, cs->sleeps, cs->polls, cs->timeouts);
    fprintf(f, "cw wake-up latency (us), %" PRIu64 " wake-ups:", cs->latency_count);
    for (unsigned k = 0; k < CW_STATS_LATENCY_BUCKETS; ++k) {
        if (!cs->latency_us[k])
            continue;
        char label[32];
        latency_label(k, label, sizeof label);
        fprintf(f, " %s:%" PRIu64, label, cs->latency_us[k]);
    }
    fputc('\n', f);
}

static void print_json(FILE *f, const cw_stats *cs) {
    fprintf(f,
            "{\n  \"pid\": %ld,\n  \"strategy\": \"%s\",\n  \"native\": %s,\n"
            "  \"cpu_clock_cost_ns\": %" PRIu64 ",\n  \"calls\": {",
            (long)getpid(), cw_strategy_name(cfg.opt.strategy), cfg.native ? "true" : "false",
            cpu_clock_cost_ns);
    const char *sep = "";
    for (int k = 0; k < CWP_CALLS; ++k) {
        const call_stats *c = &stats[k];
        uint64_t n = atomic_load_explicit(&c->count, memory_order_relaxed);
        if (!n)
            continue;
        uint64_t wall = atomic_load_explicit(&c->wall_ns, memory_order_relaxed);
        double per = cpu_per_call_us(c);
        fprintf(f,
                "%s\n    \"%s\": {\"count\": %" PRIu64 ", \"total_us\": %.3f, \"p50_us\": %.3f, "
                "\"p99_us\": %.3f, \"cpu_us\": %.3f, \"cpu_per_wait_us\": %.3f, "
                "\"cpu_samples\": %" PRIu64 ", \"failed\": %" PRIu64 ", \"hangs\": %" PRIu64 "}",
                sep, cwp_call_names[k], n, (double)wall / 1e3, percentile_us(c, n, 0.50),
                percentile_us(c, n, 0.99), per * (double)n, per,
                atomic_load_explicit(&c->cpu_samples, memory_order_relaxed),
                atomic_load_explicit(&c->failed, memory_order_relaxed),
                atomic_load_explicit(&c->hangs, memory_order_relaxed));
        sep = ",";
    }
    fprintf(f,
            "\n  },\n  \"finish_on_last_command\": %" PRIu64 ",\n  \"finish_on_marker\": %" PRIu64
            ",",
            atomic_load_explicit(&finish_on_last, memory_order_relaxed),
            atomic_load_explicit(&finish_on_marker, memory_order_relaxed));
    fprintf(f,
            "\n  \"cw\": {\"waits\": %" PRIu64 ", \"spins\": %" PRIu64 ", \"yields\": %" PRIu64
            ", \"parks\": %" PRIu64 ", \"sleeps\": %" PRIu64 ", \"polls\": %" PRIu64
            ", \"timeouts\": %" PRIu64 ", \"latency_count\": %" PRIu64 ", \"latency_us\": [",
            cs->waits, cs->spins, cs->yields, cs->parks, cs->sleeps, cs->polls, cs->timeouts,
            cs->latency_count);
    for (unsigned k = 0; k < CW_STATS_LATENCY_BUCKETS; ++k)
        fprintf(f, "%s%" PRIu64, k ? ", " : "", cs->latency_us[k]);
    fprintf(f, "]}\n}\n");
}

/*
 * At exit: the profile. It is an atexit handler, registered when the
 * preload is loaded, not a destructor. Handlers run in reverse order of
 * registration, so it runs after the program's own handlers, and before a
 * sanitizer's leak check, which may end the process with _exit before any
 * destructor runs. A file name may hold %p for the pid, so that the
 * processes a program starts (which inherit the environment) do not
 * overwrite each other's profile.
 */
static void report_stats(void) {
    if (!cfg.active || !cfg.stats)
        return;
    cw_stats cs;
    cw_stats_get(&cs);
    if (!cfg.stats_file) {
        print_table(stderr, &cs);
        return;
    }
    char path[PATH_MAX];
    const char *p = strstr(cfg.stats_file, "%p");
    if (p)
        snprintf(path, sizeof path, "%.*s%ld%s", (int)(p - cfg.stats_file), cfg.stats_file,
                 (long)getpid(), p + 2);
    else
        snprintf(path, sizeof path, "%s", cfg.stats_file);
    FILE *f = fopen(path, "w");
    if (!f) {
        warn("cannot write the profile to %s", path);
        print_table(stderr, &cs);
        return;
    }
    print_json(f, &cs);
    fclose(f);
}

/* ---- hang diagnosis ----------------------------------------------------- */

static const char *command_type_name(cl_command_type t) {
    switch (t) {
    case CL_COMMAND_NDRANGE_KERNEL:
        return "CL_COMMAND_NDRANGE_KERNEL";
    case CL_COMMAND_TASK:
        return "CL_COMMAND_TASK";
    case CL_COMMAND_NATIVE_KERNEL:
        return "CL_COMMAND_NATIVE_KERNEL";
    case CL_COMMAND_READ_BUFFER:
        return "CL_COMMAND_READ_BUFFER";
    case CL_COMMAND_WRITE_BUFFER:
        return "CL_COMMAND_WRITE_BUFFER";
    case CL_COMMAND_COPY_BUFFER:
        return "CL_COMMAND_COPY_BUFFER";
    case CL_COMMAND_READ_IMAGE:
        return "CL_COMMAND_READ_IMAGE";
    case CL_COMMAND_WRITE_IMAGE:
        return "CL_COMMAND_WRITE_IMAGE";
    case CL_COMMAND_MAP_BUFFER:
        return "CL_COMMAND_MAP_BUFFER";
    case CL_COMMAND_MAP_IMAGE:
        return "CL_COMMAND_MAP_IMAGE";
    case CL_COMMAND_UNMAP_MEM_OBJECT:
        return "CL_COMMAND_UNMAP_MEM_OBJECT";
    case CL_COMMAND_MARKER:
        return "CL_COMMAND_MARKER";
    case CL_COMMAND_READ_BUFFER_RECT:
        return "CL_COMMAND_READ_BUFFER_RECT";
    case CL_COMMAND_WRITE_BUFFER_RECT:
        return "CL_COMMAND_WRITE_BUFFER_RECT";
    case CL_COMMAND_USER:
        return "CL_COMMAND_USER";
    case CL_COMMAND_BARRIER:
        return "CL_COMMAND_BARRIER";
    case CL_COMMAND_SVM_MEMCPY:
        return "CL_COMMAND_SVM_MEMCPY";
    case CL_COMMAND_SVM_MAP:
        return "CL_COMMAND_SVM_MAP";
    default:
        return "another command";
    }
}

static const char *status_name(cl_int s) {
    switch (s) {
    case CL_QUEUED:
        return "CL_QUEUED";
    case CL_SUBMITTED:
        return "CL_SUBMITTED";
    case CL_RUNNING:
        return "CL_RUNNING";
    case CL_COMPLETE:
        return "CL_COMPLETE";
    default:
        return s < 0 ? "failed" : "unknown";
    }
}

/* One line about one event into buf. Reads only what the event can tell;
 * every query may fail on a broken handle, and the line then says so. */
static void describe_event(char *buf, size_t len, cl_event ev, unsigned index) {
    cl_command_type type = 0;
    cl_command_queue q = NULL;
    cl_int status = 0;
    char device[256] = "none";
    cl_int e1 = clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
    clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL);
    cl_int e2 = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (q) {
        cl_device_id d = NULL;
        if (clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL) == CL_SUCCESS && d &&
            clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof device, device, NULL) != CL_SUCCESS)
            snprintf(device, sizeof device, "unknown");
        device[sizeof device - 1] = '\0';
    }
    if (e1 != CL_SUCCESS || e2 != CL_SUCCESS) {
        snprintf(buf, len, "  event %u (%p): cannot be queried (OpenCL error %d)\n", index,
                 (void *)ev, e1 != CL_SUCCESS ? e1 : e2);
        return;
    }
    snprintf(buf, len,
             "  event %u (%p): command %s, queue %p, device \"%s\", execution status %s (%d)\n",
             index, (void *)ev, command_type_name(type), (void *)q, device, status_name(status),
             status);
}

static void report_hang(enum cwp_call k, const cl_event *evs, cl_uint n) {
    atomic_fetch_add_explicit(&stats[k].hangs, 1, memory_order_relaxed);
    /* One write, so that reports of several threads do not interleave. */
    char msg[4096];
    size_t used = (size_t)snprintf(
        msg, sizeof msg, "cw-run: hang: %s (pid %ld) has waited %" PRIu64 " ms, on %u event%s:\n",
        cwp_call_names[k], (long)getpid(), cfg.hang_ns / 1000000u, n, n == 1 ? "" : "s");
    unsigned shown = 0;
    for (cl_uint i = 0; i < n && used < sizeof msg; ++i) {
        cl_int st = CL_COMPLETE;
        if (clGetEventInfo(evs[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) ==
                CL_SUCCESS &&
            st <= CL_COMPLETE)
            continue; /* finished: not what the wait is stuck on */
        if (shown++ == 8) {
            used += (size_t)snprintf(msg + used, sizeof msg - used, "  ...\n");
            break;
        }
        describe_event(msg + used, sizeof msg - used, evs[i], i);
        used += strlen(msg + used);
    }
    if (used < sizeof msg)
        snprintf(msg + used, sizeof msg - used, "cw-run: %s\n",
                 cfg.hang_abort ? "aborting (--on-hang=abort)" : "still waiting");
    fputs(msg, stderr);
    fflush(stderr);
    if (cfg.hang_abort)
        abort();
}

/* ---- the wait ------------------------------------------------------------ */

/* "Finish with the real call": the strategy is blocking, or cw could not
 * judge the events (their handles, an OpenCL error, no memory). */
#define CWP_NATIVE 1

/*
 * Wait for n events with cw. Returns CW_OK, CW_ERR_COMMAND_FAILED, or
 * anything else for "let the real call decide" (it then finds every event
 * finished, or reports the error the program would have seen natively).
 * One event goes through cw_wait, which honours the strategy; several
 * through cw_wait_all (one parker for all, the cooperative wait).
 */
static int cw_wait_events(enum cwp_call k, const cl_event *evs, cl_uint n, uint32_t check_us) {
    if (native_blocking())
        return CWP_NATIVE;
    cw_wait_options o = cfg.opt;
    o.check_interval_us = check_us;
    /* Most of these waits are the only one on their event (a marker or a
     * transfer's event the preload made, a queue's last command), so a
     * callback of their own is cheaper than cw's shared one; the flag only
     * acts without a timeout, i.e. not while --hang-ms is being watched. */
    o.flags |= CW_WAIT_OWN_CALLBACK;
    if (cfg.hang_ns)
        o.timeout_us = (int64_t)(cfg.hang_ns / 1000u);
    ++inside_cw;
    int rc;
    cl_int st;
    for (;;) {
        rc = n == 1 ? cw_wait(evs[0], &o, &st) : cw_wait_all(evs, n, &o, NULL);
        if (rc != CW_ERR_TIMEOUT || o.timeout_us == 0)
            break;
        /* Only the hang threshold sets a timeout: report once, then wait
         * on (natively for the blocking strategy), or abort. */
        report_hang(k, evs, n);
        if (cfg.native) {
            /* The rest of the wait is the driver's, on these events (for
             * clFinish the marker: its queue was flushed already). */
            cl_int e = real.wait_for_events(n, evs);
            rc = e == CL_SUCCESS                                     ? CW_OK
                 : e == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST ? CW_ERR_COMMAND_FAILED
                                                                     : CWP_NATIVE;
            break;
        }
        o.timeout_us = 0;
    }
    --inside_cw;
    return rc;
}

/* What clWaitForEvents returns after a cw wait on one event. */
static cl_int verdict_one(enum cwp_call k, cl_event ev) {
    int rc = cw_wait_events(k, &ev, 1, 0);
    if (rc == CW_OK)
        return CL_SUCCESS;
    if (rc == CW_ERR_COMMAND_FAILED)
        return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    return real.wait_for_events(1, &ev);
}

CWP_EXPORT cl_int clWaitForEvents(cl_uint num_events, const cl_event *event_list) {
    if (passthrough())
        return real.wait_for_events(num_events, event_list);
    /* Bad input is the real call's to judge, with the codes it gives:
     * CL_INVALID_VALUE, CL_INVALID_EVENT, CL_INVALID_CONTEXT. */
    if (num_events == 0 || !event_list || num_events > CW_WAIT_MANY_MAX)
        return real.wait_for_events(num_events, event_list);
    cl_context ctx0 = NULL;
    for (cl_uint i = 0; i < num_events; ++i) {
        cl_context ctx = NULL;
        if (!event_list[i] ||
            clGetEventInfo(event_list[i], CL_EVENT_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS)
            return real.wait_for_events(num_events, event_list);
        if (i == 0)
            ctx0 = ctx;
        else if (ctx != ctx0)
            return real.wait_for_events(num_events, event_list);
    }
    span s = span_start(CWP_WAIT_FOR_EVENTS);
    int rc = cw_wait_events(CWP_WAIT_FOR_EVENTS, event_list, num_events, 0);
    cl_int r = rc == CW_OK                   ? CL_SUCCESS
               : rc == CW_ERR_COMMAND_FAILED ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
                                             : real.wait_for_events(num_events, event_list);
    span_end(CWP_WAIT_FOR_EVENTS, s, r);
    return r;
}

/*
 * clFinish. Under the cw strategies it waits with cw on the queue's last
 * command, when the preload saw it enqueued on an in-order queue
 * (lastcmd.h), and otherwise on a marker. The last command costs no extra
 * command: a marker is one more command for the driver to create, schedule,
 * run and retire, which on PoCL costs the waiting thread several
 * microseconds and delays the next launch. With the last command, the real
 * clFinish still has the final word: it returns at once when that command
 * was the queue's last, and otherwise finishes, natively, what the preload
 * did not see (a command enqueued through an entry point it does not
 * interpose, or by another thread in between). A failed command is the
 * real call's to report too, as on the marker path.
 *
 * The status checks. PoCL 3.1 and rusticl run no callback for a failed
 * command, so cw's wait reads the status after its check interval and then
 * every twice that. Each such wake-up costs the waiting thread CPU time,
 * which on a loaded 2-vCPU VM was far more than the status read itself:
 * clpeak's 0.35 s clFinish cost 1.2 to 2.4 ms of CPU per wait with cw's
 * 16 ms default against 0.044 ms natively (PoCL's wait wakes once). So
 * clFinish
 * checks after twice the queue's typical wait (its recent clFinish
 * durations, lastcmd.h), between the default 16 ms and 1 s: a wait as long
 * as the usual ones is not woken at all, and a failed command is still seen
 * within four times the usual wait, at most 2 s.
 */
static uint32_t finish_check_us(uint64_t typical_ns) {
    uint64_t us = typical_ns / 1000u * 2u;
    if (us <= CW_CHECK_INTERVAL_US_DEFAULT)
        return 0; /* cw's default */
    return us > CW_CHECK_INTERVAL_US_MAX ? CW_CHECK_INTERVAL_US_MAX : (uint32_t)us;
}

CWP_EXPORT cl_int clFinish(cl_command_queue queue) {
    if (passthrough())
        return real.finish(queue);
    bool native = native_blocking();
    uint64_t typical = 0;
    cl_event last = native ? NULL : cwp_last_take(queue, &typical);
    uint32_t check_us = finish_check_us(typical);
    cl_int last_status = CL_QUEUED;
    if (last && (clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof last_status,
                                &last_status, NULL) != CL_SUCCESS ||
                 last_status == CL_QUEUED)) {
        /*
         * Still queued: waiting on it would take a flush (cw's), and after a
         * flush Mesa 22.3's rusticl returns from clFinish without waiting
         * for what that flush sent, so the real clFinish would no longer
         * cover the commands the preload did not see (preload_codes'
         * finish.unseen_command caught it there). The marker, enqueued
         * after every such command, covers them.
         */
        clReleaseEvent(last);
        last = NULL;
    }
    if (last) {
        span s = span_start(CWP_FINISH);
        cw_wait_events(CWP_FINISH, &last, 1, check_us);
        cl_int r = real.finish(queue);
        uint64_t end = clock_ns(CLOCK_MONOTONIC);
        cwp_last_waited(queue, end - s.wall);
        span_end_at(CWP_FINISH, s, r, end);
        clReleaseEvent(last);
        if (cfg.stats)
            atomic_fetch_add_explicit(&finish_on_last, 1, memory_order_relaxed);
        return r;
    }
    /*
     * The flush comes first, as in the real clFinish, and before the clocks
     * are read: a driver may hold queued commands until a flush (PoCL does,
     * and clpeak's launch latency counts that time), so neither the marker
     * nor the measurement may delay them. With the blocking strategy the
     * real clFinish is the only call, as natively: an explicit clFlush
     * before it is not harmless everywhere: with Mesa 22.3's rusticl, a
     * non-blocking read followed by clFlush and clFinish left the host
     * memory unwritten when clFinish returned. Its error, on a bad queue,
     * is left to the real call below.
     */
    cl_int flushed = native ? CL_SUCCESS : clFlush(queue);
    span s = span_start(CWP_FINISH);
    cl_int r;
    cl_event marker = NULL;
    if (native) {
        r = real.finish(queue);
    } else if (flushed != CL_SUCCESS || real.marker(queue, 0, NULL, &marker) != CL_SUCCESS) {
        /* A bad queue (or no room for a marker): the real call's verdict. */
        r = real.finish(queue);
    } else {
        /* The marker completes once every command enqueued before it did,
         * on in-order and out-of-order queues alike. Anything but success
         * (a failed command before it) is the real call's to report; it
         * returns at once, since everything finished. */
        int rc = cw_wait_events(CWP_FINISH, &marker, 1, check_us);
        r = rc == CW_OK ? CL_SUCCESS : real.finish(queue);
        clReleaseEvent(marker);
        if (cfg.stats)
            atomic_fetch_add_explicit(&finish_on_marker, 1, memory_order_relaxed);
    }
    uint64_t end = clock_ns(CLOCK_MONOTONIC);
    if (!native)
        cwp_last_waited(queue, end - s.wall);
    span_end_at(CWP_FINISH, s, r, end);
    return r;
}

/* The queue's handle may be reused once it is released: forget it first,
 * and drop the reference to its last command, which may hold the queue. */
CWP_EXPORT cl_int clReleaseCommandQueue(cl_command_queue queue) {
    pthread_once(&init_once, init);
    if (cfg.active && !inside_cw)
        cwp_last_forget(queue);
    return real.release_queue(queue);
}

/* ---- the non-blocking enqueues, recorded for clFinish ------------------- */

/* Whether enqueues are recorded: under the cw strategies, outside cw's own
 * calls (with --strategy blocking clFinish is the program's own call). */
static inline bool tracking(void) {
    pthread_once(&init_once, init);
    return cfg.active && !inside_cw && !native_blocking();
}

/* After the enqueue: record its event as the queue's last command. `ev` is
 * NULL when not tracking; `owned` when the event is the preload's own (the
 * program asked for none), whose reference the table then takes over. */
static void track(cl_command_queue q, cl_event *ev, bool owned, cl_int err) {
    if (!ev || err != CL_SUCCESS || !*ev)
        return;
    if (!owned && clRetainEvent(*ev) != CL_SUCCESS)
        return;
    cwp_last_put(q, *ev);
}

/*
 * One wrapper: `call` is the real call with `ev_` as its event argument,
 * which is the program's own when it asked for one, and otherwise, when
 * tracking, the preload's (a driver creates an event for every command
 * anyway; PoCL does).
 */
#define TRACKED(q, event, call)                                                                    \
    do {                                                                                           \
        cl_event own_ = NULL;                                                                      \
        cl_event *tr_ = tracking() ? ((event) ? (event) : &own_) : NULL;                           \
        cl_event *ev_ = tr_ ? tr_ : (event);                                                       \
        cl_int r_ = (call);                                                                        \
        track((q), tr_, tr_ == &own_, r_);                                                         \
        return r_;                                                                                 \
    } while (0)

/* The same for the maps, which return the mapped pointer. */
#define MAP_TRACKED(q, event, errcode_ret, call)                                                   \
    do {                                                                                           \
        cl_event own_ = NULL;                                                                      \
        cl_event *tr_ = tracking() ? ((event) ? (event) : &own_) : NULL;                           \
        cl_event *ev_ = tr_ ? tr_ : (event);                                                       \
        cl_int e_ = CL_SUCCESS, *err_ = &e_;                                                       \
        void *p_ = (call);                                                                         \
        track((q), tr_, tr_ == &own_, e_);                                                         \
        if (errcode_ret)                                                                           \
            *(errcode_ret) = e_;                                                                   \
        return p_;                                                                                 \
    } while (0)

CWP_EXPORT cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
                                         const size_t *offset, const size_t *global,
                                         const size_t *local, cl_uint nw, const cl_event *wl,
                                         cl_event *event) {
    TRACKED(q, event, real.ndrange(q, k, dim, offset, global, local, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nw, const cl_event *wl,
                                cl_event *event) {
    TRACKED(q, event, real.task(q, k, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t so,
                                      size_t d_o, size_t size, cl_uint nw, const cl_event *wl,
                                      cl_event *event) {
    TRACKED(q, event, real.copy_buffer(q, src, dst, so, d_o, size, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst,
                                          const size_t *so, const size_t *d_o, const size_t *r,
                                          size_t srp, size_t ssp, size_t drp, size_t dsp,
                                          cl_uint nw, const cl_event *wl, cl_event *event) {
    TRACKED(q, event,
            real.copy_buffer_rect(q, src, dst, so, d_o, r, srp, ssp, drp, dsp, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueFillBuffer(cl_command_queue q, cl_mem buf, const void *pattern,
                                      size_t pattern_size, size_t offset, size_t size, cl_uint nw,
                                      const cl_event *wl, cl_event *event) {
    TRACKED(q, event, real.fill_buffer(q, buf, pattern, pattern_size, offset, size, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *so,
                                     const size_t *d_o, const size_t *r, cl_uint nw,
                                     const cl_event *wl, cl_event *event) {
    TRACKED(q, event, real.copy_image(q, src, dst, so, d_o, r, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueFillImage(cl_command_queue q, cl_mem img, const void *color,
                                     const size_t *origin, const size_t *region, cl_uint nw,
                                     const cl_event *wl, cl_event *event) {
    TRACKED(q, event, real.fill_image(q, img, color, origin, region, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                             const size_t *origin, const size_t *region,
                                             size_t offset, cl_uint nw, const cl_event *wl,
                                             cl_event *event) {
    TRACKED(q, event, real.copy_image_to_buffer(q, src, dst, origin, region, offset, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                             size_t offset, const size_t *origin,
                                             const size_t *region, cl_uint nw, const cl_event *wl,
                                             cl_event *event) {
    TRACKED(q, event, real.copy_buffer_to_image(q, src, dst, offset, origin, region, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueUnmapMemObject(cl_command_queue q, cl_mem mem, void *ptr, cl_uint nw,
                                          const cl_event *wl, cl_event *event) {
    TRACKED(q, event, real.unmap(q, mem, ptr, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueMigrateMemObjects(cl_command_queue q, cl_uint n, const cl_mem *mems,
                                             cl_mem_migration_flags flags, cl_uint nw,
                                             const cl_event *wl, cl_event *event) {
    TRACKED(q, event, real.migrate(q, n, mems, flags, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint nw, const cl_event *wl,
                                              cl_event *event) {
    TRACKED(q, event, real.marker(q, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint nw, const cl_event *wl,
                                               cl_event *event) {
    TRACKED(q, event, real.barrier(q, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueSVMMemFill(cl_command_queue q, void *ptr, const void *pattern,
                                      size_t pattern_size, size_t size, cl_uint nw,
                                      const cl_event *wl, cl_event *event) {
    pthread_once(&init_once, init);
    if (!real.svm_memfill)
        return CL_INVALID_OPERATION;
    TRACKED(q, event, real.svm_memfill(q, ptr, pattern, pattern_size, size, nw, wl, ev_));
}

CWP_EXPORT cl_int clEnqueueSVMUnmap(cl_command_queue q, void *ptr, cl_uint nw, const cl_event *wl,
                                    cl_event *event) {
    pthread_once(&init_once, init);
    if (!real.svm_unmap)
        return CL_INVALID_OPERATION;
    TRACKED(q, event, real.svm_unmap(q, ptr, nw, wl, ev_));
}

/*
 * The blocking enqueues: the same call made non-blocking, then a wait on its
 * event. The caller's event, when it asked for one, is the one waited on
 * and stays the caller's; otherwise the wrapper asks for one of its own and
 * releases it after the wait. A failed enqueue returns its error as the
 * blocking call would (the checks are the same). A command that ends with a
 * negative status returns CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, the
 * code of a blocking call whose wait list failed (a command only fails that
 * way on the implementations cw supports).
 */
typedef struct blocking_call {
    enum cwp_call k;
    span s;
    cl_event own;
    cl_event *evp;
} blocking_call;

static blocking_call blocking_begin(enum cwp_call k, cl_event *event) {
    blocking_call b = {k, span_start(k), NULL, NULL};
    b.evp = event ? event : &b.own;
    return b;
}

/* After the non-blocking enqueue returned `err`: wait, release our event. */
static cl_int blocking_end(blocking_call *b, cl_int err) {
    if (err == CL_SUCCESS)
        err = verdict_one(b->k, *b->evp);
    if (b->own)
        clReleaseEvent(b->own);
    span_end(b->k, b->s, err);
    return err;
}

/* --strategy blocking: the real blocking call, measured. */
#define NATIVE_BLOCKING(k, call)                                                                   \
    do {                                                                                           \
        span s_ = span_start(k);                                                                   \
        cl_int r_ = (call);                                                                        \
        span_end((k), s_, r_);                                                                     \
        return r_;                                                                                 \
    } while (0)

/* Also the first use of `real` on the non-blocking path: initialise. */
static inline bool interpose_blocking(cl_bool blocking) {
    pthread_once(&init_once, init);
    return blocking && cfg.active && !inside_cw;
}

CWP_EXPORT cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                      size_t offset, size_t size, void *ptr, cl_uint nw,
                                      const cl_event *wl, cl_event *event) {
    if (!interpose_blocking(blocking))
        TRACKED(q, event, real.read_buffer(q, buf, blocking, offset, size, ptr, nw, wl, ev_));
    if (native_blocking())
        NATIVE_BLOCKING(CWP_READ_BUFFER,
                        real.read_buffer(q, buf, blocking, offset, size, ptr, nw, wl, event));
    blocking_call b = blocking_begin(CWP_READ_BUFFER, event);
    return blocking_end(&b, real.read_buffer(q, buf, CL_FALSE, offset, size, ptr, nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                       size_t offset, size_t size, const void *ptr, cl_uint nw,
                                       const cl_event *wl, cl_event *event) {
    if (!interpose_blocking(blocking))
        TRACKED(q, event, real.write_buffer(q, buf, blocking, offset, size, ptr, nw, wl, ev_));
    if (native_blocking())
        NATIVE_BLOCKING(CWP_WRITE_BUFFER,
                        real.write_buffer(q, buf, blocking, offset, size, ptr, nw, wl, event));
    blocking_call b = blocking_begin(CWP_WRITE_BUFFER, event);
    return blocking_end(&b, real.write_buffer(q, buf, CL_FALSE, offset, size, ptr, nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueReadBufferRect(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                          const size_t *bo, const size_t *ho, const size_t *r,
                                          size_t brp, size_t bsp, size_t hrp, size_t hsp, void *ptr,
                                          cl_uint nw, const cl_event *wl, cl_event *event) {
    if (!interpose_blocking(blocking))
        TRACKED(q, event,
                real.read_buffer_rect(q, buf, blocking, bo, ho, r, brp, bsp, hrp, hsp, ptr, nw, wl,
                                      ev_));
    if (native_blocking())
        NATIVE_BLOCKING(CWP_READ_BUFFER_RECT,
                        real.read_buffer_rect(q, buf, blocking, bo, ho, r, brp, bsp, hrp, hsp, ptr,
                                              nw, wl, event));
    blocking_call b = blocking_begin(CWP_READ_BUFFER_RECT, event);
    return blocking_end(&b, real.read_buffer_rect(q, buf, CL_FALSE, bo, ho, r, brp, bsp, hrp, hsp,
                                                  ptr, nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueWriteBufferRect(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                           const size_t *bo, const size_t *ho, const size_t *r,
                                           size_t brp, size_t bsp, size_t hrp, size_t hsp,
                                           const void *ptr, cl_uint nw, const cl_event *wl,
                                           cl_event *event) {
    if (!interpose_blocking(blocking))
        TRACKED(q, event,
                real.write_buffer_rect(q, buf, blocking, bo, ho, r, brp, bsp, hrp, hsp, ptr, nw, wl,
                                       ev_));
    if (native_blocking())
        NATIVE_BLOCKING(CWP_WRITE_BUFFER_RECT,
                        real.write_buffer_rect(q, buf, blocking, bo, ho, r, brp, bsp, hrp, hsp, ptr,
                                               nw, wl, event));
    blocking_call b = blocking_begin(CWP_WRITE_BUFFER_RECT, event);
    return blocking_end(&b, real.write_buffer_rect(q, buf, CL_FALSE, bo, ho, r, brp, bsp, hrp, hsp,
                                                   ptr, nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueReadImage(cl_command_queue q, cl_mem img, cl_bool blocking,
                                     const size_t *origin, const size_t *region, size_t row_pitch,
                                     size_t slice_pitch, void *ptr, cl_uint nw, const cl_event *wl,
                                     cl_event *event) {
    if (!interpose_blocking(blocking))
        TRACKED(q, event,
                real.read_image(q, img, blocking, origin, region, row_pitch, slice_pitch, ptr, nw,
                                wl, ev_));
    if (native_blocking())
        NATIVE_BLOCKING(CWP_READ_IMAGE, real.read_image(q, img, blocking, origin, region, row_pitch,
                                                        slice_pitch, ptr, nw, wl, event));
    blocking_call b = blocking_begin(CWP_READ_IMAGE, event);
    return blocking_end(&b, real.read_image(q, img, CL_FALSE, origin, region, row_pitch,
                                            slice_pitch, ptr, nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueWriteImage(cl_command_queue q, cl_mem img, cl_bool blocking,
                                      const size_t *origin, const size_t *region, size_t row_pitch,
                                      size_t slice_pitch, const void *ptr, cl_uint nw,
                                      const cl_event *wl, cl_event *event) {
    if (!interpose_blocking(blocking))
        TRACKED(q, event,
                real.write_image(q, img, blocking, origin, region, row_pitch, slice_pitch, ptr, nw,
                                 wl, ev_));
    if (native_blocking())
        NATIVE_BLOCKING(CWP_WRITE_IMAGE,
                        real.write_image(q, img, blocking, origin, region, row_pitch, slice_pitch,
                                         ptr, nw, wl, event));
    blocking_call b = blocking_begin(CWP_WRITE_IMAGE, event);
    return blocking_end(&b, real.write_image(q, img, CL_FALSE, origin, region, row_pitch,
                                             slice_pitch, ptr, nw, wl, b.evp));
}

/* A blocking map whose command failed returns NULL with the wait-list error,
 * as the blocking call does; the mapping itself was never made. */
static void *map_end(blocking_call *b, void *p, cl_int err, cl_int *errcode_ret) {
    err = blocking_end(b, err);
    if (errcode_ret)
        *errcode_ret = err;
    return err == CL_SUCCESS ? p : NULL;
}

CWP_EXPORT void *clEnqueueMapBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                    cl_map_flags flags, size_t offset, size_t size, cl_uint nw,
                                    const cl_event *wl, cl_event *event, cl_int *errcode_ret) {
    if (!interpose_blocking(blocking))
        MAP_TRACKED(q, event, errcode_ret,
                    real.map_buffer(q, buf, blocking, flags, offset, size, nw, wl, ev_, err_));
    if (native_blocking()) {
        span s = span_start(CWP_MAP_BUFFER);
        cl_int err = CL_SUCCESS;
        void *p = real.map_buffer(q, buf, blocking, flags, offset, size, nw, wl, event, &err);
        span_end(CWP_MAP_BUFFER, s, err);
        if (errcode_ret)
            *errcode_ret = err;
        return p;
    }
    blocking_call b = blocking_begin(CWP_MAP_BUFFER, event);
    cl_int err = CL_SUCCESS;
    void *p = real.map_buffer(q, buf, CL_FALSE, flags, offset, size, nw, wl, b.evp, &err);
    return map_end(&b, p, err, errcode_ret);
}

CWP_EXPORT void *clEnqueueMapImage(cl_command_queue q, cl_mem img, cl_bool blocking,
                                   cl_map_flags flags, const size_t *origin, const size_t *region,
                                   size_t *row_pitch, size_t *slice_pitch, cl_uint nw,
                                   const cl_event *wl, cl_event *event, cl_int *errcode_ret) {
    if (!interpose_blocking(blocking))
        MAP_TRACKED(q, event, errcode_ret,
                    real.map_image(q, img, blocking, flags, origin, region, row_pitch, slice_pitch,
                                   nw, wl, ev_, err_));
    if (native_blocking()) {
        span s = span_start(CWP_MAP_IMAGE);
        cl_int err = CL_SUCCESS;
        void *p = real.map_image(q, img, blocking, flags, origin, region, row_pitch, slice_pitch,
                                 nw, wl, event, &err);
        span_end(CWP_MAP_IMAGE, s, err);
        if (errcode_ret)
            *errcode_ret = err;
        return p;
    }
    blocking_call b = blocking_begin(CWP_MAP_IMAGE, event);
    cl_int err = CL_SUCCESS;
    void *p = real.map_image(q, img, CL_FALSE, flags, origin, region, row_pitch, slice_pitch, nw,
                             wl, b.evp, &err);
    return map_end(&b, p, err, errcode_ret);
}

/* OpenCL 2.0 SVM: interposed when the loader has them; a loader without
 * them leaves a program no way to call them, so the NULL case only guards. */
CWP_EXPORT cl_int clEnqueueSVMMemcpy(cl_command_queue q, cl_bool blocking, void *dst,
                                     const void *src, size_t size, cl_uint nw, const cl_event *wl,
                                     cl_event *event) {
    pthread_once(&init_once, init);
    if (!real.svm_memcpy)
        return CL_INVALID_OPERATION;
    if (!interpose_blocking(blocking))
        TRACKED(q, event, real.svm_memcpy(q, blocking, dst, src, size, nw, wl, ev_));
    if (native_blocking())
        NATIVE_BLOCKING(CWP_SVM_MEMCPY,
                        real.svm_memcpy(q, blocking, dst, src, size, nw, wl, event));
    blocking_call b = blocking_begin(CWP_SVM_MEMCPY, event);
    return blocking_end(&b, real.svm_memcpy(q, CL_FALSE, dst, src, size, nw, wl, b.evp));
}

CWP_EXPORT cl_int clEnqueueSVMMap(cl_command_queue q, cl_bool blocking, cl_map_flags flags,
                                  void *svm_ptr, size_t size, cl_uint nw, const cl_event *wl,
                                  cl_event *event) {
    pthread_once(&init_once, init);
    if (!real.svm_map)
        return CL_INVALID_OPERATION;
    if (!interpose_blocking(blocking))
        TRACKED(q, event, real.svm_map(q, blocking, flags, svm_ptr, size, nw, wl, ev_));
    if (native_blocking())
        NATIVE_BLOCKING(CWP_SVM_MAP,
                        real.svm_map(q, blocking, flags, svm_ptr, size, nw, wl, event));
    blocking_call b = blocking_begin(CWP_SVM_MAP, event);
    return blocking_end(&b, real.svm_map(q, CL_FALSE, flags, svm_ptr, size, nw, wl, b.evp));
}
