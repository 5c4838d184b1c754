#!/bin/sh
# test-tracer-allcalls.sh: runs allcalls (every intercepted MPI function) and allcalls-f08 (every
# Fortran 2008 entry point libflowcut defines) on 2 ranks under mpiexec.mpich with libflowcut.so
# from the build tree, each in its three modes, and checks each trace with allcalls-check.py through
# `flowcut info --json` and `flowcut dump`. Environment: srcdir (set by the test harness), MPIEXEC
# (default mpiexec.mpich), PYTHON3.
set -u
srcdir=${srcdir:-.}
abs_top_builddir=$(cd ../.. && pwd)
abs_top_srcdir=$(cd "$srcdir/../.." && pwd)
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
PYTHON3=${PYTHON3:-python3}
lib=$abs_top_builddir/libtrace/.libs/libflowcut.so
flowcut=$abs_top_builddir/tools/flowcut
FLOWCUT_EXEC_PATH=$abs_top_builddir/analyzer:$abs_top_srcdir/tools
export FLOWCUT_EXEC_PATH

command -v "$MPIEXEC" >/dev/null 2>&1 || { echo "SKIP: $MPIEXEC not found"; exit 77; }
[ -f "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }
[ -x "$flowcut" ] || { echo "FAIL: $flowcut not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/allcalls.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

# The Fortran 2008 program is built only when configure found mpifort.mpich.
modes="main init abort"
if [ -x ./allcalls-f08 ]; then
    modes="$modes f08-main f08-init f08-abort"
else
    echo "note: allcalls-f08 not built (no mpifort.mpich): Fortran 2008 entry points not checked"
fi
status=0
for mode in $modes; do
    trace=$tmp/$mode
    case $mode in
    f08-*) prog=./allcalls-f08 arg=${mode#f08-} ;;
    *) prog=./allcalls arg=$mode ;;
    esac
    "$MPIEXEC" -n 2 env LD_PRELOAD="$lib" FLOWCUT_DIR="$trace" $prog $arg >"$tmp/$mode.out" 2>&1
    rc=$?
    if [ $arg = abort ]; then
        [ $rc -ne 0 ] || { echo "FAIL: allcalls abort exited 0"; status=1; }
    elif [ $rc -ne 0 ]; then
        echo "FAIL: allcalls $mode exited $rc:"; cat "$tmp/$mode.out"; status=1; continue
    fi
    if ! "$flowcut" info --json "$trace" >"$tmp/$mode.json" 2>"$tmp/$mode.err"; then
        echo "FAIL: flowcut info --json on the $mode trace:"; cat "$tmp/$mode.err"; status=1; continue
    fi
    dump=
    if [ $mode = main ]; then
        if "$flowcut" dump "$trace" >"$tmp/$mode.dump" 2>"$tmp/$mode.err"; then
            dump=$tmp/$mode.dump
        else
            echo "FAIL: flowcut dump on the $mode trace:"; cat "$tmp/$mode.err"; status=1
        fi
    fi
    "$PYTHON3" "$srcdir/allcalls-check.py" $mode "$tmp/$mode.json" $dump || status=1
done
exit $status
