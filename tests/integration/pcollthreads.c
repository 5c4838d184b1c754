/* pcollthreads.c: persistent collectives set up by the main thread and run by a worker thread
 * under MPI_THREAD_MULTIPLE, as a solver whose communication thread drives the collectives the
 * setup code created; more of them than a small fixed table holds.
 *
 * Usage: pcollthreads NCOLL ITERS   (any number of ranks)
 *   The main thread creates NCOLL MPI_Allreduce_init requests (one int each, sum) on
 *   MPI_COMM_WORLD. A second thread then, ITERS times, starts them all with MPI_Startall, waits
 *   for them with MPI_Wait one by one (a status each) and, every other iteration, also starts
 *   request 0 alone with MPI_Start and completes it with MPI_Waitall. The main thread joins it,
 *   frees the requests and rank 0 prints a checksum of every result; the program exits 1 when a
 *   result is not the sum it must be. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct job {
    int ncoll, iters, rank, nranks;
    MPI_Request *req;
    int *in, *out;
    long long sum;
    int bad;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    for (int it = 0; it < j->iters; it++) {
        for (int c = 0; c < j->ncoll; c++)
            j->in[c] = j->rank + c + it;
        MPI_Startall(j->ncoll, j->req);
        for (int c = 0; c < j->ncoll; c++) {
            MPI_Status st;
            MPI_Wait(&j->req[c], &st);
        }
        /* Sum over ranks of rank + c + it. */
        for (int c = 0; c < j->ncoll; c++) {
            long long want = (long long)j->nranks * (j->nranks - 1) / 2 + (long long)j->nranks * (c + it);
            if (j->out[c] != want)
                j->bad = 1;
            j->sum += j->out[c];
        }
        if (it % 2 == 1) {
            MPI_Status st[1];
            MPI_Start(&j->req[0]);
            MPI_Waitall(1, &j->req[0], st);
            j->sum += j->out[0];
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    struct job j = {0};
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &j.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &j.nranks);
    if (argc != 3 || provided < MPI_THREAD_MULTIPLE || atoi(argv[1]) <= 0 || atoi(argv[2]) <= 0) {
        if (j.rank == 0)
            fprintf(stderr, "usage: mpiexec -n N pcollthreads NCOLL ITERS (needs MPI_THREAD_MULTIPLE)\n");
        MPI_Finalize();
        return 2;
    }
    j.ncoll = atoi(argv[1]);
    j.iters = atoi(argv[2]);
    j.req = malloc(sizeof *j.req * (size_t)j.ncoll);
    j.in = malloc(sizeof *j.in * (size_t)j.ncoll);
    j.out = malloc(sizeof *j.out * (size_t)j.ncoll);
    if (j.req == NULL || j.in == NULL || j.out == NULL)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (int c = 0; c < j.ncoll; c++)
        MPI_Allreduce_init(&j.in[c], &j.out[c], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &j.req[c]);
    pthread_t th;
    if (pthread_create(&th, NULL, worker, &j) != 0)
        MPI_Abort(MPI_COMM_WORLD, 3);
    pthread_join(th, NULL);
    for (int c = 0; c < j.ncoll; c++)
        MPI_Request_free(&j.req[c]);
    long long total = 0;
    int anybad = 0;
    MPI_Reduce(&j.sum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&j.bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (j.rank == 0)
        printf("pcollthreads: ranks=%d ncoll=%d iters=%d checksum=%lld%s\n", j.nranks, j.ncoll, j.iters, total,
               anybad ? " WRONG" : "");
    free(j.req);
    free(j.in);
    free(j.out);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
