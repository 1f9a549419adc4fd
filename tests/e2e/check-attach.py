#!/usr/bin/env python3
"""check-attach.py - hold a profile (`callprof export -f json`, threads
merged) against the test server's own counters (tests/e2e/workloads/s-server.c:
its "stats" and "final" lines, one line a file, "fn:NAME=CALLS" per
instrumented function).

  check-attach.py exact FILE.json A.stats B.stats FUNCTION...
      each FUNCTION's calls in the profile (summed over its nodes) are the
      server's count in B less its count in A: the calls made between the
      two replies, all of them inside the window
  check-attach.py bound FILE.json P.stats C.stats
      every function with calls in the profile is one the server counts,
      and its calls are at most the server's count in C less its count in P
      (P read before the attach, C after the detach): the profile invents
      no call
  check-attach.py record FILE.json FINAL.stats
      a whole run under `callprof record`: every function's calls are the
      server's final count, and the profile names no other function (the
      server's counting is complete)
  check-attach.py open FILE.json PATH
      the node at PATH (names joined by ';', from the thread's root) is
      marked open_at_attach (a count, at least 1) and has 0 calls (PATH is made no call of in the
      window: a node of a frame open at attach may also count the calls
      made on the same path in the window, such as read_command's)
  check-attach.py still FILE.json PATH SECONDS
      the node at PATH was open the whole window of SECONDS and its thread
      ran no hook in it (blocked): marked open_at_attach, 0 calls, its
      time at least 0.7 x SECONDS and at most SECONDS + 5 (the switch back
      on a loaded machine takes its share), and at least 0.7
      of that time off CPU (wait and inactive), not CPU
  check-attach.py blocked FILE.json PATH SECONDS
      the node at PATH holds at least SECONDS of wait (blocked), and its
      inactive time (runnable, waiting for a CPU) is at most a fifth of that
  check-attach.py listed FILE.json FUNCTION...
      each FUNCTION has a node (coverage: no counts)

Prints what it compared; exits 1 with what differs otherwise.
"""
import json
import sys


def load(path):
    with open(path) as f:
        doc = json.load(f)
    names = [f["name"] for f in doc["functions"]]
    nodes = []
    for tree in doc["trees"]:
        tn = tree["nodes"]
        for n in tn:
            fn = n.get("function")
            path = []
            p = n
            while p is not None and p.get("function") is not None:
                path.append(names[p["function"]])
                p = tn[p["parent"]] if p.get("parent") is not None else None
            if fn is not None and "signal" in doc["functions"][fn]:
                n = dict(n, signal_frame=True)
            nodes.append((";".join(reversed(path)), n))
    return doc, nodes


def calls_by_function(nodes):
    """Calls per instrumented function: code without hooks (sampled rows,
    [kernel]) and the runtime's signal frames (<signal N>) are no function
    of the server's."""
    calls = {}
    for path, n in nodes:
        if not path or n.get("uninstrumented") or n.get("signal_frame"):
            continue
        name = path.rsplit(";", 1)[-1]
        calls[name] = calls.get(name, 0) + (n.get("calls") or 0)
    return calls


