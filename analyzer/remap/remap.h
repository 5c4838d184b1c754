/* analyzer/remap/remap.h: the search for a better placement of ranks on nodes (`flowcut remap`): every
 * candidate is judged by replaying the traced run under it (replay.h), and the best few are
 * reported with what they gain, and written for launchers (launcher.c). Internal to
 * libflowcut-analyzer.
 *
 * Placements keep a fixed number of slots per node: the run's (nodes of the trace, and the most
 * ranks any of them held) or the caller's. Nodes are taken as identical (the star platform of the
 * contention models), so two placements that differ only by a renaming of nodes are one placement;
 * among the renamings, a suggestion is reported with the one that moves the fewest ranks away
 * from their observed node.
 *
 * Search:
 *   - exhaustive when the world has at most FC_REMAP_EXHAUSTIVE_MAX ranks (or when asked): every
 *     placement up to renaming of nodes is replayed (105 for 8 ranks on 4 nodes of 2 slots);
 *   - otherwise a local search: from the observed placement (when it fits the slots) and from a
 *     METIS k-way partition of the traffic graph (ranks weighted by the bytes they exchange,
 *     repaired to the slot count), swaps of two ranks on different nodes and moves of a rank to a
 *     free slot, each replayed, the first improvement taken, until none improves or the budget of
 *     replays is spent. */
#ifndef FLOWCUT_ANALYZER_REMAP_H
#define FLOWCUT_ANALYZER_REMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "remap/replay.h"

#define FC_REMAP_EXHAUSTIVE_MAX 12
#define FC_REMAP_MAXK 16 /* conflicts of more flows are counted with k = FC_REMAP_MAXK */

/* Options of a search. */
typedef struct fc__remap_opts {
    fc__replay_opts replay; /* platform, model, eager threshold (want_flows is ignored) */
    uint32_t nodes, slots;  /* 0: the trace's node count and its largest ranks per node */
    int exhaustive;         /* -1: when ranks <= FC_REMAP_EXHAUSTIVE_MAX; 0: never; 1: always */
    size_t top;             /* suggestions to keep (>= 1) */
    uint64_t budget;        /* replays allowed to the local search (0: 20000) */
} fc__remap_opts;

/* One placement and what its replay predicts. */
typedef struct fc__remap_cand {
    uint32_t *rank_node;    /* node index of each world rank: < nodes (see fc__remap) */
    double time, comm;      /* predicted run time and communication time (seconds) */
    double gain_pct;        /* 100 (current.time - time) / current.time */
    uint32_t moved;         /* ranks on another node than observed */
    /* Flow-seconds of the simulated inter-node messages under each conflict: conflict_s[kind][k]
     * with kind an FC_CONFLICT_* and 2 <= k <= FC_REMAP_MAXK. */
    double conflict_s[5][FC_REMAP_MAXK + 1];
} fc__remap_cand;

/* The result of a search. Owned by the caller (fc__remap_free). */
typedef struct fc__remap {
    uint32_t nranks, nodes, slots;
    char **node_names;       /* node names: the trace's, then "spare-N" for nodes it lacks; nnames
                                entries, at least nodes and at least the trace's node count */
    uint32_t nnames;
    fc__remap_cand current;  /* the observed placement, replayed */
    double observed_s;       /* the observed run time (replay.h obs_time) */
    double observed_comm;    /* the observed communication time: largest per-rank time in MPI */
    double check_err_pct;    /* 100 (current.time - observed_s) / observed_s */
    int current_fits;        /* 1 when the observed placement fits nodes x slots */
    int exhaustive;          /* 1 when every placement was replayed */
    uint64_t evaluated;      /* replays run by the search */
    uint64_t exhausted_budget; /* 1 when the local search stopped at its budget */
    size_t ncands;
    fc__remap_cand *cands;   /* best first: by time, then communication time, then moved */
    size_t cand_cap;         /* entries allocated in cands */
    int has_given;           /* 1 after fc__remap_given */
    fc__remap_cand given;    /* a placement the caller asked about (fc__remap_given) */
    /* What the suggestions are worth (fc__remap_judge): the replay's own error |check_err_pct|,
     * the suggestions whose predicted time is within it of the best's (cands[0..equivalent-1]),
     * the one of those that moves fewest ranks (its index), and whether the best gain exceeds it. */
    double uncertainty_pct;
    size_t equivalent, fewest;
    int clearly_better;
} fc__remap;

