/* wildcard.c: rank 0 receives a known set of messages with MPI_ANY_SOURCE and MPI_ANY_TAG, so the
 * actual sources and tags are only known from the statuses; shows how wildcard receives are
 * resolved (also when the program passes MPI_STATUS_IGNORE).
 *
 * Usage: wildcard K
 *   Phase 1: every rank r > 0 sends K messages to rank 0 with MPI_Send; message k (0 <= k < K) has
 *   tag 10 * r + k and holds r + k + 1 ints, each equal to 1000 * r + k. Rank 0 receives the
 *   (N - 1) * K messages in any order, alternately with MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG,
 *   MPI_STATUS_IGNORE) and with MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) plus MPI_Wait.
 *   An MPI_Barrier separates the phases, so no phase-2 message can match a phase-1 receive.
 *   Phase 2: every rank r > 0 sends one int (r) with tag 999; rank 0 receives them with
 *   MPI_Recv(MPI_ANY_SOURCE, 999). Rank 0 prints a checksum that does not depend on the order. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define LAST_TAG 999

int main(int argc, char **argv)
{
    int rank, nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 2 || nranks < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N wildcard K   (N >= 2)\n");
        MPI_Finalize();
        return 2;
    }
    int k_msgs = atoi(argv[1]);
    int cap = nranks + k_msgs + 1; /* longest message: r + k + 1 ints */
    int *buf = malloc(sizeof(int) * (size_t)cap);
    long long checksum = 0;

    if (rank == 0) {
        int total = (nranks - 1) * k_msgs;
        for (int m = 0; m < total; m++) {
            if (m % 2 == 0) {
                MPI_Recv(buf, cap, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Request req;
                MPI_Status st;
                MPI_Irecv(buf, cap, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, &st);
            }
            /* The content names the sender and the message: r = buf / 1000, k = buf % 1000. */
            int r = buf[0] / 1000, k = buf[0] % 1000;
            for (int i = 0; i < r + k + 1; i++)
                checksum += buf[i] * (long long)(i + 1);
        }
    } else {
        for (int k = 0; k < k_msgs; k++) {
            for (int i = 0; i < rank + k + 1; i++)
                buf[i] = 1000 * rank + k;
            MPI_Send(buf, rank + k + 1, MPI_INT, 0, 10 * rank + k, MPI_COMM_WORLD);
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        for (int m = 1; m < nranks; m++) {
            MPI_Status st;
            MPI_Recv(buf, 1, MPI_INT, MPI_ANY_SOURCE, LAST_TAG, MPI_COMM_WORLD, &st);
            checksum += 7LL * buf[0] * st.MPI_SOURCE;
        }
        printf("wildcard: ranks=%d k=%d checksum=%lld\n", nranks, k_msgs, checksum);
    } else {
        MPI_Send(&rank, 1, MPI_INT, 0, LAST_TAG, MPI_COMM_WORLD);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
