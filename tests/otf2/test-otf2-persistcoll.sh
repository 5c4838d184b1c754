#!/bin/sh
# test-otf2-persistcoll.sh: the MPI-4 persistent collectives of examples/psolver (MPI_Alltoall_init
# started with MPI_Start and polled with MPI_Test, MPI_Allreduce_init started with MPI_Startall,
# MPI_Alltoallv_init of uneven blocks, MPI_Neighbor_alltoall_init on a periodic ring) through an
# OTF2 export and back, on 8 ranks placed on 4 nodes of 2. The archive, read with OTF2's Python
# bindings (check-persistcoll.py), holds each init once per rank and each Start as a
# NonBlockingCollectiveRequest completed by one NonBlockingCollectiveComplete, with the operation
# and bytes worked out from psolver's parameters. `flowcut analyze` of the archive finds the same
# collective calls as of the native trace (each Start one call over its Start-to-completion
# window, the same algorithm and members) and the same flows, and the inter-node bytes of each
# collective are those worked out here from the algorithms' definitions, as
# tests/integration/test-tracer-persistcoll.sh works them out for the native trace. An archive of
# another writer, without flowcut's request attribute at the inits, gives no persistent collective
# calls and the same point-to-point flows.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-otf2.sh"

need_command "$MPIEXEC"
[ -f "$libflowcut" ] || fail "tracer not built: $libflowcut is missing"
[ -x "$examples/psolver" ] || fail "examples/psolver is missing"
P=8 B=512 C=64 ITERS=6
set -- "$examples/psolver" -b $B -c $C -H 256 -i $ITERS
timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$work/trace" \
    -genv MPIR_CVAR_NOLOCAL 1 -n 2 -env FLOWCUT_NODE n0 "$@" : -n 2 -env FLOWCUT_NODE n1 "$@" : \
    -n 2 -env FLOWCUT_NODE n2 "$@" : -n 2 -env FLOWCUT_NODE n3 "$@" >"$work/out" 2>"$work/err" ||
    fail "psolver failed traced: $(cat "$work/err")"
t=$work/trace
"$flowcut" export --otf2 "$t" "$t.otf2" >"$t.export" 2>&1 || fail "export failed: $(cat "$t.export")"
"$OTF2_PRINT" --silent -Werror "$t.otf2/traces.otf2" >"$t.print" 2>&1 ||
    fail "otf2-print rejects the export: $(head -c 2000 "$t.print")"
"$OTF2_PRINT" "$t.otf2/traces.otf2" | "$PYTHON3" "$srcdir/check-order.py" $P >"$t.order" || fail "$(cat "$t.order")"
archive="archive not read with OTF2's Python bindings (Debian package python3-otf2 missing)"
if [ -n "$PYTHON3_OTF2" ]; then
    "$PYTHON3_OTF2" "$srcdir/check-persistcoll.py" "$t.otf2/traces.otf2" $P $B $C $ITERS >"$t.check" ||
        fail "the archive's persistent collectives: $(cat "$t.check")"
    archive=$(cat "$t.check")
fi
"$flowcut" analyze --format json --model none -o "$t.native.json" "$t" 2>"$t.native.err" ||
    fail "analyze of the native trace: $(cat "$t.native.err")"
"$flowcut" analyze --format json --model none -o "$t.otf2.json" "$t.otf2/traces.otf2" 2>"$t.otf2.err" ||
    fail "analyze of the archive: $(cat "$t.otf2.err")"
"$PYTHON3" "$srcdir/compare-analyze.py" "$t.native.json" "$t.otf2.json" >"$t.cmp" ||
    fail "analyses differ after the OTF2 round trip: $(cat "$t.cmp")"

"$PYTHON3" - "$t.native.json" "$t.otf2.json" $P $B $C $ITERS <<'PY' >"$t.calls" || fail "$(cat "$t.calls")"
import json, sys
native, back = (json.load(open(f))["collectives"] for f in sys.argv[1:3])
P, B, C, ITERS = (int(x) for x in sys.argv[3:7])
node = lambda r: r // 2
errors = []

def inter(edges):
    """Inter-node bytes of (src, dst, bytes) messages."""
    return sum(b for s, d, b in edges if node(s) != node(d))

