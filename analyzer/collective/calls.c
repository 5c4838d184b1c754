/* analyzer/collective/calls.c: finds the collective calls of a trace (each call's records on its
 * members), expands each into the messages of its algorithm and places them in time (calls.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include <flowcut/reader.h>
#include "util/internal.h"
#include "collective/calls.h"

/* ---- finding the calls ------------------------------------------------------------------------ */

/* A member's record while the ranks are read. */
typedef struct raw {
    size_t call;
    uint32_t kind;
    fc__coll_member m;
} raw;

/* Open-addressing map (communicator key, sequence number) -> call index + 1. */
typedef struct cent {
    uint64_t key, seq;
    size_t call1;
} cent;

typedef struct gather {
    fc__colls *c;
    int64_t origin;
    cent *map;
    size_t mcap, mn;
    raw *raws;
    size_t nraws, rcap, ccap;
    struct { uint64_t key, next; } *seqs; /* this rank's counters per communicator */
    size_t nseqs, scap;
    struct { uint64_t req; size_t raw; } *pend; /* this rank's non-blocking calls not yet completed */
    size_t npend, pcap;
    size_t last;        /* the raw of the record just read, or SIZE_MAX: where COUNTS belong */
    struct run { size_t raw; int64_t first; uint64_t n, to, from; } *runs; /* COUNTS read */
    size_t nruns, runcap;
    size_t icap;        /* of c->inter_lists */
    size_t nbcap;       /* of c->nbr_lists */
    struct { uint64_t comm; const fc__coll_nbrs *nb; } *rnb; /* this rank's lists by comm_id */
    size_t nrnb, rnbcap;
    /* This rank's persistent collectives: the init record of each request and its COUNTS (runs
     * with raw = SIZE_MAX, in truns[run0 .. run0 + nrun)), which each Start of it copies. */
    struct tmpl { fc_record rec; size_t run0, nrun; } *tm;
    size_t ntm, tmcap;
    struct run *truns;
    size_t ntruns, truncap;
    size_t tlast;       /* the template of the record just read, or SIZE_MAX: where COUNTS belong */
    int64_t startall_t0, startall_t1; /* the MPI_Startall whose START records follow */
} gather;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0x100000001b3ull;
}

/* The slot of (key, seq): its entry, or the empty slot where it goes. */
static cent *slot(cent *v, size_t cap, uint64_t key, uint64_t seq)
{
    size_t j = mix(key, seq) & (cap - 1);
    while (v[j].call1 && !(v[j].key == key && v[j].seq == seq))
        j = (j + 1) & (cap - 1);
    return &v[j];
}

static int map_room(gather *g)
{
    if ((g->mn + 1) * 2 <= g->mcap)
        return 0;
    size_t cap = g->mcap ? g->mcap * 2 : 1024;
    cent *v = calloc(cap, sizeof *v);
    if (v == NULL)
        return FC_ENOMEM;
    for (size_t i = 0; i < g->mcap; i++)
        if (g->map[i].call1)
            *slot(v, cap, g->map[i].key, g->map[i].seq) = g->map[i];
    free(g->map);
    g->map = v;
    g->mcap = cap;
    return 0;
}

static int next_seq(gather *g, uint64_t key, uint64_t *seq)
{
    for (size_t i = 0; i < g->nseqs; i++)
        if (g->seqs[i].key == key) {
            *seq = g->seqs[i].next++;
            return 0;
        }
    if (fc__grow((void **)&g->seqs, &g->nseqs, &g->scap, sizeof *g->seqs) < 0)
        return FC_ENOMEM;
    g->seqs[g->nseqs].key = key;
    g->seqs[g->nseqs].next = 1;
    g->nseqs++;
    *seq = 0;
    return 0;
}

uint32_t fc__coll_inter_order(const fc_comm *cm, uint32_t *out)
{
    int local_low = cm->local_size && cm->remote_size && cm->local[0] < cm->remote[0];
    const uint32_t *lo = local_low ? cm->local : cm->remote, *hi = local_low ? cm->remote : cm->local;
    uint32_t a = local_low ? cm->local_size : cm->remote_size;
    memcpy(out, lo, a * sizeof *out);
    memcpy(out + a, hi, (cm->local_size + cm->remote_size - a) * sizeof *out);
    return a;
}

int fc__coll_inter_expands(unsigned kind)
{
    return !fc__coll_is_ctor(kind) && fc__coll_select_inter(kind, 1, 1, 0, 0, NULL) != FC__CA_AUTO;
}

/* The members of an inter-communicator in fc__coll_inter_order's order, one list per
 * inter-communicator, kept in c->inter_lists; *a is the low group's size. NULL on FC_ENOMEM (*rc
 * set). */
static const uint32_t *inter_members(gather *g, const fc_comm *cm, uint64_t key, uint32_t *p, uint32_t *a, int *rc)
{
    fc__colls *c = g->c;
    int local_low = cm->local_size && cm->remote_size && cm->local[0] < cm->remote[0];
    *a = local_low ? cm->local_size : cm->remote_size;
    *p = cm->local_size + cm->remote_size;
    for (size_t i = 0; i < c->ninter_lists; i++) {
        const fc__coll_inter_list *l = &c->inter_lists[i];
        if (l->key == key && l->p == *p && l->a == *a) /* the key hashes both lists */
            return l->ranks;
    }
    uint32_t *v = malloc((*p ? *p : 1) * sizeof *v);
    if (v == NULL || fc__grow((void **)&c->inter_lists, &c->ninter_lists, &g->icap, sizeof *c->inter_lists) < 0) {
        free(v);
        *rc = FC_ENOMEM;
        return NULL;
    }
    fc__coll_inter_order(cm, v);
    c->inter_lists[c->ninter_lists++] = (fc__coll_inter_list){.key = key, .p = *p, .a = *a, .ranks = v};
    return v;
}

