#!/usr/bin/env bash
# Session 11, s11-skinny2 (issue 14): stream-K's split-K pieces of a tile as ONE cluster along K, reduced through
# distributed shared memory (SplitMode::Cluster, SkFixup::clusterK, kernel gemmStreamkK: configurations of one CTA per
# block, kTiles 2-6). WARPSTAGE_STREAMK_SPLIT=cluster forces it (ladder_bench variant `/cluster`), `global` is the rule
# without it (s11-skinny's). Every step under `timeout` within BUDGET seconds, in order of need:
#   correctness of the cluster split with each cl = 1 configuration forced at the six lone-wave shapes (M = 1, 40, 129,
#   256, 300, 1024; odd N and K -> the register-store path too; traced vs untraced bit for bit); ladder_bench at the
#   seven lone-wave shapes among the ten weakest plus 1x64x64 (one k-step of one tile: a launch's fixed cost), cold, in
#   one process: cuBLAS, the current rule (`streamk/global`), and per configuration (2-5) split-K through the workspace
#   (`/splitk`) beside the cluster split (`/cluster`); gpu_ladder_trace on the new mode (two configurations, a
#   partial-tile shape); --quick with the mode forced.
# Call 1 (06:04 UTC) ran an earlier version (same steps with 12 s limits, plus memcheck of three cluster plans: 0 errors)
# and found the TRACED cluster launches hanging (the trace's end __syncthreads vs the consumers' cluster barrier; fixed
# by Epi::kClusterSync in pingpong_body.cuh).
# Build HERE (no GPU; Release, no Qt: build/kchecks), then into the ignored folder of the session's checkout:
#   ninja -C build/kchecks -j1 ladder_bench gpu_ladder_correctness gpu_ladder_trace ladder_check
#   D=/work/main/build-skinny2; rm -rf $D; mkdir -p $D/b
#   cp build/kchecks/tests/kernels/{gpu_ladder_correctness,gpu_ladder_trace,ladder_check} \
#      build/kchecks/tests/bench/ladder_bench $D/b/ && strip $D/b/*
#   tar -cJf $D/bins.tar.xz -C $D/b . && rm -r $D/b
#   cp scripts/device/s11-skinny2.sh scripts/device/lib.sh $D/
# On the device (run tool, carry ["build-skinny2"]):
#   tar -xJf build-skinny2/bins.tar.xz -C build-skinny2 && BUDGET=70 timeout 85 bash build-skinny2/s11-skinny2.sh build-skinny2
# Back in $OUT: summary.txt (PASS/FAIL per check, then the table), explore.csv, logs.tar.gz.
# Success: every check line starts with PASS; "0 failed"; "ERROR SUMMARY: 0 errors"; 0 traced/untraced differences.
set -u
D=${1:-build-skinny2}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s11-skinny2 70
ws_cuda_env
CL1="2 3 4 5 6"  # the configurations of one CTA per block (kTiles[i].cl == 1)
SPLITSHAPES="--shape 1x4096x4096 --shape 256x4096x4096 --shape 300x1000x1032 --shape 40x1000x4104 --shape 129x777x2056
 --shape 1024x1024x1024"
# the ten weakest shapes' lone waves (the others are not split), and one k-step of one tile: a launch's fixed cost
SEVEN="--shape 1x4096x4096 --shape 128x4096x4096 --shape 256x4096x4096 --shape 512x4096x4096 --shape 1024x1024x16384
 --shape 128x4096x14336 --shape 512x4096x14336 --shape 1x64x64"
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
for i in $CL1; do
    WARPSTAGE_STREAMK_TILE=$i WARPSTAGE_STREAMK_SPLIT=cluster step "correct-cluster-t$i" 8 " 0 failed" \
        "$D/gpu_ladder_correctness" --rung streamk $SPLITSHAPES --no-partial
done
note "    traced/untraced bit differences (WARN lines): $(cat "$L"/correct-cluster-*.log | grep -c "WARN rung=streamk.*differ")"
V="--rung streamk/global"
for i in 2 3 4 5; do V="$V --rung streamk@$i/splitk --rung streamk@$i/cluster"; done  # 6 (64x256) never fastest
step explore 35 "Kernel ladder vs cuBLAS" "$D/ladder_bench" $V $SEVEN --no-traced --target-ms 10 --csv "$OUT/explore.csv"
for i in 2 4; do
    WARPSTAGE_STREAMK_TILE=$i WARPSTAGE_STREAMK_SPLIT=cluster step "trace-cluster-t$i" 6 "" "$D/gpu_ladder_trace" \
        --rung streamk --shape 300x1000x1032
done
WARPSTAGE_STREAMK_SPLIT=cluster step correct-cluster-quick 10 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk --quick
python3 - "$OUT" >>"$S" 2>&1 <<'PY'
import csv, collections, os, sys
p = os.path.join(sys.argv[1], "explore.csv")
if not os.path.exists(p):
    sys.exit("no explore.csv")
d = collections.defaultdict(dict)
for r in csv.DictReader(open(p)):
    if r["traced"] == "0":
        d[r["shape"]][r["variant"]] = r
vs = []
for m in d.values():
    for v in m:
        if not v.startswith("cublas") and v not in vs:
            vs.append(v)
print("\n| shape | cuBLAS us | " + " | ".join(vs) + " |\n|---|---:|" + "---:|" * len(vs))
for s, m in d.items():
    cb = min(float(m[v]["median_ms"]) for v in ("cublas", "cublas_after") if v in m)
    cells = []
    for v in vs:
        r = m.get(v)
        if not r or not r["median_ms"]:
            cells.append("n/a")
            continue
        x = float(r["median_ms"])
        cells.append(f"{1000 * x:.1f} ({100 * cb / x:.0f}%)" + ("" if r["correct"] == "1" else " **WRONG**"))
    print(f"| {s} | {1000 * cb:.1f} | " + " | ".join(cells) + " |")
PY
note "total: $((SECONDS - T0))s"
tar -czf "$OUT/logs.tar.gz" -C "$L" . 2>/dev/null
echo "=== summary"
cat "$S"
