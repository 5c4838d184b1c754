/* analyzer/otf2/export.c: writes a flowcut trace as an OTF2 archive laid out the way Score-P writes
 * MPI traces (the event records here, the definitions in otf2/defs.c), so that Vampir shows it
 * and Scalasca's scout analyses it. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/internal.h"
#include "otf2/common.h"

/* ---- events ------------------------------------------------------------------------------------ */

static int req_slot(fc__exporter *x, uint64_t req, fc__xreq **out)
{
    *out = NULL;
    if (req == 0)
        return 0;
    if (req >= x->nreq) {
        size_t n = x->nreq ? x->nreq : 256;
        while (n <= req)
            n *= 2;
        fc__xreq *q = realloc(x->req, n * sizeof *q);
        if (q == NULL)
            return FC_ENOMEM;
        memset(q + x->nreq, 0, (n - x->nreq) * sizeof *q);
        x->req = q;
        x->nreq = n;
    }
    *out = &x->req[req];
    return 0;
}

/* The timestamp written for aligned time t. OTF2 refuses timestamps that go back on one location:
 * clamp (records of one thread only go back by the rounding of the tracer's clock, if at all). The
 * extremes written are kept for the clock properties, so that the global offset is never later
 * than an event. */
static uint64_t ts_of(fc__exporter *x, fc__xthread *th, int64_t t)
{
    uint64_t w = t > x->base ? (uint64_t)(t - x->base) : 0;
    if (w < th->last)
        w = th->last;
    th->last = w;
    if (!x->have_time || w < x->wmin)
        x->wmin = w;
    if (!x->have_time || w > x->wmax)
        x->wmax = w;
    x->have_time = 1;
    return w;
}
#define ts(th, t) ts_of(x, th, t)

static uint32_t root_of(int64_t peer)
{
    if (peer >= 0)
        return (uint32_t)peer;
    if (peer == FC_PEER_ROOT)
        return OTF2_COLLECTIVE_ROOT_SELF;
    if (peer == FC_PEER_NULL)
        return OTF2_COLLECTIVE_ROOT_THIS_GROUP;
    return OTF2_COLLECTIVE_ROOT_NONE;
}


/* The completion of request req at time t: what Score-P writes when a Wait or Test completes it. */
static int write_completion(fc__exporter *x, fc__xthread *th, const fc_record *sub, int64_t t)
{
    fc__xreq *q;
    int rc = req_slot(x, sub->req, &q);
    if (rc < 0 || q == NULL || q->type == FC__RQ_NONE)
        return rc;
    if (sub->ev.flags & FC_EVF_CANCELLED) {
        FC__OTF2_TRY(OTF2_EvtWriter_MpiRequestCancelled(th->w, NULL, ts(th, t), sub->req));
    } else if (q->type == FC__RQ_SEND || q->type == FC__RQ_PSEND) {
        FC__OTF2_TRY(OTF2_EvtWriter_MpiIsendComplete(th->w, NULL, ts(th, t), sub->req));
    } else if (q->type == FC__RQ_RECV || q->type == FC__RQ_PRECV) {
        /* The status gives the actual source, tag and size; a receive from MPI_PROC_NULL has none. */
        if ((sub->ev.flags & FC_EVF_STATUS) && sub->ev.peer >= 0)
            FC__OTF2_TRY(OTF2_EvtWriter_MpiIrecv(th->w, NULL, ts(th, t), (uint32_t)sub->ev.peer, q->comm,
                                        (uint32_t)sub->ev.tag, sub->ev.bytes, sub->req));
    } else if (q->type == FC__RQ_ICOLL || q->type == FC__RQ_PCOLL) {
        FC__OTF2_TRY(OTF2_EvtWriter_NonBlockingCollectiveComplete(th->w, NULL, ts(th, t), (OTF2_CollectiveOp)q->op,
                                                         q->comm, q->root, q->bytes, q->bytes2, sub->req));
    }
    if (q->type == FC__RQ_SEND || q->type == FC__RQ_RECV || q->type == FC__RQ_ICOLL)
        q->type = FC__RQ_NONE;
    return 0;
}

/* A persistent request started: Score-P writes the post of a fresh message at the Start; a
 * persistent collective's Start initiates one instance of it, as a non-blocking collective's call
 * does. */
