#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configure, build and install cw from a read-only copy of its source, as a
# packager's unpacked tarball or a FetchContent cache is: nothing may be
# written into the source tree, and the generated cw/version.h must still
# reach the build and the install. Run as root (CI), the configure and build
# run as the unprivileged user nobody, for whom the copy really is read-only;
# as another user, the copy's write bits are simply removed.
# Usage: tests/consumer/readonly.sh CW_SOURCE_DIR WORK_DIR [C_COMPILER]
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
cc=${3:-cc}

fail() {
    echo "readonly: $*" >&2
    exit 1
}

as_user=()
if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv >/dev/null || fail "setpriv (util-linux) is needed to drop root"
    as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi
# A previous run left a tree without write bits: give them back to remove it.
[ ! -e "$work" ] || chmod -R u+w "$work"
rm -rf "$work"
mkdir -p "$work"
# Run as root from a checkout that nobody cannot reach (under /root, say),
# the copy and the build go to a scratch folder that nobody can.
if [ ${#as_user[@]} -gt 0 ] && ! "${as_user[@]}" test -x "$work"; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/cw-readonly.XXXXXX")
    trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
fi
mkdir -p "$work/src" "$work/out"
# The tracked files only (what a release tarball holds), or the whole tree
# outside a git checkout, without any build folder.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z) | (cd "$src" && xargs -0 cp --parents -t "$work/src")
else
    (cd "$src" && tar --exclude='./build*' -cf - .) | (cd "$work/src" && tar -xf -)
fi
before=$(cd "$work/src" && find . | LC_ALL=C sort | sha256sum)
chmod -R a-w "$work/src"

if [ ${#as_user[@]} -gt 0 ]; then
    chown -R nobody "$work/out"
    chmod a+rx "$work"
    # The copy is unwritable to nobody, whatever its bits say to root.
    if "${as_user[@]}" sh -c "touch '$work/src/x'" 2>/dev/null; then
        fail "the unprivileged user can write into the read-only copy"
    fi
fi

# Tests off: what a packager builds and installs (library, tools, benchmark),
# without cmocka or Python in the way.
"${as_user[@]}" env HOME="$work/out" cmake -S "$work/src" -B "$work/out/build" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_INSTALL_PREFIX="$work/out/prefix" \
    -DCW_BUILD_TESTS=OFF >"$work/out/configure.log" 2>&1 ||
    { cat "$work/out/configure.log" >&2; fail "configure failed on a read-only source"; }
"${as_user[@]}" env HOME="$work/out" cmake --build "$work/out/build" -j2 \
    >"$work/out/build.log" 2>&1 || { cat "$work/out/build.log" >&2; fail "build failed"; }
"${as_user[@]}" env HOME="$work/out" cmake --install "$work/out/build" \
    >"$work/out/install.log" 2>&1 || { cat "$work/out/install.log" >&2; fail "install failed"; }

after=$(cd "$work/src" && find . | LC_ALL=C sort | sha256sum)
[ "$before" = "$after" ] || fail "the source tree changed"
version=$(sed -n 's/^#define CW_VERSION_STRING "\(.*\)"$/\1/p' "$work/out/prefix/include/cw/version.h")
want=$(sed -n 's/^project(cw VERSION \([0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] && [ "$version" = "$want" ] ||
    fail "installed cw/version.h says '$version', the project is $want"
chmod -R u+w "$work/src"
echo "readonly: configured, built and installed $version from a read-only source" \
    "as $(${as_user[@]} id -un), the source untouched"
