#!/usr/bin/env bash
# Session 16, s16-gemmgap, call 1 (issue 14: stream-K >= 90 % of cuBLAS at every sweep shape, cold and hot).
#   1. configurations, no kernel change (main's ladder_bench): at 1024x1024x16384, 1024^3 and 256x4096x4096 the rule's
#      pick against kTiles configurations / split modes forced (`streamk@I[/mode]`), cuBLAS paired in each variant's
#      rounds; one process per shape, cold (default 250 ms rest) then hot (--hot, 200 ms heat);
#   2. s15-gemmgap3's prepared variants of the one-CTA cut (pingpong_body.cuh's WS_PP_ALONE_* switches, branch
#      s16-gemmgap 2f064a9): v21 (EARLY=2: first S loads before a relaxed start barrier; NO_END=1: no end barrier for a
#      CTA alone) and v01 (NO_END=1 alone) against main, at the nine shapes whose plan runs a one-CTA configuration and
#      4096^3 (the control, kTiles[0]: unchanged): cold main v21 v01 main v21, hot main v21.
# Carry build-s16-gemmgap: bins.tar.xz (main/, v21/, v01/: stripped ladder_bench), lib.sh, this script.
# Run: cd build-s16-gemmgap && tar xJf bins.tar.xz && BUDGET=150 timeout 160 bash s16-gemmgap.sh
# Predictions (docs/kernel-notes/gemm-shapes-s16.md): 1024x1024x16384 @1 (256x128 pairs, split-K 2) 2-3 % faster
# than the rule (kTiles[0] split-K 4), the others slower; 1024^3 @7 ~0.3 us faster, the others slower; 256x4096x4096
# the rule fastest; v21 -0.1 to -0.5 us per launch at the one-CTA shapes, v01 -0 to -0.3 us; 4096^3 unchanged.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s16-gemmgap 150
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1 | head -1); $(date -u)"
rv() { local v o=""; for v in "$@"; do o="$o --rung $v"; done; echo "$o"; }
sw() { local s o=""; for s in "$@"; do o="$o --shape $s"; done; echo "$o"; }
P1="streamk streamk@1 streamk@1/streamk streamk@2/splitk streamk@3 streamk@7"   # 1024x1024x16384
P2="streamk streamk@7 streamk@5 streamk@2/cluster streamk@1/dp streamk@2/dp"    # 1024^3
P3="streamk streamk@7 streamk@5 streamk@4"                                     # 256x4096x4096
for mode in cold hot; do
    extra=""
    [ $mode = hot ] && extra="--hot"
    # shellcheck disable=SC2046,SC2086
    step "cfg-$mode-1" 16 "Kernel ladder vs cuBLAS" ./main/ladder_bench $(rv $P1) --shape 1024x1024x16384 --target-ms 10 \
        --no-traced $extra --csv "$L/cfg-$mode-1.csv" || true
    # shellcheck disable=SC2046,SC2086
    step "cfg-$mode-2" 16 "Kernel ladder vs cuBLAS" ./main/ladder_bench $(rv $P2) --shape 1024x1024x1024 --target-ms 10 \
        --no-traced $extra --csv "$L/cfg-$mode-2.csv" || true
    # shellcheck disable=SC2046,SC2086
    step "cfg-$mode-3" 12 "Kernel ladder vs cuBLAS" ./main/ladder_bench $(rv $P3) --shape 256x4096x4096 --target-ms 10 \
        --no-traced $extra --csv "$L/cfg-$mode-3.csv" || true
done
COLD="1024x1024x1024 256x4096x4096 1x4096x4096 128x4096x4096 128x4096x14336 512x4096x14336 128x14336x4096"
COLD="$COLD 128x28672x8192 4096x4096x4096"
HOT="1024x1024x1024 256x4096x4096 1x4096x4096 128x4096x4096 128x14336x4096 4096x4096x4096"
n=0
for b in main v21 v01 main v21; do
    n=$((n + 1))
    # shellcheck disable=SC2046,SC2086
    step "ab-cold-$n-$b" 12 "Kernel ladder vs cuBLAS" ./$b/ladder_bench --rung streamk $(sw $COLD) --target-ms 10 \
        --rest-ms 120 --no-traced --csv "$L/ab-cold-$n-$b.csv" || true
done
for b in main v21; do
    # shellcheck disable=SC2046,SC2086
    step "ab-hot-$b" 12 "Kernel ladder vs cuBLAS" ./$b/ladder_bench --rung streamk $(sw $HOT) --target-ms 10 --hot \
        --no-traced --csv "$L/ab-hot-$b.csv" || true
done
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log ./*.csv 2>/dev/null)
# the short view: each variant's median and paired % of cuBLAS (full analysis from the CSVs afterwards)
for f in "$L"/cfg-*.csv "$L"/ab-*.csv; do
    awk -F, -v n="$(basename "$f" .csv)" 'NR > 1 && $4 !~ /^cublas/ {printf "%s %s %s %.2f us %s%% ok=%s\n", n, $3, $4, 1000 * $9, $14, $7}' "$f"
done | tee -a "$S"
echo "== end ($(left) s left)" | tee -a "$S"
