#!/usr/bin/env python3
"""polling-check.py DUMP COUNTS NRANKS MODE: checks `flowcut dump --no-sites` of a run against the
calls the program counted itself, in COUNTS.RANK ("NAME CALLS [FOUND]" a line: its calls of NAME,
and of those how many found something).

Per rank and kind, the calls the trace stands for are its records plus, for each POLLS record,
its calls less the one its run's first record already counts; they must equal the program's
count, and so must the calls that found something (records flagged found). Each POLLS must follow
an unsuccessful poll of its thread, hold at least 2 calls, and its busy time must lie between the
first and last calls' durations added and the run's span. The tracer's waits (TRACER_WAIT) must
lie between their thread's records, overlapping no call by more than two consecutive calls of one
thread overlap anywhere in the trace: a thread that moves between cores reads clocks that may
disagree by a few microseconds, and the trace's own calls show by how much.
MODE folded: no unsuccessful poll may be followed, in its thread, by another with the same fields
(it would have been folded). MODE each: no POLLS at all."""
import re
import sys

POLLS = {"MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Iprobe", "MPI_Improbe"}
dump, counts, nranks, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
field = re.compile(r"(\w+)=(\S+)")


def ns(s):
    whole, _, frac = s.partition(".")
    return int(whole) * 10**9 + int((frac + "000000000")[:9])


# The clocks' disagreement: the most that a call of a thread starts before its previous call ended.
skew = 0
prev_end = {}
with open(dump) as f:
    for line in f:
        ev = dict(field.findall(line))
        if ev["kind"] in ("COMPLETE", "START", "POLLS", "TRACER_WAIT"):
            continue
        key = (ev["rank"], ev["thread"])
        t0 = ns(ev["time"])
        if key in prev_end:
            skew = max(skew, prev_end[key] - t0)
        prev_end[key] = t0 + ns(ev.get("dur", "0"))

errors = []
calls = [{} for _ in range(nranks)]
found = [{} for _ in range(nranks)]
last = {}  # (rank, thread) -> the previous record, as a dict
call_end = {}  # (rank, thread) -> exit of the latest call (ns)
waits = {}  # (rank, thread) -> a TRACER_WAIT not yet followed by a record
nfolded = nwaits = 0
with open(dump) as f:
    for line in f:
        ev = dict(field.findall(line))
        r, th, kind = int(ev["rank"]), ev["thread"], ev["kind"]
        key = (r, th)
        t0 = ns(ev["time"])
        t1 = t0 + (ns(ev["dur"]) if "dur" in ev else 0)
        if key in waits:
            w0, w1 = waits.pop(key)
            if t0 < w1 - skew:
                errors.append(f"rank {r} thread {th}: {kind} at {t0} inside a tracer wait ending {w1}")
        prev = last.get(key)
        if kind == "TRACER_WAIT":
            nwaits += 1
            if t0 < call_end.get(key, 0) - skew:
                errors.append(f"rank {r} thread {th}: tracer wait at {t0} inside a call ending {call_end[key]}")
            waits[key] = (t0, t1)
            continue
        if kind == "POLLS":
            nfolded += 1
            if mode == "each":
                errors.append(f"rank {r}: a POLLS record with FLOWCUT_FOLD_POLLS=0")
            if prev is None or prev["kind"] not in POLLS or "found" in prev.get("flags", ""):
                errors.append(f"rank {r} thread {th}: POLLS after {prev and prev['kind']}, not an unsuccessful poll")
                continue
            n, busy = int(ev["calls"]), ns(ev["busy"])
            if n < 2:
                errors.append(f"rank {r}: POLLS of {n} calls")
            k = prev["kind"]
            calls[r][k] = calls[r].get(k, 0) + n - 1
            first_dur = ns(prev["dur"])
            span = t1 - ns(prev["time"])
            # busy adds the calls' durations, each rounded to a nanosecond on its own
            if not (first_dur + ns(ev["dur"]) - 2 <= busy <= span + n):
                errors.append(f"rank {r}: POLLS busy {busy} ns outside [{first_dur + ns(ev['dur'])}, {span}]")
            prev["kind"] = "POLLS"  # the run is closed: a POLLS never follows a POLLS
            call_end[key] = t1
            continue
        if kind in ("COMPLETE", "START"):
            continue
        calls[r][kind] = calls[r].get(kind, 0) + 1
        if "found" in ev.get("flags", ""):
            found[r][kind] = found[r].get(kind, 0) + 1
        if (mode == "folded" and prev is not None and kind in POLLS and prev["kind"] == kind
                and "found" not in ev.get("flags", "")):
            same = all(prev.get(x) == ev.get(x) for x in ("peer", "tag", "comm", "bytes", "bytes2", "req", "flags"))
            if same:
                errors.append(f"rank {r} thread {th}: two unsuccessful {kind} alike in a row, not folded")
        last[key] = ev
        call_end[key] = t1
for r in range(nranks):
    with open(f"{counts}.{r}") as f:
        for line in f:
            parts = line.split()
            name, n = parts[0], int(parts[1])
            if calls[r].get(name, 0) != n:
                errors.append(f"rank {r}: the trace holds {calls[r].get(name, 0)} {name}, the program made {n}")
            if len(parts) > 2 and found[r].get(name, 0) != int(parts[2]):
                errors.append(f"rank {r}: {found[r].get(name, 0)} {name} found something, the program saw {parts[2]}")
for e in errors[:20]:
    print(e)
if errors:
    sys.exit(1)
print(f"{nranks} ranks: every call counted ({nfolded} folded runs, {nwaits} tracer waits; "
      f"consecutive calls overlap by up to {skew} ns)")
