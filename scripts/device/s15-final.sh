#!/usr/bin/env bash
# Session 15, the lead's final call on the merged tree. Builds nothing; BUDGET seconds in all, every step timed out.
#   recorder: gpu_record_user_kernel (its case 6: a kernel speaking trace format version 1 by hand is traced under the
#     version-2 recorder, one speaking the version after it fails the run by name), gpu_recorder.
#   lce (issue 11): gpu_lce, tst_lce_capi --gpu / gpu_lce_capi (the launch cache per thread, the atomic flag epoch),
#     the 24-point sweep checked; rung 4 timed; its tracing cost. (Rung 4's kernel is s15-lcebody's measured one.)
#   GEMM (issue 14): gpu_ladder_correctness --rung streamk --rung pingpong, gpu_trace_batch, gpu_ladder_trace of both
#     top rungs at a partial-tile shape, the 33-shape sweep (lib.sh: ws_sweep33) cold, traced and untraced, then hot
#     (untraced) for streamk -- with cuBLAS now timed in each rung's own rounds (ladder_bench, session 15).
# Carry build-s15final: bins.tar.xz (stripped binaries of a Qt-free Release build of the merged tree, build/kchecks,
#   kept at their paths under build/kchecks/ because gpu_record_user_kernel names them), lib.sh,
#   trace_overhead_table.py, this script.
# Run: cd build-s15final && tar xJf bins.tar.xz && BUDGET=470 timeout 500 bash s15-final.sh   (PARTS="rec gemm": some of rec lce gemm)
# Success: PASS on every step line, the "Kernel ladder vs cuBLAS" tables (sweep-cold.csv, sweep-hot.csv), the
# tracing-cost table; $OUT: summary.txt, the two CSVs, logs.tar.gz.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s15-final "${BUDGET:-470}"
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
K=/work/main/build/kchecks  # the paths the test binaries were built with
mkdir -p "$K" && cp -a kchecks/. "$K/"
export WARPSTAGE_SOURCE_DIR=$(cd .. && pwd)
PARTS=" ${PARTS:-rec lce gemm} "

if [[ "$PARTS" == *" rec "* ]]; then
    echo "== recorder ($(left) s left)"
    step gpu_record_user_kernel 60 "PASS" "$K/tests/recorder/gpu_record_user_kernel"
    step gpu_recorder 80 "PASS" "$K/tests/recorder/gpu_recorder"
fi

if [[ "$PARTS" == *" lce "* ]]; then
    echo "== lce ($(left) s left)"
    P=$K/kernels/lce/lce
    printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t && chmod +x lce-t
    step gpu_lce 40 "PASSED" "$K/tests/kernels/gpu_lce" ./lce-t
    LD_LIBRARY_PATH=$K/kernels/lce:${LD_LIBRARY_PATH:-} step gpu_lce_capi 25 "gpu_lce_capi: 0 failed" "$K/tests/kernels/tst_lce_capi" --gpu
    step lce-sweep 70 "lce: OK" "$P" --sweep --check --time --warmup 2 --iters 5
    note "I34: $(timeout 8 "$P" --interleave 3,4 --warmup 3 --iters 30 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
    for r in 0 1 2 3 4; do note "$(timeout 8 "$P" --time --rung $r --warmup 10 --iters 30 2>/dev/null | grep -E 'TIME|FAIL')"; done
    for r in 3 4; do note "$(timeout 10 "$P" --trace-cost --rung $r --warmup 5 --iters 30 2>/dev/null | grep -E 'TRACECOST|FAIL')"; done
    # rung 4 against PyTorch in one torch process (s12-lcevs.sh wants lce, liblce_capi.so, tst_lce_capi beside it)
    mkdir -p vs && cp "$P" "$K/kernels/lce/liblce_capi.so" "$K/tests/kernels/tst_lce_capi" s12-lcevs.sh torch_reference.py lib.sh vs/
    (cd vs && OUT=$L/vs BUDGET=75 LCEVS_TESTS=0 LCEVS_P2_MIN=999 timeout 80 bash ./s12-lcevs.sh > "$L/lcevs.log" 2>&1)
    note "rung 4 vs PyTorch (s12-lcevs.sh, one torch process):"; sed 's/^/    /' "$L/vs/summary.txt" | tee -a "$S"
fi

if [[ "$PARTS" == *" gemm "* ]]; then
    echo "== GEMM ($(left) s left)"
    T=$K/tests/kernels
    step correctness 50 " 0 failed" "$T/gpu_ladder_correctness" --rung streamk --rung pingpong
    note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
    step trace-batch 15 "PASS" "$T/gpu_trace_batch"
    for r in pingpong streamk; do
        step "trace-$r" 10 "" "$T/gpu_ladder_trace" --rung $r --shape 300x1000x1032
        note "    $(grep -i 'signature' "$L/trace-$r.log" | head -1)"
    done
    SW=$(ws_sweep33)
    # shellcheck disable=SC2086
    step sweep-cold 200 "Kernel ladder vs cuBLAS" "$K/tests/bench/ladder_bench" --rung streamk --rung pingpong $SW --target-ms 10 \
        --csv "$OUT/sweep-cold.csv"
    [ -f trace_overhead_table.py ] && python3 trace_overhead_table.py merged="$L/sweep-cold.log" 2>&1 | tail -12 | tee -a "$S"
    # shellcheck disable=SC2086
    step sweep-hot 130 "Kernel ladder vs cuBLAS" "$K/tests/bench/ladder_bench" --rung streamk $SW --target-ms 10 --hot --no-traced \
        --csv "$OUT/sweep-hot.csv"
fi
(cd "$L" && tar -czf "$OUT/logs.tar.gz" . 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
