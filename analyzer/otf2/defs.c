/* analyzer/otf2/defs.c: the definitions of an OTF2 export (strings, system tree, locations,
 * regions, communicators, calling contexts) and what the OTF2 files share: OTF2's error messages
 * and the OTF2 names of flowcut's MPI functions. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "util/internal.h"
#include "otf2/common.h"

/* ---- OTF2's error messages, kept rather than printed ----------------------------------------- */

static _Thread_local char otf2_msg[256];

static OTF2_ErrorCode keep_error(void *data, const char *file, uint64_t line, const char *function,
                                 OTF2_ErrorCode code, const char *fmt, va_list va)
{
    (void)data, (void)file, (void)line, (void)function;
    if (otf2_msg[0] == '\0') {
        char detail[192] = "";
        if (fmt != NULL)
            vsnprintf(detail, sizeof detail, fmt, va);
        snprintf(otf2_msg, sizeof otf2_msg, "%s%s%s", OTF2_Error_GetDescription(code), detail[0] ? ": " : "",
                 detail);
    }
    return code;
}

void fc__otf2_quiet(void)
{
    otf2_msg[0] = '\0';
    OTF2_Error_RegisterCallback(keep_error, NULL);
}

void fc__otf2_loud(void)
{
    OTF2_Error_RegisterCallback(NULL, NULL);
}

const char *fc__otf2_message(void)
{
    return otf2_msg;
}

/* ---- what Score-P calls each MPI function ------------------------------------------------------ */

enum { CLS_P2P = 1, CLS_COLL, CLS_COMM, CLS_REQ, CLS_PROBE, CLS_ENV, CLS_SUB };
static const unsigned char kind_class[FC_EV_MAX_] = {
#define FC__X(name, num, cls) [num] = CLS_##cls,
    FC_EVENT_KINDS(FC__X)
#undef FC__X
};

int fc__otf2_icoll(unsigned kind)
{
    return (kind >= FC_EV_MPI_Ibarrier && kind <= FC_EV_MPI_Iexscan) ||
           (kind >= FC_EV_MPI_Ineighbor_allgather && kind <= FC_EV_MPI_Ineighbor_alltoallw);
}

/* The blocking form of a persistent collective (MPI_Allreduce_init -> MPI_Allreduce), by name:
 * the persistent kinds are numbered apart from the others (format.h). 0 for other kinds. */
static unsigned blocking_of_init(unsigned kind)
{
    const char *name = kind < FC_EV_MAX_ && kind_class[kind] == CLS_COLL ? fc_event_kind_name(kind) : NULL;
    size_t n = name != NULL ? strlen(name) : 0;
    char base[64];
    if (n < 6 || n >= sizeof base || strcmp(name + n - 5, "_init") != 0)
        return 0;
    memcpy(base, name, n - 5);
    base[n - 5] = '\0';
    int k = fc_event_kind_from_name(base);
    return k > 0 ? (unsigned)k : 0;
}

int fc__otf2_persistent(unsigned kind)
{
    unsigned b = blocking_of_init(kind);
    return b != 0 && fc__otf2_collective(b) >= 0;
}

int fc__otf2_collective(unsigned kind)
{
    /* The blocking, non-blocking and persistent forms share an operation: fold the others onto
     * the blocking one. */
    if (kind >= FC_EV_MPI_Ibarrier && kind <= FC_EV_MPI_Iexscan)
        kind = kind - FC_EV_MPI_Ibarrier + FC_EV_MPI_Barrier;
    else if (kind >= FC_EV_MPI_Ineighbor_allgather && kind <= FC_EV_MPI_Ineighbor_alltoallw)
        kind = kind - FC_EV_MPI_Ineighbor_allgather + FC_EV_MPI_Neighbor_allgather;
    else if (blocking_of_init(kind) != 0)
        kind = blocking_of_init(kind);
    switch (kind) {
    case FC_EV_MPI_Barrier: return OTF2_COLLECTIVE_OP_BARRIER;
    case FC_EV_MPI_Bcast: return OTF2_COLLECTIVE_OP_BCAST;
    case FC_EV_MPI_Reduce: return OTF2_COLLECTIVE_OP_REDUCE;
    case FC_EV_MPI_Allreduce: return OTF2_COLLECTIVE_OP_ALLREDUCE;
    case FC_EV_MPI_Gather: return OTF2_COLLECTIVE_OP_GATHER;
    case FC_EV_MPI_Gatherv: return OTF2_COLLECTIVE_OP_GATHERV;
    case FC_EV_MPI_Scatter: return OTF2_COLLECTIVE_OP_SCATTER;
    case FC_EV_MPI_Scatterv: return OTF2_COLLECTIVE_OP_SCATTERV;
    case FC_EV_MPI_Allgather: return OTF2_COLLECTIVE_OP_ALLGATHER;
    case FC_EV_MPI_Allgatherv: return OTF2_COLLECTIVE_OP_ALLGATHERV;
    case FC_EV_MPI_Alltoall: return OTF2_COLLECTIVE_OP_ALLTOALL;
    case FC_EV_MPI_Alltoallv: return OTF2_COLLECTIVE_OP_ALLTOALLV;
    case FC_EV_MPI_Alltoallw: return OTF2_COLLECTIVE_OP_ALLTOALLW;
    case FC_EV_MPI_Reduce_scatter: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER;
    case FC_EV_MPI_Reduce_scatter_block: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK;
    case FC_EV_MPI_Scan: return OTF2_COLLECTIVE_OP_SCAN;
    case FC_EV_MPI_Exscan: return OTF2_COLLECTIVE_OP_EXSCAN;
    /* OTF2 has no neighbourhood operations: Score-P writes a neighbourhood collective as the
     * operation of its plain counterpart on the topology's communicator, and so does the export;
     * the region's name says which it is. */
    case FC_EV_MPI_Neighbor_allgather: return OTF2_COLLECTIVE_OP_ALLGATHER;
    case FC_EV_MPI_Neighbor_allgatherv: return OTF2_COLLECTIVE_OP_ALLGATHERV;
    case FC_EV_MPI_Neighbor_alltoall: return OTF2_COLLECTIVE_OP_ALLTOALL;
    case FC_EV_MPI_Neighbor_alltoallv: return OTF2_COLLECTIVE_OP_ALLTOALLV;
    case FC_EV_MPI_Neighbor_alltoallw: return OTF2_COLLECTIVE_OP_ALLTOALLW;
    case FC_EV_MPI_Comm_free: return OTF2_COLLECTIVE_OP_DESTROY_HANDLE;
    default:
        return kind < FC_EV_MAX_ && kind_class[kind] == CLS_COMM ? OTF2_COLLECTIVE_OP_CREATE_HANDLE : -1;
    }
}

