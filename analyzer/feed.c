/* analyzer/feed.c: the reordering between the match and the sweep (feed.h): binary heaps of the
 * flows not yet given an id, ordered as fc__match_trace orders them. */
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "feed.h"
#include "internal.h"

/* A clock-condition violation: its order of delivery and, once given, its id. */
typedef struct viol {
    uint64_t delivered, id;
} viol;

/* A heap entry: a waiting flow's index in the slab, with its start, the first key of the order,
 * beside it. Nearly every comparison is settled by the starts alone and never touches the slab. */
typedef struct fent {
    double start;
    uint32_t ix;
} fent;

/* Waiting flows in a slab of reused entries, and a binary heap of their entries (moving 16 bytes,
 * not a whole flow, at each step of a sift). */
typedef struct fheap {
    fc_flow *slab;
    uint32_t *freed;
    fent *h;
    size_t nslab, cap, nfreed, n;
    uint64_t next_id;
} fheap;

struct fc__feed {
    fc__sweep *s;
    fheap inter, intra;
    int (*on_intra)(void *arg, const fc_flow *f);
    void *intra_arg;
    viol *v;
    size_t nv, cv;
};

/* The order of ids (match.c's, within inter-node flows and within intra-node ones). */
static int before(const fc_flow *x, const fc_flow *y)
{
#define CMP(f)                                                                                     \
    if (x->f != y->f)                                                                              \
        return x->f < y->f;
    /* Then the order of delivery (the id until the ids are given), as match.c does. */
    CMP(start) CMP(src_rank) CMP(dst_rank) CMP(end) CMP(send_start) CMP(id)
#undef CMP
    return 0;
}

/* The waiting flow that comes later in that order belongs below: the order of before(), whose
 * first key is at hand in the entry; only equal starts go on to the slab. */
static int ent_below(const void *ctx, const fent *a, const fent *b)
{
    if (a->start != b->start)
        return a->start > b->start;
    const fc_flow *slab = ctx;
    return before(&slab[b->ix], &slab[a->ix]);
}

FC__HEAP(fh, fent, ent_below)

int fc__feed_new(const fc__sweep_ops *ops, fc__feed **out)
{
    fc__feed *f = calloc(1, sizeof *f);
    *out = NULL;
    if (f == NULL || fc__sweep_new(ops, &f->s) < 0) {
        free(f);
        return fc__err(FC_ENOMEM, "out of memory starting the flow feed");
    }
    *out = f;
    return 0;
}

void fc__feed_intra(fc__feed *f, int (*fn)(void *arg, const fc_flow *fl), void *arg)
{
    f->on_intra = fn;
    f->intra_arg = arg;
}

static void fheap_free(fheap *q)
{
    free(q->slab);
    free(q->freed);
    free(q->h);
}

void fc__feed_free(fc__feed *f)
{
    if (f == NULL)
        return;
    fc__sweep_free(f->s);
    fheap_free(&f->inter);
    fheap_free(&f->intra);
    free(f->v);
    free(f);
}

static int push(fheap *q, const fc_flow *fl)
{
    uint32_t ix;
    if (q->nfreed > 0)
        ix = q->freed[--q->nfreed];
    else {
        if (q->nslab == q->cap) {
            size_t nc = q->cap ? 2 * q->cap : 1024;
            fc_flow *sl = nc < UINT32_MAX ? realloc(q->slab, nc * sizeof *sl) : NULL;
            if (sl)
                q->slab = sl;
            uint32_t *fr = sl ? realloc(q->freed, nc * sizeof *fr) : NULL;
            if (fr)
                q->freed = fr;
            fent *h = fr ? realloc(q->h, nc * sizeof *h) : NULL;
            if (h == NULL)
                return fc__err(FC_ENOMEM, "out of memory ordering the flows");
            q->h = h;
            q->cap = nc;
        }
        ix = (uint32_t)q->nslab++;
    }
    q->slab[ix] = *fl;
    q->h[q->n++] = (fent){fl->start, ix};
    fh_up(q->slab, q->h, q->n - 1);
    return 0;
}

/* Takes the heap's first flow, gives it the next id and returns it; the entry stays readable
 * until the next push. */
static fc_flow *take(fheap *q)
{
    uint32_t top = q->h[0].ix;
    q->h[0] = q->h[--q->n];
    if (q->n > 0)
        fh_down(q->slab, q->h, q->n, 0);
    q->freed[q->nfreed++] = top;
    return &q->slab[top];
}

static int on_flow(void *arg, const fc_flow *fl)
{
    fc__feed *f = arg;
    if (!fl->intra)
        return push(&f->inter, fl);
    return f->on_intra ? push(&f->intra, fl) : 0;
}

/* Gives the next inter-node id to the first waiting flow and hands it to the sweep. */
static int pop_inter(fc__feed *f)
{
    fc_flow *fl = take(&f->inter);
    uint64_t id = f->inter.next_id++;
    if (fl->end < fl->send_start) { /* remembered so that the worst one can be named by its id */
        if (fc__grow((void **)&f->v, &f->nv, &f->cv, sizeof *f->v) < 0)
            return fc__err(FC_ENOMEM, "out of memory ordering the flows");
        f->v[f->nv++] = (viol){fl->id, id};
    }
    fl->id = id;
    return fc__sweep_add(f->s, fl);
}

static int pop_intra(fc__feed *f)
{
    fc_flow *fl = take(&f->intra);
    fl->id = f->intra.next_id++;
    return f->on_intra(f->intra_arg, fl);
}

static int on_advance(void *arg, double watermark)
{
    fc__feed *f = arg;
    int rc = 0;
    while (rc == 0 && f->inter.n > 0 && f->inter.h[0].start < watermark)
        rc = pop_inter(f);
    while (rc == 0 && f->intra.n > 0 && f->intra.h[0].start < watermark)
        rc = pop_intra(f);
    return rc ? rc : fc__sweep_advance(f->s, watermark);
}

fc_match_sink fc__feed_sink(fc__feed *f)
{
    return (fc_match_sink){.arg = f, .flow = on_flow, .advance = on_advance};
}

int fc__feed_finish(fc__feed *f, fc_match *m)
{
    int rc = 0;
    while (rc == 0 && f->inter.n > 0)
        rc = pop_inter(f);
    while (rc == 0 && f->intra.n > 0)
        rc = pop_intra(f);
    if (rc == 0)
        rc = fc__sweep_finish(f->s);
    if (m->clock_violations) {
        uint64_t d = m->worst_flow;
        m->worst_flow = UINT64_MAX;
        for (size_t i = 0; i < f->nv; i++)
            if (f->v[i].delivered == d)
                m->worst_flow = f->v[i].id;
    }
    return rc;
}
