#!/usr/bin/env python3
"""compare-analyze.py: checks that two `flowcut analyze --format json` reports (a native trace's and
the same trace's after an OTF2 round trip) describe the same flows, intra-node messages, intervals
and conflict labels, times equal up to a tolerance (the clock alignment is recomputed by OTF2's
reader, which rounds to the nanosecond). A rounding of 1 ns can open or close an interval or a
label run shorter than the tolerance where two flows start or end at nearly the same time, so runs
and intervals that short are left out of both sides before comparing (adjacent runs of the same
label are then merged). A run or interval whose length is within a nanosecond of the tolerance is
itself cut on one side and not the other: where the short ones differ, they are compared again
with twice the tolerance as the cut, which both sides then pass alike.

Usage: compare-analyze.py NATIVE.json OTF2.json [TOLERANCE_SECONDS]   (default 2e-6)
Prints the first difference and exits 1, or exits 0."""
import json
import sys

TOL = float(sys.argv[3]) if len(sys.argv) > 3 else 2e-6


def fail(msg):
    print("DIFF: " + msg)
    sys.exit(1)


def same_time(a, b):
    return abs(a - b) <= TOL


def runs(conflict, cut=TOL):
    """The label runs longer than cut, with adjacent equal labels merged."""
    out = []
    for c in conflict:
        if c["end"] - c["start"] <= cut:
            continue
        if out and (out[-1]["kind"], out[-1]["node"], out[-1]["k"]) == (c["kind"], c["node"], c["k"]):
            out[-1] = dict(out[-1], end=c["end"])
        else:
            out.append(dict(c))
    return out


def check_msg(kind, i, a, b, conflicts):
    for f in ("src_rank", "dst_rank", "src_node", "dst_node", "bytes", "tag", "rendezvous", "collective", "algorithm", "step",
              "send_site", "recv_site"):
        if a.get(f) != b.get(f):
            fail("%s %d: %s %r != %r" % (kind, i, f, a[f], b[f]))
    for f in ("start", "end"):
        if not same_time(a[f], b[f]):
            fail("%s %d: %s %.9f != %.9f" % (kind, i, f, a[f], b[f]))
    if not conflicts:
        return
    def labels(v):
        return [(c["kind"], c["node"], c["k"]) for c in v]
    ca, cb = runs(a["conflict"]), runs(b["conflict"])
    if labels(ca) != labels(cb):
        ca, cb = runs(a["conflict"], 2 * TOL), runs(b["conflict"], 2 * TOL)
    if labels(ca) != labels(cb):
        fail("flow %d: labels %r != %r" % (i, ca, cb))
    for x, y in zip(ca, cb):
        if not same_time(x["start"], y["start"]) or not same_time(x["end"], y["end"]):
            fail("flow %d: label times %r != %r" % (i, x, y))


def main():
    a = json.load(open(sys.argv[1]))
    b = json.load(open(sys.argv[2]))
    for f in ("ranks", "nodes"):
        if a[f] != b[f]:
            fail("%s: %r != %r" % (f, a[f], b[f]))
    for f in ("matched", "inter_node", "intra_node", "unmatched_sends", "unmatched_recvs"):
        if a["messages"][f] != b["messages"][f]:
            fail("messages.%s: %r != %r" % (f, a["messages"][f], b["messages"][f]))
    # Flow ids follow the start order; starts equal up to rounding can swap two flows' ids, so
    # flows are compared in the order of (start rounded, source, destination, tag).
    def order(v):
        return sorted(v, key=lambda m: (round(m["start"] / (10 * TOL)), m["src_rank"], m["dst_rank"], m["tag"], m["id"]))
    for kind, conflicts in (("flows", True), ("intra", False)):
        if len(a[kind]) != len(b[kind]):
            fail("%s: %d != %d" % (kind, len(a[kind]), len(b[kind])))
        for i, (x, y) in enumerate(zip(order(a[kind]), order(b[kind]))):
            check_msg(kind, i, x, y, conflicts)
    ia = [v for v in a["intervals"] if v["end"] - v["start"] > TOL]
    ib = [v for v in b["intervals"] if v["end"] - v["start"] > TOL]
    if len(ia) != len(ib):
        ia = [v for v in a["intervals"] if v["end"] - v["start"] > 2 * TOL]
        ib = [v for v in b["intervals"] if v["end"] - v["start"] > 2 * TOL]
    if len(ia) != len(ib):
        fail("intervals longer than %g s: %d != %d" % (TOL, len(ia), len(ib)))
    for i, (x, y) in enumerate(zip(ia, ib)):
        if not same_time(x["start"], y["start"]) or not same_time(x["end"], y["end"]):
            fail("interval %d: [%.9f, %.9f) != [%.9f, %.9f)" % (i, x["start"], x["end"], y["start"], y["end"]))
        if len(x["flows"]) != len(y["flows"]):
            fail("interval %d: %d flows != %d" % (i, len(x["flows"]), len(y["flows"])))
        ka = sorted((c["node"], c["kind"], c["k"]) for c in x["conflicts"])
        kb = sorted((c["node"], c["kind"], c["k"]) for c in y["conflicts"])
        if ka != kb:
            fail("interval %d: conflicts %r != %r" % (i, ka, kb))
    print("same: %d flows, %d intra-node messages, %d intervals" % (len(a["flows"]), len(a["intra"]), len(a["intervals"])))


main()
