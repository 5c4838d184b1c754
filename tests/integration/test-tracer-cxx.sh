#!/bin/sh
# test-tracer-cxx.sh: a C++ program: Sendrecv with the COMPLETE of its receive half, and Gather.
# Output and exit status are the same traced and untraced.
. "${srcdir:-$(dirname "$0")}/common.sh"

check_example cxx 2 4 5
