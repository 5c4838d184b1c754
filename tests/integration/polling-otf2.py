#!/usr/bin/env python3
"""polling-otf2.py ARCHIVE COUNTS NRANKS MODE: reads an OTF2 archive `flowcut export` wrote of a
polling run with OTF2's own Python bindings and checks, per rank and polling function, that the
calls it stands for add up to the program's own count in COUNTS.RANK ("NAME CALLS FOUND" a line).

A call region entered with the attribute flowcut::polls stands for that many calls, any other for
one. MODE folded (the default export): at least one call carries the attribute. MODE expanded
(--expand-polls): the archive defines no such attribute, and rank 0 alone is read (the workers'
polls run to millions of calls, too many for the Python reader in a test)."""
import sys
import otf2

archive, counts, nranks, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
want = []
for r in range(nranks):
    with open("%s.%d" % (counts, r)) as f:
        want.append({name: int(calls) for name, calls, _ in (line.split() for line in f)})

got = [{} for _ in range(nranks)]
attributed = 0
with otf2.reader.open(archive) as trace:
    attr = [a for a in trace.definitions.attributes if a.name == "flowcut::polls"]
    if mode == "expanded":
        if attr:
            print("--expand-polls defines flowcut::polls")
            sys.exit(1)
        nranks = 1
        want = want[:1]
        events = trace.events([l for l in trace.definitions.locations if l.group._ref == 0])
    else:
        events = trace.events
    for location, ev in events:
        if not isinstance(ev, otf2.events.CallingContextEnter):
            continue
        name = ev.calling_context.region.name
        if name not in want[0]:
            continue
        n = 1
        for a, v in (ev.attributes or {}).items():
            if a.name == "flowcut::polls":
                n = v
                attributed += 1
        rank = location.group._ref
        got[rank][name] = got[rank].get(name, 0) + n

bad = []
for r in range(nranks):
    for name, calls in want[r].items():
        if got[r].get(name, 0) != calls:
            bad.append("rank %d %s: the archive stands for %d calls, the program made %d" % (r, name, got[r].get(name, 0), calls))
if mode == "folded" and attributed == 0:
    bad.append("no call carries flowcut::polls")
print("\n".join(bad) if bad else "%s export: %d calls carry flowcut::polls; every count matches" % (mode, attributed))
sys.exit(1 if bad else 0)
