/* analyzer/collective/select.c: which algorithm MPICH 4.0.2 runs for a collective (collective.h
 * lists the rules: the ch4 device's compositions, then MPIR's table), the MPIR_CVAR_* variables
 * that force or bypass them, and the size of an instance as the members' records give it. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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
    return (kind >= FC_EV_MPI_Barrier && kind <= FC_EV_MPI_Iexscan) || fc__coll_is_neighbor(kind);
}

unsigned fc__coll_persistent(unsigned kind)
{
    if (kind >= FC_EV_MPI_Barrier_init && kind <= FC_EV_MPI_Scan_init)
        return kind - (FC_EV_MPI_Barrier_init - FC_EV_MPI_Ibarrier);
    if (kind == FC_EV_MPI_Exscan_init)
        return FC_EV_MPI_Iexscan;
    if (kind >= FC_EV_MPI_Neighbor_allgather_init && kind <= FC_EV_MPI_Neighbor_alltoallw_init)
        return kind - (FC_EV_MPI_Neighbor_allgather_init - FC_EV_MPI_Ineighbor_allgather);
    return 0;
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
        if (kind == FC_EV_MPI_Ibcast && strcmp(v, "flat") == 0)
            return FC__CA_REMOTE_SEND_LOCAL_BCAST; /* MPIR_Ibcast_inter_sched_flat */
    }
    for (unsigned a = 0; a < FC__CA_COUNT_; a++)
        if (strcmp(v, alg_names[a]) == 0)
            return a;
    return FC__CA_COUNT_;
}

/* The value of a boolean control variable: 1, 0, or -1 when it is neither. */
static int boolean(const char *v)
{
    if (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 || strcasecmp(v, "on") == 0)
        return 1;
    if (strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0 || strcasecmp(v, "off") == 0)
        return 0;
    return -1;
}

/* The blocking collective kind whose MPI name, upper-cased past "MPI_", is coll[0 .. lc). */
static unsigned kind_named(const char *coll, size_t lc)
{
    for (unsigned k = FC_EV_MPI_Barrier; k <= FC_EV_MPI_Iexscan; k++) {
        const char *kn = fc_event_kind_name(k) + 4; /* past "MPI_" */
        size_t i = 0;
        while (i < lc && kn[i] && toupper((unsigned char)kn[i]) == coll[i])
            i++;
        if (i == lc && kn[i] == '\0')
            return k;
    }
    return 0;
}

int fc__coll_setting(fc__coll_settings *s, const char *name, const char *value)
{
    static const char pre[] = "MPIR_CVAR_", post[] = "_INTRA_ALGORITHM", inter[] = "_INTER_ALGORITHM",
                      dev[] = "_DEVICE_COLLECTIVE", json[] = "COLL_SELECTION_TUNING_JSON_FILE";
    size_t n = strlen(name), lp = sizeof pre - 1, ls = sizeof post - 1, li = sizeof inter - 1, ld = sizeof dev - 1,
           lj = sizeof json - 1;
    if (n <= lp || strncmp(name, pre, lp) != 0)
        return 0;
    /* A tuning file of its own replaces the tables the selection follows. */
    if (n >= lj && strcmp(name + n - lj, json) == 0)
        return value[0] ? FC_EUNSUPPORTED : 0;
    if (strcmp(name + lp, "NOLOCAL") == 0 || strcmp(name + lp, "CLIQUES_BY_BLOCK") == 0 ||
        strcmp(name + lp, "ODD_EVEN_CLIQUES") == 0) {
        int b = boolean(value);
        if (b < 0)
            return 0;
        if (name[lp] == 'N')
            s->nolocal = (uint8_t)b;
        else if (name[lp] == 'C')
            s->cliques_by_block = (uint8_t)b;
        else if (b && s->cliques < 2)
            s->cliques = 2;
        return 1;
    }
    if (strcmp(name + lp, "NUM_CLIQUES") == 0) {
        char *end;
        long v = strtol(value, &end, 10);
        if (end == value || *end != '\0' || v < 0)
            return 0;
        s->cliques = (uint32_t)v;
        return 1;
    }
    if (strcmp(name + lp, "DEVICE_COLLECTIVES") == 0) {
        int b = boolean(value);
        if (b < 0)
            return 0;
        for (unsigned k = FC_EV_MPI_Barrier; k <= FC_EV_MPI_Iexscan; k++)
            s->no_device[k] = (uint8_t)!b;
        return 1;
    }
    if (n > lp + ld && strcmp(name + n - ld, dev) == 0) {
        unsigned k = kind_named(name + lp, n - lp - ld);
        int b = boolean(value);
        if (k == 0 || b < 0)
            return 0;
        s->no_device[k] = (uint8_t)!b;
        return 1;
    }
    if (n > lp + li && strcmp(name + n - li, inter) == 0) {
        /* On an inter-communicator: "auto", and the non-blocking forms' "sched_auto" (MPICH's
         * hand-written selection, the same choice as its table for inter-communicators), leave
         * the choice to MPICH; a named algorithm stands when it is one of kind's. */
        unsigned k = kind_named(name + lp, n - lp - li);
        if (k == 0)
            return 0;
        if (strcmp(value, "auto") == 0 || (k != blocking(k) && strcmp(value, "sched_auto") == 0)) {
            s->force_inter[k] = FC__CA_AUTO;
            return 1;
        }
        unsigned a = alg_of(k, value);
        if (a == FC__CA_COUNT_ || !fc__coll_inter_has(k, a))
            return FC_EUNSUPPORTED;
        s->force_inter[k] = (uint8_t)a;
        return 1;
    }
    if (n <= lp + ls || strcmp(name + n - ls, post) != 0)
        return 0;
    unsigned k = kind_named(name + lp, n - lp - ls);
    if (k == 0)
        return 0;
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
    if (fc__coll_is_neighbor(kind))
        return FC__CA_LINEAR; /* MPICH's only algorithm for them (collective.h) */
    unsigned a = s ? s->force[kind] : FC__CA_AUTO;
    /* MPICH falls back to its table when a forced algorithm cannot run on p members: the
     * power-of-two-only ones on other sizes. */
    if (a != FC__CA_AUTO && !is_pof2(p) &&
        ((a == FC__CA_RECURSIVE_DOUBLING && (blocking(kind) == FC_EV_MPI_Allgather || blocking(kind) == FC_EV_MPI_Allgatherv)) ||
         a == FC__CA_SCATTER_RD_ALLGATHER))
        a = FC__CA_AUTO;
    return a != FC__CA_AUTO ? a : by_table(kind, p, n);
}

