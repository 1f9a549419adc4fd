#!/usr/bin/env python3
"""check-libcalls.py - what `record --libcalls` must show, read from
`callprof export -f json` (one profile).

  check-libcalls.py path FILE.json PATH COUNT [MODULE]
      the nodes at call path PATH ("main;run_sort;qsort", names from the
      root) have COUNT calls in all; with MODULE, the path's last function
      lies in a module whose file name contains MODULE
  check-libcalls.py nomodule FILE.json MODULE
      no call of a function in a module whose name contains MODULE was
      counted: no such node has calls (cpu mode's rows of sampled code
      without hooks, whose calls are 0, may name one)
  check-libcalls.py times FILE.json MODULE
      every node of a function in MODULE: 0 <= self <= total; with the
      clock (--time=clock), min <= max; with sampled CPU time (cpu mode),
      min and max null (not measured), self samples <= samples, and self
      the self samples times the period plus self wait and inactive time

Prints what it found; exits 1 with the offending path or node otherwise.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def paths(doc):
    """(path string, function index, node) for every node but the roots."""
    funcs = doc["functions"]
    for tree in doc["trees"]:
        nodes = tree["nodes"]
        names = []
        for n in nodes:
            fn, parent = n.get("function"), n.get("parent")
            if fn is None:
                names.append("")
                continue
            prefix = names[parent] if parent is not None else ""
            names.append((prefix + ";" if prefix else "") + funcs[fn]["name"])
            yield names[-1], fn, n


def check_path(doc, want, count, module=None):
    calls, found = 0, 0
    for p, fn, n in paths(doc):
        if p != want:
            continue
        found += 1
        calls += n["calls"]
        mod = doc["functions"][fn].get("module") or ""
        if module and module not in mod:
            sys.exit(f"{want}: function in module {mod!r}, not {module!r}")
    if not found:
        sys.exit(f"{want}: no such call path")
    if calls != count:
        sys.exit(f"{want}: {calls} calls, want {count}")
    print(f"{want}: {calls} calls")


def check_nomodule(doc, module):
    sampled = 0
    for p, fn, n in paths(doc):
        f = doc["functions"][fn]
        if module not in (f.get("module") or ""):
            continue
        if n["calls"]:
            sys.exit(f"{p}: {n['calls']} calls of {f['name']}, in {f['module']}")
        sampled += 1
    print(f"no call counted in {module} ({sampled} sample-only rows)")


def check_times(doc, module):
    src = doc.get("time_source", {})
    sampled = src.get("source") == "cpu-samples"
    checked = 0
    for p, fn, n in paths(doc):
        if module not in (doc["functions"][fn].get("module") or ""):
            continue
        if not 0 <= n["self_ns"] <= n["total_ns"]:
            sys.exit(f"{p}: self {n['self_ns']} total {n['total_ns']}")
        if not sampled and not n["min_ns"] <= n["max_ns"]:
            sys.exit(f"{p}: min {n['min_ns']} max {n['max_ns']}")
        if sampled:
            if n["min_ns"] is not None or n["max_ns"] is not None:
                sys.exit(f"{p}: min {n['min_ns']} max {n['max_ns']} in cpu mode, want null")
            if not 0 <= n["self_samples"] <= n["samples"]:
                sys.exit(f"{p}: self samples {n['self_samples']} of {n['samples']}")
            want = n["self_samples"] * src["period_ns"] + n["self_wait_ns"] + \
                n["self_inactive_ns"]
            if n["self_ns"] != want:
                sys.exit(f"{p}: self {n['self_ns']}, want {n['self_samples']} samples "
                         f"x {src['period_ns']} + wait {n['self_wait_ns']} "
                         f"+ inactive {n['self_inactive_ns']} = {want}")
        checked += 1
    if not checked:
        sys.exit(f"no node in {module}")
    print(f"{checked} nodes in {module}: times consistent "
          f"({'sampled CPU time' if sampled else 'clock'})")


def main(argv):
    if len(argv) >= 5 and argv[1] == "path":
        check_path(load(argv[2]), argv[3], int(argv[4]), argv[5] if len(argv) > 5 else None)
    elif len(argv) == 4 and argv[1] == "nomodule":
        check_nomodule(load(argv[2]), argv[3])
    elif len(argv) == 4 and argv[1] == "times":
        check_times(load(argv[2]), argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
