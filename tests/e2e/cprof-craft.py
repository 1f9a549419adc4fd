#!/usr/bin/env python3
"""cprof-craft.py - damage a good profile file in one precise way, for tests.

    cprof-craft.py info FILE
        one line per used section-table slot: SLOT KIND ENTSIZE OFFSET SIZE
        (decimal), for the tests to compute boundaries and expected offsets
    cprof-craft.py boundaries FILE
        every byte offset where a part of the file ends: the header, the
        section table, and each section's start and end, sorted, unique
    cprof-craft.py show FILE
        a few facts, read without callprof: "version V", "min_reader R",
        "mode M" (enum cp_mode), "meta_flags F", then per thread record
        "thread I tid T flags F nthreads N", then per node record with calls
        open at attach (version 7) "node I open N"
    cprof-craft.py IN OUT MUTATION [ARG...]
        write IN damaged by MUTATION to OUT

The mutations (kinds by number or name: strings meta modules maps threads
nodes cmdline symbols inputs spread lines regions filters):

    truncate N                first N bytes only (nothing resealed)
    magic                     magic "CALLPROX"
    version V                 version and min_reader V (a newer major version)
    nsections N               the header's section count
    header-size N             the header's header_size
    section-size KIND N       that section's size
    section-offset KIND N     that section's offset
    section-entsize KIND N    that section's record size
    section-kind KIND NEW     that slot's kind (NEW may duplicate another)
    thread-nnodes T N         thread record T's node count
    node-parent I P           node record I's parent (index in NODES)
    thread-name T OFF         thread record T's name (a string offset)
    flip OFF                  byte OFF xor 0xff, nothing resealed

Every mutation but truncate and flip recomputes both CRC-32s afterwards, so
the reader meets the damage itself, not a checksum mismatch.  Offsets
follow format/format.h; the tests must not depend on this helper for the
expected messages, only for where things are.
"""
import struct
import sys
import zlib

HDR = struct.Struct("<8sIHHBBHIQQII")  # struct cp_file_header, 48 bytes
SEC = struct.Struct("<IIQQ")  # struct cp_section_entry, 24 bytes
KINDS = {"strings": 1, "meta": 2, "modules": 3, "maps": 4, "threads": 5, "nodes": 6,
         "cmdline": 7, "symbols": 8, "inputs": 9, "spread": 10, "lines": 11,
         "regions": 12, "filters": 13}
THREAD_NNODES = 12  # offset of nnodes in struct cp_thread_rec
THREAD_NAME = 4     # offset of name
THREAD_FLAGS = 32   # offset of flags
THREAD_NTHREADS = 48  # offset of nthreads
META_MODE = 8       # offset of mode in struct cp_meta
META_FLAGS = 84     # offset of flags
NODE_PARENT = 16    # offset of parent in struct cp_node_rec
NODE_OPEN = 88      # offset of open_at_start (version 7; records of 96 bytes or more)


def die(msg):
    sys.stderr.write("cprof-craft: %s\n" % msg)
    sys.exit(2)


def num(s):
    return int(s, 0)


def kind(s):
    return KINDS[s] if s in KINDS else num(s)


