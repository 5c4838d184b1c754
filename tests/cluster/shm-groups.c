/* shm-groups.c: prints, from rank 0, the ranks of MPI_COMM_WORLD that MPI places on each shared-memory
 * node (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED), one line per rank: "rank R: A,B,..." with
 * the world ranks of R's node ascending. MPICH takes its nodes from the launcher's process mapping,
 * so this shows how the launcher read its host file. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, nsize;
    MPI_Comm node;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    int *mine = calloc((size_t)size, sizeof *mine), *all = calloc((size_t)size * size, sizeof *all);
    int *members = malloc((size_t)nsize * sizeof *members);
    if (!mine || !all || !members)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, node);
    for (int i = 0; i < nsize; i++)
        mine[members[i]] = 1;
    MPI_Gather(mine, size, MPI_INT, all, size, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < size; r++) {
            printf("rank %d:", r);
            for (int q = 0, first = 1; q < size; q++)
                if (all[(size_t)r * size + q]) {
                    printf("%s%d", first ? " " : ",", q);
                    first = 0;
                }
            printf("\n");
        }
    free(mine);
    free(all);
    free(members);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
