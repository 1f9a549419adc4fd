#!/usr/bin/env python3
"""check-inert.py [--tabs] FILE...: each FILE is text a terminal can show
without acting on any of it (issue 30: names from a hostile binary).

Every FILE must be valid UTF-8 and hold no control character but the
newline (and the tab with --tabs, for the tab-delimited formats): no C0
control, no DEL, no C1 control (U+0080-U+009F), no line or paragraph
separator, no bidirectional formatting character.  Prints the first
offence of each file (file, line, column, the character) and exits 1 if
there was one.
"""
import sys

ACTS = set(range(0x00, 0x20)) | set(range(0x7f, 0xa0)) | {
    0x061c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d,
    0x202e, 0x2066, 0x2067, 0x2068, 0x2069}


def check(path, tabs):
    data = open(path, "rb").read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        print("%s:%d: not UTF-8: byte 0x%02x at offset %d" % (path, line, data[e.start], e.start))
        return False
    allowed = {0x0a} | ({0x09} if tabs else set())
    for n, line in enumerate(text.split("\n"), 1):
        for col, ch in enumerate(line, 1):
            if ord(ch) in ACTS and ord(ch) not in allowed:
                print("%s:%d:%d: U+%04X in %r" % (path, n, col, ord(ch), line[:120]))
                return False
    return True


def main():
    args = sys.argv[1:]
    tabs = False
    if args and args[0] == "--tabs":
        tabs = True
        args = args[1:]
    if not args:
        print(__doc__.strip().split("\n")[0], file=sys.stderr)
        return 2
    ok = True
    for path in args:
        ok = check(path, tabs) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
