/* masterworker.c: a master hands out tasks to workers that ask for them: the master receives from
 * MPI_ANY_SOURCE (a request, or a worker's result), and answers that worker with the next task or
 * a stop. Small messages whose time is mostly a worker or the master being busy elsewhere.
 *
 * Usage: masterworker TASKS BYTES COMPUTE_US
 *   Task t (0 .. TASKS-1) is BYTES long (at least 8), its first 8 bytes holding t and the others
 *   t mod 256; a worker checks them, computes for COMPUTE_US microseconds (a busy loop) and returns
 *   8 bytes: t * t. The master adds the results and checks the sum against the closed form
 *   (TASKS-1) TASKS (2 TASKS-1) / 6 and that every task came back once. Rank 0 prints
 *   "masterworker: verified" and the program exits 0 when all is right, 1 otherwise. Needs 2 ranks
 *   or more. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_ASK = 1, TAG_TASK = 2, TAG_STOP = 3 };

static void compute(double us)
{
    double end = MPI_Wtime() + us * 1e-6;
    volatile double x = 1;
    while (MPI_Wtime() < end)
        x = x * 1.0000001 + 1e-9;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4 || atol(argv[2]) < 8 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N(>=2) masterworker TASKS BYTES(>=8) COMPUTE_US\n");
        MPI_Finalize();
        return 2;
    }
    uint64_t tasks = (uint64_t)atoll(argv[1]);
    size_t bytes = (size_t)atol(argv[2]);
    double us = atof(argv[3]);
    unsigned char *buf = malloc(bytes);
    if (buf == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int bad = 0;
    if (rank == 0) {
        uint64_t next = 0, sum = 0, back = 0;
        int stopped = 0;
        unsigned char *seen = calloc(tasks ? tasks : 1, 1);
        /* Every message to the master is 8 bytes: 0 asks for work, else 1 + the result's task
         * number's square, so that a result also asks for the next task. */
        while (stopped < size - 1) {
            uint64_t msg;
            MPI_Status st;
            MPI_Recv(&msg, 8, MPI_BYTE, MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &st);
            if (msg != 0) {
                sum += msg - 1;
                back++;
            }
            if (next < tasks) {
                memcpy(buf, &next, 8);
                memset(buf + 8, (int)(next % 256), bytes - 8);
                seen[next]++;
                MPI_Send(buf, (int)bytes, MPI_BYTE, st.MPI_SOURCE, TAG_TASK, MPI_COMM_WORLD);
                next++;
            } else {
                MPI_Send(buf, 0, MPI_BYTE, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD);
                stopped++;
            }
        }
        uint64_t want = tasks ? (tasks - 1) * tasks * (2 * tasks - 1) / 6 : 0;
        bad += sum != want || back != tasks;
        for (uint64_t t = 0; t < tasks; t++)
            bad += seen[t] != 1;
        free(seen);
    } else {
        uint64_t msg = 0;
        for (;;) {
            MPI_Status st;
            MPI_Send(&msg, 8, MPI_BYTE, 0, TAG_ASK, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG == TAG_STOP)
                break;
            uint64_t t;
            memcpy(&t, buf, 8);
            for (size_t i = 8; i < bytes; i++)
                bad += buf[i] != (unsigned char)(t % 256);
            compute(us);
            msg = 1 + t * t;
        }
    }
    int allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (allbad)
            printf("masterworker: %d errors\n", allbad);
        else
            printf("masterworker: verified\n");
    }
    free(buf);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
