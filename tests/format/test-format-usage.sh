#!/bin/sh
# tests/format/test-format-usage.sh: the command line of flowcut, flowcut info, dump and run:
# usage errors exit 2 with a usage message, --help exits 0, and `flowcut run` sets up the
# environment, refuses to overwrite a trace and passes the command's exit status through.
set -u
fc=${FLOWCUT:?run through make check}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect STATUS GREP-PATTERN ARGS...: runs flowcut ARGS, checks the exit status and that stdout or
# stderr matches the pattern.
expect() {
    want=$1 pat=$2
    shift 2
    "$fc" "$@" >"$tmp/out" 2>"$tmp/err"
    st=$?
    if [ "$st" -ne "$want" ]; then
        echo "FAIL: flowcut $*: exit $st, expected $want"; cat "$tmp/out" "$tmp/err"; fail=1
    elif ! grep -q -e "$pat" "$tmp/out" "$tmp/err"; then
        echo "FAIL: flowcut $*: output lacks '$pat'"; cat "$tmp/out" "$tmp/err"; fail=1
    fi
}

expect 2 'usage: flowcut COMMAND'
expect 0 '^  info ' --help
expect 0 '^  dump ' --help
expect 0 '^  run ' --help
expect 2 'not a flowcut command' nosuch
expect 2 'not a flowcut command' ../bin/sh
expect 2 'unknown option' --bogus
expect 0 'usage: flowcut info' info --help
expect 0 'usage: flowcut dump' dump --help
expect 0 'usage: flowcut run' run --help
expect 0 'usage: flowcut dump' help dump
expect 2 'usage: flowcut info' info --bogus "$tmp"
expect 2 'usage: flowcut info' info
expect 2 'usage: flowcut dump' dump --bogus "$tmp"
expect 2 'usage: flowcut dump' dump "$tmp" "$tmp"
expect 2 'unknown event kind' dump --kind MPI_Nothing "$tmp"
expect 2 'usage: flowcut dump' dump --rank x "$tmp"
expect 2 'usage: flowcut dump' dump --rank
expect 2 'usage: flowcut run' run --bogus -- true
expect 2 'usage: flowcut run' run -o "$tmp/x"
expect 2 'usage: flowcut run' run --depth two -- true

# flowcut run. Any readable file serves as the library here: the loader warns and goes on.
: >"$tmp/fake.so"
: >"$tmp/other.so"
export FLOWCUT_LIB="$tmp/fake.so"
LD_PRELOAD="$tmp/other.so" "$fc" run -o "$tmp/t1" --depth 2 --buffer 4M -- \
    sh -c 'echo "$LD_PRELOAD|$FLOWCUT_DIR|$FLOWCUT_CALLSITE_DEPTH|$FLOWCUT_BUFFER" >"$0"; exit 3' "$tmp/env" \
    2>"$tmp/err"
st=$?
[ $st -eq 3 ] || { echo "FAIL: flowcut run did not pass exit status 3 through (got $st)"; fail=1; }
want="$tmp/fake.so:$tmp/other.so|$(cd "$tmp/t1" && pwd)|2|4M"
[ "$(cat "$tmp/env")" = "$want" ] || { echo "FAIL: flowcut run environment: '$(cat "$tmp/env")', expected '$want'"; fail=1; }
[ "$(tail -n 1 "$tmp/err")" = "flowcut: trace written to $tmp/t1 (0 rank files)" ] ||
    { echo "FAIL: flowcut run last line: '$(tail -n 1 "$tmp/err")'"; fail=1; }

# A directory holding rank files is refused and left as it was.
mkdir "$tmp/t2" && echo keep >"$tmp/t2/rank-000000.fct"
expect 1 'already holds a trace' run -o "$tmp/t2" -- true
[ "$(cat "$tmp/t2/rank-000000.fct")" = keep ] || { echo "FAIL: flowcut run touched an existing rank file"; fail=1; }
# A directory that cannot be created, a missing library.
expect 1 'cannot create the trace directory' run -o "$tmp/fake.so/sub" -- true
FLOWCUT_LIB="$tmp/missing.so" expect 1 'tracer library' run -o "$tmp/t3" -- true
# The default directory name.
(cd "$tmp" && "$fc" run -- true 2>"$tmp/err") || { echo "FAIL: flowcut run -- true"; fail=1; }
ls -d "$tmp"/flowcut-trace-*-* >/dev/null 2>&1 || { echo "FAIL: no default trace directory"; cat "$tmp/err"; fail=1; }

[ $fail -eq 0 ] && echo "usage and flowcut run: all checks passed"
exit $fail
