#!/usr/bin/env python3
"""allcalls-check.py: checks a trace of allcalls (2 ranks) against the counts worked out by hand from
allcalls.c (the "+n" comments there are per rank; totals here are for both ranks).

Usage: allcalls-check.py MODE INFO_JSON [DUMP]
  MODE       main, init, abort (allcalls) or f08-main, f08-init, f08-abort (allcalls-f08)
  INFO_JSON  the output of `flowcut info --json TRACE`
  DUMP       the output of `flowcut dump TRACE` (key=value fields, one event a line), optional
"""
import json
import sys

COLLECTIVES = ["Bcast", "Reduce", "Allreduce", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather",
               "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw", "Reduce_scatter", "Reduce_scatter_block",
               "Scan", "Exscan"]
NEIGHBOURHOOD = ["allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"]
CONSTRUCTORS = ["Comm_dup", "Comm_dup_with_info", "Comm_idup", "Comm_split", "Comm_split_type", "Comm_create",
                "Comm_create_group", "Cart_create", "Cart_sub", "Graph_create", "Dist_graph_create",
                "Dist_graph_create_adjacent", "Intercomm_create", "Intercomm_merge"]

# Records whose number depends on timing: the folded runs of the polling loops' calls that found
# nothing (POLLS), and the tracer's own waits for its writer (TRACER_WAIT).
TIMING = {"POLLS": 0, "TRACER_WAIT": 0}


def expected_f08():
    """allcalls-f08 main: the per-rank counts in the header of allcalls-f08.f90, doubled."""
    per_rank = {"Init_thread": 1, "Finalize": 1, "Isend": 8, "Irecv": 7, "Wait": 5, "Waitall": 4,
                "Waitany": 2, "Waitsome": 1, "Recv_init": 1, "Send_init": 1, "Startall": 1, "Start": 2,
                "Request_free": 2, "Probe": 2, "Iprobe": 1, "Mprobe": 1, "Mrecv": 1, "Improbe": 1,
                "Imrecv": 1, "Cancel": 1, "Barrier": 1, "Ibarrier": 1, "Allreduce": 1, "Comm_split": 2,
                "Comm_free": 15}
    for c in CONSTRUCTORS:
        per_rank.setdefault(c, 1)
    exact = {"MPI_" + k: 2 * v for k, v in per_rank.items()}
    exact["COMPLETE"] = 2 * 22
    exact["START"] = 2 * 2
    minimum = {"MPI_Test": 2, "MPI_Testall": 2, "MPI_Testany": 4, "MPI_Testsome": 2}
    minimum.update(TIMING)
    return exact, minimum


def expected(mode):
    """Returns ({kind: exact total}, {kind: minimum total}) for a run of allcalls MODE (f08-MODE
    for allcalls-f08, whose init and abort modes make the same calls as allcalls')."""
    if mode == "f08-main":
        return expected_f08()
    mode = mode[4:] if mode.startswith("f08-") else mode
    if mode == "init":
        return {"MPI_Init": 2, "MPI_Barrier": 2, "MPI_Finalize": 2}, {}
    if mode == "abort":
        # Rank 1 is killed inside MPI_Recv: whether its MPI_Init reaches the trace depends on the
        # runtime's signal handling, so only rank 0's events are certain.
        return {"MPI_Abort": 1}, {"MPI_Init": 1}
    per_rank = {
        "Init_thread": 1, "Finalize": 1,
        # blocking_p2p
        "Send": 2, "Bsend": 2, "Ssend": 2, "Rsend": 2,
        # Isend: 2 (nonblocking_p2p) + 6 (probes) + 6 (completion pairs) + 1 (Request_free)
        "Isend": 15, "Ibsend": 2, "Issend": 2, "Irsend": 2,
        # Recv: 6 (blocking_p2p) + 2 (probes) + 1 (persistent) + 1 (completion)
        "Recv": 10,
        # Irecv: 2 (blocking_p2p) + 8 (nonblocking_p2p) + 6 (pairs) + 1 (cancelled)
        "Irecv": 17,
        "Mrecv": 2, "Imrecv": 2, "Sendrecv": 2, "Sendrecv_replace": 2,
        "Send_init": 2, "Bsend_init": 2, "Ssend_init": 2, "Rsend_init": 2, "Recv_init": 8,
        "Start": 9, "Startall": 1, "Request_free": 17,
        # Wait: 2 (blocking_p2p) + 2 (probes) + 1 (persistent) + 3 (completion) + 33 (icollectives)
        # + 1 (Comm_idup)
        "Wait": 42, "Waitall": 3, "Waitany": 3,
        "Probe": 4, "Iprobe": 2, "Mprobe": 2, "Improbe": 2, "Cancel": 1,
        # Barrier: 2 (blocking_p2p) + 1 + 1 (nonblocking, persistent) + 1 (collectives) + 1 (dup)
        "Barrier": 6, "Ibarrier": 1,
        "Comm_free": 14,
    }
    for c in COLLECTIVES:
        per_rank[c] = 2
        per_rank["I" + c[0].lower() + c[1:]] = 2
    for c in CONSTRUCTORS:
        per_rank[c] = 1
    # neighbours(): each neighbourhood collective in 3 forms, classic and _c; its ring
    for c in NEIGHBOURHOOD:
        for form in ("Neighbor_" + c, "Ineighbor_" + c, "Neighbor_" + c + "_init"):
            per_rank[form] = 2
    per_rank["Cart_create"] += 1
    per_rank["Comm_free"] += 1
    per_rank["Wait"] += 20
    per_rank["Start"] += 10
    per_rank["Request_free"] += 10
    exact = {"MPI_" + k: 2 * v for k, v in per_rank.items()}
    # COMPLETE: 2 + 16 + 8 + 4 + 17 + 14 + 33 + 1 + 20 per rank (see allcalls.c); START: 8 per rank.
    exact["COMPLETE"] = 2 * 115
    exact["START"] = 2 * 8
    # COUNTS (format 2.4), the bytes per peer where they differ, with counts {1, 2} ints: 2 runs
    # (rank 0's 4 bytes, rank 1's 8) for each Gatherv and Scatterv at the root and each Allgatherv
    # on both ranks, in their 4 forms (blocking, _c, non-blocking, non-blocking _c): 4 x (2 + 2 +
    # 2 x 2). The Alltoallv and Alltoallw of two ints to each rank are even: none.
    exact["COUNTS"] = 4 * (2 + 2 + 2 * 2)
    minimum = {"MPI_Test": 2, "MPI_Testall": 2, "MPI_Testany": 4, "MPI_Testsome": 2, "MPI_Waitsome": 2}
    minimum.update(TIMING)
    return exact, minimum


