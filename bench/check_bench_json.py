#!/usr/bin/env python3
"""Check a cw-bench JSON file (python3 standard library only).

Exits 0 when the file parses, has a header with the OpenCL and host fields,
holds one record for every strategy x config x kernel expected, each
with the required numeric fields and a verified result, and has the
timer-slack table (1, 10, 100, 1000 us sleeps, default and 1 ns slack). Exits 1 otherwise
(2 on a usage error), printing what is wrong.

By default the expected strategies, configs and kernels are the ones the
header says were requested; --strategies, --configs and --kernels override
that. A config matches a record's "config" (as given to --configs, e.g. "1"
or "all") or its CPU count.

usage: check_bench_json.py FILE [--strategies a,b] [--configs 1,all]
                                [--kernels saxpy,busy-100us,busy-1ms]
"""
import argparse
import json
import math
import sys

HEADER_FIELDS = ["platform_name", "platform_version", "device_name", "device_version",
                 "driver_version", "host", "date", "command"]
RECORD_FIELDS = ["kernel", "cpus", "workers", "strategy", "launches", "cpu_us_mean",
                 "cpu_us_median", "wall_us_mean", "wall_us_median", "wall_us_p99",
                 "overhead_us_median", "kernel_us_median"]
NUMERIC_FIELDS = RECORD_FIELDS[4:]


def csv_list(text):
    return [x for x in text.split(",") if x]


def main():
    ap = argparse.ArgumentParser(description="Check a cw-bench JSON result file.")
    ap.add_argument("json_file")
    ap.add_argument("--strategies", type=csv_list, help="expected strategies (default: header)")
    ap.add_argument("--configs", type=csv_list, help="expected configs, e.g. 1,all (default: header)")
    ap.add_argument("--kernels", type=csv_list, help="expected kernels (default: header)")
    args = ap.parse_args()

    problems = []
    try:
        with open(args.json_file, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{args.json_file}: cannot read or parse: {e}")
        return 1
    if not isinstance(doc, dict) or not isinstance(doc.get("header"), dict) \
            or not isinstance(doc.get("results"), list):
        print(f"{args.json_file}: expected an object with 'header' (object) and 'results' (array)")
        return 1
    header, results = doc["header"], doc["results"]

    for key in HEADER_FIELDS:
        if key not in header:
            problems.append(f"header lacks '{key}'")
    if header.get("errors"):
        problems.append(f"header lists errors: {header['errors']}")

    strategies = args.strategies or header.get("strategies") or []
    configs = args.configs or [c.get("config") for c in header.get("configs", [])]
    kernels = args.kernels or header.get("kernels") or []
    for name, lst in (("strategies", strategies), ("configs", configs), ("kernels", kernels)):
        if not lst:
            problems.append(f"no {name} expected (none given and none in the header)")

    def config_matches(rec, want):
        return str(rec.get("config")) == str(want) or str(rec.get("cpus")) == str(want)

    for i, rec in enumerate(results):
        if not isinstance(rec, dict):
            problems.append(f"results[{i}] is not an object")
            continue
        where = f"results[{i}] ({rec.get('kernel')}, {rec.get('config')}, {rec.get('strategy')})"
        for key in RECORD_FIELDS:
            if key not in rec:
                problems.append(f"{where}: lacks '{key}'")
        for key in NUMERIC_FIELDS:
            v = rec.get(key)
            if key in rec and (not isinstance(v, (int, float)) or isinstance(v, bool)
                               or not math.isfinite(v) or v < 0 and key != "overhead_us_median"):
                problems.append(f"{where}: '{key}' is not a valid number: {v!r}")
        if isinstance(rec.get("launches"), int) and rec["launches"] <= 0:
            problems.append(f"{where}: no launches")
        if rec.get("ok") is False:
            problems.append(f"{where}: result verification failed")

    # The timer-slack table: each requested sleep with the default slack and
    # with 1 ns, each taking at least the time requested.
    slack = doc.get("timerslack")
    if not isinstance(slack, list):
        problems.append("lacks the 'timerslack' array")
    else:
        seen = set()
        for i, t in enumerate(slack):
            if not isinstance(t, dict):
                problems.append(f"timerslack[{i}] is not an object")
                continue
            for key in ("requested_us", "slack_ns", "n", "mean_us", "median_us", "p90_us"):
                v = t.get(key)
                if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                    problems.append(f"timerslack[{i}]: '{key}' is not a valid number: {v!r}")
            if isinstance(t.get("median_us"), (int, float)) and \
                    isinstance(t.get("requested_us"), (int, float)) and \
                    t["median_us"] < t["requested_us"]:
                problems.append(f"timerslack[{i}]: a sleep shorter than requested")
            seen.add((t.get("requested_us"), t.get("slack")))
        for req in (1, 10, 100, 1000):
            for sl in ("default", "1ns"):
                if (req, sl) not in seen:
                    problems.append(f"timerslack lacks {req} us with {sl} slack")

    valid = [r for r in results if isinstance(r, dict)]
    for k in kernels:
        for c in configs:
            for s in strategies:
                hits = [r for r in valid if r.get("kernel") == k and r.get("strategy") == s
                        and config_matches(r, c)]
                if not hits:
                    problems.append(f"missing record: kernel {k}, config {c}, strategy {s}")

    if problems:
        print(f"{args.json_file}: {len(problems)} problem(s):")
        for p in problems:
            print(f"  {p}")
        return 1
    print(f"{args.json_file}: ok ({len(results)} records: {len(kernels)} kernels x "
          f"{len(configs)} configs x {len(strategies)} strategies expected)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
