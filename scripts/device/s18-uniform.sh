#!/usr/bin/env bash
# Session 18, call 1: the bulk copy's operands made warp-uniform for ptxas (session 17: about half of lce rung 4's
# tracing cost is the cp.async.bulk being in the consumer warps' code; in SASS each of the 90 inlined copies sat in a
# loop over the lanes' possibly different operands, R2UR x4 + BRA.U.ANY). Two switches (experiments):
#   uw  = -DWS_EXPERIMENT_UNIFORM_WARP: lce_body.cuh / pingpong_body.cuh take the warp index from one
#         __shfl_sync at kernel start (CUTLASS's canonical_warp_idx_sync), so the role branches are warp-uniform;
#   uni = uw + -DWS_TRACE_EXPERIMENT_UNIFORM: StagedWarp::begin computes the region in every lane and hands lane 0's
#         address and capacity to the warp with __shfl_sync -- the copies' operands are uniform: rung 4's traced
#         <4,15> kernel keeps 33 of 90 copies in a lane loop (all in the epilogue warp), main 90; BRA.U.ANY 109 -> 52.
#         pingpong's traced kernel BRA.U.ANY 34 -> 2.
# Carry build-s18a: bins.tar.xz with main/ uni/ {lce, ladder_bench}, uw/lce, uni/gpu_ladder_trace, kchecks/ at
# its build paths {warpstage-record, libwarpstage-inject.so, gpu_lce_record}; lib.sh, trace_overhead_table.py, this.
# Run: cd build-s18a && tar xJf bins.tar.xz && BUDGET=330 timeout 345 bash s18-uniform.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s18-uniform 330
ws_cuda_env
K=/work/main/build/kchecks
mkdir -p "$K" && cp -a kchecks/. "$K/"
export WARPSTAGE_SOURCE_DIR=$(cd .. && pwd)
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
step gpu_lce_record-uni 60 "PASSED" "$K/tests/recorder/gpu_lce_record" "$K/app/record/warpstage-record" ./uni/lce
grep -h "well formed" "$L/gpu_lce_record-uni.log" | tee -a "$S"
for s in 300x1000x1032:57946b6a47a26d13:0672ed2437827ea3 1024x1024x1024:772bb9c1cd87c283:bdc701dea28fbf63; do
    sh=${s%%:*}; want="${s#*:}"  # session 16's signatures on main (pingpong:streamk), unchanged through session 17
    step "trace-uni-$sh" 10 "passed, 0 failed" ./uni/gpu_ladder_trace --rung pingpong --rung streamk --shape "$sh" || true
    got="$(grep -h "rung=pingpong .*signature" "$L/trace-uni-$sh.log" | awk '{print $NF}' | head -1):$(grep -h "rung=streamk .*signature" "$L/trace-uni-$sh.log" | awk '{print $NF}' | head -1)"
    if [ "$got" = "$want" ]; then note "PASS signature uni = main ($sh: $got)"; else note "FAIL signature uni ($sh: $got, main $want)"; fi
done
for r in 4 3; do
    ws_lce_nobuf "$PWD" "$r" main uw uni
    ws_lce_cost "$PWD" "$r" main uw uni uni uw main
done
ws_trace_sweep "$PWD" main uni
(cd "$L" && tar -czf "$OUT/logs.tar.gz" . 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
