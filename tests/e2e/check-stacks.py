#!/usr/bin/env python3
"""check-stacks.py - after `callprof attach` detached from a process: is
anything of callprof's left where the process would run it?

  check-stacks.py frames PID
      every thread's call stack, as gdb unwinds it (its own unwinder,
      from the DWARF call frame information: not callprof's), holds no
      return address into callprof's code: the runtime copy
      (memfd:callprof-attach-*), the return stubs (memfd:callprof-stubs)
      or an anonymous executable page (the sleds' near pages)
  check-stacks.py code PID
      the program's code in memory is its file's, byte for byte: every
      sled is back to the compiler's NOPs

Prints what it compared; exits 1 with what differs otherwise.
"""
import re
import subprocess
import sys


def maps(pid):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            out.append((lo, hi, parts[1], int(parts[2], 16), path))
    return out


def ours(m):
    lo, hi, perms, off, path = m
    if "callprof-stubs" in path or "callprof-attach" in path:
        return True
    return "x" in perms and path == ""


def frames(pid):
    ranges = [m for m in maps(pid) if ours(m)]
    r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "set pagination off",
                        "-ex", "thread apply all bt"], capture_output=True, text=True,
                       timeout=120)
    threads = 0
    pcs = 0
    bad = []
    for line in r.stdout.splitlines():
        if line.startswith("Thread "):
            threads += 1
        m = re.match(r"#(\d+)\s+(0x[0-9a-f]+) in (.*)", line)
        if not m:
            continue
        pcs += 1
        pc = int(m.group(2), 16)
        for lo, hi, perms, off, path in ranges:
            if lo <= pc < hi:
                bad.append(f"{line.strip()}  [in {path or 'anonymous ' + perms}]")
    if threads == 0 or pcs == 0:
        print(f"gdb unwound no thread of {pid}:\n{r.stdout}\n{r.stderr}")
        return 1
    if bad:
        print(f"{len(bad)} return address(es) into callprof's code:")
        print("\n".join(bad))
        print(r.stdout)
        return 1
    print(f"{threads} threads, {pcs} return addresses: none into callprof's code "
          f"({len(ranges)} mappings of it)")
    return 0


def code(pid):
    import os
    exe = os.readlink(f"/proc/{pid}/exe")
    compared = 0
    with open(f"/proc/{pid}/mem", "rb") as mem, open(f"/proc/{pid}/exe", "rb") as f:
        for lo, hi, perms, off, path in maps(pid):
            if path != exe or "x" not in perms:
                continue
            mem.seek(lo)
            live = mem.read(hi - lo)
            f.seek(off)
            disk = f.read(hi - lo)
            n = min(len(live), len(disk))
            for i in range(n):
                if live[i] != disk[i]:
                    print(f"{exe}: code at {lo + i:#x} (file offset {off + i:#x}) is "
                          f"{live[i]:#04x} in memory, {disk[i]:#04x} in the file")
                    return 1
            compared += n
    if not compared:
        print(f"no code of {exe} mapped in {pid}")
        return 1
    print(f"{compared} bytes of code of {exe}: as in the file")
    return 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("frames", "code"):
        print(__doc__)
        return 2
    return frames(int(sys.argv[2])) if sys.argv[1] == "frames" else code(int(sys.argv[2]))


if __name__ == "__main__":
    sys.exit(main())
