/* analyzer/conflict/sweep.c: the incremental sweep of sweep.h. Boundaries wait in a binary heap; each group
 * of boundaries at one time is applied at once, and only the connected components of the node
 * graph (flows linked through shared nodes) that hold a flow that started or ended are relabelled
 * (the rules are in intervals.h). Flows live in slots that are reused once they end, so every
 * array here is as long as the largest active set, not the trace. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "conflict/sweep.h"

#define NIL UINT32_MAX
#include "conflict/sweep-state.h"


uint32_t fc__sweep_stamp_wrap;

static int no_flow_done(void *arg, const fc__flow *f, const fc__label_run *runs, size_t nruns)
{
    (void)arg, (void)f, (void)runs, (void)nruns;
    return 0;
}

int fc__sweep_new(const fc__sweep_ops *ops, fc__sweep **out)
{
    fc__sweep *s = calloc(1, sizeof *s);
    *out = NULL;
    if (s == NULL)
        return fc__err(FC_ENOMEM, "flows: out of memory starting the interval sweep");
    if (ops != NULL)
        s->ops = *ops;
    if (s->ops.flow_done == NULL) /* one that does nothing, so that a flow's end calls without a test */
        s->ops.flow_done = no_flow_done;
    if (s->ops.min_kn == NULL) { /* no interval is below k 0 and no flows */
        static const uint64_t zero;
        s->ops.min_kn = &zero;
    }
    s->until = -INFINITY;
    s->wrap = fc__sweep_stamp_wrap;
    if (fc__reserve(&s->heap, &s->cheap, 2, sizeof *s->heap) || fc__reserve(&s->fifo, &s->fcap, 1, sizeof *s->fifo)) {
        fc__sweep_free(s);
        return fc__err(FC_ENOMEM, "flows: out of memory starting the interval sweep");
    }
    s->heap[0].t = s->heap[1].t = s->fifo[0].t = INFINITY;
    *out = s;
    return 0;
}

void fc__sweep_free(fc__sweep *s)
{
    if (s == NULL)
        return;
    /* Every history is an active flow's or in the pool (a free slot keeps a stale copy). */
    for (size_t i = 0; i < s->nact; i++)
        free(s->sl[s->act[i]].runs.v);
    for (size_t i = 0; i < s->nrpool; i++)
        free(s->rpool[i].v);
    for (size_t x = 0; x < s->cnodes; x++) {
        free(s->nd[x].out.v);
        free(s->nd[x].in.v);
    }
    void *all[] = {s->flow, s->fp,   s->sl,    s->freed, s->rpool, s->nmap, s->dir,   s->nd,
                   s->act,  s->heap, s->fifo, s->queue, s->rems,  s->chg,  s->cids, s->cnt_k};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    free(s);
}

/* ---- nodes and slots ------------------------------------------------------------------------ */

