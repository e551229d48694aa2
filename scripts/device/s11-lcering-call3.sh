#!/usr/bin/env bash
# s11-lcering, device call 3 (NOT RUN in session 11: its device share was spent; ~45 s): rung 4 with the staging
# pieces after call 2 showed rung 3 7 % faster and rung 4 1.7 % slower. Variant 9 (call 2's 11, renumbered when the
# stages of 32 K were removed) now stages BOTH pieces of a user tile at its end (its ready flag is no longer held back
# to the next tile's k-step 6; rung 3's instance is PTX-identical to call 2's); variant 10 = 9 with 56 registers for
# warpgroup 0 (its epilogue warp spilled at 40) and 224 for the consumers.
#   1. `lce --check` rung 4 (9, 10) and rung 3 (10) at the benchmark point and three odd shapes;
#   2. each against the rung in one process (LCE_TVAR_B=V lce --interleave R,R), two rounds for rung 4;
#   3. gpu_lce --quick with the better one while the budget lasts.
# Carry build-lcering (bins.tar.xz = stripped lce + gpu_lce of build/kchecks, this script, lib.sh);
# run: cd build-lcering && tar xJf bins.tar.xz && timeout 50 bash s11-lcering-call3.sh
# Success: "CHECK V=9 r4 ok", "CHECK V=10 r4 ok r3 ok", INTERLEAVED lines, "gpu_lce --quick ... PASSED", "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s11-lcering3 "${BUDGET:-45}"
ws_cuda_env
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
GOOD=""
chk() {  # chk V R: --check of rung R with variant V at four shapes
    local line="CHECK V=$1 r$2" ok=1 i=0 a rc
    for a in "" "--m 1 --n 200 --k-user 37 --k-cand 29 --b 9 --per-user 4" "--b 512 --per-user 2 --m 130 --n 200" \
             "--m 257 --n 264 --b 200 --per-user 1"; do
        # shellcheck disable=SC2086
        LCE_TVAR=$1 timeout 8 $P --check --rung $2 $a >> "$OUT/check.txt" 2>&1
        rc=$?
        line="$line .$i=$rc"
        [ $rc = 0 ] || { ok=0; grep -E "^FAIL" "$OUT/check.txt" | tail -2 | tee -a "$S"; }
        i=$((i + 1))
    done
    [ $ok = 1 ] && line="$line ok"
    note "$line"
    return $((1 - ok))
}
chk 9 4 && GOOD="$GOOD 9"
chk 10 4 && chk 10 3 && GOOD="$GOOD 10"
note "good:$GOOD"
inter() {  # inter TAG V R: variant V against rung R in one process
    note "$1 V=$2 rung $3: $(LCE_TVAR_B=$2 timeout 8 $P --interleave $3,$3 --warmup 3 --iters 25 2>/dev/null |
        grep -E '^INTERLEAVED rung|FAIL' | tr '\n' ' ')"
}
for V in $GOOD; do inter R1 "$V" 4; done
case " $GOOD " in *" 10 "*) inter R1 10 3;; esac
for V in $GOOD; do [ "$(left)" -ge 12 ] && inter R2 "$V" 4; done
B=${GOOD##* }
if [ -n "$B" ] && [ "$(left)" -ge 12 ]; then
    LCE_TVAR=$B timeout $(($(left) - 2)) ./gpu_lce ./lce-t --quick > "$OUT/gpu_lce.txt" 2>&1
    note "gpu_lce --quick V=$B rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce.txt" | tail -1)"
fi
echo "== end ($(left) s left)" | tee -a "$S"
