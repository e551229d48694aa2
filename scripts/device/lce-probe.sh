#!/usr/bin/env bash
# s8-lcespeed: rung 4's main-loop diagnostics beside the transposed main-loop probe (kernels/lce/transposed_probe.cu),
# each twice (median of 50 after 10 warmup), in ONE device call of ~5 s wall. Output wrong in every diagnostic (timing only):
#   none / none4   rung 4 without the candidate epilogue, 3 / 4 ring stages (rungs 3-4's main loop)
#   noload         none without any TMA load (the MMAs and the ring's barriers alone)
#   tnone / tnone4 the transposed formulation's main loop (out^T = E^T . W^T, n224 tiles), 3 / 4 stages, no epilogue
# Build here: cmake --build build/default --target lce; B=/work/main/build-lce; mkdir -p $B;
#   cp build/default/kernels/lce/lce $B/ && strip $B/lce && cp scripts/device/lce-probe.sh $B/
# run (carry build-lce): cd build-lce && bash lce-probe.sh 2>&1 | tee $OUT/probe.txt
# Success: a TIME line for every diagnostic (no FAIL / refuses); tnone below none is what the probe is for.
L=${LCE:-./lce}
if ldd "$L" | grep -q "not found"; then  # no CUDA toolkit libraries: use the cuBLAS that PyTorch ships
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
fi
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
echo "rung4 $(timeout 30 "$L" --time --rung 4 --warmup 10 --iters 50 2>&1 | grep -E 'TIME|FAIL')"
for d in none tnone none4 tnone4 noload none tnone none4 tnone4; do
    echo "$d $(LCE_RUNG4_EPILOGUE=$d timeout 30 "$L" --time --rung 4 --warmup 10 --iters 50 2>&1 | grep -E 'TIME|FAIL|refuses')"
done
