#!/usr/bin/env bash
# Session 16, the lead's final call on the merged tree. Builds nothing; BUDGET seconds in all, every step timed out.
#   recorder: gpu_record_user_kernel, gpu_recorder (the recorders' clear: only the heads before a launch since
#     s16-gemmtrace, the new buffer zeroed whole and the events a launch wrote zeroed after its read-back, f3a748a).
#   lce (issue 11): gpu_lce, gpu_lce_capi, the 24-point sweep checked and timed, the tracing cost of rungs 3-4 (the
#     packed k-step records, e5f379d), gpu_lce_record (its new consumer k-step check) and the same test on a mutant
#     whose k-step record carries lag 1 instead of 2 (lcemut/lce): it must FAIL.
#   GEMM (issue 14): gpu_ladder_correctness --rung streamk --rung pingpong, gpu_trace_batch, gpu_ladder_trace of both
#     top rungs at a partial-tile shape and at 1024^3 (s16-gemmgap's one-CTA kernels), the 33-shape sweep cold, traced
#     and untraced (cuBLAS in each rung's rounds); the hot sweep only with HOT=1.
# Carry build-s16final: bins.tar.xz (stripped binaries of the Qt-free Release build of the merged tree, build/kchecks,
#   kept at their paths under build/kchecks/ because gpu_record_user_kernel names them; lcemut/lce), lib.sh,
#   trace_overhead_table.py, this script.
# Run: cd build-s16final && tar xJf bins.tar.xz && BUDGET=330 timeout 350 bash s16-final.sh  (SWEEP=..., a subset)
# Success: PASS on every step line but "FAIL mutant-lag" (the mutant caught), the sweep's table and the tracing-cost
# table; $OUT: summary.txt, sweep-cold.csv, logs.tar.gz.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s16-final "${BUDGET:-330}"
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
K=/work/main/build/kchecks  # the paths the test binaries were built with
mkdir -p "$K" && cp -a kchecks/. "$K/"
export WARPSTAGE_SOURCE_DIR=$(cd .. && pwd)
PARTS=" ${PARTS:-lce rec gemm} "

if [[ "$PARTS" == *" lce "* ]]; then
    echo "== lce ($(left) s left)"
    P=$K/kernels/lce/lce
    printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t && chmod +x lce-t
    step gpu_lce 40 "PASSED" "$K/tests/kernels/gpu_lce" ./lce-t
    LD_LIBRARY_PATH=$K/kernels/lce:${LD_LIBRARY_PATH:-} step gpu_lce_capi 25 "gpu_lce_capi: 0 failed" "$K/tests/kernels/tst_lce_capi" --gpu
    step lce-sweep 70 "lce: OK" "$P" --sweep --check --time --warmup 2 --iters 5
    grep -E "fastest|faster|ordered|x rung 0|>= 5" "$L/lce-sweep.log" | tail -4 | tee -a "$S"
    for r in 4 3 4 3; do
        step "lce-cost$r" 12 "TRACECOST" "$P" --trace-cost --rung $r --warmup 5 --iters 30 || true
        note "    $(grep -h TRACECOST "$L/lce-cost$r.log" | head -1)"
    done
    step gpu_lce_record 60 "PASSED" "$K/tests/recorder/gpu_lce_record" "$K/app/record/warpstage-record" "$P"
    grep -h "well formed" "$L/gpu_lce_record.log" | tee -a "$S"
    step mutant-lag 60 "PASSED" "$K/tests/recorder/gpu_lce_record" "$K/app/record/warpstage-record" ./lcemut/lce || true
    grep -h "consumer k-steps" "$L/mutant-lag.log" | head -2 | cut -c1-240 | tee -a "$S"
fi

if [[ "$PARTS" == *" rec "* ]]; then
    echo "== recorder ($(left) s left)"
    step gpu_record_user_kernel 60 "PASS" "$K/tests/recorder/gpu_record_user_kernel"
    step gpu_recorder 80 "PASS" "$K/tests/recorder/gpu_recorder"
fi

if [[ "$PARTS" == *" gemm "* ]]; then
    echo "== GEMM ($(left) s left)"
    T=$K/tests/kernels
    step correctness 50 " 0 failed" "$T/gpu_ladder_correctness" --rung streamk --rung pingpong
    note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
    step trace-batch 15 "PASS" "$T/gpu_trace_batch"
    for s in 300x1000x1032 1024x1024x1024; do
        for r in pingpong streamk; do
            step "trace-$r-$s" 10 "" "$T/gpu_ladder_trace" --rung $r --shape $s
            note "    $s: $(grep -i 'signature' "$L/trace-$r-$s.log" | head -1)"
        done
    done
    SW=${SWEEP:-$(ws_sweep33)}  # SWEEP="--shape MxNxK ...": a subset (the device time left)
    # shellcheck disable=SC2086
    step sweep-cold 200 "Kernel ladder vs cuBLAS" "$K/tests/bench/ladder_bench" --rung streamk --rung pingpong $SW --target-ms 10 \
        --csv "$OUT/sweep-cold.csv"
    [ -f trace_overhead_table.py ] && python3 trace_overhead_table.py merged="$L/sweep-cold.log" 2>&1 | tail -12 | tee -a "$S"
    if [ "${HOT:-0}" = 1 ]; then
        # shellcheck disable=SC2086
        step sweep-hot 130 "Kernel ladder vs cuBLAS" "$K/tests/bench/ladder_bench" --rung streamk $SW --target-ms 10 --hot --no-traced \
            --csv "$OUT/sweep-hot.csv"
    fi
fi
(cd "$L" && tar -czf "$OUT/logs.tar.gz" . 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
