#!/usr/bin/env python3
"""check-uftrace.py - callprof's call counts of a sledded program against an
independent count: uftrace's, on the same binary.

  check-uftrace.py [--callprof PATH] [--dir DIR] [--timeout SECONDS]
                   [--max-stack N] [--ignore-output] -- PROG [ARGS...]

PROG is built with -fpatchable-function-entry (callprof cc --sleds).  Runs
it alone, then twice more, each time with its standard output kept apart:

  uftrace record --no-libcall --no-event -P . --max-stack N
      patches every function of PROG's own module (uftrace's dynamic
      tracing reads the same __patchable_function_entries section) and
      counts its calls; `uftrace report -f call --demangle=full` gives
      the count per function, all threads and processes added up.  A
      program without that section (a -finstrument-functions build:
      uftrace counts through its hooks) is recorded without -P, which
      tests the comparison itself on today's builds;
  callprof record -o DIR/p.cprof
      `callprof report --flat --fields=calls,name` of every profile the
      run wrote (forked children, exec'd images: DIR/p.cprof*).

and compares the calls per function for the functions PROG defines (nm
--defined-only -C: code symbols), so that neither side's view of other
modules counts.  callprof's run must also print what the run alone prints
and end with its exit status (uftrace's need not: its return trampolines
show in a backtrace, for one), unless --ignore-output (a program whose
output under callprof a test checks otherwise).

uftrace's count is a reference only where it is right: the run under it
must end as the run alone did, and where the program counts its own calls
(the "count<TAB>name<TAB>N" lines of s-sled-count.h) uftrace's counts of
PROG's own functions must be those (uftrace -P . patches PROG only, not
the libraries it loads).  uftrace counts a call when it returns, so a function that never
returns (main() of an image replaced by exec) is missing from its count.

Prints one line per function ("name  uftrace  callprof"), marking each
that differs with "<-", and exits 0 if none differs, 1 if some does or
callprof's run went wrong, and 2 if uftrace itself failed (it did not end
within the timeout, ended otherwise than the run alone, wrote no report,
or counted other than the program): then it says so in one line, as its
count is no reference.  DIR (default: a fresh temporary directory, removed at the end)
holds uftrace's data and the profiles.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile


def run(cmd, timeout, **kw):
    """(returncode, stdout, stderr); returncode None on a timeout.  The
    command runs in a process group of its own, killed whole on a timeout:
    uftrace's own timeout left the traced program spinning."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        return None, out or b"", err or b""
    return p.returncode, out, err


def own_functions(prog):
    """The demangled names of the code symbols PROG defines."""
    out = subprocess.run(["nm", "--defined-only", "-C", prog], capture_output=True,
                         text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in ("t", "T", "W", "w", "i"):
            names.add(parts[2])
    return names


def has_sleds(prog):
    """Does PROG have a __patchable_function_entries section?"""
    out = subprocess.run(["readelf", "-SW", prog], capture_output=True, text=True,
                         check=True).stdout
    return "__patchable_function_entries" in out


def uftrace_counts(text):
    """name -> calls from `uftrace report -f call`."""
    counts = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+)\s\s(.*)$", line)
        if m:
            counts[m.group(2)] = counts.get(m.group(2), 0) + int(m.group(1))
    return counts


def callprof_counts(text):
    """name -> calls from `callprof report --flat --fields=calls,name`."""
    counts = {}
    for line in text.splitlines()[1:]:
        m = re.match(r"^\s*(\d+)  (.*)$", line)
        if m:
            counts[m.group(2)] = counts.get(m.group(2), 0) + int(m.group(1))
    return counts


