#!/usr/bin/env bash
# Session 17, call 7: which part of the flush costs by being there (calls 2-6: the traced lce kernel costs as much
# with no buffer as recording; the flush compiled out, +0.5-1.6 % on rung 4; not the code's size). One piece of
# StagedWarp::flush left out per build (trace.cuh, s17 experiments, removed after the call:
# docs/patches/s17-flush-experiments.md): empty-flush (the test and lane 0's branch, an empty body), no-store (no
# cp.async.bulk; fence, commit and wait kept), no-fence (no fence.proxy.async), no-wait (no wait_group.read). Timing
# only (the traces of no-store / no-fence / no-wait builds are not valid). Builds nothing. Carry build-s17g:
# bins.tar.xz with main/lce (f59eddb), noflush/lce, empty-flush/, no-store/, no-fence/, no-wait/ lce; lib.sh.
# Run: cd build-s17g && tar xJf bins.tar.xz && BUDGET=150 timeout 160 bash s17-bisect.sh
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s17-bisect 150
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
B="main noflush empty-flush no-store no-fence no-wait"
# shellcheck disable=SC2086
ws_lce_nobuf "$PWD" 4 $B
R=""; for b in $B; do R="$b $R"; done
for r in 4 3; do
    ws_lce_cost "$PWD" "$r" $B $R
done
echo "== end ($(left) s left)" | tee -a "$S"
