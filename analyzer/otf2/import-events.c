/* analyzer/otf2/import-events.c: turns the events of one OTF2 location (Enter/Leave around MPI
 * calls, with the MPI records Score-P writes inside them) into flowcut event records. */
#include <stdlib.h>
#include <string.h>
#include <flowcut/writer.h>
#include "util/internal.h"
#include "otf2/common.h"

/* ---- events ------------------------------------------------------------------------------------- */

enum { OE_SEND, OE_ISEND, OE_IRECV_REQ, OE_RECV, OE_ISEND_DONE, OE_IRECV, OE_CANCELLED, OE_COLL_END, OE_NBC_REQ,
       OE_NBC_DONE };

typedef struct oev {
    uint8_t type;
    uint32_t peer, tag, root;
    uint64_t comm, bytes, bytes2, req;
    uint64_t t; /* ns, as the region times */
} oev;

typedef struct frame {
    uint32_t region;
    uint32_t cc;  /* the calling context it was entered with, UINT32_MAX for a plain Enter */
    uint64_t t0;
    size_t first; /* its MPI events are ev[first .. nev) */
    uint64_t preq;   /* FC_OTF2_REQUEST_ATTR of its Enter, 0 without */
    uint32_t counts; /* FC_OTF2_COUNTS_ATTR of its Enter (a string), UINT32_MAX without */
} frame;

typedef struct sev {
    fc_event e;
    uint64_t seq;
} sev;

typedef struct lstate {
    fc__importer *im;
    frame *st;
    size_t nst, stcap;
    oev *ev;
    size_t nev, evcap;
    sev *out;
    size_t nout, outcap;
    uint64_t last;
    int nomem, unsorted;
    uint64_t *rkey;   /* request id + 1 -> index in out of its MPI_Irecv post (open addressing) */
    size_t *rval, rcap, rused;
} lstate;

static size_t rhash(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    return (size_t)(k ^ (k >> 33)) & (cap - 1);
}

/* Remembers that the receive request req was posted by out[ix]. */
static void rmap_put(lstate *s, uint64_t req, size_t ix)
{
    if ((s->rused + 1) * 2 > s->rcap) {
        size_t ncap = s->rcap ? s->rcap * 2 : 256;
        uint64_t *k = calloc(ncap, sizeof *k);
        size_t *v = malloc(ncap * sizeof *v);
        if (k == NULL || v == NULL) {
            free(k), free(v);
            s->nomem = 1;
            return;
        }
        for (size_t i = 0; i < s->rcap; i++)
            if (s->rkey[i]) {
                size_t j = rhash(s->rkey[i], ncap);
                while (k[j])
                    j = (j + 1) & (ncap - 1);
                k[j] = s->rkey[i], v[j] = s->rval[i];
            }
        free(s->rkey), free(s->rval);
        s->rkey = k, s->rval = v, s->rcap = ncap;
    }
    size_t j = rhash(req + 1, s->rcap);
    while (s->rkey[j] && s->rkey[j] != req + 1)
        j = (j + 1) & (s->rcap - 1);
    s->rused += !s->rkey[j];
    s->rkey[j] = req + 1, s->rval[j] = ix;
}

static sev *rmap_get(lstate *s, uint64_t req)
{
    if (s->rcap == 0)
        return NULL;
    for (size_t j = rhash(req + 1, s->rcap); s->rkey[j]; j = (j + 1) & (s->rcap - 1))
        if (s->rkey[j] == req + 1)
            return s->rval[j] < s->nout ? &s->out[s->rval[j]] : NULL;
    return NULL;
}

static uint64_t ns(const fc__importer *im, uint64_t t)
{
    if (im->resolution == 0 || im->resolution == 1000000000u)
        return t;
    return (uint64_t)((unsigned __int128)t * 1000000000u / im->resolution);
}

