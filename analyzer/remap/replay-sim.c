/* analyzer/remap/replay-sim.c: runs a replay (replay.h) under one placement of ranks on nodes: a
 * discrete-event simulation of the ranks' programs whose messages move through the fluid network
 * simulation of model.h, the fixed ones (fc__rmsg.fixed) then taking the ranks' own part of their
 * observed time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include "util/internal.h"
#include "model/model.h"
#include "remap/replay.h"

typedef struct rank_st {
    size_t pc;        /* next op */
    double t;         /* when the rank finished its previous op (or was woken) */
    uint32_t pending; /* ops its current WAIT still needs */
    int blocked, done;
    double end;
    uint8_t *opdone, *inwait;
} rank_st;

typedef struct msg_st {
    double send_t, recv_t, start_t, arrive_t;
    int started, arrived;
    int sender_in, receiver_in; /* a fixed message's ends are there (replay.h, fc__rmsg.fixed) */
    double net_t;               /* when its bytes arrived (NAN before) */
    double both_t;              /* when both ends of a fixed message were there (NAN before) */
} msg_st;

/* The arrivals of fixed messages after their bytes (fc__rmsg.fixed_s later), earliest first: a
 * binary heap of (time, message), the lower message first on a tie. */
typedef struct fixed_ev {
    double t;
    uint32_t msg;
} fixed_ev;

typedef struct fheap {
    fixed_ev *v;
    size_t n, cap;
} fheap;

/* The ranks by the time of their next op, in a binary heap indexed by rank: the next rank to run
 * is the one of the earliest time, the lowest rank on a tie, as a scan of all ranks in order would
 * pick it, found in O(1) and kept in order in O(log ranks) for each rank an op or an arrival
 * changes, instead of a scan of every rank at every event. Blocked and finished ranks are at
 * infinity. */
typedef struct rheap {
    uint32_t *h;   /* ranks, the next to run first */
    uint32_t *pos; /* pos[r]: r's place in h */
    double *key;   /* key[r]: r's next op time (INFINITY: blocked or done) */
    uint32_t n;
} rheap;

typedef struct sim {
    const fc__replay *rp;
    const uint32_t *node;
    const fc__replay_opts *o;
    fc__net *net;
    rank_st *rs;
    msg_st *ms;
    rheap q;
    fheap fx;
} sim;

static int fx_before(const fixed_ev *a, const fixed_ev *b)
{
    return a->t < b->t || (a->t == b->t && a->msg < b->msg);
}

static int fx_push(fheap *h, double t, uint32_t msg)
{
    if (fc__grow((void **)&h->v, &h->n, &h->cap, sizeof *h->v) < 0)
        return FC_ENOMEM;
    size_t i = h->n++;
    fixed_ev e = {t, msg};
    while (i > 0 && fx_before(&e, &h->v[(i - 1) / 2])) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = e;
    return 0;
}

static fixed_ev fx_pop(fheap *h)
{
    fixed_ev top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && fx_before(&h->v[c + 1], &h->v[c]))
            c++;
        if (!fx_before(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n > 0)
        h->v[i] = last;
    return top;
}

/* Whether rank a runs before rank b. */
static inline int rh_before(const rheap *q, uint32_t a, uint32_t b)
{
    return q->key[a] < q->key[b] || (q->key[a] == q->key[b] && a < b);
}

static inline void rh_place(rheap *q, uint32_t i, uint32_t r)
{
    q->h[i] = r;
    q->pos[r] = i;
}

