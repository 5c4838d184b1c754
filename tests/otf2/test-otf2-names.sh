#!/bin/sh
# test-otf2-names.sh: node names with spaces in them (the trace format's names are any UTF-8 text
# without NUL) through a hand-built trace (gen-trace, whose node lines take the rest of the line),
# an OTF2 export and its import: the analysis names the nodes as written, spaces inside and at the
# end included, the archive's system tree holds them (read with OTF2's Python
# bindings), and the analysis of the archive gives the same nodes and flows. gen-trace refuses a
# node line without a name with one message naming the line.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-otf2.sh"
gen_trace=$abs_builddir/gen-trace
[ -x "$gen_trace" ] || fail "$gen_trace is not built"

A='rack 1 node a' B='rack 2  node b '
mkdir "$work/t"
"$gen_trace" "$work/t" >"$work/gen.err" 2>&1 <<EOF || fail "gen-trace: $(cat "$work/gen.err")"
ranks 4
node 0 $A
node 1 $A
node 2 $B
node 3 $B
ev 0 MPI_Send 10 20 2 0 100000 0
ev 2 MPI_Recv 5 40 0 0 100000 0
ev 1 MPI_Send 12 22 3 0 50000 0
ev 3 MPI_Recv 6 41 1 0 50000 0
EOF
"$flowcut" analyze --format json "$work/t" >"$work/native.json" 2>"$work/native.err" ||
    fail "analyze: $(cat "$work/native.err")"
"$flowcut" export --otf2 "$work/t" "$work/t.otf2" >"$work/export" 2>&1 || fail "export: $(cat "$work/export")"
"$flowcut" analyze --format json "$work/t.otf2/traces.otf2" >"$work/otf2.json" 2>"$work/otf2.err" ||
    fail "analyze of the archive: $(cat "$work/otf2.err")"
"$PYTHON3" - "$work/native.json" "$work/otf2.json" "$A" "$B" <<'PY' || fail "node names"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
A, B = sys.argv[3:5]
want = [{"name": A, "ranks": [0, 1]}, {"name": B, "ranks": [2, 3]}]
bad = False
for what, d in (("native", a), ("archive", b)):
    flows = sorted((f["src_node"], f["dst_node"], f["bytes"]) for f in d["flows"])
    if d["nodes"] != want or flows != [(A, B, 50000), (A, B, 100000)]:
        print("%s: nodes %r, flows %r; want %r, two flows from %r to %r" % (what, d["nodes"], flows, want, A, B))
        bad = True
sys.exit(1 if bad else 0)
PY
if [ -n "$PYTHON3_OTF2" ]; then
    "$PYTHON3_OTF2" - "$work/t.otf2/traces.otf2" "$A" "$B" <<'PY' || fail "the archive's system tree"
import sys
import otf2
with otf2.reader.open(sys.argv[1]) as t:
    nodes = [n.name for n in t.definitions.system_tree_nodes if n.class_name == "node"]
if nodes != sys.argv[2:4]:
    print("system tree nodes %r, want %r" % (nodes, sys.argv[2:4]))
    sys.exit(1)
PY
fi
printf 'ranks 2\nnode 1\n' | "$gen_trace" "$work/bad" >"$work/bad.out" 2>&1 && fail "gen-trace took a node line without a name"
[ "$(cat "$work/bad.out")" = "gen-trace: line 2: a node or host name is missing" ] ||
    fail "gen-trace on a node line without a name: $(cat "$work/bad.out")"
echo "names: nodes '$A' and '$B' in the analysis, the archive and its analysis"
