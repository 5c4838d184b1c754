/* analyzer/conflict/summary.h: what the text report says about intervals and flows, gathered from the
 * sweep (sweep.h) as it goes, so that neither the intervals nor the flows' label histories are
 * kept: flow-seconds by conflict kind and k, the worst intervals and flows (the report's top N,
 * with their conflicts and histories), and the conflict time by node and by call site. Memory is
 * the top N plus one row per node and call site and two small slots per rank, whatever the
 * length of the trace; with top = 0 (every row wanted) the lists keep everything. Internal to
 * libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_SUMMARY_H
#define FLOWCUT_ANALYZER_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include "match/flow.h"
#include "conflict/intervals.h"
#include "conflict/sweep.h"

/* One of the worst intervals, with its conflicts sorted by node then kind (as
 * fc__intervals_conflicts gives them). */
typedef struct fc__sum_interval {
    size_t index;
    double start, end;
    size_t nflows;
    uint32_t max_k;
    size_t nconf;
    fc__conflict *conf; /* flows point into ids; both owned by the summary */
    uint64_t *ids;
    /* Private to summary.c: until fc__summary_finish makes conf and ids of it, the interval's
     * active flows (fc__sweep_snapshot). */
    fc__snap_flow *snap;
    size_t csnap;
} fc__sum_interval;

/* One of the worst flows, with its label history and the label it spent the most time under. */
typedef struct fc__sum_flow {
    fc__flow flow;
    size_t nruns;
    fc__label_run *runs; /* owned by the summary */
    fc__label main;
    double conflict_s; /* time under a label other than NONE */
} fc__sum_flow;

/* Flow-seconds in conflicts at one node, or of the flows sent or received at one call site. */
typedef struct fc__sum_row {
    uint32_t rank, node;
    uint64_t site;
    int send;
    uint64_t flows;
    union {
        struct {
            double out, in, mixed;
        };
        double by[3]; /* the same three, by column (summary.c) */
    };
    double total;
} fc__sum_row;

typedef struct fc__summary {
    size_t top;        /* as given: rows kept per list (0: all) */
    const uint8_t *count; /* by flow id: the flows whose time, worst-flow rank, nodes and sites are
                             counted (NULL: all; set before the sweep, owned by the caller); the
                             intervals and their conflicts are every flow's */
    size_t nintervals; /* intervals swept */
    size_t nflows;     /* flows given, active or not */
    uint32_t max_k;    /* the largest k of any label */
    double *time;      /* flow-seconds by label: time[k * 5 + kind], 0 <= k < kslots */
    size_t kslots;
    /* After fc__summary_finish, each list is sorted worst first; each holds up to top rows. */
    fc__sum_interval *worst;
    size_t nworst;
    fc__sum_flow *wflows;
    size_t nwflows;
    fc__sum_row *nodes; /* by conflict flow-seconds; only nodes that had a conflict */
    size_t nnodes;
    fc__sum_row *sites; /* by conflict flow-seconds; flows with conflict time only */
    size_t nsites;
    /* Private to summary.c. */
    size_t cworst, cwflows, cnodes, csites, ctime;
    size_t *site_ix; /* open-addressing table of sites: index + 1, 0 = empty */
    size_t site_cap;
    struct fc__sum_last *last; /* by rank * 2 + send: the site row that side last used */
    size_t nlast;
    uint64_t min_kn; /* the sweep's: the least bad interval's max_k << 32 | flows once the list is full */
    int wfull;      /* the list of flows is full, and wrate is the least bad one's time per byte */
    double wrate;
    fc__snap_flow *snapbuf; /* with top 0: the snapshot each interval's conflicts are made of */
    size_t csnapbuf;
} fc__summary;

/* A new, empty summary keeping the top rows of each list (0: all) in *out, freed with
 * fc__summary_free. Returns 0 or FC_ENOMEM. */
int fc__summary_new(size_t top, fc__summary **out);
void fc__summary_free(fc__summary *s);

/* The sweep functions that feed summary s (sweep.h); s is their argument. */
fc__sweep_ops fc__summary_ops(fc__summary *s);

/* Makes the worst intervals' conflicts and sorts the lists, once the sweep is finished. Returns 0
 * or FC_ENOMEM (the summary is then only fit for fc__summary_free). */
int fc__summary_finish(fc__summary *s);

/* A summary of flows[0..n), swept and finished, in *out. Returns 0, FC_ENOMEM or FC_EINVAL (as
 * fc__intervals_build); *out is NULL on failure. */
int fc__summary_build(const fc__flow *flows, size_t n, size_t top, fc__summary **out);

/* Flow-seconds under the label (kind, k); 0 for a pair never seen. */
double fc__summary_time(const fc__summary *s, uint32_t kind, uint32_t k);

#endif /* FLOWCUT_ANALYZER_SUMMARY_H */
