#!/bin/sh
# test-tracer-inert.sh: in processes that are not MPI ranks the preloaded tracer does nothing:
# /bin/true, a shell pipeline and the MPI launcher itself print only their own output, keep their
# exit status and create no file, not even with FLOWCUT_DIR set.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

mkdir "$work/cwd" || fail "mkdir"
cd "$work/cwd" || fail "cd"

# expect CMD... : runs CMD with the tracer preloaded; $want_out and $want_rc are what it must give.
expect() {
    LD_PRELOAD=$libflowcut FLOWCUT_DIR=$work/never "$@" >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" = "$want_rc" ] || fail "'$*' exited $rc under the tracer, expected $want_rc"
    [ "$(cat "$work/out")" = "$want_out" ] || fail "'$*' printed '$(cat "$work/out")', expected '$want_out'"
    [ -s "$work/err" ] && fail "'$*' wrote to stderr under the tracer: $(head -c 500 "$work/err")"
    [ -z "$(ls -A "$work/cwd")" ] || fail "'$*' created files in the current directory: $(ls -A "$work/cwd")"
    [ -e "$work/never" ] && fail "'$*' created FLOWCUT_DIR $work/never"
    return 0
}

want_out= want_rc=0 expect /bin/true
want_out= want_rc=1 expect /bin/false
want_out='hello
3' want_rc=3 expect sh -c 'echo hello; printf "a\nb\nc\n" | wc -l; exit 3'
# The launcher and its proxies are not ranks either; /bin/true under them is not an MPI program.
want_out= want_rc=0 expect timeout "$FC_TEST_TIMEOUT" "$MPIEXEC" -n 2 /bin/true
exit 0
