#!/bin/sh
# test-tracer-persistcoll.sh: the MPI-4 persistent collectives of examples/psolver (MPI_Alltoall_init
# started with MPI_Start and polled with MPI_Test, MPI_Allreduce_init started with MPI_Startall,
# MPI_Alltoallv_init of uneven blocks, MPI_Neighbor_alltoall_init on a periodic ring, beside a
# point-to-point halo) on 8 ranks that the
# tracer places on 4 nodes of 2, as test-tracer-collectives.sh does. The output is the same traced
# and untraced; the trace holds each init once and each Start once an iteration; and the analysis
# makes each Start one call of the collective, over the member's Start-to-completion window,
# expanded into the messages of the schedule MPICH 4.0.2 builds for the persistent form (its
# non-blocking form's), whose inter-node bytes are worked out here from the algorithms'
# definitions (collective.h), independently of the analyzer.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example psolver
# Transpose blocks of 512 doubles (4096 bytes to each rank: above the 2048 bytes up to which
# MPICH's non-blocking all-to-all takes Bruck), boundaries of 64 doubles, 6 iterations.
set -- "$prog" -b 512 -c 64 -H 256 -i 6
run_untraced "$work/plain" 8 "$@"
[ "$(cat "$work/plain.rc")" = 0 ] || fail "psolver failed untraced: $(cat "$work/plain.err")"
timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$work/trace" \
    -genv MPIR_CVAR_NOLOCAL 1 -n 2 -env FLOWCUT_NODE n0 "$@" : -n 2 -env FLOWCUT_NODE n1 "$@" : \
    -n 2 -env FLOWCUT_NODE n2 "$@" : -n 2 -env FLOWCUT_NODE n3 "$@" >"$work/traced" 2>"$work/traced.err" ||
    fail "psolver failed traced: $(cat "$work/traced.err")"
cmp -s "$work/plain" "$work/traced" || fail "psolver: output differs traced"
"$flowcut" dump --no-sites "$work/trace" >"$work/dump" 2>"$work/dump.err" || fail "dump: $(cat "$work/dump.err")"
"$flowcut" analyze --format json --model none -o "$work/a.json" "$work/trace" 2>"$work/a.err" ||
    fail "analyze: $(cat "$work/a.err")"

"$PYTHON3" - "$work/dump" "$work/a.json" <<'PY' || fail "psolver: persistent collectives"
import json, sys
from collections import defaultdict

P, B, C, ITERS = 8, 512, 64, 6
node = lambda r: r // 2
errors = []
INIT = {"MPI_Alltoall_init", "MPI_Allreduce_init", "MPI_Alltoallv_init", "MPI_Neighbor_alltoall_init"}

# The records, rank by rank in time order: each init once, its request started once an
# iteration, and each Start's window from the Start's entry (MPI_Start, or the MPI_Startall its
# START follows) to the COMPLETE of the request.
kind_of = defaultdict(dict)              # rank -> req -> init kind
inits = defaultdict(lambda: defaultdict(int))
windows = defaultdict(lambda: defaultdict(list))  # kind -> rank -> [[start, end]]
open_ = {}
startall = {}  # rank -> entry of its last MPI_Startall (the dump interleaves the ranks)
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    r, k, t = int(f["rank"]), f["kind"], float(f["time"])
    req = f.get("req")
    if k in INIT:
        kind_of[r][req] = k
        inits[k][r] += 1
    elif k == "MPI_Startall":
        startall[r] = t
    elif k in ("MPI_Start", "START") and req in kind_of[r]:
        w = [startall[r] if k == "START" else t, None]
        windows[kind_of[r][req]][r].append(w)
        open_[(r, req)] = w
    elif k == "COMPLETE" and (r, req) in open_:
        open_.pop((r, req))[1] = t
for k in sorted(INIT):
    if dict(inits[k]) != {r: 1 for r in range(P)}:
        errors.append("%s: inits per rank %r, want 1 on each of %d" % (k, dict(inits[k]), P))
    starts = {r: len(v) for r, v in windows[k].items()}
    if starts != {r: ITERS for r in range(P)}:
        errors.append("%s: Starts per rank %r, want %d each" % (k, starts, ITERS))
if open_:
    errors.append("Starts never completed: %r" % sorted(open_))

def inter(edges):
    """Inter-node bytes of (src, dst, bytes) messages."""
    return sum(b for s, d, b in edges if node(s) != node(d))

