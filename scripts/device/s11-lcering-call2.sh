#!/usr/bin/env bash
# s11-lcering, device call 2: lce rungs 3-4 with the staging halves in two pieces of 112 columns (14 KB each; the
# second piece kept as fp16 in registers and added during the next tile's main loop) and a 4th ring stage of 44 KB
# in the 28 KB this frees (kernels/lce/lce_body.cuh kVariant 11), against the rung as built in ONE process; then,
# while the budget lasts, the issue's measurement with variant 11 beside the rung.
#   1. correctness: `lce --check` rungs 3-4 at the benchmark point and three odd shapes (M = 1, K < 64; 2 per user;
#      one user per candidate with two N tiles); gpu_lce (all cases) with LCE_TVAR=11; compute-sanitizer memcheck
#      of rung 4 at a small odd shape;
#   2. variant / rung interleaved (LCE_TVAR_B=11 lce --interleave R,R), two rounds, and rung 4 at 2 per user;
#   3. rungs 0-4 timed (3-4: rung and 11), rung 3 vs 4 interleaved with 11, tracing cost of 11, PyTorch
#      (torch_reference.py --compile-padded-only), the 24-point sweep checked with 11.
# Carry build-lcering (bins.tar.xz = stripped lce + gpu_lce of build/kchecks, this script, lib.sh,
# torch_reference.py); run: cd build-lcering && tar xJf bins.tar.xz && timeout 95 bash s11-lcering-call2.sh
# Success: "CHECK V=11 ... ok", INTERLEAVED lines, "gpu_lce V=11 rc=0 | PASSED", "memcheck ... 0 errors",
# TIME / TRACECOST / TORCH lines, "sweep V=11 rc=0 | lce: OK", "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s11-lcering2 "${BUDGET:-86}"
ws_cuda_env
P=./lce
G=./gpu_lce
V=${VAR:-11}
printf '#!/bin/sh\nexec timeout 40 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
note "$(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
line="CHECK V=$V"
ok=1
for r in 3 4; do
    i=0
    for a in "" "--m 1 --n 200 --k-user 37 --k-cand 29 --b 9 --per-user 4" "--b 512 --per-user 2 --m 130 --n 200" \
             "--m 257 --n 264 --b 200 --per-user 1"; do
        # shellcheck disable=SC2086
        LCE_TVAR=$V timeout 10 $P --check --rung $r $a >> "$OUT/check.txt" 2>&1
        rc=$?
        line="$line r$r.$i=$rc"
        [ $rc = 0 ] || { ok=0; grep -E "^FAIL" "$OUT/check.txt" | tail -2 | tee -a "$S"; }
        i=$((i + 1))
    done
done
[ $ok = 1 ] && line="$line ok"
note "$line"
[ $ok = 1 ] || { echo "== end: variant $V is wrong or hangs ($(left) s left)" | tee -a "$S"; exit 1; }
inter() {  # inter TAG R [extra lce options]: variant V against rung R in one process
    note "$1 V=$V rung $2 ${*:3}: $(LCE_TVAR_B=$V timeout 10 $P --interleave $2,$2 --warmup 3 --iters 25 "${@:3}" 2>/dev/null |
        grep -E '^INTERLEAVED rung|FAIL' | tr '\n' ' ')"
}
note "== variant / rung in one process (B/A < 1: the variant faster)"
inter R1 4
inter R1 3
LCE_TVAR=$V timeout 30 $G ./lce-t > "$OUT/gpu_lce.txt" 2>&1
note "gpu_lce V=$V rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce.txt" | tail -1)"
grep -E "^FAIL" "$OUT/gpu_lce.txt" | head -4 | tee -a "$S"
LCE_TVAR=$V timeout 20 compute-sanitizer --tool memcheck $P --check --rung 4 --m 130 --n 200 --k-user 37 \
    --k-cand 29 --b 9 --per-user 4 > "$L/mc4.txt" 2>&1
note "memcheck V=$V rung 4 rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$L/mc4.txt" | tr '\n' ' ')"
[ "$(left)" -ge 50 ] && inter R2 3
[ "$(left)" -ge 45 ] && inter R2 4
[ "$(left)" -ge 42 ] && inter PU2 4 --per-user 2
note "== the goal: benchmark point"
for r in 0 1 2; do [ "$(left)" -ge 38 ] && note "$(timeout 8 $P --time --rung $r --warmup 5 --iters 30 2>/dev/null | grep TIME)"; done
for v in 0 $V; do for r in 3 4; do
    [ "$(left)" -ge 35 ] && note "V=$v $(LCE_TVAR=$v timeout 8 $P --time --rung $r --warmup 10 --iters 50 2>/dev/null | grep TIME)"
done; done
[ "$(left)" -ge 32 ] && note "V=$V 3 vs 4: $(LCE_TVAR=$V timeout 8 $P --interleave 3,4 --warmup 5 --iters 30 2>/dev/null | grep -E 'INTERLEAVED|FAIL' | tr '\n' ' ')"
for r in 3 4; do
    [ "$(left)" -ge 30 ] && note "V=$V $(LCE_TVAR=$V timeout 8 $P --trace-cost --rung $r --warmup 5 --iters 20 2>/dev/null | grep -E 'TRACECOST|FAIL')"
done
[ "$(left)" -ge 31 ] && timeout 29 python3 torch_reference.py --compile-padded-only --iters 20 > "$OUT/torch.txt" 2>&1
grep -E "^TORCH|^torch" "$OUT/torch.txt" 2>/dev/null | tee -a "$S"
if [ "$(left)" -ge 8 ]; then
    LCE_TVAR=$V timeout $(($(left) - 2)) $P --sweep --check --time --warmup 2 --iters 5 > "$OUT/sweep.txt" 2>&1
    note "sweep V=$V rc=$? | $(grep -E 'lce:' "$OUT/sweep.txt" | tail -1)"
fi
echo "== end ($(left) s left)" | tee -a "$S"
