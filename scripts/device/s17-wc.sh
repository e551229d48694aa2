#!/usr/bin/env bash
# Session 17, call 9 (run 13:44 UTC: correct, +20 %, dearer): the flush without a bulk copy (wc: -DWS_TRACE_EXPERIMENT_WARP_COPY, trace.cuh: lanes 16-31 copy a
# full half with ld.shared / st.global, as trace_lean.cuh's WarpCopy; every lane knows the region). Calls 7-8: leaving
# out only the cp.async.bulk (no-store), or leaving it out with its operands kept live (keep), takes rung 4 from
# +4-5.5 % to +2-3 %: the bulk copy's presence costs, not the registers. Carry build-s17i: bins.tar.xz with main/,
# no-store/, wc/ lce and kchecks/ {warpstage-record, libwarpstage-inject.so, gpu_lce_record}; lib.sh, this script.
# The experiment's code was removed after the call: docs/patches/s17-flush-experiments.md.
# Run: cd build-s17i && tar xJf bins.tar.xz && BUDGET=50 timeout 55 bash s17-wc.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s17-wc 50
ws_cuda_env
K=/work/main/build/kchecks
mkdir -p "$K" && cp -a kchecks/. "$K/"
export WARPSTAGE_SOURCE_DIR=$(cd .. && pwd)
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
B="main wc"
step gpu_lce_record-wc 60 "PASSED" "$K/tests/recorder/gpu_lce_record" "$K/app/record/warpstage-record" ./wc/lce
grep -h "well formed" "$L/gpu_lce_record-wc.log" | tee -a "$S"
# shellcheck disable=SC2086
ws_lce_nobuf "$PWD" 4 $B
R=""; for b in $B; do R="$b $R"; done
for r in 4; do
    ws_lce_cost "$PWD" "$r" $B $R
done
echo "== end ($(left) s left)" | tee -a "$S"