static int write_start(fc__exporter *x, fc__xthread *th, uint64_t reqid, int64_t t)
{
    fc__xreq *q;
    int rc = req_slot(x, reqid, &q);
    if (rc < 0 || q == NULL)
        return rc;
    if (q->type == FC__RQ_PSEND && q->peer >= 0)
        FC__OTF2_TRY(OTF2_EvtWriter_MpiIsend(th->w, NULL, ts(th, t), (uint32_t)q->peer, q->comm, (uint32_t)q->tag,
                                    q->bytes, reqid));
    else if (q->type == FC__RQ_PRECV && q->peer != FC_PEER_NULL)
        FC__OTF2_TRY(OTF2_EvtWriter_MpiIrecvRequest(th->w, NULL, ts(th, t), reqid));
    else if (q->type == FC__RQ_PCOLL)
        FC__OTF2_TRY(OTF2_EvtWriter_NonBlockingCollectiveRequest(th->w, NULL, ts(th, t), reqid));
    return 0;
}

/* The collectives with a root (rooted ones pass it on; the others have OTF2_COLLECTIVE_ROOT_NONE). */
static int rooted(unsigned k)
{
    switch (fc__otf2_collective(k)) {
    case OTF2_COLLECTIVE_OP_BCAST: case OTF2_COLLECTIVE_OP_REDUCE: case OTF2_COLLECTIVE_OP_GATHER:
    case OTF2_COLLECTIVE_OP_GATHERV: case OTF2_COLLECTIVE_OP_SCATTER: case OTF2_COLLECTIVE_OP_SCATTERV:
        return 1;
    default:
        return 0;
    }
}

/* Enters the region of an MPI call of kind k as Score-P does with unwinding on: a CallingContextEnter
 * of the call's calling context (its region under the frames of its call site), with the unwind
 * distance from the thread's previous calling context. *cc receives the context, for the Leave. */
static int enter_call(fc__exporter *x, fc__xthread *th, unsigned k, uint32_t site_cc, int64_t t, uint32_t *cc)
{
    int rc = fc__otf2_call_context(x, k, site_cc, cc);
    if (rc < 0)
        return fc__err(rc, "out of memory");
    /* The writer empties the list once the event holds it. */
    OTF2_AttributeList *a = x->attrs != NULL && OTF2_AttributeList_GetNumberOfElements(x->attrs) > 0 ? x->attrs : NULL;
    FC__OTF2_TRY(OTF2_EvtWriter_CallingContextEnter(th->w, a, ts(th, t), *cc, fc__otf2_unwind(x, th->cc_prev, *cc)));
    th->cc_prev = *cc;
    return 0;
}

/* Leaves it: the frames of the call site stay entered until the next call shows which it left. */
static int leave_call(fc__exporter *x, fc__xthread *th, uint32_t cc, int64_t t)
{
    FC__OTF2_TRY(OTF2_EvtWriter_CallingContextLeave(th->w, NULL, ts(th, t), cc));
    th->cc_prev = x->cc[cc].parent;
    return 0;
}

/* Puts the COUNTS sub-records among subs into the attribute list as FC_OTF2_COUNTS_ATTR. */
static int counts_attr(fc__exporter *x, const fc_record *subs, size_t nsubs)
{
    size_t len = 0;
    for (size_t i = 0; i < nsubs; i++) {
        const fc_record *s = &subs[i];
        if (s->ev.kind != FC_EV_COUNTS)
            continue;
        char run[100];
        int n = snprintf(run, sizeof run, "%s%" PRId64 ":%" PRIu64 ":%" PRIu64 ":%" PRIu64, len ? " " : "",
                         (int64_t)s->ev.peer, (uint64_t)s->ev.obj, (uint64_t)s->ev.bytes, (uint64_t)s->ev.bytes2);
        if (len + (size_t)n + 1 > x->counts_cap) {
            size_t cap = (len + (size_t)n + 1) * 2;
            char *c = realloc(x->counts, cap);
            if (c == NULL)
                return fc__err(FC_ENOMEM, "out of memory");
            x->counts = c, x->counts_cap = cap;
        }
        memcpy(x->counts + len, run, (size_t)n + 1);
        len += (size_t)n;
    }
    if (len == 0)
        return 0;
    uint32_t id;
    if (fc__intern_id(&x->strings, x->counts, &id) < 0)
        return fc__err(FC_ENOMEM, "out of memory");
    if (x->attrs == NULL && (x->attrs = OTF2_AttributeList_New()) == NULL)
        return fc__err(FC_ENOMEM, "out of memory");
    FC__OTF2_TRY(OTF2_AttributeList_AddStringRef(x->attrs, FC__OTF2_ATTR_COUNTS, id));
    x->attrs_used |= 1u << FC__OTF2_ATTR_COUNTS;
    return 0;
}

