/* libtrace/coll.c: records the collective events, blocking and non-blocking, with the bytes this
 * rank sends (bytes) and receives (bytes2).
 *
 * Rule for the byte counts: only what the arguments describe and MPI says is significant at this
 * rank counts. Send-side arguments ignored because of MPI_IN_PLACE are replaced by what the
 * receive side says this rank contributes; root-only arguments count at the root only; the v and w
 * forms sum their count arrays over the group (the remote group on an inter-communicator). The
 * rank's own block is included: bytes describe buffers, not network traffic. peer is the root of a
 * rooted collective (MPI_ROOT and MPI_PROC_NULL mapped), FC_PEER_NONE otherwise; obj is the request
 * of the non-blocking forms. The v and w forms whose counts differ between ranks follow their
 * record with COUNTS sub-records: the bytes per rank of the group, in runs of equal ones. The record
 * functions get the program's communicator; its queries go through fc__wc, so that MPI_COMM_WORLD
 * answers as the renumbered world (renumber.h). */
#include "record.h"
#include "renumber.h"

/* Where this rank stands in a rooted collective. */
enum { R_NONE = 0, R_ROOT = 1, R_LEAF = 2 };

static int role(MPI_Comm comm, int root)
{
    if (root == MPI_ROOT)
        return R_ROOT;
    if (root == MPI_PROC_NULL)
        return R_NONE; /* a non-root rank of the root group of an inter-communicator */
    int inter = 0, rank = -1;
    if (PMPI_Comm_test_inter(fc__wc(comm), &inter) != MPI_SUCCESS)
        return R_NONE;
    if (inter)
        return R_LEAF;
    if (PMPI_Comm_rank(fc__wc(comm), &rank) != MPI_SUCCESS)
        return R_NONE;
    return rank == root ? R_ROOT : R_LEAF;
}

/* The number of blocks a rooted or all-to-all collective exchanges: the group size, the remote one
 * on an inter-communicator; 0 when MPI cannot say. */
static int64_t blocks(MPI_Comm comm)
{
    int inter = 0, n = 0;
    if (PMPI_Comm_test_inter(fc__wc(comm), &inter) != MPI_SUCCESS)
        return 0;
    if ((inter ? PMPI_Comm_remote_size(fc__wc(comm), &n) : PMPI_Comm_size(fc__wc(comm), &n)) != MPI_SUCCESS ||
        n < 0)
        return 0;
    return n;
}

/* Element i of a count array: int in the classic functions, MPI_Count in the _c ones. */
static int64_t count_at(const void *counts, int wide, int64_t i)
{
    return wide ? (int64_t)((const MPI_Count *)counts)[i] : (int64_t)((const int *)counts)[i];
}

/* Bytes of the n counts of dt listed in counts. */
static uint64_t sum_bytes(MPI_Datatype dt, const void *counts, int wide, int64_t n)
{
    uint64_t total = 0;
    if (counts == NULL)
        return 0;
    for (int64_t i = 0; i < n; i++)
        total += fc__bytes(dt, count_at(counts, wide, i));
    return total;
}

/* One side (to or from every rank of the group) of a v or w collective's count arrays: counts of
 * dt, or of dts[i] for rank i (the w forms); counts NULL: nothing. */
typedef struct side {
    const void *counts;
    int wide;
    MPI_Datatype dt;
    const MPI_Datatype *dts;
    int64_t len; /* entries in counts, 0: the whole group (the neighbourhood collectives' lists
                  * end at the degree, shorter than the run of positions COUNTS covers) */
    int same;    /* counts holds one count, the same for every entry */
} side;

static uint64_t side_at(const side *s, int64_t i)
{
    if (s->counts == NULL || (s->dts == NULL && s->dt == MPI_DATATYPE_NULL) || (s->len > 0 && i >= s->len))
        return 0;
    return fc__bytes(s->dts ? s->dts[i] : s->dt, count_at(s->counts, s->wide, s->same ? 0 : i));
}

