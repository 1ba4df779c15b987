#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Count the file crossings of a traced wait (run.sh): every call from one
src/ unit into another (a unit is NAME.c with NAME.h), and the returns to a
unit already left (a call into a unit entered before in the same wait).
The second count looks at the rooms of layer 6 only (ROOMS): calls from a
room into another room, nearer frames of lower layers skipped.
Usage: count.py EXE TRACE ROOM,ROOM,...
"""
import pathlib
import subprocess
import sys


def main():
    exe, trace, rooms = sys.argv[1], sys.argv[2], set(sys.argv[3].split(","))
    rows = [line.split() for line in open(trace)]
    addrs = sorted({r[2] for r in rows})
    out = subprocess.run(["addr2line", "-f", "-e", exe] + addrs, capture_output=True,
                         text=True, check=True).stdout.split("\n")
    where = {a: (out[2 * i], out[2 * i + 1].split(":")[0]) for i, a in enumerate(addrs)}
    for label, only in (("src units", None), ("layer-6 rooms", rooms)):
        seen, stack, lines = set(), [], []
        crossings = again = 0
        for _, depth, addr in rows:
            depth = int(depth)
            fn, path = where[addr]
            if "/src/" not in path:
                continue
            unit = pathlib.Path(path).stem.replace("_internal", "")
            while stack and stack[-1][0] >= depth:
                stack.pop()
            if only is None:
                caller = stack[-1][1] if stack else None
            else:
                caller = next((u for _, u in reversed(stack) if u in only), None)
            if caller and caller != unit and (only is None or unit in only):
                crossings += 1
                back = unit in seen
                again += back
                lines.append(f"{caller} -> {unit}: {fn}{'   (again)' if back else ''}")
            if only is None or unit in only:
                seen.add(unit)
            stack.append((depth, unit))
        print(f"--- {label}")
        print("\n".join(lines))
        print(f"{label}: {crossings} crossings, {again} returns to a unit already left")


if __name__ == "__main__":
    main()
