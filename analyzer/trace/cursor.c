/* analyzer/trace/cursor.c: streams the events of a rank (its threads merged by time), derives aligned
 * times, world peers and request ids, and merges all ranks by aligned time. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/internal.h"
#include "trace/cursor.h"

/* ---- request ids: handle -> queue of outstanding requests, open addressing ---------------------
 * A queue, not a single binding: MPICH, for one, hands out the same handle for several sends that
 * completed at once, and they complete in the order they were posted. */

typedef struct pend {
    uint64_t id, comm;
    int persistent;
} pend;

/* Nearly always a handle has one request outstanding: it is kept in the entry itself, so that a
 * post and its completion cost no allocation; only the requests behind it go to a queue apart,
 * which keeps the entries at 32 bytes, two to a cache line. */
typedef struct reqent {
    uint64_t handle; /* 0: empty slot (obj 0 never names a request) */
    uint64_t id, comm; /* the oldest outstanding request of this handle */
    uint32_t persistent;
    uint32_t more; /* 0, or 1 + the index in reqmap.q of the queue of the younger ones */
} reqent;

/* The younger requests of a handle, oldest first: v[head..n). Queues are kept for reuse once
 * empty, linked by next_free. */
typedef struct reqq {
    pend *v;
    size_t head, n, cap;
    uint32_t next_free; /* 1 + index of the next free queue, 0 for none */
} reqq;

typedef struct reqmap {
    reqent *slot;
    size_t cap, used;
    unsigned shift; /* 64 - log2(cap) */
    reqq *q;
    size_t nq, qcap;
    uint32_t qfree; /* 1 + index of the first free queue, 0 for none */
} reqmap;

/* Fibonacci hashing: the top bits of the product depend on all the bits of the handle, whether
 * handles count up (MPICH) or are aligned addresses (Open MPI). */
static inline size_t req_hash(uint64_t h, unsigned shift)
{
    return (size_t)((h * UINT64_C(0x9e3779b97f4a7c15)) >> shift);
}

