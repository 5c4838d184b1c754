#!/bin/sh
# test-otf2-import.sh: an archive written with the OTF2 writer API alone (scorep-like.c: Score-P's
# layout, a microsecond timer, a clock offset on one rank) is analysed as its comment works out by
# hand: two flows, three intervals, an outgoing conflict of k = 2 at n0 during [2, 3).
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-otf2.sh"

[ -x "$abs_builddir/scorep-like" ] || fail "scorep-like not built"
"$abs_builddir/scorep-like" "$work/sl" || fail "scorep-like could not write its archive"
"$OTF2_PRINT" --silent -Werror "$work/sl/traces.otf2" >"$work/print" 2>&1 || fail "otf2-print: $(cat "$work/print")"
"$flowcut" analyze --format json "$work/sl/traces.otf2" >"$work/sl.json" 2>"$work/sl.err" ||
    fail "analyze failed: $(cat "$work/sl.err")"
"$PYTHON3" - "$work/sl.json" <<'PY' || fail "the analysis of the hand-made archive is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
def near(a, b):
    return abs(a - b) < 1e-9
assert r["ranks"] == 4, r["ranks"]
assert [(n["name"], n["ranks"]) for n in r["nodes"]] == [("n0", [0, 1]), ("n1", [2]), ("n2", [3])], r["nodes"]
assert r["messages"]["inter_node"] == 2 and r["messages"]["intra_node"] == 0, r["messages"]
assert r["messages"]["unmatched_sends"] == 0 and r["messages"]["unmatched_recvs"] == 0, r["messages"]
a, b = r["flows"]
# Origin: rank 0's first event (MPI_Init at 0 s).
for f, src, dst, nbytes, tag, start, end in ((a, 0, 2, 1000, 7, 1.0, 3.0), (b, 1, 3, 2000, 8, 2.0, 4.0)):
    assert (f["src_rank"], f["dst_rank"], f["bytes"], f["tag"]) == (src, dst, nbytes, tag), f
    assert near(f["start"], start) and near(f["end"], end), f
    assert f["src_node"] == "n0" and not f["rendezvous"], f
labels = lambda f: [(c["kind"], c["node"], c["k"], round(c["start"], 9), round(c["end"], 9)) for c in f["conflict"]]
assert labels(a) == [("none", None, 1, 1.0, 2.0), ("outgoing", "n0", 2, 2.0, 3.0)], labels(a)
assert labels(b) == [("outgoing", "n0", 2, 2.0, 3.0), ("none", None, 1, 3.0, 4.0)], labels(b)
iv = [(round(i["start"], 9), round(i["end"], 9), i["flows"]) for i in r["intervals"]]
assert iv == [(1.0, 2.0, [0]), (2.0, 3.0, [0, 1]), (3.0, 4.0, [1])], iv
assert r["intervals"][1]["conflicts"] == [{"node": "n0", "kind": "outgoing", "k": 2, "flows": [0, 1]}], r["intervals"][1]
assert near(r["totals"]["outgoing"]["flow_s"], 2.0) and near(r["totals"]["none"]["flow_s"], 2.0), r["totals"]
print("hand-made archive: 2 flows, 3 intervals, outgoing@n0 k=2 as expected")
PY
# The other commands read it too.
"$flowcut" info "$work/sl/traces.otf2" >"$work/info" 2>&1 || fail "info failed: $(cat "$work/info")"
grep -q '^nodes: *3' "$work/info" || fail "info: $(cat "$work/info")"
[ "$("$flowcut" dump "$work/sl/traces.otf2" | grep -c 'kind=MPI_')" = 14 ] || fail "dump: expected 14 calls"
[ -z "$(ls -A "$work/tmp")" ] || fail "import left $(ls "$work/tmp") behind"
exit 0
