/* libtrace/record.h: the typed record functions the generated MPI wrappers call after PMPI.
 *
 * Contract: each fc__rec_* function runs on the calling thread, inside fc__enter/fc__leave, after
 * the PMPI call returned; it fills one or more fc__rec slots (format.h gives every field's meaning)
 * and never fails, prints, allocates in the steady state or changes anything the application sees.
 * Arguments are the wrapper's, as named in mpi.spec; pointers are read only. */
#ifndef FLOWCUT_LIBTRACE_RECORD_H
#define FLOWCUT_LIBTRACE_RECORD_H

#include <stdatomic.h>

#include "internal.h"

/* What every wrapper knows about its call: filled by the generated code. */
typedef struct fc__call {
    uint64_t t0, t1; /* event clock at entry and exit */
    uint32_t site;   /* call-site id, taken by the wrapper itself (fc__site) so that a deeper
                        unwind starts two frames closer to the application */
    int rc;          /* what PMPI returned */
    uint16_t kind;   /* FC_EV_* */
} fc__call;

/* Fills record r of kind c->kind with the call's times, site and error flag. */
static inline __attribute__((always_inline)) void fc__rec_fill(fc__rec *r, const fc__call *c, int32_t peer,
                                                               int32_t tag, uint32_t comm, uint64_t bytes,
                                                               uint64_t obj, uint32_t flags, uint64_t bytes2)
{
    r->t0 = c->t0;
    r->t1 = c->t1;
    r->bytes = bytes;
    r->bytes2 = bytes2;
    r->obj = obj;
    r->peer = peer;
    r->tag = tag;
    r->comm = comm;
    r->site = c->site;
    r->kind = c->kind;
    r->flags = (uint16_t)(flags | (c->rc != MPI_SUCCESS ? FC_EVF_ERROR : 0));
    r->reserved = 0;
}

/* Fills one record of kind c->kind with the call's times, site and error flag; returns it so that
 * sub-records can follow. Shared by the record files; inline because it is the hot path. */
static inline fc__rec *fc__rec_put(fc__thread *t, const fc__call *c, int32_t peer, int32_t tag,
                                   uint32_t comm, uint64_t bytes, uint64_t obj, uint32_t flags,
                                   uint64_t bytes2)
{
    fc__rec *r = fc__slot(t);
    fc__rec_fill(r, c, peer, tag, comm, bytes, obj, flags, bytes2);
    return r;
}

/* Whether a record on communicator comm, of elements of datatype dt, can be filled without
 * calling anything: MPI_COMM_WORLD (comm_id 0), a builtin datatype (fc__bytes) and room in the
 * chunk. A record function whose common case calls nothing is compiled without saving registers
 * there, which is a third of its cost; the other cases take a function of their own. */
static inline int fc__rec_quick(const fc__thread *t, MPI_Comm comm, MPI_Datatype dt)
{
    return comm == MPI_COMM_WORLD && ((uint32_t)dt >> 30) == 1 && t->cur != t->end;
}

/* Fills one sub-record (COMPLETE or START) following the call c at time at (t0 = t1 = at, which
 * lies between the call's t0 and t1 and is not below the previous sub-record's), no call site of
 * its own (it belongs to the preceding call), comm as given (0 when the reader must take it from
 * the request's post). */
static inline void fc__rec_sub_at(fc__thread *t, const fc__call *c, uint64_t at, uint16_t kind,
                                  int32_t peer, int32_t tag, uint32_t comm, uint64_t bytes,
                                  uint64_t obj, uint32_t flags)
{
    fc__rec *r = fc__slot(t);
    r->t0 = at;
    r->t1 = at;
    r->bytes = bytes;
    r->bytes2 = 0;
    r->obj = obj;
    r->peer = peer;
    r->tag = tag;
    r->comm = comm;
    r->site = 0;
    r->kind = kind;
    r->flags = (uint16_t)flags;
    r->reserved = 0;
}

