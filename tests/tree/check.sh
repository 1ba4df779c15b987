#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Habits of the tree, checked on every CI run:
#   format      clang-format --dry-run -Werror on every C and C++ file
#   spdx        an SPDX-License-Identifier line in every source, header,
#               script and build file
#   duplicates  no run of six or more lines repeated in src/ (dupes.py)
#   layers      no include runs up the layers of docs/design.md (layers.py)
#   docs        the user-facing docs say what the code does, and their links
#               resolve (docs_user.py)
# Usage: tests/tree/check.sh format|spdx|duplicates|layers|docs [PYTHON]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
files() { # the tracked files, or every file outside build folders without git
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files --cached --others --exclude-standard
    else
        find . -type f -not -path './build*' -not -path './.git/*' -not -path './out/*' | sed 's|^\./||'
    fi
}
case "${1:-}" in
format)
    command -v clang-format >/dev/null || { echo "no clang-format (apt-get install clang-format)" >&2; exit 1; }
    n=0 bad=0
    while IFS= read -r f; do
        n=$((n + 1))
        clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || { echo "not formatted: $f" >&2; bad=$((bad + 1)); }
    done < <(files | grep -E '\.(c|h|cpp)$')
    echo "format: $n files, $bad not formatted"
    [ "$bad" -eq 0 ]
    ;;
spdx)
    n=0 bad=0
    while IFS= read -r f; do
        n=$((n + 1))
        head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT' || { echo "no SPDX line: $f" >&2; bad=$((bad + 1)); }
    done < <(files | grep -E '(\.(c|h|cpp|sh|py|cmake|in|cl|gp|pml|1|3)|CMakeLists\.txt|/run)$')
    echo "spdx: $n files, $bad without an SPDX-License-Identifier line"
    [ "$bad" -eq 0 ]
    ;;
duplicates)
    py=${2:-python3}
    "$py" tests/tree/dupes.py 6 src
    ;;
layers)
    py=${2:-python3}
    "$py" tests/tree/layers.py .
    ;;
docs)
    py=${2:-python3}
    "$py" tests/tree/docs_user.py .
    ;;
*)
    echo "usage: $0 format|spdx|duplicates|layers|docs [PYTHON]" >&2
    exit 2
    ;;
esac
