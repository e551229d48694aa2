#!/usr/bin/env python3
"""Executed instructions of the steady-state consumer k-loop, per kernel, from a SASS listing (session 13, issue 14).

Input: nvdisasm output (`nvdisasm -c [-novliw] X.cubin`, or check_sass.py --dump's *.sass files) or `cuobjdump -sass`.
For every kernel whose code holds HGMMA, each loop (a branch back to a label at or above it) whose span holds HGMMAs
is walked: every path from the loop's head to its back branch, a block at most once, and the steady-state path is
picked by these rules:
  * every HGMMA of the loop's span is on it (the k-step's wgmmas);
  * each mbarrier wait succeeds at once (the branch right after a TRYWAIT that tests its predicate is not taken);
  * no named barrier (BAR.SYNC / BAR.ARV: the ordering barrier's k-step), no trace flush (MEMBAR, FENCE.VIEW.ASYNC,
    UBLKCP: a half of the warp's staging ring copied out);
  * the slot's release: the most mbarrier arrives (SYNCS.ARRIVE: lane 0's path, which the warp executes);
  * traced kernels: the most shared-memory stores (STS: the k-step's trace events, kt >= 2 batches four), in the
    fewest blocks (the batch's one-test fast path, not the event-by-event path of the k-step that fills a half), then
    the shortest.
Instructions are counted by address (16 bytes each), so the ones an old nvdisasm (CUDA 11.8) leaves out of its
listing (some sm_90a instructions, and with them the labels at their addresses) count too; `undecoded` says how many
of the path's were (a left-out label is placed on code no label reaches: fill_gaps; a heuristic -- prefer a CUDA >= 12 nvdisasm,
which leaves nothing out).

Usage: sass_walk.py FILE.sass [--kernel REGEX] [--all-paths] [--json]
Prints, per kernel and loop: head address, back-branch address, paths walked, the steady path's executed
instructions, its HGMMA / STS / R2UR counts and the undecoded count. Exit 0 (a report), 2 on bad input.
"""
import argparse
import json
import os
import re
import sys

INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
FUNC_NV = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
FUNC_CUOBJ = re.compile(r"^\s*Function\s*:\s*(\S+)")
OTHER_SECTION = re.compile(r"^\s*\.section\s")
TARGET = re.compile(r"`\((\.L_x_\d+)\)")
PRED = re.compile(r"^@(!?)(U?P\d+|PT)\s+")
FLUSH = re.compile(r"\b(MEMBAR|UBLKCP)\b|FENCE\.VIEW\.ASYNC")
NAMEDBAR = re.compile(r"\bBAR\.(SYNC|ARV|RED)")
STS = re.compile(r"\bSTS(\.|\s)")
MAX_PATHS = 20000


def parse(path):
    """{kernel: (instructions [(addr, text)], labels {label: addr})}"""
    funcs, cur = {}, None
    for line in open(path, errors="replace"):
        m = FUNC_NV.match(line) or FUNC_CUOBJ.match(line)
        if m:
            cur = m.group(1)
            funcs[cur] = ([], {})
            continue
        if OTHER_SECTION.match(line):
            cur = None
            continue
        if cur is None:
            continue
        m = LABEL.match(line)
        if m:
            funcs[cur][1][m.group(1)] = None  # the next instruction's address
            continue
        m = INSN.match(line)
        if m:
            addr = int(m.group(1), 16)
            ins, labels = funcs[cur]
            for k, v in labels.items():
                if v is None:
                    labels[k] = addr
            ins.append((addr, m.group(2)))
    return {k: fill_gaps(ins, labels) for k, (ins, labels) in funcs.items()}


def ends_flow(text):
    br = branch_of(text)
    return br is not None and not br[1]


