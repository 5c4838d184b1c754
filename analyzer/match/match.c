/* analyzer/match/match.c: pairs every send of a trace with its receive and builds the flows of flow.h.
 *
 * The ranks' events are read once, all ranks together in order of aligned time (fc_merge), into
 * one small record per message instance: blocking sends and receives, nonblocking posts joined to
 * their completions through the reader's request ids, each Start of a persistent request, both
 * halves of a Sendrecv, Mrecv and Imrecv. A receive's envelope is resolved through its status (the
 * actual source and tag), so that matching is MPI's ordered match on (communicator, source,
 * destination, tag): the k-th send posted with that key meets the k-th receive posted with it.
 * Each key is a channel with a queue of sends and a queue of receives in posting order; a pair
 * leaves as soon as both its instances are complete, and no earlier wildcard receive of the
 * receiving rank is still unresolved (it could yet take the send). So the instances held are the
 * messages in flight, not the trace: O(1) per message with hashing, and memory bounded by what is
 * outstanding at one time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "match/matcher.h"

static int rank_keys(rstate *s)
{
    return fc__comm_keys(s->r, &s->ckeys, &s->nckeys);
}

static uint64_t key_of(const rstate *s, uint64_t id)
{
    return id < s->nckeys ? s->ckeys[id] : fc__mt_undefined_key(s->r, id);
}

/* The template of persistent request req on rank s, made (zeroed) when new; NULL when out of
 * memory. */
static tmpl *tmpl_put(rstate *s, uint64_t req)
{
    struct rent *e = rmap_get(&s->tmpls, req);
    if (e == NULL) {
        uint32_t ix;
        if (s->ntfree > 0)
            ix = s->tfree[--s->ntfree];
        else {
            size_t c = s->ctpl;
            if (s->ntpl >= UINT32_MAX || fc__reserve(&s->tpl, &c, s->ntpl + 1, sizeof *s->tpl) ||
                fc__reserve(&s->tfree, &s->ctfree, c, sizeof *s->tfree))
                return NULL;
            s->ctpl = c;
            ix = (uint32_t)s->ntpl++;
        }
        if ((e = fc__mt_rmap_put(&s->tmpls, req)) == NULL) {
            s->tfree[s->ntfree++] = ix;
            return NULL;
        }
        e->ix = ix;
    }
    memset(&s->tpl[e->ix], 0, sizeof s->tpl[e->ix]);
    return &s->tpl[e->ix];
}

/* The state of thread t of rank s, not seen yet: the array grows. NULL when out of memory. */
static __attribute__((noinline)) thr *thread_new(rstate *s, uint32_t t)
{
    size_t n = (size_t)t + 1;
    thr *p = realloc(s->thr, n * sizeof *p);
    if (p == NULL)
        return NULL;
    memset(p + s->nthr, 0, (n - s->nthr) * sizeof *p);
    s->thr = p;
    s->nthr = n;
    return &s->thr[t];
}


/* The flags a send takes from its kind, looked up rather than tested kind by kind: MF_SYNC for the
 * synchronous ones (fc__is_sync_kind), MF_BUFFERED for the buffered ones, which return once their
 * data is copied and never wait for the receiver. Kinds are below FC_EV_MAX_ (the decoder rejects
 * others). */
static const uint16_t send_flags[FC_EV_MAX_] = {
    [FC_EV_MPI_Ssend] = MF_SYNC,      [FC_EV_MPI_Issend] = MF_SYNC,     [FC_EV_MPI_Ssend_init] = MF_SYNC,
    [FC_EV_MPI_Bsend] = MF_BUFFERED, [FC_EV_MPI_Ibsend] = MF_BUFFERED, [FC_EV_MPI_Bsend_init] = MF_BUFFERED,
};

/* Fills *m with the message a call describes, before it is posted. */
static inline __attribute__((always_inline)) void describe(msg *m, const rstate *s, const fc_record *rec, int send)
{
    /* Every field set but seq and chan (post's), without clearing the entry first. */
    m->comm = key_of(s, rec->comm);
    m->src = send ? rec->rank : (uint32_t)rec->peer;
    m->dst = send ? (uint32_t)rec->peer : rec->rank;
    m->tag = rec->ev.tag;
    m->bytes = rec->ev.bytes;
    m->post = rec->t0;
    m->end = rec->t1;
    m->wait_t0 = rec->t0;
    m->site = m->wait_site = rec->ev.site;
    m->kind = rec->ev.kind;
    /* req is post's to set, and call is read only once call_ref has set it (MF_WAITED without
     * MF_SOLE). */
    if (send)
        m->flags = send_flags[rec->ev.kind & (FC_EV_MAX_ - 1)];
    else
        m->flags = rec->peer == FC_PEER_ANY || rec->ev.tag == FC_TAG_ANY ? MF_WILD : 0;
}

