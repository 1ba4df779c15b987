#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layers of docs/design.md, checked from the include lines of src/ and
include/: a file may include its own layer and the ones below. An include
that runs up the stack must say why on its line ("up: <reason>"), and there
may be at most two. Files of layer 0-5 must not include OpenCL or cw/wait.h.
Usage: layers.py ROOT
"""
import pathlib
import re
import sys

# Layer of each file, by its name without the extension.
LAYERS = {
    "base": 0, "common": 0, "version": 0,
    "relax": 1,
    "spinlock": 2,
    "parker": 3,
    "cond": 4,
    "completion": 5,
    "clevent": 6, "strategy": 6, "estimate": 6, "wait": 6, "waitmany": 6, "notify": 6,
    "stats": 6, "stats_internal": 6, "cw": 6,
}
INCLUDE = re.compile(r'#include\s+[<"]([^>"]+)[>"](.*)')


def main():
    root = pathlib.Path(sys.argv[1])
    files = sorted(list((root / "src").glob("*.[ch]")) + list((root / "include").rglob("*.h")))
    up, bad = [], []
    for f in files:
        mine = LAYERS.get(f.stem)
        if mine is None:
            bad.append(f"{f}: no layer assigned (add it to tests/tree/layers.py)")
            continue
        for no, line in enumerate(f.read_text().splitlines(), 1):
            m = INCLUDE.match(line.strip())
            if not m:
                continue
            target, rest = m.group(1), m.group(2)
            name = pathlib.Path(target).stem
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
