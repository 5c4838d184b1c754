/* analyzer/sweep.c: the incremental sweep of sweep.h. Boundaries wait in a binary heap; each group
 * of boundaries at one time is applied at once, and only the connected components of the node
 * graph (flows linked through shared nodes) that hold a flow that started or ended are relabelled
 * (the rules are in intervals.h). Flows live in slots that are reused once they end, so every
 * array here is as long as the largest active set, not the trace. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "internal.h"
#include "sweep.h"

#define NIL SIZE_MAX

/* One boundary: a flow (slot) starting or ending at t. */
typedef struct bnd {
    double t;
    size_t slot;
    int start;
} bnd;

/* A growable list of slots (the active flows leaving or entering a node). */
typedef struct slist {
    size_t *v;
    size_t n, cap;
} slist;

/* The label history of one active flow. */
typedef struct rvec {
    fc__label_run *v;
    size_t n, cap;
} rvec;

struct fc__sweep {
    fc__sweep_ops ops;
    double until; /* boundaries before it are applied; flows may not start earlier */
    /* Slots, one per flow between its fc__sweep_add and its end. */
    size_t nslots, cslots;
    fc_flow *flow;
    uint32_t *src, *dst; /* dense node indices */
    size_t *pos_out, *pos_in, *apos, *seen, *inset;
    uint8_t *rem, *labelled, *was_rem;
    fc_label *lab;
    rvec *runs;
    size_t *freed;
    size_t nfreed, cfreed;
    /* Nodes: node numbers map to dense indices through an open-addressing table. */
    uint64_t *nkey; /* node number + 1; 0 is an empty entry */
    uint32_t *nval;
    size_t mapcap;
    size_t nnodes, cnodes;
    uint32_t *node_num;
    slist *out, *in;
    size_t *nmark, *omark, *imark;
    /* The active set, unordered; apos[slot] is a slot's place in it. */
    size_t *act;
    size_t nact, cact;
    /* Pending boundaries: starts given in order of start wait in a queue (the usual case: the feed
     * and fc__sweep_flows give them so), other starts and every end in a min-heap on time, which
     * then holds little more than the active flows. */
    bnd *heap;
    size_t nheap, cheap;
    size_t *fifo; /* slots, starts not decreasing, fifo[fh .. fn) */
    size_t fh, fn, fcap;
    /* Scratch. */
    size_t *queue, *comp;
    size_t cqueue, ccomp;
    uint64_t *cids;
    size_t ccids;
    size_t stamp, cstamp;
    /* Intervals: the number delivered, and the open one (active set not empty since open_t). */
    size_t niv;
    int open;
    double open_t;
    /* Active flows by label k, for fc__sweep_max_k. */
    size_t *cnt_k;
    size_t ccnt_k;
    uint32_t hi_k;
};


int fc__sweep_new(const fc__sweep_ops *ops, fc__sweep **out)
{
    fc__sweep *s = calloc(1, sizeof *s);
    *out = NULL;
    if (s == NULL)
        return fc__err(FC_ENOMEM, "flows: out of memory starting the interval sweep");
    if (ops != NULL)
        s->ops = *ops;
    s->until = -INFINITY;
    *out = s;
    return 0;
}

void fc__sweep_free(fc__sweep *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->cslots; i++)
        free(s->runs[i].v);
    for (size_t x = 0; x < s->cnodes; x++) {
        free(s->out[x].v);
        free(s->in[x].v);
    }
    void *all[] = {s->flow,  s->src,   s->dst,      s->pos_out, s->pos_in, s->apos,  s->seen, s->inset,
                   s->rem,   s->labelled, s->was_rem, s->lab,   s->runs,    s->freed,  s->nkey,  s->nval,
                   s->node_num, s->out, s->in,      s->nmark,   s->omark,  s->imark, s->act,
                   s->heap,  s->fifo,  s->queue, s->comp,     s->cids,    s->cnt_k};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    free(s);
}

/* ---- nodes and slots ------------------------------------------------------------------------ */

