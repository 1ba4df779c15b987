#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cw-run --trace=FILE on trace_calls (two threads, known call sequences).

Under each strategy the trace must be valid JSON in the Chrome trace-event
format (a "traceEvents" list; "X" spans with numeric ts, dur, pid, tid),
hold one wait span per interposed call (as many of each call as the
--stats profile counts), each thread's spans in the order its calls were
made (the sequence trace_calls prints, non-overlapping, seq increasing),
each span's arguments (strategy, command, queue, how it ended, cw's parks
and checks during it, none under blocking, the flags of its wait with cw,
which every blocking read and write makes under the cw strategies and none
makes under blocking, CW_WAIT_LATENCY among them exactly when cw-run ran
with --latency, and its CPU time), and, as the queues have profiling
enabled, device spans of the commands the waits saw finish (required with
--device-spans: PoCL; Mesa 22.3's rusticl reports no real profiling
times). Usage: trace.py CW_RUN TRACE_CALLS [--device-spans]
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

ROUNDS = 3
COMMANDS = {"CL_COMMAND_READ_BUFFER", "CL_COMMAND_WRITE_BUFFER", "CL_COMMAND_MARKER"}


def fail(msg, err=""):
    print("FAIL: " + msg)
    for line in err.splitlines()[-20:]:
        print("  stderr: " + line)
    sys.exit(1)


