/* analyzer/model/observe.c: each flow's observed time split into what its events and the platform
 * explain, and its class (observe.h). The rules, in docs/analyze.md ("What each flow's time is
 * made of"), are applied in this order:
 *
 *   below-wire      the ends contradict the clocks, or the flow took less than half the time its
 *                   bytes need at the platform's rate, beyond the two ranks' clock uncertainties
 *                   (a flow of no positive time within them is latency-bound);
 *   late-peer       waiting for the peer is at least half the observed time (and no less than the
 *   no-progress     time without progress), or the time without progress is;
 *   oversubscribed  a machine or node of the flow ran more ranks than the cores they may use, and
 *                   its NICs were not kept busy: the bytes that crossed its busier NIC direction
 *                   while it was active (every flow counted at its average rate) would have
 *                   crossed at the platform's rate in less than FC_OBS_BUSY_SHARE of its time, so
 *                   that what moved its bytes was the ranks' turns at the cores, not the link;
 *                   for a flow whose data time is below the latency, which keeps no NIC busy,
 *                   what is left after latency + data time is at least half its time;
 *   latency         the data time at the platform's rate is below its latency;
 *   network         the rest: its time is set by moving its bytes.
 *
 * The parts come from the events of both ends. Eager (below the threshold), the data leaves at
 * the send and the time before the receiver entered the call that completed the receive is
 * waiting for the peer. Rendezvous, the transfer needs both ends inside MPI: from the flow's start
 * until the first end arrives nothing progresses, from then until the second one end waits for
 * the other. "Inside MPI" is the call that waits for the message (the blocking call, or the Wait
 * or Test that completed the request): a rank that progresses the transfer from other MPI calls
 * meanwhile is counted as absent, so the waiting parts are upper bounds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/internal.h"
#include "model/observe.h"

const char *fc__obs_class_name(unsigned cls)
{
    switch (cls) {
#define FC__X(name, num, text)                                                                     \
    case num:                                                                                      \
        return text;
        FC_OBS_CLASSES(FC__X)
#undef FC__X
    }
    return "unknown";
}

static double clamp(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* The parts the events give: late_peer and no_progress; rest holds what is left of the time.
 * unc: the two ranks' clock uncertainties added. A clock problem is a contradiction beyond them:
 * within them, a receive seen completing before its send is a message too fast for the clocks to
 * time, which the classes take as latency-bound. */
static void event_parts(const fc__flow *f, const fc__flow_waits *w, double unc, fc__obs *ob)
{
    double a = f->start, e = f->end, obs = f->observed;
    *ob = (fc__obs){.cls = FC_OBS_NETWORK};
    ob->clock = -obs > unc || (w->send_early && f->recv_post - f->send_end > unc);
    if (!(obs > 0))
        return;
    double rw = clamp(w->recv_wait, a, e);
    if (!f->rendezvous) {
        ob->late_peer = rw - a;
    } else {
        double sw = clamp(w->send_wait, a, e);
        double lo = sw < rw ? sw : rw, hi = sw < rw ? rw : sw;
        ob->no_progress = lo - a;
        ob->late_peer = hi - lo;
    }
    ob->rest = obs - ob->late_peer - ob->no_progress;
    if (ob->rest < 0)
        ob->rest = 0;
}

/* Adds the CPUs of an affinity list ("0-3,8,10-11", as in /proc/self/status) to the set bits[]
 * of nbits; returns 0, or -1 when the list is empty or not one. */
static int add_affinity(uint64_t *bits, uint32_t nbits, const char *s)
{
    int any = 0;
    while (*s) {
        char *q;
        unsigned long lo = strtoul(s, &q, 10), hi = lo;
        if (q == s)
            return -1;
        s = q;
        if (*s == '-') {
            hi = strtoul(s + 1, &q, 10);
            if (q == s + 1 || hi < lo)
                return -1;
            s = q;
        }
        for (unsigned long c = lo; c <= hi && c < nbits; c++)
            bits[c / 64] |= UINT64_C(1) << (c % 64);
        any = 1;
        if (*s == ',')
            s++;
        else if (*s != '\0' && *s != '\n' && *s != ' ')
            return -1;
        else
            break;
    }
    return any ? 0 : -1;
}

#define OBS_CPUS 4096 /* CPU numbers counted in an affinity list; higher ones are ignored */

static uint32_t popcount(const uint64_t *bits)
{
    uint32_t n = 0;
    for (size_t i = 0; i < OBS_CPUS / 64; i++)
        n += (uint32_t)__builtin_popcountll(bits[i]);
    return n;
}

/* The ranks and cores of each group of ranks (a machine by host name, or a node by number),
 * marking the ranks of an oversubscribed group in oversub[]. key[i] names rank file i's group. */
