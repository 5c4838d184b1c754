/* nhalo.c: a 2-D stencil code whose halos move through the neighbourhood collectives, with
 * built-in verification.
 *
 * Usage: nhalo [-x NX] [-y NY] [-i ITERATIONS] [-c COARSE]
 *   The ranks form a periodic PX x PY grid (MPI_Dims_create, MPI_Cart_create without reordering:
 *   rank = x * PY + y), both at least 3 (9, 12, 16 ... ranks): a rank that is both neighbours along
 *   a dimension gets its two blocks from MPICH 4.0.2's MPI_Neighbor_alltoallv swapped. Each rank owns an NX x NY tile (defaults 64 x 32) of two fields:
 *   - u diffuses (5-point Laplacian). Each iteration its four faces go to the cartesian neighbours
 *     with one MPI_Neighbor_alltoallv: NY doubles along dimension 0, NX along dimension 1.
 *   - v is advected upwind towards +x and +y, so a rank needs the ghosts of its -x and -y
 *     neighbours only: a distributed graph (MPI_Dist_graph_create_adjacent) whose sources are the
 *     -x and -y neighbours and whose destinations the +x and +y ones carries them, with
 *     MPI_Ineighbor_alltoallv overlapped with the diffusion of u and completed by polling
 *     MPI_Test.
 *   - every 5th iteration a coarse level exchanges COARSE doubles (default 16) with each cartesian
 *     neighbour with MPI_Neighbor_alltoall.
 *   Verification: after the first exchanges every ghost cell holds the value its owner's initial
 *   field gives it (exactly), the coarse blocks say who sent them and in which direction, and at
 *   the end the global sums of u and v are those of the start (both schemes conserve them on a
 *   periodic grid). Rank 0 prints one line:
 *       nhalo: grid PXxPY tile NXxNY iterations I ghosts ok coarse ok sums ok */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int NX = 64, NY = 32, ITERS = 20, COARSE = 16;
static int px, py, cx, cy; /* the grid and this rank's coordinates */

/* Cell (i, j) of a tile with ghosts: rows 0 and NX + 1, columns 0 and NY + 1. */
#define AT(f, i, j) ((f)[(size_t)(i) * (NY + 2) + (j)])

/* The initial value of global cell (gi, gj), periodic: exact in a double. */
static double init_value(long gi, long gj, int field)
{
    long gx = (long)px * NX, gy = (long)py * NY;
    gi = ((gi % gx) + gx) % gx;
    gj = ((gj % gy) + gy) % gy;
    return (double)((gi * 131 + gj * 17 + field * 7) % 1000);
}

static double local_sum(const double *f)
{
    double s = 0;
    for (int i = 1; i <= NX; i++)
        for (int j = 1; j <= NY; j++)
            s += AT(f, i, j);
    return s;
}

/* The four faces of u in the order of the cartesian neighbours (dimension 0 -, +, dimension 1 -,
 * +), and the ghosts they fill on arrival. */
static void pack_faces(const double *u, double *out)
{
    for (int j = 1; j <= NY; j++) {
        out[j - 1] = AT(u, 1, j);
        out[NY + j - 1] = AT(u, NX, j);
    }
    for (int i = 1; i <= NX; i++) {
        out[2 * NY + i - 1] = AT(u, i, 1);
        out[2 * NY + NX + i - 1] = AT(u, i, NY);
    }
}

static void unpack_faces(double *u, const double *in)
{
    for (int j = 1; j <= NY; j++) {
        AT(u, 0, j) = in[j - 1];
        AT(u, NX + 1, j) = in[NY + j - 1];
    }
    for (int i = 1; i <= NX; i++) {
        AT(u, i, 0) = in[2 * NY + i - 1];
        AT(u, i, NY + 1) = in[2 * NY + NX + i - 1];
    }
}