/* fc__rec_sub_at at the call's exit time: the time of every sub-record but the COMPLETE records
 * of a call completed in steps. */
static inline void fc__rec_sub(fc__thread *t, const fc__call *c, uint16_t kind, int32_t peer,
                               int32_t tag, uint32_t comm, uint64_t bytes, uint64_t obj,
                               uint32_t flags)
{
    fc__rec_sub_at(t, c, c->t1, kind, peer, tag, comm, bytes, obj, flags);
}

/* A request or message handle as the unsigned value stored in obj. */
#define FC__HANDLE(h) ((uint64_t)(uint32_t)(h))

/* Bytes a status reports (MPI_BYTE count), 0 when it reports none or MPI_UNDEFINED; through
 * PMPI_Get_count_c. */
FC__HIDDEN uint64_t fc__status_bytes_mpi(const MPI_Status *st);
/* The same, inline: MPICH keeps the byte count itself in the status (count_lo, and the high half
 * in count_hi_and_cancelled above the cancelled bit), where PMPI_Get_count_c costs about 90
 * instructions a receive. test-runtime-bytes checks the two against each other. */
static inline uint64_t fc__status_bytes(const MPI_Status *st)
{
#if defined(MPICH) && MPICH_NUMVERSION >= 30400000
    if (st == NULL || st == MPI_STATUS_IGNORE)
        return 0;
    uint64_t n = (uint64_t)(uint32_t)st->count_lo |
                 (uint64_t)((uint32_t)st->count_hi_and_cancelled >> 1) << 32;
    return n >> 62 ? 0 : n; /* what MPI would call a negative count */
#else
    return fc__status_bytes_mpi(st);
#endif
}

/* ---- polls that found nothing (poll.c) ---- */
/* Records a call of MPI_Test, MPI_Testany, MPI_Testsome, MPI_Testall, MPI_Iprobe or MPI_Improbe
 * that found nothing (bytes 0, no sub-record), folded into the run of such calls the thread's last
 * records are when it repeats their arguments. */
FC__HIDDEN void fc__rec_poll(fc__thread *t, const fc__call *c, int32_t peer, int32_t tag,
                             uint32_t comm, uint64_t obj, uint32_t flags, uint64_t bytes2);

/* ---- environment and communicators (comm-wrap.c) ---- */
FC__HIDDEN void fc__rec_env(fc__thread *t, const fc__call *c);
FC__HIDDEN void fc__rec_abort(fc__thread *t, const fc__call *c, MPI_Comm comm, int errorcode);
FC__HIDDEN void fc__rec_comm_new(fc__thread *t, const fc__call *c, MPI_Comm parent,
                                 const MPI_Comm *newcomm);
FC__HIDDEN void fc__rec_comm_idup(fc__thread *t, const fc__call *c, MPI_Comm parent,
                                  const MPI_Request *req);
FC__HIDDEN void fc__rec_comm_free(fc__thread *t, const fc__call *c, uint32_t comm_id);
/* FREEING(p) of mpi.spec: the comm_id of *comm, the runtime told to forget it; before
 * PMPI_Comm_free. */
FC__HIDDEN uint32_t fc__wrap_freeing(const MPI_Comm *comm);

/* ---- point to point and probes (p2p.c) ---- */
/* fc__rec_send, fc__rec_irecv and fc__rec_recv (below, inline) outside their common case. */
FC__HIDDEN void fc__rec_send_any(fc__thread *t, const fc__call *c, MPI_Comm comm, int dest, int tag,
                                 MPI_Datatype dt, int64_t count, const MPI_Request *req);
FC__HIDDEN void fc__rec_irecv_any(fc__thread *t, const fc__call *c, MPI_Comm comm, int source, int tag,
                                  MPI_Datatype dt, int64_t count, const MPI_Request *req);
FC__HIDDEN void fc__rec_recv_any(fc__thread *t, const fc__call *c, MPI_Comm comm, int source, int tag,
                                 MPI_Datatype dt, int64_t count, const MPI_Status *st);
