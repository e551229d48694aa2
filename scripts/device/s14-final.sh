#!/usr/bin/env bash
# Session 14, the lead's final call on the merged tree (session 13's lead prepared the same call, s13-final, and did
# not run it). Builds nothing; BUDGET seconds in all, every step timed out.
#   lce (issue 11): gpu_lce (also with LCE_TVAR=10); rung 4 vs rung 3 interleaved; the 24-point sweep of rungs 0-4 checked and timed; rungs 0-4
#     timed alone; tracing cost of rungs 3-4; rung 4 against PyTorch in one torch process (s12-lcevs.sh: the
#     separate-process numbers + the interleaved and queued VSLCE lines).
#   GEMM (issue 14): gpu_ladder_correctness --rung streamk --rung pingpong, gpu_trace_batch, gpu_ladder_trace of both
#     top rungs at a partial-tile shape, the 33-shape sweep (lib.sh: ws_sweep33) cold, traced and untraced (the tracing
#     cost), for streamk and pingpong against cuBLAS, then hot (--hot, untraced) for streamk.
# Carry build-s14final: bins.tar.xz (stripped lce, gpu_lce, liblce_capi.so, tst_lce_capi, ladder_bench,
#   gpu_ladder_correctness, gpu_ladder_trace, gpu_trace_batch of a Qt-free Release build of the merged tree), lib.sh,
#   s12-lcevs.sh, torch_reference.py, trace_overhead_table.py, this script.
# Run: cd build-s14final && tar xJf bins.tar.xz && BUDGET=560 timeout 590 bash s14-final.sh
#   (PART=lce or PART=gemm: one half)
# Success: PASS on every step line, INTERLEAVED / TIME / TRACECOST / VSLCE lines, "Kernel ladder vs cuBLAS" tables
# (sweep-cold.csv, sweep-hot.csv), the tracing-cost table; $OUT: summary.txt, the two CSVs, logs.tar.gz.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s14-final 560
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t && chmod +x lce-t

PART=${PART:-all}  # lce | gemm | all
if [ "$PART" != gemm ]; then
    echo "== lce ($(left) s left)"
    step gpu_lce 40 "PASSED" ./gpu_lce ./lce-t
    # rung 4 forced onto the broadcast walk: its shuffled cases take the user-first walk instead (s14-lcetidy)
    LCE_TVAR=10 step gpu_lce-broadcast 25 "PASSED" ./gpu_lce ./lce-t
    note "I34: $(timeout 8 $P --interleave 3,4 --warmup 3 --iters 30 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
    step lce-sweep 70 "lce: OK" $P --sweep --check --time --warmup 2 --iters 5
    for r in 0 1 2 3 4; do
        note "$(timeout 8 $P --time --rung $r --warmup 10 --iters 30 2>/dev/null | grep -E 'TIME|FAIL')"
    done
    for r in 3 4; do
        note "$(timeout 10 $P --trace-cost --rung $r --warmup 5 --iters 30 2>/dev/null | grep -E 'TRACECOST|FAIL')"
    done
    # (its files go into the logs' tarball: at most 8 files come back from $OUT)
    OUT=$L/vs BUDGET=75 LCEVS_TESTS=1 LCEVS_P2_MIN=999 timeout 80 bash ./s12-lcevs.sh > "$L/lcevs.log" 2>&1
    note "rung 4 vs PyTorch (s12-lcevs.sh, one torch process):"; sed 's/^/    /' "$L/vs/summary.txt" | tee -a "$S"
fi

if [ "$PART" != lce ]; then
    echo "== GEMM ($(left) s left)"
    step correctness 50 " 0 failed" ./gpu_ladder_correctness --rung streamk --rung pingpong
    note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
    step trace-batch 15 "PASS" ./gpu_trace_batch
    for r in pingpong streamk; do
        step "trace-$r" 10 "" ./gpu_ladder_trace --rung $r --shape 300x1000x1032
        note "    $(grep -i 'signature' "$L/trace-$r.log" | head -1)"
    done
    SW=$(ws_sweep33)
    # shellcheck disable=SC2086
    step sweep-cold 150 "Kernel ladder vs cuBLAS" ./ladder_bench --rung streamk --rung pingpong $SW --target-ms 10 \
        --csv "$OUT/sweep-cold.csv"
    [ -f trace_overhead_table.py ] && python3 trace_overhead_table.py merged="$L/sweep-cold.log" 2>&1 | tail -12 | tee -a "$S"
    # shellcheck disable=SC2086
    step sweep-hot 110 "Kernel ladder vs cuBLAS" ./ladder_bench --rung streamk $SW --target-ms 10 --hot --no-traced \
        --csv "$OUT/sweep-hot.csv"
fi
(cd "$L" && tar -czf "$OUT/logs.tar.gz" . 2>/dev/null)  # every step's log and vs/ (s12-lcevs.sh's files)
echo "== end ($(left) s left)" | tee -a "$S"