def fill_gaps(ins, labels):
    """The instructions an old nvdisasm leaves out, as "<undecoded>" at their addresses; a branch's label that it left
    out with them (it numbers labels in address order) placed at the first such address between its numbered
    neighbours that follows an unconditional branch (else the first one there)."""
    out = []
    for k, (a, t) in enumerate(ins):
        if k and a - ins[k - 1][0] > 16:
            out.extend((b, "<undecoded>") for b in range(ins[k - 1][0] + 16, a, 16))
        out.append((a, t))
    wanted = []
    for _, t in out:
        m = TARGET.search(t)
        if m and m.group(1) not in labels and m.group(1) not in wanted:
            wanted.append(m.group(1))
    # orphans: code after an unconditional branch that no label names (nothing else reaches it)
    labelled = set(v for v in labels.values() if v is not None)
    orphans = [a for j, (a, t) in enumerate(out) if j and ends_flow(out[j - 1][1]) and a not in labelled
               and not t.startswith("NOP") and not (t.startswith("BRA") and TARGET.search(t) is None)]
    # left-out labels in the order of their first branch, orphans in address order (a heuristic: check the listing)
    for name, a in zip(wanted, orphans):
        labels[name] = a
    return out, labels


def branch_of(text):
    """(target label or None, conditional, predicate (neg, name) or None) of a branch; None if not a branch."""
    t = text
    pred = None
    m = PRED.match(t)
    if m:
        pred = (m.group(1) == "!", m.group(2))
        t = t[m.end():]
    op = t.split()[0] if t.split() else ""
    if op.startswith("BRA") or op.startswith("JMP"):
        tm = TARGET.search(t)
        cond = pred is not None and pred[1] != "PT" or ", `(" in t and not t.startswith("BRA `")
        return (tm.group(1) if tm else None, cond, pred)
    if op in ("EXIT", "RET", "RET.REL", "RET.ABS", "BRX", "JMX") or op.startswith("EXIT") or op.startswith("RET"):
        return (None, pred is not None, pred)
    return None


def blocks(ins, labels):
    """Basic blocks: [(start index, end index exclusive)], and the index of each label's address."""
    at = {a: i for i, (a, _) in enumerate(ins)}
    starts = {0}
    for a in labels.values():
        if a is not None and a in at:
            starts.add(at[a])
    for i, (_, t) in enumerate(ins):
        if branch_of(t) is not None and i + 1 < len(ins):
            starts.add(i + 1)
    s = sorted(starts)
    return [(s[k], s[k + 1] if k + 1 < len(s) else len(ins)) for k in range(len(s))], at


def walk_loop(ins, labels, blks, at, head_i, back_i):
    """Paths (lists of block indices) from the block at head_i to the block ending at back_i."""
    start_of = {b[0]: k for k, b in enumerate(blks)}
    block_at = {}
    for k, (s, e) in enumerate(blks):
        for i in range(s, e):
            block_at[i] = k
    head_b, back_b = block_at[head_i], block_at[back_i]

    def succs(k):
        s, e = blks[k]
        last = ins[e - 1][1]
        br = branch_of(last)
        out = []
        if br is None:
            if e < len(ins):
                out.append(block_at[e])
            return out
        target, cond, pred = br
        # a TRYWAIT's retry branch: the wait succeeds at once in the steady state
        tw = None
        for i in range(s, e - 1):
            m = re.search(r"TRYWAIT\s+(P\d+)", ins[i][1])
            if m:
                tw = m.group(1)
        retry = tw is not None and pred is not None and pred[0] and pred[1] == tw
        if target is not None and not retry:
            ta = labels.get(target)
            if ta is not None and ta in at:
                out.append(block_at[at[ta]])
        if (cond or retry) and e < len(ins):
            out.append(block_at[e])
        return out

    paths, stack = [], [(head_b, (head_b,), frozenset((head_b,)))]
    while stack and len(paths) < MAX_PATHS:
        k, p, seen = stack.pop()
        if k == back_b:
            paths.append(list(p))
            continue
        for n in succs(k):
            if n in seen or not head_b <= n <= back_b:  # within the loop's span, each block once
                continue
            stack.append((n, p + (n,), seen | {n}))
    return paths


