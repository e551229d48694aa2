#!/usr/bin/env bash
# Session 8, s8-gemmtiles (issue 14): stream-K with a tile configuration chosen per shape (streamk_schedule.h:
# kTiles, chooseTile). One device call per mode, every step under `timeout` within BUDGET seconds.
#   explore: every configuration forced (WARPSTAGE_STREAMK_TILE=I) through gpu_ladder_correctness --quick (traced
#            and untraced against cuBLAS, traces decode, stream-K phases) and memcheck on a partial-tile shape with
#            a split; then ladder_bench --rung streamk@0..4 --rung streamk (the rule) on the losing shapes + 4096^3.
#   smallm:  M < 128 (1, 8, 32, 64 rows): every configuration and the rule, cold; the rule's picks checked.
#   final:   the rule: gpu_ladder_correctness --rung streamk --rung pingpong (full), gpu_ladder_trace for every
#            configuration, memcheck per configuration; the six named shapes cold + hot (pingpong, streamk@0 = the
#            session-7 rung, streamk); the 33-shape sweep cold (streamk@0, streamk) vs cuBLAS.
# Build HERE (no GPU needed; Release, no Qt), then copy into the ignored folder of /work/main:
#   cmake -S . -B build/kchecks -G Ninja -DWARPSTAGE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build/kchecks --target warpstage_ladder gpu_ladder_correctness gpu_ladder_trace ladder_check \
#       ladder_bench ladder_manifest
#   D=/work/main/build-s8-gemmtiles; mkdir -p $D
#   cp build/kchecks/tests/kernels/{gpu_ladder_correctness,gpu_ladder_trace,ladder_check} \
#      build/kchecks/tests/bench/ladder_bench build/kchecks/tests/kernels/ladder_manifest \
#      build/kchecks/kernels/src/libwarpstage_ladder.a tests/kernels/check_sass.py scripts/device/s8-gemmtiles.sh $D/
#   strip $D/gpu_* $D/ladder_check $D/ladder_bench $D/ladder_manifest
# On the device (run tool, carry ["build-s8-gemmtiles"]):
#   bash build-s8-gemmtiles/s8-gemmtiles.sh build-s8-gemmtiles explore|smallm|final
# Back in $OUT: summary.txt (PASS/FAIL per check, then tables), *.csv, logs.tar.gz.
# Success: every check line starts with PASS; "0 failed"; "ERROR SUMMARY: 0 errors".
set -u
D=${1:-build-s8-gemmtiles}
MODE=${2:-final}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s8-gemmtiles 150
ws_cuda_env
TILES="0 1 2 3 4"
SIX="--shape 4096x4096x4096 --shape 8192x8192x8192 --shape 256x4096x4096 --shape 1x4096x4096 --shape 4096x4096x1024 --shape 1000x4096x1000"
LOSERS="--shape 1024x1024x1024 --shape 1x4096x4096 --shape 128x4096x4096 --shape 256x4096x4096 --shape 128x4096x14336
 --shape 512x4096x4096 --shape 128x14336x4096 --shape 128x28672x8192 --shape 1024x1024x16384 --shape 8192x8192x512
 --shape 2048x2048x2048 --shape 1000x4096x1000 --shape 512x4096x14336 --shape 512x14336x4096 --shape 4096x4096x1024
 --shape 4096x4096x256 --shape 2048x4096x4096 --shape 4096x4096x4096"
SWEEP() {
    local sw=""
    for x in 1024 2048 4096 6144 8192 12288 16384; do sw="$sw --shape ${x}x${x}x${x}"; done
    for m in 128 512 2048 8192; do
        for nk in 4096x4096 14336x4096 4096x14336 28672x8192; do sw="$sw --shape ${m}x${nk}"; done
    done
    sw="$sw --shape 4096x4096x256 --shape 8192x8192x512 --shape 4096x4096x1024 --shape 1024x1024x16384 --shape 2048x2048x32768"
    sw="$sw --shape 4000x4000x4000 --shape 8191x8193x4104 --shape 1000x4096x1000 --shape 1x4096x4096 --shape 256x4096x4096"
    echo "$sw"
}
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u); mode $MODE"
SMALLM="--shape 1x4096x4096 --shape 8x4096x4096 --shape 32x4096x4096 --shape 64x4096x4096 --shape 1x14336x4096
 --shape 16x4096x14336"
if [ "$MODE" = smallm ]; then  # M < 128: every configuration and the rule, cold; correctness of the rule's picks
    step smallm-correct 30 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk $SMALLM --no-partial
    step smallm 120 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung streamk@0 --rung streamk@1 --rung streamk@2 \
        --rung streamk@3 --rung streamk@4 --rung streamk $SMALLM --no-traced --target-ms 20 --csv "$OUT/smallm.csv"
