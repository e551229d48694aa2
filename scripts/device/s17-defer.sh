#!/usr/bin/env bash
# Session 17, call 6: kStepAt's records staged without the flush test (-DWS_TRACE_EXPERIMENT_DEFER_KSTEP, trace.cuh: the
# consumer k-loop's record store only counts; the next tested staging call copies out every half filled since). An
# experiment: a k-loop longer than the ring can overwrite events not yet copied (not a valid trace for K > ~30 k-steps).
# Calls 3-5: the consumers' trace code is the lce cost; not the code's size, not the MmaIssue stamp's place; the flush
# compiled out of every warp (noflush) +1.4-1.6 % on rung 4. Does the k-loop's flush test alone make the difference?
# Builds nothing. Carry build-s17f: bins.tar.xz with main/ {lce, ladder_bench} (f59eddb), defer/ {lce, ladder_bench},
# noflush/lce, kchecks/ {warpstage-record, libwarpstage-inject.so, gpu_lce_record}; lib.sh, trace_overhead_table.py.
# Run: cd build-s17f && tar xJf bins.tar.xz && BUDGET=200 timeout 215 bash s17-defer.sh
# The experiment's code was removed after the call (it did not lower the cost): docs/patches/s17-flush-experiments.md.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s17-defer 200
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
K=/work/main/build/kchecks
mkdir -p "$K" && cp -a kchecks/. "$K/"
export WARPSTAGE_SOURCE_DIR=$(cd .. && pwd)
step gpu_lce_record 60 "PASSED" "$K/tests/recorder/gpu_lce_record" "$K/app/record/warpstage-record" ./defer/lce
grep -h "well formed" "$L/gpu_lce_record.log" | tee -a "$S"
for r in 4 3; do
    ws_lce_nobuf "$PWD" "$r" main defer noflush
    ws_lce_cost "$PWD" "$r" main defer noflush noflush defer main main defer
done
ws_trace_sweep "$PWD" main defer
(cd "$L" && tar -czf "$OUT/logs.tar.gz" . 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