FC__HIDDEN void fc__rec_mrecv(fc__thread *t, const fc__call *c, MPI_Message msg, MPI_Datatype dt,
                              int64_t count, const MPI_Status *st);
FC__HIDDEN void fc__rec_imrecv(fc__thread *t, const fc__call *c, MPI_Message msg, MPI_Datatype dt,
                               int64_t count, const MPI_Request *req);
FC__HIDDEN void fc__rec_sendrecv(fc__thread *t, const fc__call *c, MPI_Comm comm, int dest,
                                 int sendtag, MPI_Datatype sendtype, int64_t sendcount,
                                 MPI_Datatype recvtype, int64_t recvcount, int source, int recvtag,
                                 const MPI_Status *st);
FC__HIDDEN void fc__rec_probe(fc__thread *t, const fc__call *c, MPI_Comm comm, int source, int tag,
                              const int *flag, const MPI_Message *msg, const MPI_Status *st);

/* ---- MPI_Waitall in steps (waitall.c) ---- */
/* What a call completed in steps left for its record: the COMPLETE records of the requests its
 * steps completed, and what the record of the others needs. Thread-local, valid until the thread's
 * next call completed in steps. */
typedef struct fc__steps {
    int n;             /* requests the steps completed */
    fc__rec *head;     /* the chunk's next free slot when the steps began, left for the call's own
                        * record, with the n COMPLETE records in the slots after it (not yet taken:
                        * the thread's cur still points at head); NULL when the chunk had no room */
    const fc__rec *recs; /* the n COMPLETE records, in completion order, each at the time of the
                          * step that completed it (not below the call's entry nor the record
                          * before, not yet capped at the call's exit): head + 1, or scratch */
    const unsigned char *stepped; /* by index: 1 for the requests a step completed */
    const MPI_Request *reqs; /* by index: the handle before the call */
    const MPI_Status *sts;   /* when the call did not fail for itself, one status for each request no
                              * step completed, in array order, as MPI wrote it (MPI_SOURCE
                              * FC__SRC_UNSET when MPI wrote none) */
} fc__steps;
/* Whether fc__steps_Waitall takes these arguments: a count and arrays MPI could accept. The others
 * (count 0, NULL arrays: errors MPI reports) go to PMPI_Waitall whole. */
static inline int fc__steps_ready_Waitall(int count, const MPI_Request reqs[], const MPI_Status sts[])
{
    return count > 0 && reqs != NULL && sts != NULL;
}
/* MPI_Waitall through PMPI_Waitsome steps (the spec's steps flag), on thread t for the call c
 * (c->t0 set): takes and returns what PMPI_Waitall takes and returns, and leaves the application's
 * requests and statuses as PMPI_Waitall would (an error of one request aside: see waitall.c); the
 * statuses need no marking. Sets *steps to what the steps left for fc__rec_testall, which must
 * follow before anything else is recorded on t, or to NULL when it handed the whole call to
 * PMPI_Waitall (arguments MPI must judge, no memory for its scratch). */
FC__HIDDEN int fc__steps_Waitall(fc__thread *t, const fc__call *c, int count, MPI_Request reqs[],
                                 MPI_Status sts[], const fc__steps **steps);

/* ---- requests: start, free, cancel, wait and test families (req.c) ---- */
FC__HIDDEN void fc__rec_start(fc__thread *t, const fc__call *c, const MPI_Request *req);
FC__HIDDEN void fc__rec_startall(fc__thread *t, const fc__call *c, int count,
                                 const MPI_Request *reqs);
FC__HIDDEN void fc__rec_req(fc__thread *t, const fc__call *c, MPI_Request req);
FC__HIDDEN void fc__rec_test(fc__thread *t, const fc__call *c, MPI_Request req,
                             const MPI_Status *st, const int *flag);
/* MPI_Waitall and MPI_Testall (flag NULL for Waitall); steps is what fc__steps_Waitall noted, NULL
 * when PMPI ran the call whole; with steps, reqs and sts are not read (the steps hold both). */
