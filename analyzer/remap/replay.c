/* analyzer/remap/replay.c: builds a replay from a trace (replay.h): each rank's program of posts, waits
 * and computation, its collectives expanded, and the pairing of every send with its receive. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include <flowcut/reader.h>
#include "util/internal.h"
#include "collective/collective.h"
#include "match/match.h"
#include "model/observe.h"
#include "remap/replay.h"

/* The tag of the messages of expanded collectives: below every tag MPI allows, so they never pair
 * with the application's messages. */
#define COLL_TAG INT64_MIN

/* ---- communicator keys and collective instances ------------------------------------------------ */

/* Mixes two words, for the hash map of collective instances below. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0x100000001b3ull;
}

/* Members (world ranks) of an intra-communicator, for the collectives; *world is scratch of the
 * world size used for MPI_COMM_WORLD without a definition. Returns NULL for an inter-communicator. */
static const uint32_t *comm_members(const fc_rank *r, uint64_t id, uint32_t nranks, uint32_t *p, uint32_t *a,
                                    uint32_t *world)
{
    const fc_comm *c = fc_rank_comm(r, id);
    *a = 0;
    if (c == NULL) {
        if (id == 1) {
            world[0] = r->info.rank;
            *p = 1;
            return world;
        }
        if (id != 0)
            return NULL;
        for (uint32_t i = 0; i < r->info.size && i < nranks; i++)
            world[i] = i;
        *p = r->info.size < nranks ? r->info.size : nranks;
        return world;
    }
    if (c->flags & FC_COMMF_INTER) {
        if (c->local_size == 0 || c->remote_size == 0 || (uint64_t)c->local_size + c->remote_size > nranks)
            return NULL;
        *a = fc__coll_inter_order(c, world);
        *p = c->local_size + c->remote_size;
        return world;
    }
    *p = c->local_size;
    return c->local;
}

/* Open-addressing map (communicator key, sequence number) -> instance size. */
typedef struct ient {
    uint64_t key, seq, n;
    uint32_t root; /* an inter-communicator collective's root as a member that knows it gives it */
    int used;
} ient;

typedef struct imap {
    ient *v;
    size_t cap, n;
} imap;

static ient *imap_find(imap *m, uint64_t key, uint64_t seq, int add)
{
    if (add && (m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        ient *v = calloc(cap, sizeof *v);
        if (v == NULL)
            return NULL;
        for (size_t i = 0; i < m->cap; i++)
            if (m->v[i].used) {
                size_t j = mix(m->v[i].key, m->v[i].seq) & (cap - 1);
                while (v[j].used)
                    j = (j + 1) & (cap - 1);
                v[j] = m->v[i];
            }
        free(m->v);
        m->v = v;
        m->cap = cap;
    }
    if (m->cap == 0)
        return NULL;
    size_t j = mix(key, seq) & (m->cap - 1);
    while (m->v[j].used) {
        if (m->v[j].key == key && m->v[j].seq == seq)
            return &m->v[j];
        j = (j + 1) & (m->cap - 1);
    }
    if (!add)
        return NULL;
    m->v[j] = (ient){.key = key, .seq = seq, .n = 0, .root = UINT32_MAX, .used = 1};
    m->n++;
    return &m->v[j];
}

/* Per-communicator sequence counters of one rank (few communicators: a linear list). */
typedef struct cseq {
    uint64_t key, next;
} cseq;

static int next_seq(cseq **v, size_t *n, size_t *cap, uint64_t key, uint64_t *seq)
{
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i].key == key) {
            *seq = (*v)[i].next++;
            return 0;
        }
    if (fc__grow((void **)v, n, cap, sizeof **v) < 0)
        return FC_ENOMEM;
    (*v)[*n] = (cseq){.key = key, .next = 1};
    (*n)++;
    *seq = 0;
    return 0;
}

/* ---- building one rank's program ---------------------------------------------------------------- */

/* A persistent request's template. */
typedef struct tmpl {
    int used; /* 0 none, 1 receive, 2 send */
    uint8_t flags;
    int64_t peer, tag;
    uint64_t comm, bytes;
} tmpl;

/* Per-op matching data, kept until the pairing. */
typedef struct mkey {
    uint64_t comm;
    int64_t tag;
    uint32_t src, dst;
    uint32_t rank, op; /* the op */
    uint64_t seq;      /* posting order on the rank: the op index */
} mkey;

