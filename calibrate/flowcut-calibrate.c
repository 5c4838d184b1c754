/* calibrate/flowcut-calibrate.c: measures a cluster's platform profile (analyzer/profile.h): one-way
 * times between and inside nodes, the flow cuts of every elementary conflict, and Gropp's max-rate
 * parameters; writes the profile and prints a summary. Run it under the MPI launcher with at least
 * two ranks on each of two nodes (three nodes give every conflict its own partners). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <flowcut/error.h>
#include <flowcut/reader.h>
#include "calibrate.h"
#include "model/fit.h"
#include "match/flow.h"
#include "model/profile.h"

static void usage(FILE *f)
{
    fputs("usage: LAUNCHER ... flowcut-calibrate -o FILE [options]\n"
          "       flowcut calibrate -o FILE [options] -- LAUNCHER ARGS...\n"
          "Measures the platform profile that `flowcut analyze --platform` reads: one-way message times\n"
          "between and inside nodes (piecewise linear, with the eager/rendezvous threshold), the flow\n"
          "cut of every elementary conflict (outgoing, incoming, mixed) for k = 2 up to the ranks per\n"
          "node and then doubling up to --max-k, the late\n"
          "joiner's share, and Gropp's max-rate parameters. Needs ranks on at least two nodes, two per node for\n"
          "the conflicts; with three nodes or more every flow of a conflict has its own partner node.\n"
          "Options:\n"
          "  -o FILE          write the profile to FILE (required)\n"
          "  -e EPS           relative standard error to reach for every mean (default 0.03)\n"
          "  -r RUNS          repeat each measurement RUNS times and keep the median (default 3, 1 with --quick)\n"
          "  --max-size BYTES largest ping-pong message (default 16777216; suffixes k, M)\n"
          "  --cut-size BYTES message size of the conflict measurements (default 4 MiB, at most max-size)\n"
          "  --network TEXT   describes the network in the profile (e.g. \"10GbE, 1 switch\")\n"
          "  -v               print every measured point on stderr\n"
          "  --max-k K        conflicts and late joiners of up to K flows on one NIC, 2 to 32 (default 8;\n"
          "                   a rank then plays several flows when its node has fewer ranks)\n"
          "  --newcomer BYTES size of the late joiner's newcomer (default a quarter of --cut-size, at most it)\n"
          "  --quick          a small run for tests: sizes to 1 MiB, fewer of them, eps 0.1\n"
          "  --help           this text\n",
          f);
}

/* Parses "16M", "64k", "1048576". Returns 0 or -1. */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-')
        return -1;
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    if (*end != '\0' || v > (1ull << 30))
        return -1;
    *out = v;
    return 0;
}

