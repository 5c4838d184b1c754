/* analyzer/collective/neighbor.c: the neighbourhood collectives as the messages of MPICH 4.0.2's
 * linear algorithm between each member and its neighbours (collective.h). */
#include <stdlib.h>
#include <flowcut/error.h>
#include <flowcut/reader.h>
#include "util/internal.h"
#include "collective/collective.h"

int fc__coll_is_neighbor(unsigned kind)
{
    return (kind >= FC_EV_MPI_Neighbor_allgather && kind <= FC_EV_MPI_Ineighbor_alltoallw);
}

/* Neighbor_alltoall posts its receives in reverse order (collective.h). */
static int reversed(unsigned kind)
{
    return kind == FC_EV_MPI_Neighbor_alltoall || kind == FC_EV_MPI_Ineighbor_alltoall;
}

int fc__coll_expand_neighbor(unsigned kind, uint32_t me, uint64_t own, const fc__coll_layout *lay,
                             const fc__coll_sink *sink)
{
    (void)me; /* the lists are already this member's */
    const fc__coll_nbrs *nb = lay != NULL ? lay->nbrs : NULL;
    if (nb == NULL || !fc__coll_is_neighbor(kind))
        return FC_EUNSUPPORTED;
    int rc = 0;
    /* The record's totals cover every position, MPI_PROC_NULL ones included (format.h). */
    uint64_t each_out = nb->outdeg ? own / nb->outdeg : 0, each_in = nb->indeg ? lay->received / nb->indeg : 0;
    for (uint32_t k = 0; k < nb->outdeg && rc == 0; k++)
        if (nb->dst[k] != FC__COLL_NO_PEER)
            rc = sink->post(sink->ctx, 1, nb->dst[k], lay->to ? lay->to[k] : each_out);
    for (uint32_t i = 0; i < nb->indeg && rc == 0; i++) {
        uint32_t l = reversed(kind) ? nb->indeg - 1 - i : i;
        if (nb->src[l] != FC__COLL_NO_PEER)
            rc = sink->post(sink->ctx, 0, nb->src[l], lay->from ? lay->from[l] : each_in);
    }
    return rc == 0 ? sink->wait(sink->ctx) : rc;
}

/* The member index of world rank w among mem[0 .. p), FC__COLL_NO_PEER when absent. The lists
 * are short and built once per communicator and rank. */
static uint32_t index_of(const uint32_t *mem, uint32_t p, int64_t w)
{
    for (uint32_t i = 0; w >= 0 && i < p; i++)
        if (mem[i] == (uint64_t)w)
            return i;
    return FC__COLL_NO_PEER;
}

int fc__coll_nbrs_of(const struct fc_rank *r, uint64_t comm, const uint32_t *mem, uint32_t p, fc__coll_nbrs **out)
{
    const fc__topo *tp = fc__rank_topo(r, comm);
    *out = NULL;
    if (tp == NULL)
        return 0;
    size_t n = (size_t)tp->indeg + tp->outdeg;
    fc__coll_nbrs *nb = malloc(sizeof *nb + (n ? n : 1) * sizeof(uint32_t));
    if (nb == NULL)
        return FC_ENOMEM;
    uint32_t *v = (uint32_t *)(nb + 1);
    for (uint32_t k = 0; k < tp->indeg; k++)
        v[k] = index_of(mem, p, tp->src[k]);
    for (uint32_t k = 0; k < tp->outdeg; k++)
        v[tp->indeg + k] = index_of(mem, p, tp->dst[k]);
    *nb = (fc__coll_nbrs){.indeg = tp->indeg, .outdeg = tp->outdeg, .src = v, .dst = v + tp->indeg};
    *out = nb;
    return 0;
}
