#!/usr/bin/env bash
# s10-lcespeed, device call 2: ONE staging half shared by the two consumer warpgroups in turn (EpilogueStagingOf's
# Shared; EpilogueWarp keeps one pending tile), which frees 28 KB for a 4th ring stage: kernels/lce/lce_body.cuh
# kVariant 7 (shared half + 4 stages) and 8 (shared half, 3 stages: the cost of sharing alone). Correctness first
# (benchmark point, odd sizes, rung 4 with 2 per user = many ready flags), then each against the rung in one process
# (LCE_TVAR_B=V lce --interleave R,R), two rounds, and rung 4 vs rung 3 with variant 7. Builds nothing; ~36 s (BUDGET).
# Carry build-lcespeed (lce, gpu_lce, this script, lib.sh); run: cd build-lcespeed && timeout 45 bash s10-lcespeed-call2.sh
# Success: "CHECK V=7 r3 rc=0/0/0 r4 rc=0/0/0", "gpu_lce V=7 rc=0", INTERLEAVED lines, "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s10-lcespeed2 "${BUDGET:-36}"
ws_cuda_env
L=./lce
G=./gpu_lce
printf '#!/bin/sh\nexec timeout 30 %s "$@"\n' "$L" > lce-t
chmod +x lce-t
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
GOOD=""
for V in ${VARS:-7 8}; do
    line="CHECK V=$V"
    ok=1
    for r in 3 4; do
        LCE_TVAR=$V timeout 10 $L --check --rung $r > c$V$r.txt 2>&1; a=$?
        b=0; c=0
        if [ $V = 7 ]; then
            LCE_TVAR=$V timeout 10 $L --check --rung $r --m 1 --n 200 --b 9 --per-user 4 >> c$V$r.txt 2>&1; b=$?
            LCE_TVAR=$V timeout 10 $L --check --rung $r --b 512 --per-user 2 --m 130 --n 200 >> c$V$r.txt 2>&1; c=$?
        fi
        line="$line r$r rc=$a/$b/$c"
        [ $a = 0 ] && [ $b = 0 ] && [ $c = 0 ] || { ok=0; grep -E "^FAIL" c$V$r.txt | head -2; }
    done
    echo "$line"
    [ $ok = 1 ] && GOOD="$GOOD $V"
done
echo "good:$GOOD"
inter() {  # inter TAG V R [extra lce options]: variant V against rung R in one process
    echo "$1 V=$2 rung $3 ${*:4}: $(LCE_TVAR_B=$2 timeout 10 $L --interleave $3,$3 --warmup 3 --iters 25 "${@:4}" 2>/dev/null |
        grep -E '^INTERLEAVED rung|FAIL')"
}
for V in $GOOD; do for r in 3 4; do [ "$(left)" -ge 12 ] && inter R1 $V $r; done; done
case " $GOOD " in *" 7 "*)
    if [ "$(left)" -ge 18 ]; then
        LCE_TVAR=7 timeout 15 $G ./lce-t --quick > g7.txt 2>&1
        echo "gpu_lce V=7 rc=$?"
        grep -E "^FAIL|PASSED|FAILED" g7.txt | head -4
    fi
    for r in 4 3; do [ "$(left)" -ge 6 ] && inter R2 7 $r; done
    [ "$(left)" -ge 6 ] && inter PU2 7 4 --per-user 2
    [ "$(left)" -ge 6 ] && echo "V=7 4 vs 3: $(LCE_TVAR=7 timeout 10 $L --interleave 3,4 --warmup 3 --iters 25 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
    ;;
esac
echo "== end ($(left) s left)"
