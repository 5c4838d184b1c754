#!/bin/sh
# tests/format/test-format-usage.sh: the command line of flowcut and its commands: a usage error
# exits non-zero with one line that names the offending word and points to --help, --help exits 0,
# and `flowcut run` sets up the environment, refuses to overwrite a trace and passes the command's
# exit status through.
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

# one_line STATUS TEXT ARGS...: flowcut ARGS is a usage error: exit STATUS, nothing on standard
# output, and on standard error exactly one line, which holds TEXT (the word of ARGS at fault in
# quotes, or what is missing) and names the command's --help.
one_line() {
    want=$1 word=$2
    shift 2
    "$flowcut" "$@" >"$work/out" 2>"$work/err"
    st=$?
    cmd=$(printf '%s' "$1" | sed -n 's/^[a-z]*$/& /p')
    if [ "$st" -ne "$want" ]; then
        fail_later "flowcut $*: exit $st, expected $want: $(cat "$work/out" "$work/err")"
    elif [ -s "$work/out" ] || [ "$(wc -l <"$work/err")" -ne 1 ]; then
        fail_later "flowcut $*: not one line on stderr alone: $(cat "$work/out" "$work/err")"
    elif ! grep -q -F -e "$word" "$work/err" || ! grep -q -F -e "(see flowcut $cmd--help)" "$work/err"; then
        fail_later "flowcut $*: the line lacks '$word' or '(see flowcut $cmd--help)': $(cat "$work/err")"
    fi
}

expect 2 'usage: flowcut COMMAND'
expect 0 '^  info ' --help
expect 0 '^  dump ' --help
expect 0 '^  run ' --help
expect 2 'not a flowcut command' nosuch
expect 2 'not a flowcut command' ../bin/sh
one_line 2 "'--bogus'" --bogus
expect 0 'usage: flowcut info' info --help
expect 0 'usage: flowcut dump' dump --help
expect 0 'usage: flowcut run' run --help
expect 0 'usage: flowcut dump' help dump
expect 2 'unknown event kind' dump --kind MPI_Nothing "$work"
one_line 2 'expects exactly one TRACE' info
one_line 2 'expects exactly one TRACE' dump "$work" "$work"
one_line 2 "'x'" dump --rank x "$work"
one_line 2 'no command to run' run -o "$work/x"
one_line 2 "'two'" run --depth two -- true
# A mistyped flag, for every command: unknown long and short options, a value missing, a value
# given to an option that takes none. cluster down and status must stop before they act.
for c in info dump analyze export remap; do
    one_line 2 "'--bogus'" "$c" --bogus "$work"
    one_line 2 "'-Z'" "$c" -Z "$work"
    one_line 2 "'--help'" "$c" --help=yes "$work"
done
one_line 2 "'--format'" analyze "$work" --format
one_line 2 "'--rank'" dump --rank
one_line 2 "'--platform'" remap "$work" --platform
one_line 2 "'-q'" export -q "$work" "$work/o"
one_line 2 "'--bogus'" run --bogus -- true
one_line 2 '--output needs a directory' run --output
one_line 1 "'--bogus'" cluster up --bogus --nodes 2
one_line 1 "'--bogus'" cluster down --bogus
one_line 1 "'-x'" cluster status -x
one_line 1 "'--bogus'" cluster --bogus
if [ -x "$abs_top_builddir/calibrate/flowcut-calibrate" ]; then
    # flowcut calibrate hands its options to the program under the launcher; rank 0 speaks.
    FLOWCUT_EXEC_PATH="$FLOWCUT_EXEC_PATH:$abs_top_builddir/calibrate" \
        one_line 2 "'--bogus'" calibrate --bogus -o "$work/p.prof" -- "$MPIEXEC" -n 2
fi

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
