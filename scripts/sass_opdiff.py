#!/usr/bin/env python3
"""Per-kernel opcode histogram diff of two SASS dumps (check_sass.py --dump DIR), for porting a rung to shared
pieces: "same code" means the same instructions per opcode, and the same main-loop body (the HGMMA block).

Usage: sass_opdiff.py BEFORE_DIR AFTER_DIR [--file pingpong.cu.o.sm_90.sass ...] [--loop]
Prints, per kernel, total instruction counts before/after and every opcode whose count differs; with --loop,
the instructions between the first and last HGMMA of each kernel (the consumer k-step) compared opcode by opcode
with registers and addresses stripped. Exit 0 always (a report, not a check).
"""
import collections
import os
import re
import sys

INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
FUNC = re.compile(r"^\.text\.(\S+):")
LABEL = re.compile(r"^(\.L_x_\d+):")
TARGET = re.compile(r"`\((\.L_x_\d+)\)")


LABELS = {}  # (kernel, label) -> index of the next instruction


def kernels(path):
    out, cur = {}, None
    for line in open(path):
        m = FUNC.match(line)
        if m:
            cur = m.group(1)
            out[cur] = []
            continue
        m = LABEL.match(line)
        if m and cur:
            LABELS[(path, cur, m.group(1))] = len(out[cur])
            continue
        m = INSN.match(line)
        if m and cur:
            out[cur].append(m.group(2))
    return out


def kloops(path, k, ins):
    """The innermost loops that contain an HGMMA: [target, backward branch] spans, shapes only."""
    loops = []
    for j, x in enumerate(ins):
        t = TARGET.search(x)
        if not t or not opcode(x).startswith("BRA"):
            continue
        at = LABELS.get((path, k, t.group(1)))
        if at is None or at > j:
            continue
        body = ins[at:j + 1]
        if any(opcode(y).startswith("HGMMA") for y in body):
            loops.append((j + 1 - at, at, [shape(y) for y in body]))
    loops.sort()
    # innermost: loops that contain no smaller HGMMA loop
    inner = []
    for n, at, b in loops:
        if not any(a2 >= at and a2 + n2 <= at + n for n2, a2, _ in inner):
            inner.append((n, at, b))
    return [b for _, _, b in sorted(inner, key=lambda x: x[1])]


def opcode(insn):
    t = insn.split()
    if t and t[0].startswith("@"):
        t = t[1:]
    return t[0] if t else "?"


def shape(insn):  # opcode + operand kinds, registers/immediates stripped
    s = re.sub(r"\bU?R\d+\b", "R", insn)
    s = re.sub(r"\bU?P\d\b", "P", s)
    s = re.sub(r"0x[0-9a-f]+", "#", s)
    s = re.sub(r"`\(\.L_x_\d+\)", "L", s)
    return s


def loop(ins):
    idx = [i for i, x in enumerate(ins) if opcode(x).startswith("HGMMA")]
    return [shape(x) for x in ins[idx[0]:idx[-1] + 1]] if idx else []


def main():
    a, b = sys.argv[1], sys.argv[2]
    files = [sys.argv[i + 1] for i, x in enumerate(sys.argv) if x == "--file"] or sorted(os.listdir(a))
    for f in files:
        ka, kb = kernels(os.path.join(a, f)), kernels(os.path.join(b, f))
        for k in sorted(set(ka) | set(kb)):
            ia, ib = ka.get(k, []), kb.get(k, [])
            ca, cb = collections.Counter(map(opcode, ia)), collections.Counter(map(opcode, ib))
            diff = {o: (ca[o], cb[o]) for o in set(ca) | set(cb) if ca[o] != cb[o]}
            print(f"{f} {k}: {len(ia)} -> {len(ib)} instructions; opcodes differing: {len(diff)}")
            for o, (x, y) in sorted(diff.items(), key=lambda kv: -abs(kv[1][1] - kv[1][0])):
                print(f"    {o:<14} {x:>5} -> {y:>5}")
            if "--loop" in sys.argv:
                la, lb = loop(ia), loop(ib)
                same = la == lb
                print(f"    HGMMA block (first..last HGMMA): {len(la)} -> {len(lb)} instructions, "
                      f"{'identical' if same else 'DIFFERENT'} (registers/addresses stripped)")
                ka_, kb_ = kloops(os.path.join(a, f), k, ia), kloops(os.path.join(b, f), k, ib)
                print(f"    loops with HGMMA (k-loop first, then the unit loop): {[len(x) for x in ka_]} -> "
                      f"{[len(x) for x in kb_]} instructions; same shape: {[x == y for x, y in zip(ka_, kb_)]} "
                      f"(registers/addresses stripped)")
                if ka_ != kb_ and "--show" in sys.argv:
                    import difflib
                    for x, y in zip(ka_, kb_):
                        sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(x, y, lineterm="", n=1))


if __name__ == "__main__":
    main()
