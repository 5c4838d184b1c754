/* libtrace/p2p.c: records the point-to-point events (sends, receives, matched receives, sendrecv,
 * persistent inits) and the probes, as format.h lays them out. */
#include "record.h"


/* ---- matched messages -------------------------------------------------------------------------
 * An MPI_Message carries its communicator and envelope, but MPI offers no way to ask a message
 * handle for them. Mprobe/Improbe remember them here so that the Mrecv/Imrecv receiving the message
 * can name its communicator (and, for Imrecv, its envelope). Per thread, a few entries: a matched
 * message is received soon, and nearly always by the thread that probed it. */
#define MSG_SLOTS 8
typedef struct msg_slot {
    MPI_Message msg;
    uint32_t comm;
    int32_t peer, tag;
    uint64_t bytes;
    int used;
} msg_slot;
static __thread msg_slot msgs[MSG_SLOTS] FC__TLS;
static __thread unsigned msg_next FC__TLS;

static void msg_remember(MPI_Message msg, uint32_t comm, int32_t peer, int32_t tag, uint64_t bytes)
{
    msg_slot *s = &msgs[msg_next++ % MSG_SLOTS];
    *s = (msg_slot){.msg = msg, .comm = comm, .peer = peer, .tag = tag, .bytes = bytes, .used = 1};
}

/* Finds and forgets the entry of msg; NULL when it was probed elsewhere or long ago. */
static const msg_slot *msg_take(MPI_Message msg)
{
    for (unsigned i = 0; i < MSG_SLOTS; i++)
        if (msgs[i].used && msgs[i].msg == msg) {
            msgs[i].used = 0;
            return &msgs[i];
        }
    return NULL;
}

/* ---- sends and receive posts ------------------------------------------------------------------
 */

/* fc__rec_send (record.h) but for MPI_COMM_WORLD and builtin datatypes. */
void fc__rec_send_any(fc__thread *t, const fc__call *c, MPI_Comm comm, int dest,
                                               int tag, MPI_Datatype dt, int64_t count, const MPI_Request *req)
{
    uint64_t obj = req != NULL && c->rc == MPI_SUCCESS ? FC__HANDLE(*req) : 0;
    fc__rec_put(t, c, fc__peer(dest), tag, fc__comm(comm), fc__bytes(dt, count), obj, 0, 0);
}

/* fc__rec_irecv (record.h) but for MPI_COMM_WORLD and builtin datatypes. */
void fc__rec_irecv_any(fc__thread *t, const fc__call *c, MPI_Comm comm, int source,
                                                int tag, MPI_Datatype dt, int64_t count, const MPI_Request *req)
{
    uint64_t obj = req != NULL && c->rc == MPI_SUCCESS ? FC__HANDLE(*req) : 0;
    fc__rec_put(t, c, fc__peer(source), fc__tag_of(tag), fc__comm(comm), fc__bytes(dt, count), obj,
                fc__wildcard_flags(source, tag), 0);
}

/* fc__rec_recv (record.h) but for its common case. */
void fc__rec_recv_any(fc__thread *t, const fc__call *c, MPI_Comm comm, int source,
                                               int tag, MPI_Datatype dt, int64_t count, const MPI_Status *st)
{
    uint32_t flags = fc__wildcard_flags(source, tag);
    if (c->rc != MPI_SUCCESS || !fc__status_filled(st)) {
        fc__rec_put(t, c, fc__peer(source), fc__tag_of(tag), fc__comm(comm), fc__bytes(dt, count), 0,
                    flags, 0);
        return;
    }
    fc__rec_put(t, c, fc__peer(st->MPI_SOURCE), fc__tag_of(st->MPI_TAG), fc__comm(comm),
                fc__status_bytes(st), 0, flags, 0);
}

/* MPI_Mrecv: the envelope from the status, the communicator from the probe that matched msg
 * (comm_id 0, MPI_COMM_WORLD, when the probe is unknown; MPI_MESSAGE_NO_PROC has no peer). */
