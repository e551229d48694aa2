#!/usr/bin/env bash
# Device call for the install (issue 10): the INSTALLED recorder, moved to another folder and run from a folder that
# is not the source tree, records a CUDA program: it finds its injection library relative to itself (bin/../lib/
# warpstage), with no WARPSTAGE_INJECT_LIB and no build tree. Made here (no GPU needed), carried as build-pkg/:
#
#   rm -rf build-pkg && cmake --install build/default --component recorder --prefix build-pkg --strip \
#     && cmake --install build/default --component dev --prefix build-pkg \
#     && mkdir -p build-pkg/test && cp build/default/tests/recorder/ws_testapp build-pkg/test/ && strip build-pkg/test/ws_testapp
#   run: bash scripts/device/package-checks.sh        (carry ["build-pkg"])
#
# Success: the last line is "package-checks: PASS" (the run recorded kernels, NVTX ranges and API calls of
# ws_testapp basic from the moved install; the consumer project compiled against the moved prefix on the device).
set -u
OUT=${OUT:-/tmp/ws-out}; mkdir -p "$OUT"
SRC=$PWD
[ -x build-pkg/bin/warpstage-record ] || { echo "package-checks: build-pkg/bin/warpstage-record missing (see the header of this script)"; exit 2; }
# CUDA runtime and CUPTI of the toolkit (the recorder dlopens CUPTI; libcudart is linked)
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
unset WARPSTAGE_INJECT_LIB WARPSTAGE_SOURCE_DIR
P=$(mktemp -d /tmp/ws-installed.XXXXXX)/moved
cp -a build-pkg "$P"          # relocated: nothing of the build machine's paths
fails=0
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"
echo "== installed tree: $(cd "$P" && find . -type f | sort | tr '\n' ' ')"

echo "== the moved install records ws_testapp basic (run from /tmp, no WARPSTAGE_INJECT_LIB)"
rm -f "$OUT/installed.wstrace"
(cd /tmp && timeout 180 "$P/bin/warpstage-record" -o "$OUT/installed.wstrace" -- "$P/test/ws_testapp" basic) \
    >"$OUT/installed-record.log" 2>&1
rc=$?
echo "warpstage-record rc=$rc"; tail -5 "$OUT/installed-record.log"
if grep -q "libwarpstage-inject.so not found" "$OUT/installed-record.log"; then echo "FAIL: the installed recorder did not find its injection library"; fails=1; fi
if [ "$rc" != 0 ]; then echo "FAIL: warpstage-record exit $rc"; fails=1; fi
if [ -f "$OUT/installed.wstrace" ]; then
    python3 - "$OUT/installed.wstrace" <<'PY' || fails=1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
one = lambda s: c.execute(s).fetchone()[0]
runs, kernels, nvtx, api = (one("select count(*) from runs"), one("select count(*) from kernels"),
                            one("select count(*) from nvtx_ranges"), one("select count(*) from api_spans"))
print(f"installed.wstrace: runs {runs}, kernels {kernels}, nvtx ranges {nvtx}, api spans {api}")
sys.exit(0 if runs >= 1 and kernels > 0 and nvtx > 0 and api > 0 else 1)
PY
else
    echo "FAIL: no $OUT/installed.wstrace"; fails=1
fi

echo "== tests/package/consumer against the moved prefix (compile only, nvcc of the device machine)"
if cmake -S "$SRC/tests/package/consumer" -B /tmp/ws-consumer -G Ninja -DCMAKE_PREFIX_PATH="$P" \
        -DWARPSTAGE_EXPECT_PREFIX="$P" -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc >"$OUT/consumer.log" 2>&1 \
   && cmake --build /tmp/ws-consumer >>"$OUT/consumer.log" 2>&1 && /tmp/ws-consumer/consumer_host; then
    echo "consumer: ok"
else
    tail -15 "$OUT/consumer.log"; echo "FAIL: consumer"; fails=1
fi

if [ "$fails" = 0 ]; then echo "package-checks: PASS"; else echo "package-checks: FAIL"; exit 1; fi
