#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Awaiting N concurrent OpenCL kernel events on asyncio, three ways:

  cw        await cw.wait_async(ev)                        (one descriptor, no thread)
  executor  await loop.run_in_executor(None, ev.wait)      (what pyopencl users write)
  poll      while ev.command_execution_status != COMPLETE: await asyncio.sleep(0)

Each measurement: N kernels on one in-order profiling queue of PoCL's CPU
device, all held behind a user event; N coroutines start awaiting, then the
gate opens and the kernels run one after another. Measured from the gate to
the last coroutine resuming: process CPU time (all threads, PoCL's workers
included), the same minus the kernels' own run time (the sum of END - START:
PoCL runs them on threads of this process, so every method pays it), wall time, threads created (thread ids present at the end that
were not at the start). Latency per event: from its completion, the kernel's
CL_PROFILING_COMMAND_END (PoCL stamps it with CLOCK_MONOTONIC_RAW, checked
at start), to its coroutine resuming (CLOCK_MONOTONIC_RAW read right after
the await). A fourth run, finish, has the same kernels and one blocking wait
for the last, no coroutine per event: what it costs, every method pays; the
CPU a method takes beyond it is its way of waiting. Every round runs each N
with the three methods and finish in rotating order
on a fresh event loop; CPU, wall and threads are medians over the rounds,
p50/p99 are over the latencies of all rounds.
"""

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time

try:
    import numpy as np
    import pyopencl as cl
except ImportError as e:  # the interpreter on PATH may not see Debian's packages
    sys.exit("bench_async: %s (run it with an interpreter that has pyopencl and numpy, "
             "e.g. /usr/bin/python3 on Debian)" % e)

cw = None  # imported once the arguments are read: --help works without libcw

RAW = time.CLOCK_MONOTONIC_RAW
METHODS = ("cw", "executor", "poll")
# Not a way of awaiting: the same N kernels with one blocking wait for the
# last, no coroutine per event. What it costs, every method pays too
# (PoCL's work per command and per kernel); the CPU a method takes beyond it
# is the cost of its way of waiting.
BASELINE = "finish"
RUN = METHODS + (BASELINE,)
KERNEL = """
__kernel void busy(uint n, __global float *out) {
    float x = 0.0f;
    for (uint i = 0; i < n; ++i)
        x = x * 0.999f + 1.0f;
    out[get_global_id(0)] = x;
}
"""


def log(*args):
    print(*args, file=sys.stderr, flush=True)


class Device:
    def __init__(self, iterations):
        want = (os.environ.get("CW_PLATFORM") or "Portable Computing Language").lower()
        plats = [p for p in cl.get_platforms() if want in p.name.lower() and p.get_devices()]
        if not plats:
            sys.exit("bench_async: no OpenCL platform matching %r (OCL_ICD_VENDORS?)" % want)
        self.platform = plats[0]
        self.device = plats[0].get_devices()[0]
        self.ctx = cl.Context(devices=[self.device])
        self.queue = cl.CommandQueue(self.ctx,
                                     properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.kernel = cl.Program(self.ctx, KERNEL).build().busy
        self.out = cl.Buffer(self.ctx, cl.mem_flags.WRITE_ONLY, 4)
        self.iterations = np.uint32(iterations)

    def launch(self, n):
        """n kernels behind a closed gate: (gate, events)."""
        gate = cl.UserEvent(self.ctx)
        events = []
        for i in range(n):
            self.kernel.set_args(self.iterations, self.out)
            events.append(cl.enqueue_nd_range_kernel(self.queue, self.kernel, (1,), None,
                                                     wait_for=[gate] if i == 0 else None))
        self.queue.flush()
        return gate, events

    def check_clock(self):
        """The latency definition needs profiling times on CLOCK_MONOTONIC_RAW:
        each kernel must start and end between two host readings around it.
        Returns (the kernel's run time in µs, None) or (None, why not)."""
        worst = 0
        for _ in range(20):
            gate, (ev,) = self.launch(1)
            before = time.clock_gettime_ns(RAW)
            gate.set_status(cl.command_execution_status.COMPLETE)
            ev.wait()
            after = time.clock_gettime_ns(RAW)
            if not before <= ev.profile.start <= ev.profile.end <= after:
                return None, ("the profiling clock is not CLOCK_MONOTONIC_RAW (start %d, end %d, "
                              "host %d..%d)" % (ev.profile.start, ev.profile.end, before, after))
            worst = max(worst, ev.profile.end - ev.profile.start)
        return worst / 1e3, None


async def await_cw(ev):
    await cw.wait_async(ev)


async def await_executor(ev):
    await asyncio.get_running_loop().run_in_executor(None, ev.wait)


async def await_poll(ev):
    complete = cl.command_execution_status.COMPLETE
    while ev.command_execution_status != complete:
        await asyncio.sleep(0)


AWAIT = {"cw": await_cw, "executor": await_executor, "poll": await_poll}


def tids():
    return set(os.listdir("/proc/self/task"))


def hold_of(method):
    """The notifier's hold (seconds) of a method cw@<µs> (--holds); None for the others."""
    return int(method[3:]) / 1e6 if method.startswith("cw@") else None


def measure(dev, method, n, timed):
    gate, events = dev.launch(n)
    resumed = [0] * n
    hold, default_hold = hold_of(method), cw.HOLD_DEFAULT
    wait = AWAIT.get("cw" if hold is not None else method)

    async def one(i):
        await wait(events[i])
        resumed[i] = time.clock_gettime_ns(RAW)

    async def main():
        before = tids()
        if method == BASELINE:
            cpu0, wall0 = time.process_time(), time.perf_counter()
            gate.set_status(cl.command_execution_status.COMPLETE)
            events[-1].wait()  # in-order queue: the last finishes last
            cpu1, wall1 = time.process_time(), time.perf_counter()
            # Outside the timing, for the completion check below: Mesa's
            # rusticl (22.3) can still report an earlier command of the
            # in-order queue unfinished after the last one completed.
            cl.wait_for_events(events)
            resumed[:] = [1] * n  # no per-event resume to time
            return cpu1 - cpu0, wall1 - wall0, len(tids() - before)
        tasks = [asyncio.ensure_future(one(i)) for i in range(n)]
        for _ in range(3):  # every coroutine is awaiting before the gate opens
            await asyncio.sleep(0)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        gate.set_status(cl.command_execution_status.COMPLETE)
        await asyncio.gather(*tasks)
        cpu1, wall1 = time.process_time(), time.perf_counter()
        created = len(tids() - before)
        return cpu1 - cpu0, wall1 - wall0, created

    if hold is not None:
        cw.HOLD_DEFAULT = hold  # read when the loop's notifier is made, at the first await
    try:
        cpu, wall, created = asyncio.run(main())
    finally:
        cw.HOLD_DEFAULT = default_hold
    lat = []
    kernels_ns = 0
    for ev, t in zip(events, resumed):
        if ev.command_execution_status != cl.command_execution_status.COMPLETE or not t:
            raise SystemExit("bench_async: %s, N=%d: an event did not complete" % (method, n))
        if timed:
            if method != BASELINE:
                lat.append((t - ev.profile.end) / 1e3)
            kernels_ns += ev.profile.end - ev.profile.start
    # PoCL runs the kernels on CPU threads of this process: their run time is
    # in the process CPU of every method alike. What is left is the cost of
    # waiting (and of PoCL's scheduling, the same for all methods).
    wait_cpu = cpu - kernels_ns / 1e9 if timed else float("nan")
    return {"cpu_s": cpu, "wait_cpu_s": wait_cpu, "kernels_s": kernels_ns / 1e9,
            "wall_s": wall, "threads": created, "latency_us": lat}


def pct(values, q):
    if not values:
        return float("nan")  # no usable completion times (see check_clock)
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def summarise(runs):
    lat = [x for r in runs for x in r["latency_us"]]
    return {
        "cpu_ms": statistics.median(r["cpu_s"] for r in runs) * 1e3,
        "wait_cpu_ms": statistics.median(r["wait_cpu_s"] for r in runs) * 1e3,
        "wall_ms": statistics.median(r["wall_s"] for r in runs) * 1e3,
        "threads": statistics.median(r["threads"] for r in runs),
        "p50_us": pct(lat, 0.50),
        "p99_us": pct(lat, 0.99),
        "samples": len(lat),
    }


def no_nan(x):
    """JSON has no NaN: what was not measured is null."""
    if isinstance(x, float) and x != x:
        return None
    if isinstance(x, dict):
        return {k: no_nan(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [no_nan(v) for v in x]
    return x


def goals(table, n, method="cw"):
    """What cw must do better than the thread-per-wait it replaces, at N = n:
    create no thread, take at most half the CPU the executor takes beyond
    the shared finish baseline, and resume its coroutines no later (p50).
    method: cw (the default hold), or one of --holds' cw@<µs>."""
    a, b = table.get((method, n)), table.get(("executor", n))
    if not a or not b:
        return []
    out = [("cw creates no thread", a["threads"] == 0, "%g threads" % a["threads"])]
    base = table.get((BASELINE, n))
    if base and b["cpu_ms"] > base["cpu_ms"]:
        # What each way of waiting adds to the shared cost of the kernels.
        ratio = max(a["cpu_ms"] - base["cpu_ms"], 0.0) / (b["cpu_ms"] - base["cpu_ms"])
        out.append(("cw CPU over finish <= 0.5x", ratio <= 0.5, "%.2fx (%.1f ms against %.1f ms)" % (
            ratio, a["cpu_ms"] - base["cpu_ms"], b["cpu_ms"] - base["cpu_ms"])))
    ratio = a["p50_us"] / b["p50_us"] if b["p50_us"] else float("inf")
    if ratio == ratio:  # not NaN: latencies were measured
        out.append(("cw p50 <= 1.0x executor", ratio <= 1.0, "%.2fx (%.1f µs against %.1f µs)" % (
            ratio, a["p50_us"], b["p50_us"])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: N = 1, 10, 100 and 2 rounds")
    ap.add_argument("--sizes", default="1,10,100,1000", help="the N values (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=7, help="rounds (default %(default)s)")
    ap.add_argument("--iterations", type=int, default=100000,
                    help="loop iterations of the busy kernel (default %(default)s)")
    ap.add_argument("--hold", type=float, metavar="SECONDS",
                    help="the notifier's hold (cw.HOLD_DEFAULT unless given)")
    ap.add_argument("--holds", metavar="SECONDS,...",
                    help="also run cw with each of these holds, as methods cw@<µs>, "
                         "interleaved with the others (the goals judge cw's default)")
    ap.add_argument("--busy", type=int, default=0, metavar="K",
                    help="run K CPU-bound loops (processes) beside the measurements")
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON")
    ap.add_argument("--text", metavar="PATH", help="write the printed report to a file too")
    args = ap.parse_args()
    global cw
    import cw as cw_module
    cw = cw_module
    if args.hold is not None:
        cw.HOLD_DEFAULT = args.hold
    hold_us = cw.HOLD_DEFAULT * 1e6
    global RUN
    if args.holds:
        try:
            extra = tuple("cw@%d" % round(float(x) * 1e6) for x in args.holds.split(","))
        except ValueError:
            ap.error("--holds takes seconds separated by commas, e.g. 0,100e-6")
        if any(hold_of(m) < 0 or hold_of(m) > 1 for m in extra):
            ap.error("--holds: each hold is 0 to 1 s")
        RUN = METHODS + extra + (BASELINE,)
    sizes = [int(x) for x in args.sizes.split(",")]
    rounds = args.rounds
    if args.quick:
        sizes, rounds = [n for n in sizes if n <= 100] or [1], 2
    if rounds < 1 or any(n < 1 for n in sizes):
        ap.error("rounds and sizes must be positive")

    dev = Device(args.iterations)
    kernel_us, no_clock = dev.check_clock()
    timed = no_clock is None
    if not timed:
        # Still measured: CPU, wall, threads. Latency and the kernels' run
        # time need the profiling clock (PoCL has it; rusticl does not).
        log("bench_async: no latencies or kernel times on this platform: %s" % no_clock)
    log("bench_async: %s, %s; N = %s; %d rounds" % (dev.platform.version, dev.device.name,
                                                    sizes, rounds))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(args.busy)]
    if busy:
        log("bench_async: %d CPU-bound loops running beside it" % len(busy))
        time.sleep(1)  # let them take their CPUs before the load average is read
    try:
        load_before = os.getloadavg()
        runs, progress = run_rounds(dev, sizes, rounds, timed)
        load_after = os.getloadavg()
    finally:
        for p in busy:
            p.kill()
            p.wait()
    report_and_save(args, dev, sizes, rounds, timed, kernel_us, no_clock, hold_us, len(busy),
                    load_before, load_after, runs, progress)


def run_rounds(dev, sizes, rounds, timed):
    runs = {}
    progress = []
    for r in range(rounds):
        for n in sizes:
            k = r % len(RUN)
            order = RUN[k:] + RUN[:k]  # rotated: no method always first
            for m in order:
                res = measure(dev, m, n, timed)
                runs.setdefault((m, n), []).append(res)
                progress.append("round %d/%d N=%-5d %-8s cpu %8.1f ms  wall %8.1f ms  "
                                "threads %d  p50 %8.1f µs" % (
                                    r + 1, rounds, n, m, res["cpu_s"] * 1e3,
                                    res["wall_s"] * 1e3, res["threads"],
                                    pct(res["latency_us"], 0.5)))
                log(progress[-1])
    return runs, progress


def report_and_save(args, dev, sizes, rounds, timed, kernel_us, no_clock, hold_us, busy,
                    load_before, load_after, runs, progress):
    table = {k: summarise(v) for k, v in runs.items()}

    lines = ["bench_async: awaiting N concurrent kernel events on asyncio",
             "platform: %s; device: %s; Python %s; cw %s (libcw %s)" % (
                 dev.platform.version, dev.device.name, platform.python_version(),
                 cw.__version__, cw.library_version_string()),
             "kernel: %d iterations, %s; %d rounds, methods interleaved; "
             "CPU/wall/threads: medians; p50/p99: all rounds' latencies" % (
                 args.iterations, "about %.0f µs" % kernel_us if timed else "run time unknown",
                 rounds),
             "load average before %.2f, after %.2f; %d CPUs; %d CPU-bound loops beside it; "
             "notifier hold %.0f µs" % (load_before[0], load_after[0], os.cpu_count(), busy,
                                        hold_us),
             "latency: CL_PROFILING_COMMAND_END (CLOCK_MONOTONIC_RAW) to the coroutine resuming"
             if timed else "latency: not measured, " + no_clock,
             "",
             "CPU: the whole process; CPU-kernels: minus the kernels' run time "
             "(PoCL runs them on this process's threads); finish: the same kernels "
             "with one blocking wait for the last, the cost every method shares",
             "",
             "| N | method | CPU ms | CPU-kernels ms | wall ms | threads | p50 µs | p99 µs |",
             "|---|---|---|---|---|---|---|---|"]
    for n in sizes:
        for m in RUN:
            s = table[(m, n)]
            lat = ("%.1f | %.1f" % (s["p50_us"], s["p99_us"]) if m != BASELINE else "- | -")
            lines.append("| %d | %s | %.1f | %.1f | %.1f | %g | %s |" % (
                n, m, s["cpu_ms"], s["wait_cpu_ms"], s["wall_ms"], s["threads"], lat))
    big = max(sizes)
    checks = goals(table, big)
    if checks:
        lines += ["", "goals at N = %d (cw against executor):" % big]
        lines += ["  %-26s %-6s %s" % (name, "met" if ok else "MISSED", got)
                  for name, ok, got in checks]
    others = [m for m in RUN if hold_of(m) is not None]
    held = {m: goals(table, big, m)[1:] for m in others}
    if others:
        lines += ["", "the same for the other holds (--holds), at N = %d:" % big]
        lines += ["  %-8s %-26s %-6s %s" % (m, name.replace("cw ", ""), "met" if ok else "MISSED",
                                            got)
                  for m in others for name, ok, got in held[m]]
    lines += ["", "every measurement, in the order run:"] + ["  " + x for x in progress]
    report = "\n".join(lines) + "\n"
    print(report, end="")
    if args.text:
        with open(args.text, "w") as f:
            f.write(report)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(no_nan({
                "platform": dev.platform.version, "device": dev.device.name,
                "python": platform.python_version(), "cw": cw.__version__,
                "libcw": cw.library_version_string(), "iterations": args.iterations,
                "kernel_us": kernel_us, "rounds": rounds, "sizes": sizes,
                "loadavg_before": load_before, "loadavg_after": load_after,
                "cpus": os.cpu_count(), "busy_loops": busy, "hold_us": hold_us,
                "results": [dict(method=m, n=n, **table[(m, n)]) for n in sizes for m in RUN],
                "goals": [{"goal": g, "met": ok, "value": v} for g, ok, v in checks],
                "holds": [{"method": m, "hold_us": int(m[3:]), "goal": g, "met": ok,
                           "value": v} for m in others for g, ok, v in held[m]],
                "runs": [{"method": m, "n": n, "round": i, "cpu_s": r["cpu_s"],
                          "kernels_s": r["kernels_s"], "wall_s": r["wall_s"],
                          "threads": r["threads"], "p50_us": pct(r["latency_us"], 0.5)}
                         for (m, n), rs in runs.items() for i, r in enumerate(rs)],
            }), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
