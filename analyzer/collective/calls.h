/* analyzer/collective/calls.h: the collective calls of a trace, expanded into flows for the
 * analysis: each call's members, the messages of its algorithm placed inside the members' observed
 * windows, and the collective wait states. Internal to libflowcut-analyzer.
 *
 * Timing (it is inferred, not observed: MPI does not show a collective's inner messages). Each
 * member's observed window [entry, exit] (a non-blocking collective's: its post's entry to the
 * exit of the call that completed it; a persistent one's: each Start's entry to the completion of
 * that Start) is split evenly among the member's steps (the waits of its
 * part of the algorithm). A step starts no earlier than the member's previous step ended, and no
 * earlier than the steps that send it its inputs started; a later start pushes the member's
 * following steps later, and every step ends by the member's exit, its last step exactly there.
 * A message starts when its sending step starts (a rendezvous one when both steps have started)
 * and ends when its receiving step ends. The observed quantity of a collective is each member's
 * observed duration in the call. */
#ifndef FLOWCUT_ANALYZER_COLLECTIVE_CALLS_H
#define FLOWCUT_ANALYZER_COLLECTIVE_CALLS_H

#include <stddef.h>
#include <stdint.h>
#include <flowcut/reader.h>
#include "collective/collective.h"
#include "match/flow.h"
#include "match/match.h"

/* One member's record of a call. */
typedef struct fc__coll_member {
    uint32_t rank;        /* world rank */
    uint32_t me;          /* its index in the communicator */
    double enter, exit;   /* seconds since the trace's origin (aligned) */
    uint64_t site;        /* call-site id on the rank */
    uint64_t bytes, bytes2;
    /* The v and w forms whose counts the tracer recorded per peer (format 2.4): bytes sent to and
     * received from each member index (p entries each, owned by the calls); NULL otherwise. */
    const uint64_t *to, *from;
    /* The neighbourhood collectives: its neighbours (owned by the calls); NULL otherwise. The v
     * and w forms' to and from then index neighbour positions (max(indegree, outdegree) each). */
    const fc__coll_nbrs *nbrs;
} fc__coll_member;

/* One collective call (an instance: the same call on every member). */
typedef struct fc__coll_call {
    uint32_t kind;        /* FC_EV_* whose messages it has: MPI_Barrier for a communicator
                           * constructor, the non-blocking form for a Start of a persistent one */
    uint32_t record_kind; /* FC_EV_* of the records (the constructor's own kind, the _init's) */
    uint8_t alg;          /* FC__CA_* */
    uint8_t irregular;    /* Reduce_scatter: the members' blocks differ */
    uint32_t op;          /* a reduction's FC_EVF_USER_OP and FC_EVF_NONCOMMUTATIVE, from its records */
    uint32_t p;           /* members of the communicator (both groups of an inter-communicator) */
    uint32_t inter;       /* an inter-communicator's low group size (fc__coll_layout.inter), else 0 */
    uint32_t root;        /* member index of the root (0 when rootless) */
    uint64_t n;           /* the instance's size (fc__coll_expand's n) */
    size_t first, nmem;   /* its members present: members[first .. first + nmem), by index */
    const uint32_t *ranks; /* world rank of each member index (owned by the trace or the calls) */
    uint32_t dropped;     /* members' records left out: another kind of call at the same place */
    uint64_t nflows;      /* messages between present members */
    double wait_s;        /* the members' collective waits in this call (wait_nxn and the others) */
    uint64_t inter_bytes, intra_bytes;
} fc__coll_call;

/* The members of an inter-communicator, low group first (fc__coll_layout.inter). */
typedef struct fc__coll_inter_list {
    uint64_t key;
    uint32_t p, a;
    uint32_t *ranks;
} fc__coll_inter_list;

/* Per FC_EV_* kind of call. */
typedef struct fc__coll_kind_sum {
    uint64_t calls, flows, inter_flows;
    uint64_t inter_bytes, intra_bytes;
} fc__coll_kind_sum;

