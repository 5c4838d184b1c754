/* analyzer/conflict/sweep.h: the incremental sweep behind intervals.h. Flows are given in order of start
 * (or in any order, as long as none starts before the time already swept), their boundaries are
 * applied in time order, and each synchronous homogeneous interval and each finished flow is handed
 * to the caller's functions as soon as it is known. Memory is proportional to the flows in flight,
 * not to the flows or intervals seen, so a caller that keeps only what it needs (the text report,
 * a streaming reader) analyses a trace of any length in bounded memory. fc__intervals_build is one
 * such caller that happens to keep everything.
 *
 * The intervals and labels are exactly those intervals.h defines; this header only says when they
 * are delivered. Internal to libflowcut-analyzer. Not thread-safe: one sweep, one thread. */
#ifndef FLOWCUT_ANALYZER_SWEEP_H
#define FLOWCUT_ANALYZER_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include "match/flow.h"
#include "conflict/intervals.h"

typedef struct fc__sweep fc__sweep;

/* The caller's functions. Either may be NULL. A non-zero return stops the sweep: the call that
 * was applying boundaries returns that value. */
typedef struct fc__sweep_ops {
    void *arg;
    /* Interval number index (0, 1, 2 ... in time order) is [start, end); during the call the
     * sweep's active set (fc__sweep_nactive and the accessors below) is that interval's. */
    int (*interval)(void *arg, const fc__sweep *s, size_t index, double start, double end);
    /* Flow f has passed its end: runs[0..nruns) is its label history in time order (run indices
     * as in fc__label_run). A flow that is never active (intra-node, a node to itself, no bytes,
     * end <= start) is reported from fc__sweep_add with no runs. The pointers are valid during the
     * call. */
    int (*flow_done)(void *arg, const fc__flow *f, const fc__label_run *runs, size_t nruns);
    /* Either NULL, or both set: an interval whose largest k (fc__sweep_max_k) and active flows
     * (fc__sweep_nactive, below 2^32), as the number k << 32 | flows, are below *min_kn, read at
     * each interval, is not handed to interval but counted in *skipped. For a caller that keeps
     * only the intervals of the largest conflicts, then of the most flows, which most intervals
     * then cannot join. */
    const uint64_t *min_kn;
    size_t *skipped;
} fc__sweep_ops;

/* The number an interval's largest k and active flows (below 2^32) make for min_kn. */
static inline uint64_t fc__sweep_kn(uint32_t k, size_t flows)
{
    return (uint64_t)k << 32 | flows;
}

/* Where a new sweep's 32-bit visit stamps wrap (every mark is then cleared and they start again
 * from 1): 0, the natural wrap after four billion steps, unless a test sets a small value to see
 * many wraps in a short sweep. Read by fc__sweep_new only. */
extern uint32_t fc__sweep_stamp_wrap;

/* A new, empty sweep in *out (freed with fc__sweep_free). Returns 0 or FC_ENOMEM. */
int fc__sweep_new(const fc__sweep_ops *ops, fc__sweep **out);
void fc__sweep_free(fc__sweep *s);

/* Adds one flow (copied). Its start must not be earlier than the last fc__sweep_advance's until:
 * FC_EINVAL otherwise, and for a flow that is not intra with a time that is not finite. Flow ids
 * order flows where the rules need an order (a cycle pairs from its smallest id), so ids should be
 * distinct. Returns 0, FC_ENOMEM, FC_EINVAL or what flow_done returned. */
int fc__sweep_add(fc__sweep *s, const fc__flow *f);

/* Where lent flows go back: the sweep appends each flow it is done with to v[n++] (the lender
 * keeps room for all it lends). */
typedef struct fc__sweep_back {
    fc__flow **v;
    size_t n;
} fc__sweep_back;

/* Before the first fc__sweep_lend: where its flows go back. back may move its v between calls. */
void fc__sweep_lender(fc__sweep *s, fc__sweep_back *back);

/* As fc__sweep_add, but f itself is kept, not copied: it must stay where it is, unchanged, until
 * the sweep gives it back, right after handing it to flow_done. A flow whose add fails is not given
 * back (the sweep is over then). Saves a copy of each flow, for a caller that keeps them anyway. */
