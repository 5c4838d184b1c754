# lib-tracer.sh: helpers of the integration tests, sourced after tests/lib.sh: how to run an
# example untraced and traced with the tracer of the build tree, and how to read the trace back.
# MPIFORT and MPICXX (from configure, through tests/env.am) say which examples could be built.

need_command "$MPIEXEC"
need_command "$PYTHON3"
need_command timeout "timeout (coreutils) not found"
# The library and the commands are part of this tree: their absence is a failure, not a skip.
[ -f "$libflowcut" ] || fail "tracer not built: $libflowcut is missing"
[ -x "$flowcut" ] || fail "flowcut command not built: $flowcut is missing"

# need_example NAME: sets prog to the example's path; skips when it was not built because its
# compiler is missing.
need_example() {
    prog=$examples/$1
    [ -x "$prog" ] && return 0
    case $1 in
    f08 | fmpi | fwaitall) [ -n "${MPIFORT-}" ] || skip "examples/$1 not built (no mpifort.mpich)" ;;
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
    set -- -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$dir" ${FC_GENV-} -n "$n" "$@"
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