class Profile:
    def __init__(self, data):
        if len(data) < HDR.size:
            die("not a whole header")
        self.data = bytearray(data)
        self.h = list(HDR.unpack_from(self.data, 0))

    # header fields by name
    FIELDS = ["magic", "header_size", "version", "min_reader", "endian", "ptr_size",
              "reserved0", "nsections", "features", "file_size", "header_crc", "body_crc"]

    def get(self, name):
        return self.h[self.FIELDS.index(name)]

    def set(self, name, value):
        self.h[self.FIELDS.index(name)] = value
        HDR.pack_into(self.data, 0, *self.h)

    def sections(self):
        n = min(self.get("nsections"), (len(self.data) - HDR.size) // SEC.size)
        return [(i, *SEC.unpack_from(self.data, HDR.size + i * SEC.size)) for i in range(n)]

    def slot_of(self, k):
        for s in self.sections():
            if s[1] == k:
                return s
        die("no section of kind %d" % k)

    def set_slot(self, slot, k, entsize, offset, size):
        SEC.pack_into(self.data, HDR.size + slot * SEC.size, k, entsize, offset, size)

    def records(self, k):
        _, _, entsize, offset, size = self.slot_of(k)
        return [offset + i * entsize for i in range(size // entsize)] if entsize else []

    def record_at(self, k, idx, field, fmt, value):
        slot, _, entsize, offset, size = self.slot_of(k)
        if (idx + 1) * entsize > size:
            die("no record %d in section %d" % (idx, k))
        struct.pack_into(fmt, self.data, offset + idx * entsize + field, value)

    def reseal(self):
        hs = self.get("header_size")
        self.set("body_crc", zlib.crc32(bytes(self.data[hs:])) & 0xffffffff)
        self.set("header_crc", 0)
        self.set("header_crc", zlib.crc32(bytes(self.data[:hs])) & 0xffffffff)


def mutate(p, op, args):
    if op == "truncate":
        return bytes(p.data[:num(args[0])])
    if op == "flip":
        p.data[num(args[0])] ^= 0xff
        return bytes(p.data)
    if op == "magic":
        p.set("magic", b"CALLPROX")
    elif op == "version":
        p.set("version", num(args[0]))
        p.set("min_reader", num(args[0]))
    elif op == "nsections":
        p.set("nsections", num(args[0]))
    elif op == "header-size":
        p.set("header_size", num(args[0]))
    elif op.startswith("section-"):
        slot, k, entsize, offset, size = p.slot_of(kind(args[0]))
        v = num(args[1]) if op != "section-kind" else kind(args[1])
        field = {"section-size": 4, "section-offset": 3, "section-entsize": 2,
                 "section-kind": 1}[op]
        e = [slot, k, entsize, offset, size]
        e[field] = v
        p.set_slot(*e)
    elif op == "thread-nnodes":
        p.record_at(KINDS["threads"], num(args[0]), THREAD_NNODES, "<I", num(args[1]))
    elif op == "thread-name":
        p.record_at(KINDS["threads"], num(args[0]), THREAD_NAME, "<I", num(args[1]))
    elif op == "node-parent":
        p.record_at(KINDS["nodes"], num(args[0]), NODE_PARENT, "<I", num(args[1]))
    else:
        die("unknown mutation '%s'" % op)
    p.reseal()
    return bytes(p.data)


def main(argv):
    if len(argv) == 3 and argv[1] in ("info", "boundaries", "show"):
        with open(argv[2], "rb") as f:
            p = Profile(f.read())
        if argv[1] == "show":
            print("version", p.get("version"))
            print("min_reader", p.get("min_reader"))
            meta = p.records(KINDS["meta"])[0]
            print("mode", struct.unpack_from("<I", p.data, meta + META_MODE)[0])
            print("meta_flags", struct.unpack_from("<I", p.data, meta + META_FLAGS)[0])
            for i, at in enumerate(p.records(KINDS["threads"])):
                tid, = struct.unpack_from("<I", p.data, at)
                flags, = struct.unpack_from("<I", p.data, at + THREAD_FLAGS)
                n, = struct.unpack_from("<I", p.data, at + THREAD_NTHREADS)
                print("thread %d tid %d flags %d nthreads %d" % (i, tid, flags, n))
            entsize = p.slot_of(KINDS["nodes"])[2]
            for i, at in enumerate(p.records(KINDS["nodes"])):
                if entsize >= NODE_OPEN + 8:
                    n, = struct.unpack_from("<Q", p.data, at + NODE_OPEN)
                    if n:
                        print("node %d open %d" % (i, n))
        elif argv[1] == "info":
            for slot, k, entsize, offset, size in p.sections():
                print(slot, k, entsize, offset, size)
        else:
            cuts = {HDR.size, p.get("header_size")}
            for _, _, _, offset, size in p.sections():
                cuts.update((offset, offset + size))
            for c in sorted(cuts):
                print(c)
        return 0
    if len(argv) < 4:
        die("usage: cprof-craft.py info|boundaries|show FILE, or IN OUT MUTATION [ARG...]")
    with open(argv[1], "rb") as f:
        p = Profile(f.read())
    out = mutate(p, argv[3], argv[4:])
    with open(argv[2], "wb") as f:
        f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
