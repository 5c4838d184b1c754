#!/bin/sh
# tests/format/test-format-usage.sh: the command line of flowcut, flowcut info, dump and run:
# usage errors exit 2 with a usage message, --help exits 0, and `flowcut run` sets up the
# environment, refuses to overwrite a trace and passes the command's exit status through.
set -u
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
[ -x "$flowcut" ] || fail "$flowcut is not built"

# expect STATUS GREP-PATTERN ARGS...: runs flowcut ARGS, checks the exit status and that stdout or
# stderr matches the pattern.
expect() {
    want=$1 pat=$2
    shift 2
    "$flowcut" "$@" >"$work/out" 2>"$work/err"
    st=$?
    if [ "$st" -ne "$want" ]; then
        fail_later "flowcut $*: exit $st, expected $want: $(cat "$work/out" "$work/err")"
    elif ! grep -q -e "$pat" "$work/out" "$work/err"; then
        fail_later "flowcut $*: output lacks '$pat': $(cat "$work/out" "$work/err")"
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
expect 2 'usage: flowcut info' info --bogus "$work"
expect 2 'usage: flowcut info' info
expect 2 'usage: flowcut dump' dump --bogus "$work"
expect 2 'usage: flowcut dump' dump "$work" "$work"
expect 2 'unknown event kind' dump --kind MPI_Nothing "$work"
expect 2 'usage: flowcut dump' dump --rank x "$work"
expect 2 'usage: flowcut dump' dump --rank
expect 2 'usage: flowcut run' run --bogus -- true
expect 2 'usage: flowcut run' run -o "$work/x"
expect 2 'usage: flowcut run' run --depth two -- true

# flowcut run. Any readable file serves as the library here: the loader warns and goes on.
: >"$work/fake.so"
: >"$work/other.so"
export FLOWCUT_LIB="$work/fake.so"
LD_PRELOAD="$work/other.so" "$flowcut" run -o "$work/t1" --depth 2 --buffer 4M -- \
    sh -c 'echo "$LD_PRELOAD|$FLOWCUT_DIR|$FLOWCUT_CALLSITE_DEPTH|$FLOWCUT_BUFFER" >"$0"; exit 3' "$work/env" \
    2>"$work/err"
st=$?
[ $st -eq 3 ] || fail_later "flowcut run did not pass exit status 3 through (got $st)"
want="$work/fake.so:$work/other.so|$(cd "$work/t1" && pwd)|2|4M"
[ "$(cat "$work/env")" = "$want" ] || fail_later "flowcut run environment: '$(cat "$work/env")', expected '$want'"
[ "$(tail -n 1 "$work/err")" = "flowcut: trace written to $work/t1 (0 rank files)" ] ||
    fail_later "flowcut run last line: '$(tail -n 1 "$work/err")'"

# A directory holding rank files is refused and left as it was.
mkdir "$work/t2" && echo keep >"$work/t2/rank-000000.fct"
expect 1 'already holds a trace' run -o "$work/t2" -- true
[ "$(cat "$work/t2/rank-000000.fct")" = keep ] || fail_later "flowcut run touched an existing rank file"
# A directory that cannot be created, a missing library.
expect 1 'cannot create the trace directory' run -o "$work/fake.so/sub" -- true
FLOWCUT_LIB="$work/missing.so" expect 1 'tracer library' run -o "$work/t3" -- true
# The default directory name.
(cd "$work" && "$flowcut" run -- true 2>"$work/err") || fail_later "flowcut run -- true"
ls -d "$work"/flowcut-trace-*-* >/dev/null 2>&1 || fail_later "no default trace directory: $(cat "$work/err")"

[ "$failures" -eq 0 ] && echo "usage and flowcut run: all checks passed"
finish