static int64_t root_peer(uint32_t root)
{
    if (root == OTF2_COLLECTIVE_ROOT_NONE)
        return FC_PEER_NONE;
    if (root == OTF2_COLLECTIVE_ROOT_SELF)
        return FC_PEER_ROOT;
    if (root == OTF2_COLLECTIVE_ROOT_THIS_GROUP)
        return FC_PEER_NULL;
    return root;
}

static uint64_t native_comm(const fc__importer *im, uint64_t c)
{
    /* An unknown communicator (an inter-communicator, say) keeps its peers unmapped. */
    return c < im->ncomms && im->comms[c].native >= 0 ? (uint64_t)im->comms[c].native : UINT32_MAX;
}

static void put(lstate *s, const fc_event *e)
{
    if (s->nomem || fc__grow((void **)&s->out, &s->nout, &s->outcap, sizeof *s->out) < 0) {
        s->nomem = 1;
        return;
    }
    if (s->nout > 0 && e->t0 < s->out[s->nout - 1].e.t0)
        s->unsorted = 1;
    s->out[s->nout] = (sev){*e, s->nout};
    s->nout++;
}

static int kind_in(int k, int lo, int hi)
{
    return k >= lo && k <= hi;
}

/* The call site of a call entered with a plain Enter inside the regions s->st[0 .. nst) (outermost
 * first): one per distinct stack of the rank, numbered after the calling contexts' sites; 0 when
 * no region encloses the call. */
static uint64_t stack_site(lstate *s)
{
    fc__importer *im = s->im;
    char *key = NULL;
    size_t len = 0, cap = 0;
    uint32_t id;
    if (s->nst == 0)
        return 0;
    for (size_t i = 0; i < s->nst; i++) {
        char part[16];
        int n = snprintf(part, sizeof part, "%s%u", i ? "/" : "", s->st[i].region);
        if (len + (size_t)n + 1 > cap) {
            char *k = realloc(key, cap = (cap + (size_t)n + 1) * 2);
            if (k == NULL) {
                free(key);
                s->nomem = 1;
                return 0;
            }
            key = k;
        }
        memcpy(key + len, part, (size_t)n + 1);
        len += (size_t)n;
    }
    if (fc__intern_id(&im->stacks, key, &id) < 0)
        s->nomem = 1;
    free(key);
    return s->nomem ? 0 : (uint64_t)im->ncc + 1 + id;
}

/* The COUNTS sub-records of FC_OTF2_COUNTS_ATTR's text (runs "first:n:to:from"), at time t; a
 * malformed run ends them. */
static void put_counts(lstate *s, const char *text, uint64_t t)
{
    const char *p = text;
    while (*p) {
        long long first;
        unsigned long long n, to, from;
        int used = 0;
        if (sscanf(p, " %lld:%llu:%llu:%llu%n", &first, &n, &to, &from, &used) != 4 || first < 0)
            return;
        fc_event e = {.kind = FC_EV_COUNTS, .t0 = t, .t1 = t, .peer = first, .obj = n, .bytes = to, .bytes2 = from};
        put(s, &e);
        p += used;
    }
}

/* 1 for the records whose fields a NonBlockingCollectiveComplete gives: the post of a non-blocking
 * collective and the init of a persistent one. */
static int nbc_post(unsigned kind)
{
    return fc__otf2_icoll(kind) || fc__otf2_persistent(kind);
}

/* Turns one MPI call (a region entered at t0 and left at t1, with the MPI events written inside it)
 * into flowcut records: the call itself, posts it made beyond its own, then its completions. f is
 * the call's frame (its Enter's attributes), NULL for MPI records outside any region. */
