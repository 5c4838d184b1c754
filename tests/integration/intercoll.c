/* intercoll.c: collectives on an inter-communicator between the even and the odd ranks of the
 * world, as coupled codes exchange boundary data between two solvers: a broadcast from the first
 * even rank to the odd group, an all-reduce and an all-to-all across the groups, a barrier, the
 * broadcast again non-blocking, and a non-blocking barrier. Each rank checks what it received;
 * rank 0 prints "intercoll ok" and the program exits 0, or the number of wrong values and exits 1.
 * Needs an even number of ranks, at least 2. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int me, np, bad = 0, all = 0;
    MPI_Comm half, inter;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2 || np % 2) {
        if (me == 0)
            fprintf(stderr, "intercoll: run on an even number of ranks\n");
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
