/* analyzer/conflict/summary.c: the text report's view of the sweep (summary.h). The top N of each list is a
 * binary heap with the least bad row on top, so an interval or flow that cannot enter costs one
 * comparison and nothing is copied for it. */
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "conflict/intervals.h"
#include "conflict/summary.h"

/* Worst intervals first: the largest conflict, then the most flows, then the longest, then the
 * earliest. Returns 1 when a is worse (ranks before) b. */
static int iv_before(const fc__sum_interval *a, const fc__sum_interval *b)
{
    if (a->max_k != b->max_k)
        return a->max_k > b->max_k;
    if (a->nflows != b->nflows)
        return a->nflows > b->nflows;
    double la = a->end - a->start, lb = b->end - b->start;
    if (la != lb)
        return la > lb;
    return a->index < b->index;
}

/* Worst flows first: the most observed time per byte (the lowest effective bandwidth), then id. */
static double per_byte(const fc__flow *f)
{
    return f->observed / (double)(f->bytes ? f->bytes : 1);
}

static int flow_before(const fc__flow *a, const fc__flow *b)
{
    double ra = per_byte(a), rb = per_byte(b);
    if (ra != rb)
        return ra > rb;
    return a->id < b->id;
}

static int fl_before(const fc__sum_flow *a, const fc__sum_flow *b)
{
    return flow_before(&a->flow, &b->flow);
}

/* Rows by conflict time, most first, then rank and site. */
static int cmp_row(const void *x, const void *y)
{
    const fc__sum_row *a = x, *b = y;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->site != b->site)
        return a->site < b->site ? -1 : 1;
    return (a->node > b->node) - (a->node < b->node);
}

static int cmp_iv(const void *x, const void *y)
{
    return iv_before(x, y) ? -1 : iv_before(y, x) ? 1 : 0;
}

static int cmp_fl(const void *x, const void *y)
{
    return fl_before(x, y) ? -1 : fl_before(y, x) ? 1 : 0;
}


/* ---- top-N heaps: the row that would leave first (the least bad) on top ----------------------- */

/* A worse row belongs below: it stays while better ones leave. */
static int iv_below(const void *ctx, const fc__sum_interval *a, const fc__sum_interval *b)
{
    (void)ctx;
    return iv_before(a, b);
}

static int fl_below(const void *ctx, const fc__sum_flow *a, const fc__sum_flow *b)
{
    (void)ctx;
    return fl_before(a, b);
}

FC__HEAP(ivh, fc__sum_interval, iv_below)
FC__HEAP(flh, fc__sum_flow, fl_below)

/* ---- intervals ------------------------------------------------------------------------------ */

static void iv_release(fc__sum_interval *v)
{
    free(v->conf);
    free(v->ids);
    free(v->snap);
    v->conf = NULL;
    v->ids = NULL;
    v->snap = NULL;
    v->csnap = 0;
}

/* Adds interval index [start, end), of nflows flows and largest k max_k, which ranks among the
 * worst, with a snapshot of the sweep's active set; fc__summary_finish makes the conflicts of the
 * few that stay. A run over many ranks has intervals of thousands of flows, which rank one after
 * another while the flows of a round start: sorting each one's conflicts here took most of the
 * time. Kept out of line, so that on_interval's common path (the interval does not rank) stays
 * short. */