def path_stats(ins, blks, path, back_i):
    texts, count, undecoded, sts_blocks = [], 0, 0, 0
    for k in path:
        s, e = blks[k]
        if k == path[-1]:
            e = back_i + 1
        for i in range(s, e):
            texts.append(ins[i][1])
        sts_blocks += any(STS.search(ins[i][1]) for i in range(s, e))
        count += e - s
        undecoded += sum(ins[i][1] == "<undecoded>" for i in range(s, e))
    return {
        "executed": count,
        "undecoded": undecoded,
        "hgmma": sum("HGMMA" in t for t in texts),
        "sts": sum(bool(STS.search(t)) for t in texts),
        "arrive": sum("SYNCS.ARRIVE" in t for t in texts),
        "sts_blocks": sts_blocks,
        "r2ur": sum(t.split()[0].startswith("R2UR") or " R2UR " in t for t in texts if t.split()),
        "flush": any(FLUSH.search(t) for t in texts),
        "namedbar": any(NAMEDBAR.search(t) for t in texts),
    }


def loops_of(name, ins, labels, all_paths=False):
    blks, at = blocks(ins, labels)
    spans = []  # (head index, back-branch index) of every loop whose span holds an HGMMA
    for i, (a, t) in enumerate(ins):
        br = branch_of(t)
        if not br or br[0] is None:
            continue
        ta = labels.get(br[0])
        if ta is None or ta > a or ta not in at or not br[1]:  # a loop's back branch is conditional
            continue
        if any("HGMMA" in ins[j][1] for j in range(at[ta], i + 1)):
            spans.append((at[ta], i))
    # the innermost ones only (the k-loops, not the unit loops around them)
    spans = [(h, b) for h, b in spans if not any((h2, b2) != (h, b) and h <= h2 and b2 <= b for h2, b2 in spans)]
    out = []
    for hi, i in spans:
        a, ta = ins[i][0], ins[hi][0]
        n_hg = sum("HGMMA" in ins[j][1] for j in range(hi, i + 1))
        paths = walk_loop(ins, labels, blks, at, hi, i)
        stats = [path_stats(ins, blks, p, i) for p in paths]
        ok = [s for s in stats if s["hgmma"] == n_hg and not s["flush"] and not s["namedbar"]]
        steady = None
        if ok:
            steady = sorted(ok, key=lambda s: (-s["arrive"], -s["sts"], s["sts_blocks"], s["executed"]))[0]
        out.append({"kernel": name, "head": f"{ta:04x}", "back": f"{a:04x}", "hgmma_in_span": n_hg,
                    "paths": len(paths), "steady": steady,
                    "all": sorted({(s["executed"], s["sts"], s["hgmma"], s["flush"], s["namedbar"], s["arrive"], s["sts_blocks"]) for s in stats})
                    if all_paths else None})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sass", nargs="+")
    ap.add_argument("--kernel", default="", help="only kernels whose (mangled) name matches this regex")
    ap.add_argument("--all-paths", action="store_true", help="also list every path's (executed, STS, HGMMA, flush, bar)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res = []
    for f in a.sass:
        try:
            funcs = parse(f)
        except OSError as e:
            print(f"sass_walk: {e}", file=sys.stderr)
            return 2
        for name, (ins, labels) in funcs.items():
            if a.kernel and not re.search(a.kernel, name):
                continue
            if not any("HGMMA" in t for _, t in ins):
                continue
            for lp in loops_of(name, ins, labels, a.all_paths):
                lp["file"] = f
                res.append(lp)
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    for lp in res:
        s = lp["steady"]
        line = (f"{os.path.basename(lp['file'])}: {lp['kernel'][:90]}  loop {lp['head']}..{lp['back']}  "
                f"paths {lp['paths']}  ")
        if s:
            line += (f"steady: {s['executed']} executed (HGMMA {s['hgmma']}, STS {s['sts']}, R2UR {s['r2ur']}, "
                     f"undecoded {s['undecoded']})")
        else:
            line += "steady: none (no path holds every HGMMA without a flush or a named barrier)"
        print(line)
        if lp["all"]:
            for p in lp["all"]:
                print(f"    path: executed {p[0]}, STS {p[1]}, HGMMA {p[2]}, flush {p[3]}, named barrier {p[4]}, arrives {p[5]}, blocks with STS {p[6]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
