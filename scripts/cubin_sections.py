#!/usr/bin/env python3
"""Per-kernel identity of two cubins: the md5 of every .text.<kernel> section (session 16, s16-gemmgap).

Usage: cubin_sections.py A.cubin [B.cubin]
  one file: prints "md5 size kernel" per kernel code section;
  two files: prints "same" / "DIFF" / "only A" / "only B" per kernel, and exits 1 when any differs.
A whole-file `cmp` of two cubins fails as soon as a translation unit gains or loses a kernel (the symbol indices in
.nv.info shift, s14-clusterstart); the code sections compare the machine code alone. Cubins: nvcc -cubin -arch=sm_90a
with the build's flags (without -lineinfo). No CUDA tools needed: the ELF section table is read directly.
"""
import hashlib
import struct
import sys


def sections(path):
    d = open(path, "rb").read()
    if d[:4] != b"\x7fELF" or d[4] != 2:
        sys.exit(f"cubin_sections: {path} is not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)

    def header(i):
        return struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)

    names = header(shstrndx)[4]
    out = {}
    for i in range(shnum):
        name_off, _, _, _, off, size, *_ = header(i)
        end = d.index(b"\0", names + name_off)
        name = d[names + name_off:end].decode()
        if name.startswith(".text."):
            out[name[6:]] = (hashlib.md5(d[off:off + size]).hexdigest()[:12], size)
    return out


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__)
        return 2
    a = sections(argv[1])
    if len(argv) == 2:
        for k in sorted(a):
            print(f"{a[k][0]} {a[k][1]} {k}")
        return 0
    b = sections(argv[2])
    differ = 0
    for k in sorted(set(a) | set(b)):
        if k not in b:
            verdict = "only A"
        elif k not in a:
            verdict = "only B"
        else:
            verdict = "same" if a[k] == b[k] else "DIFF"
        differ += verdict != "same"
        print(f"{verdict:6} {k}")
    print(f"{len(set(a) | set(b)) - differ} same, {differ} differ or missing")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
