#!/usr/bin/env bash
# Session 14, s14-gemmsmall, call 1: the rule's DRAM floor (streamk_schedule.h, TileCost::dramBytesPerNs) against the
# picks it moved, and where the weak shapes' time goes.
#   1. cluster co-residency: cluster_occupancy (tests/bench/cluster_occupancy.cu; call 1 ran the same code built by
#      hand as cluster_occ; cudaOccupancyMaxActiveClusters for clusters of 1..8 CTAs of rung 7's shared
#      memory: 214144 B untraced, 226432 traced, 181376 for kTiles[6]) -- why clusters of four lost (session 11);
#   2. gpu_ladder_correctness --rung streamk --quick (the branch's rule);
#   3. the branch's rule (`streamk`) against main's pick forced in the same binary, ABAB, cold, at 8 of the 35 shapes of
#      the 714-shape grid whose pick moved (128x4096x14336, of the 33-shape sweep, among them); then the fixed cost:
#      the rule and cuBLAS at trivial shapes (one k-step);
#   4. traced launches of the rule at 256x4096x4096 and 1024^3 dumped, read by scripts/streamk_trace_phases.py
#      (prologue, k-step rate, tail per warp role);
#   5. ncu (--clock-control none) LaunchStats + SpeedOfLight of cuBLAS's kernels (cublas_probe) and of ours
#      (ladder_bench's first two launches of the rule: the correctness launch and a warm-up) at 256x4096x4096, 1024^3
#      and 1x4096x4096: the kernels' own durations beside the event timings.
# Carry build-s14-gemmsmall: bins.tar.xz (stripped ladder_bench, gpu_ladder_correctness, gpu_ladder_trace,
#   cublas_probe, cluster_occupancy of branch s14-gemmsmall's Qt-free Release build, streamk_trace_phases.py),
#   lib.sh, this script.
# Run: cd build-s14-gemmsmall && tar xJf bins.tar.xz && BUDGET=110 timeout 120 bash s14-gemmsmall.sh
# Success: PASS on every step line; tables.txt (the A/B), phases.txt, ncu.txt, CLUSTEROCC lines in the summary.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s14-gemmsmall 110
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
step cluster-occ 10 "CLUSTEROCC" ./cluster_occupancy 214144 226432 181376
grep CLUSTEROCC "$L/cluster-occ.log" | tee -a "$S"
step correct-quick 25 " 0 failed" ./gpu_ladder_correctness --rung streamk --quick
B="./ladder_bench --target-ms 10 --rest-ms 120 --no-traced"
ab() { echo "--rung streamk --rung $1 --rung streamk --rung $1"; }
# shellcheck disable=SC2046
step g2 16 "Kernel ladder vs cuBLAS" $B $(ab streamk@2/global) --shape 128x4096x14336 --shape 128x2048x14336 \
    --shape 16x28672x8192 --csv "$L/g2.csv"
# shellcheck disable=SC2046
step g2c 12 "Kernel ladder vs cuBLAS" $B $(ab streamk@2/cluster) --shape 128x8192x4096 --shape 64x8192x14336 \
    --csv "$L/g2c.csv"
# shellcheck disable=SC2046
step g3 12 "Kernel ladder vs cuBLAS" $B $(ab streamk@3/global) --shape 128x14336x14336 --shape 32x14336x14336 \
    --csv "$L/g3.csv"
# shellcheck disable=SC2046
step g4 8 "Kernel ladder vs cuBLAS" $B $(ab streamk@4/global) --shape 1x14336x8192 --csv "$L/g4.csv"
step fixed 8 "Kernel ladder vs cuBLAS" $B --rung streamk --shape 1x64x64 --shape 128x128x64 --shape 128x64x4096 \
    --csv "$L/fixed.csv"
for g in g2 g2c g3 g4 fixed; do sed -n '/Kernel ladder vs cuBLAS/,$p' "$L/$g.log"; done > "$OUT/tables.txt"
mkdir -p /tmp/s14t
for s in 256x4096x4096 1024x1024x1024; do
    step "trace-$s" 10 "passed" ./gpu_ladder_trace --rung streamk --shape "$s" --dump "/tmp/s14t/$s-"
    python3 ./streamk_trace_phases.py "/tmp/s14t/$s-streamk.bin" > "$L/phases-$s.log" 2>&1
done
cat "$L"/phases-*.log > "$OUT/phases.txt" 2>/dev/null
NCU="ncu --clock-control none --section LaunchStats --section SpeedOfLight"
step ncu-cublas 25 "" $NCU -k regex:"nvjet|splitK" ./cublas_probe --shape 256x4096x4096 --shape 1024x1024x1024 \
    --shape 1x4096x4096
for s in 256x4096x4096 1024x1024x1024 1x4096x4096; do
    step "ncu-ours-$s" 12 "" $NCU -k regex:gemmStreamk -c 2 ./ladder_bench --rung streamk --shape "$s" --no-traced \
        --target-ms 1 --min-iters 1 --max-iters 2 --rest-ms 0 --csv /tmp/s14t/ncu.csv
done
cat "$L"/ncu-*.log > "$OUT/ncu.txt" 2>/dev/null
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log ./*.csv 2>/dev/null)  # (at most 8 files come back)
echo "== end ($(left) s left)" | tee -a "$S"
