/* SPDX-License-Identifier: MIT */
/* The timeline of --trace (trace.h). */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "cw.h"
#include "hang.h"
#include "preload.h"

/* A device's end time below this (ns on its clock) is no time: Mesa
 * 22.3's rusticl reports 0, 1, 2, 3 for every command's profiling times. */
#define DEVICE_TIME_MIN 1000000u

/* A device span's call: not an entry point. */
#define DEVICE_SPAN 0xffffu

/* One span, host or device. */
typedef struct rec {
    uint64_t begin, end; /* CLOCK_MONOTONIC ns */
    uint64_t device_end; /* a device span's end on the device's clock */
    uint64_t seq;
    cl_command_queue queue;
    uint32_t tid;
    cl_int result;
    cl_command_type command;
    cl_uint events;
    uint64_t cpu_ns;        /* CWP_NO_CPU: not sampled */
    uint32_t parks, checks; /* cw's, process-wide, during the call */
    uint32_t wait_flags;    /* the flags passed to cw's wait (cw_wait_options) */
    uint16_t call;          /* enum cwp_call, or DEVICE_SPAN */
    uint8_t hang, on_marker;
    uint8_t cw_waited; /* the call waited with cw: wait_flags holds */
} rec;

/*
 * Each thread appends to chunks of its own: the only shared writes on the
 * wait path are the sequence number and, once per CHUNK spans, the push of
 * a new chunk. A chunk's `used` is published with release order after the
 * span is written, so the writer at exit reads only whole spans, even of
 * threads still running. Chunks are never freed: at most MAX_CHUNKS of
 * them (64 MiB), after which spans are counted as dropped.
 */
#define CHUNK 1024
#define MAX_CHUNKS 1024

typedef struct chunk {
    struct chunk *next;
    _Atomic uint32_t used;
    rec r[CHUNK];
} chunk;

static _Atomic(chunk *) chunks;
static _Atomic uint32_t nchunks;
static _Atomic uint64_t seq, dropped;
static __thread chunk *mine;
static __thread uint32_t my_tid;
/* Set during the thread's current call, cleared when its span is written. */
static __thread bool hang_seen, on_marker;
static __thread bool cw_waited;
static __thread uint32_t wait_flags;

uint64_t cwp_trace_seq(void) {
    return atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed);
}

/* cw's counters are process-wide: with one waiting thread (most programs)
 * their deltas are the call's own; with several, those of every wait that
 * overlapped it. Two snapshots a call, only under --trace. */
static void counters(uint64_t *parks, uint64_t *checks) {
    cw_stats cs;
    cw_stats_auto a;
    *parks = cw_stats_get(&cs) == CW_OK ? cs.parks : 0;
    *checks = cw_stats_auto_get(&a, sizeof a) == CW_OK ? a.checks : 0;
}

void cwp_trace_begin(cwp_span *s) {
    s->seq = cwp_trace_seq();
    counters(&s->parks, &s->checks);
}

void cwp_trace_wait_flags(unsigned flags) {
    cw_waited = true;
    wait_flags = flags;
}

void cwp_trace_finish_path(bool marker) {
    on_marker = marker;
}

void cwp_trace_hang(void) {
    hang_seen = true;
}

/* The command type of each blocking call (its wait is on that command). */
static cl_command_type call_command(enum cwp_call k) {
    static const cl_command_type types[CWP_CALLS] = {
        [CWP_READ_BUFFER] = CL_COMMAND_READ_BUFFER,
        [CWP_WRITE_BUFFER] = CL_COMMAND_WRITE_BUFFER,
        [CWP_READ_BUFFER_RECT] = CL_COMMAND_READ_BUFFER_RECT,
        [CWP_WRITE_BUFFER_RECT] = CL_COMMAND_WRITE_BUFFER_RECT,
        [CWP_READ_IMAGE] = CL_COMMAND_READ_IMAGE,
        [CWP_WRITE_IMAGE] = CL_COMMAND_WRITE_IMAGE,
        [CWP_MAP_BUFFER] = CL_COMMAND_MAP_BUFFER,
        [CWP_MAP_IMAGE] = CL_COMMAND_MAP_IMAGE,
        [CWP_SVM_MEMCPY] = CL_COMMAND_SVM_MEMCPY,
        [CWP_SVM_MAP] = CL_COMMAND_SVM_MAP,
    };
    return types[k];
}

