#!/usr/bin/env bash
# The linear-compression family (issue 11) on the GPU machine, in ONE call: what docs/benchmarks.md reports.
#   1. rung 4 smoke check of every kernel variant in LCE_KERNELS (30 s cap each: a hang of the persistent kernel must
#      not eat the call), then gpu_lce for each: every rung vs the fp32 reference at the benchmark point and odd
#      sizes, and the refusals;
#   2. timing at the benchmark point (median of 50 after 10 warmup): rungs LCE_TIME_RUNGS (default 0 1 2) once,
#      rungs 3 and 4 for each variant;
#   3. the tracing cost of rungs 3-4 for each variant (`lce --trace-cost`: the same launches with a per-warp trace
#      buffer attached to the kernel's module, as warpstage-record does, vs not; interleaved, medians);
#   4. the PyTorch forms at the same point (scripts/lce/torch_reference.py, each compile capped; LCE_TORCH=0 skips);
#   5. rung 4's main loop without any epilogue (LCE_RUNG4_EPILOGUE=tnone / tnone4: kernels/lce/transposed_probe.cu,
#      3 / 4 ring stages; output wrong: what the epilogue and the ring depth cost; LCE_VARIANTS=0 skips);
#   6. the sweep, checked and timed, with the default variant (LCE_SWEEP=0 skips it).
# Kernel variants: the loops over LCE_KERNELS (default "default": the rung as built) and LCE_SWEEP_KERNELS run each
# value v with LCE_TVAR=v (kernels/lce/lce_shape.h's kernel configurations: 10 forces rung 4's broadcast walk, 15 its
# user-first walk, on every shape; another value makes lce refuse with exit 2; session 8's LCE_KERNEL values and the
# variants of sessions 9-13 are gone: docs/kernel-notes/lce-first-round.md, "Tried and removed").
# Since s8-lcespeed also: rung 3 vs rung 4 interleaved in one process (lce --interleave 3,4) per variant, and the
# no-epilogue diagnostics per variant.
# The device copies the session's checkout: build here, put the binaries and these two scripts in an ignored
# folder of that checkout and carry it:
#   cmake --build build/default --target lce gpu_lce
#   B=/work/main/build-lce; mkdir -p $B/scripts/device $B/scripts/lce
#   cp build/default/kernels/lce/lce build/default/tests/kernels/gpu_lce $B/ && strip $B/lce $B/gpu_lce
#   cp scripts/device/lce.sh $B/scripts/device/ && cp scripts/lce/torch_reference.py $B/scripts/lce/
#   run (carry build-lce):  cd build-lce && bash scripts/device/lce.sh 2>&1 | tee $OUT/lce.txt
# Success: "R4 v=default ok" (each variant), "gpu_lce v=... rc=0" (PASSED: 0 failure(s)), TIME and TRACECOST lines,
# TORCH lines, SWEEP lines and "lce: OK" at the end.
set -u
export WARPSTAGE_REQUIRE_GPU=1
L=${LCE:-./lce}
printf '#!/bin/sh\nexec timeout 60 %s "$@"\n' "$L" > lce-t; chmod +x lce-t
if ldd "$L" | grep -q "not found"; then  # no CUDA toolkit libraries: use the cuBLAS that PyTorch ships
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
KS=${LCE_KERNELS:-default}
kenv() { case "$1" in default) echo "";; *) echo "LCE_TVAR=$1";; esac; }
OK=""
echo "== rung 4 smoke"
for v in $KS; do
    if env $(kenv $v) timeout 30 "$L" --check --rung 4 --b 64 --per-user 5 > smoke$v.txt 2>&1; then
        echo "R4 v=$v ok"; OK="$OK $v"
    else echo "R4 v=$v FAILED rc=$?"; tail -3 smoke$v.txt; fi
done
for v in $OK; do
    echo "== gpu_lce v=$v"; env $(kenv $v) timeout 150 ./gpu_lce ./lce-t > gpu_lce$v.txt 2>&1; rc=$?
    grep -E "^FAIL|PASSED|FAILED" gpu_lce$v.txt | head -8; echo "gpu_lce v=$v rc=$rc"
done
echo "== timing"
for r in ${LCE_TIME_RUNGS:-0 1 2}; do timeout 60 "$L" --time --rung $r --warmup 10 --iters 50 | grep TIME; done
for v in $OK; do for r in 3 4; do
    echo "v=$v $(env $(kenv $v) timeout 60 "$L" --time --rung $r --warmup 10 --iters 50 2>/dev/null | grep TIME)"
done; done
echo "== rung 3 vs rung 4, interleaved in one process (lce --interleave)"
for v in $OK; do
    echo "v=$v $(env $(kenv $v) timeout 60 "$L" --interleave 3,4 --warmup 10 --iters ${LCE_AB_ITERS:-60} 2>/dev/null | grep -E "INTERLEAVED|FAIL")"
done
echo "== tracing cost"
for v in $OK; do for r in 3 4; do
    echo "v=$v $(env $(kenv $v) timeout 60 "$L" --trace-cost --rung $r --warmup 5 --iters ${LCE_TC_ITERS:-30} 2>/dev/null | grep -E "TRACECOST|FAIL")"
done; done
[ "${LCE_TORCH:-1}" != 0 ] && echo "== torch" &&
timeout 100 python3 scripts/lce/torch_reference.py --compile-cap 45 --iters 20 2>&1 | grep -E "^TORCH|^torch"
[ "${LCE_VARIANTS:-1}" != 0 ] && for d in tnone tnone4; do
    echo "variant rung 4 epilogue=$d (output wrong; the main loop alone, 3 / 4 stages): $(LCE_RUNG4_EPILOGUE=$d timeout 60 "$L" --time --rung 4 --warmup 10 --iters 50 2>/dev/null | grep TIME)"
done
if [ "${LCE_SWEEP:-1}" != 0 ]; then for v in ${LCE_SWEEP_KERNELS:-default}; do
    echo "== sweep (variant $v)"
    ( env $(kenv $v) timeout 150 "$L" --sweep --check --time --warmup 2 --iters 5 | grep -E "SWEEP|FAIL|lce:" )
done; fi
