/* libtrace/req.c: records the request events (Start, Startall, Request_free, Cancel) and the wait
 * and test families with one COMPLETE sub-record per request they complete (at the time each
 * request completed, for an MPI_Waitall completed in steps); keeps the thread-local scratch those
 * wrappers use for request copies and substitute statuses. */
#include <stdlib.h>

#include "record.h"

/* ---- scratch ----------------------------------------------------------------------------------
 * Per thread, grown to the largest count seen (doubling), never shrunk: no allocation in the
 * steady state. Freed with the process; a thread that exits leaks its few kilobytes. Used only
 * between fc__enter and fc__leave, so a thread never needs two at once. */
typedef struct scratch {
    MPI_Request *reqs;
    int nreqs;
    MPI_Status *sts; /* substitute statuses */
    int nsts;
    int *srcs; /* the application's MPI_SOURCE values, while marked */
    int nsrcs;
    int unmarked; /* the last fc__wrap_statuses could not mark the application's statuses */
} scratch;
static __thread scratch scr FC__TLS;

/* Returns buf grown to hold at least n elements of size sz (*cap counts them), or NULL when memory
 * ran out (buf is then left as it was). */
static void *grow(void *buf, int *cap, int n, size_t sz)
{
    if (n <= *cap)
        return buf;
    int want = *cap ? *cap : 16;
    while (want < n)
        want = want > (1 << 29) ? n : want * 2;
    void *p = realloc(buf, (size_t)want * sz);
    if (p != NULL)
        *cap = want;
    return p;
}

const MPI_Request *fc__wrap_reqs(const MPI_Request *reqs, int n)
{
    if (reqs == NULL || n <= 0)
        return NULL;
    MPI_Request *p = grow(scr.reqs, &scr.nreqs, n, sizeof *scr.reqs);
    if (p == NULL)
        return NULL;
    scr.reqs = p;
    for (int i = 0; i < n; i++)
        scr.reqs[i] = reqs[i];
    return scr.reqs;
}

MPI_Status *fc__wrap_statuses(MPI_Status *sts, int n)
{
    scr.unmarked = 0;
    if (n <= 0 || sts == NULL)
        return sts;
    if (sts == MPI_STATUSES_IGNORE) {
        MPI_Status *p = grow(scr.sts, &scr.nsts, n, sizeof *scr.sts);
        if (p == NULL) {
            scr.unmarked = 1;
            return sts;
        }
        scr.sts = p;
        for (int i = 0; i < n; i++)
            p[i].MPI_SOURCE = FC__SRC_UNSET;
        return p;
    }
    int *saved = grow(scr.srcs, &scr.nsrcs, n, sizeof *scr.srcs);
    if (saved == NULL) {
        scr.unmarked = 1;
        return sts;
    }
    scr.srcs = saved;
    for (int i = 0; i < n; i++) {
        saved[i] = sts[i].MPI_SOURCE;
        sts[i].MPI_SOURCE = FC__SRC_UNSET;
    }
    return sts;
}

void fc__wrap_statuses_done(MPI_Status *sts, int n)
{
    if (n <= 0 || sts == NULL || sts == MPI_STATUSES_IGNORE || scr.unmarked)
        return;
    for (int i = 0; i < n; i++)
        if (sts[i].MPI_SOURCE == FC__SRC_UNSET)
            sts[i].MPI_SOURCE = scr.srcs[i];
}

int fc__statuses_usable(const MPI_Status *sts)
{
    return sts != NULL && sts != MPI_STATUSES_IGNORE && !scr.unmarked;
}

/* ---- pending non-blocking collectives ---------------------------------------------------------
 * MPICH fills the status of a completed non-blocking collective (or MPI_Comm_idup) with the
 * envelope of some internal message; MPI leaves it undefined. The I-collective record functions
 * note their requests here so that their completion reports no status. Per thread, a bounded set:
 * when it overflows, the oldest entry is forgotten (its completion then looks like a receive's). */
#define NBC_SLOTS 64
static __thread MPI_Request nbc[NBC_SLOTS] FC__TLS;
static __thread unsigned nbc_next FC__TLS;

void fc__wrap_nbc_posted(MPI_Request req)
{
    nbc[nbc_next++ % NBC_SLOTS] = req;
}

