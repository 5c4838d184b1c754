#!/bin/sh
# test-tracer-renumber.sh: with a rank order (FLOWCUT_RANK_ORDER, `flowcut run --rank-order`), the
# process the launcher starts in slot s runs as rank order[s] of MPI_COMM_WORLD, and the program
# sees that world in its rank, groups, statuses, collectives, comparisons, name, attributes, error
# handlers, windows and derived communicators (renumber-check.c checks each against Hydra's
# PMI_RANK), and so do Fortran programs (`use mpi_f08` and `mpif.h` ring examples: their traces,
# whose ranks are the renumbered ones, must show each rank sending to its own rank + 1, as
# check_trace.py's model says, which holds only if the program saw its renumbered rank, and
# renumber-f08 checks the f08 calls whose bindings convert their arguments); with
# tracing on, the trace names each rank as the program saw it and records the slot
# it ran in; with FLOWCUT_TRACE=0 the ranks are renumbered and nothing is written; a bad order stops
# the run before the program does anything, with one line.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

prog=$abs_builddir/renumber-check
[ -x "$prog" ] || fail "renumber-check not built"
n=6
order=3,5,0,1,4,2

# Without renumbering the program must notice that its ranks are not the order's: the check can fail.
run_untraced "$work/plain.out" $n "$prog" $order
[ "$(cat "$work/plain.out.rc")" != 0 ] || fail "renumber-check passes without renumbering: it checks nothing"
grep -q "MPI_Comm_rank gives" "$work/plain.out" || fail "renumber-check failed untraced for another reason: $(head -5 "$work/plain.out")"

# Traced, through flowcut run and a machinefile-style order file.
printf '# rank-order: %s\n# rank-hosts: (not used here)\nlocalhost:%d\n' "$order" $n >"$work/order.hosts"
timeout "$FC_TEST_TIMEOUT" "$flowcut" run -o "$work/trace" --rank-order "$work/order.hosts" -- \
    "$MPIEXEC" -n $n "$prog" $order >"$work/traced.out" 2>"$work/traced.out.err"
rc=$?
[ $rc = 0 ] || fail "renumbered run failed ($rc): $(head -20 "$work/traced.out") $(head -c 2000 "$work/traced.out.err")"
grep -qx "ok: $n ranks renumbered" "$work/traced.out" || fail "renumber-check did not pass: $(cat "$work/traced.out")"
read_trace "$work/trace"
"$PYTHON3" - "$work/trace.json" "$order" <<'PY' || fail "the trace does not record the program's ranks and their slots"
import json, sys
info = json.load(open(sys.argv[1]))
order = [int(x) for x in sys.argv[2].split(",")]
got = sorted((r["rank"], r["slot"]) for r in info["rank_info"])
want = sorted((order[s], s) for s in range(len(order)))
if got != want:
    print("(rank, slot) in the trace %s, expected %s" % (got, want))
    sys.exit(1)
PY

# Fortran: the examples' ring, renumbered, must be the ring of the renumbered ranks.
echo "2,0,3,1" >"$work/f.order"
for name in f08 fmpi; do
    [ -x "$examples/$name" ] || { [ -n "${MPIFORT-}" ] && fail "examples/$name is missing"; continue; }
    case $name in f08) arg=3 ;; fmpi) arg=2 ;; esac
    timeout "$FC_TEST_TIMEOUT" "$flowcut" run -o "$work/$name" --rank-order "$work/f.order" -- \
        "$MPIEXEC" -n 4 "$examples/$name" $arg >"$work/$name.out" 2>"$work/$name.err" ||
        fail "$name renumbered failed: $(head -c 2000 "$work/$name.err")"
    read_trace "$work/$name"
    "$PYTHON3" "$srcdir/check_trace.py" $name "$work/$name.dump" "$work/$name.json" 4 $arg ||
        fail "$name renumbered: the trace is not the ring of the renumbered ranks"
done