/* One COUNTS sub-record: ranks first .. first + n - 1 each get `to` bytes from this rank and send
 * it `from`. */
static void put_counts(fc__thread *t, const fc__call *c, int64_t first, int64_t n, uint64_t to, uint64_t from)
{
    fc__rec *r = fc__slot(t);
    r->t0 = r->t1 = c->t1;
    r->bytes = to;
    r->bytes2 = from;
    r->obj = (uint64_t)n;
    r->peer = (int32_t)first;
    r->tag = 0;
    r->comm = 0;
    r->site = 0;
    r->kind = FC_EV_COUNTS;
    r->flags = 0;
    r->reserved = 0;
}

/* The COUNTS sub-records of call c over the n ranks of the group: the runs of ranks that get the
 * same in both directions, none when all do (the totals say it then). The arrays are read twice
 * rather than copied: the runtime allocates nothing here. */
static void counts(fc__thread *t, const fc__call *c, int64_t n, const side *to, const side *from)
{
    if (n <= 1 || c->rc != MPI_SUCCESS)
        return;
    uint64_t a = side_at(to, 0), b = side_at(from, 0);
    int64_t i = 1;
    while (i < n && side_at(to, i) == a && side_at(from, i) == b)
        i++;
    if (i == n)
        return;
    int64_t first = 0;
    for (i = 1; i <= n; i++) {
        uint64_t x = i < n ? side_at(to, i) : 0, y = i < n ? side_at(from, i) : 0;
        if (i == n || x != a || y != b) {
            put_counts(t, c, first, i - first, a, b);
            first = i;
            a = x;
            b = y;
        }
    }
}

/* The request of a non-blocking collective, noted as such (req.c), or of a persistent one, which
 * is only initialised here (its Starts post it). */
static uint64_t req_obj(const fc__call *c, const MPI_Request *req)
{
    if (req == NULL || c->rc != MPI_SUCCESS)
        return 0;
    if ((c->kind >= FC_EV_MPI_Barrier_init && c->kind <= FC_EV_MPI_Scan_init) || c->kind == FC_EV_MPI_Exscan_init)
        fc__wrap_pcoll_init(*req);
    else
        fc__wrap_nbc_posted(*req);
    return FC__HANDLE(*req);
}

static void coll_flags(fc__thread *t, const fc__call *c, MPI_Comm comm, int32_t peer, uint64_t bytes,
                       uint64_t bytes2, const MPI_Request *req, uint32_t flags)
{
    fc__rec_put(t, c, peer, 0, fc__comm(comm), bytes, req_obj(c, req), flags, bytes2);
}

static void coll(fc__thread *t, const fc__call *c, MPI_Comm comm, int32_t peer, uint64_t bytes,
                 uint64_t bytes2, const MPI_Request *req)
{
    coll_flags(t, c, comm, peer, bytes, bytes2, req, 0);
}

/* FC_EVF_USER_OP and FC_EVF_NONCOMMUTATIVE for a reduction's operation, which change MPICH's
 * choice of algorithm. MPICH's predefined operations are builtin handles (01 in the top two bits,
 * as its builtin datatypes) and all commutative: only an operation of MPI_Op_create is asked. */
static uint32_t op_flags(MPI_Op op)
{
    if (((uint32_t)op >> 30) == 1 || op == MPI_OP_NULL)
        return 0;
    int commute = 1;
    if (PMPI_Op_commutative(op, &commute) != MPI_SUCCESS)
        return FC_EVF_USER_OP;
    return FC_EVF_USER_OP | (commute ? 0 : FC_EVF_NONCOMMUTATIVE);
}

void fc__rec_barrier(fc__thread *t, const fc__call *c, MPI_Comm comm, const MPI_Request *req)
{
    coll(t, c, comm, FC_PEER_NONE, 0, 0, req);
}