/* 1 when the record's peer is a real partner; PROC_NULL is counted, unmapped peers dropped. */
static int real_peer(fc__match *res, const fc_record *rec, int send)
{
    if (rec->peer >= 0) /* the common case first: PROC_NULL and ANY are negative */
        return 1;
    if (rec->peer == FC_PEER_NULL) {
        res->proc_null++;
        return 0;
    }
    return !send && rec->peer == FC_PEER_ANY;
}

/* Records posted instance ix, m (blocking or not, just filled in after msg_new) and binds it to its
 * request id when it has one. memo is the remembered entry of its call (call_ref). */
static inline __attribute__((always_inline)) int post(matcher *mt, rstate *s, msg *m, uint32_t ix, int send, int done,
                                                     int sole, uint64_t req, uint32_t *memo)
{
    int rc;
    m->flags |= MF_LIVE;
    m->seq = s->seq++;
    if (done)
        m->flags |= MF_DONE | MF_WAITED;
    if (send)
        m->flags |= MF_SEND;
    if (send) /* the receives are the rest of the posts, which seq counts */
        mt->posted_sends++;
    /* A blocking send or receive is its call's only message (sole, which the caller knows from
     * the kind); a Sendrecv has two. */
    if (done && sole)
        m->flags |= MF_SOLE;
    if (done && !(m->flags & MF_SOLE) && (rc = call_ref(&mt->p, m, s->rank, memo)) < 0)
        return rc;
    if (!done && (m->req = req) != 0) { /* a complete one's req is never read */
        struct rent *e = slot_put(&s->slot, req, m->seq);
        if (e == NULL)
            return FC_ENOMEM;
        e->ix = ix;
    }
    if (!send && (m->flags & MF_WILD)) {
        if (done) { /* completed, yet its envelope is unknown */
            rc = fc__mt_add_unmatched(&mt->p, m, 0, FC_UNMATCHED_UNRESOLVED);
            msg_free(mt, ix);
            return rc;
        }
        if (fc__grow((void **)&s->wild, &s->wn, &s->wcap, sizeof *s->wild) < 0)
            return FC_ENOMEM;
        s->wild[s->wn++] = (struct wild){ix, m->seq};
        m->chan = NOCHAN; /* until resolved (every other instance takes its channel now) */
        return 0;
    }
    return fc__mt_enqueue(mt, m, ix);
}

/* A COMPLETE of a request: fills the instance it completes from the record and the call around it. */
static int complete(matcher *mt, rstate *s, const fc_record *rec, thr *call)
{
    struct rent *e = rec->req ? slot_get(&s->slot, rec->req) : NULL;
    if (e == NULL)
        return 0;
    uint32_t ix = e->ix;
    slot_del(&s->slot, e);
    msg *m = &mt->pool[ix];
    int wild = (m->flags & MF_WILD) != 0;
    m->flags |= MF_DONE | MF_WAITED;
    if (call->kind == FC_EV_MPI_Test || call->kind == FC_EV_MPI_Testany || call->kind == FC_EV_MPI_Testsome ||
        call->kind == FC_EV_MPI_Testall)
        m->flags |= MF_TESTED;
    if (call->kind == FC_EV_MPI_Waitall || call->kind == FC_EV_MPI_Waitsome)
        m->flags |= MF_WAITMULTI;
    m->end = rec->t1;
    m->wait_t0 = call->t0;
    m->wait_site = call->site;
    if (call_ref(&mt->p, m, s->rank, &call->call) < 0)
        return FC_ENOMEM;
    if (rec->ev.flags & FC_EVF_CANCELLED)
        m->flags |= MF_CANCELLED;
    if (!(m->flags & MF_SEND) && (rec->ev.flags & FC_EVF_STATUS)) {
        if (rec->peer >= 0) {
            m->src = (uint32_t)rec->peer;
            m->tag = rec->ev.tag;
            m->bytes = rec->ev.bytes;
            m->flags = (m->flags & ~(uint32_t)MF_WILD) | MF_STATUS;
        } else if (rec->peer == FC_PEER_NULL) {
            m->flags |= MF_CANCELLED; /* a wildcard that received from MPI_PROC_NULL: no message */
        }
    }
    if (!wild)
        return m->chan == NOCHAN ? 0 : try_pair(mt, m->chan, 0);
    /* A wildcard receive leaves the unresolved ones, whatever became of it. */
    int rc = 0;
    if (m->flags & MF_CANCELLED) {
        mt->cancelled_recvs++;
        msg_free(mt, ix);
    } else if (m->flags & MF_WILD) {
        rc = fc__mt_add_unmatched(&mt->p, m, 0, FC_UNMATCHED_UNRESOLVED);
        msg_free(mt, ix);
    } else if (m->src >= mt->res->world) {
        rc = fc__mt_add_unmatched(&mt->p, m, 0, FC_UNMATCHED_NO_PARTNER);
        msg_free(mt, ix);
    } else {
        rc = fc__mt_enqueue(mt, m, ix);
    }
    return rc < 0 ? rc : fc__mt_unblock(mt, s);
}

