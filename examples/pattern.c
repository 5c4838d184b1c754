/* pattern.c: the synthetic programs of Martinasso & Méhaut (2006) §4.1: a set of simultaneous,
 * equal-sized communications between nodes, written as a pattern such as 0>1<2, each one timed.
 *
 * Usage: pattern [-s BYTES] [-r REPS] [-p] PATTERN   (under mpiexec, 2 ranks per arrow)
 *        pattern --hosts PATTERN                       (no MPI: prints the machinefile it needs)
 *
 * PATTERN is a chain of node numbers joined by arrows, as in the report: "0>1<2" is two
 * communications, node 0 to node 1 and node 2 to node 1. An arrow may join a node to itself
 * ("0>0", a communication inside node 0). Arrow k (counted from 0, left to right) is carried by
 * ranks 2k (the sender) and 2k+1 (the receiver), placed on the nodes it joins; every rank only
 * sends or only receives, as in the report. `--hosts` prints that placement as a Hydra machinefile,
 * one line per rank ("node<N>"); on a real cluster, replace the names by real host names.
 *
 * Each repetition starts with an MPI_Barrier; every sender then calls MPI_Send and every receiver
 * MPI_Recv of BYTES bytes (default 4 MiB). The time of a communication is taken on the receiving
 * side, from the end of the barrier to the end of MPI_Recv: over TCP, MPI_Send returns as soon as
 * the data fits in the socket buffers (several MB), long before it has crossed the link, whereas the
 * receive ends when the last byte has arrived. One untimed repetition first opens the connections.
 * Rank 0 prints, for each repetition and arrow, a line
 *     rep R comm K A>B bytes N time T
 * and then for each arrow
 *     comm K A>B bytes N median T min T max T
 * with times in seconds. With -p (ping-pong), each receiver sends the message back and the time is
 * half the round trip seen by the sender: the steady rate of the path, without the start-up of a
 * one-way transfer (about 35 ms for MPICH 4.0 over UCX/TCP on the emulated cluster, measured).
 * If the placement does not match the pattern (ranks of one node on
 * different hosts, or FLOWCUT_NODE naming another node), rank 0 warns on stderr. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COMMS 256

struct comm {
    int src, dst; /* nodes */
};

/* Parses PATTERN into comms; returns the number of communications, or -1 with a message. */
static int parse_pattern(const char *p, struct comm *c, int max)
{
    int n = 0;
    char *end;
    long a = strtol(p, &end, 10);
    if (end == p || a < 0) {
        fprintf(stderr, "pattern: '%s' must start with a node number\n", p);
        return -1;
    }
    p = end;
    while (*p) {
        char arrow = *p++;
        if (arrow != '>' && arrow != '<') {
            fprintf(stderr, "pattern: expected '>' or '<' at '%s'\n", p - 1);
            return -1;
        }
        long b = strtol(p, &end, 10);
        if (end == p || b < 0) {
            fprintf(stderr, "pattern: expected a node number after '%c'\n", arrow);
            return -1;
        }
        if (n == max) {
            fprintf(stderr, "pattern: more than %d communications\n", max);
            return -1;
        }
        c[n].src = (int)(arrow == '>' ? a : b);
        c[n].dst = (int)(arrow == '>' ? b : a);
        n++;
        a = b;
        p = end;
    }
    if (n == 0) {
        fprintf(stderr, "pattern: '%s' has no arrow\n", p);
        return -1;
    }
    return n;
}

