#!/usr/bin/env bash
# Session 13, s13-smallk, call 1: what cuBLAS runs at the sweep's weak shapes, and every stream-K configuration forced
# there beside the rule and cuBLAS (one process per group of shapes), cold (--target-ms 10, --rest-ms 120: half the sweep's rest, to fit the share).
# Written for call 1's tree (kTiles 7 = 1 with skew 0, 8 = 0 with skew 0: both now 1 and 0 themselves).
# Carry build-s13-smallk: bins.tar.xz (stripped ladder_bench, cublas_probe of branch s13-smallk: main's rule plus
# configurations 7 = 1 with skew 0, 8 = 0 with skew 0, and the split mode `dp`), lib.sh, this script.
# Run: cd build-s13-smallk && tar xJf bins.tar.xz && BUDGET=110 timeout 115 bash s13-smallk.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s13-smallk 110
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
WEAK="--shape 1x4096x4096 --shape 128x4096x4096 --shape 256x4096x4096 --shape 512x4096x4096 --shape 128x4096x14336"
WEAK="$WEAK --shape 1024x1024x16384 --shape 1000x4096x1000 --shape 8192x8192x512 --shape 1024x1024x1024"
WEAK="$WEAK --shape 4096x4096x256 --shape 4096x4096x4096"
# shellcheck disable=SC2086
step probe 15 "PROBE end" ./cublas_probe $WEAK
grep PROBE "$L/probe.log" | tee -a "$S"
# shellcheck disable=SC2086
step ncu 30 "PROBE end" ncu --clock-control none --section LaunchStats --csv ./cublas_probe $WEAK
cp "$L/ncu.log" "$OUT/ncu.csv"
grep -v fillRandom "$OUT/ncu.csv" | grep -E '"(Grid Size|Block Size|Cluster Size|Registers Per Thread|Dynamic Shared Memory Per Block)"' \
    | awk -F'","' '{print $5" | "$(NF-2)" = "$NF}' | sed 's/"$//' | tee -a "$S"
B="./ladder_bench --target-ms 10 --rest-ms 120 --no-traced"
V1="--rung streamk --rung streamk@2/cluster --rung streamk@4/cluster --rung streamk@3/cluster"
V1="$V1 --rung streamk@1 --rung streamk@7 --rung streamk@2 --rung streamk@4"
# shellcheck disable=SC2086
step smallm 30 "Kernel ladder vs cuBLAS" $B $V1 --shape 1x4096x4096 --shape 128x4096x4096 --shape 256x4096x4096 \
    --shape 512x4096x4096 --csv "$OUT/smallm.csv"
V2="--rung streamk --rung streamk@0/streamk --rung streamk@8 --rung streamk@8/streamk --rung streamk@7"
V2="$V2 --rung streamk@2/cluster --rung streamk@3 --rung streamk@4/cluster"
# shellcheck disable=SC2086
step longk 20 "Kernel ladder vs cuBLAS" $B $V2 --shape 128x4096x14336 --shape 1024x1024x16384 --csv "$OUT/longk.csv"
V3="--rung streamk --rung streamk@3 --rung streamk@8 --rung streamk@0/dp --rung streamk@3/dp --rung streamk@8/dp"
V3="$V3 --rung streamk@2 --rung streamk@4"
# shellcheck disable=SC2086
step shortk 30 "Kernel ladder vs cuBLAS" $B $V3 --shape 1000x4096x1000 --shape 8192x8192x512 --shape 1024x1024x1024 \
    --shape 4096x4096x256 --csv "$OUT/shortk.csv"
# shellcheck disable=SC2086
step large 15 "Kernel ladder vs cuBLAS" $B --rung streamk --rung streamk@8 --rung streamk@3 --shape 4096x4096x4096 \
    --shape 8192x8192x8192 --csv "$OUT/large.csv"
for g in smallm longk shortk large; do
    sed -n '/Kernel ladder vs cuBLAS/,$p' "$L/$g.log" > "$OUT/$g.txt"
done
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
