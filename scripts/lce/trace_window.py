#!/usr/bin/env python3
"""The intervals of a few warps of one CTA in a time window of a traced lce launch (s15-lcebody): what a tile's end
looks like k-step by k-step. Reads a Warpstage trace file with python3's sqlite3 and libzstd (trace_first_round.py's
decoder, imported from beside this file).
Prints per warp one line per interval longer than --min-ns: start (us from the launch's start), phase and duration
(us), k-step (the fill number; epilogue phases: the staging's tile count).
Usage: python3 scripts/lce/trace_window.py FILE --cta 0 --from 58 --to 70 [--warps 0,1,4,8] [--kernel ID] [--min-ns 30]
Exit: 0, 1 (no traced kernel), 2 (bad arguments)."""
import argparse
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_first_round as tfr  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('file')
    ap.add_argument('--kernel', type=int)
    ap.add_argument('--cta', type=int, default=0)
    ap.add_argument('--from', dest='lo', type=float, required=True)
    ap.add_argument('--to', dest='hi', type=float, required=True)
    ap.add_argument('--warps', default='0,1,4,8')
    ap.add_argument('--min-ns', type=int, default=30)
    a = ap.parse_args()
    db = sqlite3.connect('file:%s?mode=ro' % a.file, uri=True)
    traced = db.execute('SELECT id, start_ns FROM kernels WHERE traced=1 ORDER BY id').fetchall()
    if not traced:
        print('trace_window.py: no traced kernel in %s' % a.file, file=sys.stderr)
        return 1
    kid = a.kernel if a.kernel is not None else traced[-1][0]
    k0 = [s for i, s in traced if i == kid][0]
    ctas = {i: bl for i, bl in db.execute('SELECT id, block_linear FROM ctas WHERE kernel_id=?', (kid,))}
    warps = {(ctas[c], wi): w for w, c, wi in db.execute('SELECT id, cta_id, warp_index FROM warps WHERE kernel_id=?',
                                                          (kid,))}
    z = tfr.zstd()
    for wi in (int(x) for x in a.warps.split(',') if x):
        wid = warps.get((a.cta, wi))
        if wid is None:
            continue
        print('== CTA %d warp %d' % (a.cta, wi))
        for first, cnt, blob, codec in db.execute('SELECT first_start_ns, count, starts, codec FROM interval_chunks '
                                                  'WHERE warp_id=? ORDER BY chunk_index', (wid,)):
            for s, d, k, _, ks in tfr.decode(z, first, cnt, blob, codec):
                us = (s - k0) / 1e3
                if a.lo <= us < a.hi and d > a.min_ns:
                    print('%8.2f %-5s %5.2f k%d' % (us, tfr.NAMES.get(k, '?'), d / 1e3, ks))
    return 0


if __name__ == '__main__':
    sys.exit(main())
