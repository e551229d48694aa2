#!/usr/bin/env bash
# The linear-compression family (issue 11) on the GPU machine, in ONE call: what docs/benchmarks.md reports.
#   1. rung 4 smoke check (30 s cap: a hang of the persistent kernel must not eat the call), then gpu_lce: every
#      rung vs the fp32 reference at the benchmark point and odd sizes, and the refusals;
#   2. timing of every rung at the benchmark point (median of 50 after 10 warmup);
#   3. the PyTorch forms at the same point (scripts/lce/torch_reference.py, each compile capped);
#   4. rung 3's variants: fused_epilogue.cu's kernel (CTA pairs or single CTAs; epilogue direct / TMA store /
#      no add / none), the kernel rung 3 was before the epilogue-warp kernel (the default since session 5) won;
#      rung 4 without its candidate epilogue (LCE_RUNG4_EPILOGUE=none, and none4 with 4 ring stages), and the old
#      ping-pong's mainloop alone (LCE_RUNG4=pingpong LCE_RUNG4_EPILOGUE=none);
#   5. the sweep, checked and timed (LCE_SWEEP=0 skips it).
# Shorter calls: LCE_VARIANT_CLUSTERS="2" LCE_VARIANT_EPILOGUES="none" (only the mainloop-alone reference), LCE_SWEEP=0,
# LCE_TORCH=0 (no PyTorch), LCE_VARIANTS=0 (no variants), LCE_TIME_RUNGS="2 3 4" (time only those rungs).
# Rung 4 is user_first.cu; the earlier ping-pong (persistent.cu) is timed as a variant (LCE_RUNG4=pingpong).
# The device copies the session's checkout: build here, put the binaries and these two scripts in an ignored
# folder of that checkout and carry it:
#   cmake --build build/default --target lce gpu_lce
#   mkdir -p build-lce/scripts/device build-lce/scripts/lce
#   cp build/default/kernels/lce/lce build/default/tests/kernels/gpu_lce build-lce/ && strip build-lce/lce build-lce/gpu_lce
#   cp scripts/device/lce.sh build-lce/scripts/device/ && cp scripts/lce/torch_reference.py build-lce/scripts/lce/
#   run (carry build-lce):  cd build-lce && bash scripts/device/lce.sh 2>&1 | tee $OUT/lce.txt
# Success: "R4=1", "gpu_lce rc=0" (PASSED: 0 failure(s)), TIME lines for rungs 0-4, TORCH lines, SWEEP lines and
# "lce: OK" at the end. About 75 s on a warm H200.
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
echo "== rung 4 smoke"; R4=0
timeout 30 "$L" --check --rung 4 --b 64 --per-user 5 && R4=1
echo "R4=$R4"
RUNGS="0 1 2 3"
if [ $R4 = 1 ]; then
    RUNGS="0 1 2 3 4"
    echo "== gpu_lce"; timeout 150 ./gpu_lce ./lce-t; echo "gpu_lce rc=$?"
else
    for a in "" "--m 1 --n 200 --k-user 37 --k-cand 29 --b 9 --per-user 4" "--b 200 --per-user 1"; do
        timeout 60 "$L" --check --rung 3 $a | grep -E "PASS|FAIL|lce:"
    done
fi
echo "== timing"
for r in ${LCE_TIME_RUNGS:-$RUNGS}; do timeout 60 "$L" --time --rung $r --warmup 10 --iters 50 | grep TIME; done
[ $R4 = 1 ] && echo "variant rung 4 pingpong (persistent.cu, LCE_RUNG4=pingpong): $(LCE_RUNG4=pingpong timeout 60 "$L" --time --rung 4 --warmup 10 --iters 50 2>/dev/null | grep TIME)"
[ "${LCE_TORCH:-1}" != 0 ] && echo "== torch" &&
timeout 100 python3 scripts/lce/torch_reference.py --compile-cap 45 --iters 20 2>&1 | grep -E "^TORCH|^torch"
[ "${LCE_VARIANTS:-1}" != 0 ] && echo "== rung 3 variants" &&
for c in ${LCE_VARIANT_CLUSTERS:-1 2}; do for e in ${LCE_VARIANT_EPILOGUES:-direct tma noadd none}; do
    echo "variant cluster=$c epilogue=$e: $(LCE_RUNG3_CLUSTER=$c LCE_RUNG3_EPILOGUE=$e timeout 60 "$L" --time --rung 3 --warmup 10 --iters 50 2>/dev/null | grep TIME)"
done; done
[ $R4 = 1 ] && [ "${LCE_VARIANTS:-1}" != 0 ] && for v in none none4; do
    echo "variant rung 4 epilogue=$v (output wrong; none4: 4 ring stages): $(LCE_RUNG4_EPILOGUE=$v timeout 60 "$L" --time --rung 4 --warmup 10 --iters 50 2>/dev/null | grep TIME)"
done
[ $R4 = 1 ] && [ "${LCE_VARIANTS:-1}" != 0 ] && echo "variant rung 4 pingpong epilogue=none (mainloop alone, output wrong): $(LCE_RUNG4=pingpong LCE_RUNG4_EPILOGUE=none timeout 60 "$L" --time --rung 4 --warmup 10 --iters 50 2>/dev/null | grep TIME)"
if [ "${LCE_SWEEP:-1}" != 0 ] && [ $R4 = 1 ]; then
    echo "== sweep"; timeout 120 "$L" --sweep --check --time --warmup 2 --iters 5 | grep -E "SWEEP|FAIL|lce:"
fi