/* A COMPLETE record: the receive half of the Sendrecv just before it (obj 0, no request), or the
 * completion of a request. */
static int on_complete(matcher *mt, rstate *s, const fc_record *rec, thr *th)
{
    if (rec->req != 0 || rec->ev.obj != 0 ||
        (th->kind != FC_EV_MPI_Sendrecv && th->kind != FC_EV_MPI_Sendrecv_replace))
        return complete(mt, s, rec, th);
    if (!real_peer(mt->res, rec, 0))
        return 0;
    /* Posted and completed by the Sendrecv call itself. */
    uint32_t ix;
    msg *m = msg_new(mt, &ix);
    if (m == NULL)
        return FC_ENOMEM;
    describe(m, s, rec, 0);
    m->post = m->wait_t0 = th->t0;
    m->end = th->t1;
    m->kind = th->kind;
    m->site = m->wait_site = th->site;
    m->flags = MF_STATUS;
    return post(mt, s, m, ix, 0, 1, 0, 0, &th->call);
}

/* Applies one record of rank s. */
static int on_record(matcher *mt, rstate *s, const fc_record *rec)
{
    fc__match *res = mt->res;
    uint32_t k = rec->ev.kind;
    int rc = 0;
    uint32_t memo = 0; /* the entry of this call, when it makes one (a Sendrecv) */
    thr *th;
    if (rec->ev.thread < s->nthr)
        th = &s->thr[rec->ev.thread];
    else if ((th = thread_new(s, rec->ev.thread)) == NULL)
        return FC_ENOMEM;
    msg *m;
    uint32_t ix;
    /* The commonest record, a completion, ahead of the switch; it leaves its call open. */
    if (k == FC_EV_COMPLETE) {
        rc = on_complete(mt, s, rec, th);
        return rc < 0 ? rc : 0;
    }
    /* A run of polls that found nothing (its first call was read already) and the tracer's own
     * waits: neither posts, completes nor ends a call. */
    if (k == FC_EV_TRACER_WAIT) {
        double w = (double)(rec->t1 - rec->t0) * 1e-9;
        res->tracer_waits++;
        res->tracer_wait_s += w;
        s->tracer_wait_s += w;
        if (s->tracer_wait_s > res->tracer_wait_rank_s) {
            res->tracer_wait_rank_s = s->tracer_wait_s;
            res->tracer_wait_rank = s->rank;
        }
        return 0;
    }
    if (k == FC_EV_POLLS)
        return 0;
    /* A call that returned an error posted nothing; its sub-records still name requests. */
    if ((rec->ev.flags & FC_EVF_ERROR) && k != FC_EV_START)
        k = 0;
    /* Sends and receives, blocking or not, each with their own copy of describe and post (inlined),
     * so that these test constants rather than branch again on what the switch found. */
    switch (k) {
    case FC_EV_MPI_Send: case FC_EV_MPI_Bsend: case FC_EV_MPI_Ssend: case FC_EV_MPI_Rsend:
        if (real_peer(res, rec, 1)) {
            if ((m = msg_new(mt, &ix)) == NULL)
                return FC_ENOMEM;
            describe(m, s, rec, 1);
            rc = post(mt, s, m, ix, 1, 1, 1, 0, &memo);
        }
        break;
    case FC_EV_MPI_Recv: case FC_EV_MPI_Mrecv:
        if (real_peer(res, rec, 0)) {
            if ((m = msg_new(mt, &ix)) == NULL)
                return FC_ENOMEM;
            describe(m, s, rec, 0);
            m->flags = (m->flags & ~(uint32_t)MF_WILD) | MF_STATUS; /* actual envelope */
            rc = post(mt, s, m, ix, 0, 1, 1, 0, &memo);
        }
        break;
    case FC_EV_MPI_Isend: case FC_EV_MPI_Ibsend: case FC_EV_MPI_Issend: case FC_EV_MPI_Irsend:
        if (real_peer(res, rec, 1)) {
            if ((m = msg_new(mt, &ix)) == NULL)
                return FC_ENOMEM;
            describe(m, s, rec, 1); /* its end, read once complete, is set then */
            rc = post(mt, s, m, ix, 1, 0, 0, rec->req, &memo);
        }
        break;
    case FC_EV_MPI_Irecv: case FC_EV_MPI_Imrecv:
        if (real_peer(res, rec, 0)) {
            if ((m = msg_new(mt, &ix)) == NULL)
                return FC_ENOMEM;
            describe(m, s, rec, 0);
            rc = post(mt, s, m, ix, 0, 0, 0, rec->req, &memo);
        }
        break;
    case FC_EV_MPI_Sendrecv: case FC_EV_MPI_Sendrecv_replace:
        if (real_peer(res, rec, 1)) {
            if ((m = msg_new(mt, &ix)) == NULL)
                return FC_ENOMEM;
            describe(m, s, rec, 1);
            rc = post(mt, s, m, ix, 1, 1, 0, 0, &memo);
        }
        break;
    case FC_EV_MPI_Send_init: case FC_EV_MPI_Bsend_init: case FC_EV_MPI_Ssend_init:
    case FC_EV_MPI_Rsend_init: case FC_EV_MPI_Recv_init:
        if (rec->req != 0) {
            tmpl *t = tmpl_put(s, rec->req);
            if (t == NULL)
                return FC_ENOMEM;
            t->used = 1 + (k != FC_EV_MPI_Recv_init); /* 2: a send */
            describe(&t->m, s, rec, k != FC_EV_MPI_Recv_init);
            if (rec->peer < 0 && rec->peer != FC_PEER_ANY)
                t->used = 0;
            if (rec->peer == FC_PEER_NULL)
                res->proc_null++;
        }
        break;
    case FC_EV_MPI_Start: case FC_EV_START:
        /* Each Start is a new message instance, posted when the Start (or Startall) is entered. */
        {
            const struct rent *e = rec->req ? rmap_get(&s->tmpls, rec->req) : NULL;
            if (e != NULL && s->tpl[e->ix].used) {
                if ((m = msg_new(mt, &ix)) == NULL)
                    return FC_ENOMEM;
                *m = s->tpl[e->ix].m;
                m->post = m->wait_t0 = k == FC_EV_START ? th->t0 : rec->t0;
                /* The message is posted where the Start is called, not where its template was
                 * made: one init can serve Starts all over the code, and an OTF2 archive (Score-P
                 * writes no record at an init) can give back only the Start's site. */
                m->site = k == FC_EV_START ? th->site : rec->ev.site;
                m->end = 0;
                rc = post(mt, s, m, ix, s->tpl[e->ix].used == 2, 0, 0, rec->req, &memo);
            }
        }
        break;
    case FC_EV_MPI_Request_free:
        {
            struct rent *e = rec->req ? rmap_get(&s->tmpls, rec->req) : NULL;
            if (e != NULL) {
                s->tfree[s->ntfree++] = e->ix; /* tfree is as long as tpl: never full */
                fc__mt_rmap_del(&s->tmpls, e);
            }
            /* A send freed while outstanding is never seen complete: it pairs as it is now
             * rather than holding back every flow after it until the end. */
            e = rec->req ? slot_get(&s->slot, rec->req) : NULL;
            if (e != NULL && (mt->pool[e->ix].flags & (MF_LIVE | MF_SEND)) == (MF_LIVE | MF_SEND)) {
                msg *fm = &mt->pool[e->ix];
                uint32_t ch = fm->chan;
                fm->flags |= MF_FINAL;
                fm->req = 0;
                slot_del(&s->slot, e);
                if (ch != NOCHAN)
                    rc = try_pair(mt, ch, 0);
            }
        }
        break;
    default:
        /* Collectives and communicator constructors are the collective layer's: counted, so that
         * a trace without any is not read again for them. */
        res->coll_records += (k >= FC_EV_MPI_Barrier && k <= FC_EV_MPI_Iexscan) ||
                             (k >= FC_EV_MPI_Comm_dup && k <= FC_EV_MPI_Cart_sub) ||
                             (k >= FC_EV_MPI_Neighbor_allgather && k <= FC_EV_MPI_Scan_init) ||
                             k == FC_EV_MPI_Exscan_init;
        break;
    }
    if (rc < 0)
        return rc;
    if (k != FC_EV_START) {
        /* The thread's previous call takes no more completions. Most calls made no entry, and most
         * ranks have none open then: fc__mt_call_close would find nothing. */
        uint32_t rank = s->rank; /* below world: s is st[rank] */
        if ((th->call != 0 || s->nopen != 0) &&
            (rc = fc__mt_call_close(&mt->p, rank, th->site, th->t0, th->call)) < 0)
            return rc;
        th->kind = k;
        th->call = memo;
        th->t0 = rec->t0;
        th->t1 = rec->t1;
        th->site = rec->ev.site;
    }
    return 0;
}

