#!/usr/bin/env bash
# Session 11, the lead's final call on the merged tree (main after s11-lceuser, s11-skinny, s11-tracecost, s11-lce4 and
# rung 4's user-first walk on variant 11). Builds nothing; BUDGET seconds in all, every step under its own timeout.
#   lce (issue 11): gpu_lce (every rung vs the fp32 reference, odd sizes), memcheck of rung 4 at a small odd shape,
#     rung 4 vs rung 3 interleaved, rungs 0-4 timed, tracing cost of rungs 3-4, the PyTorch forms of the same run
#     (torch_reference.py --compile-padded-only), the 24-point sweep of rungs 0-4 checked and timed, gpu_lce_record, and
#     the family recorded at the benchmark point for the bundle (lce-h200.wstrace, stall samples staged from the
#     carried sources: the WARPSTAGE_SOURCE_DIR map of s10-lcestall.sh).
#   GEMM (issue 14): gpu_ladder_correctness --rung streamk --rung pingpong, gpu_trace_batch, gpu_ladder_trace of both
#     top rungs at a partial-tile shape, then the 33-shape sweep of streamk, cold, traced and untraced, vs cuBLAS (CSV).
# Carry build-s11final: bins.tar.xz (stripped lce, gpu_lce, gpu_lce_record, warpstage-record, libwarpstage-inject.so,
# ladder_bench, gpu_ladder_correctness, gpu_ladder_trace, gpu_trace_batch of build/kchecks at the merged tree) and src/
# (kernels/lce, kernels/include, kernels/src/common, kernels/src/*.cuh: the sources the line info names).
# Run: tar -xJf build-s11final/bins.tar.xz -C build-s11final && BUDGET=380 timeout 400 bash scripts/device/s11-final.sh build-s11final
# Success: "PASS" on every check line, "lce: OK" for the sweep, TIME / TRACECOST / INTERLEAVED / TORCH lines, the
# family's "record rc=0" with "SIZE" 13-16 MB, "0 failed" for the ladder and the sweep's CSV.
set -u
B=$(cd "${1:-build-s11final}" && pwd)
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
TORCHREF=$(cd "$(dirname "${BASH_SOURCE[0]}")/../lce" && pwd)/torch_reference.py
ws_begin s11-final 380
ws_cuda_env
if ldd "$B/lce" | grep -q "not found"; then  # no CUDA toolkit libraries: the cuBLAS that PyTorch ships
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
        export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
    done
fi
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
P=$B/lce
printf '#!/bin/sh\nexec timeout 20 %s "$@"\n' "$P" > "$B/lce-t" && chmod +x "$B/lce-t"

echo "== lce ($(left) s left)"
step gpu_lce 40 "PASSED" "$B/gpu_lce" "$B/lce-t"
# rung 4 at a small odd shape on each walk: 20 per user = the user-first walk (variant 11, the pieces), 4 per user =
# the broadcast walk (variant 10)
for pu in 20 4; do
    step "memcheck-r4-pu$pu" 15 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck --error-exitcode 3 "$P" \
        --check --rung 4 --m 130 --n 200 --k-user 37 --k-cand 29 --b 40 --per-user $pu
done
note "I34: $(timeout 8 "$P" --interleave 3,4 --warmup 3 --iters 30 2>/dev/null | grep -E '^INTERLEAVED rung|FAIL')"
for r in 0 1 2 3 4; do
    note "$(timeout 8 "$P" --time --rung $r --warmup 10 --iters 30 2>/dev/null | grep -E 'TIME|FAIL')"
done
for r in 3 4; do
    note "$(timeout 10 "$P" --trace-cost --rung $r --warmup 5 --iters 30 2>/dev/null | grep -E 'TRACECOST|FAIL')"
done
timeout 60 python3 "$TORCHREF" --compile-padded-only --compile-cap 45 --iters 20 > "$OUT/torch.txt" 2>&1
grep -E "^TORCH|^torch" "$OUT/torch.txt" | tee -a "$S"
step sweep 60 "lce: OK" "$P" --sweep --check --time --warmup 2 --iters 5
cp "$L/sweep.log" "$OUT/sweep-lce.txt" 2>/dev/null
step gpu_lce_record 60 "PASSED" "$B/gpu_lce_record" "$B/warpstage-record" "$B/lce"
# the family for the bundle, stall samples staged from the carried sources (s10-lcestall.sh's map)
SRC=$(mktemp -d /tmp/s11final-src.XXXX)
for c in $( (echo main; grep -aoh '/work/[A-Za-z0-9_.-]*/' "$B/lce" 2>/dev/null | cut -d/ -f3) | sort -u); do
    mkdir -p "$SRC/work/$c/build/kchecks" && ln -s "$B/src/kernels" "$SRC/work/$c/kernels"
done
ln -s "$B/src/kernels" "$SRC/kernels"
F=$OUT/lce-h200.wstrace
rm -f "$F"
WARPSTAGE_SOURCE_DIR=$SRC WARPSTAGE_INJECT_LIB=$B/libwarpstage-inject.so \
    step record 120 "." "$B/warpstage-record" --rungs lce:all --lce-iters 3:10 --lce-program "$P" -o "$F"
tail -8 "$L/record.log" | tee -a "$S"
note "SIZE $(stat -c %s "$F" 2>/dev/null || echo missing)"

echo "== GEMM ($(left) s left)"
step correctness 50 " 0 failed" "$B/gpu_ladder_correctness" --rung streamk --rung pingpong
note "    streamk traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=.*differ" "$L/correctness.log")"
step trace-batch 15 "PASS" "$B/gpu_trace_batch"
for r in pingpong streamk; do
    step "trace-$r" 10 "" "$B/gpu_ladder_trace" --rung $r --shape 300x1000x1032
done
SW=""
for x in 1024 2048 4096 6144 8192 12288 16384; do SW="$SW --shape ${x}x${x}x${x}"; done
for m in 128 512 2048 8192; do
    for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do SW="$SW --shape ${m}x${nk}"; done
done
SW="$SW --shape 4096x4096x256 --shape 8192x8192x512 --shape 4096x4096x1024 --shape 1024x1024x16384 --shape 2048x2048x32768"
SW="$SW --shape 4000x4000x4000 --shape 8191x8193x4104 --shape 1000x4096x1000 --shape 1x4096x4096 --shape 256x4096x4096"
step sweep-cold 100 "Kernel ladder vs cuBLAS" "$B/ladder_bench" --rung streamk $SW --target-ms 10 --csv "$OUT/sweep-cold.csv"
cp "$L/sweep-cold.log" "$OUT/sweep-cold.txt" 2>/dev/null
(cd "$L" && tar -czf "$OUT/logs.tar.gz" ./*.log 2>/dev/null)
echo "== end ($(left) s left)" | tee -a "$S"
