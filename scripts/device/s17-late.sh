#!/usr/bin/env bash
# Session 17, call 5: the consumers' MmaIssue clock read AFTER the k-step's wgmma issue (-DWS_LCE_LATE_ISSUE_STAMP=1
# -DWS_PP_LATE_ISSUE_STAMP=1, lce_body.cuh / pingpong_body.cuh). Calls 3-4: the consumers' trace code is the whole lce
# cost, and neither 10 % less code (one flush per call) nor 24 % less (the flush out of line) helped: not the code's
# size. The SASS: the MmaIssue stamp's clock read (CS2R) and its move to the uniform datapath (R2UR, which waits for
# the CS2R) sat between the full barrier's wait and the first HGMMA -- on each k-step's critical path, also in the
# traced kernel without a buffer. Late: none there. Builds nothing. Carry build-s17e: bins.tar.xz with main/ {lce,
# ladder_bench} (f59eddb), late/ {lce, ladder_bench, gpu_ladder_trace}, kchecks/ {warpstage-record,
# libwarpstage-inject.so, gpu_lce_record} at their build paths; lib.sh, trace_overhead_table.py, this script.
# Run: cd build-s17e && tar xJf bins.tar.xz && BUDGET=240 timeout 255 bash s17-late.sh
# The experiment's code was removed after the call (it did not lower the cost): docs/patches/s17-flush-experiments.md.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s17-late 240
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
K=/work/main/build/kchecks
mkdir -p "$K" && cp -a kchecks/. "$K/"
export WARPSTAGE_SOURCE_DIR=$(cd .. && pwd)
step gpu_lce_record 60 "PASSED" "$K/tests/recorder/gpu_lce_record" "$K/app/record/warpstage-record" ./late/lce
grep -h "well formed" "$L/gpu_lce_record.log" | tee -a "$S"
for s in 300x1000x1032 1024x1024x1024; do  # session 16's signatures (main): 57946b6a47a26d13 / 0672ed2437827ea3,
    # 772bb9c1cd87c283 / bdc701dea28fbf63 (pingpong / streamk)
    step "trace-$s" 10 "passed, 0 failed" ./late/gpu_ladder_trace --rung pingpong --rung streamk --shape "$s" || true
    note "    $s: $(grep -h "signature" "$L/trace-$s.log" | awk '{print $1, $2, $NF}' | tr '\n' ' ')"
done
for r in 4 3; do
    ws_lce_nobuf "$PWD" "$r" main late
    ws_lce_cost "$PWD" "$r" main late late main main late late main
done
ws_trace_sweep "$PWD" main late
(cd "$L" && tar -czf "$OUT/logs.tar.gz" . 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