/* Parses the options into o; returns 0, 1 for --help, or -1 with msg filled. */
static int parse_args(int argc, char **argv, cal_opts *o, char *msg, size_t n)
{
    enum { OPT_MAX = 256, OPT_CUT, OPT_QUICK, OPT_NET, OPT_HELP, OPT_MAXK, OPT_NEWCOMER };
    static const struct option longs[] = {{"max-size", required_argument, NULL, OPT_MAX},
                                          {"cut-size", required_argument, NULL, OPT_CUT},
                                          {"quick", no_argument, NULL, OPT_QUICK},
                                          {"max-k", required_argument, NULL, OPT_MAXK},
                                          {"newcomer", required_argument, NULL, OPT_NEWCOMER},
                                          {"network", required_argument, NULL, OPT_NET},
                                          {"help", no_argument, NULL, OPT_HELP},
                                          {NULL, 0, NULL, 0}};
    *o = (cal_opts){.network = "unknown", .eps = -1, .max_size = 0, .runs = 0, .max_k = 8};
    int c, cut_given = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:e:r:hv", longs, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'o':
            o->out = optarg;
            break;
        case 'e':
            o->eps = strtod(optarg, &end);
            if (*end != '\0' || !(o->eps > 0 && o->eps < 1))
                return snprintf(msg, n, "-e '%s': expected a relative error between 0 and 1", optarg), -1;
            break;
        case 'r':
            o->runs = (int)strtol(optarg, &end, 10);
            if (*end != '\0' || o->runs < 1 || o->runs > 99)
                return snprintf(msg, n, "-r '%s': expected a count from 1 to 99", optarg), -1;
            break;
        case OPT_MAX:
            if (parse_size(optarg, &o->max_size) != 0 || o->max_size < 1024)
                return snprintf(msg, n, "--max-size '%s': expected a size from 1024 bytes to 1 GiB", optarg), -1;
            break;
        case OPT_MAXK:
            o->max_k = (int)strtol(optarg, &end, 10);
            if (*end != '\0' || o->max_k < 2 || o->max_k > 32)
                return snprintf(msg, n, "--max-k '%s': expected a count from 2 to 32", optarg), -1;
            break;
        case OPT_CUT:
            if (parse_size(optarg, &o->cut_size) != 0 || o->cut_size < 1024)
                return snprintf(msg, n, "--cut-size '%s': expected a size from 1024 bytes to 1 GiB", optarg), -1;
            cut_given = 1;
            break;
        case OPT_NEWCOMER:
            if (parse_size(optarg, &o->newcomer) != 0 || o->newcomer < 1024)
                return snprintf(msg, n, "--newcomer '%s': expected a size from 1024 bytes to 1 GiB", optarg), -1;
            break;
        case 'v':
            o->verbose = 1;
            break;
        case OPT_QUICK:
            o->quick = 1;
            break;
        case OPT_NET:
            o->network = optarg;
            break;
        case 'h':
        case OPT_HELP:
            return 1;
        case ':':
            return snprintf(msg, n, "option '%s' needs a value", argv[optind - 1]), -1;
        default:
            return snprintf(msg, n, "unknown option '%s' (see flowcut calibrate --help)", argv[optind - 1]), -1;
        }
    }
    if (optind < argc)
        return snprintf(msg, n, "unexpected argument '%s' (see flowcut calibrate --help)", argv[optind]), -1;
    if (o->out == NULL)
        return snprintf(msg, n, "-o FILE is required (see flowcut calibrate --help)"), -1;
    if (o->max_size == 0)
        o->max_size = o->quick ? 1u << 20 : 16u << 20;
    if (o->eps < 0)
        o->eps = o->quick ? 0.1 : 0.03;
    /* Three runs let the median outvote one disturbed run (SKaMPI); about 30 s each at 200 Mbit/s. */
    if (o->runs == 0)
        o->runs = o->quick ? 1 : 3;
    if (!cut_given)
        o->cut_size = o->quick ? 1u << 20 : 4u << 20;
    if (o->cut_size > o->max_size)
        o->cut_size = o->max_size;
    if (o->newcomer == 0)
        o->newcomer = o->cut_size / 4;
    if (o->newcomer > o->cut_size)
        return snprintf(msg, n, "--newcomer %" PRIu64 ": larger than the conflict size, %" PRIu64 " bytes",
                        o->newcomer, o->cut_size), -1;
    o->min_reps = o->quick ? 3 : 5;
    o->max_reps = o->quick ? 12 : 40;
    o->budget = o->quick ? 2.0 : 8.0;
    o->max_points = o->quick ? 16 : 36;
    return 0;
}

/* ---- the layout of ranks on nodes --------------------------------------------------------------- */

/* The CPUs this process may run on (its affinity), or the online ones if that is unknown. */
static int usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Every rank's name of NAME_LEN bytes, in rank order, gathered from all nranks ranks: a buffer the
 * caller frees, or NULL on every rank alike when any rank is out of memory (so that no rank is
 * left alone in the gather). Collective. */
enum { NAME_LEN = MPI_MAX_PROCESSOR_NAME + 1 };
static char *gather_names(const char *name, int nranks)
{
    char *names = calloc((size_t)nranks, NAME_LEN);
    int ok = names != NULL, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        free(names);
        return NULL;
    }
    MPI_Allgather(name, NAME_LEN, MPI_CHAR, names, NAME_LEN, MPI_CHAR, MPI_COMM_WORLD);
    return names;
}

