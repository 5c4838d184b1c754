/* analyzer/trace/align.c: lookups of a rank's definitions and the services derived from them: clock
 * alignment to rank 0 and mapping communicator-local peers to world ranks. */
#include "util/internal.h"

/* fc__idmap_get's body, which the lookups below inline: a call to an exported function goes
 * through the PLT, and fc_rank_peer_world looks up a communicator for most records it maps. */
static inline long idmap_get(const fc__idmap *m, uint64_t id)
{
    if (id >= m->n || m->ix[id] == 0)
        return -1;
    return (long)m->ix[id] - 1;
}

long fc__idmap_get(const fc__idmap *m, uint64_t id)
{
    return idmap_get(m, id);
}

/* ---- lookups and derived services ------------------------------------------------------------- */

/* fc_rank points at the first member of fc__rank, so the cast recovers the container. */
#define PRIV(r) ((const fc__rank *)(r))

/* fc_rank_comm's body, inlined in fc_rank_peer_world. */
static inline const fc_comm *comm_of(const fc_rank *r, uint64_t id)
{
    long i = idmap_get(&PRIV(r)->comm_ix, id);
    return i < 0 ? NULL : &PRIV(r)->comms[i];
}

const fc_comm *fc_rank_comm(const fc_rank *r, uint64_t id)
{
    return comm_of(r, id);
}

const fc_site *fc_rank_site(const fc_rank *r, uint64_t id)
{
    long i = idmap_get(&PRIV(r)->site_ix, id);
    return i < 0 ? NULL : &PRIV(r)->sites[i];
}

const fc_module *fc_rank_module(const fc_rank *r, uint64_t id)
{
    long i = idmap_get(&PRIV(r)->module_ix, id);
    return i < 0 ? NULL : &PRIV(r)->modules[i];
}

/* The drift term of fc_rank_align between measurements a and b: the offset's change over the
 * measurements times the time since a, over the time between them, rounded toward zero. Out of
 * line, so that the constant offset of most traces is a few instructions without a stack frame. */
static __attribute__((noinline)) int64_t drift(const fc_clock *a, const fc_clock *b, uint64_t local_ns)
{
    int64_t d = b->offset_ns - a->offset_ns, x, den, num;
    /* In 64 bits when nothing can overflow: the same quotient as below, with no 128-bit division. */
    if (local_ns <= INT64_MAX && a->local_ns <= INT64_MAX && b->local_ns > a->local_ns &&
        b->local_ns <= INT64_MAX) {
        x = (int64_t)local_ns - (int64_t)a->local_ns;
        den = (int64_t)b->local_ns - (int64_t)a->local_ns;
        if (!__builtin_mul_overflow(d, x, &num))
            return num / den;
    }
    /* 128-bit so that an offset drift of milliseconds over hours of run cannot overflow. */
    __int128 num128 = (__int128)d * ((__int128)local_ns - (__int128)a->local_ns);
    __int128 den128 = (__int128)b->local_ns - (__int128)a->local_ns;
    return (int64_t)(num128 / den128);
}

int64_t fc_rank_align(const fc_rank *r, uint64_t local_ns)
{
    const fc_clock *a = PRIV(r)->init, *b = PRIV(r)->fin;
    if (a == NULL)
        a = b; /* FINALIZE alone: a constant offset as well */
    if (a == NULL)
        return (int64_t)local_ns;
    int64_t t = (int64_t)local_ns + a->offset_ns;
    if (b == NULL || b == a || b->local_ns == a->local_ns)
        return t;
    return t + drift(a, b, local_ns);
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
    const fc_comm *c = comm_of(r, comm);
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
