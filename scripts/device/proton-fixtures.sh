#!/usr/bin/env bash
# Make Proton intra-kernel Chrome traces on the H200 (scripts/proton/make_fixtures.py), one process per fixture,
# so that one failing kernel cannot poison the others. Writes $OUT/proton.tar.gz (traces + logs).
set -u
out=${OUT:-/tmp/out}; d=/tmp/proton; mkdir -p "$d" "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.applications.graphics --format=csv > "$d/clocks.txt" 2>&1
for f in ${FIXTURES:-info triton_add gluon_pipelined gluon_ws}; do
  echo "== $f"; timeout 240 python3 scripts/proton/make_fixtures.py "$f" "$d" > "$d/$f.log" 2>&1; echo "rc=$?"
  tail -5 "$d/$f.log"
done
ls -la "$d"
tar czf "$out/proton.tar.gz" -C /tmp proton
