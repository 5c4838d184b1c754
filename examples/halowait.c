/* halowait.c: the halo exchange of a stencil code as real codes write it: every step posts the
 * receives and sends to its neighbours on a periodic 1-D ring of ranks, computes its interior
 * while the messages are in flight, and completes all of them with one MPI_Waitall. The time a
 * rank spends computing between post and wait is time its rendezvous messages cannot progress.
 *
 * Usage: halowait STEPS BYTES COMPUTE_US [STAGGER_US [TIMES]]
 *   Each step each rank sends BYTES to its left and right neighbours (tags 0 and 1) and receives
 *   as much from each, computing for COMPUTE_US microseconds (a busy loop) between posting and
 *   waiting. With STAGGER_US, rank r first computes its boundary for r x STAGGER_US microseconds
 *   between posting its receives and posting its sends, as a code whose ranks hold unequal work
 *   does: the two receives of one MPI_Waitall then complete at different times. With TIMES, the
 *   odd steps complete their requests by polling MPI_Test on each instead, and rank r writes to
 *   the file TIMES.r, for each polled step, when its receives completed:
 *     poll STEP POST T0 T1   MPI_Wtime seconds of the receives' post and of the completion of
 *                            the receive from the right (tag 0) and from the left (tag 1)
 *   which the trace's per-request completion times of the MPI_Waitall steps can be set against.
 *   Each message is filled with a value every receiver can recompute (sender, step, direction);
 *   every rank checks every byte it received. Rank 0 prints "halowait: verified" when every rank
 *   found its messages right, and the program exits 1 otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The byte i of the message that rank `from` sends at `step` in direction `dir`. */
static unsigned char fill(int from, int step, int dir, size_t i)
{
    return (unsigned char)(from * 31 + step * 7 + dir * 3 + i);
}

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
    if (argc < 4 || argc > 6) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N halowait STEPS BYTES COMPUTE_US [STAGGER_US [TIMES]]\n");
        MPI_Finalize();
        return 2;
    }
    int steps = atoi(argv[1]);
    size_t bytes = (size_t)atol(argv[2]);
    double us = atof(argv[3]);
    double stagger = argc > 4 ? atof(argv[4]) : 0;
    FILE *times = NULL;
    if (argc > 5) {
        char name[4096];
        snprintf(name, sizeof name, "%s.%d", argv[5], rank);
        if ((times = fopen(name, "w")) == NULL) {
            fprintf(stderr, "halowait: cannot write %s\n", name);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    unsigned char *out[2], *in[2];
    for (int d = 0; d < 2; d++) {
        out[d] = malloc(bytes ? bytes : 1);
        in[d] = malloc(bytes ? bytes : 1);
        if (out[d] == NULL || in[d] == NULL)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int bad = 0;
    for (int s = 0; s < steps; s++) {
        MPI_Request req[4];
        /* Direction 0 travels left, 1 right: what arrives from the right neighbour travelled left. */
        for (size_t i = 0; i < bytes; i++) {
            out[0][i] = fill(rank, s, 0, i);
            out[1][i] = fill(rank, s, 1, i);
        }
        double post = MPI_Wtime();
        MPI_Irecv(in[0], (int)bytes, MPI_BYTE, right, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(in[1], (int)bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD, &req[1]);
        compute(rank * stagger);
        MPI_Isend(out[0], (int)bytes, MPI_BYTE, left, 0, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(out[1], (int)bytes, MPI_BYTE, right, 1, MPI_COMM_WORLD, &req[3]);
        compute(us);
        if (times != NULL && s % 2 == 1) {
            /* Busy-polling MPI_Test on each request, noting when each receive completes. */
            double done[4] = {0, 0, 0, 0};
            int left_to_do = 4;
            while (left_to_do > 0)
                for (int i = 0; i < 4; i++) {
                    int flag = 0;
                    if (done[i] == 0 && MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
                        done[i] = MPI_Wtime();
                        left_to_do--;
                    }
                }
            fprintf(times, "poll %d %.9f %.9f %.9f\n", s, post, done[0], done[1]);
        } else {
            MPI_Status st[4];
            MPI_Waitall(4, req, st);
        }
        for (size_t i = 0; i < bytes; i++)
            bad += in[0][i] != fill(right, s, 0, i) || in[1][i] != fill(left, s, 1, i);
    }
    if (times != NULL && fclose(times) != 0) {
        fprintf(stderr, "halowait: rank %d could not write its times\n", rank);
        bad++;
    }
    int allbad = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Bcast(&allbad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (allbad)
            printf("halowait: %d wrong bytes\n", allbad);
        else
            printf("halowait: verified\n");
    }
    for (int d = 0; d < 2; d++) {
        free(out[d]);
        free(in[d]);
    }
    MPI_Finalize();
    return allbad ? 1 : 0;
}