typedef struct fc__colls {
    size_t ncalls;
    fc__coll_call *calls;     /* in order of first appearance in the rank files */
    size_t nmembers;
    fc__coll_member *members;
    fc__coll_kind_sum kinds[FC_EV_MAX_];
    uint64_t flows, inter_flows; /* messages expanded (between present members) */
    uint64_t incomplete;      /* calls with members missing or disagreeing */
    size_t first_incomplete;  /* index of the first such call (valid when incomplete > 0) */
    uint32_t world;
    /* Collective wait states per world rank (Scalasca's): a member of an N-to-N call (barrier,
     * all-reduce, all-gather, all-to-all, reduce-scatter) waits until the last member enters;
     * a non-root of a broadcast or scatter waits until the root enters (Late Broadcast); the root
     * of a reduce or gather waits until the first other member enters (Early Reduce); a member of
     * a neighbourhood collective waits until the last of its sources enters (in wait_nxn). Each
     * wait is at most the member's time in the call. */
    double *wait_nxn, *late_bcast, *early_reduce;
    fc__coll_settings settings;  /* the algorithms the run forced */
    uint32_t unsupported;        /* algorithm variables the expansion cannot model */
    char unsupported_text[160];  /* the first of them, NAME=VALUE */
    uint32_t *world_ranks;       /* 0 .. world-1, for MPI_COMM_WORLD without a definition */
    uint32_t *mpich_node;        /* per world rank, the node MPICH takes it to be on */
    uint64_t *peer_bytes;        /* what the members' to and from point into */
    /* Records (every member's) of collectives on inter-communicators that are not expanded, per
     * FC_EV_* kind: those without an inter-communicator algorithm in the expansion
     * (fc__coll_select_inter) and the constructors. */
    uint64_t inter_records[FC_EV_MAX_];
    fc__coll_inter_list *inter_lists; /* the inter-communicators' member lists the calls point to */
    size_t ninter_lists;
    fc__coll_nbrs **nbr_lists;   /* the members' neighbour lists (fc__coll_nbrs_of), one per rank
                                  * and communicator with a topology */
    size_t nnbr_lists;
    /* Records of neighbourhood collectives on a communicator the trace gives no topology for
     * (a trace of format 2.5 or older): not expanded. */
    uint64_t nbr_unknown;
    /* Calls whose selected algorithm has no expansion (fc__coll_expand_in's FC_EUNSUPPORTED):
     * not expanded; the index of the first (valid when unexpanded > 0). */
    uint64_t unexpanded;
    size_t first_unexpanded;
} fc__colls;

/* Reads the collective calls of trace t and expands them into flows (intra = 1 for those inside a
 * node) with nodes and eager threshold from m (m->rank_node, m->eager_threshold), handed to fn in
 * no particular order (their ids are not set). On success *out is owned by the caller
 * (fc__colls_free). Returns 0, fn's non-zero code, a reader error or FC_ENOMEM. */
int fc__colls_build(fc_trace *t, const fc__match *m, int (*fn)(void *arg, const fc__flow *f), void *arg,
                    fc__colls **out);

/* The same without reading the trace (a match that saw no collective record): no call. */
int fc__colls_none(fc_trace *t, const fc__match *m, fc__colls **out);

/* Frees c; NULL is a no-op. */
void fc__colls_free(fc__colls *c);

/* Builds the calls of t and adds their flows to m (a result of fc__match_trace): the flows are
 * re-sorted and given ids in fc__match_trace's order, the point-to-point flows keeping their order
 * among themselves, and the traffic gains the collectives' bytes. *out as for fc__colls_build. */
int fc__colls_add(fc_trace *t, fc__match *m, fc__colls **out);

/* The same for fc__match_stream: wraps the sink given to it, so that the collective flows reach
 * the inner sink among the matched ones, in the order of the watermarks. After fc__match_stream
 * returned m, fc__coll_stream_finish hands on what is left, completes m's counts and traffic and
 * gives the calls to *out (owned by the caller). */
typedef struct fc__coll_stream fc__coll_stream;
int fc__coll_stream_new(fc_trace *t, const fc__match_sink *inner, fc__coll_stream **out);
fc__match_sink fc__coll_stream_sink(fc__coll_stream *cs);
int fc__coll_stream_finish(fc__coll_stream *cs, fc__match *m, fc__colls **out);
void fc__coll_stream_free(fc__coll_stream *cs);

/* The node MPICH's ch4 device takes each world rank of t to be on, out[r] for rank r < world,
 * under the settings s: the ranks of one host share a node unless s says otherwise (collective.h);
 * a rank without a rank file is alone. The numbers are only compared with each other. Returns 0
 * or FC_ENOMEM. */
int fc__coll_mpich_nodes(const fc_trace *t, const fc__coll_settings *s, uint32_t world, uint32_t *out);

/* The settings the run's recorded MPIR_CVAR_* variables make (the first rank's that has them:
 * the launcher gives every rank the same environment) into *s; returns how many force an
 * algorithm the expansion does not model, the first as NAME=VALUE in text[0 .. n). */
uint32_t fc__coll_trace_settings(const fc_trace *t, fc__coll_settings *s, char *text, size_t n);
/* The same into c->settings, c->unsupported and c->unsupported_text. */
void fc__colls_settings(const fc_trace *t, fc__colls *c);

#endif /* FLOWCUT_ANALYZER_COLLECTIVE_CALLS_H */
