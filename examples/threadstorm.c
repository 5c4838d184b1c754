/* threadstorm.c: MPI_THREAD_MULTIPLE with several threads per rank making MPI calls as fast as
 * they can: each thread exchanges small messages with its twin on the partner rank through
 * MPI_Sendrecv, then receives a few large messages found by polling MPI_Improbe in a tight loop
 * and taken with MPI_Imrecv, as codes that give each thread its own message stream do.
 *
 * Usage: threadstorm THREADS ITERS [COUNTS]   (an even number of ranks; rank r pairs with r ^ 1)
 *   Thread k of each rank (k = 0 .. THREADS-1, started by the main thread) makes ITERS
 *   MPI_Sendrecv of one int with tag k, then, in turn with its twin, sends BIG messages of 64 Ki
 *   ints (tag THREADS + k) and receives the twin's through MPI_Improbe polling and MPI_Imrecv plus
 *   MPI_Wait. Rank 0 prints the sum of everything received, which depends only on the arguments
 *   and the size. With COUNTS, each rank writes COUNTS.RANK: its MPI calls by function, "NAME N"
 *   a line (MPI_Init_thread and MPI_Finalize included), "MPI_Improbe N FOUND" with the calls that
 *   found a message. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define BIG 4
#define BIGN 65536

static int rank, partner, nthreads;
static long iters;

typedef struct work {
    int k;
    long sum, sendrecv, send, improbe, improbe_found, imrecv, wait;
} work;

static void *run(void *p)
{
    work *w = p;
    int k = w->k;
    for (long i = 0; i < iters; i++) {
        int out = (int)(rank * 100000 + i), in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, partner, k, &in, 1, MPI_INT, partner, k, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        w->sendrecv++;
        if (in != (int)(partner * 100000 + i)) {
            fprintf(stderr, "rank %d thread %d: got %d in iteration %ld\n", rank, k, in, i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        w->sum += in;
    }
    int *buf = malloc(BIGN * sizeof *buf), *rbuf = malloc(BIGN * sizeof *rbuf);
    for (int b = 0; b < BIG; b++) {
        for (int j = 0; j < BIGN; j++)
            buf[j] = rank + b + j % 7;
        /* The lower rank sends first: the two never both wait in a send. */
        for (int turn = 0; turn < 2; turn++) {
            if ((turn == 0) == (rank < partner)) {
                MPI_Send(buf, BIGN, MPI_INT, partner, nthreads + k, MPI_COMM_WORLD);
                w->send++;
                continue;
            }
            MPI_Message msg;
            int flag = 0;
            while (!flag) {
                MPI_Improbe(partner, nthreads + k, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE);
                w->improbe++;
            }
            w->improbe_found++;
            MPI_Request req;
            MPI_Imrecv(rbuf, BIGN, MPI_INT, &msg, &req);
            w->imrecv++;
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            w->wait++;
            for (int j = 0; j < BIGN; j += 4096)
                w->sum += rbuf[j];
        }
    }
    free(buf);
    free(rbuf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || size % 2 != 0 || provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "usage: threadstorm THREADS ITERS [COUNTS] (an even number of ranks, "
                            "MPI_THREAD_MULTIPLE)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    nthreads = atoi(argv[1]);
    iters = atol(argv[2]);
    partner = rank ^ 1;
    work *w = calloc((size_t)nthreads, sizeof *w);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    for (int k = 0; k < nthreads; k++)
        w[k].k = k;
    /* The main thread, which made the first MPI call, waits for the others: its part of the
     * tracer's buffer stays taken meanwhile. */
    for (int k = 0; k < nthreads; k++)
        pthread_create(&th[k], NULL, run, &w[k]);
    for (int k = 0; k < nthreads; k++)
        pthread_join(th[k], NULL);
    long sum = 0, total = 0;
    for (int k = 0; k < nthreads; k++)
        sum += w[k].sum;
    MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("threads %d iterations %ld sum %ld\n", nthreads, iters, total);
    if (argc > 3) {
        work t = {0};
        for (int k = 0; k < nthreads; k++) {
            t.sendrecv += w[k].sendrecv;
            t.send += w[k].send;
            t.improbe += w[k].improbe;
            t.improbe_found += w[k].improbe_found;
            t.imrecv += w[k].imrecv;
            t.wait += w[k].wait;
        }
        char path[4200];
        snprintf(path, sizeof path, "%s.%d", argv[3], rank);
        FILE *f = fopen(path, "w");
        if (f == NULL) {
            perror(path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fprintf(f, "MPI_Init_thread 1\nMPI_Finalize 1\nMPI_Reduce 1\nMPI_Sendrecv %ld\nMPI_Send %ld\n"
                   "MPI_Improbe %ld %ld\nMPI_Imrecv %ld\nMPI_Wait %ld\n",
                t.sendrecv, t.send, t.improbe, t.improbe_found, t.imrecv, t.wait);
        fclose(f);
    }
    free(w);
    free(th);
    MPI_Finalize();
    return 0;
}
