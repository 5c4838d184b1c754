#!/bin/sh
# test-otf2-nbcoll.sh: non-blocking collectives through an OTF2 export and back, on a hand-built
# trace (gen-trace) of 4 ranks on 2 nodes, ranks 0 and 1 on one, 2 and 3 on the other. Each rank
# posts an MPI_Iallreduce, an MPI_Ibcast from rank 2, an MPI_Ialltoall of 1000 bytes a peer and an
# MPI_Ialltoallv whose rank s sends rank d 100 (1 + (s + 3 d) % 4) bytes (COUNTS records), and completes
# them in one MPI_Waitall. OTF2 gives a non-blocking collective's operation, communicator, root
# and bytes at its completion only, and its records hold a rank's total bytes: the analysis of the
# archive must still find the calls of the native trace (bytes, root, algorithm, windows), and the
# all-to-alls' inter-node bytes worked out here: 4 ranks x 2 peers on the other node x 1000 bytes,
# and the sum of 100 (1 + (s + 3 d) % 4) over the pairs on different nodes (2400, where the totals
# spread evenly over the peers would give 2000); and the same flows (compare-analyze.py).
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-otf2.sh"
gen_trace=$abs_builddir/gen-trace
[ -x "$gen_trace" ] || fail "$gen_trace is not built"

mkdir "$work/t"
{
    echo "ranks 4"
    for r in 0 1 2 3; do
        t=$((10 + r))
        total=0 totalin=0
        for d in 0 1 2 3; do
            total=$((total + 100 * (1 + (r + 3 * d) % 4))) totalin=$((totalin + 100 * (1 + (d + 3 * r) % 4)))
        done
        echo "node $r n$((r / 2))"
        echo "ev $r MPI_Iallreduce $t $((t + 1)) -1 0 64000 0x10 b2=64000"
        echo "ev $r MPI_Ibcast $((t + 2)) $((t + 3)) 2 0 $([ $r = 2 ] && echo 3000 || echo 0) 0x11 b2=$([ $r = 2 ] && echo 0 || echo 1000)"
        echo "ev $r MPI_Ialltoall $((t + 4)) $((t + 5)) -1 0 4000 0x12 b2=4000"
        echo "ev $r MPI_Ialltoallv $((t + 6)) $((t + 7)) -1 0 $total 0x13 b2=$totalin"
        for d in 0 1 2 3; do
            echo "ev $r COUNTS $((t + 7)) $((t + 7)) $d 0 $((100 * (1 + (r + 3 * d) % 4))) 1 b2=$((100 * (1 + (d + 3 * r) % 4)))"
        done
        echo "ev $r MPI_Waitall 30 $((60 + r)) -1 0 0 0 b2=4"
        for q in 10 11 12 13; do echo "ev $r COMPLETE $((60 + r)) $((60 + r)) -1 0 0 0x$q"; done
    done
} >"$work/spec"
"$gen_trace" "$work/t" <"$work/spec" >"$work/gen.err" 2>&1 || fail "gen-trace: $(cat "$work/gen.err")"
"$flowcut" export --otf2 "$work/t" "$work/t.otf2" >"$work/export" 2>&1 || fail "export: $(cat "$work/export")"
"$OTF2_PRINT" --silent -Werror "$work/t.otf2/traces.otf2" >"$work/print" 2>&1 ||
    fail "otf2-print rejects the export: $(head -c 2000 "$work/print")"
for x in t t.otf2/traces.otf2; do
    "$flowcut" analyze --format json --model none "$work/$x" >"$work/$(basename "$x").json" 2>"$work/err" ||
        fail "analyze $x: $(cat "$work/err")"
done
"$PYTHON3" - "$work/t.json" "$work/traces.otf2.json" <<'PY' >"$work/calls" || fail "$(cat "$work/calls")"
import json, sys
native, back = (json.load(open(f))["collectives"]["calls"] for f in sys.argv[1:3])
node = lambda r: r // 2
want = {"MPI_Ialltoall": 4 * 2 * 1000,
        "MPI_Ialltoallv": sum(100 * (1 + (s + 3 * d) % 4) for s in range(4) for d in range(4) if node(s) != node(d))}
errors = []
for name, calls in (("native", native), ("archive", back)):
    got = sorted(c["collective"] for c in calls)
    if got != ["MPI_Iallreduce", "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ibcast"]:
        errors.append("%s: calls %r" % (name, got))
    for c in calls:
        if c["collective"] in want and c["inter_node_bytes"] != want[c["collective"]]:
            errors.append("%s: %s inter-node bytes %d, want %d" % (name, c["collective"], c["inter_node_bytes"],
                                                                  want[c["collective"]]))
for x, y in zip(native, back):
    for f in x:
        a, b = x[f], y.get(f)
        if not (abs(a - b) <= 2e-9 if isinstance(a, float) and isinstance(b, float) else a == b):
            errors.append("%s: %s %r in the native trace, %r in the archive" % (x["collective"], f, a, b))
for e in errors:
    print("FAIL: " + e)
if errors:
    sys.exit(1)
print("%d non-blocking collective calls alike, all-to-alls' inter-node bytes %d and %d"
      % (len(native), want["MPI_Ialltoall"], want["MPI_Ialltoallv"]))
PY
"$PYTHON3" "$srcdir/compare-analyze.py" "$work/t.json" "$work/traces.otf2.json" >"$work/cmp" ||
    fail "analyses differ after the OTF2 round trip: $(cat "$work/cmp")"
echo "nbcoll: $(cat "$work/calls"), $(cat "$work/cmp")"
