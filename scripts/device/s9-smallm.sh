#!/usr/bin/env bash
# Session 9, s9-smallm (issue 14): stream-K on small and skinny shapes. New since session 8: 64-row blocks
# (kTiles 5-6: both consumer warpgroups on the same 64 A rows, each on half of B's columns), A's box shrunk to M's
# rows when one CTA block covers M (CL = 1), partials written/read 16 bytes at a time and only for rows < M.
# One device call per mode, every step under `timeout` within BUDGET seconds.
#   explore: every configuration forced (WARPSTAGE_STREAMK_TILE=0..6) through gpu_ladder_correctness --quick plus
#            the small-M shapes; memcheck on partial tiles (a split, M < BM); then ladder_bench --rung streamk@0..6
#            --rung streamk (the rule) on the small/skinny shapes + 1024^3 + 4096^3, cold, vs cuBLAS.
#   final:   the rule: gpu_ladder_correctness --rung streamk --rung pingpong (full), gpu_ladder_trace and memcheck
#            for every configuration; check_sass (pingpong's PpTile unchanged); K from 64 up (the fixed cost per
#            launch); the six named shapes cold; the 33-shape sweep cold, untraced and traced (tracing cost) vs cuBLAS; the six named shapes hot.
#   verify:  (lead, <= 60 s) the rule's correctness on the small shapes + the six named shapes cold. Needs only
#            gpu_ladder_correctness and ladder_bench beside the script (and lib.sh), unpacked or plain:
#              BUDGET=50 timeout 60 bash build-X/s9-smallm.sh build-X verify
#            Success: "PASS verify-correct" with "0 failed", "PASS verify-named", and in its table streamk near
#            21 us at 1x4096x4096 (~70 % of cuBLAS), >= 97 % at 4096^3 and 8192^3, and 1x4096x64 well under the
#            11.4 us it took as 16 CTAs of 4 tiles (session 9's final call; ~7 us expected, as 1024x1024x64).
# Build HERE (no GPU needed; Release, no Qt), then copy into the ignored folder of /work/main:
#   cmake -S . -B build/kchecks -G Ninja -DWARPSTAGE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build/kchecks --target warpstage_ladder gpu_ladder_correctness gpu_ladder_trace ladder_check \
#       ladder_bench ladder_manifest
#   D=/work/main/build-smallm; mkdir -p $D/b
#   cp build/kchecks/tests/kernels/{gpu_ladder_correctness,gpu_ladder_trace,ladder_check,ladder_manifest} \
#      build/kchecks/tests/bench/ladder_bench build/kchecks/kernels/src/libwarpstage_ladder.a $D/b/
#   strip $D/b/gpu_* $D/b/ladder_check $D/b/ladder_bench $D/b/ladder_manifest
#   tar -cJf $D/bins.tar.xz -C $D/b . && rm -r $D/b
#   cp tests/kernels/check_sass.py scripts/device/s9-smallm.sh scripts/device/lib.sh $D/
# On the device (run tool, carry ["build-smallm"]):
#   tar -xJf build-smallm/bins.tar.xz -C build-smallm && bash build-smallm/s9-smallm.sh build-smallm explore|final
# Back in $OUT: summary.txt (PASS/FAIL per check, then tables), *.csv, logs.tar.gz.
# Success: every check line starts with PASS; "0 failed"; "ERROR SUMMARY: 0 errors".
set -u
D=${1:-build-smallm}
MODE=${2:-final}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s9-smallm 150
ws_cuda_env
TILES="0 1 2 3 4 5 6"
SIX="--shape 4096x4096x4096 --shape 8192x8192x8192 --shape 256x4096x4096 --shape 1x4096x4096 --shape 4096x4096x1024 --shape 1000x4096x1000"
SMALLM="--shape 1x4096x4096 --shape 8x4096x4096 --shape 32x4096x4096 --shape 64x4096x4096 --shape 1x14336x4096
 --shape 16x4096x14336 --shape 40x1000x4104"
SKINNY="--shape 128x4096x4096 --shape 256x4096x4096 --shape 512x4096x4096 --shape 128x4096x14336 --shape 128x14336x4096
 --shape 128x28672x8192 --shape 512x14336x4096 --shape 1024x1024x1024 --shape 1000x4096x1000 --shape 4096x4096x4096"
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
note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u); mode $MODE"
if [ "$MODE" = explore ]; then
    for i in $TILES; do
        WARPSTAGE_STREAMK_TILE=$i step "correct-t$i" 20 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk --quick
    done
    for i in 2 5 6; do
        WARPSTAGE_STREAMK_TILE=$i step "correct-small-t$i" 20 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk \
            $SMALLM --no-partial
    done
    for i in 2 5; do
        WARPSTAGE_STREAMK_TILE=$i step "memcheck-small-t$i" 20 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck \
            --error-exitcode 3 --print-limit 20 "$D/ladder_check" --rung streamk --shape 40x1000x4104
    done
    step explore 150 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung streamk@0 --rung streamk@2 --rung streamk@3 \
        --rung streamk@4 --rung streamk@5 --rung streamk@6 --rung streamk $SMALLM $SKINNY --no-traced --target-ms 10 \
        --rest-ms 100 --csv "$OUT/explore.csv"
