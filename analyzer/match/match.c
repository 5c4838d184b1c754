/* analyzer/match/match.c: pairs every send of a trace with its receive and builds the flows of flow.h.
 *
 * The ranks' events are read once, all ranks together in order of aligned time (fc_merge), into
 * one small record per message instance: blocking sends and receives, nonblocking posts joined to
 * their completions through the reader's request ids, each Start of a persistent request, both
 * halves of a Sendrecv, Mrecv and Imrecv. A receive's envelope is resolved through its status (the
 * actual source and tag), so that matching is MPI's ordered match on (communicator, source,
 * destination, tag): the k-th send posted with that key meets the k-th receive posted with it.
 * Each key is a channel with a queue of sends and a queue of receives in posting order; a pair
 * leaves as soon as both its instances are complete, and no earlier wildcard receive of the
 * receiving rank is still unresolved (it could yet take the send). So the instances held are the
 * messages in flight, not the trace: O(1) per message with hashing, and memory bounded by what is
 * outstanding at one time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/internal.h"
#include "trace/cursor.h"
#include "match/match.h"

/* Flags of a message instance. */
enum {
    MF_DONE = 0x01,      /* its completion was seen: end is known */
    MF_WILD = 0x02,      /* a receive whose source or tag is still a wildcard */
    MF_CANCELLED = 0x04, /* completed as cancelled: it matched nothing */
    MF_SYNC = 0x08,      /* a synchronous send (Ssend family): always waits for the receive */
    MF_STATUS = 0x10,    /* a receive whose bytes are the ones actually received */
    MF_WAITED = 0x20,    /* wait_t0 names a call that waited for it */
    MF_LIVE = 0x40,      /* the pool entry is in use */
    MF_SEND = 0x80,      /* a send (else a receive) */
    MF_SOLE = 0x100,     /* the only message of its call (blocking Send, Recv...): its wait is
                            the call's, with no per-call entry to keep */
    MF_FINAL = 0x200,    /* not complete, and never will be: its rank's records are all read */
    MF_BUFFERED = 0x400, /* a buffered send (send_flags): never a Late Receiver */
};

/* One send or receive instance. Times are aligned ns (rank 0's clock). */
typedef struct msg {
    uint64_t comm;        /* global communicator key (comm_key) */
    uint32_t src, dst;    /* world ranks */
    int64_t tag;
    uint64_t bytes;
    uint64_t seq;         /* posting order on its own rank */
    int64_t post, end;    /* post (call entry) and completion (exit of the completing call) */
    int64_t wait_t0;      /* entry of the call that waited for it (blocking: the call itself) */
    uint64_t site, wait_site;
    uint32_t kind, flags;
    uint32_t chan;        /* the channel it waits in, once enqueue queues it; NOCHAN for an
                             unresolved wildcard receive, which waits in none */
    uint64_t req;         /* the request id it is bound to until complete, or 0 */
    uint32_t call;        /* its entry in the table of waiting calls (MF_WAITED, not MF_SOLE) */
    uint32_t next;        /* the instance after it in its channel's queue (chan), while it waits
                             there, NOMSG at the tail; once free, the next free one (matcher) */
    uint32_t pad_[3];     /* to 128 bytes: an index becomes an offset by one shift */
} msg;

#define NOCHAN UINT32_MAX
/* Records read from a rank at a time (fc__cursor_fill): a window rarely holds more of one rank,
 * so that most ranks take theirs in one call. On the 10^7-event bench trace, 128 took 2-4 % less
 * CPU than 32 (three runs of 16 paired rounds), the same as 512, and 8 took 10 % more. */
#define NRECS 128
#define NOMSG UINT32_MAX

/* The last call of one thread, which the COMPLETE and START sub-records that follow belong to. */
typedef struct thr {
    uint32_t kind;
    uint32_t call; /* its entry in the table of waiting calls + 1, or 0: a hint, checked before use
                      (another thread's call with the same site and t0 shares the entry) */
    int64_t t0, t1;
    uint64_t site;
} thr;

/* A persistent request's arguments, kept from its *_init until Request_free. */
typedef struct tmpl {
    int used;
    msg m;
} tmpl;

/* A request id's entry: the instance it posted (slot maps) or its template's index in the rank's
 * tpl array (tmpls maps). */
struct rent {
    uint64_t req; /* 0: an empty entry (ids start at 1) */
    uint64_t ord; /* slot maps: its place in the order of insertion (slotmap) */
    uint32_t ix;
};

typedef struct rmap {
    struct rent *e;
    size_t n, cap;
} rmap;

/* The outstanding nonblocking requests of a rank, by id. The reader numbers a rank's requests 1, 2,
 * 3 ... as they are posted, and most complete soon after: the entry of an id is e[req & (cap - 1)],
 * found without a hash or a probe, unless a younger id has needed its place while it was still
 * outstanding, which moved it to a hash map apart (spill, NULL while empty). */
typedef struct slotmap {
    struct rent *e;
    rmap *spill;
    uint32_t cap; /* a power of 2, at least twice n once an entry is in (1, then 16, 32 ...) */
    uint32_t n;   /* the entries, in e and spill */
} slotmap;

/* What one rank's pass needs besides the global vectors. */
typedef struct rstate {
    const fc_rank *r;
    uint32_t rank;         /* r->info.rank, its index in the per-rank arrays (below world) */
    uint64_t *ckeys;       /* comm key by comm id */
    size_t nckeys;
    slotmap slot;          /* outstanding nonblocking requests: their instance */
    rmap tmpls;            /* persistent requests: their arguments, until Request_free */
    tmpl *tpl;             /* the arguments, in reused entries (free ones listed) */
    uint32_t *tfree;
    size_t ntpl, ctpl, ntfree, ctfree;
    thr *thr;
    size_t nthr;
    uint64_t seq;
    /* Wildcard receives not resolved yet, in posting order: (instance, seq), the first ones
     * possibly stale (resolved since; checked against the instance). */
    struct wild {
        uint32_t m;
        uint64_t seq;
    } *wild;
    size_t wh, wn, wcap;
    uint32_t *blocked; /* channels whose head receive waits for one of those */
    size_t nblocked, cblocked;
    /* The posts of its sends waiting in channels, sorted by post: pq[ph .. pn), the first ones
     * possibly stale (sends gone since). Their earliest bounds the start of every flow to come. */
    struct pend {
        int64_t post;
        uint32_t m;
        uint64_t seq;
    } *pq;
    size_t ph, pn, pcap;
    int ended;         /* its records are all read: it posts and completes nothing more */
    int live;          /* it has a file (r) and has not ended: it still posts and completes */
    uint32_t nopen;    /* its open calls (pairing): most calls close with none to find (a closed one
                          still live has messages in flight, so closing it again does nothing);
                          256 bytes in all, so that an index becomes an offset by one shift */
} rstate;

const char *fc__unmatched_reason(uint32_t reason)
{
    switch (reason) {
#define FC__X(name, num, text)                                                                     \
    case num:                                                                                      \
        return text;
        FC_UNMATCHED_REASONS(FC__X)
#undef FC__X
    }
    return "unknown";
}

/* FNV-1a over 64-bit words: a communicator is named globally by its kind, member lists and ordinal
 * (format.h, COMMS), and 64 bits keep distinct communicators apart with overwhelming probability. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t list_hash(uint64_t h, const uint32_t *m, uint32_t n)
{
    h = mix(h, n);
    for (uint32_t i = 0; i < n; i++)
        h = mix(h, m[i]);
    return h;
}

/* list_hash(mix(FNV basis, 1), {0, 1 .. n - 1}, n): the member list of every rank's
 * MPI_COMM_WORLD. Each rank file defines it, so hashing it for each rank took O(ranks^2)
 * multiplications, a tenth of the analysis of 4096 ranks; it is hashed once per size, and the
 * lists are only compared. */
static uint64_t world_list_hash(uint32_t n)
{
    static _Thread_local uint32_t memo_n;
    static _Thread_local uint64_t memo_h;
    static _Thread_local int memo_set;
    if (!memo_set || memo_n != n) {
        uint64_t h = mix(mix(0xcbf29ce484222325ull, 1), n);
        for (uint32_t i = 0; i < n; i++)
            h = mix(h, i);
        memo_n = n;
        memo_h = h;
        memo_set = 1;
    }
    return memo_h;
}

static int is_identity(const uint32_t *m, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (m[i] != i)
            return 0;
    return 1;
}

/* The global key of a communicator definition. An inter-communicator's two sides see their groups
 * swapped, so the pair is hashed in a fixed order; its ordinal counts per local group and may differ
 * between the sides, so it is left out. */
static uint64_t comm_key(const fc_comm *c)
{
    uint64_t h = 0xcbf29ce484222325ull;
    if (c->flags & FC_COMMF_INTER) {
        uint64_t a = list_hash(1, c->local, c->local_size), b = list_hash(1, c->remote, c->remote_size);
        return mix(mix(mix(h, 2), a < b ? a : b), a < b ? b : a);
    }
    uint64_t l = is_identity(c->local, c->local_size) ? world_list_hash(c->local_size)
                                                       : list_hash(mix(h, 1), c->local, c->local_size);
    return mix(l, (uint64_t)c->ordinal);
}

/* The key of an undefined communicator: MPI_COMM_WORLD as the list 0 .. size-1 with ordinal 0 (what
 * a definition would give), anything else private to its rank so that it matches nothing. */
static uint64_t undefined_key(const fc_rank *r, uint64_t id)
{
    uint64_t h = mix(0xcbf29ce484222325ull, 1);
    if (id == 0)
        return mix(world_list_hash(r->info.size), 0);
    if (id == 1)
        return mix(mix(mix(h, 1), r->info.rank), 0);
    return mix(mix(mix(h, 3), r->info.rank), id);
}

uint64_t fc__comm_key(const fc_rank *r, uint64_t id)
{
    const fc_comm *c = fc_rank_comm(r, id);
    return c ? comm_key(c) : undefined_key(r, id);
}

int fc__comm_keys(const fc_rank *r, uint64_t **keys, size_t *n)
{
    size_t m = 2;
    for (size_t i = 0; i < r->ncomms; i++)
        if (r->comms[i].id + 1 > m)
            m = r->comms[i].id + 1;
    uint64_t *k = malloc(m * sizeof *k);
    if (k == NULL)
        return FC_ENOMEM;
    for (size_t id = 0; id < m; id++)
        k[id] = fc__comm_key(r, id);
    *keys = k;
    *n = m;
    return 0;
}

static int rank_keys(rstate *s)
{
    return fc__comm_keys(s->r, &s->ckeys, &s->nckeys);
}

static uint64_t key_of(const rstate *s, uint64_t id)
{
    return id < s->nckeys ? s->ckeys[id] : undefined_key(s->r, id);
}

/* ---- requests: the outstanding ones by id ----------------------------------------------------- */

/* Request ids grow over the whole run (the reader gives each post a new one), while only a few
 * requests are outstanding at a time: a hash table keyed by id holds just those. */
static uint64_t req_hash(uint64_t req)
{
    req *= 0x9E3779B97F4A7C15ull;
    return req ^ (req >> 29);
}

/* The table of a map that never held an entry: one empty slot, never written (rmap_put and
 * slot_put grow it first), so that lookups need no test of their own. */
static struct rent rmap_none[1];

static void rmap_init(rmap *m)
{
    m->e = rmap_none;
    m->n = 0;
    m->cap = 1;
}

static void rmap_free(rmap *m)
{
    if (m->e != rmap_none)
        free(m->e);
}

/* The entry of req in m, or NULL. */
static struct rent *rmap_get(rmap *m, uint64_t req)
{
    for (size_t j = req_hash(req) & (m->cap - 1); m->e[j].req; j = (j + 1) & (m->cap - 1))
        if (m->e[j].req == req)
            return &m->e[j];
    return NULL;
}

/* rmap_put's entry for req, absent from m, when the table must grow first. */
static __attribute__((noinline)) struct rent *rmap_grow(rmap *m, uint64_t req)
{
    size_t ncap = m->cap > 1 ? 2 * m->cap : 64;
    struct rent *t = calloc(ncap, sizeof *t);
    if (t == NULL)
        return NULL;
    for (size_t i = 0; i < m->cap; i++)
        if (m->e[i].req) {
            size_t k = req_hash(m->e[i].req) & (ncap - 1);
            while (t[k].req)
                k = (k + 1) & (ncap - 1);
            t[k] = m->e[i];
        }
    rmap_free(m);
    m->e = t;
    m->cap = ncap;
    size_t j = req_hash(req) & (m->cap - 1);
    while (m->e[j].req)
        j = (j + 1) & (m->cap - 1);
    m->e[j].req = req;
    m->n++;
    return &m->e[j];
}

