/* analyzer/collective/noncommute.c: the reductions whose operation comes from MPI_Op_create, for
 * which MPICH 4.0.2 selects other algorithms, and the messages of those that differ when the
 * operation is not commutative (collective.h). */
#include <flowcut/error.h>
#include <flowcut/format.h>
#include "collective/collective.h"

static int is_pof2(uint32_t p)
{
    return p != 0 && (p & (p - 1)) == 0;
}

unsigned fc__coll_select_op(unsigned kind, uint32_t p, uint64_t n, const fc__coll_layout *lay)
{
    (void)n;
    const fc__coll_settings *s = lay->settings;
    int user = (lay->op & FC_EVF_USER_OP) != 0, noncomm = (lay->op & FC_EVF_NONCOMMUTATIVE) != 0;
    if (lay->inter != 0 || kind >= FC_EV_MAX_ || (s != NULL && s->force[kind] != FC__CA_AUTO))
        return FC__CA_AUTO;
    /* A commutative operation of the user's keeps the device's composition where there is one. */
    int composed = !noncomm && (lay->nodes != NULL ? lay->nodes->p == p && lay->nodes->nn < p
                                                   : fc__coll_node_aware(p, lay->node));
    switch (kind) {
    case FC_EV_MPI_Allreduce:
    case FC_EV_MPI_Reduce:
        if (composed && !(s != NULL && s->no_device[kind]))
            return FC__CA_AUTO;
        /* fall through */
    case FC_EV_MPI_Iallreduce:
    case FC_EV_MPI_Ireduce:
        if (!user && !noncomm)
            return FC__CA_AUTO;
        return kind == FC_EV_MPI_Allreduce || kind == FC_EV_MPI_Iallreduce ? FC__CA_RECURSIVE_DOUBLING
                                                                           : FC__CA_BINOMIAL;
    case FC_EV_MPI_Reduce_scatter:
    case FC_EV_MPI_Ireduce_scatter:
    case FC_EV_MPI_Reduce_scatter_block:
    case FC_EV_MPI_Ireduce_scatter_block:
        if (!noncomm)
            return FC__CA_AUTO;
        return is_pof2(p) && !lay->irregular ? FC__CA_NONCOMMUTATIVE : FC__CA_RECURSIVE_DOUBLING;
    default:
        return FC__CA_AUTO;
    }
}

/* A blocking exchange with one partner (MPIC_Sendrecv): both posted, then a wait. */
static int xchg(const fc__coll_sink *k, uint32_t peer, uint64_t b)
{
    int rc = k->post(k->ctx, 1, peer, b);
    if (rc == 0)
        rc = k->post(k->ctx, 0, peer, b);
    return rc == 0 ? k->wait(k->ctx) : rc;
}

static int one(const fc__coll_sink *k, int send, uint32_t peer, uint64_t b)
{
    int rc = k->post(k->ctx, send, peer, b);
    return rc == 0 ? k->wait(k->ctx) : rc;
}

/* MPIC_Sendrecv with a partner whose part differs in size: out sent, in received, then a wait. */
static int xchg2(const fc__coll_sink *k, uint32_t peer, uint64_t out, uint64_t in)
{
    int rc = k->post(k->ctx, 1, peer, out);
    if (rc == 0)
        rc = k->post(k->ctx, 0, peer, in);
    return rc == 0 ? k->wait(k->ctx) : rc;
}

/* The blocks of p members of blk bytes each outside the subtree [root, root + mask) (clipped to
 * the members): what MPICH's recursive doubling moves for a subtree (its derived datatypes'
 * two block runs, before and after the subtree). */
static uint64_t outside(uint32_t p, uint32_t root, uint32_t mask, uint64_t blk)
{
    uint32_t in = root >= p ? 0 : p - root < mask ? p - root : mask;
    return (uint64_t)(p - in) * blk;
}