int fc__sweep_lend(fc__sweep *s, fc__flow *f);

/* A flow to lend in a batch, with its start beside it (as the lender keeps them to sort them). */
typedef struct fc__sweep_loan {
    double start; /* fl->start */
    fc__flow *fl;
} fc__sweep_loan;

/* fc__sweep_lend of v[0].fl, v[1].fl ... v[n - 1].fl in turn, up to the first that fails, whose
 * return it returns (0 when none does). One call per batch, in which the usual flow (valid, and
 * starting no earlier than the one before) takes the shortest way. */
int fc__sweep_lend_all(fc__sweep *s, const fc__sweep_loan *v, size_t n);

/* Applies every boundary earlier than until: the caller promises that no flow added later starts
 * before until. Intervals are delivered once their end is known, so the last one before until may
 * wait for a later call. Returns 0, FC_ENOMEM or what a caller's function returned. */
int fc__sweep_advance(fc__sweep *s, double until);

/* Applies every remaining boundary (the flows given are all there are). */
int fc__sweep_finish(fc__sweep *s);

/* Sweeps flows[0..n) (not kept) from start to finish with a new sweep: flows are given in order
 * of start, then id. Returns 0, FC_ENOMEM, FC_EINVAL (a flow that is not intra has a time that is
 * not finite) or what a caller's function returned. */
int fc__sweep_flows(const fc__flow *flows, size_t n, const fc__sweep_ops *ops);

/* ---- the active set, valid inside the interval function --------------------------------------- */

/* Flows active in the current interval, and flow i of them (0 <= i < nactive, in no order). */
size_t fc__sweep_nactive(const fc__sweep *s);
const fc__flow *fc__sweep_flow(const fc__sweep *s, size_t i);
const fc__label *fc__sweep_label(const fc__sweep *s, size_t i);

/* Stores the ids of the active flows at ids[0 .. fc__sweep_nactive) (room for them is the
 * caller's), in the order of fc__sweep_flow: one call per interval rather than one per flow. */
void fc__sweep_active_ids(const fc__sweep *s, uint64_t *ids);

/* The largest k of any label of the active set (0 when it is empty). */
uint32_t fc__sweep_max_k(const fc__sweep *s);

/* Calls fn once per conflict of the active set, in no order, as fc__conflict describes them
 * (same-direction conflicts list their k flow ids ascending; a mixed one {entering, leaving}).
 * Returns 0, FC_ENOMEM or what fn returned. */
int fc__sweep_conflicts(const fc__sweep *s, int (*fn)(void *arg, const fc__conflict *c), void *arg);

/* One active flow as a snapshot keeps it: what its interval's conflicts are made of. */
typedef struct fc__snap_flow {
    uint64_t id;
    uint32_t src, dst; /* node numbers */
    uint32_t mixed_in; /* labelled FC_CONFLICT_MIXED_IN */
} fc__snap_flow;

/* Writes the active set, fc__sweep_nactive(s) flows in no order, to out: a copy in O(flows), where
 * fc__sweep_conflicts sorts, for a caller that keeps many intervals' conflicts and needs few of
 * them in the end (fc__snap_conflicts makes them). */
void fc__sweep_snapshot(const fc__sweep *s, fc__snap_flow *out);

/* The conflicts of a snapshot v[0..n) (reordered here), as fc__sweep_conflicts gives them for its
 * active set, sorted by node then kind, in *conf (*nconf of them) whose flows point into *ids; both
 * are new arrays the caller frees (NULL when there is no conflict). Returns 0 or FC_ENOMEM, with
 * nothing allocated then. */
int fc__snap_conflicts(fc__snap_flow *v, size_t n, fc__conflict **conf, size_t *nconf, uint64_t **ids);

/* Sorts flow ids[0..n) ascending, as fc__sweep_conflicts lists them: by insertion when they are
 * few (an interval's flows, a conflict's), by merge sort otherwise. */
void fc__sort_ids(uint64_t *ids, size_t n);

#endif /* FLOWCUT_ANALYZER_SWEEP_H */
