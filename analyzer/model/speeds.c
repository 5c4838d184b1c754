/* analyzer/model/speeds.c: the rate every message in its data phase moves at under each contention
 * model, re-solved by the fluid simulation (model/netsim.c) whenever the set of messages moving
 * data changes. Speeds are fractions of a message's uncontended rate (1 alone); a NIC direction's
 * capacity is 1, what one message alone uses of it. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "conflict/intervals.h"
#include "model/model.h"
#include "model/netsim-int.h"

/* alpha_same's answer when it is not remembered yet: asked of the profile, and kept when there
 * is room. Apart, so that what the re-solve runs for every message stays small enough to inline. */
static double alpha_ask(const fc__net *n, aux *a, int dir, uint32_t kind, uint32_t k, uint32_t i)
{
    double alpha = fc__profile_alpha(n->p, kind, k, i);
    if (k < ALPHA_K && i < ALPHA_K) {
        a->alpha[dir][k][i] = alpha;
        a->has_alpha[dir][k][i] = 1;
    }
    return alpha;
}

/* fc__profile_alpha for the i-th flow of a same-direction conflict of k flows (dir 0 outgoing, 1
 * incoming, kind the matching FC_CONFLICT_*), from aux.alpha once asked. */
static inline double alpha_same(const fc__net *n, aux *a, int dir, uint32_t kind, uint32_t k,
                                uint32_t i)
{
    if (k < ALPHA_K && i < ALPHA_K && a->has_alpha[dir][k][i])
        return a->alpha[dir][k][i];
    return alpha_ask(n, a, dir, kind, k, i);
}

/* Flow cuts: labels by the rules of intervals.h, then alpha for the flow's place in its conflict.
 * Same-direction conflicts index alpha by the flow's rank among the k flows leaving (entering)
 * the node in ascending key order, as the calibrator indexes them by ascending rank; a mixed
 * conflict stores one alpha per role. A kind the profile has no cut for costs nothing, and a
 * negative alpha (measurement noise) is taken as 0: a conflict never speeds a flow up. */
int fc__speeds_flowcut(const fc__net *n, aux *a, state *s, size_t d)
{
    for (size_t j = 0; j < d; j++) {
        a->src[j] = s->v[a->idx[j]].src;
        a->dst[j] = s->v[a->idx[j]].dst;
    }
    int rc = fc__intervals_label_set_with(a->src, a->dst, d, a->lab, &a->lsc);
    if (rc)
        return rc;
    for (size_t j = 0; j < d; j++) {
        const msg *m = &s->v[a->idx[j]];
        a->cout[m->isrc] = a->cin[m->idst] = 0;
    }
    for (size_t j = 0; j < d; j++) {
        msg *m = &s->v[a->idx[j]];
        uint32_t ro = a->cout[m->isrc]++, ri = a->cin[m->idst]++;
        const fc__label *l = &a->lab[j];
        double alpha = 0;
        switch (l->kind) {
        case FC_CONFLICT_OUTGOING:
            alpha = alpha_same(n, a, 0, l->kind, l->k, ro);
            break;
        case FC_CONFLICT_INCOMING:
            alpha = alpha_same(n, a, 1, l->kind, l->k, ri);
            break;
        case FC_CONFLICT_MIXED_IN:
        case FC_CONFLICT_MIXED_OUT: {
            int r = l->kind == FC_CONFLICT_MIXED_OUT;
            if (!a->has_mixed[r]) {
                a->alpha_mixed[r] = fc__profile_alpha(n->p, l->kind, 2, 0);
                a->has_mixed[r] = 1;
            }
            alpha = a->alpha_mixed[r];
            break;
        }
        default:
            break;
        }
        if (!(alpha > 0) || !isfinite(alpha))
            alpha = 0;
        m->speed = 1.0 / (1.0 + alpha);
    }
    return 0;
}

