/* analyzer/format/decode.c: what each event kind means to a reader: the fields that apply to it, its
 * name, and the one-line text form `flowcut dump` prints. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "util/internal.h"

#define P2P_FIELDS (FC_FIELD_PEER | FC_FIELD_TAG | FC_FIELD_COMM | FC_FIELD_BYTES | FC_FIELD_DUR)
#define COLL_FIELDS (FC_FIELD_COMM | FC_FIELD_BYTES | FC_FIELD_BYTES2 | FC_FIELD_DUR)

/* Fields by kind, designated by kind number; kinds left out have only a duration. */
static const unsigned short fields[FC_EV_MAX_] = {
    [FC_EV_MPI_Send] = P2P_FIELDS,
    [FC_EV_MPI_Bsend] = P2P_FIELDS,
    [FC_EV_MPI_Ssend] = P2P_FIELDS,
    [FC_EV_MPI_Rsend] = P2P_FIELDS,
    [FC_EV_MPI_Recv] = P2P_FIELDS,
    [FC_EV_MPI_Mrecv] = P2P_FIELDS,
    [FC_EV_MPI_Isend] = P2P_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Ibsend] = P2P_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Issend] = P2P_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Irsend] = P2P_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Irecv] = P2P_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Imrecv] = P2P_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Sendrecv] = P2P_FIELDS | FC_FIELD_BYTES2,
    [FC_EV_MPI_Sendrecv_replace] = P2P_FIELDS | FC_FIELD_BYTES2,
    [FC_EV_MPI_Send_init] = P2P_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Bsend_init] = P2P_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Ssend_init] = P2P_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Rsend_init] = P2P_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Recv_init] = P2P_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Start] = FC_FIELD_REQ | FC_FIELD_DUR,
    [FC_EV_MPI_Request_free] = FC_FIELD_REQ | FC_FIELD_DUR,
    [FC_EV_MPI_Wait] = FC_FIELD_REQ | FC_FIELD_DUR,
    [FC_EV_MPI_Test] = FC_FIELD_REQ | FC_FIELD_DUR,
    [FC_EV_MPI_Cancel] = FC_FIELD_REQ | FC_FIELD_DUR,
    [FC_EV_MPI_Startall] = FC_FIELD_BYTES2 | FC_FIELD_DUR,
    [FC_EV_MPI_Waitall] = FC_FIELD_BYTES2 | FC_FIELD_DUR,
    [FC_EV_MPI_Waitany] = FC_FIELD_BYTES2 | FC_FIELD_DUR,
    [FC_EV_MPI_Waitsome] = FC_FIELD_BYTES2 | FC_FIELD_DUR,
    [FC_EV_MPI_Testall] = FC_FIELD_BYTES2 | FC_FIELD_DUR,
    [FC_EV_MPI_Testany] = FC_FIELD_BYTES2 | FC_FIELD_DUR,
    [FC_EV_MPI_Testsome] = FC_FIELD_BYTES2 | FC_FIELD_DUR,
    [FC_EV_MPI_Probe] = P2P_FIELDS,
    [FC_EV_MPI_Iprobe] = P2P_FIELDS,
    [FC_EV_MPI_Mprobe] = P2P_FIELDS,
    [FC_EV_MPI_Improbe] = P2P_FIELDS,
    [FC_EV_MPI_Barrier] = FC_FIELD_COMM | FC_FIELD_DUR,
    [FC_EV_MPI_Bcast] = COLL_FIELDS | FC_FIELD_PEER,
    [FC_EV_MPI_Reduce] = COLL_FIELDS | FC_FIELD_PEER,
    [FC_EV_MPI_Allreduce] = COLL_FIELDS,
    [FC_EV_MPI_Gather] = COLL_FIELDS | FC_FIELD_PEER,
    [FC_EV_MPI_Gatherv] = COLL_FIELDS | FC_FIELD_PEER,
    [FC_EV_MPI_Scatter] = COLL_FIELDS | FC_FIELD_PEER,
    [FC_EV_MPI_Scatterv] = COLL_FIELDS | FC_FIELD_PEER,
    [FC_EV_MPI_Allgather] = COLL_FIELDS,
    [FC_EV_MPI_Allgatherv] = COLL_FIELDS,
    [FC_EV_MPI_Alltoall] = COLL_FIELDS,
    [FC_EV_MPI_Alltoallv] = COLL_FIELDS,
    [FC_EV_MPI_Alltoallw] = COLL_FIELDS,
    [FC_EV_MPI_Reduce_scatter] = COLL_FIELDS,
    [FC_EV_MPI_Reduce_scatter_block] = COLL_FIELDS,
    [FC_EV_MPI_Scan] = COLL_FIELDS,
    [FC_EV_MPI_Exscan] = COLL_FIELDS,
    [FC_EV_MPI_Ibarrier] = FC_FIELD_COMM | FC_FIELD_REQ | FC_FIELD_DUR,
    [FC_EV_MPI_Ibcast] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Ireduce] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Iallreduce] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Igather] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Igatherv] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Iscatter] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Iscatterv] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Iallgather] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Iallgatherv] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Ialltoall] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Ialltoallv] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Ialltoallw] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Ireduce_scatter] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Ireduce_scatter_block] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Iscan] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Iexscan] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Comm_dup] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Comm_split] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Comm_create] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Cart_create] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Graph_create] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Dist_graph_create] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Dist_graph_create_adjacent] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Intercomm_create] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Comm_free] = FC_FIELD_COMM | FC_FIELD_DUR,
    [FC_EV_MPI_Comm_split_type] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Comm_create_group] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Intercomm_merge] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Comm_dup_with_info] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Comm_idup] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Cart_sub] = FC_FIELD_COMM | FC_FIELD_NEWCOMM | FC_FIELD_DUR,
    [FC_EV_MPI_Neighbor_allgather] = COLL_FIELDS,
    [FC_EV_MPI_Neighbor_allgatherv] = COLL_FIELDS,
    [FC_EV_MPI_Neighbor_alltoall] = COLL_FIELDS,
    [FC_EV_MPI_Neighbor_alltoallv] = COLL_FIELDS,
    [FC_EV_MPI_Neighbor_alltoallw] = COLL_FIELDS,
    [FC_EV_MPI_Ineighbor_allgather] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Ineighbor_allgatherv] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Ineighbor_alltoall] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Ineighbor_alltoallv] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Ineighbor_alltoallw] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Neighbor_allgather_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Neighbor_allgatherv_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Neighbor_alltoall_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Neighbor_alltoallv_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Neighbor_alltoallw_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Barrier_init] = FC_FIELD_COMM | FC_FIELD_REQ | FC_FIELD_DUR,
    [FC_EV_MPI_Bcast_init] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Reduce_init] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Allreduce_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Gather_init] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Gatherv_init] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Scatter_init] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Scatterv_init] = COLL_FIELDS | FC_FIELD_PEER | FC_FIELD_REQ,
    [FC_EV_MPI_Allgather_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Allgatherv_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Alltoall_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Alltoallv_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Alltoallw_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Reduce_scatter_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Reduce_scatter_block_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Scan_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_MPI_Exscan_init] = COLL_FIELDS | FC_FIELD_REQ,
    [FC_EV_COMPLETE] = FC_FIELD_REQ,
    [FC_EV_START] = FC_FIELD_REQ,
    [FC_EV_POLLS] = FC_FIELD_DUR,
    [FC_EV_TRACER_WAIT] = FC_FIELD_DUR,
    [FC_EV_COUNTS] = FC_FIELD_BYTES | FC_FIELD_BYTES2,
};

