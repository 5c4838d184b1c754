#!/bin/sh
# test-otf2-corrupt.sh: a damaged OTF2 archive (garbage anchor file, event file cut short, event
# file missing), and an archive on which OTF2's reader itself crashes, get one clear error line
# naming the anchor file and exit status 1 from every command, and leave no private directory
# behind.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-otf2.sh"

[ -x "$abs_builddir/scorep-like" ] || fail "scorep-like not built"

# expect_error WHAT ANCHOR: analyze, info and dump must each print one line and exit 1.
expect_error() {
    for cmd in analyze info dump; do
        "$flowcut" "$cmd" "$2" >"$work/out" 2>"$work/err"
        rc=$?
        [ "$rc" = 1 ] || fail "$1: flowcut $cmd exited $rc, expected 1 (stderr: $(cat "$work/err"))"
        [ "$(wc -l <"$work/err")" = 1 ] || fail "$1: flowcut $cmd: expected one error line, got: $(cat "$work/err")"
        grep -q "$2" "$work/err" || fail "$1: flowcut $cmd: the message does not name the archive: $(cat "$work/err")"
    done
    echo "$1: $(cat "$work/err")"
}

# Garbage where the anchor file should be.
mkdir "$work/garbage"
head -c 3000 /dev/urandom >"$work/garbage/traces.otf2"
expect_error "garbage anchor" "$work/garbage/traces.otf2"

# An event file cut in the middle.
"$abs_builddir/scorep-like" "$work/cut" || fail "scorep-like failed"
size=$(wc -c <"$work/cut/traces/1.evt")
head -c $((size / 2)) "$work/cut/traces/1.evt" >"$work/cut/traces/1.evt.part"
mv "$work/cut/traces/1.evt.part" "$work/cut/traces/1.evt"
expect_error "truncated events" "$work/cut/traces.otf2"

# An event file missing.
"$abs_builddir/scorep-like" "$work/gone" || fail "scorep-like failed"
rm "$work/gone/traces/2.evt"
expect_error "missing events" "$work/gone/traces.otf2"

# OTF2's reader dying of SIGSEGV (otf2-crash.so stands in for its reading of the definitions): the
# import runs it in a child process, so the command survives and names the archive. The
# sanitizers' own SIGSEGV handler is off, as in a build without them, and the preloaded library
# comes before their runtime.
crash=$abs_builddir/.libs/otf2-crash.so
[ -f "$crash" ] || fail "otf2-crash.so not built"
"$abs_builddir/scorep-like" "$work/crash" || fail "scorep-like failed"
(
    LD_PRELOAD=$crash
    ASAN_OPTIONS="handle_segv=0:verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export LD_PRELOAD ASAN_OPTIONS
    expect_error "OTF2 library crash" "$work/crash/traces.otf2"
    grep -q "the OTF2 library crashed reading the archive" "$work/err" ||
        fail "OTF2 library crash: the message does not say so: $(cat "$work/err")"
) || exit 1

[ -z "$(ls -A "$work/tmp")" ] || fail "import left $(ls "$work/tmp") behind"
exit 0
