#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a real NVIDIA GPU's OpenCL driver does, for docs/driver-models.md's
# nvidia model: on a machine with an NVIDIA GPU (one run in at most 5 minutes),
#   1. find NVIDIA's OpenCL library (libnvidia-opencl.so.1, under
#      /usr/lib/x86_64-linux-gnu, /usr/local/nvidia or through ldconfig),
#      and stop at once when there is none,
#   2. give the ICD loader a vendors folder with an .icd for it only
#      (OCL_ICD_VENDORS), so no other driver is loaded,
#   3. take the ICD loader and cw's build from the carry folder beside this
#      script (bench/gpu-carry, made by --make-carry on a Debian machine)
#      when it is there, since a GPU machine may reach no package source;
#      else apt-get them as root, and build cw with CMake,
#   4. run cw-cbdelay (how late callbacks come, what the driver's own wait
#      costs) and cw-bench --quick with the latency and busy kernels.
# Everything it prints is also written to the output folder.
# Usage: bench/gpu-check.sh [--build DIR] [--out DIR] [--icd-lib PATH]
#        bench/gpu-check.sh --make-carry
#   --make-carry   on a Debian machine with cw's build dependencies: build cw
#                  and fill bench/gpu-carry with an installed cw-bench and
#                  cw-cbdelay, libcw-opencl, the ICD loader (libOpenCL.so.1)
#                  and the OpenCL headers, to carry to the GPU machine
#   --build DIR    a cw build with bench/cw-bench and bench/cw-cbdelay, used
#                  instead of the carry folder; built from this tree into DIR
#                  (default build-gpu) when neither is there
#   --out DIR      results (default gpu-check-out)
#   --icd-lib PATH the OpenCL driver library to use instead of NVIDIA's (to
#                  try the script on another driver, e.g. PoCL's)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=
carry=$root/bench/gpu-carry
out=$PWD/gpu-check-out
icd_lib=
make_carry=0
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$(realpath -m "$2"); shift 2 ;;
    --out) out=$(realpath -m "$2"); shift 2 ;;
    --icd-lib) icd_lib=$(realpath -m "$2"); shift 2 ;;
    --make-carry) make_carry=1; shift ;;
    -h | --help) sed -n '3,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
log=$out/gpu-check.txt
: >"$log"
say() { echo "$*" | tee -a "$log"; }
die() { say "gpu-check: $*"; exit 1; }
start=$(date +%s)