/* Writes one call: Enter, the MPI records in Score-P's order, Leave. */
static int write_call(fc__exporter *x, size_t ri, fc__xthread *th, const fc_record *c, const fc_record *subs, size_t nsubs)
{
    const fc_event *ev = &c->ev;
    unsigned k = ev->kind;
    uint32_t comm = ev->comm < x->ncomm_of[ri] ? x->comm_of[ri][ev->comm] : UINT32_MAX;
    int have_comm = comm != UINT32_MAX;
    int64_t t0 = c->t0, t1 = c->t1;
    int rc = 0;
    fc__xreq *q;
    uint32_t cc;
    if (k == 0 || k >= FC_EV_MAX_ || x->region_of[k] == UINT32_MAX)
        return 0;
    /* MPI_Finalize is recorded at its entry; the rank's tracing ends inside it, after the barrier
     * of the final clock measurement that every rank enters, so that is when it is left. */
    if (k == FC_EV_MPI_Finalize && x->fin_end > t1)
        t1 = x->fin_end;
    uint32_t site_cc = ev->site < x->ncc_of[ri] && x->cc_of[ri][ev->site] != UINT32_MAX ? x->cc_of[ri][ev->site]
                                                                                       : OTF2_UNDEFINED_CALLING_CONTEXT;
    int failed = ev->flags & FC_EVF_ERROR;
    int coll = fc__otf2_collective(k);
    /* A persistent collective's init names its request, which OTF2's records give at its Starts
     * and completions only. */
    int pcoll = fc__otf2_persistent(k) && have_comm && !failed && c->req != 0;
    if (pcoll) {
        if (x->attrs == NULL && (x->attrs = OTF2_AttributeList_New()) == NULL)
            return fc__err(FC_ENOMEM, "out of memory");
        FC__OTF2_TRY(OTF2_AttributeList_AddUint64(x->attrs, FC__OTF2_ATTR_REQUEST, c->req));
        x->attrs_used |= 1u << FC__OTF2_ATTR_REQUEST;
    }
    if (coll >= 0 && have_comm && !failed && (rc = counts_attr(x, subs, nsubs)) < 0)
        return rc;
    if ((rc = enter_call(x, th, k, site_cc, t0, &cc)) < 0)
        return rc;
    switch (k) {
    case FC_EV_MPI_Send: case FC_EV_MPI_Bsend: case FC_EV_MPI_Ssend: case FC_EV_MPI_Rsend:
    case FC_EV_MPI_Sendrecv: case FC_EV_MPI_Sendrecv_replace:
        if (ev->peer >= 0 && have_comm && !failed)
            FC__OTF2_TRY(OTF2_EvtWriter_MpiSend(th->w, NULL, ts(th, t0), (uint32_t)ev->peer, comm, (uint32_t)ev->tag,
                                       ev->bytes));
        break;
    case FC_EV_MPI_Isend: case FC_EV_MPI_Ibsend: case FC_EV_MPI_Issend: case FC_EV_MPI_Irsend:
        if (ev->peer >= 0 && have_comm && !failed && c->req != 0) {
            if ((rc = req_slot(x, c->req, &q)) < 0)
                return rc;
            *q = (fc__xreq){FC__RQ_SEND, 0, comm, ev->peer, ev->tag, ev->bytes, 0, 0};
            FC__OTF2_TRY(OTF2_EvtWriter_MpiIsend(th->w, NULL, ts(th, t0), (uint32_t)ev->peer, comm, (uint32_t)ev->tag,
                                        ev->bytes, c->req));
        }
        break;
    case FC_EV_MPI_Send_init: case FC_EV_MPI_Bsend_init: case FC_EV_MPI_Ssend_init: case FC_EV_MPI_Rsend_init:
    case FC_EV_MPI_Recv_init:
        if (have_comm && !failed && c->req != 0) {
            if ((rc = req_slot(x, c->req, &q)) < 0)
                return rc;
            *q = (fc__xreq){k == FC_EV_MPI_Recv_init ? FC__RQ_PRECV : FC__RQ_PSEND, 0, comm, ev->peer, ev->tag, ev->bytes, 0, 0};
        }
        break;
    case FC_EV_MPI_Start:
        if (!failed && (rc = write_start(x, th, c->req, t0)) < 0)
            return rc;
        break;
    case FC_EV_MPI_Request_free:
        if ((rc = req_slot(x, c->req, &q)) < 0)
            return rc;
        if (q != NULL && (q->type == FC__RQ_PSEND || q->type == FC__RQ_PRECV || q->type == FC__RQ_PCOLL))
            q->type = FC__RQ_NONE;
        break;
    default:
        if (pcoll) {
            if ((rc = req_slot(x, c->req, &q)) < 0)
                return rc;
            *q = (fc__xreq){FC__RQ_PCOLL, coll, comm, 0, 0, ev->bytes, ev->bytes2,
                            rooted(k) ? root_of(ev->peer) : OTF2_COLLECTIVE_ROOT_NONE};
        }
        if (coll >= 0 && !fc__otf2_icoll(k) && !fc__otf2_persistent(k) && have_comm && !failed)
            FC__OTF2_TRY(OTF2_EvtWriter_MpiCollectiveBegin(th->w, NULL, ts(th, t0)));
        if (fc__otf2_icoll(k) && have_comm && !failed && c->req != 0) {
            if ((rc = req_slot(x, c->req, &q)) < 0)
                return rc;
            *q = (fc__xreq){FC__RQ_ICOLL, coll, comm, 0, 0, ev->bytes, ev->bytes2,
                        rooted(k) ? root_of(ev->peer) : OTF2_COLLECTIVE_ROOT_NONE};
            FC__OTF2_TRY(OTF2_EvtWriter_NonBlockingCollectiveRequest(th->w, NULL, ts(th, t0), c->req));
        }
        break;
    }
    /* What happens at the exit of the call: receives, completions, starts, collective ends; a
     * completion with a time of its own (FC_EVF_OWN_TIME, inside the call) is written then. */
    for (size_t i = 0; i < nsubs && rc == 0; i++) {
        const fc_record *s = &subs[i];
        if (s->ev.kind == FC_EV_COUNTS)
            continue; /* in the Enter's attributes */
        if (s->ev.kind == FC_EV_START)
            rc = write_start(x, th, s->req, t0);
        else if (s->req != 0)
            rc = write_completion(x, th, s, (s->ev.flags & FC_EVF_OWN_TIME) ? s->t1 : t1);
        else if ((k == FC_EV_MPI_Sendrecv || k == FC_EV_MPI_Sendrecv_replace) && s->ev.peer >= 0 && have_comm &&
                 (s->ev.flags & FC_EVF_STATUS))
            FC__OTF2_TRY(OTF2_EvtWriter_MpiRecv(th->w, NULL, ts(th, t1), (uint32_t)s->ev.peer, comm, (uint32_t)s->ev.tag,
                                       s->ev.bytes));
    }
    if (rc < 0)
        return rc;
    if ((k == FC_EV_MPI_Recv || k == FC_EV_MPI_Mrecv) && ev->peer >= 0 && have_comm && !failed)
        FC__OTF2_TRY(OTF2_EvtWriter_MpiRecv(th->w, NULL, ts(th, t1), (uint32_t)ev->peer, comm, (uint32_t)ev->tag, ev->bytes));
    if ((k == FC_EV_MPI_Irecv || k == FC_EV_MPI_Imrecv) && ev->peer != FC_PEER_NULL && have_comm && !failed &&
        c->req != 0) {
        if ((rc = req_slot(x, c->req, &q)) < 0)
            return rc;
        *q = (fc__xreq){FC__RQ_RECV, 0, comm, ev->peer, ev->tag, ev->bytes, 0, 0};
        FC__OTF2_TRY(OTF2_EvtWriter_MpiIrecvRequest(th->w, NULL, ts(th, t1), c->req));
    }
    if (coll >= 0 && !fc__otf2_icoll(k) && !fc__otf2_persistent(k) && have_comm && !failed)
        FC__OTF2_TRY(OTF2_EvtWriter_MpiCollectiveEnd(th->w, NULL, ts(th, t1), (OTF2_CollectiveOp)coll, comm,
                                            rooted(k) ? root_of(ev->peer) : OTF2_COLLECTIVE_ROOT_NONE,
                                            ev->bytes, ev->bytes2));
    if ((rc = leave_call(x, th, cc, t1)) < 0)
        return rc;
    x->st.calls++;
    return 0;
}