# Each Start's call, expanded as the schedule MPICH 4.0.2 builds for the persistent form (that of
# its non-blocking form): the all-to-all of 4096 bytes a peer "scattered", rank to rank; the
# reduction of 16 bytes by recursive doubling, partners r ^ 1, r ^ 2, r ^ 4; the all-to-all v
# scattered with 1 + (s + 2 d) % 5 doubles from s to d; the neighbour all-to-all to the left and
# right neighbours of the ring, C doubles each.
want = {
    "MPI_Alltoall_init": inter([(s, d, 8 * B) for s in range(P) for d in range(P) if s != d]),
    "MPI_Allreduce_init": inter([(r, r ^ (1 << k), 16) for r in range(P) for k in range(3)]),
    "MPI_Alltoallv_init": inter([(s, d, 8 * (1 + (s + 2 * d) % 5)) for s in range(P) for d in range(P) if s != d]),
    "MPI_Neighbor_alltoall_init": inter([(r, (r + d) % P, 8 * C) for r in range(P) for d in (1, P - 1)]),
}
assert want["MPI_Alltoall_init"] == P * (P - 2) * 8 * B  # (8 - 2) blocks to other nodes a rank
for name, a in (("native", native), ("archive", back)):
    for k, per_call in want.items():
        calls = [c for c in a["calls"] if c["collective"] == k]
        if len(calls) != ITERS or any(c["inter_node_bytes"] != per_call or c["present"] != P for c in calls):
            errors.append("%s: %s: %d calls, inter-node bytes %r, want %d calls of %d with %d ranks present"
                          % (name, k, len(calls), [c["inter_node_bytes"] for c in calls], ITERS, per_call, P))
# The same calls in the same order: times equal up to the nanosecond OTF2's reader rounds to.
if len(native["calls"]) != len(back["calls"]):
    errors.append("%d collective calls in the native trace, %d in the archive" % (len(native["calls"]), len(back["calls"])))
for x, y in zip(native["calls"], back["calls"]):
    for f in x:
        a, b = x[f], y.get(f)
        same = abs(a - b) <= 2e-6 if isinstance(a, float) and isinstance(b, float) else a == b
        if not same:
            errors.append("call %d (%s): %s %r in the native trace, %r in the archive" % (x["id"], x["collective"], f, a, b))
if native["by_kind"] != back["by_kind"]:
    errors.append("by kind: %r != %r" % (native["by_kind"], back["by_kind"]))
for e in errors[:20]:
    print("FAIL: " + e)
if errors:
    sys.exit(1)
print("%d collective calls alike, each Start of the 4 persistent collectives one call" % len(native["calls"]))
PY
# An archive of another writer names no request at an init: the export copied with OTF2's Python
# bindings without the flowcut::request attributes. Its analysis reads no call of the persistent
# collectives (none at an init either) and the same point-to-point flows.
other=
if [ -n "$PYTHON3_OTF2" ]; then
    "$PYTHON3_OTF2" - "$t.otf2/traces.otf2" "$work/other" <<'PY' || fail "copy of the archive failed"
import sys
import otf2
with otf2.reader.open(sys.argv[1]) as trace:
    with otf2.writer.open(sys.argv[2], definitions=trace.definitions) as out:
        for loc, ev in trace.events:
            if ev.attributes:
                ev.attributes = {a: v for a, v in ev.attributes.items() if a.name != "flowcut::request"} or None
            out.event_writer_from_location(loc)(ev)
PY
    "$flowcut" analyze --format json --model none -o "$work/other.json" "$work/other/traces.otf2" 2>"$work/other.err" ||
        fail "analyze of the archive without requests at the inits: $(cat "$work/other.err")"
    "$PYTHON3" - "$t.native.json" "$work/other.json" <<'PY' >"$work/other.out" || fail "$(cat "$work/other.out")"
import json, sys
native, other = (json.load(open(f)) for f in sys.argv[1:3])
kinds = sorted(s["collective"] for s in other["collectives"]["by_kind"])
p2p = lambda d: sorted((f["src_rank"], f["dst_rank"], f["bytes"], f["tag"]) for f in d["flows"] if f["collective"] is None)
if any(k.endswith("_init") for k in kinds) or p2p(native) != p2p(other) or not p2p(native):
    print("FAIL: without requests at the inits: collectives %r, %d point-to-point flows (native %d)"
          % (kinds, len(p2p(other)), len(p2p(native))))
    sys.exit(1)
print("without requests at the inits: no persistent collective call, the same %d point-to-point flows" % len(p2p(native)))
PY
    other=", $(cat "$work/other.out")"
fi
echo "persistcoll: $(cat "$t.order"), $archive, $(cat "$t.cmp"), $(cat "$t.calls")$other"