/* Searches placements for the replay rp. Returns 0, FC_EINVAL (nodes x slots smaller than the
 * world, an unusable model: message in fc_errmsg) or FC_ENOMEM; *out is owned by the caller. */
int fc__remap_search(const fc__replay *rp, const fc__remap_opts *o, fc__remap **out);
void fc__remap_free(fc__remap *rm);

/* Fills rm's judgement fields from its candidates, check error and current placement (called by
 * fc__remap_search; exposed for the tests). Suggestions that differ by less than the replay's own
 * error are equivalent, and none is clearly better when the best gain is within it. */
void fc__remap_judge(fc__remap *rm);

/* Replays one more placement, rank_node[r] < rm->nnames (copied), and stores what it predicts in
 * rm->given (conflicts, gain and moved as for a suggestion). Returns 0, FC_EINVAL or FC_ENOMEM. */
int fc__remap_given(const fc__replay *rp, const fc__remap_opts *o, fc__remap *rm, const uint32_t *rank_node);

/* The number of placements up to renaming of nodes of n ranks on `nodes` nodes of `slots` slots,
 * capped at cap (returns cap when there are at least that many). */
uint64_t fc__remap_count(uint32_t n, uint32_t nodes, uint32_t slots, uint64_t cap);

/* ---- launcher formats (launcher.c) ---------------------------------------------------------- */

#define FC_LAUNCHER_FORMATS(X)                                                                     \
    X(HYDRA, 0, "hydra")                                                                          \
    X(OPENMPI, 1, "openmpi")                                                                      \
    X(SLURM, 2, "slurm")                                                                          \
    X(CRAY, 3, "cray")                                                                            \
    X(JSON, 4, "json")

enum fc__launcher_format {
#define FC__X(name, num, text) FC_LAUNCHER_##name = num,
    FC_LAUNCHER_FORMATS(FC__X)
#undef FC__X
    FC_NLAUNCHERS
};

/* The format called name, or -1. */
int fc__launcher_parse(const char *name);

/* Writes suggestion number which (0: the best; `flowcut remap` passes rm->fewest, the equivalent
 * suggestion that moves fewest ranks) of rm to f in the format, with node names names[]
 * (rm->nodes of them: rm->node_names, or the next allocation's). trace names the trace in the
 * comments. Returns 0, FC_EIO, or FC_EINVAL with fc_errmsg() saying why when the format cannot
 * express the placement (Cray: more than one node short of the fullest). */
int fc__launcher_write(FILE *f, unsigned format, const fc__remap *rm, size_t which,
                       const char *const *names, const char *trace);

/* `flowcut remap --check`: reads the launcher file suggestion (any format fc__launcher_write writes,
 * told apart by its content) and the trace, and writes to out one line per rank that did not run on
 * the node the file gives it (for a Cray file, which names no node: whose ranks do not share nodes
 * as the file groups them), then a summary line. Returns 0 with *misplaced set, or FC_ENOENT,
 * FC_EINVAL (an unreadable suggestion, or one for another number of ranks), a trace error or
 * FC_ENOMEM, with fc_errmsg() naming the problem. */
int fc__remap_check(const char *suggestion, const char *trace, FILE *out, uint32_t *misplaced);

/* Reads a Hydra machinefile ("node" or "node:n" per line, # comments) into the node of each of
 * rm's ranks, cycling over the slots as Hydra does; node names are the trace's (rm->node_names).
 * Returns a new array of rm->nranks entries (the caller frees it), or NULL with fc_errmsg() naming
 * the file and line (FC_EIO, FC_EINVAL, FC_ENOMEM). */
uint32_t *fc__placement_read_hydra(const char *path, const fc__remap *rm);

#endif /* FLOWCUT_ANALYZER_REMAP_H */
