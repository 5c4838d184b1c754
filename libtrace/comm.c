/* libtrace/comm.c: communicator ids and definitions (COMMS blocks), and datatype sizes.
 *
 * Lookup is lock-free: a per-thread last-hit cache, then an open-addressing table of 64-bit
 * words (handle << 32 | comm_id) read atomically. Definitions and frees take a lock; a free
 * bumps a generation so that the per-thread caches drop the handle MPI may now reuse. */
#include "runtime.h"
#include "renumber.h"

#include <stdlib.h>
#include <string.h>

/* Definitions are kept for the whole run, freed communicators' too: the writer may not have
 * written them yet, and the ordinals of later ones count them. They sit in pages that are never
 * moved, so the writer and a signal handler read them while new ones are added. */
#define PAGE_BITS 12
#define PAGE (1u << PAGE_BITS)
#define MAX_PAGES (1u << 16) /* 2^28 communicators over a run */
#define TOMB UINT32_MAX

typedef struct comm_def {
    uint32_t flags;
    int64_t ordinal;
    int nlocal, nremote;
    /* The virtual topology (FC_TOPO_*, 0: none) and this rank's neighbours as world ranks or
     * FC_PEER_NULL: nbrs[0 .. indeg) the sources, then nbrs[indeg .. indeg + outdeg) the
     * destinations, in the order of the neighbourhood collectives (format.h, COMMS). */
    int topo, indeg, outdeg;
    int *nbrs;
    int members[]; /* world ranks: local group, then remote group */
} comm_def;

static comm_def **pages[MAX_PAGES];
static _Atomic uint32_t ndefs;
static int ready;
static uint32_t comms_written;
static _Atomic unsigned gen;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Group world_group = MPI_GROUP_NULL;

static comm_def *def_at(uint32_t id)
{
    return pages[id >> PAGE_BITS][id & (PAGE - 1)];
}

/* ---- handles to comm_ids -------------------------------------------------------------------
 * An open-addressing table of 64-bit words (handle << 32 | comm_id) read without a lock. MPI
 * reuses the handles of freed communicators, so the table holds about as many handles as are
 * alive at once; it grows (under lock) when half full, into a new table that replaces the old
 * one whole. An old table is never freed: a reader may still be scanning it. */
typedef struct htable {
    unsigned mask;
    _Atomic uint64_t w[];
} htable;
static _Atomic(htable *) table;
static unsigned table_used; /* slots holding a handle, under lock */

static unsigned slot_of(uint32_t h, unsigned mask)
{
    return (unsigned)(((uint64_t)h * 0x9e3779b97f4a7c15ull) >> 40) & mask;
}

static uint32_t lookup(uint32_t h)
{
    htable *t = atomic_load_explicit(&table, memory_order_acquire);
    if (t == NULL)
        return TOMB;
    for (unsigned i = slot_of(h, t->mask), k = 0; k <= t->mask; i = (i + 1) & t->mask, k++) {
        uint64_t w = atomic_load_explicit(&t->w[i], memory_order_acquire);
        if (w == 0)
            return TOMB;
        if ((uint32_t)(w >> 32) == h)
            return (uint32_t)w;
    }
    return TOMB;
}

/* lock held: puts w in t, in the handle's slot or the first empty one. Returns 1 when it took an
 * empty slot. */
static int put_word(htable *t, uint64_t w)
{
    uint32_t h = (uint32_t)(w >> 32);
    for (unsigned i = slot_of(h, t->mask), k = 0; k <= t->mask; i = (i + 1) & t->mask, k++) {
        uint64_t o = atomic_load(&t->w[i]);
        if (o == 0 || (uint32_t)(o >> 32) == h) {
            atomic_store_explicit(&t->w[i], w, memory_order_release);
            return o == 0;
        }
    }
    return 0;
}

/* lock held: a table of 2^bits slots with the live handles of old (freed ones, stored as TOMB,
 * are left behind). NULL when out of memory. */