static int group_cores(const fc_trace *t, const char *const *key, fc__observation *o, int hosts)
{
    size_t nr = fc_trace_nranks(t), ng = 0;
    const char **names = calloc(nr ? nr : 1, sizeof *names);
    uint32_t *ranks = calloc(nr ? nr : 1, sizeof *ranks);
    size_t *gof = calloc(nr ? nr : 1, sizeof *gof);
    uint64_t *bits = calloc((nr ? nr : 1) * (OBS_CPUS / 64), sizeof *bits);
    uint8_t *unknown = calloc(nr ? nr : 1, 1);
    int rc = FC_ENOMEM;
    if (names == NULL || ranks == NULL || gof == NULL || bits == NULL || unknown == NULL)
        goto out;
    for (size_t i = 0; i < nr; i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        size_t g = 0;
        while (g < ng && strcmp(names[g], key[i]) != 0)
            g++;
        if (g == ng)
            names[ng++] = key[i];
        gof[i] = g;
        ranks[g]++;
        if (add_affinity(&bits[g * (OBS_CPUS / 64)], OBS_CPUS, r->info.affinity) < 0) {
            unknown[g] = 1;
            o->cores_known = 0;
        }
    }
    if (hosts) {
        if ((o->hosts = calloc(ng ? ng : 1, sizeof *o->hosts)) == NULL)
            goto out;
        o->nhosts = ng;
    }
    for (size_t g = 0; g < ng; g++) {
        uint32_t cores = unknown[g] ? 0 : popcount(&bits[g * (OBS_CPUS / 64)]);
        if (hosts)
            o->hosts[g] = (fc__obs_host){names[g], ranks[g], cores, 0};
        for (size_t i = 0; i < nr; i++) {
            uint32_t w = fc_trace_rank(t, i)->info.rank;
            if (gof[i] == g && cores > 0 && ranks[g] > cores && w < o->world)
                o->oversub[w] = 1;
        }
    }
    rc = 0;
out:
    free(names);
    free(ranks);
    free(gof);
    free(bits);
    free(unknown);
    return rc;
}

/* A change of the rate at which bytes cross one direction of one node's NIC: key is node x 2 +
 * direction (0 out, 1 in). */
typedef struct nic_step {
    uint64_t key;
    double t, rate; /* bytes/s added at t (negative: removed) */
    double bytes;   /* bytes that crossed it from the first step of its key to t */
} nic_step;

static int cmp_step(const void *a, const void *b)
{
    const nic_step *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* Bytes that crossed the NIC direction key in [a, b]: from the steps' running totals, the rate
 * being constant between two steps. */
static double nic_bytes(const nic_step *st, size_t n, uint64_t key, double a, double b)
{
    double at[2] = {a, b}, cum[2];
    for (int e = 0; e < 2; e++) {
        /* The last step of key at or before at[e]. */
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (st[mid].key < key || (st[mid].key == key && st[mid].t <= at[e]))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0 || st[lo - 1].key != key) {
            cum[e] = 0;
            continue;
        }
        const nic_step *s = &st[lo - 1];
        /* s->rate is the rate in force after s. */
        cum[e] = s->bytes + s->rate * (at[e] - s->t);
    }
    return cum[1] - cum[0];
}

/* Fills each flow's src_out, src_in, dst_in and dst_out. Returns 0 or FC_ENOMEM. */
static int nic_loads(const fc__match *m, fc__observation *o)
{
    size_t n = 0;
    nic_step *st = malloc((o->n > 0 ? 4 * o->n : 1) * sizeof *st);
    if (st == NULL)
        return FC_ENOMEM;
    for (size_t i = 0; i < o->n; i++) {
        const fc__flow *f = &m->flows[i];
        if (!(f->observed > 0) || f->src_node >= m->nnodes || f->dst_node >= m->nnodes)
            continue;
        double r = (double)f->bytes / f->observed;
        uint64_t ko = (uint64_t)f->src_node * 2, ki = (uint64_t)f->dst_node * 2 + 1;
        st[n++] = (nic_step){ko, f->start, r, 0};
        st[n++] = (nic_step){ko, f->end, -r, 0};
        st[n++] = (nic_step){ki, f->start, r, 0};
        st[n++] = (nic_step){ki, f->end, -r, 0};
    }
    fc__sort(st, n, sizeof *st, cmp_step);
    /* Running totals; each step's rate becomes the rate in force after it. */
    for (size_t i = 0; i < n; i++) {
        int first = i == 0 || st[i - 1].key != st[i].key;
        double rate = first ? 0 : st[i - 1].rate;
        st[i].bytes = first ? 0 : st[i - 1].bytes + rate * (st[i].t - st[i - 1].t);
        st[i].rate += rate;
        if (st[i].rate < 0) /* rounding of the sums of many rates */
            st[i].rate = 0;
    }
    for (size_t i = 0; i < o->n; i++) {
        const fc__flow *f = &m->flows[i];
        fc__obs *ob = &o->flow[i];
        if (!(f->observed > 0) || f->src_node >= m->nnodes || f->dst_node >= m->nnodes)
            continue;
        ob->src_out = nic_bytes(st, n, (uint64_t)f->src_node * 2, f->start, f->end);
        ob->src_in = nic_bytes(st, n, (uint64_t)f->src_node * 2 + 1, f->start, f->end);
        ob->dst_in = nic_bytes(st, n, (uint64_t)f->dst_node * 2 + 1, f->start, f->end);
        ob->dst_out = nic_bytes(st, n, (uint64_t)f->dst_node * 2, f->start, f->end);
    }
    free(st);
    return 0;
}

