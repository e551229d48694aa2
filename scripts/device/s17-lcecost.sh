#!/usr/bin/env bash
# Session 17, call 2: what rungs 3-4's tracing cost is made of, natively (ncu of call 1, s16-lcencu.sh at base clocks:
# the traced kernel with NO buffer attached already +6.4 % of cycles against the untraced kernel, recording +10.7 %; session
# 16's WS_TRACE_EXPERIMENT_NO_FLUSH build, staged never copied, +0.4-0.8 %). Carry build-s17b: main/lce, pair/lce
# (WS_LCE_PAIR_RECORDS=1), noflush/lce (WS_TRACE_EXPERIMENT_NO_FLUSH), stripped; lib.sh, this script.
#   1. nobuf: LCE_TRACED_A=1 lce --interleave R,R (A = traced kernels, no buffer; B = untraced), main, pair, noflush;
#   2. --trace-cost rungs 4 and 3: main pair noflush noflush pair main (one process each).
# Run: cd build-s17b && BUDGET=150 timeout 160 bash s17-lcecost.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s17-lcecost 150
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
for r in 4 3; do
    for b in main pair noflush; do
        LCE_TRACED_A=1 step "nobuf$r-$b" 15 "INTERLEAVED" ./$b/lce --interleave $r,$r --warmup 5 --iters 40 || true
        note "    $(grep -h "INTERLEAVED" "$L/nobuf$r-$b.log" | tail -3 | tr '\n' ' ' | cut -c1-300)"
    done
done
for r in 4 3; do
    for b in main pair noflush noflush pair main; do
        step "cost$r-$b" 12 "TRACECOST" ./$b/lce --trace-cost --rung $r --warmup 5 --iters 30 || true
        note "    $b: $(grep -h TRACECOST "$L/cost$r-$b.log" | head -1)"
    done
done