/* Reduce_scatter(_block) by recursive doubling on any size (MPIR_Reduce_scatter_intra_recursive_
 * doubling, and the schedule of the non-blocking form): at each mask, member me exchanges with
 * me ^ mask when that member exists, sending the blocks outside its own subtree and receiving
 * those outside its partner's; where the partner's subtree runs past the last member, the
 * members of me's subtree that got data pass what they received on to those that did not, by
 * recursive halving inside the subtree (the non-power-of-two part). Blocks are n / p each. */
static int rd_any(const fc__coll_sink *sink, uint32_t p, uint32_t me, uint64_t n)
{
    uint64_t blk = n / p;
    int rc = 0;
    unsigned i = 0;
    for (uint32_t mask = 1; mask < p && rc == 0; mask <<= 1, i++) {
        uint32_t dst = me ^ mask, dst_root = dst >> i << i, my_root = me >> i << i;
        uint64_t recvb = outside(p, dst_root, mask, blk);
        if (dst < p)
            rc = xchg2(sink, dst, outside(p, my_root, mask, blk), recvb);
        if (rc != 0 || (uint64_t)dst_root + mask <= p)
            continue;
        int64_t done = (int64_t)p - my_root - mask; /* members of the subtree that have the data */
        unsigned k = i;
        for (uint32_t tm = mask >> 1; tm && rc == 0; tm >>= 1, k--) {
            uint32_t d = me ^ tm;
            int64_t edge = (int64_t)(me >> k << k) + done;
            if (d > me && me < edge && d >= edge && d < p)
                rc = one(sink, 1, d, recvb);
            else if (d < me && d < edge && me >= edge)
                rc = one(sink, 0, d, recvb);
        }
    }
    return rc;
}

int fc__coll_expand_noncommutative(unsigned kind, unsigned alg, uint32_t p, uint32_t me, uint32_t root, uint64_t n,
                                   const fc__coll_sink *sink)
{
    int rc = 0;
    switch (kind) {
    case FC_EV_MPI_Reduce:
    case FC_EV_MPI_Ireduce:
        if (alg != FC__CA_BINOMIAL || root == 0)
            return 1; /* rooted at 0 already: the commutative tree */
        /* The binomial tree rooted at member 0, so that the operands combine in rank order. */
        for (uint32_t mask = 1; mask < p && rc == 0; mask <<= 1) {
            if ((me & mask) == 0) {
                if ((me | mask) < p)
                    rc = one(sink, 0, me | mask, n);
            } else {
                rc = one(sink, 1, me & ~mask, n);
                break;
            }
        }
        if (rc == 0 && me == 0)
            rc = one(sink, 1, root, n);
        else if (rc == 0 && me == root)
            rc = one(sink, 0, 0, n);
        return rc;
    case FC_EV_MPI_Reduce_scatter:
    case FC_EV_MPI_Ireduce_scatter:
    case FC_EV_MPI_Reduce_scatter_block:
    case FC_EV_MPI_Ireduce_scatter_block:
        if (alg == FC__CA_RECURSIVE_DOUBLING && !is_pof2(p))
            return rd_any(sink, p, me, n);
        if (!is_pof2(p))
            return FC_EUNSUPPORTED;
        if (alg == FC__CA_NONCOMMUTATIVE) {
            uint64_t size = n;
            for (uint32_t mask = 1; mask < p && rc == 0; mask <<= 1) {
                size /= 2;
                rc = xchg(sink, me ^ mask, size);
            }
            return rc;
        }
        if (alg == FC__CA_RECURSIVE_DOUBLING) {
            /* Step k leaves out the blocks of the sender's own subtree: n - 2^k n / p. */
            for (uint32_t mask = 1; mask < p && rc == 0; mask <<= 1)
                rc = xchg(sink, me ^ mask, n - (uint64_t)mask * (n / p));
            return rc;
        }
        return 1;
    default:
        return 1;
    }
}