/* The entry of req in m, added when absent (its ix for the caller to set); NULL when out of
 * memory. */
static inline __attribute__((always_inline)) struct rent *rmap_put(rmap *m, uint64_t req)
{
    /* One probe finds the entry or the empty one where it goes, unless the table must grow. */
    size_t j;
    for (j = req_hash(req) & (m->cap - 1); m->e[j].req; j = (j + 1) & (m->cap - 1))
        if (m->e[j].req == req)
            return &m->e[j];
    if (2 * (m->n + 1) > m->cap)
        return rmap_grow(m, req);
    m->e[j].req = req;
    m->n++;
    return &m->e[j];
}

/* Removes entry e of m, moving the entries after it back into the hole. */
static inline __attribute__((always_inline)) void rmap_del(rmap *m, struct rent *e)
{
    size_t mask = m->cap - 1, i = (size_t)(e - m->e);
    for (size_t k = i;;) {
        k = (k + 1) & mask;
        if (m->e[k].req == 0)
            break;
        size_t home = req_hash(m->e[k].req) & mask;
        if (i <= k ? (i < home && home <= k) : (i < home || home <= k))
            continue;
        m->e[i] = m->e[k];
        i = k;
    }
    m->e[i].req = 0;
    m->n--;
}

static void slot_init(slotmap *m)
{
    m->e = rmap_none;
    m->spill = NULL;
    m->cap = 1;
    m->n = 0;
}

static void slot_free(slotmap *m)
{
    if (m->e != rmap_none)
        free(m->e);
    if (m->spill != NULL)
        rmap_free(m->spill);
    free(m->spill);
}

/* The entry of req (not 0) in m, or NULL. */
static inline __attribute__((always_inline)) struct rent *slot_get(slotmap *m, uint64_t req)
{
    struct rent *e = &m->e[req & (m->cap - 1)];
    if (e->req == req)
        return e;
    return m->spill != NULL ? rmap_get(m->spill, req) : NULL;
}

static int cmp_rent_ord(const void *a, const void *b)
{
    const struct rent *x = *(const struct rent *const *)a, *y = *(const struct rent *const *)b;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* The n entries of m, into v[], in the order they were put in (ord): the order in which their
 * requests were posted. */
static void slot_list(const slotmap *m, struct rent **v)
{
    size_t n = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->e[i].req)
            v[n++] = &m->e[i];
    for (size_t i = 0; m->spill != NULL && i < m->spill->cap; i++)
        if (m->spill->e[i].req)
            v[n++] = &m->spill->e[i];
    fc__sort(v, n, sizeof *v, cmp_rent_ord);
}

/* slot_put's rare cases: req present already, or in the spill, or a ring to grow first, or a
 * place taken by an older request. */
static __attribute__((noinline)) struct rent *slot_put_slow(slotmap *m, uint64_t req, uint64_t ord)
{
    struct rent *e = slot_get(m, req);
    if (e != NULL)
        return e;
    if (2 * ((size_t)m->n + 1) > m->cap) {
        size_t ncap = m->cap > 1 ? 2 * (size_t)m->cap : 16;
        struct rent *t = ncap <= UINT32_MAX / 2 ? calloc(ncap, sizeof *t) : NULL;
        if (t == NULL)
            return NULL;
        for (size_t i = 0; i < m->cap; i++)
            if (m->e[i].req)
                t[m->e[i].req & (ncap - 1)] = m->e[i]; /* apart modulo cap, so apart modulo ncap */
        if (m->e != rmap_none)
            free(m->e);
        m->e = t;
        m->cap = (uint32_t)ncap;
    }
    e = &m->e[req & (m->cap - 1)];
    if (e->req) {
        if (m->spill == NULL) {
            if ((m->spill = malloc(sizeof *m->spill)) == NULL)
                return NULL;
            rmap_init(m->spill);
        }
        struct rent *o = rmap_put(m->spill, e->req);
        if (o == NULL)
            return NULL;
        *o = *e;
    }
    e->req = req;
    e->ord = ord;
    m->n++;
    return e;
}

/* The entry of req (not 0) in m, added when absent with order ord, which is larger than any given
 * before (its ix for the caller to set); NULL when out of memory. */
static inline __attribute__((always_inline)) struct rent *slot_put(slotmap *m, uint64_t req, uint64_t ord)
{
    struct rent *e = &m->e[req & (m->cap - 1)];
    if (e->req != 0 || m->spill != NULL || 2 * (m->n + 1) > m->cap)
        return slot_put_slow(m, req, ord);
    e->req = req;
    e->ord = ord;
    m->n++;
    return e;
}

/* Removes entry e of m. */
static inline __attribute__((always_inline)) void slot_del(slotmap *m, struct rent *e)
{
    m->n--;
    if (e == &m->e[e->req & (m->cap - 1)]) {
        e->req = 0;
        return;
    }
    rmap_del(m->spill, e);
    if (m->spill->n == 0) {
        rmap_free(m->spill);
        free(m->spill);
        m->spill = NULL;
    }
}

/* The template of persistent request req on rank s, made (zeroed) when new; NULL when out of
 * memory. */
static tmpl *tmpl_put(rstate *s, uint64_t req)
{
    struct rent *e = rmap_get(&s->tmpls, req);
    if (e == NULL) {
        uint32_t ix;
        if (s->ntfree > 0)
            ix = s->tfree[--s->ntfree];
        else {
            size_t c = s->ctpl;
            if (s->ntpl >= UINT32_MAX || fc__reserve(&s->tpl, &c, s->ntpl + 1, sizeof *s->tpl) ||
                fc__reserve(&s->tfree, &s->ctfree, c, sizeof *s->tfree))
                return NULL;
            s->ctpl = c;
            ix = (uint32_t)s->ntpl++;
        }
        if ((e = rmap_put(&s->tmpls, req)) == NULL) {
            s->tfree[s->ntfree++] = ix;
            return NULL;
        }
        e->ix = ix;
    }
    memset(&s->tpl[e->ix], 0, sizeof s->tpl[e->ix]);
    return &s->tpl[e->ix];
}

/* The state of thread t of rank s, not seen yet: the array grows. NULL when out of memory. */
static __attribute__((noinline)) thr *thread_new(rstate *s, uint32_t t)
{
    size_t n = (size_t)t + 1;
    thr *p = realloc(s->thr, n * sizeof *p);
    if (p == NULL)
        return NULL;
    memset(p + s->nthr, 0, (n - s->nthr) * sizeof *p);
    s->thr = p;
    s->nthr = n;
    return &s->thr[t];
}


/* The flags a send takes from its kind, looked up rather than tested kind by kind: MF_SYNC for the
 * synchronous ones (fc__is_sync_kind), MF_BUFFERED for the buffered ones, which return once their
 * data is copied and never wait for the receiver. Kinds are below FC_EV_MAX_ (the decoder rejects
 * others). */
static const uint16_t send_flags[FC_EV_MAX_] = {
    [FC_EV_MPI_Ssend] = MF_SYNC,      [FC_EV_MPI_Issend] = MF_SYNC,     [FC_EV_MPI_Ssend_init] = MF_SYNC,
    [FC_EV_MPI_Bsend] = MF_BUFFERED, [FC_EV_MPI_Ibsend] = MF_BUFFERED, [FC_EV_MPI_Bsend_init] = MF_BUFFERED,
};

/* Fills *m with the message a call describes, before it is posted. */
static inline __attribute__((always_inline)) void describe(msg *m, const rstate *s, const fc_record *rec, int send)
{
    /* Every field set but seq and chan (post's), without clearing the entry first. */
    m->comm = key_of(s, rec->comm);
    m->src = send ? rec->rank : (uint32_t)rec->peer;
    m->dst = send ? (uint32_t)rec->peer : rec->rank;
    m->tag = rec->ev.tag;
    m->bytes = rec->ev.bytes;
    m->post = rec->t0;
    m->end = rec->t1;
    m->wait_t0 = rec->t0;
    m->site = m->wait_site = rec->ev.site;
    m->kind = rec->ev.kind;
    /* req is post's to set, and call is read only once call_ref has set it (MF_WAITED without
     * MF_SOLE). */
    if (send)
        m->flags = send_flags[rec->ev.kind & (FC_EV_MAX_ - 1)];
    else
        m->flags = rec->peer == FC_PEER_ANY || rec->ev.tag == FC_TAG_ANY ? MF_WILD : 0;
}

/* 1 when the record's peer is a real partner; PROC_NULL is counted, unmapped peers dropped. */
static int real_peer(fc_match *res, const fc_record *rec, int send)
{
    if (rec->peer >= 0) /* the common case first: PROC_NULL and ANY are negative */
        return 1;
    if (rec->peer == FC_PEER_NULL) {
        res->proc_null++;
        return 0;
    }
    return !send && rec->peer == FC_PEER_ANY;
}

static int cmp_flow(const void *a, const void *b)
{
    const fc_flow *x = a, *y = b;
    if (x->intra != y->intra)
        return x->intra - y->intra;
#define CMP(f)                                                                                     \
    if (x->f != y->f)                                                                              \
        return x->f < y->f ? -1 : 1;
    /* Then the order of delivery (the id until the ids are given), the same in every analysis of
     * the trace, so that flows alike in all the above still get the same ids everywhere. */
    CMP(start) CMP(src_rank) CMP(dst_rank) CMP(end) CMP(send_start) CMP(id)
#undef CMP
    return 0;
}

/* Flow x before flow y of the array ctx, by index. */
static inline int flow_before(const void *ctx, uint32_t x, uint32_t y)
{
    const fc_flow *f = ctx;
    return cmp_flow(&f[x], &f[y]) < 0;
}

FC__MSORT(msort_flow_ix, uint32_t, flow_before)

/* Sorts flows[0..n) by cmp_flow. qsort sorted the 128-byte flows through pointers, calling
 * cmp_flow through a pointer for each of its n log n steps: a few per cent of an analysis with
 * predictions. Here their 32-bit indices are merge-sorted with the comparison inlined, and the
 * flows are then moved once, cycle by cycle. cmp_flow orders any two flows (their delivery order,
 * the id, breaks every tie), so the order is qsort's, which also does the sorting when the
 * indices find no memory (it then sorts in place) or would not fit in 32 bits. */
void fc__sort_flows(fc_flow *flows, size_t n)
{
    if (n < 2)
        return;
    uint32_t *ix = n <= UINT32_MAX ? malloc(2 * n * sizeof *ix) : NULL;
    if (ix == NULL) {
        fc__sort(flows, n, sizeof *flows, cmp_flow);
        return;
    }
    uint32_t *src = ix;
    for (size_t i = 0; i < n; i++)
        src[i] = (uint32_t)i;
    msort_flow_ix(src, ix + n, n, flows);
    /* src[r] is the flow that goes to place r: each cycle moves its flows up one place. */
    for (size_t i = 0; i < n; i++) {
        if (src[i] == i)
            continue;
        fc_flow tmp = flows[i];
        size_t j = i;
        while (src[j] != i) {
            size_t k = src[j];
            flows[j] = flows[k];
            src[j] = (uint32_t)j;
            j = k;
        }
        flows[j] = tmp;
        src[j] = (uint32_t)j;
    }
    free(ix);
}

static int cmp_unmatched(const void *a, const void *b)
{
    const fc_unmatched *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->post < y->post ? -1 : x->post > y->post;
}

/* A call that waited for messages (a blocking send or receive, a Wait*, a Sendrecv): a Waitall
 * that completes several receives waited for the latest of their sends only, so its messages' waits
 * take the maximum, not the sum. The call is summed into its site once its thread has moved on and
 * each of its messages has been paired or dropped. */
