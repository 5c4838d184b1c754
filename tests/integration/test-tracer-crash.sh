#!/bin/sh
# test-tracer-crash.sh: the last of 2 ranks dies of SIGSEGV after receiving 4 messages: the trace is
# still readable, marked partial, and holds the crashed rank's events up to the crash; the program's
# own output and the launcher's exit status are the same traced and untraced.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example crash
run_untraced "$work/plain.out" 2 "$prog" 4
run_traced "$work/traced.out" "$work/trace" 2 "$prog" 4
for f in plain traced; do
    [ "$(cat "$work/$f.out.rc")" = 124 ] && fail "$f run timed out"
    # The launcher adds its own report of the crash (with process ids): keep the program's lines.
    grep '^crash:' "$work/$f.out" >"$work/$f.app"
done
[ -s "$work/plain.app" ] || fail "the untraced program printed nothing: $(cat "$work/plain.out.err")"
[ "$(cat "$work/plain.out.rc")" != 0 ] || fail "the untraced program did not fail"
cmp -s "$work/plain.app" "$work/traced.app" || fail "output differs: '$(cat "$work/plain.app")' vs '$(cat "$work/traced.app")'"
[ "$(cat "$work/plain.out.rc")" = "$(cat "$work/traced.out.rc")" ] ||
    fail "exit status $(cat "$work/traced.out.rc") traced, $(cat "$work/plain.out.rc") untraced"
read_trace "$work/trace"
"$PYTHON3" "$srcdir/check_trace.py" crash "$work/trace.dump" "$work/trace.json" 2 4 || {
    cat "$work/trace.json" "$work/trace.dump" >&2
    fail "crash: the partial trace does not hold what the program did before the crash"
}
exit 0
