#!/usr/bin/env python3
"""Mutation testing: plant one small bug at a time and check that a test turns red.

    scripts/mutate.py [--list] [--only NAME[,NAME...]] [--subset ci] [--keep-going]
                      [--workdir DIR] [--timeout S]

Reads the named mutations in scripts/mutations.txt. The first run copies the working tree (tracked
files, with uncommitted changes) to WORKDIR/src and configures WORKDIR/build once (Release-like,
CUDA when the toolkit is here, no benchmarks); later runs refresh the copy and build incrementally.
For each mutation it applies the change to the copy, builds only the targets of the tests that should
catch it, runs those tests with ctest, restores the file and prints CAUGHT, SURVIVED or BROKEN (the
mutant did not compile, or its text is no longer in the file: fix the entry). Entries marked
`untestable:` are listed with their reason and not run.

Exit code: 0 when every mutation that ran was caught, 1 when one survived or broke, 2 on usage errors.
docs/testing.md explains the habit; the whole list takes 30-60 minutes on a 2-core machine, the `ci`
subset a few minutes after the first build.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, "scripts", "mutations.txt")


class Mutation:
    def __init__(self, name, line):
        self.name, self.line = name, line
        self.file = self.find = self.replace = self.tests = self.untestable = None
        self.subsets = set()
        self.targets = []


def parse_list(path):
    """Blocks of 'key: value' lines, each block starting with '[name]'. Values of find/replace
    keep inner spaces; '\\n' in them stands for a newline."""
    muts, cur = [], None
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = re.match(r"^\[([A-Za-z0-9_.:-]+)\]\s*$", line)
            if m:
                cur = Mutation(m.group(1), n)
                muts.append(cur)
                continue
            m = re.match(r"^(file|find|replace|tests|targets|subset|untestable):\s?(.*)$", line)
            if not m or cur is None:
                sys.exit(f"{path}:{n}: expected '[name]' or 'file|find|replace|tests|targets|subset|untestable: ...'")
            key, val = m.group(1), m.group(2).replace("\\n", "\n")
            if key == "subset":
                cur.subsets.update(val.split())
            elif key == "targets":
                cur.targets = val.split()
            else:
                setattr(cur, key, val)
    names = set()
    for mu in muts:
        if mu.name in names:
            sys.exit(f"{path}:{mu.line}: duplicate mutation name {mu.name}")
        names.add(mu.name)
        if mu.untestable is None and not (mu.file and mu.find is not None and mu.replace is not None and mu.tests):
            sys.exit(f"{path}:{mu.line}: [{mu.name}] needs file, find, replace and tests (or untestable)")
    return muts


def run(cmd, cwd=None, timeout=None, env=None):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def refresh_copy(src):
    """Copies the tracked files of the working tree (as they are now) into src; files that did not
    change keep their time stamps, so the scratch build stays incremental."""
    files = run(["git", "ls-files", "-z", "--cached"], cwd=ROOT).stdout.split("\0")
    os.makedirs(src, exist_ok=True)
    for rel in files:
        if not rel:
            continue
        a, b = os.path.join(ROOT, rel), os.path.join(src, rel)
        if not os.path.isfile(a):
            continue
        with open(a, "rb") as fa:
            data = fa.read()
        try:
            with open(b, "rb") as fb:
                if fb.read() == data:
                    continue
        except FileNotFoundError:
            os.makedirs(os.path.dirname(b), exist_ok=True)
        with open(b, "wb") as fb:
            fb.write(data)
        shutil.copymode(a, b)


def configure(src, build):
    if os.path.exists(os.path.join(build, "build.ninja")):
        return
    cmd = ["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
           "-DWARPSTAGE_BUILD_BENCHMARKS=OFF"]
    if shutil.which("ccache"):
        cmd += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    r = run(cmd)
    if r.returncode != 0:
        sys.exit("configure failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])


def tests_and_targets(build, regex):
    """The ctest tests matching regex, and the build targets they need (their executables; the
    `warpstage` CLI and its fixtures for the cmake -P CLI tests)."""
    out = run(["ctest", "--test-dir", build, "-N", "-R", regex, "--show-only=json-v1"]).stdout
    known = set(re.findall(r"^([^\s:]+):", run(["ninja", "-C", build, "-t", "targets", "all"]).stdout, re.M))
    tests, targets = [], set()
    for t in json.loads(out).get("tests", []):
        tests.append(t["name"])
        cmd = t.get("command") or []
        exe = os.path.basename(cmd[0]) if cmd else ""
        if not cmd:
            # ctest names no command for an executable that is not built yet: the test is named after its target.
            if t["name"] in known:
                targets.add(t["name"])
        elif exe in ("bash", "sh") or exe.endswith(".sh"):
            pass  # a script (package_check): the entry's `targets:` name what it needs
        elif exe == "cmake" or exe.startswith("python"):
            # CLI tests drive the app; the SASS check reads the ladder.
            text = " ".join(cmd)
            for tgt, pat in (("warpstage", "/warpstage"), ("ws_make_fixtures", "fixtures"),
                             ("warpstage-record", "warpstage-record")):
                if pat in text:
                    targets.add(tgt)
        elif exe:
            targets.add(exe)
        for p in t.get("properties", []):
            if p.get("name") == "FIXTURES_REQUIRED" and "ws_app_files" in p.get("value", []):
                targets.update(["warpstage", "ws_make_fixtures"])
    return tests, sorted(targets)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print the mutations and exit")
    ap.add_argument("--only", default="", help="comma-separated mutation names")
    ap.add_argument("--subset", default="", help="run the mutations tagged with this subset (e.g. ci)")
    ap.add_argument("--workdir", default=os.environ.get("WARPSTAGE_MUTATE_DIR", "/tmp/warpstage-mutate"))
    ap.add_argument("--timeout", type=int, default=300, help="seconds per mutation's tests")
    args = ap.parse_args()

    muts = parse_list(LIST)
    if args.only:
        want = set(args.only.split(","))
        unknown = want - {m.name for m in muts}
        if unknown:
            print("unknown mutation(s): " + ", ".join(sorted(unknown)), file=sys.stderr)
            return 2
        muts = [m for m in muts if m.name in want]
    if args.subset:
        muts = [m for m in muts if args.subset in m.subsets]
    if args.list:
        for m in muts:
            where = m.file or "-"
            print(f"{m.name:40s} {where:40s} {'untestable: ' + m.untestable if m.untestable else m.tests}")
        print(f"{len(muts)} mutation(s)")
        return 0

    src, build = os.path.join(args.workdir, "src"), os.path.join(args.workdir, "build")
    t0 = time.time()
    refresh_copy(src)
    configure(src, build)
    print(f"scratch copy {src}, build {build} ready ({time.time() - t0:.0f} s)", flush=True)

    results = []
    baseline_ok = set()
    for m in muts:
        if m.untestable:
            results.append((m, "UNTESTABLE", 0.0, m.untestable))
            print(f"{'UNTESTABLE':10s} {m.name}: {m.untestable}", flush=True)
            continue
        t1 = time.time()
        path = os.path.join(src, m.file)
        with open(path, encoding="utf-8") as f:
            original = f.read()
        count = original.count(m.find)
        if count != 1:
            results.append((m, "BROKEN", 0.0, f"find text occurs {count} times in {m.file} (must be once)"))
            print(f"{'BROKEN':10s} {m.name}: find text occurs {count} times in {m.file}", flush=True)
            continue
        tests, targets = tests_and_targets(build, m.tests)
        targets = sorted(set(targets) | set(m.targets))
        if tests and not targets:
            sys.exit(f"[{m.name}]: cannot tell which targets build {', '.join(tests)}: give them with 'targets:'")
        if not tests:
            results.append((m, "BROKEN", 0.0, f"no test matches '{m.tests}'"))
            print(f"{'BROKEN':10s} {m.name}: no test matches '{m.tests}'", flush=True)
            continue
        # Build and run the unmutated suites first (once per suite set), so a failure below is the mutant's.
        pre = run(["ninja", "-C", build] + targets)
        if pre.returncode != 0:
            sys.exit(f"the unmutated tree does not build ({' '.join(targets)}):\n{pre.stdout[-4000:]}")
        if m.tests not in baseline_ok:
            base = run(["ctest", "--test-dir", build, "-R", m.tests, "--timeout", str(args.timeout)],
                       env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
            if base.returncode != 0:
                sys.exit(f"[{m.name}]: the suites '{m.tests}' fail WITHOUT the mutation; fix them first:\n"
                         + base.stdout[-3000:])
            baseline_ok.add(m.tests)
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(original.replace(m.find, m.replace, 1))
            b = run(["ninja", "-C", build] + targets)
            if b.returncode != 0:
                status, detail = "BROKEN", "the mutant does not compile: " + b.stdout[-600:].strip()
            else:
                try:
                    r = run(["ctest", "--test-dir", build, "-R", m.tests, "--timeout", str(args.timeout)],
                            timeout=args.timeout * 3,
                            env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
                    failed = re.findall(r"^\s*\d+ - (\S+)", r.stdout, re.M)
                    if r.returncode != 0:
                        status, detail = "CAUGHT", "by " + (", ".join(failed) or "ctest")
                    else:
                        status, detail = "SURVIVED", f"{len(tests)} test(s) passed: " + ", ".join(tests)
                except subprocess.TimeoutExpired:
                    status, detail = "CAUGHT", "by a timeout"
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(original)
        dt = time.time() - t1
        results.append((m, status, dt, detail))
        print(f"{status:10s} {m.name} ({dt:.0f} s): {detail}", flush=True)

    ran = [r for r in results if r[1] != "UNTESTABLE"]
    caught = sum(1 for r in ran if r[1] == "CAUGHT")
    bad = [r for r in ran if r[1] != "CAUGHT"]
    print()
    print(f"mutations: {len(results)} listed, {len(ran)} run, {caught} caught, "
          f"{sum(1 for r in ran if r[1] == 'SURVIVED')} survived, {sum(1 for r in ran if r[1] == 'BROKEN')} broken, "
          f"{len(results) - len(ran)} untestable ({time.time() - t0:.0f} s)")
    for m, status, _, detail in bad:
        print(f"  {status}: {m.name} ({m.file}): {detail}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