typedef struct builder {
    fc__replay *rp;
    fc__rprog *pg;
    uint32_t rank;
    size_t opcap, wcap;
    mkey *sk, *rk;            /* sends and receives of every rank */
    size_t ns, nr, scap, rcap;
    double pend;              /* computation not yet given to an op */
    int64_t last_t1;          /* local ns of the previous call's exit */
    int64_t last_t0;          /* and of its entry */
    uint32_t *reqop;          /* request id -> op index + 1 */
    tmpl *tm;
    size_t nreq;
    long waitop;              /* the WAIT op COMPLETE records add to, -1 when none */
    int waitpoll;             /* 1 when that op is an MPI_Test* */
    size_t coll_first;        /* first op of the collective being expanded */
    const uint32_t *members;  /* of the collective being expanded */
    uint32_t *cnode;          /* their nodes as MPICH saw them (scratch of the world size) */
    uint32_t *mpich_node;     /* per world rank, the node MPICH took it to be on */
    uint64_t coll_comm;
    const fc_rank *r;
    imap *im;                 /* collective instances of the whole trace */
    cseq *cs;                 /* this rank's counters per communicator */
    size_t ncs, cscap;
    uint32_t *world;          /* scratch of the world size */
    uint64_t *ckeys;          /* global key of each communicator id of the rank (fc__comm_keys) */
    size_t nckeys;
    fc_record *ptm;           /* this rank's persistent collectives: their init records */
    size_t nptm, ptmcap;
} builder;

/* Makes rank r the one being read: its communicator keys are computed once here, not per record. */
static int set_rank(builder *b, const fc_rank *r)
{
    b->r = r;
    b->rank = r->info.rank;
    b->nptm = 0;
    free(b->ckeys);
    b->ckeys = NULL;
    return fc__comm_keys(r, &b->ckeys, &b->nckeys);
}

static uint64_t key_of(const builder *b, uint64_t id)
{
    return id < b->nckeys ? b->ckeys[id] : fc__comm_key(b->r, id);
}

static int add_op(builder *b, const fc__rop *op, uint32_t *ix)
{
    fc__rprog *pg = b->pg;
    if (fc__grow((void **)&pg->ops, &pg->nops, &b->opcap, sizeof *op) < 0)
        return FC_ENOMEM;
    pg->ops[pg->nops] = *op;
    pg->ops[pg->nops].compute = b->pend;
    pg->ops[pg->nops].msg = FC__NOMSG;
    b->pend = 0;
    *ix = (uint32_t)pg->nops++;
    return 0;
}

static int add_wait(builder *b, uint32_t op)
{
    fc__rprog *pg = b->pg;
    if (fc__grow((void **)&pg->waits, &pg->nwaits, &b->wcap, sizeof op) < 0)
        return FC_ENOMEM;
    pg->waits[pg->nwaits++] = op;
    pg->ops[pg->nops - 1].n++; /* callers add to the last op, which is the WAIT */
    return 0;
}

/* Posts a send or receive op with its matching key. peer is a world rank (negative: no partner
 * can be named; the op stays unmatched). */
static int post(builder *b, int send, int64_t peer, int64_t tag, uint64_t comm, uint64_t bytes,
                uint8_t flags, uint32_t *ix)
{
    fc__rop op = {.kind = send ? FC__ROP_SEND : FC__ROP_RECV, .flags = flags,
                  .peer = peer >= 0 ? (uint32_t)peer : UINT32_MAX, .bytes = bytes};
    int rc = add_op(b, &op, ix);
    if (rc < 0)
        return rc;
    mkey k = {.comm = comm, .tag = tag, .src = send ? b->rank : op.peer,
              .dst = send ? op.peer : b->rank, .rank = b->rank, .op = *ix, .seq = *ix};
    if (peer < 0)
        return 0;
    if (send ? fc__grow((void **)&b->sk, &b->ns, &b->scap, sizeof k)
             : fc__grow((void **)&b->rk, &b->nr, &b->rcap, sizeof k))
        return FC_ENOMEM;
    if (send)
        b->sk[b->ns++] = k;
    else
        b->rk[b->nr++] = k;
    return 0;
}

/* A WAIT op on the listed ops. */
static int wait_on(builder *b, const uint32_t *ops, size_t n)
{
    fc__rop w = {.kind = FC__ROP_WAIT, .first = (uint32_t)b->pg->nwaits};
    uint32_t ix;
    int rc = add_op(b, &w, &ix);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = add_wait(b, ops[i]);
    return rc;
}

static int req_room(builder *b, uint64_t req)
{
    if (req < b->nreq)
        return 0;
    size_t n = b->nreq ? b->nreq : 64;
    while (n <= req)
        n *= 2;
    uint32_t *ro = realloc(b->reqop, n * sizeof *ro);
    if (ro == NULL)
        return FC_ENOMEM;
    b->reqop = ro;
    tmpl *tm = realloc(b->tm, n * sizeof *tm);
    if (tm == NULL)
        return FC_ENOMEM;
    b->tm = tm;
    memset(ro + b->nreq, 0, (n - b->nreq) * sizeof *ro);
    memset(tm + b->nreq, 0, (n - b->nreq) * sizeof *tm);
    b->nreq = n;
    return 0;
}

static int coll_post(void *ctx, int send, uint32_t peer, uint64_t bytes)
{
    builder *b = ctx;
    uint32_t ix;
    return post(b, send, b->members[peer], COLL_TAG, b->coll_comm, bytes, FC__ROPF_COLL, &ix);
}

