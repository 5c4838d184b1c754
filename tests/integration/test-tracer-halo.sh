#!/bin/sh
# test-tracer-halo.sh: halo exchange on a 2x2 grid of a communicator numbered backwards: Irecv/Isend
# peers as world ranks, tags, bytes of a derived datatype, request ids joined to the COMPLETEs of
# each Waitall. Output and exit status are the same traced and untraced.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

check_example halo 4 5 6 3
