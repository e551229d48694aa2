#!/usr/bin/env python3
"""Traced-overhead tables from `ladder_bench` logs of several builds (the tracing-cost device scripts).

  trace_overhead_table.py [--untraced-from BUILD] BUILD=LOG[,LOG...] ...

Each LOG is a `ladder_bench` log (`shape MxNxK:` lines, then one line per rung with its untraced and traced times,
`overhead +X%` and `[correct, traced correct]`). Prints, per rung, a table of every shape's traced overhead per build
(builds in the order given; the untraced time from --untraced-from, default the first build), then the geometric mean
and maximum per rung and build, and a FAIL line for every build and rung with a result marked WRONG.
"""
import argparse
import math
import os
import re
import sys

RUNG_LINE = re.compile(r"^\s+(\S+)\s+([\d.]+) ms.*\| traced\s+([\d.]+) ms.*overhead ([+-]?[\d.]+)%\s+\[(.*)\]")


def load(paths):
    """{(shape, rung): (overhead %, untraced ms, traced ms, correct)} from the logs that exist."""
    out = {}
    for p in paths:
        if not os.path.exists(p):
            continue
        shape = None
        for line in open(p, errors="replace"):
            m = re.match(r"^shape (\S+):", line)
            if m:
                shape = m.group(1)
                continue
            m = RUNG_LINE.match(line)
            if m and shape:
                out[(shape, m.group(1))] = (float(m.group(4)), float(m.group(2)), float(m.group(3)), "WRONG" not in m.group(5))
    return out


def geomean_pct(x):
    return 100.0 * (math.exp(sum(math.log(1 + o / 100.0) for o in x) / len(x)) - 1.0)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--untraced-from", help="the build whose untraced time is shown (default: the first)")
    ap.add_argument("builds", nargs="+", metavar="BUILD=LOG[,LOG...]")
    a = ap.parse_args(argv)
    names, d = [], {}
    for spec in a.builds:
        name, sep, logs = spec.partition("=")
        if not sep or not logs:
            ap.error(f"'{spec}': want BUILD=LOG[,LOG...]")
        names.append(name)
        d[name] = load(logs.split(","))
    ref = a.untraced_from or names[0]
    if ref not in d:
        ap.error(f"--untraced-from {ref}: not one of the builds ({', '.join(names)})")
    shapes, rungs = [], []
    for v in names:
        for s, r in d[v]:
            if s not in shapes:
                shapes.append(s)
            if r not in rungs:
                rungs.append(r)
    for r in rungs:
        print(f"\n{r}: traced overhead")
        print(f"| shape | untraced ms ({ref}) | " + " | ".join(names) + " |")
        print("|---|---:|" + "---:|" * len(names))
        for s in shapes:
            f = d[ref].get((s, r))
            cells = [f"{f[1]:.4f}" if f else "-"]
            for v in names:
                x = d[v].get((s, r))
                cells.append((f"{x[0]:+.1f} %" + ("" if x[3] else " WRONG")) if x else "-")
            print(f"| {s} | " + " | ".join(cells) + " |")
    print("\n| rung | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for r in rungs:
        cells = []
        for v in names:
            x = [o[0] for k, o in d[v].items() if k[1] == r]
            cells.append(f"{geomean_pct(x):+.2f} % (max {max(x):+.1f} %, {len(x)} shapes)" if x else "-")
        print(f"| {r} | " + " | ".join(cells) + " |")
    for v in names:
        for r in rungs:
            x = [o for k, o in d[v].items() if k[1] == r]
            if x and not all(o[3] for o in x):
                print(f"FAIL {v} {r}: a traced or untraced result is WRONG")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