static int coll_wait(void *ctx)
{
    builder *b = ctx;
    fc__rprog *pg = b->pg;
    uint32_t ix;
    size_t from = b->coll_first;
    fc__rop w = {.kind = FC__ROP_WAIT, .first = (uint32_t)pg->nwaits, .flags = FC__ROPF_COLL};
    int rc = add_op(b, &w, &ix);
    for (size_t i = from; rc == 0 && i < ix; i++)
        if (pg->ops[i].kind != FC__ROP_WAIT)
            rc = add_wait(b, (uint32_t)i);
    b->coll_first = pg->nops;
    return rc;
}

static uint8_t send_flags(uint32_t k)
{
    return fc__is_sync_kind(k) ? FC__ROPF_SYNC : 0;
}

/* The kind whose messages a record's collective has: a persistent one's non-blocking form. */
static unsigned coll_kind(unsigned k)
{
    unsigned base = fc__coll_persistent(k);
    return base ? base : k;
}

/* The instance of a collective record: communicator key, members, this rank's index, the root's
 * (UINT32_MAX when the record does not name it: a rootless collective, or a member of an
 * inter-communicator's root group other than the root), *a the low group's size on an
 * inter-communicator (0 otherwise). 0 for a record left out: an unknown communicator, this rank
 * not a member, or an inter-communicator call the expansion has no algorithm for, as the
 * analysis leaves it out (calls.c). */
static int coll_where(builder *b, const fc_record *rec, uint64_t *key, uint64_t *seq, uint32_t *p,
                      uint32_t *a, uint32_t *me, uint32_t *root)
{
    const uint32_t *mem = comm_members(b->r, rec->ev.comm, b->rp->nranks, p, a, b->world);
    if (mem == NULL)
        return 0;
    if (*a && !fc__coll_inter_expands(coll_kind(rec->ev.kind)))
        return 0;
    *key = key_of(b, rec->ev.comm);
    int rc = next_seq(&b->cs, &b->ncs, &b->cscap, *key, seq);
    if (rc < 0)
        return rc;
    *me = UINT32_MAX;
    *root = UINT32_MAX;
    for (uint32_t i = 0; i < *p; i++) {
        if (mem[i] == b->rank)
            *me = i;
        if (rec->peer >= 0 && mem[i] == (uint32_t)rec->peer)
            *root = i;
    }
    if (rec->peer == FC_PEER_ROOT)
        *root = *me; /* the root of an inter-communicator collective passes MPI_ROOT */
    b->members = mem;
    return *me == UINT32_MAX ? 0 : 1;
}

/* Keeps the init record of a persistent collective: each Start of its request is an instance
 * of it (collective.h, fc__coll_persistent). Request ids are unique within the rank. */
static int pcoll_keep(builder *b, const fc_record *rec)
{
    if (fc__grow((void **)&b->ptm, &b->nptm, &b->ptmcap, sizeof *b->ptm) < 0)
        return FC_ENOMEM;
    b->ptm[b->nptm++] = *rec;
    return 0;
}

/* The init record of persistent collective req, NULL for another request. */
static const fc_record *pcoll_of(const builder *b, uint64_t req)
{
    for (size_t i = b->nptm; req != 0 && i > 0; i--)
        if (b->ptm[i - 1].req == req)
            return &b->ptm[i - 1];
    return NULL;
}

/* Expands one collective (or constructor, as a barrier of its parent) record, or a Start of a
 * persistent collective (its init record), into ops. */
static int do_coll(builder *b, const fc_record *rec)
{
    uint64_t key, seq;
    uint32_t p, a, me, root;
    int rc = coll_where(b, rec, &key, &seq, &p, &a, &me, &root);
    if (rc <= 0)
        return rc;
    uint32_t k = coll_kind(rec->ev.kind);
    ient *e = imap_find(b->im, key, seq, 0);
    uint64_t n = e ? e->n : fc__coll_size(k, rec->ev.bytes, rec->ev.bytes2, p);
    /* A member that does not name the root takes it from one that does (pass 1). */
    if (root == UINT32_MAX)
        root = e && e->root != UINT32_MAX ? e->root : 0;
    fc__coll_sink sink = {.post = coll_post, .wait = coll_wait, .ctx = b};
    b->coll_comm = key;
    b->coll_first = b->pg->nops;
    unsigned kind = fc__coll_is_ctor(k) ? FC_EV_MPI_Barrier : k;
    if (p > b->rp->nranks)
        return 0; /* a damaged definition: members beyond the world */
    for (uint32_t i = 0; i < p; i++)
        b->cnode[i] = b->members[i] < b->rp->nranks ? b->mpich_node[b->members[i]] : UINT32_MAX - i;
    fc__coll_nbrs *nb = NULL;
    if (fc__coll_is_neighbor(kind) && (rc = fc__coll_nbrs_of(b->r, rec->ev.comm, b->members, p, &nb)) < 0)
        return rc;
    fc__coll_layout lay = {.node = b->cnode, .settings = &b->rp->coll, .nbrs = nb, .received = rec->ev.bytes2,
                           .inter = a, .op = (uint32_t)(rec->ev.flags & (FC_EVF_USER_OP | FC_EVF_NONCOMMUTATIVE))};
    unsigned alg = a ? fc__coll_select_inter(kind, a, p - a, root, n, &b->rp->coll) : fc__coll_select_in(kind, p, n, &lay);
    rc = fc__coll_expand_in(kind, alg, p, me, root, n, rec->ev.bytes, &lay, &sink);
    free(nb);
    if (rc == FC_EUNSUPPORTED)
        return 0;
    b->rp->colls++;
    return rc;
}