/* Bcast: the root sends the buffer, the others receive it. */
void fc__rec_bcast(fc__thread *t, const fc__call *c, MPI_Comm comm, int root, MPI_Datatype dt,
                   int64_t count, const MPI_Request *req)
{
    int r = role(comm, root);
    uint64_t n = r == R_NONE ? 0 : fc__bytes(dt, count);
    coll(t, c, comm, fc__peer(root), r == R_ROOT ? n : 0, r == R_LEAF ? n : 0, req);
}

/* Reduce: every contributing rank sends count elements, the root receives the result. On an
 * inter-communicator the root group contributes nothing. */
void fc__rec_reduce(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Op op, int root, MPI_Datatype dt,
                    int64_t count, const MPI_Request *req)
{
    int r = role(comm, root);
    int inter = 0;
    PMPI_Comm_test_inter(fc__wc(comm), &inter);
    uint64_t n = fc__bytes(dt, count);
    uint64_t sent = r == R_LEAF || (r == R_ROOT && !inter) ? n : 0;
    coll_flags(t, c, comm, fc__peer(root), sent, r == R_ROOT ? n : 0, req, op_flags(op));
}

/* Allreduce, Scan, Exscan: count elements in, count elements out. */
void fc__rec_allreduce(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Op op, MPI_Datatype dt,
                       int64_t count, const MPI_Request *req)
{
    uint64_t n = fc__bytes(dt, count);
    coll_flags(t, c, comm, FC_PEER_NONE, n, n, req, op_flags(op));
}

void fc__rec_gather(fc__thread *t, const fc__call *c, MPI_Comm comm, int root, const void *sendbuf,
                    MPI_Datatype sendtype, int64_t sendcount, MPI_Datatype recvtype,
                    int64_t recvcount, const MPI_Request *req)
{
    int r = role(comm, root);
    uint64_t sent = 0, recvd = 0;
    if (r == R_LEAF)
        sent = fc__bytes(sendtype, sendcount);
    if (r == R_ROOT) {
        int inter = 0;
        PMPI_Comm_test_inter(fc__wc(comm), &inter);
        if (!inter)
            sent = sendbuf == MPI_IN_PLACE ? fc__bytes(recvtype, recvcount)
                                           : fc__bytes(sendtype, sendcount);
        recvd = fc__bytes(recvtype, recvcount) * (uint64_t)blocks(comm);
    }
    coll(t, c, comm, fc__peer(root), sent, recvd, req);
}

void fc__rec_gatherv(fc__thread *t, const fc__call *c, MPI_Comm comm, int root, const void *sendbuf,
                     MPI_Datatype sendtype, int64_t sendcount, MPI_Datatype recvtype,
                     const void *recvcounts, int wide, const MPI_Request *req)
{
    int r = role(comm, root);
    uint64_t sent = 0, recvd = 0;
    if (r == R_LEAF)
        sent = fc__bytes(sendtype, sendcount);
    if (r == R_ROOT) {
        int inter = 0, rank = 0;
        PMPI_Comm_test_inter(fc__wc(comm), &inter);
        if (!inter && sendbuf != MPI_IN_PLACE)
            sent = fc__bytes(sendtype, sendcount);
        else if (!inter && PMPI_Comm_rank(fc__wc(comm), &rank) == MPI_SUCCESS && recvcounts != NULL)
            sent = fc__bytes(recvtype, count_at(recvcounts, wide, rank));
        recvd = sum_bytes(recvtype, recvcounts, wide, blocks(comm));
    }
    coll(t, c, comm, fc__peer(root), sent, recvd, req);
    if (r == R_ROOT) {
        side none = {NULL, 0, MPI_DATATYPE_NULL, NULL, 0, 0}, from = {recvcounts, wide, recvtype, NULL, 0, 0};
        counts(t, c, blocks(comm), &none, &from);
    }
}

