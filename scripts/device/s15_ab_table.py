#!/usr/bin/env python3
"""A/B table of stream-K's time in two builds' ladder_bench processes, run alternately (session 15, s15-gemmgap).

Usage: s15_ab_table.py MODE A1.csv A2.csv ... -- B1.csv B2.csv ...

Each CSV is one `ladder_bench --rung streamk --no-traced` process (columns of ladder_bench's CSV). A = the reference
build (main), B = the changed build; the processes ran A1 B1 A2 B2 ... in one call. Per shape: stream-K's median in
each process, the change mean(A) / mean(B) - 1 (> 0: B faster), the A/A spread (A's processes against each other,
max / min - 1) and B's % of cuBLAS (cuBLAS: the faster of its two timings in each B process, then their mean).
Prints a markdown table, then the geometric mean of the changes. Exit 1 with a sentence when a file has no
stream-K row.
"""
import csv
import math
import sys


def read(path):
    rows = {}
    cub = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            ms = float(r["median_ms"]) if r["median_ms"] else float("nan")
            if r["variant"] in ("cublas", "cublas_after"):
                cub[r["shape"]] = min(cub.get(r["shape"], float("inf")), ms)
            elif r["variant"] == "streamk" and r["traced"] == "0":
                if r["correct"] != "1":
                    print(f"s15_ab_table: {path}: streamk at {r['shape']} not correct")
                rows[r["shape"]] = ms
    if not rows:
        print(f"s15_ab_table: {path} has no untraced streamk row")
        sys.exit(1)
    return rows, cub


def main(argv):
    if "--" not in argv or len(argv) < 4:
        print(__doc__)
        return 2
    mode = argv[1]
    cut = argv.index("--")
    A = [read(p) for p in argv[2:cut]]
    B = [read(p) for p in argv[cut + 1:]]
    print(f"\n{mode}: stream-K, main (A) against the branch (B), processes alternating A B A B (us)\n")
    print("| shape | A | B | change (A/B - 1) | A/A spread | cuBLAS (B's processes) | B % of cuBLAS |")
    print("|---|---|---|---:|---:|---:|---:|")
    logs = []
    for shape in A[0][0]:
        a = [x[0].get(shape, float("nan")) for x in A]
        b = [x[0].get(shape, float("nan")) for x in B]
        c = [x[1].get(shape, float("nan")) for x in B]
        ma, mb, mc = sum(a) / len(a), sum(b) / len(b), sum(c) / len(c)
        ch = ma / mb - 1
        logs.append(math.log(ma / mb))
        aa = max(a) / min(a) - 1
        print(f"| {shape} | {', '.join(f'{1e3 * v:.2f}' for v in a)} | {', '.join(f'{1e3 * v:.2f}' for v in b)} "
              f"| {100 * ch:+.2f} % | {100 * aa:.2f} % | {1e3 * mc:.2f} | {100 * mc / mb:.1f} % |")
    print(f"\n{mode}: geometric mean of the changes {100 * (math.exp(sum(logs) / len(logs)) - 1):+.2f} % over "
          f"{len(logs)} shapes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
