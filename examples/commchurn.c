/* commchurn.c: communicator churn, as test suites and libraries that make a communicator of their
 * own for each operation do: create one, exchange over it, free it, over and over. Few
 * communicators are alive at once, very many over the run.
 *
 * Usage: commchurn ITERS
 *   Iteration i makes a communicator of all ranks, MPI_Comm_dup of MPI_COMM_WORLD when i is even,
 *   MPI_Comm_split of it in reverse rank order when i is odd (so that its ranks are not the world
 *   ranks); then each rank sends i + its world rank to the next rank of that communicator with
 *   MPI_Sendrecv (receiving from the previous one), sums the values over it with MPI_Allreduce and
 *   frees it. Each rank checks what it received and the sum and exits 1 on a mismatch. Rank 0
 *   prints the number of communicators it created and the total of the sums, which depend only on
 *   ITERS and the size. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: commchurn ITERS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long iters = atol(argv[1]), created = 0, total = 0;
    for (long i = 0; i < iters; i++) {
        MPI_Comm c;
        if (i % 2 == 0)
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        else
            MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c);
        created++;
        int crank;
        MPI_Comm_rank(c, &crank);
        int next = (crank + 1) % size, prev = (crank + size - 1) % size;
        /* The world rank of prev: comm ranks are world ranks, or reversed for a split. */
        int prev_world = i % 2 == 0 ? prev : size - 1 - prev;
        long v = i + rank, got = -1, s = 0;
        MPI_Sendrecv(&v, 1, MPI_LONG, next, 0, &got, 1, MPI_LONG, prev, 0, c, MPI_STATUS_IGNORE);
        MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, c);
        if (got != i + prev_world || s != i * size + (long)size * (size - 1) / 2) {
            fprintf(stderr, "rank %d: got %ld, sum %ld in iteration %ld\n", rank, got, s, i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        total += s;
        MPI_Comm_free(&c);
    }
    if (rank == 0)
        printf("communicators %ld sum %ld\n", created, total);
    MPI_Finalize();
    return 0;
}
