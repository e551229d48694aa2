#!/usr/bin/env bash
# Issue 14, tracing cost, session 8 (s8-tracecost), second device call: where does the traced overhead come from?
# ONE call of <= 100 s wall (run with BUDGET=38: 31 s). Builds from this branch at commit bda3e86 (the final tree
# keeps only the CLOCK_ONLY / NO_FLUSH switches in trace.cuh). Builds (Release, no Qt, stripped; the first call's base/post/clock again as references):
#   base   = main 26d4ac8 (format 1: each event written where its phase begins);
#   se     = this branch's default: base's placement + the new start/end (Setup stamped first, trace begin after the
#            ring init with the header prefetched; end waits for the copies' reads only; no second header read);
#   senf   = se with -DWS_TRACE_EXPERIMENT_NO_FLUSH (no staging flush: no proxy fence, no bulk copy; trace invalid);
#   half   = se with -DWS_TRACE_EXPERIMENT_HALF_EVENTS (no MmaIssue / Release events: 2 stores per consumer k-step
#            instead of 4, a flush every 16 k-steps instead of 8): what one store per k-step costs;
#   clock2 = se with -DWS_TRACE_EXPERIMENT_CLOCK_ONLY (clock reads, no stores: the floor of se's placement);
#   cleanp = clock2 with -DWS_TRACE_EXPERIMENT_LEAN_PRODUCER (thread 0 alone runs the traced producer loop, as
#            untraced): is the floor the producer warp?
# (the variants are se's build dir with pingpong.cu.o / streamk.cu.o recompiled with the flag: only rungs 6-7 differ)
# Steps: gpu_ladder_trace of se (pingpong + streamk, 2048^3 and 1000x4096x1000); ladder_bench traced vs untraced,
# pingpong + streamk, 10 shapes, every build; then se and base over the 33-shape sweep while time is left.
# Device (run tool, carry ["build-s8-tracecost"]): bash build-s8-tracecost/s8-tracecost2.sh build-s8-tracecost
# Success: no FAIL line; the table says which build is cheapest and what the floor is.
set -u
D=${1:-build-s8-tracecost}
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/new" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
OUT=${OUT:-$PWD/out-s8-tracecost2}
mkdir -p "$OUT"
L=/tmp/s8-tracecost2-logs
rm -rf "$L" && mkdir -p "$L"
S=$OUT/summary.txt
: >"$S"
T0=$SECONDS
BUDGET=${BUDGET:-95}
for d in /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/extras/CUPTI/lib64; do
    [ -d "$d" ] && LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export LD_LIBRARY_PATH PATH="/usr/local/cuda/bin:$PATH" WARPSTAGE_REQUIRE_GPU=1
note() { echo "$*" | tee -a "$S"; }
run() {  # run NAME LIMIT CMD...: PASS when rc 0 and no FAIL line in the log
    local name=$1 limit=$2
    shift 2
    timeout -k 3 "$limit" "$@" >"$L/$name.log" 2>&1
    local rc=$?
    if [ "$rc" = 0 ] && ! grep -q "^FAIL" "$L/$name.log"; then note "PASS $name (rc 0, $((SECONDS - T0)) s into the call)"
    else note "FAIL $name (rc $rc; first failures: $(grep -m3 "^FAIL" "$L/$name.log" | tr '\n' ' '))"; fi
    return 0
}
left() { echo $((BUDGET - (SECONDS - T0))); }
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"

# 1. traces of the se build
run trace 30 "$D/se/gpu_ladder_trace" --rung pingpong --rung streamk --shape 2048x2048x2048 --shape 1000x4096x1000
grep -E "passed, " "$L/trace.log" | head -3 | sed 's/^/    /' | tee -a "$S"
SW=""
for s in 1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 128x4096x4096 2048x4096x14336 \
    4096x4096x1024 8192x8192x512 1000x4096x1000 8191x8193x4104; do SW="$SW --shape $s"; done
BENCH="--rung pingpong --rung streamk --target-ms 20 --rest-ms 40 --min-iters 6"
sweep() {
    local v=$1 need=$2 lim
    lim=$(left); [ "$lim" -gt 20 ] && lim=20
    if [ "$lim" -lt "$need" ]; then note "SKIP sweep-$v ($lim s left)"; return; fi
    run sweep-$v "$lim" "$D/$v/ladder_bench" $BENCH $SW
}
for v in se base senf half clock2 cleanp; do sweep $v 9; done
SW33=""
for x in 1024 2048 4096 6144 8192 12288 16384; do SW33="$SW33 --shape ${x}x${x}x${x}"; done
for m in 128 512 2048 8192; do
    for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do SW33="$SW33 --shape ${m}x${nk}"; done