/* The calls of a folded run of polls after its first, which was just written: the run's last call
 * at its own times; with FC_OTF2_EXPAND_POLLS before it the calls between, spread evenly from the
 * first's exit to the last's entry, each with an equal share of the time the run spent inside MPI
 * (the POLLS record's bytes2) less the first's and last's. A region then counts every call of the
 * run and the time inside them; by default it counts the run's first and last, and the last's
 * Enter carries FC_OTF2_POLLS_ATTR, the calls it stands for. */
static int write_polls(fc__exporter *x, size_t ri, fc__xthread *th, const fc_record *first, const fc_record *polls)
{
    fc_record c = *first;
    uint64_t n = polls->ev.bytes;
    if (x->expand_polls && n > 2) {
        int64_t busy = (int64_t)polls->ev.bytes2 - (first->t1 - first->t0) - (polls->t1 - polls->t0);
        int64_t idle = polls->t0 - first->t1;
        busy = busy < 0 ? 0 : busy > idle ? idle : busy;
        int64_t d = busy / (int64_t)(n - 2), g = (idle - busy) / (int64_t)(n - 1), t = first->t1;
        for (uint64_t i = 0; i + 2 < n; i++) {
            c.t0 = t + g;
            c.t1 = t = c.t0 + d;
            int rc = write_call(x, ri, th, &c, NULL, 0);
            if (rc < 0)
                return rc;
        }
    }
    c.t0 = polls->t0;
    c.t1 = polls->t1;
    if (!x->expand_polls && n > 2) {
        if (x->attrs == NULL && (x->attrs = OTF2_AttributeList_New()) == NULL)
            return fc__err(FC_ENOMEM, "out of memory");
        FC__OTF2_TRY(OTF2_AttributeList_AddUint64(x->attrs, FC__OTF2_ATTR_POLLS, n - 1));
        x->folded++;
        x->attrs_used |= 1u << FC__OTF2_ATTR_POLLS;
    }
    int rc = write_call(x, ri, th, &c, NULL, 0);
    if (x->attrs != NULL) /* not left for another call when this one wrote nothing */
        OTF2_AttributeList_RemoveAllAttributes(x->attrs);
    return rc;
}