/* Max-min fair shares of the NIC directions by progressive filling: every unfrozen message's
 * speed rises together until a NIC direction is full (its messages freeze at that level) or the
 * level reaches 1 (a message alone is not faster than uncontended). Resource 2u is node u's
 * output, 2u + 1 its input; each lists its messages (bucket), so a round costs O(resources) plus
 * the messages it freezes, not O(messages). The bottleneck is found by comparing the very
 * quotients the least was taken of, so at least one resource freezes exactly each round. */
void fc__speeds_fairshare(aux *a, state *s, size_t d)
{
    size_t nr = 0;
    for (size_t j = 0; j < d; j++) {
        const msg *m = &s->v[a->idx[j]];
        a->res[2 * m->isrc].live = a->res[2 * m->idst + 1].live = 0;
    }
    for (size_t j = 0; j < d; j++) {
        const msg *m = &s->v[a->idx[j]];
        size_t r2[2] = {2 * (size_t)m->isrc, 2 * (size_t)m->idst + 1};
        for (int q = 0; q < 2; q++) {
            nicdir *r = &a->res[r2[q]];
            if (r->live++ == 0) {
                a->rlist[nr++] = r2[q];
                r->cap = 1.0;
            }
        }
        a->frozen[j] = 0;
    }
    /* Buckets: each resource's messages, contiguous from its start. */
    size_t off = 0;
    for (size_t i = 0; i < nr; i++) {
        nicdir *r = &a->res[a->rlist[i]];
        r->start = r->fill = off;
        off += r->live;
    }
    for (size_t j = 0; j < d; j++) {
        const msg *m = &s->v[a->idx[j]];
        a->bucket[a->res[2 * m->isrc].fill++] = j;
        a->bucket[a->res[2 * m->idst + 1].fill++] = j;
    }
    double level = 0;
    size_t left = d;
    while (left > 0) {
        /* The least quotient, kept by each resource for the marking below. A plain comparison
         * picks the same value as fmin, which returns its second argument on a tie (so equal
         * zeros of either sign give the same one), and needs no call: a quotient is never NaN,
         * every capacity being 1 less finite amounts and live at least 1. A resource whose
         * messages are all frozen takes no further part (no quotient, never marked, its capacity
         * left as it is), so it leaves the list, the others keeping their order. */
        double delta = 1.0 - level;
        size_t w = 0;
        for (size_t i = 0; i < nr; i++) {
            nicdir *r = &a->res[a->rlist[i]];
            if (r->live) {
                a->rlist[w++] = a->rlist[i];
                r->q = r->cap / r->live;
                delta = delta < r->q ? delta : r->q;
            }
        }
        nr = w;
        int all = delta == 1.0 - level;
        if (delta < 0) /* a capacity rounded below 0: freeze at the level reached */
            delta = 0;
        /* Mark first, against the quotients before this round's subtraction. */
        for (size_t i = 0; i < nr; i++) {
            nicdir *r = &a->res[a->rlist[i]];
            r->sat = all || r->q <= delta;
            r->cap -= delta * r->live;
        }
        level += delta;
        for (size_t i = 0; i < nr; i++) {
            nicdir *r = &a->res[a->rlist[i]];
            if (!r->sat)
                continue;
            for (size_t b = r->start; b < r->fill; b++) {
                size_t j = a->bucket[b];
                if (a->frozen[j])
                    continue;
                msg *m = &s->v[a->idx[j]];
                m->speed = level > 0 ? level : 1.0; /* level 0 cannot happen with capacities 1 */
                a->res[2 * m->isrc].live--;
                a->res[2 * m->idst + 1].live--;
                a->frozen[j] = 1;
                left--;
            }
        }
    }
}