typedef struct wcall {
    uint32_t rank;
    uint64_t site;
    int64_t t0;
    uint64_t ord;  /* its place in the order of the calls' table (pairing) */
    uint32_t prev, next; /* neighbours in its rank's list of live calls, + 1 (0: none); once free,
                            next links the free entries (pairing) */
    double ls, lr;
    uint32_t refs; /* its messages still in flight */
    uint8_t open;  /* its thread has not started another call */
    uint8_t live;  /* in the table (else on the free list) */
} wcall;

static int cmp_site(const void *a, const void *b)
{
    const fc_wait_site *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->site > y->site) - (x->site < y->site);
}

/* Shared state of the pairing pass. */
typedef struct pairing {
    fc_match *res;
    const fc_match_sink *sink;
    int (*flow)(void *arg, const fc_flow *f); /* the sink's, at hand */
    void *arg;
    int64_t origin;
    size_t nunm_cap;
    uint64_t *unc;  /* clock uncertainty (ns) per world rank */
    /* Calls with waiting messages: dense entries (free ones listed), listed per rank. Those still
     * open at the end are summed in the slot order of a linear-probing table on call_hash (index +
     * 1 by (rank, site, t0), growing by doubling from 256 slots while no more than half full): the
     * order of addition decides the last bits of a rank's sums, and the results stay the ones that
     * table has always given. That table is not kept: with
     * deletions that move the entries after the hole back, its layout is the one its live entries
     * give when inserted afresh in their order of insertion (ord), which call_order rebuilds when it
     * would have grown (its rehash inserts in slot order) and at the end. Lookups go by the rank's
     * list, and only when a call's t0 is not past every call the rank made (rmax). */
    wcall *calls;
    size_t ncalls, ccalls;
    uint32_t cfree1;     /* the first free entry + 1, the others linked through wcall.next (0: none) */
    size_t ctcap, clive; /* the table's capacity; the live calls */
    uint64_t cord;       /* the next ord */
    uint32_t *rhead;     /* per world rank (a call's rank is the one whose record made it, below
                            world): its latest live call + 1 */
    int64_t *rmax;       /* per the same: no live call of the list has a larger t0 */
    rstate *st;      /* the matcher's, by world rank: their open calls (nopen) */
    /* Wait-state rows of res->sites by (rank, site), the same way. */
    uint32_t *stab;
    size_t stcap, scap;
    uint32_t *slast; /* per world rank: index + 1 of the row of its latest wait, or 0 */
    int nomem; /* a call could not be summed for want of memory */
} pairing;

static double secs(const pairing *p, int64_t ns)
{
    return (double)(ns - p->origin) * 1e-9;
}

static int add_unmatched(pairing *p, const msg *m, int send, uint32_t reason)
{
    fc_match *res = p->res;
    if (fc__grow((void **)&res->unmatched, &res->nunmatched, &p->nunm_cap, sizeof *res->unmatched) < 0)
        return FC_ENOMEM;
    fc_unmatched *u = &res->unmatched[res->nunmatched++];
    u->send = send;
    u->rank = send ? m->src : m->dst;
    u->peer = send ? (int64_t)m->dst : (m->flags & MF_WILD) ? FC_PEER_ANY : (int64_t)m->src;
    u->tag = m->tag;
    u->bytes = m->bytes;
    u->kind = m->kind;
    u->site = m->site;
    u->post = secs(p, m->post);
    if (reason == FC_UNMATCHED_NO_PARTNER) {
        uint32_t peer = send ? m->dst : m->src;
        if ((send || !(m->flags & MF_WILD)) && (peer >= res->world || res->rank_node[peer] == FC_NODE_NONE))
            reason = FC_UNMATCHED_NO_PEER_FILE;
    }
    u->reason = reason;
    if (send)
        res->unmatched_sends++;
    else
        res->unmatched_recvs++;
    return 0;
}

static uint64_t call_hash(uint32_t rank, uint64_t site, int64_t t0)
{
    uint64_t h = ((uint64_t)rank * 0x9E3779B97F4A7C15ull) ^ (site + 0x632BE59BD9B4E019ull);
    h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull ^ (uint64_t)t0;
    return (h ^ (h >> 32)) * 0x94D049BB133111EBull;
}

/* Places index i of an entry with hash h in table t (capacity cap, a power of 2). */
static void tab_put(uint32_t *t, size_t cap, uint64_t h, uint32_t i)
{
    size_t j = h & (cap - 1);
    while (t[j])
        j = (j + 1) & (cap - 1);
    t[j] = i + 1;
}

/* Removes index i (hash h) from table t, moving the entries after it back into the hole: the
 * tables are linear-probed, without tombstones. home(ctx, ix) is the hash of entry ix, a call
 * made direct by inlining. */
static inline __attribute__((always_inline)) void tab_del(uint32_t *t, size_t cap, uint64_t h, uint32_t i,
                                                          uint64_t (*home)(const void *ctx, uint32_t ix),
                                                          const void *ctx)
{
    size_t mask = cap - 1, j = h & mask;
    while (t[j] != i + 1)
        j = (j + 1) & mask;
    for (size_t k = j;;) {
        k = (k + 1) & mask;
        if (t[k] == 0)
            break;
        size_t at = home(ctx, t[k] - 1) & mask;
        /* The entry at k stays when its home lies cyclically in (j, k]. */
        if (j <= k ? (j < at && at <= k) : (j < at || at <= k))
            continue;
        t[j] = t[k];
        j = k;
    }
    t[j] = 0;
}

/* 1 when entry i is the live call (rank, site, t0). */
static int call_is(const pairing *p, uint32_t i, uint32_t rank, uint64_t site, int64_t t0)
{
    const wcall *c = &p->calls[i];
    return c->live && c->rank == rank && c->site == site && c->t0 == t0;
}

/* The entry of call (rank, site, t0), or NOMSG. */
static inline __attribute__((always_inline)) uint32_t call_find(const pairing *p, uint32_t rank, uint64_t site,
                                                                int64_t t0)
{
    if (p->rhead[rank] == 0 || t0 > p->rmax[rank])
        return NOMSG;
    for (uint32_t i = p->rhead[rank]; i != 0; i = p->calls[i - 1].next) {
        const wcall *c = &p->calls[i - 1];
        if (c->rank == rank && c->site == site && c->t0 == t0)
            return i - 1;
    }
    return NOMSG;
}

struct cord {
    uint64_t ord;
    uint32_t i;
};