/* Recomputes rank r's time and restores the heap's order around it. */
static void rh_update(sim *s, uint32_t r)
{
    rheap *q = &s->q;
    const rank_st *st = &s->rs[r];
    const fc__rprog *pg = &s->rp->prog[r];
    double key = st->done || st->blocked ? INFINITY
                                         : st->t + (st->pc < pg->nops ? pg->ops[st->pc].compute : pg->tail);
    /* A NAN time, which no trace's times should give, compares with nothing and would stall
     * the heap around it: such a rank is left at infinity, never to run, as if blocked. */
    q->key[r] = isnan(key) ? INFINITY : key;
    uint32_t i = q->pos[r];
    while (i > 0 && rh_before(q, r, q->h[(i - 1) / 2])) {
        rh_place(q, i, q->h[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && rh_before(q, q->h[c + 1], q->h[c]))
            c++;
        if (!rh_before(q, q->h[c], r))
            break;
        rh_place(q, i, q->h[c]);
        i = c;
    }
    rh_place(q, i, r);
}

static int rendezvous(const sim *s, const fc__rmsg *m)
{
    return m->sync || m->bytes >= s->o->eager;
}

static void complete(sim *s, uint32_t r, uint32_t op, double t)
{
    rank_st *q = &s->rs[r];
    q->opdone[op] = 1;
    if (q->inwait[op]) {
        q->inwait[op] = 0;
        if (--q->pending == 0) {
            q->blocked = 0;
            q->t = t;
        }
    }
}

static int start(sim *s, uint32_t mi, double t)
{
    const fc__rmsg *m = &s->rp->msgs[mi];
    msg_st *x = &s->ms[mi];
    x->started = 1;
    x->start_t = t;
    if (m->fixed && rendezvous(s, m))
        x->both_t = t; /* both ends posted: its ranks' part follows its bytes */
    return fc__net_start(s->net, t, s->node[m->src], s->node[m->dst], m->bytes, mi);
}

/* A fixed message arrives fixed_s after its bytes and both its ends are there. */
static int fixed_done(sim *s, uint32_t mi)
{
    const msg_st *x = &s->ms[mi];
    double t = x->net_t > x->both_t ? x->net_t : x->both_t;
    return fx_push(&s->fx, t + s->rp->msgs[mi].fixed_s, mi);
}

/* One end of fixed eager message mi is there at t; once both are, and its bytes, its ranks' part
 * follows. */
static int present(sim *s, uint32_t mi, int sender, double t)
{
    msg_st *x = &s->ms[mi];
    if (sender)
        x->sender_in = 1;
    else
        x->receiver_in = 1;
    if (!isnan(x->both_t) || !x->sender_in || !x->receiver_in)
        return 0;
    x->both_t = t;
    return isnan(x->net_t) ? 0 : fixed_done(s, mi);
}

/* Runs the next op of rank r at time t. */
static int exec(sim *s, uint32_t r, double t)
{
    const fc__rprog *pg = &s->rp->prog[r];
    rank_st *q = &s->rs[r];
    q->t = t;
    if (q->pc == pg->nops) {
        q->done = 1;
        q->end = t;
        return 0;
    }
    uint32_t oi = (uint32_t)q->pc++;
    const fc__rop *op = &pg->ops[oi];
    if (op->kind == FC__ROP_WAIT) {
        for (uint32_t i = 0; i < op->n; i++) {
            uint32_t w = pg->waits[op->first + i];
            if (!q->opdone[w] && !q->inwait[w]) {
                q->inwait[w] = 1;
                q->pending++;
                /* The receiver of a fixed eager message is there once in the call that completes
                 * it, as the analysis counts it. */
                const fc__rop *wo = &pg->ops[w];
                if (wo->kind == FC__ROP_RECV && wo->msg != FC__NOMSG && s->rp->msgs[wo->msg].fixed &&
                    !rendezvous(s, &s->rp->msgs[wo->msg])) {
                    int rc = present(s, wo->msg, 0, t);
                    if (rc < 0)
                        return rc;
                }
            }
        }
        q->blocked = q->pending > 0;
        return 0;
    }
    if (op->msg == FC__NOMSG) {
        q->opdone[oi] = 1;
        return 0;
    }
    const fc__rmsg *m = &s->rp->msgs[op->msg];
    msg_st *x = &s->ms[op->msg];
    int rdv = rendezvous(s, m);
    if (m->fixed && !rdv) {
        /* The sender is there at its post, where the bytes leave; a receiver that polls its
         * request is there from the post on. */
        int send = op->kind == FC__ROP_SEND, rc = 0;
        if (send) {
            x->send_t = t;
            q->opdone[oi] = 1;
            rc = start(s, op->msg, t);
        } else {
            x->recv_t = t;
        }
        if (rc < 0)
            return rc;
        return send || (op->flags & FC__ROPF_POLLED) ? present(s, op->msg, send, t) : 0;
    }
    if (op->kind == FC__ROP_SEND) {
        x->send_t = t;
        if (!rdv) {
            q->opdone[oi] = 1;
            return start(s, op->msg, t);
        }
        return !isnan(x->recv_t) ? start(s, op->msg, t) : 0;
    }
    x->recv_t = t;
    if (x->arrived) {
        q->opdone[oi] = 1;
        return 0;
    }
    if (rdv && !isnan(x->send_t) && !x->started)
        return start(s, op->msg, t);
    return 0;
}

static void arrive(sim *s, uint32_t mi, double t)
{
    const fc__rmsg *m = &s->rp->msgs[mi];
    msg_st *x = &s->ms[mi];
    x->arrived = 1;
    x->arrive_t = t;
    if (!isnan(x->recv_t)) {
        complete(s, m->dst, m->recv_op, t);
        rh_update(s, m->dst);
    }
    if (rendezvous(s, m)) {
        complete(s, m->src, m->send_op, t);
        rh_update(s, m->src);
    }
}

/* The simulated inter-node messages as flows, for the conflict decomposition. */
static int make_flows(const sim *s, fc__replay_result *res)
{
    const fc__replay *rp = s->rp;
    size_t n = 0;
    for (size_t i = 0; i < rp->nmsgs; i++)
        n += s->ms[i].arrived && s->node[rp->msgs[i].src] != s->node[rp->msgs[i].dst];
    res->flows = calloc(n ? n : 1, sizeof *res->flows);
    if (res->flows == NULL)
        return FC_ENOMEM;
    for (size_t i = 0; i < rp->nmsgs; i++) {
        const fc__rmsg *m = &rp->msgs[i];
        const msg_st *x = &s->ms[i];
        if (!x->arrived || s->node[m->src] == s->node[m->dst])
            continue;
        fc__flow *f = &res->flows[res->nflows];
        f->id = res->nflows++;
        f->src_rank = m->src;
        f->dst_rank = m->dst;
        f->src_node = s->node[m->src];
        f->dst_node = s->node[m->dst];
        f->bytes = m->bytes;
        f->send_start = x->send_t;
        f->recv_post = x->recv_t;
        f->start = x->start_t;
        f->end = f->recv_end = f->send_end = x->arrive_t;
        f->observed = f->end - f->start;
        f->rendezvous = rendezvous(s, m);
        f->tag = 0;
    }
    return 0;
}

int fc__replay_run(const fc__replay *rp, const uint32_t *rank_node, uint32_t nnodes,
                   const fc__replay_opts *o, fc__replay_result *res)
{
    sim s = {.rp = rp, .node = rank_node, .o = o};
    int rc = FC_ENOMEM;
    memset(res, 0, sizeof *res);
    for (uint32_t r = 0; r < rp->nranks; r++)
        if (rank_node[r] >= nnodes)
            return fc__err(FC_EINVAL, "replay: rank %u has no node (%u of %u)", r, rank_node[r], nnodes);
    if ((rc = fc__net_create(o->profile, o->model, &s.net)) < 0)
        return rc;
    rc = FC_ENOMEM;
    s.rs = calloc(rp->nranks ? rp->nranks : 1, sizeof *s.rs);
    s.ms = malloc((rp->nmsgs ? rp->nmsgs : 1) * sizeof *s.ms);
    if (s.rs == NULL || s.ms == NULL)
        goto out;
    for (size_t i = 0; i < rp->nmsgs; i++)
        s.ms[i] = (msg_st){.send_t = NAN, .recv_t = NAN, .net_t = NAN, .both_t = NAN};
    for (uint32_t r = 0; r < rp->nranks; r++) {
        const fc__rprog *pg = &rp->prog[r];
        s.rs[r].t = pg->start;
        s.rs[r].opdone = calloc(pg->nops ? pg->nops : 1, 1);
        s.rs[r].inwait = calloc(pg->nops ? pg->nops : 1, 1);
        if (s.rs[r].opdone == NULL || s.rs[r].inwait == NULL)
            goto out;
        if (pg->nops == 0 && pg->obs_end == 0 && pg->obs_mpi == 0 && pg->tail == 0) {
            s.rs[r].done = 1; /* a rank without events */
            s.rs[r].end = pg->start;
        }
    }
    s.q.h = malloc((rp->nranks ? rp->nranks : 1) * sizeof *s.q.h);
    s.q.pos = malloc((rp->nranks ? rp->nranks : 1) * sizeof *s.q.pos);
    s.q.key = malloc((rp->nranks ? rp->nranks : 1) * sizeof *s.q.key);
    if (s.q.h == NULL || s.q.pos == NULL || s.q.key == NULL)
        goto out;
    for (uint32_t r = 0; r < rp->nranks; r++) {
        rh_place(&s.q, r, r);
        s.q.key[r] = -INFINITY; /* before every time: rh_update only moves it down */
    }
    s.q.n = rp->nranks;
    for (uint32_t r = rp->nranks; r-- > 0;)
        rh_update(&s, r);
    for (;;) {
        long best = -1;
        double tb = INFINITY;
        if (s.q.n > 0 && isfinite(s.q.key[s.q.h[0]])) {
            best = s.q.h[0];
            tb = s.q.key[best];
        }
        /* A message that completes before the next rank event arrives first; one that completes
         * at its very time after it. A fixed message's arrival (tf) is such an event too, after
         * the network's completions before it. */
        double tf = s.fx.n > 0 ? s.fx.v[0].t : INFINITY;
        double t;
        uint64_t key;
        int got = fc__net_settle(s.net, tf < tb ? tf : tb, &t, &key);
        if (got < 0) {
            rc = got;
            goto out;
        }
        if (got == 1) {
            if (key >= rp->nmsgs)
                continue;
            s.ms[key].net_t = t;
            if (!rp->msgs[key].fixed)
                arrive(&s, (uint32_t)key, t);
            else if (!isnan(s.ms[key].both_t) && (rc = fixed_done(&s, (uint32_t)key)) < 0)
                goto out;
            continue;
        }
        if (tf < tb) {
            fixed_ev e = fx_pop(&s.fx);
            arrive(&s, e.msg, e.t);
            continue;
        }
        if (best >= 0) {
            rc = exec(&s, (uint32_t)best, tb);
            rh_update(&s, (uint32_t)best);
            if (rc < 0)
                goto out;
            continue;
        }
        /* Nothing runs and nothing is in flight: the ranks still blocked wait for messages that
         * never come (a send that relied on eager buffering the threshold denies it, say). They
         * are released so that the run ends; their wait simply takes no time. */
        int stuck = 0;
        for (uint32_t r = 0; r < rp->nranks; r++)
            if (!s.rs[r].done && s.rs[r].blocked) {
                /* Not before the simulation's time, which messages may have moved on. */
                if (s.rs[r].t < fc__net_now(s.net))
                    s.rs[r].t = fc__net_now(s.net);
                s.rs[r].blocked = 0;
                s.rs[r].pending = 0;
                memset(s.rs[r].inwait, 0, rp->prog[r].nops);
                rh_update(&s, r);
                stuck = 1;
            }
        if (!stuck)
            break;
    }
    double sum = 0;
    uint32_t counted = 0;
    for (uint32_t r = 0; r < rp->nranks; r++) {
        const fc__rprog *pg = &rp->prog[r];
        if (pg->nops == 0 && pg->obs_end == 0)
            continue;
        if (s.rs[r].end > res->time)
            res->time = s.rs[r].end;
        double comm = s.rs[r].end - pg->start - pg->obs_compute;
        if (comm < 0)
            comm = 0;
        if (comm > res->comm)
            res->comm = comm;
        sum += comm;
        counted++;
    }
    res->comm_mean = counted ? sum / counted : 0;
    rc = o->want_flows ? make_flows(&s, res) : 0;
    if (rc == 0 && o->want_net) {
        if ((res->net_s = malloc((rp->nmsgs ? rp->nmsgs : 1) * sizeof *res->net_s)) == NULL)
            rc = FC_ENOMEM;
        for (size_t i = 0; rc == 0 && i < rp->nmsgs; i++)
            res->net_s[i] = !rp->msgs[i].fixed     ? s.ms[i].net_t - s.ms[i].start_t
                            : isnan(s.ms[i].both_t) ? NAN
                                                    : fmax(0, s.ms[i].net_t - s.ms[i].both_t);
    }
out:
    if (s.rs)
        for (uint32_t r = 0; r < rp->nranks; r++) {
            free(s.rs[r].opdone);
            free(s.rs[r].inwait);
        }
    free(s.rs);
    free(s.ms);
    free(s.q.h);
    free(s.q.pos);
    free(s.q.key);
    free(s.fx.v);
    fc__net_free(s.net);
    if (rc < 0)
        fc__replay_result_clear(res);
    return rc;
}

int fc__replay_split(fc__replay *rp, const fc__replay_opts *o)
{
    fc__replay_opts so = *o;
    fc__replay_result res;
    so.want_flows = 0;
    so.want_net = 1;
    for (size_t i = 0; i < rp->nmsgs; i++)
        rp->msgs[i].fixed_s = 0;
    int rc = fc__replay_run(rp, rp->rank_node, rp->nnodes, &so, &res);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < rp->nmsgs; i++) {
        fc__rmsg *m = &rp->msgs[i];
        double d = m->fixed_obs - res.net_s[i];
        if (m->fixed && d > 0) /* not for a message that never moved (NAN) */
            m->fixed_s = d;
    }
    fc__replay_result_clear(&res);
    return 0;
}

void fc__replay_result_clear(fc__replay_result *res)
{
    free(res->flows);
    free(res->net_s);
    memset(res, 0, sizeof *res);
}
