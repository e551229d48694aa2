#!/usr/bin/env bash
# Session 16, lead, call 2: lce rungs 3-4's consumer warps copy their trace out at their hand-offs' proxy fences
# (Warp<StagedFenced>, trace.cuh; epilogue_warp.cuh's handOff) instead of flushing with a fence of their own while
# their MMAs are in flight. Call 1 (s16-lcetrace.sh) found: packed k-step records took the tracing cost from +10.4 to
# +5.1-5.4 % (rung 4) and +10.0-10.9 to +5.7-6.6 % (rung 3); the clock reads alone cost nothing (clock-only build
# +0.0 / -0.6 %); a buffer cleared only at its heads changed nothing (+5.6 %). So what is left is the stores' flushes.
# Builds (stripped, bins.tar.xz): main/lce (main bf106ca), new1/lce (call 1's new), new2/lce (this tree), nf/lce
# (this tree, -DWS_TRACE_EXPERIMENT_NO_FLUSH: events staged, never copied -- what any flush placement can reach),
# new2/gpu_lce, new2/gpu_lce_record, new2/warpstage-record + libwarpstage-inject.so.
#   1. gpu_lce on new2; gpu_lce_record (new2's recorder and lce, a small shape, every rung);
#   2. tracing cost, rungs 4 and 3: main new1 new2 nf, then nf new2 new1 main (one process each);
#   3. rungs 3-4 recorded by new2 (launch 0, 8192 events per warp, --check: the traced kernels' output checked).
# Prediction: new2 +1-2.5 % on both rungs; nf ~+0.5-1.5 %.
# Run: cd build-s16lce2 && tar xJf bins.tar.xz && BUDGET=100 timeout 110 bash s16-lcetrace2.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s16-lcetrace2 100
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1 | head -1); $(date -u)"
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$PWD/new2/lce" > lce-t && chmod +x lce-t
step gpu_lce 40 "PASSED" ./new2/gpu_lce ./lce-t
step gpu_lce_record 60 "PASSED" ./new2/gpu_lce_record ./new2/warpstage-record ./new2/lce
for r in 4 3; do
    for b in main new1 new2 nf nf new2 new1 main; do
        step "cost$r-$b" 12 "TRACECOST" ./$b/lce --trace-cost --rung $r --warmup 5 --iters 30 || true
        note "    $b: $(grep -h TRACECOST "$L/cost$r-$b.log" | head -1)"
    done
done
for r in 3 4; do
    step "rec$r-new2" 25 "PASS" ./new2/warpstage-record --no-stalls --kernels 'lce(EpilogueWarp|UserFirst)' \
        --launch-range 0:0 --trace-events 8192 -o "$OUT/rung$r-new2.wstrace" -- ./new2/lce --rung $r --check || true
    grep -hE "PASS|FAIL|warning|overflow|unmatched" "$L/rec$r-new2.log" | head -4 | tee -a "$S"
done
ls -la "$OUT" | tee -a "$S"
