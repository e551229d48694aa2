#!/usr/bin/env bash
# Issue 14, tracing cost of rungs 6-7, session 13 (s13-tracecost): ONE call, BUDGET seconds of steps (default 135; the
# whole script, unpacking included, is killed at BUDGET + 10 s).
# Builds (dev machine, Release, no Qt, stripped; DIR/bins.tar.xz):
#   base = main 48d93b6 (/work/main/build/kchecks): each wgmma's descriptors rebuilt, the ring's signed fill % S;
#   new  = branch s13-tracecost: WS_PP_DESC_ADVANCE=1 (descriptors advanced by integer adds), WS_PP_UNSIGNED_FILL=1;
#   mut/gpu_ladder_correctness_{desc,slot}: new with the mutations tracecost.desc_advance_b_by_16_bytes and
#   tracecost.unsigned_slot_masked planted (scripts/mutations.txt);
#   cubin/{base,new}.{pingpong,streamk}.cubin: the two rungs' device code, for the SASS walk with CUDA 13's nvdisasm.
# Steps: gpu_ladder_correctness --rung streamk --rung pingpong (new); the two mutants must FAIL (shapes that run the
# S = 6 configurations for the slot mutant); gpu_trace_batch (new); gpu_ladder_trace of base and new at 300x1000x1032
# (both rungs; new's signature = base's); ladder_bench traced vs untraced over the 33 shapes, base and new in two
# halves interleaved (base new | new base); the table; the SASS walk (scripts/kernels/sass_walk.py) of both builds.
# Device (run tool, carry ["build-s13tc"]): bash build-s13tc/s13-tracecost.sh build-s13tc
set -u
if [ -z "${WS_S13TC_INNER:-}" ]; then
    WS_S13TC_INNER=1 exec timeout -k 2 $((${BUDGET:-135} + 10)) bash "$0" "$@"
fi
D=${1:-build-s13tc}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/base" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s13-tracecost 135
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"
for b in base new; do note "build $b: $(sha256sum "$D/$b/ladder_bench" 2>&1 | cut -c1-16)"; done

step correctness 45 " 0 failed" "$D/new/gpu_ladder_correctness" --rung streamk --rung pingpong || true
note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
mutant() {  # mutant NAME ARGS...: must report a failure (a FAIL line; it may be stopped at its limit once it has one)
    local m=$1 rc
    shift
    timeout -k 2 12 "$D/mut/gpu_ladder_correctness_$m" "$@" >"$L/mutant-$m.log" 2>&1
    rc=$?
    if grep -q "^FAIL" "$L/mutant-$m.log"; then
        note "PASS mutant-$m caught: rc=$rc | $(grep -m1 '^FAIL' "$L/mutant-$m.log" | cut -c1-160)"
    else
        note "FAIL mutant-$m not caught: rc=$rc | $(tail -1 "$L/mutant-$m.log" | cut -c1-160)"
    fi
}
mutant desc --rung pingpong --rung streamk --shape 1024x1024x1024 --no-partial
# kTiles[1] (S = 6, pair) at 512x4096x4096, kTiles[2] (S = 6, alone) at 128x14336x4096 (sk::chooseTile)
mutant slot --rung streamk --shape 512x4096x4096 --shape 128x14336x4096 --no-partial
step batch 8 "PASS gpu_trace_batch" "$D/new/gpu_trace_batch" || true
s=300x1000x1032
for b in base new; do
    step "trace-$b" 8 "passed, 0 failed" "$D/$b/gpu_ladder_trace" --rung pingpong --rung streamk --shape "$s" || true
done
for r in pingpong streamk; do
    sb=$(grep -h "rung=$r .*signature" "$L/trace-base.log" 2>/dev/null | awk '{print $NF}')
    sv=$(grep -h "rung=$r .*signature" "$L/trace-new.log" 2>/dev/null | awk '{print $NF}')
    if [ -n "$sb" ] && [ "$sb" = "$sv" ]; then note "PASS signature new = base ($r $s: $sv)"
    else note "FAIL signature new != base ($r $s: new '$sv', base '$sb')"; fi
done

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
WALK=$(dirname "${BASH_SOURCE[0]}")/sass_walk.py
[ -f "$WALK" ] || WALK=scripts/kernels/sass_walk.py
if command -v nvdisasm >/dev/null && [ "$(left)" -ge 8 ]; then
    for c in "$D"/cubin/*.cubin; do timeout 20 nvdisasm -c "$c" >"$L/$(basename "$c" .cubin).sass" 2>&1; done
    timeout 20 python3 "$WALK" "$L"/*.sass >"$L/walk.txt" 2>&1
    sed -E "s/_ZN2ws4kern[0-9]*r_[a-z]*[0-9]*/ /; s/EEEv14CUtensorMap\\w*//; s/E14CUtensorMap\\w*//" "$L/walk.txt" | tee -a "$S"
else
    note "SKIP sass walk ($(left) s left, nvdisasm: $(command -v nvdisasm))"
fi
tar -C "$L" -czf "$OUT/logs.tar.gz" $(cd "$L" && ls *.log *.txt) 2>/dev/null
note "done in $((SECONDS - T0)) s, $(date -u +%FT%TZ)"
