#!/usr/bin/env python3
"""Compare the machine code of kernels across two cubins, function by function (s14-lcetidy).

A cubin keeps each kernel's code in `.text.<mangled name>`; with it go `.rela.text.<name>` (relocations),
`.nv.info.<name>` (parameter layout, barriers, ...), `.nv.constant0.<name>` (the parameter bank) and the kernel's
records in the global `.nv.info` (registers, frame and stack sizes). When a source change removes other template
instances the cubins differ as files while the kept kernels' code may not: this compares those, for every kernel
both cubins have (or the --only ones), byte for byte except that symbol table indices (which move when other
functions go) are compared as the symbols' names, and names in an anonymous namespace are read with the namespace's
per-file hash (`_GLOBAL__N__<hex>_`, which follows the source's path) left out.

Usage: cmp_cubin_functions.py OLD.cubin NEW.cubin [--only SUBSTRING ...] [--map OLDNAME=NEWNAME ...]
Prints one line per kernel (SAME / DIFF and which sections differ) and the kernels only one side has.
Exit: 0 every compared kernel identical, 1 a difference (or nothing compared), 2 bad usage / not an ELF."""
import re
import struct
import sys

PREFIXES = (".text.", ".rela.text.", ".nv.info.", ".nv.constant0.", ".nv.info(global).")


def anon(name):
    return re.sub(r"_GLOBAL__N__[0-9a-f]+_", "_GLOBAL__N__", name)


def cstr(data, off):
    return data[off:data.index(b"\0", off)].decode()


def sections(path):
    """{section name: bytes}, with relocations and symbol-indexed .nv.info records rewritten to symbol names."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError(f"{path}: not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    stroff = hdrs[shstrndx][4]
    out, syms = {}, []
    for h in hdrs:
        typ, off, size, link = h[1], h[4], h[5], h[6]
        out[anon(cstr(data, stroff + h[0]))] = b"" if typ == 8 else data[off:off + size]  # SHT_NOBITS: no bytes
        if typ == 2:  # SHT_SYMTAB: 24-byte entries, names in the linked string table
            names = hdrs[link][4]
            syms = [anon(cstr(data, names + struct.unpack_from("<I", data, off + i)[0])) for i in range(0, size, 24)]
    sym = lambda i: syms[i] if i < len(syms) else f"#{i}"
    for name in list(out):
        if name.startswith(".rela."):  # Elf64_Rela: offset, info = symbol << 32 | type, addend
            d = out[name]
            out[name] = repr([(o, sym(info >> 32), info & 0xFFFFFFFF, a)
                              for o, info, a in struct.iter_unpack("<QQq", d[:len(d) // 24 * 24])]).encode()
    per_kernel = {}  # the global .nv.info's records (format 4, 8 bytes: symbol, value) by the symbol they name
    d, i = out.get(".nv.info", b""), 0
    while i + 4 <= len(d):
        fmt, attr = d[i], d[i + 1]
        n = struct.unpack_from("<H", d, i + 2)[0] if fmt == 4 else 0
        if fmt == 4 and n == 8:
            s, v = struct.unpack_from("<II", d, i + 4)
            per_kernel.setdefault(sym(s), []).append((attr, v))
        i += 4 + n
    for k, recs in per_kernel.items():
        out[".nv.info(global)." + k] = repr(sorted(recs)).encode()
    for name in list(out):  # EIATTR_PARAM_CBANK (0x0a): the constant bank's symbol, then offset and size
        if name.startswith(".nv.info."):
            d, i, recs = out[name], 0, []
            while i + 4 <= len(d):
                fmt, attr = d[i], d[i + 1]
                n = struct.unpack_from("<H", d, i + 2)[0] if fmt == 4 else 0
                body = d[i + 4:i + 4 + n]
                if attr == 0x0A and n == 8:
                    body = (sym(struct.unpack_from("<I", body)[0]).encode(), body[4:])
                recs.append((fmt, attr, body))
                i += 4 + n
            out[name] = repr(recs).encode()
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
