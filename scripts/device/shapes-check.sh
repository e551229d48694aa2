#!/usr/bin/env bash
# Issue 14, first part (the GEMM ladder on every shape), in ONE device call: correctness of every rung at
# partial-tile shapes against cuBLAS on random data, compute-sanitizer memcheck on a partial-tile launch of
# each tensor-core rung, and timing: the new ladder and the old one (ladder_bench_base, built from the commit
# before the change) at 4096^3 / 8192^3 back to back, then the top rungs at the non-multiple shapes.
#
# Build HERE (no GPU needed; Release, no Qt), then copy into an ignored folder of the checkout and carry it:
#   cmake -S . -B build/kchecks -G Ninja -DWARPSTAGE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build/kchecks --target gpu_ladder_correctness ladder_check ladder_bench tst_ladder_shape ladder_manifest
#   D=build-s6-shapes; mkdir -p $D
#   cp build/kchecks/tests/kernels/{gpu_ladder_correctness,ladder_check,tst_ladder_shape,ladder_manifest} \
#      build/kchecks/tests/bench/ladder_bench build/kchecks/kernels/src/libwarpstage_ladder.a \
#      tests/kernels/check_sass.py scripts/device/shapes-check.sh scripts/device/lib.sh $D/
#   plus, from a build of the base commit: ladder_bench -> $D/ladder_bench_base,
#   libwarpstage_ladder.a -> $D/libwarpstage_ladder_base.a
# On the device (run tool, carry ["build-s6-shapes"]):  bash build-s6-shapes/shapes-check.sh [DIR] [2]
# The second argument 2 runs the follow-up instead: the full correctness set (every rung at the square and
# LLM shapes too), and the top rungs cold and hot (--rest-ms 0: back to back) at the non-multiple shapes, with
# 4096x4096x4160 (K a multiple of 64 again, rows 128-byte aligned) beside 4096x4096x4104.
# Logs: $OUT/*.log, $OUT/summary.txt (the last thing printed).
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh  # note, run, ws_cuda_env (carried alone: copy lib.sh beside it)
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
D=${1:-build-s6-shapes}
OUT=${OUT:-$PWD/out-shapes}
mkdir -p "$OUT"
S=$OUT/summary.txt
: >"$S"
ws_cuda_env

if [ "${2:-1}" = 2 ]; then
    note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
    run correctness-full 120 "$D/gpu_ladder_correctness"
    ODD="--shape 4000x4000x4000 --shape 8191x8193x4104 --shape 4096x4096x4104 --shape 4096x4096x4160 --shape 4096x4096x4096"
    run bench-cold 100 "$D/ladder_bench" --rung cooperative --rung pingpong $ODD --target-ms 60 --csv "$OUT/bench-cold.csv"
    run bench-hot 100 "$D/ladder_bench" --rung cooperative --rung pingpong $ODD --target-ms 60 --rest-ms 0 \
        --csv "$OUT/bench-hot.csv"
    for f in bench-cold bench-hot; do
        echo "=== $f"
        sed -n '/^### Kernel ladder vs cuBLAS/,$p' "$OUT/$f.log" | grep -E "^\|" | head -40
    done
    grep -h "^FAIL" "$OUT/correctness-full.log" | head -20
    echo "=== summary"
    cat "$S"
    exit 0
fi
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u)"
run shape 30 "$D/tst_ladder_shape"
# SASS: the check of the new archive with this machine's cuobjdump; registers/stack/local of old and new.
run sass 60 python3 "$D/check_sass.py" --manifest "$D/ladder_manifest" --archive "$D/libwarpstage_ladder.a" --tool auto
for a in libwarpstage_ladder_base.a libwarpstage_ladder.a; do
    cuobjdump -res-usage "$D/$a" 2>&1 | grep -A1 "Function _ZN2ws4kern" | grep -oE "Function [^:]*|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+" \
        | paste -sd' ' | sed 's/Function /\n/g' >"$OUT/res-$a.txt"
done
note "res-usage old vs new (REG STACK LOCAL per kernel): $(diff "$OUT/res-libwarpstage_ladder_base.a.txt" "$OUT/res-libwarpstage_ladder.a.txt" >/dev/null && echo identical || echo DIFFERENT)"
diff "$OUT/res-libwarpstage_ladder_base.a.txt" "$OUT/res-libwarpstage_ladder.a.txt" | cut -c1-200
# The partial-tile shapes (tensor-core rungs) + the fp64 bound + refusals, traced and untraced.
run correctness 150 "$D/gpu_ladder_correctness" --partial-only
# memcheck: partial M, N (N odd: single-element stores, pingpong without its TMA store) and a partial last
# k-step, untraced and traced; pingpong also with N % 8 == 0 (its TMA-store epilogue, clipped by TMA).
for r in tma_sync multistage warp_specialized cooperative pingpong pingpong-traced; do
    tr=""
    [ "$r" = pingpong-traced ] && { r=pingpong; tr=--traced; }
    run "san-$r${tr:+-traced}" 45 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
        "$D/ladder_check" --rung "$r" --shape 129x257x72 $tr
done
run san-pingpong-tmastore 60 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
    "$D/ladder_check" --rung pingpong --shape 129x264x72
# Timing: old and new back to back at the two square sizes (no-regression check), then the sweep's
# non-multiple shapes for the top rungs (and cuBLAS, in the same run).
run bench-base 120 "$D/ladder_bench_base" --rung tma_sync --rung multistage --rung warp_specialized --rung cooperative \
    --rung pingpong --target-ms 60 --csv "$OUT/bench-base.csv"
run bench-new 120 "$D/ladder_bench" --rung tma_sync --rung multistage --rung warp_specialized --rung cooperative \
    --rung pingpong --target-ms 60 --csv "$OUT/bench-new.csv"
run bench-odd 150 "$D/ladder_bench" --rung cooperative --rung pingpong --shape 4000x4000x4000 \
    --shape 8191x8193x4104 --shape 4096x4096x4104 --shape 256x4096x4096 --shape 1x4096x4096 --shape 1000x4096x1000 \
    --target-ms 60 --csv "$OUT/bench-odd.csv"
for f in bench-base bench-new bench-odd; do
    echo "=== $f"
    sed -n '/^### Kernel ladder vs cuBLAS/,$p' "$OUT/$f.log" | grep -E "^\|" | head -40
done
grep -h "^FAIL" "$OUT/correctness.log" | head -20
echo "=== summary"
cat "$S"
