/* analyzer/collective/merge.c: the collective calls' flows among a match's (calls.h): added to a
 * stored match and re-sorted, or handed to a streamed match's sink in the order of its watermarks. */
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "collective/calls.h"

/* ---- adding the flows to a match -------------------------------------------------------------- */

typedef struct flowvec {
    fc_flow *v;
    size_t n, cap;
} flowvec;

static int keep_flow(void *arg, const fc_flow *f)
{
    flowvec *fv = arg;
    if (fc__grow((void **)&fv->v, &fv->n, &fv->cap, sizeof *fv->v) < 0)
        return FC_ENOMEM;
    fv->v[fv->n++] = *f;
    return 0;
}

static int cmp_traffic(const void *x, const void *y)
{
    const fc_traffic *a = x, *b = y;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    return (a->dst > b->dst) - (a->dst < b->dst);
}

/* Adds the collective flows' bytes to m's list of node pairs (kept sorted). */
static int add_traffic(fc_match *m, const fc_flow *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fc_traffic key = {.src = f[i].src_node, .dst = f[i].dst_node};
        fc_traffic *e = m->ntraffic == 0 ? NULL : bsearch(&key, m->traffic, m->ntraffic, sizeof key, cmp_traffic);
        if (e == NULL) {
            fc_traffic *v = realloc(m->traffic, (m->ntraffic + 1) * sizeof *v);
            if (v == NULL)
                return FC_ENOMEM;
            m->traffic = v;
            m->traffic[m->ntraffic++] = key;
            qsort(m->traffic, m->ntraffic, sizeof key, cmp_traffic);
            e = bsearch(&key, m->traffic, m->ntraffic, sizeof key, cmp_traffic);
        }
        e->count++;
        e->bytes += (double)f[i].bytes;
        e->coll_count++;
        e->coll_bytes += (double)f[i].bytes;
    }
    return 0;
}

int fc__colls_add(fc_trace *t, fc_match *m, fc__colls **out)
{
    flowvec fv = {0};
    int rc = m->coll_records > 0 ? fc__colls_build(t, m, keep_flow, &fv, out) : fc__colls_none(t, m, out);
    if (rc == 0 && fv.n > 0) {
        fc_flow *all = realloc(m->flows, (m->nflows + fv.n) * sizeof *all);
        if (all == NULL)
            rc = FC_ENOMEM;
        else {
            m->flows = all;
            /* Old ids for the sort's last key, so that the point-to-point flows keep their order;
             * the collective ones follow them on a tie. */
            for (size_t i = 0; i < fv.n; i++) {
                fv.v[i].id = m->nflows + i;
                all[m->nflows + i] = fv.v[i];
            }
            rc = add_traffic(m, fv.v, fv.n);
            /* The wait entries follow their flows through the sort (waits[i] is flow i's). A
             * member of a collective is inside the call from its step's start: each end of a
             * step waits from there. */
            fc_flow_waits *w = NULL;
            if (rc == 0 && m->waits != NULL &&
                (w = malloc((m->nflows + fv.n) * sizeof *w)) == NULL)
                rc = FC_ENOMEM;
            uint64_t worst = m->worst_flow;
            size_t np2p = m->nflows;
            m->nflows += fv.n;
            for (size_t i = 0; i < fv.n; i++)
                m->ninter += !fv.v[i].intra;
            fc__sort_flows(m->flows, m->nflows);
            for (size_t i = 0; i < m->nflows; i++) {
                uint64_t old = m->flows[i].id;
                if (m->clock_violations && old == worst && m->flows[i].coll == 0)
                    m->worst_flow = i;
                if (w != NULL)
                    w[i] = old < np2p ? m->waits[old]
                                      : (fc_flow_waits){m->flows[i].send_start, m->flows[i].recv_post, 0};
                m->flows[i].id = i;
            }
            if (w != NULL) {
                free(m->waits);
                m->waits = w;
            }
        }
    }
    free(fv.v);
    if (rc != 0) {
        fc__colls_free(*out);
        *out = NULL;
    }
    return rc;
}

