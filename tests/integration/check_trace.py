#!/usr/bin/env python3
"""check_trace.py: checks a trace of one example against what that example is known to do.

Usage: check_trace.py EXAMPLE DUMP INFO NRANKS [ARGS...]

DUMP is the output of `flowcut dump TRACE`, INFO the output of `flowcut info --json TRACE`, NRANKS
and ARGS the ranks and arguments the example ran with. The expected events of every rank and
thread are computed here from the example's parameters, by following the program's source by hand
(each model below names the calls in program order), never from the tracer or the reader.

Prints one line per problem and exits 1 if there is any, else prints `ok: ...` and exits 0.
"""
import collections
import json
import math
import sys

# Keys of the fields `flowcut dump` prints after time, rank, thread and kind.
FIELDS = ("peer", "tag", "comm", "bytes", "bytes2", "req", "newcomm", "dur", "flags", "site")

problems = []


def problem(msg):
    problems.append(msg)


def parse_dump(path):
    """Returns the events of the dump as dicts, in dump order, with ints where the value is one."""
    events = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            ev = {"line": lineno}
            # Split at each ` key=` so that a value holding spaces (a C++ function name) survives.
            key = None
            for tok in line.split(" "):
                k, eq, v = tok.partition("=")
                if eq and (k in FIELDS or k in ("time", "rank", "thread", "kind")):
                    key = k
                    ev[k] = v
                elif key is not None:
                    ev[key] += " " + tok
            if "kind" not in ev or "rank" not in ev:
                problem("dump line %d has no kind= or rank=: %r" % (lineno, line))
                continue
            for k in ("rank", "thread", "tag", "peer", "comm", "bytes", "bytes2", "req", "newcomm"):
                if k in ev:
                    try:
                        ev[k] = int(ev[k])
                    except ValueError:
                        pass  # any, null, root
            ev.setdefault("thread", 0)
            ev["flagset"] = set(ev["flags"].split(",")) if ev.get("flags") else set()
            events.append(ev)
    return events


def E(kind, **fields):
    """One expected event: its kind and the fields to compare (None: not compared)."""
    return (kind, fields)


def by_thread(events):
    """Each thread's calls and sub-records; the tracer's own waits (TRACER_WAIT) are not the
    program's and no model has them."""
    streams = collections.defaultdict(list)
    for ev in events:
        if ev["kind"] != "TRACER_WAIT":
            streams[(ev["rank"], ev["thread"])].append(ev)
    return streams


def compare_stream(where, actual, expected):
    """Compares one thread's events with its expected list, kind by kind and field by field."""
    kinds = [ev["kind"] for ev in actual]
    want = [k for k, _ in expected]
    if kinds != want:
        # Show where the two lists part, which is what one needs to find the cause.
        i = 0
        while i < min(len(kinds), len(want)) and kinds[i] == want[i]:
            i += 1
        problem("%s: %d events, expected %d; first difference at event %d: got %s, expected %s"
                % (where, len(kinds), len(want), i, kinds[i:i + 3], want[i:i + 3]))
        return False
    for n, (ev, (kind, fields)) in enumerate(zip(actual, expected)):
        for k, v in fields.items():
            if v is None:
                continue
            if k == "flags_has":
                missing = set(v) - ev["flagset"]
                if missing:
                    problem("%s: event %d %s (dump line %d) lacks flags %s" % (where, n, kind, ev["line"], sorted(missing)))
            elif k == "flags_not":
                extra = set(v) & ev["flagset"]
                if extra:
                    problem("%s: event %d %s (dump line %d) has flags %s" % (where, n, kind, ev["line"], sorted(extra)))
            elif k == "noreq":
                if "req" in ev:
                    problem("%s: event %d %s (dump line %d) has req=%r, expected none" % (where, n, kind, ev["line"], ev["req"]))
            elif ev.get(k) != v:
                problem("%s: event %d %s (dump line %d): %s=%r, expected %r" % (where, n, kind, ev["line"], k, ev.get(k), v))
    return True


