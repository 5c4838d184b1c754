# common.sh: helpers sourced by the OTF2 tests: the build tree's commands, a scratch directory,
# and a launch of an example whose ranks are spread over named nodes (FLOWCUT_NODE), so that
# its trace has inter-node flows.
: "${srcdir:=$(cd "$(dirname "$0")" && pwd)}"
: "${abs_top_builddir:=$(cd ../.. && pwd)}"
: "${abs_top_srcdir:=$(cd "$srcdir/../.." && pwd)}"
: "${abs_builddir:=$(pwd)}"
: "${MPIEXEC:=mpiexec.mpich}"
: "${PYTHON3:=python3}"
: "${OTF2_PRINT:=otf2-print}"
: "${FC_TEST_TIMEOUT:=120}"

flowcut=$abs_top_builddir/tools/flowcut
lib=$abs_top_builddir/libtrace/.libs/libflowcut.so
examples=$abs_top_builddir/examples
export FLOWCUT_EXEC_PATH="$abs_top_builddir/analyzer:$abs_top_builddir/tools:$abs_top_srcdir/tools"
unset FLOWCUT_DIR FLOWCUT_CALLSITE_DEPTH FLOWCUT_BUFFER FLOWCUT_NODE FLOWCUT_CLOCK
# Under the sanitizers, OTF2's own leak on a failed open is not ours (see lsan.supp).
export LSAN_OPTIONS="suppressions=$srcdir/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

skip() {
    echo "SKIP: $*"
    exit 77
}

command -v "$PYTHON3" >/dev/null 2>&1 || skip "$PYTHON3 not found"
command -v "$OTF2_PRINT" >/dev/null 2>&1 || skip "otf2-print not found (Debian package otf2-tools)"
[ -x "$flowcut" ] || fail "flowcut command not built: $flowcut is missing"

work=$(mktemp -d "${TMPDIR:-/tmp}/flowcut-otf2-test.XXXXXX") || fail "mktemp failed"
# The import's private directories go here, so that a test can see that none is left behind.
mkdir "$work/tmp" && TMPDIR=$work/tmp && export TMPDIR
if [ -n "${FC_KEEP-}" ]; then
    echo "keeping $work"
else
    trap 'rm -rf "$work"' EXIT
fi

# trace_example DIR N NAME ARGS...: runs examples/NAME on N ranks with the tracer writing into
# DIR; the first half of the ranks is on node "a", the others on node "b".
trace_example() {
    dir=$1 n=$2 name=$3
    shift 3
    half=$((n / 2))
    [ -x "$examples/$name" ] || fail "examples/$name is missing"
    timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$lib" -genv FLOWCUT_DIR "$dir" \
        -n "$half" -env FLOWCUT_NODE a "$examples/$name" "$@" : \
        -n "$((n - half))" -env FLOWCUT_NODE b "$examples/$name" "$@" >"$dir.out" 2>&1 ||
        fail "$name did not run under the tracer: $(head -c 2000 "$dir.out")"
}
