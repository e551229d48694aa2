#!/usr/bin/env bash
# Session 16, s16-gemmgap, call 2: the branch (7d1e922: early loads + no end barrier for a CTA alone outside the cluster
# split; 9c818eb: TileCost::pairB128, 1024x1024x16384 -> 256x128 pairs split-K 2) against main.
#   1. gpu_ladder_correctness --rung streamk of the branch (traced and untraced, the sweep's checks);
#   2. cold: ladder_bench --rung streamk, processes main new main new; main at the shapes whose kernel or pick changed
#      (1024x1024x16384, 1024^3, 128x14336x4096, 128x28672x8192) and 4096^3 (control: kTiles[0], main's cubin), the
#      branch at those plus 8192^3 and the weak / near-90 % shapes whose kernels are main's (256x4096x4096,
#      1000x4096x1000); hot: main new once;
#   3. compute-sanitizer memcheck of the branch at two partial-tile shapes whose plan runs the early loads
#      (777x1111x1032: 128x64 blocks data-parallel; 700x900x2056: 128x64 blocks stream-K);
#   4. three of the 36 grid shapes pairB128 moves, the branch's pick against the old one (kTiles[0]) forced.
# Carry build-s16-gemmgap: bins.tar.xz (main/ladder_bench of main bf106ca, new/ladder_bench and
#   new/gpu_ladder_correctness of 9c818eb, stripped), lib.sh, this script.
# Run: cd build-s16-gemmgap && tar xJf bins.tar.xz && BUDGET=75 timeout 82 bash s16-gemmgap2.sh
# Prediction: 1024x1024x16384 58.3 -> 55.5 us (+5 %), 1024^3 11.25 -> 10.5 us, 128x14336x4096 -1.5 %, the rest level;
# the grid sample: the branch's pick (256x128 pairs) faster or level.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s16-gemmgap2 75
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1 | head -1); $(date -u)"
sw() { local s o=""; for s in "$@"; do o="$o --shape $s"; done; echo "$o"; }
step correctness 25 " 0 failed" ./new/gpu_ladder_correctness --rung streamk
note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
CHANGED="1024x1024x16384 1024x1024x1024 128x14336x4096 128x28672x8192 4096x4096x4096"
MORE="8192x8192x8192 256x4096x4096 1000x4096x1000"
n=0
for b in main new main new; do
    n=$((n + 1))
    s="$CHANGED"
    [ $b = new ] && s="$CHANGED $MORE"
    # shellcheck disable=SC2046,SC2086
    step "ab-cold-$n-$b" 12 "Kernel ladder vs cuBLAS" ./$b/ladder_bench --rung streamk $(sw $s) --target-ms 10 \
        --rest-ms 120 --no-traced --csv "$L/ab-cold-$n-$b.csv" || true
done
for b in main new; do
    s="$CHANGED"
    [ $b = new ] && s="$CHANGED $MORE"
    # shellcheck disable=SC2046,SC2086
    step "ab-hot-$b" 12 "Kernel ladder vs cuBLAS" ./$b/ladder_bench --rung streamk $(sw $s) --target-ms 10 --hot \
        --no-traced --csv "$L/ab-hot-$b.csv" || true
done
step memcheck 20 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck ./new/ladder_bench --rung streamk \
    --shape 777x1111x1032 --shape 700x900x2056 --no-traced --target-ms 1 --min-iters 1 --max-iters 2 --rest-ms 0 \
    --csv /tmp/mc.csv || true
# shellcheck disable=SC2046
step grid 10 "Kernel ladder vs cuBLAS" ./new/ladder_bench --rung streamk --rung streamk@0 \
    $(sw 256x4096x16384 768x4096x4096 192x14336x14336) --target-ms 10 --rest-ms 120 --no-traced --csv "$L/grid.csv" || true
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log ./*.csv 2>/dev/null)
for f in "$L"/ab-*.csv "$L"/grid.csv; do
    awk -F, -v n="$(basename "$f" .csv)" 'NR > 1 && $4 !~ /^cublas/ {printf "%s %s %s %.2f us %s%% ok=%s\n", n, $3, $4, 1000 * $9, $14, $7}' "$f"
done | tee -a "$S"
echo "== end ($(left) s left)" | tee -a "$S"
