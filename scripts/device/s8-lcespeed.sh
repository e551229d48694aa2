#!/usr/bin/env bash
# (HISTORY: since s9-lcet the transposed kernels ARE rungs 3-4 and LCE_KERNEL is gone; this script now times the rungs
# twice.) s8-lcespeed, for the lead: the ONE call that decided whether the transposed kernels (LCE_KERNEL=t,
# kernels/lce/transposed_rung3.cu) become rungs 3-4. ~2 minutes wall. Runs scripts/device/lce.sh with the rungs as
# built ("default") and the transposed candidates ("t") side by side: rung 4 smoke (30 s cap: a hang of the untested
# transposed rung 4 ends there), gpu_lce per variant, rungs 0-2 + 3-4 timing, rung 3 vs 4 interleaved, tracing cost,
# PyTorch, the main-loop diagnostics, and both sweeps (checked).
# Build here (the default preset):  cmake --build build/default --target lce gpu_lce
#   B=/work/main/build-s8lce; mkdir -p $B/scripts/device $B/scripts/lce
#   cp build/default/kernels/lce/lce build/default/tests/kernels/gpu_lce $B/ && strip $B/lce $B/gpu_lce
#   cp scripts/device/lce.sh scripts/device/s8-lcespeed.sh $B/scripts/device/ && cp scripts/lce/torch_reference.py $B/scripts/lce/
# run (carry build-s8lce):  cd build-s8lce && bash scripts/device/s8-lcespeed.sh 2>&1 | tee $OUT/s8lce.txt
# Success: "R4 v=t ok", "gpu_lce v=t rc=0" (PASSED: 0 failure(s)), TIME / INTERLEAVED / TRACECOST lines for v=t, and
# "lce: OK" after both sweeps. The transposed kernels should then be the rungs if v=t's rung 3 and rung 4 beat the
# default's in this run and in its sweep (call 6 of session 8: rung 3 0.4064 vs 0.4362 ms).
cd "$(dirname "$0")/../.." || exit 1
LCE_KERNELS="default t" LCE_SWEEP_KERNELS="t default" LCE_TIME_RUNGS="0 1 2" LCE_AB_ITERS=100 \
    timeout 500 bash scripts/device/lce.sh
