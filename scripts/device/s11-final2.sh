#!/usr/bin/env bash
# Session 11, the lead's last call: stream-K's rule with the cluster split in Auto (kAutoCluster: clusters of two,
# M <= 512; streamk_schedule.h) on the merged tree. Builds nothing; BUDGET seconds, every step under its own timeout.
#   correctness of streamk under the rule (gpu_ladder_correctness --rung streamk), traces of the rule's cluster launches
#   (gpu_ladder_trace at 1x4096x4096, 256x4096x4096 and a partial-tile shape), then the rule against Global (the rule
#   without the cluster split: s11-skinny's) and cuBLAS in ONE process at the shapes whose pick changed, traced and
#   untraced (CSV), then the 33-shape sweep with what is left.
# Carry build-s11final2 (bins.tar.xz: stripped ladder_bench, gpu_ladder_correctness, gpu_ladder_trace of build/kchecks).
# Run: tar -xJf build-s11final2/bins.tar.xz -C build-s11final2 && BUDGET=150 timeout 165 bash scripts/device/s11-final2.sh build-s11final2
# Success: PASS lines, " 0 failed", the ab.csv table (streamk vs streamk/global per shape).
set -u
B=$(cd "${1:-build-s11final2}" && pwd)
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s11-final2 150
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
step correctness 40 " 0 failed" "$B/gpu_ladder_correctness" --rung streamk
note "    streamk traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
for s in 1x4096x4096 256x4096x4096 300x1000x1032; do
    step "trace-$s" 10 "" "$B/gpu_ladder_trace" --rung streamk --shape $s
done
AB="--shape 1x4096x4096 --shape 8x4096x4096 --shape 64x4096x4096 --shape 128x4096x4096 --shape 256x4096x4096
 --shape 512x4096x4096 --shape 128x14336x4096 --shape 512x4096x14336 --shape 16x4096x14336 --shape 128x4096x14336"
step ab 60 "Kernel ladder vs cuBLAS" "$B/ladder_bench" --rung streamk/global --rung streamk $AB --target-ms 10 \
    --csv "$OUT/ab.csv"
cp "$L/ab.log" "$OUT/ab.txt" 2>/dev/null
SW=""
for x in 1024 2048 4096 6144 8192 12288 16384; do SW="$SW --shape ${x}x${x}x${x}"; done
for m in 128 512 2048 8192; do
    for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do SW="$SW --shape ${m}x${nk}"; done
done
SW="$SW --shape 4096x4096x256 --shape 8192x8192x512 --shape 4096x4096x1024 --shape 1024x1024x16384 --shape 2048x2048x32768"
SW="$SW --shape 4000x4000x4000 --shape 8191x8193x4104 --shape 1000x4096x1000 --shape 1x4096x4096 --shape 256x4096x4096"
step sweep-cold 75 "Kernel ladder vs cuBLAS" "$B/ladder_bench" --rung streamk $SW --target-ms 10 --csv "$OUT/sweep-cold.csv"
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
