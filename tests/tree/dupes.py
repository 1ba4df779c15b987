#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A small copy-paste detector: report every run of N or more code lines that
stands in two places of the given folders (C sources and headers).

Lines are compared after folding white space; blank lines, comment lines and
lines of lone punctuation ("}", "};") are skipped, so a repeated run is code
that says the same thing twice. Exit status 1 when any run repeats.
Usage: dupes.py N DIR...
"""
import pathlib
import re
import sys


def code_lines(path):
    """(line number, folded text) of the lines that count."""
    out = []
    in_comment = False
    for no, raw in enumerate(path.read_text(errors="replace").splitlines(), 1):
        line = raw.strip()
        if in_comment:
            if "*/" in line:
                in_comment = False
                line = line.split("*/", 1)[1].strip()
            else:
                continue
        if line.startswith("/*") and "*/" not in line:
            in_comment = True
            continue
        line = re.sub(r"/\*.*?\*/", "", line)
        line = re.sub(r"//.*", "", line).strip()
        if not line or re.fullmatch(r"[{}();,\s]*", line) or line.startswith("#include"):
            continue
        out.append((no, " ".join(line.split())))
    return out


def main():
    n = int(sys.argv[1])
    files = sorted(p for d in sys.argv[2:] for p in pathlib.Path(d).rglob("*") if p.suffix in (".c", ".h"))
    seen = {}
    repeats = []
    for f in files:
        lines = code_lines(f)
        last_end = {}
        for i in range(len(lines) - n + 1):
            key = tuple(t for _, t in lines[i:i + n])
            here = (f, lines[i][0], lines[i + n - 1][0])
            first = seen.setdefault(key, here)
            if first is not here and not (first[0] == f and first[2] >= here[1]):
                # Report a long repeated run once, at its first window.
                if last_end.get(first[0]) != i - 1:
                    repeats.append((first, here))
                last_end[first[0]] = i
    for a, b in repeats:
        print(f"repeated: {a[0]}:{a[1]}-{a[2]} ~ {b[0]}:{b[1]}-{b[2]}")
    print(f"duplicates: {len(files)} files, {len(repeats)} repeated runs of {n}+ lines")
    return 1 if repeats else 0


if __name__ == "__main__":
    sys.exit(main())
