#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layers of docs/design.md, checked from the include lines of src/ and
include/: a file may include its own layer and the ones below. Layer 6 has
rooms of its own, 6.0 to 6.3, and a room may include only its own and lower
ones. An include that runs up the stack must say why on its line
("up: <reason>"), and there may be at most two. Files of layer 0-5 must not
include OpenCL or cw/wait.h.
Usage: layers.py ROOT
"""
import pathlib
import re
import sys

# Layer of each file, by its name without the extension: src/NAME, and
# cw/NAME for the public headers in include/cw/ (cw for include/cw.h).
LAYERS = {
    "base": 0, "cw/common": 0, "cw/version": 0,
    "relax": 1,
    "spinlock": 2,
    "parker": 3, "cw/parker": 3, "parker_internal": 3,
    "cond": 4,
    "baseline": 4.5,
    "completion": 5,
    # Layer 6, room by room. 6.0: what an event says (status) and the
    # declarations every room shares (the public wait header, statistics).
    "status": 6.0, "cw/wait": 6.0, "cw/stats": 6.0, "stats": 6.0, "stats_internal": 6.0,
    "driver": 6.0, "learned": 6.0, "cw/learned": 6.0, "platform": 6.0, "probe": 6.0, "driver_record": 6.0,
    # auto's policy: pure functions over what is known, and its figures.
    "policy": 6.0, "tunables": 6.0,
    # 6.1: the event table and the looks at an event.
    "table": 6.1, "table_record": 6.1,
    # 6.2: the strategy table, the plan of one wait, the estimates.
    "strategy": 6.2, "estimate": 6.2, "facts": 6.2,
    # 6.3: the front doors.
    "wait": 6.3, "ways": 6.3, "ways_poll": 6.3, "ways_callback": 6.3, "learn": 6.3,
    "waitmany": 6.3, "cw/waitmany": 6.3, "notify": 6.3, "notify_checks": 6.3, "notify_internal": 6.3, "cw/notify": 6.3,
    "advice": 6.3, "cw/advice": 6.3,
    "cw": 6.3,
}


def key_of(path, root):
    """The LAYERS key of a file of the tree."""
    rel = path.relative_to(root)
    if rel.parts[0] == "include":
        return "cw/" + path.stem if len(rel.parts) > 2 else path.stem
    return path.stem
INCLUDE = re.compile(r'#include\s+[<"]([^>"]+)[>"](.*)')


def main():
    root = pathlib.Path(sys.argv[1])
    files = sorted(list((root / "src").glob("*.[ch]")) + list((root / "include").rglob("*.h")))
    up, bad = [], []
    for f in files:
        mine = LAYERS.get(key_of(f, root))
        if mine is None:
            bad.append(f"{f}: no layer assigned (add it to tests/tree/layers.py)")
            continue
        for no, line in enumerate(f.read_text().splitlines(), 1):
            m = INCLUDE.match(line.strip())
            if not m:
                continue
            target, rest = m.group(1), m.group(2)
            name = target[: -len(pathlib.Path(target).suffix)] if target.startswith("cw/") else pathlib.Path(target).stem
            if mine < 6 and (target.startswith("CL/") or target == "cw/wait.h"):
                bad.append(f"{f}:{no}: layer {mine} includes {target}")
            theirs = LAYERS.get(name) if not target.startswith("CL/") else 6
            if theirs is None or theirs <= mine:
                continue
            if "up:" not in rest:
                bad.append(f"{f}:{no}: layer {mine} includes {target} (layer {theirs}) without a reason")
            up.append(f"{f}:{no}: {target}")
    for line in bad:
        print(line)
    print(f"layers: {len(files)} files, {len(up)} includes up the stack (at most 2)")
    for line in up:
        print("  up " + line)
    return 1 if bad or len(up) > 2 else 0


if __name__ == "__main__":
    sys.exit(main())
