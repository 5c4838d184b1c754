#!/bin/sh
# test-tracer-threads.sh: MPI_THREAD_MULTIPLE with two threads per rank: events on thread numbers 0
# and 1, each with its own calls, tags and counts. Output and exit status are the same traced and
# untraced.
. "${srcdir:-$(dirname "$0")}/common.sh"

check_example threads 2 20