OTF2_RegionRole fc__otf2_role(unsigned kind)
{
    switch (fc__otf2_collective(kind)) {
    case OTF2_COLLECTIVE_OP_BARRIER: return OTF2_REGION_ROLE_BARRIER;
    case OTF2_COLLECTIVE_OP_BCAST: case OTF2_COLLECTIVE_OP_SCATTER: case OTF2_COLLECTIVE_OP_SCATTERV:
        return OTF2_REGION_ROLE_COLL_ONE2ALL;
    case OTF2_COLLECTIVE_OP_REDUCE: case OTF2_COLLECTIVE_OP_GATHER: case OTF2_COLLECTIVE_OP_GATHERV:
        return OTF2_REGION_ROLE_COLL_ALL2ONE;
    case OTF2_COLLECTIVE_OP_ALLREDUCE: case OTF2_COLLECTIVE_OP_ALLGATHER: case OTF2_COLLECTIVE_OP_ALLGATHERV:
    case OTF2_COLLECTIVE_OP_ALLTOALL: case OTF2_COLLECTIVE_OP_ALLTOALLV: case OTF2_COLLECTIVE_OP_ALLTOALLW:
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER: case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK:
        return OTF2_REGION_ROLE_COLL_ALL2ALL;
    case OTF2_COLLECTIVE_OP_SCAN: case OTF2_COLLECTIVE_OP_EXSCAN:
        return OTF2_REGION_ROLE_COLL_OTHER;
    default:
        break;
    }
    unsigned cls = kind < FC_EV_MAX_ ? kind_class[kind] : 0;
    return cls == CLS_P2P || cls == CLS_REQ || cls == CLS_PROBE ? OTF2_REGION_ROLE_POINT2POINT
                                                                : OTF2_REGION_ROLE_FUNCTION;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

int fc__intern_id(fc__intern *t, const char *s, uint32_t *id)
{
    if ((t->n + 1) * 2 > t->scap) {
        size_t ncap = t->scap ? t->scap * 2 : 256;
        uint32_t *ns = calloc(ncap, sizeof *ns);
        if (ns == NULL)
            return FC_ENOMEM;
        for (size_t i = 0; i < t->n; i++) {
            size_t j = hash_str(t->s[i]) & (ncap - 1);
            while (ns[j])
                j = (j + 1) & (ncap - 1);
            ns[j] = (uint32_t)i + 1;
        }
        free(t->slot);
        t->slot = ns;
        t->scap = ncap;
    }
    size_t j = hash_str(s) & (t->scap - 1);
    for (; t->slot[j]; j = (j + 1) & (t->scap - 1))
        if (strcmp(t->s[t->slot[j] - 1], s) == 0) {
            *id = t->slot[j] - 1;
            return 0;
        }
    char *c = strdup(s);
    if (c == NULL || fc__grow((void **)&t->s, &t->n, &t->cap, sizeof *t->s) < 0) {
        free(c);
        return FC_ENOMEM;
    }
    t->s[t->n] = c;
    t->slot[j] = (uint32_t)++t->n;
    *id = (uint32_t)t->n - 1;
    return 1;
}

void fc__intern_free(fc__intern *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    free(t->slot);
}

uint32_t fc__otf2_str(fc__exporter *x, const char *s)
{
    uint32_t id = 0;
    /* Every string is interned before the definitions are written; this only looks it up. */
    if (fc__intern_id(&x->strings, s ? s : "", &id) < 0)
        return OTF2_UNDEFINED_STRING;
    return id;
}

int fc__otf2_has_region(unsigned kind)
{
    return kind > 0 && kind < FC_EV_MAX_ && fc_event_kind_name(kind) != NULL && kind_class[kind] != CLS_SUB;
}

/* ---- communicators ------------------------------------------------------------------------------ */

static int same_list(uint32_t n, const uint32_t *a, uint32_t m, const uint32_t *b)
{
    return n == m && (n == 0 || memcmp(a, b, n * sizeof *a) == 0);
}

/* The OTF2 comm of one rank's communicator, adding it to the table when new. Both sides of an
 * inter-communicator name the same comm: its groups are ordered by their first member. */
static int comm_index(fc__exporter *x, const fc_comm *c, int64_t ordinal_key, uint32_t *out)
{
    int inter = (c->flags & FC_COMMF_INTER) != 0;
    uint32_t na = c->local_size, nb = c->remote_size;
    const uint32_t *a = c->local, *b = c->remote;
    if (inter && nb > 0 && (na == 0 || b[0] < a[0])) {
        const uint32_t *tp = a;
        a = b, b = tp;
        uint32_t tn = na;
        na = nb, nb = tn;
    }
    int64_t seen = 0;
    for (size_t i = 0; i < x->ncomms; i++) {
        fc__xcomm *k = &x->comms[i];
        if (k->inter == inter && same_list(k->nlocal, k->local, na, a) && same_list(k->nremote, k->remote, nb, b)) {
            if (seen++ == ordinal_key) {
                *out = (uint32_t)i;
                return 0;
            }
        }
    }
    /* A new ordinal of these members: add comms up to it, so that ordinal n is the n-th. */
    while (seen <= ordinal_key) {
        if (fc__grow((void **)&x->comms, &x->ncomms, &x->ccap, sizeof *x->comms) < 0)
            return FC_ENOMEM;
        fc__xcomm *k = &x->comms[x->ncomms++];
        memset(k, 0, sizeof *k);
        k->inter = inter;
        k->nlocal = na, k->local = a;
        k->nremote = nb, k->remote = b;
        seen++;
    }
    *out = (uint32_t)x->ncomms - 1;
    return 0;
}

/* ---- cartesian topologies ------------------------------------------------------------------------ */

/* The comm rank of world rank w in comm c, or -1. */
static int64_t comm_rank(const fc__xcomm *c, int64_t w)
{
    for (uint32_t i = 0; i < c->nlocal; i++)
        if (c->local[i] == w)
            return i;
    return -1;
}

/* Member me's neighbour in dimension d of t, shifted by dir (+1 or -1), as MPI_Cart_shift gives it:
 * a comm rank, or -1 for MPI_PROC_NULL. MPI numbers a cartesian communicator's ranks in row-major
 * order of their coordinates. */
static int64_t cart_shift(const fc__xtopo *t, uint32_t me, uint32_t d, int dir)
{
    uint64_t stride = 1;
    for (uint32_t e = d + 1; e < t->ndims; e++)
        stride *= t->size[e];
    uint64_t c = (me / stride) % t->size[d];
    int64_t n = (int64_t)c + dir;
    if (n < 0 || n >= (int64_t)t->size[d]) {
        if (!t->periodic[d])
            return -1;
        n = (n + t->size[d]) % t->size[d];
    }
    return (int64_t)me + (n - (int64_t)c) * (int64_t)stride;
}

/* The dimensions of cartesian communicator c from the neighbour lists of its comm rank 0, whose
 * coordinates are all 0 (tp: per dimension the source, then the destination of MPI_Cart_shift by
 * 1, as world ranks). In MPI's row-major numbering dimension d's stride is the product of the
 * later dimensions' sizes: rank 0's destination in d is comm rank stride(d) (MPI_PROC_NULL for a
 * dimension of one coordinate, rank 0 itself when that one is periodic), its source
 * (size(d) - 1) stride(d) when d is periodic, MPI_PROC_NULL otherwise; a non-periodic
 * dimension's size is then the stride of the nearest earlier dimension with a destination (the
 * members when none) over its own. Returns 0, or -1 when the lists describe no grid of c's
 * members. */
static int cart_dims(const fc__xcomm *c, const fc__topo *tp, fc__xtopo *t)
{
    uint64_t p = c->nlocal, *stride = calloc(t->ndims, sizeof *stride);
    int rc = -1;
    if (stride == NULL)
        return -1;
    for (uint32_t d = 0; d < t->ndims; d++) {
        int64_t src = tp->src[2 * d] == FC_PEER_NULL ? -1 : comm_rank(c, tp->src[2 * d]);
        int64_t dst = tp->src[2 * d + 1] == FC_PEER_NULL ? -1 : comm_rank(c, tp->src[2 * d + 1]);
        t->periodic[d] = src >= 0;
        if (dst <= 0) { /* one coordinate: no neighbour, or itself when periodic */
            if (src != dst || (tp->src[2 * d] == FC_PEER_NULL) != (tp->src[2 * d + 1] == FC_PEER_NULL))
                goto out;
            t->size[d] = 1;
        } else {
            stride[d] = (uint64_t)dst;
            if (src >= 0) {
                if ((uint64_t)src % stride[d] != 0)
                    goto out;
                t->size[d] = (uint32_t)((uint64_t)src / stride[d] + 1);
            } else
                t->size[d] = 0; /* below */
        }
    }
    uint64_t s = 1;
    for (uint32_t d = t->ndims; d-- > 0;) {
        if (stride[d] == 0)
            continue;
        if (stride[d] != s)
            goto out;
        if (t->size[d] == 0) {
            uint64_t up = p;
            for (uint32_t e = d; e-- > 0;)
                if (stride[e] != 0) {
                    up = stride[e];
                    break;
                }
            if (up % s != 0 || up / s < 2)
                goto out;
            t->size[d] = (uint32_t)(up / s);
        }
        s *= t->size[d];
    }
    rc = s == p ? 0 : -1;
out:
    free(stride);
    return rc;
}

/* Whether member me's recorded lists are those of t's grid. */
static int cart_agrees(const fc__xcomm *c, const fc__xtopo *t, uint32_t me, const fc__topo *tp)
{
    if (tp->kind != FC_TOPO_CART || tp->indeg != 2 * t->ndims || tp->outdeg != 2 * t->ndims)
        return 0;
    for (uint32_t d = 0; d < t->ndims; d++)
        for (int k = 0; k < 2; k++) {
            int64_t want = cart_shift(t, me, d, k ? 1 : -1);
            int64_t w = want < 0 ? FC_PEER_NULL : (int64_t)c->local[want];
            if (tp->src[2 * d + k] != w || tp->dst[2 * d + k] != w)
                return 0;
        }
    return 1;
}

/* The cartesian topologies of the trace's communicators, each found from its comm rank 0's lists
 * and kept when every member present agrees. Graph and distributed-graph topologies have no OTF2
 * definition: they are not exported. */
static int build_topos(fc__exporter *x)
{
    size_t n = fc_trace_nranks(x->t);
    uint32_t next_dim = 0;
    for (size_t i = 0; i < n; i++) {
        const fc_rank *r = fc_trace_rank(x->t, i);
        for (size_t j = 0; j < r->ncomms; j++) {
            const fc_comm *fc = &r->comms[j];
            const fc__topo *tp = fc__rank_topo(r, fc->id);
            uint32_t oc = fc->id < x->ncomm_of[i] ? x->comm_of[i][fc->id] : UINT32_MAX;
            if (tp == NULL || tp->kind != FC_TOPO_CART || oc == UINT32_MAX || oc < 2 || x->comms[oc].inter ||
                x->comms[oc].nlocal == 0 || x->comms[oc].local[0] != r->info.rank || tp->indeg == 0 ||
                tp->indeg % 2 != 0 || tp->indeg > 2 * 255 || tp->outdeg != tp->indeg)
                continue;
            int dup = 0;
            for (size_t k = 0; k < x->ntopos; k++)
                dup |= x->topos[k].comm == oc;
            if (dup)
                continue;
            fc__xtopo t = {.comm = oc, .ndims = tp->indeg / 2};
            t.size = calloc(t.ndims, sizeof *t.size);
            t.periodic = calloc(t.ndims, 1);
            if (t.size == NULL || t.periodic == NULL ||
                fc__grow((void **)&x->topos, &x->ntopos, &x->tcap, sizeof *x->topos) < 0) {
                free(t.size), free(t.periodic);
                return fc__err(FC_ENOMEM, "out of memory");
            }
            int ok = cart_dims(&x->comms[oc], tp, &t) == 0;
            /* Every member present must agree with the grid. */
            for (size_t q = 0; ok && q < n; q++) {
                const fc_rank *rq = fc_trace_rank(x->t, q);
                for (size_t jq = 0; jq < rq->ncomms; jq++) {
                    uint64_t id = rq->comms[jq].id;
                    if (id >= x->ncomm_of[q] || x->comm_of[q][id] != oc)
                        continue;
                    const fc__topo *tq = fc__rank_topo(rq, id);
                    int64_t me = comm_rank(&x->comms[oc], rq->info.rank);
                    ok &= tq != NULL && me >= 0 && cart_agrees(&x->comms[oc], &t, (uint32_t)me, tq);
                }
            }
            if (!ok) {
                free(t.size), free(t.periodic);
                continue;
            }
            t.first_dim = next_dim;
            next_dim += t.ndims;
            x->topos[x->ntopos++] = t;
        }
    }
    return 0;
}

int fc__otf2_build_comms(fc__exporter *x)
{
    size_t n = fc_trace_nranks(x->t);
    uint32_t *all = malloc((x->world ? x->world : 1) * sizeof *all);
    if (all == NULL)
        return FC_ENOMEM;
    for (uint32_t i = 0; i < x->world; i++)
        all[i] = i;
    /* OTF2 comm 0 is MPI_COMM_WORLD, comm 1 MPI_COMM_SELF (one definition for every rank, as
     * Score-P: its group is of type COMM_SELF and has no members). */
    int rc = 0;
    fc__xcomm world = {0, x->world, 0, all, NULL, 0, 0}, self = {0, 0, 0, NULL, NULL, 0, 0};
    for (int k = 0; k < 2; k++) {
        if (fc__grow((void **)&x->comms, &x->ncomms, &x->ccap, sizeof *x->comms) < 0) {
            rc = FC_ENOMEM;
            goto out;
        }
        x->comms[x->ncomms++] = k ? self : world;
    }
    x->comm_of = calloc(n ? n : 1, sizeof *x->comm_of);
    x->ncomm_of = calloc(n ? n : 1, sizeof *x->ncomm_of);
    if (x->comm_of == NULL || x->ncomm_of == NULL) {
        rc = FC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const fc_rank *r = fc_trace_rank(x->t, i);
        uint64_t maxid = 1;
        for (size_t j = 0; j < r->ncomms; j++)
            if (r->comms[j].id > maxid)
                maxid = r->comms[j].id;
        if ((x->comm_of[i] = malloc((maxid + 1) * sizeof **x->comm_of)) == NULL) {
            rc = FC_ENOMEM;
            goto out;
        }
        x->ncomm_of[i] = maxid + 1;
        for (uint64_t j = 0; j <= maxid; j++)
            x->comm_of[i][j] = j == 0 ? 0 : j == 1 ? 1 : UINT32_MAX;
        for (size_t j = 0; j < r->ncomms; j++) {
            const fc_comm *c = &r->comms[j];
            if (c->id <= 1)
                continue; /* world and self: the shared definitions above */
            /* A lazily seen communicator of unknown ordinal counts as the first of its members. */
            if ((rc = comm_index(x, c, c->ordinal < 0 ? 0 : c->ordinal, &x->comm_of[i][c->id])) < 0)
                goto out;
        }
    }
    x->st.comms = x->ncomms;
    return build_topos(x);
out:
    return rc;
}

/* ---- call sites as calling contexts -------------------------------------------------------------- */

/* The calling context (region, scl, parent), added when new. Regions are final OTF2 ids: the MPI
 * functions' below nmpi, the frames' functions from nmpi on. */
static int cc_intern(fc__exporter *x, uint32_t region, uint32_t scl, uint32_t parent, uint32_t *out)
{
    char key[48];
    int rc;
    snprintf(key, sizeof key, "%u/%u/%u", region, scl, parent);
    if ((rc = fc__intern_id(&x->cckeys, key, out)) < 0)
        return rc;
    if (rc == 1) {
        if (fc__grow((void **)&x->cc, &x->ncc, &x->cccap, sizeof *x->cc) < 0)
            return FC_ENOMEM;
        uint32_t depth = parent == OTF2_UNDEFINED_CALLING_CONTEXT ? 1 : x->cc[parent].depth + 1;
        x->cc[x->ncc++] = (fc__xcc){region, scl, parent, depth};
    }
    return 0;
}

/* The calling context of a frame: its function (a region of its own) and source location under the
 * context of its caller. */
static int cc_node(fc__exporter *x, const char *function, const char *file, uint32_t line, uint32_t parent,
                   uint32_t *out)
{
    uint32_t fn, scl = OTF2_UNDEFINED_SOURCE_CODE_LOCATION;
    int rc;
    if ((rc = fc__intern_id(&x->fnames, function, &fn)) < 0 || (rc = fc__intern_id(&x->strings, function, &(uint32_t){0})) < 0)
        return rc;
    if (file != NULL) {
        size_t len = strlen(file) + 16;
        char *k = malloc(len);
        if (k == NULL)
            return FC_ENOMEM;
        snprintf(k, len, "%u:%s", line, file);
        rc = fc__intern_id(&x->scls, k, &scl);
        free(k);
        if (rc < 0 || (rc = fc__intern_id(&x->strings, file, &(uint32_t){0})) < 0)
            return rc;
        if (rc >= 0 && scl >= x->nscl_cap) {
            size_t ncap = x->nscl_cap ? x->nscl_cap * 2 : 64;
            uint32_t *f = realloc(x->scl_file, ncap * sizeof *f), *l;
            if (f == NULL)
                return FC_ENOMEM;
            x->scl_file = f;
            if ((l = realloc(x->scl_line, ncap * sizeof *l)) == NULL)
                return FC_ENOMEM;
            x->scl_line = l;
            x->nscl_cap = ncap;
        }
        x->scl_file[scl] = fc__otf2_str(x, file);
        x->scl_line[scl] = line;
    }
    return cc_intern(x, x->nmpi + fn, scl, parent, out);
}

int fc__otf2_call_context(fc__exporter *x, unsigned kind, uint32_t parent, uint32_t *out)
{
    return cc_intern(x, x->region_of[kind], OTF2_UNDEFINED_SOURCE_CODE_LOCATION, parent, out);
}

uint32_t fc__otf2_unwind(const fc__exporter *x, uint32_t prev, uint32_t cc)
{
    /* The node that made progress is the deepest one cc's caller shares with prev (none: every
     * node of cc is new); cc and the nodes between them were entered. */
    uint32_t a = x->cc[cc].parent, b = prev;
    uint32_t da = a == OTF2_UNDEFINED_CALLING_CONTEXT ? 0 : x->cc[a].depth;
    uint32_t db = b == OTF2_UNDEFINED_CALLING_CONTEXT ? 0 : x->cc[b].depth;
    for (; db > da; db--)
        b = x->cc[b].parent;
    for (; da > db; da--)
        a = x->cc[a].parent;
    while (a != b) {
        a = x->cc[a].parent;
        b = x->cc[b].parent;
        da--;
    }
    return x->cc[cc].depth - da + 1;
}

/* Splits the text of a resolved frame, "function@file:line", in place; returns 0 when it has that
 * shape, -1 when it is a bare "module+0xoffset". */
static int split_site(char *s, char **file, uint32_t *line)
{
    char *at = strrchr(s, '@'), *colon;
    if (at == NULL || (colon = strrchr(at, ':')) == NULL || colon[1] < '0' || colon[1] > '9')
        return -1;
    *at = '\0';
    *colon = '\0';
    *file = at + 1;
    *line = (uint32_t)strtoul(colon + 1, NULL, 10);
    return 0;
}

int fc__otf2_build_sites(fc__exporter *x, unsigned flags)
{
    size_t n = fc_trace_nranks(x->t);
    fc_symbols *syms = NULL;
    int rc = 0;
    x->cc_of = calloc(n ? n : 1, sizeof *x->cc_of);
    x->ncc_of = calloc(n ? n : 1, sizeof *x->ncc_of);
    if (x->cc_of == NULL || x->ncc_of == NULL)
        return FC_ENOMEM;
    /* Call sites are optional decoration: without symbols, frames are named by module+offset. */
    if (fc_symbols_create(x->t, (flags & FC_OTF2_NO_SYMBOLS) ? FC_SYM_NO_ADDR2LINE : 0, &syms) < 0)
        syms = NULL;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const fc_rank *r = fc_trace_rank(x->t, i);
        uint64_t maxid = 0;
        for (size_t j = 0; j < r->nsites; j++)
            if (r->sites[j].id > maxid)
                maxid = r->sites[j].id;
        if ((x->cc_of[i] = malloc((maxid + 1) * sizeof **x->cc_of)) == NULL)
            return FC_ENOMEM;
        x->ncc_of[i] = maxid + 1;
        for (uint64_t j = 0; j <= maxid; j++)
            x->cc_of[i][j] = UINT32_MAX;
        for (size_t j = 0; j < r->nsites && rc == 0; j++) {
            const fc_site *s = &r->sites[j];
            uint32_t parent = OTF2_UNDEFINED_CALLING_CONTEXT;
            /* Outermost frame first, so that each node's parent exists before it. */
            for (uint32_t k = s->depth; k-- > 0 && rc == 0;) {
                char buf[512], *file = NULL;
                uint32_t line = 0;
                const char *text = syms ? fc__symbols_frame(syms, i, s->id, k) : NULL;
                if (text != NULL) {
                    snprintf(buf, sizeof buf, "%s", text);
                    if (split_site(buf, &file, &line) < 0)
                        file = NULL;
                } else {
                    const fc_module *m = fc_rank_module(r, s->frames[k].module);
                    const char *base = m && m->path ? strrchr(m->path, '/') : NULL;
                    snprintf(buf, sizeof buf, "%s+0x%" PRIx64, base ? base + 1 : m ? m->path : "?",
                             s->frames[k].offset);
                }
                rc = cc_node(x, buf, file, line, parent, &parent);
            }
            if (rc == 0 && s->depth > 0)
                x->cc_of[i][s->id] = parent;
        }
    }
    fc_symbols_free(syms);
    return rc;
}

