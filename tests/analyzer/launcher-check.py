#!/usr/bin/env python3
"""launcher-check.py JSON FORMAT FILE [PLACED]: reads a file `flowcut remap --format FORMAT` wrote
as its launcher reads it, and checks that it places each rank where the suggestion of the JSON
document (`flowcut remap --format json` of the same trace and options) that its judgement names as
the equivalent one moving fewest ranks (`fewest_moves`) puts it. PLACED, when given, receives the
node of each rank as the launcher places it (a JSON list; for Cray, which names no node, the
suggestion's).

How each launcher reads its file (from its documentation):
  hydra    MPICH Hydra machinefile: lines `host` or `host:n` (`#` starts a comment); with as many
           ranks as slots, Hydra gives each line's slots to consecutive ranks, line after line.
           The rank that runs in each slot is the `# rank-order:` line's entry for that slot, which
           flowcut's tracer applies at MPI_Init (FLOWCUT_RANK_ORDER).
  openmpi  Open MPI rankfile: `rank N=host slot=S`, one line per rank, S a slot of that host.
  slurm    SLURM_HOSTFILE for srun --distribution=arbitrary: one host per line, line i is task i's.
  cray     MPICH_RANK_ORDER for MPICH_RANK_REORDER_METHOD=3: the ranks (comma-separated, ranges
           a-b allowed, `#` lines comments) placed in order on the job's nodes, P to a node where
           P is the launcher's ranks per node; the file names no node, so the check is that the
           ranks sharing a node are those the suggestion puts together, with P the most ranks it
           puts on one node.
Exits 1 with one line per problem."""
import json
import re
import sys


def fail(msgs):
    for m in msgs:
        print("%s %s: %s" % (fmt, path, m))
    sys.exit(1 if msgs else 0)


def hydra(lines, n):
    slots, order, bad = [], None, []
    for line in lines:
        if line.startswith("# rank-order:"):
            order = [int(x) for x in line.split(":", 1)[1].split(",")]
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)(?::([1-9][0-9]*))?", body)
        if not m:
            bad.append("line %r is not host or host:n" % line)
            continue
        slots += [m.group(1)] * int(m.group(2) or 1)
    if order is None:
        return None, bad + ["no # rank-order: line"]
    if len(slots) != n or sorted(order) != list(range(n)):
        return None, bad + ["%d slots and a rank order of %d entries for %d ranks" % (len(slots), len(order), n)]
    # Hydra fills the lines in blocks: launcher rank s runs on slots[s]; renumbered, it is rank order[s].
    place = [None] * n
    for s, host in enumerate(slots):
        place[order[s]] = host
    return place, bad


def openmpi(lines, n):
    place, bad, used = [None] * n, [], set()
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        m = re.fullmatch(r"rank (\d+)=(\S+) slot=(\d+)", line.strip())
        if not m:
            bad.append("line %r is not `rank N=host slot=S`" % line)
            continue
        r, host, slot = int(m.group(1)), m.group(2), int(m.group(3))
        if r >= n or place[r] is not None:
            bad.append("rank %d out of range or given twice" % r)
            continue
        if (host, slot) in used:
            bad.append("slot %d of %s given to two ranks" % (slot, host))
        used.add((host, slot))
        place[r] = host
    return place, bad


def slurm(lines, n):
    hosts = [l.strip() for l in lines if l.strip()]
    bad = ["line %r: SLURM_HOSTFILE lines are host names" % h for h in hosts if not re.fullmatch(r"[A-Za-z0-9_.-]+", h)]
    if len(hosts) != n:
        bad.append("%d hosts for %d tasks" % (len(hosts), n))
        return None, bad
    return hosts, bad


def cray(lines, n, want):
    ranks = []
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        for w in line.strip().split(","):
            m = re.fullmatch(r"(\d+)(?:-(\d+))?", w.strip())
            if not m:
                return None, ["%r is not a rank or range" % w]
            a, b = int(m.group(1)), int(m.group(2) or m.group(1))
            ranks += range(a, b + 1)
    if sorted(ranks) != list(range(n)):
        return None, ["the ranks listed are not 0..%d once each" % (n - 1)]
    groups = {}
    for r, h in enumerate(want):
        groups.setdefault(h, set()).add(r)
    ppn = max(len(g) for g in groups.values())
    placed = [set(ranks[i:i + ppn]) for i in range(0, n, ppn)]
    if sorted(map(sorted, placed)) != sorted(map(sorted, groups.values())):
        return None, ["%d to a node, the listed ranks share nodes as %s, the suggestion as %s"
                      % (ppn, sorted(map(sorted, placed)), sorted(map(sorted, groups.values())))]
    return want, []


doc, fmt, path = sys.argv[1:4]
d = json.load(open(doc))
want = d["suggestions"][d["judgement"]["fewest_moves"] - 1]["rank_to_node"]
n = len(want)
lines = open(path).read().splitlines()
if fmt == "cray":
    place, bad = cray(lines, n, want)
else:
    place, bad = {"hydra": hydra, "openmpi": openmpi, "slurm": slurm}[fmt](lines, n)
if place is not None and place != want:
    bad.append("ranks go to %s, the suggestion says %s" % (place, want))
if len(sys.argv) > 4 and place is not None:
    json.dump(place, open(sys.argv[4], "w"))
fail(bad)
