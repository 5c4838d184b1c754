#!/bin/sh
# test-tracer-noncommutative.sh: reductions with operations of MPI_Op_create (examples/transfer: a
# non-commutative product of 2 x 2 matrices in MPI_Reduce and MPI_Reduce_scatter_block, a
# commutative sum of the program's own in MPI_Allreduce) on 8 ranks that the tracer places on 4
# nodes of 2, as test-tracer-collectives.sh does. The records carry the operation's nature, and the
# analysis expands each call into the algorithm MPICH 4.0.2 picks for it, whose inter-node bytes
# are worked out here from the algorithms' definitions (collective.h), independently of the
# analyzer; those of the commutative algorithms, which a predefined operation of the same size
# gets, differ from them.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example transfer
set -- "$prog" -k 256 -r 2
run_untraced "$work/plain" 8 "$@"
[ "$(cat "$work/plain.rc")" = 0 ] || fail "transfer failed untraced: $(cat "$work/plain.err")"
timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$work/trace" \
    -genv MPIR_CVAR_NOLOCAL 1 -n 2 -env FLOWCUT_NODE n0 "$@" : -n 2 -env FLOWCUT_NODE n1 "$@" : \
    -n 2 -env FLOWCUT_NODE n2 "$@" : -n 2 -env FLOWCUT_NODE n3 "$@" >"$work/traced" 2>"$work/traced.err" ||
    fail "transfer failed traced: $(cat "$work/traced.err")"
cmp -s "$work/plain" "$work/traced" || fail "transfer: output differs traced"
"$flowcut" dump --no-sites "$work/trace" >"$work/dump" 2>"$work/dump.err" || fail "dump: $(cat "$work/dump.err")"
"$flowcut" analyze --format json --model none -o "$work/a.json" "$work/trace" 2>"$work/a.err" ||
    fail "analyze: $(cat "$work/a.err")"

"$PYTHON3" - "$work/dump" "$work/a.json" <<'PY' || fail "transfer: reductions with operations of the program"
import json, sys

P, K, REPS = 8, 256, 2
node = lambda r: r // 2
errors = []

# The records: the operation's nature on every rank's reductions (format 2.6 flags).
want_flags = {"MPI_Reduce": "user_op,noncommutative", "MPI_Reduce_scatter_block": "user_op,noncommutative",
              "MPI_Allreduce": "user_op"}
seen = {}
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    if f.get("kind") in want_flags and f.get("bytes") != "12":  # not the final check of 3 ints
        seen.setdefault(f["kind"], set()).add(f.get("flags", ""))
for kind, flags in want_flags.items():
    if seen.get(kind) != {flags}:
        errors.append("%s: flags %r, want {%r}" % (kind, seen.get(kind), flags))

def inter(edges):
    """Inter-node bytes of (src, dst, bytes) messages."""
    return sum(b for s, d, b in edges if node(s) != node(d))

def binomial_to(root, n):
    """Binomial reduce on ranks relative to root: child rel | mask sends to rel at each mask."""
    out, mask = [], 1
    while mask < P:
        for rel in range(P):
            if rel & mask == 0 and (rel | mask) < P and rel % (2 * mask) == 0:
                out.append((((rel | mask) + root) % P, (rel + root) % P, n))
        mask <<= 1
    return out

calls = json.load(open(sys.argv[2]))["collectives"]["calls"]
by = lambda name: [c for c in calls if c["collective"] == name and c["bytes"] > 12]

# MPI_Reduce of K matrices (32 bytes each) to rank 7, a non-commutative operation: the binomial
# tree rooted at rank 0, then rank 0 to rank 7. (A predefined operation of 8192 bytes would take
# reduce-scatter + gather; a commutative one the tree rooted at rank 7.)
n = K * 32
want = inter(binomial_to(0, n) + [(0, 7, n)])
assert want != inter(binomial_to(7, n))
red = by("MPI_Reduce")
if len(red) != REPS or any(c["algorithm"] != "binomial" or c["inter_node_bytes"] != want for c in red):
    errors.append("MPI_Reduce: %r, want binomial with %d inter-node bytes" % (red, want))

# MPI_Reduce_scatter_block of the same 8192 bytes, non-commutative, 8 ranks: partners at distance
# 1, 2, 4 with halves of what is left: 4096, 2048, 1024 bytes. (Commutative: distance 4, 2, 1.)
want = inter([(r, r ^ (1 << k), n >> (k + 1)) for r in range(P) for k in range(3)])
assert want != inter([(r, r ^ (4 >> k), n >> (k + 1)) for r in range(P) for k in range(3)])
rsb = by("MPI_Reduce_scatter_block")
if len(rsb) != REPS or any(c["algorithm"] != "noncommutative" or c["inter_node_bytes"] != want for c in rsb):
    errors.append("MPI_Reduce_scatter_block: %r, want noncommutative with %d inter-node bytes" % (rsb, want))

# MPI_Allreduce of 8 x K long longs = 16384 bytes with the program's (commutative) sum: recursive
# doubling, partners r ^ 1, r ^ 2, r ^ 4 with the whole vector. (Predefined: Rabenseifner.)
n = K * 8 * 8
want = inter([(r, r ^ (1 << k), n) for r in range(P) for k in range(3)])
ar = [c for c in calls if c["collective"] == "MPI_Allreduce" and c["bytes"] == n]
if len(ar) != REPS or any(c["algorithm"] != "recursive_doubling" or c["inter_node_bytes"] != want for c in ar):
    errors.append("MPI_Allreduce: %r, want recursive_doubling with %d inter-node bytes" % (ar, want))
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
PY
echo "noncommutative: transfer's reductions expanded as MPICH runs them for its operations"