FC__HIDDEN void fc__rec_testall(fc__thread *t, const fc__call *c, int count,
                                const MPI_Request *reqs, const MPI_Status *sts, const int *flag,
                                const fc__steps *steps);
FC__HIDDEN void fc__rec_testany(fc__thread *t, const fc__call *c, int count,
                                const MPI_Request *reqs, const int *index, const MPI_Status *st,
                                const int *flag);
FC__HIDDEN void fc__rec_testsome(fc__thread *t, const fc__call *c, int incount,
                                 const MPI_Request *reqs, const int *outcount, const int *indices,
                                 const MPI_Status *sts);
/* REQS(p, n) of mpi.spec: a thread-local copy of reqs[0..n), or NULL when n <= 0, reqs is NULL or
 * the scratch could not grow. Valid until the thread's next call of it. */
FC__HIDDEN const MPI_Request *fc__wrap_reqs(const MPI_Request *reqs, int n);

/* MPI fills a status only for what it completes: sends, collectives and unfinished tests leave the
 * caller's status as it was. So before the call the wrapper writes FC__SRC_UNSET in MPI_SOURCE,
 * after the record it puts the application's value back where MPI did not write; a record function
 * seeing FC__SRC_UNSET knows the status says nothing. No MPI rank or constant has this value. */
#define FC__SRC_UNSET (INT32_MIN + 0x5a)
/* STATUS(p) of mpi.spec: returns st, or own when st is MPI_STATUS_IGNORE, marked as above; *saved
 * keeps the application's MPI_SOURCE for fc__wrap_status_done(st, saved). Inline: every blocking
 * receive, probe and wait goes through them. */
static inline MPI_Status *fc__wrap_status(MPI_Status *st, MPI_Status *own, int *saved)
{
    if (st == MPI_STATUS_IGNORE)
        st = own;
    else if (st == NULL)
        return st; /* erroneous; MPI reports it, the wrapper must not crash first */
    *saved = st->MPI_SOURCE;
    st->MPI_SOURCE = FC__SRC_UNSET;
    return st;
}
static inline void fc__wrap_status_done(MPI_Status *st, int saved)
{
    if (st != MPI_STATUS_IGNORE && st != NULL && st->MPI_SOURCE == FC__SRC_UNSET)
        st->MPI_SOURCE = saved;
}
/* STATUSES(p, n) of mpi.spec: sts, or thread-local scratch for n statuses when sts is
 * MPI_STATUSES_IGNORE, marked as above (the application's sources saved in scratch) ; then
 * fc__wrap_statuses_done(sts, n) after the record. When the scratch cannot grow, sts is returned
 * unmarked and fc__statuses_usable() says 0 until the next call. */
FC__HIDDEN MPI_Status *fc__wrap_statuses(MPI_Status *sts, int n);
FC__HIDDEN void fc__wrap_statuses_done(MPI_Status *sts, int n);
FC__HIDDEN int fc__statuses_usable(const MPI_Status *sts);
/* Notes the request of a non-blocking collective or MPI_Comm_idup just posted: its completion
 * carries no envelope (req.c). */
FC__HIDDEN void fc__wrap_nbc_posted(MPI_Request req);
/* Notes the request of a persistent collective just initialised, for every thread, until
 * MPI_Request_free: its completions carry no envelope (req.c). Thread-safe; allocates (the set
 * grows with the requests noted). */
FC__HIDDEN void fc__wrap_pcoll_init(MPI_Request req);
/* Whether st holds what MPI wrote for a completed operation. */
static inline int fc__status_filled(const MPI_Status *st)
{
    return st != NULL && st != MPI_STATUS_IGNORE && st->MPI_SOURCE != FC__SRC_UNSET;
}

/* ---- the COMPLETE record (req.c) ---- */
/* Whether req is a non-blocking collective's (forgotten then: it is completing) or a persistent
 * collective's; for fc__complete_fill, after its inline test of the two counts below. */