/* Whether req is a pending non-blocking collective; forgets it (it is completing). */
static int nbc_take(MPI_Request req)
{
    if (nbc_next == 0)
        return 0;
    for (unsigned i = 0; i < NBC_SLOTS; i++)
        if (nbc[i] == req && req != MPI_REQUEST_NULL && req != 0) {
            nbc[i] = MPI_REQUEST_NULL;
            return 1;
        }
    return 0;
}

/* ---- persistent collectives -------------------------------------------------------------------
 * Their requests, noted at init, so that each Start notes the request as a pending collective
 * (its completion then reports no envelope either: MPICH leaves the status alone, and the
 * tracer's own status would show the last message's). Per thread and bounded as above: a request
 * initialised on one thread and started on another, or past the slots, keeps its status. */
#define PCOLL_SLOTS 32
static __thread MPI_Request pcoll[PCOLL_SLOTS] FC__TLS;
static __thread unsigned pcoll_n FC__TLS;

void fc__wrap_pcoll_init(MPI_Request req)
{
    for (unsigned i = 0; i < PCOLL_SLOTS; i++)
        if (i >= pcoll_n || pcoll[i] == MPI_REQUEST_NULL) {
            pcoll[i] = req;
            if (i >= pcoll_n)
                pcoll_n = i + 1;
            return;
        }
}

/* Notes req as a pending collective when it is a persistent collective's; forgets it when
 * freeing (MPI may give its handle to another request). */
static void pcoll_use(MPI_Request req, int freeing)
{
    for (unsigned i = 0; i < pcoll_n; i++)
        if (pcoll[i] == req && req != MPI_REQUEST_NULL) {
            if (freeing)
                pcoll[i] = MPI_REQUEST_NULL;
            else
                fc__wrap_nbc_posted(req);
            return;
        }
}

/* ---- starting and freeing ----------------------------------------------------------------------
 */

/* MPI_Start: obj = the persistent request started. */
void fc__rec_start(fc__thread *t, const fc__call *c, const MPI_Request *req)
{
    fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, req ? FC__HANDLE(*req) : 0, 0, 0);
    if (pcoll_n && req != NULL && c->rc == MPI_SUCCESS)
        pcoll_use(*req, 0);
}

/* MPI_Startall: bytes2 = the count, then one START record per request (persistent requests keep
 * their handles, so the array still holds them after the call). */
void fc__rec_startall(fc__thread *t, const fc__call *c, int count, const MPI_Request *reqs)
{
    fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, 0, 0, count > 0 ? (uint64_t)count : 0);
    if (c->rc != MPI_SUCCESS || reqs == NULL)
        return;
    for (int i = 0; i < count; i++) {
        fc__rec_sub(t, c, FC_EV_START, FC_PEER_NONE, 0, 0, 0, FC__HANDLE(reqs[i]), 0);
        if (pcoll_n)
            pcoll_use(reqs[i], 0);
    }
}

/* MPI_Request_free and MPI_Cancel: obj = the request (as it was before the call). */
void fc__rec_req(fc__thread *t, const fc__call *c, MPI_Request req)
{
    fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, FC__HANDLE(req), 0, 0);
    if (pcoll_n && c->kind == FC_EV_MPI_Request_free)
        pcoll_use(req, 1);
}

/* ---- completion --------------------------------------------------------------------------------
 */

/* Whether st is the empty status MPI returns for MPI_REQUEST_NULL and inactive persistent requests:
 * source MPI_ANY_SOURCE, tag MPI_ANY_TAG, no bytes (no completed operation reports these). */
static int status_empty(const MPI_Status *st)
{
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG &&
           fc__status_bytes(st) == 0;
}

/* One COMPLETE record at time at for request req (its handle before the call) with status st
 * (NULL when the statuses cannot be trusted), with the flags in own added. Inline: a Waitall of
 * many requests runs it once a request, and a call would cost a third of it. MPI writes source, tag
 * and count only for receives; a send, a collective or a generalized request leaves the marked
 * status alone (then only the cancelled bit is meaningful), and the envelope of a cancelled
 * request or a collective means nothing. */
