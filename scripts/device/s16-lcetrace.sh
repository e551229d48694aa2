#!/usr/bin/env bash
# Session 16, lead, call 1: lce rungs 3-4's traced kernels with packed k-step records (lce_body.cuh: the consumers'
# four k-step events in one kStepAt record, the producer's two in one loadAt record, no LoadReady marker; the clocks
# read where the phases begin, wt::Stamp) against main's traced kernels, and what is left of the tracing cost.
# Builds (stripped, in bins.tar.xz): main/lce (main bf106ca), new/lce (this tree), clk/lce (this tree with
# -DWS_TRACE_EXPERIMENT_CLOCK_ONLY: clock reads kept, no event stored: what the stamps alone cost), new/gpu_lce,
# new/gpu_lce_record, new/warpstage-record + libwarpstage-inject.so (this tree's recorder).
#   1. correctness: gpu_lce on new/lce (rungs 0-4 checked, --trace-cost records events), gpu_lce_record (the family
#      recorded and decoded through warpstage-record at a small shape);
#   2. tracing cost (`lce --trace-cost --rung R --warmup 5 --iters 30`: untraced and traced launches alternating in one
#      process, traced after a clear of the whole buffer as the recorder does): rungs 3 and 4, processes
#      main, new, clk, new (heads: LCE_TRACE_CLEAR=heads, only the buffer's heads cleared), main, new;
#   3. recordings of rungs 3-4 with main's and new's lce through new's recorder (launch 0, 8192 events per warp), to
#      compare the timelines here (files in $OUT).
# Prediction: new's tracing cost +2-4 % on both rungs (from +10.8 / +11.1 %: the GEMM ping-pong's k-step, +1.4 % at
# 4096^3, has the same shape); clk ~+1-2 %; heads 0-1 % below new (the memset's dirty L2 lines, ~50 MB written back).
# Run: cd build-s16lce && tar xJf bins.tar.xz && BUDGET=150 timeout 160 bash s16-lcetrace.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s16-lcetrace 150
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1 | head -1); $(date -u)"
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$PWD/new/lce" > lce-t && chmod +x lce-t
step gpu_lce 40 "PASSED" ./new/gpu_lce ./lce-t
step gpu_lce_record 60 "passed, 0 failed|PASSED" ./new/gpu_lce_record ./new/warpstage-record ./new/lce
for r in 4 3; do
    for b in main new clk heads main new; do
        x=$b; env=""
        [ "$b" = heads ] && { x=new; env="LCE_TRACE_CLEAR=heads"; }
        step "cost$r-$b" 12 "TRACECOST" env $env ./$x/lce --trace-cost --rung $r --warmup 5 --iters 30 || true
        note "    $(grep -h TRACECOST "$L/cost$r-$b.log" | head -1)"
    done
done
for b in main new; do
    for r in 3 4; do
        step "rec$r-$b" 25 "PASS" ./new/warpstage-record --no-stalls --kernels 'lce(EpilogueWarp|UserFirst)' \
            --launch-range 0:0 --trace-events 8192 -o "$OUT/rung$r-$b.wstrace" -- ./$b/lce --rung $r --check || true
        grep -hE "warning|overflow|unmatched" "$L/rec$r-$b.log" | head -3 | tee -a "$S"
    done
done
ls -la "$OUT" | tee -a "$S"
