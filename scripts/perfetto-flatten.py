#!/usr/bin/env python3
"""Flatten a .perfetto-trace for `protoc --decode`: every TracePacket.compressed_packets batch (field 50,
zlib) is inflated and its packets put in its place, so protoc shows them; the others are copied as they are.
Checks on the way that each batch packet is below Perfetto's 512 KB and holds nothing but packets.

    scripts/perfetto-flatten.py trace.perfetto-trace flat.pb
    protoc -I PROTOS --decode=perfetto.protos.Trace PROTOS/perfetto/trace/perfetto_trace.proto < flat.pb

docs/interop.md ("Checked against Perfetto's own definitions") says how it was used.
"""
import sys
import zlib


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
            yield f, wt, v
        elif wt == 1:
            yield f, wt, b[i:i + 8]
            i += 8
        elif wt == 2:
            n, i = varint(b, i)
            yield f, wt, b[i:i + n]
            i += n
        else:
            raise SystemExit("wire type %d at byte %d" % (wt, i))


def enc_varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    data = open(src, "rb").read()
    out = bytearray()
    batches = packets = biggest = 0
    for f, wt, pkt in fields(data):
        if f != 1 or wt != 2:
            raise SystemExit("Trace field %d: a Trace holds only packets (field 1)" % f)
        inner = list(fields(pkt))
        if len(inner) == 1 and inner[0][0] == 50:
            batches += 1
            biggest = max(biggest, len(pkt) + 8)
            if len(pkt) + 8 >= 512 * 1024:
                raise SystemExit("a compressed_packets packet of %d bytes (Perfetto: < 512 KB)" % len(pkt))
            raw = zlib.decompress(inner[0][2])
            for f2, wt2, p2 in fields(raw):
                if f2 != 1 or wt2 != 2:
                    raise SystemExit("a batch holds field %d: only packets belong there" % f2)
                out += b"\x0a" + enc_varint(len(p2)) + p2
                packets += 1
        else:
            out += b"\x0a" + enc_varint(len(pkt)) + pkt
            packets += 1
    open(dst, "wb").write(out)
    print("%s: %d packets, %d compressed batches (largest %d bytes), %d bytes flat" % (src, packets, batches, biggest, len(out)))


if __name__ == "__main__":
    main()
