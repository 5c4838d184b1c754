#!/usr/bin/env python3
"""scalasca-waits.py: computes the Late Sender and Late Receiver time of every rank of an OTF2
archive the way Scalasca's trace analyzer (scout, 2.x) defines them, reading the archive with OTF2's
own Python bindings (Debian's python3-otf2), and compares them with the wait states of a `flowcut
analyze --format json` report of the same run. Scalasca is not packaged in Debian; this is a second
implementation of its documented pattern definitions, written apart from flowcut's matcher.

The definitions (Scalasca's MPI patterns "Late Sender" and "Late Receiver"):

- Messages pair in MPI's order: on each channel (communicator, sender, receiver, tag) the k-th send
  (MpiSend, MpiIsend) with the k-th receive (MpiRecv, MpiIrecv: the completion on the receiver).
- A send's request call is the MPI call its MpiSend/MpiIsend lies in; its completion call is that
  call for MpiSend, else the call holding the MpiIsendComplete of its request. A receive's
  completion call holds its MpiRecv/MpiIrecv; its request call is that call for MpiRecv, else the
  call holding the MpiIrecvRequest of its request.
- Late Sender, per receive, unless its completion call is a Test: min(enter of the send's request
  call, leave of the receive's completion call) - enter of the receive's completion call, when
  positive. In an MPI_Waitall or MPI_Waitsome the call counts the largest of its receives' waits.
- Late Receiver, per send: 0 when the send's completion call leaves no later than the receive's
  request call enters, else enter of the receive's request call - enter of the send's completion
  call, when positive. It counts only in MPI_Send, MPI_Ssend, MPI_Wait and MPI_Waitany calls, and
  in an MPI_Waitall or MPI_Waitsome that had no Late Sender, as the largest of its sends' waits.
  Nothing else is asked of the send: not its protocol, not its size.

Each rank's figure is the sum over its locations (threads) and calls.

With --rendezvous, Late Receiver counts only the sends that must wait for their receive whatever
the library does: synchronous ones (MPI_Ssend, MPI_Issend, MPI_Ssend_init), and the others of the
report's eager threshold or more (the rendezvous protocol): flowcut's definition. The summary line then also gives the Late
Receiver time that Scalasca's definition counts on the other sends.

Usage: scalasca-waits.py [--rendezvous] ARCHIVE/traces.otf2 REPORT.json [TOLERANCE_SECONDS]
(tolerance default 2e-6). Prints one summary line and exits 0, or prints the first difference
and exits 1."""
import collections
import json
import sys

import otf2

ARGS = sys.argv[1:]
RNDV = ARGS[:1] == ["--rendezvous"]
ARGS = ARGS[RNDV:]
TOL = float(ARGS[2]) if len(ARGS) > 2 else 2e-6

BLOCKING_SENDS = {"MPI_Send", "MPI_Ssend"}
SYNC_SENDS = {"MPI_Ssend", "MPI_Issend", "MPI_Ssend_init"}
WAIT_SINGLE = {"MPI_Wait", "MPI_Waitany"}
WAIT_MULTI = {"MPI_Waitall", "MPI_Waitsome"}
TESTS = {"MPI_Test", "MPI_Testany", "MPI_Testall", "MPI_Testsome"}


class Call:
    """One MPI call of one location: its function, enter and leave (ns), its rank."""

    def __init__(self, name, enter, rank):
        self.name, self.enter, self.leave, self.rank = name, enter, None, rank
        self.ls = 0.0       # the largest Late Sender wait of its receives (multi waits)
        self.lr = 0.0       # the largest Late Receiver wait of its sends (multi waits)


def world_rank(loc):
    # flowcut names a rank's location group "MPI Rank N", as Score-P does.
    return int(loc.group.name.rsplit(" ", 1)[-1])