__attribute__((noinline)) static int keep_interval(fc__summary *s, const fc__sweep *sw, size_t index, double start,
                                                   double end, size_t nflows, uint32_t max_k)
{
    fc__sum_interval cand = {.index = index, .start = start, .end = end, .nflows = nflows, .max_k = max_k};
    int full = s->top && s->nworst == s->top;
    if (s->top == 0) { /* every interval stays: its conflicts at once, smaller than a snapshot */
        if (fc__reserve(&s->worst, &s->cworst, s->nworst + 1, sizeof *s->worst) ||
            fc__reserve(&s->snapbuf, &s->csnapbuf, nflows ? nflows : 1, sizeof *s->snapbuf))
            return FC_ENOMEM;
        fc__sweep_snapshot(sw, s->snapbuf);
        if (fc__snap_conflicts(s->snapbuf, nflows, &cand.conf, &cand.nconf, &cand.ids))
            return FC_ENOMEM;
        s->worst[s->nworst++] = cand;
        ivh_up(NULL, s->worst, s->nworst - 1);
        return 0;
    }
    if (full) { /* the interval that leaves lends its snapshot's memory */
        cand.snap = s->worst[0].snap;
        cand.csnap = s->worst[0].csnap;
        s->worst[0].snap = NULL;
        iv_release(&s->worst[0]);
    } else if (fc__reserve(&s->worst, &s->cworst, s->nworst + 1, sizeof *s->worst))
        return FC_ENOMEM;
    if (fc__reserve(&cand.snap, &cand.csnap, nflows ? nflows : 1, sizeof *cand.snap)) {
        if (full) { /* the list is one short: its least bad row goes */
            s->worst[0] = s->worst[--s->nworst];
            ivh_down(NULL, s->worst, s->nworst, 0);
        }
        free(cand.snap);
        return FC_ENOMEM;
    }
    fc__sweep_snapshot(sw, cand.snap);
    if (full) {
        s->worst[0] = cand;
        ivh_down(NULL, s->worst, s->nworst, 0);
    } else {
        s->worst[s->nworst++] = cand;
        ivh_up(NULL, s->worst, s->nworst - 1);
    }
    /* A full list takes no interval with a smaller largest conflict than its least bad one's, nor
     * with as large a one and fewer flows: the sweep does not even hand those over. */
    if (s->top && s->nworst == s->top) {
        s->min_kn = fc__sweep_kn(s->worst[0].max_k, s->worst[0].nflows); /* nflows < 2^32 */
    }
    return 0;
}

static int on_interval(void *arg, const fc__sweep *sw, size_t index, double start, double end)
{
    fc__summary *s = arg;
    s->nintervals++;
    /* Most intervals do not rank, and nothing is gathered for them: those below the least bad
     * kept one on their largest conflict or else their flows (nearly all) were counted by the sweep
     * instead (min_kn); a tie on both is settled here. */
    uint32_t max_k = fc__sweep_max_k(sw);
    size_t nflows = fc__sweep_nactive(sw);
    if (s->top && s->nworst == s->top) {
        fc__sum_interval cand = {.index = index, .start = start, .end = end, .nflows = nflows, .max_k = max_k};
        if (!iv_before(&cand, &s->worst[0]))
            return 0;
    }
    return keep_interval(s, sw, index, start, end, nflows, max_k);
}

/* ---- flows ---------------------------------------------------------------------------------- */

_Static_assert(offsetof(fc__sum_row, mixed) == offsetof(fc__sum_row, by) + 2 * sizeof(double),
               "a row's times by kind are its by[]");

/* A conflict kind's column in by[]: out, in, or mixed for both mixed roles. Looked up rather than
 * branched on: the kinds of successive runs follow no pattern. */
static const uint8_t kind_col[5] = {0, 0, 1, 2, 2};

static inline void add_kind(fc__sum_row *r, uint32_t kind, double t)
{
    r->by[kind_col[kind]] += t;
    r->total += t;
}

static uint64_t site_hash(uint32_t rank, uint64_t site, int send)
{
    uint64_t h = ((uint64_t)rank << 1 | (uint64_t)(send != 0)) * 0x9E3779B97F4A7C15ull;
    return (h ^ (site + 0x632BE59BD9B4E019ull)) * 0xBF58476D1CE4E5B9ull;
}

/* Adds the row of (rank, site, side) at table entry h, empty, growing the table first when it is
 * half full. Returns the row's index, or SIZE_MAX when out of memory. */
static size_t site_new(fc__summary *s, size_t h, uint32_t rank, uint64_t site, int send)
{
    if (2 * (s->nsites + 1) > s->site_cap) {
        size_t ncap = s->site_cap ? 2 * s->site_cap : 256;
        size_t *t = calloc(ncap, sizeof *t);
        if (t == NULL)
            return SIZE_MAX;
        for (size_t i = 0; i < s->nsites; i++) {
            const fc__sum_row *r = &s->sites[i];
            size_t j = site_hash(r->rank, r->site, r->send) & (ncap - 1);
            while (t[j])
                j = (j + 1) & (ncap - 1);
            t[j] = i + 1;
        }
        free(s->site_ix);
        s->site_ix = t;
        s->site_cap = ncap;
        h = site_hash(rank, site, send) & (ncap - 1);
        while (s->site_ix[h])
            h = (h + 1) & (ncap - 1);
    }
    if (fc__reserve(&s->sites, &s->csites, s->nsites + 1, sizeof *s->sites))
        return SIZE_MAX;
    s->sites[s->nsites] = (fc__sum_row){.rank = rank, .site = site, .send = send};
    s->site_ix[h] = ++s->nsites;
    return s->nsites - 1;
}

