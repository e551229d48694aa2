#!/usr/bin/env bash
# Session 18, call 2: the GEMM tracing-cost sweep again, builds in the other order (uni first), to confirm call 1's
# streamk gain (+7.36 -> +4.87 %). Carry build-s18b: bins.tar.xz with main/ uni/ ladder_bench; lib.sh, table, this.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s18-sweep2 150
ws_cuda_env
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
ws_trace_sweep "$PWD" uni main
echo "== end ($(left) s left)" | tee -a "$S"
