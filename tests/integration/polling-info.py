#!/usr/bin/env python3
"""polling-info.py INFO-JSON INFO-TEXT COUNTS NRANKS: checks that `flowcut info` of a polling run
counts, for each polling function, the calls the program made (the sum over ranks of COUNTS.RANK,
"NAME CALLS FOUND" a line), in its JSON `calls` and on the function's line of its text, whether the
trace holds each call or folds runs of them."""
import json
import re
import sys

info_json, info_text, counts, nranks = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
want = {}
for r in range(nranks):
    with open("%s.%d" % (counts, r)) as f:
        for name, calls, _ in (line.split() for line in f):
            want[name] = want.get(name, 0) + int(calls)
j = json.load(open(info_json))
text = {}
for line in open(info_text):
    m = re.match(r"^  (MPI_\w+) +(\d+)", line)
    if m:
        text[m.group(1)] = int(m.group(2))
bad = []
for name, calls in want.items():
    if j["calls"].get(name) != calls:
        bad.append("info --json: %s calls %r, the program made %d" % (name, j["calls"].get(name), calls))
    if text.get(name) != calls:
        bad.append("info: %s line %r, the program made %d" % (name, text.get(name), calls))
if j["calls_total"] != sum(j["calls"].values()):
    bad.append("info --json: calls_total %d is not the sum of calls %d" % (j["calls_total"], sum(j["calls"].values())))
print("\n".join(bad) if bad else "info: every polling function's calls match the program's")
sys.exit(1 if bad else 0)
