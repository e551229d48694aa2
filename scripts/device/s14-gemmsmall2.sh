#!/usr/bin/env bash
# Session 14, s14-gemmsmall, call 2: the branch's final rule (the DRAM floor) and the PDL experiment (streamk.cu:
# WARPSTAGE_STREAMK_PDL=1, programmatic dependent launch), checked, then the 33-shape sweep cold.
# Written for commit 33e874b's tree: the PDL experiment (ladder_bench's `streamk+1`) was reverted after this call (no
# effect); on later trees drop `--rung streamk+1` and the PDL steps.
#   1. gpu_ladder_correctness --rung streamk (the sweep's checks, the rule), and --quick with PDL on;
#   (2. and 3. in the order 3, 2: the sweep first, the sanitizer gets what is left of the budget)
#   2. compute-sanitizer memcheck of the changed kernels (the grid-dependency instructions) at partial-tile shapes,
#      PDL on (ladder_bench's checked launches and a few timed ones, back to back): 300x1000x1032 (the rule's stream-K
#      walk) and 129x777x2056 (N odd);
#   3. the 33-shape sweep (lib.sh's ws_sweep33), cold, untraced: the branch's rule and the same with PDL (`streamk+1`)
#      interleaved in ONE process (ladder_bench), then main's ladder_bench (build/kchecks at main) over the same shapes.
# Carry build-s14-gemmsmall: bins.tar.xz (stripped ladder_bench, gpu_ladder_correctness of branch s14-gemmsmall,
#   main/ladder_bench of /work/main/build/kchecks), lib.sh, this script.
# Run: cd build-s14-gemmsmall && tar xJf bins.tar.xz && BUDGET=160 timeout 170 bash s14-gemmsmall2.sh
# Success: PASS on every step line; sweep-branch.csv and sweep-main.csv ("Kernel ladder vs cuBLAS" tables in
# sweep-*.txt).
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s14-gemmsmall2 160
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
step correctness 40 " 0 failed" ./gpu_ladder_correctness --rung streamk
note "    traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
WARPSTAGE_STREAMK_PDL=1 step correct-pdl 15 " 0 failed" ./gpu_ladder_correctness --rung streamk --quick
SW=$(ws_sweep33)
# shellcheck disable=SC2086
step sweep-branch 75 "Kernel ladder vs cuBLAS" ./ladder_bench --rung streamk --rung streamk+1 $SW --target-ms 10 \
    --rest-ms 120 --no-traced --csv "$OUT/sweep-branch.csv"
sed -n '/Kernel ladder vs cuBLAS/,$p' "$L/sweep-branch.log" > "$OUT/sweep-branch.txt"
# shellcheck disable=SC2086
step sweep-main 55 "Kernel ladder vs cuBLAS" ./main/ladder_bench --rung streamk $SW --target-ms 10 --rest-ms 120 \
    --no-traced --csv "$OUT/sweep-main.csv"
sed -n '/Kernel ladder vs cuBLAS/,$p' "$L/sweep-main.log" > "$OUT/sweep-main.txt"
for s in 300x1000x1032 129x777x2056; do
    step "memcheck-$s" 30 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck ./ladder_bench \
        --rung streamk+1 --shape "$s" --no-traced --target-ms 1 --min-iters 1 --max-iters 2 --rest-ms 0 --csv /tmp/mc.csv
done
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
