#!/usr/bin/env bash
# Session 15, s15-gemmgap, call 3 -- PREPARED, NOT RUN in session 15 (the branch's device share was spent on calls 1-2).
# The one-CTA prologue/epilogue cut again, now with a relaxed start barrier -- pingpong_body.cuh's experiment switches
# at commit 8a1e2ee (not in the tree after ea39a9d; both 0 there = main's cubins): builds of 8a1e2ee, v21 (-DWS_PP_ALONE_EARLY=2 -DWS_PP_ALONE_NO_END=1: early loads before a
# barrier without a release fence, no end barrier for a CTA alone) and v01 (-DWS_PP_ALONE_EARLY=0
# -DWS_PP_ALONE_NO_END=1: the end barrier's part alone) against main's binaries.
#   1. gpu_ladder_correctness --rung streamk of v21 (the sweep's checks, traced and untraced);
#   2. cold: ladder_bench --rung streamk at the nine shapes whose plan runs a one-CTA configuration and 4096^3 (the
#      control: kTiles[0], unchanged), processes main / v21 / v01 twice;
#   3. hot (--hot): six of them, main / v21 / v01 once;
#   4. trace signatures of v21 against main (lib.sh's ws_signatures) at 1024^3 and 256x4096x4096;
#   5. compute-sanitizer memcheck of v21 at 129x777x2056 and 1024^3.
# Prediction (docs/kernel-notes/gemm-small-shapes.md, session 15): v21 -0.1 to -0.5 us per launch at the one-CTA
# shapes (+0.5 to +5 %), v01 -0 to -0.3 us at 1024^3, 128x14336x4096, 128x28672x8192 and nothing elsewhere; 4096^3
# unchanged in both.
# Carry build-s15-gemmgap: bins.tar.xz with main/ (ladder_bench, gpu_ladder_trace of /work/main/build/kchecks),
#   v21/ (ladder_bench, gpu_ladder_correctness, gpu_ladder_trace of a Qt-free Release build configured with
#   -DCMAKE_CUDA_FLAGS="-DWS_PP_ALONE_EARLY=2 -DWS_PP_ALONE_NO_END=1"), v01/ (ladder_bench, the same with
#   "-DWS_PP_ALONE_EARLY=0 -DWS_PP_ALONE_NO_END=1"), all stripped; lib.sh, this script, s15_ab_table.py.
# Run: cd build-s15-gemmgap && tar xJf bins.tar.xz && BUDGET=80 timeout 88 bash s15-gemmgap3.sh
# Success: PASS on every step line; the A/B tables printed last (ab3-*.txt).
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s15-gemmgap3 80
ws_cuda_env
HERE=$(dirname "${BASH_SOURCE[0]}")
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader 2>&1 | head -1); $(date -u)"
step correctness 30 " 0 failed" ./v21/gpu_ladder_correctness --rung streamk
note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
COLD="1024x1024x1024 256x4096x4096 1x4096x4096 128x4096x4096 128x4096x14336 512x4096x14336 128x14336x4096"
COLD="$COLD 128x28672x8192 4096x4096x4096"
HOT="1024x1024x1024 256x4096x4096 1x4096x4096 128x4096x4096 128x14336x4096 4096x4096x4096"
sw() { local s o=""; for s in "$@"; do o="$o --shape $s"; done; echo "$o"; }
# shellcheck disable=SC2046
for r in 1 2; do
    for b in main v21 v01; do
        step "cold-$b-$r" 12 "Kernel ladder vs cuBLAS" ./$b/ladder_bench --rung streamk $(sw $COLD) --target-ms 10 \
            --rest-ms 120 --no-traced --csv "$L/cold-$b-$r.csv" || true
    done
done
# shellcheck disable=SC2046
for b in main v21 v01; do
    step "hot-$b-1" 12 "Kernel ladder vs cuBLAS" ./$b/ladder_bench --rung streamk $(sw $HOT) --target-ms 10 --hot \
        --no-traced --csv "$L/hot-$b-1.csv" || true
done
for v in v21 v01; do
    python3 "$HERE/s15_ab_table.py" "cold, main (A) vs $v (B)" "$L"/cold-main-{1,2}.csv -- "$L"/cold-$v-{1,2}.csv \
        | tee "$OUT/ab3-cold-$v.txt" >> "$S"
    python3 "$HERE/s15_ab_table.py" "hot, main (A) vs $v (B)" "$L"/hot-main-1.csv -- "$L"/hot-$v-1.csv \
        | tee "$OUT/ab3-hot-$v.txt" >> "$S"
done
ws_signatures . main v21 1024x1024x1024 256x4096x4096
for s in 129x777x2056 1024x1024x1024; do
    step "memcheck-$s" 15 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck ./v21/ladder_bench --rung streamk \
        --shape "$s" --no-traced --target-ms 1 --min-iters 1 --max-iters 2 --rest-ms 0 --csv /tmp/mc.csv || true
done
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log ./*.csv 2>/dev/null)
cat "$OUT"/ab3-*.txt
echo "== end ($(left) s left)" | tee -a "$S"