/* Members (world ranks) of a communicator, *a the size of an inter-communicator's low group (0 for
 * an intra-communicator); NULL for an unknown id, or an inter-communicator with a call kind k the
 * expansion has no algorithm for (counted in c->inter_records under the record's kind rk), or
 * FC_ENOMEM (*rc set). */
static const uint32_t *members_of(gather *g, const fc_rank *r, uint64_t id, uint64_t key, uint32_t k, uint32_t rk,
                                  uint32_t *p, uint32_t *a, int *rc)
{
    fc__colls *c = g->c;
    const fc_comm *cm = fc_rank_comm(r, id);
    *a = 0;
    if (cm == NULL) {
        if (id != 0)
            return NULL;
        *p = c->world;
        return c->world_ranks;
    }
    if (cm->flags & FC_COMMF_INTER) {
        if (!fc__coll_inter_expands(k)) {
            c->inter_records[rk]++;
            return NULL;
        }
        return inter_members(g, cm, key, p, a, rc);
    }
    *p = cm->local_size;
    return cm->local;
}

static double secs(const gather *g, int64_t ns)
{
    return (double)(ns - g->origin) * 1e-9;
}

/* Rank r's neighbours in communicator id (members mem[0 .. p)), built once per rank and
 * communicator; NULL (and c->nbr_unknown counted) when the trace has no topology for it. */
static const fc__coll_nbrs *nbrs_of(gather *g, const fc_rank *r, uint64_t id, const uint32_t *mem, uint32_t p, int *rc)
{
    fc__colls *c = g->c;
    for (size_t i = 0; i < g->nrnb; i++)
        if (g->rnb[i].comm == id)
            return g->rnb[i].nb;
    fc__coll_nbrs *nb = NULL;
    if ((*rc = fc__coll_nbrs_of(r, id, mem, p, &nb)) < 0)
        return NULL;
    if (nb == NULL) {
        c->nbr_unknown++;
        return NULL;
    }
    if (fc__grow((void **)&c->nbr_lists, &c->nnbr_lists, &g->nbcap, sizeof *c->nbr_lists) < 0 ||
        fc__grow((void **)&g->rnb, &g->nrnb, &g->rnbcap, sizeof *g->rnb) < 0) {
        free(nb);
        *rc = FC_ENOMEM;
        return NULL;
    }
    c->nbr_lists[c->nnbr_lists++] = nb;
    g->rnb[g->nrnb].comm = id;
    g->rnb[g->nrnb++].nb = nb;
    return nb;
}

/* One collective record (or constructor) of rank r. */
static int on_call(gather *g, const fc_rank *r, const uint64_t *keys, size_t nkeys, const fc_record *rec)
{
    fc__colls *c = g->c;
    uint32_t p, a, k = rec->ev.kind;
    /* A Start of a persistent collective (the record is its init's) has its non-blocking
     * form's messages. */
    uint32_t base = fc__coll_persistent(k), xk = base ? base : k;
    uint64_t key = rec->ev.comm < nkeys ? keys[rec->ev.comm] : fc__comm_key(r, rec->ev.comm), seq;
    int rc = 0;
    const uint32_t *mem = members_of(g, r, rec->ev.comm, key, xk, k, &p, &a, &rc);
    if (mem == NULL)
        return rc;
    if (p < 2 || p > c->world)
        return 0;
    rc = next_seq(g, key, &seq);
    if (rc < 0 || (rc = map_room(g)) < 0)
        return rc;
    uint32_t me = UINT32_MAX, root = UINT32_MAX;
    for (uint32_t i = 0; i < p; i++) {
        if (mem[i] >= c->world)
            return 0; /* a member outside the world: a damaged definition, left out */
        if (mem[i] == r->info.rank)
            me = i;
        if (rec->peer >= 0 && mem[i] == (uint32_t)rec->peer)
            root = i;
    }
    if (me == UINT32_MAX)
        return 0;
    const fc__coll_nbrs *nb = NULL;
    if (fc__coll_is_neighbor(xk) && (nb = nbrs_of(g, r, rec->ev.comm, mem, p, &rc)) == NULL)
        return rc; /* no topology: the call cannot be expanded */
    if (rec->peer == FC_PEER_ROOT)
        root = me; /* the root of an inter-communicator collective passes MPI_ROOT */
    cent *e = slot(g->map, g->mcap, key, seq);
    if (e->call1 == 0) {
        if (fc__grow((void **)&c->calls, &c->ncalls, &g->ccap, sizeof *c->calls) < 0)
            return FC_ENOMEM;
        fc__coll_call *cl = &c->calls[c->ncalls];
        memset(cl, 0, sizeof *cl);
        cl->record_kind = k;
        cl->kind = fc__coll_is_ctor(k) ? FC_EV_MPI_Barrier : xk;
        cl->p = p;
        cl->inter = a;
        cl->ranks = mem;
        *e = (cent){.key = key, .seq = seq, .call1 = ++c->ncalls};
        g->mn++;
    }
    fc__coll_call *cl = &c->calls[e->call1 - 1];
    if (cl->record_kind != k || cl->p != p) {
        cl->dropped++; /* the members disagree: this record stays out */
        return 0;
    }
    if (root != UINT32_MAX && !fc__coll_is_ctor(k))
        cl->root = root;
    cl->op |= (uint32_t)(rec->ev.flags & (FC_EVF_USER_OP | FC_EVF_NONCOMMUTATIVE));
    if (fc__grow((void **)&g->raws, &g->nraws, &g->rcap, sizeof *g->raws) < 0)
        return FC_ENOMEM;
    g->last = g->nraws;
    g->raws[g->nraws] = (raw){.call = e->call1 - 1, .kind = k,
                              .m = {.rank = r->info.rank, .me = me, .enter = secs(g, rec->t0),
                                    .exit = secs(g, rec->t1), .site = rec->ev.site, .bytes = rec->ev.bytes,
                                    .bytes2 = rec->ev.bytes2, .nbrs = nb}};
    /* A non-blocking collective, or a Start of a persistent one, lasts until the call that
     * completes its request. */
    if (rec->req != 0 && ((xk >= FC_EV_MPI_Ibarrier && xk <= FC_EV_MPI_Iexscan) || k == FC_EV_MPI_Comm_idup ||
                          (xk >= FC_EV_MPI_Ineighbor_allgather && xk <= FC_EV_MPI_Ineighbor_alltoallw))) {
        if (fc__grow((void **)&g->pend, &g->npend, &g->pcap, sizeof *g->pend) < 0)
            return FC_ENOMEM;
        g->pend[g->npend].req = rec->req;
        g->pend[g->npend].raw = g->nraws;
        g->npend++;
    }
    g->nraws++;
    return 0;
}