def check(cw_run, prog, strategy, work, want_device, latency=False):
    label = strategy + (" --latency" if latency else "")
    name = strategy + ("-latency" if latency else "")
    trace = os.path.join(work, name + "-trace.json")
    stats = os.path.join(work, name + "-stats.json")
    p = subprocess.run([cw_run, "--strategy", strategy, "--stats=" + stats,
                        "--trace=" + trace] + (["--latency"] if latency else [])
                       + ["--", prog, str(ROUNDS)],
                       capture_output=True, text=True, timeout=100)
    if p.returncode != 0:
        fail(f"{label}: exit {p.returncode}", p.stderr)
    expected = collections.defaultdict(list)
    for line in p.stdout.splitlines():
        index, call = line.split()
        expected[index].append(call)
    if len(expected) != 2 or any(len(v) != 4 * ROUNDS and len(v) != 3 * ROUNDS
                                 for v in expected.values()):
        fail(f"{label}: trace_calls printed {dict(expected)}")
    with open(trace) as f:
        doc = json.load(f)
    events = doc.get("traceEvents")
    if not isinstance(events, list) or not events:
        fail(f"{label}: no traceEvents list")
    for e in events:
        if e.get("ph") not in ("X", "B", "E", "M"):
            fail(f"{label}: an event with ph {e.get('ph')!r}: {e}")
        if e["ph"] == "X" and not all(isinstance(e.get(k), (int, float))
                                      for k in ("ts", "dur", "pid", "tid")):
            fail(f"{label}: a span without numeric ts, dur, pid, tid: {e}")
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    waits = [e for e in events if e["ph"] == "X" and e.get("cat") == "wait"]
    device = [e for e in events if e["ph"] == "X" and e.get("cat") == "device"]

    # One span per interposed call: as many as the profile counts.
    with open(stats) as f:
        profile = json.load(f)
    counted = {call: v["count"] for call, v in profile["calls"].items()}
    spans = collections.Counter(e["name"] for e in waits)
    if dict(spans) != counted:
        fail(f"{label}: spans {dict(spans)}, the profile counts {counted}")

    # Each thread's spans: the calls it made, in order.
    by_tid = collections.defaultdict(list)
    for e in waits:
        by_tid[e["tid"]].append(e)
    got = sorted([e["name"] for e in v] for v in by_tid.values())
    if got != sorted(expected.values()):
        fail(f"{label}: per-thread spans {got}, calls made {sorted(expected.values())}")
    for tid, spans_of in by_tid.items():
        if not names.get(tid, "").startswith("thread"):
            fail(f"{label}: thread {tid} has no thread_name")
        for a, b in zip(spans_of, spans_of[1:]):
            if not (a["args"]["seq"] < b["args"]["seq"] and a["ts"] + a["dur"] <= b["ts"] + 0.002):
                fail(f"{label}: thread {tid}: {a} then {b}: not in call order")
    for e in waits:
        args = e["args"]
        if args["strategy"] != strategy or args["ended"] != "complete" or args["result"] != 0:
            fail(f"{label}: span arguments {args}")
        real_finish = args.get("waited_on") == "the real clFinish"
        if (args["command"] not in COMMANDS and not (real_finish and args["command"] == "none")) \
                or not args["queue"].startswith("0x"):
            fail(f"{label}: span command or queue {args}")
        if e["name"] == "clFinish" and args.get("waited_on") not in (
                "marker", "last command", "the real clFinish"):
            fail(f"{label}: clFinish without waited_on: {args}")
        # cw's parks and checks during the call (process-wide deltas) and
        # the thread CPU (every call is sampled here: fewer than 64 of a
        # kind).
        if not all(isinstance(args.get(k), int) and args[k] >= 0
                   for k in ("cw_parks", "cw_checks")) \
                or not isinstance(args.get("cpu_us"), (int, float)) or args["cpu_us"] < 0:
            fail(f"{label}: span without cw_parks, cw_checks, cpu_us: {args}")
        # The flags of the call's wait with cw: a blocking read or write
        # always waits with cw under the cw strategies (on the event of the
        # command it enqueued), never under blocking; the preload asks for
        # its own callback, and for latency exactly when run with --latency.
        flags = args.get("cw_wait_flags")
        transfer = e["name"] in ("clEnqueueReadBuffer", "clEnqueueWriteBuffer")
        if strategy == "blocking":
            if flags is not None:
                fail(f"{label}: a native call waited with cw: {args}")
        elif transfer and flags is None:
            fail(f"{label}: a blocking transfer without the flags of its cw wait: {args}")
        if flags is not None:
            if not isinstance(flags, list) or "own_callback" not in flags \
                    or ("latency" in flags) != latency:
                fail(f"{label}: cw_wait_flags {flags!r}, latency asked: {latency}")
        if args["cw_parks"] > profile["cw"]["parks"] or \
                args["cw_checks"] > profile["cw_auto"]["checks"]:
            fail(f"{label}: span counts more than the profile: {args}")
        if strategy == "blocking" and (args["cw_parks"] or args["cw_checks"]):
            fail(f"{label}: cw parked or checked under the native calls: {args}")
    if strategy == "blocking" and (profile["cw"]["waits"] or profile["cw_auto"]["platforms_probed"]):
        fail(f"{label}: cw waited or probed under the native calls: {profile}")

    # Device spans, on tracks of their own named after their queue.
    if want_device and strategy != "blocking" and not device:
        fail(f"{label}: no device span, although the queues have profiling")
    queues = {e["args"]["queue"] for e in waits}
    for e in device:
        if e["name"] not in COMMANDS or e["dur"] < 0 or e["args"]["queue"] not in queues:
            fail(f"{label}: device span {e}")
        if not names.get(e["tid"], "").startswith("device"):
            fail(f"{label}: device span on track {e['tid']} named {names.get(e['tid'])!r}")
    print(f"ok: --strategy {label}: {len(waits)} wait spans on {len(by_tid)} threads "
          f"in call order, as counted; {len(device)} device spans")


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["--device-spans"]):
        print(__doc__.strip().splitlines()[-1].strip())
        return 2
    with tempfile.TemporaryDirectory() as work:
        for strategy in ("auto", "cooperative", "blocking"):
            check(sys.argv[1], sys.argv[2], strategy, work, len(sys.argv) == 4)
        check(sys.argv[1], sys.argv[2], "auto", work, len(sys.argv) == 4, latency=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
