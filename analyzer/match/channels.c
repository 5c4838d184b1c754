/* analyzer/match/channels.c: the channels of the ordered match and the instances in flight: the
 * pool of instances, the queues of each (communicator, source, destination, tag) key, and the
 * attempts to pair their heads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "match/matcher.h"

/* msg_new with no entry free: the pool grows. */
msg *fc__mt_msg_grow(matcher *mt, uint32_t *ix)
{
    if (mt->npool >= NOMSG - 1 || fc__reserve_lines(&mt->pool, &mt->cpool, mt->npool + 1, sizeof *mt->pool) < 0)
        return NULL;
    *ix = (uint32_t)mt->npool++;
    return &mt->pool[*ix];
}

/* Queues the post of send ix (at m), waiting in a channel, on its rank's list of waiting sends. A
 * rank posts in the order of its records, so the list is kept sorted by post with at most a short
 * walk back: only a START sub-record (posting at its Startall's entry) or another thread's record
 * can come with an earlier post. Entries of sends gone since stay until they reach the head. */
static inline __attribute__((always_inline)) int pend_push(matcher *mt, const msg *m, uint32_t ix)
{
    rstate *rs = &mt->st[m->src];
    if (rs->ph > 0 && rs->ph >= rs->pn / 2) {
        memmove(rs->pq, rs->pq + rs->ph, (rs->pn - rs->ph) * sizeof *rs->pq);
        rs->pn -= rs->ph;
        rs->ph = 0;
    }
    if (fc__reserve(&rs->pq, &rs->pcap, rs->pn + 1, sizeof *rs->pq))
        return FC_ENOMEM;
    size_t j = rs->pn++;
    for (; j > rs->ph && rs->pq[j - 1].post > m->post; j--)
        rs->pq[j] = rs->pq[j - 1];
    rs->pq[j] = (struct pend){m->post, ix, m->seq};
    return 0;
}

/* Send ix (at m) starts waiting in a channel: noted for fc__mt_pend_min, which lists it if it still
 * waits then. */
static inline __attribute__((always_inline)) int pend_note(matcher *mt, const msg *m, uint32_t ix)
{
    if (fc__reserve(&mt->fresh, &mt->cfresh, mt->nfresh + 1, sizeof *mt->fresh))
        return FC_ENOMEM;
    mt->fresh[mt->nfresh++] = (struct fresh){ix, m->src, m->seq};
    return 0;
}

/* The earliest post of a send still waiting in a channel, or INT64_MAX: the earliest of each
 * rank's list, once the sends noted since the last call and still waiting are added and the
 * entries of sends gone since are dropped from its head. 0 or FC_ENOMEM in *rc. */
int64_t fc__mt_pend_min(matcher *mt, int *rc)
{
    int64_t min = INT64_MAX;
    *rc = 0;
    for (size_t i = 0; i < mt->nfresh; i++) {
        const struct fresh *e = &mt->fresh[i];
        const msg *m = &mt->pool[e->m];
        if ((m->flags & (MF_LIVE | MF_SEND)) == (MF_LIVE | MF_SEND) && m->seq == e->seq && m->src == e->src &&
            pend_push(mt, m, e->m) < 0) {
            *rc = FC_ENOMEM;
            return min;
        }
    }
    mt->nfresh = 0;
    for (uint32_t w = 0; w < mt->res->world; w++) {
        rstate *rs = &mt->st[w];
        for (; rs->ph < rs->pn; rs->ph++) {
            const struct pend *e = &rs->pq[rs->ph];
            const msg *m = &mt->pool[e->m];
            if ((m->flags & (MF_LIVE | MF_SEND)) == (MF_LIVE | MF_SEND) && m->seq == e->seq && m->src == w) {
                min = e->post < min ? e->post : min;
                break;
            }
        }
        if (rs->ph == rs->pn)
            rs->ph = rs->pn = 0;
    }
    return min;
}

static inline __attribute__((always_inline)) uint64_t ends_of(const void *src)
{
    uint64_t sd;
    memcpy(&sd, src, sizeof sd);
    return sd;
}

/* Two multiplications: the communicator key is a hash already, and each product's high half,
 * folded down, mixes every bit of its factor into the low bits that index the table. The table is
 * only looked up, never walked, so its layout decides nothing in the output. sd is ends_of. */
static uint64_t key_hash(uint64_t comm, uint64_t sd, int64_t tag)
{
    uint64_t h = (comm ^ sd) * 0x9E3779B97F4A7C15ull ^ (uint64_t)tag * 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
}