unsigned fc_event_fields(unsigned kind, uint64_t flags)
{
    if (kind >= FC_EV_MAX_ || fc_event_kind_name(kind) == NULL)
        return 0;
    unsigned f = fields[kind] ? fields[kind] : FC_FIELD_DUR;
    /* A completion carries a message description only when it comes from a status. */
    if (kind == FC_EV_COMPLETE && (flags & FC_EVF_STATUS))
        f |= FC_FIELD_PEER | FC_FIELD_TAG | FC_FIELD_BYTES;
    return f;
}

int fc_event_kind_from_name(const char *name)
{
#define FC__X(n, num, cls)                                                                         \
    if (strcmp(name, #n) == 0)                                                                     \
        return num;
    FC_EVENT_KINDS(FC__X)
#undef FC__X
    return -1;
}

/* Appends to buf as snprintf would, tracking the length even past the end of buf. */
static void add(char *buf, size_t len, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(*n < len ? buf + *n : NULL, *n < len ? len - *n : 0, fmt, ap);
    va_end(ap);
    if (k > 0)
        *n += (size_t)k;
}

/* Prints a signed nanosecond count as seconds with 9 decimals, exactly (no floating point). */
static void add_seconds(char *buf, size_t len, size_t *n, const char *key, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    add(buf, len, n, "%s%s%" PRIu64 ".%09" PRIu64, key, ns < 0 ? "-" : "", a / 1000000000u, a % 1000000000u);
}

size_t fc_record_format(const fc_record *rec, int64_t origin, const char *site, char *buf, size_t len)
{
    static const struct {
        uint64_t bit;
        const char *name;
    } flag_names[] = {
        {FC_EVF_ANY_SOURCE, "any_source"}, {FC_EVF_ANY_TAG, "any_tag"}, {FC_EVF_FOUND, "found"},
        {FC_EVF_CANCELLED, "cancelled"},   {FC_EVF_ERROR, "error"},     {FC_EVF_STATUS, "status"},
        {FC_EVF_NULL, "null"},             {FC_EVF_OWN_TIME, "own_time"},
        {FC_EVF_USER_OP, "user_op"},       {FC_EVF_NONCOMMUTATIVE, "noncommutative"},
    };
    const fc_event *ev = &rec->ev;
    unsigned f = fc_event_fields(ev->kind, ev->flags);
    const char *kind = fc_event_kind_name(ev->kind);
    size_t n = 0;
    if (len > 0)
        buf[0] = '\0';
    /* Wrapping, not overflowing, for the absurd times of a damaged file. */
    add_seconds(buf, len, &n, "time=", (int64_t)((uint64_t)rec->t0 - (uint64_t)origin));
    add(buf, len, &n, " rank=%" PRIu32 " thread=%" PRIu32 " kind=%s", rec->rank, ev->thread, kind ? kind : "unknown");
    if ((f & FC_FIELD_PEER) && ev->peer != FC_PEER_NONE) {
        if (rec->peer == FC_PEER_ANY)
            add(buf, len, &n, " peer=any");
        else if (rec->peer == FC_PEER_NULL)
            add(buf, len, &n, " peer=null");
        else if (rec->peer == FC_PEER_ROOT)
            add(buf, len, &n, " peer=root");
        else if (rec->peer < 0)
            add(buf, len, &n, " peer=unknown");
        else
            add(buf, len, &n, " peer=%" PRId64, rec->peer);
    }
    if (f & FC_FIELD_TAG) {
        if (ev->tag == FC_TAG_ANY)
            add(buf, len, &n, " tag=any");
        else
            add(buf, len, &n, " tag=%" PRId64, ev->tag);
    }
    if (ev->kind == FC_EV_COUNTS) /* the run of ranks of the preceding call's group */
        add(buf, len, &n, " first=%" PRId64 " ranks=%" PRIu64, ev->peer, ev->obj);
    if (f & FC_FIELD_COMM)
        add(buf, len, &n, " comm=%" PRIu64, rec->comm);
    if (f & FC_FIELD_BYTES)
        add(buf, len, &n, " bytes=%" PRIu64, ev->bytes);
    if (f & FC_FIELD_BYTES2)
        add(buf, len, &n, " bytes2=%" PRIu64, ev->bytes2);
    if ((f & FC_FIELD_REQ) && rec->req != 0)
        add(buf, len, &n, " req=%" PRIu64, rec->req);
    if (f & FC_FIELD_NEWCOMM) {
        if (ev->obj == 0)
            add(buf, len, &n, " newcomm=null");
        else
            add(buf, len, &n, " newcomm=%" PRIu64, ev->obj - 1);
    }
    if (ev->kind == FC_EV_POLLS) {
        /* The run the preceding record began: its calls and their time inside MPI. */
        add(buf, len, &n, " calls=%" PRIu64, ev->bytes);
        add_seconds(buf, len, &n, " busy=", (int64_t)ev->bytes2);
    }
    if (f & FC_FIELD_DUR)
        add_seconds(buf, len, &n, " dur=", (int64_t)(ev->t1 - ev->t0));
    if (ev->flags != 0) {
        const char *sep = " flags=";
        for (size_t i = 0; i < sizeof flag_names / sizeof *flag_names; i++)
            if (ev->flags & flag_names[i].bit) {
                add(buf, len, &n, "%s%s", sep, flag_names[i].name);
                sep = ",";
            }
    }
    if (site != NULL)
        add(buf, len, &n, " site=%s", site);
    return n;
}