def stats(path):
    with open(path) as f:
        words = f.read().split()
    fn = {}
    for w in words[1:]:
        k, _, v = w.partition("=")
        if k.startswith("fn:"):
            fn[k[3:]] = int(v)
    if not fn:
        sys.exit("%s: no fn:NAME=CALLS in %r" % (path, " ".join(words)[:200]))
    return fn


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    cmd, doc_path = argv[1], argv[2]
    doc, nodes = load(doc_path)
    calls = calls_by_function(nodes)
    bad = []
    if cmd == "exact":
        a, b = stats(argv[3]), stats(argv[4])
        for f in argv[5:]:
            want = b.get(f, 0) - a.get(f, 0)
            got = calls.get(f, 0)
            print("%s: profile %d, server %d" % (f, got, want))
            if f not in b:
                bad.append("%s: the server does not count it" % f)
            elif got != want:
                bad.append("%s: %d calls in the profile, the server made %d in the window"
                           % (f, got, want))
    elif cmd == "bound":
        p, c = stats(argv[3]), stats(argv[4])
        for f, got in sorted(calls.items()):
            if f not in c:
                # a frame seeded at attach outside the server's code (no
                # call in the window) is a context, not an invented call
                if got:
                    bad.append("%s: %d calls in the profile, a function the server "
                               "does not have" % (f, got))
                else:
                    print("%s: profile 0, not the server's (a context open at attach)" % f)
                continue
            most = c[f] - p.get(f, 0)
            print("%s: profile %d <= server %d" % (f, got, most))
            if got > most:
                bad.append("%s: %d calls in the profile, more than the server's %d"
                           % (f, got, most))
    elif cmd == "record":
        final = stats(argv[3])
        for f in sorted(set(calls) | set(final)):
            got, want = calls.get(f, 0), final.get(f)
            print("%s: profile %d, server %s" % (f, got, want))
            if want is None:
                bad.append("%s: in the profile, not counted by the server" % f)
            elif got != want:
                bad.append("%s: %d calls in the profile, the server counted %d" % (f, got, want))
    elif cmd == "open":
        want = argv[3]
        if not any("open_at_attach" in n for _, n in nodes):
            bad.append("no node has an open_at_attach member (export -f json)")
        found = [n for path, n in nodes if path == want]
        if not found:
            bad.append("no node at %s; paths ending like it: %s" % (
                want, sorted({p for p, _ in nodes if p.endswith(want.rsplit(";", 1)[-1])})))
        for n in found:
            print("%s: open_at_attach %s, calls %s" % (want, n.get("open_at_attach"),
                                                       n.get("calls")))
            if not (isinstance(n.get("open_at_attach"), int) and n.get("open_at_attach") >= 1):
                bad.append("%s: not marked open_at_attach" % want)
            if n.get("calls"):
                bad.append("%s: %d calls, want 0 (entered before the attach)"
                           % (want, n["calls"]))
    elif cmd == "still":
        want, secs = argv[3], float(argv[4])
        found = [n for path, n in nodes if path == want]
        if not found:
            bad.append("no node at %s; paths: %s" % (want, sorted({p for p, _ in nodes})))
        for n in found:
            total, wait, inactive = (n.get("total_ns", 0), n.get("wait_ns", 0),
                                     n.get("inactive_ns", 0))
            print("%s: open_at_attach %s, calls %s, total %d ns, wait %d ns, inactive %d ns"
                  % (want, n.get("open_at_attach"), n.get("calls"), total, wait, inactive))
            if not (isinstance(n.get("open_at_attach"), int) and n.get("open_at_attach") >= 1):
                bad.append("%s: not marked open_at_attach" % want)
            if n.get("calls"):
                bad.append("%s: %d calls, want 0" % (want, n["calls"]))
            if not 0.7 * secs * 1e9 <= total <= (secs + 5) * 1e9:
                bad.append("%s: %d ns, want the window's %.1f s" % (want, total, secs))
            if wait + inactive < 0.7 * total:
                bad.append("%s: %d ns of its %d ns off CPU, want most of it (blocked)"
                           % (want, wait + inactive, total))
    elif cmd == "blocked":
        want, secs = argv[3], float(argv[4])
        found = [n for path, n in nodes if path == want]
        if not found:
            bad.append("no node at %s; paths: %s" % (want, sorted({p for p, _ in nodes})))
        for n in found:
            wait, inactive = n.get("wait_ns", 0), n.get("inactive_ns", 0)
            print("%s: wait %d ns, inactive %d ns" % (want, wait, inactive))
            if wait < secs * 1e9:
                bad.append("%s: %d ns of wait, want at least %.1f s" % (want, wait, secs))
            if 5 * inactive > wait:
                bad.append("%s: %d ns inactive beside %d ns of wait: the run-queue wait "
                           "from before the attach?" % (want, inactive, wait))
    elif cmd == "listed":
        for f in argv[3:]:
            print("%s: %s" % (f, "listed" if f in calls else "missing"))
            if f not in calls:
                bad.append("%s: not in the profile (functions: %s)" % (f, sorted(calls)))
    else:
        sys.exit("check-attach.py: unknown command %r" % cmd)
    for b in bad:
        print("check-attach.py: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