/* Rank w's records are all read: its unresolved wildcard receives stay unmatched, and its
 * channels fc__mt_pair or drop what they hold (try_pair's gone receiver). */
static int rank_ended(matcher *mt, uint32_t w)
{
    rstate *rs = &mt->st[w];
    int rc = 0;
    rs->ended = 1;
    rs->live = 0;
    /* Its sends still outstanding will not complete either: they fc__mt_pair as they are, as at the end
     * of the trace, instead of holding back every flow after them. */
    size_t nreq = rs->slot.n, nchans = 0;
    uint32_t *chans = nreq ? malloc(nreq * sizeof *chans) : NULL;
    struct rent **reqs = nreq ? malloc(nreq * sizeof *reqs) : NULL;
    if (nreq && (chans == NULL || reqs == NULL)) {
        free(chans);
        free(reqs);
        return FC_ENOMEM;
    }
    if (nreq)
        fc__mt_slot_list(&rs->slot, reqs); /* in posting order: the order their channels are tried in */
    for (size_t i = 0; i < nreq; i++) {
        msg *m = &mt->pool[reqs[i]->ix];
        if ((m->flags & (MF_LIVE | MF_SEND)) == (MF_LIVE | MF_SEND) && m->src == w) {
            m->flags |= MF_FINAL;
            if (m->chan != NOCHAN)
                chans[nchans++] = m->chan;
        }
    }
    free(reqs);
    for (size_t i = 0; i < nchans && rc == 0; i++)
        if (!mt->ch[chans[i]].dead)
            rc = try_pair(mt, chans[i], 0);
    free(chans);
    if (rc < 0)
        return rc;
    while (rc == 0 && fc__mt_wild_min(mt, rs, w) != UINT64_MAX) {
        uint32_t ix = rs->wild[rs->wh].m;
        rc = fc__mt_add_unmatched(&mt->p, &mt->pool[ix], 0, FC_UNMATCHED_UNRESOLVED);
        msg_free(mt, ix);
    }
    for (size_t i = 0; i < rs->nblocked; i++)
        mt->ch[rs->blocked[i]].listed = 0;
    rs->nblocked = 0;
    for (uint32_t ci = 0; ci < mt->nch && rc == 0; ci++)
        if (!mt->ch[ci].dead && mt->ch[ci].dst == w)
            rc = try_pair(mt, ci, 0);
    return rc;
}

