/* libtrace/comm.c: communicator ids and definitions (COMMS blocks), and datatype sizes.
 *
 * Lookup is lock-free: a per-thread last-hit cache, then an open-addressing table of 64-bit
 * words (handle << 32 | comm_id) read atomically. Definitions and frees take a lock; a free
 * bumps a generation so that the per-thread caches drop the handle MPI may now reuse. */
#include "runtime.h"
#include "renumber.h"

#include <stdlib.h>
#include <string.h>

#define MAX_COMMS 65536
#define TABLE 16384 /* slots, a power of two; only live handles and freed ones MPI reuses */
#define TOMB UINT32_MAX

typedef struct comm_def {
    uint32_t flags;
    int64_t ordinal;
    int nlocal, nremote;
    int members[]; /* world ranks: local group, then remote group */
} comm_def;

static comm_def **defs;
static _Atomic uint32_t ndefs;
static uint32_t comms_written;
static _Atomic uint64_t table[TABLE];
static _Atomic unsigned gen;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Group world_group = MPI_GROUP_NULL;

static unsigned slot_of(uint32_t h)
{
    return (unsigned)((h * 0x9e3779b1u) >> 18) & (TABLE - 1);
}

static uint32_t lookup(uint32_t h)
{
    for (unsigned i = slot_of(h), k = 0; k < TABLE; i = (i + 1) & (TABLE - 1), k++) {
        uint64_t w = atomic_load_explicit(&table[i], memory_order_acquire);
        if (w == 0)
            return TOMB;
        if ((uint32_t)(w >> 32) == h)
            return (uint32_t)w;
    }
    return TOMB;
}

/* lock held: one slot per handle, reused when MPI reuses the handle. */
static void insert(uint32_t h, uint32_t id)
{
    for (unsigned i = slot_of(h), k = 0; k < TABLE; i = (i + 1) & (TABLE - 1), k++) {
        uint64_t w = atomic_load(&table[i]);
        if (w == 0 || (uint32_t)(w >> 32) == h) {
            atomic_store(&table[i], (uint64_t)h << 32 | id);
            return;
        }
    }
}

/* lock held: stores a definition as the next comm_id. */
static uint32_t add_def(comm_def *d, int created)
{
    uint32_t id = atomic_load(&ndefs);
    if (id >= MAX_COMMS)
        return TOMB;
    if (created) {
        int64_t ord = 0;
        for (uint32_t i = 0; i < id; i++)
            if (defs[i] && defs[i]->nlocal == d->nlocal &&
                memcmp(defs[i]->members, d->members, (size_t)d->nlocal * sizeof(int)) == 0)
                ord++;
        d->ordinal = ord;
    }
    defs[id] = d;
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
        translate(lg, nl, d->members);
        if (inter)
            translate(rg, nr, d->members + nl);
    }
    PMPI_Group_free(&lg);
    if (inter)
        PMPI_Group_free(&rg);
    return d;
}

static uint32_t define(MPI_Comm comm, int created)
{
    comm_def *d = describe(comm, created ? 0 : FC_COMMF_LAZY);
    if (d == NULL)
        return TOMB;
    pthread_mutex_lock(&lock);
    uint32_t id = add_def(d, created);
    if (id != TOMB)
        insert((uint32_t)comm, id);
    pthread_mutex_unlock(&lock);
    if (id == TOMB) {
        free(d);
        fc__warn("more than %d communicators; later ones are not defined in the trace", MAX_COMMS);
    }
    return id;
}

void fc__comms_init(int rank, int size)
{
    defs = calloc(MAX_COMMS, sizeof *defs);
    if (defs == NULL)
        return;
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
    insert((uint32_t)MPI_COMM_WORLD, add_def(w, 1));
    insert((uint32_t)MPI_COMM_SELF, add_def(s, 1));
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
    if (comm == MPI_COMM_NULL || defs == NULL)
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
    if (newcomm == MPI_COMM_NULL || defs == NULL)
        return TOMB;
    atomic_fetch_add(&gen, 1); /* the handle may be a reused one some cache still holds */
    return define(newcomm, 1);
}

void fc__comm_freed(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF || comm == MPI_COMM_NULL)
        return;
    pthread_mutex_lock(&lock);
    for (unsigned i = slot_of((uint32_t)comm), k = 0; k < TABLE; i = (i + 1) & (TABLE - 1), k++) {
        uint64_t w = atomic_load(&table[i]);
        if (w == 0)
            break;
        if ((uint32_t)(w >> 32) == (uint32_t)comm) {
            atomic_store(&table[i], (uint64_t)(uint32_t)comm << 32 | TOMB);
            break;
        }
    }
    atomic_fetch_add(&gen, 1);
    pthread_mutex_unlock(&lock);
}

uint32_t fc__comms_encode(fc__buf *b)
{
    uint32_t n = defs ? atomic_load(&ndefs) : 0;
    /* MPI_COMM_WORLD (id 0) is left for readers to supply (format.h, COMMS): its list, in every
     * rank file, would make a trace grow with the square of its ranks. */
    uint32_t from = comms_written > 0 ? comms_written : 1;
    if (n <= from)
        return n;
    fc__buf_uv(b, n - from);
    for (uint32_t id = from; id < n; id++) {
        const comm_def *d = defs[id];
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
    return n;
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
