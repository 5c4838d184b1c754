#!/usr/bin/env python3
"""check-persistcoll.py: reads the OTF2 export of a trace of examples/psolver with OTF2's own Python
bindings (Debian's python3-otf2), a reader independent of flowcut's, and checks that its MPI-4
persistent collectives are there as OTF2 carries a non-blocking collective, with the counts worked
out here from psolver's parameters (psolver.c):

- each rank enters each init (MPI_Alltoall_init, MPI_Allreduce_init, MPI_Alltoallv_init,
  MPI_Neighbor_alltoall_init) once, its Enter naming the request it creates (flowcut::request);
- each request is started ITERS times, a NonBlockingCollectiveRequest inside the MPI_Start
  (MPI_Startall for the reduction) that started it, and each start is completed once, by a
  NonBlockingCollectiveComplete inside the MPI_Test (the all-to-all, which psolver polls) or
  MPI_Wait that completed it, before the next start;
- each completion names the collective's operation (a neighbourhood all-to-all as OTF2_ALLTOALL,
  as Score-P writes it), a communicator of P members, no root, and the bytes the rank sends and
  receives: P blocks of B doubles (all-to-all), 2 doubles (reduction), 1 + (s + 2 d) % 5 doubles
  from rank s to rank d (all-to-all v), C doubles to and from each of the two ring neighbours;
- the all-to-all v's init carries its bytes per peer (flowcut::counts) as those formulas give them.

Usage: check-persistcoll.py ARCHIVE/traces.otf2 P B C ITERS
Prints one summary line and exits 0, or prints every violation and exits 1."""
import sys
from collections import defaultdict

import otf2

anchor = sys.argv[1]
P, B, C, ITERS = (int(x) for x in sys.argv[2:6])
Op = otf2.CollectiveOp
ROOT_NONE = 0xFFFFFFFF  # OTF2_COLLECTIVE_ROOT_NONE (OTF2_Events.h): a collective without a root

vsend = lambda s, d: 8 * (1 + (s + 2 * d) % 5)  # bytes rank s sends rank d in the all-to-all v


def want(kind, s):
    """(operation, starting call, completing call, bytes sent, bytes received) of rank s."""
    return {
        "MPI_Alltoall_init": (Op.ALLTOALL, "MPI_Start", "MPI_Test", 8 * B * P, 8 * B * P),
        "MPI_Allreduce_init": (Op.ALLREDUCE, "MPI_Startall", "MPI_Wait", 16, 16),
        "MPI_Alltoallv_init": (Op.ALLTOALLV, "MPI_Start", "MPI_Wait", sum(vsend(s, d) for d in range(P)),
                               sum(vsend(d, s) for d in range(P))),
        "MPI_Neighbor_alltoall_init": (Op.ALLTOALL, "MPI_Start", "MPI_Wait", 2 * 8 * C, 2 * 8 * C),
    }[kind]


INITS = ("MPI_Alltoall_init", "MPI_Allreduce_init", "MPI_Alltoallv_init", "MPI_Neighbor_alltoall_init")
errors = []
inits = defaultdict(lambda: defaultdict(int))  # kind -> rank -> inits
reqs = defaultdict(dict)                      # rank -> request id -> kind
started = defaultdict(lambda: defaultdict(int))
completed = defaultdict(lambda: defaultdict(int))
active = set()                                # (rank, request) started and not completed
stack = defaultdict(list)                     # location -> regions entered
counts = {}                                   # rank -> counts text of its all-to-all v


def attr(ev, name):
    for a, v in (ev.attributes or {}).items():
        if a.name == name:
            return v
    return None


with otf2.reader.open(anchor) as trace:
    for loc, ev in trace.events:
        rank = int(loc.group.name.rsplit(" ", 1)[-1])
        st = stack[loc]
        if isinstance(ev, otf2.events.CallingContextEnter):
            name = ev.calling_context.region.name
            st.append(name)
            if name in INITS:
                inits[name][rank] += 1
                req = attr(ev, "flowcut::request")
                if req is None:
                    errors.append("rank %d: %s without flowcut::request" % (rank, name))
                else:
                    reqs[rank][req] = name
                if name == "MPI_Alltoallv_init":
                    counts[rank] = attr(ev, "flowcut::counts")
        elif isinstance(ev, otf2.events.CallingContextLeave):
            st.pop()
        elif isinstance(ev, otf2.events.NonBlockingCollectiveRequest):
            kind = reqs[rank].get(ev.request_id)
            if kind is None:
                continue  # a non-blocking collective's own (psolver has none)
            if (rank, ev.request_id) in active:
                errors.append("rank %d: %s started again before it completed" % (rank, kind))
            active.add((rank, ev.request_id))
            started[kind][rank] += 1
            if not st or st[-1] != want(kind, rank)[1]:
                errors.append("rank %d: %s started in %s, want %s" % (rank, kind, st[-1:], want(kind, rank)[1]))
        elif isinstance(ev, otf2.events.NonBlockingCollectiveComplete):
            kind = reqs[rank].get(ev.request_id)
            if kind is None:
                errors.append("rank %d: completion of request %d, which no init created" % (rank, ev.request_id))
                continue
            if (rank, ev.request_id) not in active:
                errors.append("rank %d: %s completed without a start" % (rank, kind))
            active.discard((rank, ev.request_id))
            completed[kind][rank] += 1
            op, _, where, sent, recvd = want(kind, rank)
            got = (str(ev.collective_op), len(ev.communicator.group.members), ev.root, ev.size_sent,
                   ev.size_received, st[-1] if st else None)
            exp = (str(op), P, ROOT_NONE, sent, recvd, where)
            if got != exp:
                errors.append("rank %d: %s completed as %r, want %r" % (rank, kind, got, exp))

for kind in INITS:
    every = {r: 1 for r in range(P)}
    if dict(inits[kind]) != every:
        errors.append("%s: inits per rank %r, want one on each of %d" % (kind, dict(inits[kind]), P))
    for what, got in (("starts", started[kind]), ("completions", completed[kind])):
        if dict(got) != {r: ITERS for r in range(P)}:
            errors.append("%s: %s per rank %r, want %d each" % (kind, what, dict(got), ITERS))
if active:
    errors.append("started and never completed: %r" % sorted(active))
for s in range(P):
    runs = [tuple(int(x) for x in run.split(":")) for run in (counts.get(s) or "").split()]
    per = [(first + j, to, frm) for first, n, to, frm in runs for j in range(n)]
    exp = [(d, vsend(s, d), vsend(d, s)) for d in range(P)]
    if per != exp:
        errors.append("rank %d: MPI_Alltoallv_init counts %r, want %r" % (s, counts.get(s), exp))
for e in errors:
    print("FAIL: " + e)
if errors:
    sys.exit(1)
print("persistent collectives: %d inits, %d starts and completions on each of %d ranks" % (len(INITS), ITERS, P))
