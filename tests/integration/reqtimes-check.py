#!/usr/bin/env python3
"""reqtimes-check.py: checks the COMPLETE times of a trace of examples/reqtimes against the times the
program measured itself.

Usage: reqtimes-check.py on|off DUMP TIMES K GAP_MS

DUMP is `flowcut dump --no-sites` of the trace, TIMES the file reqtimes wrote (see reqtimes.c), K
and GAP_MS its arguments; `on` for a trace taken with FLOWCUT_REQUEST_TIMES on (the default), `off`
for one taken with it set to 0.

With `on`, phase 1's MPI_Waitall must be followed by its K COMPLETE records, each flagged own_time,
at the time its message arrived: the program's clock (CLOCK_MONOTONIC, the clock the tracer's times
are calibrated to) is mapped onto the trace's through the Waitall itself (the program read it just
before and just after the call), and each COMPLETE then lies between the sending of its message
(carried in the message) and that plus the slowest arrival phase 2 saw by polling MPI_Test plus a
quarter of the gap between sends: had the COMPLETE been taken at the call's exit, the first one
would be (K - 1) gaps late. The times must grow from one message to the next. Phase 2 is the
independent measure: when even polling saw an arrival more than a quarter gap late, the machine
was too busy for the measure and the check says SKIP (exit 77).
Every MPI_Waitall of rank 0 (any thread) must be followed by one COMPLETE per request, the ones
with a time of their own first, in time order inside the call, the others at the call's exit.
With `off`, every COMPLETE after an MPI_Waitall is at the call's exit, and none has own_time.

Prints one line per problem and exits 1 if there is any, 77 for a skip, else 0."""
import collections
import sys

MS = 1000000
problems = []


def problem(msg):
    problems.append(msg)


def ns(text):
    """Seconds with 9 decimals, as flowcut dump prints them, to integer nanoseconds."""
    neg = text.startswith("-")
    whole, _, frac = text.lstrip("-").partition(".")
    v = int(whole) * 1000000000 + int((frac + "000000000")[:9])
    return -v if neg else v


def parse_dump(path):
    streams = collections.defaultdict(list)
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            ev = {"line": lineno}
            for tok in line.split():
                k, eq, v = tok.partition("=")
                if eq:
                    ev[k] = v
            if "kind" not in ev:
                continue
            ev["t0"] = ns(ev["time"])
            ev["t1"] = ev["t0"] + (ns(ev["dur"]) if "dur" in ev else 0)
            ev["flagset"] = set(ev["flags"].split(",")) if "flags" in ev else set()
            streams[(int(ev["rank"]), int(ev.get("thread", 0)))].append(ev)
    return streams


def read_times(path):
    t = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and w[0] in ("waitall", "sent", "poll"):
                t[w[0]] = [int(x) for x in w[1:]]
    return t


def waitalls(stream):
    """(the MPI_Waitall, the COMPLETE records right after it) for each MPI_Waitall of a thread."""
    out = []
    for i, ev in enumerate(stream):
        if ev["kind"] != "MPI_Waitall":
            continue
        subs = []
        for e in stream[i + 1:]:
            if e["kind"] != "COMPLETE":
                break
            subs.append(e)
        out.append((ev, subs))
    return out