/* Pass 1: the size of every collective instance, the largest any member's record gives. */
static int coll_sizes(builder *b, fc_trace *t, size_t i)
{
    fc_cursor *c = NULL;
    fc_record rec;
    int rc = fc_cursor_open(t, i, &c);
    while (rc == 0 && (rc = fc_cursor_next(c, &rec)) > 0) {
        uint32_t k = rec.ev.kind;
        const fc_record *use = &rec;
        rc = 0;
        if (rec.ev.flags & FC_EVF_ERROR)
            continue;
        if (fc__coll_persistent(k) && rec.req != 0) {
            rc = pcoll_keep(b, &rec);
            continue;
        }
        if (k == FC_EV_MPI_Start || k == FC_EV_START) {
            if ((use = pcoll_of(b, rec.req)) == NULL)
                continue;
            k = coll_kind(use->ev.kind);
        } else if (!(fc__coll_is_coll(k) || fc__coll_is_ctor(k))) {
            continue;
        }
        uint64_t key, seq;
        uint32_t p, a, me, root;
        if ((rc = coll_where(b, use, &key, &seq, &p, &a, &me, &root)) <= 0)
            continue;
        ient *e = imap_find(b->im, key, seq, 1);
        if (e == NULL) {
            rc = FC_ENOMEM;
            break;
        }
        if (root != UINT32_MAX && !fc__coll_is_ctor(k))
            e->root = root;
        uint64_t n = fc__coll_size(k, use->ev.bytes, use->ev.bytes2, p);
        if (n > e->n)
            e->n = n;
        rc = 0;
    }
    fc_cursor_close(c);
    return rc < 0 ? rc : 0;
}

/* Instantiates persistent request req (MPI_Start or a START of MPI_Startall). */
static int start_req(builder *b, uint64_t req)
{
    if (req == 0 || req >= b->nreq || !b->tm[req].used)
        return 0;
    const tmpl *tp = &b->tm[req];
    uint32_t ix;
    int rc = post(b, tp->used == 2, tp->peer, tp->tag, tp->comm, tp->bytes, tp->flags, &ix);
    if (rc == 0)
        b->reqop[req] = ix + 1;
    return rc;
}

/* A COMPLETE record: the receive half of a Sendrecv, or a request completed by a wait or test. */
static int on_complete(builder *b, const fc_record *rec, long *sr_send)
{
    uint32_t ix;
    int rc;
    if (*sr_send >= 0 && rec->ev.obj == 0 && rec->req == 0) {
        uint32_t ops[2] = {(uint32_t)*sr_send, 0};
        *sr_send = -1;
        if ((rc = post(b, 0, rec->peer, rec->ev.tag, key_of(b, rec->comm), rec->ev.bytes, 0,
                       &ix)) < 0)
            return rc;
        ops[1] = ix;
        return wait_on(b, ops, 2);
    }
    if (b->waitop < 0 || rec->req == 0 || rec->req >= b->nreq || b->reqop[rec->req] == 0)
        return 0;
    uint32_t op = b->reqop[rec->req] - 1;
    fc__rop *o = &b->pg->ops[op];
    if (!b->tm[rec->req].used)
        b->reqop[rec->req] = 0;
    if (b->waitpoll)
        o->flags |= FC__ROPF_POLLED;
    /* A wildcard receive is registered for pairing once its status names the envelope. */
    if (o->kind == FC__ROP_RECV && o->peer == UINT32_MAX && (rec->ev.flags & FC_EVF_STATUS) &&
        rec->peer >= 0 && !(rec->ev.flags & FC_EVF_CANCELLED)) {
        o->peer = (uint32_t)rec->peer;
        mkey k = {.comm = key_of(b, rec->comm), .tag = rec->ev.tag, .src = o->peer,
                  .dst = b->rank, .rank = b->rank, .op = op, .seq = op};
        if (fc__grow((void **)&b->rk, &b->nr, &b->rcap, sizeof k) < 0)
            return FC_ENOMEM;
        b->rk[b->nr++] = k;
    }
    return add_wait(b, op);
}