/* Keeps the init record of a persistent collective; its COUNTS follow. Request ids are unique
 * within the rank (reader.h), so one template per id. */
static int remember(gather *g, const fc_record *rec)
{
    if (fc__grow((void **)&g->tm, &g->ntm, &g->tmcap, sizeof *g->tm) < 0)
        return FC_ENOMEM;
    g->tm[g->ntm] = (struct tmpl){.rec = *rec, .run0 = g->ntruns, .nrun = 0};
    g->tlast = g->ntm++;
    return 0;
}

/* A Start of request req (MPI_Start, or a START of MPI_Startall, whose times are the call's): when
 * it is a persistent collective's, one instance of it, with the init's record and COUNTS. */
static int start(gather *g, const fc_rank *r, const uint64_t *keys, size_t nkeys, uint64_t req, int64_t t0,
                 int64_t t1)
{
    size_t i = g->ntm;
    while (i > 0 && g->tm[i - 1].rec.req != req)
        i--;
    if (i == 0)
        return 0; /* a point-to-point request */
    const struct tmpl *tp = &g->tm[i - 1];
    fc_record rec = tp->rec;
    rec.t0 = t0;
    rec.t1 = t1;
    size_t before = g->nraws;
    int rc = on_call(g, r, keys, nkeys, &rec);
    if (rc < 0 || g->nraws == before)
        return rc;
    for (size_t q = 0; q < tp->nrun; q++) {
        if (fc__grow((void **)&g->runs, &g->nruns, &g->runcap, sizeof *g->runs) < 0)
            return FC_ENOMEM;
        g->runs[g->nruns] = g->truns[tp->run0 + q];
        g->runs[g->nruns++].raw = before;
    }
    return 0;
}

static int read_rank(gather *g, fc_trace *t, size_t i)
{
    const fc_rank *r = fc_trace_rank(t, i);
    uint64_t *keys = NULL;
    size_t nkeys = 0;
    fc_cursor *cur = NULL;
    fc_record rec;
    g->nseqs = g->npend = g->nrnb = g->ntm = g->ntruns = 0;
    g->tlast = SIZE_MAX;
    int rc = fc__comm_keys(r, &keys, &nkeys);
    if (rc == 0)
        rc = fc_cursor_open(t, i, &cur);
    g->last = SIZE_MAX;
    while (rc == 0 && (rc = fc_cursor_next(cur, &rec)) > 0) {
        uint32_t k = rec.ev.kind;
        rc = 0;
        if (k == FC_EV_COUNTS) {
            /* The bytes per peer of the v or w collective just read (format 2.4). */
            if (g->tlast != SIZE_MAX && rec.ev.peer >= 0) {
                if (fc__grow((void **)&g->truns, &g->ntruns, &g->truncap, sizeof *g->truns) < 0) {
                    rc = FC_ENOMEM;
                    break;
                }
                g->truns[g->ntruns++] = (struct run){.raw = SIZE_MAX, .first = rec.ev.peer, .n = rec.ev.obj,
                                                     .to = rec.ev.bytes, .from = rec.ev.bytes2};
                g->tm[g->tlast].nrun++;
            } else if (g->last != SIZE_MAX && rec.ev.peer >= 0) {
                if (fc__grow((void **)&g->runs, &g->nruns, &g->runcap, sizeof *g->runs) < 0) {
                    rc = FC_ENOMEM;
                    break;
                }
                g->runs[g->nruns++] = (struct run){.raw = g->last, .first = rec.ev.peer, .n = rec.ev.obj,
                                                   .to = rec.ev.bytes, .from = rec.ev.bytes2};
            }
            continue;
        }
        g->last = g->tlast = SIZE_MAX;
        if (fc__coll_persistent(k) && rec.req != 0 && !(rec.ev.flags & FC_EVF_ERROR)) {
            rc = remember(g, &rec);
            continue;
        }
        if (k == FC_EV_MPI_Startall) {
            g->startall_t0 = rec.t0;
            g->startall_t1 = rec.t1;
            continue;
        }
        if ((k == FC_EV_MPI_Start || k == FC_EV_START) && rec.req != 0) {
            if (!(rec.ev.flags & FC_EVF_ERROR))
                rc = start(g, r, keys, nkeys, rec.req, k == FC_EV_START ? g->startall_t0 : rec.t0,
                           k == FC_EV_START ? g->startall_t1 : rec.t1);
            continue;
        }
        if (k == FC_EV_COMPLETE && rec.req != 0) {
            for (size_t q = 0; q < g->npend; q++)
                if (g->pend[q].req == rec.req) {
                    g->raws[g->pend[q].raw].m.exit = secs(g, rec.t1);
                    g->pend[q] = g->pend[--g->npend];
                    break;
                }
            continue;
        }
        if ((fc__coll_is_coll(k) || fc__coll_is_ctor(k)) && !(rec.ev.flags & FC_EVF_ERROR))
            rc = on_call(g, r, keys, nkeys, &rec);
    }
    fc_cursor_close(cur);
    free(keys);
    return rc < 0 ? rc : 0;
}

