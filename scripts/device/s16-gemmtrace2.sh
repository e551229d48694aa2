#!/usr/bin/env bash
# Issue 14, tracing cost, session 16 (s16-gemmtrace), call 2: the recorders' clear before a traced launch. Main zeroes
# the whole trace buffer (ladder_bench's clearAsync, recorder.cpp, the injection library), most of it the event arrays
# (room for 4 events per k-step and warp), which leaves that much of the L2 dirty for the traced launch to write back;
# the branch zeroes only what a launch does not rewrite (trace::clearRanges: the CTA records, the region headers).
# The kernels are main's, byte for byte. ONE call, BUDGET seconds of steps (default 230; killed at BUDGET + 10 s).
# Builds (dev machine, Release, no Qt, stripped; DIR/bins.tar.xz, one tar | xz -9e):
#   hdr    = the branch: ladder_bench, gpu_ladder_trace; all = hdr's ladder_bench with --trace-clear-all (main's clear);
#   mutrows, mutcta = gpu_ladder_trace with scripts/mutations.txt's traceclear.header_rows_short / .cta_records_kept;
#   x8, x12 = hdr with streamk.cu built -DWS_PP_TRACE_STRUCT_EXP=8 / 12 (no producer k-step records / neither the
#             producer's nor the consumers'): ladder_bench (--idle-cost: where the short shapes' null-buffer cost is);
#   rec    = warpstage-record, libwarpstage-inject.so, gpu_record_user_kernel (+ ws_rowsum, ws_format_v1/vnext),
#            gpu_recorder of the branch, at their build paths (BUILD below: the tests name them).
# Steps: gpu_ladder_trace (hdr) of both top rungs at 300x1000x1032 and 1024^3 (its case "a launch into a stale buffer
# cleared as the recorders clear it"); the two mutants (must FAIL); the 33-shape sweep all | hdr (lib.sh ws_trace_sweep;
# if the clear itself failed: all | ntc, no clear at all); --idle-cost of hdr, x8, x12 at the short shapes; hdr with
# --no-trace-clear at the short shapes; gpu_record_user_kernel, gpu_recorder; a second sweep hdr | all if time is left.
# Device (run tool, carry ["build-s16-gemmtrace"]): cd build-s16-gemmtrace && BUDGET=200 bash s16-gemmtrace2.sh .
# (run 2026-12-02 06:39 UTC: 105.4 s wall; docs/benchmarks/gemm-shapes-s15.md, session 16). gpu_record_user_kernel
# failed there on its source lookup alone: BUILD is outside the copied tree, so ../../tests/... is not found (next time:
# a link from BUILD's ../.. to the tree).
set -u
if [ -z "${WS_S16GT2_INNER:-}" ]; then
    WS_S16GT2_INNER=1 exec timeout -k 2 $((${BUDGET:-230} + 10)) bash "$0" "$@"
fi
D=${1:-build-s16-gemmtrace}
D=$(cd "$D" && pwd)
WS_LIB=$D/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/hdr" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s16-gemmtrace2 230
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"
for b in hdr x8 x12; do note "build $b: $(sha256sum "$D/$b/ladder_bench" 2>&1 | cut -c1-16)"; done
mkdir -p "$D/all" "$D/ntc"
printf '#!/bin/sh\nexec "%s/hdr/ladder_bench" --trace-clear-all "$@"\n' "$D" >"$D/all/ladder_bench"
printf '#!/bin/sh\nexec "%s/hdr/ladder_bench" --no-trace-clear "$@"\n' "$D" >"$D/ntc/ladder_bench"
chmod +x "$D/all/ladder_bench" "$D/ntc/ladder_bench"

for s in 300x1000x1032 1024x1024x1024; do
    step "trace-hdr-$s" 12 "passed, 0 failed" "$D/hdr/gpu_ladder_trace" --rung pingpong --rung streamk --shape "$s" || true
    grep -h "signature\|stale buffer\|clearAsync" "$L/trace-hdr-$s.log" | cut -c1-200 | tee -a "$S"
done
for m in rows cta; do
    step "mut-$m" 8 "passed, 0 failed" "$D/mut$m/gpu_ladder_trace" --rung streamk --shape 300x1000x1032
    if grep -q "^FAIL .*clearAsync zeroes every" "$L/mut-$m.log"; then
        note "PASS mutant traceclear.$m caught: $(grep -h '^FAIL .*clearAsync' "$L/mut-$m.log" | head -1 | cut -c1-160)"
    else note "FAIL mutant traceclear.$m NOT caught"; fi
done
B=hdr
grep -q "PASS .*clearAsync zeroes every" "$L/trace-hdr-300x1000x1032.log" || { B=ntc; note "the clear failed: the sweep is all | ntc"; }
ws_trace_sweep "$D" all "$B"
SHORT="--shape 1024x1024x1024 --shape 128x4096x4096 --shape 1x4096x4096 --shape 128x4096x14336 --shape 256x4096x4096"
SHORT="$SHORT --shape 512x4096x4096 --shape 128x14336x4096"
IDLE="--rung streamk --idle-cost --target-ms 4 --rest-ms 10 --min-iters 6"
# shellcheck disable=SC2086
for b in hdr x8 x12; do step "idle-$b" 20 "idle cost" "$D/$b/ladder_bench" $IDLE $SHORT || true; done
# shellcheck disable=SC2086
step ntc-hdr 16 "overhead" "$D/hdr/ladder_bench" --rung streamk --rung pingpong --target-ms 4 --rest-ms 10 --min-iters 6 \
    --no-trace-clear $SHORT --shape 128x28672x8192 --shape 4096x4096x256 || true
note "idle cost (build | shape | rung | untraced ms | instrumented, not recording ms | overhead | traced ms | overhead | ok):"
for f in "$L"/idle-*.log; do
    b=$(basename "$f" .log)
    grep -E "^\| [0-9x]+ \| [a-z_]+ \| [0-9.]+ \|" "$f" 2>/dev/null | sed "s/^/${b#idle-} /" | tee -a "$S"
done
note "no trace clear (hdr; shape | rung | correct | untraced ms | TFLOP/s | % cuBLAS | traced ms | ... | trace overhead):"
grep -hE "^\| [0-9x]+ \| (streamk|pingpong) \|" "$L/ntc-hdr.log" 2>/dev/null | cut -c1-160 | tee -a "$S"

# the recorders (their clear changed): at the paths the tests were built with
BUILD=/work/wt/s16-gemmtrace/build/kchecks
if [ -d "$D/rec" ] && [ "$(left)" -ge 30 ]; then
    mkdir -p "$BUILD" && cp -a "$D/rec/." "$BUILD/"
    export WARPSTAGE_SOURCE_DIR=$PWD
    step gpu_record_user_kernel 50 "PASS" "$BUILD/tests/recorder/gpu_record_user_kernel" || true
    step gpu_recorder 60 "PASS" "$BUILD/tests/recorder/gpu_recorder" || true
fi
if [ "$(left)" -ge 50 ]; then
    note "second sweep, the other order:"
    cp "$L/table.txt" "$L/table1.txt"
    ws_trace_sweep "$D" "$B" all
fi
cp "$L"/*.log "$L"/*.txt "$OUT"/ 2>/dev/null
( cd "$OUT" && tar czf logs.tgz ./*.log ./table*.txt 2>/dev/null && rm -f ./*.log )
note "done in $((SECONDS - T0)) s"
