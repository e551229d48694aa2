#!/usr/bin/env python3
"""SASS check of a user kernel instrumented with <warpstage/trace.cuh> (issue 10; no GPU needed).

The same source (tests/recorder/programs/ws_rowsum.cu) built twice:
  * --traced    default build: the kernel reads the control word (a load of
                warpstage_trace_control) and holds the trace code (SR_CLOCK and
                SR_GLOBALTIMER reads, %smid);
  * --untraced  -DWARPSTAGE_TRACE=0: NONE of those -- no control-word load, no clock,
                globaltimer or SM-id read: every trace instruction removed.
Also prints the instruction counts of both kernels (the size of the instrumentation).

Disassembler as tests/kernels/check_sass.py finds it (cuobjdump or nvdisasm of CUDA >= 12, or the CUDA 11.8
nvdisasm of scripts/fetch-nvdisasm.sh on patched cubins); without one prints "SKIP: ..." and exits 77
(WARPSTAGE_REQUIRE_SASS_CHECK=1 makes that a failure).
Usage: check_user_sass.py --traced BIN --untraced BIN [--kernel SUBSTRING]
Exit: 0 passed, 1 a check failed, 2 bad input, 77 skipped.
"""
import argparse
import os
import re
import tempfile
import subprocess
import sys

CLOCK = re.compile(r"\bSR_CLOCK(LO|HI)?\b")
GTIMER = re.compile(r"\bSR_GLOBALTIMER(LO|HI)?\b")
SMID = re.compile(r"\bSR_(VIRTUAL)?SMID\b")
# The control word: by name in relocatable code; in a linked executable a __device__ global's address
# comes from constant bank 4 (the row-sum kernel uses no other __device__ global).
CONTROL = re.compile(r"warpstage_trace_control|c\[0x4\]")


# The disassemblers and the fatbin reader of the ladder's SASS check (tests/kernels/check_sass.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels"))
import check_sass as cs  # noqa: E402


def kernel_sass(mode, tool, binary, kernel):
    """{function: [instruction text]} of the functions of `binary` whose name contains `kernel`."""
    if mode == "cuobjdump":
        funcs, _ = cs.disassemble(mode, tool, binary, None)
    else:  # nvdisasm (CUDA >= 12, or the old one check_sass.py can patch cubins for) on the executable's cubins
        with open(binary, "rb") as f:
            fb = cs.elf_sections(f.read()).get(".nv_fatbin")
        if not fb:
            print(f"check_user_sass: {binary}: no .nv_fatbin section", file=sys.stderr)
            sys.exit(2)
        funcs = {}
        with tempfile.TemporaryDirectory() as tmp:
            for i, (arch, cubin) in enumerate(cs.fatbin_cubins(fb, binary)):
                p = os.path.join(tmp, f"{i}.cubin")
                with open(p, "wb") as f:
                    f.write(cs.patch_for_old_nvdisasm(cubin) if mode == "old-nvdisasm" else cubin)
                r = subprocess.run([tool, "-c", p], capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"check_user_sass: {tool} failed on {binary}: {r.stderr.strip()[:500]}", file=sys.stderr)
                    sys.exit(2)
                for fn, ins in cs.split_nvdisasm(r.stdout).items():
                    funcs.setdefault(fn, []).extend(ins)
    # Keyed from the kernel's name on: an anonymous namespace's mangled prefix differs between the two builds.
    hits = {name[name.index(kernel):]: lines for name, lines in funcs.items() if kernel in name}
    if not hits:
        print(f"check_user_sass: {binary}: no function matches '{kernel}' (of {sorted(funcs)})", file=sys.stderr)
        sys.exit(2)
    return hits


def find_tool_or_skip(prog):
    """(mode, tool, None) with the disassembler check_sass.find_tool picks, printed; without one (None, None, exit code):
    "SKIP: ..." and 77, or "FAIL: ..." and 1 when WARPSTAGE_REQUIRE_SASS_CHECK is set."""
    mode, tool, _version = cs.find_tool("auto")
    if tool:
        print(f"disassembler: {mode} {tool}")
        return mode, tool, None
    msg = "no disassembler (cuobjdump/nvdisasm of CUDA >= 12, or the one scripts/fetch-nvdisasm.sh installs)"
    if os.environ.get("WARPSTAGE_REQUIRE_SASS_CHECK", "0") not in ("", "0"):
        print(f"FAIL: {prog}: WARPSTAGE_REQUIRE_SASS_CHECK is set: {msg}")
        return None, None, 1
    print(f"SKIP: {prog}: {msg}")
    return None, None, 77


class Checks:
    """check(ok, what) prints PASS / FAIL what and counts the failures."""

    def __init__(self):
        self.failures = 0

    def __call__(self, ok, what):
        print(("PASS " if ok else "FAIL ") + what)
        self.failures += 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--traced", required=True)
    ap.add_argument("--untraced", required=True)
    ap.add_argument("--kernel", default="wsRowSum")
    a = ap.parse_args()
    mode, tool, rc = find_tool_or_skip("check_user_sass")
    if rc is not None:
        return rc
    check = Checks()
    traced_all = kernel_sass(mode, tool, a.traced, a.kernel)
    untraced_all = kernel_sass(mode, tool, a.untraced, a.kernel)
    check(sorted(traced_all) == sorted(untraced_all), f"both builds hold the same kernels ({len(traced_all)} matching '{a.kernel}')")
    for fn in sorted(set(traced_all) & set(untraced_all)):  # e.g. wsRowSum<Direct>, wsRowSum<Staged>
        traced, untraced = traced_all[fn], untraced_all[fn]
        for name, lines, want in (("traced", traced, True), ("untraced (WARPSTAGE_TRACE=0)", untraced, False)):
            text = "\n".join(lines)
            for label, pat in (("reads SR_CLOCK", CLOCK), ("reads SR_GLOBALTIMER", GTIMER), ("reads the SM id", SMID),
                               ("loads the control word (warpstage_trace_control)", CONTROL)):
                found = bool(pat.search(text))
                check(found == want, f"{fn}: {name}: {'' if want else 'no longer '}{label}" + ("" if found == want else f" (found={found})"))
        n_t, n_u = len(traced), len(untraced)
        print(f"{fn}: instructions: traced {n_t}, untraced {n_u} (+{n_t - n_u} for the instrumentation)")
        check(n_u < n_t, f"{fn}: the untraced kernel is smaller than the traced one")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
