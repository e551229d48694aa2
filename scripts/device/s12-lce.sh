#!/usr/bin/env bash
# s12-lce: rung 4's user tiles split along K (lce_body.cuh's variant 14 = 11 + walk 3; lce_shape.h: userSplitParts),
# checked and timed interleaved against variant 11 (rung 4 as built) in one call. V=15 runs the same for variant 15
# (11 with a user tile's halves published at once; not run in session 12: the next session's call, SHORT=1 CAPS=4
# BUDGET=95 as call 2 was: ~16 s warm). Below, "14" reads "$V".
#   1. correctness: gpu_lce with LCE_TVAR=$V (every case; rung 4 runs 14 everywhere, its broadcast-walk shapes too; rung
#      3 runs 11), the 24-point sweep of rung 4 / 14 checked (at most 4 parts, then LCE_R4SPLIT=8), memcheck of rung
#      4 / 14 at two small odd shapes whose user tiles split (4 and 3 parts);
#   2. timing: LCE_TVAR_B=$V lce --interleave 4,4 (A = rung 4 as built: variant 11, B = 14, one process each) at the
#      benchmark point (2 parts) and at sweep points 1024/100 (3), 3072/1000 (4; again with LCE_R4SPLIT=2), 512/50 (3),
#      512/1000 (4), 2048/10 (1 part: a control, 14 runs 11's walk there);
#   3. the would-be default (LCE_R4UF=$V: rung 4's user-first walk takes 14, its broadcast walk stays): rung 4 vs
#      rung 3 interleaved at the benchmark point, the 24-point sweep of every rung timed (SWEEP lines).
# Build (Qt-free, the VM): ninja -C build/kchecks lce gpu_lce; then
#   D=/work/main/build-s12lce; mkdir -p $D && cp build/kchecks/kernels/lce/lce build/kchecks/tests/kernels/gpu_lce $D/ &&
#   strip $D/lce $D/gpu_lce && (cd $D && tar cJf bins.tar.xz lce gpu_lce && rm lce gpu_lce) &&
#   cp scripts/device/lib.sh scripts/device/s12-lce.sh $D/
# Carry: ["build-s12lce"]. Command: cd build-s12lce && tar xJf bins.tar.xz && BUDGET=170 timeout 185 bash s12-lce.sh
# Success prints: "gpu_lce/$V rc=0 | ... PASSED", two "sweep rung 4/$V ... lce: OK" (24 PASS), two "ERROR SUMMARY: 0
# errors", seven "I ..." INTERLEAVED lines (B/A < 1 and B winning most pairs = the split wins), the "R4UF=14 rung 4 vs
# rung 3" line, "sweep all R4UF=$V ... lce: OK" with 24 SWEEP lines in sweep-time.txt, "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s12-lce "${BUDGET:-170}"
V=${V:-14}
ws_cuda_env
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader | tee -a "$S"
# smoke first (call 1 hung here: a cycle between a part's flag and the next tile's flag wait, fixed by flushSplit):
# stop at once if the split still hangs or fails
LCE_TVAR=$V timeout 6 $P --check --rung 4 > "$OUT/smoke.txt" 2>&1
rc=$?
note "smoke rung 4/$V benchmark point rc=$rc | $(grep -E "PASS|FAIL|lce:" "$OUT/smoke.txt" | tail -2 | tr '\n' ' ')"
[ $rc = 0 ] || { echo "== end (smoke failed)" | tee -a "$S"; exit 1; }
LCE_TVAR=$V timeout 25 ./gpu_lce ./lce-t > "$OUT/gpu_lce.txt" 2>&1
note "gpu_lce/$V rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce.txt" | tail -1)"
for cap in ${CAPS:-4 8}; do
    LCE_R4SPLIT=$cap LCE_TVAR=$V timeout 15 $P --sweep --check --rung 4 > "$OUT/sweep-r4-$cap.txt" 2>&1
    note "sweep rung 4/$V (at most $cap parts) rc=$? | $(grep -c PASS "$OUT/sweep-r4-$cap.txt") PASS | $(grep -E 'lce:' "$OUT/sweep-r4-$cap.txt" | tail -1)"
done
for shp in "--b 150 --per-user 7 --k-user 130" "--b 9 --per-user 4 --k-user 200"; do
    [ -n "${SHORT:-}" ] && [ "$shp" != "--b 150 --per-user 7 --k-user 130" ] && continue
    # shellcheck disable=SC2086
    LCE_TVAR=$V timeout 15 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-cand 29 $shp \
        >> "$OUT/memcheck.txt" 2>&1
    note "memcheck rung 4/$V ($shp) rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$OUT/memcheck.txt" | tail -2 | tr '\n' ' ')"
done
inter() {  # inter LABEL ENV POINT...
    local label=$1 env=$2
    shift 2
    [ "$(left)" -ge 10 ] || { note "SKIP $label: $(left) s left"; return; }
    # shellcheck disable=SC2086
    note "I $label: $(env $env LCE_TVAR_B=$V timeout 8 $P --interleave 4,4 --warmup 3 --iters 30 "$@" 2>/dev/null \
        | grep -E '^INTERLEAVED rung|FAIL')"
}
inter "11 vs $V benchmark point (2 parts)" X=0
inter "11 vs $V 1024/100 (3 parts)" X=0 --b 1024 --per-user 100
inter "11 vs $V 3072/1000 (4 parts)" X=0 --b 3072 --per-user 1000
inter "11 vs $V 512/1000 (4 parts)" X=0 --b 512 --per-user 1000
[ -n "${SHORT:-}" ] || {
    inter "11 vs $V 3072/1000 (LCE_R4SPLIT=2: 2 parts)" LCE_R4SPLIT=2 --b 3072 --per-user 1000
    inter "11 vs $V 512/50 (3 parts)" X=0 --b 512 --per-user 50
    inter "11 vs $V 2048/10 (1 part: control)" X=0 --b 2048 --per-user 10
}
[ "$(left)" -ge 10 ] && note "R4UF=$V rung 4 vs rung 3: $(LCE_R4UF=$V timeout 8 $P --interleave 4,3 --warmup 3 --iters 30 \
    2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
[ "$(left)" -ge 12 ] && { LCE_R4UF=$V timeout $(($(left) - 3)) $P --sweep --time --warmup 2 --iters 5 \
    > "$OUT/sweep-time.txt" 2>&1
    note "sweep all R4UF=$V rc=$? | $(grep -c '^SWEEP' "$OUT/sweep-time.txt") SWEEP | $(grep -E 'lce:' "$OUT/sweep-time.txt" | tail -1)"; }
echo "== end ($(left) s left)" | tee -a "$S"
