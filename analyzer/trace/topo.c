/* analyzer/trace/topo.c: the virtual topologies of a rank's communicators, which follow the
 * entries of its COMMS blocks (format 2.6): each rank's neighbours, for the neighbourhood
 * collectives. */
#include <flowcut/error.h>
#include <flowcut/format.h>
#include "util/internal.h"

/* One list of n neighbours into the arena; -1 when cut short or naming a rank outside the world. */
static int get_list(fc_trace *t, uint32_t world, const unsigned char **p, const unsigned char *end, uint32_t *n,
                    const int64_t **out)
{
    uint64_t size, v;
    if (fc_get_uvarint(p, end, &size) < 0 || size > (uint64_t)(end - *p))
        return -1;
    int64_t *l = fc__arena_alloc(&t->arena, (size ? size : 1) * sizeof *l);
    if (l == NULL)
        return FC_ENOMEM;
    for (uint64_t i = 0; i < size; i++) {
        if (fc_get_uvarint(p, end, &v) < 0)
            return -1;
        l[i] = fc_unzigzag(v);
        if (l[i] != FC_PEER_NULL && (l[i] < 0 || l[i] >= (int64_t)world))
            return -1;
    }
    *n = (uint32_t)size;
    *out = l;
    return 0;
}

int fc__topo_parse(fc_trace *t, fc__rank *r, const unsigned char *p, const unsigned char *end)
{
    uint64_t count, id, kind;
    if (fc_get_uvarint(&p, end, &count) < 0)
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        const int64_t *in, *out;
        uint32_t nin, nout;
        int rc;
        if (fc_get_uvarint(&p, end, &id) < 0 || fc_get_uvarint(&p, end, &kind) < 0)
            return -1;
        if ((rc = get_list(t, r->pub.info.size, &p, end, &nin, &in)) < 0 ||
            (rc = get_list(t, r->pub.info.size, &p, end, &nout, &out)) < 0)
            return rc;
        if (fc__grow((void **)&r->topos, &r->ntopos, &r->tcap, sizeof *r->topos) < 0)
            return FC_ENOMEM;
        r->topos[r->ntopos++] = (fc__topo){.comm = id, .kind = (uint32_t)kind, .indeg = nin, .outdeg = nout,
                                           .src = in, .dst = out};
    }
    return 0;
}

const fc__topo *fc__rank_topo(const fc_rank *r, uint64_t id)
{
    const fc__rank *pr = (const fc__rank *)r;
    /* The last definition of an id wins, as for the communicators; topologies are few. */
    for (size_t i = pr->ntopos; i-- > 0;)
        if (pr->topos[i].comm == id)
            return &pr->topos[i];
    return NULL;
}