void fc__rec_mrecv(fc__thread *t, const fc__call *c, MPI_Message msg, MPI_Datatype dt,
                   int64_t count, const MPI_Status *st)
{
    const msg_slot *m = msg_take(msg);
    uint32_t comm = m ? m->comm : 0;
    if (c->rc != MPI_SUCCESS || !fc__status_filled(st)) {
        fc__rec_put(t, c, m ? m->peer : FC_PEER_NONE, m ? m->tag : 0, comm, fc__bytes(dt, count), 0,
                    0, 0);
        return;
    }
    fc__rec_put(t, c, fc__peer(st->MPI_SOURCE), fc__tag_of(st->MPI_TAG), comm, fc__status_bytes(st), 0,
                0, 0);
}

/* MPI_Imrecv: the envelope and communicator the probe found; bytes = the message's size as probed
 * (the buffer's capacity when the probe is unknown); obj = the request. */
void fc__rec_imrecv(fc__thread *t, const fc__call *c, MPI_Message msg, MPI_Datatype dt,
                    int64_t count, const MPI_Request *req)
{
    const msg_slot *m = msg_take(msg);
    uint64_t obj = req != NULL && c->rc == MPI_SUCCESS ? FC__HANDLE(*req) : 0;
    if (m)
        fc__rec_put(t, c, m->peer, m->tag, m->comm, m->bytes, obj, 0, 0);
    else
        fc__rec_put(t, c, msg == MPI_MESSAGE_NO_PROC ? FC_PEER_NULL : FC_PEER_NONE, 0, 0,
                    fc__bytes(dt, count), obj, 0, 0);
}

/* MPI_Sendrecv and MPI_Sendrecv_replace: the event is the send half (bytes2 = the receive buffer's
 * capacity); a COMPLETE record with obj 0 follows for the receive half, from the status. */
void fc__rec_sendrecv(fc__thread *t, const fc__call *c, MPI_Comm comm, int dest, int sendtag,
                      MPI_Datatype sendtype, int64_t sendcount, MPI_Datatype recvtype,
                      int64_t recvcount, int source, int recvtag, const MPI_Status *st)
{
    uint32_t id = fc__comm(comm);
    uint32_t flags = fc__wildcard_flags(source, recvtag);
    fc__rec_put(t, c, fc__peer(dest), sendtag, id, fc__bytes(sendtype, sendcount), 0, flags,
                fc__bytes(recvtype, recvcount));
    if (c->rc != MPI_SUCCESS || !fc__status_filled(st))
        return;
    fc__rec_sub(t, c, FC_EV_COMPLETE, fc__peer(st->MPI_SOURCE), fc__tag_of(st->MPI_TAG), id,
                fc__status_bytes(st), 0, FC_EVF_STATUS | flags);
}

/* ---- probes ---------------------------------------------------------------------------------- */

/* Probe, Iprobe, Mprobe, Improbe: when a message was found, the actual source, tag and size from
 * the status (FC_EVF_FOUND for the I-forms) and, for the matched forms, obj = the message handle;
 * when not, the requested source and tag and no bytes. */
void fc__rec_probe(fc__thread *t, const fc__call *c, MPI_Comm comm, int source, int tag,
                   const int *flag, const MPI_Message *msg, const MPI_Status *st)
{
    uint32_t id = fc__comm(comm);
    uint32_t flags = fc__wildcard_flags(source, tag);
    int found = c->rc == MPI_SUCCESS && (flag == NULL || *flag) && fc__status_filled(st);
    if (!found) {
        if (flag != NULL) /* MPI_Iprobe, MPI_Improbe */
            fc__rec_poll(t, c, fc__peer(source), fc__tag_of(tag), id, 0, flags, 0);
        else
            fc__rec_put(t, c, fc__peer(source), fc__tag_of(tag), id, 0, 0, flags, 0);
        return;
    }
    if (flag != NULL)
        flags |= FC_EVF_FOUND;
    int32_t peer = fc__peer(st->MPI_SOURCE);
    int32_t atag = fc__tag_of(st->MPI_TAG);
    uint64_t bytes = fc__status_bytes(st);
    uint64_t obj = 0;
    if (msg != NULL) {
        obj = FC__HANDLE(*msg);
        msg_remember(*msg, id, peer, atag, bytes);
    }
    fc__rec_put(t, c, peer, atag, id, bytes, obj, flags, 0);
}
