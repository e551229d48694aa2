#!/usr/bin/env bash
# Issue 14, tracing cost of rungs 6-7, session 11 (s11-tracecost): ONE call, BUDGET seconds of steps (default 178; the
# whole script, unpacking included, is killed at BUDGET + 10 s).
# Builds (made on the dev machine by scripts/device/s11-tracecost-build.sh; Release, no Qt, stripped; DIR/bins.tar.xz):
#   base = main's kernels (each consumer k-step stores its four events one by one: clock, st.shared, flush test each);
#   new  = this branch: the k-step takes only clock reads where its phases begin and stages the events together after
#          the wgmma issue (Warp::eventsAt: one address, one flush test); the producer's two events likewise.
# Steps: gpu_trace_batch (new) passes, and fails with each planted mutation (mut/); gpu_ladder_trace of base and new at
# 1000x4096x1000 and 1024^3 (pingpong, streamk): every trace sane AND new's signature (counts, roles, every event
# but its clock) = base's; ladder_bench traced vs untraced, pingpong + streamk, the ten shapes of s10 in two halves,
# interleaved base new | new base; streamk --idle-cost (traced kernel, null buffer) at 1024^3 and 128x4096x4096 for
# base and new; the table; if new's geometric mean is below base's for a rung, the 33-shape sweep of new then base;
# compute-sanitizer memcheck of new's traced streamk at 1024^3 if time is left.
# Device (run tool, carry ["build-tracecost"]): bash build-tracecost/s11-tracecost.sh build-tracecost
# Success: "PASS batch", "PASS mutant-fill caught", "PASS mutant-addr caught", "PASS trace-{base,new}-{1000,1024}",
# "PASS signature new = base" (4 lines), PASS sweep lines, the table (new beside base), idle-cost lines.
set -u
if [ -z "${WS_S11TC_INNER:-}" ]; then  # its own timeout around everything
    WS_S11TC_INNER=1 exec timeout -k 2 $((${BUDGET:-178} + 10)) bash "$0" "$@"
fi
D=${1:-build-tracecost}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/base" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s11-tracecost 178
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"
for b in base new; do note "build $b: $(sha256sum "$D/$b/ladder_bench" 2>&1 | cut -c1-16)"; done

step batch 8 "PASS gpu_trace_batch" "$D/new/gpu_trace_batch" || true
grep -hE "^(PASS|FAIL) (staged|direct)" "$L/batch.log" | head -8 | sed 's/^/    /' | tee -a "$S"
for m in fill addr; do  # the planted mutations must be caught
    timeout -k 2 8 "$D/mut/gpu_trace_batch_$m" >"$L/mutant-$m.log" 2>&1
    rc=$?
    if [ $rc = 1 ] && grep -q "^FAIL gpu_trace_batch" "$L/mutant-$m.log"; then
        note "PASS mutant-$m caught: rc=1 | $(grep -m2 '^FAIL' "$L/mutant-$m.log" | tr '\n' ' ' | cut -c1-200)"
    else
        note "FAIL mutant-$m not caught: rc=$rc | $(tail -1 "$L/mutant-$m.log")"
    fi
done
for s in 1000x4096x1000 1024x1024x1024; do
    for b in base new; do
        step "trace-$b-${s%%x*}" 8 "passed, 0 failed" "$D/$b/gpu_ladder_trace" --rung pingpong --rung streamk --shape "$s" || true
    done
    for r in pingpong streamk; do
        sb=$(grep -h "rung=$r .*signature" "$L/trace-base-${s%%x*}.log" 2>/dev/null | awk '{print $NF}')
        sv=$(grep -h "rung=$r .*signature" "$L/trace-new-${s%%x*}.log" 2>/dev/null | awk '{print $NF}')
        if [ -n "$sb" ] && [ "$sb" = "$sv" ]; then note "PASS signature new = base ($r $s: $sv)"
        else note "FAIL signature new != base ($r $s: new '$sv', base '$sb')"; fi
        grep -h "rung=$r .*events by kind" "$L/trace-base-${s%%x*}.log" "$L/trace-new-${s%%x*}.log" 2>/dev/null | sed 's/^/    /' | tee -a "$S"
    done