done
SW33="$SW33 --shape 4096x4096x256 --shape 8192x8192x512 --shape 4096x4096x1024 --shape 1024x1024x16384 --shape 2048x2048x32768"
SW33="$SW33 --shape 4000x4000x4000 --shape 8191x8193x4104 --shape 1000x4096x1000 --shape 1x4096x4096 --shape 256x4096x4096"
lim=$(left); [ "$lim" -gt 30 ] && lim=30
if [ "$lim" -ge 24 ]; then run sweep33-se "$lim" "$D/se/ladder_bench" $BENCH $SW33; else note "SKIP sweep33-se ($lim s left)"; fi

# tables
timeout 10 python3 - "$L" <<'PY' | tee -a "$S"
import math, os, re, sys
L = sys.argv[1]
def load(p):
    out, shape = {}, None
    if not os.path.exists(p): return out
    for line in open(p, errors="replace"):
        m = re.match(r"^shape (\S+):", line)
        if m: shape = m.group(1); continue
        m = re.match(r"^\s+(pingpong|streamk)\s+([\d.]+) ms.*\| traced\s+([\d.]+) ms.*overhead ([+-]?[\d.]+)%\s+\[(.*)\]", line)
        if m and shape:
            out[(shape, m.group(1))] = (float(m.group(4)), float(m.group(2)), float(m.group(3)), "WRONG" not in m.group(5))
    return out
V = ("base", "se", "senf", "half", "clock2", "cleanp")
d = {v: load(os.path.join(L, f"sweep-{v}.log")) for v in V}
shapes = []
for v in V:
    for s_, _ in d[v]:
        if s_ not in shapes: shapes.append(s_)
for r in ("pingpong", "streamk"):
    print()
    print(f"{r}: traced overhead")
    print("| shape | untraced ms (se) | " + " | ".join(V) + " |")
    print("|---|---:|" + "---:|" * len(V))
    for s_ in shapes:
        f = d["se"].get((s_, r))
        cells = [f"{f[1]:.4f}" if f else "-"]
        for v in V:
            x = d[v].get((s_, r))
            cells.append((f"{x[0]:+.1f} %" + ("" if x[3] else " WRONG")) if x else "-")
        print(f"| {s_} | " + " | ".join(cells) + " |")
print()
print("| rung | " + " | ".join(V) + " |")
print("|---|" + "---:|" * len(V))
for r in ("pingpong", "streamk"):
    cells = []
    for v in V:
        x = [o[0] for k, o in d[v].items() if k[1] == r]
        if not x: cells.append("-"); continue
        g = 100.0 * (math.exp(sum(math.log(1 + o / 100.0) for o in x) / len(x)) - 1.0)
        cells.append(f"{g:+.2f} % (max {max(x):+.1f} %)")
    print(f"| {r} | " + " | ".join(cells) + " |")
d33 = load(os.path.join(L, "sweep33-se.log"))
for r in ("pingpong", "streamk"):
    x = [(o[0], k[0]) for k, o in d33.items() if k[1] == r]
    if not x: continue
    g = 100.0 * (math.exp(sum(math.log(1 + o / 100.0) for o, _ in x) / len(x)) - 1.0)
    ok = all(o[3] for k, o in d33.items() if k[1] == r)
    print(f"{'PASS' if ok else 'FAIL'} 33 shapes {r} se: geomean {g:+.2f} %, max {max(x)[0]:+.1f} % ({max(x)[1]}), all correct: {ok}")
    print("  " + ", ".join(f"{s_} {o:+.1f}" for o, s_ in sorted(x, key=lambda t: t[1])))
for v in V:
    for r in ("pingpong", "streamk"):
        x = [o for k, o in d[v].items() if k[1] == r]
        if x and not all(o[3] for o in x): print(f"FAIL {v} {r}: a traced or untraced result is WRONG")
PY
tar -C "$L" -czf "$OUT/logs2.tar.gz" $(cd "$L" && ls *.log) 2>/dev/null
note "done in $((SECONDS - T0)) s, $(date -u +%FT%TZ)"
