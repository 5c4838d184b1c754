/* calibrate/calibrate.h: what the files of flowcut-calibrate share: options, the node layout, and
 * the measurement engine (measure.c) that applies SKaMPI's discipline to ping-pongs and to sets of
 * barrier-free, simultaneously started flows.
 *
 * Control: rank 0 drives every measurement. The other ranks wait for commands (sleeping between
 * polls, so that ranks with nothing to do leave the cores to those that measure: the emulated
 * cluster runs 8 ranks on 2 cores), play their part, and report their times to rank 0. */
#ifndef FLOWCUT_CALIBRATE_H
#define FLOWCUT_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <mpi.h>
#include "model/profile.h"

#define CAL_MAXFLOWS 64

typedef struct cal_opts {
    const char *out;      /* -o */
    const char *network;  /* --network: free text for the profile */
    double eps;           /* -e: target relative standard error of each mean */
    uint64_t max_size;    /* --max-size */
    uint64_t cut_size;    /* message size of the conflict and max-rate measurements */
    int runs;             /* -r: whole measurements repeated, merged by their median */
    int max_k;            /* --max-k: most flows of a same-direction conflict and of the late
                             joiner's measurement */
    uint64_t newcomer;    /* --newcomer: the late joiner's size (default cut_size / 4) */
    int quick;            /* --quick */
    int verbose;          /* -v: every measured point on stderr */
    int min_reps, max_reps; /* repetitions of one measurement, after the warm-up */
    double budget;        /* seconds one measurement may take before it stops short of eps */
    size_t max_points;    /* sizes of one ping-pong sweep */
} cal_opts;

/* The result of one measurement: the mean of the middle half of the samples and the relative
 * standard error of that mean (SKaMPI). */
typedef struct cal_stat {
    double mean, rel_se;
    size_t n;
} cal_stat;

/* A set of flows started together: flow i from world rank src[i] to dst[i], of size[i] bytes (0:
 * the set's size), its sender starting delay[i] seconds after the start signal (0 for most). A
 * rank may play several parts (several flows out of a node with fewer ranks than flows), the
 * receivers timing each flow from its own start. */
typedef struct cal_flows {
    int n;
    int src[CAL_MAXFLOWS], dst[CAL_MAXFLOWS];
    double delay[CAL_MAXFLOWS];
    uint64_t size[CAL_MAXFLOWS];
} cal_flows;

/* Where the ranks are: nodes numbered in order of their lowest rank; the ranks of node d are
 * members[first[d] .. first[d+1]), ascending. rpn is the fewest ranks any node has. */
typedef struct cal_layout {
    int nranks, nnodes, rpn;
    int *node_of, *members, *first;
    /* The most ranks that share one host (its processor name, whatever node they emulate) and the
     * CPUs they may run on there; crowded when some host has more ranks than CPUs. */
    int host_ranks, host_cpus, crowded;
} cal_layout;

/* ---- experiments.c: the measurements and the summary ------------------------------------------ */

/* Rank 0: measures everything into p (segments, threshold, cuts, max-rate) and writes into notes
 * how, and what the data could not determine. Returns 0 or an FC_E* code (message in fc_errmsg). */
int cal_measure(const cal_opts *o, const cal_layout *L, fc__profile *p, char *notes, size_t n);

/* Rank 0: the summary printed after a successful run. */
void cal_summary(FILE *f, const cal_opts *o, const cal_layout *L, const fc__profile *p, const char *notes,
                 double seconds);

/* ---- measure.c ---------------------------------------------------------------------------------- */

/* Prepares buffers of max_bytes for every rank. Returns 0 or -1 (out of memory). Collective. */
int cal_init(uint64_t max_bytes);

/* Rank != 0: serves rank 0's commands until it says quit. */
void cal_serve(void);

/* Rank 0: tells every other rank to return from cal_serve. */
void cal_quit(void);

/* Rank 0: the one-way time (half the round trip) of ping-pongs of bytes with peer (!= 0). */
cal_stat cal_pingpong(const cal_opts *o, int peer, uint64_t bytes);

/* Rank 0: runs the set f of flows of bytes each, repeatedly, each repetition started by a message
 * from rank 0. Each flow's time is measured by its receiver from its start signal to the receive's
 * completion. Fills per[i] for each flow and, in all (may be NULL), the time until the last flow
 * of each repetition ended. Repetitions stop when every flow's mean has reached o->eps, within the
 * counts and the time budget. */
void cal_run_flows(const cal_opts *o, const cal_flows *f, uint64_t bytes, cal_stat *per, cal_stat *all);

/* Every rank, before measuring: whether ranks share CPUs (cal_layout.crowded). Crowded ranks nap
 * CAL_NAP_PP microseconds between polls in the multi-pair ping-pong instead of polling busily as
 * IMB does (measure.c says why). */
#define CAL_NAP_PP 20
void cal_set_crowded(int crowded);

/* Rank 0: IMB's multi-mode ping-pong: pair i's initiator f->src[i] and responder f->dst[i] all
 * start together and each initiator runs reps round trips of bytes; one sample is the time until
 * the slowest pair is done (Hager & Wellein's T_b). Returns its SKaMPI mean. */
cal_stat cal_multi_pingpong(const cal_opts *o, const cal_flows *f, uint64_t bytes, int reps);
/* The mean of the middle half of v[0 .. n) and its relative standard error (v is reordered). */
cal_stat cal_stat_of(double *v, size_t n);

#endif /* FLOWCUT_CALIBRATE_H */
