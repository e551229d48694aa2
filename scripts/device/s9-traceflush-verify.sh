#!/usr/bin/env bash
# Session 9, s9-traceflush: the lead's check on the merged tree (builds nothing; <= 30 s). Runs the relay engine's GPU
# test (kernels/include/warpstage/trace_relay.cuh: every event of 12 warps copied out, overflow, header mismatch, null
# buffer). The relay is off in the ladder (WS_PP_TRACE_RELAY = 0), so rungs 6-7 need no check of their own here.
# Carry the build folder that holds tests/kernels/gpu_trace_relay (target gpu_trace_relay), e.g. build/kchecks.
# Device: bash scripts/device/s9-traceflush-verify.sh build/kchecks
# Success: the last line is "PASS gpu_trace_relay (0 failure(s))" and the exit status 0.
set -u
B=${1:-build/kchecks}
for d in /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib64; do
    [ -d "$d" ] && LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export LD_LIBRARY_PATH WARPSTAGE_REQUIRE_GPU=1
T="$B/tests/kernels/gpu_trace_relay"
[ -x "$T" ] || { echo "FAIL s9-traceflush-verify: $T not found (build the target gpu_trace_relay and carry $B)"; exit 2; }
timeout -k 3 30 "$T"
