/* crash.c: the last rank receives some messages and then dies of a segmentation fault; used to
 * check that a crashed rank still leaves a readable trace, marked partial, with the events that
 * came before the crash.
 *
 * Usage: crash K   (2 ranks or more)
 *   Rank 0 sends K messages (one int, tag 5) to the last rank with MPI_Send, then waits in MPI_Recv
 *   for an answer that never comes; the launcher ends it when the last rank dies. The last rank
 *   receives the K messages with MPI_Recv, prints one line and writes through a null pointer.
 *   Other ranks wait in MPI_Barrier. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Volatile so the compiler cannot see the null and replace the store by a trap instruction: the
 * program must die of a real SIGSEGV. */
static int *volatile nowhere = NULL;

int main(int argc, char **argv)
{
    int rank, nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 2 || nranks < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N crash K   (N >= 2)\n");
        MPI_Finalize();
        return 2;
    }
    int k_msgs = atoi(argv[1]), last = nranks - 1, value = 0;
    if (rank == 0) {
        for (int k = 0; k < k_msgs; k++)
            MPI_Send(&k, 1, MPI_INT, last, 5, MPI_COMM_WORLD);
        MPI_Recv(&value, 1, MPI_INT, last, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == last) {
        long sum = 0;
        for (int k = 0; k < k_msgs; k++) {
            MPI_Recv(&value, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            sum += value;
        }
        printf("crash: rank %d received %d messages (sum %ld), now crashing\n", rank, k_msgs, sum);
        fflush(stdout);
        *nowhere = 1;
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
