/* libtrace/req.c: records the request events (Start, Startall, Request_free, Cancel) and the wait
 * and test families with one COMPLETE sub-record per request they complete (at the time each
 * request completed, for an MPI_Waitall completed in steps); keeps the thread-local scratch those
 * wrappers use for request copies and substitute statuses. */
#include <pthread.h>
#include <stdatomic.h>
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
__thread unsigned fc__nbc_next FC__TLS;

void fc__wrap_nbc_posted(MPI_Request req)
{
    /* Never back to 0 (the sign of none noted) after wrapping around. */
    nbc[fc__nbc_next++ % NBC_SLOTS] = req;
    if (fc__nbc_next == 0)
        fc__nbc_next = NBC_SLOTS;
}

/* Whether req is a pending non-blocking collective; forgets it (it is completing). */
static int nbc_take(MPI_Request req)
{
    if (fc__nbc_next == 0)
        return 0;
    for (unsigned i = 0; i < NBC_SLOTS; i++)
        if (nbc[i] == req && req != MPI_REQUEST_NULL && req != 0) {
            nbc[i] = MPI_REQUEST_NULL;
            return 1;
        }
    return 0;
}

/* ---- persistent collectives -------------------------------------------------------------------
 * Their requests, noted at init and forgotten when freed, so that their completions report no
 * envelope (MPICH leaves in a persistent collective's status the envelope of the last message its
 * schedule received). Process-wide: under MPI_THREAD_MULTIPLE one thread may initialise a
 * collective that another starts and a third completes. An open-addressing set of handles that
 * grows without bound: changed under a mutex, read without one (the completions of every request
 * look in it once any persistent collective exists). A grown table replaces the old one, which
 * stays allocated (a reader may still be in it) until the process ends: at most as much again. */
#define PC_EMPTY 0u                /* a slot never used */
#define PC_GONE UINT64_MAX         /* a slot whose request was freed */
typedef struct pc_table {
    size_t mask;                   /* slots - 1, slots a power of two */
    _Atomic uint64_t slot[];       /* FC__HANDLE(req) + 1 (never PC_EMPTY or PC_GONE), or those */
} pc_table;
static _Atomic(pc_table *) pc_tab;
_Atomic size_t fc__pcoll_live; /* requests in the set: 0 lets every lookup stop at once */
static size_t pc_used;             /* slots not PC_EMPTY (live and gone), under pc_lock */
static pthread_mutex_t pc_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t pc_key(MPI_Request req)
{
    return FC__HANDLE(req) + 1;
}

static inline size_t pc_hash(uint64_t k, size_t mask)
{
    return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 17) & mask;
}

/* Whether req is a persistent collective's request. */
static int pcoll_has(MPI_Request req)
{
    if (FC__LIKELY(atomic_load_explicit(&fc__pcoll_live, memory_order_relaxed) == 0) || req == MPI_REQUEST_NULL)
        return 0;
    const pc_table *t = atomic_load_explicit(&pc_tab, memory_order_acquire);
    if (t == NULL)
        return 0;
    uint64_t k = pc_key(req);
    for (size_t i = pc_hash(k, t->mask), n = 0; n <= t->mask; i = (i + 1) & t->mask, n++) {
        uint64_t v = atomic_load_explicit(&t->slot[i], memory_order_acquire);
        if (v == k)
            return 1;
        if (v == PC_EMPTY)
            return 0;
    }
    return 0;
}

/* Puts k in t (pc_lock held, room certain). */
static void pc_put(pc_table *t, uint64_t k)
{
    size_t i = pc_hash(k, t->mask);
    for (;;) {
        uint64_t v = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
        if (v == k)
            return;
        if (v == PC_EMPTY) {
            atomic_store_explicit(&t->slot[i], k, memory_order_release);
            pc_used++;
            return;
        }
        i = (i + 1) & t->mask;
    }
}

void fc__wrap_pcoll_init(MPI_Request req)
{
    if (req == MPI_REQUEST_NULL)
        return;
    pthread_mutex_lock(&pc_lock);
    pc_table *t = atomic_load_explicit(&pc_tab, memory_order_relaxed);
    size_t live = atomic_load_explicit(&fc__pcoll_live, memory_order_relaxed);
    if (t == NULL || 2 * (pc_used + 1) > t->mask + 1) {
        /* At most half full, freed slots dropped: a table twice the live requests' need. */
        size_t slots = 16;
        while (slots < 4 * (live + 1))
            slots *= 2;
        pc_table *g = calloc(1, sizeof *g + slots * sizeof g->slot[0]);
        if (g == NULL) {
            pthread_mutex_unlock(&pc_lock);
            fc__warn("no memory to note a persistent collective: its completions may carry a stale envelope");
            return;
        }
        g->mask = slots - 1;
        pc_used = 0;
        if (t != NULL)
            for (size_t i = 0; i <= t->mask; i++) {
                uint64_t v = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
                if (v != PC_EMPTY && v != PC_GONE)
                    pc_put(g, v);
            }
        atomic_store_explicit(&pc_tab, g, memory_order_release);
        t = g;
    }
    size_t before = pc_used;
    pc_put(t, pc_key(req));
    if (pc_used != before)
        atomic_store_explicit(&fc__pcoll_live, live + 1, memory_order_release);
    pthread_mutex_unlock(&pc_lock);
}

