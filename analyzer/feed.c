/* analyzer/feed.c: the reordering between the match and the sweep (feed.h): a binary heap of the
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

struct fc__feed {
    fc__sweep *s;
    /* The flows waiting, in a slab of reused entries, and a binary heap of their indices (moving
     * a 4-byte index, not a whole flow, at each step of a sift). */
    fc_flow *slab;
    uint32_t *freed;
    size_t nslab, cslab, nfreed;
    uint32_t *h;
    size_t n, cap;
    uint64_t next_id;
    viol *v;
    size_t nv, cv;
};

/* The order of ids (match.c's, for inter-node flows). */
static int before(const fc_flow *x, const fc_flow *y)
{
#define CMP(f)                                                                                     \
    if (x->f != y->f)                                                                              \
        return x->f < y->f;
    CMP(start) CMP(src_rank) CMP(dst_rank) CMP(end) CMP(send_start)
#undef CMP
    return 0;
}

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

void fc__feed_free(fc__feed *f)
{
    if (f == NULL)
        return;
    fc__sweep_free(f->s);
    free(f->slab);
    free(f->freed);
    free(f->h);
    free(f->v);
    free(f);
}

static int on_flow(void *arg, const fc_flow *fl)
{
    fc__feed *f = arg;
    if (fl->intra)
        return 0;
    uint32_t ix;
    if (f->nfreed > 0)
        ix = f->freed[--f->nfreed];
    else {
        if (f->nslab == f->cslab) {
            size_t nc = f->cslab ? 2 * f->cslab : 1024;
            fc_flow *sl = nc < UINT32_MAX ? realloc(f->slab, nc * sizeof *sl) : NULL;
            uint32_t *fr = sl ? realloc(f->freed, nc * sizeof *fr) : NULL;
            uint32_t *h = fr ? realloc(f->h, nc * sizeof *h) : NULL;
            if (sl)
                f->slab = sl;
            if (fr)
                f->freed = fr;
            if (h == NULL)
                return fc__err(FC_ENOMEM, "out of memory ordering the flows");
            f->h = h;
            f->cslab = f->cap = nc;
        }
        ix = (uint32_t)f->nslab++;
    }
    f->slab[ix] = *fl;
    size_t i = f->n++;
    while (i > 0 && before(fl, &f->slab[f->h[(i - 1) / 2]])) {
        f->h[i] = f->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    f->h[i] = ix;
    return 0;
}

/* Gives the next id to the heap's first flow and hands it to the sweep. */
static int pop(fc__feed *f)
{
    uint32_t top = f->h[0], last = f->h[--f->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= f->n)
            break;
        if (c + 1 < f->n && before(&f->slab[f->h[c + 1]], &f->slab[f->h[c]]))
            c++;
        if (!before(&f->slab[f->h[c]], &f->slab[last]))
            break;
        f->h[i] = f->h[c];
        i = c;
    }
    if (f->n > 0)
        f->h[i] = last;
    f->freed[f->nfreed++] = top; /* the slab entry is read below, before any flow can reuse it */
    fc_flow *fl = &f->slab[top];
    uint64_t id = f->next_id++;
    if (fl->end < fl->send_start) { /* remembered so that the worst one can be named by its id */
        if (fc__grow((void **)&f->v, &f->nv, &f->cv, sizeof *f->v) < 0)
            return fc__err(FC_ENOMEM, "out of memory ordering the flows");
        f->v[f->nv++] = (viol){fl->id, id};
    }
    fl->id = id;
    return fc__sweep_add(f->s, fl);
}

static int on_advance(void *arg, double watermark)
{
    fc__feed *f = arg;
    int rc = 0;
    while (rc == 0 && f->n > 0 && f->slab[f->h[0]].start < watermark)
        rc = pop(f);
    return rc ? rc : fc__sweep_advance(f->s, watermark);
}

fc_match_sink fc__feed_sink(fc__feed *f)
{
    return (fc_match_sink){.arg = f, .flow = on_flow, .advance = on_advance};
}

int fc__feed_finish(fc__feed *f, fc_match *m)
{
    int rc = 0;
    while (rc == 0 && f->n > 0)
        rc = pop(f);
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
