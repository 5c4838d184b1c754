#!/bin/sh
# test-tracer-f08.sh: a Fortran 2008 (use mpi_f08) program is traced completely: Init, Isend/Irecv,
# Wait, Waitall, Barrier, Allreduce, Finalize. Output and exit status are the same traced and
# untraced.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

check_example f08 2 3
