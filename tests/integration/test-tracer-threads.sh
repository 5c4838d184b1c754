#!/bin/sh
# test-tracer-threads.sh: MPI_THREAD_MULTIPLE with two threads per rank: events on thread numbers 0
# and 1, each with its own calls, tags and counts. Output and exit status are the same traced and
# untraced.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

check_example threads 2 20
