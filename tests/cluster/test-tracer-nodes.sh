#!/bin/bash
# test-tracer-nodes.sh: `flowcut run -- flowcut cluster mpiexec` traces an application across the
# emulated nodes, and the trace names the node of each rank as the machinefile placed it.
. "$(dirname "$0")/common.sh"
flowcut="$top_builddir/tools/flowcut"
export FLOWCUT_EXEC_PATH="$top_builddir/analyzer:$top_builddir/tools"
export FLOWCUT_LIB="$top_builddir/libtrace/.libs/libflowcut.so"
[ -x "$ex/ring" ] || skip "$ex/ring is not built"
work=$(mktemp -d /tmp/flowcut-traced.XXXXXX)
trap '"$cluster" down >/dev/null 2>&1; rm -rf "$work"' EXIT

"$cluster" up --nodes 3 --rate 100mbit >/dev/null || fail "up"
# A non-contiguous placement: ranks 0 and 3 on node2, 1 on node0, 2 on node1.
printf 'node2\nnode0\nnode1\nnode2\n' >"$work/hosts"
timeout 120 "$flowcut" run -o "$work/t" -- "$flowcut" cluster mpiexec -f "$work/hosts" -n 4 \
    "$ex/ring" 3 1000 >"$work/out" 2>&1 || { cat "$work/out"; fail "traced run"; }
"$flowcut" info --json "$work/t" >"$work/info.json" || fail "info"
python3 - "$work/info.json" <<'PY' || fail "nodes in the trace do not match the machinefile"
import json, sys
info = json.load(open(sys.argv[1]))
want = {"node2": [0, 3], "node0": [1], "node1": [2]}
got = {n["name"]: sorted(n["ranks"]) for n in info["nodes"]}
print("nodes in the trace:", got)
sys.exit(0 if got == want and info["ranks"] == 4 and not info["partial"] else 1)
PY
echo "traced run across the emulated cluster: nodes recorded as placed"
