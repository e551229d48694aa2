#!/usr/bin/env bash
# Issue 14, tracing cost of rungs 6-7, session 14 (s14-tracesmall): ONE call, BUDGET seconds of steps (default 150; the
# whole script, unpacking included, is killed at BUDGET + 10 s).
# Builds (dev machine, Release, no Qt, stripped; DIR/bins.tar.xz):
#   base = main df1a58b (/work/main/build/kchecks): a consumer k-step's four events staged as four records (eventsAt);
#   new  = branch s14-tracesmall: WS_PP_PACK_KSTEP=1, the four as ONE packed record (Warp::kStepAt, kEventKStep4)
#          when their gaps fit 16 bits; the decoder, checkTrace and gpu_ladder_trace's signature expand it;
#   mut/gpu_trace_batch_swap: new's gpu_trace_batch with the mutation tracesmall.kstep4_gaps_swapped planted.
# Steps: gpu_ladder_correctness --rung streamk --rung pingpong (new); gpu_trace_batch (new: eventsAt and kStepAt); the
# mutant must FAIL; gpu_ladder_trace of base and new at 300x1000x1032 and 1024^3 (both rungs; new's signature = base's);
# ladder_bench traced vs untraced over issue 14's 33 shapes (the list of scripts/device/s13-final.sh), base and new
# in two halves interleaved (base new | new base); the table; then, if time is left, --idle-cost (instrumented, not
# recording) of streamk at three small shapes, base and new.
# Device (run tool, carry ["build-s14-tracesmall"]): bash build-s14-tracesmall/s14-tracesmall.sh build-s14-tracesmall
set -u
if [ -z "${WS_S14TS_INNER:-}" ]; then
    WS_S14TS_INNER=1 exec timeout -k 2 $((${BUDGET:-150} + 10)) bash "$0" "$@"
fi
D=${1:-build-s14-tracesmall}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/base" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s14-tracesmall 150
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"
for b in base new; do note "build $b: $(sha256sum "$D/$b/ladder_bench" 2>&1 | cut -c1-16)"; done

step correctness 45 " 0 failed" "$D/new/gpu_ladder_correctness" --rung streamk --rung pingpong || true
note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
step batch 8 "PASS gpu_trace_batch" "$D/new/gpu_trace_batch" || true
grep -h "k-steps" "$L/batch.log" | head -2 | tee -a "$S"
timeout -k 2 8 "$D/mut/gpu_trace_batch_swap" >"$L/mutant-swap.log" 2>&1
if grep -q "^FAIL" "$L/mutant-swap.log"; then note "PASS mutant-swap caught | $(grep -m1 '^FAIL' "$L/mutant-swap.log" | cut -c1-160)"
else note "FAIL mutant-swap not caught | $(tail -1 "$L/mutant-swap.log" | cut -c1-160)"; fi
for s in 300x1000x1032 1024x1024x1024; do
    for b in base new; do
        step "trace-$b-$s" 10 "passed, 0 failed" "$D/$b/gpu_ladder_trace" --rung pingpong --rung streamk --shape "$s" || true
    done
    for r in pingpong streamk; do
        sb=$(grep -h "rung=$r .*signature" "$L/trace-base-$s.log" 2>/dev/null | awk '{print $NF}')
        sv=$(grep -h "rung=$r .*signature" "$L/trace-new-$s.log" 2>/dev/null | awk '{print $NF}')
        pk=$(grep -h "rung=$r .*packed k-step records" "$L/trace-new-$s.log" 2>/dev/null | awk '{print $NF}')
        if [ -n "$sb" ] && [ "$sb" = "$sv" ]; then note "PASS signature new = base ($r $s: $sv; new's packed records: $pk)"
        else note "FAIL signature new != base ($r $s: new '$sv', base '$sb')"; fi
    done
done

# issue 14's 33 shapes (scripts/device/s13-final.sh's SW), in two halves
H1=""
for x in 1024 2048 4096 6144 8192 12288 16384; do H1="$H1 --shape ${x}x${x}x${x}"; done
for m in 128 512; do
    for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do H1="$H1 --shape ${m}x${nk}"; done
done
H2=""
for m in 2048 8192; do
    for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do H2="$H2 --shape ${m}x${nk}"; done
done
H2="$H2 --shape 4096x4096x256 --shape 8192x8192x512 --shape 4096x4096x1024 --shape 1024x1024x16384 --shape 2048x2048x32768"
H2="$H2 --shape 4000x4000x4000 --shape 8191x8193x4104 --shape 1000x4096x1000 --shape 1x4096x4096 --shape 256x4096x4096"
BENCH="--rung pingpong --rung streamk --target-ms 10 --rest-ms 20 --min-iters 6"
for b in base new; do step sweep1-$b 16 "overhead" "$D/$b/ladder_bench" $BENCH $H1 || true; done
for b in new base; do step sweep2-$b 16 "overhead" "$D/$b/ladder_bench" $BENCH $H2 || true; done
TABLE=$(dirname "${BASH_SOURCE[0]}")/trace_overhead_table.py
[ -f "$TABLE" ] || TABLE=scripts/device/trace_overhead_table.py
timeout 5 python3 "$TABLE" --untraced-from new \
    $(for b in base new; do printf '%s=%s,%s ' "$b" "$L/sweep1-$b.log" "$L/sweep2-$b.log"; done) | tee "$L/table.txt" | tee -a "$S"
IDLE="--rung streamk --idle-cost --shape 1024x1024x1024 --shape 128x4096x4096 --shape 4096x4096x256 --target-ms 10 --rest-ms 20 --min-iters 6"
for b in base new; do step idle-$b 10 "overhead" "$D/$b/ladder_bench" $IDLE || true; done
for b in base new; do
    note "idle-cost $b:"; grep -E "^\| [0-9]" "$L/idle-$b.log" 2>/dev/null | tail -3 | tee -a "$S"
done
tar -C "$L" -czf "$OUT/logs.tar.gz" $(cd "$L" && ls *.log *.txt) 2>/dev/null
note "done in $((SECONDS - T0)) s, $(date -u +%FT%TZ)"
