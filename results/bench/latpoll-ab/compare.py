#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per one-CPU cell of saxpy and busy-1ms: blocking's, cooperative's, poll's
and auto-latency's added latency (median) and CPU per launch (median, mean,
90th percentile) and the command's run time (median), from the four runs'
JSON (gzipped) in this folder, in the order they ran."""
import gzip
import json
import pathlib

here = pathlib.Path(__file__).resolve().parent
for name in ["main-1", "latpoll-1", "main-2", "latpoll-2"]:
    with gzip.open(here / (name + ".json.gz"), "rt") as f:
        d = json.load(f)
    for r in d["results"]:
        if r["config"] == "1" and r["kernel"] in ("saxpy", "busy-1ms") and \
                r["strategy"] in ("blocking", "cooperative", "poll", "auto-latency"):
            print("%-10s %-6s %-9s %-13s latency %6.1f us  CPU median %7.1f mean %7.1f p90 %7.1f us"
                  "  run time %7.1f us  launches %d" % (
                      name, r["driver_model"], r["kernel"], r["strategy"],
                      r["added_latency_us_median"], r["cpu_us_median"], r["cpu_us_mean"],
                      r["cpu_us_p90"], r["kernel_us_median"], r["launches"]))
