/* bcastmix.c: a broadcast-heavy code: each step broadcasts a large buffer (the model's state)
 * and a small one (its parameters) from a root that moves round the ranks, as codes that share
 * inputs read on one rank do. Each rank checks what it received.
 *
 * Usage: bcastmix [-b BYTES] [-s SMALL] [-r REPS]   (under mpiexec)
 *
 * Byte k of step t's large buffer is (k + 31 t + root) % 251, of the small one (3 k + t) % 253.
 * Rank 0 prints "bcastmix R steps of B and S bytes ok" and the program exits 0, or prints the
 * number of wrong bytes and exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int big = 1 << 20, small = 64, reps = 4, me, np, c;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    while ((c = getopt(argc, argv, "b:s:r:")) != -1) {
        if (c == 'b')
            big = atoi(optarg);
        else if (c == 's')
            small = atoi(optarg);
        else if (c == 'r')
            reps = atoi(optarg);
        else {
            if (me == 0)
                fprintf(stderr, "usage: bcastmix [-b BYTES] [-s SMALL] [-r REPS]\n");
            MPI_Finalize();
            return 2;
        }
    }
    unsigned char *l = malloc((size_t)big + 1), *s = malloc((size_t)small + 1);
    if (l == NULL || s == NULL) {
        fprintf(stderr, "bcastmix: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long bad = 0, all = 0;
    for (int t = 0; t < reps; t++) {
        int root = t % np;
        for (int k = 0; k < big; k++)
            l[k] = me == root ? (unsigned char)((k + 31 * t + root) % 251) : 0;
        for (int k = 0; k < small; k++)
            s[k] = me == root ? (unsigned char)((3 * k + t) % 253) : 0;
        MPI_Bcast(s, small, MPI_BYTE, root, MPI_COMM_WORLD);
        MPI_Bcast(l, big, MPI_BYTE, root, MPI_COMM_WORLD);
        for (int k = 0; k < big; k++)
            bad += l[k] != (unsigned char)((k + 31 * t + root) % 251);
        for (int k = 0; k < small; k++)
            bad += s[k] != (unsigned char)((3 * k + t) % 253);
    }
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        if (all)
            printf("bcastmix %ld wrong bytes\n", all);
        else
            printf("bcastmix %d steps of %d and %d bytes ok\n", reps, big, small);
    }
    free(l);
    free(s);
    MPI_Finalize();
    return all != 0;
}