static uint64_t chan_home(const void *ctx, uint32_t ix)
{
    return ((const matcher *)ctx)->ch[ix].hash;
}

/* The channel of a key, made when new. Returns 0 when found, 1 when made, or FC_ENOMEM. */
static int chan_of(matcher *mt, uint64_t comm, uint64_t sd, int64_t tag, uint32_t *ci)
{
    uint64_t hash = key_hash(comm, sd, tag);
    size_t h = hash & (mt->tcap - 1); /* the table exists from the start */
    while (mt->tab[h]) {
        const chan *c = &mt->ch[mt->tab[h] - 1];
        if (c->comm == comm && ends_of((const char *)c + offsetof(chan, src)) == sd && c->tag == tag) {
            *ci = mt->tab[h] - 1;
            return 0;
        }
        h = (h + 1) & (mt->tcap - 1);
    }
    /* At most a quarter full (counting released channels): most keys are new, and find their
     * empty slot at the first probe. */
    if (4 * (mt->nch + 1) > mt->tcap) {
        size_t ncap = 2 * mt->tcap;
        uint32_t *t = calloc(ncap, sizeof *t);
        if (t == NULL)
            return FC_ENOMEM;
        for (size_t i = 0; i < mt->nch; i++)
            if (!mt->ch[i].dead) /* a released one is on the free list, in no entry */
                fc__mt_tab_put(t, ncap, chan_home(mt, (uint32_t)i), (uint32_t)i);
        free(mt->tab);
        mt->tab = t;
        mt->tcap = ncap;
        for (h = hash & (mt->tcap - 1); mt->tab[h];)
            h = (h + 1) & (mt->tcap - 1);
    }
    chan *c;
    if (mt->chfree1 != NOCHAN) {
        c = &mt->ch[*ci = mt->chfree1];
        mt->chfree1 = c->nextfree;
    } else {
        if (mt->nch >= NOCHAN - 1 || fc__reserve_lines(&mt->ch, &mt->cch, mt->nch + 1, sizeof *mt->ch) < 0)
            return FC_ENOMEM;
        c = &mt->ch[mt->nch];
        memset(c, 0, sizeof *c);
        *ci = (uint32_t)mt->nch++;
    }
    c->comm = comm;
    memcpy((char *)c + offsetof(chan, src), &sd, sizeof sd); /* src and dst */
    c->tag = tag;
    c->hash = hash;
    c->sh = c->rh = NOMSG;
    c->dead = 0;
    mt->tab[h] = *ci + 1;
    return 1;
}

/* Forgets the empty channel ci: programs often use a new tag per step, so a trace can have as
 * many keys as messages, and only the keys in use are kept. */
static inline __attribute__((always_inline)) int chan_release(matcher *mt, uint32_t ci)
{
    tab_del(mt->tab, mt->tcap, chan_home(mt, ci), ci, chan_home, mt);
    mt->ch[ci].dead = 1;
    mt->ch[ci].nextfree = mt->chfree1;
    mt->chfree1 = ci;
    return 0;
}

/* Appends instance ix, at m, to the queue whose first and last are *h and *t. */
static inline __attribute__((always_inline)) void q_push(matcher *mt, uint32_t *h, uint32_t *t, msg *m, uint32_t ix)
{
    m->next = NOMSG;
    if (*h == NOMSG)
        *h = ix;
    else
        mt->pool[*t].next = ix;
    *t = ix;
}

/* The posting order of the oldest unresolved wildcard receive of rank rs, or UINT64_MAX. */
uint64_t fc__mt_wild_min(matcher *mt, rstate *rs, uint32_t rank)
{
    while (rs->wh < rs->wn) {
        const struct wild *w = &rs->wild[rs->wh];
        const msg *m = &mt->pool[w->m];
        if ((m->flags & (MF_LIVE | MF_WILD | MF_SEND)) == (MF_LIVE | MF_WILD) && m->seq == w->seq && m->dst == rank)
            return w->seq;
        rs->wh++;
    }
    rs->wh = rs->wn = 0;
    return UINT64_MAX;
}

/* Instance ix leaves its channel without a partner: counted as cancelled when it was, else
 * reported unmatched. */
int fc__mt_unpaired(matcher *mt, uint32_t ix)
{
    const msg *m = &mt->pool[ix];
    int send = (m->flags & MF_SEND) != 0, rc = 0;
    if (m->flags & MF_CANCELLED)
        ++*(send ? &mt->cancelled_sends : &mt->cancelled_recvs);
    else
        rc = fc__mt_add_unmatched(&mt->p, m, send, FC_UNMATCHED_NO_PARTNER);
    msg_free(mt, ix);
    return rc;
}