/* Rank file i has no more records. */
static int file_ended(matcher *mt, fc_trace *t, size_t i)
{
    uint32_t w = fc_trace_rank(t, i)->info.rank;
    return w < mt->res->world && mt->st[w].r != NULL ? rank_ended(mt, w) : 0;
}

/* The end of the trace: what is still unresolved stays unmatched, the channels fc__mt_pair what they
 * hold as it is, and whatever is left has no partner. */
static int drain(matcher *mt)
{
    int rc = 0;
    for (uint32_t w = 0; w < mt->res->world && rc == 0; w++) {
        rstate *rs = &mt->st[w];
        while (rc == 0 && fc__mt_wild_min(mt, rs, w) != UINT64_MAX) {
            uint32_t ix = rs->wild[rs->wh].m;
            rc = fc__mt_add_unmatched(&mt->p, &mt->pool[ix], 0, FC_UNMATCHED_UNRESOLVED);
            msg_free(mt, ix);
        }
    }
    for (uint32_t ci = 0; ci < mt->nch && rc == 0; ci++) {
        chan *c = &mt->ch[ci];
        if (c->dead)
            continue;
        if ((rc = try_pair(mt, ci, 1)) < 0)
            break;
        while (c->sh != NOMSG && rc == 0)
            rc = fc__mt_unpaired(mt, q_pop(mt, &c->sh));
        while (c->rh != NOMSG && rc == 0)
            rc = fc__mt_unpaired(mt, q_pop(mt, &c->rh));
    }
    return rc;
}