static int cmp_cord(const void *a, const void *b)
{
    const struct cord *x = a, *y = b;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* Puts the n live calls ix[] in the slot order of the calls' table (pairing) at its present
 * capacity; with renumber, their ord follows that order from now on (the table grows: its rehash
 * inserts in that order). 0 or FC_ENOMEM. */
static int call_order(pairing *p, uint32_t *ix, size_t n, int renumber)
{
    size_t cap = p->ctcap;
    struct cord *o = malloc((n + 1) * sizeof *o);
    uint32_t *t = calloc(cap ? cap : 1, sizeof *t);
    if (o == NULL || t == NULL) {
        free(o);
        free(t);
        return FC_ENOMEM;
    }
    for (size_t k = 0; k < n; k++)
        o[k] = (struct cord){p->calls[ix[k]].ord, ix[k]};
    fc__sort(o, n, sizeof *o, cmp_cord);
    for (size_t k = 0; k < n; k++) {
        const wcall *c = &p->calls[o[k].i];
        tab_put(t, cap, call_hash(c->rank, c->site, c->t0), o[k].i);
    }
    n = 0;
    for (size_t j = 0; j < cap; j++)
        if (t[j]) {
            ix[n++] = t[j] - 1;
            if (renumber)
                p->calls[t[j] - 1].ord = p->cord++;
        }
    free(o);
    free(t);
    return 0;
}

/* The live calls, in ix[] (room for clive), in the table's slot order (call_order). 0 or
 * FC_ENOMEM. */
static int call_live(pairing *p, uint32_t *ix, int renumber)
{
    size_t n = 0;
    for (size_t i = 0; i < p->ncalls; i++)
        if (p->calls[i].live)
            ix[n++] = (uint32_t)i;
    return call_order(p, ix, n, renumber);
}

/* The entry of call (rank, site, t0), made when absent; NOMSG when out of memory. */
static __attribute__((noinline)) uint32_t call_make(pairing *p, uint32_t rank, uint64_t site, int64_t t0)
{
    uint32_t i = call_find(p, rank, site, t0), l = rank; /* its list in rhead and rmax */
    if (i != NOMSG)
        return i;
    if (2 * (p->clive + 1) > p->ctcap) {
        /* The table's rehash inserts its entries in the order of its old slots. */
        uint32_t *ix = malloc((p->clive + 1) * sizeof *ix);
        if (ix == NULL || call_live(p, ix, 1) < 0) {
            free(ix);
            return NOMSG;
        }
        free(ix);
        p->ctcap = p->ctcap ? 2 * p->ctcap : 256;
    }
    if (p->cfree1 != 0) {
        i = p->cfree1 - 1;
        p->cfree1 = p->calls[i].next;
    } else {
        if (p->ncalls >= NOMSG - 1 || fc__reserve_lines(&p->calls, &p->ccalls, p->ncalls + 1, sizeof *p->calls) < 0)
            return NOMSG;
        i = (uint32_t)p->ncalls++;
    }
    p->calls[i] = (wcall){.rank = rank, .site = site, .t0 = t0, .ord = p->cord++, .next = p->rhead[l], .open = 1,
                          .live = 1};
    if (p->rhead[l] != 0)
        p->calls[p->rhead[l] - 1].prev = i + 1;
    p->rhead[l] = i + 1;
    if (p->calls[i].next == 0 || t0 > p->rmax[l])
        p->rmax[l] = t0;
    p->clive++;
    p->st[rank].nopen++;
    return i;
}

static inline __attribute__((always_inline)) int site_add(pairing *p, uint32_t rank, uint64_t site, double ls,
                                                          double lr);

/* Adds call i to the wait states of its site and forgets it. */
static int call_flush(pairing *p, uint32_t i)
{
    wcall *c = &p->calls[i];
    uint32_t prev = c->prev, next = c->next;
    if (prev != 0)
        p->calls[prev - 1].next = next;
    else
        p->rhead[c->rank] = next;
    if (next != 0)
        p->calls[next - 1].prev = prev;
    c->live = 0;
    c->next = p->cfree1;
    p->cfree1 = i + 1;
    p->clive--;
    return site_add(p, c->rank, c->site, c->ls, c->lr);
}

/* The row of site (rank, site) in res->sites, made when new; NULL when out of memory. */
static fc_wait_site *site_row(pairing *p, uint32_t rank, uint64_t site)
{
    fc_match *res = p->res;
    uint64_t h = call_hash(rank, site, 0);
    size_t k = p->stcap ? h & (p->stcap - 1) : 0;
    for (; p->stcap && p->stab[k]; k = (k + 1) & (p->stcap - 1)) {
        fc_wait_site *d = &res->sites[p->stab[k] - 1];
        if (d->rank == rank && d->site == site)
            return d;
    }
    if (2 * (res->nsites + 1) > p->stcap) {
        size_t ncap = p->stcap ? 2 * p->stcap : 64;
        uint32_t *t = calloc(ncap, sizeof *t);
        if (t == NULL)
            return NULL;
        for (size_t q = 0; q < res->nsites; q++)
            tab_put(t, ncap, call_hash(res->sites[q].rank, res->sites[q].site, 0), (uint32_t)q);
        free(p->stab);
        p->stab = t;
        p->stcap = ncap;
    }
    if (fc__grow((void **)&res->sites, &res->nsites, &p->scap, sizeof *res->sites) < 0)
        return NULL;
    fc_wait_site *d = &res->sites[res->nsites];
    memset(d, 0, sizeof *d);
    d->rank = rank;
    d->site = site;
    tab_put(p->stab, p->stcap, h, (uint32_t)res->nsites++);
    return d;
}

/* Adds one call's wait states (ls, lr seconds) to its site and rank. A rank's waits mostly come
 * from the site of its previous one: that row is remembered per rank (rows keep their index until
 * the final sort), and the table only asked on a change of site. */
static inline __attribute__((always_inline)) int site_add(pairing *p, uint32_t rank, uint64_t site, double ls,
                                                          double lr)
{
    fc_match *res = p->res;
    if (ls <= 0 && lr <= 0)
        return 0;
    /* The rank that waited is the one whose record posted or completed the message: below world. */
    fc_wait_site *d;
    uint32_t last = p->slast[rank];
    if (last != 0 && res->sites[last - 1].site == site)
        d = &res->sites[last - 1];
    else {
        if ((d = site_row(p, rank, site)) == NULL)
            return FC_ENOMEM;
        p->slast[rank] = (uint32_t)(d - res->sites) + 1;
    }
    /* The waits are never negative, and the sums start at +0: a zero wait would leave them as
     * they are, and a call mostly waits one way only (add_wait's constant 0 drops the other). */
    if (ls > 0) {
        d->late_sender += ls;
        d->n_late_sender++;
        res->late_sender[rank] += ls;
    }
    if (lr > 0) {
        d->late_receiver += lr;
        d->n_late_receiver++;
        res->late_receiver[rank] += lr;
    }
    return 0;
}

/* The rank whose call waited for message m. */
static uint32_t waiter(const msg *m)
{
    return (m->flags & MF_SEND) ? m->src : m->dst;
}

/* Message m (just marked MF_WAITED) belongs to its waiting call until it leaves. rank is waiter(m),
 * the rank of the record at hand, given rather than chosen by side (a Waitall mixes sends and
 * receives). *memo is the thread's remembered entry of that call (thr.call), updated: a Waitall's
 * messages find it there. */
static inline __attribute__((always_inline)) int call_ref(pairing *p, msg *m, uint32_t rank, uint32_t *memo)
{
    uint32_t i = *memo - 1;
    if (*memo == 0 || !call_is(p, i, rank, m->wait_site, m->wait_t0)) {
        if ((i = call_make(p, rank, m->wait_site, m->wait_t0)) == NOMSG)
            return FC_ENOMEM;
        *memo = i + 1;
    }
    p->calls[i].refs++;
    m->call = i; /* stays valid while m holds the entry */
    return 0;
}

/* Message m leaves: its call is summed when nothing else holds it. */
static int call_unref(pairing *p, const msg *m)
{
    uint32_t i = m->call;
    if (--p->calls[i].refs == 0 && !p->calls[i].open)
        return call_flush(p, i);
    return 0;
}

/* The thread that made call (rank, site, t0) started another: no more messages join it. memo is
 * the thread's remembered entry (thr.call). */
static int call_close(pairing *p, uint32_t rank, uint64_t site, int64_t t0, uint32_t memo)
{
    uint32_t i = memo - 1;
    if (memo == 0 || !call_is(p, i, rank, site, t0)) {
        if (p->st[rank].nopen == 0)
            return 0;
        if ((i = call_find(p, rank, site, t0)) == NOMSG)
            return 0;
    }
    if (p->calls[i].open)
        p->st[rank].nopen--;
    p->calls[i].open = 0;
    return p->calls[i].refs == 0 ? call_flush(p, i) : 0;
}

/* ---- traffic between nodes ------------------------------------------------------------------- */

/* Up to this many nodes the sums are a matrix (2 x 8 MiB at most), the cheapest to add to; above,
 * a table of the pairs that talk, whose memory follows them and not the square of the nodes. A
 * variable, so that the tests take both ways on a few nodes (match.h). */
size_t fc__traffic_dense = 1024;

struct fc__traffic_acc {
    size_t nn;
    double *tb; /* dense: [s * nn + d] */
    uint64_t *tc;
    fc_traffic *cell; /* sparse: open addressing on (src, dst), count 0 for an empty cell */
    size_t cap, n;
};

static size_t traffic_home(uint32_t s, uint32_t d, size_t cap)
{
    uint64_t k = ((uint64_t)s << 32 | d) * 0x9E3779B97F4A7C15ull;
    return (size_t)(k ^ (k >> 29)) & (cap - 1);
}

static __attribute__((noinline)) int traffic_add_sparse(struct fc__traffic_acc *a, uint32_t s, uint32_t d,
                                                        double bytes)
{
    if (2 * (a->n + 1) > a->cap) { /* at most half full */
        size_t ncap = a->cap ? 2 * a->cap : 1024;
        fc_traffic *c = calloc(ncap, sizeof *c);
        if (c == NULL)
            return FC_ENOMEM;
        for (size_t i = 0; i < a->cap; i++)
            if (a->cell[i].count) {
                size_t h = traffic_home(a->cell[i].src, a->cell[i].dst, ncap);
                while (c[h].count)
                    h = (h + 1) & (ncap - 1);
                c[h] = a->cell[i];
            }
        free(a->cell);
        a->cell = c;
        a->cap = ncap;
    }
    size_t h = traffic_home(s, d, a->cap);
    while (a->cell[h].count && (a->cell[h].src != s || a->cell[h].dst != d))
        h = (h + 1) & (a->cap - 1);
    fc_traffic *c = &a->cell[h];
    if (c->count == 0) {
        *c = (fc_traffic){s, d, 0, 0};
        a->n++;
    }
    c->bytes += bytes;
    c->count++;
    return 0;
}

/* Adds a message of bytes from node s to node d. Returns 0 or FC_ENOMEM. */
static inline int traffic_add(struct fc__traffic_acc *a, uint32_t s, uint32_t d, double bytes)
{
    if (a->tb != NULL) {
        a->tb[s * a->nn + d] += bytes;
        a->tc[s * a->nn + d]++;
        return 0;
    }
    return traffic_add_sparse(a, s, d, bytes);
}

static int traffic_acc_new(fc_match *res)
{
    struct fc__traffic_acc *a = calloc(1, sizeof *a);
    if (a == NULL)
        return FC_ENOMEM;
    res->acc = a;
    a->nn = res->nnodes;
    if (a->nn <= fc__traffic_dense) {
        a->tb = calloc(a->nn * a->nn + 1, sizeof *a->tb);
        a->tc = calloc(a->nn * a->nn + 1, sizeof *a->tc);
        if (a->tb == NULL || a->tc == NULL)
            return FC_ENOMEM;
    }
    return 0;
}

static void traffic_acc_free(struct fc__traffic_acc *a)
{
    if (a == NULL)
        return;
    free(a->tb);
    free(a->tc);
    free(a->cell);
    free(a);
}

static int cmp_traffic(const void *x, const void *y)
{
    const fc_traffic *a = x, *b = y;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    return (a->dst > b->dst) - (a->dst < b->dst);
}

/* Turns the sums into res->traffic, in order, and counts the inter-node flows: those off the
 * diagonal, where each flow counts once. Returns 0 or FC_ENOMEM. */
static int traffic_finish(fc_match *res)
{
    struct fc__traffic_acc *a = res->acc;
    size_t n = 0;
    if (a->tb != NULL) {
        for (size_t i = 0; i < a->nn * a->nn; i++)
            n += a->tc[i] != 0;
    } else
        n = a->n;
    if ((res->traffic = malloc((n ? n : 1) * sizeof *res->traffic)) == NULL)
        return FC_ENOMEM;
    res->ntraffic = 0;
    if (a->tb != NULL) {
        for (size_t i = 0; i < a->nn * a->nn; i++)
            if (a->tc[i])
                res->traffic[res->ntraffic++] = (fc_traffic){(uint32_t)(i / a->nn), (uint32_t)(i % a->nn), a->tc[i], a->tb[i]};
    } else {
        for (size_t i = 0; i < a->cap; i++)
            if (a->cell[i].count)
                res->traffic[res->ntraffic++] = a->cell[i];
        qsort(res->traffic, res->ntraffic, sizeof *res->traffic, cmp_traffic);
    }
    res->ninter = res->nflows;
    for (size_t i = 0; i < res->ntraffic; i++)
        if (res->traffic[i].src == res->traffic[i].dst)
            res->ninter -= res->traffic[i].count;
    traffic_acc_free(a);
    res->acc = NULL;
    return 0;
}

/* A message waited ls (Late Sender) or lr (Late Receiver) seconds in its call. */
static inline __attribute__((always_inline)) int add_wait(pairing *p, const msg *m, double ls, double lr)
{
    if (m->flags & MF_SOLE)
        return site_add(p, waiter(m), m->wait_site, ls, lr);
    wcall *c = &p->calls[m->call];
    c->ls = ls > c->ls ? ls : c->ls;
    c->lr = lr > c->lr ? lr : c->lr;
    return 0;
}

/* Turns a matched pair into a flow and its wait states; an incomplete receive is reported instead
 * (rdone: the caller has seen it complete). */
static inline __attribute__((always_inline)) int pair(pairing *p, const msg *s, const msg *r, int rdone)
{
    fc_match *res = p->res;
    if (!rdone && !(r->flags & MF_DONE))
        return add_unmatched(p, r, 0, FC_UNMATCHED_INCOMPLETE);
    fc_flow fl, *f = &fl; /* every field set below */
    f->id = res->nflows; /* the order of delivery */
    f->src_rank = s->src;
    f->dst_rank = r->dst;
    /* A send's source and a receive's destination are the ranks that posted them: below world. */
    f->src_node = res->rank_node[s->src];
    f->dst_node = res->rank_node[r->dst];
    f->bytes = (r->flags & MF_STATUS) ? r->bytes : s->bytes;
    /* A send whose completion was never seen (freed, or still pending at the end) ends as it starts. */
    int64_t send_end = (s->flags & MF_DONE) ? s->end : s->post;
    f->send_start = secs(p, s->post);
    f->send_end = secs(p, send_end);
    f->recv_post = secs(p, r->post);
    f->recv_end = secs(p, r->end);
    f->rendezvous = f->bytes >= res->eager_threshold;
    /* The tests below depend on the timing of each message: they are computed as values (bitwise
     * &, no early exit), leaving one branch where there were several unpredictable ones. */
    int64_t start = f->rendezvous & (r->post > s->post) ? r->post : s->post;
    f->start = secs(p, start);
    f->end = f->recv_end;
    f->observed = f->end - f->start;
    f->tag = r->tag;
    f->send_kind = s->kind;
    f->recv_kind = r->kind;
    f->send_site = s->site;
    f->recv_site = r->site;
    f->intra = f->src_node == f->dst_node;
    /* Both ranks have files (they posted), so both have nodes. */
    if (traffic_add(res->acc, f->src_node, f->dst_node, (double)f->bytes) < 0)
        return FC_ENOMEM;
    if (r->end < s->post) {
        double v = (double)(s->post - r->end) * 1e-9;
        /* The order of delivery stands in for the id until the ids are given. */
        if (res->clock_violations == 0 || v > res->worst_violation) {
            res->worst_violation = v;
            res->worst_flow = f->id;
            res->worst_src = f->src_rank;
            res->worst_dst = f->dst_rank;
            res->worst_send = f->send_start;
        }
        res->clock_violations++;
        uint64_t unc = (s->src < res->world ? p->unc[s->src] : 0) + (r->dst < res->world ? p->unc[r->dst] : 0);
        if ((uint64_t)(s->post - r->end) > unc)
            res->clock_violations_beyond++;
    }
    /* Late Sender: the receive (or the wait on it) entered before the send was posted, and waited
     * until that post or its own end. */
    int64_t ls = (s->post < r->end ? s->post : r->end) - r->wait_t0;
    if (((r->flags & MF_WAITED) != 0) & (ls > 0)) {
        int rc = add_wait(p, r, (double)ls * 1e-9, 0);
        if (rc < 0)
            return rc;
    }
    /* Late Receiver: a send that must wait for the receive, entered before the receive was posted. */
    int64_t lr = (r->post < s->end ? r->post : s->end) - s->wait_t0;
    int waits = ((s->flags & MF_SYNC) != 0) | (f->rendezvous & !(s->flags & MF_BUFFERED));
    if (waits & ((s->flags & MF_WAITED) != 0) & (lr > 0)) {
        int rc = add_wait(p, s, 0, (double)lr * 1e-9);
        if (rc < 0)
            return rc;
    }
    res->nflows++; /* ninter is counted at the end, from the traffic */
    return p->flow(p->arg, f);
}

/* Numbers the nodes in order of first appearance by world rank. */
static int number_nodes(fc_trace *t, fc_match *res)
{
    size_t cap = 0;
    for (uint32_t w = 0; w < res->world; w++)
        res->rank_node[w] = FC_NODE_NONE;
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        char buf[32];
        const char *name = r->info.node[0] ? r->info.node : r->info.host;
        if (name[0] == 0) {
            snprintf(buf, sizeof buf, "rank-%u", r->info.rank);
            name = buf;
        }
        size_t n = 0;
        while (n < res->nnodes && strcmp(res->nodes[n], name) != 0)
            n++;
        if (n == res->nnodes) {
            if (fc__grow((void **)&res->nodes, &res->nnodes, &cap, sizeof *res->nodes) < 0)
                return FC_ENOMEM;
            if ((res->nodes[n] = strdup(name)) == NULL)
                return FC_ENOMEM;
            res->nnodes++;
        }
        if (r->info.rank < res->world)
            res->rank_node[r->info.rank] = (uint32_t)n;
    }
    return 0;
}

