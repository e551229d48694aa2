#!/usr/bin/env python3
"""Where a traced lce rung-4 launch spends its first round and its tail, read from a Warpstage trace file without
the app (s12-lce, docs/kernel-notes/lce.md): python3's sqlite3 and libzstd through ctypes.
Prints the traced kernels, then for the one picked (--kernel ID, default the last traced): the CTAs' end times
(median, last, and the last few CTAs with their tile counts), and for --ctas (linear block indices) each tile of the
epilogue warp (1) and the consumer warps (4, 8): user (U) or candidate (c) tile, start-end in us from the launch's
start, and its largest phases (word = wait for turn, wdata = wait for data, mmaI, store, ...).
Usage: python3 scripts/lce/trace_first_round.py FILE [--kernel ID] [--ctas 0,60,120] [--tiles 3]
Interval chunks (core/src/store_chunks.cpp): codec 1 = one zstd frame in `starts`: four LEB128 column lengths, then
starts (zigzag, delta against the previous interval's end), durations (zigzag), kinds (bytes), slots (zigzag),
k-steps (zigzag, delta against the previous k-step, starting at -1)."""
import argparse
import bisect
import collections
import ctypes
import ctypes.util
import sqlite3
import statistics
import sys

NAMES = {0: 'other', 1: 'setup', 2: 'wslot', 3: 'issue', 4: 'wdata', 5: 'mmaI', 6: 'mmaW', 7: 'rel', 8: 'epi',
         9: 'store', 10: 'load', 11: 'sync', 12: 'comp', 13: 'word', 14: 'wpart', 15: 'fix'}


def zstd():
    z = ctypes.CDLL(ctypes.util.find_library('zstd') or 'libzstd.so.1')
    z.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
    z.ZSTD_decompress.restype = ctypes.c_size_t
    return z


def varints(buf, n):
    out, pos = [], 0
    for _ in range(n):
        v = sh = 0
        while True:
            c = buf[pos]
            pos += 1
            v |= (c & 0x7f) << sh
            sh += 7
            if c < 0x80:
                break
        out.append(v)
    return out, pos


def zz(v):
    return (v >> 1) ^ -(v & 1)


def decode(z, first, count, blob, codec):
    if codec != 1:
        sys.exit('raw interval chunks (codec 0) are not read here')
    n = z.ZSTD_getFrameContentSize(blob, len(blob))
    buf = ctypes.create_string_buffer(n)
    if z.ZSTD_decompress(buf, n, blob, len(blob)) != n:
        sys.exit('bad zstd frame')
    raw = buf.raw
    lens, p = varints(raw, 4)
    cols = []
    for ln in lens:
        cols.append(raw[p:p + ln])
        p += ln
    cols.append(raw[p:])
    st, du, sl, ks = (varints(cols[i], count)[0] for i in (0, 1, 3, 4))
    cur, pk, out = first, -1, []
    for i in range(count):
        s = cur + zz(st[i])
        d = zz(du[i])
        cur = s + d
        pk += zz(ks[i])
        out.append((s, d, cols[2][i], zz(sl[i]), pk))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('file')
    ap.add_argument('--kernel', type=int)
    ap.add_argument('--ctas', default='0,60,120')
    ap.add_argument('--tiles', type=int, default=3)
    a = ap.parse_args()
    db = sqlite3.connect('file:%s?mode=ro' % a.file, uri=True)
    traced = db.execute('SELECT id, name, start_ns, end_ns FROM kernels WHERE traced=1 ORDER BY id').fetchall()
    for kid, name, s, e in traced:
        print('kernel %d %.1f us %s' % (kid, (e - s) / 1e3, name[:90]))
    if not traced:
        return 1
    kid = a.kernel if a.kernel is not None else traced[-1][0]
    k0 = [t[2] for t in traced if t[0] == kid][0]
    ctas = {i: (bl, e) for i, bl, e in db.execute('SELECT id, block_linear, end_ns FROM ctas WHERE kernel_id=?', (kid,))}
    warps = {w: (c, wi) for w, c, wi in db.execute('SELECT id, cta_id, warp_index FROM warps WHERE kernel_id=?', (kid,))}
    byblock = {(ctas[c][0], wi): w for w, (c, wi) in warps.items()}
    tiles = collections.defaultdict(list)
    for wid, tm, tn, s, e in db.execute('SELECT warp_id, tile_m, tile_n, start_ns, end_ns FROM tiles WHERE kernel_id=?',
                                        (kid,)):
        tiles[wid].append(((s - k0) / 1e3, (e - k0) / 1e3, tm, tn))
    for v in tiles.values():
        v.sort()
    ends = sorted(((e - k0) / 1e3, bl) for bl, e in ctas.values())
    print('CTA ends: median %.1f us, last %.1f us; last CTAs: %s' % (
        statistics.median(x for x, _ in ends), ends[-1][0],
        ', '.join('%d (%.1f us, %d tiles, %d user)' % (bl, e, len(tiles[byblock[(bl, 4)]]),
                                                    sum(t[3] >= 1000 for t in tiles[byblock[(bl, 4)]]))
                  for e, bl in ends[-6:])))
    z = zstd()
    for bl in (int(x) for x in a.ctas.split(',') if x):
        print('== CTA %d' % bl)
        for wi in (1, 4, 8):
            wid = byblock.get((bl, wi))
            if wid is None:
                continue
            T = tiles[wid][:a.tiles]
            starts = [t[0] for t in T]
            stop = tiles[wid][a.tiles][0] if len(tiles[wid]) > a.tiles else float('inf')  # the next tile's start
            acc = [collections.Counter() for _ in T]
            for first, cnt, blob, codec in db.execute(
                    'SELECT first_start_ns, count, starts, codec FROM interval_chunks WHERE warp_id=? ORDER BY '
                    'chunk_index', (wid,)):
                for s, d, k, _, _ in decode(z, first, cnt, blob, codec):
                    i = bisect.bisect_right(starts, (s - k0) / 1e3) - 1
                    if 0 <= i < len(T) and (s - k0) / 1e3 < stop:
                        acc[i][NAMES.get(k, 'other')] += d / 1e3
                if first - k0 > (T[-1][1] * 1e3 if T else 0):
                    break
            print('  warp %d  ' % wi + ' | '.join(
                '%s%d %.1f-%.1f %s' % ('U' if t[3] >= 1000 else 'c', t[2], t[0], t[1],
                                       ','.join('%s %.1f' % kv for kv in c.most_common(4) if kv[1] > 0.5))
                for t, c in zip(T, acc)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
