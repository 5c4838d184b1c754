/* analyzer/conflict/intervals.h: the split of inter-node flows into synchronous homogeneous intervals and
 * the conflict label of every flow in every interval (Martinasso & Mehaut 2006, sections 5.2 and
 * 5.3). Internal to libflowcut-analyzer.
 *
 * Intervals. A flow is active on [start, end). An interval is a maximal span of non-zero length
 * during which the set of active flows does not change and is not empty (idle gaps are not
 * intervals). Flows with intra set, flows from a node to itself, flows with end <= start and
 * flows of zero bytes (a barrier's messages, which take no bandwidth, so that their inferred times
 * never put them in conflict with the flows that carry data) are never active.
 *
 * Labels, in each interval, with k generalising the report's two-flow conflicts:
 *   1. Same direction (R2, cannot be divided): the k >= 2 flows leaving a node X form an OUTGOING
 *      conflict at X; the k >= 2 flows entering X form an INCOMING conflict at X.
 *   2. A flow in both (outgoing at its source, incoming at its destination) takes the one with the
 *      larger k. On a tie it takes OUTGOING: Table 2 gives both the same flow cuts, and section 6.1
 *      observes that the node throttles its outgoing flows, so the source is where the cut acts.
 *   3. Mixed (R3: dominated by the above): the flows in no same-direction conflict form disjoint
 *      paths and cycles. Each path is paired greedily from its origin (the flow whose source has
 *      no such flow entering it), each cycle from its smallest flow id; in a pair meeting at X the
 *      entering flow is MIXED_IN and the leaving one MIXED_OUT (k = 2, node = X). An odd flow out
 *      is NONE.
 *   4. Otherwise NONE with k = 1.
 * So `0>1>2>3` gives (0>1, 1>2) mixed at 1 and 2>3 alone, and `0>1>2<3<4<5` gives 1>2 and 3>2
 * incoming at 2, (5>4, 4>3) mixed at 4 and 0>1 alone, as the report decomposes them.
 *
 * Cost, for n flows, I intervals and A = the sum over intervals of their active flows (the size of
 * the output, which fc__interval requires to be stored): O(n log n) to sort the 2n boundaries, plus
 * O(A log k) to store the intervals and their conflict lists. At each boundary only the flows of
 * the connected components (flows linked through shared nodes) that hold a flow that started or
 * ended are relabelled: O(size of those components), which is at most the next interval's size,
 * so the labelling is O(A) in total and usually far less.
 *
 * Threads: a built fc__intervals is read-only and may be read from any number of threads. */
#ifndef FLOWCUT_ANALYZER_INTERVALS_H
#define FLOWCUT_ANALYZER_INTERVALS_H

#include <stddef.h>
#include <stdint.h>
#include "match/flow.h"

typedef struct fc__intervals fc__intervals;

/* One conflict of one interval. Same-direction conflicts list all their k flows, ascending, even
 * those labelled by the other end's conflict (rule 2), so a flow can be in two of them. A mixed
 * conflict has kind FC_CONFLICT_MIXED_IN, k = 2, and flows = {the flow entering node, the flow
 * leaving it}. */
typedef struct fc__conflict {
    uint32_t kind; /* FC_CONFLICT_OUTGOING, FC_CONFLICT_INCOMING or FC_CONFLICT_MIXED_IN */
    uint32_t node;
    uint32_t k;
    const uint64_t *flows;
} fc__conflict;

/* A stretch of consecutive intervals during which one flow keeps the same label. */
typedef struct fc__label_run {
    size_t first, count; /* interval indices first .. first + count - 1 */
    double start, end;   /* the start of interval first and the end of the last one */
    fc__label label;
} fc__label_run;

/* Splits and labels flows[0..n-1] (not kept: the result copies what it needs) and stores a new
 * handle in *out, owned by the caller and freed with fc__intervals_free. Returns 0, FC_ENOMEM, or
 * FC_EINVAL (message in fc_errmsg) when two flows share an id or a flow that is not intra has a
 * time that is not finite. A flow that ends before it starts (a clock-condition violation, which
 * matching counts and reports) is never active, like a flow of zero length. */
int fc__intervals_build(const fc__flow *flows, size_t n, fc__intervals **out);