static size_t hash32(uint32_t x, size_t cap)
{
    return (size_t)(((uint64_t)x * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* The dense index of node number x, added when new. Returns 0 or FC_ENOMEM. */
static int node_index(fc__sweep *s, uint32_t x, uint32_t *ix)
{
    if (2 * (s->nnodes + 1) > s->mapcap) {
        size_t ncap = s->mapcap ? 2 * s->mapcap : 64;
        uint64_t *k = calloc(ncap, sizeof *k);
        uint32_t *v = malloc(ncap * sizeof *v);
        if (k == NULL || v == NULL) {
            free(k);
            free(v);
            return FC_ENOMEM;
        }
        for (size_t i = 0; i < s->mapcap; i++)
            if (s->nkey[i]) {
                size_t h = hash32((uint32_t)(s->nkey[i] - 1), ncap);
                while (k[h])
                    h = (h + 1) & (ncap - 1);
                k[h] = s->nkey[i];
                v[h] = s->nval[i];
            }
        free(s->nkey);
        free(s->nval);
        s->nkey = k;
        s->nval = v;
        s->mapcap = ncap;
    }
    size_t h = hash32(x, s->mapcap);
    while (s->nkey[h]) {
        if (s->nkey[h] == (uint64_t)x + 1) {
            *ix = s->nval[h];
            return 0;
        }
        h = (h + 1) & (s->mapcap - 1);
    }
    size_t n = s->nnodes, c = s->cnodes;
    if (fc__reserve(&s->node_num, &c, n + 1, sizeof *s->node_num) || (c = s->cnodes, 0) ||
        fc__reserve(&s->out, &c, n + 1, sizeof *s->out) || (c = s->cnodes, 0) ||
        fc__reserve(&s->in, &c, n + 1, sizeof *s->in) || (c = s->cnodes, 0) ||
        fc__reserve(&s->nmark, &c, n + 1, sizeof *s->nmark) || (c = s->cnodes, 0) ||
        fc__reserve(&s->omark, &c, n + 1, sizeof *s->omark) || (c = s->cnodes, 0) ||
        fc__reserve(&s->imark, &c, n + 1, sizeof *s->imark))
        return FC_ENOMEM;
    s->cnodes = c;
    s->node_num[n] = x;
    s->nkey[h] = (uint64_t)x + 1;
    s->nval[h] = (uint32_t)n;
    s->nnodes++;
    *ix = (uint32_t)n;
    return 0;
}

/* A free slot, the arrays grown to hold it. Returns 0 or FC_ENOMEM. */
static int slot_get(fc__sweep *s, size_t *slot)
{
    if (s->nfreed > 0) {
        *slot = s->freed[--s->nfreed];
        return 0;
    }
    size_t n = s->nslots;
    if (n + 1 > s->cslots) {
        size_t need = n + 1;
#define GROW(a)                                                                                    \
    do {                                                                                           \
        size_t c = s->cslots;                                                                      \
        if (fc__reserve(&s->a, &c, need, sizeof *s->a))                                                \
            return FC_ENOMEM;                                                                      \
    } while (0)
        GROW(flow); GROW(src); GROW(dst); GROW(pos_out); GROW(pos_in); GROW(apos); GROW(seen); GROW(inset);
        GROW(rem); GROW(labelled); GROW(was_rem); GROW(lab); GROW(runs);
#undef GROW
        size_t c = s->cslots;
        if (fc__reserve(&s->freed, &c, need, sizeof *s->freed))
            return FC_ENOMEM;
        c = s->cslots;
        if (fc__reserve(&s->comp, &c, need, sizeof *s->comp))
            return FC_ENOMEM;
        /* Every array above now holds the same capacity: the doubling rule is shared. */
        size_t ncap = s->cslots ? s->cslots : 16;
        while (ncap < need)
            ncap *= 2;
        s->cslots = s->cfreed = s->ccomp = ncap;
    }
    *slot = s->nslots++;
    return 0;
}

static void slot_put(fc__sweep *s, size_t f)
{
    s->runs[f].n = 0;
    s->freed[s->nfreed++] = f; /* freed[] is as long as the slots: never full */
}

static int slist_push(slist *l, size_t f, size_t *pos)
{
    if (fc__reserve(&l->v, &l->cap, l->n + 1, sizeof *l->v))
        return FC_ENOMEM;
    *pos = l->n;
    l->v[l->n++] = f;
    return 0;
}

static int attach(fc__sweep *s, size_t f)
{
    if (slist_push(&s->out[s->src[f]], f, &s->pos_out[f]) || slist_push(&s->in[s->dst[f]], f, &s->pos_in[f]) ||
        fc__reserve(&s->act, &s->cact, s->nact + 1, sizeof *s->act))
        return FC_ENOMEM;
    s->apos[f] = s->nact;
    s->act[s->nact++] = f;
    return 0;
}

/* Removes f from its nodes' lists and the active set by moving the last entry into its place. */
static void detach(fc__sweep *s, size_t f)
{
    slist *o = &s->out[s->src[f]], *i = &s->in[s->dst[f]];
    size_t last = o->v[--o->n];
    o->v[s->pos_out[f]] = last;
    s->pos_out[last] = s->pos_out[f];
    last = i->v[--i->n];
    i->v[s->pos_in[f]] = last;
    s->pos_in[last] = s->pos_in[f];
    last = s->act[--s->nact];
    s->act[s->apos[f]] = last;
    s->apos[last] = s->apos[f];
    if (s->labelled[f]) {
        s->cnt_k[s->lab[f].k]--;
        s->labelled[f] = 0;
    }
}

/* ---- the boundary heap ---------------------------------------------------------------------- */

/* A later boundary belongs below. */
static int bnd_below(const void *ctx, const bnd *a, const bnd *b)
{
    (void)ctx;
    return a->t > b->t;
}

FC__HEAP(bheap, bnd, bnd_below)

static int heap_push(fc__sweep *s, bnd b)
{
    if (fc__reserve(&s->heap, &s->cheap, s->nheap + 1, sizeof *s->heap))
        return FC_ENOMEM;
    s->heap[s->nheap++] = b;
    bheap_up(NULL, s->heap, s->nheap - 1);
    return 0;
}

static bnd heap_pop(fc__sweep *s)
{
    bnd top = s->heap[0];
    s->heap[0] = s->heap[--s->nheap];
    if (s->nheap > 0)
        bheap_down(NULL, s->heap, s->nheap, 0);
    return top;
}

/* ---- labelling ------------------------------------------------------------------------------ */

/* The flow that continues g's path of unconsumed flows at g's destination, or NIL. */
static size_t next_rem(const fc__sweep *s, size_t g)
{
    const slist *o = &s->out[s->dst[g]];
    if (o->n != 1)
        return NIL;
    return s->rem[o->v[0]] ? o->v[0] : NIL;
}

static size_t prev_rem(const fc__sweep *s, size_t g)
{
    const slist *i = &s->in[s->src[g]];
    if (i->n != 1)
        return NIL;
    return s->rem[i->v[0]] ? i->v[0] : NIL;
}

static void pair(fc__sweep *s, size_t g, size_t h)
{
    uint32_t x = s->node_num[s->dst[g]];
    s->lab[g] = (fc_label){FC_CONFLICT_MIXED_IN, x, 2};
    s->lab[h] = (fc_label){FC_CONFLICT_MIXED_OUT, x, 2};
    s->seen[g] = s->seen[h] = s->stamp;
}

/* Relabelling is local. A flow's same-direction label and whether it is left for the mixed rule
 * (rem) depend only on the flows leaving its source and entering its destination, so they change
 * only for flows touching a node whose set changed (the seeds: the ends of the flows that started
 * or ended). Mixed pairs lie along paths and cycles of rem flows linked at nodes with one flow in
 * and one out, so a pairing changes only on a path that gained or lost a flow or a link: a path
 * through a seed, or one that met a flow whose rem changed at that flow's far end. So the flows
 * relabelled are those touching the seeds, those touching the far ends of flows whose rem changed,
 * and the whole paths and cycles of every rem flow among them; the rest keep their labels. */

/* Adds active flow f to the set comp[0..*ncomp) (once) and gives it its same-direction label. */
static void take(fc__sweep *s, size_t f, size_t *ncomp)
{
    if (s->inset[f] == s->stamp)
        return;
    s->inset[f] = s->stamp;
    s->comp[(*ncomp)++] = f;
    if (s->labelled[f])
        s->cnt_k[s->lab[f].k]--;
    size_t od = s->out[s->src[f]].n, id = s->in[s->dst[f]].n;
    s->rem[f] = 0;
    if (od >= 2 && od >= id)
        s->lab[f] = (fc_label){FC_CONFLICT_OUTGOING, s->node_num[s->src[f]], (uint32_t)od};
    else if (id >= 2)
        s->lab[f] = (fc_label){FC_CONFLICT_INCOMING, s->node_num[s->dst[f]], (uint32_t)id};
    else {
        s->lab[f] = (fc_label){FC_CONFLICT_NONE, 0, 1};
        s->rem[f] = 1;
    }
}

/* Collects in comp the flows to relabel for the seed nodes queue[0..nseed) (see above), with their
 * same-direction labels; was_rem[i] is the rem flag comp[i] had before (2 for a flow that had no
 * label yet). */
static size_t collect(fc__sweep *s, size_t nseed)
{
    uint8_t *was_rem = s->was_rem;
    size_t ncomp = 0;
    for (size_t i = 0; i < nseed; i++) {
        size_t x = s->queue[i];
        if (s->nmark[x] == s->stamp)
            continue;
        s->nmark[x] = s->stamp;
        const slist *o = &s->out[x], *in = &s->in[x];
        for (size_t j = 0; j < o->n + in->n; j++) {
            size_t f = j < o->n ? o->v[j] : in->v[j - o->n];
            if (s->inset[f] != s->stamp)
                was_rem[ncomp] = s->labelled[f] ? s->rem[f] : 2;
            take(s, f, &ncomp);
        }
    }
    /* The flows at the far ends of those whose rem changed (the list grows as it is read; the
     * flows added here keep their rem, since their own ends are not seeds). */
    for (size_t i = 0; i < ncomp; i++) {
        size_t f = s->comp[i];
        if (was_rem[i] == s->rem[f])
            continue;
        size_t ends[2] = {s->src[f], s->dst[f]};
        for (int e = 0; e < 2; e++) {
            if (s->nmark[ends[e]] == s->stamp)
                continue;
            s->nmark[ends[e]] = s->stamp;
            const slist *o = &s->out[ends[e]], *in = &s->in[ends[e]];
            for (size_t j = 0; j < o->n + in->n; j++) {
                size_t g = j < o->n ? o->v[j] : in->v[j - o->n];
                if (s->inset[g] != s->stamp)
                    was_rem[ncomp] = s->rem[g];
                take(s, g, &ncomp);
            }
        }
    }
    /* Whole paths and cycles of the rem flows gathered, both ways. */
    size_t n0 = ncomp;
    for (size_t i = 0; i < n0; i++) {
        size_t f = s->comp[i];
        if (!s->rem[f])
            continue;
        for (size_t g = next_rem(s, f); g != NIL && s->inset[g] != s->stamp; g = next_rem(s, g))
            take(s, g, &ncomp);
        for (size_t g = prev_rem(s, f); g != NIL && s->inset[g] != s->stamp; g = prev_rem(s, g))
            take(s, g, &ncomp);
    }
    return ncomp;
}

/* Pairs the rem flows of comp[0..ncomp), a union of whole paths and cycles, by the rules of
 * intervals.h, and counts the labels. */
static void label(fc__sweep *s, size_t ncomp)
{
    /* Paths, from their origins. */
    for (size_t i = 0; i < ncomp; i++) {
        size_t g = s->comp[i];
        if (!s->rem[g] || prev_rem(s, g) != NIL)
            continue;
        while (g != NIL) {
            s->seen[g] = s->stamp;
            size_t h = next_rem(s, g);
            if (h == NIL)
                break;
            pair(s, g, h);
            g = next_rem(s, h);
        }
    }
    /* What is left unseen lies on cycles: pair each from its smallest flow id. */
    for (size_t i = 0; i < ncomp; i++) {
        size_t f = s->comp[i];
        if (!s->rem[f] || s->seen[f] == s->stamp)
            continue;
        size_t mn = f;
        for (size_t g = next_rem(s, f); g != f; g = next_rem(s, g))
            if (s->flow[g].id < s->flow[mn].id)
                mn = g;
        size_t g = mn;
        do {
            s->seen[g] = s->stamp;
            size_t h = next_rem(s, g);
            if (h == mn)
                break;
            pair(s, g, h);
            g = next_rem(s, h);
        } while (g != mn);
    }
    for (size_t i = 0; i < ncomp; i++) {
        size_t f = s->comp[i];
        s->cnt_k[s->lab[f].k]++;
        s->labelled[f] = 1;
    }
}

/* Opens a new label run for each relabelled flow whose label changed, at interval s->niv. */
static int update_runs(fc__sweep *s, size_t ncomp, double t)
{
    for (size_t i = 0; i < ncomp; i++) {
        size_t f = s->comp[i];
        rvec *rv = &s->runs[f];
        if (rv->n > 0) {
            fc__label_run *r = &rv->v[rv->n - 1];
            if (memcmp(&r->label, &s->lab[f], sizeof r->label) == 0)
                continue;
            r->count = s->niv - r->first;
            r->end = t;
        }
        if (fc__reserve(&rv->v, &rv->cap, rv->n + 1, sizeof *rv->v))
            return FC_ENOMEM;
        rv->v[rv->n++] = (fc__label_run){.first = s->niv, .start = t, .label = s->lab[f]};
    }
    return 0;
}

/* ---- the sweep ------------------------------------------------------------------------------ */

static int live(const fc_flow *f)
{
    return !f->intra && f->src_node != f->dst_node && f->end > f->start;
}

int fc__sweep_add(fc__sweep *s, const fc_flow *f)
{
    if (!f->intra && (!isfinite(f->start) || !isfinite(f->end)))
        return fc__err(FC_EINVAL, "flows: flow %llu: bad times [%g, %g)", (unsigned long long)f->id, f->start,
                       f->end);
    if (!live(f))
        return s->ops.flow_done ? s->ops.flow_done(s->ops.arg, f, NULL, 0) : 0;
    if (f->start < s->until)
        return fc__err(FC_EINVAL, "flows: flow %llu starts at %.9f, before the time already swept (%.9f)",
                       (unsigned long long)f->id, f->start, s->until);
    size_t slot;
    uint32_t x, y;
    if (slot_get(s, &slot) || node_index(s, f->src_node, &x) || node_index(s, f->dst_node, &y))
        return fc__err(FC_ENOMEM, "flows: out of memory in the interval sweep");
    s->flow[slot] = *f;
    s->src[slot] = x;
    s->dst[slot] = y;
    s->labelled[slot] = 0;
    s->runs[slot].n = 0;
    if (s->fh == s->fn || f->start >= s->flow[s->fifo[s->fn - 1]].start) {
        if (s->fh > 0 && s->fh >= s->fn / 2) { /* reuse the consumed front */
            memmove(s->fifo, s->fifo + s->fh, (s->fn - s->fh) * sizeof *s->fifo);
            s->fn -= s->fh;
            s->fh = 0;
        }
        if (fc__reserve(&s->fifo, &s->fcap, s->fn + 1, sizeof *s->fifo))
            return fc__err(FC_ENOMEM, "flows: out of memory in the interval sweep");
        s->fifo[s->fn++] = slot;
        return 0;
    }
    if (heap_push(s, (bnd){f->start, slot, 1}))
        return fc__err(FC_ENOMEM, "flows: out of memory in the interval sweep");
    return 0;
}

/* The time of the next boundary, or INFINITY when none is pending. */
static double next_time(const fc__sweep *s)
{
    double t = s->nheap > 0 ? s->heap[0].t : INFINITY;
    if (s->fh < s->fn && s->flow[s->fifo[s->fh]].start < t)
        t = s->flow[s->fifo[s->fh]].start;
    return t;
}

/* Delivers the open interval [open_t, t). */
static int deliver(fc__sweep *s, double t)
{
    int rc = 0;
    if (!s->open)
        return 0;
    /* The conflict lists of fc__sweep_conflicts are at most the active set long. */
    if (fc__reserve(&s->cids, &s->ccids, s->nact + 2, sizeof *s->cids))
        return FC_ENOMEM;
    if (s->ops.interval)
        rc = s->ops.interval(s->ops.arg, s, s->niv, s->open_t, t);
    s->niv++;
    s->open = 0;
    return rc;
}

/* Applies the group of boundaries at the heap's top time. */
static int step(fc__sweep *s)
{
    double t = next_time(s);
    int rc = deliver(s, t);
    if (rc)
        return rc;
    s->stamp++;
    size_t nseed = 0;
    for (;;) {
        bnd b;
        if (s->fh < s->fn && s->flow[s->fifo[s->fh]].start == t)
            b = (bnd){t, s->fifo[s->fh++], 1};
        else if (s->nheap > 0 && s->heap[0].t == t)
            b = heap_pop(s);
        else
            break;
        size_t f = b.slot;
        if (fc__reserve(&s->queue, &s->cqueue, nseed + 2 + s->nnodes, sizeof *s->queue))
            return FC_ENOMEM;
        s->queue[nseed++] = s->src[f];
        s->queue[nseed++] = s->dst[f];
        if (b.start) {
            if (attach(s, f) || heap_push(s, (bnd){s->flow[f].end, f, 0}))
                return FC_ENOMEM;
            continue;
        }
        detach(s, f);
        rvec *rv = &s->runs[f];
        fc__label_run *r = &rv->v[rv->n - 1]; /* a flow active over an interval has a run */
        r->count = s->niv - r->first;
        r->end = t;
        rc = s->ops.flow_done ? s->ops.flow_done(s->ops.arg, &s->flow[f], rv->v, rv->n) : 0;
        slot_put(s, f);
        if (rc)
            return rc;
    }
    if (fc__reserve(&s->queue, &s->cqueue, nseed + s->nnodes, sizeof *s->queue))
        return FC_ENOMEM;
    size_t ncomp = collect(s, nseed);
    size_t maxk = 0;
    for (size_t i = 0; i < ncomp; i++) {
        size_t f = s->comp[i], od = s->out[s->src[f]].n, id = s->in[s->dst[f]].n;
        maxk = od > maxk ? od : maxk;
        maxk = id > maxk ? id : maxk;
    }
    if (fc__reserve(&s->cnt_k, &s->ccnt_k, maxk + 3, sizeof *s->cnt_k))
        return FC_ENOMEM;
    if (maxk + 2 > s->hi_k)
        s->hi_k = (uint32_t)(maxk + 2);
    label(s, ncomp);
    if (s->nact == 0)
        return 0; /* an idle gap: nothing is active, so no interval opens */
    if ((rc = update_runs(s, ncomp, t)))
        return rc;
    s->open = 1;
    s->open_t = t;
    return 0;
}

int fc__sweep_advance(fc__sweep *s, double until)
{
    int rc = 0;
    while (rc == 0 && next_time(s) < until)
        rc = step(s);
    if (rc == FC_ENOMEM)
        fc__err(rc, "flows: out of memory in the interval sweep");
    if (until > s->until)
        s->until = until;
    return rc;
}

int fc__sweep_finish(fc__sweep *s)
{
    return fc__sweep_advance(s, INFINITY);
}

/* ---- the active set ------------------------------------------------------------------------- */

size_t fc__sweep_nactive(const fc__sweep *s)
{
    return s->nact;
}

const fc_flow *fc__sweep_flow(const fc__sweep *s, size_t i)
{
    return &s->flow[s->act[i]];
}

const fc_label *fc__sweep_label(const fc__sweep *s, size_t i)
{
    return &s->lab[s->act[i]];
}

uint32_t fc__sweep_max_k(const fc__sweep *s)
{
    for (uint32_t k = s->hi_k; k > 0; k--)
        if (k < s->ccnt_k && s->cnt_k[k] > 0)
            return k;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Hands fn the same-direction conflict of the k flows in list l, ids ascending. */
static int same_dir(const fc__sweep *s, uint32_t kind, size_t x, const slist *l,
                    int (*fn)(void *, const fc__conflict *), void *arg)
{
    for (size_t i = 0; i < l->n; i++)
        s->cids[i] = s->flow[l->v[i]].id;
    fc__sort(s->cids, l->n, sizeof *s->cids, cmp_u64);
    fc__conflict c = {kind, s->node_num[x], (uint32_t)l->n, s->cids};
    return fn(arg, &c);
}

int fc__sweep_conflicts(const fc__sweep *s, int (*fn)(void *arg, const fc__conflict *c), void *arg)
{
    /* The marks say which nodes' conflicts were handed out already; a fresh stamp per call, kept
     * apart from the labelling's. The sweep is const to the caller, its scratch is not. */
    fc__sweep *w = (fc__sweep *)s;
    size_t st = ++w->cstamp;
    int rc = 0;
    for (size_t j = 0; j < s->nact && rc == 0; j++) {
        size_t f = s->act[j];
        uint32_t x = s->src[f], y = s->dst[f];
        if (s->out[x].n >= 2 && s->omark[x] != st) {
            w->omark[x] = st;
            rc = same_dir(s, FC_CONFLICT_OUTGOING, x, &s->out[x], fn, arg);
        }
        if (rc == 0 && s->in[y].n >= 2 && s->imark[y] != st) {
            w->imark[y] = st;
            rc = same_dir(s, FC_CONFLICT_INCOMING, y, &s->in[y], fn, arg);
        }
        if (rc == 0 && s->lab[f].kind == FC_CONFLICT_MIXED_IN) {
            w->cids[0] = s->flow[f].id;
            w->cids[1] = s->flow[s->out[y].v[0]].id;
            fc__conflict c = {FC_CONFLICT_MIXED_IN, s->node_num[y], 2, s->cids};
            rc = fn(arg, &c);
        }
    }
    return rc;
}

/* Order of a whole sweep's feed: by start, then id. */
static int cmp_start(const void *a, const void *b, void *arg)
{
    const fc_flow *fl = arg, *x = &fl[*(const size_t *)a], *y = &fl[*(const size_t *)b];
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

int fc__sweep_flows(const fc_flow *flows, size_t n, const fc__sweep_ops *ops)
{
    fc__sweep *s = NULL;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    int rc = order ? fc__sweep_new(ops, &s) : FC_ENOMEM;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        if (n > 1)
            qsort_r(order, n, sizeof *order, cmp_start, (void *)flows);
        for (size_t r = 0; r < n && rc == 0; r++) {
            const fc_flow *f = &flows[order[r]];
            /* Flows that are never active may hold any times: only the others move the sweep. */
            if (live(f) && isfinite(f->start))
                rc = fc__sweep_advance(s, f->start);
            if (rc == 0)
                rc = fc__sweep_add(s, f);
        }
        if (rc == 0)
            rc = fc__sweep_finish(s);
    }
    if (rc == FC_ENOMEM)
        fc__err(rc, "flows: out of memory splitting %zu flows into intervals", n);
    fc__sweep_free(s);
    free(order);
    return rc;
}
