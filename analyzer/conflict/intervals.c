/* analyzer/conflict/intervals.c: sweeps the sorted flow boundaries into synchronous homogeneous intervals
 * and relabels, at each boundary, only the components of the node graph that changed (the rules
 * and the cost are written down in intervals.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "conflict/intervals.h"
#include "conflict/sweep.h"

#define NIL SIZE_MAX

/* One conflict while building: flows are an offset into the id pool, which still moves. */
typedef struct rawconf {
    uint32_t kind, node, k;
    size_t off;
} rawconf;

typedef struct idpos {
    uint64_t id;
    size_t pos;
} idpos;

/* One active flow of an interval, for sorting by id. */
typedef struct idlab {
    uint64_t id;
    fc__label lab;
} idlab;

struct fc__intervals {
    fc__interval *iv;
    size_t niv;
    uint64_t *ids; /* the flows of every interval, end to end */
    fc__label *labels;
    fc__conflict *conf;
    size_t *conf_first; /* conflicts of interval i: conf[conf_first[i] .. conf_first[i + 1]) */
    uint64_t *conf_ids;
    uint64_t *flow_ids; /* every flow given to build, ascending: index = flow rank */
    size_t nflows;
    /* The runs of flow rank r: runs[run_off[r] .. run_off[r] + run_n[r]). A flow's runs are
     * appended together when it ends, so the pool is written once, in order of end, and not
     * copied to be grouped by flow. */
    size_t *run_off, *run_n;
    fc__label_run *runs;
    double *time; /* flow-seconds by label: time[k * 5 + kind] for k < kslots */
    size_t kslots; /* grown to the largest k seen: k can reach the flows in flight, not more */
    uint32_t max_k;
};

/* What the build keeps of the sweep's deliveries (sweep.h): everything, since fc__intervals
 * answers questions about any interval and any flow, or, when lean, all but each interval's flows,
 * labels and conflicts. */
typedef struct keep {
    fc__intervals *iv;
    int lean;
    size_t civ, *iv_off, civ_off;
    uint64_t *ids;
    fc__label *labels;
    size_t nids, cids, clabels;
    rawconf *conf;
    size_t nconf, cconf, *conf_first, cconf_first;
    uint64_t *conf_ids;
    size_t nconf_ids, cconf_ids;
    size_t nruns, cruns; /* in iv->runs */
    idlab *act;
    size_t cact;
    const fc__sweep_ops *also; /* another consumer of the same sweep, or NULL */
} keep;


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

static int cmp_idlab(const void *a, const void *b)
{
    uint64_t x = ((const idlab *)a)->id, y = ((const idlab *)b)->id;
    return (x > y) - (x < y);
}