static htable *table_new(unsigned bits, const htable *old)
{
    htable *t = calloc(1, sizeof *t + ((size_t)1 << bits) * sizeof t->w[0]);
    if (t == NULL)
        return NULL;
    t->mask = (1u << bits) - 1;
    table_used = 0;
    for (unsigned i = 0; old != NULL && i <= old->mask; i++) {
        uint64_t w = atomic_load(&old->w[i]);
        if (w != 0 && (uint32_t)w != TOMB)
            table_used += put_word(t, w);
    }
    return t;
}

/* lock held: one slot per handle, reused when MPI reuses the handle. Returns -1 when the table
 * had to grow and memory ran out. */
static int insert(uint32_t h, uint32_t id)
{
    htable *t = atomic_load(&table);
    if (t == NULL || 2 * (table_used + 1) > t->mask + 1) {
        unsigned bits = 10;
        while (t != NULL && (1u << bits) <= 2 * (t->mask + 1) && bits < 31)
            bits++;
        htable *n = table_new(bits, t);
        if (n == NULL) {
            if (t == NULL || table_used > t->mask)
                return -1;
        } else {
            atomic_store_explicit(&table, n, memory_order_release);
            t = n;
        }
    }
    table_used += put_word(t, (uint64_t)h << 32 | id);
    return 0;
}

/* ---- ordinals -------------------------------------------------------------------------------
 * How many communicators this rank created with each local member list: a hash table of member
 * lists, under lock, so that a run creating many communicators costs no scan of the earlier ones. */
typedef struct group_count {
    const comm_def *rep; /* a definition with this member list; NULL: empty slot */
    uint64_t hash, count;
} group_count;
static group_count *groups;
static size_t ngroups_cap, ngroups;

static uint64_t members_hash(const comm_def *d)
{
    uint64_t x = 1469598103934665603ull ^ (uint64_t)d->nlocal;
    for (int i = 0; i < d->nlocal; i++)
        x = (x ^ (uint32_t)d->members[i]) * 1099511628211ull;
    return x;
}

static int same_members(const comm_def *a, const comm_def *b)
{
    return a->nlocal == b->nlocal && memcmp(a->members, b->members, (size_t)a->nlocal * sizeof(int)) == 0;
}

/* lock held: the slot of d's member list (empty when new), or NULL when out of memory. */
static group_count *group_slot(const comm_def *d, uint64_t hash)
{
    if (2 * (ngroups + 1) > ngroups_cap) {
        size_t cap = ngroups_cap ? 2 * ngroups_cap : 64;
        group_count *g = calloc(cap, sizeof *g);
        if (g == NULL)
            return NULL;
        for (size_t i = 0; i < ngroups_cap; i++) {
            if (groups[i].rep == NULL)
                continue;
            size_t j = groups[i].hash & (cap - 1);
            while (g[j].rep != NULL)
                j = (j + 1) & (cap - 1);
            g[j] = groups[i];
        }
        free(groups);
        groups = g;
        ngroups_cap = cap;
    }
    size_t j = hash & (ngroups_cap - 1);
    while (groups[j].rep != NULL && !(groups[j].hash == hash && same_members(groups[j].rep, d)))
        j = (j + 1) & (ngroups_cap - 1);
    return &groups[j];
}

/* lock held: stores a definition as the next comm_id; TOMB when out of memory. */
static uint32_t add_def(comm_def *d, int created)
{
    uint32_t id = atomic_load(&ndefs);
    if ((id >> PAGE_BITS) >= MAX_PAGES)
        return TOMB;
    comm_def **page = pages[id >> PAGE_BITS];
    if (page == NULL && (page = calloc(PAGE, sizeof *page)) == NULL)
        return TOMB;
    pages[id >> PAGE_BITS] = page;
    if (created) {
        uint64_t hash = members_hash(d);
        group_count *g = group_slot(d, hash);
        if (g == NULL)
            return TOMB;
        if (g->rep == NULL) {
            *g = (group_count){.rep = d, .hash = hash};
            ngroups++;
        }
        d->ordinal = (int64_t)g->count++;
    }
    page[id & (PAGE - 1)] = d;
    atomic_store(&ndefs, id + 1);
    return id;
}

