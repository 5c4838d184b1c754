/* random30.c: the random 30-communication pattern of Martinasso & Méhaut (2006) §6.2: a chain of
 * nodes whose links each carry one communication of random direction, communication i starting
 * i ms after a common start, with sizes cycling 1, 2, 4, 2, 1 MB.
 *
 * Usage: random30 [-c NCOMM] [-x SCALE] [-S SEED] [-r REPS]       (under mpiexec, 2*NCOMM ranks)
 *        random30 --hosts [-c NCOMM] [-S SEED]                     (no MPI: prints the machinefile)
 *        random30 -N NODES [-c NCOMM] [-x SCALE] [-S SEED] [-r REPS]  (2*NODES ranks, see below)
 *
 * Communication i (1..NCOMM, default 30) joins node i-1 and node i; with probability 1/2 it goes
 * from i-1 to i, else from i to i-1 (drawn from SEED, default 1, with a fixed generator so the
 * pattern is the same on every machine). So every inner node holds two ranks, one per
 * communication, as on the report's dual-processor nodes. Communication i is carried by ranks
 * 2(i-1) (its sender) and 2(i-1)+1 (its receiver); `--hosts` prints that placement, one line per
 * rank. Sizes are m_i = cycle[(i-1) mod 5] MB * SCALE with cycle = 1, 2, 4, 2, 1 (MB = 2^20 bytes);
 * the report lists m1..m5 = 1, 2, 4, 2, 1 and then m9 = 1, m10 = 2, so the period is not fully
 * clear from the text; this program uses period 5. SCALE (default 1) lets tests run small.
 *
 * With -N NODES the same communications are packed onto NODES dual-processor nodes (ranks 2n and
 * 2n+1 on node n, contiguous blocks as `flowcut cluster mpiexec` places them): communication i goes
 * from a random node to another random node, carried by a random rank of each, so a rank takes part
 * in several communications and conflicts of many flows arise, as on a small real cluster. Each
 * rank posts its receives at the start, sends each message at its start time (nonblocking), and
 * takes completions one at a time (MPI_Testany, sleeping 100 us between polls so that the ranks
 * leave the cores to the transfers) so that each receive's end is its own.
 *
 * After a barrier, each sender waits until i ms have passed and sends; each receiver posts its
 * receive at once. The time of a communication is measured on the receiver, from its start time
 * (i ms after the barrier) to the end of the receive. Rank 0 prints the seed and pattern, then per
 * repetition and communication:
 *     rep R comm I A>B bytes N start S time T
 * with seconds, and per communication the median over repetitions:
 *     comm I A>B bytes N start S median T */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_COMMS 1000

