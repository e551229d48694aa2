#!/usr/bin/env bash
# s11-lcering, device call 1: lce rungs 3-4 with ring stages of 32 K instead of 64 (kernels/lce/lce_body.cuh
# StageOf: 22 KB stages; kVariant 9 = 6 of them, the rung's 132 KB of ring; 10 = 7 of them, 154 KB), judged against
# the rung in ONE process, then the issue's measurement with variant 10 beside the rung as built.
#   1. correctness of 9 and 10: `lce --check` rungs 3-4 at the benchmark point and three odd shapes;
#   2. each against the rung (LCE_TVAR_B=V lce --interleave R,R), two rounds for 10, and 10 at 2 per user; then
#      gpu_lce (all cases) with LCE_TVAR=10, --quick with 9; compute-sanitizer memcheck of 10 (rungs 4 and 3) at a
#      small odd shape;
#   3. the goal: rungs 0-2, rungs 3-4 (rung and 10) timed, rung 3 vs 4 interleaved with 10, tracing cost of rungs 3-4
#      (rung and 10), PyTorch (torch_reference.py --compile-padded-only), the 24-point sweep checked with 10 (all
#      rungs), then the sweep's rungs 3-4 as built (timing only) while the budget lasts.
# Carry build-lcering (bins.tar.xz = stripped lce + gpu_lce of build/kchecks, this script, lib.sh, torch_reference.py);
# run: cd build-lcering && tar xJf bins.tar.xz && timeout 230 bash s11-lcering.sh
# Success: "CHECK V=9 ... ok", "CHECK V=10 ... ok", "gpu_lce V=10 rc=0" (PASSED), "memcheck ... 0 errors",
# INTERLEAVED lines, TIME / TRACECOST / TORCH lines, "sweep V=10 ... lce: OK", "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s11-lcering "${BUDGET:-200}"
ws_cuda_env
P=./lce
G=./gpu_lce
printf '#!/bin/sh\nexec timeout 40 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
note "$(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
GOOD=""
for V in ${VARS:-10 9}; do
    line="CHECK V=$V"
    ok=1
    for r in 3 4; do
        i=0
        for a in "" "--m 1 --n 200 --k-user 37 --k-cand 29 --b 9 --per-user 4" "--b 512 --per-user 2 --m 130 --n 200" \
                 "--m 257 --n 264 --b 200 --per-user 1"; do
            # shellcheck disable=SC2086
            LCE_TVAR=$V timeout 15 $P --check --rung $r $a >> "$L/c$V$r.txt" 2>&1
            rc=$?
            line="$line r$r.$i=$rc"
            [ $rc = 0 ] || { ok=0; grep -E "^FAIL" "$L/c$V$r.txt" | head -2 | tee -a "$S"; }
            i=$((i + 1))
        done
    done
    [ $ok = 1 ] && { GOOD="$GOOD $V"; line="$line ok"; }
    note "$line"
done
note "good:$GOOD"
has() { case " $GOOD " in *" $1 "*) return 0;; esac; return 1; }
inter() {  # inter TAG V R [extra lce options]: variant V against rung R in one process
    note "$1 V=$2 rung $3 ${*:4}: $(LCE_TVAR_B=$2 timeout 12 $P --interleave $3,$3 --warmup 3 --iters 25 "${@:4}" 2>/dev/null |
        grep -E '^INTERLEAVED rung|FAIL' | tr '\n' ' ')"
}
note "== variant / rung in one process (B/A < 1: the variant faster)"
for V in $GOOD; do for r in 4 3; do [ "$(left)" -ge 100 ] && inter R1 "$V" $r; done; done
if has 10; then
    for r in 3 4; do [ "$(left)" -ge 95 ] && inter R2 10 $r; done
    [ "$(left)" -ge 90 ] && inter PU2 10 4 --per-user 2
fi
if has 10; then
    LCE_TVAR=10 timeout 60 $G ./lce-t > "$OUT/gpu_lce10.txt" 2>&1
    note "gpu_lce V=10 rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce10.txt" | tail -1)"
    grep -E "^FAIL" "$OUT/gpu_lce10.txt" | head -4 | tee -a "$S"
    for r in 4 3; do
        LCE_TVAR=10 timeout 40 compute-sanitizer --tool memcheck $P --check --rung $r --m 130 --n 200 --k-user 37 \
            --k-cand 29 --b 9 --per-user 4 > "$L/mc$r.txt" 2>&1
        note "memcheck V=10 rung $r rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$L/mc$r.txt" | tr '\n' ' ')"
    done
fi
if has 9; then
    LCE_TVAR=9 timeout 30 $G ./lce-t --quick > "$L/g9.txt" 2>&1
    note "gpu_lce --quick V=9 rc=$? | $(grep -E "PASSED|FAILED" "$L/g9.txt" | tail -1)"
fi
note "== the goal: benchmark point"
for r in 0 1 2; do note "$(timeout 20 $P --time --rung $r --warmup 10 --iters 50 2>/dev/null | grep TIME)"; done
for V in 0 10; do has $V || [ $V = 0 ] || continue; for r in 3 4; do
    note "V=$V $(LCE_TVAR=$V timeout 12 $P --time --rung $r --warmup 10 --iters 50 2>/dev/null | grep TIME)"
done; done
has 10 && note "V=10 3 vs 4: $(LCE_TVAR=10 timeout 15 $P --interleave 3,4 --warmup 5 --iters 40 2>/dev/null | grep -E 'INTERLEAVED|FAIL' | tr '\n' ' ')"
for V in 10 0; do has $V || [ $V = 0 ] || continue; for r in 3 4; do
    [ "$(left)" -ge 75 ] && note "V=$V $(LCE_TVAR=$V timeout 15 $P --trace-cost --rung $r --warmup 5 --iters 30 2>/dev/null | grep -E 'TRACECOST|FAIL')"
done; done
[ "$(left)" -ge 60 ] && timeout 45 python3 torch_reference.py --compile-padded-only --iters 20 > "$OUT/torch.txt" 2>&1
grep -E "^TORCH|^torch" "$OUT/torch.txt" | tee -a "$S"
if has 10 && [ "$(left)" -ge 35 ]; then
    LCE_TVAR=10 timeout $(($(left) - 5)) $P --sweep --check --time --warmup 2 --iters 5 > "$OUT/sweep10.txt" 2>&1
    note "sweep V=10 rc=$? | $(grep -E 'lce:' "$OUT/sweep10.txt")"
fi
if [ "$(left)" -ge 15 ]; then
    timeout $(($(left) - 3)) $P --sweep --time --warmup 2 --iters 5 --rung 4 > "$OUT/sweep0r4.txt" 2>&1
    note "sweep rung 4 as built rc=$?"
fi
cp "$L"/c10*.txt "$OUT/" 2>/dev/null
echo "== end ($(left) s left)" | tee -a "$S"
