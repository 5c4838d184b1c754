# lib-otf2.sh: helpers of the OTF2 tests, sourced after tests/lib.sh: otf2-print, LeakSanitizer's
# view of OTF2, a private TMPDIR, and a launch of an example whose ranks are spread over named
# nodes (FLOWCUT_NODE), so that its trace has inter-node flows.
: "${OTF2_PRINT:=otf2-print}"
# Under the sanitizers, OTF2's own leak on a failed open is not ours (see lsan.supp).
export LSAN_OPTIONS="suppressions=$srcdir/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

need_command "$PYTHON3"
need_command "$OTF2_PRINT" "otf2-print not found (Debian package otf2-tools)"
[ -x "$flowcut" ] || fail "flowcut command not built: $flowcut is missing"

# The import's private directories go here, so that a test can see that none is left behind.
mkdir "$work/tmp" && TMPDIR=$work/tmp && export TMPDIR

# trace_example DIR N NAME ARGS...: runs examples/NAME on N ranks with the tracer writing into
# DIR; the first half of the ranks is on node "a", the others on node "b".
trace_example() {
    dir=$1 n=$2 name=$3
    shift 3
    half=$((n / 2))
    [ -x "$examples/$name" ] || fail "examples/$name is missing"
    timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -genv LD_PRELOAD "$libflowcut" -genv FLOWCUT_DIR "$dir" \
        -n "$half" -env FLOWCUT_NODE a "$examples/$name" "$@" : \
        -n "$((n - half))" -env FLOWCUT_NODE b "$examples/$name" "$@" >"$dir.out" 2>&1 ||
        fail "$name did not run under the tracer: $(head -c 2000 "$dir.out")"
}
