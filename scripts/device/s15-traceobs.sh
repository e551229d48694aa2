#!/usr/bin/env bash
# Issue 14, tracing cost of stream-K, session 15 (s15-traceobs): ONE call, BUDGET seconds of steps (default 230; the
# whole script, unpacking included, is killed at BUDGET + 10 s).
# Builds (dev machine, Release, no Qt, stripped; DIR/bins.tar.xz):
#   base = main's /work/main/build/kchecks (ladder_bench, gpu_ladder_trace): stream-K's consumers record their k-steps
#          (s14-tracesmall's packed kEventKStep4 records);
#   new  = branch s15-traceobs (WS_SK_OBSERVE_KSTEPS=1, the default): two observer warps stamp the consumers' k-steps
#          from the ring's barriers; the consumers record only their per-unit events (pingpong_body.cuh's Observe);
#   fid  = new's gpu_ladder_trace built with -DWS_SK_OBSERVE_KSTEPS=2 (consumers record AND observers stamp: --fidelity);
#   mut  = new's gpu_ladder_trace with traceobs.observer_wrong_warpgroup planted (must FAIL).
# Steps: correctness of stream-K (new; traced = untraced bit for bit; checkTrace merges the stamps and fails on a k-step
# without them); gpu_trace_batch (new); gpu_ladder_trace of base and new for every tile configuration
# (WARPSTAGE_STREAMK_TILE=0..7) and the split modes (cluster, splitk) with the signature of new = base's; the mutant;
# the fidelity dumps (rebuilt k-steps against the consumers' own, same launch); both builds' dumps read by one reader
# (consumer phase shares); ladder_bench traced vs untraced over lib.sh's 33 shapes, base and new in two halves
# interleaved (ws_trace_sweep); --idle-cost of streamk at kTiles[4]'s four shapes; the table last.
# Call 2 (03:5x UTC): BUILDS="base new norelay poll" (new = three observers, warp 3 the data, warps 1-2 one record
# per fill; norelay = new with -DWS_PP_OBSERVE_RELAY=0; poll = new with -DWS_PP_OBSERVE_POLL=1; ladder_bench only)
# FIDB="fid fidpoll" (fidpoll = fid with the poll) CFGS="t0 t4 t7 cluster"; a binary the pack lacks skips its step
# (base's gpu_ladder_trace: the signatures are then checked against call 1's base values, SIGREF_<cfg>).
# Device (run tool, carry ["build-s15-traceobs"]): bash build-s15-traceobs/s15-traceobs.sh build-s15-traceobs
set -u
if [ -z "${WS_S15TO_INNER:-}" ]; then
    WS_S15TO_INNER=1 exec timeout -k 2 $((${BUDGET:-230} + 10)) bash "$0" "$@"
fi
D=${1:-build-s15-traceobs}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/base" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s15-traceobs 230
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"
for b in base new; do note "build $b: $(sha256sum "$D/$b/ladder_bench" 2>&1 | cut -c1-16)"; done

step correctness 45 " 0 failed" "$D/new/gpu_ladder_correctness" --rung streamk || true
note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
[ -x "$D/new/gpu_trace_batch" ] && { step batch 8 "PASS gpu_trace_batch" "$D/new/gpu_trace_batch" || true; }

