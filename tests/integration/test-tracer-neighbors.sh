#!/bin/sh
# test-tracer-neighbors.sh: the neighbourhood collectives of examples/nhalo (a 2-D periodic
# cartesian halo with MPI_Neighbor_alltoallv and MPI_Neighbor_alltoall, an upwind distributed graph
# with MPI_Ineighbor_alltoallv) on 9 ranks that the tracer places on 3 nodes of 3 (FLOWCUT_NODE per
# row of the 3 x 3 grid, as in test-tracer-collectives.sh, with MPIR_CVAR_NOLOCAL=1). The output is
# the same traced and untraced; the trace holds every call; and the analysis expands each call
# into the messages between neighbours, tagged with its collective, whose bytes per pair of ranks
# are worked out here from the grid alone.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example nhalo
# A tile of 48 x 40 doubles: faces of 40 doubles along x, of 48 along y, so that a face sent the
# wrong way shows in the bytes; 12 iterations, the coarse exchange (24 doubles to each neighbour)
# at iterations 0, 5 and 10.
set -- "$prog" -x 48 -y 40 -i 12 -c 24
run_untraced "$work/plain" 9 "$@"
[ "$(cat "$work/plain.rc")" = 0 ] || fail "nhalo failed untraced: $(cat "$work/plain.err")"
timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$work/trace" \
    -genv MPIR_CVAR_NOLOCAL 1 -n 3 -env FLOWCUT_NODE n0 "$@" : -n 3 -env FLOWCUT_NODE n1 "$@" : \
    -n 3 -env FLOWCUT_NODE n2 "$@" >"$work/traced" 2>"$work/traced.err" ||
    fail "nhalo failed traced: $(cat "$work/traced.err")"
cmp -s "$work/plain" "$work/traced" || fail "nhalo: output differs traced"
"$flowcut" info --json "$work/trace" >"$work/info.json" 2>"$work/info.err" || fail "info: $(cat "$work/info.err")"
"$flowcut" analyze --format json --model none -o "$work/a.json" "$work/trace" 2>"$work/a.err" ||
    fail "analyze: $(cat "$work/a.err")"

"$PYTHON3" - "$work/info.json" "$work/a.json" <<'PY' || fail "nhalo: neighbourhood collectives"
import json, sys
from collections import defaultdict

info = json.load(open(sys.argv[1]))
j = json.load(open(sys.argv[2]))
P, NX, NY, ITERS, C = 3, 48, 40, 12, 24
COARSE_CALLS = len(range(0, ITERS, 5))
ranks = P * P
errors = []

# The calls: one of each per rank and iteration, and the communicators they run on.
want = {"MPI_Neighbor_alltoallv": ranks * ITERS, "MPI_Ineighbor_alltoallv": ranks * ITERS,
        "MPI_Neighbor_alltoall": ranks * COARSE_CALLS, "MPI_Cart_create": ranks,
        "MPI_Dist_graph_create_adjacent": ranks}
for kind, n in want.items():
    got = info["events"].get(kind, 0)
    if got != n:
        errors.append("%s: %d records, want %d" % (kind, got, n))

# The grid: rank r = x * 3 + y (MPI_Cart_create without reordering), node = x. The cartesian
# neighbours of (x, y) are (x -/+ 1, y) and (x, y -/+ 1), periodic; the upwind graph sends to
# (x + 1, y) and (x, y + 1) only. Faces: NY doubles along x, NX along y.
def rank(x, y):
    return (x % P) * P + (y % P)

want_pairs = defaultdict(lambda: defaultdict(int))
for x in range(P):
    for y in range(P):
        r = rank(x, y)
        for d in (-1, 1):
            want_pairs["MPI_Neighbor_alltoallv"][(r, rank(x + d, y))] += ITERS * NY * 8
            want_pairs["MPI_Neighbor_alltoallv"][(r, rank(x, y + d))] += ITERS * NX * 8
            for s in (rank(x + d, y), rank(x, y + d)):
                want_pairs["MPI_Neighbor_alltoall"][(r, s)] += COARSE_CALLS * C * 8
        want_pairs["MPI_Ineighbor_alltoallv"][(r, rank(x + 1, y))] += ITERS * NY * 8
        want_pairs["MPI_Ineighbor_alltoallv"][(r, rank(x, y + 1))] += ITERS * NX * 8

# JSON flows are the messages between nodes: the pairs of different rows.
got_pairs = defaultdict(lambda: defaultdict(int))
for f in j["flows"]:
    if f["collective"] in want_pairs:
        got_pairs[f["collective"]][(f["src_rank"], f["dst_rank"])] += f["bytes"]
        if f["algorithm"] != "linear":
            errors.append("flow %d: algorithm %s, want linear" % (f["id"], f["algorithm"]))
for coll, pairs in want_pairs.items():
    inter = {p: b for p, b in pairs.items() if p[0] // P != p[1] // P}
    if dict(got_pairs[coll]) != inter:
        errors.append("%s: bytes per pair between nodes %s, want %s" % (coll, dict(got_pairs[coll]), inter))
    # Each call's messages, those inside a node included: one per neighbour position of each rank.
    calls = [c for c in j["collectives"]["calls"] if c["collective"] == coll]
    per_call = 2 if coll == "MPI_Ineighbor_alltoallv" else 4
    if not calls or any(c["messages"] != ranks * per_call or c["present"] != ranks for c in calls):
        errors.append("%s: calls %r, want %d messages each" % (coll, calls[:2], ranks * per_call))
    total_inter = sum(c["inter_node_bytes"] for c in calls)
    if total_inter != sum(inter.values()):
        errors.append("%s: inter-node bytes %d, want %d" % (coll, total_inter, sum(inter.values())))
if j["warnings"]:
    errors.append("warnings: %r" % j["warnings"])
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
PY
echo "neighbors: nhalo's neighbourhood collectives traced and expanded"
