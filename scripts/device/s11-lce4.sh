#!/usr/bin/env bash
# s11-lce4, device call 1 (issue 11): the staging pieces + 4th ring stage (s11-lcering) as the DEFAULT of both lce
# rungs 3-4 (kVariant[0]), with rung 4's consumer tile loop split by tile kind (no spill in its k-step loop) --
# does rung 4 stay ahead of rung 3? -- and the issue's goals measured in the same call.
#   1. `lce --check`, rungs 3 and 4 as built (rung 4: user-first walk with pieces; the broadcast walk at <= 5 per
#      user, unchanged) and rung 4 with LCE_R4UF=12 (its epilogue warp skips re-acquiring a flag it saw last), at
#      the benchmark point, odd sizes, 2 and 1 per user, shuffled users;
#   2. interleaved in one process (`lce --interleave`, 25 pairs): 3 vs 4 as built (twice), 3 vs 4 with LCE_R4UF=12,
#      each rung against its old default (variant 11 = session 10 / s11-lceuser's rung), and option (b): rung 4 as
#      built vs rung 3 at variant 11 (pieces in rung 4 only);
#   3. gpu_lce (every case) and compute-sanitizer memcheck of rungs 3 and 4 as built (user-first walk with pieces);
#   4. the goal: rungs 0-4 timed, tracing cost of rungs 3-4, PyTorch (torch_reference.py --compile-padded-only: the
#      fastest form of past runs is the compiled decomposed K-padded one), the 24-point sweep checked (as built; then
#      rung 3 at variant 11 for option (b); rung 4 with LCE_R4UF=12) while BUDGET lasts.
# Carry build-lce4 (bins.tar.xz = stripped lce + gpu_lce of the Qt-free build/kchecks, this script, lib.sh,
# torch_reference.py), copied into /work/main/build-lce4 (the run tool sends the session's checkout).
# Run: cd build-lce4 && tar xJf bins.tar.xz && BUDGET=170 timeout 185 bash s11-lce4.sh
# Success: "CHECK ... ok" lines, INTERLEAVED lines, "gpu_lce ... PASSED", "ERROR SUMMARY: 0 errors" twice, TIME /
# TRACECOST / TORCH lines, "sweep ... lce: OK", "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s11-lce4 "${BUDGET:-170}"
ws_cuda_env
P=./lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > lce-t
chmod +x lce-t
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee -a "$S"
chk() {  # chk TAG R ENV...: --check of rung R at five shapes under the environment ENV
    local tag=$1 r=$2 line ok=1 i=0 a rc
    shift 2
    line="CHECK $tag r$r"
    for a in "" "--m 1 --n 200 --k-user 37 --k-cand 29 --b 9 --per-user 4" "--b 512 --per-user 2 --m 130 --n 200" \
             "--m 257 --n 264 --b 200 --per-user 1" "--b 300 --per-user 7 --shuffled"; do
        # shellcheck disable=SC2086
        env "$@" timeout 8 $P --check --rung "$r" $a >> "$OUT/check.txt" 2>&1
        rc=$?
        line="$line .$i=$rc"
        [ $rc = 0 ] || { ok=0; grep -E "^FAIL" "$OUT/check.txt" | tail -2 | tee -a "$S"; }
        i=$((i + 1))
    done
    [ $ok = 1 ] && line="$line ok"
    note "$line"
}
chk built 3 X=0
chk built 4 X=0
chk r4uf12 4 LCE_R4UF=12
inter() {  # inter TAG A,B ENV...: rungs A and B interleaved in one process
    local tag=$1 ab=$2
    shift 2
    note "$tag: $(env "$@" timeout 10 $P --interleave "$ab" --warmup 3 --iters 25 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL' | tr '\n' ' ')"
}
inter "I1 built 3,4" 3,4 X=0
inter "I2 r4uf12 3,4" 3,4 LCE_R4UF=12
inter "I3 rung 4: old(11) vs built" 4,4 LCE_TVAR_B=11
inter "I4 rung 3: old(11) vs built" 3,3 LCE_TVAR_B=11
inter "I5 option (b): rung 4 built vs rung 3 old(11)" 4,3 LCE_TVAR_B=11
inter "I6 built 3,4 again" 3,4 X=0
inter "I7 rung 4: r4uf12 vs built" 4,4 LCE_TVAR_B=12
[ "$(left)" -ge 100 ] && { timeout 40 ./gpu_lce ./lce-t > "$OUT/gpu_lce.txt" 2>&1
    note "gpu_lce rc=$? | $(grep -E "PASSED|FAILED" "$OUT/gpu_lce.txt" | tail -1)"; }
for r in 3 4; do
    [ "$(left)" -ge 90 ] || break
    timeout 25 compute-sanitizer --tool memcheck $P --check --rung $r --m 130 --n 200 --k-user 37 --k-cand 29 --b 9 \
        --per-user 4 > "$OUT/memcheck.txt" 2>&1
    note "memcheck rung $r rc=$? | $(grep -E "ERROR SUMMARY|lce:" "$OUT/memcheck.txt" | tr '\n' ' ')"
done
note "== the goal (as built)"
for r in 0 1 2 3 4; do
    [ "$(left)" -ge 80 ] && note "$(timeout 8 $P --time --rung $r --warmup 10 --iters 50 2>/dev/null | grep -E 'TIME|FAIL')"
done
for r in 3 4; do
    [ "$(left)" -ge 75 ] && note "$(timeout 10 $P --trace-cost --rung $r --warmup 5 --iters 30 2>/dev/null | grep -E 'TRACECOST|FAIL')"
done
[ "$(left)" -ge 70 ] && { timeout 55 python3 torch_reference.py --compile-padded-only --compile-cap 45 --iters 20 \
    > "$OUT/torch.txt" 2>&1; grep -E "^TORCH|^torch" "$OUT/torch.txt" | tee -a "$S"; }
for sw in "built all" "old11 3" "r4uf12 4"; do
    set -- $sw
    [ "$(left)" -ge 8 ] || break
    case $1 in built) E=X=0 ;; old11) E=LCE_TVAR=11 ;; r4uf12) E=LCE_R4UF=12 ;; esac
    env $E timeout $(($(left) - 2)) $P --sweep --check --time --warmup 2 --iters 5 $([ "$2" = all ] || echo "--rung $2") \
        > "$OUT/sweep-$1-r$2.txt" 2>&1
    note "sweep $1 rungs $2 rc=$? | $(grep -E 'lce:' "$OUT/sweep-$1-r$2.txt" | tail -1)"
done
echo "== end ($(left) s left)" | tee -a "$S"
