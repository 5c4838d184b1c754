/* halo2d.c: a 2-D halo exchange, the communication skeleton of a stencil code, for trying rank
 * placements on the emulated cluster and on real ones.
 *
 * Usage: halo2d ITERATIONS BYTES
 *   The ranks form a periodic PX x PY grid (MPI_Dims_create, row-major ranks from MPI_Cart_create
 *   without reordering, so the machinefile decides which neighbours share a node). Each iteration
 *   every rank posts MPI_Irecv from its four neighbours, MPI_Isend of BYTES bytes to each, and
 *   completes the eight requests with one MPI_Waitall. Rank 0 prints the total time and the time
 *   per iteration, the slowest rank's, in seconds:
 *       halo2d ranks P grid PXxPY bytes N iterations I time T per-iteration T */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iters = argc == 3 ? strtol(argv[1], NULL, 10) : 0;
    long bytes = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
    if (iters <= 0 || bytes <= 0 || bytes > (1L << 28)) {
        if (rank == 0)
            fprintf(stderr, "usage: halo2d ITERATIONS BYTES (both positive, BYTES <= 2^28)\n");
        MPI_Finalize();
        return 2;
    }

    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    /* nb[0], nb[1]: up and down along dimension 0; nb[2], nb[3]: along dimension 1. */
    int nb[4];
    MPI_Cart_shift(grid, 0, 1, &nb[0], &nb[1]);
    MPI_Cart_shift(grid, 1, 1, &nb[2], &nb[3]);

    char *sendbuf = malloc((size_t)bytes * 4), *recvbuf = malloc((size_t)bytes * 4);
    if (!sendbuf || !recvbuf) {
        fprintf(stderr, "halo2d: rank %d: out of memory for %ld bytes\n", rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sendbuf, rank & 0x7f, (size_t)bytes * 4);
    MPI_Request req[8];
    MPI_Status st[8]; /* not MPI_STATUSES_IGNORE: GCC 12 then warns about a 0-byte array */
    MPI_Barrier(grid);
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        for (int d = 0; d < 4; d++)
            MPI_Irecv(recvbuf + d * bytes, (int)bytes, MPI_BYTE, nb[d], d, grid, &req[d]);
        /* What goes up arrives from below: the tag names the direction of travel, so a message
         * sent towards nb[d] is received there from its opposite neighbour, nb[d ^ 1]. */
        for (int d = 0; d < 4; d++)
            MPI_Isend(sendbuf + d * bytes, (int)bytes, MPI_BYTE, nb[d], d ^ 1, grid, &req[4 + d]);
        MPI_Waitall(8, req, st);
    }
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, grid);
    if (rank == 0)
        printf("halo2d ranks %d grid %dx%d bytes %ld iterations %ld time %.6f per-iteration %.6f\n",
               size, dims[0], dims[1], bytes, iters, tmax, tmax / (double)iters);
    free(recvbuf);
    free(sendbuf);
    MPI_Comm_free(&grid);
    MPI_Finalize();
    return 0;
}
