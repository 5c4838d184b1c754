/* collbytes.c: REPS identical calls of one collective (or of one point-to-point message), for
 * counting the bytes that cross each node's link during them: the emulated-cluster test compares
 * them with the inter-node bytes of the algorithm's expansion. With -r 0 the program does
 * everything else (initialisation, the closing barrier, finalisation), which gives the baseline.
 *
 * Usage: collbytes -c alltoall|allreduce|scan|bcast|send|inter-bcast|inter-alltoall [-b BYTES] [-r REPS] [-R ROOT]   (under mpiexec)
 *   alltoall   BYTES to each peer
 *   allreduce  BYTES of doubles summed (BYTES a multiple of 8)
 *   scan       BYTES of doubles, each rank getting the sum over itself and the ranks before it
 *   inter-bcast     on the inter-communicator between the even and the odd ranks (NP even):
 *                   BYTES from the first even rank to the odd group
 *   inter-alltoall  on that inter-communicator: BYTES from each rank to each rank of the other group
 *   bcast      BYTES from rank ROOT
 *   send       BYTES from rank ROOT to rank (ROOT + NP / 2) % NP, REPS times (the header overhead
 *              of one message of that size on the link)
 *
 * Every rank checks what it received; rank 0 prints "collbytes C ok" and the program exits 0, or
 * prints the number of wrong values and exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *coll = "alltoall";
    long bytes = 65536;
    int reps = 4, root = 0, me, np, c;
    long bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    while ((c = getopt(argc, argv, "c:b:r:R:")) != -1) {
        if (c == 'c')
            coll = optarg;
        else if (c == 'b')
            bytes = atol(optarg);
        else if (c == 'r')
            reps = atoi(optarg);
        else if (c == 'R')
            root = atoi(optarg);
        else {
            if (me == 0)
                fprintf(stderr, "usage: collbytes -c alltoall|allreduce|scan|bcast|send|inter-bcast|inter-alltoall [-b BYTES] [-r REPS] [-R ROOT]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (bytes < 8 || root < 0 || root >= np || reps < 0) {
        if (me == 0)
            fprintf(stderr, "collbytes: BYTES must be at least 8, ROOT a rank, REPS not negative\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = bytes / 8; /* doubles */
    int a2a = strcmp(coll, "alltoall") == 0 || strcmp(coll, "inter-alltoall") == 0;
    /* The inter-communicator between the even ranks (color 0) and the odd ones, whose leaders are
     * world ranks 0 and 1; half is this rank's group. */
    MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    int color = me % 2, local = 0;
    if (strncmp(coll, "inter-", 6) == 0) {
        if (np < 2 || np % 2) {
            if (me == 0)
                fprintf(stderr, "collbytes: %s needs an even number of ranks\n", coll);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Comm_split(MPI_COMM_WORLD, color, me, &half);
        MPI_Comm_rank(half, &local);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7, &inter);
    }
    double *sb = malloc((size_t)(a2a ? n * np : n) * sizeof *sb);
    double *rb = malloc((size_t)(a2a ? n * np : n) * sizeof *rb);
    if (sb == NULL || rb == NULL)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (int t = 0; t < reps; t++) {
        if (strcmp(coll, "alltoall") == 0) {
            /* Block j of rank i's buffer holds i * 1000 + j + t, the value rank j checks. */
            for (int j = 0; j < np; j++)
                for (long k = 0; k < n; k++)
                    sb[j * n + k] = me * 1000.0 + j + t;
            MPI_Alltoall(sb, (int)n, MPI_DOUBLE, rb, (int)n, MPI_DOUBLE, MPI_COMM_WORLD);
            for (int j = 0; j < np; j++)
                for (long k = 0; k < n; k++)
                    bad += rb[j * n + k] != j * 1000.0 + me + t;
        } else if (strcmp(coll, "allreduce") == 0) {
            for (long k = 0; k < n; k++)
                sb[k] = me + k % 7 + t;
            MPI_Allreduce(sb, rb, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            for (long k = 0; k < n; k++)
                bad += rb[k] != np * (np - 1) / 2.0 + (double)np * (k % 7 + t);
        } else if (strcmp(coll, "scan") == 0) {
            for (long k = 0; k < n; k++)
                sb[k] = me + k % 7 + t;
            MPI_Scan(sb, rb, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            for (long k = 0; k < n; k++)
                bad += rb[k] != me * (me + 1) / 2.0 + (me + 1.0) * (k % 7 + t);
        } else if (strcmp(coll, "bcast") == 0) {
            for (long k = 0; k < n; k++)
                rb[k] = me == root ? (double)(k % 101 + t) : -1.0;
            MPI_Bcast(rb, (int)n, MPI_DOUBLE, root, MPI_COMM_WORLD);
            for (long k = 0; k < n; k++)
                bad += rb[k] != (double)(k % 101 + t);
        } else if (strcmp(coll, "send") == 0) {
            int dst = (root + np / 2) % np;
            if (me == root) {
                for (long k = 0; k < n; k++)
                    sb[k] = (double)(k % 89 + t);
                MPI_Send(sb, (int)n, MPI_DOUBLE, dst, 7, MPI_COMM_WORLD);
            } else if (me == dst) {
                MPI_Recv(rb, (int)n, MPI_DOUBLE, root, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (long k = 0; k < n; k++)
                    bad += rb[k] != (double)(k % 89 + t);
            }
        } else if (strcmp(coll, "inter-bcast") == 0) {
            int r = color ? 0 : (local == 0 ? MPI_ROOT : MPI_PROC_NULL);
            for (long k = 0; k < n; k++)
                rb[k] = me == 0 ? (double)(k % 101 + t) : -1.0;
            MPI_Bcast(rb, (int)n, MPI_DOUBLE, r, inter);
            for (long k = 0; color && k < n; k++)
                bad += rb[k] != (double)(k % 101 + t);
        } else if (strcmp(coll, "inter-alltoall") == 0) {
            /* Block j of rank me's buffer goes to rank j of the other group (world rank
             * 2 j + 1 - color) and holds me * 1000 + j + t. */
            int other = np / 2;
            for (int j = 0; j < other; j++)
                for (long k = 0; k < n; k++)
                    sb[j * n + k] = me * 1000.0 + j + t;
            MPI_Alltoall(sb, (int)n, MPI_DOUBLE, rb, (int)n, MPI_DOUBLE, inter);
            for (int j = 0; j < other; j++)
                for (long k = 0; k < n; k++)
                    bad += rb[j * n + k] != (2 * j + 1 - color) * 1000.0 + local + t;
        } else {
            if (me == 0)
                fprintf(stderr, "collbytes: unknown -c %s\n", coll);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (inter != MPI_COMM_NULL) {
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    long all = 0;
    MPI_Reduce(&bad, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        if (all)
            printf("collbytes %s: %ld wrong values\n", coll, all);
        else
            printf("collbytes %s ok\n", coll);
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return all != 0;
}
