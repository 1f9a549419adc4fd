#!/usr/bin/env python3
"""bench/truth-report.py - the tables of bench/truth for one program and build.

    truth-report.py DIR TITLE

DIR holds what bench/truth wrote for the program built one way:
  w.MODE     "WEIGHT<TAB>FUNCTION" lines: self weight per function (perf:
             samples; callprof: nanoseconds of self CPU time), any unit;
             "perf" pools TRUTH_REF_RUNS runs of perf, "perf2" is one more;
  w.MODE.I   the same for run I of perf2 and default (I = 1..RUNS): the
             mode table gives the median distance over them
  t.MODE     wall times of the runs in nanoseconds, one a line
  modes      the modes in table order; "perf" is the reference (the plain
             build), "perf2" its second run, "perfinst" perf of the
             instrumented build, "samerun" callprof's own profile of that
             same run, "perfbare" perf of a sleds build not profiled,
             "plain" the plain build's times
Prints the mode table (distance to perf, slowdown) and the top-10 table of
perf against callprof's default mode.  The distance of two share vectors is
sum |a - b| / 2 over the functions of either, in percent.
"""
import os
import statistics
import sys


def shares(path):
    w = {}
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            v, _, name = line.rstrip("\n").partition("\t")
            if name:
                w[name] = w.get(name, 0.0) + float(v)
    tot = sum(w.values())
    if tot <= 0:
        return None
    return {k: 100.0 * v / tot for k, v in w.items()}


def total(path):
    with open(path) as f:
        return int(sum(float(line.split("\t")[0]) for line in f if line.strip()))


def distance(a, b):
    return sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b)) / 2


def median_time(path):
    try:
        with open(path) as f:
            t = [int(x.split()[0]) for x in f if x.strip()]
    except FileNotFoundError:
        return None
    return statistics.median(t) if t else None


def runs_of(d, m):
    """The shares of each numbered run of mode m (w.m.1, w.m.2, ...)."""
    out, i = [], 1
    while True:
        s = shares(os.path.join(d, f"w.{m}.{i}"))
        if s is None and not os.path.exists(os.path.join(d, f"w.{m}.{i}")):
            return out
        if s is not None:
            out.append(s)
        i += 1


def main():
    d, title = sys.argv[1], sys.argv[2]
    with open(os.path.join(d, "modes")) as f:
        modes = [line.split("\t") for line in f.read().splitlines() if line]
    perf = shares(os.path.join(d, "w.perf"))
    plain = median_time(os.path.join(d, "t.plain"))
    print(f"== {title}")
    if perf is None:
        print("   no perf profile of the plain build: nothing to compare with")
        return
    n2 = total(os.path.join(d, "w.perf2")) if os.path.exists(os.path.join(d, "w.perf2")) else 0
    print(f"   plain build: {plain / 1e6:.0f} ms (median); perf samples: "
          f"{total(os.path.join(d, 'w.perf'))} (the reference) and {n2} (one more run)")
    print(f"   {'mode':<56} {'distance':>9} {'slowdown':>9}  top function")
    per_run = {m: [distance(perf, s) for s in runs_of(d, m)] for m in ("perf2", "default")}
    for m, label in modes:
        s = shares(os.path.join(d, "w." + m))
        dist = f"{distance(perf, s):8.1f}%" if s is not None and m != "perf" else "-"
        if per_run.get(m):
            dist = f"{statistics.median(per_run[m]):8.1f}%"
            label = f"{label} [median of {len(per_run[m])}]"
        if m == "perf":
            dist = "0 (ref)"
        t = median_time(os.path.join(d, "t." + m))
        slow = f"{t / plain:8.2f}x" if t is not None and plain else "-"
        top = max(s, key=s.get) if s else "-"
        print(f"   {label:<56} {dist:>9} {slow:>9}  {top}")
    cp = shares(os.path.join(d, "w.default"))
    if cp is None:
        return
    pr, dr = per_run["perf2"], per_run["default"]
    if pr and dr:
        # Each a run against the same pool: the ratio of the medians is the
        # "within twice perf's own run-to-run distance" figure.
        print(f"   each run against the reference: perf {', '.join(f'{x:.1f}' for x in pr)}%; "
              f"callprof {', '.join(f'{x:.1f}' for x in dr)}%; median over median "
              f"{statistics.median(dr) / max(statistics.median(pr), 1e-9):.2f}x")
    inst = shares(os.path.join(d, "w.perfinst"))
    same = shares(os.path.join(d, "w.samerun"))
    if inst is not None:
        print(f"   of the default's {statistics.median(dr) if dr else distance(perf, cp):.1f}%: the instrumented program itself "
              f"{distance(perf, inst):.1f}% (perf of each build)")
    bare = shares(os.path.join(d, "w.perfbare"))
    perf2 = shares(os.path.join(d, "w.perf2"))
    if bare is not None:
        # What the build alone moved: no profile of it can come nearer to
        # the plain build's picture than about this (perf's own noise aside).
        print(f"   the sleds build itself, not profiled: {distance(perf, bare):.1f}% "
              f"(perf of each build; perf against itself "
              f"{statistics.median(pr) if pr else distance(perf, perf2) if perf2 is not None else float('nan'):.1f}%); "
              f"callprof against perf of that build: {distance(bare, cp):.1f}%")
    if inst is not None and same is not None:
        print(f"   perf and callprof sampling one run of the instrumented build: "
              f"{distance(inst, same):.1f}% apart (callprof's attribution)")
    for what, ref in (("perf", perf), ("callprof", cp)):
        print(f"   top 10 by {what}'s self share:")
        print(f"     {'function':<32} {'perf':>7} {'callprof':>9}")
        for k in sorted(ref, key=ref.get, reverse=True)[:10]:
            print(f"     {k[:32]:<32} {perf.get(k, 0.0):6.1f}% {cp.get(k, 0.0):8.1f}%")


if __name__ == "__main__":
    main()
