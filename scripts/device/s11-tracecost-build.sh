#!/usr/bin/env bash
# Builds (on the dev machine, not the device) what scripts/device/s11-tracecost.sh runs, into DEST (carry it):
#   base/{ladder_bench,gpu_ladder_trace}  from BASE_BUILD (a Qt-free Release build of main: the k-steps' per-event code)
#   new/{ladder_bench,gpu_ladder_trace,gpu_trace_batch}  from NEW_BUILD (this branch: the batched k-step events)
#   mut/gpu_trace_batch_{fill,addr}  gpu_trace_batch against a copy of trace.cuh with one mutation planted
#     (scripts/mutations.txt: tracecost.batch_fills_half_without_flush, tracecost.batch_events_one_address)
# stripped and packed as DEST/bins.tar.xz, with the device script, lib.sh and trace_overhead_table.py beside it; the
# binaries' hashes are printed (base and new must differ, and the mutants from each other).
# Usage: scripts/device/s11-tracecost-build.sh BASE_BUILD NEW_BUILD DEST
#   each *_BUILD: cmake -S . -B DIR -G Ninja -DCMAKE_BUILD_TYPE=Release -DWARPSTAGE_WITH_QT=OFF -DWARPSTAGE_WITH_CUDA=ON,
#   then ninja -C DIR ladder_bench gpu_ladder_trace [gpu_trace_batch]
set -euo pipefail
BASE=$(cd "$1" && pwd)
NEW=$(cd "$2" && pwd)
D=$3
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mkdir -p "$D/base" "$D/new" "$D/mut"
D=$(cd "$D" && pwd)
cp "$BASE/tests/bench/ladder_bench" "$BASE/tests/kernels/gpu_ladder_trace" "$D/base/"
cp "$NEW/tests/bench/ladder_bench" "$NEW/tests/kernels/gpu_ladder_trace" "$NEW/tests/kernels/gpu_trace_batch" "$D/new/"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 - "$SRC/kernels/include/warpstage/trace.cuh" "$T" <<'PY'
import os, sys
src = open(sys.argv[1]).read()
muts = {"fill": ("        if ((count & 31u) + N < 32u) {", "        if ((count & 31u) + N <= 32u) {"),
        "addr": ('::"r"(at + 16u * j),', '::"r"(at),')}
for k, (f, r) in muts.items():
    assert src.count(f) == 1, k
    os.makedirs(f"{sys.argv[2]}/{k}/warpstage")
    open(f"{sys.argv[2]}/{k}/warpstage/trace.cuh", "w").write(src.replace(f, r))
PY
for k in fill addr; do
    nvcc -std=c++17 -arch=sm_90a -O3 -I"$T/$k" -I"$SRC/kernels/include" -I"$SRC/tests" \
        "$SRC/tests/kernels/gpu_trace_batch.cu" -o "$D/mut/gpu_trace_batch_$k" -ldl
done
strip "$D"/base/* "$D"/new/* "$D"/mut/*
sha256sum "$D"/base/* "$D"/new/* "$D"/mut/* | sed "s|$D/||" | cut -c1-16,65-
[ "$(sha256sum "$D/base/ladder_bench" | cut -c1-64)" != "$(sha256sum "$D/new/ladder_bench" | cut -c1-64)" ] \
    || { echo "FAIL: base and new ladder_bench are the same binary" >&2; exit 1; }
cp "$SRC/scripts/device/s11-tracecost.sh" "$SRC/scripts/device/s11-tracecost2.sh" "$SRC/scripts/device/s11-tracecost3.sh" "$SRC/scripts/device/lib.sh" "$SRC/scripts/device/trace_overhead_table.py" "$D/"
(cd "$D" && tar -cJf bins.tar.xz base new mut)
ls -la "$D/bins.tar.xz"
echo "OK built into $D"
