#!/usr/bin/env bash
# Session 14, s14-gemmsmall, call 3: why our kernel takes more cycles than cuBLAS's on the same small problem -- ncu
# (--clock-control none) with the warp-state, scheduler and memory-workload sections, cuBLAS's kernels (cublas_probe)
# beside ours (ladder_bench's first launch of each variant) at 1024^3 (the rule's 128x64 blocks and kTiles[7], cuBLAS's
# 64x128 pairs in our body) and 256x4096x4096 (the rule's 128x128 cluster split).
# Carry build-s14-gemmsmall: bins.tar.xz (stripped ladder_bench, cublas_probe of branch s14-gemmsmall), lib.sh, this
#   script.  Run: cd build-s14-gemmsmall && tar xJf bins.tar.xz && BUDGET=75 timeout 80 bash s14-gemmsmall3.sh
# Success: PASS on every step line; ncu-*.log in logs.tar.gz.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s14-gemmsmall3 75
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
NCU="ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats"
NCU="$NCU --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
step ncu-cublas 20 "" $NCU -k regex:nvjet ./cublas_probe --shape 1024x1024x1024 --shape 256x4096x4096
for v in streamk:1024x1024x1024 streamk@7:1024x1024x1024 streamk:256x4096x4096; do
    step "ncu-${v%%:*}-${v##*:}" 15 "" $NCU -k regex:gemmStreamk -c 1 ./ladder_bench --rung "${v%%:*}" \
        --shape "${v##*:}" --no-traced --target-ms 1 --min-iters 1 --max-iters 2 --rest-ms 0 --csv /tmp/ncu.csv
done
for f in "$L"/ncu-*.log; do
    echo "== $(basename "$f")"
    grep -E "^  [a-zA-Z_].*\(|Duration|Elapsed Cycles|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Stall|Executed Ipc|Memory Throughput|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth" "$f"
done > "$OUT/ncu-summary.txt" 2>/dev/null
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