done

H1="--shape 1024x1024x1024 --shape 2048x2048x2048 --shape 4096x4096x4096 --shape 8192x8192x8192 --shape 128x4096x4096"
H2="--shape 2048x4096x14336 --shape 4096x4096x1024 --shape 8192x8192x512 --shape 1000x4096x1000 --shape 8191x8193x4104"
BENCH="--rung pingpong --rung streamk --target-ms 20 --rest-ms 40 --min-iters 6"
for b in base new; do step sweep1-$b 12 "overhead" "$D/$b/ladder_bench" $BENCH $H1 || true; done
for b in new base; do step sweep2-$b 12 "overhead" "$D/$b/ladder_bench" $BENCH $H2 || true; done
for b in base new; do
    step idle-$b 9 "idle cost" "$D/$b/ladder_bench" --rung streamk --idle-cost --target-ms 20 --rest-ms 40 \
        --min-iters 6 --shape 1024x1024x1024 --shape 128x4096x4096 || true
    grep -hE "idle cost:" "$L/idle-$b.log" | sed "s/^/    $b /" | tee -a "$S"
done
TABLE=$(dirname "${BASH_SOURCE[0]}")/trace_overhead_table.py
[ -f "$TABLE" ] || TABLE=scripts/device/trace_overhead_table.py
timeout 5 python3 "$TABLE" --untraced-from base \
    $(for b in base new; do printf '%s=%s,%s ' "$b" "$L/sweep1-$b.log" "$L/sweep2-$b.log"; done) | tee "$L/table.txt" | tee -a "$S"
# the 33-shape sweep when new is cheaper than base for a rung (geometric means of the table's last block)
wins=$(awk -F'|' '/^\| (pingpong|streamk) \|/ { b=$3; n=$4; sub(/ %.*/,"",b); sub(/ %.*/,"",n); if (n+0 < b+0) w++ } END { print w+0 }' "$L/table.txt")
SW33=""
for x in 1024 2048 4096 6144 8192 12288 16384; do SW33="$SW33 --shape ${x}x${x}x${x}"; done
for m in 128 512 2048 8192; do
    for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do SW33="$SW33 --shape ${m}x${nk}"; done
done
SW33="$SW33 --shape 4096x4096x256 --shape 8192x8192x512 --shape 4096x4096x1024 --shape 1024x1024x16384 --shape 2048x2048x32768"
SW33="$SW33 --shape 4000x4000x4000 --shape 8191x8193x4104 --shape 1000x4096x1000 --shape 1x4096x4096 --shape 256x4096x4096"
if [ "$wins" -ge 1 ]; then
    note "new below base for $wins rung(s): the 33-shape sweep"
    for b in new base; do
        if [ "$(left)" -ge 30 ]; then step sweep33-$b 34 "overhead" "$D/$b/ladder_bench" $BENCH $SW33 || true
        else note "SKIP sweep33-$b ($(left) s left)"; fi
    done
    timeout 5 python3 "$TABLE" --untraced-from new new="$L/sweep33-new.log" base="$L/sweep33-base.log" | tee -a "$S"
else
    note "SKIP sweep33: new is not below base for either rung"
fi
if [ "$(left)" -ge 20 ]; then
    step sanitizer 18 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck "$D/new/gpu_ladder_trace" --rung streamk \
        --shape 1024x1024x1024 || true
else
    note "SKIP sanitizer ($(left) s left)"
fi
tar -C "$L" -czf "$OUT/logs.tar.gz" $(cd "$L" && ls *.log *.txt) 2>/dev/null
note "done in $((SECONDS - T0)) s, $(date -u +%FT%TZ)"
