#!/usr/bin/env bash
# s11-lcering, device call 3 (session 11 ran parts 1-2 only, GOAL=0 BUDGET=45: 7 s; ~130 s with part 4): rung 4
# with the staging pieces after call 2 showed rung 3 7 % faster and rung 4 1.7 % slower. Variant 9 (call 2's 11,
# renumbered when the stages of 32 K were removed) now stages BOTH pieces of a user tile at its end (its ready flag
# is no longer held back to the next tile's k-step 6; rung 3's instance is PTX-identical to call 2's); variant 10 =
# 9 with 56 registers for warpgroup 0 (its epilogue warp spilled at 40) and 224 for the consumers.
#   1. `lce --check` rung 4 (9, 10) and rung 3 (10) at the benchmark point and three odd shapes;
#   2. each against the rung in one process (LCE_TVAR_B=V lce --interleave R,R), two rounds for rung 4;
#   3. gpu_lce (every case) and compute-sanitizer memcheck of rung 4 with the last good one (10 if it is good);
#   4. GOAL=1 (default) and rung 4 of the best variant faster than the rung in round 1: the issue's measurement with
#      it (rungs 0-2, rungs 3-4 as built and with it, 3 vs 4 interleaved, tracing cost, PyTorch with the compile
#      capped at 45 s, the 24-point sweep checked: every rung as built, then rungs 4 and 3 with it) while BUDGET lasts.
# Carry build-lcering (bins.tar.xz = stripped lce + gpu_lce of build/kchecks, this script, lib.sh,
# torch_reference.py); run: cd build-lcering && tar xJf bins.tar.xz && timeout 140 bash s11-lcering-call3.sh
# Success: "CHECK V=9 r4 ... ok", "CHECK V=10 r4/r3 ... ok", INTERLEAVED lines, "gpu_lce ... PASSED", "0 errors",
# then (part 4) TIME / TRACECOST / TORCH lines and "sweep V=... lce: OK", "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s11-lcering3 "${BUDGET:-130}"
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
declare -A R4
inter() {  # inter TAG V R: variant V against rung R in one process
    local out
    out=$(LCE_TVAR_B=$2 timeout 8 $P --interleave $3,$3 --warmup 3 --iters 25 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL' | tr '\n' ' ')
    note "$1 V=$2 rung $3: $out"
    [ "$1$3" = R14 ] && R4[$2]=$(echo "$out" | sed -nE 's/.* = ([0-9.]+) .*/\1/p')
}
for V in $GOOD; do inter R1 "$V" 4; done
case " $GOOD " in *" 10 "*) inter R1 10 3;; esac
for V in $GOOD; do [ "$(left)" -ge 80 ] && inter R2 "$V" 4; done
B=${GOOD##* }
if [ -n "$B" ] && [ "$(left)" -ge 75 ]; then
    LCE_TVAR=$B timeout 30 ./gpu_lce ./lce-t > "$OUT/gpu_lce.txt" 2>&1
    note "gpu_lce V=$B rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce.txt" | tail -1)"
    LCE_TVAR=$B timeout 20 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-user 37 \
        --k-cand 29 --b 9 --per-user 4 > "$L/mc4.txt" 2>&1
    note "memcheck V=$B rung 4 rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$L/mc4.txt" | tr '\n' ' ')"
fi
BEST=""; BR=1
for V in $GOOD; do
    r=${R4[$V]:-}
    [ -n "$r" ] && awk -v a="$r" -v b="$BR" 'BEGIN { exit !(a < b) }' && { BEST=$V; BR=$r; }
done
note "best for rung 4: ${BEST:-none} (B/A ${BR})"
if [ "${GOAL:-1}" = 1 ] && [ -n "$BEST" ]; then
    note "== the goal with variant $BEST"
    for r in 0 1 2; do [ "$(left)" -ge 62 ] && note "$(timeout 8 $P --time --rung $r --warmup 5 --iters 30 2>/dev/null | grep TIME)"; done
    for v in 0 $BEST; do for r in 3 4; do
        [ "$(left)" -ge 58 ] && note "V=$v $(LCE_TVAR=$v timeout 8 $P --time --rung $r --warmup 10 --iters 50 2>/dev/null | grep TIME)"
    done; done
    [ "$(left)" -ge 56 ] && note "V=$BEST 3 vs 4: $(LCE_TVAR=$BEST timeout 8 $P --interleave 3,4 --warmup 5 --iters 30 2>/dev/null | grep -E 'INTERLEAVED|FAIL' | tr '\n' ' ')"
    for r in 3 4; do
        [ "$(left)" -ge 54 ] && note "V=$BEST $(LCE_TVAR=$BEST timeout 8 $P --trace-cost --rung $r --warmup 5 --iters 20 2>/dev/null | grep -E 'TRACECOST|FAIL')"
    done
    [ "$(left)" -ge 50 ] && timeout 48 python3 torch_reference.py --compile-padded-only --compile-cap 45 --iters 20 > "$OUT/torch.txt" 2>&1
    grep -E "^TORCH|^torch" "$OUT/torch.txt" 2>/dev/null | tee -a "$S"
    # the sweep: every rung as built (checked), then rungs 4 and 3 with the variant (checked): rung 4 with it against
    # rung 3 as built and with it, point by point
    for sw in "0 all" "$BEST 4" "$BEST 3"; do
        set -- $sw
        [ "$(left)" -ge 8 ] || break
        LCE_TVAR=$1 timeout $(($(left) - 2)) $P --sweep --check --time --warmup 2 --iters 5 $([ "$2" = all ] || echo "--rung $2") \
            > "$OUT/sweep-v$1-r$2.txt" 2>&1
        note "sweep V=$1 rungs $2 rc=$? | $(grep -E 'lce:' "$OUT/sweep-v$1-r$2.txt" | tail -1)"
    done
fi
echo "== end ($(left) s left)" | tee -a "$S"
