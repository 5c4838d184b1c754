#!/bin/sh
# test-tracer-fmpi.sh: a Fortran program on the `use mpi` bindings: Bcast, token ring of Send/Recv,
# Reduce. Output and exit status are the same traced and untraced; call sites behind the bindings
# are unwound once per chain.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

check_example fmpi 3 2

# Every call goes through MPI's Fortran bindings, so its call site lies behind them and is found by
# unwinding: each distinct chain is unwound once, at depth 1 as at depth 4, however many rounds.
for d in 1 4; do
    FC_GENV="-genv FLOWCUT_CALLSITE_DEPTH $d -genv FLOWCUT_STATS 1" run_traced "$work/d$d.out" "$work/d$d" 3 "$prog" 200
    [ "$(cat "$work/d$d.out.rc")" = 0 ] || fail "depth $d: exit $(cat "$work/d$d.out.rc")"
    for r in 0 1 2; do
        line=$(grep "^flowcut: rank $r: call sites: " "$work/d$d.out.err") || fail "depth $d: rank $r printed no call-site counts"
        set -- $(echo "$line" | sed 's/.*call sites: \([0-9]*\) chains, \([0-9]*\) unwinds, \([0-9]*\) repeated.*/\1 \2 \3/')
        [ "$#" = 3 ] || fail "cannot read: $line"
        [ "$3" = 0 ] && [ "$2" -le "$1" ] || fail "depth $d, rank $r: chains unwound more than once ($line)"
    done
done
exit 0