static int cmp_member(const void *x, const void *y)
{
    const fc__coll_member *a = x, *b = y;
    return (a->me > b->me) - (a->me < b->me);
}

/* The peers a member's COUNTS cover: the call's members, or a neighbourhood collective's positions. */
static uint32_t peer_width(const gather *g, const raw *rw)
{
    const fc__coll_nbrs *nb = rw->m.nbrs;
    if (nb != NULL)
        return nb->indeg > nb->outdeg ? nb->indeg : nb->outdeg;
    return g->c->calls[rw->call].p;
}

/* The bytes per peer of the members whose records have COUNTS: two arrays of peer_width each in
 * c->peer_bytes, zero where no run covers a peer, pointed to by the raws' members. */
static int peer_bytes(gather *g)
{
    fc__colls *c = g->c;
    size_t total = 0;
    for (size_t q = 0; q < g->nruns; q++)
        if (q == 0 || g->runs[q].raw != g->runs[q - 1].raw)
            total += 2 * (size_t)peer_width(g, &g->raws[g->runs[q].raw]);
    if (total == 0)
        return 0;
    if ((c->peer_bytes = calloc(total, sizeof *c->peer_bytes)) == NULL)
        return FC_ENOMEM;
    uint64_t *at = c->peer_bytes, *to = NULL, *from = NULL;
    for (size_t q = 0; q < g->nruns; q++) {
        const struct run *u = &g->runs[q];
        raw *rw = &g->raws[u->raw];
        uint32_t p = peer_width(g, rw);
        if (q == 0 || u->raw != g->runs[q - 1].raw) {
            to = at;
            from = at + p;
            at += 2 * (size_t)p;
            rw->m.to = to;
            rw->m.from = from;
        }
        for (uint64_t j = 0; j < u->n && (uint64_t)u->first + j < p; j++) {
            to[u->first + j] = u->to;
            from[u->first + j] = u->from;
        }
    }
    return 0;
}

/* Orders the members by call, then member index, into c->members. */
static int place_members(gather *g)
{
    fc__colls *c = g->c;
    if ((c->members = malloc((g->nraws ? g->nraws : 1) * sizeof *c->members)) == NULL)
        return FC_ENOMEM;
    for (size_t i = 0; i < g->nraws; i++)
        c->calls[g->raws[i].call].nmem++;
    size_t at = 0;
    for (size_t i = 0; i < c->ncalls; i++) {
        c->calls[i].first = at;
        at += c->calls[i].nmem;
        c->calls[i].nmem = 0;
    }
    for (size_t i = 0; i < g->nraws; i++) {
        fc__coll_call *cl = &c->calls[g->raws[i].call];
        c->members[cl->first + cl->nmem++] = g->raws[i].m;
    }
    c->nmembers = g->nraws;
    for (size_t i = 0; i < c->ncalls; i++) {
        fc__coll_call *cl = &c->calls[i];
        qsort(c->members + cl->first, cl->nmem, sizeof *c->members, cmp_member);
        for (size_t j = 0; j < cl->nmem; j++) {
            const fc__coll_member *mb = &c->members[cl->first + j];
            uint64_t n = fc__coll_size(fc__coll_persistent(cl->record_kind) ? cl->kind : cl->record_kind, mb->bytes,
                                       mb->bytes2, cl->p);
            if (n > cl->n)
                cl->n = n;
            cl->irregular |= mb->bytes2 != c->members[cl->first].bytes2;
        }
    }
    return 0;
}

/* ---- expanding and timing one call ------------------------------------------------------------ */

typedef struct post {
    uint32_t me, peer;  /* member indices: the poster and its partner */
    uint32_t step, ord; /* the poster's step, and the posting order */
    int send;
    uint64_t bytes;
} post;

