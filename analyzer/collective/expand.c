/* analyzer/collective/expand.c: expands MPI collectives into the point-to-point messages of the
 * algorithms of MPICH 4's MPIR layer and of the ch4 device's node-aware compositions (collective.h
 * lists them; select.c chooses one). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <flowcut/error.h>
#include <flowcut/format.h>
#include "collective/collective.h"

/* The emitting state of one member: what it posts goes to the sink with member indices. An
 * algorithm runs on p members numbered 0 .. p-1: the communicator's, or a part of it (the leaders
 * of the nodes, the members of one node) whose index i is the communicator's base + map[i]. */
typedef struct em {
    const fc__coll_sink *s;
    uint32_t p;
    const uint32_t *map; /* NULL: the communicator's members base .. base + p - 1 */
    uint32_t base;       /* where the part's numbering starts: one group of an inter-communicator */
} em;

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_ < 0)                                                                               \
            return rc_;                                                                            \
    } while (0)

static uint32_t who(const em *e, uint32_t peer)
{
    return e->base + (e->map ? e->map[peer % e->p] : peer % e->p);
}

static int snd(const em *e, uint32_t peer, uint64_t b)
{
    return e->s->post(e->s->ctx, 1, who(e, peer), b);
}

static int rcv(const em *e, uint32_t peer, uint64_t b)
{
    return e->s->post(e->s->ctx, 0, who(e, peer), b);
}

static int wt(const em *e)
{
    return e->s->wait(e->s->ctx);
}

/* A blocking exchange (MPIC_Sendrecv): send to dst and receive from src, then wait for both. */
static int xchg(const em *e, uint32_t dst, uint32_t src, uint64_t b)
{
    TRY(snd(e, dst, b));
    TRY(rcv(e, src, b));
    return wt(e);
}

static uint32_t pof2_below(uint32_t p)
{
    uint32_t x = 1;
    while (x * 2 <= p)
        x *= 2;
    return x;
}

static int is_pof2(uint32_t p)
{
    return p && (p & (p - 1)) == 0;
}

static uint64_t clamp(uint64_t x, uint64_t n)
{
    return x < n ? x : n;
}

/* Binomial broadcast (MPIR_Bcast_intra_binomial): receive from the parent, then send to the
 * children, farthest first, each a blocking call. rel is the rank relative to the root. */
static int bcast_binomial(const em *e, uint32_t rel, uint32_t root, uint64_t n)
{
    uint32_t p = e->p, mask = 1;
    while (mask < p) {
        if (rel & mask) {
            TRY(rcv(e, rel - mask + root, n));
            TRY(wt(e));
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < p) {
            TRY(snd(e, rel + mask + root, n));
            TRY(wt(e));
        }
    return 0;
}

/* The binomial scatter that starts MPICH's long broadcasts: blocks of ss bytes, the subtree of
 * rel (ranks rel .. rel + lowbit(rel) - 1) receives its blocks from its parent. */
static int bcast_scatter(const em *e, uint32_t rel, uint32_t root, uint64_t n, uint64_t ss)
{
    uint32_t p = e->p, mask = 1;
    while (mask < p) {
        if (rel & mask) {
            uint32_t hi = rel + mask < p ? rel + mask : p;
            uint64_t b = clamp((uint64_t)hi * ss, n) - clamp((uint64_t)rel * ss, n);
            TRY(rcv(e, rel - mask + root, b));
            TRY(wt(e));
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < p) {
            uint32_t c = rel + mask, hi = c + mask < p ? c + mask : p;
            uint64_t b = clamp((uint64_t)hi * ss, n) - clamp((uint64_t)c * ss, n);
            TRY(snd(e, c + root, b));
            TRY(wt(e));
        }
    return 0;
}

/* Folds the ranks beyond the largest power of two (MPICH's recursive-doubling preamble): the even
 * ranks of the first 2 * rem send their data to the odd ones and sit out. Returns the new rank, or
 * -1 for a rank that sits out. */
static long fold_in(const em *e, uint32_t me, uint32_t rem, uint64_t n, int *rc)
{
    *rc = 0;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            if ((*rc = snd(e, me + 1, n)) < 0 || (*rc = wt(e)) < 0)
                return -1;
            return -1;
        }
        if ((*rc = rcv(e, me - 1, n)) < 0 || (*rc = wt(e)) < 0)
            return -1;
        return me / 2;
    }
    return me - rem;
}

/* The actual rank of new rank nr. */
static uint32_t unfold(uint32_t nr, uint32_t rem)
{
    return nr < rem ? nr * 2 + 1 : nr + rem;
}

/* Sends the result back to the ranks that sat out. */
static int fold_out(const em *e, uint32_t me, uint32_t rem, uint64_t n)
{
    if (me >= 2 * rem)
        return 0;
    if (me % 2)
        TRY(snd(e, me - 1, n));
    else
        TRY(rcv(e, me + 1, n));
    return wt(e);
}

/* Allreduce: recursive doubling, or (long) recursive-halving reduce-scatter then
 * recursive-doubling allgather (Rabenseifner). */
static int allreduce(const em *e, uint32_t me, uint64_t n, int rabenseifner)
{
    uint32_t p = e->p, pof2 = pof2_below(p), rem = p - pof2;
    int rc;
    long nr = fold_in(e, me, rem, n, &rc);
    if (rc < 0)
        return rc;
    if (nr >= 0) {
        if (!rabenseifner) {
            for (uint32_t mask = 1; mask < pof2; mask <<= 1)
                TRY(xchg(e, unfold((uint32_t)nr ^ mask, rem), unfold((uint32_t)nr ^ mask, rem), n));
        } else {
            for (uint32_t mask = 1; mask < pof2; mask <<= 1) {
                uint32_t d = unfold((uint32_t)nr ^ mask, rem);
                TRY(xchg(e, d, d, n / (2 * (uint64_t)mask)));
            }
            for (uint32_t mask = pof2 / 2; mask > 0; mask >>= 1) {
                uint32_t d = unfold((uint32_t)nr ^ mask, rem);
                TRY(xchg(e, d, d, n / (2 * (uint64_t)mask)));
            }
        }
    }
    return fold_out(e, me, rem, n);
}

/* Reduce: binomial tree towards the root (commutative operations), each step a blocking call. */
static int reduce_binomial(const em *e, uint32_t rel, uint32_t root, uint64_t n)
{
    uint32_t p = e->p;
    for (uint32_t mask = 1; mask < p; mask <<= 1) {
        if ((rel & mask) == 0) {
            if ((rel | mask) < p) {
                TRY(rcv(e, (rel | mask) + root, n));
                TRY(wt(e));
            }
        } else {
            TRY(snd(e, (rel & ~mask) + root, n));
            return wt(e);
        }
    }
    return 0;
}

/* Reduce (long): fold, recursive-halving reduce-scatter, binomial gather of the pieces to new
 * rank 0, and a last message to the root when that is another rank. */
