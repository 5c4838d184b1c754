/* pingpong.c: ranks 0 and 1 bounce a message back and forth with MPI_Send/MPI_Recv, for each size
 * given on the command line; shows blocking point-to-point calls and serves the overhead benchmark.
 *
 * Usage: pingpong [-t] ITERS SIZE [SIZE ...]
 *   For each SIZE (bytes), after one MPI_Barrier, rank 0 does ITERS times MPI_Send then MPI_Recv
 *   (tag 1) and rank 1 does MPI_Recv then MPI_Send. Ranks above 1 only take part in the barriers.
 *   Rank 0 prints one line whose checksum depends only on the arguments, so traced and untraced
 *   runs can be compared; with -t it also prints the time per round trip of each size, over the
 *   whole loop and in the fastest block of BLOCK round trips (the block least disturbed by other
 *   work on the machine). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG 1
#define BLOCK 1000

/* The byte the sender puts at position k of the message of round trip i, so that the receiver
 * side can check and sum what it got. */
static unsigned char pattern(long i, long k, long size)
{
    return (unsigned char)((i * 31 + k * 7 + size) & 0xff);
}

int main(int argc, char **argv)
{
    int rank, nranks, timing = 0, argi = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argi < argc && strcmp(argv[argi], "-t") == 0) {
        timing = 1;
        argi++;
    }
    if (argc - argi < 2 || nranks < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 pingpong [-t] ITERS SIZE [SIZE ...]\n");
        MPI_Finalize();
        return 2;
    }
    long iters = atol(argv[argi]);
    long maxsize = 0;
    for (int a = argi + 1; a < argc; a++)
        if (atol(argv[a]) > maxsize)
            maxsize = atol(argv[a]);
    unsigned char *buf = malloc(maxsize > 0 ? (size_t)maxsize : 1);
    uint64_t checksum = 0;

    for (int a = argi + 1; a < argc; a++) {
        long size = atol(argv[a]);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), tb = t0, best = -1.0;
        for (long i = 0; i < iters; i++) {
            if (timing && i % BLOCK == 0 && i > 0) {
                double now = MPI_Wtime();
                if (best < 0 || now - tb < best)
                    best = now - tb;
                tb = now;
            }
            if (rank == 0) {
                for (long k = 0; k < size; k++)
                    buf[k] = pattern(i, k, size);
                MPI_Send(buf, (int)size, MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)size, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                /* Rank 1 sends back what it received; sum it so a corrupted echo shows. */
                for (long k = 0; k < size; k++)
                    checksum += buf[k];
                checksum += 1;
            } else if (rank == 1) {
                MPI_Recv(buf, (int)size, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)size, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
            }
        }
        double t1 = MPI_Wtime();
        if (rank == 0 && timing)
            printf("pingpong: size=%ld iters=%ld usec_per_roundtrip=%.4f best_block_usec=%.4f\n", size, iters,
                   iters > 0 ? (t1 - t0) * 1e6 / (double)iters : 0.0,
                   best > 0 ? best * 1e6 / BLOCK : (iters > 0 ? (t1 - t0) * 1e6 / (double)iters : 0.0));
    }
    if (rank == 0)
        printf("pingpong: sizes=%d iters=%ld checksum=%llu\n", argc - argi - 1, iters,
               (unsigned long long)checksum);
    free(buf);
    MPI_Finalize();
    return 0;
}
