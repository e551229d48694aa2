#!/usr/bin/env bash
# s11-lcewalk, prepared for the next session's device call (not run in session 11: no device time left).
# What it runs: rung 4's balanced user-first walk (lce_body.cuh's variant 13 = 11 on lce_shape.h's balancedWalk: the
# pairs with a user unit take fewer candidate units; benchmark point longest pair 448 k-steps, not 453).
#   1. correctness: gpu_lce with LCE_TVAR=13 (every case; rung 4 runs 13, rung 3 runs 11), the 24-point sweep of rung 4
#      with LCE_TVAR=13 checked, memcheck of rung 4 / 13 at two small odd shapes (fewer units than pairs; 172 units);
#   2. timing: LCE_TVAR_B=13 lce --interleave 4,4 (A = rung 4 as built: variant 11 here, B = 13, one process each) at
#      the benchmark point and at sweep points where rung 4 takes the user-first walk (1024/100, 2048/10, 3072/1000,
#      512/50: round robin -> balanced longest pair 453->448, 1001->996, 1321->1316, 229->229 (a control: no gain
#      possible)).
# Build (Qt-free, the VM): ninja -C build/kchecks lce gpu_lce; then
#   mkdir -p build-lcewalk && cp build/kchecks/kernels/lce/lce build/kchecks/tests/kernels/gpu_lce build-lcewalk/ &&
#   strip build-lcewalk/lce build-lcewalk/gpu_lce && (cd build-lcewalk && tar cJf bins.tar.xz lce gpu_lce && rm lce gpu_lce) &&
#   cp scripts/device/lib.sh scripts/device/s12-lcewalk.sh build-lcewalk/
# Carry: ["build-lcewalk"] (in the tree the run tool copies).
# Command: cd build-lcewalk && tar xJf bins.tar.xz && BUDGET=75 timeout 90 bash s12-lcewalk.sh   (timeout_s 100)
# Success prints: "gpu_lce/13 rc=0 | ... PASSED", "sweep rung 4/13 rc=0 ... lce: OK" (24 PASS), two
# "ERROR SUMMARY: 0 errors", five "INTERLEAVED rung ..." lines (B/A < 1 and B winning most pairs = the balanced walk
# wins: flip kUserFirstVariant to 13 in user_first.cu), "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s12-lcewalk "${BUDGET:-75}"
ws_cuda_env
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
LCE_TVAR=13 timeout 20 ./gpu_lce ./lce-t > "$OUT/gpu_lce.txt" 2>&1
note "gpu_lce/13 rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce.txt" | tail -1)"
LCE_TVAR=13 timeout 12 $P --sweep --check --rung 4 > "$OUT/sweep-r4.txt" 2>&1
note "sweep rung 4/13 rc=$? | $(grep -c PASS "$OUT/sweep-r4.txt") PASS | $(grep -E 'lce:' "$OUT/sweep-r4.txt" | tail -1)"
for shp in "--b 9 --per-user 4" "--b 150 --per-user 7"; do
    # shellcheck disable=SC2086
    LCE_TVAR=13 timeout 10 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-user 37 \
        --k-cand 29 $shp >> "$OUT/memcheck.txt" 2>&1
    note "memcheck rung 4/13 ($shp) rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$OUT/memcheck.txt" | tail -2 | tr '\n' ' ')"
done
for pt in "" "--b 1024 --per-user 100" "--b 2048 --per-user 10" "--b 3072 --per-user 1000" "--b 512 --per-user 50"; do
    [ "$(left)" -ge 8 ] || { note "SKIP interleave ${pt:-bench}: $(left) s left"; continue; }
    # shellcheck disable=SC2086
    note "I 4(11),4(13) ${pt:-benchmark point}: $(LCE_TVAR_B=13 timeout 7 $P --interleave 4,4 --warmup 3 --iters 30 \
        $pt 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
done
echo "== end ($(left) s left)" | tee -a "$S"