/* The slot of handle in m (which has slots): its entry, or the empty slot where it would go. */
static inline size_t req_slot(const reqmap *m, uint64_t handle)
{
    size_t i = req_hash(handle, m->shift);
    while (m->slot[i].handle != 0 && m->slot[i].handle != handle)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static inline reqent *req_find(reqmap *m, uint64_t handle)
{
    reqent *e = &m->slot[req_slot(m, handle)];
    return e->handle == handle ? e : NULL;
}

/* req_push's rare cases: a handle already queued, or a map to grow first. */
static __attribute__((noinline)) int req_push_slow(reqmap *m, uint64_t handle, uint64_t id, uint64_t comm,
                                                   int persistent, size_t j)
{
    if (m->slot[j].handle == handle) {
        reqent *e = &m->slot[j];
        if (e->more == 0) {
            if (m->qfree != 0) {
                e->more = m->qfree;
                m->qfree = m->q[m->qfree - 1].next_free;
            } else {
                if (m->nq >= UINT32_MAX - 1 || fc__grow((void **)&m->q, &m->nq, &m->qcap, sizeof *m->q) < 0)
                    return FC_ENOMEM;
                memset(&m->q[m->nq], 0, sizeof *m->q);
                e->more = (uint32_t)++m->nq;
            }
        }
        reqq *q = &m->q[e->more - 1];
        if (fc__grow((void **)&q->v, &q->n, &q->cap, sizeof *q->v) < 0)
            return FC_ENOMEM;
        q->v[q->n++] = (pend){id, comm, persistent};
        return 0;
    }
    if ((m->used + 1) * 2 > m->cap) {
        size_t ncap = m->cap * 2;
        unsigned nshift = m->shift - 1;
        reqent *ns = calloc(ncap, sizeof *ns);
        if (ns == NULL)
            return FC_ENOMEM;
        for (size_t i = 0; i < m->cap; i++) {
            if (m->slot[i].handle == 0)
                continue;
            size_t k = req_hash(m->slot[i].handle, nshift);
            while (ns[k].handle != 0)
                k = (k + 1) & (ncap - 1);
            ns[k] = m->slot[i];
        }
        free(m->slot);
        m->slot = ns;
        m->cap = ncap;
        m->shift = nshift;
        j = req_slot(m, handle);
    }
    m->slot[j] = (reqent){handle, id, comm, (uint32_t)persistent, 0};
    m->used++;
    return 0;
}

/* Gives m its first slots, so that the lookups need not test for none: a few, as a rank has a
 * few requests outstanding at a time, and the tables of every rank take turns in the cache. */
static int req_init(reqmap *m)
{
    if ((m->slot = calloc(8, sizeof *m->slot)) == NULL)
        return FC_ENOMEM;
    m->cap = 8;
    m->shift = 64 - 3;
    return 0;
}

/* Appends a request to the queue of handle, creating the entry when needed. Inline for the common
 * case, a new handle in a map with room: one per posted request. */
static inline int req_push(reqmap *m, uint64_t handle, uint64_t id, uint64_t comm, int persistent)
{
    size_t j = req_slot(m, handle);
    if (m->slot[j].handle == handle || (m->used + 1) * 2 > m->cap)
        return req_push_slow(m, handle, id, comm, persistent, j);
    m->slot[j] = (reqent){handle, id, comm, (uint32_t)persistent, 0};
    m->used++;
    return 0;
}

/* Removes e by shifting back the entries of its probe run, so that no tombstones are needed. */
static inline void req_del(reqmap *m, reqent *e)
{
    size_t i = (size_t)(e - m->slot), j = i;
    for (;;) {
        j = (j + 1) & (m->cap - 1);
        if (m->slot[j].handle == 0)
            break;
        size_t k = req_hash(m->slot[j].handle, m->shift);
        /* Move slot j into the hole at i unless its home k lies cyclically in (i, j]. */
        if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        m->slot[i] = m->slot[j];
        i = j;
    }
    m->slot[i].handle = 0;
    m->used--;
}

/* req_pop's case of a handle with younger requests queued. The queue is compacted only when most
 * of it is spent, so that a long queue costs O(1) per request. */
static __attribute__((noinline)) void req_pop_more(reqmap *m, reqent *e)
{
    reqq *q = &m->q[e->more - 1];
    const pend *p = &q->v[q->head++];
    e->id = p->id;
    e->comm = p->comm;
    e->persistent = (uint32_t)p->persistent;
    if (q->head == q->n) {
        q->head = q->n = 0;
        q->next_free = m->qfree;
        m->qfree = e->more;
        e->more = 0;
    } else if (q->head >= 16 && q->head * 2 >= q->n) {
        memmove(q->v, q->v + q->head, (q->n - q->head) * sizeof *q->v);
        q->n -= q->head;
        q->head = 0;
    }
}

/* Drops the oldest request of e, and e itself when it was the last. */
static inline void req_pop(reqmap *m, reqent *e)
{
    if (e->more == 0)
        req_del(m, e);
    else
        req_pop_more(m, e);
}

static void req_free_all(reqmap *m)
{
    for (size_t i = 0; i < m->nq; i++)
        free(m->q[i].v);
    free(m->q);
    free(m->slot);
}

/* What a record of each kind does to requests; KIND_UNKNOWN for the kinds this reader does not
 * know, which it skips. */
enum { REQ_NONE, REQ_POST, REQ_PINIT, REQ_USE, REQ_COMPLETE, REQ_FREE, KIND_UNKNOWN };

static int req_role(unsigned kind)
{
    switch (kind) {
    case FC_EV_MPI_Isend: case FC_EV_MPI_Ibsend: case FC_EV_MPI_Issend: case FC_EV_MPI_Irsend:
    case FC_EV_MPI_Irecv: case FC_EV_MPI_Imrecv:
        return REQ_POST;
    case FC_EV_MPI_Send_init: case FC_EV_MPI_Bsend_init: case FC_EV_MPI_Ssend_init:
    case FC_EV_MPI_Rsend_init: case FC_EV_MPI_Recv_init:
        return REQ_PINIT;
    case FC_EV_MPI_Ineighbor_allgather: case FC_EV_MPI_Ineighbor_allgatherv: case FC_EV_MPI_Ineighbor_alltoall:
    case FC_EV_MPI_Ineighbor_alltoallv: case FC_EV_MPI_Ineighbor_alltoallw:
        return REQ_POST;
    case FC_EV_MPI_Neighbor_allgather_init: case FC_EV_MPI_Neighbor_allgatherv_init:
    case FC_EV_MPI_Neighbor_alltoall_init: case FC_EV_MPI_Neighbor_alltoallv_init:
    case FC_EV_MPI_Neighbor_alltoallw_init:
        return REQ_PINIT;
    case FC_EV_MPI_Start: case FC_EV_START: case FC_EV_MPI_Wait: case FC_EV_MPI_Test: case FC_EV_MPI_Cancel:
        return REQ_USE;
    case FC_EV_COMPLETE:
        return REQ_COMPLETE;
    case FC_EV_MPI_Request_free:
        return REQ_FREE;
    default:
        return kind >= FC_EV_MPI_Ibarrier && kind <= FC_EV_MPI_Iexscan ? REQ_POST : REQ_NONE;
    }
}

/* req_role of each kind, or KIND_UNKNOWN: a load per record instead of two switches. One table
 * for every cursor, made once: the cursors of all ranks take turns in the cache, and a copy in
 * each would be two more lines of each to fetch. */
static unsigned char roles[FC_EV_MAX_];
static pthread_once_t roles_once = PTHREAD_ONCE_INIT;

static void roles_init(void)
{
    for (unsigned k = 0; k < FC_EV_MAX_; k++)
        roles[k] = (unsigned char)(fc_event_kind_name(k) != NULL ? req_role(k) : KIND_UNKNOWN);
}

/* ---- one thread's stream of records ---------------------------------------------------------- */

typedef struct stream {
    uint32_t thread;
    size_t next_blk;        /* index of the next block of the rank's index to consider */
    unsigned char *raw;     /* the current block, inflated */
    size_t rawcap;
    const unsigned char *p, *end;
    uint64_t left, blk_off; /* records left in the block; payload offset, for messages */
    fc_event_codec *codec;
    const fc_event *head;   /* the next record, held in codec (its thread unset); NULL at the end */
    /* fc__event_unchecked's test as two comparisons: p <= rsafe and codec->dur <= dsafe. rsafe
     * is the start of raw (which p is past) until the chunk is known to be in columns. */
    const unsigned char *rsafe, *dsafe;
} stream;

struct fc_cursor {
    fc_trace *t;
    const fc__rank *r;
    stream *s;
    size_t ns;
    unsigned char *stored;
    size_t stcap;
    struct libdeflate_decompressor *inflater; /* shared by the streams, made at the first block */
    reqmap reqs;
    uint64_t next_req;
    int failed;
    stream *one; /* a rank with one thread: its stream while it has a record and the cursor has not
                  * failed; NULL otherwise */
    const unsigned char *role; /* roles, above */
    /* What fc_rank_align and fc_rank_peer_world do for nearly every record, taken at open (see
     * derive()): the clock offset when it is constant, and MPI_COMM_WORLD's members. */
    int clock_fixed;
    int64_t clock_offset;
    const uint32_t *world_ranks;
    uint32_t world_size;
};

/* Reads and inflates block b into s. */
static int load_block(fc_cursor *c, stream *s, const fc__blk *b)
{
    const char *file = c->r->pub.file;
    size_t got;
    int rc = 0;
    unsigned char *src;
    if (b->raw > s->rawcap) {
        free(s->raw);
        s->rawcap = b->raw;
        if ((s->raw = malloc(s->rawcap)) == NULL)
            return fc__err(FC_ENOMEM, "%s: out of memory", file);
    }
    if (b->flags & FC_BLKF_ZLIB) {
        if (b->stored > c->stcap) {
            free(c->stored);
            c->stcap = b->stored;
            if ((c->stored = malloc(c->stcap)) == NULL)
                return fc__err(FC_ENOMEM, "%s: out of memory", file);
        }
        src = c->stored;
    } else {
        src = s->raw;
    }
    if (b->mem != NULL) {
        /* Recovered from the rescue file: raw, in memory. */
        memcpy(s->raw, b->mem, b->raw);
        src = s->raw;
        got = b->raw;
        rc = 0;
        goto parse;
    }
    /* The file is opened for each block so that a merge of thousands of ranks needs no more
     * descriptors than one. */
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fc__err(FC_EIO, "%s: %s", file, strerror(errno));
    rc = fc__pread(fd, src, b->stored, b->off, &got);
    close(fd);
    if (rc != 0)
        return fc__err(FC_EIO, "%s: offset %llu: %s", file, (unsigned long long)b->off,
                       rc < 0 ? strerror(errno) : "file shrank while being read");
    if ((b->flags & FC_BLKF_ZLIB) && (rc = fc__inflate(&c->inflater, src, b->stored, s->raw, b->raw)) < 0)
        return rc == FC_ENOMEM ? fc__err(rc, "%s: out of memory inflating a block", file)
                               : fc__err(FC_EZLIB, "%s: offset %llu: EVENTS block cannot be inflated", file,
                                         (unsigned long long)(b->off - FC_BLOCK_HEADER_SIZE));
parse:;
    const unsigned char *p = s->raw, *end = s->raw + b->raw;
    uint64_t thread, count, base;
    if (fc__chunk_header(&p, end, &thread, &count, &base) < 0)
        return fc__err(FC_ECORRUPT, "%s: offset %llu: EVENTS chunk header is malformed", file,
                       (unsigned long long)(b->off - FC_BLOCK_HEADER_SIZE));
    fc__codec_rewind(s->codec, base);
    s->p = p;
    s->rsafe = s->dsafe = s->raw;
    s->end = end;
    s->left = count;
    s->blk_off = b->off - FC_BLOCK_HEADER_SIZE;
    return 0;
}

/* Moves s to the next EVENTS block of its thread and loads it: returns 1, 0 when there is none
 * left, or an error. */
static int next_block(fc_cursor *c, stream *s)
{
    const fc__blk *b = NULL;
    while (s->next_blk < c->r->nblks) {
        const fc__blk *x = &c->r->blks[s->next_blk++];
        if (x->thread == s->thread) {
            b = x;
            break;
        }
    }
    if (b == NULL)
        return 0;
    /* The codec is 11 KiB: only threads that have blocks get one. */
    if (s->codec == NULL) {
        if ((s->codec = malloc(sizeof *s->codec)) == NULL)
            return fc__err(FC_ENOMEM, "%s: out of memory", c->r->pub.file);
        fc_event_codec_reset(s->codec, 0); /* once: each block rewinds it (internal.h) */
    }
    int rc = load_block(c, s, b);
    return rc < 0 ? rc : 1;
}

/* fc_event_decode_ref's rare case, near the ends of a chunk or in rows, kept out of line: inlined
 * too, it would crowd the common case out of registers. Both cases leave a failed record's entry
 * of the codec as it falls (undo 0, event.h): a malformed record ends the cursor, which reads
 * nothing more with the codec, so it need not copy the entry aside before each record. */
static __attribute__((noinline)) const fc_event *decode_checked(fc_event_codec *c, const unsigned char **p,
                                                                const unsigned char *end)
{
    return fc__event_decode(c, p, end, 1, 0);
}

/* Sets the limits of s's unchecked test once its chunk is known to be in columns: then, and only
 * then, fc__event_unchecked(codec, p) is p <= rsafe && codec->dur <= dsafe. */
static void set_safe(stream *s)
{
    const fc_event_codec *k = s->codec;
    if (k->cols == 2 && k->rend - s->raw >= FC__EVENT_COLS_REC_MAX && k->dend - s->raw >= 10) {
        s->rsafe = k->rend - FC__EVENT_COLS_REC_MAX;
        s->dsafe = k->dend - 10;
    }
}

/* Moves s to its next record of a known kind (head NULL at the end). Inline, and forced so, so
 * that the common case, the next record of the current block, costs no call: it runs for every
 * record. */
static inline __attribute__((always_inline)) int advance(fc_cursor *c, stream *s)
{
    for (;;) {
        /* The rare cases are marked so: gcc then lays the common one out with fewer jumps. */
        if (__builtin_expect(s->left == 0, 0)) {
            int rc = next_block(c, s);
            if (rc <= 0) {
                s->head = NULL;
                c->one = NULL; /* had s been the only stream, it has no record left */
                return rc;
            }
            continue;
        }
        /* fc_event_decode_ref, with its common case decoded here without a call. The test is
         * fc__event_unchecked's (event.h), with its limits worked out once per chunk. */
        const fc_event *e;
        if (__builtin_expect(s->p <= s->rsafe && s->codec->dur <= s->dsafe, 1)) {
            e = fc__event_decode(s->codec, &s->p, s->end, 0, 0);
        } else {
            e = decode_checked(s->codec, &s->p, s->end);
            set_safe(s);
        }
        if (__builtin_expect(e == NULL, 0)) {
            s->head = NULL;
            c->one = NULL;
            return fc__err(FC_ECORRUPT, "%s: offset %llu: EVENTS block has a malformed record", c->r->pub.file,
                           (unsigned long long)s->blk_off);
        }
        s->left--;
        if (c->role[e->kind] != KIND_UNKNOWN) {
            s->head = e;
            return 0;
        }
    }
}

int fc_cursor_open(fc_trace *t, size_t i, fc_cursor **out)
{
    int rc = 0;
    fc_cursor *c = calloc(1, sizeof *c);
    *out = NULL;
    if (i >= t->nranks) {
        free(c);
        return fc__err(FC_EINVAL, "rank file index %zu out of range", i);
    }
    if (c == NULL)
        return fc__err(FC_ENOMEM, "out of memory");
    c->t = t;
    c->r = &t->ranks[i];
    c->ns = c->r->pub.threads;
    c->next_req = 1;
    pthread_once(&roles_once, roles_init); /* fails only for arguments that are not these */
    c->role = roles;
    /* Without a FINALIZE measurement, fc_rank_align adds a constant offset (reader.h): the offset
     * it adds to 0 is the one it adds to every time. */
    c->clock_fixed = c->r->fin == NULL;
    c->clock_offset = fc_rank_align(&c->r->pub, 0);
    const fc_comm *world = fc_rank_comm(&c->r->pub, 0);
    if (world != NULL && !(world->flags & FC_COMMF_INTER)) {
        c->world_ranks = world->local;
        c->world_size = world->local_size;
    }
    if ((c->ns > 0 && (c->s = calloc(c->ns, sizeof *c->s)) == NULL) || req_init(&c->reqs) < 0) {
        rc = fc__err(FC_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < c->ns; k++) {
        c->s[k].thread = (uint32_t)k;
        if ((rc = advance(c, &c->s[k])) < 0)
            goto out;
    }
    if (c->ns == 1 && c->s[0].head != NULL)
        c->one = &c->s[0];
out:
    if (rc < 0)
        fc_cursor_close(c);
    else
        *out = c;
    return rc;
}

void fc_cursor_close(fc_cursor *c)
{
    if (c == NULL)
        return;
    for (size_t k = 0; c->s != NULL && k < c->ns; k++) {
        free(c->s[k].raw);
        free(c->s[k].codec);
    }
    free(c->s);
    free(c->stored);
    fc__inflate_end(c->inflater);
    req_free_all(&c->reqs);
    free(c);
}

/* Gives rec its request id by the rule of reader.h, and the communicator its peer refers to. */
static inline __attribute__((always_inline)) int join_request(fc_cursor *c, fc_record *rec)
{
    const fc_event *ev = &rec->ev;
    int role = c->role[ev->kind];
    rec->comm = ev->comm;
    rec->req = 0;
    if (role == REQ_NONE || ev->obj == 0 || (role == REQ_COMPLETE && (ev->flags & FC_EVF_NULL)))
        return 0;
    if (role == REQ_POST || role == REQ_PINIT) {
        uint64_t id = c->next_req++;
        rec->req = id;
        return req_push(&c->reqs, ev->obj, id, ev->comm, role == REQ_PINIT);
    }
    reqent *e = req_find(&c->reqs, ev->obj);
    if (e == NULL) {
        uint64_t id = c->next_req++;
        rec->req = id;
        return role == REQ_USE ? req_push(&c->reqs, ev->obj, id, ev->comm, 0) : 0;
    }
    rec->req = e->id;
    if (role == REQ_COMPLETE)
        rec->comm = e->comm;
    if (role == REQ_FREE || (role == REQ_COMPLETE && !e->persistent))
        req_pop(&c->reqs, e);
    return 0;
}

/* Fills in rec's rank, aligned times and world peer as fc_rank_align and fc_rank_peer_world give
 * them (reader.h), with their common cases done here without a call: a constant clock offset, a
 * negative peer (FC_PEER_*, unchanged) and a peer in a defined MPI_COMM_WORLD (its local group). */
static inline __attribute__((always_inline)) int64_t align_t0(const fc_cursor *c, uint64_t t)
{
    return c->clock_fixed ? (int64_t)t + c->clock_offset : fc_rank_align(&c->r->pub, t);
}

/* As above, given t0, ev.t0 aligned (align_t0), which the callers have worked out to choose or
 * limit the record; with fixed 1, the caller has seen that c->clock_fixed is set. */
static inline __attribute__((always_inline)) void derive(const fc_cursor *c, fc_record *rec, int64_t t0, int fixed)
{
    const fc_rank *r = &c->r->pub;
    rec->rank = r->info.rank;
    rec->t0 = t0;
    if (fixed || c->clock_fixed)
        rec->t1 = (int64_t)rec->ev.t1 + c->clock_offset;
    else /* a function of the local time alone: a record without duration (COMPLETE, START)
          * needs it once */
        rec->t1 = rec->ev.t1 == rec->ev.t0 ? rec->t0 : fc_rank_align(r, rec->ev.t1);
    if (rec->ev.peer < 0)
        rec->peer = rec->ev.peer;
    else if (rec->comm == 0 && (uint64_t)rec->ev.peer < c->world_size)
        rec->peer = c->world_ranks[rec->ev.peer];
    else
        rec->peer = fc_rank_peer_world(r, rec->comm, rec->ev.peer);
}

/* fc_cursor_next's work once the stream of the next record is chosen. With one 1, best is the
 * only stream, thread 0, which the record held in the codec already has (nothing sets it there).
 * t0 and fixed are derive's. */
static inline __attribute__((always_inline)) int take(fc_cursor *c, stream *best, fc_record *rec, int one, int64_t t0,
                                                      int fixed)
{
    rec->ev = *best->head;
    if (!one)
        rec->ev.thread = best->thread;
    int rc = advance(c, best);
    if (rc == 0 && (rc = join_request(c, rec)) == FC_ENOMEM)
        fc__err(rc, "%s: out of memory", c->r->pub.file);
    if (rc < 0) {
        c->one = NULL;
        return c->failed = rc;
    }
    derive(c, rec, t0, fixed);
    return 1;
}

/* The stream whose head comes first, NULL when none has one left. */
static stream *first_stream(const fc_cursor *c)
{
    stream *best = NULL;
    for (size_t k = 0; k < c->ns; k++)
        if (c->s[k].head != NULL && (best == NULL || c->s[k].head->t0 < best->head->t0))
            best = &c->s[k];
    return best;
}

/* fc_cursor_next's cases other than a record of a rank with one thread. */
static __attribute__((noinline)) int next_other(fc_cursor *c, fc_record *rec)
{
    if (c->failed)
        return c->failed;
    stream *best = first_stream(c);
    if (best == NULL)
        return 0;
    return take(c, best, rec, 0, align_t0(c, best->head->t0), 0);
}

int fc_cursor_next(fc_cursor *c, fc_record *rec)
{
    stream *s = c->one; /* most ranks have one thread */
    if (s != NULL)
        return take(c, s, rec, 1, align_t0(c, s->head->t0), 0);
    return next_other(c, rec);
}

int fc__cursor_peek(fc_cursor *c, int64_t *t0)
{
    if (c->failed)
        return c->failed;
    const stream *s = c->one != NULL ? c->one : first_stream(c);
    if (s == NULL)
        return 0;
    *t0 = align_t0(c, s->head->t0);
    return 1;
}

int fc__cursor_fill(fc_cursor *c, int64_t last, fc_record *recs, size_t max, size_t *n)
{
    size_t k = 0;
    int rc = 1;
    /* A rank with one thread, the common case, takes its records in a loop of its own: no choice
     * of stream, and no call per record; with a constant clock offset, no test of it either. Its
     * stream stays c->one while it has a head and take succeeds. */
    stream *s = c->one;
    if (s != NULL && c->clock_fixed) {
        for (int64_t off = c->clock_offset; k < max && s->head != NULL; k++) {
            int64_t t0 = (int64_t)s->head->t0 + off;
            if (t0 > last)
                goto out;
            if ((rc = take(c, s, &recs[k], 1, t0, 1)) < 0)
                goto out;
        }
    }
    for (; k < max; k++) {
        if (c->failed) {
            rc = c->failed;
            goto out;
        }
        stream *best = first_stream(c);
        if (best == NULL) {
            rc = 0;
            goto out;
        }
        int64_t t0 = align_t0(c, best->head->t0);
        if (t0 > last)
            goto out;
        if ((rc = take(c, best, &recs[k], 0, t0, 0)) < 0)
            goto out;
    }
    rc = 1;
out:
    *n = k;
    return rc < 0 ? rc : rc > 0;
}

/* ---- the merge of ranks: a binary heap of cursors keyed by their next record ------------------ */

typedef struct mslot {
    fc_cursor *c;
    fc_record rec;
} mslot;

struct fc_merge {
    mslot *h; /* heap of the cursors that still have a record */
    size_t n, all;
    fc_cursor **cursors;
    int failed;
};

static int before(const mslot *a, const mslot *b)
{
    if (a->rec.t0 != b->rec.t0)
        return a->rec.t0 < b->rec.t0;
    return a->rec.rank < b->rec.rank;
}

static void sift_down(fc_merge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < m->n && before(&m->h[l], &m->h[s]))
            s = l;
        if (r < m->n && before(&m->h[r], &m->h[s]))
            s = r;
        if (s == i)
            return;
        mslot tmp = m->h[i];
        m->h[i] = m->h[s];
        m->h[s] = tmp;
        i = s;
    }
}

