/* psolver.c: an iterative pseudo-spectral solver step with MPI-4 persistent collectives, set up
 * once and started every iteration, as codes that repeat the same exchanges do:
 *   - a transpose, MPI_Alltoall_init of B doubles to every rank, started with MPI_Start and
 *     polled with MPI_Test while the rank smooths its own field;
 *   - the residual, MPI_Allreduce_init of 2 doubles (sum and sum of squares), started with
 *     MPI_Startall and completed with MPI_Wait;
 *   - a redistribution, MPI_Alltoallv_init of uneven blocks (1 + (s + 2 d) % 5 doubles from rank
 *     s to rank d), started with MPI_Start and waited for;
 *   - a boundary exchange of C doubles with the two neighbours of a periodic ring,
 *     MPI_Neighbor_alltoall_init on a cartesian communicator, started and waited for;
 *   - and a point-to-point halo of H doubles with the same neighbours (MPI_Irecv, MPI_Isend,
 *     MPI_Waitall) before the smoothing.
 *
 * Usage: psolver [-b B] [-c C] [-H H] [-i ITERS]   (under mpiexec)
 *
 * Every value sent is a known function of its sender, destination, position and iteration, so
 * each rank checks everything it receives and the residual against the same formulas; rank 0
 * prints "psolver: N iterations verified" and the program exits 0 when all of them hold, else 1. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The value rank `from` sends to rank `to` at position k of the transpose in iteration it. */
static double tval(int from, int to, int k, int it)
{
    return from * 1000.0 + to + 0.5 * k + it;
}

/* The number of doubles rank s sends to rank d in the redistribution. */
static int vcount(int s, int d)
{
    return 1 + (s + 2 * d) % 5;
}

/* The value at position k of the boundary (dir 0: sent to the left, 1: to the right) or halo. */
static double bval(int from, int dir, int k, int it)
{
    return from * 100.0 + dir * 10.0 + 0.25 * k + it;
}

