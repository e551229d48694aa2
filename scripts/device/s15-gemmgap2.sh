#!/usr/bin/env bash
# Session 15, s15-gemmgap, call 2: the branch's stream-K with the CTA-alone prologue/epilogue cut (pingpong_body.cuh:
# configurations of one CTA per block issue their first ring of loads before the CTA barrier, and a CTA alone leaves
# without the final cluster barrier) against main's binaries.
#   1. gpu_ladder_correctness --rung streamk (the sweep's checks, traced and untraced);
#   2. cold: ladder_bench --rung streamk at the shapes whose plan runs a one-CTA configuration (the changed kernels)
#      and 4096^3 (kTiles[0], unchanged: the control), main / branch / main / branch, one process each;
#   3. hot (--hot, heat 200 ms): the same at six of them, main / branch / main / branch;
#   4. trace signatures of both builds (lib.sh's ws_signatures) at 1024^3 and 256x4096x4096: the same information;
#   5. compute-sanitizer memcheck of the branch at 129x777x2056 and 1024^3 (with what is left of the budget).
# Carry build-s15-gemmgap: bins.tar.xz (stripped ladder_bench, gpu_ladder_correctness, gpu_ladder_trace of the branch
#   in br/ and of /work/main/build/kchecks in main/), lib.sh, this script, s15_ab_table.py.
# Run: cd build-s15-gemmgap && tar xJf bins.tar.xz && BUDGET=110 timeout 118 bash s15-gemmgap2.sh
# Success: PASS on every step line; the A/B table printed last (ab-cold.txt, ab-hot.txt).
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s15-gemmgap2 110
ws_cuda_env
HERE=$(dirname "${BASH_SOURCE[0]}")
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1 | head -1); $(date -u)"
step correctness 40 " 0 failed" ./br/gpu_ladder_correctness --rung streamk
note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
COLD="1024x1024x1024 256x4096x4096 1x4096x4096 128x4096x4096 128x4096x14336 512x4096x14336 128x14336x4096"
COLD="$COLD 128x28672x8192 4096x4096x4096"
HOT="1024x1024x1024 256x4096x4096 1x4096x4096 128x4096x4096 128x14336x4096 4096x4096x4096"
sw() { local s o=""; for s in "$@"; do o="$o --shape $s"; done; echo "$o"; }
# shellcheck disable=SC2046
for r in 1 2; do
    for b in main br; do
        step "cold-$b-$r" 14 "Kernel ladder vs cuBLAS" ./$b/ladder_bench --rung streamk $(sw $COLD) --target-ms 10 \
            --rest-ms 120 --no-traced --csv "$L/cold-$b-$r.csv" || true
    done
done
# shellcheck disable=SC2046
for r in 1 2; do
    for b in main br; do
        step "hot-$b-$r" 14 "Kernel ladder vs cuBLAS" ./$b/ladder_bench --rung streamk $(sw $HOT) --target-ms 10 \
            --hot --no-traced --csv "$L/hot-$b-$r.csv" || true
    done
done
python3 "$HERE/s15_ab_table.py" cold "$L"/cold-main-{1,2}.csv -- "$L"/cold-br-{1,2}.csv | tee "$OUT/ab-cold.txt" >> "$S"
python3 "$HERE/s15_ab_table.py" hot "$L"/hot-main-{1,2}.csv -- "$L"/hot-br-{1,2}.csv | tee "$OUT/ab-hot.txt" >> "$S"
ws_signatures . main br 1024x1024x1024 256x4096x4096
for s in 129x777x2056 1024x1024x1024; do
    step "memcheck-$s" 20 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck ./br/ladder_bench --rung streamk \
        --shape "$s" --no-traced --target-ms 1 --min-iters 1 --max-iters 2 --rest-ms 0 --csv /tmp/mc.csv || true
done
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log ./*.csv 2>/dev/null)
cat "$OUT/ab-cold.txt" "$OUT/ab-hot.txt"
echo "== end ($(left) s left)" | tee -a "$S"