FC__HIDDEN int fc__coll_req(MPI_Request req);
FC__HIDDEN extern __thread unsigned fc__nbc_next FC__TLS; /* non-blocking collectives noted */
FC__HIDDEN extern _Atomic size_t fc__pcoll_live;         /* persistent collectives noted */

/* Fills r as the COMPLETE record at time at of request req (its handle before the call) with
 * status st (NULL when the statuses cannot be trusted), with the flags in own added. Inline: a
 * Waitall of many requests runs it once a request, and a call would cost a third of it. MPI writes
 * source, tag and count only for receives; a send, a collective or a generalized request leaves
 * the marked status alone (then only the cancelled bit is meaningful), and the envelope of a
 * cancelled request or a collective means nothing. */
static inline __attribute__((always_inline)) void fc__complete_fill(fc__rec *r, uint64_t at, uint32_t own,
                                                                    MPI_Request req, const MPI_Status *st)
{
    int32_t peer = FC_PEER_NONE, tag = 0;
    uint64_t bytes = 0;
    uint32_t flags = own;
    if (req == MPI_REQUEST_NULL) {
        flags |= FC_EVF_NULL;
    } else if (st != NULL && st != MPI_STATUS_IGNORE) {
        int cancelled = 0;
#if defined(MPICH)
        /* MPICH keeps the cancelled bit as the low bit of count_hi_and_cancelled (its
         * MPIR_STATUS_GET_CANCEL_BIT), where PMPI_Test_cancelled costs a call and its checks. */
        cancelled = st->count_hi_and_cancelled & 1;
#else
        if (PMPI_Test_cancelled(st, &cancelled) != MPI_SUCCESS)
            cancelled = 0;
#endif
        if (cancelled) {
            flags |= FC_EVF_CANCELLED;
        } else if (fc__status_filled(st) &&
                   !((fc__nbc_next | atomic_load_explicit(&fc__pcoll_live, memory_order_relaxed)) &&
                     fc__coll_req(req))) {
            bytes = fc__status_bytes(st);
            if (st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && bytes == 0) {
                /* The empty status MPI returns for MPI_REQUEST_NULL and inactive persistent
                 * requests (no completed operation reports it). */
                flags |= FC_EVF_NULL;
            } else {
                flags |= FC_EVF_STATUS;
                peer = fc__peer(st->MPI_SOURCE);
                tag = st->MPI_TAG == MPI_ANY_TAG ? FC_TAG_ANY : st->MPI_TAG;
            }
        }
    }
    r->t0 = at;
    r->t1 = at;
    r->bytes = flags & FC_EVF_STATUS ? bytes : 0;
    r->bytes2 = 0;
    r->obj = FC__HANDLE(req);
    r->peer = peer;
    r->tag = tag;
    r->comm = 0;
    r->site = 0;
    r->kind = FC_EV_COMPLETE;
    r->flags = (uint16_t)flags;
    r->reserved = 0;
}

/* ---- point to point, inline ----
 * The commonest calls' records, filled in the wrapper itself in their common case (MPI_COMM_WORLD,
 * a builtin datatype, room in the chunk): a call to a record function of 8 arguments costs a third
 * of the record. */

/* Flags for a receive or probe that asked for wildcards. */
static inline uint32_t fc__wildcard_flags(int source, int tag)
{
    return (source == MPI_ANY_SOURCE ? FC_EVF_ANY_SOURCE : 0) | (tag == MPI_ANY_TAG ? FC_EVF_ANY_TAG : 0);
}

static inline int32_t fc__tag_of(int tag)
{
    return tag == MPI_ANY_TAG ? FC_TAG_ANY : tag;
}

/* Every send (blocking, non-blocking, persistent init): peer = dest, bytes = what the arguments
 * describe, obj = the request for the non-blocking and persistent ones. */
