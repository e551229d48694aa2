#!/usr/bin/env python3
"""Prints what a Warpstage trace file holds (runs, kernels, intervals, stalls, key metrics).

Reads the SQLite file directly (read-only); used on the device machine where the Qt viewer
is not available. Usage: summarize.py FILE
"""
import os
import sqlite3
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    path = sys.argv[1]
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    q = lambda sql, *a: db.execute(sql, a).fetchall()
    v4 = bool(q("SELECT 1 FROM sqlite_master WHERE name = 'load_chunks'"))
    print("file %s: %.1f MB" % (path, os.path.getsize(path) / 1e6))
    for (rid, variant, status, reason, dev, sms, clk, drv, cuda, cupti, host, started, cmd, notes, has_st) in q(
            "SELECT id, variant, status, failure_reason, device_name, sm_count, sm_clock_khz, driver_version, "
            "cuda_version, cupti_version, host, started_at, command_line, notes, has_stalls FROM runs ORDER BY id"):
        print("=" * 100)
        print("run %d  %-17s %s%s" % (rid, variant, status.upper(), (": " + reason) if reason else ""))
        print("  device %s, %d SMs @ %d MHz; driver %s, CUDA %s, %s; host %s; %s" %
              (dev, sms, clk // 1000, drv, cuda, cupti, host, started))
        print("  command: %s" % cmd)
        for n in notes.splitlines():
            print("  note: %s" % n)
        for (kid, name, traced, s, e, res, drop) in q(
                "SELECT id, name, traced, start_ns, end_ns, align_residual_ns, dropped_events FROM kernels "
                "WHERE run_id=? ORDER BY id", rid):
            nc = q("SELECT COUNT(*), MIN(start_ns), MAX(end_ns) FROM ctas WHERE kernel_id=?", kid)[0]
            nw = q("SELECT COUNT(*) FROM warps WHERE kernel_id=?", kid)[0][0]
            ni = q("SELECT COALESCE(SUM(count),0) FROM interval_chunks WHERE kernel_id=?", kid)[0][0]
            nl = q("SELECT COALESCE(SUM(count),0) FROM load_chunks WHERE kernel_id=?" if v4 else
                   "SELECT COUNT(*) FROM loads WHERE kernel_id=?", kid)[0][0]  # schema 4 packs loads per CTA
            ns = q("SELECT COALESCE(SUM(count),0), COUNT(*) FROM stall_samples WHERE kernel_id=?", kid)[0]
            inside = ""
            if nc[0]:
                inside = " ctas inside CUPTI: %s" % ("yes" if nc[1] >= s and nc[2] <= e else "NO")
            print("  kernel %d %s %8.1f us  ctas %d warps %d intervals %d loads %d stall samples %d (%d rows) "
                  "residual %.0f ns dropped %d%s  %s" % (kid, "traced  " if traced else "untraced", (e - s) / 1e3,
                                                           nc[0], nw, ni, nl, ns[0], ns[1], res, drop, inside, name[:60]))
        roles = q("SELECT w.role_name, COUNT(DISTINCT w.id), COALESCE(SUM(c.count),0) FROM warps w JOIN kernels k ON "
                  "k.id=w.kernel_id LEFT JOIN interval_chunks c ON c.warp_id=w.id WHERE k.run_id=? GROUP BY w.role_name",
                  rid)
        print("  roles: " + ", ".join("%s: %d warps %d intervals" % r for r in roles))
        top = q("SELECT s.role, s.stage, SUM(s.count) FROM stall_samples s JOIN kernels k ON k.id=s.kernel_id "
                "WHERE k.run_id=? GROUP BY s.role, s.stage ORDER BY 3 DESC LIMIT 5", rid)
        tot = sum(t[2] for t in q("SELECT s.role, s.stage, SUM(s.count) FROM stall_samples s JOIN kernels k ON "
                                  "k.id=s.kernel_id WHERE k.run_id=? GROUP BY 1,2", rid)) or 1
        if top:
            print("  stalls by role/stage: " + ", ".join("%s/%s %.0f%%" % (r, st or "?", 100.0 * c / tot) for r, st, c in top))
        topr = q("SELECT s.reason_label, SUM(s.count) FROM stall_samples s JOIN kernels k ON k.id=s.kernel_id "
                 "WHERE k.run_id=? GROUP BY 1 ORDER BY 2 DESC LIMIT 4", rid)
        if topr:
            print("  stalls by reason: " + ", ".join("%s %.0f%%" % (r.split(':')[0], 100.0 * c / tot) for r, c in topr))
        ms = q("SELECT name, value FROM metrics WHERE run_id=? AND scope='kernel' AND name IN "
               "('compute_overlap_share','load_hidden_share','exposed_load_wait_share','consumer_busy_share',"
               "'achieved_tflops','bubble_share') ORDER BY kernel_id, name", rid)
        if ms:
            print("  metrics: " + ", ".join("%s=%.3f" % m for m in ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