static int reduce_rsg(const em *e, uint32_t me, uint32_t root, uint64_t n)
{
    uint32_t p = e->p, pof2 = pof2_below(p), rem = p - pof2;
    int rc;
    long nr = fold_in(e, me, rem, n, &rc);
    if (rc < 0)
        return rc;
    if (nr >= 0) {
        for (uint32_t mask = 1; mask < pof2; mask <<= 1) {
            uint32_t d = unfold((uint32_t)nr ^ mask, rem);
            TRY(xchg(e, d, d, n / (2 * (uint64_t)mask)));
        }
        for (uint32_t mask = 1; mask < pof2; mask <<= 1) {
            uint64_t b = n * mask / pof2;
            if ((uint32_t)nr & mask) {
                TRY(snd(e, unfold((uint32_t)nr ^ mask, rem), b));
                TRY(wt(e));
                break;
            }
            TRY(rcv(e, unfold((uint32_t)nr | mask, rem), b));
            TRY(wt(e));
        }
    }
    uint32_t first = unfold(0, rem);
    if (first != root) {
        if (me == first) {
            TRY(snd(e, root, n));
            TRY(wt(e));
        } else if (me == root) {
            TRY(rcv(e, first, n));
            TRY(wt(e));
        }
    }
    return 0;
}

/* The bytes of the blocks of members first .. first + count - 1 (indices modulo p): block[] when
 * the blocks differ (Allgatherv), else b each. */
static uint64_t blocks_of(const em *e, const uint64_t *block, uint64_t b, uint32_t first, uint32_t count)
{
    if (block == NULL)
        return b * count;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < count; i++)
        sum += block[(first + i) % e->p];
    return sum;
}

/* A blocking exchange whose two directions differ in size (MPIC_Sendrecv of uneven blocks). */
static int xchg2(const em *e, uint32_t dst, uint64_t out, uint32_t src, uint64_t in)
{
    TRY(snd(e, dst, out));
    TRY(rcv(e, src, in));
    return wt(e);
}

/* Allgather of blocks of b bytes (or block[i] bytes of member i) among all members: recursive
 * doubling (power-of-two sizes: the subtree of 2^k blocks that holds me goes to me ^ 2^k), Bruck
 * (the blocks gathered so far, doubling, to me - k from me + k) or ring (the block received in the
 * previous step goes on to me + 1). */
static int allgather(const em *e, uint32_t me, uint64_t b, const uint64_t *block, unsigned alg)
{
    uint32_t p = e->p;
    if (alg == FC__CA_RECURSIVE_DOUBLING && is_pof2(p)) {
        for (uint32_t mask = 1; mask < p; mask <<= 1) {
            uint32_t mine = me & ~(mask - 1), theirs = (me ^ mask) & ~(mask - 1);
            TRY(xchg2(e, me ^ mask, blocks_of(e, block, b, mine, mask), me ^ mask, blocks_of(e, block, b, theirs, mask)));
        }
    } else if (alg == FC__CA_BRUCKS || alg == FC__CA_RECURSIVE_DOUBLING) {
        for (uint32_t k = 1; k < p; k <<= 1) {
            uint32_t blocks = k < p - k ? k : p - k;
            TRY(xchg2(e, me + p - k, blocks_of(e, block, b, me, blocks), me + k, blocks_of(e, block, b, me + k, blocks)));
        }
    } else {
        for (uint32_t i = 1; i < p; i++)
            TRY(xchg2(e, me + 1, blocks_of(e, block, b, me + p - i + 1, 1), me + p - 1, blocks_of(e, block, b, me + p - i, 1)));
    }
    return 0;
}

/* Gather (binomial): each subtree's blocks go up to its parent. */
static int gather_binomial(const em *e, uint32_t rel, uint32_t root, uint64_t b)
{
    uint32_t p = e->p;
    for (uint32_t mask = 1; mask < p; mask <<= 1) {
        if (rel & mask) {
            uint32_t sub = mask < p - rel ? mask : p - rel;
            TRY(snd(e, rel - mask + root, b * sub));
            return wt(e);
        }
        if (rel + mask < p) {
            uint32_t sub = mask < p - rel - mask ? mask : p - rel - mask;
            TRY(rcv(e, rel + mask + root, b * sub));
            TRY(wt(e));
        }
    }
    return 0;
}

