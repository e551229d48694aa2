#!/usr/bin/env bash
# Session 14, s14-clusterstart (issue 14): does a compile-time cluster size start the cluster split's CTAs faster?
# The experiment: WARPSTAGE_STREAMK_CLUSTER_DIMS=static launches a cluster split of two (the only one the rule picks)
# as gemmStreamkK2 (__cluster_dims__(2, 1, 1), no launch attribute) instead of gemmStreamkK + the runtime
# cudaLaunchAttributeClusterDimension (kernels/src/streamk.cu); ladder_bench's variant `streamk+static` sets it.
#   1. gpu_ladder_correctness --rung streamk --quick with the switch on (its 1x4096x4096 and 256x4096x4096 take the
#      cluster split: kTiles[4] and kTiles[2]); then the other one-CTA configurations forced to the cluster split at
#      shapes where it has two pieces (kTiles[3] 512x4096x4096, kTiles[5] 1x8192x4096, kTiles[6] 1x16384x4096), and
#      the rule's other cluster-split shapes;
#   2. ladder_bench, cold (--rest-ms 120, as s14-gemmsmall), --no-traced: `streamk` (attribute), `streamk+static`,
#      `streamk+launch` (the attribute, named: the same kernel as `streamk`, the A/A pair), each twice in rotation in
#      one process, at the rule's five cluster-split shapes + two controls without a cluster (1024^3, 128x14336x4096);
#   3. one traced launch each way at 256x4096x4096 (gpu_ladder_trace --dump), read by streamk_trace_phases.py: the
#      CTAs' start spread.
# The experiment was measured (no change beyond the A/A noise) and reverted: the binaries are of commit 4643d42
#   (branch s14-clusterstart), the only tree with WARPSTAGE_STREAMK_CLUSTER_DIMS and ladder_bench's `+static`.
# Carry build-s14-clusterstart: bins.tar.xz (stripped ladder_bench, gpu_ladder_correctness, gpu_ladder_trace of branch
#   s14-clusterstart's Qt-free Release build, streamk_trace_phases.py), lib.sh, this script.
# Run: cd build-s14-clusterstart && tar xJf bins.tar.xz && BUDGET=80 timeout 85 bash s14-clusterstart.sh
# Success: PASS on every step line; tables.txt (the timings), phases.txt (the traces).
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s14-clusterstart 80
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
step correct-quick 25 " 0 failed" env WARPSTAGE_STREAMK_CLUSTER_DIMS=static \
    ./gpu_ladder_correctness --rung streamk --quick
step correct-rule 10 " 0 failed" env WARPSTAGE_STREAMK_CLUSTER_DIMS=static ./gpu_ladder_correctness --rung streamk \
    --shape 128x4096x4096 --shape 128x4096x14336 --shape 256x4096x8192
for f in 3:512x4096x4096 5:1x8192x4096 6:1x16384x4096; do
    step "correct-forced${f%%:*}" 8 " 0 failed" env WARPSTAGE_STREAMK_CLUSTER_DIMS=static \
        WARPSTAGE_STREAMK_SPLIT=cluster WARPSTAGE_STREAMK_TILE="${f%%:*}" ./gpu_ladder_correctness --rung streamk \
        --shape "${f##*:}"
done
V="--rung streamk --rung streamk+static --rung streamk+launch"
# shellcheck disable=SC2086
step bench 30 "Kernel ladder vs cuBLAS" ./ladder_bench --target-ms 10 --rest-ms 120 --no-traced $V $V \
    --shape 1x4096x4096 --shape 128x4096x4096 --shape 256x4096x4096 --shape 128x4096x14336 --shape 256x4096x8192 \
    --shape 1024x1024x1024 --shape 128x14336x4096 --csv "$L/bench.csv"
sed -n '/Kernel ladder vs cuBLAS/,$p' "$L/bench.log" > "$OUT/tables.txt"
cp "$L/bench.csv" "$OUT/bench.csv" 2>/dev/null
mkdir -p /tmp/s14cs
for w in launch static; do
    step "trace-$w" 10 "passed" env WARPSTAGE_STREAMK_CLUSTER_DIMS=$w ./gpu_ladder_trace --rung streamk \
        --shape 256x4096x4096 --dump "/tmp/s14cs/$w-"
    { echo "== $w"; python3 ./streamk_trace_phases.py "/tmp/s14cs/$w-streamk.bin"; } > "$L/phases-$w.log" 2>&1
done
cat "$L"/phases-*.log > "$OUT/phases.txt" 2>/dev/null
grep -i "spread" "$OUT/phases.txt" | tee -a "$S"
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log ./*.csv 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
