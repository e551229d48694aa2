#!/usr/bin/env bash
# Issue 14, tracing cost, session 14 (s14-tracestruct): why stream-K's 128x64 configuration (kTiles[4]) still costs
# +17 % when its traced kernel is launched WITHOUT a buffer (ladder_bench --idle-cost). ONE call, BUDGET seconds of
# steps (default 130; the whole script, unpacking included, is killed at BUDGET + 10 s).
# Builds (dev machine, Release, no Qt, stripped; DIR/bins.tar.xz, one tar | xz -9e):
#   base    = main fec2d32 (/work/main/build/kchecks): ladder_bench, gpu_ladder_trace;
#   new     = branch s14-tracestruct: main's kernels (every cubin main's) + two host-only experiments:
#             WARPSTAGE_PINGPONG_IDLE=traced (pingpong's --idle-cost launches the traced body with the null buffer, not
#             the dispatch kernel's untraced body) and WARPSTAGE_EXP_UNTRACED_SMEM=BYTES (the untraced streamk kernel
#             launched with BYTES more dynamic shared memory); ladder_bench, gpu_ladder_correctness, gpu_trace_batch,
#             gpu_ladder_trace;
#   noclock = new + -DWS_TRACE_EXPERIMENT_NO_CLOCK (every clock read a constant);
#   prod1   = new + -DWS_PP_TRACE_STRUCT_EXP=1 (traced producer loop on thread 0 alone) [+ gpu_ladder_trace];
#   idle2   = new + -DWS_PP_TRACE_STRUCT_EXP=2 (no buffer: warps 1-3 leave after setmaxnreg, as untraced);
#   norec   = new + -DWS_PP_TRACE_STRUCT_EXP=12 (no k-step records, consumer or producer);
#   all     = new + -DWS_PP_TRACE_STRUCT_EXP=15 -DWS_TRACE_EXPERIMENT_NO_CLOCK.
# Steps: gpu_ladder_correctness --rung streamk --quick (new); gpu_trace_batch (new); gpu_ladder_trace base / new / prod1
# at 300x1000x1032 and 1024^3 (signatures = base's); --idle-cost of streamk at kTiles[4]'s four shapes for every build;
# base and new also at four other shapes; pingpong's traced-body idle cost (new); the untraced kernel with +12 KB of
# shared memory (new); ncu of base at 1024^3 (untraced, traced, idle launches of kTiles[4]); the table.
# Device (run tool, carry ["build-s14-tracestruct"]): BUDGET=140 bash build-s14-tracestruct/s14-tracestruct.sh build-s14-tracestruct
# (run 2026-12-02 01:01 UTC: 30 s wall; docs/benchmarks/tracing-cost.md, session 14, s14-tracestruct)
set -u
if [ -z "${WS_S14TST_INNER:-}" ]; then
    WS_S14TST_INNER=1 exec timeout -k 2 $((${BUDGET:-130} + 10)) bash "$0" "$@"
fi
D=${1:-build-s14-tracestruct}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/base" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s14-tracestruct 130
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"
for b in base new noclock prod1 idle2 norec all; do note "build $b: $(sha256sum "$D/$b/ladder_bench" 2>&1 | cut -c1-16)"; done

step correctness 30 " 0 failed" "$D/new/gpu_ladder_correctness" --rung streamk --quick || true
step batch 8 "PASS gpu_trace_batch" "$D/new/gpu_trace_batch" || true
for s in 300x1000x1032 1024x1024x1024; do
    for b in base new prod1; do
        step "trace-$b-$s" 10 "passed, 0 failed" "$D/$b/gpu_ladder_trace" --rung pingpong --rung streamk --shape "$s" || true
    done
    for b in new prod1; do
        for r in pingpong streamk; do
            sb=$(grep -h "rung=$r .*signature" "$L/trace-base-$s.log" 2>/dev/null | awk '{print $NF}')
            sv=$(grep -h "rung=$r .*signature" "$L/trace-$b-$s.log" 2>/dev/null | awk '{print $NF}')
            if [ -n "$sb" ] && [ "$sb" = "$sv" ]; then note "PASS signature $b = base ($r $s: $sv)"
            else note "FAIL signature $b != base ($r $s: $b '$sv', base '$sb')"; fi
        done
    done
done

K4="--shape 1024x1024x1024 --shape 128x4096x4096 --shape 1x4096x4096 --shape 256x4096x4096"
OTHER="--shape 4096x4096x4096 --shape 2048x4096x14336 --shape 4096x4096x256 --shape 1000x4096x1000"
IDLE="--idle-cost --target-ms 4 --rest-ms 10 --min-iters 6"
for b in base new; do step "idle-$b" 24 "idle cost" "$D/$b/ladder_bench" --rung streamk $IDLE $K4 $OTHER || true; done
for b in noclock prod1 idle2 norec all; do step "idle-$b" 12 "idle cost" "$D/$b/ladder_bench" --rung streamk $IDLE $K4 || true; done
step idle-pp-traced 12 "idle cost" env WARPSTAGE_PINGPONG_IDLE=traced "$D/new/ladder_bench" --rung pingpong $IDLE \
    --shape 1024x1024x1024 --shape 128x4096x4096 --shape 4096x4096x256 --shape 4096x4096x4096 || true
step idle-smem 8 "idle cost" env WARPSTAGE_EXP_UNTRACED_SMEM=12288 "$D/new/ladder_bench" --rung streamk $IDLE \
    --shape 1024x1024x1024 --shape 128x4096x4096 || true
note "idle cost (build | shape | rung | untraced ms | instrumented, not recording ms | overhead | traced ms | overhead | ok):"
for f in "$L"/idle-*.log; do
    b=$(basename "$f" .log)
    grep -E "^\| [0-9x]+ \| [a-z_]+ \| [0-9.]+ \|" "$f" 2>/dev/null | sed "s/^/${b#idle-} /" | tee -a "$S"  # idle rows
done
# ncu (clocks not locked) of base's kTiles[4] kernels at 1024^3: launches 19 (untraced), 20-23 (traced) and 24 (the
# first instrumented launch without a buffer) of gemmStreamk<*, 4> in ladder_bench's order at 1 iteration per batch
if command -v ncu >/dev/null && [ "$(left)" -ge 25 ]; then
    M="smsp__inst_executed.sum,sm__cycles_active.avg,gpc__cycles_elapsed.max,lts__t_bytes.sum,smsp__issue_active.avg.pct_of_peak_sustained_active"
    M="$M,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio"
    step ncu 30 "" ncu --clock-control none --kernel-name-base mangled -k "regex:gemmStreamkILb[01]ELi4E" \
        --launch-skip 19 --launch-count 6 --section SpeedOfLight --section LaunchStats --metrics "$M" \
        "$D/base/ladder_bench" --rung streamk --shape 1024x1024x1024 --idle-cost --target-ms 0.01 --min-iters 1 \
        --max-iters 1 --rest-ms 0 || true
    grep -E "gemmStreamk|Duration|Elapsed Cycles|SM Active Cycles|Registers Per|Dynamic Shared|Shared Memory Config|smsp__inst_executed.sum|sm__cycles_active|lts__t_bytes|issue_active|stalled_[a-z_]*_per_issue_active.ratio +[a-z/]* +[0-9.]*[1-9]" \
        "$L/ncu.log" | sed -E 's/_ZN2ws4kern9r_streamk11(gemmStreamkILb[01]ELi4E)\S*/\1/' | head -150 >"$OUT/ncu-summary.txt"
else
    note "SKIP ncu ($(left) s left, ncu: $(command -v ncu))"
fi
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log 2>/dev/null)
note "== end ($(left) s left)"