/* ---- global definitions -------------------------------------------------------------------------- */

/* Interns every string the global definitions use, so that all String records come first. */
/* The attributes an export may write, by reference (FC__OTF2_ATTR_*). */
static const struct {
    const char *name, *desc;
    OTF2_Type type;
} attr_defs[FC__OTF2_NATTRS] = {
    [FC__OTF2_ATTR_POLLS] = {FC_OTF2_POLLS_ATTR, FC_OTF2_POLLS_ATTR_DESC, OTF2_TYPE_UINT64},
    [FC__OTF2_ATTR_REQUEST] = {FC_OTF2_REQUEST_ATTR, FC_OTF2_REQUEST_ATTR_DESC, OTF2_TYPE_UINT64},
    [FC__OTF2_ATTR_COUNTS] = {FC_OTF2_COUNTS_ATTR, FC_OTF2_COUNTS_ATTR_DESC, OTF2_TYPE_STRING},
};

static int collect_strings(fc__exporter *x)
{
    static const char *const fixed[] = {"", "MPI", "flowcut", "machine", "node", "MPI_COMM_WORLD", "MPI_COMM_SELF",
                                        "Master thread"};
    char buf[64];
    uint32_t id;
    int rc = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed && rc >= 0; i++)
        rc = fc__intern_id(&x->strings, fixed[i], &id);
    for (unsigned k = 1; k < FC_EV_MAX_ && rc >= 0; k++)
        if (fc_event_kind_name(k) != NULL && kind_class[k] != CLS_SUB)
            rc = fc__intern_id(&x->strings, fc_event_kind_name(k), &id);
    for (uint32_t r = 0; r < x->world && rc >= 0; r++) {
        snprintf(buf, sizeof buf, "MPI Rank %u", r);
        rc = fc__intern_id(&x->strings, buf, &id);
        for (uint32_t k = 1; k < x->rank_threads[r] && rc >= 0; k++) {
            snprintf(buf, sizeof buf, "Thread %u", k);
            rc = fc__intern_id(&x->strings, buf, &id);
        }
    }
    for (size_t i = 0; i < x->nodes.n && rc >= 0; i++)
        rc = fc__intern_id(&x->strings, x->nodes.s[i], &id);
    for (size_t i = 2; i < x->ncomms && rc >= 0; i++) {
        snprintf(buf, sizeof buf, "Comm %zu", i);
        rc = fc__intern_id(&x->strings, buf, &id);
    }
    for (size_t i = 0; i < x->ntopos && rc >= 0; i++) {
        snprintf(buf, sizeof buf, "Comm %" PRIu32 " cartesian", x->topos[i].comm);
        rc = fc__intern_id(&x->strings, buf, &id);
        for (uint32_t d = 0; d < x->topos[i].ndims && rc >= 0; d++) {
            snprintf(buf, sizeof buf, "Comm %" PRIu32 " dimension %" PRIu32, x->topos[i].comm, d);
            rc = fc__intern_id(&x->strings, buf, &id);
        }
    }
    for (unsigned i = 0; i < FC__OTF2_NATTRS && rc >= 0; i++)
        if (x->attrs_used >> i && (rc = fc__intern_id(&x->strings, attr_defs[i].name, &id)) >= 0)
            rc = fc__intern_id(&x->strings, attr_defs[i].desc, &id);
    return rc < 0 ? fc__err(FC_ENOMEM, "out of memory") : 0;
}

