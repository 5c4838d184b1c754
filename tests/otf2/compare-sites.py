#!/usr/bin/env python3
"""compare-sites.py: checks that the call sites of a trace's MPI calls, as `flowcut dump` prints
them (site=CHAIN), are the calling contexts of the same calls in its OTF2 export, as
check-archive.py --sites read them with OTF2's Python reader: the same (rank, function, chain)
for every call, counted. Calls are compared as a multiset because the two list threads in
different orders. A POLLS line (a folded run of polls, format.h) stands for the run's last call,
which the export writes at its own times: one more call of its thread's previous call, from the
same site.

With --posts (the dump of the imported archive), the dump may have more sends and receives than
the archive has calls: the import makes a record of each message a call posts beyond its own
(the persistent requests MPI_Start starts), from the call's site. Each of those must come from a
site the archive has on that rank.

Usage: compare-sites.py [--posts] DUMP SITES
Prints the first difference and exits 1, or one summary line and exits 0."""
import collections
import re
import sys

line_re = re.compile(r' rank=(\d+) thread=(\d+) kind=(MPI_\S+|POLLS)')


def dump_calls(path):
    out = collections.Counter()
    last = {}
    for line in open(path):
        m = line_re.search(line)
        if not m:
            continue
        thread = (m.group(1), m.group(2))
        if m.group(3) == "POLLS":
            if thread in last:
                out[last[thread]] += 1
            continue
        i = line.find(" site=")
        key = (int(m.group(1)), m.group(3), line[i + 6:].rstrip("\n") if i >= 0 else "")
        out[key] += 1
        last[thread] = key
    return out


def archive_calls(path):
    out = collections.Counter()
    for line in open(path):
        rank, kind, chain = (line.rstrip("\n").split(" ", 2) + [""])[:3]
        out[(int(rank), kind, chain)] += 1
    return out


POSTS = {"MPI_Isend", "MPI_Irecv", "MPI_Send", "MPI_Recv", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend"}


def main():
    args = sys.argv[1:]
    posts = args[0] == "--posts"
    a, b = dump_calls(args[posts]), archive_calls(args[posts + 1])
    if posts:
        chains = {(k[0], k[2]) for k in b}
        for k in list(a):
            if k[1] in POSTS and a[k] > b[k] and (k[0], k[2]) in chains:
                a[k] = b[k]
        a += collections.Counter()  # drops the keys left at 0
    if a != b:
        for k in sorted(set(a) | set(b)):
            if a[k] != b[k]:
                print("SITES: rank %d %s from %r: %d in the dump, %d in the archive" % (k[0], k[1], k[2], a[k], b[k]))
                sys.exit(1)
    resolved = sum(n for k, n in a.items() if "@" in k[2])
    print("sites: %d calls, %d with a file:line, %d distinct chains" % (sum(a.values()), resolved,
                                                                       len({k[2] for k in a})))


main()
