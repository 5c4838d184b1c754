/* analyzer/collective/select.c: which algorithm MPICH 4.0.2 runs for a collective (collective.h
 * lists the rules), the MPIR_CVAR_*_INTRA_ALGORITHM variables that force one, and the size of an
 * instance as the members' records give it. */
#include <ctype.h>
#include <string.h>
#include <flowcut/error.h>
#include <flowcut/event.h>
#include "collective/collective.h"

static const char *const alg_names[FC__CA_COUNT_] = {
#define FC__X(name, text) [FC__CA_##name] = text,
    FC__COLL_ALGS(FC__X)
#undef FC__X
};

const char *fc__coll_alg_name(unsigned alg)
{
    return alg < FC__CA_COUNT_ ? alg_names[alg] : "unknown";
}

int fc__coll_is_coll(unsigned kind)
{
    return kind >= FC_EV_MPI_Barrier && kind <= FC_EV_MPI_Iexscan;
}

int fc__coll_is_ctor(unsigned kind)
{
    /* MPI_Comm_create_group is collective over its group only, not the parent: left out. */
    return (kind >= FC_EV_MPI_Comm_dup && kind <= FC_EV_MPI_Dist_graph_create_adjacent) ||
           kind == FC_EV_MPI_Comm_split_type || kind == FC_EV_MPI_Comm_dup_with_info ||
           kind == FC_EV_MPI_Comm_idup || kind == FC_EV_MPI_Cart_sub;
}

/* The blocking kind of a non-blocking collective (MPI_Ibcast -> MPI_Bcast), else kind itself. */
static unsigned blocking(unsigned kind)
{
    return kind >= FC_EV_MPI_Ibarrier && kind <= FC_EV_MPI_Iexscan ? kind - (FC_EV_MPI_Ibarrier - FC_EV_MPI_Barrier)
                                                                    : kind;
}

/* The algorithms the expansion models per blocking kind (MPICH's other values, such as nb, smp,
 * tree or recexch, are not modelled). */
static int modelled(unsigned kind, unsigned alg)
{
    switch (blocking(kind)) {
    case FC_EV_MPI_Barrier:
        return alg == FC__CA_K_DISSEMINATION;
    case FC_EV_MPI_Bcast:
        return alg == FC__CA_BINOMIAL || alg == FC__CA_SCATTER_RD_ALLGATHER || alg == FC__CA_SCATTER_RING_ALLGATHER;
    case FC_EV_MPI_Allreduce:
        return alg == FC__CA_RECURSIVE_DOUBLING || alg == FC__CA_REDUCE_SCATTER_ALLGATHER;
    case FC_EV_MPI_Reduce:
        return alg == FC__CA_BINOMIAL || alg == FC__CA_REDUCE_SCATTER_GATHER;
    case FC_EV_MPI_Allgather:
    case FC_EV_MPI_Allgatherv:
        return alg == FC__CA_RECURSIVE_DOUBLING || alg == FC__CA_BRUCKS || alg == FC__CA_RING;
    case FC_EV_MPI_Gather:
    case FC_EV_MPI_Scatter:
        return alg == FC__CA_BINOMIAL;
    case FC_EV_MPI_Gatherv:
    case FC_EV_MPI_Scatterv:
        return alg == FC__CA_LINEAR;
    case FC_EV_MPI_Alltoall:
        return alg == FC__CA_BRUCKS || alg == FC__CA_SCATTERED || alg == FC__CA_PAIRWISE;
    case FC_EV_MPI_Alltoallv:
    case FC_EV_MPI_Alltoallw:
        return alg == FC__CA_SCATTERED;
    case FC_EV_MPI_Reduce_scatter:
    case FC_EV_MPI_Reduce_scatter_block:
        return alg == FC__CA_RECURSIVE_HALVING || alg == FC__CA_PAIRWISE;
    case FC_EV_MPI_Scan:
    case FC_EV_MPI_Exscan:
        return alg == FC__CA_RECURSIVE_DOUBLING;
    default:
        return 0;
    }
}

/* The algorithm named by a CVAR value for kind: the non-blocking forms' values carry a "sched_"
 * prefix, and two of their names stand for the blocking patterns the expansion has (permuted
 * send-receive and blocked all-to-all post everything and wait once, like "scattered"; the
 * Ibarrier's recursive doubling is the dissemination pattern). */
static unsigned alg_of(unsigned kind, const char *v)
{
    if (kind != blocking(kind)) {
        if (strncmp(v, "sched_", 6) == 0)
            v += 6;
        if (strcmp(v, "permuted_sendrecv") == 0 || strcmp(v, "blocked") == 0)
            return FC__CA_SCATTERED;
        if (kind == FC_EV_MPI_Ibarrier && strcmp(v, "recursive_doubling") == 0)
            return FC__CA_K_DISSEMINATION;
    }
    for (unsigned a = 0; a < FC__CA_COUNT_; a++)
        if (strcmp(v, alg_names[a]) == 0)
            return a;
    return FC__CA_COUNT_;
}

