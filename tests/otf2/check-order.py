#!/usr/bin/env python3
"""check-order.py: checks the event records of an exported archive (the output of `otf2-print
ARCHIVE`) against the order in which Score-P writes MPI events: the message or collective-begin
record of a call right after its Enter and at its time (MpiSend, MpiIsend, MpiCollectiveBegin,
NonBlockingCollectiveRequest), the records of what a call finishes right before its Leave and at
its time (MpiRecv, MpiIrecvRequest, MpiCollectiveEnd), or, for the completion of a request
(MpiIrecv, MpiIsendComplete, ...), at the time the request completed inside the call (a COMPLETE
with a time of its own, format 2.1), in time order; Enter/Leave balanced; MPI_Irecv's request record at its Leave but a persistent receive's at the Enter of its
MPI_Start(all); MPI_Init first and MPI_Finalize last on the first thread of every rank; as many
messages sent as received.

Usage: otf2-print ARCHIVE | check-order.py RANKS"""
import re
import sys

AT_ENTER = {"MPI_SEND", "MPI_ISEND", "MPI_COLLECTIVE_BEGIN", "NON_BLOCKING_COLLECTIVE_REQUEST"}
AT_LEAVE = {"MPI_RECV", "MPI_IRECV_REQUEST", "MPI_COLLECTIVE_END"}
# A request's completion: at the Leave, or earlier inside the call at the request's own time.
COMPLETIONS = {"MPI_IRECV", "MPI_ISEND_COMPLETE", "NON_BLOCKING_COLLECTIVE_COMPLETE", "MPI_REQUEST_CANCELLED"}
BEFORE_LEAVE = AT_LEAVE | COMPLETIONS
# MPI_Start(all) posts the messages of persistent requests before it calls PMPI: at its Enter.
EITHER = {"MPI_IRECV_REQUEST"}
line_re = re.compile(r'^([A-Z_]+)\s+(\d+)\s+(\d+)\s*(.*)$')
region_re = re.compile(r'Region: "([^"]*)"')


def fail(msg):
    print("ORDER: " + msg)
    sys.exit(1)


def main():
    ranks = int(sys.argv[1])
    locs = {}
    for line in sys.stdin:
        m = line_re.match(line)
        if m:
            locs.setdefault(int(m.group(2)), []).append((m.group(1), int(m.group(3)), m.group(4)))
    sent = received = 0
    for loc, evs in locs.items():
        stack = []
        for i, (name, t, rest) in enumerate(evs):
            if name == "ENTER":
                stack.append((region_re.search(rest).group(1), t, i))
            elif name == "LEAVE":
                if not stack or stack[-1][0] != region_re.search(rest).group(1):
                    fail("location %d: unbalanced Leave at %d" % (loc, t))
                stack.pop()
            elif name in AT_ENTER:
                if not stack or evs[i - 1][0] not in {"ENTER"} | AT_ENTER | EITHER or t != stack[-1][1]:
                    fail("location %d: %s at %d is not at the Enter of its call" % (loc, name, t))
            elif name in EITHER and stack and evs[i - 1][0] in {"ENTER"} | AT_ENTER | EITHER and t == stack[-1][1]:
                pass
            elif name in AT_LEAVE:
                nxt = next((e for e in evs[i + 1:] if e[0] not in BEFORE_LEAVE), None)
                if not stack or nxt is None or nxt[0] != "LEAVE" or nxt[1] != t:
                    fail("location %d: %s at %d is not at the Leave of its call" % (loc, name, t))
            elif name in COMPLETIONS:
                nxt = next((e for e in evs[i + 1:] if e[0] not in BEFORE_LEAVE), None)
                if not stack or nxt is None or nxt[0] != "LEAVE" or not stack[-1][1] <= t <= nxt[1]:
                    fail("location %d: %s at %d is not inside its call, before its Leave" % (loc, name, t))
            sent += name in ("MPI_SEND", "MPI_ISEND")
            received += name in ("MPI_RECV", "MPI_IRECV")
        if stack:
            fail("location %d: region %s never left" % (loc, stack[-1][0]))
        if loc < 2 ** 32:
            regions = [region_re.search(r).group(1) for n, t, r in evs if n == "ENTER"]
            if not regions or regions[0] not in ("MPI_Init", "MPI_Init_thread") or regions[-1] != "MPI_Finalize":
                fail("location %d: does not start with MPI_Init and end with MPI_Finalize" % loc)
    if len([l for l in locs if l < 2 ** 32]) != ranks:
        fail("%d ranks have events, expected %d" % (len([l for l in locs if l < 2 ** 32]), ranks))
    if sent != received:
        fail("%d messages sent, %d received" % (sent, received))
    print("order: %d locations, %d messages" % (len(locs), sent))


main()
