/* wavefront.c: the pipeline of small messages of an LU-style wavefront sweep (NAS LU's SSOR): the
 * ranks form a 2-D grid; for each of K planes a rank receives a boundary from its north and west
 * neighbours (blocking MPI_Recv), computes its block, and sends its own boundary south and east
 * (MPI_Send). The wave runs from the north-west corner to the south-east one; most of a message's
 * observed time is its receiver waiting for the wave to reach it, not the network.
 *
 * Usage: wavefront PLANES BYTES COMPUTE_US
 *   Boundaries are BYTES long (at least 8); each rank computes for COMPUTE_US microseconds per
 *   plane (a busy loop). The first 8 bytes of a boundary carry the wave's depth: one more than the
 *   larger depth received, so that the south-east rank must find PX + PY - 1 on every plane; the
 *   other bytes carry the plane's number. Every rank checks what it received; rank 0 prints
 *   "wavefront: verified" when all agree, and the program exits 1 otherwise. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void compute(double us)
{
    double end = MPI_Wtime() + us * 1e-6;
    volatile double x = 1;
    while (MPI_Wtime() < end)
        x = x * 1.0000001 + 1e-9;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4 || atol(argv[2]) < 8) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N wavefront PLANES BYTES(>=8) COMPUTE_US\n");
        MPI_Finalize();
        return 2;
    }
    int planes = atoi(argv[1]);
    size_t bytes = (size_t)atol(argv[2]);
    double us = atof(argv[3]);
    int dims[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    int px = dims[0], py = dims[1], x = rank % px, y = rank / px;
    int north = y > 0 ? rank - px : MPI_PROC_NULL, south = y < py - 1 ? rank + px : MPI_PROC_NULL;
    int west = x > 0 ? rank - 1 : MPI_PROC_NULL, east = x < px - 1 ? rank + 1 : MPI_PROC_NULL;
    unsigned char *in = malloc(bytes), *out = malloc(bytes);
    if (in == NULL || out == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int bad = 0;
    for (int k = 0; k < planes; k++) {
        uint64_t depth = 0;
        int from[2] = {north, west};
        for (int d = 0; d < 2; d++) {
            if (from[d] == MPI_PROC_NULL)
                continue;
            MPI_Recv(in, (int)bytes, MPI_BYTE, from[d], k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            uint64_t got;
            memcpy(&got, in, 8);
            depth = got > depth ? got : depth;
            for (size_t i = 8; i < bytes; i++)
                bad += in[i] != (unsigned char)k;
        }
        depth++;
        compute(us);
        memcpy(out, &depth, 8);
        memset(out + 8, k, bytes - 8);
        MPI_Send(out, (int)bytes, MPI_BYTE, south, k, MPI_COMM_WORLD);
        MPI_Send(out, (int)bytes, MPI_BYTE, east, k, MPI_COMM_WORLD);
        if (rank == size - 1 && depth != (uint64_t)(px + py - 1))
            bad++;
    }
    int allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (allbad)
            printf("wavefront: %d wrong boundaries or depths\n", allbad);
        else
            printf("wavefront: verified\n");
    }
    free(in);
    free(out);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