static void convert(lstate *s, uint32_t reg, uint32_t cc, uint64_t t0, uint64_t t1, const oev *ev, size_t n,
                    const frame *f)
{
    fc__importer *im = s->im;
    int k = -1;
    if (reg < im->nregions) {
        k = fc_event_kind_from_name(fc__otf2_string_of(im, im->regions[reg].name));
        if (k < 0)
            k = fc_event_kind_from_name(fc__otf2_string_of(im, im->regions[reg].canon));
    }
    if (k == FC_EV_COMPLETE || k == FC_EV_START)
        k = -1;
    fc_event base = {.kind = k > 0 ? (uint32_t)k : 0, .t0 = t0, .t1 = t1, .peer = FC_PEER_NONE};
    /* A call entered through a calling context was made from its parent context: its call site.
     * One entered with a plain Enter was made in the regions still entered around it. */
    uint32_t from = cc < im->ncc ? im->ccs[cc].parent : UINT32_MAX;
    uint64_t site = from < im->ncc ? FC__OTF2_SITE_OF(from) : cc >= im->ncc ? stack_site(s) : 0;
    if (from < im->ncc)
        im->cc_used[from] = 1;
    int filled = 0;
    int sendlike = kind_in(k, FC_EV_MPI_Send, FC_EV_MPI_Rsend) || k == FC_EV_MPI_Sendrecv || k == FC_EV_MPI_Sendrecv_replace;
    int recvlike = k == FC_EV_MPI_Recv || k == FC_EV_MPI_Mrecv;
    if (sendlike || recvlike || k == FC_EV_MPI_Irecv || k == FC_EV_MPI_Imrecv || kind_in(k, FC_EV_MPI_Isend, FC_EV_MPI_Irsend))
        base.peer = FC_PEER_NULL; /* Score-P writes no message record for MPI_PROC_NULL */
    fc_event extra[8], sub[64];
    size_t nx = 0, nsub = 0;
    for (size_t i = 0; i < n; i++) {
        const oev *o = &ev[i];
        fc_event e = {.t0 = t0, .t1 = t1, .peer = o->peer, .tag = o->tag, .comm = native_comm(im, o->comm),
                      .bytes = o->bytes, .obj = o->req};
        fc_event c = {.kind = FC_EV_COMPLETE, .t0 = t1, .t1 = t1, .peer = FC_PEER_NONE, .obj = o->req,
                      .comm = native_comm(im, o->comm)};
        switch (o->type) {
        case OE_SEND:
            e.kind = FC_EV_MPI_Send, e.obj = 0;
            if (sendlike && !filled)
                e.kind = base.kind, base = e, filled = 1;
            else if (nx < 8)
                extra[nx++] = e;
            break;
        case OE_ISEND:
            e.kind = FC_EV_MPI_Isend;
            if (kind_in(k, FC_EV_MPI_Isend, FC_EV_MPI_Irsend) && !filled)
                e.kind = base.kind, base = e, filled = 1;
            else if (nx < 8)
                extra[nx++] = e;
            break;
        case OE_IRECV_REQ:
            /* Score-P records neither source nor tag at the post: they come with the completion. */
            e.kind = FC_EV_MPI_Irecv, e.peer = FC_PEER_ANY, e.tag = FC_TAG_ANY;
            e.flags = FC_EVF_ANY_SOURCE | FC_EVF_ANY_TAG, e.comm = 0;
            if ((k == FC_EV_MPI_Irecv || k == FC_EV_MPI_Imrecv) && !filled)
                e.kind = base.kind, base = e, filled = 1;
            else if (nx < 8)
                extra[nx++] = e;
            break;
        case OE_RECV:
            e.kind = FC_EV_MPI_Recv, e.obj = 0, e.t0 = t0;
            if (recvlike && !filled) {
                e.kind = base.kind, base = e, filled = 1;
            } else if (k == FC_EV_MPI_Sendrecv || k == FC_EV_MPI_Sendrecv_replace) {
                c.obj = 0, c.peer = o->peer, c.tag = o->tag, c.bytes = o->bytes, c.flags = FC_EVF_STATUS;
                if (nsub < 64)
                    sub[nsub++] = c;
            } else if (nx < 8) {
                extra[nx++] = e;
            }
            break;
        case OE_NBC_DONE: {
            /* The fields of the collective come with its completion (OTF2 has none at the post):
             * give them to the post, or to the init of a persistent one. */
            sev *p = rmap_get(s, o->req);
            if (p != NULL && nbc_post(p->e.kind))
                p->e.comm = c.comm, p->e.peer = root_peer(o->root), p->e.bytes = o->bytes, p->e.bytes2 = o->bytes2;
            goto completion;
        }
        case OE_IRECV: {
            c.peer = o->peer, c.tag = o->tag, c.bytes = o->bytes, c.flags = FC_EVF_STATUS;
            /* The post learns its communicator, source and tag only now: give them to it, so that
             * it reads as the receive that took place. */
            sev *p = rmap_get(s, o->req);
            if (p != NULL && p->e.peer == FC_PEER_ANY)
                p->e.comm = c.comm, p->e.peer = o->peer, p->e.tag = o->tag, p->e.flags = 0;
        }
            /* fall through */
        case OE_ISEND_DONE: case OE_CANCELLED:
        completion:
            if (o->type == OE_CANCELLED)
                c.flags = FC_EVF_CANCELLED;
            /* A completion written before the call's Leave keeps its own time (format 2.1). */
            if (o->t >= t0 && o->t < t1)
                c.t0 = c.t1 = o->t, c.flags |= FC_EVF_OWN_TIME;
            if (nsub < 64)
                sub[nsub++] = c;
            break;
        case OE_COLL_END:
            base.comm = e.comm, base.peer = root_peer(o->root), base.bytes = o->bytes, base.bytes2 = o->bytes2;
            break;
        case OE_NBC_REQ:
            /* MPI_Startall starts each request in a START sub-record. */
            if (k == FC_EV_MPI_Startall) {
                c.obj = o->req, c.kind = FC_EV_START, c.comm = 0;
                if (nsub < 64)
                    sub[nsub++] = c;
            } else {
                base.obj = o->req;
            }
            break;
        }
    }
    base.site = site;
    /* A persistent collective's init: the request it creates is its Enter's attribute (an archive
     * of another writer names none: its Starts then start nothing the analysis knows). */
    if (f != NULL && f->preq != 0 && fc__otf2_persistent(base.kind))
        base.obj = f->preq;
    if (base.kind != 0) {
        put(s, &base);
        if ((base.kind == FC_EV_MPI_Irecv || base.kind == FC_EV_MPI_Imrecv || nbc_post(base.kind)) && base.obj &&
            !s->nomem)
            rmap_put(s, base.obj, s->nout - 1);
        /* The bytes per peer of a v or w collective follow it, as the tracer writes them. */
        if (f != NULL && f->counts != UINT32_MAX)
            put_counts(s, fc__otf2_string_of(im, f->counts), t1);
    }
    for (size_t i = 0; i < nx; i++) {
        extra[i].site = site; /* a post the call made (MPI_Start's, say): from the call's site */
        put(s, &extra[i]);
        if (extra[i].kind == FC_EV_MPI_Irecv && !s->nomem)
            rmap_put(s, extra[i].obj, s->nout - 1);
    }
    for (size_t i = 0; i < nsub; i++)
        put(s, &sub[i]);
}

