"""Summarises the injection probe's sinks: python3 analyze.py SINKDIR LOGDIR (format: see inject.cpp's header)."""
import bisect
import collections
import os
import re
import sys


def load(path):
    """Lines by type. For big files (the n5 loops) K/R lines are only counted (as empty lists), to stay fast."""
    d = collections.defaultdict(list)
    light = os.path.getsize(path) > (16 << 20)
    with open(path, errors="replace") as f:
        for ln in f:
            if light and ln[0] in "KR" and ln[1] == " ":
                d[ln[0]].append(())
                continue
            parts = ln.rstrip("\n").split(" ")
            d[parts[0]].append(parts)
    return d


def ranges_from_markers(M):
    """CUPTI marker records: START (flags 0x2) / END (0x4) share an id; INSTANTANEOUS 0x1."""
    start, out, inst = {}, [], []
    for m in M:
        flags, ts, mid, name, dom, tid = int(m[1], 16), int(m[2]), m[3], " ".join(m[7:]), m[6], m[5]
        if flags & 1:
            inst.append((name, dom))
        elif flags & 2:
            start[mid] = (ts, name, dom, tid)
        elif flags & 4 and mid in start:
            s = start.pop(mid)
            out.append((s[1], s[2], s[0], ts, s[3], tid))
    return out, inst, len(start)


def ranges_from_own(N):
    stacks, out, starts, bad = collections.defaultdict(list), [], {}, 0
    for n in N:
        op, ts, tid, dom, name = n[1], int(n[2]), n[3], n[5], " ".join(n[6:])
        if op == "push":
            stacks[(tid, dom)].append((ts, name, len(stacks[(tid, dom)])))
        elif op == "pop":
            if stacks[(tid, dom)]:
                s = stacks[(tid, dom)].pop()
                out.append((s[1], dom, s[0], ts, tid, s[2]))
            else:
                bad += 1
        elif op.startswith("start:"):
            starts[op[6:]] = (ts, name, dom)
        elif op.startswith("end:") and op[4:] in starts:
            s = starts.pop(op[4:])
            out.append((s[1], s[2], s[0], ts, tid, -1))
    marks = [" ".join(n[6:]) for n in N if n[1] == "mark"]
    return out, marks, bad + sum(len(v) for v in stacks.values())


def contains_kernels(rng, K):
    """How many kernels lie completely inside the range (same time base check). K: sorted (start, end) pairs."""
    i = bisect.bisect_left(K, (rng[2], 0))
    n = 0
    while i < len(K) and K[i][0] <= rng[3]:
        n += K[i][1] <= rng[3]
        i += 1
    return n


