/* analyzer/intervals.c: sweeps the sorted flow boundaries into synchronous homogeneous intervals
 * and relabels, at each boundary, only the components of the node graph that changed (the rules
 * and the cost are written down in intervals.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "internal.h"
#include "intervals.h"

#define NIL SIZE_MAX

/* One conflict while building: flows are an offset into the id pool, which still moves. */
typedef struct rawconf {
    uint32_t kind, node, k;
    size_t off;
} rawconf;

/* A label run while building, tagged with its flow so that the runs can be grouped per flow. */
typedef struct rawrun {
    size_t f;
    fc__label_run r;
} rawrun;

typedef struct event {
    double t;
    size_t f;
    int start; /* 0 for an end: ends sort first, which only fixes an order */
} event;

typedef struct idpos {
    uint64_t id;
    size_t pos;
} idpos;

struct fc__intervals {
    fc_interval *iv;
    size_t niv;
    uint64_t *ids; /* the flows of every interval, end to end */
    fc_label *labels;
    fc__conflict *conf;
    size_t *conf_first; /* conflicts of interval i: conf[conf_first[i] .. conf_first[i + 1]) */
    uint64_t *conf_ids;
    uint64_t *flow_ids; /* every flow given to build, ascending: index = flow rank */
    size_t nflows;
    size_t *run_first; /* runs of flow rank r: runs[run_first[r] .. run_first[r + 1]) */
    fc__label_run *runs;
    double *time; /* flow-seconds by label: time[kind * kslots + k] */
    size_t kslots;
    uint32_t max_k;
};

/* Everything the sweep needs; flows are numbered by rank of id, nodes by rank of node number. */
typedef struct sweep {
    size_t nnodes;
    uint32_t *src, *dst, *node_num;
    size_t *out, *out_base, *out_n, *in, *in_base, *in_n; /* active flows leaving/entering */
    size_t *pos_out, *pos_in, *seen, *run, *cur, *tmp, *started, *queue, *comp;
    size_t *nmark, *omark, *imark;
    uint8_t *active, *rem;
    fc_label *lab;
    size_t ncur, stamp;
    /* Growing outputs. */
    fc_interval *iv;
    size_t niv, civ, *iv_off, civ_off;
    uint64_t *ids;
    fc_label *labels;
    size_t nids, cids, clabels;
    rawconf *conf;
    size_t nconf, cconf, *conf_first, cconf_first;
    uint64_t *conf_ids;
    size_t nconf_ids, cconf_ids;
    rawrun *runs;
    size_t nruns, cruns;
} sweep;

/* Makes room for need elements of size sz in *p (capacity *cap). Returns 0 or FC_ENOMEM. */
static int reserve(void *p, size_t *cap, size_t need, size_t sz)
{
    void **v = p;
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need)
        ncap *= 2;
    void *q = realloc(*v, ncap * sz);
    if (q == NULL)
        return FC_ENOMEM;
    *v = q;
    *cap = ncap;
    return 0;
}

/* Shrinks *p to n elements of size sz, keeping it as it is if realloc fails or n is 0. */
static void shrink(void *p, size_t n, size_t sz)
{
    void **v = p;
    void *q = n ? realloc(*v, n * sz) : NULL;
    if (q != NULL)
        *v = q;
}

static int cmp_idpos(const void *a, const void *b)
{
    uint64_t x = ((const idpos *)a)->id, y = ((const idpos *)b)->id;
    return (x > y) - (x < y);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_event(const void *a, const void *b)
{
    const event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->start != y->start)
        return x->start - y->start;
    return (x->f > y->f) - (x->f < y->f);
}

