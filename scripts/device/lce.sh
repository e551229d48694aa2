#!/usr/bin/env bash
# The linear-compression family on the GPU machine, in ONE call (issue 11):
#   1. correctness: every rung vs the fp32 reference at the benchmark point and odd sizes (M = 1, N not a
#      multiple of 64, N not a multiple of 8 where rungs 3-4 must refuse, one user, every candidate its own
#      user, a shuffled mapping, small odd K);
#   2. timing of every rung at the benchmark point (median of 50 after 10 warmup);
#   3. the PyTorch forms at the same point (scripts/lce/torch_reference.py, compile capped);
#   4. the sweep, timing only (LCE_SWEEP=0 skips it).
# Needs the driver built here (nvcc compiles sm_90a on any machine) and carried:
#   cmake --build build/default --target lce && mkdir -p build-lce && cp build/default/kernels/lce/lce build-lce/ \
#     && strip build-lce/lce
#   run: bash scripts/device/lce.sh      (carry build-lce)
# Success: every "PASS rung" line and no "FAIL" line in step 1, "lce: OK" after each check, TIME and TORCH
# tables in steps 2-3. Logs go to $OUT (lce.log).
set -u
LCE=${LCE:-build-lce/lce}
OUTDIR=${OUT:-/tmp/lce-out}
mkdir -p "$OUTDIR"
LOG=$OUTDIR/lce.log
export WARPSTAGE_REQUIRE_GPU=1
if ldd "$LCE" | grep -q "not found"; then  # no CUDA toolkit libraries: use the cuBLAS that PyTorch ships
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
    ldd "$LCE" | grep "not found" | tee -a "$LOG"
fi
step() { echo "+ $*" | tee -a "$LOG"; timeout "${T:-120}" "$@" 2>&1 | tee -a "$LOG"; echo "rc=${PIPESTATUS[0]}" | tee -a "$LOG"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee -a "$LOG"
echo "== 1. correctness" | tee -a "$LOG"
step "$LCE" --check --rung all
step "$LCE" --check --rung all --m 1 --n 200 --k-user 37 --k-cand 29 --b 9 --per-user 4
step "$LCE" --check --rung all --m 130 --n 100 --k-user 13 --k-cand 70 --b 5 --per-user 2
step "$LCE" --check --rung all --m 257 --n 264 --k-user 100 --k-cand 131 --b 33 --per-user 1000
step "$LCE" --check --rung all --m 433 --n 256 --k-user 1178 --k-cand 866 --b 200 --per-user 1
step "$LCE" --check --rung all --m 433 --n 256 --b 300 --per-user 7 --shuffled
step "$LCE" --check --rung 3 --n 100
echo "== 2. timing at the benchmark point" | tee -a "$LOG"
step "$LCE" --time --rung all --warmup 10 --iters 50
echo "== 3. PyTorch at the benchmark point" | tee -a "$LOG"
T=${TORCH_TIMEOUT:-420} step python3 scripts/lce/torch_reference.py --compile-cap "${COMPILE_CAP:-150}" ${TORCH_ARGS:-}
if [ "${LCE_SWEEP:-1}" != 0 ]; then
    echo "== 4. sweep (timing)" | tee -a "$LOG"
    T=200 step "$LCE" --sweep --time --warmup 3 --iters 10
fi
grep -E "^(PASS|FAIL|TIME|TORCH|SWEEP|rung .* refuses|lce:)" "$LOG" > "$OUTDIR/summary.txt"
