#!/bin/sh
# test-otf2-topology.sh: the communicators' cartesian topologies in an OTF2 export and back. Each
# case is a hand-built trace (gen-trace) whose communicator 2 has a virtual topology, every rank's
# neighbour lists written as the tracer records them (per dimension the source, then the
# destination of MPI_Cart_shift by 1). The export must hold OTF2's CartDimension, CartTopology and
# CartCoordinate definitions of the grid worked out here from MPI's definition (ranks numbered in
# row-major order of their coordinates), read with OTF2's Python bindings; the archive imported
# and exported again must hold the same definitions (the import gives the rank files the same
# neighbour lists, or the second export would find no grid). A distributed graph has no OTF2
# definition: its export holds no topology.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-otf2.sh"
need_python_otf2
gen_trace=$abs_builddir/gen-trace
[ -x "$gen_trace" ] || fail "$gen_trace is not built"

# spec KIND DIMS PERIODS: the trace of a cartesian grid (DIMS and PERIODS comma lists), every rank
# on a node of its own, or with KIND distgraph, a chain 0 > 1 > ... (no grid).
spec() {
    "$PYTHON3_OTF2" - "$@" <<'PY'
import sys
kind, dims, periods = sys.argv[1], [int(x) for x in sys.argv[2].split(",")], [int(x) for x in sys.argv[3].split(",")]
p = 1
for d in dims:
    p *= d
print("ranks %d" % p)
def coords(r):
    c = []
    for d in reversed(dims):
        c.append(r % d)
        r //= d
    return c[::-1]
def rank(c):
    r = 0
    for x, d in zip(c, dims):
        r = r * d + x
    return r
for r in range(p):
    print("node %d n%d" % (r, r))
    if kind == "distgraph":
        src = str(r - 1) if r > 0 else "-"
        dst = str(r + 1) if r + 1 < p else "-"
        print("topo %d distgraph %s %s" % (r, src, dst))
        continue
    nb = []
    for k in range(len(dims)):
        for step in (-1, 1):
            c = coords(r)
            c[k] += step
            if periods[k]:
                c[k] %= dims[k]
            nb.append(str(rank(c)) if 0 <= c[k] < dims[k] else "null")
    print("topo %d cart %s %s" % (r, ",".join(nb), ",".join(nb)))
PY
}

# check NAME ARCHIVE DIMS PERIODS: ARCHIVE holds one cartesian topology, of those dimensions, on a
# communicator of all the ranks, every rank at its row-major coordinates; or none with DIMS "-".
check() {
    "$PYTHON3_OTF2" - "$2/traces.otf2" "$3" "$4" <<'PY' || fail_later "$1: the archive's cartesian topology"
import sys, otf2
anchor, dims, periods = sys.argv[1], sys.argv[2], sys.argv[3]
with otf2.reader.open(anchor) as tr:
    d = tr.definitions
    topos = list(d.cart_topologies)
    coords = list(d.cart_coordinates)
    if dims == "-":
        assert topos == [] and coords == [], (topos, coords)
        sys.exit(0)
    dims = [int(x) for x in dims.split(",")]
    periods = [int(x) for x in periods.split(",")]
    assert len(topos) == 1, topos
    t = topos[0]
    got = [(x.size, x.cart_periodicity == otf2.CartPeriodicity.TRUE) for x in t.dimensions]
    assert got == [(s, bool(q)) for s, q in zip(dims, periods)], got
    p = 1
    for s in dims:
        p *= s
    assert len(list(t.communicator.group.members)) == p, t.communicator
    want = {}
    for r in range(p):
        c, x = [], r
        for s in reversed(dims):
            c.append(x % s)
            x //= s
        want[r] = c[::-1]
    seen = {c.rank: list(c.coordinates) for c in coords if c.topology == t}
    assert seen == want, (seen, want)
PY
}

for c in "grid23 2,3 0,1" "grid214 2,1,4 1,0,0" "ring5 5 1" "line4 4 0"; do
    set -- $c
    spec cart "$2" "$3" >"$work/$1.spec" || { fail_later "$1: spec"; continue; }
    mkdir -p "$work/$1" && "$gen_trace" "$work/$1" <"$work/$1.spec" || { fail_later "$1: gen-trace"; continue; }
    "$flowcut" export --otf2 --no-symbols "$work/$1" "$work/$1.otf2" >"$work/$1.out" 2>&1 ||
        { fail_later "$1: export: $(cat "$work/$1.out")"; continue; }
    check "$1" "$work/$1.otf2" "$2" "$3"
    # The round trip: the archive imported (as every command reads it) and exported again.
    "$flowcut" export --otf2 --no-symbols "$work/$1.otf2/traces.otf2" "$work/$1.again" >"$work/$1.again.out" 2>&1 ||
        { fail_later "$1: export of the archive: $(cat "$work/$1.again.out")"; continue; }
    check "$1 (imported and exported again)" "$work/$1.again" "$2" "$3"
done

# A distributed graph: no OTF2 definition, no topology in the archive.
spec distgraph 4 0 >"$work/chain.spec" && mkdir "$work/chain" && "$gen_trace" "$work/chain" <"$work/chain.spec" || fail "chain: gen-trace"
"$flowcut" export --otf2 --no-symbols "$work/chain" "$work/chain.otf2" >"$work/chain.out" 2>&1 ||
    fail "chain: export: $(cat "$work/chain.out")"
check chain "$work/chain.otf2" - -

# Lists that are no grid (rank 1's destination in the one dimension is rank 3, not 2): no topology.
spec cart 4 0 | sed 's/^topo 1 cart 0,2 0,2$/topo 1 cart 0,3 0,3/' >"$work/bad.spec"
grep -q "^topo 1 cart 0,3 0,3$" "$work/bad.spec" || fail "bad: the spec was not changed"
mkdir "$work/bad" && "$gen_trace" "$work/bad" <"$work/bad.spec" || fail "bad: gen-trace"
"$flowcut" export --otf2 --no-symbols "$work/bad" "$work/bad.otf2" >"$work/bad.out" 2>&1 ||
    fail "bad: export: $(cat "$work/bad.out")"
check bad "$work/bad.otf2" - -

[ "$failures" -eq 0 ] && echo "topologies: every case passed"
finish