def check_joins(where, stream, post_kinds):
    """Each post of post_kinds has a request id that exactly one later COMPLETE of the thread has,
    and every COMPLETE with a request id joins such a post. Returns {post index: COMPLETE event}."""
    open_posts = {}
    joined = {}
    for i, ev in enumerate(stream):
        if ev["kind"] in post_kinds:
            r = ev.get("req")
            if not isinstance(r, int):
                problem("%s: %s (dump line %d) has no req=" % (where, ev["kind"], ev["line"]))
            elif r in open_posts:
                problem("%s: req=%d posted again (dump line %d) before it completed" % (where, r, ev["line"]))
            else:
                open_posts[r] = i
        elif ev["kind"] == "COMPLETE" and isinstance(ev.get("req"), int):
            i0 = open_posts.pop(ev["req"], None)
            if i0 is None:
                problem("%s: COMPLETE req=%d (dump line %d) joins no earlier post" % (where, ev["req"], ev["line"]))
            else:
                joined[i0] = ev
    for r, i in open_posts.items():
        problem("%s: %s req=%d (dump line %d) never completed" % (where, stream[i]["kind"], r, stream[i]["line"]))
    return joined


def check_complete_status(where, ev, peer, tag, nbytes):
    if "status" not in ev["flagset"]:
        problem("%s: COMPLETE (dump line %d) lacks flag status" % (where, ev["line"]))
    for k, v in (("peer", peer), ("tag", tag), ("bytes", nbytes)):
        if ev.get(k) != v:
            problem("%s: COMPLETE (dump line %d) %s=%r, expected %r" % (where, ev["line"], k, ev.get(k), v))


def envelope(body, init="MPI_Init"):
    return [E(init)] + body + [E("MPI_Finalize")]


# ---- models: one function per example, returning {(rank, thread): [expected events]} ----------

def model_pingpong(n, args):
    args = [a for a in args if a != "-t"]
    iters, sizes = int(args[0]), [int(s) for s in args[1:]]
    out = {}
    for r in range(n):
        body = []
        for s in sizes:
            body.append(E("MPI_Barrier", comm=0))
            for _ in range(iters):
                snd = E("MPI_Send", peer=1 - r, tag=1, bytes=s, comm=0)
                rcv = E("MPI_Recv", peer=1 - r, tag=1, bytes=s, comm=0, flags_not=("any_source", "any_tag"))
                if r == 0:
                    body += [snd, rcv]
                elif r == 1:
                    body += [rcv, snd]
        out[(r, 0)] = envelope(body)
    return out


def model_ring(n, args):
    rounds, count = int(args[0]), int(args[1])
    out = {}
    for r in range(n):
        right, left = (r + 1) % n, (r + n - 1) % n
        snd = E("MPI_Send", peer=right, tag=10, bytes=4)
        rcv = E("MPI_Recv", peer=left, tag=10, bytes=4)
        body = ([snd, rcv] if r == 0 else [rcv, snd]) * rounds
        body += [E("MPI_Sendrecv", peer=right, tag=20, bytes=8 * count, bytes2=8 * count),
                 E("COMPLETE", peer=left, tag=20, bytes=8 * count, noreq=True),
                 E("MPI_Allreduce", bytes=8, bytes2=8)]
        out[(r, 0)] = envelope(body)
    return out


def dims_create_2d(n):
    """MPI_Dims_create(n, 2): the most nearly square factorisation, larger dimension first."""
    d = int(math.isqrt(n))
    while n % d:
        d -= 1
    return n // d, d


def model_halo(n, args):
    steps, nx, ny = int(args[0]), int(args[1]), int(args[2])
    px, py = dims_create_2d(n)
    out = {}
    for w in range(n):
        g = n - 1 - w  # the grid communicator numbers ranks backwards
        x, y = g % px, g // px
        world = lambda gx, gy: n - 1 - (gx % px + (gy % py) * px)
        north, south, west, east = world(x, y - 1), world(x, y + 1), world(x - 1, y), world(x + 1, y)
        step = [E("MPI_Irecv", peer=south, tag=0, bytes=8 * nx),
                E("MPI_Irecv", peer=north, tag=1, bytes=8 * nx),
                E("MPI_Irecv", peer=east, tag=2, bytes=8 * ny),
                E("MPI_Irecv", peer=west, tag=3, bytes=8 * ny),
                E("MPI_Isend", peer=north, tag=0, bytes=8 * nx),
                E("MPI_Isend", peer=south, tag=1, bytes=8 * nx),
                E("MPI_Isend", peer=west, tag=2, bytes=8 * ny),
                E("MPI_Isend", peer=east, tag=3, bytes=8 * ny),
                E("MPI_Waitall")] + [E("COMPLETE")] * 8
        out[(w, 0)] = envelope([E("MPI_Comm_split", comm=0)] + step * steps +
                               [E("MPI_Allreduce", bytes=8), E("MPI_Comm_free")])
    return out


