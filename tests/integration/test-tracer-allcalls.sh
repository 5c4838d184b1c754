#!/bin/sh
# test-tracer-allcalls.sh: runs allcalls (every intercepted MPI function) and allcalls-f08 (every
# Fortran 2008 entry point libflowcut defines) on 2 ranks under mpiexec.mpich with libflowcut.so
# from the build tree, each in its three modes, and checks each trace with allcalls-check.py through
# `flowcut info --json` and `flowcut dump`.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"

need_command "$MPIEXEC"
need_command timeout "timeout (coreutils) not found"
[ -f "$libflowcut" ] || fail "$libflowcut not built"
[ -x "$flowcut" ] || fail "$flowcut not built"

# The Fortran 2008 program is built only when configure found mpifort.mpich.
modes="main init abort"
if [ -x "$abs_builddir/allcalls-f08" ]; then
    modes="$modes f08-main f08-init f08-abort"
else
    echo "note: allcalls-f08 not built (no mpifort.mpich): Fortran 2008 entry points not checked"
fi
for mode in $modes; do
    trace=$work/$mode
    case $mode in
    f08-*) prog=$abs_builddir/allcalls-f08 arg=${mode#f08-} ;;
    *) prog=$abs_builddir/allcalls arg=$mode ;;
    esac
    timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -n 2 env LD_PRELOAD="$libflowcut" FLOWCUT_DIR="$trace" $prog $arg \
        >"$work/$mode.out" 2>&1
    rc=$?
    [ $rc -eq 124 ] && { fail_later "allcalls $mode timed out"; continue; }
    if [ $arg = abort ]; then
        [ $rc -ne 0 ] || fail_later "allcalls abort exited 0"
    elif [ $rc -ne 0 ]; then
        fail_later "allcalls $mode exited $rc: $(cat "$work/$mode.out")"
        continue
    fi
    if ! "$flowcut" info --json "$trace" >"$work/$mode.json" 2>"$work/$mode.err"; then
        fail_later "flowcut info --json on the $mode trace: $(cat "$work/$mode.err")"
        continue
    fi
    dump=
    if [ $mode = main ]; then
        if "$flowcut" dump "$trace" >"$work/$mode.dump" 2>"$work/$mode.err"; then
            dump=$work/$mode.dump
        else
            fail_later "flowcut dump on the $mode trace: $(cat "$work/$mode.err")"
        fi
    fi
    "$PYTHON3" "$srcdir/allcalls-check.py" $mode "$work/$mode.json" $dump || fail_later "allcalls-check.py $mode"
done
finish
