#!/usr/bin/env bash
# s13-lcefirst call 2: after call 1 (15 faster than 11 by 0.9 %, now the rung; 16 = 11 + deferred U correct but
# 0.8-3.4 % slower): what the deferral costs and whether a narrower one pays on top of 15.
#   1. correctness: gpu_lce and the 24-point checked sweep of rung 4 with LCE_TVAR=18 and =19 (15 + deferral), the
#      long-user-tile shape (the FIFO fills) for both, memcheck of 19 at one odd shape; smoke of the rung as built (15);
#   2. timing, interleaved (lce --interleave 4,4, 40 pairs): 11 vs 15 at 512/1000, 3072/70, 2048/10 (the new rung
#      at more points); 11 vs 17 (16 without the reduce-adds, output wrong: the fix-ups' cost) at the benchmark point
#      and 1024/1000; 15 vs 15 (noise); 15 vs 18 (only a pair's first unit deferred) and 15 vs 19 at the benchmark
#      point, 1024/1000, 512/70.
# Build: as s13-lcefirst.sh (same folder build-s13-lcefirst, this script beside it).
# Carry: ["build-s13-lcefirst"]. Command: cd build-s13-lcefirst && tar xJf bins.tar.xz && BUDGET=100 timeout 110 bash s13-lcefirst2.sh
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s13-lcefirst2 "${BUDGET:-100}"
ws_cuda_env
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$S"
timeout 8 $P --check --rung 4 > "$OUT/smoke.txt" 2>&1
rc=$?
note "smoke rung 4 as built (15) rc=$rc | $(grep -E "PASS|FAIL|lce:" "$OUT/smoke.txt" | tail -2 | tr '\n' ' ')"
[ $rc = 0 ] || { echo "== end (smoke failed)" | tee -a "$S"; exit 1; }
for V in 19 18; do
    LCE_TVAR=$V timeout 25 ./gpu_lce ./lce-t > "$OUT/gpu_lce-$V.txt" 2>&1
    note "gpu_lce/$V rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce-$V.txt" | tail -1)"
    LCE_TVAR=$V timeout 15 $P --sweep --check --rung 4 > "$OUT/sweep-r4-$V.txt" 2>&1
    note "sweep rung 4/$V rc=$? | $(grep -c PASS "$OUT/sweep-r4-$V.txt") PASS | $(grep -E 'lce:' "$OUT/sweep-r4-$V.txt" | tail -1)"
    LCE_TVAR=$V timeout 8 $P --check --rung 4 --k-user 3000 --k-cand 40 > "$OUT/long-$V.txt" 2>&1
    note "long user tiles $V rc=$? | $(grep -E "PASS|FAIL|lce:" "$OUT/long-$V.txt" | tail -2 | tr '\n' ' ')"
done
LCE_TVAR=19 timeout 15 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-cand 29 --b 150 \
    --per-user 7 --k-user 130 > "$OUT/memcheck.txt" 2>&1
note "memcheck rung 4/19 rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$OUT/memcheck.txt" | tail -2 | tr '\n' ' ')"
inter() {  # inter LABEL VA VB POINT...
    local label=$1 va=$2 vb=$3
    shift 3
    [ "$(left)" -ge 8 ] || { note "SKIP $label: $(left) s left"; return; }
    note "I $label: $(LCE_TVAR=$va LCE_TVAR_B=$vb timeout 9 $P --interleave 4,4 --warmup 3 --iters 40 "$@" 2>&1 \
        | grep -E '^INTERLEAVED rung|FAIL' | head -2 | tr '\n' ' ')"
}
inter "15 vs 18 benchmark point" 15 18
inter "15 vs 19 benchmark point" 15 19
inter "15 vs 15 benchmark point (noise)" 15 15
inter "11 vs 17 benchmark point (no reduce-adds)" 11 17
inter "15 vs 18 1024/1000" 15 18 --per-user 1000
inter "15 vs 19 1024/1000" 15 19 --per-user 1000
inter "11 vs 17 1024/1000 (no reduce-adds)" 11 17 --per-user 1000
inter "11 vs 15 512/1000" 11 15 --b 512 --per-user 1000
inter "11 vs 15 3072/70" 11 15 --b 3072
inter "11 vs 15 2048/10" 11 15 --b 2048 --per-user 10
inter "15 vs 18 512/70" 15 18 --b 512
inter "15 vs 19 512/70" 15 19 --b 512
echo "== end ($(left) s left)" | tee -a "$S"