int fc__observe_new(const fc_trace *t, const fc__match *m, int all, fc__observation **out)
{
    *out = NULL;
    if (m->ninter > 0 && m->waits == NULL)
        return fc__err(FC_EINVAL, "observation: the flows carry no wait entries");
    fc__observation *o = calloc(1, sizeof *o);
    size_t nr = fc_trace_nranks(t);
    const char **key = calloc(nr ? nr : 1, sizeof *key);
    char *nodenum = calloc(nr ? nr : 1, 16);
    int rc = FC_ENOMEM;
    if (o == NULL || key == NULL || nodenum == NULL)
        goto out;
    o->n = m->ninter;
    o->all = all;
    o->world = m->world;
    o->cores_known = 1;
    o->flow = calloc(o->n ? o->n : 1, sizeof *o->flow);
    o->judged = calloc(o->n ? o->n : 1, 1);
    o->oversub = calloc(m->world ? m->world : 1, 1);
    if (o->flow == NULL || o->judged == NULL || o->oversub == NULL)
        goto out;
    for (size_t i = 0; i < o->n; i++) {
        const fc__flow *f = &m->flows[i];
        double unc = (f->src_rank < m->world ? m->clock_unc[f->src_rank] : 0) +
                     (f->dst_rank < m->world ? m->clock_unc[f->dst_rank] : 0);
        event_parts(f, &m->waits[i], unc, &o->flow[i]);
        if (o->flow[i].clock) {
            double by = -f->observed;
            if (m->waits[i].send_early && f->recv_post - f->send_end > by)
                by = f->recv_post - f->send_end;
            if (o->contradicting == 0 || by > o->worst_contradiction_s) {
                o->worst_contradiction_s = by;
                o->worst_contradicting_flow = f->id;
            }
            o->contradicting++;
        }
    }
    if ((rc = nic_loads(m, o)) < 0)
        goto out;
    /* Busy ranks against cores, per machine (host name) and per node: on a real cluster the two
     * are one; on an emulated one, the nodes of one machine share its cores. */
    for (size_t i = 0; i < nr; i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        key[i] = r->info.host[0] ? r->info.host : r->info.node;
    }
    if ((rc = group_cores(t, key, o, 1)) < 0)
        goto out;
    for (size_t i = 0; i < nr; i++) {
        uint32_t w = fc_trace_rank(t, i)->info.rank;
        snprintf(nodenum + 16 * i, 16, "%u", w < m->world ? m->rank_node[w] : UINT32_MAX);
        key[i] = nodenum + 16 * i;
    }
    if ((rc = group_cores(t, key, o, 0)) < 0)
        goto out;
    /* The nodes each machine holds. */
    for (size_t h = 0; h < o->nhosts; h++) {
        uint8_t *seen = calloc(m->nnodes ? m->nnodes : 1, 1);
        if (seen == NULL) {
            rc = FC_ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < nr; i++) {
            const fc_rank *r = fc_trace_rank(t, i);
            const char *hn = r->info.host[0] ? r->info.host : r->info.node;
            uint32_t nd = r->info.rank < m->world ? m->rank_node[r->info.rank] : FC_NODE_NONE;
            if (strcmp(hn, o->hosts[h].name) == 0 && nd < m->nnodes && !seen[nd]) {
                seen[nd] = 1;
                o->hosts[h].nodes++;
            }
        }
        free(seen);
    }
    *out = o;
    o = NULL;
    rc = 0;
out:
    if (rc == FC_ENOMEM)
        fc__err(rc, "observation: out of memory");
    free(key);
    free(nodenum);
    fc__observation_free(o);
    return rc;
}

/* The share of flow f's time its busier NIC direction was kept busy at the rate of p's largest
 * messages. A NIC that shares its rate between its two directions (half duplex) slows a flow by
 * the traffic the other way too, as much as p's mixed flow cut says (0 on a full-duplex NIC). */
