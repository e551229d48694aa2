#!/usr/bin/env bash
# Kernel-ladder checks on the GPU machine, in one call (issue 3): GPU tests, the SASS
# check with the machine's own cuobjdump, the benchmark, and compute-sanitizer memcheck +
# racecheck of every rung (untraced and traced) at a small shape.
#
# Build HERE (no GPU needed), then carry the build directory:
#   cmake -S . -B build-kchecks -G Ninja -DWARPSTAGE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release
#   ninja -C build-kchecks gpu_ladder_correctness gpu_ladder_trace ladder_check ladder_manifest ladder_bench
# and on the device (the `run` tool, carry ["build-kchecks"]):
#   bash scripts/device/kernel-checks.sh [--build DIR] [--quick] [--only STEP,...] [--budget SECONDS]
# STEPs: env,sass,trace,correctness,bench,sanitize (default: all, in that order).
# Logs go to $OUT (the run tool's output folder; ./out-kchecks when OUT is unset):
#   summary.txt, bench.md, ladder_bench.csv, logs.tar.gz (every step's full log).
# The last thing printed is the benchmark table and the summary.
set -u
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh  # note, run, ws_cuda_env (carried alone: copy lib.sh beside it)
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }

BUILD=build-kchecks
QUICK=0
ONLY=""
BUDGET=540            # seconds for the whole script (the run tool allows 600 a command)
# Sanitizer shapes: the smallest useful one for every rung, and one where the persistent
# rungs walk several tiles per CTA (2048x4096: 256 tiles of 128x256, 512 of 128x128) with a
# short K, for the warp-specialized rungs only (SAN_RUNGS2).
SAN_SHAPES="256x256x512 2048x4096x128"
SAN_RUNGS2="warp_specialized cooperative pingpong"
while [ $# -gt 0 ]; do
    case "$1" in
        --build) BUILD=$2; shift 2 ;;
        --quick) QUICK=1; shift ;;
        --only) ONLY=$2; shift 2 ;;
        --budget) BUDGET=$2; shift 2 ;;
        --san-shapes) SAN_SHAPES=$2; shift 2 ;;
        *) echo "kernel-checks: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

OUT=${OUT:-$PWD/out-kchecks}
LOGS=$OUT/logs
mkdir -p "$LOGS"
SUMMARY=$OUT/summary.txt
S=$SUMMARY  # lib.sh's note appends to $S
: >"$SUMMARY"
T=$BUILD/tests/kernels
BENCH=$BUILD/tests/bench/ladder_bench

# On the GPU machine a GPU test that cannot run (no device, no CUPTI) fails instead of skipping (lib.sh).
ws_cuda_env

want() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }
left() { echo $((BUDGET - SECONDS)); }

# step NAME LIMIT CMD...: runs CMD with a timeout of min(LIMIT, time left), log in $LOGS/NAME.log.
step() {
    local name=$1 limit=$2
    shift 2
    local rem
    rem=$(left)
    if [ "$rem" -lt 15 ]; then
        note "$name: NOT RUN (time budget spent)"
        return 0
    fi
    [ "$limit" -gt "$rem" ] && limit=$rem
    local t0=$SECONDS
    timeout -k 5 "$limit" "$@" >"$LOGS/$name.log" 2>&1
    local rc=$?
    local verdict=PASS
    case $rc in
        0) verdict=PASS ;;
        77) verdict=SKIP ;;
        124|137) verdict="TIMEOUT(${limit}s)" ;;
        *) verdict="FAIL(rc=$rc)" ;;
    esac
    LAST_VERDICT="$verdict in $((SECONDS - t0))s"
    [ "${QUIET_STEP:-0}" = 1 ] || note "$name: $LAST_VERDICT"
    return 0
}

if want env; then
    {
        date -u
        echo "--- nvidia-smi"; nvidia-smi 2>&1
        nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv 2>&1
        echo "--- cuda"; ls -d /usr/local/cuda* 2>&1; nvcc --version 2>&1 | tail -2
        echo "--- libcublas"; ls /usr/local/cuda/targets/x86_64-linux/lib/libcublas* /usr/local/cuda/lib64/libcublas* 2>&1
        echo "--- tools"; command -v cuobjdump nvdisasm compute-sanitizer 2>&1
        echo "--- ldd ladder_check"; ldd "$T/ladder_check" 2>&1
    } >"$LOGS/env.log" 2>&1
    note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1)"
    if ldd "$T/ladder_check" 2>&1 | grep -q "not found"; then
        note "env: MISSING LIBRARIES: $(ldd "$T/ladder_check" | grep 'not found' | tr -s ' \t' ' ' | tr '\n' ';')"
    fi
