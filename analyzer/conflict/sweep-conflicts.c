/* analyzer/conflict/sweep-conflicts.c: what the sweep's active set holds at a moment, in the
 * orders the reports list it: the conflicts of an interval, a snapshot of its flows for the worst
 * intervals, the flows by start. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "conflict/sweep.h"

#define NIL UINT32_MAX
#include "conflict/sweep-state.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int u64_less(const uint64_t *a, const uint64_t *b)
{
    return *a < *b;
}

FC__ISORT(sort_ids, uint64_t, u64_less)

static inline int id_before(const void *ctx, uint64_t a, uint64_t b)
{
    (void)ctx;
    return a < b;
}

FC__MSORT(msort_ids, uint64_t, id_before)

/* fc__sort_ids beyond insertion's reach, apart: its buffer on the stack would otherwise make
 * every call pay for a frame of 8 KiB (its pages probed), most calls sorting a few ids. */
static __attribute__((noinline)) void sort_ids_merge(uint64_t *ids, size_t n)
{
    /* Every interval of a prediction sorts its flows' ids (a few dozen to a few thousand): qsort
     * called a comparison through a pointer for each of its n log n steps, and allocated its
     * buffer, for over 5 % of the default command. Ids are distinct integers, so any correct sort
     * gives the same order; the merge sort's buffer is on the stack (the heap when large, or
     * qsort sorts when that fails). */
    uint64_t stackbuf[1024];
    uint64_t *tmp = n <= sizeof stackbuf / sizeof *stackbuf ? stackbuf : malloc(n * sizeof *ids);
    if (tmp == NULL) {
        fc__sort(ids, n, sizeof *ids, cmp_u64); /* glibc's qsort sorts in place without memory */
        return;
    }
    msort_ids(ids, tmp, n, NULL);
    if (tmp != stackbuf)
        free(tmp);
}

void fc__sort_ids(uint64_t *ids, size_t n)
{
    if (n <= FC__ISORT_MAX)
        sort_ids(ids, n);
    else
        sort_ids_merge(ids, n);
}

/* Hands fn the same-direction conflict of the k flows in list l, ids ascending. */
static int same_dir(const fc__sweep *s, uint32_t kind, uint32_t num, const slist *l,
                    int (*fn)(void *, const fc__conflict *), void *arg)
{
    for (size_t i = 0; i < l->n; i++)
        s->cids[i] = s->fp[l->v[i]]->id;
    fc__sort_ids(s->cids, l->n);
    fc__conflict c = {kind, num, (uint32_t)l->n, s->cids};
    return fn(arg, &c);
}

int fc__sweep_conflicts(const fc__sweep *s, int (*fn)(void *arg, const fc__conflict *c), void *arg)
{
    /* The marks say which nodes' conflicts were handed out already; a fresh stamp per call, kept
     * apart from the labelling's. The sweep is const to the caller, its scratch is not. */
    fc__sweep *w = (fc__sweep *)s;
    if (++w->cstamp == s->wrap) { /* wrapped: see next_stamp */
        for (size_t x = 0; x < s->cnodes; x++)
            w->nd[x].omark = w->nd[x].imark = 0;
        w->cstamp = 1;
    }
    uint32_t st = w->cstamp;
    int rc = 0;
    for (size_t j = 0; j < s->nact && rc == 0; j++) {
        uint32_t f = s->act[j];
        node *x = &w->nd[s->sl[f].src], *y = &w->nd[s->sl[f].dst];
        if (x->out.n >= 2 && x->omark != st) {
            x->omark = st;
            rc = same_dir(s, FC_CONFLICT_OUTGOING, x->num, &x->out, fn, arg);
        }
        if (rc == 0 && y->in.n >= 2 && y->imark != st) {
            y->imark = st;
            rc = same_dir(s, FC_CONFLICT_INCOMING, y->num, &y->in, fn, arg);
        }
        if (rc == 0 && s->sl[f].lab.kind == FC_CONFLICT_MIXED_IN) {
            w->cids[0] = s->fp[f]->id;
            w->cids[1] = s->fp[y->out.v[0]]->id;
            fc__conflict c = {FC_CONFLICT_MIXED_IN, y->num, 2, s->cids};
            rc = fn(arg, &c);
        }
    }
    return rc;
}

void fc__sweep_snapshot(const fc__sweep *s, fc__snap_flow *out)
{
    for (size_t j = 0; j < s->nact; j++) {
        const slot *p = &s->sl[s->act[j]];
        out[j] = (fc__snap_flow){s->fp[s->act[j]]->id, s->nd[p->src].num, s->nd[p->dst].num,
                                 p->lab.kind == FC_CONFLICT_MIXED_IN};
    }
}

