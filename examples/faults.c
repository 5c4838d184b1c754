/* faults.c: every rank records a known number of events, says so, and then the run dies the way
 * its first argument names; used by the fault tests to count the events the reader recovers
 * against the program's own count.
 *
 * Usage: faults MODE N   (2 ranks or more)
 *   Each rank sends N messages (one int) to the next rank with MPI_Send and receives N from the
 *   previous one with MPI_Recv, then calls MPI_Barrier, prints
 *     faults: rank R recorded MPI_Send=N MPI_Recv=N MPI_Barrier=1
 *   (its own count of the calls it made), calls MPI_Barrier again so that every rank has printed,
 *   and then, by MODE:
 *     kill1   the last rank sends itself SIGKILL; the others wait in MPI_Barrier until the launcher
 *             ends them
 *     killall every rank sends itself SIGKILL
 *     segv    the last rank writes through a null pointer; the others wait as for kill1
 *     abort   the last rank calls MPI_Abort with error code 3; the others wait as for kill1
 *     hang    every rank waits in MPI_Recv for a message that never comes, for a test to stop the
 *             launcher
 *     finish  every rank calls MPI_Finalize and exits 0
 *   The second MPI_Barrier is left out of the printed count, so that the count says what every
 *   rank has recorded whatever the moment the run dies after it. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int *volatile nowhere = NULL;

int main(int argc, char **argv)
{
    int rank, n, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc != 3 || n < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: faults kill1|killall|segv|abort|hang|finish N (2 ranks or more)\n");
        MPI_Finalize();
        return 2;
    }
    const char *mode = argv[1];
    long count = atol(argv[2]);
    for (long i = 0; i < count; i++) {
        MPI_Send(&x, 1, MPI_INT, (rank + 1) % n, 0, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, (rank + n - 1) % n, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("faults: rank %d recorded MPI_Send=%ld MPI_Recv=%ld MPI_Barrier=1\n", rank, count, count);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    int last = rank == n - 1;
    if (strcmp(mode, "killall") == 0 || (last && strcmp(mode, "kill1") == 0))
        kill(getpid(), SIGKILL);
    if (last && strcmp(mode, "segv") == 0)
        *nowhere = 1;
    if (last && strcmp(mode, "abort") == 0)
        MPI_Abort(MPI_COMM_WORLD, 3);
    if (strcmp(mode, "hang") == 0)
        MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (strcmp(mode, "finish") != 0)
        MPI_Barrier(MPI_COMM_WORLD); /* the launcher ends the waiting ranks */
    MPI_Finalize();
    return 0;
}
