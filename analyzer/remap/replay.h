/* analyzer/remap/replay.h: the replay of a traced run under another placement of ranks on nodes: each
 * rank's MPI operations and the computation between them, taken from its trace, re-run against the
 * fluid network simulation of model.h. Internal to libflowcut-analyzer.
 *
 * What a replay keeps of a trace (fc__replay_build):
 *   - per rank, a program of operations: nonblocking sends and receives, waits on sets of them, and
 *     the computation time before each MPI call (the gap between the previous call's exit and this
 *     call's entry on the rank's own clock, so clock alignment cannot distort it);
 *   - blocking calls become a post and a wait on it; MPI_Sendrecv a send, a receive and a wait on
 *     both; MPI_Wait*, and MPI_Test* that completed something, wait on the requests their COMPLETE
 *     records name (a Test that completed nothing only adds its time to the waiting, since under
 *     another placement the polling would simply last longer or shorter); persistent requests
 *     are instantiated at each Start; probes are left out;
 *   - every message's partner: the k-th send from a to b on one communicator and tag pairs with the
 *     k-th such receive (MPI's non-overtaking order; wildcard receives use the source and tag of
 *     their recorded status), so the pairing does not depend on the placement;
 *   - collectives expanded into the point-to-point messages of the algorithm MPICH 4 selects for
 *     them (collective/collective.h), under the algorithm variables the run set (fc__replay.coll);
 *     Non-blocking collectives run the same messages at their post and complete there (their
 *     overlap with computation is not modelled). Reductions cost no computation.
 *
 * The simulation (fc__replay_run): each rank starts at its observed exit from MPI_Init (relative
 * to the earliest one) and runs its program; a message moves through the fc__net simulation (node
 * to node, or inside a node) once it can: an eager message (fewer bytes than the eager threshold)
 * when its send is posted, a rendezvous one (or a synchronous send) when both the send and the
 * receive are posted. An eager send completes at its post; a rendezvous send when its data has
 * arrived; a receive when its data has arrived and it is posted. A rank ends when it reaches
 * MPI_Finalize (its entry time is the end of the run for that rank).
 *
 * Messages whose flows the analysis did not class as network (fc__replay_fix) keep the part of
 * their observed time the network does not explain (fc__replay_split), after their time in the
 * network (fc__rmsg).
 *
 * Threads: a built replay (after fc__replay_fix and fc__replay_split, which change it) is read-only
 * during fc__replay_run, so several runs (with their own
 * results) may go on at once from different threads. */
#ifndef FLOWCUT_ANALYZER_REPLAY_H
#define FLOWCUT_ANALYZER_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <flowcut/reader.h>
#include "collective/calls.h"
#include "match/flow.h"
#include "model/profile.h"

/* Operation kinds of a rank's program. */
enum { FC__ROP_SEND = 1, FC__ROP_RECV = 2, FC__ROP_WAIT = 3 };

#define FC__ROPF_SYNC 0x1u /* a synchronous send: completes only once its receive is posted */
#define FC__ROPF_COLL 0x2u /* part of an expanded collective */
#define FC__ROPF_POLLED 0x4u /* completed by an MPI_Test*: its rank polled it from its post on */

#define FC__NOMSG UINT32_MAX

/* One operation. A SEND or RECV is a post (nonblocking); a WAIT blocks until the ops listed in
 * the rank's wait list [first, first + n) have completed. */
typedef struct fc__rop {
    uint8_t kind;
    uint8_t flags;
    uint32_t peer;     /* world rank of the partner (SEND, RECV) */
    uint64_t bytes;    /* SEND: bytes sent; RECV: bytes expected (informative) */
    uint32_t msg;      /* message index (SEND, RECV), FC__NOMSG when left without a partner */
    uint32_t first, n; /* WAIT: slice of the rank's wait list (op indices) */
    double compute;    /* seconds of computation before this op starts */
} fc__rop;

/* A rank's program. */
typedef struct fc__rprog {
    size_t nops;
    fc__rop *ops;
    uint32_t *waits;   /* wait lists: indices into ops */
    size_t nwaits;
    double start;      /* seconds after the earliest MPI_Init exit at which the rank starts */
    double tail;       /* computation after the last op, until MPI_Finalize */
    double obs_end;    /* observed entry into MPI_Finalize (or last event), seconds like start */
    double obs_mpi;    /* observed seconds inside MPI calls from start to obs_end */
    double obs_compute; /* the sum of the computation times, tail included */
} fc__rprog;