static int write_groups_and_comms(fc__exporter *x, OTF2_GlobalDefWriter *g)
{
    uint64_t *m = malloc((x->world ? x->world : 1) * sizeof *m);
    uint32_t next_group = 2;
    char buf[64];
    int rc = 0;
    if (m == NULL)
        return fc__err(FC_ENOMEM, "out of memory");
    /* Group 0 lists the location of each world rank (its thread 0), in rank order; the comm
     * groups list world ranks, i.e. indices into it. Group 1 is MPI_COMM_SELF's. */
    for (uint32_t r = 0; r < x->world; r++)
        m[r] = fc__otf2_location(r, 0);
#define GTRY(call)                                                                                 \
    if ((call) != OTF2_SUCCESS) {                                                                  \
        rc = fc__err(FC_EIO, "OTF2 writer: %s", fc__otf2_message());                               \
        goto out;                                                                                  \
    }
    GTRY(OTF2_GlobalDefWriter_WriteGroup(g, 0, fc__otf2_str(x, ""), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                         OTF2_GROUP_FLAG_NONE, x->world, m));
    GTRY(OTF2_GlobalDefWriter_WriteGroup(g, 1, fc__otf2_str(x, ""), OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                         OTF2_GROUP_FLAG_NONE, 0, NULL));
    for (size_t i = 0; i < x->ncomms; i++) {
        fc__xcomm *c = &x->comms[i];
        if (i == 1) {
            c->group = 1;
            continue;
        }
        for (int side = 0; side < 1 + c->inter; side++) {
            uint32_t n = side ? c->nremote : c->nlocal;
            const uint32_t *list = side ? c->remote : c->local;
            uint64_t *mm = malloc((n ? n : 1) * sizeof *mm);
            if (mm == NULL) {
                rc = fc__err(FC_ENOMEM, "out of memory");
                goto out;
            }
            for (uint32_t j = 0; j < n; j++)
                mm[j] = list[j];
            OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteGroup(g, next_group, fc__otf2_str(x, ""), OTF2_GROUP_TYPE_COMM_GROUP,
                                                               OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, mm);
            free(mm);
            GTRY(e);
            *(side ? &c->group_b : &c->group) = next_group++;
        }
    }
    for (size_t i = 0; i < x->ncomms; i++) {
        fc__xcomm *c = &x->comms[i];
        snprintf(buf, sizeof buf, "Comm %zu", i);
        uint32_t name = fc__otf2_str(x, i == 0 ? "MPI_COMM_WORLD" : i == 1 ? "MPI_COMM_SELF" : buf);
        if (c->inter) {
            GTRY(OTF2_GlobalDefWriter_WriteInterComm(g, (uint32_t)i, name, c->group, c->group_b,
                                                     OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE))
        } else {
            GTRY(OTF2_GlobalDefWriter_WriteComm(g, (uint32_t)i, name, c->group, OTF2_UNDEFINED_COMM,
                                                OTF2_COMM_FLAG_NONE))
        }
    }
    /* The cartesian topologies: dimensions, the topology, each member's coordinates (row-major
     * in its comm rank, as MPI numbers them). */
    for (size_t i = 0; i < x->ntopos; i++) {
        const fc__xtopo *t = &x->topos[i];
        OTF2_CartDimensionRef dims[255];
        uint32_t coord[255];
        for (uint32_t d = 0; d < t->ndims; d++) {
            snprintf(buf, sizeof buf, "Comm %" PRIu32 " dimension %" PRIu32, t->comm, d);
            dims[d] = t->first_dim + d;
            GTRY(OTF2_GlobalDefWriter_WriteCartDimension(g, dims[d], fc__otf2_str(x, buf), t->size[d],
                                                         t->periodic[d] ? OTF2_CART_PERIODIC_TRUE
                                                                        : OTF2_CART_PERIODIC_FALSE));
        }
        snprintf(buf, sizeof buf, "Comm %" PRIu32 " cartesian", t->comm);
        GTRY(OTF2_GlobalDefWriter_WriteCartTopology(g, (uint32_t)i, fc__otf2_str(x, buf), t->comm, (uint8_t)t->ndims,
                                                    dims));
        for (uint32_t me = 0; me < x->comms[t->comm].nlocal; me++) {
            uint32_t rest = me;
            for (uint32_t d = t->ndims; d-- > 0;) {
                coord[d] = rest % t->size[d];
                rest /= t->size[d];
            }
            GTRY(OTF2_GlobalDefWriter_WriteCartCoordinate(g, (uint32_t)i, me, (uint8_t)t->ndims, coord));
        }
    }
#undef GTRY
out:
    free(m);
    return rc;
}

