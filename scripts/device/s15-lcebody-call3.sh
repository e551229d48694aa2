#!/usr/bin/env bash
# s15-lcebody call 3: the tile end is the next tile's first load arriving late (call 2's trace of 28: the consumers
# wait 0.75 us for k-step 0 of the next tile after the last MMA; the producer issues a stage per ~0.4-0.5 us), so the
# producer prefetches E into L2 ahead of its loads: 31 / 32 = 15 + E prefetched 4 / 8 k-steps ahead (across the tile's
# end into the pair's next unit), 33 = 28 (the tile-end overlap) + 32's prefetch.
#   1. correctness: the 24-point checked sweep of rung 4 with 31, 32, 33; memcheck of 33 at an odd shape;
#   2. interleaved (40 pairs): 15 vs 31, 32, 33, 15 at the benchmark point; the best (B/A < 0.995) at 512/1000,
#      3072/70, 2048/10, then gpu_lce with it and rung 4 with it against PyTorch in one process (LCE_R4UF).
# (Run once on 2026-12-02; configurations 31-33 were removed afterwards: build commit 996cfa8 to run it again.)
# Build (Qt-free Release, the VM): ninja -C build/kchecks lce gpu_lce lce_capi; into
#   /work/main/build-s15-lcebody/bins3.tar.xz: stripped lce, gpu_lce, liblce_capi.so; plus lib.sh, this script,
#   torch_reference.py.
# Carry: ["build-s15-lcebody"]. Command: cd build-s15-lcebody && tar xJf bins3.tar.xz && BUDGET=130 timeout 140 bash s15-lcebody-call3.sh
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s15-lcebody-call3 "${BUDGET:-130}"
ws_cuda_env
export LD_LIBRARY_PATH=$PWD:$LD_LIBRARY_PATH
if ldd ./liblce_capi.so | grep -q "not found"; then  # PyTorch's CUDA 13 runtime and cuBLAS (s12-lcevs)
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
fi
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
clk() { nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 | head -1; }
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u); $(clk)"
for V in 31 32 33; do
    LCE_TVAR=$V timeout 20 $P --sweep --check --rung 4 > "$L/sweep-r4-$V.txt" 2>&1
    note "sweep rung 4/$V rc=$? | $(grep -c PASS "$L/sweep-r4-$V.txt") PASS | $(grep -E 'lce: OK|FAIL' "$L/sweep-r4-$V.txt" | head -2 | tr '\n' ' ')"
done
LCE_TVAR=33 timeout 20 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-cand 200 --b 150 \
    --per-user 7 --k-user 130 > "$L/memcheck-33.txt" 2>&1
note "memcheck rung 4/33 rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$L/memcheck-33.txt" | tail -2 | tr '\n' ' ')"
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
BEST=15
BR=1
for V in 31 32 33; do
    inter "15 vs $V benchmark point" 15 $V
    if awk "BEGIN{exit !($RATIO < $BR)}"; then BEST=$V; BR=$RATIO; fi
done
inter "15 vs 15 benchmark point (noise)" 15 15
note "best at the benchmark point: $BEST (B/A $BR)"
if awk "BEGIN{exit !($BR < 0.995)}"; then
    inter "15 vs $BEST 512/1000" 15 $BEST --b 512 --per-user 1000
    inter "15 vs $BEST 3072/70" 15 $BEST --b 3072
    inter "15 vs $BEST 2048/10" 15 $BEST --b 2048 --per-user 10
    inter "15 vs $BEST benchmark point (again)" 15 $BEST
    LCE_TVAR=$BEST step gpu_lce-$BEST 30 "PASSED" ./gpu_lce ./lce-t
    if [ "$(left)" -ge 55 ] && [ -f torch_reference.py ]; then
        note "clocks before the torch process (rung 4's user-first walk = $BEST): $(clk)"
        LCE_R4UF=$BEST PYTHONUNBUFFERED=1 timeout "$(( $(left) - 3 ))" python3 ./torch_reference.py --compile-padded-only \
            --compile-cap 35 --iters 20 --vs-lce ./liblce_capi.so --lce-rung 4 --pairs 50 --pair-warmup 10 \
            > "$OUT/torch.txt" 2>&1
        note "torch process rc=$?"
        grep -E "^TORCH|^VSLCE|Error|error:" "$OUT/torch.txt" | tail -14 | tee -a "$S"
    else
        note "SKIP rung 4 vs PyTorch: $(left) s left"
    fi
fi
echo "== end ($(left) s left)" | tee -a "$S"
