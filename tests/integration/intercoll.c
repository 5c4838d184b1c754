/* intercoll.c: collectives on an inter-communicator between the even and the odd ranks of the
 * world, as coupled codes exchange boundary data between two solvers: a broadcast from the first
 * even rank to the odd group, an all-reduce and an all-to-all across the groups, a barrier, the
 * broadcast again non-blocking, and a non-blocking barrier; then every other non-blocking
 * collective across the groups (rooted ones on either side, gathers and scatters on both sides of
 * MPICH's 2048-byte inter-communicator threshold, v and w forms of uneven blocks, one block empty),
 * some completed together in one MPI_Waitall, one by busy-polling MPI_Test; and a persistent
 * broadcast and all-reduce started ITERS times together (MPI_Startall, MPI_Waitall). Each rank
 * checks what it received; rank 0 prints "intercoll ok" and the program exits 0, or the number of
 * wrong values and exits 1. Needs an even number of ranks, at least 4. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 3

/* Ialltoallv's and Ialltoallw's block from member j of group c to member k of the other group, in
 * ints: uneven, and empty from the even group's member 1 to the odd group's member 0. */
static int vcount(int c, int j, int k)
{
    return c == 0 && j == 1 && k == 0 ? 0 : 4 * (1 + j + 2 * k + c);
}

/* Iallgatherv's block of member j of group c, in ints. */
static int gvcount(int c, int j)
{
    return 4 * (1 + j + 2 * c);
}

/* The world rank of member k of group c. */
static int world(int c, int k)
{
    return 2 * k + c;
}

/* The sum of the world ranks of group c, of size l. */
static int rank_sum(int c, int l)
{
    return l * (l - 1) + c * l;
}

/* Every non-blocking collective but Ibcast and Ibarrier across the groups of inter (np ranks;
 * this rank is me, member local of group color). Returns the number of wrong values. */