/* The late joiner's share, with which the flowcut model caps the cuts' speeds when the profile
 * holds a late-joiner record: each NIC direction is shared by weighted max-min fairness, a message
 * weighing 1 / (1 + g n) where n is the larger number of messages that were already moving data
 * through its source's output or its destination's input when its own data phase began (messages
 * beginning together do not count each other: the flow cuts' synchronous flows weigh the same).
 * Over TCP an old connection holds a large window and a newcomer, starting small behind a full
 * queue, does not win its fair share back during a message's life (docs/models.md).
 *
 * The opposite direction's delay (the profile's opposite entries): a message that begins moving
 * data while its destination's output is full, k messages held back there, first waits
 * D_IN(k) seconds, moving nothing; while its source's input is full with k, D_OUT(k); both add.
 * Over TCP its acknowledgements leave its destination, and enter its source, through those
 * directions and queue there behind their data: each round trip of its window's growth takes
 * the queue's delay. The share solved with the message, before its wait, says which directions
 * are full and with how many messages. On a half-duplex NIC (one resource for both directions,
 * below) the share already counts the opposite direction's data, and there is no delay.
 *
 * Progressive filling with weights: the level L rises, an unfrozen message moving at w L, until a
 * NIC direction is full (its messages freeze) or a message reaches its uncontended speed (w L =
 * 1). Each round costs O(d + resources); there are at most d rounds. */
#define IN_RES(m) (2 * (size_t)(m)->idst + (half ? 0 : 1))

/* fill()'s modes: set the speeds; or count the messages each full NIC direction holds back (in
 * a->cout for a node's output, a->cin for its input) and set no speed. */
enum { FILL_SET, FILL_COUNT };

/* One weighted filling of the d listed messages (mode: FILL_*). */
static void fill(aux *a, state *s, size_t d, int half, int mode)
{
    int count = mode == FILL_COUNT;
    /* Resource 2u is node u's output, 2u + 1 its input (2u on a half-duplex NIC): cap is the
     * capacity left by the frozen messages, q the weight of the live ones. */
    for (size_t j = 0; j < d; j++) {
        const msg *m = &s->v[a->idx[j]];
        a->res[2 * m->isrc].cap = a->res[IN_RES(m)].cap = 1.0;
        a->res[2 * m->isrc].q = a->res[IN_RES(m)].q = 0;
        a->frozen[j] = 0;
        if (count)
            a->cout[m->isrc] = a->cout[m->idst] = a->cin[m->isrc] = a->cin[m->idst] = 0;
    }
    for (size_t j = 0; j < d; j++) {
        const msg *m = &s->v[a->idx[j]];
        a->res[2 * m->isrc].q += m->weight;
        a->res[IN_RES(m)].q += m->weight;
    }
    size_t left = d;
    while (left > 0) {
        /* The lowest level at which a live message stops: its resource full, or itself at its
         * highest speed. */
        double level = INFINITY;
        for (size_t j = 0; j < d; j++) {
            if (a->frozen[j])
                continue;
            const msg *m = &s->v[a->idx[j]];
            const nicdir *ro = &a->res[2 * m->isrc], *ri = &a->res[IN_RES(m)];
            double l = 1.0 / m->weight;
            if (ro->q > 0 && ro->cap / ro->q < l)
                l = ro->cap / ro->q;
            if (ri->q > 0 && ri->cap / ri->q < l)
                l = ri->cap / ri->q;
            if (l < level)
                level = l;
        }
        if (!(level >= 0))
            level = 0;
        /* Freeze every live message that stops at that level, then charge the resources. */
        size_t nf = 0;
        for (size_t j = 0; j < d; j++) {
            if (a->frozen[j])
                continue;
            const msg *m = &s->v[a->idx[j]];
            const nicdir *ro = &a->res[2 * m->isrc], *ri = &a->res[IN_RES(m)];
            int fo = ro->cap / ro->q <= level, fi = ri->cap / ri->q <= level;
            if (1.0 / m->weight <= level || fo || fi) {
                a->frozen[j] = 2; /* frozen this round */
                nf++;
                if (count) {
                    a->cout[m->isrc] += (uint32_t)fo;
                    a->cin[m->idst] += (uint32_t)fi;
                }
            }
        }
        if (nf == 0) /* rounding: freeze all at the level */
            for (size_t j = 0; j < d; j++)
                if (!a->frozen[j])
                    a->frozen[j] = 2;
        for (size_t j = 0; j < d; j++) {
            if (a->frozen[j] != 2)
                continue;
            msg *m = &s->v[a->idx[j]];
            double share = m->weight * level;
            if (share > 1)
                share = 1;
            /* A same-direction conflict is a NIC direction's sharing, which the weighted share
             * describes whatever the order the flows joined in; a mixed one's cut stays a cap. */
            if (!count && (share < m->speed || half || a->lab[j].kind == FC_CONFLICT_OUTGOING ||
                           a->lab[j].kind == FC_CONFLICT_INCOMING))
                m->speed = share;
            nicdir *ro = &a->res[2 * m->isrc], *ri = &a->res[IN_RES(m)];
            ro->cap -= share;
            ri->cap -= share;
            ro->q -= m->weight;
            ri->q -= m->weight;
            if (ro->cap < 0)
                ro->cap = 0;
            if (ri->cap < 0)
                ri->cap = 0;
            a->frozen[j] = 1;
            left--;
        }
    }
}

