#!/usr/bin/env bash
# device_scripts_lib: scripts/device/lib.sh (the device scripts' shared note/run/ws_cuda_env) without a GPU:
#  1. every device script parses (bash -n), and every one that calls note/run/ws_cuda_env without defining it
#     sources lib.sh;
#  2. the helpers themselves: note appends to $S, run logs to $OUT/NAME.log and notes rc, time and verdict lines,
#     ws_cuda_env sets WARPSTAGE_REQUIRE_GPU=1 and puts /usr/local/cuda/bin first on PATH, step notes PASS / FAIL
#     (with the log's FAIL lines) / SKIP within the budget;
#  3. a script carried alone finds lib.sh beside it (from any current folder), falls back to the checkout's
#     scripts/device/lib.sh, and without either stops with exit 2 and a message;
#  4. trace_overhead_table.py: per-shape overheads, geomean / max per rung and build, FAIL lines for WRONG results;
#  5. streamk_trace_phases.py: phase times, span and pipeline fill of a trace buffer; a cut buffer refused; format
#     version 2's packed records and version 3's pair records read as their events; a newer version, a record a
#     version does not define and an undefined kind refused;
#  6. ws_sweep33 (issue 14's 33 shapes), ws_signatures (two builds' trace signatures compared) and ws_trace_sweep (the
#     sweep in two interleaved halves and its table) on stand-in gpu_ladder_trace / ladder_bench programs;
#  6b. ws_lce_nobuf / ws_lce_cost (lce's no-buffer and tracing-cost runs per build) on a stand-in lce;
#  7. ncu_tma_lines.py: executed counts and stall samples per TMA opcode of an ncu source page; a page without TMA
#     lines refused.
# Usage: tst_device_lib.sh SOURCE_DIR
set -u
SRC=${1:?usage: tst_device_lib.sh SOURCE_DIR}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# 1. (One awk for every script instead of a grep per script and helper: ~500 processes took 42-67 s of the
# test's 60 s under ctest -j2 on the loaded 2-core VM, 2026-12-01; this takes one.)
for f in "$SRC"/scripts/device/*.sh; do
    bash -n "$f" || fail "$f does not parse"
done
while read -r f fn; do
    fail "$(basename "$f") calls $fn but neither defines it nor sources lib.sh"
done < <(awk -v fns="note run ws_cuda_env step left ws_begin" '
    BEGIN { n = split(fns, F, " ") }
    FNR == 1 { files[++nf] = FILENAME }
    {
        if ($0 ~ /^[[:space:]]*(\.|source)[[:space:]].*(lib\.sh|WS_LIB)/) src[FILENAME] = 1
        for (i = 1; i <= n; i++) {
            if ($0 ~ ("^[[:space:]]*(\\$\\(|)" F[i] "( |$)") || $0 ~ ("[;&|][[:space:]]*" F[i] " ")) call[FILENAME, F[i]] = 1
            if ($0 ~ ("^[[:space:]]*" F[i] "\\(\\)")) def[FILENAME, F[i]] = 1
        }
    }
    END {
        for (k = 1; k <= nf; k++) {
            if (files[k] ~ /\/lib\.sh$/) continue
            for (i = 1; i <= n; i++)
                if (call[files[k], F[i]] && !def[files[k], F[i]] && !src[files[k]]) print files[k], F[i]
        }
    }' "$SRC"/scripts/device/*.sh)
[ $fails = 0 ] && ok "device scripts parse and source lib.sh where they use its helpers"

# 2.
T=$(mktemp -d /tmp/tst_device_lib.XXXXXX)
trap 'rm -rf "$T"' EXIT
(
    set -u
    . "$SRC/scripts/device/lib.sh"
    OUT=$T/out
    mkdir -p "$OUT"
    S=$OUT/summary.txt
    : >"$S"
    note "first line"
    run good 10 bash -c 'echo "3 passed, 0 failed"; echo noise'
    run bad 10 bash -c 'echo "FAILED: x"; exit 3'
    run slow 1 sleep 5
    PATH=/usr/bin:/bin LD_LIBRARY_PATH= WARPSTAGE_REQUIRE_GPU=0
    ws_cuda_env
    echo "env: $WARPSTAGE_REQUIRE_GPU ${PATH%%:*}" >"$OUT/env.txt"
)
S=$T/out/summary.txt
[ "$(sed -n 1p "$S")" = "first line" ] || fail "note did not append to \$S: $(cat "$S")"
grep -Eq '^good: rc=0 in [0-9]+s \| 3 passed, 0 failed $' "$S" || fail "run good: $(grep '^good' "$S")"
grep -Eq '^bad: rc=3 in [0-9]+s \| FAILED: x $' "$S" || fail "run bad: $(grep '^bad' "$S")"
grep -Eq '^slow: rc=124 in [0-9]+s' "$S" || fail "run slow (timeout): $(grep '^slow' "$S")"
[ "$(cat "$T/out/good.log")" = "$(printf '3 passed, 0 failed\nnoise')" ] || fail "run's log: $(cat "$T/out/good.log")"
[ "$(cat "$T/out/env.txt")" = "env: 1 /usr/local/cuda/bin" ] || fail "ws_cuda_env: $(cat "$T/out/env.txt")"
[ "$(wc -l <"$S")" = 4 ] || fail "summary has $(wc -l <"$S") lines, expected 4"
[ $fails = 0 ] && ok "note, run, ws_cuda_env"
(
    set -u
    . "$SRC/scripts/device/lib.sh"
    L=$T/steps
    mkdir -p "$L"
    S=$L/summary.txt
    : >"$S"
    BUDGET=100
    T0=$SECONDS
    step pass 10 " 0 failed" bash -c 'echo "3 passed, 0 failed"'
    step nomatch 10 " 0 failed" bash -c 'echo "2 passed, 1 failed"; echo "FAIL case x"'
    step rc 10 "" bash -c 'exit 4'
    BUDGET=$((SECONDS - T0 + 3))
    step late 10 "" true
    echo "rcs $?" >>"$S"
)
S=$T/steps/summary.txt
grep -Eq '^PASS pass: rc=0 in [0-9]+s \| 3 passed, 0 failed $' "$S" || fail "step pass: $(cat "$S")"
grep -Eq '^FAIL nomatch: rc=0 in [0-9]+s \(limit 10s\) \| 2 passed, 1 failed FAIL case x $' "$S" || fail "step nomatch: $(cat "$S")"
grep -qx 'FAIL case x' "$S" || fail "step did not copy the log's FAIL lines: $(cat "$S")"
grep -Eq '^FAIL rc: rc=4 ' "$S" || fail "step rc: $(cat "$S")"
grep -Eq '^SKIP late: out of time \(budget [0-9]+s\)$' "$S" || fail "step late: $(cat "$S")"
grep -qx 'rcs 1' "$S" || fail "a skipped step returns 1: $(cat "$S")"
[ $fails = 0 ] && ok "step, left"
(
    set -u
    . "$SRC/scripts/device/lib.sh"
    cd "$T" && unset OUT BUDGET
    mkdir -p out-wsb && echo stale >out-wsb/summary.txt
    before=$SECONDS
    ws_begin wsb 42
    echo "OUT=$OUT BUDGET=$BUDGET S=$S L=$L T0=$T0 left=$(left)" >"$T/wsb1.txt"
    echo "$L" >>"$T/wsb-logs.txt"
    echo "took $((SECONDS - before))" >"$T/wsb1-took.txt"
    [ -d "$L" ] && [ ! -s "$S" ] && echo "fresh" >>"$T/wsb1.txt"
    OUT=$T/given
    BUDGET=7
    ws_begin wsb 42
    echo "$L" >>"$T/wsb-logs.txt"
    echo "OUT=$OUT BUDGET=$BUDGET" >"$T/wsb2.txt"
)
grep -Eq "^OUT=$T/out-wsb BUDGET=42 S=$T/out-wsb/summary.txt L=/tmp/wsb-logs\.[A-Za-z0-9]{4} T0=[0-9]+ left=[0-9]+$" "$T/wsb1.txt" \
    || fail "ws_begin defaults: $(cat "$T/wsb1.txt")"
# left = the budget less the whole seconds since ws_begin: 42 less at most the seconds the lines above took (a
# loaded machine may take more than one, so no fixed 41-42)
wsb_left=$(sed -n 's/.* left=\([0-9]*\)$/\1/p' "$T/wsb1.txt")
wsb_took=$(sed -n 's/^took //p' "$T/wsb1-took.txt")
[ -n "$wsb_left" ] && [ "$wsb_left" -le 42 ] && [ "$wsb_left" -ge $((42 - wsb_took)) ] \
    || fail "ws_begin: left=$wsb_left after $wsb_took s (expected 42 - $wsb_took .. 42)"
grep -qx fresh "$T/wsb1.txt" || fail "ws_begin: log folder missing or summary not emptied"
grep -qx stale "$T/out-wsb/summary.earlier.txt" 2>/dev/null \
    || fail "ws_begin lost the summary already there (summary.earlier.txt: $(cat "$T/out-wsb/summary.earlier.txt" 2>&1))"
grep -qx "OUT=$T/given BUDGET=7" "$T/wsb2.txt" || fail "ws_begin overrode OUT/BUDGET the caller set: $(cat "$T/wsb2.txt")"
# only this run's log folders: another run of this test on the same machine may be between its ws_begin and its check
while read -r d; do rm -rf "$d"; done <"$T/wsb-logs.txt"
[ $fails = 0 ] && ok "ws_begin"

# 3. A carried script: the sourcing lines of a real device script, then a call of note.
probe() {  # probe DIR: a script made of shapes-check.sh's lines up to its first ws_cuda_env, then a note
    sed -n '1,/^ws_cuda_env$/p' "$SRC/scripts/device/shapes-check.sh" | grep -v '^ws_cuda_env$' >"$1/carried.sh"
    echo 'S=$OUT/summary.txt; note "carried ok"' >>"$1/carried.sh"
}
mkdir -p "$T/carry" "$T/elsewhere" "$T/checkout/scripts/device" "$T/bare"
probe "$T/carry"
cp "$SRC/scripts/device/lib.sh" "$T/carry/"
out=$(cd "$T/elsewhere" && OUT=$T/elsewhere bash "$T/carry/carried.sh" x 2>&1)
[ "$out" = "carried ok" ] || fail "carried with lib.sh beside it: $out"
probe "$T/bare"
cp "$SRC/scripts/device/lib.sh" "$T/checkout/scripts/device/"
out=$(cd "$T/checkout" && OUT=$T/checkout bash "$T/bare/carried.sh" x 2>&1)
[ "$out" = "carried ok" ] || fail "carried alone, run from a checkout: $out"
out=$(cd "$T/elsewhere" && OUT=$T/elsewhere bash "$T/bare/carried.sh" x 2>&1)
rc=$?
[ $rc = 2 ] || fail "without lib.sh anywhere: rc=$rc (expected 2)"
[[ "$out" == *"lib.sh is neither beside this script nor in scripts/device/"* ]] || fail "without lib.sh: message '$out'"
[ $fails = 0 ] && ok "carried scripts find lib.sh"

# 4. trace_overhead_table.py (the tracing-cost scripts' table) on ladder_bench lines as the H200 printed them
# (2026-12-01 03:06 UTC, s10-tracecost: base sweep1); build "b" is base with one result marked wrong.
if command -v python3 >/dev/null; then
    n0=$fails
    cat >"$T/a.log" <<'LOG'
shape 1024x1024x1024: 8 input sets of 6 MB (L2 63 MB), seed 2970630765601173547
  pingpong        0.0171 ms    125.9 TFLOP/s   52.5% cuBLAS | traced   0.0186 ms    115.7 TFLOP/s  overhead +8.82%  [correct, traced correct]
  streamk         0.0120 ms    178.5 TFLOP/s   74.5% cuBLAS | traced   0.0159 ms    135.0 TFLOP/s  overhead +32.18%  [correct, traced correct]
LOG
    cat >"$T/a2.log" <<'LOG'
shape 2048x2048x2048: 8 input sets of 25 MB (L2 63 MB), seed 9809914758812436688
  pingpong        0.0284 ms    603.9 TFLOP/s   94.5% cuBLAS | traced   0.0301 ms    571.1 TFLOP/s  overhead +5.74%  [correct, traced correct]
  streamk         0.0290 ms    592.6 TFLOP/s   92.7% cuBLAS | traced   0.0312 ms    549.8 TFLOP/s  overhead +7.78%  [correct, traced correct]
LOG
    sed 's/+5.74%  \[correct, traced correct\]/+5.74%  [correct, traced WRONG]/' "$T/a2.log" >"$T/b2.log"
    out=$(python3 "$SRC/scripts/device/trace_overhead_table.py" a="$T/a.log,$T/a2.log" b="$T/a.log,$T/b2.log,$T/missing.log" 2>&1)
    # geomean of +8.82 % and +5.74 %: sqrt(1.0882 * 1.0574) - 1 = +7.27 %; streamk sqrt(1.3218 * 1.0778) - 1 = +19.36 %
    [[ "$out" == *"| pingpong | +7.27 % (max +8.8 %, 2 shapes) | +7.27 % (max +8.8 %, 2 shapes) |"* ]] || fail "overhead table: pingpong geomean in: $out"
    [[ "$out" == *"| streamk | +19.36 % (max +32.2 %, 2 shapes) |"* ]] || fail "overhead table: streamk geomean in: $out"
    [[ "$out" == *"| 2048x2048x2048 | 0.0284 | +5.7 % | +5.7 % WRONG |"* ]] || fail "overhead table: the wrong row in: $out"
    [[ "$out" == *"FAIL b pingpong: a traced or untraced result is WRONG"* ]] || fail "overhead table: no FAIL line for b"
    [[ "$out" == *"FAIL a "* ]] && fail "overhead table: a FAIL line for a correct build"
    python3 "$SRC/scripts/device/trace_overhead_table.py" a >/dev/null 2>&1 && fail "overhead table: 'a' without logs accepted"
    [ $fails = $n0 ] && ok "trace_overhead_table.py"
fi

# 5. streamk_trace_phases.py (session 11: where a traced launch's time goes) on a two-CTA buffer built here: CTA 0
# 1000-11000 ns, CTA 1 1100-13100 ns, both 2 cycles per ns; warp 4's phases (a TileBegin marker inside WaitData does
# not cut it): CTA 0 WaitData 0.45, MmaIssue 0.5, Fixup 1.0 us; CTA 1 WaitData 1.15, MmaIssue 1.0 us.
if command -v python3 >/dev/null; then
    n0=$fails
    python3 - "$T/phases.bin" <<'PY'
import struct, sys
ctas, warps, epw = 2, 12, 8
b = bytearray(64 + 64 * ctas + ctas * warps * (16 + 16 * epw))
struct.pack_into("<7I", b, 0, 0x57535452, 1, ctas, warps, epw, 4, 9216)
struct.pack_into("<QQQQII", b, 64, 1000, 5000, 11000, 25000, 0, 3)
struct.pack_into("<QQQQII", b, 128, 1100, 0, 13100, 24000, 1, 3)
events = {0: [(5000, 1), (5100, 4), (5300, 0xF1), (6000, 5), (7000, 15), (9000, 0xF0)],
          1: [(0, 1), (200, 4), (2500, 5), (4500, 0xF0)]}
for c in range(ctas):
    for w in range(warps):
        off = 64 + 64 * ctas + (c * warps + w) * (16 + 16 * epw)
        ev = events[c] if w == 4 else []
        struct.pack_into("<IBBBB", b, off, len(ev), 2 if w >= 4 else 1, w // 4, 0, 1)
        for i, (clock, kind) in enumerate(ev):
            struct.pack_into("<QihBB", b, off + 16 + 16 * i, clock, 0, 0, 255, kind)
open(sys.argv[1], "wb").write(b)
PY
    out=$(python3 "$SRC/scripts/streamk_trace_phases.py" "$T/phases.bin" 2>&1)
    [[ "$out" == *"launch span 12.10 us"*"CTA starts spread 0.10 us"*"min/median/max 10.00/12.00/12.00 us"* ]] \
        || fail "trace phases: span and spread in: $out"
    [[ "$out" == *"consumer wg0 (warp 4): mean over 2 CTAs (the last-ending CTA 1)"*"MmaIssue 0.75 (1.00)"* ]] \
        || fail "trace phases: MmaIssue in: $out"
    [[ "$out" == *"WaitData 0.80 (1.15)"*"Fixup 0.50 (0.00)"*"first MmaIssue after CTA start: median 1.25 us"* ]] \
        || fail "trace phases: WaitData / Fixup / fill in: $out"
    head -c 200 "$T/phases.bin" >"$T/short.bin"
    out=$(python3 "$SRC/scripts/streamk_trace_phases.py" "$T/short.bin" 2>&1)
    rc=$?
    [[ $rc = 1 && "$out" == *"200 bytes, but its header"*"needs 3648"* ]] || fail "trace phases: a cut buffer (rc $rc): $out"
    # 5b. format version 2's packed records (session 14) read as the events they stand for: a buffer whose producer
    # writes a kEventLoad2 and whose consumer a kEventKStep4 (lag 1, S = 4) gives the same table as its plain twin;
    # so does version 3's pair record (session 16) for two consumer events each; version 4, a pair in a version-2 buffer
    # and an undefined kind 0xF7 are refused by name.
    python3 - "$T" <<'PY'
import struct, sys
def buf(path, version, prod, cons):
    ctas, warps, epw = 1, 12, 8
    b = bytearray(64 + 64 * ctas + ctas * warps * (16 + 16 * epw))
    struct.pack_into("<7I", b, 0, 0x57535452, version, ctas, warps, epw, 4, 9216)
    struct.pack_into("<QQQQII", b, 64, 1000, 0, 11000, 20000, 0, 3)
    for w, ev in ((0, prod), (4, cons)):
        off = 64 + 64 * ctas + w * (16 + 16 * epw)
        struct.pack_into("<IBBBB", b, off, len(ev), 1 if w == 0 else 2, w // 4, 0, 1)
        for i, (clock, kind, kstep, slot, aux) in enumerate(ev):
            struct.pack_into("<QihBB", b, off + 16 + 16 * i, clock, kstep, aux, slot, kind)
    open(path, "wb").write(b)
prod_plain = [(0, 1, -1, 255, 0), (10, 2, 1, 1, 0), (40, 3, 1, 1, 0), (4500, 0xF0, -1, 255, 0)]
prod_packed = [(0, 1, -1, 255, 0), (10 | 30 << 32, 0xF5, 1, 4, 0), (4500, 0xF0, -1, 255, 0)]
cons_plain = [(0, 1, -1, 255, 0), (100, 6, 0, 0, 0), (150, 7, 0, 0, 0), (200, 4, 1, 1, 0), (2500, 5, 1, 1, 0),
              (4500, 0xF0, -1, 255, 0)]
cons_packed = [(0, 1, -1, 255, 0), (100 | 50 << 32 | 50 << 48, 0xF4, 1, 4 | 1 << 4, 2300), (4500, 0xF0, -1, 255, 0)]
cons_pair = [(0, 1, -1, 255, 0), (100 | 50 << 32, 0xF6, 0, 4, 6 | 7 << 8), (200 | 2300 << 32, 0xF6, 1, 4, 4 | 5 << 8),
             (4500, 0xF0, -1, 255, 0)]
d = sys.argv[1]
buf(d + "/plain.bin", 2, prod_plain, cons_plain)
buf(d + "/packed.bin", 2, prod_packed, cons_packed)
buf(d + "/v4.bin", 4, prod_plain, cons_plain)
buf(d + "/pair.bin", 3, prod_packed, cons_pair)
buf(d + "/pair2.bin", 2, prod_plain, cons_pair)
buf(d + "/odd.bin", 2, prod_plain, cons_plain[:2] + [(120, 0xF7, 0, 0, 0)] + cons_plain[2:])
PY
    a=$(python3 "$SRC/scripts/streamk_trace_phases.py" "$T/plain.bin" 2>&1 | sed 1,2d)
    b=$(python3 "$SRC/scripts/streamk_trace_phases.py" "$T/packed.bin" 2>&1 | sed 1,2d)
    [[ "$a" == *"MmaWait 0.03"*"Release 0.03"* && "$a" == "$b" ]] || fail "trace phases: packed records: plain '$a' packed '$b'"
    c=$(python3 "$SRC/scripts/streamk_trace_phases.py" "$T/pair.bin" 2>&1 | sed 1,2d)
    [[ "$a" == "$c" ]] || fail "trace phases: pair records: plain '$a' pair '$c'"
    out=$(python3 "$SRC/scripts/streamk_trace_phases.py" "$T/pair2.bin" 2>&1)
    [[ $? = 1 && "$out" == *"CTA 0 warp 4: record kind 0xF6, which format version 2 does not define"* ]] || fail "trace phases: a pair in version 2: $out"
    out=$(python3 "$SRC/scripts/streamk_trace_phases.py" "$T/v4.bin" 2>&1)
    [[ $? = 1 && "$out" == *"trace format version 4; this script reads versions 1 to 3"* ]] || fail "trace phases: version 4: $out"
    out=$(python3 "$SRC/scripts/streamk_trace_phases.py" "$T/odd.bin" 2>&1)
    [[ $? = 1 && "$out" == *"CTA 0 warp 4: record kind 0xF7, which format version 2 does not define"* ]] || fail "trace phases: 0xF7: $out"
    [ $fails = $n0 ] && ok "streamk_trace_phases.py"
fi

# 6. ws_sweep33, ws_signatures, ws_trace_sweep (session 14), on stand-ins for gpu_ladder_trace and ladder_bench.
if command -v python3 >/dev/null; then
    n0=$fails
    mkdir -p "$T/ab/base" "$T/ab/new" "$T/ab-logs"
    for b in base new; do
        # gpu_ladder_trace: one signature line per rung; "new" differs from "base" only for streamk at 1024^3
        cat >"$T/ab/$b/gpu_ladder_trace" <<EOS
#!/usr/bin/env bash
shape=\${@: -1}
sk=0672ed2437827ea3
[ "$b" = new ] && [ "\$shape" = 1024x1024x1024 ] && sk=ffff000011112222
echo "INFO rung=pingpong shape=\$shape signature (counts, roles, events without clocks): 57946b6a47a26d13"
echo "INFO rung=streamk shape=\$shape signature (counts, roles, events without clocks): \$sk"
echo "8 passed, 0 failed"
EOS
        # ladder_bench: its call order into calls.txt, then a block per --shape as the H200 prints them; base's tracing
        # cost +4 %, new's +2 %
        ov=4.00; [ $b = new ] && ov=2.00
        cat >"$T/ab/$b/ladder_bench" <<EOS
#!/usr/bin/env bash
n=0
while [ \$# -gt 0 ]; do
    if [ "\$1" = --shape ]; then
        n=\$((n + 1))
        echo "shape \$2: 8 input sets of 6 MB (L2 63 MB), seed 1"
        echo "  pingpong        0.0100 ms    125.9 TFLOP/s   52.5% cuBLAS | traced   0.0104 ms    115.7 TFLOP/s  overhead +$ov%  [correct, traced correct]"
        echo "  streamk         0.0100 ms    178.5 TFLOP/s   74.5% cuBLAS | traced   0.0104 ms    135.0 TFLOP/s  overhead +$ov%  [correct, traced correct]"
        shift
    fi
    shift
done
echo "$b \$n" >>"$T/ab/calls.txt"
EOS
        chmod +x "$T/ab/$b/gpu_ladder_trace" "$T/ab/$b/ladder_bench"
    done
    (
        set -u
        . "$SRC/scripts/device/lib.sh"
        L=$T/ab-logs
        S=$T/ab/summary.txt
        : >"$S"
        BUDGET=200
        T0=$SECONDS
        read -r -a sw <<<"$(ws_sweep33)"
        echo "${#sw[@]} $(printf '%s\n' "${sw[@]}" | grep -v -- --shape | sort -u | wc -l)" >"$T/ab/sweep.txt"
        printf '%s\n' "${sw[@]}" | grep -v -- --shape >>"$T/ab/sweep.txt"
        ws_signatures "$T/ab" base new 300x1000x1032 1024x1024x1024
        ws_trace_sweep "$T/ab" base new
    ) >/dev/null
    S=$T/ab/summary.txt
    [ "$(sed -n 1p "$T/ab/sweep.txt")" = "66 33" ] || fail "ws_sweep33: $(sed -n 1p "$T/ab/sweep.txt") words / distinct shapes, expected 66 33"
    for x in 1024x1024x1024 16384x16384x16384 128x28672x8192 8192x4096x14336 4096x4096x256 2048x2048x32768 \
             8191x8193x4104 1x4096x4096 256x4096x4096; do
        grep -qx "$x" "$T/ab/sweep.txt" || fail "ws_sweep33 lacks $x"
    done
    [ "$(grep -c '^PASS signature new = base (pingpong ' "$S")" = 2 ] || fail "ws_signatures: pingpong's PASS notes: $(cat "$S")"
    grep -q '^PASS signature new = base (streamk 300x1000x1032: 0672ed2437827ea3)$' "$S" \
        || fail "ws_signatures: streamk at 300x1000x1032 not PASS: $(cat "$S")"
    grep -q "^FAIL signature new != base (streamk 1024x1024x1024: new 'ffff000011112222', base '0672ed2437827ea3')$" "$S" \
        || fail "ws_signatures: the differing signature not FAIL: $(cat "$S")"
    [ "$(tr '\n' ' ' <"$T/ab/calls.txt")" = "base 16 new 16 new 17 base 17 " ] \
        || fail "ws_trace_sweep: the halves' order / sizes: $(tr '\n' ' ' <"$T/ab/calls.txt")"
    grep -q '^| pingpong | +4.00 % (max +4.0 %, 33 shapes) | +2.00 % (max +2.0 %, 33 shapes) |$' "$S" \
        || fail "ws_trace_sweep: the table's geomeans in: $(cat "$S")"
    [ -s "$T/ab-logs/table.txt" ] || fail "ws_trace_sweep: no table.txt"
    [ $fails = $n0 ] && ok "ws_sweep33, ws_signatures, ws_trace_sweep"
fi

# 6b. ws_lce_nobuf, ws_lce_cost (session 17) on a stand-in lce: the no-buffer run must get LCE_TRACED_A=1, the
# --trace-cost run must not; each build's line noted in the order given.
n0=$fails
mkdir -p "$T/lc/a" "$T/lc/b" "$T/lc-logs"
for b in a b; do
    cat >"$T/lc/$b/lce" <<EOS
#!/usr/bin/env bash
echo "$b \$* A=\${LCE_TRACED_A:-unset}" >>"$T/lc/calls.txt"
case "\$*" in
    *--interleave*) echo "INTERLEAVED rung 4 0.36 ms  rung 4 0.34 ms  4/4 = 0.95 ($b)"; echo "INTERLEAVED_TRACED_A (rung 4)" ;;
    *--trace-cost*) echo "TRACECOST rung 4 persistent      untraced 0.33 ms  traced 0.35 ms  +5.00% ($b)" ;;
esac
EOS
    chmod +x "$T/lc/$b/lce"
done
(
    set -u
    . "$SRC/scripts/device/lib.sh"
    L=$T/lc-logs
    S=$T/lc/summary.txt
    : >"$S"
    BUDGET=100
    T0=$SECONDS
    ws_lce_nobuf "$T/lc" 4 a b
    ws_lce_cost "$T/lc" 3 b a
) >/dev/null
S=$T/lc/summary.txt
[ "$(grep -c '^PASS ' "$S")" = 4 ] || fail "ws_lce_nobuf / ws_lce_cost: 4 PASS steps expected: $(cat "$S")"
[ "$(grep '^    ' "$S" | tr '\n' '|')" = "    a: INTERLEAVED rung 4 0.36 ms  rung 4 0.34 ms  4/4 = 0.95 (a)|    b: INTERLEAVED rung 4 0.36 ms  rung 4 0.34 ms  4/4 = 0.95 (b)|    b: TRACECOST rung 4 persistent      untraced 0.33 ms  traced 0.35 ms  +5.00% (b)|    a: TRACECOST rung 4 persistent      untraced 0.33 ms  traced 0.35 ms  +5.00% (a)|" ] \
    || fail "ws_lce_nobuf / ws_lce_cost: the noted lines: $(cat "$S")"
[ "$(tr '\n' '|' <"$T/lc/calls.txt")" = "a --interleave 4,4 --warmup 5 --iters 40 A=1|b --interleave 4,4 --warmup 5 --iters 40 A=1|b --trace-cost --rung 3 --warmup 5 --iters 30 A=unset|a --trace-cost --rung 3 --warmup 5 --iters 30 A=unset|" ] \
    || fail "ws_lce_nobuf / ws_lce_cost: the runs: $(cat "$T/lc/calls.txt")"
[ $fails = $n0 ] && ok "ws_lce_nobuf, ws_lce_cost"

# 7. ncu_tma_lines.py (s15-lcetma) on a source page in the form ncu 2025.3 exported it (`--page source --csv
# --print-source sass`, columns cut to the ones read): two UTMALDG.3D lines (100 + 100 executed, 5 + 7 samples),
# one UTMALDG.2D.MULTICAST (100, 9), one UTMASTG.3D (10, 0); a second kernel without TMA lines. The reasons'
# "(Not Issued)" repeats are left out of a line's top reasons (they count the same samples again).
if command -v python3 >/dev/null; then
    n0=$fails
    cat >"$T/src.csv" <<'CSV'
"Kernel Name","void ws::lce::body::lceUserFirst<(int)4, (int)15>(CUtensorMap_st)",
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","# Samples","Instructions Executed","stall_long_sb","stall_wait","stall_mio","stall_long_sb (Not Issued)"
"0x7f00","      @P2   R2UR UR8, R32","3","1","3","100","0","3","0","0"
"0x7f10","      UTMALDG.3D [UR8], [UR4]","5","3","5","100","0","4","1","0"
"0x7f20","      @P0   BRA.U.ANY 0x7f00","11","8","11","100","11","0","0","8"
"0x7f30","      UTMALDG.3D [UR8], [UR4]","7","5","7","100","0","7","0","0"
"0x7f40","      UTMALDG.2D.MULTICAST [UR8], [UR6], UR4","9","6","9","100","0","2","7","0"
"0x7f50","      UTMASTG.3D [UR4], [UR8]","0","0","0","10","0","0","0","0"
"Kernel Name","void other(float*)",
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","# Samples","Instructions Executed","stall_long_sb","stall_wait","stall_mio","stall_long_sb (Not Issued)"
"0x100","      FFMA R1, R2, R3, R4","4","2","4","50","0","4","0","0"
CSV
    out=$(python3 "$SRC/scripts/device/ncu_tma_lines.py" "$T/src.csv" 2>&1)
    rc=$?
    [ $rc = 0 ] || fail "tma lines: rc=$rc on a page with TMA lines: $out"
    [[ "$out" == *"kernel: 510 warp instructions executed, 35 stall samples"* ]] || fail "tma lines: kernel totals in: $out"
    echo "$out" | grep -Eq '^   UTMALDG\.3D +executed +200  samples +12 ' || fail "tma lines: UTMALDG.3D summed in: $out"
    echo "$out" | grep -Eq '^   UTMALDG\.2D\.MULTICAST +executed +100  samples +9 ' || fail "tma lines: the multicast in: $out"
    echo "$out" | grep -Eq '^   UTMASTG\.3D +executed +10  samples +0 ' || fail "tma lines: the store in: $out"
    echo "$out" | grep -Eq '^ +0x7f20 @P0 +BRA\.U\.ANY .* s +11  \[long_sb 11\]$' || fail "tma lines: a neighbour line in: $out"
    [[ "$out" == *"void other(float*)"*"0 TMA lines"* ]] || fail "tma lines: the second kernel in: $out"
    tail -n 3 "$T/src.csv" >"$T/notma.csv"
    out=$(python3 "$SRC/scripts/device/ncu_tma_lines.py" "$T/notma.csv" 2>&1)
    rc=$?
    [ $rc = 1 ] || fail "tma lines: rc=$rc on a page without TMA lines (expected 1)"
    [[ "$out" == *"no TMA instruction on the source page"* ]] || fail "tma lines: no sentence without TMA lines: $out"
    [ $fails = $n0 ] && ok "ncu_tma_lines.py"
fi

if [ $fails = 0 ]; then
    echo "PASS: device_scripts_lib"
    exit 0
fi
echo "$fails failure(s)"
exit 1
