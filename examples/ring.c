/* ring.c: a token goes round all ranks with MPI_Send/MPI_Recv, then every rank shifts an array to
 * its right neighbour with MPI_Sendrecv and the results are summed with MPI_Allreduce; shows
 * blocking point-to-point calls between every pair of neighbours and a collective.
 *
 * Usage: ring ROUNDS COUNT
 *   ROUNDS times: rank 0 sends the token (one int, tag 10) to rank 1 and receives it back from the
 *   last rank; every other rank receives it from its left neighbour, adds its rank and passes it on.
 *   Then one MPI_Sendrecv (tag 20) sends COUNT doubles to the right and receives COUNT doubles from
 *   the left, and one MPI_Allreduce sums a local value over all ranks. Rank 0 prints the result. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define TOKEN_TAG 10
#define SHIFT_TAG 20

int main(int argc, char **argv)
{
    int rank, nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 3 || nranks < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N ring ROUNDS COUNT   (N >= 2)\n");
        MPI_Finalize();
        return 2;
    }
    int rounds = atoi(argv[1]), count = atoi(argv[2]);
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;

    int token = 0;
    for (int r = 0; r < rounds; r++) {
        if (rank == 0) {
            token += 1;
            MPI_Send(&token, 1, MPI_INT, right, TOKEN_TAG, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, left, TOKEN_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, left, TOKEN_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_INT, right, TOKEN_TAG, MPI_COMM_WORLD);
        }
    }

    double *out = malloc(sizeof(double) * (size_t)(count > 0 ? count : 1));
    double *in = malloc(sizeof(double) * (size_t)(count > 0 ? count : 1));
    for (int i = 0; i < count; i++)
        out[i] = rank * 1000.0 + i;
    MPI_Sendrecv(out, count, MPI_DOUBLE, right, SHIFT_TAG, in, count, MPI_DOUBLE, left, SHIFT_TAG,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* Every rank checks it got its left neighbour's array; the sum of the flags must be nranks. */
    double local = 1.0;
    for (int i = 0; i < count; i++)
        if (in[i] != left * 1000.0 + i)
            local = 0.0;
    double total = 0.0;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ring: ranks=%d rounds=%d token=%d shifted_ok=%.0f\n", nranks, rounds, token, total);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
