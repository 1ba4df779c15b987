#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Lint and render cw's man pages.
#   check.sh                        the sources: every *.1 and *.3 here
#   check.sh TREE VERSION [DATE]    also the pages as the build makes them
#                                   (cmake/cw_man_pages.cmake): a manual tree
#                                   TREE with man1/ and man3/
# Each source page:
#  1. is a page, not a ".so" alias: aliases are the names of its NAME
#     section, which the build turns into links;
#  2. has a .TH whose date is "" and source "cw": the build writes its
#     date and "cw VERSION" there, so no version is ever typed by hand, and
#     man -l on the source shows no placeholder;
#  3. is clean under groff -man -ww -z (every warning enabled), and renders
#     with man -l with no message on standard error.
# Each page of TREE passes 3 too, and its .TH says "cw VERSION" and a date
# (DATE when given); each link in TREE points at a page in its own
# directory; every name of every NAME section is a page or a link; every
# function libcw.so exports (tests/abi/exports.txt) opens with man -M TREE.
# Prints one line "N passed, M failed" and exits 1 if any check failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tree=${1:-}
version=${2:-}
date=${3:-}
if [[ -n $tree && -z $version ]]; then
    echo "usage: $0 [TREE VERSION [DATE]]" >&2
    exit 2
fi
[[ -z $tree ]] || tree=$(cd "$tree" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MANWIDTH=80 MANPAGER=cat PAGER=cat LC_ALL=C.UTF-8

passed=0
failed=0
fail() { # name, what; the details on standard input
    echo "FAIL $1: $2" >&2
    sed 's/^/    /' >&2
    ok=0
}
tally() {
    if [[ $ok == 1 ]]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
}

# 3: groff and man -l, run from a scratch directory.
renders() { # page, name
    local out errfile="$tmp/stderr"
    if ! out=$(cd "$tmp" && groff -man -ww -z "$1" 2>&1) || [[ -n $out ]]; then
        fail "$2" "groff -man -ww -z:" <<<"$out"
    fi
    if ! out=$(cd "$tmp" && man -l "$1" 2>"$errfile") || [[ -s $errfile ]] || [[ -z $out ]]; then
        fail "$2" "man -l does not render it cleanly:" <"$errfile"
    fi
}

th_line() { grep -m1 '^\.TH ' "$1" || true; }

shopt -s nullglob
for page in "$here"/*.1 "$here"/*.3; do
    name=$(basename "$page")
    ok=1
    if grep -q '^\.so[[:space:]]' "$page"; then
        fail "$name" "an alias page (.so): list the name in its page's NAME section instead" </dev/null
    fi
    th=$(th_line "$page")
    if ! [[ $th =~ ^\.TH\ [^\ ]+\ [0-9]\ \"\"\ \"cw\"\  ]]; then
        fail "$name" "its .TH must carry the date \"\" and the source \"cw\" (the build fills in its own):" <<<"$th"
    fi
    [[ $ok == 1 ]] && renders "$page" "$name"
    tally
done

if [[ -n $tree ]]; then
    # The names each page documents, one "section name" a line.
    names_of() {
        awk '/^\.SH NAME/ { on = 1; next } /^\.SH / { on = 0 } on' "$1" |
            tr '\n' ' ' | sed 's/[[:space:]]\\-[[:space:]].*//; s/\\-/-/g' | tr ',' '\n' |
            sed 's/^[[:space:]]*//; s/[[:space:]]*$//' | sed '/^$/d'
    }
    npages=0
    for page in "$tree"/man1/*.1 "$tree"/man3/*.3; do
        name=${page#"$tree"/}
        ok=1
        if [[ -L $page ]]; then
            target=$(readlink "$page")
            if [[ $target == */* || ! -f $page || -L $(dirname "$page")/$target ]]; then
                fail "$name" "a link that is not to a page in its own directory: -> $target" </dev/null
            fi
            tally
            continue
        fi
        npages=$((npages + 1))
        th=$(th_line "$page")
        want="\"cw $version\""
        if ! [[ $th =~ ^\.TH\ [^\ ]+\ [0-9]\ ([0-9]{4}-[0-9]{2}-[0-9]{2})\ (\"[^\"]*\")\  ]] ||
            [[ ${BASH_REMATCH[2]} != "$want" ]] || [[ -n $date && ${BASH_REMATCH[1]} != "$date" ]]; then
            fail "$name" "its .TH does not carry ${date:-a date} and $want:" <<<"$th"
        fi
        renders "$page" "$name"
        section=${page##*.}
        while IFS= read -r alias; do
            if [[ ! -f $tree/man$section/$alias.$section ]]; then
                fail "$name" "$alias($section), in its NAME section, is neither a page nor a link" </dev/null
            fi
        done < <(names_of "$page")
        tally
    done
    [[ $npages -gt 0 ]] || {
        echo "FAIL: no pages in $tree" >&2
        failed=$((failed + 1))
    }
    # Every exported function has a page to open: man looks the name up in TREE.
    ok=1
    while IFS= read -r fn; do
        if ! out=$(man -M "$tree" 3 "$fn" 2>&1) || ! grep -q "$fn" <<<"$out"; then
            fail "man 3 $fn" "does not open a page from $tree:" <<<"$out"
        fi
    done < <(grep -v -e '^#' -e '^[[:space:]]*$' "$here/../../tests/abi/exports.txt")
    tally
fi

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