/* Fills L's host_ranks, host_cpus and crowded from the real host names (not FLOWCUT_NODE: the
 * emulated nodes are one host), every rank alike. Returns 0 or -1 (out of memory). Collective. */
static int find_crowding(cal_layout *L)
{
    char name[NAME_LEN] = "";
    int len = 0;
    MPI_Get_processor_name(name, &len);
    char *names = gather_names(name, L->nranks);
    if (names == NULL)
        return -1;
    int mine = 0;
    for (int r = 0; r < L->nranks; r++)
        mine += strncmp(names + (size_t)r * NAME_LEN, name, NAME_LEN) == 0;
    free(names);
    /* The host with the most ranks beyond its CPUs decides; its figures go to the notes. */
    int cpus = usable_cpus(), over[2] = {mine - cpus, 0}, top[2];
    MPI_Comm_rank(MPI_COMM_WORLD, &over[1]);
    MPI_Allreduce(over, top, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
    int fig[2] = {mine, cpus};
    MPI_Bcast(fig, 2, MPI_INT, top[1], MPI_COMM_WORLD);
    L->host_ranks = fig[0];
    L->host_cpus = fig[1];
    L->crowded = top[0] > 0;
    return 0;
}

/* Finds the nodes, numbered in order of their lowest rank, and their ranks. A node is a processor
 * name (the host name), or the FLOWCUT_NODE that `flowcut cluster mpiexec` gives each rank: the
 * emulated nodes share one host name, and MPI's shared-memory split cannot tell them apart either
 * (the cluster keeps every rank off shared memory so that all inter-node bytes cross the links). */
static int find_nodes(cal_layout *L)
{
    int me, leader = -1, len = 0;
    char name[NAME_LEN] = "";
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &L->nranks);
    const char *emu = getenv("FLOWCUT_NODE");
    if (emu != NULL && *emu)
        snprintf(name, sizeof name, "flowcut-cluster:%s", emu);
    else
        MPI_Get_processor_name(name, &len);
    char *names = gather_names(name, L->nranks);
    if (names == NULL)
        return -1;
    for (int r = 0; r <= me && leader < 0; r++)
        if (strncmp(names + (size_t)r * NAME_LEN, name, NAME_LEN) == 0)
            leader = r;
    free(names);
    int *leaders = malloc((size_t)L->nranks * sizeof *leaders);
    L->node_of = malloc((size_t)L->nranks * sizeof *L->node_of);
    L->members = malloc((size_t)L->nranks * sizeof *L->members);
    L->first = calloc((size_t)L->nranks + 1, sizeof *L->first);
    /* Every rank learns whether all have their arrays before the gather: one that is out of memory
     * and left alone would leave the others waiting in it. */
    int ok = leaders != NULL && L->node_of != NULL && L->members != NULL && L->first != NULL, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        free(leaders);
        free(L->node_of);
        free(L->members);
        free(L->first);
        L->node_of = L->members = L->first = NULL;
        return -1;
    }
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    L->nnodes = 0;
    for (int r = 0; r < L->nranks; r++) {
        if (leaders[r] == r)
            L->node_of[r] = L->nnodes++;
        else
            L->node_of[r] = L->node_of[leaders[r]];
    }
    /* Members grouped by node, ascending rank. */
    int k = 0;
    for (int nd = 0; nd < L->nnodes; nd++) {
        L->first[nd] = k;
        for (int r = 0; r < L->nranks; r++)
            if (L->node_of[r] == nd)
                L->members[k++] = r;
    }
    L->first[L->nnodes] = k;
    L->rpn = L->nranks;
    for (int nd = 0; nd < L->nnodes; nd++)
        if (L->first[nd + 1] - L->first[nd] < L->rpn)
            L->rpn = L->first[nd + 1] - L->first[nd];
    free(leaders);
    return 0;
}

/* The MPI library's version as one line, blanks collapsed. */
static void mpi_version(char *out, size_t n)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    size_t k = 0;
    int blank = 0;
    for (int i = 0; i < len && v[i] && k + 1 < n; i++) {
        if (v[i] == '\n' && k > 0)
            break; /* MPICH's first line names it and its version; the rest is configure flags */
        if ((unsigned char)v[i] <= ' ') {
            blank = k > 0;
            continue;
        }
        if (blank && k + 2 < n)
            out[k++] = ' ';
        blank = 0;
        out[k++] = v[i];
    }
    out[k] = '\0';
}

