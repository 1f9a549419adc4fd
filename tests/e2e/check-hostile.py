#!/usr/bin/env python3
"""check-hostile.py FORMAT FILE: an export of t-hostile's profile (lib.sh,
build_hostile; t0432) read back as its consumer reads it, into exactly
the names the binary has, each with its calls, and no other function.

FORMAT is how FILE is read:
  folded      flame-graph stacks: a frame per ';', the value after the last
              space (export -f folded -m calls)
  callgrind   the fn= and cfn= names of the callgrind format
  annotate    callgrind_annotate's listing of the export (FILE: its output)
  plist       the tab-delimited records 6 and 10 (export -f plist)
  svg         the frames' <title>s, read by an XML parser (export -f svg -m calls)
  json        the json export's functions
  speedscope  the speedscope export's frames
  pprof       the string table of the pprof export, decoded by protoc
              (FILE: protoc --decode's text)
  html        the profile embedded in the HTML report

Names come back escaped where the format needs it, in callprof's one
visible form (util/text.h): read back through unvisible() they must be the
bytes of the ELF symbol.  JSON carries a UTF-8 name as it is, and a byte
that is not UTF-8 as the text \\xNN.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

NAMES = {
    1: b"\x1b]0;PWNED-TITLE\x07",
    2: b"\x1b]52;c;ZXZpbA==\x07",
    3: b"\x1b[2J\x1b[Hclear",
    4: b"\x9b31mC1lone",
    5: b"\xc2\x9b31mC1utf8",
    6: b"nl\n  999999  forged_row",
    7: b"semi;colon frame",
    8: b"bad\xff\xfeutf8",
    9: b"<tag attr=\"x\">&amp;'q'",
    10: b"back\\slash\\x1b",
    11: b"\xe2\x80\xaertl-override",
    12: b"fn=evil\ncalls=1 1\n0 99999 tab\there",
}
OURS = {b"main", b"thread_main", b"all threads"}

# Other names are code without hooks that the sampler saw: the C
# library's, the dynamic loader's, a sanitizer's (strcmp, do_lookup_x,
# __memcpy_avx_unaligned, ...; which ones depends on where the samples
# fell, so they are not listed).  Such a name is plain: printable ASCII
# (a C++ name has spaces, parentheses, commas), no field separator of any
# format (';', '=', a tab), and never a piece of a hostile name, which is
# what a consumer splitting one at a separator would read (evil,
# forged_row, 999999, semi, ...).
PLAIN = re.compile(rb"^[\x21-\x7e][\x20-\x7e]*$")
SEPARATORS = b"\n\r\t ;=\x07\x1b\x9b"


def pieces():
    out = set()
    for name in NAMES.values():
        for sep in SEPARATORS:
            out.update(p.strip() for p in name.split(bytes([sep])))
        out.update(p for p in re.split(rb"[\n\r\t ;=\x07\x1b\x9b]+", name))
    return {p for p in out if p and p not in NAMES.values()}


PIECES = pieces()


def sampled(n):
    """Is n a name of code without hooks, not one a hostile name could forge?"""
    return (PLAIN.match(n) is not None and not any(c in n for c in b";=\t")
            and n.strip() not in PIECES)

VIS = re.compile(r"\\(\\|n|r|t|x[0-9a-f]{2}|u[0-9a-f]{4})")


def unvisible(s):
    """The bytes whose visible form is s."""
    out = bytearray()
    pos = 0
    for m in VIS.finditer(s):
        out += s[pos:m.start()].encode("utf-8")
        e = m.group(1)
        if e == "\\":
            out += b"\\"
        elif e in ("n", "r", "t"):
            out += {"n": b"\n", "r": b"\r", "t": b"\t"}[e]
        elif e[0] == "x":
            out.append(int(e[1:], 16))
        else:
            out += chr(int(e[1:], 16)).encode("utf-8")
        pos = m.end()
    out += s[pos:].encode("utf-8")
    return bytes(out)


def json_name(s):
    """A name of a JSON export: UTF-8 as it is, a stray byte as \\xNN."""
    out = bytearray()
    pos = 0
    for m in re.finditer(r"\\x([89a-f][0-9a-f])", s):
        out += s[pos:m.start()].encode("utf-8")
        out.append(int(m.group(1), 16))
        pos = m.end()
    out += s[pos:].encode("utf-8")
    return bytes(out)


def check_names(found, calls=None):
    """found: the names read (bytes); calls: name -> calls read, if any."""
    want = set(NAMES.values())
    have = set(found)
    missing = [n for n in want if n not in have]
    if missing:
        sys.exit("missing: %r\nread: %r" % (missing, sorted(have)))
    others = [n for n in have - want - OURS if not sampled(n)]
    if others:
        sys.exit("functions that t-hostile does not have (forged?): %r" % others)
    for n in have:
        for bad in (b"evil", b"forged_row", b"99999"):
            if bad in n and n not in want:
                sys.exit("a forged name: %r" % n)
    if calls is not None:
        for k, name in NAMES.items():
            if calls.get(name) != k:
                sys.exit("%r: %r calls, not %d" % (name, calls.get(name), k))
    print("ok - %d names read back, each as the binary has it" % len(want))


def folded(path):
    names, calls = [], {}
    for line in open(path, encoding="utf-8").read().split("\n"):
        if not line:
            continue
        stack, sep, value = line.rpartition(" ")
        if not sep or not value.isdigit():
            sys.exit("not a folded line: %r" % line)
        frames = [unvisible(f) for f in stack.split(";")]
        names += frames
        calls[frames[-1]] = calls.get(frames[-1], 0) + int(value)
    check_names(names, calls)


def callgrind(path):
    names, calls, ids = [], {}, {}
    fn = None
    for line in open(path, encoding="utf-8").read().split("\n"):
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3) is not None:
                ids[m.group(2)] = unvisible(m.group(3))
            if m.group(2) not in ids:
                sys.exit("fn id %s used before it is named" % m.group(2))
            names.append(ids[m.group(2)])
            if m.group(1) == "cfn":
                fn = ids[m.group(2)]
            continue
        m = re.match(r"^calls=(\d+) ", line)
        if m and fn is not None:
            calls[fn] = calls.get(fn, 0) + int(m.group(1))
            fn = None
        elif re.match(r"^(fn|cfn|calls)=", line):
            sys.exit("a line callprof does not write: %r" % line)
    check_names(names, calls)


def annotate(path):
    # The function summary: rows under the header ending "file:function",
    # each "FILE:FN [OBJ]" from the header's column on, until a blank line.
    names, col = [], None
    for line in open(path, encoding="utf-8").read().split("\n"):
        if col is None:
            if line.endswith("file:function"):
                col = line.index("file:function")
            continue
        if not line:
            break
        if line.startswith("---"):
            continue
        what = re.sub(r" \[[^\]]*\]$", "", line[col:])
        fn = what.split(":", 1)[1] if ":" in what else what
        names.append(unvisible(fn))
    # callgrind_annotate lists the functions that have costs: not every one.
    for n in names:
        if n not in NAMES.values() and n not in OURS and not sampled(n):
            sys.exit("callgrind_annotate lists a function t-hostile does not have: %r" % n)
    if not names:
        sys.exit("callgrind_annotate listed no function")
    print("ok - callgrind_annotate lists %d functions, none forged" % len(names))


def plist(path):
    names, calls = [], {}
    for line in open(path, encoding="utf-8").read().split("\n"):
        f = line.split("\t")
        if f[0] == "6":
            if len(f) != 7:
                sys.exit("record 6 has %d fields: %r" % (len(f), line))
            names.append(unvisible(f[6]))
            calls[unvisible(f[6])] = int(f[3])
        elif f[0] == "10":
            if len(f) != 2:
                sys.exit("record 10 has %d fields: %r" % (len(f), line))
            names.append(unvisible(f[1]))
        elif f[0] not in ("0", "1", "2", "3", "4", "5", "8", "9", ""):
            sys.exit("a record callprof does not write: %r" % line)
    check_names(names, calls)


def svg(path):
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    names, calls = [], {}
    for g in root.iter(ns + "g"):
        kids = list(g)
        if not kids or kids[0].tag != ns + "title":
            continue
        lines = (kids[0].text or "").split("\n")
        name = unvisible(lines[0])
        names.append(name)
        m = re.match(r"^calls (\d+)", lines[1]) if len(lines) > 1 else None
        if m and name in NAMES.values():
            calls[name] = calls.get(name, 0) + int(m.group(1))
    check_names(names, calls)


def jsonfile(path):
    d = json.load(open(path, encoding="utf-8"))
    check_names([json_name(f["name"]) for f in d["functions"]])


def speedscope(path):
    d = json.load(open(path, encoding="utf-8"))
    check_names([json_name(f["name"]) for f in d["shared"]["frames"]])


def pprof(path):
    text = open(path, encoding="utf-8").read()
    table = []
    for m in re.finditer(r'^string_table: "((?:[^"\\]|\\.)*)"$', text, re.M):
        raw = m.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape")
        s = raw.encode("latin-1").decode("utf-8")  # must be UTF-8
        table.append(s)
    names = []
    for m in re.finditer(r"^function \{\n(?:  .*\n)*?  name: (\d+)\n", text, re.M):
        names.append(unvisible(table[int(m.group(1))]))
    check_names(names)


def html(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="profile">(.*?)</script>', text, re.S)
    if not m:
        sys.exit("no embedded profile")
    d = json.loads(m.group(1))
    fns = d["functions"]
    names = fns["name"] if isinstance(fns, dict) else [f["name"] for f in fns]
    check_names([unvisible(n) for n in names])


def main():
    fmt, path = sys.argv[1], sys.argv[2]
    {"folded": folded, "callgrind": callgrind, "annotate": annotate, "plist": plist,
     "svg": svg, "json": jsonfile, "speedscope": speedscope, "pprof": pprof,
     "html": html}[fmt](path)


if __name__ == "__main__":
    main()
