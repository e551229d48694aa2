# shellcheck shell=bash
# Helpers shared by the device scripts (scripts/device/*.sh), sourced, never run. Defines:
#   ws_cuda_env      the CUDA runtime and tools on the search paths, and WARPSTAGE_REQUIRE_GPU=1 (on the GPU machine
#                    a GPU test that cannot run, no device or no CUPTI, fails instead of skipping)
#   note TEXT...     prints TEXT and appends it to the summary file $S
#   run NAME LIMIT CMD...   runs CMD under `timeout -k 5 LIMIT`, its output in $OUT/NAME.log, and notes one line:
#                    "NAME: rc=RC in Ns | " + the log's verdict lines (passed/failed counts, PASSED/FAILED,
#                    sanitizer summaries, OK/FAIL)
#   left             seconds left of the script's BUDGET since T0
#   step NAME LIMIT PASS_REGEX CMD...   runs CMD under `timeout -k 3` (LIMIT, or what is left of the budget), its
#                    output in $L/NAME.log; notes "PASS NAME" when rc = 0 and the log matches PASS_REGEX, else
#                    "FAIL NAME" and the log's first ^FAIL lines, or "SKIP NAME" when under 5 s are left; returns rc
#   ws_begin NAME DEFAULT_BUDGET   the usual start of a script: OUT (default ./out-NAME, created), BUDGET (default
#                    DEFAULT_BUDGET seconds), a fresh log folder L (/tmp/NAME-logs.XXXX), the summary S = $OUT/summary.txt
#                    emptied (what it held appended to $OUT/summary.earlier.txt first), and T0 = now
#   ws_sweep33       prints issue 14's 33-shape sweep as ladder_bench arguments (--shape MxNxK ...): squares 1024..16384,
#                    LLM projections M in {128, 512, 2048, 8192} x (N x K) in {4096x4096, 14336x4096, 4096x14336,
#                    28672x8192}, short K, long K, non-multiples; the one list every sweep script uses
#   ws_signatures D A B SHAPE...   gpu_ladder_trace (both top rungs) of builds $D/A and $D/B at each shape, then a
#                    note per rung and shape: "PASS signature B = A ..." when B's trace signature (the trace's
#                    information without clocks) equals A's, else "FAIL signature B != A ..."
#   ws_trace_sweep D B1 B2 ...     ladder_bench's tracing cost of both top rungs over ws_sweep33 in two halves, builds
#                    $D/B1 $D/B2 ... in that order for the first half and reversed for the second (steps sweep1-B,
#                    sweep2-B), then trace_overhead_table.py's table (untraced times from the last build) into
#                    $L/table.txt and the summary; the table script is found beside lib.sh or in scripts/device/
#   ws_lce_nobuf D R B1 B2 ...   per build in that order, $D/B/lce's traced kernel with NO trace buffer attached
#                    against its untraced twin on rung R (`LCE_TRACED_A=1 lce --interleave R,R`, step nobufR-B), its
#                    INTERLEAVED line noted (session 17: what the trace code costs when nothing is recorded)
#   ws_lce_cost D R B1 B2 ...    per build in that order, `$D/B/lce --trace-cost --rung R` (step costR-B), its TRACECOST
#                    line noted
# The caller sets S (the summary file) before calling note or run, OUT before run, and L, BUDGET and T0 before
# step or left (ws_begin sets all five).
#
# A device script sources it from its own folder, so when a script is carried alone (copied into a
# build-<branch>/ folder), copy lib.sh beside it:
#   cp scripts/device/lib.sh scripts/device/THE-SCRIPT.sh build-<branch>/
# Without a lib.sh beside it, a script falls back to the checkout's scripts/device/lib.sh under the current
# folder (the run tool starts in the repository root of a copy of the tree), and stops with a message if neither
# is there. The lines to start a script with:
#   WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
#   [ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
#   # shellcheck source=lib.sh
#   . "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }

ws_cuda_env() {
    local d
    for d in /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib64; do
        [ -d "$d" ] && LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    done
    export LD_LIBRARY_PATH PATH="/usr/local/cuda/bin:$PATH" WARPSTAGE_REQUIRE_GPU=1
}

note() { echo "$*" | tee -a "$S"; }

run() {  # run NAME LIMIT CMD...
    local name=$1 limit=$2 t0=$SECONDS rc
    shift 2
    timeout -k 5 "$limit" "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    note "$name: rc=$rc in $((SECONDS - t0))s | $(grep -E "passed, .* failed|PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|^OK|^FAIL" "$OUT/$name.log" | tail -2 | tr '\n' ' ')"
}

ws_begin() {  # ws_begin NAME DEFAULT_BUDGET
    OUT=${OUT:-$PWD/out-$1}
    BUDGET=${BUDGET:-$2}
    mkdir -p "$OUT"
    L=$(mktemp -d "/tmp/$1-logs.XXXX")
    S=$OUT/summary.txt
    # a summary already there (an earlier run, or another script of the same call with the same OUT: session 17 lost
    # one so) is kept, appended to summary.earlier.txt, before this run's starts empty
    [ -s "$S" ] && cat "$S" >>"$OUT/summary.earlier.txt"
    : >"$S"
    T0=$SECONDS
}