static double busy_share(const fc__flow *f, const fc__obs *ob, const fc__profile *p)
{
    if (p == NULL || p->ninter == 0 || !(f->observed > 0) || !(p->inter[p->ninter - 1].per_byte > 0))
        return 0;
    double beta = fc__profile_alpha(p, FC_CONFLICT_MIXED_IN, 2, 0);
    beta = clamp(beta, 0, 1);
    double src = ob->src_out + beta * ob->src_in, dst = ob->dst_in + beta * ob->dst_out;
    return (src > dst ? src : dst) * p->inter[p->ninter - 1].per_byte / f->observed;
}

void fc__observe_classify(fc__observation *o, const fc__match *m, const fc__profile *p)
{
    o->have_platform = p != NULL;
    memset(o->count, 0, sizeof o->count);
    memset(o->observed_s, 0, sizeof o->observed_s);
    memset(o->late_peer_s, 0, sizeof o->late_peer_s);
    memset(o->no_progress_s, 0, sizeof o->no_progress_s);
    memset(o->wire_s, 0, sizeof o->wire_s);
    memset(o->rest_s, 0, sizeof o->rest_s);
    o->below_wire = 0;
    o->worst_below_s = 0;
    o->worst_below_flow = 0;
    o->njudged = 0;
    for (size_t i = 0; i < o->n; i++) {
        const fc__flow *f = &m->flows[i];
        fc__obs *ob = &o->flow[i];
        double obs = f->observed, tb = ob->rest + ob->wire; /* the part both ends took part in */
        const fc__segment *s = p ? fc__profile_segment(p, 0, f->bytes) : NULL;
        double lat = s ? s->latency : 0, data = s ? (double)f->bytes * s->per_byte : 0;
        double unc = (f->src_rank < m->world ? m->clock_unc[f->src_rank] : 0) +
                     (f->dst_rank < m->world ? m->clock_unc[f->dst_rank] : 0);
        ob->wire = s ? (lat + data < tb ? lat + data : tb) : 0;
        ob->busy = busy_share(f, ob, p);
        ob->rest = tb - ob->wire;
        /* Faster than the wire: a clock problem of its own, not one of the contradictions above. */
        int fast = !ob->clock && s != NULL && obs + unc < FC_OBS_WIRE_MARGIN * data;
        if (fast) {
            if (o->below_wire == 0 || data - obs > o->worst_below_s) {
                o->worst_below_s = data - obs;
                o->worst_below_flow = f->id;
            }
            o->below_wire++;
        }
        int over = (f->src_rank < o->world && o->oversub[f->src_rank]) ||
                   (f->dst_rank < o->world && o->oversub[f->dst_rank]);
        double waiting = ob->late_peer + ob->no_progress;
        if (ob->clock || fast)
            ob->cls = FC_OBS_BELOW_WIRE;
        else if (!(obs > 0))
            ob->cls = FC_OBS_LATENCY;
        else if (waiting >= FC_OBS_MAJOR_SHARE * obs && obs > 0)
            ob->cls = ob->late_peer >= ob->no_progress ? FC_OBS_LATE_PEER : FC_OBS_NO_PROGRESS;
        else if (s == NULL) /* no platform: the protocol stands in for the size; a collective's step
                                * on an oversubscribed machine has for its time a share of its call,
                                * which its ranks' waits for a core fill as much as its bytes */
            ob->cls = f->rendezvous && !(over && f->coll) ? FC_OBS_NETWORK
                      : over                              ? FC_OBS_OVERSUBSCRIBED
                                                          : FC_OBS_LATENCY;
        else if (over && (data < lat ? tb - (lat + data) >= FC_OBS_MAJOR_SHARE * obs : ob->busy < FC_OBS_BUSY_SHARE))
            ob->cls = FC_OBS_OVERSUBSCRIBED;
        else
            ob->cls = data < lat ? FC_OBS_LATENCY : FC_OBS_NETWORK;
        unsigned c = ob->cls;
        o->count[c]++;
        if (obs > 0)
            o->observed_s[c] += obs;
        o->late_peer_s[c] += ob->late_peer;
        o->no_progress_s[c] += ob->no_progress;
        o->wire_s[c] += ob->wire;
        o->rest_s[c] += ob->rest;
        o->judged[i] = c != FC_OBS_BELOW_WIRE && (o->all || c == FC_OBS_NETWORK);
        o->njudged += o->judged[i];
    }
}

void fc__observation_free(fc__observation *o)
{
    if (o == NULL)
        return;
    free(o->flow);
    free(o->judged);
    free(o->oversub);
    free(o->hosts);
    free(o);
}