/* A message: a send op paired with a receive op. */
typedef struct fc__rmsg {
    uint32_t src, dst;       /* world ranks */
    uint32_t send_op, recv_op;
    uint64_t bytes;          /* from the send */
    int sync;                /* synchronous send */
    /* A message the analysis did not class as network (fc__replay_fix): its time was set by the
     * ranks (waiting, no progress, turns at the cores) or by latency more than by moving its bytes.
     * fixed is 1; fixed_obs is its observed time, less, for an eager message, the receiver's
     * waiting for the peer (which the replay makes it wait again); fixed_s is the part of that
     * the network simulation does not explain (fc__replay_split). It moves through the simulation
     * like any other message (between nodes or inside one, as placed), then arrives fixed_s after
     * its bytes: for an eager message, after both its bytes and its receiver are there (in the
     * call that completes it, or from the post when it polled it with MPI_Test*). fixed 0: an
     * ordinary message. */
    int fixed;
    double fixed_obs, fixed_s;
} fc__rmsg;

typedef struct fc__replay {
    uint32_t nranks;         /* world size */
    fc__rprog *prog;         /* per world rank (empty program for a rank without a file) */
    size_t nmsgs;
    fc__rmsg *msgs;
    uint64_t unmatched;      /* sends and receives left without a partner (they complete at once) */
    uint64_t colls;          /* collective calls expanded */
    double obs_time;         /* observed run time: the latest obs_end */
    uint32_t nnodes;         /* nodes of the trace (as match.h numbers them) */
    char **nodes;            /* their names */
    uint32_t *rank_node;     /* observed node of each rank */
    uint32_t max_slots;      /* the most ranks any node held */
    fc__coll_settings coll;  /* the collective algorithms the run forced (MPICH's defaults: zero) */
    /* What fc__replay_fix did: the trace's inter-node flows, those it paired with a message of
     * the replay, and those of them replayed with their observed times. */
    uint64_t inter_flows, mapped_flows, fixed_flows;
} fc__replay;

/* Builds the replay of every rank of the trace. Returns 0, a reader error (message in fc_errmsg),
 * FC_EINVAL (a trace without events) or FC_ENOMEM; *out is owned by the caller
 * (fc__replay_free). */
int fc__replay_build(fc_trace *t, fc__replay **out);

/* Gives the messages of rp whose flows (the inter-node flows of m, classed by ob: m from
 * fc__match_trace of the trace rp was built from, with its collectives added, ob classified) are
 * not of class network or below-wire their observed times (fc__rmsg.fixed): the time those flows
 * took was set by the ranks (waiting, no progress, turns at the cores) or by latency, which no
 * placement changes while their ends stay apart. Flows pair with messages by their ranks, as
 * point-to-point or collective, in the sender's order (send start; the replay's post order); a
 * pair of ranks whose flows and messages differ in number or bytes keeps its messages
 * simulated. Sets rp->inter_flows, mapped_flows, fixed_flows. Returns 0 or FC_ENOMEM. */
struct fc__match;
struct fc__observation;
int fc__replay_fix(fc__replay *rp, const struct fc__match *m, const struct fc__observation *ob);

/* Frees a replay; NULL is a no-op. */
void fc__replay_free(fc__replay *rp);

/* Options of a run. */
typedef struct fc__replay_opts {
    const fc__profile *profile; /* the platform */
    unsigned model;             /* FC_MODEL_* of model.h */
    uint64_t eager;             /* eager/rendezvous threshold in bytes (> 0) */
    int want_flows;             /* 1: store the simulated inter-node messages as flows */
    int want_net;               /* 1: store each message's time in the network simulation */
} fc__replay_opts;

/* What a run predicts. */
typedef struct fc__replay_result {
    double time;          /* run time: the latest rank end */
    double comm;          /* communication time: the largest per-rank time spent in MPI calls */
    double comm_mean;     /* the mean over ranks of that time */
    size_t nflows;        /* with want_flows: simulated inter-node messages (ids 0 ..), else 0 */
    fc__flow *flows;       /* owned by the result (fc__replay_result_clear) */
    double *net_s;         /* with want_net: per message, the network's part of its time: from
                              its start to its bytes' arrival; for a fixed eager message, from
                              when its receiver was there (0 when the bytes were there first);
                              NAN when it never got so far. Owned by the result */
} fc__replay_result;

/* Re-simulates the run with rank r on node rank_node[r] (nodes 0 .. nnodes-1). Returns 0,
 * FC_EINVAL (a rank without a node, an unusable model: message in fc_errmsg) or FC_ENOMEM. */
int fc__replay_run(const fc__replay *rp, const uint32_t *rank_node, uint32_t nnodes,
                   const fc__replay_opts *o, fc__replay_result *res);

/* Splits the observed time of every fixed message of rp (fc__rmsg.fixed_obs) into what the
 * network explains, its time in the replay of the observed placement (rp->rank_node) with o, and
 * the rest, fixed_s = max(0, fixed_obs - that time), which every later run adds after its bytes:
 * the ranks' part, which no placement changes. Returns 0 or an error of fc__replay_run. */
int fc__replay_split(fc__replay *rp, const fc__replay_opts *o);

/* Frees what a result owns and zeroes it. */
void fc__replay_result_clear(fc__replay_result *res);

#endif /* FLOWCUT_ANALYZER_REPLAY_H */
