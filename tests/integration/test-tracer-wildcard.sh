#!/bin/sh
# test-tracer-wildcard.sh: MPI_ANY_SOURCE/MPI_ANY_TAG receives on rank 0: each resolved to the
# actual sender, tag and byte count, also through MPI_STATUS_IGNORE and Irecv+Wait. Output and exit
# status are the same traced and untraced.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

check_example wildcard 4 3