/* ---- channels and the instances in flight ---------------------------------------------------- */

/* One key of the ordered match: its sends and receives in posting order, each a queue linked
 * through the instances (msg.next), so that a channel is one cache line with no array of its own:
 * most hold one send and one receive in their life. */
typedef struct chan {
    uint64_t comm;
    uint32_t src, dst;
    int64_t tag;
    uint64_t hash;  /* key_hash of the above, kept for the table's moves */
    uint32_t sh, st; /* first and last send, sh NOMSG when there is none (st is then stale) */
    uint32_t rh, rt; /* first and last receive, the same way */
    uint32_t listed; /* in its receiving rank's blocked list */
    uint32_t dead;   /* released: on the free list, in no table entry */
    uint32_t nextfree; /* while released: the next released channel (matcher), or NOCHAN */
    uint32_t pad_;   /* to 64 bytes: one line, and an index becomes an offset by one shift */
} chan;

_Static_assert(sizeof(msg) == 128 && sizeof(chan) == 64 && sizeof(wcall) == 64, "pool entries: whole lines");

typedef struct matcher {
    pairing p;
    fc_match *res;
    rstate *st; /* by world rank; st[w].r is NULL for a rank without a file */
    msg *pool;
    size_t npool, cpool;
    uint32_t free1; /* the first free instance, the others linked through msg.next; NOMSG: none */
    chan *ch;
    size_t nch, cch;
    uint32_t chfree1; /* the first released channel, the others linked through chan.nextfree;
                         NOCHAN: none */
    uint32_t *tab; /* channel index + 1 by key hash; 0 is an empty entry */
    size_t tcap;
    uint64_t posted_sends, posted_recvs, cancelled_sends, cancelled_recvs;
    /* Sends that started waiting in a channel during this window, not yet on their rank's list
     * (pend_push): most are paired before the window ends, and need never be listed. */
    struct fresh {
        uint32_t m, src;
        uint64_t seq;
    } *fresh;
    size_t nfresh, cfresh;
    uint32_t world; /* res->world, at hand */
} matcher;

static msg *msg_grow(matcher *mt, uint32_t *ix);

/* A new instance, filled by the caller and then posted (post): it is built where it stays. NULL
 * when out of memory. */
static inline __attribute__((always_inline)) msg *msg_new(matcher *mt, uint32_t *ix)
{
    if (mt->free1 == NOMSG)
        return msg_grow(mt, ix);
    msg *m = &mt->pool[*ix = mt->free1];
    mt->free1 = m->next;
    return m;
}

/* msg_new with no entry free: the pool grows. */
static msg *msg_grow(matcher *mt, uint32_t *ix)
{
    if (mt->npool >= NOMSG - 1 || fc__reserve_lines(&mt->pool, &mt->cpool, mt->npool + 1, sizeof *mt->pool) < 0)
        return NULL;
    *ix = (uint32_t)mt->npool++;
    return &mt->pool[*ix];
}

/* Frees instance ix, at m. */
static inline __attribute__((always_inline)) void msg_drop(matcher *mt, msg *m, uint32_t ix)
{
    if ((m->flags & (MF_WAITED | MF_SOLE)) == MF_WAITED && call_unref(&mt->p, m) < 0)
        mt->p.nomem = 1;
    m->flags = 0;
    m->next = mt->free1; /* in no queue now */
    mt->free1 = ix;
}

static inline __attribute__((always_inline)) void msg_free(matcher *mt, uint32_t ix)
{
    msg_drop(mt, &mt->pool[ix], ix);
}

/* Queues the post of send ix (at m), waiting in a channel, on its rank's list of waiting sends. A
 * rank posts in the order of its records, so the list is kept sorted by post with at most a short
 * walk back: only a START sub-record (posting at its Startall's entry) or another thread's record
 * can come with an earlier post. Entries of sends gone since stay until they reach the head. */
static inline __attribute__((always_inline)) int pend_push(matcher *mt, const msg *m, uint32_t ix)
{
    rstate *rs = &mt->st[m->src];
    if (rs->ph > 0 && rs->ph >= rs->pn / 2) {
        memmove(rs->pq, rs->pq + rs->ph, (rs->pn - rs->ph) * sizeof *rs->pq);
        rs->pn -= rs->ph;
        rs->ph = 0;
    }
    if (fc__reserve(&rs->pq, &rs->pcap, rs->pn + 1, sizeof *rs->pq))
        return FC_ENOMEM;
    size_t j = rs->pn++;
    for (; j > rs->ph && rs->pq[j - 1].post > m->post; j--)
        rs->pq[j] = rs->pq[j - 1];
    rs->pq[j] = (struct pend){m->post, ix, m->seq};
    return 0;
}

/* Send ix (at m) starts waiting in a channel: noted for pend_min, which lists it if it still
 * waits then. */
static inline __attribute__((always_inline)) int pend_note(matcher *mt, const msg *m, uint32_t ix)
{
    if (fc__reserve(&mt->fresh, &mt->cfresh, mt->nfresh + 1, sizeof *mt->fresh))
        return FC_ENOMEM;
    mt->fresh[mt->nfresh++] = (struct fresh){ix, m->src, m->seq};
    return 0;
}

/* The earliest post of a send still waiting in a channel, or INT64_MAX: the earliest of each
 * rank's list, once the sends noted since the last call and still waiting are added and the
 * entries of sends gone since are dropped from its head. 0 or FC_ENOMEM in *rc. */
static int64_t pend_min(matcher *mt, int *rc)
{
    int64_t min = INT64_MAX;
    *rc = 0;
    for (size_t i = 0; i < mt->nfresh; i++) {
        const struct fresh *e = &mt->fresh[i];
        const msg *m = &mt->pool[e->m];
        if ((m->flags & (MF_LIVE | MF_SEND)) == (MF_LIVE | MF_SEND) && m->seq == e->seq && m->src == e->src &&
            pend_push(mt, m, e->m) < 0) {
            *rc = FC_ENOMEM;
            return min;
        }
    }
    mt->nfresh = 0;
    for (uint32_t w = 0; w < mt->res->world; w++) {
        rstate *rs = &mt->st[w];
        for (; rs->ph < rs->pn; rs->ph++) {
            const struct pend *e = &rs->pq[rs->ph];
            const msg *m = &mt->pool[e->m];
            if ((m->flags & (MF_LIVE | MF_SEND)) == (MF_LIVE | MF_SEND) && m->seq == e->seq && m->src == w) {
                min = e->post < min ? e->post : min;
                break;
            }
        }
        if (rs->ph == rs->pn)
            rs->ph = rs->pn = 0;
    }
    return min;
}

/* A key's source and destination ranks, adjacent in msg and chan, as one word (its layout is the
 * machine's, the same for every key): one load, one compare. */
_Static_assert(offsetof(msg, dst) == offsetof(msg, src) + 4, "msg: src and dst adjacent");
_Static_assert(offsetof(chan, dst) == offsetof(chan, src) + 4, "chan: src and dst adjacent");

static inline __attribute__((always_inline)) uint64_t ends_of(const void *src)
{
    uint64_t sd;
    memcpy(&sd, src, sizeof sd);
    return sd;
}

/* Two multiplications: the communicator key is a hash already, and each product's high half,
 * folded down, mixes every bit of its factor into the low bits that index the table. The table is
 * only looked up, never walked, so its layout decides nothing in the output. sd is ends_of. */
static uint64_t key_hash(uint64_t comm, uint64_t sd, int64_t tag)
{
    uint64_t h = (comm ^ sd) * 0x9E3779B97F4A7C15ull ^ (uint64_t)tag * 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
}

static uint64_t chan_home(const void *ctx, uint32_t ix)
{
    return ((const matcher *)ctx)->ch[ix].hash;
}

/* The channel of a key, made when new. Returns 0 when found, 1 when made, or FC_ENOMEM. */
static int chan_of(matcher *mt, uint64_t comm, uint64_t sd, int64_t tag, uint32_t *ci)
{
    uint64_t hash = key_hash(comm, sd, tag);
    size_t h = hash & (mt->tcap - 1); /* the table exists from the start */
    while (mt->tab[h]) {
        const chan *c = &mt->ch[mt->tab[h] - 1];
        if (c->comm == comm && ends_of((const char *)c + offsetof(chan, src)) == sd && c->tag == tag) {
            *ci = mt->tab[h] - 1;
            return 0;
        }
        h = (h + 1) & (mt->tcap - 1);
    }
    /* At most a quarter full (counting released channels): most keys are new, and find their
     * empty slot at the first probe. */
    if (4 * (mt->nch + 1) > mt->tcap) {
        size_t ncap = 2 * mt->tcap;
        uint32_t *t = calloc(ncap, sizeof *t);
        if (t == NULL)
            return FC_ENOMEM;
        for (size_t i = 0; i < mt->nch; i++)
            if (!mt->ch[i].dead) /* a released one is on the free list, in no entry */
                tab_put(t, ncap, chan_home(mt, (uint32_t)i), (uint32_t)i);
        free(mt->tab);
        mt->tab = t;
        mt->tcap = ncap;
        for (h = hash & (mt->tcap - 1); mt->tab[h];)
            h = (h + 1) & (mt->tcap - 1);
    }
    chan *c;
    if (mt->chfree1 != NOCHAN) {
        c = &mt->ch[*ci = mt->chfree1];
        mt->chfree1 = c->nextfree;
    } else {
        if (mt->nch >= NOCHAN - 1 || fc__reserve_lines(&mt->ch, &mt->cch, mt->nch + 1, sizeof *mt->ch) < 0)
            return FC_ENOMEM;
        c = &mt->ch[mt->nch];
        memset(c, 0, sizeof *c);
        *ci = (uint32_t)mt->nch++;
    }
    c->comm = comm;
    memcpy((char *)c + offsetof(chan, src), &sd, sizeof sd); /* src and dst */
    c->tag = tag;
    c->hash = hash;
    c->sh = c->rh = NOMSG;
    c->dead = 0;
    mt->tab[h] = *ci + 1;
    return 1;
}

/* Forgets the empty channel ci: programs often use a new tag per step, so a trace can have as
 * many keys as messages, and only the keys in use are kept. */
static inline __attribute__((always_inline)) int chan_release(matcher *mt, uint32_t ci)
{
    tab_del(mt->tab, mt->tcap, chan_home(mt, ci), ci, chan_home, mt);
    mt->ch[ci].dead = 1;
    mt->ch[ci].nextfree = mt->chfree1;
    mt->chfree1 = ci;
    return 0;
}

/* Appends instance ix, at m, to the queue whose first and last are *h and *t. */
static inline __attribute__((always_inline)) void q_push(matcher *mt, uint32_t *h, uint32_t *t, msg *m, uint32_t ix)
{
    m->next = NOMSG;
    if (*h == NOMSG)
        *h = ix;
    else
        mt->pool[*t].next = ix;
    *t = ix;
}

/* Takes the first instance off the queue *h, returning it: its next is the new first. */
static inline __attribute__((always_inline)) uint32_t q_pop(matcher *mt, uint32_t *h)
{
    uint32_t ix = *h;
    *h = mt->pool[ix].next;
    return ix;
}

/* The posting order of the oldest unresolved wildcard receive of rank rs, or UINT64_MAX. */
static uint64_t wild_min(matcher *mt, rstate *rs, uint32_t rank)
{
    while (rs->wh < rs->wn) {
        const struct wild *w = &rs->wild[rs->wh];
        const msg *m = &mt->pool[w->m];
        if ((m->flags & (MF_LIVE | MF_WILD | MF_SEND)) == (MF_LIVE | MF_WILD) && m->seq == w->seq && m->dst == rank)
            return w->seq;
        rs->wh++;
    }
    rs->wh = rs->wn = 0;
    return UINT64_MAX;
}

