#!/bin/bash
# test-collective-cluster.sh: the FFT-style example, whose communication is MPI_Alltoall and MPI_Alltoallv
# only, traced on the emulated cluster (4 nodes of 2 ranks, 200 Mbit/s): its report has flows
# tagged with the collectives, the inter-node bytes of its all-to-all that the pairwise algorithm
# gives (each of 8 ranks sends 6 of its 8 blocks to other nodes), intervals, conflicts (8 ranks
# send to other nodes through 4 NICs at once: outgoing conflicts), collective wait states,
# predictions per collective call, and a remap.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-cluster.sh"
[ -x "$ex/fft" ] || skip "$ex/fft is not built"

"$cluster" up --nodes 4 --rate 200mbit >/dev/null || fail "up"
printf 'node0\nnode0\nnode1\nnode1\nnode2\nnode2\nnode3\nnode3\n' >"$work/hosts"
# -n 1024: 128 x 128 doubles = 131072 bytes to each peer (pairwise), 2 repetitions.
timeout 300 "$flowcut" run -o "$work/t" -- "$flowcut" cluster mpiexec -f "$work/hosts" -n 8 \
    "$ex/fft" -n 1024 -r 2 >"$work/out" 2>&1 || { cat "$work/out"; fail "traced run"; }
grep -q "alltoall ok alltoallv ok" "$work/out" || { cat "$work/out"; fail "fft did not verify"; }
# The platform the cluster was brought up with (200 Mbit/s links): the predictions per collective
# call are under test here, not self-calibration, which an FFT of 8 busy ranks on 2 cores gives too
# few network flows to fit.
line_profile "$work/link.prof" 1e-04 4e-08 1e-06 2e-10 2.5e7
"$flowcut" analyze --platform "$work/link.prof" --format json -o "$work/r.json" "$work/t" 2>"$work/err" ||
    { cat "$work/err"; fail "analyze"; }
"$flowcut" analyze --platform "$work/link.prof" "$work/t" >"$work/r.txt" 2>&1 || fail "analyze (text)"
"$PYTHON3" - "$work/r.json" <<'PY' || fail "the FFT's report"
import json, sys
j = json.load(open(sys.argv[1]))
a2a = [f for f in j["flows"] if f["collective"] == "MPI_Alltoall"]
assert sum(f["bytes"] for f in a2a) == 2 * 8 * 6 * 131072, sum(f["bytes"] for f in a2a)
assert all(f["collective"] in ("MPI_Alltoall", "MPI_Alltoallv", "MPI_Allreduce") for f in j["flows"])
t = j["totals"]
conflicted = t["outgoing"]["flow_s"] + t["incoming"]["flow_s"] + t["mixed"]["flow_s"]
assert len(j["intervals"]) > 0 and conflicted > 0, t
assert sum(j["wait_states"]["wait_nxn_s"]) > 0
e = j["errors_collective"]
assert e is not None and e["flowcut"]["calls"] > 0, e
print("collective calls predicted: %d; mean |error| of their durations: %s" % (
    e["flowcut"]["calls"], ", ".join("%s %.1f%%" % (m, x["mean_abs_pct"]) for m, x in e.items())))
PY
grep -q "^== time in conflicts" "$work/r.txt" && grep -q "^  MPI_Alltoall " "$work/r.txt" || fail "text report"
timeout 300 "$flowcut" remap --platform "$work/link.prof" "$work/t" >"$work/remap.txt" 2>&1 || { cat "$work/remap.txt"; fail "remap"; }
grep -q "^current:" "$work/remap.txt" || { cat "$work/remap.txt"; fail "remap output"; }
echo "fft on the emulated cluster: collective flows, conflicts, predictions per call and a remap"