/* World ranks of a group's members, appended at out. */
static void translate(MPI_Group g, int n, int *out)
{
    int *in = malloc((size_t)n * sizeof *in);
    if (in == NULL) {
        for (int i = 0; i < n; i++)
            out[i] = -1;
        return;
    }
    for (int i = 0; i < n; i++)
        in[i] = i;
    PMPI_Group_translate_ranks(g, n, in, world_group, out);
    free(in);
}

/* Asks MPI who is in comm (local calls only). NULL when out of memory. */
static comm_def *describe(MPI_Comm comm, uint32_t flags)
{
    int inter = 0, nl = 0, nr = 0;
    MPI_Group lg = MPI_GROUP_NULL, rg = MPI_GROUP_NULL;
    PMPI_Comm_test_inter(comm, &inter);
    PMPI_Comm_group(comm, &lg);
    PMPI_Group_size(lg, &nl);
    if (inter) {
        PMPI_Comm_remote_group(comm, &rg);
        PMPI_Group_size(rg, &nr);
        flags |= FC_COMMF_INTER;
    }
    comm_def *d = malloc(sizeof *d + (size_t)(nl + nr) * sizeof(int));
    if (d != NULL) {
        d->flags = flags;
        d->ordinal = -1;
        d->nlocal = nl;
        d->nremote = nr;
        d->topo = d->indeg = d->outdeg = 0;
        d->nbrs = NULL;
        translate(lg, nl, d->members);
        if (inter)
            translate(rg, nr, d->members + nl);
    }
    PMPI_Group_free(&lg);
    if (inter)
        PMPI_Group_free(&rg);
    return d;
}

/* The world rank of member r of d's local group, FC_PEER_NULL for MPI_PROC_NULL or a rank
 * outside the group. */
static int world_of(const comm_def *d, int r)
{
    return r >= 0 && r < d->nlocal ? d->members[r] : FC_PEER_NULL;
}

/* Notes comm's virtual topology in d: the neighbours as MPI's topology functions list them,
 * which is the order the neighbourhood collectives exchange in (local calls only). A topology
 * that cannot be read, or memory that runs out, leaves d without one. */
static void describe_topo(MPI_Comm comm, comm_def *d)
{
    int status = MPI_UNDEFINED, in = 0, out = 0, rank = 0, nd = 0, weighted = 0;
    if (d->nremote > 0 || PMPI_Topo_test(comm, &status) != MPI_SUCCESS)
        return;
    if (status == MPI_CART) {
        if (PMPI_Cartdim_get(comm, &nd) != MPI_SUCCESS || nd < 0)
            return;
        in = out = 2 * nd;
    } else if (status == MPI_GRAPH) {
        if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Graph_neighbors_count(comm, rank, &in) != MPI_SUCCESS ||
            in < 0)
            return;
        out = in;
    } else if (status == MPI_DIST_GRAPH) {
        if (PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted) != MPI_SUCCESS || in < 0 || out < 0)
            return;
    } else {
        return;
    }
    /* Room for both lists, and for the weights MPI_Dist_graph_neighbors writes when the graph
     * has them. */
    int *v = malloc((size_t)(2 * (in + out) + 1) * sizeof *v);
    if (v == NULL)
        return;
    int ok = 1;
    if (status == MPI_CART) {
        for (int k = 0; k < nd && ok; k++) {
            int src = MPI_PROC_NULL, dst = MPI_PROC_NULL;
            ok = PMPI_Cart_shift(comm, k, 1, &src, &dst) == MPI_SUCCESS;
            v[2 * k] = v[in + 2 * k] = world_of(d, src);
            v[2 * k + 1] = v[in + 2 * k + 1] = world_of(d, dst);
        }
    } else if (status == MPI_GRAPH) {
        ok = PMPI_Graph_neighbors(comm, rank, in, v) == MPI_SUCCESS;
        for (int k = 0; k < in && ok; k++)
            v[k] = v[in + k] = world_of(d, v[k]);
    } else {
        int *w = v + in + out;
        ok = PMPI_Dist_graph_neighbors(comm, in, v, weighted ? w : MPI_UNWEIGHTED, out, v + in,
                                       weighted ? w + in : MPI_UNWEIGHTED) == MPI_SUCCESS;
        for (int k = 0; k < in + out && ok; k++)
            v[k] = world_of(d, v[k]);
    }
    if (!ok) {
        free(v);
        return;
    }
    d->topo = status == MPI_CART ? FC_TOPO_CART : status == MPI_GRAPH ? FC_TOPO_GRAPH : FC_TOPO_DIST_GRAPH;
    d->indeg = in;
    d->outdeg = out;
    d->nbrs = v;
}