static void matcher_free(matcher *mt)
{
    for (uint32_t w = 0; mt->st && w < mt->res->world; w++) {
        rstate *s = &mt->st[w];
        free(s->ckeys);
        fc__mt_slot_free(&s->slot);
        fc__mt_rmap_free(&s->tmpls);
        free(s->tpl);
        free(s->tfree);
        free(s->thr);
        free(s->wild);
        free(s->blocked);
        free(s->pq);
    }
    free(mt->st);
    free(mt->pool);
    free(mt->ch);
    free(mt->tab);
    free(mt->fresh);
    free(mt->p.calls);
    free(mt->p.rhead);
    free(mt->p.rmax);
    free(mt->p.stab);
    free(mt->p.unc);
    free(mt->p.slast);
}

int fc__match_stream(fc_trace *t, uint64_t eager_threshold, const fc__match_sink *sink, fc__match **out)
{
    matcher mt;
    fc_cursor **cur = NULL;
    fc_record *recs = NULL;
    uint8_t *have = NULL;
    rstate **fst = NULL; /* by file: the state of its rank, or NULL */
    size_t nr = 0;
    int rc = FC_ENOMEM;
    memset(&mt, 0, sizeof mt);
    mt.free1 = NOMSG;
    mt.chfree1 = NOCHAN;
    fc__match *res = calloc(1, sizeof *res);
    *out = NULL;
    if (res == NULL)
        goto out;
    mt.res = res;
    res->eager_threshold = eager_threshold ? eager_threshold : FC_MATCH_EAGER_DEFAULT;
    res->world = fc_trace_world_size(t);
    for (size_t i = 0; i < fc_trace_nranks(t); i++)
        if (fc_trace_rank(t, i)->info.rank >= res->world)
            res->world = fc_trace_rank(t, i)->info.rank + 1;
    size_t w = res->world ? res->world : 1;
    mt.world = res->world;
    res->rank_node = malloc(w * sizeof *res->rank_node);
    res->late_sender = calloc(w, sizeof *res->late_sender);
    res->late_receiver = calloc(w, sizeof *res->late_receiver);
    res->clock_unc = calloc(w, sizeof *res->clock_unc);
    mt.st = calloc(w, sizeof *mt.st);
    mt.p.st = mt.st;
    mt.p.unc = calloc(w, sizeof *mt.p.unc);
    mt.p.slast = calloc(w, sizeof *mt.p.slast);
    mt.tcap = 1024;
    mt.tab = calloc(mt.tcap, sizeof *mt.tab);
    mt.p.rhead = calloc(w + 1, sizeof *mt.p.rhead);
    mt.p.rmax = calloc(w + 1, sizeof *mt.p.rmax);
    if (mt.tab == NULL || mt.p.slast == NULL || mt.p.rhead == NULL || mt.p.rmax == NULL || res->rank_node == NULL || res->late_sender == NULL || res->late_receiver == NULL || mt.st == NULL ||
        mt.p.unc == NULL || res->clock_unc == NULL)
        goto out;
    for (size_t i = 0; i < w; i++) {
        fc__mt_slot_init(&mt.st[i].slot);
        fc__mt_rmap_init(&mt.st[i].tmpls);
    }
    if ((rc = fc__mt_number_nodes(t, res)) < 0)
        goto out;
    if ((rc = fc__mt_traffic_acc_new(res)) < 0)
        goto out;
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        rstate *s = &mt.st[r->info.rank];
        mt.p.unc[r->info.rank] = fc_rank_clock_uncertainty(r);
        res->clock_unc[r->info.rank] = (double)mt.p.unc[r->info.rank] * 1e-9;
        s->r = r;
        s->rank = r->info.rank;
        s->live = 1;
        if ((rc = rank_keys(s)) < 0)
            goto out;
    }
    mt.p.res = res;
    mt.p.sink = sink;
    mt.p.flow = sink->flow;
    mt.p.arg = sink->arg;
    mt.p.origin = fc_trace_origin(t);
    if (sink->start != NULL && (rc = sink->start(sink->arg, res)) != 0)
        goto out;
    /* The ranks are read a time window at a time, each up to the window's end: pairing does not
     * depend on the order across ranks (each channel's sends come from one rank, its receives
     * from another), and windows keep the ranks within a window of each other, so that the
     * messages in flight are the only ones held, at O(1) per record where a merge of all ranks
     * would cost a heap operation each. The window adapts to hold lo to hi records. */
    nr = fc_trace_nranks(t);
    cur = calloc(nr + 1, sizeof *cur);
    recs = calloc(NRECS, sizeof *recs);
    have = calloc(nr + 1, 1);
    fst = calloc(nr + 1, sizeof *fst);
    if (cur == NULL || recs == NULL || have == NULL || fst == NULL) {
        rc = FC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < nr; i++) { /* a file's records all carry its rank */
        uint32_t rk = fc_trace_rank(t, i)->info.rank;
        fst[i] = rk < res->world && mt.st[rk].r != NULL ? &mt.st[rk] : NULL;
    }
    int64_t from = INT64_MAX, span = 1000000; /* ns */
    /* Small windows keep the flows just matched in cache when the sweep takes them, but each
     * window visits every rank: a few records per rank at least. On the 10^7-event bench trace (64
     * ranks), read 32 records at a time, windows of 256-2048 records took about 2.5 % less CPU than
     * 1-8 thousand, and 7 % less than 2-16 thousand; 128-1024 took 4 % more. Read 128 at a time
     * (NRECS), 256-2048, 512-4096 and 1-8 thousand came within 1 % of each other. */
    uint64_t lo = 256 > 4 * nr ? 256 : 4 * nr, hi = 8 * lo;
    for (size_t i = 0; i < nr; i++) {
        int64_t t0;
        if ((rc = fc_cursor_open(t, i, &cur[i])) < 0 || (rc = fc__cursor_peek(cur[i], &t0)) < 0)
            goto out;
        have[i] = rc > 0;
        if (have[i] && t0 < from)
            from = t0;
    }
    for (size_t i = 0; i < nr; i++)
        if (!have[i] && (rc = file_ended(&mt, t, i)) < 0)
            goto out;
    for (size_t left = nr; left > 0;) {
        int64_t end = from > INT64_MAX - span ? INT64_MAX : from + span;
        /* The window takes the records with t0 < end, every one at the end of time: t0 <= last. */
        int64_t last = end == INT64_MAX ? INT64_MAX : end - 1;
        uint64_t n = 0;
        left = 0;
        for (size_t i = 0; i < nr; i++) {
            if (!have[i])
                continue;
            rstate *s = fst[i];
            fc_cursor *c = cur[i];
            int more = 1;
            /* A batch at a time: a call per batch rather than per record. */
            for (size_t got = NRECS; more && got == NRECS;) {
                if ((rc = fc__cursor_fill(c, last, recs, NRECS, &got)) < 0)
                    goto out;
                more = rc;
                for (size_t j = 0; s != NULL && j < got; j++)
                    if ((rc = on_record(&mt, s, &recs[j])) < 0)
                        goto out;
                n += got;
            }
            if (!more && (rc = file_ended(&mt, t, i)) < 0)
                goto out;
            have[i] = (uint8_t)more;
            left += more;
        }
        /* Say how far the flows are known: none to come starts before the earliest waiting send,
         * nor before the records not read yet. */
        if (sink->advance != NULL) {
            int64_t wm = fc__mt_pend_min(&mt, &rc);
            if (rc < 0)
                goto out;
            if (end < wm)
                wm = end;
            /* The START records of a Startall come at its exit, but post their sends at its entry:
             * a Startall whose exit is not read yet may still post before the window's end. */
            for (uint32_t r = 0; r < res->world; r++)
                for (size_t k = 0; !mt.st[r].ended && k < mt.st[r].nthr; k++) {
                    const thr *th = &mt.st[r].thr[k];
                    if (th->kind == FC_EV_MPI_Startall && th->t1 >= end && th->t0 < wm)
                        wm = th->t0;
                }
            if ((rc = sink->advance(sink->arg, (double)(wm - mt.p.origin) * 1e-9)) != 0)
                goto out;
        }
        if (n < lo && span < INT64_MAX / 4)
            span *= 2;
        else if (n > hi && span > 1)
            span /= 2;
        from = end;
    }
    rc = 0;
    if (rc < 0 || (rc = drain(&mt)) < 0)
        goto out;
    if ((rc = fc__mt_traffic_finish(res)) < 0)
        goto out;
    res->cancelled = mt.cancelled_sends + mt.cancelled_recvs;
    res->sends = mt.posted_sends - mt.cancelled_sends;
    for (uint32_t r = 0; r < res->world; r++)
        mt.posted_recvs += mt.st[r].seq;
    mt.posted_recvs -= mt.posted_sends;
    res->recvs = mt.posted_recvs - mt.cancelled_recvs;
    /* Every message has left: the calls still open are summed, and the sites put in order. */
    size_t nlive = mt.p.clive;
    uint32_t *live = malloc((nlive + 1) * sizeof *live);
    if (live == NULL || fc__mt_call_live(&mt.p, live, 0) < 0) {
        free(live);
        rc = FC_ENOMEM;
        goto out;
    }
    for (size_t j = 0; j < nlive && rc == 0; j++)
        rc = fc__mt_call_flush(&mt.p, live[j]);
    free(live);
    if (rc == 0 && mt.p.nomem)
        rc = FC_ENOMEM;
    if (rc < 0)
        goto out;
    fc__sort(res->sites, res->nsites, sizeof *res->sites, fc__mt_cmp_site);
    fc__sort(res->unmatched, res->nunmatched, sizeof *res->unmatched, fc__mt_cmp_unmatched);
    *out = res;
    res = NULL;
    rc = 0;
