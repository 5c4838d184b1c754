#!/bin/sh
# test-tracer-fmpi.sh: a Fortran program on the `use mpi` bindings: Bcast, token ring of Send/Recv,
# Reduce. Output and exit status are the same traced and untraced.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

check_example fmpi 3 2