static int cmp_conf(const void *a, const void *b)
{
    const rawconf *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

static void attach(sweep *s, size_t f)
{
    uint32_t x = s->src[f], y = s->dst[f];
    s->pos_out[f] = s->out_n[x];
    s->out[s->out_base[x] + s->out_n[x]++] = f;
    s->pos_in[f] = s->in_n[y];
    s->in[s->in_base[y] + s->in_n[y]++] = f;
}

/* Removes f from its nodes' lists by moving the last entry into its place. */
static void detach(sweep *s, size_t f)
{
    uint32_t x = s->src[f], y = s->dst[f];
    size_t last = s->out[s->out_base[x] + --s->out_n[x]];
    s->out[s->out_base[x] + s->pos_out[f]] = last;
    s->pos_out[last] = s->pos_out[f];
    last = s->in[s->in_base[y] + --s->in_n[y]];
    s->in[s->in_base[y] + s->pos_in[f]] = last;
    s->pos_in[last] = s->pos_in[f];
}

/* The flow that continues g's path of unconsumed flows at g's destination, or NIL. */
static size_t next_rem(const sweep *s, size_t g)
{
    uint32_t x = s->dst[g];
    if (s->out_n[x] != 1)
        return NIL;
    size_t h = s->out[s->out_base[x]];
    return s->rem[h] ? h : NIL;
}

static size_t prev_rem(const sweep *s, size_t g)
{
    uint32_t x = s->src[g];
    if (s->in_n[x] != 1)
        return NIL;
    size_t h = s->in[s->in_base[x]];
    return s->rem[h] ? h : NIL;
}

static void pair(sweep *s, size_t g, size_t h)
{
    uint32_t x = s->node_num[s->dst[g]];
    s->lab[g] = (fc_label){FC_CONFLICT_MIXED_IN, x, 2};
    s->lab[h] = (fc_label){FC_CONFLICT_MIXED_OUT, x, 2};
    s->seen[g] = s->seen[h] = s->stamp;
}

/* Collects in comp the active flows of the components holding the seed nodes queue[0..nseed). */
static size_t collect(sweep *s, size_t nseed)
{
    size_t nq = 0, ncomp = 0;
    for (size_t i = 0; i < nseed; i++) {
        size_t x = s->queue[i];
        if (s->nmark[x] != s->stamp) {
            s->nmark[x] = s->stamp;
            s->queue[nq++] = x;
        }
    }
    for (size_t qi = 0; qi < nq; qi++) {
        size_t x = s->queue[qi];
        for (size_t i = 0; i < s->out_n[x]; i++) {
            size_t f = s->out[s->out_base[x] + i];
            s->comp[ncomp++] = f; /* each flow once: from its source */
            if (s->nmark[s->dst[f]] != s->stamp) {
                s->nmark[s->dst[f]] = s->stamp;
                s->queue[nq++] = s->dst[f];
            }
        }
        for (size_t i = 0; i < s->in_n[x]; i++) {
            size_t f = s->in[s->in_base[x] + i];
            if (s->nmark[s->src[f]] != s->stamp) {
                s->nmark[s->src[f]] = s->stamp;
                s->queue[nq++] = s->src[f];
            }
        }
    }
    return ncomp;
}

/* Labels the flows comp[0..ncomp), a union of whole components, by the rules of intervals.h. */
static void label(sweep *s, size_t ncomp)
{
    for (size_t i = 0; i < ncomp; i++) {
        size_t f = s->comp[i];
        size_t od = s->out_n[s->src[f]], id = s->in_n[s->dst[f]];
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
    /* What is left unseen lies on cycles: pair each from its smallest flow (rank = id order). */
    for (size_t i = 0; i < ncomp; i++) {
        size_t f = s->comp[i];
        if (!s->rem[f] || s->seen[f] == s->stamp)
            continue;
        size_t mn = f;
        for (size_t g = next_rem(s, f); g != f; g = next_rem(s, g))
            if (g < mn)
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
}

static int add_conf(sweep *s, uint32_t kind, size_t x, size_t k, const size_t *fl)
{
    int rc = reserve(&s->conf, &s->cconf, s->nconf + 1, sizeof *s->conf);
    if (rc == 0)
        rc = reserve(&s->conf_ids, &s->cconf_ids, s->nconf_ids + k, sizeof *s->conf_ids);
    if (rc)
        return rc;
    s->conf[s->nconf++] = (rawconf){kind, s->node_num[x], (uint32_t)k, s->nconf_ids};
    for (size_t i = 0; i < k; i++)
        s->conf_ids[s->nconf_ids + i] = fl[i]; /* ranks, turned into ids at the end */
    if (kind != FC_CONFLICT_MIXED_IN)
        fc__sort(s->conf_ids + s->nconf_ids, k, sizeof *s->conf_ids, cmp_u64);
    s->nconf_ids += k;
    return 0;
}

/* Stores the interval [t, next) holding the flows cur[0..ncur), with their conflicts and times. */
static int emit(sweep *s, double t, double next, double *time, size_t kslots)
{
    size_t i = s->niv;
    int rc = reserve(&s->iv, &s->civ, i + 1, sizeof *s->iv);
    if (rc == 0)
        rc = reserve(&s->iv_off, &s->civ_off, i + 2, sizeof *s->iv_off);
    if (rc == 0)
        rc = reserve(&s->conf_first, &s->cconf_first, i + 2, sizeof *s->conf_first);
    if (rc == 0)
        rc = reserve(&s->ids, &s->cids, s->nids + s->ncur, sizeof *s->ids);
    if (rc == 0)
        rc = reserve(&s->labels, &s->clabels, s->nids + s->ncur, sizeof *s->labels);
    if (rc)
        return rc;
    s->iv[i] = (fc_interval){.start = t, .end = next, .nflows = s->ncur};
    s->iv_off[i] = s->nids;
    s->conf_first[i] = s->nconf;
    for (size_t j = 0; j < s->ncur; j++) {
        size_t f = s->cur[j];
        s->ids[s->nids + j] = f; /* a rank, turned into an id at the end */
        s->labels[s->nids + j] = s->lab[f];
        time[s->lab[f].kind * kslots + s->lab[f].k] += next - t;
        uint32_t x = s->src[f], y = s->dst[f];
        if (s->out_n[x] >= 2 && s->omark[x] != i + 1) {
            s->omark[x] = i + 1;
            rc = add_conf(s, FC_CONFLICT_OUTGOING, x, s->out_n[x], s->out + s->out_base[x]);
        }
        if (rc == 0 && s->in_n[y] >= 2 && s->imark[y] != i + 1) {
            s->imark[y] = i + 1;
            rc = add_conf(s, FC_CONFLICT_INCOMING, y, s->in_n[y], s->in + s->in_base[y]);
        }
        if (rc == 0 && s->lab[f].kind == FC_CONFLICT_MIXED_IN) {
            size_t both[2] = {f, s->out[s->out_base[y]]};
            rc = add_conf(s, FC_CONFLICT_MIXED_IN, y, 2, both);
        }
        if (rc)
            return rc;
    }
    if (s->nconf > s->conf_first[i]) /* s->conf is still NULL before the first conflict */
        fc__sort(s->conf + s->conf_first[i], s->nconf - s->conf_first[i], sizeof *s->conf, cmp_conf);
    s->nids += s->ncur;
    s->niv++;
    return 0;
}

/* Keeps the label runs of the relabelled flows comp[0..ncomp) for the interval about to be
 * emitted at t. */
static int update_runs(sweep *s, size_t ncomp, double t)
{
    for (size_t i = 0; i < ncomp; i++) {
        size_t f = s->comp[i];
        if (s->run[f] != NIL) {
            fc__label_run *r = &s->runs[s->run[f]].r;
            if (memcmp(&r->label, &s->lab[f], sizeof r->label) == 0)
                continue;
            r->count = s->niv - r->first;
            r->end = t;
        }
        int rc = reserve(&s->runs, &s->cruns, s->nruns + 1, sizeof *s->runs);
        if (rc)
            return rc;
        s->run[f] = s->nruns;
        s->runs[s->nruns++] = (rawrun){f, {.first = s->niv, .start = t, .label = s->lab[f]}};
    }
    return 0;
}

/* Applies the boundaries ev[0..nev) in time order, storing the intervals in s. */
static int run_sweep(sweep *s, const event *ev, size_t nev, double *time, size_t kslots)
{
    for (size_t i = 0, j; i < nev; i = j) {
        double t = ev[i].t;
        size_t nseed = 0, nstarted = 0;
        s->stamp++;
        for (j = i; j < nev && ev[j].t == t; j++) {
            size_t f = ev[j].f;
            if (ev[j].start) {
                attach(s, f);
                s->active[f] = 1;
                s->started[nstarted++] = f;
            } else {
                detach(s, f);
                s->active[f] = 0;
                fc__label_run *r = &s->runs[s->run[f]].r;
                r->count = s->niv - r->first;
                r->end = t;
                s->run[f] = NIL;
            }
            s->queue[nseed++] = s->src[f];
            s->queue[nseed++] = s->dst[f];
        }
        /* The active set, ascending: the survivors merged with the starters (sorted by rank). */
        size_t n = 0, a = 0, b = 0;
        while (a < s->ncur || b < nstarted) {
            if (a < s->ncur && !s->active[s->cur[a]])
                a++;
            else if (b == nstarted || (a < s->ncur && s->cur[a] < s->started[b]))
                s->tmp[n++] = s->cur[a++];
            else
                s->tmp[n++] = s->started[b++];
        }
        size_t *swap = s->cur;
        s->cur = s->tmp;
        s->tmp = swap;
        s->ncur = n;
        size_t ncomp = collect(s, nseed);
        label(s, ncomp);
        if (n == 0)
            continue; /* an idle gap: every flow has ended, so nothing is relabelled either */
        int rc = update_runs(s, ncomp, t);
        if (rc == 0)
            rc = emit(s, t, ev[j].t, time, kslots); /* j < nev: the active flows end later */
        if (rc)
            return rc;
    }
    return 0;
}

static void sweep_free(sweep *s)
{
    void *all[] = {s->src,      s->dst,     s->node_num, s->out,     s->out_base, s->out_n,
                   s->in,       s->in_base, s->in_n,     s->pos_out, s->pos_in,   s->seen,
                   s->run,      s->cur,     s->tmp,      s->started, s->queue,    s->comp,
                   s->nmark,    s->omark,   s->imark,    s->active,  s->rem,      s->lab,
                   s->iv,       s->iv_off,  s->ids,      s->labels,  s->conf,     s->conf_first,
                   s->conf_ids, s->runs};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

/* Sorts the flows by id into r (ranks), numbers their nodes densely, and checks them. Fills
 * iv->flow_ids and, per rank, s->src/dst; live[r] says whether flow r is ever active. */
static int prepare(const fc_flow *flows, size_t n, fc__intervals *iv, sweep *s, uint8_t *live,
                   size_t *rank_pos)
{
    idpos *ip = malloc((n ? n : 1) * sizeof *ip);
    uint32_t *nodes = malloc((2 * n + 1) * sizeof *nodes);
    int rc = FC_ENOMEM;
    if (ip == NULL || nodes == NULL)
        goto out;
    for (size_t i = 0; i < n; i++)
        ip[i] = (idpos){flows[i].id, i};
    fc__sort(ip, n, sizeof *ip, cmp_idpos);
    size_t nn = 0;
    for (size_t r = 0; r < n; r++) {
        const fc_flow *f = &flows[ip[r].pos];
        rc = FC_EINVAL;
        if (r > 0 && ip[r].id == ip[r - 1].id) {
            fc__err(rc, "flows: two flows have id %llu", (unsigned long long)f->id);
            goto out;
        }
        if (!f->intra && (!isfinite(f->start) || !isfinite(f->end))) {
            fc__err(rc, "flows: flow %llu: bad times [%g, %g)", (unsigned long long)f->id, f->start,
                    f->end);
            goto out;
        }
        iv->flow_ids[r] = ip[r].id;
        rank_pos[r] = ip[r].pos;
        live[r] = !f->intra && f->src_node != f->dst_node && f->end > f->start;
        if (live[r]) {
            nodes[nn++] = f->src_node;
            nodes[nn++] = f->dst_node;
        }
    }
    fc__sort(nodes, nn, sizeof *nodes, cmp_u32);
    size_t nu = 0;
    for (size_t i = 0; i < nn; i++)
        if (nu == 0 || nodes[i] != nodes[nu - 1])
            nodes[nu++] = nodes[i];
    for (size_t r = 0; r < n; r++) {
        if (!live[r])
            continue;
        const fc_flow *f = &flows[rank_pos[r]];
        const uint32_t *x = bsearch(&f->src_node, nodes, nu, sizeof *nodes, cmp_u32);
        const uint32_t *y = bsearch(&f->dst_node, nodes, nu, sizeof *nodes, cmp_u32);
        s->src[r] = (uint32_t)(x - nodes);
        s->dst[r] = (uint32_t)(y - nodes);
    }
    s->node_num = nodes;
    nodes = NULL;
    s->nnodes = nu;
    rc = 0;
out:
    free(ip);
    free(nodes);
    return rc;
}

/* Moves the sweep's outputs into iv, turning ranks into ids and offsets into pointers. */
static int finish(sweep *s, fc__intervals *iv)
{
    size_t nf = iv->nflows;
    iv->conf = malloc((s->nconf ? s->nconf : 1) * sizeof *iv->conf);
    iv->run_first = calloc(nf + 1, sizeof *iv->run_first);
    iv->runs = malloc((s->nruns ? s->nruns : 1) * sizeof *iv->runs);
    if (iv->conf == NULL || iv->run_first == NULL || iv->runs == NULL)
        return FC_ENOMEM;
    for (size_t i = 0; i < s->nids; i++)
        s->ids[i] = iv->flow_ids[s->ids[i]];
    for (size_t i = 0; i < s->nconf_ids; i++)
        s->conf_ids[i] = iv->flow_ids[s->conf_ids[i]];
    /* The pools grew by doubling: give back the slack, which can be most of the memory. */
    shrink(&s->ids, s->nids, sizeof *s->ids);
    shrink(&s->labels, s->nids, sizeof *s->labels);
    shrink(&s->conf_ids, s->nconf_ids, sizeof *s->conf_ids);
    iv->niv = s->niv;
    iv->iv = s->iv, s->iv = NULL;
    iv->ids = s->ids, s->ids = NULL;
    iv->labels = s->labels, s->labels = NULL;
    iv->conf_ids = s->conf_ids, s->conf_ids = NULL;
    iv->conf_first = s->conf_first, s->conf_first = NULL;
    if (iv->niv > 0)
        iv->conf_first[iv->niv] = s->nconf;
    for (size_t i = 0; i < iv->niv; i++) {
        iv->iv[i].flows = iv->ids + s->iv_off[i];
        iv->iv[i].labels = iv->labels + s->iv_off[i];
    }
    for (size_t i = 0; i < s->nconf; i++) {
        const rawconf *c = &s->conf[i];
        iv->conf[i] = (fc__conflict){c->kind, c->node, c->k, iv->conf_ids + c->off};
    }
    /* Group the runs per flow, keeping their time order (a counting sort). */
    for (size_t i = 0; i < s->nruns; i++)
        iv->run_first[s->runs[i].f + 1]++;
    for (size_t r = 0; r < nf; r++)
        iv->run_first[r + 1] += iv->run_first[r];
    size_t *fill = s->tmp; /* free now, and at least nf long */
    memcpy(fill, iv->run_first, nf * sizeof *fill);
    for (size_t i = 0; i < s->nruns; i++)
        iv->runs[fill[s->runs[i].f]++] = s->runs[i].r;
    return 0;
}

int fc__intervals_build(const fc_flow *flows, size_t n, fc__intervals **out)
{
    sweep s = {0};
    event *ev = NULL;
    uint8_t *live = NULL;
    size_t *rank_pos = NULL;
    int rc = FC_EINVAL;
    *out = NULL;
    if (flows == NULL && n > 0)
        return fc__err(rc, "flows: NULL array of %zu flows", n);
    rc = FC_ENOMEM;
    fc__intervals *iv = calloc(1, sizeof *iv);
    size_t n1 = n ? n : 1;
    if (iv == NULL)
        goto out;
    iv->nflows = n;
    iv->flow_ids = malloc(n1 * sizeof *iv->flow_ids);
    live = malloc(n1);
    rank_pos = malloc(n1 * sizeof *rank_pos);
    s.src = malloc(n1 * sizeof *s.src);
    s.dst = malloc(n1 * sizeof *s.dst);
    if (iv->flow_ids == NULL || live == NULL || rank_pos == NULL || s.src == NULL || !s.dst)
        goto out;
    rc = prepare(flows, n, iv, &s, live, rank_pos);
    if (rc)
        goto out;
    rc = FC_ENOMEM;
    size_t nn = s.nnodes + 1, nev = 0;
    iv->kslots = n + 2; /* k never exceeds the number of flows */
    iv->time = calloc(5 * iv->kslots, sizeof *iv->time);
    ev = malloc(2 * n1 * sizeof *ev);
    s.out_base = calloc(nn, sizeof *s.out_base);
    s.in_base = calloc(nn, sizeof *s.in_base);
    s.out_n = calloc(nn, sizeof *s.out_n);
    s.in_n = calloc(nn, sizeof *s.in_n);
    s.nmark = calloc(nn, sizeof *s.nmark);
    s.omark = calloc(nn, sizeof *s.omark);
    s.imark = calloc(nn, sizeof *s.imark);
    s.queue = malloc((4 * n1 + nn) * sizeof *s.queue);
    size_t *per_flow[] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t **arrays[] = {&s.out, &s.in,  &s.pos_out, &s.pos_in,  &s.seen,
                         &s.run, &s.cur, &s.tmp,     &s.started, &s.comp};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        *arrays[i] = per_flow[i] = calloc(n1, sizeof(size_t));
    s.active = calloc(n1, 1);
    s.rem = calloc(n1, 1);
    s.lab = calloc(n1, sizeof *s.lab);
    if (!iv->time || !ev || !s.out_base || !s.in_base || !s.out_n || !s.in_n || !s.nmark ||
        !s.omark || !s.imark || !s.queue || !s.active || !s.rem || !s.lab)
        goto out;
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (per_flow[i] == NULL)
            goto out;
    /* Each node's list holds at most the flows with that end: lay the lists out once. */
    for (size_t r = 0; r < n; r++) {
        s.run[r] = NIL;
        if (!live[r])
            continue;
        const fc_flow *f = &flows[rank_pos[r]];
        s.out_base[s.src[r] + 1]++;
        s.in_base[s.dst[r] + 1]++;
        ev[nev++] = (event){f->start, r, 1};
        ev[nev++] = (event){f->end, r, 0};
    }
    for (size_t x = 1; x < nn; x++) {
        s.out_base[x] += s.out_base[x - 1];
        s.in_base[x] += s.in_base[x - 1];
    }
    fc__sort(ev, nev, sizeof *ev, cmp_event);
    rc = run_sweep(&s, ev, nev, iv->time, iv->kslots);
    if (rc == 0)
        rc = finish(&s, iv);
    if (rc)
        goto out;
    for (size_t i = 0; i < s.nruns; i++)
        if (s.runs[i].r.label.k > iv->max_k)
            iv->max_k = s.runs[i].r.label.k;
    *out = iv;
    iv = NULL;
out:
    if (rc == FC_ENOMEM)
        fc__err(rc, "flows: out of memory splitting %zu flows into intervals", n);
    sweep_free(&s);
    free(ev);
    free(live);
    free(rank_pos);
    fc__intervals_free(iv);
    return rc;
}

/* The node index of node number x in the sorted, unique nodes[0..n). */
static size_t node_index(const uint32_t *nodes, size_t n, uint32_t x)
{
    const uint32_t *p = bsearch(&x, nodes, n, sizeof *nodes, cmp_u32);
    return (size_t)(p - nodes);
}

int fc__intervals_label_set(const uint32_t *src, const uint32_t *dst, size_t n, fc_label *out)
{
    if (n == 0)
        return 0;
    if (src == NULL || dst == NULL || out == NULL)
        return fc__err(FC_EINVAL, "flows: NULL arrays for %zu flows", n);
    /* The rules of intervals.h applied directly, without the sweep: a simulation calls this at
     * every change of its active set, so it must cost O(n log n), not a whole build. */
    uint32_t *nodes = malloc(2 * n * sizeof *nodes);
    size_t *s = malloc(2 * n * sizeof *s), *d = s ? s + n : NULL;
    size_t *cnt = calloc(4 * 2 * n, sizeof *cnt);
    uint8_t *rem = calloc(n, 2);
    int rc = FC_ENOMEM;
    if (nodes == NULL || s == NULL || cnt == NULL || rem == NULL)
        goto out;
    uint8_t *seen = rem + n;
    /* Node numbers index a trace's node list, so they are usually small: when the largest fits
     * the per-node arrays (2n entries), it indexes them directly; else they are sorted and
     * searched. */
    uint32_t maxn = 0;
    for (size_t i = 0; i < n; i++) {
        maxn = src[i] > maxn ? src[i] : maxn;
        maxn = dst[i] > maxn ? dst[i] : maxn;
    }
    int direct = (size_t)maxn < 2 * n;
    size_t nu = 2 * n;
    if (!direct) {
        size_t nn = 0;
        for (size_t i = 0; i < n; i++) {
            nodes[nn++] = src[i];
            nodes[nn++] = dst[i];
        }
        fc__sort(nodes, nn, sizeof *nodes, cmp_u32);
        nu = 0;
        for (size_t i = 0; i < nn; i++)
            if (nu == 0 || nodes[i] != nodes[nu - 1])
                nodes[nu++] = nodes[i];
    }
    /* Per node: flows leaving, flows entering, and the last of each (the only one when 1). */
    size_t *out_n = cnt, *in_n = cnt + nu, *one_out = cnt + 2 * nu, *one_in = cnt + 3 * nu;
    for (size_t i = 0; i < n; i++) {
        s[i] = direct ? src[i] : node_index(nodes, nu, src[i]);
        d[i] = direct ? dst[i] : node_index(nodes, nu, dst[i]);
        if (s[i] == d[i])
            continue;
        out_n[s[i]]++;
        one_out[s[i]] = i;
        in_n[d[i]]++;
        one_in[d[i]] = i;
    }
    for (size_t i = 0; i < n; i++) {
        size_t od = out_n[s[i]], id = in_n[d[i]];
        if (s[i] == d[i])
            out[i] = (fc_label){FC_CONFLICT_NONE, 0, 1};
        else if (od >= 2 && od >= id)
            out[i] = (fc_label){FC_CONFLICT_OUTGOING, src[i], (uint32_t)od};
        else if (id >= 2)
            out[i] = (fc_label){FC_CONFLICT_INCOMING, dst[i], (uint32_t)id};
        else {
            out[i] = (fc_label){FC_CONFLICT_NONE, 0, 1};
            rem[i] = 1;
        }
    }
    /* What is left forms disjoint paths and cycles: a flow left over is the only one leaving its
     * source and the only one entering its destination. Pair each path from its origin. */
#define NEXT(g) (out_n[d[g]] == 1 && rem[one_out[d[g]]] ? one_out[d[g]] : NIL)
#define PREV(g) (in_n[s[g]] == 1 && rem[one_in[s[g]]] ? one_in[s[g]] : NIL)
    for (size_t i = 0; i < n; i++) {
        if (!rem[i] || PREV(i) != NIL)
            continue;
        for (size_t g = i; g != NIL;) {
            seen[g] = 1;
            size_t h = NEXT(g);
            if (h == NIL)
                break;
            out[g] = (fc_label){FC_CONFLICT_MIXED_IN, dst[g], 2};
            out[h] = (fc_label){FC_CONFLICT_MIXED_OUT, dst[g], 2};
            seen[h] = 1;
            g = NEXT(h);
        }
    }
    /* Cycles, each from its smallest flow. */
    for (size_t i = 0; i < n; i++) {
        if (!rem[i] || seen[i])
            continue;
        size_t mn = i;
        for (size_t g = NEXT(i); g != i; g = NEXT(g))
            if (g < mn)
                mn = g;
        size_t g = mn;
        do {
            seen[g] = 1;
            size_t h = NEXT(g);
            if (h == mn)
                break;
            out[g] = (fc_label){FC_CONFLICT_MIXED_IN, dst[g], 2};
            out[h] = (fc_label){FC_CONFLICT_MIXED_OUT, dst[g], 2};
            seen[h] = 1;
            g = NEXT(h);
        } while (g != mn);
    }
#undef NEXT
#undef PREV
    rc = 0;
out:
    if (rc == FC_ENOMEM)
        fc__err(rc, "flows: out of memory labelling %zu flows", n);
    free(nodes);
    free(s);
    free(cnt);
    free(rem);
    return rc;
}

void fc__intervals_free(fc__intervals *iv)
{
    if (iv == NULL)
        return;
    free(iv->iv);
    free(iv->ids);
    free(iv->labels);
    free(iv->conf);
    free(iv->conf_first);
    free(iv->conf_ids);
    free(iv->flow_ids);
    free(iv->run_first);
    free(iv->runs);
    free(iv->time);
    free(iv);
}

size_t fc__intervals_count(const fc__intervals *iv)
{
    return iv->niv;
}

const fc_interval *fc__intervals_get(const fc__intervals *iv, size_t i)
{
    return i < iv->niv ? &iv->iv[i] : NULL;
}

const fc_label *fc__interval_label(const fc_interval *in, uint64_t id)
{
    const uint64_t *p = bsearch(&id, in->flows, in->nflows, sizeof id, cmp_u64);
    return p ? &in->labels[p - in->flows] : NULL;
}

size_t fc__intervals_conflicts(const fc__intervals *iv, size_t i, const fc__conflict **out)
{
    if (i >= iv->niv) {
        *out = NULL;
        return 0;
    }
    *out = iv->conf + iv->conf_first[i];
    return iv->conf_first[i + 1] - iv->conf_first[i];
}

int fc__intervals_history(const fc__intervals *iv, uint64_t id, const fc__label_run **runs,
                          size_t *nruns)
{
    const uint64_t *p = bsearch(&id, iv->flow_ids, iv->nflows, sizeof id, cmp_u64);
    if (p == NULL)
        return fc__err(FC_EINVAL, "flows: no flow has id %llu", (unsigned long long)id);
    size_t r = (size_t)(p - iv->flow_ids);
    *runs = iv->runs + iv->run_first[r];
    *nruns = iv->run_first[r + 1] - iv->run_first[r];
    return 0;
}

double fc__intervals_time(const fc__intervals *iv, uint32_t kind, uint32_t k)
{
    if (kind > FC_CONFLICT_MIXED_OUT || k >= iv->kslots)
        return 0;
    return iv->time[kind * iv->kslots + k];
}

uint32_t fc__intervals_max_k(const fc__intervals *iv)
{
    return iv->max_k;
}