/* The row a rank's side used last. A rank sends and receives from a few call sites, in loops, so
 * a flow's site is nearly always its rank's last one on that side: one comparison instead of a hash
 * and a probe of the table. */
struct fc__sum_last {
    uint64_t site;
    size_t row; /* index + 1, 0 = none yet */
};

/* Ranks beyond this are looked up in the table only (world ranks are dense: a trace of more ranks
 * than this would be exotic, and still correct). */
#define LAST_RANKS ((size_t)1 << 24)

/* The index of the row of (rank, site, side) in the table, added when new; SIZE_MAX when out of
 * memory. Remembered as the side's last row. Out of line: the last row is nearly always it. */
__attribute__((noinline)) static size_t site_find(fc__summary *s, uint64_t c, uint32_t rank,
                                                  uint64_t site, int send)
{
    size_t h = 0, i = SIZE_MAX;
    if (s->site_cap > 0)
        for (h = site_hash(rank, site, send) & (s->site_cap - 1); s->site_ix[h]; h = (h + 1) & (s->site_cap - 1)) {
            const fc__sum_row *r = &s->sites[s->site_ix[h] - 1];
            if (r->rank == rank && r->site == site && r->send == send) {
                i = s->site_ix[h] - 1;
                break;
            }
        }
    if (i == SIZE_MAX && (i = site_new(s, h, rank, site, send)) == SIZE_MAX)
        return SIZE_MAX;
    if (c >= s->nlast && rank < LAST_RANKS && fc__reserve(&s->last, &s->nlast, c + 1, sizeof *s->last))
        return i; /* out of memory: only slower */
    if (c < s->nlast)
        s->last[c] = (struct fc__sum_last){site, i + 1};
    return i;
}

/* The index of the row of (rank, site, side), added when new; SIZE_MAX when out of memory. An
 * index, not a pointer: adding a row can move the others. */
static inline size_t site_row(fc__summary *s, uint32_t rank, uint64_t site, int send)
{
    uint64_t c = (uint64_t)rank * 2 + (send != 0); /* no wrap where size_t is narrower */
    if (c < s->nlast && s->last[c].site == site && s->last[c].row)
        return s->last[c].row - 1;
    return site_find(s, c, rank, site, send);
}

static int keep_flow(fc__summary *s, const fc__flow *f, const fc__label_run *runs, size_t nruns);

/* A label of a new largest k: room for its row of times (kslots is above max_k: only a new
 * largest k can need more). Returns 0 or FC_ENOMEM. Out of line, as the one below. */
__attribute__((noinline)) static int new_max_k(fc__summary *s, uint32_t k)
{
    if (k >= s->kslots) {
        if (fc__reserve(&s->time, &s->ctime, 5 * ((size_t)k + 1), sizeof *s->time))
            return FC_ENOMEM;
        s->kslots = s->ctime / 5;
    }
    s->max_k = k;
    return 0;
}

/* A conflict at a node beyond the rows: rows up to it. Returns 0 or FC_ENOMEM. */
__attribute__((noinline)) static int new_node(fc__summary *s, uint32_t node)
{
    if (fc__reserve(&s->nodes, &s->cnodes, (size_t)node + 1, sizeof *s->nodes))
        return FC_ENOMEM;
    for (size_t x = s->nnodes; x <= node; x++)
        s->nodes[x].node = (uint32_t)x;
    s->nnodes = (size_t)node + 1;
    return 0;
}

/* Adds the time of run to its label's. Returns 0 or FC_ENOMEM. */
static inline int add_time(fc__summary *s, const fc__label_run *run, double d)
{
    if (run->label.k > s->max_k && new_max_k(s, run->label.k))
        return FC_ENOMEM;
    s->time[(size_t)run->label.k * 5 + run->label.kind] += d;
    return 0;
}

/* The end of on_flow: most flows do not rank, which one comparison (flow_before's) with the least
 * bad kept, whose rate is at hand, tells, and nothing is copied. */
static inline int flow_end(fc__summary *s, const fc__flow *f, const fc__label_run *runs, size_t nruns)
{
    if (s->wfull) {
        double ra = per_byte(f);
        if (ra != s->wrate ? !(ra > s->wrate) : !(f->id < s->wflows[0].flow.id))
            return 0;
    }
    return keep_flow(s, f, runs, nruns);
}

/* The rest of on_flow from run r on, the general way, where a label needs room not yet made or a
 * call site is not its rank's last: counted tells whether the flow's call-site rows have been
 * counted. Each run's time goes to its label, its node and (for a flow with conflict time) its
 * call sites, in the order of the runs. */
