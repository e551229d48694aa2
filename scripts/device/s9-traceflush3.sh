#!/usr/bin/env bash
# Issue 14, tracing cost, session 9 (s9-traceflush), third device call: does the relay's polling cost the small
# shapes? The relay (second call's `relay`) with its pause between polls at 64 ns (relay, the default), 0 (sleep0:
# spins) and 1000 ns (sleep1000: polls ~15x less often), against main's kernels (base), 10 shapes, one call of
# BUDGET seconds (default 34). Builds: DIR/<build>/ladder_bench (Release, no Qt, stripped).
# Device (run tool, carry ["build-traceflush"]): BUDGET=34 bash build-traceflush/s9-traceflush3.sh build-traceflush
# First, gpu_trace_relay against the mutation traceflush.relay_last_half_full (DIR/mut/gpu_trace_relay_mut: the relay
# copies a source's whole last half): the test must FAIL there (the mutant is caught) and PASS on relay.
# Success: PASS mutant-caught and relaytest; every sweep PASS; the table says which pause is cheapest.
set -u
D=${1:-build-traceflush}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
if [ -f "$D/bins.tar.xz" ] && [ ! -d "$D/relay" ]; then tar -C "$D" -xJf "$D/bins.tar.xz"; fi
ws_begin s9-traceflush3 36
ws_cuda_env
note "env: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1); $(date -u +%FT%TZ)"

timeout 20 "$D/mut/gpu_trace_relay_mut" >"$L/mutant.log" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "^FAIL gpu_trace_relay" "$L/mutant.log"; then note "PASS mutant-caught: gpu_trace_relay fails on traceflush.relay_last_half_full (rc 1)"
else note "FAIL mutant-caught: rc=$rc"; fi
grep -m3 "^FAIL" "$L/mutant.log" | tee -a "$S"
step relaytest 15 "PASS gpu_trace_relay" "$D/relay/gpu_trace_relay"
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
sweep sleep0 sleep0
sweep sleep1000 sleep1000

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
V = ("base", "relay", "sleep0", "sleep1000")
d = {v: load(os.path.join(L, f"sweep-{v}.log")) for v in V}
shapes = []
for v in V:
    for s_, _ in d[v]:
        if s_ not in shapes: shapes.append(s_)
def gm(x): return 100.0 * (math.exp(sum(math.log(1 + o / 100.0) for o in x) / len(x)) - 1.0)
for r in ("pingpong", "streamk"):
    print(f"\n{r}: traced overhead ")
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
for v in V:
    for r in ("pingpong", "streamk"):
        x = [o for k, o in d[v].items() if k[1] == r]
        if x and not all(o[3] for o in x): print(f"FAIL {v} {r}: a traced or untraced result is WRONG")
PY
tar -C "$L" -czf "$OUT/logs.tar.gz" $(cd "$L" && ls *.log) 2>/dev/null
note "done in $((SECONDS - T0)) s, $(date -u +%FT%TZ)"