static size_t hash32(uint32_t x, size_t cap)
{
    return (size_t)(((uint64_t)x * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* Doubles the capacity *cap of the array *p of elements of size sz (from 4). Returns 0 or
 * FC_ENOMEM. The lists and histories here count in 32 bits, which fc__reserve does not. */
static int grow32(void *p, uint32_t *cap, size_t sz)
{
    void **v = p;
    size_t ncap = *cap ? 2 * (size_t)*cap : 4;
    void *q = ncap <= UINT32_MAX ? realloc(*v, ncap * sz) : NULL;
    if (q == NULL)
        return FC_ENOMEM;
    *v = q;
    *cap = (uint32_t)ncap;
    return 0;
}

/* Node numbers below this are found directly (struct fc__sweep): at most 256 KiB. */
#define DIR_MAX 65536

/* Adds node number x, not in the table yet, as the next dense index, which it returns (NIL when
 * out of memory). Indices, like slots, are returned rather than stored through a pointer, which
 * would keep them out of registers. */
static uint32_t node_add(fc__sweep *s, uint32_t x)
{
    if (2 * (s->nnodes + 1) > s->mapcap) {
        size_t ncap = s->mapcap ? 2 * s->mapcap : 64;
        nent *m = calloc(ncap, sizeof *m);
        if (m == NULL)
            return NIL;
        for (size_t i = 0; i < s->mapcap; i++)
            if (s->nmap[i].ix1) {
                size_t h = hash32(s->nmap[i].num, ncap);
                while (m[h].ix1)
                    h = (h + 1) & (ncap - 1);
                m[h] = s->nmap[i];
            }
        free(s->nmap);
        s->nmap = m;
        s->mapcap = ncap;
    }
    size_t n = s->nnodes;
    if (n >= UINT32_MAX - 1 || fc__reserve_lines(&s->nd, &s->cnodes, n + 1, sizeof *s->nd))
        return NIL;
    size_t h = hash32(x, s->mapcap);
    while (s->nmap[h].ix1)
        h = (h + 1) & (s->mapcap - 1);
    if (x < DIR_MAX && fc__reserve(&s->dir, &s->ndir, (size_t)x + 1, sizeof *s->dir))
        return NIL;
    s->nmap[h] = (nent){x, (uint32_t)n + 1};
    if (x < DIR_MAX)
        s->dir[x] = (uint32_t)n + 1;
    s->nd[n].num = x;
    s->nnodes++;
    return (uint32_t)n;
}

/* The dense index of node number x, added when new (NIL when out of memory). Inline: every flow
 * looks up both its nodes, and they are nearly always known. */
static inline uint32_t node_index(fc__sweep *s, uint32_t x)
{
    if (x < s->ndir && s->dir[x])
        return s->dir[x] - 1;
    if (s->mapcap > 0)
        for (size_t h = hash32(x, s->mapcap); s->nmap[h].ix1; h = (h + 1) & (s->mapcap - 1))
            if (s->nmap[h].num == x)
                return s->nmap[h].ix1 - 1;
    return node_add(s, x);
}

/* A new slot, the arrays grown to hold it (NIL when out of memory). */
static uint32_t slot_new(fc__sweep *s)
{
    size_t n = s->nslots;
    if (n + 1 > s->cslots) {
        size_t need = n + 1, c;
        if (need >= NIL)
            return NIL;
        /* Every array here grows by the same doubling rule, so they keep one capacity. */
        if ((c = s->cslots, fc__reserve(&s->flow, &c, need, sizeof *s->flow)) ||
            (c = s->cslots, fc__reserve(&s->fp, &c, need, sizeof *s->fp)) ||
            (c = s->cslots, fc__reserve_lines(&s->sl, &c, need, sizeof *s->sl)) ||
            (c = s->cslots, fc__reserve(&s->freed, &c, need, sizeof *s->freed)) ||
            (c = s->cslots, fc__reserve(&s->rpool, &c, need, sizeof *s->rpool)) ||
            (c = s->cslots, fc__reserve(&s->rems, &c, need, sizeof *s->rems)) ||
            (c = s->cslots, fc__reserve(&s->chg, &c, need, sizeof *s->chg)))
            return NIL;
        /* So are these, sized here once rather than at each boundary: a slot has at most one
         * boundary in the heap and is active at most once, so the heap (and its sentinels), the
         * active set, the labels counted by k and a conflict's list (k is at most the flows active)
         * all fit, and so do a step's seeds, two per boundary: its ends are of flows active before
         * it, its starts of flows active after it, so it has at most two boundaries per slot. */
        if (fc__reserve(&s->heap, &s->cheap, c + 2, sizeof *s->heap) ||
            fc__reserve(&s->act, &s->cact, c, sizeof *s->act) ||
            fc__reserve(&s->queue, &s->cqueue, 4 * c, sizeof *s->queue) ||
            fc__reserve(&s->cnt_k, &s->ccnt_k, c + 3, sizeof *s->cnt_k) ||
            fc__reserve(&s->cids, &s->ccids, c + 3, sizeof *s->cids))
            return NIL;
        s->cnt_k[0] = 1; /* no label has k 0: a sentinel for the search of the largest k */
        s->cslots = c;
        for (size_t i = 0; i < n; i++) /* the copies may have moved: so do the pointers to them */
            if (!s->sl[i].lent)
                s->fp[i] = &s->flow[i];
    }
    return (uint32_t)s->nslots++;
}

/* A free slot (slot_new when none is; NIL when out of memory). */
static inline uint32_t slot_get(fc__sweep *s)
{
    if (s->nfreed > 0)
        return s->freed[--s->nfreed];
    return slot_new(s);
}

static inline __attribute__((always_inline)) void slot_put(fc__sweep *s, uint32_t f)
{
    s->freed[s->nfreed++] = f; /* freed[] is as long as the slots: never full */
}

static inline __attribute__((always_inline)) int slist_push(slist *l, uint32_t f, uint32_t *pos)
{
    if (l->n == l->cap && grow32(&l->v, &l->cap, sizeof *l->v))
        return FC_ENOMEM;
    *pos = l->n;
    l->v[l->n++] = f;
    return 0;
}

static inline __attribute__((always_inline)) int attach(fc__sweep *s, uint32_t f)
{
    slot *p = &s->sl[f];
    node *b = &s->nd[p->dst];
    if (b->in.n == 0) {
        b->from = p->src;
        b->nfrom = 1;
    } else if (b->from == p->src)
        b->nfrom++;
    if (slist_push(&s->nd[p->src].out, f, &p->pos_out) || slist_push(&b->in, f, &p->pos_in))
        return FC_ENOMEM;
    p->apos = (uint32_t)s->nact;
    s->act[s->nact++] = f;
    /* An empty history, one used before when the pool has one. The pool cannot overflow: every
     * history is an active flow's or in it, and they number at most the most flows ever active. */
    p->runs = s->nrpool > 0 ? s->rpool[--s->nrpool] : (rvec){NULL, 0, 0};
    return 0;
}

/* Removes f from its nodes' lists and the active set by moving the last entry into its place. */
static inline __attribute__((always_inline)) void detach(fc__sweep *s, uint32_t f)
{
    slot *p = &s->sl[f];
    node *b = &s->nd[p->dst];
    slist *o = &s->nd[p->src].out, *i = &b->in;
    if (b->from == p->src)
        b->nfrom--;
    uint32_t last = o->v[--o->n];
    o->v[p->pos_out] = last;
    s->sl[last].pos_out = p->pos_out;
    last = i->v[--i->n];
    i->v[p->pos_in] = last;
    s->sl[last].pos_in = p->pos_in;
    last = s->act[--s->nact];
    s->act[p->apos] = last;
    s->sl[last].apos = p->apos;
    s->cnt_k[p->lab.k]--; /* it has a label: end_flow's flow has been active */
}

/* ---- the boundary heap ---------------------------------------------------------------------- */

/* Boundaries at one time leave in the order this heap gives them, and that order reaches the
 * caller (flows ending together are handed to flow_done in it): the heap must keep every order of
 * the plain binary heap (internal.h's FC__HEAP on the time), which it does. */

/* The heap has room for b and the sentinels (slot_get); the first new one was the second. */
static inline void heap_push(fc__sweep *s, bnd b)
{
    bnd *h = s->heap;
    size_t n = s->nheap++;
    h[n + 2].t = INFINITY;
    /* In byte offsets, as heap_pop. */
    enum { B = sizeof *h };
    char *base = (char *)h;
    size_t i = n * B;
    for (size_t p; i > 0; i = p) {
        p = (i - B) / 2 & ~(size_t)(B - 1);
        if (!(((const bnd *)(base + p))->t > b.t))
            break;
        *(bnd *)(base + i) = *(const bnd *)(base + p);
    }
    *(bnd *)(base + i) = b;
}

/* Removes the first boundary. The hole left at the top goes down the path of smaller children to
 * a leaf, then back up to where the last entry belongs: the path is sorted, so that place (above
 * the first entry of the path not earlier than the last one) is the one the usual sift down finds,
 * with about half the comparisons, and the choice of child needs no branch. */
static inline bnd heap_pop(fc__sweep *s)
{
    bnd *h = s->heap, top = h[0];
    size_t n = --s->nheap, i = 0;
    bnd x = h[n];
    h[n].t = INFINITY;
    if (n == 0)
        return top;
    /* In byte offsets (entry i at i * B), which spares a shift per access. */
    enum { B = sizeof *h };
    _Static_assert((B & (B - 1)) == 0, "a parent's offset is found by a mask");
    char *base = (char *)h;
    size_t end = n * B;
    for (size_t c; (c = 2 * i + B) < end; i = c) {
        const bnd *l = (const bnd *)(base + c);
        c += (l[1].t < l[0].t) * (size_t)B;
        *(bnd *)(base + i) = *(const bnd *)(base + c);
    }
    for (size_t p; i > 0; i = p) {
        p = (i - B) / 2 & ~(size_t)(B - 1);
        if (x.t > ((const bnd *)(base + p))->t)
            break;
        *(bnd *)(base + i) = *(const bnd *)(base + p);
    }
    *(bnd *)(base + i) = x;
    return top;
}

/* ---- labelling ------------------------------------------------------------------------------ */

/* The flow that continues g's path of unconsumed flows at g's destination, or NIL. */
static uint32_t next_rem(const fc__sweep *s, uint32_t g)
{
    const slist *o = &s->nd[s->sl[g].dst].out;
    if (o->n != 1)
        return NIL;
    return s->sl[o->v[0]].rem ? o->v[0] : NIL;
}

static uint32_t prev_rem(const fc__sweep *s, uint32_t g)
{
    const slist *i = &s->nd[s->sl[g].src].in;
    if (i->n != 1)
        return NIL;
    return s->sl[i->v[0]].rem ? i->v[0] : NIL;
}

static void pair(fc__sweep *s, uint32_t g, uint32_t h)
{
    uint32_t x = s->nd[s->sl[g].dst].num;
    s->sl[g].lab = (fc__label){FC_CONFLICT_MIXED_IN, x, 2};
    s->sl[h].lab = (fc__label){FC_CONFLICT_MIXED_OUT, x, 2};
    s->sl[g].seen = s->sl[h].seen = s->stamp;
}

/* Relabelling is local. A flow's same-direction label and whether it is left for the mixed rule
 * (rem) depend only on the flows leaving its source and entering its destination, so they change
 * only for the flows leaving a node whose out list changed or entering one whose in list changed
 * (the source and the destination of each flow that started or ended). Mixed pairs lie along paths
 * and cycles of rem flows linked at nodes with one flow in and one out, so a pairing changes only
 * on a path that gained or lost a flow or a link: a path through the ends of a flow that started
 * or ended, or one that met a flow whose rem changed at that flow's far end. So the flows
 * relabelled are those of the changed lists, the rem flows at those ends and far ends, and the
 * whole paths and cycles of every rem flow among them; the rest keep their labels (a flow whose
 * lists did not change would get the same label and rem again). */

/* One relabelling at time t: the flows left for the mixed rule (rems) and, for those whose rem flag
 * changed, the list at their far end (chg), so that the later passes visit only those. Both arrays
 * are as long as the slots: a flow enters each at most once. */
typedef struct relabel {
    uint32_t *rems;
    const slist **chg;
    size_t nrem, nchg;
    double t;
    int nomem; /* a history could not grow */
} relabel;

/* Records p's label, final for this relabelling, in its history: a new run at interval s->niv
 * when it changed (or p had none), and the labels counted by k. */
static inline void note(fc__sweep *s, relabel *r, slot *p)
{
    rvec *rv = &p->runs;
    if (rv->n > 0) {
        fc__label_run *last = &rv->v[rv->n - 1];
        if (memcmp(&last->label, &p->lab, sizeof p->lab) == 0)
            return;
        s->cnt_k[last->label.k]--;
        last->count = s->niv - last->first;
        last->end = r->t;
    }
    s->cnt_k[p->lab.k]++;
    if (p->lab.k > s->top_k)
        s->top_k = p->lab.k;
    if (rv->n == rv->cap && grow32(&rv->v, &rv->cap, sizeof *rv->v)) {
        r->nomem = 1;
        return;
    }
    /* count and end are set when the run closes, before anyone reads them */
    fc__label_run *run = &rv->v[rv->n++];
    run->first = s->niv;
    run->start = r->t;
    run->label = p->lab;
}

/* Adds active flow f (slot p, not in the set yet, from node a with od flows out to node b with id
 * flows in) to the set and gives it its same-direction label, final unless f is left for the mixed
 * rule. Only the flows of a changed list can change their rem (the others would get the same label
 * and rem again); such a flow's near end is a seed, whose lone rem flows are taken anyway, so when
 * its rem changes only the list at its far end, far, is noted. */
static inline __attribute__((always_inline)) void take_at(fc__sweep *s, relabel *r, uint32_t f, slot *p,
                                                         const node *a, const node *b, uint32_t od, uint32_t id,
                                                         const slist *far)
{
    p->inset = s->stamp;
    uint8_t was = p->rem;
    if (od >= 2 && od >= id)
        p->lab = (fc__label){FC_CONFLICT_OUTGOING, a->num, od};
    else if (id >= 2)
        p->lab = (fc__label){FC_CONFLICT_INCOMING, b->num, id};
    else
        p->lab = (fc__label){FC_CONFLICT_NONE, 0, 1};
    uint8_t rem = p->lab.kind == FC_CONFLICT_NONE;
    p->rem = rem;
    if (far) {
        r->chg[r->nchg] = far; /* without a branch: whether rem changed is as good as random */
        r->nchg += rem != was;
    }
    if (rem)
        r->rems[r->nrem++] = f;
    else
        note(s, r, p);
}

/* Adds active flow f, of no changed list, to the set (once), as take_at: its rem stays. */
static inline __attribute__((always_inline)) void take(fc__sweep *s, relabel *r, uint32_t f)
{
    slot *p = &s->sl[f];
    if (p->inset == s->stamp)
        return;
    const node *a = &s->nd[p->src], *b = &s->nd[p->dst];
    take_at(s, r, f, p, a, b, a->out.n, b->in.n, NULL);
}

/* Takes the flows leaving node a, whose list changed: they share a and its count. */
static inline void take_out(fc__sweep *s, relabel *r, const node *a)
{
    uint32_t od = a->out.n;
    const uint32_t *v = a->out.v;
    for (size_t j = 0; j < od; j++) {
        uint32_t f = v[j];
        slot *p = &s->sl[f];
        if (p->inset == s->stamp)
            continue;
        const node *b = &s->nd[p->dst];
        take_at(s, r, f, p, a, b, od, b->in.n, &b->out);
    }
}

/* Takes the flows entering node b, whose list changed. */
static inline void take_in(fc__sweep *s, relabel *r, const node *b)
{
    uint32_t id = b->in.n;
    const uint32_t *v = b->in.v;
    for (size_t j = 0; j < id; j++) {
        uint32_t f = v[j];
        slot *p = &s->sl[f];
        if (p->inset == s->stamp)
            continue;
        const node *a = &s->nd[p->src];
        take_at(s, r, f, p, a, b, a->out.n, id, &a->in);
    }
}

/* Takes the flow of list l when it is a lone rem flow. A rem flow is alone in its source's out
 * list and its destination's in list, so the rem flows linked to a flow g are the lone ones in
 * g's source's in list and its destination's out list. Their rem is current: every flow whose
 * lists changed was taken before this. */
static inline __attribute__((always_inline)) void take_lone_rem(fc__sweep *s, relabel *r, const slist *l)
{
    if (l->n == 1 && s->sl[l->v[0]].rem)
        take(s, r, l->v[0]);
}

/* Gathers and labels the flows to relabel for the boundaries whose flows' sources and
 * destinations are queue[0..nseed), in pairs (see above), or with nseed 2 for the one boundary
 * whose flow goes from node x to node y. */
static inline __attribute__((always_inline)) void collect(fc__sweep *s, relabel *r, size_t nseed, uint32_t x,
                                                         uint32_t y)
{
    if (nseed == 2) { /* the usual step, one boundary: its two lists are distinct, no mark needed */
        node *a = &s->nd[x], *b = &s->nd[y];
        take_out(s, r, a);
        /* A node often receives from one node only (two nodes exchanging, a ring, a halo in one
         * dimension): when every flow entering b leaves a, take_out took them all. */
        if (b->from != x || b->nfrom != b->in.n)
            take_in(s, r, b);
        /* A list of three flows or more had two or more before: it links its node neither then
         * nor now, so the lone rem flow across the node keeps its path. */
        if (a->out.n < 3)
            take_lone_rem(s, r, &a->in);
        if (b->in.n < 3)
            take_lone_rem(s, r, &b->out);
    } else {
        for (size_t i = 0; i < nseed; i += 2) {
            node *a = &s->nd[s->queue[i]], *b = &s->nd[s->queue[i + 1]];
            if (a->mark != s->stamp) {
                a->mark = s->stamp;
                take_out(s, r, a);
            }
            if (b->mark_in != s->stamp) {
                b->mark_in = s->stamp;
                take_in(s, r, b);
            }
        }
        /* The rem flows linked at those nodes, through the lists that did not change. */
        for (size_t i = 0; i < nseed; i += 2) {
            take_lone_rem(s, r, &s->nd[s->queue[i]].in);
            take_lone_rem(s, r, &s->nd[s->queue[i + 1]].out);
        }
    }
    /* The rem flows linked to those whose rem changed, at their far ends (the flows added here
     * keep their rem, so the list does not grow). */
    for (size_t i = 0; i < r->nchg; i++)
        take_lone_rem(s, r, r->chg[i]);
    /* Whole paths and cycles of the rem flows gathered, both ways. A flow linked to none (the usual
     * rem flow) is a path of its own, whose NONE label is final: it is recorded here and leaves
     * the set that label pairs, its place taken by the next flow kept. */
    size_t n0 = r->nrem, kept = 0;
    for (size_t i = 0; i < n0; i++) {
        uint32_t f = r->rems[i], nx = next_rem(s, f), pv = prev_rem(s, f);
        if (nx == NIL && pv == NIL) {
            note(s, r, &s->sl[f]);
            continue;
        }
        r->rems[kept++] = f;
        for (uint32_t g = nx; g != NIL && s->sl[g].inset != s->stamp; g = next_rem(s, g))
            take(s, r, g);
        for (uint32_t g = pv; g != NIL && s->sl[g].inset != s->stamp; g = prev_rem(s, g))
            take(s, r, g);
    }
    /* The flows the walks took (seldom any) follow those kept. */
    for (size_t i = n0; i < r->nrem; i++)
        r->rems[kept++] = r->rems[i];
    r->nrem = kept;
}

/* Pairs the rem flows of the set, a union of whole paths and cycles, by the rules of intervals.h,
 * and records their labels. */
static inline __attribute__((always_inline)) void label(fc__sweep *s, relabel *r)
{
    for (size_t i = 0; i < r->nrem; i++) {
        uint32_t f = r->rems[i];
        if (s->sl[f].seen == s->stamp)
            continue;
        /* Back to the origin of f's path, or round its cycle to f again. */
        uint32_t o = f, g;
        while ((g = prev_rem(s, o)) != NIL && g != f)
            o = g;
        if (g == NIL) { /* a path, paired from its origin */
            for (g = o; g != NIL;) {
                s->sl[g].seen = s->stamp;
                uint32_t h = next_rem(s, g);
                if (h == NIL)
                    break;
                pair(s, g, h);
                g = next_rem(s, h);
            }
            continue;
        }
        /* A cycle: pair it from its smallest flow id. */
        uint32_t mn = f;
        for (g = next_rem(s, f); g != f; g = next_rem(s, g))
            if (s->fp[g]->id < s->fp[mn]->id)
                mn = g;
        g = mn;
        do {
            s->sl[g].seen = s->stamp;
            uint32_t h = next_rem(s, g);
            if (h == mn)
                break;
            pair(s, g, h);
            g = next_rem(s, h);
        } while (g != mn);
    }
    for (size_t i = 0; i < r->nrem; i++)
        note(s, r, &s->sl[r->rems[i]]);
}

/* ---- the sweep ------------------------------------------------------------------------------ */

int fc__sw_live(const fc__flow *f)
{
    /* A message of no bytes (a barrier's) takes no bandwidth: it shares no link with anything. */
    return !f->intra && f->src_node != f->dst_node && f->end > f->start && f->bytes > 0;
}

/* Gives a flow the sweep is done with back to its lender. */
static inline void give_back(fc__sweep *s, fc__flow *f)
{
    s->back->v[s->back->n++] = f;
}

/* fc__sweep_add and fc__sweep_lend: f is copied unless lent. */
static inline __attribute__((always_inline)) int add(fc__sweep *s, const fc__flow *f, fc__flow *lent)
{
    if (!f->intra && (!isfinite(f->start) || !isfinite(f->end)))
        return fc__err(FC_EINVAL, "flows: flow %llu: bad times [%g, %g)", (unsigned long long)f->id, f->start,
                       f->end);
    if (!fc__sw_live(f)) {
        int rc = s->ops.flow_done(s->ops.arg, f, NULL, 0);
        if (lent)
            give_back(s, lent);
        return rc;
    }
    if (f->start < s->until)
        return fc__err(FC_EINVAL, "flows: flow %llu starts at %.9f, before the time already swept (%.9f)",
                       (unsigned long long)f->id, f->start, s->until);
    uint32_t f_slot = slot_get(s), x = NIL, y = NIL;
    if (f_slot == NIL || (x = node_index(s, f->src_node)) == NIL || (y = node_index(s, f->dst_node)) == NIL)
        return fc__err(FC_ENOMEM, "flows: out of memory in the interval sweep");
    slot *p = &s->sl[f_slot];
    if (lent) {
        s->fp[f_slot] = lent;
        p->lent = 1;
    } else {
        s->flow[f_slot] = *f;
        s->fp[f_slot] = &s->flow[f_slot];
        p->lent = 0;
    }
    p->src = x;
    p->dst = y;
    /* No label yet. Its first one need not count as a change of rem: what that would gather, the
     * lone rem flows at its ends, is gathered anyway, its ends being its step's seeds. */
    p->rem = 0;
    if (s->fh == s->fn || f->start >= s->fifo[s->fn - 1].t) {
        if (s->fn + 2 > s->fcap) { /* full: reuse the consumed front when it is half, or grow */
            if (s->fh > 0 && s->fh >= s->fn / 2) {
                memmove(s->fifo, s->fifo + s->fh, (s->fn - s->fh) * sizeof *s->fifo);
                s->fn -= s->fh;
                s->fh = 0;
            } else if (fc__reserve(&s->fifo, &s->fcap, s->fn + 2, sizeof *s->fifo))
                return fc__err(FC_ENOMEM, "flows: out of memory in the interval sweep");
        }
        s->fifo[s->fn++] = (qstart){f->start, f->end, NULL, f_slot, 0};
        s->fifo[s->fn].t = INFINITY;
        return 0;
    }
    heap_push(s, (bnd){f->start, f_slot, 1});
    return 0;
}

int fc__sweep_add(fc__sweep *s, const fc__flow *f)
{
    return add(s, f, NULL);
}

void fc__sweep_lender(fc__sweep *s, fc__sweep_back *back)
{
    s->back = back;
}

int fc__sweep_lend(fc__sweep *s, fc__flow *f)
{
    return add(s, f, f);
}

int fc__sweep_lend_all(fc__sweep *s, const fc__sweep_loan *v, size_t n)
{
    /* Room in the queue for every start first, so that a start in order is appended without a
     * test; the last start queued is kept at hand (-infinity: none pending, which any start
     * follows, as add tells). */
    if (s->fn + n + 2 > s->fcap) {
        if (s->fh > 0 && s->fh >= s->fn / 2) {
            /* The sentinel moves too: the flows below may all go elsewhere (to the heap, or
             * straight to flow_done) and append nothing behind which to set it again. */
            memmove(s->fifo, s->fifo + s->fh, (s->fn - s->fh + 1) * sizeof *s->fifo);
            s->fn -= s->fh;
            s->fh = 0;
        }
        if (s->fn + n + 2 > s->fcap && fc__reserve(&s->fifo, &s->fcap, s->fn + n + 2, sizeof *s->fifo))
            return fc__err(FC_ENOMEM, "flows: out of memory in the interval sweep");
    }
    /* A start not below lo is finite and not before the time swept. The arrays and counts the
     * usual flow touches are held here, where its stores cannot reach them, and put back around
     * the general way. */
    double lo = s->until > -INFINITY ? s->until : -DBL_MAX;
    size_t i = 0;
    while (i < n) {
        qstart *fifo = s->fifo;
        size_t fn = s->fn, ndir = s->ndir;
        const uint32_t *dir = s->dir;
        /* The last start queued is not below lo (it is pending: not before the time swept), so a
         * start not below last is not below lo either. */
        double last = s->fh == fn ? lo : fifo[fn - 1].t;
        for (; i < n; i++) {
            fc__flow *f = v[i].fl;
            double t = v[i].start;
            uint32_t x, y;
            /* The usual flow, active, finite and in order, with known nodes, queued with them to
             * take a slot when it starts (struct qstart); any other the general way. */
            if (!(!f->intra && f->src_node != f->dst_node && f->bytes > 0 && t >= last && f->end > t && f->end <= DBL_MAX &&
                  f->src_node < ndir && (x = dir[f->src_node]) != 0 && f->dst_node < ndir &&
                  (y = dir[f->dst_node]) != 0))
                break;
            fifo[fn++] = (qstart){t, f->end, f, x - 1, y - 1};
            fifo[fn].t = INFINITY;
            last = t;
        }
        s->fn = fn;
        if (i < n) {
            int rc = add(s, v[i].fl, v[i].fl);
            if (rc)
                return rc;
            i++;
        }
    }
    return 0;
}

/* Delivers the open interval [open_t, t). */
static inline __attribute__((always_inline)) int deliver(fc__sweep *s, double t)
{
    int rc = 0;
    if (s->nact == 0)
        return 0;
    if (fc__sweep_kn(s->top_k, s->nact) < *s->ops.min_kn) /* nact < NIL (slot_new) */
        ++*s->ops.skipped;
    else if (s->ops.interval)
        rc = s->ops.interval(s->ops.arg, s, s->niv, s->open_t, t);
    s->niv++;
    return rc;
}

/* Ends flow f at t: its last run closes and the caller has it. */
static inline __attribute__((always_inline)) int end_flow(fc__sweep *s, uint32_t f, double t)
{
    detach(s, f);
    rvec *rv = &s->sl[f].runs;
    fc__label_run *r = &rv->v[rv->n - 1]; /* a flow active over an interval has a run */
    r->count = s->niv - r->first;
    r->end = t;
    fc__flow *fl = s->fp[f];
    int rc = s->ops.flow_done(s->ops.arg, fl, rv->v, rv->n);
    rv->n = 0;
    s->rpool[s->nrpool++] = *rv; /* room for it: see attach */
    if (s->sl[f].lent)
        give_back(s, fl);
    slot_put(s, f);
    return rc;
}

/* Takes a fresh stamp for a relabelling. When the 32-bit stamps wrap, every mark is cleared, so
 * that no mark left from long ago can equal a new stamp. */
static inline __attribute__((always_inline)) void next_stamp(fc__sweep *s)
{
    if (++s->stamp != s->wrap)
        return;
    for (size_t i = 0; i < s->cslots; i++)
        s->sl[i].inset = s->sl[i].seen = 0;
    for (size_t x = 0; x < s->cnodes; x++)
        s->nd[x].mark = s->nd[x].mark_in = 0;
    s->stamp = 1;
}

/* A slot for the lent flow of queued start q, which starts now (NIL when out of memory). */
static inline __attribute__((always_inline)) uint32_t start_slot(fc__sweep *s, const qstart *q)
{
    uint32_t f = slot_get(s);
    if (f == NIL)
        return NIL;
    slot *p = &s->sl[f];
    s->fp[f] = q->fl;
    p->lent = 1;
    p->src = q->src;
    p->dst = q->dst;
    p->rem = 0; /* as add */
    return f;
}

/* Applies the group of boundaries at time t, the next one: one boundary unless many is set, the
 * first start queued when in_fifo is set (the caller knows), else the top of the heap. */
static inline __attribute__((always_inline)) int step_at(fc__sweep *s, double t, int many, int in_fifo)
{
    int rc = deliver(s, t);
    if (rc)
        return rc;
    next_stamp(s);
    size_t nseed = 0;
    uint32_t x, y;
    do {
        bnd b; /* no boundary is earlier than t: one at t is one not later */
        double end; /* of a start's flow */
        if (many ? s->fifo[s->fh].t <= t : in_fifo) {
            const qstart *q = &s->fifo[s->fh++];
            uint32_t f = q->src;
            if (q->fl && (f = start_slot(s, q)) == NIL)
                return FC_ENOMEM;
            b = (bnd){q->t, f, 1};
            end = q->end;
        } else if (!many || s->heap[0].t <= t) {
            b = heap_pop(s);
            end = b.start ? s->fp[b.slot]->end : 0; /* a start out of order (seldom) */
        } else
            break;
        const slot *p = &s->sl[b.slot];
        x = p->src;
        y = p->dst;
        if (many) {
            s->queue[nseed++] = x; /* room for all (slot_new) */
            s->queue[nseed++] = y;
        }
        if (b.start) {
            if (attach(s, b.slot))
                return FC_ENOMEM;
            heap_push(s, (bnd){end, b.slot, 0});
        } else if ((rc = end_flow(s, b.slot, t)))
            return rc;
    } while (many);
    /* Nothing is active in an idle gap: no flow is relabelled and no interval opens. */
    relabel r = {.rems = s->rems, .chg = s->chg, .t = t};
    collect(s, &r, many ? nseed : 2, x, y);
    label(s, &r);
    if (r.nomem)
        return FC_ENOMEM;
    while (s->cnt_k[s->top_k] == 0)
        s->top_k--;
    s->open_t = t;
    return 0;
}

/* A step of several boundaries, apart from the usual one so that each is compiled for its case.
 * What a step calls is forced inline into both: a call would take the relabelling's state out of
 * registers. */
static __attribute__((noinline)) int step_many(fc__sweep *s, double t)
{
    return step_at(s, t, 1, 0);
}

int fc__sweep_advance(fc__sweep *s, double until)
{
    int rc = 0;
    while (rc == 0) {
        /* The next time t (INFINITY when none is pending), from the queue of starts on a tie, and
         * whether it has one boundary only. Another would be the next start in the queue or, the
         * heap being ordered, a child of its top (its sentinels are at infinity). None is earlier
         * than t, so later is the same as not equal, and one comparison. */
        const bnd *h = s->heap;
        double t = h[0].t, u = s->fifo[s->fh].t;
        int in_fifo = u <= t, one;
        if (in_fifo)
            t = u;
        /* Only below until is t a boundary, whose neighbours are in the arrays (with nothing
         * pending, the entry after the queue's sentinel is not). */
        if (!(t < until))
            break;
        if (in_fifo)
            one = s->fifo[s->fh + 1].t > t && h[0].t > t;
        else
            one = h[1].t > t && h[2].t > t;
        rc = one ? step_at(s, t, 0, in_fifo) : step_many(s, t);
    }
    if (rc == FC_ENOMEM)
        fc__err(rc, "flows: out of memory in the interval sweep");
    if (until > s->until)
        s->until = until;
    /* Every start queued has been applied, as usual when the starts given are advanced to: the
     * queue starts again at its front, so that it stays as long as the starts given between two
     * advances, in the same memory, and is never moved. */
    if (s->fh == s->fn && s->fh > 0) {
        s->fh = s->fn = 0;
        s->fifo[0].t = INFINITY;
    }
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

const fc__flow *fc__sweep_flow(const fc__sweep *s, size_t i)
{
    return s->fp[s->act[i]];
}

const fc__label *fc__sweep_label(const fc__sweep *s, size_t i)
{
    return &s->sl[s->act[i]].lab;
}

void fc__sweep_active_ids(const fc__sweep *s, uint64_t *ids)
{
    for (size_t i = 0; i < s->nact; i++)
        ids[i] = s->fp[s->act[i]]->id;
}

uint32_t fc__sweep_max_k(const fc__sweep *s)
{
    return s->top_k;
}

