#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Python binding as a user gets it: a fresh venv (--system-site-packages,
# for the distribution's pyopencl, numpy and pytest), an offline
# `pip install --no-build-isolation` of bindings/python, then its pytest
# suite run from outside the source tree, so that it tests the installed
# package (tests/test_api.py checks where cw was imported from).
#   build   the library of the build folder (LIBRARY, $<TARGET_FILE:cw>),
#           through CW_LIBRARY
#   prefix  `cmake --install` into a scratch prefix, CW_LIBRARY unset: an
#           import that finds the installed libcw-opencl.so.<major> through
#           the loader (LD_LIBRARY_PATH), then the tests that depend on
#           where the library and headers come from (test_api.py: found
#           through pkg-config, PKG_CONFIG_PATH to its cw-opencl.pc, and
#           waits with it; test_drift.py: the installed headers); the rest
#           of the suite tests the binding over the same library (build).
# Usage: tests/python/installed.sh build|prefix SOURCE_DIR BUILD_DIR WORK_DIR PYTHON LIBRARY
set -euo pipefail
mode=$1
src=$(cd "$2" && pwd)
build=$(cd "$3" && pwd)
work=$4
py=$5
library=$6

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
"$py" -m venv --system-site-packages "$work/venv"
vpy=$work/venv/bin/python
# From a copy: setuptools writes build/ and *.egg-info next to the package it
# builds, and a test must not write into the source tree.
cp -r "$src/bindings/python" "$work/package"
rm -rf "$work/package/build" "$work/package"/*.egg-info
# --no-index: nothing may come from a package index.
"$vpy" -m pip install -q --no-build-isolation --no-index --no-deps "$work/package"

cd "$work" # `python -m pytest` puts the working directory first on sys.path
unset PYTHONPATH CW_LIBRARY
export CW_EXPECT_INSTALLED=1 PYTHONDONTWRITEBYTECODE=1
tests=("$src/bindings/python/tests")
case "$mode" in
build)
    export CW_LIBRARY=$library CW_EXPECT_FOUND_BY=CW_LIBRARY
    export CW_INCLUDE_DIRS=$src/include:$build/include
    ;;
prefix)
    cmake --install "$build" --prefix "$work/prefix" >/dev/null
    pc=$(find "$work/prefix" -name cw-opencl.pc -path '*/pkgconfig/*' -print -quit)
    if [ -z "$pc" ]; then
        echo "cmake --install put no pkgconfig/cw-opencl.pc under $work/prefix" >&2
        exit 1
    fi
    pcdir=$(dirname "$pc")
    libdir=$(dirname "$pcdir")
    # The installed distribution's version, read without importing cw (which
    # needs the library): its major version is the soname's.
    version=$("$vpy" -c 'import importlib.metadata as m; print(m.version("cw-opencl"))')
    soname=libcw-opencl.so.${version%%.*}
    # The loader route first, with pkg-config out of the way.
    found=$(LD_LIBRARY_PATH=$libdir PKG_CONFIG_PATH=/nonexistent PKG_CONFIG_LIBDIR=/nonexistent \
        "$vpy" -c 'import cw; print(cw.library_found_by(), cw.library_path())')
    echo "through the loader: $found"
    if [ "$found" != "loader $soname" ]; then
        echo "expected 'loader $soname'" >&2
        exit 1
    fi
    export PKG_CONFIG_PATH=$pcdir CW_EXPECT_FOUND_BY=pkg-config
    export CW_INCLUDE_DIRS=$work/prefix/include
    tests=("$src/bindings/python/tests/test_api.py" "$src/bindings/python/tests/test_drift.py")
    ;;
*)
    echo "usage: $0 build|prefix SOURCE_DIR BUILD_DIR WORK_DIR PYTHON LIBRARY" >&2
    exit 2
    ;;
esac
# pytest exits 5 when it collected nothing: set -e fails the test then too.
"$vpy" -m pytest -q -p no:cacheprovider --rootdir "$work" "${tests[@]}"
if [ "$mode" = prefix ]; then
    # As a user points the tests at an installed library: CW_LIBRARY alone,
    # from which test_drift.py takes the headers of PREFIX/include.
    unset CW_INCLUDE_DIRS PKG_CONFIG_PATH
    export CW_LIBRARY=$libdir/$soname CW_EXPECT_FOUND_BY=CW_LIBRARY
    dirs=$(cd "$src/bindings/python/tests" &&
        "$vpy" -c 'import test_drift; print(":".join(test_drift.include_dirs()))')
    echo "CW_LIBRARY=$CW_LIBRARY: headers from $dirs"
    if [ "$dirs" != "$work/prefix/include" ]; then
        echo "expected the headers of $work/prefix/include" >&2
        exit 1
    fi
    "$vpy" -m pytest -q -p no:cacheprovider --rootdir "$work" \
        "$src/bindings/python/tests/test_drift.py"
fi
