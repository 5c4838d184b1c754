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
    fc_flow *h; /* the heap */
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
    free(f->h);
    free(f->v);
    free(f);
}

static int on_flow(void *arg, const fc_flow *fl)
{
    fc__feed *f = arg;
    if (fl->intra)
        return 0;
    if (f->n == f->cap) {
        size_t nc = f->cap ? 2 * f->cap : 1024;
        fc_flow *h = realloc(f->h, nc * sizeof *h);
        if (h == NULL)
            return fc__err(FC_ENOMEM, "out of memory ordering the flows");
        f->h = h;
        f->cap = nc;
    }
    size_t i = f->n++;
    while (i > 0 && before(fl, &f->h[(i - 1) / 2])) {
        f->h[i] = f->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    f->h[i] = *fl;
    return 0;
}

/* Gives the next id to the heap's first flow and hands it to the sweep. */
static int pop(fc__feed *f)
{
    fc_flow top = f->h[0], last = f->h[--f->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= f->n)
            break;
        if (c + 1 < f->n && before(&f->h[c + 1], &f->h[c]))
            c++;
        if (!before(&f->h[c], &last))
            break;
        f->h[i] = f->h[c];
        i = c;
    }
    if (f->n > 0)
        f->h[i] = last;
    uint64_t id = f->next_id++;
    if (top.end < top.send_start) { /* remembered so that the worst one can be named by its id */
        if (fc__grow((void **)&f->v, &f->nv, &f->cv, sizeof *f->v) < 0)
            return fc__err(FC_ENOMEM, "out of memory ordering the flows");
        f->v[f->nv++] = (viol){top.id, id};
    }
    top.id = id;
    return fc__sweep_add(f->s, &top);
}

static int on_advance(void *arg, double watermark)
{
    fc__feed *f = arg;
    int rc = 0;
    while (rc == 0 && f->n > 0 && f->h[0].start < watermark)
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