static void push_ev(lstate *s, uint64_t time, const oev *o)
{
    if (s->nst == 0) {
        /* An MPI record outside any region: a call of its own, of no known function. */
        convert(s, UINT32_MAX, UINT32_MAX, ns(s->im, time), ns(s->im, time), o, 1, NULL);
        return;
    }
    if (fc__grow((void **)&s->ev, &s->nev, &s->evcap, sizeof *s->ev) < 0) {
        s->nomem = 1;
        return;
    }
    s->ev[s->nev] = *o;
    s->ev[s->nev++].t = ns(s->im, time);
}

static void enter(lstate *s, uint64_t time, uint32_t region, uint32_t cc, OTF2_AttributeList *a)
{
    const fc__importer *im = s->im;
    uint64_t preq = 0;
    OTF2_StringRef counts = UINT32_MAX;
    s->last = ns(s->im, time);
    if (fc__grow((void **)&s->st, &s->nst, &s->stcap, sizeof *s->st) < 0) {
        s->nomem = 1;
        return;
    }
    if (a != NULL && im->attr_request1 && OTF2_AttributeList_GetUint64(a, im->attr_request1 - 1, &preq) != OTF2_SUCCESS)
        preq = 0;
    if (a != NULL && im->attr_counts1 &&
        OTF2_AttributeList_GetStringRef(a, im->attr_counts1 - 1, &counts) != OTF2_SUCCESS)
        counts = UINT32_MAX;
    s->st[s->nst++] = (frame){region, cc, s->last, s->nev, preq, counts};
}

