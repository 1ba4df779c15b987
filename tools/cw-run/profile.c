/* SPDX-License-Identifier: MIT */
/* The profile of --stats (profile.h). */
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "layer.h"
#include "learned.h"
#include "preload.h"
#include "trace.h"

static const char *const call_names[CWP_CALLS] = {
    "clWaitForEvents",         "clFinish",
    "clEnqueueReadBuffer",     "clEnqueueWriteBuffer",
    "clEnqueueReadBufferRect", "clEnqueueWriteBufferRect",
    "clEnqueueReadImage",      "clEnqueueWriteImage",
    "clEnqueueMapBuffer",      "clEnqueueMapImage",
    "clEnqueueSVMMemcpy",      "clEnqueueSVMMap",
};

const char *cwp_call_name(enum cwp_call k) {
    return call_names[k];
}

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

/* Counters only: each is read on its own at exit, so relaxed order. */
typedef struct call_stats {
    _Atomic uint64_t count, wall_ns, failed, hangs;
    _Atomic uint64_t started, cpu_samples, cpu_ns;
    _Atomic uint64_t hist[HIST_BUCKETS];
} call_stats;

static call_stats stats[CWP_CALLS];

/* How clFinish waited under the cw strategies, by enum cwp_finish_path. */
static _Atomic uint64_t finish_paths[CWP_FINISH_PATHS];

static uint64_t clock_ns(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t cwp_wall_ns(void) {
    return clock_ns(CLOCK_MONOTONIC);
}

/*
 * Reading the thread's CPU clock is a system call, not a vDSO read, and can
 * cost as much as a whole cooperative wait (docs/cw-run-internals.md, "The profile: how it
 * measures", has the figures). Measuring every wait would put that cost on every wait and into the
 * figures it reports. So the CPU time is measured on every call of a kind for its first
 * CPU_SAMPLE_ALL calls, then on one call in CPU_SAMPLE_EVERY, and the clock's own cost (the least
 * CPU time between two consecutive reads, found at start-up) is subtracted from each sample. The
 * wall clock is a vDSO read and times every call.
 */
#define CPU_SAMPLE_ALL 64u
#define CPU_SAMPLE_EVERY 16u
static uint64_t cpu_clock_cost_ns;

/*
 * The table's stderr: a copy of descriptor 2 made at start-up, above the
 * numbers programs expect to get from open(), close-on-exec so that the
 * programs it starts do not inherit it. Its identity (device, inode) is
 * kept, so that a program that closed it and got the number back for a
 * file of its own does not get the table written into that file.
 */
#define STDERR_COPY_MIN 64
static int stderr_copy = -1;
static struct stat stderr_copy_st;

static void keep_stderr(void) {
    int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, STDERR_COPY_MIN);
    if (fd < 0)
        return;
    if (fstat(fd, &stderr_copy_st) != 0) {
        close(fd);
        return;
    }
    stderr_copy = fd;
}

/* The descriptor the table goes to: the copy while it is still ours, else
 * whatever stderr is now. */
static int table_fd(void) {
    struct stat st;
    if (stderr_copy >= 0 && fstat(stderr_copy, &st) == 0 && st.st_dev == stderr_copy_st.st_dev &&
        st.st_ino == stderr_copy_st.st_ino)
        return stderr_copy;
    return STDERR_FILENO;
}

static void calibrate(void) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 64; ++i) {
        uint64_t a = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        uint64_t b = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (b - a < best)
            best = b - a;
    }
    cpu_clock_cost_ns = best;
}

void cwp_profile_start(void) {
    calibrate();
    if (cwp_cfg.stats && !cwp_cfg.stats_file)
        keep_stderr();
}

cwp_span cwp_span_begin(enum cwp_call k) {
    cwp_span s = {0};
    if (cwp_cfg.stats) {
        uint64_t n = atomic_fetch_add_explicit(&stats[k].started, 1, memory_order_relaxed);
        s.sampled = n < CPU_SAMPLE_ALL || n % CPU_SAMPLE_EVERY == 0;
    }
    if (cwp_cfg.trace)
        cwp_trace_begin(&s);
    if (cwp_profiled())
        s.wall = clock_ns(CLOCK_MONOTONIC);
    if (s.sampled)
        s.cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return s;
}