/* ---- main --------------------------------------------------------------------------------------- */

/* Only rank 0 talks; every rank leaves through here so that the launcher sees one exit status. */
static int finish(int rc)
{
    MPI_Finalize();
    return rc;
}

int main(int argc, char **argv)
{
    cal_opts o;
    char msg[512] = "";
    /* --help works without a launcher, and under one only the first rank prints it. */
    int pr = parse_args(argc, argv, &o, msg, sizeof msg);
    const char *pmi = getenv("PMI_RANK");
    if (pr == 1) {
        if (pmi == NULL || strcmp(pmi, "0") == 0)
            usage(stdout);
        return 0;
    }
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (pr < 0) {
        if (me == 0)
            fprintf(stderr, "flowcut-calibrate: %s\n", msg);
        return finish(2);
    }
    cal_layout L = {0};
    int ok = find_nodes(&L) == 0;
    ok = find_crowding(&L) == 0 && ok; /* collective: every rank calls it */
    ok = ok && cal_init(o.max_size > o.cut_size ? o.max_size : o.cut_size) == 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!ok) {
        if (me == 0)
            fprintf(stderr, "flowcut-calibrate: out of memory for %" PRIu64 "-byte buffers\n", o.max_size);
        return finish(1);
    }
    /* Rank 0 opens the output now, under a temporary name, so that a path it cannot write stops
     * the run before minutes of measuring, and a failed run leaves no half-written profile. */
    char tmp[4096] = "";
    FILE *out = NULL;
    if (me == 0) {
        if (L.nnodes < 2) {
            snprintf(msg, sizeof msg, "needs ranks on at least 2 nodes, found %d node%s (%d rank%s): run it "
                     "under the launcher across nodes", L.nnodes, L.nnodes == 1 ? "" : "s", L.nranks,
                     L.nranks == 1 ? "" : "s");
            ok = 0;
        } else if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", o.out, (long)getpid()) >= (int)sizeof tmp ||
                   (out = fopen(tmp, "w")) == NULL) {
            snprintf(msg, sizeof msg, "%s: cannot write: %s", o.out, strerror(errno));
            ok = 0;
        }
        if (!ok)
            fprintf(stderr, "flowcut-calibrate: %s\n", msg);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok)
        return finish(1);
    cal_set_crowded(L.crowded);
    if (me != 0) {
        cal_serve();
        return finish(0);
    }

    double t_start = MPI_Wtime();
    fc__profile *p = fc__profile_new();
    char notes[8192]; /* every measurement's note, the longest some 700 bytes */
    int rc = p == NULL ? FC_ENOMEM : cal_measure(&o, &L, p, notes, sizeof notes);
    cal_quit();
    if (rc == 0) {
        snprintf(p->source, sizeof p->source, "calibrate");
        mpi_version(p->mpi, sizeof p->mpi);
        snprintf(p->network, sizeof p->network, "%s", o.network);
        time_t now = time(NULL);
        strftime(p->date, sizeof p->date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        p->nodes = (uint32_t)L.nnodes;
        p->ranks_per_node = (uint32_t)L.rpn;
        p->eps_target = o.eps;
        rc = fc__profile_write_notes(out, p, notes);
        if (fclose(out) != 0 && rc == 0)
            rc = FC_EIO;
        out = NULL;
        if (rc == 0 && rename(tmp, o.out) != 0)
            rc = FC_EIO;
    }
    if (rc != 0) {
        fprintf(stderr, "flowcut-calibrate: %s: %s\n", o.out, rc == FC_EIO ? strerror(errno) : fc_errmsg());
        if (out != NULL)
            fclose(out);
        unlink(tmp);
    } else {
        cal_summary(stdout, &o, &L, p, notes, MPI_Wtime() - t_start);
    }
    fc__profile_free(p);
    return finish(rc == 0 ? 0 : 1);
}
