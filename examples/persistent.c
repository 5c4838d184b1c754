/* persistent.c: neighbours on a ring exchange arrays through persistent requests, set up once with
 * MPI_Send_init/MPI_Recv_init and reused every cycle with MPI_Startall/MPI_Waitall, then released
 * with MPI_Request_free; shows the persistent-request life cycle.
 *
 * Usage: persistent CYCLES COUNT
 *   Each rank sets up four requests: receive COUNT ints from the left neighbour (tag 7) and
 *   COUNT + 1 ints from the right neighbour (tag 8); send COUNT ints to the right (tag 7) and
 *   COUNT + 1 ints to the left (tag 8). Each of the CYCLES cycles starts the four with one
 *   MPI_Startall and completes them with one MPI_Waitall. Rank 0 prints a checksum. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N persistent CYCLES COUNT\n");
        MPI_Finalize();
        return 2;
    }
    int cycles = atoi(argv[1]), count = atoi(argv[2]);
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    size_t room = (size_t)count + 1;
    int *to_right = malloc(room * sizeof(int)), *to_left = malloc(room * sizeof(int));
    int *from_left = malloc(room * sizeof(int)), *from_right = malloc(room * sizeof(int));

    MPI_Request req[4];
    MPI_Recv_init(from_left, count, MPI_INT, left, 7, MPI_COMM_WORLD, &req[0]);
    MPI_Recv_init(from_right, count + 1, MPI_INT, right, 8, MPI_COMM_WORLD, &req[1]);
    MPI_Send_init(to_right, count, MPI_INT, right, 7, MPI_COMM_WORLD, &req[2]);
    MPI_Send_init(to_left, count + 1, MPI_INT, left, 8, MPI_COMM_WORLD, &req[3]);

    long long local = 0;
    for (int c = 0; c < cycles; c++) {
        /* The buffers of inactive persistent requests may be refilled between cycles. */
        for (int i = 0; i <= count; i++) {
            to_right[i] = rank * 100 + c * 10 + i;
            to_left[i] = -(rank * 100 + c * 10 + i);
        }
        MPI_Status st[4];
        MPI_Startall(4, req);
        MPI_Waitall(4, req, st);
        for (int i = 0; i < count; i++)
            local += from_left[i] - from_right[i];
        local += -from_right[count];
    }
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&req[i]);

    long long total = 0;
    MPI_Reduce(&local, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("persistent: ranks=%d cycles=%d count=%d checksum=%lld\n", nranks, cycles, count, total);
    free(to_right);
    free(to_left);
    free(from_left);
    free(from_right);
    MPI_Finalize();
    return 0;
}