def check_all_waitalls(streams, mode):
    n = 0
    for (rank, thread), s in sorted(streams.items()):
        for call, subs in waitalls(s):
            n += 1
            where = "rank %d thread %d: MPI_Waitall (dump line %d)" % (rank, thread, call["line"])
            # An MPI_ERR_IN_STATUS of MPICH's own MPI_Waitall may leave requests pending; the steps
            # complete every request.
            want = int(call.get("bytes2", -1))
            if len(subs) != want and not (mode == "off" and "error" in call["flagset"] and len(subs) < want):
                problem("%s: %d COMPLETE records for %d requests" % (where, len(subs), want))
            own = [e for e in subs if "own_time" in e["flagset"]]
            if mode == "off" and own:
                problem("%s: own_time with FLOWCUT_REQUEST_TIMES=0 (dump line %d)" % (where, own[0]["line"]))
            if subs[:len(own)] != own:
                problem("%s: a COMPLETE without a time of its own before one with" % where)
            prev = call["t0"]
            for e in subs:
                t = e["t0"]
                if t < prev or t > call["t1"]:
                    problem("%s: COMPLETE (dump line %d) at %d ns, outside [%d, %d] or before the one before"
                            % (where, e["line"], t, prev, call["t1"]))
                if "own_time" not in e["flagset"] and t != call["t1"]:
                    problem("%s: COMPLETE (dump line %d) has no time of its own but is not at the exit"
                            % (where, e["line"]))
                prev = t
    return n


def main(argv):
    if len(argv) != 6 or argv[1] not in ("on", "off"):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    mode, dump, times, k, gap = argv[1], argv[2], argv[3], int(argv[4]), int(argv[5]) * MS
    streams = parse_dump(dump)
    t = read_times(times)
    s = streams.get((0, 0), [])
    first = next(((c, subs) for c, subs in waitalls(s) if c.get("bytes2") == str(k)), None)
    if first is None:
        problem("rank 0: no MPI_Waitall of %d requests" % k)
    elif len(t.get("sent", [])) != k or len(t.get("poll", [])) != k or len(t.get("waitall", [])) != 2:
        problem("%s: the times file lacks the waitall, sent or poll line" % times)
    else:
        call, subs = first
        tags = sorted(int(e.get("tag", -1)) for e in subs)
        if tags != list(range(k)):
            problem("phase 1: COMPLETE tags %s, expected 0 .. %d" % (tags, k - 1))
        (w0, w1), sent, poll = t["waitall"], t["sent"], t["poll"]
        late = max(poll)
        if mode == "on" and late > gap // 4:
            print("SKIP: polling MPI_Test saw an arrival %.1f ms late, more than a quarter of the %d ms gap:"
                  " the machine is too busy to time arrivals" % (late / MS, gap // MS))
            return 77
        # The program read its clock just around the call: the two spans differ by the wrapper's own
        # work and the calibration of the tracer's clock, far below a millisecond.
        eps = 1 * MS
        if abs((call["t1"] - call["t0"]) - (w1 - w0)) > eps:
            problem("phase 1: the Waitall took %d ns in the trace and %d ns by the program's clock"
                    % (call["t1"] - call["t0"], w1 - w0))
        by_tag = {int(e.get("tag", -1)): e for e in subs}
        if mode == "on" and len(by_tag) == k:
            for i in range(k):
                e = by_tag[i]
                arrival = e["t0"] - call["t0"] + w0  # on the program's clock
                lag = arrival - sent[i]
                if "own_time" not in e["flagset"]:
                    problem("phase 1: COMPLETE tag %d (dump line %d) lacks own_time" % (i, e["line"]))
                if lag < -eps or lag > late + gap // 4:
                    problem("phase 1: COMPLETE tag %d at %.3f ms after its message was sent, expected between"
                            " %.3f and %.3f ms" % (i, lag / MS, -eps / MS, (late + gap // 4) / MS))
                if i > 0 and e["t0"] <= by_tag[i - 1]["t0"]:
                    problem("phase 1: COMPLETE tag %d is not after tag %d" % (i, i - 1))
            if by_tag[0]["t0"] > call["t1"] - (k - 1) * gap // 2:
                problem("phase 1: the first COMPLETE is %.3f ms before the Waitall's exit, expected at least"
                        " %.3f ms" % ((call["t1"] - by_tag[0]["t0"]) / MS, (k - 1) * gap / 2 / MS))
    n = check_all_waitalls(streams, mode)
    for p in problems[:40]:
        print("FAIL:", p)
    if problems:
        return 1
    print("ok: %s: phase 1's %d COMPLETE records and %d MPI_Waitall calls as expected" % (mode, k, n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