# Fortran 2008 calls whose MPICH bindings convert strings, handles or LOGICAL arrays before calling
# PMPI_: renumber-f08 checks each against its expected rank, which it must miss when not renumbered.
f08check=$abs_builddir/renumber-f08
if [ -x "$f08check" ]; then
    timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -n 4 "$f08check" 2,0,3,1 "$work/f08.file" >"$work/f08plain.out" 2>&1 &&
        fail "renumber-f08 passes without renumbering: it checks nothing"
    grep -q "MPI_Comm_rank gives" "$work/f08plain.out" ||
        fail "renumber-f08 failed unrenumbered for another reason: $(head -5 "$work/f08plain.out")"
    FLOWCUT_TRACE=0 timeout "$FC_TEST_TIMEOUT" "$flowcut" run --rank-order "$work/f.order" -- \
        "$MPIEXEC" -n 4 "$f08check" 2,0,3,1 "$work/f08.file" >"$work/f08.out" 2>&1 ||
        fail "renumber-f08 renumbered: $(head -c 2000 "$work/f08.out")"
    grep -qx "ok: 4 ranks renumbered (f08)" "$work/f08.out" || fail "renumber-f08: $(cat "$work/f08.out")"
elif [ -n "${MPIFORT-}" ]; then
    fail "renumber-f08 is missing"
fi

# FLOWCUT_TRACE=0: only the renumbering.
rm -rf "$work/off"
mkdir "$work/offcwd" || fail "mkdir"
(cd "$work/offcwd" && FLOWCUT_TRACE=0 timeout "$FC_TEST_TIMEOUT" "$flowcut" run -o "$work/off" \
    --rank-order "$work/order.hosts" -- "$MPIEXEC" -n $n "$prog" $order >"$work/off.out" 2>"$work/off.out.err")
[ $? = 0 ] || fail "FLOWCUT_TRACE=0 run failed: $(head -20 "$work/off.out")"
grep -qx "ok: $n ranks renumbered" "$work/off.out" || fail "FLOWCUT_TRACE=0 did not renumber: $(cat "$work/off.out")"
[ -e "$work/off" ] && fail "FLOWCUT_TRACE=0: flowcut run made a trace directory"
[ -z "$(ls "$work/offcwd")" ] || fail "FLOWCUT_TRACE=0: the tracer wrote $(ls "$work/offcwd")"

# Bad orders, refused by flowcut run before anything starts: one line, exit 1, no rank file.
bad_order() { # WHAT TEXT EXPECTED-WORDS
    printf '%s\n' "$2" >"$work/bad.order"
    rm -rf "$work/bad"
    "$flowcut" run -o "$work/bad" --rank-order "$work/bad.order" -- "$MPIEXEC" -n $n "$prog" $order \
        >"$work/bad.out" 2>"$work/bad.err"
    rc=$?
    [ $rc = 1 ] || fail "$1: exit status $rc, expected 1"
    [ "$(wc -l <"$work/bad.err")" = 1 ] || fail "$1: expected one line on stderr, got: $(cat "$work/bad.err")"
    grep -q "$3" "$work/bad.err" || fail "$1: the message does not say '$3': $(cat "$work/bad.err")"
    [ -s "$work/bad.out" ] && fail "$1: the program ran"
    return 0
}
bad_order "a repeated rank" "3,5,0,1,3,2" "not a permutation of 0..5 (3 appears twice)"
bad_order "a rank out of range" "3,5,0,1,6,2" "not a permutation of 0..5 (6 is out of range)"
bad_order "too few ranks" "# rank-order: 1,0,2,3" "for 4 ranks, the launcher starts 6"
bad_order "no order" "node0:2" "no rank order in it"
bad_order "not numbers" "# rank-order: 1,0,x,3,4,5" '"x" is not a rank number'
bad_order "slots and order disagree" "$(printf '# rank-order: 1,0,2,3,4,5\nnode0:2\nnode1:2')" \
    "its machinefile lines hold 4 slots, its rank order 6 ranks"

# The same checks inside MPI_Init, for a launcher whose rank count flowcut run cannot see: rank 0
# prints one line and the run stops before the program prints anything.
FC_GENV="-genv FLOWCUT_RANK_ORDER 1,0,2,3 -genv FLOWCUT_TRACE 0" run_traced "$work/init.out" "$work/init" $n "$prog" $order
[ "$(cat "$work/init.out.rc")" != 0 ] || fail "a 4-rank order on 6 ranks ran"
[ -s "$work/init.out" ] && fail "the program ran under a 4-rank order on 6 ranks: $(head -3 "$work/init.out")"
[ "$(grep -c '^flowcut:' "$work/init.out.err")" = 1 ] || fail "expected one flowcut line, got: $(cat "$work/init.out.err")"
grep -q "^flowcut: FLOWCUT_RANK_ORDER: it orders 4 ranks, the run has 6; the program is not run" "$work/init.out.err" ||
    fail "the refusal does not say why: $(cat "$work/init.out.err")"
echo "ok: ranks renumbered as ordered, traced and untraced; bad orders refused"
exit 0
