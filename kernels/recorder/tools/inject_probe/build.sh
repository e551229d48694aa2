#!/bin/bash
# Builds the injection probe into build-probe/ (ignored; carried to the device machine with carry: ["build-probe"]).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
out=${1:-$root/build-probe}
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
# libcupti.so.13 is found by soname at run time (ldconfig there, or whichever copy the process already loaded).
g++ -O2 -std=c++17 -shared -fPIC -fvisibility=hidden -I"$cuda/include" "$here/inject.cpp" \
    -L"$cuda/lib" -L"$cuda/lib64" -L"$cuda/extras/CUPTI/lib64" -lcupti -ldl -lpthread -o "$out/libwsinject.so"
nvcc -O2 -std=c++17 -arch=sm_90a -I"$cuda/include" "$here/nvtx_app.cu" -ldl -lpthread -o "$out/nvtx_app"
echo "built into $out"