void fc__rec_scatter(fc__thread *t, const fc__call *c, MPI_Comm comm, int root, const void *recvbuf,
                     MPI_Datatype sendtype, int64_t sendcount, MPI_Datatype recvtype,
                     int64_t recvcount, const MPI_Request *req)
{
    int r = role(comm, root);
    uint64_t sent = 0, recvd = 0;
    if (r == R_LEAF)
        recvd = fc__bytes(recvtype, recvcount);
    if (r == R_ROOT) {
        int inter = 0;
        PMPI_Comm_test_inter(fc__wc(comm), &inter);
        sent = fc__bytes(sendtype, sendcount) * (uint64_t)blocks(comm);
        if (!inter)
            recvd = recvbuf == MPI_IN_PLACE ? fc__bytes(sendtype, sendcount)
                                            : fc__bytes(recvtype, recvcount);
    }
    coll(t, c, comm, fc__peer(root), sent, recvd, req);
}

void fc__rec_scatterv(fc__thread *t, const fc__call *c, MPI_Comm comm, int root,
                      const void *recvbuf, MPI_Datatype sendtype, const void *sendcounts, int wide,
                      MPI_Datatype recvtype, int64_t recvcount, const MPI_Request *req)
{
    int r = role(comm, root);
    uint64_t sent = 0, recvd = 0;
    if (r == R_LEAF)
        recvd = fc__bytes(recvtype, recvcount);
    if (r == R_ROOT) {
        int inter = 0, rank = 0;
        PMPI_Comm_test_inter(fc__wc(comm), &inter);
        sent = sum_bytes(sendtype, sendcounts, wide, blocks(comm));
        if (!inter && recvbuf != MPI_IN_PLACE)
            recvd = fc__bytes(recvtype, recvcount);
        else if (!inter && PMPI_Comm_rank(fc__wc(comm), &rank) == MPI_SUCCESS && sendcounts != NULL)
            recvd = fc__bytes(sendtype, count_at(sendcounts, wide, rank));
    }
    coll(t, c, comm, fc__peer(root), sent, recvd, req);
    if (r == R_ROOT) {
        side to = {sendcounts, wide, sendtype, NULL, 0, 0}, none = {NULL, 0, MPI_DATATYPE_NULL, NULL, 0, 0};
        counts(t, c, blocks(comm), &to, &none);
    }
}

void fc__rec_allgather(fc__thread *t, const fc__call *c, MPI_Comm comm, const void *sendbuf,
                       MPI_Datatype sendtype, int64_t sendcount, MPI_Datatype recvtype,
                       int64_t recvcount, const MPI_Request *req)
{
    uint64_t block = fc__bytes(recvtype, recvcount);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? block : fc__bytes(sendtype, sendcount);
    coll(t, c, comm, FC_PEER_NONE, sent, block * (uint64_t)blocks(comm), req);
}

void fc__rec_allgatherv(fc__thread *t, const fc__call *c, MPI_Comm comm, const void *sendbuf,
                        MPI_Datatype sendtype, int64_t sendcount, MPI_Datatype recvtype,
                        const void *recvcounts, int wide, const MPI_Request *req)
{
    uint64_t sent = fc__bytes(sendtype, sendcount);
    int rank = 0;
    if (sendbuf == MPI_IN_PLACE)
        sent = recvcounts != NULL && PMPI_Comm_rank(fc__wc(comm), &rank) == MPI_SUCCESS
                   ? fc__bytes(recvtype, count_at(recvcounts, wide, rank))
                   : 0;
    int64_t n = blocks(comm);
    coll(t, c, comm, FC_PEER_NONE, sent, sum_bytes(recvtype, recvcounts, wide, n), req);
    side none = {NULL, 0, MPI_DATATYPE_NULL, NULL, 0, 0}, from = {recvcounts, wide, recvtype, NULL, 0, 0};
    counts(t, c, n, &none, &from);
}