void cwp_trace_subject(cwp_span *s, cl_command_queue queue, const cl_event *evs, cl_uint n) {
    s->queue = queue;
    s->evs = evs;
    s->n = n;
    /* Two queries of the first event: the trace's only cost beyond the
     * clock, and only under --trace. */
    if (evs && n && evs[0]) {
        clGetEventInfo(evs[0], CL_EVENT_COMMAND_TYPE, sizeof s->command, &s->command, NULL);
        if (!queue)
            clGetEventInfo(evs[0], CL_EVENT_COMMAND_QUEUE, sizeof s->queue, &s->queue, NULL);
    }
}

/* Room for one more span in this thread's buffer, or NULL (the cap). */
static rec *slot(chunk **cp) {
    chunk *c = mine;
    if (!c || atomic_load_explicit(&c->used, memory_order_relaxed) == CHUNK) {
        if (atomic_fetch_add_explicit(&nchunks, 1, memory_order_relaxed) >= MAX_CHUNKS ||
            !(c = calloc(1, sizeof *c))) {
            atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
            return NULL;
        }
        c->next = atomic_load_explicit(&chunks, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(&chunks, &c->next, c, memory_order_release,
                                                      memory_order_relaxed))
            ;
        mine = c;
    }
    if (!my_tid)
        my_tid = (uint32_t)syscall(SYS_gettid);
    *cp = c;
    return &c->r[atomic_load_explicit(&c->used, memory_order_relaxed)];
}

static void publish(chunk *c) {
    atomic_fetch_add_explicit(&c->used, 1, memory_order_release);
}

void cwp_trace_span(enum cwp_call k, const cwp_span *s, cl_int result, uint64_t wall_end,
                    uint64_t cpu_ns) {
    uint64_t parks, checks;
    counters(&parks, &checks);
    chunk *c;
    rec *r = slot(&c);
    if (r) {
        *r = (rec){.begin = s->wall,
                   .end = wall_end,
                   .seq = s->seq,
                   .queue = s->queue,
                   .tid = my_tid,
                   .result = result,
                   .command = s->command  ? s->command
                              : on_marker ? CL_COMMAND_MARKER
                                          : call_command(k),
                   .events = s->n,
                   .cpu_ns = cpu_ns,
                   .parks = (uint32_t)(parks - s->parks),
                   .checks = (uint32_t)(checks - s->checks),
                   .wait_flags = wait_flags,
                   .call = (uint16_t)k,
                   .hang = hang_seen,
                   .on_marker = on_marker,
                   .cw_waited = cw_waited};
        publish(c);
    }
    hang_seen = on_marker = cw_waited = false;
    wait_flags = 0;
    /* The commands waited on, now finished; the events are the caller's
     * and still valid. The blocking calls pass theirs to cwp_trace_device
     * themselves, before they release them. */
    if (result == CL_SUCCESS && s->evs)
        for (cl_uint i = 0; i < s->n && i < 64; ++i)
            cwp_trace_device(s->evs[i]);
}

void cwp_trace_device(cl_event ev) {
    if (!cwp_cfg.trace || !ev)
        return;
    cl_command_queue q = NULL;
    cl_command_queue_properties p = 0;
    cl_ulong start = 0, end = 0;
    cl_command_type type = 0;
    if (clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) != CL_SUCCESS || !q ||
        clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL) != CL_SUCCESS ||
        !(p & CL_QUEUE_PROFILING_ENABLE) ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) !=
            CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) !=
            CL_SUCCESS ||
        end < start || end < DEVICE_TIME_MIN)
        return;
    clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
    /*
     * The device's clock need not be the host's. When its end reads like
     * the host's monotonic clock (within the last second: PoCL's CPU
     * device), the times stand as they are; otherwise the span is placed
     * to end when the wait saw it finished, with the device's duration.
     */
    uint64_t now = cwp_wall_ns(), device_end = end;
    if (!(end <= now && now - end < 1000000000u)) {
        start = now - (end - start);
        end = now;
    }
    chunk *c;
    rec *r = slot(&c);
    if (!r)
        return;
    *r = (rec){.begin = start,
               .end = end,
               .device_end = device_end,
               .seq = cwp_trace_seq(),
               .queue = q,
               .tid = 0,
               .result = CL_COMPLETE,
               .command = type,
               .call = DEVICE_SPAN};
    publish(c);
}