# Each Start is one call of its collective, expanded as the non-blocking form MPICH 4.0.2 builds
# the persistent one with (MPIR_<Coll>_init_impl -> MPIR_I<coll>_sched_impl, its table):
#   all-to-all of 4096 bytes a peer: "scattered", each rank straight to every other;
#   all-reduce of 2 doubles (16 bytes, <= 2048): recursive doubling, partners r ^ 1, r ^ 2, r ^ 4
#     (on the blocking MPI_Allreduce, ch4's node-aware composition would run instead);
#   all-to-all v: "scattered", rank s straight to rank d with 1 + (s + 2 d) % 5 doubles (the
#     tracer's COUNTS of the init, which each Start carries);
#   neighbour all-to-all: each rank to its left and right neighbour of the ring, C doubles each.
want = {
    "MPI_Alltoall_init": ("scattered", inter([(s, d, 8 * B) for s in range(P) for d in range(P) if s != d])),
    "MPI_Allreduce_init": ("recursive_doubling", inter([(r, r ^ (1 << k), 16) for r in range(P) for k in range(3)])),
    "MPI_Alltoallv_init": ("scattered",
                           inter([(s, d, 8 * (1 + (s + 2 * d) % 5)) for s in range(P) for d in range(P) if s != d])),
    "MPI_Neighbor_alltoall_init": ("linear", inter([(r, (r + d) % P, 8 * C) for r in range(P) for d in (1, P - 1)])),
}
assert want["MPI_Alltoall_init"][1] == P * (P - 2) * 8 * B  # (8 - 2) blocks to other nodes a rank
a = json.load(open(sys.argv[2]))
col = a["collectives"]
by_kind = {s["collective"]: s for s in col["by_kind"]}
for k, (alg, per_call) in want.items():
    s = by_kind.get(k)
    if s is None or s["calls"] != ITERS or s["inter_node_bytes"] != ITERS * per_call:
        errors.append("%s: by_kind %r, want %d calls and %d inter-node bytes" % (k, s, ITERS, ITERS * per_call))
    calls = [c for c in col["calls"] if c["collective"] == k]
    if len(calls) != ITERS or any(c["algorithm"] != alg or c["inter_node_bytes"] != per_call or
                                  c["present"] != P for c in calls):
        errors.append("%s: calls %r, want %d of %s with %d inter-node bytes each" % (k, calls, ITERS, alg, per_call))
        continue
    # The i-th call's members are the ranks' i-th Starts: the earliest entry, and the mean and
    # longest Start-to-completion window (the dump's times are rank 0's clock, as the analysis's).
    for i, c in enumerate(calls):
        ws = [windows[k][r][i] for r in range(P)]
        d = [e - s for s, e in ws]
        got = (c["enter"], c["observed_mean_s"], c["observed_max_s"])
        exp = (min(s for s, _ in ws), sum(d) / P, max(d))
        if any(abs(g - e) > 2e-6 for g, e in zip(got, exp)):
            errors.append("%s call %d: enter, mean, longest %r, want the Starts' windows %r" % (k, i, got, exp))
# The flows of the persistent collectives carry their name.
flows = [f for f in a["flows"] if f.get("collective") in want and f["src_node"] != f["dst_node"]]
tot = defaultdict(int)
for f in flows:
    tot[f["collective"]] += f["bytes"]
for k, (_, per_call) in want.items():
    if tot[k] != ITERS * per_call:
        errors.append("%s: inter-node flow bytes %d, want %d" % (k, tot[k], ITERS * per_call))
# Nothing of them is named as left out (the point-to-point halo may get clock warnings).
for w in a["warnings"]:
    if "collective" in w or "expanded" in w or "_init" in w:
        errors.append("warning: %s" % w)
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
PY
# The remap replay expands the same instances: on each rank the MPI_Cart_create (a barrier of
# MPI_COMM_WORLD), the final MPI_Allreduce and 4 Starts an iteration, 8 x (2 + 4 x 6) = 208.
line_profile "$work/line.prof" 1e-05 1e-08 1e-06 1e-09 1e8
"$flowcut" remap --platform "$work/line.prof" "$work/trace" >"$work/remap" 2>&1 ||
    fail "remap: $(head -c 300 "$work/remap")"
grep -q '^replay: [0-9]* messages paired, 208 collective calls expanded,' "$work/remap" ||
    fail "remap: $(grep '^replay:' "$work/remap" | head -1), want 208 collective calls expanded"
echo "persistcoll: each Start of psolver's persistent collectives expanded over its window"
