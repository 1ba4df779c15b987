#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a real NVIDIA GPU's OpenCL driver does, for docs/driver-models.md's
# nvidia model: on a machine with an NVIDIA GPU (at most about 5 minutes),
#   1. find NVIDIA's OpenCL library (libnvidia-opencl.so.1, under
#      /usr/lib/x86_64-linux-gnu, /usr/local/nvidia or through ldconfig),
#   2. give the ICD loader a vendors folder with an .icd for it only
#      (OCL_ICD_VENDORS), so no other driver is loaded,
#   3. bring the ICD loader (ocl-icd-libopencl1) and cw's build along when
#      they are missing: apt-get as root, and CMake for the build,
#   4. run cw-cbdelay (how late callbacks come, what the driver's own wait
#      costs) and cw-bench --quick with the latency and busy kernels.
# Everything it prints is also written to the output folder.
# Usage: bench/gpu-check.sh [--build DIR] [--out DIR] [--icd-lib PATH]
#   --build DIR    a cw build with bench/cw-bench and bench/cw-cbdelay; built
#                  from this tree into DIR (default build-gpu) when missing
#   --out DIR      results (default gpu-check-out)
#   --icd-lib PATH the OpenCL driver library to use instead of NVIDIA's (to
#                  try the script on another driver, e.g. PoCL's)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-gpu
out=$PWD/gpu-check-out
icd_lib=
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$(realpath -m "$2"); shift 2 ;;
    --out) out=$(realpath -m "$2"); shift 2 ;;
    --icd-lib) icd_lib=$(realpath -m "$2"); shift 2 ;;
    -h | --help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# 1. The driver library.
if [ -z "$icd_lib" ]; then
    for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
        [ -e "$d/libnvidia-opencl.so.1" ] && { icd_lib=$d/libnvidia-opencl.so.1; break; }
    done
fi
if [ -z "$icd_lib" ] && command -v ldconfig >/dev/null; then
    icd_lib=$(ldconfig -p | awk '/libnvidia-opencl\.so\.1 /{print $NF; exit}')
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

# 3. The ICD loader and cw's build.
loader_found() { ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1 ' || [ -e /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 ]; }
loader_found || apt_install ocl-icd-libopencl1
if [ ! -x "$build/bench/cw-bench" ] || [ ! -x "$build/bench/cw-cbdelay" ]; then
    need=()
    command -v cc >/dev/null || need+=(gcc)
    command -v make >/dev/null || need+=(make)
    command -v cmake >/dev/null || need+=(cmake)
    [ -e /usr/include/CL/cl.h ] || need+=(opencl-c-headers)
    [ -e /usr/lib/x86_64-linux-gnu/libOpenCL.so ] || need+=(ocl-icd-opencl-dev)
    [ ${#need[@]} = 0 ] || apt_install "${need[@]}"
    cmake_version=$(cmake --version | awk 'NR==1{print $3}')
    printf '%s\n3.25\n' "$cmake_version" | sort -V -C 2>/dev/null && [ "$cmake_version" != 3.25 ] &&
        die "CMake $cmake_version is older than 3.25, which cw needs (pip install cmake, or --build DIR with a build made elsewhere)"
    say "building cw into $build"
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCW_BUILD_TESTS=OFF -DCW_BUILD_TOOLS=OFF \
        -DCW_INSTALL=OFF >>"$log" 2>&1 || die "cmake failed (see $log)"
    cmake --build "$build" -j"$(nproc)" --target cw-bench cw-cbdelay >>"$log" 2>&1 || die "build failed (see $log)"
fi

# 4. The measurements. The loader sees only this driver, so the first
# platform is the GPU's.
say "== cw-cbdelay"
timeout 90 "$build/bench/cw-cbdelay" --launches 50 --busy-ms 10 --json "$out/cbdelay.json" 2>&1 | tee -a "$log" ||
    say "gpu-check: cw-cbdelay failed"
say "== cw-cbdelay, 100 ms kernels"
timeout 90 "$build/bench/cw-cbdelay" --launches 10 --busy-ms 100 --json "$out/cbdelay-100ms.json" 2>&1 | tee -a "$log" ||
    say "gpu-check: cw-cbdelay failed"
say "== cw-bench --quick --kernels latency,busy"
timeout 180 "$build/bench/cw-bench" --quick --kernels latency,busy --json "$out/bench-quick.json" 2>&1 | tee -a "$log" ||
    say "gpu-check: cw-bench failed or ran past 180 s"
say "gpu-check: done in $(($(date +%s) - start)) s; results in $out"
