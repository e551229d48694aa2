#!/usr/bin/env bash
# Issue 14, tracing cost of rungs 6-7, session 10 (s10-tracecost): ONE call, BUDGET seconds of steps (default 78;
# the whole script, unpacking included, is killed at BUDGET + 10 = 88 s).
# Builds (made on the dev machine by scripts/device/s10-tracecost-build.sh; Release, no Qt, stripped;
# DIR/<build>/{ladder_bench,gpu_ladder_trace,gpu_ladder_correctness,gpu_trace_relay}, packed in DIR/bins.tar.xz):
#   base  = the branch's defaults: main's kernels (cubins byte-identical to main cd2bdfb's);
#   lean  = -DWS_PP_TRACE_LEAN_START=1: main's staged engine without the header loads before the ring init (thread 0:
#           7 dependent global loads before the first TMA on main), the CTA record written by warp 1 (beginAt);
#   wcopy = -DWS_PP_TRACE_LEAN_START=2: lean, and each warp's flush copied by its lanes 16-31 (ld.shared/st.global:
#           no fence.proxy.async = MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC, no bulk copy, no wait for its reads);
#   rend  = -DWS_PP_TRACE_RELAY=2: session 9's relay, with each source copying its own last partial half and writing
#           its region header at its end (in parallel) instead of the relay copying 11 halves in turn.
# (session 9's relay, -DWS_PP_TRACE_RELAY=1, is not rebuilt: its cost is in docs/benchmarks.md, session 9.)
# Steps: gpu_trace_relay (rend's build: the relay with end() and with endOwn(), every event of 12 warps, overflow,
# mismatch, null buffer); gpu_ladder_trace of base, lean, wcopy, rend at 1000x4096x1000 (pingpong, streamk): every trace
# sane AND the same signature as base (counts, roles, every event but its clock); ladder_bench traced vs untraced,
# pingpong + streamk, the 10 shapes of s9-traceflush2 in two halves, interleaved base lean wcopy rend | rend wcopy
# lean base;
# streamk --idle-cost (the traced kernel, null buffer) at 1024^3 and 128x4096x4096 if time is left.
# Device (run tool, carry ["build-tracecost"]): bash build-tracecost/s10-tracecost.sh build-tracecost
# Success: "PASS relaytest", "PASS trace-<build>" x4, "PASS signature <build> = base" for lean, wcopy, rend (pingpong
# and streamk), PASS sweep lines, and the table: lean / wcopy / rend geomean (max) beside base's.
set -u
if [ -z "${WS_S10TC_INNER:-}" ]; then  # its own timeout around everything
    WS_S10TC_INNER=1 exec timeout -k 2 $((${BUDGET:-78} + 10)) bash "$0" "$@"
fi
D=${1:-build-tracecost}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/base" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s10-tracecost 78
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"
for b in base lean wcopy rend; do note "build $b: $(sha256sum "$D/$b/ladder_bench" 2>&1 | cut -c1-16)"; done

step relaytest 8 "PASS gpu_trace_relay" "$D/rend/gpu_trace_relay"
grep -hE "^(PASS|FAIL) relay" "$L/relaytest.log" | head -12 | sed 's/^/    /' | tee -a "$S"
for b in base lean wcopy rend; do
    step trace-$b 6 "passed, 0 failed" "$D/$b/gpu_ladder_trace" --rung pingpong --rung streamk --shape 1000x4096x1000 || true
done
for r in pingpong streamk; do
    sb=$(grep -h "rung=$r .*signature" "$L/trace-base.log" 2>/dev/null | awk '{print $NF}')
    for b in lean wcopy rend; do
        sv=$(grep -h "rung=$r .*signature" "$L/trace-$b.log" 2>/dev/null | awk '{print $NF}')
        if [ -n "$sb" ] && [ "$sb" = "$sv" ]; then note "PASS signature $b = base ($r 1000x4096x1000: $sv)"
        else note "FAIL signature $b != base ($r 1000x4096x1000: $b '$sv', base '$sb')"; fi
    done
    grep -h "rung=$r .*events by kind" "$L"/trace-{base,lean,wcopy,rend}.log 2>/dev/null | sed 's/^/    /' | tee -a "$S"
done

H1="--shape 1024x1024x1024 --shape 2048x2048x2048 --shape 4096x4096x4096 --shape 8192x8192x8192 --shape 128x4096x4096"
H2="--shape 2048x4096x14336 --shape 4096x4096x1024 --shape 8192x8192x512 --shape 1000x4096x1000 --shape 8191x8193x4104"
BENCH="--rung pingpong --rung streamk --target-ms 20 --rest-ms 40 --min-iters 6"
for b in base lean wcopy rend; do step sweep1-$b 10 "overhead" "$D/$b/ladder_bench" $BENCH $H1 || true; done
for b in rend wcopy lean base; do step sweep2-$b 10 "overhead" "$D/$b/ladder_bench" $BENCH $H2 || true; done
if [ "$(left)" -ge 6 ]; then
    step idle-streamk 8 "idle cost" "$D/base/ladder_bench" --rung streamk --idle-cost --target-ms 20 --rest-ms 40 \
        --min-iters 6 --shape 1024x1024x1024 --shape 128x4096x4096 || true
    grep -E "idle cost:" "$L/idle-streamk.log" | sed 's/^/    /' | tee -a "$S"
else
    note "SKIP idle-streamk ($(left) s left)"
fi
TABLE=$(dirname "${BASH_SOURCE[0]}")/trace_overhead_table.py
[ -f "$TABLE" ] || TABLE=scripts/device/trace_overhead_table.py
timeout 5 python3 "$TABLE" --untraced-from base \
    $(for b in base lean wcopy rend; do printf '%s=%s,%s ' "$b" "$L/sweep1-$b.log" "$L/sweep2-$b.log"; done) | tee -a "$S"
tar -C "$L" -czf "$OUT/logs.tar.gz" $(cd "$L" && ls *.log) 2>/dev/null
note "done in $((SECONDS - T0)) s, $(date -u +%FT%TZ)"