/* Whether u's face ghosts hold the neighbours' initial values. */
static int ghosts_ok(const double *u, int field, int upwind_only)
{
    long oi = (long)cx * NX, oj = (long)cy * NY;
    for (int j = 1; j <= NY; j++)
        if (AT(u, 0, j) != init_value(oi - 1, oj + j - 1, field) ||
            (!upwind_only && AT(u, NX + 1, j) != init_value(oi + NX, oj + j - 1, field)))
            return 0;
    for (int i = 1; i <= NX; i++)
        if (AT(u, i, 0) != init_value(oi + i - 1, oj - 1, field) ||
            (!upwind_only && AT(u, i, NY + 1) != init_value(oi + i - 1, oj + NY, field)))
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, opt;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "x:y:i:c:")) != -1) {
        int v = atoi(optarg);
        if (v <= 0 || v > (1 << 14)) {
            opt = '?';
        } else if (opt == 'x') {
            NX = v;
        } else if (opt == 'y') {
            NY = v;
        } else if (opt == 'i') {
            ITERS = v;
        } else if (opt == 'c') {
            COARSE = v;
        }
        if (opt == '?') {
            if (rank == 0)
                fprintf(stderr, "usage: nhalo [-x NX] [-y NY] [-i ITERATIONS] [-c COARSE] (positive, <= 16384)\n");
            MPI_Finalize();
            return 2;
        }
    }

    int dims[2] = {0, 0}, periods[2] = {1, 1}, coords[2];
    MPI_Dims_create(size, 2, dims);
    px = dims[0];
    py = dims[1];
    if (px <= 2 || py <= 2) {
        /* One rank would be both neighbours along a dimension, where MPICH 4.0.2's
         * MPI_Neighbor_alltoallv swaps the two blocks it exchanges with it (its MPI_Neighbor_alltoall
         * does not): the verification would fail for MPI's sake, not the program's. */
        if (rank == 0)
            fprintf(stderr, "nhalo: the %dx%d grid of %d ranks has a dimension of 2 or less; run on 9, 12, 16 ... ranks\n",
                    px, py, size);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm cart, upwind;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 2, coords);
    cx = coords[0];
    cy = coords[1];
    int nb[4];
    MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]);
    MPI_Cart_shift(cart, 1, 1, &nb[2], &nb[3]);
    /* Upwind: ghosts come from -x and -y, faces go to +x and +y. */
    int srcs[2] = {nb[0], nb[2]}, dsts[2] = {nb[1], nb[3]};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &upwind);

    size_t cells = (size_t)(NX + 2) * (NY + 2), faces = 2 * (size_t)(NX + NY);
    double *u = calloc(cells, sizeof *u), *un = calloc(cells, sizeof *un);
    double *v = calloc(cells, sizeof *v), *vn = calloc(cells, sizeof *vn);
    double *usend = malloc(faces * sizeof *usend), *urecv = malloc(faces * sizeof *urecv);
    double *vsend = malloc((size_t)(NX + NY) * sizeof *vsend), *vrecv = malloc((size_t)(NX + NY) * sizeof *vrecv);
    double *csend = malloc(4 * (size_t)COARSE * sizeof *csend), *crecv = malloc(4 * (size_t)COARSE * sizeof *crecv);
    if (!u || !un || !v || !vn || !usend || !urecv || !vsend || !vrecv || !csend || !crecv) {
        fprintf(stderr, "nhalo: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 1; i <= NX; i++)
        for (int j = 1; j <= NY; j++) {
            AT(u, i, j) = init_value((long)cx * NX + i - 1, (long)cy * NY + j - 1, 0);
            AT(v, i, j) = init_value((long)cx * NX + i - 1, (long)cy * NY + j - 1, 1);
        }
    double sums0[2] = {local_sum(u), local_sum(v)}, sums[2];
    MPI_Allreduce(MPI_IN_PLACE, sums0, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    int ucounts[4] = {NY, NY, NX, NX}, udispls[4] = {0, NY, 2 * NY, 2 * NY + NX};
    int vcounts[2] = {NY, NX}, vdispls[2] = {0, NY};
    int ghosts = 1, coarse = 1;
    const double k = 0.1, c = 0.2;
    for (int it = 0; it < ITERS; it++) {
        /* v's upwind faces (row NX to +x, column NY to +y), in flight during u's diffusion. */
        for (int j = 1; j <= NY; j++)
            vsend[j - 1] = AT(v, NX, j);
        for (int i = 1; i <= NX; i++)
            vsend[NY + i - 1] = AT(v, i, NY);
        MPI_Request vreq;
        MPI_Ineighbor_alltoallv(vsend, vcounts, vdispls, MPI_DOUBLE, vrecv, vcounts, vdispls, MPI_DOUBLE, upwind,
                                &vreq);

        pack_faces(u, usend);
        MPI_Neighbor_alltoallv(usend, ucounts, udispls, MPI_DOUBLE, urecv, ucounts, udispls, MPI_DOUBLE, cart);
        unpack_faces(u, urecv);
        if (it == 0)
            ghosts &= ghosts_ok(u, 0, 0);
        for (int i = 1; i <= NX; i++)
            for (int j = 1; j <= NY; j++)
                AT(un, i, j) = AT(u, i, j) + k * (AT(u, i - 1, j) + AT(u, i + 1, j) + AT(u, i, j - 1) +
                                                  AT(u, i, j + 1) - 4 * AT(u, i, j));

        int done = 0;
        while (!done)
            MPI_Test(&vreq, &done, MPI_STATUS_IGNORE);
        for (int j = 1; j <= NY; j++)
            AT(v, 0, j) = vrecv[j - 1];
        for (int i = 1; i <= NX; i++)
            AT(v, i, 0) = vrecv[NY + i - 1];
        if (it == 0)
            ghosts &= ghosts_ok(v, 1, 1);
        for (int i = 1; i <= NX; i++)
            for (int j = 1; j <= NY; j++)
                AT(vn, i, j) = AT(v, i, j) - c * (AT(v, i, j) - AT(v, i - 1, j)) - c * (AT(v, i, j) - AT(v, i, j - 1));

        if (it % 5 == 0) {
            /* The coarse level: block d, towards neighbour d, starts with who sends it where. */
            for (int d = 0; d < 4; d++)
                for (int q = 0; q < COARSE; q++)
                    csend[d * COARSE + q] = q == 0 ? rank * 4 + d : AT(u, 1 + q % NX, 1 + q % NY);
            MPI_Neighbor_alltoall(csend, COARSE, MPI_DOUBLE, crecv, COARSE, MPI_DOUBLE, cart);
            /* What arrives from the neighbour in direction d was sent by it in direction d ^ 1. */
            for (int d = 0; d < 4; d++)
                coarse &= crecv[d * COARSE] == nb[d] * 4 + (d ^ 1);
        }
        double *t = u;
        u = un;
        un = t;
        t = v;
        v = vn;
        vn = t;
    }
    sums[0] = local_sum(u);
    sums[1] = local_sum(v);
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int ok[2] = {ghosts, coarse};
    MPI_Allreduce(MPI_IN_PLACE, ok, 2, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    int sums_ok = fabs(sums[0] - sums0[0]) <= 1e-9 * fabs(sums0[0]) && fabs(sums[1] - sums0[1]) <= 1e-9 * fabs(sums0[1]);
    if (rank == 0)
        printf("nhalo: grid %dx%d tile %dx%d iterations %d ghosts %s coarse %s sums %s\n", px, py, NX, NY, ITERS,
               ok[0] ? "ok" : "WRONG", ok[1] ? "ok" : "WRONG", sums_ok ? "ok" : "WRONG");
    MPI_Comm_free(&upwind);
    MPI_Comm_free(&cart);
    free(u);
    free(un);
    free(v);
    free(vn);
    free(usend);
    free(urecv);
    free(vsend);
    free(vrecv);
    free(csend);
    free(crecv);
    MPI_Finalize();
    return ok[0] && ok[1] && sums_ok ? 0 : 1;
}
