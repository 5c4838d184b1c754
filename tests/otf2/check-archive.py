#!/usr/bin/env python3
"""check-archive.py: reads an OTF2 archive with OTF2's own Python bindings (Debian's python3-otf2),
a reader independent of flowcut's, and checks what OTF2 asks of its clocks and calling contexts:

- every event's time lies in [global offset, global offset + trace length) of the clock
  properties;
- times never go back on a location;
- calling-context events are not mixed with Enter/Leave, every CallingContextLeave leaves the
  context last entered and not yet left, and every unwind distance d of a CallingContextEnter
  names a node (d - 1 steps above the entered context) that is on the previous calling context
  and, when d > 1, the node below it is not (OTF2's CallingContext definition).

With --sync it also checks what Scalasca's clock checks take for granted of MPI_Init and
MPI_Finalize, that they synchronise: no rank leaves one before the last rank entered it.

With --sites FILE it writes, for every MPI call, one line "RANK KIND CHAIN": the call chain of its
calling context as flowcut dump names call sites (frames innermost first, "function@file:line" or
the function alone, joined by "<"; empty when the call has none).

Usage: check-archive.py ARCHIVE/traces.otf2 [--sync] [--sites FILE]
Prints one summary line and exits 0, or prints the first violation and exits 1."""
import sys

import otf2


def fail(msg):
    print("ARCHIVE: " + msg)
    sys.exit(1)


def path_of(cc):
    """The nodes from cc up to its root."""
    out = []
    while cc is not None:
        out.append(cc)
        cc = cc.parent
    return out


def frame_text(cc):
    name = cc.region.name
    scl = cc.source_code_location
    if scl is not None and scl.line_number > 0:
        return "%s@%s:%d" % (name, str(scl.file).rsplit("/", 1)[-1], scl.line_number)
    return name


def main():
    anchor, args = sys.argv[1], sys.argv[2:]
    sync = "--sync" in args
    sites = open(args[args.index("--sites") + 1], "w") if "--sites" in args else None
    nev = ncc = 0
    spans = {}  # "MPI_Init"/"MPI_Finalize" -> [(enter, leave, location)]
    with otf2.reader.open(anchor) as trace:
        cp = trace.definitions.clock_properties
        lo, hi = cp.global_offset, cp.global_offset + cp.trace_length
        state = {}
        for loc, ev in trace.events:
            nev += 1
            st = state.setdefault(loc, {"last": None, "prev": None, "open": [], "plain": False, "cc": False})
            if ev.time < lo or ev.time >= hi:
                fail("location %s: event %s at %d outside [%d, %d) of the clock properties"
                     % (loc.name, type(ev).__name__, ev.time, lo, hi))
            if st["last"] is not None and ev.time < st["last"]:
                fail("location %s: time goes back from %d to %d" % (loc.name, st["last"], ev.time))
            st["last"] = ev.time
            if isinstance(ev, (otf2.events.Enter, otf2.events.Leave)):
                st["plain"] = True
            elif isinstance(ev, otf2.events.CallingContextEnter):
                st["cc"] = True
                ncc += 1
                d = ev.unwind_distance
                path = path_of(ev.calling_context)
                prev = path_of(st["prev"]) if st["prev"] is not None else []
                if d < 1 or d > len(path) + 1:
                    fail("location %s: unwind distance %d of a context of depth %d" % (loc.name, d, len(path)))
                progress = path[d - 1] if d - 1 < len(path) else None
                if progress is not None and all(progress is not p for p in prev):
                    fail("location %s at %d: unwind distance %d names %s, not on the previous context"
                         % (loc.name, ev.time, d, frame_text(progress)))
                if d > 1 and any(path[d - 2] is p for p in prev):
                    fail("location %s at %d: unwind distance %d, but %s was entered before"
                         % (loc.name, ev.time, d, frame_text(path[d - 2])))
                st["open"].append((ev.calling_context, ev.time))
                st["prev"] = ev.calling_context
                if sites is not None:
                    chain = "<".join(frame_text(c) for c in path[1:])
                    # flowcut names a rank's location group "MPI Rank N".
                    rank = int(loc.group.name.rsplit(" ", 1)[-1])
                    sites.write("%d %s %s\n" % (rank, ev.calling_context.region.name, chain))
            elif isinstance(ev, otf2.events.CallingContextLeave):
                if not st["open"] or st["open"][-1][0] is not ev.calling_context:
                    fail("location %s at %d: leaves a context it is not in" % (loc.name, ev.time))
                name = ev.calling_context.region.name
                if name in ("MPI_Init", "MPI_Init_thread", "MPI_Finalize"):
                    spans.setdefault(name.replace("_thread", ""), []).append((st["open"][-1][1], ev.time, loc.name))
                st["open"].pop()
                st["prev"] = ev.calling_context.parent
            if st["plain"] and st["cc"]:
                fail("location %s: Enter/Leave mixed with calling-context events" % loc.name)
        for loc, st in state.items():
            if st["open"]:
                fail("location %s: %d calling contexts never left" % (loc.name, len(st["open"])))
    if sites is not None:
        sites.close()
    sync_note = ""
    if sync:
        for name in ("MPI_Init", "MPI_Finalize"):
            v = spans.get(name, [])
            last = max((e for e, _, _ in v), default=0)
            early = [(l, who) for _, l, who in v if l < last]
            if early:
                fail("%d locations leave %s before the last enters it (at %d), first %s at %d"
                     % (len(early), name, last, early[0][1], early[0][0]))
        sync_note = ", MPI_Init and MPI_Finalize synchronising"
    print("archive: %d events in [%d, %d), %d calling-context enters%s" % (nev, lo, hi, ncc, sync_note))


main()
