#!/usr/bin/env python3
"""commchurn-check.py DUMP ITERS SIZE: checks `flowcut dump --no-sites` of examples/commchurn.

Each rank made ITERS communicators, one an iteration (MPI_Comm_dup, then MPI_Comm_split, in turn),
and used each once with MPI_Sendrecv and MPI_Allreduce before MPI_Comm_free. So, per rank: ITERS
creations with distinct new communicator ids; every Sendrecv, Allreduce and Comm_free on the
communicator the last creation made; and every Sendrecv's peer mapped by the reader, through that
communicator's definition, to the world rank the program sent to (the next rank of the
communicator: rank + 1 for a copy of the world, rank - 1 for the reversed split)."""
import re
import sys

dump, iters, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
field = re.compile(r"(\w+)=(\S+)")
last = {}
created = {r: [] for r in range(size)}
used = {r: {"MPI_Sendrecv": 0, "MPI_Allreduce": 0, "MPI_Comm_free": 0} for r in range(size)}
errors = []
with open(dump) as f:
    for line in f:
        ev = dict(field.findall(line))
        r, kind = int(ev["rank"]), ev["kind"]
        if kind in ("MPI_Comm_dup", "MPI_Comm_split"):
            if ev.get("newcomm", "null") == "null":
                errors.append(f"rank {r}: {kind} without a new communicator")
                continue
            last[r] = ev["newcomm"]
            created[r].append((kind, ev["newcomm"]))
        elif kind in used[r]:
            n = len(created[r])
            if r not in last or ev["comm"] != last[r]:
                errors.append(f"rank {r}: {kind} on comm {ev['comm']}, the last created is {last.get(r)}")
            used[r][kind] += 1
            if kind == "MPI_Sendrecv":
                # iteration n - 1 made this communicator: a copy when even, a reversed split when odd
                want = (r + 1) % size if (n - 1) % 2 == 0 else (r - 1) % size
                if ev.get("peer") != str(want):
                    errors.append(f"rank {r}: Sendrecv of iteration {n - 1} to peer {ev.get('peer')}, not {want}")
for r in range(size):
    kinds = [k for k, _ in created[r]]
    want = ["MPI_Comm_dup" if i % 2 == 0 else "MPI_Comm_split" for i in range(iters)]
    if kinds != want:
        errors.append(f"rank {r}: {len(kinds)} creations, not the {iters} alternating dup and split")
    ids = [c for _, c in created[r]]
    if len(set(ids)) != len(ids):
        errors.append(f"rank {r}: new communicator ids repeat")
    for k, n in used[r].items():
        if n != iters:
            errors.append(f"rank {r}: {n} {k}, not {iters}")
for e in errors[:20]:
    print(e)
if errors:
    sys.exit(1)
print(f"{size} ranks: {iters} communicators each, every use on its own, every peer mapped")