/* One call record (not a sub-record) after MPI_Init. */
static int on_call(builder *b, const fc_record *rec, long *sr_send)
{
    uint32_t k = rec->ev.kind, ix;
    uint64_t comm = key_of(b, rec->comm);
    int64_t peer = rec->peer, tag = rec->ev.tag;
    int rc = 0;
    switch (k) {
    case FC_EV_MPI_Send: case FC_EV_MPI_Ssend: case FC_EV_MPI_Rsend:
        if (peer == FC_PEER_NULL)
            return 0;
        if ((rc = post(b, 1, peer, tag, comm, rec->ev.bytes, send_flags(k), &ix)) < 0)
            return rc;
        return wait_on(b, &ix, 1);
    case FC_EV_MPI_Bsend:
        return peer == FC_PEER_NULL ? 0 : post(b, 1, peer, tag, comm, rec->ev.bytes, 0, &ix);
    case FC_EV_MPI_Recv: case FC_EV_MPI_Mrecv:
        if (peer == FC_PEER_NULL)
            return 0;
        if ((rc = post(b, 0, peer, tag, comm, rec->ev.bytes, 0, &ix)) < 0)
            return rc;
        return wait_on(b, &ix, 1);
    case FC_EV_MPI_Isend: case FC_EV_MPI_Ibsend: case FC_EV_MPI_Issend: case FC_EV_MPI_Irsend:
    case FC_EV_MPI_Irecv: case FC_EV_MPI_Imrecv: {
        int send = fc__is_send_kind(k), wild = !send && (peer < 0 || tag == FC_TAG_ANY);
        if (peer == FC_PEER_NULL)
            return 0;
        if ((rc = post(b, send, wild ? -1 : peer, tag, comm, rec->ev.bytes, send ? send_flags(k) : 0,
                       &ix)) < 0)
            return rc;
        if (rec->req && (rc = req_room(b, rec->req)) == 0) {
            b->reqop[rec->req] = ix + 1;
            b->tm[rec->req].used = 0;
        }
        return rc;
    }
    case FC_EV_MPI_Sendrecv: case FC_EV_MPI_Sendrecv_replace:
        if ((rc = post(b, 1, peer == FC_PEER_NULL ? -1 : peer, tag, comm, rec->ev.bytes, 0, &ix)) < 0)
            return rc;
        *sr_send = ix;
        return 0;
    case FC_EV_MPI_Send_init: case FC_EV_MPI_Bsend_init: case FC_EV_MPI_Ssend_init:
    case FC_EV_MPI_Rsend_init: case FC_EV_MPI_Recv_init:
        if (rec->req == 0 || (rc = req_room(b, rec->req)) < 0)
            return rc;
        b->tm[rec->req] = (tmpl){.used = k == FC_EV_MPI_Recv_init ? 1 : 2, .flags = send_flags(k),
                                 .peer = peer >= 0 ? peer : -1, .tag = tag, .comm = comm,
                                 .bytes = rec->ev.bytes};
        if (peer == FC_PEER_NULL)
            b->tm[rec->req].used = 0;
        return 0;
    case FC_EV_MPI_Start: {
        const fc_record *pc = pcoll_of(b, rec->req);
        return pc != NULL ? do_coll(b, pc) : start_req(b, rec->req);
    }
    case FC_EV_MPI_Wait: case FC_EV_MPI_Waitall: case FC_EV_MPI_Waitany: case FC_EV_MPI_Waitsome:
    case FC_EV_MPI_Test: case FC_EV_MPI_Testall: case FC_EV_MPI_Testany: case FC_EV_MPI_Testsome:
        if ((rc = wait_on(b, NULL, 0)) == 0) {
            b->waitop = (long)b->pg->nops - 1;
            b->waitpoll = k == FC_EV_MPI_Test || k == FC_EV_MPI_Testall || k == FC_EV_MPI_Testany ||
                          k == FC_EV_MPI_Testsome;
        }
        return rc;
    default:
        if (fc__coll_is_coll(k) || fc__coll_is_ctor(k))
            return do_coll(b, rec);
        if (fc__coll_persistent(k) && rec->req != 0)
            return pcoll_keep(b, rec);
        return 0;
    }
}

