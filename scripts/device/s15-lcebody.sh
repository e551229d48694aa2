#!/usr/bin/env bash
# s15-lcebody (issue 11's 1.5x goal): rung 4's host path cached per problem (user_first.cu: launch4 keeps its tensor
# maps and walk while the problem is the same) and three configurations beside kRung4UserFirst (15), measured against it:
# 26 = L2 hints on the epilogue warp's out stores (evict-first) and U loads / user-tile stores (evict-last), 27 = 26 +
# E evict-first / W evict-last on the producer's loads, 28 / 29 = the next tile's first 2 / 3 k-steps (second piece)
# issued under a tile's first-piece epilogue (every k-step as two m64n112 wgmmas), 30 = those split wgmmas alone.
#   1. correctness: smoke (rung 4 as built); gpu_lce (as built, then LCE_TVAR=28); tst_lce_capi --gpu with the new
#      library (its A-B-A case: two problems of one shape, the cache must re-encode) and with a planted mutant
#      (mutant/liblce_capi.so: launchKeyOf without the pointers -- must FAIL); the 24-point checked sweep of rung 4
#      as built and with 26 / 27 / 28 / 29 / 30 (one process each: the cache across shapes); memcheck of 28 and 29
#      at an odd shape; the SASS's HGMMA / WARPGROUP.DEPBAR counts of 15, 28, 30;
#   2. timing, interleaved (lce --interleave 4,4, 40 pairs): 15 vs 26, 27, 15 (noise), 30, 28, 29 at the benchmark
#      point, then 15 vs the better of 26 / 27 and the better of 28 / 29 at 512/1000, 3072/70, 1024/100;
#   3. host cost per lce_run (capi_host_cost.py, GPU kept busy): main's liblce_capi.so and this one, alternated;
#   4. rung 4 against PyTorch in one process (torch_reference.py --vs-lce, s12-lcevs's way, this library): with the
#      better of 28 / 29 (LCE_R4UF) if it beat 15 by >= 0.5 % at the benchmark point, else as built.
# (Run once on 2026-12-02; configurations 26-30 were removed afterwards: build commit 3f80347 to run it again.)
# Build (Qt-free Release, the VM): ninja -C build/kchecks lce gpu_lce lce_capi tst_lce_capi; then into
#   /work/main/build-s15-lcebody/bins.tar.xz: stripped lce, gpu_lce, liblce_capi.so, tst_lce_capi, main/liblce_capi.so
#   (main's build), mutant/liblce_capi.so; plus lib.sh, this script, torch_reference.py, capi_host_cost.py.
# Carry: ["build-s15-lcebody"]. Command: cd build-s15-lcebody && tar xJf bins.tar.xz && BUDGET=420 timeout 435 bash s15-lcebody.sh
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s15-lcebody "${BUDGET:-420}"
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
timeout 8 $P --check --rung 4 > "$OUT/smoke.txt" 2>&1
rc=$?
note "smoke rung 4 as built rc=$rc | $(grep -E "PASS|FAIL|lce:" "$OUT/smoke.txt" | tail -2 | tr '\n' ' ')"
[ $rc = 0 ] || { echo "== end (smoke failed)" | tee -a "$S"; exit 1; }
step gpu_lce 30 "PASSED" ./gpu_lce ./lce-t
LCE_TVAR=28 step gpu_lce-28 30 "PASSED" ./gpu_lce ./lce-t
step gpu_lce_capi 30 "gpu_lce_capi: 0 failed" ./tst_lce_capi --gpu
LD_LIBRARY_PATH=$PWD/mutant:$LD_LIBRARY_PATH timeout 30 ./tst_lce_capi --gpu > "$OUT/mutant-capi.txt" 2>&1
note "mutant (launchKeyOf without the pointers) gpu_lce_capi rc=$? (want 1) | $(grep -E "^FAIL|failed" "$OUT/mutant-capi.txt" | head -3 | tr '\n' ' ')"
for V in "" 26 27 28 29 30; do
    E=${V:+LCE_TVAR=$V}
    env ${E:-X=0} timeout 20 $P --sweep --check --rung 4 > "$OUT/sweep-r4-${V:-built}.txt" 2>&1
    note "sweep rung 4/${V:-built} rc=$? | $(grep -c PASS "$OUT/sweep-r4-${V:-built}.txt") PASS | $(grep -E 'lce:|FAIL' "$OUT/sweep-r4-${V:-built}.txt" | head -2 | tr '\n' ' ')"
