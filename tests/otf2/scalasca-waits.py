#!/usr/bin/env python3
"""scalasca-waits.py: computes the Late Sender and Late Receiver time of every rank of an OTF2
archive the way Scalasca's trace analyzer (scout, 2.x) defines them, reading the archive with OTF2's
own Python bindings (Debian's python3-otf2), and compares them with the wait states of a `flowcut
analyze --format json` report of the same run. Scalasca is not packaged in Debian; this is a second
implementation of its documented pattern definitions, written apart from flowcut's matcher.

Scalasca's definitions (its MPI patterns "Late Sender" and "Late Receiver"):

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

With --per-rank, it prints instead one line per rank, "RANK LATE_SENDER LATE_RECEIVER" in
seconds by Scalasca's definitions, and compares nothing (REPORT.json then only gives the ranks).

Usage: scalasca-waits.py [--per-rank] ARCHIVE/traces.otf2 REPORT.json [TOLERANCE_S]
(tolerance default 2e-6). Prints one summary line and exits 0, or prints the first difference
and exits 1."""
import collections
import json
import sys

import otf2

ARGS = sys.argv[1:]
MODE = ARGS.pop(0)[2:] if ARGS and ARGS[0] == "--per-rank" else "scalasca"
TOL = float(ARGS[2]) if len(ARGS) > 2 else 2e-6

BLOCKING_SENDS = {"MPI_Send", "MPI_Ssend"}
WAIT_SINGLE = {"MPI_Wait", "MPI_Waitany"}
WAIT_MULTI = {"MPI_Waitall", "MPI_Waitsome"}
TEST_MULTI = {"MPI_Testall", "MPI_Testsome"}
TESTS = {"MPI_Test", "MPI_Testany"} | TEST_MULTI


class Call:
    """One MPI call of one location: its function, enter and leave (ns), its rank."""

    def __init__(self, name, enter, rank):
        self.name, self.enter, self.leave, self.rank = name, enter, None, rank


def world_rank(loc):
    # flowcut names a rank's location group "MPI Rank N", as Score-P does.
    return int(loc.group.name.rsplit(" ", 1)[-1])


def read_pairs(anchor):
    """The matched messages of the archive: [(send, receive)], each a dict of its calls."""
    sends = collections.defaultdict(list)   # channel -> [(time, seq, send)]
    recvs = collections.defaultdict(list)   # channel -> [(time, seq, recv)]
    seq = 0
    with otf2.reader.open(anchor) as trace:
        members = {c: [world_rank(m) for m in c.group.members] for c in trace.definitions.comms}
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
                return m[rank_in_comm] if rank_in_comm < len(m) else me  # MPI_COMM_SELF: itself

            if isinstance(ev, (otf2.events.MpiSend, otf2.events.MpiIsend)):
                s = {"req_call": call, "cmp_call": call if isinstance(ev, otf2.events.MpiSend) else None,
                     "bytes": ev.msg_length}
                sends[(ev.communicator, me, peer(ev.receiver, ev.communicator), ev.msg_tag)].append((ev.time, seq, s))
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
                recvs[(ev.communicator, peer(ev.sender, ev.communicator), me, ev.msg_tag)].append((ev.time, seq, r))
            seq += 1
    pairs = []
    for key in set(sends) | set(recvs):
        for (_, _, s), (_, _, r) in zip(sorted(sends[key], key=lambda x: x[:2]),
                                        sorted(recvs[key], key=lambda x: x[:2])):
            if s["cmp_call"] is not None and r["req_call"] is not None:
                pairs.append((s, r))  # else a request never completed while tracing
    return pairs


def waits(pairs):
    """Late Sender and Late Receiver per rank ({rank: seconds}) by Scalasca's definitions."""
    ls, lr = collections.defaultdict(float), collections.defaultdict(float)
    call_ls, call_lr = {}, {}  # id(call) -> (call, largest wait) for the calls that count their largest
    for s, r in pairs:
        rc = r["cmp_call"]
        if rc.name in TESTS:
            continue
        idle = (min(s["req_call"].enter, rc.leave) - rc.enter) * 1e-9
        if idle <= 0:
            continue
        if rc.name in WAIT_MULTI:
            call_ls[id(rc)] = (rc, max(idle, call_ls.get(id(rc), (rc, 0.0))[1]))
        else:
            ls[rc.rank] += idle
    for s, r in pairs:
        sc, rq = s["cmp_call"], r["req_call"]
        idle = 0 if sc.leave <= rq.enter else (rq.enter - sc.enter) * 1e-9
        if idle <= 0:
            continue
        if sc.name in BLOCKING_SENDS or sc.name in WAIT_SINGLE:
            lr[sc.rank] += idle
        elif sc.name in WAIT_MULTI and id(sc) not in call_ls:
            call_lr[id(sc)] = (sc, max(idle, call_lr.get(id(sc), (sc, 0.0))[1]))
    for c, v in call_ls.values():
        ls[c.rank] += v
    for c, v in call_lr.values():
        lr[c.rank] += v
    return ls, lr


def main():
    anchor, doc = ARGS[0], json.load(open(ARGS[1]))
    pairs = read_pairs(anchor)
    ls, lr = waits(pairs)
    ws = doc["wait_states"]
    nr = len(ws["late_sender_s"])
    if MODE == "per-rank":
        for rank in range(nr):
            print("%d %.9f %.9f" % (rank, ls.get(rank, 0.0), lr.get(rank, 0.0)))
        return
    for name, mine, theirs in (("Late Sender", ls, ws["late_sender_s"]), ("Late Receiver", lr, ws["late_receiver_s"])):
        for rank in range(nr):
            if abs(mine.get(rank, 0.0) - theirs[rank]) > TOL:
                print("WAITS: rank %d %s: %.9f s by %s, %.9f s in flowcut's report"
                      % (rank, name, mine.get(rank, 0.0), "Scalasca's definition", theirs[rank]))
                sys.exit(1)
        extra = [r for r in mine if r >= nr and mine[r] > TOL]
        if extra:
            print("WAITS: rank %d %s: %.9f s, a rank the report does not have" % (extra[0], name, mine[extra[0]]))
            sys.exit(1)
    line = "waits: %d messages, Scalasca's Late Sender %.6f s, Late Receiver %.6f s" % (
        len(pairs), sum(ls.values()), sum(lr.values()))
    print(line + ", as the report has them")


main()