/* Writes the pending call of a thread, synthesising the MPI_Init that Scalasca needs on every
 * rank when tracing started lazily. */
static int flush(fc__exporter *x, size_t ri, fc__xthread *th, int thread0)
{
    fc__pending *p = &th->p;
    if (!p->has)
        return 0;
    unsigned k = p->call.ev.kind;
    if (thread0 && !th->started && k != FC_EV_MPI_Init && k != FC_EV_MPI_Init_thread) {
        uint32_t cc;
        int rc = enter_call(x, th, FC_EV_MPI_Init, OTF2_UNDEFINED_CALLING_CONTEXT, p->call.t0, &cc);
        if (rc < 0 || (rc = leave_call(x, th, cc, p->call.t0)) < 0)
            return rc;
    }
    th->started = 1;
    if (k == FC_EV_MPI_Finalize)
        th->finalized = 1;
    p->has = 0;
    return write_call(x, ri, th, &p->call, p->subs, p->nsubs);
}

/* Writes the local definitions of one location, which hold nothing: the events are already on
 * rank 0's clock (flowcut's alignment), so the archive has no clock offsets. OTF2's reader would
 * interpolate offsets with its own rounding, which can put an event a nanosecond before the global
 * offset and move times away from what flowcut analyses. */
static int write_local_defs(fc__exporter *x, uint64_t loc)
{
    OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(x->ar, loc);
    if (dw == NULL)
        return fc__err(FC_EIO, "OTF2 writer: %s", fc__otf2_message());
    FC__OTF2_TRY(OTF2_Archive_CloseDefWriter(x->ar, dw));
    return 0;
}