def model_wildcard(n, args):
    k_msgs = int(args[0])
    out = {}
    total = (n - 1) * k_msgs
    body = []
    for m in range(total):
        if m % 2 == 0:
            body.append(E("MPI_Recv", flags_has=("any_source", "any_tag")))
        else:
            body += [E("MPI_Irecv", peer="any", tag="any"), E("MPI_Wait"), E("COMPLETE")]
    body.append(E("MPI_Barrier"))
    body += [E("MPI_Recv", tag=999, bytes=4, flags_has=("any_source",), flags_not=("any_tag",))] * (n - 1)
    out[(0, 0)] = envelope(body)
    for r in range(1, n):
        body = [E("MPI_Send", peer=0, tag=10 * r + k, bytes=4 * (r + k + 1)) for k in range(k_msgs)]
        body += [E("MPI_Barrier"), E("MPI_Send", peer=0, tag=999, bytes=4)]
        out[(r, 0)] = envelope(body)
    return out


def model_persistent(n, args):
    cycles, count = int(args[0]), int(args[1])
    out = {}
    for r in range(n):
        right, left = (r + 1) % n, (r + n - 1) % n
        body = [E("MPI_Recv_init", peer=left, tag=7, bytes=4 * count),
                E("MPI_Recv_init", peer=right, tag=8, bytes=4 * (count + 1)),
                E("MPI_Send_init", peer=right, tag=7, bytes=4 * count),
                E("MPI_Send_init", peer=left, tag=8, bytes=4 * (count + 1))]
        body += ([E("MPI_Startall")] + [E("START")] * 4 + [E("MPI_Waitall")] + [E("COMPLETE")] * 4) * cycles
        body += [E("MPI_Request_free")] * 4 + [E("MPI_Reduce", peer=0, bytes=8)]
        out[(r, 0)] = envelope(body)
    return out


def model_threads(n, args):
    iters = int(args[0])
    out = {}
    for r in range(n):
        p = r ^ 1
        out[(r, 0)] = envelope([E("MPI_Sendrecv", peer=p, tag=1, bytes=4, bytes2=4),
                                E("COMPLETE", peer=p, tag=1, bytes=4, noreq=True)] * iters +
                               [E("MPI_Reduce", peer=0, bytes=8)], init="MPI_Init_thread")
        out[(r, 1)] = [E("MPI_Isend", peer=p, tag=2, bytes=8), E("MPI_Recv", peer=p, tag=2, bytes=8),
                       E("MPI_Wait"), E("COMPLETE")] * iters
    return out


def model_f08(n, args):
    iters = int(args[0])
    out = {}
    for r in range(n):
        right, left = (r + 1) % n, (r + n - 1) % n
        it = [E("MPI_Irecv", peer=left, tag=3, bytes=16), E("MPI_Isend", peer=right, tag=3, bytes=16),
              E("MPI_Wait"), E("COMPLETE", peer=left, tag=3, bytes=16), E("MPI_Waitall"), E("COMPLETE")]
        out[(r, 0)] = envelope(it * iters + [E("MPI_Barrier"), E("MPI_Allreduce", bytes=4, bytes2=4)])
    return out


def model_fmpi(n, args):
    rounds = int(args[0])
    out = {}
    for r in range(n):
        right, left = (r + 1) % n, (r + n - 1) % n
        snd = E("MPI_Send", peer=right, tag=4, bytes=4)
        rcv = E("MPI_Recv", peer=left, tag=4, bytes=4)
        body = [E("MPI_Bcast", peer=0, bytes=4 if r == 0 else None)]
        body += ([snd, rcv] if r == 0 else [rcv, snd]) * rounds
        body += [E("MPI_Reduce", peer=0, bytes=4)]
        out[(r, 0)] = envelope(body)
    return out


