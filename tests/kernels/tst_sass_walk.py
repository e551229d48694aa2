#!/usr/bin/env python3
"""CPU test of scripts/kernels/sass_walk.py (session 13): on a made-up listing of one kernel whose k-loop has an
mbarrier wait with its retry loop, an ordering barrier taken at one k-step, a lane-0 release branch, a trace batch and
a flush, the steady path is the one the rules name, counted by address (a left-out instruction counts too).
Usage: tst_sass_walk.py PATH/TO/sass_walk.py   Exit 0 pass, 1 fail."""
import importlib.util
import os
import sys
import tempfile

LISTING = """\
\t.section\t.text._Z6kernelv,"ax",@progbits
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_0:
        /*0010*/                   IMAD R2, R3, 0x8, R4 ;
        /*0020*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R2+URZ], R5 ;
        /*0030*/              @!P0 BRA `(.L_x_9) ;
.L_x_1:
        /*0040*/                   WARPGROUP.ARRIVE ;
        /*0050*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc [UR12], R24 ;
        /*0070*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc [UR12], R24, gsb0 ;
        /*0080*/               @P1 BRA `(.L_x_2) ;
        /*0090*/                   BAR.SYNC.DEFER_BLOCKING 0x1, 0x100 ;
.L_x_2:
        /*00a0*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;
        /*00b0*/               @P2 BRA `(.L_x_3) ;
        /*00c0*/                   SYNCS.ARRIVE.TRANS64.A1T0 RZ, [R2+URZ], RZ ;
.L_x_3:
        /*00d0*/               @P3 BRA `(.L_x_4) ;
        /*00e0*/                   STS.128 [R6], R8 ;
        /*00f0*/                   MEMBAR.ALL.CTA ;
        /*0100*/                   BRA `(.L_x_5) ;
.L_x_4:
        /*0110*/                   STS.128 [R6], R8 ;
        /*0120*/                   STS.128 [R6+0x10], R12 ;
.L_x_5:
        /*0130*/                   IADD3 R7, R7, 0x1, RZ ;
        /*0140*/                   ISETP.GE.AND P4, PT, R7, R9, PT ;
        /*0150*/              @!P4 BRA `(.L_x_0) ;
        /*0160*/                   EXIT ;
.L_x_9:
        /*0170*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R2+URZ], R5 ;
        /*0180*/              @!P0 BRA `(.L_x_9) ;
        /*0190*/                   BRA `(.L_x_1) ;
\t.section\t.nv.constant0._Z6kernelv,"a",@progbits
"""
# steady path: 0010-0030 (3), 0040-0080 (5: 0060 left out of the listing, counted), 00a0-00c0 (3), 00d0 (1),
# 0110-0120 (2), 0130-0150 (3) = 17; the barrier (0090), the flush path (00e0-0100) and the retry (0170-0190) are off it.


def main():
    spec = importlib.util.spec_from_file_location("sass_walk", sys.argv[1])
    w = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(w)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.sass")
        open(p, "w").write(LISTING)
        funcs = w.parse(p)
        ins, labels = funcs["_Z6kernelv"]
        loops = w.loops_of("_Z6kernelv", ins, labels)
    fails = []
    if len(loops) != 1:
        fails.append(f"one k-loop expected, got {len(loops)}")
    else:
        s = loops[0]["steady"]
        want = {"executed": 17, "hgmma": 2, "sts": 2, "arrive": 1, "undecoded": 1, "flush": False, "namedbar": False}
        for k, v in want.items():
            if s is None or s[k] != v:
                fails.append(f"steady {k}: want {v}, got {None if s is None else s[k]}")
        if loops[0]["head"] != "0010" or loops[0]["back"] != "0150":
            fails.append(f"loop span {loops[0]['head']}..{loops[0]['back']}, want 0010..0150")
    for f in fails:
        print("FAIL tst_sass_walk:", f)
    print("PASS tst_sass_walk" if not fails else f"FAIL tst_sass_walk: {len(fails)} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