static inline __attribute__((always_inline)) void complete_at(fc__thread *t, const fc__call *c, uint64_t at,
                                                              uint32_t own, MPI_Request req,
                                                              const MPI_Status *st)
{
    int cancelled = 0;
    if (req == MPI_REQUEST_NULL) {
        fc__rec_sub_at(t, c, at, FC_EV_COMPLETE, FC_PEER_NONE, 0, 0, 0, FC__HANDLE(req),
                       FC_EVF_NULL | own);
        return;
    }
    if (st == NULL || st == MPI_STATUS_IGNORE) {
        fc__rec_sub_at(t, c, at, FC_EV_COMPLETE, FC_PEER_NONE, 0, 0, 0, FC__HANDLE(req), own);
        return;
    }
#if defined(MPICH)
    /* MPICH keeps the cancelled bit as the low bit of count_hi_and_cancelled (its
     * MPIR_STATUS_GET_CANCEL_BIT), where PMPI_Test_cancelled costs a call and its checks. */
    cancelled = st->count_hi_and_cancelled & 1;
#else
    if (PMPI_Test_cancelled(st, &cancelled) != MPI_SUCCESS)
        cancelled = 0;
#endif
    /* A cancelled request's envelope is undefined, and so is a collective's. */
    if (!fc__status_filled(st) || cancelled || nbc_take(req)) {
        fc__rec_sub_at(t, c, at, FC_EV_COMPLETE, FC_PEER_NONE, 0, 0, 0, FC__HANDLE(req),
                       (cancelled ? FC_EVF_CANCELLED : 0) | own);
        return;
    }
    if (status_empty(st)) {
        fc__rec_sub_at(t, c, at, FC_EV_COMPLETE, FC_PEER_NONE, 0, 0, 0, FC__HANDLE(req),
                       FC_EVF_NULL | own);
        return;
    }
    uint32_t flags = FC_EVF_STATUS | (cancelled ? FC_EVF_CANCELLED : 0) | own;
    int32_t tag = st->MPI_TAG == MPI_ANY_TAG ? FC_TAG_ANY : st->MPI_TAG;
    fc__rec_sub_at(t, c, at, FC_EV_COMPLETE, fc__peer(st->MPI_SOURCE), tag, 0,
                   fc__status_bytes(st), FC__HANDLE(req), flags);
}

/* complete_at at the call's exit time. */
static void complete(fc__thread *t, const fc__call *c, MPI_Request req, const MPI_Status *st)
{
    complete_at(t, c, c->t1, 0, req, st);
}

/* Whether entry i of an array call completed: with MPI_ERR_IN_STATUS, the entries still pending say
 * MPI_ERR_PENDING; with another error nothing is known to have completed. */
static int entry_done(const fc__call *c, const MPI_Status *sts, int i)
{
    if (c->rc == MPI_SUCCESS)
        return 1;
    if (c->rc != MPI_ERR_IN_STATUS || !fc__statuses_usable(sts))
        return 0;
    return sts[i].MPI_ERROR != MPI_ERR_PENDING;
}

/* MPI_Wait and MPI_Test (flag NULL for Wait). */
void fc__rec_test(fc__thread *t, const fc__call *c, MPI_Request req, const MPI_Status *st,
                  const int *flag)
{
    int done = c->rc == MPI_SUCCESS && (flag == NULL || *flag);
    if (flag != NULL && !done) {
        fc__rec_poll(t, c, FC_PEER_NONE, 0, 0, FC__HANDLE(req), 0, 1);
        return;
    }
    fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, FC__HANDLE(req), done ? FC_EVF_FOUND : 0, 1);
    if (done)
        complete(t, c, req, st);
}

/* fc__rec_testall for an MPI_Waitall completed in steps: the requests the steps completed, each at
 * its own time, in the order they completed; then, unless the call failed for a reason other than
 * a request's error, the null and inactive requests at the exit. The times are kept inside the
 * call and never decreasing, so that the clock of another core cannot break format.h's order.
 * Handles and statuses are the steps' own copies (fc__steps). */
