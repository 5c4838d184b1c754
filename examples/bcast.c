/* bcast.c: the binomial-tree broadcast of Martinasso & Méhaut (2006) §6.3, followed by a barrier,
 * timed under the report's two placements of 8 ranks on four dual-core nodes.
 *
 * Usage: bcast [-s BYTES] [-r REPS]           (under mpiexec; any number of ranks, 8 in the report)
 *        bcast --hosts A|B                      (no MPI: prints the machinefile of mapping A or B)
 *
 * The tree is MPICH's binomial tree from root 0, written out with MPI_Send/MPI_Recv so that it does
 * not depend on which algorithm the library picks for MPI_Bcast: rank r receives from
 * r - lowbit(r), then sends to r + m for m = lowbit(r)/2, lowbit(r)/4, ..., 1 (the root starts at
 * the largest power of two below the size). With 8 ranks, step 1 is 0->4, step 2 is 0->2 and 4->6,
 * step 3 is 0->1, 2->3, 4->5, 6->7.
 *
 * Mapping A puts ranks 2j and 2j+1 on node j: steps 1 and 2 cross nodes without conflict and step 3
 * stays inside nodes, so T_A = 2 T(NC) + T_intra. Mapping B keeps steps 1 and 2 the same (0, 2, 4,
 * 6 on four different nodes) but puts each odd rank away from its parent: node0 {0,3},
 * node1 {2,5}, node2 {4,7}, node3 {6,1}. Step 3 then crosses nodes and every node sends one
 * message and receives one, so T_B = 2 T(NC) + T(f|C), the time in that conflict.
 *
 * Each repetition: barrier, broadcast of BYTES (default 10 MB = 10^7 bytes, as in Table 4),
 * barrier; rank 0 prints "rep R time T" and then "bcast bytes N ranks P median T min T max T",
 * in seconds, the first repetition (connection set-up) excluded. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void binomial_bcast(char *buf, int count, int rank, int size)
{
    int mask = 1;
    /* Receive from the parent: the rank with the lowest set bit of ours cleared. */
    while (mask < size) {
        if (rank & mask) {
            MPI_Recv(buf, count, MPI_BYTE, rank - mask, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            break;
        }
        mask <<= 1;
    }
    /* Send to the children, farthest first. */
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rank + mask < size)
            MPI_Send(buf, count, MPI_BYTE, rank + mask, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    long bytes = 10000000;
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--hosts") == 0 && i + 1 < argc) {
            /* Node of ranks 0..7 under each mapping (see the comment at the top). */
            static const int map_a[8] = {0, 0, 1, 1, 2, 2, 3, 3};
            static const int map_b[8] = {0, 3, 1, 0, 2, 1, 3, 2};
            const int *m = strcmp(argv[i + 1], "A") == 0 ? map_a
                           : strcmp(argv[i + 1], "B") == 0 ? map_b : NULL;
            if (!m) {
                fprintf(stderr, "bcast: --hosts takes A or B, not '%s'\n", argv[i + 1]);
                return 2;
            }
            for (int r = 0; r < 8; r++)
                printf("node%d\n", m[r]);
            return 0;
        } else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
            bytes = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: bcast [-s BYTES] [-r REPS]\n       bcast --hosts A|B\n");
            return 2;
        }
    }
    if (bytes <= 0 || bytes > (1L << 30) || reps < 1) {
        fprintf(stderr, "bcast: need 0 < BYTES <= 2^30 and REPS >= 1\n");
        return 2;
    }

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = malloc((size_t)bytes);
    double *t = malloc(sizeof(double) * (size_t)(reps + 1));
    if (!buf || !t) {
        fprintf(stderr, "bcast: rank %d: out of memory for %ld bytes\n", rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, rank == 0 ? 7 : 0, (size_t)bytes);
    for (int r = 0; r <= reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        binomial_bcast(buf, (int)bytes, rank, size);
        MPI_Barrier(MPI_COMM_WORLD);
        t[r] = MPI_Wtime() - t0;
    }
    /* Every rank must hold the root's bytes; a wrong tree would leave zeros somewhere. */
    int ok = buf[0] == 7 && buf[bytes - 1] == 7, all_ok;
    MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 1; r <= reps; r++)
            printf("rep %d time %.6f\n", r - 1, t[r]);
        qsort(t + 1, (size_t)reps, sizeof *t, cmp_double);
        double med = reps % 2 ? t[1 + reps / 2] : (t[reps / 2] + t[1 + reps / 2]) / 2;
        printf("bcast bytes %ld ranks %d median %.6f min %.6f max %.6f\n", bytes, size, med, t[1],
               t[reps]);
        if (!all_ok)
            fprintf(stderr, "bcast: some rank did not receive the root's data\n");
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return rank == 0 && !all_ok;
}
