#!/usr/bin/env bash
# Session 17, call 3: one flush per staging call (trace.cuh StagedWarp::room/put/advance; eventsAt and the packed records'
# fallbacks no longer go through eventAt one event at a time). Call 2 (s17-lcecost.sh): the traced lce kernel with no
# buffer attached costs what recording costs (rung 4 +5.4 %), the same kernel with its 90 inlined flushes compiled out
# +1-2 %: the cost is the trace code's size (ncu, call 1: no_instruction stalls x3), not the bytes. This build: rung 4's
# traced kernel 6926 -> 6240 instructions, 74 flush sites. Builds nothing. Carry build-s17c: bins.tar.xz with kchecks/
# (the new tree's stripped binaries at their build paths, gpu_record_user_kernel names them), main/ {lce, ladder_bench},
# new/ {lce, ladder_bench, gpu_ladder_trace}; lib.sh, trace_overhead_table.py, this script.
#   1. correctness of the new staging: gpu_lce_record, gpu_record_user_kernel, gpu_ladder_trace
#      signatures (new) against session 16's at 300x1000x1032 and 1024^3; rungs 3-4 recorded into $OUT (hashes here);
#   2. lce: nobuf (LCE_TRACED_A=1 --interleave) and --trace-cost, rungs 4 and 3, main / new / pair (new with
#      WS_LCE_PAIR_RECORDS=1: pair/lce), off2 / off4 (new with WS_LCE_TRACE_OFF=2 / 4: the epilogue warp's / the consumers'
#      trace calls compiled out, a diagnostic: which warps' trace code costs what);
#   3. GEMM: ws_trace_sweep main new (the 33 shapes, both top rungs).
# Run: cd build-s17c && tar xJf bins.tar.xz && BUDGET=330 timeout 345 bash s17-flush.sh
# The experiment's code was removed after the call (it did not lower the cost): docs/patches/s17-flush-experiments.md.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s17-flush 330
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
K=/work/main/build/kchecks
mkdir -p "$K" && cp -a kchecks/. "$K/"
export WARPSTAGE_SOURCE_DIR=$(cd .. && pwd)
step gpu_lce_record 60 "PASSED" "$K/tests/recorder/gpu_lce_record" "$K/app/record/warpstage-record" "$K/kernels/lce/lce"
grep -h "well formed" "$L/gpu_lce_record.log" | tee -a "$S"
step gpu_record_user_kernel 60 "PASS" "$K/tests/recorder/gpu_record_user_kernel"
for s in 300x1000x1032 1024x1024x1024; do  # session 16's signatures (main): 57946b6a47a26d13 / 0672ed2437827ea3,
    # 772bb9c1cd87c283 / bdc701dea28fbf63 (pingpong / streamk)
    step "trace-$s" 10 "passed, 0 failed" ./new/gpu_ladder_trace --rung pingpong --rung streamk --shape "$s" || true
    note "    $s: $(grep -h "signature" "$L/trace-$s.log" | awk '{print $1, $2, $NF}' | tr '\n' ' ')"
done
for r in 3 4; do
    step "rec$r" 25 "PASS" "$K/app/record/warpstage-record" --no-stalls --kernels 'lce(EpilogueWarp|UserFirst)' \
        --launch-range 0:0 --trace-events 8192 -o "$OUT/rung$r-new.wstrace" -- "$K/kernels/lce/lce" --rung $r --check || true
done
for r in 4 3; do
    ws_lce_nobuf "$PWD" "$r" main new pair off2 off4
    ws_lce_cost "$PWD" "$r" main new pair off2 off4 off4 off2 pair new main main new
done
ws_trace_sweep "$PWD" main new
(cd "$L" && tar -czf "$OUT/logs.tar.gz" . 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