out:
    for (size_t i = 0; cur != NULL && i < nr; i++)
        fc_cursor_close(cur[i]);
    free(cur);
    free(recs);
    free(have);
    free(fst);
    matcher_free(&mt);
    fc__match_free(res);
    return rc;
}


/* fc__match_trace's sink: every flow kept, in the order of delivery, with its wait entries. */
typedef struct keep_all {
    const fc__match *res;
    size_t n, cap, wn, wcap;
    fc__flow *flows;
    fc__flow_waits *waits;
} keep_all;

static int keep_start(void *arg, const fc__match *m)
{
    ((keep_all *)arg)->res = m;
    return 0;
}

static int keep_flow(void *arg, const fc__flow *f)
{
    keep_all *k = arg;
    if (fc__grow((void **)&k->flows, &k->n, &k->cap, sizeof *k->flows) < 0 ||
        fc__grow((void **)&k->waits, &k->wn, &k->wcap, sizeof *k->waits) < 0)
        return FC_ENOMEM;
    k->flows[k->n++] = *f;
    k->waits[k->wn++] = k->res->cur_waits;
    return 0;
}

int fc__match_trace(fc_trace *t, uint64_t eager_threshold, fc__match **out)
{
    keep_all k = {0};
    fc__match_sink sink = {.arg = &k, .start = keep_start, .flow = keep_flow};
    int rc = fc__match_stream(t, eager_threshold, &sink, out);
    if (rc < 0) {
        free(k.flows);
        free(k.waits);
        return rc;
    }
    fc__match *res = *out;
    /* The array grew by doubling: give back the slack, up to half of what the flows take, which
     * the analysis keeps to its end. */
    fc__flow *fit = k.n > 0 && k.n < k.cap ? realloc(k.flows, k.n * sizeof *k.flows) : NULL;
    res->flows = fit != NULL ? fit : k.flows;
    /* Order the flows and give ids; the worst violation's index is remapped through a marker. */
    if (res->clock_violations)
        res->flows[res->worst_flow].id = UINT64_MAX;
    uint64_t marked = res->worst_flow, send_worst = res->worst_send_flow;
    fc__sort_flows(res->flows, res->nflows);
    /* The wait entries follow their flows to the new ids, read from the old ones. */
    res->waits = malloc((res->nflows ? res->nflows : 1) * sizeof *res->waits);
    if (res->waits == NULL) {
        free(k.waits);
        fc__match_free(res);
        *out = NULL;
        return FC_ENOMEM;
    }
    res->ninter = 0;
    for (size_t i = 0; i < res->nflows; i++) {
        uint64_t old = res->flows[i].id;
        if (res->clock_violations && old == UINT64_MAX) {
            res->worst_flow = i;
            old = marked;
        }
        if (res->send_violations && old == send_worst)
            res->worst_send_flow = i;
        res->waits[i] = k.waits[old];
        res->flows[i].id = i;
        if (!res->flows[i].intra)
            res->ninter = i + 1;
    }
    free(k.waits);
    return 0;
}

void fc__match_free(fc__match *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->nnodes; i++)
        free(m->nodes[i]);
    free(m->nodes);
    free(m->flows);
    free(m->rank_node);
    free(m->traffic);
    fc__mt_traffic_acc_free(m->acc);
    free(m->late_sender);
    free(m->late_receiver);
    free(m->clock_unc);
    free(m->waits);
    free(m->sites);
    free(m->unmatched);
    free(m);
}