size_t fc__speeds_share(const fc__net *n, aux *a, state *s, size_t d)
{
    double g = n->p->has_latejoin ? n->p->latejoin_g : 0;
    if (!(g > 0) || !isfinite(g))
        g = 0;
    /* A NIC whose mixed conflicts cost as much as same-direction ones (both mixed cuts 1/2 or
     * more: a half-duplex link) is one resource for both directions, which then prices the mixed
     * conflicts itself. */
    double ami = fc__profile_alpha(n->p, FC_CONFLICT_MIXED_IN, 2, 0),
           amo = fc__profile_alpha(n->p, FC_CONFLICT_MIXED_OUT, 2, 0);
    int half = ami >= 0.5 && amo >= 0.5;
    /* Messages started by separate calls at one time each begin alone in their own step: only a
     * data phase that began earlier counts. O(d) for each fresh message, which are few. */
    for (size_t j = 0; j < d; j++) {
        msg *m = &s->v[a->idx[j]];
        if (m->fresh) {
            uint32_t oo = 0, oi = 0;
            for (size_t q = 0; q < d; q++) {
                const msg *o = &s->v[a->idx[q]];
                if (o->data_start < m->data_start) {
                    oo += o->isrc == m->isrc || (half && o->idst == m->isrc);
                    oi += o->idst == m->idst || (half && o->isrc == m->idst);
                }
            }
            uint32_t older = oo > oi ? oo : oi;
            m->weight = 1.0 / (1.0 + g * (double)older);
            m->fresh = 0;
        } else if (!(m->weight > 0)) {
            m->weight = 1.0;
        }
    }
    size_t delayed = 0;
    if (n->p->nopp > 0 && !half) {
        fill(a, s, d, half, FILL_COUNT);
        for (size_t j = 0; j < d; j++) {
            msg *m = &s->v[a->idx[j]];
            if (m->decided)
                continue;
            m->decided = 1;
            double wait = fc__profile_opposite(n->p, 0, a->cout[m->idst]) +
                          fc__profile_opposite(n->p, 1, a->cin[m->isrc]);
            if (wait > 0) {
                m->stall_end = s->now + wait;
                delayed++;
            }
        }
        if (delayed > 0)
            return delayed;
    }
    fill(a, s, d, half, FILL_SET);
    return 0;
}

/* Gropp: k messages leaving a node, or entering one (the larger count), share the aggregate
 * rate of k; the speed is that share against the rate of one message alone. */
void fc__speeds_maxrate(const fc__net *n, aux *a, state *s, size_t d)
{
    const fc__maxrate *mr = &n->p->maxrate;
    double one = maxrate_agg(mr, 1);
    for (size_t j = 0; j < d; j++) {
        const msg *m = &s->v[a->idx[j]];
        a->cout[m->isrc] = a->cin[m->idst] = 0;
    }
    for (size_t j = 0; j < d; j++) {
        const msg *m = &s->v[a->idx[j]];
        a->cout[m->isrc]++;
        a->cin[m->idst]++;
    }
    for (size_t j = 0; j < d; j++) {
        msg *m = &s->v[a->idx[j]];
        uint32_t k = a->cout[m->isrc] > a->cin[m->idst] ? a->cout[m->isrc] : a->cin[m->idst];
        m->speed = maxrate_agg(mr, k) / k / one;
    }
}