elif [ "$MODE" = explore ]; then
    for i in $TILES; do
        WARPSTAGE_STREAMK_TILE=$i step "correct-t$i" 25 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk --quick
        note "    t$i stream-K phases: $(grep -c "stream-K phases" "$L/correct-t$i.log") lines, $(grep -c "stream-K phases.*) split" "$L/correct-t$i.log") split"
    done
    for i in 1 2 4; do
        WARPSTAGE_STREAMK_TILE=$i step "memcheck-t$i" 20 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck \
            --error-exitcode 3 --print-limit 20 "$D/ladder_check" --rung streamk --shape 300x1000x1032
    done
    step explore 200 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung streamk@0 --rung streamk@1 --rung streamk@2 \
        --rung streamk@3 --rung streamk@4 --rung streamk $LOSERS --no-traced --target-ms 10 --rest-ms 100 \
        --csv "$OUT/explore.csv"
else
    step correctness 60 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk --rung pingpong
    note "    streamk traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=streamk.*differ" "$L/correctness.log")"
    for i in $TILES; do
        WARPSTAGE_STREAMK_TILE=$i step "trace-t$i" 15 "" "$D/gpu_ladder_trace" --rung streamk --shape 300x1000x1032
        WARPSTAGE_STREAMK_TILE=$i step "memcheck-t$i" 15 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck \
            --error-exitcode 3 --print-limit 20 "$D/ladder_check" --rung streamk --shape 300x1000x1032
    done
    step sass 30 "^OK: 0 failure" python3 "$D/check_sass.py" --manifest "$D/ladder_manifest" \
        --archive "$D/libwarpstage_ladder.a" --tool auto
    step named-cold 40 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung pingpong --rung streamk@0 --rung streamk $SIX \
        --no-traced --target-ms 20 --csv "$OUT/named-cold.csv"
    step named-hot 40 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung pingpong --rung streamk@0 --rung streamk $SIX \
        --no-traced --target-ms 20 --hot --heat-ms 200 --csv "$OUT/named-hot.csv"
    step sweep-cold 200 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung streamk $(SWEEP) --no-traced \
        --target-ms 20 --csv "$OUT/sweep-cold.csv"
fi
# Tables (for docs/benchmarks.md): per CSV, % of cuBLAS per variant (cuBLAS: the faster of its two timings), the
# geometric mean and the minimum; the explore CSV also gets the rule's pick against the fastest configuration.
python3 - "$OUT" >>"$S" 2>&1 <<'PY'
import csv, math, os, sys, collections
out = sys.argv[1]
for name in ("explore.csv", "smallm.csv", "named-cold.csv", "named-hot.csv", "sweep-cold.csv"):
    p = os.path.join(out, name)
    if not os.path.exists(p):
        continue
    d = collections.defaultdict(dict)
    for r in csv.DictReader(open(p)):
        if r["traced"] == "0":
            d[r["shape"]][r["variant"]] = r
    variants = []
    for m in d.values():
        for v in m:
            if not v.startswith("cublas") and v not in variants:
                variants.append(v)
    print(f"\n### {name}\n")
    print("| shape | cuBLAS ms | " + " | ".join(variants) + " |")
    print("|---|---:|" + "---:|" * len(variants))
    pct = collections.defaultdict(list)
    for s, m in d.items():
        cb = min(float(m[v]["median_ms"]) for v in ("cublas", "cublas_after") if v in m)
        cells = []
        for v in variants:
            r = m.get(v)
            if not r or not r["median_ms"]:
                cells.append("n/a")
                continue
            x = float(r["median_ms"])
            ok = r["correct"] == "1"
            cells.append(f"{x:.4f} ({100 * cb / x:.1f} %)" + ("" if ok else " **WRONG**"))
            if ok:
                pct[v].append((100 * cb / x, s))
        print(f"| {s} | {cb:.4f} | " + " | ".join(cells) + " |")
    print()
    for v, xs in pct.items():
        g = math.exp(sum(math.log(x) for x, _ in xs) / len(xs))
        print(f"- {v}: geometric mean {g:.1f} % of cuBLAS over {len(xs)} shapes, minimum {min(xs)[0]:.1f} % ({min(xs)[1]})")
PY
note "total: $((SECONDS - T0))s"
tar -czf "$OUT/logs.tar.gz" -C "$L" . 2>/dev/null
echo "=== summary"
cat "$S"