def main():
    ap = argparse.ArgumentParser(description="callprof's counts against uftrace's")
    ap.add_argument("--callprof", default="callprof")
    ap.add_argument("--dir")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--max-stack", type=int, default=8192)
    ap.add_argument("--ignore-output", action="store_true")
    ap.add_argument("prog", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    prog = a.prog[1:] if a.prog[:1] == ["--"] else a.prog
    if not prog:
        ap.error("no program given")
    if not shutil.which("uftrace"):
        print("check-uftrace: uftrace is not installed (apt-get install uftrace)")
        return 2
    work = a.dir or tempfile.mkdtemp(prefix="check-uftrace.")
    try:
        return compare(a, prog, work)
    finally:
        if not a.dir:
            shutil.rmtree(work, ignore_errors=True)


def program_counts(stdout):
    """name -> calls the program counted itself (s-sled-count.h lines)."""
    counts = {}
    for line in stdout.decode(errors="replace").splitlines():
        f = line.split("\t")
        if len(f) == 3 and f[0] == "count" and f[2].isdigit():
            counts[f[1]] = counts.get(f[1], 0) + int(f[2])
    return counts


def compare(a, prog, work):
    rc_a, out_a, _ = run(prog, a.timeout)
    if rc_a is None:
        print("check-uftrace: %s alone did not end within %g s" % (prog[0], a.timeout))
        return 1
    own_count = program_counts(out_a)

    data = os.path.join(work, "uftrace.data")
    patch = ["-P", "."] if has_sleds(prog[0]) else []
    rc_u, out_u, err_u = run(["uftrace", "record", "--no-libcall", "--no-event"] + patch +
                             ["--max-stack", str(a.max_stack), "-d", data] + prog, a.timeout)
    if rc_u is None:
        print("check-uftrace: uftrace failed: its run of %s did not end within %g s"
              % (prog[0], a.timeout))
        return 2
    if rc_u != rc_a:
        print("check-uftrace: uftrace failed: the program's exit status is %d under uftrace,"
              " %d alone" % (rc_u, rc_a))
        return 2
    rc_r, text, err_r = run(["uftrace", "report", "-d", data, "-f", "call",
                             "--demangle=full"], a.timeout)
    if rc_r != 0 or not uftrace_counts(text.decode(errors="replace")):
        print("check-uftrace: uftrace failed: no report (status %s): %s"
              % (rc_r, err_r.decode(errors="replace").strip().splitlines()[-1:] or ""))
        return 2
    ref = uftrace_counts(text.decode(errors="replace"))
    # A program that counts its own calls (s-sled-count.h) checks the
    # reference first: where uftrace's count is not the program's, it is
    # no reference.
    own = own_functions(prog[0])
    wrong = ["%s (the program counted %d, uftrace %d)" % (n, c, ref.get(n, 0))
             for n, c in sorted(own_count.items()) if n in own and ref.get(n, 0) != c]
    if wrong:
        print("check-uftrace: uftrace failed: its counts are not the program's own: "
              + ", ".join(wrong))
        return 2

    prof = os.path.join(work, "p.cprof")
    rc_c, out_c, err_c = run([a.callprof, "record", "-o", prof, "--"] + prog, a.timeout)
    bad = 0
    if rc_c is None:
        print("check-uftrace: callprof record did not end within %g s" % a.timeout)
        return 1
    if rc_c != rc_a:
        print("exit status: %d alone, %d under callprof" % (rc_a, rc_c))
        bad = 1
    if out_c != out_a and not a.ignore_output:
        print("standard output: differs between the run alone and callprof's")
        bad = 1
    files = sorted(os.path.join(work, f) for f in os.listdir(work) if f.startswith("p.cprof"))
    if not files:
        print("callprof wrote no profile: %s"
              % err_c.decode(errors="replace").strip().replace("\n", " | "))
        return 1
    rc, text, err = run([a.callprof, "report", "--flat", "--fields=calls,name", "--sort=name"]
                        + files, a.timeout)
    if rc != 0:
        print("callprof report failed: %s" % err.decode(errors="replace").strip())
        return 1
    got = callprof_counts(text.decode(errors="replace"))

    names = sorted(n for n in set(ref) | set(got) if n in own)
    width = max([len(n) for n in names] + [8])
    print("%-*s  %10s  %10s" % (width, "function", "uftrace", "callprof"))
    for n in names:
        u, c = ref.get(n, 0), got.get(n, 0)
        print("%-*s  %10d  %10d%s" % (width, n, u, c, "  <-" if u != c else ""))
        if u != c:
            bad = 1
    if not names:
        print("no function of %s counted by either" % prog[0])
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
