#!/bin/sh
# test-otf2-export.sh: traces examples on two named nodes, exports each trace with `flowcut export
# --otf2`, validates the archive with `otf2-print --silent -Werror` and the order of its records
# with check-order.py, then checks that `flowcut analyze` of the archive (read back through OTF2's
# reader) finds the same flows, intervals and labels as the analysis of the native trace. With
# OTF2's Python bindings (python3-otf2), a reader independent of flowcut's, check-archive.py checks
# the clock properties and calling contexts of every export, and compare-sites.py that each call's
# calling context names the call site `flowcut dump` prints for it, in the native trace and after
# the round trip, and scalasca-waits.py that each rank's Late Sender and Late Receiver time,
# computed from the archive alone, are the ones flowcut reports (and what Scalasca's definitions
# give).
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-otf2.sh"

need_command "$MPIEXEC"
[ -f "$libflowcut" ] || fail "tracer not built: $libflowcut is missing"
if [ -n "$PYTHON3_OTF2" ]; then
    pyotf2=1
else
    pyotf2=0
    echo "note: OTF2's Python bindings are missing (Debian package python3-otf2): archives not read back with them"
fi

suffix=
one() {
    name=$1 n=$2
    shift 2
    t=$work/$name$suffix
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
    sites=
    if [ "$pyotf2" = 1 ]; then
        "$PYTHON3_OTF2" "$srcdir/check-archive.py" "$t.otf2/traces.otf2" --sync --sites "$t.sites" >"$t.check" ||
            fail "$name: $(cat "$t.check")"
        "$flowcut" dump "$t" >"$t.dump" 2>"$t.dump.err" || fail "$name: dump failed: $(cat "$t.dump.err")"
        "$PYTHON3" "$srcdir/compare-sites.py" "$t.dump" "$t.sites" >"$t.cmpsites" ||
            fail "$name: calling contexts are not the call sites: $(cat "$t.cmpsites")"
        "$flowcut" dump "$t.otf2/traces.otf2" >"$t.dump2" 2>"$t.dump.err" ||
            fail "$name: dump of the archive failed: $(cat "$t.dump.err")"
        "$PYTHON3" "$srcdir/compare-sites.py" --posts "$t.dump2" "$t.sites" >"$t.cmpsites2" ||
            fail "$name: imported call sites differ: $(cat "$t.cmpsites2")"
        # The wait states, which must be Scalasca's (test-otf2-waits.sh shows the cases where
        # definitions part).
        "$PYTHON3_OTF2" "$srcdir/scalasca-waits.py" "$t.otf2/traces.otf2" "$t.native.json" >"$t.waits" ||
            fail "$name: wait states differ from those computed from the archive: $(cat "$t.waits")"
        sites=", $(cat "$t.check"), $(cat "$t.cmpsites"), $(cat "$t.waits")"
    fi
    echo "$name$suffix: otf2-print ok, $(cat "$t.order"), $(cat "$t.cmp")$sites"
}

one ring 4 3 1000
one pingpong 2 20 0 8 1000
one halo 4 3 6 3
one wildcard 4 3
one persistent 3 4 5
one threads 2 10
one nbrate 2 5 4 100
# Requests of every kind completed together, persistent ones started from other lines than their init.
one reqtimes 2 8 20
# The same with call chains four frames deep (MPI call < its function < main < libc), so that the
# calling contexts nest and their unwind distances name frames above the innermost one.
FLOWCUT_CALLSITE_DEPTH=4 suffix=-deep
export FLOWCUT_CALLSITE_DEPTH
one reqtimes 2 8 20
unset FLOWCUT_CALLSITE_DEPTH
suffix=
if [ "$pyotf2" = 1 ] && ! grep -q 'main@reqtimes.c:[0-9]*<' "$work/reqtimes-deep.dump"; then
    fail "reqtimes-deep: no call chain in the dump goes deeper than one frame"
fi
# The emulated-cluster examples run here on two named nodes: their traces have the collectives
# (bcast) and the many concurrent flows (random30 -N) that the cluster runs produce.
one bcast 8 -s 200000 -r 2
# The same tree in messages above the eager threshold: its sends wait for their receives (Late
# Receiver by every definition).
suffix=-rndv
one bcast 8 -s 400000 -r 2
suffix=
one random30 4 -N 2 -c 8 -x 0.05 -r 1
# MPI-4 persistent collectives (NonBlockingCollectiveRequest at each Start, flowcut::request at
# the init, flowcut::counts for the uneven all-to-all v) beside a point-to-point halo.
one psolver 8 -b 512 -c 64 -H 256 -i 6
# A run with collective settings (the tracer's COLL_ENV): the archive carries them, so that the
# import expands the reductions with the algorithm MPICH chose, not its default. MPIR_CVAR_NOLOCAL
# makes every rank a node of its own to MPICH, which then runs MPIR's reduction on all 8 (on one
# host it would otherwise reduce through shared memory, which no MPIR algorithm variable chooses).
MPIR_CVAR_REDUCE_INTRA_ALGORITHM=reduce_scatter_gather MPIR_CVAR_NOLOCAL=1 suffix=-cvar
export MPIR_CVAR_REDUCE_INTRA_ALGORITHM MPIR_CVAR_NOLOCAL
one bcast 8 -s 200000 -r 2
unset MPIR_CVAR_REDUCE_INTRA_ALGORITHM MPIR_CVAR_NOLOCAL
suffix=
grep -q '"reduce_scatter_gather"' "$work/bcast-cvar.native.json" ||
    fail "bcast-cvar: the analysis does not use the recorded MPIR_CVAR_REDUCE_INTRA_ALGORITHM"
# The archive does not name the MPI library that ran, the native trace does: only the analysis of
# the archive says that its collectives are expanded by an assumption.
assumed='collective calls are expanded with the algorithms MPICH 4.0.2 selects, an assumption'
grep -q "$assumed" "$work/bcast.otf2.json" || fail "bcast: the archive's analysis does not name its assumption of MPICH"
grep -q "$assumed" "$work/bcast.native.json" && fail "bcast: the native trace's analysis assumes its MPI library"
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