/* A send of the expander's posts and the receive it pairs with (indices into its v). */
typedef struct cpair {
    size_t snd, rcv;
} cpair;

typedef struct expander {
    post *v;
    size_t n, cap;
    uint32_t me, step, ord;
    /* Per present member j (the call's member slice): first step index in s/e, steps, width. */
    size_t *off;
    uint32_t *nsteps;
    double *s, *e;
    size_t scap;
    int32_t *pos;       /* member index -> j, or -1: world-sized */
    uint32_t *node;     /* member index -> node: world-sized */
    cpair *pairs;       /* a send of v and its receive */
    size_t pcap;
} expander;

static int ex_post(void *ctx, int send, uint32_t peer, uint64_t bytes)
{
    expander *x = ctx;
    if (fc__grow((void **)&x->v, &x->n, &x->cap, sizeof *x->v) < 0)
        return FC_ENOMEM;
    x->v[x->n++] = (post){.me = x->me, .peer = peer, .step = x->step, .ord = x->ord++, .send = send, .bytes = bytes};
    return 0;
}

static int ex_wait(void *ctx)
{
    ((expander *)ctx)->step++;
    return 0;
}

static int cmp_send(const void *x, const void *y)
{
    const post *a = x, *b = y;
    if (a->me != b->me)
        return a->me < b->me ? -1 : 1;
    if (a->peer != b->peer)
        return a->peer < b->peer ? -1 : 1;
    return (a->ord > b->ord) - (a->ord < b->ord);
}

/* Receives ordered by (source, destination, order), as the sends are. */
static int cmp_recv(const void *x, const void *y)
{
    const post *a = x, *b = y;
    if (a->peer != b->peer)
        return a->peer < b->peer ? -1 : 1;
    if (a->me != b->me)
        return a->me < b->me ? -1 : 1;
    return (a->ord > b->ord) - (a->ord < b->ord);
}

/* Sends first (by source, destination, order), then receives (by source, destination, order). */
static int cmp_post(const void *x, const void *y)
{
    const post *a = x, *b = y;
    if (a->send != b->send)
        return a->send ? -1 : 1;
    return a->send ? cmp_send(x, y) : cmp_recv(x, y);
}

/* The posts the pairs index, for cmp_pair_step (qsort has no context argument); set just before
 * the sort, on one thread at a time as the calls are built. */
static _Thread_local const post *sort_v;

static int cmp_pair_step(const void *x, const void *y)
{
    const cpair *a = x, *b = y;
    uint32_t sa = sort_v[a->snd].step, sb = sort_v[b->snd].step;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    return (a->snd > b->snd) - (a->snd < b->snd);
}

/* The steps of member j after step k start no earlier than the previous one ends. */
static void push_on(expander *x, const fc__coll_member *mb, size_t j, uint32_t k)
{
    size_t o = x->off[j];
    double d = (mb->exit - mb->enter) / x->nsteps[j];
    for (uint32_t q = k; q < x->nsteps[j]; q++) {
        if (q > k && x->s[o + q] < x->e[o + q - 1])
            x->s[o + q] = x->e[o + q - 1];
        x->e[o + q] = x->s[o + q] + d;
    }
}

