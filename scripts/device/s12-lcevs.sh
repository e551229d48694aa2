#!/usr/bin/env bash
# s12-lcevs (issue 11): rung 4 against the fastest PyTorch form in ONE process, interleaved, beside today's
# separate-process numbers in the same call.
#   1. liblce_capi on the GPU: tst_lce_capi (opens at the benchmark point) and gpu_lce_capi (every rung checked
#      through the library on a caller's stream, the N = 100 refusals);
#   2. today's way (s11-final.sh): `lce --time --rung 3/4` in its own process, then torch_reference.py
#      --compile-padded-only in another (its TORCH lines); the same torch process also runs --vs-lce: rung 4 checked
#      in that process, then timed interleaved with the eager and compiled K-padded forms (50 pairs, order flipped
#      every pair, torch's stream, CUDA events: VSLCE lines), then checked again; `lce --time --rung 4` again after;
#   3. a second torch process the same way (inductor's cache from the first: a shorter compile) when the budget allows:
#      the two processes' ratios side by side. nvidia-smi's SM clock / temperature / power noted between the steps.
# Build (Qt-free, the VM): ninja -C build/kchecks lce lce_capi tst_lce_capi; then
#   D=/work/main/build-s12lcevs; mkdir -p $D && cp build/kchecks/kernels/lce/lce build/kchecks/kernels/lce/liblce_capi.so
#   build/kchecks/tests/kernels/tst_lce_capi $D/ && strip $D/lce $D/liblce_capi.so $D/tst_lce_capi &&
#   (cd $D && tar cJf bins.tar.xz lce liblce_capi.so tst_lce_capi && rm lce liblce_capi.so tst_lce_capi) &&
#   cp scripts/device/lib.sh scripts/device/s12-lcevs.sh scripts/lce/torch_reference.py $D/
# Carry: ["build-s12lcevs"]. Command: cd build-s12lcevs && tar xJf bins.tar.xz && BUDGET=150 timeout 165 bash s12-lcevs.sh
# (the repeat call: LCEVS_TESTS=0 LCEVS_P2_MIN=28 BUDGET=70 timeout 75 bash s12-lcevs.sh; each VSLCE form also gets a "by position"
# line and a "queued behind a ~1 ms spin" line since the second call; every pair in $OUT/pairsN.csv)
# Success prints: "PASS tst_lce_capi", "PASS gpu_lce_capi", TIME lines, TORCH lines, "VSLCE check ...: PASS rung 4"
# twice per process, two "VSLCE <form> ..." lines per process (medians, speed-ups, pairs won), "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s12-lcevs "${BUDGET:-150}"
ws_cuda_env
export LD_LIBRARY_PATH=$PWD:$LD_LIBRARY_PATH  # liblce_capi.so for tst_lce_capi
if ldd ./liblce_capi.so | grep -q "not found"; then  # no CUDA toolkit libraries: the cuBLAS that PyTorch ships (s11-final)
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
fi
clk() { nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 | head -1; }
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
note "ldd liblce_capi.so: $(ldd ./liblce_capi.so | grep -E 'cudart|cublas' | awk '{print $1 "=>" $3}' | tr '\n' ' ')"
if [ "${LCEVS_TESTS:-1}" = 1 ]; then  # LCEVS_TESTS=0: the repeat call (the tests passed in the first)
    step tst_lce_capi 20 "tst_lce_capi: 0 failed" ./tst_lce_capi
    step gpu_lce_capi 30 "gpu_lce_capi: 0 failed" ./tst_lce_capi --gpu
fi
torchrun() {  # torchrun N CAP: one torch process with --vs-lce, its lines into the summary
    note "clocks before torch process $1: $(clk)"
    PYTHONUNBUFFERED=1 timeout "$(($2 + 50))" python3 ./torch_reference.py --compile-padded-only --compile-cap "$2" \
        --iters 20 --vs-lce ./liblce_capi.so --lce-rung 4 --pairs 50 --pair-warmup 10 \
        --pairs-csv "$OUT/pairs$1.csv" > "$OUT/torch$1.txt" 2>&1
    note "torch process $1: rc=$?"
    grep -E "^TORCH|^torch|^VSLCE|Error|error:" "$OUT/torch$1.txt" | tail -20 | tee -a "$S"
    note "clocks after torch process $1: $(clk)"
}
echo "== separate processes, as s11-final ($(left) s left)"
for r in 3 4; do
    note "$(timeout 10 ./lce --time --rung $r --warmup 10 --iters 30 2>&1 | grep -E 'TIME|FAIL')"
done
torchrun 1 45
note "after: $(timeout 10 ./lce --time --rung 4 --warmup 10 --iters 30 2>&1 | grep -E 'TIME|FAIL')"
if [ "$(left)" -ge "${LCEVS_P2_MIN:-40}" ]; then  # (a second process with the cache warm: ~22 s)
    torchrun 2 30
    note "after: $(timeout 10 ./lce --time --rung 4 --warmup 10 --iters 30 2>&1 | grep -E 'TIME|FAIL')"
else
    note "SKIP torch process 2: $(left) s left"
fi
echo "== end ($(left) s left)" | tee -a "$S"