/* Instance ix leaves its channel without a partner: counted as cancelled when it was, else
 * reported unmatched. */
static int unpaired(matcher *mt, uint32_t ix)
{
    const msg *m = &mt->pool[ix];
    int send = (m->flags & MF_SEND) != 0, rc = 0;
    if (m->flags & MF_CANCELLED)
        ++*(send ? &mt->cancelled_sends : &mt->cancelled_recvs);
    else
        rc = add_unmatched(&mt->p, m, send, FC_UNMATCHED_NO_PARTNER);
    msg_free(mt, ix);
    return rc;
}

/* Pairs the heads of channel ci while both are complete and no earlier wildcard receive of the
 * receiver can still take the send. At the end of the trace (final) nothing more can arrive: an
 * incomplete send pairs as it is, an incomplete receive is reported (pair). */
static int try_pair_all(matcher *mt, uint32_t ci, int final)
{
    chan *c = &mt->ch[ci];
    /* A receiver without a file, or whose records are all read, posts no more receives and
     * completes none: what it posted pairs as it is, and the sends left over are unmatched now
     * rather than at the end, so that they do not hold back the flows after them. */
    int gone = -1; /* looked up when first needed: most pairs never ask */
#define GONE() (gone >= 0 ? gone : (gone = c->dst >= mt->res->world || mt->st[c->dst].r == NULL || mt->st[c->dst].ended))
    while (c->sh != NOMSG && c->rh != NOMSG) {
        uint32_t si = c->sh, ri = c->rh;
        msg *s = &mt->pool[si], *r = &mt->pool[ri];
        if (!(s->flags & (MF_DONE | MF_FINAL)) && !final)
            return 0;
        if (s->flags & MF_CANCELLED) {
            mt->cancelled_sends++;
            q_pop(mt, &c->sh);
            msg_free(mt, si);
            continue;
        }
        if (!(r->flags & MF_DONE) && !final && !GONE())
            return 0;
        if (r->flags & MF_CANCELLED) {
            mt->cancelled_recvs++;
            q_pop(mt, &c->rh);
            msg_free(mt, ri);
            continue;
        }
        rstate *rs = r->dst < mt->res->world ? &mt->st[r->dst] : NULL;
        if (rs != NULL && rs->wh == rs->wn)
            rs->wh = rs->wn = 0; /* no wildcard pending (wild_min's answer, without the call) */
        else if (!final && !GONE() && wild_min(mt, rs, r->dst) < r->seq) {
            if (!c->listed) {
                if (fc__grow((void **)&rs->blocked, &rs->nblocked, &rs->cblocked, sizeof *rs->blocked) < 0)
                    return FC_ENOMEM;
                rs->blocked[rs->nblocked++] = ci;
                c->listed = 1;
            }
            return 0;
        }
        int rc = pair(&mt->p, s, r, 0);
        q_pop(mt, &c->sh);
        q_pop(mt, &c->rh);
        msg_free(mt, si);
        msg_free(mt, ri);
        if (rc < 0)
            return rc;
    }
    while (!final && c->rh == NOMSG && c->sh != NOMSG && GONE()) {
        uint32_t si = q_pop(mt, &c->sh);
        const msg *s = &mt->pool[si];
        if (!(s->flags & MF_DONE) && s->req != 0) { /* its completion, if any, finds nothing */
            struct rent *e = slot_get(&mt->st[s->src].slot, s->req);
            if (e != NULL && e->ix == si)
                slot_del(&mt->st[s->src].slot, e);
        }
        int rc = unpaired(mt, si);
        if (rc < 0)
            return rc;
    }
#undef GONE
    if (c->sh == NOMSG && c->rh == NOMSG && !c->listed)
        return chan_release(mt, ci);
    return 0;
}

/* 1 when the receiver of channel c still posts and completes receives (try_pair_all's GONE). */
static inline __attribute__((always_inline)) int chan_rx_live(const matcher *mt, const chan *c)
{
    return c->dst < mt->world && mt->st[c->dst].live;
}

/* 1 when complete receive r may take the send at the head of its channel now: no earlier wildcard
 * receive of its rank is unresolved (try_pair_all's test when none is pending, which it also
 * answers by resetting the list). */
static inline __attribute__((always_inline)) int no_wild_before(matcher *mt, const msg *r)
{
    rstate *rs = &mt->st[r->dst]; /* the receive's own rank: below world */
    if (rs->wh != rs->wn)
        return 0;
    rs->wh = rs->wn = 0;
    return 1;
}

/* Send si (at sm) and complete receive ri (at rm), the last instances of channel ci (taken from its
 * heads, which the caller has advanced), pair as try_pair_all would; the channel, empty now, is released
 * unless its receiver's blocked list holds it. */
static int pair_heads(matcher *mt, uint32_t ci, msg *sm, uint32_t si, msg *rm, uint32_t ri)
{
    int rc = pair(&mt->p, sm, rm, 1); /* every caller saw rm complete */
    msg_drop(mt, sm, si);
    msg_drop(mt, rm, ri);
    if (rc < 0)
        return rc;
    return mt->ch[ci].listed ? 0 : chan_release(mt, ci);
}

/* try_pair_all, with the common cases answered here: receives waiting without a send or with a
 * send not complete yet at the head, or a receive not complete yet at the head, sends waiting for
 * a receiver still to come, and one complete send meeting one complete receive. */
static inline __attribute__((always_inline)) int try_pair(matcher *mt, uint32_t ci, int final)
{
    chan *c = &mt->ch[ci];
    if (final)
        return try_pair_all(mt, ci, final);
    if (c->rh != NOMSG) {
        if (c->sh == NOMSG)
            return 0;
        uint32_t si = c->sh, ri = c->rh;
        msg *s = &mt->pool[si], *r = &mt->pool[ri];
        if (!(s->flags & (MF_DONE | MF_FINAL)))
            return 0;
        if (!(r->flags & MF_DONE)) {
            if (chan_rx_live(mt, c))
                return 0;
        } else if (si == c->st && ri == c->rt && !((s->flags | r->flags) & MF_CANCELLED) && no_wild_before(mt, r)) {
            c->sh = c->rh = NOMSG;
            return pair_heads(mt, ci, s, si, r, ri);
        }
    } else if (c->sh != NOMSG && chan_rx_live(mt, c))
        return 0;
    return try_pair_all(mt, ci, final);
}

/* A wildcard receive of rank rs left the unresolved ones: retry the channels it was holding. */
static int unblock(matcher *mt, rstate *rs)
{
    /* The list is taken whole: a channel still held by another wildcard lists itself again. */
    uint32_t *list = rs->blocked;
    size_t n = rs->nblocked, cap = rs->cblocked;
    int rc = 0;
    if (n == 0)
        return 0;
    rs->blocked = NULL;
    rs->nblocked = rs->cblocked = 0;
    for (size_t i = 0; i < n; i++)
        mt->ch[list[i]].listed = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = try_pair(mt, list[i], 0);
    if (rs->blocked == NULL) { /* keep the old array for reuse */
        rs->blocked = list;
        rs->cblocked = cap;
    } else
        free(list);
    return rc;
}

/* Queues instance ix, m (resolved) in its channel and pairs what can be paired there. */
static int enqueue(matcher *mt, msg *m, uint32_t ix)
{
    uint32_t ci;
    int rc = chan_of(mt, m->comm, ends_of((const char *)m + offsetof(msg, src)), m->tag, &ci);
    if (rc < 0)
        return rc;
    chan *c = &mt->ch[ci];
    if (rc > 0) {
        m->chan = ci;
        /* A new channel: the instance waits alone (try_pair's answer without its tests), unless
         * it is a send whose receiver is gone already. */
        m->next = NOMSG;
        if (m->flags & MF_SEND) {
            c->sh = c->st = ix;
            if (mt->p.sink->advance != NULL && (rc = pend_note(mt, m, ix)) < 0)
                return rc;
            return chan_rx_live(mt, c) ? 0 : try_pair_all(mt, ci, 0);
        }
        c->rh = c->rt = ix;
        return 0;
    }
    /* The common meeting, a complete instance finding its one complete partner alone in the
     * channel, pairs without queueing (try_pair's test, the instance standing at its queue's
     * head): a send that pairs so never waits, nor holds back the watermark. */
    if (m->flags & MF_SEND) {
        if (c->sh == NOMSG && c->rh != NOMSG && c->rh == c->rt && (m->flags & (MF_DONE | MF_FINAL))) {
            uint32_t ri = c->rh;
            msg *r = &mt->pool[ri];
            if ((r->flags & MF_DONE) && !((m->flags | r->flags) & MF_CANCELLED) && no_wild_before(mt, r)) {
                c->rh = NOMSG;
                return pair_heads(mt, ci, m, ix, r, ri);
            }
        }
    } else if (c->rh == NOMSG && c->sh != NOMSG && c->sh == c->st && (m->flags & MF_DONE)) {
        uint32_t si = c->sh;
        msg *sm = &mt->pool[si];
        if ((sm->flags & (MF_DONE | MF_FINAL)) && !((m->flags | sm->flags) & MF_CANCELLED) && no_wild_before(mt, m)) {
            c->sh = NOMSG;
            return pair_heads(mt, ci, sm, si, m, ix);
        }
    }
    m->chan = ci; /* it waits there (one paired at once above needs none) */
    if (m->flags & MF_SEND) {
        q_push(mt, &c->sh, &c->st, m, ix);
        if (mt->p.sink->advance != NULL && (rc = pend_note(mt, m, ix)) < 0)
            return rc;
        /* An incomplete send at the head with receives waiting: try_pair's first answer. */
        if (c->rh != NOMSG && c->sh == ix && !(m->flags & (MF_DONE | MF_FINAL)))
            return 0;
    } else if (c->rh == NOMSG || mt->pool[c->rt].seq < m->seq)
        q_push(mt, &c->rh, &c->rt, m, ix);
    else {
        /* A wildcard resolved late goes back to its posting order among the receives (all of
         * its rank, so that their order numbers differ). */
        uint32_t *at = &c->rh;
        while (mt->pool[*at].seq < m->seq)
            at = &mt->pool[*at].next;
        m->next = *at;
        *at = ix;
    }
    return try_pair(mt, ci, 0);
}

/* Records posted instance ix, m (blocking or not, just filled in after msg_new) and binds it to its
 * request id when it has one. memo is the remembered entry of its call (call_ref). */
static inline __attribute__((always_inline)) int post(matcher *mt, rstate *s, msg *m, uint32_t ix, int send, int done,
                                                     int sole, uint64_t req, uint32_t *memo)
{
    int rc;
    m->flags |= MF_LIVE;
    m->seq = s->seq++;
    if (done)
        m->flags |= MF_DONE | MF_WAITED;
    if (send)
        m->flags |= MF_SEND;
    if (send) /* the receives are the rest of the posts, which seq counts */
        mt->posted_sends++;
    /* A blocking send or receive is its call's only message (sole, which the caller knows from
     * the kind); a Sendrecv has two. */
    if (done && sole)
        m->flags |= MF_SOLE;
    if (done && !(m->flags & MF_SOLE) && (rc = call_ref(&mt->p, m, s->rank, memo)) < 0)
        return rc;
    if (!done && (m->req = req) != 0) { /* a complete one's req is never read */
        struct rent *e = slot_put(&s->slot, req, m->seq);
        if (e == NULL)
            return FC_ENOMEM;
        e->ix = ix;
    }
    if (!send && (m->flags & MF_WILD)) {
        if (done) { /* completed, yet its envelope is unknown */
            rc = add_unmatched(&mt->p, m, 0, FC_UNMATCHED_UNRESOLVED);
            msg_free(mt, ix);
            return rc;
        }
        if (fc__grow((void **)&s->wild, &s->wn, &s->wcap, sizeof *s->wild) < 0)
            return FC_ENOMEM;
        s->wild[s->wn++] = (struct wild){ix, m->seq};
        m->chan = NOCHAN; /* until resolved (every other instance takes its channel now) */
        return 0;
    }
    return enqueue(mt, m, ix);
}

