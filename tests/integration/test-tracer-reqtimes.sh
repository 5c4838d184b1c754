#!/bin/sh
# test-tracer-reqtimes.sh: examples/reqtimes on 2 ranks, untraced, traced and traced with
# FLOWCUT_REQUEST_TIMES=0. What the program gets back from MPI_Waitall (statuses, errors, handles,
# in every case it tries) must not change under the tracer; with the setting on, each request one
# MPI_Waitall completes carries the time its message arrived, checked by reqtimes-check.py against
# the sending times and the arrival times the program measured itself; with it off, the call's exit
# as before.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example reqtimes
# Four messages 150 ms apart: far more than an arrival takes to be seen, so that the tolerances the
# check derives from the gap hold on a busy machine.
k=4 gap=150
run_untraced "$work/plain.out" 2 "$prog" $k $gap "$work/plain.times"
[ "$(cat "$work/plain.out.rc")" = 0 ] || fail "reqtimes failed untraced: $(cat "$work/plain.out.err")"
grep -q WRONG "$work/plain.out" && fail "reqtimes untraced: $(cat "$work/plain.out")"

check() {
    mode=$1
    "$flowcut" dump --no-sites "$work/$mode" >"$work/$mode.dump" 2>"$work/$mode.dump.err" ||
        fail "flowcut dump of the $mode trace failed: $(head -c 2000 "$work/$mode.dump.err")"
    "$PYTHON3" "$srcdir/reqtimes-check.py" $mode "$work/$mode.dump" "$work/$mode.times" $k $gap >"$work/$mode.check"
    rc=$?
    cat "$work/$mode.check"
    [ $rc = 77 ] && skip "$(cat "$work/$mode.check")"
    if [ $rc != 0 ]; then
        echo "---- times:" >&2
        cat "$work/$mode.times" >&2
        echo "---- rank 0 (first 40 lines):" >&2
        grep 'rank=0 ' "$work/$mode.dump" | head -n 40 >&2
        fail "reqtimes: the $mode trace's COMPLETE times are wrong"
    fi
}

run_traced "$work/on.out" "$work/on" 2 "$prog" $k $gap "$work/on.times"
same_output "$work/plain.out" "$work/on.out"
[ -s "$work/on.out.err" ] && fail "the tracer was not silent: $(head -c 2000 "$work/on.out.err")"
check on

FC_GENV="-genv FLOWCUT_REQUEST_TIMES 0" run_traced "$work/off.out" "$work/off" 2 "$prog" $k $gap "$work/off.times"
same_output "$work/plain.out" "$work/off.out"
[ -s "$work/off.out.err" ] && fail "the tracer was not silent: $(head -c 2000 "$work/off.out.err")"
check off
exit 0
