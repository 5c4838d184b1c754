#!/bin/sh
# test-tracer-ring.sh: the one 8-rank test: a token ring, a Sendrecv shift and an Allreduce on 8
# ranks split over two emulated nodes by FLOWCUT_NODE (ranks 0-3 on ring-a, 4-7 on ring-b); every
# event with its world-rank peer, and info lists the two nodes with their ranks.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example ring
set -- 3 16
run_untraced "$work/plain.out" 8 "$prog" "$@"
[ "$(cat "$work/plain.out.rc")" = 0 ] || fail "ring failed untraced: $(cat "$work/plain.out.err")"
# Two MPMD segments so that each half of the ranks gets its own node name.
timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$work/trace" \
    -n 4 -env FLOWCUT_NODE ring-a "$prog" "$@" : -n 4 -env FLOWCUT_NODE ring-b "$prog" "$@" \
    >"$work/traced.out" 2>"$work/traced.out.err"
echo $? >"$work/traced.out.rc"
same_output "$work/plain.out" "$work/traced.out"
read_trace "$work/trace"
"$PYTHON3" "$srcdir/check_trace.py" ring "$work/trace.dump" "$work/trace.json" 8 "$@" ||
    fail "ring: the trace does not match what the program did"
"$PYTHON3" - "$work/trace.json" <<'PY' || fail "info lists the wrong nodes"
import json, sys
info = json.load(open(sys.argv[1]))
nodes = sorted((n["name"], sorted(n["ranks"])) for n in info["nodes"])
want = [("ring-a", [0, 1, 2, 3]), ("ring-b", [4, 5, 6, 7])]
if nodes != want:
    print("nodes %s, expected %s" % (nodes, want))
    sys.exit(1)
PY
exit 0