static int snap_by_src(const void *a, const void *b)
{
    const fc__snap_flow *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int snap_by_dst(const void *a, const void *b)
{
    const fc__snap_flow *x = a, *y = b;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int conf_by_node(const void *a, const void *b)
{
    const fc__conflict *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

/* Appends the same-direction conflicts of v[0..n), sorted by node (src, or dst with in) then id:
 * one per node with two flows or more. With conf NULL, only counts conflicts and ids. */
static void snap_same_dir(const fc__snap_flow *v, size_t n, int in, fc__conflict *conf, size_t *nconf,
                          uint64_t *ids, size_t *nids)
{
    for (size_t i = 0, j; i < n; i = j) {
        uint32_t x = in ? v[i].dst : v[i].src;
        for (j = i + 1; j < n && (in ? v[j].dst : v[j].src) == x; j++)
            ;
        if (j - i < 2)
            continue;
        if (conf != NULL) {
            conf[*nconf] = (fc__conflict){in ? FC_CONFLICT_INCOMING : FC_CONFLICT_OUTGOING, x, (uint32_t)(j - i),
                                          ids + *nids};
            for (size_t k = i; k < j; k++)
                ids[*nids + k - i] = v[k].id;
        }
        ++*nconf;
        *nids += j - i;
    }
}

int fc__snap_conflicts(fc__snap_flow *v, size_t n, fc__conflict **conf, size_t *nconf, uint64_t **ids)
{
    size_t nc = 0, ni = 0, nmixed = 0;
    *conf = NULL;
    *ids = NULL;
    *nconf = 0;
    for (size_t i = 0; i < n; i++)
        nmixed += v[i].mixed_in;
    /* Counted first, so that the ids never move once conflicts point into them. */
    fc__sort(v, n, sizeof *v, snap_by_dst);
    snap_same_dir(v, n, 1, NULL, &nc, NULL, &ni);
    fc__sort(v, n, sizeof *v, snap_by_src);
    snap_same_dir(v, n, 0, NULL, &nc, NULL, &ni);
    nc += nmixed;
    ni += 2 * nmixed;
    if (nc == 0)
        return 0;
    fc__conflict *c = malloc(nc * sizeof *c);
    uint64_t *id = malloc(ni * sizeof *id);
    if (c == NULL || id == NULL) {
        free(c);
        free(id);
        return FC_ENOMEM;
    }
    nc = ni = 0;
    snap_same_dir(v, n, 0, c, &nc, id, &ni);
    /* A mixed conflict pairs a flow entering a node with the one flow leaving it (a flow left for
     * the mixed rule is alone in its lists): found among the flows by source. */
    for (size_t i = 0; i < n; i++) {
        if (!v[i].mixed_in)
            continue;
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (v[mid].src < v[i].dst)
                lo = mid + 1;
            else
                hi = mid;
        }
        id[ni] = v[i].id;
        id[ni + 1] = lo < n && v[lo].src == v[i].dst ? v[lo].id : UINT64_MAX; /* there is one */
        c[nc++] = (fc__conflict){FC_CONFLICT_MIXED_IN, v[i].dst, 2, id + ni};
        ni += 2;
    }
    fc__sort(v, n, sizeof *v, snap_by_dst);
    snap_same_dir(v, n, 1, c, &nc, id, &ni);
    fc__sort(c, nc, sizeof *c, conf_by_node);
    *conf = c;
    *nconf = nc;
    *ids = id;
    return 0;
}

/* Order of a whole sweep's feed: by start, then id. */
static int cmp_start(const void *a, const void *b, void *arg)
{
    const fc__flow *fl = arg, *x = &fl[*(const size_t *)a], *y = &fl[*(const size_t *)b];
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

int fc__sweep_flows(const fc__flow *flows, size_t n, const fc__sweep_ops *ops)
{
    fc__sweep *s = NULL;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    int rc = order ? fc__sweep_new(ops, &s) : FC_ENOMEM;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        /* Matched flows come in this order already (one pass tells): an analysis sweeps them
         * several times, and sorting each time would cost as much as the sweep. */
        size_t in_order = 1;
        while (in_order < n && cmp_start(&order[in_order - 1], &order[in_order], (void *)flows) < 0)
            in_order++;
        if (in_order < n)
            qsort_r(order, n, sizeof *order, cmp_start, (void *)flows);
        for (size_t r = 0; r < n && rc == 0; r++) {
            const fc__flow *f = &flows[order[r]];
            /* Flows that are never active may hold any times: only the others move the sweep. */
            if (fc__sw_live(f) && isfinite(f->start))
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
