#!/usr/bin/env bash
# s11-lceuser, device call 3 (final binaries): rung 4's walk per shape = the broadcast walk with 4 ring stages (kernel
# variant 10) where rung4Broadcast says so (<= 5 per user, unshuffled, its last round leaving <= 5 % of the CTA pairs'
# slots idle: 2 per user, and 5 per user with B >= 2048 on the H200's 66 pairs), the user-first walk elsewhere.
#   1. gpu_lce as built (every rung vs the fp32 reference at the benchmark point and odd sizes, incl. 2 per user at
#      B = 512, which takes the broadcast walk);
#   2. the 24-point sweep of rungs 0-4, checked and timed (median of 5 after 2);
#   3. rung 3 vs rung 4 in one process at the 5-per-user points (B = 1024: user-first walk; 2048, 3072: broadcast).
# Carry build-lceuser (bins.tar.xz = stripped lce + gpu_lce of build/kchecks, this script, lib.sh), a folder of the
# SESSION's checkout (/work/main/build-lceuser: the run tool sends that checkout, not the worktree); run:
#   cd build-lceuser && tar -xJf bins.tar.xz && BUDGET=20 timeout 30 bash s11-lceuser-call3.sh
# Success: "PASS gpu_lce", "sweep rc=0 120 PASS, 0 FAIL; lce: OK", SWEEP and INTERLEAVED lines, "== end".
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
set -u
ws_begin s11-lceuser3 "${BUDGET:-20}"
ws_cuda_env
X=./lce  # (not L: ws_begin's log folder)
printf '#!/bin/sh\nexec timeout 30 %s "$@"\n' "$X" > lce-t
chmod +x lce-t
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$S"
step gpu_lce 12 "PASSED" ./gpu_lce ./lce-t
grep -hE "^(PASS|FAIL) every|^FAIL" "$L/gpu_lce.log" >> "$S"
note "== sweep"
timeout 14 $X --sweep --check --time --warmup 2 --iters 5 > "$OUT/sweep.txt" 2>&1
note "sweep rc=$? $(grep -cE '^PASS rung' "$OUT/sweep.txt") PASS, $(grep -cE '^FAIL' "$OUT/sweep.txt") FAIL; $(tail -1 "$OUT/sweep.txt")"
grep -E "^SWEEP|^FAIL" "$OUT/sweep.txt" >> "$S"
for b in 2048 3072 1024; do
    [ "$(left)" -ge 3 ] && note "B=$b pu=5 r3 vs r4: $(timeout 8 $X --interleave 3,4 --warmup 3 --iters 20 --b $b --per-user 5 \
        2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
done
note "== end ($(left) s left of ${BUDGET})"
