/* libtrace/waitall.c: completes MPI_Waitall through PMPI_Waitsome steps, so that the trace can give
 * each request the time it completed rather than the time the whole call returned, while the
 * application sees what MPI_Waitall gives it.
 *
 * A Waitall over requests that complete at different times returns once, when the last one does;
 * the flows of the others would otherwise all end there. PMPI_Waitsome returns as soon as some
 * requests are complete and says which: each step's return time is the completion time of the
 * requests it names, late by at most one pass of MPI's progress loop, as MPI_Waitall's own return
 * is for the last request. PMPI_Waitsome blocks in MPI's progress engine as PMPI_Waitall does, so a
 * thread waiting here costs what it costs in PMPI_Waitall; polling with PMPI_Testsome would add a
 * call per poll and hold MPI's lock no better.
 *
 * What the application sees, against PMPI_Waitall:
 *   - requests: each step sets the handles it completes to MPI_REQUEST_NULL and leaves persistent
 *     ones allocated and inactive, as PMPI_Waitall does;
 *   - statuses: a step's status is written where PMPI_Waitall would have written it (the index of
 *     its request), field by field as MPI filled it (see merge), MPI_ERROR MPI_SUCCESS as MPICH's
 *     MPI_Waitall sets it; null and inactive requests get their statuses from PMPI_Waitall itself,
 *     on that one request;
 *   - MPI_STATUSES_IGNORE: no status of the application's is written (the steps write their
 *     own, which the record reads);
 *   - count 0, only null requests, and arguments MPI rejects (a negative count, a NULL array): the
 *     call goes to PMPI_Waitall whole;
 *   - an error in a request: the steps go on until every request is complete and the call returns
 *     MPI_ERR_IN_STATUS with each status' MPI_ERROR set (MPI_SUCCESS, or the request's error), as
 *     MPI defines MPI_Waitall. MPICH's own MPI_Waitall instead stops at the first failed request in
 *     array order, reports the later ones MPI_ERR_PENDING and leaves them active, even those that
 *     had completed; the steps cannot leave a request they completed active. An error handler
 *     other than MPI_ERRORS_RETURN runs for each step that saw a failed request (with
 *     MPI_ERRORS_ARE_FATAL, the first one ends the program as MPI_Waitall's error would);
 *   - an error of the call itself (an invalid handle, a failure of the progress engine) ends the
 *     steps and is returned as PMPI_Waitsome gave it, of the class PMPI_Waitall's would have; the
 *     requests earlier steps completed stay completed.
 *
 * Threads: all state is the calling thread's own (MPI_THREAD_MULTIPLE needs nothing shared). */
#include <stdlib.h>

#include "record.h"

/* ---- scratch ----------------------------------------------------------------------------------
 * Per thread, grown to the largest count seen (doubling), never shrunk: no allocation in the
 * steady state. Used only between fc__enter and fc__leave, by one call at a time. */
typedef struct stepscr {
    int *idx;              /* PMPI_Waitsome's array_of_indices */
    MPI_Status *sts;       /* each step's statuses follow the previous step's; then fc__steps.sts
                            * (2 cap entries: the steps write at most cap, the rest's at most cap) */
    MPI_Request *orig;     /* fc__steps.reqs */
    unsigned char *stepped; /* fc__steps.stepped */
    fc__rec *recs;         /* the COMPLETE records when the chunk has no room for them */
    int cap;               /* elements of each array */
    fc__steps out;
} stepscr;
static __thread stepscr ss FC__TLS;

/* Reallocates *p to n elements of sz bytes; returns 0, or -1 (leaving *p as it was). */
static int resize(void **p, size_t n, size_t sz)
{
    void *q = realloc(*p, n * sz);
    if (q == NULL)
        return -1;
    *p = q;
    return 0;
}

/* Grows every array of ss to hold n elements; returns 0, or -1 when memory ran out (ss then holds
 * what it held, maybe in larger arrays, and its capacity is unchanged). */
static int grow(int n)
{
    if (FC__LIKELY(n <= ss.cap))
        return 0;
    int want = ss.cap ? ss.cap : 16;
    while (want < n)
        want = want > (1 << 28) ? n : want * 2;
    size_t w = (size_t)want;
    if (resize((void **)&ss.idx, w, sizeof *ss.idx) < 0 || resize((void **)&ss.sts, 2 * w, sizeof *ss.sts) < 0 ||
        resize((void **)&ss.orig, w, sizeof *ss.orig) < 0 || resize((void **)&ss.stepped, w, 1) < 0 ||
        resize((void **)&ss.recs, w, sizeof *ss.recs) < 0)
        return -1;
    ss.cap = want;
    return 0;
}