__attribute__((noinline)) static int flow_rest(fc__summary *s, const fc__flow *f,
                                               const fc__label_run *runs, size_t nruns, size_t r,
                                               int counted)
{
    const fc__label_run *run = runs + r, *end = runs + nruns;
    /* Runs last longer than nothing, so a flow has conflict time exactly when it has a run in
     * conflict: its call-site rows are counted from that run on. */
    for (; run < end && run->label.kind == FC_CONFLICT_NONE && !counted; run++)
        if (add_time(s, run, run->end - run->start))
            return FC_ENOMEM;
    if (run < end) {
        size_t is = site_row(s, f->src_rank, f->send_site, 1), ir;
        if (is == SIZE_MAX || (ir = site_row(s, f->dst_rank, f->recv_site, 0)) == SIZE_MAX)
            return FC_ENOMEM;
        /* No row is added from here on, so the rows stay where they are. */
        fc__sum_row *rs = &s->sites[is], *rr = &s->sites[ir];
        if (!counted) {
            rs->flows++;
            rr->flows++;
        }
        for (; run < end; run++) {
            uint32_t kind = run->label.kind, node = run->label.node;
            double d = run->end - run->start;
            if (add_time(s, run, d))
                return FC_ENOMEM;
            if (kind == FC_CONFLICT_NONE)
                continue;
            if (node >= s->nnodes && new_node(s, node))
                return FC_ENOMEM;
            add_kind(&s->nodes[node], kind, d);
            add_kind(rs, kind, d);
            add_kind(rr, kind, d);
        }
    }
    return flow_end(s, f, runs, nruns);
}

/* Flow f has passed its end: as flow_rest, which it hands the flow to at the first run or call
 * site that needs more than an addition. Nearly every flow needs none, and then this calls
 * nothing (but keep_flow, last), so that it saves no registers. Only a flow that ranks among the
 * worst is copied, with its main label. */
static int on_flow(void *arg, const fc__flow *f, const fc__label_run *runs, size_t nruns)
{
    fc__summary *s = arg;
    const fc__label_run *run = runs, *end = runs + nruns;
    s->nflows++;
    if (s->count != NULL && !s->count[f->id])
        return 0;
    for (; run < end && run->label.kind == FC_CONFLICT_NONE; run++) {
        if (run->label.k > s->max_k)
            return flow_rest(s, f, runs, nruns, (size_t)(run - runs), 0);
        s->time[(size_t)run->label.k * 5 + FC_CONFLICT_NONE] += run->end - run->start;
    }
    if (run < end) {
        uint64_t cs = (uint64_t)f->src_rank * 2 + 1, cr = (uint64_t)f->dst_rank * 2;
        /* Both sides' last rows, their sites compared at once: they nearly always match. */
        if (!(cs < s->nlast && cr < s->nlast &&
              ((s->last[cs].site ^ f->send_site) | (s->last[cr].site ^ f->recv_site)) == 0 &&
              s->last[cs].row && s->last[cr].row))
            return flow_rest(s, f, runs, nruns, (size_t)(run - runs), 0);
        fc__sum_row *rs = &s->sites[s->last[cs].row - 1], *rr = &s->sites[s->last[cr].row - 1];
        rs->flows++;
        rr->flows++;
        for (; run < end; run++) {
            uint32_t k = run->label.k, kind = run->label.kind, node = run->label.node;
            if (k > s->max_k || (kind != FC_CONFLICT_NONE && node >= s->nnodes))
                return flow_rest(s, f, runs, nruns, (size_t)(run - runs), 1);
            double d = run->end - run->start;
            s->time[(size_t)k * 5 + kind] += d;
            if (kind == FC_CONFLICT_NONE)
                continue;
            add_kind(&s->nodes[node], kind, d);
            add_kind(rs, kind, d);
            add_kind(rr, kind, d);
        }
    }
    return flow_end(s, f, runs, nruns);
}

/* Adds flow f, with its label history runs[0..nruns), which ranks among the worst. Out of line,
 * as keep_interval. */
