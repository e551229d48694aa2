#!/usr/bin/env bash
# s11-lceuser, device call 2: rung 4's broadcast walk with a 4th ring stage (kernel variant 10: one staging half
# shared by the warpgroups, the walk loads no U into it) and without (variant 9), correct and against rung 3.
#   1. correctness: gpu_lce with rung 4 forced to variant 10 (LCE_TVAR=10: every case, every rung vs the fp32
#      reference; the shuffled cases fall back to the user-first walk), then rung 4 --check with variant 9 at 2 per
#      user (the benchmark's M, N, K at B = 512; M = 257, N = 264, B = 51; M = 1, N = 200, every candidate its own user);
#   2. in ONE process each (pairs alternating): rung 3 vs rung 4 with variant 10 at 2 per user (B = 512 .. 3072) and
#      5 per user (B = 2048, 3072); variant 10 vs the user-first walk (B = 512, 2048) and vs variant 9 (B = 1024);
#   3. lce --user-stage with variant 7 (the user-first walk with the 4th stage, shared half): does the 4th stage close
#      the user stage's gap to cuBLAS's user GEMM? (B = 2048, 2 per user; call 1 measured variant 0: 1.148x);
#   4. compute-sanitizer memcheck of variant 10 on a small shape (if the budget allows);
#   5. the 24-point sweep of rungs 0-4 as built (rung 4: variant 10 at <= 2 per user), checked and timed (if the budget
#      allows: a cold call has no room for it).
# Carry build-lceuser (bins.tar.xz = stripped lce + gpu_lce of build/kchecks, this script, lib.sh), a folder of the
# SESSION's checkout (/work/main/build-lceuser: the run tool sends that checkout, not the worktree); run:
#   cd build-lceuser && tar -xJf bins.tar.xz && BUDGET=60 timeout 75 bash s11-lceuser-call2.sh
# Success: "PASS gpu_lce-v10", "PASS check9-...", INTERLEAVED and USERSTAGE lines, SWEEP lines + "lce: OK", "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s11-lceuser2 "${BUDGET:-60}"
ws_cuda_env
X=./lce  # (not L: ws_begin's log folder)
printf '#!/bin/sh\nexec timeout 30 %s "$@"\n' "$X" > lce-t
chmod +x lce-t
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$S"
LCE_TVAR=10 step gpu_lce-v10 40 "PASSED" ./gpu_lce ./lce-t
grep -hE "^(PASS|FAIL)" "$L/gpu_lce-v10.log" | head -24 >> "$S"
LCE_TVAR=9 step check9-b512 15 "PASS rung 4" $X --check --rung 4 --b 512 --per-user 2
LCE_TVAR=9 step check9-n264 15 "PASS rung 4" $X --check --rung 4 --m 257 --n 264 --k-user 100 --k-cand 131 --b 51 \
    --per-user 2
LCE_TVAR=9 step check9-m1 15 "PASS rung 4" $X --check --rung 4 --m 1 --n 200 --k-user 37 --k-cand 29 --b 9 --per-user 1
il() {  # il TAG RUNGS ENV... -- LCE-OPTIONS...: one process, pairs alternating
    local tag=$1 rungs=$2
    shift 2
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    [ "$(left)" -ge 6 ] && note "$tag: $(env "${envs[@]}" timeout 20 $X --interleave "$rungs" --warmup 3 --iters 20 "$@" \
        2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
}
for b in 2048 3072 1024 512; do il "B=$b pu=2 r3 vs r4-v10" 3,4 LCE_TVAR_B=10 -- --b $b --per-user 2; done
il "B=2048 pu=2 v0 vs v10" 4,4 LCE_TVAR=0 LCE_TVAR_B=10 -- --b 2048 --per-user 2
il "B=512 pu=2 v0 vs v10" 4,4 LCE_TVAR=0 LCE_TVAR_B=10 -- --b 512 --per-user 2
il "B=1024 pu=2 v9 vs v10" 4,4 LCE_TVAR=9 LCE_TVAR_B=10 -- --b 1024 --per-user 2
il "B=2048 pu=5 r3 vs r4-v10" 3,4 LCE_TVAR_B=10 -- --b 2048 --per-user 5
il "B=3072 pu=5 r3 vs r4-v10" 3,4 LCE_TVAR_B=10 -- --b 3072 --per-user 5
[ "$(left)" -ge 6 ] && note "v7 B=2048 pu=2 $(LCE_TVAR=7 timeout 20 $X --user-stage --b 2048 --per-user 2 --warmup 3 \
    --iters 15 2>&1 | grep -E '^USERSTAGE|FAIL')"
LCE_TVAR=10 step memcheck-v10 30 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck $X --check --rung 4 \
    --m 130 --n 200 --k-user 100 --k-cand 70 --b 7 --per-user 2
# 5. the sweep as built (rung 4's walk per shape: variant 10 at <= 2 per user), checked and timed, if the budget allows
if [ "$(left)" -ge 35 ]; then
    note "== sweep"
    timeout $(($(left) - 2)) $X --sweep --check --time --warmup 2 --iters 5 > "$OUT/sweep.txt" 2>&1
    note "sweep rc=$? $(grep -cE '^PASS rung' "$OUT/sweep.txt") PASS, $(grep -cE '^FAIL' "$OUT/sweep.txt") FAIL; $(tail -1 "$OUT/sweep.txt")"
    grep -E "^SWEEP|^FAIL" "$OUT/sweep.txt" >> "$S"
fi
note "== end ($(left) s left of ${BUDGET})"