int fc_merge_open(fc_trace *t, const size_t *ranks, size_t n, fc_merge **out)
{
    int rc = 0;
    fc_merge *m = calloc(1, sizeof *m);
    *out = NULL;
    if (ranks == NULL)
        n = t->nranks;
    if (m == NULL || (m->h = calloc(n ? n : 1, sizeof *m->h)) == NULL ||
        (m->cursors = calloc(n ? n : 1, sizeof *m->cursors)) == NULL) {
        rc = fc__err(FC_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if ((rc = fc_cursor_open(t, ranks ? ranks[i] : i, &m->cursors[i])) < 0)
            goto out;
        m->all = i + 1;
        mslot *s = &m->h[m->n];
        s->c = m->cursors[i];
        if ((rc = fc_cursor_next(s->c, &s->rec)) < 0)
            goto out;
        m->n += rc;
    }
    rc = 0;
    for (size_t i = m->n; i-- > 0;)
        sift_down(m, i);
out:
    if (rc < 0)
        fc_merge_close(m);
    else
        *out = m;
    return rc;
}

int fc_merge_next(fc_merge *m, fc_record *rec)
{
    if (m->failed)
        return m->failed;
    if (m->n == 0)
        return 0;
    *rec = m->h[0].rec;
    int rc = fc_cursor_next(m->h[0].c, &m->h[0].rec);
    if (rc < 0)
        return m->failed = rc;
    if (rc == 0)
        m->h[0] = m->h[--m->n];
    sift_down(m, 0);
    return 1;
}

void fc_merge_close(fc_merge *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->all; i++)
        fc_cursor_close(m->cursors[i]);
    free(m->cursors);
    free(m->h);
    free(m);
}
