#!/usr/bin/env bash
# RUN in session 17 (calls 1-2; docs/device-log/sessions-11-on.md, "Session 17"): the pair records are correct and no
# cheaper. As prepared:
# PREPARED, NOT RUN (session 16 had no device time left): trace format version 3's pair record (kEventPair) in lce
# rungs 3-4's traced kernels, lce_body.cuh's WS_LCE_PAIR_RECORDS=1 (a consumer tile's 29 records -> ~21), against the
# tree as built (0), one call. Builds nothing. Carry build-s16lcepair: bins.tar.xz with pair/lce (the Qt-free Release
# lce built with -DCMAKE_CUDA_FLAGS=-DWS_LCE_PAIR_RECORDS=1) and, at their build paths under kchecks/
# (gpu_record_user_kernel names them), the tree's stripped kernels/lce/lce, tests/kernels/gpu_lce,
# tests/recorder/{gpu_lce_record, gpu_record_user_kernel, ws_rowsum, ws_format_v1, ws_format_vnext},
# app/record/{warpstage-record, libwarpstage-inject.so}, tests/kernels/gpu_ladder_correctness; lib.sh, this script.
#   1. gpu_lce and gpu_lce_record on pair/lce (its consumer k-step check and stage mapping on the pair records), then
#      gpu_lce_record on the tree's lce; gpu_record_user_kernel (case 6: a version-1 kernel traced by the version-3
#      recorder, a version-4 one refused);
#   2. lce tracing cost, rungs 4 and 3: main pair pair main main pair (main = the tree's lce; one process each);
#   3. rungs 3-4 recorded by the branch (launch 0, 8192 events per warp, --check) into $OUT: compare their (cta, warp,
#      kind, kstep, slot) sequences with a main recording here (`warpstage query FILE "select cta, warp, kind, kstep,
#      slot from intervals order by cta, warp, start_ns" --csv | md5sum`; session 16's rung3-main / rung4-main hashes:
#      4a3627e486d6670532bd3384e74c16ab / c32bbc6cb81470e1c52759016d6aa525);
#   4. gpu_ladder_correctness --rung streamk --rung pingpong (their traced kernels differ only by the version constant).
# Prediction: pair +3.2-3.8 % (rung 4), +4-4.5 % (rung 3), from main's +4.6 / +5.6 %; events in CTA 0 8457 -> ~6400.
# Run: cd build-s16lcepair && tar xJf bins.tar.xz && BUDGET=120 timeout 130 bash s16-lcepair.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s16-lcepair 120
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
K=/work/main/build/kchecks  # the paths the test binaries were built with
mkdir -p "$K" && cp -a kchecks/. "$K/"
export WARPSTAGE_SOURCE_DIR=$(cd .. && pwd)
P=$PWD/pair/lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t && chmod +x lce-t
step gpu_lce 40 "PASSED" "$K/tests/kernels/gpu_lce" ./lce-t
step gpu_lce_record 60 "PASSED" "$K/tests/recorder/gpu_lce_record" "$K/app/record/warpstage-record" "$P"
grep -h "well formed" "$L/gpu_lce_record.log" | tee -a "$S"
step gpu_lce_record-tree 60 "PASSED" "$K/tests/recorder/gpu_lce_record" "$K/app/record/warpstage-record" "$K/kernels/lce/lce"
step gpu_record_user_kernel 60 "PASS" "$K/tests/recorder/gpu_record_user_kernel"
for r in 4 3; do
    for b in main pair pair main main pair; do
        x=$K/kernels/lce/lce
        [ $b = pair ] && x=$P
        step "cost$r-$b" 12 "TRACECOST" "$x" --trace-cost --rung $r --warmup 5 --iters 30 || true
        note "    $b: $(grep -h TRACECOST "$L/cost$r-$b.log" | head -1)"
    done
done
for r in 3 4; do
    step "rec$r" 25 "PASS" "$K/app/record/warpstage-record" --no-stalls --kernels 'lce(EpilogueWarp|UserFirst)' \
        --launch-range 0:0 --trace-events 8192 -o "$OUT/rung$r-pair.wstrace" -- "$P" --rung $r --check || true
done
step correctness 50 " 0 failed" "$K/tests/kernels/gpu_ladder_correctness" --rung streamk --rung pingpong
ls -la "$OUT" | tee -a "$S"
