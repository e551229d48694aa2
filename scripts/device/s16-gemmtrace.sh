#!/usr/bin/env bash
# Issue 14, tracing cost, session 16 (s16-gemmtrace): stream-K's short shapes (+20-30 % traced). ONE call, BUDGET seconds
# of steps (default 210; the whole script, unpacking included, is killed at BUDGET + 10 s).
# Builds (dev machine, Release, no Qt, stripped; DIR/bins.tar.xz, one tar | xz -9e):
#   base = main bf106ca's kernels (the branch at c857c04 built with its defaults: WS_PP_LATE_KSTEP=0, every cubin
#          main's): ladder_bench, gpu_ladder_trace, gpu_trace_batch;
#   late = c857c04's streamk.cu with -DWS_PP_LATE_KSTEP=1 (the consumer's k-step record staged after the slot's
#          release, in the in-step configurations; pingpong.cu unchanged; reverted in 07a21d5): ladder_bench,
#          gpu_ladder_correctness, gpu_ladder_trace;
#   x4   = streamk.cu with -DWS_PP_TRACE_STRUCT_EXP=4 (no consumer k-step records: the floor a record placement can
#          reach; its traces lack the k-steps): ladder_bench.
# Steps, in priority order: correctness (late); gpu_trace_batch (base: the engine, trace.cuh, is unchanged); streamk
# signatures base = late for kTiles 0, 1, 2, 4, the cluster split and the rule's pick at 1024^3; --idle-cost (untraced /
# null buffer / traced, ABBA) of base and late at the seven short shapes + 4096^3 + 8192^3; the 33-shape sweep
# base | late (lib.sh ws_trace_sweep); --idle-cost of x4 at the short shapes; base with --no-trace-clear there.
# Device (run tool, carry ["build-s16-gemmtrace"]): cd build-s16-gemmtrace && BUDGET=210 bash s16-gemmtrace.sh .
# (run 2026-12-02 06:30 UTC: 60.4 s wall; docs/benchmarks/gemm-shapes-s15.md, session 16)
set -u
if [ -z "${WS_S16GT_INNER:-}" ]; then
    WS_S16GT_INNER=1 exec timeout -k 2 $((${BUDGET:-210} + 10)) bash "$0" "$@"
fi
D=${1:-build-s16-gemmtrace}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/base" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s16-gemmtrace 210
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"
for b in base late x4; do note "build $b: $(sha256sum "$D/$b/ladder_bench" 2>&1 | cut -c1-16)"; done

step correctness 40 " 0 failed" "$D/late/gpu_ladder_correctness" --rung streamk || true
note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
step batch 8 "PASS gpu_trace_batch" "$D/base/gpu_trace_batch" || true

sig() { grep -h "rung=streamk .*signature" "$1" 2>/dev/null | awk '{print $NF}'; }
for cfg in t0 t1 t2 t4 cluster rule; do
    case $cfg in
    t*) envs="WARPSTAGE_STREAMK_TILE=${cfg#t}"; shape=300x1000x1032 ;;
    cluster) envs="WARPSTAGE_STREAMK_TILE=4 WARPSTAGE_STREAMK_SPLIT=cluster"; shape=128x4096x4096 ;;
    rule) envs="WS_NONE=1"; shape=1024x1024x1024 ;;
    esac
    for b in base late; do
        # shellcheck disable=SC2086
        step "trace-$b-$cfg" 8 "passed, 0 failed" env $envs "$D/$b/gpu_ladder_trace" --rung streamk --shape $shape >/dev/null || true
    done
    sa=$(sig "$L/trace-base-$cfg.log"); sb=$(sig "$L/trace-late-$cfg.log")
    if [ -n "$sa" ] && [ "$sa" = "$sb" ]; then note "PASS signature late = base ($cfg $shape: $sb)"
    else note "FAIL signature late != base ($cfg $shape: late '$sb', base '$sa')"; fi
done

SHORT="--shape 1024x1024x1024 --shape 128x4096x4096 --shape 1x4096x4096 --shape 128x4096x14336 --shape 256x4096x4096"
SHORT="$SHORT --shape 512x4096x4096 --shape 128x14336x4096"
CTRL="--shape 4096x4096x4096 --shape 8192x8192x8192"
IDLE="--rung streamk --idle-cost --target-ms 4 --rest-ms 10 --min-iters 6"
# shellcheck disable=SC2086
for b in base late; do step "idle-$b" 35 "idle cost" "$D/$b/ladder_bench" $IDLE $SHORT $CTRL || true; done
ws_trace_sweep "$D" base late
# shellcheck disable=SC2086
step idle-x4 20 "idle cost" "$D/x4/ladder_bench" $IDLE $SHORT || true
# shellcheck disable=SC2086
step ntc-base 16 "overhead" "$D/base/ladder_bench" --rung streamk --target-ms 4 --rest-ms 10 --min-iters 6 --no-trace-clear $SHORT || true
note "idle cost (build | shape | rung | untraced ms | instrumented, not recording ms | overhead | traced ms | overhead | ok):"
for f in "$L"/idle-*.log; do
    b=$(basename "$f" .log)
    grep -E "^\| [0-9x]+ \| [a-z_]+ \| [0-9.]+ \|" "$f" 2>/dev/null | sed "s/^/${b#idle-} /" | tee -a "$S"
done
note "no trace clear (base; shape | rung | correct | untraced ms | TFLOP/s | % cuBLAS | traced ms | ... | trace overhead):"
grep -hE "^\| [0-9x]+ \| streamk \|" "$L/ntc-base.log" 2>/dev/null | cut -c1-160 | tee -a "$S"
cp "$L"/*.log "$OUT"/ 2>/dev/null
( cd "$OUT" && tar czf logs.tgz ./*.log && rm -f ./*.log )
note "done in $((SECONDS - T0)) s"
