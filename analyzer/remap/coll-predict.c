/* analyzer/remap/coll-predict.c: replays each collective call's messages alone under each model
 * (coll-predict.h): a replay whose ranks are the call's members, each starting at its observed
 * entry and running its part of the algorithm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "remap/coll-predict.h"
#include "remap/replay.h"

/* A post while one member's part is emitted. */
typedef struct cpost {
    uint32_t me, peer, op, ord;
    int send;
} cpost;

typedef struct cbuild {
    fc__rprog *pg;          /* the member's program */
    size_t opcap, wcap, first;
    uint32_t me, ord;
    cpost *v;               /* every member's posts */
    size_t n, cap;
    int nomem;
} cbuild;

static int add_op(cbuild *b, const fc__rop *op)
{
    if (fc__grow((void **)&b->pg->ops, &b->pg->nops, &b->opcap, sizeof *op) < 0)
        return FC_ENOMEM;
    b->pg->ops[b->pg->nops++] = *op;
    return 0;
}

static int cb_post(void *ctx, int send, uint32_t peer, uint64_t bytes)
{
    cbuild *b = ctx;
    fc__rop op = {.kind = send ? FC__ROP_SEND : FC__ROP_RECV, .flags = FC__ROPF_COLL, .peer = peer,
                  .bytes = bytes, .msg = FC__NOMSG};
    if (fc__grow((void **)&b->v, &b->n, &b->cap, sizeof *b->v) < 0)
        return FC_ENOMEM;
    b->v[b->n++] = (cpost){.me = b->me, .peer = peer, .op = (uint32_t)b->pg->nops, .ord = b->ord++, .send = send};
    return add_op(b, &op);
}

static int cb_wait(void *ctx)
{
    cbuild *b = ctx;
    fc__rprog *pg = b->pg;
    fc__rop w = {.kind = FC__ROP_WAIT, .flags = FC__ROPF_COLL, .first = (uint32_t)pg->nwaits, .msg = FC__NOMSG};
    size_t upto = pg->nops;
    if (add_op(b, &w) < 0)
        return FC_ENOMEM;
    for (size_t i = b->first; i < upto; i++) {
        if (pg->ops[i].kind == FC__ROP_WAIT)
            continue;
        if (fc__grow((void **)&pg->waits, &pg->nwaits, &b->wcap, sizeof *pg->waits) < 0)
            return FC_ENOMEM;
        pg->waits[pg->nwaits++] = (uint32_t)i;
        pg->ops[pg->nops - 1].n++;
    }
    b->first = pg->nops;
    return 0;
}

static int cmp_cpost(const void *x, const void *y)
{
    const cpost *a = x, *b = y;
    if (a->send != b->send)
        return a->send ? -1 : 1;
    uint32_t as = a->send ? a->me : a->peer, ad = a->send ? a->peer : a->me;
    uint32_t bs = b->send ? b->me : b->peer, bd = b->send ? b->peer : b->me;
    if (as != bs)
        return as < bs ? -1 : 1;
    if (ad != bd)
        return ad < bd ? -1 : 1;
    return (a->ord > b->ord) - (a->ord < b->ord);
}

static void replay_clear(fc__replay *rp)
{
    for (uint32_t r = 0; r < rp->nranks; r++) {
        free(rp->prog[r].ops);
        free(rp->prog[r].waits);
    }
    free(rp->prog);
    free(rp->msgs);
    memset(rp, 0, sizeof *rp);
}

/* The replay of call cl alone, its members numbered 0 .. nmem-1 (member index order), mnode[j] the
 * node MPICH took member j to be on, which its algorithm follows, as the analysis expanded it
 * (calls.h; the trace's nodes, where the replay places the members, may differ: ranks that share
 * a host name are one node to MPICH whatever the trace calls their nodes). */
static int build_call(const fc__colls *c, const fc__coll_call *cl, const uint32_t *mnode, fc__replay *rp, cbuild *b,
                      double *t0)
{
    const fc__coll_member *mem = c->members + cl->first;
    size_t mcap = 0;
    memset(rp, 0, sizeof *rp);
    if ((rp->prog = calloc(cl->nmem ? cl->nmem : 1, sizeof *rp->prog)) == NULL)
        return FC_ENOMEM;
    rp->nranks = (uint32_t)cl->nmem;
    *t0 = INFINITY;
    for (size_t j = 0; j < cl->nmem; j++)
        *t0 = fmin(*t0, mem[j].enter);
    b->n = 0;
    fc__coll_nodes nd;
    if (fc__coll_nodes_build(cl->p, mnode, &nd) < 0)
        return FC_ENOMEM;
    for (size_t j = 0; j < cl->nmem; j++) {
        fc__coll_sink sink = {.post = cb_post, .wait = cb_wait, .ctx = b};
        b->pg = &rp->prog[j];
        b->opcap = b->wcap = b->first = 0;
        b->me = (uint32_t)j;
        b->ord = 0;
        /* Members are all present (cl->nmem == cl->p), so member index j is replay rank j. */
        fc__coll_layout lay = {.node = mnode, .nodes = &nd, .settings = &c->settings, .to = mem[j].to, .from = mem[j].from,
                              .inter = cl->inter, .nbrs = mem[j].nbrs, .received = mem[j].bytes2, .op = cl->op,
                              .irregular = cl->irregular};
        int rc = fc__coll_expand_in(cl->kind, cl->alg, cl->p, mem[j].me, cl->root, cl->n, mem[j].bytes, &lay, &sink);
        if (rc < 0) {
            fc__coll_nodes_free(&nd);
            return rc;
        }
        rp->prog[j].start = mem[j].enter - *t0;
        rp->prog[j].obs_end = mem[j].exit - *t0;
    }
    fc__coll_nodes_free(&nd);
    if (b->n)
        qsort(b->v, b->n, sizeof *b->v, cmp_cpost);
    size_t ns = 0;
    while (ns < b->n && b->v[ns].send)
        ns++;
    for (size_t a = 0, q = ns; a < ns && q < b->n;) {
        const cpost *s = &b->v[a], *r = &b->v[q];
        int d = s->me != r->peer ? (s->me < r->peer ? -1 : 1) : s->peer != r->me ? (s->peer < r->me ? -1 : 1) : 0;
        if (d < 0) {
            a++;
            continue;
        }
        if (d > 0) {
            q++;
            continue;
        }
        if (fc__grow((void **)&rp->msgs, &rp->nmsgs, &mcap, sizeof *rp->msgs) < 0)
            return FC_ENOMEM;
        fc__rop *so = &rp->prog[s->me].ops[s->op], *ro = &rp->prog[r->me].ops[r->op];
        rp->msgs[rp->nmsgs] = (fc__rmsg){.src = s->me, .dst = r->me, .send_op = s->op, .recv_op = r->op,
                                         .bytes = so->bytes};
        so->msg = ro->msg = (uint32_t)rp->nmsgs++;
        a++;
        q++;
    }
    return 0;
}

