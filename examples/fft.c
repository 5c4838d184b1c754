/* fft.c: the communication of a distributed 3-D FFT, which moves its data in collectives: the
 * transposes of a matrix distributed by rows, first through MPI_Alltoall (N divisible by the ranks,
 * equal blocks), then through MPI_Alltoallv (N + 1 rows, unequal blocks), each verified.
 *
 * Usage: fft [-n N] [-r REPS]   (under mpiexec; N is rounded up to a multiple of the ranks)
 *
 * Element (i, j) of the N x N matrix holds i * N + j; after a transpose the rank that owns row c of
 * the result holds (j, c) at column j, that is j * N + c. Each transpose moves N * N / P doubles
 * off every rank, (P - 1) / P of them to other ranks: with 8 ranks on 4 nodes of 2, each rank
 * sends 6 of its 8 blocks to other nodes. Rank 0 prints "fft N ranks P alltoall ok alltoallv ok"
 * and the program exits 0, or prints what differs and exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rows of an n x n matrix owned by rank r of p: n / p, the first n % p ranks one more. */
static int rows_of(int n, int p, int r)
{
    return n / p + (r < n % p);
}

static int first_row(int n, int p, int r)
{
    return r * (n / p) + (r < n % p ? r : n % p);
}

/* Transposes the rows [first_row(me) ..) of the n x n matrix a (local rows x n) into b (the rows
 * of the transpose this rank owns), through MPI_Alltoall when every block is equal, else
 * MPI_Alltoallv. Returns the number of elements that differ from j * n + c. */
static long transpose(int n, int me, int p, int use_v, double *a, double *sbuf, double *rbuf, double *b)
{
    int my = rows_of(n, p, me), f = first_row(n, p, me);
    int *sc = malloc(4 * (size_t)p * sizeof *sc), *sd = sc + p, *rc = sc + 2 * p, *rd = sc + 3 * p;
    size_t at = 0;
    /* The block for rank d: my rows, d's columns, row-major. */
    for (int d = 0; d < p; d++) {
        int cd = rows_of(n, p, d), fd = first_row(n, p, d);
        sd[d] = (int)at;
        for (int r = 0; r < my; r++)
            for (int c = 0; c < cd; c++)
                sbuf[at++] = a[(size_t)r * n + fd + c];
        sc[d] = (int)at - sd[d];
    }
    at = 0;
    for (int s = 0; s < p; s++) {
        rd[s] = (int)at;
        rc[s] = rows_of(n, p, s) * my;
        at += (size_t)rc[s];
    }
    if (use_v)
        MPI_Alltoallv(sbuf, sc, sd, MPI_DOUBLE, rbuf, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD);
    else
        MPI_Alltoall(sbuf, sc[0], MPI_DOUBLE, rbuf, rc[0], MPI_DOUBLE, MPI_COMM_WORLD);
    /* Block from s: its rows (global fs + r) at my columns (global f + c), row-major. */
    for (int s = 0; s < p; s++) {
        int rs = rows_of(n, p, s), fs = first_row(n, p, s);
        for (int r = 0; r < rs; r++)
            for (int c = 0; c < my; c++)
                b[(size_t)c * n + fs + r] = rbuf[rd[s] + (size_t)r * my + c];
    }
    long bad = 0;
    for (int c = 0; c < my; c++)
        for (int j = 0; j < n; j++)
            bad += b[(size_t)c * n + j] != (double)j * n + (f + c);
    free(sc);
    return bad;
}

static long run(int n, int me, int p, int use_v, int reps)
{
    int my = rows_of(n, p, me), f = first_row(n, p, me);
    size_t sz = (size_t)(my + 1) * n;
    double *a = malloc(sz * sizeof *a), *s = malloc(sz * sizeof *s), *r = malloc(sz * sizeof *r),
           *b = malloc(sz * sizeof *b);
    if (a == NULL || s == NULL || r == NULL || b == NULL) {
        fprintf(stderr, "fft: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < my; i++)
        for (int j = 0; j < n; j++)
            a[(size_t)i * n + j] = (double)(f + i) * n + j;
    long bad = 0;
    for (int k = 0; k < reps; k++)
        bad += transpose(n, me, p, use_v, a, s, r, b);
    long all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    free(a);
    free(s);
    free(r);
    free(b);
    return all;
}

int main(int argc, char **argv)
{
    int n = 512, reps = 2, me, p, c;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    while ((c = getopt(argc, argv, "n:r:")) != -1) {
        if (c == 'n')
            n = atoi(optarg);
        else if (c == 'r')
            reps = atoi(optarg);
        else {
            if (me == 0)
                fprintf(stderr, "usage: fft [-n N] [-r REPS]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (n < p)
        n = p;
    n = (n + p - 1) / p * p;
    long bad1 = run(n, me, p, 0, reps), bad2 = run(n + 1, me, p, 1, reps);
    if (me == 0) {
        if (bad1 || bad2)
            printf("fft %d ranks %d alltoall %ld wrong alltoallv %ld wrong\n", n, p, bad1, bad2);
        else
            printf("fft %d ranks %d alltoall ok alltoallv ok\n", n, p);
    }
    MPI_Finalize();
    return bad1 || bad2;
}