static inline __attribute__((always_inline)) void fc__rec_send(fc__thread *t, const fc__call *c, MPI_Comm comm,
                                                               int dest, int tag, MPI_Datatype dt, int64_t count,
                                                               const MPI_Request *req)
{
    if (FC__LIKELY(fc__rec_quick(t, comm, dt))) {
        uint64_t obj = req != NULL && c->rc == MPI_SUCCESS ? FC__HANDLE(*req) : 0;
        fc__rec_fill(t->cur++, c, fc__peer(dest), tag, 0, fc__bytes(dt, count), obj, 0, 0);
        return;
    }
    fc__rec_send_any(t, c, comm, dest, tag, dt, count, req);
}

/* MPI_Irecv and MPI_Recv_init: the requested source and tag (wildcards as FC_PEER_ANY/FC_TAG_ANY
 * with their flags), bytes = the buffer's capacity; what arrives is in the COMPLETE record. */
static inline __attribute__((always_inline)) void fc__rec_irecv(fc__thread *t, const fc__call *c, MPI_Comm comm,
                                                                int source, int tag, MPI_Datatype dt,
                                                                int64_t count, const MPI_Request *req)
{
    if (FC__LIKELY(fc__rec_quick(t, comm, dt))) {
        uint64_t obj = req != NULL && c->rc == MPI_SUCCESS ? FC__HANDLE(*req) : 0;
        fc__rec_fill(t->cur++, c, fc__peer(source), fc__tag_of(tag), 0, fc__bytes(dt, count), obj,
                     fc__wildcard_flags(source, tag), 0);
        return;
    }
    fc__rec_irecv_any(t, c, comm, source, tag, dt, count, req);
}

/* MPI_Recv: the actual source, tag and byte count from the status (the wrapper substitutes its own
 * when the application ignores it); the requested ones when the call failed. */
static inline __attribute__((always_inline)) void fc__rec_recv(fc__thread *t, const fc__call *c, MPI_Comm comm,
                                                               int source, int tag, MPI_Datatype dt,
                                                               int64_t count, const MPI_Status *st)
{
    if (FC__LIKELY(c->rc == MPI_SUCCESS && fc__status_filled(st) && comm == MPI_COMM_WORLD && t->cur != t->end)) {
        fc__rec_fill(t->cur++, c, fc__peer(st->MPI_SOURCE), fc__tag_of(st->MPI_TAG), 0, fc__status_bytes(st), 0,
                     fc__wildcard_flags(source, tag), 0);
        return;
    }
    fc__rec_recv_any(t, c, comm, source, tag, dt, count, st);
}

/* ---- collectives (coll.c) ---- */
FC__HIDDEN void fc__rec_barrier(fc__thread *t, const fc__call *c, MPI_Comm comm,
                                const MPI_Request *req);
FC__HIDDEN void fc__rec_bcast(fc__thread *t, const fc__call *c, MPI_Comm comm, int root,
                              MPI_Datatype dt, int64_t count, const MPI_Request *req);
FC__HIDDEN void fc__rec_reduce(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Op op, int root,
                               MPI_Datatype dt, int64_t count, const MPI_Request *req);
FC__HIDDEN void fc__rec_allreduce(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Op op, MPI_Datatype dt,
                                  int64_t count, const MPI_Request *req);
FC__HIDDEN void fc__rec_gather(fc__thread *t, const fc__call *c, MPI_Comm comm, int root,
                               const void *sendbuf, MPI_Datatype sendtype, int64_t sendcount,
                               MPI_Datatype recvtype, int64_t recvcount, const MPI_Request *req);
FC__HIDDEN void fc__rec_gatherv(fc__thread *t, const fc__call *c, MPI_Comm comm, int root,
                                const void *sendbuf, MPI_Datatype sendtype, int64_t sendcount,
                                MPI_Datatype recvtype, const void *recvcounts, int wide,
                                const MPI_Request *req);
FC__HIDDEN void fc__rec_scatter(fc__thread *t, const fc__call *c, MPI_Comm comm, int root,
                                const void *recvbuf, MPI_Datatype sendtype, int64_t sendcount,
                                MPI_Datatype recvtype, int64_t recvcount, const MPI_Request *req);
