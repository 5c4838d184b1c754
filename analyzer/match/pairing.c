/* analyzer/match/pairing.c: what a matched pair of instances becomes: a flow, its wait states
 * (Late Sender, Late Receiver) summed per call and per call site, and the traffic between nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "match/matcher.h"

int fc__mt_cmp_site(const void *a, const void *b)
{
    const fc__wait_site *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->site > y->site) - (x->site < y->site);
}

static double secs(const pairing *p, int64_t ns)
{
    return (double)(ns - p->origin) * 1e-9;
}

int fc__mt_add_unmatched(pairing *p, const msg *m, int send, uint32_t reason)
{
    fc__match *res = p->res;
    if (fc__grow((void **)&res->unmatched, &res->nunmatched, &p->nunm_cap, sizeof *res->unmatched) < 0)
        return FC_ENOMEM;
    fc__unmatched *u = &res->unmatched[res->nunmatched++];
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
void fc__mt_tab_put(uint32_t *t, size_t cap, uint64_t h, uint32_t i)
{
    size_t j = h & (cap - 1);
    while (t[j])
        j = (j + 1) & (cap - 1);
    t[j] = i + 1;
}

/* 1 when entry i is the live call (rank, site, t0). */
int fc__mt_call_is(const pairing *p, uint32_t i, uint32_t rank, uint64_t site, int64_t t0)
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
        fc__mt_tab_put(t, cap, call_hash(c->rank, c->site, c->t0), o[k].i);
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
int fc__mt_call_live(pairing *p, uint32_t *ix, int renumber)
{
    size_t n = 0;
    for (size_t i = 0; i < p->ncalls; i++)
        if (p->calls[i].live)
            ix[n++] = (uint32_t)i;
    return call_order(p, ix, n, renumber);
}