/* Forgets req, being freed (MPI may give its handle to another request). */
static void pcoll_forget(MPI_Request req)
{
    if (atomic_load_explicit(&fc__pcoll_live, memory_order_relaxed) == 0 || req == MPI_REQUEST_NULL)
        return;
    pthread_mutex_lock(&pc_lock);
    pc_table *t = atomic_load_explicit(&pc_tab, memory_order_relaxed);
    uint64_t k = pc_key(req);
    for (size_t i = pc_hash(k, t->mask), n = 0; n <= t->mask; i = (i + 1) & t->mask, n++) {
        uint64_t v = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
        if (v == PC_EMPTY)
            break;
        if (v == k) {
            atomic_store_explicit(&t->slot[i], PC_GONE, memory_order_release);
            atomic_store_explicit(&fc__pcoll_live, atomic_load_explicit(&fc__pcoll_live, memory_order_relaxed) - 1,
                                  memory_order_release);
            break;
        }
    }
    pthread_mutex_unlock(&pc_lock);
}

/* ---- starting and freeing ----------------------------------------------------------------------
 */

/* MPI_Start: obj = the persistent request started. */
void fc__rec_start(fc__thread *t, const fc__call *c, const MPI_Request *req)
{
    fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, req ? FC__HANDLE(*req) : 0, 0, 0);
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
    }
}

/* MPI_Request_free and MPI_Cancel: obj = the request (as it was before the call). */
void fc__rec_req(fc__thread *t, const fc__call *c, MPI_Request req)
{
    fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, FC__HANDLE(req), 0, 0);
    if (c->kind == FC_EV_MPI_Request_free && c->rc == MPI_SUCCESS)
        pcoll_forget(req);
}

/* ---- completion --------------------------------------------------------------------------------
 */

int fc__coll_req(MPI_Request req)
{
    return nbc_take(req) || pcoll_has(req);
}

/* One COMPLETE record at time at (fc__complete_fill). */
static inline __attribute__((always_inline)) void complete_at(fc__thread *t, uint64_t at, uint32_t own,
                                                              MPI_Request req, const MPI_Status *st)
{
    fc__complete_fill(fc__slot(t), at, own, req, st);
}

/* complete_at at the call's exit time. */
static void complete(fc__thread *t, const fc__call *c, MPI_Request req, const MPI_Status *st)
{
    complete_at(t, c->t1, 0, req, st);
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

/* fc__rec_testall for an MPI_Waitall completed in steps: the call's record, then the COMPLETE
 * records the steps made, in the order the requests completed, each at its own time capped at the
 * call's exit; then, unless the call failed for a reason other than a request's error, the null and
 * inactive requests at the exit. */
static void rec_steps(fc__thread *t, const fc__call *c, int count, const fc__steps *steps)
{
    int rest = c->rc == MPI_SUCCESS || c->rc == MPI_ERR_IN_STATUS;
    int n = steps->n;
    uint32_t flags = n > 0 || (rest && count > 0) ? FC_EVF_FOUND : 0;
    uint64_t bytes2 = count > 0 ? (uint64_t)count : 0;
    if (FC__LIKELY(steps->head != NULL && steps->head == t->cur)) {
        /* The records are in place after the call's: take them, capping the last ones' times. */
        fc__rec_fill(steps->head, c, FC_PEER_NONE, 0, 0, 0, 0, flags, bytes2);
        fc__rec *first = steps->head + 1;
        t->cur = first + n;
        for (fc__rec *r = t->cur; r-- > first && r->t0 > c->t1;)
            r->t0 = r->t1 = c->t1;
    } else {
        fc__rec_put(t, c, FC_PEER_NONE, 0, 0, 0, 0, flags, bytes2);
        for (int k = 0; k < n; k++) {
            fc__rec *r = fc__slot(t);
            *r = steps->recs[k];
            if (r->t0 > c->t1)
                r->t0 = r->t1 = c->t1;
        }
    }
    if (!rest || n == count) /* every request completed in a step */
        return;
    const MPI_Status *st = steps->sts;
    for (int i = 0; i < count; i++)
        if (!steps->stepped[i])
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