def model_fwaitall(n, args):
    # Both bindings in turn (`use mpi`, then `use mpi_f08`): three receives from rank 1 (tags 1-3,
    # then 11-13, k integers each) and a null request, completed by one Waitall; the COMPLETE
    # records of the receives carry their own times, the null one comes last.
    out = {(0, 0): [E("MPI_Init")], (1, 0): [E("MPI_Init")]}
    for base in (0, 10):
        tags = [base + k for k in (1, 2, 3)]
        out[(0, 0)] += [E("MPI_Irecv", peer=1, tag=t, bytes=12) for t in tags]
        out[(0, 0)] += [E("MPI_Barrier"), E("MPI_Waitall", bytes2=4)]
        out[(0, 0)] += [E("COMPLETE", peer=1, tag=t, bytes=4 * (t - base), flags_has={"own_time", "status"})
                        for t in tags]
        out[(0, 0)] += [E("COMPLETE", flags_has={"null"}, flags_not={"own_time"})]
        out[(1, 0)] += [E("MPI_Barrier")] + [E("MPI_Send", peer=0, tag=t, bytes=4 * (t - base)) for t in tags]
    for key in out:
        out[key].append(E("MPI_Finalize"))
    return out


def extra_fwaitall(streams, n, args):
    """Rank 1 sends the messages of each Waitall one gap apart (it busy-waits on MPI_Wtime): each
    COMPLETE of a receive lies at least half a gap after the one before, and the first at least
    one gap before the call's exit, which a COMPLETE at the exit would not."""
    gap = int(args[0]) * 1000000
    def t(ev, k="time"):
        whole, _, frac = ev[k].partition(".")
        return int(whole) * 1000000000 + int((frac + "000000000")[:9])
    s = streams.get((0, 0), [])
    for i, ev in enumerate(s):
        if ev["kind"] != "MPI_Waitall":
            continue
        done = [t(e) for e in s[i + 1:i + 4]]
        exit_ = t(ev) + t(ev, "dur")
        if any(b - a < gap // 2 for a, b in zip(done, done[1:])) or exit_ - done[0] < gap:
            problem("rank 0: Waitall (dump line %d): COMPLETE times %s ns, exit %d ns, gap %d ns"
                    % (ev["line"], done, exit_, gap))


def model_cxx(n, args):
    iters, count = int(args[0]), int(args[1])
    out = {}
    for r in range(n):
        right, left = (r + 1) % n, (r + n - 1) % n
        body = [E("MPI_Sendrecv", peer=right, tag=9, bytes=8 * count, bytes2=8 * count),
                E("COMPLETE", peer=left, tag=9, bytes=8 * count, noreq=True)] * iters
        body += [E("MPI_Gather", peer=0, bytes=8, bytes2=8 * n if r == 0 else None)]
        out[(r, 0)] = envelope(body)
    return out


def model_crash(n, args):
    k_msgs = int(args[0])
    last = n - 1
    out = {(r, 0): [E("MPI_Init"), E("MPI_Barrier")] for r in range(1, last)}
    out[(0, 0)] = [E("MPI_Init")] + [E("MPI_Send", peer=last, tag=5, bytes=4)] * k_msgs
    out[(last, 0)] = [E("MPI_Init")] + [E("MPI_Recv", peer=0, tag=5, bytes=4)] * k_msgs
    return out


# ---- checks beyond the event lists, for the examples that need them ------------------------------

def extra_halo(streams, n, args):
    for (r, t), s in streams.items():
        where = "rank %d thread %d" % (r, t)
        split = [ev for ev in s if ev["kind"] == "MPI_Comm_split"]
        grid = split[0].get("newcomm") if split else None
        if not isinstance(grid, int) or grid in (0, 1):
            problem("%s: MPI_Comm_split newcomm=%r, expected a new communicator id" % (where, grid))
        posts = [i for i, ev in enumerate(s) if ev["kind"] in ("MPI_Isend", "MPI_Irecv")]
        for i in posts:
            if s[i].get("comm") != grid:
                problem("%s: %s (dump line %d) comm=%r, expected the split's %r" % (where, s[i]["kind"], s[i]["line"], s[i].get("comm"), grid))
        joined = check_joins(where, s, ("MPI_Isend", "MPI_Irecv"))
        for i in posts:
            if s[i]["kind"] == "MPI_Irecv" and i in joined:
                check_complete_status(where, joined[i], s[i]["peer"], s[i]["tag"], s[i]["bytes"])
        check_sub_records(where, s, "MPI_Waitall", "COMPLETE", 8)


def check_sub_records(where, s, call, sub, count):
    """Each `call` is followed at once by `count` records of kind `sub`, which the call's own
    request ids must cover (checked by the caller)."""
    for i, ev in enumerate(s):
        if ev["kind"] == call:
            subs = [e["kind"] for e in s[i + 1:i + 1 + count]]
            if subs != [sub] * count:
                problem("%s: %s (dump line %d) is followed by %s, expected %d %s" % (where, call, ev["line"], subs, count, sub))


def extra_wildcard(streams, n, args):
    k_msgs = int(args[0])
    s = streams.get((0, 0), [])
    phase = [ev for ev in s if ev["kind"] == "MPI_Recv" and "any_tag" in ev["flagset"]]
    joined = check_joins("rank 0", s, ("MPI_Irecv",))
    for ev in joined.values():
        if "status" not in ev["flagset"]:
            problem("rank 0: COMPLETE (dump line %d) lacks flag status" % ev["line"])
    got = sorted((ev.get("peer"), ev.get("tag"), ev.get("bytes")) for ev in sorted(phase + list(joined.values()), key=lambda e: e["line"]))
    want = sorted((r, 10 * r + k, 4 * (r + k + 1)) for r in range(1, n) for k in range(k_msgs))
    if got != want:
        problem("rank 0: wildcard receives resolved to %s, expected %s" % (got, want))
    # MPI does not let messages between one pair overtake each other: per sender, tags ascend.
    order = collections.defaultdict(list)
    for ev in sorted(phase + list(joined.values()), key=lambda e: e["line"]):
        order[ev.get("peer")].append(ev.get("tag"))
    for peer, tags in order.items():
        if tags != sorted(tags):
            problem("rank 0: receives from %r resolved in tag order %s, which MPI's ordering forbids" % (peer, tags))
    last = sorted(ev.get("peer") for ev in s if ev["kind"] == "MPI_Recv" and ev.get("tag") == 999)
    if last != list(range(1, n)):
        problem("rank 0: tag-999 receives resolved to sources %s, expected %s" % (last, list(range(1, n))))


def extra_persistent(streams, n, args):
    cycles, count = int(args[0]), int(args[1])
    for (r, t), s in streams.items():
        where = "rank %d" % r
        right, left = (r + 1) % n, (r + n - 1) % n
        inits = [ev.get("req") for ev in s if ev["kind"] in ("MPI_Recv_init", "MPI_Send_init")]
        if len(set(inits)) != 4 or not all(isinstance(q, int) for q in inits):
            problem("%s: the four *_init calls have req ids %s, expected four distinct ids" % (where, inits))
        seen = []
        for i, ev in enumerate(s):
            if ev["kind"] != "MPI_Startall":
                continue
            starts = [e.get("req") for e in s[i + 1:i + 5]]
            seen.append(starts)
            j = i + 5
            if j >= len(s) or s[j]["kind"] != "MPI_Waitall":
                continue
            comps = {e.get("req"): e for e in s[j + 1:j + 5] if e["kind"] == "COMPLETE"}
            if sorted(comps, key=str) != sorted(starts, key=str):
                problem("%s: Waitall (dump line %d) completed req %s, but Startall started %s" % (where, s[j]["line"], sorted(comps, key=str), starts))
                continue
            # Startall starts the requests in array order: receive from left, from right, send ...
            check_complete_status(where, comps[starts[0]], left, 7, 4 * count)
            check_complete_status(where, comps[starts[1]], right, 8, 4 * (count + 1))
        # A persistent request keeps its handle, so every cycle starts the ids the inits made.
        for c, starts in enumerate(seen):
            if starts != inits:
                problem("%s: cycle %d STARTs req %s, expected the inits' %s" % (where, c, starts, inits))
        frees = [ev.get("req") for ev in s if ev["kind"] == "MPI_Request_free"]
        if frees != inits:
            problem("%s: MPI_Request_free req %s, expected %s" % (where, frees, inits))


def extra_p2p_joins(streams, n, args, posts=("MPI_Isend", "MPI_Irecv")):
    for (r, t), s in streams.items():
        check_joins("rank %d thread %d" % (r, t), s, posts)


def extra_threads(streams, n, args):
    for r in range(n):
        threads = sorted(t for (rr, t) in streams if rr == r)
        if threads != [0, 1]:
            problem("rank %d: events on threads %s, expected [0, 1]" % (r, threads))
    extra_p2p_joins(streams, n, args)


EXAMPLES = {
    "pingpong": (model_pingpong, None),
    "ring": (model_ring, None),
    "halo": (model_halo, extra_halo),
    "wildcard": (model_wildcard, extra_wildcard),
    "persistent": (model_persistent, extra_persistent),
    "threads": (model_threads, extra_threads),
    "f08": (model_f08, extra_p2p_joins),
    "fmpi": (model_fmpi, None),
    "fwaitall": (model_fwaitall, extra_fwaitall),
    "cxx": (model_cxx, None),
    "crash": (model_crash, None),
}


def check_info(info, events, n, partial):
    if info.get("ranks") != n:
        problem("info: ranks=%r, expected %d" % (info.get("ranks"), n))
    if info.get("partial") is not partial:
        problem("info: partial=%r, expected %r" % (info.get("partial"), partial))
    # The per-kind totals of info and of dump are two readings of the same files: they must agree.
    counts = collections.Counter(ev["kind"] for ev in events)
    got = {k: v for k, v in (info.get("events") or {}).items() if v}
    if got != dict(counts):
        problem("info: events %s disagree with the dump's %s" % (got, dict(counts)))
    # Bytes per kind, where info gives them, are the sums of the dump's bytes= fields.
    sums = collections.Counter()
    for ev in events:
        if isinstance(ev.get("bytes"), int):
            sums[ev["kind"]] += ev["bytes"]
    for kind, b in (info.get("bytes") or {}).items():
        if b != sums[kind]:
            problem("info: bytes of %s = %r, the dump's bytes= add up to %d" % (kind, b, sums[kind]))
    if partial and "partial_ranks" in info:
        crashed = [p.get("rank") for p in info["partial_ranks"]]
        if n - 1 not in crashed:
            problem("info: partial_ranks %s does not name the crashed rank %d" % (crashed, n - 1))
    ranks = sorted(r for node in info.get("nodes", []) for r in node.get("ranks", []))
    if ranks != list(range(n)):
        problem("info: nodes list ranks %s, expected %s" % (ranks, list(range(n))))


def main(argv):
    if len(argv) < 5 or argv[1] not in EXAMPLES:
        sys.stderr.write("usage: check_trace.py {%s} DUMP INFO NRANKS [ARGS...]\n" % ",".join(EXAMPLES))
        return 2
    name, dump, info_path, n, args = argv[1], argv[2], argv[3], int(argv[4]), argv[5:]
    events = parse_dump(dump)
    with open(info_path) as f:
        info = json.load(f)
    model, extra = EXAMPLES[name]
    expected = model(n, args)
    streams = by_thread(events)
    crashed = name == "crash"
    check_info(info, events, n, partial=crashed)
    for key in sorted(set(expected) | set(streams)):
        where = "rank %d thread %d" % key
        actual, want = streams.get(key, []), expected.get(key)
        if want is None:
            if actual:
                problem("%s: %d events, expected none (first: %s)" % (where, len(actual), actual[0]["kind"]))
            continue
        if crashed and key[0] != n - 1:
            # The launcher kills the other ranks: what they left must be a prefix of what they did.
            want = want[:len(actual)]
        compare_stream(where, actual, want)
    if extra and not problems:
        extra(streams, n, args)
    for p in problems[:40]:
        print("FAIL:", p)
    if len(problems) > 40:
        print("FAIL: ... and %d more" % (len(problems) - 40))
    if problems:
        return 1
    print("ok: %s on %d ranks: %d events match the model" % (name, n, len(events)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