def main():
    anchor, doc = ARGS[0], json.load(open(ARGS[1]))
    rndv = doc["eager_threshold"] if RNDV else None
    sends = collections.defaultdict(list)   # channel -> [(time, seq, send)]
    recvs = collections.defaultdict(list)   # channel -> [(time, seq, recv)]
    seq = 0
    with otf2.reader.open(anchor) as trace:
        members = {}
        for c in trace.definitions.comms:
            members[c] = [world_rank(m) for m in c.group.members]
        stack = {}      # location -> open calls
        isend = {}      # (location, request) -> send waiting for its completion
        irecv = {}      # (location, request) -> request call of a receive
        for loc, ev in trace.events:
            me = world_rank(loc)
            st = stack.setdefault(loc, [])
            if isinstance(ev, otf2.events.CallingContextEnter):
                st.append(Call(ev.calling_context.region.name, ev.time, me))
                continue
            if isinstance(ev, otf2.events.CallingContextLeave):
                st.pop().leave = ev.time
                continue
            if not st:
                continue
            call = st[-1]

            def peer(rank_in_comm, comm):
                m = members.get(comm) or []
                return m[rank_in_comm] if rank_in_comm < len(m) else me  # COMM_SELF: itself

            if isinstance(ev, (otf2.events.MpiSend, otf2.events.MpiIsend)):
                s = {"req_call": call, "cmp_call": call if isinstance(ev, otf2.events.MpiSend) else None,
                     "bytes": ev.msg_length}
                key = (ev.communicator, me, peer(ev.receiver, ev.communicator), ev.msg_tag)
                sends[key].append((ev.time, seq, s))
                if isinstance(ev, otf2.events.MpiIsend):
                    isend[(loc, ev.request_id)] = s
            elif isinstance(ev, otf2.events.MpiIsendComplete):
                s = isend.pop((loc, ev.request_id), None)
                if s is not None:
                    s["cmp_call"] = call
            elif isinstance(ev, otf2.events.MpiIrecvRequest):
                irecv[(loc, ev.request_id)] = call
            elif isinstance(ev, (otf2.events.MpiRecv, otf2.events.MpiIrecv)):
                req = call if isinstance(ev, otf2.events.MpiRecv) else irecv.pop((loc, ev.request_id), None)
                r = {"req_call": req, "cmp_call": call}
                key = (ev.communicator, peer(ev.sender, ev.communicator), me, ev.msg_tag)
                recvs[key].append((ev.time, seq, r))
            seq += 1
    ls = collections.defaultdict(float)
    lr = collections.defaultdict(float)
    eager_lr = 0.0  # with --rendezvous: Scalasca's Late Receiver on the sends left out
    multi = {}  # id(call) -> call, the multi waits whose figure is its largest wait
    paired = 0
    pairs = []
    for key in set(sends) | set(recvs):
        for (_, _, s), (_, _, r) in zip(sorted(sends[key], key=lambda x: x[:2]), sorted(recvs[key], key=lambda x: x[:2])):
            if s["cmp_call"] is None or r["req_call"] is None:
                continue  # a request never completed, or a receive posted before tracing
            pairs.append((s, r))
    paired = len(pairs)
    # Late Sender first: a multi wait with one takes no Late Receiver.
    for s, r in pairs:
        rc = r["cmp_call"]
        if rc.name in TESTS:
            continue
        idle = (min(s["req_call"].enter, rc.leave) - rc.enter) * 1e-9
        if idle <= 0:
            continue
        if rc.name in WAIT_MULTI:
            rc.ls = max(rc.ls, idle)
            multi[id(rc)] = rc
        else:
            ls[rc.rank] += idle
    for s, r in pairs:
        sc, rq = s["cmp_call"], r["req_call"]
        idle = 0 if sc.leave <= rq.enter else (rq.enter - sc.enter) * 1e-9
        if idle <= 0:
            continue
        if rndv is not None and s["bytes"] < rndv and s["req_call"].name not in SYNC_SENDS:
            if sc.name in BLOCKING_SENDS or sc.name in WAIT_SINGLE or (sc.name in WAIT_MULTI and sc.ls == 0):
                eager_lr += idle
            continue
        if sc.name in BLOCKING_SENDS or sc.name in WAIT_SINGLE:
            lr[sc.rank] += idle
        elif sc.name in WAIT_MULTI and sc.ls == 0:
            sc.lr = max(sc.lr, idle)
            multi[id(sc)] = sc
    for c in multi.values():
        ls[c.rank] += c.ls
        lr[c.rank] += c.lr

    ws = doc["wait_states"]
    nr = len(ws["late_sender_s"])
    for name, mine, theirs in (("Late Sender", ls, ws["late_sender_s"]), ("Late Receiver", lr, ws["late_receiver_s"])):
        for rank in range(nr):
            if abs(mine.get(rank, 0.0) - theirs[rank]) > TOL:
                print("WAITS: rank %d %s: %.9f s by Scalasca's definition, %.9f s in flowcut's report"
                      % (rank, name, mine.get(rank, 0.0), theirs[rank]))
                sys.exit(1)
        extra = [r for r in mine if r >= nr and mine[r] > TOL]
        if extra:
            print("WAITS: rank %d %s: %.9f s, a rank the report does not have" % (extra[0], name, mine[extra[0]]))
            sys.exit(1)
    rest = "" if rndv is None else " (sends below %d B left out: %.6f s)" % (rndv, eager_lr)
    print("waits: %d messages, Late Sender %.6f s, Late Receiver %.6f s%s, as Scalasca defines them"
          % (paired, sum(ls.values()), sum(lr.values()), rest))


main()