/* ---- statuses ---------------------------------------------------------------------------------
 * A step's statuses are filled with these values before PMPI_Waitsome: values MPI never writes into
 * a status (no rank, tag or error code is FC__SRC_UNSET; no count reaches 2^62), so that afterwards
 * the fields MPI filled can be told from those it left alone. A send's status, for one, gets its
 * cancelled bit and nothing else, and the application's other fields must stay as they were. */
#define UNSET_COUNT_LO ((int)0x5a5a5a5a)
#define UNSET_COUNT_HI ((int)0xa5a5a5a4) /* count bits with the top one set; cancelled bit clear */

static void unset(MPI_Status *st)
{
    st->MPI_SOURCE = FC__SRC_UNSET;
    st->MPI_TAG = FC__SRC_UNSET;
    st->MPI_ERROR = FC__SRC_UNSET;
#if defined(MPICH)
    st->count_lo = UNSET_COUNT_LO;
    st->count_hi_and_cancelled = UNSET_COUNT_HI;
#endif
}

/* Writes into dst (the application's status of the request) what PMPI_Waitsome wrote into src. */
static inline __attribute__((always_inline)) void merge(MPI_Status *dst, const MPI_Status *src)
{
    /* PMPI_Waitsome reports a request's error there only with MPI_ERR_IN_STATUS; MPICH's
     * MPI_Waitall writes MPI_SUCCESS for every request it completes. */
    int error = src->MPI_ERROR != FC__SRC_UNSET ? src->MPI_ERROR : MPI_SUCCESS;
#if defined(MPICH)
    unsigned hi = (unsigned)src->count_hi_and_cancelled;
    int count_set = src->count_lo != UNSET_COUNT_LO || hi >> 1 != (unsigned)UNSET_COUNT_HI >> 1;
    if (FC__LIKELY(count_set && src->MPI_SOURCE != FC__SRC_UNSET && src->MPI_TAG != FC__SRC_UNSET)) {
        /* A receive's: every field. */
        *dst = *src;
        dst->MPI_ERROR = error;
        return;
    }
    if (count_set) {
        dst->count_lo = src->count_lo;
        dst->count_hi_and_cancelled = src->count_hi_and_cancelled;
    } else {
        /* MPI defines the cancelled bit of every completed request and writes it even when it
         * writes no count. */
        dst->count_hi_and_cancelled = (int)(((unsigned)dst->count_hi_and_cancelled & ~1u) | (hi & 1u));
    }
    if (src->MPI_SOURCE != FC__SRC_UNSET)
        dst->MPI_SOURCE = src->MPI_SOURCE;
    if (src->MPI_TAG != FC__SRC_UNSET)
        dst->MPI_TAG = src->MPI_TAG;
#else
    /* Without MPICH's layout the fields besides these cannot be named: the whole status. */
    int source = dst->MPI_SOURCE, tag = dst->MPI_TAG;
    *dst = *src;
    dst->MPI_SOURCE = src->MPI_SOURCE != FC__SRC_UNSET ? src->MPI_SOURCE : source;
    dst->MPI_TAG = src->MPI_TAG != FC__SRC_UNSET ? src->MPI_TAG : tag;
#endif
    dst->MPI_ERROR = error;
}

/* ---- the steps -------------------------------------------------------------------------------- */