/* A COMPLETE of a request: fills the instance it completes from the record and the call around it. */
static int complete(matcher *mt, rstate *s, const fc_record *rec, thr *call)
{
    struct rent *e = rec->req ? slot_get(&s->slot, rec->req) : NULL;
    if (e == NULL)
        return 0;
    uint32_t ix = e->ix;
    slot_del(&s->slot, e);
    msg *m = &mt->pool[ix];
    int wild = (m->flags & MF_WILD) != 0;
    m->flags |= MF_DONE | MF_WAITED;
    m->end = rec->t1;
    m->wait_t0 = call->t0;
    m->wait_site = call->site;
    if (call_ref(&mt->p, m, s->rank, &call->call) < 0)
        return FC_ENOMEM;
    if (rec->ev.flags & FC_EVF_CANCELLED)
        m->flags |= MF_CANCELLED;
    if (!(m->flags & MF_SEND) && (rec->ev.flags & FC_EVF_STATUS)) {
        if (rec->peer >= 0) {
            m->src = (uint32_t)rec->peer;
            m->tag = rec->ev.tag;
            m->bytes = rec->ev.bytes;
            m->flags = (m->flags & ~(uint32_t)MF_WILD) | MF_STATUS;
        } else if (rec->peer == FC_PEER_NULL) {
            m->flags |= MF_CANCELLED; /* a wildcard that received from MPI_PROC_NULL: no message */
        }
    }
    if (!wild)
        return m->chan == NOCHAN ? 0 : try_pair(mt, m->chan, 0);
    /* A wildcard receive leaves the unresolved ones, whatever became of it. */
    int rc = 0;
    if (m->flags & MF_CANCELLED) {
        mt->cancelled_recvs++;
        msg_free(mt, ix);
    } else if (m->flags & MF_WILD) {
        rc = add_unmatched(&mt->p, m, 0, FC_UNMATCHED_UNRESOLVED);
        msg_free(mt, ix);
    } else if (m->src >= mt->res->world) {
        rc = add_unmatched(&mt->p, m, 0, FC_UNMATCHED_NO_PARTNER);
        msg_free(mt, ix);
    } else {
        rc = enqueue(mt, m, ix);
    }
    return rc < 0 ? rc : unblock(mt, s);
}

/* A COMPLETE record: the receive half of the Sendrecv just before it (obj 0, no request), or the
 * completion of a request. */
static int on_complete(matcher *mt, rstate *s, const fc_record *rec, thr *th)
{
    if (rec->req != 0 || rec->ev.obj != 0 ||
        (th->kind != FC_EV_MPI_Sendrecv && th->kind != FC_EV_MPI_Sendrecv_replace))
        return complete(mt, s, rec, th);
    if (!real_peer(mt->res, rec, 0))
        return 0;
    /* Posted and completed by the Sendrecv call itself. */
    uint32_t ix;
    msg *m = msg_new(mt, &ix);
    if (m == NULL)
        return FC_ENOMEM;
    describe(m, s, rec, 0);
    m->post = m->wait_t0 = th->t0;
    m->end = th->t1;
    m->kind = th->kind;
    m->site = m->wait_site = th->site;
    m->flags = MF_STATUS;
    return post(mt, s, m, ix, 0, 1, 0, 0, &th->call);
}

/* Applies one record of rank s. */
static int on_record(matcher *mt, rstate *s, const fc_record *rec)
{
    fc_match *res = mt->res;
    uint32_t k = rec->ev.kind;
    int rc = 0;
    uint32_t memo = 0; /* the entry of this call, when it makes one (a Sendrecv) */
    thr *th;
    if (rec->ev.thread < s->nthr)
        th = &s->thr[rec->ev.thread];
    else if ((th = thread_new(s, rec->ev.thread)) == NULL)
        return FC_ENOMEM;
    msg *m;
    uint32_t ix;
    /* The commonest record, a completion, ahead of the switch; it leaves its call open. */
    if (k == FC_EV_COMPLETE) {
        rc = on_complete(mt, s, rec, th);
        return rc < 0 ? rc : 0;
    }
    /* A call that returned an error posted nothing; its sub-records still name requests. */
    if ((rec->ev.flags & FC_EVF_ERROR) && k != FC_EV_START)
        k = 0;
    /* Sends and receives, blocking or not, each with their own copy of describe and post (inlined),
     * so that these test constants rather than branch again on what the switch found. */
    switch (k) {
    case FC_EV_MPI_Send: case FC_EV_MPI_Bsend: case FC_EV_MPI_Ssend: case FC_EV_MPI_Rsend:
        if (real_peer(res, rec, 1)) {
            if ((m = msg_new(mt, &ix)) == NULL)
                return FC_ENOMEM;
            describe(m, s, rec, 1);
            rc = post(mt, s, m, ix, 1, 1, 1, 0, &memo);
        }
        break;
    case FC_EV_MPI_Recv: case FC_EV_MPI_Mrecv:
        if (real_peer(res, rec, 0)) {
            if ((m = msg_new(mt, &ix)) == NULL)
                return FC_ENOMEM;
            describe(m, s, rec, 0);
            m->flags = (m->flags & ~(uint32_t)MF_WILD) | MF_STATUS; /* actual envelope */
            rc = post(mt, s, m, ix, 0, 1, 1, 0, &memo);
        }
        break;
    case FC_EV_MPI_Isend: case FC_EV_MPI_Ibsend: case FC_EV_MPI_Issend: case FC_EV_MPI_Irsend:
        if (real_peer(res, rec, 1)) {
            if ((m = msg_new(mt, &ix)) == NULL)
                return FC_ENOMEM;
            describe(m, s, rec, 1); /* its end, read once complete, is set then */
            rc = post(mt, s, m, ix, 1, 0, 0, rec->req, &memo);
        }
        break;
    case FC_EV_MPI_Irecv: case FC_EV_MPI_Imrecv:
        if (real_peer(res, rec, 0)) {
            if ((m = msg_new(mt, &ix)) == NULL)
                return FC_ENOMEM;
            describe(m, s, rec, 0);
            rc = post(mt, s, m, ix, 0, 0, 0, rec->req, &memo);
        }
        break;
    case FC_EV_MPI_Sendrecv: case FC_EV_MPI_Sendrecv_replace:
        if (real_peer(res, rec, 1)) {
            if ((m = msg_new(mt, &ix)) == NULL)
                return FC_ENOMEM;
            describe(m, s, rec, 1);
            rc = post(mt, s, m, ix, 1, 1, 0, 0, &memo);
        }
        break;
    case FC_EV_MPI_Send_init: case FC_EV_MPI_Bsend_init: case FC_EV_MPI_Ssend_init:
    case FC_EV_MPI_Rsend_init: case FC_EV_MPI_Recv_init:
        if (rec->req != 0) {
            tmpl *t = tmpl_put(s, rec->req);
            if (t == NULL)
                return FC_ENOMEM;
            t->used = 1 + (k != FC_EV_MPI_Recv_init); /* 2: a send */
            describe(&t->m, s, rec, k != FC_EV_MPI_Recv_init);
            if (rec->peer < 0 && rec->peer != FC_PEER_ANY)
                t->used = 0;
            if (rec->peer == FC_PEER_NULL)
                res->proc_null++;
        }
        break;
    case FC_EV_MPI_Start: case FC_EV_START:
        /* Each Start is a new message instance, posted when the Start (or Startall) is entered. */
        {
            const struct rent *e = rec->req ? rmap_get(&s->tmpls, rec->req) : NULL;
            if (e != NULL && s->tpl[e->ix].used) {
                if ((m = msg_new(mt, &ix)) == NULL)
                    return FC_ENOMEM;
                *m = s->tpl[e->ix].m;
                m->post = m->wait_t0 = k == FC_EV_START ? th->t0 : rec->t0;
                m->end = 0;
                rc = post(mt, s, m, ix, s->tpl[e->ix].used == 2, 0, 0, rec->req, &memo);
            }
        }
        break;
    case FC_EV_MPI_Request_free:
        {
            struct rent *e = rec->req ? rmap_get(&s->tmpls, rec->req) : NULL;
            if (e != NULL) {
                s->tfree[s->ntfree++] = e->ix; /* tfree is as long as tpl: never full */
                rmap_del(&s->tmpls, e);
            }
            /* A send freed while outstanding is never seen complete: it pairs as it is now
             * rather than holding back every flow after it until the end. */
            e = rec->req ? slot_get(&s->slot, rec->req) : NULL;
            if (e != NULL && (mt->pool[e->ix].flags & (MF_LIVE | MF_SEND)) == (MF_LIVE | MF_SEND)) {
                msg *fm = &mt->pool[e->ix];
                uint32_t ch = fm->chan;
                fm->flags |= MF_FINAL;
                fm->req = 0;
                slot_del(&s->slot, e);
                if (ch != NOCHAN)
                    rc = try_pair(mt, ch, 0);
            }
        }
        break;
    default:
        break;
    }
    if (rc < 0)
        return rc;
    if (k != FC_EV_START) {
        /* The thread's previous call takes no more completions. Most calls made no entry, and most
         * ranks have none open then: call_close would find nothing. */
        uint32_t rank = s->rank; /* below world: s is st[rank] */
        if ((th->call != 0 || s->nopen != 0) &&
            (rc = call_close(&mt->p, rank, th->site, th->t0, th->call)) < 0)
            return rc;
        th->kind = k;
        th->call = memo;
        th->t0 = rec->t0;
        th->t1 = rec->t1;
        th->site = rec->ev.site;
    }
    return 0;
}

/* Rank w's records are all read: its unresolved wildcard receives stay unmatched, and its
 * channels pair or drop what they hold (try_pair's gone receiver). */
static int rank_ended(matcher *mt, uint32_t w)
{
    rstate *rs = &mt->st[w];
    int rc = 0;
    rs->ended = 1;
    rs->live = 0;
    /* Its sends still outstanding will not complete either: they pair as they are, as at the end
     * of the trace, instead of holding back every flow after them. */
    size_t nreq = rs->slot.n, nchans = 0;
    uint32_t *chans = nreq ? malloc(nreq * sizeof *chans) : NULL;
    struct rent **reqs = nreq ? malloc(nreq * sizeof *reqs) : NULL;
    if (nreq && (chans == NULL || reqs == NULL)) {
        free(chans);
        free(reqs);
        return FC_ENOMEM;
    }
    if (nreq)
        slot_list(&rs->slot, reqs); /* in posting order: the order their channels are tried in */
    for (size_t i = 0; i < nreq; i++) {
        msg *m = &mt->pool[reqs[i]->ix];
        if ((m->flags & (MF_LIVE | MF_SEND)) == (MF_LIVE | MF_SEND) && m->src == w) {
            m->flags |= MF_FINAL;
            if (m->chan != NOCHAN)
                chans[nchans++] = m->chan;
        }
    }
    free(reqs);
    for (size_t i = 0; i < nchans && rc == 0; i++)
        if (!mt->ch[chans[i]].dead)
            rc = try_pair(mt, chans[i], 0);
    free(chans);
    if (rc < 0)
        return rc;
    while (rc == 0 && wild_min(mt, rs, w) != UINT64_MAX) {
        uint32_t ix = rs->wild[rs->wh].m;
        rc = add_unmatched(&mt->p, &mt->pool[ix], 0, FC_UNMATCHED_UNRESOLVED);
        msg_free(mt, ix);
    }
    for (size_t i = 0; i < rs->nblocked; i++)
        mt->ch[rs->blocked[i]].listed = 0;
    rs->nblocked = 0;
    for (uint32_t ci = 0; ci < mt->nch && rc == 0; ci++)
        if (!mt->ch[ci].dead && mt->ch[ci].dst == w)
            rc = try_pair(mt, ci, 0);
    return rc;
}

/* Rank file i has no more records. */
static int file_ended(matcher *mt, fc_trace *t, size_t i)
{
    uint32_t w = fc_trace_rank(t, i)->info.rank;
    return w < mt->res->world && mt->st[w].r != NULL ? rank_ended(mt, w) : 0;
}

/* The end of the trace: what is still unresolved stays unmatched, the channels pair what they
 * hold as it is, and whatever is left has no partner. */