static void leave(lstate *s, uint64_t time)
{
    s->last = ns(s->im, time);
    if (s->nst == 0)
        return;
    frame *f = &s->st[--s->nst];
    if (s->nev > f->first || (f->region < s->im->nregions && s->im->regions[f->region].paradigm == OTF2_PARADIGM_MPI))
        convert(s, f->region, f->cc, f->t0, s->last, s->nev > f->first ? s->ev + f->first : s->ev,
                s->nev - f->first, f);
    s->nev = f->first;
}

#define CB_HEAD(name, ...)                                                                         \
    static OTF2_CallbackCode name(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t pos, void *d,     \
                                  OTF2_AttributeList *a, __VA_ARGS__)
#define CB_BODY(...)                                                                               \
    {                                                                                              \
        lstate *s = d;                                                                             \
        (void)l, (void)pos, (void)a;                                                               \
        oev o = __VA_ARGS__;                                                                       \
        push_ev(s, t, &o);                                                                         \
        return s->nomem ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;                          \
    }

CB_HEAD(on_enter, OTF2_RegionRef r)
{
    (void)l, (void)pos;
    enter(d, t, r, UINT32_MAX, a);
    return ((lstate *)d)->nomem ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}
CB_HEAD(on_leave, OTF2_RegionRef r)
{
    (void)l, (void)pos, (void)a, (void)r;
    leave(d, t);
    return ((lstate *)d)->nomem ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}
CB_HEAD(on_cc_enter, OTF2_CallingContextRef cc, uint32_t unwind)
{
    lstate *s = d;
    (void)l, (void)pos, (void)unwind;
    enter(s, t, cc < s->im->ncc ? s->im->ccs[cc].region : UINT32_MAX, cc < s->im->ncc ? cc : UINT32_MAX, a);
    return s->nomem ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}
CB_HEAD(on_cc_leave, OTF2_CallingContextRef cc)
{
    (void)l, (void)pos, (void)a, (void)cc;
    leave(d, t);
    return ((lstate *)d)->nomem ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}
CB_HEAD(on_send, uint32_t peer, OTF2_CommRef c, uint32_t tag, uint64_t len)
CB_BODY({.type = OE_SEND, .peer = peer, .comm = c, .tag = tag, .bytes = len})
CB_HEAD(on_isend, uint32_t peer, OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req)
CB_BODY({.type = OE_ISEND, .peer = peer, .comm = c, .tag = tag, .bytes = len, .req = req})
CB_HEAD(on_isend_done, uint64_t req)
CB_BODY({.type = OE_ISEND_DONE, .req = req})
CB_HEAD(on_irecv_req, uint64_t req)
CB_BODY({.type = OE_IRECV_REQ, .req = req})
CB_HEAD(on_recv, uint32_t peer, OTF2_CommRef c, uint32_t tag, uint64_t len)
CB_BODY({.type = OE_RECV, .peer = peer, .comm = c, .tag = tag, .bytes = len})
CB_HEAD(on_irecv, uint32_t peer, OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req)
CB_BODY({.type = OE_IRECV, .peer = peer, .comm = c, .tag = tag, .bytes = len, .req = req})
CB_HEAD(on_cancelled, uint64_t req)
CB_BODY({.type = OE_CANCELLED, .req = req})
CB_HEAD(on_coll_end, OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t sent, uint64_t recvd)
CB_BODY({.type = OE_COLL_END, .comm = c, .root = root, .bytes = sent, .bytes2 = recvd, .tag = op})
CB_HEAD(on_nbc_req, uint64_t req)
CB_BODY({.type = OE_NBC_REQ, .req = req})
CB_HEAD(on_nbc_done, OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t sent, uint64_t recvd, uint64_t req)
CB_BODY({.type = OE_NBC_DONE, .comm = c, .root = root, .bytes = sent, .bytes2 = recvd, .tag = op, .req = req})

