#!/usr/bin/env bash
# Session 11, s11-skinny (issue 14): stream-K on the small and skinny shapes. New since session 9: a lone wave can be
# split into equal pieces per tile with the fixup spread over the tile's pieces (split-K, streamk_schedule.h SplitMode;
# WARPSTAGE_STREAMK_SPLIT=streamk|splitk forces it, ladder_bench variants `/streamk`, `/splitk`), and an L2 read-ahead
# of B (WARPSTAGE_STREAMK_PREFETCH=W k-steps, variants `+pW`). One device call per mode, every step under `timeout`
# within BUDGET seconds.
#   explore: correctness of split-K with each configuration forced (and the read-ahead on), memcheck on two partial-tile
#            shapes; per-warp traces of the rule's launches at 1x4096x4096, 256x4096x4096, 128x4096x4096, 1024^3 (old
#            stream-K) and 256x4096x4096 split-K, summarized by streamk_trace_phases.py (where the time goes); then
#            ladder_bench on the ten shapes below 90 % of cuBLAS: the old rule, split-K with each configuration forced,
#            the read-ahead, cold, vs cuBLAS.
#   final:   the rule: gpu_ladder_correctness --rung streamk --rung pingpong (full) + the small shapes; gpu_ladder_trace
#            with each configuration forced at a partial-tile shape, as the rule plans it and split-K forced; memcheck
#            (two auto, two split-K forced); a ladder_check built with the split-K sum broken by hand must fail
#            (ladder_check_mutant, if carried); check_sass; session 9's rule against this one at the ten shapes below
#            90 % (one process, cold); the 33-shape sweep cold, untraced and traced, vs cuBLAS;
#            the six named shapes hot.
#   verify:  (after the final call: the rule's split-K latency term) correctness --quick and of the split shapes,
#            session 9's rule beside this one at the ten shapes.
# The explore mode ran at commit 0629cb3, where the `+pW` variants (the L2 read-ahead of B) existed; it was removed after.
# Build HERE (no GPU; Release, no Qt: build/kchecks), then into the ignored folder of the session's checkout:
#   ninja -C build/kchecks -j1 ladder_bench gpu_ladder_correctness gpu_ladder_trace ladder_check ladder_manifest
#   D=/work/main/build-skinny; rm -rf $D; mkdir -p $D/b
#   cp build/kchecks/tests/kernels/{gpu_ladder_correctness,gpu_ladder_trace,ladder_check,ladder_manifest} \
#      build/kchecks/tests/bench/ladder_bench build/kchecks/kernels/src/libwarpstage_ladder.a $D/b/
#   strip $D/b/gpu_* $D/b/ladder_check $D/b/ladder_bench $D/b/ladder_manifest
#   tar -cJf $D/bins.tar.xz -C $D/b . && rm -r $D/b
#   cp tests/kernels/check_sass.py scripts/streamk_trace_phases.py scripts/device/s11-skinny.sh scripts/device/lib.sh $D/
# On the device (run tool, carry ["build-skinny"]):
#   tar -xJf build-skinny/bins.tar.xz -C build-skinny && BUDGET=100 timeout 125 bash build-skinny/s11-skinny.sh build-skinny explore
#   tar -xJf build-skinny/bins.tar.xz -C build-skinny && BUDGET=170 timeout 195 bash build-skinny/s11-skinny.sh build-skinny final
#   tar -xJf build-skinny/bins.tar.xz -C build-skinny && BUDGET=45 timeout 60 bash build-skinny/s11-skinny.sh build-skinny verify
#   (verify needs only gpu_ladder_correctness and ladder_bench beside the script and lib.sh)
# Back in $OUT: summary.txt (PASS/FAIL per check, the trace phases, then tables), *.csv, logs.tar.gz, traces.tar.xz.
# Success: every check line starts with PASS; "0 failed"; "ERROR SUMMARY: 0 errors".
set -u
D=${1:-build-skinny}
MODE=${2:-final}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s11-skinny 120
ws_cuda_env
TILES="0 1 2 3 4 5 6"
SIX="--shape 4096x4096x4096 --shape 8192x8192x8192 --shape 256x4096x4096 --shape 1x4096x4096 --shape 4096x4096x1024 --shape 1000x4096x1000"
# the ten shapes below 90 % of cuBLAS in session 9's final sweep
TEN="--shape 1x4096x4096 --shape 128x4096x4096 --shape 1024x1024x1024 --shape 512x4096x4096 --shape 256x4096x4096
 --shape 1024x1024x16384 --shape 128x4096x14336 --shape 1000x4096x1000 --shape 512x4096x14336 --shape 8192x8192x512"