void fc__coll_pred_free(fc__coll_pred *cp)
{
    if (cp == NULL)
        return;
    free(cp->obs);
    for (unsigned j = 0; j < FC_NMODELS; j++)
        free(cp->pred[j]);
    free(cp);
}

int fc__coll_predict(const fc__colls *c, const fc__match *m, const fc__prediction *p, fc__coll_pred **out)
{
    int rc = FC_ENOMEM;
    cbuild b;
    fc__replay rp;
    uint32_t *node = NULL, *mnode = NULL;
    double *o = NULL, *q = NULL;
    memset(&b, 0, sizeof b);
    memset(&rp, 0, sizeof rp);
    fc__coll_pred *cp = calloc(1, sizeof *cp);
    *out = NULL;
    if (cp == NULL)
        return FC_ENOMEM;
    size_t n = c->ncalls ? c->ncalls : 1;
    cp->ncalls = c->ncalls;
    cp->nmodels = p->nmodels;
    memcpy(cp->model, p->model, sizeof cp->model);
    if ((cp->obs = malloc(n * sizeof *cp->obs)) == NULL || (node = malloc((c->world + 1) * sizeof *node)) == NULL ||
        (mnode = malloc((c->world + 1) * sizeof *mnode)) == NULL ||
        (o = malloc(n * sizeof *o)) == NULL || (q = malloc(n * sizeof *q)) == NULL)
        goto out;
    for (unsigned j = 0; j < p->nmodels; j++)
        if ((cp->pred[j] = malloc(n * sizeof *cp->pred[j])) == NULL)
            goto out;
    for (size_t i = 0; i < c->ncalls; i++) {
        const fc__coll_call *cl = &c->calls[i];
        const fc__coll_member *mem = c->members + cl->first;
        cp->obs[i] = NAN;
        for (unsigned j = 0; j < p->nmodels; j++)
            cp->pred[j][i] = NAN;
        if (cl->nmem != cl->p || cl->dropped || cl->nflows == 0)
            continue;
        double t0, last = -INFINITY;
        for (size_t k = 0; k < cl->nmem; k++) {
            node[k] = m->rank_node[mem[k].rank];
            mnode[k] = c->mpich_node != NULL ? c->mpich_node[cl->ranks[k]] : node[k];
            last = fmax(last, mem[k].exit);
        }
        if ((rc = build_call(c, cl, mnode, &rp, &b, &t0)) < 0)
            goto out;
        cp->obs[i] = last - t0;
        for (unsigned j = 0; j < p->nmodels; j++) {
            fc__replay_opts ro = {.profile = p->profile, .model = p->model[j], .eager = m->eager_threshold};
            fc__replay_result res;
            if ((rc = fc__replay_run(&rp, node, (uint32_t)m->nnodes, &ro, &res)) < 0)
                goto out;
            cp->pred[j][i] = res.time;
            fc__replay_result_clear(&res);
        }
        replay_clear(&rp);
        cp->npredicted++;
    }
    /* The statistics over the calls predicted, named by their indices. */
    uint64_t *ids = malloc(n * sizeof *ids);
    if (ids == NULL)
        goto out;
    for (unsigned j = 0; j < p->nmodels; j++) {
        size_t k = 0;
        for (size_t i = 0; i < c->ncalls; i++)
            if (!isnan(cp->obs[i]) && cp->obs[i] > 0) {
                o[k] = cp->obs[i];
                q[k] = cp->pred[j][i];
                ids[k++] = i;
            }
        fc__errors_compute(o, q, ids, k, &cp->err[j]);
    }
    free(ids);
    *out = cp;
    cp = NULL;
    rc = 0;
out:
    replay_clear(&rp);
    fc__coll_pred_free(cp);
    free(b.v);
    free(node);
    free(mnode);
    free(o);
    free(q);
    return rc;
}
