#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Lint and render cw's man pages: every *.1 and *.3 in this folder.
#  1. groff -man -ww -z must print nothing (every warning enabled). Alias
#     pages (".so man3/NAME.3") are resolved from a scratch directory whose
#     man1/ and man3/ link back to this folder, as man(1) resolves them from
#     the top of a manual tree.
#  2. Each page that is not an alias must render with man -l, with no
#     message on standard error.
# Prints one line "N passed, M failed" and exits 1 if any page failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$here" "$tmp/man1"
ln -s "$here" "$tmp/man3"

shopt -s nullglob
pages=("$here"/*.1 "$here"/*.3)
passed=0
failed=0

# An alias page holds nothing but comments and one .so request.
is_alias() {
    local body
    body=$(grep -v -e '^\.\\"' -e '^[[:space:]]*$' "$1" || true)
    [[ $body =~ ^\.so[[:space:]]+[^[:space:]]+$ ]]
}

for page in "${pages[@]}"; do
    name=$(basename "$page")
    ok=1
    if ! out=$(cd "$tmp" && groff -man -ww -z "$page" 2>&1) || [[ -n $out ]]; then
        echo "FAIL $name: groff -man -ww -z:" >&2
        [[ -n $out ]] && printf '%s\n' "$out" | sed 's/^/    /' >&2
        ok=0
    fi
    if [[ $ok == 1 ]] && ! is_alias "$page"; then
        errfile="$tmp/stderr"
        if ! rendered=$(cd "$tmp" && MANWIDTH=80 MANPAGER=cat PAGER=cat LC_ALL=C.UTF-8 \
                man -l "$page" 2>"$errfile") || [[ -s $errfile ]] || [[ -z $rendered ]]; then
            echo "FAIL $name: man -l does not render it cleanly:" >&2
            sed 's/^/    /' "$errfile" >&2
            ok=0
        fi
    fi
    if [[ $ok == 1 ]]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