apt_install() { # package...: install with apt-get when root, else say what is missing
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing: $*"
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >>"$log" 2>&1 ||
            { apt-get update >>"$log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >>"$log" 2>&1; } ||
            die "apt-get install $* failed (see $log)"
    else
        die "missing: $* (install them, or run as root on Debian/Ubuntu)"
    fi
}

# build_cw DIR: cw's Release build with the benchmark into DIR, installing
# what building needs when it is missing and this is root on Debian.
build_cw() {
    local dir=$1 need=()
    command -v cc >/dev/null || need+=(gcc)
    command -v make >/dev/null || need+=(make)
    command -v cmake >/dev/null || need+=(cmake)
    [ -e /usr/include/CL/cl.h ] || need+=(opencl-c-headers)
    [ -e /usr/lib/x86_64-linux-gnu/libOpenCL.so ] || need+=(ocl-icd-opencl-dev)
    [ ${#need[@]} = 0 ] || apt_install "${need[@]}"
    local cmake_version
    cmake_version=$(cmake --version | awk 'NR==1{print $3}')
    printf '%s\n3.25\n' "$cmake_version" | sort -V -C 2>/dev/null && [ "$cmake_version" != 3.25 ] &&
        die "CMake $cmake_version is older than 3.25, which cw needs (--make-carry on a machine with a newer one)"
    say "building cw into $dir"
    cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCW_BUILD_TESTS=OFF -DCW_BUILD_TOOLS=OFF \
        >>"$log" 2>&1 || die "cmake failed (see $log)"
    cmake --build "$dir" -j"$(nproc)" >>"$log" 2>&1 || die "build failed (see $log)"
}

# The carry folder: an installed cw-bench (it finds its kernels and
# libcw-opencl relative to its bin/), cw-cbdelay beside it, the ICD loader
# and the headers. The loader is the one thing a bare GPU machine may lack
# that a program here links; the headers are for building there if need be.
if [ "$make_carry" = 1 ]; then
    dir=${build:-$root/build-gpu}
    build_cw "$dir"
    rm -rf "$carry"
    cmake --install "$dir" --prefix "$carry" >>"$log" 2>&1 || die "cmake --install failed (see $log)"
    cp "$dir/bench/cw-cbdelay" "$carry/bin/"
    loader=$(ldconfig -p | awk '!p && /libOpenCL\.so\.1 .*x86-64/ {p = $NF} END {print p}')
    [ -n "$loader" ] || die "no ICD loader (libOpenCL.so.1) here to carry: apt-get install ocl-icd-libopencl1"
    mkdir -p "$carry/lib" "$carry/include"
    cp -L "$loader" "$carry/lib/libOpenCL.so.1"
    cp -r /usr/include/CL "$carry/include/"
    say "carry folder: $carry ($(du -sh "$carry" | cut -f1)); carry bench/gpu-carry to the GPU machine"
    exit 0
fi

# 1. The driver library.
if [ -z "$icd_lib" ]; then
    for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
        [ -e "$d/libnvidia-opencl.so.1" ] && { icd_lib=$d/libnvidia-opencl.so.1; break; }
    done
fi
if [ -z "$icd_lib" ] && command -v ldconfig >/dev/null; then
    icd_lib=$(ldconfig -p | awk '!p && /libnvidia-opencl\.so\.1 .*x86-64/ {p = $NF} END {print p}')
fi
[ -n "$icd_lib" ] && [ -e "$icd_lib" ] || die "no libnvidia-opencl.so.1 (is NVIDIA's driver installed?)"
say "driver library: $icd_lib"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' | tee -a "$log" || true

# 2. A vendors folder with that driver only.
vendors=$out/vendors
mkdir -p "$vendors"
echo "$icd_lib" >"$vendors/gpu-check.icd"
export OCL_ICD_VENDORS=$vendors
unset OPENCL_LAYERS CW_DRIVER_MODEL

# 3. The ICD loader and cw's build: a --build given, else the carry folder,
# else apt-get and a build from this tree.
loader_found() { ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1 ' || [ -e /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 ]; }
if [ -z "$build" ] && [ -x "$carry/bin/cw-bench" ] && [ -x "$carry/bin/cw-cbdelay" ]; then
    say "cw's build and the ICD loader from $carry"
    bench=$carry/bin/cw-bench cbdelay=$carry/bin/cw-cbdelay
    # The carried loader goes last: one the machine has comes first.
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$carry/lib
    loader_found || say "ICD loader: the carried one"
else
    build=${build:-$root/build-gpu}
    loader_found || apt_install ocl-icd-libopencl1
    [ -x "$build/bench/cw-bench" ] && [ -x "$build/bench/cw-cbdelay" ] || build_cw "$build"
    bench=$build/bench/cw-bench cbdelay=$build/bench/cw-cbdelay
fi

# 4. The measurements, 270 s at most together, so that one run fits in 5
# minutes. The loader sees only this driver, so the first platform is the
# GPU's.
say "== cw-cbdelay"
timeout 60 "$cbdelay" --launches 50 --busy-ms 10 --json "$out/cbdelay.json" 2>&1 | tee -a "$log" ||
    say "gpu-check: cw-cbdelay failed"
say "== cw-cbdelay, 100 ms kernels"
timeout 60 "$cbdelay" --launches 10 --busy-ms 100 --json "$out/cbdelay-100ms.json" 2>&1 | tee -a "$log" ||
    say "gpu-check: cw-cbdelay failed"
say "== cw-bench --quick --kernels latency,busy"
timeout 150 "$bench" --quick --kernels latency,busy --json "$out/bench-quick.json" 2>&1 | tee -a "$log" ||
    say "gpu-check: cw-bench failed or ran past 150 s"
say "gpu-check: done in $(($(date +%s) - start)) s; results in $out"
