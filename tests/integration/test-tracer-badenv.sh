#!/bin/sh
# test-tracer-badenv.sh: a bad FLOWCUT_BUFFER, FLOWCUT_REQUEST_TIMES or FLOWCUT_ZLIB_LEVEL value
# and an unwritable FLOWCUT_DIR each give exactly one warning line per rank on stderr (`flowcut:
# rank N: ...`), and the application's output and exit status do not change; a FLOWCUT_DIR below
# missing directories is created with them.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example ring
n=2
run_untraced "$work/plain.out" $n "$prog" 2 4
[ "$(cat "$work/plain.out.rc")" = 0 ] || fail "ring failed untraced: $(cat "$work/plain.out.err")"
[ -s "$work/plain.out.err" ] && fail "ring wrote to stderr untraced: $(cat "$work/plain.out.err")"

# one_warning_per_rank ERRFILE WHAT: ERRFILE holds exactly one `flowcut: rank N:` line per rank.
one_warning_per_rank() {
    "$PYTHON3" - "$1" $n <<'PY' || fail "$2: stderr is not one warning line per rank"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
n = int(sys.argv[2])
ranks = sorted(int(m.group(1)) for m in (re.match(r"flowcut: rank (\d+): \S", l) for l in lines) if m)
if len(lines) != n or ranks != list(range(n)):
    print("stderr has %d lines for %d ranks (ranks named: %s):" % (len(lines), n, ranks))
    print("\n".join(lines[:10]))
    sys.exit(1)
PY
}

# A buffer size that is not a number.
FC_GENV="-genv FLOWCUT_BUFFER 12Q" run_traced "$work/buf.out" "$work/buf" $n "$prog" 2 4
same_output "$work/plain.out" "$work/buf.out"
one_warning_per_rank "$work/buf.out.err" "FLOWCUT_BUFFER=12Q"

# A FLOWCUT_REQUEST_TIMES that is neither 1 nor 0.
FC_GENV="-genv FLOWCUT_REQUEST_TIMES yes" run_traced "$work/times.out" "$work/times" $n "$prog" 2 4
same_output "$work/plain.out" "$work/times.out"
one_warning_per_rank "$work/times.out.err" "FLOWCUT_REQUEST_TIMES=yes"

# A zlib level that is not one digit is refused like any other bad setting; the trace is still
# written, at the default level.
FC_GENV="-genv FLOWCUT_ZLIB_LEVEL 99" run_traced "$work/zl.out" "$work/zl" $n "$prog" 2 4
same_output "$work/plain.out" "$work/zl.out"
one_warning_per_rank "$work/zl.out.err" "FLOWCUT_ZLIB_LEVEL=99"
grep -q "bad FLOWCUT_ZLIB_LEVEL" "$work/zl.out.err" || fail "FLOWCUT_ZLIB_LEVEL=99: $(cat "$work/zl.out.err")"
read_trace "$work/zl"

# A trace directory that cannot be created, even by root: its parent is a regular file.
: >"$work/file"
run_traced "$work/dir.out" "$work/file/trace" $n "$prog" 2 4
same_output "$work/plain.out" "$work/dir.out"
one_warning_per_rank "$work/dir.out.err" "FLOWCUT_DIR=$work/file/trace"

# A trace directory whose parents do not exist yet is created with them, silently.
run_traced "$work/deep.out" "$work/a/b/trace" $n "$prog" 2 4
same_output "$work/plain.out" "$work/deep.out"
[ -s "$work/deep.out.err" ] && fail "FLOWCUT_DIR with missing parents: stderr: $(cat "$work/deep.out.err")"
[ "$(ls "$work/a/b/trace" | wc -l)" = $n ] || fail "FLOWCUT_DIR with missing parents: $(ls -R "$work/a" 2>&1)"
exit 0