def main():
    sdir, ldir = sys.argv[1], sys.argv[2]
    print("\n================ SUMMARY ================")
    bench = collections.defaultdict(list)
    for exp in sorted(os.listdir(sdir)):
        files = sorted(f for f in os.listdir(os.path.join(sdir, exp)) if f.endswith(".txt"))
        log = open(os.path.join(ldir, exp + ".log"), errors="replace").read() if os.path.exists(os.path.join(ldir, exp + ".log")) else ""
        rc = re.search(r"RC (\S+) WALL_MS (\d+)", log)
        print(f"\n[{exp}] rc={rc.group(1) if rc else '?'} wall={rc.group(2) if rc else '?'}ms files={len(files)}")
        nk = 0
        for fn in files:
            d = load(os.path.join(sdir, exp, fn))
            nk += len(d["K"])
            h = d["H"][0] if d["H"] else ["H", "?", "?", "?"]
            info = [" ".join(x[1:]) for x in d["I"] if not x[1].startswith("nvtx_core")]
            counts = {k: len(v) for k, v in d.items() if k in "K C S R D G M MD N B U".split()}
            print(f"  pid={h[1]} ppid={h[2]} exe={os.path.basename(h[3])} counts={counts}")
            print("    " + "; ".join(i for i in info if not i.startswith("enable")))
            bad_enable = [i for i in info if i.startswith("enable") and not i.endswith("=ok")]
            if bad_enable:
                print("    enable failures:", bad_enable)
            for t in d["T"]:
                print("    " + " ".join(t[1:2] + t[5:]))
            E = [" ".join(e[1:2]) for e in d["E"]]
            B = [int(b[1]) for b in d["B"]]
            if B:
                print(f"    buffers={len(B)} recs={[int(b[2]) for b in d['B']][:12]} gaps_ms={[round((b - a) / 1e6) for a, b in zip(B, B[1:])][:12]} dropped={sum(int(b[3]) for b in d['B'])} events={E}")
            K, R = d["K"], d["R"]
            KS = sorted((int(k[1]), int(k[2])) for k in K if k)
            if d["M"]:
                rngs, inst, unclosed = ranges_from_markers(d["M"])
                print(f"    CUPTI markers (name, domain, start tid, end tid): ranges={[(r[0], r[1], r[4], r[5]) for r in rngs]} instant={inst} unclosed={unclosed} flags={sorted(set(m[1] for m in d['M']))}")
                print(f"      kernels inside each range: {[(r[0], contains_kernels(r, KS)) for r in rngs[:12]]}")
                print(f"      MARKER_DATA colors: {sorted(set(m[2] for m in d['MD']))}")
            if d["N"]:
                rngs, marks, unbalanced = ranges_from_own(d["N"])
                names = collections.Counter((r[0], r[1]) for r in rngs)
                print(f"    own NVTX: ranges={dict(list(names.items())[:12])} marks={marks[:6]} unbalanced={unbalanced}")
                print(f"      (name, tid, depth, kernels inside): {[(r[0], r[4], r[5], contains_kernels(r, KS)) for r in rngs[:12]]}")
            if K and R and K[0]:
                rc_ids = {r[4]: " ".join(r[6:]) for r in R}
                matched = collections.Counter(rc_ids.get(k[3], "NONE") for k in K)
                print(f"    kernel corr ids -> runtime API: {dict(matched)}")
            if K and K[0]:
                g = collections.Counter((k[5], k[6]) for k in K)
                if any(x[0] != "0" for x in g):
                    print(f"    kernels per (graphId, graphNodeId): {dict(g)}")
            if d["G"]:
                print(f"    GRAPH_TRACE records: {[(g[3], g[4], int(g[2]) - int(g[1])) for g in d['G']]}")
            if R and R[0] and ("graph" in exp):
                print(f"    runtime APIs: {sorted(set(' '.join(r[6:]) for r in R))}")
            if d["U"]:
                print(f"    other kinds: {collections.Counter(u[1] for u in d['U'])}")
        launched = re.findall(r"launched (\d+)", log)
        if launched:
            print(f"  app printed last launched={launched[-1]}; kernels in sink={nk}")
        for m in re.findall(r"^(MAPS .*|CHILD .*|TORCH .*|subprocess rc.*|spawn exitcode.*)$", log, re.M):
            print("  " + m)
        b = re.search(r"BENCH loop_s=([\d.]+)", log)
        if b:
            kind = "on" if "_on_" in exp else "off"
            bench[kind].append((float(b.group(1)), int(rc.group(2)) if rc else 0))
        err = [ln for ln in log.splitlines() if re.search(r"error|Traceback|Segmentation|Abort", ln, re.I)]
        if err:
            print("  log:", err[:4])
    if bench:
        print("\n[t7 overhead] loop seconds / process wall ms:", dict(bench))
        if bench.get("on") and bench.get("off"):
            on = sorted(x[0] for x in bench["on"])[len(bench["on"]) // 2]
            off = sorted(x[0] for x in bench["off"])[len(bench["off"]) // 2]
            onw = sorted(x[1] for x in bench["on"])[len(bench["on"]) // 2]
            offw = sorted(x[1] for x in bench["off"])[len(bench["off"]) // 2]
            print(f"  median loop on/off = {on:.4f}/{off:.4f} = {on / off:.3f}x; median process wall {onw}/{offw} ms = {onw / offw:.3f}x")


if __name__ == "__main__":
    main()