def parse_dump(path):
    events = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            if "kind" in fields:
                events.append(fields)
    return events


def check_dump(events, errors):
    """A few events whose fields allcalls.c fixes (ints are 4 bytes; world ranks = comm ranks)."""
    def find(**want):
        return [e for e in events if all(e.get(k) == v for k, v in want.items())]

    # Rank 1's wildcard MPI_Recv_c of rank 0's 5 ints, tag 2: actual source, tag and size.
    got = find(kind="MPI_Recv", rank="1", tag="2")
    if len(got) != 1 or got[0].get("peer") != "0" or got[0].get("bytes") != "20":
        errors.append("rank 1 MPI_Recv tag 2: want one event peer=0 bytes=20, got %r" % got)
    # Each rank's MPI_Send of 3 ints with tag 1 to its partner.
    for r, p in (("0", "1"), ("1", "0")):
        got = find(kind="MPI_Send", rank=r, tag="1")
        if len(got) != 1 or got[0].get("peer") != p or got[0].get("bytes") != "12":
            errors.append("rank %s MPI_Send tag 1: want peer=%s bytes=12, got %r" % (r, p, got))
    # The neighbourhood collectives on the periodic ring of 2: two neighbours (the partner, left
    # and right), 2 ints each way to and from each: 16 bytes sent and 16 received, in every form.
    for kind in ("MPI_Neighbor_alltoall", "MPI_Ineighbor_alltoallv", "MPI_Neighbor_allgather_init",
                 "MPI_Neighbor_alltoallw", "MPI_Ineighbor_allgatherv"):
        got = find(kind=kind)
        if len(got) != 4 or any(e.get("bytes") != "16" or e.get("bytes2") != "16" for e in got):
            errors.append("%s: want four events bytes=16 bytes2=16, got %r" % (kind, got))
    # MPI_Bcast of 5 ints from rank 0: the root sends 20 bytes, rank 1 sends none.
    for r, b in (("0", "20"), ("1", "0")):
        got = find(kind="MPI_Bcast", rank=r)
        if len(got) != 2 or any(e.get("bytes") != b for e in got):
            errors.append("rank %s MPI_Bcast: want two events bytes=%s, got %r" % (r, b, got))


def main(argv):
    if len(argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[2], encoding="utf-8") as f:
        info = json.load(f)
    counts = info.get("events", {})
    exact, minimum = expected(argv[1])
    errors = []
    for kind, n in sorted(exact.items()):
        if counts.get(kind, 0) != n:
            errors.append("%s: %d events, want %d" % (kind, counts.get(kind, 0), n))
    for kind, n in sorted(minimum.items()):
        if counts.get(kind, 0) < n:
            errors.append("%s: %d events, want at least %d" % (kind, counts.get(kind, 0), n))
    for kind in sorted(set(counts) - set(exact) - set(minimum)):
        errors.append("%s: %d unexpected events" % (kind, counts[kind]))
    if len(argv) == 4 and argv[1] == "main":
        check_dump(parse_dump(argv[3]), errors)
    for e in errors:
        print("FAIL: allcalls %s: %s" % (argv[1], e))
    if not errors:
        print("ok: allcalls %s: %d kinds as expected" % (argv[1], len(exact) + len(minimum)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
