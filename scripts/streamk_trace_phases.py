#!/usr/bin/env python3
"""Where a traced launch spends its time, from a raw trace buffer (gpu_ladder_trace --dump PREFIX writes one).

Usage: streamk_trace_phases.py BUFFER.bin [...]   (exit 0; 1 when a file is not a complete trace buffer, with a
message; 2 without arguments)

Per buffer: the launch's span on the GPU clock (first CTA start to last CTA end, %globaltimer) and the CTAs' start
spread; then, per warp role (the producer warp 0; consumer warpgroups 0 and 1, their first warps 4 and 8), the time in
each phase (an event's phase lasts until the warp's next non-marker event: kernels/include/warpstage/trace_format.h),
as the mean over CTAs and for the CTA that ends last, in microseconds (clock64 cycles scaled by each CTA's own
cycles-per-ns, from its start/end records); and the consumers' first MmaIssue after the CTA start (the pipeline fill).
Session 11 (s11-skinny): the small and skinny GEMMs of issue 14. Since session 15 it reads format version 2's
packed records (expanded as trace_format.h's forEachEvent does) and refuses a version or a record kind it does not know.
"""
import struct
import sys
from collections import defaultdict

KINDS = ["Other", "Setup", "WaitSlot", "IssueLoad", "WaitData", "MmaIssue", "MmaWait", "Release", "Epilogue", "Store",
         "Load", "Sync", "Compute", "WaitOrder", "WaitPartial", "Fixup"]
END, TILE_BEGIN, TILE_END, LOAD_READY = 0xF0, 0xF1, 0xF2, 0xF3
MARKERS = {TILE_BEGIN, TILE_END, LOAD_READY}
KSTEP4, LOAD2 = 0xF4, 0xF5  # packed records of format version 2 (trace_format.h), expanded by expand()
PAIR = 0xF6  # format version 3: two phase events of one k-step, both kinds in aux
VERSIONS = (1, 2, 3)          # trace_format.h's kOldestFormatVersion .. kFormatVersion


MAGIC = 0x57535452  # "WSTR", trace_format.h's kMagic


class BadBuffer(Exception):
    pass


def load(path):
    try:
        b = open(path, "rb").read()
    except OSError as e:
        raise BadBuffer(f"cannot read it: {e.strerror}")
    if len(b) < 64:
        raise BadBuffer(f"{len(b)} bytes: shorter than the 64-byte buffer header")
    magic, version, ctas, warps, epw, stages, bpk = struct.unpack_from("<7I", b, 0)
    if magic != MAGIC:
        raise BadBuffer(f"magic 0x{magic:08x}, not a Warpstage trace buffer (0x{MAGIC:08x}, trace_format.h)")
    if version not in VERSIONS:
        raise BadBuffer(f"trace format version {version}; this script reads versions {VERSIONS[0]} to {VERSIONS[-1]}")
    need = 64 + 64 * ctas + ctas * warps * (16 + 16 * epw)
    if len(b) < need:
        raise BadBuffer(f"{len(b)} bytes, but its header ({ctas} CTAs, {warps} warps, {epw} events per warp) "
                        f"needs {need}")
    recs = []
    for c in range(ctas):
        gs, cs, ge, ce, sm, fl = struct.unpack_from("<QQQQII", b, 64 + 64 * c)
        recs.append((gs, cs, ge, ce, sm, fl))
    region = 16 + 16 * epw
    base = 64 + 64 * ctas
    warps_ev = {}
    for c in range(ctas):
        for w in range(warps):
            off = base + (c * warps + w) * region
            count, role, wg, ri, fl = struct.unpack_from("<IBBBB", b, off)
            n = min(count, epw)
            ev = [struct.unpack_from("<QihBB", b, off + 16 + 16 * i) for i in range(n)]
            odd = [e[4] for e in ev if e[4] > LOAD_READY and not (version >= 2 and e[4] in (KSTEP4, LOAD2))
                   and not (version >= 3 and e[4] == PAIR)]
            if odd:
                raise BadBuffer(f"CTA {c} warp {w}: record kind 0x{odd[0]:02X}, which format version {version} "
                                "does not define")
            warps_ev[(c, w)] = (role, expand(ev))
    return dict(ctas=ctas, warps=warps, epw=epw, stages=stages, bpk=bpk, recs=recs, ev=warps_ev)


