#!/usr/bin/env bash
# s14-lcespeed (issue 11's 1.5x goal): lce rung 4 with held pieces (lce_body.cuh Variant::hold; variants 21-23 = the
# rung, 15, with a candidate tile's accumulator kept as fp16 and added during the next tile's k-steps) against the rung.
#   1. correctness: smoke of the rung as built; for 22, 21, 23: gpu_lce (LCE_TVAR=V), the 24-point checked sweep of
#      rung 4; memcheck of 22 and 21 at an odd shape (M 130, N 200, K_cand 29: KT = 1, shorter than the held adds);
#   2. timing, interleaved (lce --interleave 4,4, 40 pairs): 15 vs 22 / 21 / 23 / 15 (noise) at the benchmark point,
#      then 15 vs the better of 21 / 22 at 512/1000, 3072/70, 2048/10, 1024/100;
#   3. if that one is faster at the benchmark point (B/A < 0.995): rung 4 with it (LCE_R4UF) against PyTorch in one
#      process (torch_reference.py --vs-lce through liblce_capi.so, s12-lcevs's way: launch-inclusive and queued
#      behind a spin), and the rung as built the same way in a second process, when the budget allows.
# (Run twice on 2026-12-02; the variants it times were removed afterwards: build commit ed1deb2 to run it again.)
# Build (Qt-free Release, the VM): ninja -C build/kchecks lce gpu_lce lce_capi; then
#   D=/work/main/build-s14-lcespeed; mkdir -p $D && cp build/kchecks/kernels/lce/lce build/kchecks/tests/kernels/gpu_lce
#   build/kchecks/kernels/lce/liblce_capi.so $D/ && strip $D/lce $D/gpu_lce $D/liblce_capi.so &&
#   (cd $D && tar cJf bins.tar.xz lce gpu_lce liblce_capi.so && rm lce gpu_lce liblce_capi.so) &&
#   cp scripts/device/lib.sh scripts/device/s14-lcespeed.sh scripts/lce/torch_reference.py $D/
# Carry: ["build-s14-lcespeed"]. Command: cd build-s14-lcespeed && tar xJf bins.tar.xz && BUDGET=200 timeout 210 bash s14-lcespeed.sh
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s14-lcespeed "${BUDGET:-200}"
ws_cuda_env
export LD_LIBRARY_PATH=$PWD:$LD_LIBRARY_PATH
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
clk() { nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 | head -1; }
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u); $(clk)"
timeout 8 $P --check --rung 4 > "$OUT/smoke.txt" 2>&1
rc=$?
note "smoke rung 4 as built (15) rc=$rc | $(grep -E "PASS|FAIL|lce:" "$OUT/smoke.txt" | tail -2 | tr '\n' ' ')"
[ $rc = 0 ] || { echo "== end (smoke failed)" | tee -a "$S"; exit 1; }
for V in 22 21 23; do
    LCE_TVAR=$V timeout 25 ./gpu_lce ./lce-t > "$OUT/gpu_lce-$V.txt" 2>&1
    note "gpu_lce/$V rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce-$V.txt" | tail -1)"
    LCE_TVAR=$V timeout 15 $P --sweep --check --rung 4 > "$OUT/sweep-r4-$V.txt" 2>&1
    note "sweep rung 4/$V rc=$? | $(grep -c PASS "$OUT/sweep-r4-$V.txt") PASS | $(grep -E 'lce:' "$OUT/sweep-r4-$V.txt" | tail -1)"
done
for V in 22 21; do
    LCE_TVAR=$V timeout 15 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-cand 29 --b 150 \
        --per-user 7 --k-user 130 > "$OUT/memcheck-$V.txt" 2>&1
    note "memcheck rung 4/$V rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$OUT/memcheck-$V.txt" | tail -2 | tr '\n' ' ')"
done
RATIO=9
inter() {  # inter LABEL VA VB POINT...: one interleaved line; RATIO = its B/A
    local label=$1 va=$2 vb=$3 line
    shift 3
    RATIO=9
    [ "$(left)" -ge 8 ] || { note "SKIP $label: $(left) s left"; return; }
    line=$(LCE_TVAR=$va LCE_TVAR_B=$vb timeout 9 $P --interleave 4,4 --warmup 3 --iters 40 "$@" 2>&1 \
        | grep -E '^INTERLEAVED rung|FAIL' | head -2 | tr '\n' ' ')
    RATIO=$(echo "$line" | sed -n 's/.*= \([0-9.]*\) .*/\1/p')
    RATIO=${RATIO:-9}
    note "I $label: $line"
}
inter "15 vs 22 benchmark point" 15 22
R22=$RATIO
inter "15 vs 21 benchmark point" 15 21
R21=$RATIO
inter "15 vs 23 benchmark point" 15 23
inter "15 vs 15 benchmark point (noise)" 15 15
BEST=22
BR=$R22
if awk "BEGIN{exit !($R21 < $R22)}"; then BEST=21; BR=$R21; fi
note "best held variant at the benchmark point: $BEST (B/A $BR)"
inter "15 vs $BEST 512/1000" 15 $BEST --b 512 --per-user 1000
inter "15 vs $BEST 3072/70" 15 $BEST --b 3072
inter "15 vs $BEST 2048/10" 15 $BEST --b 2048 --per-user 10
inter "15 vs $BEST 1024/100" 15 $BEST --per-user 100
inter "15 vs $BEST benchmark point (again)" 15 $BEST
if awk "BEGIN{exit !($BR < 0.995)}" && [ "$(left)" -ge 55 ] && [ -f torch_reference.py ]; then
    if ldd ./liblce_capi.so | grep -q "not found"; then  # PyTorch's CUDA 13 runtime and cuBLAS (s12-lcevs)
        d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
        for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
            export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
        done
    fi
    torchrun() {  # torchrun N UF CAP: one torch process with --vs-lce, rung 4's user-first walk = variant UF
        note "clocks before torch process $1 (rung 4 = $2): $(clk)"
        LCE_R4UF=$2 PYTHONUNBUFFERED=1 timeout "$(($3 + 40))" python3 ./torch_reference.py --compile-padded-only \
            --compile-cap "$3" --iters 20 --vs-lce ./liblce_capi.so --lce-rung 4 --pairs 40 --pair-warmup 10 \
            --pairs-csv "$OUT/pairs$1.csv" > "$OUT/torch$1.txt" 2>&1
        note "torch process $1 (rung 4 = $2): rc=$?"
        grep -E "^TORCH|^VSLCE|Error|error:" "$OUT/torch$1.txt" | tail -20 | tee -a "$S"
    }
    torchrun 1 $BEST 45
    if [ "$(left)" -ge 35 ]; then torchrun 2 15 25; else note "SKIP torch process 2 (rung 4 = 15): $(left) s left"; fi
else
    note "SKIP rung 4 vs PyTorch: best B/A $BR, $(left) s left"
fi
echo "== end ($(left) s left)" | tee -a "$S"
