#!/usr/bin/env bash
# Session 8, s8-rungs (issue 14) in ONE device call, <= 150 s of wall time (every step under `timeout`, each limited
# to what is left of the budget): rungs 2-5 (tma_sync, multistage, warp_specialized, cooperative) now built from the
# shared pieces (common/smem_plan.cuh, common/ring.cuh, common/mma.cuh, tma_rung_launch.cuh); the sync rung (1)
# computes partial tiles.
#   1. gpu_ladder_correctness --quick, every rung (7, streamk included): the fp64 bound, 4096^3, the 12 partial-tile
#      shapes and the refusals, traced and untraced, against cuBLAS; counts the WARN lines "traced and untraced
#      outputs differ" (must be 0);
#   2. gpu_ladder_trace, rungs 1-5, at 1000x1000x1032 (partial tiles, partial last k-step): traces decode
#      sanely within traceGeometry's sizing (event counts <= capacity), overflow reported without writing outside;
#   3. check_sass.py on the branch's archive with the device's cuobjdump (HGMMA, UTMALDG, no trace code untraced);
#   4. compute-sanitizer memcheck, one launch per rung 1-5 at 300x1000x1032 (partial tiles, partial last k-step),
#      untraced (a naive fp32 reference kernel: the sanitizer looks at the rung);
#   5. ladder_bench rungs 1-5 at 4096^3 and 8192^3, cold (idle before each batch), untraced and traced: main's build
#      (bench-main/ladder_bench) then the branch's, in the same call; a table branch / main per rung.
#
# Build HERE (no GPU needed; Release, no Qt), from the branch and from main (the side-by-side reference):
#   cmake -S . -B build/kchecks -G Ninja -DWARPSTAGE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build/kchecks --target gpu_ladder_correctness gpu_ladder_trace ladder_check ladder_manifest ladder_bench
#   (main: the same into build/kchecks-base from a checkout of main, target ladder_bench)
#   D=/work/main/build-s8-rungs; mkdir -p $D/bench-main
#   cp build/kchecks/tests/kernels/{gpu_ladder_correctness,gpu_ladder_trace,ladder_check,ladder_manifest} \
#      build/kchecks/tests/bench/ladder_bench build/kchecks/kernels/src/libwarpstage_ladder.a \
#      tests/kernels/check_sass.py scripts/device/s8-rungs.sh $D/
#   cp build/kchecks-base/tests/bench/ladder_bench $D/bench-main/; strip $D/{gpu_*,ladder_check,ladder_manifest,ladder_bench} $D/bench-main/ladder_bench
#   (cd $D && tar -cJf s8-rungs.tar.xz gpu_* ladder_check ladder_manifest ladder_bench libwarpstage_ladder.a \
#       check_sass.py bench-main && rm -rf gpu_* ladder_check ladder_manifest ladder_bench *.a check_sass.py bench-main)
#   (22 MB of stripped files -> 1.3 MB packed; the script unpacks it under /tmp)
# On the device (run tool, carry ["build-s8-rungs"]):
#   bash build-s8-rungs/s8-rungs.sh build-s8-rungs
# Back in $OUT (4 files): summary.txt (PASS/FAIL per check, then the bench table), bench-main.csv, bench-branch.csv,
# logs.tar.gz (every step's full log).
# Success: every check line starts with PASS; "differ: 0"; "ERROR SUMMARY: 0 errors" for each memcheck; the bench
# table's branch/main ratios within noise (about 0.98-1.02 untraced for rungs 2-5).
set -u
D=${1:-build-s8-rungs}
if [ -f "$D/s8-rungs.tar.xz" ]; then  # the packed folder: unpack next to the logs
    X=$(mktemp -d /tmp/s8-rungs-bin.XXXX)
    tar -xJf "$D/s8-rungs.tar.xz" -C "$X" || { echo "FAIL unpack $D/s8-rungs.tar.xz"; exit 1; }
    D=$X
fi
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s8-rungs 145  # seconds for all steps (the call's limit: 150; the table and the tarball take ~2 s)
ws_cuda_env