/* Pass 2: rank file i's program. start_ns and end_ns get its aligned start and end. */
static int scan_rank(builder *b, fc_trace *t, size_t i, int64_t *start_ns, int64_t *end_ns)
{
    fc_cursor *c = NULL;
    fc_record rec;
    int started = 0, done = 0;
    long sr_send = -1;
    double mpi = 0;
    int rc = fc_cursor_open(t, i, &c);
    b->pend = 0;
    b->waitop = -1;
    while (rc == 0 && !done && (rc = fc_cursor_next(c, &rec)) > 0) {
        uint32_t k = rec.ev.kind;
        rc = 0;
        if (k == FC_EV_COMPLETE) {
            rc = on_complete(b, &rec, &sr_send);
            continue;
        }
        if (k == FC_EV_START) {
            const fc_record *pc = pcoll_of(b, rec.req);
            rc = pc != NULL ? do_coll(b, pc) : start_req(b, rec.req);
            continue;
        }
        if (sr_send >= 0) { /* a Sendrecv without its receive half (MPI_PROC_NULL source) */
            uint32_t op = (uint32_t)sr_send;
            sr_send = -1;
            if ((rc = wait_on(b, &op, 1)) < 0)
                break;
        }
        b->waitop = -1;
        if (!started) {
            started = 1;
            int init = k == FC_EV_MPI_Init || k == FC_EV_MPI_Init_thread;
            *start_ns = init ? rec.t1 : rec.t0;
            *end_ns = *start_ns;
            b->last_t1 = init ? (int64_t)rec.ev.t1 : (int64_t)rec.ev.t0;
            if (init)
                continue;
        }
        if (k == FC_EV_POLLS) {
            /* The calls of a folded run after its first (format.h, POLLS): bytes2 is the time all
             * the run's calls spent inside MPI, the first's included; the rest of the time from
             * the first's exit to the last's is computing, as it is between unfolded polls, which
             * complete nothing. */
            int64_t span = (int64_t)rec.ev.t1 - b->last_t1;
            int64_t in_mpi = (int64_t)rec.ev.bytes2 - (b->last_t1 - b->last_t0);
            in_mpi = in_mpi < 0 ? 0 : in_mpi > span ? span : in_mpi;
            b->pend += span > in_mpi ? (double)(span - in_mpi) / 1e9 : 0;
            mpi += (double)in_mpi / 1e9;
            b->last_t1 = (int64_t)rec.ev.t1;
            *end_ns = rec.t1;
            continue;
        }
        if (k == FC_EV_TRACER_WAIT) {
            /* Time the tracer took from the application: neither computing nor MPI. */
            double gap = (double)((int64_t)rec.ev.t0 - b->last_t1) / 1e9;
            b->pend += gap > 0 ? gap : 0;
            b->last_t1 = (int64_t)rec.ev.t1;
            continue;
        }
        double gap = (double)((int64_t)rec.ev.t0 - b->last_t1) / 1e9;
        b->pend += gap > 0 ? gap : 0;
        *end_ns = rec.t0;
        if (k == FC_EV_MPI_Finalize) {
            done = 1;
            break;
        }
        mpi += (double)(rec.ev.t1 - rec.ev.t0) / 1e9;
        b->last_t1 = (int64_t)rec.ev.t1;
        b->last_t0 = (int64_t)rec.ev.t0;
        *end_ns = rec.t1;
        if (!(rec.ev.flags & FC_EVF_ERROR))
            rc = on_call(b, &rec, &sr_send);
    }
    if (rc >= 0 && sr_send >= 0) {
        uint32_t op = (uint32_t)sr_send;
        rc = wait_on(b, &op, 1);
    }
    fc_cursor_close(c);
    b->pg->tail = b->pend;
    b->pg->obs_mpi = mpi;
    return rc < 0 ? rc : started;
}

/* ---- pairing ------------------------------------------------------------------------------------ */

static int cmp_mkey(const void *a, const void *b)
{
    const mkey *x = a, *y = b;
#define CMP(f)                                                                                     \
    if (x->f != y->f)                                                                              \
        return x->f < y->f ? -1 : 1;
    CMP(comm) CMP(src) CMP(dst) CMP(tag) CMP(seq)
#undef CMP
    return 0;
}

static int same_env(const mkey *x, const mkey *y)
{
    return x->comm == y->comm && x->src == y->src && x->dst == y->dst && x->tag == y->tag;
}

/* Pairs the k-th send of each envelope with its k-th receive (non-overtaking order). */
static int pair(builder *b)
{
    fc__replay *rp = b->rp;
    size_t i = 0, j = 0, cap = 0, total = 0;
    fc__sort(b->sk, b->ns, sizeof *b->sk, cmp_mkey);
    fc__sort(b->rk, b->nr, sizeof *b->rk, cmp_mkey);
    for (uint32_t r = 0; r < rp->nranks; r++)
        for (size_t o = 0; o < rp->prog[r].nops; o++)
            total += rp->prog[r].ops[o].kind != FC__ROP_WAIT;
    while (i < b->ns && j < b->nr) {
        int c = cmp_mkey(&b->sk[i], &b->rk[j]);
        if (!same_env(&b->sk[i], &b->rk[j])) {
            c < 0 ? i++ : j++;
            continue;
        }
        const mkey *s = &b->sk[i++], *q = &b->rk[j++];
        if (fc__grow((void **)&rp->msgs, &rp->nmsgs, &cap, sizeof *rp->msgs) < 0)
            return FC_ENOMEM;
        fc__rop *so = &rp->prog[s->rank].ops[s->op], *ro = &rp->prog[q->rank].ops[q->op];
        so->msg = ro->msg = (uint32_t)rp->nmsgs;
        rp->msgs[rp->nmsgs++] = (fc__rmsg){.src = s->src, .dst = s->dst, .send_op = s->op,
                                           .recv_op = q->op, .bytes = so->bytes,
                                           .sync = !!(so->flags & FC__ROPF_SYNC)};
    }
    rp->unmatched = total - 2 * rp->nmsgs;
    return 0;
}

/* Node numbers as match.h gives them: node name (else host, else "rank-N") in order of first
 * appearance by world rank. */
