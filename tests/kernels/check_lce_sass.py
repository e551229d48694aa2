#!/usr/bin/env python3
"""SASS check of the lce family's kernels (rungs 3-4, kernels/lce/; no GPU needed; s15-lceuntraced).

Rungs 3-4 compile each kernel twice from one body (lce_body.cuh's Traced): lceEpilogueWarp<S, V> / lceUserFirst<S, V>
with the trace code, launched while a trace buffer may be attached (lce_rungs.h: traceLaunches()), and
lceEpilogueWarpUntraced<S, V> / lceUserFirstUntraced<S, V> without it, what the rungs launch otherwise. In the program
given (the `lce` driver or liblce_capi.so):
  * every traced kernel has its untraced twin (same template arguments);
  * the traced one holds the trace code: SR_CLOCK and SR_GLOBALTIMER reads, %smid;
  * the untraced one NONE of it: no clock, globaltimer or SM-id read, no load of the control word
    (warpstage_trace_control: constant bank 4 in a linked program, the kernels use no other __device__ global);
  * both are the whole kernel (HGMMA, UTMALDG), the untraced one smaller.
Disassembler as tests/kernels/check_sass.py finds it; without one prints "SKIP: ..." and exits 77
(WARPSTAGE_REQUIRE_SASS_CHECK=1 makes that a failure).
Usage: check_lce_sass.py BINARY
Exit: 0 passed, 1 a check failed, 2 bad input, 77 skipped.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "recorder"))
import check_user_sass as cu  # noqa: E402  (it imports this folder's check_sass.py: the disassemblers)

KERNEL = re.compile(r"\d+lce(EpilogueWarp|UserFirst)(Untraced)?I")
HGMMA = re.compile(r"\bHGMMA\.")
UTMALDG = re.compile(r"\bUTMALDG\b")


def twin_key(name):
    """The traced kernel's mangled name for either twin (the untraced one's name without 'Untraced')."""
    return re.sub(r"\d+(lce(?:EpilogueWarp|UserFirst))Untraced", lambda m: f"{len(m.group(1))}{m.group(1)}", name)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    binary = sys.argv[1]
    if not os.path.isfile(binary):
        print(f"check_lce_sass: {binary}: no such file", file=sys.stderr)
        return 2
    mode, tool, rc = cu.find_tool_or_skip("check_lce_sass")
    if rc is not None:
        return rc
    funcs = {n: l for n, l in cu.kernel_sass(mode, tool, binary, "lce").items() if KERNEL.search(n)}
    traced = {n: l for n, l in funcs.items() if "Untraced" not in n}
    untraced = {twin_key(n): l for n, l in funcs.items() if "Untraced" in n}
    check = cu.Checks()
    check(len(traced) >= 3, f"the traced kernels of rungs 3-4 are there ({len(traced)}; lceEpilogueWarp<3, 0>, "
                            "lceUserFirst<4, 10>, lceUserFirst<4, 15> at least)")
    for fn in sorted(set(traced) | set(untraced)):
        check(fn in traced and fn in untraced, f"{fn}: traced and untraced instances both compiled"
                                               + ("" if fn in untraced else " (no untraced twin)"))
        if fn not in traced or fn not in untraced:
            continue
        t, u = "\n".join(traced[fn]), "\n".join(untraced[fn])
        for label, pat in (("reads SR_CLOCK", cu.CLOCK), ("reads SR_GLOBALTIMER", cu.GTIMER),
                           ("reads the SM id", cu.SMID)):
            check(bool(pat.search(t)), f"{fn}: traced: {label}")
        for label, pat in (("reads SR_CLOCK", cu.CLOCK), ("reads SR_GLOBALTIMER", cu.GTIMER),
                           ("reads the SM id", cu.SMID), ("loads the control word (c[0x4])", cu.CONTROL)):
            n = len(pat.findall(u))
            check(n == 0, f"{fn}: untraced: no longer {label}" + ("" if n == 0 else f" ({n} times)"))
        for label, pat in (("HGMMA", HGMMA), ("UTMALDG", UTMALDG)):
            check(bool(pat.search(u)) and bool(pat.search(t)), f"{fn}: both instances hold {label}")
        n_t, n_u = len(traced[fn]), len(untraced[fn])
        print(f"{fn}: instructions: traced {n_t}, untraced {n_u} ({n_t - n_u} of trace code)")
        check(n_u < n_t, f"{fn}: the untraced kernel is smaller than the traced one")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