note "env: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1); $(date -u)"
# 1. correctness, every rung, quick set with the partial tiles
step correctness 60 " 0 failed" "$D/gpu_ladder_correctness" --quick
note "    traced/untraced output differences (WARN ... differ): $(grep -c "WARN .*differ" "$L/correctness.log")"
note "    sync on partial tiles: $(grep -cE "^PASS rung=sync shape=(4000x4000x4000|8191x8193x4104|1x1x8|129x257x72|333x4104x8) traced=" "$L/correctness.log") PASS lines (want 10: 5 shapes x traced 0/1)"
grep -h "^FAIL" "$L/correctness.log" 2>/dev/null | head -10 | tee -a "$S"
# event counts per warp against traceGeometry's capacity (no overflow allowed there), rungs 1-5 at 4096^3
grep -hE "^PASS rung=(sync|tma_sync|multistage|warp_specialized|cooperative) shape=4096x4096x4096 trace decodes" \
    "$L/correctness.log" 2>/dev/null | sed 's/^/    /' | tee -a "$S"
# 2. trace buffers and event counts against traceGeometry, rungs 1-5
TR="--rung sync --rung tma_sync --rung multistage --rung warp_specialized --rung cooperative"
step trace-partial 15 " 0 failed" "$D/gpu_ladder_trace" $TR --shape 1000x1000x1032
# 3. SASS of the branch's archive (device cuobjdump)
step sass 30 "^OK: 0 failure" python3 "$D/check_sass.py" --manifest "$D/ladder_manifest" \
    --archive "$D/libwarpstage_ladder.a" --tool auto
# 4. memcheck at one partial-tile shape, each ported rung and sync
for r in sync tma_sync multistage warp_specialized cooperative; do
    step "memcheck-$r" 8 "ERROR SUMMARY: 0 errors" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 10 \
        "$D/ladder_check" --rung "$r" --shape 300x1000x1032
done
# 5. ladder_bench rungs 1-5, main then branch, cold, untraced + traced
BR="--rung sync --rung tma_sync --rung multistage --rung warp_specialized --rung cooperative"
BS="--shape 4096x4096x4096 --shape 8192x8192x8192"
half=$(( ($(left) - 4) / 2 ))
step bench-main "$half" "Kernel ladder vs cuBLAS" "$D/bench-main/ladder_bench" $BR $BS --target-ms 20 --rest-ms 100 \
    --min-iters 3 --max-iters 40 --csv "$OUT/bench-main.csv"
step bench-branch $(( $(left) - 2 )) "Kernel ladder vs cuBLAS" "$D/ladder_bench" $BR $BS --target-ms 20 --rest-ms 100 \
    --min-iters 3 --max-iters 40 --csv "$OUT/bench-branch.csv"

python3 - "$OUT" >>"$S" 2>&1 <<'PY'
import csv, os, sys
out = sys.argv[1]
def rows(name):
    p = os.path.join(out, name)
    return list(csv.DictReader(open(p))) if os.path.exists(p) else []
m, b = rows("bench-main.csv"), rows("bench-branch.csv")
key = lambda r: (r["shape"], r["variant"], r["traced"])
mm = {key(r): r for r in m}
print("\n### ladder_bench, rungs 1-5, cold: main vs s8-rungs (median ms, same call)\n")
print("| shape | rung | traced | main ms | branch ms | branch / main | correct (main, branch) |")
print("|---|---|---:|---:|---:|---:|---|")
for r in b:
    if r["variant"].startswith("cublas"):
        continue
    x = mm.get(key(r))
    if not r.get("median_ms") or not x or not x.get("median_ms"):
        print(f"| {r['shape']} | {r['variant']} | {r['traced']} | n/a | {r.get('median_ms', '')} | n/a | |")
        continue
    a, c = float(x["median_ms"]), float(r["median_ms"])
    print(f"| {r['shape'].replace('x', '×')} | {r['variant']} | {r['traced']} | {a:.4f} | {c:.4f} | {c / a:.3f} | "
          f"{x.get('correct', '?')}, {r.get('correct', '?')} |")
cb = [r for r in b if r["variant"].startswith("cublas")]
for r in cb:
    print(f"- cuBLAS ({r['variant']}) {r['shape']}: {r['median_ms']} ms (branch run)")
PY
note "total: $((SECONDS - T0))s"
tar -czf "$OUT/logs.tar.gz" -C "$L" . 2>/dev/null
echo "=== summary"
cat "$S"