void cwp_span_subject(cwp_span *s, cl_command_queue queue, const cl_event *evs, cl_uint n) {
    if (cwp_cfg.trace)
        cwp_trace_subject(s, queue, evs, n);
}

void cwp_span_end_at(enum cwp_call k, cwp_span s, cl_int result, uint64_t wall_end) {
    uint64_t cpu = CWP_NO_CPU;
    if (s.sampled) {
        cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - s.cpu;
        cpu = cpu > cpu_clock_cost_ns ? cpu - cpu_clock_cost_ns : 0;
    }
    if (cwp_cfg.trace)
        cwp_trace_span(k, &s, result, wall_end, cpu);
    if (!cwp_cfg.stats)
        return;
    call_stats *c = &stats[k];
    if (s.sampled) {
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

void cwp_span_end(enum cwp_call k, cwp_span s, cl_int result) {
    if (cwp_profiled())
        cwp_span_end_at(k, s, result, clock_ns(CLOCK_MONOTONIC));
}

void cwp_count_finish_path(enum cwp_finish_path path) {
    if (cwp_cfg.trace)
        cwp_trace_finish_path(path == CWP_FINISH_ON_MARKER);
    if (cwp_cfg.stats)
        atomic_fetch_add_explicit(&finish_paths[path], 1, memory_order_relaxed);
}

void cwp_count_hang(enum cwp_call k) {
    if (cwp_cfg.trace)
        cwp_trace_hang();
    atomic_fetch_add_explicit(&stats[k].hangs, 1, memory_order_relaxed);
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

/*
 * What cw decided and learned (cw_stats_auto): the failed-command status
 * checks that woke the waits, and the probe of the platform, which the
 * first callback wait makes on its own thread. Both cost the waiting
 * thread CPU that the wait counters alone do not explain.
 */
static void print_table_auto(FILE *f, const cw_stats_auto *a) {
    fprintf(f,
            "cw auto: status checks %" PRIu64 " (deferred %" PRIu64 ", waits unchecked %" PRIu64
            "), hybrid waits %" PRIu64 ", late callbacks %" PRIu64
            ", waits in the driver's own wait %" PRIu64 "\n",
            a->checks, a->deferred_checks, a->unchecked_waits, a->hybrid_waits, a->late_callbacks,
            a->driver_waits);
    fprintf(f,
            "cw auto: platforms probed %" PRIu64 " (failed commands fire %" PRIu64
            ", silent %" PRIu64 "; callbacks late %" PRIu64
            "; long waits in the driver's own wait %" PRIu64 ")\n",
            a->platforms_probed, a->platforms_failed_fire, a->platforms_failed_silent,
            a->platforms_late, a->platforms_driver_wait);
}

static void print_table(FILE *f, const cw_stats *cs, const cw_stats_auto *a) {
    const char *strategy = cw_strategy_name(cwp_cfg.opt.strategy);
    fprintf(f, "cw-run: wait profile of pid %ld, strategy %s%s, through the %s\n", (long)getpid(),
            strategy, cwp_cfg.native ? " (native calls)" : "", cwp_mechanism());
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
                call_names[k], n, wall / 1e6, percentile_us(c, n, 0.50), percentile_us(c, n, 0.99),
                per * (double)n / 1e3, per, atomic_load_explicit(&c->failed, memory_order_relaxed));
    }
    uint64_t fl = atomic_load_explicit(&finish_paths[CWP_FINISH_ON_LAST], memory_order_relaxed),
             fm = atomic_load_explicit(&finish_paths[CWP_FINISH_ON_MARKER], memory_order_relaxed),
             fd = atomic_load_explicit(&finish_paths[CWP_FINISH_BY_DRIVER], memory_order_relaxed),
             fi = atomic_load_explicit(&finish_paths[CWP_FINISH_IDLE], memory_order_relaxed);
    if (fl || fm || fd || fi)
        fprintf(f,
                "clFinish: %" PRIu64 " on the last command, %" PRIu64 " on a marker, %" PRIu64
                " in the driver's own wait, %" PRIu64 " on an idle queue\n",
                fl, fm, fd, fi);
    if (cwp_learned_seeded())
        fprintf(f, "auto started from what %u platform(s) taught earlier runs (%s)\n",
                cwp_learned_seeded(), cwp_cfg.learned_file);
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
    print_table_auto(f, a);
}

/* Every interposed call, and their estimated CPU time (cwp_wall_cpu). */
static uint64_t total_calls(void) {
    uint64_t n = 0;
    for (int k = 0; k < CWP_CALLS; ++k)
        n += atomic_load_explicit(&stats[k].count, memory_order_relaxed);
    return n;
}

static double total_cpu_us(void) {
    double us = 0;
    for (int k = 0; k < CWP_CALLS; ++k)
        us += cpu_per_call_us(&stats[k]) *
              (double)atomic_load_explicit(&stats[k].count, memory_order_relaxed);
    return us;
}

static void print_json(FILE *f, const cw_stats *cs, const cw_stats_auto *a) {
    fprintf(f,
            "{\n  \"pid\": %ld,\n  \"strategy\": \"%s\",\n  \"native\": %s,\n"
            "  \"mechanism\": \"%s\",\n"
            "  \"cpu_clock_cost_ns\": %" PRIu64 ",\n  \"wait_calls\": %" PRIu64
            ",\n  \"wait_cpu_us\": %.3f,\n  \"calls\": {",
            (long)getpid(), cw_strategy_name(cwp_cfg.opt.strategy),
            cwp_cfg.native ? "true" : "false", cwp_mechanism(), cpu_clock_cost_ns, total_calls(),
            total_cpu_us());
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
                sep, call_names[k], n, (double)wall / 1e3, percentile_us(c, n, 0.50),
                percentile_us(c, n, 0.99), per * (double)n, per,
                atomic_load_explicit(&c->cpu_samples, memory_order_relaxed),
                atomic_load_explicit(&c->failed, memory_order_relaxed),
                atomic_load_explicit(&c->hangs, memory_order_relaxed));
        sep = ",";
    }
    fprintf(f,
            "\n  },\n  \"finish_on_last_command\": %" PRIu64 ",\n  \"finish_on_marker\": %" PRIu64
            ",\n  \"finish_by_driver\": %" PRIu64 ",\n  \"finish_idle\": %" PRIu64
            ",\n  \"learned_platforms_seeded\": %u,",
            atomic_load_explicit(&finish_paths[CWP_FINISH_ON_LAST], memory_order_relaxed),
            atomic_load_explicit(&finish_paths[CWP_FINISH_ON_MARKER], memory_order_relaxed),
            atomic_load_explicit(&finish_paths[CWP_FINISH_BY_DRIVER], memory_order_relaxed),
            atomic_load_explicit(&finish_paths[CWP_FINISH_IDLE], memory_order_relaxed),
            cwp_learned_seeded());
    fprintf(f,
            "\n  \"cw\": {\"waits\": %" PRIu64 ", \"spins\": %" PRIu64 ", \"yields\": %" PRIu64
            ", \"parks\": %" PRIu64 ", \"sleeps\": %" PRIu64 ", \"polls\": %" PRIu64
            ", \"timeouts\": %" PRIu64 ", \"latency_count\": %" PRIu64 ", \"latency_us\": [",
            cs->waits, cs->spins, cs->yields, cs->parks, cs->sleeps, cs->polls, cs->timeouts,
            cs->latency_count);
    for (unsigned k = 0; k < CW_STATS_LATENCY_BUCKETS; ++k)
        fprintf(f, "%s%" PRIu64, k ? ", " : "", cs->latency_us[k]);
    fprintf(f,
            "]},\n  \"cw_auto\": {\"checks\": %" PRIu64 ", \"deferred_checks\": %" PRIu64
            ", \"unchecked_waits\": %" PRIu64 ", \"hybrid_waits\": %" PRIu64
            ", \"hybrid_callback_first\": %" PRIu64 ", \"late_callbacks\": %" PRIu64
            ", \"platforms_probed\": %" PRIu64 ", \"platforms_failed_fire\": %" PRIu64
            ", \"platforms_failed_silent\": %" PRIu64 ", \"platforms_late\": %" PRIu64
            ", \"lateness_ns\": %" PRIu64 ", \"lateness_samples\": %" PRIu64
            ", \"driver_waits\": %" PRIu64 ", \"platforms_driver_wait\": %" PRIu64 "}\n}\n",
            a->checks, a->deferred_checks, a->unchecked_waits, a->hybrid_waits,
            a->hybrid_callback_first, a->late_callbacks, a->platforms_probed,
            a->platforms_failed_fire, a->platforms_failed_silent, a->platforms_late, a->lateness_ns,
            a->lateness_samples, a->driver_waits, a->platforms_driver_wait);
}