fi

if want sass; then
    step sass 120 python3 tests/kernels/check_sass.py --manifest "$T/ladder_manifest" \
        --archive "$BUILD/kernels/src/libwarpstage_ladder.a" --tool auto --dump "$LOGS/sass"
fi
if want trace; then
    step trace $([ "$QUICK" = 1 ] && echo 60 || echo 120) "$T/gpu_ladder_trace"
fi
if want correctness; then
    if [ "$QUICK" = 1 ]; then
        step correctness 120 "$T/gpu_ladder_correctness" --quick
    else
        step correctness 240 "$T/gpu_ladder_correctness"
    fi
fi
if want bench; then
    # SM clock, power and throttle reasons every 200 ms while the benchmark runs.
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
        --format=csv -lms 200 >"$LOGS/bench-clocks.csv" 2>&1 &
    SMI_PID=$!
    step bench $([ "$QUICK" = 1 ] && echo 120 || echo 200) "$BENCH" --csv "$OUT/ladder_bench.csv"
    # The markdown table: from its header line to the end of the log.
    sed -n '/^### Kernel ladder vs cuBLAS/,$p' "$LOGS/bench.log" >"$OUT/bench.md"
    kill "$SMI_PID" 2>/dev/null; wait "$SMI_PID" 2>/dev/null
    note "bench clocks: $(awk -F', ' 'NR>1 && $2+0>0 {n++; c+=$2; p+=$4; if(min==""||$2+0<min)min=$2+0} END {if(n) printf "%d samples, SM MHz mean %.0f min %d, power mean %.0f W", n, c/n, min, p/n}' "$LOGS/bench-clocks.csv")"
fi
if want sanitize; then
    RUNGS=$("$T/ladder_check" --list 2>/dev/null | awk '{print $2}')
    first=1
    for shape in $SAN_SHAPES; do
    rungs_here=$RUNGS
    [ $first = 1 ] || rungs_here=$SAN_RUNGS2
    first=0
    for tool in memcheck racecheck; do
        for r in $rungs_here; do
            for tr in "" --traced; do
                name="san-$tool-$r${tr:+-traced}-$shape"
                if [ "$(left)" -lt 20 ]; then
                    note "$name: NOT RUN (time budget spent)"
                    continue
                fi
                QUIET_STEP=1 step "$name" $([ "$QUICK" = 1 ] && echo 30 || echo 60) compute-sanitizer --tool "$tool" \
                    --error-exitcode 3 --print-limit 20 "$T/ladder_check" --rung "$r" --shape "$shape" $tr
                # One line: verdict, the sanitizer's own summary, ladder_check's verdict and error.
                v=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$LOGS/$name.log" | tail -1 | sed 's/=* *//')
                c=$(grep -E "^(OK|FAIL|REFUSED)" "$LOGS/$name.log" | head -1 | grep -oE "^(OK|FAIL|REFUSED)|rel_err=[^ ]*|non_finite=[^ ]*|errors=[^ ]*|guard_damage=[^ ]*" | tr '\n' ' ')
                note "$name: $LAST_VERDICT | ${v:-no sanitizer summary} | ${c:-no ladder_check verdict}"
            done
        done
    done
    done
fi

# Everything back in a few files: summary.txt, bench.md, ladder_bench.csv, logs.tar.gz.
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs 2>/dev/null && rm -rf "$LOGS"

echo
echo "================ kernel-checks: failures and key lines ================"
tar -xzOf "$OUT/logs.tar.gz" logs/correctness.log logs/trace.log logs/sass.log 2>/dev/null \
    | grep -E "^(FAIL|WARN|BOUND)|passed, .* failed|^OK:|^FAILED:" | head -60
echo
[ -s "$OUT/bench.md" ] && cat "$OUT/bench.md"
echo
echo "================ kernel-checks summary ($SECONDS s) ================"
cat "$SUMMARY"
