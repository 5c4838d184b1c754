/* polling.c: a master that takes its workers' results with MPI_Testany every 100 us, computing
 * between polls, and workers that poll their own sends with MPI_Test and the master's next task
 * with MPI_Iprobe: the polling loops of codes that overlap their own work with communication, where
 * nearly every poll finds nothing.
 *
 * Usage: polling ROUNDS [COUNTS]   (at least 2 ranks; rank 0 is the master)
 *   Each round the master posts one MPI_Irecv per worker (tag = round) and polls them with
 *   MPI_Testany, computing about 100 us after each poll that found nothing, until all have come;
 *   then it sends each worker its next task (MPI_Send). Worker w computes for
 *   10 x ((w + round) % 4 + 1) ms, sends its result with MPI_Isend and polls that send with MPI_Test, then polls for the
 *   master's task with MPI_Iprobe in a tight loop and receives it with MPI_Recv.
 *   The master prints the sum of all results, which depends on nothing but ROUNDS and the size.
 *   With COUNTS, each rank writes COUNTS.RANK: for each polling function, its calls and how many
 *   of them found something, in the form "MPI_Testany CALLS FOUND". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Computes for about us microseconds, as a busy loop that reads the clock. */
static double compute(double us)
{
    double t0 = MPI_Wtime(), x = 0;
    while ((MPI_Wtime() - t0) * 1e6 < us)
        for (int i = 0; i < 100; i++)
            x += i * 1e-9;
    return x;
}

enum { TESTANY, TEST, IPROBE, NPOLL };
static const char *const names[NPOLL] = {"MPI_Testany", "MPI_Test", "MPI_Iprobe"};
static long calls[NPOLL], found[NPOLL];

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: polling ROUNDS [COUNTS] (at least 2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rounds = atoi(argv[1]), nw = size - 1;
    long sum = 0;
    double sink = 0;
    if (rank == 0) {
        long *res = calloc((size_t)nw, sizeof *res);
        MPI_Request *req = calloc((size_t)nw, sizeof *req);
        for (int r = 0; r < rounds; r++) {
            for (int w = 0; w < nw; w++)
                MPI_Irecv(&res[w], 1, MPI_LONG, w + 1, r, MPI_COMM_WORLD, &req[w]);
            for (int done = 0; done < nw;) {
                int idx, flag;
                MPI_Testany(nw, req, &idx, &flag, MPI_STATUS_IGNORE);
                calls[TESTANY]++;
                if (flag && idx != MPI_UNDEFINED) {
                    found[TESTANY]++;
                    sum += res[idx];
                    done++;
                } else {
                    sink += compute(100);
                }
            }
            for (int w = 0; w < nw; w++) {
                int task = r + 1;
                MPI_Send(&task, 1, MPI_INT, w + 1, 0, MPI_COMM_WORLD);
            }
        }
        free(res);
        free(req);
        printf("rounds %d workers %d sum %ld\n", rounds, nw, sum);
    } else {
        for (int r = 0; r < rounds; r++) {
            sink += compute(10000.0 * ((rank + r) % 4 + 1));
            long result = (long)rank * 1000 + r;
            MPI_Request sreq;
            MPI_Isend(&result, 1, MPI_LONG, 0, r, MPI_COMM_WORLD, &sreq);
            for (int flag = 0; !flag;) {
                MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE);
                calls[TEST]++;
                found[TEST] += flag != 0;
            }
            for (int flag = 0; !flag;) {
                MPI_Iprobe(0, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                calls[IPROBE]++;
                found[IPROBE] += flag != 0;
            }
            int task;
            MPI_Recv(&task, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (task != r + 1) {
                fprintf(stderr, "rank %d: task %d in round %d\n", rank, task, r);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    if (argc > 2) {
        char path[4200];
        snprintf(path, sizeof path, "%s.%d", argv[2], rank);
        FILE *f = fopen(path, "w");
        if (f == NULL) {
            perror(path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int k = 0; k < NPOLL; k++)
            fprintf(f, "%s %ld %ld\n", names[k], calls[k], found[k]);
        fclose(f);
    }
    MPI_Finalize();
    return sink < 0; /* keeps the computation */
}
