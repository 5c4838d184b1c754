#!/bin/sh
# test-otf2-waits.sh: wait states as Scalasca defines them, against flowcut's, on the hand-built
# trace waits.spec, whose cases are the ones where the two definitions can part. Its OTF2 export is
# read with OTF2's Python bindings by scalasca-waits.py, a second implementation of Scalasca's Late
# Sender and Late Receiver patterns: its figures must be the ones computed by hand in waits.spec.
# Then flowcut's report must equal that implementation's figures, and the hand-computed ones.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-otf2.sh"
need_python_otf2
gen_trace=$abs_builddir/gen-trace
[ -x "$gen_trace" ] || fail "$gen_trace is not built"

mkdir "$work/t" || fail "mkdir"
"$gen_trace" "$work/t" <"$srcdir/waits.spec" || fail "gen-trace waits.spec"
"$flowcut" export --otf2 "$work/t" "$work/t.otf2" >"$work/export.out" 2>&1 || fail "export: $(cat "$work/export.out")"
"$flowcut" analyze --format json --model none "$work/t" >"$work/t.json" 2>"$work/t.err" ||
    fail "analyze: $(cat "$work/t.err")"

# rank, Late Sender, Late Receiver (seconds): by Scalasca's definitions, from waits.spec.
cat >"$work/scalasca.expected" <<'END'
0 0.000000000 0.000000000
1 0.000000000 0.000000000
2 0.000000000 0.000050000
3 0.000000000 0.000000000
4 0.000040000 0.000000000
5 0.000000000 0.000000000
6 0.000010000 0.000000000
7 0.000000000 0.000000000
8 0.000000000 0.000000000
9 0.000000000 0.000000000
END
"$PYTHON3_OTF2" "$srcdir/scalasca-waits.py" --per-rank "$work/t.otf2/traces.otf2" "$work/t.json" >"$work/scalasca.out" ||
    fail "scalasca-waits.py --per-rank: $(cat "$work/scalasca.out")"
diff "$work/scalasca.expected" "$work/scalasca.out" >"$work/scalasca.diff" ||
    fail_later "Scalasca's figures are not the hand-computed ones: $(cat "$work/scalasca.diff")"

"$PYTHON3_OTF2" "$srcdir/scalasca-waits.py" "$work/t.otf2/traces.otf2" "$work/t.json" >"$work/flowcut.out" ||
    fail_later "flowcut's wait states are not Scalasca's: $(cat "$work/flowcut.out")"

# flowcut's report, by hand, Scalasca's figures: rank 2 LR 50 us, rank 4 LS 40 us, rank 6 LS 10 us,
# nothing on rank 8, whose send ended before its receive was posted.
"$PYTHON3" - "$work/t.json" <<'END' || fail_later "flowcut's wait states are not the hand-computed ones"
import json, sys
w = json.load(open(sys.argv[1]))["wait_states"]
ls = [0, 0, 0, 0, 40e-6, 0, 10e-6, 0, 0, 0]
lr = [0, 0, 50e-6, 0, 0, 0, 0, 0, 0, 0]
for name, want, got in (("late_sender_s", ls, w["late_sender_s"]), ("late_receiver_s", lr, w["late_receiver_s"])):
    if len(got) != len(want):
        print("%s: %d ranks, expected %d" % (name, len(got), len(want)))
        sys.exit(1)
    for r, (a, b) in enumerate(zip(want, got)):
        if abs(a - b) > 1e-9:
            print("rank %d %s: %.9f, expected %.9f" % (r, name, b, a))
            sys.exit(1)
END
# The send that ended before its receive was posted is a clock violation, its worst case named:
# 30 us on the message 8 -> 9 (waits.spec), the only one of the trace.
"$PYTHON3" - "$work/t.json" <<'END' || fail_later "the send that ended before its receive was posted is not counted as a violation"
import json, sys
j = json.load(open(sys.argv[1]))
c = j["clock"]
assert c["violations"] == 0 and c["send_violations"] == 1 and abs(c["send_worst_s"] - 30e-6) < 1e-9, c
assert any("completed before the receive was posted" in w and "by 0.000030000 s on the message 8 -> 9" in w
           for w in j["warnings"]), j["warnings"]
END
echo "$(cat "$work/flowcut.out")"
finish