static int number_nodes(fc__replay *rp, fc_trace *t)
{
    uint32_t *count = NULL;
    rp->rank_node = malloc(rp->nranks * sizeof *rp->rank_node);
    rp->nodes = calloc(rp->nranks ? rp->nranks : 1, sizeof *rp->nodes);
    count = calloc(rp->nranks ? rp->nranks : 1, sizeof *count);
    if (rp->rank_node == NULL || rp->nodes == NULL || count == NULL) {
        free(count);
        return FC_ENOMEM;
    }
    for (uint32_t w = 0; w < rp->nranks; w++) {
        char buf[32];
        long ix = fc_trace_find(t, w);
        const fc_rank *r = ix >= 0 ? fc_trace_rank(t, (size_t)ix) : NULL;
        const char *name = r ? (r->info.node[0] ? r->info.node : r->info.host) : "";
        if (name[0] == '\0') {
            snprintf(buf, sizeof buf, "rank-%u", w);
            name = buf;
        }
        uint32_t n = 0;
        while (n < rp->nnodes && strcmp(rp->nodes[n], name) != 0)
            n++;
        if (n == rp->nnodes && (rp->nodes[rp->nnodes++] = strdup(name)) == NULL) {
            free(count);
            return FC_ENOMEM;
        }
        rp->rank_node[w] = n;
        if (++count[n] > rp->max_slots)
            rp->max_slots = count[n];
    }
    free(count);
    return 0;
}

int fc__replay_build(fc_trace *t, fc__replay **out)
{
    fc__replay *rp = calloc(1, sizeof *rp);
    imap im = {0};
    builder b;
    int64_t *st = NULL, *en = NULL;
    int rc = FC_ENOMEM, any = 0;
    memset(&b, 0, sizeof b);
    *out = NULL;
    if (rp == NULL)
        goto out;
    rp->nranks = fc_trace_world_size(t);
    rp->prog = calloc(rp->nranks ? rp->nranks : 1, sizeof *rp->prog);
    b.world = malloc((rp->nranks ? rp->nranks : 1) * sizeof *b.world);
    st = calloc(rp->nranks ? rp->nranks : 1, sizeof *st);
    en = calloc(rp->nranks ? rp->nranks : 1, sizeof *en);
    if (rp->prog == NULL || b.world == NULL || st == NULL || en == NULL)
        goto out;
    b.rp = rp;
    b.im = &im;
    fc__coll_trace_settings(t, &rp->coll, NULL, 0);
    if ((rc = number_nodes(rp, t)) < 0)
        goto out_rc;
    /* The traced nodes as MPICH saw them, which the ch4 device's node-aware collectives follow: the
     * messages of a collective are those of the traced placement under every other. */
    if ((b.cnode = malloc((rp->nranks ? rp->nranks : 1) * sizeof *b.cnode)) == NULL ||
        (b.mpich_node = malloc((rp->nranks ? rp->nranks : 1) * sizeof *b.mpich_node)) == NULL)
        goto out;
    if ((rc = fc__coll_mpich_nodes(t, &rp->coll, rp->nranks, b.mpich_node)) < 0)
        goto out_rc;
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        if ((rc = set_rank(&b, fc_trace_rank(t, i))) < 0)
            goto out;
        b.ncs = 0;
        if (b.rank >= rp->nranks) {
            rc = fc__err(FC_ECORRUPT, "%s: rank %u outside the world of %u ranks", b.r->file, b.rank,
                         rp->nranks);
            goto out_rc;
        }
        if ((rc = coll_sizes(&b, t, i)) < 0)
            goto out_rc;
    }
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        if ((rc = set_rank(&b, fc_trace_rank(t, i))) < 0)
            goto out;
        b.pg = &rp->prog[b.rank];
        b.ncs = 0;
        b.opcap = b.wcap = 0;
        if (b.nreq) {
            memset(b.reqop, 0, b.nreq * sizeof *b.reqop);
            memset(b.tm, 0, b.nreq * sizeof *b.tm);
        }
        if ((rc = scan_rank(&b, t, i, &st[b.rank], &en[b.rank])) < 0)
            goto out_rc;
        if (rc == 0) /* no events: the rank's program stays empty */
            en[b.rank] = st[b.rank] = INT64_MAX;
        any |= rc;
    }
    if (!any) {
        rc = fc__err(FC_EINVAL, "the trace has no events to replay");
        goto out_rc;
    }
    int64_t origin = INT64_MAX;
    for (uint32_t r = 0; r < rp->nranks; r++)
        if (st[r] < origin)
            origin = st[r];
    for (uint32_t r = 0; r < rp->nranks; r++) {
        fc__rprog *pg = &rp->prog[r];
        if (st[r] == INT64_MAX)
            continue;
        pg->start = (double)(st[r] - origin) / 1e9;
        pg->obs_end = (double)(en[r] - origin) / 1e9;
        pg->obs_compute = pg->tail;
        for (size_t o = 0; o < pg->nops; o++)
            pg->obs_compute += pg->ops[o].compute;
        if (pg->obs_end > rp->obs_time)
            rp->obs_time = pg->obs_end;
    }
    if ((rc = pair(&b)) < 0)
        goto out_rc;
    *out = rp;
    rp = NULL;
    rc = 0;
    goto out_rc;
out:
    rc = FC_ENOMEM;
