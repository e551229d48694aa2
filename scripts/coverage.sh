#!/usr/bin/env bash
# Line coverage of core/, ui/ and kernels/decode/ by the test suites (Debian's gcov + lcov).
#   scripts/coverage.sh            build the `coverage` preset (gcc --coverage, Debug, no CUDA), run ctest,
#                                  print a line-coverage table per folder, write build/coverage/html/index.html
# Numbers go to docs/testing.md ("Coverage"); the goal is >= 85% of core's lines.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if ! command -v lcov >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get install -y -qq --no-install-recommends lcov
fi
B=build/coverage
scripts/build.sh coverage
lcov --quiet --zerocounters --directory "$B"
ctest --preset coverage -j"$(nproc)" || echo "coverage: some tests failed (coverage below still counts what ran)"
lcov --quiet --capture --directory "$B" --output-file "$B/all.info" --ignore-errors mismatch,negative 2>/dev/null \
    || lcov --quiet --capture --directory "$B" --output-file "$B/all.info"
root=$(pwd)
lcov --quiet --extract "$B/all.info" "$root/core/*" "$root/ui/*" "$root/kernels/decode/*" --output-file "$B/project.info"
lcov --quiet --remove "$B/project.info" "*_autogen*" --output-file "$B/project.info"
genhtml --quiet --output-directory "$B/html" "$B/project.info" >/dev/null 2>&1 || true
python3 - "$B/project.info" "$root" <<'PY'
import sys, collections
info, root = sys.argv[1], sys.argv[2] + "/"
hit = collections.Counter(); tot = collections.Counter(); f = None
for line in open(info):
    line = line.strip()
    if line.startswith("SF:"):
        f = line[3:].replace(root, "")
    elif line.startswith("DA:"):
        n = int(line[3:].split(",")[1])
        for key in (f.split("/")[0] if not f.startswith("kernels/") else "kernels/decode", f):
            tot[key] += 1; hit[key] += n > 0
print(f"{'folder':20s} {'lines':>7s} {'hit':>7s} {'cover':>7s}")
for key in ("core", "ui", "kernels/decode"):
    if tot[key]:
        print(f"{key:20s} {tot[key]:7d} {hit[key]:7d} {100.0 * hit[key] / tot[key]:6.1f}%")
print()
print("least covered files (lines not hit):")
files = [k for k in tot if "/" in k and k not in ("kernels/decode",)]
for k in sorted(files, key=lambda k: tot[k] - hit[k], reverse=True)[:12]:
    print(f"  {k:45s} {hit[k]:5d}/{tot[k]:5d} {100.0 * hit[k] / tot[k]:5.1f}%")
PY
echo "coverage: HTML report in $B/html/index.html"