static int expand_call(fc__colls *c, fc__coll_call *cl, const fc__match *m, expander *x,
                       int (*fn)(void *, const fc__flow *), void *arg)
{
    const fc__coll_member *mem = c->members + cl->first;
    int rc = 0;
    x->n = 0;
    /* The members' nodes, which the ch4 device's compositions follow. */
    for (uint32_t i = 0; i < cl->p; i++)
        x->node[i] = c->mpich_node[cl->ranks[i]];
    fc__coll_nodes nd;
    if (fc__coll_nodes_build(cl->p, x->node, &nd) < 0)
        return FC_ENOMEM;
    fc__coll_layout lay = {.node = x->node, .nodes = &nd, .settings = &c->settings, .inter = cl->inter,
                           .op = cl->op, .irregular = cl->irregular};
    cl->alg = (uint8_t)(cl->inter ? fc__coll_select_inter(cl->kind, cl->inter, cl->p - cl->inter, cl->root, cl->n,
                                                          &c->settings)
                                  : fc__coll_select_in(cl->kind, cl->p, cl->n, &lay));
    for (size_t j = 0; j < cl->nmem; j++) {
        fc__coll_sink sink = {.post = ex_post, .wait = ex_wait, .ctx = x};
        x->me = mem[j].me;
        x->step = x->ord = 0;
        x->pos[mem[j].me] = (int32_t)j;
        lay.to = mem[j].to;
        lay.from = mem[j].from;
        lay.nbrs = mem[j].nbrs;
        lay.received = mem[j].bytes2;
        rc = fc__coll_expand_in(cl->kind, cl->alg, cl->p, mem[j].me, cl->root, cl->n, mem[j].bytes, &lay, &sink);
        if (rc == FC_EUNSUPPORTED) {
            rc = 0;
            x->n = 0;
            if (c->unexpanded++ == 0)
                c->first_unexpanded = (size_t)(cl - c->calls);
            break;
        }
        if (rc < 0)
            goto out;
        x->nsteps[j] = x->step;
    }
    if (x->n == 0)
        goto out;
    /* The steps of every present member, spread evenly over its window. */
    size_t tot = 0;
    for (size_t j = 0; j < cl->nmem; j++) {
        x->off[j] = tot;
        tot += x->nsteps[j];
    }
    if (tot > x->scap) {
        double *s = realloc(x->s, tot * sizeof *s), *e = s ? realloc(x->e, tot * sizeof *e) : NULL;
        if (s)
            x->s = s;
        if (e == NULL) {
            rc = FC_ENOMEM;
            goto out;
        }
        x->e = e;
        x->scap = tot;
    }
    /* Every step starts at the entry until push_on moves it on: push_on only raises a later
     * step's start, so each one needs a value first (the buffer holds a previous call's steps, or
     * nothing yet). */
    for (size_t j = 0; j < cl->nmem; j++)
        if (x->nsteps[j]) {
            for (uint32_t q = 0; q < x->nsteps[j]; q++)
                x->s[x->off[j] + q] = mem[j].enter;
            push_on(x, &mem[j], j, 0);
        }
    /* Pair the k-th send of a to b with the k-th receive of b from a. */
    qsort(x->v, x->n, sizeof *x->v, cmp_post);
    size_t ns = 0, npair = 0, a = 0, b;
    while (ns < x->n && x->v[ns].send)
        ns++;
    b = ns;
    while (a < ns && b < x->n) {
        const post *sp = &x->v[a], *rp = &x->v[b];
        int d = sp->me != rp->peer ? (sp->me < rp->peer ? -1 : 1) : sp->peer != rp->me ? (sp->peer < rp->me ? -1 : 1) : 0;
        if (d < 0)
            a++;
        else if (d > 0)
            b++;
        else {
            if (fc__grow((void **)&x->pairs, &npair, &x->pcap, sizeof *x->pairs) < 0) {
                rc = FC_ENOMEM;
                goto out;
            }
            x->pairs[npair].snd = a++;
            x->pairs[npair++].rcv = b++;
        }
    }
    /* A receiving step starts no earlier than its sending step: relaxed until nothing moves, at
     * most once per step of the call, since an algorithm's dependencies have no cycle. Taken in
     * the order of the senders' steps, the steps of a ring or of recursive doubling settle in one
     * pass, where the order of the ranks took a pass per rank. */
    sort_v = x->v;
    if (npair > 1)
        qsort(x->pairs, npair, sizeof *x->pairs, cmp_pair_step);
    for (size_t round = 0; round <= tot; round++) {
        int changed = 0;
        for (size_t q = 0; q < npair; q++) {
            const post *sp = &x->v[x->pairs[q].snd], *rp = &x->v[x->pairs[q].rcv];
            size_t js = (size_t)x->pos[sp->me], jr = (size_t)x->pos[rp->me];
            double ready = x->s[x->off[js] + sp->step];
            size_t at = x->off[jr] + rp->step;
            if (x->s[at] < ready) {
                x->s[at] = ready;
                push_on(x, &mem[jr], jr, rp->step);
                changed = 1;
            }
        }
        if (!changed)
            break;
    }
    /* Every step ends by the member's exit, the last one there. */
    for (size_t j = 0; j < cl->nmem; j++) {
        size_t o = x->off[j];
        for (uint32_t q = 0; q < x->nsteps[j]; q++) {
            x->s[o + q] = fmin(x->s[o + q], mem[j].exit);
            x->e[o + q] = fmin(x->e[o + q], mem[j].exit);
        }
        if (x->nsteps[j])
            x->e[o + x->nsteps[j] - 1] = mem[j].exit;
    }
    fc__coll_kind_sum *ks = &c->kinds[cl->record_kind];
    for (size_t q = 0; q < npair && rc == 0; q++) {
        const post *sp = &x->v[x->pairs[q].snd], *rp = &x->v[x->pairs[q].rcv];
        size_t js = (size_t)x->pos[sp->me], jr = (size_t)x->pos[rp->me];
        const fc__coll_member *ms = &mem[js], *mr = &mem[jr];
        fc__flow f;
        memset(&f, 0, sizeof f);
        f.src_rank = ms->rank;
        f.dst_rank = mr->rank;
        f.src_node = m->rank_node[ms->rank];
        f.dst_node = m->rank_node[mr->rank];
        f.intra = f.src_node == f.dst_node;
        f.bytes = sp->bytes;
        f.rendezvous = f.bytes >= m->eager_threshold;
        f.send_start = x->s[x->off[js] + sp->step];
        f.send_end = x->e[x->off[js] + sp->step];
        f.recv_post = x->s[x->off[jr] + rp->step];
        f.start = f.rendezvous && f.recv_post > f.send_start ? f.recv_post : f.send_start;
        f.end = f.recv_end = fmax(x->e[x->off[jr] + rp->step], f.start);
        f.observed = f.end - f.start;
        f.send_site = ms->site;
        f.recv_site = mr->site;
        f.tag = -1;
        f.send_kind = f.recv_kind = (uint16_t)cl->record_kind;
        f.coll = (uint8_t)cl->record_kind;
        f.coll_alg = cl->alg;
        f.coll_step = sp->step > UINT16_MAX ? UINT16_MAX : (uint16_t)sp->step;
        cl->nflows++;
        ks->flows++;
        c->flows++;
        if (f.intra) {
            cl->intra_bytes += f.bytes;
            ks->intra_bytes += f.bytes;
        } else {
            cl->inter_bytes += f.bytes;
            ks->inter_bytes += f.bytes;
            ks->inter_flows++;
            c->inter_flows++;
        }
        rc = fn(arg, &f);
    }
out:
    for (size_t j = 0; j < cl->nmem; j++)
        x->pos[mem[j].me] = -1;
    fc__coll_nodes_free(&nd);
    return rc;
}