void fc__rec_alltoall(fc__thread *t, const fc__call *c, MPI_Comm comm, const void *sendbuf,
                      MPI_Datatype sendtype, int64_t sendcount, MPI_Datatype recvtype,
                      int64_t recvcount, const MPI_Request *req)
{
    uint64_t n = (uint64_t)blocks(comm);
    uint64_t recvd = fc__bytes(recvtype, recvcount) * n;
    uint64_t sent = sendbuf == MPI_IN_PLACE ? recvd : fc__bytes(sendtype, sendcount) * n;
    coll(t, c, comm, FC_PEER_NONE, sent, recvd, req);
}

void fc__rec_alltoallv(fc__thread *t, const fc__call *c, MPI_Comm comm, const void *sendbuf,
                       MPI_Datatype sendtype, const void *sendcounts, MPI_Datatype recvtype,
                       const void *recvcounts, int wide, const MPI_Request *req)
{
    int64_t n = blocks(comm);
    uint64_t recvd = sum_bytes(recvtype, recvcounts, wide, n);
    uint64_t sent = sendbuf == MPI_IN_PLACE ? recvd : sum_bytes(sendtype, sendcounts, wide, n);
    coll(t, c, comm, FC_PEER_NONE, sent, recvd, req);
    side from = {recvcounts, wide, recvtype, NULL, 0, 0};
    side to = sendbuf == MPI_IN_PLACE ? from : (side){sendcounts, wide, sendtype, NULL, 0, 0};
    counts(t, c, n, &to, &from);
}

void fc__rec_alltoallw(fc__thread *t, const fc__call *c, MPI_Comm comm, const void *sendbuf,
                       const MPI_Datatype *sendtypes, const void *sendcounts,
                       const MPI_Datatype *recvtypes, const void *recvcounts, int wide,
                       const MPI_Request *req)
{
    int64_t n = blocks(comm);
    uint64_t sent = 0, recvd = 0;
    for (int64_t i = 0; recvtypes != NULL && recvcounts != NULL && i < n; i++)
        recvd += fc__bytes(recvtypes[i], count_at(recvcounts, wide, i));
    if (sendbuf == MPI_IN_PLACE)
        sent = recvd;
    else
        for (int64_t i = 0; sendtypes != NULL && sendcounts != NULL && i < n; i++)
            sent += fc__bytes(sendtypes[i], count_at(sendcounts, wide, i));
    coll(t, c, comm, FC_PEER_NONE, sent, recvd, req);
    if (recvtypes == NULL || (sendbuf != MPI_IN_PLACE && sendtypes == NULL))
        return;
    side from = {recvcounts, wide, MPI_DATATYPE_NULL, recvtypes, 0, 0};
    side to = sendbuf == MPI_IN_PLACE ? from : (side){sendcounts, wide, MPI_DATATYPE_NULL, sendtypes, 0, 0};
    counts(t, c, n, &to, &from);
}

/* Reduce_scatter: every rank contributes the whole vector (the sum of recvcounts over its group)
 * and receives its own block. */
void fc__rec_reduce_scatter(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Op op, MPI_Datatype dt,
                            const void *recvcounts, int wide, const MPI_Request *req)
{
    int n = 0, rank = 0;
    uint64_t sent = 0, recvd = 0;
    if (recvcounts != NULL && PMPI_Comm_size(fc__wc(comm), &n) == MPI_SUCCESS &&
        PMPI_Comm_rank(fc__wc(comm), &rank) == MPI_SUCCESS) {
        sent = sum_bytes(dt, recvcounts, wide, n);
        recvd = fc__bytes(dt, count_at(recvcounts, wide, rank));
    }
    coll_flags(t, c, comm, FC_PEER_NONE, sent, recvd, req, op_flags(op));
}

void fc__rec_reduce_scatter_block(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Op op, MPI_Datatype dt,
                                  int64_t recvcount, const MPI_Request *req)
{
    int n = 0;
    uint64_t block = fc__bytes(dt, recvcount);
    if (PMPI_Comm_size(fc__wc(comm), &n) != MPI_SUCCESS || n < 0)
        n = 0;
    coll_flags(t, c, comm, FC_PEER_NONE, block * (uint64_t)n, block, req, op_flags(op));
}

