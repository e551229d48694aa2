#!/usr/bin/env python3
"""Summarise ncu exports of cuBLAS's and our GEMM kernels side by side (session 15, s15-gemmgap).

Usage: ncu_gap_summary.py DIR [--top N]

DIR holds, per report NAME, NAME-details.csv (`ncu -i NAME.ncu-rep --page details --csv`) and NAME-source.csv
(`ncu -i NAME.ncu-rep --page source --csv --print-source sass`). Prints, per kernel of each report:
  - one line of launch and speed-of-light metrics (the details page; whichever of the wanted names it has);
  - the warp-stall samples summed over the kernel's SASS lines, per reason, as % of all samples (the source page);
  - the N SASS lines with the most samples, with their top reasons.
Exit 0 when at least one kernel was summarised; 1 with a sentence otherwise.
"""
import csv
import glob
import os
import re
import sys

WANTED = [
    "Grid Size", "Cluster Size", "Registers Per Thread", "Dynamic Shared Memory Per Block", "Duration",
    "Elapsed Cycles", "SM Active Cycles", "SM Frequency", "DRAM Frequency", "Memory Throughput", "DRAM Throughput",
    "L1/TEX Hit Rate", "L2 Hit Rate", "Compute (SM) Throughput", "Executed Ipc Elapsed", "Issue Slots Busy",
    "No Eligible", "Warp Cycles Per Issued Instruction", "Executed Instructions", "Mem Busy", "Max Bandwidth",
    "L2 Compression Success Rate", "Achieved Occupancy",
]


def short(name):
    name = re.sub(r"\(.*", "", name)
    return name[:60]


def num(s):
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return 0.0


def details(path):
    """{kernel id: (kernel name, {metric name: 'value unit'})} in file order."""
    out = {}
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    hdr = None
    for r in rows:
        if "Metric Name" in r and "Kernel Name" in r:
            hdr = {h: i for i, h in enumerate(r)}
            continue
        if hdr is None or len(r) <= hdr["Metric Value"]:  # rule rows leave the trailing columns out
            continue
        kid = r[hdr["ID"]]
        name, metrics = out.setdefault(kid, (r[hdr["Kernel Name"]], {}))
        m = r[hdr["Metric Name"]]
        if m not in metrics:
            metrics[m] = (r[hdr["Metric Value"]] + " " + r[hdr.get("Metric Unit", hdr["Metric Value"])]).strip()
        for col in ("Grid Size", "Block Size"):
            if col in hdr and col not in metrics:
                metrics[col] = r[hdr[col]]
    return out


def source_blocks(path):
    """[(title, header, rows)] -- one block per kernel on the source page."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    blocks, title = [], ""
    cur = None
    for r in rows:
        if "Source" in r and ("Address" in r or any("Sampl" in c for c in r)):
            cur = (title, {h: i for i, h in enumerate(r)}, [])
            blocks.append(cur)
            continue
        if cur is not None and len(r) == len(cur[1]):
            cur[2].append(r)
        elif len(r) <= 2:
            title = " ".join(r)
    return blocks


def stall_cols(hdr):
    cols = [h for h in hdr if h.startswith("stall_") and not h.endswith("_not_issued")]
    if not cols:
        cols = [h for h in hdr if h.startswith("smsp__pcsamp_warps_issue_stalled_") and not h.endswith("_not_issued")]
    return cols


def total_col(hdr):
    for c in ("Warp Stall Sampling (All Samples)", "# Samples", "Warp Stall Sampling (All Cycles)"):
        if c in hdr:
            return c
    return None


def summarise_source(title, hdr, rows, top):
    tc = total_col(hdr)
    if tc is None:
        print("    (no sample column on the source page)")
        return
    src = hdr.get("Source")
    cols = stall_cols(hdr)
    tot = sum(num(r[hdr[tc]]) for r in rows) or 1.0
    per = {c: sum(num(r[hdr[c]]) for r in rows) for c in cols}
    reasons = sorted(per.items(), key=lambda kv: -kv[1])
    print(f"    samples {int(tot)} over {len(rows)} SASS lines; by reason: "
          + ", ".join(f"{c.replace('smsp__pcsamp_warps_issue_stalled_', '').replace('stall_', '')} "
                      f"{100 * v / tot:.1f}%" for c, v in reasons if v > 0.005 * tot))
    lines = sorted(range(len(rows)), key=lambda i: -num(rows[i][hdr[tc]]))[:top]
    for i in lines:
        r = rows[i]
        s = num(r[hdr[tc]])
        why = sorted(((num(r[hdr[c]]), c) for c in cols), reverse=True)[:3]
        whys = ", ".join(f"{c.replace('smsp__pcsamp_warps_issue_stalled_', '').replace('stall_', '')} "
                         f"{100 * v / max(s, 1):.0f}%" for v, c in why if v > 0)
        text = r[src].strip() if src is not None else "?"
        print(f"    #{i:<5} {100 * s / tot:5.1f}%  {text[:70]:<70}  [{whys}]")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    d = argv[1]
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 12
    done = 0
    for det in sorted(glob.glob(os.path.join(d, "*-details.csv"))):
        base = os.path.basename(det)[: -len("-details.csv")]
        try:
            ks = details(det)
        except (OSError, csv.Error) as e:
            print(f"== {base}: details unreadable ({e})")
            continue
        srcp = os.path.join(d, base + "-source.csv")
        blocks = source_blocks(srcp) if os.path.exists(srcp) else []
        for n, (kid, (name, m)) in enumerate(ks.items()):
            done += 1
            print(f"== {base} kernel {kid}: {short(name)}")
            print("    " + "; ".join(f"{w} {m[w]}" for w in WANTED if w in m))
            if n < len(blocks):
                summarise_source(*blocks[n], top)
            else:
                print("    (no source-page block for this kernel)")
    if done == 0:
        print(f"ncu_gap_summary: no kernel found in {d}/*-details.csv")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
