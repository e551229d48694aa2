#!/usr/bin/env python3
"""Checks a finished ctest run for tests that passed over nothing.

    scripts/check-test-run.py BUILD_DIR JUNIT_XML

ctest reports a test that exits 77 (SKIP_RETURN_CODE) as skipped and a Qt Test whose functions all
QSKIP as passed; either can hide a broken test. This script fails (exit 1) when
  * a test was skipped (exit 77) that is not a GPU test (label "gpu"), or a GPU test was skipped on a
    machine that has a GPU (seen independently of the tests: /dev/nvidiactl and /dev/nvidia0);
  * a Qt Test printed "SKIP   : ..." for a case not allowed in tests/allowed-skips.txt (or allowed
    only where there is / is not a GPU, and this machine is the other kind);
  * no test ran at all.
It prints every skip it saw, so the CI log shows what did not run and why.
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def have_gpu():
    return os.path.exists("/dev/nvidiactl") and os.path.exists("/dev/nvidia0")


def test_labels(build):
    out = subprocess.run(["ctest", "--test-dir", build, "-N", "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    labels = {}
    for t in json.loads(out).get("tests", []):
        ls = []
        for p in t.get("properties", []):
            if p.get("name") == "LABELS":
                ls = p.get("value", [])
        labels[t["name"]] = set(ls)
    return labels


def allowed_skips():
    """tests/allowed-skips.txt: 'TEST | WHEN | REGEX | why', WHEN in always, gpu, nogpu."""
    rules = []
    path = os.path.join(ROOT, "tests", "allowed-skips.txt")
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != 4 or parts[1] not in ("always", "gpu", "nogpu"):
                sys.exit(f"{path}:{n}: expected 'TEST | always|gpu|nogpu | REGEX | why'")
            rules.append((parts[0], parts[1], re.compile(parts[2]), parts[3]))
    return rules


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build, junit = sys.argv[1], sys.argv[2]
    gpu = have_gpu()
    labels = test_labels(build)
    rules = allowed_skips()
    problems, notes = [], []
    cases = ET.parse(junit).getroot().iter("testcase")
    ran = 0
    for c in cases:
        name = c.get("name")
        out = (c.findtext("system-out") or "")
        if c.find("skipped") is not None:
            if "gpu" not in labels.get(name, set()):
                problems.append(f"{name}: skipped, but it is not a GPU test: {out.strip()[-300:]}")
            elif gpu:
                problems.append(f"{name}: skipped on a machine with a GPU: {out.strip()[-300:]}")
            else:
                notes.append(f"{name}: skipped (GPU test, no GPU here)")
            continue
        ran += 1
        for line in out.splitlines():
            m = re.match(r"SKIP\s+:\s+(.*)", line)
            if not m:
                continue
            what = m.group(1).strip()
            ok = None
            for test, when, rx, why in rules:
                if test == name and rx.search(what):
                    ok = when == "always" or (when == "gpu") == gpu
                    break
            if ok:
                notes.append(f"{name}: QSKIP allowed here: {what}")
            elif ok is None:
                problems.append(f"{name}: QSKIP not in tests/allowed-skips.txt: {what}")
            else:
                problems.append(f"{name}: QSKIP allowed only {'with' if not gpu else 'without'} a GPU: {what}")
    for n in notes:
        print("  note:", n)
    if ran == 0:
        problems.append("no test ran")
    for p in problems:
        print("  FAIL:", p)
    print(f"check-test-run: {ran} tests ran, {len(notes)} allowed skip(s), {len(problems)} problem(s)"
          f" ({'GPU present' if gpu else 'no GPU'})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
