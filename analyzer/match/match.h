/* analyzer/match/match.h: message matching, which pairs every send of a trace with its receive and turns
 * the pairs into flows (flow.h), with the clock-condition, unmatched-message and wait-state counts
 * that come out of the same pass. Internal to libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_MATCH_H
#define FLOWCUT_ANALYZER_MATCH_H

#include <stddef.h>
#include <stdint.h>
#include <flowcut/reader.h>
#include "match/flow.h"

/* The default eager/rendezvous threshold in bytes: messages of this size or more are taken to use
 * the rendezvous protocol. MPICH 4.0.2 ch4:ucx sends through ucp_tag_send_nbx (nm -D libmpich.so.12)
 * and leaves the protocol to UCX; the UCX 1.13.1 installed here (libucx0; its configuration table in
 * the strings of libucp.so.0, ucx_info not being installed) has UCX_RNDV_THRESH=auto with a fixed
 * 256k (UCX_RNDV_SEND_NBR_THRESH) as the one size it states for switching from eager to
 * rendezvous; "auto" itself depends on the transport, so a platform profile should override this. */
#define FC_MATCH_EAGER_DEFAULT (256u * 1024u)

/* Node number of a world rank without a rank file. */
#define FC_NODE_NONE UINT32_MAX

/* The wait states found at one call site of one rank (Scalasca's definitions), in seconds. */
typedef struct fc__wait_site {
    uint32_t rank;        /* world rank */
    uint64_t site;        /* call-site id on that rank (0: none recorded) */
    double late_sender;   /* time a blocking receive, or a wait on receive requests, spent before
                             the matching send started */
    double late_receiver; /* time a synchronous or rendezvous send, or a wait on its request, spent
                             before the matching receive was posted */
    uint64_t n_late_sender, n_late_receiver; /* calls that waited a positive time */
} fc__wait_site;

/* Why a message instance was left without a partner. */
#define FC_UNMATCHED_REASONS(X)                                                                    \
    X(NO_PARTNER, 0, "no matching message on the peer")                                           \
    X(UNRESOLVED, 1, "wildcard receive completed without a status")                               \
    X(INCOMPLETE, 2, "receive matched but never completed while tracing")                         \
    X(NO_PEER_FILE, 3, "the peer rank has no trace file")

enum fc__unmatched_reason {
#define FC__X(name, num, text) FC_UNMATCHED_##name = num,
    FC_UNMATCHED_REASONS(FC__X)
#undef FC__X
};

/* One send or receive without a partner. */
typedef struct fc__unmatched {
    int send;           /* 1 for a send, 0 for a receive */
    uint32_t rank;      /* world rank of the call */
    int64_t peer;       /* world rank of the partner, or FC_PEER_ANY for an unresolved wildcard */
    int64_t tag;
    uint64_t bytes;
    uint32_t kind;      /* FC_EV_* of the call */
    uint64_t site;
    double post;        /* seconds since the origin */
    uint32_t reason;    /* FC_UNMATCHED_* */
} fc__unmatched;

/* When each end of a flow started waiting for it: the entry of the call that completed it (a
 * blocking call's own entry, a Wait's for a request; for a request completed by a Test, which its
 * rank polled, its post), in seconds since the origin. Until then the rank was computing or in
 * other calls: the time it was not there to take part. */
typedef struct fc__flow_waits {
    double send_wait, recv_wait;
    int send_early; /* 1: a send that waits for its receive completed before that receive was
                       posted (counted in fc__match.send_violations) */
} fc__flow_waits;

/* Bytes and messages sent from node src to node dst. */
typedef struct fc__traffic {
    uint32_t src, dst;
    uint64_t count;
    double bytes;
    uint64_t coll_count;   /* of those, the messages of collectives (collective/calls.h) */
    double coll_bytes;
} fc__traffic;

/* Node counts up to this one sum the traffic in a matrix, larger ones in a table of the pairs
 * (1024; the tests lower it to check the table). */
extern size_t fc__traffic_dense;