static int cmp_conf(const void *a, const void *b)
{
    const rawconf *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

static int idlab_less(const idlab *a, const idlab *b)
{
    return a->id < b->id;
}

static int conf_less(const rawconf *a, const rawconf *b)
{
    return cmp_conf(a, b) < 0;
}

FC__ISORT(sort_idlab, idlab, idlab_less)
FC__ISORT(sort_conf, rawconf, conf_less)

static int keep_conf(void *arg, const fc__conflict *c)
{
    keep *kp = arg;
    if (fc__reserve(&kp->conf, &kp->cconf, kp->nconf + 1, sizeof *kp->conf) ||
        fc__reserve(&kp->conf_ids, &kp->cconf_ids, kp->nconf_ids + c->k, sizeof *kp->conf_ids))
        return FC_ENOMEM;
    kp->conf[kp->nconf++] = (rawconf){c->kind, c->node, c->k, kp->nconf_ids};
    memcpy(kp->conf_ids + kp->nconf_ids, c->flows, c->k * sizeof *c->flows);
    kp->nconf_ids += c->k;
    return 0;
}

/* The rank of flow id among the flows given to build (its place in flow_ids), or NIL. Matched
 * flows are numbered 0, 1, 2 ...: then the id is its own rank, found without a search (the build
 * asks once per flow, self-calibration once per flow and label it fits). */
static size_t flow_rank(const fc__intervals *iv, uint64_t id)
{
    if (id < iv->nflows && iv->flow_ids[id] == id)
        return (size_t)id;
    const uint64_t *p = bsearch(&id, iv->flow_ids, iv->nflows, sizeof id, cmp_u64);
    return p ? (size_t)(p - iv->flow_ids) : NIL;
}

/* Room in iv->time for labels of k up to at least k. Returns 0 or FC_ENOMEM. */
static int time_rows(fc__intervals *iv, size_t k)
{
    size_t rows = 2 * k + 2;
    double *t = realloc(iv->time, rows * 5 * sizeof *t);
    if (t == NULL)
        return FC_ENOMEM;
    memset(t + iv->kslots * 5, 0, (rows - iv->kslots) * 5 * sizeof *t);
    iv->time = t;
    iv->kslots = rows;
    return 0;
}

/* Adds secs to the flow-seconds of label l, growing iv->time to hold its k. Returns 0 or
 * FC_ENOMEM. */
static inline int add_time(fc__intervals *iv, const fc__label *l, double secs)
{
    if (l->k >= iv->kslots && time_rows(iv, l->k))
        return FC_ENOMEM;
    iv->time[(size_t)l->k * 5 + l->kind] += secs;
    return 0;
}

/* A lean build's interval: its span, its number of flows and their time under each label. Each
 * of its flows adds the same length, so the sums do not depend on the order of the active set,
 * and come out as a full build's. */
static int keep_span(keep *kp, const fc__sweep *s, size_t i, double start, double end)
{
    fc__intervals *iv = kp->iv;
    size_t n = fc__sweep_nactive(s);
    if (fc__reserve(&iv->iv, &kp->civ, i + 1, sizeof *iv->iv))
        return FC_ENOMEM;
    iv->iv[i] = (fc__interval){.start = start, .end = end, .nflows = n};
    for (size_t j = 0; j < n; j++)
        if (add_time(iv, fc__sweep_label(s, j), end - start))
            return FC_ENOMEM;
    iv->niv = i + 1;
    return 0;
}

static int keep_interval(void *arg, const fc__sweep *s, size_t i, double start, double end);
static int keep_flow(void *arg, const fc__flow *f, const fc__label_run *runs, size_t nruns);

/* The build's callbacks followed by those of also (build_also), which sees what its own sweep
 * would show it: its filter on k and flows (min_kn, skipped) is applied here, since the build's
 * sweep must hand over every interval. */
static int both_interval(void *arg, const fc__sweep *s, size_t i, double start, double end)
{
    keep *kp = arg;
    const fc__sweep_ops *o = kp->also;
    int rc = keep_interval(kp, s, i, start, end);
    if (rc || o->interval == NULL)
        return rc;
    if (o->min_kn != NULL && fc__sweep_kn(fc__sweep_max_k(s), fc__sweep_nactive(s)) < *o->min_kn) {
        ++*o->skipped;
        return 0;
    }
    return o->interval(o->arg, s, i, start, end);
}

static int both_flow(void *arg, const fc__flow *f, const fc__label_run *runs, size_t nruns)
{
    keep *kp = arg;
    const fc__sweep_ops *o = kp->also;
    int rc = keep_flow(kp, f, runs, nruns);
    return rc || o->flow_done == NULL ? rc : o->flow_done(o->arg, f, runs, nruns);
}

static int keep_interval(void *arg, const fc__sweep *s, size_t i, double start, double end)
{
    keep *kp = arg;
    fc__intervals *iv = kp->iv;
    size_t n = fc__sweep_nactive(s);
    if (kp->lean)
        return keep_span(kp, s, i, start, end);
    if (fc__reserve(&iv->iv, &kp->civ, i + 1, sizeof *iv->iv) || fc__reserve(&kp->iv_off, &kp->civ_off, i + 2, sizeof *kp->iv_off) ||
        fc__reserve(&kp->conf_first, &kp->cconf_first, i + 2, sizeof *kp->conf_first) ||
        fc__reserve(&kp->ids, &kp->cids, kp->nids + n, sizeof *kp->ids) ||
        fc__reserve(&kp->labels, &kp->clabels, kp->nids + n, sizeof *kp->labels) ||
        fc__reserve(&kp->act, &kp->cact, n, sizeof *kp->act))
        return FC_ENOMEM;
    for (size_t j = 0; j < n; j++)
        kp->act[j] = (idlab){fc__sweep_flow(s, j)->id, *fc__sweep_label(s, j)};
    if (n <= FC__ISORT_MAX)
        sort_idlab(kp->act, n);
    else
        fc__sort(kp->act, n, sizeof *kp->act, cmp_idlab);
    iv->iv[i] = (fc__interval){.start = start, .end = end, .nflows = n};
    kp->iv_off[i] = kp->nids;
    kp->conf_first[i] = kp->nconf;
    for (size_t j = 0; j < n; j++) {
        kp->ids[kp->nids + j] = kp->act[j].id;
        kp->labels[kp->nids + j] = kp->act[j].lab;
        if (add_time(iv, &kp->act[j].lab, end - start))
            return FC_ENOMEM;
    }
    kp->nids += n;
    int rc = fc__sweep_conflicts(s, keep_conf, kp);
    if (rc)
        return rc;
    size_t nc = kp->nconf - kp->conf_first[i];
    if (nc > FC__ISORT_MAX)
        fc__sort(kp->conf + kp->conf_first[i], nc, sizeof *kp->conf, cmp_conf);
    else if (nc > 1) /* kp->conf is still NULL before the first conflict */
        sort_conf(kp->conf + kp->conf_first[i], nc);
    iv->niv = i + 1;
    return 0;
}

static int keep_flow(void *arg, const fc__flow *f, const fc__label_run *runs, size_t nruns)
{
    keep *kp = arg;
    fc__intervals *iv = kp->iv;
    size_t r = flow_rank(iv, f->id); /* every flow swept was given to build */
    if (fc__reserve(&iv->runs, &kp->cruns, kp->nruns + nruns, sizeof *iv->runs))
        return FC_ENOMEM;
    iv->run_off[r] = kp->nruns;
    iv->run_n[r] = nruns;
    for (size_t j = 0; j < nruns; j++) {
        iv->runs[kp->nruns++] = runs[j];
        if (runs[j].label.k > iv->max_k)
            iv->max_k = runs[j].label.k;
    }
    return 0;
}

static void keep_free(keep *kp)
{
    void *all[] = {kp->iv_off, kp->ids, kp->labels, kp->conf, kp->conf_first, kp->conf_ids, kp->act};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

/* Moves what was kept into iv, turning offsets into pointers. */
static int finish(keep *kp, fc__intervals *iv)
{
    iv->conf = malloc((kp->nconf ? kp->nconf : 1) * sizeof *iv->conf);
    if (iv->conf == NULL)
        return FC_ENOMEM;
    shrink(&iv->runs, kp->nruns, sizeof *iv->runs);
    /* The pools grew by doubling: give back the slack, which can be most of the memory. A lean
     * build has no pools: its intervals keep NULL flows and labels, and conf_first stays NULL. */
    if (kp->lean)
        shrink(&iv->iv, iv->niv, sizeof *iv->iv);
    shrink(&kp->ids, kp->nids, sizeof *kp->ids);
    shrink(&kp->labels, kp->nids, sizeof *kp->labels);
    shrink(&kp->conf_ids, kp->nconf_ids, sizeof *kp->conf_ids);
    iv->ids = kp->ids, kp->ids = NULL;
    iv->labels = kp->labels, kp->labels = NULL;
    iv->conf_ids = kp->conf_ids, kp->conf_ids = NULL;
    iv->conf_first = kp->conf_first, kp->conf_first = NULL;
    if (iv->niv > 0 && !kp->lean)
        iv->conf_first[iv->niv] = kp->nconf;
    for (size_t i = 0; i < iv->niv && !kp->lean; i++) {
        iv->iv[i].flows = iv->ids + kp->iv_off[i];
        iv->iv[i].labels = iv->labels + kp->iv_off[i];
    }
    for (size_t i = 0; i < kp->nconf; i++) {
        const rawconf *c = &kp->conf[i];
        iv->conf[i] = (fc__conflict){c->kind, c->node, c->k, iv->conf_ids + c->off};
    }
    return 0;
}

static int build(const fc__flow *flows, size_t n, int lean, const fc__sweep_ops *also, fc__intervals **out)
{
    keep kp = {.lean = lean, .also = also};
    idpos *ip = NULL;
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
    iv->run_off = calloc(n1, sizeof *iv->run_off); /* a flow never active has no runs */
    iv->run_n = calloc(n1, sizeof *iv->run_n);
    ip = malloc(n1 * sizeof *ip);
    /* The pool has room for one run from the start, so that a history is never NULL + 0. */
    if (iv->flow_ids == NULL || iv->run_off == NULL || iv->run_n == NULL || ip == NULL ||
        fc__reserve(&iv->runs, &kp.cruns, 1, sizeof *iv->runs))
        goto out;
    size_t in_order = n > 0;
    for (size_t i = 0; i < n; i++) {
        ip[i] = (idpos){flows[i].id, i};
        in_order += i > 0 && ip[i - 1].id < ip[i].id;
    }
    /* A matched trace's flows have ids 0, 1, 2 ... in order already: sorting them again had
     * cost as much as a tenth of the sweep. */
    if (in_order < n)
        fc__sort(ip, n, sizeof *ip, cmp_idpos);
    for (size_t r = 0; r < n; r++) {
        if (r > 0 && ip[r].id == ip[r - 1].id) {
            rc = fc__err(FC_EINVAL, "flows: two flows have id %llu", (unsigned long long)ip[r].id);
            goto out;
        }
        iv->flow_ids[r] = ip[r].id;
    }
    kp.iv = iv;
    fc__sweep_ops ops = {.arg = &kp, .interval = also ? both_interval : keep_interval,
                         .flow_done = also ? both_flow : keep_flow};
    rc = fc__sweep_flows(flows, n, &ops);
    if (rc == 0)
        rc = finish(&kp, iv);
    if (rc)
        goto out;
    *out = iv;
    iv = NULL;
out:
    if (rc == FC_ENOMEM)
        fc__err(rc, "flows: out of memory splitting %zu flows into intervals", n);
    keep_free(&kp);
    free(ip);
    fc__intervals_free(iv);
    return rc;
}

int fc__intervals_build(const fc__flow *flows, size_t n, fc__intervals **out)
{
    return build(flows, n, 0, NULL, out);
}

int fc__intervals_build_lean(const fc__flow *flows, size_t n, fc__intervals **out)
{
    return build(flows, n, 1, NULL, out);
}

int fc__intervals_build_lean_also(const fc__flow *flows, size_t n, const fc__sweep_ops *also, fc__intervals **out)
{
    return build(flows, n, 1, also, out);
}

/* The node index of node number x in the sorted, unique nodes[0..n). */
static size_t node_index(const uint32_t *nodes, size_t n, uint32_t x)
{
    const uint32_t *p = bsearch(&x, nodes, n, sizeof *nodes, cmp_u32);
    return (size_t)(p - nodes);
}

int fc__intervals_label_set(const uint32_t *src, const uint32_t *dst, size_t n, fc__label *out)
{
    fc__label_scratch sc = {0};
    int rc = fc__intervals_label_set_with(src, dst, n, out, &sc);
    fc__label_scratch_free(&sc);
    return rc;
}

void fc__label_scratch_free(fc__label_scratch *sc)
{
    free(sc->p);
    sc->p = NULL;
    sc->cap = 0;
}

/* Node numbers below this are used as indices even for a few flows (a simulation's sets are
 * often a handful of flows among a few dozen nodes), rather than sorted and searched. */
#define DIRECT_NODES 64

int fc__intervals_label_set_with(const uint32_t *src, const uint32_t *dst, size_t n, fc__label *out,
                                 fc__label_scratch *sc)
{
    if (n == 0)
        return 0;
    if (src == NULL || dst == NULL || out == NULL)
        return fc__err(FC_EINVAL, "flows: NULL arrays for %zu flows", n);
    /* The rules of intervals.h applied directly, without the sweep: a simulation calls this at
     * every change of its active set, so it must cost O(n log n), not a whole build. Its arrays
     * come from the caller's scratch, which only grows: four allocations and frees a call, two
     * of them zeroed whole, had cost a simulation as much as the labelling. In it: per node
     * counts (cnt, 4 * m with m = the larger of 2n and DIRECT_NODES; only out_n and in_n need
     * zeroing: one_out and one_in are read only where a count is 1, so written), the flows' dense
     * ends s and d (2n), then the node numbers (2n) and the flags rem and seen (2n bytes,
     * zeroed). */
    if (n > SIZE_MAX / 64)
        return fc__err(FC_ENOMEM, "flows: out of memory labelling %zu flows", n);
    size_t m = 2 * n > DIRECT_NODES ? 2 * n : DIRECT_NODES;
    size_t need = 4 * m * sizeof(size_t) + 2 * n * sizeof(size_t) + 2 * n * sizeof(uint32_t) + 2 * n;
    if (need > sc->cap) {
        void *p = malloc(need);
        if (p == NULL)
            return fc__err(FC_ENOMEM, "flows: out of memory labelling %zu flows", n);
        free(sc->p);
        sc->p = p;
        sc->cap = need;
    }
    size_t *cnt = sc->p, *s = cnt + 4 * m, *d = s + n;
    uint32_t *nodes = (uint32_t *)(d + n);
    uint8_t *rem = (uint8_t *)(nodes + 2 * n), *seen = rem + n;
    memset(rem, 0, 2 * n);
    /* Node numbers index a trace's node list, so they are usually small: when the largest fits
     * the per-node arrays (m entries), it indexes them directly; else they are sorted and
     * searched. The labels do not depend on which: only the counts per node, and the flows'
     * order, decide them. */
    uint32_t maxn = 0;
    for (size_t i = 0; i < n; i++) {
        maxn = src[i] > maxn ? src[i] : maxn;
        maxn = dst[i] > maxn ? dst[i] : maxn;
    }
    int direct = (size_t)maxn < m;
    size_t nu = direct ? (size_t)maxn + 1 : 2 * n;
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
    memset(cnt, 0, 2 * nu * sizeof *cnt);
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
            out[i] = (fc__label){FC_CONFLICT_NONE, 0, 1};
        else if (od >= 2 && od >= id)
            out[i] = (fc__label){FC_CONFLICT_OUTGOING, src[i], (uint32_t)od};
        else if (id >= 2)
            out[i] = (fc__label){FC_CONFLICT_INCOMING, dst[i], (uint32_t)id};
        else {
            out[i] = (fc__label){FC_CONFLICT_NONE, 0, 1};
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
            out[g] = (fc__label){FC_CONFLICT_MIXED_IN, dst[g], 2};
            out[h] = (fc__label){FC_CONFLICT_MIXED_OUT, dst[g], 2};
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
            out[g] = (fc__label){FC_CONFLICT_MIXED_IN, dst[g], 2};
            out[h] = (fc__label){FC_CONFLICT_MIXED_OUT, dst[g], 2};
            seen[h] = 1;
            g = NEXT(h);
        } while (g != mn);
    }
#undef NEXT
#undef PREV
    return 0;
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
    free(iv->run_off);
    free(iv->run_n);
    free(iv->runs);
    free(iv->time);
    free(iv);
}

size_t fc__intervals_count(const fc__intervals *iv)
{
    return iv->niv;
}

const fc__interval *fc__intervals_get(const fc__intervals *iv, size_t i)
{
    return i < iv->niv ? &iv->iv[i] : NULL;
}

const fc__label *fc__interval_label(const fc__interval *in, uint64_t id)
{
    const uint64_t *p = bsearch(&id, in->flows, in->nflows, sizeof id, cmp_u64);
    return p ? &in->labels[p - in->flows] : NULL;
}

size_t fc__intervals_conflicts(const fc__intervals *iv, size_t i, const fc__conflict **out)
{
    if (i >= iv->niv || iv->conf_first == NULL) { /* lean: none kept */
        *out = NULL;
        return 0;
    }
    *out = iv->conf + iv->conf_first[i];
    return iv->conf_first[i + 1] - iv->conf_first[i];
}

int fc__intervals_history(const fc__intervals *iv, uint64_t id, const fc__label_run **runs,
                          size_t *nruns)
{
    size_t r = flow_rank(iv, id);
    if (r == NIL)
        return fc__err(FC_EINVAL, "flows: no flow has id %llu", (unsigned long long)id);
    *runs = iv->runs + iv->run_off[r];
    *nruns = iv->run_n[r];
    return 0;
}

double fc__intervals_time(const fc__intervals *iv, uint32_t kind, uint32_t k)
{
    if (kind > FC_CONFLICT_MIXED_OUT || k >= iv->kslots)
        return 0;
    return iv->time[(size_t)k * 5 + kind];
}

uint32_t fc__intervals_max_k(const fc__intervals *iv)
{
    return iv->max_k;
}

void fc__runs_main(const fc__label_run *runs, size_t nruns, fc__label *main, double *conflict_s)
{
    /* Distinct labels of one flow are few (a kind, a node and a k each), so a short linear table
     * suffices; runs beyond its size still count towards conflict_s. */
    enum { MAXL = 32 };
    fc__label seen[MAXL];
    double secs[MAXL];
    size_t nseen = 0, best = 0;
    *main = (fc__label){.kind = FC_CONFLICT_NONE, .node = 0, .k = 1};
    *conflict_s = 0;
    for (size_t r = 0; r < nruns; r++) {
        const fc__label *l = &runs[r].label;
        double d = runs[r].end - runs[r].start;
        size_t j = 0;
        if (l->kind != FC_CONFLICT_NONE)
            *conflict_s += d;
        while (j < nseen && !(seen[j].kind == l->kind && seen[j].k == l->k &&
                              (l->kind == FC_CONFLICT_NONE || seen[j].node == l->node)))
            j++;
        if (j == nseen) {
            if (nseen == MAXL)
                continue;
            seen[nseen] = *l;
            secs[nseen++] = 0;
        }
        secs[j] += d;
    }
    for (size_t j = 1; j < nseen; j++)
        if (secs[j] > secs[best])
            best = j;
    if (nseen > 0)
        *main = seen[best];
}