/* Scatter (binomial): the reverse of the gather. */
static int scatter_binomial(const em *e, uint32_t rel, uint32_t root, uint64_t b)
{
    uint32_t p = e->p, mask = 1;
    while (mask < p) {
        if (rel & mask) {
            uint32_t sub = mask < p - rel ? mask : p - rel;
            TRY(rcv(e, rel - mask + root, b * sub));
            TRY(wt(e));
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < p) {
            uint32_t sub = mask < p - rel - mask ? mask : p - rel - mask;
            TRY(snd(e, rel + mask + root, b * sub));
            TRY(wt(e));
        }
    return 0;
}

/* Every post first, one wait (MPICH's "scattered" and linear algorithms). to/from select the
 * directions; b is the bytes to each peer. */
static int scattered(const em *e, uint32_t me, int to, int from, uint64_t b)
{
    for (uint32_t i = 1; i < e->p; i++) {
        if (from)
            TRY(rcv(e, me + e->p - i, b));
        if (to)
            TRY(snd(e, me + i, b));
    }
    return wt(e);
}

/* Bruck's all-to-all (MPIR_Alltoall_intra_brucks): in step k (k = 1, 2, 4 ...) every member
 * sends to me + k and receives from me - k the blocks whose index has bit k set, b bytes each. */
static int alltoall_brucks(const em *e, uint32_t me, uint64_t b)
{
    uint32_t p = e->p;
    for (uint32_t k = 1; k < p; k <<= 1) {
        uint64_t blocks = 0;
        for (uint32_t i = 0; i < p; i++)
            if (i & k)
                blocks++;
        TRY(xchg(e, me + k, me + p - k, b * blocks));
    }
    return 0;
}

/* Member me's part of MPIR's algorithm alg for kind on the p members of e (e.p). to and from:
 * the bytes per peer of the v and w forms, or NULL. */
static int flat(const em *ep, unsigned kind, unsigned alg, uint32_t me, uint32_t root, uint64_t n, uint64_t own,
                const uint64_t *to, const uint64_t *from)
{
    em e = *ep;
    uint32_t p = e.p;
    if (p <= 1)
        return 0;
    uint32_t rel = (me + p - root) % p;
    switch (kind) {
    case FC_EV_MPI_Barrier:
    case FC_EV_MPI_Ibarrier:
        for (uint32_t d = 1; d < p; d <<= 1)
            TRY(xchg(&e, me + d, me + p - d, 0));
        return 0;
    case FC_EV_MPI_Bcast:
    case FC_EV_MPI_Ibcast:
        if (alg == FC__CA_BINOMIAL)
            return bcast_binomial(&e, rel, root, n);
        uint64_t ss = (n + p - 1) / p;
        TRY(bcast_scatter(&e, rel, root, n, ss));
        if (alg == FC__CA_SCATTER_RD_ALLGATHER && is_pof2(p)) {
            /* Partners by rank relative to the root, as the scatter placed the blocks. */
            for (uint32_t mask = 1; mask < p; mask <<= 1)
                TRY(xchg(&e, (rel ^ mask) + root, (rel ^ mask) + root, ss * mask));
        } else {
            for (uint32_t i = 1; i < p; i++)
                TRY(xchg(&e, me + 1, me + p - 1, ss));
        }
        return 0;
    case FC_EV_MPI_Allreduce:
    case FC_EV_MPI_Iallreduce:
        return allreduce(&e, me, n, alg == FC__CA_REDUCE_SCATTER_ALLGATHER);
    case FC_EV_MPI_Reduce:
    case FC_EV_MPI_Ireduce:
        if (alg == FC__CA_BINOMIAL)
            return reduce_binomial(&e, rel, root, n);
        return reduce_rsg(&e, me, root, n);
    case FC_EV_MPI_Allgather:
    case FC_EV_MPI_Iallgather:
    case FC_EV_MPI_Allgatherv:
    case FC_EV_MPI_Iallgatherv:
        return allgather(&e, me, n, from, alg);
    case FC_EV_MPI_Gather:
    case FC_EV_MPI_Igather:
        return gather_binomial(&e, rel, root, n);
    case FC_EV_MPI_Scatter:
    case FC_EV_MPI_Iscatter:
        return scatter_binomial(&e, rel, root, n);
    case FC_EV_MPI_Gatherv:
    case FC_EV_MPI_Igatherv:
        if (me == root) {
            for (uint32_t i = 1; i < p; i++)
                TRY(rcv(&e, root + i, 0));
            return wt(&e);
        }
        TRY(snd(&e, root, own));
        return wt(&e);
    case FC_EV_MPI_Scatterv:
    case FC_EV_MPI_Iscatterv:
        if (me == root) {
            for (uint32_t i = 1; i < p; i++)
                TRY(snd(&e, root + i, to ? to[(root + i) % p] : own / p));
            return wt(&e);
        }
        TRY(rcv(&e, root, 0));
        return wt(&e);
    case FC_EV_MPI_Alltoall:
    case FC_EV_MPI_Ialltoall:
        if (alg == FC__CA_BRUCKS)
            return alltoall_brucks(&e, me, n);
        if (alg == FC__CA_SCATTERED)
            return scattered(&e, me, 1, 1, n);
        for (uint32_t i = 1; i < p; i++) {
            if (is_pof2(p))
                TRY(xchg(&e, me ^ i, me ^ i, n));
            else
                TRY(xchg(&e, me + i, me + p - i, n));
        }
        return 0;
    case FC_EV_MPI_Alltoallv:
    case FC_EV_MPI_Ialltoallv:
    case FC_EV_MPI_Alltoallw:
    case FC_EV_MPI_Ialltoallw:
        if (to != NULL && from != NULL) {
            for (uint32_t i = 1; i < p; i++) {
                TRY(rcv(&e, me + p - i, from[(me + p - i) % p]));
                TRY(snd(&e, me + i, to[(me + i) % p]));
            }
            return wt(&e);
        }
        return scattered(&e, me, 1, 1, own / p);
    case FC_EV_MPI_Reduce_scatter:
    case FC_EV_MPI_Ireduce_scatter:
    case FC_EV_MPI_Reduce_scatter_block:
    case FC_EV_MPI_Ireduce_scatter_block:
        if (alg == FC__CA_RECURSIVE_HALVING && is_pof2(p)) {
            uint64_t size = n;
            for (uint32_t mask = p / 2; mask > 0; mask >>= 1) {
                size /= 2;
                TRY(xchg(&e, me ^ mask, me ^ mask, size));
            }
            return 0;
        }
        for (uint32_t i = 1; i < p; i++)
            TRY(xchg(&e, me + i, me + p - i, n / p));
        return 0;
    case FC_EV_MPI_Scan:
    case FC_EV_MPI_Iscan:
    case FC_EV_MPI_Exscan:
    case FC_EV_MPI_Iexscan:
        for (uint32_t mask = 1; mask < p; mask <<= 1)
            if ((me ^ mask) < p)
                TRY(xchg(&e, me ^ mask, me ^ mask, n));
        return 0;
    default:
        return FC_EUNSUPPORTED;
    }
}

/* ---- the ch4 device's node-aware compositions ------------------------------------------------- */

int fc__coll_nodes_build(uint32_t p, const uint32_t *node, fc__coll_nodes *d)
{
    memset(d, 0, sizeof *d);
    size_t cap = 16;
    while (cap < 2 * (size_t)p)
        cap *= 2;
    /* An open-addressing map from node number to position: O(p) for thousands of members. */
    uint32_t *slot = malloc(cap * sizeof *slot), *count = NULL;
    d->leader = malloc((p ? p : 1) * sizeof *d->leader);
    d->of = malloc((p ? p : 1) * sizeof *d->of);
    d->start = malloc(((size_t)p + 1) * sizeof *d->start);
    d->member = malloc((p ? p : 1) * sizeof *d->member);
    if (slot == NULL || d->leader == NULL || d->of == NULL || d->start == NULL || d->member == NULL) {
        free(slot);
        fc__coll_nodes_free(d);
        return FC_ENOMEM;
    }
    memset(slot, 0xff, cap * sizeof *slot);
    for (uint32_t i = 0; i < p; i++) {
        size_t h = (node[i] * 0x9e3779b1u) & (cap - 1);
        while (slot[h] != UINT32_MAX && node[d->leader[slot[h]]] != node[i])
            h = (h + 1) & (cap - 1);
        if (slot[h] == UINT32_MAX) {
            slot[h] = d->nn;
            d->leader[d->nn++] = i;
        }
        d->of[i] = slot[h];
    }
    free(slot);
    /* The members of each node, in member order: node k's are member[start[k] .. start[k + 1]). */
    if ((count = calloc((size_t)d->nn + 1, sizeof *count)) == NULL) {
        fc__coll_nodes_free(d);
        return FC_ENOMEM;
    }
    for (uint32_t i = 0; i < p; i++)
        count[d->of[i] + 1]++;
    for (uint32_t k = 0; k < d->nn; k++)
        count[k + 1] += count[k];
    memcpy(d->start, count, ((size_t)d->nn + 1) * sizeof *count);
    for (uint32_t i = 0; i < p; i++)
        d->member[count[d->of[i]]++] = i;
    free(count);
    d->p = p;
    return 0;
}

void fc__coll_nodes_free(fc__coll_nodes *d)
{
    free(d->leader);
    free(d->of);
    free(d->start);
    free(d->member);
    memset(d, 0, sizeof *d);
}

/* The posix module's release-gather exchange inside node k around its member `root` (a member
 * index), shown as one message per other member, posted together and waited for once: a
 * broadcast sends from root to every other member, a reduce (down 0) from each of them to root. */
static int node_exchange(const em *e, const fc__coll_nodes *d, uint32_t k, uint32_t me, uint32_t root, uint64_t n,
                         int down)
{
    if (d->start[k + 1] - d->start[k] < 2)
        return 0;
    if (me == root) {
        for (uint32_t i = d->start[k]; i < d->start[k + 1]; i++)
            if (d->member[i] != root)
                TRY(down ? snd(e, d->member[i], n) : rcv(e, d->member[i], n));
        return wt(e);
    }
    TRY(down ? rcv(e, root, n) : snd(e, root, n));
    return wt(e);
}

static int node_bcast(const em *e, const fc__coll_nodes *d, uint32_t k, uint32_t me, uint32_t from, uint64_t n)
{
    return node_exchange(e, d, k, me, from, n, 1);
}

static int node_reduce(const em *e, const fc__coll_nodes *d, uint32_t k, uint32_t me, uint32_t to, uint64_t n)
{
    return node_exchange(e, d, k, me, to, n, 0);
}

/* MPIR's algorithm for kind among the leaders (nn of them, as the ch4 device's node_roots_comm),
 * selected for their number, run by leader position me with the root at leader position root. */
static int among_leaders(const em *e, const fc__coll_nodes *d, unsigned kind, uint32_t me, uint32_t root, uint64_t n,
                         const fc__coll_settings *s)
{
    em sub = {.s = e->s, .p = d->nn, .map = d->leader, .base = e->base};
    return flat(&sub, kind, fc__coll_select(kind, d->nn, n, s), me, root, n, n, NULL, NULL);
}

static int composition(const em *e, unsigned kind, unsigned alg, uint32_t me, uint32_t root, uint64_t n,
                       const fc__coll_layout *lay)
{
    fc__coll_nodes own, *dp = (fc__coll_nodes *)lay->nodes;
    const fc__coll_settings *s = lay->settings;
    int rc = 0;
    if (dp == NULL || dp->p != e->p) {
        if ((rc = fc__coll_nodes_build(e->p, lay->node, &own)) < 0)
            return rc;
        dp = &own;
    }
    const fc__coll_nodes d = *dp;
    uint32_t mine = d.of[me], rk = d.of[root], ld = d.leader[mine];
    int lead = ld == me;
#define STEP(x)                                                                                    \
    do {                                                                                           \
        if ((rc = (x)) < 0)                                                                        \
            goto out;                                                                              \
    } while (0)
    switch (kind) {
    case FC_EV_MPI_Barrier:
        /* Each node's members report to the leader, the leaders run the barrier, and each leader
         * releases its node with a 1-byte broadcast. */
        STEP(node_reduce(e, &d, mine, me, ld, 0));
        if (lead)
            STEP(among_leaders(e, &d, FC_EV_MPI_Barrier, mine, 0, 0, s));
        STEP(node_bcast(e, &d, mine, me, ld, 1));
        break;
    case FC_EV_MPI_Bcast:
    case FC_EV_MPI_Ibcast:
        /* MPIR_Ibcast_intra_sched_smp has alpha's messages, the leaders' part MPIR's Ibcast. */
        if (alg == FC__CA_COMPOSITION_ALPHA) {
            /* The root hands the buffer to its leader first. */
            if (root != d.leader[rk]) {
                if (me == root) {
                    STEP(snd(e, d.leader[rk], n));
                    STEP(wt(e));
                } else if (me == d.leader[rk]) {
                    STEP(rcv(e, root, n));
                    STEP(wt(e));
                }
            }
            if (lead)
                STEP(among_leaders(e, &d, kind, mine, rk, n, s));
            STEP(node_bcast(e, &d, mine, me, ld, n));
        } else {
            /* Beta: the root's node first (when the root is not its leader), then the leaders,
             * then the nodes whose leader got the data from the other leaders. */
            int root_first = root != d.leader[rk];
            if (root_first && mine == rk)
                STEP(node_bcast(e, &d, mine, me, root, n));
            if (lead)
                STEP(among_leaders(e, &d, FC_EV_MPI_Bcast, mine, rk, n, s));
            if (!(root_first && mine == rk))
                STEP(node_bcast(e, &d, mine, me, ld, n));
        }
        break;
    case FC_EV_MPI_Allreduce:
        STEP(node_reduce(e, &d, mine, me, ld, n));
        if (lead)
            STEP(among_leaders(e, &d, FC_EV_MPI_Allreduce, mine, 0, n, s));
        STEP(node_bcast(e, &d, mine, me, ld, n));
        break;
    case FC_EV_MPI_Reduce:
    case FC_EV_MPI_Ireduce:
        /* MPIR_Ireduce_intra_sched_smp has beta's messages, the leaders' part MPIR's Ireduce. */
        if (alg == FC__CA_COMPOSITION_BETA) {
            /* The other nodes reduce to their leaders, the leaders to the root's node, and the
             * root's node (its leader holding the others' part) to the root. */
            if (mine != rk)
                STEP(node_reduce(e, &d, mine, me, ld, n));
            if (lead)
                STEP(among_leaders(e, &d, kind, mine, rk, n, s));
            if (mine == rk)
                STEP(node_reduce(e, &d, mine, me, root, n));
        } else {
            /* Alpha: every node to its leader, the leaders to member 0's node (leader 0 is member
             * 0), and member 0 hands the result to the root. */
            STEP(node_reduce(e, &d, mine, me, ld, n));
            if (lead)
                STEP(among_leaders(e, &d, FC_EV_MPI_Reduce, mine, 0, n, s));
            if (root != 0) {
                if (me == 0) {
                    STEP(snd(e, root, n));
                    STEP(wt(e));
                } else if (me == root) {
                    STEP(rcv(e, 0, n));
                    STEP(wt(e));
                }
            }
        }
        break;
    case FC_EV_MPI_Scan:
    case FC_EV_MPI_Iscan: {
        /* MPIDI_Scan_intra_composition_alpha (MPIR_Scan_intra_smp without the device: the same
         * messages), on nodes whose members are consecutive: the node's members scan among
         * themselves (MPIR's recursive doubling on node_comm), the last hands the node's total to
         * the leader, the leaders scan (MPIR's algorithm on node_roots_comm), each leader sends
         * its prefix to the next node's, and each leader broadcasts in its node a flag (an int)
         * and then, on every node but the first, the previous nodes' prefix.
         * MPIR_Iscan_intra_sched_smp is the same without the flag. */
        uint32_t first = d.start[mine], cnt = d.start[mine + 1] - first, last = d.member[first + cnt - 1];
        if (cnt > 1) {
            em sub = {.s = e->s, .p = cnt, .map = d.member + first, .base = e->base};
            STEP(flat(&sub, kind, FC__CA_RECURSIVE_DOUBLING, me - d.member[first], 0, n, n, NULL, NULL));
            if (me == last) {
                STEP(snd(e, ld, n));
                STEP(wt(e));
            } else if (lead) {
                STEP(rcv(e, last, n));
                STEP(wt(e));
            }
        }
        if (lead) {
            STEP(among_leaders(e, &d, kind, mine, 0, n, s));
            if (mine + 1 < d.nn) {
                STEP(snd(e, d.leader[mine + 1], n));
                STEP(wt(e));
            }
            if (mine > 0) {
                STEP(rcv(e, d.leader[mine - 1], n));
                STEP(wt(e));
            }
        }
        if (kind == FC_EV_MPI_Scan)
            STEP(node_bcast(e, &d, mine, me, ld, sizeof(int32_t)));
        if (mine > 0)
            STEP(node_bcast(e, &d, mine, me, ld, n));
        break;
    }
    default:
        rc = FC_EUNSUPPORTED;
        break;
    }
#undef STEP
out:
    if (dp == &own)
        fc__coll_nodes_free(&own);
    return rc < 0 ? rc : 0;
}

/* ---- inter-communicators: MPIR's *_inter_* algorithms ------------------------------------------ */

/* MPIR's algorithm for kind on one group (members base .. base + size - 1, as the
 * inter-communicator's local_comm), run by its member me with the root at its member root. MPIR
 * selects for the group as for any intra-communicator; its barrier is node-aware when the group's
 * members share nodes. */
static int in_group(const em *e, uint32_t base, uint32_t size, unsigned kind, uint32_t me, uint32_t root, uint64_t n,
                    const fc__coll_layout *lay)
{
    if (size < 2)
        return 0;
    em g = {.s = e->s, .p = size, .base = base};
    const fc__coll_settings *s = lay->settings;
    if (kind == FC_EV_MPI_Barrier && lay->node != NULL && fc__coll_node_aware(size, lay->node + base)) {
        fc__coll_layout sub = {.node = lay->node + base, .settings = s};
        return composition(&g, kind, FC__CA_COMPOSITION_ALPHA, me, 0, 0, &sub);
    }
    return flat(&g, kind, fc__coll_select(kind, size, n, s), me, root, n, n, NULL, NULL);
}

/* MPIR_Bcast_inter_remote_send_local_bcast from the group starting at from (its member 0 the
 * root, MPI_ROOT) to the other: the root sends n bytes to the other group's member 0, which
 * broadcasts them in its group. g0, gn: my group; r0: the other group's first member. */
static int inter_bcast(const em *e, int sending, uint32_t me, uint32_t root, uint32_t g0, uint32_t gn, uint32_t r0,
                       uint64_t n, const fc__coll_layout *lay)
{
    if (sending) {
        if (me != root)
            return 0;
        TRY(snd(e, r0, n));
        return wt(e);
    }
    if (me == g0) {
        TRY(rcv(e, root, n));
        TRY(wt(e));
    }
    return in_group(e, g0, gn, FC_EV_MPI_Bcast, me - g0, 0, n, lay);
}

/* The non-blocking forms' steps inside one group (members base .. base + size - 1): MPICH's
 * hand-written MPIR_I<coll>_intra_sched_auto on the inter-communicator's local_comm, which no
 * MPIR_CVAR_* changes. On a group whose members share nodes (a "parent" communicator) Ibcast and
 * Ireduce (a commutative operation) take the "smp" schedules, whose messages are those of the
 * compositions (fc__coll_select_in); otherwise MPIR's non-blocking thresholds, and Igather and
 * Iscatter are binomial. */
static int in_group_nb(const em *e, uint32_t base, uint32_t size, unsigned kind, uint32_t me, uint32_t root,
                       uint64_t n, const fc__coll_layout *lay)
{
    if (size < 2)
        return 0;
    em g = {.s = e->s, .p = size, .base = base};
    fc__coll_layout sub = {.node = lay->node != NULL ? lay->node + base : NULL, .op = lay->op};
    unsigned alg = fc__coll_select_in(kind, size, n, &sub);
    if (alg == FC__CA_COMPOSITION_ALPHA || alg == FC__CA_COMPOSITION_BETA)
        return composition(&g, kind, alg, me, root, n, &sub);
    return flat(&g, kind, alg, me, root, n, n, NULL, NULL);
}

/* MPIR_Ireduce_inter_sched_local_reduce_remote_send as the inter-communicator algorithms that
 * reduce towards the other group run it: the root receives n bytes from the other group's
 * member 0 (a wait follows); the other group reduces to its member 0 (in_group_nb), which sends
 * the result to the root (a wait follows). receiving: my group holds the root, at member root. */
static int nb_reduce(const em *e, int receiving, uint32_t me, uint32_t root, uint32_t g0, uint32_t gn, uint32_t r0,
                     uint64_t n, const fc__coll_layout *lay)
{
    if (receiving) {
        if (me != root)
            return 0;
        TRY(rcv(e, r0, n));
        return wt(e);
    }
    TRY(in_group_nb(e, g0, gn, FC_EV_MPI_Ireduce, me - g0, 0, n, lay));
    if (me != g0)
        return 0;
    TRY(snd(e, root, n));
    return wt(e);
}

/* The non-blocking collectives on an inter-communicator (collective.h, fc__coll_select_inter):
 * MPICH's MPIR_I<coll>_inter_sched_* schedules, each MPIR_Sched_barrier a wait; a schedule's end
 * is a wait too (the request completes when everything posted has). */
static int inter_nb(const em *e, unsigned kind, unsigned alg, uint32_t me, uint32_t root, uint64_t n, uint64_t own,
                    const fc__coll_layout *lay)
{
    uint32_t p = e->p, a = lay->inter;
    int low = me < a;
    uint32_t g0 = low ? 0 : a, gn = low ? a : p - a; /* my group */
    uint32_t r0 = low ? a : 0, rn = low ? p - a : a; /* the other */
    uint32_t lr = me - g0;
    int root_here = (root < a) == low;
    switch (kind) {
    case FC_EV_MPI_Ireduce:
        /* MPIR_Ireduce_inter_sched_local_reduce_remote_send. */
        return nb_reduce(e, root_here, me, root, g0, gn, r0, n, lay);
    case FC_EV_MPI_Iallreduce:
    case FC_EV_MPI_Ireduce_scatter:
    case FC_EV_MPI_Ireduce_scatter_block:
        /* MPIR_Iallreduce_inter_sched_remote_reduce_local_bcast and
         * MPIR_Ireduce_scatter(_block)_inter_sched_remote_reduce_local_scatterv: an inter
         * reduce of the whole n bytes from the other group to the low group's member 0, then one
         * from the low group to the other's member 0 (no barrier between them, but the first
         * one's own waits order them on each member 0), a barrier; then each member 0 spreads
         * the result in its group: Iallreduce broadcasts it (MPIR_Ibcast_intra_sched_auto),
         * Ireduce_scatter posts a send of its block to every other member at once (the linear
         * MPIR_Iscatterv_intra_sched_auto, blocks taken as n / size), Ireduce_scatter_block
         * scatters the blocks binomially (MPIR_Iscatter_intra_sched_auto). */
        for (int phase = 0; phase < 2; phase++) {
            int receiving = (phase == 0) == low;
            TRY(nb_reduce(e, receiving, me, receiving ? g0 : r0, g0, gn, r0, n, lay));
        }
        if (kind == FC_EV_MPI_Iallreduce)
            return in_group_nb(e, g0, gn, FC_EV_MPI_Ibcast, lr, 0, n, lay);
        if (kind == FC_EV_MPI_Ireduce_scatter_block)
            return in_group_nb(e, g0, gn, FC_EV_MPI_Iscatter, lr, 0, n / gn, lay);
        if (gn < 2)
            return 0;
        if (lr == 0) {
            for (uint32_t i = 1; i < gn; i++)
                TRY(snd(e, g0 + i, n / gn));
            return wt(e);
        }
        TRY(rcv(e, g0, 0));
        return wt(e);
    case FC_EV_MPI_Igather:
        if (root_here) {
            if (me != root)
                return 0;
            /* The root receives the other group's blocks from its member 0 (short), or posts a
             * receive from each of its members at once (long, MPIR_Igather_inter_sched_long). */
            if (alg == FC__CA_INTER_LONG) {
                for (uint32_t i = 0; i < rn; i++)
                    TRY(rcv(e, r0 + i, n));
                return wt(e);
            }
            TRY(rcv(e, r0, n * rn));
            return wt(e);
        }
        if (alg != FC__CA_INTER_LONG) {
            /* MPIR_Igather_inter_sched_short: a binomial gather to member 0, which sends the
             * group's blocks to the root. */
            TRY(in_group_nb(e, g0, gn, FC_EV_MPI_Igather, lr, 0, n, lay));
            if (lr != 0)
                return 0;
            n *= gn;
        }
        TRY(snd(e, root, n));
        return wt(e);
    case FC_EV_MPI_Iscatter:
        if (root_here) {
            if (me != root)
                return 0;
            /* MPIR_Iscatter_inter_sched_linear posts a send to each member of the other group at
             * once; the short one sends them all to its member 0. */
            if (alg == FC__CA_LINEAR) {
                for (uint32_t i = 0; i < rn; i++)
                    TRY(snd(e, r0 + i, n));
                return wt(e);
            }
            TRY(snd(e, r0, n * rn));
            return wt(e);
        }
        if (alg == FC__CA_LINEAR) {
            TRY(rcv(e, root, n));
            return wt(e);
        }
        /* MPIR_Iscatter_inter_sched_remote_send_local_scatter: member 0 receives every block,
         * then scatters them binomially in the group. */
        if (lr == 0) {
            TRY(rcv(e, root, n * gn));
            TRY(wt(e));
        }
        return in_group_nb(e, g0, gn, FC_EV_MPI_Iscatter, lr, 0, n, lay);
    case FC_EV_MPI_Igatherv:
        /* MPIR_Igatherv_allcomm_sched_linear: the root posts a receive from each member of the
         * other group whose count is not zero, each of them a send of its block (when not
         * empty); one wait at the schedule's end. */
        if (root_here) {
            if (me != root)
                return 0;
            int any = 0;
            for (uint32_t i = 0; i < rn; i++)
                if (lay->from == NULL || lay->from[i] > 0) {
                    TRY(rcv(e, r0 + i, lay->from != NULL ? lay->from[i] : 0));
                    any = 1;
                }
            return any ? wt(e) : 0;
        }
        if (own == 0)
            return 0;
        TRY(snd(e, root, own));
        return wt(e);
    case FC_EV_MPI_Iscatterv:
        /* MPIR_Iscatterv_allcomm_sched_linear: the root posts a send to each member of the other
         * group (its counts index that group), one wait at the end. */
        if (root_here) {
            if (me != root)
                return 0;
            for (uint32_t i = 0; i < rn; i++)
                TRY(snd(e, r0 + i, lay->to ? lay->to[i] : own / rn));
            return wt(e);
        }
        TRY(rcv(e, root, 0));
        return wt(e);
    case FC_EV_MPI_Iallgather: {
        /* MPIR_Iallgather_inter_sched_local_gather_remote_bcast: a binomial gather of the
         * group's blocks to member 0 and a barrier; then the low group's member 0 posts the send
         * of its group's blocks to the other group's member 0 (MPIR_Ibcast_inter_sched_flat: no
         * wait after the root's send) together with the receive of the other group's blocks,
         * and broadcasts those in its group; the other group's member 0 receives the low
         * group's blocks, broadcasts them in its group, then sends its own group's. */
        uint64_t mine = n * gn, theirs = n * rn;
        if (n == 0)
            return 0;
        TRY(in_group_nb(e, g0, gn, FC_EV_MPI_Igather, lr, 0, n, lay));
        if (low) {
            if (lr == 0) {
                TRY(snd(e, r0, mine));
                TRY(rcv(e, r0, theirs));
                TRY(wt(e));
            }
            return in_group_nb(e, g0, gn, FC_EV_MPI_Ibcast, lr, 0, theirs, lay);
        }
        if (lr == 0) {
            TRY(rcv(e, r0, theirs));
            TRY(wt(e));
        }
        TRY(in_group_nb(e, g0, gn, FC_EV_MPI_Ibcast, lr, 0, theirs, lay));
        if (lr != 0)
            return 0;
        TRY(snd(e, r0, mine));
        return wt(e);
    }
    case FC_EV_MPI_Iallgatherv: {
        /* MPIR_Iallgatherv_inter_sched_remote_gather_local_bcast: two linear gathervs with no
         * barrier between them, so that each member posts its send to the other group's member
         * 0 and (member 0) its receives from the other group's members at once; a barrier; then
         * member 0 broadcasts the other group's blocks in its group (MPIR_Ibcast_intra_sched_auto
         * of one element of an indexed type: their bytes together). */
        uint64_t theirs = 0;
        int any = 0;
        for (uint32_t i = 0; i < rn; i++)
            theirs += lay->from ? lay->from[i] : n;
        for (int phase = 0; phase < 2; phase++) {
            int receiving = (phase == 0) == low;
            if (receiving && lr == 0) {
                for (uint32_t i = 0; i < rn; i++)
                    if (lay->from == NULL || lay->from[i] > 0) {
                        TRY(rcv(e, r0 + i, lay->from != NULL ? lay->from[i] : n));
                        any = 1;
                    }
            } else if (!receiving && own > 0) {
                TRY(snd(e, r0, own));
                any = 1;
            }
        }
        if (any)
            TRY(wt(e));
        return in_group_nb(e, g0, gn, FC_EV_MPI_Ibcast, lr, 0, theirs, lay);
    }
    case FC_EV_MPI_Ialltoall:
    case FC_EV_MPI_Ialltoallv:
    case FC_EV_MPI_Ialltoallw: {
        /* MPIR_Ialltoall(v, w)_inter_sched_pairwise_exchange: the blocking pattern, each step's
         * send and receive followed by a barrier; the v and w forms skip an empty block. */
        uint32_t mx = gn > rn ? gn : rn;
        uint64_t each = rn ? own / rn : 0;
        int v = kind != FC_EV_MPI_Ialltoall;
        for (uint32_t i = 0; i < mx; i++) {
            uint32_t dst = (lr + i) % mx, src = (lr + mx - i) % mx;
            uint64_t out = dst < rn ? (lay->to ? lay->to[dst] : each) : 0;
            uint64_t in = src < rn ? (lay->from ? lay->from[src] : each) : 0;
            int any = 0;
            if (dst < rn && !(v && out == 0)) {
                TRY(snd(e, r0 + dst, out));
                any = 1;
            }
            if (src < rn && !(v && in == 0)) {
                TRY(rcv(e, r0 + src, in));
                any = 1;
            }
            if (any)
                TRY(wt(e));
        }
        return 0;
    }
    case FC_EV_MPI_Ibcast:
        /* MPIR_Ibcast_inter_sched_flat: the root sends to the other group's member 0, and that
         * group broadcasts (MPIR_Ibcast_intra_sched_auto) rooted at the member whose index is
         * the root's in its own group, as MPICH 4.0.2 passes it on. */
        if (root_here) {
            if (me != root)
                return 0;
            TRY(snd(e, r0, n));
            return wt(e);
        }
        if (me == g0) {
            TRY(rcv(e, root, n));
            TRY(wt(e));
        }
        return in_group_nb(e, g0, gn, FC_EV_MPI_Ibcast, lr, (root - (root < a ? 0 : a)) % gn, n, lay);
    default:
        return FC_EUNSUPPORTED;
    }
}

static int inter(const em *e, unsigned kind, unsigned alg, uint32_t me, uint32_t root, uint64_t n, uint64_t own,
                 const fc__coll_layout *lay)
{
    uint32_t p = e->p, a = lay->inter;
    int in_a = me < a, low = in_a;
    uint32_t g0 = in_a ? 0 : a, gn = in_a ? a : p - a; /* my group */
    uint32_t r0 = in_a ? a : 0, rn = in_a ? p - a : a; /* the other */
    uint32_t lr = me - g0;
    int root_here = (root < a) == in_a;
    switch (kind) {
    case FC_EV_MPI_Barrier:
        /* MPIR_Barrier_inter_bcast: a barrier in each group, then a 1-byte broadcast from the low
         * group's member 0 to the other group and one back. */
        TRY(in_group(e, g0, gn, FC_EV_MPI_Barrier, lr, 0, 0, lay));
        TRY(inter_bcast(e, low, me, low ? g0 : r0, g0, gn, r0, 1, lay));
        return inter_bcast(e, !low, me, low ? r0 : g0, g0, gn, r0, 1, lay);
    case FC_EV_MPI_Ibarrier: {
        /* MPIR_Ibarrier_inter_sched_bcast: the same, with each group's barrier its
         * MPIR_Ibarrier_intra_sched_auto (recursive doubling: the dissemination pattern, 0-byte
         * messages, on any placement), and the broadcasts MPIR_Ibcast_inter_sched_flat from
         * member 0 (the root sends to the other group's member 0, which broadcasts in its group
         * by MPIR_Ibcast_intra_sched_auto, binomial for 1 byte). */
        em g = {.s = e->s, .p = gn, .base = g0};
        TRY(flat(&g, FC_EV_MPI_Ibarrier, FC__CA_K_DISSEMINATION, lr, 0, 0, 0, NULL, NULL));
        TRY(inter_bcast(e, low, me, low ? g0 : r0, g0, gn, r0, 1, lay));
        return inter_bcast(e, !low, me, low ? r0 : g0, g0, gn, r0, 1, lay);
    }
    case FC_EV_MPI_Bcast:
        return inter_bcast(e, root_here, me, root, g0, gn, r0, n, lay);
    case FC_EV_MPI_Allreduce:
        /* MPIR_Allreduce_inter_reduce_exchange_bcast: each group reduces to its member 0, the two
         * exchange their results, each broadcasts the other's in its group. */
        TRY(in_group(e, g0, gn, FC_EV_MPI_Reduce, lr, 0, n, lay));
        if (lr == 0)
            TRY(xchg(e, r0, r0, n));
        return in_group(e, g0, gn, FC_EV_MPI_Bcast, lr, 0, n, lay);
    case FC_EV_MPI_Reduce:
        /* MPIR_Reduce_inter_local_reduce_remote_send: the other group reduces to its member 0,
         * which sends the result to the root. */
        if (root_here) {
            if (me != root)
                return 0;
            TRY(rcv(e, r0, n));
            return wt(e);
        }
        TRY(in_group(e, g0, gn, FC_EV_MPI_Reduce, lr, 0, n, lay));
        if (lr != 0)
            return 0;
        TRY(snd(e, root, n));
        return wt(e);
    case FC_EV_MPI_Gather:
        if (root_here) {
            if (me != root)
                return 0;
            if (alg == FC__CA_LINEAR) {
                /* MPIR_Gather_inter_linear: one blocking receive from each member in turn. */
                for (uint32_t i = 0; i < rn; i++) {
                    TRY(rcv(e, r0 + i, n));
                    TRY(wt(e));
                }
                return 0;
            }
            TRY(rcv(e, r0, n * rn));
            return wt(e);
        }
        if (alg != FC__CA_LINEAR) {
            /* MPIR_Gather_inter_local_gather_remote_send: a gather in the group to its member 0,
             * which sends the group's blocks to the root. */
            TRY(in_group(e, g0, gn, FC_EV_MPI_Gather, lr, 0, n, lay));
            if (lr != 0)
                return 0;
            n *= gn;
        }
        TRY(snd(e, root, n));
        return wt(e);
    case FC_EV_MPI_Scatter:
        if (root_here) {
            if (me != root)
                return 0;
            if (alg == FC__CA_LINEAR) {
                for (uint32_t i = 0; i < rn; i++) {
                    TRY(snd(e, r0 + i, n));
                    TRY(wt(e));
                }
                return 0;
            }
            TRY(snd(e, r0, n * rn));
            return wt(e);
        }
        if (alg == FC__CA_LINEAR) {
            TRY(rcv(e, root, n));
            return wt(e);
        }
        /* MPIR_Scatter_inter_remote_send_local_scatter: the root sends every block to the
         * group's member 0, which scatters them in the group. */
        if (lr == 0) {
            TRY(rcv(e, root, n * gn));
            TRY(wt(e));
        }
        return in_group(e, g0, gn, FC_EV_MPI_Scatter, lr, 0, n, lay);
    case FC_EV_MPI_Allgather:
        /* MPIR_Allgather_inter_local_gather_remote_bcast: each group gathers its blocks to its
         * member 0, then the low group's broadcasts them to the other, and the other's back. */
        TRY(in_group(e, g0, gn, FC_EV_MPI_Gather, lr, 0, n, lay));
        TRY(inter_bcast(e, low, me, low ? g0 : r0, g0, gn, r0, n * (low ? gn : rn), lay));
        return inter_bcast(e, !low, me, low ? r0 : g0, g0, gn, r0, n * (low ? rn : gn), lay);
    case FC_EV_MPI_Gatherv:
        /* MPIR_Gatherv_allcomm_linear: the root posts a receive from each member of the other
         * group and waits for all; each of them sends its block (its own bytes) to the root. */
        if (root_here) {
            if (me != root)
                return 0;
            for (uint32_t i = 0; i < rn; i++)
                TRY(rcv(e, r0 + i, 0));
            return wt(e);
        }
        if (own == 0)
            return 0;
        TRY(snd(e, root, own));
        return wt(e);
    case FC_EV_MPI_Scatterv:
        /* MPIR_Scatterv_allcomm_linear: the root posts a send to each member of the other group
         * (its counts index that group) and waits for all. */
        if (root_here) {
            if (me != root)
                return 0;
            for (uint32_t i = 0; i < rn; i++)
                TRY(snd(e, r0 + i, lay->to ? lay->to[i] : own / rn));
            return wt(e);
        }
        TRY(rcv(e, root, 0));
        return wt(e);
    case FC_EV_MPI_Allgatherv: {
        /* MPIR_Allgatherv_inter_remote_gather_local_bcast: a linear gatherv of the other group's
         * blocks to the low group's member 0, then of the low group's to the other's member 0,
         * then each member 0 broadcasts what it received in its group (MPIR's algorithm for the
         * other group's blocks together: its members' counts, or the largest block each). */
        uint64_t theirs = 0;
        for (uint32_t i = 0; i < rn; i++)
            theirs += lay->from ? lay->from[i] : n;
        for (int phase = 0; phase < 2; phase++) {
            int receiving = (phase == 0) == low;
            if (receiving && lr == 0) {
                for (uint32_t i = 0; i < rn; i++)
                    TRY(rcv(e, r0 + i, 0));
                TRY(wt(e));
            } else if (!receiving && own > 0) {
                TRY(snd(e, r0, own));
                TRY(wt(e));
            }
        }
        return in_group(e, g0, gn, FC_EV_MPI_Bcast, lr, 0, theirs, lay);
    }
    case FC_EV_MPI_Reduce_scatter:
    case FC_EV_MPI_Reduce_scatter_block:
        /* MPIR_Reduce_scatter_inter_remote_reduce_local_scatter: the other group reduces to its
         * member 0, which sends the result to the low group's member 0, then the low group does
         * the same towards the other's member 0 (local_reduce_remote_send, n bytes), and each
         * member 0 scatters the result in its group, a block of n / size each: linearly
         * (MPIR_Scatterv) for Reduce_scatter, binomially (MPIR_Scatter) for Reduce_scatter_block. */
        for (int phase = 0; phase < 2; phase++) {
            int receiving = (phase == 0) == low;
            if (receiving) {
                if (lr == 0) {
                    TRY(rcv(e, r0, n));
                    TRY(wt(e));
                }
            } else {
                TRY(in_group(e, g0, gn, FC_EV_MPI_Reduce, lr, 0, n, lay));
                if (lr == 0) {
                    TRY(snd(e, r0, n));
                    TRY(wt(e));
                }
            }
        }
        if (kind == FC_EV_MPI_Reduce_scatter_block)
            return in_group(e, g0, gn, FC_EV_MPI_Scatter, lr, 0, n / gn, lay);
        if (gn < 2)
            return 0;
        if (lr == 0) {
            for (uint32_t i = 1; i < gn; i++)
                TRY(snd(e, g0 + i, n / gn));
            return wt(e);
        }
        TRY(rcv(e, g0, 0));
        return wt(e);
    case FC_EV_MPI_Alltoall:
    case FC_EV_MPI_Alltoallv:
    case FC_EV_MPI_Alltoallw: {
        /* MPIR_Alltoall(v, w)_inter_pairwise_exchange: max(gn, rn) steps; at step i, send to
         * member (lr + i) of the other group and receive from member (lr - i), each when it
         * exists. The v and w counts index the other group. */
        uint32_t mx = gn > rn ? gn : rn;
        uint64_t each = rn ? own / rn : 0;
        for (uint32_t i = 0; i < mx; i++) {
            uint32_t dst = (lr + i) % mx, src = (lr + mx - i) % mx;
            int any = 0;
            if (dst < rn) {
                TRY(snd(e, r0 + dst, lay->to ? lay->to[dst] : each));
                any = 1;
            }
            if (src < rn) {
                TRY(rcv(e, r0 + src, lay->from ? lay->from[src] : each));
                any = 1;
            }
            if (any)
                TRY(wt(e));
        }
        return 0;
    }
    default:
        return inter_nb(e, kind, alg, me, root, n, own, lay);
    }
}

/* MPICH's default choice on an inter-communicator (coll_selection.json's "comm_type=inter", the
 * same as the hand-written MPIR_I<coll>_inter_sched_auto). */
static unsigned inter_default(unsigned kind, uint32_t a, uint32_t b, uint32_t root, uint64_t n)
{
    /* Gather and Scatter switch on the bytes all the leaf group's members contribute. */
    uint64_t leaves = root < a ? b : a;
    int small = n * leaves < 2048;
    switch (kind) {
    case FC_EV_MPI_Barrier:
    case FC_EV_MPI_Ibarrier:
        return FC__CA_INTER_BCAST;
    case FC_EV_MPI_Bcast:
    case FC_EV_MPI_Ibcast:
        return FC__CA_REMOTE_SEND_LOCAL_BCAST;
    case FC_EV_MPI_Allreduce:
        return FC__CA_REDUCE_EXCHANGE_BCAST;
    case FC_EV_MPI_Iallreduce:
        return FC__CA_REMOTE_REDUCE_LOCAL_BCAST;
    case FC_EV_MPI_Reduce:
    case FC_EV_MPI_Ireduce:
        return FC__CA_LOCAL_REDUCE_REMOTE_SEND;
    case FC_EV_MPI_Gather:
        return small ? FC__CA_LOCAL_GATHER_REMOTE_SEND : FC__CA_LINEAR;
    case FC_EV_MPI_Igather:
        return small ? FC__CA_INTER_SHORT : FC__CA_INTER_LONG;
    case FC_EV_MPI_Scatter:
    case FC_EV_MPI_Iscatter:
        return small ? FC__CA_REMOTE_SEND_LOCAL_SCATTER : FC__CA_LINEAR;
    case FC_EV_MPI_Allgather:
    case FC_EV_MPI_Iallgather:
        return FC__CA_LOCAL_GATHER_REMOTE_BCAST;
    case FC_EV_MPI_Gatherv:
    case FC_EV_MPI_Scatterv:
    case FC_EV_MPI_Igatherv:
    case FC_EV_MPI_Iscatterv:
        return FC__CA_LINEAR;
    case FC_EV_MPI_Allgatherv:
    case FC_EV_MPI_Iallgatherv:
        return FC__CA_REMOTE_GATHER_LOCAL_BCAST;
    case FC_EV_MPI_Reduce_scatter:
    case FC_EV_MPI_Reduce_scatter_block:
        return FC__CA_REMOTE_REDUCE_LOCAL_SCATTER;
    case FC_EV_MPI_Ireduce_scatter:
    case FC_EV_MPI_Ireduce_scatter_block:
        return FC__CA_REMOTE_REDUCE_LOCAL_SCATTERV;
    case FC_EV_MPI_Alltoall:
    case FC_EV_MPI_Alltoallv:
    case FC_EV_MPI_Alltoallw:
    case FC_EV_MPI_Ialltoall:
    case FC_EV_MPI_Ialltoallv:
    case FC_EV_MPI_Ialltoallw:
        return FC__CA_PAIRWISE_EXCHANGE;
    default:
        return FC__CA_AUTO;
    }
}

int fc__coll_inter_has(unsigned kind, unsigned alg)
{
    if (alg == FC__CA_AUTO)
        return 0;
    /* Gather and Scatter have two algorithms each, on either side of their threshold. */
    return inter_default(kind, 1, 1, 0, 0) == alg || inter_default(kind, 1, 1, 0, 4096) == alg;
}

unsigned fc__coll_select_inter(unsigned kind, uint32_t a, uint32_t b, uint32_t root, uint64_t n,
                               const fc__coll_settings *s)
{
    unsigned forced = s != NULL && kind < FC_EV_MAX_ ? s->force_inter[kind] : FC__CA_AUTO;
    if (forced != FC__CA_AUTO && fc__coll_inter_has(kind, forced))
        return forced;
    return inter_default(kind, a, b, root, n);
}

int fc__coll_expand_in(unsigned kind, unsigned alg, uint32_t p, uint32_t me, uint32_t root, uint64_t n,
                       uint64_t own, const fc__coll_layout *lay, const fc__coll_sink *sink)
{
    em e = {.s = sink, .p = p, .map = NULL};
    if (fc__coll_is_neighbor(kind))
        return fc__coll_expand_neighbor(kind, me, own, lay, sink); /* neighbor.c */
    if (lay != NULL && (lay->op & FC_EVF_NONCOMMUTATIVE) && lay->inter == 0 && p > 1 && me < p && root < p) {
        int rc = fc__coll_expand_noncommutative(kind, alg, p, me, root, n, sink); /* noncommute.c */
        if (rc != 1)
            return rc;
    }
    if (p <= 1)
        return 0;
    if (lay != NULL && lay->inter != 0) {
        if (lay->inter >= p || me >= p || root >= p || alg == FC__CA_AUTO)
            return FC_EUNSUPPORTED;
        return inter(&e, kind, alg, me, root, n, own, lay);
    }
    if (alg == FC__CA_COMPOSITION_ALPHA || alg == FC__CA_COMPOSITION_BETA) {
        if (lay == NULL || (lay->node == NULL && lay->nodes == NULL) || me >= p || root >= p)
            return FC_EUNSUPPORTED;
        return composition(&e, kind, alg, me, root, n, lay);
    }
    return flat(&e, kind, alg, me, root, n, own, lay ? lay->to : NULL, lay ? lay->from : NULL);
}

int fc__coll_expand(unsigned kind, unsigned alg, uint32_t p, uint32_t me, uint32_t root, uint64_t n,
                    uint64_t own, const fc__coll_sink *sink)
{
    return fc__coll_expand_in(kind, alg, p, me, root, n, own, NULL, sink);
}