/* ---- the same for a streamed match ------------------------------------------------------------ */

struct fc__coll_stream {
    fc_trace *t;
    fc_match_sink inner;
    flowvec fv;         /* the collective flows, by start */
    size_t next;        /* the first not yet handed on */
    uint64_t delivered; /* flows handed on: the delivery order the inner sink sees */
    fc__colls *colls;
    struct { uint64_t match_id, id; } *viol; /* point-to-point flows against the clock condition */
    size_t nviol, vcap;
};

static int cmp_start(const void *x, const void *y)
{
    const fc_flow *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->src_rank != b->src_rank)
        return a->src_rank < b->src_rank ? -1 : 1;
    return (a->dst_rank > b->dst_rank) - (a->dst_rank < b->dst_rank);
}

static int hand_on(fc__coll_stream *cs, const fc_flow *f)
{
    fc_flow g = *f;
    g.id = cs->delivered++;
    return cs->inner.flow(cs->inner.arg, &g);
}

/* Hands on the collective flows that start before watermark. */
static int release(fc__coll_stream *cs, double watermark, int all)
{
    int rc = 0;
    while (rc == 0 && cs->next < cs->fv.n && (all || cs->fv.v[cs->next].start < watermark))
        rc = hand_on(cs, &cs->fv.v[cs->next++]);
    return rc;
}

static int st_start(void *arg, const fc_match *m)
{
    fc__coll_stream *cs = arg;
    int rc = cs->inner.start ? cs->inner.start(cs->inner.arg, m) : 0;
    if (rc == 0)
        rc = fc__colls_build(cs->t, m, keep_flow, &cs->fv, &cs->colls);
    if (rc == 0 && cs->fv.n > 0)
        fc__sort(cs->fv.v, cs->fv.n, sizeof *cs->fv.v, cmp_start);
    return rc;
}

static int st_flow(void *arg, const fc_flow *f)
{
    fc__coll_stream *cs = arg;
    if (f->recv_end < f->send_start) {
        if (fc__grow((void **)&cs->viol, &cs->nviol, &cs->vcap, sizeof *cs->viol) < 0)
            return FC_ENOMEM;
        cs->viol[cs->nviol].match_id = f->id;
        cs->viol[cs->nviol++].id = cs->delivered;
    }
    return hand_on(cs, f);
}

static int st_advance(void *arg, double watermark)
{
    fc__coll_stream *cs = arg;
    int rc = release(cs, watermark, 0);
    return rc == 0 && cs->inner.advance ? cs->inner.advance(cs->inner.arg, watermark) : rc;
}

int fc__coll_stream_new(fc_trace *t, const fc_match_sink *inner, fc__coll_stream **out)
{
    fc__coll_stream *cs = calloc(1, sizeof *cs);
    *out = cs;
    if (cs == NULL)
        return FC_ENOMEM;
    cs->t = t;
    cs->inner = *inner;
    return 0;
}

fc_match_sink fc__coll_stream_sink(fc__coll_stream *cs)
{
    return (fc_match_sink){.arg = cs, .start = st_start, .flow = st_flow, .advance = st_advance};
}

int fc__coll_stream_finish(fc__coll_stream *cs, fc_match *m, fc__colls **out)
{
    int rc = release(cs, 0, 1);
    *out = NULL;
    if (rc != 0)
        return rc;
    if ((rc = add_traffic(m, cs->fv.v, cs->fv.n)) < 0)
        return rc;
    m->nflows += cs->fv.n;
    for (size_t i = 0; i < cs->fv.n; i++)
        m->ninter += !cs->fv.v[i].intra;
    if (m->clock_violations)
        for (size_t i = 0; i < cs->nviol; i++)
            if (cs->viol[i].match_id == m->worst_flow) {
                m->worst_flow = cs->viol[i].id;
                break;
            }
    *out = cs->colls;
    cs->colls = NULL;
    return 0;
}

void fc__coll_stream_free(fc__coll_stream *cs)
{
    if (cs == NULL)
        return;
    free(cs->fv.v);
    free(cs->viol);
    fc__colls_free(cs->colls);
    free(cs);
}
