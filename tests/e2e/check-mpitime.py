#!/usr/bin/env python3
"""check-mpitime.py - relations between call paths of one MPI rank's
profile, read from `callprof export -f json` (t0561).

  check-mpitime.py cpu FILE.json FN MIN OTHER...
      FN's cpu over the cpu of FN and every OTHER together is at least MIN
  check-mpitime.py libchild FILE.json FN REGEX
      a child of FN is code without hooks (sampled) in a module whose path
      matches REGEX, with CPU time
  check-mpitime.py wait FILE.json FN
      prints FN's wait in ns

A function's figures are summed over its nodes.  Exits 1 saying what did
not hold.
"""
import json
import re
import sys


def load(path):
    doc = json.load(open(path))
    return doc, doc["functions"]


def fn_nodes(doc, funcs, fn):
    for tree in doc["trees"]:
        for i, n in enumerate(tree["nodes"]):
            f = n.get("function")
            if f is not None and funcs[f]["name"] == fn:
                yield tree, i, n


def field(doc, funcs, fn, key):
    return sum(n[key] for _, _, n in fn_nodes(doc, funcs, fn))


cmd, path = sys.argv[1], sys.argv[2]
doc, funcs = load(path)
if cmd == "cpu":
    fn, lo, others = sys.argv[3], float(sys.argv[4]), sys.argv[5:]
    mine = field(doc, funcs, fn, "cpu_ns")
    all_ = mine + sum(field(doc, funcs, o, "cpu_ns") for o in others)
    r = mine / all_ if all_ else 0
    print(f"{path}: {fn} cpu {mine} of {all_} ns ({fn} {' '.join(others)}) = {r:.3f}")
    if r < lo:
        sys.exit(f"{path}: {fn}'s cpu share {r:.3f} is below {lo}")
elif cmd == "libchild":
    fn, pat = sys.argv[3], re.compile(sys.argv[4])
    found = []
    for tree, i, _ in fn_nodes(doc, funcs, fn):
        for k in tree["nodes"]:
            f = k.get("function")
            if k.get("parent") == i and f is not None and k["uninstrumented"] and \
                    k["cpu_ns"] > 0 and pat.search(funcs[f].get("module") or ""):
                found.append(f"{funcs[f]['name']} ({funcs[f]['module']}, {k['cpu_ns']} ns)")
    print(f"{path}: under {fn}: " + (", ".join(found) or "nothing matching"))
    if not found:
        sys.exit(f"{path}: no child of {fn} from a module matching {sys.argv[4]}")
elif cmd == "wait":
    print(field(doc, funcs, sys.argv[3], "wait_ns"))
else:
    sys.exit("usage: check-mpitime.py cpu|libchild|wait FILE.json ...")
