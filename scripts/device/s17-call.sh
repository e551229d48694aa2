#!/usr/bin/env bash
# Session 17, call 4: the flush out of line (trace.cuh, -DWS_TRACE_EXPERIMENT_FLUSH_CALL: StagedWarp::flush
# __noinline__, each site a CALL; rung 4's traced kernel 6926 -> 5270 instructions, 90 flush sites -> 2 bulk copies).
# Call 3 (s17-flush.sh): the consumers' trace code is the whole lce cost (WS_LCE_TRACE_OFF=4: -0.9 %), the epilogue
# warp's ~1 %; one flush per staging call (10 % less code) did not help. Builds nothing. Carry build-s17d:
# bins.tar.xz with main/ {lce, ladder_bench} (f59eddb), call/ {lce, ladder_bench, gpu_ladder_trace} (the experiment),
# noflush/lce (f59eddb, -DWS_TRACE_EXPERIMENT_NO_FLUSH), kchecks/ {warpstage-record, libwarpstage-inject.so,
# gpu_lce_record} at their build paths; lib.sh, trace_overhead_table.py, this script.
# Run: cd build-s17d && tar xJf bins.tar.xz && BUDGET=240 timeout 255 bash s17-call.sh
# The experiment's code was removed after the call (it did not lower the cost): docs/patches/s17-flush-experiments.md.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s17-call 240
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
K=/work/main/build/kchecks
mkdir -p "$K" && cp -a kchecks/. "$K/"
export WARPSTAGE_SOURCE_DIR=$(cd .. && pwd)
step gpu_lce_record 60 "PASSED" "$K/tests/recorder/gpu_lce_record" "$K/app/record/warpstage-record" ./call/lce
grep -h "well formed" "$L/gpu_lce_record.log" | tee -a "$S"
for s in 300x1000x1032 1024x1024x1024; do  # session 16's signatures (main): 57946b6a47a26d13 / 0672ed2437827ea3,
    # 772bb9c1cd87c283 / bdc701dea28fbf63 (pingpong / streamk)
    step "trace-$s" 10 "passed, 0 failed" ./call/gpu_ladder_trace --rung pingpong --rung streamk --shape "$s" || true
    note "    $s: $(grep -h "signature" "$L/trace-$s.log" | awk '{print $1, $2, $NF}' | tr '\n' ' ')"
done
for r in 4 3; do
    ws_lce_nobuf "$PWD" "$r" main call noflush
    ws_lce_cost "$PWD" "$r" main call noflush noflush call main main call
done
ws_trace_sweep "$PWD" main call
(cd "$L" && tar -czf "$OUT/logs.tar.gz" . 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