static void rec_steps(fc__thread *t, const fc__call *c, int count, const fc__steps *steps)
{
    int rest = c->rc == MPI_SUCCESS || c->rc == MPI_ERR_IN_STATUS;
    int any = steps->n > 0 || (rest && count > 0);
    fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, 0, any ? FC_EVF_FOUND : 0,
                count > 0 ? (uint64_t)count : 0);
    uint64_t prev = c->t0;
    for (int k = 0; k < steps->n; k++) {
        int i = steps->order[k];
        if (i < 0 || i >= count)
            continue;
        uint64_t at = steps->when[i];
        at = at < prev ? prev : at > c->t1 ? c->t1 : at;
        prev = at;
        complete_at(t, c, at, FC_EVF_OWN_TIME, steps->reqs[i], &steps->sts[k]);
    }
    if (!rest || steps->n == count) /* every request completed in a step */
        return;
    const MPI_Status *st = steps->sts + steps->n;
    for (int i = 0; i < count; i++)
        if (steps->when[i] == FC__NOT_STEPPED)
            complete(t, c, steps->reqs[i], st++);
}

/* MPI_Waitall and MPI_Testall: all requests complete together (flag NULL for Waitall). reqs is the
 * copy taken before the call, NULL when none could be taken (then no COMPLETE records). */
void fc__rec_testall(fc__thread *t, const fc__call *c, int count, const MPI_Request *reqs,
                     const MPI_Status *sts, const int *flag, const fc__steps *steps)
{
    if (steps != NULL) {
        rec_steps(t, c, count, steps);
        return;
    }
    int any = reqs != NULL && count > 0 && (flag == NULL || (c->rc == MPI_SUCCESS && *flag));
    if (any && c->rc != MPI_SUCCESS) {
        any = 0;
        for (int i = 0; i < count && !any; i++)
            any = entry_done(c, sts, i);
    }
    if (flag != NULL && !any) {
        fc__rec_poll(t, c, FC_PEER_NONE, 0, 0, 0, 0, count > 0 ? (uint64_t)count : 0);
        return;
    }
    fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, 0, any ? FC_EVF_FOUND : 0,
                count > 0 ? (uint64_t)count : 0);
    if (!any)
        return;
    int have = fc__statuses_usable(sts);
    for (int i = 0; i < count; i++)
        if (entry_done(c, sts, i))
            complete(t, c, reqs[i], have ? &sts[i] : NULL);
}

/* MPI_Waitany and MPI_Testany: the request at *index completed, unless it is MPI_UNDEFINED (no
 * active request, or nothing completed yet for Testany). */
void fc__rec_testany(fc__thread *t, const fc__call *c, int count, const MPI_Request *reqs,
                     const int *index, const MPI_Status *st, const int *flag)
{
    int i = index != NULL ? *index : MPI_UNDEFINED;
    int done = c->rc == MPI_SUCCESS && (flag == NULL || *flag) && i != MPI_UNDEFINED && i >= 0 &&
               i < count;
    if (flag != NULL && c->rc == MPI_SUCCESS && !*flag) {
        fc__rec_poll(t, c, FC_PEER_NONE, 0, 0, 0, 0, count > 0 ? (uint64_t)count : 0);
        return;
    }
    fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, 0, done && reqs ? FC_EVF_FOUND : 0,
                count > 0 ? (uint64_t)count : 0);
    if (done && reqs)
        complete(t, c, reqs[i], st);
}

/* MPI_Waitsome and MPI_Testsome: the *outcount requests named by indices[] completed. */
void fc__rec_testsome(fc__thread *t, const fc__call *c, int incount, const MPI_Request *reqs,
                      const int *outcount, const int *indices, const MPI_Status *sts)
{
    int n =
        outcount != NULL && (c->rc == MPI_SUCCESS || c->rc == MPI_ERR_IN_STATUS) ? *outcount : 0;
    if (c->kind == FC_EV_MPI_Testsome && n == 0 && c->rc == MPI_SUCCESS) {
        /* Nothing completed, though some request is active (else outcount is MPI_UNDEFINED). */
        fc__rec_poll(t, c, FC_PEER_NONE, 0, 0, 0, 0, incount > 0 ? (uint64_t)incount : 0);
        return;
    }
    if (n == MPI_UNDEFINED || n < 0 || n > incount || reqs == NULL || indices == NULL)
        n = 0;
    fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, 0, n > 0 ? FC_EVF_FOUND : 0,
                incount > 0 ? (uint64_t)incount : 0);
    int have = fc__statuses_usable(sts);
    for (int k = 0; k < n; k++) {
        int i = indices[k];
        if (i >= 0 && i < incount)
            complete(t, c, reqs[i], have ? &sts[k] : NULL);
    }
}
