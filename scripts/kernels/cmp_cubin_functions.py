#!/usr/bin/env python3
"""Compare the machine code of kernels across two cubins, function by function (s14-lcetidy).

A cubin keeps each kernel's code in `.text.<mangled name>`; with it go `.rela.text.<name>` (relocations),
`.nv.info.<name>` (registers, parameter layout, barriers) and `.nv.constant0.<name>` (the parameter bank). When a
source change removes other template instances the cubins differ as files while the kept kernels' code may not:
this compares those sections byte for byte for every kernel both cubins have (or the --only ones).

Usage: cmp_cubin_functions.py OLD.cubin NEW.cubin [--only SUBSTRING ...] [--map OLDNAME=NEWNAME ...]
Prints one line per kernel (SAME / DIFF and which sections differ) and the kernels only one side has.
Exit: 0 every compared kernel identical, 1 a difference (or nothing compared), 2 bad usage / not an ELF."""
import struct
import sys

PREFIXES = (".text.", ".rela.text.", ".nv.info.", ".nv.constant0.")


def sections(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError(f"{path}: not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    stroff = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        name_off, typ, off, size = h[0], h[1], h[4], h[5]
        end = data.index(b"\0", stroff + name_off)
        name = data[stroff + name_off:end].decode()
        out[name] = b"" if typ == 8 else data[off:off + size]  # SHT_NOBITS: no bytes
    return out


def kernels(secs):
    return {n[len(".text."):] for n in secs if n.startswith(".text.")}


def main(argv):
    args, only, mapping = [], [], {}
    it = iter(argv)
    for a in it:
        if a == "--only":
            only.append(next(it, ""))
        elif a == "--map":
            o, _, n = next(it, "").partition("=")
            mapping[o] = n
        else:
            args.append(a)
    if len(args) != 2:
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    try:
        old, new = sections(args[0]), sections(args[1])
    except (OSError, ValueError) as e:
        print(f"cmp_cubin_functions: {e}", file=sys.stderr)
        return 2
    ko, kn = kernels(old), kernels(new)
    pick = lambda k: not only or any(s in k for s in only)
    compared = bad = 0
    for k in sorted(filter(pick, ko)):
        nk = mapping.get(k, k)
        if nk not in kn:
            print(f"only in {args[0]}: {k}")
            continue
        diff = [p.rstrip(".") for p in PREFIXES if old.get(p + k) != new.get(p + nk)]
        compared += 1
        bad += bool(diff)
        print(f"{'DIFF' if diff else 'SAME'} {k}{' -> ' + nk if nk != k else ''}"
              f" ({len(old['.text.' + k])} bytes of code){': ' + ', '.join(diff) if diff else ''}")
    for k in sorted(filter(pick, kn - {mapping.get(k, k) for k in ko})):
        print(f"only in {args[1]}: {k}")
    if compared == 0:
        print("cmp_cubin_functions: no kernel compared", file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