done
for V in 28 29; do  # K_cand 200: 4 k-steps (29 overlaps 3 of them); K_cand 29: 1 k-step (no overlap)
    for KC in 200 29; do
        [ $V = 28 ] && [ $KC = 29 ] && continue
        LCE_TVAR=$V timeout 20 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-cand $KC \
            --b 150 --per-user 7 --k-user 130 > "$OUT/memcheck-$V-$KC.txt" 2>&1
        note "memcheck rung 4/$V K_cand $KC rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$OUT/memcheck-$V-$KC.txt" | tail -2 | tr '\n' ' ')"
    done
done
command -v cuobjdump > /dev/null && cuobjdump -sass $P 2>/dev/null | awk '/Function : /{f=""} /Function : .*lceUserFirstILi4ELi(15|28|30)E/{f=$3} f && /HGMMA/{n[f]++} f && /WARPGROUP.DEPBAR/{d[f]++} END{for(k in n) print "SASS " k ": " n[k] " HGMMA, " d[k]+0 " WARPGROUP.DEPBAR"}' | tee -a "$S"
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
inter "15 vs 26 benchmark point" 15 26
R26=$RATIO
inter "15 vs 27 benchmark point" 15 27
R27=$RATIO
inter "15 vs 15 benchmark point (noise)" 15 15
inter "15 vs 30 benchmark point" 15 30
inter "15 vs 28 benchmark point" 15 28
R28=$RATIO
inter "15 vs 29 benchmark point" 15 29
R29=$RATIO
BEST=26
BR=$R26
if awk "BEGIN{exit !($R27 < $R26)}"; then BEST=27; BR=$R27; fi
OV=28
OR=$R28
if awk "BEGIN{exit !($R29 < $R28)}"; then OV=29; OR=$R29; fi
note "better hint configuration at the benchmark point: $BEST (B/A $BR); better overlap: $OV (B/A $OR)"
inter "15 vs $OV 512/1000" 15 $OV --b 512 --per-user 1000
inter "15 vs $OV 3072/70" 15 $OV --b 3072
inter "15 vs $OV 1024/100" 15 $OV --per-user 100
inter "15 vs $OV 2048/10" 15 $OV --b 2048 --per-user 10
inter "15 vs $BEST 512/1000" 15 $BEST --b 512 --per-user 1000
inter "15 vs $BEST 3072/70" 15 $BEST --b 3072
inter "15 vs $OV benchmark point (again)" 15 $OV
note "$(timeout 10 $P --time --rung 4 --warmup 10 --iters 30 2>&1 | grep -E 'TIME|FAIL')"
for r in 1 2; do  # host cost per call: main's library, then this one
    for L in main/liblce_capi.so ./liblce_capi.so; do
        [ "$(left)" -ge 75 ] || break
        timeout 25 python3 ./capi_host_cost.py "$L" --calls 200 --rounds 2 2>&1 | tail -2 | sed "s|^|$r $L: |" | tee -a "$S"
    done
done
UF=15
awk "BEGIN{exit !($OR < 0.995)}" && UF=$OV
if [ "$(left)" -ge 60 ] && [ -f torch_reference.py ]; then
    note "clocks before the torch process (rung 4's user-first walk = $UF): $(clk)"
    LCE_R4UF=$UF PYTHONUNBUFFERED=1 timeout "$(( $(left) - 5 ))" python3 ./torch_reference.py --compile-padded-only --compile-cap 40 \
        --iters 20 --vs-lce ./liblce_capi.so --lce-rung 4 --pairs 50 --pair-warmup 10 \
        --pairs-csv "$OUT/pairs.csv" > "$OUT/torch.txt" 2>&1
    note "torch process rc=$?"
    grep -E "^TORCH|^VSLCE|Error|error:" "$OUT/torch.txt" | tail -20 | tee -a "$S"
    note "clocks after: $(clk)"
else
    note "SKIP rung 4 vs PyTorch: $(left) s left"
fi
echo "== end ($(left) s left)" | tee -a "$S"
