/* analyzer/match/matcher.h: what the files of the matcher share (match.c drives it; channels.c,
 * requests.c, pairing.c, flows.c and comm-keys.c do its parts): the message instances, the
 * per-rank state, the channels and the pairing pass. Private to analyzer/match/. */
#ifndef FLOWCUT_ANALYZER_MATCH_MATCHER_H
#define FLOWCUT_ANALYZER_MATCH_MATCHER_H

#include <stddef.h>
#include <stdint.h>
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
    MF_WAITMULTI = 0x1000, /* completed by MPI_Waitall or MPI_Waitsome */
    MF_TESTED = 0x800,   /* completed by a Test call: its rank was polling it, from its post on as
                            far as the trace shows (the tests that found nothing name no request) */
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
    uint32_t chan;        /* the channel it waits in, once fc__mt_enqueue queues it; NOCHAN for an
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
    double tracer_wait_s;  /* seconds its threads waited for the tracer (TRACER_WAIT) */
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
    uint8_t multi; /* an MPI_Waitall or MPI_Waitsome: no Late Receiver beside a Late Sender */
} wcall;

/* Shared state of the pairing pass. */
typedef struct pairing {
    fc__match *res;
    const fc__match_sink *sink;
    int (*flow)(void *arg, const fc__flow *f); /* the sink's, at hand */
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

struct fc__traffic_acc {
    size_t nn;
    double *tb; /* dense: [s * nn + d] */
    uint64_t *tc;
    fc__traffic *cell; /* sparse: open addressing on (src, dst), count 0 for an empty cell */
    size_t cap, n;
};

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
    fc__match *res;
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

/* A key's source and destination ranks, adjacent in msg and chan, as one word (its layout is the
 * machine's, the same for every key): one load, one compare. */
_Static_assert(offsetof(msg, dst) == offsetof(msg, src) + 4, "msg: src and dst adjacent");
_Static_assert(offsetof(chan, dst) == offsetof(chan, src) + 4, "chan: src and dst adjacent");

/* ---- requests.c: the outstanding requests by id ----------------------------------------------- */

/* Request ids grow over the whole run (the reader gives each post a new one), while only a few
 * requests are outstanding at a time: a hash table keyed by id holds just those. */
uint64_t fc__mt_req_hash(uint64_t req);

void fc__mt_rmap_init(rmap *m);

void fc__mt_rmap_free(rmap *m);

/* The entry of req in m, added when absent (its ix for the caller to set); NULL when out of
 * memory. */
struct rent *fc__mt_rmap_put(rmap *m, uint64_t req);

/* Removes entry e of m, moving the entries after it back into the hole. */
void fc__mt_rmap_del(rmap *m, struct rent *e);

void fc__mt_slot_init(slotmap *m);

void fc__mt_slot_free(slotmap *m);

/* The n entries of m, into v[], in the order they were put in (ord): the order in which their
 * requests were posted. */
void fc__mt_slot_list(const slotmap *m, struct rent **v);

/* slot_put's rare cases: req present already, or in the spill, or a ring to grow first, or a
 * place taken by an older request. */
struct rent *fc__mt_slot_put_slow(slotmap *m, uint64_t req, uint64_t ord);

/* ---- comm-keys.c ------------------------------------------------------------------------------ */

/* The key of an undefined communicator: MPI_COMM_WORLD as the list 0 .. size-1 with ordinal 0 (what
 * a definition would give), anything else private to its rank so that it matches nothing. */
uint64_t fc__mt_undefined_key(const fc_rank *r, uint64_t id);

int fc__comm_keys(const fc_rank *r, uint64_t **keys, size_t *n);

/* ---- flows.c ---------------------------------------------------------------------------------- */

/* Sorts flows[0..n) by cmp_flow. qsort sorted the 128-byte flows through pointers, calling
 * cmp_flow through a pointer for each of its n log n steps: a few per cent of an analysis with
 * predictions. Here their 32-bit indices are merge-sorted with the comparison inlined, and the
 * flows are then moved once, cycle by cycle. cmp_flow orders any two flows (their delivery order,
 * the id, breaks every tie), so the order is qsort's, which also does the sorting when the
 * indices find no memory (it then sorts in place) or would not fit in 32 bits. */
void fc__sort_flows(fc__flow *flows, size_t n);

int fc__mt_cmp_unmatched(const void *a, const void *b);

/* Numbers the nodes in order of first appearance by world rank. */
int fc__mt_number_nodes(fc_trace *t, fc__match *res);

/* ---- pairing.c -------------------------------------------------------------------------------- */

int fc__mt_cmp_site(const void *a, const void *b);

int fc__mt_add_unmatched(pairing *p, const msg *m, int send, uint32_t reason);

/* Places index i of an entry with hash h in table t (capacity cap, a power of 2). */
void fc__mt_tab_put(uint32_t *t, size_t cap, uint64_t h, uint32_t i);

/* 1 when entry i is the live call (rank, site, t0). */
int fc__mt_call_is(const pairing *p, uint32_t i, uint32_t rank, uint64_t site, int64_t t0);

/* The live calls, in ix[] (room for clive), in the table's slot order (call_order). 0 or
 * FC_ENOMEM. */
int fc__mt_call_live(pairing *p, uint32_t *ix, int renumber);

/* The entry of call (rank, site, t0), made when absent; NOMSG when out of memory. */
uint32_t fc__mt_call_make(pairing *p, uint32_t rank, uint64_t site, int64_t t0);

/* Adds call i to the wait states of its site and forgets it. */
int fc__mt_call_flush(pairing *p, uint32_t i);

/* The thread that made call (rank, site, t0) started another: no more messages join it. memo is
 * the thread's remembered entry (thr.call). */
int fc__mt_call_close(pairing *p, uint32_t rank, uint64_t site, int64_t t0, uint32_t memo);

int fc__mt_traffic_acc_new(fc__match *res);

void fc__mt_traffic_acc_free(struct fc__traffic_acc *a);

/* Turns the sums into res->traffic, in order, and counts the inter-node flows: those off the
 * diagonal, where each flow counts once. Returns 0 or FC_ENOMEM. */
int fc__mt_traffic_finish(fc__match *res);

/* Turns a matched fc__mt_pair into a flow and its wait states; an incomplete receive is reported instead
 * (rdone: the caller has seen it complete). */
int fc__mt_pair(pairing *p, const msg *s, const msg *r, int rdone);

/* ---- channels.c ------------------------------------------------------------------------------- */

/* msg_new with no entry free: the pool grows. */
msg *fc__mt_msg_grow(matcher *mt, uint32_t *ix);

/* The earliest post of a send still waiting in a channel, or INT64_MAX: the earliest of each
 * rank's list, once the sends noted since the last call and still waiting are added and the
 * entries of sends gone since are dropped from its head. 0 or FC_ENOMEM in *rc. */
int64_t fc__mt_pend_min(matcher *mt, int *rc);

/* The posting order of the oldest unresolved wildcard receive of rank rs, or UINT64_MAX. */
uint64_t fc__mt_wild_min(matcher *mt, rstate *rs, uint32_t rank);

/* Instance ix leaves its channel without a partner: counted as cancelled when it was, else
 * reported unmatched. */
int fc__mt_unpaired(matcher *mt, uint32_t ix);

/* Pairs the heads of channel ci while both are complete and no earlier wildcard receive of the
 * receiver can still take the send. At the end of the trace (final) nothing more can arrive: an
 * incomplete send pairs as it is, an incomplete receive is reported (fc__mt_pair). */
int fc__mt_try_pair_all(matcher *mt, uint32_t ci, int final);

/* 1 when the receiver of channel c still posts and completes receives (fc__mt_try_pair_all's GONE). */
int fc__mt_chan_rx_live(const matcher *mt, const chan *c);

/* 1 when complete receive r may take the send at the head of its channel now: no earlier wildcard
 * receive of its rank is unresolved (fc__mt_try_pair_all's test when none is pending, which it also
 * answers by resetting the list). */
int fc__mt_no_wild_before(matcher *mt, const msg *r);

/* Send si (at sm) and complete receive ri (at rm), the last instances of channel ci (taken from its
 * heads, which the caller has advanced), fc__mt_pair as fc__mt_try_pair_all would; the channel, empty now, is released
 * unless its receiver's blocked list holds it. */
int fc__mt_pair_heads(matcher *mt, uint32_t ci, msg *sm, uint32_t si, msg *rm, uint32_t ri);

/* A wildcard receive of rank rs left the unresolved ones: retry the channels it was holding. */
int fc__mt_unblock(matcher *mt, rstate *rs);

/* Queues instance ix, m (resolved) in its channel and pairs what can be paired there. */
int fc__mt_enqueue(matcher *mt, msg *m, uint32_t ix);

/* ---- the hot paths of the files above, inlined where they are called -------------------------- */

/* The entry of req in m, or NULL. */
static inline struct rent *rmap_get(rmap *m, uint64_t req)
{
    for (size_t j = fc__mt_req_hash(req) & (m->cap - 1); m->e[j].req; j = (j + 1) & (m->cap - 1))
        if (m->e[j].req == req)
            return &m->e[j];
    return NULL;
}

/* The entry of req (not 0) in m, or NULL. */
static inline __attribute__((always_inline)) struct rent *slot_get(slotmap *m, uint64_t req)
{
    struct rent *e = &m->e[req & (m->cap - 1)];
    if (e->req == req)
        return e;
    return m->spill != NULL ? rmap_get(m->spill, req) : NULL;
}

/* The entry of req (not 0) in m, added when absent with order ord, which is larger than any given
 * before (its ix for the caller to set); NULL when out of memory. */
static inline __attribute__((always_inline)) struct rent *slot_put(slotmap *m, uint64_t req, uint64_t ord)
{
    struct rent *e = &m->e[req & (m->cap - 1)];
    if (e->req != 0 || m->spill != NULL || 2 * (m->n + 1) > m->cap)
        return fc__mt_slot_put_slow(m, req, ord);
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
    fc__mt_rmap_del(m->spill, e);
    if (m->spill->n == 0) {
        fc__mt_rmap_free(m->spill);
        free(m->spill);
        m->spill = NULL;
    }
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

/* Message m (just marked MF_WAITED) belongs to its waiting call until it leaves. rank is waiter(m),
 * the rank of the record at hand, given rather than chosen by side (a Waitall mixes sends and
 * receives). *memo is the thread's remembered entry of that call (thr.call), updated: a Waitall's
 * messages find it there. */
static inline __attribute__((always_inline)) int call_ref(pairing *p, msg *m, uint32_t rank, uint32_t *memo)
{
    uint32_t i = *memo - 1;
    if (*memo == 0 || !fc__mt_call_is(p, i, rank, m->wait_site, m->wait_t0)) {
        if ((i = fc__mt_call_make(p, rank, m->wait_site, m->wait_t0)) == NOMSG)
            return FC_ENOMEM;
        *memo = i + 1;
    }
    p->calls[i].refs++;
    m->call = i; /* stays valid while m holds the entry */
    return 0;
}

/* Message m leaves: its call is summed when nothing else holds it. */
static inline int call_unref(pairing *p, const msg *m)
{
    uint32_t i = m->call;
    if (--p->calls[i].refs == 0 && !p->calls[i].open)
        return fc__mt_call_flush(p, i);
    return 0;
}

/* A new instance, filled by the caller and then posted (post): it is built where it stays. NULL
 * when out of memory. */
static inline __attribute__((always_inline)) msg *msg_new(matcher *mt, uint32_t *ix)
{
    if (mt->free1 == NOMSG)
        return fc__mt_msg_grow(mt, ix);
    msg *m = &mt->pool[*ix = mt->free1];
    mt->free1 = m->next;
    return m;
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

/* Takes the first instance off the queue *h, returning it: its next is the new first. */
static inline __attribute__((always_inline)) uint32_t q_pop(matcher *mt, uint32_t *h)
{
    uint32_t ix = *h;
    *h = mt->pool[ix].next;
    return ix;
}

/* fc__mt_try_pair_all, with the common cases answered here: receives waiting without a send or with a
 * send not complete yet at the head, or a receive not complete yet at the head, sends waiting for
 * a receiver still to come, and one complete send meeting one complete receive. */
static inline __attribute__((always_inline)) int try_pair(matcher *mt, uint32_t ci, int final)
{
    chan *c = &mt->ch[ci];
    if (final)
        return fc__mt_try_pair_all(mt, ci, final);
    if (c->rh != NOMSG) {
        if (c->sh == NOMSG)
            return 0;
        uint32_t si = c->sh, ri = c->rh;
        msg *s = &mt->pool[si], *r = &mt->pool[ri];
        if (!(s->flags & (MF_DONE | MF_FINAL)))
            return 0;
        if (!(r->flags & MF_DONE)) {
            if (fc__mt_chan_rx_live(mt, c))
                return 0;
        } else if (si == c->st && ri == c->rt && !((s->flags | r->flags) & MF_CANCELLED) && fc__mt_no_wild_before(mt, r)) {
            c->sh = c->rh = NOMSG;
            return fc__mt_pair_heads(mt, ci, s, si, r, ri);
        }
    } else if (c->sh != NOMSG && fc__mt_chan_rx_live(mt, c))
        return 0;
    return fc__mt_try_pair_all(mt, ci, final);
}

#endif /* FLOWCUT_ANALYZER_MATCH_MATCHER_H */