/* ---- neighbourhood collectives ------------------------------------------------------------------
 * Each out-neighbour position gets its block, each in-neighbour position gives one, MPI_PROC_NULL
 * positions included (the buffers have their slots; readers know which positions are null from the
 * topology). The COUNTS runs index neighbour positions, over max(indegree, outdegree). */

static uint64_t nbr_obj(const fc__call *c, const MPI_Request *req, int persistent)
{
    if (persistent) {
        if (req == NULL || c->rc != MPI_SUCCESS)
            return 0;
        fc__wrap_pcoll_init(*req);
        return FC__HANDLE(*req);
    }
    return req_obj(c, req);
}

void fc__rec_nbr(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Datatype sendtype, int64_t sendcount,
                 MPI_Datatype recvtype, int64_t recvcount, const MPI_Request *req, int persistent)
{
    int in = 0, out = 0;
    fc__comm_degrees(comm, &in, &out);
    fc__rec_put(t, c, FC_PEER_NONE, 0, fc__comm(comm), fc__bytes(sendtype, sendcount) * (uint64_t)out,
                nbr_obj(c, req, persistent), 0, fc__bytes(recvtype, recvcount) * (uint64_t)in);
}

void fc__rec_nbrv(fc__thread *t, const fc__call *c, MPI_Comm comm, MPI_Datatype sendtype, int64_t sendcount,
                  const void *sendcounts, MPI_Datatype recvtype, const void *recvcounts, int wide,
                  const MPI_Request *req, int persistent)
{
    int in = 0, out = 0;
    fc__comm_degrees(comm, &in, &out);
    uint64_t sent = sendcounts != NULL ? sum_bytes(sendtype, sendcounts, wide, out)
                                       : fc__bytes(sendtype, sendcount) * (uint64_t)out;
    fc__rec_put(t, c, FC_PEER_NONE, 0, fc__comm(comm), sent, nbr_obj(c, req, persistent), 0,
                sum_bytes(recvtype, recvcounts, wide, in));
    /* Neighbor_allgatherv sends its one block to every out-neighbour. */
    MPI_Count one = sendcount;
    side to = sendcounts != NULL ? (side){sendcounts, wide, sendtype, NULL, out, 0} : (side){&one, 1, sendtype, NULL, out, 1};
    side from = {recvcounts, wide, recvtype, NULL, in, 0};
    if (out == 0)
        to.counts = NULL; /* len 0 would mean the whole group */
    if (in == 0)
        from.counts = NULL;
    counts(t, c, in > out ? in : out, &to, &from);
}

void fc__rec_nbrw(fc__thread *t, const fc__call *c, MPI_Comm comm, const MPI_Datatype *sendtypes,
                  const void *sendcounts, const MPI_Datatype *recvtypes, const void *recvcounts, int wide,
                  const MPI_Request *req, int persistent)
{
    int in = 0, out = 0;
    fc__comm_degrees(comm, &in, &out);
    side to = {sendcounts, wide, MPI_DATATYPE_NULL, sendtypes, out, 0};
    side from = {recvcounts, wide, MPI_DATATYPE_NULL, recvtypes, in, 0};
    uint64_t sent = 0, recvd = 0;
    for (int i = 0; sendtypes != NULL && i < out; i++)
        sent += side_at(&to, i);
    for (int i = 0; recvtypes != NULL && i < in; i++)
        recvd += side_at(&from, i);
    fc__rec_put(t, c, FC_PEER_NONE, 0, fc__comm(comm), sent, nbr_obj(c, req, persistent), 0, recvd);
    if (out == 0)
        to.counts = NULL; /* len 0 would mean the whole group */
    if (in == 0)
        from.counts = NULL;
    if (sendtypes != NULL && recvtypes != NULL)
        counts(t, c, in > out ? in : out, &to, &from);
}
