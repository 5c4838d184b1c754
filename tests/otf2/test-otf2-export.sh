#!/bin/sh
# test-otf2-export.sh: traces examples on two named nodes, exports each trace with `flowcut export
# --otf2`, validates the archive with `otf2-print --silent -Werror` and the order of its records
# with check-order.py, then checks that `flowcut analyze` of the archive (read back through OTF2's
# reader) finds the same flows, intervals and labels as the analysis of the native trace.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-otf2.sh"

need_command "$MPIEXEC"
[ -f "$libflowcut" ] || fail "tracer not built: $libflowcut is missing"

one() {
    name=$1 n=$2
    shift 2
    t=$work/$name
    trace_example "$t" "$n" "$name" "$@"
    "$flowcut" export --otf2 "$t" "$t.otf2" >"$t.export" 2>&1 || fail "$name: export failed: $(cat "$t.export")"
    "$OTF2_PRINT" --silent -Werror "$t.otf2/traces.otf2" >"$t.print" 2>&1 ||
        fail "$name: otf2-print rejects the export: $(head -c 2000 "$t.print")"
    "$OTF2_PRINT" "$t.otf2/traces.otf2" | "$PYTHON3" "$srcdir/check-order.py" "$n" >"$t.order" ||
        fail "$name: $(cat "$t.order")"
    "$flowcut" analyze --format json "$t" >"$t.native.json" 2>"$t.native.err" ||
        fail "$name: analyze of the native trace failed: $(cat "$t.native.err")"
    "$flowcut" analyze --format json "$t.otf2/traces.otf2" >"$t.otf2.json" 2>"$t.otf2.err" ||
        fail "$name: analyze of the OTF2 archive failed: $(cat "$t.otf2.err")"
    "$PYTHON3" "$srcdir/compare-analyze.py" "$t.native.json" "$t.otf2.json" >"$t.cmp" ||
        fail "$name: analyses differ after the OTF2 round trip: $(cat "$t.cmp")"
    echo "$name: otf2-print ok, $(cat "$t.order"), $(cat "$t.cmp")"
}

one ring 4 3 1000
one pingpong 2 20 0 8 1000
one halo 4 3 6 3
one wildcard 4 3
one persistent 3 4 5
one threads 2 10
one nbrate 2 5 4 100
# The emulated-cluster examples run here on two named nodes: their traces have the collectives
# (bcast) and the many concurrent flows (random30 -N) that the cluster runs produce.
one bcast 8 -s 200000 -r 2
one random30 4 -N 2 -c 8 -x 0.05 -r 1
# The Fortran and C++ examples, where the build has their compilers.
for ex in "f08 2 3" "fmpi 3" "cxx 2 4 5"; do
    set -- $ex
    [ -x "$examples/$1" ] && one "$@"
done

# The export never overwrites an archive.
"$flowcut" export --otf2 "$work/ring" "$work/ring.otf2" >/dev/null 2>"$work/again.err" && fail "export overwrote an archive"
[ "$(wc -l <"$work/again.err")" = 1 ] || fail "second export: expected one error line, got: $(cat "$work/again.err")"
# Importing leaves no private directory behind (the commands ran with TMPDIR=$work/tmp).
[ -z "$(ls -A "$work/tmp")" ] || fail "import left $(ls "$work/tmp") behind"
exit 0
