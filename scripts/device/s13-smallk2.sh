#!/usr/bin/env bash
# Session 13, s13-smallk, call 2: the branch's rule against main's pick, in one process per group of shapes, ABAB
# (`streamk` = the branch's rule; main's pick reproduced as a forced variant of the same binary: main's kTiles[0] is
# the branch's kTiles[7] (pingpong's skew), and `/global` is Auto without the cluster split and without dp, i.e.
# main's plan for that configuration), cold (--target-ms 10, --rest-ms 120); then kTiles[8] (64 x 128 blocks in pairs)
# forced at the small-M shapes, and gpu_ladder_correctness --quick of the rule and of kTiles[8].
# Written for call 2's tree (its kTiles: 7 = main's 0 with pingpong's skew, 8 = 64 x 128 pairs); the final tree of the
# branch dropped 7 and renumbered the pairs to 7, so on it `streamk@7/global` is the pairs: re-point before reusing.
# Carry build-s13-smallk: bins.tar.xz (stripped ladder_bench, gpu_ladder_correctness of branch s13-smallk), lib.sh,
# this script.  Run: cd build-s13-smallk && tar xJf bins.tar.xz && BUDGET=85 timeout 90 bash s13-smallk2.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s13-smallk2 85
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
B="./ladder_bench --target-ms 10 --rest-ms 120 --no-traced"
ab() { echo "--rung streamk --rung $1 --rung streamk --rung $1"; }
# shellcheck disable=SC2046
step g0 30 "Kernel ladder vs cuBLAS" $B $(ab streamk@7/global) --shape 8192x8192x512 --shape 8192x8192x1024 \
    --shape 2048x14336x512 --shape 1024x1024x16384 --shape 1000x4096x1000 --shape 4096x4096x256 \
    --shape 4096x4096x4096 --shape 8192x8192x8192 --csv "$OUT/g0.csv"
# shellcheck disable=SC2046
step g3 8 "Kernel ladder vs cuBLAS" $B $(ab streamk@3/cluster) --shape 512x4096x4096 --shape 256x8192x4096 --csv "$OUT/g3.csv"
# shellcheck disable=SC2046
step g2 6 "Kernel ladder vs cuBLAS" $B $(ab streamk@2/cluster) --shape 256x4096x16384 --csv "$OUT/g2.csv"
# shellcheck disable=SC2046
step g4 8 "Kernel ladder vs cuBLAS" $B $(ab streamk@4/global) --shape 1536x2048x1024 --shape 768x4096x1024 --csv "$OUT/g4.csv"
step g8 12 "Kernel ladder vs cuBLAS" $B --rung streamk --rung streamk@8 --shape 256x4096x4096 --shape 128x4096x4096 \
    --shape 128x4096x14336 --shape 1024x1024x1024 --shape 300x1000x1032 --shape 129x777x2056 --csv "$OUT/g8.csv"
for g in g0 g3 g2 g4 g8; do sed -n '/Kernel ladder vs cuBLAS/,$p' "$L/$g.log"; done > "$OUT/tables.txt"
step correct-rule 20 " 0 failed" ./gpu_ladder_correctness --rung streamk --quick
WARPSTAGE_STREAMK_TILE=8 step correct-8 20 " 0 failed" ./gpu_ladder_correctness --rung streamk --quick
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
