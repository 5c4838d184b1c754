/* analyzer/align.c: lookups of a rank's definitions and the services derived from them: clock
 * alignment to rank 0 and mapping communicator-local peers to world ranks. */
#include "internal.h"

long fc__idmap_get(const fc__idmap *m, uint64_t id)
{
    if (id >= m->n || m->ix[id] == 0)
        return -1;
    return (long)m->ix[id] - 1;
}

/* ---- lookups and derived services ------------------------------------------------------------- */

/* fc_rank points at the first member of fc__rank, so the cast recovers the container. */
#define PRIV(r) ((const fc__rank *)(r))

const fc_comm *fc_rank_comm(const fc_rank *r, uint64_t id)
{
    long i = fc__idmap_get(&PRIV(r)->comm_ix, id);
    return i < 0 ? NULL : &PRIV(r)->comms[i];
}

const fc_site *fc_rank_site(const fc_rank *r, uint64_t id)
{
    long i = fc__idmap_get(&PRIV(r)->site_ix, id);
    return i < 0 ? NULL : &PRIV(r)->sites[i];
}

const fc_module *fc_rank_module(const fc_rank *r, uint64_t id)
{
    long i = fc__idmap_get(&PRIV(r)->module_ix, id);
    return i < 0 ? NULL : &PRIV(r)->modules[i];
}

int64_t fc_rank_align(const fc_rank *r, uint64_t local_ns)
{
    const fc_clock *a = PRIV(r)->init, *b = PRIV(r)->fin;
    if (a == NULL)
        a = b; /* FINALIZE alone: a constant offset as well */
    if (a == NULL)
        return (int64_t)local_ns;
    if (b == NULL || b == a || b->local_ns == a->local_ns)
        return (int64_t)local_ns + a->offset_ns;
    /* 128-bit so that an offset drift of milliseconds over hours of run cannot overflow. */
    __int128 num = (__int128)(b->offset_ns - a->offset_ns) * ((__int128)local_ns - (__int128)a->local_ns);
    __int128 den = (__int128)b->local_ns - (__int128)a->local_ns;
    return (int64_t)local_ns + a->offset_ns + (int64_t)(num / den);
}

uint64_t fc_rank_clock_uncertainty(const fc_rank *r)
{
    const fc_clock *a = PRIV(r)->init, *b = PRIV(r)->fin;
    uint64_t u = a ? a->uncertainty_ns : 0;
    if (b && b->uncertainty_ns > u)
        u = b->uncertainty_ns;
    return u;
}

int64_t fc_rank_peer_world(const fc_rank *r, uint64_t comm, int64_t peer)
{
    if (peer < 0)
        return peer;
    const fc_comm *c = fc_rank_comm(r, comm);
    if (c == NULL) {
        /* Hand-built traces may leave out the predefined communicators. */
        if (comm == 0 && (uint64_t)peer < r->info.size)
            return peer;
        if (comm == 1 && peer == 0)
            return r->info.rank;
        return FC_PEER_UNMAPPED;
    }
    if (c->flags & FC_COMMF_INTER)
        return (uint64_t)peer < c->remote_size ? c->remote[peer] : FC_PEER_UNMAPPED;
    return (uint64_t)peer < c->local_size ? c->local[peer] : FC_PEER_UNMAPPED;
}
