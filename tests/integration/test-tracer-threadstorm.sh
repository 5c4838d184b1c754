#!/bin/sh
# test-tracer-threadstorm.sh: examples/threadstorm on 2 ranks under MPI_THREAD_MULTIPLE, 4 threads
# a rank making MPI_Sendrecv as fast as they can, then polling MPI_Improbe in tight loops, while the
# main thread waits for them; into a 64 KiB buffer (FLOWCUT_BUFFER), which holds 4 chunks: fewer
# than the 5 threads that fill them. Traced, the output is the untraced one and the tracer says nothing; no
# event is dropped and the trace is not partial; every call the program counted is in the trace
# (polling-check.py, which also checks that the tracer's waits overlap no call), and each thread
# holds its own ITERS MPI_Sendrecv.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

need_example threadstorm
threads=4 iters=5000
run_untraced "$work/plain.out" 2 "$prog" $threads $iters
[ "$(cat "$work/plain.out.rc")" = 0 ] || fail "threadstorm failed untraced: $(cat "$work/plain.out.err")"
FC_GENV="-genv FLOWCUT_BUFFER 64K" run_traced "$work/traced.out" "$work/trace" 2 "$prog" $threads $iters "$work/counts"
same_output "$work/plain.out" "$work/traced.out"
[ -s "$work/traced.out.err" ] && fail "the tracer was not silent: $(head -c 2000 "$work/traced.out.err")"

"$flowcut" info "$work/trace" >"$work/info" 2>"$work/info.err" || fail "flowcut info failed: $(head -c 2000 "$work/info.err")"
grep -q "^partial: *no$" "$work/info" || fail "the trace is partial: $(grep -A3 partial: "$work/info")"
grep -q "^warnings: *0$" "$work/info" || fail "the trace holds warnings: $(grep warnings: "$work/info")"
"$flowcut" dump --no-sites "$work/trace" >"$work/trace.dump" 2>"$work/dump.err" ||
    fail "flowcut dump failed: $(head -c 2000 "$work/dump.err")"
"$PYTHON3" "$srcdir/polling-check.py" "$work/trace.dump" "$work/counts" 2 folded || fail "events are missing"
# Each of the 8 threads that exchange made $iters MPI_Sendrecv.
grep 'kind=MPI_Sendrecv ' "$work/trace.dump" | sed 's/.* \(rank=[0-9]* thread=[0-9]*\) .*/\1/' | sort | uniq -c >"$work/per-thread"
[ "$(awk -v n=$iters '$1 == n' "$work/per-thread" | wc -l)" = $((2 * threads)) ] ||
    fail "not $iters MPI_Sendrecv on each thread: $(cat "$work/per-thread")"
exit 0
