#!/usr/bin/env bash
# Session 16, lead, call 3: lce rungs 3-4's consumer warps stage their trace in a ring of 128 events (2 KB,
# Warp<StagedRing<128>>: a flush every 64 events instead of 32). Calls 1-2 (s16-lcetrace.sh, s16-lcetrace2.sh) found:
# packed k-step records (new1) +4.4-5.4 % (from main's +10 %); the same stores never flushed (nf) +0.7-0.8 % (rung 4):
# the flushes are the rest. Copying at the epilogue hand-off's proxy fence instead (call 2's new2) was worse, +8.5 %.
# Builds (stripped, bins.tar.xz): main/lce (main bf106ca), new1/lce (call 1's), new3/lce (this tree), nf/lce (call
# 2's), new3/gpu_lce, new3/gpu_lce_record, new3/warpstage-record + libwarpstage-inject.so.
#   1. gpu_lce on new3; gpu_lce_record (new3's recorder and lce);
#   2. tracing cost, rungs 4 and 3: main new1 new3 nf, then nf new3 new1 main, then new3 new1 (one process each);
#   3. rungs 3-4 recorded by new3 (launch 0, 8192 events per warp, --check).
# Prediction: new3 +2.5-3 % (rung 4: half of new1's flush cost of ~4 points gone).
# Run: cd build-s16lce3 && tar xJf bins.tar.xz && BUDGET=100 timeout 110 bash s16-lcetrace3.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s16-lcetrace3 100
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1 | head -1); $(date -u)"
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$PWD/new3/lce" > lce-t && chmod +x lce-t
step gpu_lce 40 "PASSED" ./new3/gpu_lce ./lce-t
step gpu_lce_record 60 "PASSED" ./new3/gpu_lce_record ./new3/warpstage-record ./new3/lce
for r in 4 3; do
    for b in main new1 new3 nf nf new3 new1 main new3 new1; do
        step "cost$r-$b" 12 "TRACECOST" ./$b/lce --trace-cost --rung $r --warmup 5 --iters 30 || true
        note "    $b: $(grep -h TRACECOST "$L/cost$r-$b.log" | head -1)"
    done
done
for r in 3 4; do
    step "rec$r-new3" 25 "PASS" ./new3/warpstage-record --no-stalls --kernels 'lce(EpilogueWarp|UserFirst)' \
        --launch-range 0:0 --trace-events 8192 -o "$OUT/rung$r-new3.wstrace" -- ./new3/lce --rung $r --check || true
    grep -hE "PASS|FAIL|warning|overflow|unmatched" "$L/rec$r-new3.log" | head -4 | tee -a "$S"
done
ls -la "$OUT" | tee -a "$S"