int fc__coll_setting(fc__coll_settings *s, const char *name, const char *value)
{
    static const char pre[] = "MPIR_CVAR_", post[] = "_INTRA_ALGORITHM";
    size_t n = strlen(name), lp = sizeof pre - 1, ls = sizeof post - 1;
    if (n <= lp + ls || strncmp(name, pre, lp) != 0 || strcmp(name + n - ls, post) != 0)
        return 0;
    const char *coll = name + lp;
    size_t lc = n - lp - ls;
    for (unsigned k = FC_EV_MPI_Barrier; k <= FC_EV_MPI_Iexscan; k++) {
        const char *kn = fc_event_kind_name(k) + 4; /* past "MPI_" */
        size_t i = 0;
        while (i < lc && kn[i] && toupper((unsigned char)kn[i]) == coll[i])
            i++;
        if (i != lc || kn[i] != '\0')
            continue;
        if (strcmp(value, "auto") == 0) {
            s->force[k] = FC__CA_AUTO;
            return 1;
        }
        unsigned a = alg_of(k, value);
        if (a == FC__CA_COUNT_ || !modelled(k, a))
            return FC_EUNSUPPORTED;
        s->force[k] = (uint8_t)a;
        return 1;
    }
    return 0;
}

static int is_pof2(uint32_t p)
{
    return p && (p & (p - 1)) == 0;
}

static uint32_t pof2_below(uint32_t p)
{
    uint32_t x = 1;
    while (x * 2 <= p)
        x *= 2;
    return x;
}

/* MPICH's table (coll_selection.json) for kind on p members of size n. */
static unsigned by_table(unsigned kind, uint32_t p, uint64_t n)
{
    int nb = kind != blocking(kind);
    switch (blocking(kind)) {
    case FC_EV_MPI_Barrier:
        return FC__CA_K_DISSEMINATION;
    case FC_EV_MPI_Bcast:
        if (p < 8 || (nb ? n < 12288 : n <= 12288))
            return FC__CA_BINOMIAL;
        return is_pof2(p) && (nb ? n < 524288 : n <= 524288) ? FC__CA_SCATTER_RD_ALLGATHER
                                                             : FC__CA_SCATTER_RING_ALLGATHER;
    case FC_EV_MPI_Allreduce:
        /* Elements are counted as 8 bytes: the trace records bytes, not the datatype. */
        return n <= (nb ? 2048u : 8u) || n / 8 < pof2_below(p) ? FC__CA_RECURSIVE_DOUBLING
                                                               : FC__CA_REDUCE_SCATTER_ALLGATHER;
    case FC_EV_MPI_Reduce:
        return n <= 2048 || n / 8 < pof2_below(p) ? FC__CA_BINOMIAL : FC__CA_REDUCE_SCATTER_GATHER;
    case FC_EV_MPI_Allgather:
    case FC_EV_MPI_Allgatherv:
        if (is_pof2(p))
            return n * p < 524288 ? FC__CA_RECURSIVE_DOUBLING : FC__CA_RING;
        return n * p < 81920 ? FC__CA_BRUCKS : FC__CA_RING;
    case FC_EV_MPI_Gather:
    case FC_EV_MPI_Scatter:
        return FC__CA_BINOMIAL;
    case FC_EV_MPI_Gatherv:
    case FC_EV_MPI_Scatterv:
        return FC__CA_LINEAR;
    case FC_EV_MPI_Alltoall:
        if (p >= 8 && n <= (nb ? 2048u : 256u))
            return FC__CA_BRUCKS;
        return n <= 32768 ? FC__CA_SCATTERED : FC__CA_PAIRWISE;
    case FC_EV_MPI_Alltoallv:
    case FC_EV_MPI_Alltoallw:
        return FC__CA_SCATTERED;
    case FC_EV_MPI_Reduce_scatter:
    case FC_EV_MPI_Reduce_scatter_block:
        return is_pof2(p) && n < 524288 ? FC__CA_RECURSIVE_HALVING : FC__CA_PAIRWISE;
    case FC_EV_MPI_Scan:
    case FC_EV_MPI_Exscan:
        return FC__CA_RECURSIVE_DOUBLING;
    default:
        return FC__CA_AUTO;
    }
}

unsigned fc__coll_select(unsigned kind, uint32_t p, uint64_t n, const fc__coll_settings *s)
{
    if (fc__coll_is_ctor(kind))
        kind = FC_EV_MPI_Barrier;
    if (!fc__coll_is_coll(kind))
        return FC__CA_AUTO;
    unsigned a = s ? s->force[kind] : FC__CA_AUTO;
    /* MPICH falls back to its table when a forced algorithm cannot run on p members: the
     * power-of-two-only ones on other sizes. */
    if (a != FC__CA_AUTO && !is_pof2(p) &&
        ((a == FC__CA_RECURSIVE_DOUBLING && (blocking(kind) == FC_EV_MPI_Allgather || blocking(kind) == FC_EV_MPI_Allgatherv)) ||
         a == FC__CA_SCATTER_RD_ALLGATHER))
        a = FC__CA_AUTO;
    return a != FC__CA_AUTO ? a : by_table(kind, p, n);
}

uint64_t fc__coll_size(unsigned kind, uint64_t bytes, uint64_t bytes2, uint32_t p)
{
    switch (kind) {
    case FC_EV_MPI_Scatter: case FC_EV_MPI_Iscatter:
        return bytes2;
    case FC_EV_MPI_Gather: case FC_EV_MPI_Igather: case FC_EV_MPI_Allgather:
    case FC_EV_MPI_Iallgather: case FC_EV_MPI_Allgatherv: case FC_EV_MPI_Iallgatherv:
        return bytes;
    case FC_EV_MPI_Alltoall: case FC_EV_MPI_Ialltoall:
        return p ? bytes / p : bytes;
    default:
        return fc__coll_is_ctor(kind) ? 0 : (bytes > bytes2 ? bytes : bytes2);
    }
}
