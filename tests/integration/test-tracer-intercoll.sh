#!/bin/sh
# test-tracer-intercoll.sh: collectives on an inter-communicator (intercoll.c: MPI_Bcast,
# MPI_Allreduce, MPI_Alltoall and MPI_Barrier between the even and odd ranks of 4), traced: the
# analysis does not expand them (it has no model of MPICH's inter-communicator algorithms) and says
# so in its warnings, one line per function with the records of all 4 ranks, while the collectives
# on intra-communicators of the same run (the split's and MPI_COMM_WORLD's) still become flows.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
need_command "$MPIEXEC"
prog=$abs_builddir/intercoll
[ -x "$prog" ] || fail "$prog not built"
timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$work/t" \
    -n 2 -env FLOWCUT_NODE n0 "$prog" : -n 2 -env FLOWCUT_NODE n1 "$prog" >"$work/out" 2>&1 ||
    fail "intercoll traced: $(cat "$work/out")"
grep -q "^intercoll ok$" "$work/out" || fail "intercoll did not verify: $(cat "$work/out")"
"$flowcut" analyze --format json --model none -o "$work/r.json" "$work/t" 2>"$work/err" || fail "analyze: $(cat "$work/err")"
"$PYTHON3" - "$work/r.json" <<'PY' || fail "the inter-communicator collectives' warnings"
import json, sys
j = json.load(open(sys.argv[1]))
inter = sorted(w for w in j["warnings"] if "on an inter-communicator" in w)
want = ["MPI_Allreduce", "MPI_Alltoall", "MPI_Barrier", "MPI_Bcast"]
assert [w.split()[0] for w in inter] == want, inter
assert all("(4 records on its members)" in w for w in inter), inter
kinds = {f["collective"] for f in j["flows"]}
assert "MPI_Bcast" not in kinds and "MPI_Alltoall" not in kinds, kinds
assert "MPI_Reduce" in {c["collective"] for c in j["collectives"]["calls"]}
PY
echo "inter-communicator collectives: named in the warnings, not expanded"