elif [ "$MODE" = verify ]; then
    # + two lone waves of tiles shorter than 4 k-steps (K = 64, 128: all data-parallel, session 9's last plan change)
    step verify-correct 25 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk $SMALLM --shape 1x4096x64 \
        --shape 40x1000x128 --no-partial
    step verify-named 30 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung streamk $SIX --shape 1x4096x64 \
        --no-traced --target-ms 10 --csv "$OUT/named-cold.csv"
else
    step correctness 50 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk --rung pingpong
    note "    streamk traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=streamk.*differ" "$L/correctness.log")"
    step correct-small 15 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk $SMALLM --no-partial
    for i in $TILES; do
        WARPSTAGE_STREAMK_TILE=$i step "trace-t$i" 10 "" "$D/gpu_ladder_trace" --rung streamk --shape 300x1000x1032
        WARPSTAGE_STREAMK_TILE=$i step "memcheck-t$i" 10 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck \
            --error-exitcode 3 --print-limit 20 "$D/ladder_check" --rung streamk --shape 300x1000x1032
    done
    for i in 4 5; do  # A's box shrunk to 40 rows, partials only for rows < M
        WARPSTAGE_STREAMK_TILE=$i step "trace-small-t$i" 10 "" "$D/gpu_ladder_trace" --rung streamk --shape 40x1000x4104
        WARPSTAGE_STREAMK_TILE=$i step "memcheck-small-t$i" 10 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck \
            --error-exitcode 3 --print-limit 20 "$D/ladder_check" --rung streamk --shape 40x1000x4104
    done
    step sass 30 "^OK: 0 failure" python3 "$D/check_sass.py" --manifest "$D/ladder_manifest" \
        --archive "$D/libwarpstage_ladder.a" --tool auto
    # the fixed cost per launch (K from 64 up), ours and cuBLAS's (session 9's final call also ran these with the
    # tensor maps cached per buffer and shape: no difference, the cache was left out)
    KS="--shape 1x4096x64 --shape 1x4096x1024 --shape 1x4096x4096 --shape 1x4096x16384 --shape 1024x1024x64
 --shape 1024x1024x1024 --shape 128x4096x4096 --shape 256x4096x4096"
    step kslope 25 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung streamk $KS --no-traced --target-ms 10 \
        --csv "$OUT/kslope.csv"
    step named-cold 30 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung pingpong --rung streamk $SIX \
        --no-traced --target-ms 20 --csv "$OUT/named-cold.csv"
    step sweep-cold 100 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung streamk $(SWEEP) \
        --target-ms 10 --csv "$OUT/sweep-cold.csv"
    step named-hot 30 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung pingpong --rung streamk $SIX \
        --no-traced --target-ms 20 --hot --heat-ms 200 --csv "$OUT/named-hot.csv"
fi
# Tables (for docs/benchmarks.md): per CSV, % of cuBLAS per variant (cuBLAS: the faster of its two timings), the
# geometric mean and the minimum; the explore CSV also gets the rule's pick against the fastest configuration.
python3 - "$OUT" >>"$S" 2>&1 <<'PY'
import csv, math, os, sys, collections
out = sys.argv[1]
for name in ("explore.csv", "kslope.csv", "named-cold.csv", "named-hot.csv", "sweep-cold.csv"):
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
    tc = []  # tracing cost: traced / untraced median of the same variant and shape
    for r in csv.DictReader(open(p)):
        if r["traced"] == "1" and r["median_ms"] and not r["variant"].startswith("cublas"):
            u = d[r["shape"]].get(r["variant"])
            if u and u["median_ms"]:
                tc.append((100 * (float(r["median_ms"]) / float(u["median_ms"]) - 1), r["shape"], r["variant"]))
    if tc:
        print("\n| shape | variant | tracing cost |\n|---|---|---:|")
        for c, s_, v in tc:
            print(f"| {s_} | {v} | {c:+.2f} % |")
        g = math.exp(sum(math.log(1 + c / 100) for c, _, _ in tc) / len(tc)) * 100 - 100
        print(f"- tracing cost: geometric mean {g:+.2f} %, maximum {max(tc)[0]:+.2f} % ({max(tc)[1]}) over {len(tc)}")
PY
note "total: $((SECONDS - T0))s"
tar -czf "$OUT/logs.tar.gz" -C "$L" . 2>/dev/null
echo "=== summary"
cat "$S"
