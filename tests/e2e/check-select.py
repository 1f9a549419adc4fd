#!/usr/bin/env python3
"""check-select.py - call paths of a profile, for the record-time selection
tests, read from `callprof export -f json` (merged threads).

  check-select.py paths FILE.json
      one line per context: "a;b;c CALLS", sorted; a row of sampled code
      without hooks (cpu mode: a library function, [kernel]; the export's
      "uninstrumented") has "-" for CALLS
  check-select.py self FILE.json PATH
      the self time (ns) of the context PATH (a;b;c), 0 if it is absent
  check-select.py total FILE.json PATH
      the total (inclusive) time (ns) of the context PATH, 0 if it is absent
  check-select.py self-cpu FILE.json PATH, check-select.py cpu FILE.json PATH
      the same on the CPU: less the time off it (waiting, or preempted while
      another process ran: the machine's load), where it was measured
  check-select.py calls FILE.json
      the sum of calls over every context
"""
import json
import sys


def contexts(doc):
    names = [f["name"] for f in doc["functions"]]
    for tree in doc["trees"]:
        paths = []
        for n in tree["nodes"]:
            if n["parent"] is None:
                paths.append("")
                continue
            parent = paths[n["parent"]]
            path = (parent + ";" if parent else "") + names[n["function"]]
            paths.append(path)
            yield path, n


def main():
    what, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        doc = json.load(f)
    if what == "paths":
        for p in sorted(f"{p} {'-' if n.get('uninstrumented') else n['calls']}"
                        for p, n in contexts(doc)):
            print(p)
    elif what == "self":
        print(sum(n["self_ns"] for p, n in contexts(doc) if p == sys.argv[3]))
    elif what == "total":
        print(sum(n["total_ns"] for p, n in contexts(doc) if p == sys.argv[3]))
    elif what == "self-cpu":
        print(sum(n.get("self_cpu_ns", n["self_ns"]) for p, n in contexts(doc)
                  if p == sys.argv[3]))
    elif what == "cpu":
        print(sum(n.get("cpu_ns", n["total_ns"]) for p, n in contexts(doc) if p == sys.argv[3]))
    elif what == "calls":
        print(sum(n["calls"] for p, n in contexts(doc)))
    else:
        sys.exit(f"unknown check {what}")


main()