# lone waves that split-K cuts (M = 1 and small M, partial tiles along M, N and K)
SPLITSHAPES="--shape 1x4096x4096 --shape 256x4096x4096 --shape 300x1000x1032 --shape 40x1000x4104 --shape 129x777x2056
 --shape 1024x1024x1024"
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
if [ "$MODE" = explore ]; then
    V="--rung streamk/streamk"
    for i in $TILES; do V="$V --rung streamk@$i/splitk"; done
    V="$V --rung streamk/streamk+p8 --rung streamk/streamk+p1000 --rung streamk@4/splitk+p1000 --rung streamk@2/splitk+p1000"
    step explore 60 "Kernel ladder vs cuBLAS" "$D/ladder_bench" $V $TEN --no-traced --target-ms 10 --rest-ms 50 \
        --csv "$OUT/explore.csv"
    mkdir -p /tmp/s11-traces
    for s in 1x4096x4096 256x4096x4096 128x4096x4096 1024x1024x1024; do
        WARPSTAGE_STREAMK_SPLIT=streamk step "trace-$s" 10 "" "$D/gpu_ladder_trace" --rung streamk --shape "$s" \
            --dump "/tmp/s11-traces/streamk-$s-"
    done
    WARPSTAGE_STREAMK_SPLIT=splitk step "trace-splitk-256x4096x4096" 10 "" "$D/gpu_ladder_trace" --rung streamk \
        --shape 256x4096x4096 --dump "/tmp/s11-traces/splitk-256x4096x4096-"
    WARPSTAGE_STREAMK_SPLIT=splitk WARPSTAGE_STREAMK_TILE=4 step "trace-splitk-t4-1x4096x4096" 10 "" "$D/gpu_ladder_trace" \
        --rung streamk --shape 1x4096x4096 --dump "/tmp/s11-traces/splitk-t4-1x4096x4096-"
    grep -h "geometry\|trace buffer" "$L"/trace-*.log | tee -a "$S" >/dev/null
    python3 "$D/streamk_trace_phases.py" /tmp/s11-traces/*.bin >>"$S" 2>&1
    tar -cJf "$OUT/traces.tar.xz" -C /tmp/s11-traces . 2>/dev/null
    WARPSTAGE_STREAMK_SPLIT=splitk WARPSTAGE_STREAMK_PREFETCH=16 step correct-splitk-rule 20 " 0 failed" \
        "$D/gpu_ladder_correctness" --rung streamk --quick
    for i in $TILES; do
        WARPSTAGE_STREAMK_TILE=$i WARPSTAGE_STREAMK_SPLIT=splitk WARPSTAGE_STREAMK_PREFETCH=16 step "correct-splitk-t$i" 12 \
            " 0 failed" "$D/gpu_ladder_correctness" --rung streamk $SPLITSHAPES --no-partial
    done
    for s in "2 300x1000x1032" "4 40x1000x4104" "0 300x1000x1032"; do
        set -- $s
        WARPSTAGE_STREAMK_TILE=$1 WARPSTAGE_STREAMK_SPLIT=splitk WARPSTAGE_STREAMK_PREFETCH=16 step "memcheck-splitk-t$1" 12 \
            "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
            "$D/ladder_check" --rung streamk --shape "$2"
    done
elif [ "$MODE" = verify ]; then
    # the rule with the split-K latency term (256x4096x4096 back to 128x64 blocks data-parallel): correctness of the
    # rule's plans and session 9's rule (/streamk) beside it at the ten shapes, one process, cold
    step verify-correct 15 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk --quick
    step verify-small 10 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk $SPLITSHAPES --no-partial
    step ten-cold 25 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung streamk/streamk --rung streamk $TEN \
        --no-traced --target-ms 10 --csv "$OUT/ten-cold.csv"
else
    step correctness 45 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk --rung pingpong
    note "    streamk traced/untraced bit differences (WARN lines): $(grep -c "WARN rung=streamk.*differ" "$L/correctness.log")"
    step correct-small 12 " 0 failed" "$D/gpu_ladder_correctness" --rung streamk $SPLITSHAPES --no-partial
    for i in $TILES; do  # the rule's plan (auto) and split-K forced, traced, at a partial-tile shape
        WARPSTAGE_STREAMK_TILE=$i step "trace-t$i" 8 "" "$D/gpu_ladder_trace" --rung streamk --shape 300x1000x1032
        WARPSTAGE_STREAMK_TILE=$i WARPSTAGE_STREAMK_SPLIT=splitk step "trace-splitk-t$i" 8 "" "$D/gpu_ladder_trace" \
            --rung streamk --shape 300x1000x1032
    done
    for s in "2 300x1000x1032 auto" "4 40x1000x4104 auto" "3 300x1000x1032 splitk" "5 40x1000x4104 splitk"; do
        set -- $s
        WARPSTAGE_STREAMK_TILE=$1 WARPSTAGE_STREAMK_SPLIT=$3 step "memcheck-t$1-$3" 10 "ERROR SUMMARY: 0 errors" \
            compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 "$D/ladder_check" --rung streamk --shape "$2"
    done
    # the split-K slice sum broken by hand (SkFixup::splitK writes only the float4s below its own slice): must FAIL
    [ -x "$D/ladder_check_mutant" ] && WARPSTAGE_STREAMK_TILE=2 WARPSTAGE_STREAMK_SPLIT=splitk step mutant-caught 10 \
        "rel_err" bash -c '! "$0" --rung streamk --shape 256x4096x4096' "$D/ladder_check_mutant"
    step sass 25 "^OK: 0 failure" python3 "$D/check_sass.py" --manifest "$D/ladder_manifest" \
        --archive "$D/libwarpstage_ladder.a" --tool auto
    # before/after in one process: session 9's rule (stream-K mode: /streamk) and this rule, at the ten shapes
    step ten-cold 25 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung streamk/streamk --rung streamk $TEN \
        --no-traced --target-ms 10 --csv "$OUT/ten-cold.csv"
    step sweep-cold 90 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung streamk $(SWEEP) \
        --target-ms 10 --csv "$OUT/sweep-cold.csv"
    step named-hot 25 "Kernel ladder vs cuBLAS" "$D/ladder_bench" --rung pingpong --rung streamk $SIX \
        --no-traced --target-ms 20 --hot --heat-ms 200 --csv "$OUT/named-hot.csv"
fi
# Tables: per CSV, % of cuBLAS per variant (cuBLAS: the faster of its two timings), the geometric mean and the
# minimum, and the tracing cost where traced rows exist.
python3 - "$OUT" >>"$S" 2>&1 <<'PY'
import csv, math, os, sys, collections
out = sys.argv[1]
for name in ("explore.csv", "ten-cold.csv", "sweep-cold.csv", "named-hot.csv"):
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
    tc = []
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