/* Writes the events of world rank `rank` (rank file ri, or none when ri < 0). */
static int write_rank(fc__exporter *x, long ri, uint32_t rank)
{
    const fc_rank *r = ri >= 0 ? fc_trace_rank(x->t, (size_t)ri) : NULL;
    uint32_t nthreads = r && r->threads ? r->threads : 1;
    fc__xthread *th = calloc(nthreads, sizeof *th);
    fc_cursor *cur = NULL;
    fc_record rec;
    int rc = 0;
    if (th == NULL)
        return fc__err(FC_ENOMEM, "out of memory");
    if (x->nreq > 0) /* memset of a NULL array, even of 0 bytes, is undefined */
        memset(x->req, 0, x->nreq * sizeof *x->req);
    x->rank_threads[rank] = nthreads;
    x->fin_end = r != NULL && r->has_end && r->end.reason == FC_END_FINALIZE && r->end.end_ns > 0
                     ? fc_rank_align(r, r->end.end_ns)
                     : INT64_MIN;
    for (uint32_t k = 0; k < nthreads; k++)
        th[k].cc_prev = OTF2_UNDEFINED_CALLING_CONTEXT;
    for (uint32_t k = 0; k < nthreads; k++)
        if ((th[k].w = OTF2_Archive_GetEvtWriter(x->ar, fc__otf2_location(rank, k))) == NULL) {
            rc = fc__err(FC_EIO, "OTF2 writer: %s", fc__otf2_message());
            goto out;
        }
    if (r != NULL && (rc = fc_cursor_open(x->t, (size_t)ri, &cur)) < 0)
        goto out;
    while (cur != NULL && (rc = fc_cursor_next(cur, &rec)) > 0) {
        fc__xthread *h = &th[rec.ev.thread < nthreads ? rec.ev.thread : 0];
        if (rec.ev.kind == FC_EV_TRACER_WAIT)
            continue; /* the tracer's own time: no MPI call */
        if (rec.ev.kind == FC_EV_POLLS) {
            /* A folded run: its first call is the one pending. */
            fc_record first = h->p.call;
            if (!h->p.has || h->p.nsubs != 0)
                continue;
            if ((rc = flush(x, (size_t)ri, h, h == th)) < 0 || (rc = write_polls(x, (size_t)ri, h, &first, &rec)) < 0)
                goto out;
            continue;
        }
        if (rec.ev.kind == FC_EV_COMPLETE || rec.ev.kind == FC_EV_START || rec.ev.kind == FC_EV_COUNTS) {
            fc__pending *p = &h->p;
            if (!p->has)
                continue; /* a sub-record without its call: the chunk with the call was lost */
            if (fc__grow((void **)&p->subs, &p->nsubs, &p->cap, sizeof *p->subs) < 0) {
                rc = fc__err(FC_ENOMEM, "out of memory");
                goto out;
            }
            p->subs[p->nsubs++] = rec;
            continue;
        }
        if ((rc = flush(x, (size_t)ri, h, h == th)) < 0)
            goto out;
        h->p.has = 1;
        h->p.call = rec;
        h->p.nsubs = 0;
    }
    if (rc < 0)
        goto out;
    for (uint32_t k = 0; k < nthreads; k++)
        if ((rc = flush(x, (size_t)ri, &th[k], k == 0)) < 0)
            goto out;
    /* Scalasca expects MPI_Finalize on every rank: a rank that ended without one (it crashed, or
     * tracing stopped early) gets an empty one at its last timestamp. */
    if (th[0].started && !th[0].finalized) {
        uint32_t cc;
        int64_t t = (int64_t)th[0].last + x->base;
        if ((rc = enter_call(x, &th[0], FC_EV_MPI_Finalize, OTF2_UNDEFINED_CALLING_CONTEXT, t, &cc)) < 0 ||
            (rc = leave_call(x, &th[0], cc, t)) < 0)
            goto out;
    }
    if ((x->rank_events[rank] = calloc(nthreads, sizeof **x->rank_events)) == NULL) {
        rc = fc__err(FC_ENOMEM, "out of memory");
        goto out;
    }
    for (uint32_t k = 0; k < nthreads; k++) {
        OTF2_EvtWriter_GetNumberOfEvents(th[k].w, &x->rank_events[rank][k]);
        x->st.events += x->rank_events[rank][k];
    }
out:
    fc_cursor_close(cur);
    for (uint32_t k = 0; k < nthreads; k++) {
        if (th[k].w != NULL && OTF2_Archive_CloseEvtWriter(x->ar, th[k].w) != OTF2_SUCCESS && rc == 0)
            rc = fc__err(FC_EIO, "OTF2 writer: %s", fc__otf2_message());
        free(th[k].p.subs);
    }
    free(th);
    return rc;
}

/* ---- the export ----------------------------------------------------------------------------------- */

static OTF2_FlushType pre_flush(void *data, OTF2_FileType type, OTF2_LocationRef loc, void *cb, bool final)
{
    (void)data, (void)type, (void)loc, (void)cb, (void)final;
    return OTF2_FLUSH;
}

/* No post-flush callback: OTF2 then records no BufferFlush events, whose times would be the
 * fc__exporter's, not the application's. */
static const OTF2_FlushCallbacks flush_callbacks = {.otf2_pre_flush = pre_flush, .otf2_post_flush = NULL};

/* The collective settings the run had (FC_RK_COLL_ENV, one rank's: the launcher gives every rank
 * the same environment) as the archive property FC__OTF2_COLL_ENV, its NAME=VALUE entries one a
 * line: the analysis of an import expands the collectives with the algorithms they chose. */