static int nonblocking(MPI_Comm inter, int me, int np, int color, int local)
{
    int l = np / 2, other = 1 - color, bad = 0;
    MPI_Request rq[4];
    MPI_Status st[4];
    /* Iallreduce of 256 doubles: each group gets the other's sum. */
    double *x = malloc(256 * sizeof *x), *y = malloc(256 * sizeof *y);
    for (int i = 0; i < 256; i++)
        x[i] = (1 + color) * (i + 1.0);
    MPI_Iallreduce(x, y, 256, MPI_DOUBLE, MPI_SUM, inter, &rq[0]);
    MPI_Wait(&rq[0], &st[0]);
    for (int i = 0; i < 256; i++)
        bad += y[i] != l * (1 + other) * (i + 1.0);
    free(x);
    free(y);

    int *a = malloc(4096 * sizeof *a), *b = malloc(4096 * sizeof *b), *c = malloc(4096 * sizeof *c);
    /* Ireduce of 128 ints from the evens to the odd group's member 1 (world rank 3). */
    for (int i = 0; i < 128; i++)
        a[i] = me + i;
    int root = color == 0 ? 1 : (local == 1 ? MPI_ROOT : MPI_PROC_NULL);
    MPI_Ireduce(a, b, 128, MPI_INT, MPI_SUM, root, inter, &rq[0]);
    MPI_Wait(&rq[0], &st[0]);
    for (int i = 0; root == MPI_ROOT && i < 128; i++)
        bad += b[i] != rank_sum(0, l) + l * i;

    /* Igather to world rank 0 of 16 ints (below MPICH's threshold) and Iscatter from world rank
     * 1 of 16 ints, completed together. */
    int groot = color ? 0 : (local == 0 ? MPI_ROOT : MPI_PROC_NULL);
    int sroot = color ? (local == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (int i = 0; i < 16; i++)
        a[i] = me * 1000 + i;
    for (int k = 0; k < l; k++)
        for (int i = 0; i < 16; i++)
            c[k * 16 + i] = k * 1000 + i;
    MPI_Igather(a, 16, MPI_INT, b, 16, MPI_INT, groot, inter, &rq[0]);
    MPI_Iscatter(c, 16, MPI_INT, a + 16, 16, MPI_INT, sroot, inter, &rq[1]);
    MPI_Waitall(2, rq, st);
    for (int k = 0; groot == MPI_ROOT && k < l; k++)
        for (int i = 0; i < 16; i++)
            bad += b[k * 16 + i] != world(1, k) * 1000 + i;
    for (int i = 0; color == 0 && i < 16; i++)
        bad += a[16 + i] != local * 1000 + i;

    /* The same with 1024 ints a block (above the threshold). */
    int *big = malloc((size_t)l * 1024 * sizeof *big);
    for (int i = 0; i < 1024; i++)
        a[i] = me * 10000 + i;
    MPI_Igather(a, 1024, MPI_INT, big, 1024, MPI_INT, groot, inter, &rq[0]);
    MPI_Wait(&rq[0], &st[0]);
    for (int k = 0; groot == MPI_ROOT && k < l; k++)
        for (int i = 0; i < 1024; i++)
            bad += big[k * 1024 + i] != world(1, k) * 10000 + i;
    for (int k = 0; k < l; k++)
        for (int i = 0; i < 1024; i++)
            big[k * 1024 + i] = k * 10000 + i;
    MPI_Iscatter(big, 1024, MPI_INT, b, 1024, MPI_INT, sroot, inter, &rq[0]);
    MPI_Wait(&rq[0], &st[0]);
    for (int i = 0; color == 0 && i < 1024; i++)
        bad += b[i] != local * 10000 + i;
    free(big);

    /* Igatherv to world rank 3 of (member + 1) x 8 ints from each even rank, and Iscatterv from
     * world rank 2 of (member + 1) x 16 ints to each odd rank, busy-polled. */
    int counts[64], displs[64], done = 0;
    for (int k = 0, at = 0; k < l; k++) {
        counts[k] = (k + 1) * 8;
        displs[k] = at;
        at += counts[k];
    }
    for (int i = 0; i < (local + 1) * 8; i++)
        a[i] = me * 1000 + i;
    MPI_Igatherv(a, (local + 1) * 8, MPI_INT, b, counts, displs, MPI_INT, root, inter, &rq[0]);
    MPI_Wait(&rq[0], &st[0]);
    for (int k = 0; root == MPI_ROOT && k < l; k++)
        for (int i = 0; i < counts[k]; i++)
            bad += b[displs[k] + i] != world(0, k) * 1000 + i;
    int vroot = color ? 1 : (local == 1 ? MPI_ROOT : MPI_PROC_NULL);
    for (int k = 0, at = 0; k < l; k++) {
        counts[k] = (k + 1) * 16;
        displs[k] = at;
        for (int i = 0; i < counts[k]; i++)
            c[at + i] = k * 1000 + i;
        at += counts[k];
    }
    MPI_Iscatterv(c, counts, displs, MPI_INT, a, (local + 1) * 16, MPI_INT, vroot, inter, &rq[0]);
    while (!done)
        MPI_Test(&rq[0], &done, &st[0]);
    for (int i = 0; color == 1 && i < (local + 1) * 16; i++)
        bad += a[i] != local * 1000 + i;

    /* Iallgather of 8 ints, Iallgatherv of uneven blocks. */
    for (int i = 0; i < 8; i++)
        a[i] = me * 10 + i;
    MPI_Iallgather(a, 8, MPI_INT, b, 8, MPI_INT, inter, &rq[0]);
    MPI_Wait(&rq[0], &st[0]);
    for (int k = 0; k < l; k++)
        for (int i = 0; i < 8; i++)
            bad += b[k * 8 + i] != world(other, k) * 10 + i;
    for (int k = 0, at = 0; k < l; k++) {
        counts[k] = gvcount(other, k);
        displs[k] = at;
        at += counts[k];
    }
    for (int i = 0; i < gvcount(color, local); i++)
        a[i] = me * 100 + i;
    MPI_Iallgatherv(a, gvcount(color, local), MPI_INT, b, counts, displs, MPI_INT, inter, &rq[0]);
    MPI_Wait(&rq[0], &st[0]);
    for (int k = 0; k < l; k++)
        for (int i = 0; i < counts[k]; i++)
            bad += b[displs[k] + i] != world(other, k) * 100 + i;

    /* Ialltoall of 1024 ints a peer; Ialltoallv and Ialltoallw of vcount blocks. */
    int *out = malloc((size_t)l * 1024 * sizeof *out), *in = malloc((size_t)l * 1024 * sizeof *in);
    for (int k = 0; k < l; k++)
        for (int i = 0; i < 1024; i++)
            out[k * 1024 + i] = me * 100000 + k * 1024 + i;
    MPI_Ialltoall(out, 1024, MPI_INT, in, 1024, MPI_INT, inter, &rq[0]);
    MPI_Wait(&rq[0], &st[0]);
    for (int j = 0; j < l; j++)
        for (int i = 0; i < 1024; i++)
            bad += in[j * 1024 + i] != world(other, j) * 100000 + local * 1024 + i;
    int sc[64], sd[64], rc[64], rd[64], sb[64], rb[64];
    MPI_Datatype ty[64];
    for (int k = 0, so = 0, ro = 0; k < l; k++) {
        sc[k] = vcount(color, local, k);
        rc[k] = vcount(other, k, local);
        sd[k] = so;
        rd[k] = ro;
        sb[k] = so * (int)sizeof(int);
        rb[k] = ro * (int)sizeof(int);
        ty[k] = MPI_INT;
        for (int i = 0; i < sc[k]; i++)
            out[so + i] = me * 1000 + k * 100 + i;
        so += sc[k];
        ro += rc[k];
    }
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < l * 1024; i++)
            in[i] = -1;
        if (w == 0)
            MPI_Ialltoallv(out, sc, sd, MPI_INT, in, rc, rd, MPI_INT, inter, &rq[0]);
        else
            MPI_Ialltoallw(out, sc, sb, ty, in, rc, rb, ty, inter, &rq[0]);
        MPI_Wait(&rq[0], &st[0]);
        for (int j = 0; j < l; j++)
            for (int i = 0; i < rc[j]; i++)
                bad += in[rd[j] + i] != world(other, j) * 1000 + local * 100 + i;
    }
    free(out);
    free(in);

    /* Ireduce_scatter and Ireduce_scatter_block of 8 ints a member: member k of each group gets
     * block k of the other group's sum. */
    for (int i = 0; i < 8 * l; i++)
        a[i] = me * 100 + i;
    for (int k = 0; k < l; k++)
        counts[k] = 8;
    MPI_Ireduce_scatter(a, b, counts, MPI_INT, MPI_SUM, inter, &rq[0]);
    MPI_Ireduce_scatter_block(a, c, 8, MPI_INT, MPI_SUM, inter, &rq[1]);
    MPI_Waitall(2, rq, st);
    for (int i = 0; i < 8; i++) {
        int want = 100 * rank_sum(other, l) + l * (8 * local + i);
        bad += (b[i] != want) + (c[i] != want);
    }
    free(a);
    free(b);
    free(c);
    return bad;
}

