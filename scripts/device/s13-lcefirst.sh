#!/usr/bin/env bash
# s13-lcefirst (one call): rung 4's variant 15 (s12-lce: a user tile's halves published at once, never measured) and
# variant 16 (s13-lcefirst: deferred U, lce_defer.cuh -- a candidate piece whose user tile is not published yet is
# stored without U and U is TMA reduce-added later), each checked, then timed interleaved against variant 11 (the rung).
#   1. correctness: smoke (16 at the benchmark point), gpu_lce with LCE_TVAR=16 and =15, the 24-point checked sweep of
#      rung 4 for 16 and 15, 16 at two shapes whose user tiles are much longer than the candidates' (the deferral
#      FIFO fills: the blocking fallback and the drain), memcheck of 16 at two small odd shapes;
#   2. timing, A = LCE_TVAR=11 (the user-first walk everywhere, also where rung 4 takes the broadcast walk), B = 15 or
#      16 (LCE_TVAR_B), lce --interleave 4,4: 11 vs 11 (noise), 15 at the benchmark point and 1024/100, 16 at the
#      benchmark point (twice), 512/70, 3072/70, 1024/2, 1024/1000.
# Build (Qt-free, the VM): ninja -C build/k lce gpu_lce; then
#   D=/work/main/build-s13-lcefirst; mkdir -p $D && cp build/k/kernels/lce/lce build/k/tests/kernels/gpu_lce $D/ &&
#   strip $D/lce $D/gpu_lce && (cd $D && tar cJf bins.tar.xz lce gpu_lce && rm lce gpu_lce) &&
#   cp scripts/device/lib.sh scripts/device/s13-lcefirst.sh $D/
# Carry: ["build-s13-lcefirst"]. Command: cd build-s13-lcefirst && tar xJf bins.tar.xz && BUDGET=130 timeout 140 bash s13-lcefirst.sh
# Success prints: "smoke ... PASS", two "gpu_lce/V rc=0 ... PASSED", two "sweep rung 4/V ... 24 PASS ... lce: OK", two
# "long user tiles" PASS lines, two "ERROR SUMMARY: 0 errors", the "I ..." INTERLEAVED lines, "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s13-lcefirst "${BUDGET:-130}"
ws_cuda_env
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$S"
LCE_TVAR=16 timeout 8 $P --check --rung 4 > "$OUT/smoke.txt" 2>&1
rc=$?
note "smoke rung 4/16 benchmark point rc=$rc | $(grep -E "PASS|FAIL|lce:" "$OUT/smoke.txt" | tail -2 | tr '\n' ' ')"
[ $rc = 0 ] || { echo "== end (smoke failed)" | tee -a "$S"; exit 1; }
for V in 16 15; do
    LCE_TVAR=$V timeout 25 ./gpu_lce ./lce-t > "$OUT/gpu_lce-$V.txt" 2>&1
    note "gpu_lce/$V rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce-$V.txt" | tail -1)"
    LCE_TVAR=$V timeout 15 $P --sweep --check --rung 4 > "$OUT/sweep-r4-$V.txt" 2>&1
    note "sweep rung 4/$V rc=$? | $(grep -c PASS "$OUT/sweep-r4-$V.txt") PASS | $(grep -E 'lce:' "$OUT/sweep-r4-$V.txt" | tail -1)"
done
for shp in "--k-user 3000 --k-cand 40" "--k-user 3000 --k-cand 40 --b 3072 --per-user 1000"; do
    # shellcheck disable=SC2086
    LCE_TVAR=16 timeout 8 $P --check --rung 4 $shp > "$OUT/long.txt" 2>&1
    note "long user tiles 16 ($shp) rc=$? | $(grep -E "PASS|FAIL|lce:" "$OUT/long.txt" | tail -2 | tr '\n' ' ')"
done
for shp in "--b 150 --per-user 7 --k-user 130" "--b 9 --per-user 4 --k-user 200"; do
    # shellcheck disable=SC2086
    LCE_TVAR=16 timeout 15 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-cand 29 $shp \
        >> "$OUT/memcheck.txt" 2>&1
    note "memcheck rung 4/16 ($shp) rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$OUT/memcheck.txt" | tail -2 | tr '\n' ' ')"
done
inter() {  # inter LABEL VB POINT...
    local label=$1 vb=$2
    shift 2
    [ "$(left)" -ge 10 ] || { note "SKIP $label: $(left) s left"; return; }
    note "I $label: $(LCE_TVAR=11 LCE_TVAR_B=$vb timeout 9 $P --interleave 4,4 --warmup 3 --iters 40 "$@" 2>/dev/null \
        | grep -E '^INTERLEAVED rung|FAIL')"
}
inter "11 vs 16 benchmark point" 16
inter "11 vs 15 benchmark point" 15
inter "11 vs 11 benchmark point (noise)" 11
inter "11 vs 16 benchmark point (again)" 16
inter "11 vs 16 512/70" 16 --b 512
inter "11 vs 16 3072/70" 16 --b 3072
inter "11 vs 16 1024/2" 16 --per-user 2
inter "11 vs 16 1024/1000" 16 --per-user 1000
inter "11 vs 15 1024/100" 15 --per-user 100
inter "11 vs 16 3072/1000" 16 --b 3072 --per-user 1000
echo "== end ($(left) s left)" | tee -a "$S"