static int write_coll_env(fc__exporter *x, fc_trace *t, const char *outdir)
{
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        if (r->coll_env == NULL || r->coll_env_len == 0)
            continue;
        char *v = malloc(r->coll_env_len + 1);
        if (v == NULL)
            return fc__err(FC_ENOMEM, "out of memory");
        memcpy(v, r->coll_env, r->coll_env_len);
        v[r->coll_env_len] = '\0';
        for (size_t j = 0; j + 1 < r->coll_env_len; j++)
            if (v[j] == '\0')
                v[j] = '\n';
        OTF2_ErrorCode e = OTF2_Archive_SetProperty(x->ar, FC__OTF2_COLL_ENV, v, true);
        free(v);
        if (e != OTF2_SUCCESS)
            return fc__err(FC_EIO, "%s: OTF2 writer: %s", outdir, fc__otf2_message());
        break;
    }
    return 0;
}

/* The node of a rank: its node name, else its host name (as the analysis counts nodes). */
static const char *node_name(const fc_rank *r)
{
    return r->info.node[0] ? r->info.node : r->info.host[0] ? r->info.host : "unknown";
}

/* The hosts of the ranks as the archive property FC__OTF2_HOSTS, when some rank's host is not its
 * node (the system tree holds the nodes): a line per world rank, empty for a rank without a file. */
static int write_hosts(fc__exporter *x, fc_trace *t, const char *outdir)
{
    uint32_t world = fc_trace_world_size(t);
    size_t len = 1;
    int differ = 0;
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        differ |= r->info.host[0] && strcmp(r->info.host, node_name(r)) != 0;
        len += strlen(r->info.host);
    }
    if (!differ)
        return 0;
    char *v = malloc(len + world);
    if (v == NULL)
        return fc__err(FC_ENOMEM, "out of memory");
    size_t n = 0;
    for (uint32_t w = 0; w < world; w++) {
        long ix = fc_trace_find(t, w);
        const char *h = ix >= 0 ? fc_trace_rank(t, (size_t)ix)->info.host : "";
        n += (size_t)sprintf(v + n, "%s\n", h);
    }
    OTF2_ErrorCode e = OTF2_Archive_SetProperty(x->ar, FC__OTF2_HOSTS, v, true);
    free(v);
    if (e != OTF2_SUCCESS)
        return fc__err(FC_EIO, "%s: OTF2 writer: %s", outdir, fc__otf2_message());
    return 0;
}

static int check_outdir(const char *outdir)
{
    struct stat st;
    char path[4096];
    if (mkdir(outdir, 0777) < 0 && errno != EEXIST)
        return fc__err(FC_EIO, "%s: cannot create directory: %s", outdir, strerror(errno));
    if (stat(outdir, &st) < 0 || !S_ISDIR(st.st_mode))
        return fc__err(FC_EIO, "%s: not a directory", outdir);
    static const char *const parts[] = {"traces.otf2", "traces.def", "traces"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", outdir, parts[i]);
        if (lstat(path, &st) == 0)
            return fc__err(FC_EEXISTS, "%s: an OTF2 archive is already there (remove it first)", path);
    }
    return 0;
}

