#!/usr/bin/env python3
"""Clocks, power and temperature during ladder_bench's hot batches, per batch (session 15, s15-gemmgap).

Usage: hot_clock_segments.py SMI.csv LOG...

SMI.csv: `nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.draw.instant,temperature.gpu,
clocks_event_reasons.active,utilization.gpu --format=csv,noheader,nounits -lms 50`.
LOG: one `ladder_bench --rung R --shape S --hot ...` run whose every output line was prefixed with
'YYYY/MM/DD HH:MM:SS.NNNNNNNNN | ' (the time it was printed, in nvidia-smi's time zone). Its batches, in order:
cuBLAS (from the "shape" line to the first "cublas" line), each rung (to its result line) and cuBLAS again (to
"cublas again"). A batch's samples are those of its last 60 % (after the heat has set in). Prints one row per batch:
median SM clock, median instantaneous power, temperature at the end, the commonest clock-event-reason mask, the
batch's median launch time and that time in cycles at the median clock.
Exit 0 when at least one batch had samples; 1 with a sentence otherwise.
"""
import re
import sys
from datetime import datetime
from statistics import median


def ts(s):
    s = s.strip()
    if "." in s:
        head, frac = s.split(".", 1)
        return datetime.strptime(head, "%Y/%m/%d %H:%M:%S").timestamp() + float("0." + frac)
    return datetime.strptime(s, "%Y/%m/%d %H:%M:%S").timestamp()


def f(x):
    try:
        return float(x)
    except ValueError:
        return float("nan")


def samples(path):
    out = []
    for line in open(path):
        p = [c.strip() for c in line.split(",")]
        if len(p) < 8:
            continue
        try:
            out.append((ts(p[0]), f(p[1]), f(p[3]), f(p[4]), f(p[5]), p[6]))
        except ValueError:
            continue
    return out


LINE = re.compile(r"^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d+) \| (.*)$")
RESULT = re.compile(r"^  (\S+)\s+([0-9.]+) ms")
AGAIN = re.compile(r"^  (cublas again)\s+([0-9.]+) ms")


def batches(path):
    """[(shape, label, t0, t1, ms)]"""
    out, shape, t_prev = [], "?", None
    for line in open(path):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        t, text = ts(m.group(1)), m.group(2)
        if text.startswith("shape "):
            shape, t_prev = text.split()[1].rstrip(":"), t
            continue
        r = AGAIN.match(text) or RESULT.match(text)
        if r and t_prev is not None:
            out.append((shape, r.group(1), t_prev, t, f(r.group(2))))
            t_prev = t
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    smp = samples(argv[1])
    rows = 0
    print("| shape | batch | samples | SM clock MHz (median) | power W (median, instant) | temp C (end) "
          "| clock-event reasons (commonest) | median ms | kcycles per launch |")
    print("|---|---|---:|---:|---:|---:|---|---:|---:|")
    for log in argv[2:]:
        for shape, label, t0, t1, ms in batches(log):
            a = t0 + 0.4 * (t1 - t0)
            sel = [s for s in smp if a <= s[0] <= t1]
            if not sel:
                print(f"| {shape} | {label} | 0 | | | | | {ms:.4f} | |")
                continue
            rows += 1
            clk = median(s[1] for s in sel)
            pw = median(s[3] for s in sel)
            reasons = {}
            for s in sel:
                reasons[s[5]] = reasons.get(s[5], 0) + 1
            rs = max(reasons.items(), key=lambda kv: kv[1])[0]
            print(f"| {shape} | {label} | {len(sel)} | {clk:.0f} | {pw:.0f} | {sel[-1][4]:.0f} | {rs} | {ms:.4f} "
                  f"| {ms * clk:.1f} |")
    if rows == 0:
        print("hot_clock_segments: no batch had samples (is the time zone of the stamps nvidia-smi's?)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