/* The entry of call (rank, site, t0), made when absent; NOMSG when out of memory. */
uint32_t fc__mt_call_make(pairing *p, uint32_t rank, uint64_t site, int64_t t0)
{
    uint32_t i = call_find(p, rank, site, t0), l = rank; /* its list in rhead and rmax */
    if (i != NOMSG)
        return i;
    if (2 * (p->clive + 1) > p->ctcap) {
        /* The table's rehash inserts its entries in the order of its old slots. */
        uint32_t *ix = malloc((p->clive + 1) * sizeof *ix);
        if (ix == NULL || fc__mt_call_live(p, ix, 1) < 0) {
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
int fc__mt_call_flush(pairing *p, uint32_t i)
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
    return site_add(p, c->rank, c->site, c->ls, c->multi && c->ls > 0 ? 0 : c->lr);
}

/* The row of site (rank, site) in res->sites, made when new; NULL when out of memory. */
static fc__wait_site *site_row(pairing *p, uint32_t rank, uint64_t site)
{
    fc__match *res = p->res;
    uint64_t h = call_hash(rank, site, 0);
    size_t k = p->stcap ? h & (p->stcap - 1) : 0;
    for (; p->stcap && p->stab[k]; k = (k + 1) & (p->stcap - 1)) {
        fc__wait_site *d = &res->sites[p->stab[k] - 1];
        if (d->rank == rank && d->site == site)
            return d;
    }
    if (2 * (res->nsites + 1) > p->stcap) {
        size_t ncap = p->stcap ? 2 * p->stcap : 64;
        uint32_t *t = calloc(ncap, sizeof *t);
        if (t == NULL)
            return NULL;
        for (size_t q = 0; q < res->nsites; q++)
            fc__mt_tab_put(t, ncap, call_hash(res->sites[q].rank, res->sites[q].site, 0), (uint32_t)q);
        free(p->stab);
        p->stab = t;
        p->stcap = ncap;
    }
    if (fc__grow((void **)&res->sites, &res->nsites, &p->scap, sizeof *res->sites) < 0)
        return NULL;
    fc__wait_site *d = &res->sites[res->nsites];
    memset(d, 0, sizeof *d);
    d->rank = rank;
    d->site = site;
    fc__mt_tab_put(p->stab, p->stcap, h, (uint32_t)res->nsites++);
    return d;
}

/* Adds one call's wait states (ls, lr seconds) to its site and rank. A rank's waits mostly come
 * from the site of its previous one: that row is remembered per rank (rows keep their index until
 * the final sort), and the table only asked on a change of site. */
static inline __attribute__((always_inline)) int site_add(pairing *p, uint32_t rank, uint64_t site, double ls,
                                                          double lr)
{
    fc__match *res = p->res;
    if (ls <= 0 && lr <= 0)
        return 0;
    /* The rank that waited is the one whose record posted or completed the message: below world. */
    fc__wait_site *d;
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

/* The thread that made call (rank, site, t0) started another: no more messages join it. memo is
 * the thread's remembered entry (thr.call). */
int fc__mt_call_close(pairing *p, uint32_t rank, uint64_t site, int64_t t0, uint32_t memo)
{
    uint32_t i = memo - 1;
    if (memo == 0 || !fc__mt_call_is(p, i, rank, site, t0)) {
        if (p->st[rank].nopen == 0)
            return 0;
        if ((i = call_find(p, rank, site, t0)) == NOMSG)
            return 0;
    }
    if (p->calls[i].open)
        p->st[rank].nopen--;
    p->calls[i].open = 0;
    return p->calls[i].refs == 0 ? fc__mt_call_flush(p, i) : 0;
}

/* ---- traffic between nodes ------------------------------------------------------------------- */

/* Up to this many nodes the sums are a matrix (2 x 8 MiB at most), the cheapest to add to; above,
 * a table of the pairs that talk, whose memory follows them and not the square of the nodes. A
 * variable, so that the tests take both ways on a few nodes (match.h). */
size_t fc__traffic_dense = 1024;

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
        fc__traffic *c = calloc(ncap, sizeof *c);
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
    fc__traffic *c = &a->cell[h];
    if (c->count == 0) {
        *c = (fc__traffic){.src = s, .dst = d};
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

int fc__mt_traffic_acc_new(fc__match *res)
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

void fc__mt_traffic_acc_free(struct fc__traffic_acc *a)
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
    const fc__traffic *a = x, *b = y;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    return (a->dst > b->dst) - (a->dst < b->dst);
}

/* Turns the sums into res->traffic, in order, and counts the inter-node flows: those off the
 * diagonal, where each flow counts once. Returns 0 or FC_ENOMEM. */
int fc__mt_traffic_finish(fc__match *res)
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
                res->traffic[res->ntraffic++] = (fc__traffic){.src = (uint32_t)(i / a->nn), .dst = (uint32_t)(i % a->nn), .count = a->tc[i], .bytes = a->tb[i]};
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
    fc__mt_traffic_acc_free(a);
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
    c->multi |= (m->flags & MF_WAITMULTI) != 0;
    c->lr = lr > c->lr ? lr : c->lr;
    return 0;
}

/* Turns a matched fc__mt_pair into a flow and its wait states; an incomplete receive is reported instead
 * (rdone: the caller has seen it complete). */
int fc__mt_pair(pairing *p, const msg *s, const msg *r, int rdone)
{
    fc__match *res = p->res;
    if (!rdone && !(r->flags & MF_DONE))
        return fc__mt_add_unmatched(p, r, 0, FC_UNMATCHED_INCOMPLETE);
    fc__flow fl, *f = &fl; /* every field set below */
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
    int64_t start = (f->rendezvous & (r->post > s->post)) ? r->post : s->post;
    f->start = secs(p, start);
    f->end = f->recv_end;
    f->observed = f->end - f->start;
    f->tag = r->tag;
    f->send_kind = (uint16_t)s->kind;
    f->recv_kind = (uint16_t)r->kind;
    f->coll = 0;
    f->coll_alg = 0;
    f->coll_step = 0;
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
    /* A send that waits for its receive cannot complete before the receive is posted. */
    int waits = ((s->flags & MF_SYNC) != 0) | (f->rendezvous & !(s->flags & MF_BUFFERED));
    /* A request completed by a Test was polled: its rank took part from the post. */
    res->cur_waits = (fc__flow_waits){secs(p, (s->flags & MF_TESTED) ? s->post : s->wait_t0),
                                     secs(p, (r->flags & MF_TESTED) ? r->post : r->wait_t0), 0};
    if (waits && (s->flags & MF_DONE) && s->end < r->post) {
        res->cur_waits.send_early = 1;
        double v = (double)(r->post - s->end) * 1e-9;
        if (res->send_violations == 0 || v > res->worst_send_violation) {
            res->worst_send_violation = v;
            res->worst_send_flow = f->id;
            res->worst_send_src = f->src_rank;
            res->worst_send_dst = f->dst_rank;
        }
        res->send_violations++;
        uint64_t unc = (s->src < res->world ? p->unc[s->src] : 0) + (r->dst < res->world ? p->unc[r->dst] : 0);
        if ((uint64_t)(r->post - s->end) > unc)
            res->send_violations_beyond++;
    }
    /* Late Sender: the receive (or the wait on it) entered before the send was posted, and waited
     * until that post or its own end. */
    int64_t ls = (s->post < r->end ? s->post : r->end) - r->wait_t0;
    if (((r->flags & MF_WAITED) != 0) & !(r->flags & MF_TESTED) & (ls > 0)) {
        int rc = add_wait(p, r, (double)ls * 1e-9, 0);
        if (rc < 0)
            return rc;
    }
    /* Late Receiver: a send that must wait for the receive, entered before the receive was posted,
     * waited until that post. A send that ended before the post contradicts the clocks and waited
     * for nothing that can be told: 0, as Scalasca counts it, so that both tools agree. */
    int64_t lr = r->post < s->end ? r->post - s->wait_t0 : 0;
    /* Scalasca's Late Receiver: a blocking MPI_Send or MPI_Ssend, or a send request completed by a
     * Wait, whatever its protocol. */
    int lr_call = (s->flags & MF_SOLE) ? (s->kind == FC_EV_MPI_Send || s->kind == FC_EV_MPI_Ssend)
                                       : ((s->flags & MF_WAITED) && !(s->flags & MF_TESTED) &&
                                          s->kind != FC_EV_MPI_Sendrecv && s->kind != FC_EV_MPI_Sendrecv_replace);
    if (lr_call & (lr > 0)) {
        int rc = add_wait(p, s, 0, (double)lr * 1e-9);
        if (rc < 0)
            return rc;
    }
    res->nflows++; /* ninter is counted at the end, from the traffic */
    return p->flow(p->arg, f);
}
