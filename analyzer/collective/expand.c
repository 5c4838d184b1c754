/* analyzer/collective/expand.c: expands MPI collectives into the point-to-point messages of the
 * algorithms of MPICH 4's MPIR layer (collective.h lists them; select.c chooses one). */
#include <stdint.h>
#include <flowcut/error.h>
#include <flowcut/format.h>
#include "collective/collective.h"

/* The emitting state of one member: what it posts goes to the sink with member indices. */
typedef struct em {
    const fc__coll_sink *s;
    uint32_t p;
} em;

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_ < 0)                                                                               \
            return rc_;                                                                            \
    } while (0)

static int snd(const em *e, uint32_t peer, uint64_t b)
{
    return e->s->post(e->s->ctx, 1, peer % e->p, b);
}

static int rcv(const em *e, uint32_t peer, uint64_t b)
{
    return e->s->post(e->s->ctx, 0, peer % e->p, b);
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

/* Allgather of blocks of b bytes among all members: recursive doubling (power-of-two sizes),
 * Bruck (the blocks gathered so far, doubling, to me - k from me + k) or ring. */
static int allgather(const em *e, uint32_t me, uint64_t b, unsigned alg)
{
    uint32_t p = e->p;
    if (alg == FC__CA_RECURSIVE_DOUBLING && is_pof2(p)) {
        for (uint32_t mask = 1; mask < p; mask <<= 1)
            TRY(xchg(e, me ^ mask, me ^ mask, b * mask));
    } else if (alg == FC__CA_BRUCKS || alg == FC__CA_RECURSIVE_DOUBLING) {
        for (uint32_t k = 1; k < p; k <<= 1) {
            uint32_t blocks = k < p - k ? k : p - k;
            TRY(xchg(e, me + p - k, me + k, b * blocks));
        }
    } else {
        for (uint32_t i = 1; i < p; i++)
            TRY(xchg(e, me + 1, me + p - 1, b));
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

int fc__coll_expand(unsigned kind, unsigned alg, uint32_t p, uint32_t me, uint32_t root, uint64_t n,
                    uint64_t own, const fc__coll_sink *sink)
{
    em e = {.s = sink, .p = p};
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
            for (uint32_t mask = 1; mask < p; mask <<= 1)
                TRY(xchg(&e, me ^ mask, me ^ mask, ss * mask));
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
        return allgather(&e, me, n, alg);
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
                TRY(snd(&e, root + i, own / p));
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
