#!/usr/bin/env bash
# s13-lcefirst's next call (NOT run in session 13: its device share was spent): variant 20 = 15 with a pair's
# first-unit candidate pieces deferred (stored without U when U's flag is not published) and the reduce-adds of U
# only at the end of the pair's walk (lce_defer.cuh; calls 1-2 found the fix-ups between tiles cost 2-4 %, the
# deferral itself ~0: 17). Prediction: the candidate-first pairs stop waiting 13-19 us in the first round and pay
# their 4 fix-ups at the end, inside their 19 spare k-steps (434 against the user pairs' 453): <= 1 % faster than 15
# at the benchmark point; level where there is no first-round wait.
#   1. correctness: gpu_lce, the 24-point checked sweep, the long-user-tile shape, memcheck at one odd shape (LCE_TVAR=20);
#   2. timing: lce --interleave 4,4, A = LCE_TVAR=15 (the rung), B = 20: benchmark point (twice), 1024/1000, 512/70,
#      3072/70; 15 vs 15 (noise).
# Build: as s13-lcefirst.sh (folder build-s13-lcefirst, this script beside it; the binaries of the commit that adds it).
# Carry: ["build-s13-lcefirst"]. Command: cd build-s13-lcefirst && tar xJf bins.tar.xz && BUDGET=70 timeout 80 bash s13-lcefirst3.sh
# Verdict: 20 becomes kUserFirstVariant only if B/A < 1 beyond the 15-vs-15 spread and B wins most pairs at the
# benchmark point, and no sweep point is slower.
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s13-lcefirst3 "${BUDGET:-70}"
ws_cuda_env
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$S"
LCE_TVAR=20 timeout 8 $P --check --rung 4 > "$OUT/smoke.txt" 2>&1
rc=$?
note "smoke rung 4/20 rc=$rc | $(grep -E "PASS|FAIL|lce:" "$OUT/smoke.txt" | tail -2 | tr '\n' ' ')"
[ $rc = 0 ] || { echo "== end (smoke failed)" | tee -a "$S"; exit 1; }
LCE_TVAR=20 timeout 25 ./gpu_lce ./lce-t > "$OUT/gpu_lce-20.txt" 2>&1
note "gpu_lce/20 rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce-20.txt" | tail -1)"
LCE_TVAR=20 timeout 15 $P --sweep --check --rung 4 > "$OUT/sweep-r4-20.txt" 2>&1
note "sweep rung 4/20 rc=$? | $(grep -c PASS "$OUT/sweep-r4-20.txt") PASS | $(grep -E 'lce:' "$OUT/sweep-r4-20.txt" | tail -1)"
LCE_TVAR=20 timeout 8 $P --check --rung 4 --k-user 3000 --k-cand 40 > "$OUT/long-20.txt" 2>&1
note "long user tiles 20 rc=$? | $(grep -E "PASS|FAIL|lce:" "$OUT/long-20.txt" | tail -2 | tr '\n' ' ')"
LCE_TVAR=20 timeout 15 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-cand 29 --b 150 \
    --per-user 7 --k-user 130 > "$OUT/memcheck.txt" 2>&1
note "memcheck rung 4/20 rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$OUT/memcheck.txt" | tail -2 | tr '\n' ' ')"
inter() {  # inter LABEL VA VB POINT...
    local label=$1 va=$2 vb=$3
    shift 3
    [ "$(left)" -ge 8 ] || { note "SKIP $label: $(left) s left"; return; }
    note "I $label: $(LCE_TVAR=$va LCE_TVAR_B=$vb timeout 9 $P --interleave 4,4 --warmup 3 --iters 40 "$@" 2>&1 \
        | grep -E '^INTERLEAVED rung|FAIL' | head -2 | tr '\n' ' ')"
}
inter "15 vs 20 benchmark point" 15 20
inter "15 vs 15 benchmark point (noise)" 15 15
inter "15 vs 20 benchmark point (again)" 15 20
inter "15 vs 20 1024/1000" 15 20 --per-user 1000
inter "15 vs 20 512/70" 15 20 --b 512
inter "15 vs 20 3072/70" 15 20 --b 3072
echo "== end ($(left) s left)" | tee -a "$S"
