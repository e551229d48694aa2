#!/usr/bin/env bash
# Session 5, lead: the examples on the H200 (examples-check.sh steps 1, 3, 4) and one lce probe, in one call.
# Carry ["build-examples"] (see examples-check.sh's header; the lead also copies lce and gpu_lce into it).
# Everything comes back as $OUT/session5.tar.gz (few files: the device drops files beyond a count).
set -u
REAL_OUT=${OUT:-/tmp/out}; W=/tmp/s5out; rm -rf "$W"; mkdir -p "$W"
OUT=$W timeout 420 bash scripts/device/examples-check.sh --only 1,3,4 2>&1 | tee "$W/examples-check.txt"
echo "== lce probe: rung 3, rung 4, rung 4 without its candidate epilogue (the ping-pong's mainloop alone)"
( cd build-examples && if ldd ./lce | grep -q "not found"; then
    d=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))" 2>/dev/null)
    for lib in $(find "$d" /usr -name 'libcublas*.so.13*' 2>/dev/null | xargs -r -n1 dirname | sort -u); do
      export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}; done; fi
  for r in 3 4; do timeout 60 ./lce --rung $r --check --time 2>&1 | grep -E "TIME|PASS|FAIL|refus" ; done
  LCE_RUNG4_EPILOGUE=none timeout 60 ./lce --rung 4 --time 2>&1 | grep -E "TIME|FAIL" ) 2>&1 | tee "$W/lce-probe.txt"
tar czf "$REAL_OUT/session5.tar.gz" -C /tmp s5out
