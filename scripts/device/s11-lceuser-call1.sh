#!/usr/bin/env bash
# s11-lceuser, device call 1: where rung 4 loses at few candidates per user, and the broadcast walk against it.
#   1. correctness of rung 4's broadcast walk (kVariant 9, forced with LCE_TVAR=9): --check of rung 4 at 2 per user
#      (B = 512 and 2048, the benchmark's M, N, K), at odd sizes (M = 1, N = 200, small odd K, every candidate its
#      own user; M = 257, N = 264 = two N tiles, B = 51: the last user has one candidate), at 5 per user; and
#      compute-sanitizer memcheck of one small broadcast launch;
#   2. the stages apart (`lce --user-stage`): cuBLAS's user GEMM vs rung 4's kernel on its user units alone vs rung 3's
#      kernel alone, at B = 512 and 2048 with 2 per user;
#   3. in ONE process each (pairs alternating): broadcast walk vs the user-first walk (LCE_TVAR=0 LCE_TVAR_B=9
#      lce --interleave 4,4) at 2 per user (B = 512, 1024, 2048, 3072), 5 per user (512, 2048), 10 per user (2048);
#      rung 3 vs rung 4 as built (the per-shape rule: broadcast at <= 2 per user) at the 2 and 5 per user points and
#      the benchmark point.
# Carry build-lceuser (bins.tar.xz = stripped lce + gpu_lce of build/kchecks, this script, lib.sh), a folder of the
# SESSION's checkout (/work/main/build-lceuser: the run tool sends that checkout, not the worktree); run:
#   cd build-lceuser && tar -xJf bins.tar.xz && BUDGET=80 timeout 95 bash s11-lceuser-call1.sh
# Success: "PASS check-..." lines, "PASS memcheck", USERSTAGE lines, INTERLEAVED lines, "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s11-lceuser1 "${BUDGET:-80}"
ws_cuda_env
X=./lce  # (not L: ws_begin's log folder; as run on 2026-12-01 this said L=./lce and every step failed in 0 s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$S"
chk() {  # chk NAME LCE-OPTIONS...: rung 4 with the broadcast walk forced, against the fp32 reference
    local n=$1
    shift
    LCE_TVAR=9 step "check-$n" 25 "PASS rung 4" $X --check --rung 4 "$@"
}
chk b512pu2 --b 512 --per-user 2
chk m1own --m 1 --n 200 --k-user 37 --k-cand 29 --b 9 --per-user 1
chk n264odd --m 257 --n 264 --k-user 100 --k-cand 131 --b 51 --per-user 2
chk b2048pu2 --b 2048 --per-user 2
chk b512pu5 --b 512 --per-user 5
step rule-b1024pu2 25 "PASS rung 4" $X --check --rung 4 --b 1024 --per-user 2
LCE_TVAR=9 step memcheck 40 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck $X --check --rung 4 \
    --m 130 --n 200 --k-user 100 --k-cand 70 --b 7 --per-user 2
for b in 512 2048; do
    [ "$(left)" -ge 10 ] && note "B=$b pu=2 $($X --user-stage --b $b --per-user 2 --warmup 3 --iters 15 2>&1 |
        grep -E '^USERSTAGE|FAIL')"
done
ab() {  # ab TAG LCE-OPTIONS...: broadcast (B) against the user-first walk (A), one process
    [ "$(left)" -ge 8 ] && note "$1 bcast/classic: $(LCE_TVAR=0 LCE_TVAR_B=9 timeout 20 $X --interleave 4,4 --warmup 3 \
        --iters 20 "${@:2}" 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
}
r34() {  # r34 TAG LCE-OPTIONS...: rung 3 against rung 4 as built (its walk per shape)
    [ "$(left)" -ge 8 ] && note "$1 rung4/rung3: $(timeout 20 $X --interleave 3,4 --warmup 3 --iters 20 "${@:2}" \
        2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
}
for b in 2048 512 1024 3072; do ab "B=$b pu=2" --b $b --per-user 2; r34 "B=$b pu=2" --b $b --per-user 2; done
ab "B=512 pu=5" --b 512 --per-user 5
ab "B=2048 pu=5" --b 2048 --per-user 5
ab "B=2048 pu=10" --b 2048 --per-user 10
r34 "B=2048 pu=5" --b 2048 --per-user 5
r34 "bench" --b 1024 --per-user 70
note "== end ($(left) s left of ${BUDGET})"