static int write_globals(fc__exporter *x)
{
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(x->ar);
    char buf[64];
    if (g == NULL)
        return fc__err(FC_EIO, "OTF2 writer: %s", fc__otf2_message());
    /* The global offset is the earliest timestamp written and the length reaches the latest: the
     * events carry no clock offsets, so these are exactly the times every reader sees. The
     * real-time stamp is rank 0's wall clock at the start of tracing (close to the first event,
     * not exactly at it). */
    uint64_t off = x->have_time ? x->wmin : 0;
    uint64_t len = x->have_time ? x->wmax - x->wmin + 1 : 0;
    long r0 = fc_trace_find(x->t, 0);
    uint64_t real = r0 >= 0 && fc_trace_rank(x->t, (size_t)r0)->info.start_ns ? fc_trace_rank(x->t, (size_t)r0)->info.start_ns
                                                                                 : OTF2_UNDEFINED_TIMESTAMP;
    FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, off, len, real));
    for (size_t i = 0; i < x->strings.n; i++)
        FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteString(g, (uint32_t)i, x->strings.s[i]));
    FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, fc__otf2_str(x, "MPI"), OTF2_PARADIGM_CLASS_PROCESS));
    /* System tree: one machine, a node per node name; ranks without a file hang off the machine. */
    FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, fc__otf2_str(x, "flowcut"), fc__otf2_str(x, "machine"),
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    for (size_t i = 0; i < x->nodes.n; i++)
        FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, (uint32_t)i + 1, fc__otf2_str(x, x->nodes.s[i]), fc__otf2_str(x, "node"), 0));
    for (uint32_t r = 0; r < x->world; r++) {
        snprintf(buf, sizeof buf, "MPI Rank %u", r);
        FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteLocationGroup(g, r, fc__otf2_str(x, buf), OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                    x->rank_node[r] == UINT32_MAX ? 0 : x->rank_node[r] + 1,
                                                    OTF2_UNDEFINED_LOCATION_GROUP));
    }
    for (uint32_t r = 0; r < x->world; r++)
        for (uint32_t k = 0; k < x->rank_threads[r]; k++) {
            snprintf(buf, sizeof buf, "Thread %u", k);
            FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteLocation(g, fc__otf2_location(r, k), fc__otf2_str(x, k ? buf : "Master thread"),
                                                   OTF2_LOCATION_TYPE_CPU_THREAD,
                                                   x->rank_events[r] ? x->rank_events[r][k] : 0, r));
            x->st.locations++;
        }
    /* A region per MPI function, as Score-P: canonical name, paradigm MPI, source file "MPI". */
    for (unsigned k = 1; k < FC_EV_MAX_; k++) {
        const char *name = fc_event_kind_name(k);
        if (name == NULL || kind_class[k] == CLS_SUB)
            continue;
        FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteRegion(g, x->region_of[k], fc__otf2_str(x, name), fc__otf2_str(x, name), fc__otf2_str(x, ""), fc__otf2_role(k),
                                             OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, fc__otf2_str(x, "MPI"), 0, 0));
    }
    /* The functions of call-site frames: entered through the calling contexts of the MPI calls. */
    for (size_t i = 0; i < x->fnames.n; i++)
        FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteRegion(g, x->nmpi + (uint32_t)i, fc__otf2_str(x, x->fnames.s[i]),
                                             fc__otf2_str(x, x->fnames.s[i]), fc__otf2_str(x, ""), OTF2_REGION_ROLE_FUNCTION,
                                             OTF2_PARADIGM_UNKNOWN, OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0,
                                             0));
    int rc = write_groups_and_comms(x, g);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < x->scls.n; i++)
        FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteSourceCodeLocation(g, (uint32_t)i, x->scl_file[i], x->scl_line[i]));
    for (size_t i = 0; i < x->ncc; i++)
        FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteCallingContext(g, (uint32_t)i, x->cc[i].region, x->cc[i].scl, x->cc[i].parent));
    /* Attribute references are dense from 0: those below the highest used are defined too. */
    for (unsigned i = 0; i < FC__OTF2_NATTRS; i++)
        if (x->attrs_used >> i)
            FC__OTF2_TRY(OTF2_GlobalDefWriter_WriteAttribute(g, i, fc__otf2_str(x, attr_defs[i].name),
                                                             fc__otf2_str(x, attr_defs[i].desc), attr_defs[i].type));
    return 0;
}

int fc__otf2_write_defs(fc__exporter *x)
{
    int rc = collect_strings(x);
    return rc < 0 ? rc : write_globals(x);
}
