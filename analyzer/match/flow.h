/* analyzer/match/flow.h: flows (matched inter-node messages) and their conflicts, the contract between
 * message matching (match.c), the interval and conflict decomposition (intervals.c) and the
 * reports. Internal to libflowcut-analyzer. */
#ifndef FLOWCUT_ANALYZER_FLOW_H
#define FLOWCUT_ANALYZER_FLOW_H

#include <stddef.h>
#include <stdint.h>

/* One matched message. Times are seconds on rank 0's clock (aligned), relative to the trace's
 * origin (fc_trace_origin). Node numbers index the trace's node list (fc__nodes below). The fields
 * are in the order the analysis reads them: the first 64 bytes hold all that the ordering of the
 * flows and the interval sweep read, the next 64 what the summary reads besides, so that a flow
 * passed along costs one or two cache lines rather than three; and a flow is two lines long, so
 * that one on a line (the feed's) never spans three. */
typedef struct fc__flow {
    uint64_t id;                 /* 0, 1, 2 ... in order of start, then source rank */
    uint32_t src_rank, dst_rank; /* world ranks */
    uint32_t src_node, dst_node;
    int intra;                   /* 1 when src_node == dst_node: kept apart from the flows */
    int rendezvous;              /* 1 when bytes >= the eager threshold: start = max(send, post) */
    double start, end;           /* when the transfer could begin, and the receive's completion */
    double send_start, send_end; /* the send call (or the post of a nonblocking send and the
                                    completion of its request) */
    uint64_t bytes;              /* bytes received */
    double observed;             /* end - start */
    uint64_t send_site, recv_site; /* call-site ids on the source and destination rank */
    double recv_post, recv_end;  /* the receive post (Recv entry or Irecv) and its completion */
    int64_t tag;                 /* -1 for a message of a collective */
    uint16_t send_kind, recv_kind; /* FC_EV_* of the calls that sent and received */
    uint8_t coll;                /* FC_EV_* of the collective the message is a step of (its
                                    expansion, collective/collective.h), 0 for a point-to-point one */
    uint8_t coll_alg;            /* the collective's algorithm (FC__CA_*) */
    uint16_t coll_step;          /* the sender's step of the algorithm, from 0 */
} fc__flow;
_Static_assert(offsetof(fc__flow, send_start) + sizeof(double) <= 64, "what the sweep reads fits one line");
_Static_assert(sizeof(fc__flow) == 128, "a flow fills two cache lines");

/* Conflict kinds of Martinasso & Mehaut (section 5.1). MIXED_IN and MIXED_OUT are the two roles
 * of a flow in a mixed conflict at a node: entering it or leaving it. */
#define FC_CONFLICT_KINDS(X)                                                                       \
    X(NONE, 0, "none")                                                                            \
    X(OUTGOING, 1, "outgoing")                                                                    \
    X(INCOMING, 2, "incoming")                                                                    \
    X(MIXED_IN, 3, "mixed-in")                                                                    \
    X(MIXED_OUT, 4, "mixed-out")

enum fc__conflict_kind {
#define FC__X(name, num, text) FC_CONFLICT_##name = num,
    FC_CONFLICT_KINDS(FC__X)
#undef FC__X
};

/* The conflict that labels one flow in one interval. */
typedef struct fc__label {
    uint32_t kind; /* FC_CONFLICT_* */
    uint32_t node; /* the node where the conflict happens (unused for NONE) */
    uint32_t k;    /* flows in the conflict (1 for NONE) */
} fc__label;

/* One synchronous homogeneous interval: a maximal span during which the set of active flows does
 * not change. flows[i] is labelled labels[i]. */
typedef struct fc__interval {
    double start, end;
    size_t nflows;
    const uint64_t *flows; /* flow ids, ascending */
    const fc__label *labels;
} fc__interval;

#endif /* FLOWCUT_ANALYZER_FLOW_H */