left() { echo $((BUDGET - (SECONDS - T0))); }

step() {  # step NAME LIMIT PASS_REGEX CMD...
    local name=$1 limit=$2 re=$3 t0=$SECONDS rc l verdict
    shift 3
    l=$(left)
    [ "$limit" -gt "$l" ] && limit=$l
    if [ "$limit" -lt 5 ]; then
        note "SKIP $name: out of time (budget ${BUDGET}s)"
        return 1
    fi
    timeout -k 3 "$limit" "$@" >"$L/$name.log" 2>&1
    rc=$?
    verdict=$(grep -E "passed, .* failed|ERROR SUMMARY|^OK|^FAIL|FAILED|WRONG|refused" "$L/$name.log" | tail -3 | tr '\n' ' ')
    if [ $rc = 0 ] && grep -Eq "$re" "$L/$name.log"; then
        note "PASS $name: rc=0 in $((SECONDS - t0))s | $verdict"
    else
        note "FAIL $name: rc=$rc in $((SECONDS - t0))s (limit ${limit}s) | $verdict"
        grep -h "^FAIL" "$L/$name.log" | head -5 | tee -a "$S"
    fi
    return $rc
}

ws_sweep33() {
    local x m nk sw=""
    for x in 1024 2048 4096 6144 8192 12288 16384; do sw="$sw --shape ${x}x${x}x${x}"; done
    for m in 128 512 2048 8192; do
        for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do sw="$sw --shape ${m}x${nk}"; done
    done
    sw="$sw --shape 4096x4096x256 --shape 8192x8192x512 --shape 4096x4096x1024 --shape 1024x1024x16384"
    sw="$sw --shape 2048x2048x32768 --shape 4000x4000x4000 --shape 8191x8193x4104 --shape 1000x4096x1000"
    sw="$sw --shape 1x4096x4096 --shape 256x4096x4096"
    echo "$sw"
}

ws_signatures() {
    local d=$1 a=$2 b=$3 s r x sa sb
    shift 3
    for s in "$@"; do
        for x in "$a" "$b"; do
            step "trace-$x-$s" 10 "passed, 0 failed" "$d/$x/gpu_ladder_trace" --rung pingpong --rung streamk --shape "$s" || true
        done
        for r in pingpong streamk; do
            sa=$(grep -h "rung=$r .*signature" "$L/trace-$a-$s.log" 2>/dev/null | awk '{print $NF}')
            sb=$(grep -h "rung=$r .*signature" "$L/trace-$b-$s.log" 2>/dev/null | awk '{print $NF}')
            if [ -n "$sa" ] && [ "$sa" = "$sb" ]; then note "PASS signature $b = $a ($r $s: $sb)"
            else note "FAIL signature $b != $a ($r $s: $b '$sb', $a '$sa')"; fi
        done
    done
}

ws_trace_sweep() {
    local d=$1 b rev="" last="" table args="" sw h1 h2
    local bench="--rung pingpong --rung streamk --target-ms 10 --rest-ms 20 --min-iters 6"
    shift
    read -r -a sw <<<"$(ws_sweep33)"  # --shape MxNxK pairs: 16 shapes, then 17
    h1="${sw[*]:0:32}"
    h2="${sw[*]:32}"
    # shellcheck disable=SC2086
    for b in "$@"; do step "sweep1-$b" 16 "overhead" "$d/$b/ladder_bench" $bench $h1 || true; rev="$b $rev"; last=$b; done
    # shellcheck disable=SC2086
    for b in $rev; do step "sweep2-$b" 16 "overhead" "$d/$b/ladder_bench" $bench $h2 || true; done
    table=$(dirname "${BASH_SOURCE[0]}")/trace_overhead_table.py
    [ -f "$table" ] || table=scripts/device/trace_overhead_table.py
    for b in "$@"; do args="$args $b=$L/sweep1-$b.log,$L/sweep2-$b.log"; done
    # shellcheck disable=SC2086
    timeout 10 python3 "$table" --untraced-from "$last" $args | tee "$L/table.txt" | tee -a "$S"
}

ws_lce_nobuf() {  # ws_lce_nobuf D R B1 B2 ...
    local d=$1 r=$2 b
    shift 2
    for b in "$@"; do
        LCE_TRACED_A=1 step "nobuf$r-$b" 15 "INTERLEAVED" "$d/$b/lce" --interleave "$r,$r" --warmup 5 --iters 40 || true
        note "    $b: $(grep -h "INTERLEAVED rung" "$L/nobuf$r-$b.log" | head -1)"
    done
}

ws_lce_cost() {  # ws_lce_cost D R B1 B2 ...
    local d=$1 r=$2 b
    shift 2
    for b in "$@"; do
        step "cost$r-$b" 12 "TRACECOST" "$d/$b/lce" --trace-cost --rung "$r" --warmup 5 --iters 30 || true
        note "    $b: $(grep -h TRACECOST "$L/cost$r-$b.log" | head -1)"
    done
}