/* "cw-run: WHAT PATH: reason" on stderr. */
static void warn_errno(const char *what, const char *path) {
    int e = errno;
    char msg[PATH_MAX + 256];
    snprintf(msg, sizeof msg, "%s %s: %s", what, path, strerror(e));
    cwp_warn("%s", msg);
}

bool cwp_out_path(const char *pattern, char *out, size_t len) {
    size_t used = 0;
    bool had_pid = false;
    for (const char *c = pattern; *c; ++c) {
        int n;
        if (c[0] == '%' && c[1] == 'p') {
            n = snprintf(out + used, len - used, "%ld", (long)getpid());
            had_pid = true;
            ++c;
        } else {
            n = snprintf(out + used, len - used, "%c", *c);
        }
        if (n < 0 || (size_t)n >= len - used)
            return false;
        used += (size_t)n;
    }
    if (used == 0 && len)
        out[0] = '\0';
    if (cwp_cfg.child && !had_pid) {
        int n = snprintf(out + used, len - used, ".%ld", (long)getpid());
        if (n < 0 || (size_t)n >= len - used)
            return false;
    }
    return true;
}

/*
 * At exit: the profile and the trace. It is an atexit handler, registered
 * when the preload is loaded, not a destructor. Handlers run in reverse
 * order of registration, so it runs after the program's own handlers, and
 * before a sanitizer's leak check, which may end the process with _exit
 * before any destructor runs. A process that a fork without exec made
 * shares the handler and the counters: only the process that read the
 * configuration writes.
 */
void cwp_profile_report(void) {
    if (!cwp_cfg.active || cwp_cfg.pid != (long)getpid())
        return;
    if (cwp_cfg.trace)
        cwp_trace_write();
    if (!cwp_cfg.stats)
        return;
    cw_stats cs;
    cw_stats_get(&cs);
    cw_stats_auto as = {0};
    cw_stats_auto_get(&as, sizeof as);
    char path[PATH_MAX];
    FILE *f = NULL;
    if (cwp_cfg.stats_file) {
        if (!cwp_out_path(cwp_cfg.stats_file, path, sizeof path))
            cwp_warn("cannot write the profile to %s: the name is too long", cwp_cfg.stats_file);
        else if (!(f = fopen(path, "w")))
            warn_errno("cannot write the profile to", path);
        if (f) {
            print_json(f, &cs, &as);
            if (fclose(f) != 0)
                warn_errno("cannot write the profile to", path);
            return;
        }
    }
    /* The table, or the profile that could not go to its file. */
    int fd = dup(table_fd());
    FILE *t = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!t) {
        if (fd >= 0)
            close(fd);
        return;
    }
    print_table(t, &cs, &as);
    fclose(t);
}
