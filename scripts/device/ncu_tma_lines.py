#!/usr/bin/env python3
"""The TMA instructions of a kernel on ncu's source page, with their executed counts and warp-stall samples
(session 15, s15-lcetma).

Usage: ncu_tma_lines.py SOURCE.csv [--around N]

SOURCE.csv is `ncu -i REP.ncu-rep --page source --csv --print-source sass` of a report collected with the
SourceCounters section (--set full). Per kernel block it prints:
  - the executed count (warp-level instructions) and the stall samples summed per TMA / bulk-copy opcode
    (UTMALDG, UTMASTG, UTMAPF, UBLKCP, UTMACCTL, UTMACMDFLUSH, ...) and of the kernel as a whole;
  - every TMA line with N lines either side (default 2): address, executed count, samples, top 3 stall reasons.
Exit 0 when a block with at least one TMA line was found; 1 with a sentence otherwise.
"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ncu_gap_summary import num, stall_cols, total_col  # noqa: E402

TMA = re.compile(r"\b(UTMA\w*|UBLK\w*)")


def blocks(path):
    """[(kernel name, header, rows)]: ncu writes a "Kernel Name",NAME row before each kernel's header row."""
    out, title, cur = [], "", None
    with open(path, newline="") as f:
        for r in csv.reader(f):
            if r and r[0] == "Kernel Name":
                title = r[1] if len(r) > 1 else ""
            elif "Source" in r and "Address" in r:
                cur = (title, {h: i for i, h in enumerate(r)}, [])
                out.append(cur)
            elif cur is not None and len(r) == len(cur[1]):
                cur[2].append(r)
    return out


def exec_col(hdr):
    for c in ("Instructions Executed", "Warp Instructions Executed", "inst_executed"):
        if c in hdr:
            return c
    return next((h for h in hdr if "Executed" in h and "Predicated" not in h), None)


def reason(c):
    return c.replace("smsp__pcsamp_warps_issue_stalled_", "").replace("stall_", "")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    around = int(argv[argv.index("--around") + 1]) if "--around" in argv else 2
    found = 0
    for title, hdr, rows in blocks(argv[1]):
        src, tc, ec = hdr.get("Source"), total_col(hdr), exec_col(hdr)
        if src is None:
            continue
        cols = [c for c in stall_cols(hdr) if "Not Issued" not in c]  # "X (Not Issued)" counts samples again
        tma = [i for i, r in enumerate(rows) if TMA.search(r[src])]
        print(f"== {title[:90]}: {len(rows)} SASS lines, {len(tma)} TMA lines (executed column: {ec})")
        if not tma:
            continue
        found += 1
        tot_s = sum(num(r[hdr[tc]]) for r in rows) if tc else 0
        tot_e = sum(num(r[hdr[ec]]) for r in rows) if ec else 0
        per = {}
        for i in tma:
            op = TMA.search(rows[i][src]).group(1)
            full = rows[i][src].split()[0] if rows[i][src].split() else op
            key = full if full.startswith(op) else op
            e, s = per.get(key, (0.0, 0.0))
            per[key] = (e + (num(rows[i][hdr[ec]]) if ec else 0), s + (num(rows[i][hdr[tc]]) if tc else 0))
        print(f"   kernel: {int(tot_e)} warp instructions executed, {int(tot_s)} stall samples")
        for k, (e, s) in sorted(per.items()):
            print(f"   {k:<40} executed {int(e):>10}  samples {int(s):>7} ({100 * s / max(tot_s, 1):.2f}% of the kernel's)")
        shown = set()
        for i in tma:
            lo, hi = max(0, i - around), min(len(rows), i + around + 1)
            new = [j for j in range(lo, hi) if j not in shown]
            if new and new[0] != (max(shown) + 1 if shown else -1):
                print("   --")
            for j in new:
                shown.add(j)
                r = rows[j]
                s = num(r[hdr[tc]]) if tc else 0
                why = sorted(((num(r[hdr[c]]), c) for c in cols), reverse=True)[:3]
                whys = ", ".join(f"{reason(c)} {int(v)}" for v, c in why if v > 0)
                addr = r[hdr["Address"]] if "Address" in hdr else f"#{j}"
                mark = "*" if j == i or TMA.search(r[src]) else " "
                print(f"  {mark}{addr:>8} {r[src].strip()[:78]:<78} ex {int(num(r[hdr[ec]])) if ec else '?':>9}"
                      f"  s {int(s):>5}  [{whys}]")
    if not found:
        print(f"ncu_tma_lines: no TMA instruction on the source page {argv[1]}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