FC__HIDDEN void fc__rec_scatterv(fc__thread *t, const fc__call *c, MPI_Comm comm, int root,
                                 const void *recvbuf, MPI_Datatype sendtype, const void *sendcounts,
                                 int wide, MPI_Datatype recvtype, int64_t recvcount,
                                 const MPI_Request *req);
FC__HIDDEN void fc__rec_allgather(fc__thread *t, const fc__call *c, MPI_Comm comm,
                                  const void *sendbuf, MPI_Datatype sendtype, int64_t sendcount,
                                  MPI_Datatype recvtype, int64_t recvcount, const MPI_Request *req);
FC__HIDDEN void fc__rec_allgatherv(fc__thread *t, const fc__call *c, MPI_Comm comm,
                                   const void *sendbuf, MPI_Datatype sendtype, int64_t sendcount,
                                   MPI_Datatype recvtype, const void *recvcounts, int wide,
                                   const MPI_Request *req);
FC__HIDDEN void fc__rec_alltoall(fc__thread *t, const fc__call *c, MPI_Comm comm,
                                 const void *sendbuf, MPI_Datatype sendtype, int64_t sendcount,
                                 MPI_Datatype recvtype, int64_t recvcount, const MPI_Request *req);
FC__HIDDEN void fc__rec_alltoallv(fc__thread *t, const fc__call *c, MPI_Comm comm,
                                  const void *sendbuf, MPI_Datatype sendtype,
                                  const void *sendcounts, MPI_Datatype recvtype,
                                  const void *recvcounts, int wide, const MPI_Request *req);
FC__HIDDEN void fc__rec_alltoallw(fc__thread *t, const fc__call *c, MPI_Comm comm,
                                  const void *sendbuf, const MPI_Datatype *sendtypes,
                                  const void *sendcounts, const MPI_Datatype *recvtypes,
                                  const void *recvcounts, int wide, const MPI_Request *req);
FC__HIDDEN void fc__rec_reduce_scatter(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Op op,
                                       MPI_Datatype dt, const void *recvcounts, int wide,
                                       const MPI_Request *req);
FC__HIDDEN void fc__rec_reduce_scatter_block(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Op op,
                                             MPI_Datatype dt, int64_t recvcount,
                                             const MPI_Request *req);
/* The neighbourhood collectives (format.h: bytes and bytes2 are the sums over this rank's out-
 * and in-neighbours, COUNTS runs over neighbour positions): nbr for Neighbor_allgather and
 * Neighbor_alltoall (count elements to and from each neighbour), nbrv for Neighbor_allgatherv
 * (sendcounts NULL: sendcount to each) and Neighbor_alltoallv, nbrw for Neighbor_alltoallw; in
 * their non-blocking forms (req) and persistent ones (req, persistent = 1). */
FC__HIDDEN void fc__rec_nbr(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Datatype sendtype,
                            int64_t sendcount, MPI_Datatype recvtype, int64_t recvcount,
                            const MPI_Request *req, int persistent);
FC__HIDDEN void fc__rec_nbrv(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Datatype sendtype,
                             int64_t sendcount, const void *sendcounts, MPI_Datatype recvtype,
                             const void *recvcounts, int wide, const MPI_Request *req, int persistent);
FC__HIDDEN void fc__rec_nbrw(fc__thread *t, const fc__call *c, MPI_Comm comm, const MPI_Datatype *sendtypes,
                             const void *sendcounts, const MPI_Datatype *recvtypes, const void *recvcounts,
                             int wide, const MPI_Request *req, int persistent);

/* ---- Fortran 2008 argument mapping for the f08 bypass entry points (comm-wrap.c) ---- */
FC__HIDDEN MPI_Status *fc__f08_status(MPI_F08_status *st);
FC__HIDDEN MPI_Status *fc__f08_statuses(MPI_F08_status *sts);
FC__HIDDEN const int *fc__f08_weights(const MPI_Fint *w);

#endif /* FLOWCUT_LIBTRACE_RECORD_H */