/* Pairs the heads of channel ci while both are complete and no earlier wildcard receive of the
 * receiver can still take the send. At the end of the trace (final) nothing more can arrive: an
 * incomplete send pairs as it is, an incomplete receive is reported (fc__mt_pair). */
int fc__mt_try_pair_all(matcher *mt, uint32_t ci, int final)
{
    chan *c = &mt->ch[ci];
    /* A receiver without a file, or whose records are all read, posts no more receives and
     * completes none: what it posted pairs as it is, and the sends left over are unmatched now
     * rather than at the end, so that they do not hold back the flows after them. */
    int gone = -1; /* looked up when first needed: most pairs never ask */
#define GONE() (gone >= 0 ? gone : (gone = c->dst >= mt->res->world || mt->st[c->dst].r == NULL || mt->st[c->dst].ended))
    while (c->sh != NOMSG && c->rh != NOMSG) {
        uint32_t si = c->sh, ri = c->rh;
        msg *s = &mt->pool[si], *r = &mt->pool[ri];
        if (!(s->flags & (MF_DONE | MF_FINAL)) && !final)
            return 0;
        if (s->flags & MF_CANCELLED) {
            mt->cancelled_sends++;
            q_pop(mt, &c->sh);
            msg_free(mt, si);
            continue;
        }
        if (!(r->flags & MF_DONE) && !final && !GONE())
            return 0;
        if (r->flags & MF_CANCELLED) {
            mt->cancelled_recvs++;
            q_pop(mt, &c->rh);
            msg_free(mt, ri);
            continue;
        }
        rstate *rs = r->dst < mt->res->world ? &mt->st[r->dst] : NULL;
        if (rs != NULL && rs->wh == rs->wn)
            rs->wh = rs->wn = 0; /* no wildcard pending (fc__mt_wild_min's answer, without the call) */
        else if (!final && !GONE() && fc__mt_wild_min(mt, rs, r->dst) < r->seq) {
            if (!c->listed) {
                if (fc__grow((void **)&rs->blocked, &rs->nblocked, &rs->cblocked, sizeof *rs->blocked) < 0)
                    return FC_ENOMEM;
                rs->blocked[rs->nblocked++] = ci;
                c->listed = 1;
            }
            return 0;
        }
        int rc = fc__mt_pair(&mt->p, s, r, 0);
        q_pop(mt, &c->sh);
        q_pop(mt, &c->rh);
        msg_free(mt, si);
        msg_free(mt, ri);
        if (rc < 0)
            return rc;
    }
    while (!final && c->rh == NOMSG && c->sh != NOMSG && GONE()) {
        uint32_t si = q_pop(mt, &c->sh);
        const msg *s = &mt->pool[si];
        if (!(s->flags & MF_DONE) && s->req != 0) { /* its completion, if any, finds nothing */
            struct rent *e = slot_get(&mt->st[s->src].slot, s->req);
            if (e != NULL && e->ix == si)
                slot_del(&mt->st[s->src].slot, e);
        }
        int rc = fc__mt_unpaired(mt, si);
        if (rc < 0)
            return rc;
    }
#undef GONE
    if (c->sh == NOMSG && c->rh == NOMSG && !c->listed)
        return chan_release(mt, ci);
    return 0;
}

/* 1 when the receiver of channel c still posts and completes receives (fc__mt_try_pair_all's GONE). */
int fc__mt_chan_rx_live(const matcher *mt, const chan *c)
{
    return c->dst < mt->world && mt->st[c->dst].live;
}

/* 1 when complete receive r may take the send at the head of its channel now: no earlier wildcard
 * receive of its rank is unresolved (fc__mt_try_pair_all's test when none is pending, which it also
 * answers by resetting the list). */
int fc__mt_no_wild_before(matcher *mt, const msg *r)
{
    rstate *rs = &mt->st[r->dst]; /* the receive's own rank: below world */
    if (rs->wh != rs->wn)
        return 0;
    rs->wh = rs->wn = 0;
    return 1;
}

/* Send si (at sm) and complete receive ri (at rm), the last instances of channel ci (taken from its
 * heads, which the caller has advanced), fc__mt_pair as fc__mt_try_pair_all would; the channel, empty now, is released
 * unless its receiver's blocked list holds it. */
