#!/bin/sh
# test-tracer-fwaitall.sh: MPI_Waitall from both Fortran bindings (`use mpi`, which MPICH routes to
# the C MPI_Waitall, and `use mpi_f08`, which it routes to PMPI_Waitall) gets each request's own
# completion time, messages 100 ms apart, and the same results as untraced.
. "${FC_TEST_LIB:-$(dirname "$0")/../lib.sh}"
. "$srcdir/lib-tracer.sh"

check_example fwaitall 2 100