/* A persistent broadcast of 64 doubles from world rank 0 to the odd group and a persistent
 * all-reduce of 256 doubles across the groups, started ITERS times together. */
static int persistent(MPI_Comm inter, int np, int color, int local)
{
    int l = np / 2, bad = 0;
    double v[64], x[256], y[256];
    MPI_Request rq[2];
    MPI_Status st[2];
    int root = color ? 0 : (local == 0 ? MPI_ROOT : MPI_PROC_NULL);
    MPI_Bcast_init(v, 64, MPI_DOUBLE, root, inter, MPI_INFO_NULL, &rq[0]);
    MPI_Allreduce_init(x, y, 256, MPI_DOUBLE, MPI_SUM, inter, MPI_INFO_NULL, &rq[1]);
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < 64; i++)
            v[i] = color ? -1.0 : it * 100 + i;
        for (int i = 0; i < 256; i++)
            x[i] = (1 + color) * (it + i + 1.0);
        MPI_Startall(2, rq);
        MPI_Waitall(2, rq, st);
        for (int i = 0; color && i < 64; i++)
            bad += v[i] != it * 100 + i;
        for (int i = 0; i < 256; i++)
            bad += y[i] != l * (2 - color) * (it + i + 1.0);
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    return bad;
}

int main(int argc, char **argv)
{
    int me, np, bad = 0, all = 0;
    MPI_Comm half, inter;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 4 || np % 2) {
        if (me == 0)
            fprintf(stderr, "intercoll: run on an even number of ranks, at least 4\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int color = me % 2, local;
    MPI_Comm_split(MPI_COMM_WORLD, color, me, &half);
    MPI_Comm_rank(half, &local);
    /* The other group's leader is world rank 1 (for the evens) or 0 (for the odds). */
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7, &inter);
    double v[64];
    for (int i = 0; i < 64; i++)
        v[i] = color ? -1.0 : i + 0.5;
    int root = color ? 0 : (local == 0 ? MPI_ROOT : MPI_PROC_NULL);
    MPI_Bcast(v, 64, MPI_DOUBLE, root, inter);
    for (int i = 0; color && i < 64; i++)
        bad += v[i] != i + 0.5;
    /* The all-reduce gives each group the sum over the other group: (1 + color) per rank there. */
    double x = 1 + color, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, inter);
    bad += sum != (np / 2) * (color ? 1.0 : 2.0);
    int out[64], in[64];
    for (int i = 0; i < np / 2; i++)
        out[i] = me * 100 + i;
    MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, inter);
    /* Block j comes from rank j of the other group, world rank 2 j + 1 - color. */
    for (int j = 0; j < np / 2; j++)
        bad += in[j] != (2 * j + 1 - color) * 100 + local;
    MPI_Barrier(inter);
    /* The same broadcast, non-blocking, completed by a wait. */
    MPI_Request rq;
    for (int i = 0; color && i < 64; i++)
        v[i] = -1.0;
    MPI_Ibcast(v, 64, MPI_DOUBLE, root, inter, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int i = 0; color && i < 64; i++)
        bad += v[i] != i + 0.5;
    /* A non-blocking barrier across the groups, completed by a wait. */
    MPI_Ibarrier(inter, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    bad += nonblocking(inter, me, np, color, local);
    bad += persistent(inter, np, color, local);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        if (all)
            printf("intercoll: %d wrong values\n", all);
        else
            printf("intercoll ok\n");
    }
    MPI_Finalize();
    return all != 0;
}