int fc__mt_pair_heads(matcher *mt, uint32_t ci, msg *sm, uint32_t si, msg *rm, uint32_t ri)
{
    int rc = fc__mt_pair(&mt->p, sm, rm, 1); /* every caller saw rm complete */
    msg_drop(mt, sm, si);
    msg_drop(mt, rm, ri);
    if (rc < 0)
        return rc;
    return mt->ch[ci].listed ? 0 : chan_release(mt, ci);
}

/* A wildcard receive of rank rs left the unresolved ones: retry the channels it was holding. */
int fc__mt_unblock(matcher *mt, rstate *rs)
{
    /* The list is taken whole: a channel still held by another wildcard lists itself again. */
    uint32_t *list = rs->blocked;
    size_t n = rs->nblocked, cap = rs->cblocked;
    int rc = 0;
    if (n == 0)
        return 0;
    rs->blocked = NULL;
    rs->nblocked = rs->cblocked = 0;
    for (size_t i = 0; i < n; i++)
        mt->ch[list[i]].listed = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = try_pair(mt, list[i], 0);
    if (rs->blocked == NULL) { /* keep the old array for reuse */
        rs->blocked = list;
        rs->cblocked = cap;
    } else
        free(list);
    return rc;
}

/* Queues instance ix, m (resolved) in its channel and pairs what can be paired there. */
int fc__mt_enqueue(matcher *mt, msg *m, uint32_t ix)
{
    uint32_t ci;
    int rc = chan_of(mt, m->comm, ends_of((const char *)m + offsetof(msg, src)), m->tag, &ci);
    if (rc < 0)
        return rc;
    chan *c = &mt->ch[ci];
    if (rc > 0) {
        m->chan = ci;
        /* A new channel: the instance waits alone (try_pair's answer without its tests), unless
         * it is a send whose receiver is gone already. */
        m->next = NOMSG;
        if (m->flags & MF_SEND) {
            c->sh = c->st = ix;
            if (mt->p.sink->advance != NULL && (rc = pend_note(mt, m, ix)) < 0)
                return rc;
            return fc__mt_chan_rx_live(mt, c) ? 0 : fc__mt_try_pair_all(mt, ci, 0);
        }
        c->rh = c->rt = ix;
        return 0;
    }
    /* The common meeting, a complete instance finding its one complete partner alone in the
     * channel, pairs without queueing (try_pair's test, the instance standing at its queue's
     * head): a send that pairs so never waits, nor holds back the watermark. */
    if (m->flags & MF_SEND) {
        if (c->sh == NOMSG && c->rh != NOMSG && c->rh == c->rt && (m->flags & (MF_DONE | MF_FINAL))) {
            uint32_t ri = c->rh;
            msg *r = &mt->pool[ri];
            if ((r->flags & MF_DONE) && !((m->flags | r->flags) & MF_CANCELLED) && fc__mt_no_wild_before(mt, r)) {
                c->rh = NOMSG;
                return fc__mt_pair_heads(mt, ci, m, ix, r, ri);
            }
        }
    } else if (c->rh == NOMSG && c->sh != NOMSG && c->sh == c->st && (m->flags & MF_DONE)) {
        uint32_t si = c->sh;
        msg *sm = &mt->pool[si];
        if ((sm->flags & (MF_DONE | MF_FINAL)) && !((m->flags | sm->flags) & MF_CANCELLED) && fc__mt_no_wild_before(mt, m)) {
            c->sh = NOMSG;
            return fc__mt_pair_heads(mt, ci, sm, si, m, ix);
        }
    }
    m->chan = ci; /* it waits there (one paired at once above needs none) */
    if (m->flags & MF_SEND) {
        q_push(mt, &c->sh, &c->st, m, ix);
        if (mt->p.sink->advance != NULL && (rc = pend_note(mt, m, ix)) < 0)
            return rc;
        /* An incomplete send at the head with receives waiting: try_pair's first answer. */
        if (c->rh != NOMSG && c->sh == ix && !(m->flags & (MF_DONE | MF_FINAL)))
            return 0;
    } else if (c->rh == NOMSG || mt->pool[c->rt].seq < m->seq)
        q_push(mt, &c->rh, &c->rt, m, ix);
    else {
        /* A wildcard resolved late goes back to its posting order among the receives (all of
         * its rank, so that their order numbers differ). */
        uint32_t *at = &c->rh;
        while (mt->pool[*at].seq < m->seq)
            at = &mt->pool[*at].next;
        m->next = *at;
        *at = ix;
    }
    return try_pair(mt, ci, 0);
}