int fc__coll_node_aware(uint32_t p, const uint32_t *node)
{
    if (node == NULL || p < 2)
        return 0;
    fc__coll_nodes d;
    if (fc__coll_nodes_build(p, node, &d) < 0)
        return 0; /* out of memory: MPIR's algorithm stands in */
    int aware = d.nn < p;
    fc__coll_nodes_free(&d);
    return aware;
}

/* 1 when each node's members are consecutive member indices (MPII_Comm_is_node_consecutive: the
 * nodes, numbered in the order of their first members, never decrease along the members). */
static int node_consecutive(uint32_t p, const fc__coll_layout *lay)
{
    fc__coll_nodes own;
    const fc__coll_nodes *d = lay->nodes;
    if (d == NULL || d->p != p) {
        if (lay->node == NULL || fc__coll_nodes_build(p, lay->node, &own) < 0)
            return 0; /* out of memory: MPIR's algorithm stands in */
        d = &own;
    }
    int yes = 1;
    for (uint32_t i = 1; i < p && yes; i++)
        yes = d->of[i] == d->of[i - 1] || d->of[i] == d->of[i - 1] + 1;
    if (d == &own)
        fc__coll_nodes_free(&own);
    return yes;
}

unsigned fc__coll_select_in(unsigned kind, uint32_t p, uint64_t n, const fc__coll_layout *lay)
{
    const fc__coll_settings *s = lay ? lay->settings : NULL;
    unsigned by_op = lay != NULL && lay->op != 0 ? fc__coll_select_op(kind, p, n, lay) : FC__CA_AUTO;
    if (by_op != FC__CA_AUTO)
        return by_op; /* noncommute.c */
    unsigned flat = fc__coll_select(kind, p, n, s);
    if (lay == NULL || (lay->nodes != NULL ? !(lay->nodes->p == p && lay->nodes->nn < p) : !fc__coll_node_aware(p, lay->node)))
        return flat;
    if (fc__coll_is_ctor(kind) || !fc__coll_is_coll(kind))
        return flat;
    /* MPIR's own barrier is node-aware on such a communicator too ("smp"), with the messages
     * between nodes of the device's alpha composition. */
    if (kind == FC_EV_MPI_Barrier && !(s != NULL && s->no_device[kind] && s->force[kind] != FC__CA_AUTO))
        return FC__CA_COMPOSITION_ALPHA;
    /* Scan is node-aware at both levels when each node's members are consecutive ranks: the
     * device's composition alpha, or MPIR's "smp" algorithm with the same messages, unless an
     * algorithm is forced with the device off. */
    if (kind == FC_EV_MPI_Scan) {
        if (!node_consecutive(p, lay) || (s != NULL && s->no_device[kind] && s->force[kind] != FC__CA_AUTO))
            return flat;
        return FC__CA_COMPOSITION_ALPHA;
    }
    /* The non-blocking forms go to MPIR, whose table takes the node-aware schedules ("smp") on
     * such a communicator, with the messages of the blocking compositions: Ibcast alpha's,
     * Ireduce beta's (operations taken as commutative), Iscan alpha's on consecutive nodes.
     * An algorithm the run forces for them stands. */
    if (kind == FC_EV_MPI_Ibcast || kind == FC_EV_MPI_Ireduce || kind == FC_EV_MPI_Iscan) {
        if (s != NULL && s->force[kind] != FC__CA_AUTO)
            return flat;
        if (kind == FC_EV_MPI_Ibcast)
            return FC__CA_COMPOSITION_ALPHA;
        if (kind == FC_EV_MPI_Ireduce)
            return FC__CA_COMPOSITION_BETA;
        return node_consecutive(p, lay) ? FC__CA_COMPOSITION_ALPHA : flat;
    }
    if (s != NULL && s->no_device[kind])
        return flat;
    switch (kind) {
    case FC_EV_MPI_Bcast:
        if (p < 8 || n < 12288)
            return FC__CA_COMPOSITION_ALPHA;
        return is_pof2(p) && n < 524288 ? FC__CA_COMPOSITION_BETA : flat;
    case FC_EV_MPI_Allreduce:
        return FC__CA_COMPOSITION_ALPHA;
    case FC_EV_MPI_Reduce:
        return n <= 2048 ? FC__CA_COMPOSITION_BETA : FC__CA_COMPOSITION_ALPHA;
    default:
        return flat;
    }
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
