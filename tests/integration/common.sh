# common.sh: helpers sourced by the integration tests: where the build tree is, how to run an
# example untraced and traced with the tracer from the build tree, and how to read the trace back.
#
# The tests run from `make check` (which exports the variables below through AM_TESTS_ENVIRONMENT)
# or by hand from tests/integration of a build tree, in which case the defaults below apply.

: "${srcdir:=$(cd "$(dirname "$0")" && pwd)}"
: "${abs_top_builddir:=$(cd ../.. && pwd)}"
: "${abs_top_srcdir:=$(cd "$srcdir/../.." && pwd)}"
: "${MPIEXEC:=mpiexec.mpich}"
: "${PYTHON3:=python3}"
# Seconds any one launch may take before it counts as a hang.
: "${FC_TEST_TIMEOUT:=120}"

examples=$abs_top_builddir/examples
lib=$abs_top_builddir/libtrace/.libs/libflowcut.so
flowcut=$abs_top_builddir/tools/flowcut
export FLOWCUT_EXEC_PATH="$abs_top_builddir/analyzer:$abs_top_builddir/tools:$abs_top_srcdir/tools"
export FLOWCUT_LIB="$lib"
# The tests choose these themselves; values from the caller's environment would change the results.
unset FLOWCUT_DIR FLOWCUT_CALLSITE_DEPTH FLOWCUT_BUFFER FLOWCUT_NODE FLOWCUT_CLOCK

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

skip() {
    echo "SKIP: $*"
    exit 77
}

command -v "$MPIEXEC" >/dev/null 2>&1 || skip "$MPIEXEC not found"
command -v "$PYTHON3" >/dev/null 2>&1 || skip "$PYTHON3 not found"
command -v timeout >/dev/null 2>&1 || skip "timeout (coreutils) not found"
# The library and the commands are part of this tree: their absence is a failure, not a skip.
[ -f "$lib" ] || fail "tracer not built: $lib is missing"
[ -x "$flowcut" ] || fail "flowcut command not built: $flowcut is missing"

work=$(mktemp -d "${TMPDIR:-/tmp}/flowcut-test.XXXXXX") || fail "mktemp failed"
# FC_KEEP=1 keeps the traces and outputs for a look after a failure.
if [ -n "${FC_KEEP-}" ]; then
    echo "keeping $work"
else
    trap 'rm -rf "$work"' EXIT
fi

# need_example NAME: sets prog to the example's path; skips when it was not built because its
# compiler is missing.
need_example() {
    prog=$examples/$1
    [ -x "$prog" ] && return 0
    case $1 in
    f08 | fmpi) [ -n "${MPIFORT-}" ] || skip "examples/$1 not built (no mpifort.mpich)" ;;
    cxx) [ -n "${MPICXX-}" ] || skip "examples/$1 not built (no mpicxx.mpich)" ;;
    esac
    fail "examples/$1 is missing"
}

# run_untraced OUT N PROG ARGS...: runs the program under mpiexec; stdout to OUT, stderr to
# OUT.err, exit status to OUT.rc.
run_untraced() {
    out=$1 n=$2
    shift 2
    timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -n "$n" "$@" >"$out" 2>"$out.err"
    echo $? >"$out.rc"
}

# run_traced OUT DIR N PROG ARGS...: the same, with the tracer writing into DIR. Extra tracer
# settings come from FC_GENV, e.g. "-genv FLOWCUT_CALLSITE_DEPTH 0" (split at blanks).
run_traced() {
    out=$1 dir=$2 n=$3
    shift 3
    # shellcheck disable=SC2086
    set -- -genv LD_PRELOAD "$lib" -genv FLOWCUT_DIR "$dir" ${FC_GENV-} -n "$n" "$@"
    timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" "$@" >"$out" 2>"$out.err"
    echo $? >"$out.rc"
}

# same_output A B: the application's output and exit status must not change under the tracer.
same_output() {
    [ "$(cat "$1.rc")" = 124 ] && fail "untraced run timed out"
    [ "$(cat "$2.rc")" = 124 ] && fail "traced run timed out"
    if ! cmp -s "$1" "$2"; then
        echo "untraced output:" >&2
        cat "$1" >&2
        echo "traced output:" >&2
        cat "$2" >&2
        fail "output differs under the tracer"
    fi
    [ "$(cat "$1.rc")" = "$(cat "$2.rc")" ] ||
        fail "exit status $(cat "$2.rc") under the tracer, $(cat "$1.rc") without (stderr: $(head -c 2000 "$2.err"))"
}

# read_trace DIR: writes DIR.dump and DIR.json with `flowcut dump` and `flowcut info --json`.
read_trace() {
    ls "$1"/rank-*.fct >/dev/null 2>&1 || fail "no rank-*.fct files in $1"
    "$flowcut" dump "$1" >"$1.dump" 2>"$1.dump.err" || fail "flowcut dump $1 failed: $(head -c 2000 "$1.dump.err")"
    "$flowcut" info --json "$1" >"$1.json" 2>"$1.json.err" || fail "flowcut info --json $1 failed: $(head -c 2000 "$1.json.err")"
}

# check_example NAME N ARGS...: runs the example untraced and traced, compares, and checks the
# trace against the example's model in check_trace.py.
check_example() {
    name=$1 n=$2
    shift 2
    need_example "$name"
    run_untraced "$work/plain.out" "$n" "$prog" "$@"
    [ "$(cat "$work/plain.out.rc")" = 0 ] || fail "$name failed untraced: $(cat "$work/plain.out.err")"
    run_traced "$work/traced.out" "$work/trace" "$n" "$prog" "$@"
    same_output "$work/plain.out" "$work/traced.out"
    read_trace "$work/trace"
    if ! "$PYTHON3" "$srcdir/check_trace.py" "$name" "$work/trace.dump" "$work/trace.json" "$n" "$@"; then
        echo "---- flowcut info --json:" >&2
        cat "$work/trace.json" >&2
        echo "---- flowcut dump (first 60 lines):" >&2
        head -n 60 "$work/trace.dump" >&2
        fail "$name: the trace does not match what the program did"
    fi
}