/* The result of matching one trace. Owned by the caller (fc__match_free). */
typedef struct fc__match {
    uint64_t eager_threshold;   /* bytes, as given */
    /* flows[0 .. ninter) are the inter-node flows, ids 0 .. ninter-1 in order of start, then source
     * rank; flows[ninter .. nflows) are the intra-node messages (intra = 1), ids continuing in the
     * same order. flows[i].id == i throughout. */
    size_t nflows, ninter;
    fc__flow *flows;
    /* Nodes numbered in order of first appearance by world rank (fc_rank_info.node, else the host
     * name, else "rank-N" for a rank that names neither). */
    size_t nnodes;
    char **nodes;
    uint32_t world;             /* world size: the length of the per-rank arrays */
    uint32_t *rank_node;        /* node of each world rank, FC_NODE_NONE without a rank file */
    /* The node pairs that exchanged messages (src == dst: intra-node), sorted by source then
     * destination, one entry per pair: a list, so that memory follows the pairs that talk, where
     * a matrix of 4096 nodes took 256 MiB. */
    size_t ntraffic;
    fc__traffic *traffic;
    struct fc__traffic_acc *acc; /* private to match.c: the sums while matching */
    double *late_sender;        /* per world rank, seconds */
    double *late_receiver;
    size_t nsites;              /* wait states per (rank, site), sorted by rank then site */
    fc__wait_site *sites;
    uint64_t sends, recvs;      /* message instances found (PROC_NULL and cancelled ones excluded) */
    uint64_t cancelled;         /* instances completed as cancelled, left out of the matching */
    uint64_t proc_null;         /* sends and receives with MPI_PROC_NULL, left out */
    uint64_t unmatched_sends, unmatched_recvs; /* entries of unmatched[] by side */
    size_t nunmatched;
    fc__unmatched *unmatched;    /* in order of rank, then post */
    /* Clock condition: a receive completing before its send started, on the aligned clock. The
     * flows keep their measured times (never clamped); these count and locate the violations. */
    uint64_t clock_violations;
    double worst_violation;     /* seconds by which the worst one completed before its send */
    uint64_t worst_flow;        /* id of that flow (valid when clock_violations > 0), or
                                   UINT64_MAX when flows were streamed and it has no id */
    uint32_t worst_src, worst_dst; /* its world ranks */
    double worst_send;          /* its send's start, seconds */
    uint64_t coll_records;      /* records of collectives and communicator constructors seen */
    /* The tracer's own waits for a free buffer chunk (TRACER_WAIT): time the application lost to
     * the tracer, which the flows' times and the wait states include as observed. */
    uint64_t tracer_waits;
    double tracer_wait_s;       /* their seconds, all ranks */
    uint32_t tracer_wait_rank;  /* the rank that waited longest in all (valid when tracer_waits > 0) */
    double tracer_wait_rank_s;  /* its seconds */
    uint64_t clock_violations_beyond; /* those larger than the two ranks' clock uncertainties
                                         (fc_rank_clock_uncertainty) added: the ones that say
                                         the alignment is wrong rather than merely imprecise */
    /* The other clock condition: a send that waits for its receive (synchronous, or rendezvous
     * and not buffered) completing before that receive was posted. Counted and located the same
     * way; worst_send_flow is an id (a delivery order when streamed). */
    uint64_t send_violations, send_violations_beyond;
    double worst_send_violation;
    uint64_t worst_send_flow;
    uint32_t worst_send_src, worst_send_dst;
    double *clock_unc;          /* per world rank: its clock uncertainty in seconds */
    /* waits[i]: flow i's wait entries (fc__match_trace only; NULL when streamed). cur_waits: those
     * of the flow being delivered to a sink, valid during its flow call. */
    fc__flow_waits *waits;
    fc__flow_waits cur_waits;
} fc__match;

/* Matches every send of the trace to its receive (communicator, source, destination and tag, in
 * MPI's non-overtaking order, wildcards resolved through the recorded status) and builds the
 * flows. Events are streamed rank by rank; memory holds one record per message instance. The
 * threshold (bytes) selects the rendezvous start rule and which standard sends can be Late
 * Receivers; 0 means FC_MATCH_EAGER_DEFAULT. On success *out owns the result (fc__match_free); on
 * failure *out is NULL and the code is a reader error (fc_errmsg names it) or FC_ENOMEM. */
int fc__match_trace(fc_trace *t, uint64_t eager_threshold, fc__match **out);
/* Where fc__match_stream delivers the matched messages. */
typedef struct fc__match_sink {
    void *arg;
    /* Called once before any flow, with the result being filled: its nodes, world and rank_node
     * are final (may be NULL). */
    int (*start)(void *arg, const fc__match *m);
    /* One matched message (inter- or intra-node), in the order pairs complete; its id is the
     * order of delivery (0, 1, 2 ...), not yet the final id. The flow is valid during the call. */
    int (*flow)(void *arg, const fc__flow *f);
    /* No flow delivered from now on starts before watermark (seconds since the origin). */
    int (*advance)(void *arg, double watermark);
} fc__match_sink;

/* The same match, with the flows handed to sink as they are paired instead of kept: the result
 * holds every count, the traffic, wait states and unmatched messages, but nflows flows are not
 * stored (flows is NULL) and worst_flow is the delivery order of the worst violation. The messages
 * held at one time are those in flight; a send that never meets its receive (a rank that died
 * mid-run) holds the watermark back until the end. A non-zero return of a sink function stops the
 * match with that code. */
int fc__match_stream(fc_trace *t, uint64_t eager_threshold, const fc__match_sink *sink, fc__match **out);

/* Frees a match result; NULL is a no-op. */
void fc__match_free(fc__match *m);

/* Sorts flows[0..n) in fc__match_trace's order: intra-node flows last, then by start, source
 * rank, destination rank, end, send start and id. Never fails (with no memory for its indices it
 * sorts in place, more slowly). */
void fc__sort_flows(fc__flow *flows, size_t n);
/* A one-word-per-reason description of an FC_UNMATCHED_* code, or "unknown". */
const char *fc__unmatched_reason(uint32_t reason);

#endif /* FLOWCUT_ANALYZER_MATCH_H */