static uint32_t define(MPI_Comm comm, int created)
{
    comm_def *d = describe(comm, created ? 0 : FC_COMMF_LAZY);
    if (d != NULL)
        describe_topo(comm, d);
    if (d == NULL)
        return TOMB;
    pthread_mutex_lock(&lock);
    uint32_t id = add_def(d, created);
    int mapped = id != TOMB && insert((uint32_t)comm, id) == 0;
    pthread_mutex_unlock(&lock);
    if (id == TOMB) {
        free(d->nbrs);
        free(d);
        fc__warn("out of memory for communicator definitions; later ones are not defined in the trace");
    } else if (!mapped) {
        /* Defined, so the trace stays readable; only the lookup of its handle failed, and each
         * use of it then defines it again. */
        fc__warn("out of memory for the communicator table; communicators are defined more than once");
    }
    return id;
}

void fc__comms_init(int rank, int size)
{
    PMPI_Comm_group(fc__world, &world_group); /* the program's world (renumber.h) */
    comm_def *w = malloc(sizeof *w + (size_t)size * sizeof(int));
    comm_def *s = malloc(sizeof *s + sizeof(int));
    if (w == NULL || s == NULL) {
        free(w);
        free(s);
        return;
    }
    *w = (comm_def){.nlocal = size};
    for (int i = 0; i < size; i++)
        w->members[i] = i;
    *s = (comm_def){.nlocal = 1};
    s->members[0] = rank;
    pthread_mutex_lock(&lock);
    uint32_t wid = add_def(w, 1), sid = add_def(s, 1);
    ready = wid == 0 && sid == 1 && insert((uint32_t)MPI_COMM_WORLD, wid) == 0 &&
            insert((uint32_t)MPI_COMM_SELF, sid) == 0;
    pthread_mutex_unlock(&lock);
}

uint32_t fc__comm_lookup(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return 0;
    fc__tslot *s = (fc__tslot *)fc__self;
    unsigned g = atomic_load_explicit(&gen, memory_order_relaxed);
    if (s != NULL && s->comm_handle == (int)comm && s->comm_gen == g)
        return s->comm_id;
    if (comm == MPI_COMM_SELF)
        return 1;
    if (comm == MPI_COMM_NULL || !ready)
        return TOMB;
    uint32_t id = lookup((uint32_t)comm);
    if (id == TOMB)
        id = define(comm, 0);
    if (s != NULL && id != TOMB) {
        s->comm_handle = (int)comm;
        s->comm_id = id;
        s->comm_gen = g;
    }
    return id;
}

uint32_t fc__comm_created(MPI_Comm newcomm)
{
    if (newcomm == MPI_COMM_NULL || !ready)
        return TOMB;
    atomic_fetch_add(&gen, 1); /* the handle may be a reused one some cache still holds */
    return define(newcomm, 1);
}