int fc__steps_Waitall(fc__thread *t, const fc__call *c, int count, MPI_Request reqs[], MPI_Status sts[],
                     const fc__steps **steps)
{
    *steps = NULL;
    /* MPI judges the arguments, and PMPI_Waitall's own error codes and empty statuses are the
     * ones the application expects. */
    if (count <= 0 || reqs == NULL || sts == NULL || grow(count) < 0)
        return PMPI_Waitall(count, reqs, sts);
    /* The handles before the call, for the records; the active ones counted, so that the steps
     * stop when they are all complete. */
    MPI_Request *orig = ss.orig;
    unsigned char *stepped = ss.stepped;
    int n = 0;
    for (int i = 0; i < count; i++) {
        MPI_Request r = reqs[i];
        orig[i] = r;
        stepped[i] = 0;
        n += r != MPI_REQUEST_NULL;
    }
    /* The COMPLETE records go straight to the chunk, after a slot left for the call's own record
     * (fc__rec_testall fills it and takes them all), when the chunk has room for the call's records
     * (one per request and the call's); else to scratch, from which fc__rec_testall copies them. */
    fc__rec *head = t->end - t->cur > count ? t->cur : NULL;
    fc__rec *rec = head != NULL ? head + 1 : ss.recs;
    ss.out = (fc__steps){0, head, rec, stepped, orig, ss.sts};
    *steps = &ss.out;
    int ignore = sts == MPI_STATUSES_IGNORE, done = 0, rc = MPI_SUCCESS;
    if (n == 0) {
        /* Only null requests: PMPI_Waitall's empty statuses, and records that need none. */
        rc = PMPI_Waitall(count, reqs, sts);
        for (int i = 0; i < count; i++)
            unset(&ss.sts[i]);
        return rc;
    }
    /* Each step writes the statuses of the requests it completes to the entries after those of
     * the steps before; marked once here, each entry is written once. The steps always pass
     * statuses, whatever the application passed: the records take the envelope of every receive
     * from them. */
    MPI_Status *scr = ss.sts;
    for (int k = 0; k < n; k++)
        unset(&scr[k]);
    /* The steps pass the application's own array: each sets the requests it completes to
     * MPI_REQUEST_NULL, or leaves persistent ones inactive, as PMPI_Waitall does, and the next
     * one skips those, as it skips the null requests; its indices are the application's. */
    int *idx = ss.idx;
    uint64_t prev = c->t0;
    int left = n;
    int base = 0; /* the statuses the steps have written */
    while (left > 0) {
        int out = MPI_UNDEFINED;
        int step = PMPI_Waitsome(count, reqs, &out, idx, scr + base);
        uint64_t now = fc__now();
        if (step != MPI_SUCCESS && step != MPI_ERR_IN_STATUS) {
            rc = step; /* the call failed, not a request: MPI has reported it */
            break;
        }
        if (out == MPI_UNDEFINED)
            break; /* the rest are inactive persistent requests */
        if (out <= 0 || out > left)
            break; /* not what MPI promises: PMPI_Waitall finishes below */
        if (step == MPI_ERR_IN_STATUS)
            rc = MPI_ERR_IN_STATUS;
        /* The requests' own time: the step's return, kept inside the call and never decreasing,
         * so that the clock of another core cannot break format.h's order. */
        prev = now < prev ? prev : now;
        /* Each request at most once, whatever indices MPI gives: a status an index out of range
         * or repeated came with is left where it is, unused. */
        const MPI_Status *st = scr + base;
        for (int k = 0; k < out; k++, st++) {
            int i = idx[k];
            if (FC__UNLIKELY((unsigned)i >= (unsigned)count || stepped[i]))
                continue;
            if (!ignore)
                merge(&sts[i], st);
            stepped[i] = 1;
            fc__complete_fill(rec + done++, prev, FC_EVF_OWN_TIME, orig[i], st);
        }
        base += out;
        left -= out;
    }
    ss.out.n = done;
    ss.out.sts = scr + base;
    if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || done == count)
        return rc;
    /* The requests no step completed: null ones, inactive persistent ones (and, should MPI ever
     * break its promise, active ones). PMPI_Waitall on each alone writes the status MPI_Waitall
     * writes for it there (and waits for an active one); a copy, marked where MPI left a field
     * alone, follows the steps' statuses for the record. Its results go to ss.idx, free now. */
    int m = base;
    for (int i = 0; i < count; i++) {
        ss.idx[i] = MPI_SUCCESS;
        if (stepped[i])
            continue;
        MPI_Status *copy = &ss.sts[m++];
        unset(copy);
        if (ignore) {
            if (reqs[i] != MPI_REQUEST_NULL)
                ss.idx[i] = PMPI_Waitall(1, &reqs[i], copy);
        } else {
            int source = sts[i].MPI_SOURCE;
            sts[i].MPI_SOURCE = FC__SRC_UNSET;
            ss.idx[i] = PMPI_Waitall(1, &reqs[i], &sts[i]);
            *copy = sts[i];
            if (sts[i].MPI_SOURCE == FC__SRC_UNSET)
                sts[i].MPI_SOURCE = source;
        }
        if (ss.idx[i] != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = ss.idx[i];
    }
    /* With MPI_ERR_IN_STATUS, MPI_Waitall sets the error field of every status. */
    if (!ignore && rc == MPI_ERR_IN_STATUS)
        for (int i = 0; i < count; i++)
            if (!stepped[i] && ss.idx[i] == MPI_SUCCESS)
                sts[i].MPI_ERROR = MPI_SUCCESS;
    return rc;
}
