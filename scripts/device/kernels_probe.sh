#!/usr/bin/env bash
# Kernel engineer's probe: build the ladder + kernels/src/probe/ladder_probe.cu with nvcc alone
# (no CMake, so it works while other parts of the tree are mid-edit), then (with --run) run
# the correctness/timing probe. Build dir: build-probe/ (ignored; carry it to the device).
#   scripts/device/kernels_probe.sh build
#   scripts/device/kernels_probe.sh run [--time] SHAPES...
set -euo pipefail
cd "$(dirname "$0")/../.."
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
OUTDIR=${OUTDIR:-build-probe}
EXTRA=${EXTRA:-}
mode=${1:-build}; shift || true
if [ "$mode" = build ]; then
    mkdir -p $OUTDIR
    objs=()
    for f in ${FILES:-ladder sync tma_sync multistage warp_specialized cooperative pingpong probe/ladder_probe}; do
        o=$OUTDIR/$(basename $f).o
        $NVCC -std=c++17 -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ikernels/src \
            $EXTRA -Xptxas -v -c kernels/src/$f.cu -o $o 2> $OUTDIR/$(basename $f).ptxas.log &
        objs+=($o)
    done
    wait
    grep -h -E "C75|error" $OUTDIR/*.ptxas.log || true
    $NVCC -gencode=arch=compute_90a,code=sm_90a -o $OUTDIR/ladder_probe "${objs[@]}" -lcublas
    echo "built $OUTDIR/ladder_probe"
else
    $OUTDIR/ladder_probe "$@"
fi
