#!/usr/bin/env bash
# Session 18, call 3: untraced speed against cuBLAS of main and uni (= uw untraced: WS_EXPERIMENT_UNIFORM_WARP changes
# the untraced kernels' warp index), the 33-shape sweep cold, main / uni / uni / main. Carry build-s18c (as s18b).
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s18-speed 200
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
read -r -a sw <<<"$(ws_sweep33)"
i=0
for b in main uni uni main; do
    i=$((i+1))
    step "speed$i-$b" 45 "cuBLAS" "./$b/ladder_bench" --rung pingpong --rung streamk --no-traced --target-ms 10 --rest-ms 20 --min-iters 6 "${sw[@]}" || true
    cp "$L/speed$i-$b.log" "$OUT/" 2>/dev/null
done
echo "== end ($(left) s left)" | tee -a "$S"
