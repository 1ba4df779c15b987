#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a cw-bench JSON file (python3 standard library only).

Exits 0 when the file parses, has a header with the build, OpenCL and host
fields, holds one record for every strategy x config x kernel expected, each
with the required numeric fields (the CPU's and wall's standard deviations
null below two launches) and a verified result, records every busy
size's calibration and has a floor for every config. Exits 1 otherwise (2 on
a usage error), printing what is wrong.

By default the expected strategies, configs, kernels and driver models are
the ones the header says were requested; --strategies, --configs, --kernels
and --driver-models override that. A config matches a record's "config" (as
given to --configs, e.g. "1" or "all") or its CPU count; a driver model its
"driver_model" (a file from before driver models holds pocl3 only). Every
(kernel, driver model, config, strategy) needs its record and every (driver
model, config) its floor.

usage: check_bench_json.py FILE [--strategies a,b] [--configs 1,all]
                                [--kernels saxpy,busy-100us,busy-1ms,latency]
                                [--driver-models pocl3,nvidia]
"""
import argparse
import json
import math
import sys

HEADER_FIELDS = ["cw_version", "git_commit", "compiler", "platform_name", "platform_version",
                 "device_name", "device_version", "driver_version", "host", "date", "command",
                 "launches", "min_time_s", "max_time_s", "busy_calibration"]
FLOOR_FIELDS = ["trips", "one_way_us_mean", "one_way_us_median", "one_way_us_p90",
                "one_way_us_p99", "one_way_us_max"]
RECORD_FIELDS = ["kernel", "cpus", "workers", "strategy", "launches", "stopped_by",
                 "cpu_us_mean",
                 "cpu_us_median", "wall_us_mean", "wall_us_median", "wall_us_p99",
                 "overhead_us_median", "kernel_us_median", "wait_cpu_us_mean",
                 "wait_wall_us_mean", "cpu_per_wait_s"]
NUMERIC_FIELDS = [f for f in RECORD_FIELDS[4:] if f != "stopped_by"]
SD_FIELDS = ["cpu_us_sd", "wall_us_sd"]


def csv_list(text):
    return [x for x in text.split(",") if x]


def main():
    ap = argparse.ArgumentParser(description="Check a cw-bench JSON result file.")
    ap.add_argument("json_file")
    ap.add_argument("--strategies", type=csv_list, help="expected strategies (default: header)")
    ap.add_argument("--configs", type=csv_list, help="expected configs, e.g. 1,all (default: header)")
    ap.add_argument("--kernels", type=csv_list, help="expected kernels (default: header)")
    ap.add_argument("--driver-models", type=lambda t: t.split(";"),
                    help="expected driver models, ';'-separated since a model's parameters "
                         "take commas (default: header)")
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
    if "driver_models" in header and not isinstance(header["driver_models"], list):
        problems.append("header 'driver_models' is not a list")
    header_models = [m.get("name") for m in header.get("driver_models") or []
                     if isinstance(m, dict)]
    models = args.driver_models or header_models or ["pocl3"]
    for name, lst in (("strategies", strategies), ("configs", configs), ("kernels", kernels)):
        if not lst:
            problems.append(f"no {name} expected (none given and none in the header)")

    def config_matches(rec, want):
        return str(rec.get("config")) == str(want) or str(rec.get("cpus")) == str(want)

    def model_of(rec):
        return rec.get("driver_model", "pocl3")

    for i, rec in enumerate(results):
        if not isinstance(rec, dict):
            problems.append(f"results[{i}] is not an object")
            continue
        where = (f"results[{i}] ({rec.get('kernel')}, {model_of(rec)}, {rec.get('config')}, "
             f"{rec.get('strategy')})")
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
        # A standard deviation needs two launches: null below that.
        for key in SD_FIELDS:
            v, n = rec.get(key, "absent"), rec.get("launches")
            if v == "absent":
                problems.append(f"{where}: lacks '{key}'")
            elif isinstance(n, int) and n < 2 and v is not None:
                problems.append(f"{where}: '{key}' is {v!r} for {n} launch")
            elif isinstance(n, int) and n >= 2 and (not isinstance(v, (int, float))
                                                    or isinstance(v, bool)
                                                    or not math.isfinite(v) or v < 0):
                problems.append(f"{where}: '{key}' is not a valid number: {v!r}")
        if rec.get("ok") is False:
            problems.append(f"{where}: result verification failed")
        if header_models and model_of(rec) not in header_models:
            problems.append(f"{where}: driver model {model_of(rec)!r} is not in the header's "
                            f"{header_models}")

    # Calibration: every busy size says whether its target was reached.
    for i, cal in enumerate(header.get("busy_calibration") or []):
        if not isinstance(cal, dict) or "reached" not in cal or "kernel" not in cal:
            problems.append(f"busy_calibration[{i}] lacks 'kernel' or 'reached'")

    # The floor: one entry per config with finite one-way figures, and the
    # cooperative ratio present (a number, or null when it cannot be formed).
    floors = doc.get("floor")
    if not isinstance(floors, list):
        problems.append("lacks the 'floor' array")
        floors = []
    for i, fl in enumerate(floors):
        if not isinstance(fl, dict):
            problems.append(f"floor[{i}] is not an object")
            continue
        for key in FLOOR_FIELDS:
            v = fl.get(key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) \
                    or v <= 0:
                problems.append(f"floor[{i}]: '{key}' is not a positive number: {v!r}")
        if "cooperative_overhead_to_floor" not in fl:
            problems.append(f"floor[{i}] lacks 'cooperative_overhead_to_floor'")
    for m in models:
        for c in configs:
            if not any(config_matches(fl, c) and model_of(fl) == m
                       for fl in floors if isinstance(fl, dict)):
                problems.append(f"no floor for driver model {m}, config {c}")

    valid = [r for r in results if isinstance(r, dict)]
    for k in kernels:
        for m in models:
            for c in configs:
                for s in strategies:
                    hits = [r for r in valid if r.get("kernel") == k and r.get("strategy") == s
                            and model_of(r) == m and config_matches(r, c)]
                    if not hits:
                        problems.append(f"missing record: kernel {k}, driver model {m}, "
                                        f"config {c}, strategy {s}")

    if problems:
        print(f"{args.json_file}: {len(problems)} problem(s):")
        for p in problems:
            print(f"  {p}")
        return 1
    print(f"{args.json_file}: ok ({len(results)} records: {len(kernels)} kernels x "
          f"{len(models)} driver models ({', '.join(models)}) x {len(configs)} configs x "
          f"{len(strategies)} strategies expected)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