void fc__comm_freed(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF || comm == MPI_COMM_NULL)
        return;
    pthread_mutex_lock(&lock);
    htable *t = atomic_load(&table);
    for (unsigned i = t ? slot_of((uint32_t)comm, t->mask) : 0, k = 0; t && k <= t->mask; i = (i + 1) & t->mask, k++) {
        uint64_t w = atomic_load(&t->w[i]);
        if (w == 0)
            break;
        if ((uint32_t)(w >> 32) == (uint32_t)comm) {
            atomic_store(&t->w[i], (uint64_t)(uint32_t)comm << 32 | TOMB);
            break;
        }
    }
    atomic_fetch_add(&gen, 1);
    pthread_mutex_unlock(&lock);
}

uint32_t fc__comms_encode(fc__buf *b)
{
    uint32_t n = ready ? atomic_load(&ndefs) : 0;
    /* MPI_COMM_WORLD (id 0) is left for readers to supply (format.h, COMMS): its list, in every
     * rank file, would make a trace grow with the square of its ranks. */
    uint32_t from = comms_written > 0 ? comms_written : 1;
    if (n <= from)
        return n;
    fc__buf_uv(b, n - from);
    for (uint32_t id = from; id < n; id++) {
        const comm_def *d = def_at(id);
        fc__buf_uv(b, id);
        fc__buf_uv(b, d->flags);
        fc__buf_uv(b, (uint64_t)d->nlocal);
        for (int i = 0; i < d->nlocal; i++)
            fc__buf_uv(b, (uint64_t)d->members[i]);
        fc__buf_uv(b, (uint64_t)d->nremote);
        for (int i = 0; i < d->nremote; i++)
            fc__buf_uv(b, (uint64_t)d->members[d->nlocal + i]);
        fc__buf_uv(b, fc_zigzag(d->ordinal));
    }
    /* The topologies of the communicators just defined (format 2.6), after the entries that
     * older readers stop at. */
    uint32_t ntopo = 0;
    for (uint32_t id = from; id < n; id++)
        ntopo += def_at(id)->topo != 0;
    if (ntopo == 0)
        return n;
    fc__buf_uv(b, ntopo);
    for (uint32_t id = from; id < n; id++) {
        const comm_def *d = def_at(id);
        if (d->topo == 0)
            continue;
        fc__buf_uv(b, id);
        fc__buf_uv(b, (uint64_t)d->topo);
        fc__buf_uv(b, (uint64_t)d->indeg);
        for (int i = 0; i < d->indeg; i++)
            fc__buf_uv(b, fc_zigzag(d->nbrs[i]));
        fc__buf_uv(b, (uint64_t)d->outdeg);
        for (int i = 0; i < d->outdeg; i++)
            fc__buf_uv(b, fc_zigzag(d->nbrs[d->indeg + i]));
    }
    return n;
}

int fc__comm_degrees(MPI_Comm comm, int *indeg, int *outdeg)
{
    uint32_t id = fc__comm(comm);
    *indeg = *outdeg = 0;
    if (id == TOMB || id >= atomic_load(&ndefs))
        return -1;
    const comm_def *d = def_at(id);
    if (d->topo == 0)
        return -1;
    *indeg = d->indeg;
    *outdeg = d->outdeg;
    return 0;
}

void fc__comms_mark_written(uint32_t n)
{
    if (n > comms_written)
        comms_written = n;
}

/* ---- datatype sizes ------------------------------------------------------------------------- */

uint64_t fc__bytes_lookup(MPI_Datatype dt, int64_t count)
{
    uint32_t h = (uint32_t)dt;
    if (count <= 0)
        return 0;
    /* Builtin datatypes, as fc__bytes reads them (internal.h). */
    if (FC__LIKELY((h >> 30) == 1))
        return (uint64_t)count * ((h >> 8) & 0xff);
    if ((h >> 30) == 0 || dt == MPI_DATATYPE_NULL)
        return 0; /* invalid handle: asking MPI would raise its error handler */
    MPI_Count sz = 0;
    if (PMPI_Type_size_c(dt, &sz) != MPI_SUCCESS || sz < 0)
        return 0;
    return (uint64_t)count * (uint64_t)sz;
}