out_rc:
    free(im.v);
    free(b.sk);
    free(b.rk);
    free(b.reqop);
    free(b.tm);
    free(b.ptm);
    free(b.cnode);
    free(b.mpich_node);
    free(b.cs);
    free(b.world);
    free(b.ckeys);
    free(st);
    free(en);
    fc__replay_free(rp);
    return rc;
}

/* ---- observed times for the flows not classed network ------------------------------------------ */

/* A flow or a message under its sort key: ranks, collective or not, then the sender's order. */
typedef struct fkey {
    uint32_t src, dst;
    uint32_t coll;
    double order; /* a flow's send start; a message's send op index */
    uint64_t tie; /* a flow's id */
    uint32_t ix;  /* index into m->flows or rp->msgs */
} fkey;

static int cmp_fkey(const void *a, const void *b)
{
    const fkey *x = a, *y = b;
#define CMP(f)                                                                                     \
    if (x->f != y->f)                                                                              \
        return x->f < y->f ? -1 : 1;
    CMP(src) CMP(dst) CMP(coll) CMP(order) CMP(tie)
#undef CMP
    return 0;
}

static int same_pair(const fkey *x, const fkey *y)
{
    return x->src == y->src && x->dst == y->dst && x->coll == y->coll;
}

int fc__replay_fix(fc__replay *rp, const fc__match *m, const fc__observation *ob)
{
    size_t nf = ob->n < m->ninter ? ob->n : m->ninter;
    fkey *fk = malloc((nf ? nf : 1) * sizeof *fk), *mk = malloc((rp->nmsgs ? rp->nmsgs : 1) * sizeof *mk);
    if (fk == NULL || mk == NULL) {
        free(fk);
        free(mk);
        return FC_ENOMEM;
    }
    for (size_t i = 0; i < nf; i++) {
        const fc__flow *f = &m->flows[i];
        fk[i] = (fkey){.src = f->src_rank, .dst = f->dst_rank, .coll = f->coll != 0, .order = f->send_start,
                       .tie = f->id, .ix = (uint32_t)i};
    }
    for (size_t i = 0; i < rp->nmsgs; i++) {
        const fc__rmsg *g = &rp->msgs[i];
        uint8_t fl = g->src < rp->nranks ? rp->prog[g->src].ops[g->send_op].flags : 0;
        mk[i] = (fkey){.src = g->src, .dst = g->dst, .coll = !!(fl & FC__ROPF_COLL), .order = g->send_op,
                       .ix = (uint32_t)i};
        rp->msgs[i].fixed = 0;
    }
    fc__sort(fk, nf, sizeof *fk, cmp_fkey);
    fc__sort(mk, rp->nmsgs, sizeof *mk, cmp_fkey);
    rp->inter_flows = nf;
    rp->mapped_flows = rp->fixed_flows = 0;
    size_t i = 0, j = 0;
    while (i < nf && j < rp->nmsgs) {
        if (!same_pair(&fk[i], &mk[j])) {
            cmp_fkey(&fk[i], &mk[j]) < 0 ? i++ : j++;
            continue;
        }
        size_t ie = i, je = j;
        while (ie < nf && same_pair(&fk[ie], &fk[i]))
            ie++;
        while (je < rp->nmsgs && same_pair(&mk[je], &mk[j]))
            je++;
        /* The k-th flow of a pair of ranks is its k-th message when both sides saw the same
         * sends: the same number, of the same sizes. */
        int same = ie - i == je - j;
        for (size_t k = 0; same && k < ie - i; k++)
            same = m->flows[fk[i + k].ix].bytes == rp->msgs[mk[j + k].ix].bytes;
        for (size_t k = 0; same && k < ie - i; k++) {
            const fc__flow *f = &m->flows[fk[i + k].ix];
            const fc__obs *o = &ob->flow[fk[i + k].ix];
            fc__rmsg *g = &rp->msgs[mk[j + k].ix];
            rp->mapped_flows++;
            if (o->cls == FC_OBS_NETWORK || o->cls == FC_OBS_BELOW_WIRE || !(f->observed >= 0))
                continue;
            /* Eager, the replay makes the receiver wait as it did (its receive completes once it
             * is there): the part both ends took part in follows. Rendezvous, the replay moves the
             * bytes from both posts on, without the waits that held them up: the whole time. */
            double d = f->rendezvous || g->sync ? f->observed : f->observed - o->late_peer - o->no_progress;
            g->fixed = 1;
            g->fixed_obs = d > 0 ? d : 0;
            g->fixed_s = 0;
            rp->fixed_flows++;
        }
        i = ie;
        j = je;
    }
    free(fk);
    free(mk);
    return 0;
}

void fc__replay_free(fc__replay *rp)
{
    if (rp == NULL)
        return;
    for (uint32_t r = 0; r < rp->nranks && rp->prog; r++) {
        free(rp->prog[r].ops);
        free(rp->prog[r].waits);
    }
    for (uint32_t n = 0; n < rp->nnodes && rp->nodes; n++)
        free(rp->nodes[n]);
    free(rp->nodes);
    free(rp->rank_node);
    free(rp->prog);
    free(rp->msgs);
    free(rp);
}
