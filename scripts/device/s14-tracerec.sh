#!/usr/bin/env bash
# Issue 14, tracing cost of rungs 6-7, session 14 (s14-tracerec): ONE call, BUDGET seconds of steps (default 75; the
# whole script, unpacking included, is killed at BUDGET + 10 s).
# Builds (dev machine, Release, no Qt, stripped; DIR/bins.tar.xz):
#   base = main 8a91060 (/work/main/build/kchecks, built at 8e80510; kernels unchanged since): s14-tracesmall's
#          kStepAt (the fit test, then the record and the flush test on its branch);
#   new  = branch s14-tracerec at cd837dc (rebased: d4f78ac) (its default was 1 there; later commits: build with -DWS_TRACE_KSTEP_LEAN=1,
#          e.g. CMAKE_CUDA_FLAGS, for the ladder and the tests): the record stored first, unconditionally, one
#          rarely taken branch for the fit and the flush (a non-fitting k-step's four events overwrite the record);
#   mut/gpu_trace_batch_{norewind,swap}: new's gpu_trace_batch with the mutation tracerec.kstep_lean_no_rewind /
#          tracerec.kstep_lean_gaps_swapped planted;
#   cubin/{base,new}.{streamk,pingpong}.cubin: nvcc -cubin of the two files (the build's flags, no -lineinfo).
# Steps: gpu_ladder_correctness --rung streamk --rung pingpong (new; traced = untraced bit for bit); gpu_trace_batch
# (new) and the two mutants (must FAIL); gpu_ladder_trace of base and new at 300x1000x1032 and 1024^3 (both rungs; new's
# signature = base's); ladder_bench traced vs untraced over lib.sh's ws_sweep33, base and new in two halves
# interleaved (base new | new base); the table (trace_overhead_table.py); --idle-cost of streamk at kTiles[4]'s four
# shapes, base and new; the SASS walk (CUDA 13 nvdisasm) of the four cubins.
# Device (run tool, carry ["build-s14-tracerec"]): bash build-s14-tracerec/s14-tracerec.sh build-s14-tracerec
set -u
if [ -z "${WS_S14TR_INNER:-}" ]; then
    WS_S14TR_INNER=1 exec timeout -k 2 $((${BUDGET:-75} + 10)) bash "$0" "$@"
fi
D=${1:-build-s14-tracerec}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/base" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s14-tracerec 75
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"
for b in base new; do note "build $b: $(sha256sum "$D/$b/ladder_bench" 2>&1 | cut -c1-16)"; done

step correctness 30 " 0 failed" "$D/new/gpu_ladder_correctness" --rung streamk --rung pingpong || true
note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
step batch 8 "PASS gpu_trace_batch" "$D/new/gpu_trace_batch" || true
grep -h "k-steps" "$L/batch.log" | head -2 | tee -a "$S"
for m in norewind swap; do
    timeout -k 2 8 "$D/mut/gpu_trace_batch_$m" >"$L/mutant-$m.log" 2>&1
    if grep -q "^FAIL" "$L/mutant-$m.log"; then note "PASS mutant-$m caught | $(grep -m1 '^FAIL' "$L/mutant-$m.log" | cut -c1-160)"
    else note "FAIL mutant-$m not caught | $(tail -1 "$L/mutant-$m.log" | cut -c1-160)"; fi
done
ws_signatures "$D" base new 300x1000x1032 1024x1024x1024
for s in 300x1000x1032 1024x1024x1024; do
    note "    new's packed records at $s: $(grep -h "packed k-step records" "$L/trace-new-$s.log" 2>/dev/null | awk '{print $NF}' | tr '\n' ' ')"
done

# lib.sh's 33 shapes in two halves (16 | 17), base and new interleaved: base new | new base; the table
ws_trace_sweep "$D" base new
IDLE="--rung streamk --idle-cost --shape 1024x1024x1024 --shape 128x4096x4096 --shape 1x4096x4096 --shape 256x4096x4096 --target-ms 10 --rest-ms 20 --min-iters 6"
# shellcheck disable=SC2086
for b in base new; do step idle-$b 10 "overhead" "$D/$b/ladder_bench" $IDLE || true; done
for b in base new; do
    note "idle-cost $b (shape | rung | untraced | instrumented not recording | overhead | traced | overhead | correct):"
    grep -E "^\| [0-9]" "$L/idle-$b.log" 2>/dev/null | tail -4 | tee -a "$S"
done
WALK=$(dirname "${BASH_SOURCE[0]}")/sass_walk.py
[ -f "$WALK" ] || WALK=scripts/kernels/sass_walk.py
if command -v nvdisasm >/dev/null && [ "$(left)" -ge 5 ]; then
    for c in "$D"/cubin/*.cubin; do timeout 20 nvdisasm -c "$c" >"$L/$(basename "$c" .cubin).sass" 2>&1; done
    for f in "$L"/*.sass; do  # the packed k-step path: the walk's rules pick the most stores, so list every path
        timeout 20 python3 "$WALK" "$f" --kernel 'Lb1E' --all-paths 2>&1 | grep -E "^\S|STS 1, .*flush False" \
            | sed -E "s/_ZN2ws4kern[0-9]*r_[a-z]*[0-9]*/ /; s/EEEv14CUtensorMap\\w*//; s/E14CUtensorMap\\w*//" >>"$L/walk-all.txt"
    done
    grep -E "^\S" "$L/walk-all.txt" | cut -c1-150 | tee -a "$S"
else
    note "SKIP sass walk ($(left) s left, nvdisasm: $(command -v nvdisasm))"
fi
tar -C "$L" -czf "$OUT/logs.tar.gz" $(cd "$L" && ls *.log *.txt *.sass) 2>/dev/null
note "done in $((SECONDS - T0)) s, $(date -u +%FT%TZ)"