static int cmp_sev(const void *a, const void *b)
{
    const sev *x = a, *y = b;
    if (x->e.t0 != y->e.t0)
        return x->e.t0 < y->e.t0 ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

OTF2_EvtReaderCallbacks *fc__otf2_event_callbacks(void)
{
    OTF2_EvtReaderCallbacks *cb = OTF2_EvtReaderCallbacks_New();
    if (cb == NULL)
        return NULL;
    OTF2_EvtReaderCallbacks_SetEnterCallback(cb, on_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, on_leave);
    OTF2_EvtReaderCallbacks_SetCallingContextEnterCallback(cb, on_cc_enter);
    OTF2_EvtReaderCallbacks_SetCallingContextLeaveCallback(cb, on_cc_leave);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, on_send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, on_isend);
    OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, on_isend_done);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, on_irecv_req);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, on_recv);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, on_irecv);
    OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, on_cancelled);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, on_coll_end);
    OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cb, on_nbc_req);
    OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cb, on_nbc_done);
    return cb;
}

int fc__otf2_convert_location(fc__importer *im, OTF2_Reader *rd, OTF2_EvtReaderCallbacks *cb, const fc__loc *l,
                              fc_writer *w, uint64_t *end_ns)
{
    lstate s;
    uint64_t nread = 0;
    int rc = 0;
    memset(&s, 0, sizeof s);
    s.im = im;
    OTF2_EvtReader *er = OTF2_Reader_GetEvtReader(rd, l->id);
    if (er == NULL)
        FC__OTF2_FAIL(FC_ECORRUPT, "events of location %llu cannot be opened", (unsigned long long)l->id);
    if (OTF2_Reader_RegisterEvtCallbacks(rd, er, cb, &s) != OTF2_SUCCESS ||
        OTF2_Reader_ReadAllLocalEvents(rd, er, &nread) != OTF2_SUCCESS) {
        if (s.nomem)
            FC__OTF2_FAIL(FC_ENOMEM, "out of memory");
        FC__OTF2_FAIL(FC_ECORRUPT, "events of location %llu cannot be read (after %llu events)",
                  (unsigned long long)l->id, (unsigned long long)nread);
    }
    /* Regions still open when the location ends (a run cut short) end at its last timestamp. */
    while (s.nst > 0 && !s.nomem)
        leave(&s, s.last);
    if (s.nomem)
        FC__OTF2_FAIL(FC_ENOMEM, "out of memory");
    if (s.unsorted)
        qsort(s.out, s.nout, sizeof *s.out, cmp_sev); /* calls nested in calls: back to time order */
    for (size_t i = 0; i < s.nout; i += 4096) {
        size_t n = s.nout - i < 4096 ? s.nout - i : 4096;
        fc_event chunk[4096];
        for (size_t j = 0; j < n; j++)
            chunk[j] = s.out[i + j].e;
        if ((rc = fc_writer_events(w, l->thread, chunk, n)) < 0)
            goto out;
    }
    if (s.nout > 0 && s.out[s.nout - 1].e.t1 > *end_ns)
        *end_ns = s.out[s.nout - 1].e.t1;
out:
    if (er != NULL)
        OTF2_Reader_CloseEvtReader(rd, er);
    free(s.st), free(s.ev), free(s.out), free(s.rkey), free(s.rval);
    return rc;
}

/* Writes the rank file of world rank r (location group g) into dir. */