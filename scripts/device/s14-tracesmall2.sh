#!/usr/bin/env bash
# Issue 14, tracing cost of rungs 6-7, session 14 (s14-tracesmall), second call: BUDGET seconds of steps (default 100;
# the whole script, unpacking included, is killed at BUDGET + 10 s).
# Builds (dev machine, Release, no Qt, stripped; DIR/bins.tar.xz):
#   base  = main df1a58b (/work/main/build/kchecks);
#   pack  = the first call's new build: WS_PP_PACK_KSTEP=1 (packed k-step records), WS_PP_TRACE_QUICK_END absent;
#   quick = pack + WS_PP_TRACE_QUICK_END=1: each warp's end waits only for its last copies' reads
#           (cp.async.bulk.wait_group.read 0), the CTA's end record without a second header load;
#   cubin/{base,quick}.{pingpong,streamk}.cubin (no -lineinfo) for the SASS walk with CUDA 13's nvdisasm.
# Steps: gpu_ladder_correctness --rung streamk --rung pingpong (quick); gpu_trace_batch (quick); gpu_ladder_trace of base
# and quick at 300x1000x1032 and 1024^3 (quick's signature = base's); ladder_bench traced vs untraced over issue 14's 33
# shapes, base, pack and quick in two halves interleaved (base pack quick | quick pack base); the table; --idle-cost of
# both rungs at four small shapes (quick); the SASS walk.
# Device (run tool, carry ["build-s14-tracesmall"]): bash build-s14-tracesmall/s14-tracesmall2.sh build-s14-tracesmall
set -u
if [ -z "${WS_S14TS2_INNER:-}" ]; then
    WS_S14TS2_INNER=1 exec timeout -k 2 $((${BUDGET:-100} + 10)) bash "$0" "$@"
fi
D=${1:-build-s14-tracesmall}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/base" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s14-tracesmall2 100
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"
for b in base pack quick; do note "build $b: $(sha256sum "$D/$b/ladder_bench" 2>&1 | cut -c1-16)"; done

step correctness 45 " 0 failed" "$D/quick/gpu_ladder_correctness" --rung streamk --rung pingpong || true
note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
step batch 8 "PASS gpu_trace_batch" "$D/quick/gpu_trace_batch" || true
for s in 300x1000x1032 1024x1024x1024; do
    for b in base quick; do
        step "trace-$b-$s" 10 "passed, 0 failed" "$D/$b/gpu_ladder_trace" --rung pingpong --rung streamk --shape "$s" || true
    done
    for r in pingpong streamk; do
        sb=$(grep -h "rung=$r .*signature" "$L/trace-base-$s.log" 2>/dev/null | awk '{print $NF}')
        sv=$(grep -h "rung=$r .*signature" "$L/trace-quick-$s.log" 2>/dev/null | awk '{print $NF}')
        if [ -n "$sb" ] && [ "$sb" = "$sv" ]; then note "PASS signature quick = base ($r $s: $sv)"
        else note "FAIL signature quick != base ($r $s: quick '$sv', base '$sb')"; fi
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
for b in base pack quick; do step sweep1-$b 16 "overhead" "$D/$b/ladder_bench" $BENCH $H1 || true; done
for b in quick pack base; do step sweep2-$b 16 "overhead" "$D/$b/ladder_bench" $BENCH $H2 || true; done
TABLE=$(dirname "${BASH_SOURCE[0]}")/trace_overhead_table.py
[ -f "$TABLE" ] || TABLE=scripts/device/trace_overhead_table.py
timeout 5 python3 "$TABLE" --untraced-from quick \
    $(for b in base pack quick; do printf '%s=%s,%s ' "$b" "$L/sweep1-$b.log" "$L/sweep2-$b.log"; done) | tee "$L/table.txt" | tee -a "$S"
IDLE="--rung pingpong --rung streamk --idle-cost --shape 1024x1024x1024 --shape 128x4096x4096 --shape 4096x4096x256 --shape 1000x4096x1000 --target-ms 10 --rest-ms 20 --min-iters 6"
step idle-quick 14 "overhead" "$D/quick/ladder_bench" $IDLE || true
note "idle-cost quick (shape | rung | untraced | instrumented not recording | overhead | traced | overhead | correct):"
grep -E "^\| [0-9]" "$L/idle-quick.log" 2>/dev/null | tail -8 | tee -a "$S"
WALK=$(dirname "${BASH_SOURCE[0]}")/sass_walk.py
[ -f "$WALK" ] || WALK=scripts/kernels/sass_walk.py
if command -v nvdisasm >/dev/null && [ "$(left)" -ge 8 ]; then
    for c in "$D"/cubin/*.cubin; do timeout 20 nvdisasm -c "$c" >"$L/$(basename "$c" .cubin).sass" 2>&1; done
    timeout 20 python3 "$WALK" "$L"/*.sass >"$L/walk.txt" 2>&1
    sed -E "s/_ZN2ws4kern[0-9]*r_[a-z]*[0-9]*/ /; s/EEEv14CUtensorMap\\w*//; s/E14CUtensorMap\\w*//" "$L/walk.txt" | tee -a "$S"
    for f in "$L"/quick.*.sass; do  # the packed k-step path: the walk's rules pick the most stores, so list every path
        timeout 20 python3 "$WALK" "$f" --kernel 'Lb1E' --all-paths 2>&1 | grep -E "^\S|STS 1, .*flush False" \
            | sed -E "s/_ZN2ws4kern[0-9]*r_[a-z]*[0-9]*/ /; s/EEEv14CUtensorMap\\w*//; s/E14CUtensorMap\\w*//" >>"$L/walk-all.txt"
    done
    head -60 "$L/walk-all.txt" | tee -a "$S"
else
    note "SKIP sass walk ($(left) s left, nvdisasm: $(command -v nvdisasm))"
fi
tar -C "$L" -czf "$OUT/logs.tar.gz" $(cd "$L" && ls *.log *.txt *.sass) 2>/dev/null
note "done in $((SECONDS - T0)) s, $(date -u +%FT%TZ)"