def expand(ev):
    """trace_format.h's forEachEvent: each kEventKStep4 record as its four events (MmaWait, Release of k-step
    kstep - lag; WaitData, MmaIssue of kstep), each kEventLoad2 as its two (WaitSlot, IssueLoad), each kEventPair as its
    two (the kinds in aux)"""
    out, prev = [], 0
    for clock, kstep, aux, slot, kind in ev:
        if kind not in (KSTEP4, LOAD2, PAIR):
            out.append((clock, kstep, aux, slot, kind))
            prev = clock
            continue
        c0 = prev + (((clock & 0xFFFFFFFF) - (prev & 0xFFFFFFFF)) & 0xFFFFFFFF)
        stages = slot & 0xF

        def slot_of(k):
            return 0xFF if stages == 0 or k < 0 else k % stages
        if kind == LOAD2:
            c1 = c0 + (clock >> 32)
            out += [(c0, kstep, 0, slot_of(kstep), 2), (c1, kstep, 0, slot_of(kstep), 3)]
            prev = c1
            continue
        if kind == PAIR:
            c1 = c0 + (clock >> 32)
            kinds = aux & 0xFFFF
            out += [(c0, kstep, 0, slot_of(kstep), kinds & 0xFF), (c1, kstep, 0, slot_of(kstep), kinds >> 8)]
            prev = c1
            continue
        c1 = c0 + ((clock >> 32) & 0xFFFF)
        c2 = c1 + (clock >> 48)
        c3 = c2 + (aux & 0xFFFF)
        k0 = kstep - (slot >> 4)
        out += [(c0, k0, 0, slot_of(k0), 6), (c1, k0, 0, slot_of(k0), 7), (c2, kstep, 0, slot_of(kstep), 4),
                (c3, kstep, 0, slot_of(kstep), 5)]
        prev = c3
    return out


def phases(ev):
    """cycles per kind for one warp's events"""
    out = defaultdict(int)
    cur = None
    for clock, kstep, aux, slot, kind in ev:
        if kind in MARKERS:
            continue
        if cur is not None:
            out[cur[1]] += clock - cur[0]
        cur = None if kind == END else (clock, kind)
    return out


def main(paths):
    bad = 0
    for path in paths:
        try:
            t = load(path)
        except BadBuffer as e:
            print(f"streamk_trace_phases.py: {path}: {e}", file=sys.stderr)
            bad += 1
            continue
        recs = [r for r in t["recs"] if r[5] & 3 == 3]
        if not recs:
            print(f"{path}: no complete CTA records")
            continue
        g0 = min(r[0] for r in recs)
        span = (max(r[2] for r in recs) - g0) / 1e3
        spread = (max(r[0] for r in recs) - g0) / 1e3
        durs = sorted((r[2] - r[0]) / 1e3 for r in recs)
        print(f"\n## {path}: {t['ctas']} CTAs, {t['warps']} warps, {t['stages']} stages, {t['bpk']} B per k-step")
        print(f"launch span {span:.2f} us (first CTA start to last CTA end); CTA starts spread {spread:.2f} us; "
              f"CTA durations min/median/max {durs[0]:.2f}/{durs[len(durs) // 2]:.2f}/{durs[-1]:.2f} us")
        last = max(range(t["ctas"]), key=lambda c: t["recs"][c][2])
        cpn = {}  # cycles per ns, per CTA
        for c, r in enumerate(t["recs"]):
            if r[5] & 3 == 3 and r[2] > r[0]:
                cpn[c] = (r[3] - r[1]) / (r[2] - r[0])
        for w, label in ((0, "producer (warp 0)"), (4, "consumer wg0 (warp 4)"), (8, "consumer wg1 (warp 8)")):
            tot = defaultdict(float)
            n = 0
            lastph = {}
            fill = []
            for c in range(t["ctas"]):
                if c not in cpn or (c, w) not in t["ev"]:
                    continue
                role, ev = t["ev"][(c, w)]
                ph = phases(ev)
                for k, v in ph.items():
                    tot[k] += v / cpn[c] / 1e3
                n += 1
                if c == last:
                    lastph = {k: v / cpn[c] / 1e3 for k, v in ph.items()}
                first_mma = next((e[0] for e in ev if e[4] == 5), None)
                if first_mma is not None:
                    fill.append((first_mma - t["recs"][c][1]) / cpn[c] / 1e3)
            if not n:
                continue
            keys = sorted(set(tot) | set(lastph), key=lambda k: -tot.get(k, 0))
            cells = ", ".join(f"{KINDS[k] if k < 16 else k} {tot[k] / n:.2f} ({lastph.get(k, 0):.2f})" for k in keys)
            extra = f"; first MmaIssue after CTA start: median {sorted(fill)[len(fill) // 2]:.2f} us" if fill else ""
            print(f"- {label}: mean over {n} CTAs (the last-ending CTA {last}) in us: {cells}{extra}")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
