#!/usr/bin/env bash
# s11-lce4, device call 2: the branch's final tree (rungs' defaults back to V = 0 = whole halves, 3 stages; rung 4's
# consumer tiles split by kind in every variant; the staging pieces = variant 11, rung 4 alone via LCE_R4UF=11).
# Correctness of the new default instances (rung 4's V = 0 changed code; rung 3's V = 0 differs from main's only in
# register numbers): gpu_lce (every case), memcheck of rung 4, the 24-point sweep of rungs 3-4 checked; then
# interleaved 3 vs 4 as built and option (b) (LCE_R4UF=11: the pieces in rung 4 alone) in one process each.
# Carry build-lce4 (bins.tar.xz = stripped lce + gpu_lce of build/kchecks at the final commit, this script, lib.sh).
# Run: cd build-lce4 && tar xJf bins.tar.xz && BUDGET=30 timeout 40 bash s11-lce4-call2.sh
# Success: "gpu_lce ... PASSED", "ERROR SUMMARY: 0 errors", "sweep ... lce: OK", two INTERLEAVED lines, "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s11-lce4-2 "${BUDGET:-30}"
ws_cuda_env
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
timeout 15 ./gpu_lce ./lce-t > "$OUT/gpu_lce.txt" 2>&1
note "gpu_lce rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce.txt" | tail -1)"
timeout 10 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-user 37 --k-cand 29 --b 9 \
    --per-user 4 > "$OUT/memcheck.txt" 2>&1
note "memcheck rung 4 rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$OUT/memcheck.txt" | tr '\n' ' ')"
note "I1 built 3,4: $(timeout 6 $P --interleave 3,4 --warmup 3 --iters 25 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
note "I2 (b) LCE_R4UF=11 3,4: $(LCE_R4UF=11 timeout 6 $P --interleave 3,4 --warmup 3 --iters 25 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
[ "$(left)" -ge 6 ] && { timeout $(($(left) - 1)) $P --sweep --check --time --warmup 2 --iters 5 --rung 4 \
    > "$OUT/sweep-r4.txt" 2>&1; note "sweep rung 4 rc=$? | $(grep -c PASS "$OUT/sweep-r4.txt") PASS | $(grep -E 'lce:' "$OUT/sweep-r4.txt" | tail -1)"; }
echo "== end ($(left) s left)" | tee -a "$S"
