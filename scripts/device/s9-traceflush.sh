#!/usr/bin/env bash
# Issue 14, tracing cost, session 9 (s9-traceflush): the relay (kernels/include/warpstage/trace_relay.cuh) measured
# against main, and what the per-launch floor is. ONE call, BUDGET seconds of wall (default 110).
# Builds (Release, no Qt, stripped; DIR/<build>/{ladder_bench,gpu_ladder_trace,gpu_ladder_correctness[,gpu_trace_relay]}):
#   relay = this branch with -DWS_PP_TRACE_RELAY=1 (the default at the call): rungs 6-7 record through the relay (warp 1 copies every other warp's staged events out;
#           no proxy fence, bulk copy or copy wait on the producer or the consumers);
#   base  = this branch with -DWS_PP_TRACE_RELAY=0 (main's kernels: each warp flushes its own staging half);
#   clock = base with -DWS_TRACE_EXPERIMENT_CLOCK_ONLY (clock reads, nothing stored: the floor of base's structure);
#   relay1 = the relay's first version (d0164ee): every warp still reads the trace header at its start (thread 0 for
#           the CTA record, lane 0 of each warp for its region) and writes its own region header.
# ladder_bench --no-trace-clear: the timed traced launches reuse the trace buffer (no memset before each launch).
# Steps: gpu_trace_relay; gpu_ladder_trace of relay (pingpong + streamk, 3 shapes); ladder_bench traced vs untraced,
# pingpong + streamk, 10 shapes: relay, base, relay-nc, clock-nc, relay1, base-nc; relay over the 33-shape sweep;
# a table of every build (geomean and max) at the end.
# (At the call base, clock and relay1 were one binary by a build mistake: see docs/kernel-notes.md, session 9.)
# Device (run tool, carry ["build-traceflush"]): bash build-traceflush/s9-traceflush.sh build-traceflush
# Success: PASS lines for gpu_trace_relay and trace; the table's relay column under base's.
set -u
D=${1:-build-traceflush}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/relay" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s9-traceflush 110
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"

step relaytest 20 "PASS gpu_trace_relay" "$D/relay/gpu_trace_relay"
step trace 30 "passed, 0 failed" "$D/relay/gpu_ladder_trace" --rung pingpong --rung streamk \
    --shape 2048x2048x2048 --shape 1000x4096x1000 --shape 128x4096x4096
grep -hE "passed, " "$L/trace.log" | head -3 | sed 's/^/    /' | tee -a "$S"

SW=""
for s in 1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 128x4096x4096 2048x4096x14336 \
    4096x4096x1024 8192x8192x512 1000x4096x1000 8191x8193x4104; do SW="$SW --shape $s"; done
BENCH="--rung pingpong --rung streamk --target-ms 20 --rest-ms 40 --min-iters 6"
sweep() {  # sweep NAME BUILD [extra args]
    local v=$1 b=$2
    shift 2
    step sweep-$v 20 "overhead" "$D/$b/ladder_bench" $BENCH $SW "$@" || true
}
sweep relay relay
sweep base base
sweep relay-nc relay --no-trace-clear
sweep clock-nc clock --no-trace-clear
SW33=""
for x in 1024 2048 4096 6144 8192 12288 16384; do SW33="$SW33 --shape ${x}x${x}x${x}"; done
for m in 128 512 2048 8192; do
    for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do SW33="$SW33 --shape ${m}x${nk}"; done
done
SW33="$SW33 --shape 4096x4096x256 --shape 8192x8192x512 --shape 4096x4096x1024 --shape 1024x1024x16384 --shape 2048x2048x32768"
SW33="$SW33 --shape 4000x4000x4000 --shape 8191x8193x4104 --shape 1000x4096x1000 --shape 1x4096x4096 --shape 256x4096x4096"
if [ "$(left)" -ge 40 ]; then step sweep33-relay 36 "overhead" "$D/relay/ladder_bench" $BENCH $SW33 || true
else note "SKIP sweep33-relay ($(left) s left)"; fi
sweep relay1 relay1
sweep base-nc base --no-trace-clear

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
V = ("base", "relay1", "relay", "base-nc", "relay-nc", "clock-nc")
d = {v: load(os.path.join(L, f"sweep-{v}.log")) for v in V}
shapes = []
for v in V:
    for s_, _ in d[v]:
        if s_ not in shapes: shapes.append(s_)
def gm(x): return 100.0 * (math.exp(sum(math.log(1 + o / 100.0) for o in x) / len(x)) - 1.0)
for r in ("pingpong", "streamk"):
    print(f"\n{r}: traced overhead (nc = no trace-buffer memset before each timed traced launch)")
    print("| shape | untraced ms (relay) | " + " | ".join(V) + " |")
    print("|---|---:|" + "---:|" * len(V))
    for s_ in shapes:
        f = d["relay"].get((s_, r))
        cells = [f"{f[1]:.4f}" if f else "-"]
        for v in V:
            x = d[v].get((s_, r))
            cells.append((f"{x[0]:+.1f} %" + ("" if x[3] else " WRONG")) if x else "-")
        print(f"| {s_} | " + " | ".join(cells) + " |")
print("\n| rung | " + " | ".join(V) + " |")
print("|---|" + "---:|" * len(V))
for r in ("pingpong", "streamk"):
    cells = []
    for v in V:
        x = [o[0] for k, o in d[v].items() if k[1] == r]
        cells.append(f"{gm(x):+.2f} % (max {max(x):+.1f} %)" if x else "-")
    print(f"| {r} | " + " | ".join(cells) + " |")
d33 = load(os.path.join(L, "sweep33-relay.log"))
for r in ("pingpong", "streamk"):
    x = [(o[0], k[0]) for k, o in d33.items() if k[1] == r]
    if not x: continue
    ok = all(o[3] for k, o in d33.items() if k[1] == r)
    print(f"{'PASS' if ok else 'FAIL'} 33 shapes {r} relay: geomean {gm([o for o, _ in x]):+.2f} %, max {max(x)[0]:+.1f} % ({max(x)[1]}), all correct: {ok}")
    print("  " + ", ".join(f"{s_} {o:+.1f}" for o, s_ in sorted(x, key=lambda t: t[1])))
for v in V:
    for r in ("pingpong", "streamk"):
        x = [o for k, o in d[v].items() if k[1] == r]
        if x and not all(o[3] for o in x): print(f"FAIL {v} {r}: a traced or untraced result is WRONG")
PY
tar -C "$L" -czf "$OUT/logs.tar.gz" $(cd "$L" && ls *.log) 2>/dev/null
note "done in $((SECONDS - T0)) s, $(date -u +%FT%TZ)"
