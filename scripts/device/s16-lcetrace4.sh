#!/usr/bin/env bash
# Session 16, lead, call 4: the staged engine's bulk copies of the trace with an L2 evict-first policy
# (trace.cuh StagedWarp::flush: createpolicy.fractional.L2::evict_first + cp.async.bulk .L2::cache_hint). Calls 1-3
# (s16-lcetrace*.sh) found the lce tracing cost proportional to the trace bytes written (main 44 MB per launch +10 %,
# packed records 18 MB +4-5 %, the same never copied +0.5 %), not to the number of flushes (a ring of 128 events, half
# the flushes, changed nothing; copying at the hand-off's fence was worse): the trace's lines in L2 likely push out the
# kernel's own (W, E_user, U). Builds (stripped, bins.tar.xz): main/{lce,ladder_bench} (main bf106ca), new1/lce (call
# 1's), new4/{lce,ladder_bench,gpu_lce,gpu_lce_record,warpstage-record,libwarpstage-inject.so} (this tree).
#   1. gpu_lce on new4; gpu_lce_record (new4's);
#   2. lce tracing cost, rungs 4 and 3: main new1 new4, new4 new1 main, new4 (one process each);
#   3. the GEMM ladder's tracing cost (both top rungs, traced and untraced in the same rounds) at six shapes, main
#      then new4 then main (the untraced kernels are byte-identical; only the traced ones' flush changed);
#   4. rungs 3-4 recorded by new4 (launch 0, 8192 events per warp, --check).
# Prediction: lce new4 +1-2 % (from new1's +4-5 %); GEMM: the large shapes' traced cost down 0.5-1 point.
# Run: cd build-s16lce4 && tar xJf bins.tar.xz && BUDGET=150 timeout 160 bash s16-lcetrace4.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s16-lcetrace4 150
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1 | head -1); $(date -u)"
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$PWD/new4/lce" > lce-t && chmod +x lce-t
step gpu_lce 40 "PASSED" ./new4/gpu_lce ./lce-t
step gpu_lce_record 60 "PASSED" ./new4/gpu_lce_record ./new4/warpstage-record ./new4/lce
for r in 4 3; do
    for b in main new1 new4 new4 new1 main new4; do
        step "cost$r-$b" 12 "TRACECOST" ./$b/lce --trace-cost --rung $r --warmup 5 --iters 30 || true
        note "    $b: $(grep -h TRACECOST "$L/cost$r-$b.log" | head -1)"
    done
done
SH="--shape 4096x4096x4096 --shape 8192x8192x8192 --shape 2048x4096x14336 --shape 4096x4096x1024 --shape 1024x1024x1024 --shape 128x4096x4096"
for b in main new4 main2; do
    x=${b%2}
    # shellcheck disable=SC2086
    step "gemm-$b" 30 "overhead" ./$x/ladder_bench --rung pingpong --rung streamk $SH --target-ms 10 --rest-ms 20 --min-iters 6 || true
    grep -E "^\s+(pingpong|streamk) " "$L/gemm-$b.log" | sed "s/^/    $b /" | cut -c1-200 | tee -a "$S"
done
for r in 3 4; do
    step "rec$r-new4" 25 "PASS" ./new4/warpstage-record --no-stalls --kernels 'lce(EpilogueWarp|UserFirst)' \
        --launch-range 0:0 --trace-events 8192 -o "$OUT/rung$r-new4.wstrace" -- ./new4/lce --rung $r --check || true
    grep -hE "PASS|FAIL|warning|overflow|unmatched" "$L/rec$r-new4.log" | head -4 | tee -a "$S"
done
ls -la "$OUT" | tee -a "$S"