/* ---- collective wait states ------------------------------------------------------------------- */

static void wait_states(fc__colls *c, fc__coll_call *cl)
{
    const fc__coll_member *mem = c->members + cl->first;
    if (cl->nmem != cl->p || cl->nmem == 0)
        return; /* a member's entry is unknown: so is everyone's wait */
    double last = mem[0].enter, first_other = INFINITY, root_enter = mem[0].enter;
    for (size_t j = 0; j < cl->nmem; j++) {
        if (mem[j].enter > last)
            last = mem[j].enter;
        if (mem[j].me == cl->root)
            root_enter = mem[j].enter;
        else if (mem[j].enter < first_other)
            first_other = mem[j].enter;
    }
    for (size_t j = 0; j < cl->nmem; j++) {
        const fc__coll_member *mb = &mem[j];
        double in = mb->exit - mb->enter, w;
        switch (cl->record_kind) {
        case FC_EV_MPI_Barrier: case FC_EV_MPI_Allreduce: case FC_EV_MPI_Allgather:
        case FC_EV_MPI_Allgatherv: case FC_EV_MPI_Alltoall: case FC_EV_MPI_Alltoallv:
        case FC_EV_MPI_Alltoallw: case FC_EV_MPI_Reduce_scatter: case FC_EV_MPI_Reduce_scatter_block:
            w = fmin(last - mb->enter, in);
            if (w > 0) {
                c->wait_nxn[mb->rank] += w;
                cl->wait_s += w;
            }
            break;
        case FC_EV_MPI_Bcast: case FC_EV_MPI_Scatter: case FC_EV_MPI_Scatterv:
            w = fmin(root_enter - mb->enter, in);
            if (mb->me != cl->root && w > 0) {
                c->late_bcast[mb->rank] += w;
                cl->wait_s += w;
            }
            break;
        case FC_EV_MPI_Reduce: case FC_EV_MPI_Gather: case FC_EV_MPI_Gatherv:
            w = fmin(first_other - mb->enter, in);
            if (mb->me == cl->root && w > 0) {
                c->early_reduce[mb->rank] += w;
                cl->wait_s += w;
            }
            break;
        case FC_EV_MPI_Neighbor_allgather: case FC_EV_MPI_Neighbor_allgatherv: case FC_EV_MPI_Neighbor_alltoall:
        case FC_EV_MPI_Neighbor_alltoallv: case FC_EV_MPI_Neighbor_alltoallw: {
            /* An N-to-N wait among the neighbours only: a member needs the data of each of its
             * sources, so it waits until the last of them enters (MPI_PROC_NULL sends nothing). */
            double lastin = -INFINITY;
            for (uint32_t k = 0; mb->nbrs != NULL && k < mb->nbrs->indeg; k++) {
                uint32_t s = mb->nbrs->src[k];
                if (s < cl->nmem && mem[s].me == s)
                    lastin = fmax(lastin, mem[s].enter);
            }
            w = fmin(lastin - mb->enter, in);
            if (w > 0) {
                c->wait_nxn[mb->rank] += w;
                cl->wait_s += w;
            }
            break;
        }
        default:
            break;
        }
    }
}

/* ---- the calls of a trace --------------------------------------------------------------------- */

void fc__colls_free(fc__colls *c)
{
    if (c == NULL)
        return;
    free(c->calls);
    free(c->members);
    free(c->wait_nxn);
    free(c->late_bcast);
    free(c->early_reduce);
    free(c->world_ranks);
    free(c->mpich_node);
    free(c->peer_bytes);
    for (size_t i = 0; i < c->ninter_lists; i++)
        free(c->inter_lists[i].ranks);
    free(c->inter_lists);
    for (size_t i = 0; i < c->nnbr_lists; i++)
        free(c->nbr_lists[i]);
    free(c->nbr_lists);
    free(c);
}

int fc__coll_mpich_nodes(const fc_trace *t, const fc__coll_settings *s, uint32_t world, uint32_t *out)
{
    /* Hosts by their first rank, and each rank's place among its host's ranks. */
    uint32_t *first = malloc((world ? world : 1) * sizeof *first), *idx = malloc((world ? world : 1) * sizeof *idx);
    uint32_t *count = calloc(world ? world : 1, sizeof *count), nh = 0;
    const char **name = malloc((world ? world : 1) * sizeof *name);
    if (first == NULL || idx == NULL || count == NULL || name == NULL) {
        free(first);
        free(idx);
        free(count);
        free(name);
        return FC_ENOMEM;
    }
    for (uint32_t w = 0; w < world; w++) {
        long ix = fc_trace_find(t, w);
        const fc_rank *r = ix >= 0 ? fc_trace_rank(t, (size_t)ix) : NULL;
        const char *host = r != NULL ? r->info.host : NULL;
        if (host == NULL || host[0] == '\0' || s->nolocal) {
            out[w] = UINT32_MAX - w; /* alone */
            idx[w] = UINT32_MAX;
            continue;
        }
        uint32_t h = 0;
        while (h < nh && strcmp(name[h], host) != 0)
            h++;
        if (h == nh)
            name[nh++] = host;
        first[w] = h;
        idx[w] = count[h]++;
    }
    uint32_t k = s->cliques > 1 ? s->cliques : 1;
    for (uint32_t w = 0; w < world; w++) {
        if (idx[w] == UINT32_MAX)
            continue;
        uint32_t h = first[w], block = (count[h] + k - 1) / k, clique = k == 1 ? 0 : s->cliques_by_block ? idx[w] / block : idx[w] % k;
        out[w] = h * k + clique;
    }
    free(first);
    free(idx);
    free(count);
    free(name);
    return 0;
}