/* A small fixed generator (xorshift32), so that a seed names the same pattern everywhere. */
static unsigned rng_next(unsigned *s)
{
    unsigned x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sleeps until MPI_Wtime() reaches `when`: nanosleep for the bulk, so that a waiting rank leaves its
 * core to the others, then a short spin for precision. */
static void wait_until(double when)
{
    for (;;) {
        double left = when - MPI_Wtime();
        if (left <= 0)
            return;
        if (left > 200e-6) {
            struct timespec ts = {0, (long)((left - 100e-6) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
}

static int packed(int nodes, int ncomm, const int *src, const int *dst, const long *bytes, int reps);

int main(int argc, char **argv)
{
    int ncomm = 30, reps = 3, hosts = 0, nodes = 0;
    unsigned seed = 1;
    double scale = 1.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--hosts") == 0)
            hosts = 1;
        else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
            ncomm = atoi(argv[++i]);
        else if (strcmp(argv[i], "-x") == 0 && i + 1 < argc)
            scale = atof(argv[++i]);
        else if (strcmp(argv[i], "-S") == 0 && i + 1 < argc)
            seed = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "-N") == 0 && i + 1 < argc)
            nodes = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: random30 [-c NCOMM] [-x SCALE] [-S SEED] [-r REPS]\n"
                            "       random30 --hosts [-c NCOMM] [-S SEED]\n"
                            "       random30 -N NODES [-c NCOMM] [-x SCALE] [-S SEED] [-r REPS]\n");
            return 2;
        }
    }
    if (ncomm < 1 || ncomm > MAX_COMMS || scale <= 0 || scale > 64 || reps < 1 || seed == 0 ||
        nodes == 1 || nodes < 0 || (nodes && hosts)) {
        fprintf(stderr, "random30: need 1 <= NCOMM <= %d, 0 < SCALE <= 64, REPS >= 1, SEED > 0, "
                        "NODES >= 2 and not with --hosts\n",
                MAX_COMMS);
        return 2;
    }

    static const int cycle_mb[5] = {1, 2, 4, 2, 1};
    static int src[MAX_COMMS], dst[MAX_COMMS];
    static long bytes[MAX_COMMS];
    unsigned s = seed;
    for (int i = 0; i < ncomm; i++) {
        if (nodes) {
            /* Ranks: the sender and receiver ranks, 2 * node + (0 or 1). */
            int a = (int)((rng_next(&s) >> 7) % (unsigned)nodes);
            int b = (int)((rng_next(&s) >> 7) % (unsigned)(nodes - 1));
            b += b >= a;
            src[i] = 2 * a + (int)((rng_next(&s) >> 7) & 1);
            dst[i] = 2 * b + (int)((rng_next(&s) >> 7) & 1);
        } else {
            int fwd = (rng_next(&s) >> 7) & 1;
            src[i] = fwd ? i : i + 1;
            dst[i] = fwd ? i + 1 : i;
        }
        bytes[i] = (long)(cycle_mb[i % 5] * (double)(1 << 20) * scale);
        if (bytes[i] < 1)
            bytes[i] = 1;
    }
    if (hosts) {
        for (int r = 0; r < 2 * ncomm; r++)
            printf("node%d\n", r % 2 ? dst[r / 2] : src[r / 2]);
        return 0;
    }

    MPI_Init(&argc, &argv);
    if (nodes) {
        int rc = packed(nodes, ncomm, src, dst, bytes, reps);
        MPI_Finalize();
        return rc;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 * ncomm) {
        if (rank == 0)
            fprintf(stderr, "random30: %d communications need %d ranks, not %d\n", ncomm,
                    2 * ncomm, size);
        MPI_Finalize();
        return 2;
    }
    int k = rank / 2, sender = rank % 2 == 0;
    char *buf = malloc((size_t)bytes[k]);
    double *t = calloc((size_t)reps + 1, sizeof(double));
    double *all = rank == 0 ? malloc(sizeof(double) * (size_t)size * (size_t)(reps + 1)) : NULL;
    if (!buf || !t || (rank == 0 && !all)) {
        fprintf(stderr, "random30: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 1, (size_t)bytes[k]);
    double start = (k + 1) * 1e-3; /* communication i = k+1 starts i ms after the barrier */
    for (int r = 0; r <= reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (sender) {
            wait_until(t0 + start);
            MPI_Send(buf, (int)bytes[k], MPI_BYTE, rank + 1, r, MPI_COMM_WORLD);
        } else {
            MPI_Recv(buf, (int)bytes[k], MPI_BYTE, rank - 1, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t[r] = MPI_Wtime() - t0 - start;
        }
    }
    MPI_Gather(t, reps + 1, MPI_DOUBLE, all, reps + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("seed %u comms %d scale %g pattern ", seed, ncomm, scale);
        for (int i = 0; i < ncomm; i++)
            printf(i ? "%c%d" : "0%c%d", src[i] < dst[i] ? '>' : '<', i + 1);
        printf("\n");
        /* Repetition 0 opened the connections; it is not reported. */
        for (int r = 1; r <= reps; r++)
            for (int i = 0; i < ncomm; i++)
                printf("rep %d comm %d %d>%d bytes %ld start %.3f time %.6f\n", r - 1, i + 1,
                       src[i], dst[i], bytes[i], (i + 1) * 1e-3, all[(2 * i + 1) * (reps + 1) + r]);
        for (int i = 0; i < ncomm; i++) {
            double *v = all + (2 * i + 1) * (reps + 1) + 1;
            qsort(v, (size_t)reps, sizeof *v, cmp_double);
            double med = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
            printf("comm %d %d>%d bytes %ld start %.3f median %.6f\n", i + 1, src[i], dst[i],
                   bytes[i], (i + 1) * 1e-3, med);
        }
    }
    free(all);
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}

/* The -N mode: ranks exchange the communications src[i] -> dst[i] (rank numbers) of bytes[i], the
 * i-th sent (i + 1) ms after a barrier. Returns the exit status. */
static int packed(int nodes, int ncomm, const int *src, const int *dst, const long *bytes, int reps)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 * nodes) {
        if (rank == 0)
            fprintf(stderr, "random30: -N %d needs %d ranks, not %d\n", nodes, 2 * nodes, size);
        return 2;
    }
    long maxb = 1;
    for (int i = 0; i < ncomm; i++)
        maxb = bytes[i] > maxb ? bytes[i] : maxb;
    char *sbuf = malloc((size_t)maxb), **rbuf = calloc((size_t)ncomm, sizeof *rbuf);
    MPI_Request *req = malloc(sizeof *req * (size_t)ncomm);
    int *which = malloc(sizeof *which * (size_t)ncomm);
    double *t = calloc((size_t)ncomm * (size_t)(reps + 1), sizeof *t), *all = NULL;
    if (rank == 0)
        all = calloc((size_t)ncomm * (size_t)(reps + 1), sizeof *all);
    if (!sbuf || !rbuf || !req || !which || !t || (rank == 0 && !all)) {
        fprintf(stderr, "random30: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 1, (size_t)maxb);
    for (int i = 0; i < ncomm; i++)
        if (dst[i] == rank && (rbuf[i] = malloc((size_t)bytes[i])) == NULL)
            MPI_Abort(MPI_COMM_WORLD, 1);
    for (int r = 0; r <= reps; r++) {
        int n = 0, next = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < ncomm; i++)
            if (dst[i] == rank) {
                which[n] = i;
                MPI_Irecv(rbuf[i], (int)bytes[i], MPI_BYTE, src[i], i, MPI_COMM_WORLD, &req[n++]);
            }
        int pending = n;
        for (;;) {
            while (next < ncomm && src[next] != rank)
                next++;
            if (next == ncomm)
                break;
            /* Until the next send is due, take completed receives as they come, sleeping between
             * polls so that a waiting rank leaves its core to the transfers. */
            while (MPI_Wtime() < t0 + (next + 1) * 1e-3) {
                int idx, flag;
                MPI_Testany(n, req, &idx, &flag, MPI_STATUS_IGNORE);
                if (flag && idx != MPI_UNDEFINED) {
                    if (which[idx] >= 0)
                        t[which[idx] * (reps + 1) + r] = MPI_Wtime() - t0 - (which[idx] + 1) * 1e-3;
                    pending--;
                } else {
                    struct timespec ts = {0, 100000};
                    nanosleep(&ts, NULL);
                }
            }
            which[n] = -1;
            MPI_Isend(sbuf, (int)bytes[next], MPI_BYTE, dst[next], next, MPI_COMM_WORLD, &req[n++]);
            pending++;
            next++;
        }
        /* The same polite polling to the end: eight ranks spinning in MPI_Waitany on a machine
         * with fewer cores would take the CPU the transfers need (UCX moves TCP data only inside
         * MPI calls), and the flows would measure the scheduler rather than the network. A poll
         * every 100 us costs the completion time at most that much, far below a transfer. */
        while (pending > 0) {
            int idx, flag;
            MPI_Testany(n, req, &idx, &flag, MPI_STATUS_IGNORE);
            if (flag && idx == MPI_UNDEFINED)
                break;
            if (!flag) {
                struct timespec ts = {0, 100000};
                nanosleep(&ts, NULL);
                continue;
            }
            if (which[idx] >= 0)
                t[which[idx] * (reps + 1) + r] = MPI_Wtime() - t0 - (which[idx] + 1) * 1e-3;
            pending--;
        }
    }
    /* Each time is known to its receiver only: the others hold zeros, so a sum gathers them. */
    MPI_Reduce(t, all, ncomm * (reps + 1), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("seed nodes %d comms %d pattern", nodes, ncomm);
        for (int i = 0; i < ncomm; i++)
            printf(" %d>%d", src[i], dst[i]);
        printf("\n");
        for (int r = 1; r <= reps; r++)
            for (int i = 0; i < ncomm; i++)
                printf("rep %d comm %d %d>%d bytes %ld start %.3f time %.6f\n", r - 1, i + 1, src[i], dst[i],
                       bytes[i], (i + 1) * 1e-3, all[i * (reps + 1) + r]);
        for (int i = 0; i < ncomm; i++) {
            double *v = all + i * (reps + 1) + 1;
            qsort(v, (size_t)reps, sizeof *v, cmp_double);
            double med = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
            printf("comm %d %d>%d bytes %ld start %.3f median %.6f\n", i + 1, src[i], dst[i], bytes[i],
                   (i + 1) * 1e-3, med);
        }
    }
    for (int i = 0; i < ncomm; i++)
        free(rbuf[i]);
    free(rbuf);
    free(sbuf);
    free(req);
    free(which);
    free(t);
    free(all);
    return 0;
}
