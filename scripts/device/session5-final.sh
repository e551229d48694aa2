#!/usr/bin/env bash
# Device call (session 5): the merged tree on schema 5, in one call. Carried build-dev/: stripped warpstage-record,
# libwarpstage-inject.so, warpstage-sink-dump, gpu_recorder, gpu_record_program, gpu_record_user_kernel, lce;
# unstripped ws_testapp, ws_rowsum (line info). Steps: the three recorder GPU tests (now writing schema 5 with the
# ladder's sources built in); scripts/device/selfcontained-check.sh (the recorder run from /tmp with kernels/src
# hidden); the lce rungs 3 and 4 recorded as a user's program with --kernels (per-warp timelines of the second
# family) and their tracing cost. Everything comes back in $OUT/final.tar.gz.
set -u
REAL_OUT=${OUT:-/tmp/ws-out}; OUT=/tmp/s5final; rm -rf "$OUT"; mkdir -p "$OUT" "$REAL_OUT"
B=build-dev; BUILD=/work/main/build/default
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $BUILD/app/record $BUILD/tests/recorder
for f in warpstage-record libwarpstage-inject.so warpstage-sink-dump; do ln -sf $PWD/$B/$f $BUILD/app/record/$f; done
for f in ws_testapp ws_rowsum; do ln -sf $PWD/$B/$f $BUILD/tests/recorder/$f; done
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
( export WARPSTAGE_REQUIRE_GPU=1 WARPSTAGE_SOURCE_DIR=$PWD WARPSTAGE_INJECT_LIB=$PWD/$B/libwarpstage-inject.so
  for t in ${TESTS-gpu_recorder gpu_record_program gpu_record_user_kernel}; do
    timeout 200 $B/$t > $OUT/$t.log 2>&1; echo "$t rc=$?"; grep -E "FAIL|PASS|passed|stalls:" $OUT/$t.log | tail -6
  done )
echo "== selfcontained-check"
timeout 200 bash scripts/device/selfcontained-check.sh > $OUT/selfcontained.log 2>&1; echo "selfcontained rc=$?"
grep -E "stage mapping|mapped|sha256|PASS|FAIL|rc=" $OUT/selfcontained.log | tail -20
echo "== lce rungs 3-4 recorded (--kernels lceEpilogueWarp|lcePersistent|lceUserFirst)"
( cd $B && if ldd ./lce | grep -q "not found"; then
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
      export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}; done; fi
  for r in 3 4; do
    WARPSTAGE_INJECT_LIB=$PWD/libwarpstage-inject.so timeout 120 ./warpstage-record --no-stalls --kernels 'lce(EpilogueWarp|Persistent|UserFirst)' \
      --launch-range 0:0 --trace-events 8192 --source-dir /work/main/build/default -o /tmp/lce-rung$r.wstrace -- ./lce --rung $r --check --time --warmup 2 --iters 5 > $OUT/lce-rec$r.log 2>&1
    echo "rung $r record rc=$?"; grep -E "PASS|FAIL|TIME" $OUT/lce-rec$r.log
    python3 - /tmp/lce-rung$r.wstrace <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); q = lambda s: c.execute(s).fetchall()
print("  schema", q("pragma user_version")[0][0], "runs", q("select id, kind, status from runs"))
print("  traced launches", q("select count(*) from kernels where traced"), "of", q("select count(*) from kernels"))
n = q("select notes from runs")[0][0] or ""
i = n.find("traced"); print("  notes:", n[i:i+700]); print("  bytes", __import__("os").path.getsize(sys.argv[1]))
PY
  done
  echo "-- tracing cost (untraced timing of the same binary, not recording)"
  for r in 3 4; do timeout 60 ./lce --rung $r --time --warmup 10 --iters 50 | grep TIME; done ) 2>&1 | tee $OUT/lce.log
ls -la $OUT; tar czf $REAL_OUT/final.tar.gz -C /tmp s5final
echo "done $(date -u +%FT%TZ)"