/* The calls, read in a pass of their own unless want_pass is 0 (a match that saw none). */
static int build(fc_trace *t, const fc__match *m, int want_pass, int (*fn)(void *arg, const fc__flow *f), void *arg,
                 fc__colls **out)
{
    gather g;
    expander x;
    memset(&g, 0, sizeof g);
    memset(&x, 0, sizeof x);
    int rc = FC_ENOMEM;
    fc__colls *c = calloc(1, sizeof *c);
    *out = NULL;
    if (c == NULL)
        return FC_ENOMEM;
    c->world = m->world;
    size_t w = c->world ? c->world : 1;
    if ((c->world_ranks = malloc(w * sizeof *c->world_ranks)) == NULL ||
        (c->wait_nxn = calloc(w, sizeof(double))) == NULL || (c->late_bcast = calloc(w, sizeof(double))) == NULL ||
        (c->early_reduce = calloc(w, sizeof(double))) == NULL || (x.pos = malloc(w * sizeof *x.pos)) == NULL ||
        (x.off = malloc(w * sizeof *x.off)) == NULL || (x.nsteps = malloc(w * sizeof *x.nsteps)) == NULL ||
        (x.node = malloc(w * sizeof *x.node)) == NULL)
        goto out;
    for (uint32_t r = 0; r < c->world; r++) {
        c->world_ranks[r] = r;
        x.pos[r] = -1;
    }
    fc__colls_settings(t, c);
    if ((c->mpich_node = malloc(w * sizeof *c->mpich_node)) == NULL ||
        (rc = fc__coll_mpich_nodes(t, &c->settings, c->world, c->mpich_node)) < 0)
        goto out;
    rc = FC_ENOMEM;
    g.c = c;
    g.origin = fc_trace_origin(t);
    for (size_t i = 0; i < fc_trace_nranks(t) && want_pass; i++)
        if ((rc = read_rank(&g, t, i)) < 0)
            goto out;
    if ((rc = peer_bytes(&g)) < 0 || (rc = place_members(&g)) < 0)
        goto out;
    for (size_t i = 0; i < c->ncalls; i++) {
        fc__coll_call *cl = &c->calls[i];
        c->kinds[cl->record_kind].calls++;
        if (cl->nmem != cl->p || cl->dropped) {
            if (c->incomplete++ == 0)
                c->first_incomplete = i;
        }
        wait_states(c, cl);
        if ((rc = expand_call(c, cl, m, &x, fn, arg)) != 0)
            goto out;
    }
    *out = c;
    c = NULL;
    rc = 0;
out:
    fc__colls_free(c);
    free(g.map);
    free(g.raws);
    free(g.seqs);
    free(g.pend);
    free(g.runs);
    free(g.rnb);
    free(g.tm);
    free(g.truns);
    free(x.v);
    free(x.off);
    free(x.nsteps);
    free(x.s);
    free(x.e);
    free(x.pos);
    free(x.node);
    free(x.pairs);
    return rc;
}

int fc__colls_build(fc_trace *t, const fc__match *m, int (*fn)(void *arg, const fc__flow *f), void *arg,
                    fc__colls **out)
{
    return build(t, m, 1, fn, arg, out);
}

int fc__colls_none(fc_trace *t, const fc__match *m, fc__colls **out)
{
    return build(t, m, 0, NULL, NULL, out);
}

void fc__colls_settings(const fc_trace *t, fc__colls *c)
{
    c->unsupported = fc__coll_trace_settings(t, &c->settings, c->unsupported_text, sizeof c->unsupported_text);
}

uint32_t fc__coll_trace_settings(const fc_trace *t, fc__coll_settings *s, char *text, size_t n)
{
    uint32_t unsupported = 0;
    memset(s, 0, sizeof *s);
    if (n)
        text[0] = '\0';
    for (size_t i = 0; i < fc_trace_nranks(t); i++) {
        const fc_rank *r = fc_trace_rank(t, i);
        if (r->coll_env == NULL)
            continue;
        /* NAME=VALUE entries, each ended by a NUL: one rank's, since the launcher gives every
         * rank the same environment. */
        for (const char *p = r->coll_env; p < r->coll_env + r->coll_env_len; p += strlen(p) + 1) {
            const char *eq = strchr(p, '=');
            char name[128];
            if (eq == NULL || (size_t)(eq - p) >= sizeof name)
                continue;
            memcpy(name, p, (size_t)(eq - p));
            name[eq - p] = '\0';
            if (fc__coll_setting(s, name, eq + 1) == FC_EUNSUPPORTED && unsupported++ == 0 && n)
                snprintf(text, n, "%s", p);
        }
        break;
    }
    return unsupported;
}