# every tile configuration and the split modes: new's trace checks pass and its signature is base's
sig() { grep -h "rung=streamk .*signature" "$1" 2>/dev/null | awk '{print $NF}'; }
BUILDS=${BUILDS:-base new}
for cfg in ${CFGS:-t0 t1 t2 t3 t4 t5 t6 t7 cluster splitk}; do
    case $cfg in
    t*) envs="WARPSTAGE_STREAMK_TILE=${cfg#t}"; shape=300x1000x1032 ;;
    *) envs="WARPSTAGE_STREAMK_TILE=4 WARPSTAGE_STREAMK_SPLIT=$cfg"; shape=128x4096x4096 ;;
    esac
    for b in base new; do
        [ -x "$D/$b/gpu_ladder_trace" ] || continue
        # shellcheck disable=SC2086
        step "trace-$b-$cfg" 8 "passed, 0 failed" env $envs "$D/$b/gpu_ladder_trace" --rung streamk --shape $shape >/dev/null || true
    done
    ref="SIGREF_$cfg"
    sa=$(sig "$L/trace-base-$cfg.log"); sa=${sa:-${!ref:-}}; sb=$(sig "$L/trace-new-$cfg.log")
    if [ -n "$sa" ] && [ "$sa" = "$sb" ]; then note "PASS signature new = base ($cfg $shape: $sb)"
    else note "FAIL signature new != base ($cfg $shape: new '$sb', base '$sa')"; fi
    note "    $(grep -h "observer stamps" "$L/trace-new-$cfg.log" | head -1 | cut -c1-150)"
done

timeout -k 2 10 "$D/mut/gpu_ladder_trace" --rung streamk --shape 1024x1024x1024 >"$L/mutant-g0.log" 2>&1
if grep -q "^FAIL" "$L/mutant-g0.log"; then note "PASS mutant-g0 caught | $(grep -m1 '^FAIL' "$L/mutant-g0.log" | cut -c1-160)"
else note "FAIL mutant-g0 not caught | $(tail -1 "$L/mutant-g0.log" | cut -c1-160)"; fi

# fidelity: the rebuilt k-steps against the consumers' own, in the same launch (fid build)
for fb in ${FIDB:-fid}; do
    for s in ${FIDS:-1024x1024x1024 128x4096x4096 4096x4096x256 4096x4096x4096}; do
        # (the fid build's own checkTrace fails by design: its consumers' k-steps are there twice once the stamps are merged)
        step "$fb-dump-$s" 10 "trace buffer written" "$D/$fb/gpu_ladder_trace" --rung streamk --shape $s --dump "$L/$fb-$s-" || true
        step "$fb-$s" 10 "FIDELITY" "$D/new/gpu_ladder_trace" --fidelity "$L/$fb-$s-streamk.bin" || true
        grep -h "^FIDELITY" "$L/$fb-$s.log" | sed "s|$L/||" | cut -c1-220 | tee -a "$S"
    done
done
# both builds' dumps through one reader (new's): consumer phase shares of two launches
if [ -x "$D/base/gpu_ladder_trace" ]; then
    for b in base new; do
        step "dump-$b" 10 "passed, 0 failed" "$D/$b/gpu_ladder_trace" --rung streamk --shape 1024x1024x1024 --dump "$L/dump-$b-" || true
    done
    step "read" 10 "phase time" "$D/new/gpu_ladder_trace" --read "$L/dump-base-streamk.bin" "$L/dump-new-streamk.bin" || true
    grep -h "phase time\|signature" "$L/read.log" | sed "s|$L/||" | cut -c1-260 | tee -a "$S"
fi
rm -f "$L"/*.bin

IDLE="--rung streamk --idle-cost --shape 1024x1024x1024 --shape 128x4096x4096 --shape 1x4096x4096 --shape 256x4096x4096 --target-ms 10 --rest-ms 20 --min-iters 6"
# shellcheck disable=SC2086
for b in $BUILDS; do step idle-$b 10 "overhead" "$D/$b/ladder_bench" $IDLE || true; done
for b in $BUILDS; do
    note "idle-cost $b (shape | rung | untraced | instrumented not recording | overhead | traced | overhead | correct):"
    grep -E "^\| [0-9]" "$L/idle-$b.log" 2>/dev/null | tail -4 | tee -a "$S"
done
# lib.sh's 33 shapes in two halves (16 | 17), base and new interleaved: base new | new base; the table last
# shellcheck disable=SC2086
ws_trace_sweep "$D" $BUILDS
tar -C "$L" -czf "$OUT/logs.tar.gz" $(cd "$L" && ls *.log *.txt) 2>/dev/null
note "done in $((SECONDS - T0)) s, $(date -u +%FT%TZ)"