int fc__otf2_export(fc_trace *t, const char *outdir, unsigned flags, fc__otf2_stats *stats)
{
    fc__exporter x;
    int rc;
    memset(&x, 0, sizeof x);
    x.expand_polls = (flags & FC_OTF2_EXPAND_POLLS) != 0;
    x.t = t;
    const unsigned known = FC_OTF2_NO_SYMBOLS | FC_OTF2_EXPAND_POLLS;
    if (flags & ~known)
        return fc__err(FC_EINVAL, "unknown export flags 0x%x", flags & ~known);
    for (unsigned k = 0; k < FC_EV_MAX_; k++)
        x.region_of[k] = fc__otf2_has_region(k) ? x.nmpi++ : UINT32_MAX;
    x.world = fc_trace_world_size(t);
    for (size_t i = 0; i < fc_trace_nranks(t); i++)
        if (fc_trace_rank(t, i)->info.rank >= x.world)
            x.world = fc_trace_rank(t, i)->info.rank + 1;
    if ((rc = check_outdir(outdir)) < 0)
        return rc;
    /* Aligned times may be negative (a rank whose clock is behind rank 0's): shift every time by
     * the earliest when it is, since OTF2 timestamps are unsigned. Alignment keeps the order of a
     * rank's times, so its earliest event is its first. */
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        if (r->has_events && fc_rank_align(r, r->first_t0) < x.base)
            x.base = fc_rank_align(r, r->first_t0);
    }
    fc__otf2_quiet();
    x.rank_node = malloc((x.world ? x.world : 1) * sizeof *x.rank_node);
    x.rank_threads = calloc(x.world ? x.world : 1, sizeof *x.rank_threads);
    x.rank_events = calloc(x.world ? x.world : 1, sizeof *x.rank_events);
    if (x.rank_node == NULL || x.rank_threads == NULL || x.rank_events == NULL) {
        rc = fc__err(FC_ENOMEM, "out of memory");
        goto out;
    }
    for (uint32_t r = 0; r < x.world; r++) {
        long i = fc_trace_find(t, r);
        x.rank_node[r] = UINT32_MAX;
        if (i >= 0 && fc__intern_id(&x.nodes, node_name(fc_trace_rank(t, (size_t)i)), &x.rank_node[r]) < 0) {
            rc = fc__err(FC_ENOMEM, "out of memory");
            goto out;
        }
    }
    if ((rc = fc__otf2_build_comms(&x)) < 0 || (rc = fc__otf2_build_sites(&x, flags)) < 0) {
        if (rc == FC_ENOMEM)
            fc__err(rc, "out of memory");
        goto out;
    }
    x.ar = OTF2_Archive_Open(outdir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                             OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (x.ar == NULL) {
        rc = fc__err(FC_EIO, "%s: cannot create the OTF2 archive: %s", outdir, fc__otf2_message());
        goto out;
    }
    if (OTF2_Archive_SetFlushCallbacks(x.ar, &flush_callbacks, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_SetSerialCollectiveCallbacks(x.ar) != OTF2_SUCCESS ||
        OTF2_Archive_SetCreator(x.ar, "flowcut export") != OTF2_SUCCESS ||
        OTF2_Archive_OpenEvtFiles(x.ar) != OTF2_SUCCESS) {
        rc = fc__err(FC_EIO, "%s: OTF2 writer: %s", outdir, fc__otf2_message());
        goto out;
    }
    if ((rc = write_coll_env(&x, t, outdir)) < 0 || (rc = write_hosts(&x, t, outdir)) < 0)
        goto out;
    for (uint32_t r = 0; r < x.world && rc == 0; r++)
        rc = write_rank(&x, fc_trace_find(t, r), r);
    if (rc < 0)
        goto out;
    if (OTF2_Archive_CloseEvtFiles(x.ar) != OTF2_SUCCESS || OTF2_Archive_OpenDefFiles(x.ar) != OTF2_SUCCESS) {
        rc = fc__err(FC_EIO, "%s: OTF2 writer: %s", outdir, fc__otf2_message());
        goto out;
    }
    for (uint32_t r = 0; r < x.world && rc == 0; r++) {
        for (uint32_t k = 0; k < x.rank_threads[r] && rc == 0; k++)
            rc = write_local_defs(&x, fc__otf2_location(r, k));
    }
    if (rc < 0 || OTF2_Archive_CloseDefFiles(x.ar) != OTF2_SUCCESS) {
        if (rc == 0)
            rc = fc__err(FC_EIO, "%s: OTF2 writer: %s", outdir, fc__otf2_message());
        goto out;
    }
    x.st.contexts = x.ncc;
    if ((rc = fc__otf2_write_defs(&x)) < 0)
        goto out;
out:
    if (x.attrs != NULL)
        OTF2_AttributeList_Delete(x.attrs);
    free(x.counts);
    if (x.ar != NULL && OTF2_Archive_Close(x.ar) != OTF2_SUCCESS && rc == 0)
        rc = fc__err(FC_EIO, "%s: OTF2 writer: %s", outdir, fc__otf2_message());
    fc__otf2_loud();
    if (rc == 0 && stats != NULL)
        *stats = x.st;
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        if (x.comm_of)
            free(x.comm_of[i]);
        if (x.cc_of)
            free(x.cc_of[i]);
    }
    for (uint32_t r = 0; r < x.world && x.rank_events; r++)
        free(x.rank_events[r]);
    if (x.ncomms > 0)
        free((void *)x.comms[0].local); /* the world list built by build_comms */
    free(x.comm_of), free(x.ncomm_of), free(x.cc_of), free(x.ncc_of);
    free(x.rank_events), free(x.rank_threads), free(x.rank_node);
    for (size_t i = 0; i < x.ntopos; i++)
        free(x.topos[i].size), free(x.topos[i].periodic);
    free(x.topos);
    free(x.comms), free(x.cc), free(x.req), free(x.scl_file), free(x.scl_line);
    fc__intern_free(&x.strings), fc__intern_free(&x.fnames), fc__intern_free(&x.scls), fc__intern_free(&x.cckeys);
    fc__intern_free(&x.nodes);
    return rc;
}
