#!/usr/bin/env bash
# Builds a ladder_bench binary with pingpong.cu + ladder.cu recompiled under -D switches and
# every other object taken from build-kchecks, so variants of rung 6 can be timed side by side
# in one device call (docs/benchmarks.md, "Session 2"). Build build-kchecks first (ninja), then:
#   scripts/device/ladder-variants.sh NAME [-DWS_PP_SKEW=0] [-DWS_PP_CLUSTER=1] [-DWS_PP_TMA_STORE=0]
# writes build-kchecks/var/NAME/ladder_bench (carried with build-kchecks); on the device:
#   for v in A B A B; do build-kchecks/var/$v/ladder_bench --rung cooperative --rung pingpong; done
set -euo pipefail
cd "$(dirname "$0")/../.."
K=build-kchecks
name=$1
shift
D=$K/var/$name
mkdir -p "$D"
NV=(/usr/local/cuda/bin/nvcc -O3 -DNDEBUG -gencode=arch=compute_90a,code=sm_90a -Xcompiler=-fPIC -lineinfo
    --expt-relaxed-constexpr -std=c++17 -Ikernels/include -Ikernels/src "$@")
"${NV[@]}" -Xptxas -v -c kernels/src/pingpong.cu -o "$D/pingpong.o" 2> "$D/ptxas.log" &
"${NV[@]}" -c kernels/src/ladder.cu -o "$D/ladder.o" &
wait
grep -E "spill|C75" "$D/ptxas.log" | sort | uniq -c || true
O=$K/kernels/src/CMakeFiles/warpstage_ladder.dir
rm -f "$D/libladder.a"
ar qc "$D/libladder.a" "$D/ladder.o" $O/sync.cu.o $O/tma_sync.cu.o $O/multistage.cu.o $O/warp_specialized.cu.o \
    $O/cooperative.cu.o "$D/pingpong.o"
/usr/local/cuda/bin/nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o "$D/ladder_bench" \
    $K/tests/bench/CMakeFiles/ladder_bench.dir/ladder_bench.cu.o $K/tests/kernels/libwarpstage_ladder_testutil.a \
    "$D/libladder.a" -lcublas -lcublasLt -lcuda
rm -f "$D"/*.o "$D/libladder.a"
echo "built $D/ladder_bench"
