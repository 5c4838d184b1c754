/* cg.c: a conjugate-gradient solver with the communication of CG-like codes: a halo exchange of
 * one grid row with each neighbour (MPI_Irecv, MPI_Isend, then MPI_Wait, which MPICH completes by
 * polling) and two MPI_Allreduce dot products per iteration.
 *
 * Usage: cg [-x NX] [-y ROWS] [-i ITERS]   (under mpiexec)
 *
 * The grid has NX columns and ROWS rows per rank, stacked by rank. The matrix is the 5-point
 * stencil 4.5 on the diagonal and -1 for each neighbour (zero outside the grid): symmetric and
 * diagonally dominant, so CG converges in a few dozen iterations. The right-hand side is A x* for
 * x*(i, j) = 1 + (i + 2 j) % 7; rank 0 prints "cg converged in K iterations, error E" and the
 * program exits 0 when the largest error is below 1e-8, else 1. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int nx, ny, me, np;

/* Exchanges the first and last local rows with the neighbours into the ghost rows of v (rows -1
 * and ny, stored at v[0 .. nx) and v[(ny + 1) nx ..)). */
static void halo(double *v)
{
    MPI_Request rq[4];
    int n = 0;
    if (me > 0) {
        MPI_Irecv(v, nx, MPI_DOUBLE, me - 1, 1, MPI_COMM_WORLD, &rq[n++]);
        MPI_Isend(v + nx, nx, MPI_DOUBLE, me - 1, 2, MPI_COMM_WORLD, &rq[n++]);
    }
    if (me < np - 1) {
        MPI_Irecv(v + (size_t)(ny + 1) * nx, nx, MPI_DOUBLE, me + 1, 2, MPI_COMM_WORLD, &rq[n++]);
        MPI_Isend(v + (size_t)ny * nx, nx, MPI_DOUBLE, me + 1, 1, MPI_COMM_WORLD, &rq[n++]);
    }
    for (int i = 0; i < n; i++)
        MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
}

/* y = A v on the local rows (v with ghost rows filled). */
static void matvec(const double *v, double *y)
{
    for (int i = 0; i < ny; i++)
        for (int j = 0; j < nx; j++) {
            const double *c = v + (size_t)(i + 1) * nx + j;
            double s = 4.5 * c[0];
            if (j > 0)
                s -= c[-1];
            if (j < nx - 1)
                s -= c[1];
            if (i > 0 || me > 0)
                s -= c[-nx];
            if (i < ny - 1 || me < np - 1)
                s -= c[nx];
            y[(size_t)i * nx + j] = s;
        }
}

static double dot(const double *a, const double *b)
{
    double s = 0, all = 0;
    for (size_t k = 0; k < (size_t)nx * ny; k++)
        s += a[k] * b[k];
    MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv)
{
    int iters = 200, c;
    nx = 256;
    ny = 32;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    while ((c = getopt(argc, argv, "x:y:i:")) != -1) {
        if (c == 'x')
            nx = atoi(optarg);
        else if (c == 'y')
            ny = atoi(optarg);
        else if (c == 'i')
            iters = atoi(optarg);
        else {
            if (me == 0)
                fprintf(stderr, "usage: cg [-x NX] [-y ROWS] [-i ITERS]\n");
            MPI_Finalize();
            return 2;
        }
    }
    size_t n = (size_t)nx * ny, g = (size_t)nx * (ny + 2);
    double *x = calloc(n, sizeof *x), *xs = calloc(g, sizeof *xs), *b = calloc(n, sizeof *b),
           *r = calloc(n, sizeof *r), *p = calloc(g, sizeof *p), *q = calloc(n, sizeof *q);
    if (!x || !xs || !b || !r || !p || !q) {
        fprintf(stderr, "cg: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* b = A x*, computed with the same halo exchange. */
    for (int i = 0; i < ny; i++)
        for (int j = 0; j < nx; j++)
            xs[(size_t)(i + 1) * nx + j] = 1 + ((me * ny + i) + 2 * j) % 7;
    halo(xs);
    matvec(xs, b);
    /* x = 0: r = p = b. */
    for (size_t k = 0; k < n; k++)
        r[k] = p[nx + k] = b[k];
    double rr = dot(r, r), rr0 = rr;
    int k;
    for (k = 0; k < iters && rr > 1e-26 * rr0; k++) {
        halo(p);
        matvec(p, q);
        double alpha = rr / dot(p + nx, q);
        for (size_t t = 0; t < n; t++) {
            x[t] += alpha * p[nx + t];
            r[t] -= alpha * q[t];
        }
        double rr1 = dot(r, r);
        for (size_t t = 0; t < n; t++)
            p[nx + t] = r[t] + rr1 / rr * p[nx + t];
        rr = rr1;
    }
    double err = 0, all = 0;
    for (size_t t = 0; t < n; t++)
        err = fmax(err, fabs(x[t] - xs[nx + t]));
    MPI_Allreduce(&err, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf("cg converged in %d iterations, error %s\n", k, all < 1e-8 ? "below 1e-8" : "too large");
    free(x);
    free(xs);
    free(b);
    free(r);
    free(p);
    free(q);
    MPI_Finalize();
    return all < 1e-8 ? 0 : 1;
}
