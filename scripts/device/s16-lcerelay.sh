#!/usr/bin/env bash
# Session 16, lead, call 5: lce rungs 3-4's traced kernels record through the relay (trace_relay.cuh: every warp but
# warp 2 stages its events and hands each full half to warp 2, idle until now, which copies them out with plain
# ld.shared / st.global; the recording warps never issue a bulk copy or a proxy fence for their trace). Calls 1-4
# (s16-lcetrace*.sh) found the cost following the bytes copied out by the warps' own TMA bulk copies (+4.5 % at 18 MB
# per launch, +0.6 % never copied) and not the flush count, the fence's place, the clear or L2 eviction: if the copies
# in the TMA unit delay the producer's loads behind them, the relay's plain stores do not.
# Builds (stripped, bins.tar.xz): head/lce (main f3a748a: the packed records, each warp's own bulk copies; the harness
# clears as the recorders do), relay/{lce,gpu_lce,gpu_lce_record,warpstage-record,libwarpstage-inject.so} (this tree).
#   1. gpu_lce and gpu_lce_record on relay (gpu_lce_record checks the consumers' k-step order and lag);
#   2. tracing cost, rungs 4 and 3: head relay relay head head relay; then head with LCE_TRACE_EVENTS=1024 (the warps'
#      regions 16 KB apart instead of 128 KB: whether the buffer's spread matters);
#   3. rungs 3-4 recorded by relay (launch 0, 8192 events per warp, --check), files to $OUT for the hashes here.
# Prediction: relay +0.8-2 % (from head's ~+4.5 %); LCE_TRACE_EVENTS=1024 as head.
# Run: cd build-s16relay && tar xJf bins.tar.xz && BUDGET=100 timeout 110 bash s16-lcerelay.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s16-lcerelay 100
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1 | head -1); $(date -u)"
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$PWD/relay/lce" > lce-t && chmod +x lce-t
step gpu_lce 40 "PASSED" ./relay/gpu_lce ./lce-t
step gpu_lce_record 60 "PASSED" ./relay/gpu_lce_record ./relay/warpstage-record ./relay/lce
grep -h "well formed\|FAIL" "$L/gpu_lce_record.log" | head -4 | tee -a "$S"
for r in 4 3; do
    for b in head relay relay head head relay; do
        step "cost$r-$b" 12 "TRACECOST" ./$b/lce --trace-cost --rung $r --warmup 5 --iters 30 || true
        note "    $b: $(grep -h TRACECOST "$L/cost$r-$b.log" | head -1)"
    done
    step "cost$r-e1024" 12 "TRACECOST" env LCE_TRACE_EVENTS=1024 ./head/lce --trace-cost --rung $r --warmup 5 --iters 30 || true
    note "    head, 1024 events per warp: $(grep -h TRACECOST "$L/cost$r-e1024.log" | head -1)"
done
for r in 3 4; do
    step "rec$r-relay" 25 "PASS" ./relay/warpstage-record --no-stalls --kernels 'lce(EpilogueWarp|UserFirst)' \
        --launch-range 0:0 --trace-events 8192 -o "$OUT/rung$r-relay.wstrace" -- ./relay/lce --rung $r --check || true
    grep -hE "PASS|FAIL|warning|overflow|unmatched" "$L/rec$r-relay.log" | head -4 | tee -a "$S"
done
ls -la "$OUT" | tee -a "$S"