__attribute__((noinline)) static int keep_flow(fc__summary *s, const fc__flow *f, const fc__label_run *runs,
                                               size_t nruns)
{
    int full = s->top && s->nwflows == s->top;
    fc__sum_flow cand = {.flow = *f};
    fc__runs_main(runs, nruns, &cand.main, &cand.conflict_s);
    if (nruns > 0) {
        cand.runs = malloc(nruns * sizeof *cand.runs);
        if (cand.runs == NULL)
            return FC_ENOMEM;
        memcpy(cand.runs, runs, nruns * sizeof *runs);
        cand.nruns = nruns;
    }
    if (full) {
        free(s->wflows[0].runs);
        s->wflows[0] = cand;
        flh_down(NULL, s->wflows, s->nwflows, 0);
    } else {
        if (fc__reserve(&s->wflows, &s->cwflows, s->nwflows + 1, sizeof *s->wflows)) {
            free(cand.runs);
            return FC_ENOMEM;
        }
        s->wflows[s->nwflows++] = cand;
        flh_up(NULL, s->wflows, s->nwflows - 1);
    }
    if (s->top && s->nwflows == s->top) {
        s->wfull = 1;
        s->wrate = per_byte(&s->wflows[0].flow);
    }
    return 0;
}

/* ---- the summary ---------------------------------------------------------------------------- */

int fc__summary_new(size_t top, fc__summary **out)
{
    fc__summary *s = calloc(1, sizeof *s);
    *out = NULL;
    if (s == NULL)
        return fc__err(FC_ENOMEM, "out of memory summarising the intervals");
    s->top = top;
    s->kslots = 8;
    s->ctime = 5 * s->kslots;
    if ((s->time = calloc(s->ctime, sizeof *s->time)) == NULL) {
        free(s);
        return fc__err(FC_ENOMEM, "out of memory summarising the intervals");
    }
    *out = s;
    return 0;
}

void fc__summary_free(fc__summary *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->nworst; i++)
        iv_release(&s->worst[i]);
    for (size_t i = 0; i < s->nwflows; i++)
        free(s->wflows[i].runs);
    free(s->worst);
    free(s->snapbuf);
    free(s->wflows);
    free(s->nodes);
    free(s->sites);
    free(s->site_ix);
    free(s->last);
    free(s->time);
    free(s);
}

fc__sweep_ops fc__summary_ops(fc__summary *s)
{
    return (fc__sweep_ops){.arg = s,
                           .interval = on_interval,
                           .flow_done = on_flow,
                           .min_kn = &s->min_kn,
                           .skipped = &s->nintervals};
}

int fc__summary_finish(fc__summary *s)
{
    for (size_t i = 0; i < s->nworst; i++) {
        fc__sum_interval *v = &s->worst[i];
        if (v->snap == NULL)
            continue;
        if (fc__snap_conflicts(v->snap, v->nflows, &v->conf, &v->nconf, &v->ids))
            return fc__err(FC_ENOMEM, "out of memory summarising the worst intervals");
        free(v->snap);
        v->snap = NULL;
        v->csnap = 0;
    }
    fc__sort(s->worst, s->nworst, sizeof *s->worst, cmp_iv);
    fc__sort(s->wflows, s->nwflows, sizeof *s->wflows, cmp_fl);
    /* Only nodes with conflict time are rows. */
    size_t o = 0;
    for (size_t i = 0; i < s->nnodes; i++)
        if (s->nodes[i].total > 0)
            s->nodes[o++] = s->nodes[i];
    s->nnodes = o;
    fc__sort(s->nodes, s->nnodes, sizeof *s->nodes, cmp_row);
    fc__sort(s->sites, s->nsites, sizeof *s->sites, cmp_row);
    free(s->site_ix); /* the rows moved: neither the table nor the last rows index them */
    s->site_ix = NULL;
    s->site_cap = 0;
    free(s->last);
    s->last = NULL;
    s->nlast = 0;
    return 0;
}

int fc__summary_build(const fc__flow *flows, size_t n, size_t top, fc__summary **out)
{
    fc__summary *s = NULL;
    int rc = fc__summary_new(top, &s);
    *out = NULL;
    if (rc < 0)
        return rc;
    fc__sweep_ops ops = fc__summary_ops(s);
    if ((rc = fc__sweep_flows(flows, n, &ops)) < 0) {
        if (rc == FC_ENOMEM)
            fc__err(rc, "out of memory summarising %zu flows", n);
        fc__summary_free(s);
        return rc;
    }
    if ((rc = fc__summary_finish(s)) < 0) {
        fc__summary_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

double fc__summary_time(const fc__summary *s, uint32_t kind, uint32_t k)
{
    if (kind > FC_CONFLICT_MIXED_OUT || k >= s->kslots)
        return 0;
    return s->time[(size_t)k * 5 + kind];
}
