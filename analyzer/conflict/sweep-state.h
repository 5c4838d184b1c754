/* analyzer/conflict/sweep-state.h: the sweep's state (struct fc__sweep and its parts), shared by the files of the sweep. Private to analyzer/conflict/. */
#ifndef FLOWCUT_ANALYZER_CONFLICT_SWEEP_STATE_H
#define FLOWCUT_ANALYZER_CONFLICT_SWEEP_STATE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "conflict/sweep.h"

/* One boundary: a flow (slot) starting or ending at t. Two words, so that it travels in registers. */
typedef struct bnd {
    double t;
    uint32_t slot;
    uint32_t start;
} bnd;

/* A start waiting in the queue of starts, with what the step that starts the flow needs of it: a
 * lent flow (fl) with its nodes' dense indices, which takes a slot only then, or a flow given a
 * slot already (fl NULL). A release queues hundreds of starts at once: their flows' lines, and
 * slots taken for them, would have left the cache by the time each starts, where the slots freed
 * by the flows that ended last have not. */
typedef struct qstart {
    double t, end;
    fc__flow *fl;
    uint32_t src, dst; /* with fl; without, src is the slot */
} qstart;

/* A growable list of slots (the active flows leaving or entering a node). */
typedef struct slist {
    uint32_t *v;
    uint32_t n, cap;
} slist;

/* The label history of one active flow. */
typedef struct rvec {
    fc__label_run *v;
    uint32_t n, cap;
} rvec;

/* What the labelling reads and writes of one active flow, side by side in 64 bytes (the whole
 * flow, read only for its end, its id and by the caller, stays where fp[] points). A flow has been
 * labelled once its history has a run: every active flow gets one in the step that starts it, and
 * its last run's label is its label from then on. */
typedef struct slot {
    uint32_t src, dst;              /* dense node indices */
    uint32_t pos_out, pos_in, apos; /* places in out[src], in[dst] and the active set */
    uint32_t inset, seen;           /* stamps: in this relabelling, paired in it */
    fc__label lab;
    uint8_t rem;  /* left for the mixed rule (0 before the first label) */
    uint8_t lent; /* the flow is the lender's (fc__sweep_lend), not a copy in flow[] */
    rvec runs;    /* while active only: from rpool at its start, back there at its end */
} slot;
_Static_assert(sizeof(slot) == 64, "a slot fills one cache line");

/* One node: its active flows out and in, and the stamps that visit it once. Padded to 64 bytes, so
 * that finding a node is a shift. */
typedef struct node {
    slist out, in;
    uint32_t mark, omark, imark; /* mark: out taken in this relabelling; mark_in: in taken */
    uint32_t num;                /* the node number */
    uint32_t mark_in;
    /* A node that flows in come from (the first one's, after none came in) and how many of the
     * flows in do: when all of them, a step that changes the out list of that node takes them all
     * with it (collect). */
    uint32_t from, nfrom;
    uint32_t pad;
} node;
_Static_assert(sizeof(node) == 64, "a node fills one cache line");

/* An entry of the node table: a node number and its dense index + 1 (0: empty entry). */
typedef struct nent {
    uint32_t num, ix1;
} nent;

struct fc__sweep {
    fc__sweep_ops ops;
    double until; /* boundaries before it are applied; flows may not start earlier */
    /* Slots, one per flow from its start (from its fc__sweep_add when not queued by
     * fc__sweep_lend_all: struct qstart) to its end. */
    size_t nslots, cslots;
    fc__flow *flow; /* copies of the flows given by fc__sweep_add */
    fc__flow **fp;  /* each slot's flow: its copy in flow[] or the lender's */
    fc__sweep_back *back;
    slot *sl;
    uint32_t *freed;
    size_t nfreed;
    /* Label histories not in use, emptied. A history goes with a flow from its start to its end
     * and not with its slot: a release lends hundreds of flows at once, each with a slot, so that
     * histories kept by their slots would be written round a much larger set than the few
     * dozen active at a time, and miss the cache at nearly every run. */
    rvec *rpool;
    size_t nrpool;
    /* Nodes, numbered densely in order of appearance through an open-addressing table; small node
     * numbers (nodes are usually numbered from 0) are also found directly in dir (index + 1, 0 for
     * none), which every flow's two look-ups try first. */
    nent *nmap;
    size_t mapcap;
    uint32_t *dir;
    size_t ndir;
    node *nd;
    size_t nnodes, cnodes;
    /* The active set, unordered; sl[f].apos is a slot's place in it. */
    uint32_t *act;
    size_t nact, cact;
    /* Pending boundaries: starts given in order of start wait in a queue (the usual case: the feed
     * and fc__sweep_flows give them so), other starts and every end in a min-heap on time, which
     * then holds little more than the active flows. Each array has a sentinel at infinity after its
     * last entry (heap[nheap], fifo[fn]), so that the next time is read without a test for empty,
     * and a node of the heap with one child compares that child with it; the heap has a second
     * (heap[nheap + 1]), so that the top's two children are read without a test either. */
    bnd *heap;
    size_t nheap, cheap;
    qstart *fifo; /* starts not decreasing, fifo[fh .. fn) */
    size_t fh, fn, fcap;
    /* Scratch. */
    uint32_t *queue, *rems; /* rems and chg as long as the slots (struct relabel) */
    const slist **chg;
    size_t cqueue;
    uint64_t *cids;
    size_t ccids;
    uint32_t stamp, cstamp; /* 32 bits to keep a slot small; reset when they wrap (next_stamp) */
    uint32_t wrap;          /* where they wrap: fc__sweep_stamp_wrap */
    /* Intervals: the number delivered, and the open one, since open_t, the last step's time, when
     * the active set is not empty (it changes in steps only). */
    size_t niv;
    double open_t;
    /* Labelled flows by label k, and the largest k among them, for fc__sweep_max_k. */
    size_t *cnt_k;
    size_t ccnt_k;
    uint32_t top_k;
};

/* ---- conflict/sweep.c ---------------------------------------------------------------------------- */

/* ---- the sweep ------------------------------------------------------------------------------ */
int fc__sw_live(const fc__flow *f);

#endif /* FLOWCUT_ANALYZER_CONFLICT_SWEEP_STATE_H */
