#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The figures a README quotes are the kept files' own: every line of each
# fenced block after "<!-- quoted: FILE -->" (FILE relative to the source
# tree) must be a whole line of FILE.
# Usage: quoted.sh SOURCE_DIR README
set -euo pipefail
root=$1
readme=$2
blocks=0 lines=0
while IFS= read -r file; do
    blocks=$((blocks + 1))
    [ -f "$root/$file" ] || { echo "quoted: $file (quoted in $readme) does not exist" >&2; exit 1; }
    while IFS= read -r line; do
        lines=$((lines + 1))
        grep -qxF -- "$line" "$root/$file" || {
            echo "quoted: '$line' is not a line of $file" >&2
            exit 1
        }
    done < <(awk -v want="<!-- quoted: $file -->" '
        $0 == want { found = 1; next }
        found == 1 && /^```/ { found = 2; next }
        found == 2 && /^```/ { exit }
        found == 2 { print }' "$readme")
done < <(sed -n 's/^<!-- quoted: \(.*\) -->$/\1/p' "$readme")
[ "$blocks" -gt 0 ] || { echo "quoted: $readme quotes nothing" >&2; exit 1; }
echo "quoted: $lines lines in $blocks blocks match their files"
