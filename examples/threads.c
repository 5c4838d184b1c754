/* threads.c: two threads per rank exchange messages with the partner rank at the same time under
 * MPI_THREAD_MULTIPLE, each with its own tag; shows that events are recorded per thread.
 *
 * Usage: threads ITERS   (an even number of ranks; rank r pairs with rank r ^ 1)
 *   The main thread (which called MPI_Init_thread) does ITERS MPI_Sendrecv of one int with tag 1.
 *   A second thread, started with pthread_create, does ITERS times MPI_Isend, MPI_Recv and MPI_Wait
 *   of two ints with tag 2. Both threads are joined before an MPI_Reduce; rank 0 prints a checksum. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct job {
    int rank, partner, iters;
    long long sum;
};

/* The second thread's exchange: tag 2, two ints per message. */
static void *second_thread(void *arg)
{
    struct job *j = arg;
    for (int i = 0; i < j->iters; i++) {
        int out[2] = {j->rank, i}, in[2];
        MPI_Request req;
        MPI_Isend(out, 2, MPI_INT, j->partner, 2, MPI_COMM_WORLD, &req);
        MPI_Recv(in, 2, MPI_INT, j->partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        j->sum += in[0] * 3 + in[1];
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, nranks, provided;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 2 || nranks % 2 != 0 || provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n EVEN threads ITERS (needs MPI_THREAD_MULTIPLE)\n");
        MPI_Finalize();
        return 2;
    }
    struct job j = {rank, rank ^ 1, atoi(argv[1]), 0};
    pthread_t th;
    if (pthread_create(&th, NULL, second_thread, &j) != 0) {
        fprintf(stderr, "threads: pthread_create failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long long sum = 0;
    for (int i = 0; i < j.iters; i++) {
        int out = rank * 10 + i, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, j.partner, 1, &in, 1, MPI_INT, j.partner, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        sum += in;
    }
    pthread_join(th, NULL);
    sum += j.sum;
    long long total = 0;
    MPI_Reduce(&sum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("threads: ranks=%d iters=%d checksum=%lld\n", nranks, j.iters, total);
    MPI_Finalize();
    return 0;
}