int main(int argc, char **argv)
{
    int b = 512, nc = 64, nh = 256, iters = 20, c, me, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    while ((c = getopt(argc, argv, "b:c:H:i:")) != -1) {
        if (c == 'b')
            b = atoi(optarg);
        else if (c == 'c')
            nc = atoi(optarg);
        else if (c == 'H')
            nh = atoi(optarg);
        else if (c == 'i')
            iters = atoi(optarg);
        else {
            if (me == 0)
                fprintf(stderr, "usage: psolver [-b B] [-c C] [-H H] [-i ITERS]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (b < 1 || nc < 1 || nh < 1 || iters < 1) {
        if (me == 0)
            fprintf(stderr, "psolver: -b, -c, -H and -i take positive numbers\n");
        MPI_Finalize();
        return 2;
    }
    size_t nt = (size_t)b * np;
    double *u = malloc(nt * sizeof *u), *t = malloc(nt * sizeof *t);
    double *w = calloc((size_t)nh + 2 * (size_t)nh, sizeof *w); /* left ghost, own, right ghost */
    double *bs = malloc(2 * (size_t)nc * sizeof *bs), *br = malloc(2 * (size_t)nc * sizeof *br);
    int *vsc = malloc(4 * (size_t)np * sizeof *vsc), *vsd = vsc + np, *vrc = vsd + np, *vrd = vrc + np;
    if (vsc != NULL)
        for (int j = 0, so = 0, ro = 0; j < np; j++) {
            vsc[j] = vcount(me, j);
            vrc[j] = vcount(j, me);
            vsd[j] = so;
            vrd[j] = ro;
            so += vsc[j];
            ro += vrc[j];
        }
    double *vs = malloc(5 * (size_t)np * sizeof *vs), *vr = malloc(5 * (size_t)np * sizeof *vr);
    if (!u || !t || !w || !bs || !br || !vsc || !vs || !vr) {
        fprintf(stderr, "psolver: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int left = (me + np - 1) % np, right = (me + 1) % np, dims[1] = {np}, periods[1] = {1};
    MPI_Comm ring;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);

    /* The persistent collectives, set up once. */
    double part[2], sum[2];
    MPI_Request a2a, red, nbr, a2av;
    MPI_Alltoall_init(u, b, MPI_DOUBLE, t, b, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &a2a);
    MPI_Allreduce_init(part, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &red);
    MPI_Neighbor_alltoall_init(bs, nc, MPI_DOUBLE, br, nc, MPI_DOUBLE, ring, MPI_INFO_NULL, &nbr);
    MPI_Alltoallv_init(vs, vsc, vsd, MPI_DOUBLE, vr, vrc, vrd, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &a2av);

    long bad = 0;
    for (int it = 0; it < iters; it++) {
        /* Halo of the field to smooth. */
        double *own = w + nh;
        for (int k = 0; k < nh; k++)
            own[k] = bval(me, 2, k, it);
        MPI_Request hr[4];
        MPI_Status hs[4];
        MPI_Irecv(w, nh, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &hr[0]);
        MPI_Irecv(w + 2 * (size_t)nh, nh, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &hr[1]);
        MPI_Isend(own, nh, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &hr[2]);
        MPI_Isend(own, nh, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &hr[3]);
        MPI_Waitall(4, hr, hs);
        for (int k = 0; k < nh; k++)
            bad += w[k] != bval(left, 2, k, it) || w[2 * nh + k] != bval(right, 2, k, it);

        /* The transpose, polled while the field is smoothed (a few sweeps at least). */
        for (int j = 0; j < np; j++)
            for (int k = 0; k < b; k++)
                u[(size_t)j * b + k] = tval(me, j, k, it);
        MPI_Start(&a2a);
        int done = 0, sweeps = 0;
        while (!done || sweeps < 4) {
            for (int k = 1; k < 3 * nh - 1; k++)
                w[k] = 0.25 * w[k - 1] + 0.5 * w[k] + 0.25 * w[k + 1];
            sweeps++;
            if (!done)
                MPI_Test(&a2a, &done, MPI_STATUS_IGNORE);
        }
        part[0] = part[1] = 0;
        for (int j = 0; j < np; j++)
            for (int k = 0; k < b; k++) {
                double v = t[(size_t)j * b + k];
                bad += v != tval(j, me, k, it);
                part[0] += v;
                part[1] += v * v;
            }

        /* The residual over all ranks, against the same sums worked out locally. */
        MPI_Startall(1, &red);
        MPI_Wait(&red, MPI_STATUS_IGNORE);
        double want[2] = {0, 0};
        for (int i = 0; i < np; i++)
            for (int j = 0; j < np; j++)
                for (int k = 0; k < b; k++) {
                    double v = tval(j, i, k, it);
                    want[0] += v;
                    want[1] += v * v;
                }
        for (int q = 0; q < 2; q++)
            bad += fabs(sum[q] - want[q]) > 1e-9 * fabs(want[q]);

        /* The redistribution: rank me's part of the transposed data, in uneven blocks. */
        for (int j = 0; j < np; j++)
            for (int k = 0; k < vsc[j]; k++)
                vs[vsd[j] + k] = tval(me, j, k, it) + 0.125;
        MPI_Start(&a2av);
        MPI_Wait(&a2av, MPI_STATUS_IGNORE);
        for (int j = 0; j < np; j++)
            for (int k = 0; k < vrc[j]; k++)
                bad += vr[vrd[j] + k] != tval(j, me, k, it) + 0.125;

        /* The boundary exchange: block 0 goes to the left neighbour, block 1 to the right; the
         * left neighbour's block comes into slot 0, the right one's into slot 1. */
        for (int k = 0; k < nc; k++) {
            bs[k] = bval(me, 0, k, it);
            bs[nc + k] = bval(me, 1, k, it);
        }
        MPI_Start(&nbr);
        MPI_Wait(&nbr, MPI_STATUS_IGNORE);
        for (int k = 0; k < nc; k++)
            bad += br[k] != bval(left, 1, k, it) || br[nc + k] != bval(right, 0, k, it);
    }
    MPI_Request_free(&a2a);
    MPI_Request_free(&red);
    MPI_Request_free(&nbr);
    MPI_Request_free(&a2av);
    MPI_Comm_free(&ring);

    long all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) {
        if (all == 0)
            printf("psolver: %d iterations verified\n", iters);
        else
            printf("psolver: %ld values wrong\n", all);
    }
    free(u);
    free(t);
    free(w);
    free(bs);
    free(br);
    free(vsc);
    free(vs);
    free(vr);
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}
