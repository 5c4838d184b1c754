# tests/lib.sh: what every script test shares. Each test sources it first, with
#
#     . "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
#
# `make check` passes FC_TEST_LIB (tests/env.am); a test run by hand from a build tree's tests/DIR
# finds it next to its own directory, which in a VPATH build is the source tree's tests/DIR. A
# directory's own helpers (lib-tracer.sh, lib-otf2.sh, lib-cluster.sh) are sourced after it.
#
# It sets, for the test:
#   srcdir            the test's source directory (absolute)
#   abs_top_builddir  the build tree (default: two levels above the current directory, which is
#                     the build tree's tests/DIR when make check or a user runs a test)
#   abs_top_srcdir    the source tree; abs_builddir the test's build directory
#   flowcut, libflowcut, examples
#                     the flowcut command, the tracer library and the examples of the build tree,
#                     never an installed copy; FLOWCUT and FLOWCUT_EXEC_PATH (the commands) and
#                     FLOWCUT_LIB (what `flowcut run` preloads) point at them
#   MPIEXEC, PYTHON3  the launcher and python (defaults mpiexec.mpich, python3)
#   FC_TEST_TIMEOUT   seconds one launch may take before it counts as a hang (default 120)
#   work              a fresh scratch directory, removed on exit; FC_KEEP=1 keeps it for a look
#                     after a failure
# It unsets every other FLOWCUT_* variable of the caller's environment: the tests choose the
# tracer's settings themselves, and values from outside would change their results.
#
# Functions:
#   fail MSG          the test fails: prints FAIL: MSG and exits 1 at once
#   fail_later MSG    prints FAIL: MSG, counts it in $failures and goes on; finish exits with 1
#                     when any was counted, else 0
#   skip MSG          the test cannot run here: prints SKIP: MSG and exits 77
#   need_command CMD [MSG]  skips unless CMD is on the PATH
#   at_exit CMD       runs the shell command CMD on exit (the last registered first), before the
#                     scratch directory goes
# Exit statuses follow automake's test driver: 0 pass, 1 fail, 77 skip, 99 hard error.

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

failures=0
fail_later() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

finish() {
    [ "$failures" -eq 0 ] && exit 0
    echo "$failures check(s) failed" >&2
    exit 1
}

skip() {
    echo "SKIP: $*"
    exit 77
}

need_command() {
    command -v "$1" >/dev/null 2>&1 || skip "${2:-$1 not found}"
}

fc_at_exit=
at_exit() {
    fc_at_exit="$1${fc_at_exit:+; $fc_at_exit}"
}

# The EXIT trap keeps the test's exit status whatever the cleanup commands return.
fc_exit() {
    fc_status=$?
    trap - EXIT
    eval "$fc_at_exit"
    if [ -n "${work-}" ] && [ -z "${FC_KEEP-}" ]; then
        rm -rf "$work"
    fi
    exit "$fc_status"
}

unset CDPATH
: "${srcdir:=$(dirname "$0")}"
srcdir=$(cd "$srcdir" && pwd) || { echo "ERROR: no source directory $srcdir" >&2; exit 99; }
: "${abs_top_builddir:=$(cd ../.. && pwd)}"
: "${abs_top_srcdir:=$(cd "$srcdir/../.." && pwd)}"
: "${abs_builddir:=$(pwd)}"
: "${MPIEXEC:=mpiexec.mpich}"
: "${PYTHON3:=python3}"
: "${FC_TEST_TIMEOUT:=120}"

for fc_var in $(env | sed -n 's/^\(FLOWCUT_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$fc_var"
done
flowcut=$abs_top_builddir/tools/flowcut
libflowcut=$abs_top_builddir/libtrace/.libs/libflowcut.so
examples=$abs_top_builddir/examples
FLOWCUT=$flowcut
FLOWCUT_EXEC_PATH=$abs_top_builddir/analyzer:$abs_top_builddir/tools:$abs_top_srcdir/tools
FLOWCUT_LIB=$libflowcut
export srcdir abs_top_builddir abs_top_srcdir abs_builddir MPIEXEC PYTHON3 FC_TEST_TIMEOUT
export FLOWCUT FLOWCUT_EXEC_PATH FLOWCUT_LIB

trap fc_exit EXIT
trap 'exit 1' INT TERM
work=$(mktemp -d "${TMPDIR:-/tmp}/flowcut-$(basename "$0" .sh).XXXXXX") ||
    { echo "ERROR: mktemp failed" >&2; exit 99; }
[ -z "${FC_KEEP-}" ] || echo "keeping $work"

# line_profile FILE INTER_LAT INTER_PER_BYTE INTRA_LAT INTRA_PER_BYTE MAXRATE_BYTES_PER_S: writes a
# platform profile of one segment each way (latency + bytes x per-byte seconds), fair-share flow
# cuts at k = 2 and a max-rate model of that rate: a platform the test states, so that what it
# checks does not hang on self-calibration.
line_profile() {
    printf '%s\n' 'flowcut-profile 1.1' 'source test' "inter 0 inf $2 $3 0" "intra 0 inf $4 $5 0" \
        'cut outgoing 2 1 1 0' 'cut incoming 2 1 1 0' 'cut mixed-in 2 0 0' 'cut mixed-out 2 0 0' \
        "maxrate $2 $6 $6 0 0" >"$1"
}
