#!/bin/sh
# test-tracer-cxx.sh: a C++ program: Sendrecv with the COMPLETE of its receive half, and Gather.
# Output and exit status are the same traced and untraced.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

check_example cxx 2 4 5