static int drain(matcher *mt)
{
    int rc = 0;
    for (uint32_t w = 0; w < mt->res->world && rc == 0; w++) {
        rstate *rs = &mt->st[w];
        while (rc == 0 && wild_min(mt, rs, w) != UINT64_MAX) {
            uint32_t ix = rs->wild[rs->wh].m;
            rc = add_unmatched(&mt->p, &mt->pool[ix], 0, FC_UNMATCHED_UNRESOLVED);
            msg_free(mt, ix);
        }
    }
    for (uint32_t ci = 0; ci < mt->nch && rc == 0; ci++) {
        chan *c = &mt->ch[ci];
        if (c->dead)
            continue;
        if ((rc = try_pair(mt, ci, 1)) < 0)
            break;
        while (c->sh != NOMSG && rc == 0)
            rc = unpaired(mt, q_pop(mt, &c->sh));
        while (c->rh != NOMSG && rc == 0)
            rc = unpaired(mt, q_pop(mt, &c->rh));
    }
    return rc;
}

static void matcher_free(matcher *mt)
{
    for (uint32_t w = 0; mt->st && w < mt->res->world; w++) {
        rstate *s = &mt->st[w];
        free(s->ckeys);
        slot_free(&s->slot);
        rmap_free(&s->tmpls);
        free(s->tpl);
        free(s->tfree);
        free(s->thr);
        free(s->wild);
        free(s->blocked);
        free(s->pq);
    }
    free(mt->st);
    free(mt->pool);
    free(mt->ch);
    free(mt->tab);
    free(mt->fresh);
    free(mt->p.calls);
    free(mt->p.rhead);
    free(mt->p.rmax);
    free(mt->p.stab);
    free(mt->p.unc);
    free(mt->p.slast);
}

int fc__match_stream(fc_trace *t, uint64_t eager_threshold, const fc_match_sink *sink, fc_match **out)
{
    matcher mt;
    fc_cursor **cur = NULL;
    fc_record *recs = NULL;
    uint8_t *have = NULL;
    rstate **fst = NULL; /* by file: the state of its rank, or NULL */
    size_t nr = 0;
    int rc = FC_ENOMEM;
    memset(&mt, 0, sizeof mt);
    mt.free1 = NOMSG;
    mt.chfree1 = NOCHAN;
    fc_match *res = calloc(1, sizeof *res);
    *out = NULL;
    if (res == NULL)
        goto out;
    mt.res = res;
    res->eager_threshold = eager_threshold ? eager_threshold : FC_MATCH_EAGER_DEFAULT;
    res->world = fc_trace_world_size(t);
    for (size_t i = 0; i < fc_trace_nranks(t); i++)
        if (fc_trace_rank(t, i)->info.rank >= res->world)
            res->world = fc_trace_rank(t, i)->info.rank + 1;
    size_t w = res->world ? res->world : 1;
    mt.world = res->world;
    res->rank_node = malloc(w * sizeof *res->rank_node);
    res->late_sender = calloc(w, sizeof *res->late_sender);
    res->late_receiver = calloc(w, sizeof *res->late_receiver);
    mt.st = calloc(w, sizeof *mt.st);
    mt.p.st = mt.st;
    mt.p.unc = calloc(w, sizeof *mt.p.unc);
    mt.p.slast = calloc(w, sizeof *mt.p.slast);
    mt.tcap = 1024;
    mt.tab = calloc(mt.tcap, sizeof *mt.tab);
    mt.p.rhead = calloc(w + 1, sizeof *mt.p.rhead);
    mt.p.rmax = calloc(w + 1, sizeof *mt.p.rmax);
    if (mt.tab == NULL || mt.p.slast == NULL || mt.p.rhead == NULL || mt.p.rmax == NULL || res->rank_node == NULL || res->late_sender == NULL || res->late_receiver == NULL || mt.st == NULL ||
        mt.p.unc == NULL)
        goto out;
    for (size_t i = 0; i < w; i++) {
        slot_init(&mt.st[i].slot);
        rmap_init(&mt.st[i].tmpls);
    }
    if ((rc = number_nodes(t, res)) < 0)
        goto out;
    if ((rc = traffic_acc_new(res)) < 0)
        goto out;
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        rstate *s = &mt.st[r->info.rank];
        mt.p.unc[r->info.rank] = fc_rank_clock_uncertainty(r);
        s->r = r;
        s->rank = r->info.rank;
        s->live = 1;
        if ((rc = rank_keys(s)) < 0)
            goto out;
    }
    mt.p.res = res;
    mt.p.sink = sink;
    mt.p.flow = sink->flow;
    mt.p.arg = sink->arg;
    mt.p.origin = fc_trace_origin(t);
    if (sink->start != NULL && (rc = sink->start(sink->arg, res)) != 0)
        goto out;
    /* The ranks are read a time window at a time, each up to the window's end: pairing does not
     * depend on the order across ranks (each channel's sends come from one rank, its receives
     * from another), and windows keep the ranks within a window of each other, so that the
     * messages in flight are the only ones held, at O(1) per record where a merge of all ranks
     * would cost a heap operation each. The window adapts to hold lo to hi records. */
    nr = fc_trace_nranks(t);
    cur = calloc(nr + 1, sizeof *cur);
    recs = calloc(NRECS, sizeof *recs);
    have = calloc(nr + 1, 1);
    fst = calloc(nr + 1, sizeof *fst);
    if (cur == NULL || recs == NULL || have == NULL || fst == NULL) {
        rc = FC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < nr; i++) { /* a file's records all carry its rank */
        uint32_t rk = fc_trace_rank(t, i)->info.rank;
        fst[i] = rk < res->world && mt.st[rk].r != NULL ? &mt.st[rk] : NULL;
    }
    int64_t from = INT64_MAX, span = 1000000; /* ns */
    /* Small windows keep the flows just matched in cache when the sweep takes them, but each
     * window visits every rank: a few records per rank at least. On the 10^7-event bench trace (64
     * ranks), read 32 records at a time, windows of 256-2048 records took about 2.5 % less CPU than
     * 1-8 thousand, and 7 % less than 2-16 thousand; 128-1024 took 4 % more. Read 128 at a time
     * (NRECS), 256-2048, 512-4096 and 1-8 thousand came within 1 % of each other. */
    uint64_t lo = 256 > 4 * nr ? 256 : 4 * nr, hi = 8 * lo;
    for (size_t i = 0; i < nr; i++) {
        int64_t t0;
        if ((rc = fc_cursor_open(t, i, &cur[i])) < 0 || (rc = fc__cursor_peek(cur[i], &t0)) < 0)
            goto out;
        have[i] = rc > 0;
        if (have[i] && t0 < from)
            from = t0;
    }
    for (size_t i = 0; i < nr; i++)
        if (!have[i] && (rc = file_ended(&mt, t, i)) < 0)
            goto out;
    for (size_t left = nr; left > 0;) {
        int64_t end = from > INT64_MAX - span ? INT64_MAX : from + span;
        /* The window takes the records with t0 < end, every one at the end of time: t0 <= last. */
        int64_t last = end == INT64_MAX ? INT64_MAX : end - 1;
        uint64_t n = 0;
        left = 0;
        for (size_t i = 0; i < nr; i++) {
            if (!have[i])
                continue;
            rstate *s = fst[i];
            fc_cursor *c = cur[i];
            int more = 1;
            /* A batch at a time: a call per batch rather than per record. */
            for (size_t got = NRECS; more && got == NRECS;) {
                if ((rc = fc__cursor_fill(c, last, recs, NRECS, &got)) < 0)
                    goto out;
                more = rc;
                for (size_t j = 0; s != NULL && j < got; j++)
                    if ((rc = on_record(&mt, s, &recs[j])) < 0)
                        goto out;
                n += got;
            }
            if (!more && (rc = file_ended(&mt, t, i)) < 0)
                goto out;
            have[i] = (uint8_t)more;
            left += more;
        }
        /* Say how far the flows are known: none to come starts before the earliest waiting send,
         * nor before the records not read yet. */
        if (sink->advance != NULL) {
            int64_t wm = pend_min(&mt, &rc);
            if (rc < 0)
                goto out;
            if (end < wm)
                wm = end;
            /* The START records of a Startall come at its exit, but post their sends at its entry:
             * a Startall whose exit is not read yet may still post before the window's end. */
            for (uint32_t r = 0; r < res->world; r++)
                for (size_t k = 0; !mt.st[r].ended && k < mt.st[r].nthr; k++) {
                    const thr *th = &mt.st[r].thr[k];
                    if (th->kind == FC_EV_MPI_Startall && th->t1 >= end && th->t0 < wm)
                        wm = th->t0;
                }
            if ((rc = sink->advance(sink->arg, (double)(wm - mt.p.origin) * 1e-9)) != 0)
                goto out;
        }
        if (n < lo && span < INT64_MAX / 4)
            span *= 2;
        else if (n > hi && span > 1)
            span /= 2;
        from = end;
    }
    rc = 0;
    if (rc < 0 || (rc = drain(&mt)) < 0)
        goto out;
    if ((rc = traffic_finish(res)) < 0)
        goto out;
    res->cancelled = mt.cancelled_sends + mt.cancelled_recvs;
    res->sends = mt.posted_sends - mt.cancelled_sends;
    for (uint32_t r = 0; r < res->world; r++)
        mt.posted_recvs += mt.st[r].seq;
    mt.posted_recvs -= mt.posted_sends;
    res->recvs = mt.posted_recvs - mt.cancelled_recvs;
    /* Every message has left: the calls still open are summed, and the sites put in order. */
    size_t nlive = mt.p.clive;
    uint32_t *live = malloc((nlive + 1) * sizeof *live);
    if (live == NULL || call_live(&mt.p, live, 0) < 0) {
        free(live);
        rc = FC_ENOMEM;
        goto out;
    }
    for (size_t j = 0; j < nlive && rc == 0; j++)
        rc = call_flush(&mt.p, live[j]);
    free(live);
    if (rc == 0 && mt.p.nomem)
        rc = FC_ENOMEM;
    if (rc < 0)
        goto out;
    fc__sort(res->sites, res->nsites, sizeof *res->sites, cmp_site);
    fc__sort(res->unmatched, res->nunmatched, sizeof *res->unmatched, cmp_unmatched);
    *out = res;
    res = NULL;
    rc = 0;
out:
    for (size_t i = 0; cur != NULL && i < nr; i++)
        fc_cursor_close(cur[i]);
    free(cur);
    free(recs);
    free(have);
    free(fst);
    matcher_free(&mt);
    fc__match_free(res);
    return rc;
}


/* fc__match_trace's sink: every flow kept, in the order of delivery. */
typedef struct keep_all {
    fc_match *res;
    size_t n, cap;
    fc_flow *flows;
} keep_all;

static int keep_flow(void *arg, const fc_flow *f)
{
    keep_all *k = arg;
    if (fc__grow((void **)&k->flows, &k->n, &k->cap, sizeof *k->flows) < 0)
        return FC_ENOMEM;
    k->flows[k->n++] = *f;
    return 0;
}

int fc__match_trace(fc_trace *t, uint64_t eager_threshold, fc_match **out)
{
    keep_all k = {0};
    fc_match_sink sink = {.arg = &k, .flow = keep_flow};
    int rc = fc__match_stream(t, eager_threshold, &sink, out);
    if (rc < 0) {
        free(k.flows);
        return rc;
    }
    fc_match *res = *out;
    /* The array grew by doubling: give back the slack, up to half of what the flows take, which
     * the analysis keeps to its end. */
    fc_flow *fit = k.n > 0 && k.n < k.cap ? realloc(k.flows, k.n * sizeof *k.flows) : NULL;
    res->flows = fit != NULL ? fit : k.flows;
    /* Order the flows and give ids; the worst violation's index is remapped through a marker. */
    if (res->clock_violations)
        res->flows[res->worst_flow].id = UINT64_MAX;
    fc__sort_flows(res->flows, res->nflows);
    res->ninter = 0;
    for (size_t i = 0; i < res->nflows; i++) {
        if (res->clock_violations && res->flows[i].id == UINT64_MAX)
            res->worst_flow = i;
        res->flows[i].id = i;
        if (!res->flows[i].intra)
            res->ninter = i + 1;
    }
    return 0;
}

void fc__match_free(fc_match *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->nnodes; i++)
        free(m->nodes[i]);
    free(m->nodes);
    free(m->flows);
    free(m->rank_node);
    free(m->traffic);
    traffic_acc_free(m->acc);
    free(m->late_sender);
    free(m->late_receiver);
    free(m->sites);
    free(m->unmatched);
    free(m);
}