static int node_of_rank(const struct comm *c, int rank)
{
    return rank % 2 ? c[rank / 2].dst : c[rank / 2].src;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Warns once if the ranks are not placed as the pattern says: two ranks share a node in the
 * pattern exactly when they share a host (or FLOWCUT_NODE, which the emulated cluster sets). */
static void check_placement(const struct comm *c, int rank, int size)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = "";
    const char *env = getenv("FLOWCUT_NODE");
    if (env) {
        snprintf(mine, sizeof mine, "%s", env);
    } else {
        int len;
        MPI_Get_processor_name(mine, &len);
    }
    char *all = rank == 0 ? malloc((size_t)size * MPI_MAX_PROCESSOR_NAME) : NULL;
    MPI_Gather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (rank != 0)
        return;
    for (int i = 0; i < size; i++) {
        const char *ni = all + (size_t)i * MPI_MAX_PROCESSOR_NAME;
        char want[32];
        snprintf(want, sizeof want, "node%d", node_of_rank(c, i));
        if (env && strncmp(ni, "node", 4) == 0 && strcmp(ni, want) != 0) {
            fprintf(stderr, "pattern: warning: rank %d runs on %s, the pattern puts it on %s "
                            "(use the machinefile of `pattern --hosts`)\n", i, ni, want);
            break;
        }
        for (int j = 0; j < i; j++) {
            const char *nj = all + (size_t)j * MPI_MAX_PROCESSOR_NAME;
            int same_host = strcmp(ni, nj) == 0;
            int same_node = node_of_rank(c, i) == node_of_rank(c, j);
            if (same_host != same_node) {
                fprintf(stderr, "pattern: warning: ranks %d and %d are %s but the pattern puts "
                                "them on %s nodes\n", j, i, same_host ? "on one host" : "on two hosts",
                        same_node ? "the same" : "different");
                i = size;
                break;
            }
        }
    }
    free(all);
}

static void usage(void)
{
    fprintf(stderr, "usage: pattern [-s BYTES] [-r REPS] [-p] PATTERN\n"
                    "       pattern --hosts PATTERN\n");
}

int main(int argc, char **argv)
{
    long bytes = 4L << 20;
    int reps = 5, hosts = 0, pingpong = 0;
    const char *pat = NULL;
    struct comm c[MAX_COMMS];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--hosts") == 0)
            hosts = 1;
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
            bytes = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "-p") == 0)
            pingpong = 1;
        else if (argv[i][0] != '-' && !pat)
            pat = argv[i];
        else {
            usage();
            return 2;
        }
    }
    if (!pat || bytes <= 0 || bytes > (1L << 30) || reps <= 0) {
        usage();
        return 2;
    }
    int n = parse_pattern(pat, c, MAX_COMMS);
    if (n < 0)
        return 2;
    if (hosts) {
        for (int r = 0; r < 2 * n; r++)
            printf("node%d\n", node_of_rank(c, r));
        return 0;
    }

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 * n) {
        if (rank == 0)
            fprintf(stderr, "pattern: %s has %d communications and needs %d ranks, not %d\n", pat,
                    n, 2 * n, size);
        MPI_Finalize();
        return 2;
    }
    check_placement(c, rank, size);

    char *buf = malloc((size_t)bytes);
    double *t = malloc(sizeof(double) * (size_t)(reps + 1));
    double *all = rank == 0 ? malloc(sizeof(double) * (size_t)size * (size_t)(reps + 1)) : NULL;
    if (!buf || !t || (rank == 0 && !all)) {
        fprintf(stderr, "pattern: rank %d: out of memory for %ld bytes\n", rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, rank, (size_t)bytes);
    int peer = rank ^ 1;
    for (int r = 0; r <= reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank % 2 == 0) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, r, MPI_COMM_WORLD);
            if (pingpong)
                MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t[r] = pingpong ? (MPI_Wtime() - t0) / 2 : 0.0;
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t[r] = pingpong ? 0.0 : MPI_Wtime() - t0;
            if (pingpong)
                MPI_Send(buf, (int)bytes, MPI_BYTE, peer, r, MPI_COMM_WORLD);
        }
    }
    MPI_Gather(t, reps + 1, MPI_DOUBLE, all, reps + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int slot = pingpong ? 0 : 1; /* whose clock timed each arrow: sender's or receiver's */
    if (rank == 0) {
        /* Repetition 0 opened the connections; it is not reported. */
        for (int r = 1; r <= reps; r++)
            for (int k = 0; k < n; k++)
                printf("rep %d comm %d %d>%d bytes %ld time %.6f\n", r - 1, k, c[k].src,
                       c[k].dst, bytes, all[(2 * k + slot) * (reps + 1) + r]);
        for (int k = 0; k < n; k++) {
            double *v = all + (2 * k + slot) * (reps + 1) + 1;
            qsort(v, (size_t)reps, sizeof *v, cmp_double);
            double med = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
            printf("comm %d %d>%d bytes %ld median %.6f min %.6f max %.6f\n", k, c[k].src,
                   c[k].dst, bytes, med, v[0], v[reps - 1]);
        }
    }
    free(all);
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