/* As fc__intervals_build, but keeps of each interval only its span and its number of flows: the
 * flows and labels of fc__intervals_get's intervals are NULL (fc__interval_label must not be
 * called on them) and fc__intervals_conflicts finds none; the histories, the flow-seconds by label
 * and the largest k are those of a full build. Memory O(flows + intervals) instead of O(A), for
 * callers that need no interval's flows: A grows with the flows in flight at once, and reaches
 * gigabytes for a long trace. */
int fc__intervals_build_lean(const fc__flow *flows, size_t n, fc__intervals **out);

/* fc__intervals_build_lean, whose sweep also feeds another consumer, also (not NULL; its
 * callbacks and filter as fc__sweep_flows would apply them, after the build's own at each step):
 * the flows are swept once for both. A non-zero return of also's stops the build, which then
 * returns it (with *out NULL). */
struct fc__sweep_ops;
int fc__intervals_build_lean_also(const fc__flow *flows, size_t n, const struct fc__sweep_ops *also,
                                  fc__intervals **out);

/* Frees everything the handle owns; NULL is a no-op. */
void fc__intervals_free(fc__intervals *iv);

/* The number of intervals, and interval i (0 <= i < count; NULL otherwise), in time order. The
 * pointers stay valid until fc__intervals_free. */
size_t fc__intervals_count(const fc__intervals *iv);
const fc__interval *fc__intervals_get(const fc__intervals *iv, size_t i);

/* The label of flow id in one interval (binary search), or NULL when the flow is not active in
 * it. */
const fc__label *fc__interval_label(const fc__interval *in, uint64_t id);

/* Stores in *out the conflicts of interval i, sorted by node then kind, and returns how many. */
size_t fc__intervals_conflicts(const fc__intervals *iv, size_t i, const fc__conflict **out);

/* Stores in *runs and *nruns the label history of flow id, in time order (no runs for a flow that
 * is never active). Returns 0, or FC_EINVAL when no flow given to build has that id. */
int fc__intervals_history(const fc__intervals *iv, uint64_t id, const fc__label_run **runs,
                          size_t *nruns);

/* Flow-seconds spent under the label (kind, k): the sum, over intervals and their flows so
 * labelled, of the interval's length. 0 for a pair never seen. */
double fc__intervals_time(const fc__intervals *iv, uint32_t kind, uint32_t k);

/* Labels one set of flows that are all active together, by the rules above: flow i goes from
 * node src[i] to node dst[i] and its label is stored in out[i] (a flow with src[i] == dst[i] is
 * NONE with k = 1). Flows are ordered by index where the rules need an order (a cycle is paired
 * from its smallest index). This is what a contention model needs at each step of a simulation,
 * where the active set is not a trace's. Returns 0, FC_ENOMEM or FC_EINVAL (NULL arrays with
 * n > 0). O(n log n). */
int fc__intervals_label_set(const uint32_t *src, const uint32_t *dst, size_t n, fc__label *out);

/* Memory fc__intervals_label_set_with reuses from one call to the next: zero it to start, and
 * give it back with fc__label_scratch_free (which leaves it zeroed, ready for reuse). */
typedef struct fc__label_scratch {
    void *p;
    size_t cap;
} fc__label_scratch;

/* fc__intervals_label_set with its working memory taken from sc, which grows when a larger set
 * needs more and keeps it (owned by the caller, freed by fc__label_scratch_free). The labels are
 * the same; on FC_ENOMEM sc is left as it was. */
int fc__intervals_label_set_with(const uint32_t *src, const uint32_t *dst, size_t n, fc__label *out,
                                 fc__label_scratch *sc);
void fc__label_scratch_free(fc__label_scratch *sc);

/* The largest k of any label (0 when there are no intervals). */
uint32_t fc__intervals_max_k(const fc__intervals *iv);

/* A flow's main conflict from its label history runs[0..nruns): the label it spent the most time
 * under (NONE with k = 1 for no runs) in *main, and its total time under a label other than NONE
 * in *conflict_s. */
void fc__runs_main(const fc__label_run *runs, size_t nruns, fc__label *main, double *conflict_s);

#endif /* FLOWCUT_ANALYZER_INTERVALS_H */