static int by_seq(const void *a, const void *b) {
    const rec *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The device tracks: one per queue, numbered after the threads' ids. */
#define DEVICE_TID_BASE 1000000000u
#define MAX_QUEUES 64

typedef struct track {
    cl_command_queue queue;
    uint64_t device_end, dur; /* its last span, to drop a command seen twice */
} track;

static track *queue_track(track *tracks, unsigned *nq, cl_command_queue q) {
    for (unsigned i = 0; i < *nq; ++i)
        if (tracks[i].queue == q)
            return &tracks[i];
    if (*nq == MAX_QUEUES)
        return &tracks[MAX_QUEUES - 1];
    tracks[*nq] = (track){.queue = q};
    return &tracks[(*nq)++];
}

static const char *ended(const rec *r) {
    if (r->result == CL_SUCCESS)
        return "complete";
    if (r->result == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        return "failed";
    return "error";
}

_Static_assert(CW_WAIT_FLAGS_ALL_ == (CW_WAIT_NO_FLUSH | CW_WAIT_OWN_CALLBACK | CW_WAIT_POLL |
                                      CW_WAIT_LATENCY | CW_WAIT_INTERRUPT_FD),
               "flag_names names every flag");

/* `, "cw_wait_flags": [...]` for a call that waited with cw: the names of
 * the flags it passed (cw/wait.h's CW_WAIT_*, lower case); "" for one that
 * did not. */
static void flag_names(const rec *r, char *out, size_t len) {
    static const struct {
        unsigned flag;
        const char *name;
    } names[] = {{CW_WAIT_NO_FLUSH, "no_flush"},
                 {CW_WAIT_OWN_CALLBACK, "own_callback"},
                 {CW_WAIT_POLL, "poll"},
                 {CW_WAIT_LATENCY, "latency"},
                 {CW_WAIT_INTERRUPT_FD, "interrupt_fd"}};
    out[0] = '\0';
    if (!r->cw_waited)
        return;
    size_t at = (size_t)snprintf(out, len, ", \"cw_wait_flags\": [");
    const char *sep = "";
    for (size_t i = 0; i < sizeof names / sizeof names[0] && at < len; ++i) {
        if (!(r->wait_flags & names[i].flag))
            continue;
        at += (size_t)snprintf(out + at, len - at, "%s\"%s\"", sep, names[i].name);
        sep = ", ";
    }
    if (at < len)
        snprintf(out + at, len - at, "]");
}

static void write_events(FILE *f, rec *all, size_t n) {
    long pid = (long)getpid();
    const char *strategy = cw_strategy_name(cwp_cfg.opt.strategy);
    uint64_t t0 = UINT64_MAX;
    for (size_t i = 0; i < n; ++i)
        if (all[i].begin < t0)
            t0 = all[i].begin;
    track tracks[MAX_QUEUES];
    unsigned nq = 0;
    /* Threads named once each; a small list, as threads that wait are few. */
    uint32_t named[256];
    unsigned nnamed = 0;
    const char *sep = "\n";
    for (size_t i = 0; i < n; ++i) {
        const rec *r = &all[i];
        double ts = (double)(int64_t)(r->begin - t0) / 1e3;
        double dur = (double)(r->end - r->begin) / 1e3;
        if (r->call == DEVICE_SPAN) {
            /* A command waited on twice (clWaitForEvents, then as the
             * queue's last command in clFinish) is one span. */
            track *t = queue_track(tracks, &nq, r->queue);
            if (t->device_end == r->device_end && t->dur == r->end - r->begin)
                continue;
            t->device_end = r->device_end;
            t->dur = r->end - r->begin;
            uint32_t tid = DEVICE_TID_BASE + (uint32_t)(t - tracks);
            fprintf(f,
                    "%s{\"name\": \"%s\", \"cat\": \"device\", \"ph\": \"X\", \"ts\": %.3f, "
                    "\"dur\": %.3f, \"pid\": %ld, \"tid\": %" PRIu32
                    ", \"args\": {\"queue\": \"%p\", \"seq\": %" PRIu64 "}}",
                    sep, cwp_command_type_name(r->command), ts, dur, pid, tid, (void *)r->queue,
                    r->seq);
        } else {
            bool seen = false;
            for (unsigned j = 0; j < nnamed; ++j)
                seen |= named[j] == r->tid;
            if (!seen && nnamed < 256) {
                named[nnamed++] = r->tid;
                fprintf(f,
                        "%s{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %ld, \"tid\": "
                        "%" PRIu32 ", \"args\": {\"name\": \"thread %" PRIu32 "\"}}",
                        sep, pid, r->tid, r->tid);
                sep = ",\n";
            }
            const char *waited_on = "";
            if (r->call == CWP_FINISH)
                waited_on = r->on_marker ? ", \"waited_on\": \"marker\""
                            : r->events  ? ", \"waited_on\": \"last command\""
                                         : ", \"waited_on\": \"the real clFinish\"";
            char cpu[48] = "", flags[96];
            flag_names(r, flags, sizeof flags);
            if (r->cpu_ns != CWP_NO_CPU)
                snprintf(cpu, sizeof cpu, ", \"cpu_us\": %.3f", (double)r->cpu_ns / 1e3);
            fprintf(f,
                    "%s{\"name\": \"%s\", \"cat\": \"wait\", \"ph\": \"X\", \"ts\": %.3f, "
                    "\"dur\": %.3f, \"pid\": %ld, \"tid\": %" PRIu32
                    ", \"args\": {\"seq\": %" PRIu64 ", \"queue\": \"%p\", \"command\": \"%s\", "
                    "\"events\": %u, \"strategy\": \"%s\", \"native_calls\": %s, \"ended\": "
                    "\"%s\", \"result\": %d, \"hang_reported\": %s%s, \"cw_parks\": %" PRIu32
                    ", \"cw_checks\": %" PRIu32 "%s%s}}",
                    sep, cwp_call_name((enum cwp_call)r->call), ts, dur, pid, r->tid, r->seq,
                    (void *)r->queue, r->command ? cwp_command_type_name(r->command) : "none",
                    (unsigned)r->events, strategy, cwp_native_blocking() ? "true" : "false",
                    ended(r), (int)r->result, r->hang ? "true" : "false", waited_on, r->parks,
                    r->checks, flags, cpu);
        }
        sep = ",\n";
    }
    for (unsigned i = 0; i < nq; ++i)
        fprintf(f,
                "%s{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %ld, \"tid\": %u, "
                "\"args\": {\"name\": \"device, queue %p\"}}",
                sep, pid, DEVICE_TID_BASE + i, (void *)tracks[i].queue);
}

void cwp_trace_write(void) {
    size_t n = 0;
    for (chunk *c = atomic_load_explicit(&chunks, memory_order_acquire); c; c = c->next)
        n += atomic_load_explicit(&c->used, memory_order_acquire);
    rec *all = malloc((n ? n : 1) * sizeof *all);
    if (!all) {
        cwp_warn("%s", "no memory to write the trace");
        return;
    }
    size_t m = 0;
    for (chunk *c = atomic_load_explicit(&chunks, memory_order_acquire); c; c = c->next) {
        uint32_t used = atomic_load_explicit(&c->used, memory_order_acquire);
        for (uint32_t i = 0; i < used && m < n; ++i)
            all[m++] = c->r[i];
    }
    /* The order the calls began in: each thread's spans as its calls were. */
    qsort(all, m, sizeof *all, by_seq);
    char path[PATH_MAX];
    FILE *f = NULL;
    if (!cwp_out_path(cwp_cfg.trace_file, path, sizeof path))
        cwp_warn("cannot write the trace to %s: the name is too long", cwp_cfg.trace_file);
    else if (!(f = fopen(path, "w"))) {
        char msg[PATH_MAX + 256];
        snprintf(msg, sizeof msg, "cannot write the trace to %s: %s", path, strerror(errno));
        cwp_warn("%s", msg);
    }
    if (f) {
        fprintf(f,
                "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"tool\": \"cw-run\", \"pid\": "
                "%ld, \"strategy\": \"%s\", \"spans\": %zu, \"dropped\": %" PRIu64
                "},\n\"traceEvents\": [",
                (long)getpid(), cw_strategy_name(cwp_cfg.opt.strategy), m,
                atomic_load_explicit(&dropped, memory_order_relaxed));
        write_events(f, all, m);
        fprintf(f, "\n]}\n");
        if (fclose(f) != 0)
            cwp_warn("cannot write the trace to %s", path);
    }
    free(all);
}
