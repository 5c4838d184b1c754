#!/bin/bash
# test-tracer-nodes.sh: `flowcut run -- flowcut cluster mpiexec` traces an application across the
# emulated nodes, and the trace names the node of each rank as the machinefile placed it.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-cluster.sh"
[ -x "$ex/ring" ] || skip "$ex/ring is not built"

"$cluster" up --nodes 3 --rate 100mbit >/dev/null || fail "up"
# A non-contiguous placement: ranks 0 and 3 on node2, 1 on node0, 2 on node1.
printf 'node2\nnode0\nnode1\nnode2\n' >"$work/hosts"
timeout "$FC_TEST_TIMEOUT" "$flowcut" run -o "$work/t" -- "$flowcut" cluster mpiexec -f "$work/hosts" -n 4 \
    "$ex/ring" 3 1000 >"$work/out" 2>&1 || { cat "$work/out"; fail "traced run"; }
"$flowcut" info --json "$work/t" >"$work/info.json" || fail "info"
"$PYTHON3" - "$work/info.json" <<'PY' || fail "nodes in the trace do not match the machinefile"
import json, sys
info = json.load(open(sys.argv[1]))
want = {"node2": [0, 3], "node0": [1], "node1": [2]}
got = {n["name"]: sorted(n["ranks"]) for n in info["nodes"]}
print("nodes in the trace:", got)
sys.exit(0 if got == want and info["ranks"] == 4 and not info["partial"] else 1)
PY
echo "traced run across the emulated cluster: nodes recorded as placed"
