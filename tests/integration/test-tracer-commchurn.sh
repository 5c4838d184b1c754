#!/bin/sh
# test-tracer-commchurn.sh: examples/commchurn on 2 ranks creates and frees 70,000 communicators
# each, more than 65,536, a few alive at once. Traced, it prints what the program computes (the
# expected line is worked out here from the iteration count) and nothing else, the trace reads
# every event with its own communicator and every Sendrecv's peer mapped through it to the right
# world rank (commchurn-check.py), and the analysis pairs every message, none left unmatched.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example commchurn
iters=70000
# Iteration i sums i + rank over 2 ranks: 2i + 1, and the sum over i < N of 2i + 1 is N^2.
echo "communicators $iters sum $((iters * iters))" >"$work/expected"
FC_TEST_TIMEOUT=600 run_traced "$work/traced.out" "$work/trace" 2 "$prog" $iters
[ "$(cat "$work/traced.out.rc")" = 0 ] || fail "commchurn failed traced: $(head -c 2000 "$work/traced.out.err")"
cmp -s "$work/expected" "$work/traced.out" || fail "traced output '$(cat "$work/traced.out")', not '$(cat "$work/expected")'"
[ -s "$work/traced.out.err" ] && fail "the tracer was not silent: $(head -c 2000 "$work/traced.out.err")"

"$flowcut" dump --no-sites "$work/trace" >"$work/trace.dump" 2>"$work/dump.err" ||
    fail "flowcut dump failed: $(head -c 2000 "$work/dump.err")"
"$PYTHON3" "$srcdir/commchurn-check.py" "$work/trace.dump" $iters 2 || fail "the trace does not hold every communicator"
"$flowcut" analyze "$work/trace" >"$work/report" 2>"$work/analyze.err" ||
    fail "flowcut analyze failed: $(head -c 2000 "$work/analyze.err")"
grep -q "messages: .* 0 unmatched sends, 0 unmatched receives" "$work/report" ||
    fail "not every message paired: $(grep messages: "$work/report")"
grep -q "^partial: *no" "$work/report" || fail "the trace is partial: $(grep partial: "$work/report")"
exit 0
